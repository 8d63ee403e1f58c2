#!/bin/bash
# End-to-end: filter artifacts on the namespace gateway, with real UDP
# traffic. `build` writes one, `load FILE` swaps it in without parsing,
# and its filter is the one `load` builds from the same lists and seed,
# byte for byte (read back from the live map); a damaged, cut, delta or
# misfitted artifact is refused with the running filter untouched; check
# names the list from the artifact's index; the agent takes an artifact as
# its source (a watched file, and a URL with conditional GET), swaps in
# each new one, refuses a damaged one and keeps the last good one across a
# restart. Every field of an artifact forged one at a time, its digests
# made right (build/tests/artforge, tests/artforge.h), is refused by load
# on a growing capacity with one line naming it, the loader's peak memory
# small, the live filter untouched; the checksum inspect, build and load
# print is the file's SHA-256 (sha256sum's).
set -u
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

HTTPD=$E2E_ROOT/build/tests/httpd
ARTFORGE=$E2E_ROOT/build/tests/artforge
ATTACH_MODE=skb
X=198.51.100.10 Y=198.51.100.20 Z=203.0.113.9 W=198.51.100.30
PPS=2000

# Bytes of the artifact's filter section, one hex byte a line.
art_filter_hex() { # FILE
	local off len
	read -r off len < <("$BG_BIN" inspect "$1" |
		awk '$1 == "section:" && $2 == "filter" { print $6, $3 }')
	dd if="$1" bs=4096 skip=$((off / 4096)) count=$(((len + 4095) / 4096)) status=none |
		head -c "$len" | od -An -v -tx1 | tr -s ' ' '\n' | sed '/^$/d'
}
# Bytes of the live filter map, one hex byte a line.
live_filter_hex() {
	bpftool -j map dump id "$(current_filter_id)" | jq -r '.[].value[]' | sed 's/^0x//'
}
filter_id() { current_filter_id; }
filter_off() { "$BG_BIN" inspect "$1" | awk '$1 == "section:" && $2 == "filter" { print $6 + int($3 / 2) }'; }

for f in "$HTTPD" "$ARTFORGE" "$UDPSEND" "$UDPSINK"; do
	[ -x "$f" ] || { echo "not ok setup"; echo "#   $f is missing: run make test"; exit 1; }
done
require_cmds od dd cmp sha256sum /usr/bin/time
e2e_init
L=$E2E_TMP/lists
mkdir -p "$L"
{
	echo "$X"
	echo 198.51.100.64/27
	for i in $(seq 1 3000); do echo "10.$((i / 250)).$((i % 250)).7"; done
} >"$L/block.txt"
printf '%s\n' ads.example.com '*.cdn.example.org' >"$L/names.txt"
printf '%s\n' 198.51.100.70 >"$L/allow.txt"
# a map of any size: load's filter is the artifact's byte for byte (a
# growing capacity, the default, fits a list's plan to its map instead:
# the agent's sections below run on one)
attach "$IF_GWC" --any-size || die "attach: $BG_ERR"

E2E_NAME=build_and_load
t_begin
"$BG_BIN" build "$L/block.txt" "$L/names.txt" --allow "$L/allow.txt" --seed 42 \
	-o "$E2E_TMP/a.bga" >"$E2E_TMP/build.out" 2>&1 || t_fail "build: $(cat "$E2E_TMP/build.out")"
grep -q "^artifact: .*a.bga, .* seed 0x000000000000002a" "$E2E_TMP/build.out" ||
	t_fail "build's report: $(tail -n 2 "$E2E_TMP/build.out")"
bg_capture load "$E2E_TMP/a.bga"
t_expect_eq "load FILE: exit" 0 "$BG_RC"
grep -q "nothing parsed or built" <<<"$BG_OUT" || t_fail "load FILE's report: $BG_OUT"
# the checksum build, inspect and load print: the file's, as sha256sum's
sum=$(sha256sum "$E2E_TMP/a.bga" | cut -d' ' -f1)
grep -q "^artifact: .*a.bga, .* sha256 $sum, seed" "$E2E_TMP/build.out" ||
	t_fail "build's sha256 is not sha256sum's $sum: $(tail -n 1 "$E2E_TMP/build.out")"
grep -q "^artifact: .*a.bga (sha256 $sum" <<<"$BG_OUT" || t_fail "load's sha256 is not sha256sum's $sum: $BG_OUT"
"$BG_BIN" inspect "$E2E_TMP/a.bga" | grep -q "^checksum:   sha256 $sum\$" ||
	t_fail "inspect's checksum is not sha256sum's $sum: $("$BG_BIN" inspect "$E2E_TMP/a.bga" | grep checksum)"
EXPECT_COUNT=10
expect_traffic a1 "$X 198.51.100.65" "$Y 198.51.100.70 $Z"
out=$(bg check "$X" 198.51.100.70 img.cdn.example.org "$Y")
grep -q "^$X: match (confirmed; listed by $X in block.txt" <<<"$out" || t_fail "check $X: $out"
grep -q "^198.51.100.70: no match (allowlisted by 198.51.100.70 in allow.txt .*; listed by 198.51.100.64/27 in block.txt" <<<"$out" ||
	t_fail "check of an allowed address: $out"
grep -q "^img.cdn.example.org: match (confirmed; listed by 'cdn.example.org' in names.txt .* as a subdomain of cdn.example.org" <<<"$out" ||
	t_fail "check of a name: $out"
grep -q "^$Y: no match" <<<"$out" || t_fail "check $Y: $out"
t_end "$E2E_NAME"

E2E_NAME=artifact_is_loads_filter
t_begin
bg_capture load --seed 42 "$L/block.txt" "$L/names.txt" --allow "$L/allow.txt"
t_expect_eq "load --seed 42 of the lists: exit" 0 "$BG_RC"
art_filter_hex "$E2E_TMP/a.bga" >"$E2E_TMP/art.hex"
live_filter_hex >"$E2E_TMP/live.hex"
[ -s "$E2E_TMP/art.hex" ] || t_fail "no filter bytes read from the artifact"
cmp -s "$E2E_TMP/art.hex" "$E2E_TMP/live.hex" ||
	t_fail "the live filter load built differs from the artifact's ($(wc -l <"$E2E_TMP/live.hex") and $(wc -l <"$E2E_TMP/art.hex") bytes)"
# another seed: another filter (the comparison can tell)
bg_capture load --seed 43 "$L/block.txt" "$L/names.txt" --allow "$L/allow.txt"
live_filter_hex >"$E2E_TMP/live43.hex"
cmp -s "$E2E_TMP/art.hex" "$E2E_TMP/live43.hex" && t_fail "seed 43 built the same bytes as seed 42"
t_end "$E2E_NAME"

E2E_NAME=bad_artifacts_refused
t_begin
bg_capture load "$E2E_TMP/a.bga"
before=$(filter_id)
cp "$E2E_TMP/a.bga" "$E2E_TMP/bad.bga"
flip_byte "$E2E_TMP/bad.bga" "$(filter_off "$E2E_TMP/bad.bga")"
bg_capture load "$E2E_TMP/bad.bga"
t_expect_eq "load of a damaged artifact: exit" 4 "$BG_RC"
grep -q "filter section is damaged.*the running filter is unchanged" <<<"$BG_ERR" || t_fail "damaged: '$BG_ERR'"
head -c 10000 "$E2E_TMP/a.bga" >"$E2E_TMP/cut.bga"
bg_capture load --artifact "$E2E_TMP/cut.bga"
t_expect_eq "load of a cut artifact: exit" 4 "$BG_RC"
grep -q "truncated" <<<"$BG_ERR" || t_fail "cut: '$BG_ERR'"
bg_capture load --artifact "$L/block.txt"
t_expect_eq "load --artifact of a list: exit" 4 "$BG_RC"
grep -q "not a bloomgate artifact" <<<"$BG_ERR" || t_fail "a list as an artifact: '$BG_ERR'"
bg_capture load --fpr 0.001 "$E2E_TMP/a.bga"
t_expect_eq "load --fpr of an artifact: exit" 2 "$BG_RC"
t_expect_eq "the live filter after the refusals" "$before" "$(filter_id)"
expect_traffic a2 "$X" "$Y $Z"
bg_capture inspect --verify "$E2E_TMP/bad.bga"
t_expect_eq "inspect --verify of the damaged one: exit" 4 "$BG_RC"
bg_capture inspect --verify "$E2E_TMP/a.bga"
t_expect_eq "inspect --verify of the good one: exit" 0 "$BG_RC"
t_end "$E2E_NAME"

E2E_NAME=capacity_must_fit
t_begin
bg detach "$IF_GWC" >/dev/null 2>&1
attach "$IF_GWC" --capacity 20000 || t_fail "attach --capacity: $BG_ERR"
bg_capture load "$E2E_TMP/a.bga"
t_expect_eq "load of an artifact of any size into a fixed capacity: exit" 4 "$BG_RC"
grep -q "fixed capacity" <<<"$BG_ERR" || t_fail "capacity: '$BG_ERR'"
"$BG_BIN" build "$L/block.txt" --capacity 20000 -o "$E2E_TMP/cap.bga" >/dev/null 2>&1 ||
	t_fail "build --capacity"
bg_capture load "$E2E_TMP/cap.bga"
t_expect_eq "load of an artifact built for that capacity: exit" 0 "$BG_RC"
expect_traffic a3 "$X" "$Y"
bg detach "$IF_GWC" >/dev/null 2>&1
attach "$IF_GWC" || t_fail "attach: $BG_ERR"
t_end "$E2E_NAME"

E2E_NAME=forged_fields_refused
t_begin
# a growing capacity (the default, attached above): the shape a forged
# capacity would have taken. /32s and names only, what artforge forges.
{
	echo "$X"
	for i in $(seq 1 2000); do echo "10.8.$((i / 250)).$((i % 250))"; done
} >"$L/plain4.txt"
"$BG_BIN" build "$L/plain4.txt" "$L/names.txt" --seed 42 -o "$E2E_TMP/f.bga" >/dev/null 2>&1 ||
	t_fail "build of the artifact to forge"
bg_capture load "$E2E_TMP/f.bga"
t_expect_eq "load of the artifact to forge: exit" 0 "$BG_RC"
live=$(filter_id)
[ "$(bg_check "$X")" = match ] || t_fail "$X is not matched before the forgeries"
unl=$(pick_unmatched 1 "$Y" "$Z" 198.51.100.99)
[ -n "$unl" ] || t_fail "no unmatched address to check"
cases=0 peak=0
while IFS=$'\t' read -r name want; do
	cases=$((cases + 1))
	"$ARTFORGE" "$E2E_TMP/f.bga" "$E2E_TMP/forged.bga" "$name" ||
		{ t_fail "artforge $name"; continue; }
	in_ns "$NS_GW" /usr/bin/time -f %M -o "$E2E_TMP/rss" "$BG_BIN" load --artifact \
		"$E2E_TMP/forged.bga" >/dev/null 2>"$E2E_TMP/forged.err"
	rc=$?
	err=$(cat "$E2E_TMP/forged.err")
	rss=$(tail -n 1 "$E2E_TMP/rss")
	((rss > peak)) && peak=$rss
	[ "$rc" = 4 ] || t_fail "$name: load exited $rc: $err"
	[ "$(wc -l <"$E2E_TMP/forged.err")" = 1 ] || t_fail "$name: not one line: $err"
	grep -qF -- "$want" <<<"$err" || t_fail "$name: the refusal does not name '$want': $err"
	grep -q "the running filter is unchanged\$" <<<"$err" || t_fail "$name: $err"
	# a forged capacity once made load take 1.9 GB (a 1.8 GiB map)
	((rss < 65536)) || t_fail "$name: the loader's peak memory was $rss KiB"
	[ "$(filter_id)" = "$live" ] || t_fail "$name: the live filter is $(filter_id), not $live"
	[ "$(bg_check "$X")" = match ] || t_fail "$name: $X is no longer matched"
	[ "$(bg_check "$unl")" = "no match" ] || t_fail "$name: $unl is matched now"
done < <("$ARTFORGE" --list)
((cases >= 90)) || t_fail "only $cases forged cases"
info "$cases forged artifacts refused; the loader's peak memory at most $peak KiB"
expect_traffic a4 "$X" "$unl"
t_end "$E2E_NAME"

# ---- the agent, fed an artifact --------------------------------------------------

agent_start() { # CONFIG
	spawn_in "$NS_GW" "$BG_BIN" agent --config "$1" 2>>"$E2E_TMP/agent.log"
	AGENT_PID=$E2E_LAST_PID
}
agent_stop() {
	kill -TERM "$AGENT_PID" 2>/dev/null
	wait_pid "$AGENT_PID" 10
}
log_count() { grep -c -- "$1" "$E2E_TMP/agent.log"; }
log_more() { [ "$(log_count "$1")" -gt "$2" ]; } # TEXT N: more than N lines
src_state() { bg status 2>/dev/null | sed -n "s/^  list $1 ([^)]*): \([a-z]*\),.*/\1/p"; }
src_state_is() { [ "$(src_state "$1")" = "$2" ]; }
live_is_not() { [ "$(filter_id)" != "$1" ]; }

E2E_NAME=agent_file_artifact
t_begin
mkdir -p "$E2E_TMP/state" "$E2E_TMP/pub"
cp "$E2E_TMP/a.bga" "$E2E_TMP/pub/f.bga"
cat >"$E2E_TMP/file.yaml" <<EOF
state_dir: $E2E_TMP/state
debounce: 100ms
artifact:
  path: $E2E_TMP/pub/f.bga
EOF
bg_capture agent --check --config "$E2E_TMP/file.yaml"
t_expect_eq "agent --check of an artifact source: exit" 0 "$BG_RC"
grep -q "^list artifact (.*): ok, 3004 entries" <<<"$BG_OUT" || t_fail "agent --check: $BG_OUT"
: >"$E2E_TMP/agent.log"
id0=$(filter_id)
agent_start "$E2E_TMP/file.yaml"
wait_until 20 log_more "filter 1 live: artifact" 0 || t_fail "no artifact swapped in: $(tail -n 3 "$E2E_TMP/agent.log")"
id1=$(filter_id)
[ "$id1" != "$id0" ] || t_fail "the live filter is still $id0"
# the agent names it by its file's SHA-256, as sha256sum does
sum=$(sha256sum "$E2E_TMP/pub/f.bga" | cut -d' ' -f1)
bg status 2>/dev/null | grep -q "^agent: the live filter is an artifact's: generation 0, sha256 $sum\$" ||
	t_fail "status does not name the artifact by sha256sum's $sum: $(bg status 2>&1 | grep artifact)"
expect_traffic f1 "$X" "$Y"
# a new artifact, renamed over the watched file: swapped in
printf '%s\n' "$Y" >>"$L/block.txt"
"$BG_BIN" build "$L/block.txt" "$L/names.txt" --allow "$L/allow.txt" -o "$E2E_TMP/pub/f.new" \
	>/dev/null 2>&1 && mv "$E2E_TMP/pub/f.new" "$E2E_TMP/pub/f.bga"
wait_until 20 log_more "artifact generation" 1 || t_fail "the new artifact was not swapped in"
expect_traffic f2 "$X $Y" "$Z"
# a damaged one: refused, the last good one stays live
id2=$(filter_id)
cp "$E2E_TMP/pub/f.bga" "$E2E_TMP/pub/f.new"
flip_byte "$E2E_TMP/pub/f.new" "$(filter_off "$E2E_TMP/pub/f.new")"
mv "$E2E_TMP/pub/f.new" "$E2E_TMP/pub/f.bga"
wait_until 20 log_more "new copy refused: the filter section is damaged" 0 ||
	t_fail "the damaged artifact was not refused: $(tail -n 3 "$E2E_TMP/agent.log")"
t_expect_eq "the live filter after the damaged artifact" "$id2" "$(filter_id)"
wait_until 5 src_state_is artifact failing || t_fail "the source is $(src_state artifact), not failing"
expect_traffic f3 "$X $Y" "$Z"
# a restart, the damaged file still there: refused again, the live filter
# kept, not swapped
agent_stop || t_fail "the agent did not stop"
agent_start "$E2E_TMP/file.yaml"
wait_until 20 log_more "new copy refused" 1 || t_fail "the restarted agent did not refuse the damaged file"
t_expect_eq "the live filter after the restart" "$id2" "$(filter_id)"
expect_traffic f4 "$X $Y" "$Z"
# and with the good one back: adopted (its copy is the live filter's)
agent_stop
flip_byte "$E2E_TMP/pub/f.bga" "$(filter_off "$E2E_TMP/pub/f.bga")"
agent_start "$E2E_TMP/file.yaml"
wait_until 20 log_more "adopted" 0 || t_fail "the restarted agent did not adopt the live filter: $(tail -n 6 "$E2E_TMP/agent.log")"
t_expect_eq "the live filter after the second restart" "$id2" "$(filter_id)"
out=$(bg check "$Y")
grep -q "^$Y: match (confirmed; listed by $Y in block.txt" <<<"$out" || t_fail "check on the agent's artifact: $out"
agent_stop
t_end "$E2E_NAME"

E2E_NAME=agent_url_artifact
t_begin
WWW=$E2E_TMP/www
mkdir -p "$WWW"
cp "$E2E_TMP/a.bga" "$WWW/f.bga"
: >"$E2E_TMP/http.log"
spawn_in "$NS_GW" "$HTTPD" -l "$E2E_TMP/http.log" "$WWW" >"$E2E_TMP/http.port"
wait_until 5 test -s "$E2E_TMP/http.port" || t_fail "the test HTTP server did not start"
HTTP_PORT=$(head -1 "$E2E_TMP/http.port")
rm -rf "$E2E_TMP/state2"
cat >"$E2E_TMP/url.yaml" <<EOF
state_dir: $E2E_TMP/state2
artifact:
  url: http://127.0.0.1:$HTTP_PORT/f.bga
  refresh: 1s
EOF
: >"$E2E_TMP/agent.log"
agent_start "$E2E_TMP/url.yaml"
wait_until 20 log_more "artifact generation" 0 || t_fail "no artifact from the URL: $(tail -n 3 "$E2E_TMP/agent.log")"
# unchanged: conditional GETs answered 304, nothing downloaded again
wait_until 10 grep -q '^GET /f.bga "[0-9a-f]*" 304' "$E2E_TMP/http.log" ||
	t_fail "no conditional GET answered 304: $(tail -n 3 "$E2E_TMP/http.log")"
expect_traffic u1 "$X" "$Y"
"$BG_BIN" build "$L/block.txt" -o "$WWW/f.tmp" >/dev/null 2>&1 || t_fail "build"
flip_byte "$WWW/f.tmp" "$(filter_off "$WWW/f.tmp")"
mv "$WWW/f.tmp" "$WWW/f.bga"
wait_until 20 log_more "new copy refused" 0 || t_fail "a damaged artifact from the URL was not refused"
expect_traffic u2 "$X" "$Y"
agent_stop
t_end "$E2E_NAME"

echo "# $E2E_PASSED passed, $E2E_FAILED failed"
[ "$E2E_FAILED" -eq 0 ]
