/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What user/core/filter.c shares with user/core/patch.c, and no one else:
 * a patched filter must hold exactly the keys and tables a build of the
 * same blocklist would write, so both come from the build's own code (its
 * enumeration of a blocklist's Bloom keys under a plan's probed lengths,
 * its table builders, its rate model) rather than from a second copy that
 * could drift. Internal to the core.
 */
#ifndef BLOOMGATE_CORE_FILTER_PRIV_H
#define BLOOMGATE_CORE_FILTER_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "bloomgate/abi.h"

/* Declared, not included: filter.c includes this header, and a header of
 * its own that included filter.h back would be an include circle
 * (tests/e2e/test_layers.sh). */
struct bg_blocklist;
struct bg_filter_params;
struct bg_list;
struct bg_names;

/* Kicks of the exact stage's random walk before a key is given up. */
#define BG_FP_KICKS 2000

/*
 * The counts of bl in p's layout: p's probed lengths (len4, len6), short4
 * and short6_below are kept, and prefixes4/6, short4_prefixes,
 * short6_prefixes, keys4/6, name_keys, subs_depths, names_too_deep,
 * allown_n (planned: duplicates included) and n (keys4 + keys6 +
 * name_keys) are set as bg_filter_plan_confirm() would for that plan.
 * -EXDEV with why when a prefix of bl has no place in it: an IPv4 /16 or
 * shorter without the bitmap, a length no probed length serves, an IPv6
 * expansion past 2^BG_CPE_MAX_BITS keys; -ENOMEM.
 */
int bg_filter_plan_counts(const struct bg_blocklist *bl,
			  struct bg_filter_params *p, char *why, size_t whylen);

/*
 * The Bloom hashes of bl's keys as bg_filter_build() makes them with p and
 * seed (a prefix as the keys of its probed length, a name as its EXACT
 * and/or SUBS key), sorted ascending and distinct, in *v (malloc'd, the
 * caller frees it) and *n. Hashed and sorted on threads threads (0: every
 * CPU); the result does not depend on their number. The lengths must
 * serve every prefix (bg_filter_plan_counts()): one they do not is left
 * out, as the build does. 0 or -ENOMEM.
 */
int bg_filter_key_hashes(const struct bg_filter_params *p, uint64_t seed,
			 const struct bg_blocklist *bl, unsigned int threads,
			 uint64_t **v, size_t *n);

/* The IPv4 /16 bitmap of a list's prefixes of /16 or shorter, or-ed into
 * bitmap (BG_SHORT4_ELEMS elements), as the build sets it. */
void bg_filter_short4_bitmap(const struct bg_list *l, struct bg_block *bitmap);

/* The build's range tables: the ranges of l's prefixes shorter than below
 * (33 / 129: all), sorted and merged, into out (room for every prefix of
 * the family in l); their count, UINT32_MAX when out of memory. */
uint32_t bg_filter_ranges4(const struct bg_list *l, int below,
			   struct bg_range4 *out);
uint32_t bg_filter_ranges6(const struct bg_list *l, int below,
			   struct bg_range6 *out);
/* The allowed name keys of names, sorted and distinct, into out (room for
 * p->allown_n keys as bg_filter_plan_counts() counts them, zeroed past the
 * ones written); how many. */
uint32_t bg_filter_allow_names(__u64 *out, const struct bg_filter_params *p,
			       uint64_t seed, const struct bg_names *names);

/* p's predicted rates (predicted, predicted_addr, bits_per_entry, fp_load,
 * predicted_confirmed) for loaded keys' bits in p's Bloom part, p->n keys
 * in its exact stage and the probes p's lengths and subs_depths make:
 * with loaded == p->n, what the plan says. */
void bg_filter_plan_rates(struct bg_filter_params *p, uint64_t loaded);

#endif
