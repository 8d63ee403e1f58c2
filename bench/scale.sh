#!/bin/bash
# The scale section of `make bench` (called by bench/run.sh; runs alone
# too): the control plane at 1M, 10M and 100M keys.
#
#   bench/scale.sh [--quick]      markdown on stdout, progress on stderr
#
# 1. `bloomgate load LIST` (the defaults: the exact stage on) of a list of
#    N distinct random IPv4 /32 addresses (build/genaddrs, a fixed seed),
#    bloomgate attached in skb mode to one end of a veth pair: the wall
#    time around the command, load's own per-stage times, its peak RSS
#    (GNU time's maximum resident set size, from the kernel's rusage of
#    the process) and the filter map's size from load's report, so that
#    the memory beyond the map shows.
# 2. `bloomgate agent` with one `path:` list of N addresses on an empty
#    state directory: the time from its start to the first filter live,
#    the store's write and its bytes on disk, `bloomgate check` latency on
#    a listed address; then the list replaced by rename with one address
#    added: the time until `bloomgate check NEWADDR` says match, and the
#    control socket's and /metrics' answers during that rebuild
#    (build/ctlprobe: a request every 20 ms each, 5 s timeout).
#
# The attachment, the agent and the probe run in a network namespace of
# the script's own (bgscale), pins under /sys/fs/bpf/bgscale; nsenter, not
# `ip netns exec` (that gives each command a fresh mount namespace, and
# bpffs pins made there are lost). Everything is removed on exit, and a
# run that was killed is cleaned up by the next one (marker file below).
# The project's e2e lock is held throughout (bench/lib.sh).
#
# Environment: BUILD (default build); SCALE_SIZES (keys, default
# "1000000 10000000 100000000", --quick "100000 1000000"); SCALE_ROUNDS
# (default 3, --quick 1; each figure is the median over the rounds);
# SCALE_AGENT_100M=0 leaves out the agent at sizes of 100M and more (on by
# default; about 2.5 GB of memory and a minute a round there); SCALE_CHECKS (check runs
# timed, default 20).
set -u
cd "$(dirname "$0")/.." || exit 1
export LC_ALL=C # "." in $EPOCHREALTIME and in awk's numbers
# shellcheck source=scripts/lib-require.sh
source scripts/lib-require.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh
# /usr/bin/time by its path: `time` alone is bash's keyword, which has no
# memory figure (and which `command -v` would take for the program)
require_cmds ip nsenter flock sync awk sed grep mv cp rm rmdir mkdir mktemp \
	head tail cut seq sleep cat stat find sort /usr/bin/time

BUILD=${BUILD:-build}
BG=$BUILD/bloomgate
GEN=$BUILD/genaddrs
PROBE=$BUILD/ctlprobe
SIZES=${SCALE_SIZES:-1000000 10000000 100000000}
ROUNDS=${SCALE_ROUNDS:-3}
if [ "${1:-}" = --quick ]; then
	SIZES=${SCALE_SIZES:-100000 1000000} ROUNDS=${SCALE_ROUNDS:-1}
fi
AGENT_100M=${SCALE_AGENT_100M:-1}
CHECKS=${SCALE_CHECKS:-20}
INTERVAL=20   # ms between two requests of each probe
SEED=20260901 # genaddrs'
NS=bgscale IF_A=bgs0 IF_B=bgs1
export BLOOMGATE_PIN_DIR=/sys/fs/bpf/bgscale
PIN=$BLOOMGATE_PIN_DIR
SOCK=/run/bloomgate/${PIN//\//_}.sock # the agent's control socket (bg_run_path)
METRICS=127.0.0.1:9571                # in the namespace: nobody else's
LOCK=${E2E_LOCK:-/run/bloomgate-e2e.lock}
MARKER=/run/bloomgate-bench-scale.state
# bloomgate's defaults (--max-entries, --max-list-bytes, a list's
# max_bytes in the agent): a list past one gets a bound that fits it
ENTRIES_MAX=100000000 LIST_BYTES_MAX=4294967296 SRC_BYTES_MAX=536870912
TMP=
AGENT='' PROBE_PID=''

say() { echo "scale.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}

# ---- cleanup ------------------------------------------------------------

cleanup() { bench_cleanup_ns bloomgate-bench-scale; }

# ---- helpers ------------------------------------------------------------

in_ns() { nsenter --net="/run/netns/$NS" "$@"; }

# "match" or "no match" for one address
check() {
	"$BG" check "$1" 2>/dev/null | sed -n "s#^$1: \(no match\|match\).*#\1#p"
}



stop_agent() {
	[ -n "$AGENT" ] || return 0
	kill "$AGENT" 2>/dev/null
	wait "$AGENT" 2>/dev/null
	AGENT=
	# the next agent starts from nothing: no adopted filter, no attachment
	in_ns "$BG" detach --all >/dev/null 2>&1
}

# Bytes of the state directory but the lists' copies (lists/): "TOTAL
# name:bytes ...".
store_bytes() { # STATE_DIR
	find "$1" -path "$1/lists" -prune -o -type f -printf '%P %s\n' |
		sort | awk '{ t += $2; s = s " " $1 ":" $2 } END { print t + 0 s }'
}

# A new address: the next of the spare list (genaddrs -k N: in no list of
# N) that the live filter does not already match (a false positive would
# make "check says match" meaningless). Sets NEW.
SPARE_NEXT=1
new_addr() {
	while :; do
		NEW=$(sed -n "${SPARE_NEXT}p" "$TMP/spare.txt")
		SPARE_NEXT=$((SPARE_NEXT + 1))
		[ -n "$NEW" ] || { say "out of spare addresses"; return 1; }
		[ "$(check "$NEW")" = "no match" ] && return 0
	done
}

# Polls check until ADDR matches (bounded); prints the time it first did.
# Every 10 ms, so the poller does not take a core from the agent.
wait_match() { # ADDR SECONDS
	local deadline=$((SECONDS + $2))
	while [ "$(check "$1")" != match ]; do
		((SECONDS >= deadline)) && return 1
		sleep 0.01
	done
	echo "$EPOCHREALTIME"
}

status_kb() { # PID FIELD: kB from /proc/PID/status
	sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status"
}

# One probe's line of ctlprobe as "n ok timeout error p50 p99 max stall".
probe_fields() { # OUT NAME
	awk -v p="$2" '$1 == p { s = ""; for (i = 2; i <= NF; i++) { sub(/^[a-z0-9]*=/, "", $i); s = s (i > 2 ? " " : "") $i }; print s }' "$1"
}

# ---- setup --------------------------------------------------------------

for f in "$BG" "$GEN" "$PROBE"; do
	[ -x "$f" ] || die "$f is missing: run make bench"
done
for n in $SIZES; do
	case $n in '' | *[!0-9]*) die "SCALE_SIZES: '$n' is not a number of keys" ;; esac
done
bench_begin bloomgate-bench-scale

if ! { ip netns add "$NS" &&
	ip -n "$NS" link set lo up &&
	ip -n "$NS" link add "$IF_A" type veth peer name "$IF_B" &&
	ip -n "$NS" link set "$IF_A" up &&
	ip -n "$NS" link set "$IF_B" up; }; then
	die "cannot build the namespace"
fi
T0=$SECONDS

out() { echo "$@"; }

out "### Scale: the control plane at $(for n in $SIZES; do printf '%s ' "$(count "$n")"; done | sed 's/ $//; s/ /, /g') keys"
out
out "Produced by \`bench/scale.sh\` (\`bench/run.sh --only scale\` runs it alone), on the machine above. Lists: N distinct random IPv4 /32 addresses, one a line, from \`build/genaddrs\` (fixed seed; a smaller list is the start of a larger one), written to /tmp just before they are used (so read from the page cache). Each figure is the median over $ROUNDS round(s), each round on its own."
out

# ---- 1. bloomgate load -----------------------------------------------------

in_ns "$BG" attach "$IF_A" --mode skb >/dev/null || die "cannot attach to $IF_A"
# the process's own baseline: a load of one address
"$GEN" -s "$SEED" 1 >"$TMP/one.txt"
/usr/bin/time -f %M -o "$TMP/rss" "$BG" load "$TMP/one.txt" >"$TMP/load.out" 2>&1 ||
	die "bloomgate load of one address failed: $(tail -3 "$TMP/load.out")"
rss_one=$(cat "$TMP/rss")
: >"$TMP/load.rows"
: >"$TMP/gen.rows"
for n in $SIZES; do
	say "load: generating $(count "$n") addresses"
	t1=$EPOCHREALTIME
	"$GEN" -s "$SEED" "$n" >"$TMP/list.txt" || die "genaddrs failed"
	t2=$EPOCHREALTIME
	bytes=$(stat -c %s "$TMP/list.txt")
	echo "$n $t1 $t2 $bytes" >>"$TMP/gen.rows"
	extra=()
	((n > ENTRIES_MAX)) && extra+=(--max-entries "$n")
	((bytes > LIST_BYTES_MAX)) && extra+=(--max-list-bytes "$bytes")
	for r in $(seq 1 "$ROUNDS"); do
		say "load: $(count "$n"), round $r"
		t1=$EPOCHREALTIME
		/usr/bin/time -f %M -o "$TMP/rss" "$BG" load "${extra[@]}" "$TMP/list.txt" \
			>"$TMP/load.out" 2>&1
		rc=$?
		t2=$EPOCHREALTIME
		if [ "$rc" -ne 0 ]; then
			say "bloomgate load failed (exit $rc):"
			tail -5 "$TMP/load.out" >&2
			exit 1
		fi
		# time: T ms (parse P, build B, swap S); memory: X MiB (...)
		stages=$(sed -n 's/^time: *\([0-9.]*\) ms (parse \([0-9.]*\), build \([0-9.]*\), swap \([0-9.]*\)).*/\1 \2 \3 \4/p' "$TMP/load.out")
		map=$(awk '$1 == "memory:" { u = $3; x = $2;
			print x * (u == "MiB" ? 1048576 : u == "KiB" ? 1024 : 1) }' "$TMP/load.out")
		keys=$(sed -n 's/^expansion:.* -> \([0-9]*\) Bloom keys.*/\1/p' "$TMP/load.out")
		{ [ -n "$stages" ] && [ -n "$map" ]; } || die "cannot read load's report: $(cat "$TMP/load.out")"
		[ "$keys" = "$n" ] || die "load built $keys keys of $n"
		echo "$n $r $(awk -v a="$t1" -v b="$t2" 'BEGIN { print (b - a) * 1e3 }') $stages $(cat "$TMP/rss") $map" >>"$TMP/load.rows"
	done
	rm -f "$TMP/list.txt"
done
in_ns "$BG" detach --all >/dev/null 2>&1

out "#### \`bloomgate load\` of N addresses"
out
out "wall: around the command (exec to exit); total, parse, plan + build, swap: load's own report (its \`time:\` line; it prints plan and build as one figure); other: wall - total (start, the load record, freeing and exit); peak RSS: the process's maximum resident set (GNU time, the kernel's rusage); filter map: load's \`memory:\` line; RSS - map: what the process held beyond one copy of the map's bytes. Times in ms unless marked."
out
out "| keys | list (MiB) | wall (s) | wall, min-max (s) | total | parse | plan + build | swap | other | peak RSS (MiB) | filter map (MiB) | RSS - map (MiB) | RSS - map per key (B) |"
out "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $SIZES; do
	bytes=$(col "$TMP/gen.rows" "$n" 4)
	wall=$(med "$TMP/load.rows" "$n" 3)
	total=$(med "$TMP/load.rows" "$n" 4)
	other=$(awk -v n="$n" '$1 == n { print $3 - $4 }' "$TMP/load.rows" | median)
	rss=$(med "$TMP/load.rows" "$n" 8)
	map=$(med "$TMP/load.rows" "$n" 9)
	beyond=$(awk -v r="$rss" -v m="$map" 'BEGIN { print r * 1024 - m }')
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
		"$(count "$n")" "$(mib "$bytes")" "$(fmt %.2f "$(awk -v w="$wall" 'BEGIN { print w / 1e3 }')")" \
		"$(awk -v n="$n" '$1 == n { print $3 / 1e3 }' "$TMP/load.rows" | sort -g |
			awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }')" \
		"$(fmt %.0f "$total")" "$(fmt %.0f "$(med "$TMP/load.rows" "$n" 5)")" \
		"$(fmt %.0f "$(med "$TMP/load.rows" "$n" 6)")" "$(fmt %.1f "$(med "$TMP/load.rows" "$n" 7)")" \
		"$(fmt %.0f "$other")" "$(mib "$((rss * 1024))")" "$(mib "$map")" "$(mib "$beyond")" \
		"$(fmt %.1f "$(awk -v b="$beyond" -v n="$n" 'BEGIN { print b / n }')")"
done
out
gen_note=
while read -r n t1 t2 bytes; do
	gen_note="${gen_note:+$gen_note, }$(count "$n") lines ($(mib "$bytes") MiB) in $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", b - a }') s"
done <"$TMP/gen.rows"
out "A load of one address peaks at $(mib "$((rss_one * 1024))") MiB RSS (the process's own: libraries, the BPF object, buffers), part of every row's RSS - map."
out "The generator wrote $gen_note, to a file on /tmp."
out

# ---- 2. the agent ----------------------------------------------------------

AGENT_SIZES=
for n in $SIZES; do
	if ((n < 100000000)) || [ "$AGENT_100M" = 1 ]; then AGENT_SIZES="$AGENT_SIZES $n"; fi
done
AGENT_SIZES=${AGENT_SIZES# }

config() { # STATE-DIR LIST N BYTES
	cat <<EOF
interfaces:
  - name: $IF_A
    mode: skb
state_dir: $1
debounce: 0ms
metrics: $METRICS
EOF
	# the list plus the appended line, past the defaults only when needed
	(($3 + 100 > ENTRIES_MAX)) && echo "max_entries: $(($3 * 2))"
	(($4 + 100 > LIST_BYTES_MAX)) && echo "max_list_bytes: $(($4 * 2))"
	cat <<EOF
lists:
  - name: scale
    path: $2
EOF
	(($4 + 100 > SRC_BYTES_MAX)) && echo "    max_bytes: $(($4 * 2))"
	return 0
}

# One agent round at N: prints "N r start_live read parse plan build swap
# store_ms store_bytes hwm_kb check_ms mv_live mv_match store2_ms
# store2_bytes" and writes the probe's lines to $TMP/probe.N.r.
agent_round() { # N R
	local n=$1 r=$2 st=$TMP/state dir=$TMP/agent log t_start tl sb c t_mv t_match t2 i \
		wait_s checks=() a b hwm
	log=$TMP/agent.$n.$r.log
	wait_s=$((300 + n * 30 / 1000000))
	rm -rf "$st"
	cp "$TMP/base.txt" "$dir/list.txt" || return 1
	config "$st" "$dir/list.txt" "$n" "$(stat -c %s "$TMP/base.txt")" >"$TMP/agent.yaml"
	t_start=$EPOCHREALTIME
	start_agent "$TMP/agent.yaml" "$log"
	wait_timing "$log" 0 "$wait_s" || return 1
	tl=$(last_timing "$log")
	[ -n "$tl" ] || { say "no timing line in $log"; return 1; }
	grep -q ' filter 1 live: ' "$log" || { say "no 'filter 1 live' line in $log"; return 1; }
	sleep 1 # idle: the store is written (before the timing line), nothing runs
	# and the disk idle too: the rounds before left gigabytes of copies and
	# indexes to write back, whose I/O a check's page faults would queue
	# behind (check is timed, not the kernel's writeback)
	sync
	sb=$(store_bytes "$st")
	hwm=$(status_kb "$AGENT" VmHWM)
	[ "$(check "$INLIST")" = match ] || { say "$INLIST (listed) does not match"; return 1; }
	for i in $(seq 1 "$CHECKS"); do
		a=$EPOCHREALTIME
		"$BG" check "$INLIST" >/dev/null 2>&1
		b=$EPOCHREALTIME
		checks+=("$(awk -v a="$a" -v b="$b" 'BEGIN { print (b - a) * 1e3 }')")
	done
	new_addr || return 1
	cp "$TMP/base.txt" "$dir/list.tmp" && echo "$NEW" >>"$dir/list.tmp" || return 1
	c=$(timings "$log")
	nsenter --net="/run/netns/$NS" "$PROBE" -o "$TMP/probe.$n.$r.samples" "$SOCK" "$METRICS" 3600 "$INTERVAL" \
		>"$TMP/probe.$n.$r" {LOCK_FD}>&- &
	PROBE_PID=$!
	t_mv=$EPOCHREALTIME
	mv "$dir/list.tmp" "$dir/list.txt"
	t_match=$(wait_match "$NEW" "$wait_s") || { say "$NEW not matched within $wait_s s"; return 1; }
	wait_timing "$log" "$c" "$wait_s" || return 1
	sleep 0.1
	kill -TERM "$PROBE_PID" 2>/dev/null
	wait "$PROBE_PID" || { say "ctlprobe failed"; return 1; }
	PROBE_PID=
	t2=$(last_timing "$log")
	sleep 1
	echo "$n $r $(echo "$t_start $tl" | awk '{ print ($8 - $1) * 1e3, $3, $4, $5, $6, $7, $9 }') ${sb%% *} $hwm" \
		"$(printf '%s\n' "${checks[@]}" | median)" \
		"$(echo "$t_mv $t_match $t2" | awk '{ print ($9 - $1) * 1e3, ($2 - $1) * 1e3, $10 }')" \
		"$(store_bytes "$st" | cut -d' ' -f1)"
	say "store files: $sb"
	echo "$sb" >"$TMP/store.$n"
	stop_agent
	rm -rf "$st"
}

: >"$TMP/agent.rows"
mkdir -p "$TMP/agent"
for n in $AGENT_SIZES; do
	say "agent: generating $(count "$n") addresses"
	"$GEN" -s "$SEED" "$n" >"$TMP/base.txt" || die "genaddrs failed"
	"$GEN" -s "$SEED" -k "$n" 50 >"$TMP/spare.txt" || die "genaddrs failed"
	INLIST=$("$GEN" -s "$SEED" -k $((n / 2)) 1) # the list's middle line
	SPARE_NEXT=1
	for r in $(seq 1 "$ROUNDS"); do
		say "agent: $(count "$n"), round $r"
		agent_round "$n" "$r" >>"$TMP/agent.rows" || exit 1
	done
	rm -f "$TMP/base.txt" "$TMP/agent/list.txt"
done

if [ -n "$AGENT_SIZES" ]; then
	out "#### The agent with one list of N addresses"
	out
	out "\`$BG agent\` on an empty state directory, one \`path:\` list, \`debounce: 0ms\`, attached in skb mode, \`/metrics\` on; a new agent each round. start to live: from the agent's start to its first filter live (its timing line's \"live at\", when \"filter 1 live\" is logged); read (the list's copy into state_dir; the rebuild's own parse judges it), parse, plan, build, swap: that timing line's stages; store: its store write after the swap (the list's provenance index: every entry with its line, on the agent's store thread); store on disk: every file of the state directory but the lists' copies (lists/), one second after the timing line; VmHWM: the agent's peak resident set then; check: \`bloomgate check ADDR\` of a listed address (the list's middle line) run $CHECKS times with the agent idle and the disk written back (\`sync\`), the median, around the command. Times in ms unless marked."
	out
	out "| keys | start to live (s) | read | parse | plan | build | swap | store (s) | store on disk (MiB) | store per entry (B) | VmHWM (MiB) | check (ms) |"
	out "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for n in $AGENT_SIZES; do
		sbytes=$(med "$TMP/agent.rows" "$n" 10)
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(count "$n")" \
			"$(fmt %.2f "$(awk -v x="$(med "$TMP/agent.rows" "$n" 3)" 'BEGIN { print x / 1e3 }')")" \
			"$(fmt %.0f "$(med "$TMP/agent.rows" "$n" 4)")" "$(fmt %.0f "$(med "$TMP/agent.rows" "$n" 5)")" \
			"$(fmt %.0f "$(med "$TMP/agent.rows" "$n" 6)")" "$(fmt %.0f "$(med "$TMP/agent.rows" "$n" 7)")" \
			"$(fmt %.1f "$(med "$TMP/agent.rows" "$n" 8)")" \
			"$(fmt %.1f "$(awk -v x="$(med "$TMP/agent.rows" "$n" 9)" 'BEGIN { print x / 1e3 }')")" \
			"$(mib "$sbytes")" "$(fmt %.1f "$(awk -v b="$sbytes" -v n="$n" 'BEGIN { print b / n }')")" \
			"$(mib "$(($(med "$TMP/agent.rows" "$n" 11) * 1024))")" \
			"$(fmt %.1f "$(med "$TMP/agent.rows" "$n" 12)")"
	done
	out
	for n in $AGENT_SIZES; do
		out "Store files at $(count "$n") (last round, bytes): $(cut -d' ' -f2- "$TMP/store.$n" | sed 's/ /, /g')."
	done
	out
	out "#### One address appended to the list of N (replaced by rename), the agent running"
	out
	out "mv to live: the mv to the rebuild's \"live at\"; check says match: the mv to the first \`bloomgate check NEWADDR\` (a process, polled every 10 ms) that said match; store: the rebuild's store write after the swap; store on disk: as above, one second after that rebuild. During the rebuild (from the mv to 0.1 s after its timing line, store included), \`build/ctlprobe\` sent \`status\` on the control socket and \`GET /metrics\` each every ${INTERVAL} ms (the next request at once when one took longer; a request unanswered after 5 s is a timeout and the next one starts): p50, p99 and max of the answered requests, timeouts, and the longest stretch with no answer (stall). Times in ms unless marked."
	out
	out "| keys | mv to live | check says match | store (s) | store on disk (MiB) | status: requests | p50 | p99 | max | timeouts | stall | /metrics: requests | p50 | p99 | max | timeouts | stall |"
	out "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for n in $AGENT_SIZES; do
		row="| $(count "$n") | $(fmt %.0f "$(med "$TMP/agent.rows" "$n" 13)") | $(fmt %.0f "$(med "$TMP/agent.rows" "$n" 14)")"
		row="$row | $(fmt %.1f "$(awk -v x="$(med "$TMP/agent.rows" "$n" 15)" 'BEGIN { print x / 1e3 }')") | $(mib "$(med "$TMP/agent.rows" "$n" 16)")"
		for p in status metrics; do
			: >"$TMP/probe.rows"
			for r in $(seq 1 "$ROUNDS"); do
				echo "x $(probe_fields "$TMP/probe.$n.$r" "$p")" >>"$TMP/probe.rows"
			done
			# n ok timeout error p50 p99 max stall, as fields 2..9
			row="$row | $(fmt %.0f "$(med "$TMP/probe.rows" x 2)") | $(fmt %.2f "$(med "$TMP/probe.rows" x 6)")"
			row="$row | $(fmt %.1f "$(med "$TMP/probe.rows" x 7)") | $(fmt %.1f "$(med "$TMP/probe.rows" x 8)")"
			row="$row | $(fmt %.0f "$(med "$TMP/probe.rows" x 4)") | $(fmt %.0f "$(med "$TMP/probe.rows" x 9)")"
			errs=$(awk '{ s += $5 } END { print s + 0 }' "$TMP/probe.rows")
			[ "$errs" -gt 0 ] && say "$p at $(count "$n"): $errs failed requests (not timeouts) over the rounds"
		done
		out "$row |"
	done
	out
fi

out "Section time $((SECONDS - T0)) s."
