#!/bin/bash
# End-to-end: the agent as a CrowdSec remediation component, against the
# real engine (Debian's crowdsec 1.4.6, its local API alone in the
# gateway's namespace: tests/crowdsec.sh; nothing reaches the network),
# driven with cscli, with real UDP traffic through the gateway:
#
#   decisions_at_start        bans made before the agent starts (an IPv4
#                             address, an IPv4 range, an IPv6 address)
#                             are dropped; a captcha decision and a
#                             filtered scenario are not enforced; check
#                             names the decision; metrics count them
#   add_delete_expire         a ban added is dropped, deleted passes
#                             again; one of a few seconds passes once it
#                             ran out
#   combined_with_lists       a file list's entries are enforced beside the
#                             decisions, and the allowlist beats a ban
#   api_down_and_restart      the local API stopped: the bans stay
#                             enforced, a decision that runs out meanwhile
#                             leaves; the agent restarted meanwhile keeps
#                             them (no gap); the API back: new bans flow
#   ranges_bounded            Range decisions the engine takes (it takes
#                             a /8, even a 2000::/3) wider than max_range_v4
#                             (/16) and max_range_v6 (/32) are refused and
#                             counted (too_wide); a /25 and a /48 enforced
#   bulk_import               10k decisions imported at once (cscli
#                             decisions import): every one enforced
#   user_agent_and_key        the engine's log has no "bad user agent" and
#                             knows the bouncer as bloomgate VERSION; a key
#                             file readable by others: a warning, once, in
#                             the log and from agent --check; a FIFO in its
#                             place: agent --check fails at once, and the
#                             agent stops at once on SIGTERM
# (tests/e2e/test_crowdsec_server.sh: answers the engine never sends.)
set -u
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

ATTACH_MODE=skb
PORT=18090
METRICS_PORT=9573
EXPECT_COUNT=10
A=198.51.100.10 B=198.51.100.11 R=203.0.113.0/28 RIN=203.0.113.5
V6=2001:db8:100::10 C=198.51.100.12 F=198.51.100.13 Z=198.51.100.99
L=198.51.100.40 OK=203.0.113.6 X=198.51.100.20 Y=198.51.100.21

cs() { in_ns "$NS_GW" "$E2E_ROOT/tests/crowdsec.sh" cscli "$CSDIR" "$@" >/dev/null 2>&1; }
matches() { [ "$(bg_check "$1")" = match ]; }
no_match() { [ "$(bg_check "$1")" = "no match" ]; }
log_has() { grep -qF -- "$1" "$E2E_TMP/agent.log"; }
described() { [ "$(jq -r .filter_id "$E2E_TMP/state/filter.json" 2>/dev/null)" = "$(current_filter_id)" ]; }
src_state() { bg status 2>/dev/null | sed -n "s/^  list $1 ([^)]*): \([a-z]*\),.*/\1/p"; }
src_state_is() { [ "$(src_state "$1")" = "$2" ]; }
metrics_get() {
	in_ns "$NS_GW" bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$METRICS_PORT"' &&
		printf "GET /metrics HTTP/1.0\r\n\r\n" >&3 && cat <&3' | sed '1,/^\r$/d'
}
agent_start() {
	spawn_in "$NS_GW" "$BG_BIN" agent --config "$CFG" 2>>"$E2E_TMP/agent.log"
	AGENT_PID=$E2E_LAST_PID
}
agent_stop() {
	kill -TERM "$AGENT_PID" 2>/dev/null
	wait_pid "$AGENT_PID" 10
}

for f in "$UDPSEND" "$UDPSINK"; do
	[ -x "$f" ] || { echo "not ok setup"; echo "#   $f is missing: run make test"; exit 1; }
done
require_cmds crowdsec cscli curl
e2e_init
CSDIR=$E2E_TMP/cs
in_ns "$NS_GW" ip link set lo up
URL=$(in_ns "$NS_GW" "$E2E_ROOT/tests/crowdsec.sh" start "$CSDIR" "$PORT") ||
	die "cannot start the CrowdSec local API"
in_ns "$NS_GW" "$E2E_ROOT/tests/crowdsec.sh" bouncer "$CSDIR" bloomgate >"$E2E_TMP/cs.key" ||
	die "cannot register the bouncer"
chmod 0600 "$E2E_TMP/cs.key"
printf '%s\n' "$L" >"$E2E_TMP/local.txt"
printf '%s\n' "$OK" >"$E2E_TMP/allow.txt"
CFG=$E2E_TMP/bloomgate.yaml
agent_config "$CFG" <<EOF
lists:
  - name: crowdsec
    crowdsec: $URL
    api_key_file: $E2E_TMP/cs.key
    update_frequency: 1s
    scenarios_not_containing: [notme]
  - name: local
    path: $E2E_TMP/local.txt
  - name: ok
    path: $E2E_TMP/allow.txt
    allow: true
EOF

E2E_NAME=decisions_at_start
t_begin
cs decisions add --ip "$A" --duration 1h || t_fail "cscli decisions add --ip"
cs decisions add --range "$R" --duration 1h || t_fail "cscli decisions add --range"
cs decisions add --ip "$V6" --duration 1h || t_fail "cscli decisions add --ip (IPv6)"
cs decisions add --ip "$C" --duration 1h --type captcha || t_fail "cscli decisions add --type captcha"
cs decisions add --ip "$F" --duration 1h --reason "notme at all" || t_fail "cscli decisions add --reason"
bg_capture agent --check --config "$CFG"
grep -q "^list crowdsec (.*): ok, 3 ban decisions" <<<"$BG_OUT" || t_fail "agent --check: $BG_OUT"
grep -F "$(cat "$E2E_TMP/cs.key")" <<<"$BG_OUT$BG_ERR" && t_fail "agent --check printed the key"
: >"$E2E_TMP/agent.log"
agent_start
wait_until 20 matches "$A" || t_fail "$A not matched: $(tail -n 3 "$E2E_TMP/agent.log")"
expect_traffic s1 "$A $RIN $V6" "$B $C $F $Z"
out=$(bg check "$A")
grep -q "^$A: match (confirmed; listed by crowdsec decision [0-9]* (origin cscli, scenario manual 'ban' from 'bloomgate-test') in crowdsec (http://127.0.0.1:$PORT/))" <<<"$out" ||
	t_fail "check $A: $out"
m=$(metrics_get)
grep -q '^bloomgate_crowdsec_decisions{source="crowdsec",origin="cscli"} 3$' <<<"$m" ||
	t_fail "metrics: $(grep crowdsec_decisions <<<"$m")"
# the captcha, counted each time the API sends it: once a whole pull
tc=$(sed -n 's/^bloomgate_crowdsec_ignored_total{source="crowdsec",reason="type"} \([0-9]*\)$/\1/p' <<<"$m")
[ "${tc:-0}" -ge 1 ] || t_fail "metrics: $(grep crowdsec_ignored <<<"$m")"
grep -F "$(cat "$E2E_TMP/cs.key")" "$E2E_TMP/agent.log" "$E2E_TMP/state"/*.json 2>/dev/null &&
	t_fail "the bouncer key is in the agent's log or state"
t_end "$E2E_NAME"

E2E_NAME=add_delete_expire
t_begin
cs decisions add --ip "$B" --duration 1h || t_fail "cscli decisions add"
wait_until 10 matches "$B" || t_fail "$B added: not matched within 10 s"
expect_traffic a1 "$B" "$Z"
# made in place in the filter kept in memory, not rebuilt, from the
# decisions in memory (the copies not parsed)
grep -qE "crowdsec's change in place \(1 keys added, 0 removed; [0-9]+ keys\), from the decisions in memory" "$E2E_TMP/agent.log" ||
	t_fail "the change was not made in place from the decisions: $(grep -E 'live|whole' "$E2E_TMP/agent.log" | tail -n 4)"
cs decisions delete --ip "$B" || t_fail "cscli decisions delete"
wait_until 10 no_match "$B" || t_fail "$B deleted: still matched after 10 s"
expect_traffic a2 "" "$B $Z"
cs decisions add --ip "$X" --duration 4s || t_fail "cscli decisions add --duration 4s"
wait_until 10 matches "$X" || t_fail "$X (4 s) not matched"
wait_until 15 no_match "$X" || t_fail "$X still matched after its 4 s"
expect_traffic a3 "$A" "$X"
t_end "$E2E_NAME"

E2E_NAME=combined_with_lists
t_begin
expect_traffic c1 "$L $A" "$Z"
cs decisions add --ip "$OK" --duration 1h || t_fail "cscli decisions add"
wait_until 10 log_has "new copy, 4 entries" || t_fail "the decision on $OK was not taken"
out=$(bg check "$OK")
grep -q "^$OK: no match (allowlisted by $OK" <<<"$out" || t_fail "check $OK: $out"
expect_traffic c2 "$L $A" "$OK"
t_end "$E2E_NAME"

E2E_NAME=api_down_and_restart
t_begin
cs decisions add --ip "$Y" --duration 6s || t_fail "cscli decisions add --duration 6s"
wait_until 10 matches "$Y" || t_fail "$Y not matched"
in_ns "$NS_GW" "$E2E_ROOT/tests/crowdsec.sh" stop "$CSDIR"
wait_until 10 src_state_is crowdsec failing || t_fail "the source is $(src_state crowdsec) with the API stopped"
expect_traffic d1 "$A $RIN $V6" "$Z"
# ran out while the API is away: leaves all the same
wait_until 15 no_match "$Y" || t_fail "$Y still matched after its 6 s, the API away"
# that change done (the live filter's description saved) before the
# agent is stopped
wait_until 10 described || t_fail "the live filter $(current_filter_id) is not the one state_dir/filter.json describes"
# a restart without the API: the decisions stay, no gap
id=$(current_filter_id)
agent_stop || t_fail "the agent did not stop"
expect_traffic d2 "$A $RIN $V6" "$Z"
agent_start
wait_until 10 src_state_is crowdsec failing || t_fail "the restarted agent's source is $(src_state crowdsec)"
expect_traffic d3 "$A $RIN $V6" "$Y $Z"
t_expect_eq "the live filter across the restart" "$id" "$(current_filter_id)"
# the API back: a new ban flows
URL2=$(in_ns "$NS_GW" "$E2E_ROOT/tests/crowdsec.sh" start "$CSDIR" "$PORT") || t_fail "the API did not start again"
t_expect_eq "the API's URL" "$URL" "$URL2"
cs decisions add --ip "$B" --duration 1h || t_fail "cscli decisions add"
wait_until 20 matches "$B" || t_fail "$B not matched with the API back: $(tail -n 3 "$E2E_TMP/agent.log")"
wait_until 10 src_state_is crowdsec ok || t_fail "the source is $(src_state crowdsec) with the API back"
expect_traffic d4 "$A $B" "$Z"
agent_stop
t_end "$E2E_NAME"

metric() { metrics_get | sed -n "s/^$1 //p"; } # NAME{LABELS}
decisions_total() { metrics_get | awk '/^bloomgate_crowdsec_decisions\{/ { n += $2 } END { print n + 0 }'; }

E2E_NAME=ranges_bounded
t_begin
: >"$E2E_TMP/agent.log"
agent_start
wait_until 20 src_state_is crowdsec ok || t_fail "the source is $(src_state crowdsec)"
RW=198.51.100.128/25 RW6=2001:db8:100:0:1::/80
for r in 192.0.0.0/8 10.0.0.0/7 2000::/3 2001:db8::/24 "$RW" "$RW6"; do
	cs decisions add --range "$r" --duration 1h || t_fail "cscli decisions add --range $r"
done
wait_until 10 matches 198.51.100.200 || t_fail "the /25 Range is not enforced"
wait_until 10 matches 2001:db8:100:0:1::5 || t_fail "the /80 Range is not enforced"
expect_traffic r1 "198.51.100.200 $A" "$Z"
for x in "$S_IP4" 10.1.1.1 "$S_IP6" 2001:db8:ff::1; do
	no_match "$x" || t_fail "$x matched: a Range wider than the bound taken"
done
tw=$(metric 'bloomgate_crowdsec_ignored_total{source="crowdsec",reason="too_wide"}')
[ "${tw:-0}" -ge 4 ] || t_fail "too_wide counted ${tw:-0} times, not at least 4"
cs decisions delete --range "$RW"
cs decisions delete --range "$RW6"
wait_until 10 no_match 198.51.100.200 || t_fail "the /25 Range stays after its deletion"
wait_until 10 no_match 2001:db8:100:0:1::5 || t_fail "the /80 Range stays after its deletion"
t_end "$E2E_NAME"

E2E_NAME=bulk_import
t_begin
before=$(decisions_total)
awk 'BEGIN { printf "["; for (i = 0; i < 10000; i++) printf "%s{\"duration\":\"4h\",\"scope\":\"ip\",\"type\":\"ban\",\"origin\":\"t\",\"reason\":\"bulk\",\"value\":\"100.64.%d.%d\"}", i ? "," : "", int(i / 256), i % 256; print "]" }' >"$E2E_TMP/bulk.json"
out=$(in_ns "$NS_GW" "$E2E_ROOT/tests/crowdsec.sh" cscli "$CSDIR" decisions import -i "$E2E_TMP/bulk.json" 2>&1) ||
	t_fail "cscli decisions import: $(tail -n 3 <<<"$out")"
all_in() { [ "$(decisions_total)" -eq $((before + 10000)) ]; }
wait_until 60 all_in || t_fail "$(decisions_total) decisions in the filter, not $((before + 10000))"
# taken into the set (counted), then live once the rebuild swapped it in
wait_until 30 matches 100.64.0.0 || t_fail "the first imported decision is not enforced"
wait_until 30 matches 100.64.39.15 || t_fail "the last imported decision is not enforced"
t_end "$E2E_NAME"

E2E_NAME=user_agent_and_key
t_begin
grep -qF "bad user agent" "$CSDIR/log/crowdsec.log" &&
	t_fail "the local API logged a bad user agent: $(grep -F "bad user agent" "$CSDIR/log/crowdsec.log" | tail -n 1)"
ver=$(sed -n 's/^.define BG_VERSION "\(.*\)"$/\1/p' "$E2E_ROOT/user/core/version.h")
b=$(in_ns "$NS_GW" "$E2E_ROOT/tests/crowdsec.sh" cscli "$CSDIR" bouncers list -o json 2>/dev/null |
	jq -r '.[] | select(.name == "bloomgate") | "\(.type) \(.version)"')
t_expect_eq "the bouncer as the engine knows it" "bloomgate $ver" "$b"
chmod 0644 "$E2E_TMP/cs.key"
warned() { [ "$(grep -c "warning: api_key_file $E2E_TMP/cs.key is readable or writable by others" "$E2E_TMP/agent.log")" -ge 1 ]; }
wait_until 10 warned || t_fail "no warning of the key file's mode: $(tail -n 2 "$E2E_TMP/agent.log")"
# more pulls: no more warnings
f0=$(metric 'bloomgate_source_fetches_total{source="crowdsec"}')
fetched_more() { [ "$(metric 'bloomgate_source_fetches_total{source="crowdsec"}')" -ge $((f0 + 3)) ]; }
wait_until 15 fetched_more || t_fail "no more pulls"
t_expect_eq "warnings of the key file's mode" 1 "$(grep -c "is readable or writable by others" "$E2E_TMP/agent.log")"
bg_capture agent --check --config "$CFG"
grep -q "^list crowdsec (.*): ok, .*; warning: api_key_file .* is readable or writable by others (mode 0644" <<<"$BG_OUT" ||
	t_fail "agent --check: $BG_OUT"
# a FIFO for the key: refused at once (a pull used to wait for a writer)
mv "$E2E_TMP/cs.key" "$E2E_TMP/cs.key.real"
mkfifo -m 0600 "$E2E_TMP/cs.key"
out=$(timeout 20 "$BG_BIN" agent --check --config "$CFG" 2>&1)
t_expect_eq "agent --check with a FIFO for the key: exit (a list failed)" 4 "$?"
grep -q "^list crowdsec (.*): FAILED: api_key_file $E2E_TMP/cs.key: not a regular file (a FIFO)" <<<"$out" ||
	t_fail "agent --check: $out"
wait_until 10 log_has "not a regular file (a FIFO)" || t_fail "the agent's pull did not fail on the FIFO"
kill -TERM "$AGENT_PID"
wait_pid "$AGENT_PID" 5 || t_fail "the agent did not stop within 5 s of SIGTERM with a FIFO for its key"
rm -f "$E2E_TMP/cs.key"
mv "$E2E_TMP/cs.key.real" "$E2E_TMP/cs.key"
t_end "$E2E_NAME"

echo "# $E2E_PASSED passed, $E2E_FAILED failed"
[ "$E2E_FAILED" -eq 0 ]
