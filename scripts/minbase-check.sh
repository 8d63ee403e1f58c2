#!/bin/bash
# Proves that `make test` passes on a minimal Debian 12: the README's steps
# (apt-get install make, then make test) run in a chroot of
# `debootstrap --variant=minbase bookworm`, on a clean clone of a branch.
#
#   scripts/minbase-check.sh [REPO]     as root; REPO defaults to this checkout
#
# Do not wrap it in `flock /tmp/bg-e2e.lock`: it takes that machine-wide lock
# itself, for `make test` only (the e2e suites use global names and
# /sys/fs/bpf); installing and building run outside it. MINBASE_LOCK= (empty)
# skips the lock, for a caller that holds it already.
#
# The base image, MINBASE_ROOT (default /srv/deb12), is created when absent
# and never changed: each run works on an overlay of it, MINBASE_RUN
# (default /srv/deb12-run: upper/, work/, merged/, make-test.log), wiped at
# the start of the next run, so every run starts from the minimal system
# and really installs the packages. Downloaded .debs are kept in
# $MINBASE_RUN.cache/ between runs (only the download is saved).
#
# What the chroot gets from the host: /proc, /sys, /sys/fs/bpf (the host's
# bpffs: pins are machine-wide anyway), /dev, /dev/pts, /run/netns (a shared
# bind, so namespaces the tests create are the host's, visible as such and
# cleaned up as such), /etc/resolv.conf. Debian's mirror must be reachable.
# The branch cloned is the one checked out in REPO (MINBASE_BRANCH
# overrides); only committed work is tested. /work/shared (MINBASE_SHARED)
# is copied to /work/shared in the chroot. Exit status: make test's.
set -u

REPO=$(cd "${1:-$(dirname "$0")/..}" && pwd) || exit 1
CHROOT_NAME=minbase-check
BASE=${MINBASE_ROOT:-/srv/deb12}
RUN=${MINBASE_RUN:-/srv/deb12-run}
CACHE=$RUN.cache
SHARED=${MINBASE_SHARED:-/work/shared}
LOCK=${MINBASE_LOCK-/tmp/bg-e2e.lock}
# shellcheck source=scripts/lib-chroot.sh
. "$(dirname "$0")/lib-chroot.sh"

[ "$(id -u)" -eq 0 ] || die "must run as root"
BRANCH=${MINBASE_BRANCH:-$(git -C "$REPO" rev-parse --abbrev-ref HEAD)} ||
	die "$REPO is not a git checkout"
[ -d "$SHARED" ] || die "$SHARED is missing"

chroot_traps
chroot_unmount_stale
chroot_base

# ---- the host side: bpffs, a shared /run/netns ----------------------------------
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || die "cannot mount bpffs"
mkdir -p /run/netns
# What `ip netns add` does itself: /run/netns a mount point, shared.
mountpoint -q /run/netns || mount --bind /run/netns /run/netns || die "cannot bind /run/netns"
mount --make-shared /run/netns || die "cannot make /run/netns shared"

# ---- a fresh overlay of the base (scripts/lib-chroot.sh), and for make test
# /sys, the host's bpffs and /run/netns ----------------------------------------
chroot_overlay
mnt --bind /sys "$M/sys"
mount --make-rslave "$M/sys"
mnt --bind /sys/fs/bpf "$M/sys/fs/bpf"
mount --make-rslave "$M/sys/fs/bpf"
mkdir -p "$M/run/netns"
mnt --bind /run/netns "$M/run/netns"

mkdir -p "$M/work"
git clone -q --branch "$BRANCH" "$REPO" "$M/work/main" || die "git clone $REPO failed"
cp -a "$SHARED" "$M/work/shared"
echo "minbase-check: $BRANCH at $(git -C "$M/work/main" log -1 --format='%h %s' | cut -c1-60)"

# ---- the README's steps, in the chroot -------------------------------------------
LOG=$RUN/make-test.log
echo "minbase-check: apt-get update && apt-get install -y make; make deps (log: $LOG)"
in_chroot 'set -e; apt-get update -qq; apt-get install -y -qq make; cd /work/main; make deps' \
	>"$LOG" 2>&1 || die "installing make or the dependencies failed (see $LOG)"

echo "minbase-check: make test${LOCK:+ (under $LOCK)}"
if [ -n "$LOCK" ]; then
	flock "$LOCK" chroot "$M" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/sh -c 'cd /work/main && make test' >>"$LOG" 2>&1
else
	in_chroot 'cd /work/main && make test' >>"$LOG" 2>&1
fi
rc=$?
grep -E '^(not ok|failed suites:|[0-9]+ passed, [0-9]+ failed)' "$LOG"
echo "minbase-check: make test exit $rc (full output: $LOG)"
exit "$rc"
