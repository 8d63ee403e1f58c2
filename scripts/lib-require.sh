# shellcheck shell=sh
# Which Debian 12 package provides each external command that the build, the
# tests (tests/run.sh, tests/e2e/*.sh), the demo and the benchmark call, and
# require_cmds, which stops a script at its start when one is missing.
# Sourced (POSIX sh) by scripts/install-deps.sh, tests/e2e/lib.sh (and so
# scripts/demo.sh), bench/run.sh and bench/agent.sh: install-deps.sh
# installs every package of this table, so the table is the one list to
# extend when a script starts calling a new command.
#
# Why a check at all: a missing command does not always fail where it is
# called. Without sysctl (procps, absent from a minimal Debian) the e2e
# namespaces came up without forwarding and every suite reported
# "0 of 300 delivered" instead of failing at setup.

# "command:package", one per line. Commands from Essential packages
# (coreutils, grep, sed, findutils, util-linux, bash, mawk) are listed too:
# the scripts call them, and a stripped container may still lack them.
# A command named by its path (/usr/bin/time) is one whose bare name is
# a shell keyword or builtin: `command -v time` succeeds without GNU time.
BG_CMD_PKGS='
make:make
cc:gcc
gcc:gcc
ar:binutils
clang:clang
bpftool:bpftool
pkg-config:pkgconf
ip:iproute2
sysctl:procps
nsenter:util-linux
flock:util-linux
lscpu:util-linux
setpriv:util-linux
runuser:util-linux
/usr/lib/postgresql/15/bin/initdb:postgresql-15
/usr/lib/postgresql/15/bin/pg_ctl:postgresql-15
psql:postgresql-client-15
curl:curl
crowdsec:crowdsec
cscli:crowdsec
crowdsec-firewall-bouncer:crowdsec-firewall-bouncer
prlimit:util-linux
unshare:util-linux
dig:bind9-dnsutils
dnsmasq:dnsmasq-base
ethtool:ethtool
xdp-filter:xdp-tools
nft:nftables
ping:iputils-ping
jq:jq
promtool:prometheus
systemd-analyze:systemd
dpkg-buildpackage:dpkg-dev
dpkg-deb:dpkg
dh:debhelper
lintian:lintian
debootstrap:debootstrap
chroot:coreutils
findmnt:util-linux
mountpoint:util-linux
mount:mount
getconf:libc-bin
git:git
bash:bash
awk:mawk
sed:sed
grep:grep
find:findutils
timeout:coreutils
mktemp:coreutils
date:coreutils
seq:coreutils
sort:coreutils
tee:coreutils
wc:coreutils
cut:coreutils
tr:coreutils
head:coreutils
nproc:coreutils
uname:coreutils
id:coreutils
cat:coreutils
mkdir:coreutils
mv:coreutils
rm:coreutils
rmdir:coreutils
touch:coreutils
sync:coreutils
ls:coreutils
sleep:coreutils
dirname:coreutils
cp:coreutils
tail:coreutils
du:coreutils
stat:coreutils
od:coreutils
dd:coreutils
paste:coreutils
uniq:coreutils
chown:coreutils
cmp:diffutils
diff:diffutils
man:man-db
groff:groff-base
/usr/bin/time:time
'

# The package that provides CMD ("unknown" when the table does not know it). Plain
# sh, no awk or sed: those may be what is missing.
bg_cmd_pkg() { # CMD
	for _rq_e in $BG_CMD_PKGS; do
		[ "${_rq_e%%:*}" = "$1" ] && { echo "${_rq_e#*:}"; return 0; }
	done
	echo unknown
}

# Every package of the table, once each, on one line.
bg_cmd_pkgs() {
	_rq_l=" "
	for _rq_e in $BG_CMD_PKGS; do
		case $_rq_l in *" ${_rq_e#*:} "*) ;; *) _rq_l="$_rq_l${_rq_e#*:} " ;; esac
	done
	echo "$_rq_l"
}

# Every command of the table, on one line.
bg_cmds() {
	_rq_l=
	for _rq_e in $BG_CMD_PKGS; do
		_rq_l="$_rq_l${_rq_e%%:*} "
	done
	echo "$_rq_l"
}

# Stops the calling script (exit 1) with one line on stderr naming every
# missing command and its package, when any of CMD... is not on PATH.
require_cmds() { # CMD...
	_rq_miss=
	for _rq_c in "$@"; do
		command -v "$_rq_c" >/dev/null 2>&1 && continue
		_rq_miss="${_rq_miss:+$_rq_miss, }$_rq_c (Debian package $(bg_cmd_pkg "$_rq_c"))"
	done
	[ -z "$_rq_miss" ] && return 0
	echo "${0##*/}: not installed: $_rq_miss; run 'make deps' (scripts/install-deps.sh) as root" >&2
	exit 1
}
