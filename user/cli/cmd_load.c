// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate load: the load pipeline (kern/load.h) and its report.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "kern/load.h"
#include "core/print.h"

#include "agent/instance.h"
#include "cli/cli.h"

/* ---- load --------------------------------------------------------------- */

/* load's options: --format and --(no-)subdomains apply to the lists after
 * them, so those and the lists go to srcs in command-line order. */
struct load_ctx {
	struct bg_sources *srcs;
	int strict;
	int allow_wide;
	double fpr; /* 0: bg_fpr_default() */
	int confirm; /* 1: the exact stage (default), 0: --confirm off */
	unsigned long long max_list_bytes, max_entries;
	int stdin_taken; /* "-" given: standard input reads once */
	int force; /* load even when an agent feeds this pin directory */
};

static const struct load_ctx load_defaults = {
	.confirm = 1, .max_list_bytes = BG_LIST_BYTES_MAX,
	.max_entries = BG_LOAD_ENTRIES_MAX,
};

static int load_list(void *ctx, const struct bg_opt *o,
		     const struct bg_optval *v, char *err, size_t errlen)
{
	struct load_ctx *c = ctx;

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

static int load_format(void *ctx, const struct bg_opt *o,
		       const struct bg_optval *v, char *err, size_t errlen)
{
	struct load_ctx *c = ctx;

	(void)o;
	/* the names in the table are lists.c's: cannot fail */
	if (bg_sources_set_format(c->srcs, v->arg)) {
		snprintf(err, errlen, "--format: '%s' is unknown", v->arg);
		return -EINVAL;
	}
	return 0;
}

static int load_subdomains(void *ctx, const struct bg_opt *o,
			   const struct bg_optval *v, char *err, size_t errlen)
{
	struct load_ctx *c = ctx;

	(void)v;
	(void)err;
	(void)errlen;
	bg_sources_set_subdomains(c->srcs, !strcmp(o->name, "subdomains"));
	return 0;
}

static int load_done(void *ctx, unsigned int npos, char *err, size_t errlen)
{
	struct load_ctx *c = ctx;
	int ret = bg_sources_done(c->srcs);

	(void)npos;
	if (ret == -EINVAL)
		snprintf(err, errlen, "--format, --subdomains and --no-subdomains apply "
			 "to the lists after them; none follows the last one");
	else if (ret)
		snprintf(err, errlen, "load: missing LIST (a list to block)");
	return ret ? -EINVAL : 0;
}

static const struct bg_opt_enum format_values[] = {
	{ "auto", BG_FMT_AUTO, "detect each file's format (below)" },
	{ "addr", BG_FMT_ADDR, "addresses and CIDR prefixes" },
	{ "plain", BG_FMT_PLAIN, "domain names" },
	{ "hosts", BG_FMT_HOSTS, "hosts file" },
	{ "adblock", BG_FMT_ADBLOCK, "Adblock rules" },
	{ NULL },
};

static const struct bg_opt_enum confirm_values[] = {
	{ "on", 1, "confirm every Bloom positive against an exact table of "
	  "32-bit fingerprints: no false-positive verdicts" },
	{ "off", 0, "act on a Bloom positive as it is: about 4.4 bytes a key "
	  "less, one unlisted address or name in 1/P wrongly blocked" },
	{ NULL },
};

static const struct bg_opt load_opts[] = {
	{ .name = "fpr", .type = BG_OPT_DOUBLE, .metavar = "P",
	  .help = "target false-positive rate of the Bloom part per address or "
		  "query (default " BG_TEXTIFY(BG_FPR_DEFAULT_CONFIRM) ", "
		  BG_TEXTIFY(BG_FPR_DEFAULT) " with --confirm off)",
	  .min = BG_FPR_MIN, .max = BG_FPR_MAX, .off = offsetof(struct load_ctx, fpr) },
	{ .name = "confirm", .type = BG_OPT_ENUM, .values = confirm_values,
	  .help = "the exact stage behind the Bloom part",
	  .off = offsetof(struct load_ctx, confirm) },
	{ .name = "strict", .type = BG_OPT_FLAG,
	  .help = "fail on a rejected line, a too-deep subdomain rule or an empty list",
	  .off = offsetof(struct load_ctx, strict) },
	{ .name = "allow-wide", .type = BG_OPT_FLAG,
	  .help = "load IPv4 prefixes shorter than /8 and IPv6 shorter than /16",
	  .off = offsetof(struct load_ctx, allow_wide) },
	{ .name = "format", .type = BG_OPT_ENUM, .metavar = "F", .values = format_values,
	  .help = "read the lists after it as F", .max_count = BG_OPT_MANY,
	  .set = load_format },
	{ .name = "subdomains", .type = BG_OPT_FLAG,
	  .help = "plain names in the lists after it cover their subdomains",
	  .max_count = BG_OPT_MANY, .set = load_subdomains },
	{ .name = "no-subdomains", .type = BG_OPT_FLAG,
	  .help = "back to the default: a plain name is the name only",
	  .max_count = BG_OPT_MANY, .flags = BG_OPT_F_NOSYN, .set = load_subdomains },
	{ .name = "allow", .type = BG_OPT_PATH, .metavar = "LIST",
	  .help = "a list of entries that always pass", .max_count = BG_OPT_MANY,
	  .set = load_list },
	{ .name = "max-list-bytes", .type = BG_OPT_UINT, .metavar = "SIZE",
	  .help = "refuse a list of more than SIZE bytes (K, M, G: KiB, MiB, GiB)", .min = 1, .max = INFINITY,
	  .flags = BG_OPT_F_SIZE,
	  .off = offsetof(struct load_ctx, max_list_bytes) },
	{ .name = "max-entries", .type = BG_OPT_UINT, .metavar = "N",
	  .help = "refuse lists of more than N entries in all", .min = 1,
	  .max = INFINITY, .off = offsetof(struct load_ctx, max_entries) },
	{ .name = "force", .type = BG_OPT_FLAG,
	  .help = "load even when an agent feeds the filter (its lists stop "
		  "being enforced until its next rebuild)",
	  .off = offsetof(struct load_ctx, force) },
	{ NULL },
};

static const struct bg_opt load_pos = {
	.type = BG_OPT_PATH, .metavar = "LIST", .help = "a list of entries to block",
	.set = load_list,
};

const struct bg_cmd cli_load_cmd = {
	.name = "load",
	.summary = "Parses the lists, builds a new filter sized for the target\n"
		   "false-positive rate and swaps it in atomically. A load that fails\n"
		   "leaves the running filter as it was.",
	.details =
	"Lists are address lists (IPv4/IPv6 addresses and CIDR prefixes, one\n"
	"per line: plain, FireHOL ipset/netset, Spamhaus DROP) or domain\n"
	"lists, in one load:\n"
	"  plain    one name a line; *.name for its subdomains only\n"
	"  hosts    0.0.0.0 name [name...] (also 127.0.0.1, ::, ::1, or a\n"
	"           bare name): each name exactly; the addresses are where\n"
	"           the names point, never loaded as blocked addresses\n"
	"  adblock  ||name^ (name and subdomains), ||*.name^ (subdomains),\n"
	"           |name^ (the name only), @@ before any: allow\n"
	"Each file's format is detected from its first " BG_TEXTIFY(BG_FMT_DETECT_LINES) " lines that are\n"
	"not blank or comments: addresses when more than half are addresses\n"
	"or prefixes; else Adblock when one starts with |, !, [ or @@; else\n"
	"hosts when one is an address and a name; else plain when more than\n"
	"half are names of two labels or more; else addresses (each line is\n"
	"then rejected as not an address: say --format plain if need be).\n"
	"load prints FILE: detected FORMAT (why) for each list detected. A\n"
	"list with more than half of its lines rejected is a warning naming\n"
	"the format that reads them, if one does; one that loads no entry is\n"
	"a warning too; --strict fails the load on either.\n"
	"--format applies to every list after it on the command line, blocked\n"
	"and --allow alike, up to the next --format (like gcc's -x);\n"
	"--subdomains likewise (as HaGeZi's lists mean), up to\n"
	"--no-subdomains. Given after the last list, they would apply to\n"
	"none: an error.\n"
	"--allow lists addresses and prefixes that pass also inside listed\n"
	"ranges, and names, which beat blocked parents.\n"
	"--strict fails the load on any rejected line, and on any subdomain\n"
	"rule deeper than " BG_TEXTIFY(BG_DNS_SUFFIX_MAX) " labels (never matched), instead of reporting\n"
	"and skipping it.\n"
	"A prefix shorter than /8 (IPv4) or /16 (IPv6), /0 included, is\n"
	"rejected unless --allow-wide is given (then loaded with a warning):\n"
	"one such line would block far more than any list means. In an\n"
	"--allow list it always loads, with a warning. ::ffff:a.b.c.d[/n]\n"
	"(n >= 96) is loaded as the IPv4 entry a.b.c.d[/n-96], with a\n"
	"warning; --strict rejects it.\n"
	"Every rejected line is reported as FILE:LINE: reason: 'text'.\n"
	"A LIST is a regular file, or - for standard input (read once, as\n"
	"/dev/stdin in reports); a FIFO, a device or a directory is refused.\n"
	"The lists are read and parsed before the pin directory is locked:\n"
	"a slow list holds up no other command.",
	.opts = load_opts, .pos = &load_pos, .min_pos = 1, .max_pos = BG_POS_MANY,
	.defaults = &load_defaults, .done = load_done,
};

/* Diagnostics as they come: "file:line: reason: 'text'" on stderr. A
 * file-level error (unreadable, not a regular file, too large) fails the
 * load, whose one line says it. */
static void print_diag(void *ctx, const struct bg_diag *d)
{
	(void)ctx;
	if (d->line || d->warning)
		bg_diag_print(stderr, d);
}

int cli_cmd_load(int argc, char **argv)
{
	struct load_ctx c = load_defaults;
	struct bg_load_opts o = { .diag = print_diag };
	struct bg_load_report r;
	struct bg_blocklist bl;
	struct bg_sources srcs;
	struct bg_state st;
	struct bg_premap pm = BG_PREMAP_INIT;
	pid_t agent;
	int ret;

	bg_sources_init(&srcs);
	c.srcs = &srcs;
	if ((ret = cli_parse_args(&cli_load_cmd, &argc, argv, &c))) {
		bg_sources_free(&srcs);
		return ret < 0 ? 0 : ret;
	}
	/* Not attached: said at once, not after a long parse. */
	if ((ret = cli_need_root()) || (ret = cli_open_state(&st, 0))) {
		bg_sources_free(&srcs);
		return ret;
	}
	bg_state_close(&st);
	/* The agent's filter is the agent's: a load would silently replace
	 * its lists (until its next rebuild), while its status and metrics
	 * still describe its own filter. */
	if (!c.force && bg_instance_running(&agent)) {
		bg_sources_free(&srcs);
		return cli_fail(1, "the agent (pid %ld) feeds this filter (pin "
				"directory %s): change its lists, or use --force to "
				"replace its filter until its next rebuild",
				(long)agent, bg_pin_dir());
	}
	o.sources = &srcs;
	o.strict = c.strict;
	o.allow_wide = c.allow_wide;
	o.fpr = c.fpr;
	o.confirm_off = !c.confirm;
	o.max_list_bytes = c.max_list_bytes;
	o.max_entries = c.max_entries;
	/* the filter map made while the keys are sorted (kern/load.h) */
	o.parsed = bg_premap_parsed;
	o.parsed_ctx = &pm;
	bg_load_report_init(&r);
	/* Parse without the lock: a FIFO or a huge list holds up nobody.
	 * Then the lock, only to build, publish and record: concurrent loads
	 * queue there, and the last to take it is the one live. */
	ret = bg_load_prepare(&o, &bl, &r);
	if (!ret) {
		ret = cli_open_state(&st, 1);
		if (ret) {
			bg_premap_drop(&pm);
			bg_blocklist_free(&bl);
			bg_load_report_free(&r);
			bg_sources_free(&srcs);
			return ret;
		}
		ret = bg_load_commit(&st, &o, &bl, &r);
		bg_state_close(&st);
	}
	bg_premap_drop(&pm);
	bg_blocklist_free(&bl);
	if (ret)
		ret = cli_fail(r.failed <= BG_STAGE_PLAN ? EXIT_LIST : 1,
			   "%s; the running filter is unchanged", r.msg);
	else if (r.failed == BG_STAGE_RECORD)
		cli_fail(0, "%s", r.msg);
	if (!ret)
		bg_print_load_report(stdout, &srcs, &r);
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
	return ret;
}
