#!/bin/bash
# The fleet: one PostgreSQL cluster of the test's own (tests/pg.sh: a
# temporary directory, the unprivileged postgres user, a private socket),
# one publisher (bloomgate publish) and FLEET_GATEWAYS gateways (20), each
# an agent with `fleet:` in its own network namespace, with its own pin
# directory, state directory and veth, and real UDP traffic through each
# (a client namespace per gateway sends, the gateway's XDP program judges,
# a sink in the gateway counts what passed). The cases, in order:
#
#   publish_reaches_every_gateway  a publish is enforced by all and each
#                                  reports the new generation; gateway 1's
#                                  namespace runs a second agent beside the
#                                  first (its own pin and state directory,
#                                  another veth), which reports too
#   delta_adds_and_removes         a delta generation: the added entry
#                                  dropped, the removed one passes, on
#                                  every gateway, each having applied the
#                                  delta (not the whole filter)
#   store_down_gateway_restarts    PostgreSQL stopped FLEET_OUTAGE (30) s:
#                                  a gateway restarts meanwhile, traffic
#                                  flows, every gateway keeps enforcing;
#                                  back up, all catch up with a publish
#   damaged_artifact_refused       a generation whose artifact has one
#                                  flipped byte: refused everywhere, the
#                                  filter intact, the error reported
#   killed_gateway_catches_up      an agent killed with kill -9 misses a
#                                  generation and catches up once restarted
set -u
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

N=${FLEET_GATEWAYS:-20}
OUTAGE=${FLEET_OUTAGE:-30}
PFX=bgf
PIN_BASE=/sys/fs/bpf/bgfleet
PORT=9999
MARKER=/run/bloomgate-fleet.state
T=
PG=
URL=
declare -a APID
SIDE_PID= # the second agent of gateway 1's namespace

# ---- topology and cleanup -----------------------------------------------------

cleanup() {
	local i pid
	((E2E_CLEANING)) && return
	E2E_CLEANING=1
	for pid in "${APID[@]}" $SIDE_PID "${E2E_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${APID[@]}" $SIDE_PID "${E2E_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	if [ -e "/run/netns/${PFX}g1" ]; then
		BLOOMGATE_PIN_DIR=$PIN_BASE-1b in_ns "${PFX}g1" "$BG_BIN" detach --all >/dev/null 2>&1
		ip -n "${PFX}g1" link set dev d0 xdpgeneric off 2>/dev/null
	fi
	rm -f "$PIN_BASE-1b"/bg_* 2>/dev/null
	rmdir "$PIN_BASE-1b" 2>/dev/null
	for ((i = 1; i <= N; i++)); do
		if [ -e "/run/netns/${PFX}g$i" ]; then
			for pid in $(ip netns pids "${PFX}g$i" 2>/dev/null); do
				kill -9 "$pid" 2>/dev/null
			done
			BLOOMGATE_PIN_DIR=$PIN_BASE-$i in_ns "${PFX}g$i" "$BG_BIN" detach --all \
				>/dev/null 2>&1
			ip -n "${PFX}g$i" link set dev g0 xdpgeneric off 2>/dev/null
		fi
		rm -f "$PIN_BASE-$i"/bg_* 2>/dev/null
		rmdir "$PIN_BASE-$i" 2>/dev/null
		ip netns del "${PFX}c$i" 2>/dev/null
		ip netns del "${PFX}g$i" 2>/dev/null
	done
	[ -n "$PG" ] && "$E2E_ROOT/tests/pg.sh" stop "$PG" >/dev/null 2>&1
	[ -n "$T" ] && rm -rf "$T"
	rm -f "$MARKER"
}

topo() { # I
	local c=${PFX}c$1 g=${PFX}g$1
	ip netns add "$c" && ip netns add "$g" || return 1
	ip -n "$c" link set lo up
	ip -n "$g" link set lo up
	ip -n "$c" link add c0 address 02:b6:00:00:01:01 type veth peer name g0 \
		address 02:b6:00:00:01:02 netns "$g" || return 1
	ip -n "$c" addr add 192.0.2.2/24 dev c0
	ip -n "$c" link set c0 up
	ip -n "$c" route add 198.51.100.0/24 via 192.0.2.1
	ip -n "$c" neigh replace 192.0.2.1 lladdr 02:b6:00:00:01:02 nud permanent dev c0
	ip -n "$g" addr add 192.0.2.1/24 dev g0
	ip -n "$g" link set g0 up
	ip -n "$g" route add local 198.51.100.0/24 dev lo
	ip -n "$g" neigh replace 192.0.2.2 lladdr 02:b6:00:00:01:01 nud permanent dev g0
}

init() {
	local i
	[ "$(id -u)" -eq 0 ] || die "must run as root"
	for f in "$BG_BIN" "$UDPSEND" "$UDPSINK"; do
		[ -x "$f" ] || die "$f is missing: run make first"
	done
	require_cmds "${E2E_CMDS[@]}" runuser psql od dd chown stat
	exec {E2E_LOCK_FD}>"$E2E_LOCK"
	flock -w "${E2E_LOCK_WAIT:-300}" "$E2E_LOCK_FD" || die "another bloomgate e2e run holds $E2E_LOCK"
	if [ -e "$MARKER" ]; then
		read -r T PG <"$MARKER"
		case $T in /tmp/bloomgate-fleet.*) ;; *) T= PG= ;; esac
		info "cleaning up after an earlier run that did not finish"
		cleanup
		E2E_CLEANING=0
		T= PG=
	fi
	for ((i = 1; i <= N; i++)); do
		[ -e "/run/netns/${PFX}g$i" ] && die "network namespace ${PFX}g$i exists already (not ours)"
		[ -e "$PIN_BASE-$i" ] && die "$PIN_BASE-$i exists: another bloomgate uses it"
	done
	trap cleanup EXIT
	trap 'cleanup; exit 130' INT
	trap 'cleanup; exit 143' TERM
	T=$(mktemp -d /tmp/bloomgate-fleet.XXXXXX)
	chmod 0711 "$T" # the postgres user reaches its directory in it
	PG=$T/pg
	echo "$T $PG" >"$MARKER"
	URL=$("$E2E_ROOT/tests/pg.sh" start "$PG") || die "cannot start PostgreSQL in $PG"
	for ((i = 1; i <= N; i++)); do
		topo "$i" || die "cannot build the namespaces of gateway $i"
	done
}

# ---- the fleet ----------------------------------------------------------------

gw() { # I CMD... : bloomgate in gateway I's namespace (1b: gateway 1's), with its pin directory
	local i=$1
	shift
	BLOOMGATE_PIN_DIR=$PIN_BASE-$i in_ns "${PFX}g${i%b}" "$BG_BIN" "$@"
}

agent_start() { # I [NS-INDEX IFACE]: gateway I, or a second agent I in NS-INDEX's namespace
	local i=$1 ns=${2:-$1} ifc=${3:-g0}
	mkdir -p "$T/gw$i"
	cat >"$T/gw$i.yaml" <<-EOF
	interfaces:
	  - name: $ifc
	    mode: skb
	state_dir: $T/gw$i
	fleet:
	  db: "$URL"
	  gateway: gw$i
	  poll: 30s
	  report: 1s
	EOF
	BLOOMGATE_PIN_DIR=$PIN_BASE-$i nsenter --net="/run/netns/${PFX}g$ns" \
		"$BG_BIN" agent --config "$T/gw$i.yaml" {E2E_LOCK_FD}>&- >>"$T/gw$i.log" 2>&1 &
	if [ -n "${2:-}" ]; then SIDE_PID=$!; else APID[$i]=$!; fi
}

agent_stop() { # I [SIGNAL]
	local i=$1
	kill "-${2:-TERM}" "${APID[$i]}" 2>/dev/null
	wait_pid "${APID[$i]}" 10
}

status_json() { "$BG_BIN" fleet status --db "$URL" --json 2>/dev/null; }
gen_of() { # I -> the generation gateway I reported
	status_json | jq -r --arg g "gw$1" '[.gateways[] | select(.gateway == $g) | .generation][0] // 0'
}
# How many gateways reported generation G.
at_gen() { status_json | jq --argjson g "$1" '[.gateways[] | select(.generation == $g)] | length'; }
all_at() { [ "$(at_gen "$1")" = "$((N + 1))" ]; } # with gateway 1's second agent
count_at() { [ "$(at_gen "$1")" = "$2" ]; } # G COUNT
gen_is() { [ "$(gen_of "$1")" = "$2" ]; }   # I G
all_reported() { [ "$(status_json | jq '.gateways | length')" = "$((N + 1))" ]; }
# Gateways whose report carries an error containing TEXT.
erred() { status_json | jq --arg t "$1" '[.gateways[] | select(.last_error | contains($t))] | length'; }
all_erred() { [ "$(erred "$1")" = "$((N + 1))" ]; }
none_erred() { [ "$(erred "$1")" = 0 ]; }

# The publisher's lists: FILLER addresses and the test's own entries.
LISTED=()
write_lists() {
	{
		printf '%s\n' "${LISTED[@]}"
		cat "$T/filler.txt"
	} >"$T/block.tmp" && mv "$T/block.tmp" "$T/block.txt"
}

publish() { # [OPTS...]: the output in PUB_OUT, status in PUB_RC
	PUB_OUT=$("$BG_BIN" publish --db "$URL" --state "$T/pub" "$@" "$T/block.txt" 2>&1)
	PUB_RC=$?
}

# ---- traffic: every gateway at once ----------------------------------------------

# Sends COUNT datagrams to each ADDR from every client (the gateways given,
# or all); afterwards recv_at I ADDR is what gateway I's sink got.
TRAFFIC_GWS=()
traffic_all() { # TAG COUNT ADDR...
	local tag=$1 count=$2 i pids=()
	shift 2
	local gws=("${TRAFFIC_GWS[@]}")
	((${#gws[@]})) || gws=($(seq 1 "$N"))
	for i in "${gws[@]}"; do
		rm -f "$T/$tag.$i."*
		nsenter --net="/run/netns/${PFX}g$i" "$UDPSINK" --port "$PORT" \
			--ready-file "$T/$tag.$i.ready" --stop-file "$T/$tag.$i.stop" \
			--idle 300 --timeout 60 {E2E_LOCK_FD}>&- >"$T/$tag.$i.sink" &
		pids+=($!)
	done
	for i in "${gws[@]}"; do
		wait_until 5 test -e "$T/$tag.$i.ready" || return 1
	done
	for i in "${gws[@]}"; do
		nsenter --net="/run/netns/${PFX}c$i" "$UDPSEND" --port "$PORT" --count "$count" \
			--pps 2000 "$@" {E2E_LOCK_FD}>&- >"$T/$tag.$i.send" &
	done
	wait_pids_but "${pids[@]}"
	for i in "${gws[@]}"; do
		touch "$T/$tag.$i.stop"
	done
	for pid in "${pids[@]}"; do
		wait_pid "$pid" 15
	done
}
# waits for every child but the sinks (the senders)
wait_pids_but() {
	local p j skip
	for p in $(jobs -p); do
		skip=0
		for j in "$@" "${APID[@]}" $SIDE_PID; do
			[ "$p" = "$j" ] && skip=1
		done
		((skip)) || wait "$p"
	done
}
recv_at() { # TAG I ADDR
	awk -v a="$3" '$1 == "recv" && $2 == a { n += $3 } END { print n + 0 }' "$T/$1.$2.sink"
}

# Every gateway of the last traffic_all: ADDR got none (dropped) or all.
expect_dropped() { # TAG ADDR [GW...]
	local tag=$1 a=$2 i
	shift 2
	local gws=("$@")
	((${#gws[@]})) || gws=($(seq 1 "$N"))
	for i in "${gws[@]}"; do
		[ "$(recv_at "$tag" "$i" "$a")" = 0 ] || t_fail "gateway $i let $(recv_at "$tag" "$i" "$a") datagrams to $a through"
	done
}
expect_passed() { # TAG ADDR COUNT [GW...]
	local tag=$1 a=$2 c=$3 i
	shift 3
	local gws=("$@")
	((${#gws[@]})) || gws=($(seq 1 "$N"))
	for i in "${gws[@]}"; do
		[ "$(recv_at "$tag" "$i" "$a")" = "$c" ] || t_fail "gateway $i passed $(recv_at "$tag" "$i" "$a") of $c datagrams to $a"
	done
}

# ---- the cases ------------------------------------------------------------------

init
info "PostgreSQL at $URL; $N gateways"
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "10.%d.%d.%d\n", int(i / 65536) + 1, int(i / 256) % 256, i % 256 }' >"$T/filler.txt"
for ((i = 1; i <= N; i++)); do
	gw "$i" attach g0 --mode skb >/dev/null || die "cannot attach to g0 of gateway $i"
	agent_start "$i"
done

# a second agent in gateway 1's namespace, on a veth of its own
ip -n "${PFX}g1" link add d0 type veth peer name d1 && ip -n "${PFX}g1" link set d0 up &&
	ip -n "${PFX}g1" link set d1 up || die "cannot make gateway 1's second veth"
gw 1b attach d0 --mode skb >/dev/null 2>&1 || true
agent_start 1b 1 d0

E2E_NAME=publish_reaches_every_gateway
t_begin
wait_until 60 all_reported || t_fail "only $(status_json | jq '.gateways | length') of $N gateways reported before a publish"
LISTED=(198.51.100.10 198.51.100.11)
write_lists
publish
[ "$PUB_RC" = 0 ] || t_fail "publish: $PUB_OUT"
grep -q "generation:  *1 published (full)" <<<"$PUB_OUT" || t_fail "not generation 1, full: $PUB_OUT"
wait_until 60 all_at 1 || t_fail "$(at_gen 1) of $N gateways report generation 1"
traffic_all p1 5 198.51.100.10 198.51.100.50
expect_dropped p1 198.51.100.10
expect_passed p1 198.51.100.50 5
t_end "$E2E_NAME"

E2E_NAME=delta_adds_and_removes
t_begin
LISTED=(198.51.100.11 198.51.100.20)
write_lists
publish
grep -q "generation:  *2 published (delta)" <<<"$PUB_OUT" || t_fail "not generation 2 as a delta: $PUB_OUT"
wait_until 60 all_at 2 || t_fail "$(at_gen 2) of $N gateways report generation 2"
for ((i = 1; i <= N; i++)); do
	grep -q "generation 2 (a delta applied to the copy kept" "$T/gw$i.log" ||
		t_fail "gateway $i did not apply generation 2 as a delta"
done
traffic_all p2 5 198.51.100.10 198.51.100.11 198.51.100.20
expect_passed p2 198.51.100.10 5
expect_dropped p2 198.51.100.11
expect_dropped p2 198.51.100.20
# check on a gateway names the list from the artifact's index
out=$(gw 1 check 198.51.100.20 198.51.100.10 2>&1)
grep -q "^198.51.100.20: match (confirmed; listed by 198.51.100.20 in block.txt" <<<"$out" ||
	t_fail "check 198.51.100.20 on gateway 1: $out"
grep -q "^198.51.100.10: no match" <<<"$out" || t_fail "check 198.51.100.10 on gateway 1: $out"
t_end "$E2E_NAME"

E2E_NAME=store_down_gateway_restarts
t_begin
"$E2E_ROOT/tests/pg.sh" stop-keep "$PG" >/dev/null || t_fail "cannot stop PostgreSQL"
t0=$SECONDS
agent_stop 1 || t_fail "agent of gateway 1 did not stop"
agent_start 1
wait_until 20 grep -q "adopted" "$T/gw1.log" || t_fail "the restarted agent did not adopt its filter: $(tail -n 5 "$T/gw1.log")"
out=$(gw 1 status 2>&1)
grep -q "^agent: fleet gateway gw1, the store not connected" <<<"$out" || t_fail "status during the outage: $out"
grep -q "^agent: the live filter is an artifact's: generation 2," <<<"$out" || t_fail "status of the artifact: $out"
round=0
while ((SECONDS - t0 < OUTAGE)); do
	round=$((round + 1))
	traffic_all "out$round" 3 198.51.100.20 198.51.100.50
	expect_dropped "out$round" 198.51.100.20
	expect_passed "out$round" 198.51.100.50 3
done
((round >= 2)) || t_fail "only $round rounds of traffic during the outage"
URL2=$("$E2E_ROOT/tests/pg.sh" start "$PG") || t_fail "cannot start PostgreSQL again"
[ "$URL2" = "$URL" ] || t_fail "PostgreSQL came back at $URL2, not $URL"
LISTED=(198.51.100.11 198.51.100.20 198.51.100.30)
write_lists
publish
[ "$PUB_RC" = 0 ] || t_fail "publish after the outage: $PUB_OUT"
wait_until 60 all_at 3 || t_fail "$(at_gen 3) of $N gateways caught up with generation 3"
gw 1 status 2>&1 | grep -q "^agent: fleet gateway gw1, the store connected" || t_fail "status after the outage: $(gw 1 status 2>&1)"
traffic_all p3 5 198.51.100.30 198.51.100.50
expect_dropped p3 198.51.100.30
expect_passed p3 198.51.100.50 5
t_end "$E2E_NAME"

E2E_NAME=damaged_artifact_refused
t_begin
# generation 4: a whole filter with 198.51.100.40, one byte of its filter
# image flipped after it was checksummed, stored as the publisher would
LISTED=(198.51.100.11 198.51.100.20 198.51.100.30 198.51.100.40)
write_lists
"$BG_BIN" build "$T/block.txt" -o "$PG/bad.bga" >/dev/null 2>&1 || t_fail "build of the damaged artifact"
read -r foff flen < <("$BG_BIN" inspect "$PG/bad.bga" | awk '$1 == "section:" && $2 == "filter" { print $6, $3 }')
sha=$("$BG_BIN" inspect "$PG/bad.bga" | awk '$1 == "checksum:" { print $3 }')
pos=$((foff + flen / 2))
flip_byte "$PG/bad.bga" "$pos"
chown postgres "$PG/bad.bga"
size=$(stat -c %s "$PG/bad.bga")
psql -q -v ON_ERROR_STOP=1 "$URL" >/dev/null 2>"$T/psql.err" <<-EOF || t_fail "storing the damaged generation: $(cat "$T/psql.err")"
	BEGIN;
	INSERT INTO bloomgate_generations (generation, kind, sha256, full_bytes)
		VALUES (4, 'full', '$sha', $size);
	INSERT INTO bloomgate_chunks (generation, part, seq, data)
		VALUES (4, 'full', 0, pg_read_binary_file('$PG/bad.bga'));
	NOTIFY bloomgate_generation, '4';
	COMMIT;
EOF
wait_until 60 all_erred "damaged" || t_fail "$(erred damaged) of $N gateways reported the damaged artifact"
[ "$(at_gen 3)" = "$((N + 1))" ] || t_fail "$(at_gen 3) of $((N + 1)) agents still report generation 3"
traffic_all p4 5 198.51.100.20 198.51.100.40 198.51.100.50
expect_dropped p4 198.51.100.20
expect_passed p4 198.51.100.40 5
expect_passed p4 198.51.100.50 5
# the next good generation (a full one: 4 is not the publisher's) mends all
publish
grep -q "generation:  *5 published (full)" <<<"$PUB_OUT" || t_fail "not generation 5, full: $PUB_OUT"
wait_until 60 all_at 5 || t_fail "$(at_gen 5) of $N gateways report generation 5"
wait_until 10 none_erred damaged || t_fail "$(erred damaged) gateways still report the damage"
t_end "$E2E_NAME"

E2E_NAME=killed_gateway_catches_up
t_begin
agent_stop 2 KILL
LISTED=(198.51.100.11 198.51.100.20 198.51.100.30 198.51.100.40 198.51.100.60)
write_lists
publish
[ "$PUB_RC" = 0 ] || t_fail "publish: $PUB_OUT"
wait_until 60 count_at 6 "$N" || t_fail "$(at_gen 6) of $N running agents report generation 6"
[ "$(gen_of 2)" = 5 ] || t_fail "the killed gateway reports generation $(gen_of 2), not 5"
# killed, its filter still enforces generation 5 (fail-static)
TRAFFIC_GWS=(2)
traffic_all k1 5 198.51.100.40 198.51.100.60
expect_dropped k1 198.51.100.40 2
expect_passed k1 198.51.100.60 5 2
agent_start 2
wait_until 60 gen_is 2 6 || t_fail "the restarted gateway reports generation $(gen_of 2), not 6"
TRAFFIC_GWS=()
traffic_all k2 5 198.51.100.60 198.51.100.50
expect_dropped k2 198.51.100.60
expect_passed k2 198.51.100.50 5
lags=$(status_json | jq '[.gateways[] | select(.lag_generations != 0)] | length')
[ "$lags" = 0 ] || t_fail "$lags gateways lag behind generation 6"
t_end "$E2E_NAME"

echo "# $E2E_PASSED passed, $E2E_FAILED failed"
[ "$E2E_FAILED" -eq 0 ]
