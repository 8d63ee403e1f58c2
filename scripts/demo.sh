#!/bin/bash
# bloomgate demo (`make demo`, after `make`): a gateway between a client and
# a server in network namespaces, bloomgate on the gateway's client-side
# interface, the bundled sample address and domain lists loaded, a few UDP
# datagrams to listed and unlisted addresses with a report of what was
# dropped and why, then DNS lookups from the client (dig) to a DNS server
# (dnsmasq) in the server namespace: a blocked name answered NXDOMAIN by
# XDP on the gateway at once, other names answered by the server.
# Everything it creates is removed on exit, also on Ctrl-C. Needs root.
set -u
cd "$(dirname "$0")/.." || exit 1

# shellcheck source=scripts/demo-env.sh
source scripts/demo-env.sh

LIST=data/sample-blocklist.txt
ALLOW=data/sample-allowlist.txt
DOMAINS=data/sample-domains.txt
DNS_LOG= # set once the temporary directory exists
COUNT=5
LISTED_DSTS=(198.51.100.23 203.0.113.42 203.0.113.150 2001:db8:100::bad
	2001:db8:100::dead:beef 2001:db8:100:0:bad::7)
OTHER_DSTS=(198.51.100.10 203.0.113.10 203.0.113.200 2001:db8:100::10
	2001:db8:100::cafe 2001:db8:100:0:bad::25)

if [ -t 1 ]; then
	B=$'\e[1m' R=$'\e[31m' G=$'\e[32m' Y=$'\e[33m' N=$'\e[0m'
else
	B='' R='' G='' Y='' N=''
fi
die() {
	echo "demo: $*" >&2
	exit 1
}
step() { printf '\n%s== %s%s\n' "$B" "$*" "$N"; }
indent() { sed 's/^/    /'; }
# Runs bloomgate in the gateway, showing the command and its output.
show() {
	printf '  %s# bloomgate %s%s\n' "$B" "$*" "$N"
	bg "$@" 2>&1 | indent
	return "${PIPESTATUS[0]}"
}

# What `bloomgate check` says about ADDR: the verdict and its reason.
check_why() { # ADDR
	bg check "$1" 2>/dev/null | sed -n "s#^$1: ##p"
}

for f in "$LIST" "$ALLOW" "$DOMAINS"; do
	[ -f "$f" ] || die "$f is missing"
done
T0=$SECONDS
e2e_init

step "The demo network (three network namespaces, documentation addresses only)"
row() { printf '    %-8s %-16s %-5s %-30s %s\n' "$@"; }
row client "$NS_C" "$IF_C" "$C_IP4, $C_IP6"
printf '       |\n'
row gateway "$NS_GW" "$IF_GWC" "$GWC_IP4, $GWC_IP6" "<- bloomgate (XDP), ingress"
row "   |" "" "$IF_GWS" "$GWS_IP4, $GWS_IP6" "   forwards IPv4 and IPv6"
row server "$NS_S" "$IF_S" "$S_IP4, $S_IP6"
row "" "" "" "answers for 198.51.100.0/24, 203.0.113.0/24, 2001:db8:100::/64"
row "" "" "" "runs dnsmasq (DNS, port 53) for example.com/.net/.org"

# The DNS server: every name under the three example domains has an address.
DNS_LOG=$E2E_TMP/dnsmasq.log
dns_server_start 53 "$DNS_LOG" \
	--address=/example.com/example.net/example.org/198.51.100.80 \
	--address=/example.com/example.net/example.org/2001:db8:100::80 ||
	die "cannot start dnsmasq in $NS_S"

step "Attach bloomgate to the gateway's client-side interface"
MODE=native
if ! show attach "$IF_GWC"; then
	MODE=skb
	echo "    (native XDP is not available here: using generic XDP)"
	show attach "$IF_GWC" --mode skb || die "cannot attach bloomgate"
fi
if [ "$MODE" = native ]; then
	# Answers sent back with XDP_TX on a veth reach the peer only when
	# the peer has an XDP program too (see client_xdp_pass).
	client_xdp_pass on || die "cannot attach the XDP pass program to $IF_C"
	echo "    (a pass-everything XDP program on the client's $IF_C: on a veth pair,"
	echo "     frames sent back with XDP_TX reach the peer only if it runs XDP too)"
fi

step "Load the sample blocklist ($LIST), allowlist ($ALLOW) and domain list ($DOMAINS)"
show load --allow "$ALLOW" "$LIST" "$DOMAINS" || die "cannot load the lists"

step "What the live filter says about the destinations"
show check "${LISTED_DSTS[@]}" "${OTHER_DSTS[@]}"

step "Send $COUNT UDP datagrams from the client to each destination"
traffic demo "$COUNT" 200 "${LISTED_DSTS[@]}" "${OTHER_DSTS[@]}" ||
	die "the traffic run failed"

step "Report"
printf '    %-24s %5s %9s  %-10s %s\n' destination sent received result "why (bloomgate check)"
printf '    %-24s %5s %9s  %-10s %s\n' ----------- ---- -------- ------ ---
unexpected=0
for a in "${LISTED_DSTS[@]}" "${OTHER_DSTS[@]}"; do
	s=$(sent demo "$a")
	r=$(recv demo "$a")
	why=$(check_why "$a")
	if [ "$r" -eq 0 ] && [ "$s" -gt 0 ]; then
		res="${R}dropped${N}   "
	elif [ "$r" -eq "$s" ]; then
		res="${G}delivered${N} "
	else
		res="${Y}partial${N}   "
	fi
	case "$why" in
	"match (listed"*) [ "$r" -eq 0 ] || { why="$why ${Y}(UNEXPECTED: delivered)${N}"; unexpected=1; } ;;
	"match"*) ;; # a Bloom false positive: dropped, and check says so
	*) [ "$r" -eq "$s" ] || { why="$why ${Y}(UNEXPECTED: lost)${N}"; unexpected=1; } ;;
	esac
	printf '    %-24s %5s %9s  %s %s\n' "$a" "$s" "$r" "$res" "$why"
done

step "DNS lookups from the client (dig, to dnsmasq on the server)"
unexpected_dns=0
lookup() { # SERVER NAME TYPE EXPECTED-STATUS NOTE
	local out st
	printf '  %s# dig @%s %s %s%s   %s\n' "$B" "$1" "$2" "$3" "$N" "$5"
	out=$(in_ns "$NS_C" dig @"$1" +tries=1 +time=2 "$2" "$3" 2>&1)
	grep -E '^;; (->>HEADER|flags|Query time|SERVER|communications)|^;?[A-Za-z0-9.-]+\.[[:space:]]' <<<"$out" |
		indent
	st=$(sed -n 's/^;; ->>HEADER<<- .*status: \([A-Z]*\),.*/\1/p' <<<"$out")
	if [ "$st" != "$4" ]; then
		echo "    ${Y}UNEXPECTED: expected $4${N}"
		unexpected_dns=1
	fi
}
dns_mark "$DNS_LOG"
lookup "$S_IP4" pixel.ads.example.com A NXDOMAIN "(listed: ||ads.example.com^)"
lookup "$S_IP6" cdn.tracker.example.net AAAA NXDOMAIN "(listed: ||tracker.example.net^)"
echo "  ${R}NXDOMAIN at once, from XDP on the gateway${N} (no aa flag: not the server's answer)"
lookup "$S_IP4" www.example.com A NOERROR "(not listed)"
lookup "$S_IP4" static.ads.example.com A NOERROR "(allowed: @@||static.ads.example.com^)"
echo "  ${G}answered by the server${N} (aa: dnsmasq's own record)"
dns_sync 53 "$DNS_LOG" >/dev/null 2>&1
echo "  What reached the DNS server (its query log):"
awk -v m="${DNS_MARK[$DNS_LOG]}" 'NR > m && / query\[/ && !/probe\.invalid/' "$DNS_LOG" |
	sed 's/^.*\(query\[\)/\1/' | indent
for n in pixel.ads.example.com cdn.tracker.example.net; do
	[ -z "$(dns_logged "$DNS_LOG" "$n" A "$C_IP4")$(dns_logged "$DNS_LOG" "$n" AAAA "$C_IP6")" ] || {
		echo "    ${Y}UNEXPECTED: the server got the query for $n${N}"
		unexpected_dns=1
	}
done

step "Why (bloomgate check NAME)"
show check pixel.ads.example.com cdn.tracker.example.net www.example.com static.ads.example.com

step "bloomgate stats (zero malformed_* and dns_* reason counters left out)"
printf '  %s# bloomgate stats%s\n' "$B" "$N"
bg stats | awk '(!/^malformed_/ && !/^dns_(response|opcode|qdcount|name_too_long|bad_label|truncated|no_prog)/) || $2 != 0' | indent

step "bloomgate status"
show status

step "Clean up"
show detach "$IF_GWC"
echo "    removing the namespaces ($NS_C, $NS_GW, $NS_S) and temporary files"
e2e_cleanup
trap - EXIT INT TERM
printf '\n%sDemo done in %d s (%s XDP).%s\n' "$B" $((SECONDS - T0)) "$MODE" "$N"
exit $((unexpected | unexpected_dns))
