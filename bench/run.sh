#!/bin/bash
# Runs the bloomgate benchmarks (build/bench, built by `make bench`) and
# regenerates docs/BENCHMARKS.md from the template below plus the tables the
# benchmark prints. Nothing in the tables is typed by hand.
#
#   ./bench/run.sh                 full run (about 3 minutes here, plus about 7 for
#                                  the scale section), writes the doc
#   ./bench/run.sh --quick         any bench options (see build/bench --help);
#                                  the doc is left alone unless BENCH_DOC=1
#   ./bench/run.sh --only dns      one section (addr, cidr, dns, confirm, agent, scale,
#                                  fleet, crowdsec, e2e; comma list)
#   make bench BENCH_ARGS=--quick  the same through make
#
# The section "agent" is bench/agent.sh (the agent's way from a changed list
# to the datapath, its memory): it builds a network namespace and attaches
# XDP, and runs after build/bench's sections. --quick gives it a small list.
# The section "scale" is bench/scale.sh (`bloomgate load` and the agent at
# 1M, 10M and 100M keys: times, memory, the store, the control socket's
# answers during a rebuild; about 7 minutes here); it runs after "agent", and
# --quick gives it 100k and 1M keys.
# The section "fleet" is bench/fleet.sh (a filter artifact built once:
# its size, load FILE against load LIST, publish to 20 gateway agents
# through a PostgreSQL of its own, 100 gateways, load FILE at 100M); it
# runs after "scale", and --quick gives it 100k keys and 5 gateways.
# The section "crowdsec" is bench/crowdsec.sh (bloomgate's agent beside
# crowdsec-firewall-bouncer on one CrowdSec local API: a decision's and a
# bulk's way to enforcement); it runs after "fleet".
# The section "e2e" is bench/e2e.sh (live frames into a veth pair: bloomgate
# against the bare verdicts and the one-cache-line floor); it runs last,
# with the same --quick.
#
# BUILD selects the build directory (default build). The CIDR part reads the
# FireHOL level 1 list from ../shared/data/firehol_level1.netset (relative to
# the repository root, where this script runs the benchmark); when it is
# absent that part is skipped and the doc says so.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib-require.sh
source scripts/lib-require.sh
require_cmds awk sed grep head tee mktemp date mkdir mv cat nproc uname lscpu \
	pkg-config git clang

BUILD=${BUILD:-build}
BIN="$BUILD/bench"
# BENCH_DOC_FILE: where the doc goes (a run of some sections only, kept
# beside the full one: docs/BENCHMARKS-control.md for --only agent,scale)
DOC=${BENCH_DOC_FILE:-docs/BENCHMARKS.md}

args=("$@")
if [ ${#args[@]} -eq 0 ] && [ -n "${BENCH_ARGS:-}" ]; then
	read -ra args <<<"$BENCH_ARGS"
fi
write_doc=${BENCH_DOC:-}
if [ -z "$write_doc" ]; then
	if [ ${#args[@]} -eq 0 ]; then write_doc=1; else write_doc=0; fi
fi

if [ ! -x "$BIN" ]; then
	echo "run.sh: $BIN is missing; run 'make bench'" >&2
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "run.sh: BPF_PROG_TEST_RUN and map creation need root" >&2
	exit 1
fi

field() { # /proc/cpuinfo field of the first CPU
	sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo | head -n1
}

machine() {
	local model fam mod step l3 mem hyp jit libbpf clangv commit
	model=$(field 'model name')
	fam=$(field 'cpu family')
	mod=$(field 'model')
	step=$(field 'stepping')
	l3=$(lscpu 2>/dev/null | sed -n 's/^L3 cache:[[:space:]]*//p' | head -n1)
	mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
	hyp=$(lscpu 2>/dev/null | sed -n 's/^Hypervisor vendor:[[:space:]]*//p' | head -n1)
	jit=$(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null || echo '?')
	libbpf=$(pkg-config --modversion libbpf 2>/dev/null || echo '?')
	clangv=$(clang --version 2>/dev/null | head -n1 || echo '?')
	commit=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
	if [ "$commit" != '?' ] && ! git diff --quiet HEAD -- 2>/dev/null; then
		commit="$commit + uncommitted changes"
	fi
	echo "- CPU: ${model:-?} (family ${fam:-?}, model ${mod:-?}, stepping ${step:-?})${l3:+, L3 $l3}"
	echo "- Cores: $(nproc) online${hyp:+, virtual machine ($hyp)}; memory $mem"
	echo "- Kernel: $(uname -r) ($(uname -m)), BPF JIT enabled: $jit"
	echo "- Toolchain: $clangv; libbpf $libbpf"
	echo "- Tree: $commit; run $(date -u '+%Y-%m-%d %H:%M UTC')"
}

# "agent", "scale" and "e2e" are this script's sections, not the binary's: take them
# out of --only (or -S); when they were the only ones, the binary does not run.
run_bench=1 run_agent=1 run_scale=1 run_fleet=1 run_cs=1 run_e2e=1 agent_args=() bench_args=()
i=0
while [ $i -lt ${#args[@]} ]; do
	a=${args[$i]}
	only=
	case $a in
	--only | -S)
		i=$((i + 1))
		only=${args[$i]:-}
		;;
	--only=*) only=${a#--only=} ;;
	-q | --quick)
		agent_args+=(--quick)
		bench_args+=("$a")
		;;
	*) bench_args+=("$a") ;;
	esac
	if [ -n "$only" ]; then
		case ",$only," in *,agent,*) ;; *) run_agent=0 ;; esac
		case ",$only," in *,scale,*) ;; *) run_scale=0 ;; esac
		case ",$only," in *,fleet,*) ;; *) run_fleet=0 ;; esac
		case ",$only," in *,crowdsec,*) ;; *) run_cs=0 ;; esac
		case ",$only," in *,e2e,*) ;; *) run_e2e=0 ;; esac
		rest=$(echo ",$only," | sed 's/,agent,/,/g; s/,scale,/,/g; s/,fleet,/,/g; s/,crowdsec,/,/g; s/,e2e,/,/g; s/^,*//; s/,*$//')
		if [ -n "$rest" ]; then bench_args+=(--only "$rest"); else run_bench=0; fi
	fi
	i=$((i + 1))
done
if [ "$run_agent" = 1 ] && [ ! -x "$BUILD/tests/httpd" ]; then
	echo "run.sh: $BUILD/tests/httpd is missing (the agent section serves a list with it); run 'make bench'" >&2
	exit 1
fi

cmd="$BIN${bench_args[*]:+ ${bench_args[*]}}"
[ "$run_bench" = 1 ] || cmd=
if [ "$run_agent" = 1 ]; then
	cmd="${cmd:+$cmd; }bench/agent.sh${agent_args[*]:+ ${agent_args[*]}}"
	# the control socket under hostile readers (its tools: make bench)
	cmd="$cmd; bench/followers.sh${agent_args[*]:+ ${agent_args[*]}}"
fi
if [ "$run_scale" = 1 ]; then
	for f in genaddrs ctlprobe; do
		if [ ! -x "$BUILD/$f" ]; then
			echo "run.sh: $BUILD/$f is missing (the scale section's tool); run 'make bench'" >&2
			exit 1
		fi
	done
	cmd="${cmd:+$cmd; }bench/scale.sh${agent_args[*]:+ ${agent_args[*]}}"
fi
if [ "$run_fleet" = 1 ]; then
	if [ ! -x "$BUILD/genaddrs" ]; then
		echo "run.sh: $BUILD/genaddrs is missing (the fleet section's tool); run 'make bench'" >&2
		exit 1
	fi
	cmd="${cmd:+$cmd; }bench/fleet.sh${agent_args[*]:+ ${agent_args[*]}}"
fi
if [ "$run_cs" = 1 ]; then
	cmd="${cmd:+$cmd; }bench/crowdsec.sh${agent_args[*]:+ ${agent_args[*]}}"
fi
if [ "$run_e2e" = 1 ]; then
	if [ ! -x "$BUILD/livegen" ]; then
		echo "run.sh: $BUILD/livegen is missing (the e2e section's generator); run 'make bench'" >&2
		exit 1
	fi
	cmd="${cmd:+$cmd; }bench/e2e.sh${agent_args[*]:+ ${agent_args[*]}}"
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT

{
	echo "## Machine"
	echo
	machine
	echo
	echo "## Command"
	echo
	echo '```'
	if [ ${#args[@]} -eq 0 ]; then
		echo "make bench    # runs: $cmd"
	else
		echo "$cmd"
	fi
	echo '```'
	echo
	echo "## Results"
	echo
} >"$out"
cat "$out"

status=0
if [ "$run_bench" = 1 ]; then
	"$BIN" "${bench_args[@]}" | tee -a "$out" || status=$?
	if [ "$status" -ne 0 ]; then
		echo "run.sh: $BIN failed (exit $status); $DOC not updated" >&2
		exit "$status"
	fi
fi
# One of this script's sections (bench/NAME.sh), appended to the doc;
# its failure stops the run, the doc untouched.
section() { # NAME
	echo | tee -a "$out"
	BUILD=$BUILD "./bench/$1.sh" "${agent_args[@]}" | tee -a "$out" || status=$?
	if [ "$status" -ne 0 ]; then
		echo "run.sh: bench/$1.sh failed (exit $status); $DOC not updated" >&2
		exit "$status"
	fi
}
[ "$run_agent" = 1 ] && section agent && section followers
[ "$run_scale" = 1 ] && section scale
[ "$run_fleet" = 1 ] && section fleet
[ "$run_cs" = 1 ] && section crowdsec
[ "$run_e2e" = 1 ] && section e2e

if [ "$write_doc" != 1 ]; then
	echo "run.sh: $DOC not updated (custom arguments or BENCH_DOC=0;" \
		"BENCH_DOC=1 forces it)" >&2
	exit 0
fi

mkdir -p "$(dirname "$DOC")"
tmp="$DOC.tmp.$$"
{
	cat <<'EOF'
# Benchmarks

This file is generated by `make bench` (bench/run.sh): everything from
"Machine" down is the benchmark's own output. Do not edit it by hand; rerun
the benchmark instead.

## Method

- **What is timed.** Each variant is an XDP program run through
  `BPF_PROG_TEST_RUN` with a large `repeat` on one 60-byte IPv4/UDP frame
  built by `tests/pktgen.h`. The kernel reports `duration`, the average
  nanoseconds per iteration over the whole run (whole ns); the CPU time of
  the calling thread divided by `repeat` is shown beside it as a fractional
  cross-check. Rounds interleave every variant and both list sizes, rotating
  the order each round, and the tables give the median over rounds, so
  drift and noise from other load hit all variants alike. The process is
  pinned to one CPU.
- **Keys vary inside a run.** After probing, every program rewrites the
  packet's IPv4 destination with the full-period LCG `a = a * 2654435761 + 1`
  (bloomgate's own `cfg_bench_vary` step, copied in bench/bench.bpf.c).
  XDP test runs reuse one packet buffer across the `repeat` iterations, so
  each iteration probes a new address. This is checked on every run, not
  assumed: the destination in `data_out` must equal the LCG applied
  `repeat` times, and each program's positive count must equal the count
  userspace gets for the same address sequence with the same probe code
  (bloomgate's `probes` counter must also grow by exactly `repeat`). The
  destinations are random 32-bit addresses, so almost all are non-members:
  the realistic "definitely not listed" path; a list of n addresses
  contains a random address with probability n / 2^32.
- **Lists.** n random distinct IPv4 addresses from a fixed seed (the 1M list
  is the first million of the 10M list).
- **Variants.**
  (a) parse with `bpf/parse.h` and step the key, no probe: the baseline;
  (b) bloomgate's real program (`build/bloomgate.skel.h`, `cfg_bench_vary=1`,
  `cfg_action=DROP`), filter planned by `bg_filter_plan(list, NULL, 0.001)`
  (plain addresses: one Bloom probe at /32, no bitmap; the Bloom part at
  0.001 and, as `bg_filter_plan` always plans, the exact stage behind it),
  built by `bg_filter_create` and swapped in by `bg_filter_publish`; its
  positives in the tables are the Bloom part's (`positives` +
  `bloom_false_positives`), the ones the blocked variants (f)-(h) see, and
  its confirmed `positives` are checked as well;
  (c) a classic Bloom filter: m = -n ln p / (ln 2)^2 bits in a mmapable
  `ARRAY` of 64-bit words, k = round(m/n ln 2) positions over the whole
  array by double hashing of the two halves of the same `bg_hash64`;
  (d) the kernel's `BPF_MAP_TYPE_BLOOM_FILTER` (max_entries n, `map_extra`
  hash functions, one `bpf_map_update_elem` per key, since the map has no
  batch operations), probed with `bpf_map_peek_elem`;
  (e) a `BPF_MAP_TYPE_HASH` of the addresses (4-byte key, 4-byte value,
  preallocated: lookups cost the same as with `BPF_F_NO_PREALLOC`, memory
  is fixed up front and batch inserts are faster), filled with
  `bpf_map_update_batch`;
  (f)-(h) bloomgate's probe (`bloomgate/bloom.h`, same filter bits) without
  bloomgate's counters and header checks, reading the filter from
  (f) a plain `ARRAY` map, (g) an `ARRAY_OF_MAPS` slot whose inner maps may
  have any size (`BPF_F_INNER_MAP`, as bloomgate does; bloomgate's own filter
  map is put in the slot), (h) an `ARRAY_OF_MAPS` slot whose inner maps all
  have one fixed size (no `BPF_F_INNER_MAP`). They separate the cost of the
  probe from the cost of the map-in-map indirection and of bloomgate's
  bookkeeping.
- **False-positive rate.** Userspace: random non-members through
  `bg_filter_test4` on the live filter mmapped read-only (the functions the
  datapath uses; for bloomgate's Bloom part alone, on a copy with the exact
  stage taken out, `fp_nbuckets = 0`). Datapath: the positives of one long
  test run, members removed. "predicted" is `p.predicted` from `bg_filter_plan` for bloomgate
  and (1 - e^(-kn/m))^k for the others, with the kernel map's real bit count.
- **Memory** is the kernel's `memlock` figure from `/proc/self/fdinfo`.
- **"What the verifier left"** lists the calls that remain in each program
  after verification (`bpf_obj_get_info_by_fd`, xlated code): a map lookup
  the verifier inlined leaves no call behind. The counts are static (code
  paths for IPv6 included), not per packet.
- **CIDR lists** (section "CIDR lists"). Two lists of IPv4 prefixes: the
  FireHOL level 1 list (`../shared/data/firehol_level1.netset`; skipped with
  a note when absent) and 1M generated prefixes (fixed seed, uniform random
  positions, lengths in a fixed mix close to FireHOL's, printed with the
  results). Each is written as a list file and loaded into a fresh
  bloomgate program exactly as `bloomgate load` does it
  (`bg_list_parse_file`, `bg_list_finish`, which also drops prefixes inside
  a shorter listed one, `bg_filter_plan` at 0.001 per address,
  `bg_filter_create`, `bg_filter_publish`; a fixed seed instead of a random
  one), and the same kept prefixes into a `BPF_MAP_TYPE_LPM_TRIE`
  (`BPF_F_NO_PREALLOC`, key {u32 prefixlen; u32 addr}), variant (i), probed
  with the destination as a /32 key. (a), (b) and (i) run in the same
  interleaved rounds as the variants above, on the same LCG-stepped
  destinations: random addresses, of which the listed share is the share
  of the IPv4 space the list covers (FireHOL includes 224.0.0.0/3 and the
  private ranges).
- **CIDR checks.** Exact membership comes from a 2^32-bit bitmap of the kept
  prefixes. Every run: the LPM trie's positives equal the listed
  destinations; bloomgate's `positives` and `probes` counters equal what
  the datapath's own lookup code (`bloomgate/lookup.h`, run in userspace on
  the live filter) gives for the same destinations, and `packets` equals
  `repeat`; its positives are at least the listed ones. Its false-positive
  rate over the non-listed destinations of the long run must stay below the
  plan's per-address prediction plus 5 standard deviations; and the first,
  last and one random address of every kept prefix must be positive.
- **Probes** are bloomgate's `probes` counter over its `packets` counter:
  the /16 bitmap read and each Bloom probe count one, and a lookup stops at
  the first positive. The worst case is the plan's: the bitmap (when some
  prefix is /16 or shorter) plus one probe per Bloom length.
- **DNS queries** (section "DNS queries (issue 4)"). One filter holding 1M
  listed domains (a generated Adblock-style list of exact, `||name^` and
  `||*.name^` rules, parsed with `bg_names_parse_file` and built with
  `bg_filter_plan`/`bg_filter_create`, as `bloomgate load` does) and 1M
  listed IPv4 addresses, published into bloomgate's real program with its
  own `bloomgate_dns` in `bg_progs`. Each test run goes through
  `bench_dns` (bench/bench.bpf.c), which writes a new destination address
  and new bytes into the query name from a 64-bit LCG every iteration (so
  every name suffix but the TLD, and the address, is a new key: the Bloom
  probes land in random blocks), rewrites the frame's first 64 bytes so
  that an in-place answer does not carry over, and tail-calls the program
  measured: `bloomgate_xdp` (which tail-calls `bloomgate_dns` for UDP to
  port 53) when it does, else `bloomgate_dns` directly; the output says
  which. The step's own cost is measured ((s) - (n)) and subtracted ("net
  ns"); the address-only path run directly with `cfg_bench_vary=1` checks
  the subtraction. Name length is the QNAME's wire length (10, 30, 60,
  120, 255 bytes), with labels of at most 9 bytes, of up to 63 bytes, and
  127 one-byte labels; per-byte and per-label costs are least-squares fits
  over those rows. Every run's `dns_*` and address counters must equal what
  userspace computes for the same names and addresses with the builder's
  hashing and the datapath's lookup code.
- **The exact stage** (section "The exact stage (issue 11)", bench/confirm.c,
  and the table of the same name in "End to end"). Every Bloom positive is
  confirmed against a table of 32-bit fingerprints of the listed keys in
  the same filter map before anything is dropped or answered. Userspace:
  one filter of 10M IPv4 /32 keys (in 0.0.0.0/1) built as `bloomgate load`
  builds it by default (`bg_filter_plan`: the stage on, the Bloom part at
  0.01), published into bloomgate's real `bg_filters` and mapped back
  read-only; every address of 128.0.0.0/1, 2^31 = 2.1 x 10^9, once each
  (never listed, so a positive is a wrong verdict without a second lookup)
  through `bg_filter_judge4`, the datapath's lookup code, on every CPU,
  counting the Bloom part's positives and the wrong verdicts: that
  filter's exact rate over that half of the space. Random draws would not
  do better: a zero count's rule-of-three bound (3 / trials) reaches 1e-9
  only at 3 x 10^9 draws, more than the half has addresses, so they would
  repeat addresses (a wrong one is wrong every time). The stage's own rate
  is also measured alone
  (random Bloom hashes through `bg_fp_confirm`, many hits instead of none),
  and the product of the two observed rates, the stage's hash being
  independent of the Bloom part's bits, estimates the combined rate far
  below what a zero count can show. Also: every listed key judged listed,
  the share of listed keys in their first bucket (one cache line read to
  confirm them; the rest read two), the filter map's memlock per key, and
  from plans alone the bytes a key costs with and without the stage at 1M
  and 10M keys and at other Bloom targets (how far the Bloom part's target
  can be relaxed when the stage is there). End to end: the 1M and 10M lists
  loaded with the stage (the default) and with `--confirm off`, side by
  side in the clean and flood rows; memory is the live filter map's
  `memlock` (`bpftool map show`); the stage's rejected Bloom positives are
  its `bloom_false_positives` counter. Targets: combined false-positive
  rate <= 1e-9 per address at 10M keys, <= 8 bytes a key at the defaults,
  a flood of listed traffic >= 0.9x and clean traffic >= 0.97x the rate
  without the stage.
- **The agent** (section "The agent", `bench/agent.sh`). `bloomgate agent`
  runs in a network namespace of the script's own, attached in skb mode to
  one end of a veth pair, pinned under `/sys/fs/bpf/bgbench`, with an empty
  state directory. Lists: distinct IPv4 addresses, the first outputs of a
  full-period LCG modulo 2^32 from a fixed seed. A round writes the list
  plus one new address (one the live filter does not already match) to a
  temporary file and renames it over the list (in the served directory for
  the URL list); the script takes the time just before the `mv`, reads the
  agent's timing line for that rebuild (one per successful rebuild: when the
  change was seen, the read or fetch, `bg_load`'s parse, plan, build and swap,
  when the filter was live, the store's write after it), and polls `bloomgate
  check NEWADDR` every 10 ms for the first match. `debounce: 0ms`, so the
  figures are the pipeline's own: a configured debounce d adds 2d to a file
  list's change (the read waits d after the inotify event, the rebuild d
  after the read) and d to a URL list's. The URL list is fetched from
  `build/tests/httpd` in the same namespace on 127.0.0.1 (`/plain/`: no gzip,
  whose cost on the shared cores would be the server's), refresh 1 s.
  Memory is `VmRSS`/`VmHWM` from `/proc/PID/status`, one second after the
  first rebuild's timing line (the store is written by then).
- **Scale** (section "Scale", `bench/scale.sh`). The control plane at 1M,
  10M and 100M keys (`SCALE_SIZES`), each figure the median over
  `SCALE_ROUNDS` rounds (default 3). Lists: distinct random IPv4 /32
  addresses from `build/genaddrs` (bench/genaddrs.c: a fixed bijection of
  a 32-bit counter from a fixed seed, 0.0.0.0/8, 127.0.0.0/8 and
  224.0.0.0/3 skipped), written to /tmp just before use. `bloomgate load`
  with its defaults (the exact stage on), bloomgate attached in skb mode to
  a veth in a network namespace of the script's own, pins under
  `/sys/fs/bpf/bgscale`: the wall time around the command, load's own
  `time:` line (parse, plan + build as one figure, swap), its peak RSS (GNU
  time's maximum resident set, the kernel's rusage) and the filter map's
  bytes from its `memory:` line, so that the memory beyond the map shows.
  Then `bloomgate agent` (at every size; `SCALE_AGENT_100M=0` leaves out
  100M and more), a
  new one each round on an empty state directory with one `path:` list,
  `debounce: 0ms` and `/metrics` on: from its start to the first filter
  live (its timing line's "live at"), that line's stages and its store
  write, the state directory's bytes on disk but the lists' copies (the
  SQLite database, its WAL and shared-memory file, the provenance indexes
  in `index/`, `filter.json`), the
  agent's VmHWM, and `bloomgate check` of a listed address timed around
  the command with the agent idle. Then the list replaced by rename with
  one address added: the mv to the rebuild's "live at", to the first
  `bloomgate check NEWADDR` that says match (polled every 10 ms), and the
  rebuild's store write; meanwhile `build/ctlprobe` (bench/ctlprobe.c)
  sends `status` on the agent's control socket and `GET /metrics`, each in
  a closed loop every 20 ms with a 5 s timeout per request, from the mv to
  0.1 s after the rebuild's timing line: p50, p99 and max of the answered
  requests, the timeouts, and the longest stretch with no answer.
- **End to end** (section "End to end", `bench/e2e.sh`). Live frames
  (`BPF_F_TEST_XDP_LIVE_FRAMES`) from the project's own generator
  (`build/livegen`, bench/livegen.c and bench/livegen.bpf.c) redirected into
  veth pairs in a network namespace of the script's own; the receiving end
  runs the program measured in native mode. The section states its method
  above its table.

EOF
	cat "$out"
} >"$tmp"
mv "$tmp" "$DOC"
echo "run.sh: wrote $DOC" >&2
