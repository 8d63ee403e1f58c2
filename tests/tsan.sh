#!/bin/bash
# make tsan: the agent's end-to-end suites run with a ThreadSanitizer
# bloomgate (build/tsan/bloomgate, as tests/e2e/lib.sh's BG_BIN). A data
# race stops the process that saw it at once (halt_on_error=1, exit code
# 66) and writes its report under a scratch directory (log_path): the run
# fails when a suite fails or when any report was written, and prints the
# reports. Every time bound of the suites is scaled (E2E_TIME_SCALE) and
# the big list made smaller: the sanitizer slows the agent down several
# times. Prints one closing line, "N passed, N failed".
#   bash tests/tsan.sh [SUITE...]   (default: the agent's suites)
set -u
cd "$(dirname "$0")/.." || exit 1

BIN=$PWD/build/tsan/bloomgate
[ -x "$BIN" ] || { echo "no $BIN: make build/tsan/bloomgate (make tsan builds it)"; exit 1; }
suites=("$@")
((${#suites[@]})) || suites=(tests/e2e/test_agent.sh tests/e2e/test_agent_busy.sh tests/e2e/test_agent_ops.sh tests/e2e/test_caps.sh tests/e2e/test_crowdsec.sh tests/e2e/test_fleet.sh)
dir=$(mktemp -d /tmp/bloomgate-tsan.XXXXXX)
log=$(mktemp)
trap 'rm -rf "$dir" "$log"' EXIT
export BG_BIN=$BIN
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 log_path=$dir/race second_deadlock_stack=1"
export E2E_TIME_SCALE=${E2E_TIME_SCALE:-4}
export BUSY_BIG=${BUSY_BIG:-300000}

passed=0 failed=0
for t in "${suites[@]}"; do
	echo "=== $t (ThreadSanitizer)"
	bash "$t" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	p=$(grep -c '^ok ' "$log")
	f=$(grep -c '^not ok ' "$log")
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	passed=$((passed + p))
	failed=$((failed + f))
done
reports=("$dir"/race*)
if [ -e "${reports[0]}" ]; then
	echo "not ok tsan_no_race"
	for r in "${reports[@]}"; do
		echo "# --- $r"
		sed 's/^/#   /' "$r"
	done
	failed=$((failed + 1))
else
	echo "ok tsan_no_race"
	passed=$((passed + 1))
fi
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
