#!/bin/bash
# End-to-end: `bloomgate agent` on the namespace gateway, fed by a URL list
# (build/tests/httpd, the project's own test server, steered through its
# control file) and a file list, with real UDP traffic. Prints one
# "ok NAME" / "not ok NAME" line per check; exits non-zero when one failed.
#   bash tests/e2e/test_agent.sh
set -u
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

ATTACH_MODE=native
HTTPD=$E2E_ROOT/build/tests/httpd
REFRESH=2     # seconds, the URL list's refresh
METRICS_PORT=9571
PPS=2000
T_START=$SECONDS

# Addresses of the server's ranges: listed in the URL list (X...), in the
# file list (Y...), never listed (Z).
X=198.51.100.10 X6=2001:db8:100::10 W=198.51.100.12
Y=198.51.100.20 V=198.51.100.21 U=198.51.100.22
Z=203.0.113.9
FILLER=() # more URL-list entries, so that one line is a big shrink
for i in $(seq 100 139); do FILLER+=("198.51.100.$i"); done

# ---- helpers -----------------------------------------------------------------

write_url_list() { printf '%s\n' "$@" "${FILLER[@]}" >"$WWW/list.tmp" && mv "$WWW/list.tmp" "$WWW/list.txt"; }
steer() { printf '%s\n' "$@" >"$E2E_TMP/http.ctl"; } # httpd control lines
matches() { [ "$(bg_check "$1")" = match ]; }
no_match() { [ "$(bg_check "$1")" = "no match" ]; }
agent_log_has() { grep -qF -- "$1" "$E2E_TMP/agent.log"; }
# The state of a source, from `bloomgate status` (the agent's answer).
src_state() { bg status 2>/dev/null | sed -n "s/^  list $1 ([^)]*): \([a-z]*\),.*/\1/p"; }
src_state_is() { [ "$(src_state "$1")" = "$2" ]; }
status_has() { bg status 2>/dev/null | grep -qF -- "$1"; }
alive() { kill -0 "$1" 2>/dev/null; }
http_gets() { grep -c "^GET /list.txt .* $1 " "$E2E_TMP/http.log"; } # STATUS

agent_start() {
	spawn_in "$NS_GW" "$BG_BIN" agent --config "$CFG" 2>>"$E2E_TMP/agent.log"
	AGENT_PID=$E2E_LAST_PID
}
agent_stop() { # SIGNAL
	kill "-$1" "$AGENT_PID" 2>/dev/null
	wait_pid "$AGENT_PID" 10
}

metrics_get() { # the body of GET /metrics, from inside the gateway
	in_ns "$NS_GW" bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$METRICS_PORT"' &&
		printf "GET /metrics HTTP/1.0\r\n\r\n" >&3 && cat <&3' |
		sed '1,/^\r$/d'
}

# ---- setup ---------------------------------------------------------------------

for f in "$HTTPD" "$UDPSEND" "$UDPSINK"; do
	[ -x "$f" ] || { echo "not ok setup"; echo "#   $f is missing: run make test"; exit 1; }
done
e2e_init
WWW=$E2E_TMP/www
mkdir -p "$WWW" "$E2E_TMP/state"
write_url_list "$X" "$X6"
printf '%s\n' "$Y" >"$E2E_TMP/local.txt"
: >"$E2E_TMP/http.log"
spawn_in "$NS_GW" "$HTTPD" -l "$E2E_TMP/http.log" -c "$E2E_TMP/http.ctl" "$WWW" \
	>"$E2E_TMP/http.port"
wait_until 5 test -s "$E2E_TMP/http.port" || die "the test HTTP server did not start"
HTTP_PORT=$(head -1 "$E2E_TMP/http.port")

CFG=$E2E_TMP/bloomgate.yaml
cat >"$CFG" <<EOF
interfaces:
  - name: $IF_GWC
    mode: $ATTACH_MODE
    unparsed: drop
fpr: 0.0001
state_dir: $E2E_TMP/state
metrics: 127.0.0.1:$METRICS_PORT
debounce: 200ms
lists:
  - name: remote
    url: http://127.0.0.1:$HTTP_PORT/list.txt
    refresh: ${REFRESH}s
    timeout: 1s
  - name: local
    path: $E2E_TMP/local.txt
EOF

# ---- 1. agent --check -----------------------------------------------------------

E2E_NAME=agent_check
t_begin
bg_capture agent --check --config "$CFG"
t_expect_eq "agent --check of a valid config and reachable lists: exit" 0 "$BG_RC"
grep -q "^list remote .*: ok, 42 entries" <<<"$BG_OUT" || t_fail "no 'ok' for the URL list: $BG_OUT"
sed 's/^fpr:/fpx:/' "$CFG" >"$E2E_TMP/bad.yaml"
bg_capture agent --check --config "$E2E_TMP/bad.yaml"
t_expect_eq "agent --check of a config with an unknown key: exit" 2 "$BG_RC"
grep -q "bad.yaml:$(grep -n '^fpr:' "$CFG" | cut -d: -f1): " <<<"$BG_OUT$BG_ERR" ||
	t_fail "no file:line in: $BG_OUT $BG_ERR"
[ -e "$BG_PIN" ] && t_fail "agent --check touched the datapath ($BG_PIN exists)"
t_end "$E2E_NAME"

# ---- 2. start: attach, fetch, build ---------------------------------------------

E2E_NAME=agent_starts_and_filters
t_begin
agent_start
wait_until 15 matches "$X" || t_fail "$X (URL list) not matched 15 s after start: $(tail -3 "$E2E_TMP/agent.log")"
wait_until 5 matches "$Y" || t_fail "$Y (file list) not matched"
expect_traffic t2 "$X $Y $X6" "$Z"
wait_until 5 src_state_is remote ok || t_fail "status: remote is '$(src_state remote)', not ok: $(bg status 2>&1 | tail -3)"
# the interface's settings from the config (the mode byte holds the policy too)
status_has "attached: $IF_GWC (ifindex " || t_fail "status: $(bg status | grep '^attached')"
bg status | grep -q "^attached: $IF_GWC .*, $ATTACH_MODE mode, .*, unparsed drop, " ||
	t_fail "config unparsed: drop not in status: $(bg status | grep '^attached')"
t_end "$E2E_NAME"

# ---- 3. a change on the server reaches the datapath --------------------------------

E2E_NAME=url_change_reaches_datapath
t_begin
t0=$SECONDS
write_url_list "$X" "$X6" "$W"
wait_until $((2 * REFRESH + 3)) matches "$W" || t_fail "$W not matched within 2 x refresh"
info "new URL entry matched after $((SECONDS - t0)) s (refresh ${REFRESH} s)"
expect_traffic t3 "$W" "$Z"
t_end "$E2E_NAME"

E2E_NAME=check_explains_from_the_store
t_begin
want="$W: match (confirmed; listed by $W at remote (http://127.0.0.1:$HTTP_PORT/list.txt):3)"
wait_until 5 eval '[ "$(bg check "$W" 2>&1)" = "$want" ]' ||
	t_fail "check $W: '$(bg check "$W" 2>&1)', expected '$want'"
want="$Y: match (confirmed; listed by $Y at local ($E2E_TMP/local.txt):1)"
t_expect_eq "check $Y" "$want" "$(bg check "$Y" 2>&1)"
t_end "$E2E_NAME"

# A provenance index cut short is refused with a reason, never read.
E2E_NAME=check_refuses_a_truncated_index
t_begin
idx=$E2E_TMP/state/index/local.idx
cp "$idx" "$E2E_TMP/local.idx.good"
truncate -s -100 "$idx"
out=$(bg check "$Y" 2>&1)
grep -q "^bloomgate: check: list local: index truncated: " <<<"$out" ||
	t_fail "no reason for the truncated index: $out"
grep -qF "$Y: match (confirmed: the provenance index of local cannot be read now)" <<<"$out" ||
	t_fail "check $Y with a truncated index: $out"
cp "$E2E_TMP/local.idx.good" "$idx"
t_expect_eq "check $Y, the index whole again" "$want" "$(bg check "$Y" 2>&1)"
t_end "$E2E_NAME"

# ---- 4. file list: edited in place, replaced by rename -------------------------------

E2E_NAME=file_edited_in_place
t_begin
printf '%s\n' "$V" >>"$E2E_TMP/local.txt"
wait_until 5 matches "$V" || t_fail "$V not matched after an edit in place"
t_end "$E2E_NAME"

E2E_NAME=file_replaced_by_rename
t_begin
printf '%s\n' "$Y" "$U" >"$E2E_TMP/local.new"
mv "$E2E_TMP/local.new" "$E2E_TMP/local.txt"
wait_until 5 matches "$U" || t_fail "$U not matched after a rename over the file"
wait_until 5 no_match "$V" || t_fail "$V still matched after the file without it replaced the old"
t_end "$E2E_NAME"

# ---- 4b. a rejected line: named, counted, printed ----------------------------------------

src_line() { bg status 2>/dev/null | grep "^  list $1 "; }
src_line_has() { src_line "$1" | grep -q -- "$2"; } # NAME PATTERN
E2E_NAME=rejected_line_named
t_begin
printf '%s\n' 0.0.0.0/0 >>"$E2E_TMP/local.txt"
ln=$(wc -l <"$E2E_TMP/local.txt")
why="prefix shorter than /8 blocks too much"
wait_until 5 agent_log_has "source local: refused $E2E_TMP/local.txt:$ln: $why" ||
	t_fail "the rejected line is not named in the log: $(grep -F 'source local' "$E2E_TMP/agent.log" | tail -n 3)"
wait_until 5 agent_log_has "source local: new copy, 2 entries, 1 rejected lines" ||
	t_fail "the new copy's line: $(grep -F 'source local: new copy' "$E2E_TMP/agent.log" | tail -n 1)"
no_match "$Z" || t_fail "0.0.0.0/0 was loaded: $Z matched"
wait_until 5 src_line_has local ': ok, 2 entries, 1 rejected lines' ||
	t_fail "status: $(src_line local)"
grep -qxF 'bloomgate_source_rejected_lines{source="local"} 1' <<<"$(metrics_get)" ||
	t_fail "metrics: $(metrics_get | grep rejected_lines)"
bg_capture agent --check --config "$CFG"
grep -qxF "  $E2E_TMP/local.txt:$ln: $why (needs --allow-wide): '0.0.0.0/0'" <<<"$BG_OUT" ||
	t_fail "agent --check does not print the rejected line: $BG_OUT"
grep -q "^list local .*: ok, 2 entries, 1 rejected lines" <<<"$BG_OUT" || t_fail "agent --check: $BG_OUT"
# back as it was: nothing rejected
printf '%s\n' "$Y" "$U" >"$E2E_TMP/local.new" && mv "$E2E_TMP/local.new" "$E2E_TMP/local.txt"
wait_until 5 src_line_has local ': ok, 2 entries, last' ||
	t_fail "status after the line went: $(src_line local)"
t_end "$E2E_NAME"

# ---- 5. failures keep the last good copy ----------------------------------------------

E2E_NAME=server_500_keeps_filter
t_begin
steer "/list.txt 500"
wait_until $((2 * REFRESH + 5)) src_state_is remote failing || t_fail "remote never 'failing' on HTTP 500"
matches "$X" || t_fail "$X dropped out of the filter after a 500"
expect_traffic t5 "$X $W" "$Z"
m=$(metrics_get | sed -n 's/^bloomgate_source_fetch_failures_total{source="remote"} //p')
[ "${m:-0}" -ge 1 ] || t_fail "metrics: fetch failures of remote are '${m:-none}'"
t_end "$E2E_NAME"

E2E_NAME=garbage_and_slow_keep_filter
t_begin
n0=$(http_gets 200)
steer "/list.txt garbage"
wait_until $((2 * REFRESH + 5)) status_has "not a list" || t_fail "a garbage body was not refused as 'not a list'"
steer "/list.txt slow"
wait_until $((3 * REFRESH + 8)) status_has "timeout" || t_fail "a body slower than the timeout did not fail as a timeout"
matches "$X" && matches "$W" || t_fail "the filter lost the URL list's entries"
info "200 answers with bad bodies: $(($(http_gets 200) - n0))"
t_end "$E2E_NAME"

E2E_NAME=shrink_guard
t_begin
steer "# all ok"
wait_until $((2 * REFRESH + 5)) src_state_is remote ok || t_fail "remote not ok again"
printf '%s\n' "$X" >"$WWW/list.tmp" && mv "$WWW/list.tmp" "$WWW/list.txt"
wait_until $((2 * REFRESH + 5)) status_has "shrank" || t_fail "a list shrunk to 1 of 43 entries was not refused"
matches "$W" || t_fail "$W dropped out: the shrunk copy was used"
write_url_list "$X" "$X6" "$W"
wait_until $((2 * REFRESH + 5)) src_state_is remote ok || t_fail "remote not ok after the list came back"
t_end "$E2E_NAME"

# ---- 6. reload and SIGHUP --------------------------------------------------------------

E2E_NAME=reload_and_sighup
t_begin
bg_capture reload
t_expect_eq "bloomgate reload: exit" 0 "$BG_RC"
grep -q "^ok: generation [0-9]" <<<"$BG_OUT" || t_fail "reload answered '$BG_OUT'"
sed -i "s/^debounce: .*/debounce: 100ms/" "$CFG"
kill -HUP "$AGENT_PID"
wait_until 5 agent_log_has "SIGHUP" || t_fail "SIGHUP not seen in the agent's log"
alive "$AGENT_PID" || t_fail "the agent died on SIGHUP"
matches "$X" || t_fail "$X not matched after SIGHUP"
t_end "$E2E_NAME"

# ---- 6b. the interface's options follow the config ----------------------------------------

E2E_NAME=reload_changes_attach_options
t_begin
id0=$(xdp_prog_id "$IF_GWC")
sed -i "s/^    unparsed: drop$/    unparsed: drop\n    action: flag/" "$CFG"
bg_capture reload
t_expect_eq "reload with action: flag: exit" 0 "$BG_RC"
grep -qF "interface $IF_GWC: action drop -> flag" <<<"$BG_OUT" || t_fail "reload answered '$BG_OUT'"
id1=$(xdp_prog_id "$IF_GWC")
[ -n "$id1" ] && [ "$id1" != "$id0" ] || t_fail "the program was not replaced ($id0 -> $id1)"
bg status | grep -q "^attached: $IF_GWC .*, action flag, " || t_fail "status: $(bg status | grep '^attached')"
f0=$(bg_stat flagged)
expect_traffic t6b "" "$X $Z" # flagged: passed
[ "$(bg_stat flagged)" -gt "${f0:-0}" ] || t_fail "no packet flagged after the reload"
sed -i "/^    action: flag$/d" "$CFG"
bg_capture reload
grep -qF "interface $IF_GWC: action flag -> drop" <<<"$BG_OUT" || t_fail "reload back answered '$BG_OUT'"
expect_traffic t6c "$X" "$Z"
bg_capture reload
grep -qF "interface $IF_GWC" <<<"$BG_OUT" && t_fail "a reload with nothing changed said: $BG_OUT"
t_end "$E2E_NAME"

# ---- 7. metrics --------------------------------------------------------------------------

E2E_NAME=metrics_promtool_and_stats
t_begin
metrics_get >"$E2E_TMP/metrics.txt"
if ! promtool check metrics <"$E2E_TMP/metrics.txt" >"$E2E_TMP/promtool.out" 2>&1; then
	t_fail "promtool check metrics: $(head -3 "$E2E_TMP/promtool.out")"
fi
# No traffic flows now: the scrape and stats read the same counters.
p_metrics=$(sed -n 's/^bloomgate_packets_total //p' "$E2E_TMP/metrics.txt")
t_expect_eq "bloomgate_packets_total vs stats --json packets" "$(bg_stat packets)" "$p_metrics"
d_metrics=$(sed -n 's/^bloomgate_verdicts_total{verdict="dropped"} //p' "$E2E_TMP/metrics.txt")
t_expect_eq "dropped verdicts vs stats --json dropped" "$(bg_stat dropped)" "$d_metrics"
# the exact stage's rejected Bloom positives (issue 11): a counter each
for c in address:bloom_false_positives dns:dns_bloom_false_positives; do
	f=bloomgate_${c%%:*}_bloom_false_positives_total
	grep -qx "# TYPE $f counter" "$E2E_TMP/metrics.txt" || t_fail "metrics: no counter family $f"
	t_expect_eq "$f vs stats --json ${c#*:}" "$(bg_stat "${c#*:}")" \
		"$(sed -n "s/^$f //p" "$E2E_TMP/metrics.txt")"
done
grep -q '^bloomgate_source_entries{source="local"} 2$' "$E2E_TMP/metrics.txt" ||
	t_fail "bloomgate_source_entries of local is not 2"
grep -q '^bloomgate_filter_generation [1-9]' "$E2E_TMP/metrics.txt" || t_fail "no filter generation"
grep -q "^bloomgate_interface_info{.*,mode=\"$ATTACH_MODE\",.*,unparsed=\"drop\"} 1$" "$E2E_TMP/metrics.txt" ||
	t_fail "interface_info: $(grep '^bloomgate_interface_info' "$E2E_TMP/metrics.txt")"
t_end "$E2E_NAME"

# ---- 8. idle: no polling loop ----------------------------------------------------------

E2E_NAME=idle_agent_uses_no_cpu
t_begin
ticks() { awk '{ print $14 + $15 }' "/proc/$AGENT_PID/stat"; }
c0=$(ticks)
# Measured over 3 s of wall time (one or two 304 fetches included).
sleep 3
c1=$(ticks)
info "agent CPU over 3 s idle: $((c1 - c0)) ticks of $(getconf CLK_TCK) per s"
[ $((c1 - c0)) -le 3 ] || t_fail "the idle agent used $((c1 - c0)) ticks in 3 s"
t_end "$E2E_NAME"

# ---- 9. restart: no re-download, the filter adopted --------------------------------------

E2E_NAME=restart_adopts_without_download
t_begin
id0=$(current_filter_id)
[ -n "$id0" ] || t_fail "no live filter before the restart"
agent_stop TERM || t_fail "the agent did not stop on SIGTERM"
matches "$X" || t_fail "$X not matched while the agent is stopped (fail-static)"
expect_traffic t9 "$X" "$Z"
n200=$(http_gets 200)
: >"$E2E_TMP/agent.log"
agent_start
wait_until 10 agent_log_has "adopted" || t_fail "the restarted agent did not adopt the filter: $(tail -3 "$E2E_TMP/agent.log")"
t_expect_eq "200 answers to the restarted agent (a 304 expected)" "$n200" "$(http_gets 200)"
id1=$(current_filter_id)
t_expect_eq "filter id after the restart" "$id0" "$id1"
t_end "$E2E_NAME"

# ---- 10. kill -9 during a rebuild: nothing listed gets through ---------------------------

E2E_NAME=kill9_during_rebuild_fail_static
t_begin
sink_start t10 || t_fail "the sink did not start"
send_start t10 --pps "$PPS" "$X" "$W" "$Z"
write_url_list "$X" "$X6" "$W" 198.51.100.13
wait_until $((2 * REFRESH + 5)) agent_log_has "new copy" || t_fail "the change was not fetched"
kill -9 "$AGENT_PID"
wait_pid "$AGENT_PID" 5 || t_fail "kill -9 did not end the agent"
matches "$X" || t_fail "$X not matched after kill -9"
: >"$E2E_TMP/agent.log"
agent_start
wait_until 15 matches 198.51.100.13 || t_fail "the restarted agent did not load the change"
send_stop t10
sink_finish t10
for a in "$X" "$W"; do
	r=$(recv t10 "$a")
	[ "$r" -eq 0 ] || t_fail "$a (listed): $r of $(sent t10 "$a") delivered across kill -9 and restart"
done
s=$(sent t10 "$Z") r=$(recv t10 "$Z")
[ "$r" -eq "$s" ] || t_fail "$Z (not listed): $r of $s delivered"
t_end "$E2E_NAME"

# ---- 10b. an attachment whose interface was deleted: removed on reload -------------------

E2E_NAME=agent_removes_gone_attachments
t_begin
NSINO=$(in_ns "$NS_GW" stat -L -c %i /proc/self/ns/net)
ip -n "$NS_GW" link add bggone0 type veth peer name bggone0p
ip -n "$NS_GW" link set bggone0 up
ip -n "$NS_GW" link set bggone0p up
attach bggone0 || t_fail "attach bggone0: $BG_ERR"
IDX=$(ip -n "$NS_GW" -o link show dev bggone0 | cut -d: -f1)
ip -n "$NS_GW" link del bggone0
status_has "attached: gone (ifindex $IDX)" || t_fail "status: $(bg status | grep '^attached')"
bg reload >/dev/null || t_fail "reload failed"
status_has "gone (ifindex" && t_fail "status after reload: $(bg status | grep '^attached')"
[ ! -e "$BG_PIN/bg_progs_${IDX}_$NSINO" ] || t_fail "the agent left bg_progs_${IDX}_$NSINO"
status_has "attached: $IF_GWC " || t_fail "$IF_GWC no longer attached: $(bg status | grep '^attached')"
bg reload >/dev/null || t_fail "second reload failed"
t_expect_eq "agent log lines about ifindex $IDX (logged once)" 1 \
	"$(grep -c "interface ifindex $IDX (netns inode $NSINO) is gone: its attachment removed" "$E2E_TMP/agent.log")"
matches "$X" || t_fail "$X not matched after the reload"
t_end "$E2E_NAME"

# ---- 11. the systemd unit --------------------------------------------------------------------

E2E_NAME=systemd_unit_verifies
t_begin
sed "s#/usr/local/sbin/bloomgate#$BG_BIN#g" "$E2E_ROOT/etc/bloomgate-agent.service" \
	>"$E2E_TMP/bloomgate-agent.service"
if ! systemd-analyze verify "$E2E_TMP/bloomgate-agent.service" >"$E2E_TMP/verify.out" 2>&1 ||
	grep -v "^$" "$E2E_TMP/verify.out" | grep -q .; then
	t_fail "systemd-analyze verify: $(head -3 "$E2E_TMP/verify.out")"
fi
t_end "$E2E_NAME"

agent_stop TERM
info "total $((SECONDS - T_START)) s"
[ "$E2E_FAILED" -eq 0 ]
