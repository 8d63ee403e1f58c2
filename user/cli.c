// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate: the command line. One binary, iproute2-style subcommands.
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
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "bloomgate/dns.h"
#include "domains.h"
#include "filter.h"
#include "lists.h"
#include "opts.h"
#include "state.h"

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

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
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
	return m == BG_MATCH_DST ? "dst" : m == BG_MATCH_SRC ? "src" :
		m == BG_MATCH_BOTH ? "both" : "?";
}

static const char *action_name(int a)
{
	return a == BG_ACTION_DROP ? "drop" : a == BG_ACTION_FLAG ? "flag" : "?";
}

static const char *const dns_action_names[] = {
	[BG_DNS_ACTION_DROP] = "drop", [BG_DNS_ACTION_FLAG] = "flag",
	[BG_DNS_ACTION_NXDOMAIN] = "nxdomain", [BG_DNS_ACTION_REFUSED] = "refused",
};

static const char *dns_action_name(int a)
{
	return a > 0 && a <= BG_DNS_ACTION_REFUSED ? dns_action_names[a] : "?";
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

static void fmt_bytes(char *buf, size_t len, double b)
{
	if (b >= 1 << 20)
		snprintf(buf, len, "%.2f MiB", b / (1 << 20));
	else if (b >= 1 << 10)
		snprintf(buf, len, "%.1f KiB", b / (1 << 10));
	else
		snprintf(buf, len, "%.0f B", b);
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
	int mode, match, action, dns_action;
	__u16 ports[BG_DNS_PORTS_MAX];
	int nports;
};

static const struct attach_args attach_defaults = {
	.mode = BG_MODE_NATIVE, .match = BG_MATCH_DST, .action = BG_ACTION_DROP,
	.dns_action = BG_DNS_ACTION_NXDOMAIN,
};

static const struct bg_opt_enum mode_values[] = {
	{ "native", BG_MODE_NATIVE, "driver XDP" },
	{ "skb", BG_MODE_SKB, "generic XDP, for drivers without native XDP" },
	{ NULL },
};

static const struct bg_opt_enum match_values[] = {
	{ "dst", BG_MATCH_DST, "the destination address" },
	{ "src", BG_MATCH_SRC, "the source address" },
	{ "both", BG_MATCH_BOTH, "either" },
	{ NULL },
};

static const struct bg_opt_enum action_values[] = {
	{ "drop", BG_ACTION_DROP, "drop the packet" },
	{ "flag", BG_ACTION_FLAG, "pass, count, and send an event (bloomgate events)" },
	{ NULL },
};

/* In the order the synopsis has always listed them. */
static const struct bg_opt_enum dns_action_values[] = {
	{ "drop", BG_DNS_ACTION_DROP, "drop the query" },
	{ "flag", BG_DNS_ACTION_FLAG, "pass, count, and send an event with the name" },
	{ "nxdomain", BG_DNS_ACTION_NXDOMAIN, "answer NXDOMAIN from XDP" },
	{ "refused", BG_DNS_ACTION_REFUSED, "answer REFUSED from XDP" },
	{ NULL },
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
	{ .name = "mode", .type = BG_OPT_ENUM, .values = mode_values,
	  .help = "how the program is attached",
	  .off = offsetof(struct attach_args, mode) },
	{ .name = "match", .type = BG_OPT_ENUM, .values = match_values,
	  .help = "the address looked up",
	  .off = offsetof(struct attach_args, match) },
	{ .name = "action", .type = BG_OPT_ENUM, .values = action_values,
	  .help = "on a listed address",
	  .off = offsetof(struct attach_args, action) },
	{ .name = "dns-action", .type = BG_OPT_ENUM, .values = dns_action_values,
	  .help = "on a DNS query (UDP to a DNS port) for a listed name",
	  .off = offsetof(struct attach_args, dns_action) },
	{ .name = "dns-port", .type = BG_OPT_UINT, .metavar = "N",
	  .help = "UDP destination port judged as DNS; given ports replace 53",
	  .min = 1, .max = 65535, .max_count = BG_DNS_PORTS_MAX,
	  .set = attach_port },
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
	char err[256] = "", ports[64];
	int ret;

	if ((ret = parse_args(&attach_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	if ((ret = need_root()))
		return ret;
	o.mode = (enum bg_mode)a.mode;
	o.match = (enum bg_match)a.match;
	o.action = (enum bg_action)a.action;
	o.dns_action = (enum bg_dns_action)a.dns_action;
	memcpy(o.dns_ports, a.ports, sizeof(o.dns_ports));
	if (!a.nports)
		o.dns_ports[0] = BG_DNS_PORT;
	if (bg_attach(a.ifname, &o, err, sizeof(err)))
		return fail(1, "%s", err);
	fmt_ports(ports, sizeof(ports), o.dns_ports);
	printf("attached to %s (%s mode, match %s, action %s, dns-action %s, dns-ports %s)\n",
	       a.ifname, o.mode == BG_MODE_SKB ? "skb" : "native",
	       match_name(o.match), action_name(o.action),
	       dns_action_name(o.dns_action), ports);
	return 0;
}

struct detach_args {
	const char *ifname;
	int all;
};

static int detach_done(void *ctx, unsigned int npos, char *err, size_t errlen)
{
	const struct detach_args *a = ctx;

	(void)npos;
	if (!a->ifname == !a->all) {
		snprintf(err, errlen, "detach: %s", a->all ? "IFACE or --all, not both" :
			 "missing IFACE (or --all)");
		return -EINVAL;
	}
	return 0;
}

static const struct bg_opt detach_opts[] = {
	{ .name = "all", .type = BG_OPT_FLAG,
	  .help = "every interface of this network namespace, also gone ones",
	  .off = offsetof(struct detach_args, all) },
	{ NULL },
};

static const struct bg_opt detach_pos = {
	.type = BG_OPT_IFNAME, .metavar = "IFACE", .help = "the interface",
	.off = offsetof(struct detach_args, ifname),
};

static const struct bg_cmd detach_cmd = {
	.name = "detach",
	.summary = "Removes bloomgate's XDP program from IFACE, and the pin of\n"
		   "its DNS program array; after the last interface, removes\n"
		   "every pinned map too. --all detaches from every interface of\n"
		   "this network namespace, also ones that no longer exist.",
	.opts = detach_opts, .pos = &detach_pos, .min_pos = 0, .max_pos = 1,
	.pos_first = 1, .done = detach_done,
};

static int cmd_detach(int argc, char **argv)
{
	struct detach_args a = { 0 };
	char err[256] = "";
	int ret;

	if ((ret = parse_args(&detach_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	if ((ret = need_root()))
		return ret;
	if (a.all)
		ret = bg_detach_all(err, sizeof(err));
	else
		ret = bg_detach(a.ifname, err, sizeof(err));
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
	double fpr;
};

static const struct load_ctx load_defaults = { .fpr = BG_FPR_DEFAULT };

static int load_list(void *ctx, const struct bg_opt *o,
		     const struct bg_optval *v, char *err, size_t errlen)
{
	struct load_ctx *c = ctx;

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
	{ "auto", BG_SRC_AUTO, "detect each file's format (below)" },
	{ "addr", BG_SRC_ADDR, "addresses and CIDR prefixes" },
	{ "plain", BG_SRC_PLAIN, "domain names" },
	{ "hosts", BG_SRC_HOSTS, "hosts file" },
	{ "adblock", BG_SRC_ADBLOCK, "Adblock rules" },
	{ NULL },
};

static const struct bg_opt load_opts[] = {
	{ .name = "fpr", .type = BG_OPT_DOUBLE, .metavar = "P",
	  .help = "target false-positive rate per address or query",
	  .min = BG_FPR_MIN, .max = BG_FPR_MAX, .off = offsetof(struct load_ctx, fpr) },
	{ .name = "strict", .type = BG_OPT_FLAG,
	  .help = "fail on a rejected line or a too-deep subdomain rule",
	  .off = offsetof(struct load_ctx, strict) },
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
	"Each file's format is detected from its first " BG_TEXTIFY(BG_SRC_DETECT_LINES) " lines that are\n"
	"not blank or comments: addresses when more than half are addresses\n"
	"or prefixes; else Adblock when one starts with |, !, [ or @@; else\n"
	"hosts when one is an address and a name; else plain when more than\n"
	"half are names of two labels or more; else addresses (each line is\n"
	"then rejected as not an address: say --format plain if need be).\n"
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
	"Every rejected line is reported as FILE:LINE: reason: 'text'.",
	.opts = load_opts, .pos = &load_pos, .min_pos = 1, .max_pos = BG_POS_MANY,
	.defaults = &load_defaults, .done = load_done,
};

static void print_lengths(const char *fam, const uint8_t *len, int n, int extra,
			  const char *extra_what)
{
	int i;

	printf("probes %s:      up to %d per address (", fam, n + extra);
	if (extra)
		printf("%s%s", extra_what, n ? ", " : "");
	for (i = 0; i < n; i++)
		printf("%s/%u", i ? " " : "Bloom at ", len[i]);
	if (!n && !extra)
		printf("none listed");
	puts(")");
}

/* "2 3 4" for the subdomain depths of a subs_depths mask, "none" for 0. */
static const char *depths_str(char *b, size_t sz, unsigned int mask)
{
	size_t o = 0;
	int i;

	b[0] = 0;
	for (i = 1; i <= BG_DNS_SUFFIX_MAX; i++)
		if ((mask >> i) & 1)
			o += (size_t)snprintf(b + o, sz - o, "%s%d", o ? " " : "", i);
	return o ? b : "none";
}

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

/* The arguments of load into srcs (in order: --format and --subdomains
 * apply to the lists after them), and the other options. 0, -1 after the
 * help (exit 0), or the exit code. */
static int load_args(int argc, char **argv, struct bg_sources *srcs,
		     struct bg_list_opts *lo, double *fpr)
{
	struct load_ctx c = load_defaults;
	int ret;

	c.srcs = srcs;
	c.fpr = *fpr;
	if ((ret = parse_args(&load_cmd, &argc, argv, &c)))
		return ret;
	lo->strict = c.strict;
	*fpr = c.fpr;
	return 0;
}

/* Block (not allow) names of each kind, and allow rules, in l. */
static void count_names(const struct bg_names *l, size_t *exact, size_t *subs,
			size_t *allow)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (l->v[i].allow)
			(*allow)++;
		else if (l->v[i].kind == BG_NAME_EXACT)
			(*exact)++;
		else
			(*subs)++;
	}
}

static int cmd_load(int argc, char **argv)
{
	struct bg_list_opts lo = { 0 };
	struct bg_filter_params fp;
	double fpr = BG_FPR_DEFAULT, t0, t1, t2, t3;
	struct bg_list list, allow;
	struct bg_names bnames, anames;
	struct bg_sources srcs;
	struct bg_state st;
	size_t i, n_addr = 0, n_addr_allow = 0, n_dom = 0, n_allow = 0;
	size_t exact = 0, subs = 0, allow_rules = 0, allow_names = 0, unused = 0;
	int ret, fd = -1;
	uint64_t seed;
	char mem[32], xmem[32];
	__u32 filter_id = 0;

	bg_sources_init(&srcs);
	ret = load_args(argc, argv, &srcs, &lo, &fpr);
	if (ret) {
		bg_sources_free(&srcs);
		return ret < 0 ? 0 : ret;
	}
	if ((ret = need_root()) || (ret = open_state(&st, 1))) {
		/* Lock first: concurrent loads are serialised from parse to swap. */
		bg_sources_free(&srcs);
		return ret;
	}
	bg_list_init(&list);
	bg_list_init(&allow);
	bg_names_init(&bnames);
	bg_names_init(&anames);

	t0 = now_ms();
	for (i = 0; i < srcs.n; i++) {
		struct bg_source *src = &srcs.v[i];
		int used = BG_SRC_AUTO;

		struct bg_names *nl = src->allow ? &anames : &bnames;
		size_t deep = nl->too_deep, rej = nl->rejected + list.rejected +
						  allow.rejected;

		ret = bg_source_parse(src, src->allow ? &allow : &list, nl, &lo, &used);
		if (ret == -EINVAL) {
			int r = nl->rejected + list.rejected + allow.rejected > rej;
			int d = nl->too_deep > deep;

			ret = fail(EXIT_LIST, "%s: %s%s%s with --strict; the running filter "
				   "is unchanged", src->path, r ? "rejected lines" : "",
				   r && d ? " and " : "",
				   d ? "subdomain rules never matched (too deep)" : "");
			goto out;
		}
		if (ret) {
			ret = fail(EXIT_LIST, "%s: %s; the running filter is unchanged",
				   src->path, strerror(-ret));
			goto out;
		}
		/* check re-reads the list as it was read here */
		src->format = (uint8_t)used;
		n_allow += src->allow;
		if (used == BG_SRC_ADDR) {
			n_addr++;
			n_addr_allow += src->allow;
		} else {
			n_dom++;
		}
	}
	bg_list_finish(&list);
	bg_list_finish(&allow);
	bg_names_finish(&bnames);
	bg_names_finish(&anames);
	count_names(&bnames, &exact, &subs, &allow_rules);
	count_names(&anames, &unused, &unused, &allow_names);
	list.names = bnames.n ? &bnames : NULL;
	allow.names = anames.n ? &anames : NULL;
	if (list.n4 + list.n6 + exact + subs == 0) {
		ret = fail(EXIT_LIST, "no valid entries in the lists; the running "
			   "filter is unchanged");
		goto out;
	}
	t1 = now_ms();
	ret = bg_filter_plan(&list, n_allow ? &allow : NULL, fpr, &fp);
	if (ret) {
		ret = fail(EXIT_LIST, "cannot plan a filter for %zu entries at fpr %g: %s; "
			   "the running filter is unchanged",
			   list.n4 + list.n6 + exact + subs, fpr,
			   ret == -E2BIG ? "too large" : strerror(-ret));
		goto out;
	}
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)getpid();
	fd = bg_filter_create(&fp, seed, &list, n_allow ? &allow : NULL);
	t2 = now_ms();
	if (fd < 0) {
		ret = fail(1, "cannot build the filter (%zu bytes): %s; the running "
			   "filter is unchanged", fp.bytes,
			   fd == -ENOMEM || fd == -E2BIG || fd == -EPERM ?
				   "not enough memory" : strerror(-fd));
		goto out;
	}
	filter_id = bg_map_id(fd);
	ret = bg_filter_publish(st.filters_fd, fd);
	t3 = now_ms();
	if (ret) {
		ret = fail(1, "cannot swap the filter in: %s; the running filter is "
			   "unchanged", strerror(-ret));
		goto out;
	}
	/* What `check` needs to name the entry behind a match. */
	bg_record_write(filter_id, srcs.v, srcs.n);

	fmt_bytes(mem, sizeof(mem), (double)fp.bytes);
	fmt_bytes(xmem, sizeof(xmem),
		  ((double)(fp.keys4 + fp.keys6) -
		   (double)(fp.prefixes4 - fp.short4_prefixes) -
		   (double)(fp.prefixes6 - fp.short6_prefixes)) * fp.bits_per_entry / 8.0);
	if (n_dom) {
		printf("lists:            ");
		for (i = 0; i < srcs.n; i++)
			printf("%s%s (%s%s%s)", i ? ", " : "", srcs.v[i].path,
			       srcs.v[i].format == BG_SRC_ADDR ? "addresses" :
			       bg_src_format_name(srcs.v[i].format),
			       srcs.v[i].format == BG_SRC_PLAIN && srcs.v[i].subdomains ?
				       ", subdomains" : "",
			       srcs.v[i].allow ? ", allow" : "");
		putchar('\n');
	}
	if (n_addr || !n_dom) {
		printf("entries read:     %zu from %zu file%s (%zu IPv4, %zu IPv6 kept; "
		       "%zu duplicate%s, %zu inside a shorter prefix, %zu warning%s)\n",
		       list.accepted, list.files, plural(list.files), list.n4,
		       list.n6, list.duplicates, plural(list.duplicates),
		       list.covered, list.warnings, plural(list.warnings));
		printf("entries rejected: %zu\n", list.rejected + allow.rejected);
	}
	if (n_addr_allow)
		printf("allowlist:        %zu entries from %zu file%s -> %u IPv4, %u IPv6 exact ranges\n",
		       allow.n4 + allow.n6, allow.files, plural(allow.files),
		       fp.allow4_n, fp.allow6_n);
	if (n_dom) {
		size_t acc = bnames.accepted + anames.accepted;
		size_t dup = bnames.duplicates + anames.duplicates;
		size_t warn = bnames.warnings + anames.warnings;
		size_t deep = bnames.too_deep + anames.too_deep;
		char db[32];

		printf("names read:       %zu from %zu file%s (%zu exact, %zu with subdomains "
		       "kept; %zu duplicate%s, %zu skipped, %zu warning%s)\n",
		       acc, n_dom, plural(n_dom), exact, subs, dup, plural(dup),
		       bnames.skipped + anames.skipped, warn + deep, plural(warn + deep));
		printf("names rejected:   %zu\n", bnames.rejected + anames.rejected);
		printf("names allowed:    %zu (%zu from --allow lists, %zu allow rule%s in "
		       "block lists)%s\n",
		       allow_names + allow_rules, allow_names, allow_rules,
		       plural(allow_rules),
		       allow_names + allow_rules ? "; allow beats block" : "");
		if (deep)
			printf("names too deep:   %zu subdomain rule%s deeper than %d labels, "
			       "never matched below the name (reported above)\n",
			       deep, plural(deep), BG_DNS_SUFFIX_MAX);
		printf("probes per query: up to %d (the name, then its parent names of "
		       "at most %d labels with a subdomain rule: depths %s)\n",
		       1 + __builtin_popcount(fp.subs_depths), BG_DNS_SUFFIX_MAX,
		       depths_str(db, sizeof(db), fp.subs_depths));
	}
	if (n_addr || !n_dom) {
		print_lengths("IPv4", fp.len4, fp.n4, fp.short4, "bitmap for /0-/16");
		print_lengths("IPv6", fp.len6, fp.n6, fp.short6_n ? 1 : 0,
			      "exact ranges for the shortest prefixes");
		printf("expansion:        %llu IPv4 + %llu IPv6 prefixes -> %llu Bloom keys (%s more)\n",
		       (unsigned long long)(fp.prefixes4 - fp.short4_prefixes),
		       (unsigned long long)(fp.prefixes6 - fp.short6_prefixes),
		       (unsigned long long)(fp.keys4 + fp.keys6), xmem);
	}
	printf("filter:           %u blocks of 512 bits, k=%u, %.2f bits/key",
	       fp.nblocks, fp.k, fp.bits_per_entry);
	if (n_dom)
		printf(" (%llu address, %llu name keys)",
		       (unsigned long long)(fp.keys4 + fp.keys6),
		       (unsigned long long)fp.name_keys);
	putchar('\n');
	printf("false positives:  %.6f predicted per %s (target %g; %.6f per Bloom probe)\n",
	       fp.predicted_addr, !n_dom ? "address" : n_addr ? "address or query" : "query",
	       fpr, fp.predicted);
	printf("memory:           %s\n", mem);
	printf("time:             %.1f ms (parse %.1f, build %.1f, swap %.2f)\n",
	       t3 - t0, t1 - t0, t2 - t1, t3 - t2);
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	bg_state_close(&st);
	bg_list_free(&list);
	bg_list_free(&allow);
	bg_names_free(&bnames);
	bg_names_free(&anames);
	bg_sources_free(&srcs);
	return ret;
}

/* ---- check -------------------------------------------------------------- */

struct explain {
	char buf[1024];
	size_t len;
	int n;
	const char *query; /* names: the normalised query */
	int want_allow; /* names: collect allow (1) or block (0) rules */
	const char *unreadable; /* a list of the record that cannot be read */
};

/* Entries named per reason; the rest are counted ("and N more"). */
#define EXPLAIN_MAX 3

static void explain_add(struct explain *e, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (e->len >= sizeof(e->buf))
		return;
	va_start(ap, fmt);
	n = vsnprintf(e->buf + e->len, sizeof(e->buf) - e->len, fmt, ap);
	va_end(ap);
	e->len += n > 0 ? (size_t)n : 0;
	if (e->len >= sizeof(e->buf))
		e->len = sizeof(e->buf) - 1;
}

static void explain_init(struct explain *e)
{
	memset(e, 0, sizeof(*e));
}

/* ", and N more" once all entries are in. */
static void explain_done(struct explain *e)
{
	if (e->n > EXPLAIN_MAX)
		explain_add(e, " and %d more", e->n - EXPLAIN_MAX);
}

static void on_cover(void *ctx, const char *path, size_t line, const char *text,
		     const struct bg_key4 *k4, const struct bg_key6 *k6)
{
	struct explain *e = ctx;
	char a[INET6_ADDRSTRLEN] = "?", pfx[INET6_ADDRSTRLEN + 8];

	/* The entry as it was read (masked), not the raw line with comments. */
	(void)text;
	if (k4) {
		inet_ntop(AF_INET, &k4->addr, a, sizeof(a));
		snprintf(pfx, sizeof(pfx), k4->plen == 32 ? "%s" : "%s/%u", a, k4->plen);
	} else if (k6) {
		inet_ntop(AF_INET6, k6->addr, a, sizeof(a));
		snprintf(pfx, sizeof(pfx), k6->plen == 128 ? "%s" : "%s/%u", a, k6->plen);
	} else {
		snprintf(pfx, sizeof(pfx), "?");
	}
	explain_add(e, "%s%s at %s:%zu", e->n ? ", " : "", pfx, path, line);
	e->n++;
}

/* Address lists of the record (allow or block ones) covering the key. */
static int explain_addr(struct explain *e, const struct bg_record *rec, int allow,
			const struct bg_key4 *k4, const struct bg_key6 *k6)
{
	int i;

	explain_init(e);
	for (i = 0; i < rec->n; i++)
		if (rec->src[i].format == BG_SRC_ADDR && rec->src[i].allow == allow &&
		    bg_list_find_covering(rec->src[i].path, k4, k6, on_cover, e) < 0 &&
		    !e->unreadable)
			e->unreadable = rec->src[i].path;
	return e->n;
}

/* A list line for a report: quoted, at most 80 bytes, control bytes as
 * \xNN, so that check's answer stays one line. */
static void quote_text(char *out, size_t outlen, const char *s)
{
	size_t o = 0, i;

	for (i = 0; s[i] && o + 5 < outlen; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == 80) {
			o += (size_t)snprintf(out + o, outlen - o, "...");
			break;
		}
		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = 0;
}

static void on_name(void *ctx, const char *path, size_t line, const char *text,
		    const struct bg_name *ent, int label)
{
	struct explain *e = ctx;
	char q[400];
	const char *parent = e->query;
	int j;

	if (!!ent->allow != e->want_allow)
		return;
	if (e->n++ >= EXPLAIN_MAX)
		return;
	for (j = 0; j < label && parent; j++) {
		parent = strchr(parent, '.');
		parent = parent ? parent + 1 : NULL;
	}
	quote_text(q, sizeof(q), text);
	explain_add(e, "%s'%s' at %s:%zu", e->n > 1 ? ", " : "", q, path, line);
	if (label > 0 && parent)
		explain_add(e, " as a subdomain of %s", parent);
}

/* Domain lists of the record: the allow (want_allow) or block rules that
 * the datapath's probes for name find. Allow rules may sit in block lists
 * (@@||name^); every entry of an --allow list is one. */
static int explain_name(struct explain *e, const struct bg_record *rec,
			const char *name, int want_allow)
{
	int i;

	explain_init(e);
	e->query = name;
	e->want_allow = want_allow;
	for (i = 0; i < rec->n; i++) {
		const struct bg_source *src = &rec->src[i];
		struct bg_dom_opts o = { 0 };

		if (src->format == BG_SRC_ADDR || (src->allow && !want_allow))
			continue;
		o.format = src->format == BG_SRC_HOSTS ? BG_DOM_HOSTS :
			   src->format == BG_SRC_ADBLOCK ? BG_DOM_ADBLOCK : BG_DOM_PLAIN;
		o.subdomains = src->subdomains;
		o.allow = src->allow;
		if (bg_names_find(src->path, &o, name, on_name, e) < 0 && !e->unreadable)
			e->unreadable = src->path;
	}
	explain_done(e);
	return e->n;
}

/* An argument that is neither an address nor a name: say why, as an
 * address when it looks like one. */
static const char *bad_arg_reason(const char *arg, const char *addr_why,
				  const char *name_why)
{
	size_t n = strlen(arg);

	if (strchr(arg, ':') || strchr(arg, '/') ||
	    strspn(arg, "0123456789.") == n)
		return addr_why;
	return name_why;
}

/* A match no entry of the lists explains: a false positive, unless a list
 * could not be read again. */
static void print_unexplained(const char *arg, const struct explain *blk)
{
	if (blk->unreadable)
		printf("%s: match (maybe listed: %s cannot be read now)\n", arg,
		       blk->unreadable);
	else
		printf("%s: match (probable false positive: no listed entry covers it)\n",
		       arg);
}

static void check_addr(const char *arg, const void *mem, int kind,
		       const struct bg_key4 *k4, const struct bg_key6 *k6,
		       const struct bg_record *rec)
{
	const struct bg_key4 *p4 = kind == BG_KEY_IPV4 ? k4 : NULL;
	const struct bg_key6 *p6 = kind == BG_KEY_IPV6 ? k6 : NULL;
	struct explain blk, alw;
	int listed, allowed;

	listed = p4 ? bg_filter_test4(mem, k4->addr) : bg_filter_test6(mem, k6->addr);
	allowed = p4 ? bg_filter_allowed4(mem, k4->addr) :
		       bg_filter_allowed6(mem, k6->addr);
	if (!listed) {
		printf("%s: no match\n", arg);
		return;
	}
	if (!rec) {
		printf("%s: %s (%s; the lists behind this filter are not known)\n",
		       arg, allowed ? "no match" : "match",
		       allowed ? "allowlisted" : "maybe listed");
		return;
	}
	explain_addr(&blk, rec, 0, p4, p6);
	if (allowed) {
		explain_addr(&alw, rec, 1, p4, p6);
		printf("%s: no match (allowlisted by %s%s%s)\n", arg,
		       alw.n ? alw.buf : "the allowlist",
		       blk.n ? "; listed by " : "", blk.n ? blk.buf : "");
	} else if (blk.n) {
		printf("%s: match (listed by %s)\n", arg, blk.buf);
	} else {
		print_unexplained(arg, &blk);
	}
}

/* name: normalised. 0, or -1 when the filter cannot judge it. */
static int check_name(const char *arg, const char *name, const void *mem,
		      const struct bg_record *rec)
{
	const struct bg_filter_header *h = mem;
	struct explain blk, alw;
	int listed, allowed, label = 0, alabel = 0;

	listed = bg_filter_test_name(mem, name, &label);
	if (listed < 0)
		return -1;
	if (!listed) {
		printf("%s: no match%s\n", arg, h->flags & BG_FILTER_F_NAMES ? "" :
		       " (the loaded filter holds no domain names)");
		return 0;
	}
	/* The datapath asks the name allowlist only after a positive. */
	allowed = bg_filter_name_allowed(mem, name, &alabel) == 1;
	if (!rec) {
		printf("%s: %s (%s; the lists behind this filter are not known)\n",
		       arg, allowed ? "no match" : "match",
		       allowed ? "allowlisted" : "maybe listed");
		return 0;
	}
	explain_name(&blk, rec, name, 0);
	if (allowed) {
		explain_name(&alw, rec, name, 1);
		printf("%s: no match (allowlisted by %s%s%s)\n", arg,
		       alw.n ? alw.buf : "the allowlist",
		       blk.n ? "; allow beats block: listed by " : "",
		       blk.n ? blk.buf : "");
	} else if (blk.n) {
		printf("%s: match (listed by %s)\n", arg, blk.buf);
	} else {
		print_unexplained(arg, &blk);
	}
	return 0;
}

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

static int cmd_check(int argc, char **argv)
{
	struct bg_record rec;
	const void *mem;
	struct bg_state st;
	size_t len;
	int i, ret, bad = 0, have_rec;

	if ((ret = parse_args(&check_cmd, &argc, argv, NULL)))
		return ret < 0 ? 0 : ret;
	if ((ret = need_root()))
		return ret;
	if ((ret = open_state(&st, 0)))
		return ret;
	for (i = 0; i < 5; i++) {
		ret = bg_filter_map_current(st.filters_fd, &mem, &len);
		if (ret != -EAGAIN)
			break;
	}
	have_rec = ret == 0 && bg_record_read(&rec) == 0 &&
		   rec.filter_id == bg_filter_current_id(st.filters_fd);
	bg_state_close(&st);
	if (ret == -ENOENT)
		return fail(1, "no filter is loaded (run: bloomgate load LIST)");
	if (ret == -EPROTO)
		return fail(1, "the loaded filter is from another bloomgate version "
			    "(ABI %d expected); reload it", BG_ABI_VERSION);
	if (ret)
		return fail(1, "cannot read the live filter: %s", strerror(-ret));
	for (i = 1; i < argc; i++) {
		struct bg_key4 k4;
		struct bg_key6 k6;
		char name[BG_DNS_NAME_MAX];
		const char *why = NULL, *name_why = NULL;
		int kind = bg_parse_addr(argv[i], &k4, &k6, &why);

		if (kind) {
			check_addr(argv[i], mem, kind, &k4, &k6, have_rec ? &rec : NULL);
			continue;
		}
		if (bg_name_normalise(argv[i], strlen(argv[i]), name, &name_why) ||
		    check_name(argv[i], name, mem, have_rec ? &rec : NULL)) {
			fprintf(stderr, "bloomgate: %s: %s\n", argv[i],
				bad_arg_reason(argv[i], why, name_why ? name_why :
					       "not a domain name"));
			bad = 1;
		}
	}
	bg_filter_unmap(mem, len);
	if (have_rec)
		bg_record_free(&rec);
	return bad ? EXIT_USAGE : 0;
}

/* ---- stats / status / events ------------------------------------------- */

#define BG__NAME(name, str) str,
static const char *const counter_names[] = { BG_COUNTERS(BG__NAME) };
static const char *const malformed_names[] = { BG_MALFORMED_REASONS(BG__NAME) };
#undef BG__NAME

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
	if (json)
		putchar('{');
	for (i = 0; i < BG_CNT__COUNT; i++) {
		if (json)
			printf("%s\"%s\":%llu", i ? "," : "", counter_names[i],
			       (unsigned long long)c.cnt[i]);
		else
			printf("%-28s %llu\n", counter_names[i],
			       (unsigned long long)c.cnt[i]);
	}
	for (i = 0; i < BG_MAL__COUNT; i++) {
		if (json)
			printf(",\"malformed_%s\":%llu", malformed_names[i],
			       (unsigned long long)c.malformed[i]);
		else
			printf("malformed_%-18s %llu\n", malformed_names[i],
			       (unsigned long long)c.malformed[i]);
	}
	if (json)
		puts("}");
	return 0;
}

static const struct bg_cmd status_cmd = {
	.name = "status",
	.summary = "Shows the interfaces bloomgate is attached to and the\n"
		   "loaded filter.",
};

static int cmd_status(int argc, char **argv)
{
	struct bg_attach_rec recs[BG_ATTACH_MAX];
	struct bg_state st;
	const void *mem;
	size_t len;
	int n, i, ret;

	if ((ret = parse_args(&status_cmd, &argc, argv, NULL)))
		return ret < 0 ? 0 : ret;
	if ((ret = need_root()))
		return ret;
	/* Opened once: not attached is an answer here, not an error. */
	ret = bg_state_open(&st, 0);
	if (ret == -ENOENT) {
		puts("bloomgate is not attached to any interface");
		return 0;
	}
	if (ret)
		return fail(1, "cannot open the pinned state in %s: %s",
			    bg_pin_dir(), strerror(-ret));
	n = bg_attach_list(&st, recs, BG_ATTACH_MAX);
	printf("pinned state: %s\n", st.dir);
	for (i = 0; i < n; i++) {
		char name[IF_NAMESIZE] = "?", ports[64];

		if (recs[i].netns_ino != bg_netns_ino()) {
			printf("attached: ifindex %u in another network namespace "
			       "(netns inode %u, prog id %u)\n", recs[i].ifindex,
			       recs[i].netns_ino, recs[i].prog_id);
			continue;
		}
		if_indextoname(recs[i].ifindex, name);
		fmt_ports(ports, sizeof(ports), recs[i].dns_ports);
		printf("attached: %s (ifindex %u, %s mode, match %s, action %s, "
		       "dns-action %s, dns-ports %s, prog id %u, dns prog id %u)\n",
		       name, recs[i].ifindex, recs[i].mode == BG_MODE_SKB ? "skb" : "native",
		       match_name(recs[i].match), action_name(recs[i].action),
		       dns_action_name(recs[i].dns_action), ports, recs[i].prog_id,
		       recs[i].dns_prog_id);
	}
	ret = bg_filter_map_current(st.filters_fd, &mem, &len);
	if (ret == 0) {
		const struct bg_filter_header *h = mem;
		char b[32];

		double pp = bg_filter_model_fpr(h->entries, h->nblocks, h->k);
		int probes = h->n4 > h->n6 ? h->n4 : h->n6, i;

		fmt_bytes(b, sizeof(b), (double)bg_filter_nelems(h) * BG_FILTER_VALUE_SIZE);
		printf("filter: %llu Bloom keys, %u blocks, k=%u, %.2f bits/key, "
		       "predicted false-positive rate %.6f per address",
		       (unsigned long long)h->entries, h->nblocks, h->k,
		       h->entries ? (double)h->nblocks * BG_BLOCK_BITS / (double)h->entries : 0.0,
		       1.0 - pow(1.0 - pp, probes ? probes : 1));
		if (h->flags & BG_FILTER_F_NAMES)
			printf(", %.6f per query",
			       1.0 - pow(1.0 - pp, 1 + __builtin_popcount(h->subs_depths)));
		printf(", memory %s\n", b);
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
			       depths_str(db, sizeof(db), h->subs_depths), h->allown_n);
		}
		else
			puts("names: none loaded (DNS queries pass)");
		bg_filter_unmap(mem, len);
	} else {
		puts("filter: none loaded (every packet passes)");
	}
	bg_state_close(&st);
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
		deadline = now_ms() + 1000.0 * a.timeout;
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
	while (!stop_events && (!deadline || now_ms() < deadline)) {
		ret = ring_buffer__poll(rb, 100);
		if (ret < 0 && ret != -EINTR)
			break;
	}
	ring_buffer__free(rb);
	bg_state_close(&st);
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
