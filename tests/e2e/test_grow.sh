#!/bin/bash
# End-to-end: a growing capacity (attach --grow) on a forwarding gateway
# with real UDP traffic. The filter map has a fixed size (the fast path:
# the verifier inlines its lookups); a list that outgrows it, or would fit
# it four times over, gets a map of the size its keys need and a new
# program, swapped in with the kernel's atomic XDP replace. Under traffic,
# across hundreds of such swaps, no listed packet may pass and no unlisted
# one may be dropped: every packet runs the old program with the old
# filter or the new one with the new.
# Prints "ok NAME" / "not ok NAME" per check and "# ..." notes; exits
# non-zero when a check failed. Needs root, `make` and tests/tools/.
#   bash tests/e2e/test_grow.sh        (BG_E2E_GROWS=N: loads, default 120)
set -u
NS_C=bggc NS_GW=bgggw NS_S=bggs
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

PPS=5000
LOADS=${BG_E2E_GROWS:-120}
ATTACH_MODE=native
T_START=$SECONDS


e2e_init
T=$E2E_TMP

# The two lists: X in both; a small padding in one (fits the least
# capacity, 4096 keys), a large one in the other (20000 addresses: the
# capacity grows to 1.25 times that), so that every load changes the size
# one way or the other.
X=(198.51.100.20 198.51.100.21 2001:db8:100::20)
{
	printf '%s\n' "${X[@]}"
	for i in $(seq 1 500); do printf '2001:db8:100:a::%x\n' "$i"; done
} >"$T/small"
BIGONLY=198.51.100.25 # in the big list only
{
	printf '%s\n' "${X[@]}" "$BIGONLY"
	for i in $(seq 1 20000); do printf '2001:db8:100:b::%x\n' "$i"; done
} >"$T/big"

# ---- attach --grow ---------------------------------------------------------------

E2E_NAME=attach_grow
t_begin
# the default: a growing capacity
if ! attach "$IF_GWC"; then
	info "native XDP attach failed ($BG_ERR); trying --mode skb"
	ATTACH_MODE=skb
	attach "$IF_GWC" || t_fail "attach failed in native and skb mode: $BG_ERR"
fi
info "$BG_OUT"
grep -q "capacity 4[0-9]* keys, .*, growing)" <<<"$BG_OUT" || t_fail "attach said: $BG_OUT"
bg status | grep -q "^attached: $IF_GWC .*, capacity 4[0-9]* keys, [^,]*, growing, " ||
	t_fail "status: $(bg status | grep "^attached: $IF_GWC")"
bg_capture load "$T/small"
[ "$BG_RC" -eq 0 ] || t_fail "load of the small list: $BG_ERR"
grep -q "growing capacity is now" <<<"$BG_OUT" && t_fail "the small list changed the capacity: $BG_OUT"
t_end "$E2E_NAME"

# ---- one growth: a new program, the same pins, the filter enforced ----------------

E2E_NAME=grow_replaces_program
t_begin
p0=$(xdp_prog_id "$IF_GWC")
f0=$(bg status | sed -n 's/^attached: .*capacity \([0-9]*\) keys.*/\1/p')
bg_capture load "$T/big"
[ "$BG_RC" -eq 0 ] || t_fail "load of the big list: $BG_ERR"
grep -q "growing capacity is now [0-9]* elements" <<<"$BG_OUT" || t_fail "load said: $BG_OUT"
p1=$(xdp_prog_id "$IF_GWC")
f1=$(bg status | sed -n 's/^attached: .*capacity \([0-9]*\) keys.*/\1/p')
[ -n "$p1" ] && [ "$p1" != "$p0" ] || t_fail "program id $p0 -> $p1: not replaced"
# 1.25 times the filter's tables: room for its 20000 keys and more, in
# keys at the defaults (small filters have no /16 bitmap, which those count)
[ -n "$f1" ] && ((f1 >= 21000 && f1 <= 30000)) ||
	t_fail "capacity $f0 -> $f1 keys, expected 21000-30000"
bg status | grep -q "^attached: $IF_GWC .*prog id $p1," ||
	t_fail "the record does not name the new program $p1: $(bg status | grep "^attached:")"
# the pinned slot is the new one: check reads the live filter through it
[ "$(bg_check 2001:db8:100:b::4e20)" = match ] || t_fail "check of a big-list entry after the growth"
[ "$(bg_check 198.51.100.20)" = match ] || t_fail "check of X after the growth"
# one program on the interface, and the old one gone with its maps
[ -z "$(bpftool prog show id "$p0" 2>/dev/null)" ] || t_fail "the old program $p0 is still loaded"
info "program $p0 -> $p1, capacity $f0 -> $f1 keys"
t_end "$E2E_NAME"

# ---- growths and shrinks under traffic ----------------------------------------------

E2E_NAME=grow_under_traffic
t_begin
mapfile -t Z < <(pick_unmatched 6 198.51.100.{70..99} 2001:db8:100::{70..99})
((${#Z[@]} == 6)) || t_fail "found only ${#Z[@]} unmatched addresses"
sink_start t1 || t_fail "sink did not start"
d0=$(bg_stat dropped)
p0=$(bg_stat packets)
send_start t1 --pps "$PPS" "${X[@]}" "${Z[@]}"
wait_until 5 stat_above packets "$((p0 + 100))" || t_fail "no traffic seen"
fails=0 changes=0 progs=1
last=$(xdp_prog_id "$IF_GWC")
: >"$T/loads.out"
for i in $(seq 1 "$LOADS"); do
	if ((i % 2)); then l=$T/small; else l=$T/big; fi
	if bg load "$l" >"$T/load.out" 2>"$T/load.err"; then
		grep -q "growing capacity is now" "$T/load.out" && changes=$((changes + 1))
		cat "$T/load.out" >>"$T/loads.out"
	else
		fails=$((fails + 1))
	fi
	id=$(xdp_prog_id "$IF_GWC")
	[ "$id" != "$last" ] && progs=$((progs + 1))
	[ -n "$id" ] || t_fail "no program on $IF_GWC after load $i"
	last=$id
done
send_stop t1 || t_fail "sender did not stop"
sink_finish t1 || t_fail "sink did not finish"
d1=$(bg_stat dropped)
[ "$fails" -eq 0 ] || t_fail "$fails of $LOADS loads failed: $(cat "$T/load.err")"
((changes >= 100)) || t_fail "$changes capacity changes in $LOADS loads, expected >= 100"
((progs - 1 >= changes)) || t_fail "$changes capacity changes but $((progs - 1)) program changes seen"
for a in "${X[@]}"; do
	r=$(recv t1 "$a")
	[ "$(sent t1 "$a")" -gt 0 ] || t_fail "X $a: nothing sent"
	[ "$r" -eq 0 ] || t_fail "X $a (listed): $r of $(sent t1 "$a") delivered"
done
for a in "${Z[@]}"; do
	s=$(sent t1 "$a")
	r=$(recv t1 "$a")
	[ "$s" -gt 0 ] || t_fail "Z $a: nothing sent"
	[ "$r" -eq "$s" ] || t_fail "Z $a (not listed): $r of $s delivered"
done
t_expect_eq "dropped counter growth vs. sent - delivered" \
	"$(($(sent_total t1) - $(recv_total t1)))" "$((d1 - d0))"
x=$(traffic_anomalies t1)
[ -z "$x" ] || t_fail "traffic anomalies: $x"
info "$LOADS loads, $changes capacity changes (new programs) under $PPS pps: $(sent_total t1) sent, $(recv_total t1) delivered"
t_end "$E2E_NAME"

# ---- an artifact (built for its own size) into a growing capacity ---------------------

E2E_NAME=artifact_takes_its_shape
t_begin
bg build --output "$T/small.bgf" "$T/small" >/dev/null || t_fail "build failed"
p0=$(xdp_prog_id "$IF_GWC")
bg_capture load "$T/small.bgf"
[ "$BG_RC" -eq 0 ] || t_fail "load of the artifact: $BG_ERR"
grep -q "growing capacity is now [0-9]* elements" <<<"$BG_OUT" || t_fail "load said: $BG_OUT"
[ "$(xdp_prog_id "$IF_GWC")" != "$p0" ] || t_fail "the program was not replaced"
bg status | grep -q "^attached: $IF_GWC .*, growing, " || t_fail "status: $(bg status | grep '^attached')"
[ "$(bg_check 198.51.100.20)" = match ] || t_fail "X not matched under the artifact"
[ "$(bg_check 2001:db8:100:a::1f4)" = match ] || t_fail "the small list's last entry not matched"
# the same artifact again: its shape is the attached one, no new programs
p1=$(xdp_prog_id "$IF_GWC")
bg_capture load "$T/small.bgf"
[ "$BG_RC" -eq 0 ] || t_fail "second load of the artifact: $BG_ERR"
grep -q "growing capacity is now" <<<"$BG_OUT" && t_fail "the same shape changed the programs: $BG_OUT"
t_expect_eq "program after the same artifact again" "$p1" "$(xdp_prog_id "$IF_GWC")"
# another artifact of any size that fits the capacity: copied into a map of
# that size, no new programs (a fleet's generations swap in as lists do)
{
	printf '%s\n' "${X[@]}"
	for i in $(seq 1 2000); do printf '2001:db8:100:c::%x\n' "$i"; done
} >"$T/mid"
bg build --output "$T/mid.bgf" "$T/mid" >/dev/null || t_fail "build of mid failed"
bg_capture load "$T/mid.bgf"
[ "$BG_RC" -eq 0 ] || t_fail "load of the mid artifact: $BG_ERR"
grep -q "capacity is now" <<<"$BG_OUT" && t_fail "an artifact that fits changed the programs: $BG_OUT"
t_expect_eq "program after an artifact that fits" "$p1" "$(xdp_prog_id "$IF_GWC")"
[ "$(bg_check 2001:db8:100:c::7d0)" = match ] || t_fail "the mid artifact's last entry not matched"
[ "$(bg_check 2001:db8:100:a::1f4)" = "no match" ] || t_fail "the small artifact's entry still matched"
# and a list after it grows from there
bg_capture load "$T/big"
[ "$BG_RC" -eq 0 ] || t_fail "load of the big list after the artifact: $BG_ERR"
[ "$(bg_check 2001:db8:100:b::4e20)" = match ] || t_fail "the big list is not live"
t_end "$E2E_NAME"

# ---- a shape change killed half way is made anew by the next load --------------------

rec_prog() { bg status | sed -n "s/^attached: $1 .*, prog id \([0-9]*\),.*/\1/p"; } # IFACE
E2E_NAME=killed_shape_change_repaired
t_begin
attach "$IF_GWS" --grow || t_fail "attach --grow $IF_GWS: $BG_ERR"
bg load "$T/big" >/dev/null || t_fail "load of the big list failed"
for i in "$IF_GWC" "$IF_GWS"; do
	t_expect_eq "$i: the attached program is the record's" "$(rec_prog "$i")" "$(xdp_prog_id "$i")"
done
# the small list shrinks the capacity; the process stops after the first
# interface's swap, before the records and pins (as a kill there would)
BLOOMGATE_FAULT=reshape-swapped bg load "$T/small" >/dev/null 2>&1
rc=$?
[ "$rc" -eq 9 ] || t_fail "the faulted load exited $rc, expected 9"
stale=0
for i in "$IF_GWC" "$IF_GWS"; do
	[ "$(rec_prog "$i")" != "$(xdp_prog_id "$i")" ] && stale=$((stale + 1))
done
[ "$stale" -eq 1 ] || t_fail "$stale interfaces run another program than their record, expected 1"
# the next load, of a list that fits: every attachment on new programs of
# the pinned slot again, and the filter it loads is the one enforced
bg_capture load "$T/big"
[ "$BG_RC" -eq 0 ] || t_fail "the load after the killed one: $BG_ERR"
grep -q "capacity is now" <<<"$BG_OUT" || t_fail "no new programs: $BG_OUT"
for i in "$IF_GWC" "$IF_GWS"; do
	t_expect_eq "$i: the attached program is the record's after the repair" "$(rec_prog "$i")" "$(xdp_prog_id "$i")"
done
mapfile -t Z2 < <(pick_unmatched 2 198.51.100.{70..99})
((${#Z2[@]} == 2)) || t_fail "found only ${#Z2[@]} unmatched addresses"
traffic t9 50 2000 "$BIGONLY" "${Z2[@]}" || t_fail "traffic run failed"
# the big list's own address: dropped by the program the repair put on
# $IF_GWC, which the killed load had left on a slot of the small list
[ "$(sent t9 "$BIGONLY")" -gt 0 ] && [ "$(recv t9 "$BIGONLY")" -eq 0 ] ||
	t_fail "$BIGONLY (big list only): $(recv t9 "$BIGONLY") of $(sent t9 "$BIGONLY") delivered"
for a in "${Z2[@]}"; do
	[ "$(recv t9 "$a")" -eq "$(sent t9 "$a")" ] || t_fail "Z $a: $(recv t9 "$a") of $(sent t9 "$a") delivered"
done
bg detach "$IF_GWS" >/dev/null || t_fail "detach $IF_GWS failed"
t_end "$E2E_NAME"

# ---- a load from another network namespace changes the capacity too ----------------

# The interface is in $NS_GW; the load runs in this script's namespace: its
# new program is put on the interface from within $NS_GW (setns).
E2E_NAME=grow_from_another_namespace
t_begin
host_load() { BLOOMGATE_PIN_DIR=$BG_PIN "$BG_BIN" load "$@"; }
p0=$(xdp_prog_id "$IF_GWC")
out=$(host_load "$T/small" 2>&1) || t_fail "load of the small list from outside $NS_GW: $out"
grep -q "growing capacity is now" <<<"$out" || t_fail "the small list did not shrink the capacity: $out"
p1=$(xdp_prog_id "$IF_GWC")
[ -n "$p1" ] && [ "$p1" != "$p0" ] || t_fail "program $p0 -> $p1: not replaced"
t_expect_eq "the record names the program put on from outside" "$p1" "$(rec_prog "$IF_GWC")"
traffic t10 50 2000 "${X[0]}" "$BIGONLY" || t_fail "traffic run failed"
[ "$(sent t10 "${X[0]}")" -gt 0 ] && [ "$(recv t10 "${X[0]}")" -eq 0 ] ||
	t_fail "X ${X[0]}: $(recv t10 "${X[0]}") of $(sent t10 "${X[0]}") delivered"
[ "$(recv t10 "$BIGONLY")" -eq "$(sent t10 "$BIGONLY")" ] ||
	t_fail "$BIGONLY (not in the small list): $(recv t10 "$BIGONLY") of $(sent t10 "$BIGONLY") delivered"
out=$(host_load "$T/big" 2>&1) || t_fail "load of the big list from outside $NS_GW: $out"
grep -q "growing capacity is now" <<<"$out" || t_fail "the big list did not grow the capacity: $out"
[ "$(xdp_prog_id "$IF_GWC")" != "$p1" ] || t_fail "the growth did not replace the program"
[ "$(bg_check "$BIGONLY")" = match ] || t_fail "$BIGONLY not matched after the growth"
t_end "$E2E_NAME"

# ---- without --grow a list that does not fit is refused -----------------------------

E2E_NAME=fixed_capacity_refuses
t_begin
bg detach "$IF_GWC" >/dev/null || t_fail "detach failed"
attach "$IF_GWC" --capacity 1000 || t_fail "attach --capacity 1000: $BG_ERR"
p0=$(xdp_prog_id "$IF_GWC")
bg_capture load "$T/small"
[ "$BG_RC" -eq 0 ] || t_fail "load of the small list: $BG_ERR"
bg_capture load "$T/big"
[ "$BG_RC" -ne 0 ] || t_fail "the big list loaded into a fixed capacity"
grep -q "attach with a larger --capacity" <<<"$BG_ERR" || t_fail "message: $BG_ERR"
t_expect_eq "program after the refused load" "$p0" "$(xdp_prog_id "$IF_GWC")"
[ "$(bg_check 2001:db8:100:a::1)" = match ] || t_fail "the small list is not live after the refusal"
t_end "$E2E_NAME"

# ---- the agent: grow:, and a capacity setting changed by a reload --------------------

agent_log_has() { grep -qF -- "$1" "$E2E_TMP/agent.log"; }
cap_line() { bg status | grep "^attached: $IF_GWC "; }
write_cfg() { # INTERFACE-KEYS...
	{
		echo "interfaces:"
		echo "  - name: $IF_GWC"
		echo "    mode: $ATTACH_MODE"
		for k in "$@"; do echo "    $k"; done
		echo "state_dir: $T/state"
		echo "debounce: 0ms"
		echo "lists:"
		echo "  - name: l"
		echo "    path: $T/agent.list"
	} >"$T/agent.yaml"
}

E2E_NAME=agent_capacity_follows_config
t_begin
bg detach "$IF_GWC" >/dev/null || t_fail "detach failed"
cp "$T/small" "$T/agent.list"
write_cfg # the default: a growing capacity
: >"$E2E_TMP/agent.log"
spawn_in "$NS_GW" "$BG_BIN" agent --config "$T/agent.yaml" 2>>"$E2E_TMP/agent.log"
AGENT_PID=$E2E_LAST_PID
wait_until 20 agent_log_has "live:" || t_fail "no filter from the agent: $(tail -n 3 "$E2E_TMP/agent.log")"
cap_line | grep -q ", growing, " || t_fail "agent's attachment: $(cap_line)"
sink_start t2 || t_fail "sink did not start"
send_start t2 --pps "$PPS" "${X[@]}" "${Z[@]}"
p0=$(bg_stat packets)
wait_until 5 stat_above packets "$((p0 + 100))" || t_fail "no traffic seen"
# the list outgrows the capacity: it grows
cp "$T/big" "$T/agent.list.new" && mv "$T/agent.list.new" "$T/agent.list"
wait_until 20 agent_log_has "the growing capacity is now" ||
	t_fail "the agent's capacity did not grow: $(tail -n 3 "$E2E_TMP/agent.log")"
wait_until 10 test "$(bg_check 2001:db8:100:b::4e20)" = match || t_fail "the big list is not live"
# a fixed capacity set by a reload: new programs of that size
id0=$(xdp_prog_id "$IF_GWC")
write_cfg "capacity: 50000"
bg reload >/dev/null || t_fail "reload (capacity: 50000) failed"
wait_until 20 agent_log_has "the capacity is now" ||
	t_fail "no reshape after the reload: $(tail -n 3 "$E2E_TMP/agent.log")"
cap_line | grep -q "capacity 5[0-9]* keys, [^,]*, prog" || t_fail "after capacity: 50000: $(cap_line)"
[ "$(xdp_prog_id "$IF_GWC")" != "$id0" ] || t_fail "the program was not replaced"
# and to any size (grow: false without a capacity)
write_cfg "grow: false"
bg reload >/dev/null || t_fail "reload (grow: false) failed"
wait_until 20 agent_log_has "the capacity is now any size" ||
	t_fail "no reshape to any size: $(tail -n 3 "$E2E_TMP/agent.log")"
cap_line | grep -q "capacity any size, prog" || t_fail "after grow: false: $(cap_line)"
send_stop t2 || t_fail "sender did not stop"
sink_finish t2 || t_fail "sink did not finish"
for a in "${X[@]}"; do
	[ "$(recv t2 "$a")" -eq 0 ] || t_fail "X $a (listed): $(recv t2 "$a") of $(sent t2 "$a") delivered"
done
for a in "${Z[@]}"; do
	[ "$(recv t2 "$a")" -eq "$(sent t2 "$a")" ] || t_fail "Z $a: $(recv t2 "$a") of $(sent t2 "$a") delivered"
done
kill -TERM "$AGENT_PID" 2>/dev/null
wait_pid "$AGENT_PID" 10 || t_fail "the agent did not stop"
grep "capacity" "$E2E_TMP/agent.log" | sed 's/^/# agent: /'
t_end "$E2E_NAME"

info "mode $ATTACH_MODE; total $((SECONDS - T_START)) s"
((E2E_FAILED == 0))
