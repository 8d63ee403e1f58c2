// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The artifact's provenance index (core/artindex.h, layout in
 * bloomgate/artifact.h): items collected from a parse, sorted, placed in
 * a hash table of 64-byte buckets; changed in place by a delta; looked up
 * by `check`.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomgate/bloom.h"
#include "bloomgate/dns.h"
#include "bloomgate/hash.h"
#include "core/grow.h"
#include "core/artindex.h"
#include "core/domains.h"
#include "core/lists.h"
#include "core/par.h"

/*
 * The classes' seed constants, xored into the index's seed: the first six
 * outputs of SplitMix64 from state 0, so nothing but arbitrary, unrelated
 * 64-bit values. They are part of the format: a gateway hashes its query
 * with them, so they never change.
 */
static const uint64_t class_const[BG_AI__CLASSES] = {
	[BG_AI_V4] = 0xe220a8397b1dcdafULL,
	[BG_AI_V6] = 0x6e789e6aa1b965f4ULL,
	[BG_AI_NAME] = 0x06c45d188009454fULL,
	[BG_AI_ALLOW_V4] = 0xf88bb8a8724c81ecULL,
	[BG_AI_ALLOW_V6] = 0x1b39896a51a8749bULL,
	[BG_AI_ALLOW_NAME] = 0x53cb9f0c747ea2eaULL,
};

static inline uint64_t class_seed(uint64_t seed, unsigned int cls)
{
	return seed ^ class_const[cls];
}

/* A name's key: its kind's byte, then the name (no NUL); 1 + 253 bytes at
 * most, within BG_HASH_MAX_LEN. */
static uint64_t hash_name(uint64_t seed, unsigned int cls, int kind,
			  const char *name, size_t len)
{
	uint8_t buf[BG_HASH_MAX_LEN];

	if (len > sizeof(buf) - 1)
		len = sizeof(buf) - 1;
	buf[0] = (uint8_t)kind;
	memcpy(buf + 1, name, len);
	return bg_hash64(buf, (__u32)(1 + len), class_seed(seed, cls));
}

uint64_t bg_ai_hash_entry(uint64_t seed, const struct bg_entry_ref *e,
			  uint8_t *cls, uint8_t *plen)
{
	unsigned int c;

	switch (e->kind) {
	case BG_KEY_IPV4: {
		const struct bg_key4 *k = e->key;

		c = e->allow ? BG_AI_ALLOW_V4 : BG_AI_V4;
		*cls = (uint8_t)c;
		*plen = k->plen;
		return bg_hash64(k, sizeof(*k), class_seed(seed, c));
	}
	case BG_KEY_IPV6: {
		const struct bg_key6 *k = e->key;

		c = e->allow ? BG_AI_ALLOW_V6 : BG_AI_V6;
		*cls = (uint8_t)c;
		*plen = k->plen;
		return bg_hash64(k, sizeof(*k), class_seed(seed, c));
	}
	case BG_ENTRY_NAME:
		c = e->allow ? BG_AI_ALLOW_NAME : BG_AI_NAME;
		*cls = (uint8_t)c;
		*plen = 0;
		return hash_name(seed, c, e->name_kind, e->key,
				 strnlen(e->key, BG_HASH_MAX_LEN - 1));
	default:
		*cls = BG_AI__CLASSES;
		*plen = 0;
		return 0;
	}
}

/* ---- Records and buckets ------------------------------------------------ */

static inline uint32_t home_bucket(uint64_t h, uint32_t nbuckets)
{
	return (uint32_t)(((h >> 32) * nbuckets) >> 32);
}

static inline uint64_t record_of(uint64_t h, uint32_t source)
{
	uint64_t tag = h & BG_ART_REC_TAG_MASK;

	return (tag ? tag : 1) | (uint64_t)source << BG_ART_REC_SOURCE_SHIFT;
}

/* The buckets after the header (element 0). */
static inline struct bg_art_bucket *buckets_of(void *img)
{
	return (struct bg_art_bucket *)img + 1;
}

static inline const struct bg_art_bucket *cbuckets_of(const void *img)
{
	return (const struct bg_art_bucket *)img + 1;
}

/* Records past BG_AI_LOAD_MAX of the slots are refused (bg_ai_add()). */
static int load_allows(uint64_t records, uint32_t nbuckets)
{
	return (double)records <=
	       BG_AI_LOAD_MAX * BG_ART_BKT_RECORDS * (double)nbuckets;
}

/* An item's fields within what a record and the header can hold. */
static int item_ok(const struct bg_ai_item *it)
{
	if (it->cls >= BG_AI__CLASSES || it->source > BG_AI_SOURCES_MAX)
		return 0;
	switch (it->cls) {
	case BG_AI_V4:
	case BG_AI_ALLOW_V4:
		return it->plen <= 32;
	case BG_AI_V6:
	case BG_AI_ALLOW_V6:
		return it->plen <= 128;
	default:
		return it->plen == 0;
	}
}

/* The header's prefix lengths and classes with it (item_ok()). */
static void note_item(struct bg_art_index_hdr *hd, const struct bg_ai_item *it)
{
	hd->classes |= (uint8_t)(1u << it->cls);
	if (it->cls == BG_AI_V4 || it->cls == BG_AI_ALLOW_V4)
		hd->plens4 |= 1ULL << it->plen;
	else if (it->cls == BG_AI_V6 || it->cls == BG_AI_ALLOW_V6)
		hd->plens6[it->plen / 64] |= 1ULL << (it->plen % 64);
}

/* ---- Collecting ---------------------------------------------------------- */

#define VEC_CAP_MIN 4096

/* One parse worker's items: a cache line of its own, so that workers
 * pushing at once do not share one. */
struct ai_vec {
	struct bg_ai_item *v;
	size_t n, cap;
	int err;
} __attribute__((aligned(64)));

struct bg_ai_collector {
	struct ai_vec w[BG_PARSE_WORKERS_MAX];
	uint64_t seed;
	int bad; /* a call from a worker past the bound: no vector to flag */
};

int bg_ai_collector_new(uint64_t seed, struct bg_ai_collector **c)
{
	struct bg_ai_collector *p;

	p = aligned_alloc(64, sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(p, 0, sizeof(*p));
	p->seed = seed;
	*c = p;
	return 0;
}

void bg_ai_entry(void *ctx, unsigned int worker, const struct bg_entry_ref *e)
{
	struct bg_ai_collector *c = ctx;
	struct bg_ai_item it = { 0 };
	struct ai_vec *w;

	if (worker >= BG_PARSE_WORKERS_MAX) {
		__atomic_store_n(&c->bad, -EINVAL, __ATOMIC_RELAXED);
		return;
	}
	w = &c->w[worker];
	if (w->err)
		return;
	if (e->source > BG_AI_SOURCES_MAX) {
		w->err = -E2BIG;
		return;
	}
	it.h = bg_ai_hash_entry(c->seed, e, &it.cls, &it.plen);
	it.source = (uint32_t)e->source;
	if (!item_ok(&it)) {
		w->err = -EINVAL;
		return;
	}
	if (bg_grow(&w->v, &w->cap, w->n + 1, sizeof(*w->v), VEC_CAP_MIN)) {
		w->err = -ENOMEM;
		return;
	}
	w->v[w->n++] = it;
}

void bg_ai_collector_reset(struct bg_ai_collector *c)
{
	unsigned int i;

	for (i = 0; i < BG_PARSE_WORKERS_MAX; i++) {
		c->w[i].n = 0;
		c->w[i].err = 0;
	}
	c->bad = 0;
}

void bg_ai_collector_free(struct bg_ai_collector *c)
{
	unsigned int i;

	if (!c)
		return;
	for (i = 0; i < BG_PARSE_WORKERS_MAX; i++)
		free(c->w[i].v);
	free(c);
}

/* ---- Sorting ------------------------------------------------------------- */

/*
 * Items are ordered by (h, source, cls, plen): by (h, source) as the
 * header promises, and totally, so that the order (and which of two equal
 * items is kept) never depends on the order of collection.
 */
static inline uint64_t item_low(const struct bg_ai_item *a)
{
	return (uint64_t)a->source << 16 | (uint64_t)a->cls << 8 | a->plen;
}

static inline int item_less(const struct bg_ai_item *a,
			    const struct bg_ai_item *b)
{
	return a->h < b->h || (a->h == b->h && item_low(a) < item_low(b));
}

static inline int item_same(const struct bg_ai_item *a,
			    const struct bg_ai_item *b)
{
	return a->h == b->h && item_low(a) == item_low(b);
}

static int item_cmp(const void *x, const void *y)
{
	const struct bg_ai_item *a = x, *b = y;

	return item_less(a, b) ? -1 : item_less(b, a);
}

/* Runs of a radix digit left to insertion sort: a few items on average,
 * more only when many share the digit (qsort then, so that no input makes
 * the sort quadratic). */
#define INSERTION_MAX 24

static void sort_small(struct bg_ai_item *v, size_t n)
{
	size_t i, j;

	if (n > INSERTION_MAX) {
		qsort(v, n, sizeof(*v), item_cmp);
		return;
	}
	for (i = 1; i < n; i++) {
		struct bg_ai_item x = v[i];

		for (j = i; j && item_less(&x, &v[j - 1]); j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* Copies the sorted v[0, n) to out without repeats; how many it wrote. */
static size_t copy_unique(struct bg_ai_item *out, const struct bg_ai_item *v,
			  size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (!k || !item_same(&out[k - 1], &v[i]))
			out[k++] = v[i];
	return k;
}

/*
 * The radix sort of many items (the hashes are uniform, so two digits of
 * the top bits leave runs of a few items): the items scattered from the
 * workers' vectors by their top L1_BITS into out, each thread its share of
 * the items; then each bin, in cache, scattered by its next digit into a
 * thread's scratch, its runs sorted, and copied back without repeats.
 */
#define L1_BITS 8
#define L1_BINS (1u << L1_BITS)
#define L2_BITS_MAX 14
#define RADIX_MIN 65536 /* fewer items: qsort */

struct sort_job {
	const struct bg_ai_collector *c;
	struct bg_ai_item *out;
	size_t total;
	unsigned int nthreads;
	size_t (*hist)[L1_BINS]; /* [thread][bin]: counts, then places */
	size_t start[L1_BINS + 1]; /* where each bin begins in out */
	size_t uniq[L1_BINS]; /* items of each bin after repeats */
	struct bg_ai_item **scratch; /* [thread]: the largest bin */
	size_t **count; /* [thread]: 1 << L2_BITS_MAX counters */
	int pass; /* 0: count, 1: scatter, 2: sort the bins */
};

/* The part of the concatenated vectors thread t takes: [lo, hi). */
static void share(const struct sort_job *j, unsigned int t, size_t *lo,
		  size_t *hi)
{
	*lo = j->total * t / j->nthreads;
	*hi = j->total * (t + 1) / j->nthreads;
}

/* Pass 0 (count by bin) or 1 (scatter to the bin's places) over thread
 * t's share of the items, vector by vector. */
static void radix_l1(struct sort_job *j, unsigned int t)
{
	size_t lo, hi, base = 0, i, *hist = j->hist[t];
	unsigned int w;

	share(j, t, &lo, &hi);
	for (w = 0; w < BG_PARSE_WORKERS_MAX && base < hi; w++) {
		const struct ai_vec *vec = &j->c->w[w];
		size_t a = lo > base ? lo - base : 0;
		size_t b = hi - base < vec->n ? hi - base : vec->n;

		if (j->pass == 0) {
			for (i = a; i < b; i++)
				hist[vec->v[i].h >> (64 - L1_BITS)]++;
		} else {
			for (i = a; i < b; i++)
				j->out[hist[vec->v[i].h >> (64 - L1_BITS)]++] =
					vec->v[i];
		}
		base += vec->n;
	}
}

static unsigned int l2_bits(size_t n)
{
	unsigned int b = 0;

	/* about 4 items a run */
	while (b < L2_BITS_MAX && (n >> (b + 2)) > 1)
		b++;
	return b;
}

static void radix_l2(struct sort_job *j, unsigned int t)
{
	struct bg_ai_item *tmp = j->scratch[t];
	size_t *count = j->count[t];
	unsigned int bin;

	for (bin = t; bin < L1_BINS; bin += j->nthreads) {
		struct bg_ai_item *v = j->out + j->start[bin];
		size_t n = j->start[bin + 1] - j->start[bin], i, sum = 0;
		unsigned int bits = l2_bits(n), shift = 64 - L1_BITS - bits;
		size_t nd = (size_t)1 << bits, mask = nd - 1;

		memset(count, 0, nd * sizeof(*count));
		for (i = 0; i < n; i++)
			count[(v[i].h >> shift) & mask]++;
		for (i = 0; i < nd; i++) {
			size_t k = count[i];

			count[i] = sum;
			sum += k;
		}
		for (i = 0; i < n; i++)
			tmp[count[(v[i].h >> shift) & mask]++] = v[i];
		/* count[d] is now the end of digit d's run */
		for (i = 0, sum = 0; i < nd; i++) {
			sort_small(tmp + sum, count[i] - sum);
			sum = count[i];
		}
		j->uniq[bin] = copy_unique(v, tmp, n);
	}
}

static void sort_main(void *ctx, unsigned int t)
{
	struct sort_job *j = ctx;

	if (j->pass < 2)
		radix_l1(j, t);
	else
		radix_l2(j, t);
}

static int radix_sort(const struct bg_ai_collector *c, size_t total,
		      struct bg_ai_item *out, size_t *n)
{
	struct sort_job j = { .c = c, .out = out, .total = total };
	size_t b, t, maxbin = 0, k;
	int ret = -ENOMEM;

	j.nthreads = bg_par_threads(0);
	j.hist = calloc(j.nthreads, sizeof(*j.hist));
	j.scratch = calloc(j.nthreads, sizeof(*j.scratch));
	j.count = calloc(j.nthreads, sizeof(*j.count));
	if (!j.hist || !j.scratch || !j.count)
		goto out;

	bg_par_run(j.nthreads, sort_main, &j);
	/* each thread's place in each bin: the bins in order, and within a
	 * bin the threads in order */
	for (b = 0, k = 0; b < L1_BINS; b++) {
		j.start[b] = k;
		for (t = 0; t < j.nthreads; t++) {
			size_t cnt = j.hist[t][b];

			j.hist[t][b] = k;
			k += cnt;
		}
		if (k - j.start[b] > maxbin)
			maxbin = k - j.start[b];
	}
	j.start[L1_BINS] = k;
	for (t = 0; t < j.nthreads; t++) {
		j.scratch[t] = malloc(maxbin * sizeof(**j.scratch));
		j.count[t] = malloc(sizeof(**j.count) << L2_BITS_MAX);
		if (!j.scratch[t] || !j.count[t])
			goto out;
	}
	j.pass = 1;
	bg_par_run(j.nthreads, sort_main, &j);
	j.pass = 2;
	bg_par_run(j.nthreads, sort_main, &j);

	/* the bins' unique items together; a repeat across two bins cannot
	 * be (they differ in the top bits) */
	for (b = 0, k = 0; b < L1_BINS; b++) {
		if (k != j.start[b])
			memmove(out + k, out + j.start[b],
				j.uniq[b] * sizeof(*out));
		k += j.uniq[b];
	}
	*n = k;
	ret = 0;
out:
	for (t = 0; j.scratch && j.count && t < j.nthreads; t++) {
		free(j.scratch[t]);
		free(j.count[t]);
	}
	free(j.scratch);
	free(j.count);
	free(j.hist);
	return ret;
}

int bg_ai_items(struct bg_ai_collector *c, struct bg_ai_item **v, size_t *n)
{
	struct bg_ai_item *out;
	size_t total = 0, k = 0;
	unsigned int w;
	int ret;

	*v = NULL;
	*n = 0;
	ret = __atomic_load_n(&c->bad, __ATOMIC_RELAXED);
	if (ret)
		return ret;
	for (w = 0; w < BG_PARSE_WORKERS_MAX; w++) {
		if (c->w[w].err)
			return c->w[w].err;
		total += c->w[w].n;
	}
	if (!total)
		return 0;
	out = malloc(total * sizeof(*out));
	if (!out)
		return -ENOMEM;
	if (total >= RADIX_MIN) {
		ret = radix_sort(c, total, out, &k);
		if (ret) {
			free(out);
			return ret;
		}
	} else {
		for (w = 0; w < BG_PARSE_WORKERS_MAX; w++) {
			if (!c->w[w].n)
				continue;
			memcpy(out + k, c->w[w].v, c->w[w].n * sizeof(*out));
			k += c->w[w].n;
		}
		qsort(out, total, sizeof(*out), item_cmp);
		k = copy_unique(out, out, total);
	}
	*v = out;
	*n = k;
	return 0;
}

/* ---- Building and changing ---------------------------------------------- */

/*
 * Places rec in the chain of bucket home: in the first bucket from home
 * with room, flagging every full one passed (so a lookup from home goes on
 * past it). Nothing is written unless it is placed: 0, or -ENOSPC when
 * every bucket is full.
 */
static int place(struct bg_art_bucket *bk, uint32_t nb, uint32_t home,
		 uint64_t rec)
{
	uint32_t b = home, i;

	for (i = 0; i < nb && bk[b].n >= BG_ART_BKT_RECORDS; i++)
		b = b + 1 == nb ? 0 : b + 1;
	if (i == nb)
		return -ENOSPC;
	for (; home != b; home = home + 1 == nb ? 0 : home + 1)
		bk[home].flags |= BG_ART_BKT_OVERFLOW;
	bk[b].rec[bk[b].n++] = rec;
	return 0;
}

int bg_ai_build(const struct bg_ai_item *v, size_t n, uint64_t seed,
		void **img, size_t *len)
{
	struct bg_art_index_hdr *hd;
	struct bg_art_bucket *bk;
	double want;
	uint32_t nb;
	size_t i, bytes;

	*img = NULL;
	*len = 0;
	want = ceil((double)n / (BG_ART_BKT_RECORDS * BG_AI_LOAD_BUILD));
	if (want > UINT32_MAX)
		return -E2BIG;
	nb = want < 1 ? 1 : (uint32_t)want;
	bytes = sizeof(*hd) + (size_t)nb * sizeof(*bk);
	/* calloc: the buckets are mostly written once, in order; fresh
	 * zeroed pages need no memset pass of their own */
	hd = calloc(1, bytes);
	if (!hd)
		return -ENOMEM;
	hd->magic = BG_ART_INDEX_MAGIC;
	hd->nbuckets = nb;
	hd->seed = seed;
	bk = buckets_of(hd);
	/*
	 * In the items' order, which is the buckets' (the home bucket grows
	 * with h): the same items make the same table, and each record goes
	 * at most a short run of full buckets past its home, behind the
	 * previous one.
	 */
	for (i = 0; i < n; i++) {
		if (!item_ok(&v[i]) || (i && !item_less(&v[i - 1], &v[i]))) {
			free(hd);
			return -EINVAL;
		}
		note_item(hd, &v[i]);
		/* 7 * nb slots >= n / BG_AI_LOAD_BUILD: place() always
		 * finds room */
		place(bk, nb, home_bucket(v[i].h, nb),
		      record_of(v[i].h, v[i].source));
	}
	hd->records = n;
	*img = hd;
	*len = bytes;
	return 0;
}

int bg_ai_valid(const void *img, size_t len)
{
	const struct bg_art_index_hdr *hd = img;
	static const uint8_t zero[sizeof(hd->pad)];

	if (!img || len < sizeof(*hd) || len % sizeof(struct bg_art_bucket))
		return -EBADMSG;
	if (hd->magic != BG_ART_INDEX_MAGIC || !hd->nbuckets ||
	    len / sizeof(struct bg_art_bucket) - 1 != hd->nbuckets)
		return -EBADMSG;
	if (hd->records > (uint64_t)hd->nbuckets * BG_ART_BKT_RECORDS)
		return -EBADMSG;
	/* no bit past /32, /128 or the last class: a writer of another
	 * layout, or damage */
	if ((hd->plens4 >> 33) || (hd->plens6[2] >> 1) ||
	    (hd->classes >> BG_AI__CLASSES) ||
	    memcmp(hd->pad, zero, sizeof(zero)))
		return -EBADMSG;
	return 0;
}

/*
 * Walks the chain of home: the buckets a lookup from home reads, each
 * checked (a record count past the bucket is damage). fn gets each bucket
 * and its number, and returns 0 to go on, anything else to stop with that
 * value; 0 when the chain ended.
 */
typedef int (*bucket_fn)(const struct bg_art_bucket *b, uint32_t at,
			 void *ctx);

static int walk(const struct bg_art_bucket *bk, uint32_t nb, uint32_t home,
		bucket_fn fn, void *ctx)
{
	uint32_t b = home, i;
	int ret;

	for (i = 0; i < nb; i++) {
		if (bk[b].n > BG_ART_BKT_RECORDS)
			return -EBADMSG;
		ret = fn(&bk[b], b, ctx);
		if (ret)
			return ret;
		if (!(bk[b].flags & BG_ART_BKT_OVERFLOW))
			return 0;
		b = b + 1 == nb ? 0 : b + 1;
	}
	return 0;
}

/* Where a record is: found by find_rec() in bucket at, slot slot. */
struct rec_at {
	uint64_t rec;
	uint32_t at, slot;
};

static int find_rec(const struct bg_art_bucket *b, uint32_t at, void *ctx)
{
	struct rec_at *r = ctx;
	uint32_t i;

	for (i = 0; i < b->n; i++)
		if (b->rec[i] == r->rec) {
			r->at = at;
			r->slot = i;
			return 1;
		}
	return 0;
}

int bg_ai_add(void *img, size_t len, const struct bg_ai_item *it)
{
	struct bg_art_index_hdr *hd = img;
	struct rec_at r = { .rec = record_of(it->h, it->source) };
	uint32_t home;
	int ret;

	if (bg_ai_valid(img, len))
		return -EBADMSG;
	if (!item_ok(it))
		return -EINVAL;
	home = home_bucket(it->h, hd->nbuckets);
	ret = walk(buckets_of(img), hd->nbuckets, home, find_rec, &r);
	if (ret < 0)
		return ret;
	if (ret)
		return -EEXIST;
	if (!load_allows(hd->records + 1, hd->nbuckets))
		return -ENOSPC;
	ret = place(buckets_of(img), hd->nbuckets, home, r.rec);
	if (ret)
		return ret;
	hd->records++;
	note_item(hd, it);
	return 0;
}

int bg_ai_remove(void *img, size_t len, const struct bg_ai_item *it)
{
	struct bg_art_index_hdr *hd = img;
	struct rec_at r = { .rec = record_of(it->h, it->source) };
	struct bg_art_bucket *b;
	int ret;

	if (bg_ai_valid(img, len))
		return -EBADMSG;
	if (!item_ok(it))
		return -EINVAL;
	ret = walk(buckets_of(img), hd->nbuckets,
		   home_bucket(it->h, hd->nbuckets), find_rec, &r);
	if (ret < 0)
		return ret;
	if (!ret)
		return -ENOENT;
	/* the bucket's records stay the first n, in their order; the slot
	 * freed is zeroed so that the bytes depend on the records only. The
	 * overflow flags stay: a record placed past this bucket when it was
	 * full is still found behind it. */
	b = &buckets_of(img)[r.at];
	memmove(&b->rec[r.slot], &b->rec[r.slot + 1],
		(b->n - r.slot - 1) * sizeof(b->rec[0]));
	b->rec[--b->n] = 0;
	hd->records--;
	/* the prefix lengths and classes stay: another item may have them,
	 * and a bit too many costs a lookup, never a miss */
	return 0;
}

/* ---- Finding ------------------------------------------------------------- */

struct hits {
	struct bg_ai_hit *v;
	size_t n, cap;
};

/* What one probe looks for and how its hits read. */
struct probe {
	struct hits *h;
	uint64_t tag; /* record_of(h, 0) */
	int allow, name_kind;
	const char *entry, *parent;
	int err;
};

static int probe_bucket(const struct bg_art_bucket *b, uint32_t at,
			void *ctx)
{
	struct probe *p = ctx;
	uint32_t i;

	(void)at;
	for (i = 0; i < b->n; i++) {
		struct bg_ai_hit *x;

		if ((b->rec[i] & BG_ART_REC_TAG_MASK) != p->tag)
			continue;
		if (bg_grow(&p->h->v, &p->h->cap, p->h->n + 1, sizeof(*p->h->v), 8))
			return -ENOMEM;
		x = &p->h->v[p->h->n++];
		memset(x, 0, sizeof(*x));
		x->source = (uint32_t)(b->rec[i] >> BG_ART_REC_SOURCE_SHIFT);
		x->allow = p->allow;
		x->name_kind = p->name_kind;
		snprintf(x->entry, sizeof(x->entry), "%s", p->entry);
		snprintf(x->parent, sizeof(x->parent), "%s", p->parent);
	}
	return 0;
}

static int cmp_source(const void *x, const void *y)
{
	const struct bg_ai_hit *a = x, *b = y;

	return (a->source > b->source) - (a->source < b->source);
}

/* The hits of the key hashed to h, in the order of their lists (the
 * order records have in a bucket depends on the deltas applied). */
static int probe_key(const void *img, struct probe *p, uint64_t h)
{
	const struct bg_art_index_hdr *hd = img;
	size_t n0 = p->h->n;
	int ret;

	p->tag = record_of(h, 0);
	ret = walk(cbuckets_of(img), hd->nbuckets,
		   home_bucket(h, hd->nbuckets), probe_bucket, p);
	if (ret)
		return ret;
	if (p->h->n - n0 > 1)
		qsort(p->h->v + n0, p->h->n - n0, sizeof(*p->h->v), cmp_source);
	return 0;
}

static int has_class(const struct bg_art_index_hdr *hd, unsigned int cls)
{
	return (hd->classes >> cls) & 1;
}

static int has_plen(const struct bg_art_index_hdr *hd, int v6, unsigned int l)
{
	if (v6)
		return (hd->plens6[l / 64] >> (l % 64)) & 1;
	return (hd->plens4 >> l) & 1;
}

/* Every prefix length the index has that covers the address, longest
 * first, block then allow. */
static int find_addr(const void *img, struct hits *hs,
		     const struct bg_key4 *k4, const struct bg_key6 *k6)
{
	const struct bg_art_index_hdr *hd = img;
	char a[INET6_ADDRSTRLEN], entry[INET6_ADDRSTRLEN + 16];
	unsigned int bits = k6 ? 128 : 32, l, allow;
	int ret;

	for (l = bits + 1; l-- > 0;) {
		unsigned int cls[2];
		uint64_t h[2], s[2];

		if (!has_plen(hd, !!k6, l))
			continue;
		if (k6) {
			struct bg_key6 m;

			bg_key6_init(&m, k6->addr, (__u8)l);
			inet_ntop(AF_INET6, m.addr, a, sizeof(a));
			cls[0] = BG_AI_V6;
			cls[1] = BG_AI_ALLOW_V6;
			s[0] = class_seed(hd->seed, cls[0]);
			s[1] = class_seed(hd->seed, cls[1]);
			h[0] = bg_hash64(&m, sizeof(m), s[0]);
			h[1] = bg_hash64(&m, sizeof(m), s[1]);
		} else {
			struct bg_key4 m;

			bg_key4_init(&m, k4->addr, (__u8)l);
			inet_ntop(AF_INET, &m.addr, a, sizeof(a));
			cls[0] = BG_AI_V4;
			cls[1] = BG_AI_ALLOW_V4;
			s[0] = class_seed(hd->seed, cls[0]);
			s[1] = class_seed(hd->seed, cls[1]);
			h[0] = bg_hash64(&m, sizeof(m), s[0]);
			h[1] = bg_hash64(&m, sizeof(m), s[1]);
		}
		/* a whole address without its length, as lists write it */
		if (l == bits)
			snprintf(entry, sizeof(entry), "%s", a);
		else
			snprintf(entry, sizeof(entry), "%s/%u", a, l);
		for (allow = 0; allow < 2; allow++) {
			struct probe p = { .h = hs, .allow = (int)allow,
					   .entry = entry, .parent = "" };

			if (!has_class(hd, cls[allow]))
				continue;
			ret = probe_key(img, &p, h[allow]);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* The block and allow rules of kind naming p (parent "" or p). */
static int probe_name(const void *img, struct hits *hs, const char *p,
		      int kind, int as_parent)
{
	const struct bg_art_index_hdr *hd = img;
	size_t len = strlen(p);
	unsigned int allow;
	int ret;

	for (allow = 0; allow < 2; allow++) {
		unsigned int cls = allow ? BG_AI_ALLOW_NAME : BG_AI_NAME;
		struct probe pr = {
			.h = hs, .allow = (int)allow, .name_kind = kind,
			.entry = p, .parent = as_parent ? p : "",
		};

		if (!has_class(hd, cls))
			continue;
		ret = probe_key(img, &pr,
				hash_name(hd->seed, cls, kind, p, len));
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The rules the datapath's probes for the name q find (as
 * bg_names_find()): q itself as an exact or name-and-subdomains rule, then
 * each parent as a name-and-subdomains or subdomains-only rule, nearest
 * first. Parents of more than BG_DNS_SUFFIX_MAX labels are not probed:
 * the datapath never matches a subdomain rule that deep, so such a rule
 * is behind no verdict.
 */
static int find_name(const void *img, struct hits *hs, const char *q)
{
	unsigned int nlabels = 1, j;
	const char *p;
	int ret;

	for (p = q; *p; p++)
		nlabels += *p == '.';
	ret = probe_name(img, hs, q, BG_NAME_EXACT, 0);
	if (!ret)
		ret = probe_name(img, hs, q, BG_NAME_TREE, 0);
	/* p: the parent of j labels fewer */
	for (p = strchr(q, '.'), j = 1; p && !ret; p = strchr(p, '.'), j++) {
		p++;
		if (nlabels - j > BG_DNS_SUFFIX_MAX)
			continue;
		ret = probe_name(img, hs, p, BG_NAME_TREE, 1);
		if (!ret)
			ret = probe_name(img, hs, p, BG_NAME_SUBS, 1);
	}
	return ret;
}

int bg_ai_find(const void *img, size_t len, const char *arg,
	       struct bg_ai_hit **hits, size_t *n)
{
	char q[256]; /* bg_name_normalise(): 254 bytes at least */
	struct hits hs = { 0 };
	struct bg_key4 k4;
	struct bg_key6 k6;
	int kind, ret;

	*hits = NULL;
	*n = 0;
	if (bg_ai_valid(img, len))
		return -EBADMSG;
	if (!arg)
		return -EINVAL;
	/* an address when the project's parser takes it as one (an
	 * IPv4-mapped IPv6 address stays IPv6, as the datapath sees it), else
	 * a name */
	kind = bg_parse_addr(arg, &k4, &k6, NULL);
	if (!kind && bg_name_normalise(arg, strlen(arg), q, NULL))
		return -EINVAL;
	if (kind)
		ret = find_addr(img, &hs, kind == BG_KEY_IPV4 ? &k4 : NULL,
				kind == BG_KEY_IPV6 ? &k6 : NULL);
	else
		ret = find_name(img, &hs, q);
	if (ret) {
		free(hs.v);
		return ret;
	}
	*hits = hs.v;
	*n = hs.n;
	return 0;
}
