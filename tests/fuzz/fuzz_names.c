// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the domain-list parser (user/core/domains.c) in every format
 * (auto-detected, plain, hosts, adblock), lenient and strict, then
 * bg_names_finish(). Checks: every name kept is normalised (a second
 * bg_name_normalise() leaves it as it is), hashes as a legal name
 * (bg_name_hashes, the userspace form of the datapath's keys), and the
 * finished list has no exact duplicate.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomgate/dns.h"
#include "core/domains.h"

static FILE *sink(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

static void check_names(const struct bg_names *l)
{
	__u64 exact, suf[BG_DNS_LABELS_MAX + 1];
	char norm[256];
	const char *why;
	size_t i;
	int n;

	for (i = 0; i < l->n; i++) {
		const struct bg_name *e = &l->v[i];
		size_t len = strlen(e->name);

		if (bg_name_normalise(e->name, len, norm, &why) ||
		    strcmp(norm, e->name))
			abort();
		if (bg_name_hashes(e->name, 1, &exact, suf, &n) || n < 1)
			abort();
		if (i && !strcmp(l->v[i - 1].name, e->name) &&
		    l->v[i - 1].kind == e->kind && l->v[i - 1].allow == e->allow)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum bg_format fmts[] = { BG_FMT_AUTO, BG_FMT_PLAIN,
					       BG_FMT_HOSTS, BG_FMT_ADBLOCK };
	char norm[256];
	const char *why;
	size_t f;
	int strict;

	(void)bg_dom_detect((const char *)data, size);
	if (!bg_name_normalise((const char *)data, size, norm, &why)) {
		char again[256];

		if (bg_name_normalise(norm, strlen(norm), again, &why) ||
		    strcmp(norm, again))
			abort(); /* normalising is idempotent */
	}
	for (f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
		for (strict = 0; strict <= 1; strict++) {
			struct bg_dom_opts o = { .format = fmts[f],
						 .subdomains = (int)(f & 1),
						 .strict = strict,
						 .report = sink() };
			struct bg_names l;

			bg_names_init(&l);
			(void)bg_names_parse_buf(&l, "fuzz", (const char *)data,
						 size, &o);
			bg_names_finish(&l);
			check_names(&l);
			bg_names_free(&l);
		}
	}
	return 0;
}
