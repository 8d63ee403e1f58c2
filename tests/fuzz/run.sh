#!/bin/bash
# Runs every libFuzzer target (build/fuzz/fuzz_*, tests/fuzz/fuzz_*.c) for
# FUZZ_SECONDS each (default 15; `make fuzz`: 600) on its committed corpus
# (tests/fuzz/corpus/NAME, read only: new inputs go to a scratch directory).
# One "ok" / "not ok" line per target, as tests/run.sh counts them; a
# crashing input is kept and printed in hex, to be added to the corpus once
# fixed.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
SECS=${FUZZ_SECONDS:-15}
fail=0
for f in "$BUILD"/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	name=${f##*/fuzz_}
	seeds=tests/fuzz/corpus/$name
	work=$(mktemp -d /tmp/bloomgate-fuzz.XXXXXX)
	mkdir -p "$work/new" "$work/crash"
	"$f" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/crash/" \
		"$work/new" "$seeds" >"$work/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
		echo "ok fuzz_$name ($runs inputs in ${SECS} s)"
		rm -rf "$work"
	else
		echo "not ok fuzz_$name (exit $rc)"
		grep -E "ERROR|SUMMARY|#[0-9]+ " "$work/log" | head -12
		for c in "$work"/crash/*; do
			[ -f "$c" ] || continue
			echo "input $c:"
			od -An -tx1 "$c" | head -8
		done
		echo "log and inputs kept in $work"
		fail=1
	fi
done
exit $fail
