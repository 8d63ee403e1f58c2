// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The filter map `load` makes while the keys are sorted (kern/load.h,
 * struct bg_premap): planned from the keys as parsed, taken by the build
 * only when the sorted keys' plan has the same number of elements, and
 * then the filter built into it is, byte for byte, the one a map made
 * after the plan holds (the same seed). Maps are real (bpf_map_create):
 * run as root.
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
#include <unistd.h>

#include "bloomgate/bloom.h"
#include "core/filter.h"
#include "core/lists.h"
#include "core/sources.h"
#include "kern/load.h"
#include "kern/swap.h"

#define SEED 0x5eedULL

/* n distinct IPv4 /32 keys as a parse leaves them (unsorted), dup of
 * them written twice. */
static void keys(struct bg_blocklist *bl, size_t n, size_t dup)
{
	size_t i;

	bg_blocklist_init(bl);
	bl->block.v4 = calloc(n + dup, sizeof(*bl->block.v4));
	assert_non_null(bl->block.v4);
	for (i = 0; i < n; i++) {
		/* i times an odd number: distinct, in no order */
		bg_key4_init(&bl->block.v4[i],
			     htonl((uint32_t)i * 2654435761u + 12345u), 32);
	}
	for (i = 0; i < dup; i++)
		bl->block.v4[n + i] = bl->block.v4[i * 7 % n];
	bl->block.n4 = bl->block.cap4 = n + dup;
	bl->block.accepted = n + dup;
}

/* The filter in map fd, copied out (p->bytes). */
static void *map_bytes(int fd, const struct bg_filter_params *p)
{
	size_t len = (p->bytes + 4095) / 4096 * 4096;
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0), *out;

	assert_true(m != MAP_FAILED);
	out = malloc(p->bytes);
	assert_non_null(out);
	memcpy(out, m, p->bytes);
	munmap(m, len);
	return out;
}

/* Plans and builds as `load` does, with or without the premade map;
 * returns the filter's bytes and whether the premade map was taken. */
static void *load_like(size_t n, size_t dup, int with_premap, uint32_t capacity,
		       int *used, struct bg_filter_params *p)
{
	struct bg_premap pm = BG_PREMAP_INIT;
	struct bg_blocklist bl;
	void *bytes;
	int fd = -1;

	keys(&bl, n, dup);
	if (with_premap) {
		bg_premap_parsed(&pm, &bl, 0.01, 1);
		assert_true(pm.started);
	}
	bg_blocklist_finish_mt(&bl, 2);
	assert_int_equal(bl.block.n4, n);
	assert_int_equal(bg_filter_plan_confirm(&bl, 0.01, 1, p), 0);
	if (capacity)
		assert_int_equal(bg_filter_fit(p, capacity), 0);
	if (with_premap)
		fd = bg_premap_take(&pm, p);
	fd = fd >= 0 ? bg_filter_create_in(fd, p, SEED, &bl, 2) :
		       bg_filter_create_mt(p, SEED, &bl, 2);
	assert_true(fd >= 0);
	*used = pm.used;
	bg_premap_drop(&pm);
	assert_int_equal(pm.fd, -1);
	bytes = map_bytes(fd, p);
	close(fd);
	bg_blocklist_free(&bl);
	return bytes;
}

/* The same plan and bytes with and without the map made meanwhile; want:
 * whether that map is the one built into. */
static void same_both_ways(size_t n, size_t dup, uint32_t capacity, int want)
{
	struct bg_filter_params p1, p2;
	void *a, *b;
	int used;

	a = load_like(n, dup, 0, capacity, &used, &p1);
	assert_false(used);
	b = load_like(n, dup, 1, capacity, &used, &p2);
	assert_int_equal(used, want);
	assert_memory_equal(&p1, &p2, sizeof(p1));
	assert_int_equal(p1.capacity, capacity);
	assert_memory_equal(a, b, p1.bytes);
	free(a);
	free(b);
}

static void test_premap_same_filter(void **state)
{
	(void)state;
	same_both_ways(200000, 0, 0, 1); /* no duplicates: the same plan */
}

static void test_premap_not_the_size(void **state)
{
	(void)state;
	/* 20% duplicates: the keys as parsed plan a bigger filter */
	same_both_ways(200000, 40000, 0, 0);
	/* fitted to a capacity: another size and other map flags */
	same_both_ways(200000, 0, bg_filter_capacity_elems(400000), 0);
}

/* Names are planned only once sorted: no map is made for them; a hook
 * called twice makes one map. */
static void test_premap_names_and_once(void **state)
{
	struct bg_premap pm = BG_PREMAP_INIT;
	struct bg_blocklist bl;
	struct bg_name nm = { .name = (char *)"example.com" };

	(void)state;
	bg_blocklist_init(&bl);
	bl.names.v = &nm;
	bl.names.n = 1;
	bg_premap_parsed(&pm, &bl, 0.01, 1);
	assert_false(pm.started);
	bg_premap_drop(&pm);

	keys(&bl, 1000, 0);
	bg_premap_parsed(&pm, &bl, 0.01, 1);
	assert_true(pm.started);
	bg_premap_parsed(&pm, &bl, 0.01, 1);
	bg_premap_drop(&pm);
	assert_int_equal(pm.fd, -1);
	assert_false(pm.started);
	bg_blocklist_free(&bl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_premap_same_filter),
		cmocka_unit_test(test_premap_not_the_size),
		cmocka_unit_test(test_premap_names_and_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
