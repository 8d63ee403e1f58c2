#!/bin/bash
# End-to-end: another XDP program on the same interface as bloomgate, run
# after it (attach --chain, `bloomgate chain`): xdp-tools' own xdp-filter
# program (xdpfilt_alw_all.o, loaded and pinned with bpftool), denying an
# address of its own, behind bloomgate's filter on a forwarding gateway.
# Both must act: bloomgate's listed address dropped, xdp-filter's denied
# address dropped, everything else delivered; the chain survives a change
# of bloomgate's programs (a growing capacity); --none takes it away.
# Then `stats --watch`'s rates while traffic flows.
# Prints "ok NAME" / "not ok NAME" per check and "# ..." notes; exits
# non-zero when a check failed. Needs root, `make` and tests/tools/.
#   bash tests/e2e/test_chain.sh
set -u
NS_C=bgkc NS_GW=bgkgw NS_S=bgks
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

PPS=3000
ATTACH_MODE=native
T_START=$SECONDS
# xdp-filter's program for its default policy, allow: what matches a rule
# is dropped, the rest passes
XF_OBJ=${XF_OBJ:-/usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_all.o}

[ -r "$XF_OBJ" ] || { echo "not ok setup"; echo "#   $XF_OBJ is missing (Debian's xdp-tools)"; exit 1; }

e2e_init
T=$E2E_TMP

X=198.51.100.20   # bloomgate's list
Y=198.51.100.30   # xdp-filter's deny map
Z=(198.51.100.40 198.51.100.41) # neither
printf '%s\n' "$X" >"$T/list"
{
	echo "$X"
	for i in $(seq 1 20000); do printf '2001:db8:100:b::%x\n' "$i"; done
} >"$T/big"

run_traffic() { # TAG: X and Y dropped, Z delivered (YDROP=0: Y delivered)
	traffic "$1" 60 "$PPS" "$X" "$Y" "${Z[@]}" || t_fail "traffic run failed"
	[ "$(sent "$1" "$X")" -gt 0 ] && [ "$(recv "$1" "$X")" -eq 0 ] ||
		t_fail "$1: X $X (bloomgate's list): $(recv "$1" "$X") of $(sent "$1" "$X") delivered"
	if [ "${YDROP:-1}" = 1 ]; then
		[ "$(sent "$1" "$Y")" -gt 0 ] && [ "$(recv "$1" "$Y")" -eq 0 ] ||
			t_fail "$1: Y $Y (xdp-filter's): $(recv "$1" "$Y") of $(sent "$1" "$Y") delivered"
	else
		[ "$(recv "$1" "$Y")" -eq "$(sent "$1" "$Y")" ] ||
			t_fail "$1: Y $Y (nothing chained): $(recv "$1" "$Y") of $(sent "$1" "$Y") delivered"
	fi
	for a in "${Z[@]}"; do
		[ "$(sent "$1" "$a")" -gt 0 ] && [ "$(recv "$1" "$a")" -eq "$(sent "$1" "$a")" ] ||
			t_fail "$1: Z $a: $(recv "$1" "$a") of $(sent "$1" "$a") delivered"
	done
}

# ---- setup: bloomgate with --chain, xdp-filter's program pinned ---------------------

E2E_NAME=chain_setup
t_begin
if ! attach "$IF_GWC" --chain --grow; then
	info "native XDP attach failed ($BG_ERR); trying --mode skb"
	ATTACH_MODE=skb
	attach "$IF_GWC" --chain --grow || t_fail "attach --chain failed: $BG_ERR"
fi
grep -q ", chain)" <<<"$BG_OUT" || t_fail "attach said: $BG_OUT"
bg load "$T/list" >/dev/null || t_fail "load failed"
bg status | grep -q "^  chain: nothing runs after bloomgate" || t_fail "status: $(bg status | grep chain)"
# xdp-filter's object pins its maps by name at the root of /sys/fs/bpf,
# where they would be any xdp-filter's on this machine: it is loaded in a
# mount namespace of its own, on a bpffs instance of its own, and handed to
# bloomgate by id while that instance holds it (once chained, bloomgate's
# program array does). Y goes in its deny map as a destination (its flag
# 2, as xdp-filter writes it; the counters beside it start at 0).
IFS=. read -r a b c d <<<"$Y"
unshare -m --propagation private sh -c '
	set -e
	mount -t bpf bpf /sys/fs/bpf
	bpftool prog loadall "$1" /sys/fs/bpf/xf type xdp >&2
	p=$(ls /sys/fs/bpf/xf | head -n 1)
	bpftool map update pinned /sys/fs/bpf/filter_ipv4 key $2 $3 $4 $5 value 2 0 0 0 0 0 0 0 >&2
	bpftool prog show pinned "/sys/fs/bpf/xf/$p" | sed -n "s/^\([0-9]*\): .*name \([a-z_0-9]*\) .*/\1 \2/p"
	# held by this process until the test has chained it
	exec sleep 60' sh "$XF_OBJ" "$a" "$b" "$c" "$d" >"$T/xf.id" 2>"$T/xf.err" &
XF_HOLD=$!
E2E_PIDS+=("$XF_HOLD")
wait_until 10 test -s "$T/xf.id" || t_fail "xdp-filter's program did not load: $(cat "$T/xf.err")"
read -r id XF_PROG <"$T/xf.id"
[ -n "$id" ] || t_fail "no program id from $XF_OBJ"
info "xdp-filter's $XF_PROG loaded as prog id $id"
t_end "$E2E_NAME"

# ---- both programs act on the interface ---------------------------------------------

E2E_NAME=chained_program_runs
t_begin
YDROP=0 run_traffic t0 # nothing chained yet: Y delivered
bg_capture chain "$IF_GWC" --prog "id:$id"
[ "$BG_RC" -eq 0 ] || t_fail "chain: $BG_ERR"
# the chain holds it now: its loader may go
kill "$XF_HOLD" 2>/dev/null
wait "$XF_HOLD" 2>/dev/null
[ -n "$(bpftool prog show id "$id" 2>/dev/null)" ] || t_fail "xdp-filter's program went with its loader"
bg status | grep -q "^  chain: prog id $id runs after bloomgate" ||
	t_fail "status: $(bg status | grep chain) (xdp-filter's program is $id)"
p0=$(bg_stat passed)
run_traffic t1
# bloomgate passed Y (and Z): what dropped Y is the next program
[ "$(($(bg_stat passed) - p0))" -ge "$(($(sent t1 "$Y") + $(sent t1 "${Z[0]}")))" ] ||
	t_fail "bloomgate's passed counter grew by $(($(bg_stat passed) - p0)) only"
info "bloomgate then $XF_PROG (id $id) on $IF_GWC: X and Y dropped, Z delivered"
t_end "$E2E_NAME"

# ---- the chain survives new programs of bloomgate's (a growth) ----------------------

E2E_NAME=chain_kept_when_programs_change
t_begin
p0=$(xdp_prog_id "$IF_GWC")
bg_capture load "$T/big"
[ "$BG_RC" -eq 0 ] || t_fail "load of the big list: $BG_ERR"
[ "$(xdp_prog_id "$IF_GWC")" != "$p0" ] || t_fail "the growth did not replace the program"
bg status | grep -q "^  chain: prog id $id runs after bloomgate" ||
	t_fail "status after the growth: $(bg status | grep chain)"
run_traffic t2
t_end "$E2E_NAME"

# ---- refusals, and --none ------------------------------------------------------------

E2E_NAME=chain_refusals_and_none
t_begin
bg_capture chain "$IF_GWC" --prog /sys/fs/bpf/no-such-prog
[ "$BG_RC" -ne 0 ] && grep -q "no such program" <<<"$BG_ERR" || t_fail "a missing program: rc $BG_RC, '$BG_ERR'"
bg_capture chain "$IF_GWC" --prog "$BG_PIN/bg_stats"
[ "$BG_RC" -ne 0 ] && grep -q "not an XDP program" <<<"$BG_ERR" || t_fail "a map: rc $BG_RC, '$BG_ERR'"
# bloomgate's own programs (the attached one, its DNS program) would run
# bloomgate again for every packet: refused, with the reason
own=$(xdp_prog_id "$IF_GWC")
own_dns=$(bg status | sed -n "s/^attached: $IF_GWC .*, dns prog id \([0-9]*\))\$/\1/p")
for p in "$own" "$own_dns"; do
	[ -n "$p" ] || { t_fail "no id of bloomgate's own program to chain"; continue; }
	bg_capture chain "$IF_GWC" --prog "id:$p"
	t_expect_eq "chain of bloomgate's own program id:$p: exit" 1 "$BG_RC"
	grep -q "is bloomgate's own program (bloomgate_.*, prog id $p)" <<<"$BG_ERR" ||
		t_fail "chain of id:$p: no reason: '$BG_ERR'"
done
bg_capture chain "$IF_GWC"
[ "$BG_RC" -eq 2 ] || t_fail "chain without --prog or --none: rc $BG_RC, '$BG_ERR'"
bg status | grep -q "^  chain: prog id $id runs" || t_fail "a refused chain changed the slot"
bg_capture chain "$IF_GWC" --none
[ "$BG_RC" -eq 0 ] || t_fail "chain --none: $BG_ERR"
YDROP=0 run_traffic t3
# an attachment without --chain has no slot
bg detach "$IF_GWC" >/dev/null || t_fail "detach failed"
attach "$IF_GWC" || t_fail "attach: $BG_ERR"
bg_capture chain "$IF_GWC" --prog "id:$id"
[ "$BG_RC" -ne 0 ] && grep -q "without --chain" <<<"$BG_ERR" || t_fail "no --chain: rc $BG_RC, '$BG_ERR'"
t_end "$E2E_NAME"

# ---- stats --watch: rates while traffic flows ----------------------------------------

E2E_NAME=stats_watch_rates
t_begin
bg load "$T/list" >/dev/null || t_fail "load failed"
bg_capture stats --watch --json
[ "$BG_RC" -eq 2 ] || t_fail "--watch --json: rc $BG_RC, '$BG_ERR'"
bg_capture stats --count 2
[ "$BG_RC" -eq 2 ] || t_fail "--count without --watch: rc $BG_RC, '$BG_ERR'"
# X listed, the two Z not: a third of the packets dropped, round-robin
sink_start w || t_fail "sink did not start"
send_start w --pps 3000 "$X" "${Z[@]}"
p0=$(bg_stat packets)
wait_until 5 stat_above packets "$((p0 + 300))" || t_fail "no traffic seen"
bg stats --watch --interval 0.5 --count 4 >"$T/watch.out" 2>"$T/watch.err" ||
	t_fail "stats --watch failed: $(cat "$T/watch.err")"
send_stop w || t_fail "sender did not stop"
sink_finish w || t_fail "sink did not finish"
head -n 1 "$T/watch.out" | grep -q "packets/s .*dropped/s .*flagged/s .*answered/s .*bloom_fp/s .*dns_queries/s" ||
	t_fail "header: $(head -n 1 "$T/watch.out")"
t_expect_eq "lines after the header (one an interval, not a terminal)" 4 "$(($(wc -l <"$T/watch.out") - 1))"
# the rates of the last three intervals (the first may start before the
# sender's pace): packets near 3000/s, a third of them dropped
tail -n 3 "$T/watch.out" | awk '{ if ($1 < 1500 || $1 > 4500 || $2 < 0.2 * $1 || $2 > 0.5 * $1 || $3 || $4) bad = bad " [" $0 "]" }
	END { if (bad) { print bad; exit 1 } }' >"$T/watch.bad" || t_fail "rates out of range:$(cat "$T/watch.bad")"
info "stats --watch: $(tail -n 1 "$T/watch.out" | tr -s ' ')"
t_end "$E2E_NAME"

info "mode $ATTACH_MODE; total $((SECONDS - T_START)) s"
((E2E_FAILED == 0))
