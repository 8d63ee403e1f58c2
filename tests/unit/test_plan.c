// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The filter planner and builder for CIDR lists (user/core/filter.c):
 * bg_filter_plan() on crafted lists, checked against hand-computed plans
 * and against brute force; bg_filter_build() and the userspace lookups
 * (bg_filter_test4/6, bg_filter_allowed4/6, the datapath's code) against a
 * naive model (linear scans, 128-bit host-order arithmetic, no code shared
 * with user/).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "bloomgate/bloom.h"
#include "core/filter.h"
#include "core/lists.h"

/* Tight enough that a false positive in the model checks is a ~1e-9 event
 * (fixed seeds: every run is the same). */
#define FPR_TIGHT BG_FPR_MIN

#include "prefix_lists.h"

/* The IPv6 allow table follows the IPv4 one (bloomgate/abi.h), computed
 * here without the datapath's lookup.h. */
static __u32 hdr_allow6_off(const struct bg_filter_header *h)
{
	return h->allow4_off + (h->allow4_n + 7) / 8;
}

/* Plans (must succeed) a finished block list and optional allowlist; with
 * mem, also builds the filter into a new *mem (free() it). */
static void plan_build(const struct pset *block, const struct pset *allow,
		       double fpr, uint64_t seed, struct bg_filter_params *p,
		       void **mem)
{
	struct bg_list b, a;
	int err;

	list_from(&b, block, 1);
	list_from(&a, allow, 1);
	err = plan_lists(&b, allow ? &a : NULL, fpr, p);
	if (err)
		fail_msg("bg_filter_plan: %s", strerror(-err));
	if (mem) {
		*mem = calloc(1, p->bytes);
		assert_non_null(*mem);
		bg_filter_build(*mem, p, seed, BL(&b, allow ? &a : NULL, NULL));
	}
	bg_list_free(&b);
	bg_list_free(&a);
}

static void plan(const struct pset *block, const struct pset *allow,
		 double fpr, struct bg_filter_params *p)
{
	plan_build(block, allow, fpr, 0, p, NULL);
}

/* Plans and builds; returns the filter memory (free() it). */
static void *build(const struct pset *block, const struct pset *allow,
		   double fpr, uint64_t seed, struct bg_filter_params *p)
{
	void *mem;

	plan_build(block, allow, fpr, seed, p, &mem);
	return mem;
}

static int lookup(const void *mem, int v6, u128 x)
{
	__u8 b[16];

	if (v6) {
		to_bytes(x, b);
		return bg_filter_test6(mem, b);
	}
	return bg_filter_test4(mem, htonl((uint32_t)x));
}

static int allowed(const void *mem, int v6, u128 x)
{
	__u8 b[16];

	if (v6) {
		to_bytes(x, b);
		return bg_filter_allowed6(mem, b);
	}
	return bg_filter_allowed4(mem, htonl((uint32_t)x));
}

/* ---- CPE cost model -------------------------------------------------------- */

/* Keys when every length l of count[] (lo..hi) is expanded to the shortest
 * target >= l; -1 when a length has no target or needs more than maxbits. */
static double cpe_cost(const uint64_t *count, int lo, int hi, const int *t,
		       int nt, int maxbits)
{
	double keys = 0;
	int l, i;

	for (l = lo; l <= hi; l++) {
		int best = -1;

		if (!count[l])
			continue;
		for (i = 0; i < nt; i++)
			if (t[i] >= l && (best < 0 || t[i] < best))
				best = t[i];
		if (best < 0 || best - l > maxbits)
			return -1;
		keys += (double)count[l] * ldexp(1.0, best - l);
	}
	return keys;
}

/* Brute force: for each number of targets (at most BG_PROBES_MAX, among the
 * present lengths lo..hi, the longest always included) the cheapest set;
 * then the fewest targets whose cost is within BG_CPE_KEY_SLACK times the
 * cheapest of all (fewer probes per packet for a bounded memory cost).
 * -1: none. */
static double cpe_best(const uint64_t *count, int lo, int hi, int maxbits)
{
	int len[129], m = 0, l, t[BG_PROBES_MAX], nt_;
	double best = -1, per[BG_PROBES_MAX + 1];
	unsigned int mask;

	for (l = lo; l <= hi; l++)
		if (count[l])
			len[m++] = l;
	if (!m)
		return 0;
	assert_true(m <= 16);
	for (nt_ = 0; nt_ <= BG_PROBES_MAX; nt_++)
		per[nt_] = -1;
	for (mask = 0; mask < 1U << (m - 1); mask++) {
		int nt = 0, i;
		double c;

		if (__builtin_popcount(mask) > BG_PROBES_MAX - 1)
			continue;
		for (i = 0; i < m - 1; i++)
			if (mask >> i & 1)
				t[nt++] = len[i];
		t[nt++] = len[m - 1];
		c = cpe_cost(count, lo, hi, t, nt, maxbits);
		if (c >= 0 && (per[nt] < 0 || c < per[nt]))
			per[nt] = c;
		if (c >= 0 && (best < 0 || c < best))
			best = c;
	}
	for (nt_ = 1; best >= 0 && nt_ <= BG_PROBES_MAX; nt_++)
		if (per[nt_] >= 0 && per[nt_] <= best * BG_CPE_KEY_SLACK)
			return per[nt_];
	return best;
}

static void lengths_of(const __u8 *len, int n, int *out)
{
	int i;

	for (i = 0; i < n; i++)
		out[i] = len[i];
}

/* The plan's lengths: descending, distinct, present in the list. */
static void check_plan_lengths(const __u8 *len, int n, const uint64_t *count)
{
	int i;

	assert_true(n <= BG_PROBES_MAX);
	for (i = 0; i < n; i++) {
		assert_true(count[len[i]] > 0);
		if (i)
			assert_true(len[i] < len[i - 1]);
	}
}

static void counts_of(const struct pset *s, uint64_t *c4, uint64_t *c6)
{
	size_t i;

	memset(c4, 0, 33 * sizeof(*c4));
	memset(c6, 0, 129 * sizeof(*c6));
	for (i = 0; i < s->n; i++)
		(s->v[i].v6 ? c6 : c4)[s->v[i].plen]++;
}

/* count prefixes of each length, disjoint: length l lives in the region
 * whose top byte is l (needs count <= 2^(l - 8)). */
static void add_counted(struct pset *s, int v6, int l, uint64_t count)
{
	int w = width(v6);
	uint64_t i;

	assert_true(l >= 8 && (l - 8 >= 63 || count <= 1ULL << (l - 8)));
	for (i = 0; i < count; i++)
		pset_add(s, mkpfx(v6, (u128)l << (w - 8) | (u128)i << (w - l), l));
}

/* ---- Tests ------------------------------------------------------------------- */

/*
 * --fpr is accepted down to BG_FPR_MIN; the planner splits it over the
 * probed lengths (target / max(n4, n6) per probe), which must not make a
 * valid target unplannable (regression: bg_filter_size() refused the
 * split target below BG_FPR_MIN, so `load --fpr 1e-9` of a /24 and a /32
 * failed with "Invalid argument").
 */
static void test_plan_fpr_min_many_lengths(void **state)
{
	static const char *const lists[][4] = {
		{ "198.51.100.0/24", "192.0.2.1", NULL },
		{ "2001:db8::/48", "2001:db8:1::/64", "2001:db8:2::1", NULL },
		{ "10.0.0.0/17", "10.1.0.0/20", "10.2.0.0/28", "10.3.0.1" },
	};
	struct bg_filter_params p;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		struct pset s = { 0 };
		struct bg_list l;
		int err;

		for (j = 0; j < 4 && lists[i][j]; j++)
			pset_add(&s, P(lists[i][j]));
		list_from(&l, &s, 1);
		err = plan_lists(&l, NULL, BG_FPR_MIN, &p);
		bg_list_free(&l);
		pset_free(&s);
		if (err)
			fail_msg("plan of list %zu (%s, ...) at --fpr %g (BG_FPR_MIN): %s",
				 i, lists[i][0], BG_FPR_MIN, strerror(-err));
		assert_true(p.predicted_addr <= BG_FPR_MIN);
	}
}

/* One prefix alone, every length: where it goes, what it costs. */
static void test_plan_each_length(void **state)
{
	struct bg_filter_params p;
	int v6, l;

	(void)state;
	rng = 0x1e;
	for (v6 = 0; v6 <= 1; v6++) {
		for (l = 0; l <= width(v6); l++) {
			struct pset s = { 0 };
			struct pfx x = mkpfx(v6, rnd128(), l);
			void *mem;
			char b[INET6_ADDRSTRLEN];

			pset_add(&s, x);
			mem = build(&s, NULL, FPR_TIGHT, 7, &p);
			if (!v6 && l <= BG_SHORT4_MAXLEN) {
				assert_true(p.short4);
				assert_int_equal(p.short4_prefixes, 1);
				assert_int_equal(p.n4, 0);
				assert_int_equal(p.keys4, 0);
				assert_int_equal(p.nblocks, 0);
				assert_int_equal(p.bloom_off, 1 + BG_SHORT4_ELEMS);
			} else if (!v6) {
				assert_false(p.short4);
				assert_int_equal(p.n4, 1);
				assert_int_equal(p.len4[0], l);
				assert_int_equal(p.keys4, 1);
			} else {
				assert_int_equal(p.n6, 1);
				assert_int_equal(p.len6[0], l);
				assert_int_equal(p.keys6, 1);
				assert_int_equal(p.short6_below, 0);
				assert_int_equal(p.short6_n, 0);
			}
			assert_true(lookup(mem, v6, x.a));
			assert_true(lookup(mem, v6, pfx_last(&x)));
			if (x.a > 0 && lookup(mem, v6, x.a - 1))
				fail_msg("/%d: %s (below) matches", l, fmt(v6, x.a - 1, b));
			if (pfx_last(&x) < ones(v6) && lookup(mem, v6, pfx_last(&x) + 1))
				fail_msg("/%d: %s (above) matches", l,
					 fmt(v6, pfx_last(&x) + 1, b));
			free(mem);
			pset_free(&s);
		}
	}
}

/* /0../16 set one bit per /16 they cover, exactly, and nothing else. */
static void test_plan_bitmap(void **state)
{
	static const char *const list[] = { "10.0.0.0/8", "172.16.0.0/12",
					    "192.168.0.0/16", "100.64.0.0/10",
					    "0.0.0.0/16", "255.255.0.0/16",
					    "203.0.113.0/24", "198.51.100.7" };
	struct bg_filter_params p;
	struct pset s = { 0 };
	const struct bg_block *bm;
	unsigned int top, set = 0;
	size_t i;
	void *mem;

	(void)state;
	for (i = 0; i < sizeof(list) / sizeof(list[0]); i++)
		pset_add(&s, P(list[i]));
	mem = build(&s, NULL, FPR_TIGHT, 1, &p);
	assert_true(p.short4);
	assert_int_equal(p.short4_prefixes, 6);
	assert_int_equal(p.prefixes4, 8);
	assert_int_equal(p.n4, 2);
	assert_int_equal(p.bloom_off, 1 + BG_SHORT4_ELEMS);
	assert_true(((struct bg_filter_header *)mem)->flags & BG_FILTER_F_SHORT4);
	bm = (const struct bg_block *)mem + 1;
	for (top = 0; top < 65536; top++) {
		int bit = (int)(bm[top / 512].w[(top % 512) / 64] >> (top % 64) & 1);
		int want = 0;

		for (i = 0; i < 6; i++) /* the /16 and shorter ones */
			if (s.v[i].plen <= 16 &&
			    ((u128)top << 16) >= s.v[i].a && ((u128)top << 16) <= pfx_last(&s.v[i]))
				want = 1;
		if (bit != want)
			fail_msg("bitmap bit of %u.%u.0.0/16 is %d, expected %d",
				 top >> 8, top & 255, bit, want);
		set += (unsigned int)bit;
		/* and the lookup follows the bit */
		assert_int_equal(lookup(mem, 0, (u128)top << 16 | 0x1234),
				 want || pset_has(&s, 0, (u128)top << 16 | 0x1234));
	}
	/* 2^8 + 2^4 + 1 + 2^6 + 1 + 1 */
	assert_int_equal(set, 256 + 16 + 1 + 64 + 1 + 1);
	free(mem);
	pset_free(&s);

	/* Nothing of /16 or shorter: no bitmap elements at all. */
	pset_add(&s, P("198.51.100.0/24"));
	plan(&s, NULL, FPR_TIGHT, &p);
	assert_false(p.short4);
	assert_int_equal(p.bloom_off, 1);
	pset_free(&s);
}

/* A list big enough to be counted on every CPU: the counts of each
 * length are those of the whole list (40000 /16 and 60000 /32, the two
 * interleaved so that every thread's share holds both). */
static void test_plan_counts_threads(void **state)
{
	struct bg_filter_params p;
	struct bg_list l;
	size_t i, n = 100000;

	(void)state;
	bg_list_init(&l);
	l.v4 = calloc(n, sizeof(*l.v4));
	assert_non_null(l.v4);
	for (i = 0; i < n; i++)
		if (i % 5 < 2)
			bg_key4_init(&l.v4[i], htonl((uint32_t)(i / 5 * 2 + i % 5) << 16), 16);
		else
			bg_key4_init(&l.v4[i], htonl(0xc0000000u + (uint32_t)i), 32);
	l.n4 = l.cap4 = n;
	assert_int_equal(bg_filter_plan(BL(&l, NULL, NULL), FPR_TIGHT, &p), 0);
	assert_int_equal(p.prefixes4, n);
	assert_int_equal(p.short4_prefixes, 40000);
	assert_int_equal(p.keys4, 60000);
	bg_list_free(&l);
}

/* Expansion counts and optimal targets, computed by hand. */
static void test_plan_cpe_hand(void **state)
{
	static const struct {
		int len[8];
		uint64_t count[8];
		__u8 targets[BG_PROBES_MAX];
		int ntargets;
		uint64_t keys4;
	} cases[] = {
		/* Cheapest with 4 lengths: {20,23,24,32}, 1166 keys; with 2,
		 * {24,32}: 10*16 + 3*4 + 100*2 + 50 + 1000 = 1422, within
		 * twice 1166, so two probes win. */
		{ { 20, 22, 23, 24, 32 }, { 10, 3, 100, 50, 1000 },
		  { 32, 24 }, 2, 1422 },
		/* 4 lengths: 52 keys; 3: {20,24,32} 2*4 + 3 + 5*4 + 7*2 + 11
		 * + 13 = 69 <= 104; 2: {24,32} 234 > 104. */
		{ { 18, 20, 22, 23, 24, 32 }, { 2, 3, 5, 7, 11, 13 },
		  { 32, 24, 20 }, 3, 69 },
		/* 4 lengths: {18,20,24,32} 1157; 3: {20,24,32} 100*4 + 50 +
		 * 1*4 + 1*2 + 1000 + 1 = 1457 <= 2314; 2: 8207. */
		{ { 18, 20, 22, 23, 24, 32 }, { 100, 50, 1, 1, 1000, 1 },
		  { 32, 24, 20 }, 3, 1457 },
		/* 3 lengths: nothing expands (2 would cost 780 > 36). */
		{ { 17, 25, 32 }, { 5, 6, 7 }, { 32, 25, 17 }, 3, 18 },
		/* 17..32 with one prefix each, two at /28 and /31: 4 lengths
		 * {20,24,28,32}: 15 + 1 + 2 + 4 + 1 = 23; 3 lengths (46 max):
		 * {20,28,32}: 15 + 1*16 + 2 + 4 + 1 = 38, next {20,24,32} 53;
		 * 2 lengths: 278. */
		{ { 17, 18, 19, 20, 24, 28, 31, 32 }, { 1, 1, 1, 1, 1, 2, 2, 1 },
		  { 32, 28, 20 }, 3, 38 },
	};
	size_t c;

	(void)state;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct bg_filter_params p;
		struct pset s = { 0 };
		uint64_t c4[33], c6[129];
		int i, t[BG_PROBES_MAX];

		for (i = 0; i < 8 && cases[c].len[i]; i++)
			add_counted(&s, 0, cases[c].len[i], cases[c].count[i]);
		/* bitmap lengths change nothing in the Bloom plan */
		add_counted(&s, 0, 8, 1);
		add_counted(&s, 0, 16, 3);
		plan(&s, NULL, 0.001, &p);
		counts_of(&s, c4, c6);
		if (p.n4 != cases[c].ntargets ||
		    memcmp(p.len4, cases[c].targets, (size_t)p.n4))
			fail_msg("case %zu: %u targets /%u /%u /%u /%u, expected %d: /%u /%u /%u /%u",
				 c, p.n4, p.len4[0], p.len4[1], p.len4[2], p.len4[3],
				 cases[c].ntargets, cases[c].targets[0],
				 cases[c].targets[1], cases[c].targets[2],
				 cases[c].targets[3]);
		assert_int_equal(p.keys4, cases[c].keys4);
		lengths_of(p.len4, p.n4, t);
		assert_true(cpe_cost(c4, 17, 32, t, p.n4, 32) == (double)p.keys4);
		assert_true(cpe_best(c4, 17, 32, 32) == (double)p.keys4);
		assert_int_equal(p.short4_prefixes, 4);
		assert_int_equal(p.n, p.keys4);
		pset_free(&s);
	}
}

/* Random IPv4 length mixes: the plan is as cheap as brute force says. */
static void test_plan_cpe_optimal_ipv4(void **state)
{
	int round;

	(void)state;
	rng = 0xc4e;
	for (round = 0; round < 300; round++) {
		struct bg_filter_params p;
		struct pset s = { 0 };
		uint64_t c4[33], c6[129];
		int nl = 1 + (int)rnd_below(10), i, t[BG_PROBES_MAX];
		double best;

		for (i = 0; i < nl; i++) {
			int l = 17 + (int)rnd_below(16);
			uint64_t n = rnd_below(4) ? 1 + rnd_below(8) : 1 + rnd_below(300);

			counts_of(&s, c4, c6);
			if (!c4[l])
				add_counted(&s, 0, l, n);
		}
		plan(&s, NULL, 0.001, &p);
		counts_of(&s, c4, c6);
		check_plan_lengths(p.len4, p.n4, c4);
		lengths_of(p.len4, p.n4, t);
		best = cpe_best(c4, 17, 32, 32);
		if ((double)p.keys4 != best ||
		    cpe_cost(c4, 17, 32, t, p.n4, 32) != best)
			fail_msg("round %d: plan has %llu keys (cost %.0f), brute force %.0f",
				 round, (unsigned long long)p.keys4,
				 cpe_cost(c4, 17, 32, t, p.n4, 32), best);
		pset_free(&s);
	}
}

/* Can lengths >= below of count[] be expanded to <= 4 targets, 12 bits? */
static int feasible6(const uint64_t *c6, int below)
{
	return cpe_best(c6, below, 128, BG_CPE_MAX_BITS) >= 0;
}

/* Random IPv6 mixes: the fewest lengths go to exact ranges, and the rest
 * is expanded optimally within 2^BG_CPE_MAX_BITS keys a prefix. */
static void test_plan_cpe_optimal_ipv6(void **state)
{
	int round;

	(void)state;
	rng = 0xc6e;
	for (round = 0; round < 300; round++) {
		struct bg_filter_params p;
		struct pset s = { 0 };
		uint64_t c4[33], c6[129];
		int nl = 1 + (int)rnd_below(9), i, l, t[BG_PROBES_MAX];
		int below, maxshort = -1;
		double best;

		for (i = 0; i < nl; i++) {
			int len = 14 + (int)rnd_below(115);

			counts_of(&s, c4, c6);
			if (!c6[len])
				add_counted(&s, 1, len, 1 + rnd_below(rnd_below(3) ? 4 : 32));
		}
		plan(&s, NULL, 0.001, &p);
		counts_of(&s, c4, c6);
		below = p.short6_below;
		check_plan_lengths(p.len6, p.n6, c6);
		for (l = 0; l < below && l <= 128; l++)
			if (c6[l])
				maxshort = l;
		/* lengths >= below fit; keeping the longest short one too would not */
		assert_true(feasible6(c6, below));
		if (maxshort >= 0 && feasible6(c6, maxshort))
			fail_msg("round %d: /%d went to exact ranges, but lengths >= %d fit in %d probes",
				 round, maxshort, maxshort, BG_PROBES_MAX);
		lengths_of(p.len6, p.n6, t);
		best = cpe_best(c6, below, 128, BG_CPE_MAX_BITS);
		if ((double)p.keys6 != best ||
		    cpe_cost(c6, below, 128, t, p.n6, BG_CPE_MAX_BITS) != best)
			fail_msg("round %d: plan has %llu IPv6 keys, brute force %.0f",
				 round, (unsigned long long)p.keys6, best);
		/* every Bloom prefix expands to at most 2^BG_CPE_MAX_BITS keys */
		for (l = below; l <= 128; l++) {
			int k, tt = 999;

			if (!c6[l])
				continue;
			for (k = 0; k < p.n6; k++)
				if (p.len6[k] >= l && p.len6[k] < tt)
					tt = p.len6[k];
			assert_true(tt != 999 && tt - l <= BG_CPE_MAX_BITS);
		}
		pset_free(&s);
	}
}

/* Every IPv6 length 1..128: the shortest go to exact ranges. */
static void test_plan_ipv6_every_length(void **state)
{
	static const __u8 want[] = { 128, 115, 102, 89 };
	struct bg_filter_params p;
	struct pset s = { 0 }, chain = { 0 };
	int l;
	void *mem;

	(void)state;
	/* Tiled: /1 at ::, /2 at 8000::, ... /128 at ffff..fffe: every
	 * prefix touches the next, so the short ones are ONE exact range. */
	for (l = 1; l <= 128; l++) /* /l starts at 2^128 - 2^(129-l) */
		pset_add(&s, mkpfx(1, l == 1 ? 0 : ~(u128)0 << (129 - l), l));
	for (l = 2; l <= 128; l++)
		assert_true(s.v[l - 1].a == pfx_last(&s.v[l - 2]) + 1);
	mem = build(&s, NULL, FPR_TIGHT, 3, &p);
	/* 77..128: 4 segments of 13 lengths (12 bits each), no cheaper way */
	assert_int_equal(p.short6_below, 77);
	assert_int_equal(p.short6_n, 1);
	assert_int_equal(p.n6, 4);
	assert_memory_equal(p.len6, want, 4);
	assert_int_equal(p.keys6, 4 * 8191);
	assert_int_equal(((struct bg_filter_header *)mem)->short6_n, 1);
	for (l = 0; l < 128; l++) {
		assert_true(lookup(mem, 1, s.v[l].a));
		assert_true(lookup(mem, 1, pfx_last(&s.v[l])));
	}
	assert_false(lookup(mem, 1, ~(u128)0)); /* the one address left */
	free(mem);

	/* Apart (free neighbours): one exact range per short length. /l
	 * takes the second quarter of a block of 2^(130-l), the next ones
	 * go into its upper half. */
	{
		u128 base = 0;
		int m = 128;

		for (l = 2; l <= 128; l++, m--) {
			u128 q = (u128)1 << (m - 2);

			pset_add(&chain, mkpfx(1, base + q, l));
			base += 2 * q;
		}
	}
	plan(&chain, NULL, FPR_TIGHT, &p);
	assert_int_equal(p.short6_below, 77);
	assert_int_equal(p.short6_n, 75);
	pset_free(&chain);
	pset_free(&s);
}

/* The allow tables of a built filter equal the merged ranges exactly. */
static void check_allow_tables(const void *mem, const struct pset *allow)
{
	const struct bg_filter_header *h = mem;
	const struct bg_block *e = mem;
	u128 (*r)[2] = calloc(allow->n + 1, sizeof(*r));
	size_t n, i;

	assert_non_null(r);
	n = pset_merge(allow, 0, r);
	assert_int_equal(h->allow4_n, n);
	for (i = 0; i < n; i++) {
		const struct bg_range4 *t = (const struct bg_range4 *)(e + h->allow4_off);

		assert_true(t[i].start == r[i][0] && t[i].end == r[i][1]);
	}
	n = pset_merge(allow, 1, r);
	assert_int_equal(h->allow6_n, n);
	for (i = 0; i < n; i++) {
		const struct bg_range6 *t = (const struct bg_range6 *)(e + hdr_allow6_off(h));

		assert_true(((u128)t[i].start_hi << 64 | t[i].start_lo) == r[i][0]);
		assert_true(((u128)t[i].end_hi << 64 | t[i].end_lo) == r[i][1]);
	}
	free(r);
}

/* Allow prefixes become merged exact ranges: adjacent and overlapping
 * ones merge, a gap of one address does not. */
static void test_plan_allow_merge(void **state)
{
	static const struct {
		const char *list[4];
		uint32_t n4, n6;
	} cases[] = {
		{ { "10.0.0.0/25", "10.0.0.128/25" }, 1, 0 },
		{ { "10.0.0.0/24", "10.0.0.5" }, 1, 0 },
		{ { "10.0.0.1", "10.0.0.2" }, 1, 0 }, /* adjacent, not siblings */
		{ { "10.0.0.1", "10.0.0.3" }, 2, 0 }, /* gap of one */
		{ { "0.0.0.0", "255.255.255.255" }, 2, 0 },
		{ { "255.255.255.254", "255.255.255.255" }, 1, 0 },
		{ { "0.0.0.0/0", "1.2.3.4" }, 1, 0 },
		{ { "10.0.0.0/8", "11.0.0.0/8", "12.0.0.0/7", "9.255.255.255" }, 1, 0 },
		{ { "::ffff:ffff:ffff:ffff", "0:0:0:1::/64" }, 0, 1 }, /* carry */
		{ { "::/1", "8000::/1" }, 0, 1 },
		{ { "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe",
		    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" }, 0, 1 },
		{ { "2001:db8::1", "2001:db8::3" }, 0, 2 },
		{ { "::/0", "2001:db8::/32", "10.0.0.1" }, 1, 1 },
		{ { "2001:db8::/33", "2001:db8:8000::/33", "2001:db9::/32" }, 0, 1 },
	};
	struct pset block = { 0 };
	size_t c, i;

	(void)state;
	pset_add(&block, P("192.0.2.1"));
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct bg_filter_params p;
		struct pset a = { 0 };
		int finish;

		for (i = 0; i < 4 && cases[c].list[i]; i++)
			pset_add(&a, P(cases[c].list[i]));
		/* finished as `load` does it, and raw (overlaps left in) */
		for (finish = 0; finish <= 1; finish++) {
			struct bg_list bl, al;
			void *mem;

			list_from(&bl, &block, 1);
			list_from(&al, &a, finish);
			assert_int_equal(plan_lists(&bl, &al, 0.001, &p), 0);
			if (p.allow4_n != cases[c].n4 || p.allow6_n != cases[c].n6)
				fail_msg("case %zu (%s, ...)%s: %u + %u ranges, expected %u + %u",
					 c, cases[c].list[0], finish ? "" : " unfinished",
					 p.allow4_n, p.allow6_n, cases[c].n4, cases[c].n6);
			mem = calloc(1, p.bytes);
			assert_non_null(mem);
			bg_filter_build(mem, &p, 5, BL(&bl, &al, NULL));
			check_allow_tables(mem, &a);
			free(mem);
			bg_list_free(&bl);
			bg_list_free(&al);
		}
		pset_free(&a);
	}
	pset_free(&block);
}

/* The plan's layout and the header written by the build agree. */
static void check_layout(const struct bg_filter_params *p, const void *mem,
			 uint64_t seed)
{
	const struct bg_filter_header *h = mem;

	assert_int_equal(p->bloom_off, 1 + (p->short4 ? BG_SHORT4_ELEMS : 0));
	assert_int_equal(p->fp_off, p->bloom_off + p->nblocks);
	assert_int_equal(p->allow4_off, p->fp_off + p->fp_nbuckets);
	assert_int_equal(p->allow6_off, p->allow4_off + (p->allow4_n + 7) / 8);
	assert_int_equal(p->short6_off, p->allow6_off + (p->allow6_n + 1) / 2);
	assert_int_equal(p->nelems, p->short6_off + (p->short6_n + 1) / 2);
	assert_int_equal(p->bytes, (size_t)p->nelems * BG_FILTER_VALUE_SIZE);
	assert_int_equal(p->n, p->keys4 + p->keys6);
	assert_int_equal(h->magic, BG_FILTER_MAGIC);
	assert_int_equal(h->nblocks, p->nblocks);
	assert_int_equal(h->k, p->k);
	assert_int_equal(h->seed, seed);
	assert_int_equal(h->entries, p->n);
	assert_int_equal(h->n4, p->n4);
	assert_int_equal(h->n6, p->n6);
	assert_memory_equal(h->len4, p->len4, (size_t)p->n4);
	assert_memory_equal(h->len6, p->len6, (size_t)p->n6);
	assert_int_equal(!!(h->flags & BG_FILTER_F_SHORT4), !!p->short4);
	assert_int_equal(h->allow4_off, p->allow4_off);
	assert_int_equal(h->allow4_n, p->allow4_n);
	assert_int_equal(hdr_allow6_off(h), p->allow6_off);
	assert_int_equal(h->fp_off, p->fp_off);
	assert_int_equal(h->fp_nbuckets, p->fp_nbuckets);
	assert_int_equal(h->allow6_n, p->allow6_n);
	assert_int_equal((hdr_allow6_off(h) + (h->allow6_n + 1) / 2), p->short6_off);
	assert_int_equal(h->short6_n, p->short6_n);
	assert_int_equal(bg_filter_nelems(h), p->nelems);
}

/* Random mixed lists: near hot spots, every family and length kind. */
static void random_lists(struct pset *b, struct pset *a, size_t nb, size_t na)
{
	u128 hot4[6], hot6[6];
	size_t i;

	for (i = 0; i < 6; i++) {
		hot4[i] = rnd128() & ones(0);
		hot6[i] = rnd128();
	}
	for (i = 0; i < nb; i++) {
		int v6 = (int)(rnd64() & 1), plen;
		u128 base;

		if (!v6 && rnd_below(10)) {
			plen = 17 + (int)rnd_below(16);
			base = hot4[rnd_below(6)] ^ (rnd128() & hostmask(0, 12));
		} else if (!v6) {
			plen = 8 + (int)rnd_below(9);
			base = rnd128();
		} else if (rnd_below(8)) {
			plen = 33 + (int)rnd_below(96);
			base = hot6[rnd_below(6)] ^ (rnd128() & hostmask(1, 32));
		} else {
			plen = 8 + (int)rnd_below(25);
			base = rnd128();
		}
		pset_add(b, mkpfx(v6, base, plen));
	}
	for (i = 0; i < na; i++) {
		const struct pfx *q = &b->v[rnd_below(b->n)];
		int plen = q->plen + (int)rnd_below((uint64_t)(width(q->v6) - q->plen) + 1);
		u128 x = q->a + rnd128() % (pfx_last(q) - q->a + 1);

		pset_add(a, mkpfx(q->v6, rnd_below(5) ? x : x + 1, plen));
	}
}

/* An address at, next to or inside a prefix. */
static u128 near(const struct pfx *p)
{
	u128 last = pfx_last(p), d = rnd_below(3);

	switch (rnd_below(5)) {
	case 0:
		return (p->a - d) & ones(p->v6);
	case 1:
		return (last + d) & ones(p->v6);
	case 2:
		return p->a + d;
	case 3:
		return last - d;
	}
	return p->a + rnd128() % (last - p->a + 1);
}

/* Build + lookups agree with the model: every listed address is found,
 * no unlisted one is (4e-9, fixed seed), the allowlist is exact. */
static void test_plan_build_agrees_random(void **state)
{
	struct bg_filter_params p;
	struct pset b = { 0 }, a = { 0 };
	size_t i, listed = 0, allows = 0;
	void *mem;

	(void)state;
	rng = 0xa9e;
	random_lists(&b, &a, 2000, 300);
	mem = build(&b, &a, FPR_TIGHT, 0xfeed, &p);
	check_layout(&p, mem, 0xfeed);
	check_allow_tables(mem, &a);
	if (!(p.short4 && p.n4 > 0 && p.n6 > 0 && p.short6_n > 0))
		fail_msg("test data: bitmap %d n4 %u n6 %u short6 %u", p.short4,
			 p.n4, p.n6, p.short6_n);
	assert_true(p.n4 <= BG_PROBES_MAX && p.n6 <= BG_PROBES_MAX);
	for (i = 0; i < 60000; i++) {
		const struct pfx *q = rnd_below(4) ? &b.v[rnd_below(b.n)] : &a.v[rnd_below(a.n)];
		int v6 = q->v6, got, want;
		u128 x = rnd_below(8) ? near(q) : rnd128() & ones(v6);
		char buf[INET6_ADDRSTRLEN];

		want = pset_has(&b, v6, x);
		got = lookup(mem, v6, x);
		if (got != want)
			fail_msg("%s: lookup %d, model %d", fmt(v6, x, buf), got, want);
		want = pset_has(&a, v6, x);
		got = allowed(mem, v6, x);
		if (got != want)
			fail_msg("%s: allowed %d, model %d", fmt(v6, x, buf), got, want);
		listed += (size_t)pset_has(&b, v6, x);
		allows += (size_t)want;
	}
	printf("# 60000 addresses: %zu listed, %zu allowlisted; n4 %u n6 %u short6 %u, %llu keys\n",
	       listed, allows, p.n4, p.n6, p.short6_n, (unsigned long long)p.n);
	assert_true(listed > 10000 && listed < 55000 && allows > 3000);
	free(mem);
	pset_free(&b);
	pset_free(&a);
}

/* Per address, the predicted rate meets the target (an address is probed
 * at up to max(n4, n6) lengths). */
static void test_plan_predicted_fpr(void **state)
{
	static const double targets[] = { 0.1, 0.01, 0.001, 1e-6, FPR_TIGHT };
	size_t t;
	int round;

	(void)state;
	rng = 0xf9;
	for (round = 0; round < 12; round++) {
		struct pset b = { 0 }, a = { 0 };

		random_lists(&b, &a, 200 + 300 * (size_t)round, 10);
		for (t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
			struct bg_filter_params p;
			int probes;

			plan(&b, &a, targets[t], &p);
			probes = p.n4 > p.n6 ? p.n4 : p.n6;
			if (p.predicted_addr > targets[t] ||
			    p.predicted * probes > targets[t] * (1 + 1e-12))
				fail_msg("target %g: predicted %g per address, %g per probe x %d probes",
					 targets[t], p.predicted_addr, p.predicted, probes);
			assert_true(p.predicted_addr >= p.predicted);
		}
		pset_free(&b);
		pset_free(&a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_fpr_min_many_lengths),
		cmocka_unit_test(test_plan_each_length),
		cmocka_unit_test(test_plan_bitmap),
		cmocka_unit_test(test_plan_counts_threads),
		cmocka_unit_test(test_plan_cpe_hand),
		cmocka_unit_test(test_plan_cpe_optimal_ipv4),
		cmocka_unit_test(test_plan_cpe_optimal_ipv6),
		cmocka_unit_test(test_plan_ipv6_every_length),
		cmocka_unit_test(test_plan_allow_merge),
		cmocka_unit_test(test_plan_build_agrees_random),
		cmocka_unit_test(test_plan_predicted_fpr),
	};

	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
