/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A built filter changed in place from one blocklist to another, without
 * a rebuild: what an incremental generation of the fleet store ships (its
 * changed 64-byte elements, core/artifact.h's deltas).
 *
 * The Bloom part cannot delete, the exact stage can: a key added sets its
 * Bloom bits and puts its fingerprint in the exact stage; a key removed
 * has its fingerprint deleted (its Bloom bits stay: it becomes a Bloom
 * positive the stage rejects, counted as bloom_false_positives), so
 * removals are exact. The exact tables (the IPv4 /16 bitmap, the allow
 * ranges, the short IPv6 ranges, the allowed names) are written again
 * from the new blocklist, in place, when they keep their sizes.
 *
 * Core part: no libbpf.
 */
#ifndef BLOOMGATE_CORE_PATCH_H
#define BLOOMGATE_CORE_PATCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/filter.h"
#include "core/sources.h"

struct bg_patch_result {
	uint64_t added, removed; /* Bloom keys */
	/* bloom_loaded + added: the keys whose bits are set in the Bloom part
	 * (a removed key's stay), for the rate model */
	uint64_t bloom_loaded;
	/* p with new's counts (keys, prefixes, allow entries, names) and the
	 * rates predicted for bloom_loaded keys in p's blocks; the layout is
	 * p's */
	struct bg_filter_params plan;
};

/*
 * mem: a filter image of p->nelems elements (a copy: it is changed) that
 * holds exactly the blocklist old (finished, bg_blocklist_finish()) with
 * the seed in its header: built from old by bg_filter_build*(), or patched
 * to it by this function. p: its plan (core/artifact.h's
 * bg_art_plan_params() of the artifact's header). bloom_loaded: the keys
 * whose bits its Bloom part holds (the artifact plan's bloom_loaded).
 *
 * Changes mem to hold new: afterwards every key of new is listed (and
 * confirmed by the exact stage), no key of old that new does not have is
 * (the exact stage rejects it), and the exact tables are new's. The
 * exact stage's walk knows which bucket each resident fingerprint may move
 * to from old's keys.
 *
 * 0 with *res filled; -EXDEV, mem in an unspecified state and why saying
 * why, when new cannot be expressed in p's plan (the filter must then be
 * built whole): a prefix length p neither probes nor expands to, an IPv4
 * prefix of /16 or shorter without the bitmap, an exact table of another
 * size, no exact stage (a removal could not be exact), the exact stage too
 * full for a key, or mem not holding old's keys as expected. -ENOMEM.
 * threads: 0 every CPU.
 */
int bg_filter_patch(void *mem, const struct bg_filter_params *p,
		    uint64_t bloom_loaded, const struct bg_blocklist *old,
		    const struct bg_blocklist *new, unsigned int threads,
		    struct bg_patch_result *res, char *why, size_t whylen);

/*
 * A filter kept for small changes of one part of its lists (the agent's
 * crowdsec: decisions, beside lists that change seldom): its image in
 * memory, the owner of every slot of its exact stage (claimed as
 * bg_filter_patch() claims them), and the Bloom keys of its fixed part
 * (every list but the changing ones). A change of the changing part is
 * then made in place at a cost of microseconds a key, whatever the
 * filter's size: a key the new part has and neither the old part nor the
 * fixed part has sets its Bloom bits and puts its fingerprint in the
 * stage; a key the old part had and neither the new part nor the fixed
 * part has loses its fingerprint (its bits stay). The fixed part's keys
 * are never touched.
 */
struct bg_inc;

struct bg_inc_result {
	uint64_t added, removed; /* Bloom keys */
	uint64_t bloom_loaded; /* keys whose bits the Bloom part holds */
	double predicted_addr; /* the Bloom part's rate with them */
};

/*
 * image (taken: munmap'd by bg_inc_free(), len bytes): the filter built
 * from all (finished) with plan p and the seed in its header; fixed: the
 * part of all that does not change (finished); bloom_loaded: the keys
 * whose bits its Bloom part holds (p->n for a fresh build). 0, -EXDEV
 * (why: the image does not hold all's keys, no exact stage), -ENOMEM;
 * image is freed on failure too.
 */
int bg_inc_new(void *image, size_t len, const struct bg_filter_params *p,
	       uint64_t bloom_loaded, const struct bg_blocklist *all,
	       const struct bg_blocklist *fixed, unsigned int threads,
	       struct bg_inc **out, char *why, size_t whylen);

/*
 * The changing part from old_part to new_part (both finished), in the
 * image. -EXDEV with why, the image unchanged, when the new part does not
 * fit the plan (a prefix length it does not probe, a /16 or shorter, an
 * IPv6 range too wide to expand) or would raise the Bloom part's rate past
 * bound times its target; -EXDEV with why and the image changed in part
 * (the caller must drop inc and build the filter whole) when the exact
 * stage has no room for a key. -ENOMEM.
 */
int bg_inc_apply(struct bg_inc *inc, const struct bg_blocklist *old_part,
		 const struct bg_blocklist *new_part, double bound,
		 struct bg_inc_result *res, char *why, size_t whylen);

/* The image as it is now, and its plan. */
const void *bg_inc_image(const struct bg_inc *inc, size_t *len);
const struct bg_filter_params *bg_inc_plan(const struct bg_inc *inc);
void bg_inc_free(struct bg_inc *inc);

#endif
