/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the live-frames generator (bench/livegen.bpf.c) and its loader
 * (bench/livegen.c) share: the address space the end-to-end section
 * (bench/e2e.sh) lists and sends from.
 *
 * Address number i (0 <= i < 2^28) is LG_BASE + lg_perm(i): a bijection, so
 * the list "numbers [0, N)" and traffic "numbers [LO, LO + COUNT)" overlap
 * exactly where the number ranges do, and the addresses still land all
 * over 16.0.0.0/4 (public unicast) rather than in one dense block.
 */
#ifndef BLOOMGATE_BENCH_LIVEGEN_H
#define BLOOMGATE_BENCH_LIVEGEN_H

#include <linux/types.h>

#define LG_BASE 0x10000000U /* 16.0.0.0 */
#define LG_BITS 28
#define LG_MASK ((1U << LG_BITS) - 1)

/* xorshift-multiply rounds, each a bijection on 28 bits */
static inline unsigned int lg_perm(unsigned int x)
{
	x &= LG_MASK;
	x ^= x >> 15;
	x = (x * 0x2c1b3c6dU) & LG_MASK;
	x ^= x >> 12;
	x = (x * 0x297a2d39U) & LG_MASK;
	x ^= x >> 15;
	return x;
}

/* The traffic's number sequence: a full-period LCG modulo 2^k (a = 1 mod 4,
 * c odd), values >= count skipped, so one period sends every number of
 * [0, count) exactly once. */
#define LG_LCG_A 1664525U
#define LG_LCG_C 1013904223U

#define LG_MATCH_DST 0
#define LG_MATCH_SRC 1

/* The probe floor's parts (bench/livegen.bpf.c, probe_part). */
#define LG_PART_ALL 0
#define LG_PART_BLOOM 1
#define LG_PART_LINE 2
#define LG_PART_BUCKET1 3
/* the whole lookup, the first bucket's line read before the Bloom test */
#define LG_PART_EARLY 4

/* The two-line floor's second line (bench/livegen.bpf.c, two_layout). */
#define LG_TWO_APART 0 /* in a table of its own after the first's */
#define LG_TWO_PAGE 1 /* in the first line's 4 KiB page */
#define LG_TWO_EARLY 2 /* apart, read before the first line's test */

/*
 * The one-line exact layout, tried in place of the Bloom part and the exact
 * stage (bench/livegen.bpf.c lg_oneline, built by livegen.c): one 64-byte
 * line per key holds LG_ONE_SLOTS fingerprints of 38 bits (13 * 2^-38 =
 * 4.7e-11 false positives a probe, the stage's rate), the high 32 bits in
 * hi[] (0: an empty slot; a fingerprint's never is), the low 6 five to a
 * word in lo[]; lo[2] bit 31 says the line has overflowed: some key whose
 * first line it is sits in its second line (bg_fp_bucket2 of the key's h2),
 * which a probe then reads too (only then).
 */
#define LG_ONE_SLOTS 13
#define LG_ONE_SEED 0x626c6f6f6d676174ULL

struct lg_one_line {
	__u32 hi[LG_ONE_SLOTS];
	__u32 lo[3];
};
_Static_assert(sizeof(struct lg_one_line) == 64, "one line");

/* the key's fingerprint (38 bits of h2, the stage's second hash) */
static inline __u32 lg_one_hi(__u64 h2)
{
	__u32 hi = (__u32)(h2 >> 32);

	return hi ? hi : 1;
}

static inline __u32 lg_one_lo(__u64 h2)
{
	return (__u32)(h2 >> 26) & 63;
}

static inline __u32 lg_one_over(const struct lg_one_line *l)
{
	return l->lo[2] >> 31;
}

/* 1 if line l holds the fingerprint (hi, lo); branch-free */
static inline __u32 lg_one_has(const struct lg_one_line *l, __u32 hi, __u32 lo)
{
	__u64 z = 0;
	int i;

#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < LG_ONE_SLOTS; i++) {
		__u32 x = (l->hi[i] ^ hi) |
			  (((l->lo[i / 5] >> (6 * (i % 5))) & 63) ^ lo);

		z |= ((__u64)x - 1) >> 63;
	}
	return (__u32)z;
}

#endif
