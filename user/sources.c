// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* List files of any kind: detection and dispatch (user/sources.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "sources.h"

void bg_blocklist_init(struct bg_blocklist *bl)
{
	bg_list_init(&bl->block);
	bg_list_init(&bl->allow);
	bg_names_init(&bl->names);
}

void bg_blocklist_free(struct bg_blocklist *bl)
{
	bg_list_free(&bl->block);
	bg_list_free(&bl->allow);
	bg_names_free(&bl->names);
}

void bg_blocklist_finish(struct bg_blocklist *bl)
{
	bg_list_finish(&bl->block);
	bg_list_finish(&bl->allow);
	bg_names_finish(&bl->names);
}

enum bg_format bg_format_detect(const char *buf, size_t len)
{
	struct bg_line_iter it;
	const char *s, *e;
	unsigned int seen = 0, addrs = 0, names = 0;
	int kind;

	bg_lines_init(&it, buf, len);
	while (seen < BG_FMT_DETECT_LINES && bg_lines_next(&it, &s, &e)) {
		kind = bg_list_line_kind(s, e, it.has_nul);
		if (!kind)
			continue;
		seen++;
		addrs += kind > 0;
	}
	if (!seen || 2 * addrs > seen)
		return BG_FMT_ADDR;
	switch (bg_dom_detect(buf, len)) {
	case BG_FMT_HOSTS:
		return BG_FMT_HOSTS;
	case BG_FMT_ADBLOCK:
		return BG_FMT_ADBLOCK;
	default:
		break;
	}
	/* plain only when most lines are names of a plain list: text that is
	 * neither stays an address list, rejected line by line as before */
	bg_lines_init(&it, buf, len);
	seen = 0;
	while (seen < BG_FMT_DETECT_LINES && bg_lines_next(&it, &s, &e)) {
		if (!bg_list_line_kind(s, e, it.has_nul))
			continue;
		seen++;
		names += bg_names_plain_line(s, e);
	}
	return 2 * names > seen ? BG_FMT_PLAIN : BG_FMT_ADDR;
}

void bg_sources_init(struct bg_sources *s)
{
	memset(s, 0, sizeof(*s));
}

void bg_sources_free(struct bg_sources *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].path);
	free(s->v);
	bg_sources_init(s);
}

int bg_sources_add(struct bg_sources *s, const char *path, int allow)
{
	struct bg_source *src;

	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 8;
		struct bg_source *v;

		if (ncap > SIZE_MAX / sizeof(*v))
			return -ENOMEM;
		v = realloc(s->v, ncap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = ncap;
	}
	src = &s->v[s->n];
	memset(src, 0, sizeof(*src));
	src->path = strdup(path);
	if (!src->path)
		return -ENOMEM;
	src->format = s->format;
	src->subdomains = s->subdomains;
	src->allow = !!allow;
	s->n++;
	s->pending = 0;
	return 0;
}

int bg_sources_set_format(struct bg_sources *s, const char *name)
{
	int f = bg_format_parse(name);

	if (f < 0)
		return -EINVAL;
	s->format = (uint8_t)f;
	s->pending = 1;
	return 0;
}

void bg_sources_set_subdomains(struct bg_sources *s, int on)
{
	s->subdomains = !!on;
	s->pending = 1;
}

int bg_sources_done(const struct bg_sources *s)
{
	size_t i;

	if (s->pending)
		return -EINVAL;
	for (i = 0; i < s->n; i++)
		if (!s->v[i].allow)
			return 0;
	return -ENOENT;
}

int bg_source_parse(const struct bg_source *src, struct bg_blocklist *bl,
		    const struct bg_list_opts *opts, int *used)
{
	struct bg_names *names = &bl->names;
	struct bg_dom_opts o = { 0 };
	char *buf = NULL;
	size_t len = 0, deep;
	int ret, fmt = src->format;
	struct bg_reporter rep = bg_reporter_of(opts);
	const char *name = bg_list_name(src->path);

	ret = bg_read_list(src->path, opts ? opts->max_bytes : 0, &rep, &buf,
			   &len);
	if (ret < 0)
		return ret;
	if (fmt == BG_FMT_AUTO)
		fmt = bg_format_detect(buf, len);
	if (used)
		*used = fmt;
	if (fmt == BG_FMT_ADDR) {
		struct bg_list_opts lo = { 0 };

		if (opts)
			lo = *opts;
		lo.allow_wide |= src->allow_wide;
		lo.allowlist = src->allow;
		ret = bg_list_parse_buf(src->allow ? &bl->allow : &bl->block,
					name, buf, len, &lo);
	} else {
		o.format = fmt;
		o.subdomains = src->subdomains;
		o.allow = src->allow;
		if (opts) {
			o.strict = opts->strict;
			o.report = opts->report;
			o.diag = opts->diag;
			o.diag_ctx = opts->diag_ctx;
		}
		deep = names->too_deep;
		ret = bg_names_parse_buf(names, name, buf, len, &o);
		/* strict: a rule that never matches what it says fails too */
		if (!ret && o.strict && names->too_deep > deep)
			ret = -EINVAL;
	}
	free(buf);
	return ret;
}
