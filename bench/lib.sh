# shellcheck shell=bash
# What the bench scripts that attach XDP (bench/agent.sh, bench/e2e.sh)
# share: sourced after they define say, die, cleanup, LOCK, MARKER, NS and
# PIN.

# Root, the e2e lock (never two runs on the machine's namespaces and pins
# at once), the leftovers of a run that was killed (its marker names its
# temporary directory), the exit traps, and a new temporary directory in
# $TMP named after $1.
bench_begin() { # TMP-PREFIX
	[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, XDP, bpffs)"
	mkdir -p "$(dirname "$LOCK")"
	exec {LOCK_FD}>"$LOCK"
	flock -w 600 "$LOCK_FD" || die "another bloomgate e2e run, demo or bench holds $LOCK"
	if [ -e "$MARKER" ]; then
		read -r TMP <"$MARKER"
		say "cleaning up after an earlier run that did not finish"
		cleanup
		TMP=
	fi
	[ -e "/run/netns/$NS" ] && die "network namespace $NS exists already (not ours): remove it first"
	[ -e "$PIN" ] && die "$PIN exists: another bloomgate uses it"
	trap cleanup EXIT
	trap 'cleanup; exit 130' INT
	trap 'cleanup; exit 143' TERM
	TMP=$(mktemp -d "/tmp/$1.XXXXXX")
	echo "$TMP" >"$MARKER"
}
