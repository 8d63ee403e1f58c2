// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Domain names in the filter builder and the userspace name lookups
 * (user/core/filter.c): exact, name-and-subdomains and subdomains-only rules,
 * the exact allow table (layout, sorting, de-duplication) and the
 * precedence of allow over block.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bloomgate/dns.h"

#include "core/mem_lookup.h"
#include "core/domains.h"
#include "core/filter.h"

#include "blocklist.h"
#include "core/lists.h"

/* A tiny target: with a handful of keys no probe below is a false
 * positive, so every "not listed" assertion is exact for this seed. */
#define TARGET 1e-6
#define SEED 0x5eed

struct fx {
	struct bg_names bnames, anames, all; /* all: both, for the builder */
	struct bg_list block, allow;
	struct bg_filter_params p;
	void *mem;
};

static void parse(struct bg_names *n, const char *text, enum bg_format fmt,
		  int allow)
{
	struct bg_dom_opts o = { .format = fmt, .allow = allow, .strict = 1 };

	assert_int_equal(bg_names_parse_buf(n, "t", text, strlen(text), &o), 0);
}

static void fx_build(struct fx *f, const char *block, enum bg_format bf,
		     const char *allow, enum bg_format af)
{
	memset(f, 0, sizeof(*f));
	bg_names_init(&f->bnames);
	bg_names_init(&f->anames);
	bg_list_init(&f->block);
	bg_list_init(&f->allow);
	parse(&f->bnames, block, bf, 0);
	bg_names_finish(&f->bnames);
	if (allow) {
		parse(&f->anames, allow, af, 1);
		bg_names_finish(&f->anames);
	}
	names_concat(&f->all, &f->bnames, allow ? &f->anames : NULL);
	assert_int_equal(bg_filter_plan(BL(&f->block, &f->allow, &f->all),
					TARGET, &f->p), 0);
	f->mem = calloc(1, f->p.bytes);
	assert_non_null(f->mem);
	bg_filter_build(f->mem, &f->p, SEED, BL(&f->block, &f->allow, &f->all));
}

static void fx_free(struct fx *f)
{
	free(f->mem);
	free(f->all.v);
	bg_list_free(&f->block);
	bg_list_free(&f->allow);
	bg_names_free(&f->bnames);
	bg_names_free(&f->anames);
}

/* listed? and at which label */
static int listed(const struct fx *f, const char *name, int *label)
{
	*label = -7;
	return bg_filter_test_name(f->mem, name, label);
}

static void test_rule_kinds(void **state)
{
	struct fx f;
	int at;

	(void)state;
	fx_build(&f, "exact.test\n*.subs.test\n", BG_FMT_PLAIN, NULL, 0);
	assert_true(((struct bg_filter_header *)f.mem)->flags & BG_FILTER_F_NAMES);
	assert_int_equal(f.p.name_keys, 2);
	assert_int_equal(listed(&f, "exact.test", &at), 1);
	assert_int_equal(at, 0);
	assert_int_equal(listed(&f, "EXACT.Test", &at), 1); /* case folded */
	assert_int_equal(listed(&f, "a.exact.test", &at), 0); /* exact only */
	assert_int_equal(listed(&f, "test", &at), 0);
	assert_int_equal(listed(&f, "subs.test", &at), 0); /* *.x: not x */
	assert_int_equal(listed(&f, "a.subs.test", &at), 1);
	assert_int_equal(at, 1);
	assert_int_equal(listed(&f, "x.y.z.subs.test", &at), 1);
	assert_int_equal(at, 3);
	assert_int_equal(listed(&f, "a.subs.tes", &at), 0);
	assert_int_equal(listed(&f, "a..test", &at), -1);
	assert_int_equal(listed(&f, "", &at), -1);
	fx_free(&f);

	fx_build(&f, "||tree.test^\n", BG_FMT_ADBLOCK, NULL, 0);
	assert_int_equal(f.p.name_keys, 2); /* EXACT and SUBS */
	assert_int_equal(listed(&f, "tree.test", &at), 1);
	assert_int_equal(at, 0);
	assert_int_equal(listed(&f, "www.tree.test", &at), 1);
	assert_int_equal(at, 1);
	assert_int_equal(listed(&f, "a.b.c.d.e.f.g.h.i.tree.test", &at), 1);
	assert_int_equal(at, 9);
	/* the suffix is 2 labels, probed as long as the name has at most
	 * BG_DNS_SUFFIX_MAX + ... labels above it: any depth works */
	assert_int_equal(listed(&f, "1.2.3.4.5.6.7.8.9.10.11.12.13.tree.test", &at), 1);
	assert_int_equal(listed(&f, "tree.test.example", &at), 0);
	assert_int_equal(listed(&f, "xtree.test", &at), 0);
	fx_free(&f);
}

/* listed? and how many Bloom probes (bloomgate_dns's dns_probes) */
static int probes_of(const struct fx *f, const char *name, int want_listed)
{
	__u32 probes = 99;
	int at;

	assert_int_equal(bg_filter_test_name_probes(f->mem, name, &at, &probes),
			 want_listed);
	return (int)probes;
}

/* subs_depths: one bit per label count of the block SUBS keys; a query
 * probes the exact key and only those suffix depths. */
static void test_subs_depths(void **state)
{
	const struct bg_filter_header *h;
	struct fx f;
	int at;

	(void)state;
	/* every SUBS rule at depth 2 (exact and allow rules set no bit) */
	fx_build(&f, "||evil.org^\n*.tracker.net\nads.example.com\n",
		 BG_FMT_ADBLOCK, "*.good.evil.org\n", BG_FMT_PLAIN);
	h = f.mem;
	assert_int_equal(h->subs_depths, 1U << 2);
	assert_int_equal(f.p.subs_depths, 1U << 2);
	assert_int_equal(probes_of(&f, "a.b.c.d.nothing.test", 0), 2);
	assert_int_equal(probes_of(&f, "a.b.c.d.www.tracker.net", 1), 2);
	assert_int_equal(probes_of(&f, "a.b.c.ads.example.com", 0), 2);
	assert_int_equal(probes_of(&f, "ads.example.com", 1), 1);
	assert_int_equal(probes_of(&f, "x.evil.org", 1), 2);
	assert_int_equal(probes_of(&f, "org", 0), 1);
	assert_int_equal(probes_of(&f, "example.com", 0), 1);
	/* the allow table is searched at every depth */
	assert_int_equal(bg_filter_name_allowed(f.mem, "a.b.c.good.evil.org", &at), 1);
	assert_int_equal(at, 3);
	fx_free(&f);

	/* several depths: 2, 3 and 10; a 10-label rule matches 11 labels */
	fx_build(&f, "||a.example^\n||b.c.example^\n"
		 "||b.c.d.e.f.g.h.i.j.test^\n", BG_FMT_ADBLOCK, NULL, 0);
	h = f.mem;
	assert_int_equal(h->subs_depths, (1U << 2) | (1U << 3) | (1U << 10));
	assert_int_equal(probes_of(&f, "1.2.3.4.5.6.7.8.9.10.11.nothing", 0), 4);
	assert_int_equal(probes_of(&f, "1.2.3.4.nothing", 0), 3);
	assert_int_equal(probes_of(&f, "x.b.c.example", 1), 3);
	assert_int_equal(probes_of(&f, "z.b.c.d.e.f.g.h.i.j.test", 1), 4);
	assert_int_equal(bg_filter_test_name(f.mem, "z.b.c.d.e.f.g.h.i.j.test", &at), 1);
	assert_int_equal(at, 1);
	fx_free(&f);

	/* no SUBS key: mask 0, the exact probe only */
	fx_build(&f, "ads.example.com\na.b.c.d.e.f.example\n", BG_FMT_PLAIN, NULL, 0);
	h = f.mem;
	assert_int_equal(h->subs_depths, 0);
	assert_int_equal(probes_of(&f, "a.b.c.d.e.f.g.h.i.j.k.l", 0), 1);
	assert_int_equal(probes_of(&f, "x.ads.example.com", 0), 1);
	assert_int_equal(probes_of(&f, "a.b.c.d.e.f.example", 1), 1);
	fx_free(&f);
}

/* A name of n labels, none listed: "l2.l3...ln.nothing" ("nothing" alone
 * for n = 1). */
static void unlisted_name(char *buf, int n)
{
	int i;

	*buf = 0;
	for (i = n; i > 1; i--)
		buf += sprintf(buf, "l%d.", i);
	strcpy(buf, "nothing");
}

/* The probes a negative query of n labels makes with mask m, counted from
 * the mask: 1 for the exact key, 1 per depth i of m with i < n. */
static __u32 model_probes(__u32 m, int n)
{
	__u32 below = n > BG_DNS_SUFFIX_MAX ? BG_SUBS_DEPTHS_ALL
					     : ((1U << n) - 1) & ~1U;

	return 1 + (__u32)__builtin_popcount(m & below);
}

/*
 * The userspace probe is the datapath's (bg_name_listed): for every mask
 * subs_depths can hold, a name probes its exact key and exactly the depths
 * of the mask below its label count, and no more past the deepest one --
 * names up to 13 labels, deeper than any depth. Checked through
 * bg_filter_test_name_probes and on bg_name_listed itself.
 */
static void test_probe_follows_depths(void **state)
{
	/* a 13-label name listed through the depth-2 SUBS key of evil.org */
	const char *deep = "a.b.c.d.e.f.g.h.i.j.k.evil.org";
	__u64 suf[BG_NAME_SUF_SIZE], ex;
	struct bg_filter_header *h;
	char name[128];
	struct fx f;
	__u32 m, p, at, rej = 0;
	int n, nl;

	(void)state;
	fx_build(&f, "||evil.org^\n", BG_FMT_ADBLOCK, NULL, 0);
	h = f.mem;
	assert_int_equal(h->subs_depths, 1U << 2);
	for (m = 0; m <= BG_SUBS_DEPTHS_ALL; m += 2) {
		h->subs_depths = (__u16)m;
		assert_true(bg_header_ok(h));
		for (n = 1; n <= 13; n++) {
			unlisted_name(name, n);
			if ((__u32)probes_of(&f, name, 0) != model_probes(m, n))
				fail_msg("mask %#x, %s: %d probes, expected %u", m,
					 name, probes_of(&f, name, 0),
					 model_probes(m, n));
			assert_int_equal(bg_name_hashes(name, h->seed, &ex, suf, &nl), 0);
			assert_int_equal(nl, n);
			p = 0;
			assert_int_equal(bg_name_listed(f.mem, h, ex, suf, (__u32)n,
							NULL, &p, &rej), 0);
			assert_int_equal(p, model_probes(m, n));
		}
		/* listed only when depth 2 is probed, after depth 1 if set */
		if (m & (1U << 2)) {
			assert_int_equal(probes_of(&f, deep, 1),
					 2 + ((m >> 1) & 1));
			assert_int_equal(bg_name_hashes(deep, h->seed, &ex, suf, &nl), 0);
			p = 0;
			at = 99;
			assert_int_equal(bg_name_listed(f.mem, h, ex, suf, (__u32)nl,
							&at, &p, &rej), 1);
			assert_int_equal(at, 11);
		} else {
			assert_int_equal((__u32)probes_of(&f, deep, 0),
					 model_probes(m, 13));
		}
	}
	fx_free(&f);
}

/* A header with subs_depths bits the builder never writes (0, above
 * BG_DNS_SUFFIX_MAX) is no filter. */
static void test_subs_depths_bad(void **state)
{
	static const __u16 bad[] = { 1U << 0, 1U << 11, 1U << 12, 1U << 15 };
	struct bg_filter_header *h;
	struct fx f;
	size_t i;

	(void)state;
	fx_build(&f, "||evil.org^\n", BG_FMT_ADBLOCK, NULL, 0);
	h = f.mem;
	assert_true(bg_header_ok(h));
	assert_int_equal(bg_filter_test_name(f.mem, "www.evil.org", NULL), 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		h->subs_depths = (__u16)((1U << 2) | bad[i]);
		assert_false(bg_header_ok(h));
		assert_int_equal(bg_filter_test_name(f.mem, "www.evil.org", NULL), 0);
		assert_int_equal(bg_filter_test_name(f.mem, "evil.org", NULL), 0);
	}
	h->subs_depths = BG_SUBS_DEPTHS_ALL; /* every legal bit: a filter */
	assert_true(bg_header_ok(h));
	fx_free(&f);
}

/* Pi-hole precedence: an allowed name passes under a blocked tree; its
 * own subdomains only when the allow rule covers them. */
static void test_allow_precedence(void **state)
{
	struct fx f;
	int at;

	(void)state;
	fx_build(&f, "||example.com^\n@@||fine.example.com^\n", BG_FMT_ADBLOCK,
		 "good.example.com\n*.wild.example.com\n", BG_FMT_PLAIN);
	/* good: EXACT; fine: EXACT + SUBS; *.wild: SUBS */
	assert_int_equal(((struct bg_filter_header *)f.mem)->allown_n, 4);
	assert_int_equal(bg_filter_name_allowed(f.mem, "good.example.com", &at), 1);
	assert_int_equal(at, 0);
	assert_int_equal(listed(&f, "good.example.com", &at), 1); /* still in Bloom */
	assert_int_equal(bg_filter_name_allowed(f.mem, "ads.good.example.com", &at), 0);
	assert_int_equal(listed(&f, "ads.good.example.com", &at), 1);
	assert_int_equal(at, 2);
	assert_int_equal(bg_filter_name_allowed(f.mem, "fine.example.com", &at), 1);
	assert_int_equal(at, 0);
	assert_int_equal(bg_filter_name_allowed(f.mem, "a.b.fine.example.com", &at), 1);
	assert_int_equal(at, 2);
	assert_int_equal(bg_filter_name_allowed(f.mem, "wild.example.com", &at), 0);
	assert_int_equal(bg_filter_name_allowed(f.mem, "x.wild.example.com", &at), 1);
	assert_int_equal(at, 1);
	assert_int_equal(bg_filter_name_allowed(f.mem, "example.com", &at), 0);
	assert_int_equal(bg_filter_name_allowed(f.mem, "other.example.com", &at), 0);
	assert_int_equal(bg_filter_name_allowed(f.mem, "Good.Example.COM", &at), 1);
	fx_free(&f);
}

/* The allow table sits at bg_allown_off(), sorted and distinct; the
 * planned count is an upper bound the map is sized for. */
static void test_allow_table_layout(void **state)
{
	const struct bg_filter_header *h;
	const __u64 *t;
	struct fx f;
	__u32 i;

	(void)state;
	/* good.example.com's EXACT key comes from three rules */
	fx_build(&f, "||example.com^\n@@||good.example.com^\n", BG_FMT_ADBLOCK,
		 "good.example.com\nother.example.com\n", BG_FMT_PLAIN);
	h = f.mem;
	assert_int_equal(f.p.allown_n, 4); /* EXACT+SUBS, EXACT, EXACT */
	assert_int_equal(h->allown_n, 3);
	assert_int_equal(f.p.allown_off, bg_allown_off(h));
	assert_true(bg_filter_nelems(h) <= f.p.nelems);
	assert_int_equal(f.p.nelems, f.p.allown_off + 1);
	t = (const __u64 *)((const struct bg_block *)f.mem + f.p.allown_off);
	for (i = 1; i < h->allown_n; i++)
		assert_true(t[i - 1] < t[i]);
	for (i = h->allown_n; i < BG_NAMEKEY_PER_ELEM; i++)
		assert_int_equal(t[i], 0);
	fx_free(&f);

	/* no allow rules: no table, nothing allowed */
	fx_build(&f, "||example.com^\n", BG_FMT_ADBLOCK, NULL, 0);
	h = f.mem;
	assert_int_equal(h->allown_n, 0);
	assert_int_equal(f.p.nelems, bg_filter_nelems(h));
	assert_int_equal(bg_filter_name_allowed(f.mem, "example.com", NULL), 0);
	fx_free(&f);
}

/* Many allow keys: the branch-free search finds every one and no other. */
static void test_allow_table_search(void **state)
{
	char *text = malloc(3000 * 24), *w = text;
	char name[64];
	struct fx f;
	int i;

	(void)state;
	assert_non_null(text);
	for (i = 0; i < 3000; i++)
		w += sprintf(w, "h%d.allowed.test\n", i * 2);
	fx_build(&f, "||test^\n", BG_FMT_ADBLOCK, text, BG_FMT_PLAIN);
	assert_int_equal(((struct bg_filter_header *)f.mem)->allown_n, 3000);
	for (i = 0; i < 6000; i++) {
		snprintf(name, sizeof(name), "h%d.allowed.test", i);
		assert_int_equal(bg_filter_name_allowed(f.mem, name, NULL), !(i & 1));
		assert_int_equal(bg_filter_test_name(f.mem, name, NULL), 1);
	}
	fx_free(&f);
	free(text);
}

/* Subdomain rules deeper than the probed suffixes are counted, not
 * loaded; their exact part still is. */
static void test_too_deep(void **state)
{
	const char *deep = "a.b.c.d.e.f.g.h.i.j.test"; /* 11 labels */
	struct fx f;
	int at;

	(void)state;
	fx_build(&f,
		 "||a.b.c.d.e.f.g.h.i.j.test^\n" /* 11 labels */
		 "||b.c.d.e.f.g.h.i.j.test^\n" /* 10 labels */
		 "||q.w.e.r.t.y.u.i.o.p.test^\n", /* 11 labels */
		 BG_FMT_ADBLOCK, "*.x.b.c.d.e.f.g.h.i.j.test\n", BG_FMT_PLAIN);
	assert_int_equal(f.p.names_too_deep, 3); /* two block, one allow */
	assert_int_equal(f.p.name_keys, 4); /* a, b, q: EXACT; b: SUBS */
	assert_int_equal(f.p.allown_n, 0);
	assert_int_equal(listed(&f, deep, &at), 1); /* its own exact key */
	assert_int_equal(at, 0);
	assert_int_equal(listed(&f, "z.a.b.c.d.e.f.g.h.i.j.test", &at), 1);
	assert_int_equal(at, 2); /* through the 10-label rule's SUBS key */
	assert_int_equal(listed(&f, "q.w.e.r.t.y.u.i.o.p.test", &at), 1);
	assert_int_equal(listed(&f, "z.q.w.e.r.t.y.u.i.o.p.test", &at), 0);
	fx_free(&f);
}

/* The smallest target `load` accepts works with names too (a query makes
 * 11 probes, so the per-probe target is below BG_FPR_MIN). */
static void test_min_target(void **state)
{
	struct bg_filter_params p;
	struct bg_names names;
	struct bg_list l;

	(void)state;
	bg_names_init(&names);
	bg_list_init(&l);
	parse(&names, "||example.com^\n", BG_FMT_ADBLOCK, 0);
	bg_names_finish(&names);
	assert_int_equal(bg_filter_plan(BL(&l, NULL, &names), BG_FPR_MIN, &p), 0);
	assert_true(p.predicted_addr <= BG_FPR_MIN);
	bg_list_free(&l);
	bg_names_free(&names);
}

/* The Bloom part is sized for the probes a query can make with the loaded
 * lists (1 + the depths holding a subdomain rule), not for the bound of
 * 1 + BG_DNS_SUFFIX_MAX: fewer bits for the same per-query target. */
static void test_sized_for_depths(void **state)
{
	char *one_text = malloc(64 * 2000), *all_text = malloc(64 * 2000);
	char *w1 = one_text, *wa = all_text;
	struct fx one, all;
	int i, j, d;

	(void)state;
	assert_non_null(one_text);
	assert_non_null(all_text);
	/* 2000 subdomain rules: all at depth 2, or 200 at each depth 1..10 */
	for (i = 0; i < 2000; i++) {
		w1 += sprintf(w1, "||n%d.test^\n", i);
		d = 1 + i % BG_DNS_SUFFIX_MAX;
		wa += sprintf(wa, "||n%d", i);
		for (j = 1; j < d; j++)
			wa += sprintf(wa, ".l%d", j);
		wa += sprintf(wa, "^\n");
	}
	fx_build(&one, one_text, BG_FMT_ADBLOCK, NULL, 0);
	fx_build(&all, all_text, BG_FMT_ADBLOCK, NULL, 0);
	assert_int_equal(one.p.subs_depths, 1U << 2);
	assert_int_equal(all.p.subs_depths, BG_SUBS_DEPTHS_ALL);
	assert_int_equal(one.p.name_keys, 4000);
	assert_int_equal(all.p.name_keys, 4000);
	/* per query: 1 + 1 probes vs 1 + 10 */
	assert_true(one.p.predicted_addr <= TARGET);
	assert_true(all.p.predicted_addr <= TARGET);
	assert_true(one.p.predicted <= TARGET / 2);
	assert_true(one.p.predicted > TARGET / (1 + BG_DNS_SUFFIX_MAX));
	assert_true(all.p.predicted <= TARGET / (1 + BG_DNS_SUFFIX_MAX));
	assert_true(one.p.nblocks < all.p.nblocks);
	fx_free(&one);
	fx_free(&all);
	free(one_text);
	free(all_text);
}

/* A filter without name keys answers no name, whatever its bits. */
static void test_no_names_flag(void **state)
{
	struct bg_filter_params p;
	struct bg_list l;
	void *mem;

	(void)state;
	bg_list_init(&l);
	assert_int_equal(bg_list_parse_buf(&l, "t", "192.0.2.1\n", 10, NULL), 0);
	assert_int_equal(bg_filter_plan(BL(&l, NULL, NULL), 0.4, &p), 0);
	mem = calloc(1, p.bytes);
	assert_non_null(mem);
	bg_filter_build(mem, &p, 1, BL(&l, NULL, NULL));
	assert_false(((struct bg_filter_header *)mem)->flags & BG_FILTER_F_NAMES);
	memset((char *)mem + 64 * p.bloom_off, 0xff, 64ULL * p.nblocks);
	assert_int_equal(bg_filter_test_name(mem, "example.com", NULL), 0);
	assert_int_equal(bg_filter_test_name(mem, "bad..name", NULL), -1);
	free(mem);
	bg_list_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_kinds),
		cmocka_unit_test(test_allow_precedence),
		cmocka_unit_test(test_allow_table_layout),
		cmocka_unit_test(test_allow_table_search),
		cmocka_unit_test(test_too_deep),
		cmocka_unit_test(test_no_names_flag),
		cmocka_unit_test(test_min_target),
		cmocka_unit_test(test_sized_for_depths),
		cmocka_unit_test(test_subs_depths),
		cmocka_unit_test(test_probe_follows_depths),
		cmocka_unit_test(test_subs_depths_bad),
	};

	return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}
