// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The shared layouts as the BPF object sees them (its BTF, from the
 * skeleton's embedded ELF) must equal what userspace compiles: size of
 * every struct, offset and size of every member, and nothing extra.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bloomgate/abi.h"
#include "core/counters.h"
#include "bloomgate.skel.h"

struct member {
	const char *name;
	size_t off, size;
};

#define M(type, field)                                                      \
	{ #field, offsetof(struct type, field),                               \
	  sizeof(((struct type *)0)->field) }

static void check_struct(const struct btf *btf, const char *name, size_t size,
			 const struct member *m, size_t nm)
{
	const struct btf_member *bm;
	const struct btf_type *t;
	__s32 id;
	size_t i;

	id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);
	if (id < 0)
		fail_msg("struct %s not in the BPF object's BTF", name);
	t = btf__type_by_id(btf, (__u32)id);
	if ((size_t)btf__resolve_size(btf, (__u32)id) != size)
		fail_msg("struct %s: BPF size %lld, userspace %zu", name,
			 (long long)btf__resolve_size(btf, (__u32)id), size);
	if (btf_vlen(t) != nm)
		fail_msg("struct %s: BPF has %u members, userspace %zu", name,
			 btf_vlen(t), nm);
	bm = btf_members(t);
	for (i = 0; i < nm; i++) {
		const char *bn = btf__name_by_offset(btf, bm[i].name_off);
		__s64 bsz = btf__resolve_size(btf, bm[i].type);

		if (strcmp(bn, m[i].name))
			fail_msg("struct %s member %zu: BPF '%s', userspace '%s'",
				 name, i, bn, m[i].name);
		if (btf_member_bit_offset(t, (__u32)i) != m[i].off * 8)
			fail_msg("%s.%s: BPF offset %u bits, userspace %zu bytes",
				 name, bn, btf_member_bit_offset(t, (__u32)i),
				 m[i].off);
		if (bsz != (__s64)m[i].size)
			fail_msg("%s.%s: BPF size %lld, userspace %zu", name, bn,
				 (long long)bsz, m[i].size);
	}
}

#define CHECK(btf, type, ...)                                               \
	do {                                                                  \
		const struct member ms[] = { __VA_ARGS__ };                   \
		check_struct(btf, #type, sizeof(struct type), ms,             \
			     sizeof(ms) / sizeof(ms[0]));                     \
	} while (0)

static void test_btf_layouts(void **state)
{
	struct bloomgate *skel = bloomgate__open();
	const struct btf *btf;

	(void)state;
	assert_non_null(skel);
	btf = bpf_object__btf(skel->obj);
	assert_non_null(btf);
	CHECK(btf, bg_key4, M(bg_key4, kind), M(bg_key4, plen), M(bg_key4, pad),
	      M(bg_key4, addr));
	CHECK(btf, bg_key6, M(bg_key6, kind), M(bg_key6, plen), M(bg_key6, pad0),
	      M(bg_key6, pad1), M(bg_key6, addr));
	CHECK(btf, bg_filter_header, M(bg_filter_header, magic),
	      M(bg_filter_header, abi_version), M(bg_filter_header, layout),
	      M(bg_filter_header, subs_depths),
	      M(bg_filter_header, nblocks), M(bg_filter_header, k),
	      M(bg_filter_header, flags),
	      M(bg_filter_header, n4), M(bg_filter_header, n6),
	      M(bg_filter_header, seed), M(bg_filter_header, entries),
	      M(bg_filter_header, len4), M(bg_filter_header, len6),
	      M(bg_filter_header, allow4_off), M(bg_filter_header, allow4_n),
	      M(bg_filter_header, fp_off), M(bg_filter_header, fp_nbuckets),
	      M(bg_filter_header, allow6_n), M(bg_filter_header, short6_n),
	      M(bg_filter_header, allown_n));
	CHECK(btf, bg_range4, M(bg_range4, start), M(bg_range4, end));
	CHECK(btf, bg_range6, M(bg_range6, start_hi), M(bg_range6, start_lo),
	      M(bg_range6, end_hi), M(bg_range6, end_lo));
	CHECK(btf, bg_block, M(bg_block, w));
	CHECK(btf, bg_fp_bucket, M(bg_fp_bucket, fp));
	CHECK(btf, bg_counters, M(bg_counters, cnt), M(bg_counters, malformed));
	CHECK(btf, bg_event, M(bg_event, ts_ns), M(bg_event, ifindex),
	      M(bg_event, family), M(bg_event, which), M(bg_event, verdict),
	      M(bg_event, pad), M(bg_event, addr));
	CHECK(btf, bg_name_event, M(bg_name_event, ev), M(bg_name_event, name));
	CHECK(btf, bg_attach_rec, M(bg_attach_rec, ifindex), M(bg_attach_rec, mode),
	      M(bg_attach_rec, match), M(bg_attach_rec, action),
	      M(bg_attach_rec, dns_action), M(bg_attach_rec, prog_id),
	      M(bg_attach_rec, netns_ino), M(bg_attach_rec, dns_prog_id),
	      M(bg_attach_rec, dns_ports), M(bg_attach_rec, capacity));
	CHECK(btf, bg_protect_item, M(bg_protect_item, family),
	      M(bg_protect_item, plen), M(bg_protect_item, kind),
	      M(bg_protect_item, pad), M(bg_protect_item, ifindex),
	      M(bg_protect_item, netns_ino), M(bg_protect_item, addr),
	      M(bg_protect_item, ifname));
	CHECK(btf, bg_protect_set, M(bg_protect_set, n4), M(bg_protect_set, n6),
	      M(bg_protect_set, nitems), M(bg_protect_set, steps4),
	      M(bg_protect_set, steps6), M(bg_protect_set, pad),
	      M(bg_protect_set, map4), M(bg_protect_set, map6),
	      M(bg_protect_set, r4), M(bg_protect_set, r6), M(bg_protect_set, item));
	CHECK(btf, bg_protect_map, M(bg_protect_map, sel), M(bg_protect_map, pad),
	      M(bg_protect_map, flipped_ns), M(bg_protect_map, half));
	bloomgate__destroy(skel);
}

/* The maps' declared sizes agree with the ABI's value layouts. */
static void test_map_sizes(void **state)
{
	struct bloomgate *skel = bloomgate__open();

	(void)state;
	assert_non_null(skel);
	assert_int_equal(bpf_map__value_size(skel->maps.bg_stats),
			 sizeof(struct bg_counters));
	assert_int_equal(bpf_map__value_size(skel->maps.bg_attach),
			 sizeof(struct bg_attach_rec));
	assert_int_equal(bpf_map__max_entries(skel->maps.bg_attach), BG_ATTACH_MAX);
	assert_int_equal(bpf_map__value_size(skel->maps.bg_protect),
			 sizeof(struct bg_protect_map));
	assert_int_equal(bpf_map__max_entries(skel->maps.bg_protect), 1);
	assert_string_equal(bpf_map__name(skel->maps.bg_protect),
			    BG_TEXTIFY(BG_MAP_PROTECT));
	assert_int_equal(sizeof(struct bg_filter_header), BG_FILTER_VALUE_SIZE);
	assert_string_equal(bpf_map__name(skel->maps.bg_filters),
			    BG_TEXTIFY(BG_MAP_FILTERS));
	bloomgate__destroy(skel);
}

/* Counters and malformed reasons are append-only: every published index
 * stays where it is (stats output, scripts and old pins rely on it), and
 * the names `stats` prints are unique. The DNS reasons are counters, not
 * malformed reasons (see abi.h); the names are user/core/counters.c's. */
static void test_counter_indices(void **state)
{
	size_t i, j;

	(void)state;
	assert_int_equal(BG_CNT_PACKETS, 0);
	assert_int_equal(BG_CNT_MALFORMED, 13);
	assert_int_equal(BG_CNT_ALLOWLISTED, 14);
	assert_int_equal(BG_CNT_DNS_QUERIES, 15);
	assert_int_equal(BG_CNT_DNS_PROBES, 16);
	assert_int_equal(BG_CNT_DNS_POSITIVES, 17);
	assert_int_equal(BG_CNT_DNS_NEGATIVES, 18);
	assert_int_equal(BG_CNT_DNS_RESPONSE, 19);
	assert_int_equal(BG_CNT_DNS_OPCODE, 20);
	assert_int_equal(BG_CNT_DNS_QDCOUNT, 21);
	assert_int_equal(BG_CNT_DNS_NAME_TOO_LONG, 22);
	assert_int_equal(BG_CNT_DNS_BAD_LABEL, 23);
	assert_int_equal(BG_CNT_DNS_TRUNCATED, 24);
	assert_int_equal(BG_CNT_ANSWERED, 25);
	assert_int_equal(BG_CNT_DNS_ALLOWLISTED, 26);
	assert_int_equal(BG_CNT_DNS_NO_PROG, 27);
	assert_int_equal(BG_CNT_BLOOM_FP, 28);
	assert_int_equal(BG_CNT_DNS_BLOOM_FP, 29);
	assert_int_equal(BG_CNT_UNPARSED_DROPPED, 30);
	assert_int_equal(BG_CNT_PROTECTED, 31);
	assert_int_equal(BG_CNT__COUNT, 32);
	assert_int_equal(BG_MAL_IPV6_EXT_TOO_LONG, 9);
	assert_int_equal(BG_MAL__COUNT, 10);
	assert_string_equal(bg_counter_names[BG_CNT_DNS_TRUNCATED], "dns_truncated");
	assert_string_equal(bg_counter_names[BG_CNT_UNPARSED_DROPPED],
			    "unparsed_dropped");
	assert_string_equal(bg_counter_names[BG_CNT_PROTECTED], "protected");
	for (i = 0; i < BG_CNT__COUNT; i++)
		for (j = i + 1; j < BG_CNT__COUNT; j++)
			assert_string_not_equal(bg_counter_names[i],
						bg_counter_names[j]);
	for (i = 0; i < BG_MAL__COUNT; i++)
		for (j = i + 1; j < BG_MAL__COUNT; j++)
			assert_string_not_equal(bg_malformed_names[i],
						bg_malformed_names[j]);
	assert_int_equal(BG_KEY_NAME_EXACT, 3);
	assert_int_equal(BG_KEY_NAME_SUBS, 4);
}

/* bg_attach_rec.mode holds the mode in its low bits and flags above: a
 * record written before a flag existed reads as its default (0 = pass). */
static void test_attach_mode_flags(void **state)
{
	(void)state;
	assert_int_equal(BG_ATTACH_F_UNPARSED_DROP & BG_ATTACH_MODE_MASK, 0);
	assert_int_equal(1 & ~BG_ATTACH_MODE_MASK, 0); /* native */
	assert_int_equal(2 & ~BG_ATTACH_MODE_MASK, 0); /* skb */
	assert_int_equal(BG_ATTACH_F_UNPARSED_DROP & 0xff, BG_ATTACH_F_UNPARSED_DROP);
	assert_int_equal(BG_UNPARSED_PASS, 0);
	assert_int_equal(BG_UNPARSED_DROP, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_btf_layouts),
		cmocka_unit_test(test_map_sizes),
		cmocka_unit_test(test_counter_indices),
		cmocka_unit_test(test_attach_mode_flags),
	};

	return cmocka_run_group_tests_name("abi", tests, NULL, NULL);
}
