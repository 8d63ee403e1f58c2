// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Filter artifacts (core/artifact.h, core/artbuild.h): the image `build`
 * writes is the filter `load` builds into a map from the same lists and
 * seed, bit for bit; what is written opens and verifies; every kind of
 * damage (a flipped byte in any section or the header, a cut or grown
 * file, another format version or ABI) is refused with a reason; a delta
 * between two generations rebuilds the second from the first exactly, and
 * is refused against another base or when a patch is damaged. Every
 * field of the header, the section table, the filter image's header and
 * the index's, forged one at a time with the digests made right
 * (tests/artforge.h), is refused with a line naming it; so are forged
 * deltas and a flipped padding byte. The checksum is the file's SHA-256.
 * Maps are real (bpf_map_create): run as root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artforge.h"
#include "core/artbuild.h"
#include "core/artifact.h"
#include "core/attach_opts.h"
#include "kern/swap.h"

#define SEED 0x5eed1234ULL

static char dir[] = "/tmp/bg-test-artifact.XXXXXX";

static void write_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *path_of(const char *name)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static int setup(void **state)
{
	char *big = malloc(30000 * 20), *p;
	int i;

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	/* addresses: 30000 /32s, prefixes of several lengths, IPv6 */
	p = big;
	for (i = 0; i < 30000; i++)
		p += sprintf(p, "10.%d.%d.%d\n", i >> 16, (i >> 8) & 255, i & 255);
	p += sprintf(p, "198.51.100.0/24\n203.0.113.128/25\n172.16.0.0/12\n");
	p += sprintf(p, "2001:db8::1\n2001:db8:100::/48\n");
	write_file("addr.txt", big);
	free(big);
	write_file("names.txt", "ads.example.com\ntracker.example.net\n*.cdn.example.org\n");
	/* what tests/artforge.h forges: /32s only, names, nothing allowed */
	p = big = malloc(3000 * 20);
	for (i = 0; i < 3000; i++)
		p += sprintf(p, "10.9.%d.%d\n", i >> 8, i & 255);
	write_file("plain4.txt", big);
	free(big);
	write_file("allow.txt", "10.0.0.7\n198.51.100.128/26\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* The three lists as `load` and `build` take them. */
static void sources(struct bg_sources *s)
{
	bg_sources_init(s);
	assert_int_equal(bg_sources_add(s, path_of("addr.txt"), 0), 0);
	assert_int_equal(bg_sources_add(s, path_of("names.txt"), 0), 0);
	assert_int_equal(bg_sources_add(s, path_of("allow.txt"), 1), 0);
}

static void build(struct bg_art_built *b, uint64_t seed, unsigned int threads)
{
	struct bg_load_opts o = { .seed = seed, .threads = threads };
	struct bg_load_report r;
	struct bg_sources s;

	sources(&s);
	o.sources = &s;
	bg_load_report_init(&r);
	assert_int_equal(bg_art_build(&o, NULL, b, &r), 0);
	bg_load_report_free(&r);
	bg_sources_free(&s);
}

/* `load`'s build of the same lists: prepare, then the map built as
 * bg_load_commit() builds it; the map's bytes. */
static void *load_bytes(uint64_t seed, size_t *len)
{
	struct bg_load_opts o = { .seed = seed };
	struct bg_load_report r;
	struct bg_blocklist bl;
	struct bg_sources s;
	size_t mlen;
	void *m, *out;
	int fd;

	sources(&s);
	o.sources = &s;
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), 0);
	fd = bg_filter_create_mt(&r.plan, seed, &bl, 0);
	assert_true(fd >= 0);
	*len = r.plan.bytes;
	mlen = (*len + 4095) / 4096 * 4096;
	m = mmap(NULL, mlen, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	out = malloc(*len);
	assert_non_null(out);
	memcpy(out, m, *len);
	munmap(m, mlen);
	close(fd);
	bg_blocklist_free(&bl);
	bg_load_report_free(&r);
	bg_sources_free(&s);
	return out;
}

static void test_image_is_loads_filter(void **state)
{
	struct bg_art_built b1, b2;
	size_t len;
	void *live;

	(void)state;
	build(&b1, SEED, 0);
	live = load_bytes(SEED, &len);
	assert_int_equal(b1.filter_len, len);
	assert_memory_equal(b1.filter, live, len);
	/* and on one thread: the same image, index and sources */
	build(&b2, SEED, 1);
	assert_int_equal(b2.filter_len, len);
	assert_memory_equal(b2.filter, live, len);
	assert_int_equal(b1.index_len, b2.index_len);
	assert_memory_equal(b1.index, b2.index, b1.index_len);
	assert_string_equal(b1.sources, b2.sources);
	/* another seed: another filter */
	free(live);
	live = load_bytes(SEED + 1, &len);
	assert_int_equal(b1.filter_len, len);
	assert_true(memcmp(b1.filter, live, len) != 0);
	free(live);
	bg_art_built_free(&b1);
	bg_art_built_free(&b2);
}

/* Writes a built artifact to name; its bytes in *buf (malloc'd). */
static void write_art(struct bg_art_built *b, const char *name, uint8_t **buf,
		      size_t *len)
{
	int fd;
	struct stat st;

	assert_int_equal(bg_art_built_write(b, path_of(name), 0, NULL), 0);
	fd = open(path_of(name), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	*buf = malloc(*len);
	assert_non_null(*buf);
	assert_int_equal(read(fd, *buf, *len), (ssize_t)*len);
	close(fd);
}

static void test_written_opens_and_verifies(void **state)
{
	struct bg_art_built b;
	struct bg_art_sources s;
	struct bg_art a;
	uint8_t *buf;
	size_t len, flen;
	const void *f;
	char why[256];

	(void)state;
	build(&b, SEED, 0);
	write_art(&b, "a.bga", &buf, &len);
	assert_int_equal(bg_art_open(path_of("a.bga"), &a, why, sizeof(why)), 0);
	assert_int_equal(bg_art_verify(&a, ~0u, NULL, 0, why, sizeof(why)), 0);
	assert_int_equal(a.h->kind, BG_ART_FULL);
	assert_int_equal(a.h->plan.seed, SEED);
	assert_int_equal(a.h->plan.nelems, b.h.plan.nelems);
	assert_int_equal(a.h->nsources, 3);
	f = bg_art_sec(&a, BG_ART_SEC_FILTER, &flen);
	assert_int_equal(flen, b.filter_len);
	assert_memory_equal(f, b.filter, flen);
	/* the sources: names, roles, formats, entries, checksums */
	assert_int_equal(bg_art_sources_read(&a, &s), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.v[0].name, "addr.txt");
	assert_string_equal(s.v[0].role, "block");
	assert_string_equal(s.v[0].format, "addr");
	assert_int_equal(s.v[0].entries, 30005);
	assert_string_equal(s.v[1].format, "plain");
	assert_int_equal(s.v[1].entries, 3);
	assert_string_equal(s.v[2].role, "allow");
	assert_int_equal(strlen(s.v[0].sha256), 64);
	{
		char sha[65];

		assert_int_equal(bg_sha256_file(path_of("addr.txt"), sha), 0);
		assert_string_equal(s.v[0].sha256, sha);
	}
	bg_art_sources_free(&s);
	bg_art_close(&a);
	free(buf);
	bg_art_built_free(&b);
}

/* buf (len bytes) written to name, then opened and verified: the error
 * and the reason. */
static int try_open(const uint8_t *buf, size_t len, char *why, size_t whylen)
{
	struct bg_art a;
	int fd, ret;

	fd = open(path_of("bad.bga"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	why[0] = 0;
	ret = bg_art_open(path_of("bad.bga"), &a, why, whylen);
	if (ret)
		return ret;
	ret = bg_art_verify(&a, ~0u, NULL, 0, why, whylen);
	bg_art_close(&a);
	return ret;
}

static void flip_refused(uint8_t *buf, size_t len, size_t off, const char *want)
{
	char why[256];
	int ret;

	buf[off] ^= 0x40;
	ret = try_open(buf, len, why, sizeof(why));
	buf[off] ^= 0x40;
	if (ret != -EBADMSG || !strstr(why, want))
		fail_msg("a byte flipped at %zu: %d '%s', wanted '%s'", off, ret, why,
			 want);
}

static void test_damage_refused(void **state)
{
	struct bg_art_built b;
	struct bg_art_header h;
	uint8_t *buf;
	size_t len;
	char why[256];
	int s;

	(void)state;
	build(&b, SEED, 0);
	write_art(&b, "a.bga", &buf, &len);
	memcpy(&h, buf, sizeof(h));
	assert_int_equal(try_open(buf, len, why, sizeof(why)), 0);
	/* the header: magic, a field, the digest itself */
	flip_refused(buf, len, 0, "no magic");
	flip_refused(buf, len, offsetof(struct bg_art_header, generation), "header");
	flip_refused(buf, len, offsetof(struct bg_art_header, plan) + 8, "header");
	flip_refused(buf, len, offsetof(struct bg_art_header, digest) + 3, "header");
	/* each section: first, middle and last byte */
	for (s = 0; s < BG_ART_SEC__COUNT; s++) {
		static const char *const names[] = { "sources", "filter", "index",
						     "delta", "digests" };
		size_t off = h.sec[s].off, l = h.sec[s].len;

		if (!l)
			continue;
		flip_refused(buf, len, off, names[s]);
		flip_refused(buf, len, off + l / 2, names[s]);
		flip_refused(buf, len, off + l - 1, names[s]);
	}
	/* cut short, or grown */
	assert_int_equal(try_open(buf, len - 1, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "truncated"));
	{
		uint8_t *more = malloc(len + 1);

		memcpy(more, buf, len);
		more[len] = 0;
		assert_int_equal(try_open(more, len + 1, why, sizeof(why)), -EBADMSG);
		free(more);
	}
	/* another version or ABI, the header's digest made right: -EPROTO */
	{
		struct bg_art_header *hp = (void *)buf;
		struct bg_art_header t;

		hp->version = BG_ART_VERSION + 1;
		t = *hp;
		memset(t.digest, 0, sizeof(t.digest));
		bg_sha256(&t, sizeof(t), hp->digest);
		assert_int_equal(try_open(buf, len, why, sizeof(why)), -EPROTO);
		assert_non_null(strstr(why, "version"));
		hp->version = BG_ART_VERSION;
		hp->abi_version = BG_ABI_VERSION + 1;
		t = *hp;
		memset(t.digest, 0, sizeof(t.digest));
		bg_sha256(&t, sizeof(t), hp->digest);
		assert_int_equal(try_open(buf, len, why, sizeof(why)), -EPROTO);
		assert_non_null(strstr(why, "ABI"));
		memcpy(buf, &h, sizeof(h));
	}
	assert_int_equal(try_open(buf, len, why, sizeof(why)), 0);
	free(buf);
	bg_art_built_free(&b);
}

/* The delta from full artifact g1 to g2 (names in dir) written to out:
 * the three opened; its patches. */
static size_t make_delta(const char *g1, const char *g2, const char *out,
			 struct bg_art *base, struct bg_art *res, struct bg_art *d)
{
	char why[256];
	size_t n = 0;
	int fd;

	assert_int_equal(bg_art_open(path_of(g1), base, why, sizeof(why)), 0);
	assert_int_equal(bg_art_open(path_of(g2), res, why, sizeof(why)), 0);
	fd = open(path_of(out), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(bg_art_delta_write_fd(fd, base, res, 2, 0, &n), 0);
	close(fd);
	assert_int_equal(bg_art_open(path_of(out), d, why, sizeof(why)), 0);
	return n;
}

/* Two generations of the same plan (the second: some elements of the
 * first's filter and index changed), their delta, and its apply. */
static void test_delta_rebuilds_the_result(void **state)
{
	struct bg_art_built b;
	struct bg_art base, res, d, out, other;
	uint8_t *buf;
	size_t len, n = 0, dlen;
	char why[256];
	uint8_t *f, *ix;

	(void)state;
	build(&b, SEED, 0);
	b.h.generation = 1;
	write_art(&b, "g1.bga", &buf, &len);
	free(buf);
	/* generation 2: three filter elements and one index element differ */
	f = b.filter;
	ix = b.index;
	f[64 * 5 + 3] ^= 1;
	f[64 * 40] ^= 0x80;
	f[b.filter_len - 1] ^= 2;
	ix[64 * 2 + 9] ^= 4;
	b.h.generation = 2;
	write_art(&b, "g2.bga", &buf, &len);
	free(buf);
	n = make_delta("g1.bga", "g2.bga", "d2.bga", &base, &res, &d);
	assert_int_equal(n, 4);
	assert_int_equal(d.h->kind, BG_ART_DELTA);
	assert_int_equal(d.h->base_generation, 1);
	assert_int_equal(bg_art_verify(&d, ~0u, NULL, 0, why, sizeof(why)), 0);
	bg_art_sec(&d, BG_ART_SEC_DELTA, &dlen);
	assert_int_equal(dlen, BG_ART_HEADER + 4 * sizeof(struct bg_art_patch));
	/* applied to its base: the second generation, whole */
	assert_int_equal(bg_art_delta_apply(&base, &d, path_of("out.bga"), 0, NULL,
					    why, sizeof(why)), 0);
	assert_int_equal(bg_art_open(path_of("out.bga"), &out, why, sizeof(why)), 0);
	assert_memory_equal(out.h->digest, res.h->digest, BG_ART_SHA);
	assert_int_equal(out.len, res.len);
	assert_memory_equal(out.base, res.base, res.len);
	bg_art_close(&out);
	/* applied to another base (the result itself): refused */
	assert_int_equal(bg_art_delta_apply(&res, &d, path_of("out2.bga"), 0, NULL,
					    why, sizeof(why)), -ESTALE);
	assert_int_equal(access(path_of("out2.bga"), F_OK), -1);
	/* a delta whose patch is damaged, but whose own checksums are made
	 * right (a publisher's bug): the result does not match, nothing
	 * written */
	{
		size_t dl;
		uint8_t *copy = malloc(d.len);
		struct bg_art_header *dh = (void *)copy;
		struct bg_art_patch *pv;
		const uint8_t *ds;
		struct bg_art_parts parts;
		struct bg_art_header h2;

		memcpy(copy, d.base, d.len);
		ds = bg_art_sec(&d, BG_ART_SEC_DELTA, &dl);
		pv = (void *)(copy + (ds - d.base) + BG_ART_HEADER);
		pv[1].data[0] ^= 0xff;
		memset(&parts, 0, sizeof(parts));
		parts.data[BG_ART_SEC_SOURCES] = copy + dh->sec[BG_ART_SEC_SOURCES].off;
		parts.len[BG_ART_SEC_SOURCES] = dh->sec[BG_ART_SEC_SOURCES].len;
		parts.data[BG_ART_SEC_DELTA] = copy + dh->sec[BG_ART_SEC_DELTA].off;
		parts.len[BG_ART_SEC_DELTA] = dl;
		h2 = *dh;
		assert_int_equal(bg_art_write(path_of("dbad.bga"), &h2, &parts, 0, NULL), 0);
		free(copy);
		assert_int_equal(bg_art_open(path_of("dbad.bga"), &other, why,
					     sizeof(why)), 0);
		assert_int_equal(bg_art_delta_apply(&base, &other, path_of("out3.bga"),
						    0, NULL, why, sizeof(why)), -EBADMSG);
		assert_non_null(strstr(why, "does not match"));
		assert_int_equal(access(path_of("out3.bga"), F_OK), -1);
		bg_art_close(&other);
	}
	bg_art_close(&d);
	bg_art_close(&base);
	bg_art_close(&res);
	bg_art_built_free(&b);
}

/* check on an artifact: the index names the list behind an address, a
 * prefix, a name, and an allow entry. */
static void test_finder_names_lists(void **state)
{
	struct bg_art_built b;
	struct bg_art_finder f;
	struct bg_explain_hit *h;
	uint8_t *buf;
	size_t len, n, i;
	char why[256];
	int saw_allow = 0, saw_block = 0;

	(void)state;
	build(&b, SEED, 0);
	write_art(&b, "f.bga", &buf, &len);
	free(buf);
	assert_int_equal(bg_art_finder_open(path_of("f.bga"), b.h.digest, &f, why,
					    sizeof(why)), 0);
	assert_int_equal(bg_art_find(&f, "10.0.1.2", &h, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(h[0].source, "addr.txt");
	assert_string_equal(h[0].entry, "10.0.1.2");
	assert_int_equal(h[0].line, 0);
	free(h);
	assert_int_equal(bg_art_find(&f, "198.51.100.130", &h, &n), 0);
	for (i = 0; i < n; i++) {
		if (h[i].allow && !strcmp(h[i].entry, "198.51.100.128/26") &&
		    !strcmp(h[i].source, "allow.txt"))
			saw_allow = 1;
		if (!h[i].allow && !strcmp(h[i].entry, "198.51.100.0/24"))
			saw_block = 1;
	}
	assert_true(saw_allow && saw_block);
	free(h);
	assert_int_equal(bg_art_find(&f, "img.cdn.example.org", &h, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(h[0].source, "names.txt");
	assert_string_equal(h[0].parent, "cdn.example.org");
	free(h);
	assert_int_equal(bg_art_find(&f, "192.0.2.1", &h, &n), 0);
	assert_int_equal(n, 0);
	free(h);
	bg_art_finder_close(&f);
	/* a record whose digest is another artifact's: stale */
	b.h.digest[0] ^= 1;
	assert_int_equal(bg_art_finder_open(path_of("f.bga"), b.h.digest, &f, why,
					    sizeof(why)), -ESTALE);
	bg_art_built_free(&b);
}

/* Lists (names in dir, blocked) built into b with seed. */
static void build_lists(struct bg_art_built *b, uint64_t seed,
			const char *const *names, size_t n)
{
	struct bg_load_opts o = { .seed = seed };
	struct bg_load_report r;
	struct bg_sources s;
	size_t i;

	bg_sources_init(&s);
	for (i = 0; i < n; i++)
		assert_int_equal(bg_sources_add(&s, path_of(names[i]), 0), 0);
	o.sources = &s;
	bg_load_report_init(&r);
	assert_int_equal(bg_art_build(&o, NULL, b, &r), 0);
	bg_load_report_free(&r);
	bg_sources_free(&s);
}

static const char *const forge_lists[] = { "plain4.txt", "names.txt" };

/* Every case of tests/artforge.h: one field forged, the file sealed again
 * as a forger would; refused by bg_art_open() or bg_art_verify() (what
 * every reader runs before anything else), with one line naming it. */
static void test_forged_fields(void **state)
{
	struct bg_art_built b;
	uint8_t *buf, *copy;
	size_t len, i;
	char why[512];
	int ret;

	(void)state;
	build_lists(&b, SEED, forge_lists, 2);
	write_art(&b, "forge.bga", &buf, &len);
	assert_int_equal(b.h.plan.n4, 1);
	assert_int_equal(b.h.plan.n6, 0);
	assert_int_equal(b.h.plan.allow4 + b.h.plan.allow6, 0);
	assert_true(b.h.plan.name_keys > 0);
	assert_int_equal(try_open(buf, len, why, sizeof(why)), 0);
	copy = malloc(len);
	assert_non_null(copy);
	for (i = 0; i < FORGE_CASES; i++) {
		const struct forge_case *c = &forge_cases[i];

		memcpy(copy, buf, len);
		assert_int_equal(forge_apply(copy, len, c), 0);
		ret = try_open(copy, len, why, sizeof(why));
		if (ret != c->err || !strstr(why, c->want) || strchr(why, '\n'))
			fail_msg("forged %s: %d '%s', wanted %d '%s'", c->name, ret, why,
				 c->err, c->want);
	}
	free(copy);
	free(buf);
	bg_art_built_free(&b);
}

/* A delta's fields: the digests of what a field covers made right. */
static void seal_delta(uint8_t *buf)
{
	struct bg_art_header h;

	memcpy(&h, buf, sizeof(h));
	forge_seal_section(buf, &h, BG_ART_SEC_DELTA, (struct bg_art_header *)buf);
	forge_seal_header((struct bg_art_header *)buf);
}

/* d (a delta) written with a change made by fn, opened, verified and
 * applied to base: what failed, and why. */
static int try_delta(const struct bg_art *base, const struct bg_art *d,
		     void (*fn)(uint8_t *buf), char *why, size_t whylen)
{
	uint8_t *copy = malloc(d->len);
	struct bg_art x;
	int fd, ret;

	assert_non_null(copy);
	memcpy(copy, d->base, d->len);
	fn(copy);
	fd = open(path_of("dx.bga"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, copy, d->len), (ssize_t)d->len);
	close(fd);
	free(copy);
	unlink(path_of("dx.out"));
	why[0] = 0;
	ret = bg_art_open(path_of("dx.bga"), &x, why, whylen);
	if (ret)
		return ret;
	ret = bg_art_verify(&x, ~0u, NULL, 0, why, whylen);
	if (!ret)
		ret = bg_art_delta_apply(base, &x, path_of("dx.out"), 0, NULL, why,
					 whylen);
	bg_art_close(&x);
	if (ret)
		assert_int_equal(access(path_of("dx.out"), F_OK), -1);
	return ret;
}

static struct bg_art_header *dh(uint8_t *buf)
{
	return (struct bg_art_header *)buf;
}

/* The result header the delta carries, and its patches. */
static struct bg_art_header *rh(uint8_t *buf)
{
	return (struct bg_art_header *)(buf + dh(buf)->sec[BG_ART_SEC_DELTA].off);
}

static struct bg_art_patch *patches(uint8_t *buf)
{
	return (struct bg_art_patch *)((uint8_t *)rh(buf) + BG_ART_HEADER);
}

static void d_base_generation(uint8_t *buf)
{
	dh(buf)->base_generation = dh(buf)->generation;
	forge_seal_header(dh(buf));
}

static void d_result_capacity(uint8_t *buf)
{
	rh(buf)->plan.capacity = 30000000;
	forge_seal_header(rh(buf));
	memcpy(dh(buf)->result_sha256, rh(buf)->digest, BG_ART_SHA);
	seal_delta(buf);
}

static void d_result_sha(uint8_t *buf)
{
	dh(buf)->result_sha256[5] ^= 1;
	forge_seal_header(dh(buf));
}

static void d_plan(uint8_t *buf)
{
	dh(buf)->plan.prefixes4 += 1;
	forge_seal_header(dh(buf));
}

static void d_len(uint8_t *buf)
{
	dh(buf)->sec[BG_ART_SEC_DELTA].len += 1;
	forge_seal_header(dh(buf));
}

static void d_patch_range(uint8_t *buf)
{
	patches(buf)[0].elem = 0xfffffff0u;
	seal_delta(buf);
}

static void d_patch_order(uint8_t *buf)
{
	struct bg_art_patch t = patches(buf)[0];

	patches(buf)[0] = patches(buf)[1];
	patches(buf)[1] = t;
	seal_delta(buf);
}

static void d_patch_twice(uint8_t *buf)
{
	patches(buf)[1].sec = patches(buf)[0].sec;
	patches(buf)[1].elem = patches(buf)[0].elem;
	seal_delta(buf);
}

static void d_result_file(uint8_t *buf)
{
	dh(buf)->result_file_sha256[0] ^= 1;
	forge_seal_header(dh(buf));
}

static void d_nothing(uint8_t *buf)
{
	(void)buf;
}

/* Deltas forged field by field, sealed again: refused when opened or
 * applied, nothing written. */
static void test_forged_delta(void **state)
{
	static const struct {
		void (*fn)(uint8_t *buf);
		const char *want;
	} cases[] = {
		{ d_base_generation, "base_generation" },
		{ d_result_capacity, "the delta's result: plan.capacity" },
		{ d_result_sha, "result_sha256" },
		{ d_plan, "plan, nsources, generation" },
		{ d_len, "sec[delta].len" },
		{ d_patch_range, "out of range" },
		{ d_patch_order, "out of order" },
		{ d_patch_twice, "out of order" },
		{ d_result_file, "does not match its checksum" },
	};
	struct bg_art_built b;
	struct bg_art base, res, d;
	uint8_t *buf, *f;
	size_t len, i;
	char why[512];
	int ret;

	(void)state;
	build_lists(&b, SEED, forge_lists, 2);
	b.h.generation = 1;
	write_art(&b, "fd1.bga", &buf, &len);
	free(buf);
	f = b.filter;
	f[64 * 3 + 1] ^= 1;
	f[64 * 9] ^= 0x10;
	b.h.generation = 2;
	write_art(&b, "fd2.bga", &buf, &len);
	free(buf);
	assert_int_equal(make_delta("fd1.bga", "fd2.bga", "fd.delta", &base, &res, &d), 2);
	assert_int_equal(try_delta(&base, &d, d_nothing, why, sizeof(why)), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ret = try_delta(&base, &d, cases[i].fn, why, sizeof(why));
		if (ret != -EBADMSG || !strstr(why, cases[i].want))
			fail_msg("forged delta %zu: %d '%s', wanted '%s'", i, ret, why,
				 cases[i].want);
	}
	bg_art_close(&d);
	bg_art_close(&res);
	bg_art_close(&base);
	bg_art_built_free(&b);
}

/* The artifact's checksum is its file's SHA-256: what the writer returns,
 * what inspect prints, what sha256sum would. */
static void test_checksum_is_the_files(void **state)
{
	struct bg_art_built b;
	struct bg_art a;
	char hex[65], file[65], got[65], why[256], line[128], *text = NULL;
	size_t tlen = 0;
	FILE *m;

	(void)state;
	build(&b, SEED, 0);
	assert_int_equal(bg_art_built_write(&b, path_of("sum.bga"), 0, hex), 0);
	assert_int_equal(bg_sha256_file(path_of("sum.bga"), file), 0);
	assert_string_equal(hex, file);
	assert_int_equal(bg_art_open(path_of("sum.bga"), &a, why, sizeof(why)), 0);
	bg_art_file_sha(&a, got);
	assert_string_equal(got, file);
	m = open_memstream(&text, &tlen);
	assert_non_null(m);
	bg_art_print(m, &a, "sum.bga");
	fclose(m);
	snprintf(line, sizeof(line), "checksum:   sha256 %s\n", file);
	assert_non_null(strstr(text, line));
	/* not the header's digest, which is internal */
	bg_sha_hex(a.h->digest, got);
	assert_null(strstr(text, got));
	free(text);
	bg_art_close(&a);
	bg_art_built_free(&b);
}

/* A growing capacity is sized from what an artifact's filter takes, as a
 * list's is: its tables where the image has them. */
static void test_params_take_the_tables(void **state)
{
	struct bg_load_opts o = { .seed = SEED };
	struct bg_load_report r;
	struct bg_blocklist bl;
	struct bg_sources s;
	struct bg_filter_params p;
	struct bg_art_built b;
	struct bg_art a;
	uint8_t *buf;
	size_t len;
	char why[256];

	(void)state;
	build(&b, SEED, 0);
	write_art(&b, "params.bga", &buf, &len);
	free(buf);
	sources(&s);
	o.sources = &s;
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), 0);
	assert_int_equal(bg_art_open(path_of("params.bga"), &a, why, sizeof(why)), 0);
	bg_art_params(&a, &p);
	assert_int_equal(p.nelems, r.plan.nelems);
	assert_int_equal(bg_filter_used(&p), bg_filter_used(&r.plan));
	assert_int_equal(bg_capacity_grown(&p), bg_capacity_grown(&r.plan));
	assert_true((uint64_t)bg_capacity_grown(&p) * 4 >= (uint64_t)p.nelems * 5);
	bg_art_close(&a);
	bg_blocklist_free(&bl);
	bg_load_report_free(&r);
	bg_sources_free(&s);
	bg_art_built_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_image_is_loads_filter),
		cmocka_unit_test(test_written_opens_and_verifies),
		cmocka_unit_test(test_damage_refused),
		cmocka_unit_test(test_delta_rebuilds_the_result),
		cmocka_unit_test(test_finder_names_lists),
		cmocka_unit_test(test_forged_fields),
		cmocka_unit_test(test_forged_delta),
		cmocka_unit_test(test_checksum_is_the_files),
		cmocka_unit_test(test_params_take_the_tables),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
