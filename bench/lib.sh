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


# Waits (bounded) for a pid that may not be our child to be gone.
gone() { # PID SECONDS
	local i=0
	while [ -e "/proc/$1" ] && ((i++ < $2 * 50)); do sleep 0.02; done
	[ ! -e "/proc/$1" ]
}

# What bench/agent.sh and bench/scale.sh leave (their cleanup()): the
# processes of their network namespace, the attachment and its pins, the
# namespace, the records, the temporary directory named /tmp/PREFIX.*.
bench_cleanup_ns() { # PREFIX
	local pid idx id
	# Our namespace's processes (the agent, a server or a probe; a killed
	# run's too): those pids and no others.
	if [ -e "/run/netns/$NS" ]; then
		for pid in $(ip netns pids "$NS" 2>/dev/null); do
			kill "$pid" 2>/dev/null
		done
		for pid in $(ip netns pids "$NS" 2>/dev/null); do
			gone "$pid" 10 || kill -KILL "$pid" 2>/dev/null
		done
		idx=$(ip -n "$NS" -o link show dev "$IF_A" 2>/dev/null | cut -d: -f1)
		id=$(ip -n "$NS" link show dev "$IF_A" 2>/dev/null |
			sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p' | head -n1)
		[ -e "$PIN" ] && nsenter --net="/run/netns/$NS" "$BG" detach --all >/dev/null 2>&1
		if [ -n "$id" ] && ip -n "$NS" link show dev "$IF_A" 2>/dev/null | grep -q 'prog/xdp'; then
			# what bloomgate could not remove: the program, libxdp's pins
			ip -n "$NS" link set dev "$IF_A" xdpgeneric off 2>/dev/null
			[ -n "$idx" ] && rm -rf "/sys/fs/bpf/xdp/dispatch-$idx-$id"
		fi
		rmdir /sys/fs/bpf/xdp 2>/dev/null
		ip netns del "$NS" 2>/dev/null
	fi
	[ -d "$PIN" ] && rm -rf "$PIN"
	rm -f "/run/bloomgate/${PIN//\//_}".*
	case $TMP in "/tmp/$1".*) rm -rf "$TMP" ;; esac
	rm -f "$MARKER"
}

# The agent's timing lines (bench/agent.sh, bench/scale.sh): one per
# rebuild that published a filter, once its store followed.
timings() { grep -c ' timing: ' "$1" 2>/dev/null; }

# Waits (bounded) until LOG has more than COUNT timing lines; fails when
# the agent exits first.
wait_timing() { # LOG COUNT SECONDS
	local deadline=$((SECONDS + $3))
	while [ "$(timings "$1")" -le "$2" ]; do
		kill -0 "$AGENT" 2>/dev/null || { say "the agent exited:"; tail -5 "$1" >&2; return 1; }
		((SECONDS >= deadline)) && { say "no rebuild within $3 s:"; tail -5 "$1" >&2; return 1; }
		sleep 0.05
	done
}

# The last timing line as "seen fetch parse plan build swap live store".
last_timing() { # LOG
	grep ' timing: ' "$1" | tail -n1 | sed -n 's/.*timing: change seen at \([0-9.]*\), fetch \([0-9.]*\) ms, parse \([0-9.]*\) ms, plan \([0-9.]*\) ms, build \([0-9.]*\) ms, swap \([0-9.]*\) ms, live at \([0-9.]*\), store \([0-9.]*\) ms.*/\1 \2 \3 \4 \5 \6 \7 \8/p'
}

# nsenter execs the agent (no fork for a network namespace alone), so $!
# is the agent's own pid (not a subshell's, as with a function in the
# background): /proc/$AGENT/status is the agent's memory.
# The lock's fd is closed for it: an agent left behind by a killed run
# must not hold the lock that the next run needs to clean it up.
start_agent() { # CFG LOG
	nsenter --net="/run/netns/$NS" "$BG" agent --config "$1" 2>>"$2" {LOCK_FD}>&- &
	AGENT=$!
}

# ---- the tables' numbers (bench/scale.sh, bench/fleet.sh) -----------------

count() { # N as 1M, 10M, 100k
	awk -v n="$1" 'BEGIN { if (n % 1000000 == 0) printf "%dM", n / 1e6;
		else if (n % 1000 == 0) printf "%dk", n / 1e3; else printf "%d", n }'
}

# The median of the numbers on stdin, one a line ("-" for none).
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) { print "-"; exit }
		k = int((NR + 1) / 2)
		print NR % 2 ? v[k] : (v[k] + v[k + 1]) / 2 }'
}
# Field F of FILE's rows whose first field is KEY, one a line.
col() { # FILE KEY F
	awk -v k="$2" -v f="$3" '$1 == k { print $f }' "$1"
}
med() { col "$@" | median; } # FILE KEY F
# min-max of the same
range() { # FILE KEY F FORMAT
	col "$1" "$2" "$3" | sort -g | awk -v f="$4" 'NR == 1 { lo = $1 } { hi = $1 }
		END { if (NR) printf f "-" f, lo, hi; else printf "-" }'
}
fmt() { # FORMAT NUMBER: "-" stays
	if [ "$2" = - ]; then echo -; else awk -v f="$1" -v x="$2" 'BEGIN { printf f, x }'; fi
}
mib() { fmt %.1f "$(awk -v b="$1" 'BEGIN { print b / 1048576 }')"; }
