/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * From the prefix model (prefix_model.h) to what user/ consumes, shared by
 * tests/bpf/test_prefixes.c and tests/unit/test_plan.c: a bg_list of the
 * model's prefixes, and the one place these suites call the planner, so
 * that a change of its signature is one edit here. Needs cmocka.
 */
#ifndef BLOOMGATE_TESTS_PREFIX_LISTS_H
#define BLOOMGATE_TESTS_PREFIX_LISTS_H

#include <stdlib.h>

#include "core/filter.h"
#include "core/lists.h"

#include "blocklist.h"
#include "prefix_model.h"

/* Appends one model prefix to l as the key `load` would make of it. */
static inline void list_add(struct bg_list *l, const struct pfx *p)
{
	if (!p->v6) {
		if (l->n4 == l->cap4) {
			l->cap4 = l->cap4 ? 2 * l->cap4 : 64;
			l->v4 = realloc(l->v4, l->cap4 * sizeof(*l->v4));
			assert_non_null(l->v4);
		}
		bg_key4_init(&l->v4[l->n4++], htonl((uint32_t)p->a), (__u8)p->plen);
	} else {
		__u8 b[16];

		if (l->n6 == l->cap6) {
			l->cap6 = l->cap6 ? 2 * l->cap6 : 64;
			l->v6 = realloc(l->v6, l->cap6 * sizeof(*l->v6));
			assert_non_null(l->v6);
		}
		to_bytes(p->a, b);
		bg_key6_init(&l->v6[l->n6++], b, (__u8)p->plen);
	}
}

/*
 * A bg_list of the prefixes of s (none when s is NULL). With finish, it is
 * sorted, de-duplicated and its covered entries removed, as `bloomgate
 * load` hands it to the planner; without, raw (overlaps left in).
 */
static inline void list_from(struct bg_list *l, const struct pset *s,
			     int finish)
{
	size_t i;

	bg_list_init(l);
	for (i = 0; s && i < s->n; i++)
		list_add(l, &s->v[i]);
	if (finish)
		bg_list_finish(l);
}

/* bg_filter_plan() of a block list and an optional allowlist. */
static inline int plan_lists(const struct bg_list *block,
			     const struct bg_list *allow, double fpr,
			     struct bg_filter_params *p)
{
	return bg_filter_plan(BL(block, allow, NULL), fpr, p);
}

#endif
