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

#include "filter.h"
#include "lists.h"
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

static void fmt_bytes(char *buf, size_t len, double b)
{
	if (b >= 1 << 20)
		snprintf(buf, len, "%.2f MiB", b / (1 << 20));
	else if (b >= 1 << 10)
		snprintf(buf, len, "%.1f KiB", b / (1 << 10));
	else
		snprintf(buf, len, "%.0f B", b);
}

/* ---- attach / detach ---------------------------------------------------- */

static int usage_attach(FILE *f)
{
	fputs("usage: bloomgate attach IFACE [--mode native|skb] "
	      "[--match dst|src|both] [--action drop|flag]\n"
	      "  Attaches the XDP filter to IFACE (through libxdp, so other XDP\n"
	      "  programs can share the interface). Every attached interface\n"
	      "  shares one filter, pinned under /sys/fs/bpf/bloomgate.\n"
	      "  --mode    native (default) or skb (generic XDP)\n"
	      "  --match   address probed: dst (default), src or both\n"
	      "  --action  on a match: drop (default), or flag (pass, count,\n"
	      "            and send an event; see bloomgate events)\n",
	      f);
	return f == stdout ? 0 : EXIT_USAGE;
}

static const struct option attach_opts[] = {
	{ "mode", required_argument, NULL, 'm' },
	{ "match", required_argument, NULL, 'M' },
	{ "action", required_argument, NULL, 'a' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int cmd_attach(int argc, char **argv)
{
	struct bg_attach_opts o = { BG_MODE_NATIVE, BG_MATCH_DST,
				    BG_ACTION_DROP };
	char err[256] = "";
	int c, ret;

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
	if (bg_attach(argv[optind], &o, err, sizeof(err)))
		return fail(1, "%s", err);
	printf("attached to %s (%s mode, match %s, action %s)\n", argv[optind],
	       o.mode == BG_MODE_SKB ? "skb" : "native", match_name(o.match),
	       action_name(o.action));
	return 0;
}

static int cmd_detach(int argc, char **argv)
{
	char err[256] = "";
	int ret;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("usage: bloomgate detach IFACE | --all\n"
		     "  Removes bloomgate's XDP program from IFACE; after the last\n"
		     "  interface, removes every pinned map too. --all detaches\n"
		     "  from every interface, also ones that no longer exist.");
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
	fputs("usage: bloomgate load [--fpr P] [--strict] [--allow LIST]... LIST...\n"
	      "  Parses the lists (IPv4/IPv6 addresses and CIDR prefixes, one per\n"
	      "  line; plain, FireHOL ipset/netset, Spamhaus DROP), builds a new\n"
	      "  filter sized for the target false-positive rate and swaps it in\n"
	      "  atomically. A load that fails leaves the running filter as it was.\n"
	      "  --fpr P        target false-positive rate per probe (default 0.001)\n"
	      "  --strict       fail on any rejected line instead of skipping it\n"
	      "  --allow LIST   addresses and prefixes that always pass, also inside\n"
	      "                 listed ranges (exact; may be given several times)\n",
	      f);
	return f == stdout ? 0 : EXIT_USAGE;
}

static const struct option load_opts[] = {
	{ "fpr", required_argument, NULL, 'f' },
	{ "strict", no_argument, NULL, 's' },
	{ "allow", required_argument, NULL, 'A' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* Parses files into l; one clear message on failure. */
static int parse_lists(struct bg_list *l, char *const *files, int n,
		       const struct bg_list_opts *lo)
{
	int i, ret;

	for (i = 0; i < n; i++) {
		ret = bg_list_parse_file(l, files[i], lo);
		if (ret == -EINVAL)
			return fail(EXIT_LIST, "%s: rejected lines with --strict; "
				    "the running filter is unchanged", files[i]);
		if (ret)
			return fail(EXIT_LIST, "%s: %s; the running filter is unchanged",
				    files[i], strerror(-ret));
	}
	bg_list_finish(l);
	return 0;
}

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

static int cmd_load(int argc, char **argv)
{
	struct bg_list_opts lo = { 0 };
	struct bg_filter_params fp;
	double fpr = BG_FPR_DEFAULT, t0, t1, t2, t3;
	struct bg_list list, allow;
	struct bg_state st;
	char **allow_files = NULL;
	int n_allow = 0, c, ret, fd = -1;
	uint64_t seed;
	char *end, mem[32], xmem[32];
	__u32 filter_id = 0;

	while ((c = getopt_long(argc, argv, "h", load_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			errno = 0;
			fpr = strtod(optarg, &end);
			if (errno || *end || !(fpr >= BG_FPR_MIN && fpr <= BG_FPR_MAX)) {
				free(allow_files);
				return fail(EXIT_USAGE, "--fpr must be a number between %g and %g, not '%s'",
					    BG_FPR_MIN, BG_FPR_MAX, optarg);
			}
			break;
		case 's':
			lo.strict = 1;
			break;
		case 'A': {
			char **nf = realloc(allow_files, sizeof(*nf) * (size_t)(n_allow + 1));

			if (!nf) {
				free(allow_files);
				return fail(1, "out of memory");
			}
			allow_files = nf;
			allow_files[n_allow++] = optarg;
			break;
		}
		case 'h':
			free(allow_files);
			return usage_load(stdout);
		default:
			free(allow_files);
			return usage_load(stderr);
		}
	}
	if (optind >= argc) {
		free(allow_files);
		return usage_load(stderr);
	}
	if ((ret = need_root()) || (ret = open_state(&st, 1))) {
		/* Lock first: concurrent loads are serialised from parse to swap. */
		free(allow_files);
		return ret;
	}
	bg_list_init(&list);
	bg_list_init(&allow);

	t0 = now_ms();
	if ((ret = parse_lists(&list, argv + optind, argc - optind, &lo)) ||
	    (ret = parse_lists(&allow, allow_files, n_allow, &lo)))
		goto out;
	if (list.n4 + list.n6 == 0) {
		ret = fail(EXIT_LIST, "no valid entries in the lists; the running "
			   "filter is unchanged");
		goto out;
	}
	t1 = now_ms();
	ret = bg_filter_plan(&list, n_allow ? &allow : NULL, fpr, &fp);
	if (ret) {
		ret = fail(EXIT_LIST, "cannot plan a filter for %zu entries at fpr %g: %s; "
			   "the running filter is unchanged", list.n4 + list.n6, fpr,
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
	bg_record_write(filter_id, argv + optind, argc - optind, allow_files, n_allow);

	fmt_bytes(mem, sizeof(mem), (double)fp.bytes);
	fmt_bytes(xmem, sizeof(xmem),
		  ((double)(fp.keys4 + fp.keys6) -
		   (double)(fp.prefixes4 - fp.short4_prefixes) -
		   (double)(fp.prefixes6 - fp.short6_prefixes)) * fp.bits_per_entry / 8.0);
	printf("entries read:     %zu from %zu file%s (%zu IPv4, %zu IPv6 kept; "
	       "%zu duplicate%s, %zu inside a shorter prefix, %zu warning%s)\n",
	       list.accepted, list.files, list.files == 1 ? "" : "s", list.n4,
	       list.n6, list.duplicates, list.duplicates == 1 ? "" : "s",
	       list.covered, list.warnings, list.warnings == 1 ? "" : "s");
	printf("entries rejected: %zu\n", list.rejected + allow.rejected);
	if (n_allow)
		printf("allowlist:        %zu entries from %zu file%s -> %u IPv4, %u IPv6 exact ranges\n",
		       allow.n4 + allow.n6, allow.files, allow.files == 1 ? "" : "s",
		       fp.allow4_n, fp.allow6_n);
	print_lengths("IPv4", fp.len4, fp.n4, fp.short4, "bitmap for /0-/16");
	print_lengths("IPv6", fp.len6, fp.n6, fp.short6_n ? 1 : 0,
		      "exact ranges for the shortest prefixes");
	printf("expansion:        %llu IPv4 + %llu IPv6 prefixes -> %llu Bloom keys (%s more)\n",
	       (unsigned long long)(fp.prefixes4 - fp.short4_prefixes),
	       (unsigned long long)(fp.prefixes6 - fp.short6_prefixes),
	       (unsigned long long)(fp.keys4 + fp.keys6), xmem);
	printf("filter:           %u blocks of 512 bits, k=%u, %.2f bits/key\n",
	       fp.nblocks, fp.k, fp.bits_per_entry);
	printf("false positives:  %.6f predicted per address (target %g; %.6f per Bloom probe)\n",
	       fp.predicted_addr, fpr, fp.predicted);
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
	free(allow_files);
	return ret;
}

/* ---- check -------------------------------------------------------------- */

struct explain {
	char buf[512];
	size_t len;
	int n;
};

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
	if (e->len < sizeof(e->buf))
		e->len += (size_t)snprintf(e->buf + e->len, sizeof(e->buf) - e->len,
					   "%s%s at %s:%zu", e->n ? ", " : "", pfx,
					   path, line);
	e->n++;
}

static int explain_files(struct explain *e, char **files, int n,
			 const struct bg_key4 *k4, const struct bg_key6 *k6)
{
	int i;

	e->len = 0;
	e->n = 0;
	e->buf[0] = 0;
	for (i = 0; i < n; i++)
		bg_list_find_covering(files[i], k4, k6, on_cover, e);
	return e->n;
}

static int cmd_check(int argc, char **argv)
{
	struct bg_record rec;
	const void *mem;
	struct bg_state st;
	size_t len;
	int i, ret, bad = 0, have_rec;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("usage: bloomgate check ADDR...\n"
		     "  For each address, says whether the live filter matches it\n"
		     "  (\"match\") or not (\"no match\"), and why: the listed entry\n"
		     "  (file:line) that covers it, the allowlist entry that passes\n"
		     "  it, or that the match is a probable false positive.");
		return 0;
	}
	if (argc < 2)
		return fail(EXIT_USAGE, "usage: bloomgate check ADDR...");
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
		struct explain blk, alw;
		const char *why = NULL;
		int kind = bg_parse_addr(argv[i], &k4, &k6, &why), listed, allowed;
		const struct bg_key4 *p4 = kind == BG_KEY_IPV4 ? &k4 : NULL;
		const struct bg_key6 *p6 = kind == BG_KEY_IPV6 ? &k6 : NULL;

		if (!kind) {
			fprintf(stderr, "bloomgate: %s: %s\n", argv[i], why);
			bad = 1;
			continue;
		}
		listed = p4 ? bg_filter_test4(mem, k4.addr) : bg_filter_test6(mem, k6.addr);
		allowed = p4 ? bg_filter_allowed4(mem, k4.addr) :
			       bg_filter_allowed6(mem, k6.addr);
		if (!listed) {
			printf("%s: no match\n", argv[i]);
			continue;
		}
		if (!have_rec) {
			printf("%s: %s (%s; the lists behind this filter are not known)\n",
			       argv[i], allowed ? "no match" : "match",
			       allowed ? "allowlisted" : "maybe listed");
			continue;
		}
		explain_files(&blk, rec.block, rec.n_block, p4, p6);
		if (allowed) {
			explain_files(&alw, rec.allow, rec.n_allow, p4, p6);
			printf("%s: no match (allowlisted by %s%s%s)\n", argv[i],
			       alw.n ? alw.buf : "the allowlist",
			       blk.n ? "; listed by " : "", blk.n ? blk.buf : "");
		} else if (blk.n) {
			printf("%s: match (listed by %s)\n", argv[i], blk.buf);
		} else {
			printf("%s: match (probable false positive: no listed entry covers it)\n",
			       argv[i]);
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
		char name[IF_NAMESIZE] = "?";

		if (recs[i].netns_ino != bg_netns_ino()) {
			printf("attached: ifindex %u in another network namespace "
			       "(netns inode %u, prog id %u)\n", recs[i].ifindex,
			       recs[i].netns_ino, recs[i].prog_id);
			continue;
		}
		if_indextoname(recs[i].ifindex, name);
		printf("attached: %s (ifindex %u, %s mode, match %s, action %s, prog id %u)\n",
		       name, recs[i].ifindex, recs[i].mode == BG_MODE_SKB ? "skb" : "native",
		       match_name(recs[i].match), action_name(recs[i].action),
		       recs[i].prog_id);
	}
	ret = bg_filter_map_current(st.filters_fd, &mem, &len);
	if (ret == 0) {
		const struct bg_filter_header *h = mem;
		char b[32];

		double pp = bg_filter_model_fpr(h->entries, h->nblocks, h->k);
		int probes = h->n4 > h->n6 ? h->n4 : h->n6, i;

		fmt_bytes(b, sizeof(b), (double)bg_filter_nelems(h) * BG_FILTER_VALUE_SIZE);
		printf("filter: %llu Bloom keys, %u blocks, k=%u, %.2f bits/key, "
		       "predicted false-positive rate %.6f per address, memory %s\n",
		       (unsigned long long)h->entries, h->nblocks, h->k,
		       h->entries ? (double)h->nblocks * BG_BLOCK_BITS / (double)h->entries : 0.0,
		       1.0 - pow(1.0 - pp, probes ? probes : 1), b);
		printf("probes: IPv4 %s", h->flags & BG_FILTER_F_SHORT4 ? "bitmap /0-/16" : "");
		for (i = 0; i < h->n4; i++)
			printf(" /%u", h->len4[i]);
		printf("; IPv6 %s", h->short6_n ? "exact ranges" : "");
		for (i = 0; i < h->n6; i++)
			printf(" /%u", h->len6[i]);
		printf("; allowlist %u IPv4 + %u IPv6 ranges\n", h->allow4_n, h->allow6_n);
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
	printf("%s %s %s on %s\n", e->verdict == BG_VERDICT_FLAG ? "flag" : "drop",
	       e->which == BG_MATCH_SRC ? "src" : "dst", addr, ifn);
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
			deadline = now_ms() + 1000.0 * t;
		} else {
			int help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");

			fputs("usage: bloomgate events [--count N] [--timeout SEC]\n"
			      "  Prints flagged packets as they happen, one line each:\n"
			      "  \"flag dst|src ADDR on IFACE\".\n", help ? stdout : stderr);
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

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "attach", cmd_attach, "attach IFACE [--mode native|skb] [--match dst|src|both] [--action drop|flag]" },
	{ "load", cmd_load, "load [--fpr P] [--strict] [--allow LIST]... LIST..." },
	{ "check", cmd_check, "check ADDR..." },
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
