// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Sizing model and builder of the blocked Bloom filter (userspace side). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "bloomgate/bloom.h"
#include "core/filter.h"
#include "core/lists.h"
#include "core/view.h"

#include "blocklist.h"

static uint64_t rng = 0x853c49e6748fea9bULL;

static uint32_t rnd32(void)
{
	/* splitmix64: deterministic, independent of the filter's xxh64 */
	uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return (uint32_t)((z ^ (z >> 31)) >> 16);
}

static void test_size_rejects_bad_input(void **state)
{
	struct bg_filter_params p;

	(void)state;
	assert_int_equal(bg_filter_size(0, 0.001, &p), 0); /* empty Bloom part */
	assert_int_equal(p.nblocks, 0);
	assert_int_equal(bg_filter_size(10, 0.0, &p), -EINVAL);
	assert_int_equal(bg_filter_size(10, 0.9, &p), -EINVAL);
	assert_int_equal(bg_filter_size(10, NAN, &p), -EINVAL);
}

/* The chosen size meets the target and is the smallest that does. */
static void test_size_minimal(void **state)
{
	static const uint64_t ns[] = { 1, 7, 1000, 123457, 1000000, 10000000 };
	static const double ps[] = { 0.1, 0.01, 0.001, 0.0001 };
	struct bg_filter_params p;
	size_t i, j;
	uint32_t k;

	(void)state;
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		for (j = 0; j < sizeof(ps) / sizeof(ps[0]); j++) {
			double smaller = 1.0;

			assert_int_equal(bg_filter_size(ns[i], ps[j], &p), 0);
			assert_true(p.predicted <= ps[j]);
			assert_true(p.k >= 1 && p.k <= BG_K_MAX);
			if (p.nblocks > 1)
				for (k = 1; k <= BG_K_MAX; k++)
					smaller = fmin(smaller, bg_filter_model_fpr(
						ns[i], p.nblocks - 1, k));
			assert_true(p.nblocks == 1 || smaller > ps[j]);
		}
	}
	/* Blocked layout costs a little more than the classic optimum
	 * (14.38 bits/key at 0.1%), but not much. */
	assert_int_equal(bg_filter_size(1000000, 0.001, &p), 0);
	assert_true(p.bits_per_entry > 14.38);
	assert_true(p.bits_per_entry < 17.5);
	printf("# n=1e6 p=0.001: k=%u, %.2f bits/entry, predicted %.6f\n", p.k,
	       p.bits_per_entry, p.predicted);
}

static void test_model_monotone(void **state)
{
	double prev = 1.0;
	uint32_t b;

	(void)state;
	for (b = 1000; b < 20000; b += 500) {
		double f = bg_filter_model_fpr(100000, b, 8);

		assert_true(f < prev);
		prev = f;
	}
	assert_true(bg_filter_model_fpr(0, 10, 8) == 0.0);
	assert_true(bg_filter_model_fpr(10, 0, 8) == 1.0);
}

/* Overfull blocks: ~1,400 keys a block set nearly every bit, so the rate
 * is close to 1. exp(-lambda) underflowed there and the model said 0, and
 * --fpr 0.5 planned 70 blocks for 100k keys (a Bloom part that matched
 * 94 % of all addresses). */
static void test_model_overfull(void **state)
{
	struct bg_filter_params p;

	(void)state;
	assert_true(bg_filter_model_fpr(100000, 70, 1) > 0.9);
	assert_true(bg_filter_model_fpr(100000, 70, 8) > 0.99);
	assert_int_equal(bg_filter_size(100000, 0.5, &p), 0);
	/* the classic optimum is 1.44 bits a key: 282 blocks */
	assert_true(p.nblocks >= 250);
	assert_true(p.predicted <= 0.5 && p.predicted > 0.3);
}

/* Build 200k keys: every member matches, and the measured false-positive
 * rate over 2M non-members lies within 3 sigma of the model. */
static void test_build_members_and_fpr(void **state)
{
	const size_t n = 200000, trials = 2000000;
	struct bg_filter_params p;
	struct bg_list l;
	size_t i, fp = 0, done = 0;
	double sigma;
	void *mem;

	(void)state;
	bg_list_init(&l);
	l.v4 = calloc(n, sizeof(*l.v4));
	assert_non_null(l.v4);
	l.cap4 = n;
	for (i = 0; i < n; i++)
		bg_key4_init(&l.v4[l.n4++], rnd32() & 0xfffffffeU, 32);
	bg_list_finish(&l); /* sorted, unique; odd addresses never members */
	assert_int_equal(bg_filter_plan_confirm(BL(&l, NULL, NULL), 0.001, 0, &p), 0);
	assert_int_equal(p.bytes, ((size_t)p.nblocks + 1) * 64);
	mem = calloc(1, p.bytes);
	assert_non_null(mem);
	bg_filter_build(mem, &p, 0x1234567890abcdefULL, BL(&l, NULL, NULL));
	for (i = 0; i < l.n4; i++)
		assert_true(bg_filter_test4(mem, l.v4[i].addr));
	while (done < trials) {
		fp += (size_t)bg_filter_test4(mem, rnd32() | 1U);
		done++;
	}
	sigma = sqrt(p.predicted * (1 - p.predicted) / (double)trials);
	printf("# measured %.6f predicted %.6f (3 sigma %.6f)\n",
	       (double)fp / (double)trials, p.predicted, 3 * sigma);
	free(mem);
	bg_list_free(&l);
	assert_true(fabs((double)fp / (double)trials - p.predicted) <= 3 * sigma);
	return;
	bg_list_free(&l);
}

/* Lines of /proc/self/maps that lie in [base, base + len). */
static int maps_in(const void *base, size_t len)
{
	unsigned long a, b, lo = (unsigned long)base, hi = lo + len;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a >= lo && b <= hi)
			n++;
	fclose(f);
	return n;
}

/*
 * A view (core/view.h) of a filter in a file answers every lookup as the
 * filter in memory does, mapping only the chunks the lookups reach: one
 * at first (the header's), a few after some lookups, and none past the
 * file's filter.
 */
static void test_view_lazy(void **state)
{
	const size_t n = 100000;
	char path[] = "/tmp/bg-test-view.XXXXXX";
	struct bg_filter_params p;
	struct bg_list l;
	const void *view;
	size_t i, len, pg = (size_t)sysconf(_SC_PAGESIZE);
	void *mem;
	int fd, before, after;

	(void)state;
	bg_list_init(&l);
	l.v4 = calloc(n, sizeof(*l.v4));
	assert_non_null(l.v4);
	l.cap4 = n;
	for (i = 0; i < n; i++)
		bg_key4_init(&l.v4[l.n4++], rnd32() & 0xfffffffeU, 32);
	bg_list_finish(&l);
	/* with the exact stage: its buckets are read too */
	assert_int_equal(bg_filter_plan_confirm(BL(&l, NULL, NULL), 0.01, 1, &p), 0);
	len = (p.bytes + pg - 1) / pg * pg;
	assert_true(len > 8 * BG_VIEW_CHUNK);
	mem = calloc(1, len);
	assert_non_null(mem);
	bg_filter_build(mem, &p, 0xabcdefULL, BL(&l, NULL, NULL));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, mem, len), (ssize_t)len);
	assert_int_equal(bg_view_open(fd, len, &view), 0);
	close(fd); /* the view holds its own */
	/* the header's chunk mapped, the rest reserved: two mappings */
	before = maps_in(view, len);
	assert_int_equal(before, 2);
	assert_true(bg_filter_test4(view, l.v4[0].addr));
	after = maps_in(view, len);
	assert_true(after > before);
	for (i = 0; i < n; i += 7)
		assert_true(bg_filter_test4(view, l.v4[i].addr));
	for (i = 0; i < 20000; i++) {
		uint32_t a = rnd32();

		assert_int_equal(bg_filter_test4(view, a), bg_filter_test4(mem, a));
	}
	assert_int_equal(bg_view_error(view), 0);
	assert_int_equal(memcmp(view, mem, len), 0); /* every chunk readable */
	bg_view_close(view);
	/* a descriptor that cannot be mapped for reading: no view */
	fd = open("/dev/null", O_WRONLY);
	assert_true(fd >= 0);
	assert_int_not_equal(bg_view_open(fd, len, &view), 0);
	close(fd);
	free(mem);
	bg_list_free(&l);
}

/* An IPv6 member matches; the header records what was built. */
static void test_build_header_ipv6(void **state)
{
	struct bg_filter_params p;
	struct bg_filter_header *h;
	struct bg_list l;
	__u8 a[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 7 };
	void *mem;

	(void)state;
	bg_list_init(&l);
	l.v6 = calloc(1, sizeof(*l.v6));
	assert_non_null(l.v6);
	l.cap6 = 1;
	bg_key6_init(&l.v6[l.n6++], a, 128);
	assert_int_equal(bg_filter_plan(BL(&l, NULL, NULL), 0.001, &p), 0);
	mem = calloc(1, p.bytes);
	assert_non_null(mem);
	bg_filter_build(mem, &p, 99, BL(&l, NULL, NULL));
	h = mem;
	assert_int_equal(h->magic, BG_FILTER_MAGIC);
	assert_int_equal(h->abi_version, BG_ABI_VERSION);
	assert_int_equal(h->nblocks, p.nblocks);
	assert_int_equal(h->k, p.k);
	assert_int_equal(h->seed, 99);
	assert_int_equal(h->entries, 1);
	assert_int_equal(h->n4, 0);
	assert_int_equal(h->n6, 1);
	assert_int_equal(h->len6[0], 128);
	assert_true(bg_filter_test6(mem, a));
	a[15] = 8;
	assert_false(bg_filter_test4(mem, 0x07020000)); /* no IPv4 keys */
	free(mem);
	bg_list_free(&l);
}

/* The capacity in elements: header, the /16 bitmap and the blocks
 * bg_filter_size() plans at the default target; and its inverse. */
static void test_capacity_elems(void **state)
{
	static const uint64_t ns[] = { 1, 1000, 16000, 123457, 1000000 };
	struct bg_filter_params p;
	__u32 prev = 0;
	size_t i;

	(void)state;
	assert_int_equal(bg_filter_capacity_elems(0), 1 + BG_SHORT4_ELEMS);
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		__u32 c = bg_filter_capacity_elems(ns[i]);
		uint64_t k;

		assert_int_equal(bg_filter_size(ns[i], BG_FPR_DEFAULT_CONFIRM, &p), 0);
		assert_int_equal(c, 1 + BG_SHORT4_ELEMS + p.nblocks +
					 bg_filter_fp_buckets(ns[i]));
		assert_true(c > prev);
		prev = c;
		/* the inverse: the most keys that fit, at least those asked */
		k = bg_filter_capacity_keys(c);
		assert_true(k >= ns[i]);
		assert_true(bg_filter_capacity_elems(k) <= c);
		assert_true(bg_filter_capacity_elems(k + 1) > c);
	}
	assert_int_equal(bg_filter_capacity_keys(1 + BG_SHORT4_ELEMS - 1), 0);
	/* too large: bg_filter_size's -E2BIG */
	assert_int_equal(bg_filter_capacity_elems(1ULL << 40), 0);
}

/* IPv6 prefixes of five lengths with gaps wider than BG_CPE_MAX_BITS:
 * more lengths than BG_PROBES_MAX, so the /8 goes to the exact ranges. */
static const struct {
	__u8 addr[16], plen;
} six[] = {
	{ { 0x3f }, 8 },
	{ { 0x20, 0x01, 0x0d, 0xb8, 0x01 }, 40 },
	{ { 0x20, 0x01, 0x0d, 0xb8, 0x02 }, 64 },
	{ { 0x20, 0x01, 0x0d, 0xb8, 0x03 }, 100 },
	{ { 0x20, 0x01, 0x0d, 0xb8, 0x04, [15] = 1 }, 128 },
};
#define NSIX (sizeof(six) / sizeof(six[0]))

/* n random /32 addresses (even: odd ones are never members), the IPv6
 * prefixes above and an allowlist range, so every table of the layout is
 * there and must move with the Bloom part. */
static void capacity_lists(struct bg_list *b, struct bg_list *a, size_t n)
{
	size_t i;

	bg_list_init(b);
	bg_list_init(a);
	b->v4 = calloc(n, sizeof(*b->v4));
	b->v6 = calloc(NSIX, sizeof(*b->v6));
	a->v4 = calloc(1, sizeof(*a->v4));
	assert_true(b->v4 && b->v6 && a->v4);
	b->cap4 = n;
	b->cap6 = NSIX;
	a->cap4 = 1;
	for (i = 0; i < n; i++)
		bg_key4_init(&b->v4[b->n4++], rnd32() & 0xfffffffeU, 32);
	for (i = 0; i < NSIX; i++)
		bg_key6_init(&b->v6[b->n6++], six[i].addr, six[i].plen);
	bg_key4_init(&a->v4[a->n4++], b->v4[0].addr, 32);
	bg_list_finish(b);
	bg_list_finish(a);
}

/* A plan fitted to a larger capacity fills it with Bloom blocks: the
 * layout stays consistent, the false-positive rate only drops, and the
 * built filter still matches every listed key. */
static void test_capacity_fit(void **state)
{
	const size_t n = 3000;
	struct bg_filter_params p, fitted;
	struct bg_filter_header *h;
	struct bg_list b, a;
	__u32 cap = bg_filter_capacity_elems(4 * n);
	__u8 in6[16] = { 0x3f, 0xab, [15] = 0xcd }; /* in the /8 */
	size_t i, misses = 0;
	void *mem;

	(void)state;
	capacity_lists(&b, &a, n);
	assert_int_equal(bg_filter_plan(BL(&b, &a, NULL), BG_FPR_DEFAULT, &p), 0);
	assert_int_equal(p.capacity, 0);
	assert_true(p.nelems < cap);
	assert_true(p.short6_n == 1 && p.allow4_n == 1);
	fitted = p;
	assert_int_equal(bg_filter_fit(&fitted, cap), 0);
	assert_int_equal(fitted.capacity, cap);
	assert_int_equal(fitted.nelems, cap);
	assert_int_equal(fitted.bytes, (size_t)cap * BG_FILTER_VALUE_SIZE);
	assert_int_equal(fitted.nblocks, p.nblocks + (cap - p.nelems));
	assert_true(fitted.predicted <= p.predicted);
	assert_true(fitted.predicted_addr <= p.predicted_addr);
	assert_true(fitted.predicted < p.predicted / 2); /* 4x the room */
	assert_true(fitted.bits_per_entry > p.bits_per_entry);
	/* the tables follow the Bloom blocks */
	assert_int_equal(fitted.bloom_off, p.bloom_off);
	assert_int_equal(fitted.fp_nbuckets, p.fp_nbuckets);
	assert_int_equal(fitted.fp_off, fitted.bloom_off + fitted.nblocks);
	assert_int_equal(fitted.allow4_off, fitted.fp_off + fitted.fp_nbuckets);
	assert_int_equal(fitted.allow6_off - fitted.allow4_off,
			 p.allow6_off - p.allow4_off);
	assert_int_equal(fitted.short6_off - fitted.allow6_off,
			 p.short6_off - p.allow6_off);
	assert_int_equal(fitted.nelems - fitted.short6_off, p.nelems - p.short6_off);

	mem = calloc(1, fitted.bytes);
	assert_non_null(mem);
	bg_filter_build(mem, &fitted, 0xfeedULL, BL(&b, &a, NULL));
	h = mem;
	assert_int_equal(h->nblocks, fitted.nblocks);
	assert_int_equal(h->k, fitted.k);
	assert_true(bg_filter_nelems(h) <= cap);
	for (i = 0; i < b.n4; i++)
		misses += !bg_filter_test4(mem, b.v4[i].addr);
	for (i = 0; i < NSIX; i++)
		misses += !bg_filter_test6(mem, six[i].addr);
	assert_int_equal(misses, 0);
	assert_true(bg_filter_test6(mem, in6)); /* the exact range, moved */
	assert_true(bg_filter_allowed4(mem, a.v4[0].addr)); /* the allow table */
	in6[0] = 0x3e;
	assert_false(bg_filter_test6(mem, in6)); /* outside: the range's end */
	free(mem);
	bg_list_free(&b);
	bg_list_free(&a);
}

/* A plan that needs more than the capacity is refused, p untouched; the
 * exact size fits with nothing to grow. */
static void test_capacity_too_small(void **state)
{
	struct bg_filter_params p, q;
	struct bg_list b, a;

	(void)state;
	capacity_lists(&b, &a, 2000);
	assert_int_equal(bg_filter_plan(BL(&b, &a, NULL), BG_FPR_DEFAULT, &p), 0);
	q = p;
	assert_int_equal(bg_filter_fit(&q, p.nelems - 1), -ENOSPC);
	assert_memory_equal(&q, &p, sizeof(p));
	assert_int_equal(bg_filter_fit(&q, 1), -ENOSPC);
	assert_int_equal(bg_filter_fit(&q, p.nelems), 0);
	assert_int_equal(q.nblocks, p.nblocks);
	assert_int_equal(q.nelems, p.nelems);
	assert_true(q.predicted == p.predicted);
	bg_list_free(&b);
	bg_list_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_rejects_bad_input),
		cmocka_unit_test(test_size_minimal),
		cmocka_unit_test(test_model_monotone),
		cmocka_unit_test(test_model_overfull),
		cmocka_unit_test(test_build_members_and_fpr),
		cmocka_unit_test(test_build_header_ipv6),
		cmocka_unit_test(test_view_lazy),
		cmocka_unit_test(test_capacity_elems),
		cmocka_unit_test(test_capacity_fit),
		cmocka_unit_test(test_capacity_too_small),
	};

	return cmocka_run_group_tests_name("filter", tests, NULL, NULL);
}
