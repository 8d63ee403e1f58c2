// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate: the command line. One binary, iproute2-style subcommands.
 * A front end only: each command declares its options (user/opts.h), calls
 * the core or kernel library, and prints what it returns; the load and
 * check logic live in user/load.c, user/prepare.c and user/explain.c, their
 * text in user/print.c (the agent in user/agent.c). Long only because it
 * holds every command's option table.
 * Exit codes: 0 success, 1 runtime failure, 2 usage error, 3 bloomgate is
 * not attached (no pinned state), 4 the list was rejected (nothing loaded).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <json-c/json.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "bloomgate/dns.h"
#include "domains.h"
#include "filter.h"
#include "lists.h"
#include "explain.h"
#include "wire.h"
#include "load.h"
#include "opts.h"
#include "print.h"
#include "agent.h"
#include "attach.h"
#include "config.h"
#include "store.h"
#include "counters.h"
#include "pins.h"
#include "record.h"
#include "swap.h"

#define EXIT_USAGE 2
#define EXIT_NOT_ATTACHED 3
#define EXIT_LIST 4

static int verbose;

static int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("bloomgate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

static int quiet_print(enum libbpf_print_level level, const char *fmt,
		       va_list ap)
{
	(void)level;
	if (!verbose)
		return 0; /* one clear message from us instead of libbpf's */
	return vfprintf(stderr, fmt, ap);
}

static int quiet_xdp_print(enum libxdp_print_level level, const char *fmt,
			   va_list ap)
{
	(void)level;
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int need_root(void)
{
	if (geteuid() != 0)
		return fail(1, "must be run as root");
	return 0;
}

static int open_state(struct bg_state *st, int lock)
{
	int err = bg_state_open(st, lock);

	if (err == -ENOENT)
		return fail(EXIT_NOT_ATTACHED,
			    "bloomgate is not attached to any interface "
			    "(run: bloomgate attach IFACE)");
	if (err)
		return fail(1, "cannot open the pinned state in %s: %s",
			    bg_pin_dir(), strerror(-err));
	return 0;
}

static const char *match_name(int m)
{
	return bg_enum_name(bg_match_values, m);
}

static const char *action_name(int a)
{
	return bg_enum_name(bg_action_values, a);
}

static const char *dns_action_name(int a)
{
	return bg_enum_name(bg_dns_action_values, a);
}

/* "native" or "skb": the mode of a record, less its flags (abi.h). */
static const char *rec_mode_name(const struct bg_attach_rec *r)
{
	return bg_enum_name(bg_mode_values, r->mode & BG_ATTACH_MODE_MASK);
}

/* "pass" or "drop": a record's policy for unparsed frames; 0 in records
 * written before the flag existed, which is pass. */
static const char *rec_unparsed_name(const struct bg_attach_rec *r)
{
	return bg_enum_name(bg_unparsed_values,
			    r->mode & BG_ATTACH_F_UNPARSED_DROP ? BG_UNPARSED_DROP :
								  BG_UNPARSED_PASS);
}

/* "53" or "53,5353": the ports in use (0 = unused), into buf. */
static void fmt_ports(char *buf, size_t len, const __u16 *ports)
{
	size_t o = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < BG_DNS_PORTS_MAX; i++)
		if (ports[i] && o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%u", o ? "," : "",
					      ports[i]);
	if (!o)
		snprintf(buf, len, "none");
}

/* "any size", or "16000 keys, 1.86 MiB": a filter map capacity of elems
 * elements (bg_attach_rec.capacity), in the keys it holds at the default
 * false-positive rate. */
static void fmt_capacity(char *buf, size_t len, __u32 elems)
{
	char b[32];

	if (!elems) {
		snprintf(buf, len, "any size");
		return;
	}
	bg_fmt_bytes(b, sizeof(b), (double)elems * BG_FILTER_VALUE_SIZE);
	snprintf(buf, len, "%llu keys, %s",
		 (unsigned long long)bg_filter_capacity_keys(elems), b);
}

/*
 * Parses a command's arguments into ctx (user/opts.h). 0: go on, with the
 * positional arguments now in argv[1..*argc); else what to exit with,
 * -1 when the help was asked for and printed (exit 0).
 */
static int parse_args(const struct bg_cmd *cmd, int *argc, char **argv, void *ctx)
{
	char err[256];
	int n = bg_opts_parse(cmd, *argc, argv, ctx, err, sizeof(err));

	if (n == BG_OPTS_HELP) {
		bg_cmd_help(stdout, "bloomgate", cmd);
		return -1;
	}
	if (n < 0)
		return fail(n == -EINVAL ? EXIT_USAGE : 1, "%s", err);
	*argc = n + 1;
	return 0;
}

/* ---- attach / detach ---------------------------------------------------- */

struct attach_args {
	const char *ifname;
	int mode, match, action, dns_action, unparsed;
	__u16 ports[BG_DNS_PORTS_MAX];
	int nports;
	unsigned long long capacity;
};

static const struct attach_args attach_defaults = {
	.mode = BG_MODE_NATIVE, .match = BG_MATCH_DST, .action = BG_ACTION_DROP,
	.dns_action = BG_DNS_ACTION_NXDOMAIN, .unparsed = BG_UNPARSED_PASS,
};

/* A --dns-port: in range already (the table), not given twice. */
static int attach_port(void *ctx, const struct bg_opt *o,
		       const struct bg_optval *v, char *err, size_t errlen)
{
	struct attach_args *a = ctx;
	int i;

	for (i = 0; i < a->nports; i++) {
		if (a->ports[i] == v->u) {
			snprintf(err, errlen, "--%s: %llu given twice", o->name, v->u);
			return -EINVAL;
		}
	}
	/* the table allows BG_DNS_PORTS_MAX: cannot overflow */
	a->ports[a->nports++] = (__u16)v->u;
	return 0;
}

static const struct bg_opt attach_opts[] = {
	{ .name = "mode", .type = BG_OPT_ENUM, .values = bg_mode_values,
	  .help = "how the program is attached",
	  .off = offsetof(struct attach_args, mode) },
	{ .name = "match", .type = BG_OPT_ENUM, .values = bg_match_values,
	  .help = "the address looked up",
	  .off = offsetof(struct attach_args, match) },
	{ .name = "action", .type = BG_OPT_ENUM, .values = bg_action_values,
	  .help = "on a listed address",
	  .off = offsetof(struct attach_args, action) },
	{ .name = "dns-action", .type = BG_OPT_ENUM, .values = bg_dns_action_values,
	  .help = "on a DNS query (UDP to a DNS port) for a listed name",
	  .off = offsetof(struct attach_args, dns_action) },
	{ .name = "dns-port", .type = BG_OPT_UINT, .metavar = "N",
	  .help = "UDP destination port judged as DNS; given ports replace 53",
	  .min = 1, .max = 65535, .max_count = BG_DNS_PORTS_MAX,
	  .set = attach_port },
	{ .name = "unparsed", .type = BG_OPT_ENUM, .values = bg_unparsed_values,
	  .help = "on a frame with no address to judge: cut or invalid "
		  "Ethernet/VLAN/IP headers, more than " BG_TEXTIFY(BG_VLAN_MAX)
		  " VLAN tags (ARP and other non-IP frames always pass)",
	  .off = offsetof(struct attach_args, unparsed) },
	{ .name = "capacity", .type = BG_OPT_UINT, .metavar = "KEYS",
	  .help = "a filter map of fixed size, for KEYS Bloom keys at fpr "
		  BG_TEXTIFY(BG_FPR_DEFAULT_CONFIRM) " with the exact stage: lookups "
		  "inlined, a larger list "
		  "refused; without it, any size",
	  .min = 1, .max = (double)BG_CAPACITY_MAX,
	  .off = offsetof(struct attach_args, capacity) },
	{ NULL },
};

static const struct bg_opt attach_pos = {
	.type = BG_OPT_IFNAME, .metavar = "IFACE", .help = "the interface",
	.off = offsetof(struct attach_args, ifname),
};

static const struct bg_cmd attach_cmd = {
	.name = "attach",
	.summary = "Attaches the XDP filter to IFACE (through libxdp, so other XDP\n"
		   "programs can share the interface). Every attached interface\n"
		   "shares one filter, pinned under /sys/fs/bpf/bloomgate.",
	.opts = attach_opts, .pos = &attach_pos, .min_pos = 1, .max_pos = 1,
	.pos_first = 1, .defaults = &attach_defaults,
};

static int cmd_attach(int argc, char **argv)
{
	struct attach_args a = attach_defaults;
	struct bg_attach_opts o = { 0 };
	char err[256] = "", ports[64], cap[96];
	int ret;

	if ((ret = parse_args(&attach_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	if ((ret = need_root()))
		return ret;
	o.mode = (enum bg_mode)a.mode;
	o.match = (enum bg_match)a.match;
	o.action = (enum bg_action)a.action;
	o.dns_action = (enum bg_dns_action)a.dns_action;
	o.unparsed = (enum bg_unparsed)a.unparsed;
	memcpy(o.dns_ports, a.ports, sizeof(o.dns_ports));
	if (!a.nports)
		o.dns_ports[0] = BG_DNS_PORT;
	o.capacity = a.capacity;
	if (bg_attach(a.ifname, &o, err, sizeof(err)))
		return fail(1, "%s", err);
	fmt_ports(ports, sizeof(ports), o.dns_ports);
	fmt_capacity(cap, sizeof(cap),
		     o.capacity ? bg_filter_capacity_elems(o.capacity) : 0);
	printf("attached to %s (%s mode, match %s, action %s, dns-action %s, dns-ports %s, "
	       "unparsed %s, capacity %s)\n",
	       a.ifname, o.mode == BG_MODE_SKB ? "skb" : "native",
	       match_name(o.match), action_name(o.action),
	       dns_action_name(o.dns_action), ports,
	       bg_enum_name(bg_unparsed_values, o.unparsed), cap);
	return 0;
}

struct detach_args {
	const char *ifname;
	int all, gone;
};

static int detach_done(void *ctx, unsigned int npos, char *err, size_t errlen)
{
	const struct detach_args *a = ctx;

	(void)npos;
	if (!!a->ifname + a->all + a->gone != 1) {
		snprintf(err, errlen, "detach: %s", a->ifname || a->all || a->gone ?
			 "one of IFACE, --all and --gone" :
			 "missing IFACE (or --all, --gone)");
		return -EINVAL;
	}
	return 0;
}

static const struct bg_opt detach_opts[] = {
	{ .name = "all", .type = BG_OPT_FLAG,
	  .help = "every interface of this network namespace, also gone ones",
	  .off = offsetof(struct detach_args, all) },
	{ .name = "gone", .type = BG_OPT_FLAG,
	  .help = "the attachments whose interface no longer exists (status: "
		  "gone), in any network namespace",
	  .off = offsetof(struct detach_args, gone) },
	{ NULL },
};

/* A string, not BG_OPT_IFNAME: the name of a deleted interface gets
 * bg_detach()'s answer, which points at --gone when there are such. */
static const struct bg_opt detach_pos = {
	.type = BG_OPT_STRING, .metavar = "IFACE", .help = "the interface",
	.off = offsetof(struct detach_args, ifname),
};

static const struct bg_cmd detach_cmd = {
	.name = "detach",
	.summary = "Removes bloomgate's XDP program from IFACE, and the pin of\n"
		   "its DNS program array; after the last interface, removes\n"
		   "every pinned map too. --all detaches from every interface of\n"
		   "this network namespace, also ones that no longer exist.\n"
		   "--gone removes only the attachments whose interface was\n"
		   "deleted, one line each.",
	.opts = detach_opts, .pos = &detach_pos, .min_pos = 0, .max_pos = 1,
	.pos_first = 1, .done = detach_done,
};

/* detach --gone: one line per removed attachment. */
static void print_gone(void *ctx, const struct bg_attach_rec *r)
{
	(void)ctx;
	printf("removed: gone (ifindex %u, netns inode %u, prog id %u)\n",
	       r->ifindex, r->netns_ino, r->prog_id);
}

static int cmd_detach(int argc, char **argv)
{
	struct detach_args a = { 0 };
	char err[256] = "";
	int ret;

	if ((ret = parse_args(&detach_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	if ((ret = need_root()))
		return ret;
	if (a.gone) {
		ret = bg_detach_gone(print_gone, NULL, err, sizeof(err));
		if (ret < 0)
			return fail(ret == -ENOENT ? EXIT_NOT_ATTACHED : 1, "%s", err);
		if (!ret)
			puts("no attachment is gone");
		return 0;
	}
	if (a.all)
		ret = bg_detach_all(err, sizeof(err));
	else
		ret = bg_detach(a.ifname, err, sizeof(err));
	if (ret == -ENODEV) /* a usage error, as attach's */
		return fail(EXIT_USAGE, "detach: %s", err);
	if (ret)
		return fail(ret == -ENOENT ? EXIT_NOT_ATTACHED : 1, "%s", err);
	printf("detached from %s\n", a.all ? "every interface" : a.ifname);
	return 0;
}

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
	{ NULL },
};

static const struct bg_opt load_pos = {
	.type = BG_OPT_PATH, .metavar = "LIST", .help = "a list of entries to block",
	.set = load_list,
};

static const struct bg_cmd load_cmd = {
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

static int cmd_load(int argc, char **argv)
{
	struct load_ctx c = load_defaults;
	struct bg_load_opts o = { .diag = print_diag };
	struct bg_load_report r;
	struct bg_blocklist bl;
	struct bg_sources srcs;
	struct bg_state st;
	int ret;

	bg_sources_init(&srcs);
	c.srcs = &srcs;
	if ((ret = parse_args(&load_cmd, &argc, argv, &c))) {
		bg_sources_free(&srcs);
		return ret < 0 ? 0 : ret;
	}
	/* Not attached: said at once, not after a long parse. */
	if ((ret = need_root()) || (ret = open_state(&st, 0))) {
		bg_sources_free(&srcs);
		return ret;
	}
	bg_state_close(&st);
	o.sources = &srcs;
	o.strict = c.strict;
	o.allow_wide = c.allow_wide;
	o.fpr = c.fpr;
	o.confirm_off = !c.confirm;
	o.max_list_bytes = c.max_list_bytes;
	o.max_entries = c.max_entries;
	bg_load_report_init(&r);
	/* Parse without the lock: a FIFO or a huge list holds up nobody.
	 * Then the lock, only to build, publish and record: concurrent loads
	 * queue there, and the last to take it is the one live. */
	ret = bg_load_prepare(&o, &bl, &r);
	if (!ret) {
		ret = open_state(&st, 1);
		if (ret) {
			bg_blocklist_free(&bl);
			bg_load_report_free(&r);
			bg_sources_free(&srcs);
			return ret;
		}
		ret = bg_load_commit(&st, &o, &bl, &r);
		bg_state_close(&st);
	}
	bg_blocklist_free(&bl);
	if (ret)
		ret = fail(r.failed <= BG_STAGE_PLAN ? EXIT_LIST : 1,
			   "%s; the running filter is unchanged", r.msg);
	else if (r.failed == BG_STAGE_RECORD)
		fail(0, "%s", r.msg);
	if (!ret)
		bg_print_load_report(stdout, &srcs, &r);
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
	return ret;
}

/* ---- check -------------------------------------------------------------- */

static const struct bg_opt check_pos = {
	.type = BG_OPT_STRING, .metavar = "ADDR|NAME",
	.help = "an IP address, or else a domain name",
};

static const struct bg_cmd check_cmd = {
	.name = "check",
	.summary = "For each IP address or domain name, says whether the live\n"
		   "filter matches it (\"match\": dropped, or for a name, the\n"
		   "DNS action) or not (\"no match\"), and why: the listed entry\n"
		   "(file:line) that covers it -- for a name, the line's text, and\n"
		   "whether it lists the name itself or a parent with its\n"
		   "subdomains --, the allowlist entry that passes it (allow beats\n"
		   "block), or that the match is a probable false positive.\n"
		   "An argument that parses as an IP address is an address;\n"
		   "anything else must be a domain name (a trailing dot is fine,\n"
		   "case does not matter).",
	.pos = &check_pos, .min_pos = 1, .max_pos = BG_POS_MANY,
};

/* The agent's store behind a record, when the record names the agent's
 * copies (STATE_DIR/lists/NAME.list) and STATE_DIR/bloomgate.db is there:
 * then check names each source and the line as fetched. NULL otherwise. */
static struct bg_store *agent_store_of(const struct bg_record *rec)
{
	char dir[PATH_MAX], *p;
	struct bg_store *st = NULL;

	if (rec->n < 1 || snprintf(dir, sizeof(dir), "%s", rec->src[0].path) >=
				  (int)sizeof(dir))
		return NULL;
	p = strrchr(dir, '/');
	if (!p || strcmp(p + strlen(p) - 5, ".list"))
		return NULL;
	*p = 0;
	p = strrchr(dir, '/');
	if (!p || strcmp(p, "/lists"))
		return NULL;
	*p = 0;
	if (bg_store_open_ro(dir, &st))
		return NULL;
	return st;
}

static int cmd_check(int argc, char **argv)
{
	struct bg_store *store = NULL;
	struct bg_record rec;
	const void *mem;
	struct bg_state st;
	size_t len;
	__u32 id = 0;
	int i, ret, bad = 0, have_rec;

	if ((ret = parse_args(&check_cmd, &argc, argv, NULL)))
		return ret < 0 ? 0 : ret;
	if ((ret = need_root()))
		return ret;
	if ((ret = open_state(&st, 0)))
		return ret;
	/* The record of the filter mapped: its id read before and after
	 * the mapping, so a swap in between is seen (and retried). */
	for (i = 0; i < 5; i++) {
		id = bg_filter_current_id(st.filters_fd);
		ret = bg_filter_map_current(st.filters_fd, &mem, &len);
		if (ret == 0 && id != bg_filter_current_id(st.filters_fd)) {
			bg_filter_unmap(mem, len);
			ret = -EAGAIN;
		}
		if (ret != -EAGAIN)
			break;
	}
	have_rec = ret == 0 && bg_record_read(id, &rec) == 0;
	bg_state_close(&st);
	if (ret == -ENOENT)
		return fail(1, "no filter is loaded (run: bloomgate load LIST)");
	if (ret == -EPROTO)
		return fail(1, "the loaded filter is from another bloomgate version "
			    "(ABI %d expected); reload it", BG_ABI_VERSION);
	if (ret)
		return fail(1, "cannot read the live filter: %s", strerror(-ret));
	if (have_rec)
		store = agent_store_of(&rec);
	for (i = 1; i < argc; i++) {
		struct bg_explanation x;

		if (store ? bg_explain_store(mem, store, argv[i], &x) :
			    bg_explain(mem, have_rec ? &rec : NULL, argv[i], &x)) {
			bad = fail(1, "%s: out of memory", argv[i]);
		} else if (x.kind == BG_EXPLAIN_INVALID) {
			fprintf(stderr, "bloomgate: %s: %s\n", argv[i], x.why);
			bad = bad ? bad : EXIT_USAGE;
		} else {
			bg_print_explanation(stdout, argv[i], &x);
		}
		bg_explain_free(&x);
	}
	bg_filter_unmap(mem, len);
	if (store)
		bg_store_close(store);
	if (have_rec)
		bg_record_free(&rec);
	return bad;
}

/* ---- stats / status / events ------------------------------------------- */

struct stats_args {
	int json;
};

static const struct bg_opt stats_opts[] = {
	{ .name = "json", .type = BG_OPT_FLAG, .help = "one JSON object",
	  .off = offsetof(struct stats_args, json) },
	{ NULL },
};

static const struct bg_cmd stats_cmd = {
	.name = "stats",
	.summary = "Prints the datapath counters, summed over CPUs;\n"
		   "malformed_* count packets by malformation reason.",
	.opts = stats_opts,
};

static int cmd_stats(int argc, char **argv)
{
	struct stats_args a = { 0 };
	struct bg_counters c;
	struct bg_state st;
	int json, ret, i;

	if ((ret = parse_args(&stats_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	json = a.json;
	if ((ret = need_root()))
		return ret;
	if ((ret = open_state(&st, 0)))
		return ret;
	ret = bg_counters_read(st.counters_fd, &c);
	bg_state_close(&st);
	if (ret)
		return fail(1, "cannot read counters: %s", strerror(-ret));
	if (json) {
		struct json_object *o = bg_counters_json(&c);

		if (!o)
			return fail(1, "out of memory");
		puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		return 0;
	}
	for (i = 0; i < BG_CNT__COUNT; i++)
		printf("%-28s %llu\n", bg_counter_names[i],
		       (unsigned long long)c.cnt[i]);
	for (i = 0; i < BG_MAL__COUNT; i++)
		printf(BG_MALFORMED_PREFIX "%-18s %llu\n", bg_malformed_names[i],
		       (unsigned long long)c.malformed[i]);
	return 0;
}

static const struct bg_cmd status_cmd = {
	.name = "status",
	.summary = "Shows the interfaces bloomgate is attached to and the\n"
		   "loaded filter.",
};

/* status: the agent's part, when one runs ("agent: none running" else). */
static void print_agent_status(void)
{
	struct json_object *o, *v, *srcs;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	if (bg_agent_ask("status", f)) {
		fclose(f);
		free(buf);
		puts("agent: none running");
		return;
	}
	fclose(f);
	o = json_tokener_parse(buf);
	free(buf);
	if (!o) {
		puts("agent: running, but its status cannot be read");
		return;
	}
	printf("agent: pid %d, up %.0f s, config %s, filter generation %lld\n",
	       json_object_object_get_ex(o, "pid", &v) ? json_object_get_int(v) : 0,
	       json_object_object_get_ex(o, "uptime", &v) ? json_object_get_double(v) : 0,
	       json_object_object_get_ex(o, "config", &v) ? json_object_get_string(v) : "?",
	       json_object_object_get_ex(o, "generation", &v) ? (long long)json_object_get_int64(v) : 0);
	if (json_object_object_get_ex(o, "sources", &srcs))
		for (i = 0; i < json_object_array_length(srcs); i++) {
			struct json_object *s = json_object_array_get_idx(srcs, i), *n;
			const char *err = json_object_object_get_ex(s, "last_error", &v) ?
						  json_object_get_string(v) : "";

			printf("  list %s (%s): %s, %lld entries",
			       json_object_object_get_ex(s, "name", &v) ? json_object_get_string(v) : "?",
			       json_object_object_get_ex(s, "origin", &v) ? json_object_get_string(v) : "?",
			       json_object_object_get_ex(s, "state", &v) ? json_object_get_string(v) : "?",
			       json_object_object_get_ex(s, "entries", &v) ? (long long)json_object_get_int64(v) : 0);
			if (json_object_object_get_ex(s, "last_success", &v) && json_object_get_double(v) > 0)
				printf(", last success %.0f s ago",
				       fmax(0, (double)time(NULL) - json_object_get_double(v)));
			if (json_object_object_get_ex(s, "next_fetch_in", &n) && n)
				printf(", next fetch in %.0f s", json_object_get_double(n));
			if (err && *err)
				printf(", last error: %s", err);
			putchar('\n');
		}
	json_object_put(o);
}


/* status: the lists behind the live filter, from its load record. */
static void print_record_lists(__u32 id)
{
	struct bg_record rec;
	int i;

	if (!id || bg_record_read(id, &rec)) {
		puts("lists: not recorded (check cannot name entries)");
		return;
	}
	printf("lists:");
	for (i = 0; i < rec.n; i++)
		printf("%s %s %s (%s%s)", i ? "," : "",
		       rec.src[i].allow ? "allow" : "block", rec.src[i].path,
		       bg_format_name(rec.src[i].format),
		       rec.src[i].subdomains ? ", subdomains" : "");
	puts(rec.n ? "" : " none");
	bg_record_free(&rec);
}

static int cmd_status(int argc, char **argv)
{
	struct bg_attach_rec recs[BG_ATTACH_MAX];
	struct bg_state st;
	const void *mem;
	char cap[96] = "";
	__u32 cap_elems = UINT32_MAX; /* none formatted yet */
	size_t len;
	int n, i, ret;

	if ((ret = parse_args(&status_cmd, &argc, argv, NULL)))
		return ret < 0 ? 0 : ret;
	if ((ret = need_root()))
		return ret;
	/* Opened once. Not attached is an answer here (on stdout), with
	 * the exit code every command gives it. */
	ret = bg_state_open(&st, 0);
	if (ret == -ENOENT) {
		puts("bloomgate is not attached to any interface");
		return EXIT_NOT_ATTACHED;
	}
	if (ret)
		return fail(1, "cannot open the pinned state in %s: %s",
			    bg_pin_dir(), strerror(-ret));
	n = bg_attach_list(&st, recs, BG_ATTACH_MAX);
	printf("pinned state: %s\n", st.dir);
	for (i = 0; i < n; i++) {
		char name[IF_NAMESIZE] = "?", ports[64];

		/* Its name cannot be had any more, nor kept in the record. */
		if (bg_attach_rec_gone(&recs[i]) == 1) {
			printf("attached: gone (ifindex %u)", recs[i].ifindex);
			if (recs[i].netns_ino != bg_netns_ino())
				printf(" in another network namespace (netns inode %u)",
				       recs[i].netns_ino);
			printf(", prog id %u (bloomgate detach --gone removes it)\n",
			       recs[i].prog_id);
			continue;
		}
		if (recs[i].netns_ino != bg_netns_ino()) {
			printf("attached: ifindex %u in another network namespace "
			       "(netns inode %u, prog id %u)\n", recs[i].ifindex,
			       recs[i].netns_ino, recs[i].prog_id);
			continue;
		}
		if_indextoname(recs[i].ifindex, name);
		fmt_ports(ports, sizeof(ports), recs[i].dns_ports);
		/* the records agree (attach refuses another capacity): the
		 * keys are worked out once */
		if (recs[i].capacity != cap_elems) {
			cap_elems = recs[i].capacity;
			fmt_capacity(cap, sizeof(cap), cap_elems);
		}
		printf("attached: %s (ifindex %u, %s mode, match %s, action %s, "
		       "dns-action %s, dns-ports %s, unparsed %s, capacity %s, "
		       "prog id %u, dns prog id %u)\n",
		       name, recs[i].ifindex, rec_mode_name(&recs[i]),
		       match_name(recs[i].match), action_name(recs[i].action),
		       dns_action_name(recs[i].dns_action), ports,
		       rec_unparsed_name(&recs[i]), cap, recs[i].prog_id,
		       recs[i].dns_prog_id);
	}
	ret = bg_filter_map_current(st.filters_fd, &mem, &len);
	if (ret == 0) {
		const struct bg_filter_header *h = mem;
		char b[32];

		double pp = bg_filter_model_fpr(h->entries, h->nblocks, h->k);
		int probes = h->n4 > h->n6 ? h->n4 : h->n6, i;

		bg_fmt_bytes(b, sizeof(b), (double)bg_filter_nelems(h) * BG_FILTER_VALUE_SIZE);
		printf("filter: %llu Bloom keys, %u blocks, k=%u, %.2f bits/key, "
		       "predicted false-positive rate %.6f per address",
		       (unsigned long long)h->entries, h->nblocks, h->k,
		       h->entries ? (double)h->nblocks * BG_BLOCK_BITS / (double)h->entries : 0.0,
		       1.0 - pow(1.0 - pp, probes ? probes : 1));
		if (h->flags & BG_FILTER_F_NAMES)
			printf(", %.6f per query",
			       1.0 - pow(1.0 - pp, 1 + __builtin_popcount(h->subs_depths)));
		printf(", memory %s\n", b);
		if (h->fp_nbuckets)
			printf("exact stage: %u buckets of %d fingerprints, every Bloom "
			       "positive confirmed\n", h->fp_nbuckets, BG_FP_PER_BUCKET);
		else
			printf("exact stage: off (loaded with --confirm off)\n");
		printf("probes: IPv4 %s", h->flags & BG_FILTER_F_SHORT4 ? "bitmap /0-/16" : "");
		for (i = 0; i < h->n4; i++)
			printf(" /%u", h->len4[i]);
		printf("; IPv6 %s", h->short6_n ? "exact ranges" : "");
		for (i = 0; i < h->n6; i++)
			printf(" /%u", h->len6[i]);
		printf("; allowlist %u IPv4 + %u IPv6 ranges\n", h->allow4_n, h->allow6_n);
		if (h->flags & BG_FILTER_F_NAMES) {
			char db[32];

			printf("names: up to %d probes per query (the name, then its parent "
			       "names of at most %d labels with a subdomain rule: depths "
			       "%s); %u allowed name keys\n",
			       1 + __builtin_popcount(h->subs_depths), BG_DNS_SUFFIX_MAX,
			       bg_fmt_depths(db, sizeof(db), h->subs_depths), h->allown_n);
		}
		else
			puts("names: none loaded (DNS queries pass)");
		bg_filter_unmap(mem, len);
		print_record_lists(bg_filter_current_id(st.filters_fd));
	} else if (ret == -ENOENT) {
		puts("filter: none loaded (every packet with an address passes)");
	} else {
		/* e.g. EPERM: the live map is found by id (CAP_SYS_ADMIN) */
		printf("filter: cannot be read: %s\n", strerror(-ret));
	}
	bg_state_close(&st);
	print_agent_status();
	return 0;
}

static volatile sig_atomic_t stop_events;
static long events_left = -1;

static void on_signal(int sig)
{
	(void)sig;
	stop_events = 1;
}

/* Wall-clock time of a bpf_ktime_get_ns() stamp (CLOCK_MONOTONIC). */
static void fmt_event_time(char *buf, size_t len, __u64 ts_ns)
{
	struct timespec mono, real;
	long long ns;
	time_t sec;
	struct tm tm;
	char t[32];

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	ns = (long long)real.tv_sec * 1000000000LL + real.tv_nsec -
	     ((long long)mono.tv_sec * 1000000000LL + mono.tv_nsec - (long long)ts_ns);
	sec = (time_t)(ns / 1000000000LL);
	localtime_r(&sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03lld", t, (ns % 1000000000LL) / 1000000LL);
}

static int print_event(void *ctx, void *data, size_t size)
{
	const struct bg_event *e = data;
	char addr[INET6_ADDRSTRLEN] = "?", ifn[IF_NAMESIZE] = "?";

	(void)ctx;
	if (size < sizeof(*e))
		return 0;
	inet_ntop(e->family == BG_KEY_IPV4 ? AF_INET : AF_INET6, e->addr, addr,
		  sizeof(addr));
	if_indextoname(e->ifindex, ifn);
	if (e->which == BG_EVENT_NAME) {
		const struct bg_name_event *ne = data;
		char name[BG_NAME_TEXT_MAX], when[48];

		if (size < sizeof(*ne) ||
		    bg_name_from_wire(ne->name, sizeof(ne->name), name, sizeof(name)) < 0)
			snprintf(name, sizeof(name), "(malformed name)");
		fmt_event_time(when, sizeof(when), e->ts_ns);
		printf("%s name %s from %s on %s at %s\n",
		       e->verdict == BG_VERDICT_FLAG ? "flag" : "drop", name, addr,
		       ifn, when);
	} else {
		printf("%s %s %s on %s\n", e->verdict == BG_VERDICT_FLAG ? "flag" : "drop",
		       e->which == BG_MATCH_SRC ? "src" : "dst", addr, ifn);
	}
	fflush(stdout);
	if (events_left > 0 && --events_left == 0)
		stop_events = 1;
	return 0;
}

struct events_args {
	unsigned long long count;
	double timeout;
};

static const struct bg_opt events_opts[] = {
	{ .name = "count", .type = BG_OPT_UINT, .metavar = "N",
	  .help = "exit after N events", .min = 1, .max = INFINITY,
	  .off = offsetof(struct events_args, count) },
	{ .name = "timeout", .type = BG_OPT_DOUBLE, .metavar = "SEC",
	  .help = "exit after SEC seconds", .min = 0, .max = INFINITY,
	  .flags = BG_OPT_F_MIN_OPEN, .off = offsetof(struct events_args, timeout) },
	{ NULL },
};

static const struct bg_cmd events_cmd = {
	.name = "events",
	.summary = "Prints flagged packets as they happen, one line each:\n"
		   "\"flag dst|src ADDR on IFACE\" for a listed address, and\n"
		   "\"flag name NAME from CLIENT on IFACE at TIME\" for a DNS\n"
		   "query for a listed name (attach --dns-action flag); NAME\n"
		   "as the query had it, lowercased, odd bytes as \\DDD.",
	.opts = events_opts,
};

static int cmd_events(int argc, char **argv)
{
	struct events_args a = { 0 };
	struct ring_buffer *rb;
	struct bg_state st;
	double deadline = 0;
	int ret;

	if ((ret = parse_args(&events_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	if (a.count)
		events_left = a.count > LONG_MAX ? LONG_MAX : (long)a.count;
	if (a.timeout > 0)
		deadline = bg_now_ms() + 1000.0 * a.timeout;
	if ((ret = need_root()))
		return ret;
	if ((ret = open_state(&st, 0)))
		return ret;
	rb = ring_buffer__new(st.events_fd, print_event, NULL, NULL);
	if (!rb) {
		bg_state_close(&st);
		return fail(1, "cannot open the event ring buffer: %s", strerror(errno));
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop_events && (!deadline || bg_now_ms() < deadline)) {
		ret = ring_buffer__poll(rb, 100);
		if (ret < 0 && ret != -EINTR)
			break;
	}
	ring_buffer__free(rb);
	bg_state_close(&st);
	return 0;
}

/* ---- agent / reload ----------------------------------------------------- */

struct agent_args {
	const char *config;
	int check;
};

static const struct agent_args agent_defaults = { .config = BG_CONFIG_DEFAULT };

static const struct bg_opt agent_opts[] = {
	{ .name = "config", .type = BG_OPT_PATH, .metavar = "FILE",
	  .help = "the agent's YAML config",
	  .off = offsetof(struct agent_args, config) },
	{ .name = "check", .type = BG_OPT_FLAG,
	  .help = "validate the config and fetch and parse every list, without "
		  "touching the datapath; exit 0 when all is usable",
	  .off = offsetof(struct agent_args, check) },
	{ NULL },
};

static const struct bg_cmd agent_cmd = {
	.name = "agent",
	.summary = "Runs the agent: attaches to the configured interfaces, keeps\n"
		   "a last good copy of every list (files watched, URLs fetched on\n"
		   "their interval with conditional GET), rebuilds and swaps the\n"
		   "filter when one changes, serves Prometheus metrics. The filter\n"
		   "stays live when the agent stops (fail-static).",
	.opts = agent_opts, .defaults = &agent_defaults,
};

static int cmd_agent(int argc, char **argv)
{
	struct agent_args a = agent_defaults;
	int ret;

	if ((ret = parse_args(&agent_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	if (a.check) {
		ret = bg_agent_check(a.config, stdout);
		return ret == 2 ? EXIT_USAGE : ret ? EXIT_LIST : 0;
	}
	if ((ret = need_root()))
		return ret;
	return bg_agent_run(a.config);
}

static const struct bg_cmd reload_cmd = {
	.name = "reload",
	.summary = "Asks the running agent to re-read its config and every list\n"
		   "now, and waits until it has (the answer names the filter\n"
		   "generation). Same as SIGHUP, with an answer.",
};

static int cmd_reload(int argc, char **argv)
{
	int ret;

	if ((ret = parse_args(&reload_cmd, &argc, argv, NULL)))
		return ret < 0 ? 0 : ret;
	if ((ret = need_root()))
		return ret;
	ret = bg_agent_ask("reload", stdout);
	if (ret)
		return fail(EXIT_NOT_ATTACHED, "no agent is running (%s)", strerror(-ret));
	return 0;
}


/* ---- main --------------------------------------------------------------- */

/* The commands, in the order help lists them. */
static const struct {
	const struct bg_cmd *cmd;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ &attach_cmd, cmd_attach },
	{ &load_cmd, cmd_load },
	{ &check_cmd, cmd_check },
	{ &stats_cmd, cmd_stats },
	{ &status_cmd, cmd_status },
	{ &events_cmd, cmd_events },
	{ &detach_cmd, cmd_detach },
	{ &agent_cmd, cmd_agent },
	{ &reload_cmd, cmd_reload },
};

#define N_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static int find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < N_CMDS; i++)
		if (!strcmp(name, cmds[i].cmd->name))
			return (int)i;
	return -1;
}

static int usage(FILE *f)
{
	char syn[512];
	size_t i;

	fputs("usage: bloomgate [-v] COMMAND [ARGS]\n"
	      "XDP Bloom-filter blocklist for Linux gateways.\n\ncommands:\n", f);
	for (i = 0; i < N_CMDS; i++) {
		bg_cmd_synopsis(cmds[i].cmd, syn, sizeof(syn));
		fprintf(f, "  bloomgate %s\n", syn);
	}
	fputs("\n-v shows libbpf's and libxdp's own messages. A command's options:\n"
	      "bloomgate help COMMAND, or bloomgate COMMAND --help.\n", f);
	return f == stdout ? 0 : EXIT_USAGE;
}

/* bloomgate help [COMMAND] */
static int cmd_help(int argc, char **argv)
{
	int c;

	if (argc < 2)
		return usage(stdout);
	if (argc > 2)
		return fail(EXIT_USAGE, "help: one COMMAND at most");
	c = find_cmd(argv[1]);
	if (c < 0)
		return fail(EXIT_USAGE, "help: unknown command '%s'", argv[1]);
	bg_cmd_help(stdout, "bloomgate", cmds[c].cmd);
	return 0;
}

int main(int argc, char **argv)
{
	int c;

	libbpf_set_print(quiet_print);
	libxdp_set_print(quiet_xdp_print);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose = 1;
		argc--;
		argv++;
	}
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(stdout);
	if (!strcmp(argv[1], "help"))
		return cmd_help(argc - 1, argv + 1);
	c = find_cmd(argv[1]);
	if (c >= 0)
		return cmds[c].fn(argc - 1, argv + 1);
	fail(EXIT_USAGE, "unknown command '%s'", argv[1]);
	return usage(stderr);
}
