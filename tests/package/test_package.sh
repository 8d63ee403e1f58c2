#!/bin/bash
# The Debian package on a minimal Debian 12: installed with apt-get in an
# overlay of the debootstrap minbase bookworm base that
# scripts/minbase-check.sh uses (scripts/lib-chroot.sh), checked, purged,
# and the system compared with what it was before: nothing may be left.
#
#   tests/package/test_package.sh [DEB]   as root; DEB defaults to
#                                         build/bloomgate_*.deb (make deb)
#
# `make test-package` builds the package and runs this; so does `make
# test` (tests/run.sh; measured: 11-23 s, 23 s with an empty .deb cache;
# make deb 10 s more). It needs Debian's mirror (the package's
# dependencies, systemd and man-db are installed in the chroot). Inside
# scripts/minbase-check.sh's chroot the base is debootstrapped there and
# copied (an overlay cannot have its upper directory on that chroot's
# overlay: scripts/lib-chroot.sh). The chroot's run
# directory, PKGTEST_RUN (default /srv/deb12-pkg-run: upper/ is what the
# run changed, test.log apt's and dpkg's output), is wiped at the next
# run; downloaded .debs are kept in PKGTEST_RUN.cache/.
#
# The chroot gets /proc, /dev and /dev/pts from the host, nothing else
# (no /sys: the package does nothing with the kernel when installed).
# Every mount is undone on every way out (scripts/lib-chroot.sh's trap).
# Output: "ok N - ..." / "not ok N - ..." lines, as tests/run.sh counts.
# shellcheck disable=SC2016 # the single-quoted commands expand in the chroot
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHROOT_NAME=test_package
BASE=${MINBASE_ROOT:-/srv/deb12}
RUN=${PKGTEST_RUN:-/srv/deb12-pkg-run}
CACHE=$RUN.cache
# shellcheck source=scripts/lib-chroot.sh
. "$ROOT/scripts/lib-chroot.sh"
# shellcheck source=scripts/lib-require.sh
. "$ROOT/scripts/lib-require.sh"
require_cmds lintian debootstrap chroot mount findmnt mountpoint flock dpkg-deb diff

[ "$(id -u)" -eq 0 ] || die "must run as root"
DEB=${1:-}
if [ -z "$DEB" ]; then
	# shellcheck disable=SC2012 # the newest; names are ours
	DEB=$(ls -t "$ROOT"/build/bloomgate_*.deb 2>/dev/null | head -n1)
	[ -n "$DEB" ] || die "no build/bloomgate_*.deb: run make deb"
fi
[ -f "$DEB" ] || die "$DEB: no such file"
VERSION=$(dpkg-deb -f "$DEB" Version)

N=0
FAILED=0
ok() { # DESCRIPTION
	N=$((N + 1))
	echo "ok $N - $1"
}
not_ok() { # DESCRIPTION, WHY
	N=$((N + 1))
	FAILED=$((FAILED + 1))
	echo "not ok $N - $1"
	[ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/#   /'
}
# check DESCRIPTION SHELL-COMMAND: ok when the command, run in the chroot,
# succeeds; its output is shown on failure.
check() {
	local out
	if out=$(in_chroot "$2" 2>&1); then ok "$1"; else not_ok "$1" "$out"; fi
}

# Every path of the chroot (type, mode, owner) but the ones apt, dpkg and
# the system change by themselves (their caches, state and logs; man-db's
# index, /var/cache/man, which its trigger fills in for any package with
# man pages) and the mounts, and the contents of /etc's files. /etc/group-, /etc/gshadow- and
# the like are compared as paths only: they are the shadow tools' copies of
# the previous version, rewritten by every change, the group's removal
# included (/etc/group itself is compared).
snapshot() { # FILE
	in_chroot 'find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run \
		-o -path /tmp -o -path /var/cache/apt -o -path /var/lib/apt -o -path /var/cache/man \
		-o -path /var/lib/dpkg -o -path /var/log \) -prune -o -printf "%y %m %u:%g %p\n" |
		LC_ALL=C sort
		find /etc -xdev -type f ! -name "*-" -exec md5sum {} + | LC_ALL=C sort -k2' >"$1"
}

start=$(date +%s)
chroot_traps
chroot_unmount_stale
chroot_base
chroot_overlay
LOG=$RUN/test.log
cp "$DEB" "$M/tmp/bloomgate.deb"
echo "# $(basename "$DEB") ($VERSION) in an overlay of $BASE; log: $LOG"

# lintian, on the host: the package as built. Every tag it may report,
# down to pedantic and info, is a finding unless debian/bloomgate.lintian-
# overrides overrides it with its reason (an override no longer needed is
# one too: unused-override).
# (--fail-on does not count unused-override: every tag line shown does.)
if lintian --pedantic --display-info --fail-on error,warning,info,pedantic "$DEB" \
	>"$RUN/lintian" 2>&1 && ! grep -q '^[EWIPX]: ' "$RUN/lintian"; then
	ok "lintian --pedantic: nothing but the overrides"
else
	not_ok "lintian --pedantic: nothing but the overrides" \
		"$(grep -v 'running with root privileges' "$RUN/lintian")"
fi

# ---- the dependencies first, then the "before" snapshot --------------------------
# The package's Depends (the first of any alternatives), and what the test
# itself uses: systemd (systemd-analyze, systemctl; a gateway has it),
# man-db (man -l).
deps=$(dpkg-deb -f "$DEB" Depends | tr ',' '\n' |
	sed -e 's/|.*//' -e 's/(.*)//' -e 's/[[:space:]]//g' | grep . | tr '\n' ' ')
echo "# apt-get install $deps systemd man-db"
if ! in_chroot "set -e; apt-get update -qq; apt-get install -y -qq --no-install-recommends $deps systemd man-db" \
	>"$LOG" 2>&1; then
	not_ok "the dependencies install" "$(grep '^E: ' "$LOG" | head -n3)"
	echo "1..$N"
	exit 1
fi
ok "the dependencies install ($deps systemd man-db)"
snapshot "$RUN/before"

# ---- install ----------------------------------------------------------------------
if in_chroot 'apt-get install -y --no-install-recommends /tmp/bloomgate.deb' >>"$LOG" 2>&1; then
	ok "apt-get install ./$(basename "$DEB")"
else
	not_ok "apt-get install ./$(basename "$DEB")" "$(tail -n5 "$LOG")"
	echo "1..$N"
	exit 1
fi
in_chroot 'dpkg -L bloomgate' >"$RUN/files"

# --version: another branch adds it; until then bloomgate says it does not
# know it, and the check is skipped (TAP: an ok line with # SKIP).
out=$(in_chroot 'bloomgate --version' 2>&1)
case $out in
*"$VERSION"*) ok "bloomgate --version says $VERSION" ;;
*"unknown command '--version'"*) ok "bloomgate --version # SKIP not implemented by this bloomgate" ;;
*) not_ok "bloomgate --version says $VERSION" "$out" ;;
esac
check "bloomgate help" 'bloomgate help | grep -q "^usage: bloomgate"'

# Self-contained: every library resolves, no BPF object is shipped beside the
# binary (the skeleton embeds it), and the embedded object is there (its BTF
# names its source).
check "every shared library bloomgate links resolves" \
	'ldd /usr/sbin/bloomgate >/tmp/ldd && ! grep "not found" /tmp/ldd'
if grep -q '\.o$' "$RUN/files"; then
	not_ok "no BPF object shipped beside the binary" "$(grep '\.o$' "$RUN/files")"
elif ! grep -qa 'bpf/bloomgate.bpf.c' "$M/usr/sbin/bloomgate"; then
	not_ok "the BPF object is embedded in the binary" "no BTF naming bpf/bloomgate.bpf.c in it"
else
	ok "the BPF object is embedded in the binary, none shipped beside it"
fi

# systemd-analyze verify in the chroot, on its own systemd's units: the host's
# with --root would need the chroot's targets anyway (sysinit.target). Any
# output is a finding, as in tests/e2e/test_agent.sh.
U=/lib/systemd/system/bloomgate-agent.service
check "systemd-analyze verify $U" "systemd-analyze verify $U >/tmp/verify 2>&1; rc=\$?;
	cat /tmp/verify; [ \$rc -eq 0 ] && ! grep -q . /tmp/verify"
check "the unit runs /usr/sbin/bloomgate, documents /usr/share/doc/bloomgate" \
	"grep -q '^ExecStart=/usr/sbin/bloomgate agent' $U &&
	 grep -q '^Documentation=file:/usr/share/doc/bloomgate/README.md' $U &&
	 [ -f /usr/share/doc/bloomgate/README.md ] && ! grep -n /usr/local $U"
check "the unit is not enabled" \
	"! ls /etc/systemd/system/*.wants/bloomgate-agent.service 2>/dev/null &&
	 [ \"\$(systemctl is-enabled bloomgate-agent.service 2>&1)\" = disabled ]"
# Not started: the chroot has no running systemd to start it, so the
# maintainer scripts are read: no start, only a try-restart (of an agent
# the operator runs) after an upgrade.
mkdir -p "$RUN/control"
dpkg-deb -e "$DEB" "$RUN/control"
if grep -nE 'deb-systemd-invoke (start|restart)|systemctl.* (start|enable)' "$RUN"/control/*inst \
	"$RUN"/control/*rm >"$RUN/starts" 2>/dev/null; then
	not_ok "the maintainer scripts never start the unit" "$(cat "$RUN/starts")"
else
	ok "the maintainer scripts never start the unit"
fi
check "a bloomgate system group" \
	'g=$(getent group bloomgate) && gid=$(echo "$g" | cut -d: -f3) && [ "$gid" -lt 1000 ]'
check "/etc/bloomgate/bloomgate.yaml is a conffile" \
	"dpkg-query -W -f='\${Conffiles}\n' bloomgate | grep -q '^ /etc/bloomgate/bloomgate.yaml '"

# Whatever man pages and completion `make install` installs are in the package.
pages=$(grep -E '^/usr/share/man/man[0-9]/.+\.[0-9]' "$RUN/files" || :)
if [ -z "$pages" ]; then
	ok "man pages # SKIP none in this package"
fi
for p in $pages; do
	check "man -l $p renders without warnings" \
		"out=\$(MANWIDTH=80 man --warnings -l $p 2>&1 >/dev/null) && [ -z \"\$out\" ] || { echo \"\$out\"; false; }"
done
comp=/usr/share/bash-completion/completions/bloomgate
if grep -qx "$comp" "$RUN/files"; then
	check "the bash completion defines one for bloomgate" \
		"bash -c '. $comp && complete -p bloomgate'"
else
	ok "bash completion # SKIP none in this package"
fi

# ---- remove keeps the operator's config, purge takes it and the group -------------
# The operator's edit, and state as a running agent leaves it (systemd
# creates its StateDirectory, /var/lib/bloomgate, mode 0700).
in_chroot 'echo "# edited" >>/etc/bloomgate/bloomgate.yaml &&
	install -d -m 0700 /var/lib/bloomgate/lists && : >/var/lib/bloomgate/bloomgate.db &&
	: >/var/lib/bloomgate/lists/local.list'
if in_chroot 'apt-get remove -y bloomgate' >>"$LOG" 2>&1; then
	check "apt-get remove removes the binary, keeps the edited config, the state and the group" \
		'[ ! -e /usr/sbin/bloomgate ] && tail -n1 /etc/bloomgate/bloomgate.yaml | grep -qx "# edited" &&
		 [ -f /var/lib/bloomgate/bloomgate.db ] && getent group bloomgate >/dev/null'
else
	not_ok "apt-get remove bloomgate" "$(tail -n5 "$LOG")"
fi
if in_chroot 'apt-get purge -y bloomgate' >>"$LOG" 2>&1; then
	ok "apt-get purge bloomgate"
else
	not_ok "apt-get purge bloomgate" "$(tail -n5 "$LOG")"
fi
check "the group, the config and the state are gone after the purge" \
	'! getent group bloomgate && [ ! -e /etc/bloomgate ] && [ ! -e /var/lib/bloomgate ]'
check "dpkg knows nothing of bloomgate after the purge" '! dpkg -s bloomgate >/dev/null 2>&1'
snapshot "$RUN/after"
if diff -u "$RUN/before" "$RUN/after" >"$RUN/diff"; then
	ok "the purge leaves nothing behind (files, modes, owners, /etc contents)"
else
	not_ok "the purge leaves nothing behind (files, modes, owners, /etc contents)" \
		"$(grep '^[-+][^-+]' "$RUN/diff" | head -n20)"
fi

# ---- a group an account has joined since is kept by the purge ----------------------
purge_out=
if in_chroot 'apt-get install -y /tmp/bloomgate.deb && useradd --no-create-home -G bloomgate bg-operator' \
	>>"$LOG" 2>&1; then
	purge_out=$(in_chroot 'apt-get purge -y bloomgate' 2>&1)
	echo "$purge_out" >>"$LOG"
fi
if in_chroot 'getent group bloomgate' | grep -q ':bg-operator$' &&
	grep -q 'the bloomgate group is kept: bg-operator is in it' <<<"$purge_out"; then
	ok "the purge keeps a group an account is in, and says so"
else
	not_ok "the purge keeps a group an account is in, and says so" "$(tail -n5 <<<"$purge_out")"
fi

echo "1..$N"
echo "# $((N - FAILED)) of $N passed in $(($(date +%s) - start)) s"
((FAILED == 0))
