# shellcheck shell=bash
# An overlay of the minimal Debian 12 base (debootstrap --variant=minbase
# bookworm), its mounts and their undoing: sourced (bash) by
# scripts/minbase-check.sh and tests/package/test_package.sh.
#
# The caller sets, before calling anything here:
#   CHROOT_NAME  the prefix of its messages
#   BASE         the base image, created when absent and never changed
#   RUN          the run directory: upper/, work/, merged/ (the chroot, $M),
#                wiped at the start of the next run; RUN.lock is held while
#                a run uses it (one run at a time per RUN)
#   CACHE        downloaded .debs, kept between runs (bound on the chroot's
#                /var/cache/apt/archives: only the download is saved)
# chroot_traps installs the EXIT trap that undoes every mount made by mnt,
# on every way out (errors, die, INT, TERM).
MIRROR=${MIRROR:-http://deb.debian.org/debian}
M=$RUN/merged
MOUNTS=() # mount points made here, unmounted in reverse order

die() {
	echo "$CHROOT_NAME: $*" >&2
	exit 1
}

# Mounts and records it for unmounting. Binds are made slaves by the
# caller, so nothing mounted or unmounted under them reaches the host.
mnt() { # MOUNT-ARGS... TARGET
	mount "$@" || die "mount $* failed"
	MOUNTS+=("${!#}")
}

# Every mount under $M becomes a slave first: a bind that is a peer of the
# host's (minbase-check's /run/netns), unmounted lazily, would otherwise
# unmount the host's mounts under it too.
# shellcheck disable=SC2317 # run by the EXIT trap
unmount_all() {
	local i
	((${#MOUNTS[@]})) && mount --make-rslave "${MOUNTS[0]}"
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" ||
			echo "$CHROOT_NAME: cannot unmount ${MOUNTS[i]}" >&2
	done
	MOUNTS=()
}

chroot_traps() {
	trap unmount_all EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# Takes RUN.lock (held until the process exits), then unmounts
# whatever an earlier run left mounted under $M (deepest first) and checks
# that nothing is: rm -rf of a tree with /dev or /sys still bound in it
# would reach the host's.
chroot_unmount_stale() {
	mkdir -p "$(dirname "$RUN")"
	exec {CHROOT_LOCK_FD}>"$RUN.lock"
	flock -n "$CHROOT_LOCK_FD" || die "another run uses $RUN (lock $RUN.lock)"
	if [ -d "$M" ] && mountpoint -q "$M"; then
		mount --make-rslave "$M"
		findmnt -rn -o TARGET | grep -E "^$M(/|\$)" | sort -r | while read -r t; do
			umount "$t" 2>/dev/null || umount -l "$t"
		done
	fi
	if findmnt -rn -o TARGET | grep -qE "^$M(/|\$)"; then
		die "something is still mounted under $M: unmount it first"
	fi
}

# The base image, debootstrapped when absent.
chroot_base() {
	[ -x "$BASE/usr/bin/apt-get" ] && return 0
	command -v debootstrap >/dev/null ||
		apt-get install -y -qq debootstrap >/dev/null ||
		die "cannot install debootstrap"
	echo "$CHROOT_NAME: debootstrap --variant=minbase bookworm $BASE"
	debootstrap --variant=minbase bookworm "$BASE" "$MIRROR" >"$BASE.debootstrap.log" 2>&1 ||
		die "debootstrap failed (see $BASE.debootstrap.log)"
}

# A fresh overlay of the base at $M with /proc, /dev, /dev/pts, the .deb
# cache, the debian:12 image's apt sources and the host's resolv.conf.
# The caller adds what else it needs (mnt, then mount --make-rslave).
chroot_overlay() {
	rm -rf --one-file-system "$RUN"
	mkdir -p "$RUN/upper" "$RUN/work" "$M" "$CACHE"
	# an overlay, or a copy where the run directory cannot hold an
	# overlay's upper directory (it is on an overlay itself: the package
	# test inside scripts/minbase-check.sh's chroot)
	if mount -t overlay overlay -o "lowerdir=$BASE,upperdir=$RUN/upper,workdir=$RUN/work" "$M" 2>/dev/null; then
		MOUNTS+=("$M")
		mount --make-private "$M"
	else
		echo "$CHROOT_NAME: no overlay on $RUN: a copy of $BASE instead"
		cp -a --one-file-system "$BASE/." "$M/" || die "cannot copy $BASE to $M"
	fi
	mnt -t proc proc "$M/proc"
	mnt --bind /dev "$M/dev"
	mount --make-rslave "$M/dev"
	mnt --bind /dev/pts "$M/dev/pts"
	mount --make-rslave "$M/dev/pts"
	mkdir -p "$M/var/cache/apt/archives"
	mnt --bind "$CACHE" "$M/var/cache/apt/archives"
	mount --make-private "$M/var/cache/apt/archives"

	# The sources of the debian:12 image (debootstrap writes bookworm main only).
	cat >"$M/etc/apt/sources.list" <<-SOURCES
		deb $MIRROR bookworm main
		deb $MIRROR bookworm-updates main
		deb http://deb.debian.org/debian-security bookworm-security main
	SOURCES
	cp /etc/resolv.conf "$M/etc/resolv.conf"
}

# Runs SHELL-COMMAND in the chroot with a clean environment.
in_chroot() { # SHELL-COMMAND
	chroot "$M" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		DEBIAN_FRONTEND=noninteractive \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/sh -c "$1"
}
