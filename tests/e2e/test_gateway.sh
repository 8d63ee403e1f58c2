#!/bin/bash
# End-to-end: bloomgate on a forwarding gateway between a client and a server
# namespace, with real UDP traffic (build/tests/udpsend, udpsink). Prints one
# "ok NAME" / "not ok NAME" line per check and "# ..." notes; exits non-zero
# when a check failed. Needs root, `make` and the tools in tests/tools/.
#   bash tests/e2e/test_gateway.sh          (BG_E2E_SWAPS=N: leak-test loads)
set -u
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

SWAPS_HOT=100
SWAPS_LEAK=${BG_E2E_SWAPS:-1000}
PPS=6000
ATTACH_MODE=native
T_START=$SECONDS

# ---- helpers -----------------------------------------------------------------

# Number of maps named exactly $1, machine-wide.
count_maps() {
	bpftool map show 2>/dev/null | awk -v n="$1" '
		$2 ~ /^[a-z_]+$/ && $3 == "name" && $4 == n { c++ } END { print c + 0 }'
}
count_bg_maps() { # every map bloomgate creates
	local n=0 m
	for m in bg_filter bg_filters bg_stats bg_events bg_attach bg_progs; do
		n=$((n + $(count_maps "$m")))
	done
	echo "$n"
}

# Ids of every map alive now, one per line.
alive_map_ids() { bpftool map show 2>/dev/null | sed -n 's/^\([0-9]*\): .*/\1/p'; }
# Ids of the maps pinned in $BG_PIN (ours).
pinned_map_ids() {
	local f
	for f in "$BG_PIN"/*; do
		bpftool map show pinned "$f" 2>/dev/null | sed -n 's/^\([0-9]*\): .*/\1/p'
	done
}
# Prints those of the given map ids that are still alive.
still_alive() { # ID...
	(($#)) || return 0
	alive_map_ids | grep -Fx -f <(printf '%s\n' "$@")
}
none_alive() { [ -z "$(still_alive "$@")" ]; }

# From the "time:" lines of many loads: what the map update (the swap) took.
swap_summary() { # FILE
	sed -n 's/.*swap \([0-9.]*\)).*/\1/p' "$1" | sort -n | awk '
		{ v[NR] = $1; s += $1 }
		END { if (NR) printf "swap step (map update + RCU wait): mean %.1f ms, median %.1f, max %.1f",
			s / NR, v[int((NR + 1) / 2)], v[NR] }'
}

# Checks a traffic run: listed got nothing, unlisted got everything.
# Uses the arrays LISTED and UNLISTED.
expect_delivery() { # TAG
	local a s r
	for a in "${LISTED[@]}"; do
		s=$(sent "$1" "$a")
		r=$(recv "$1" "$a")
		[ "$s" -gt 0 ] || t_fail "$a: nothing was sent"
		[ "$r" -eq 0 ] || t_fail "$a (listed): $r of $s delivered, expected 0"
	done
	for a in "${UNLISTED[@]}"; do
		s=$(sent "$1" "$a")
		r=$(recv "$1" "$a")
		[ "$s" -gt 0 ] || t_fail "$a: nothing was sent"
		[ "$r" -eq "$s" ] || t_fail "$a (not listed): $r of $s delivered"
	done
	local x
	x=$(traffic_anomalies "$1")
	[ -z "$x" ] || t_fail "traffic anomalies: $x"
}

# One traffic run of LISTED and UNLISTED (N packets each): listed dropped,
# unlisted delivered (expect_delivery), and the dropped counter grown by
# exactly the packets sent to the listed ones.
traffic_listed_dropped() { # TAG N
	local d0 d1
	d0=$(bg_stat dropped)
	traffic "$1" "$2" "$PPS" "${LISTED[@]}" "${UNLISTED[@]}" || t_fail "traffic run failed"
	d1=$(bg_stat dropped)
	expect_delivery "$1"
	t_expect_eq "dropped counter growth" "$(sum_sent "$1" "${LISTED[@]}")" "$((d1 - d0))"
}

sum_sent() { # TAG ADDR...
	local tag=$1 a n=0
	shift
	for a in "$@"; do
		n=$((n + $(sent "$tag" "$a")))
	done
	echo "$n"
}

e2e_init
T=$E2E_TMP
MAPS_BASE=$(count_bg_maps)

# ---- lists ---------------------------------------------------------------------

# List 1: the listed destinations, comments of both kinds, plus padding so the
# filter has more than a handful of entries.
{
	echo "# e2e list 1: documentation addresses only"
	echo "198.51.100.10"
	echo "198.51.100.11    # inline comment"
	echo "203.0.113.12"
	echo "; semicolon comment"
	echo "2001:db8:100::10"
	echo "2001:db8:100::11"
	echo "2001:db8:100::abcd"
	for i in $(seq 128 255); do echo "203.0.113.$i"; done
	for i in $(seq 1 200); do printf '2001:db8:100:0:1::%x\n' "$i"; done
} >"$T/list1"
LISTED=(198.51.100.10 198.51.100.11 203.0.113.12 2001:db8:100::10 2001:db8:100::11 2001:db8:100::abcd)

# Lists A and B for the swaps: X in both, A-only, B-only; different padding.
{
	echo "# list A"
	printf '%s\n' 198.51.100.20 2001:db8:100::20 198.51.100.21 2001:db8:100::21
	for i in $(seq 1 300); do printf '2001:db8:100:a::%x\n' "$i"; done
} >"$T/listA"
{
	echo "# list B"
	printf '%s\n' 198.51.100.20 2001:db8:100::20 198.51.100.22 2001:db8:100::22
	for i in $(seq 1 300); do printf '2001:db8:100:b::%x\n' "$i"; done
} >"$T/listB"

# ---- 2a. load before attach ---------------------------------------------------

E2E_NAME=load_before_attach_fails
t_begin
bg_capture load "$T/list1"
[ "$BG_RC" -ne 0 ] || t_fail "load succeeded with nothing attached"
[ "$BG_RC" -eq 3 ] || t_fail "exit status $BG_RC, expected 3 (not attached)"
grep -q "not attached" <<<"$BG_ERR" || t_fail "message: '$BG_ERR'"
[ ! -e "$BG_PIN" ] || t_fail "the failed load left $BG_PIN behind"
t_end "$E2E_NAME"

E2E_NAME=status_not_attached_exits_3
t_begin
bg_capture status
t_expect_eq "status with nothing attached: exit" 3 "$BG_RC"
t_expect_eq "status with nothing attached: stdout" "bloomgate is not attached to any interface" "$BG_OUT"
t_end "$E2E_NAME"

# ---- attach --------------------------------------------------------------------

E2E_NAME=attach
t_begin
# --any-size: a map of any size, so that a load's --fpr is the filter's own
# (a fixed-size map of the default's headroom, or of --capacity, can hold
# a larger Bloom part than --fpr asks, and --capacity fills it: a loose
# filter, which the Bloom positive sections below need, cannot be had;
# tests/e2e/test_grow.sh attaches with the default)
attach_native_or_skb "$IF_GWC" --any-size
info "$BG_OUT"
[ -n "$(xdp_prog_id "$IF_GWC")" ] || t_fail "no XDP program on $IF_GWC after attach"
bg status | grep -q "attached: $IF_GWC " || t_fail "status does not list $IF_GWC"
# the default policy for frames with no address to judge
bg status | grep -q "^attached: $IF_GWC .*, unparsed pass, " ||
	t_fail "status without --unparsed: $(bg status | grep "^attached: $IF_GWC")"
t_end "$E2E_NAME"
PROG_ID=$(xdp_prog_id "$IF_GWC")

# ---- 2b. attach twice ---------------------------------------------------------

E2E_NAME=attach_twice_fails
t_begin
attach "$IF_GWC"
[ "$BG_RC" -ne 0 ] || t_fail "second attach to $IF_GWC succeeded"
grep -q "already attached to $IF_GWC" <<<"$BG_ERR" || t_fail "message: '$BG_ERR'"
t_expect_eq "XDP program id after the refused attach" "$PROG_ID" "$(xdp_prog_id "$IF_GWC")"
[ -e "$BG_PIN/bg_filters" ] || t_fail "pins gone after the refused attach"
t_end "$E2E_NAME"

# ---- 2c. detach of an interface bloomgate is not attached to -------------------

E2E_NAME=detach_not_attached_fails
t_begin
bg_capture detach "$IF_GWS"
[ "$BG_RC" -ne 0 ] || t_fail "detach $IF_GWS succeeded"
grep -q "bloomgate is not attached to $IF_GWS" <<<"$BG_ERR" || t_fail "message: '$BG_ERR'"
t_expect_eq "XDP program id on $IF_GWC" "$PROG_ID" "$(xdp_prog_id "$IF_GWC")"
t_end "$E2E_NAME"

# ---- 1. listed dropped, unlisted delivered -------------------------------------

E2E_NAME=drop_listed_deliver_unlisted
t_begin
bg_capture load "$T/list1"
[ "$BG_RC" -eq 0 ] || t_fail "load failed: $BG_ERR"
for a in "${LISTED[@]}"; do
	[ "$(bg_check "$a")" = match ] || t_fail "check $a: not a match"
done
# Unlisted: candidates the live filter does not match (false positives are
# possible in a Bloom filter; the filter is fixed for this test).
mapfile -t U4 < <(pick_unmatched 3 198.51.100.{100..120} 203.0.113.{100..120})
mapfile -t U6 < <(pick_unmatched 3 2001:db8:100::{100..120})
UNLISTED=("${U4[@]}" "${U6[@]}")
((${#UNLISTED[@]} == 6)) || t_fail "found only ${#UNLISTED[@]} unmatched addresses"
traffic_listed_dropped t1 300
info "sent $(sent_total t1), delivered $(recv_total t1)"
t_end "$E2E_NAME"

# check takes a concrete name: a list's "*.x" covers x's subdomains, not x,
# so "*.x" is neither taken for x nor called a misplaced wildcard.
E2E_NAME=check_wildcard
t_begin
bg_capture check '*.ads.example' www.ads.example
t_expect_eq "check '*.ads.example' www.ads.example: exit" 2 "$BG_RC"
t_expect_eq "check '*.ads.example': stderr" \
	"bloomgate: *.ads.example: a pattern, not a name: check takes a concrete name (in a list, '*.NAME' covers the subdomains of NAME, not NAME: check one of them, e.g. www.NAME)" \
	"$BG_ERR"
grep -q "^www.ads.example: no match" <<<"$BG_OUT" || t_fail "the name after it was not checked: '$BG_OUT'"
bg_capture check 'ads.*.example'
t_expect_eq "check 'ads.*.example'" \
	"2: bloomgate: ads.*.example: a pattern, not a name: check takes a concrete name, without '*'" \
	"$BG_RC: $BG_ERR"
t_end "$E2E_NAME"

# ---- 3a. the exact stage: Bloom positives confirmed or rejected ----------------
# At --fpr 0.05 the Bloom part of list 1 says "maybe" for about one unlisted
# address in twenty. With the exact stage (the default) check names each of
# them as rejected, and traffic to them is delivered and counted in
# bloom_false_positives, once a packet; with --confirm off the same kind of
# address is a probable false positive, matched and dropped. Every load has
# a new seed: the candidates are sorted out again after each.
# shellcheck disable=SC2207 # the words are addresses
CAND=(198.51.100.{12..255} 203.0.113.{13..127} $(printf '2001:db8:100::%x ' $(seq 512 1023)))
REJECTED_LINE='no match (Bloom positive, not listed: rejected by the exact stage)'
PROBABLE_LINE='match (probable false positive: no listed entry covers it)'

# Runs check on the listed addresses and every candidate: each listed one
# must be a match (confirmed, MODE rejected: with the stage), each candidate "no match" or, MODE rejected,
# REJECTED_LINE, or, MODE probable, PROBABLE_LINE. Prints the candidates of
# the second kind, and what is wrong on stderr (it runs in a process
# substitution, where t_fail would be lost).
check_candidates() { # rejected|probable
	local out line a rest n=0 want hit
	if [ "$1" = rejected ]; then
		want=$REJECTED_LINE hit="match (confirmed; listed by "
	else
		want=$PROBABLE_LINE hit="match (listed by "
	fi
	out=$(bg check "${LISTED[@]}" "${CAND[@]}" 2>/dev/null)
	for a in "${LISTED[@]}"; do
		grep -qF "$a: $hit" <<<"$out" ||
			echo "check $a: '$(grep "^$a: " <<<"$out")', expected '$hit...'" >&2
	done
	while IFS= read -r line; do
		a=${line%%: *}
		rest=${line#*: }
		n=$((n + 1))
		case " ${LISTED[*]} " in *" $a "*) continue ;; esac
		if [ "$rest" = "$want" ]; then
			echo "$a"
		elif [ "$rest" != "no match" ]; then
			echo "check $a (not listed): '$rest'" >&2
		fi
	done <<<"$out"
	[ "$n" -eq $((${#LISTED[@]} + ${#CAND[@]})) ] ||
		echo "check printed $n lines for $((${#LISTED[@]} + ${#CAND[@]})) addresses" >&2
}

E2E_NAME=exact_stage_rejects_bloom_positives
t_begin
LISTED=(198.51.100.10 198.51.100.11 203.0.113.12 2001:db8:100::10 2001:db8:100::11 2001:db8:100::abcd)
bg_capture load --fpr 0.05 "$T/list1"
[ "$BG_RC" -eq 0 ] || t_fail "load --fpr 0.05 failed: $BG_ERR"
grep -q "^exact stage: *[0-9]* buckets of" <<<"$BG_OUT" ||
	t_fail "load does not report the exact stage: '$BG_OUT'"
mapfile -t REJ < <(check_candidates rejected 2>"$T/cand.err")
while IFS= read -r w; do t_fail "$w"; done <"$T/cand.err"
info "${#REJ[@]} of ${#CAND[@]} unlisted candidates are Bloom positives rejected by the stage"
# ~30 expected; none at all would mean the stage is never asked
((${#REJ[@]} >= 3)) || t_fail "only ${#REJ[@]} rejected Bloom positives among ${#CAND[@]} candidates"
UNLISTED=("${REJ[@]:0:8}")
b0=$(bg_stat bloom_false_positives)
d0=$(bg_stat dropped)
traffic t3a 100 "$PPS" "${LISTED[@]}" "${UNLISTED[@]}" || t_fail "traffic run failed"
b1=$(bg_stat bloom_false_positives)
d1=$(bg_stat dropped)
expect_delivery t3a
t_expect_eq "bloom_false_positives growth (packets to rejected Bloom positives)" \
	"$(sum_sent t3a "${UNLISTED[@]}")" "$((b1 - b0))"
t_expect_eq "dropped counter growth" "$(sum_sent t3a "${LISTED[@]}")" "$((d1 - d0))"
t_end "$E2E_NAME"

E2E_NAME=confirm_off_acts_on_bloom_positives
t_begin
bg_capture load --confirm off --fpr 0.05 "$T/list1"
[ "$BG_RC" -eq 0 ] || t_fail "load --confirm off failed: $BG_ERR"
grep -q "^exact stage: *off (--confirm off)" <<<"$BG_OUT" ||
	t_fail "load --confirm off does not say the stage is off: '$BG_OUT'"
mapfile -t FPS < <(check_candidates probable 2>"$T/cand.err")
while IFS= read -r w; do t_fail "$w"; done <"$T/cand.err"
info "${#FPS[@]} of ${#CAND[@]} unlisted candidates are probable false positives without the stage"
((${#FPS[@]} >= 3)) || t_fail "only ${#FPS[@]} probable false positives among ${#CAND[@]} candidates"
b0=$(bg_stat bloom_false_positives)
d0=$(bg_stat dropped)
traffic t3b 100 "$PPS" "${FPS[@]:0:4}" || t_fail "traffic run failed"
b1=$(bg_stat bloom_false_positives)
d1=$(bg_stat dropped)
# without the stage the Bloom part decides alone: wrongly dropped
t_expect_eq "delivered to the Bloom part's false positives" 0 "$(recv_total t3b)"
t_expect_eq "dropped counter growth" "$(sent_total t3b)" "$((d1 - d0))"
t_expect_eq "bloom_false_positives growth without the stage" 0 "$((b1 - b0))"
t_end "$E2E_NAME"

# ---- 3. hot swap under traffic ---------------------------------------------------
# Every load builds its filter with a new random seed, so an address that the
# filter does not match today could be a false positive of the next build.
# The swaps alternate lists A and B, and filters with the exact stage (a
# loose Bloom part, --fpr 0.05) and without it (--confirm off --fpr 1e-9),
# so that Y and Z are never matched by any of the filters (P ~ 1e-6 per
# run); `check` confirms it for Y under the filters tried first. Under the
# loose Bloom parts about one Z address in twenty is a Bloom positive of
# each filter: bloom_false_positives grows while Z is still delivered, the
# Bloom part and the stage of one filter being swapped in together.

E2E_NAME=hot_swap_under_traffic
t_begin
X=(198.51.100.20 2001:db8:100::20)
AONLY=(198.51.100.21 2001:db8:100::21)
BONLY=(198.51.100.22 2001:db8:100::22)
bg load --fpr 1e-9 "$T/listB" >/dev/null || t_fail "load B failed"
mapfile -t Y < <(pick_unmatched 1 198.51.100.{30..60}; pick_unmatched 1 2001:db8:100::{30..60})
bg load --fpr 1e-9 "$T/listA" >/dev/null || t_fail "load A failed"
for a in "${Y[@]}"; do
	[ "$(bg_check "$a")" = "no match" ] || t_fail "check $a under A: match"
done
for a in "${X[@]}" "${AONLY[@]}"; do
	[ "$(bg_check "$a")" = match ] || t_fail "check $a under A: no match"
done
((${#Y[@]} == 2)) || t_fail "no unmatched Y found"
Z=(198.51.100.{70..79} 2001:db8:100::{70..79}) # in neither list
info "X=${X[*]} Y=${Y[*]} A-only=${AONLY[*]} B-only=${BONLY[*]}"
sink_start t3 || t_fail "sink did not start"
d0=$(bg_stat dropped)
p0=$(bg_stat packets)
b0=$(bg_stat bloom_false_positives)
send_start t3 --pps "$PPS" "${X[@]}" "${Y[@]}" "${Z[@]}" "${AONLY[@]}" "${BONLY[@]}"
# Swap only once the traffic flows through the datapath.
wait_until 5 stat_above packets "$((p0 + 100))" ||
	t_fail "no traffic seen"
fails=0
ts=$(date +%s%N)
STAGE_LOADS=0
for i in $(seq 1 "$SWAPS_HOT"); do
	if ((i % 2)); then l=$T/listB; else l=$T/listA; fi
	# both lists with and without the stage: B off, A on, B on, A off, ...
	if (((i / 2) % 2)); then
		o=(--fpr 0.05)
		STAGE_LOADS=$((STAGE_LOADS + 1))
	else
		o=(--confirm off --fpr 1e-9)
	fi
	bg load "${o[@]}" "$l" >>"$T/hot.out" 2>"$T/load.err" || fails=$((fails + 1))
done
te=$(date +%s%N)
send_stop t3 || t_fail "sender did not stop"
sink_finish t3 || t_fail "sink did not finish"
d1=$(bg_stat dropped)
b1=$(bg_stat bloom_false_positives)
SWAP_MS=$(((te - ts) / 1000000))
[ "$fails" -eq 0 ] || t_fail "$fails of $SWAPS_HOT loads failed: $(cat "$T/load.err")"
for a in "${X[@]}"; do
	r=$(recv t3 "$a")
	[ "$r" -eq 0 ] || t_fail "X $a: $r of $(sent t3 "$a") delivered, expected 0"
	[ "$(sent t3 "$a")" -gt 0 ] || t_fail "X $a: nothing sent"
done
for a in "${Y[@]}" "${Z[@]}"; do
	s=$(sent t3 "$a")
	r=$(recv t3 "$a")
	[ "$s" -gt 0 ] || t_fail "Y/Z $a: nothing sent"
	[ "$r" -eq "$s" ] || t_fail "Y/Z $a: $r of $s delivered ($((s - r)) lost)"
done
# Everything not delivered was dropped by bloomgate, and nothing else.
t_expect_eq "dropped counter growth vs. sent - delivered" \
	"$(($(sent_total t3) - $(recv_total t3)))" "$((d1 - d0))"
# the stages were asked, and rejected what they did not hold
info "$STAGE_LOADS of $SWAPS_HOT loads with the stage; bloom_false_positives grew by $((b1 - b0))"
[ "$((b1 - b0))" -gt 0 ] || t_fail "bloom_false_positives did not grow under $STAGE_LOADS loose filters with the stage"
x=$(traffic_anomalies t3)
[ -z "$x" ] || t_fail "traffic anomalies: $x"
info "$SWAPS_HOT swaps in $SWAP_MS ms ($((SWAP_MS * 1000 / SWAPS_HOT)) us each) under $PPS pps; $(swap_summary "$T/hot.out")"
# Only in one list: dropped under one filter, delivered under the other, so
# some of each shows that the swaps took effect in the datapath.
for a in "${AONLY[@]}" "${BONLY[@]}"; do
	s=$(sent t3 "$a")
	r=$(recv t3 "$a")
	info "only in one list: $a delivered $r of $s"
	if [ "$r" -eq 0 ] || [ "$r" -ge "$s" ]; then
		t_fail "$a (in one list only): $r of $s delivered, expected some but not all"
	fi
done
t_end "$E2E_NAME"

# ---- 4. failing loads leave the old filter working ------------------------------

E2E_NAME=failed_load_keeps_filter
t_begin
bg_capture load "$T/list1"
[ "$BG_RC" -eq 0 ] || t_fail "load list 1 failed: $BG_ERR"
# detection says what it chose, and why
grep -qx "$T/list1: detected addresses ([0-9]* of \(the first \)\?[0-9]* non-comment lines are addresses or prefixes)" <<<"$BG_OUT" ||
	t_fail "load list 1: no 'detected addresses' line:" "$BG_OUT"
FID=$(current_filter_id)
PROBE=$(pick_unmatched 1 198.51.100.{200..250}) # in the --strict file only
printf 'garbage\nnot-an-address\n1.2.3\n2001:db8::zz\n' >"$T/garbage"
printf '%s\n%s\nthis line is bad\n' "$PROBE" 2001:db8:100::99 >"$T/strict"
for args in "$T/does-not-exist" "$T/garbage" "--strict $T/strict" \
	"$T/list1 $T/does-not-exist"; do
	# shellcheck disable=SC2086
	bg_capture load $args
	[ "$BG_RC" -eq 4 ] || t_fail "load $args: exit status $BG_RC, expected 4 (lists rejected)"
	grep -q "unchanged" <<<"$BG_ERR" || t_fail "load $args: message '$BG_ERR'"
	t_expect_eq "filter map after load $args" "$FID" "$(current_filter_id)"
done
# the garbage list, as a whole: every line rejected, no entry
bg_capture load "$T/garbage"
grep -qxF "$T/garbage: warning: 4 of 4 lines rejected as addresses; no other format reads most of them" <<<"$BG_ERR" ||
	t_fail "load garbage: no 'lines rejected' warning: '$BG_ERR'"
grep -qxF "$T/garbage: warning: no entry loaded" <<<"$BG_ERR" ||
	t_fail "load garbage: no 'no entry loaded' warning: '$BG_ERR'"
for a in 198.51.100.10 2001:db8:100::10; do
	[ "$(bg_check "$a")" = match ] || t_fail "check $a: no longer a match"
done
[ "$(bg_check "$PROBE")" = "no match" ] || t_fail "check $PROBE: match (the --strict load leaked)"
LISTED=(198.51.100.10 2001:db8:100::10)
# Every load has a new seed: pick the unlisted IPv6 address for this filter.
UNLISTED=("$PROBE" "$(pick_unmatched 1 2001:db8:100::{100..120})")
traffic_listed_dropped t4 200
t_end "$E2E_NAME"

# ---- 4b. what is not a list, bounds, and the parse outside the lock ---------------

# Is PID blocked in a read() of PATH? (/proc/PID/syscall: "0 0xFD ..." while
# in read(FD, ...); "running" otherwise.)
reading() { # PID PATH
	local nr fd
	read -r nr fd _ <"/proc/$1/syscall" 2>/dev/null || return 1
	[ "$nr" = 0 ] && [ "$(readlink "/proc/$1/fd/$((fd))")" = "$2" ]
}
gone() { ! kill -0 "$1" 2>/dev/null; }

E2E_NAME=load_refuses_what_is_not_a_list
# A FIFO nobody writes, a device that never ends, an endless pipe on stdin
# and too many entries: each refused at once with one line, exit status 4,
# and the filter of list 1 stays live, dropping what it lists. timeout
# turns a hang (the FIFO's old way) into a failure.
t_begin
FID=$(current_filter_id)
mkfifo "$T/fifo"
for args in "$T/fifo" /dev/zero "--max-entries 10 $T/list1"; do
	# shellcheck disable=SC2086
	BG_ERR=$(in_ns "$NS_GW" timeout 10 "$BG_BIN" load $args 2>&1 >/dev/null)
	BG_RC=$?
	[ "$BG_RC" -eq 4 ] || t_fail "load $args: exit status $BG_RC, expected 4 (124: it hung)"
	[ "$(wc -l <<<"$BG_ERR")" -eq 1 ] || t_fail "load $args: more than one line: '$BG_ERR'"
	t_expect_eq "filter map after load $args" "$FID" "$(current_filter_id)"
done
grep -q "^bloomgate: $T/fifo: a FIFO, not a regular file" <<<"$(in_ns "$NS_GW" timeout 10 "$BG_BIN" load "$T/fifo" 2>&1)" ||
	t_fail "load FIFO: no message naming it a FIFO"
grep -q "^bloomgate: /dev/zero: a character device, not a regular file" <<<"$(bg load /dev/zero 2>&1)" ||
	t_fail "load /dev/zero: no message naming it a device"
grep -q "(--max-entries); the running filter is unchanged" <<<"$(bg load --max-entries 10 "$T/list1" 2>&1)" ||
	t_fail "load --max-entries 10: no message naming the bound"
# standard input, endless: stopped at the bound
yes 198.51.100.200 | in_ns "$NS_GW" timeout 10 "$BG_BIN" load --max-list-bytes 100K - \
	>/dev/null 2>"$T/stdin.err"
RC=${PIPESTATUS[1]}
ERR=$(cat "$T/stdin.err")
t_expect_eq "load - of an endless pipe: exit status" 4 "$RC"
t_expect_eq "load - of an endless pipe: message" \
	"bloomgate: /dev/stdin: more than 102400 bytes (--max-list-bytes); the running filter is unchanged" "$ERR"
t_expect_eq "filter map after the endless pipe" "$FID" "$(current_filter_id)"
traffic_listed_dropped t4b 100
t_end "$E2E_NAME"

E2E_NAME=load_parses_outside_the_lock
# A load whose list is still being read (10M lines, on its stdin, from a
# pipe this script holds) must not hold up another load: the second one
# finishes while the first is provably still reading, then the first gets
# its list and goes live. With the lock taken before the parse, the
# second load would wait for the first, which waits for us: timeout says so.
t_begin
awk 'BEGIN { for (i = 0; i < 10000000; i++)
	printf "10.%d.%d.%d\n", int(i / 65536) % 256, int(i / 256) % 256, i % 256 }' >"$T/big"
mkfifo "$T/feed"
exec {FEED}<>"$T/feed" # a writer first: opening the read end then does not block
# (not spawn_in: its stdin would be /dev/null, as for any job started with &
# without a redirection of its own; nsenter execs bloomgate, so $! is its pid)
nsenter --net="/run/netns/$NS_GW" "$BG_BIN" load - <"$T/feed" >"$T/big.out" \
	2>"$T/big.err" {FEED}>&- {E2E_LOCK_FD}>&- &
BIGPID=$!
E2E_PIDS+=("$BIGPID")
wait_until 10 reading "$BIGPID" "$T/feed" || t_fail "the big load never started reading its list"
T0=$SECONDS
in_ns "$NS_GW" timeout 30 "$BG_BIN" load "$T/listA" >/dev/null 2>"$T/small.err" ||
	t_fail "the small load failed while the big one was reading: $(cat "$T/small.err")"
reading "$BIGPID" "$T/feed" || t_fail "the big load was no longer reading when the small one was done"
info "small load done in $((SECONDS - T0)) s while the big one waited for its list"
[ "$(bg_check 198.51.100.21)" = match ] || t_fail "the small load is not live"
cat "$T/big" >&"$FEED"
exec {FEED}>&-
wait_until 300 gone "$BIGPID" || t_fail "the big load did not finish"
wait "$BIGPID"
t_expect_eq "the big load's exit status" 0 "$?"
[ -s "$T/big.err" ] && t_fail "the big load said: $(head -3 "$T/big.err")"
for a in 10.0.0.0 10.100.200.7 10.152.150.127; do
	[ "$(bg_check "$a")" = match ] || t_fail "check $a: the big list is not live"
done
bg load "$T/list1" >/dev/null || t_fail "load list 1 again failed"
rm -f "$T/big" "$T/feed"
t_end "$E2E_NAME"

# ---- 8. many swaps leak no maps -----------------------------------------------

E2E_NAME=swaps_leak_no_maps
# Leaks are judged on the filter maps this test created (the id in the slot
# after each load), so other bloomgate users on the machine do not disturb
# it; the machine-wide count of maps named bg_filter is reported too.
t_begin
n0=$(count_maps bg_filter)
ids=()
fails=0
ts=$(date +%s%N)
for i in $(seq 1 "$SWAPS_LEAK"); do
	if ((i % 2)); then l=$T/listB; else l=$T/listA; fi
	bg load --fpr 1e-9 "$l" >>"$T/leak.out" 2>"$T/load.err" || fails=$((fails + 1))
	ids+=("$(current_filter_id)")
done
te=$(date +%s%N)
LEAK_MS=$(((te - ts) / 1000000))
[ "$fails" -eq 0 ] || t_fail "$fails of $SWAPS_LEAK loads failed: $(cat "$T/load.err")"
cur=$(current_filter_id)
t_expect_eq "filter in the slot" "${ids[-1]}" "$cur"
uniq=$(printf '%s\n' "${ids[@]}" | sort -u | wc -l)
t_expect_eq "distinct filter maps published" "$SWAPS_LEAK" "$uniq"
# Old filters are freed after an RCU grace period: wait for it, bounded.
ws=$(date +%s%N)
old=("${ids[@]:0:${#ids[@]}-1}")
if ! wait_until 10 none_alive "${old[@]}"; then
	left=$(still_alive "${old[@]}" | wc -l)
	t_fail "$left of the $((SWAPS_LEAK - 1)) swapped-out filter maps are still alive"
fi
we=$(date +%s%N)
still_alive "$cur" >/dev/null || t_fail "the live filter map $cur is gone"
n1=$(count_maps bg_filter)
info "$SWAPS_LEAK loads in $LEAK_MS ms ($((LEAK_MS * 1000 / SWAPS_LEAK)) us each, with a bpftool call each); $(swap_summary "$T/leak.out")"
info "swapped-out filter maps all freed $(((we - ws) / 1000000)) ms after the loop"
info "maps named bg_filter machine-wide: $n0 before the loop, $n1 after"
[ "$(bg_check 198.51.100.20)" = match ] || t_fail "check X after the loop: no match"
t_end "$E2E_NAME"

# ---- 5. flag action --------------------------------------------------------------

E2E_NAME=flag_action
t_begin
bg detach "$IF_GWC" >/dev/null || t_fail "detach failed"
attach "$IF_GWC" --action flag || t_fail "attach --action flag failed: $BG_ERR"
bg load "$T/list1" >/dev/null || t_fail "load failed"
# Started before the traffic; events stay in the ring buffer until read, so
# a late start would print the first one too.
spawn_in "$NS_GW" "$BG_BIN" events --count 1 --timeout 5 >"$T/events"
EV_PID=$E2E_LAST_PID
LISTED=() # everything is delivered with flag
UNLISTED=(198.51.100.10 2001:db8:100::10
	"$(pick_unmatched 1 198.51.100.{100..120})" "$(pick_unmatched 1 2001:db8:100::{100..120})")
f0=$(bg_stat flagged)
d0=$(bg_stat dropped)
traffic t5 100 "$PPS" "${UNLISTED[@]}" || t_fail "traffic run failed"
f1=$(bg_stat flagged)
d1=$(bg_stat dropped)
expect_delivery t5
t_expect_eq "flagged counter growth" "$(sum_sent t5 198.51.100.10 2001:db8:100::10)" "$((f1 - f0))"
t_expect_eq "dropped counter growth" 0 "$((d1 - d0))"
t_end "$E2E_NAME"

E2E_NAME=flag_events
t_begin
wait_pid "$EV_PID" 7 || t_fail "events --count 1 --timeout 5 did not exit"
ev=$(cat "$T/events")
grep -Eq "^flag dst (198\.51\.100\.10|2001:db8:100::10) on $IF_GWC\$" <<<"$ev" ||
	t_fail "events printed '$ev'"
info "event: $ev"
t_end "$E2E_NAME"

# ---- 6. --match src ------------------------------------------------------------

E2E_NAME=match_src
t_begin
bg detach "$IF_GWC" >/dev/null || t_fail "detach failed"
attach "$IF_GWC" --match src || t_fail "attach --match src failed: $BG_ERR"
cat "$T/list1" >"$T/list-src"
printf '%s\n' "$C_SRC4" "$C_SRC6" >>"$T/list-src"
# The client's own addresses must not be false positives: --fpr 1e-9.
bg load --fpr 1e-9 "$T/list-src" >/dev/null || t_fail "load failed"
[ "$(bg_check "$C_SRC4")" = match ] || t_fail "check $C_SRC4: no match"
for a in "$C_IP4" "$C_IP6"; do
	[ "$(bg_check "$a")" = "no match" ] || t_fail "check $a: match (cannot test delivery from it)"
done
# From a listed source: dropped, whatever the destination.
DSTS=("${U4[0]}" "${U6[0]}" 198.51.100.10 2001:db8:100::10)
d0=$(bg_stat dropped)
traffic t6a 100 "$PPS" --src "$C_SRC4" --src "$C_SRC6" "${DSTS[@]}" || t_fail "traffic run failed"
d1=$(bg_stat dropped)
t_expect_eq "delivered from listed sources" 0 "$(recv_total t6a)"
t_expect_eq "dropped counter growth" "$(sent_total t6a)" "$((d1 - d0))"
# From an unlisted source: delivered, even to listed destinations.
LISTED=()
UNLISTED=("${DSTS[@]}")
traffic t6b 100 "$PPS" --src "$C_IP4" --src "$C_IP6" "${DSTS[@]}" ||
	t_fail "traffic run failed"
expect_delivery t6b
t_end "$E2E_NAME"

# ---- 6c. --unparsed drop ------------------------------------------------------------
# The policy is the attachment's: attach and status say it (kept as a flag in
# the record's mode byte, so the mode must still read right), and traffic that
# parses is judged as before. The frames it drops (3+ VLAN tags, cut or
# invalid headers) are built byte by byte in tests/bpf/test_datapath.c and
# test_diff.c.

E2E_NAME=unparsed_drop
t_begin
bg detach "$IF_GWC" >/dev/null || t_fail "detach failed"
attach "$IF_GWC" --unparsed drop --any-size || t_fail "attach --unparsed drop failed: $BG_ERR"
grep -q "($ATTACH_MODE mode, .*, unparsed drop, capacity " <<<"$BG_OUT" ||
	t_fail "attach printed '$BG_OUT'"
bg status | grep -q "^attached: $IF_GWC (ifindex [0-9]*, $ATTACH_MODE mode, match dst, .*, unparsed drop, capacity " ||
	t_fail "status with --unparsed drop: $(bg status | grep "^attached: $IF_GWC")"
bg load "$T/list1" >/dev/null || t_fail "load failed"
LISTED=(198.51.100.10 2001:db8:100::10)
mapfile -t U4 < <(pick_unmatched 1 198.51.100.{100..120})
mapfile -t U6 < <(pick_unmatched 1 2001:db8:100::{100..120})
UNLISTED=("${U4[@]}" "${U6[@]}")
u0=$(bg_stat unparsed_dropped)
traffic t6c 100 "$PPS" "${LISTED[@]}" "${UNLISTED[@]}" || t_fail "traffic run failed"
expect_delivery t6c
t_expect_eq "unparsed_dropped growth (all of it parsed)" 0 "$(($(bg_stat unparsed_dropped) - u0))"
t_end "$E2E_NAME"

# ---- 9. --capacity: a fixed-size filter map, the lookups inlined -------------------
# Without a capacity the filter map may have any size (BPF_F_INNER_MAP), and
# the verifier leaves the lookups in it as calls to array_map_lookup_elem;
# with one, every filter map has the template's size and they are inlined.

# bloomgate_xdp's id on IFACE (the link has libxdp's dispatcher).
bg_prog_id() { # IFACE
	bg status | sed -n "s/^attached: $1 (.*, prog id \([0-9]*\), dns prog id.*/\1/p"
}
# Lines of the program's translated code, and its calls not inlined.
xlated_lines() { bpftool prog dump xlated id "$1" 2>/dev/null | wc -l; }
lookup_calls() { bpftool prog dump xlated id "$1" 2>/dev/null | grep -cw 'call array_map_lookup_elem'; }

CAP_KEYS=2000
# 10000 /32s: far more than $CAP_KEYS keys, even with the /16 bitmap's room
for i in $(seq 0 9999); do echo "10.$((i / 256)).$((i % 256)).1"; done >"$T/big"

E2E_NAME=capacity_attach
t_begin
PID0=$(bg_prog_id "$IF_GWC")
[ -n "$PID0" ] || t_fail "no prog id for $IF_GWC in status: $(bg status)"
bg status | grep -q "^attached: $IF_GWC .*capacity any size" ||
	t_fail "status without --capacity: $(bg status | grep "^attached: $IF_GWC")"
[ "$(xlated_lines "$PID0")" -gt 100 ] || t_fail "bpftool prog dump xlated id $PID0 printed nothing"
n=$(lookup_calls "$PID0")
[ "$n" -gt 0 ] || t_fail "without --capacity: $n calls to array_map_lookup_elem, expected some"
info "without --capacity: $n array_map_lookup_elem calls in bloomgate_xdp"
bg detach "$IF_GWC" >/dev/null || t_fail "detach failed"
attach "$IF_GWC" --capacity "$CAP_KEYS" || t_fail "attach --capacity $CAP_KEYS failed: $BG_ERR"
grep -q "capacity [0-9]* keys, " <<<"$BG_OUT" || t_fail "attach printed '$BG_OUT'"
PID1=$(bg_prog_id "$IF_GWC")
bg status | grep -Eq "^attached: $IF_GWC .*capacity [0-9]+ keys, [0-9.]+ KiB" ||
	t_fail "status with --capacity: $(bg status | grep "^attached: $IF_GWC")"
[ "$(xlated_lines "$PID1")" -gt 100 ] || t_fail "bpftool prog dump xlated id $PID1 printed nothing"
t_expect_eq "calls to array_map_lookup_elem with --capacity" 0 "$(lookup_calls "$PID1")"
t_end "$E2E_NAME"

E2E_NAME=capacity_load_fits
t_begin
bg_capture load "$T/list1"
[ "$BG_RC" -eq 0 ] || t_fail "load failed: $BG_ERR"
CAP_ELEMS=$(sed -n "s/^memory: .*fixed capacity, \([0-9]*\) elements.*/\1/p" <<<"$BG_OUT")
[ -n "$CAP_ELEMS" ] || t_fail "load does not name the fixed capacity: '$BG_OUT'"
info "capacity $CAP_KEYS keys: $CAP_ELEMS elements"
LISTED=(198.51.100.10 203.0.113.12 2001:db8:100::10 2001:db8:100::abcd)
mapfile -t U4 < <(pick_unmatched 2 198.51.100.{100..120})
mapfile -t U6 < <(pick_unmatched 2 2001:db8:100::{100..120})
UNLISTED=("${U4[@]}" "${U6[@]}")
((${#UNLISTED[@]} == 4)) || t_fail "found only ${#UNLISTED[@]} unmatched addresses"
traffic_listed_dropped t9a 200
t_end "$E2E_NAME"

E2E_NAME=capacity_load_too_big
t_begin
FID=$(current_filter_id)
bg_capture load "$T/big"
[ "$BG_RC" -eq 4 ] || t_fail "load of 10000 keys: exit status $BG_RC, expected 4"
grep -q "filter needs [0-9]* elements (.*), the attachment's capacity is $CAP_ELEMS (.*): attach with a larger --capacity" <<<"$BG_ERR" ||
	t_fail "message: '$BG_ERR'"
grep -q "unchanged" <<<"$BG_ERR" || t_fail "message does not say the filter is unchanged: '$BG_ERR'"
t_expect_eq "filter map after the refused load" "$FID" "$(current_filter_id)"
[ "$(bg_check 10.0.0.1)" = "no match" ] || t_fail "check 10.0.0.1: match (the refused list leaked)"
traffic_listed_dropped t9b 200
t_end "$E2E_NAME"

E2E_NAME=capacity_hot_swap
t_begin
X=(198.51.100.20 2001:db8:100::20)
bg load --fpr 1e-9 "$T/listB" >/dev/null || t_fail "load B failed"
mapfile -t Y < <(pick_unmatched 1 198.51.100.{30..60}; pick_unmatched 1 2001:db8:100::{30..60})
bg load --fpr 1e-9 "$T/listA" >"$T/capA.out" || t_fail "load A failed"
grep -q "fixed capacity, $CAP_ELEMS elements" "$T/capA.out" || t_fail "load A: $(cat "$T/capA.out")"
for a in "${Y[@]}"; do
	[ "$(bg_check "$a")" = "no match" ] || t_fail "check $a under A: match"
done
((${#Y[@]} == 2)) || t_fail "no unmatched Y found"
sink_start t9c || t_fail "sink did not start"
d0=$(bg_stat dropped)
p0=$(bg_stat packets)
send_start t9c --pps "$PPS" "${X[@]}" "${Y[@]}" "${AONLY[@]}" "${BONLY[@]}"
wait_until 5 stat_above packets "$((p0 + 100))" || t_fail "no traffic seen"
fails=0
for i in $(seq 1 20); do
	if ((i % 2)); then l=$T/listB; else l=$T/listA; fi
	bg load --fpr 1e-9 "$l" >/dev/null 2>"$T/load.err" || fails=$((fails + 1))
done
send_stop t9c || t_fail "sender did not stop"
sink_finish t9c || t_fail "sink did not finish"
d1=$(bg_stat dropped)
t_expect_eq "failed loads of 20" 0 "$fails"
for a in "${X[@]}"; do
	[ "$(sent t9c "$a")" -gt 0 ] || t_fail "X $a: nothing sent"
	t_expect_eq "X $a delivered" 0 "$(recv t9c "$a")"
done
for a in "${Y[@]}"; do
	s=$(sent t9c "$a")
	[ "$s" -gt 0 ] || t_fail "Y $a: nothing sent"
	t_expect_eq "Y $a delivered" "$s" "$(recv t9c "$a")"
done
t_expect_eq "dropped counter growth vs. sent - delivered" \
	"$(($(sent_total t9c) - $(recv_total t9c)))" "$((d1 - d0))"
x=$(traffic_anomalies t9c)
[ -z "$x" ] || t_fail "traffic anomalies: $x"
# swaps took effect: only in one list, dropped under one filter only
for a in "${AONLY[@]}" "${BONLY[@]}"; do
	s=$(sent t9c "$a")
	r=$(recv t9c "$a")
	if [ "$r" -eq 0 ] || [ "$r" -ge "$s" ]; then
		t_fail "$a (in one list only): $r of $s delivered, expected some but not all"
	fi
done
# the last load (i = 20) was list A
[ "$(bg_check "${AONLY[0]}")" = match ] || t_fail "check ${AONLY[0]} after the last load (A): no match"
[ "$(bg_check "${BONLY[0]}")" = "no match" ] || t_fail "check ${BONLY[0]} after the last load (A): match"
t_end "$E2E_NAME"

E2E_NAME=capacity_attach_mismatch
t_begin
for args in "--capacity $((CAP_KEYS * 2))" ""; do
	# shellcheck disable=SC2086
	attach "$IF_GWS" $args
	[ "$BG_RC" -ne 0 ] || t_fail "attach $IF_GWS ${args:-without --capacity} succeeded"
	grep -q "capacity of $CAP_ELEMS elements.*all share one filter map" <<<"$BG_ERR" ||
		t_fail "attach $IF_GWS $args: message '$BG_ERR'"
	t_expect_eq "lines on stderr" 1 "$(grep -c '' <<<"$BG_ERR")"
	[ -z "$(xdp_prog_id "$IF_GWS")" ] || t_fail "an XDP program on $IF_GWS after the refused attach"
done
t_expect_eq "bloomgate_xdp on $IF_GWC after the refused attaches" "$PID1" "$(bg_prog_id "$IF_GWC")"
attach "$IF_GWS" --capacity "$CAP_KEYS" || t_fail "attach $IF_GWS with the same capacity failed: $BG_ERR"
bg detach "$IF_GWS" >/dev/null || t_fail "detach $IF_GWS failed"
[ "$(bg_check "${AONLY[0]}")" = match ] || t_fail "check ${AONLY[0]} after attach/detach of $IF_GWS: no match"
t_end "$E2E_NAME"

# ---- 6b. an attachment whose interface was deleted -----------------------------------

# A veth of its own in the gateway, attached, then deleted: its record stays,
# without a name to show. Prints its ifindex; BG_* from the attach.
attach_doomed() { # IFACE [ATTACH OPTS...]
	ip -n "$NS_GW" link add "$1" type veth peer name "$1p" || return 1
	ip -n "$NS_GW" link set "$1" up
	ip -n "$NS_GW" link set "$1p" up
	attach "$@" || { echo "# attach $*: $BG_ERR" >&2; return 1; }
	ip -n "$NS_GW" -o link show dev "$1" | cut -d: -f1
}
NSINO=$(in_ns "$NS_GW" stat -L -c %i /proc/self/ns/net)

E2E_NAME=gone_attachment
t_begin
GONE_IDX=$(attach_doomed bggone0 --capacity "$CAP_KEYS") || t_fail "attach bggone0 failed"
[ -e "$BG_PIN/bg_progs_${GONE_IDX}_$NSINO" ] || t_fail "no bg_progs pin for ifindex $GONE_IDX: $(ls "$BG_PIN")"
ip -n "$NS_GW" link del bggone0
bg_capture status
t_expect_eq "status with a gone attachment: exit" 0 "$BG_RC"
grep -q "^attached: gone (ifindex $GONE_IDX), .*(bloomgate detach --gone removes it)$" <<<"$BG_OUT" ||
	t_fail "status: no gone line for ifindex $GONE_IDX: $BG_OUT"
grep -q "^attached: $IF_GWC " <<<"$BG_OUT" || t_fail "status: $IF_GWC no longer listed: $BG_OUT"
bg_capture detach bggone0
t_expect_eq "detach of the deleted name: exit" 2 "$BG_RC"
t_expect_eq "detach of the deleted name: message" \
	"bloomgate: detach: interface 'bggone0' does not exist; 1 attachment is to an interface that is gone (bloomgate detach --gone removes it)" \
	"$BG_ERR"
bg_capture detach --gone
t_expect_eq "detach --gone: exit" 0 "$BG_RC"
t_expect_eq "detach --gone: lines" "removed: gone (ifindex $GONE_IDX, netns inode $NSINO, prog id" \
	"$(sed 's/ prog id .*/ prog id/' <<<"$BG_OUT")"
[ ! -e "$BG_PIN/bg_progs_${GONE_IDX}_$NSINO" ] || t_fail "detach --gone left bg_progs_${GONE_IDX}_$NSINO"
bg status | grep -q "gone" && t_fail "status after detach --gone: $(bg status | grep gone)"
bg_capture detach --gone
t_expect_eq "second detach --gone" "0: no attachment is gone" "$BG_RC: $BG_OUT"
t_expect_eq "bloomgate_xdp on $IF_GWC after detach --gone" "$PID1" "$(bg_prog_id "$IF_GWC")"
[ "$(bg_check "${AONLY[0]}")" = match ] || t_fail "check ${AONLY[0]} after detach --gone: no match"
bg_capture detach bggone0
t_expect_eq "detach of the deleted name, none gone" "2: bloomgate: detach: interface 'bggone0' does not exist" "$BG_RC: $BG_ERR"
t_end "$E2E_NAME"

# The same in a namespace deleted with its interface: nothing holds it any
# more, so every interface it had is gone.
E2E_NAME=gone_with_its_namespace
t_begin
ip netns add bggone || t_fail "ip netns add bggone"
ip -n bggone link add v0 type veth peer name v1
ip -n bggone link set v0 up
ip -n bggone link set v1 up
NS2INO=$(nsenter --net=/run/netns/bggone stat -L -c %i /proc/self/ns/net)
nsenter --net=/run/netns/bggone "$BG_BIN" attach v0 --mode skb --capacity "$CAP_KEYS" >/dev/null 2>"$T/ns2.err" ||
	t_fail "attach v0 in bggone: $(cat "$T/ns2.err")"
V0_IDX=$(ip -n bggone -o link show dev v0 | cut -d: -f1)
bg status | grep -q "^attached: ifindex $V0_IDX in another network namespace (netns inode $NS2INO," ||
	t_fail "status in $NS_GW before the delete: $(bg status | grep '^attached')"
ip netns del bggone
bg status | grep -q "^attached: gone (ifindex $V0_IDX) in another network namespace (netns inode $NS2INO), .*--gone removes it" ||
	t_fail "status after the delete: $(bg status | grep '^attached')"
bg_capture detach --gone
t_expect_eq "detach --gone: exit" 0 "$BG_RC"
grep -q "^removed: gone (ifindex $V0_IDX, netns inode $NS2INO, " <<<"$BG_OUT" || t_fail "detach --gone: '$BG_OUT'"
[ ! -e "$BG_PIN/bg_progs_${V0_IDX}_$NS2INO" ] || t_fail "detach --gone left bg_progs_${V0_IDX}_$NS2INO"
t_expect_eq "bloomgate_xdp on $IF_GWC" "$PID1" "$(bg_prog_id "$IF_GWC")"
ip netns del bggone 2>/dev/null
t_end "$E2E_NAME"

# ---- 7. detach leaves nothing ------------------------------------------------------

E2E_NAME=detach_leaves_nothing
t_begin
IDX=$(ip -n "$NS_GW" -o link show dev "$IF_GWC" | cut -d: -f1)
# the live filter is pinned too (bg_filter: readers without CAP_SYS_ADMIN)
t_expect_eq "the map pinned as bg_filter" "$(current_filter_id)" \
	"$(bpftool map show pinned "$BG_PIN/bg_filter" 2>/dev/null | sed -n 's/^\([0-9]*\): .*/\1/p')"
mapfile -t OURS < <({ pinned_map_ids; current_filter_id; } | sort -u)
((${#OURS[@]} == 7)) || t_fail "expected 7 maps of ours (5 shared pins: bg_filters, bg_stats, bg_events, bg_attach, bg_protect; the attachment's bg_progs pin; the filter) before detach, found ${#OURS[@]}: $(ls "$BG_PIN" | tr "\n" " ")"
bg_capture detach "$IF_GWC"
[ "$BG_RC" -eq 0 ] || t_fail "detach failed: $BG_ERR"
l=$(ip -n "$NS_GW" link show dev "$IF_GWC")
! grep -q xdp <<<"$l" || t_fail "ip link still shows XDP: $(grep xdp <<<"$l")"
n=$(in_ns "$NS_GW" bpftool net show dev "$IF_GWC" 2>&1 | grep -c "$IF_GWC")
t_expect_eq "bpftool net entries on $IF_GWC" 0 "$n"
[ ! -e "$BG_PIN" ] || t_fail "$BG_PIN still exists: $(ls "$BG_PIN")"
# this instance's pins only (its pin directory, checked above, and libxdp's
# dispatcher for its interface): another bloomgate on the machine, with a
# pin directory of its own, is not this test's to judge
p=$(ls -d /sys/fs/bpf/xdp/dispatch-"$IDX"-* 2>/dev/null)
[ -z "$p" ] || t_fail "pins left: $p"
if ! wait_until 5 none_alive "${OURS[@]}"; then
	t_fail "maps still alive after detach: $(still_alive "${OURS[@]}" | tr '\n' ' ')"
fi
info "maps named bg_*: $MAPS_BASE machine-wide before the test, $(count_bg_maps) now"
bg_capture status
t_expect_eq "status after the last detach" "3: bloomgate is not attached to any interface" "$BG_RC: $BG_OUT"
bg_capture detach "$IF_GWC"
grep -q "bloomgate is not attached to $IF_GWC" <<<"$BG_ERR" ||
	t_fail "second detach: rc $BG_RC, '$BG_ERR'"
t_end "$E2E_NAME"

# The last attachment gone: detach --gone leaves nothing, as detach does.
E2E_NAME=detach_gone_of_the_last_leaves_nothing
t_begin
GONE_IDX=$(attach_doomed bggone1) || t_fail "attach bggone1 failed"
ip -n "$NS_GW" link del bggone1
bg_capture detach --gone
t_expect_eq "detach --gone: exit" 0 "$BG_RC"
grep -q "^removed: gone (ifindex $GONE_IDX, " <<<"$BG_OUT" || t_fail "detach --gone: '$BG_OUT'"
[ ! -e "$BG_PIN" ] || t_fail "$BG_PIN still exists: $(ls "$BG_PIN")"
bg_capture status
t_expect_eq "status after detach --gone of the last" "3" "$BG_RC"
bg_capture detach --gone
t_expect_eq "detach --gone with nothing attached" "3: bloomgate: bloomgate is not attached to any interface" "$BG_RC: $BG_ERR"
t_end "$E2E_NAME"

info "mode $ATTACH_MODE; total $((SECONDS - T_START)) s"
((E2E_FAILED == 0))
