/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one enum of list formats, shared by the address parser (user/core/lists.h),
 * the domain parser (user/core/domains.h), detection and dispatch
 * (user/core/sources.h), the load record and the CLI's --format. Depends on
 * nothing: it is vocabulary, below every parser.
 */
#ifndef BLOOMGATE_FORMAT_H
#define BLOOMGATE_FORMAT_H

enum bg_format {
	BG_FMT_AUTO = 0, /* detect per file (bg_format_detect()) */
	BG_FMT_ADDR, /* addresses and CIDR prefixes (user/core/lists.h) */
	BG_FMT_PLAIN, /* one domain a line (user/core/domains.h) */
	BG_FMT_HOSTS, /* 0.0.0.0 name [name...] */
	BG_FMT_ADBLOCK, /* ||name^, @@||name^ */
	BG_FMT__COUNT,
};

/* "auto", "addr", "plain", "hosts", "adblock"; "?" for anything else. */
const char *bg_format_name(int format);
/* The format named s (the names above), or -1. */
int bg_format_parse(const char *s);

#endif
