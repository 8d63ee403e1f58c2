#!/bin/bash
# The layout of user/ (docs/ARCHITECTURE.md): every source is in one layer
# folder, core < kern < agent < cli, and data flows upward only: no file
# includes a header of a layer above its own, no two modules (NAME.c,
# NAME.h, NAME_priv.h) include each other (directly or round a circle),
# and the core library links without
# libbpf and libxdp. Reads the tree and build/ only: no root, no pins.
# Prints "ok NAME" / "not ok NAME" per case like the other e2e scripts.
set -u
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$E2E_ROOT" || exit 1

LAYERS=(core kern agent cli)
rank() { # LAYER -> its rank, 0 when not a layer
	local i
	for i in "${!LAYERS[@]}"; do
		[ "${LAYERS[$i]}" = "$1" ] && {
			echo $((i + 1))
			return
		}
	done
	echo 0
}

# "FILE INCLUDED" for every quoted include of a user/ header.
includes() {
	local f inc
	for f in user/*/*.[ch]; do
		sed -n 's/^#include "\([a-z]*\/[a-z_]*\.h\)".*/\1/p' "$f" | while read -r inc; do
			[ -f "user/$inc" ] && echo "$f user/$inc"
		done
	done
}

E2E_NAME=every_source_in_a_layer
t_begin
for f in user/* user/*/*; do
	[ -d "$f" ] && [ "$(dirname "$f")" = user ] && {
		[ "$(rank "$(basename "$f")")" -gt 0 ] || t_fail "$f: not a layer (${LAYERS[*]})"
		continue
	}
	[ -f "$f" ] && [ "$(dirname "$f")" = user ] && t_fail "$f: outside the layer folders"
done
t_end "$E2E_NAME"

E2E_NAME=no_include_from_above
t_begin
n=0
while read -r f inc; do
	n=$((n + 1))
	fl=$(echo "$f" | cut -d/ -f2)
	il=$(echo "$inc" | cut -d/ -f2)
	[ "$(rank "$il")" -le "$(rank "$fl")" ] || t_fail "$f includes $inc (layer $il is above $fl)"
done < <(includes)
[ "$n" -gt 20 ] || t_fail "only $n includes of user/ headers found: the scan is broken"
t_end "$E2E_NAME"

# A file and its header are one node (user/core/lists.c and lists.h);
# tsort refuses a graph with a loop.
E2E_NAME=no_include_circle
t_begin
# a module: NAME.c, NAME.h and its private header NAME_priv.h, which the
# files of a module split in several (config_yaml.c, config_keys.c...)
# share
graph=$(includes | sed 's/\.[ch]\( \|$\)/\1/g; s/_priv\( \|$\)/\1/g' | awk '$1 != $2')
if ! out=$(echo "$graph" | tsort 2>&1 >/dev/null) || [ -n "$out" ]; then
	t_fail "an include circle: $(echo "$out" | tr '\n' ' ')"
fi
t_end "$E2E_NAME"

E2E_NAME=core_links_without_libbpf
t_begin
lib=build/libbloomgate-core.a
if [ ! -f "$lib" ]; then
	t_fail "$lib is missing: run make first"
else
	bad=$(nm -u "$lib" | awk '$2 ~ /^(bpf_|btf_|xdp_|libbpf_|libxdp_|ring_buffer__)/ { print $2 }' | sort -u)
	[ -z "$bad" ] || t_fail "the core library uses libbpf/libxdp: $(echo "$bad" | tr '\n' ' ')"
	defs=$(nm --defined-only "$lib" | grep -c ' T bg_')
	[ "$defs" -gt 50 ] || t_fail "only $defs functions defined in $lib: the scan is broken"
fi
t_end "$E2E_NAME"

[ "$E2E_FAILED" -eq 0 ]
