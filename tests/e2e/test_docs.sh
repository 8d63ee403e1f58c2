#!/bin/bash
# The manual pages and the bash completion against the binary: `make man`
# writes build/man/bloomgate.8, build/man/bloomgate.yaml.5 and
# build/completion/bloomgate (`bloomgate help --man 8|5`, `help
# --completion bash`), and this checks them with what the binary itself
# says, independently of the code that wrote them: every command of
# `bloomgate help`, its synopsis, options and their values (from `bloomgate
# help CMD`) are in bloomgate(8) under the command; every key the config
# parser knows (from its own error for an unknown key, section by section)
# is in bloomgate.yaml(5) under its section, and nothing else is; both
# pages render without a warning; the completion offers the commands, each
# command's options and each option's values. No root, no namespaces.
# Prints "ok NAME" / "not ok NAME" per case like the other e2e scripts.
set -u
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$E2E_ROOT" || exit 1
require_cmds man groff

MAN8=build/man/bloomgate.8
MAN5=build/man/bloomgate.yaml.5
COMPL=build/completion/bloomgate
[ -x build/bloomgate ] || die "build/bloomgate is missing: run make first"
make -s man >/dev/null || die "make man failed"
TMP=$(mktemp -d /tmp/bloomgate-docs.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# A page as man shows it, wide enough that no line of it is wrapped, plain
# ASCII: "--mode native|skb" is searched for as typed.
render() { # PAGE
	LC_ALL=C MANWIDTH=1000 man -l "$1" 2>/dev/null
}
render "$MAN8" >"$TMP/man8.txt"
render "$MAN5" >"$TMP/man5.txt"

# The lines of a section of a rendered page: from the heading TITLE (at
# INDENT spaces) to the next heading at that indent or less.
section() { # FILE INDENT TITLE
	awk -v ind="$2" -v t="$3" '
		function level(l) { match(l, /^ */); return RLENGTH }
		/^[^ ]/ || (/^ +[^ ]/ && level($0) <= ind && !/^        /) {
			if (on) exit
			if (level($0) == ind && substr($0, ind + 1) == t) { on = 1; next }
		}
		on' "$1"
}

# `bloomgate help CMD`'s options, one line each: the usage as its help
# prints it ("--mode native|skb", "-o, --output FILE"), then the values
# listed under it, space-separated.
help_opts() { # CMD
	build/bloomgate help "$1" | awk '
		/^options:$/ { on = 1; next }
		!on { next }
		/^  -h, --help/ { exit }
		/^  -/ {
			if (u != "") print u "\t" v
			u = substr($0, 3); sub(/  .*/, "", u); v = ""
			next
		}
		/^    [a-z0-9]/ { split($0, w, " "); v = v (v == "" ? "" : " ") w[1] }
		END { if (u != "") print u "\t" v }'
}

# ---- the version ---------------------------------------------------------------

E2E_NAME=version
t_begin
want=$(sed -n 's/^#define BG_VERSION "\(.*\)"/\1/p' user/core/version.h)
[ -n "$want" ] || t_fail "no BG_VERSION in user/core/version.h"
t_expect_eq "bloomgate --version" "bloomgate $want" "$(build/bloomgate --version)"
build/bloomgate --version >/dev/null
t_expect_eq "bloomgate --version: exit status" 0 "$?"
grep -q "^\.TH BLOOMGATE 8 .*\"bloomgate $want\"" "$MAN8" || t_fail "bloomgate.8 is not of version $want"
grep -q "^\.TH BLOOMGATE.YAML 5 .*\"bloomgate $want\"" "$MAN5" || t_fail "bloomgate.yaml.5 is not of version $want"
t_end "$E2E_NAME"

# ---- rendering -------------------------------------------------------------------

for page in "$MAN8" "$MAN5"; do
	E2E_NAME=renders_$(basename "$page")
	t_begin
	warn=$(LC_ALL=C MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
	[ -z "$warn" ] || t_fail "man --warnings: $warn"
	warn=$(groff -man -ww -z "$page" 2>&1)
	[ -z "$warn" ] || t_fail "groff -ww: $warn"
	for s in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
		grep -qx "$s" "$TMP/$( [ "$page" = "$MAN8" ] && echo man8 || echo man5).txt" ||
			t_fail "no $s section"
	done
	t_end "$E2E_NAME"
done

E2E_NAME=man8_sections
t_begin
for s in COMMANDS "EXIT STATUS" ENVIRONMENT FILES; do
	grep -qx "$s" "$TMP/man8.txt" || t_fail "no $s section"
done
# the exit codes main.c's comment lists
for code in 0 1 2 3 4; do
	section "$TMP/man8.txt" 0 "EXIT STATUS" | grep -qE "^ +$code +[a-z]" ||
		t_fail "exit status $code is not described"
done
# every variable the code reads (getenv) is in ENVIRONMENT
for v in $(grep -rhoE 'getenv\("[A-Za-z_]+"\)' user | sed 's/getenv("\(.*\)")/\1/' | sort -u); do
	section "$TMP/man8.txt" 0 ENVIRONMENT | grep -qw "$v" || t_fail "ENVIRONMENT lacks $v"
done
for p in "bloomgate.yaml(5)" "xdp-filter(8)" "bpftool(8)"; do
	section "$TMP/man8.txt" 0 "SEE ALSO" | grep -qF "$p" || t_fail "SEE ALSO lacks $p"
done
t_end "$E2E_NAME"

# ---- bloomgate(8): every command, its synopsis and options --------------------

mapfile -t CMDS < <(build/bloomgate help | sed -n 's/^  bloomgate \([a-z]*\).*/\1/p')
E2E_NAME=man8_commands
t_begin
((${#CMDS[@]} >= 7)) || t_fail "bloomgate help lists ${#CMDS[@]} commands"
# the page's commands are help's, in its order
mapfile -t PAGE_CMDS < <(section "$TMP/man8.txt" 0 COMMANDS | sed -n 's/^   \([a-z][a-z]*\)$/\1/p')
t_expect_eq "the commands of bloomgate.8" "${CMDS[*]}" "${PAGE_CMDS[*]}"
# the options are read from help's text: that the reading still works
n=$(help_opts attach | wc -l)
((n >= 5)) || t_fail "only $n options read from 'bloomgate help attach'"
t_end "$E2E_NAME"

for c in "${CMDS[@]}"; do
	E2E_NAME=man8_$c
	t_begin
	section "$TMP/man8.txt" 3 "$c" >"$TMP/sec"
	[ -s "$TMP/sec" ] || t_fail "no section $c under COMMANDS"
	syn=$(build/bloomgate help "$c" | head -n1)
	syn=${syn#usage: }
	grep -qxF "       $syn" "$TMP/sec" || t_fail "the synopsis '$syn' is not in the section"
	grep -qxF "       $syn" <(section "$TMP/man8.txt" 0 SYNOPSIS) ||
		t_fail "the synopsis '$syn' is not in SYNOPSIS"
	n=0
	while IFS=$'\t' read -r usage values; do
		n=$((n + 1))
		# the option's tag: its usage, alone or before its help
		awk -v u="$usage" '{ sub(/^ +/, "") } index($0, u) == 1 &&
			(length($0) == length(u) || substr($0, length(u) + 1, 1) == " ") { f = 1 }
			END { exit !f }' "$TMP/sec" || t_fail "option '$usage' is not in the section"
		for v in $values; do
			grep -qE "^ +$v( |\$)" "$TMP/sec" || t_fail "$usage: value $v is not in the section"
		done
	done < <(help_opts "$c")
	t_end "$E2E_NAME"
done

# How attach shares the interface: the page (from the command's table) and
# the README say the same, that libxdp's dispatcher does not load here and
# that --chain with bloomgate chain is the way; neither promises sharing
# through libxdp.
E2E_NAME=attach_sharing_agrees
t_begin
page=$(section "$TMP/man8.txt" 3 attach | tr -s ' \n' '  ')
readme=$(grep '^| `attach` |' README.md)
for what in page readme; do
	text=${!what}
	[ -n "$text" ] || t_fail "$what: no attach text found"
	grep -q "dispatcher.*does not load" <<<"$text" || t_fail "$what: does not say libxdp's dispatcher does not load"
	grep -q "chain" <<<"$text" || t_fail "$what: does not name --chain and bloomgate chain"
	grep -Eqi "so other XDP programs can share|meant to let it share" <<<"$text" &&
		t_fail "$what: promises sharing the interface through libxdp"
done
t_end "$E2E_NAME"

# ---- bloomgate.yaml(5): every key of the parser, in its section ----------------

# The keys the parser accepts in a section, from its error for an unknown
# key there: "unknown key 'bogus_key' (a, b, c)".
parser_keys() { # YAML
	printf '%s\n' "$1" >"$TMP/bad.yaml"
	build/bloomgate agent --check --config "$TMP/bad.yaml" 2>&1 |
		sed -n "s/.*unknown key 'bogus_key' (\(.*\))\$/\1/p" | tr -d ',' | tr ' ' '\n' | sort
}

# The keys of a section of bloomgate.yaml(5): its .TP tags "key (type)".
page_keys() { # TITLE
	section "$TMP/man5.txt" 3 "$1" | sed -n 's/^       \([a-z_][a-z0-9_]*\) (.*)$/\1/p' | sort
}

check_keys() { # NAME TITLE YAML
	E2E_NAME=man5_$1
	t_begin
	want=$(parser_keys "$3")
	[ -n "$want" ] || t_fail "the parser named no keys for '$3'"
	got=$(page_keys "$2")
	[ "$want" = "$got" ] || t_fail "section '$2': the parser's keys and the page's differ:" \
		"$(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
	t_end "$E2E_NAME"
}
check_keys top "top level" "bogus_key: 1"
check_keys interfaces "interfaces[]" "interfaces: [{name: x, bogus_key: 1}]"
check_keys lists "lists[]" "lists: [{name: x, bogus_key: 1}]"
check_keys artifact artifact "artifact: {bogus_key: 1}"
check_keys fleet fleet "fleet: {bogus_key: 1}"

# An enum key's values, from the parser's error for a value it does not
# know, are listed under it.
E2E_NAME=man5_values
t_begin
for kv in "mode interfaces[] interfaces: [{name: x, mode: bogus}]" \
	"unparsed interfaces[] interfaces: [{name: x, unparsed: bogus}]" \
	"dns_action interfaces[] interfaces: [{name: x, dns_action: bogus}]" \
	"format lists[] lists: [{name: x, path: /x, format: bogus}]"; do
	read -r key title yaml <<<"$kv"
	printf '%s\n' "$yaml" >"$TMP/bad.yaml"
	vals=$(build/bloomgate agent --check --config "$TMP/bad.yaml" 2>&1 |
		sed -n "s/.*'bogus' (\(.*\))\$/\1/p" | tr -d ',')
	[ -n "$vals" ] || t_fail "$key: the parser named no values"
	sec=$(section "$TMP/man5.txt" 3 "$title" |
		awk -v k="$key" '/^       [a-z_]+ \(/ { on = index($0, "       " k " (") == 1; next } on')
	for v in $vals; do
		grep -qE "^ +$v( |\$)|Values: .*\\<$v\\>" <<<"$sec" || t_fail "$title $key: value $v not listed"
	done
done
t_end "$E2E_NAME"

# ---- the bash completion ---------------------------------------------------------

# What the completion offers for the words given, the last being the one
# completed: sorted, one line.
complete_words() { # WORD...
	bash -c 'source "$1"; shift; COMP_WORDS=(bloomgate "$@"); COMP_CWORD=$#
		_bloomgate; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPL" "$@" | sort | tr '\n' ' '
}
sorted() { printf '%s\n' "$@" | sort | tr '\n' ' '; }

E2E_NAME=completion_commands
t_begin
bash -n "$COMPL" || t_fail "$COMPL: not valid bash"
got=$(complete_words "")
for c in "${CMDS[@]}" help --version; do
	grep -qw -- "$c" <<<"$got" || t_fail "'bloomgate <TAB>' lacks $c: $got"
done
t_expect_eq "bloomgate help <TAB>" "$(sorted "${CMDS[@]}")" "$(complete_words help "")"
t_expect_eq "bloomgate st<TAB>" "$(sorted stats status)" "$(complete_words st)"
t_end "$E2E_NAME"

for c in "${CMDS[@]}"; do
	E2E_NAME=completion_$c
	t_begin
	opts=(--help)
	while IFS=$'\t' read -r usage values; do
		u=${usage#-?, }
		o=${u%% *}
		opts+=("$o")
		# the values of an enum: "--mode native|skb", and those listed under it
		vals=$values
		[ "$u" != "$o" ] && [[ ${u#* } == *"|"* ]] && vals="$vals ${u#* }"
		vals=$(tr '|' ' ' <<<"$vals")
		[ -n "${vals// /}" ] || continue
		want=$(printf '%s\n' $vals | sort -u | tr '\n' ' ')
		t_expect_eq "bloomgate $c $o <TAB>" "$want" "$(complete_words "$c" "$o" "")"
	done < <(help_opts "$c")
	t_expect_eq "bloomgate $c --<TAB>" "$(sorted "${opts[@]}")" "$(complete_words "$c" --)"
	t_end "$E2E_NAME"
done

E2E_NAME=completion_arguments
t_begin
# an interface: attach IFACE; an option's enum value after --opt=
grep -qw lo <<<"$(complete_words attach "")" || t_fail "bloomgate attach <TAB> does not offer lo"
grep -qw lo <<<"$(complete_words attach l)" || t_fail "bloomgate attach l<TAB> does not offer lo"
t_expect_eq "bloomgate attach --mode=n<TAB>" "native " "$(complete_words attach --mode = n)"
t_expect_eq "bloomgate -v attach --mode <TAB>" "native skb " "$(complete_words -v attach --mode "")"
# a path: load LIST, agent --config FILE
t_expect_eq "bloomgate load README.m<TAB>" "README.md " "$(complete_words load README.m)"
t_expect_eq "bloomgate agent --config README.m<TAB>" "README.md " "$(complete_words agent --config README.m)"
# a command that takes one argument is not offered a second one, and each
# TAB does not add another: its options instead
t_expect_eq "bloomgate fleet <TAB>" "status " "$(complete_words fleet "")"
for w in "fleet status" "fleet status --json" "fleet --db x status" "fleet --db = x status"; do
	# shellcheck disable=SC2086 # the words, split
	t_expect_eq "bloomgate $w <TAB>" "--db --help --json " "$(complete_words $w "")"
done
t_expect_eq "bloomgate fleet --db x <TAB>" "status " "$(complete_words fleet --db x "")"
grep -qw lo <<<"$(complete_words attach lo "")" && t_fail "bloomgate attach lo <TAB> offers an interface again"
grep -qw -- --mode <<<"$(complete_words attach lo "")" || t_fail "bloomgate attach lo <TAB> does not offer the options"
grep -qw lo <<<"$(complete_words attach --mode native "")" || t_fail "bloomgate attach --mode native <TAB> does not offer lo"
t_end "$E2E_NAME"

((E2E_FAILED == 0))
