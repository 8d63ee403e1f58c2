#!/bin/bash
# End-to-end: the capabilities bloomgate needs, measured. Every command runs
# as uid 0 but with the capability set of etc/bloomgate-agent.service
# (CapabilityBoundingSet=, read from the unit so the test and the unit
# cannot drift), through setpriv, with RLIMIT_MEMLOCK 0 and never
# CAP_SYS_RESOURCE. Checks that the unit's set is enough for everything the
# unit runs (attach, load, stats, status, the agent, reload), that dropping
# any one capability of it breaks an operation (the expected error), and
# what needs CAP_SYS_ADMIN beyond it (check, mounting bpffs).
# docs/DESIGN-NOTES.md, "Capabilities", has the table. Prints one
# "ok NAME" / "not ok NAME" line per check; exits non-zero when one failed.
#   bash tests/e2e/test_caps.sh
set -u
# A pin dir of our own: lib.sh takes it from here (BG_PIN) and removes it.
export BLOOMGATE_PIN_DIR=${BLOOMGATE_PIN_DIR:-/sys/fs/bpf/bgcaps}
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

UNIT_FILE=$E2E_ROOT/etc/bloomgate-agent.service
IFC=$IF_GWC
METRICS_PORT=9572
X=198.51.100.10 Y=198.51.100.20

# ---- helpers -------------------------------------------------------------------

# "CAP_BPF CAP_NET_ADMIN" -> "bpf net_admin" (setpriv's names).
cap_names() { tr '[:upper:]' '[:lower:]' <<<"$*" | sed 's/\bcap_//g'; }
# A setpriv capability list: -all then +each of CAP... ("-all" for none).
cap_list() {
	local c l=-all
	for c in "$@"; do l+=",+$c"; done
	echo "$l"
}
# The unit's set without one capability.
unit_without() { # CAP
	local c out=()
	for c in "${UNIT_CAPS[@]}"; do
		[ "$c" = "$1" ] || out+=("$c")
	done
	echo "${out[@]}"
}

# Runs CMD in the gateway's network namespace as root holding exactly the
# capabilities of CAPLIST (setpriv syntax) in every set: for uid 0 the
# bounding set is what counts (exec gives root its bounding set as
# permitted), the inheritable and ambient sets as systemd's
# AmbientCapabilities would. RLIMIT_MEMLOCK 0: BPF memory is charged to
# the memory cgroup on 6.x, so no limit is needed.
with_caps() { # CAPLIST CMD...
	local c=$1
	shift
	nsenter --net="/run/netns/$NS_GW" prlimit --memlock=0:0 -- \
		setpriv --inh-caps="$c" --ambient-caps="$c" --bounding-set="$c" -- "$@"
}
# bloomgate with CAPLIST: stdout in CAP_OUT, stderr in CAP_ERR, status CAP_RC.
bg_caps() { # CAPLIST ARGS...
	local c=$1
	shift
	CAP_OUT=$(with_caps "$c" "$BG_BIN" "$@" 2>"$E2E_TMP/caps.err")
	CAP_RC=$?
	CAP_ERR=$(cat "$E2E_TMP/caps.err")
}
# Expects bloomgate ARGS to succeed with CAPLIST.
expect_ok() { # WHAT CAPLIST ARGS...
	local what=$1
	shift
	bg_caps "$@"
	[ "$CAP_RC" -eq 0 ] || t_fail "$what with $1: exit $CAP_RC: $CAP_ERR"
}
# Expects bloomgate ARGS to fail with CAPLIST, its message naming ERRNO.
expect_fail() { # WHAT ERRNO-TEXT CAPLIST ARGS...
	local what=$1 errtext=$2
	shift 2
	bg_caps "$@"
	if [ "$CAP_RC" -eq 0 ]; then
		t_fail "$what with $1 succeeded: $CAP_OUT"
	elif ! grep -qF -- "$errtext" <<<"$CAP_ERR"; then
		t_fail "$what with $1: exit $CAP_RC but not '$errtext': $CAP_ERR"
	fi
}

matches() { [ "$(bg_check "$1")" = match ]; }
attached() { [ -n "$(xdp_prog_id "$IFC")" ]; }
# Whatever a failed or half-done detach left: the program, the pins.
reset_gw() {
	bg detach --all >/dev/null 2>&1
	ip -n "$NS_GW" link set dev "$IFC" xdp off 2>/dev/null
	_cleanup_pins
}

# The unit's SupplementaryGroups= (group bloomgate: the control socket
# is given to it), as systemd sets them: root's groups, then these.
unit_groups() {
	local g out=() gid
	for g in $(sed -n 's/^SupplementaryGroups=//p' "$UNIT_FILE"); do
		gid=$(getent group "$g" | cut -d: -f3) && out+=("$gid")
	done
	local IFS=,
	echo "${out[*]}"
}
agent_start() { # CAPLIST [GROUPS: setpriv --groups, "" for none]
	local groups=${2-$(unit_groups)}
	spawn_in "$NS_GW" prlimit --memlock=0:0 -- setpriv ${groups:+--groups="$groups"} \
		--inh-caps="$1" --ambient-caps="$1" --bounding-set="$1" -- \
		"$BG_BIN" agent --config "$CFG" 2>>"$E2E_TMP/agent.log"
	AGENT_PID=$E2E_LAST_PID
}
agent_stop() { # -> exit status in AGENT_RC (bounded: killed after 10 s)
	kill -TERM "$AGENT_PID" 2>/dev/null
	if wait_pid "$AGENT_PID" 10; then
		wait "$AGENT_PID" 2>/dev/null
		AGENT_RC=$?
	else
		AGENT_RC=timeout
	fi
}
agent_log_has() { grep -qF -- "$1" "$E2E_TMP/agent.log"; }
metrics_get() {
	in_ns "$NS_GW" bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$METRICS_PORT"' &&
		printf "GET /metrics HTTP/1.0\r\n\r\n" >&3 && cat <&3' | sed '1,/^\r$/d'
}

MADE_GROUP=0
caps_cleanup() {
	# The record of our loads and the agent's socket, named after the pin
	# dir (lib.sh removes the pins themselves).
	local r=/run/bloomgate/${BG_PIN//\//_}
	rm -rf "$r.lists" "$r.records" "$r.sock"
	# the group, when this test made it
	((MADE_GROUP)) && groupdel bloomgate 2>/dev/null
	MADE_GROUP=0
}

# ---- setup ---------------------------------------------------------------------

require_cmds setpriv prlimit unshare groupadd groupdel getent
e2e_init
trap 'caps_cleanup; e2e_cleanup' EXIT
trap 'caps_cleanup; e2e_cleanup; exit 130' INT
trap 'caps_cleanup; e2e_cleanup; exit 143' TERM
mkdir -p "$E2E_TMP/state"
printf '%s\n' "$X" >"$E2E_TMP/list.txt"

# ---- 1. the unit's capabilities ---------------------------------------------------

E2E_NAME=unit_capabilities
t_begin
read -ra UNIT_CAPS <<<"$(cap_names "$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT_FILE")")"
AMBIENT=$(cap_names "$(sed -n 's/^AmbientCapabilities=//p' "$UNIT_FILE")")
((${#UNIT_CAPS[@]})) || t_fail "no CapabilityBoundingSet= in $UNIT_FILE"
[ "$AMBIENT" = "${UNIT_CAPS[*]}" ] ||
	t_fail "AmbientCapabilities ($AMBIENT) differs from CapabilityBoundingSet (${UNIT_CAPS[*]})"
# The unit's set in setpriv's syntax, for every case below.
UNIT=$(cap_list "${UNIT_CAPS[@]}")
info "the unit's set: ${UNIT_CAPS[*]} (setpriv $UNIT)"
# The machine may lack some capability (a container): setpriv then fails
# for every case below, which is no measurement. Say so once, here.
with_caps "$UNIT" true 2>"$E2E_TMP/caps.err" ||
	t_fail "cannot run with the unit's set: $(cat "$E2E_TMP/caps.err")"
t_end "$E2E_NAME"
# Nothing below means anything without the set.
((${#T_WHY[@]})) && exit 1

# ---- 2. the CLI with exactly the unit's set ------------------------------------

E2E_NAME=unit_set_attach_load_stats_status
t_begin
expect_ok attach "$UNIT" attach "$IFC" --mode native
attached || t_fail "no XDP program on $IFC after attach"
expect_ok load "$UNIT" load "$E2E_TMP/list.txt"
matches "$X" || t_fail "$X not matched after load (checked as full root)"
expect_ok "stats --json" "$UNIT" stats --json
jq -e '.packets >= 0' <<<"$CAP_OUT" >/dev/null || t_fail "stats --json: no packets counter: $CAP_OUT"
expect_ok status "$UNIT" status
grep -q "^attached: $IFC " <<<"$CAP_OUT" || t_fail "status does not show $IFC: $CAP_OUT"
t_end "$E2E_NAME"

# ---- 3. what needs CAP_SYS_ADMIN beyond the unit's set --------------------------

# check maps the live filter. Finding it by its id in the ARRAY_OF_MAPS
# (BPF_MAP_GET_FD_BY_ID) is CAP_SYS_ADMIN only; every load pins the map it
# publishes as bg_filter, which CAP_BPF opens: check works with the unit's
# set (and so the agent answers check for the group bloomgate under it).
# Without the pin (a filter published before it existed) it needs
# CAP_SYS_ADMIN again: the pin is what makes the difference.
E2E_NAME=check_with_the_units_set
t_begin
expect_ok check "$UNIT" check "$X"
grep -q "^$X: match" <<<"$CAP_OUT" || t_fail "check with the unit's set: $CAP_OUT"
rm -f "$BG_PIN/bg_filter"
[ -e "$BG_PIN/bg_filter" ] && t_fail "bg_filter still pinned"
expect_fail check "Operation not permitted" "$UNIT" check "$X"
expect_ok check "$UNIT,+sys_admin" check "$X"
grep -q "^$X: match" <<<"$CAP_OUT" || t_fail "check with +sys_admin: $CAP_OUT"
t_end "$E2E_NAME"

# detach: libxdp finds the attached program by id
# (xdp_multiprog__get_from_ifindex: BPF_PROG_GET_FD_BY_ID, CAP_SYS_ADMIN);
# without that capability bloomgate falls back to the kernel's XDP query and
# detach (CAP_NET_ADMIN), for its own program only. It used to report
# success and leave the program attached.
E2E_NAME=detach_with_the_units_set
t_begin
expect_ok detach "$UNIT" detach "$IFC"
attached && t_fail "program still on $IFC after detach with the unit's set (exit $CAP_RC)"
[ -e "$BG_PIN" ] && t_fail "$BG_PIN left after the last detach"
reset_gw
t_end "$E2E_NAME"

# A command that reads never mounts bpffs: a new mount is an empty bpffs,
# where nothing pinned can be found (`ip netns exec` gives a command a
# mount namespace without the machine's). Without bpffs on /sys/fs/bpf it
# says so, whatever its capabilities: no mount(2), so no CAP_SYS_ADMIN
# needed and no "not attached". Only attach and the agent mount one, on a
# system that has none (under systemd PID 1 has mounted it at boot, so the
# unit does not need CAP_SYS_ADMIN for it), and not in a network namespace
# of /run/netns (tests/e2e/test_mountns.sh). Measured in a private mount
# namespace, so the machine's /sys/fs/bpf is never touched.
E2E_NAME=bpffs_never_mounted_by_readers
t_begin
mnt_status() { # CAPLIST: bloomgate status with /sys/fs/bpf unmounted
	# shellcheck disable=SC2016 # expanded by the inner bash
	in_ns "$NS_GW" unshare --mount --propagation private bash -c '
		umount /sys/fs/bpf || exit 99
		prlimit --memlock=0:0 -- setpriv --inh-caps="$1" --ambient-caps="$1" \
			--bounding-set="$1" -- "$2" status
		rc=$?
		grep -q "^bpf /sys/fs/bpf " /proc/mounts && echo "bpffs mounted by status"
		exit $rc' _ "$1" "$BG_BIN" >"$E2E_TMP/mnt.out" 2>&1
}
for caps in "$UNIT" "$UNIT,+sys_admin"; do
	mnt_status "$caps"
	rc=$?
	[ "$rc" -eq 99 ] && t_fail "cannot unmount /sys/fs/bpf in a private mount namespace"
	t_expect_eq "status without bpffs ($caps): exit" 1 "$rc"
	grep -qF "no bpffs on /sys/fs/bpf in this mount namespace" "$E2E_TMP/mnt.out" ||
		t_fail "status without bpffs ($caps): $(cat "$E2E_TMP/mnt.out")"
	grep -q "bpffs mounted by status\|not attached\|Operation not permitted" "$E2E_TMP/mnt.out" &&
		t_fail "status without bpffs ($caps): $(cat "$E2E_TMP/mnt.out")"
done
grep -q "^bpf /sys/fs/bpf bpf " /proc/mounts || t_fail "the machine's /sys/fs/bpf is no longer mounted"
t_end "$E2E_NAME"

# ---- 4. dropping any one capability of the unit's set breaks something ----------

# What each capability is for, and the error when it is missing. A
# capability added to the unit without an entry here fails: measure it.
declare -A NEEDS=(
	[bpf]="attach: creating maps, loading programs (bpf(2) is CAP_BPF)|Operation not permitted"
	[perfmon]="attach: the verifier refuses packet pointer arithmetic without it|Permission denied"
	[net_admin]="attach: setting an XDP program on a link over netlink|Operation not permitted"
)
for cap in "${UNIT_CAPS[@]}"; do
	E2E_NAME=drop_cap_$cap
	t_begin
	if [ -z "${NEEDS[$cap]:-}" ]; then
		t_fail "CAP_${cap^^} is in the unit but no operation here is known to need it: measure it, add it to NEEDS"
		t_end "$E2E_NAME"
		continue
	fi
	# shellcheck disable=SC2046 # one word per capability
	less=$(cap_list $(unit_without "$cap"))
	expect_fail "attach without CAP_${cap^^}" "${NEEDS[$cap]#*|}" "$less" attach "$IFC" --mode native
	attached && t_fail "a program is on $IFC after the failed attach"
	[ -e "$BG_PIN" ] && t_fail "$BG_PIN left after the failed attach"
	if [ "$cap" = bpf ]; then
		# load only makes maps: CAP_BPF is what it needs.
		bg attach "$IFC" --mode native >/dev/null 2>&1 || t_fail "attach as full root failed"
		# Creating the filter's map fails with EPERM, and load says so.
		expect_fail "load without CAP_BPF" "needs CAP_BPF" "$less" load "$E2E_TMP/list.txt"
	fi
	reset_gw
	info "CAP_${cap^^}: ${NEEDS[$cap]%|*}"
	t_end "$E2E_NAME"
done

# ---- 5. the agent with exactly the unit's set -----------------------------------

CFG=$E2E_TMP/bloomgate.yaml
cat >"$CFG" <<EOF
interfaces:
  - name: $IFC
    mode: native
state_dir: $E2E_TMP/state
metrics: 127.0.0.1:$METRICS_PORT
debounce: 100ms
lists:
  - name: local
    path: $E2E_TMP/list.txt
EOF

E2E_NAME=unit_set_agent
t_begin
reset_gw
: >"$E2E_TMP/agent.log"
expect_ok "agent --check" "$UNIT" agent --check --config "$CFG"
# Neither touches the datapath: no capability at all.
expect_ok "agent --check" -all agent --check --config "$CFG"
agent_start "$UNIT"
wait_until 15 matches "$X" ||
	t_fail "$X not matched 15 s after the agent started: $(tail -3 "$E2E_TMP/agent.log")"
attached || t_fail "the agent did not attach to $IFC"
printf '%s\n' "$X" "$Y" >"$E2E_TMP/list.tmp" && mv "$E2E_TMP/list.tmp" "$E2E_TMP/list.txt"
wait_until 10 matches "$Y" || t_fail "$Y (added to the list) not matched: $(tail -3 "$E2E_TMP/agent.log")"
expect_ok reload "$UNIT" reload
expect_ok reload -all reload
grep -q "^bloomgate_filter_generation " <<<"$(metrics_get)" || t_fail "no bloomgate_filter_generation in /metrics"
agent_stop
t_expect_eq "agent exit on SIGTERM" 0 "$AGENT_RC"
attached || t_fail "the program left $IFC when the agent stopped (expected fail-static)"
matches "$Y" || t_fail "$Y no longer matched after the agent stopped"
# A restart adopts the pinned filter: reads it through the pins only.
agent_start "$UNIT"
wait_until 10 agent_log_has "adopted" ||
	t_fail "the restarted agent did not adopt the filter: $(tail -3 "$E2E_TMP/agent.log")"
agent_stop
t_expect_eq "restarted agent exit on SIGTERM" 0 "$AGENT_RC"
# Any error the agent logged (writing the provenance indexes included).
grep -Ei "cannot|failed|denied|not permitted|error" "$E2E_TMP/agent.log" \
	>"$E2E_TMP/agent.errs"
[ -s "$E2E_TMP/agent.errs" ] && t_fail "the agent logged errors: $(head -3 "$E2E_TMP/agent.errs")"
t_end "$E2E_NAME"

# ---- 6. the control socket's group under the unit's set ---------------------------

# chown(2) of the socket to group bloomgate without CAP_CHOWN works only
# for a member: the unit's SupplementaryGroups=bloomgate. Without it the
# agent keeps the socket root's (0600) and says why.
E2E_NAME=unit_set_socket_group
t_begin
SOCK=/run/bloomgate/${BG_PIN//\//_}.sock
grep -qx "SupplementaryGroups=bloomgate" "$UNIT_FILE" ||
	t_fail "the unit has no SupplementaryGroups=bloomgate"
if ! getent group bloomgate >/dev/null; then
	groupadd -r bloomgate || t_fail "cannot create group bloomgate"
	MADE_GROUP=1
fi
: >"$E2E_TMP/agent.log"
agent_start "$UNIT"
# the socket, not the filter (live from before): the agent has bound it
wait_until 10 test -S "$SOCK" || t_fail "no socket: $(tail -3 "$E2E_TMP/agent.log")"
wait_until 10 matches "$X" || t_fail "$X not matched: $(tail -3 "$E2E_TMP/agent.log")"
t_expect_eq "socket mode and group, as the unit runs it" "660 bloomgate" \
	"$(stat -c '%a %G' "$SOCK" 2>/dev/null)" || info "agent: $(tail -n 5 "$E2E_TMP/agent.log")"
agent_stop
: >"$E2E_TMP/agent.log"
agent_start "$UNIT" ""
wait_until 10 test -S "$SOCK" || t_fail "no socket: $(tail -3 "$E2E_TMP/agent.log")"
wait_until 10 matches "$X" || t_fail "$X not matched: $(tail -3 "$E2E_TMP/agent.log")"
t_expect_eq "socket mode and group, not a member" "600 root" "$(stat -c '%a %G' "$SOCK" 2>/dev/null)"
agent_log_has "cannot give it to group bloomgate" ||
	t_fail "the agent does not say why the socket stays root's: $(tail -3 "$E2E_TMP/agent.log")"
agent_stop
t_end "$E2E_NAME"

info "$E2E_PASSED passed, $E2E_FAILED failed"
[ "$E2E_FAILED" -eq 0 ]
