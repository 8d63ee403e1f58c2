// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A filter kept for small changes (core/patch.h, struct bg_inc): a fixed
 * part (lists) and a changing part (decisions) built together; the
 * changing part changed again and again in place. After every change the
 * filter lists exactly what a fresh build of fixed + the new part lists
 * (every address of both parts, none that only a removed decision had:
 * the exact stage rejects them), a decision that the fixed part also has
 * stays listed when it is removed, and a change that does not fit the plan
 * or the rate bound is refused with the image unchanged.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bloomgate/bloom.h"
#include "core/filter.h"
#include "core/patch.h"
#include "core/sources.h"

#define NFIXED 20000
#define NDEC 400
#define SEED 0x1234abcdULL

static void add4(struct bg_list *l, uint32_t host, uint8_t plen)
{
	struct bg_key4 *v = realloc(l->v4, (l->n4 + 1) * sizeof(*v));

	assert_non_null(v);
	l->v4 = v;
	bg_key4_init(&v[l->n4], htonl(host), plen);
	l->n4++;
	l->cap4 = l->n4;
	l->accepted++;
}

static uint32_t fixed_addr(uint32_t i) { return 0x0a000000u + i * 7; }
static uint32_t dec_addr(uint32_t i) { return 0xc6336400u + i; } /* 198.51.100.0+ */

/* fixed: NFIXED /32s and a /24; part: decisions [from, to), and every
 * 50th fixed address (a decision on a listed address) */
static void fixed_bl(struct bg_blocklist *bl)
{
	uint32_t i;

	bg_blocklist_init(bl);
	for (i = 0; i < NFIXED; i++)
		add4(&bl->block, fixed_addr(i), 32);
	add4(&bl->block, 0xcb007100u, 24); /* 203.0.113.0/24 */
	bg_blocklist_finish(bl);
}

static void part_bl(struct bg_blocklist *bl, uint32_t from, uint32_t to)
{
	uint32_t i;

	bg_blocklist_init(bl);
	for (i = from; i < to; i++)
		add4(&bl->block, dec_addr(i), 32);
	for (i = 0; i < NFIXED; i += 50)
		add4(&bl->block, fixed_addr(i), 32);
	bg_blocklist_finish(bl);
}

/* fixed + part, as one blocklist (the agent's whole load) */
static void all_bl(struct bg_blocklist *bl, uint32_t from, uint32_t to)
{
	uint32_t i;

	bg_blocklist_init(bl);
	for (i = 0; i < NFIXED; i++)
		add4(&bl->block, fixed_addr(i), 32);
	add4(&bl->block, 0xcb007100u, 24);
	for (i = from; i < to; i++)
		add4(&bl->block, dec_addr(i), 32);
	bg_blocklist_finish(bl);
}

static void *image_of(const struct bg_blocklist *bl, struct bg_filter_params *p,
		      size_t *len)
{
	void *m;

	assert_int_equal(bg_filter_plan(bl, 0.01, p), 0);
	*len = p->bytes;
	m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(bg_filter_build_seeded(m, p, SEED, bl, 1), 0);
	return m;
}

/* The image lists exactly fixed and decisions [from, to). */
static void holds(const struct bg_inc *inc, uint32_t from, uint32_t to)
{
	size_t len;
	const void *m = bg_inc_image(inc, &len);
	uint32_t i;

	for (i = 0; i < NFIXED; i++)
		if (!bg_filter_test4(m, htonl(fixed_addr(i))))
			fail_msg("fixed address %u not listed", i);
	assert_true(bg_filter_test4(m, htonl(0xcb007155u)));
	for (i = 0; i < 2 * NDEC; i++) {
		int want = i >= from && i < to;

		if (bg_filter_test4(m, htonl(dec_addr(i))) != want)
			fail_msg("decision %u is %s (wanted [%u, %u))", i,
				 want ? "not listed" : "listed", from, to);
	}
}

static void test_inc_changes(void **state)
{
	struct bg_blocklist all, fixed, p0, p1, p2, p3;
	struct bg_filter_params p;
	struct bg_inc *inc;
	struct bg_inc_result r;
	size_t len;
	char why[256];
	void *img;

	(void)state;
	all_bl(&all, 0, NDEC);
	fixed_bl(&fixed);
	img = image_of(&all, &p, &len);
	assert_int_equal(bg_inc_new(img, len, &p, p.n, &all, &fixed, 2, &inc, why,
				    sizeof(why)), 0);
	holds(inc, 0, NDEC);

	/* 100 decisions out, 100 in; the fixed addresses among the
	 * decisions stay (the fixed part has them) */
	part_bl(&p0, 0, NDEC);
	part_bl(&p1, 100, NDEC + 100);
	assert_int_equal(bg_inc_apply(inc, &p0, &p1, 2.0, &r, why, sizeof(why)), 0);
	assert_int_equal(r.added, 100);
	assert_int_equal(r.removed, 100);
	holds(inc, 100, NDEC + 100);

	/* every decision gone: the fixed part alone */
	bg_blocklist_init(&p2);
	bg_blocklist_finish(&p2);
	assert_int_equal(bg_inc_apply(inc, &p1, &p2, 2.0, &r, why, sizeof(why)), 0);
	holds(inc, 0, 0);

	/* and back */
	part_bl(&p3, 50, 250);
	assert_int_equal(bg_inc_apply(inc, &p2, &p3, 2.0, &r, why, sizeof(why)), 0);
	holds(inc, 50, 250);

	bg_blocklist_free(&p0);
	bg_blocklist_free(&p1);
	bg_blocklist_free(&p2);
	bg_blocklist_free(&p3);
	bg_blocklist_free(&all);
	bg_blocklist_free(&fixed);
	bg_inc_free(inc);
}

static void test_inc_refusals(void **state)
{
	struct bg_blocklist all, fixed, p0, p1;
	struct bg_filter_params p;
	struct bg_inc *inc;
	struct bg_inc_result r;
	size_t len, ilen;
	char why[256];
	void *img, *before;
	uint32_t i;

	(void)state;
	all_bl(&all, 0, NDEC);
	fixed_bl(&fixed);
	img = image_of(&all, &p, &len);
	assert_int_equal(bg_inc_new(img, len, &p, p.n, &all, &fixed, 1, &inc, why,
				    sizeof(why)), 0);
	before = malloc(len);
	memcpy(before, bg_inc_image(inc, &ilen), len);
	part_bl(&p0, 0, NDEC);

	/* a range: expanded to the plan's probed length (/32 here), its
	 * addresses listed, and gone again */
	part_bl(&p1, 0, NDEC);
	add4(&p1.block, 0xc0000200u, 28);
	bg_blocklist_finish(&p1);
	assert_int_equal(bg_inc_apply(inc, &p0, &p1, 2.0, &r, why, sizeof(why)), 0);
	assert_int_equal(r.added, 16);
	assert_true(bg_filter_test4(bg_inc_image(inc, &ilen), htonl(0xc000020du)));
	assert_int_equal(bg_inc_apply(inc, &p1, &p0, 2.0, &r, why, sizeof(why)), 0);
	assert_int_equal(r.removed, 16);
	assert_false(bg_filter_test4(bg_inc_image(inc, &ilen), htonl(0xc000020du)));
	bg_blocklist_free(&p1);
	memcpy(before, bg_inc_image(inc, &ilen), len);

	/* a /16: the bitmap is built whole */
	part_bl(&p1, 0, NDEC);
	add4(&p1.block, 0xc0a80000u, 16);
	bg_blocklist_finish(&p1);
	assert_int_equal(bg_inc_apply(inc, &p0, &p1, 2.0, &r, why, sizeof(why)), -EXDEV);
	assert_memory_equal(before, bg_inc_image(inc, &ilen), len);
	bg_blocklist_free(&p1);

	/* so many more keys that the rate would pass twice its target */
	bg_blocklist_init(&p1);
	for (i = 0; i < 3 * NFIXED; i++)
		add4(&p1.block, 0xac100000u + i, 32);
	bg_blocklist_finish(&p1);
	assert_int_equal(bg_inc_apply(inc, &p0, &p1, 2.0, &r, why, sizeof(why)), -EXDEV);
	assert_non_null(strstr(why, "rate"));
	assert_memory_equal(before, bg_inc_image(inc, &ilen), len);
	bg_blocklist_free(&p1);

	free(before);
	bg_blocklist_free(&p0);
	bg_blocklist_free(&all);
	bg_blocklist_free(&fixed);
	bg_inc_free(inc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inc_changes),
		cmocka_unit_test(test_inc_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
