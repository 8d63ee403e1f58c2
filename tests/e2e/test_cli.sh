#!/bin/bash
# The command line, without namespaces or XDP: every command's synopsis
# agrees with the README's "Commands" section and is the same wherever it
# is printed, and usage errors exit with status 2 and one line naming the
# option. Nothing here gets past argument parsing (every call is refused
# or asks for help), so it neither needs root nor touches /sys/fs/bpf.
# Prints "ok NAME" / "not ok NAME" per case like the other e2e scripts.
set -u
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

README=$E2E_ROOT/README.md
NOIF=bg-no-such0 # an interface name that must not exist
[ -x "$BG_BIN" ] || die "$BG_BIN is missing: run make first"
ip link show dev "$NOIF" >/dev/null 2>&1 && die "an interface $NOIF exists"

# The lines of the code block in the README's "### Commands" section.
readme_synopses() {
	awk '/^### Commands$/ { s = 1; next }
		s && /^#/ { exit }
		s && /^```/ { c = !c; next }
		s && c' "$README"
}

# Runs bloomgate, keeping stdout, stderr and the status (no namespace: the
# parser decides before anything is opened).
run() {
	OUT=$("$BG_BIN" "$@" 2>"$TMP_ERR")
	RC=$?
	ERR=$(cat "$TMP_ERR")
}
TMP_ERR=$(mktemp)
trap 'rm -f "$TMP_ERR"' EXIT

# ---- synopses ------------------------------------------------------------------

E2E_NAME=help_lists_commands
t_begin
run help
t_expect_eq "help: exit status" 0 "$RC"
mapfile -t CMDS < <(sed -n 's/^  bloomgate \([a-z]*\).*/\1/p' <<<"$OUT")
((${#CMDS[@]} >= 7)) || t_fail "help lists ${#CMDS[@]} commands: '$OUT'"
t_end "$E2E_NAME"

mapfile -t README_SYN < <(readme_synopses)
E2E_NAME=readme_commands_section
t_begin
((${#README_SYN[@]})) || t_fail "no code block under '### Commands' in README.md"
# one line per command, each a command that exists, none twice
t_expect_eq "commands in the README" "${#CMDS[@]}" "${#README_SYN[@]}"
for l in "${README_SYN[@]}"; do
	c=$(awk '{ print $2 }' <<<"$l")
	printf '%s\n' "${CMDS[@]}" | grep -qFx "$c" || t_fail "README line for unknown command: '$l'"
	n=$(printf '%s\n' "${README_SYN[@]}" | awk -v c="$c" '$2 == c' | wc -l)
	[ "$n" -eq 1 ] || t_fail "README lists $c $n times"
done
t_end "$E2E_NAME"

for c in "${CMDS[@]}"; do
	E2E_NAME=synopsis_$c
	t_begin
	run help "$c"
	t_expect_eq "help $c: exit status" 0 "$RC"
	[ -z "$ERR" ] || t_fail "help $c wrote to stderr: '$ERR'"
	first=$(head -n1 <<<"$OUT")
	syn=${first#usage: }
	[ "$syn" != "$first" ] || t_fail "help $c: first line is not 'usage: ...': '$first'"
	readme=$(printf '%s\n' "${README_SYN[@]}" | awk -v c="$c" '$2 == c')
	t_expect_eq "README synopsis of $c" "$syn" "$readme"
	# one synopsis: the same from --help, -h and the list in `help`
	run "$c" --help
	t_expect_eq "$c --help: exit status" 0 "$RC"
	t_expect_eq "$c --help: first line" "$first" "$(head -n1 <<<"$OUT")"
	run "$c" -h
	t_expect_eq "$c -h: first line" "$first" "$(head -n1 <<<"$OUT")"
	run help
	t_expect_eq "the line of $c in help" "  $syn" "$(grep -E "^  bloomgate $c( |\$)" <<<"$OUT")"
	t_end "$E2E_NAME"
done

# ---- usage errors --------------------------------------------------------------

# ARGS... must exit 2 with nothing on stdout and exactly one line on
# stderr that contains WHAT.
usage_error() { # NAME WHAT ARGS...
	local name=$1 what=$2
	shift 2
	E2E_NAME=$name
	t_begin
	run "$@"
	t_expect_eq "bloomgate $*: exit status" 2 "$RC"
	[ -z "$OUT" ] || t_fail "bloomgate $*: stdout '$OUT'"
	t_expect_eq "bloomgate $*: lines on stderr" 1 "$(grep -c '' <<<"$ERR")"
	grep -qF -- "$what" <<<"$ERR" || t_fail "bloomgate $*: '$ERR' does not name $what"
	t_end "$E2E_NAME"
}

# lo exists in every namespace; the option after it is what fails.
usage_error unknown_enum_value "--mode: 'fast' is not one of native, skb" \
	attach lo --mode fast
usage_error unknown_enum_value_eq "--dns-action: 'deny' is not one of" \
	attach lo --dns-action=deny
usage_error out_of_range_double "--fpr: 2 is out of range 1e-09..0.5" \
	load --fpr 2 list.txt
usage_error out_of_range_port "--dns-port: 70000 is out of range 1..65535" \
	attach lo --dns-port 70000
usage_error not_a_number "--count: 'ten' is not a whole number" events --count ten
usage_error unknown_option "stats: unknown option '--bogus'" stats --bogus
usage_error missing_interface "attach: interface '$NOIF' does not exist" attach "$NOIF"
usage_error missing_value "--fpr: needs a value" load list.txt --fpr
usage_error too_many_ports "--dns-port: given more than 4 times" \
	attach lo --dns-port 1 --dns-port 2 --dns-port 3 --dns-port 4 --dns-port 5
usage_error format_after_last_list "--format, --subdomains and --no-subdomains" \
	load list.txt --format plain
usage_error help_unknown_command "help: unknown command 'nope'" help nope

# make install: the binary, the unit, the example config, the manual pages
# and the bash completion where the README says, and an operator's edited
# config never overwritten.
E2E_NAME=make_install
t_begin
dest=$(mktemp -d /tmp/bloomgate-install.XXXXXX)
if make -s -C "$E2E_ROOT" install DESTDIR="$dest" >"$dest.log" 2>&1; then
	[ -x "$dest/usr/local/sbin/bloomgate" ] || t_fail "no executable /usr/local/sbin/bloomgate"
	[ -f "$dest/etc/systemd/system/bloomgate-agent.service" ] || t_fail "no unit in /etc/systemd/system"
	for f in share/man/man8/bloomgate.8 share/man/man5/bloomgate.yaml.5 \
		share/bash-completion/completions/bloomgate; do
		[ -s "$dest/usr/local/$f" ] || t_fail "no /usr/local/$f"
	done
	cmp -s "$dest/etc/bloomgate/bloomgate.yaml" "$E2E_ROOT/etc/bloomgate.yaml" ||
		t_fail "the example config was not installed as /etc/bloomgate/bloomgate.yaml"
	echo "# edited" >>"$dest/etc/bloomgate/bloomgate.yaml"
	make -s -C "$E2E_ROOT" install DESTDIR="$dest" >>"$dest.log" 2>&1 || t_fail "a second make install failed"
	tail -1 "$dest/etc/bloomgate/bloomgate.yaml" | grep -qx "# edited" ||
		t_fail "a second make install overwrote the operator's config"
	# the unit names the binary and the README where PREFIX put them
	grep -qx 'ExecStart=/usr/local/sbin/bloomgate agent --config /etc/bloomgate/bloomgate.yaml' \
		"$dest/etc/systemd/system/bloomgate-agent.service" ||
		t_fail "the unit does not run /usr/local/sbin/bloomgate"
	make -s -C "$E2E_ROOT" install DESTDIR="$dest/usr-prefix" PREFIX=/usr >>"$dest.log" 2>&1 ||
		t_fail "make install PREFIX=/usr failed"
	u=$dest/usr-prefix/etc/systemd/system/bloomgate-agent.service
	{ grep -q '^ExecStart=/usr/sbin/bloomgate ' "$u" &&
		grep -qx 'Documentation=file:/usr/share/doc/bloomgate/README.md' "$u" &&
		! grep -q /usr/local "$u"; } ||
		t_fail "make install PREFIX=/usr: the unit does not name /usr/sbin/bloomgate and /usr/share/doc"
else
	t_fail "make install failed: $(tail -3 "$dest.log")"
fi
rm -rf "$dest" "$dest.log"
t_end "$E2E_NAME"

((E2E_FAILED == 0))
