// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* List files of any kind: detection and dispatch (user/core/sources.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/lines.h"
#include "core/sources.h"

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
	bg_blocklist_finish_mt(bl, 1);
}

void bg_blocklist_finish_mt(struct bg_blocklist *bl, unsigned int threads)
{
	bg_list_finish_mt(&bl->block, threads);
	bg_list_finish_mt(&bl->allow, threads);
	bg_names_finish(&bl->names);
}

enum bg_format bg_format_detect_ev(const char *buf, size_t len,
				   struct bg_format_evidence *ev)
{
	struct bg_format_evidence tmp;
	struct bg_line_iter it;
	const char *s, *e;
	unsigned int *n;
	int kind, f;

	if (!ev)
		ev = &tmp;
	memset(ev, 0, sizeof(*ev));
	n = ev->n;
	/* one pass counts every format's look-alikes: the choice below and
	 * the words `load` prints come from the same numbers */
	bg_lines_init(&it, buf, len);
	while (bg_lines_next(&it, &s, &e)) {
		kind = bg_list_line_kind(s, e, it.has_nul);
		if (!kind)
			continue;
		if (ev->lines == BG_FMT_DETECT_LINES) {
			ev->cut = 1;
			break;
		}
		ev->lines++;
		n[BG_FMT_ADDR] += kind > 0;
		n[BG_FMT_PLAIN] += (unsigned int)bg_names_plain_line(s, e);
		f = bg_dom_line_format(s, e);
		if (f == BG_FMT_HOSTS || f == BG_FMT_ADBLOCK)
			n[f]++;
	}
	if (!ev->lines) {
		ev->why = BG_DETECT_EMPTY;
		ev->format = BG_FMT_ADDR;
	} else if (2 * n[BG_FMT_ADDR] > ev->lines) {
		ev->why = BG_DETECT_MAJORITY;
		ev->format = BG_FMT_ADDR;
	} else if (n[BG_FMT_ADBLOCK] || n[BG_FMT_HOSTS]) {
		/* one line in Adblock syntax makes an Adblock list (its other
		 * lines may be bare names or hosts lines, which it reads too);
		 * else one "address name" line makes a hosts file */
		ev->why = BG_DETECT_MARK;
		ev->format = n[BG_FMT_ADBLOCK] ? BG_FMT_ADBLOCK : BG_FMT_HOSTS;
	} else if (2 * n[BG_FMT_PLAIN] > ev->lines) {
		ev->why = BG_DETECT_MAJORITY;
		ev->format = BG_FMT_PLAIN;
	} else {
		/* plain only when most lines are names of a plain list: text
		 * that is neither stays an address list, rejected line by line
		 * as before */
		ev->why = BG_DETECT_FALLBACK;
		ev->format = BG_FMT_ADDR;
	}
	return (enum bg_format)ev->format;
}

enum bg_format bg_format_detect(const char *buf, size_t len)
{
	return bg_format_detect_ev(buf, len, NULL);
}

const char *bg_format_word(int format)
{
	return format == BG_FMT_ADDR ? "addresses" : bg_format_name(format);
}

const char *bg_format_evidence_text(const struct bg_format_evidence *ev,
				    char *buf, size_t len)
{
	const char *of = ev->cut ? "of the first" : "of";
	const unsigned int *n = ev->n;
	int f = ev->format;

	switch (ev->why) {
	case BG_DETECT_EMPTY:
		snprintf(buf, len, "no line but blanks and comments");
		break;
	case BG_DETECT_MAJORITY:
		snprintf(buf, len, "%u %s %u non-comment lines are %s", n[f], of,
			 ev->lines, f == BG_FMT_ADDR ? "addresses or prefixes" :
						       "domain names");
		break;
	case BG_DETECT_MARK:
		snprintf(buf, len, "%u %s %u non-comment lines look like %s",
			 n[f], of, ev->lines,
			 f == BG_FMT_ADBLOCK ? "Adblock rules" : "hosts entries");
		break;
	default:
		snprintf(buf, len, "no format fits: %s %u non-comment lines, "
			 "%u are addresses or prefixes and %u domain names",
			 ev->cut ? "of the first" : "of the", ev->lines,
			 n[BG_FMT_ADDR], n[BG_FMT_PLAIN]);
		break;
	}
	return buf;
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

int bg_list_desc_dup(struct bg_list_desc *dst, const struct bg_list_desc *src)
{
	char *name = src->name ? strdup(src->name) : NULL;
	char *url = src->url ? strdup(src->url) : NULL;
	char *path = src->path ? strdup(src->path) : NULL;

	if ((src->name && !name) || (src->url && !url) || (src->path && !path)) {
		free(name);
		free(url);
		free(path);
		memset(dst, 0, sizeof(*dst));
		return -ENOMEM;
	}
	*dst = *src;
	dst->name = name;
	dst->url = url;
	dst->path = path;
	return 0;
}

void bg_list_desc_free(struct bg_list_desc *d)
{
	/* const for the borrowers; the copy's holder owns them */
	free((char *)d->name);
	free((char *)d->url);
	free((char *)d->path);
	memset(d, 0, sizeof(*d));
}

int bg_sources_add(struct bg_sources *s, const char *path, int allow)
{
	struct bg_list_desc list = { .format = s->format,
				     .subdomains = s->subdomains,
				     .allow = (uint8_t)!!allow };

	return bg_sources_add_list(s, path, &list);
}

int bg_sources_add_list(struct bg_sources *s, const char *path,
			const struct bg_list_desc *list)
{
	struct bg_source *src;

	if (bg_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v), 8))
		return -ENOMEM;
	src = &s->v[s->n];
	memset(src, 0, sizeof(*src));
	src->path = strdup(path);
	if (!src->path)
		return -ENOMEM;
	src->list = *list;
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
		if (!s->v[i].list.allow)
			return 0;
	return -ENOENT;
}

/*
 * The lines of one parse, counted from its diagnostics as they come (and
 * passed on unless quiet): a line with a rejection is a rejected line.
 * For a domain list, whose entries carry their line, a rejected line that
 * also loaded an entry ("0.0.0.0 good.example bad*.example") is counted
 * in both, so that it is not counted twice in the file's lines.
 */
struct line_count {
	struct bg_reporter next;
	int quiet;
	const struct bg_names *names; /* NULL: an address list */
	size_t n0; /* names->n before this file */
	size_t rejected; /* lines with a rejection */
	size_t last; /* the last of them */
	size_t seen; /* names->n when it was first reported */
	int last_both; /* it loaded an entry too (counted in both) */
	size_t both;
};

/* An entry of the last rejected line added after its rejection? */
static void settle(struct line_count *c)
{
	size_t i;

	if (!c->names || !c->last || c->last_both)
		return;
	for (i = c->seen; i < c->names->n; i++) {
		if (c->names->v[i].line > c->last)
			break; /* entries come in line order */
		if (c->names->v[i].line == c->last) {
			c->both++;
			c->last_both = 1;
			break;
		}
	}
}

static void count_diag(void *ctx, const struct bg_diag *d)
{
	struct line_count *c = ctx;
	const struct bg_names *l = c->names;

	if (d->line && !d->warning && d->line != c->last) {
		settle(c);
		c->rejected++;
		c->last = d->line;
		c->last_both = 0;
		c->seen = l ? l->n : 0;
		/* an entry of the same line, before the rejection */
		if (l && l->n > c->n0 && l->v[l->n - 1].line == d->line) {
			c->both++;
			c->last_both = 1;
		}
	}
	if (c->quiet)
		return;
	if (c->next.fn)
		c->next.fn(c->next.ctx, d);
	else
		bg_diag_print(c->next.out ? c->next.out : stderr, d);
}

/* Entries and lines of one parse into bl as fmt (what bg_source_parse()
 * does once the file is read), counted into lc and *entries, *lines. */
static int parse_as(const struct bg_source *src, struct bg_blocklist *bl,
		    int fmt, const char *name, const char *buf, size_t len,
		    const struct bg_list_opts *opts, struct line_count *lc,
		    size_t *entries, size_t *lines, int fd)
{
	struct bg_list_opts lo = *opts;
	struct bg_names *names = &bl->names;
	struct bg_dom_opts o = { 0 };
	size_t n0 = names->n, deep, i, last = 0, el = 0;
	int ret;

	lo.diag = count_diag;
	lo.diag_ctx = lc;
	if (fmt == BG_FMT_ADDR) {
		struct bg_list *l = src->list.allow ? &bl->allow : &bl->block;
		size_t a0 = l->accepted;

		lc->names = NULL;
		lo.allow_wide |= src->list.allow_wide;
		lo.allowlist = src->list.allow;
		/* fd >= 0: the file read in pieces, len its size */
		ret = fd >= 0 ? bg_list_parse_fd(l, name, fd, len, &lo) :
				bg_list_parse_buf(l, name, buf, len, &lo);
		*entries = l->accepted - a0;
		/* one entry a line */
		*lines = *entries + lc->rejected;
		return ret;
	}
	lc->names = names;
	lc->n0 = n0;
	o.format = fmt;
	o.subdomains = src->list.subdomains;
	o.allow = src->list.allow;
	o.strict = lo.strict;
	o.diag = count_diag;
	o.diag_ctx = lc;
	o.entry = lo.entry;
	o.entry_ctx = lo.entry_ctx;
	o.source = lo.source;
	deep = names->too_deep;
	ret = bg_names_parse_buf(names, name, buf, len, &o);
	settle(lc);
	/* strict: a rule that never matches what it says fails too */
	if (!ret && o.strict && names->too_deep > deep)
		ret = -EINVAL;
	for (i = n0; i < names->n; i++)
		if (names->v[i].line != last) {
			last = names->v[i].line;
			el++;
		}
	*entries = names->n - n0;
	*lines = el + lc->rejected - lc->both;
	return ret;
}

/*
 * A mostly rejected file, parsed again as each other format, silently:
 * the one that loads the most lines, when that is most of its own lines.
 * A tie goes to the simpler format (the enum's order): a plain list reads
 * as well as a hosts file or an Adblock list, which accept bare names.
 */
static void find_likely(const struct bg_source *src, const char *name,
			const char *buf, size_t len,
			const struct bg_list_opts *opts,
			struct bg_source_info *info)
{
	struct bg_list_opts lo = { .allow_wide = opts->allow_wide };
	int f;

	for (f = BG_FMT_ADDR; f < BG_FMT__COUNT; f++) {
		struct line_count lc = { .quiet = 1 };
		struct bg_blocklist tmp;
		size_t entries, lines, good;

		if (f == info->format)
			continue;
		bg_blocklist_init(&tmp);
		if (parse_as(src, &tmp, f, name, buf, len, &lo, &lc, &entries,
			     &lines, -1) == -ENOMEM) {
			bg_blocklist_free(&tmp);
			return; /* no hint, nothing worse */
		}
		bg_blocklist_free(&tmp);
		good = lines - lc.rejected;
		if (2 * good > lines && good > info->likely_lines) {
			info->likely = f;
			info->likely_lines = good;
			info->likely_of = lines;
		}
	}
}

/*
 * An address list in a regular file of BG_PIECES_MIN_BYTES or more is read
 * in chunks and parsed on several threads (bg_list_parse_fd()): it is not
 * held whole, and its parse takes every core. Its format is detected from
 * its first BG_DETECT_PREFIX bytes when the lines detection looks at are
 * all there (they always are but for lists of huge comments); else, and
 * for domain lists and standard input, the list is read whole as before.
 */
#define BG_PIECES_MIN_BYTES (4u << 20)
#define BG_DETECT_PREFIX (1u << 20)

/* The format of the list open at fd from its first bytes, when they say
 * what the whole would (ev->cut, or the whole list read): 0, else 1. */
static int detect_prefix(int fd, uint64_t size, struct bg_format_evidence *ev,
			 int *fmt)
{
	size_t want = size < BG_DETECT_PREFIX ? (size_t)size : BG_DETECT_PREFIX;
	size_t have = 0, len;
	char *buf = malloc(want ? want : 1);
	const char *nl;

	if (!buf)
		return 1;
	while (have < want) {
		ssize_t got = pread(fd, buf + have, want - have, (off_t)have);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		have += (size_t)got;
	}
	/* whole lines only, unless this is the whole list */
	len = have;
	if (have < size) {
		nl = memrchr(buf, '\n', have);
		len = nl ? (size_t)(nl - buf) + 1 : 0;
	}
	*fmt = bg_format_detect_ev(buf, len, ev);
	free(buf);
	return ev->cut || have == size ? 0 : 1;
}

/* The file in pieces: 1 when it is not for them (nothing done), else as
 * bg_source_parse_info(). */
static int parse_pieces(const struct bg_source *src, struct bg_blocklist *bl,
			const struct bg_list_opts *lo,
			const struct bg_reporter *rep, struct line_count *lc,
			struct bg_source_info *info)
{
	const char *name = bg_list_name(src->path);
	uint64_t size;
	int fd, fmt = src->list.format, ret;

	if (fmt != BG_FMT_AUTO && fmt != BG_FMT_ADDR)
		return 1;
	fd = bg_open_list(src->path, lo->max_bytes, rep, &size);
	if (fd == -ESPIPE)
		return 1;
	if (fd < 0)
		return fd;
	if (size < BG_PIECES_MIN_BYTES || size > SIZE_MAX ||
	    (fmt == BG_FMT_AUTO && detect_prefix(fd, size, &info->ev, &fmt)) ||
	    fmt != BG_FMT_ADDR) {
		close(fd);
		memset(&info->ev, 0, sizeof(info->ev));
		return 1;
	}
	info->detected = src->list.format == BG_FMT_AUTO;
	info->format = fmt;
	ret = parse_as(src, bl, fmt, name, NULL, (size_t)size, lo, lc,
		       &info->entries, &info->lines, fd);
	close(fd);
	info->rejected = lc->rejected;
	if ((!ret || ret == -EINVAL) && bg_source_mostly_rejected(info)) {
		/* the hint reads the whole list, as the parse did not */
		struct bg_reporter quiet = bg_reporter_make(NULL, count_diag, NULL);
		struct line_count q = { .quiet = 1 };
		char *buf = NULL;
		size_t len = 0;

		quiet.ctx = &q;
		if (!bg_read_list(src->path, lo->max_bytes, &quiet, &buf, &len)) {
			find_likely(src, name, buf, len, lo, info);
			free(buf);
		}
	}
	return ret;
}

int bg_source_parse_info(const struct bg_source *src, struct bg_blocklist *bl,
			 const struct bg_list_opts *opts,
			 struct bg_source_info *info)
{
	struct bg_list_opts lo = { 0 };
	struct line_count lc = { .quiet = 0 };
	struct bg_source_info tmp;
	char *buf = NULL;
	size_t len = 0;
	int ret, fmt = src->list.format;
	struct bg_reporter rep = bg_reporter_of(opts);
	const char *name = bg_list_name(src->path);

	if (!info)
		info = &tmp;
	memset(info, 0, sizeof(*info));
	info->likely = BG_FMT_AUTO;
	if (opts)
		lo = *opts;
	lc.next = rep;
	ret = parse_pieces(src, bl, &lo, &rep, &lc, info);
	if (ret != 1)
		return ret;
	ret = bg_read_list(src->path, opts ? opts->max_bytes : 0, &rep, &buf,
			   &len);
	if (ret < 0)
		return ret;
	if (fmt == BG_FMT_AUTO) {
		fmt = bg_format_detect_ev(buf, len, &info->ev);
		info->detected = 1;
	}
	info->format = fmt;
	ret = parse_as(src, bl, fmt, name, buf, len, &lo, &lc, &info->entries,
		       &info->lines, -1);
	info->rejected = lc.rejected;
	if ((!ret || ret == -EINVAL) && bg_source_mostly_rejected(info))
		find_likely(src, name, buf, len, &lo, info);
	free(buf);
	return ret;
}

int bg_source_parse(const struct bg_source *src, struct bg_blocklist *bl,
		    const struct bg_list_opts *opts, int *used)
{
	struct bg_source_info info;
	int ret = bg_source_parse_info(src, bl, opts, &info);

	if (used && info.format)
		*used = info.format;
	return ret;
}
