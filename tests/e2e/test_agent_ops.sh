#!/bin/bash
# End-to-end: the agent under careless and hostile operation. One agent a
# pin directory (a second exits with a clear line, the first keeps its
# socket); `bloomgate load` refuses to replace the agent's filter unless
# --force, and then the agent says its filter was replaced (status,
# metrics) and a reload builds its own again; a reload of an invalid
# config fails with the file:line; a URL's password is never printed or
# stored; `status` against a stopped agent gives up; `agent --check` on a
# state_dir that is a file, and cut short by a pipe. `bloomgate check` is
# the judge of what the live filter holds. After `detach --all` under it, a
# failed rebuild says that no filter runs. Prints "ok NAME" / "not ok
# NAME" per case.
#   bash tests/e2e/test_agent_ops.sh
set -u
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

ATTACH_MODE=native
HTTPD=$E2E_ROOT/build/tests/httpd
METRICS_PORT=9573
SECRET=s3cretPW
X=198.51.100.30 # in the URL list
Y=198.51.100.31 # in the file list
Z=203.0.113.30  # in a list loaded by hand

matches() { [ "$(bg_check "$1")" = match ]; }
no_match() { [ "$(bg_check "$1")" = "no match" ]; }
agent_log_has() { grep -qF -- "$1" "$E2E_TMP/agent.log"; }
alive() { kill -0 "$1" 2>/dev/null; }
status_has() { bg status 2>/dev/null | grep -qF -- "$1"; }
metrics_get() {
	in_ns "$NS_GW" bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$METRICS_PORT"' &&
		printf "GET /metrics HTTP/1.0\r\n\r\n" >&3 && cat <&3' | sed '1,/^\r$/d'
}
foreign_is() { metrics_get | grep -qx "bloomgate_filter_foreign $1"; }

agent_start() { # LOG
	spawn_in "$NS_GW" "$BG_BIN" agent --config "$CFG" 2>>"$1"
	AGENT_PID=$E2E_LAST_PID
}

for f in "$HTTPD" "$UDPSEND" "$UDPSINK"; do
	[ -x "$f" ] || { echo "not ok setup"; echo "#   $f is missing: run make test"; exit 1; }
done
e2e_init
WWW=$E2E_TMP/www
mkdir -p "$WWW" "$E2E_TMP/state"
printf '%s\n' "$X" >"$WWW/list.txt"
printf '%s\n' "$Y" >"$E2E_TMP/local.txt"
printf '%s\n' "$Z" >"$E2E_TMP/other.txt"
spawn_in "$NS_GW" "$HTTPD" -l "$E2E_TMP/http.log" "$WWW" >"$E2E_TMP/http.port"
wait_until 5 test -s "$E2E_TMP/http.port" || die "the test HTTP server did not start"
HTTP_PORT=$(head -1 "$E2E_TMP/http.port")

CFG=$E2E_TMP/bloomgate.yaml
write_cfg() { # [EXTRA-TOP-LEVEL-LINE]
	cat >"$CFG" <<EOF
interfaces:
  - name: $IF_GWC
    mode: $ATTACH_MODE
state_dir: $E2E_TMP/state
metrics: 127.0.0.1:$METRICS_PORT
debounce: 100ms
${1:-}
lists:
  - name: remote
    url: http://alice:$SECRET@127.0.0.1:$HTTP_PORT/list.txt
    refresh: 1h
  - name: local
    path: $E2E_TMP/local.txt
EOF
}
write_cfg

# ---- agent --check ------------------------------------------------------------

E2E_NAME=check_hides_the_password
t_begin
bg_capture agent --check --config "$CFG"
t_expect_eq "agent --check: exit" 0 "$BG_RC"
grep -qF "list remote (http://alice:***@127.0.0.1:$HTTP_PORT/list.txt): ok" <<<"$BG_OUT" ||
	t_fail "the URL not shown as http://alice:***@...: $BG_OUT"
grep -qF "$SECRET" <<<"$BG_OUT$BG_ERR" && t_fail "agent --check printed the password: $BG_OUT $BG_ERR"
t_end "$E2E_NAME"

E2E_NAME=check_state_dir_a_file
t_begin
: >"$E2E_TMP/a-file"
sed "s#^state_dir: .*#state_dir: $E2E_TMP/a-file#" "$CFG" >"$E2E_TMP/file-state.yaml"
bg_capture agent --check --config "$E2E_TMP/file-state.yaml"
t_expect_eq "agent --check with state_dir a file: exit" 2 "$BG_RC"
grep -qF "state_dir $E2E_TMP/a-file: not a directory" <<<"$BG_OUT$BG_ERR" ||
	t_fail "no reason: $BG_OUT $BG_ERR"
t_end "$E2E_NAME"

# `agent --check | head -1`: SIGPIPE used to kill it before it removed its
# scratch directory. Made in a TMPDIR of this test's own, so that another
# `agent --check` on the machine is not this test's to judge.
E2E_NAME=check_cut_by_a_pipe
t_begin
mkdir -p "$E2E_TMP/scratch"
line=$(TMPDIR=$E2E_TMP/scratch in_ns "$NS_GW" "$BG_BIN" agent --check --config "$CFG" 2>&1 | head -1)
grep -q "config valid" <<<"$line" || t_fail "first line: $line"
left=$(find "$E2E_TMP/scratch" -mindepth 1)
[ -z "$left" ] || t_fail "scratch left: $left"
t_end "$E2E_NAME"

# ---- one agent ----------------------------------------------------------------

E2E_NAME=agent_runs
t_begin
agent_start "$E2E_TMP/agent.log"
wait_until 20 matches "$X" || t_fail "the URL list's $X not enforced: $(tail -3 "$E2E_TMP/agent.log")"
wait_until 10 matches "$Y" || t_fail "the file list's $Y not enforced"
SOCK=/run/bloomgate/${BG_PIN//\//_}.sock
# 0660 for the group bloomgate when the machine has it (test_group.sh),
# else root only
if getent group bloomgate >/dev/null; then
	t_expect_eq "control socket mode and group" "660 bloomgate" "$(stat -c '%a %G' "$SOCK" 2>/dev/null)"
else
	t_expect_eq "control socket mode" 600 "$(stat -c %a "$SOCK" 2>/dev/null)"
fi
t_end "$E2E_NAME"

E2E_NAME=second_agent_refused
t_begin
spawn_in "$NS_GW" "$BG_BIN" agent --config "$CFG" 2>"$E2E_TMP/agent2.log"
second=$E2E_LAST_PID
wait_pid "$second" 10 || t_fail "a second agent on the same config kept running"
grep -qF "another agent (pid $AGENT_PID) runs on pin directory $BG_PIN" "$E2E_TMP/agent2.log" ||
	t_fail "no clear line: $(cat "$E2E_TMP/agent2.log")"
alive "$AGENT_PID" || t_fail "the first agent died"
status_has "agent: pid $AGENT_PID," || t_fail "the first agent no longer answers on its socket"
bg_capture reload
t_expect_eq "reload after the second agent: exit" 0 "$BG_RC"
t_end "$E2E_NAME"

# ---- the password -------------------------------------------------------------

E2E_NAME=password_never_shown_or_stored
t_begin
bg_capture status
grep -qF "list remote (http://alice:***@127.0.0.1:$HTTP_PORT/list.txt)" <<<"$BG_OUT" ||
	t_fail "status does not show the URL as http://alice:***@...: $BG_OUT"
bg_capture check "$X"
grep -qF "alice:***@" <<<"$BG_OUT" || t_fail "check does not name the URL: $BG_OUT"
all="$BG_OUT$BG_ERR$(bg status 2>&1)$(metrics_get)"
grep -qF "$SECRET" <<<"$all" && t_fail "the password printed: $(grep -F "$SECRET" <<<"$all" | head -2)"
# nothing the agent writes holds it: the store, its indexes, filter.json
stored=$(grep -rlF "$SECRET" "$E2E_TMP/state" 2>/dev/null)
[ -z "$stored" ] || t_fail "the password stored in: $stored"
agent_log_has "$SECRET" && t_fail "the password is in the agent's log"
t_end "$E2E_NAME"

# ---- a load over the agent's filter -------------------------------------------

E2E_NAME=load_refused_over_the_agent
t_begin
bg_capture load "$E2E_TMP/other.txt"
t_expect_eq "load while the agent runs: exit" 1 "$BG_RC"
grep -qF "the agent (pid $AGENT_PID) feeds this filter" <<<"$BG_ERR" && grep -qF -- "--force" <<<"$BG_ERR" ||
	t_fail "no reason naming --force: $BG_ERR"
no_match "$Z" || t_fail "$Z loaded anyway"
matches "$X" || t_fail "the agent's $X no longer enforced"
t_end "$E2E_NAME"

E2E_NAME=forced_load_noticed
t_begin
foreign_is 0 || t_fail "bloomgate_filter_foreign is not 0 before: $(metrics_get | grep foreign)"
bg_capture load --force "$E2E_TMP/other.txt"
t_expect_eq "load --force: exit" 0 "$BG_RC"
matches "$Z" || t_fail "$Z not loaded by load --force"
no_match "$X" || t_fail "the agent's $X still in the replaced filter"
status_has "is not the one it built" || t_fail "status does not say the filter was replaced: $(bg status 2>&1)"
foreign_is 1 || t_fail "bloomgate_filter_foreign is not 1: $(metrics_get | grep foreign)"
bg_capture reload
t_expect_eq "reload after a forced load: exit" 0 "$BG_RC"
matches "$X" || t_fail "the reload did not bring the agent's filter back ($BG_OUT)"
no_match "$Z" || t_fail "$Z still enforced after the reload"
foreign_is 0 || t_fail "bloomgate_filter_foreign is not 0 after the reload"
status_has "is not the one it built" && t_fail "status still says the filter was replaced"
t_end "$E2E_NAME"

# ---- a reload of an invalid config ---------------------------------------------

E2E_NAME=reload_invalid_config_fails
t_begin
write_cfg "fpx: 0.01"
bad_line=$(grep -n '^fpx:' "$CFG" | cut -d: -f1)
bg_capture reload
[ "$BG_RC" -ne 0 ] || t_fail "reload of an invalid config exited 0: $BG_OUT"
grep -qF "$CFG:$bad_line: " <<<"$BG_ERR" || t_fail "no file:line on stderr: '$BG_ERR'"
alive "$AGENT_PID" || t_fail "the agent died"
matches "$X" || t_fail "the filter changed"
write_cfg
bg_capture reload
t_expect_eq "reload once the config is valid again: exit" 0 "$BG_RC"
t_end "$E2E_NAME"

# ---- a stopped agent ---------------------------------------------------------

E2E_NAME=status_gives_up_on_a_stopped_agent
t_begin
kill -STOP "$AGENT_PID"
t0=$SECONDS
out=$(timeout 60 nsenter --net="/run/netns/$NS_GW" "$BG_BIN" status 2>&1)
rc=$?
took=$((SECONDS - t0))
kill -CONT "$AGENT_PID"
[ "$rc" -ne 124 ] || t_fail "status hung on a stopped agent (killed by timeout after 60 s)"
grep -q "agent: running, but it did not answer within" <<<"$out" || t_fail "status said: $out"
((took < 30)) || t_fail "status took $took s"
matches "$X" || t_fail "the filter changed while the agent was stopped"
status_has "agent: pid $AGENT_PID," || t_fail "the agent does not answer once continued"
t_end "$E2E_NAME"

# ---- a clean stop leaves no lock file -------------------------------------------

E2E_NAME=clean_stop_removes_the_lock_files
t_begin
LOCK_RUN=/run/bloomgate/${BG_PIN//\//_}.agent.lock
[ -e "$LOCK_RUN" ] || t_fail "no lock file $LOCK_RUN while the agent runs"
[ -e "$E2E_TMP/state/agent.lock" ] || t_fail "no lock file in the state directory while the agent runs"
kill -TERM "$AGENT_PID" 2>/dev/null
wait_pid "$AGENT_PID" 10 || t_fail "the agent did not stop on SIGTERM"
[ -e "$LOCK_RUN" ] && t_fail "$LOCK_RUN stayed after a clean stop"
[ -e "$E2E_TMP/state/agent.lock" ] && t_fail "$E2E_TMP/state/agent.lock stayed after a clean stop"
t_end "$E2E_NAME"

# ---- a restart finds an index cut short ----------------------------------------

# An index left truncated (a kill, a full disk, a hand) is found at the
# start, dropped and written again from the copy, the live filter adopted
# meanwhile: check names the line again without a rebuild.
E2E_NAME=restart_reindexes_a_bad_index
t_begin
kill -TERM "$AGENT_PID" 2>/dev/null
wait_pid "$AGENT_PID" 10 || t_fail "the agent did not stop on SIGTERM"
idx=$E2E_TMP/state/index/local.idx
[ -f "$idx" ] || t_fail "no index $idx"
truncate -s -100 "$idx"
agent_start "$E2E_TMP/agent3.log"
wait_until 20 grep -q "adopted" "$E2E_TMP/agent3.log" ||
	t_fail "the restarted agent did not adopt the filter: $(tail -3 "$E2E_TMP/agent3.log")"
grep -q "source local: provenance .*: indexing it again" "$E2E_TMP/agent3.log" ||
	t_fail "the truncated index not found at the start: $(grep -i provenance "$E2E_TMP/agent3.log")"
want="$Y: match (confirmed; listed by $Y at local ($E2E_TMP/local.txt):1)"
wait_until 20 eval '[ "$(bg check "$Y" 2>&1)" = "$want" ]' ||
	t_fail "check after the restart: $(bg check "$Y" 2>&1)"
grep -q "filter [0-9]* live" "$E2E_TMP/agent3.log" && t_fail "the restart rebuilt instead of adopting"
t_end "$E2E_NAME"

kill -TERM "$AGENT_PID" 2>/dev/null
wait_pid "$AGENT_PID" 10 || info "the agent did not stop on SIGTERM"

# ---- a store that cannot be read ----------------------------------------------

# The agent stopped, its filter live (fail-static). A store whose first
# page is garbage was once reported by check as "out of memory": it is
# said as what it is, and the entries are named from the lists' copies.
E2E_NAME=check_with_a_corrupt_store
t_begin
# (its write-ahead log gone too: SQLite would read the pages it holds
# instead of the file's)
rm -f "$E2E_TMP/state/bloomgate.db-wal" "$E2E_TMP/state/bloomgate.db-shm"
printf 'not a database at all, not at all, not at all, not at all\n' |
	dd of="$E2E_TMP/state/bloomgate.db" bs=1 seek=0 conv=notrunc status=none
bg_capture check "$Y"
t_expect_eq "check with a corrupt store: exit" 0 "$BG_RC"
grep -qF "the agent's store in $E2E_TMP/state cannot be read (not a database, or a corrupt one)" <<<"$BG_ERR" ||
	t_fail "no reason on stderr: '$BG_ERR'"
grep -q "^$Y: match (confirmed; listed by $Y at .*local.list:1)" <<<"$BG_OUT" ||
	t_fail "check did not name the entry from the copy: '$BG_OUT'"
grep -qi "out of memory" <<<"$BG_OUT$BG_ERR" && t_fail "check says out of memory"
t_end "$E2E_NAME"

# ---- detached under the agent: its failed rebuild says none runs ---------------------

# An agent started again (the store it cannot read set aside), its filter
# live; then `detach --all` under it, and a change of a list.
E2E_NAME=detached_rebuild_says_none_runs
t_begin
rm -f "$E2E_TMP/state/bloomgate.db" "$E2E_TMP/state/bloomgate.db-wal" "$E2E_TMP/state/bloomgate.db-shm"
LOG4=$E2E_TMP/agent4.log
agent_start "$LOG4"
wait_until 20 grep -q "adopted\|filter [0-9]* live" "$LOG4" ||
	t_fail "the agent started again has no filter: $(tail -n 3 "$LOG4")"
matches "$Y" || t_fail "$Y not enforced before the detach"
since_detach() { tail -n +"$from" "$LOG4"; }
from=$(($(wc -l <"$LOG4") + 1))
bg_capture detach --all
t_expect_eq "detach --all: exit" 0 "$BG_RC"
printf '%s\n' "$Y" 198.51.100.32 >"$E2E_TMP/local.txt" # a change: a rebuild
wait_until 10 eval 'since_detach | grep -q "rebuild failed.*; no filter runs (nothing is attached)$"' ||
	t_fail "the failed rebuild after detach --all: $(since_detach | grep -i 'rebuild\|fail' | tail -n 3)"
since_detach | grep -q "running filter is unchanged" &&
	t_fail "a line says a filter runs: $(since_detach | grep 'running filter is unchanged' | head -n 1)"
kill -TERM "$AGENT_PID" 2>/dev/null
wait_pid "$AGENT_PID" 10 || t_fail "the agent did not stop on SIGTERM"
t_end "$E2E_NAME"
[ "$E2E_FAILED" -eq 0 ]
