/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The datapath's lookups (bloomgate/lookup.h) on a filter held in memory:
 * built by bg_filter_build(), or the live map mapped by
 * bg_filter_map_current(). lookup.h asks its includer how an element is
 * reached; in userspace it is this one definition, bounds-checked against
 * the element count the header implies, its chunk mapped first when the
 * filter is a view (core/view.h). Included by user/core/filter.c, the
 * bench and the tests, never twice in one unit.
 */
#ifndef BLOOMGATE_MEM_LOOKUP_H
#define BLOOMGATE_MEM_LOOKUP_H

#include "core/filter.h"
#include "core/view.h"

/* In a view (core/view.h), the element's chunk is mapped first. */
static inline const void *bg_elem(const void *filter, __u32 idx)
{
	const struct bg_block *b = (const struct bg_block *)filter + idx;

	return idx < bg_filter_nelems(filter) && !bg_view_ready(b, sizeof(*b)) ?
		       b :
		       NULL;
}

#include "bloomgate/lookup.h"

#endif
