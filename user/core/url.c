// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A URL without its secret (user/core/url.h). */
#include <stdio.h>
#include <string.h>

#include "core/url.h"

/*
 * The userinfo of url: [*s, *e) between "scheme://" and the last '@'
 * before the end of the authority (the first '/', '?' or '#' after it).
 * 0 when there is none.
 */
static int userinfo(const char *url, const char **s, const char **e)
{
	const char *p = strstr(url, "://"), *end, *at = NULL, *q;

	if (!p)
		return 0;
	p += 3;
	end = p + strcspn(p, "/?#");
	for (q = p; q < end; q++)
		if (*q == '@')
			at = q; /* the last one: '@' may appear in a password */
	if (!at)
		return 0;
	*s = p;
	*e = at;
	return 1;
}

int bg_url_has_secret(const char *url)
{
	const char *s, *e;

	return url && userinfo(url, &s, &e);
}

char *bg_url_redact(const char *url, char *out, size_t len)
{
	const char *s, *e, *colon;
	size_t keep;

	if (!len)
		return out;
	if (!url || !userinfo(url, &s, &e)) {
		snprintf(out, len, "%s", url ? url : "");
		return out;
	}
	colon = memchr(s, ':', (size_t)(e - s));
	/* keep "scheme://" and the user name, not a byte after it */
	keep = (size_t)((colon ? colon + 1 : s) - url);
	if (keep >= len) {
		/* too short for even the name: nothing of the URL */
		snprintf(out, len, "%s", BG_URL_SECRET);
		return out;
	}
	memcpy(out, url, keep);
	snprintf(out + keep, len - keep, "%s%s", BG_URL_SECRET, e);
	return out;
}
