#!/bin/bash
# End-to-end: read-only access for the group bloomgate, through the agent's
# control socket. An agent runs (as root, the e2e way) with a list; a user
# in the group (bgtest) runs `status`, `stats`, `check` and `events` with
# no capability at all and gets what root gets; its `reload` is refused by
# the agent, and the filter's generation does not move; with the socket
# made 0666 for a moment, a user outside the group (bgother) can connect
# and is still refused a reload: the peer's credentials (SO_PEERCRED)
# refuse it, not the socket's mode; with 0660 back, bgother gets a clear
# permission error. The group and both users are made here when absent and
# removed on every way out. Prints "ok NAME" / "not ok NAME" per case.
#   bash tests/e2e/test_group.sh
set -u
export BLOOMGATE_PIN_DIR=${BLOOMGATE_PIN_DIR:-/sys/fs/bpf/bggroup}
NS_C=bgrc NS_GW=bgrgw NS_S=bgrs
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

ATTACH_MODE=native
METRICS_PORT=9574
GROUP=bloomgate
TUSER=bgtest OUSER=bgother
X=198.51.100.40 # listed
U=198.51.100.41 # not listed (checked: a Bloom filter may say otherwise)
SOCK=/run/bloomgate/${BG_PIN//\//_}.sock

# ---- users and group: made here, removed on every way out ---------------------

MADE_GROUP=0 MADE_USERS=()
group_cleanup() {
	local u
	for u in "${MADE_USERS[@]}"; do
		userdel "$u" 2>/dev/null
	done
	MADE_USERS=()
	if ((MADE_GROUP)); then
		groupdel "$GROUP" 2>/dev/null
		MADE_GROUP=0
	fi
	rm -rf "$BIN_DIR"
}
BIN_DIR=

# bloomgate as USER: no capability in any set, its own groups only, in
# the gateway's network namespace. Output in AS_OUT, AS_ERR, AS_RC.
as_user() { # USER ARGS...
	local u=$1
	shift
	AS_OUT=$(in_ns "$NS_GW" setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups \
		--inh-caps=-all --bounding-set=-all -- "$BG" "$@" 2>"$E2E_TMP/as.err")
	AS_RC=$?
	AS_ERR=$(cat "$E2E_TMP/as.err")
}
generation() { bg status 2>/dev/null | sed -n 's/^agent: pid .*filter generation \([0-9]*\)$/\1/p'; }
matches() { [ "$(bg_check "$1")" = match ]; }
agent_log_has() { grep -qF -- "$1" "$E2E_TMP/agent.log"; }
# status without its times (uptime, "N s ago", next fetch)
untimed() { sed -E 's/up [0-9]+ s/up N s/; s/[0-9]+ s ago/N s ago/; s/in [0-9]+ s/in N s/'; }

require_cmds setpriv useradd userdel groupadd groupdel getent
e2e_init
# the users' processes first (e2e_cleanup), then the users
trap 'e2e_cleanup; group_cleanup' EXIT
trap 'e2e_cleanup; group_cleanup; exit 130' INT
trap 'e2e_cleanup; group_cleanup; exit 143' TERM

E2E_NAME=setup_users
t_begin
if ! getent group "$GROUP" >/dev/null; then
	groupadd -r "$GROUP" || die "cannot create group $GROUP"
	MADE_GROUP=1
fi
for u in "$TUSER" "$OUSER"; do
	id "$u" >/dev/null 2>&1 && die "user $u exists already (not ours): remove it first"
done
useradd -r -M -N -s /usr/sbin/nologin -G "$GROUP" "$TUSER" || die "cannot create $TUSER"
MADE_USERS+=("$TUSER")
useradd -r -M -N -s /usr/sbin/nologin "$OUSER" || die "cannot create $OUSER"
MADE_USERS+=("$OUSER")
# The binary where both users can run it, whatever the modes of the
# clone's directories.
BIN_DIR=$(mktemp -d /tmp/bloomgate-group.XXXXXX)
cp "$BG_BIN" "$BIN_DIR/bloomgate"
chmod 0755 "$BIN_DIR" "$BIN_DIR/bloomgate"
BG=$BIN_DIR/bloomgate
t_end "$E2E_NAME"

# ---- the agent ------------------------------------------------------------------

printf '%s\n' "$X" >"$E2E_TMP/list.txt"
mkdir -p "$E2E_TMP/state"
CFG=$E2E_TMP/bloomgate.yaml
cat >"$CFG" <<EOF
interfaces:
  - name: $IF_GWC
    mode: $ATTACH_MODE
    action: flag
state_dir: $E2E_TMP/state
metrics: 127.0.0.1:$METRICS_PORT
debounce: 100ms
lists:
  - name: local
    path: $E2E_TMP/list.txt
EOF

E2E_NAME=socket_group_mode
t_begin
spawn_in "$NS_GW" "$BG_BIN" agent --config "$CFG" 2>>"$E2E_TMP/agent.log"
AGENT_PID=$E2E_LAST_PID
wait_until 20 matches "$X" || die "the agent did not enforce $X: $(tail -3 "$E2E_TMP/agent.log")"
t_expect_eq "control socket mode and group" "660 $GROUP" "$(stat -c '%a %G' "$SOCK" 2>/dev/null)"
dmode=$(stat -c %a "$(dirname "$SOCK")")
((8#$dmode & 1)) || t_fail "$(dirname "$SOCK") is mode $dmode: the group cannot reach the socket"
mapfile -t UNLISTED < <(pick_unmatched 1 "$U" 198.51.100.42 198.51.100.43)
U=${UNLISTED[0]:-$U}
t_end "$E2E_NAME"

# ---- what a member reads --------------------------------------------------------

E2E_NAME=member_status
t_begin
as_user "$TUSER" status
t_expect_eq "status as $TUSER: exit" 0 "$AS_RC"
root_status=$(bg status 2>&1)
[ "$(untimed <<<"$AS_OUT")" = "$(untimed <<<"$root_status")" ] ||
	t_fail "status as $TUSER differs from root's: $(diff <(untimed <<<"$root_status") <(untimed <<<"$AS_OUT") | head -6)"
grep -q "^attached: $IF_GWC " <<<"$AS_OUT" || t_fail "no attachment shown: $AS_OUT"
grep -q "^agent: pid $AGENT_PID," <<<"$AS_OUT" || t_fail "no agent line: $AS_OUT"
t_end "$E2E_NAME"

E2E_NAME=member_stats_match_root
t_begin
# traffic to the listed address (flagged: passed, counted) and another
traffic st 20 2000 "$X" "$U" || t_fail "traffic did not run"
as_user "$TUSER" stats --json
t_expect_eq "stats --json as $TUSER: exit" 0 "$AS_RC"
root_json=$(bg stats --json)
t_expect_eq "stats --json as $TUSER vs root" "$root_json" "$AS_OUT"
flagged=$(jq -r .flagged <<<"$AS_OUT")
[ "${flagged:-0}" -ge 20 ] 2>/dev/null || t_fail "flagged is '$flagged', expected >= 20 after 20 datagrams to $X"
as_user "$TUSER" stats
t_expect_eq "stats as $TUSER vs root" "$(bg stats)" "$AS_OUT"
as_user "$TUSER" stats --watch --interval 0.2 --count 2
t_expect_eq "stats --watch as $TUSER: exit" 0 "$AS_RC"
t_expect_eq "stats --watch as $TUSER: lines" 3 "$(wc -l <<<"$AS_OUT")"
t_end "$E2E_NAME"

E2E_NAME=member_check
t_begin
as_user "$TUSER" check "$X"
t_expect_eq "check $X as $TUSER: exit" 0 "$AS_RC"
grep -q "^$X: match (.*listed by $X at $E2E_TMP/state/lists/local.list:1" <<<"$AS_OUT" ||
	grep -q "^$X: match (.*listed by .*local" <<<"$AS_OUT" || t_fail "check $X: $AS_OUT $AS_ERR"
t_expect_eq "check $X as $TUSER vs root" "$(bg check "$X" 2>&1)" "$AS_OUT"
as_user "$TUSER" check "$U"
t_expect_eq "check $U as $TUSER" "$U: no match" "$AS_OUT"
as_user "$TUSER" check "not a name!"
t_expect_eq "check of a bad argument as $TUSER: exit" 2 "$AS_RC"
t_end "$E2E_NAME"

E2E_NAME=member_events
t_begin
: >"$E2E_TMP/events.out"
in_ns "$NS_GW" setpriv --reuid="$TUSER" --regid="$(id -g "$TUSER")" --init-groups \
	--inh-caps=-all --bounding-set=-all -- "$BG" events --count 1 --timeout 20 \
	>"$E2E_TMP/events.out" 2>"$E2E_TMP/events.err" &
ev_pid=$!
E2E_PIDS+=("$ev_pid")
wait_until 10 agent_log_has "events: followed on the control socket (peer uid $(id -u "$TUSER")" ||
	t_fail "the agent does not say $TUSER follows the events: $(tail -3 "$E2E_TMP/agent.log")"
traffic ev 3 100 "$X" || t_fail "traffic did not run"
wait_pid "$ev_pid" 20 || t_fail "events --count 1 as $TUSER did not end"
grep -q "^flag dst $X on $IF_GWC$" "$E2E_TMP/events.out" ||
	t_fail "events as $TUSER: $(cat "$E2E_TMP/events.out" "$E2E_TMP/events.err")"
t_end "$E2E_NAME"

# ---- writes: root only, by the peer's credentials ------------------------------

E2E_NAME=member_reload_refused
t_begin
gen0=$(generation)
as_user "$TUSER" reload
t_expect_eq "reload as $TUSER: exit" 1 "$AS_RC"
t_expect_eq "reload as $TUSER: the agent's answer" \
	"bloomgate: reload: reload needs root (peer uid $(id -u "$TUSER"))" "$AS_ERR"
agent_log_has "reload refused on the control socket: needs root (peer uid $(id -u "$TUSER")" ||
	t_fail "the refusal is not in the agent's log"
t_expect_eq "generation after the refused reload" "$gen0" "$(generation)"
t_end "$E2E_NAME"

# The socket opened to everyone for a moment: bgother, in no group, can
# connect, reads, and is still refused the write: the credentials decide.
E2E_NAME=peercred_not_mode_refuses
t_begin
chmod 0666 "$SOCK"
as_user "$OUSER" reload
t_expect_eq "reload as $OUSER through a 0666 socket: exit" 1 "$AS_RC"
t_expect_eq "reload as $OUSER through a 0666 socket" \
	"bloomgate: reload: reload needs root (peer uid $(id -u "$OUSER"))" "$AS_ERR"
as_user "$OUSER" stats --json
t_expect_eq "stats as $OUSER through a 0666 socket: exit" 0 "$AS_RC"
chmod 0660 "$SOCK"
t_expect_eq "generation after the refused reloads" "$gen0" "$(generation)"
# root's reload is answered: the refusals were about who asked
bg_capture reload
t_expect_eq "reload as root: exit" 0 "$BG_RC"
t_end "$E2E_NAME"

E2E_NAME=other_user_refused
t_begin
as_user "$OUSER" status
t_expect_eq "status as $OUSER: exit" 1 "$AS_RC"
grep -qF "refuses this user: not in group $GROUP" <<<"$AS_ERR" ||
	t_fail "status as $OUSER: no clear permission error: $AS_ERR"
t_expect_eq "status as $OUSER: stdout" "" "$AS_OUT"
t_end "$E2E_NAME"

# ---- a member that never reads: bounded, cut off, root still answered ---------

TUID=$(id -u "$TUSER")
SCALE=${E2E_TIME_SCALE:-1}
# A sample of the agent's /metrics.
metric() { # NAME{LABELS}
	in_ns "$NS_GW" bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$METRICS_PORT"' &&
		printf "GET /metrics HTTP/1.0\r\n\r\n" >&3 && cat <&3' 2>/dev/null |
		awk -v n="$1" '$1 == n { print $2 }'
}
kib() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status"; } # PID FIELD
# ctlhold as the member: N connections asking CMD, never read, until stopped.
hold_start() { # TAG N CMD
	# spawn_in: its pid is ctlhold's own (nsenter and setpriv exec)
	spawn_in "$NS_GW" setpriv --reuid="$TUSER" --regid="$(id -g "$TUSER")" --init-groups \
		--inh-caps=-all --bounding-set=-all -- "$BIN_DIR/ctlhold" -n "$2" -c "$3" \
		-t $((120 * SCALE)) "$SOCK" >"$E2E_TMP/$1.out" 2>&1
	HOLD_PID=$E2E_LAST_PID
	wait_until 30 grep -qsx ready "$E2E_TMP/$1.out"
}
hold_stop() { # TAG
	kill "$HOLD_PID" 2>/dev/null
	wait_pid "$HOLD_PID" 10
}
held() { sed -n "s/^$2 //p" "$E2E_TMP/$1.out"; } # TAG held|closed

E2E_NAME=member_connections_bounded
t_begin
cp "$E2E_ROOT/build/tests/ctlhold" "$BIN_DIR/ctlhold" && chmod 0755 "$BIN_DIR/ctlhold"
# 100 connections that send nothing: one user holds 64 at most
hold_start conns 100 "" || t_fail "ctlhold did not get ready: $(cat "$E2E_TMP/conns.out")"
n=$(grep -c "^refused too many connections from uid $TUID: 64 at once (one user's bound)$" "$E2E_TMP/conns.out")
[ "$n" -ge 1 ] || t_fail "no connection refused at the bound: $(grep -v '^refused unknown' "$E2E_TMP/conns.out" | head -3)"
t_expect_eq "refused connections in the metrics" "$n" "$(metric 'bloomgate_control_refused_total{reason="connections"}')"
# root is not bounded: its status answers meanwhile
bg_capture status
t_expect_eq "root's status with the member's connections held: exit" 0 "$BG_RC"
hold_stop conns
agent_log_has "control socket: refused a connection (peer uid $TUID" || t_fail "the refusal is not in the log"
t_end "$E2E_NAME"

E2E_NAME=member_followers_bounded
t_begin
rss0=$(kib "$AGENT_PID" VmHWM)
hold_start fol 200 events || t_fail "ctlhold did not get ready: $(tail -3 "$E2E_TMP/fol.out")"
t_expect_eq "followers held of 200 asked" 16 "$(held fol held)"
nf=$(grep -c "^refused too many followers of the events for uid $TUID: 16 at once (one user's bound)$" "$E2E_TMP/fol.out")
nc=$(grep -c "^refused too many connections from uid $TUID: 64 at once" "$E2E_TMP/fol.out")
t_expect_eq "followers refused with a reason" 184 $((nf + nc))
t_expect_eq "followers in the metrics" 16 "$(metric bloomgate_control_followers)"
t_expect_eq "refused followers in the metrics" "$nf" "$(metric 'bloomgate_control_refused_total{reason="followers"}')"
t_end "$E2E_NAME"

# The 16 followers never read: a flood of flagged packets fills their
# sockets, then overruns their windows of the agent's queue; each is cut
# off, counted and logged, while root's status is answered and the agent's
# memory stays put.
E2E_NAME=flood_nonreading_followers_cut
t_begin
"$E2E_ROOT/build/tests/ctlping" -i 20 -t $((120 * SCALE)) -s "$E2E_TMP/ping.stop" "$SOCK" \
	>"$E2E_TMP/ping.out" &
PING_PID=$!
E2E_PIDS+=("$PING_PID")
sink_start flood || t_fail "no sink"
send_start flood --pps 50000 "$X"
wait_until 60 eval '[ "$(metric bloomgate_control_followers_cut_total)" = 16 ]' ||
	t_fail "followers cut off: $(metric bloomgate_control_followers_cut_total) of 16 after 60 s"
# a member that reads follows the flood meanwhile (the cut ones freed their places)
as_user "$TUSER" events --count 200 --timeout $((20 * SCALE))
t_expect_eq "events --count 200 as $TUSER during the flood: exit" 0 "$AS_RC"
t_expect_eq "events as $TUSER during the flood: lines" 200 "$(grep -c "^flag dst $X on $IF_GWC$" <<<"$AS_OUT")"
rss1=$(kib "$AGENT_PID" VmHWM)
send_stop flood
sink_finish flood
touch "$E2E_TMP/ping.stop"
wait_pid "$PING_PID" 10
hold_stop fol
info "flood: $(sent_total flood) datagrams; agent peak RSS $((rss0 / 1024)) -> $((rss1 / 1024)) MiB"
t_expect_eq "held followers the agent closed" 16 "$(held fol closed)"
unsent=$(metric bloomgate_control_events_unsent_total)
[ "${unsent:-0}" -gt 0 ] || t_fail "no event counted as not sent: '$unsent'"
n=$(grep -c "events: a follower (peer uid $TUID, pid [0-9]*) cut off after losing [0-9]* events" "$E2E_TMP/agent.log")
t_expect_eq "followers cut off, in the log" 16 "$n"
bg status | grep -q "^agent: events followed by 0; $unsent events not sent to followers too slow for them, 16 followers cut off; refused at a bound: " ||
	t_fail "status does not say so: $(bg status | grep '^agent: events')"
# memory: the followers' backlog is one queue, whatever their number
((rss1 - rss0 < 32768)) || t_fail "the agent's peak RSS grew by $(((rss1 - rss0) / 1024)) MiB with 16 followers not reading"
read -r _ pn _ pmax _ pp99 _ < <(grep '^samples ' "$E2E_TMP/ping.out")
info "root status during the flood: ${pn:-0} answers, p99 ${pp99:-?} ms, max ${pmax:-?} ms"
[ "${pn:-0}" -ge 20 ] || t_fail "root's status answered ${pn:-0} times during the flood"
t_expect_eq "root's status asks that failed" 0 "$(grep -c '^error' "$E2E_TMP/ping.out")"
awk -v m="${pmax:-99999}" -v b=$((5000 * SCALE)) 'BEGIN { exit !(m < b) }' ||
	t_fail "root's status took ${pmax:-?} ms at worst during the flood"
t_end "$E2E_NAME"

info "$E2E_PASSED passed, $E2E_FAILED failed"
[ "$E2E_FAILED" -eq 0 ]
