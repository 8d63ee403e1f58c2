// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * roff escapes for the generated man pages (roff.h).
 */
#include <string.h>

#include "core/roff.h"

static void roff_n(FILE *f, const char *s, size_t n, int at_bol)
{
	size_t i;

	for (i = 0; i < n && s[i]; i++) {
		if (at_bol && (s[i] == '.' || s[i] == '\''))
			fputs("\\&", f);
		at_bol = 0;
		if (s[i] == '\\')
			fputs("\\e", f);
		else if (s[i] == '-')
			fputs("\\-", f);
		else if (s[i] == '\n') {
			fputc('\n', f);
			at_bol = 1;
		} else
			fputc(s[i], f);
	}
}

void bg_roff_str(FILE *f, const char *s, int at_bol)
{
	roff_n(f, s, strlen(s), at_bol);
}

void bg_roff_block(FILE *f, const char *text)
{
	const char *p = text, *nl;
	int nofill = 0;

	while (*p) {
		size_t len;

		nl = strchr(p, '\n');
		len = nl ? (size_t)(nl - p) : strlen(p);
		if (!len) {
			fputs(".sp\n", f);
		} else {
			int pre = p[0] == ' ' || p[0] == '\t';

			if (pre != nofill)
				fputs(pre ? ".nf\n" : ".fi\n", f);
			nofill = pre;
			roff_n(f, p, len, 1);
			fputc('\n', f);
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	if (nofill)
		fputs(".fi\n", f);
}
