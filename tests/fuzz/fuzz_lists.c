// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the address-list parser (user/core/lists.c) on any bytes,
 * lenient and strict, then bg_list_finish(). Beyond "no crash, no leak, no
 * undefined behaviour" (ASan, UBSan), it checks what every caller relies
 * on: counts add up, every key has its kind, a prefix length in range and
 * no host bits set, the finished list has no duplicates, no wide prefix
 * without the opt-in, and the store's scan (bg_list_scan) accepts exactly
 * the entries the lenient loader with --allow-wide accepts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomgate/bloom.h"
#include "core/lists.h"

static FILE *sink(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

static void check_list(const struct bg_list *l)
{
	size_t i;

	for (i = 0; i < l->n4; i++) {
		const struct bg_key4 *k = &l->v4[i];

		if (k->kind != BG_KEY_IPV4 || k->plen > 32 || k->pad ||
		    (k->addr & ~bg_mask4(k->plen)))
			abort();
		if (i && memcmp(&l->v4[i - 1], k, sizeof(*k)) == 0)
			abort(); /* a duplicate survived bg_list_finish */
	}
	for (i = 0; i < l->n6; i++) {
		const struct bg_key6 *k = &l->v6[i];
		struct bg_key6 m;

		if (k->kind != BG_KEY_IPV6 || k->plen > 128 || k->pad0 || k->pad1)
			abort();
		bg_key6_init(&m, k->addr, k->plen);
		if (memcmp(&m, k, sizeof(m)))
			abort(); /* host bits set */
		if (i && memcmp(&l->v6[i - 1], k, sizeof(*k)) == 0)
			abort();
	}
	if (l->accepted + l->rejected > l->lines)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* lenient, lenient with wide prefixes, strict */
	static const struct { int strict, wide; } modes[] = {
		{ 0, 0 }, { 0, 1 }, { 1, 0 }
	};
	size_t m;

	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct bg_list_opts o = { .strict = modes[m].strict,
					  .allow_wide = modes[m].wide,
					  .report = sink() };
		struct bg_list l;
		size_t i;
		int r;

		bg_list_init(&l);
		r = bg_list_parse_buf(&l, "fuzz", (const char *)data, size, &o);
		if (o.strict && r == 0 && l.rejected)
			abort(); /* strict must fail on a rejected line */
		/* the store's scan reads every entry a list can load, wide
		 * prefixes included (check filters those by the list's
		 * setting): exactly what the lenient loader with the opt-in
		 * accepts */
		if (!o.strict && o.allow_wide && r == 0 &&
		    (size_t)bg_list_scan((const char *)data, size, NULL, NULL) !=
			    l.accepted)
			abort();
		bg_list_finish(&l);
		check_list(&l);
		/* without the opt-in, no wide prefix is ever loaded */
		for (i = 0; !o.allow_wide && i < l.n4; i++)
			if (bg_key_wide(BG_KEY_IPV4, &l.v4[i], NULL))
				abort();
		for (i = 0; !o.allow_wide && i < l.n6; i++)
			if (bg_key_wide(BG_KEY_IPV6, NULL, &l.v6[i]))
				abort();
		bg_list_free(&l);
	}
	return 0;
}
