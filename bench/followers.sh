#!/bin/bash
# The control socket under hostile readers, part of the agent's section of
# `make bench` (called by bench/run.sh; runs alone too): how long root's
# `status` takes while followers of the events that never read hold their
# connections and a flood of flagged packets fills the ring buffer.
#
#   bench/followers.sh [--quick]      markdown on stdout, progress on stderr
#
# The agent attaches (native mode, action flag) to one end of a veth pair
# in a network namespace of its own (bgfol) with a list of 1000 addresses;
# build/livegen sends live frames to them into the other end for SECONDS
# from CPU 0, every one flagged: an event each. Meanwhile build/tests/ctlhold
# opens N connections asking `events` and never reads them, as users
# other than root (uids FOL_UID, FOL_UID+1, ...: one user's bound and the
# agent's bound both show; the socket is opened to them, 0666, for the
# run), and build/ctlprobe asks `status` on the control socket and GETs
# /metrics every 20 ms (bench/ctlprobe.c). Per row: the followers asked
# and held, the offered rate, ctlprobe's status p50/p99/max and timeouts,
# the agent's peak RSS, and what its metrics counted (followers cut off,
# events not sent to them, refusals). Medians of ROUNDS rounds.
#
# Environment: BUILD (default build); FOL_SECONDS (default 10, --quick 5);
# FOL_ROUNDS (default 3, --quick 1); FOL_COUNTS (followers asked per row,
# default "0 200 1000"); FOL_USERS (users they are spread over, default 8);
# FOL_UID (the first uid, default 61000).
set -u
cd "$(dirname "$0")/.." || exit 1
export LC_ALL=C
# shellcheck source=scripts/lib-require.sh
source scripts/lib-require.sh
require_cmds ip nsenter setpriv flock awk sed grep sort mkdir mktemp chmod cat sleep seq getconf

BUILD=${BUILD:-build}
BG=$BUILD/bloomgate
GEN=$BUILD/livegen
PROBE=$BUILD/ctlprobe
HOLD=$BUILD/tests/ctlhold
SECS=${FOL_SECONDS:-10}
ROUNDS=${FOL_ROUNDS:-3}
if [ "${1:-}" = --quick ]; then
	SECS=${FOL_SECONDS:-5} ROUNDS=${FOL_ROUNDS:-1}
fi
COUNTS=${FOL_COUNTS:-0 200 1000}
USERS=${FOL_USERS:-8}
UID0=${FOL_UID:-61000}
NS=bgfol IF_A=bgf0 IF_B=bgf1
OTHER=02:00:00:00:00:99 # a frame for another host: dropped by the stack once passed
export BLOOMGATE_PIN_DIR=/sys/fs/bpf/bgfol
PIN=$BLOOMGATE_PIN_DIR
SOCK=/run/bloomgate/${PIN//\//_}.sock
METRICS=127.0.0.1:9575
LOCK=${E2E_LOCK:-/run/bloomgate-e2e.lock}
MARKER=/run/bloomgate-bench-followers.state
TMP=
AGENT=''

say() { echo "followers.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}
# shellcheck source=bench/lib.sh
source bench/lib.sh
cleanup() { bench_cleanup_ns bloomgate-bench-followers; }
in_ns() { nsenter --net="/run/netns/$NS" "$@"; }
# The agent's CPU time so far, in clock ticks (utime + stime).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$AGENT/stat"; }
HZ=$(getconf CLK_TCK)

metric() { # NAME{LABELS}
	in_ns bash -c 'exec 3<>/dev/tcp/'"${METRICS%:*}/${METRICS#*:}"' &&
		printf "GET /metrics HTTP/1.0\r\n\r\n" >&3 && cat <&3' 2>/dev/null |
		awk -v n="$1" '$1 == n { print $2 }'
}

for f in "$BG" "$GEN" "$PROBE" "$HOLD"; do
	[ -x "$f" ] || die "$f is missing: run make bench"
done
bench_begin bloomgate-bench-followers
ip netns add "$NS" || die "cannot add the namespace $NS"
ip -n "$NS" link set lo up
ip -n "$NS" link add "$IF_A" type veth peer name "$IF_B" &&
	ip -n "$NS" link set "$IF_A" up && ip -n "$NS" link set "$IF_B" up ||
	die "cannot add the veth pair"
"$GEN" list 0 1000 >"$TMP/list.txt" || die "livegen list failed"
mkdir -p "$TMP/state"
cat >"$TMP/agent.yaml" <<EOF
interfaces:
  - name: $IF_A
    mode: native
    action: flag
state_dir: $TMP/state
metrics: $METRICS
lists:
  - name: flood
    path: $TMP/list.txt
EOF
start_agent "$TMP/agent.yaml" "$TMP/agent.log"
wait_timing "$TMP/agent.log" 0 60 || die "the agent published no filter"
chmod 0666 "$SOCK" || die "cannot open the control socket to the followers"

# One round of a row: appends "N HELD FRAMES NS N OK TIMEOUT P50 P99 MAX
# RSS_KB CUT UNSENT REFUSED CPU%" to $TMP/runs.
one() { # FOLLOWERS
	local n=$1 u per pids=() held=0 c0 u0 r0 out rss t0 t1
	per=$(((n + USERS - 1) / USERS))
	c0=$(metric bloomgate_control_followers_cut_total)
	u0=$(metric bloomgate_control_events_unsent_total)
	r0=$(($(metric 'bloomgate_control_refused_total{reason="followers"}') +
		$(metric 'bloomgate_control_refused_total{reason="connections"}')))
	for ((u = 0; u < USERS && n > 0; u++)); do
		k=$((n - u * per < per ? n - u * per : per))
		((k > 0)) || break
		: >"$TMP/hold$u"
		nsenter --net="/run/netns/$NS" setpriv --reuid=$((UID0 + u)) \
			--regid=$((UID0 + u)) --clear-groups -- "$HOLD" -n "$k" -t 600 "$SOCK" \
			>"$TMP/hold$u" 2>&1 {LOCK_FD}>&- &
		pids+=($!)
	done
	for ((u = 0; u < ${#pids[@]}; u++)); do
		for _ in $(seq 1 1500); do grep -qx ready "$TMP/hold$u" && break; sleep 0.02; done
		held=$((held + $(sed -n 's/^held //p' "$TMP/hold$u")))
	done
	in_ns "$PROBE" "$SOCK" "$METRICS" "$((SECS + 1))" 20 >"$TMP/probe" {LOCK_FD}>&- &
	local probe=$!
	sleep 0.5
	t0=$(cpu_ticks)
	out=$(in_ns "$GEN" gen "$IF_B" "$OTHER" 0 1000 --seconds "$SECS" --cpu 0 2>&1) ||
		die "livegen gen: $out"
	t1=$(cpu_ticks)
	wait "$probe"
	rss=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$AGENT/status")
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	read -r pn pok pto p50 p99 pmax < <(awk '$1 == "status" { for (i = 2; i <= 8; i++) { sub(/^[a-z0-9]*=/, "", $i) } print $2, $3, $4, $6, $7, $8 }' "$TMP/probe")
	echo "$n $held $out $pn $pok $pto $p50 $p99 $pmax $rss" \
		"$(($(metric bloomgate_control_followers_cut_total) - c0))" \
		"$(($(metric bloomgate_control_events_unsent_total) - u0))" \
		"$(($(metric 'bloomgate_control_refused_total{reason="followers"}') +
			$(metric 'bloomgate_control_refused_total{reason="connections"}') - r0))" \
		"$(awk -v d=$((t1 - t0)) -v hz="$HZ" -v s="$SECS" 'BEGIN { print 100 * d / hz / s }')" >>"$TMP/runs"
}

: >"$TMP/runs"
for r in $(seq 1 "$ROUNDS"); do
	for n in $COUNTS; do
		say "round $r of $ROUNDS: $n followers, $SECS s of flood"
		one "$n"
	done
done

echo "### The control socket under hostile readers"
echo
echo "Root's \`status\` on the agent's control socket (build/ctlprobe, every 20 ms) during $SECS s of a flood of flagged packets (build/livegen, every frame an event), while N connections from $USERS users other than root ask \`events\` and never read (build/tests/ctlhold); medians of $ROUNDS rounds (min-max). Held: the followers the agent kept (16 a user, 64 in all); refused: the others, each told why. Cut off, not sent: what the agent's metrics counted in the round (events not sent: summed over the followers, each of which lost nearly every event of the flood). Agent CPU: its CPU time during the flood over the flood's time (the loop consumes the ring buffer 256 events at a time; its workers are idle). RSS: the agent's peak (VmHWM) after the round."
echo
echo "| row | followers asked | held | offered (Mpps) | status answers | timeouts | p50 (ms) | p99 (ms) | max (ms) | agent CPU (%) | agent peak RSS (MiB) | cut off | events not sent | refused |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for n in $COUNTS; do
	awk -v n="$n" '$1 == n' "$TMP/runs" >"$TMP/row"
	mpps=$(awk '{ print $3 / $4 * 1000 }' "$TMP/row" | median)
	printf '| root status p99 with %s non-reading followers during a flagged flood | %s | %s | %s | %s | %s | %s | **%s** (%s) | %s | %s | %s | %s | %s | %s |\n' \
		"$n" "$n" "$(col "$TMP/row" "$n" 2 | median)" "$(fmt %.2f "$mpps")" \
		"$(col "$TMP/row" "$n" 6 | median)" "$(col "$TMP/row" "$n" 7 | median)" \
		"$(fmt %.1f "$(col "$TMP/row" "$n" 8 | median)")" \
		"$(fmt %.1f "$(col "$TMP/row" "$n" 9 | median)")" "$(range "$TMP/row" "$n" 9 %.1f)" \
		"$(fmt %.1f "$(col "$TMP/row" "$n" 10 | median)")" \
		"$(fmt %.0f "$(col "$TMP/row" "$n" 15 | median)")" \
		"$(fmt %.1f "$(col "$TMP/row" "$n" 11 | median | awk '{ print ($1 == "-" ? "-" : $1 / 1024) }')")" \
		"$(col "$TMP/row" "$n" 12 | median)" "$(col "$TMP/row" "$n" 13 | median)" \
		"$(col "$TMP/row" "$n" 14 | median)"
done
echo
