// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate: the command line. One binary, iproute2-style subcommands.
 * Exit codes: 0 success, 1 runtime failure, 2 usage error, 3 bloomgate is
 * not attached (no pinned state), 4 the list was rejected (nothing loaded).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
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
#include "explain.h"
#include "load.h"
#include "print.h"
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
	if (!verbose && level != LIBBPF_WARN)
		return 0;
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

/* ---- attach / detach ---------------------------------------------------- */

static int usage_attach(FILE *f)
{
	fputs("usage: bloomgate attach IFACE [--mode native|skb] "
	      "[--match dst|src|both] [--action drop|flag]\n"
	      "                        [--dns-action drop|flag|nxdomain|refused] "
	      "[--dns-port N]...\n"
	      "  Attaches the XDP filter to IFACE (through libxdp, so other XDP\n"
	      "  programs can share the interface). Every attached interface\n"
	      "  shares one filter, pinned under /sys/fs/bpf/bloomgate.\n"
	      "  --mode        native (default) or skb (generic XDP)\n"
	      "  --match       address probed: dst (default), src or both\n"
	      "  --action      on a listed address: drop (default), or flag (pass,\n"
	      "                count, and send an event; see bloomgate events)\n"
	      "  --dns-action  on a DNS query for a listed name (UDP to a DNS port):\n"
	      "                nxdomain (default: answer NXDOMAIN from XDP),\n"
	      "                refused (answer REFUSED), drop, or flag (pass,\n"
	      "                count, and send an event with the name)\n"
	      "  --dns-port N  UDP destination port judged as DNS; repeat for up to\n"
	      "                " BG_TEXTIFY(BG_DNS_PORTS_MAX) " ports (default 53 alone; "
	      "given ports replace it)\n",
	      f);
	return f == stdout ? 0 : EXIT_USAGE;
}

static const struct option attach_opts[] = {
	{ "mode", required_argument, NULL, 'm' },
	{ "match", required_argument, NULL, 'M' },
	{ "action", required_argument, NULL, 'a' },
	{ "dns-action", required_argument, NULL, 'D' },
	{ "dns-port", required_argument, NULL, 'P' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* A --dns-port value: decimal 1..65535. 0, or -1. */
static int parse_port(const char *s, __u16 *port)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > 65535)
		return -1;
	*port = (__u16)v;
	return 0;
}

static int cmd_attach(int argc, char **argv)
{
	struct bg_attach_opts o = { BG_MODE_NATIVE, BG_MATCH_DST,
				    BG_ACTION_DROP, BG_DNS_ACTION_NXDOMAIN,
				    { 0 } };
	char err[256] = "", ports[64];
	int c, ret, nports = 0, i;
	__u16 port;

	while ((c = getopt_long(argc, argv, "h", attach_opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "native"))
				o.mode = BG_MODE_NATIVE;
			else if (!strcmp(optarg, "skb"))
				o.mode = BG_MODE_SKB;
			else
				return fail(EXIT_USAGE, "--mode must be native or skb, not '%s'", optarg);
			break;
		case 'M':
			if (!strcmp(optarg, "dst"))
				o.match = BG_MATCH_DST;
			else if (!strcmp(optarg, "src"))
				o.match = BG_MATCH_SRC;
			else if (!strcmp(optarg, "both"))
				o.match = BG_MATCH_BOTH;
			else
				return fail(EXIT_USAGE, "--match must be dst, src or both, not '%s'", optarg);
			break;
		case 'a':
			if (!strcmp(optarg, "drop"))
				o.action = BG_ACTION_DROP;
			else if (!strcmp(optarg, "flag"))
				o.action = BG_ACTION_FLAG;
			else
				return fail(EXIT_USAGE, "--action must be drop or flag, not '%s'", optarg);
			break;
		case 'D':
			for (i = BG_DNS_ACTION_DROP; i <= BG_DNS_ACTION_REFUSED; i++)
				if (!strcmp(optarg, dns_action_names[i]))
					break;
			if (i > BG_DNS_ACTION_REFUSED)
				return fail(EXIT_USAGE, "--dns-action must be drop, flag, nxdomain or refused, not '%s'",
					    optarg);
			o.dns_action = (enum bg_dns_action)i;
			break;
		case 'P':
			if (parse_port(optarg, &port))
				return fail(EXIT_USAGE, "--dns-port must be a port number (1-65535), not '%s'", optarg);
			for (i = 0; i < nports; i++)
				if (o.dns_ports[i] == port)
					return fail(EXIT_USAGE, "--dns-port %u given twice", port);
			if (nports == BG_DNS_PORTS_MAX)
				return fail(EXIT_USAGE, "at most %d --dns-port", BG_DNS_PORTS_MAX);
			o.dns_ports[nports++] = port;
			break;
		case 'h':
			return usage_attach(stdout);
		default:
			return usage_attach(stderr);
		}
	}
	if (optind + 1 != argc)
		return usage_attach(stderr);
	if ((ret = need_root()))
		return ret;
	if (!nports)
		o.dns_ports[0] = BG_DNS_PORT;
	if (bg_attach(argv[optind], &o, err, sizeof(err)))
		return fail(1, "%s", err);
	fmt_ports(ports, sizeof(ports), o.dns_ports);
	printf("attached to %s (%s mode, match %s, action %s, dns-action %s, dns-ports %s)\n",
	       argv[optind], o.mode == BG_MODE_SKB ? "skb" : "native",
	       match_name(o.match), action_name(o.action),
	       dns_action_name(o.dns_action), ports);
	return 0;
}

static int cmd_detach(int argc, char **argv)
{
	char err[256] = "";
	int ret;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("usage: bloomgate detach IFACE | --all\n"
		     "  Removes bloomgate's XDP program from IFACE, and the pin of\n"
		     "  its DNS program array; after the last interface, removes\n"
		     "  every pinned map too. --all detaches from every interface of\n"
		     "  this network namespace, also ones that no longer exist.");
		return 0;
	}
	if (argc != 2 || (argv[1][0] == '-' && strcmp(argv[1], "--all")))
		return fail(EXIT_USAGE, "usage: bloomgate detach IFACE | --all");
	if ((ret = need_root()))
		return ret;
	if (!strcmp(argv[1], "--all"))
		ret = bg_detach_all(err, sizeof(err));
	else
		ret = bg_detach(argv[1], err, sizeof(err));
	if (ret)
		return fail(ret == -ENOENT ? EXIT_NOT_ATTACHED : 1, "%s", err);
	printf("detached from %s\n", strcmp(argv[1], "--all") ? argv[1] : "every interface");
	return 0;
}

/* ---- load --------------------------------------------------------------- */

static int usage_load(FILE *f)
{
	fputs("usage: bloomgate load [--fpr P] [--strict] [--format F] [--subdomains]\n"
	      "                      [--allow LIST]... LIST...\n"
	      "  Parses the lists, builds a new filter sized for the target\n"
	      "  false-positive rate and swaps it in atomically. A load that fails\n"
	      "  leaves the running filter as it was.\n"
	      "  Lists are address lists (IPv4/IPv6 addresses and CIDR prefixes, one\n"
	      "  per line: plain, FireHOL ipset/netset, Spamhaus DROP) or domain\n"
	      "  lists, in one load:\n"
	      "    plain    one name a line; *.name for its subdomains only\n"
	      "    hosts    0.0.0.0 name [name...] (also 127.0.0.1, ::, ::1, or a\n"
	      "             bare name): each name exactly; the addresses are where\n"
	      "             the names point, never loaded as blocked addresses\n"
	      "    adblock  ||name^ (name and subdomains), ||*.name^ (subdomains),\n"
	      "             |name^ (the name only), @@ before any: allow\n"
	      "  Each file's format is detected from its first " BG_TEXTIFY(BG_FMT_DETECT_LINES) " lines that are\n"
	      "  not blank or comments: addresses when more than half are addresses\n"
	      "  or prefixes; else Adblock when one starts with |, !, [ or @@; else\n"
	      "  hosts when one is an address and a name; else plain when more than\n"
	      "  half are names of two labels or more; else addresses (each line is\n"
	      "  then rejected as not an address: say --format plain if need be).\n"
	      "  --fpr P           target false-positive rate per address or query\n"
	      "                    (default 0.001)\n"
	      "  --strict          fail on any rejected line, and on any subdomain rule\n"
	      "                    deeper than " BG_TEXTIFY(BG_DNS_SUFFIX_MAX) " labels (never matched), instead\n"
	      "                    of reporting and skipping it\n"
	      "  --allow LIST      entries that always pass: addresses and prefixes,\n"
	      "                    also inside listed ranges; names, which beat blocked\n"
	      "                    parents (may be given several times)\n"
	      "  --format F        read the lists after this option as F: addr, plain,\n"
	      "                    hosts or adblock; auto (the default) detects\n"
	      "  --subdomains      plain domain entries in the lists after this option\n"
	      "                    cover their subdomains too (as HaGeZi's lists mean)\n"
	      "  --no-subdomains   back to the default: a plain entry is the name only\n"
	      "  --format applies to every list after it on the command line, blocked\n"
	      "  and --allow alike, up to the next --format (like gcc's -x);\n"
	      "  --subdomains likewise, up to --no-subdomains. Given after the last\n"
	      "  list, they would apply to none: an error.\n"
	      "  Every rejected line is reported as FILE:LINE: reason: 'text'.\n",
	      f);
	return f == stdout ? 0 : EXIT_USAGE;
}

static const struct option load_opts[] = {
	{ "fpr", required_argument, NULL, 'f' },
	{ "strict", no_argument, NULL, 's' },
	{ "allow", required_argument, NULL, 'A' },
	{ "format", required_argument, NULL, 'F' },
	{ "subdomains", no_argument, NULL, 'S' },
	{ "no-subdomains", no_argument, NULL, 'N' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};


/* The arguments of load into srcs (in order: --format and --subdomains
 * apply to the lists after them), and the other options. */
static int load_args(int argc, char **argv, struct bg_sources *srcs,
		     struct bg_list_opts *lo, double *fpr)
{
	char *end;
	int c, ret;

	/* "-": lists come back as argument 1, in order with the options */
	while ((c = getopt_long(argc, argv, "-h", load_opts, NULL)) != -1) {
		switch (c) {
		case 1:
		case 'A':
			if (bg_sources_add(srcs, optarg, c == 'A'))
				return fail(1, "out of memory");
			break;
		case 'f':
			errno = 0;
			*fpr = strtod(optarg, &end);
			if (errno || *end || !(*fpr >= BG_FPR_MIN && *fpr <= BG_FPR_MAX))
				return fail(EXIT_USAGE, "--fpr must be a number between %g and %g, not '%s'",
					    BG_FPR_MIN, BG_FPR_MAX, optarg);
			break;
		case 's':
			lo->strict = 1;
			break;
		case 'F':
			if (bg_sources_set_format(srcs, optarg))
				return fail(EXIT_USAGE, "--format must be addr, plain, hosts, adblock or auto, not '%s'",
					    optarg);
			break;
		case 'S':
		case 'N':
			bg_sources_set_subdomains(srcs, c == 'S');
			break;
		case 'h':
			return usage_load(stdout) - 1; /* -1: stop, exit 0 */
		default:
			return usage_load(stderr);
		}
	}
	for (; optind < argc; optind++) /* after "--" */
		if (bg_sources_add(srcs, argv[optind], 0))
			return fail(1, "out of memory");
	ret = bg_sources_done(srcs);
	if (ret == -EINVAL)
		return fail(EXIT_USAGE, "--format, --subdomains and --no-subdomains apply to the "
			    "lists after them; none follows the last one");
	if (ret)
		return usage_load(stderr);
	return 0;
}

/* Diagnostics as they come: "file:line: reason: 'text'" on stderr. */
static void print_diag(void *ctx, const struct bg_diag *d)
{
	(void)ctx;
	bg_diag_print(stderr, d);
}

static int cmd_load(int argc, char **argv)
{
	struct bg_load_opts o = { .fpr = BG_FPR_DEFAULT, .diag = print_diag };
	struct bg_list_opts lo = { 0 };
	struct bg_load_report r;
	struct bg_sources srcs;
	struct bg_state st;
	int ret;

	bg_sources_init(&srcs);
	ret = load_args(argc, argv, &srcs, &lo, &o.fpr);
	if (ret) {
		bg_sources_free(&srcs);
		return ret < 0 ? 0 : ret;
	}
	if ((ret = need_root()) || (ret = open_state(&st, 1))) {
		/* Lock first: concurrent loads are serialised from parse to swap. */
		bg_sources_free(&srcs);
		return ret;
	}
	o.sources = &srcs;
	o.strict = lo.strict;
	bg_load_report_init(&r);
	ret = bg_load(&st, &o, &r);
	bg_state_close(&st);
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

static int cmd_check(int argc, char **argv)
{
	struct bg_record rec;
	const void *mem;
	struct bg_state st;
	size_t len;
	int i, ret, bad = 0, have_rec;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("usage: bloomgate check ADDR|NAME...\n"
		     "  For each IP address or domain name, says whether the live\n"
		     "  filter matches it (\"match\": dropped, or for a name, the\n"
		     "  DNS action) or not (\"no match\"), and why: the listed entry\n"
		     "  (file:line) that covers it -- for a name, the line's text, and\n"
		     "  whether it lists the name itself or a parent with its\n"
		     "  subdomains --, the allowlist entry that passes it (allow beats\n"
		     "  block), or that the match is a probable false positive.\n"
		     "  An argument that parses as an IP address is an address;\n"
		     "  anything else must be a domain name (a trailing dot is fine,\n"
		     "  case does not matter).");
		return 0;
	}
	if (argc < 2)
		return fail(EXIT_USAGE, "usage: bloomgate check ADDR|NAME...");
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
		struct bg_explanation x;

		if (bg_explain(mem, have_rec ? &rec : NULL, argv[i], &x)) {
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
	if (have_rec)
		bg_record_free(&rec);
	return bad;
}

/* ---- stats / status / events ------------------------------------------- */

#define BG__NAME(name, str) str,
static const char *const counter_names[] = { BG_COUNTERS(BG__NAME) };
static const char *const malformed_names[] = { BG_MALFORMED_REASONS(BG__NAME) };
#undef BG__NAME

static int cmd_stats(int argc, char **argv)
{
	struct bg_counters c;
	struct bg_state st;
	int json = 0, ret, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			puts("usage: bloomgate stats [--json]\n"
			     "  Prints the datapath counters, summed over CPUs;\n"
			     "  malformed_* count packets by malformation reason.");
			return 0;
		} else
			return fail(EXIT_USAGE, "usage: bloomgate stats [--json]");
	}
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

static int cmd_status(int argc, char **argv)
{
	struct bg_attach_rec recs[BG_ATTACH_MAX];
	struct bg_state st;
	const void *mem;
	size_t len;
	int n, i, ret;

	(void)argv;
	if (argc > 1) {
		int help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");

		fputs("usage: bloomgate status\n"
		      "  Shows the interfaces bloomgate is attached to and the\n"
		      "  loaded filter.\n", help ? stdout : stderr);
		return help ? 0 : EXIT_USAGE;
	}
	if ((ret = need_root()))
		return ret;
	if (bg_state_open(&st, 0) == -ENOENT) {
		puts("bloomgate is not attached to any interface");
		return 0;
	}
	if ((ret = open_state(&st, 0)))
		return ret;
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

static int cmd_events(int argc, char **argv)
{
	struct ring_buffer *rb;
	struct bg_state st;
	double deadline = 0;
	int i, ret;

	for (i = 1; i < argc; i++) {
		char *end = NULL;

		if (!strcmp(argv[i], "--count") && i + 1 < argc) {
			events_left = strtol(argv[++i], &end, 10);
			if (*end || events_left <= 0)
				return fail(EXIT_USAGE, "--count must be a positive number, not '%s'", argv[i]);
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			double t = strtod(argv[++i], &end);

			if (*end || !(t > 0))
				return fail(EXIT_USAGE, "--timeout must be a positive number of seconds, not '%s'", argv[i]);
			deadline = bg_now_ms() + 1000.0 * t;
		} else {
			int help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");

			fputs("usage: bloomgate events [--count N] [--timeout SEC]\n"
			      "  Prints flagged packets as they happen, one line each:\n"
			      "  \"flag dst|src ADDR on IFACE\" for a listed address, and\n"
			      "  \"flag name NAME from CLIENT on IFACE at TIME\" for a DNS\n"
			      "  query for a listed name (attach --dns-action flag); NAME\n"
			      "  as the query had it, lowercased, odd bytes as \\DDD.\n",
			      help ? stdout : stderr);
			return help ? 0 : EXIT_USAGE;
		}
	}
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

/* ---- main --------------------------------------------------------------- */

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "attach", cmd_attach, "attach IFACE [--mode native|skb] [--match dst|src|both] [--action drop|flag]\n"
	  "                   [--dns-action drop|flag|nxdomain|refused] [--dns-port N]..." },
	{ "load", cmd_load, "load [--fpr P] [--strict] [--format F] [--subdomains] [--allow LIST]... LIST..." },
	{ "check", cmd_check, "check ADDR|NAME..." },
	{ "stats", cmd_stats, "stats [--json]" },
	{ "status", cmd_status, "status" },
	{ "events", cmd_events, "events [--count N] [--timeout SEC]" },
	{ "detach", cmd_detach, "detach IFACE | --all" },
};

static int usage(FILE *f)
{
	size_t i;

	fputs("usage: bloomgate [-v] COMMAND [ARGS]\n"
	      "XDP Bloom-filter blocklist for Linux gateways.\n\ncommands:\n", f);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  bloomgate %s\n", cmds[i].help);
	fputs("\nEach command takes --help.\n", f);
	return f == stdout ? 0 : EXIT_USAGE;
}

int main(int argc, char **argv)
{
	size_t i;

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
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help"))
		return usage(stdout);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (!strcmp(argv[1], cmds[i].name)) {
			optind = 1;
			return cmds[i].fn(argc - 1, argv + 1);
		}
	}
	fail(EXIT_USAGE, "unknown command '%s'", argv[1]);
	return usage(stderr);
}
