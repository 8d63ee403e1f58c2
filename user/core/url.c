// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A URL without its secret (user/core/url.h). */
#include <errno.h>
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

char *bg_redact(const char *s, const struct bg_span *v, size_t n, char *out,
		size_t len)
{
	size_t i = 0, o = 0, j, k, end;

	if (!out || !len)
		return out;
	out[0] = '\0';
	if (!s)
		return out;
	/* copied up to each span, the mask instead of it: the bytes of a
	 * span are never written, so a short out cuts no secret in half */
	for (j = 0; j <= n && o + 1 < len; j++) {
		end = j < n ? v[j].off : strlen(s);
		k = end - i < len - 1 - o ? end - i : len - 1 - o;
		memcpy(out + o, s + i, k);
		o += k;
		if (j == n)
			break;
		k = strlen(BG_URL_SECRET) < len - 1 - o ? strlen(BG_URL_SECRET) : len - 1 - o;
		memcpy(out + o, BG_URL_SECRET, k);
		o += k;
		i = v[j].off + v[j].len;
	}
	out[o] = '\0';
	return out;
}

char *bg_url_redact(const char *url, char *out, size_t len)
{
	const char *s, *e, *colon;
	struct bg_span v;
	size_t n = 0;

	if (url && userinfo(url, &s, &e)) {
		/* the user name kept, not a byte after it */
		colon = memchr(s, ':', (size_t)(e - s));
		v.off = (size_t)((colon ? colon + 1 : s) - url);
		v.len = (size_t)(e - url) - v.off;
		n = 1;
	}
	return bg_redact(url ? url : "", &v, n, out, len);
}

int bg_hostport(const char *s, unsigned int min_port, char *host,
		size_t hostlen, unsigned int *port, int *bracketed,
		const char **why)
{
	const char *colon, *h = s, *p;
	unsigned long v = 0;
	size_t hl;

	if (*s == '[') {
		const char *e = strchr(s, ']');

		if (!e || e[1] != ':') {
			*why = "an IPv6 address is written [ADDR]:PORT";
			return -EINVAL;
		}
		h = s + 1;
		hl = (size_t)(e - h);
		colon = e + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon) {
			*why = "no :PORT";
			return -EINVAL;
		}
		hl = (size_t)(colon - s);
		if (memchr(s, ':', hl)) {
			*why = "an IPv6 address needs brackets: [::1]:9571";
			return -EINVAL;
		}
	}
	if (!hl || hl >= hostlen) {
		*why = "no host";
		return -EINVAL;
	}
	if (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1)) {
		*why = "the port is not a number";
		return -EINVAL;
	}
	/* digits only: stop counting past 65535, no overflow */
	for (p = colon + 1; *p && v <= 65535; p++)
		v = v * 10 + (unsigned long)(*p - '0');
	if (v > 65535 || v < min_port) {
		*why = min_port ? "the port is not 1..65535" : "the port is not 0..65535";
		return -EINVAL;
	}
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (unsigned int)v;
	if (bracketed)
		*bracketed = *s == '[';
	return 0;
}
