/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A list's URL as bloomgate shows and keeps it: the password of its
 * userinfo (RFC 3986 section 3.2.1, "http://user:password@host/...") is
 * replaced by "***" wherever a URL is printed (status, check, agent
 * --check, the log) or stored (the agent's store). Only the fetch sees the
 * URL as configured.
 */
#ifndef BLOOMGATE_URL_H
#define BLOOMGATE_URL_H

#include <stddef.h>

/* The text a password becomes, wherever bloomgate prints or keeps one
 * (a list's URL, a fleet store's connection string, their errors). */
#define BG_URL_SECRET "***"

/* Bytes [off, off + len) of a string. */
struct bg_span {
	size_t off, len;
};

/*
 * The one redaction: s into out (at most len bytes, NUL included) with
 * each of the n spans (in order, not overlapping, within s) replaced by
 * BG_URL_SECRET. Returns out; a result cut short by len is a prefix of the
 * whole one and never holds a byte of a span. bg_url_redact() and the
 * fleet store's bg_fleetdb_redact() find the spans, this writes.
 */
char *bg_redact(const char *s, const struct bg_span *v, size_t n, char *out,
		size_t len);

/*
 * Writes url into out (at most len bytes, NUL included) with the password
 * of its userinfo replaced by BG_URL_SECRET ("http://alice:***@host/x"); a
 * URL without one is copied as it is, as is a string that is no URL (a
 * path). A userinfo without ':' (a user name alone, or a token used as
 * one: "https://TOKEN@host/") is secret too: it becomes "***". Returns
 * out; a result cut short by len still never holds a byte of the secret
 * (bg_redact()).
 */
char *bg_url_redact(const char *url, char *out, size_t len);

/*
 * The one HOST:PORT parser (the metrics address, in the config's check and
 * where the server binds): "HOST:PORT" or "[IPV6]:PORT". The last colon
 * splits, so a bare IPv6 address without brackets is refused rather than
 * misread. The host (brackets taken off) into host (hostlen bytes), the
 * port (decimal digits only, min_port (0 or 1) to 65535) into *port, *bracketed 1 for
 * "[...]" (may be NULL). 0, or -EINVAL with *why (a static phrase) saying
 * what is wrong. The host is only split off, not checked.
 */
int bg_hostport(const char *s, unsigned int min_port, char *host,
		size_t hostlen, unsigned int *port, int *bracketed,
		const char **why);

#endif
