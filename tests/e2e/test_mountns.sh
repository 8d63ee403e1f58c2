#!/bin/bash
# End-to-end: bloomgate run where its pins cannot be seen. `ip netns exec`
# gives each command a mount namespace of its own with a fresh /sys and no
# bpffs on /sys/fs/bpf; the filter is live all the same (attached with
# nsenter, which keeps the root mount namespace). Every command run that
# way says there is no bpffs here and how to reach the pins (nsenter
# --net=/run/netns/NAME), never "not attached" nor "run: bloomgate
# attach"; attach and load there change nothing (a bpffs of their own
# would be a new, empty one, gone with the command, and its pins with it);
# with nsenter the same commands see the filter. Prints "ok NAME" /
# "not ok NAME" per case.
#   bash tests/e2e/test_mountns.sh
set -u
export BLOOMGATE_PIN_DIR=${BLOOMGATE_PIN_DIR:-/sys/fs/bpf/bgmntns}
NS_C=bgmc NS_GW=bgmgw NS_S=bgms
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

ATTACH_MODE=native
X=198.51.100.60

# bloomgate under `ip netns exec` in the gateway: EX_OUT, EX_ERR, EX_RC.
ex() {
	EX_OUT=$(ip netns exec "$NS_GW" "$BG_BIN" "$@" 2>"$E2E_TMP/ex.err")
	EX_RC=$?
	EX_ERR=$(cat "$E2E_TMP/ex.err")
}
# The line that must explain it: no bpffs here, and the way to the pins.
says_no_bpffs() { # WHAT
	grep -qF "no bpffs on /sys/fs/bpf in this mount namespace" <<<"$EX_ERR" &&
		grep -qF "nsenter --net=/run/netns/$NS_GW bloomgate" <<<"$EX_ERR" ||
		t_fail "$1: no word of the missing bpffs: rc $EX_RC, '$EX_OUT' '$EX_ERR'"
	grep -qi "not attached\|run: bloomgate attach" <<<"$EX_OUT$EX_ERR" &&
		t_fail "$1: says bloomgate is not attached: '$EX_OUT' '$EX_ERR'"
	t_expect_eq "$1: exit" 1 "$EX_RC"
}

e2e_init

E2E_NAME=setup_attached
t_begin
attach_native_or_skb "$IF_GWC"
printf '%s\n' "$X" >"$E2E_TMP/list.txt"
bg_capture load "$E2E_TMP/list.txt"
t_expect_eq "load: exit" 0 "$BG_RC"
t_expect_eq "check $X with nsenter" match "$(bg_check "$X")"
# the premise: ip netns exec has no bpffs on /sys/fs/bpf
fs=$(ip netns exec "$NS_GW" stat -f -c %T /sys/fs/bpf 2>/dev/null)
[ "$fs" != bpf_fs ] || t_fail "ip netns exec sees bpffs on /sys/fs/bpf: nothing to test"
t_end "$E2E_NAME"

E2E_NAME=readers_say_no_bpffs
t_begin
for cmd in status stats "check $X" "events --timeout 1"; do
	# shellcheck disable=SC2086 # the words of the command
	ex $cmd
	says_no_bpffs "$cmd"
done
t_end "$E2E_NAME"

E2E_NAME=writers_change_nothing
t_begin
id0=$(xdp_prog_id "$IF_GWS")
ex attach "$IF_GWS" --mode "$ATTACH_MODE"
says_no_bpffs attach
t_expect_eq "XDP program on $IF_GWS after attach under ip netns exec" "$id0" "$(xdp_prog_id "$IF_GWS")"
ex load "$E2E_TMP/list.txt"
says_no_bpffs load
ex detach "$IF_GWC"
says_no_bpffs detach
ex chain "$IF_GWC" --none
says_no_bpffs chain
t_end "$E2E_NAME"

E2E_NAME=nsenter_sees_the_filter
t_begin
bg_capture status
t_expect_eq "status with nsenter: exit" 0 "$BG_RC"
grep -q "^attached: $IF_GWC " <<<"$BG_OUT" || t_fail "status with nsenter: $BG_OUT"
t_expect_eq "check $X with nsenter, after all that" match "$(bg_check "$X")"
t_end "$E2E_NAME"

info "$E2E_PASSED passed, $E2E_FAILED failed"
[ "$E2E_FAILED" -eq 0 ]
