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
	crowdsec-firewall-bouncer curl seq sort mktemp

BUILD=${BUILD:-build}
BG=$BUILD/bloomgate
GEN=$BUILD/genaddrs
ROUNDS=${CS_ROUNDS:-9}
LIST_KEYS=${CS_LIST_KEYS:-10000000}
BULKS=${CS_BULKS:-10000 100000}
if [ "${1:-}" = --quick ]; then
	ROUNDS=${CS_ROUNDS:-2} LIST_KEYS=${CS_LIST_KEYS:-100000} BULKS=${CS_BULKS:-1000}
fi
NS=bgcsb IF_A=bgc0 IF_B=bgc1
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

for f in "$BG" "$GEN"; do
	[ -x "$f" ] || die "$f is missing: run make bench"
done
bench_begin bloomgate-bench-crowdsec
ip netns add "$NS" && ip -n "$NS" link set lo up &&
	ip -n "$NS" link add "$IF_A" type veth peer name "$IF_B" &&
	ip -n "$NS" link set "$IF_A" up && ip -n "$NS" link set "$IF_B" up ||
	die "cannot build the namespace"
in_ns tests/crowdsec.sh start "$TMP/cs" "$PORT" >/dev/null || die "cannot start the local API"
in_ns tests/crowdsec.sh bouncer "$TMP/cs" bloomgate >"$TMP/bg.key" || die "bouncer"
fwkey=$(in_ns tests/crowdsec.sh bouncer "$TMP/cs" firewall) || die "bouncer"
sed -e "s|^mode: .*|mode: nftables|" -e "s|^api_key: .*|api_key: $fwkey|" \
	-e "s|^api_url: .*|api_url: http://127.0.0.1:$PORT/|" \
	-e "s|^update_frequency: .*|update_frequency: 1s|" -e "s|^log_mode: .*|log_mode: stdout|" \
	-e "s|^daemonize: .*|daemonize: false|" -e "s|^pid_dir: .*|pid_dir: $TMP/|" \
	/etc/crowdsec/bouncers/crowdsec-firewall-bouncer.yaml |
	sed '/^prometheus:/,$ s/enabled: true/enabled: false/' >"$TMP/fw.yaml"
in_ns crowdsec-firewall-bouncer -c "$TMP/fw.yaml" >"$TMP/fw.log" 2>&1 {LOCK_FD}>&- &
FW=$!
for _ in $(seq 1 500); do
	in_ns nft list set ip crowdsec crowdsec-blacklists >/dev/null 2>&1 && break
	sleep 0.02
done
in_ns nft list set ip crowdsec crowdsec-blacklists >/dev/null 2>&1 || die "the firewall bouncer made no set: $(tail -n 2 "$TMP/fw.log")"

out "### CrowdSec: bloomgate beside crowdsec-firewall-bouncer"
out
out "Produced by \`bench/crowdsec.sh\` (\`bench/run.sh --only crowdsec\` runs it alone), on the machine above. One CrowdSec local API (Debian's crowdsec $(crowdsec -version 2>&1 | sed -n 's/.*version: v*\([^-]*\).*/\1/p' | head -n1), alone, SQLite), two bouncers pulling its stream every second: bloomgate's agent (its filter in skb mode on a veth) and Debian's crowdsec-firewall-bouncer in nftables mode, in one network namespace on this machine. Medians over $ROUNDS rounds (range in brackets)."
out

# ---- 1. one decision ---------------------------------------------------------------

: >"$TMP/lat"
for n in 0 "$LIST_KEYS"; do
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

# ---- 2. bulks ------------------------------------------------------------------------

: >"$TMP/bulk"
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
