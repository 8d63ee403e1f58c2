// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Planning and building a filter (layout in bloomgate/abi.h): the
 * false-positive model and sizing, controlled prefix expansion, the exact
 * range tables, the name keys, the map layout, and the build into memory.
 * One concern in one file on purpose: the plan counts exactly the keys and
 * ranges the build writes, through the same static helpers (count_ranges,
 * allow_name_keys, the expansion targets), so the two cannot drift apart.
 * The lookups on a built filter are in user/core/probe.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <time.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

#include <stdlib.h>

#include "bloomgate/bloom.h"
#include "bloomgate/dns.h"
#include "core/grow.h"
#include "core/units.h"
#include "core/domains.h"
#include "core/filter.h"
#include "core/filter_priv.h"
#include "core/par.h"

/* P(d distinct positions | k draws from BG_BLOCK_BITS), by recurrence. */
static void distinct_dist(uint32_t k, double *pd /* [BG_K_MAX + 1] */)
{
	double next[BG_K_MAX + 1];
	uint32_t i, d;

	memset(pd, 0, sizeof(double) * (BG_K_MAX + 1));
	pd[0] = 1.0;
	for (i = 0; i < k; i++) {
		memset(next, 0, sizeof(next));
		for (d = 0; d <= i; d++) {
			double same = (double)d / BG_BLOCK_BITS;

			next[d] += pd[d] * same;
			next[d + 1] += pd[d] * (1.0 - same);
		}
		memcpy(pd, next, sizeof(next));
	}
}

/*
 * A non-member lands in a block holding j other keys, j ~ Poisson(n/nblocks).
 * Its k positions cover d distinct bits (P(d) from distinct_dist). The jk
 * bits of the other keys are independent uniform draws, so the d bits are
 * all set with probability, by inclusion-exclusion over the ones missed,
 *   A(d, jk) = sum_{i=0..d} (-1)^i C(d,i) (1 - i/512)^(jk).
 * This is exact for independent positions; using (E fill)^d instead ignores
 * the spread of a block's fill and measured ~15 % low at 0.1 %.
 */
double bg_filter_model_fpr(uint64_t n, uint32_t nblocks, uint32_t k)
{
	double x[BG_K_MAX + 1], step[BG_K_MAX + 1], pd[BG_K_MAX + 1];
	double binom[BG_K_MAX + 1][BG_K_MAX + 1];
	double lambda, pj, sum = 0.0, lo;
	uint64_t j, jmin, jmax;
	uint32_t d, i;

	if (!nblocks || !k || k > BG_K_MAX)
		return 1.0;
	if (!n)
		return 0.0;
	distinct_dist(k, pd);
	for (d = 0; d <= k; d++) {
		binom[d][0] = 1.0;
		for (i = 1; i <= d; i++)
			binom[d][i] = binom[d][i - 1] * (double)(d - i + 1) / i;
	}
	lambda = (double)n / nblocks;
	/* The Poisson terms from lambda - 12 sd on: exp(-lambda) alone
	 * underflows to 0 past lambda ~ 745 (a block of 1,000 keys at
	 * --fpr 0.5 was modelled at rate 0 and planned 70 blocks for 100k
	 * keys), so the first term is computed in logs. */
	lo = lambda - 12.0 * sqrt(lambda) - 30.0;
	jmin = lo > 0.0 ? (uint64_t)lo : 0;
	jmax = (uint64_t)(lambda + 12.0 * sqrt(lambda) + 30.0);
	pj = exp((double)jmin * log(lambda) - lambda - lgamma((double)jmin + 1.0));
	for (i = 0; i <= k; i++) {
		step[i] = pow(1.0 - (double)i / BG_BLOCK_BITS, (double)k);
		x[i] = pow(step[i], (double)jmin); /* (1 - i/512)^(jk) */
	}
	for (j = jmin; j <= jmax; j++) {
		double q = 0.0;

		for (d = 1; d <= k; d++) {
			double a = 0.0;

			for (i = 0; i <= d; i++)
				a += (i & 1 ? -1.0 : 1.0) * binom[d][i] * x[i];
			q += pd[d] * (a < 0.0 ? 0.0 : a);
		}
		sum += pj * q;
		pj *= lambda / (double)(j + 1);
		for (i = 0; i <= k; i++)
			x[i] *= step[i];
	}
	return sum;
}

/* The k (1..kmax) with the lowest modelled rate. */
static double best_k_upto(uint64_t n, uint32_t nblocks, uint32_t kmax,
			  uint32_t *kout)
{
	double best = 2.0;
	uint32_t k;

	for (k = 1; k <= kmax; k++) {
		double f = bg_filter_model_fpr(n, nblocks, k);

		if (f < best) {
			best = f;
			*kout = k;
		}
	}
	return best;
}

static double best_k(uint64_t n, uint32_t nblocks, uint32_t *kout)
{
	return best_k_upto(n, nblocks, BG_K_MAX, kout);
}

int bg_filter_size(uint64_t n, double target, struct bg_filter_params *p)
{
	uint64_t lo, hi, mid;
	uint32_t k = 1;

	/* Per probe, the plan may ask for target / (1 + BG_DNS_SUFFIX_MAX):
	 * a query makes that many probes, more than an address's
	 * BG_PROBES_MAX. */
	_Static_assert(1 + BG_DNS_SUFFIX_MAX >= BG_PROBES_MAX, "probe bound");
	if (!(target >= BG_FPR_MIN / (1 + BG_DNS_SUFFIX_MAX) && target <= BG_FPR_MAX))
		return -EINVAL;
	p->n = n;
	p->target = target;
	if (!n) { /* nothing to probe: an empty Bloom part */
		p->nblocks = 0;
		p->k = 1;
		p->predicted = 0.0;
		p->bits_per_entry = 0.0;
		return 0;
	}
	/* Start from the classic optimum and widen until the model is met. */
	hi = (uint64_t)ceil(-(double)n * log(target) / (M_LN2 * M_LN2) /
			    BG_BLOCK_BITS);
	if (hi < 1)
		hi = 1;
	/* Checked before the first model call too: a hi past 32 bits would
	 * be truncated, and the model run with billions of keys a block. */
	if (hi >= UINT32_MAX / 4)
		return -E2BIG;
	while (best_k(n, (uint32_t)hi, &k) > target) {
		hi *= 2;
		if (hi >= UINT32_MAX / 4)
			return -E2BIG;
	}
	lo = hi / 4 ? hi / 4 : 1;
	if (best_k(n, (uint32_t)lo, &k) <= target)
		hi = lo;
	while (lo + 1 < hi) {
		mid = lo + (hi - lo) / 2;
		if (best_k(n, (uint32_t)mid, &k) <= target)
			hi = mid;
		else
			lo = mid;
	}
	p->nblocks = (uint32_t)hi;
	p->predicted = best_k(n, p->nblocks, &k);
	p->k = k;
	p->bits_per_entry = (double)p->nblocks * BG_BLOCK_BITS / (double)n;
	return 0;
}

/* ---- Controlled prefix expansion ----------------------------------------
 *
 * Every probed length costs a probe on every packet, so a list with many
 * distinct prefix lengths is rewritten to at most BG_PROBES_MAX of them:
 * a prefix of length l becomes the 2^(t-l) prefixes of the next chosen
 * length t >= l (Srinivasan and Varghese's controlled prefix expansion, as
 * Dharmapurikar et al. use it with Bloom filters). The chosen lengths are
 * a subset of the lengths present (a target that is not present can always
 * move down to the longest length it serves, for less), always including
 * the longest, and minimise the number of keys by dynamic programming.
 */
#define CPE_INF ((double)1e300)

/* Chooses targets among lengths lo..hi with count[l] prefixes each;
 * expansion of one prefix limited to 2^maxbits. Returns the key count
 * (CPE_INF when impossible) and the targets, longest first. */
static double cpe_plan(const uint64_t *count, int lo, int hi, int maxbits,
		       uint8_t *targets, uint8_t *ntargets)
{
	int len[129], m = 0, i, j, q, prev;
	double f[BG_PROBES_MAX + 1][129];
	int from[BG_PROBES_MAX + 1][129];
	double best = CPE_INF;
	int bestj = 0;

	*ntargets = 0;
	for (i = lo; i <= hi; i++)
		if (count[i])
			len[m++] = i;
	if (!m)
		return 0.0;
	for (j = 0; j <= BG_PROBES_MAX; j++)
		for (i = 0; i < m; i++)
			f[j][i] = CPE_INF;
	/* cost(a, b]: the lengths after index a up to b, expanded to len[b] */
#define SEG_COST(a, b, out)                                                   \
	do {                                                                   \
		double c_ = 0.0;                                               \
		for (q = (a) + 1; q <= (b) && c_ < CPE_INF; q++) {             \
			int d_ = len[b] - len[q];                              \
			c_ = d_ > maxbits ? CPE_INF :                          \
					    c_ + (double)count[len[q]] * ldexp(1.0, d_); \
		}                                                              \
		(out) = c_;                                                    \
	} while (0)
	for (i = 0; i < m; i++)
		SEG_COST(-1, i, f[1][i]);
	for (j = 2; j <= BG_PROBES_MAX; j++) {
		for (i = 0; i < m; i++) {
			for (prev = 0; prev < i; prev++) {
				double c;

				if (f[j - 1][prev] >= CPE_INF)
					continue;
				SEG_COST(prev, i, c);
				if (f[j - 1][prev] + c < f[j][i]) {
					f[j][i] = f[j - 1][prev] + c;
					from[j][i] = prev;
				}
			}
		}
	}
#undef SEG_COST
	for (j = 1; j <= BG_PROBES_MAX; j++) {
		if (f[j][m - 1] < best) {
			best = f[j][m - 1];
			bestj = j;
		}
	}
	if (best >= CPE_INF)
		return CPE_INF;
	/* Every probed length costs a probe on every packet; a key costs
	 * ~2 bytes once. Take the fewest lengths whose key count stays within
	 * BG_CPE_KEY_SLACK times the minimum (FireHOL level 1: 3 lookups
	 * instead of 5 for about twice the keys of a 64 KiB filter). */
	for (j = 1; j < bestj; j++) {
		if (f[j][m - 1] <= best * BG_CPE_KEY_SLACK) {
			best = f[j][m - 1];
			bestj = j;
			break;
		}
	}
	/* Walk back: targets come out longest first. */
	for (i = m - 1, j = bestj; j >= 1; j--) {
		targets[(*ntargets)++] = (uint8_t)len[i];
		if (j > 1)
			i = from[j][i];
	}
	return best;
}

/* Target length for a prefix of length l: the shortest chosen t >= l. */
static int cpe_target(const uint8_t *t, int n, int l)
{
	int i, best = -1;

	for (i = 0; i < n; i++)
		if (t[i] >= l && (best < 0 || t[i] < best))
			best = t[i];
	return best;
}

/* Disjoint ranges from the prefixes of a list shorter than a length: the
 * allowlist's exact tables and the short IPv6 prefixes. One driver, the
 * family in a table: fill the ranges, sort them by start (bg_list_finish
 * order is by key bytes, i.e. plen first), merge overlaps and neighbours. */
struct range_fam {
	size_t size; /* of one range */
	size_t (*fill)(const struct bg_list *l, int below, void *r);
	int (*cmp)(const void *a, const void *b);
	size_t (*merge)(void *r, size_t n); /* in place; the count left */
	size_t (*count)(const struct bg_list *l); /* prefixes of the family */
};

static size_t fill4(const struct bg_list *l, int below, void *out)
{
	struct bg_range4 *r = out;
	size_t i, n = 0;

	for (i = 0; i < l->n4; i++) {
		__u32 a = __builtin_bswap32(l->v4[i].addr);
		__u8 pl = l->v4[i].plen;

		if (pl >= below)
			continue;
		r[n].start = a;
		r[n].end = a | (pl >= 32 ? 0 : (pl ? 0xffffffffU >> pl : 0xffffffffU));
		n++;
	}
	return n;
}

static int cmp_range4(const void *a, const void *b)
{
	const struct bg_range4 *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static size_t merge4(void *out, size_t n)
{
	struct bg_range4 *r = out;
	size_t i, w = 0;

	for (i = 0; i < n; i++) {
		if (w && (r[w - 1].end == 0xffffffffU ||
			  r[i].start <= r[w - 1].end + 1)) {
			if (r[i].end > r[w - 1].end)
				r[w - 1].end = r[i].end;
			continue;
		}
		r[w++] = r[i];
	}
	return w;
}

static void prefix6_range(const struct bg_key6 *k, struct bg_range6 *r)
{
	__u64 hi = bg_be64_to_host(k->addr), lo = bg_be64_to_host(k->addr + 8);
	int pl = k->plen;
	__u64 mhi = pl >= 64 ? 0 : (pl ? ~0ULL >> pl : ~0ULL);
	__u64 mlo = pl >= 128 ? 0 : (pl > 64 ? ~0ULL >> (pl - 64) : ~0ULL);

	r->start_hi = hi;
	r->start_lo = lo;
	r->end_hi = hi | mhi;
	r->end_lo = lo | mlo;
}

static size_t fill6(const struct bg_list *l, int below, void *out)
{
	struct bg_range6 *r = out;
	size_t i, n = 0;

	for (i = 0; i < l->n6; i++)
		if (l->v6[i].plen < below)
			prefix6_range(&l->v6[i], &r[n++]);
	return n;
}

static int cmp_range6(const void *a, const void *b)
{
	const struct bg_range6 *x = a, *y = b;

	if (x->start_hi != y->start_hi)
		return x->start_hi < y->start_hi ? -1 : 1;
	return x->start_lo < y->start_lo ? -1 : x->start_lo > y->start_lo;
}

static size_t merge6(void *out, size_t n)
{
	struct bg_range6 *r = out;
	size_t i, w = 0;

	for (i = 0; i < n; i++) {
		if (w) {
			struct bg_range6 *p = &r[w - 1];
			int full = p->end_hi == ~0ULL && p->end_lo == ~0ULL;
			__u64 nhi = p->end_lo == ~0ULL ? p->end_hi + 1 : p->end_hi;
			__u64 nlo = p->end_lo + 1; /* end + 1 */

			if (full || !bg_u128_gt(r[i].start_hi, r[i].start_lo, nhi, nlo)) {
				if (bg_u128_gt(r[i].end_hi, r[i].end_lo, p->end_hi, p->end_lo)) {
					p->end_hi = r[i].end_hi;
					p->end_lo = r[i].end_lo;
				}
				continue;
			}
		}
		r[w++] = r[i];
	}
	return w;
}

static size_t count4(const struct bg_list *l)
{
	return l->n4;
}

static size_t count6(const struct bg_list *l)
{
	return l->n6;
}

static const struct range_fam fam4 = { sizeof(struct bg_range4), fill4,
				       cmp_range4, merge4, count4 };
static const struct range_fam fam6 = { sizeof(struct bg_range6), fill6,
				       cmp_range6, merge6, count6 };

/* The ranges of every prefix of the family shorter than below (33 / 129:
 * all), merged; returns the count. With out == NULL only counts (still
 * exact); UINT32_MAX when out of memory. */
static uint32_t count_ranges(const struct range_fam *f, const struct bg_list *l,
			     int below, void *out)
{
	size_t n = f->count(l), w;
	void *r = malloc((n ? n : 1) * f->size);

	if (!r)
		return UINT32_MAX;
	n = f->fill(l, below, r);
	qsort(r, n, f->size, f->cmp);
	w = f->merge(r, n);
	if (out)
		memcpy(out, r, w * f->size);
	free(r);
	return (uint32_t)w;
}

static uint32_t count_ranges4(const struct bg_list *l, int below,
			      struct bg_range4 *out)
{
	return count_ranges(&fam4, l, below, out);
}

static uint32_t count_ranges6(const struct bg_list *l, int below,
			      struct bg_range6 *out)
{
	return count_ranges(&fam6, l, below, out);
}

static uint32_t elems(uint32_t n, uint32_t per)
{
	return (n + per - 1) / per;
}

/* ---- Domain names --------------------------------------------------------
 * An exact rule is one key (EXACT of the name), a subdomains rule one
 * (SUBS), a name-and-subdomains rule both. The datapath probes SUBS keys
 * only for suffixes of at most BG_DNS_SUFFIX_MAX labels, so a longer
 * subdomain rule could never match: it is counted and left out. Every SUBS
 * key inserted sets the bit of its name's label count in subs_depths: a
 * query probes only those depths.
 */
static int name_labels(const char *s)
{
	int n = 1;

	for (; *s; s++)
		n += *s == '.';
	return n;
}

static void count_name_keys(const struct bg_names *names,
			    struct bg_filter_params *p)
{
	size_t i;

	for (i = 0; names && i < names->n; i++) {
		const struct bg_name *e = &names->v[i];
		int deep = name_labels(e->name) > BG_DNS_SUFFIX_MAX;

		if (e->allow)
			continue;
		if (e->kind != BG_NAME_SUBS)
			p->name_keys++;
		if (e->kind != BG_NAME_EXACT) {
			if (deep) {
				p->names_too_deep++;
			} else {
				p->name_keys++;
				p->subs_depths |= (uint16_t)(1U << name_labels(e->name));
			}
		}
	}
}

/*
 * Allowed name keys: the same keys as a block rule of the same kind, kept
 * exactly (sorted 64-bit hashes) instead of in the Bloom part, for the
 * entries marked allow (@@||name^, or an --allow list's). Writes the keys
 * to out (when not NULL) and returns how many, duplicates included;
 * too-deep subdomain rules are counted in *deep (when not NULL) and left
 * out.
 */
static size_t allow_name_keys(const struct bg_names *names, uint64_t seed,
			      __u64 *out, uint64_t *deep)
{
	__u64 suf[BG_DNS_LABELS_MAX + 1], exact;
	size_t i, w = 0;
	int n;

	for (i = 0; names && i < names->n; i++) {
		const struct bg_name *e = &names->v[i];

		if (!e->allow)
			continue;
		if (bg_name_hashes(e->name, seed, &exact, suf, &n))
			continue;
		if (e->kind != BG_NAME_SUBS) {
			if (out)
				out[w] = bg_name_key_hash(BG_KEY_NAME_EXACT, exact, seed);
			w++;
		}
		if (e->kind != BG_NAME_EXACT) {
			if (n > BG_DNS_SUFFIX_MAX) {
				if (deep)
					(*deep)++;
				continue;
			}
			if (out)
				out[w] = bg_name_key_hash(BG_KEY_NAME_SUBS, suf[0], seed);
			w++;
		}
	}
	return w;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* Writes the sorted distinct allowed name keys to out (room for the
 * planned p->allown_n); returns how many. */
static uint32_t build_allow_names(__u64 *out, const struct bg_filter_params *p,
				  uint64_t seed, const struct bg_names *names)
{
	size_t n = 0, i, w = 0;

	if (!p->allown_n)
		return 0;
	n = allow_name_keys(names, seed, out, NULL);
	qsort(out, n, sizeof(*out), cmp_u64);
	for (i = 0; i < n; i++)
		if (!w || out[w - 1] != out[i])
			out[w++] = out[i];
	memset(out + w, 0, (n - w) * sizeof(*out));
	return (uint32_t)w;
}

/* The Bloom probes a lookup makes at most: the false-positive target is
 * per address or query, and each probe is a chance of a false positive. */
static int plan_probes(const struct bg_filter_params *p)
{
	/* An address not listed is probed at up to max(n4, n6) lengths. */
	int probes = p->n4 > p->n6 ? p->n4 : p->n6;

	/* A query is probed as its full name and its parent suffixes at the
	 * depths that have a subdomain rule (subs_depths): at most
	 * 1 + BG_DNS_SUFFIX_MAX probes. */
	if (p->name_keys && probes < 1 + __builtin_popcount(p->subs_depths))
		probes = 1 + __builtin_popcount(p->subs_depths);
	return probes ? probes : 1;
}

/* ---- The exact stage (bloomgate/lookup.h) ---------------------------------
 * Every Bloom key's 32-bit fingerprint in one of its two buckets of
 * BG_FP_PER_BUCKET: a two-choice bucketed cuckoo table, planned at
 * BG_FP_LOAD keys a slot (4 / 0.9 = 4.4 bytes a key). Two choices of 16
 * slots place every key up to loads near 0.98 (Dietzfelbinger and
 * Weidling); at 0.9 a random walk of a few kicks finds room for the rare
 * key whose buckets are both full. A key goes to its first bucket whenever
 * that has room, so a listed key is usually confirmed with one cache line.
 */
#define BG_FP_LOAD 0.9

uint32_t bg_filter_fp_buckets(uint64_t keys)
{
	double nb = ceil((double)keys / (BG_FP_PER_BUCKET * BG_FP_LOAD));

	return keys ? (nb < UINT32_MAX / 2 ? (uint32_t)nb : UINT32_MAX / 2) : 0;
}

/* The stage's predicted rate: a Bloom positive of a key not listed is let
 * through when one of the fingerprints held in its two buckets (2 *
 * BG_FP_PER_BUCKET * load on average) equals its own, 2^-32 each. */
static void plan_stage(struct bg_filter_params *p, int probes)
{
	double per_probe = p->predicted;

	p->fp_load = p->fp_nbuckets ?
			     (double)p->n / ((double)p->fp_nbuckets * BG_FP_PER_BUCKET) :
			     0.0;
	if (p->fp_nbuckets)
		per_probe *= 2.0 * BG_FP_PER_BUCKET * p->fp_load * ldexp(1.0, -32);
	p->predicted_confirmed = 1.0 - pow(1.0 - per_probe, probes);
}

/* The map layout (bloomgate/abi.h) from the part sizes and nblocks. */
static void plan_layout(struct bg_filter_params *p)
{
	p->bloom_off = 1 + (p->short4 ? BG_SHORT4_ELEMS : 0);
	p->fp_off = p->bloom_off + p->nblocks;
	p->allow4_off = p->fp_off + p->fp_nbuckets;
	p->allow6_off = p->allow4_off + elems(p->allow4_n, BG_RANGE4_PER_ELEM);
	p->short6_off = p->allow6_off + elems(p->allow6_n, BG_RANGE6_PER_ELEM);
	p->allown_off = p->short6_off + elems(p->short6_n, BG_RANGE6_PER_ELEM);
	p->nelems = p->allown_off + elems(p->allown_n, BG_NAMEKEY_PER_ELEM);
	p->bytes = (size_t)p->nelems * BG_FILTER_VALUE_SIZE;
}

/* The keys of each prefix length, counted on every CPU for a big list
 * (a read of every key: a quarter of a second at 100M on one). */
struct plen_count {
	const struct bg_list *l;
	unsigned int nt;
	uint64_t c4[BG_PARSE_WORKERS_MAX][33], c6[BG_PARSE_WORKERS_MAX][129];
};

static void job_plen_count(void *ctx, unsigned int t)
{
	struct plen_count *pc = ctx;
	const struct bg_list *l = pc->l;
	size_t i, a = l->n4 * t / pc->nt, b = l->n4 * (t + 1) / pc->nt;

	for (i = a; i < b; i++)
		pc->c4[t][l->v4[i].plen]++;
	for (i = l->n6 * t / pc->nt, b = l->n6 * (t + 1) / pc->nt; i < b; i++)
		pc->c6[t][l->v6[i].plen]++;
}

static int count_plens(const struct bg_list *l, uint64_t c4[33], uint64_t c6[129])
{
	struct plen_count *pc = calloc(1, sizeof(*pc));
	unsigned int t;
	size_t i;

	if (!pc)
		return -ENOMEM;
	pc->l = l;
	pc->nt = l->n4 + l->n6 >= (1u << 16) ? bg_par_threads(0) : 1;
	bg_par_run(pc->nt, job_plen_count, pc);
	for (t = 0; t < pc->nt; t++) {
		for (i = 0; i < 33; i++)
			c4[i] += pc->c4[t][i];
		for (i = 0; i < 129; i++)
			c6[i] += pc->c6[t][i];
	}
	free(pc);
	return 0;
}

int bg_filter_plan_confirm(const struct bg_blocklist *bl, double target,
			   int confirm, struct bg_filter_params *p)
{
	const struct bg_list *block = &bl->block, *allow = &bl->allow;
	uint64_t c4[33] = { 0 }, c6[129] = { 0 };
	double keys4 = 0.0, keys6 = CPE_INF;
	size_t i;
	int below, err, probes;

	memset(p, 0, sizeof(*p));
	if (!(target >= BG_FPR_MIN && target <= BG_FPR_MAX))
		return -EINVAL;
	if (count_plens(block, c4, c6))
		return -ENOMEM;
	p->prefixes4 = block->n4;
	p->prefixes6 = block->n6;

	/* IPv4: /0../16 in the exact bitmap, /17../32 expanded. Gaps are at
	 * most 15 bits, so a plan always exists. */
	for (i = 0; i <= BG_SHORT4_MAXLEN; i++)
		p->short4_prefixes += c4[i];
	p->short4 = p->short4_prefixes > 0;
	keys4 = cpe_plan(c4, BG_SHORT4_MAXLEN + 1, 32, 32, p->len4, &p->n4);

	/* IPv6: expand as much as possible with at most 2^BG_CPE_MAX_BITS keys
	 * a prefix; the shortest lengths that cannot be go to exact ranges. */
	for (below = 0; below <= 129; below++) {
		keys6 = cpe_plan(c6, below, 128, BG_CPE_MAX_BITS, p->len6, &p->n6);
		if (keys6 < CPE_INF)
			break;
		if (below < 129 && c6[below] == 0)
			continue;
	}
	p->short6_below = (uint8_t)below;
	for (i = 0; i < (size_t)below && i <= 128; i++)
		p->short6_prefixes += c6[i];
	if (keys4 + keys6 > (double)UINT32_MAX)
		return -E2BIG;
	p->keys4 = (uint64_t)keys4;
	p->keys6 = (uint64_t)keys6;
	count_name_keys(&bl->names, p);
	p->allown_n = (uint32_t)allow_name_keys(&bl->names, 0, NULL,
						&p->names_too_deep);
	p->short6_n = count_ranges6(block, below, NULL);
	p->allow4_n = count_ranges4(allow, 33, NULL);
	p->allow6_n = count_ranges6(allow, 129, NULL);
	if (p->short6_n == UINT32_MAX || p->allow4_n == UINT32_MAX ||
	    p->allow6_n == UINT32_MAX)
		return -ENOMEM;
	if (p->short6_n >> BG_RANGE_STEPS || p->allow4_n >> BG_RANGE_STEPS ||
	    p->allow6_n >> BG_RANGE_STEPS || p->allown_n >> BG_RANGE_STEPS)
		return -E2BIG;

	probes = plan_probes(p);
	err = bg_filter_size(p->keys4 + p->keys6 + p->name_keys,
			     probes > 1 ? target / probes : target, p);
	if (err)
		return err;
	p->target = target;
	p->predicted_addr = 1.0 - pow(1.0 - p->predicted, probes);
	p->confirm = confirm;
	p->fp_nbuckets = confirm ? bg_filter_fp_buckets(p->n) : 0;
	plan_stage(p, probes);
	plan_layout(p);
	return 0;
}

int bg_filter_plan(const struct bg_blocklist *bl, double target,
		   struct bg_filter_params *p)
{
	return bg_filter_plan_confirm(bl, target, 1, p);
}

__u32 bg_filter_capacity_elems(uint64_t keys)
{
	struct bg_filter_params p;

	if (bg_filter_size(keys, BG_FPR_DEFAULT_CONFIRM, &p))
		return 0;
	return 1 + BG_SHORT4_ELEMS + p.nblocks + bg_filter_fp_buckets(keys);
}

uint64_t bg_filter_capacity_keys(__u32 elems)
{
	/* bg_filter_capacity_elems() grows with keys and every key takes
	 * more than one bit: a binary search in [0, 512 * elems]. */
	uint64_t lo = 0, hi = (uint64_t)elems * BG_BLOCK_BITS + 1, mid;
	__u32 c;

	if (elems < 1 + BG_SHORT4_ELEMS)
		return 0;
	while (lo + 1 < hi) { /* elems(lo) <= elems < elems(hi) */
		mid = lo + (hi - lo) / 2;
		c = bg_filter_capacity_elems(mid);
		if (c && c <= elems)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int bg_filter_fit(struct bg_filter_params *p, __u32 capacity)
{
	uint32_t k = p->k;

	if (p->nelems > capacity)
		return -ENOSPC;
	/* The tables follow the Bloom blocks: more blocks move them up, and
	 * the map ends where the last table does. Any block count works for
	 * the lookups (bg_bloom_block scales the hash), so all the slack
	 * goes to the Bloom part, where it lowers the false-positive rate.
	 * k stays at most the plan's: each bit is work on every packet, and
	 * a filter loaded with --confirm off into a capacity planned with
	 * the exact stage would otherwise take k = 16 (measured 18 % slower
	 * on a flood than k = 9). */
	p->nblocks += capacity - p->nelems;
	if (p->n) {
		p->predicted = best_k_upto(p->n, p->nblocks, p->k, &k);
		p->k = k;
		p->bits_per_entry = (double)p->nblocks * BG_BLOCK_BITS / (double)p->n;
	}
	p->predicted_addr = 1.0 - pow(1.0 - p->predicted, plan_probes(p));
	plan_stage(p, plan_probes(p));
	plan_layout(p);
	p->capacity = capacity;
	return 0;
}

__u32 bg_filter_used(const struct bg_filter_params *p)
{
	return p->allown_off + elems(p->allown_n, BG_NAMEKEY_PER_ELEM);
}

int bg_filter_pad(struct bg_filter_params *p, __u32 capacity)
{
	if (p->nelems > capacity)
		return -ENOSPC;
	/* the tables where the plan put them, zeros after the last: the
	 * lookups touch what they would in a map of the plan's size */
	p->nelems = p->capacity = capacity;
	p->bytes = (size_t)capacity * BG_FILTER_VALUE_SIZE;
	return 0;
}

/* ---- The build -----------------------------------------------------------
 *
 * Hashing a key is cheap; what cost a 100M-key build 33 s was where the
 * hashes went: one random Bloom block and two random buckets a key, each a
 * cache and TLB miss in a map of hundreds of MiB. So the keys are hashed in
 * passes, each key once, and a pass's hashes are partitioned (by the Bloom
 * block, then by the first bucket, each a scatter into a second buffer of
 * the pass's size: an in-place cycle waits on every load) before they are
 * written: the fill walks the map in address order, one cache line after
 * the other.
 *
 * A pass is a fixed range of items (the blocked IPv4 and IPv6 prefixes,
 * then the names, in the blocklist's order) holding at most
 * BG_BUILD_PASS_KEYS Bloom keys: its hashes (twice: the scatter's two
 * buffers) are the memory the build takes besides the stage's slot array,
 * and which keys a pass holds depends on
 * the lists only, never on the thread count. Within a pass every thread
 * hashes a slice of the items and partitions its slice; then the Bloom
 * bits are set by block range, each thread its own blocks (the bits are
 * or-ed: the same in any order). The exact stage is a random walk whose
 * result depends on the order of insertion, so its keys go in in a
 * canonical order: pass by pass, and within a pass in ascending h2, i.e.
 * by first bucket (the threads' sorted slices merged): first every key into
 * its first bucket while that has room, each thread its own buckets, then
 * on one thread the rest.
 * The filter built is then the same bit for bit with any number of
 * threads (tests/unit/test_build.c).
 */
#define BG_BUILD_PASS_KEYS (8u << 20)
#define BG_BUILD_CHK 4096 /* items between two checkpoints of a pass */
#define BG_BUILD_BINS 256 /* partitions of a slice */

/* Where the Bloom keys come from: item i < n4 the blocked IPv4 prefix i,
 * then the IPv6 ones, then the names. */
struct keysrc {
	const struct bg_filter_params *p;
	const struct bg_list *block;
	const struct bg_names *names;
	uint64_t seed;
	size_t n4, n6, nn, n;
	/* per prefix length: Bloom keys of one prefix, and their length */
	uint32_t cnt4[33], cnt6[129];
	uint8_t t4[33], t6[129];
};

static void keysrc_init(struct keysrc *s, const struct bg_filter_params *p,
			uint64_t seed, const struct bg_blocklist *bl)
{
	int l, t;

	memset(s, 0, sizeof(*s));
	s->p = p;
	s->block = &bl->block;
	s->names = &bl->names;
	s->seed = seed;
	s->n4 = bl->block.n4;
	s->n6 = bl->block.n6;
	s->nn = bl->names.n;
	s->n = s->n4 + s->n6 + s->nn;
	/* /0../16 are in the bitmap; IPv6 below short6_below in the ranges */
	for (l = BG_SHORT4_MAXLEN + 1; l <= 32; l++) {
		t = cpe_target(p->len4, p->n4, l);
		if (t >= l) {
			s->t4[l] = (uint8_t)t;
			s->cnt4[l] = 1U << (t - l);
		}
	}
	for (l = p->short6_below; l <= 128; l++) {
		t = cpe_target(p->len6, p->n6, l);
		/* lengths the list has expand by at most 2^BG_CPE_MAX_BITS;
		 * the others are never asked for */
		if (t >= l && t - l <= BG_CPE_MAX_BITS) {
			s->t6[l] = (uint8_t)t;
			s->cnt6[l] = 1U << (t - l);
		}
	}
}

/* The Bloom keys of a name (block rules only; a subdomain rule of more
 * than BG_DNS_SUFFIX_MAX labels is never probed: left out), into out when
 * not NULL; how many. *depth: the subs_depths bit of its SUBS key. */
static uint32_t name_hashes(const struct keysrc *s, const struct bg_name *e,
			    uint64_t *out, __u16 *depth)
{
	__u64 suf[BG_DNS_LABELS_MAX + 1], exact;
	uint32_t w = 0;
	int n;

	*depth = 0;
	if (e->allow || bg_name_hashes(e->name, s->seed, &exact, suf, &n))
		return 0;
	if (e->kind != BG_NAME_SUBS) {
		if (out)
			out[w] = bg_name_key_hash(BG_KEY_NAME_EXACT, exact, s->seed);
		w++;
	}
	if (e->kind != BG_NAME_EXACT && n <= BG_DNS_SUFFIX_MAX) {
		if (out)
			out[w] = bg_name_key_hash(BG_KEY_NAME_SUBS, suf[0], s->seed);
		w++;
		*depth = (__u16)(1U << n);
	}
	return w;
}

/* Item i's Bloom keys (expanded: a prefix becomes the prefixes of its
 * probed length) hashed into out; how many. */
static uint32_t item_hashes(const struct keysrc *s, size_t i, uint64_t *out)
{
	uint32_t j, cnt;
	__u16 depth;
	int t, pl;

	if (i < s->n4) {
		const struct bg_key4 *k = &s->block->v4[i];
		__u32 a = __builtin_bswap32(k->addr);

		cnt = s->cnt4[k->plen];
		t = s->t4[k->plen];
		for (j = 0; j < cnt; j++) {
			struct bg_key4 key;
			__u32 e = a | (t == 32 ? j : j << (32 - t));

			bg_key4_init(&key, __builtin_bswap32(e), (__u8)t);
			out[j] = bg_key4_hash(&key, s->seed);
		}
		return cnt;
	}
	i -= s->n4;
	if (i < s->n6) {
		const struct bg_key6 *k = &s->block->v6[i];

		pl = k->plen;
		cnt = s->cnt6[pl];
		t = s->t6[pl];
		for (j = 0; j < cnt; j++) {
			struct bg_key6 key = *k;
			int bit, b;

			/* write j into address bits [pl, t) */
			for (b = 0; b < t - pl; b++) {
				bit = t - 1 - b;
				if ((j >> b) & 1)
					key.addr[bit / 8] |= (__u8)(0x80 >> (bit % 8));
			}
			key.plen = (__u8)t;
			out[j] = bg_key6_hash(&key, s->seed);
		}
		return cnt;
	}
	return name_hashes(s, &s->names->v[i - s->n6], out, &depth);
}

/* The bits of an IPv4 prefix of /16 or shorter in the /16 bitmap (its
 * BG_SHORT4_ELEMS elements): one bit per /16 the prefix covers. */
static void short4_set(struct bg_block *bitmap, const struct bg_key4 *k)
{
	__u32 first = __builtin_bswap32(k->addr) >> 16;
	__u32 n16 = 1U << (16 - k->plen), j;

	for (j = 0; j < n16; j++) {
		__u32 b = first + j;

		bitmap[b / BG_BLOCK_BITS].w[(b % BG_BLOCK_BITS) / 64] |= 1ULL << (b % 64);
	}
}

/* Item i's Bloom key count, without hashing (names: hashed, and their
 * SUBS depth or-ed into *depths); an IPv4 prefix of /16 or shorter set in
 * the /16 bitmap (elem: the map; NULL: not set). */
static uint32_t item_count(const struct keysrc *s, size_t i, __u16 *depths,
			   struct bg_block *elem)
{
	__u16 depth;
	uint32_t k;

	if (i < s->n4) {
		const struct bg_key4 *k = &s->block->v4[i];

		if (elem && k->plen <= BG_SHORT4_MAXLEN)
			short4_set(elem + 1, k);
		return s->cnt4[k->plen];
	}
	if (i - s->n4 < s->n6)
		return s->cnt6[s->block->v6[i - s->n4].plen];
	i -= s->n4 + s->n6;
	k = name_hashes(s, &s->names->v[i], NULL, &depth);
	*depths |= depth;
	return k;
}

/* One pass: items [chk_item[0], chk_item[nchk]), their keys hashed to
 * h[chk_off[c]..] checkpoint by checkpoint. */
struct pass {
	size_t nchk;
	size_t *chk_item, *chk_off; /* nchk + 1 each */
	size_t nkeys;
};

/* The next pass from item *at on (advanced past it). */
static void pass_next(const struct keysrc *s, size_t *at, struct pass *ps,
		      size_t pass_keys, __u16 *depths, struct bg_block *elem)
{
	size_t i = *at, keys = 0, c = 0;

	while (i < s->n) {
		uint32_t k;

		if ((i - *at) % BG_BUILD_CHK == 0) {
			ps->chk_item[c] = i;
			ps->chk_off[c++] = keys;
		}
		k = item_count(s, i, depths, elem);
		i++;
		keys += k;
		/* the key that fills it ends the pass: at most
		 * pass_keys plus one prefix's expansion */
		if (keys >= pass_keys)
			break;
	}
	ps->chk_item[c] = i;
	ps->chk_off[c] = keys;
	ps->nchk = c;
	ps->nkeys = keys;
	*at = i;
}

/* The exact stage being built: fingerprints straight into the map's
 * buckets, and for every slot the other bucket its key may move to (4
 * bytes a slot: the walk needs nothing else). */
struct fp_build {
	struct bg_fp_bucket *bk;
	uint32_t *other;
	uint8_t *cnt;
	uint32_t nb;
	uint64_t rng;
	int failed;
};

static uint64_t fp_rand(struct fp_build *t) /* xorshift64 */
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return t->rng;
}

static inline void fp_put(struct fp_build *t, uint32_t b, __u32 f,
			  uint32_t other)
{
	uint32_t j = t->cnt[b]++;

	t->bk[b].fp[j] = f;
	t->other[(size_t)b * BG_FP_PER_BUCKET + j] = other;
}

/*
 * A key both of whose buckets are full (a listed key is confirmed with one
 * cache line when it sits in its first bucket, fp_pass() puts it there
 * when it can, else in its second): a random walk. A random slot of
 * either bucket is taken and its key moved to its other bucket, until one
 * has room.
 */
static void fp_walk(struct fp_build *t, uint64_t h2)
{
	uint32_t b1 = bg_fp_bucket1(h2, t->nb), b2 = bg_fp_bucket2(h2, t->nb);
	uint32_t b, other, j;
	__u32 f = bg_fp_of(h2);
	int i;

	if (fp_rand(t) & 1) {
		b = b1;
		other = b2;
	} else {
		b = b2;
		other = b1;
	}
	for (i = 0; i < BG_FP_KICKS; i++) {
		size_t s;
		__u32 vf;
		uint32_t vo;

		j = (uint32_t)(fp_rand(t) % BG_FP_PER_BUCKET);
		s = (size_t)b * BG_FP_PER_BUCKET + j;
		vf = t->bk[b].fp[j];
		vo = t->other[s];
		t->bk[b].fp[j] = f;
		t->other[s] = other;
		/* the key taken out goes to its other bucket, from which it
		 * could move back to b */
		f = vf;
		other = b;
		b = vo;
		if (t->cnt[b] < BG_FP_PER_BUCKET) {
			fp_put(t, b, f, other);
			return;
		}
	}
	t->failed = 1; /* f has no slot: the build is refused */
}

/* src[0, n) partitioned into dst[0, n) by digit, BG_BUILD_BINS bins in
 * the order they come (a radix sort's one pass); bins[d] .. bins[d + 1]
 * is bin d. */
enum { DIGIT_BLOCK, DIGIT_TOP };
static inline __attribute__((always_inline)) uint32_t
digit_of(uint64_t v, int how, uint32_t nblocks, int shift)
{
	if (how == DIGIT_TOP)
		return (uint32_t)(v >> 56);
	/* the bin of the Bloom block (a shift, not a division: twice a key):
	 * bins never share a block, so two threads filling two bins never
	 * write one cache line */
	return bg_bloom_block(v, nblocks) >> shift;
}

/* The shift that makes a block index a bin below BG_BUILD_BINS. */
static int block_shift(uint32_t nblocks)
{
	int s = 0;

	while (nblocks && ((nblocks - 1) >> s) >= BG_BUILD_BINS)
		s++;
	return s;
}

static inline __attribute__((always_inline)) void
partition(const uint64_t *src, uint64_t *dst, size_t n, int how,
	  uint32_t nblocks, size_t bins[BG_BUILD_BINS + 1])
{
	size_t next[BG_BUILD_BINS], i;
	int shift = block_shift(nblocks);
	uint32_t d;

	memset(bins, 0, sizeof(size_t) * (BG_BUILD_BINS + 1));
	for (i = 0; i < n; i++)
		bins[digit_of(src[i], how, nblocks, shift) + 1]++;
	for (d = 0; d < BG_BUILD_BINS; d++) {
		bins[d + 1] += bins[d];
		next[d] = bins[d];
	}
	for (i = 0; i < n; i++)
		dst[next[digit_of(src[i], how, nblocks, shift)]++] = src[i];
}

/* src[0, n) sorted ascending into v[0, n), with cnt (1 << BG_SORT_BITS
 * counters). The values of a bin share their top byte and are uniform
 * below it (hashes): one counting sort on the next log2(n) bits leaves
 * about one value a bucket, and an insertion sort finishes what is left
 * out of order (the values of one bucket). Four steps a value where a
 * radix sort of the seven bytes took fourteen. */
#define BG_SORT_BITS 16
static void insertion_sort(uint64_t *v, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++) {
		uint64_t x = v[i];
		size_t k = i;

		while (k && v[k - 1] > x) {
			v[k] = v[k - 1];
			k--;
		}
		v[k] = x;
	}
}

static void sort_bin(const uint64_t *src, uint64_t *v, size_t n, uint32_t *cnt)
{
	int bits, sh;
	uint32_t mask, sum = 0, t;
	size_t i;

	if (n < 32) {
		memcpy(v, src, n * sizeof(*v));
		insertion_sort(v, n);
		return;
	}
	bits = 64 - __builtin_clzll((unsigned long long)n);
	if (bits > BG_SORT_BITS)
		bits = BG_SORT_BITS;
	sh = 56 - bits;
	mask = (1U << bits) - 1;
	memset(cnt, 0, sizeof(*cnt) << bits);
	for (i = 0; i < n; i++)
		cnt[(src[i] >> sh) & mask]++;
	for (i = 0; i <= mask; i++) {
		t = cnt[i];
		cnt[i] = sum;
		sum += t;
	}
	for (i = 0; i < n; i++)
		v[cnt[(src[i] >> sh) & mask]++] = src[i];
	insertion_sort(v, n);
}

struct build {
	const struct keysrc *s;
	const struct bg_filter_params *p;
	struct bg_block *blocks;
	struct fp_build fp;
	struct pass ps;
	uint64_t *h; /* the pass's hashes */
	uint64_t *t; /* as many: where the partitions scatter them */
	unsigned int nt;
	/* per thread: its slice of h and the slice's bins */
	size_t lo[BG_PARSE_WORKERS_MAX + 1];
	size_t bins[BG_PARSE_WORKERS_MAX][BG_BUILD_BINS + 1];
	/* per thread: the keys of its buckets whose first bucket was full */
	struct {
		uint64_t *v;
		size_t n, cap;
	} left[BG_PARSE_WORKERS_MAX];
	/* per key of left (the threads' runs one after the other): its second
	 * bucket was full too (job_fp_second) */
	uint8_t *walk;
	size_t walk_cap;
	int nomem;
};

/* Thread t: hashes its checkpoints' items (into t), partitions them by
 * block (into h). */
static void job_hash(void *ctx, unsigned int t)
{
	struct build *bd = ctx;
	const struct pass *ps = &bd->ps;
	size_t c0 = ps->nchk * t / bd->nt, c1 = ps->nchk * (t + 1) / bd->nt;
	size_t c, i, w;

	w = ps->chk_off[c0];
	for (c = c0; c < c1; c++)
		for (i = ps->chk_item[c]; i < ps->chk_item[c + 1]; i++)
			w += item_hashes(bd->s, i, bd->t + w);
	bd->lo[t] = ps->chk_off[c0];
	if (t == bd->nt - 1)
		bd->lo[bd->nt] = ps->chk_off[ps->nchk];
	partition(bd->t + ps->chk_off[c0], bd->h + ps->chk_off[c0],
		  ps->chk_off[c1] - ps->chk_off[c0], DIGIT_BLOCK, bd->p->nblocks,
		  bd->bins[t]);
}

/* Thread t: the Bloom bits of its bins, from every slice. */
static void job_bloom(void *ctx, unsigned int t)
{
	struct build *bd = ctx;
	uint32_t d0 = BG_BUILD_BINS * t / bd->nt, d1 = BG_BUILD_BINS * (t + 1) / bd->nt;
	uint32_t nblocks = bd->p->nblocks, k = bd->p->k, d;
	unsigned int sl;
	size_t i;

	for (d = d0; d < d1; d++)
		for (sl = 0; sl < bd->nt; sl++) {
			const uint64_t *v = bd->h + bd->lo[sl];

			for (i = bd->bins[sl][d]; i < bd->bins[sl][d + 1]; i++)
				bg_bloom_set(&bd->blocks[bg_bloom_block(v[i], nblocks)],
					     v[i], k);
		}
}

/* Thread t: its slice's h made h2, partitioned by top byte (into t), each
 * bin sorted (back into h): the slice in ascending h2. */
static void job_h2(void *ctx, unsigned int t)
{
	struct build *bd = ctx;
	uint64_t *v = bd->h + bd->lo[t], *tmp = bd->t + bd->lo[t];
	size_t n = bd->lo[t + 1] - bd->lo[t], i;
	uint64_t seed = bd->s->seed;
	size_t *bins = bd->bins[t];
	uint32_t *cnt, d;

	for (i = 0; i < n; i++)
		v[i] = bg_fp_hash(v[i], seed);
	partition(v, tmp, n, DIGIT_TOP, 0, bins);
	cnt = malloc(sizeof(*cnt) << BG_SORT_BITS);
	if (!cnt) {
		bd->nomem = 1;
		return;
	}
	for (d = 0; d < BG_BUILD_BINS; d++)
		sort_bin(tmp + bins[d], v + bins[d], bins[d + 1] - bins[d], cnt);
	free(cnt);
}

/* The first index of v[lo, hi) (ascending) whose first bucket is >= b. */
static size_t lower_b1(const uint64_t *v, size_t lo, size_t hi, uint32_t b,
		       uint32_t nb)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bg_fp_bucket1(v[mid], nb) < b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Thread t, the first of the stage's two steps: the keys whose first
 * bucket is one of its run of buckets (nb * t / nt up to the next
 * thread's), in ascending order from every slice, each into its first
 * bucket while it has room, else kept for the second step. A bucket's
 * fill depends only on its own keys and their order, so the threads'
 * number changes nothing; a key listed twice (the same h2) comes in twice
 * in a row and is placed once.
 */
static void job_fp_first(void *ctx, unsigned int t)
{
	struct build *bd = ctx;
	struct fp_build *fb = &bd->fp;
	size_t pos[BG_PARSE_WORKERS_MAX], end[BG_PARSE_WORKERS_MAX];
	uint32_t nb = fb->nb, b0 = (uint32_t)((uint64_t)nb * t / bd->nt),
		 b1 = (uint32_t)((uint64_t)nb * (t + 1) / bd->nt);
	unsigned int sl, nt = bd->nt, best;
	uint64_t last = 0;
	int any = 0;

	bd->left[t].n = 0;
	for (sl = 0; sl < nt; sl++) {
		pos[sl] = lower_b1(bd->h, bd->lo[sl], bd->lo[sl + 1], b0, nb);
		end[sl] = t == nt - 1 ? bd->lo[sl + 1] :
					lower_b1(bd->h, pos[sl], bd->lo[sl + 1], b1, nb);
	}
	for (;;) {
		uint64_t x = 0;
		uint32_t b;

		best = nt;
		for (sl = 0; sl < nt; sl++)
			if (pos[sl] < end[sl] && (best == nt || bd->h[pos[sl]] < x)) {
				best = sl;
				x = bd->h[pos[sl]];
			}
		if (best == nt)
			break;
		pos[best]++;
		if (any && x == last)
			continue;
		any = 1;
		last = x;
		b = bg_fp_bucket1(x, nb);
		if (fb->cnt[b] < BG_FP_PER_BUCKET) {
			fp_put(fb, b, bg_fp_of(x), bg_fp_bucket2(x, nb));
			continue;
		}
		if (bg_grow(&bd->left[t].v, &bd->left[t].cap, bd->left[t].n + 1,
			    sizeof(*bd->left[t].v), 65536)) {
			bd->nomem = 1;
			return;
		}
		bd->left[t].v[bd->left[t].n++] = x;
	}
}

/*
 * Thread t, the second step: of the keys the first step left (the
 * threads' runs one after the other: ascending, whatever the number of
 * threads), those whose second bucket is one of its run of buckets, in
 * that order, each into its second bucket while it has room, else marked
 * for the walk. As in the first step, a bucket's fill depends only on its
 * own keys and their order.
 */
static void job_fp_second(void *ctx, unsigned int t)
{
	struct build *bd = ctx;
	struct fp_build *fb = &bd->fp;
	uint32_t nb = fb->nb, b0 = (uint32_t)((uint64_t)nb * t / bd->nt),
		 b1 = (uint32_t)((uint64_t)nb * (t + 1) / bd->nt);
	size_t i, at = 0;
	unsigned int sl;

	for (sl = 0; sl < bd->nt; sl++)
		for (i = 0; i < bd->left[sl].n; i++, at++) {
			uint64_t x = bd->left[sl].v[i];
			uint32_t b = bg_fp_bucket2(x, nb);

			if (b < b0 || b >= b1)
				continue; /* another thread's */
			bd->walk[at] = fb->cnt[b] >= BG_FP_PER_BUCKET;
			if (!bd->walk[at])
				fp_put(fb, b, bg_fp_of(x), bg_fp_bucket1(x, nb));
		}
}

/*
 * The pass's keys into the stage in three steps: every key into its first
 * bucket while it has room (job_fp_first), the rest into their second
 * bucket while it has room (job_fp_second), both on every thread; then on
 * one thread the keys both of whose buckets were full, in ascending order,
 * by the random walk (fp_walk()). Counts never go down (a walk moves a
 * key for a key), so a bucket found full stays full.
 */
#define FP_AHEAD 8

static void fp_pass(struct build *bd)
{
	unsigned int t;
	size_t i, n = 0;

	bg_par_run(bd->nt, job_fp_first, bd);
	if (bd->nomem)
		return;
	for (t = 0; t < bd->nt; t++)
		n += bd->left[t].n;
	if (n > bd->walk_cap) {
		uint8_t *w = realloc(bd->walk, n);

		if (!w) {
			bd->nomem = 1;
			return;
		}
		bd->walk = w;
		bd->walk_cap = n;
	}
	bg_par_run(bd->nt, job_fp_second, bd);
	/* the walks: the keys marked, in order, packed to the front of the
	 * walk marks' runs so that the buckets of the key FP_AHEAD walks on
	 * can be fetched while this one walks (a walk is a few misses in a
	 * stage of hundreds of MiB; its first two are known in advance) */
	for (t = 0, n = 0; t < bd->nt; t++) {
		size_t w = 0;

		for (i = 0; i < bd->left[t].n; i++, n++)
			if (bd->walk[n])
				bd->left[t].v[w++] = bd->left[t].v[i];
		for (i = 0; i < w && !bd->fp.failed; i++) {
			if (i + FP_AHEAD < w) {
				uint64_t x = bd->left[t].v[i + FP_AHEAD];
				uint32_t a1 = bg_fp_bucket1(x, bd->fp.nb),
					 a2 = bg_fp_bucket2(x, bd->fp.nb);

				__builtin_prefetch(&bd->fp.bk[a1], 1);
				__builtin_prefetch(&bd->fp.bk[a2], 1);
				__builtin_prefetch(&bd->fp.other[(size_t)a1 * BG_FP_PER_BUCKET], 1);
				__builtin_prefetch(&bd->fp.other[(size_t)a2 * BG_FP_PER_BUCKET], 1);
			}
			fp_walk(&bd->fp, bd->left[t].v[i]);
		}
	}
}

int bg_filter_build_ex(void *mem, const struct bg_filter_params *p,
		       uint64_t seed, const struct bg_blocklist *bl,
		       unsigned int threads, size_t pass_keys)
{
	const struct bg_list *block = &bl->block, *allow = &bl->allow;
	struct bg_filter_header *hdr = mem;
	struct bg_block *elem = mem;
	struct keysrc s;
	struct build *bd;
	size_t at = 0, nchk;
	__u16 depths = 0;
	int ret = 0;

	bd = calloc(1, sizeof(*bd));
	if (!bd)
		return -ENOMEM;
	keysrc_init(&s, p, seed, bl);
	bd->s = &s;
	bd->p = p;
	bd->blocks = elem + p->bloom_off;
	bd->nt = bg_par_threads(threads);
	nchk = s.n / BG_BUILD_CHK + 2;
	bd->ps.chk_item = malloc(nchk * sizeof(size_t));
	bd->ps.chk_off = malloc(nchk * sizeof(size_t));
	/* one pass's hashes, one prefix's expansion past the bound at most */
	if (!pass_keys)
		pass_keys = BG_BUILD_PASS_KEYS;
	bd->h = malloc((size_t)(p->n < pass_keys ? p->n : pass_keys) *
		       sizeof(uint64_t) + (sizeof(uint64_t) << 16));
	bd->t = malloc((size_t)(p->n < pass_keys ? p->n : pass_keys) *
		       sizeof(uint64_t) + (sizeof(uint64_t) << 16));
	if (p->fp_nbuckets) {
		bd->fp.nb = p->fp_nbuckets;
		bd->fp.rng = seed | 1;
		bd->fp.bk = (struct bg_fp_bucket *)(elem + p->fp_off);
		bd->fp.other = malloc((size_t)p->fp_nbuckets * BG_FP_PER_BUCKET *
				      sizeof(*bd->fp.other));
		bd->fp.cnt = calloc(p->fp_nbuckets, 1);
	}
	if (!bd->ps.chk_item || !bd->ps.chk_off || !bd->h || !bd->t ||
	    (p->fp_nbuckets && (!bd->fp.other || !bd->fp.cnt))) {
		ret = -ENOMEM;
		goto out;
	}

	hdr->magic = BG_FILTER_MAGIC;
	hdr->abi_version = BG_ABI_VERSION;
	hdr->layout = BG_LAYOUT_BLOCKED512;
	hdr->nblocks = p->nblocks;
	hdr->k = (__u8)p->k;
	hdr->flags = (p->short4 ? BG_FILTER_F_SHORT4 : 0) |
		     (p->name_keys ? BG_FILTER_F_NAMES : 0);
	hdr->n4 = p->n4;
	hdr->n6 = p->n6;
	memcpy(hdr->len4, p->len4, sizeof(hdr->len4));
	memcpy(hdr->len6, p->len6, sizeof(hdr->len6));
	hdr->seed = seed;
	hdr->entries = (__u32)p->n;
	hdr->fp_off = p->fp_off;
	hdr->fp_nbuckets = p->fp_nbuckets;
	hdr->allow4_off = p->allow4_off;
	hdr->allow4_n = p->allow4_n;
	hdr->allow6_n = p->allow6_n;
	hdr->short6_n = p->short6_n;

	while (at < s.n && !bd->nomem && !bd->fp.failed) {
		pass_next(&s, &at, &bd->ps, pass_keys, &depths, elem);
		if (!bd->ps.nkeys)
			continue;
		bg_par_run(bd->nt, job_hash, bd);
		if (p->nblocks)
			bg_par_run(bd->nt, job_bloom, bd);
		if (!p->fp_nbuckets)
			continue;
		bg_par_run(bd->nt, job_h2, bd);
		if (!bd->nomem)
			fp_pass(bd);
	}
	if (bd->nomem) {
		ret = -ENOMEM;
		goto out;
	}
	hdr->subs_depths = depths;
	count_ranges4(allow, 33, (struct bg_range4 *)(elem + p->allow4_off));
	count_ranges6(allow, 129, (struct bg_range6 *)(elem + p->allow6_off));
	count_ranges6(block, p->short6_below,
		      (struct bg_range6 *)(elem + p->short6_off));
	/* at bg_allown_off(hdr) == p->allown_off; sorted, distinct */
	hdr->allown_n = build_allow_names((__u64 *)(elem + p->allown_off), p,
					  seed, &bl->names);
	if (bd->fp.failed)
		ret = -EAGAIN;
out:
	free(bd->ps.chk_item);
	free(bd->ps.chk_off);
	free(bd->h);
	free(bd->t);
	free(bd->fp.other);
	free(bd->fp.cnt);
	free(bd->walk);
	for (nchk = 0; nchk < BG_PARSE_WORKERS_MAX; nchk++)
		free(bd->left[nchk].v);
	free(bd);
	return ret;
}

int bg_filter_build_mt(void *mem, const struct bg_filter_params *p,
		       uint64_t seed, const struct bg_blocklist *bl,
		       unsigned int threads)
{
	return bg_filter_build_ex(mem, p, seed, bl, threads, BG_BUILD_PASS_KEYS);
}

int bg_filter_build(void *mem, const struct bg_filter_params *p,
		    uint64_t seed, const struct bg_blocklist *bl)
{
	return bg_filter_build_mt(mem, p, seed, bl, 0);
}

/* ---- Shared with the patch (core/filter_priv.h) ------------------------ */

/* "/32 /24" for the n lengths of t, or "none". */
static const char *lens_text(const uint8_t *t, int n, char *buf, size_t len)
{
	size_t w = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && w < len; i++)
		w += (size_t)snprintf(buf + w, len - w, "%s/%u", i ? " " : "", t[i]);
	return n ? buf : "none";
}

int bg_filter_plan_counts(const struct bg_blocklist *bl,
			  struct bg_filter_params *p, char *why, size_t whylen)
{
	const struct bg_list *block = &bl->block;
	uint64_t c4[33] = { 0 }, c6[129] = { 0 };
	char lens[32];
	struct keysrc s;
	int l, t;

	if (count_plens(block, c4, c6))
		return -ENOMEM;
	/* the expansion targets and key counts of the build itself */
	keysrc_init(&s, p, 0, bl);
	p->prefixes4 = block->n4;
	p->prefixes6 = block->n6;
	p->short4_prefixes = p->short6_prefixes = 0;
	p->keys4 = p->keys6 = 0;
	for (l = 0; l <= 32; l++) {
		if (!c4[l])
			continue;
		if (l <= BG_SHORT4_MAXLEN) {
			if (!p->short4) {
				bg_whyf(why, whylen,
				     "an IPv4 /%d needs the /16 bitmap, which the filter does not have",
				     l);
				return -EXDEV;
			}
			p->short4_prefixes += c4[l];
		} else if (!s.cnt4[l]) {
			bg_whyf(why, whylen,
			     "IPv4 /%d: no probed length is /%d or longer (the filter probes %s)",
			     l, l, lens_text(p->len4, p->n4, lens, sizeof(lens)));
			return -EXDEV;
		} else {
			p->keys4 += c4[l] * s.cnt4[l];
		}
	}
	for (l = 0; l <= 128; l++) {
		if (!c6[l])
			continue;
		if (l < p->short6_below) {
			p->short6_prefixes += c6[l];
			continue;
		}
		if (s.cnt6[l]) {
			p->keys6 += c6[l] * s.cnt6[l];
			continue;
		}
		t = cpe_target(p->len6, p->n6, l);
		if (t < l)
			bg_whyf(why, whylen,
			     "IPv6 /%d: no probed length is /%d or longer (the filter probes %s)",
			     l, l, lens_text(p->len6, p->n6, lens, sizeof(lens)));
		else if (p->short6_below)
			bg_whyf(why, whylen,
			     "IPv6 /%d would expand to 2^%d keys of /%d (at most 2^%d), and the filter's exact ranges hold prefixes shorter than /%u only",
			     l, t - l, t, BG_CPE_MAX_BITS, p->short6_below);
		else
			bg_whyf(why, whylen,
			     "IPv6 /%d would expand to 2^%d keys of /%d (at most 2^%d), and the filter has no exact IPv6 ranges",
			     l, t - l, t, BG_CPE_MAX_BITS);
		return -EXDEV;
	}
	p->name_keys = 0;
	p->subs_depths = 0;
	p->names_too_deep = 0;
	count_name_keys(&bl->names, p);
	p->allown_n = (uint32_t)allow_name_keys(&bl->names, 0, NULL,
						&p->names_too_deep);
	p->n = p->keys4 + p->keys6 + p->name_keys;
	if (p->n > UINT32_MAX) {
		bg_whyf(why, whylen, "%llu Bloom keys: more than a filter holds",
		     (unsigned long long)p->n);
		return -EXDEV;
	}
	return 0;
}

/* A key set being made: items split by thread, their keys hashed to t,
 * partitioned by top byte into h, gathered bin by bin into t, each bin
 * sorted back into h. */
struct keyset {
	struct keysrc s;
	unsigned int nt;
	size_t lo[BG_PARSE_WORKERS_MAX + 1]; /* thread t's items [lo[t], lo[t+1]) */
	size_t off[BG_PARSE_WORKERS_MAX + 1]; /* and their keys from off[t] */
	size_t bins[BG_PARSE_WORKERS_MAX][BG_BUILD_BINS + 1];
	size_t dst[BG_BUILD_BINS + 1]; /* bin d of the whole set */
	uint64_t *h, *t;
	int nomem;
};

static void job_ks_count(void *ctx, unsigned int t)
{
	struct keyset *ks = ctx;
	__u16 depths = 0;
	size_t i, n = 0;

	for (i = ks->lo[t]; i < ks->lo[t + 1]; i++)
		n += item_count(&ks->s, i, &depths, NULL);
	ks->off[t + 1] = n; /* the caller sums them into offsets */
}

static void job_ks_hash(void *ctx, unsigned int t)
{
	struct keyset *ks = ctx;
	size_t i, w = ks->off[t];

	for (i = ks->lo[t]; i < ks->lo[t + 1]; i++)
		w += item_hashes(&ks->s, i, ks->t + w);
	partition(ks->t + ks->off[t], ks->h + ks->off[t], w - ks->off[t],
		  DIGIT_TOP, 0, ks->bins[t]);
}

/* Thread t: its run of bins, from every thread's slice, into t (a
 * separate step from the sort, which writes over the slices in h). */
static void job_ks_gather(void *ctx, unsigned int t)
{
	struct keyset *ks = ctx;
	uint32_t d0 = BG_BUILD_BINS * t / ks->nt, d1 = BG_BUILD_BINS * (t + 1) / ks->nt;
	unsigned int sl;
	uint32_t d;

	for (d = d0; d < d1; d++) {
		size_t w = ks->dst[d];

		for (sl = 0; sl < ks->nt; sl++) {
			size_t len = ks->bins[sl][d + 1] - ks->bins[sl][d];

			memcpy(ks->t + w, ks->h + ks->off[sl] + ks->bins[sl][d],
			       len * sizeof(uint64_t));
			w += len;
		}
	}
}

static void job_ks_sort(void *ctx, unsigned int t)
{
	struct keyset *ks = ctx;
	uint32_t d0 = BG_BUILD_BINS * t / ks->nt, d1 = BG_BUILD_BINS * (t + 1) / ks->nt;
	uint32_t *cnt = malloc(sizeof(*cnt) << BG_SORT_BITS), d;

	if (!cnt) {
		ks->nomem = 1;
		return;
	}
	for (d = d0; d < d1; d++)
		sort_bin(ks->t + ks->dst[d], ks->h + ks->dst[d],
			 ks->dst[d + 1] - ks->dst[d], cnt);
	free(cnt);
}

int bg_filter_key_hashes(const struct bg_filter_params *p, uint64_t seed,
			 const struct bg_blocklist *bl, unsigned int threads,
			 uint64_t **v, size_t *n)
{
	struct keyset *ks = calloc(1, sizeof(*ks));
	size_t i, w, total;
	unsigned int t;
	uint32_t d;

	if (!ks)
		return -ENOMEM;
	keysrc_init(&ks->s, p, seed, bl);
	/* threads only for a list worth their start */
	ks->nt = ks->s.n >= (1u << 14) ? bg_par_threads(threads) : 1;
	for (t = 0; t <= ks->nt; t++)
		ks->lo[t] = ks->s.n * t / ks->nt;
	bg_par_run(ks->nt, job_ks_count, ks);
	for (t = 0; t < ks->nt; t++)
		ks->off[t + 1] += ks->off[t];
	total = ks->off[ks->nt];
	ks->h = malloc((total ? total : 1) * sizeof(uint64_t));
	ks->t = malloc((total ? total : 1) * sizeof(uint64_t));
	if (!ks->h || !ks->t)
		goto nomem;
	bg_par_run(ks->nt, job_ks_hash, ks);
	for (d = 0; d < BG_BUILD_BINS; d++) {
		ks->dst[d + 1] = ks->dst[d];
		for (t = 0; t < ks->nt; t++)
			ks->dst[d + 1] += ks->bins[t][d + 1] - ks->bins[t][d];
	}
	bg_par_run(ks->nt, job_ks_gather, ks);
	bg_par_run(ks->nt, job_ks_sort, ks);
	if (ks->nomem)
		goto nomem;
	/* the same key from two items (a name's EXACT key from an exact and a
	 * name-and-subdomains rule) once */
	for (i = 0, w = 0; i < total; i++)
		if (!w || ks->h[w - 1] != ks->h[i])
			ks->h[w++] = ks->h[i];
	*v = ks->h;
	*n = w;
	free(ks->t);
	free(ks);
	return 0;
nomem:
	free(ks->h);
	free(ks->t);
	free(ks);
	return -ENOMEM;
}

void bg_filter_short4_bitmap(const struct bg_list *l, struct bg_block *bitmap)
{
	size_t i;

	for (i = 0; i < l->n4; i++)
		if (l->v4[i].plen <= BG_SHORT4_MAXLEN)
			short4_set(bitmap, &l->v4[i]);
}

uint32_t bg_filter_ranges4(const struct bg_list *l, int below,
			   struct bg_range4 *out)
{
	return count_ranges4(l, below, out);
}

uint32_t bg_filter_ranges6(const struct bg_list *l, int below,
			   struct bg_range6 *out)
{
	return count_ranges6(l, below, out);
}

uint32_t bg_filter_allow_names(__u64 *out, const struct bg_filter_params *p,
			       uint64_t seed, const struct bg_names *names)
{
	return build_allow_names(out, p, seed, names);
}

void bg_filter_plan_rates(struct bg_filter_params *p, uint64_t loaded)
{
	int probes = plan_probes(p);

	p->predicted = bg_filter_model_fpr(loaded, p->nblocks, p->k);
	p->predicted_addr = 1.0 - pow(1.0 - p->predicted, probes);
	p->bits_per_entry = p->n ? (double)p->nblocks * BG_BLOCK_BITS / (double)p->n : 0.0;
	plan_stage(p, probes);
}

/* ---- Layout ---------------------------------------------------------- */

__u32 bg_filter_nelems(const struct bg_filter_header *h)
{
	/* bg_allown_off(h) (bloomgate/lookup.h) + the allowed name keys */
	return h->allow4_off + elems(h->allow4_n, BG_RANGE4_PER_ELEM) +
	       elems(h->allow6_n, BG_RANGE6_PER_ELEM) +
	       elems(h->short6_n, BG_RANGE6_PER_ELEM) +
	       elems(h->allown_n, BG_NAMEKEY_PER_ELEM);
}
