// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The load on several threads makes what it makes on one (issue: the load
 * scales to 100M keys): lists of addresses (IPv4 and IPv6, prefixes of
 * several lengths, rejected and warned lines), names of every kind and
 * allowlists, big enough that the address list is parsed in pieces and the
 * exact stage's keys overflow to their second bucket and kick. Parsed with
 * 1 and with N threads, they give the same blocklist and the same reports;
 * built with 1 and with N threads (in one pass and in several), the same
 * map byte for byte; and every listed key probes positive in it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bloomgate/bloom.h"
#include "bloomgate/dns.h"
#include "core/filter.h"
#include "core/prepare.h"

static char dir[] = "/tmp/bg-test-build.XXXXXX";
static char addr_path[300], names_path[300], allow_path[300];

static uint64_t rng = 0x9d2c5680a1b2c3d4ULL;

static uint64_t rnd(void)
{
	/* splitmix64: deterministic, independent of the filter's xxh64 */
	uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* The address list: 320k lines (over 4 MiB: parsed in pieces), mostly
 * IPv4 /32s, with prefixes of IPv4 /9../31 (the /16-or-shorter ones in
 * the bitmap), IPv6 /128s and /36../64s (expanded or exact ranges),
 * comments, CRLF ends, host bits set (warnings) and rejected lines. */
static void write_addrs(const char *path)
{
	FILE *f = fopen(path, "w");
	char a6[INET6_ADDRSTRLEN];
	size_t i;

	assert_non_null(f);
	for (i = 0; i < 320000; i++) {
		uint64_t r = rnd();
		uint32_t a = (uint32_t)r;
		uint8_t b6[16];

		if (i % 997 == 5) {
			memcpy(b6, &r, 8);
			r = rnd();
			memcpy(b6 + 8, &r, 8);
			b6[0] = 0x20;
			b6[1] = 0x01;
			inet_ntop(AF_INET6, b6, a6, sizeof(a6));
			if (i % 3)
				fprintf(f, "%s\n", a6);
			else
				fprintf(f, "%s/%u\n", a6, 36 + (unsigned int)(r % 29));
		} else if (i % 1013 == 7) {
			fprintf(f, "%u.%u.%u.%u/%u\n", a >> 24, (a >> 16) & 255,
				(a >> 8) & 255, a & 255,
				9 + (unsigned int)((r >> 32) % 23));
		} else if (i % 2011 == 3) {
			fprintf(f, "# comment %zu\n", i);
		} else if (i % 3001 == 11) {
			fprintf(f, "bogus line %zu\n", i);
		} else if (i % 1999 == 13) {
			fprintf(f, "%u.%u.%u.%u\r\n", a >> 24, (a >> 16) & 255,
				(a >> 8) & 255, a & 255);
		} else {
			fprintf(f, "%u.%u.%u.%u  # n\n", a >> 24, (a >> 16) & 255,
				(a >> 8) & 255, a & 255);
		}
	}
	fclose(f);
}

/* Adblock rules of every kind (name and subdomains, the name only,
 * subdomains only, allow), some deeper than the probed depths. */
static void write_names(const char *path)
{
	FILE *f = fopen(path, "w");
	size_t i;

	assert_non_null(f);
	for (i = 0; i < 30000; i++) {
		switch (i % 5) {
		case 0: fprintf(f, "||n%zu.example.com^\n", i); break;
		case 1: fprintf(f, "|e%zu.example.org^\n", i); break;
		case 2: fprintf(f, "||*.s%zu.example.net^\n", i); break;
		case 3: fprintf(f, "@@||ok.n%zu.example.com^\n", i - 3); break;
		default: fprintf(f, "||a.b.c.d.e.f.g.h.i.j.k%zu.example^\n", i); break;
		}
	}
	fclose(f);
}

static void write_allow(const char *path)
{
	FILE *f = fopen(path, "w");
	size_t i;

	assert_non_null(f);
	for (i = 0; i < 2000; i++) {
		uint32_t a = (uint32_t)rnd();

		fprintf(f, "%u.%u.%u.%u/%u\n", a >> 24, (a >> 16) & 255,
			(a >> 8) & 255, a & 255, 24 + (unsigned int)(i % 9));
	}
	fprintf(f, "2001:db8::/48\n");
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(addr_path, sizeof(addr_path), "%s/addrs.txt", dir);
	snprintf(names_path, sizeof(names_path), "%s/names.txt", dir);
	snprintf(allow_path, sizeof(allow_path), "%s/allow.txt", dir);
	write_addrs(addr_path);
	write_names(names_path);
	write_allow(allow_path);
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* Every diagnostic, printed, in the order it came. */
struct diags {
	char *text;
	size_t len, cap;
	size_t n, last_line;
	int ordered; /* line numbers never went down within the address list */
};

static void on_diag(void *ctx, const struct bg_diag *d)
{
	struct diags *s = ctx;
	char line[1024];
	int n;
	FILE *f = fmemopen(line, sizeof(line), "w");

	assert_non_null(f);
	bg_diag_print(f, d);
	n = (int)ftell(f);
	fclose(f);
	if (s->len + (size_t)n + 1 > s->cap) {
		s->cap = 2 * (s->len + (size_t)n + 1);
		s->text = realloc(s->text, s->cap);
		assert_non_null(s->text);
	}
	memcpy(s->text + s->len, line, (size_t)n);
	s->len += (size_t)n;
	s->text[s->len] = '\0';
	if (!strcmp(d->file, addr_path) && d->line) {
		if (d->line < s->last_line)
			s->ordered = 0;
		s->last_line = d->line;
	}
	s->n++;
}

static void prepare(unsigned int threads, struct bg_sources *srcs,
		    struct bg_blocklist *bl, struct bg_load_report *r,
		    struct diags *dg)
{
	struct bg_load_opts o = { .threads = threads, .diag = on_diag,
				  .diag_ctx = dg };

	bg_sources_init(srcs);
	assert_int_equal(bg_sources_add(srcs, addr_path, 0), 0);
	assert_int_equal(bg_sources_add(srcs, names_path, 0), 0);
	assert_int_equal(bg_sources_add(srcs, allow_path, 1), 0);
	assert_int_equal(bg_sources_add(srcs, names_path, 1), 0);
	o.sources = srcs;
	memset(dg, 0, sizeof(*dg));
	dg->ordered = 1;
	bg_load_report_init(r);
	assert_int_equal(bg_load_prepare(&o, bl, r), 0);
}

static void same_list(const struct bg_list *a, const struct bg_list *b)
{
	assert_int_equal(a->n4, b->n4);
	assert_int_equal(a->n6, b->n6);
	assert_memory_equal(a->v4, b->v4, a->n4 * sizeof(*a->v4));
	if (a->n6)
		assert_memory_equal(a->v6, b->v6, a->n6 * sizeof(*a->v6));
	assert_int_equal(a->lines, b->lines);
	assert_int_equal(a->accepted, b->accepted);
	assert_int_equal(a->rejected, b->rejected);
	assert_int_equal(a->duplicates, b->duplicates);
	assert_int_equal(a->covered, b->covered);
	assert_int_equal(a->warnings, b->warnings);
}

/* Every listed key probes positive, confirmed by the exact stage. */
static void no_false_negative(const void *mem, const struct bg_blocklist *bl)
{
	char q[300];
	size_t i;
	int rej;

	for (i = 0; i < bl->block.n4; i++) {
		const struct bg_key4 *k = &bl->block.v4[i];
		__u32 first = k->addr, last = k->addr | ~bg_mask4(k->plen);

		assert_int_equal(bg_filter_judge4(mem, first, &rej), 1);
		assert_int_equal(rej, 0);
		assert_int_equal(bg_filter_judge4(mem, last, &rej), 1);
		assert_int_equal(rej, 0);
	}
	for (i = 0; i < bl->block.n6; i++) {
		const struct bg_key6 *k = &bl->block.v6[i];
		__u8 last[16];
		int b;

		memcpy(last, k->addr, 16);
		for (b = k->plen; b < 128; b++)
			last[b / 8] |= (__u8)(0x80 >> (b % 8));
		assert_int_equal(bg_filter_judge6(mem, k->addr, &rej), 1);
		assert_int_equal(rej, 0);
		assert_int_equal(bg_filter_judge6(mem, last, &rej), 1);
		assert_int_equal(rej, 0);
	}
	for (i = 0; i < bl->names.n; i++) {
		const struct bg_name *e = &bl->names.v[i];
		int dots = 0;
		const char *c;

		if (e->allow)
			continue;
		for (c = e->name; *c; c++)
			dots += *c == '.';
		if (e->kind != BG_NAME_SUBS)
			assert_int_equal(bg_filter_test_name(mem, e->name, NULL), 1);
		if (e->kind != BG_NAME_EXACT && dots + 1 <= BG_DNS_SUFFIX_MAX) {
			snprintf(q, sizeof(q), "x.%s", e->name);
			assert_int_equal(bg_filter_test_name(mem, q, NULL), 1);
		}
	}
}

/* /32 keys whose fingerprint is not in their first bucket: the build
 * went past first buckets (those full), so the second and the walk ran. */
static size_t in_second_bucket(const void *mem, const struct bg_blocklist *bl)
{
	const struct bg_filter_header *h = mem;
	const struct bg_fp_bucket *bk =
		(const struct bg_fp_bucket *)((const struct bg_block *)mem + h->fp_off);
	size_t i, n = 0;
	int j, found;

	for (i = 0; i < bl->block.n4; i++) {
		const struct bg_key4 *k = &bl->block.v4[i];
		__u64 h2;
		__u32 f, b1;

		if (k->plen != 32)
			continue;
		h2 = bg_fp_hash(bg_key4_hash(k, h->seed), h->seed);
		f = bg_fp_of(h2);
		b1 = bg_fp_bucket1(h2, h->fp_nbuckets);
		for (j = 0, found = 0; j < BG_FP_PER_BUCKET; j++)
			found |= bk[b1].fp[j] == f;
		n += !found;
	}
	return n;
}

static void test_threads_same_filter(void **state)
{
	static const unsigned int threads[] = { 2, 3, 5 };
	struct bg_sources s1, sn;
	struct bg_blocklist b1, bn;
	struct bg_load_report r1, rn;
	struct diags d1, dn;
	void *m1, *mn, *p1;
	size_t i;
	struct stat st;

	(void)state;
	assert_int_equal(stat(addr_path, &st), 0);
	assert_true(st.st_size > (8 << 20) / 2); /* read in pieces */
	prepare(1, &s1, &b1, &r1, &d1);
	for (i = 0; i < sizeof(threads) / sizeof(threads[0]); i++) {
		prepare(threads[i], &sn, &bn, &rn, &dn);
		/* the same reports, in the same (line) order */
		assert_true(d1.n > 100);
		assert_int_equal(d1.n, dn.n);
		assert_string_equal(d1.text, dn.text);
		assert_true(d1.ordered && dn.ordered);
		same_list(&b1.block, &bn.block);
		same_list(&b1.allow, &bn.allow);
		assert_int_equal(b1.names.n, bn.names.n);
		assert_memory_equal(&r1.plan, &rn.plan, sizeof(r1.plan));
		bg_blocklist_free(&bn);
		bg_load_report_free(&rn);
		bg_sources_free(&sn);
		free(dn.text);
	}
	assert_true(r1.plan.fp_nbuckets > 0 && r1.plan.n > 300000);
	assert_true(b1.block.covered > 0 && b1.block.warnings > 0);

	m1 = calloc(1, r1.plan.bytes);
	mn = calloc(1, r1.plan.bytes);
	p1 = calloc(1, r1.plan.bytes);
	assert_non_null(m1);
	assert_non_null(mn);
	assert_non_null(p1);
	assert_int_equal(bg_filter_build_mt(m1, &r1.plan, 77, &b1, 1), 0);
	no_false_negative(m1, &b1);
	assert_true(in_second_bucket(m1, &b1) > 1000);
	/* several passes: the same too, on any thread count */
	assert_int_equal(bg_filter_build_ex(p1, &r1.plan, 77, &b1, 1, 40000), 0);
	no_false_negative(p1, &b1);
	for (i = 0; i < sizeof(threads) / sizeof(threads[0]); i++) {
		memset(mn, 0, r1.plan.bytes);
		assert_int_equal(bg_filter_build_mt(mn, &r1.plan, 77, &b1,
						    threads[i]), 0);
		assert_memory_equal(m1, mn, r1.plan.bytes);
		memset(mn, 0, r1.plan.bytes);
		assert_int_equal(bg_filter_build_ex(mn, &r1.plan, 77, &b1,
						    threads[i], 40000), 0);
		assert_memory_equal(p1, mn, r1.plan.bytes);
	}
	free(m1);
	free(mn);
	free(p1);
	free(d1.text);
	bg_blocklist_free(&b1);
	bg_load_report_free(&r1);
	bg_sources_free(&s1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_same_filter),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
