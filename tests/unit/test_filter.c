// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Sizing model and builder of the blocked Bloom filter (userspace side). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bloomgate/bloom.h"
#include "filter.h"
#include "lists.h"

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
	assert_int_equal(bg_filter_plan(BL(&l, NULL, NULL), 0.001, &p), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_rejects_bad_input),
		cmocka_unit_test(test_size_minimal),
		cmocka_unit_test(test_model_monotone),
		cmocka_unit_test(test_build_members_and_fpr),
		cmocka_unit_test(test_build_header_ipv6),
	};

	return cmocka_run_group_tests_name("filter", tests, NULL, NULL);
}
