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
#                                  flipped byte: refused everywhere (by its
#                                  SHA-256 against the store's, then, the
#                                  store's checksum made the damaged
#                                  file's, by the verification), the filter
#                                  intact, the error reported; its bytes
#                                  repaired in the store: taken by all
#                                  without a reload
#   rows_deleted_not_rolled_back   the newest generation's rows deleted:
#                                  every gateway refuses the older one,
#                                  logs it and keeps its own, fleet status
#                                  shows them ahead; gateway 1's second
#                                  agent (allow_rollback: true) takes it;
#                                  the next publish does not reuse the
#                                  number
#   killed_gateway_catches_up      an agent killed with kill -9 misses a
#                                  generation and catches up once restarted
#   status_escapes_store_text      a gateway row whose name and error hold
#                                  escape sequences, a newline, UTF-8:
#                                  fleet status prints them escaped, one
#                                  row, ASCII; --json too, jq reads them back
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
	# the second agent takes an older generation when the store's go back
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
	  allow_rollback: $([ -n "${2:-}" ] && echo true || echo false)
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
erred_n() { [ "$(erred "$1")" = "$2" ]; } # TEXT COUNT
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

psql_run() { # SQL on stdin, as the test's superuser
	psql -q -v ON_ERROR_STOP=1 "$URL" >/dev/null 2>"$T/psql.err" || {
		t_fail "psql: $(cat "$T/psql.err")"
		return 1
	}
}

E2E_NAME=damaged_artifact_refused
t_begin
# generation 4: a whole filter with 198.51.100.40, one byte of its filter
# image flipped after it was checksummed, stored as a publisher would.
# Made by a publisher (its header says generation 4, which a gateway
# checks) of a scratch database of the cluster, numbered to follow ours.
LISTED=(198.51.100.11 198.51.100.20 198.51.100.30 198.51.100.40)
write_lists
SCRATCH=${URL/\/bloomgate\?/\/bgscratch?}
psql -q "$URL" -c "CREATE DATABASE bgscratch" >/dev/null 2>"$T/psql.err" || t_fail "scratch: $(cat "$T/psql.err")"
"$BG_BIN" publish --db "$SCRATCH" --state "$T/pub2" --full "$T/block.txt" >/dev/null 2>&1 &&
	psql -q "$SCRATCH" -c "UPDATE bloomgate_meta SET value = '3' WHERE key = 'last_generation'" \
		>/dev/null 2>&1 &&
	"$BG_BIN" publish --db "$SCRATCH" --state "$T/pub2" --full "$T/block.txt" >"$T/pub2.out" 2>&1 &&
	grep -q "generation:  *4 published" "$T/pub2.out" && cp "$T/pub2/current.bga" "$PG/good.bga" ||
	t_fail "the scratch publisher's generation 4: $(cat "$T/pub2.out")"
read -r foff flen < <("$BG_BIN" inspect "$PG/good.bga" | awk '$1 == "section:" && $2 == "filter" { print $6, $3 }')
good=$("$BG_BIN" inspect "$PG/good.bga" | awk '$1 == "checksum:" { print $3 }')
[ "$good" = "$(sha256sum "$PG/good.bga" | cut -d' ' -f1)" ] || t_fail "inspect's checksum $good is not sha256sum's"
cp "$PG/good.bga" "$PG/bad.bga"
flip_byte "$PG/bad.bga" "$((foff + flen / 2))"
bad=$(sha256sum "$PG/bad.bga" | cut -d' ' -f1)
chown postgres "$PG/good.bga" "$PG/bad.bga"
size=$(stat -c %s "$PG/bad.bga")
psql_run <<-EOF
	BEGIN;
	INSERT INTO bloomgate_generations (generation, kind, sha256, full_bytes)
		VALUES (4, 'full', '$good', $size);
	INSERT INTO bloomgate_chunks (generation, part, seq, data)
		VALUES (4, 'full', 0, pg_read_binary_file('$PG/bad.bga'));
	NOTIFY bloomgate_generation, '4';
	COMMIT;
EOF
# its bytes are not the store's checksum: refused as it is fetched
wait_until 60 all_erred "does not match the store's checksum" ||
	t_fail "$(erred "does not match the store's checksum") of $N gateways refused the damaged bytes"
# the store's checksum made the damaged file's (a publisher's bug): each
# gateway takes it, and its verification refuses it
psql_run <<-EOF
	UPDATE bloomgate_generations SET sha256 = '$bad' WHERE generation = 4;
	NOTIFY bloomgate_generation, '4';
EOF
wait_until 60 all_erred "filter section is damaged" ||
	t_fail "$(erred "filter section is damaged") of $N gateways refused the damaged filter"
[ "$(at_gen 3)" = "$((N + 1))" ] || t_fail "$(at_gen 3) of $((N + 1)) agents still report generation 3"
traffic_all p4 5 198.51.100.20 198.51.100.40 198.51.100.50
expect_dropped p4 198.51.100.20
expect_passed p4 198.51.100.40 5
expect_passed p4 198.51.100.50 5
# repaired in the store: the same generation, intact bytes, taken by all
# at the next fetch, without a reload (a refused generation is known by
# its bytes, not by its number or its header)
psql_run <<-EOF
	BEGIN;
	UPDATE bloomgate_chunks SET data = pg_read_binary_file('$PG/good.bga')
		WHERE generation = 4;
	UPDATE bloomgate_generations SET sha256 = '$good' WHERE generation = 4;
	NOTIFY bloomgate_generation, '4';
	COMMIT;
EOF
wait_until 60 all_at 4 || t_fail "$(at_gen 4) of $((N + 1)) agents took the repaired generation 4"
wait_until 10 none_erred damaged || t_fail "$(erred damaged) gateways still report the damage"
traffic_all p4b 5 198.51.100.40 198.51.100.50
expect_dropped p4b 198.51.100.40
expect_passed p4b 198.51.100.50 5
# the next generation (a full one: 4 is not the publisher's)
LISTED+=(198.51.100.41)
write_lists
publish
grep -q "generation:  *5 published (full), sha256 " <<<"$PUB_OUT" || t_fail "not generation 5, full: $PUB_OUT"
[ "$(sed -n 's/^generation: .* sha256 //p' <<<"$PUB_OUT")" = "$(sha256sum "$T/pub/current.bga" | cut -d' ' -f1)" ] ||
	t_fail "publish's sha256 is not sha256sum's of the generation: $PUB_OUT"
wait_until 60 all_at 5 || t_fail "$(at_gen 5) of $N gateways report generation 5"
t_end "$E2E_NAME"

E2E_NAME=rows_deleted_not_rolled_back
t_begin
# generation 5's rows deleted: the store's newest is 4 again
psql_run <<-EOF
	DELETE FROM bloomgate_generations WHERE generation = 5;
	NOTIFY bloomgate_generation, '4';
EOF
wait_until 60 erred_n "older than generation 5 applied here" "$N" ||
	t_fail "$(erred "older than generation 5 applied here") of $N gateways refused the older generation"
wait_until 60 gen_is 1b 4 || t_fail "gateway 1's second agent (allow_rollback) reports $(gen_of 1b), not 4"
[ "$(at_gen 5)" = "$N" ] || t_fail "$(at_gen 5) of $N gateways still report generation 5"
for ((i = 1; i <= N; i++)); do
	grep -q "the store's newest generation 4 is older than generation 5 applied here: refused" "$T/gw$i.log" ||
		t_fail "gateway $i did not log the refusal"
done
grep -q "the store's newest generation 4 is older than generation 5 applied here: taken (allow_rollback)" \
	"$T/gw1b.log" || t_fail "the second agent did not log what it took: $(tail -n 3 "$T/gw1b.log")"
traffic_all p5 5 198.51.100.41 198.51.100.50
expect_dropped p5 198.51.100.41
expect_passed p5 198.51.100.50 5
# fleet status: ahead of the store
ahead=$(status_json | jq '[.gateways[] | select(.lag_generations == -1 and .ahead)] | length')
[ "$ahead" = "$N" ] || t_fail "$ahead of $N gateways shown ahead in --json"
"$BG_BIN" fleet status --db "$URL" >"$T/status.txt" 2>&1
awk '$1 == "gw2" && $2 == 5 && $3 == -1 && / ahead /' "$T/status.txt" | grep -q . ||
	t_fail "gateway 2 is not shown ahead: $(grep '^gw2 ' "$T/status.txt")"
# the next publish takes 6, never 5 again
publish
grep -q "generation:  *6 published" <<<"$PUB_OUT" || t_fail "not generation 6: $PUB_OUT"
wait_until 60 all_at 6 || t_fail "$(at_gen 6) of $((N + 1)) agents report generation 6"
wait_until 10 none_erred "older than" || t_fail "$(erred "older than") gateways still report the refusal"
t_end "$E2E_NAME"

E2E_NAME=killed_gateway_catches_up
t_begin
agent_stop 2 KILL
LISTED=(198.51.100.11 198.51.100.20 198.51.100.30 198.51.100.40 198.51.100.60)
write_lists
publish
[ "$PUB_RC" = 0 ] || t_fail "publish: $PUB_OUT"
wait_until 60 count_at 7 "$N" || t_fail "$(at_gen 7) of $N running agents report generation 7"
[ "$(gen_of 2)" = 6 ] || t_fail "the killed gateway reports generation $(gen_of 2), not 6"
# killed, its filter still enforces generation 6 (fail-static)
TRAFFIC_GWS=(2)
traffic_all k1 5 198.51.100.40 198.51.100.60
expect_dropped k1 198.51.100.40 2
expect_passed k1 198.51.100.60 5 2
agent_start 2
wait_until 60 gen_is 2 7 || t_fail "the restarted gateway reports generation $(gen_of 2), not 7"
TRAFFIC_GWS=()
traffic_all k2 5 198.51.100.60 198.51.100.50
expect_dropped k2 198.51.100.60
expect_passed k2 198.51.100.50 5
lags=$(status_json | jq '[.gateways[] | select(.lag_generations != 0)] | length')
[ "$lags" = 0 ] || t_fail "$lags gateways lag behind generation 7"
t_end "$E2E_NAME"

E2E_NAME=status_escapes_store_text
t_begin
# any gateway's database role can write these: a name that clears the
# screen and starts another row, a state that colours the rest, an error
# that sets the window title, UTF-8 and a backslash
psql_run <<-'EOF'
	INSERT INTO bloomgate_gateways (gateway, generation, state, last_error)
		VALUES (E'evil\033[2J\nfake-gw 7', 7, E'ok\033[31m',
			E'x\033]0;pwned\007 caf\u00e9 \\ end');
EOF
"$BG_BIN" fleet status --db "$URL" >"$T/esc.txt" 2>&1 || t_fail "fleet status: $(cat "$T/esc.txt")"
LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f-\xff]' "$T/esc.txt" &&
	t_fail "fleet status printed raw control or non-ASCII bytes: $(od -c "$T/esc.txt" | head -n 5)"
rows=$(wc -l <"$T/esc.txt")
[ "$rows" = "$((N + 4))" ] ||
	t_fail "$rows lines for $((N + 1)) gateways, the hostile one and 2 heads: a row was split"
grep -qF 'evil\x1b[2J\x0afake-gw 7' "$T/esc.txt" || t_fail "the name is not escaped: $(grep evil "$T/esc.txt")"
grep -qF 'x\x1b]0;pwned\x07 caf\xc3\xa9 \\ end' "$T/esc.txt" ||
	t_fail "the error is not escaped: $(grep evil "$T/esc.txt")"
grep -qF 'ok\x1b[31m' "$T/esc.txt" || t_fail "the state is not escaped: $(grep evil "$T/esc.txt")"
"$BG_BIN" fleet status --db "$URL" --json >"$T/esc.json" 2>&1 || t_fail "fleet status --json"
LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f-\xff]' "$T/esc.json" &&
	t_fail "fleet status --json printed raw control or non-ASCII bytes"
[ "$(wc -l <"$T/esc.json")" = 1 ] || t_fail "--json is not one line"
jq -e --arg n $'evil\e[2J\nfake-gw 7' --arg e $'x\e]0;pwned\a caf\xc3\xa9 \\ end' \
	'[.gateways[] | select(.gateway == $n and .last_error == $e)] | length == 1' \
	"$T/esc.json" >/dev/null || t_fail "jq does not read the hostile row back: $(grep -o '"gateway":"evil[^,]*' "$T/esc.json")"
psql_run <<<"DELETE FROM bloomgate_gateways WHERE gateway LIKE 'evil%';"
t_end "$E2E_NAME"


echo "# $E2E_PASSED passed, $E2E_FAILED failed"
[ "$E2E_FAILED" -eq 0 ]
