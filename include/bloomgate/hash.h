/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one hash: XXH64 (Yann Collet's xxHash, 64-bit variant), written once
 * as static inline C that compiles for BPF and for userspace. The unit tests
 * compare it with libxxhash's XXH64() on many inputs.
 *
 * Inputs are keys from abi.h, whose sizes are multiples of 8 and constant at
 * every call site, so clang fully unrolls the loop for BPF. Lengths that are
 * not a multiple of 8 are still hashed exactly as XXH64 does.
 *
 * Two interfaces over the same steps: bg_hash64 reads bytes (one at a time,
 * so any alignment works; BPF cannot assume more), bg_hash64_words takes the
 * input as little-endian 64-bit words, for values a program holds in
 * registers or reads 8 bytes at a time (the DNS label hashes and the 16-byte
 * name keys, bloomgate/dns.h and bpf/dns.h), and bg_hash64_stripes the same
 * for a run-time multiple of 32 bytes (the DNS exact-name hash). All give
 * XXH64 of the bytes.
 */
#ifndef BLOOMGATE_HASH_H
#define BLOOMGATE_HASH_H

#include <linux/types.h>

#define BG_XXH_P1 0x9E3779B185EBCA87ULL
#define BG_XXH_P2 0xC2B2AE3D27D4EB4FULL
#define BG_XXH_P3 0x165667B19E3779F9ULL
#define BG_XXH_P4 0x85EBCA77C2B2AE63ULL
#define BG_XXH_P5 0x27D4EB2F165667C5ULL

#define BG_HASH_MAX_LEN 256 /* loop bound for the verifier */

static inline __attribute__((always_inline)) __u64 bg_rotl64(__u64 x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline __attribute__((always_inline)) __u64 bg_xxh_round(__u64 acc,
								 __u64 lane)
{
	acc += lane * BG_XXH_P2;
	acc = bg_rotl64(acc, 31);
	return acc * BG_XXH_P1;
}

static inline __attribute__((always_inline)) __u64 bg_xxh_merge(__u64 acc,
								 __u64 val)
{
	acc ^= bg_xxh_round(0, val);
	return acc * BG_XXH_P1 + BG_XXH_P4;
}

static inline __attribute__((always_inline)) __u64 bg_xxh_avalanche(__u64 h)
{
	h ^= h >> 33;
	h *= BG_XXH_P2;
	h ^= h >> 29;
	h *= BG_XXH_P3;
	h ^= h >> 32;
	return h;
}

/* Little-endian loads byte by byte: no alignment assumption, same on both
 * sides (BPF targets here are little endian, as is x86-64). */
static inline __attribute__((always_inline)) __u64 bg_load64(const __u8 *p)
{
	return (__u64)p[0] | (__u64)p[1] << 8 | (__u64)p[2] << 16 |
	       (__u64)p[3] << 24 | (__u64)p[4] << 32 | (__u64)p[5] << 40 |
	       (__u64)p[6] << 48 | (__u64)p[7] << 56;
}

static inline __attribute__((always_inline)) __u32 bg_load32(const __u8 *p)
{
	return (__u32)p[0] | (__u32)p[1] << 8 | (__u32)p[2] << 16 |
	       (__u32)p[3] << 24;
}

/*
 * XXH64's steps, shared by the byte interface (bg_hash64) and the word
 * interface (bg_hash64_words): the two differ only in how the 8-byte lanes
 * are read, so there is one hash.
 */
#define BG_HASH_INLINE static inline __attribute__((always_inline))

/* The four accumulators of the 32-byte stripes. */
BG_HASH_INLINE void bg_xxh_init(__u64 v[4], __u64 seed)
{
	v[0] = seed + BG_XXH_P1 + BG_XXH_P2;
	v[1] = seed + BG_XXH_P2;
	v[2] = seed;
	v[3] = seed - BG_XXH_P1;
}

/* The accumulators folded into h (inputs of 32 bytes or more). */
BG_HASH_INLINE __u64 bg_xxh_converge(const __u64 v[4])
{
	__u64 h = bg_rotl64(v[0], 1) + bg_rotl64(v[1], 7) + bg_rotl64(v[2], 12) +
		  bg_rotl64(v[3], 18);

	h = bg_xxh_merge(h, v[0]);
	h = bg_xxh_merge(h, v[1]);
	h = bg_xxh_merge(h, v[2]);
	return bg_xxh_merge(h, v[3]);
}

/* One 8-byte lane after the stripes. */
BG_HASH_INLINE __u64 bg_xxh_tail8(__u64 h, __u64 lane)
{
	h ^= bg_xxh_round(0, lane);
	return bg_rotl64(h, 27) * BG_XXH_P1 + BG_XXH_P4;
}

/* XXH64 of the 8 little-endian bytes of w: one lane, no stripes. For keys
 * a program holds in a register (the IPv4 key, bloomgate/bloom.h): five
 * multiplies, no bytes to load. */
BG_HASH_INLINE __u64 bg_hash64_u64(__u64 w, __u64 seed)
{
	return bg_xxh_avalanche(bg_xxh_tail8(seed + BG_XXH_P5 + 8, w));
}

/* XXH64(data, len, seed). len must be a compile-time constant in BPF code. */
BG_HASH_INLINE __u64 bg_hash64(const void *data, __u32 len, __u64 seed)
{
	const __u8 *p = (const __u8 *)data;
	__u32 i = 0;
	__u64 h;

	if (len >= 32) {
		__u64 v[4];

		bg_xxh_init(v, seed);
		for (; i + 32 <= len && i < BG_HASH_MAX_LEN; i += 32) {
			v[0] = bg_xxh_round(v[0], bg_load64(p + i));
			v[1] = bg_xxh_round(v[1], bg_load64(p + i + 8));
			v[2] = bg_xxh_round(v[2], bg_load64(p + i + 16));
			v[3] = bg_xxh_round(v[3], bg_load64(p + i + 24));
		}
		h = bg_xxh_converge(v);
	} else {
		h = seed + BG_XXH_P5;
	}
	h += len;

	for (; i + 8 <= len && i < BG_HASH_MAX_LEN; i += 8)
		h = bg_xxh_tail8(h, bg_load64(p + i));
	if (i + 4 <= len) {
		h ^= (__u64)bg_load32(p + i) * BG_XXH_P1;
		h = bg_rotl64(h, 23) * BG_XXH_P2 + BG_XXH_P3;
		i += 4;
	}
	for (; i < len && i < BG_HASH_MAX_LEN; i++) {
		h ^= (__u64)p[i] * BG_XXH_P5;
		h = bg_rotl64(h, 11) * BG_XXH_P1;
	}
	return bg_xxh_avalanche(h);
}

/*
 * XXH64 of the 8 * nwords bytes whose little-endian 64-bit words are
 * w[0..nwords-1]: bg_hash64 of those bytes, without reading them byte by
 * byte (a BPF program can then hash values it holds in registers, or words
 * it read at once). nwords must be a compile-time constant in BPF code.
 */
BG_HASH_INLINE __u64 bg_hash64_words(const __u64 *w, __u32 nwords, __u64 seed)
{
	__u32 i = 0;
	__u64 h;

	if (nwords >= 4) {
		__u64 v[4];

		bg_xxh_init(v, seed);
		for (; i + 4 <= nwords && i < BG_HASH_MAX_LEN / 8; i += 4) {
			v[0] = bg_xxh_round(v[0], w[i]);
			v[1] = bg_xxh_round(v[1], w[i + 1]);
			v[2] = bg_xxh_round(v[2], w[i + 2]);
			v[3] = bg_xxh_round(v[3], w[i + 3]);
		}
		h = bg_xxh_converge(v);
	} else {
		h = seed + BG_XXH_P5;
	}
	h += (__u64)nwords * 8;
	for (; i < nwords && i < BG_HASH_MAX_LEN / 8; i++)
		h = bg_xxh_tail8(h, w[i]);
	return bg_xxh_avalanche(h);
}

/*
 * XXH64 of the 32 * nstripes bytes whose little-endian 64-bit words are
 * w[0 .. 4 * nstripes - 1] (1 <= nstripes <= BG_HASH_MAX_LEN / 32): the same
 * steps as bg_hash64_words for a length that is a multiple of 32, but with
 * the stripe count a run-time value, so one definition hashes inputs of any
 * such length (the DNS exact-name hash, bloomgate/dns.h). The loop is bounded
 * by a constant and the stripes past nstripes are skipped, so BPF code can
 * call it with a bounded scalar.
 */
BG_HASH_INLINE __u64 bg_hash64_stripes(const __u64 *w, __u32 nstripes,
				       __u64 seed)
{
	__u64 v[4], h;
	__u32 i;

	bg_xxh_init(v, seed);
	for (i = 0; i < BG_HASH_MAX_LEN / 32; i++) {
		if (i >= nstripes)
			break;
		v[0] = bg_xxh_round(v[0], w[4 * i]);
		v[1] = bg_xxh_round(v[1], w[4 * i + 1]);
		v[2] = bg_xxh_round(v[2], w[4 * i + 2]);
		v[3] = bg_xxh_round(v[3], w[4 * i + 3]);
	}
	h = bg_xxh_converge(v) + (__u64)nstripes * 32;
	return bg_xxh_avalanche(h);
}

/* XXH64 of 64 bytes given as 8 little-endian words (a DNS label buffer). */
BG_HASH_INLINE __u64 bg_hash64_words64(const __u64 w[8], __u64 seed)
{
	return bg_hash64_words(w, 8, seed);
}

/* XXH64 of 16 bytes given as 2 little-endian words (two 64-bit values). */
BG_HASH_INLINE __u64 bg_hash64_words16(__u64 a, __u64 b, __u64 seed)
{
	const __u64 w[2] = { a, b };

	return bg_hash64_words(w, 2, seed);
}

#endif /* BLOOMGATE_HASH_H */
