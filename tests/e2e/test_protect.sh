#!/bin/bash
# End-to-end: the protected set. A gateway (the e2e topology, given default
# routes through the server and a resolver behind it, named by a test
# resolv.conf) loads lists that cover its own addresses, its next hops and
# its resolver, and must still answer and route to them, while what the
# lists list beyond them is dropped:
#
#   wide_list_keeps_the_gateway   a FireHOL-like list (10/8, 172.16/12,
#                                 192.168/16, 127/8, the documentation
#                                 ranges...): the gateway's own address and
#                                 its default route's next hop answer ping,
#                                 the resolver answers dig (a listed name
#                                 gets NXDOMAIN from XDP), a listed address
#                                 beyond them is dropped; load names each
#                                 list:line and why; check and stats say
#                                 protected
#   protect_option                load --protect ADDR lets ADDR through its
#                                 listed prefix, for that load only; a bad
#                                 one is refused; a set that would be full
#                                 refuses the load, the filter unchanged
#   another_namespace             an attachment in another network
#                                 namespace: its interface's addresses too
#   artifact                      an artifact built elsewhere, loaded: the
#                                 same set holds, its lists named
#   agent_protect                 agent --check and the agent's log name the
#                                 list:line and the protected address; the
#                                 config's protect: holds; a reload changes it
#   crowdsec_range                a CrowdSec decision 192.0.0.0/8 (taken:
#                                 max_range_v4 8 here; refused by the default
#                                 bound, test_crowdsec.sh) and one on the
#                                 next hop itself leave the gateway
#                                 reachable; the log names the decision
set -u
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

ATTACH_MODE=native
EXPECT_COUNT=10
PPS=2000
CS_PORT=18091
RES4=203.0.113.53 RES6=2001:db8:100::53 # the resolver behind the gateway
BESIDE=192.0.2.140 # a server address beside the next hop (192.0.2.130)
LISTED4=198.51.100.7 LISTED6=2001:db8:100::7 UNLISTED=100.200.0.9

pings() { in_ns "$NS_C" ping -c 1 -W 1 "$1" >/dev/null 2>&1; }
log_has() { grep -qF -- "$1" "$E2E_TMP/agent.log"; }
matches() { [ "$(bg_check "$1")" = match ]; }
# Pings ADDR within a few seconds (its answer), or fails the case.
expect_ping() { # ADDR WHAT
	wait_until 5 pings "$1" || t_fail "$2 ($1) does not answer ping"
}
# The resolver answers a name it knows, and a listed name gets NXDOMAIN
# from XDP (the query to the protected resolver is still judged by name).
expect_resolver() { # SERVER
	dig_client "$1" ok.example A
	t_expect_eq "dig @$1 ok.example" 198.51.100.80 "$(dig_answers A)"
	dig_client "$1" bad.example A
	t_expect_eq "dig @$1 bad.example (listed name): status" NXDOMAIN "$(dig_status)"
}
agent_start() {
	spawn_in "$NS_GW" "$BG_BIN" agent --config "$CFG" 2>>"$E2E_TMP/agent.log"
	AGENT_PID=$E2E_LAST_PID
}
agent_stop() {
	kill -TERM "$AGENT_PID" 2>/dev/null
	wait_pid "$AGENT_PID" 10
}
cs() { in_ns "$NS_GW" "$E2E_ROOT/tests/crowdsec.sh" cscli "$CSDIR" "$@" >/dev/null 2>&1; }

for f in "$UDPSEND" "$UDPSINK"; do
	[ -x "$f" ] || { echo "not ok setup"; echo "#   $f is missing: run make test"; exit 1; }
done
require_cmds ping crowdsec cscli curl
e2e_init
T=$E2E_TMP

# ---- the gateway's routes and resolver ------------------------------------------

ip -n "$NS_GW" route add default via "$S_IP4" || die "cannot add the default route"
ip -n "$NS_GW" -6 route add default via "$S_IP6" || die "cannot add the IPv6 default route"
ip -n "$NS_S" addr add "$RES4/32" dev lo
ip -n "$NS_S" -6 addr add "$RES6/128" dev lo nodad
ip -n "$NS_S" addr add "$BESIDE/25" dev "$IF_S"
ip -n "$NS_GW" neigh replace "$BESIDE" lladdr "$MAC_S" nud permanent dev "$IF_GWS"
# an unlisted destination (every other address here is a documentation one)
ip -n "$NS_C" route add 100.200.0.0/16 via "$GWC_IP4"
ip -n "$NS_S" route add local 100.200.0.0/16 dev lo
export BLOOMGATE_RESOLV_CONF=$T/resolv.conf
printf 'search example\nnameserver %s # the one\nnameserver %s\n' "$RES4" "$RES6" \
	>"$BLOOMGATE_RESOLV_CONF"
spawn_in "$NS_S" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv \
	--no-hosts --pid-file= --user=root --group=root --port=53 --bind-interfaces \
	--listen-address="$RES4" --listen-address="$RES6" \
	--host-record=ok.example,198.51.100.80 --log-facility="$T/dns.log" 2>"$T/dns.err"
wait_until 5 in_ns "$NS_S" dig @"$RES4" +tries=1 +time=1 +short ok.example >/dev/null ||
	die "the resolver does not answer: $(cat "$T/dns.err")"
client_xdp_pass on || die "cannot attach the XDP pass program to the client's veth"

# The list: FireHOL level 1's reserved and private ranges and the
# documentation ranges, which hold every address of this topology.
cat >"$T/firehol.netset" <<EOF
# a list as FireHOL level 1 writes it
0.0.0.0/8
10.0.0.0/8
100.64.0.0/10
127.0.0.0/8
169.254.0.0/16
172.16.0.0/12
192.0.0.0/24
192.0.2.0/24
192.168.0.0/16
198.18.0.0/15
198.51.100.0/24
203.0.113.0/24
224.0.0.0/3
2001:db8::/32
EOF
line_of() { grep -nFx "$1" "$T/firehol.netset" | cut -d: -f1; } # ENTRY
printf 'bad.example\n' >"$T/names.txt"

# ---- 1. a wide list ------------------------------------------------------------------

E2E_NAME=wide_list_keeps_the_gateway
t_begin
attach_native_or_skb "$IF_GWC"
bg_capture load "$T/firehol.netset" --format plain "$T/names.txt"
t_expect_eq "load: exit" 0 "$BG_RC"
L24=$(line_of 192.0.2.0/24) L113=$(line_of 203.0.113.0/24) L6=$(line_of 2001:db8::/32)
for want in \
	"192.0.2.0/24 at $T/firehol.netset:$L24 covers $GWC_IP4, the address of interface $IF_GWC: loaded without it" \
	"192.0.2.0/24 at $T/firehol.netset:$L24 covers $S_IP4, the next hop of the default route via $IF_GWS: loaded without it" \
	"203.0.113.0/24 at $T/firehol.netset:$L113 covers $RES4, a resolver in $T/resolv.conf: loaded without it" \
	"2001:db8::/32 at $T/firehol.netset:$L6 covers $GWC_IP6, the address of interface $IF_GWC: loaded without it" \
	"2001:db8::/32 at $T/firehol.netset:$L6 covers $S_IP6, the next hop of the default route via $IF_GWS: loaded without it" \
	"2001:db8::/32 at $T/firehol.netset:$L6 covers $RES6, a resolver in $T/resolv.conf: loaded without it"; do
	grep -qxF "protected:        $want" <<<"$BG_OUT" || t_fail "load does not say: $want"
done
grep -q "^protected set:    [0-9]* addresses and prefixes: [0-9]* addresses of the attached interfaces, 2 default routes' next hops, 2 resolvers$" <<<"$BG_OUT" ||
	t_fail "load: $(grep '^protected set' <<<"$BG_OUT")"
p0=$(bg_stat protected)
expect_ping "$GWC_IP4" "the gateway's own address"
expect_ping "$GWC_IP6" "the gateway's own IPv6 address"
expect_ping "$S_IP4" "the default route's next hop"
expect_ping "$S_IP6" "the IPv6 default route's next hop"
expect_resolver "$RES4"
expect_resolver "$RES6"
expect_traffic w1 "$LISTED4 $LISTED6 $BESIDE 203.0.113.9" "$UNLISTED"
pings "$BESIDE" && t_fail "$BESIDE (listed, not protected) answers ping"
p1=$(bg_stat protected)
[ "$p1" -gt "$p0" ] || t_fail "the protected counter did not grow ($p0 -> $p1)"
t_expect_eq "check $GWC_IP4" \
	"$GWC_IP4: no match (protected: the address of interface $IF_GWC; listed by 192.0.2.0/24 at $T/firehol.netset:$L24)" \
	"$(bg check "$GWC_IP4" 2>&1)"
t_expect_eq "check $RES4" \
	"$RES4: no match (protected: a resolver in $T/resolv.conf; listed by 203.0.113.0/24 at $T/firehol.netset:$L113)" \
	"$(bg check "$RES4" 2>&1)"
t_expect_eq "check $BESIDE" \
	"$BESIDE: match (confirmed; listed by 192.0.2.0/24 at $T/firehol.netset:$L24)" \
	"$(bg check "$BESIDE" 2>&1)"
t_end "$E2E_NAME"

# ---- 2. load --protect -----------------------------------------------------------------

E2E_NAME=protect_option
t_begin
bg_capture load --protect "$LISTED4" --protect 2001:db8:100::/120 "$T/firehol.netset"
t_expect_eq "load --protect: exit" 0 "$BG_RC"
grep -qxF "protected:        198.51.100.0/24 at $T/firehol.netset:$(line_of 198.51.100.0/24) covers $LISTED4, given with --protect: loaded without it" <<<"$BG_OUT" ||
	t_fail "load --protect does not name its list: $(grep '^protected' <<<"$BG_OUT")"
expect_traffic p1 "198.51.100.8 2001:db8:100::1:7" "$LISTED4 $LISTED6 $UNLISTED"
# the next load, without it: the set follows each load
bg_capture load "$T/firehol.netset"
t_expect_eq "load without --protect: exit" 0 "$BG_RC"
expect_traffic p2 "$LISTED4 $LISTED6" "$UNLISTED"
expect_ping "$GWC_IP4" "the gateway's own address"
bg_capture load --protect 10.1.2.3/8 "$T/firehol.netset"
t_expect_eq "load --protect with host bits: exit" 2 "$BG_RC"
grep -qF -- "--protect: '10.1.2.3/8': host bits set" <<<"$BG_ERR" || t_fail "stderr: $BG_ERR"
bg_capture load --protect 0.0.0.0/0 "$T/firehol.netset"
t_expect_eq "load --protect 0.0.0.0/0: exit" 2 "$BG_RC"
# more than the set holds with the gateway's own: refused, nothing changed
id=$(current_filter_id)
args=()
for i in $(seq 0 250); do args+=(--protect "10.77.$((i / 200)).$((i % 200 + 1))"); done
bg_capture load "${args[@]}" "$T/firehol.netset"
t_expect_eq "load with a set too full: exit" 1 "$BG_RC"
grep -qF "the protected set is full: more than 256 addresses and prefixes" <<<"$BG_ERR" ||
	t_fail "stderr: $BG_ERR"
grep -qF "the running filter is unchanged" <<<"$BG_ERR" || t_fail "stderr: $BG_ERR"
t_expect_eq "the live filter after the refused load" "$id" "$(current_filter_id)"
expect_traffic p3 "$LISTED4" "$UNLISTED"
t_end "$E2E_NAME"

# ---- 3. an attachment in another network namespace ---------------------------------------

E2E_NAME=another_namespace
t_begin
# the server's veth, attached from within its namespace, same pin directory
in_ns "$NS_S" "$BG_BIN" attach "$IF_S" --mode skb >"$T/s.out" 2>&1 ||
	t_fail "attach $IF_S in $NS_S: $(cat "$T/s.out")"
bg_capture load "$T/firehol.netset"
t_expect_eq "load: exit" 0 "$BG_RC"
grep -qxF "protected:        192.0.2.0/24 at $T/firehol.netset:$L24 covers $BESIDE, the address of interface $IF_S: loaded without it" <<<"$BG_OUT" ||
	t_fail "load does not read $IF_S's addresses in $NS_S: $(grep '^protected' <<<"$BG_OUT")"
t_expect_eq "check $BESIDE" \
	"$BESIDE: no match (protected: the address of interface $IF_S; listed by 192.0.2.0/24 at $T/firehol.netset:$L24)" \
	"$(bg check "$BESIDE" 2>&1)"
in_ns "$NS_S" "$BG_BIN" detach "$IF_S" >"$T/s.out" 2>&1 || t_fail "detach $IF_S: $(cat "$T/s.out")"
bg_capture load "$T/firehol.netset"
t_expect_eq "check $BESIDE, $IF_S detached" \
	"$BESIDE: match (confirmed; listed by 192.0.2.0/24 at $T/firehol.netset:$L24)" \
	"$(bg check "$BESIDE" 2>&1)"
t_end "$E2E_NAME"

# ---- 4. an artifact -------------------------------------------------------------------

E2E_NAME=artifact
t_begin
bg_capture build -o "$T/f.bgart" "$T/firehol.netset"
t_expect_eq "build: exit" 0 "$BG_RC"
bg_capture load "$T/f.bgart"
t_expect_eq "load of the artifact: exit" 0 "$BG_RC"
grep -qxF "protected:        192.0.2.0/24 in list firehol.netset covers $GWC_IP4, the address of interface $IF_GWC: loaded without it" <<<"$BG_OUT" ||
	t_fail "load of the artifact: $(grep '^protected' <<<"$BG_OUT")"
expect_ping "$GWC_IP4" "the gateway's own address"
expect_ping "$S_IP4" "the default route's next hop"
expect_traffic a1 "$LISTED4 $BESIDE" "$UNLISTED"
bg detach "$IF_GWC" >/dev/null 2>&1 || t_fail "detach"
t_end "$E2E_NAME"

# ---- 5. the agent ------------------------------------------------------------------------

mkdir -p "$T/state"
CSDIR=$T/cs
in_ns "$NS_GW" ip link set lo up
CS_URL=$(in_ns "$NS_GW" "$E2E_ROOT/tests/crowdsec.sh" start "$CSDIR" "$CS_PORT") ||
	die "cannot start the CrowdSec local API"
in_ns "$NS_GW" "$E2E_ROOT/tests/crowdsec.sh" bouncer "$CSDIR" bloomgate >"$T/cs.key" ||
	die "cannot register the bouncer"
chmod 0600 "$T/cs.key"
cs decisions add --ip 198.51.100.30 --duration 1h || die "cscli decisions add"
write_cfg() { # PROTECTED-ADDRESS
	cat >"$CFG" <<EOF
interfaces:
  - name: $IF_GWC
    mode: $ATTACH_MODE
state_dir: $T/state
debounce: 0ms
protect:
  - $1
lists:
  - name: local
    path: $T/local.txt
  - name: names
    path: $T/names.txt
    format: plain
  - name: crowdsec
    crowdsec: $CS_URL
    api_key_file: $T/cs.key
    update_frequency: 1s
    max_range_v4: 8 # the widest the engine takes: the protected set judges
EOF
}
# not the whole documentation ranges: the next hop (192.0.2.130) is left
# for a decision of its own below
printf '198.51.100.0/24\n192.0.2.0/25\n203.0.113.0/24\n' >"$T/local.txt"
CFG=$T/bloomgate.yaml
write_cfg "$LISTED4"

E2E_NAME=agent_protect
t_begin
bg_capture agent --check --config "$CFG"
t_expect_eq "agent --check: exit" 0 "$BG_RC"
for want in \
	"protected: 198.51.100.0/24 at $T/local.txt:1 (list local) covers $LISTED4, under protect: in the agent's config: loaded without it" \
	"protected: 192.0.2.0/25 at $T/local.txt:2 (list local) covers $GWC_IP4, the address of interface $IF_GWC: loaded without it" \
	"protected: 203.0.113.0/24 at $T/local.txt:3 (list local) covers $RES4, a resolver in $T/resolv.conf: loaded without it"; do
	grep -qxF "$want" <<<"$BG_OUT" || t_fail "agent --check does not say: $want"
done
[ -e "$BG_PIN" ] && t_fail "agent --check touched the datapath ($BG_PIN exists)"
: >"$T/agent.log"
agent_start
wait_until 20 matches 198.51.100.30 || t_fail "the agent's filter is not live: $(tail -n 3 "$T/agent.log")"
for want in \
	"protected: 198.51.100.0/24 at $T/local.txt:1 (list local) covers $LISTED4, under protect: in the agent's config: loaded without it" \
	"protected: 192.0.2.0/25 at $T/local.txt:2 (list local) covers $GWC_IP4, the address of interface $IF_GWC: loaded without it"; do
	log_has "$want" || t_fail "the agent's log does not say: $want"
done
expect_ping "$GWC_IP4" "the gateway's own address"
expect_traffic g1 "198.51.100.8 198.51.100.30" "$LISTED4 $UNLISTED"
# a reload with another protect: the set follows the config
write_cfg 198.51.100.8
bg_capture reload
t_expect_eq "reload: exit" 0 "$BG_RC"
# the reload's refresh runs on the agent's worker
wait_until 10 eval '[[ "$(bg check 198.51.100.8 2>&1)" == *"(protected: under protect:"* ]]' ||
	t_fail "check 198.51.100.8 after the reload: $(bg check 198.51.100.8 2>&1)"
expect_traffic g2 "$LISTED4" "198.51.100.8 $UNLISTED"
t_end "$E2E_NAME"

# ---- 6. a CrowdSec decision over the gateway -------------------------------------------

E2E_NAME=crowdsec_range
t_begin
# the next hop itself, a /32: made in place (the filter kept in memory)
cs decisions add --ip "$S_IP4" --duration 1h || t_fail "cscli decisions add --ip"
wait_until 10 grep -q "protected: $S_IP4 (crowdsec decision [0-9]* (origin cscli, scenario [^)]*), list crowdsec) covers $S_IP4, the next hop of the default route via $IF_GWS: loaded without it" "$T/agent.log" ||
	t_fail "a decision on $S_IP4 is not reported by its decision: $(grep protected "$T/agent.log" | tail -n 2)"
expect_ping "$S_IP4" "the default route's next hop"
cs decisions add --range 192.0.0.0/8 --duration 1h || t_fail "cscli decisions add --range"
wait_until 15 grep -q "protected: 192.0.0.0/8 (crowdsec decision [0-9]* (origin cscli, scenario [^)]*), list crowdsec) covers $GWC_IP4, the address of interface $IF_GWC: loaded without it" "$T/agent.log" ||
	t_fail "the /8 decision is not reported: $(grep protected "$T/agent.log" | tail -n 3)"
wait_until 10 matches "$BESIDE" || t_fail "$BESIDE is not matched by the /8"
expect_ping "$GWC_IP4" "the gateway's own address"
expect_ping "$S_IP4" "the default route's next hop"
expect_resolver "$RES4"
expect_traffic c1 "$BESIDE $LISTED4" "$UNLISTED"
agent_stop || t_fail "the agent did not stop"
t_end "$E2E_NAME"

in_ns "$NS_GW" "$E2E_ROOT/tests/crowdsec.sh" stop "$CSDIR"
echo "# $E2E_PASSED passed, $E2E_FAILED failed ($((SECONDS - ${T_START:-0})) s)"
[ "$E2E_FAILED" -eq 0 ]
