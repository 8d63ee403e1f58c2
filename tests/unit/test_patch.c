// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bg_filter_patch() (core/patch.h): a filter built from one blocklist and
 * patched to another holds the other one. Blocklists of every kind of
 * entry (IPv4 /32s, /24s and /12s in the /16 bitmap, IPv6 /128s and /48s,
 * exact, name-and-subdomains and subdomains-only names, allowed addresses
 * and names) are chosen from pools; a patch from A to B lists every entry
 * of B, confirmed by the exact stage, no entry A had and B has not (a
 * removed key's Bloom bits stay: the stage rejects it), allows B's allow
 * entries only, and judges a few hundred thousand addresses and names as
 * a fresh build of B does; so do chained patches A -> B -> C -> A. Two keys
 * of one fingerprint in a shared bucket, one removed: the other stays.
 * What a plan cannot take is refused with -EXDEV. A 0.1 % change of a
 * 1M-key filter changes about two 64-byte elements per changed key.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "bloomgate/bloom.h"
#include "core/clock.h"
#include "core/domains.h"
#include "core/filter.h"
#include "core/lists.h"
#include "core/patch.h"
#include "core/sources.h"

#include "blocklist.h"

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
	/* splitmix64: deterministic, independent of the filter's xxh64 */
	uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* ---- Pools of entries and blocklists chosen from them ------------------- */

/* Disjoint pools, so that an entry of one is never inside another's
 * prefix: /32s in 1-99.x, /24s in 100-149.x, /12s in 160.0.0.0/10, IPv6
 * /128s in 2001:db8:1::/48, /48s in 2001:db9::/32. */
#define N32 24000
#define N24 300
#define N12 4
#define N128 3000
#define N48 6
#define NNAME 3000 /* a third each: exact, name and subdomains, subdomains */
#define NA4 40 /* allowed IPv4 addresses, from the /32 pool */
#define NA6 4 /* allowed IPv6 /64s, inside the /48 pool */
#define NAN_ 20 /* allowed names, inside the name-and-subdomains rules */
#define NDEEP 4 /* subdomains rules of 5 labels: a suffix depth A has not */

struct pool {
	__u32 v32[N32], v24[N24], v12[N12]; /* host order */
	__u8 v128[N128][16], v48[N48][16], a64[NA6][16];
	__u32 a4[NA4];
};

static struct pool pool;

/* Which pool entries a blocklist has. */
struct sel {
	uint8_t v32[N32], v24[N24], v12[N12], v128[N128], v48[N48];
	uint8_t name[NNAME], deep[NDEEP], a4[NA4], a6[NA6], an[NAN_];
};

static void pool_init(void)
{
	size_t i;

	for (i = 0; i < N32; i++)
		pool.v32[i] = (uint32_t)((1 + rnd() % 99) << 24 | (rnd() & 0xffffff));
	for (i = 0; i < N24; i++)
		pool.v24[i] = (uint32_t)((100 + rnd() % 50) << 24 | (rnd() & 0xffff00));
	for (i = 0; i < N12; i++)
		pool.v12[i] = 0xa0000000U | (uint32_t)i << 20;
	for (i = 0; i < N128; i++) {
		uint64_t r = rnd(), s = rnd();

		memcpy(pool.v128[i], (const __u8[]){ 0x20, 0x01, 0x0d, 0xb8, 0, 1 }, 6);
		memcpy(pool.v128[i] + 6, &r, 8);
		memcpy(pool.v128[i] + 14, &s, 2);
	}
	for (i = 0; i < N48; i++) {
		memset(pool.v48[i], 0, 16);
		memcpy(pool.v48[i], (const __u8[]){ 0x20, 0x01, 0x0d, 0xb9 }, 4);
		pool.v48[i][4] = (__u8)i;
		pool.v48[i][5] = 0x48;
	}
	for (i = 0; i < NA6; i++) {
		memcpy(pool.a64[i], pool.v48[i], 16);
		pool.a64[i][7] = (__u8)(1 + i);
	}
	for (i = 0; i < NA4; i++)
		pool.a4[i] = pool.v32[i * 7];
}

static void name_of(size_t i, char *out, size_t len)
{
	switch (i % 3) {
	case 0: snprintf(out, len, "e%zu.example.org", i); break;
	case 1: snprintf(out, len, "n%zu.example.com", i); break;
	default: snprintf(out, len, "s%zu.example.net", i); break;
	}
}

static void deep_of(size_t i, char *out, size_t len)
{
	snprintf(out, len, "d%zu.a.b.example.net", i);
}

/* the allowed names: ok.NAME of the first name-and-subdomains rules */
static void allowed_name_of(size_t i, char *out, size_t len)
{
	snprintf(out, len, "ok.n%zu.example.com", 3 * i + 1);
}

/* Each entry in with probability frac. */
static void sel_random(struct sel *s, double frac)
{
	uint8_t *b = (uint8_t *)s;
	size_t i;

	for (i = 0; i < sizeof(*s); i++)
		b[i] = (double)(rnd() >> 11) / 9007199254740992.0 < frac;
	/* every kind at least once; no rule of 5 labels */
	s->v12[0] = s->v48[0] = s->name[0] = s->name[1] = s->name[2] = 1;
	memset(s->deep, 0, sizeof(s->deep));
}

/* A changed copy: about frac of the entries in a out, as many in. The
 * allow entries swap one for another, so that the allow tables keep their
 * sizes. */
static void sel_change(const struct sel *a, struct sel *b, double frac)
{
	uint8_t *d = (uint8_t *)b;
	size_t i, allow = offsetof(struct sel, a4);

	*b = *a;
	for (i = 0; i < allow; i++)
		if ((double)(rnd() >> 11) / 9007199254740992.0 < frac)
			d[i] ^= 1;
	memcpy(b->deep, a->deep, sizeof(b->deep)); /* set by the caller */
#define SWAP(arr, n)                                                          \
	do {                                                                   \
		size_t x = rnd() % (n), y = rnd() % (n);                       \
		if (b->arr[x] != b->arr[y]) {                                  \
			b->arr[x] ^= 1;                                        \
			b->arr[y] ^= 1;                                        \
		}                                                              \
	} while (0)
	for (i = 0; i < 4; i++) {
		SWAP(a4, NA4);
		SWAP(an, NAN_);
	}
	SWAP(a6, NA6);
#undef SWAP
}

static void add4(struct bg_list *l, __u32 host, __u8 plen)
{
	if (l->n4 == l->cap4) {
		l->cap4 = l->cap4 ? 2 * l->cap4 : 1024;
		l->v4 = realloc(l->v4, l->cap4 * sizeof(*l->v4));
		assert_non_null(l->v4);
	}
	bg_key4_init(&l->v4[l->n4++], __builtin_bswap32(host), plen);
}

static void add6(struct bg_list *l, const __u8 *a, __u8 plen)
{
	if (l->n6 == l->cap6) {
		l->cap6 = l->cap6 ? 2 * l->cap6 : 1024;
		l->v6 = realloc(l->v6, l->cap6 * sizeof(*l->v6));
		assert_non_null(l->v6);
	}
	bg_key6_init(&l->v6[l->n6++], a, plen);
}

static void no_diag(void *ctx, const struct bg_diag *d)
{
	(void)ctx;
	(void)d;
}

/* The blocklist of s, finished; extra IPv4 / IPv6 prefixes and allowed
 * IPv4 addresses on top (for the refusals). */
static void make_bl_ex(const struct sel *s, struct bg_blocklist *bl,
		       const char *extra6, int extra6_len, size_t extra_allow4)
{
	struct bg_dom_opts o = { .format = BG_FMT_ADBLOCK, .diag = no_diag };
	char name[64], *text = NULL;
	size_t i, len = 0;
	FILE *f;

	bg_blocklist_init(bl);
	for (i = 0; i < N32; i++)
		if (s->v32[i])
			add4(&bl->block, pool.v32[i], 32);
	for (i = 0; i < N24; i++)
		if (s->v24[i])
			add4(&bl->block, pool.v24[i], 24);
	for (i = 0; i < N12; i++)
		if (s->v12[i])
			add4(&bl->block, pool.v12[i], 12);
	for (i = 0; i < N128; i++)
		if (s->v128[i])
			add6(&bl->block, pool.v128[i], 128);
	for (i = 0; i < N48; i++)
		if (s->v48[i])
			add6(&bl->block, pool.v48[i], 48);
	if (extra6) {
		__u8 a[16] = { 0 };

		memcpy(a, extra6, 4);
		add6(&bl->block, a, (__u8)extra6_len);
	}
	for (i = 0; i < NA4; i++)
		if (s->a4[i])
			add4(&bl->allow, pool.a4[i], 32);
	for (i = 0; i < extra_allow4; i++) /* odd: never adjacent to another */
		add4(&bl->allow, 0xc6120001U + 2 * (uint32_t)i * 256, 32);
	for (i = 0; i < NA6; i++)
		if (s->a6[i])
			add6(&bl->allow, pool.a64[i], 64);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	for (i = 0; i < NNAME; i++) {
		if (!s->name[i])
			continue;
		name_of(i, name, sizeof(name));
		fprintf(f, i % 3 == 0 ? "|%s^\n" : i % 3 == 1 ? "||%s^\n" : "||*.%s^\n",
			name);
	}
	for (i = 0; i < NDEEP; i++)
		if (s->deep[i]) {
			deep_of(i, name, sizeof(name));
			fprintf(f, "||*.%s^\n", name);
		}
	for (i = 0; i < NAN_; i++)
		if (s->an[i]) {
			allowed_name_of(i, name, sizeof(name));
			fprintf(f, "@@||%s^\n", name);
		}
	fclose(f);
	assert_int_equal(bg_names_parse_buf(&bl->names, "names", text, len, &o), 0);
	free(text);
	bg_blocklist_finish(bl);
}

static void make_bl(const struct sel *s, struct bg_blocklist *bl)
{
	make_bl_ex(s, bl, NULL, 0, 0);
}

/* A filter built from bl: its plan, and the image (calloc'd). */
static void *build(const struct bg_blocklist *bl, struct bg_filter_params *p,
		   uint64_t seed, int confirm)
{
	void *mem;

	assert_int_equal(bg_filter_plan_confirm(bl, BG_FPR_DEFAULT_CONFIRM,
						confirm, p), 0);
	mem = calloc(1, p->bytes);
	assert_non_null(mem);
	assert_int_equal(bg_filter_build(mem, p, seed, bl), 0);
	return mem;
}

static void *dup_image(const void *mem, size_t bytes)
{
	void *c = malloc(bytes);

	assert_non_null(c);
	memcpy(c, mem, bytes);
	return c;
}

/* ---- What a filter must say ---------------------------------------------- */

static __u32 be(__u32 host)
{
	return __builtin_bswap32(host);
}

/* 1 if listed, with *rej the stage's rejection of a Bloom positive. */
static int listed4(const void *mem, __u32 host, int *rej)
{
	return bg_filter_judge4(mem, be(host), rej);
}

static void last6(const __u8 *a, int plen, __u8 *out)
{
	int b;

	memcpy(out, a, 16);
	for (b = plen; b < 128; b++)
		out[b / 8] |= (__u8)(0x80 >> (b % 8));
}

struct tally {
	size_t removed, rejected; /* entries of old not in new, Bloom-held:
				     of them, Bloom positives the stage rejected */
};

/* Every entry of s listed and confirmed (judge: 1, so the stage confirmed
 * a Bloom positive or an exact table holds it); every one of was that s
 * has not, not listed (Bloom-held ones counted in *t: rejected by the
 * stage when their bits are still set). Allow entries of s allowed, the
 * others of was not. */
static void check_holds(const void *mem, const struct sel *s,
			const struct sel *was, struct tally *t)
{
	__u8 a[16];
	char name[80], q[96];
	size_t i;
	int rej, in, gone;

	memset(t, 0, sizeof(*t));
#define GONE(field, i) (!s->field[i] && was && was->field[i])
	for (i = 0; i < N32; i++) {
		in = s->v32[i];
		gone = GONE(v32, i);
		if (!in && !gone)
			continue;
		assert_int_equal(listed4(mem, pool.v32[i], &rej), in);
		if (gone) {
			t->removed++;
			t->rejected += rej;
		}
	}
	for (i = 0; i < N24; i++) {
		in = s->v24[i];
		gone = GONE(v24, i);
		if (!in && !gone)
			continue;
		assert_int_equal(listed4(mem, pool.v24[i], &rej), in);
		if (gone) {
			t->removed++;
			t->rejected += rej;
		}
		assert_int_equal(listed4(mem, pool.v24[i] | 0xff, &rej), in);
	}
	for (i = 0; i < N12; i++) {
		in = s->v12[i];
		if (!in && !GONE(v12, i))
			continue;
		/* the bitmap: no Bloom probe to reject */
		assert_int_equal(listed4(mem, pool.v12[i], &rej), in);
		assert_int_equal(listed4(mem, pool.v12[i] | 0xfffff, &rej), in);
	}
	for (i = 0; i < N128; i++) {
		in = s->v128[i];
		gone = GONE(v128, i);
		if (!in && !gone)
			continue;
		assert_int_equal(bg_filter_judge6(mem, pool.v128[i], &rej), in);
		if (gone) {
			t->removed++;
			t->rejected += rej;
		}
	}
	for (i = 0; i < N48; i++) {
		in = s->v48[i];
		gone = GONE(v48, i);
		if (!in && !gone)
			continue;
		assert_int_equal(bg_filter_judge6(mem, pool.v48[i], &rej), in);
		if (gone) {
			t->removed++;
			t->rejected += rej;
		}
		last6(pool.v48[i], 48, a);
		assert_int_equal(bg_filter_judge6(mem, a, &rej), in);
	}
	for (i = 0; i < NNAME; i++) {
		in = s->name[i];
		gone = GONE(name, i);
		if (!in && !gone)
			continue;
		name_of(i, name, sizeof(name));
		snprintf(q, sizeof(q), "x.%s", name);
		/* exact: the name; subdomains only: a subdomain; both: both */
		if (i % 3 != 2) {
			assert_int_equal(bg_filter_judge_name(mem, name, NULL, NULL, &rej), in);
			if (gone) {
				t->removed++;
				t->rejected += rej;
			}
		}
		if (i % 3 != 0) {
			assert_int_equal(bg_filter_judge_name(mem, q, NULL, NULL, &rej), in);
			if (gone) {
				t->removed++;
				t->rejected += rej;
			}
		}
		if (i % 3 == 0) /* an exact rule lists no subdomain */
			assert_int_equal(bg_filter_judge_name(mem, q, NULL, NULL, &rej), 0);
		if (i % 3 == 2) /* nor a subdomains rule the name itself */
			assert_int_equal(bg_filter_judge_name(mem, name, NULL, NULL, &rej), 0);
	}
	for (i = 0; i < NDEEP; i++) {
		in = s->deep[i];
		gone = GONE(deep, i);
		if (!in && !gone)
			continue;
		deep_of(i, name, sizeof(name));
		snprintf(q, sizeof(q), "x.%s", name);
		assert_int_equal(bg_filter_judge_name(mem, q, NULL, NULL, &rej), in);
		if (gone) {
			t->removed++;
			t->rejected += rej;
		}
	}
#undef GONE
	for (i = 0; i < NA4; i++)
		assert_int_equal(bg_filter_allowed4(mem, be(pool.a4[i])), s->a4[i]);
	for (i = 0; i < NA6; i++) {
		assert_int_equal(bg_filter_allowed6(mem, pool.a64[i]), s->a6[i]);
		last6(pool.a64[i], 64, a);
		assert_int_equal(bg_filter_allowed6(mem, a), s->a6[i]);
	}
	for (i = 0; i < NAN_; i++) {
		allowed_name_of(i, name, sizeof(name));
		assert_int_equal(bg_filter_name_allowed(mem, name, NULL), s->an[i]);
		snprintf(q, sizeof(q), "deep.%s", name);
		assert_int_equal(bg_filter_name_allowed(mem, q, NULL), s->an[i]);
	}
}

/* A random address of the pools' neighbourhoods (or anywhere). */
static __u32 rand4(void)
{
	uint64_t r = rnd();

	switch (r % 5) {
	case 0: return (__u32)(r >> 32);
	case 1: return pool.v32[(r >> 8) % N32];
	case 2: return pool.v24[(r >> 8) % N24] | (__u32)(r >> 40 & 0xff);
	case 3: return pool.v12[(r >> 8) % N12] | (__u32)(r >> 40 & 0xfffff);
	default: return pool.a4[(r >> 8) % NA4] ^ (__u32)(r >> 62); /* near */
	}
}

static void rand6(__u8 *a)
{
	uint64_t r = rnd(), s = rnd();

	switch (r % 4) {
	case 0:
		memcpy(a, &r, 8);
		memcpy(a + 8, &s, 8);
		break;
	case 1:
		memcpy(a, pool.v128[(r >> 8) % N128], 16);
		if (r >> 63)
			a[15] ^= (__u8)(1 + (s & 0x7f));
		break;
	case 2:
		memcpy(a, pool.v48[(r >> 8) % N48], 16);
		memcpy(a + 6, &s, 8);
		break;
	default:
		memcpy(a, pool.a64[(r >> 8) % NA6], 16);
		memcpy(a + 8, &s, 8);
		break;
	}
}

/* The verdicts of the patched filter and of a fresh build of the same
 * blocklist agree for every address and name tried: the exact stage makes
 * both exact (their false positives are ~1e-9 a lookup). */
static void same_verdicts(const void *patched, const void *fresh)
{
	char name[80], q[96];
	size_t i, listed = 0;
	__u8 a[16];
	int r1, r2;

	for (i = 0; i < 300000; i++) {
		__u32 x = rand4();

		r1 = listed4(patched, x, NULL);
		r2 = listed4(fresh, x, NULL);
		assert_int_equal(r1, r2);
		listed += r1;
		assert_int_equal(bg_filter_allowed4(patched, be(x)),
				 bg_filter_allowed4(fresh, be(x)));
	}
	for (i = 0; i < 100000; i++) {
		rand6(a);
		r1 = bg_filter_judge6(patched, a, NULL);
		r2 = bg_filter_judge6(fresh, a, NULL);
		assert_int_equal(r1, r2);
		listed += r1;
		assert_int_equal(bg_filter_allowed6(patched, a),
				 bg_filter_allowed6(fresh, a));
	}
	for (i = 0; i < NNAME + NAN_ + NDEEP; i++) {
		if (i < NNAME)
			name_of(i, name, sizeof(name));
		else if (i < NNAME + NAN_)
			allowed_name_of(i - NNAME, name, sizeof(name));
		else
			deep_of(i - NNAME - NAN_, name, sizeof(name));
		snprintf(q, sizeof(q), "a.b.%s", name);
		assert_int_equal(bg_filter_judge_name(patched, name, NULL, NULL, NULL),
				 bg_filter_judge_name(fresh, name, NULL, NULL, NULL));
		assert_int_equal(bg_filter_judge_name(patched, q, NULL, NULL, NULL),
				 bg_filter_judge_name(fresh, q, NULL, NULL, NULL));
		assert_int_equal(bg_filter_name_allowed(patched, q, NULL),
				 bg_filter_name_allowed(fresh, q, NULL));
	}
	assert_true(listed > 50000); /* members were tried too */
}

/* Patches mem (plan p, holding from) to to; checks it holds to and judges
 * as a fresh build of to. */
static void patch_step(void *mem, const struct bg_filter_params *p,
		       uint64_t *loaded, const struct sel *from,
		       const struct sel *to, unsigned int threads)
{
	struct bg_blocklist a, b;
	struct bg_filter_params fp;
	struct bg_patch_result res;
	struct tally t;
	char why[256] = "";
	void *fresh;
	int err;

	make_bl(from, &a);
	make_bl(to, &b);
	err = bg_filter_patch(mem, p, *loaded, &a, &b, threads, &res, why, sizeof(why));
	if (err)
		printf("# patch: %d %s\n", err, why);
	assert_int_equal(err, 0);
	assert_true(res.added > 0 && res.removed > 0);
	assert_int_equal(res.bloom_loaded, *loaded + res.added);
	*loaded = res.bloom_loaded;
	check_holds(mem, to, from, &t);
	/* every removed Bloom-held entry is a Bloom positive the stage
	 * rejects: its bits stay */
	assert_true(t.removed > 100);
	assert_int_equal(t.rejected, t.removed);
	fresh = build(&b, &fp, 0xf00d, 1);
	/* the plan of the patched filter counts what a plan of to counts */
	assert_int_equal(res.plan.n, fp.n);
	assert_int_equal(res.plan.keys4, fp.keys4);
	assert_int_equal(res.plan.keys6, fp.keys6);
	assert_int_equal(res.plan.name_keys, fp.name_keys);
	assert_int_equal(res.plan.prefixes4, fp.prefixes4);
	assert_int_equal(res.plan.prefixes6, fp.prefixes6);
	assert_int_equal(res.plan.short4_prefixes, fp.short4_prefixes);
	assert_int_equal(res.plan.allow4_n, fp.allow4_n);
	assert_int_equal(res.plan.allow6_n, fp.allow6_n);
	assert_int_equal(res.plan.allown_n, fp.allown_n);
	assert_int_equal(res.plan.nblocks, p->nblocks);
	assert_true(res.plan.predicted ==
		    bg_filter_model_fpr(*loaded, p->nblocks, p->k));
	assert_true(res.plan.predicted_addr >= res.plan.predicted);
	assert_true(res.plan.predicted_confirmed < res.plan.predicted * 1e-6);
	assert_int_equal(((struct bg_filter_header *)mem)->entries, fp.n);
	same_verdicts(mem, fresh);
	printf("# patch: %llu keys added, %llu removed; %zu removed entries rejected by the stage\n",
	       (unsigned long long)res.added, (unsigned long long)res.removed,
	       t.rejected);
	free(fresh);
	bg_blocklist_free(&a);
	bg_blocklist_free(&b);
}

static void test_patch_and_chain(void **state)
{
	static struct sel sa, sb, sc;
	struct bg_filter_params p;
	struct bg_blocklist a;
	struct tally t;
	uint64_t loaded;
	void *mem;

	(void)state;
	sel_random(&sa, 0.6);
	sel_change(&sa, &sb, 0.05);
	sel_change(&sb, &sc, 0.05);
	/* a /12 out and one in at every step: the bitmap changes */
	sa.v12[1] = 1;
	sa.v12[2] = 0;
	sb.v12[1] = 0;
	sb.v12[2] = 1;
	sc.v12[2] = 0;
	sc.v12[3] = !sb.v12[3];
	/* C has subdomain rules of a depth A and B have not: the header's
	 * subs_depths must take it */
	sc.deep[0] = sc.deep[2] = 1;
	make_bl(&sa, &a);
	mem = build(&a, &p, 0x5eed, 1);
	assert_true(p.short4 && p.n4 == 2 && p.n6 == 2 && p.fp_nbuckets > 0);
	check_holds(mem, &sa, NULL, &t);
	loaded = p.n;
	patch_step(mem, &p, &loaded, &sa, &sb, 0);
	patch_step(mem, &p, &loaded, &sb, &sc, 1);
	patch_step(mem, &p, &loaded, &sc, &sa, 2);
	free(mem);
	bg_blocklist_free(&a);
}

/* ---- Two keys of one fingerprint in a shared bucket ------------------- */

struct cand {
	__u32 addr; /* host order */
	__u32 f;
	uint32_t b1, b2;
	uint64_t h;
};

static int cmp_cand(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;

	return a->f < b->f ? -1 : a->f > b->f;
}

static struct cand cand_of(__u32 host, uint64_t seed, uint32_t nb)
{
	struct bg_key4 k;
	struct cand c;
	uint64_t h2;

	bg_key4_init(&k, be(host), 32);
	c.addr = host;
	c.h = bg_key4_hash(&k, seed);
	h2 = bg_fp_hash(c.h, seed);
	c.f = bg_fp_of(h2);
	c.b1 = bg_fp_bucket1(h2, nb);
	c.b2 = bg_fp_bucket2(h2, nb);
	return c;
}

/* The slots holding f in bucket b. */
static int count_f(const void *mem, uint32_t b, __u32 f)
{
	const struct bg_filter_header *h = mem;
	const struct bg_fp_bucket *bk =
		(const struct bg_fp_bucket *)((const struct bg_block *)mem + h->fp_off);
	int j, n = 0;

	for (j = 0; j < BG_FP_PER_BUCKET; j++)
		n += bk[b].fp[j] == f;
	return n;
}

#define TINY_KEYS 40 /* 3 buckets of 16 */
#define TINY_NB 3

static void tiny_list(struct bg_list *l, const struct cand *x,
		      const struct cand *y, const __u32 *fill, size_t nfill)
{
	size_t i;

	bg_list_init(l);
	if (x)
		add4(l, x->addr, 32);
	if (y)
		add4(l, y->addr, 32);
	for (i = 0; i < nfill; i++)
		add4(l, fill[i], 32);
	bg_list_finish(l);
}

/*
 * x and y have one fingerprint f; x's buckets are c (first) and d, y's
 * hold c and not d. Built so that y sits in c and x in d (c was full when
 * x came): the first slot holding f in x's first bucket is y's. Removing
 * x must free x's slot and keep y's (y listed; x too, a false positive
 * of the stage: y's f is in x's bucket c). Removing y must free y's and
 * keep x's: x listed, y not. found[o]: such a case where x's Bloom hash
 * is below y's (o = 0) or above (o = 1): keys claim their slots in an
 * order their hashes set, and whichever comes first, x may take y's slot
 * in c (always when y's first bucket is not c), which the matching of
 * keys to slots must give back to y.
 */
static void test_same_fingerprint(void **state)
{
	const uint64_t seed = 0x5eedf00dULL;
	const size_t ncand = 1u << 19;
	struct cand *cv = calloc(ncand, sizeof(*cv));
	int found[2] = { 0, 0 };
	size_t i, tries = 0;

	(void)state;
	assert_non_null(cv);
	for (i = 0; i < ncand; i++) /* /32s away from the fillers' 10/8 */
		cv[i] = cand_of(0x20000000U | (__u32)(rnd() & 0x0fffffff), seed, TINY_NB);
	qsort(cv, ncand, sizeof(*cv), cmp_cand);
	for (i = 0; i + 1 < ncand && !(found[0] && found[1]); i++) {
		const struct cand *pair[2] = { &cv[i], &cv[i + 1] };
		int role;

		if (cv[i].f != cv[i + 1].f || cv[i].addr == cv[i + 1].addr)
			continue;
		for (role = 0; role < 2; role++) {
			const struct cand *x = pair[role], *y = pair[!role];
			int o = x->h > y->h, r;

			if (found[o] || x->b1 == x->b2 ||
			    !(y->b1 == x->b1 || y->b2 == x->b1) ||
			    y->b1 == x->b2 || y->b2 == x->b2)
				continue;
			for (r = 0; r < 3000 && !found[o]; r++) {
				struct bg_filter_params p;
				struct bg_patch_result res;
				struct bg_list la, lb;
				__u32 fill[TINY_KEYS - 2];
				char why[256] = "";
				void *mem, *m2;
				size_t k;
				int rej, err;

				tries++;
				for (k = 0; k < TINY_KEYS - 2; k++)
					fill[k] = 0x0a000000U | (__u32)(rnd() & 0xffffff);
				tiny_list(&la, x, y, fill, TINY_KEYS - 2);
				if (la.n4 != TINY_KEYS) {
					bg_list_free(&la);
					continue;
				}
				mem = build(BL(&la, NULL, NULL), &p, seed, 1);
				assert_int_equal(p.fp_nbuckets, TINY_NB);
				/* y in c, x in d, nowhere else */
				if (count_f(mem, x->b1, x->f) != 1 ||
				    count_f(mem, x->b2, x->f) != 1 ||
				    (y->b1 != x->b1 && count_f(mem, y->b1, x->f)) ||
				    (y->b2 != x->b1 && count_f(mem, y->b2, x->f))) {
					free(mem);
					bg_list_free(&la);
					continue;
				}
				found[o] = 1;
				printf("# same fingerprint %08x: x %s y, found after %zu builds\n",
				       x->f, o ? "after" : "before", tries);
				/* x out: y stays, x's Bloom positive rejected */
				m2 = dup_image(mem, p.bytes);
				tiny_list(&lb, NULL, y, fill, TINY_KEYS - 2);
				err = bg_filter_patch(m2, &p, p.n, BL(&la, NULL, NULL),
						      BL(&lb, NULL, NULL), 1, &res, why,
						      sizeof(why));
				if (err)
					printf("# %s\n", why);
				assert_int_equal(err, 0);
				assert_int_equal(res.removed, 1);
				assert_int_equal(res.added, 0);
				assert_int_equal(listed4(m2, y->addr, &rej), 1);
				/* x's own slot in d is free, but its first
				 * bucket c holds y's copy of f: x is a false
				 * positive of the stage, as in any build where
				 * y sits in c; d no longer holds f */
				assert_int_equal(listed4(m2, x->addr, &rej), 1);
				assert_int_equal(count_f(m2, x->b2, x->f), 0);
				assert_int_equal(count_f(m2, x->b1, x->f), 1);
				for (k = 0; k < TINY_KEYS - 2; k++)
					assert_int_equal(listed4(m2, fill[k], &rej), 1);
				/* and back: x's fingerprint in again */
				assert_int_equal(bg_filter_patch(m2, &p, res.bloom_loaded,
								 BL(&lb, NULL, NULL),
								 BL(&la, NULL, NULL), 1,
								 &res, why, sizeof(why)), 0);
				assert_int_equal(listed4(m2, x->addr, &rej), 1);
				assert_int_equal(listed4(m2, y->addr, &rej), 1);
				bg_list_free(&lb);
				/* y out: x stays */
				memcpy(m2, mem, p.bytes);
				tiny_list(&lb, x, NULL, fill, TINY_KEYS - 2);
				assert_int_equal(bg_filter_patch(m2, &p, p.n, BL(&la, NULL, NULL),
								 BL(&lb, NULL, NULL), 1, &res,
								 why, sizeof(why)), 0);
				assert_int_equal(listed4(m2, x->addr, &rej), 1);
				assert_int_equal(listed4(m2, y->addr, &rej), 0);
				assert_int_equal(rej, 1);
				bg_list_free(&lb);
				free(m2);
				free(mem);
				bg_list_free(&la);
			}
		}
	}
	free(cv);
	assert_true(found[0] && found[1]);
}

/* ---- Refusals -------------------------------------------------------------- */

static void expect_exdev(void *mem, const struct bg_filter_params *p,
			 const struct bg_blocklist *old,
			 const struct bg_blocklist *new, const char *word)
{
	struct bg_patch_result res;
	char why[256] = "";

	assert_int_equal(bg_filter_patch(mem, p, p->n, old, new, 0, &res, why,
					 sizeof(why)), -EXDEV);
	printf("# refused: %s\n", why);
	assert_non_null(strstr(why, word));
}

static void test_refusals(void **state)
{
	static struct sel sa, sb, sc;
	struct bg_blocklist a, b, c, x;
	struct bg_filter_params p, q;
	void *mem, *m;

	(void)state;
	sel_random(&sa, 0.6);
	sel_change(&sa, &sb, 0.05);
	sel_change(&sa, &sc, 0.3);
	make_bl(&sa, &a);
	make_bl(&sb, &b);
	make_bl(&sc, &c);
	mem = build(&a, &p, 0xabc, 1);
	m = dup_image(mem, p.bytes);

	/* an IPv6 /32: 2^16 keys of /48, more than an expansion may take */
	make_bl_ex(&sb, &x, "\x20\x01\x0d\xba", 32, 0);
	expect_exdev(m, &p, &a, &x, "IPv6 /32");
	bg_blocklist_free(&x);
	/* the IPv4 allow table grows by an element */
	make_bl_ex(&sb, &x, NULL, 0, 9);
	expect_exdev(m, &p, &a, &x, "IPv4 allow");
	bg_blocklist_free(&x);
	/* the image does not hold old: old given as c */
	expect_exdev(m, &p, &c, &b, "does not hold");
	/* a plan that is not the image's */
	q = p;
	q.nblocks++;
	expect_exdev(m, &q, &a, &b, "plan");
	/* with a Bloom-only filter a removal could not be exact */
	free(m);
	m = build(&a, &q, 0xabc, 0);
	assert_int_equal(q.fp_nbuckets, 0);
	expect_exdev(m, &q, &a, &b, "exact stage");
	free(m);
	/* no /16 bitmap: a /12 cannot come in; no IPv6 probed: an IPv6
	 * /128 neither */
	memset(sa.v12, 0, sizeof(sa.v12));
	memset(sa.v128, 0, sizeof(sa.v128));
	memset(sa.v48, 0, sizeof(sa.v48));
	bg_blocklist_free(&a);
	make_bl(&sa, &a);
	m = build(&a, &q, 0xabc, 1);
	assert_false(q.short4);
	assert_int_equal(q.n6, 0);
	expect_exdev(m, &q, &a, &b, "bitmap");
	make_bl_ex(&sa, &x, "\x20\x01\x0d\xba", 128, 0);
	expect_exdev(m, &q, &a, &x, "IPv6 /128: no probed length");
	bg_blocklist_free(&x);
	free(m);
	free(mem);
	bg_blocklist_free(&a);
	bg_blocklist_free(&b);
	bg_blocklist_free(&c);
}

/* ---- The random walk ------------------------------------------------------ */

/* Slots used in bucket b. */
static int bucket_fill(const void *mem, uint32_t b)
{
	const struct bg_filter_header *h = mem;
	const struct bg_fp_bucket *bk =
		(const struct bg_fp_bucket *)((const struct bg_block *)mem + h->fp_off);
	int j, n = 0;

	for (j = 0; j < BG_FP_PER_BUCKET; j++)
		n += bk[b].fp[j] != 0;
	return n;
}

/*
 * A tiny stage (3 buckets of 16) nearly full: keys added whose two
 * buckets are both full go in by the walk, which moves resident keys to
 * their other bucket (known from the old list's keys): every key stays
 * listed. Removed again, the filter holds the first list. More keys than
 * slots are refused.
 */
static void test_walk(void **state)
{
	const uint64_t seed = 0x3a1cULL;
	struct bg_list la, lb, lc;
	struct bg_filter_params p;
	struct bg_patch_result res;
	__u32 fill[TINY_KEYS], more[8];
	char why[256] = "";
	size_t i, nmore = 0, walked = 0, tries = 0;
	void *mem = NULL;
	int rej, err;

	(void)state;
	/* a list whose build leaves two buckets full */
	do {
		free(mem);
		for (i = 0; i < TINY_KEYS; i++)
			fill[i] = 0x0a000000U | (__u32)(rnd() & 0xffffff);
		tiny_list(&la, NULL, NULL, fill, TINY_KEYS);
		mem = build(BL(&la, NULL, NULL), &p, seed, 1);
		assert_int_equal(p.fp_nbuckets, TINY_NB);
		bg_list_free(&la);
	} while ((bucket_fill(mem, 0) < 16) + (bucket_fill(mem, 1) < 16) +
			 (bucket_fill(mem, 2) < 16) > 1 &&
		 ++tries < 1000);
	assert_true(tries < 1000);
	tiny_list(&la, NULL, NULL, fill, TINY_KEYS);
	/* six keys more, the first ones with both buckets full */
	while (nmore < 6) {
		struct cand c = cand_of(0x0b000000U | (__u32)(rnd() & 0xffffff), seed,
					TINY_NB);
		int full = bucket_fill(mem, c.b1) == 16 && bucket_fill(mem, c.b2) == 16;

		if (nmore < 3 && !full)
			continue;
		walked += full;
		more[nmore++] = c.addr;
	}
	assert_true(walked >= 3);
	bg_list_init(&lb);
	for (i = 0; i < TINY_KEYS; i++)
		add4(&lb, fill[i], 32);
	for (i = 0; i < nmore; i++)
		add4(&lb, more[i], 32);
	bg_list_finish(&lb);
	err = bg_filter_patch(mem, &p, p.n, BL(&la, NULL, NULL), BL(&lb, NULL, NULL),
			      1, &res, why, sizeof(why));
	if (err)
		printf("# %s\n", why);
	assert_int_equal(err, 0);
	assert_int_equal(res.added, nmore);
	for (i = 0; i < lb.n4; i++)
		assert_int_equal(listed4(mem, __builtin_bswap32(lb.v4[i].addr), &rej), 1);
	/* and out again: the walk's moves are known to the next patch */
	assert_int_equal(bg_filter_patch(mem, &p, res.bloom_loaded, BL(&lb, NULL, NULL),
					 BL(&la, NULL, NULL), 1, &res, why,
					 sizeof(why)), 0);
	assert_int_equal(res.removed, nmore);
	for (i = 0; i < la.n4; i++)
		assert_int_equal(listed4(mem, __builtin_bswap32(la.v4[i].addr), &rej), 1);
	for (i = 0; i < nmore; i++) {
		assert_int_equal(listed4(mem, more[i], &rej), 0);
		assert_int_equal(rej, 1);
	}
	/* more keys than the stage's 48 slots */
	bg_list_init(&lc);
	for (i = 0; i < TINY_KEYS; i++)
		add4(&lc, fill[i], 32);
	for (i = 0; i < 3 * BG_FP_PER_BUCKET + 1 - TINY_KEYS; i++)
		add4(&lc, 0x0c000000U | (__u32)i, 32);
	bg_list_finish(&lc);
	expect_exdev(mem, &p, BL(&la, NULL, NULL), BL(&lc, NULL, NULL), "slots");
	bg_list_free(&la);
	bg_list_free(&lb);
	bg_list_free(&lc);
	free(mem);
}

/* ---- Elements changed at scale ------------------------------------------- */

static int cmp_u32(const void *x, const void *y)
{
	__u32 a = *(const __u32 *)x, b = *(const __u32 *)y;

	return a < b ? -1 : a > b;
}

/* A 1M-key filter, 0.1 % of its keys out and as many in: the elements
 * that differ (what an incremental generation ships) are about two per
 * changed key (its Bloom block if added, its bucket, the header once),
 * at most three. The same patch on 1 and 2 threads makes the same bytes. */
static void test_elements_changed(void **state)
{
	const size_t n = 1000000, change = 1000;
	struct bg_list la, lb;
	struct bg_filter_params p;
	struct bg_patch_result res;
	__u32 *v = malloc((n + change) * sizeof(*v));
	void *mem, *m1, *m2;
	size_t i, diff = 0;
	char why[256] = "";
	double per, secs, t0;
	int rej;

	(void)state;
	assert_non_null(v);
	for (i = 0; i < n + change; i++)
		v[i] = (__u32)rnd() & 0xfffffffeU;
	qsort(v, n + change, sizeof(*v), cmp_u32);
	for (i = 1; i < n + change; i++) /* distinct: a neighbour if equal */
		if (v[i] <= v[i - 1])
			v[i] = v[i - 1] + 2;
	/* shuffle, so that the ones removed and added are anywhere */
	for (i = n + change - 1; i > 0; i--) {
		size_t j = rnd() % (i + 1);
		__u32 t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
	bg_list_init(&la);
	bg_list_init(&lb);
	for (i = 0; i < n; i++)
		add4(&la, v[i], 32);
	for (i = change; i < n + change; i++)
		add4(&lb, v[i], 32);
	bg_list_finish(&la);
	bg_list_finish(&lb);
	mem = build(BL(&la, NULL, NULL), &p, 0x1234, 1);
	m1 = dup_image(mem, p.bytes);
	m2 = dup_image(mem, p.bytes);
	t0 = bg_mono();
	assert_int_equal(bg_filter_patch(m1, &p, p.n, BL(&la, NULL, NULL),
					 BL(&lb, NULL, NULL), 2, &res, why,
					 sizeof(why)), 0);
	secs = bg_mono() - t0;
	assert_int_equal(res.added, change);
	assert_int_equal(res.removed, change);
	assert_int_equal(bg_filter_patch(m2, &p, p.n, BL(&la, NULL, NULL),
					 BL(&lb, NULL, NULL), 1, &res, why,
					 sizeof(why)), 0);
	assert_memory_equal(m1, m2, p.bytes);
	for (i = 0; i < p.nelems; i++)
		diff += memcmp((char *)mem + i * 64, (char *)m1 + i * 64, 64) != 0;
	per = (double)diff / (double)(2 * change);
	printf("# 1M keys, %zu out and %zu in: %zu of %u elements changed, %.2f per changed key (patch %.3f s, sanitizers on)\n",
	       change, change, diff, p.nelems, per, secs);
	assert_true(per <= 3.0);
	for (i = 0; i < change; i++) {
		assert_int_equal(listed4(m1, v[i], &rej), 0);
		assert_int_equal(rej, 1);
		assert_int_equal(listed4(m1, v[n + i], &rej), 1);
	}
	free(mem);
	free(m1);
	free(m2);
	free(v);
	bg_list_free(&la);
	bg_list_free(&lb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patch_and_chain),
		cmocka_unit_test(test_same_fingerprint),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_elements_changed),
	};

	pool_init();
	return cmocka_run_group_tests_name("patch", tests, NULL, NULL);
}
