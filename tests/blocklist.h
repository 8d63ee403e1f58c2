/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Tests build their lists part by part; the planner and builder take one
 * struct bg_blocklist (user/core/sources.h). BL(block, allow, names) makes a
 * read-only view of the parts given (NULL: empty), sharing their arrays:
 * for bg_filter_plan(), bg_filter_build() and bg_filter_create() only,
 * never to be freed.
 */
#ifndef BLOOMGATE_TESTS_BLOCKLIST_H
#define BLOOMGATE_TESTS_BLOCKLIST_H

#include <stdlib.h>
#include <string.h>

#include "core/sources.h"

static inline struct bg_blocklist bl_view(const struct bg_list *block,
					  const struct bg_list *allow,
					  const struct bg_names *names)
{
	struct bg_blocklist bl;

	bg_blocklist_init(&bl);
	if (block)
		bl.block = *block;
	if (allow)
		bl.allow = *allow;
	if (names)
		bl.names = *names;
	return bl;
}

/* The entries of a and b (may be NULL) in one bg_names for BL(): the array
 * is new (free(out->v)), the names are shared. */
static inline void names_concat(struct bg_names *out, const struct bg_names *a,
				const struct bg_names *b)
{
	size_t na = a ? a->n : 0, nb = b ? b->n : 0;

	bg_names_init(out);
	out->v = calloc(na + nb ? na + nb : 1, sizeof(*out->v));
	if (!out->v)
		abort();
	if (na)
		memcpy(out->v, a->v, na * sizeof(*out->v));
	if (nb)
		memcpy(out->v + na, b->v, nb * sizeof(*out->v));
	out->n = na + nb;
}

#define BL(block, allow, names) \
	((const struct bg_blocklist[]){ bl_view((block), (allow), (names)) })

#endif
