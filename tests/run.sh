#!/bin/bash
# Runs every test suite: unit and BPF_PROG_TEST_RUN binaries (cmocka), then
# the end-to-end scripts in network namespaces. Prints one closing line,
# "N passed, N failed", counting test cases across all suites.
set -u
cd "$(dirname "$0")/.."

passed=0
failed=0
failed_suites=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count() { # suite name, exit code; counts cases from $log
	local p f
	p=$(( $(grep -ao '\[  PASSED  \] [0-9]*' "$log" | awk '{s+=$NF} END{print s+0}') +
		$(grep -c '^ok ' "$log") ))
	f=$(( $(grep -ao '\[  FAILED  \] [0-9]*' "$log" | awk '{s+=$NF} END{print s+0}') +
		$(grep -c '^not ok ' "$log") ))
	if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1 # crashed or failed outside a counted case
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$f" -ne 0 ] && failed_suites+=("$1")
}

for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	echo "=== $t"
	"$t" 2>&1 | tee "$log"
	count "$t" "${PIPESTATUS[0]}"
done

# libFuzzer targets, FUZZ_SECONDS each (tests/fuzz/run.sh)
echo "=== tests/fuzz/run.sh"
bash tests/fuzz/run.sh 2>&1 | tee "$log"
count tests/fuzz/run.sh "${PIPESTATUS[0]}"

for t in tests/e2e/test_*.sh; do
	[ -f "$t" ] || continue
	echo "=== $t"
	bash "$t" 2>&1 | tee "$log"
	count "$t" "${PIPESTATUS[0]}"
done

# the Debian package (make test builds it: BG_DEB), installed and purged
# in a minimal Debian 12
if [ -n "${BG_DEB:-}" ]; then
	echo "=== tests/package/test_package.sh"
	bash tests/package/test_package.sh "$BG_DEB" 2>&1 | tee "$log"
	count tests/package/test_package.sh "${PIPESTATUS[0]}"
fi

echo
if ((${#failed_suites[@]})); then
	echo "failed suites: ${failed_suites[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
