// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The pure half of the load pipeline (user/kern/load.h): sources to a finished
 * blocklist and a plan, with everything counted in the report. Links
 * without libbpf: the agent's --check and the unit tests run it as is.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>

#include "bloomgate/dns.h"
#include "core/clock.h"
#include "core/prepare.h"
#include "core/units.h"

static const char *const stage_names[BG_STAGE__COUNT] = {
	[BG_STAGE_NONE] = "none", [BG_STAGE_PARSE] = "parse",
	[BG_STAGE_PLAN] = "plan", [BG_STAGE_BUILD] = "build",
	[BG_STAGE_PUBLISH] = "publish", [BG_STAGE_RECORD] = "record",
};

const char *bg_load_stage_name(int stage)
{
	return stage >= 0 && stage < BG_STAGE__COUNT ? stage_names[stage] : "?";
}

void bg_load_report_init(struct bg_load_report *r)
{
	memset(r, 0, sizeof(*r));
}

void bg_load_report_free(struct bg_load_report *r)
{
	size_t i;

	for (i = 0; i < r->n_diags; i++) {
		free((char *)r->diags[i].file);
		free((char *)r->diags[i].reason);
		free((char *)r->diags[i].text);
	}
	for (i = 0; i < r->n_detected; i++)
		free(r->detected[i].file);
	free(r->detected);
	bg_protect_covers_free(&r->covers);
	bg_load_report_init(r);
}

/* A seed nobody can predict: keys that collide cannot be precomputed, and
 * a false positive does not survive a rebuild. */
uint64_t bg_random_seed(void)
{
	uint64_t seed;

	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ULL ^
		       (uint64_t)getpid();
	return seed;
}

int bg_load_fail(struct bg_load_report *r, enum bg_load_stage stage, int err,
		 const char *fmt, ...)
{
	va_list ap;

	r->failed = stage;
	r->err = err;
	va_start(ap, fmt);
	bg_vwhyf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	return err;
}

/* The report's diagnostic sink: counts, keeps the first few, passes on. */
struct diag_ctx {
	const struct bg_load_opts *o;
	struct bg_load_report *r;
	char why[256]; /* the last file-level error: why a read failed */
};

static void on_diag(void *ctx, const struct bg_diag *d)
{
	struct diag_ctx *c = ctx;
	struct bg_load_report *r = c->r;

	if (d->warning)
		r->n_warnings++;
	else
		r->n_errors++;
	if (!d->line && !d->warning)
		snprintf(c->why, sizeof(c->why), "%s", d->reason);
	if (r->n_diags < BG_LOAD_DIAGS_MAX) {
		struct bg_diag *k = &r->diags[r->n_diags];

		k->file = strdup(d->file);
		k->reason = strdup(d->reason);
		k->text = strdup(d->text);
		k->line = d->line;
		k->warning = d->warning;
		if (k->file && k->reason && k->text) {
			r->n_diags++;
		} else {
			free((char *)k->file);
			free((char *)k->reason);
			free((char *)k->text);
		}
	}
	if (c->o->diag)
		c->o->diag(c->o->diag_ctx, d);
}

/* The counters of a finished blocklist, without its arrays. */
static void keep_counts(struct bg_load_report *r, const struct bg_blocklist *bl)
{
	r->block = bl->block;
	r->allow = bl->allow;
	r->names = bl->names;
	r->block.v4 = r->allow.v4 = NULL;
	r->block.v6 = r->allow.v6 = NULL;
	r->names.v = NULL;
	r->names.files = NULL;
	r->names.arena = NULL;
}

/* Rules by what they do; allow_file[f]: file f of l was an --allow list. */
static void count_rules(struct bg_load_rules *c, const struct bg_names *l,
			const uint8_t *allow_file)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct bg_name *e = &l->v[i];

		if (e->allow && allow_file[e->file])
			c->allow_listed++;
		else if (e->allow)
			c->allow_rules++;
		else if (e->kind == BG_NAME_EXACT)
			c->exact++;
		else
			c->subs++;
	}
}

/* Entries parsed so far, all lists together (before de-duplication). */
static uint64_t entries_parsed(const struct bg_blocklist *bl)
{
	return (uint64_t)bl->block.n4 + bl->block.n6 + bl->allow.n4 +
	       bl->allow.n6 + bl->names.n;
}

/* Keeps what detection found about a list for the report; 0 or -ENOMEM. */
static int keep_detected(struct bg_load_report *r, const char *name,
			 const struct bg_format_evidence *ev)
{
	struct bg_load_detected *v;
	size_t n = r->n_detected;

	/* the array doubles: its size is the power of two at or above n */
	if (!(n & (n - 1))) {
		v = realloc(r->detected, (n ? 2 * n : 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->detected = v;
	}
	r->detected[n].file = strdup(name);
	if (!r->detected[n].file)
		return -ENOMEM;
	r->detected[n].ev = *ev;
	r->n_detected++;
	return 0;
}

/* What the lines of each format are, in "rejected as ...". */
static const char *const format_lines[BG_FMT__COUNT] = {
	[BG_FMT_ADDR] = "addresses", [BG_FMT_PLAIN] = "domain names",
	[BG_FMT_HOSTS] = "hosts entries", [BG_FMT_ADBLOCK] = "Adblock rules",
};

/* What a list of each format is, in "they look like ...". */
static const char *const format_list[BG_FMT__COUNT] = {
	[BG_FMT_ADDR] = "an address list", [BG_FMT_PLAIN] = "a plain domain list",
	[BG_FMT_HOSTS] = "a hosts file", [BG_FMT_ADBLOCK] = "an Adblock list",
};

/* A warning about the list as a whole (line 0), through the report. */
static void warn_file(struct diag_ctx *dc, const char *name, const char *why)
{
	struct bg_diag d = { .file = name, .warning = 1, .reason = why,
			     .text = "" };

	on_diag(dc, &d);
}

/*
 * The two warnings about a list as a whole: most lines rejected (a list
 * read as the wrong format, detected or stated, is the likely cause: the
 * format that reads it is named), and no entry at all.
 */
static void warn_list(struct diag_ctx *dc, const char *name,
		      const struct bg_source_info *in)
{
	char why[256];

	if (bg_source_mostly_rejected(in)) {
		if (in->likely != BG_FMT_AUTO)
			snprintf(why, sizeof(why), "%zu of %zu lines rejected as "
				 "%s; they look like %s (--format %s)",
				 in->rejected, in->lines,
				 format_lines[in->format],
				 format_list[in->likely],
				 bg_format_name(in->likely));
		else
			snprintf(why, sizeof(why), "%zu of %zu lines rejected as "
				 "%s; no other format reads most of them",
				 in->rejected, in->lines,
				 format_lines[in->format]);
		warn_file(dc, name, why);
	}
	if (!in->entries)
		warn_file(dc, name, "no entry loaded");
}

/* One source into bl; the stage's failure message on error. */
static int parse_source(struct bg_source *src, struct bg_blocklist *bl,
			const struct bg_list_opts *lo, struct diag_ctx *dc,
			uint64_t max_entries, struct bg_source_info *info)
{
	struct bg_load_report *r = dc->r;
	size_t rej = bl->names.rejected + bl->block.rejected + bl->allow.rejected;
	size_t deep = bl->names.too_deep;
	const char *name = bg_list_name(src->path);
	struct bg_source_info in;
	int used, ret;

	dc->why[0] = 0;
	ret = bg_source_parse_info(src, bl, lo, &in);
	*info = in;
	used = in.format ? in.format : BG_FMT_AUTO;
	if (in.detected && keep_detected(r, name, &in.ev))
		return bg_load_fail(r, BG_STAGE_PARSE, -ENOMEM, "out of memory");
	/* parsed to the end (strict fails there): what the list as a whole
	 * looks like */
	if (!ret || ret == -EINVAL)
		warn_list(dc, name, &in);
	if (ret == -EINVAL) {
		r->strict_rejected = bl->names.rejected + bl->block.rejected +
					     bl->allow.rejected > rej;
		r->strict_too_deep = bl->names.too_deep > deep;
		return bg_load_fail(r, BG_STAGE_PARSE, ret, "%s: %s%s%s with --strict",
				    name,
				    r->strict_rejected ? "rejected lines" : "",
				    r->strict_rejected && r->strict_too_deep ? " and " : "",
				    r->strict_too_deep ?
					    "subdomain rules never matched (too deep)" : "");
	}
	if (!ret && !in.entries && lo->strict) {
		r->strict_empty = 1;
		return bg_load_fail(r, BG_STAGE_PARSE, -EINVAL,
				    "%s: no entry loaded, with --strict", name);
	}
	if (ret == -EFBIG)
		return bg_load_fail(r, BG_STAGE_PARSE, ret,
				    "%s: more than %llu bytes (--max-list-bytes)",
				    name, (unsigned long long)lo->max_bytes);
	if (ret)
		return bg_load_fail(r, BG_STAGE_PARSE, ret, "%s: %s", name,
				    dc->why[0] ? dc->why : strerror(-ret));
	if (entries_parsed(bl) > max_entries)
		return bg_load_fail(r, BG_STAGE_PARSE, -E2BIG,
				    "%s: the lists hold more than %llu entries "
				    "(--max-entries)", name,
				    (unsigned long long)max_entries);
	/* check re-reads the list as it was read here */
	src->list.format = (uint8_t)used;
	src->list.allow_wide |= !!lo->allow_wide;
	r->n_allow += src->list.allow;
	if (used == BG_FMT_ADDR) {
		r->n_addr++;
		r->n_addr_allow += src->list.allow;
	} else {
		r->n_dom++;
	}
	return 0;
}

/* The protected set's part of the report: its items by kind, and the
 * entries of the finished blocklist that cover one, with their lines
 * (the lists re-read only when there are some). */
static int protect_covers(const struct bg_load_opts *o, const struct bg_blocklist *bl,
			  struct bg_load_report *r)
{
	int ret;

	if (!o->protect)
		return 0;
	bg_protect_kinds(o->protect, r->protect_kinds);
	ret = bg_protect_covers_find(o->protect, &bl->block, &r->covers);
	if (!ret)
		ret = bg_protect_covers_lines(&r->covers, o->sources);
	return ret ? bg_load_fail(r, BG_STAGE_PARSE, ret, "out of memory") : 0;
}

/* The plan into the attachment's fixed-size map, or why it does not fit. */
int bg_load_fit(struct bg_load_report *r, uint32_t capacity, int grows)
{
	struct bg_filter_params *p = &r->plan;
	char need[32], have[32];

	if (!(grows ? bg_filter_pad(p, capacity) : bg_filter_fit(p, capacity)))
		return 0;
	bg_fmt_bytes(need, sizeof(need), (double)p->bytes);
	bg_fmt_bytes(have, sizeof(have), (double)capacity * BG_FILTER_VALUE_SIZE);
	return bg_load_fail(r, BG_STAGE_PLAN, -ENOSPC,
			    "filter needs %u elements (%s), the attachment's "
			    "capacity is %u (%s): attach with a larger --capacity",
			    p->nelems, need, capacity, have);
}

int bg_load_prepare(const struct bg_load_opts *o, struct bg_blocklist *bl,
		    struct bg_load_report *r)
{
	struct diag_ctx dc = { .o = o, .r = r };
	struct bg_list_opts lo = { .strict = o->strict,
				   .allow_wide = o->allow_wide, .diag = on_diag,
				   .diag_ctx = &dc, .entry = o->entry,
				   .entry_ctx = o->entry_ctx,
				   .threads = o->threads,
				   .max_bytes = o->max_list_bytes ?
						o->max_list_bytes : BG_LIST_BYTES_MAX };
	uint64_t max_entries = o->max_entries ? o->max_entries :
						BG_LOAD_ENTRIES_MAX;
	struct bg_sources *srcs = o->sources;
	uint8_t *allow_file = NULL;
	size_t i, nd = 0;
	double t0 = bg_mono_ms(), t1;
	int ret = 0;

	bg_blocklist_init(bl);
	r->fpr = o->fpr > 0 ? o->fpr : bg_fpr_default(!o->confirm_off);
	allow_file = calloc(srcs->n ? srcs->n : 1, 1);
	if (!allow_file)
		return bg_load_fail(r, BG_STAGE_PARSE, -ENOMEM, "out of memory");
	r->failed_source = SIZE_MAX;
	for (i = 0; i < srcs->n && !ret; i++) {
		struct bg_source_info in;

		lo.source = i;
		ret = parse_source(&srcs->v[i], bl, &lo, &dc, max_entries, &in);
		if (!ret && o->source_done && o->source_done(o->source_ctx, i, &in))
			ret = bg_load_fail(r, BG_STAGE_PARSE, -ECANCELED,
					   "%s: refused", bg_list_name(srcs->v[i].path));
		if (ret)
			r->failed_source = i;
		/* bl->names holds one file per domain list, in order */
		if (!ret && srcs->v[i].list.format != BG_FMT_ADDR)
			allow_file[nd++] = srcs->v[i].list.allow;
	}
	if (!ret) {
		if (o->parsed)
			o->parsed(o->parsed_ctx, bl, r->fpr, !o->confirm_off);
		bg_blocklist_finish_mt(bl, o->threads);
		keep_counts(r, bl);
		count_rules(&r->rules, &bl->names, allow_file);
		r->entries = bl->block.n4 + bl->block.n6 + r->rules.exact +
			     r->rules.subs;
		ret = protect_covers(o, bl, r);
	}
	free(allow_file);
	t1 = bg_mono_ms();
	r->ms[BG_STAGE_PARSE] = t1 - t0;
	if (ret)
		return ret;
	if (!r->entries && !o->allow_empty)
		return bg_load_fail(r, BG_STAGE_PLAN, -ENODATA,
				    "no valid entries in the lists");
	ret = bg_filter_plan_confirm(bl, r->fpr, !o->confirm_off, &r->plan);
	if (!ret && o->capacity)
		ret = bg_load_fit(r, o->capacity, 0);
	r->ms[BG_STAGE_PLAN] = bg_mono_ms() - t1;
	if (ret == -ENOSPC)
		return ret; /* bg_load_fit() said why */
	if (ret)
		return bg_load_fail(r, BG_STAGE_PLAN, ret,
				    "cannot plan a filter for %zu entries at fpr %g: %s",
				    r->entries, r->fpr,
				    ret == -E2BIG ? "too large" : strerror(-ret));
	return 0;
}
