// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The list options shared by load, build and publish (cli/listopts.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/listopts.h"

const struct list_ctx list_defaults = {
	.confirm = 1, .max_list_bytes = BG_LIST_BYTES_MAX,
	.max_entries = BG_LOAD_ENTRIES_MAX,
};

const struct bg_opt_enum list_format_values[] = {
	{ "auto", BG_FMT_AUTO, "detect each file's format (below)" },
	{ "addr", BG_FMT_ADDR, "addresses and CIDR prefixes" },
	{ "plain", BG_FMT_PLAIN, "domain names" },
	{ "hosts", BG_FMT_HOSTS, "hosts file" },
	{ "adblock", BG_FMT_ADBLOCK, "Adblock rules" },
	{ NULL },
};

const struct bg_opt_enum list_confirm_values[] = {
	{ "on", 1, "confirm every Bloom positive against an exact table of "
	  "32-bit fingerprints: no false-positive verdicts" },
	{ "off", 0, "act on a Bloom positive as it is: about 4.4 bytes a key "
	  "less, one unlisted address or name in 1/P wrongly blocked" },
	{ NULL },
};

const struct bg_opt list_pos = {
	.type = BG_OPT_PATH, .metavar = "LIST", .help = "a list of entries to block",
	.set = list_opt_list,
};

int list_opt_list(void *ctx, const struct bg_opt *o, const struct bg_optval *v,
		  char *err, size_t errlen)
{
	struct list_ctx *c = ctx;

	if (!strcmp(v->arg, "-") && c->stdin_taken++) {
		snprintf(err, errlen, "'-' (standard input) given twice: it can "
			 "be read once");
		return -EINVAL;
	}
	/* a positional is a blocked list; --allow's are allowed */
	if (bg_sources_add(c->srcs, v->arg, o->name && !strcmp(o->name, "allow"))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int list_opt_format(void *ctx, const struct bg_opt *o, const struct bg_optval *v,
		    char *err, size_t errlen)
{
	struct list_ctx *c = ctx;

	(void)o;
	/* the names in the table are lists.c's: cannot fail */
	if (bg_sources_set_format(c->srcs, v->arg)) {
		snprintf(err, errlen, "--format: '%s' is unknown", v->arg);
		return -EINVAL;
	}
	return 0;
}

int list_opt_subdomains(void *ctx, const struct bg_opt *o,
			const struct bg_optval *v, char *err, size_t errlen)
{
	struct list_ctx *c = ctx;

	(void)v;
	(void)err;
	(void)errlen;
	bg_sources_set_subdomains(c->srcs, !strcmp(o->name, "subdomains"));
	return 0;
}

int list_opts_done(void *ctx, unsigned int npos, char *err, size_t errlen)
{
	struct list_ctx *c = ctx;
	int ret = bg_sources_done(c->srcs);

	(void)npos;
	if (ret == -EINVAL)
		snprintf(err, errlen, "--format, --subdomains and --no-subdomains apply "
			 "to the lists after them; none follows the last one");
	else if (ret)
		snprintf(err, errlen, "missing LIST (a list to block)");
	return ret ? -EINVAL : 0;
}

void list_load_opts(const struct list_ctx *c, struct bg_load_opts *o)
{
	o->sources = c->srcs;
	o->strict = c->strict;
	o->allow_wide = c->allow_wide;
	o->fpr = c->fpr;
	o->confirm_off = !c->confirm;
	o->max_list_bytes = c->max_list_bytes;
	o->max_entries = c->max_entries;
	o->seed = c->seed;
	/* KEYS, as attach --capacity takes them: its map's elements */
	o->capacity = c->capacity ? bg_filter_capacity_elems(c->capacity) : 0;
}

void list_print_diag(void *ctx, const struct bg_diag *d)
{
	(void)ctx;
	/* a file-level error fails the load, whose one line says it */
	if (d->line || d->warning)
		bg_diag_print(stderr, d);
}
