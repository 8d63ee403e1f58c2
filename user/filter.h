/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Sizing and building the cache-blocked Bloom filter of bloomgate/bloom.h. */
#ifndef BLOOMGATE_FILTER_H
#define BLOOMGATE_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "bloomgate/abi.h"
#include "lists.h"

#define BG_FPR_DEFAULT 0.001
#define BG_FPR_MIN 1e-9
#define BG_FPR_MAX 0.5

struct bg_filter_params {
	uint64_t n; /* distinct keys */
	double target; /* requested false-positive rate */
	uint32_t nblocks; /* 512-bit blocks */
	uint32_t k; /* bits per key */
	double predicted; /* model false-positive rate for nblocks, k */
	double bits_per_entry; /* 512 * nblocks / n */
	size_t bytes; /* map memory: header + blocks */
};

/*
 * False-positive rate of the blocked layout for n keys in nblocks blocks
 * with k bits per key: a non-member lands in a block holding j keys,
 * j ~ Poisson(n / nblocks); its d distinct bit positions (k draws from
 * 512, duplicates possible) are all set when none of them was missed by
 * the j*k independent bit draws of those keys (inclusion-exclusion).
 */
double bg_filter_model_fpr(uint64_t n, uint32_t nblocks, uint32_t k);

/* Smallest filter meeting target for n keys (best k). -EINVAL, -E2BIG. */
int bg_filter_size(uint64_t n, double target, struct bg_filter_params *p);

/* Fills a zeroed buffer of p->bytes: header at element 0, then the blocks. */
void bg_filter_build(void *mem, const struct bg_filter_params *p,
		     uint64_t seed, const struct bg_list *l);

/* Userspace probes of a built filter (same functions as the datapath). */
int bg_filter_test4(const void *mem, __u32 addr_be);
int bg_filter_test6(const void *mem, const __u8 addr[16]);

#endif
