/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Planning, sizing and building a filter map (layout in bloomgate/abi.h). */
#ifndef BLOOMGATE_FILTER_H
#define BLOOMGATE_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "bloomgate/abi.h"
#include "core/sources.h"

/* The Bloom part's default target false-positive rate, without and with
 * the exact stage: with it, a Bloom positive costs one more lookup, not a
 * wrong verdict, and a smaller, faster Bloom part pays (docs/BENCHMARKS.md,
 * issue 11). */
#define BG_FPR_DEFAULT 0.001
#define BG_FPR_DEFAULT_CONFIRM 0.01
#define bg_fpr_default(confirm) ((confirm) ? BG_FPR_DEFAULT_CONFIRM : BG_FPR_DEFAULT)
#define BG_FPR_MIN 1e-9
#define BG_FPR_MAX 0.5
/* IPv6 prefixes are expanded by at most 2^BG_CPE_MAX_BITS keys each; the
 * lengths that would need more go to the exact short-prefix ranges. */
#define BG_CPE_MAX_BITS 12
/* Fewer probed lengths are preferred while they need at most this many
 * times the minimum number of Bloom keys. */
#define BG_CPE_KEY_SLACK 2.0

struct bg_filter_params {
	/* Bloom part */
	uint64_t n; /* keys, after expansion */
	double target; /* requested false-positive rate */
	uint32_t nblocks; /* 512-bit blocks */
	uint32_t k; /* bits per key */
	double predicted; /* model false-positive rate per Bloom probe */
	double predicted_addr; /* per address or query, worst case: the most
				  probes one lookup makes (plan_probes) */
	double bits_per_entry; /* 512 * nblocks / n */
	/* Plan (bg_filter_plan) */
	uint8_t n4, n6; /* prefix lengths probed per family */
	uint8_t len4[BG_PROBES_MAX], len6[BG_PROBES_MAX]; /* longest first */
	int short4; /* the IPv4 /16 bitmap is used */
	uint8_t short6_below; /* IPv6 prefixes shorter than this: ranges */
	uint64_t prefixes4, prefixes6; /* listed entries per family */
	uint64_t short4_prefixes; /* IPv4 entries held by the bitmap */
	uint64_t short6_prefixes; /* IPv6 entries held by the exact ranges */
	uint64_t keys4, keys6; /* Bloom keys per family after expansion */
	uint32_t short6_n, allow4_n, allow6_n; /* exact ranges */
	uint32_t allown_n; /* allowed name keys (planned: an upper bound, the
			      header has the distinct count) */
	uint64_t name_keys; /* Bloom keys of domain names (bl->names) */
	uint16_t subs_depths; /* bit i: a SUBS key of a name of i labels is in
				 the Bloom part (bg_filter_header.subs_depths):
				 the suffix depths a query probes */
	uint64_t names_too_deep; /* subdomain rules (block or allow) over
				    BG_DNS_SUFFIX_MAX labels: never matched,
				    not loaded */
	/* The exact stage (issue 11): 0 buckets with confirm off */
	int confirm; /* 1: every Bloom key also in the fingerprint table */
	uint32_t fp_nbuckets; /* BG_FP_PER_BUCKET fingerprints each */
	double fp_load; /* keys / slots */
	/* predicted false-positive rate per address or query once the stage
	 * has confirmed (== predicted_addr without the stage) */
	double predicted_confirmed;
	/* Map layout */
	uint32_t bloom_off, fp_off, allow4_off, allow6_off, short6_off, allown_off;
	uint32_t nelems;
	size_t bytes; /* whole map: nelems * 64 */
	/* 0: the map has the size planned; else fitted to a fixed-size map
	 * (bg_filter_fit): nelems == capacity */
	uint32_t capacity;
};

/*
 * False-positive rate of one Bloom probe for n keys in nblocks blocks with
 * k bits per key: a non-member lands in a block holding j keys,
 * j ~ Poisson(n / nblocks); its d distinct bit positions (k draws from
 * 512, duplicates possible) are all set when none of them was missed by
 * the j*k independent bit draws of those keys (inclusion-exclusion).
 */
double bg_filter_model_fpr(uint64_t n, uint32_t nblocks, uint32_t k);

/* Smallest Bloom part meeting target for n keys (best k). -EINVAL, -E2BIG.
 * Fills the Bloom fields of p only. */
int bg_filter_size(uint64_t n, double target, struct bg_filter_params *p);

/*
 * Plans a filter for a finished blocklist (bg_blocklist_finish()): blocked
 * addresses and names, allowed addresses and names; prefix lengths to probe
 * (controlled prefix expansion to at most BG_PROBES_MAX lengths per family),
 * exact parts, the Bloom part sized for target (per address or query), the
 * exact stage when confirm is 1 (bloomgate/lookup.h), and the map layout.
 * -EINVAL, -E2BIG.
 */
int bg_filter_plan_confirm(const struct bg_blocklist *bl, double target,
			   int confirm, struct bg_filter_params *p);
/* bg_filter_plan_confirm() with the exact stage: the default. */
int bg_filter_plan(const struct bg_blocklist *bl, double target,
		   struct bg_filter_params *p);

/*
 * The size in elements of a fixed-size filter map (`attach --capacity`)
 * for keys Bloom keys at BG_FPR_DEFAULT_CONFIRM: the header, the IPv4 /16 bitmap
 * (always reserved), the Bloom blocks bg_filter_size() plans for them and
 * the exact stage's buckets (a load with --confirm off leaves them to the
 * Bloom part).
 * 0 when that is too large.
 */
__u32 bg_filter_capacity_elems(uint64_t keys);
/* Buckets of the exact stage for keys Bloom keys (0 for none). */
uint32_t bg_filter_fp_buckets(uint64_t keys);
/* The inverse, for `status`: the most keys whose capacity is at most elems
 * elements (0 when not even an empty Bloom part fits). */
uint64_t bg_filter_capacity_keys(__u32 elems);

/*
 * Fits a plan (bg_filter_plan) to a fixed-size map of capacity elements:
 * the Bloom part grows to fill it exactly (nelems == capacity), k and the
 * predicted rates are recomputed for the blocks used, which only lowers
 * them. -ENOSPC, p unchanged, when the plan needs more than capacity.
 */
int bg_filter_fit(struct bg_filter_params *p, __u32 capacity);
/*
 * Puts a plan in a map of capacity elements as it is: its tables where it
 * planned them, zeros after (a growing capacity's map: the slack is
 * headroom for the next loads, and a Bloom part spread over it would make
 * every lookup's working set larger: measured, a 1M flood 15 % slower).
 * -ENOSPC, p unchanged, when it needs more.
 */
int bg_filter_pad(struct bg_filter_params *p, __u32 capacity);
/* The elements a plan's tables take (its nelems, unless padded). */
__u32 bg_filter_used(const struct bg_filter_params *p);


/* Fills a zeroed buffer of p->bytes as planned. -ENOMEM; -EAGAIN when the
 * exact stage could not place every key with this seed (never seen at the
 * planned load: build again with another seed). */
int bg_filter_build(void *mem, const struct bg_filter_params *p,
		     uint64_t seed, const struct bg_blocklist *bl);
/* bg_filter_build() on threads threads (0: every online CPU); the filter
 * is the same bit for bit whatever their number. */
int bg_filter_build_mt(void *mem, const struct bg_filter_params *p,
		       uint64_t seed, const struct bg_blocklist *bl,
		       unsigned int threads);
/* bg_filter_build_mt() of a zeroed buffer, again with seeds derived from
 * seed when the exact stage cannot place every key (up to 3 more: the
 * header holds the seed used), and the header checked (bg_header_ok):
 * what `load` builds into a map and `build` into an artifact, so that
 * the two are the same bit for bit. 0, -ENOSPC (no seed placed every
 * key), -EINVAL, -ENOMEM. */
int bg_filter_build_seeded(void *mem, const struct bg_filter_params *p,
			   uint64_t seed, const struct bg_blocklist *bl,
			   unsigned int threads);
/* For tests: passes of pass_keys Bloom keys instead of the build's own
 * bound (0: that bound), so that small lists take several. */
int bg_filter_build_ex(void *mem, const struct bg_filter_params *p,
		       uint64_t seed, const struct bg_blocklist *bl,
		       unsigned int threads, size_t pass_keys);

/* Elements a filter with this header spans (header included). */
__u32 bg_filter_nelems(const struct bg_filter_header *h);

/* Userspace lookups in a built filter of nelems elements, with the same
 * code as the datapath (bloomgate/lookup.h). 1 = maybe listed. */
int bg_filter_test4(const void *mem, __u32 addr_be);
int bg_filter_test6(const void *mem, const __u8 addr[16]);
/* 1 = the exact allowlist holds the address. */
int bg_filter_allowed4(const void *mem, __u32 addr_be);
int bg_filter_allowed6(const void *mem, const __u8 addr[16]);
/* bg_filter_test4/6 that also tell a Bloom positive the exact stage
 * rejected (*rejected = 1, not listed: a false positive of the Bloom part,
 * what the datapath counts as bloom_false_positives). */
int bg_filter_judge4(const void *mem, __u32 addr_be, int *rejected);
int bg_filter_judge6(const void *mem, const __u8 addr[16], int *rejected);

/*
 * Names, as bloomgate_dns judges a query for the dotted name (no trailing
 * dot; letters are lowercased): 1 = maybe listed (Bloom part) / allowed
 * (exact allow table), 0 = not, -1 = not a legal name. *label (may be
 * NULL) is set on a match: 0 when the whole name matched as an exact key,
 * j >= 1 when the suffix from the j-th label (0-based) matched as a
 * subdomains key. A filter without BG_FILTER_F_NAMES matches no name.
 */
int bg_filter_test_name(const void *mem, const char *name, int *label);
int bg_filter_name_allowed(const void *mem, const char *name, int *label);
/* bg_filter_test_name, and *probes (not NULL) = the Bloom probes
 * bloomgate_dns makes for the name (its dns_probes): the exact key, then
 * the suffix depths in the header's subs_depths, up to the first positive;
 * 0 for a filter without names or an illegal name. */
int bg_filter_test_name_probes(const void *mem, const char *name, int *label,
			       __u32 *probes);
/* And *rejected (not NULL): a Bloom positive the exact stage rejected,
 * nothing confirmed (dns_bloom_false_positives). */
int bg_filter_judge_name(const void *mem, const char *name, int *label,
			 __u32 *probes, int *rejected);

#endif
