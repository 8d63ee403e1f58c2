#!/bin/bash
# End-to-end: `bloomgate load` killed (SIGKILL) at random moments, many
# times. After each kill: a filter is live, `check` names the list and line
# behind a listed address -- those of the lists that built the filter
# actually live, old or new --, no filter map is left over, no record of a
# filter that is not live survives the next load, and the next load does not
# wait for a lock. Prints "ok NAME" / "not ok NAME" lines; needs root and
# `make`.
#   bash tests/e2e/test_kill.sh          (BG_E2E_KILLS=N: kills, default 100)
set -u
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

KILLS=${BG_E2E_KILLS:-100}
ATTACH_MODE=native
T_START=$SECONDS
# The load record's files, named after the pin directory (user/core/record.h).
REC_BASE=/run/bloomgate/${BG_PIN//\//_}
REC_DIR=$REC_BASE.records

# ---- helpers -----------------------------------------------------------------

# Maps named bg_filter created since map id $1 that are not the live filter
# ($2) and that this test's instance still holds: pinned anywhere under its
# pin directory, or held by a bloomgate process of this pin directory (its
# environment's BLOOMGATE_PIN_DIR, or none for the default one). That is
# what a killed load could leak: the kernel frees a map nothing holds.
# Another bloomgate instance on the machine (its own pin directory, its own
# filters, maybe no process holding them) is not this test's to judge.
ours_pid() { # PID: 1 when it is a bloomgate of this pin directory
	local env
	env=$(tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null) || return 1
	if grep -q '^BLOOMGATE_PIN_DIR=' <<<"$env"; then
		grep -qxF "BLOOMGATE_PIN_DIR=$BG_PIN" <<<"$env"
	else
		[ "$BG_PIN" = /sys/fs/bpf/bloomgate ]
	fi
}
leaked_filters() { # SINCE-ID LIVE-ID
	local id pid f
	{
		bpftool -j map show 2>/dev/null | jq -r --argjson s "$1" --argjson l "$2" '
			.[] | select(.name == "bg_filter" and .id > $s and .id != $l)
			| "\(.id) \((.pids // []) | map(.pid | tostring) | join(" "))"' |
			while read -r id pids; do
				for pid in $pids; do
					ours_pid "$pid" && { echo "$id"; break; }
				done
			done
		find "$BG_PIN" -type f 2>/dev/null | while read -r f; do
			bpftool -j map show pinned "$f" 2>/dev/null |
				jq -r --argjson l "$2" 'select(.name == "bg_filter" and .id != $l) | .id'
		done
	} | sort -un
}
no_leak() { [ -z "$(leaked_filters "$@")" ]; }

# Highest map id now (maps created later have higher ids).
max_map_id() {
	bpftool -j map show 2>/dev/null | jq '[.[].id] | max // 0'
}

kill_kind() { # the live list after a kill, from the markers: S, 1 or 2
	local out=$1
	local k
	for k in S 1 2; do
		grep -q "^${MARK[$k]}: match (confirmed; listed by " <<<"$out" && printf '%s' "$k"
	done
}

# The files in the records directory, sorted, each followed by a space.
records() { find "$REC_DIR" -mindepth 1 -printf '%f\n' 2>&1 | sort | tr '\n' ' '; }

cleanup_records() { rm -rf "$REC_BASE.lists" "$REC_DIR"; }

# ---- setup ---------------------------------------------------------------------

e2e_init
trap 'e2e_cleanup; cleanup_records' EXIT
trap 'e2e_cleanup; cleanup_records; exit 130' INT
trap 'e2e_cleanup; cleanup_records; exit 143' TERM
T=$E2E_TMP

# X: listed at line 2 of every list; a marker per list tells which is live.
X=198.51.100.77
declare -A MARK=([S]=198.51.100.80 [1]=198.51.100.81 [2]=198.51.100.82)
declare -A LIST=([S]=$T/small.txt [1]=$T/big1.txt [2]=$T/big2.txt)
printf '# small\n%s\n%s\n' "$X" "${MARK[S]}" >"${LIST[S]}"
# 300k addresses each: a load that takes a few hundred ms, parse and build.
for k in 1 2; do
	{
		printf '# big %s\n%s\n%s\n' "$k" "$X" "${MARK[$k]}"
		awk -v b=$((k * 64)) 'BEGIN { for (i = 0; i < 300000; i++)
			printf "10.%d.%d.%d\n", b + int(i / 65536), int(i / 256) % 256, i % 256 }'
	} >"${LIST[$k]}"
done

E2E_NAME=attach
t_begin
attach_native_or_skb "$IF_GWC"
bg load "${LIST[S]}" >/dev/null 2>"$T/load.err" || t_fail "load of the small list: $(cat "$T/load.err")"
t_end "$E2E_NAME"

# How long a whole load of a big list takes here (the longest of three):
# the kills land in [0, 1.3 x that], before the swap and after it.
LOAD_MS=0
for k in 1 2 1; do
	t0=$(date +%s%N)
	bg load "${LIST[$k]}" >/dev/null 2>"$T/load.err" || die "load of a big list: $(cat "$T/load.err")"
	ms=$((($(date +%s%N) - t0) / 1000000))
	((ms > LOAD_MS)) && LOAD_MS=$ms
done
bg load "${LIST[S]}" >/dev/null 2>&1
info "a load of 300k addresses takes $LOAD_MS ms here"

# ---- kills -----------------------------------------------------------------------

E2E_NAME=load_killed_${KILLS}_times
t_begin
declare -A SEEN=([S]=0 [1]=0 [2]=0)
since=$(max_map_id)
# Another instance's filter on the same machine: a map named bg_filter,
# created after $since, pinned in a pin directory of its own, held by no
# process. It is not this instance's leak (the test counted it as one
# before it judged only its own pins).
# (bpffs refuses names with a dot)
OTHER_PIN=/sys/fs/bpf/bg-kill-other-$$
mkdir "$OTHER_PIN" || die "cannot make $OTHER_PIN"
bpftool map create "$OTHER_PIN/bg_filter" type array key 4 value 64 entries 1 \
	name bg_filter || die "cannot create another instance's filter map"
trap 'e2e_cleanup; cleanup_records; rm -rf "$OTHER_PIN"' EXIT
next_ms_max=0
for i in $(seq 1 "$KILLS"); do
	k=$((i % 2 + 1))
	why=()
	# nsenter execs bloomgate (no fork for a network namespace alone):
	# $! is bloomgate's own pid
	nsenter --net="/run/netns/$NS_GW" "$BG_BIN" load "${LIST[$k]}" \
		>/dev/null 2>&1 {E2E_LOCK_FD}>&- &
	pid=$!
	delay=$((RANDOM * LOAD_MS * 13 / 10 / 32768))
	sleep "$((delay / 1000)).$(printf '%03d' $((delay % 1000)))"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null

	live=$(current_filter_id)
	[ -n "$live" ] && [ "$live" -gt 0 ] || why+=("no filter in the slot")
	out=$(bg check "$X" "${MARK[S]}" "${MARK[1]}" "${MARK[2]}" 2>&1)
	got=$(kill_kind "$out")
	case $got in
	S | 1 | 2)
		SEEN[$got]=$((SEEN[$got] + 1))
		want="$X: match (confirmed; listed by $X at ${LIST[$got]}:2)"
		grep -qxF "$want" <<<"$out" || why+=("check $X: expected '$want'")
		;;
	*) why+=("check names ${got:-no list} behind the markers") ;;
	esac
	[ -n "$live" ] && [ -f "$REC_DIR/$live" ] || why+=("no record $REC_DIR/${live:-?}")
	if ! wait_until 2 no_leak "$since" "${live:-0}"; then
		why+=("filter maps left over: $(leaked_filters "$since" "${live:-0}" | tr '\n' ' ')")
	fi

	# The next load, at once: a lock held by the dead load would make it
	# wait (timeout), and its record must then be the only one.
	t0=$(date +%s%N)
	in_ns "$NS_GW" timeout 10 "$BG_BIN" load "${LIST[S]}" >/dev/null 2>"$T/next.err" ||
		why+=("the next load failed: $(cat "$T/next.err")")
	ms=$((($(date +%s%N) - t0) / 1000000))
	((ms > next_ms_max)) && next_ms_max=$ms
	live=$(current_filter_id)
	recs=$(records)
	[ "$recs" = "$live " ] || why+=("records after the next load: '$recs', live filter $live")
	cur=$(readlink "$REC_BASE.lists")
	[ "$cur" = "${REC_DIR##*/}/$live" ] || why+=("current record after the next load: '$cur'")

	if ((${#why[@]})); then
		t_fail "kill $i (list $k, after $delay ms): $(printf '%s; ' "${why[@]}")check said: $(tr '\n' '|' <<<"$out")"
		((${#T_WHY[@]} > 30)) && break
	fi
done
info "$KILLS kills of a load after 0-$((LOAD_MS * 13 / 10)) ms: the old filter live $((SEEN[S])) times, the new one $((SEEN[1] + SEEN[2])) times; the next load took at most $next_ms_max ms"
# Kills on both sides of the swap, or the loop tested less than it says.
((SEEN[S] > 0)) || t_fail "no kill landed before the swap"
((SEEN[1] + SEEN[2] > 0)) || t_fail "no kill landed after the swap"
t_end "$E2E_NAME"

# ---- status --------------------------------------------------------------------

E2E_NAME=status_names_the_lists_of_the_live_filter
t_begin
bg load "${LIST[2]}" --allow "${LIST[S]}" >/dev/null 2>"$T/load.err" || t_fail "load: $(cat "$T/load.err")"
t_expect_eq "status" "lists: block ${LIST[2]} (addr), allow ${LIST[S]} (addr)" \
	"$(bg status | grep '^lists:')"
# a live filter without its record: said so, not another filter's lists
rm -f "$REC_DIR/$(current_filter_id)"
t_expect_eq "status without the record" "lists: not recorded (check cannot name entries)" \
	"$(bg status | grep '^lists:')"
t_expect_eq "check without the record" \
	"${MARK[2]}: match (confirmed; the lists behind this filter are not known)" \
	"$(bg check "${MARK[2]}")"
bg load "${LIST[S]}" >/dev/null 2>"$T/load.err" || t_fail "load: $(cat "$T/load.err")"
t_expect_eq "status after the next load" "lists: block ${LIST[S]} (addr)" "$(bg status | grep '^lists:')"
t_end "$E2E_NAME"

# ---- the datapath after a kill -----------------------------------------------

# Whichever filter a kill leaves live, the datapath drops X and delivers an
# unlisted address.
E2E_NAME=datapath_after_a_killed_load
t_begin
nsenter --net="/run/netns/$NS_GW" "$BG_BIN" load "${LIST[1]}" >/dev/null 2>&1 {E2E_LOCK_FD}>&- &
pid=$!
sleep "0.$(printf '%03d' $((LOAD_MS / 2 % 1000)))"
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
U=198.51.100.90
[ "$(bg_check "$U")" = "no match" ] || t_fail "$U is matched by the live filter"
traffic tk 50 2000 "$X" "$U" || t_fail "traffic run failed"
t_expect_eq "$X (listed): delivered" 0 "$(recv tk "$X")"
t_expect_eq "$U (not listed): delivered" "$(sent tk "$U")" "$(recv tk "$U")"
[ "$(sent tk "$X")" -gt 0 ] || t_fail "nothing was sent to $X"
t_end "$E2E_NAME"

# ---- the last detach takes the records -----------------------------------------

E2E_NAME=detach_removes_the_records
t_begin
bg detach "$IF_GWC" >/dev/null 2>"$T/detach.err" || t_fail "detach: $(cat "$T/detach.err")"
[ ! -e "$REC_DIR" ] || t_fail "$REC_DIR left: $(records)"
if [ -L "$REC_BASE.lists" ] || [ -e "$REC_BASE.lists" ]; then
	t_fail "$REC_BASE.lists left"
fi
t_end "$E2E_NAME"

info "mode $ATTACH_MODE; total $((SECONDS - T_START)) s"
((E2E_FAILED == 0))
