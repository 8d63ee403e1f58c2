// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A built filter changed in place from one blocklist to another
 * (core/patch.h).
 *
 * Keys are compared as the build makes them: both blocklists' Bloom keys
 * are enumerated and hashed by filter.c's own code under the filter's plan
 * (core/filter_priv.h), as sorted sets of 64-bit hashes; their difference
 * is what changes in the Bloom part and the exact stage. The exact tables
 * are written again from the new blocklist by the build's table builders.
 *
 * The exact stage holds 32-bit fingerprints only, and two keys may have
 * the same one in a shared bucket. Removing "the first slot holding f in
 * the key's first bucket" could then take the other key's slot and leave
 * the removed key's own: the removed key still listed, the other one not.
 * So before anything changes, every key of the old blocklist claims the
 * slot it sits in (a matching of keys to slots holding their fingerprint
 * in their buckets, below), and a removal frees the slot its key claimed.
 * A slot is told by its bucket, its fingerprint and the other bucket of
 * its key: keys that agree on all three are interchangeable for every
 * lookup, removal and walk, so which of them claimed which slot does not
 * matter. The other bucket is also what the random walk of an insertion
 * needs, as in the build (filter.c, fp_walk).
 *
 * Core part: no libbpf.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bloomgate/bloom.h"
#include "core/grow.h"
#include "core/units.h"
#include "core/filter_priv.h"
#include "core/mem_lookup.h"
#include "core/par.h"
#include "core/patch.h"

static uint32_t elems(uint32_t n, uint32_t per)
{
	return (n + per - 1) / per;
}

/* ---- The exact stage ----------------------------------------------------- */

/* other[] of a slot no key has claimed (bucket numbers are below 2^31) */
#define SLOT_FREE UINT32_MAX
/* Bounds of the search for a slot a key can claim by moving others:
 * slots looked at, and keys moved in a row. Two keys of one fingerprint
 * sharing a bucket are expected 0.07 times in a 10M-key filter (n^2 / 2
 * pairs, 2^-32 that the fingerprints match, 4 / buckets that a bucket is
 * shared), 0.7 times at 100M; three, practically never. These bounds only
 * keep a damaged image from recursing. */
#define AUG_SEEN 64
#define AUG_DEPTH 16
/* Keys whose buckets are fetched ahead of their claim in claim_all() (the
 * last few keys: a cache miss or two each). */
#define CLAIM_AHEAD 16

struct stage {
	struct bg_fp_bucket *bk;
	/* per slot: the other bucket of the key that claimed it (its first
	 * when it sits in its second), SLOT_FREE when none did */
	uint32_t *other;
	uint32_t nb;
	uint64_t seed;
	uint64_t rng; /* the walk's, from the filter's seed: deterministic */
};

struct fpkey {
	__u32 f;
	uint32_t b1, b2;
};

static inline struct fpkey fp_key2(const struct stage *st, uint64_t h2)
{
	struct fpkey k = { bg_fp_of(h2), bg_fp_bucket1(h2, st->nb),
			   bg_fp_bucket2(h2, st->nb) };

	return k;
}

/* The key of Bloom hash h in the stage. */
static inline struct fpkey fp_key(const struct stage *st, uint64_t h)
{
	return fp_key2(st, bg_fp_hash(h, st->seed));
}

static inline size_t slot(uint32_t b, uint32_t j)
{
	return (size_t)b * BG_FP_PER_BUCKET + j;
}

/* A slot of bucket b holding f that no key claimed, or -1. */
static inline int unclaimed(const struct stage *st, uint32_t b, __u32 f)
{
	uint32_t j;

	for (j = 0; j < BG_FP_PER_BUCKET; j++)
		if (st->bk[b].fp[j] == f && st->other[slot(b, j)] == SLOT_FREE)
			return (int)j;
	return -1;
}

struct aug {
	size_t seen[AUG_SEEN];
	int n;
};

static int aug_seen(const struct aug *a, size_t s)
{
	int i;

	for (i = 0; i < a->n; i++)
		if (a->seen[i] == s)
			return 1;
	return 0;
}

/*
 * A slot for a key of fingerprint f and buckets b1, b2 among the slots
 * holding f in them, one claimed by another key taken when that key can
 * claim another slot of its own buckets (recursively): an augmenting path
 * of Kuhn's matching algorithm. Needed when the greedy claim went wrong:
 * key x (buckets c, d) sits in d and claimed y's slot in c before y
 * (buckets c, e) came; y takes it back and x moves to its own in d.
 * 0, or -1 when there is no such slot.
 */
static int aug_claim(struct stage *st, struct aug *a, __u32 f, uint32_t b1,
		     uint32_t b2, int depth)
{
	uint32_t bs[2] = { b1, b2 }, j;
	int i;

	for (i = 0; i < (b1 == b2 ? 1 : 2); i++) {
		uint32_t b = bs[i], mine = i ? b1 : b2;

		for (j = 0; j < BG_FP_PER_BUCKET; j++) {
			size_t s = slot(b, j);
			uint32_t o = st->other[s];

			if (st->bk[b].fp[j] != f || aug_seen(a, s))
				continue;
			if (a->n == AUG_SEEN)
				return -1;
			a->seen[a->n++] = s;
			/* the key that has it has buckets b and o */
			if (o == SLOT_FREE ||
			    (depth < AUG_DEPTH && !aug_claim(st, a, f, b, o, depth + 1))) {
				st->other[s] = mine;
				return 0;
			}
		}
	}
	return -1;
}

/* The old key k claims its slot: the first unclaimed one holding its
 * fingerprint in its first bucket (where the build puts a key whenever it
 * can), else in its second, else one taken from another key. */
static int claim(struct stage *st, struct fpkey k)
{
	struct aug a;
	int j;

	j = unclaimed(st, k.b1, k.f);
	if (j >= 0) {
		st->other[slot(k.b1, (uint32_t)j)] = k.b2;
		return 0;
	}
	if (k.b2 != k.b1) {
		j = unclaimed(st, k.b2, k.f);
		if (j >= 0) {
			st->other[slot(k.b2, (uint32_t)j)] = k.b1;
			return 0;
		}
	}
	a.n = 0;
	return aug_claim(st, &a, k.f, k.b1, k.b2, 0);
}

/* Every key of h2 values v[0, n) claims its slot (claim()), in that
 * order, the buckets of the ones CLAIM_AHEAD on fetched meanwhile; -1 with
 * *bad the first that found none: the image does not hold it. */
static int claim_all(struct stage *st, const uint64_t *v, size_t n, size_t *bad)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i + CLAIM_AHEAD < n) {
			struct fpkey a = fp_key2(st, v[i + CLAIM_AHEAD]);

			__builtin_prefetch(&st->bk[a.b1]);
			__builtin_prefetch(&st->other[slot(a.b1, 0)], 1);
			__builtin_prefetch(&st->bk[a.b2]);
			__builtin_prefetch(&st->other[slot(a.b2, 0)], 1);
		}
		if (claim(st, fp_key2(st, v[i]))) {
			*bad = i;
			return -1;
		}
	}
	return 0;
}

/*
 * The claims of the old keys, in bucket order: in the order of their
 * Bloom hashes, each claim was a cache and TLB miss or two in a stage and
 * a slot array of 44 MiB each at 10M keys (0.8 s of a 10M-key patch, on
 * one thread). So the keys' h2 are partitioned by the top bits of what
 * picks the bucket (bg_fp_bucket1 of h2 and bg_fp_bucket2, which is
 * bg_fp_bucket1 of h2 * BG_BLOOM_MUL, are monotone in them): a bin's
 * buckets fit in the cache. In a first step every thread claims, for the
 * keys of its run of first buckets, a slot in the first bucket, where the
 * build puts a key whenever it can; in a second step the same for the
 * keys left and their second buckets. A thread touches only its own
 * buckets. The few keys left after both (two keys of one fingerprint in
 * a bucket, one claimed the other's slot) are claimed last on one thread
 * by claim(), whose matching puts such a case right. Partitions are
 * stable and every bucket's keys come in the order of the partition, so
 * the claims are the same whatever the number of threads.
 */
#define CLAIM_BITS 12
#define CLAIM_BINS (1u << CLAIM_BITS)

/* The value whose top bits order a key by the bucket of a step. */
static inline uint64_t claim_order(uint64_t h2, int second)
{
	return second ? h2 * BG_BLOOM_MUL : h2;
}

struct claims {
	struct stage *st;
	uint64_t *v; /* this step's keys' h2 */
	uint64_t *p; /* v partitioned: bin d is [bin[d], bin[d + 1]) */
	uint8_t *later; /* per key of p: no slot found in this step */
	size_t n;
	int second; /* the step: first or second buckets */
	unsigned int nt;
	size_t lo[BG_PARSE_WORKERS_MAX + 1]; /* thread t's keys of v */
	size_t (*at)[CLAIM_BINS]; /* per thread: its next place in bin d */
	size_t bin[CLAIM_BINS + 1];
};

/* The old keys' Bloom hashes made h2, in place. */
static void job_h2(void *ctx, unsigned int t)
{
	struct claims *c = ctx;
	uint64_t seed = c->st->seed;
	size_t i;

	for (i = c->lo[t]; i < c->lo[t + 1]; i++)
		c->v[i] = bg_fp_hash(c->v[i], seed);
}

static void job_count(void *ctx, unsigned int t)
{
	struct claims *c = ctx;
	size_t i, *at = c->at[t];

	memset(at, 0, sizeof(*c->at));
	for (i = c->lo[t]; i < c->lo[t + 1]; i++)
		at[claim_order(c->v[i], c->second) >> (64 - CLAIM_BITS)]++;
}

/* A stable partition: thread t's keys of bin d follow those of the
 * threads before it, in their order. */
static void job_scatter(void *ctx, unsigned int t)
{
	struct claims *c = ctx;
	size_t i, *at = c->at[t];

	for (i = c->lo[t]; i < c->lo[t + 1]; i++)
		c->p[at[claim_order(c->v[i], c->second) >> (64 - CLAIM_BITS)]++] = c->v[i];
}

static void job_claim_step(void *ctx, unsigned int t)
{
	struct claims *c = ctx;
	struct stage *st = c->st;
	uint32_t nb = st->nb, b0 = (uint32_t)((uint64_t)nb * t / c->nt),
		 b1 = (uint32_t)((uint64_t)nb * (t + 1) / c->nt);
	const int sh = 64 - CLAIM_BITS;
	uint32_t d;
	size_t i;

	for (d = 0; d < CLAIM_BINS; d++) {
		/* the bins that may hold keys of this run of buckets (a
		 * bucket may straddle two bins) */
		if (bg_fp_bucket1(((uint64_t)d << sh) | ((1ULL << sh) - 1), nb) < b0 ||
		    bg_fp_bucket1((uint64_t)d << sh, nb) >= b1)
			continue;
		for (i = c->bin[d]; i < c->bin[d + 1]; i++) {
			struct fpkey k = fp_key2(st, c->p[i]);
			uint32_t b = c->second ? k.b2 : k.b1;
			uint32_t o = c->second ? k.b1 : k.b2;
			int j;

			if (b < b0 || b >= b1)
				continue; /* another thread's */
			j = unclaimed(st, b, k.f);
			if (j >= 0)
				st->other[slot(b, (uint32_t)j)] = o;
			else
				c->later[i] = 1;
		}
	}
}

/* One step over the n keys of c->v; the ones left packed in order at the
 * front of c->v, their number returned. */
static size_t claim_step(struct claims *c, size_t n, int second, unsigned int threads)
{
	size_t i, w;
	unsigned int t;
	uint32_t d;

	c->n = n;
	c->second = second;
	c->nt = n >= (1u << 16) ? bg_par_threads(threads) : 1;
	for (t = 0; t <= c->nt; t++)
		c->lo[t] = n * t / c->nt;
	if (!second)
		bg_par_run(c->nt, job_h2, c);
	bg_par_run(c->nt, job_count, c);
	for (d = 0, w = 0; d < CLAIM_BINS; d++) {
		c->bin[d] = w;
		for (t = 0; t < c->nt; t++) {
			size_t k = c->at[t][d];

			c->at[t][d] = w;
			w += k;
		}
	}
	c->bin[CLAIM_BINS] = w;
	bg_par_run(c->nt, job_scatter, c);
	memset(c->later, 0, n);
	bg_par_run(c->nt, job_claim_step, c);
	for (i = 0, w = 0; i < n; i++)
		if (c->later[i])
			c->v[w++] = c->p[i];
	return w;
}

/* The old keys (v: their Bloom hashes, made h2 in place) claim their
 * slots; -EXDEV with *bad_h2 the h2 of one that found none, -ENOMEM. */
static int claim_old(struct stage *st, uint64_t *v, size_t n, unsigned int threads,
		     uint64_t *bad_h2)
{
	struct claims *c = calloc(1, sizeof(*c));
	size_t w, bad;
	int ret = -ENOMEM;

	if (!c)
		return -ENOMEM;
	c->st = st;
	c->v = v;
	c->at = calloc(BG_PARSE_WORKERS_MAX, sizeof(*c->at));
	c->p = malloc((n ? n : 1) * sizeof(*c->p));
	c->later = malloc(n ? n : 1);
	if (!c->at || !c->p || !c->later)
		goto out;
	w = claim_step(c, n, 0, threads);
	w = claim_step(c, w, 1, threads);
	ret = 0;
	if (claim_all(st, v, w, &bad)) {
		*bad_h2 = v[bad];
		ret = -EXDEV;
	}
out:
	free(c->at);
	free(c->p);
	free(c->later);
	free(c);
	return ret;
}

/* The slot key k claimed, freed: its fingerprint, in the bucket where it
 * sits with the other bucket it has; never another key's copy of the
 * same fingerprint, whose other bucket differs (or which is the same key
 * for every purpose). -1 if it claimed none. */
static int release(struct stage *st, struct fpkey k)
{
	uint32_t bs[2] = { k.b1, k.b2 }, j;
	int i;

	for (i = 0; i < 2; i++) {
		uint32_t b = bs[i], mine = i ? k.b1 : k.b2;

		for (j = 0; j < BG_FP_PER_BUCKET; j++)
			if (st->bk[b].fp[j] == k.f && st->other[slot(b, j)] == mine) {
				st->bk[b].fp[j] = 0;
				st->other[slot(b, j)] = SLOT_FREE;
				return 0;
			}
	}
	return -1;
}

static uint64_t stage_rand(struct stage *st) /* xorshift64, as the build's */
{
	st->rng ^= st->rng << 13;
	st->rng ^= st->rng >> 7;
	st->rng ^= st->rng << 17;
	return st->rng;
}

/* A free slot of bucket b (fingerprint 0: removals leave holes anywhere
 * in a bucket), or -1. */
static inline int free_slot(const struct stage *st, uint32_t b)
{
	uint32_t j;

	for (j = 0; j < BG_FP_PER_BUCKET; j++)
		if (!st->bk[b].fp[j])
			return (int)j;
	return -1;
}

static inline void put(struct stage *st, uint32_t b, int j, __u32 f,
		       uint32_t other)
{
	st->bk[b].fp[j] = f;
	st->other[slot(b, (uint32_t)j)] = other;
}

/* A new key into the stage: its first bucket with a free slot, else its
 * second, else the build's random walk (filter.c, fp_walk): a random slot
 * of a full bucket is taken and its key moved to its other bucket, until
 * one has room. -1 when BG_FP_KICKS found none (a key is then out). */
static int insert(struct stage *st, struct fpkey k)
{
	uint32_t b, other, vo;
	__u32 f = k.f, vf;
	int i, j;

	j = free_slot(st, k.b1);
	if (j >= 0) {
		put(st, k.b1, j, f, k.b2);
		return 0;
	}
	j = free_slot(st, k.b2);
	if (j >= 0) {
		put(st, k.b2, j, f, k.b1);
		return 0;
	}
	if (stage_rand(st) & 1) {
		b = k.b1;
		other = k.b2;
	} else {
		b = k.b2;
		other = k.b1;
	}
	for (i = 0; i < BG_FP_KICKS; i++) {
		size_t s;

		j = (int)(stage_rand(st) % BG_FP_PER_BUCKET);
		s = slot(b, (uint32_t)j);
		vf = st->bk[b].fp[j];
		vo = st->other[s];
		put(st, b, j, f, other);
		if (vo == SLOT_FREE) /* a full bucket's slots are all claimed */
			return -1;
		/* the key taken out goes to its other bucket, from which it
		 * could move back to b */
		f = vf;
		other = b;
		b = vo;
		j = free_slot(st, b);
		if (j >= 0) {
			put(st, b, j, f, other);
			return 0;
		}
	}
	return -1;
}

/* ---- The exact tables ---------------------------------------------------- */

/* new's exact tables, made before the image is touched */
struct tables {
	struct bg_block bitmap[BG_SHORT4_ELEMS];
	struct bg_range4 *allow4;
	struct bg_range6 *allow6, *short6;
	__u64 *allown;
	uint32_t allow4_n, allow6_n, short6_n, allown_n;
};

static void tables_free(struct tables *t)
{
	free(t->allow4);
	free(t->allow6);
	free(t->short6);
	free(t->allown);
	free(t);
}

/* A table of n entries takes the elements the image's table of have
 * entries takes, so it can be written in place: the offsets of the tables
 * after it (bloomgate/lookup.h) follow from element counts. */
static int table_fits(const char *what, uint32_t n, uint32_t have, uint32_t per,
		      char *why, size_t whylen)
{
	if (elems(n, per) == elems(have, per))
		return 0;
	bg_whyf(why, whylen,
	     "the %s table would take %u elements (%u entries), the filter's takes %u (%u entries)",
	     what, elems(n, per), n, elems(have, per), have);
	return -EXDEV;
}

static int tables_make(struct tables *t, const struct bg_filter_params *plan,
		       uint64_t seed, const struct bg_blocklist *bl,
		       const struct bg_filter_header *hdr, char *why, size_t whylen)
{
	int err;

	bg_filter_short4_bitmap(&bl->block, t->bitmap);
	t->allow4 = calloc(bl->allow.n4 + 1, sizeof(*t->allow4));
	t->allow6 = calloc(bl->allow.n6 + 1, sizeof(*t->allow6));
	t->short6 = calloc(bl->block.n6 + 1, sizeof(*t->short6));
	t->allown = calloc((size_t)plan->allown_n + 1, sizeof(*t->allown));
	if (!t->allow4 || !t->allow6 || !t->short6 || !t->allown)
		return -ENOMEM;
	t->allow4_n = bg_filter_ranges4(&bl->allow, 33, t->allow4);
	t->allow6_n = bg_filter_ranges6(&bl->allow, 129, t->allow6);
	t->short6_n = bg_filter_ranges6(&bl->block, plan->short6_below, t->short6);
	if (t->allow4_n == UINT32_MAX || t->allow6_n == UINT32_MAX ||
	    t->short6_n == UINT32_MAX)
		return -ENOMEM;
	t->allown_n = bg_filter_allow_names(t->allown, plan, seed, &bl->names);
	err = table_fits("IPv4 allow", t->allow4_n, hdr->allow4_n,
			 BG_RANGE4_PER_ELEM, why, whylen);
	if (!err)
		err = table_fits("IPv6 allow", t->allow6_n, hdr->allow6_n,
				 BG_RANGE6_PER_ELEM, why, whylen);
	if (!err)
		err = table_fits("short IPv6", t->short6_n, hdr->short6_n,
				 BG_RANGE6_PER_ELEM, why, whylen);
	if (!err)
		err = table_fits("allowed name", t->allown_n, hdr->allown_n,
				 BG_NAMEKEY_PER_ELEM, why, whylen);
	return err;
}

/* n entries of size bytes at element off, the rest of their last element
 * zero, as the build leaves it. */
static void table_put(struct bg_block *elem, uint32_t off, const void *src,
		      uint32_t n, size_t size, uint32_t per)
{
	memset(elem + off, 0, (size_t)elems(n, per) * sizeof(*elem));
	memcpy(elem + off, src, (size_t)n * size);
}

static void tables_put(const struct tables *t, struct bg_filter_header *hdr)
{
	struct bg_block *elem = (struct bg_block *)hdr;
	/* the offsets before the counts change (the same: same elements) */
	uint32_t allow6_off = bg_allow6_off(hdr), short6_off = bg_short6_off(hdr);
	uint32_t allown_off = bg_allown_off(hdr);

	if (hdr->flags & BG_FILTER_F_SHORT4)
		memcpy(elem + 1, t->bitmap, sizeof(t->bitmap));
	table_put(elem, hdr->allow4_off, t->allow4, t->allow4_n,
		  sizeof(*t->allow4), BG_RANGE4_PER_ELEM);
	table_put(elem, allow6_off, t->allow6, t->allow6_n, sizeof(*t->allow6),
		  BG_RANGE6_PER_ELEM);
	table_put(elem, short6_off, t->short6, t->short6_n, sizeof(*t->short6),
		  BG_RANGE6_PER_ELEM);
	table_put(elem, allown_off, t->allown, t->allown_n, sizeof(*t->allown),
		  BG_NAMEKEY_PER_ELEM);
	hdr->allow4_n = t->allow4_n;
	hdr->allow6_n = t->allow6_n;
	hdr->short6_n = t->short6_n;
	hdr->allown_n = t->allown_n;
}

/* ---- The patch ------------------------------------------------------------ */

/* p is the plan of the filter in mem: what the patch keeps. */
static int plan_matches(const struct bg_filter_header *hdr,
			const struct bg_filter_params *p, char *why, size_t whylen)
{
	if (!bg_header_ok(hdr)) {
		bg_whyf(why, whylen, "not a filter of this ABI (version %u)",
		     hdr->abi_version);
		return -EXDEV;
	}
	if (!hdr->fp_nbuckets) {
		bg_whyf(why, whylen,
		     "the filter has no exact stage (built with confirm off): a removed key could not be taken out");
		return -EXDEV;
	}
	if (hdr->nblocks != p->nblocks || hdr->k != p->k ||
	    hdr->fp_nbuckets != p->fp_nbuckets || hdr->n4 != p->n4 ||
	    hdr->n6 != p->n6 || memcmp(hdr->len4, p->len4, sizeof(hdr->len4)) ||
	    memcmp(hdr->len6, p->len6, sizeof(hdr->len6)) ||
	    !(hdr->flags & BG_FILTER_F_SHORT4) != !p->short4 ||
	    bg_filter_nelems(hdr) > p->nelems) {
		bg_whyf(why, whylen, "the plan does not describe the filter image");
		return -EXDEV;
	}
	return 0;
}

struct vec {
	uint64_t *v;
	size_t n, cap;
};

static int vec_push(struct vec *x, uint64_t h)
{
	if (bg_grow(&x->v, &x->cap, x->n + 1, sizeof(*x->v), 1024))
		return -ENOMEM;
	x->v[x->n++] = h;
	return 0;
}

/* a, b sorted and distinct: a \ b into *only_a, b \ a into *only_b. */
static int diff(const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
		struct vec *only_a, struct vec *only_b)
{
	size_t i = 0, j = 0;
	int err = 0;

	while (!err && (i < na || j < nb)) {
		if (j == nb || (i < na && a[i] < b[j]))
			err = vec_push(only_a, a[i++]);
		else if (i == na || a[i] > b[j])
			err = vec_push(only_b, b[j++]);
		else
			i++, j++; /* in both */
	}
	return err;
}

int bg_filter_patch(void *mem, const struct bg_filter_params *p,
		    uint64_t bloom_loaded, const struct bg_blocklist *old,
		    const struct bg_blocklist *new, unsigned int threads,
		    struct bg_patch_result *res, char *why, size_t whylen)
{
	struct bg_filter_header *hdr = mem;
	struct bg_block *blocks;
	struct bg_filter_params plan;
	struct tables *t = NULL;
	struct stage st = { 0 };
	struct vec rem = { 0 }, add = { 0 };
	uint64_t *ov = NULL, *nv = NULL, bad;
	size_t on = 0, nn = 0, nslots, i;
	int err;

	err = plan_matches(hdr, p, why, whylen);
	if (err)
		return err;
	/* new in p's layout: its counts, or why it has no place there */
	plan = *p;
	err = bg_filter_plan_counts(new, &plan, why, whylen);
	if (err)
		return err;
	st.nb = hdr->fp_nbuckets;
	st.seed = hdr->seed;
	st.rng = (hdr->seed ^ BG_FP_SEED_XOR) | 1;
	st.bk = (struct bg_fp_bucket *)((struct bg_block *)mem + hdr->fp_off);
	nslots = (size_t)st.nb * BG_FP_PER_BUCKET;
	if (plan.n > nslots) {
		bg_whyf(why, whylen, "%llu keys for the %zu slots of the exact stage",
		     (unsigned long long)plan.n, nslots);
		return -EXDEV;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	err = tables_make(t, &plan, hdr->seed, new, hdr, why, whylen);
	if (err)
		goto out;

	err = bg_filter_key_hashes(p, hdr->seed, old, threads, &ov, &on);
	if (!err)
		err = bg_filter_key_hashes(p, hdr->seed, new, threads, &nv, &nn);
	if (!err)
		err = diff(ov, on, nv, nn, &rem, &add);
	free(nv);
	nv = NULL;
	st.other = malloc(nslots * sizeof(*st.other));
	if (err || !st.other) {
		err = -ENOMEM;
		goto out;
	}
	memset(st.other, 0xff, nslots * sizeof(*st.other)); /* SLOT_FREE */
	err = claim_old(&st, ov, on, threads, &bad);
	if (err == -EXDEV) {
		struct fpkey k = fp_key2(&st, bad);

		bg_whyf(why, whylen,
		     "the filter does not hold the old lists' keys (a key's fingerprint %08x is not in its buckets %u, %u)",
		     k.f, k.b1, k.b2);
	}
	if (err)
		goto out;
	/* Nothing written before this: a refusal above leaves mem as it was. */
	/* A slot no old key claimed belongs to no key (one key placed twice:
	 * its two occurrences in two passes of a build of over
	 * 2^23 keys): cleared, so the stage holds exactly the keys listed. */
	for (i = 0; i < nslots; i++)
		if (st.other[i] == SLOT_FREE)
			st.bk[i / BG_FP_PER_BUCKET].fp[i % BG_FP_PER_BUCKET] = 0;
	for (i = 0; i < rem.n; i++)
		if (release(&st, fp_key(&st, rem.v[i]))) {
			bg_whyf(why, whylen, "a removed key has no slot"); /* never */
			err = -EXDEV;
			goto out;
		}
	blocks = (struct bg_block *)mem + bg_bloom_base(hdr);
	for (i = 0; i < add.n; i++) {
		uint64_t h = add.v[i];

		bg_bloom_set(&blocks[bg_bloom_block(h, hdr->nblocks)], h, hdr->k);
		if (insert(&st, fp_key(&st, h))) {
			bg_whyf(why, whylen,
			     "the exact stage has no room for a key (%d kicks), %zu of %zu slots used",
			     BG_FP_KICKS, (size_t)(on - rem.n + i), nslots);
			err = -EXDEV;
			goto out;
		}
	}
	tables_put(t, hdr);
	hdr->entries = (__u32)plan.n;
	/* A query probes the suffix depths of subs_depths; new's are added
	 * (a depth whose SUBS keys are all removed stays: its probes are
	 * Bloom positives the stage rejects). */
	hdr->subs_depths |= plan.subs_depths;
	hdr->flags = (__u8)((hdr->flags & ~BG_FILTER_F_NAMES) |
			    (plan.name_keys ? BG_FILTER_F_NAMES : 0));

	memset(res, 0, sizeof(*res));
	res->added = add.n;
	res->removed = rem.n;
	res->bloom_loaded = bloom_loaded + add.n;
	plan.allow4_n = t->allow4_n;
	plan.allow6_n = t->allow6_n;
	plan.short6_n = t->short6_n;
	plan.subs_depths = hdr->subs_depths;
	bg_filter_plan_rates(&plan, res->bloom_loaded);
	res->plan = plan;
out:
	free(ov);
	free(nv);
	free(rem.v);
	free(add.v);
	free(st.other);
	tables_free(t);
	return err;
}

/* ---- A filter kept for small changes ------------------------------------- */

struct bg_inc {
	void *image;
	size_t len;
	struct bg_filter_params p;
	uint64_t bloom_loaded;
	struct stage st;
	uint64_t *fixed; /* the fixed part's Bloom hashes, sorted, distinct */
	size_t nfixed;
	uint64_t keys; /* Bloom keys the filter holds now */
};

void bg_inc_free(struct bg_inc *inc)
{
	if (!inc)
		return;
	if (inc->image)
		munmap(inc->image, inc->len);
	free(inc->st.other);
	free(inc->fixed);
	free(inc);
}

const void *bg_inc_image(const struct bg_inc *inc, size_t *len)
{
	*len = inc->p.bytes;
	return inc->image;
}

const struct bg_filter_params *bg_inc_plan(const struct bg_inc *inc)
{
	return &inc->p;
}

int bg_inc_new(void *image, size_t len, const struct bg_filter_params *p,
	       uint64_t bloom_loaded, const struct bg_blocklist *all,
	       const struct bg_blocklist *fixed, unsigned int threads,
	       struct bg_inc **out, char *why, size_t whylen)
{
	struct bg_filter_header *hdr = image;
	struct bg_inc *inc = calloc(1, sizeof(*inc));
	uint64_t *v = NULL, bad;
	size_t n = 0, nslots, i;
	int err;

	*out = NULL;
	if (!inc) {
		munmap(image, len);
		return -ENOMEM;
	}
	inc->image = image;
	inc->len = len;
	inc->p = *p;
	inc->bloom_loaded = bloom_loaded;
	err = plan_matches(hdr, p, why, whylen);
	if (!err && !hdr->fp_nbuckets) {
		bg_whyf(why, whylen, "no exact stage: a removal could not be exact");
		err = -EXDEV;
	}
	if (err)
		goto fail;
	inc->st.nb = hdr->fp_nbuckets;
	inc->st.seed = hdr->seed;
	inc->st.rng = (hdr->seed ^ BG_FP_SEED_XOR) | 1;
	inc->st.bk = (struct bg_fp_bucket *)((struct bg_block *)image + hdr->fp_off);
	nslots = (size_t)inc->st.nb * BG_FP_PER_BUCKET;
	inc->st.other = malloc(nslots * sizeof(*inc->st.other));
	err = bg_filter_key_hashes(p, hdr->seed, all, threads, &v, &n);
	if (!err && !inc->st.other)
		err = -ENOMEM;
	if (err)
		goto fail;
	inc->keys = n;
	memset(inc->st.other, 0xff, nslots * sizeof(*inc->st.other));
	err = claim_old(&inc->st, v, n, threads, &bad);
	free(v);
	v = NULL;
	if (err == -EXDEV)
		bg_whyf(why, whylen, "the filter does not hold its lists' keys");
	if (err)
		goto fail;
	/* a slot no key claimed (a key placed twice by a build of several
	 * passes) belongs to no key */
	for (i = 0; i < nslots; i++)
		if (inc->st.other[i] == SLOT_FREE)
			inc->st.bk[i / BG_FP_PER_BUCKET].fp[i % BG_FP_PER_BUCKET] = 0;
	err = bg_filter_key_hashes(p, hdr->seed, fixed, threads, &inc->fixed,
				   &inc->nfixed);
	if (err)
		goto fail;
	*out = inc;
	return 0;
fail:
	free(v);
	bg_inc_free(inc);
	return err;
}

static int in_sorted(const uint64_t *v, size_t n, uint64_t h)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == h;
}

/* The keys of v (n) that the fixed part has not, packed in place; how
 * many stay. */
static size_t not_fixed(const struct bg_inc *inc, uint64_t *v, size_t n)
{
	size_t i, w = 0;

	for (i = 0; i < n; i++)
		if (!in_sorted(inc->fixed, inc->nfixed, v[i]))
			v[w++] = v[i];
	return w;
}

int bg_inc_apply(struct bg_inc *inc, const struct bg_blocklist *old_part,
		 const struct bg_blocklist *new_part, double bound,
		 struct bg_inc_result *res, char *why, size_t whylen)
{
	struct bg_filter_header *hdr = inc->image;
	struct bg_filter_params plan = inc->p, chk = inc->p;
	struct vec rem = { 0 }, add = { 0 };
	uint64_t *ov = NULL, *nv = NULL;
	size_t on = 0, nn = 0, i;
	struct bg_block *blocks;
	int err;

	memset(res, 0, sizeof(*res));
	/* the new part in the plan's layout, or why it has no place there */
	err = bg_filter_plan_counts(new_part, &chk, why, whylen);
	if (!err && chk.short4_prefixes) {
		bg_whyf(why, whylen, "an IPv4 prefix of /16 or shorter (the bitmap "
			"is built whole)");
		err = -EXDEV;
	}
	if (!err && chk.short6_prefixes) {
		bg_whyf(why, whylen, "an IPv6 prefix too short to expand (the ranges "
			"are built whole)");
		err = -EXDEV;
	}
	if (err)
		return err;
	err = bg_filter_key_hashes(&inc->p, hdr->seed, old_part, 1, &ov, &on);
	if (!err)
		err = bg_filter_key_hashes(&inc->p, hdr->seed, new_part, 1, &nv, &nn);
	if (!err)
		err = diff(ov, on, nv, nn, &rem, &add);
	if (err)
		goto out;
	rem.n = not_fixed(inc, rem.v, rem.n);
	add.n = not_fixed(inc, add.v, add.n);
	plan.n = inc->keys - rem.n + add.n;
	bg_filter_plan_rates(&plan, inc->bloom_loaded + add.n);
	if (bound > 0 && plan.predicted_addr > bound * inc->p.target) {
		bg_whyf(why, whylen, "the Bloom part's rate would be %.3g (target %g)",
			plan.predicted_addr, inc->p.target);
		err = -EXDEV;
		goto out;
	}
	if (plan.n > (uint64_t)inc->st.nb * BG_FP_PER_BUCKET) {
		bg_whyf(why, whylen, "more keys than the exact stage has slots");
		err = -EXDEV;
		goto out;
	}
	for (i = 0; i < rem.n; i++)
		release(&inc->st, fp_key(&inc->st, rem.v[i]));
	blocks = (struct bg_block *)inc->image + bg_bloom_base(hdr);
	for (i = 0; i < add.n; i++) {
		uint64_t h = add.v[i];

		bg_bloom_set(&blocks[bg_bloom_block(h, hdr->nblocks)], h, hdr->k);
		if (insert(&inc->st, fp_key(&inc->st, h))) {
			bg_whyf(why, whylen, "the exact stage has no room for a key");
			err = -EXDEV;
			goto out;
		}
	}
	inc->keys = plan.n;
	inc->bloom_loaded += add.n;
	inc->p = plan; /* its keys and rates now; the layout is the same */
	hdr->entries = (__u32)inc->keys;
	res->added = add.n;
	res->removed = rem.n;
	res->bloom_loaded = inc->bloom_loaded;
	res->predicted_addr = plan.predicted_addr;
out:
	free(ov);
	free(nv);
	free(rem.v);
	free(add.v);
	return err;
}
