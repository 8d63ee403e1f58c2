// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The protected set against an artifact's filter (core/artprotect.h): its
 * covers found by probing, named from its index. Apart from core/protect.c,
 * which the explanation (core/explain.h) and the artifact's own code
 * reach: the artifact is above both.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/artifact.h"
#include "core/artindex.h"
#include "core/artprotect.h"
#include "core/filter.h"

/* The item's (first) address probed against a filter image: 1 if it
 * would be dropped but for the set (listed, not allowlisted). */
static int image_lists(const void *mem, const struct bg_protect_item *it)
{
	__u32 a;

	if (it->family == BG_KEY_IPV4) {
		memcpy(&a, it->addr, 4);
		return bg_filter_judge4(mem, a, NULL) && !bg_filter_allowed4(mem, a);
	}
	return bg_filter_judge6(mem, it->addr, NULL) && !bg_filter_allowed6(mem, it->addr);
}

/* The blocked entries an artifact's index holds for the item's address,
 * pushed with their lists' names; none found: one cover naming no list. */
static int art_hits(struct bg_art_finder *f, int have, struct bg_protect_cover *x,
		    struct bg_protect_covers *c)
{
	struct bg_explain_hit *hits = NULL;
	char arg[INET6_ADDRSTRLEN];
	size_t n = 0, i;
	int ret = 0, named = 0;

	inet_ntop(x->family == BG_KEY_IPV4 ? AF_INET : AF_INET6, x->what.addr, arg,
		  sizeof(arg));
	if (have && bg_art_find(f, arg, &hits, &n))
		n = 0;
	for (i = 0; i < n && !ret; i++) {
		if (hits[i].allow || !bg_parse_prefix(hits[i].entry, &x->k4, &x->k6, NULL))
			continue;
		snprintf(x->list, sizeof(x->list), "%s", hits[i].source);
		ret = bg_protect_covers_push(c, x);
		named++;
	}
	free(hits);
	if (!ret && !named) {
		x->list[0] = 0;
		x->unnamed = 1;
		ret = bg_protect_covers_push(c, x);
	}
	return ret;
}

int bg_protect_art_covers(const struct bg_art *a, const struct bg_protect_set *s,
			  struct bg_protect_covers *c)
{
	struct bg_art_finder f;
	struct bg_protect_cover x;
	size_t len, ilen;
	const void *mem = bg_art_sec(a, BG_ART_SEC_FILTER, &len);
	const void *idx = bg_art_sec(a, BG_ART_SEC_INDEX, &ilen);
	__u32 i;
	int have = 0, ret = 0;

	if (!mem)
		return 0;
	/* the index read where the artifact is, borrowed */
	memset(&f, 0, sizeof(f));
	f.a = *a;
	f.a.mapped = 0;
	have = idx && !bg_ai_valid(idx, ilen) && !bg_art_sources_read(a, &f.s);
	for (i = 0; !ret && i < s->nitems && i < BG_PROTECT_MAX; i++) {
		if (!image_lists(mem, &s->item[i]))
			continue;
		memset(&x, 0, sizeof(x));
		x.what = s->item[i];
		x.family = x.what.family;
		x.source = SIZE_MAX;
		ret = art_hits(&f, have, &x, c);
	}
	if (have)
		bg_art_sources_free(&f.s);
	return ret;
}
