/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The cache-blocked Bloom filter, shared by the builder (userspace) and the
 * probe (BPF). One 64-bit hash h per key:
 *
 *   block = fastrange32(h >> 32, nblocks)   any number of blocks, no rounding
 *   g_i   = h * C^(i+1)                      C odd (the 64-bit golden ratio)
 *   bit_i = g_i >> 55                        top 9 bits: 0..511 in the block
 *
 * Multiplying by an odd constant is a bijection, and the top bits of
 * h * C^i depend on every bit of h, so the k positions behave like
 * independent uniform draws (two may coincide; the model in user/core/filter.c
 * counts that). The top bits of h itself are never a position: they also
 * pick the block, so every key of a block would share that bit (measured
 * 7 % above the model at n=1e5, 33 % at n=1e3, before this was fixed). A first version used double hashing inside the block
 * (bit_i = top9(lo + i * step)); in 512 bits its step degenerates with
 * probability ~1/512 to a pattern of one or two bits, and it measured
 * 40 % above the model at 0.1 %.
 */
#ifndef BLOOMGATE_BLOOM_H
#define BLOOMGATE_BLOOM_H

#include "abi.h"
#include "hash.h"

#define BG_INLINE static inline __attribute__((always_inline))
#define BG_BLOOM_MUL 0x9E3779B97F4A7C15ULL

BG_INLINE __u32 bg_bloom_block(__u64 h, __u32 nblocks)
{
	return (__u32)(((__u64)(__u32)(h >> 32) * nblocks) >> 32);
}

/* The next of a key's bit positions in its block: g runs from the hash,
 * multiplied once per bit; the top 9 bits pick one of the 512. The builder
 * and the probe step through the same positions with it. */
BG_INLINE __u32 bg_bloom_next_bit(__u64 *g)
{
	*g *= BG_BLOOM_MUL;
	return (__u32)(*g >> 55);
}

/* Sets the k bits of hash h in block b (builder). */
BG_INLINE void bg_bloom_set(struct bg_block *b, __u64 h, __u32 k)
{
	__u64 g = h;
	__u32 i, bit;

	for (i = 0; i < BG_K_MAX && i < k; i++) {
		bit = bg_bloom_next_bit(&g);
		b->w[bit >> 6] |= 1ULL << (bit & 63);
	}
}

/*
 * 1 if all k bits of hash h are set in block b: "maybe listed". Without a
 * branch on the bits: for traffic that is mostly not listed, which bit is
 * the first clear one is a coin toss, and a branch on it would be
 * mispredicted half the time, each time only after the block's cache miss
 * resolved; the work after it could not overlap the miss. All k bits are
 * read (one cache line, in L1 after the first) and and-ed; the one branch
 * left is on the answer, which traffic makes predictable (almost always
 * "no" for clean traffic, "yes" for a flood of listed addresses).
 */
BG_INLINE int bg_bloom_test(const struct bg_block *b, __u64 h, __u32 k)
{
	/* the loop's bound is k, which is the same for every packet */
	__u32 n = k < BG_K_MAX ? k : BG_K_MAX;
	__u64 g = h, all = 1;
	__u32 i, bit;

	for (i = 0; i < n; i++) {
		bit = bg_bloom_next_bit(&g);
		all &= b->w[bit >> 6] >> (bit & 63);
	}
	return (int)(all & 1);
}

/* ---- Key encoding (one definition for builder and datapath) ----------- */

/* Network-order mask of the first plen bits of an IPv4 address. */
BG_INLINE __u32 bg_mask4(__u8 plen)
{
	__u32 m = plen >= 32 ? 0xffffffffU : plen ? ~(0xffffffffU >> plen) : 0;

	return __builtin_bswap32(m); /* both sides are little endian */
}

BG_INLINE void bg_key4_init(struct bg_key4 *key, __u32 addr_be, __u8 plen)
{
	key->kind = BG_KEY_IPV4;
	key->plen = plen;
	key->pad = 0;
	key->addr = addr_be & bg_mask4(plen);
}

BG_INLINE void bg_key6_init(struct bg_key6 *key, const __u8 *addr, __u8 plen)
{
	__u32 i;

	key->kind = BG_KEY_IPV6;
	key->plen = plen;
	key->pad0 = 0;
	key->pad1 = 0;
	for (i = 0; i < 16; i++) {
		__u32 bits = plen > i * 8 ? plen - i * 8 : 0;
		__u8 m = bits >= 8 ? 0xff : (__u8)(0xff00 >> bits);

		key->addr[i] = addr[i] & m;
	}
}

/* XXH64 of the key's 8 bytes, taken from its fields in a register. */
BG_INLINE __u64 bg_key4_hash(const struct bg_key4 *key, __u64 seed)
{
	return bg_hash64_u64((__u64)key->kind | (__u64)key->plen << 8 |
				     (__u64)key->pad << 16 | (__u64)key->addr << 32,
			     seed);
}

BG_INLINE __u64 bg_key6_hash(const struct bg_key6 *key, __u64 seed)
{
	return bg_hash64(key, sizeof(*key), seed);
}

/* ---- The exact stage (issue 11) -------------------------------------------
 * Every Bloom key is also in a table of 32-bit fingerprints (bloomgate/abi.h,
 * struct bg_fp_bucket), probed only after a Bloom positive: the key is
 * listed only if its fingerprint is in one of its two buckets. Fingerprint
 * and buckets come from h2, a second XXH64 over the key's Bloom hash h with
 * another seed: bits independent of the ones that chose the Bloom block and
 * bits, so the stage's false positives (a fingerprint equal to one of the
 * <= 2 * BG_FP_PER_BUCKET held in the two buckets: at most 2^-27 a probe)
 * multiply the Bloom part's. Both buckets are one cache line; the builder
 * puts a key in its first bucket whenever it can (user/core/filter.c), so a
 * listed key is usually confirmed with one read.
 */
#define BG_FP_SEED_XOR 0x5bd1e9955bd1e995ULL

BG_INLINE __u64 bg_fp_hash(__u64 h, __u64 seed)
{
	return bg_hash64_u64(h, seed ^ BG_FP_SEED_XOR);
}

/* The low 32 bits of h2, never 0 (0 is an empty slot): 0 becomes 1. */
BG_INLINE __u32 bg_fp_of(__u64 h2)
{
	__u32 f = (__u32)h2;

	return f | (__u32)(((__u64)f - 1) >> 63);
}

BG_INLINE __u32 bg_fp_bucket1(__u64 h2, __u32 nbuckets)
{
	return (__u32)(((h2 >> 32) * nbuckets) >> 32);
}

BG_INLINE __u32 bg_fp_bucket2(__u64 h2, __u32 nbuckets)
{
	return (__u32)((((h2 * BG_BLOOM_MUL) >> 32) * nbuckets) >> 32);
}

/* 128-bit helpers for IPv6 ranges: (hi, lo) host-order halves. */
BG_INLINE __u64 bg_be64_to_host(const __u8 *p)
{
	return (__u64)p[0] << 56 | (__u64)p[1] << 48 | (__u64)p[2] << 40 |
	       (__u64)p[3] << 32 | (__u64)p[4] << 24 | (__u64)p[5] << 16 |
	       (__u64)p[6] << 8 | (__u64)p[7];
}

/* The bit of the protected set's map6 (bloomgate/abi.h) for an IPv6
 * address's first 32 bits: the writer sets it, the datapath tests it. */
BG_INLINE __u32 bg_protect_bit6(__u32 top)
{
	return (top * 0x9E3779B1U) >> 24;
}

BG_INLINE int bg_u128_gt(__u64 ahi, __u64 alo, __u64 bhi, __u64 blo)
{
	return ahi > bhi || (ahi == bhi && alo > blo);
}

#endif /* BLOOMGATE_BLOOM_H */
