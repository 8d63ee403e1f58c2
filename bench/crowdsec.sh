#!/bin/bash
# The crowdsec section of `make bench` (called by bench/run.sh; runs alone
# too): bloomgate's agent against Debian's crowdsec-firewall-bouncer
# (nftables mode), side by side on the same CrowdSec local API (Debian's
# crowdsec 1.4.6, alone: tests/crowdsec.sh) and the same decisions, both
# pulling its stream every second, in one network namespace.
#
#   bench/crowdsec.sh [--quick]     markdown on stdout, progress on stderr
#
# 1. From `cscli decisions add --ip X` to enforcement: bloomgate's `check X`
#    says match (its live filter), the bouncer's nftables set holds X
#    (`nft get element`); both polled every 10 ms, rounds alternating.
#    bloomgate with CS_LIST_KEYS (10M) addresses of a file list in the same
#    filter, and with none. Also bloomgate's own time from the pull that
#    brought the decision to the filter live (its agent's timing line).
# 2. A bulk of 10k and 100k decisions (`cscli decisions import`): from the
#    import's start to every one enforced (bloomgate: its copy holds them
#    all and the filter is live; the bouncer: its set has them all).
# 0. A million decisions at the first pull, their ids in ascending and in
#    descending order (the engine answers in descending order; it takes
#    some 30 s to answer a million, so a canned answer of the same shape
#    is served by build/tests/httpd): the pull (transfer, parse, the set,
#    its copy written), from the pull's start to the filter live, the
#    agent's CPU seconds and peak RSS by then; then SIGTERM during such a
#    pull (a restarted agent's), and the time the agent took to exit.
# 3. A flood from banned sources, end-to-end bench's method (bench/e2e.sh:
#    build/livegen's live frames into a veth pair, the rate the growth of
#    the receiving end's rx_queue_0_xdp_packets over the generator's time):
#    CS_FLOOD (10k) decisions banning the flood's sources, enforced by
#    bloomgate's agent (native XDP, --match src) on one pair and by the
#    bouncer's nftables input chain on another (XDP_PASS in front, the
#    frames addressed to the host); bare XDP_DROP on a third; and clean
#    traffic (sources not banned) to the host through both.
#
# Everything runs in the script's own namespace (bgcsb), removed on exit.
set -u
cd "$(dirname "$0")/.." || exit 1
export LC_ALL=C
# shellcheck source=scripts/lib-require.sh
source scripts/lib-require.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh
require_cmds ip nsenter flock awk sed grep jq nft crowdsec cscli \
	crowdsec-firewall-bouncer curl seq sort mktemp ethtool nstat nproc

BUILD=${BUILD:-build}
BG=$BUILD/bloomgate
GEN=$BUILD/genaddrs
LIVEGEN=$BUILD/livegen
ROUNDS=${CS_ROUNDS:-9}
LIST_KEYS=${CS_LIST_KEYS:-10000000}
BULKS=${CS_BULKS:-10000 100000}
FLOOD=${CS_FLOOD:-10000}
FLOOD_ROUNDS=${CS_FLOOD_ROUNDS:-7}
FLOOD_SECS=${CS_FLOOD_SECONDS:-0.5}
MILLION=${CS_MILLION:-1000000}
MILLION_ROUNDS=${CS_MILLION_ROUNDS:-3}
PARTS=" ${CS_PARTS:-million one bulk flood} "
if [ "${1:-}" = --quick ]; then
	ROUNDS=${CS_ROUNDS:-2} LIST_KEYS=${CS_LIST_KEYS:-100000} BULKS=${CS_BULKS:-1000}
	FLOOD_ROUNDS=${CS_FLOOD_ROUNDS:-2} MILLION=${CS_MILLION:-100000}
	MILLION_ROUNDS=${CS_MILLION_ROUNDS:-1}
fi
CPU=${E2E_CPU:-$(($(nproc) - 1))}
NS=bgcsb IF_A=bgc0 IF_B=bgc1
# the flood's pairs (generator end a, receiving end b): bare XDP_DROP,
# bloomgate, the bouncer; the b ends of the last two own the frames'
# destination address
IF_DROP=bgfd IF_BG=bgfb IF_NFT=bgfn
HOST_IP=198.51.100.1
export BLOOMGATE_PIN_DIR=/sys/fs/bpf/bgcsb
PIN=$BLOOMGATE_PIN_DIR
PORT=18099
LOCK=${E2E_LOCK:-/run/bloomgate-e2e.lock}
MARKER=/run/bloomgate-bench-crowdsec.state
TMP=
AGENT='' FW=''

say() { echo "crowdsec.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}
out() { echo "$@"; }
in_ns() { nsenter --net="/run/netns/$NS" "$@"; }
cs() { in_ns tests/crowdsec.sh cscli "$TMP/cs" "$@" >/dev/null 2>&1; }

cleanup() {
	[ -n "$FW" ] && kill "$FW" 2>/dev/null
	[ -n "$TMP" ] && [ -d "$TMP/cs" ] && in_ns tests/crowdsec.sh stop "$TMP/cs" >/dev/null 2>&1
	bench_cleanup_ns bloomgate-bench-crowdsec
}

now() { echo "$EPOCHREALTIME"; }
bg_match() { [ "$(in_ns "$BG" check "$1" 2>/dev/null | sed -n "s#^$1: \(no match\|match\).*#\1#p")" = match ]; }
fw_has() { in_ns nft get element ip crowdsec crowdsec-blacklists "{ $1 }" >/dev/null 2>&1; }
fw_count() {
	in_ns nft -j list set ip crowdsec crowdsec-blacklists 2>/dev/null |
		jq '[.nftables[] | select(.set) | .set.elem // [] | length] | add // 0'
}
# Polls CMD ARGS every 10 ms until it succeeds (bounded); the time then.
poll_until() { # SECONDS CMD...
	local deadline=$((SECONDS + $1))
	shift
	while ! "$@"; do
		((SECONDS >= deadline)) && { echo -; return 1; }
		sleep 0.01
	done
	now
}
secs() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == "-") print "-"; else printf "%.3f", b - a }'; }
# the agent's last timing line: "the pull (s), from its answer to live (s)"
pull_live() { last_timing "$1" | awk '{ printf "%.3f %.3f", $2 / 1000, $7 - $1 - $2 / 1000 }'; }
timings_now() { timings "$TMP/agent.log"; }

start_agent_with() { # LIST-KEYS
	local n=$1
	[ -n "$AGENT" ] && { kill "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=; }
	in_ns "$BG" detach --all >/dev/null 2>&1
	rm -rf "$TMP/state"
	: >"$TMP/agent.log"
	if ((n > 0)); then
		"$GEN" -s 20261203 "$n" >"$TMP/list.txt"
	else
		echo 192.0.2.255 >"$TMP/list.txt"
	fi
	cat >"$TMP/agent.yaml" <<-EOF
	interfaces:
	  - name: $IF_A
	    mode: skb
	  - name: ${IF_BG}b
	    mode: native
	    match: src
	state_dir: $TMP/state
	debounce: 0ms
	lists:
	  - name: list
	    path: $TMP/list.txt
	  - name: crowdsec
	    crowdsec: http://127.0.0.1:$PORT/
	    api_key_file: $TMP/bg.key
	    update_frequency: 1s
	EOF
	start_agent "$TMP/agent.yaml" "$TMP/agent.log"
	# the first filter, then the state its small changes use
	local deadline=$((SECONDS + 300))
	until grep -q "its changes go live in place\|its changes will be built whole" "$TMP/agent.log"; do
		((SECONDS >= deadline)) && die "the agent did not get ready: $(tail -n 3 "$TMP/agent.log")"
		sleep 0.1
	done
}

# ---- setup ---------------------------------------------------------------------

for f in "$BG" "$GEN" "$LIVEGEN" "$BUILD/tests/httpd"; do
	[ -x "$f" ] || die "$f is missing: run make bench"
done
bench_begin bloomgate-bench-crowdsec
ip netns add "$NS" && ip -n "$NS" link set lo up &&
	ip -n "$NS" link add "$IF_A" type veth peer name "$IF_B" &&
	ip -n "$NS" link set "$IF_A" up && ip -n "$NS" link set "$IF_B" up ||
	die "cannot build the namespace"
for p in "$IF_DROP" "$IF_BG" "$IF_NFT"; do
	ip -n "$NS" link add "${p}a" type veth peer name "${p}b" &&
		ip -n "$NS" link set "${p}a" up && ip -n "$NS" link set "${p}b" up ||
		die "cannot add the veth pair ${p}a/${p}b"
done
# the host's address on the two that pass frames to the stack (UDP to a
# closed port: counted by the stack as UdpNoPorts when delivered)
ip -n "$NS" addr add "$HOST_IP/32" dev "${IF_BG}b" &&
	ip -n "$NS" addr add "$HOST_IP/32" dev "${IF_NFT}b" &&
	in_ns "$LIVEGEN" attach "${IF_DROP}b" drop &&
	in_ns "$LIVEGEN" attach "${IF_NFT}b" pass || die "cannot set up the flood's pairs"
in_ns tests/crowdsec.sh start "$TMP/cs" "$PORT" >/dev/null || die "cannot start the local API"
in_ns tests/crowdsec.sh bouncer "$TMP/cs" bloomgate >"$TMP/bg.key" || die "bouncer"
fwkey=$(in_ns tests/crowdsec.sh bouncer "$TMP/cs" firewall) || die "bouncer"
sed -e "s|^mode: .*|mode: nftables|" -e "s|^api_key: .*|api_key: $fwkey|" \
	-e "s|^api_url: .*|api_url: http://127.0.0.1:$PORT/|" \
	-e "s|^update_frequency: .*|update_frequency: 1s|" -e "s|^log_mode: .*|log_mode: stdout|" \
	-e "s|^daemonize: .*|daemonize: false|" -e "s|^pid_dir: .*|pid_dir: $TMP/|" \
	/etc/crowdsec/bouncers/crowdsec-firewall-bouncer.yaml |
	sed '/^prometheus:/,$ s/enabled: true/enabled: false/' >"$TMP/fw.yaml"
# the firewall bouncer, (re)started: it pulls the whole set when it starts
start_fw() {
	if [ -n "$FW" ]; then
		kill "$FW"
		wait "$FW" 2>/dev/null
		# its tables (in this script's namespace), when it left them
		in_ns nft delete table ip crowdsec 2>/dev/null
		in_ns nft delete table ip6 crowdsec6 2>/dev/null
	fi
	# nsenter itself (it execs the bouncer): $! is the bouncer
	nsenter --net="/run/netns/$NS" crowdsec-firewall-bouncer -c "$TMP/fw.yaml" \
		>>"$TMP/fw.log" 2>&1 {LOCK_FD}>&- &
	FW=$!
	for _ in $(seq 1 500); do
		in_ns nft list set ip crowdsec crowdsec-blacklists >/dev/null 2>&1 && break
		sleep 0.02
	done
	in_ns nft list set ip crowdsec crowdsec-blacklists >/dev/null 2>&1 || die "the firewall bouncer made no set: $(tail -n 2 "$TMP/fw.log")"
}
start_fw

out "### CrowdSec: bloomgate beside crowdsec-firewall-bouncer"
out
out "Produced by \`bench/crowdsec.sh\` (\`bench/run.sh --only crowdsec\` runs it alone), on the machine above. One CrowdSec local API (Debian's crowdsec $(crowdsec -version 2>&1 | sed -n 's/.*version: v*\([^-]*\).*/\1/p' | head -n1), alone, SQLite), two bouncers pulling its stream every second: bloomgate's agent (its filter in skb mode on a veth) and Debian's crowdsec-firewall-bouncer in nftables mode, in one network namespace on this machine. Medians over $ROUNDS rounds (range in brackets)."
out

# ---- 0. a million decisions at the first pull ------------------------------------

million_answer() { # ORDER N FILE
	awk -v n="$2" -v o="$1" 'BEGIN { printf "{\"deleted\":null,\"new\":["
		for (i = 0; i < n; i++) printf "%s{\"duration\":\"3h59m59.361927607s\",\"id\":%d,\"origin\":\"cscli\",\"scenario\":\"manual '"'"'ban'"'"' from '"'"'bench'"'"'\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"100.%d.%d.%d\"}", i ? "," : "", o == "descending" ? n - i : i + 1, 64 + int(i / 65536), int(i / 256) % 256, i % 256
		print "]}" }' >"$3.new" && mv "$3.new" "$3"
}
cpu_s() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"; }
hwm_mib() { awk '/^VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }
gets() { grep -c '^GET /v1/decisions/stream ' "$TMP/http.log" 2>/dev/null; }
million_agent() { # PORT: the agent, its state kept (or new)
	[ -n "$AGENT" ] && { kill "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=; }
	cat >"$TMP/million.yaml" <<-EOF
	interfaces:
	  - name: $IF_A
	    mode: skb
	state_dir: $TMP/mstate
	debounce: 0ms
	lists:
	  - name: crowdsec
	    crowdsec: http://127.0.0.1:$1/
	    api_key_file: $TMP/bg.key
	    update_frequency: 1h
	EOF
	start_agent "$TMP/million.yaml" "$TMP/million.log"
}
: >"$TMP/million"
: >"$TMP/million.stop"
if [[ $PARTS == *" million "* ]]; then
	mkdir -p "$TMP/www/v1/decisions"
	: >"$TMP/http.log"
	nsenter --net="/run/netns/$NS" "$BUILD/tests/httpd" -l "$TMP/http.log" "$TMP/www" \
		>"$TMP/http.port" 2>>"$TMP/http.err" {LOCK_FD}>&- &
	for _ in $(seq 1 250); do [ -s "$TMP/http.port" ] && break; sleep 0.02; done
	HPORT=$(head -n1 "$TMP/http.port")
	[ -n "$HPORT" ] || die "the test HTTP server did not start"
	for order in ascending descending; do
		say "$(count "$MILLION") decisions in $order id order, first pull"
		million_answer "$order" "$MILLION" "$TMP/www/v1/decisions/stream"
		for ((r = 1; r <= MILLION_ROUNDS; r++)); do
			[ -n "$AGENT" ] && { kill "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=; }
			in_ns "$BG" detach --all >/dev/null 2>&1
			rm -rf "$TMP/mstate"
			: >"$TMP/million.log"
			million_agent "$HPORT"
			wait_timing "$TMP/million.log" 0 300 || die "no filter from the pull of $MILLION"
			grep -q "new copy, $MILLION entries" "$TMP/million.log" || die "not $MILLION in the copy: $(grep 'new copy' "$TMP/million.log")"
			read -r seen fetch _ _ _ _ live _ <<<"$(last_timing "$TMP/million.log")"
			echo "$order $(awk -v f="$fetch" 'BEGIN { printf "%.3f", f / 1000 }') $(awk -v a="$seen" -v b="$live" 'BEGIN { printf "%.3f", b - a }') $(cpu_s "$AGENT") $(hwm_mib "$AGENT")" >>"$TMP/million"
		done
		# SIGTERM during a pull of them: the agent restarted (its copy
		# read back, then the whole set pulled again)
		n=$(gets)
		million_agent "$HPORT"
		for _ in $(seq 1 3000); do [ "$(gets)" -gt "$n" ] && break; sleep 0.01; done
		[ "$(gets)" -gt "$n" ] || die "the restarted agent did not pull"
		t0=$(now)
		kill -TERM "$AGENT"
		wait "$AGENT"
		rc=$?
		echo "$order $(secs "$t0" "$(now)") $rc" >>"$TMP/million.stop"
		AGENT=
	done
	out "#### A million decisions at the first pull"
	out
	out "| ids in | decisions | the pull (s) | from the pull's start to the filter live (s) | agent CPU by then (s) | agent peak RSS (MiB) | SIGTERM during the pull: exited after (s) |"
	out "|---|---:|---:|---:|---:|---:|---:|"
	for order in ascending descending; do
		out "| $order order | $(count "$MILLION") | $(fmt %.2f "$(med "$TMP/million" "$order" 2)") | $(fmt %.2f "$(med "$TMP/million" "$order" 3)") ($(range "$TMP/million" "$order" 3 %.2f)) | $(fmt %.2f "$(med "$TMP/million" "$order" 4)") | $(fmt %.0f "$(med "$TMP/million" "$order" 5)") | $(col "$TMP/million.stop" "$order" 2) (status $(col "$TMP/million.stop" "$order" 3)) |"
	done
	out
	out "bloomgate's agent alone (no other list), a fresh state, its first pull of a canned answer of the local API's shape (1.4.6's fields, ${MILLION_ROUNDS} rounds, medians, range in brackets), served by build/tests/httpd: the engine answers a million in descending id order too, but takes some 30 s to. The pull is the transfer with the answer parsed as it comes, the set made and its copy written; from its start to live adds the copy's parse by the rebuild, the filter's build and its swap. CPU and peak RSS are the agent's since its start. The last column: SIGTERM to an agent restarted on that state, once its pull of them was asked for (its copy read back before), to its exit."
	out
fi

# ---- 1. one decision ---------------------------------------------------------------

: >"$TMP/lat"
[[ $PARTS == *" one "* ]] && for n in 0 "$LIST_KEYS"; do
	say "one decision, bloomgate with $n list keys"
	start_agent_with "$n"
	for ((r = 1; r <= ROUNDS; r++)); do
		ip=198.18.$((n > 0 ? 1 : 0)).$r
		before=$(timings_now)
		# a random moment of the bouncers' pull periods: each round
		# otherwise starts just after bloomgate's pull that ended the
		# round before
		sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.3f", r / 32768 }')"
		t0=$(now)
		cs decisions add --ip "$ip" --duration 1h
		poll_until 30 bg_match "$ip" >"$TMP/t_bg" &
		p1=$!
		poll_until 30 fw_has "$ip" >"$TMP/t_fw" &
		p2=$!
		wait "$p1" "$p2"
		# the timing line of that rebuild (the pull that brought it)
		deadline=$((SECONDS + 10))
		while [ "$(timings_now)" -le "$before" ] && ((SECONDS < deadline)); do sleep 0.05; done
		echo "$n $(secs "$t0" "$(cat "$TMP/t_bg")") $(secs "$t0" "$(cat "$TMP/t_fw")") $(pull_live "$TMP/agent.log")" >>"$TMP/lat"
	done
	grep -q "change in place" "$TMP/agent.log" || say "(not made in place: $(grep -c 'live:' "$TMP/agent.log") rebuilds)"
	cs decisions delete --all
done
[[ $PARTS == *" one "* ]] && {
out "#### One decision: from \`cscli decisions add\` to enforced"
out
out "| keys in the filter | bloomgate (s) | firewall bouncer, nftables (s) | bloomgate: its pull (s) | bloomgate: from the pull's answer to live (s) |"
out "|---:|---:|---:|---:|---:|"
for n in 0 "$LIST_KEYS"; do
	out "| $( ((n)) && count "$n" || echo none) | $(fmt %.3f "$(med "$TMP/lat" "$n" 2)") ($(range "$TMP/lat" "$n" 2 %.2f)) | $(fmt %.3f "$(med "$TMP/lat" "$n" 3)") ($(range "$TMP/lat" "$n" 3 %.2f)) | $(fmt %.3f "$(med "$TMP/lat" "$n" 4)") | $(fmt %.3f "$(med "$TMP/lat" "$n" 5)") ($(range "$TMP/lat" "$n" 5 %.3f)) |"
done
out
out "Both pull every second, so up to a second of either is the wait for the next pull. The pull is the local API's answer (HTTP and JSON); the last column is bloomgate's own work once it returned: its decisions' copy written and parsed, the change made in the filter kept in memory, a new map filled and swapped in."
out
}

# ---- 2. bulks ------------------------------------------------------------------------

: >"$TMP/bulk"
[[ $PARTS == *" bulk "* ]] || BULKS=
[ -n "$BULKS" ] && [ -z "$AGENT" ] && start_agent_with "$LIST_KEYS"
for b in $BULKS; do
	say "a bulk of $b"
	awk -v n="$b" 'BEGIN { printf "["; for (i = 0; i < n; i++) printf "%s{\"duration\":\"4h\",\"scope\":\"ip\",\"type\":\"ban\",\"origin\":\"bench\",\"reason\":\"bulk\",\"value\":\"100.%d.%d.%d\"}", i ? "," : "", 64 + int(i / 65536), int(i / 256) % 256, i % 256; printf "]\n" }' >"$TMP/bulk.json"
	last=$(awk -v n="$b" 'BEGIN { i = n - 1; printf "100.%d.%d.%d", 64 + int(i / 65536), int(i / 256) % 256, i % 256 }')
	# the deletions before it taken by both
	fw_empty() { [ "$(fw_count)" = 0 ]; }
	poll_until 60 fw_empty >/dev/null || say "the firewall bouncer's set is not empty"
	want=$b
	before=$(timings_now)
	t0=$(now)
	cs decisions import -i "$TMP/bulk.json"
	ti=$(now)
	bg_all() { bg_match "$last" && grep -q "new copy, $((b + 1)) entries\|new copy, $b entries" "$TMP/agent.log"; }
	fw_all() { [ "$(fw_count)" -ge "$want" ]; }
	poll_until 300 bg_all >"$TMP/t_bg" &
	p1=$!
	poll_until 300 fw_all >"$TMP/t_fw" &
	p2=$!
	wait "$p1" "$p2"
	grep -q - "$TMP/t_bg" && say "bloomgate did not enforce all $b: $(grep 'new copy,\|whole\|live' "$TMP/agent.log" | tail -n 3)"
	say "bulk of $b: $(grep ' timing: ' "$TMP/agent.log" | tail -n 4 | sed 's/.*timing: //' | tr '\n' '|')"
	grep -q - "$TMP/t_fw" && say "the firewall bouncer's set has $(fw_count) of $b"
	echo "$b $(secs "$t0" "$ti") $(secs "$t0" "$(cat "$TMP/t_bg")") $(secs "$t0" "$(cat "$TMP/t_fw")") $(pull_live "$TMP/agent.log") $(fw_count)" >>"$TMP/bulk"
	cs decisions delete --all
done
# the bouncer's time, or how many it held after 300 s
fwcell() {
	local t
	t=$(med "$TMP/bulk" "$1" 4)
	if [ "$t" = - ]; then
		echo "not all after 300 s: $(col "$TMP/bulk" "$1" 7 | head -n1) of $1"
	else
		fmt %.2f "$t"
	fi
}
[ -n "$BULKS" ] && {
out "#### A bulk of decisions (\`cscli decisions import\`): from its start to every one enforced"
out
out "| decisions | the import itself (s) | bloomgate (s) | firewall bouncer, nftables (s) | bloomgate: its last pull (s) | bloomgate: from its answer to live (s) |"
out "|---:|---:|---:|---:|---:|---:|"
for b in $BULKS; do
	out "| $(count "$b") | $(fmt %.2f "$(med "$TMP/bulk" "$b" 2)") | $(fmt %.2f "$(med "$TMP/bulk" "$b" 3)") | $(fwcell "$b") | $(fmt %.3f "$(med "$TMP/bulk" "$b" 5)") | $(fmt %.3f "$(med "$TMP/bulk" "$b" 6)") |"
done
out
out "bloomgate with the $(count "$LIST_KEYS")-key list of the last part of section 1 in the same filter. The local API's stream (1.4.6) can miss decisions committed while a pull runs (seen: 50 of a 100k import never in any incremental answer, all in a whole one): bloomgate pulls the whole set again once a bulk ends and every $(awk 'BEGIN { print 60 }') s; the firewall bouncer pulls it only when it starts."
out
}

# ---- 3. a flood from banned sources ---------------------------------------------------

[[ $PARTS == *" flood "* ]] || exit 0
say "a flood from $FLOOD banned sources"
"$LIVEGEN" list 0 "$FLOOD" >"$TMP/flood.txt" || die "livegen list failed"
awk 'BEGIN { printf "[" } { printf "%s{\"duration\":\"4h\",\"scope\":\"ip\",\"type\":\"ban\",\"origin\":\"bench\",\"reason\":\"flood\",\"value\":\"%s\"}", (NR > 1 ? "," : ""), $1 }
	END { print "]" }' "$TMP/flood.txt" >"$TMP/flood.json"
# bloomgate with the decisions alone, as the bouncer; the bouncer started
# anew too, so that its set holds nothing of the bulks (its deletions of
# them can take minutes)
start_agent_with 0
start_fw
cs decisions import -i "$TMP/flood.json"
last=$(tail -n 1 "$TMP/flood.txt")
bg_flood() { bg_match "$last" && grep -q "new copy, $((FLOOD + 1)) entries\|new copy, $FLOOD entries" "$TMP/agent.log"; }
fw_flood() { [ "$(fw_count)" -ge "$FLOOD" ] && fw_has "$last" && fw_has "$(head -n 1 "$TMP/flood.txt")"; }
poll_until 300 bg_flood >/dev/null || die "bloomgate did not enforce the $FLOOD decisions"
# the bouncer's stream misses some of a bulk too (section 2): its whole
# pull at a restart takes them
FW_HAD=
if ! poll_until 30 fw_flood >/dev/null; then
	FW_HAD=$(fw_count)
	say "the firewall bouncer holds $FW_HAD of the $FLOOD decisions after 30 s: restarted"
	start_fw
	poll_until 120 fw_flood >/dev/null || die "the firewall bouncer holds $(fw_count) of the $FLOOD decisions"
fi

mac_of() { ip -n "$NS" -o link show dev "$1" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p'; }
xdp_rx() { in_ns ethtool -S "$1" | awk '/rx_queue_0_xdp_packets:/ { print $2 }'; }
# IPv4 datagrams the stack delivered to a protocol (Ip: InDelivers)
delivered() {
	in_ns awk '$1 == "Ip:" { if (!h) { for (i = 2; i <= NF; i++) if ($i == "InDelivers") f = i; h = 1 } else print $f }' /proc/net/snmp
}
# "CONF|LO COUNT|CHECK": CHECK the share the stack must get: none (all
# dropped before it) or all
FROWS=("drop|0 $FLOOD|none" "bg|0 $FLOOD|none" "nft|0 $FLOOD|none" "bg|8000000 1000000|all" "nft|8000000 1000000|all")
: >"$TMP/flood.runs"
for ((r = 1; r <= FLOOD_ROUNDS; r++)); do
	say "flood round $r of $FLOOD_ROUNDS"
	for ((k = 0; k < ${#FROWS[@]}; k++)); do
		i=$(((k + r - 1) % ${#FROWS[@]}))
		IFS='|' read -r c range _ <<<"${FROWS[$i]}"
		case $c in drop) p=$IF_DROP ;; bg) p=$IF_BG ;; *) p=$IF_NFT ;; esac
		p0=$(xdp_rx "${p}b") u0=$(delivered)
		# shellcheck disable=SC2086
		o=$(in_ns "$LIVEGEN" gen "${p}a" "$(mac_of "${p}b")" $range --match src \
			--seconds "$FLOOD_SECS" --cpu "$CPU" 2>&1) || die "livegen gen ($c): $o"
		p1=$(xdp_rx "${p}b") u1=$(delivered)
		echo "$i $r $o $((p1 - p0)) $((u1 - u0))" >>"$TMP/flood.runs"
	done
done
# per row: the median rate (Mpps) and the largest and least share delivered
awk '{ k = ++n[$1]; rate[$1, k] = $5 * 1e3 / $4; d = $5 ? $6 / $5 : 0
	if (!(($1) in lo) || d < lo[$1]) lo[$1] = d; if (!(($1) in hi) || d > hi[$1]) hi[$1] = d }
	END { for (i in n) { m = n[i]; for (a = 1; a <= m; a++) x[a] = rate[i, a]
		for (a = 2; a <= m; a++) for (b = a; b > 1 && x[b - 1] > x[b]; b--) { t = x[b]; x[b] = x[b - 1]; x[b - 1] = t }
		printf "%d %.3f %.5f %.5f\n", i, m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2, lo[i], hi[i] } }' \
	"$TMP/flood.runs" | sort -n >"$TMP/flood.med"
ffail=0
while read -r i rate lo hi; do
	IFS='|' read -r c range want <<<"${FROWS[$i]}"
	FRATE[$i]=$rate
	if [ "$want" = none ] && awk -v h="$hi" 'BEGIN { exit !(h > 0.001) }'; then
		say "CHECK FAILED: $c on $range: up to $hi of the flood reached the stack"
		ffail=1
	fi
	if [ "$want" = all ] && awk -v l="$lo" 'BEGIN { exit !(l < 0.99) }'; then
		say "CHECK FAILED: $c on $range: only $lo of the clean traffic reached the stack"
		ffail=1
	fi
done <"$TMP/flood.med"
# the median over the rounds of rate(A) / rate(B) within a round
fratio() { # A B
	awk -v a="$1" -v b="$2" '{ v[$1, $2] = $5 * 1e3 / $4; if ($2 > nr) nr = $2 }
	END { for (k = 1; k <= nr; k++) if (v[a, k] > 0 && v[b, k] > 0) x[++n] = v[a, k] / v[b, k]
		for (i = 2; i <= n; i++) for (j = i; j > 1 && x[j - 1] > x[j]; j--) { t = x[j]; x[j] = x[j - 1]; x[j - 1] = t }
		if (n) printf "%.2f", n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2 }' "$TMP/flood.runs"
}
out "#### A flood from banned sources"
out
out "| traffic | bare \`XDP_DROP\` (Mpps) | bloomgate (Mpps) | firewall bouncer, nftables (Mpps) | bloomgate / bouncer |"
out "|---|---:|---:|---:|---:|"
out "| flood: every source one of the $(count "$FLOOD") banned | ${FRATE[0]} | ${FRATE[1]} | ${FRATE[2]} | $(fratio 1 2)x |"
out "| clean: sources not banned, to the host | | ${FRATE[3]} | ${FRATE[4]} | $(fratio 3 4)x |"
out
out "The end-to-end section's method on this machine (its generator on CPU $CPU, ${FLOOD_SECS} s per row and round, $FLOOD_ROUNDS rounds in a rotated order; ratios are medians of the ratios within a round): each 60-byte UDP frame from a new source, to $HOST_IP (an address of the receiving end, a closed port), redirected into a veth pair. The $(count "$FLOOD") decisions (\`cscli decisions import\`) ban the flood's sources; the rows start once both bouncers hold them all$([ -n "$FW_HAD" ] && echo " (the firewall bouncer held $FW_HAD of them 30 s after the import, its stream having missed the others, and was restarted to pull the whole set)"). bloomgate's agent, with these decisions alone in its filter, drops them at the XDP hook (native, \`match: src\`); the firewall bouncer's rule \`ip saddr @crowdsec-blacklists drop\` drops them in its input chain, after the stack has taken the frame, behind an \`XDP_PASS\` program (a veth takes redirected frames only with one). Checked on every run: no frame of a flood was delivered by the stack (\`InDelivers\` of /proc/net/snmp), and at least 99 % of the clean traffic did. Clean traffic costs the stack's delivery of each frame on both, which bounds its rate."
out
((ffail == 0)) || die "the flood's checks failed"
