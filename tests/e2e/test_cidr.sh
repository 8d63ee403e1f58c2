#!/bin/bash
# End-to-end: CIDR prefixes and allowlists on a forwarding gateway (issue 3).
# bloomgate blocks 198.51.100.0/24 and 2001:db8:100::/64 with an allowlist
# holding one host of each; UDP to every address of the /24 and to a sample
# of the /64 must be dropped, except the allowlisted hosts, which are
# delivered; `stats` counts them as allowlisted and `check` names the
# covering prefix and the allow entry with their file:line. Then
# IPv4-mapped entries (loaded as IPv4) and wide prefixes (rejected unless
# --allow-wide).
# Prints "ok NAME" / "not ok NAME" per check and "# ..." notes; exits
# non-zero when a check failed. Needs root, `make` and tests/tools/.
#   bash tests/e2e/test_cidr.sh
set -u
# Own namespaces (test_gateway.sh uses bgc/bggw/bgs; they run one at a time
# under lib.sh's lock anyway).
NS_C=bgxc NS_GW=bgxgw NS_S=bgxs
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

PPS=5000
ATTACH_MODE=native
T_START=$SECONDS
NET4=198.51.100 # the blocked /24; the server answers for all of it
NET6=2001:db8:100 # the blocked /64 is $NET6::/64
ALLOW4=$NET4.77
ALLOW6=$NET6::77
CTRL4=203.0.113.1 # routed, never listed: delivery works at all
CTRL6=2001:db8:101::1 # routed by this script (below), never listed

# ---- helpers -----------------------------------------------------------------

sum_sent() { # TAG ADDR...
	local tag=$1 a n=0
	shift
	for a in "$@"; do
		n=$((n + $(sent "$tag" "$a")))
	done
	echo "$n"
}

# Every datagram to BLOCKED lost, every one to DELIVERED received; nothing
# sent is missing from the sender's report, nothing odd on either side.
check_delivery() { # TAG ; arrays BLOCKED, DELIVERED
	local a s r x bad=0
	for a in "${BLOCKED[@]}"; do
		s=$(sent "$1" "$a")
		r=$(recv "$1" "$a")
		[ "$s" -gt 0 ] || t_fail "$a: nothing was sent"
		if [ "$r" -ne 0 ]; then
			((bad++ < 5)) && t_fail "$a (blocked): $r of $s delivered, expected 0"
		fi
	done
	((bad > 5)) && t_fail "... $bad blocked addresses got traffic"
	for a in "${DELIVERED[@]}"; do
		s=$(sent "$1" "$a")
		r=$(recv "$1" "$a")
		[ "$s" -gt 0 ] || t_fail "$a: nothing was sent"
		[ "$r" -eq "$s" ] || t_fail "$a (must pass): $r of $s delivered"
	done
	x=$(traffic_anomalies "$1")
	[ -z "$x" ] || t_fail "traffic anomalies: $x"
}

# `bloomgate check ADDR` prints exactly the expected line.
expect_check() { # ADDR EXPECTED-LINE
	local out
	out=$(bg check "$1" 2>&1)
	[ "$out" = "$2" ] || t_fail "check $1: '$out'" "  expected: '$2'"
}

e2e_init
T=$E2E_TMP

# A second IPv6 /64 behind the server, for an unlisted IPv6 control.
ip -n "$NS_GW" -6 route add 2001:db8:101::/64 via "$S_IP6" || die "route on the gateway"
ip -n "$NS_S" -6 route add local 2001:db8:101::/64 dev lo || die "local route on the server"

# ---- lists ---------------------------------------------------------------------
# Line numbers matter: `check` reports them, with each entry as parsed (the
# IPv6 line has host bits set: it is listed, and named, as $NET6::/64).
cat >"$T/block" <<EOF
# e2e: CIDR blocklist
; prefixes only

$NET4.0/24   # the whole /24
192.0.2.128/25
$NET6::abcd/64 ; host bits set
EOF
BLOCK_LINE4="$NET4.0/24 at $T/block:4"
BLOCK_LINE6="$NET6::/64 at $T/block:6"
cat >"$T/allow" <<EOF
# e2e: allowlist, one host of each
$ALLOW4
$ALLOW6    # ops host
EOF
ALLOW_LINE4="$ALLOW4 at $T/allow:2"
ALLOW_LINE6="$ALLOW6 at $T/allow:3"

# ---- attach and load -----------------------------------------------------------

E2E_NAME=attach
t_begin
attach_native_or_skb "$IF_GWC"
[ -n "$(xdp_prog_id "$IF_GWC")" ] || t_fail "no XDP program on $IF_GWC after attach"
t_end "$E2E_NAME"

E2E_NAME=load_cidr_with_allowlist
t_begin
# --fpr 1e-6: the unlisted controls are never false positives in practice.
bg_capture load --fpr 1e-6 --allow "$T/allow" "$T/block"
[ "$BG_RC" -eq 0 ] || t_fail "load failed (status $BG_RC): $BG_ERR"
grep -q "block:6: warning: host bits set, using $NET6::/64" <<<"$BG_ERR" ||
	t_fail "no host-bits warning for line 6: '$BG_ERR'"
grep -q '^allowlist: *2 entries from 1 file -> 1 IPv4, 1 IPv6 exact ranges$' <<<"$BG_OUT" ||
	t_fail "load output has no 'allowlist: 2 entries ... 1 IPv4, 1 IPv6' line:" "$BG_OUT"
st=$(bg status)
grep -q 'allowlist 1 IPv4 + 1 IPv6 ranges' <<<"$st" || t_fail "status: $st"
info "$(grep -E '^(probes|allowlist)' <<<"$BG_OUT" | tr '\n' ';')"
t_end "$E2E_NAME"

# ---- check names the entries -------------------------------------------------------

E2E_NAME=check_names_prefix_and_allow_entry
t_begin
expect_check "$NET4.0" "$NET4.0: match (confirmed; listed by $BLOCK_LINE4)"
expect_check "$NET4.5" "$NET4.5: match (confirmed; listed by $BLOCK_LINE4)"
expect_check "$NET4.255" "$NET4.255: match (confirmed; listed by $BLOCK_LINE4)"
expect_check "$NET6::abcd" "$NET6::abcd: match (confirmed; listed by $BLOCK_LINE6)"
expect_check "$NET6:0:ffff:ffff:ffff:ffff" "$NET6:0:ffff:ffff:ffff:ffff: match (confirmed; listed by $BLOCK_LINE6)"
expect_check "$ALLOW4" "$ALLOW4: no match (allowlisted by $ALLOW_LINE4; listed by $BLOCK_LINE4)"
expect_check "$ALLOW6" "$ALLOW6: no match (allowlisted by $ALLOW_LINE6; listed by $BLOCK_LINE6)"
expect_check "$CTRL4" "$CTRL4: no match"
expect_check "$CTRL6" "$CTRL6: no match"
expect_check 198.51.101.0 "198.51.101.0: no match"
expect_check 2001:db8:100:1:: "2001:db8:100:1::: no match"
t_end "$E2E_NAME"

# ---- traffic: every address of the /24 --------------------------------------------

E2E_NAME=ipv4_slash24_dropped_except_allowlisted
t_begin
ALL4=()
for i in $(seq 0 255); do ALL4+=("$NET4.$i"); done
BLOCKED=()
for a in "${ALL4[@]}"; do [ "$a" = "$ALLOW4" ] || BLOCKED+=("$a"); done
DELIVERED=("$ALLOW4")
d0=$(bg_stat dropped)
w0=$(bg_stat allowlisted)
p0=$(bg_stat positives)
traffic t4 3 "$PPS" "${ALL4[@]}" || t_fail "traffic run failed"
d1=$(bg_stat dropped)
w1=$(bg_stat allowlisted)
p1=$(bg_stat positives)
check_delivery t4
t_expect_eq "dropped counter growth" "$(sum_sent t4 "${BLOCKED[@]}")" "$((d1 - d0))"
t_expect_eq "allowlisted counter growth" "$(sent t4 "$ALLOW4")" "$((w1 - w0))"
t_expect_eq "positives counter growth" "$(sent_total t4)" "$((p1 - p0))"
info "256 addresses: sent $(sent_total t4), delivered $(recv_total t4), dropped $((d1 - d0)), allowlisted $((w1 - w0))"
t_end "$E2E_NAME"

# ---- traffic: a sample of the /64, and the controls ---------------------------------

E2E_NAME=ipv6_slash64_dropped_except_allowlisted
t_begin
# Canonical text (as udpsink prints it): groups without leading zeros, a
# single zero group not shortened to "::".
SAMPLE6=("$NET6::" "$NET6::1" "$NET6::76" "$NET6::78" "$NET6::7:0"
	"$NET6:0:ffff:ffff:ffff:ffff" "$NET6:0:8000::" "$NET6::ffff")
RANDOM=4242
for i in $(seq 1 40); do
	SAMPLE6+=("$(printf '%s:0:%x:%x:%x:%x' "$NET6" $((RANDOM % 65535 + 1)) \
		$((RANDOM % 65535 + 1)) $((RANDOM % 65535 + 1)) $((RANDOM % 65535 + 1)))")
done
BLOCKED=("${SAMPLE6[@]}")
DELIVERED=("$ALLOW6" "$CTRL6" "$CTRL4")
d0=$(bg_stat dropped)
w0=$(bg_stat allowlisted)
n0=$(bg_stat negatives)
traffic t6 3 "$PPS" "${SAMPLE6[@]}" "${DELIVERED[@]}" || t_fail "traffic run failed"
d1=$(bg_stat dropped)
w1=$(bg_stat allowlisted)
n1=$(bg_stat negatives)
check_delivery t6
t_expect_eq "dropped counter growth" "$(sum_sent t6 "${BLOCKED[@]}")" "$((d1 - d0))"
t_expect_eq "allowlisted counter growth" "$(sent t6 "$ALLOW6")" "$((w1 - w0))"
# The controls are negatives: the allowlist is not what let them through.
t_expect_eq "negatives counter growth" "$(sum_sent t6 "$CTRL4" "$CTRL6")" "$((n1 - n0))"
info "${#SAMPLE6[@]} addresses of $NET6::/64 + allowlisted + 2 controls: sent $(sent_total t6), delivered $(recv_total t6), dropped $((d1 - d0)), allowlisted $((w1 - w0))"
t_end "$E2E_NAME"

# ---- the allowlist comes with the load ------------------------------------------------

E2E_NAME=reload_without_allowlist_drops_hosts
t_begin
bg_capture load --fpr 1e-6 "$T/block"
[ "$BG_RC" -eq 0 ] || t_fail "load failed: $BG_ERR"
! grep -q '^allowlist' <<<"$BG_OUT" || t_fail "load without --allow printed an allowlist line"
expect_check "$ALLOW4" "$ALLOW4: match (confirmed; listed by $BLOCK_LINE4)"
expect_check "$ALLOW6" "$ALLOW6: match (confirmed; listed by $BLOCK_LINE6)"
BLOCKED=("$ALLOW4" "$ALLOW6")
DELIVERED=("$CTRL4" "$CTRL6")
w0=$(bg_stat allowlisted)
traffic t7 3 "$PPS" "${BLOCKED[@]}" "${DELIVERED[@]}" || t_fail "traffic run failed"
w1=$(bg_stat allowlisted)
check_delivery t7
t_expect_eq "allowlisted counter growth" 0 "$((w1 - w0))"
t_end "$E2E_NAME"

# ---- IPv4-mapped entries and wide prefixes (issue 12) ------------------------------

# ::ffff:a.b.c.d is the IPv4 entry (an IPv6 key would never meet an IPv4
# packet); 0.0.0.0/0 and ::/0 are rejected lines without --allow-wide, and
# the rest of the list loads.
cat >"$T/hard" <<EOF
# e2e: IPv4-mapped and wide entries
::ffff:10.9.0.1
::ffff:$NET4.9/128
0.0.0.0/0
::/0
EOF

E2E_NAME=mapped_loads_as_ipv4_wide_rejected
t_begin
bg_capture load --fpr 1e-6 "$T/hard"
[ "$BG_RC" -eq 0 ] || t_fail "load failed (status $BG_RC): $BG_ERR"
for want in \
	"$T/hard:2: warning: IPv4-mapped IPv6, using 10.9.0.1: '::ffff:10.9.0.1'" \
	"$T/hard:3: warning: IPv4-mapped IPv6, using $NET4.9: '::ffff:$NET4.9/128'" \
	"$T/hard:4: prefix shorter than /8 blocks too much (needs --allow-wide): '0.0.0.0/0'" \
	"$T/hard:5: prefix shorter than /16 blocks too much (needs --allow-wide): '::/0'"; do
	grep -qxF "$want" <<<"$BG_ERR" || t_fail "load did not report: $want" "  stderr: $BG_ERR"
done
expect_check 10.9.0.1 "10.9.0.1: match (confirmed; listed by 10.9.0.1 at $T/hard:2)"
# the rejected 0.0.0.0/0 is no reason for anything
expect_check "$NET4.9" "$NET4.9: match (confirmed; listed by $NET4.9 at $T/hard:3)"
expect_check ::ffff:10.9.0.1 "::ffff:10.9.0.1: no match"
expect_check "$CTRL4" "$CTRL4: no match"
expect_check "$CTRL6" "$CTRL6: no match"
BLOCKED=("$NET4.9")
DELIVERED=("$CTRL4" "$CTRL6" "$NET4.10")
traffic t8 3 "$PPS" "${BLOCKED[@]}" "${DELIVERED[@]}" || t_fail "traffic run failed"
check_delivery t8
t_end "$E2E_NAME"

E2E_NAME=wide_needs_allow_wide
t_begin
# --strict: a wide prefix is a rejected line, the load fails, nothing changes
bg_capture load --strict --fpr 1e-6 "$T/hard"
[ "$BG_RC" -ne 0 ] || t_fail "load --strict of a list with 0.0.0.0/0 succeeded"
grep -qF "rejected lines with --strict; the running filter is unchanged" <<<"$BG_ERR" ||
	t_fail "load --strict did not say why: $BG_ERR"
expect_check "$CTRL4" "$CTRL4: no match"
# opted in: loaded, still reported
bg_capture load --allow-wide --fpr 1e-6 "$T/hard"
[ "$BG_RC" -eq 0 ] || t_fail "load --allow-wide failed (status $BG_RC): $BG_ERR"
grep -qxF "$T/hard:4: warning: wide prefix, loaded (--allow-wide): '0.0.0.0/0'" <<<"$BG_ERR" ||
	t_fail "load --allow-wide did not warn about line 4: $BG_ERR"
expect_check "$CTRL4" "$CTRL4: match (confirmed; listed by 0.0.0.0/0 at $T/hard:4)"
expect_check "$CTRL6" "$CTRL6: match (confirmed; listed by ::/0 at $T/hard:5)"
t_end "$E2E_NAME"

E2E_NAME=detach
t_begin
bg_capture detach "$IF_GWC"
[ "$BG_RC" -eq 0 ] || t_fail "detach failed: $BG_ERR"
[ -z "$(xdp_prog_id "$IF_GWC")" ] || t_fail "XDP program still on $IF_GWC"
[ ! -e "$BG_PIN" ] || t_fail "$BG_PIN still exists"
t_end "$E2E_NAME"

info "mode $ATTACH_MODE; total $((SECONDS - T_START)) s"
((E2E_FAILED == 0))
