#!/bin/bash
# End-to-end: the agent's crowdsec: source against answers the real engine
# never sends, served by the project's test server (build/tests/httpd,
# which serves a canned file at /v1/decisions/stream whatever the query)
# in the gateway's namespace; tests/e2e/test_crowdsec.sh runs the cases the
# engine (Debian's crowdsec 1.4.6) can produce. With real UDP traffic
# through the gateway:
#
#   hostile_answer          garbage durations ("5", "", "1h-5m", "nans",
#                           "1e400s", none), values the list parser refuses
#                           ("1.2.3.4/ 24", "/+8", "198.51.100.66/032"),
#                           wide ones ("0.0.0.0/0", "::/0", "10.0.0.0/1",
#                           "2000::/3", a /8 Range), an element past its
#                           bound, a captcha: none enforced, each counted
#                           by reason, the first few logged; the good ones
#                           enforced and counted as the decisions in the
#                           filter
#   million_descending      a million decisions in descending id order (the
#                           engine answers in that order, but takes some 30
#                           s for a million): all enforced
#   sigterm_during_pull     SIGTERM while the agent pulls a million: it
#                           exits at once (status 0); the time is printed
#                           (bench/crowdsec.sh measures it)
#   endless_body            a body that never ends: the pull stops at
#                           max_bytes, the source fails, the decisions of
#                           its last copy stay enforced; SIGTERM in the
#                           middle of such a pull stops the agent
set -u
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

ATTACH_MODE=skb
HTTPD=$E2E_ROOT/build/tests/httpd
METRICS_PORT=9574
EXPECT_COUNT=10
MANY=${CS_MANY:-1000000}
A=198.51.100.10 RIN=203.0.113.5 V6=2001:db8:100::10 Z=198.51.100.99
# the refused ones' addresses (values that are addresses)
D1=198.51.100.21 D2=198.51.100.22 D3=198.51.100.23 D4=198.51.100.24
D5=198.51.100.25 D6=198.51.100.26 CAP=198.51.100.27 BIG=198.51.100.28

matches() { [ "$(bg_check "$1")" = match ]; }
no_match() { [ "$(bg_check "$1")" = "no match" ]; }
log_has() { grep -qF -- "$1" "$E2E_TMP/agent.log"; }
src_state() { bg status 2>/dev/null | sed -n "s/^  list $1 ([^)]*): \([a-z]*\),.*/\1/p"; }
src_state_is() { [ "$(src_state "$1")" = "$2" ]; }
alive() { kill -0 "$1" 2>/dev/null; }
metrics_get() {
	in_ns "$NS_GW" bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$METRICS_PORT"' &&
		printf "GET /metrics HTTP/1.0\r\n\r\n" >&3 && cat <&3' | sed '1,/^\r$/d'
}
metric() { metrics_get | sed -n "s/^$1 //p"; } # NAME{LABELS} (regex-quoted by the caller)
metric_is() { [ "$(metric "$1")" = "$2" ]; }
gets() { grep -c '^GET /v1/decisions/stream ' "$E2E_TMP/http.log"; }
gets_above() { [ "$(gets)" -gt "$1" ]; }
answer() { cp "$1" "$WWW/v1/decisions/stream.new" && mv "$WWW/v1/decisions/stream.new" "$WWW/v1/decisions/stream"; }
steer() { printf '%s\n' "$@" >"$E2E_TMP/http.ctl"; }

agent_start() { # CONFIG
	spawn_in "$NS_GW" "$BG_BIN" agent --config "$1" 2>>"$E2E_TMP/agent.log"
	AGENT_PID=$E2E_LAST_PID
}
# SIGTERM; the agent's exit status in STOP_RC and the seconds it took in
# STOP_S, or 1 when it did not exit within SECONDS (a safety bound, then
# killed)
agent_term() { # SECONDS
	local t0=$EPOCHREALTIME
	kill -TERM "$AGENT_PID" 2>/dev/null
	if ! wait_until "$1" eval '! alive "$AGENT_PID"'; then
		kill -KILL "$AGENT_PID" 2>/dev/null
		wait "$AGENT_PID" 2>/dev/null
		return 1
	fi
	STOP_S=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
	wait "$AGENT_PID"
	STOP_RC=$?
	return 0
}

# One decision as 1.4.6 writes it.
dec() { # ID TYPE SCOPE VALUE DURATION
	printf '{"duration":"%s","id":%s,"origin":"cscli","scenario":"manual '"'"'ban'"'"' from '"'"'t'"'"'","scope":"%s","type":"%s","value":"%s"}' \
		"$5" "$1" "$3" "$2" "$4"
}

for f in "$HTTPD" "$UDPSEND" "$UDPSINK"; do
	[ -x "$f" ] || { echo "not ok setup"; echo "#   $f is missing: run make test"; exit 1; }
done
e2e_init
WWW=$E2E_TMP/www
mkdir -p "$WWW/v1/decisions" "$E2E_TMP/state"
echo 0123456789abcdef >"$E2E_TMP/cs.key"
chmod 0600 "$E2E_TMP/cs.key"
: >"$E2E_TMP/http.log"
spawn_in "$NS_GW" "$HTTPD" -l "$E2E_TMP/http.log" -c "$E2E_TMP/http.ctl" "$WWW" \
	>"$E2E_TMP/http.port"
wait_until 5 test -s "$E2E_TMP/http.port" || die "the test HTTP server did not start"
URL=http://127.0.0.1:$(head -1 "$E2E_TMP/http.port")/
config() { # FILE [EXTRA KEY LINES OF THE SOURCE]
	agent_config "$1" <<-EOF
	lists:
	  - name: cs
	    crowdsec: $URL
	    api_key_file: $E2E_TMP/cs.key
	    update_frequency: 1s
	${2:-}
	EOF
}
CFG=$E2E_TMP/bloomgate.yaml
config "$CFG"

E2E_NAME=hostile_answer
t_begin
big=$(head -c 20000 /dev/zero | tr '\0' x)
{
	printf '{"deleted":null,"new":['
	dec 1 ban Ip "$A" 3h59m58.123456789s
	printf ','; dec 2 ban Range 203.0.113.0/24 59m0s
	printf ','; dec 3 ban Ip "$V6" 1h0m0s
	printf ','; dec 10 ban Ip "$D1" 5
	printf ','; dec 11 ban Ip "$D2" ""
	printf ','; dec 12 ban Ip "$D3" 1h-5m
	printf ','; dec 13 ban Ip "$D4" nans
	printf ','; dec 14 ban Ip "$D5" 1e400s
	printf ',{"id":15,"origin":"cscli","scope":"Ip","type":"ban","value":"%s"}' "$D6"
	printf ','; dec 20 ban Range '1.2.3.4/ 24' 1h0m0s
	printf ','; dec 21 ban Range /+8 1h0m0s
	printf ','; dec 22 ban Range 198.51.100.66/032 1h0m0s
	printf ','; dec 30 ban Range 0.0.0.0/0 1h0m0s
	printf ','; dec 31 ban Range ::/0 1h0m0s
	printf ','; dec 32 ban Range 10.0.0.0/1 1h0m0s
	printf ','; dec 33 ban Range 2000::/3 1h0m0s
	printf ','; dec 34 ban Range 192.0.0.0/8 1h0m0s
	printf ','; dec 40 captcha Ip "$CAP" 1h0m0s
	printf ',{"id":41,"type":"ban","scope":"Ip","value":"%s","duration":"1h0m0s","scenario":"%s"}' "$BIG" "$big"
	printf ']}\n'
} >"$E2E_TMP/hostile.json"
answer "$E2E_TMP/hostile.json"
: >"$E2E_TMP/agent.log"
agent_start "$CFG"
wait_until 20 matches "$A" || t_fail "$A not matched: $(tail -n 3 "$E2E_TMP/agent.log")"
expect_traffic h1 "$A $RIN $V6" "$D1 $D2 $D3 $D4 $D5 $D6 $CAP $BIG $Z"
for x in 192.0.2.200 10.1.2.3 198.51.100.66 2001:db8:2::99; do
	no_match "$x" || t_fail "$x matched (a refused decision's)"
done
m=$(metrics_get)
grep -qxF 'bloomgate_crowdsec_decisions{source="cs",origin="cscli"} 3' <<<"$m" ||
	t_fail "metrics: $(grep crowdsec_decisions <<<"$m")"
# each pull of this answer (one a second: the server sends it again)
# refuses the same: K pulls, K times each count
k=$(sed -n 's/^bloomgate_crowdsec_ignored_total{source="cs",reason="type"} //p' <<<"$m")
[ "${k:-0}" -ge 1 ] || t_fail "metrics: no refusal of type counted: $(grep crowdsec_ignored <<<"$m" | tr '\n' ' ')"
for want in duration:6 value:3 too_wide:5 too_large:1 scope:0 expired:0 malformed:0; do
	grep -qxF "bloomgate_crowdsec_ignored_total{source=\"cs\",reason=\"${want%:*}\"} $((${want#*:} * ${k:-0}))" <<<"$m" ||
		t_fail "metrics: ${want%:*} is not ${want#*:} a pull ($k pulls): $(grep crowdsec_ignored <<<"$m" | tr '\n' ' ')"
done
log_has "source cs: refused decision 10 from 'cscli': duration (not a duration as the API writes one): '$D1'" ||
	t_fail "the first refusal is not logged: $(grep refused "$E2E_TMP/agent.log" | head -n 3)"
log_has "source cs: refused decision 14 from 'cscli': duration (not a duration as the API writes one): '$D5'" ||
	t_fail "the fifth refusal is not logged"
log_has "source cs: refused decision 30 from 'cscli': too_wide" ||
	t_fail "the tenth refusal is not logged: $(grep refused "$E2E_TMP/agent.log" | head -n 12)"
log_has "source cs: refused 6 more (16 in all)" || t_fail "no count of the refusals not logged: $(grep refused "$E2E_TMP/agent.log" | tail -n 2)"
log_has "refused decision 31 " && t_fail "more than the first ten refusals of a pull logged"
t_end "$E2E_NAME"

E2E_NAME=million_descending
t_begin
awk -v n="$MANY" 'BEGIN { printf "{\"deleted\":null,\"new\":["
	for (i = 0; i < n; i++) printf "%s{\"duration\":\"3h59m59.361927607s\",\"id\":%d,\"origin\":\"cscli\",\"scenario\":\"manual '"'"'ban'"'"' from '"'"'t'"'"'\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"100.%d.%d.%d\"}", i ? "," : "", n - i, 64 + int(i / 65536), int(i / 256) % 256, i % 256
	print "]}" }' >"$E2E_TMP/many.json"
last=$(awk -v n="$MANY" 'BEGIN { i = n - 1; printf "100.%d.%d.%d", 64 + int(i / 65536), int(i / 256) % 256, i % 256 }')
t0=$EPOCHREALTIME
answer "$E2E_TMP/many.json"
all_in() { metric_is 'bloomgate_crowdsec_decisions{source="cs",origin="cscli"}' "$MANY" && matches "$last"; }
wait_until 120 all_in || t_fail "not all $MANY enforced: $(metrics_get | grep crowdsec_decisions) $(tail -n 3 "$E2E_TMP/agent.log")"
info "$MANY decisions in descending id order enforced $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s after the answer changed"
matches 100.64.0.0 || t_fail "the first decision (id $MANY) is not matched"
# the set pulled whole after the bulk: what it no longer holds goes
wait_until 30 no_match "$A" || t_fail "$A (not in the new set) still matched"
no_match 100.127.255.255 || [ "$MANY" -ge 4194304 ] || t_fail "an address past the decisions matched"
t_end "$E2E_NAME"

E2E_NAME=sigterm_during_pull
t_begin
# a restarted agent reads its million back from the copy, then pulls the
# million again: SIGTERM once that pull is asked for (counted from the
# old agent's end: a pull of its own in between is not the new one's)
agent_term 30 || t_fail "the agent did not stop"
n=$(gets)
agent_start "$CFG"
wait_until 60 gets_above "$n" || t_fail "the restarted agent did not pull"
if agent_term 10; then
	info "SIGTERM during the pull of $MANY: exited in $STOP_S s, status $STOP_RC"
	t_expect_eq "the agent's exit status" 0 "$STOP_RC"
else
	t_fail "the agent did not exit within 10 s of SIGTERM during a pull"
fi
t_end "$E2E_NAME"

E2E_NAME=endless_body
t_begin
CFG2=$E2E_TMP/bounded.yaml
config "$CFG2" "    max_bytes: 4M"
{
	printf '{"deleted":null,"new":[\n'
	dec 7 ban Ip 100.64.0.1 1h0m0s
	printf ',\n'
} >"$E2E_TMP/endless.json"
answer "$E2E_TMP/endless.json"
steer "/v1/decisions/stream endless"
: >"$E2E_TMP/agent.log"
agent_start "$CFG2"
wait_until 20 src_state_is cs failing || t_fail "the source is $(src_state cs) with a never-ending answer"
log_has "larger than max_bytes (4194304)" || t_fail "no word of the bound: $(tail -n 3 "$E2E_TMP/agent.log")"
# the last good copy stays enforced
matches "$last" || t_fail "$last (the last copy's) not matched"
# the default bound (512M): SIGTERM in the middle of the body
agent_term 30 || t_fail "the agent did not stop"
n=$(gets)
agent_start "$CFG"
wait_until 60 gets_above "$n" || t_fail "the agent did not pull"
if agent_term 10; then
	info "SIGTERM in a never-ending pull: exited in $STOP_S s, status $STOP_RC"
	t_expect_eq "the agent's exit status" 0 "$STOP_RC"
else
	t_fail "the agent did not exit within 10 s of SIGTERM during a never-ending pull"
fi
steer
t_end "$E2E_NAME"

echo "# $E2E_PASSED passed, $E2E_FAILED failed"
[ "$E2E_FAILED" -eq 0 ]
