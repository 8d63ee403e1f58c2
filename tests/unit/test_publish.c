// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A publisher's next generation (core/publish.h), without a database: the
 * first generation is full; a small change is a delta whose apply to the
 * base gives the full artifact written beside it, byte for byte, and whose
 * filter lists every new entry and none of the removed ones (exactly: the
 * exact stage rejects them); a change that would raise the Bloom part's
 * rate past twice its target, a reordered list, other options, a base
 * whose lists are not cached, or --full make a full generation, each
 * saying why.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/artifact.h"
#include "core/filter.h"
#include "core/publish.h"

static char dir[] = "/tmp/bg-test-publish.XXXXXX";

static char *path_of(const char *name)
{
	static char buf[8][256];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* Address i of the test's space: 10.x.y.z, distinct for i < 2^24. */
static uint32_t addr(uint32_t i)
{
	return (10u << 24) | (i & 0xffffff);
}

/* Writes addresses [from, to) to name, and the extra lines. */
static void write_list(const char *name, uint32_t from, uint32_t to,
		       const char *extra)
{
	FILE *f = fopen(path_of(name), "w");
	uint32_t i;

	assert_non_null(f);
	for (i = from; i < to; i++) {
		uint32_t a = addr(i * 7919u);

		fprintf(f, "%u.%u.%u.%u\n", a >> 24, (a >> 16) & 255, (a >> 8) & 255,
			a & 255);
	}
	if (extra)
		fputs(extra, f);
	fclose(f);
}

struct gen {
	struct bg_pub_result res;
	int ret;
};

/* Publishes the lists (block, then names) as generation g against base
 * (NULL: none), into gen<g>.bga / gen<g>.delta, and caches its lists as
 * the CLI does. */
static void publish(uint64_t g, const char *base, int full, double fpr,
		    const char *const *lists, size_t n, struct gen *out)
{
	struct bg_load_opts o = { .fpr = fpr };
	struct bg_pub_opts po = { .load = &o };
	struct bg_load_report r;
	struct bg_sources s;
	struct bg_art a;
	struct bg_art_sources as;
	char name[64], dname[64], why[256];
	char (*sha)[65];
	size_t i;

	bg_sources_init(&s);
	for (i = 0; i < n; i++)
		assert_int_equal(bg_sources_add(&s, path_of(lists[i]), 0), 0);
	o.sources = &s;
	snprintf(name, sizeof(name), "gen%llu.bga", (unsigned long long)g);
	snprintf(dname, sizeof(dname), "gen%llu.delta", (unsigned long long)g);
	unlink(path_of(dname));
	po.base = base;
	po.cache = path_of("cache");
	po.generation = g;
	po.full = full;
	po.out_full = path_of(name);
	po.out_delta = path_of(dname);
	bg_load_report_init(&r);
	out->ret = bg_publish_build(&po, &out->res, &r);
	bg_load_report_free(&r);
	if (!out->ret) {
		char fsha[65];

		/* the generation's checksum: its file's SHA-256 */
		assert_int_equal(bg_sha256_file(path_of(name), fsha), 0);
		assert_string_equal(out->res.sha256, fsha);
		/* the lists kept for the next delta, as publish does */
		assert_int_equal(bg_art_open(path_of(name), &a, why, sizeof(why)), 0);
		assert_int_equal(a.h->generation, g);
		assert_int_equal(bg_art_sources_read(&a, &as), 0);
		sha = calloc(as.n, sizeof(*sha));
		for (i = 0; i < as.n; i++)
			snprintf(sha[i], sizeof(sha[i]), "%s", as.v[i].sha256);
		assert_int_equal(bg_publish_cache_lists(path_of("cache"), &s, sha), 0);
		free(sha);
		bg_art_sources_free(&as);
		bg_art_close(&a);
	}
	bg_sources_free(&s);
}

/* The delta of generation g applied to base equals gen<g>.bga. */
static void delta_rebuilds(uint64_t g, const char *base)
{
	struct bg_art b, d, full, out;
	char name[64], dname[64], oname[64], why[256];
	uint8_t fsha[BG_ART_SHA], want[BG_ART_SHA];

	snprintf(name, sizeof(name), "gen%llu.bga", (unsigned long long)g);
	snprintf(dname, sizeof(dname), "gen%llu.delta", (unsigned long long)g);
	snprintf(oname, sizeof(oname), "gen%llu.applied", (unsigned long long)g);
	assert_int_equal(bg_art_open(base, &b, why, sizeof(why)), 0);
	assert_int_equal(bg_art_open(path_of(dname), &d, why, sizeof(why)), 0);
	assert_int_equal(bg_art_open(path_of(name), &full, why, sizeof(why)), 0);
	assert_int_equal(d.h->kind, BG_ART_DELTA);
	assert_memory_equal(d.h->base_sha256, b.h->digest, BG_ART_SHA);
	assert_memory_equal(d.h->result_sha256, full.h->digest, BG_ART_SHA);
	/* and the files by their SHA-256, as sha256sum names them */
	bg_sha256(b.base, b.len, want);
	assert_memory_equal(d.h->base_file_sha256, want, BG_ART_SHA);
	bg_sha256(full.base, full.len, want);
	assert_memory_equal(d.h->result_file_sha256, want, BG_ART_SHA);
	assert_int_equal(bg_art_delta_apply(&b, &d, path_of(oname), 0, fsha, why,
					    sizeof(why)), 0);
	assert_memory_equal(fsha, want, BG_ART_SHA);
	assert_int_equal(bg_art_open(path_of(oname), &out, why, sizeof(why)), 0);
	assert_int_equal(out.len, full.len);
	assert_memory_equal(out.base, full.base, full.len);
	bg_art_close(&out);
	bg_art_close(&full);
	bg_art_close(&d);
	bg_art_close(&b);
}

/* Addresses [from, to) listed (1) or not (0) by the filter of gen<g>.bga;
 * not listed ones must be rejected by the exact stage or Bloom
 * negatives, never listed. */
static void expect_listed(uint64_t g, uint32_t from, uint32_t to, int listed)
{
	struct bg_art a;
	const void *f;
	size_t len;
	char name[64], why[256];
	uint32_t i;

	snprintf(name, sizeof(name), "gen%llu.bga", (unsigned long long)g);
	assert_int_equal(bg_art_open(path_of(name), &a, why, sizeof(why)), 0);
	f = bg_art_sec(&a, BG_ART_SEC_FILTER, &len);
	for (i = from; i < to; i++) {
		int r = bg_filter_test4(f, htonl(addr(i * 7919u)));

		if (r != listed)
			fail_msg("generation %llu: address %u is %s", (unsigned long long)g,
				 i, r ? "listed" : "not listed");
	}
	bg_art_close(&a);
}

static void test_delta_generations(void **state)
{
	static const char *const lists[] = { "block.txt", "names.txt" };
	struct gen g1, g2, g3, g4, g5, g6, g7;

	(void)state;
	write_list("block.txt", 0, 20000, "198.51.100.0/24\n");
	write_list("names.txt", 0, 0, "ads.example.com\n*.cdn.example.org\n");

	/* 1: the first, full */
	publish(1, NULL, 0, 0, lists, 2, &g1);
	assert_int_equal(g1.ret, 0);
	assert_int_equal(g1.res.delta, 0);
	assert_non_null(strstr(g1.res.why_full, "first"));

	/* 2: 20 out, 20 in: a delta, small, exact */
	write_list("block.txt", 20, 20020, "198.51.100.0/24\n");
	publish(2, path_of("gen1.bga"), 0, 0, lists, 2, &g2);
	assert_int_equal(g2.ret, 0);
	if (!g2.res.delta)
		fail_msg("generation 2 is full: %s", g2.res.why_full);
	assert_int_equal(g2.res.keys_added, 20);
	assert_int_equal(g2.res.keys_removed, 20);
	assert_true(g2.res.delta_bytes * 10 < g2.res.full_bytes);
	delta_rebuilds(2, path_of("gen1.bga"));
	expect_listed(2, 20, 20020, 1);
	expect_listed(2, 0, 20, 0);

	/* 3: the same lists, the names changed too: still a delta */
	write_list("names.txt", 0, 0, "ads.example.com\ntracker.example.net\n");
	publish(3, path_of("gen2.bga"), 0, 0, lists, 2, &g3);
	assert_int_equal(g3.ret, 0);
	if (!g3.res.delta)
		fail_msg("generation 3 is full: %s", g3.res.why_full);
	delta_rebuilds(3, path_of("gen2.bga"));
	expect_listed(3, 20, 20020, 1);

	/* 4: half the keys replaced: the removed keys' bits raise the Bloom
	 * part's rate past twice its target: full, built anew */
	write_list("block.txt", 10020, 30020, "198.51.100.0/24\n");
	publish(4, path_of("gen3.bga"), 0, 0, lists, 2, &g4);
	assert_int_equal(g4.ret, 0);
	assert_int_equal(g4.res.delta, 0);
	assert_non_null(strstr(g4.res.why_full, "rate"));
	expect_listed(4, 10020, 30020, 1);
	expect_listed(4, 20, 10020, 0);

	/* 5: the lists reordered: full */
	{
		static const char *const swapped[] = { "names.txt", "block.txt" };

		publish(5, path_of("gen4.bga"), 0, 0, swapped, 2, &g5);
		assert_int_equal(g5.ret, 0);
		assert_int_equal(g5.res.delta, 0);
		assert_non_null(strstr(g5.res.why_full, "list 0 changed"));
	}
	/* 6: another rate: full */
	publish(6, path_of("gen5.bga"), 0, 0.001, lists, 2, &g6);
	assert_int_equal(g6.ret, 0);
	assert_int_equal(g6.res.delta, 0);
	assert_non_null(strstr(g6.res.why_full, "options"));
	/* 7: asked for, and the cache lost: full either way */
	publish(7, path_of("gen6.bga"), 1, 0.001, lists, 2, &g7);
	assert_int_equal(g7.res.delta, 0);
	assert_non_null(strstr(g7.res.why_full, "--full"));
	assert_int_equal(system("rm -rf /tmp/bg-test-publish.*/cache/*"), 0);
	publish(8, path_of("gen7.bga"), 0, 0.001, lists, 2, &g7);
	assert_int_equal(g7.ret, 0);
	assert_int_equal(g7.res.delta, 0);
	assert_non_null(strstr(g7.res.why_full, "cache"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delta_generations),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
