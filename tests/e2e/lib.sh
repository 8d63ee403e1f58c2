# shellcheck shell=bash
# Helpers for the end-to-end tests and the demo (sourced, not run).
#
# Topology, three network namespaces joined by veth pairs:
#
#   $NS_C (client)            $NS_GW (gateway)             $NS_S (server)
#   $IF_C ---------------- $IF_GWC  [bloomgate]  $IF_GWS ---------------- $IF_S
#   192.0.2.2/25           192.0.2.1/25      192.0.2.129/25        192.0.2.130/25
#   2001:db8:1::2/64       2001:db8:1::1/64  2001:db8:2::1/64      2001:db8:2::2/64
#   + sources .50, ::50                                            + AnyIP hosts:
#                                                                  198.51.100.0/24
#                                                                  203.0.113.0/24
#                                                                  2001:db8:100::/64
#
# The server answers for every address of its host ranges (local routes on
# lo), so any of them is a destination without an `ip addr add` each. Every
# neighbour entry is permanent and DAD is off: no ARP/ND, nothing to wait for.
# Only documentation ranges are used, and no namespace has a default route.
#
# bloomgate runs in the gateway's network namespace through
# `nsenter --net=...`, which keeps the root mount namespace: its pins on
# /sys/fs/bpf persist between calls (`ip netns exec` would mount a fresh
# /sys for every command).
#
# Cleanup: everything created is recorded and undone by one handler run on
# EXIT, INT and TERM (also after a failure); a marker file lets the next run
# clean up after a run that was killed outright.

E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib-require.sh
source "$E2E_ROOT/scripts/lib-require.sh"
# Every external command the e2e suites (test_*.sh), this file and the demo
# call; e2e_init checks them before it creates anything (require_cmds).
E2E_CMDS=(ip nsenter sysctl bpftool flock timeout "${CLANG:-clang}" dig dnsmasq ethtool jq
	awk sed grep find mktemp date seq sort tee wc cut tr head uname id promtool
	systemd-analyze getconf man groff)
# the binary under test; make tsan runs the agent's suites with its
# ThreadSanitizer build (tests/tsan.sh)
BG_BIN=${BG_BIN:-$E2E_ROOT/build/bloomgate}
UDPSEND=$E2E_ROOT/build/tests/udpsend
UDPSINK=$E2E_ROOT/build/tests/udpsink
BG_PIN=${BLOOMGATE_PIN_DIR:-/sys/fs/bpf/bloomgate}

NS_C=${NS_C:-bgc}
NS_GW=${NS_GW:-bggw}
NS_S=${NS_S:-bgs}
IF_C=${IF_C:-c0}
IF_GWC=${IF_GWC:-gwc}
IF_GWS=${IF_GWS:-gws}
IF_S=${IF_S:-s0}

C_IP4=192.0.2.2 GWC_IP4=192.0.2.1 GWS_IP4=192.0.2.129 S_IP4=192.0.2.130
C_IP6=2001:db8:1::2 GWC_IP6=2001:db8:1::1 GWS_IP6=2001:db8:2::1 S_IP6=2001:db8:2::2
C_SRC4=192.0.2.50 C_SRC6=2001:db8:1::50
MAC_C=02:b6:00:00:00:01 MAC_GWC=02:b6:00:00:00:02
MAC_GWS=02:b6:00:00:00:03 MAC_S=02:b6:00:00:00:04
UDP_PORT=${UDP_PORT:-9999}

E2E_LOCK=${E2E_LOCK:-/run/bloomgate-e2e.lock}
E2E_MARKER=${E2E_MARKER:-/run/bloomgate-e2e.state}
E2E_TMP=
E2E_PIDS=()
E2E_CLEANING=0
E2E_PASSED=0
E2E_FAILED=0

# ---- results ---------------------------------------------------------------

info() { printf '# %s\n' "$*"; }
ok() {
	echo "ok $1"
	E2E_PASSED=$((E2E_PASSED + 1))
}
notok() { # NAME [REASON...]
	local name=$1 r
	shift
	echo "not ok $name"
	for r in "$@"; do
		printf '#   %s\n' "$r"
	done
	E2E_FAILED=$((E2E_FAILED + 1))
}

# One test case: t_begin; t_fail REASON (any number); t_end NAME.
T_WHY=()
t_begin() { T_WHY=(); }
t_fail() { T_WHY+=("$*"); }
t_expect_eq() { # WHAT EXPECTED ACTUAL
	[ "$2" = "$3" ] || t_fail "$1: expected $2, got $3"
}
t_end() {
	if ((${#T_WHY[@]})); then
		notok "$1" "${T_WHY[@]}"
	else
		ok "$1"
	fi
}

die() {
	notok "${E2E_NAME:-setup}" "$@"
	exit 1
}

# ---- commands in the namespaces --------------------------------------------

in_ns() { # NS CMD... : network namespace only, root mount namespace
	local ns=$1
	shift
	nsenter --net="/run/netns/$ns" "$@"
}

# bloomgate in the gateway. BLOOMGATE_PIN_DIR is passed through when set.
bg() { in_ns "$NS_GW" "$BG_BIN" "$@"; }

# Runs bloomgate, keeping stdout in BG_OUT, stderr in BG_ERR, status in BG_RC.
# shellcheck disable=SC2034 # used by the scripts that source this
bg_capture() {
	BG_OUT=$(bg "$@" 2>"$E2E_TMP/bg.err")
	BG_RC=$?
	BG_ERR=$(cat "$E2E_TMP/bg.err")
}

# bloomgate attach in the gateway, in the mode the test runs in.
attach() { # IFACE [OPTS...] ; uses $ATTACH_MODE
	local ifc=$1
	shift
	bg_capture attach "$ifc" --mode "$ATTACH_MODE" "$@"
	return "$BG_RC"
}

# A counter from `bloomgate stats --json`; an error when there is none.
bg_stat() {
	bg stats --json | jq -r --arg k "$1" '.[$k] // error("no counter \($k)")'
}

# The counter is above N (for wait_until).
stat_above() { [ "$(bg_stat "$1")" -gt "$2" ]; } # COUNTER N

# The first N candidates the live filter does not match (a Bloom filter has
# false positives: unlisted addresses are picked, not assumed).
pick_unmatched() { # N CANDIDATE...
	local n=$1 a
	shift
	for a in "$@"; do
		((n > 0)) || break
		if [ "$(bg_check "$a")" = "no match" ]; then
			echo "$a"
			n=$((n - 1))
		fi
	done
}

# Prints "match" or "no match" for one address.
bg_check() {
	bg check "$1" 2>/dev/null | sed -n "s#^$1: \(no match\\|match\).*#\1#p"
}

# Bounded wait for a condition (a command), polling every 20 ms. Bounds
# are times E2E_TIME_SCALE (default 1): a sanitizer's build is slower.
wait_until() { # SECONDS CMD...
	local deadline=$((SECONDS + $1 * ${E2E_TIME_SCALE:-1}))
	shift
	while ! "$@"; do
		((SECONDS >= deadline)) && return 1
		sleep 0.02
	done
	return 0
}

# Waits for a process to exit (bounded); kills it after the bound.
wait_pid() { # PID SECONDS
	local pid=$1 i=0 n=$(($2 * 50 * ${E2E_TIME_SCALE:-1}))
	while kill -0 "$pid" 2>/dev/null; do
		if ((i++ >= n)); then
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 1
		fi
		sleep 0.02
	done
	wait "$pid" 2>/dev/null
	return 0
}

# Starts CMD in namespace NS in the background and records its pid for
# cleanup in E2E_LAST_PID. nsenter execs CMD (no fork for a network
# namespace alone), so the pid is CMD's own and killing it leaves no orphan.
spawn_in() { # NS CMD...
	local ns=$1
	shift
	# without the e2e lock's fd: a process that outlives a killed run
	# must not hold the next run's lock
	nsenter --net="/run/netns/$ns" "$@" {E2E_LOCK_FD}>&- &
	E2E_LAST_PID=$!
	E2E_PIDS+=("$E2E_LAST_PID")
}

# ---- traffic -----------------------------------------------------------------
# Files per traffic run TAG in $E2E_TMP: TAG.sink (udpsink output),
# TAG.send (udpsend output), TAG.ready, TAG.stop, TAG.sendstop.

sink_start() { # TAG
	local t=$E2E_TMP/$1
	rm -f "$t.ready" "$t.stop" "$t.sink"
	spawn_in "$NS_S" "$UDPSINK" --port "$UDP_PORT" --ready-file "$t.ready" \
		--stop-file "$t.stop" --idle 300 --timeout 120 >"$t.sink"
	SINK_PID=$E2E_LAST_PID
	wait_until 5 test -e "$t.ready" || {
		echo "udpsink did not get ready" >&2
		return 1
	}
}

# Tells the sink the senders are done; it exits once its count has not
# changed for 300 ms (bounded here by 15 s).
sink_finish() { # TAG
	touch "$E2E_TMP/$1.stop"
	wait_pid "$SINK_PID" 15
}

send_start() { # TAG UDPSEND-ARGS... (runs until send_stop)
	local t=$E2E_TMP/$1
	shift
	rm -f "$t.sendstop"
	spawn_in "$NS_C" "$UDPSEND" --port "$UDP_PORT" --stop-file "$t.sendstop" \
		--duration 120 "$@" >"$t.send"
	SEND_PID=$E2E_LAST_PID
}

send_stop() { # TAG
	touch "$E2E_TMP/$1.sendstop"
	wait_pid "$SEND_PID" 10
}

# Whole run: sink up, COUNT datagrams to each address at PPS, sink drained.
traffic() { # TAG COUNT PPS [--src ADDR]... ADDR...
	local tag=$1 count=$2 pps=$3
	shift 3
	sink_start "$tag" || return 1
	timeout --foreground 60 nsenter --net="/run/netns/$NS_C" "$UDPSEND" --port "$UDP_PORT" \
		--count "$count" --pps "$pps" "$@" >"$E2E_TMP/$tag.send"
	sink_finish "$tag"
}

sent() { # TAG ADDR
	awk -v a="$2" '$1 == "sent" && $2 == a { n += $3 } END { print n + 0 }' \
		"$E2E_TMP/$1.send" 2>/dev/null || echo 0
}
recv() { # TAG ADDR
	awk -v a="$2" '$1 == "recv" && $2 == a { n += $3 } END { print n + 0 }' \
		"$E2E_TMP/$1.sink" 2>/dev/null || echo 0
}
sent_total() { awk '$1 == "total" { print $2 }' "$E2E_TMP/$1.send"; }
recv_total() { awk '$1 == "total" { print $2 }' "$E2E_TMP/$1.sink"; }
# Anything unexpected on either side: send errors, socket drops, bad data.
traffic_anomalies() { # TAG
	cat "$E2E_TMP/$1.send" "$E2E_TMP/$1.sink" 2>/dev/null |
		grep -E '^(error|drops|bad) ' | tr '\n' ' '
}

# Listed addresses get nothing through, the others everything:
# $EXPECT_COUNT (default 20) datagrams to each at $PPS (default 2000).
expect_traffic() { # TAG "LISTED..." "UNLISTED..."
	local tag=$1 a s r
	# shellcheck disable=SC2086
	traffic "$tag" "${EXPECT_COUNT:-20}" "${PPS:-2000}" $2 $3 ||
		{ t_fail "traffic $tag did not run"; return; }
	for a in $2; do
		r=$(recv "$tag" "$a")
		[ "$r" -eq 0 ] || t_fail "$a (listed): $r of $(sent "$tag" "$a") delivered"
	done
	for a in $3; do
		s=$(sent "$tag" "$a") r=$(recv "$tag" "$a")
		[ "$r" -eq "$s" ] || t_fail "$a (not listed): $r of $s delivered"
	done
}

# One bit of the byte at OFFSET of FILE flipped, in place (a damaged
# artifact).
flip_byte() { # FILE OFFSET
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	# shellcheck disable=SC2059
	printf "$(printf '\\%03o' $(((b ^ 1) & 255)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# ---- DNS: dnsmasq in the server, dig in the client ---------------------------
# dnsmasq runs with no system configuration (no /etc/dnsmasq.conf, resolv.conf
# or hosts file): its records come from the caller (--host-record=NAME,V4,V6,
# --address=/NAME/ADDR) and it logs every query it receives to a file, so a
# test can show that a query never reached it (dns_sync, then dns_seen).
# dig runs in the client with one try and a short wait ($DIG_TIME seconds).

DIG_TIME=${DIG_TIME:-1}
DNS_SYNCS=0

# Starts dnsmasq in the server on $S_IP4 and $S_IP6, port PORT, logging the
# queries to LOG, and returns once it answers on both addresses. Sets
# DNS_PID; the process is killed by the cleanup handler like every spawn.
# shellcheck disable=SC2034 # DNS_PID is for the scripts that source this
dns_server_start() { # PORT LOG RECORD-OPTS...
	local port=$1 log=$2
	shift 2
	: >"$log"
	spawn_in "$NS_S" dnsmasq --keep-in-foreground --conf-file=/dev/null \
		--no-resolv --no-hosts --pid-file= --user=root --group=root \
		--port="$port" --bind-interfaces \
		--listen-address="$S_IP4" --listen-address="$S_IP6" \
		--log-queries --log-facility="$log" "$@" 2>"$log.err"
	DNS_PID=$E2E_LAST_PID
	if ! wait_until 5 _dns_up "$port"; then
		echo "dnsmasq (port $port) does not answer: $(cat "$log.err" "$log")" >&2
		return 1
	fi
}

# Whether the server answers (anything) on both addresses; asked from the
# server itself, so the gateway is not involved.
_dns_up() { # PORT
	local a
	for a in "$S_IP4" "$S_IP6"; do
		in_ns "$NS_S" dig @"$a" -p "$1" +tries=1 +time=1 +short up.probe.invalid \
			>/dev/null 2>&1 || return 1
	done
}

# Barrier: a query from the server to itself, on both addresses, answered and
# logged. dnsmasq handles and logs queries one at a time in arrival order, so
# afterwards any query that reached it before is in LOG: "not in the log"
# means "never got there", without waiting for an arbitrary time.
dns_sync() { # PORT LOG
	local a n
	for a in "$S_IP4" "$S_IP6"; do
		n=sync-$((++DNS_SYNCS)).probe.invalid
		in_ns "$NS_S" dig @"$a" -p "$1" +tries=1 +time=1 "$n" >/dev/null 2>&1 ||
			return 1
		wait_until 2 _dns_logged "$2" "$n" || return 1
	done
}
_dns_logged() { grep -qF " $2 from " "$1"; }

# Marks the end of LOG: dns_seen counts what the server logs after it.
declare -A DNS_MARK
dns_mark() { # LOG
	DNS_MARK[$1]=$(wc -l <"$1")
}

# The server's log lines (since dns_mark LOG) of queries for NAME, exactly
# as sent (dnsmasq logs the name in the case it got), of TYPE, from FROM.
dns_logged() { # LOG NAME TYPE FROM
	awk -v n="$2" -v t="query[$3]" -v f="$4" -v m="${DNS_MARK[$1]:-0}" '
		NR > m { for (i = 1; i + 3 <= NF; i++)
			if ($i == t && $(i + 1) == n && $(i + 2) == "from" && $(i + 3) == f) {
				print
				break
			} }' "$1"
}
dns_seen() { dns_logged "$@" | wc -l; } # how many of them

# One query from the client: dig's output in DIG_OUT, its exit status in
# DIG_RC (0 a reply, 9 no reply), the wall time in DIG_MS.
# shellcheck disable=SC2034 # used by the scripts that source this
dig_client() { # SERVER NAME TYPE [DIG-OPTS...]
	local s=$1 n=$2 t=$3 t0
	shift 3
	t0=$(date +%s%N)
	DIG_OUT=$(in_ns "$NS_C" dig @"$s" +tries=1 +time="$DIG_TIME" "$@" "$n" "$t" 2>&1)
	DIG_RC=$?
	DIG_MS=$((($(date +%s%N) - t0) / 1000000))
}
# Fields of the reply in DIG_OUT.
dig_status() { sed -n 's/^;; ->>HEADER<<- .*status: \([A-Z]*\),.*/\1/p' <<<"$DIG_OUT"; }
dig_flags() { sed -n 's/^;; flags: \([^;]*\);.*/\1/p' <<<"$DIG_OUT"; }
dig_count() { # QUERY|ANSWER|AUTHORITY|ADDITIONAL
	sed -n "/^;; flags: /s/.*[;,] $1: \([0-9]*\).*/\1/p" <<<"$DIG_OUT"
}
# The question section, one line, fields separated by one space.
dig_question() {
	awk '/^;; QUESTION SECTION:/ { q = 1; next } q && NF { print $1, $2, $3; exit }' <<<"$DIG_OUT"
}
# The data of the answer records of TYPE.
dig_answers() { # TYPE
	awk -v t="$1" '/^;; ANSWER SECTION:/ { a = 1; next } !NF { a = 0 }
		a && $4 == t { print $5 }' <<<"$DIG_OUT"
}
dig_edns() { grep -c '^; EDNS: version: 0' <<<"$DIG_OUT"; }
dig_qtime() { sed -n 's/^;; Query time: \([0-9]*\) msec.*/\1/p' <<<"$DIG_OUT"; }
# dig's complaints about a reply (a mismatched question, a bad ID, ...).
dig_warnings() { grep -Ei '^;; (warning|.*mismatch|.*bad|.*malformed|.*not set)' <<<"$DIG_OUT"; }

# ---- XDP on the client's veth ---------------------------------------------------
# A frame that an XDP program in native (driver) mode sends back with XDP_TX
# on a veth reaches the peer only when the peer has an XDP program of its
# own: veth's XDP_TX path puts the frame into the peer's ring and wakes the
# peer's NAPI only if the peer has an XDP program. GRO alone (which also gives
# the peer a NAPI instance) is not enough on 6.18: the frame is queued but the
# NAPI is not scheduled, so it waits until other traffic to the peer comes
# along; with neither, it is dropped (the gateway side's rx_queue_0_
# xdp_tx_errors counts it). Generic (skb) mode needs nothing: the frame goes
# out through the normal transmit path. Hence this pass-everything program
# for the client's veth when bloomgate answers in native mode.
client_xdp_pass() { # on|off
	local obj=$E2E_TMP/xdp_pass.o
	if [ "$1" = off ]; then
		ip -n "$NS_C" link set dev "$IF_C" xdp off
		return
	fi
	if [ ! -e "$obj" ]; then
		${CLANG:-clang} -O2 -target bpf -Wall -Wextra -Werror \
			-c "$E2E_ROOT/tests/fixtures/xdp_pass.bpf.c" -o "$obj" || return 1
	fi
	ip -n "$NS_C" link set dev "$IF_C" xdpdrv obj "$obj" sec xdp
}

# ---- topology ---------------------------------------------------------------

# Sets sysctls in namespace NS, then reads every one back from /proc/sys
# inside NS (through nsenter, not sysctl) and fails, with the reason in
# TOPO_ERR, unless each has the value written. A setting that did not take
# (no sysctl, a read-only /proc/sys in a container) must stop the setup: a
# gateway without forwarding otherwise shows up later as every datagram
# lost, in every suite.
_ns_sysctl() { # NS KEY=VALUE...
	local ns=$1 kv key got
	shift
	if ! ip netns exec "$ns" sysctl -qw "$@" >/dev/null; then
		TOPO_ERR="sysctl -w $* failed in $ns"
		return 1
	fi
	for kv in "$@"; do
		key=${kv%%=*}
		got=$(in_ns "$ns" cat "/proc/sys/${key//.//}" 2>/dev/null)
		if [ "$got" != "${kv#*=}" ]; then
			TOPO_ERR="$key is '${got:-unreadable}' in $ns after setting it to ${kv#*=}"
			return 1
		fi
	done
}

topo_setup() {
	local ns
	TOPO_ERR=
	for ns in "$NS_C" "$NS_GW" "$NS_S"; do
		ip netns add "$ns" || return 1
		# No DAD anywhere, link-local addresses included.
		_ns_sysctl "$ns" net.ipv6.conf.all.accept_dad=0 \
			net.ipv6.conf.default.accept_dad=0 \
			net.ipv6.conf.default.router_solicitations=0 \
			net.ipv6.conf.all.router_solicitations=0 || return 1
		ip -n "$ns" link set lo up
	done
	ip -n "$NS_C" link add "$IF_C" address "$MAC_C" type veth \
		peer name "$IF_GWC" address "$MAC_GWC" netns "$NS_GW" || return 1
	ip -n "$NS_S" link add "$IF_S" address "$MAC_S" type veth \
		peer name "$IF_GWS" address "$MAC_GWS" netns "$NS_GW" || return 1

	_ns_sysctl "$NS_GW" net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 || return 1

	# client
	ip -n "$NS_C" addr add "$C_IP4/25" dev "$IF_C"
	ip -n "$NS_C" addr add "$C_SRC4/25" dev "$IF_C"
	ip -n "$NS_C" -6 addr add "$C_IP6/64" dev "$IF_C" nodad
	# Deprecated, so never picked as a source unless asked for (--src).
	ip -n "$NS_C" -6 addr add "$C_SRC6/64" dev "$IF_C" nodad preferred_lft 0
	ip -n "$NS_C" link set "$IF_C" up
	ip -n "$NS_C" route add 192.0.2.128/25 via "$GWC_IP4"
	ip -n "$NS_C" route add 198.51.100.0/24 via "$GWC_IP4"
	ip -n "$NS_C" route add 203.0.113.0/24 via "$GWC_IP4"
	ip -n "$NS_C" -6 route add 2001:db8::/32 via "$GWC_IP6"
	ip -n "$NS_C" neigh replace "$GWC_IP4" lladdr "$MAC_GWC" nud permanent dev "$IF_C"
	ip -n "$NS_C" -6 neigh replace "$GWC_IP6" lladdr "$MAC_GWC" nud permanent dev "$IF_C"

	# gateway
	ip -n "$NS_GW" addr add "$GWC_IP4/25" dev "$IF_GWC"
	ip -n "$NS_GW" addr add "$GWS_IP4/25" dev "$IF_GWS"
	ip -n "$NS_GW" -6 addr add "$GWC_IP6/64" dev "$IF_GWC" nodad
	ip -n "$NS_GW" -6 addr add "$GWS_IP6/64" dev "$IF_GWS" nodad
	ip -n "$NS_GW" link set "$IF_GWC" up
	ip -n "$NS_GW" link set "$IF_GWS" up
	ip -n "$NS_GW" route add 198.51.100.0/24 via "$S_IP4"
	ip -n "$NS_GW" route add 203.0.113.0/24 via "$S_IP4"
	ip -n "$NS_GW" -6 route add 2001:db8:100::/64 via "$S_IP6"
	local a
	for a in "$C_IP4" "$C_SRC4"; do
		ip -n "$NS_GW" neigh replace "$a" lladdr "$MAC_C" nud permanent dev "$IF_GWC"
	done
	for a in "$C_IP6" "$C_SRC6"; do
		ip -n "$NS_GW" -6 neigh replace "$a" lladdr "$MAC_C" nud permanent dev "$IF_GWC"
	done
	ip -n "$NS_GW" neigh replace "$S_IP4" lladdr "$MAC_S" nud permanent dev "$IF_GWS"
	ip -n "$NS_GW" -6 neigh replace "$S_IP6" lladdr "$MAC_S" nud permanent dev "$IF_GWS"

	# server
	ip -n "$NS_S" addr add "$S_IP4/25" dev "$IF_S"
	ip -n "$NS_S" -6 addr add "$S_IP6/64" dev "$IF_S" nodad
	ip -n "$NS_S" link set "$IF_S" up
	ip -n "$NS_S" route add local 198.51.100.0/24 dev lo
	ip -n "$NS_S" route add local 203.0.113.0/24 dev lo
	ip -n "$NS_S" -6 route add local 2001:db8:100::/64 dev lo
	ip -n "$NS_S" route add 192.0.2.0/25 via "$GWS_IP4"
	ip -n "$NS_S" -6 route add 2001:db8:1::/64 via "$GWS_IP6"
	ip -n "$NS_S" neigh replace "$GWS_IP4" lladdr "$MAC_GWS" nud permanent dev "$IF_S"
	ip -n "$NS_S" -6 neigh replace "$GWS_IP6" lladdr "$MAC_GWS" nud permanent dev "$IF_S"
}

# XDP program id on a gateway interface, empty when none.
xdp_prog_id() { # IFACE
	ip -n "$NS_GW" link show dev "$1" 2>/dev/null |
		sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p' | head -n1
}

_cleanup_gw() {
	local ifc idx id
	[ -e "/run/netns/$NS_GW" ] || return 0
	[ -e "$BG_PIN" ] && bg detach --all >/dev/null 2>&1
	for ifc in "$IF_GWC" "$IF_GWS"; do
		idx=$(ip -n "$NS_GW" -o link show dev "$ifc" 2>/dev/null | cut -d: -f1)
		id=$(xdp_prog_id "$ifc")
		[ -n "$id" ] || continue
		bg detach "$ifc" >/dev/null 2>&1
		# Whatever bloomgate could not remove: the program, libxdp's pins.
		ip -n "$NS_GW" link set dev "$ifc" xdp off 2>/dev/null
		ip -n "$NS_GW" link set dev "$ifc" xdpgeneric off 2>/dev/null
		[ -n "$idx" ] && rm -rf "/sys/fs/bpf/xdp/dispatch-$idx-$id"
	done
	rmdir /sys/fs/bpf/xdp 2>/dev/null
}

_cleanup_pins() {
	[ -d "$BG_PIN" ] || return 0
	rm -f "$BG_PIN"/bg_filters "$BG_PIN"/bg_stats "$BG_PIN"/bg_events "$BG_PIN"/bg_attach \
		"$BG_PIN"/bg_protect "$BG_PIN"/bg_filter \
		"$BG_PIN"/bg_progs_*
	rmdir "$BG_PIN" 2>/dev/null
}

e2e_cleanup() {
	local pid ns
	((E2E_CLEANING)) && return
	E2E_CLEANING=1
	for pid in "${E2E_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${E2E_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	# Anything else still running in our namespaces (e.g. left by a run
	# that was killed outright): those pids and no others.
	for ns in "$NS_C" "$NS_GW" "$NS_S"; do
		[ -e "/run/netns/$ns" ] || continue
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill "$pid" 2>/dev/null
		done
	done
	_cleanup_gw
	_cleanup_pins
	for ns in "$NS_C" "$NS_GW" "$NS_S"; do
		[ -e "/run/netns/$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	[ -n "$E2E_TMP" ] && rm -rf "$E2E_TMP"
	rm -f "$E2E_MARKER"
}

# Takes the lock (one run at a time), cleans up after a killed run, checks
# the prerequisites, installs the cleanup handler and builds the topology.
e2e_init() {
	local f
	[ "$(id -u)" -eq 0 ] || die "must run as root"
	for f in "$BG_BIN" "$UDPSEND" "$UDPSINK"; do
		[ -x "$f" ] || die "$f is missing: run make first (make all build/tests/udpsend build/tests/udpsink)"
	done
	require_cmds "${E2E_CMDS[@]}"
	exec {E2E_LOCK_FD}>"$E2E_LOCK"
	flock -w "${E2E_LOCK_WAIT:-300}" "$E2E_LOCK_FD" || die "another bloomgate e2e run or demo holds $E2E_LOCK"

	if [ -e "$E2E_MARKER" ]; then
		# The names that run used, which may not be ours (demo vs test).
		local mine=("$NS_C" "$NS_GW" "$NS_S" "$BG_PIN")
		read -r NS_C NS_GW NS_S BG_PIN E2E_TMP <"$E2E_MARKER"
		case $E2E_TMP in /tmp/bloomgate-e2e.*) ;; *) E2E_TMP= ;; esac
		info "cleaning up after an earlier run that did not finish ($NS_GW, $BG_PIN)"
		e2e_cleanup
		E2E_CLEANING=0
		NS_C=${mine[0]} NS_GW=${mine[1]} NS_S=${mine[2]} BG_PIN=${mine[3]} E2E_TMP=
	fi
	# Refuse (and touch nothing) when what we would create exists already.
	for f in "$NS_C" "$NS_GW" "$NS_S"; do
		[ -e "/run/netns/$f" ] && die "network namespace $f exists already (not ours): remove it first"
	done
	[ -e "$BG_PIN" ] && die "$BG_PIN exists: bloomgate is in use on this machine" \
		"(run with BLOOMGATE_PIN_DIR=/sys/fs/bpf/SOMEWHERE-ELSE to test alongside it)"

	trap 'e2e_cleanup' EXIT
	trap 'e2e_cleanup; exit 130' INT
	trap 'e2e_cleanup; exit 143' TERM
	E2E_TMP=$(mktemp -d /tmp/bloomgate-e2e.XXXXXX)
	echo "$NS_C $NS_GW $NS_S $BG_PIN $E2E_TMP" >"$E2E_MARKER"
	topo_setup || die "cannot build the namespace topology${TOPO_ERR:+: $TOPO_ERR}"
}

# The agent's config at FILE: the gateway's client-side interface in
# $ATTACH_MODE, its state in $E2E_TMP/state, metrics on
# 127.0.0.1:$METRICS_PORT, no debounce; then the lines on stdin (its
# lists: section).
agent_config() { # FILE < LINES
	{
		printf 'interfaces:\n  - name: %s\n    mode: %s\n' "$IF_GWC" "$ATTACH_MODE"
		printf 'state_dir: %s\nmetrics: 127.0.0.1:%s\ndebounce: 0ms\n' \
			"$E2E_TMP/state" "$METRICS_PORT"
		cat
	} >"$1"
}

# The map id of the live filter (slot 0 of the pinned bg_filters; bpftool
# prints the value as little-endian bytes), empty when none is loaded.
current_filter_id() {
	local b
	b=$(bpftool map dump pinned "$BG_PIN/bg_filters" 2>/dev/null |
		awk '/value:/ { for (i = 1; i <= NF; i++) if ($i == "value:") break;
			print $(i+4) $(i+3) $(i+2) $(i+1); exit }')
	[ -n "$b" ] && echo $((16#$b))
}

# Attaches to IFACE in native mode, or in skb mode when the driver refuses
# (ATTACH_MODE stays skb for the rest of the script); fails the case when
# neither works.
attach_native_or_skb() { # IFACE [ATTACH OPTIONS...]
	if ! attach "$@"; then
		info "native XDP attach failed ($BG_ERR); trying --mode skb"
		ATTACH_MODE=skb
		attach "$@" || t_fail "attach failed in native and skb mode: $BG_ERR"
	fi
}
