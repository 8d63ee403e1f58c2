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
trap 'group_cleanup; e2e_cleanup' EXIT
trap 'group_cleanup; e2e_cleanup; exit 130' INT
trap 'group_cleanup; e2e_cleanup; exit 143' TERM

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

info "$E2E_PASSED passed, $E2E_FAILED failed"
[ "$E2E_FAILED" -eq 0 ]
