#!/bin/bash
# The agent's section of `make bench` (called by bench/run.sh; runs alone
# too): how long a change to a list takes to reach the datapath through
# `bloomgate agent`, stage by stage, and what the agent keeps in memory.
#
#   bench/agent.sh [--quick]      markdown on stdout, progress on stderr
#
# 1. A file list of N random IPv4 addresses (default 1M) is replaced by
#    rename with one new address added; from the time of the mv, the
#    agent's own timing line for that rebuild and the first `bloomgate
#    check NEWADDR` that says match.
# 2. The same list served over HTTP by build/tests/httpd, refresh 1 s.
# 3. VmRSS/VmHWM of the agent idle after loading 1M and 10M entries, and
#    the size of its store on disk.
#
# The agent attaches (skb mode) to one end of a veth pair in a network
# namespace of its own (bgbench) and pins under /sys/fs/bpf/bgbench; the
# agent and the HTTP server run in that namespace with nsenter (not `ip
# netns exec`: that gives each command a fresh mount namespace, and bpffs
# pins made there are lost). Everything is removed on exit, and a run that
# was killed is cleaned up by the next one (marker file below). The
# project's e2e lock is held throughout, so an e2e run or a demo does not
# share the two cores with the measurement.
#
# Environment: BUILD (default build), AGENT_BENCH_N (entries of the timed
# list), AGENT_BENCH_BIG (the second memory row, 0: skip), AGENT_BENCH_ROUNDS.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib-require.sh
source scripts/lib-require.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh
require_cmds ip nsenter flock awk sed grep date mv cp rm rmdir mkdir mktemp \
	head tail cut seq sleep cat du stat ls

BUILD=${BUILD:-build}
BG=$BUILD/bloomgate
HTTPD=$BUILD/tests/httpd
N=${AGENT_BENCH_N:-1000000}
BIG=${AGENT_BENCH_BIG:-10000000}
ROUNDS=${AGENT_BENCH_ROUNDS:-3}
if [ "${1:-}" = --quick ]; then
	N=${AGENT_BENCH_N:-100000} BIG=${AGENT_BENCH_BIG:-0} ROUNDS=${AGENT_BENCH_ROUNDS:-1}
fi
REFRESH=1     # s, the URL list's refresh (jittered by the agent: 0.9-1.1 s)
SEED=20260901 # the address generator's
NS=bgbench IF_A=bgb0 IF_B=bgb1
export BLOOMGATE_PIN_DIR=/sys/fs/bpf/bgbench
PIN=$BLOOMGATE_PIN_DIR
LOCK=${E2E_LOCK:-/run/bloomgate-e2e.lock}
MARKER=/run/bloomgate-bench-agent.state
TMP=
AGENT='' HTTPD_PID=''

say() { echo "agent.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}

# ---- cleanup ------------------------------------------------------------

cleanup() { bench_cleanup_ns bloomgate-bench-agent; }

# ---- helpers ------------------------------------------------------------

now() { date +%s.%N; }
in_ns() { nsenter --net="/run/netns/$NS" "$@"; }

# "match" or "no match" for one address (the check needs no namespace:
# pins and the store are files).
check() {
	"$BG" check "$1" 2>/dev/null | sed -n "s#^$1: \(no match\|match\).*#\1#p"
}

# N addresses from a full-period LCG mod 2^32, starting after the first
# SKIP outputs: distinct, and distinct from every other slice. mawk's
# doubles hold a * 1664525 + c exactly (< 2^53).
gen_addrs() { # SKIP N
	awk -v skip="$1" -v n="$2" -v seed="$SEED" 'BEGIN {
		a = seed
		for (i = 0; i < skip + n; i++) {
			a = (a * 1664525 + 1013904223) % 4294967296
			if (i >= skip)
				printf "%d.%d.%d.%d\n", int(a / 16777216),
					int(a / 65536) % 256, int(a / 256) % 256, a % 256
		}
	}'
}


stop_agent() {
	[ -n "$AGENT" ] || return 0
	kill "$AGENT" 2>/dev/null
	wait "$AGENT" 2>/dev/null
	AGENT=
	# the next agent starts from nothing: no adopted filter, no attachment
	in_ns "$BG" detach --all >/dev/null 2>&1
}

# A new address for a round: the next unused one of the spare slice that
# the live filter does not already match (a false positive would make
# "check says match" meaningless).
# Sets NEW (not printed: a command substitution would lose SPARE_NEXT).
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
	now
}

status_of() { # PID FIELD: kB from /proc/PID/status
	sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status"
}

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
bytes_mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
count() { # N as 1M, 10M, 100k
	awk -v n="$1" 'BEGIN { if (n % 1000000 == 0) printf "%dM", n / 1e6;
		else if (n % 1000 == 0) printf "%dk", n / 1e3; else printf "%d", n }'
}

# The store on disk, "DB INDEX" bytes: the SQLite database with its
# write-ahead log and shared memory (WAL mode: the log holds the last writes
# until a checkpoint folds them in), and the lists' provenance indexes
# (index/).
store_bytes() { # STATE_DIR
	local db=0 idx=0 f
	for f in "$1/bloomgate.db" "$1/bloomgate.db-wal" "$1/bloomgate.db-shm"; do
		[ -f "$f" ] && db=$((db + $(stat -c %s "$f")))
	done
	[ -d "$1/index" ] && idx=$(du -sb "$1/index" | cut -f1)
	echo "$db $idx"
}
copies_bytes() { du -sb "$1/lists" | cut -f1; }

# ---- one timed round ----------------------------------------------------

# Replaces DIR/list.txt by rename with BASE plus one new address, then
# prints "mv seen fetch parse plan build swap live store match".
round() { # LOG DIR BASE
	local log=$1 dir=$2 base=$3 addr c t_mv t_match
	new_addr || return 1
	addr=$NEW
	cp "$base" "$dir/list.tmp" && echo "$addr" >>"$dir/list.tmp" || return 1
	c=$(timings "$log")
	t_mv=$(now)
	mv "$dir/list.tmp" "$dir/list.txt"
	t_match=$(wait_match "$addr" 60) || { say "$addr not matched within 60 s"; return 1; }
	wait_timing "$log" "$c" 120 || return 1
	echo "$t_mv $(last_timing "$log") $t_match"
}

# The rounds' table and its median row, from lines "mv seen fetch parse plan
# build swap live store match" (unix seconds and ms).
table() { # ROUNDS-FILE DETECT-LABEL
	echo "| round | $2 | read/fetch | parse | plan | build | swap | other | total (mv to live) | check says match | store (after live) |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	awk '
	function med(col,   i, j, t, v, k) {
		for (i = 1; i <= NR; i++) v[i] = x[i, col]
		for (i = 2; i <= NR; i++)
			for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		k = int((NR + 1) / 2)
		return NR % 2 ? v[k] : (v[k] + v[k + 1]) / 2
	}
	{
		# detect, fetch, parse, plan, build, swap, other, total, match, store
		x[NR, 1] = ($2 - $1) * 1e3
		x[NR, 2] = $3; x[NR, 3] = $4; x[NR, 4] = $5; x[NR, 5] = $6; x[NR, 6] = $7
		x[NR, 8] = ($8 - $1) * 1e3
		x[NR, 7] = x[NR, 8] - x[NR, 1] - $3 - $4 - $5 - $6 - $7
		x[NR, 9] = ($10 - $1) * 1e3
		x[NR, 10] = $9
	}
	function row(label, r,   c, s) {
		s = "| " label
		for (c = 1; c <= 10; c++)
			s = s sprintf(c == 6 ? " | %.2f" : " | %.1f", r ? x[r, c] : med(c))
		print s " |"
	}
	END {
		for (r = 1; r <= NR; r++) row(r, r)
		row("**median**", 0)
	}' "$1"
}

# ---- setup --------------------------------------------------------------

for f in "$BG" "$HTTPD"; do
	[ -x "$f" ] || die "$f is missing: run make all $HTTPD"
done
bench_begin bloomgate-bench-agent

# lo for the HTTP server; a veth pair with both ends up to attach to
if ! { ip netns add "$NS" &&
	ip -n "$NS" link set lo up &&
	ip -n "$NS" link add "$IF_A" type veth peer name "$IF_B" &&
	ip -n "$NS" link set "$IF_A" up &&
	ip -n "$NS" link set "$IF_B" up; }; then
	die "cannot build the namespace"
fi

T0=$SECONDS
say "generating $(count "$N") addresses"
gen_addrs 0 "$N" >"$TMP/base.txt"
gen_addrs "$N" 100 >"$TMP/spare.txt"
mkdir -p "$TMP/file" "$TMP/www"

config() { # STATE-DIR LIST-LINES...
	local st=$1
	shift
	cat <<EOF
interfaces:
  - name: $IF_A
    mode: skb
state_dir: $st
debounce: 0ms
lists:
EOF
	printf '%s\n' "$@"
}

out() { echo "$@"; }

out "### The agent: from a changed list to the datapath"
out
out "Produced by \`bench/agent.sh\` (run by \`make bench\` after the sections above; \`bench/run.sh --only agent\` runs it alone), on the machine above. The agent is \`$BG agent\`, attached in skb mode to a veth in a network namespace, \`debounce: 0ms\` (see Method), target rate 0.001. Times in ms; each column's median is taken over the rounds on its own."
out

# ---- 1. a file list ----------------------------------------------------

say "file list: $(count "$N") entries, initial load"
cp "$TMP/base.txt" "$TMP/file/list.txt"
config "$TMP/state-file" "  - name: bench" "    path: $TMP/file/list.txt" >"$TMP/file.yaml"
LOG=$TMP/agent-file.log
start_agent "$TMP/file.yaml" "$LOG"
wait_timing "$LOG" 0 300 || exit 1
load_1=$(last_timing "$LOG")
sleep 1 # idle: the store is written (it is, before the timing line), nothing runs
rss_1=$(status_of "$AGENT" VmRSS) hwm_1=$(status_of "$AGENT" VmHWM)
store_1=$(store_bytes "$TMP/state-file") copies_1=$(copies_bytes "$TMP/state-file")
: >"$TMP/file.rounds"
for r in $(seq 1 "$ROUNDS"); do
	say "file list: round $r"
	round "$LOG" "$TMP/file" "$TMP/base.txt" >>"$TMP/file.rounds" || exit 1
done
rss_1r=$(status_of "$AGENT" VmRSS) hwm_1r=$(status_of "$AGENT" VmHWM)
stop_agent

out "#### A file list of $(count "$N") addresses, replaced by rename with one address added"
out
out "detect: the inotify event (the agent's \"change seen\") - the mv; read: reading the new copy (it is judged by the rebuild's own parse); parse, plan, build, swap: \`bg_load\`'s stages; other: total - the columns before it (the event loop, the pipeline's bookkeeping); total: the agent's \"live at\" (just after the swap) - the mv; check says match: the first \`bloomgate check NEWADDR\` (a process, polled every 10 ms) that said match; store: writing the list's provenance index (its entries with their lines, for check) after the swap, off the critical path, on the agent's store thread."
out
table "$TMP/file.rounds" "detect"
out

# ---- 2. the same list over HTTP ------------------------------------------

say "URL list: $(count "$N") entries, initial load"
cp "$TMP/base.txt" "$TMP/www/list.txt"
nsenter --net="/run/netns/$NS" "$HTTPD" -l "$TMP/http.log" "$TMP/www" \
	>"$TMP/http.port" {LOCK_FD}>&- &
HTTPD_PID=$!
i=0
while [ ! -s "$TMP/http.port" ] && ((i++ < 250)); do sleep 0.02; done
[ -s "$TMP/http.port" ] || die "the test HTTP server did not start"
PORT=$(head -n1 "$TMP/http.port")
# /plain/: no gzip, so the test server's compression (on the same two
# cores) is not counted as the agent's fetch
config "$TMP/state-http" "  - name: bench" \
	"    url: http://127.0.0.1:$PORT/plain/list.txt" \
	"    refresh: ${REFRESH}s" "    timeout: 30s" >"$TMP/http.yaml"
LOG=$TMP/agent-http.log
start_agent "$TMP/http.yaml" "$LOG"
wait_timing "$LOG" 0 300 || exit 1
load_h=$(last_timing "$LOG")
: >"$TMP/http.rounds"
for r in $(seq 1 "$ROUNDS"); do
	say "URL list: round $r"
	round "$LOG" "$TMP/www" "$TMP/base.txt" >>"$TMP/http.rounds" || exit 1
done
stop_agent
kill "$HTTPD_PID" 2>/dev/null
wait "$HTTPD_PID" 2>/dev/null

out "#### The same list over HTTP (build/tests/httpd on 127.0.0.1, refresh ${REFRESH} s)"
out
out "refresh wait: the start of the fetch that found the change (the agent's \"change seen\") - the mv, i.e. waiting for the next refresh (0.9-1.1 s apart, jittered); fetch: the conditional GET that returned the new copy (uncompressed: \`/plain/\`), its validation and the last good copy written; the other columns as above."
out
table "$TMP/http.rounds" "refresh wait"
out

# ---- 3. memory -----------------------------------------------------------

if [ "$BIG" -gt 0 ]; then
	say "generating $(count "$BIG") addresses"
	gen_addrs 0 "$BIG" >"$TMP/file/list.txt"
	rm -f "$TMP/base.txt" "$TMP/www/list.txt" # disk: 10M lines are ~140 MB a copy
	config "$TMP/state-big" "  - name: bench" "    path: $TMP/file/list.txt" >"$TMP/big.yaml"
	LOG=$TMP/agent-big.log
	say "file list: $(count "$BIG") entries, initial load"
	t_big=$SECONDS
	start_agent "$TMP/big.yaml" "$LOG"
	wait_timing "$LOG" 0 600 || exit 1
	t_big=$((SECONDS - t_big))
	load_b=$(last_timing "$LOG")
	sleep 1
	rss_b=$(status_of "$AGENT" VmRSS) hwm_b=$(status_of "$AGENT" VmHWM)
	store_b=$(store_bytes "$TMP/state-big") copies_b=$(copies_bytes "$TMP/state-big")
	stop_agent
fi

out "#### Initial load and memory"
out
out "The agent started on an empty state directory and read the list; the first build's stages (ms) from its timing line (\"read\" is the read of the file; the start's attach and setup come before it and are not counted), then the resident memory from \`/proc/PID/status\` with the agent idle (VmHWM: the peak so far), the store (the SQLite database with its log, and the provenance index: every entry with its line) and the last good copy on disk."
out
out "| entries | read/fetch | parse | plan | build | swap | store | VmRSS idle (MiB) | VmHWM (MiB) | store on disk: db + index (MiB) | last good copy (MiB) |"
out "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
load_row() { # LABEL "seen fetch parse plan build swap live store" RSS HWM "DB INDEX" COPIES
	# shellcheck disable=SC2086
	set -- "$1" $2 "$3" "$4" $5 "$6"
	printf '| %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.1f | %s | %s | %s + %s | %s |\n' \
		"$1" "$3" "$4" "$5" "$6" "$7" "$9" "$(mib "${10}")" "$(mib "${11}")" \
		"$(bytes_mib "${12}")" "$(bytes_mib "${13}")" "$(bytes_mib "${14}")"
}
load_row "$(count "$N") (file)" "$load_1" "$rss_1" "$hwm_1" "$store_1" "$copies_1"
if [ "$BIG" -gt 0 ]; then
	load_row "$(count "$BIG") (file)" "$load_b" "$rss_b" "$hwm_b" "$store_b" "$copies_b"
fi
out
out "After the $ROUNDS file rounds ($(count "$N")): VmRSS $(mib "$rss_1r") MiB, VmHWM $(mib "$hwm_1r") MiB. The URL list's first load (same $(count "$N") list): $(echo "$load_h" | awk '{ printf "fetch %.1f, parse %.1f, plan %.1f, build %.1f, swap %.2f, store %.1f ms", $2, $3, $4, $5, $6, $8 }')."
if [ "$BIG" -gt 0 ]; then
	out "The $(count "$BIG") agent took ${t_big} s from its start to its timing line (the store included)."
fi
out
out "Section time $((SECONDS - T0)) s."
