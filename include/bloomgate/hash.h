/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one hash: XXH64 (Yann Collet's xxHash, 64-bit variant), written once
 * as static inline C that compiles for BPF and for userspace. The unit tests
 * compare it with libxxhash's XXH64() on many inputs.
 *
 * Inputs are keys from abi.h, whose sizes are multiples of 8 and constant at
 * every call site, so clang fully unrolls the loop for BPF. Lengths that are
 * not a multiple of 8 are still hashed exactly as XXH64 does.
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

/* XXH64(data, len, seed). len must be a compile-time constant in BPF code. */
static inline __attribute__((always_inline)) __u64
bg_hash64(const void *data, __u32 len, __u64 seed)
{
	const __u8 *p = (const __u8 *)data;
	__u32 i = 0;
	__u64 h;

	if (len >= 32) {
		__u64 v1 = seed + BG_XXH_P1 + BG_XXH_P2;
		__u64 v2 = seed + BG_XXH_P2;
		__u64 v3 = seed;
		__u64 v4 = seed - BG_XXH_P1;

		for (; i + 32 <= len && i < BG_HASH_MAX_LEN; i += 32) {
			v1 = bg_xxh_round(v1, bg_load64(p + i));
			v2 = bg_xxh_round(v2, bg_load64(p + i + 8));
			v3 = bg_xxh_round(v3, bg_load64(p + i + 16));
			v4 = bg_xxh_round(v4, bg_load64(p + i + 24));
		}
		h = bg_rotl64(v1, 1) + bg_rotl64(v2, 7) + bg_rotl64(v3, 12) +
		    bg_rotl64(v4, 18);
		h = bg_xxh_merge(h, v1);
		h = bg_xxh_merge(h, v2);
		h = bg_xxh_merge(h, v3);
		h = bg_xxh_merge(h, v4);
	} else {
		h = seed + BG_XXH_P5;
	}
	h += len;

	for (; i + 8 <= len && i < BG_HASH_MAX_LEN; i += 8) {
		h ^= bg_xxh_round(0, bg_load64(p + i));
		h = bg_rotl64(h, 27) * BG_XXH_P1 + BG_XXH_P4;
	}
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

#endif /* BLOOMGATE_HASH_H */
