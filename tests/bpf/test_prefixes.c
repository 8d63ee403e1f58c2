// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CIDR prefixes and allowlists (issue 3) through the real XDP program with
 * BPF_PROG_TEST_RUN: cfg_match dst, cfg_action drop. Every packet is judged
 * against an independent model (a linear scan over the prefixes, in 128-bit
 * host-order arithmetic, sharing no code with user/), and its counters are
 * checked: one of negatives / positives, dropped or passed, allowlisted
 * exactly when a positive was passed by the allowlist, and probes between
 * 1 and the header's bound (n4 + the /16 bitmap for IPv4, n6 + the exact
 * short-prefix ranges for IPv6).
 *
 * Filters are built at --fpr 1e-9 with fixed seeds, so a Bloom false
 * positive (which would make a "not listed" expectation fail) has
 * probability ~1e-9 per probe and, the seeds being fixed, every run is the
 * same: a failure here is never flaky. Only the real-list tests (FireHOL,
 * Spamhaus) use the default 0.001, and they assert members only.
 *
 * Placement of "one prefix of every length": a prefix of length l sits in
 * the middle quarter of an aligned block of 2^(W-l+2) addresses, so both
 * neighbours (first - 1, last + 1) are free; the next, longer prefix goes
 * into the free half of that block. This holds lengths 2..W in one list;
 * /1 cannot join them (a /1 plus one prefix of each length 2..32 leaves a
 * single free address), so /0 and /1 get filters of their own, as does
 * every length alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bloomgate/abi.h"
#include "bloomgate/bloom.h"
#include "core/filter.h"
#include "core/lists.h"
#include "kern/attach.h"
#include "kern/pins.h"
#include "kern/swap.h"

#include "pktgen.h"
#include "bloomgate.skel.h"

/* --fpr 1e-9: a Bloom false positive on a "not listed" expectation is a
 * ~1e-9 event per address (and with fixed seeds, never flaky). */
#define FPR_TIGHT BG_FPR_MIN
#define DATA_DIR "../shared/data" /* relative to the repository root */

#include "prefix_lists.h"

/* Through lists.c: does any entry of the finished list cover x? */
static int list_covers(const struct bg_list *l, int v6, u128 x)
{
	size_t i;

	if (!v6) {
		__u32 be = htonl((uint32_t)x);

		for (i = 0; i < l->n4; i++)
			if (bg_prefix_covers4(&l->v4[i], be))
				return 1;
	} else {
		__u8 b[16];

		to_bytes(x, b);
		for (i = 0; i < l->n6; i++)
			if (bg_prefix_covers6(&l->v6[i], b))
				return 1;
	}
	return 0;
}

/*
 * One prefix of each length in lens[] (ascending, distinct, all >= 2)
 * inside the aligned block [base, base + 2^m), in disjoint places with free
 * neighbours: a prefix of length l takes the second or third quarter (at
 * random) of a random aligned sub-block of 2^(W-l+2) addresses, and the
 * next prefixes go into the half of that sub-block it left free. The first
 * and last address of every (sub-)block stay free.
 */
static void place_chain_in(int v6, const int *lens, int n, u128 base, int m,
			  struct pset *out)
{
	int w = width(v6), i;

	for (i = 0; i < n; i++) {
		int need = w - lens[i] + 2;
		u128 q;

		assert_true(need >= 2 && need <= m);
		if (need < m) {
			base += (rnd128() & (((u128)1 << (m - need)) - 1)) << need;
			m = need;
		}
		q = (u128)1 << (m - 2);
		if (rnd64() & 1) {
			pset_add(out, mkpfx(v6, base + 2 * q, lens[i]));
		} else {
			pset_add(out, mkpfx(v6, base + q, lens[i]));
			base += 2 * q;
		}
		m--;
	}
}

static void place_chain(int v6, const int *lens, int n, struct pset *out)
{
	place_chain_in(v6, lens, n, 0, width(v6), out);
}

/* ---- Fixture ------------------------------------------------------------- */

struct fx {
	struct bloomgate *skel;
	int prog, filters, stats;
	struct pkt pk[2]; /* templates: [0] IPv4, [1] IPv6 */
	struct bg_filter_params par; /* plan of the filter published last */
	struct bg_filter_header hdr; /* its header, read back from the map */
	unsigned long runs;
};

static int fx_setup(void **state)
{
	struct pkt_spec s4 = { .family = AF_INET, .src = "192.0.2.1",
			       .dst = "192.0.2.2", .payload = 16 };
	struct pkt_spec s6 = { .family = AF_INET6, .src = "2001:db8::1",
			       .dst = "2001:db8::2", .payload = 16 };
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->skel = bloomgate__open();
	assert_non_null(f->skel);
	f->skel->rodata->cfg_match = BG_MATCH_DST;
	f->skel->rodata->cfg_action = BG_ACTION_DROP;
	assert_int_equal(bloomgate__load(f->skel), 0);
	f->prog = bpf_program__fd(f->skel->progs.bloomgate_xdp);
	f->filters = bpf_map__fd(f->skel->maps.bg_filters);
	f->stats = bpf_map__fd(f->skel->maps.bg_stats);
	assert_int_equal(pkt_build(&f->pk[0], &s4), 0);
	assert_int_equal(pkt_build(&f->pk[1], &s6), 0);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	print_message("# %lu packets through the program\n", f->runs);
	bloomgate__destroy(f->skel);
	free(f);
	return 0;
}

/* Plans, builds and publishes a filter of the finished lists; keeps the
 * plan and the header as the map holds it. */
static void publish_lists(struct fx *f, const struct bg_list *block,
			  const struct bg_list *allow, double fpr, uint64_t seed)
{
	const void *mem;
	size_t len;
	int fd;

	assert_int_equal(plan_lists(block, allow, fpr, &f->par), 0);
	fd = bg_filter_create(&f->par, seed, BL(block, allow, NULL));
	if (fd < 0)
		fail_msg("bg_filter_create: %s", strerror(-fd));
	assert_int_equal(bg_filter_publish(f->filters, fd), 0);
	close(fd);
	assert_int_equal(bg_filter_map_current(f->filters, &mem, &len), 0);
	memcpy(&f->hdr, mem, sizeof(f->hdr));
	bg_filter_unmap(mem, len);
	/* The bound on Bloom probes, whatever the list. */
	if (f->hdr.n4 > BG_PROBES_MAX || f->hdr.n6 > BG_PROBES_MAX)
		fail_msg("header probes n4=%u n6=%u, BG_PROBES_MAX is %d",
			 f->hdr.n4, f->hdr.n6, BG_PROBES_MAX);
}

static void publish(struct fx *f, const struct pset *block,
		    const struct pset *allow, double fpr, uint64_t seed)
{
	struct bg_list bl, al;

	list_from(&bl, block, 1);
	list_from(&al, allow, 1);
	publish_lists(f, &bl, allow ? &al : NULL, fpr, seed);
	bg_list_free(&bl);
	bg_list_free(&al);
}

/* Lookups an address may cost: Bloom probes plus the exact part. */
static __u64 probe_bound(const struct fx *f, int v6)
{
	if (v6)
		return f->hdr.n6 + (f->hdr.short6_n ? 1 : 0);
	return f->hdr.n4 + ((f->hdr.flags & BG_FILTER_F_SHORT4) ? 1 : 0);
}

/* ---- Running packets ------------------------------------------------------ */

enum want {
	W_NEG, /* not listed: passed, a negative */
	W_DROP, /* listed, not allowlisted: dropped */
	W_ALLOW, /* listed and allowlisted: passed, counted allowlisted */
};

static const char *const WANT_NAME[] = { "pass (not listed)", "drop",
					 "pass (allowlisted)" };

static enum want model(const struct pset *block, const struct pset *allow,
		       int v6, u128 x)
{
	if (!pset_has(block, v6, x))
		return W_NEG;
	return allow && pset_has(allow, v6, x) ? W_ALLOW : W_DROP;
}

static void counters(struct fx *f, struct bg_counters *c)
{
	assert_int_equal(bg_counters_read(f->stats, c), 0);
}

/* One packet to destination x; the verdict and every counter's delta. */
static __u32 run(struct fx *f, int v6, u128 x, struct bg_counters *d)
{
	struct pkt *p = &f->pk[v6 ? 1 : 0];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p->buf,
		    .data_size_in = (__u32)p->len, .repeat = 1);
	struct bg_counters before, after;
	int i, err;

	if (v6) {
		to_bytes(x, p->buf + p->l3 + 24);
	} else {
		__u32 be = htonl((uint32_t)x);
		__u16 sum;

		memcpy(p->buf + p->l3 + 16, &be, 4);
		memset(p->buf + p->l3 + 10, 0, 2);
		sum = pkt_csum(p->buf + p->l3, 20, 0);
		memcpy(p->buf + p->l3 + 10, &sum, 2);
	}
	counters(f, &before);
	err = bpf_prog_test_run_opts(f->prog, &o);
	if (err)
		fail_msg("BPF_PROG_TEST_RUN: %s", strerror(-err));
	counters(f, &after);
	for (i = 0; i < BG_CNT_SLOTS; i++)
		d->cnt[i] = after.cnt[i] - before.cnt[i];
	for (i = 0; i < BG_MAL_SLOTS; i++)
		d->malformed[i] = after.malformed[i] - before.malformed[i];
	f->runs++;
	return o.retval;
}

/* Runs a packet to x and checks the verdict and all counters against w. */
static void expect(struct fx *f, int v6, u128 x, enum want w, const char *what)
{
	struct bg_counters d;
	__u64 want[BG_CNT_SLOTS] = { 0 }, bound = probe_bound(f, v6);
	__u32 verdict = run(f, v6, x, &d);
	char a[INET6_ADDRSTRLEN];
	int i;

	want[BG_CNT_PACKETS] = 1;
	want[v6 ? BG_CNT_IPV6 : BG_CNT_IPV4] = 1;
	want[w == W_NEG ? BG_CNT_NEGATIVES : BG_CNT_POSITIVES] = 1;
	want[w == W_DROP ? BG_CNT_DROPPED : BG_CNT_PASSED] = 1;
	want[BG_CNT_ALLOWLISTED] = w == W_ALLOW;
	if (verdict != (w == W_DROP ? XDP_DROP : XDP_PASS))
		fail_msg("%s: %s: verdict %s, expected %s", what, fmt(v6, x, a),
			 verdict == XDP_DROP ? "drop" : verdict == XDP_PASS ? "pass" : "other",
			 WANT_NAME[w]);
	if (d.cnt[BG_CNT_PROBES] > bound || (bound && !d.cnt[BG_CNT_PROBES]))
		fail_msg("%s: %s: %llu probes, expected 1..%llu (n4 %u, n6 %u, bitmap %d, short6 %u)",
			 what, fmt(v6, x, a), (unsigned long long)d.cnt[BG_CNT_PROBES],
			 (unsigned long long)bound, f->hdr.n4, f->hdr.n6,
			 !!(f->hdr.flags & BG_FILTER_F_SHORT4), f->hdr.short6_n);
	for (i = 0; i < BG_CNT_SLOTS; i++) {
		if (i == BG_CNT_PROBES)
			continue;
		if (d.cnt[i] != want[i])
			fail_msg("%s: %s (%s): counter %d moved by %llu, expected %llu",
				 what, fmt(v6, x, a), WANT_NAME[w], i,
				 (unsigned long long)d.cnt[i],
				 (unsigned long long)want[i]);
	}
	for (i = 0; i < BG_MAL_SLOTS; i++)
		if (d.malformed[i])
			fail_msg("%s: %s: malformed reason %d moved", what,
				 fmt(v6, x, a), i);
}

static void expect_model(struct fx *f, const struct pset *block,
			 const struct pset *allow, int v6, u128 x,
			 const char *what)
{
	expect(f, v6, x, model(block, allow, v6, x), what);
}

/* A random address strictly inside p, or its first one when p is tiny. */
static u128 inner(const struct pfx *p)
{
	u128 span = pfx_last(p) - p->a;

	return span >= 2 ? p->a + 1 + rnd128() % (span - 1) : p->a;
}

/*
 * p is listed (and l, the finished list the filter was built from, holds
 * it): its first, last and a random inner address are dropped; the address
 * just below and just above (when they exist) are asserted free in l
 * through bg_prefix_covers4/6 and passed as negatives.
 */
static void expect_prefix(struct fx *f, const struct bg_list *l,
			  const struct pfx *p, const char *what)
{
	u128 last = pfx_last(p);
	char b[INET6_ADDRSTRLEN + 8], msg[256];

	snprintf(msg, sizeof(msg), "%s: %s", what, fmtp(p, b));
	expect(f, p->v6, p->a, W_DROP, msg);
	expect(f, p->v6, last, W_DROP, msg);
	expect(f, p->v6, inner(p), W_DROP, msg);
	if (p->a > 0) {
		if (list_covers(l, p->v6, p->a - 1))
			fail_msg("%s: the address below is listed (bad test data)", msg);
		expect(f, p->v6, p->a - 1, W_NEG, msg);
	}
	if (last < ones(p->v6)) {
		if (list_covers(l, p->v6, last + 1))
			fail_msg("%s: the address above is listed (bad test data)", msg);
		expect(f, p->v6, last + 1, W_NEG, msg);
	}
}

/* ---- Tests: every prefix length ------------------------------------------ */

/* The lengths CPE will probe: descending, within [lo, hi], longest = hi. */
static void check_lengths(const __u8 *len, int n, int lo, int hi)
{
	int i;

	assert_true(n >= 1 && n <= BG_PROBES_MAX);
	assert_int_equal(len[0], hi);
	for (i = 0; i < n; i++) {
		assert_true(len[i] >= lo && len[i] <= hi);
		if (i)
			assert_true(len[i] < len[i - 1]);
	}
}

/* Each length alone in its own filter: /0 matches everything, every other
 * prefix its own range and nothing next to it. */
static void each_length_alone(struct fx *f, int v6, const int *lens, int n)
{
	int i, j;

	rng_seed(v6 ? 0x6a1 : 0x4a1);
	for (i = 0; i < n; i++) {
		struct pset s = { 0 };
		struct bg_list l;
		struct pfx p = mkpfx(v6, rnd128(), lens[i]);
		char what[64];

		snprintf(what, sizeof(what), "%s /%d alone", v6 ? "ipv6" : "ipv4", lens[i]);
		pset_add(&s, p);
		list_from(&l, &s, 1);
		publish_lists(f, &l, NULL, FPR_TIGHT, 0x1000 + (uint64_t)lens[i]);
		if (!v6) {
			if (lens[i] <= BG_SHORT4_MAXLEN) {
				assert_true(f->hdr.flags & BG_FILTER_F_SHORT4);
				assert_int_equal(f->hdr.n4, 0);
			} else {
				assert_false(f->hdr.flags & BG_FILTER_F_SHORT4);
				assert_int_equal(f->hdr.n4, 1);
				assert_int_equal(f->hdr.len4[0], lens[i]);
			}
		} else {
			assert_int_equal(f->hdr.n6, 1);
			assert_int_equal(f->hdr.len6[0], lens[i]);
			assert_int_equal(f->hdr.short6_n, 0);
		}
		expect_prefix(f, &l, &p, what);
		/* Anywhere else: the model says (for /0: all dropped). */
		expect(f, v6, 0, lens[i] == 0 ? W_DROP : model(&s, NULL, v6, 0), what);
		expect(f, v6, ones(v6), lens[i] == 0 ? W_DROP : model(&s, NULL, v6, ones(v6)), what);
		for (j = 0; j < 64; j++) {
			u128 x = rnd128() & ones(v6);

			expect(f, v6, x, lens[i] == 0 ? W_DROP : model(&s, NULL, v6, x), what);
		}
		/* The other family has nothing listed: not a single probe. */
		expect(f, !v6, rnd128() & ones(!v6), W_NEG, what);
		bg_list_free(&l);
		pset_free(&s);
	}
}

static void test_ipv4_each_length_alone(void **state)
{
	/* Every length is in test_ipv4_every_length too, and every length's
	 * plan in tests/unit/test_plan.c: a publish waits for an RCU grace
	 * period (~0.1 s here), so only the corners get a filter each. */
	static const int lens[] = { 0, 1, 2, 8, 15, 16, 17, 24, 31, 32 };

	each_length_alone(*state, 0, lens, (int)(sizeof(lens) / sizeof(lens[0])));
}

static void test_ipv6_lengths_alone(void **state)
{
	static const int lens[] = { 0, 1, 2, 28, 64, 127, 128 };

	each_length_alone(*state, 1, lens, (int)(sizeof(lens) / sizeof(lens[0])));
}

/* Keys the plan must have made: every prefix of length l >= lo expanded
 * to the shortest probed length t >= l, 2^(t-l) keys. */
static __u64 expected_keys(const struct pset *s, int v6, const __u8 *len,
			   int n, int lo)
{
	__u64 keys = 0;
	size_t i;

	for (i = 0; i < s->n; i++) {
		int t = 999, j;

		if (s->v[i].v6 != v6 || s->v[i].plen < lo)
			continue;
		for (j = 0; j < n; j++)
			if (len[j] >= s->v[i].plen && len[j] < t)
				t = len[j];
		assert_true(t != 999);
		keys += 1ULL << (t - s->v[i].plen);
	}
	return keys;
}

/* Lengths 2..32 in one list: the /16 bitmap holds 2..16, CPE maps the 16
 * lengths 17..32 to BG_PROBES_MAX probed ones. */
static void test_ipv4_every_length(void **state)
{
	struct fx *f = *state;
	struct pset s = { 0 };
	struct bg_list l;
	int lens[31], i;

	rng_seed(0x4e1);
	for (i = 0; i < 31; i++)
		lens[i] = i + 2;
	place_chain(0, lens, 31, &s);
	list_from(&l, &s, 1);
	assert_int_equal(l.n4, 31);
	publish_lists(f, &l, NULL, FPR_TIGHT, 0x4e1);
	assert_true(f->hdr.flags & BG_FILTER_F_SHORT4);
	assert_int_equal(f->hdr.n4, BG_PROBES_MAX);
	check_lengths(f->hdr.len4, f->hdr.n4, BG_SHORT4_MAXLEN + 1, 32);
	assert_int_equal(f->par.short4_prefixes, 15);
	assert_int_equal(f->par.keys4,
			 expected_keys(&s, 0, f->hdr.len4, f->hdr.n4, BG_SHORT4_MAXLEN + 1));
	print_message("ipv4 /2../32: probed /%u /%u /%u /%u + bitmap, %llu Bloom keys\n",
		      f->hdr.len4[0], f->hdr.len4[1], f->hdr.len4[2], f->hdr.len4[3],
		      (unsigned long long)f->par.keys4);
	for (i = 0; i < (int)s.n; i++)
		expect_prefix(f, &l, &s.v[i], "ipv4 every length");
	/* Probes per negative: exactly the bound (bitmap + n4) here. */
	for (i = 0; i < 2000; i++)
		expect_model(f, &s, NULL, 0, rnd128() & ones(0), "ipv4 every length, random");
	bg_list_free(&l);
	pset_free(&s);
}

/* /28 /32 /48 /64 /128 in one list: CPE merges 28 into 32. */
static void test_ipv6_common_lengths(void **state)
{
	static const int lens[] = { 28, 32, 48, 64, 128 };
	static const __u8 want[] = { 128, 64, 48, 32 };
	struct fx *f = *state;
	struct pset s = { 0 };
	struct bg_list l;
	int rep, i;

	rng_seed(0x6c1);
	/* Three disjoint chains, each in its own quarter of the space. */
	for (rep = 1; rep <= 3; rep++)
		place_chain_in(1, lens, 5, (u128)rep << 126, 126, &s);
	for (i = 0; i < (int)s.n; i++)
		assert_int_equal(s.v[i].plen, lens[i % 5]);
	list_from(&l, &s, 1);
	assert_int_equal(l.n6, 15);
	publish_lists(f, &l, NULL, FPR_TIGHT, 0x6c1);
	assert_int_equal(f->hdr.short6_n, 0);
	assert_int_equal(f->hdr.n6, 4);
	assert_memory_equal(f->hdr.len6, want, 4);
	assert_int_equal(f->par.keys6, expected_keys(&s, 1, f->hdr.len6, 4, 0));
	for (i = 0; i < (int)s.n; i++)
		expect_prefix(f, &l, &s.v[i], "ipv6 common lengths");
	for (i = 0; i < 500; i++) {
		/* near the listed ones: same top 64 bits, random below */
		const struct pfx *p = &s.v[rnd_below(s.n)];
		u128 x = (p->a & ~(u128)0 << 64) | rnd64();

		expect_model(f, &s, NULL, 1, x, "ipv6 common lengths, near");
	}
	bg_list_free(&l);
	pset_free(&s);
}

/* Lengths 2..128 in one list: more than 4 segments of 12 bits, so the
 * shortest lengths go to the exact short-prefix ranges (short6_n > 0). */
static void test_ipv6_every_length(void **state)
{
	static const __u8 want[] = { 128, 115, 102, 89 };
	struct fx *f = *state;
	struct pset s = { 0 };
	struct bg_list l;
	int lens[127], i;

	rng_seed(0x6e1);
	for (i = 0; i < 127; i++)
		lens[i] = i + 2;
	place_chain(1, lens, 127, &s);
	list_from(&l, &s, 1);
	assert_int_equal(l.n6, 127);
	publish_lists(f, &l, NULL, FPR_TIGHT, 0x6e1);
	/* 77..128 is 4 segments of 13 lengths (12 bits of expansion each);
	 * 2..76 are exact ranges, one each (none adjacent). */
	assert_int_equal(f->par.short6_below, 77);
	assert_int_equal(f->hdr.short6_n, 75);
	assert_int_equal(f->hdr.n6, 4);
	assert_memory_equal(f->hdr.len6, want, 4);
	assert_int_equal(f->par.keys6, expected_keys(&s, 1, f->hdr.len6, 4, 77));
	for (i = 0; i < (int)s.n; i++)
		expect_prefix(f, &l, &s.v[i], "ipv6 every length");
	for (i = 0; i < 1000; i++)
		expect_model(f, &s, NULL, 1, rnd128(), "ipv6 every length, random");
	bg_list_free(&l);
	pset_free(&s);
}

/* ---- Tests: allowlist ------------------------------------------------------ */

static void test_allowlist_in_blocked_ranges(void **state)
{
	static const char *const blocked[] = {
		"10.20.0.0/16", /* IPv4 bitmap */
		"198.51.100.0/24", /* IPv4 Bloom */
		"172.16.16.0/20", "192.0.2.99",
		"3e00::/8", "2c0f:f000::/24", /* IPv6 exact short ranges */
		"2a01:100::/40", "2001:db8:aaaa::/48", /* IPv6 Bloom */
		"2a02:1:2:3300::/56", "2a03:1:2:3:4400::/72", "2d00::1",
	};
	static const char *const allowed[] = {
		"10.20.30.40", "198.51.100.7", "198.51.100.32/28",
		"203.0.113.5", /* not blocked */
		"2001:db8:aaaa::7", "2c0f:f0ab::1", "3e11::/124",
		"2001:db8:aaaa:1::/64",
		"2001:db8:bbbb::1", /* not blocked */
	};
	/* Allowlisted addresses inside blocked ranges, and next to them. */
	static const struct {
		const char *addr;
		enum want w;
	} holes[] = {
		{ "10.20.30.39", W_DROP }, /* IPv4 bitmap */
		{ "10.20.30.40", W_ALLOW },
		{ "10.20.30.41", W_DROP },
		{ "198.51.100.6", W_DROP }, /* IPv4 Bloom */
		{ "198.51.100.7", W_ALLOW },
		{ "198.51.100.8", W_DROP },
		{ "198.51.100.31", W_DROP }, /* the /28 */
		{ "198.51.100.32", W_ALLOW },
		{ "198.51.100.33", W_ALLOW },
		{ "198.51.100.40", W_ALLOW },
		{ "198.51.100.47", W_ALLOW },
		{ "198.51.100.48", W_DROP },
		{ "2001:db8:aaaa::6", W_DROP }, /* IPv6 Bloom */
		{ "2001:db8:aaaa::7", W_ALLOW },
		{ "2001:db8:aaaa::8", W_DROP },
		{ "2001:db8:aaaa:0:ffff:ffff:ffff:ffff", W_DROP },
		{ "2001:db8:aaaa:1::", W_ALLOW },
		{ "2001:db8:aaaa:1:ffff:ffff:ffff:ffff", W_ALLOW },
		{ "2001:db8:aaaa:2::", W_DROP },
		{ "2c0f:f0ab::", W_DROP }, /* IPv6 exact short range */
		{ "2c0f:f0ab::1", W_ALLOW },
		{ "2c0f:f0ab::2", W_DROP },
		{ "3e10:ffff:ffff:ffff:ffff:ffff:ffff:ffff", W_DROP },
		{ "3e11::", W_ALLOW },
		{ "3e11::f", W_ALLOW },
		{ "3e11::10", W_DROP },
		/* allowlisted, not blocked: negatives, allowlist not consulted */
		{ "203.0.113.5", W_NEG },
		{ "2001:db8:bbbb::1", W_NEG },
	};
	struct fx *f = *state;
	struct pset b = { 0 }, a = { 0 };
	size_t i;

	for (i = 0; i < sizeof(blocked) / sizeof(blocked[0]); i++)
		pset_add(&b, P(blocked[i]));
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		pset_add(&a, P(allowed[i]));
	publish(f, &b, &a, FPR_TIGHT, 0xa11);
	assert_true(f->hdr.flags & BG_FILTER_F_SHORT4);
	assert_int_equal(f->hdr.short6_n, 2); /* /8 and /24 */
	assert_int_equal(f->par.short6_below, 25);
	assert_int_equal(f->hdr.allow4_n, 4);
	assert_int_equal(f->hdr.allow6_n, 5);

	for (i = 0; i < sizeof(holes) / sizeof(holes[0]); i++) {
		int v6 = strchr(holes[i].addr, ':') != NULL;

		/* the model agrees with the table (the test data is right) */
		assert_int_equal(model(&b, &a, v6, A(holes[i].addr)), holes[i].w);
		expect(f, v6, A(holes[i].addr), holes[i].w, holes[i].addr);
	}
	/* Every address of the /24 and its neighbours, and of the /28 region
	 * in the /16, by the model. */
	for (i = 0; i < 258; i++)
		expect_model(f, &b, &a, 0, A("198.51.99.255") + i, "198.51.100.0/24 sweep");
	for (i = 0; i < 256; i++)
		expect_model(f, &b, &a, 0, A("10.20.30.0") + i, "10.20.30.0/24 sweep");
	for (i = 0; i < 64; i++)
		expect_model(f, &b, &a, 1, A("3e11::") - 16 + i, "3e11::/124 sweep");
	/* Ends of every blocked range. */
	for (i = 0; i < b.n; i++) {
		expect_model(f, &b, &a, b.v[i].v6, b.v[i].a, "blocked first");
		expect_model(f, &b, &a, b.v[i].v6, pfx_last(&b.v[i]), "blocked last");
		expect_model(f, &b, &a, b.v[i].v6, inner(&b.v[i]), "blocked inner");
	}
	pset_free(&b);
	pset_free(&a);
}

/* Disjoint ranges merged from a prefix set, independently of filter.c. */
static size_t merged_count(const struct pset *s, int v6)
{
	u128 (*r)[2] = calloc(s->n + 1, sizeof(*r));
	size_t w;

	assert_non_null(r);
	w = pset_merge(s, v6, r);
	free(r);
	return w;
}

/* n disjoint, pairwise non-adjacent prefixes of one family, spread over the
 * space; with edges, the first starts at 0 and the last ends at all-ones. */
static void spread(struct pset *s, int v6, size_t n, int edges)
{
	int w = width(v6);
	u128 stride = (ones(v6) / n) + 1, i;

	for (i = 0; i < n; i++) {
		int plen = w - (int)rnd_below(8); /* up to 256 addresses */
		u128 size = (u128)1 << (w - plen), base = i * stride, off;

		/* stride >= 2^(w-7) > 2 * 256: room for gaps on both sides */
		off = size + (rnd128() % ((stride - 2 * size) / size)) * size;
		if (edges && i == 0)
			off = 0;
		if (edges && i == n - 1)
			off = ((ones(v6) - size + 1) - base);
		pset_add(s, mkpfx(v6, base + off, plen));
	}
}

/* An address at or next to an end of p, or inside it. */
static u128 near(const struct pfx *p)
{
	u128 last = pfx_last(p), d = rnd_below(4), x;

	switch (rnd_below(5)) {
	case 0:
		x = p->a - d;
		break;
	case 1:
		x = last + d;
		break;
	case 2:
		x = p->a + d;
		break;
	case 3:
		x = last - d;
		break;
	default:
		x = inner(p);
	}
	return x & ones(p->v6);
}

/* Every end of every range and next to it, by the model. */
static void expect_range_edges(struct fx *f, const struct pset *block,
			       const struct pset *allow, const char *what)
{
	size_t i;

	for (i = 0; i < allow->n; i++) {
		const struct pfx *p = &allow->v[i];
		u128 last = pfx_last(p);

		expect_model(f, block, allow, p->v6, p->a, what);
		expect_model(f, block, allow, p->v6, last, what);
		expect_model(f, block, allow, p->v6, inner(p), what);
		if (p->a > 0)
			expect_model(f, block, allow, p->v6, p->a - 1, what);
		if (last < ones(p->v6))
			expect_model(f, block, allow, p->v6, last + 1, what);
	}
}

/* The branch-free range search at every table size around the 8 (IPv4)
 * and 2 (IPv6) ranges an element holds, with everything blocked so that
 * every verdict is the allowlist's. */
static void test_allow_range_counts(void **state)
{
	static const size_t counts[] = { 1, 2, 3, 5, 7, 8, 9, 16, 17, 33,
					 64, 65, 129 };
	struct fx *f = *state;
	struct pset b = { 0 };
	size_t c, j;

	rng_seed(0xc01);
	pset_add(&b, P("0.0.0.0/0"));
	pset_add(&b, P("::/0"));
	for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		struct pset a = { 0 };
		char what[64];

		spread(&a, 0, counts[c], c % 2);
		spread(&a, 1, counts[c], c % 2 == 0);
		publish(f, &b, &a, FPR_TIGHT, 0xc01 + c);
		assert_int_equal(f->hdr.allow4_n, counts[c]);
		assert_int_equal(f->hdr.allow6_n, counts[c]);
		snprintf(what, sizeof(what), "%zu allow ranges", counts[c]);
		expect_range_edges(f, &b, &a, what);
		for (j = 0; j < 64; j++) {
			expect_model(f, &b, &a, 0, rnd128() & ones(0), what);
			expect_model(f, &b, &a, 1, rnd128(), what);
		}
		pset_free(&a);
	}
	pset_free(&b);
}

/*
 * Random allowlists of one family: nested, adjacent and overlapping
 * prefixes near a few hot spots, siblings that merge, prefixes that start
 * where another ends.
 */
static void random_allow(struct pset *s, int v6, size_t n)
{
	int w = width(v6);
	size_t i, first = s->n; /* pick from this family's prefixes only */
	u128 hot[4];

	for (i = 0; i < 4; i++)
		hot[i] = rnd128() & ones(v6);
	for (i = 0; i < n; i++) {
		int kind = (int)rnd_below(10), plen;
		size_t have = s->n - first;
		struct pfx p;

		if (have && kind == 0) { /* sibling: merges with it */
			p = s->v[first + rnd_below(have)];
			if (p.plen == 0)
				continue;
			p.a ^= (u128)1 << (w - p.plen);
		} else if (have && kind == 1) { /* starts right after another */
			const struct pfx *q = &s->v[first + rnd_below(have)];

			if (pfx_last(q) == ones(v6))
				continue;
			plen = q->plen + (int)rnd_below((unsigned)(w - q->plen) + 1);
			p = mkpfx(v6, pfx_last(q) + 1, plen);
		} else if (have && kind == 2) { /* nested inside another */
			const struct pfx *q = &s->v[first + rnd_below(have)];

			plen = q->plen + (int)rnd_below((unsigned)(w - q->plen) + 1);
			p = mkpfx(v6, inner(q), plen);
		} else { /* near a hot spot */
			int spread_bits = v6 ? 40 : 20;

			plen = w - (int)rnd_below(v6 ? 24 : 12);
			p = mkpfx(v6, hot[rnd_below(4)] ^ (rnd128() & hostmask(v6, w - spread_bits)),
				  plen);
		}
		pset_add(s, p);
	}
}

/* 5000 random allow prefixes a family, everything blocked, then only a
 * part blocked: every verdict by the model. */
static void test_allow_many(void **state)
{
	struct fx *f = *state;
	struct pset b = { 0 }, a = { 0 }, part = { 0 };
	size_t i;

	rng_seed(0xa5000);
	random_allow(&a, 0, 5000);
	random_allow(&a, 1, 5000);
	/* First and last range of each table. */
	pset_add(&a, P("0.0.0.0/31"));
	pset_add(&a, P("255.255.255.255"));
	pset_add(&a, P("::/127"));
	pset_add(&a, P("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fff0/124"));
	/* Adjacent across the 64-bit halves of IPv6: one merged range. */
	pset_add(&a, P("1::ffff:ffff:ffff:ffff"));
	pset_add(&a, P("1:0:0:1::/64"));
	pset_add(&b, P("0.0.0.0/0"));
	pset_add(&b, P("::/0"));
	publish(f, &b, &a, FPR_TIGHT, 0xa5000);
	assert_int_equal(f->hdr.allow4_n, merged_count(&a, 0));
	assert_int_equal(f->hdr.allow6_n, merged_count(&a, 1));
	print_message("5000+ random allow prefixes a family: %u IPv4 and %u IPv6 ranges after merging\n",
		      f->hdr.allow4_n, f->hdr.allow6_n);
	expect_range_edges(f, &b, &a, "many allow, all blocked");
	for (i = 0; i < 2000; i++) {
		const struct pfx *p = &a.v[rnd_below(a.n)];
		u128 x = p->a ^ (rnd128() & hostmask(p->v6, width(p->v6) - 24));

		expect_model(f, &b, &a, p->v6, x & ones(p->v6), "many allow, near");
	}

	/* Partly blocked: allowlisted addresses outside the blocked ranges
	 * are plain negatives. */
	pset_add(&part, P("128.0.0.0/1"));
	pset_add(&part, P("8000::/1"));
	for (i = 0; i < 300; i++) {
		const struct pfx *p = &a.v[rnd_below(a.n)];

		int plen = p->plen + (int)rnd_below(3);

		pset_add(&part, mkpfx(p->v6, inner(p),
				      plen > width(p->v6) ? width(p->v6) : plen));
	}
	publish(f, &part, &a, FPR_TIGHT, 0xa5001);
	for (i = 0; i < 3000; i++) {
		const struct pfx *p = &part.v[rnd_below(part.n)];

		expect_model(f, &part, &a, p->v6, near(p), "many allow, partly blocked");
		p = &a.v[rnd_below(a.n)];
		expect_model(f, &part, &a, p->v6, near(p), "many allow, partly blocked");
	}
	pset_free(&part);
	pset_free(&b);
	pset_free(&a);
}

/* ---- Tests: randomised differential ------------------------------------------- */

static void test_random_differential(void **state)
{
	struct fx *f = *state;
	struct pset b = { 0 }, a = { 0 };
	u128 hot4[8], hot6[8];
	size_t i, drops = 0, allows = 0, negs = 0;
	struct bg_counters c0, c1;

	rng_seed(0xd1ff);
	for (i = 0; i < 8; i++) {
		hot4[i] = rnd128() & ones(0);
		hot6[i] = rnd128();
	}
	for (i = 0; i < 2000; i++) {
		int v6 = (int)(rnd64() & 1), plen;
		u128 base;

		if (!v6 && rnd_below(10)) { /* /17../32 within /10s of hot spots */
			plen = 17 + (int)rnd_below(16);
			base = hot4[rnd_below(8)] ^ (rnd128() & hostmask(0, 10));
		} else if (!v6) { /* /8../16 anywhere: the bitmap */
			plen = 8 + (int)rnd_below(9);
			base = rnd128();
		} else if (rnd_below(8)) { /* /33../128 within /32s of hot spots */
			plen = 33 + (int)rnd_below(96);
			base = hot6[rnd_below(8)] ^ (rnd128() & hostmask(1, 32));
		} else { /* /8../32 anywhere: short ones, exact ranges */
			plen = 8 + (int)rnd_below(25);
			base = rnd128();
		}
		pset_add(&b, mkpfx(v6, base, plen));
	}
	for (i = 0; i < 200; i++) { /* allow: inside blocked ones mostly */
		const struct pfx *p = &b.v[rnd_below(b.n)];
		int w = width(p->v6);
		int plen = p->plen + (int)rnd_below((unsigned)(w - p->plen) + 1);

		pset_add(&a, mkpfx(p->v6, rnd_below(4) ? inner(p) : near(p), plen));
	}
	publish(f, &b, &a, FPR_TIGHT, 0xd1ff);
	print_message("differential: n4 %u (bitmap %d), n6 %u, short6 %u ranges, "
		      "%llu Bloom keys, %u+%u allow ranges\n",
		      f->hdr.n4, !!(f->hdr.flags & BG_FILTER_F_SHORT4), f->hdr.n6,
		      f->hdr.short6_n, (unsigned long long)f->par.n,
		      f->hdr.allow4_n, f->hdr.allow6_n);
	assert_true(f->hdr.short6_n > 0);
	counters(f, &c0);
	for (i = 0; i < 20000; i++) {
		int v6;
		u128 x;
		enum want w;

		switch (rnd_below(4)) {
		case 0: /* anywhere near a hot spot */
			v6 = (int)(rnd64() & 1);
			x = v6 ? hot6[rnd_below(8)] ^ (rnd128() & hostmask(1, 32)) :
				 hot4[rnd_below(8)] ^ (rnd128() & hostmask(0, 10));
			break;
		case 1: { /* near an allowed prefix */
			const struct pfx *p = &a.v[rnd_below(a.n)];

			v6 = p->v6;
			x = near(p);
			break;
		}
		default: { /* near a blocked prefix */
			const struct pfx *p = &b.v[rnd_below(b.n)];

			v6 = p->v6;
			x = near(p);
		}
		}
		w = model(&b, &a, v6, x);
		drops += w == W_DROP;
		allows += w == W_ALLOW;
		negs += w == W_NEG;
		expect(f, v6, x, w, "differential");
	}
	counters(f, &c1);
	print_message("differential: 20000 addresses, %zu dropped, %zu allowlisted, %zu not listed\n",
		      drops, allows, negs);
	assert_true(drops > 2000 && allows > 500 && negs > 2000);
	assert_int_equal(c1.cnt[BG_CNT_DROPPED] - c0.cnt[BG_CNT_DROPPED], drops);
	assert_int_equal(c1.cnt[BG_CNT_ALLOWLISTED] - c0.cnt[BG_CNT_ALLOWLISTED], allows);
	assert_int_equal(c1.cnt[BG_CNT_NEGATIVES] - c0.cnt[BG_CNT_NEGATIVES], negs);
	pset_free(&b);
	pset_free(&a);
}

/* ---- Tests: real lists ----------------------------------------------------- */

static void real_list(void **state, const char *name)
{
	struct fx *f = *state;
	/* FireHOL level 1 lists 224.0.0.0/3: kept, it is the short-prefix
	 * path this test is for */
	struct bg_list_opts opts = { .allow_wide = 1 };
	char path[256];
	struct bg_list l;
	size_t i;
	int err;

	snprintf(path, sizeof(path), "%s/%s", DATA_DIR, name);
	if (access(path, R_OK)) {
		print_message("%s not found (cwd must be the repository root): skipped\n", path);
		skip();
	}
	opts.report = fopen("/dev/null", "w");
	assert_non_null(opts.report);
	bg_list_init(&l);
	err = bg_list_parse_file(&l, path, &opts);
	fclose(opts.report);
	assert_int_equal(err, 0);
	bg_list_finish(&l);
	assert_true(l.n4 + l.n6 > 0);
	publish_lists(f, &l, NULL, BG_FPR_DEFAULT, 0x5eed);
	print_message("%s: %zu IPv4 + %zu IPv6 entries (%zu rejected), bitmap %d, IPv4 /%u.. (%u lengths), IPv6 %u lengths + %u ranges, %llu Bloom keys\n",
		      name, l.n4, l.n6, l.rejected,
		      !!(f->hdr.flags & BG_FILTER_F_SHORT4), f->hdr.len4[0],
		      f->hdr.n4, f->hdr.n6, f->hdr.short6_n,
		      (unsigned long long)f->par.n);
	for (i = 0; i < l.n4; i++) {
		struct pfx p = mkpfx(0, ntohl(l.v4[i].addr), l.v4[i].plen);

		expect(f, 0, p.a, W_DROP, name);
		expect(f, 0, pfx_last(&p), W_DROP, name);
	}
	for (i = 0; i < l.n6; i++) {
		struct pfx p = mkpfx(1, from_bytes(l.v6[i].addr), l.v6[i].plen);

		expect(f, 1, p.a, W_DROP, name);
		expect(f, 1, pfx_last(&p), W_DROP, name);
	}
	bg_list_free(&l);
}

static void test_firehol_level1(void **state)
{
	real_list(state, "firehol_level1.netset");
}

static void test_spamhaus_dropv6(void **state)
{
	real_list(state, "spamhaus_dropv6.txt");
}

/* ---- Main ------------------------------------------------------------------ */

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_ipv4_each_length_alone),
		T(test_ipv6_lengths_alone),
		T(test_ipv4_every_length),
		T(test_ipv6_common_lengths),
		T(test_ipv6_every_length),
		T(test_allowlist_in_blocked_ranges),
		T(test_allow_range_counts),
		T(test_allow_many),
		T(test_random_differential),
		T(test_firehol_level1),
		T(test_spamhaus_dropv6),
	};

	return cmocka_run_group_tests_name("prefixes", tests, NULL, NULL);
}
