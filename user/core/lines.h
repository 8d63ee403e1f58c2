/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The lines of a list buffer, numbered from 1: one iterator for every list
 * reader (address lists, domain lists, check's find_covering), so that line
 * numbers always agree. Inline: it sits in the per-line loop of 10M-line
 * parses.
 */
#ifndef BLOOMGATE_LINES_H
#define BLOOMGATE_LINES_H

#include <stddef.h>
#include <string.h>

struct bg_line_iter {
	const char *p, *end;
	size_t lineno;
	int has_nul; /* the buffer holds a NUL byte somewhere */
};

static inline void bg_lines_init(struct bg_line_iter *it, const char *buf,
				 size_t len)
{
	it->p = it->end = buf;
	it->lineno = 0;
	it->has_nul = 0;
	if (!len)
		return; /* buf may be NULL */
	it->end = buf + len;
	/* A UTF-8 byte-order mark, as some editors write, is not content. */
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		it->p += 3;
	/* One scan for NUL bytes, so clean lists skip the check per line. */
	it->has_nul = memchr(buf, '\0', len) != NULL;
}

/* The next line as [*s, *e), without its "\n"; 0 after the last. */
static inline __attribute__((always_inline)) int
bg_lines_next(struct bg_line_iter *it, const char **s, const char **e)
{
	const char *nl;

	if (it->p >= it->end)
		return 0;
	nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
	*s = it->p;
	*e = nl ? nl : it->end;
	it->p = nl ? nl + 1 : it->end;
	it->lineno++;
	return 1;
}

#endif
