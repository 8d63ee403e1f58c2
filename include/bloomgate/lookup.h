/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one lookup of an address or a DNS name in a filter, shared by the
 * datapath and by `bloomgate check`. The includer defines how an element
 * of the filter map is reached, before including this file:
 *
 *   static inline const void *bg_elem(const void *filter, __u32 idx);
 *
 * returning the 64-byte element idx or NULL (BPF: bpf_map_lookup_elem on
 * the inner map; userspace: the mmapped map with a bounds check).
 *
 * An address is listed when the IPv4 /16 bitmap has its bit, or a Bloom
 * probe at one of the header's prefix lengths is positive, or (IPv6) an
 * exact short-prefix range holds it. Every loop is bounded by a named
 * constant: at most BG_PROBES_MAX Bloom probes per address, plus one bitmap
 * read (IPv4) or one range search (IPv6). A name (bg_name_listed) makes at
 * most 1 + BG_DNS_SUFFIX_MAX Bloom probes, and after a positive at most
 * BG_NAME_ALLOW_ROUNDS searches of the name allowlist.
 */
#ifndef BLOOMGATE_LOOKUP_H
#define BLOOMGATE_LOOKUP_H

#include "bloom.h"
#include "dns.h"

BG_INLINE __u32 bg_bloom_base(const struct bg_filter_header *hdr)
{
	return 1 + ((hdr->flags & BG_FILTER_F_SHORT4) ? BG_SHORT4_ELEMS : 0);
}

/* One Bloom probe: 1 = maybe listed. */
BG_INLINE int bg_probe_hash(const void *filter,
			    const struct bg_filter_header *hdr, __u64 h)
{
	const struct bg_block *b =
		bg_elem(filter, bg_bloom_base(hdr) + bg_bloom_block(h, hdr->nblocks));

	return b && bg_bloom_test(b, h, hdr->k);
}

BG_INLINE __u64 bg_lt64(__u64 x, __u64 y) /* 1 if x < y, no branch */
{
	return ((~x & y) | (~(x ^ y) & (x - y))) >> 63;
}

BG_INLINE __u64 bg_ne64(__u64 x, __u64 y) /* 1 if x != y, no branch */
{
	__u64 d = x ^ y;

	return (d | (0 - d)) >> 63;
}

/* The exact stage's probe (its hashes are in bloomgate/bloom.h). */
/* 1 if the bucket holds fingerprint f: two fingerprints a word, a zero
 * 32-bit lane of word ^ (f, f) found without a branch (exact: the
 * borrow of the subtraction never makes a lane that is not zero look so
 * when a lower one is not zero, and when one is, the answer is 1 anyway). */
BG_INLINE int bg_fp_bucket_has(const struct bg_fp_bucket *b, __u32 f)
{
	const __u64 *w = (const __u64 *)b->fp;
	__u64 pat = (__u64)f * 0x100000001ULL, acc = 0, d;
	__u32 i;

	for (i = 0; i < BG_FP_PER_BUCKET / 2; i++) {
		d = w[i] ^ pat;
		acc |= (d - 0x100000001ULL) & ~d;
	}
	return (int)bg_ne64(acc & 0x8000000080000000ULL, 0);
}

/* 1 if the exact stage holds the key of Bloom hash h, or the filter has
 * no stage. */
BG_INLINE int bg_fp_confirm(const void *filter,
			    const struct bg_filter_header *hdr, __u64 h)
{
	__u32 nb = hdr->fp_nbuckets, f;
	const struct bg_fp_bucket *b;
	__u64 h2;

	if (!nb)
		return 1;
	h2 = bg_fp_hash(h, hdr->seed);
	f = bg_fp_of(h2);
	b = bg_elem(filter, hdr->fp_off + bg_fp_bucket1(h2, nb));
	if (b && bg_fp_bucket_has(b, f))
		return 1;
	b = bg_elem(filter, hdr->fp_off + bg_fp_bucket2(h2, nb));
	return b && bg_fp_bucket_has(b, f);
}

/* A Bloom probe confirmed by the exact stage: 1 = listed. A Bloom
 * positive the stage rejects sets *rejected (a false positive of the
 * Bloom part) and is not listed. */
BG_INLINE int bg_probe_key(const void *filter,
			   const struct bg_filter_header *hdr, __u64 h,
			   __u32 *rejected)
{
	if (!bg_probe_hash(filter, hdr, h))
		return 0;
	if (bg_fp_confirm(filter, hdr, h))
		return 1;
	*rejected = 1;
	return 0;
}

/*
 * Binary search without data-dependent branches: every step computes
 * "start > address" as a 0/1 word and moves lo or hi with masks. A
 * branching search makes the verifier walk every path through all
 * BG_RANGE_STEPS steps (2^steps states); this one is one straight path.
 * The result is the number of ranges whose start <= the address.
 */
#define BG_RANGE_SEARCH(filter, off, n, per, type, GREATER, result)           \
	do {                                                                   \
		__u64 lo_ = 0, hi_ = (n);                                      \
		__u32 i_;                                                      \
		for (i_ = 0; i_ <= BG_RANGE_STEPS; i_++) {                     \
			__u64 mid_ = (lo_ + hi_) >> 1, act_, gt_, mid_c_;      \
			const type *r_;                                        \
			/* past the end only when lo == hi == n: read the last \
			 * element instead; the step is inactive anyway */     \
			mid_c_ = mid_ - (bg_lt64(mid_, (n)) ^ 1);              \
			r_ = bg_elem(filter, (__u32)((off) + mid_c_ / (per))); \
			if (!r_)                                               \
				break;                                         \
			r_ += mid_c_ % (per);                                  \
			act_ = 0 - bg_lt64(lo_, hi_);                          \
			gt_ = 0 - (__u64)(GREATER(r_));                        \
			hi_ -= act_ & gt_ & (hi_ - mid_);                      \
			lo_ += act_ & ~gt_ & (mid_ + 1 - lo_);                 \
		}                                                              \
		(result) = (__u32)lo_;                                         \
	} while (0)

/* 1 if the host-order address a lies in one of n IPv4 ranges at off. */
BG_INLINE int bg_range4_has(const void *filter, __u32 off, __u32 n, __u32 a)
{
	const struct bg_range4 *r;
	__u32 pos;

	if (!n)
		return 0;
#define BG_GT4(r) bg_lt64(a, (r)->start)
	BG_RANGE_SEARCH(filter, off, n, BG_RANGE4_PER_ELEM, struct bg_range4,
			BG_GT4, pos);
#undef BG_GT4
	if (!pos)
		return 0;
	pos--;
	r = bg_elem(filter, off + pos / BG_RANGE4_PER_ELEM);
	return r && a <= r[pos % BG_RANGE4_PER_ELEM].end;
}

/* 1 if the address (hi, lo: host order) lies in one of n IPv6 ranges. */
BG_INLINE int bg_range6_has(const void *filter, __u32 off, __u32 n, __u64 hi,
			    __u64 lo)
{
	const struct bg_range6 *r;
	__u32 pos;

	if (!n)
		return 0;
#define BG_GT6(r)                                                             \
	(bg_lt64(hi, (r)->start_hi) |                                          \
	 ((bg_ne64(hi, (r)->start_hi) ^ 1) & bg_lt64(lo, (r)->start_lo)))
	BG_RANGE_SEARCH(filter, off, n, BG_RANGE6_PER_ELEM, struct bg_range6,
			BG_GT6, pos);
#undef BG_GT6
	if (!pos)
		return 0;
	pos--;
	r = bg_elem(filter, off + pos / BG_RANGE6_PER_ELEM);
	if (!r)
		return 0;
	r += pos % BG_RANGE6_PER_ELEM;
	return !bg_u128_gt(hi, lo, r->end_hi, r->end_lo);
}

/* The tables after allow4 each follow the one before (bloomgate/abi.h). */
BG_INLINE __u32 bg_allow6_off(const struct bg_filter_header *hdr)
{
	return hdr->allow4_off +
	       (hdr->allow4_n + BG_RANGE4_PER_ELEM - 1) / BG_RANGE4_PER_ELEM;
}

BG_INLINE __u32 bg_short6_off(const struct bg_filter_header *hdr)
{
	return bg_allow6_off(hdr) +
	       (hdr->allow6_n + BG_RANGE6_PER_ELEM - 1) / BG_RANGE6_PER_ELEM;
}

/* 1 if the IPv4 address (network order) is listed: the /16 bitmap, or a
 * Bloom probe at one of the lengths confirmed by the exact stage (a
 * rejected Bloom positive sets *rejected and the next length is probed).
 * *probes counts the Bloom, bitmap and range lookups made. */
BG_INLINE int bg_listed4(const void *filter, const struct bg_filter_header *hdr,
			 __u32 addr_be, __u32 *probes, __u32 *rejected)
{
	__u32 i;

	if (hdr->flags & BG_FILTER_F_SHORT4) {
		__u32 top = __builtin_bswap32(addr_be) >> 16;
		const struct bg_block *b = bg_elem(filter, 1 + top / BG_BLOCK_BITS);

		(*probes)++;
		top %= BG_BLOCK_BITS;
		if (b && (b->w[top / 64] >> (top % 64)) & 1)
			return 1;
	}
	for (i = 0; i < BG_PROBES_MAX; i++) {
		struct bg_key4 key;

		if (i >= hdr->n4)
			break;
		bg_key4_init(&key, addr_be, hdr->len4[i]);
		(*probes)++;
		if (bg_probe_key(filter, hdr, bg_key4_hash(&key, hdr->seed),
				 rejected))
			return 1;
	}
	return 0;
}

BG_INLINE int bg_listed6(const void *filter, const struct bg_filter_header *hdr,
			 const __u8 *addr, __u32 *probes, __u32 *rejected)
{
	__u32 i;

	if (hdr->short6_n) {
		(*probes)++;
		if (bg_range6_has(filter, bg_short6_off(hdr), hdr->short6_n,
				  bg_be64_to_host(addr), bg_be64_to_host(addr + 8)))
			return 1;
	}
	for (i = 0; i < BG_PROBES_MAX; i++) {
		struct bg_key6 key;

		if (i >= hdr->n6)
			break;
		bg_key6_init(&key, addr, hdr->len6[i]);
		(*probes)++;
		if (bg_probe_key(filter, hdr, bg_key6_hash(&key, hdr->seed),
				 rejected))
			return 1;
	}
	return 0;
}

/* Exact allowlist checks (only made after a positive). */
BG_INLINE int bg_allowed4(const void *filter, const struct bg_filter_header *hdr,
			  __u32 addr_be)
{
	return bg_range4_has(filter, hdr->allow4_off, hdr->allow4_n,
			     __builtin_bswap32(addr_be));
}

BG_INLINE int bg_allowed6(const void *filter, const struct bg_filter_header *hdr,
			  const __u8 *addr)
{
	return bg_range6_has(filter, bg_allow6_off(hdr), hdr->allow6_n,
			     bg_be64_to_host(addr), bg_be64_to_host(addr + 8));
}

/*
 * The protected set (bloomgate/abi.h): 1 if the address lies in one of
 * the half's ranges. A binary search as BG_RANGE_SEARCH's, each step
 * without a data-dependent branch, on the half's own arrays: indices
 * masked by BG_PROTECT_MAX - 1 (the bound the verifier needs; the writer
 * keeps n <= BG_PROTECT_MAX: no clamp here, which would hand the verifier
 * a known n and every step's bounds as constants, a path per outcome).
 * It makes the set's own number of steps (its bit length, written with
 * it), not BG_PROTECT_STEPS: the steps are a chain of dependent loads,
 * about 2.5 ns each here, and a set of a handful of ranges needs three;
 * the loop's end depends on the set alone, so it is predicted. Before it,
 * one bit of the set's maps tells most addresses (any outside the /8s, or
 * the /32s, of its ranges) from the ones to search. Asked only after a
 * positive.
 */
#define BG_PROTECT_SEARCH(arr, n, steps, GREATER, result)                     \
	do {                                                                   \
		__u64 lo_ = 0, hi_ = (n);                                      \
		__u32 i_;                                                      \
		for (i_ = 0; i_ < BG_PROTECT_STEPS && i_ < (steps); i_++) {   \
			__u64 mid_ = (lo_ + hi_) >> 1, act_, gt_;              \
			const __typeof__((arr)[0]) *r_ =                       \
				&(arr)[mid_ & (BG_PROTECT_MAX - 1)];           \
			act_ = 0 - bg_lt64(lo_, hi_);                          \
			gt_ = 0 - (__u64)(GREATER(r_));                        \
			hi_ -= act_ & gt_ & (hi_ - mid_);                      \
			lo_ += act_ & ~gt_ & (mid_ + 1 - lo_);                 \
		}                                                              \
		(result) = (__u32)lo_;                                         \
	} while (0)

/* 1 if bit b (< 256) of a 256-bit map is set. */
BG_INLINE int bg_protect_bit(const __u64 *map, __u32 b)
{
	return (int)((map[(b >> 6) & 3] >> (b & 63)) & 1);
}

/* a: the IPv4 address in host order. */
BG_INLINE int bg_protect_has4(const struct bg_protect_set *s, __u32 a)
{
	__u32 pos;

	/* most of a flood is in no protected /8: one word read */
	if (!bg_protect_bit(s->map4, a >> 24))
		return 0;

#define BG_GTP4(r) bg_lt64(a, (r)->start)
	BG_PROTECT_SEARCH(s->r4, s->n4, s->steps4, BG_GTP4, pos);
#undef BG_GTP4
	if (!pos)
		return 0;
	return a <= s->r4[(pos - 1) & (BG_PROTECT_MAX - 1)].end;
}

/* hi, lo: the IPv6 address in host order, as bg_range6. */
BG_INLINE int bg_protect_has6(const struct bg_protect_set *s, __u64 hi,
			      __u64 lo)
{
	const struct bg_range6 *r;
	__u32 pos;

	if (!bg_protect_bit(s->map6, bg_protect_bit6((__u32)(hi >> 32))))
		return 0;
#define BG_GTP6(r)                                                            \
	(bg_lt64(hi, (r)->start_hi) |                                          \
	 ((bg_ne64(hi, (r)->start_hi) ^ 1) & bg_lt64(lo, (r)->start_lo)))
	BG_PROTECT_SEARCH(s->r6, s->n6, s->steps6, BG_GTP6, pos);
#undef BG_GTP6
	if (!pos)
		return 0;
	r = &s->r6[(pos - 1) & (BG_PROTECT_MAX - 1)];
	return !bg_u128_gt(hi, lo, r->end_hi, r->end_lo);
}

/* The half of the map the datapath reads now. */
BG_INLINE const struct bg_protect_set *
bg_protect_live(const struct bg_protect_map *m)
{
	return &m->half[m->sel & 1];
}

/* The allowed name keys follow the short6 table (bloomgate/abi.h). */
BG_INLINE __u32 bg_allown_off(const struct bg_filter_header *hdr)
{
	return bg_short6_off(hdr) +
	       (hdr->short6_n + BG_RANGE6_PER_ELEM - 1) / BG_RANGE6_PER_ELEM;
}

/* 1 if the name key with Bloom hash h is one of the allowed name keys
 * (exact: a sorted table of 64-bit hashes, searched without branches). */
BG_INLINE int bg_name_key_allowed(const void *filter,
				  const struct bg_filter_header *hdr, __u64 h)
{
	__u32 off = bg_allown_off(hdr), n = hdr->allown_n, pos;
	const __u64 *r;

	if (!n)
		return 0;
#define BG_GTN(r) bg_lt64(h, *(r))
	BG_RANGE_SEARCH(filter, off, n, BG_NAMEKEY_PER_ELEM, __u64, BG_GTN, pos);
#undef BG_GTN
	if (!pos)
		return 0;
	pos--;
	r = bg_elem(filter, off + pos / BG_NAMEKEY_PER_ELEM);
	return r && r[pos % BG_NAMEKEY_PER_ELEM] == h;
}

/*
 * Names. Both sides hold the hashes of an n-label name (1 <= n <=
 * BG_DNS_LABELS_MAX) the same way: exact = E, the whole name's exact hash,
 * and suf[j] = S_{j+1} (bloomgate/dns.h), the suffix from label j (0-based,
 * leftmost 0) on, so suf[n - i] is the suffix of i labels. Only suf[n - i]
 * for the depths i probed are read (1 <= i < n, i <= BG_DNS_SUFFIX_MAX):
 * the datapath hashes just those labels (bpf/dns.h, bg_dns_suffixes, into
 * its scratch suf[]), userspace has them all from bg_name_hashes(). Both
 * arrays have BG_NAME_SUF_SIZE values and are read here with indices masked
 * by BG_NAME_SUF_MASK, the bound the verifier needs for a map value.
 */
#define BG_NAME_SUF_SIZE 128
#define BG_NAME_SUF_MASK (BG_NAME_SUF_SIZE - 1)
_Static_assert(BG_NAME_SUF_SIZE >= BG_DNS_LABELS_MAX + 1 &&
		       !(BG_NAME_SUF_SIZE & BG_NAME_SUF_MASK),
	       "suf[] holds S_1 .. S_n and S_{n+1} = 0, a power of two");

/*
 * The block probe of a name: its exact hash as an EXACT key, then each
 * proper suffix of i labels (1 <= i <= BG_DNS_SUFFIX_MAX, i < n), shortest
 * first, as a SUBS key, but only at the depths some SUBS key of the filter
 * has (hdr->subs_depths, bg_dns_depth_probed): a depth without one cannot
 * answer but at the false-positive rate. The loop ends at the first
 * confirmed positive (bg_probe_key: a Bloom positive the exact stage
 * rejects sets *rejected and the probing goes on), at the deepest suffix, or as soon as no depth >= i is set
 * (nothing deeper could be probed). At most 1 + BG_DNS_SUFFIX_MAX probes.
 *
 * Returns 1 if listed, with *label (not NULL) the index of the first
 * label of the matching key (0: the whole name). *probes is incremented
 * per Bloom probe made (bloomgate_dns's dns_probes).
 *
 * The loop ends on `listed` rather than returning from inside: the return
 * made clang lay out bloomgate_dns so that the verifier walked ~600 more
 * instructions (docs/DESIGN-NOTES.md has the figures).
 */
BG_INLINE int bg_name_listed(const void *filter,
			     const struct bg_filter_header *hdr,
			     __u64 exact, const __u64 *suf, __u32 n,
			     __u32 *label, __u32 *probes, __u32 *rejected)
{
	__u32 depths = hdr->subs_depths, i, at = 0;
	int listed;

	(*probes)++;
	listed = bg_probe_key(filter, hdr,
			      bg_name_key_hash(BG_KEY_NAME_EXACT, exact, hdr->seed),
			      rejected);
	for (i = 1; i <= BG_DNS_SUFFIX_MAX && !listed; i++) {
		if (i >= n || !(depths >> i))
			break; /* no deeper suffix, or no SUBS key that deep */
		if (!bg_dns_depth_probed(depths, i))
			continue; /* no SUBS key of i labels: nothing to find */
		at = (n - i) & BG_NAME_SUF_MASK;
		(*probes)++;
		listed = bg_probe_key(filter, hdr,
				      bg_name_key_hash(BG_KEY_NAME_SUBS, suf[at],
						       hdr->seed),
				      rejected);
	}
	if (listed && label)
		*label = at;
	return listed;
}

/*
 * Round i of the name allowlist check (made after a block positive only):
 * round 0 the exact hash as an EXACT key, round i (1 <= i <=
 * BG_DNS_SUFFIX_MAX, i < n) the suffix of i labels as a SUBS key -- every
 * suffix the block probe may use, whatever subs_depths says: an allow rule
 * covers its subdomains at any depth. Returns 1 if the allowed-name table
 * holds the key, 0 if not, -1 when there is no round i (the name has no
 * suffix that deep, or i > BG_DNS_SUFFIX_MAX).
 *
 * One round per call, so each side drives the rounds its own way: the
 * datapath from a bpf_loop() callback (11 unrolled searches of
 * BG_RANGE_STEPS lookups each would cost the verifier far more),
 * userspace with bg_name_allowlisted().
 */
BG_INLINE int bg_name_allow_round(const void *filter,
				  const struct bg_filter_header *hdr,
				  __u64 exact, const __u64 *suf, __u32 n,
				  __u32 i)
{
	__u64 h;

	if (!i)
		h = bg_name_key_hash(BG_KEY_NAME_EXACT, exact, hdr->seed);
	else if (i < n && i <= BG_DNS_SUFFIX_MAX)
		h = bg_name_key_hash(BG_KEY_NAME_SUBS,
				     suf[(n - i) & BG_NAME_SUF_MASK], hdr->seed);
	else
		return -1;
	return bg_name_key_allowed(filter, hdr, h);
}

/* Rounds of the allow check: the whole name, then BG_DNS_SUFFIX_MAX
 * suffixes at most. */
#define BG_NAME_ALLOW_ROUNDS (1 + BG_DNS_SUFFIX_MAX)

#ifndef __bpf__
/* Userspace driver of the allow rounds: 1 if the name is allowed, with
 * *label (not NULL) the index of the first label of the allowed key. Not
 * for BPF: a plain loop makes the verifier walk every round's search
 * (bloomgate_dns drives the rounds with bpf_loop()). */
BG_INLINE int bg_name_allowlisted(const void *filter,
				  const struct bg_filter_header *hdr,
				  __u64 exact, const __u64 *suf, __u32 n,
				  __u32 *label)
{
	__u32 i;
	int r;

	for (i = 0; i < BG_NAME_ALLOW_ROUNDS; i++) {
		r = bg_name_allow_round(filter, hdr, exact, suf, n, i);
		if (r < 0)
			break;
		if (r) {
			if (label)
				*label = i ? n - i : 0;
			return 1;
		}
	}
	return 0;
}
#endif

/* A header the builder would never write is no filter at all (k = 0 would
 * match everything, offsets past the map would read nothing). */
/* The first 6 bytes of a header of this ABI: magic, abi_version, layout,
 * as one little-endian word (both sides are little endian). */
#define BG_HEADER_ID                                                          \
	((__u64)BG_FILTER_MAGIC | (__u64)BG_ABI_VERSION << 32 |                \
	 (__u64)BG_LAYOUT_BLOCKED512 << 40)
#define BG_HEADER_ID_MASK 0xffffffffffffULL

/* 1 if hdr is a filter header of this ABI and layout: the datapath's one
 * per-packet test. The rest of bg_header_ok() holds for every filter the
 * loader publishes (bg_filter_create() refuses one that fails it, and the
 * map is frozen before it is published), and no bound the verifier needs
 * rests on it: every loop has its named constant. */
BG_INLINE int bg_header_current(const struct bg_filter_header *hdr)
{
	__u64 w;

	__builtin_memcpy(&w, hdr, sizeof(w));
	return (w & BG_HEADER_ID_MASK) == BG_HEADER_ID;
}
_Static_assert(__builtin_offsetof(struct bg_filter_header, abi_version) == 4 &&
		       __builtin_offsetof(struct bg_filter_header, layout) == 5,
	       "magic, abi_version and layout are the first 6 bytes");

/* The whole header is consistent: checked before a filter is published
 * and by every userspace reader. */
BG_INLINE int bg_header_ok(const struct bg_filter_header *hdr)
{
	return hdr->magic == BG_FILTER_MAGIC &&
	       hdr->abi_version == BG_ABI_VERSION &&
	       hdr->layout == BG_LAYOUT_BLOCKED512 && hdr->k &&
	       hdr->k <= BG_K_MAX && hdr->n4 <= BG_PROBES_MAX &&
	       hdr->n6 <= BG_PROBES_MAX && !(hdr->subs_depths & ~BG_SUBS_DEPTHS_ALL) &&
	       (hdr->nblocks || (!hdr->n4 && !hdr->n6)) &&
	       (!hdr->fp_nbuckets || hdr->fp_off >= bg_bloom_base(hdr) + hdr->nblocks) &&
	       hdr->allow4_off >= hdr->fp_off + hdr->fp_nbuckets;
}

#endif /* BLOOMGATE_LOOKUP_H */
