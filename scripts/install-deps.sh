#!/bin/sh
# Install every Debian package bloomgate needs to build, test, demo and bench.
# Idempotent and quiet when everything is already present; when it cannot
# install (not root, no apt-get, apt-get failing) it stops with one line.
set -eu
# shellcheck source=scripts/lib-require.sh
. "$(dirname "$0")/lib-require.sh"

# Build-time packages (libraries and headers); the packages of the commands
# the scripts call come from the table in lib-require.sh (`make deb` and
# `make test-package` among them: dpkg-dev and debhelper build the .deb,
# lintian checks it, debootstrap makes the minimal Debian 12 it is tested
# in). libjson-c-dev:
# JSON in the CLI and the load record. The agent: libyaml-dev (its
# config), libcurl4-openssl-dev (fetching lists), libsqlite3-dev (its
# store), libmicrohttpd-dev (/metrics), libsystemd-dev (sd_notify).
# libclang-rt-14-dev: libFuzzer and the sanitizers (tests/fuzz/).
# build-essential: what dpkg-buildpackage checks for (`make deb`; a
# minimal Debian 12 has gcc and make without it).
# gcc-multilib: the asm/ headers that the BPF fixture compiled by the e2e
# tests (no multiarch -I) includes.
BUILD_PKGS="build-essential libc6-dev linux-libc-dev gcc-multilib llvm libbpf-dev libxdp-dev
xdp-tools libelf-dev zlib1g-dev libcmocka-dev libxxhash-dev libjson-c-dev
libyaml-dev libcurl4-openssl-dev libssl-dev libsqlite3-dev
libmicrohttpd-dev libsystemd-dev libclang-rt-14-dev libpq-dev"
PKGS="$BUILD_PKGS $(bg_cmd_pkgs)"

# One dpkg-query for all of them: "ii NAME " per installed package. A
# package dpkg has never heard of prints nothing (and an error we do not
# need), so it counts as missing.
# shellcheck disable=SC2086,SC2016
installed=" $(dpkg-query -W -f='${db:Status-Abbrev}${Package} ' $PKGS 2>/dev/null || :)"
missing=""
for p in $PKGS; do
	case $installed in
	*" ii $p "*) ;;
	*) missing="$missing $p" ;;
	esac
done

if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: missing packages:$missing; run 'make deps' as root to install them" >&2
		exit 1
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "install-deps: no apt-get (not Debian?); install by hand:$missing" >&2
		exit 1
	fi
	# CrowdSec's engine (the tests' local API) runs offline here: with
	# online API credentials present, its postinst does not register with
	# the central API (which needs the network). A file already there is
	# kept.
	case " $missing " in
	*" crowdsec "*)
		if [ ! -s /etc/crowdsec/online_api_credentials.yaml ]; then
			mkdir -p /etc/crowdsec
			printf '# bloomgate: the central API is not used (offline)\nurl: http://127.0.0.1:1/\n' \
				>/etc/crowdsec/online_api_credentials.yaml
		fi
		;;
	esac
	echo "install-deps: installing$missing"
	log=$(mktemp /tmp/bloomgate-install-deps.XXXXXX)
	export DEBIAN_FRONTEND=noninteractive
	# Wait for another apt run (another checkout's make test) rather than
	# fail on its lock.
	# shellcheck disable=SC2086
	if ! { apt-get -o DPkg::Lock::Timeout=300 update &&
		apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends $missing; } \
		>"$log" 2>&1; then
		why=$(grep '^E: ' "$log" | head -n1)
		echo "install-deps: apt-get failed (${why:-$(tail -n1 "$log")}); full output in $log" >&2
		exit 1
	fi
	rm -f "$log"
fi

# The table's packages must provide the table's commands: this catches a
# wrong entry, or a command removed by hand from an installed package.
# shellcheck disable=SC2046
require_cmds $(bg_cmds)
