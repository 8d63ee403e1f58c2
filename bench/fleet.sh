#!/bin/bash
# The fleet section of `make bench` (called by bench/run.sh; runs alone
# too): a filter built once and enforced by many gateways.
#
#   bench/fleet.sh [--quick]      markdown on stdout, progress on stderr
#
# For each size N (FLEET_SIZES: N distinct random IPv4 /32 addresses,
# build/genaddrs, a fixed seed):
#
# 1. The artifact: `bloomgate build` (time), its bytes, per key, the filter
#    map's and the index's share. `load FILE` of it (the wall time of the
#    command: verify every section, copy into a new map, swap) against
#    `load LIST` of the same list (parse, build, swap) on one attachment,
#    rounds interleaved.
# 2. The fleet: a PostgreSQL cluster of the script's own (tests/pg.sh), G
#    gateways (FLEET_GATEWAYS, default 20: each an agent with fleet: in a
#    network namespace of its own, attached in skb mode to a veth, its own
#    pin and state directory). A first publish (full), then FLEET_ROUNDS
#    publishes of a 0.1% change (N/2000 addresses out, N/2000 in): the
#    time from the start of `bloomgate publish` to the store's commit, and
#    from there to the last of the G gateways swapping it in (each agent's
#    timing line says when its new filter went live), the delta's bytes
#    against the full artifact's, and each gateway's own work (fetch, and
#    verify + copy into the map).
# 3. The same publish with FLEET_MANY gateways (default 100) at the
#    smallest size, if the machine holds them (the table says what it
#    held).
# 4. `load FILE` at FLEET_BIG keys (default 100M; 0 leaves it out).
#
# Each figure is the median over its rounds. Everything is removed on exit
# and a killed run is cleaned up by the next (marker file). The project's
# e2e lock is held throughout.
set -u
cd "$(dirname "$0")/.." || exit 1
export LC_ALL=C
# shellcheck source=scripts/lib-require.sh
source scripts/lib-require.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh
require_cmds ip nsenter flock awk sed grep mv cp rm rmdir mkdir mktemp head tail \
	cut seq sleep cat stat sort jq runuser psql paste uniq /usr/bin/time

BUILD=${BUILD:-build}
BG=$BUILD/bloomgate
GEN=$BUILD/genaddrs
SIZES=${FLEET_SIZES:-1000000 10000000}
GATEWAYS=${FLEET_GATEWAYS:-20}
MANY=${FLEET_MANY:-100}
ROUNDS=${FLEET_ROUNDS:-3}
BIG=${FLEET_BIG:-100000000}
if [ "${1:-}" = --quick ]; then
	SIZES=${FLEET_SIZES:-100000} ROUNDS=${FLEET_ROUNDS:-1} MANY=${FLEET_MANY:-0}
	BIG=${FLEET_BIG:-0} GATEWAYS=${FLEET_GATEWAYS:-5}
fi
SEED=20261203
PFX=bgfb
LOCK=${E2E_LOCK:-/run/bloomgate-e2e.lock}
MARKER=/run/bloomgate-bench-fleet.state
TMP=
URL=
NMAX=0 # gateways made so far (cleanup)
declare -a APID

say() { echo "fleet.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}
out() { echo "$@"; }

# ---- cleanup ------------------------------------------------------------

gw_down() { # I
	local i=$1 pid
	if [ -e "/run/netns/$PFX$i" ]; then
		for pid in $(ip netns pids "$PFX$i" 2>/dev/null); do
			kill -9 "$pid" 2>/dev/null
		done
		BLOOMGATE_PIN_DIR=/sys/fs/bpf/$PFX$i nsenter --net="/run/netns/$PFX$i" \
			"$BG" detach --all >/dev/null 2>&1
		ip -n "$PFX$i" link set dev v0 xdpgeneric off 2>/dev/null
		ip netns del "$PFX$i" 2>/dev/null
	fi
	rm -rf "/sys/fs/bpf/$PFX$i"
	rm -f "/run/bloomgate/_sys_fs_bpf_$PFX$i".*
}

cleanup() {
	local i
	for i in "${APID[@]}"; do
		kill "$i" 2>/dev/null
	done
	for ((i = 0; i <= NMAX; i++)); do
		gw_down "$i"
	done
	[ -n "$TMP" ] && [ -d "$TMP/pg" ] && tests/pg.sh stop "$TMP/pg" >/dev/null 2>&1
	case $TMP in /tmp/bloomgate-bench-fleet.*) rm -rf "$TMP" ;; esac
	rm -f "$MARKER"
}

# ---- helpers ------------------------------------------------------------


# A gateway: namespace, veth, attachment; I 0 is the bench's own (load).
gw_up() { # I
	local i=$1
	((i > NMAX)) && NMAX=$i
	ip netns add "$PFX$i" &&
		ip -n "$PFX$i" link set lo up &&
		ip -n "$PFX$i" link add v0 type veth peer name v1 &&
		ip -n "$PFX$i" link set v0 up &&
		ip -n "$PFX$i" link set v1 up &&
		BLOOMGATE_PIN_DIR=/sys/fs/bpf/$PFX$i nsenter --net="/run/netns/$PFX$i" \
			"$BG" attach v0 --mode skb >/dev/null
}
bgi() { # I CMD...: bloomgate in gateway I's namespace and pins
	local i=$1
	shift
	BLOOMGATE_PIN_DIR=/sys/fs/bpf/$PFX$i nsenter --net="/run/netns/$PFX$i" "$BG" "$@"
}

agent_up() { # I
	local i=$1
	mkdir -p "$TMP/gw$i"
	cat >"$TMP/gw$i.yaml" <<-EOF
	state_dir: $TMP/gw$i
	fleet:
	  db: "$URL"
	  gateway: gw$i
	  poll: 60s
	  report: 2s
	EOF
	BLOOMGATE_PIN_DIR=/sys/fs/bpf/$PFX$i nsenter --net="/run/netns/$PFX$i" \
		"$BG" agent --config "$TMP/gw$i.yaml" 2>>"$TMP/gw$i.log" {LOCK_FD}>&- &
	APID[$i]=$!
}

# "live fetch build" of LOG's last timing line
last_live() {
	grep ' timing: ' "$1" | tail -n1 |
		sed -n 's/.*fetch \([0-9.]*\) ms, .* build \([0-9.]*\) ms, .* live at \([0-9.]*\),.*/\3 \1 \2/p'
}

# Publishes the list; waits for gateways 1..G to swap it in (a timing line
# more than before each); appends "KIND t_stored t_all fetch_med
# build_med delta_bytes full_bytes" to FILE.
publish_round() { # G LIST FILE
	local g=$1 list=$2 file=$3 i t0 t1 n last=0 f b l pub
	declare -a before
	for ((i = 1; i <= g; i++)); do
		before[$i]=$(timings "$TMP/gw$i.log")
	done
	t0=$EPOCHREALTIME
	pub=$("$BG" publish --db "$URL" --state "$TMP/pub" "$list" 2>&1) ||
		{ say "publish failed: $pub"; return 1; }
	t1=$EPOCHREALTIME
	local deadline=$((SECONDS + 300))
	for ((i = 1; i <= g; i++)); do
		while [ "$(timings "$TMP/gw$i.log")" -le "${before[$i]}" ]; do
			((SECONDS >= deadline)) && { say "gateway $i did not swap: $(tail -n 2 "$TMP/gw$i.log")"; return 1; }
			sleep 0.05
		done
	done
	: >"$TMP/gwt"
	for ((i = 1; i <= g; i++)); do
		last_live "$TMP/gw$i.log" >>"$TMP/gwt"
	done
	l=$(awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { printf "%.6f", m }' "$TMP/gwt")
	f=$(awk '{ print $2 }' "$TMP/gwt" | median)
	b=$(awk '{ print $3 }' "$TMP/gwt" | median)
	local kind dbytes fbytes
	kind=$(sed -n 's/^generation: *[0-9]* published (\([a-z]*\)).*/\1/p' <<<"$pub")
	dbytes=$(sed -n 's/^delta: .* elements of 64 bytes, \([0-9]*\) bytes (.*/\1/p' <<<"$pub")
	fbytes=$(stat -c %s "$TMP/pub/current.bga")
	echo "$kind $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $(awk -v a="$t1" -v b="$l" 'BEGIN { printf "%.3f", b - a }') $f $b ${dbytes:-0} $fbytes" >>"$file"
	PUB_OUT=$pub
}
# ---- setup --------------------------------------------------------------

for f in "$BG" "$GEN"; do
	[ -x "$f" ] || die "$f is missing: run make bench"
done
[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, XDP, bpffs)"
exec {LOCK_FD}>"$LOCK"
flock -w 600 "$LOCK_FD" || die "another bloomgate e2e run, demo or bench holds $LOCK"
if [ -e "$MARKER" ]; then
	read -r TMP NMAX <"$MARKER"
	say "cleaning up after an earlier run that did not finish"
	cleanup
	TMP= NMAX=0
fi
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
TMP=$(mktemp -d /tmp/bloomgate-bench-fleet.XXXXXX)
chmod 0711 "$TMP"
echo "$TMP 0" >"$MARKER"
URL=$(tests/pg.sh start "$TMP/pg") || die "cannot start PostgreSQL"
maxg=$GATEWAYS
((MANY > maxg)) && maxg=$MANY
echo "$TMP $maxg" >"$MARKER"
gw_up 0 || die "cannot make the bench's own attachment"

out "### Fleet: one build, many gateways"
out
out "Produced by \`bench/fleet.sh\` (\`bench/run.sh --only fleet\` runs it alone), on the machine above. Lists: N distinct random IPv4 /32 addresses from \`build/genaddrs\` (a fixed seed). PostgreSQL 15 on a Unix socket of the script's own cluster; every gateway an agent in its own network namespace on this one machine, so the gateways share its $(nproc) cores with each other, the publisher and the database. Each figure is the median over the rounds (range in brackets)."
out

# ---- 1. the artifact ----------------------------------------------------------

: >"$TMP/art"
for n in $SIZES; do
	say "$(count "$n"): build, load FILE against load LIST"
	"$GEN" -s "$SEED" "$n" >"$TMP/l$n.txt"
	t0=$EPOCHREALTIME
	"$BG" build "$TMP/l$n.txt" -o "$TMP/a$n.bga" >"$TMP/build.out" 2>&1 || die "build: $(tail -n 2 "$TMP/build.out")"
	tb=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
	"$BG" inspect "$TMP/a$n.bga" >"$TMP/insp"
	fbytes=$(awk '$1 == "section:" && $2 == "filter" { print $3 }' "$TMP/insp")
	ibytes=$(awk '$1 == "section:" && $2 == "index" { print $3 }' "$TMP/insp")
	abytes=$(stat -c %s "$TMP/a$n.bga")
	for ((r = 1; r <= ROUNDS; r++)); do
		t0=$EPOCHREALTIME
		bgi 0 load "$TMP/l$n.txt" >/dev/null 2>&1 || die "load LIST failed"
		tl=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", (b - a) * 1e3 }')
		t0=$EPOCHREALTIME
		bgi 0 load "$TMP/a$n.bga" >/dev/null 2>&1 || die "load FILE failed"
		ta=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", (b - a) * 1e3 }')
		echo "$n $tb $abytes $fbytes $ibytes $ta $tl" >>"$TMP/art"
	done
done
out "#### The artifact, and loading it"
out
out "| keys | build (s) | artifact (MiB) | bytes/key: filter | bytes/key: index | \`load FILE\` (ms) | \`load LIST\` (ms) | LIST / FILE |"
out "|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $SIZES; do
	ta=$(med "$TMP/art" "$n" 6) tl=$(med "$TMP/art" "$n" 7)
	out "| $(count "$n") | $(fmt %.2f "$(med "$TMP/art" "$n" 2)") | $(mib "$(med "$TMP/art" "$n" 3)") | $(fmt %.2f "$(awk -v b="$(med "$TMP/art" "$n" 4)" -v n="$n" 'BEGIN { print b / n }')") | $(fmt %.2f "$(awk -v b="$(med "$TMP/art" "$n" 5)" -v n="$n" 'BEGIN { print b / n }')") | $(fmt %.1f "$ta") ($(range "$TMP/art" "$n" 6 %.0f)) | $(fmt %.1f "$tl") ($(range "$TMP/art" "$n" 7 %.0f)) | $(fmt %.1fx "$(awk -v a="$ta" -v b="$tl" 'BEGIN { print b / a }')") |"
done
out

# ---- 2. the fleet ---------------------------------------------------------------

fleet_run() { # G SIZE FILE: G gateways (agents running), the size's rounds
	local g=$1 n=$2 file=$3 r k
	cp "$TMP/l$n.txt" "$TMP/cur.txt"
	"$BG" publish --db "$URL" --state "$TMP/pub" --full "$TMP/cur.txt" >/dev/null 2>&1 ||
		{ say "first publish failed"; return 1; }
	# every gateway on it before the rounds begin (their first fetch is
	# the whole filter)
	local deadline=$((SECONDS + 600)) i
	for ((i = 1; i <= g; i++)); do
		while [ "$(timings "$TMP/gw$i.log")" -lt 1 ]; do
			((SECONDS >= deadline)) && { say "gateway $i has no filter: $(tail -n 2 "$TMP/gw$i.log")"; return 1; }
			sleep 0.1
		done
	done
	k=$((n / 2000))
	((k < 1)) && k=1
	for ((r = 1; r <= ROUNDS; r++)); do
		# 0.1%: the first k addresses out, k new ones in
		"$GEN" -s $((SEED + r)) "$k" >"$TMP/new.txt"
		{ tail -n +$((k + 1)) "$TMP/cur.txt"; cat "$TMP/new.txt"; } >"$TMP/next.txt"
		mv "$TMP/next.txt" "$TMP/cur.txt"
		publish_round "$g" "$TMP/cur.txt" "$file" || return 1
	done
}

: >"$TMP/fleet"
for n in $SIZES; do
	say "$(count "$n"): $GATEWAYS gateways"
	for ((i = 1; i <= GATEWAYS; i++)); do
		gw_up "$i" || die "cannot make gateway $i"
		agent_up "$i"
	done
	fleet_run "$GATEWAYS" "$n" "$TMP/f$n" || die "the fleet at $(count "$n") failed"
	for ((i = 1; i <= GATEWAYS; i++)); do
		kill "${APID[$i]}" 2>/dev/null
		wait "${APID[$i]}" 2>/dev/null
		gw_down "$i"
	done
	psql -q "$URL" -c "DELETE FROM bloomgate_generations; DELETE FROM bloomgate_gateways" >/dev/null
	rm -rf "$TMP/pub" "$TMP"/gw*
done
out "#### Publish to every gateway: $GATEWAYS gateways, a 0.1% change a round"
out
out "| keys | kind | delta (KiB) | delta / full | bytes per changed key | publish: build + store (s) | stored to $GATEWAYS/$GATEWAYS swapped (s) | publish to $GATEWAYS/$GATEWAYS (s) | a gateway's fetch (ms) | its verify + copy (ms) |"
out "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $SIZES; do
	f=$TMP/f$n
	[ -s "$f" ] || continue
	k=$((n / 2000))
	kind=$(awk '{ print $1 }' "$f" | sort | uniq -c | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }')
	d=$(awk '{ print $6 }' "$f" | median) full=$(awk '{ print $7 }' "$f" | median)
	p=$(awk '{ print $2 }' "$f" | median) s=$(awk '{ print $3 }' "$f" | median)
	tot=$(awk '{ print $2 + $3 }' "$f" | median)
	out "| $(count "$n") | $kind | $(fmt %.1f "$(awk -v d="$d" 'BEGIN { print d / 1024 }')") | $(fmt %.2f%% "$(awk -v d="$d" -v f="$full" 'BEGIN { print 100 * d / f }')") | $(fmt %.0f "$(awk -v d="$d" -v k="$k" 'BEGIN { print d / (2 * k) }')") | $(fmt %.2f "$p") ($(awk '{ print $2 }' "$f" | sort -g | sed -n '1p;$p' | paste -sd- -)) | $(fmt %.2f "$s") ($(awk '{ print $3 }' "$f" | sort -g | sed -n '1p;$p' | paste -sd- -)) | $(fmt %.2f "$tot") | $(fmt %.0f "$(awk '{ print $4 }' "$f" | median)") | $(fmt %.0f "$(awk '{ print $5 }' "$f" | median)") |"
done
out
out "A gateway's apply against a rebuild from the lists: \`load FILE\` against \`load LIST\` in the first table; in the fleet, each gateway fetches the delta, applies it to a copy of its artifact (its checksum checked), then verifies the result and copies it into a new map (the last column) and swaps."
out

# ---- 3. many gateways ------------------------------------------------------------

if ((MANY > 0)); then
	n=$(echo "$SIZES" | awk '{ print $1 }')
	say "$(count "$n"): $MANY gateways"
	held=0
	for ((i = 1; i <= MANY; i++)); do
		gw_up "$i" || break
		agent_up "$i"
		held=$i
	done
	if ((held == MANY)) && fleet_run "$MANY" "$n" "$TMP/m$n"; then
		f=$TMP/m$n
		out "#### $MANY gateways, $(count "$n") keys"
		out
		out "| gateways | publish: build + store (s) | stored to all swapped (s) | publish to all (s) | a gateway's fetch (ms) | its verify + copy (ms) |"
		out "|---:|---:|---:|---:|---:|---:|"
		out "| $MANY | $(fmt %.2f "$(awk '{ print $2 }' "$f" | median)") | $(fmt %.2f "$(awk '{ print $3 }' "$f" | median)") | $(fmt %.2f "$(awk '{ print $2 + $3 }' "$f" | median)") | $(fmt %.0f "$(awk '{ print $4 }' "$f" | median)") | $(fmt %.0f "$(awk '{ print $5 }' "$f" | median)") |"
	else
		out "#### $MANY gateways: the machine held $held (namespaces with an attachment and an agent each) before a failure"
	fi
	out
	for ((i = 1; i <= held; i++)); do
		kill "${APID[$i]}" 2>/dev/null
	done
	for ((i = 1; i <= held; i++)); do
		wait "${APID[$i]}" 2>/dev/null
		gw_down "$i"
	done
fi

# ---- 4. load FILE at the big size --------------------------------------------------

if ((BIG > 0)); then
	say "$(count "$BIG"): build and load FILE"
	"$GEN" -s "$SEED" "$BIG" >"$TMP/big.txt"
	t0=$EPOCHREALTIME
	/usr/bin/time -f %M -o "$TMP/rss" "$BG" build "$TMP/big.txt" -o "$TMP/big.bga" >"$TMP/build.out" 2>&1 ||
		die "build at $(count "$BIG"): $(tail -n 2 "$TMP/build.out")"
	tb=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
	rm -f "$TMP/big.txt"
	: >"$TMP/bigl"
	for ((r = 1; r <= ROUNDS + 2; r++)); do
		t0=$EPOCHREALTIME
		bgi 0 load "$TMP/big.bga" >"$TMP/load.out" 2>&1 || die "load FILE at $(count "$BIG"): $(cat "$TMP/load.out")"
		echo "x $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')" >>"$TMP/bigl"
	done
	out "#### \`load FILE\` at $(count "$BIG") keys"
	out
	out "| keys | build (s) | build peak RSS (MiB) | artifact (MiB) | \`load FILE\` (s) |"
	out "|---:|---:|---:|---:|---:|"
	out "| $(count "$BIG") | $tb | $(fmt %.0f "$(awk -v k="$(cat "$TMP/rss")" 'BEGIN { print k / 1024 }')") | $(mib "$(stat -c %s "$TMP/big.bga")") | $(fmt %.2f "$(med "$TMP/bigl" x 2)") ($(range "$TMP/bigl" x 2 %.2f), $((ROUNDS + 2)) rounds) |"
	out
fi
