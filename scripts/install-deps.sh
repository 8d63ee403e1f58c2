#!/bin/sh
# Install every Debian package bloomgate needs to build, test, demo and bench.
# Idempotent and quiet when everything is already present.
set -eu

# dnsutils (dig) and dnsmasq-base (the dnsmasq binary, without the system
# service) are the DNS client and server of the DNS end-to-end test and demo;
# ethtool reads the veth XDP counters it reports.
PKGS="make gcc clang llvm libbpf-dev libxdp-dev bpftool xdp-tools libelf-dev
zlib1g-dev libcmocka-dev libxxhash-dev pkg-config iproute2 iputils-ping
linux-libc-dev libc6-dev gcc-multilib dnsutils dnsmasq-base ethtool"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
