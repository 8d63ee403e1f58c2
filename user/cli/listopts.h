/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The options of the commands that read lists into a filter: load, build
 * and publish take the same list options from one table (LIST_OPTS), so
 * that the three read a list the same way and their help cannot drift.
 * Each command's own options come after the shared ones in its table.
 */
#ifndef BLOOMGATE_CLI_LISTOPTS_H
#define BLOOMGATE_CLI_LISTOPTS_H

#include <math.h>
#include <stddef.h>

#include "core/attach_opts.h" /* BG_CAPACITY_MAX */
#include "core/filter.h"
#include "core/opts.h"
#include "core/prepare.h"
#include "core/sources.h"

/* One context for the three: each uses the fields of its options. */
struct list_ctx {
	struct bg_sources *srcs;
	int strict;
	int allow_wide;
	double fpr; /* 0: bg_fpr_default() */
	int confirm; /* 1: the exact stage (default), 0: --confirm off */
	unsigned long long max_list_bytes, max_entries;
	unsigned long long seed; /* 0: random */
	int stdin_taken; /* "-" given: standard input reads once */
	/* load */
	int force; /* load even when an agent feeds this pin directory */
	int artifact; /* --artifact: the one LIST is an artifact */
	/* --protect: the operator's part of the protected set */
	struct bg_protect_item protect[BG_PROTECT_MAX];
	size_t n_protect;
	/* build, publish */
	const char *output; /* build -o */
	unsigned long long capacity; /* a fixed-size filter map */
	/* publish */
	const char *db;
	int full; /* a full generation even when a delta would do */
	const char *state; /* the publisher's cache of its lists */
	unsigned long long keep; /* generations kept in the store */
};

extern const struct list_ctx list_defaults;
extern const struct bg_opt_enum list_format_values[];
extern const struct bg_opt_enum list_confirm_values[];

int list_opt_list(void *ctx, const struct bg_opt *o, const struct bg_optval *v,
		  char *err, size_t errlen);
int list_opt_format(void *ctx, const struct bg_opt *o,
		    const struct bg_optval *v, char *err, size_t errlen);
int list_opt_subdomains(void *ctx, const struct bg_opt *o,
			const struct bg_optval *v, char *err, size_t errlen);
/* After the last argument (a command's done()): --format and the like
 * followed by no list, or no list to block. */
int list_opts_done(void *ctx, unsigned int npos, char *err, size_t errlen);

/* The load options the context's list options make (sources, rate,
 * stage, strictness, bounds, seed). */
void list_load_opts(const struct list_ctx *c, struct bg_load_opts *o);

/* Diagnostics as they come: "file:line: reason: 'text'" on stderr. */
void list_print_diag(void *ctx, const struct bg_diag *d);

/* The list options, in every table that reads lists. */
#define LIST_OPTS                                                              \
	{ .name = "fpr", .type = BG_OPT_DOUBLE, .metavar = "P",               \
	  .help = "target false-positive rate of the Bloom part per address or " \
		  "query (default " BG_TEXTIFY(BG_FPR_DEFAULT_CONFIRM) ", "      \
		  BG_TEXTIFY(BG_FPR_DEFAULT) " with --confirm off)",            \
	  .min = BG_FPR_MIN, .max = BG_FPR_MAX,                                \
	  .off = offsetof(struct list_ctx, fpr) },                             \
	{ .name = "confirm", .type = BG_OPT_ENUM, .values = list_confirm_values, \
	  .help = "the exact stage behind the Bloom part",                     \
	  .off = offsetof(struct list_ctx, confirm) },                         \
	{ .name = "strict", .type = BG_OPT_FLAG,                               \
	  .help = "fail on a rejected line, a too-deep subdomain rule or an empty list", \
	  .off = offsetof(struct list_ctx, strict) },                          \
	{ .name = "allow-wide", .type = BG_OPT_FLAG,                           \
	  .help = "load IPv4 prefixes shorter than /8 and IPv6 shorter than /16", \
	  .off = offsetof(struct list_ctx, allow_wide) },                      \
	{ .name = "format", .type = BG_OPT_ENUM, .metavar = "F",               \
	  .values = list_format_values,                                        \
	  .help = "read the lists after it as F", .max_count = BG_OPT_MANY,    \
	  .set = list_opt_format },                                            \
	{ .name = "subdomains", .type = BG_OPT_FLAG,                           \
	  .help = "plain names in the lists after it cover their subdomains",  \
	  .max_count = BG_OPT_MANY, .set = list_opt_subdomains },              \
	{ .name = "no-subdomains", .type = BG_OPT_FLAG,                        \
	  .help = "back to the default: a plain name is the name only",        \
	  .max_count = BG_OPT_MANY, .flags = BG_OPT_F_NOSYN,                   \
	  .set = list_opt_subdomains },                                        \
	{ .name = "allow", .type = BG_OPT_PATH, .metavar = "LIST",             \
	  .help = "a list of entries that always pass", .max_count = BG_OPT_MANY, \
	  .set = list_opt_list },                                              \
	{ .name = "max-list-bytes", .type = BG_OPT_UINT, .metavar = "SIZE",    \
	  .help = "refuse a list of more than SIZE bytes (K, M, G: KiB, MiB, GiB)", \
	  .min = 1, .max = INFINITY, .flags = BG_OPT_F_SIZE,                   \
	  .off = offsetof(struct list_ctx, max_list_bytes) },                  \
	{ .name = "max-entries", .type = BG_OPT_UINT, .metavar = "N",          \
	  .help = "refuse lists of more than N entries in all", .min = 1,      \
	  .max = INFINITY, .off = offsetof(struct list_ctx, max_entries) },    \
	{ .name = "seed", .type = BG_OPT_UINT, .metavar = "N",                 \
	  .help = "the filter's hash seed (default: random; the same lists and " \
		  "seed build the same filter)", .min = 1, .max = INFINITY,     \
	  .off = offsetof(struct list_ctx, seed) }

/* build's and publish's: a filter for gateways attached with --capacity. */
#define LIST_CAPACITY_OPT                                                      \
	{ .name = "capacity", .type = BG_OPT_UINT, .metavar = "KEYS",          \
	  .help = "fit the filter to the fixed-size map of gateways attached with " \
		  "--capacity KEYS (the same KEYS)",                           \
	  .min = 1, .max = (double)BG_CAPACITY_MAX,                            \
	  .off = offsetof(struct list_ctx, capacity) }

/* The positional LIST of the three. */
extern const struct bg_opt list_pos;

/* The help's text on list formats, shared. */
#define LIST_DETAILS                                                           \
	"Lists are address lists (IPv4/IPv6 addresses and CIDR prefixes, one\n" \
	"per line: plain, FireHOL ipset/netset, Spamhaus DROP) or domain\n"     \
	"lists, in one load:\n"                                                 \
	"  plain    one name a line; *.name for its subdomains only\n"          \
	"  hosts    0.0.0.0 name [name...] (also 127.0.0.1, ::, ::1, or a\n"    \
	"           bare name): each name exactly; the addresses are where\n"   \
	"           the names point, never loaded as blocked addresses\n"       \
	"  adblock  ||name^ (name and subdomains), ||*.name^ (subdomains),\n"   \
	"           |name^ (the name only), @@ before any: allow\n"             \
	"Each file's format is detected from its first " BG_TEXTIFY(BG_FMT_DETECT_LINES) " lines that are\n" \
	"not blank or comments: addresses when more than half are addresses\n" \
	"or prefixes; else Adblock when one starts with |, !, [ or @@; else\n"  \
	"hosts when one is an address and a name; else plain when more than\n"  \
	"half are names of two labels or more; else addresses (each line is\n"  \
	"then rejected as not an address: say --format plain if need be).\n"   \
	"FILE: detected FORMAT (why) is printed for each list detected. A\n"   \
	"list with more than half of its lines rejected is a warning naming\n"  \
	"the format that reads them, if one does; one that loads no entry is\n" \
	"a warning too; --strict fails on either.\n"                            \
	"--format applies to every list after it on the command line, blocked\n" \
	"and --allow alike, up to the next --format (like gcc's -x);\n"         \
	"--subdomains likewise (as HaGeZi's lists mean), up to\n"               \
	"--no-subdomains. Given after the last list, they would apply to\n"     \
	"none: an error.\n"                                                     \
	"--allow lists addresses and prefixes that pass also inside listed\n"   \
	"ranges, and names, which beat blocked parents.\n"                      \
	"--strict fails on any rejected line, and on any subdomain rule\n"      \
	"deeper than " BG_TEXTIFY(BG_DNS_SUFFIX_MAX) " labels (never matched), instead of reporting\n" \
	"and skipping it.\n"                                                    \
	"A prefix shorter than /8 (IPv4) or /16 (IPv6), /0 included, is\n"      \
	"rejected unless --allow-wide is given (then loaded with a warning):\n" \
	"one such line would block far more than any list means. In an\n"       \
	"--allow list it always loads, with a warning. ::ffff:a.b.c.d[/n]\n"    \
	"(n >= 96) is loaded as the IPv4 entry a.b.c.d[/n-96], with a\n"        \
	"warning; --strict rejects it.\n"                                       \
	"Every rejected line is reported as FILE:LINE: reason: 'text'.\n"

#endif
