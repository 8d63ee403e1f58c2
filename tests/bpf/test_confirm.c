// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The exact stage (issue 11) through the program, with BPF_PROG_TEST_RUN:
 * a Bloom positive is only acted on once the fingerprint table confirms
 * it. The filter is built deliberately loose (--fpr 0.05 for the Bloom
 * part) so that its Bloom positives among unlisted keys number in the tens
 * of thousands and the stage is really exercised.
 *
 * One blocklist, parsed by the list parsers as `load` parses it: random
 * IPv4 and IPv6 addresses next to prefixes of eight lengths per family (so
 * controlled prefix expansion folds them into BG_PROBES_MAX probed lengths
 * and expanded keys are what the stage must hold), exact names, name-and-
 * subdomains rules (||x^) and subdomains-only rules (||*.x^) in Adblock
 * syntax, allow rules among them and an allowlist of addresses and names.
 *
 *  - listed: every listed address, every address of every prefix, every
 *    listed name and subdomains of the subdomain rules are dropped or
 *    answered NXDOMAIN (bloomgate_dns through the tail call), except the
 *    allowed ones, which pass and are counted allowlisted;
 *  - unlisted: 10^6 random unlisted IPv4 addresses, as many IPv6 and as
 *    many names: none dropped or answered, and bloom_false_positives
 *    (dns_bloom_false_positives) moves by exactly the number of Bloom
 *    positives among them, counted independently on a copy of the live
 *    filter with its stage cut off (fp_nbuckets = 0: the Bloom part's own
 *    verdict, bg_filter_test4/6/test_name);
 *  - swaps: filters with and without the stage, other seeds and rates,
 *    published one after the other, each checked in full; then swaps under
 *    traffic from a second thread between filters with the stage.
 *
 * The listed keys all lie in 10.0.0.0/8, 2001:db8::/32 and under .test,
 * .net and .org; the unlisted ones are drawn outside those, so whether a
 * key is listed is known without a model of the list.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bloomgate/abi.h"
#include "bloomgate/bloom.h"
#include "bloomgate/dns.h"
#include "core/domains.h"
#include "core/filter.h"
#include "core/lists.h"
#include "core/sources.h"
#include "kern/attach.h"
#include "kern/pins.h"
#include "kern/swap.h"

#include "blocklist.h"
#include "pktgen.h"
#include "bloomgate.skel.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define LOOSE_FPR 0.05 /* the Bloom part's target: many positives */
#define N_ADDR4 20000 /* random listed IPv4 addresses (10.128.0.0/9) */
#define N_ADDR6 5000 /* random listed IPv6 addresses (2001:db8:ff00::/40) */
#define N_EXACT 5000 /* |adsI.blockedJ.test^ */
#define N_TREE 1000 /* ||trackerI.net^ */
#define N_SUBS 500 /* ||*.cdn.subsI.org^ */
#define N_UNLISTED 1000000 /* per kind: IPv4, IPv6, names */
#define N_SWAP_SAMPLE 20000 /* unlisted keys per kind after each swap */
#define LIST_SEED 11 /* the listed addresses */
#define PROBE_SEED 1100 /* the unlisted keys */
#define FILTER_SEED 0xbb67ae8584caa73bULL

/* ---- Random numbers ------------------------------------------------------ */

/* splitmix64: a fixed, portable sequence. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* An IPv4 address (host order) outside 10.0.0.0/8: never listed. */
static uint32_t unlisted4(uint64_t *s)
{
	uint32_t a;

	do
		a = (uint32_t)rng_next(s);
	while (a >> 24 == 10);
	return a;
}

/* An IPv6 address outside 2001:db8::/32: never listed. */
static void unlisted6(uint64_t *s, uint8_t a[16])
{
	uint64_t hi, lo = rng_next(s);

	do
		hi = rng_next(s);
	while (hi >> 32 == 0x20010db8);
	for (int i = 0; i < 8; i++) {
		a[i] = (uint8_t)(hi >> (56 - 8 * i));
		a[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
}

/* A name of 2 to 5 labels under .unl (no rule names it or a parent):
 * deeper names are probed at more suffix depths, so more chances of a
 * Bloom positive per query. */
static void unlisted_name(uint64_t *s, char *out, size_t len)
{
	uint64_t r = rng_next(s);
	int labels = 1 + (int)(r % 4), o = 0, i;

	for (i = 0; i < labels; i++) {
		uint64_t v = rng_next(s);

		o += snprintf(out + o, len - (size_t)o, "%c%x.",
			      'a' + (int)(v % 26), (unsigned int)(v >> 8) & 0xfffff);
	}
	snprintf(out + o, len - (size_t)o, "unl");
}

/* ---- The blocklist ------------------------------------------------------- */

struct pfx4 {
	const char *text;
	uint32_t start, end; /* host order */
};

struct pfx6 {
	const char *text;
	uint8_t base[16];
	uint32_t size; /* addresses: small prefixes only (<= 4096) */
};

/* Eight lengths per family: more than BG_PROBES_MAX, so some are expanded
 * to a longer probed length. */
static struct pfx4 PFX4[] = {
	{ .text = "10.20.0.0/21" }, { .text = "10.21.0.0/22" },
	{ .text = "10.22.0.0/23" }, { .text = "10.23.0.0/24" },
	{ .text = "10.24.0.8/29" }, { .text = "10.24.0.4/30" },
	{ .text = "10.24.0.2/31" }, { .text = "10.25.0.0/25" },
	{ .text = "10.26.0.0/17" }, { .text = "10.27.0.0/19" },
};

static struct pfx6 PFX6[] = {
	{ .text = "2001:db8:1::/116" }, { .text = "2001:db8:2::/118" },
	{ .text = "2001:db8:3::/120" }, { .text = "2001:db8:4::/122" },
	{ .text = "2001:db8:5::/124" }, { .text = "2001:db8:6::/126" },
	{ .text = "2001:db8:7::/127" }, { .text = "2001:db8:8::/121" },
};

/* Allowed: a range inside a blocked prefix, one listed random address
 * (A4[0], added at build), an IPv6 address inside a prefix. */
#define ALLOW4_RANGE "10.20.3.0/28"
#define ALLOW4_START 0x0a140300U
#define ALLOW4_END 0x0a14030fU
#define ALLOW6_ADDR "2001:db8:1::42"

/* Name rules besides the generated ones: allow rules in the blocklist and
 * one name in an --allow list. */
#define ALLOW_RULES \
	"@@|good.tracker0.net^\n" /* one name under a blocked tree */ \
	"@@||okay.tracker1.net^\n" /* a subtree of a blocked tree */ \
	"@@|ads0.blocked0.test^\n" /* a blocked exact name */
#define ALLOW_LIST_NAME "fine.tracker2.net"

struct lists {
	uint32_t *a4; /* host order, distinct */
	uint8_t (*a6)[16];
	struct bg_list block, allow;
	struct bg_names names;
};

static struct lists L;

static int pfx6_parse(struct pfx6 *p)
{
	char buf[64], *slash;
	int plen;

	snprintf(buf, sizeof(buf), "%s", p->text);
	slash = strchr(buf, '/');
	*slash = 0;
	plen = atoi(slash + 1);
	p->size = 1U << (128 - plen);
	return inet_pton(AF_INET6, buf, p->base) == 1 ? 0 : -1;
}

static void pfx4_parse(struct pfx4 *p)
{
	char buf[32], *slash;
	struct in_addr a;
	int plen;

	snprintf(buf, sizeof(buf), "%s", p->text);
	slash = strchr(buf, '/');
	*slash = 0;
	plen = atoi(slash + 1);
	assert_int_equal(inet_pton(AF_INET, buf, &a), 1);
	p->start = ntohl(a.s_addr);
	p->end = p->start + (uint32_t)((1ULL << (32 - plen)) - 1);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* A growing text buffer. */
struct text {
	char *b;
	size_t len, cap;
};

static void tprintf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->cap - t->len < 256) {
		t->cap = t->cap ? 2 * t->cap : 1 << 16;
		t->b = realloc(t->b, t->cap);
		assert_non_null(t->b);
	}
	va_start(ap, fmt);
	n = vsnprintf(t->b + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < t->cap - t->len);
	t->len += (size_t)n;
}

static void exact_name(char *out, size_t len, int i)
{
	snprintf(out, len, "ads%d.blocked%d.test", i, i % 37);
}

static void lists_build(void)
{
	struct bg_list_opts lo = { .strict = 1 }, ao = { .strict = 1,
							 .allowlist = 1 };
	struct bg_dom_opts dbo = { .format = BG_FMT_ADBLOCK, .strict = 1 };
	struct bg_dom_opts dao = { .format = BG_FMT_PLAIN, .strict = 1,
				   .allow = 1 };
	struct text t = { 0 };
	uint64_t s = LIST_SEED;
	char ip[INET6_ADDRSTRLEN], name[128];
	size_t i, u;

	memset(&L, 0, sizeof(L));
	L.a4 = calloc(N_ADDR4, sizeof(*L.a4));
	L.a6 = calloc(N_ADDR6, sizeof(*L.a6));
	assert_non_null(L.a4);
	assert_non_null(L.a6);
	/* distinct by construction: a counter in the low bits */
	for (i = 0; i < N_ADDR4; i++)
		L.a4[i] = 0x0a800000U | ((uint32_t)rng_next(&s) & 0x7f0000U) |
			  ((uint32_t)i & 0xffff);
	qsort(L.a4, N_ADDR4, sizeof(*L.a4), cmp_u32);
	for (i = 0; i < N_ADDR6; i++) {
		uint64_t r = rng_next(&s);

		memcpy(L.a6[i], (uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8, 0xff }, 5);
		for (u = 5; u < 13; u++)
			L.a6[i][u] = (uint8_t)(r >> (8 * (u - 5)));
		L.a6[i][13] = 0;
		L.a6[i][14] = (uint8_t)(i >> 8);
		L.a6[i][15] = (uint8_t)i;
	}

	for (i = 0; i < N_ADDR4; i++) {
		uint32_t be = htonl(L.a4[i]);

		tprintf(&t, "%s\n", inet_ntop(AF_INET, &be, ip, sizeof(ip)));
	}
	for (i = 0; i < N_ADDR6; i++)
		tprintf(&t, "%s\n", inet_ntop(AF_INET6, L.a6[i], ip, sizeof(ip)));
	for (i = 0; i < ARRAY_SIZE(PFX4); i++) {
		pfx4_parse(&PFX4[i]);
		tprintf(&t, "%s\n", PFX4[i].text);
	}
	for (i = 0; i < ARRAY_SIZE(PFX6); i++) {
		assert_int_equal(pfx6_parse(&PFX6[i]), 0);
		tprintf(&t, "%s\n", PFX6[i].text);
	}
	bg_list_init(&L.block);
	assert_int_equal(bg_list_parse_buf(&L.block, "block.txt", t.b, t.len, &lo), 0);
	bg_list_finish(&L.block);
	assert_int_equal(L.block.n4, N_ADDR4 + ARRAY_SIZE(PFX4));
	assert_int_equal(L.block.n6, N_ADDR6 + ARRAY_SIZE(PFX6));

	t.len = 0;
	{
		uint32_t be = htonl(L.a4[0]);

		tprintf(&t, "%s\n%s\n%s\n", inet_ntop(AF_INET, &be, ip, sizeof(ip)),
			ALLOW4_RANGE, ALLOW6_ADDR);
	}
	bg_list_init(&L.allow);
	assert_int_equal(bg_list_parse_buf(&L.allow, "allow.txt", t.b, t.len, &ao), 0);
	bg_list_finish(&L.allow);
	assert_int_equal(L.allow.n4, 2);
	assert_int_equal(L.allow.n6, 1);

	t.len = 0;
	for (i = 0; i < N_EXACT; i++) {
		exact_name(name, sizeof(name), (int)i);
		tprintf(&t, "|%s^\n", name);
	}
	for (i = 0; i < N_TREE; i++)
		tprintf(&t, "||tracker%zu.net^\n", i);
	for (i = 0; i < N_SUBS; i++)
		tprintf(&t, "||*.cdn.subs%zu.org^\n", i);
	tprintf(&t, "%s", ALLOW_RULES);
	bg_names_init(&L.names);
	assert_int_equal(bg_names_parse_buf(&L.names, "names.txt", t.b, t.len,
					    &dbo), 0);
	assert_int_equal(bg_names_parse_buf(&L.names, "allow-names.txt",
					    ALLOW_LIST_NAME "\n",
					    strlen(ALLOW_LIST_NAME) + 1, &dao), 0);
	bg_names_finish(&L.names);
	assert_int_equal(L.names.n, N_EXACT + N_TREE + N_SUBS + 4);
	free(t.b);
}

static void lists_free(void)
{
	bg_list_free(&L.block);
	bg_list_free(&L.allow);
	bg_names_free(&L.names);
	free(L.a4);
	free(L.a6);
}

static const struct bg_blocklist *lists_bl(void)
{
	static struct bg_blocklist bl;

	bl = bl_view(&L.block, &L.allow, &L.names);
	return &bl;
}

/* ---- Fixture: the program, loaded once ------------------------------------ */

struct fx {
	struct bloomgate *skel;
	int xdp, dns, filters, stats, progs;
	struct pkt p4, p6; /* UDP to port 9; destination rewritten per run */
	size_t d4, d6; /* destination offsets */
	/* the live filter (mapped) and the same without its stage */
	const void *mem;
	void *bloom;
	size_t len;
	uint32_t server; /* the DNS queries' destination (host order): a
			    Bloom negative of the live filter */
};

static __u32 run_buf(int prog, const void *buf, size_t len)
{
	uint8_t out[PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = (__u32)len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

	if (bpf_prog_test_run_opts(prog, &o))
		fail_msg("test_run failed");
	return o.retval;
}

static __u32 run4(struct fx *f, struct pkt *p, uint32_t addr)
{
	uint32_t be = htonl(addr);

	memcpy(p->buf + f->d4, &be, 4);
	return run_buf(f->xdp, p->buf, p->len);
}

static __u32 run6(struct fx *f, struct pkt *p, const uint8_t a[16])
{
	memcpy(p->buf + f->d6, a, 16);
	return run_buf(f->xdp, p->buf, p->len);
}

static size_t to_wire(const char *name, uint8_t *out)
{
	size_t o = 0;

	while (*name) {
		const char *d = strchr(name, '.');
		size_t len = d ? (size_t)(d - name) : strlen(name);

		out[o++] = (uint8_t)len;
		memcpy(out + o, name, len);
		o += len;
		name += len + (d ? 1 : 0);
	}
	out[o++] = 0;
	return o;
}

/* An A query for name, from 192.0.2.10 to the server, through
 * bloomgate_xdp (which tail-calls bloomgate_dns). */
static __u32 run_name(struct fx *f, const char *name)
{
	uint8_t msg[512] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0 };
	size_t len = 12;
	struct pkt_spec spec = { .family = AF_INET, .src = "192.0.2.10",
				 .dst = "0.0.0.0", .sport = 40000, .dport = 53 };
	struct pkt p;
	uint32_t be = htonl(f->server);

	len += to_wire(name, msg + len);
	msg[len++] = 0;
	msg[len++] = 1; /* A */
	msg[len++] = 0;
	msg[len++] = 1; /* IN */
	spec.payload = len;
	assert_int_equal(pkt_build(&p, &spec), 0);
	memcpy(p.buf + p.l4 + 8, msg, len);
	memcpy(p.buf + p.l3 + offsetof(struct iphdr, daddr), &be, 4);
	/* the header checksum over the new destination */
	memset(p.buf + p.l3 + offsetof(struct iphdr, check), 0, 2);
	{
		uint16_t sum = pkt_csum(p.buf + p.l3, 20, 0);

		memcpy(p.buf + p.l3 + offsetof(struct iphdr, check), &sum, 2);
	}
	return run_buf(f->xdp, p.buf, p.len);
}

static void counters(struct fx *f, struct bg_counters *c)
{
	assert_int_equal(bg_counters_read(f->stats, c), 0);
}

#define DELTA(c1, c0, name) ((c1).cnt[BG_CNT_##name] - (c0).cnt[BG_CNT_##name])

static int fx_setup(void **state)
{
	struct pkt_spec s4 = { .family = AF_INET, .src = "203.0.113.9",
			       .dst = "0.0.0.0", .payload = 18 };
	struct pkt_spec s6 = { .family = AF_INET6, .src = "2001:db9::9",
			       .dst = "::", .payload = 18 };
	struct fx *f = calloc(1, sizeof(*f));
	__u32 key = 0;

	assert_non_null(f);
	lists_build();
	f->skel = bloomgate__open();
	assert_non_null(f->skel);
	f->skel->rodata->cfg_match = BG_MATCH_DST;
	f->skel->rodata->cfg_action = BG_ACTION_DROP;
	assert_int_equal(bloomgate__load(f->skel), 0);
	/* the default answer to a listed name */
	assert_int_equal(f->skel->rodata->cfg_dns_action, BG_DNS_ACTION_NXDOMAIN);
	f->xdp = bpf_program__fd(f->skel->progs.bloomgate_xdp);
	f->dns = bpf_program__fd(f->skel->progs.bloomgate_dns);
	f->filters = bpf_map__fd(f->skel->maps.bg_filters);
	f->stats = bpf_map__fd(f->skel->maps.bg_stats);
	f->progs = bpf_map__fd(f->skel->maps.bg_progs);
	assert_int_equal(bpf_map_update_elem(f->progs, &key, &f->dns, BPF_ANY), 0);
	assert_int_equal(pkt_build(&f->p4, &s4), 0);
	assert_int_equal(pkt_build(&f->p6, &s6), 0);
	f->d4 = f->p4.l3 + offsetof(struct iphdr, daddr);
	f->d6 = f->p6.l3 + offsetof(struct ipv6hdr, daddr);
	*state = f;
	return 0;
}

static void snapshot_drop(struct fx *f)
{
	if (f->mem)
		bg_filter_unmap(f->mem, f->len);
	free(f->bloom);
	f->mem = NULL;
	f->bloom = NULL;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	snapshot_drop(f);
	bloomgate__destroy(f->skel);
	free(f);
	lists_free();
	return 0;
}

/* Maps the live filter and copies it without its stage; picks a DNS server
 * address the Bloom part says no to, so that a query's address probe adds
 * nothing to bloom_false_positives. */
static void snapshot(struct fx *f)
{
	struct bg_filter_header *bh;
	uint64_t s = PROBE_SEED - 1;
	uint32_t a = 0;
	int tries;

	snapshot_drop(f);
	assert_int_equal(bg_filter_map_current(f->filters, &f->mem, &f->len), 0);
	f->bloom = malloc(f->len);
	assert_non_null(f->bloom);
	memcpy(f->bloom, f->mem, f->len);
	bh = f->bloom;
	bh->fp_nbuckets = 0;
	/* random ones: a /24 probe would say the same for a whole /24 */
	for (tries = 0; tries < 10000; tries++) {
		a = unlisted4(&s);
		if (!bg_filter_test4(f->bloom, htonl(a)))
			break;
	}
	assert_true(tries < 10000);
	f->server = a;
}

/* Builds and publishes a filter of the lists; returns its plan. */
static void publish(struct fx *f, double fpr, int confirm, uint64_t seed,
		    struct bg_filter_params *p)
{
	int fd;

	assert_int_equal(bg_filter_plan_confirm(lists_bl(), fpr, confirm, p), 0);
	fd = bg_filter_create(p, seed, lists_bl());
	assert_true(fd >= 0);
	assert_int_equal(bg_filter_publish(f->filters, fd), 0);
	close(fd);
	snapshot(f);
	assert_int_equal(((const struct bg_filter_header *)f->mem)->fp_nbuckets,
			 p->fp_nbuckets);
	assert_true(!confirm == !p->fp_nbuckets);
}

/* ---- Listed keys ---------------------------------------------------------- */

struct expect {
	size_t runs, stopped, allowed; /* stopped: dropped or answered */
	size_t wrong; /* a verdict other than expected */
};

static void want(struct expect *e, __u32 got, __u32 stop, int allowed,
		 const char *what)
{
	__u32 exp = allowed ? XDP_PASS : stop;

	e->runs++;
	e->stopped += !allowed;
	e->allowed += !!allowed;
	if (got != exp) {
		if (e->wrong < 10)
			print_message("wrong verdict %u (want %u) for %s\n", got,
				      exp, what);
		e->wrong++;
	}
}

static int allowed4(uint32_t a)
{
	return a == L.a4[0] || (a >= ALLOW4_START && a <= ALLOW4_END);
}

static int allowed6(const uint8_t a[16])
{
	uint8_t x[16];

	inet_pton(AF_INET6, ALLOW6_ADDR, x);
	return !memcmp(a, x, 16);
}

static const char *txt4(uint32_t a)
{
	static char b[INET_ADDRSTRLEN];
	uint32_t be = htonl(a);

	return inet_ntop(AF_INET, &be, b, sizeof(b));
}

static const char *txt6(const uint8_t a[16])
{
	static char b[INET6_ADDRSTRLEN];

	return inet_ntop(AF_INET6, a, b, sizeof(b));
}

/*
 * Every listed address and every address of every prefix: dropped, or
 * passed and counted allowlisted when the allowlist holds it. Every 4th
 * random address only when quick (after a swap). Counter deltas checked.
 */
static void check_listed_addrs(struct fx *f, int quick)
{
	struct expect e = { 0 };
	struct bg_counters c0, c1;
	size_t i, step = quick ? 4 : 1;
	uint32_t a;

	counters(f, &c0);
	for (i = 0; i < N_ADDR4; i += step)
		want(&e, run4(f, &f->p4, L.a4[i]), XDP_DROP, allowed4(L.a4[i]),
		     txt4(L.a4[i]));
	for (i = 0; i < ARRAY_SIZE(PFX4); i++)
		for (a = PFX4[i].start; a <= PFX4[i].end; a++)
			want(&e, run4(f, &f->p4, a), XDP_DROP, allowed4(a), txt4(a));
	for (i = 0; i < N_ADDR6; i += step)
		want(&e, run6(f, &f->p6, L.a6[i]), XDP_DROP, 0, txt6(L.a6[i]));
	for (i = 0; i < ARRAY_SIZE(PFX6); i++) {
		uint8_t x[16];
		uint32_t j;

		for (j = 0; j < PFX6[i].size; j++) {
			uint32_t lo;

			memcpy(x, PFX6[i].base, 16);
			memcpy(&lo, x + 12, 4);
			lo = htonl(ntohl(lo) + j);
			memcpy(x + 12, &lo, 4);
			want(&e, run6(f, &f->p6, x), XDP_DROP, allowed6(x), txt6(x));
		}
	}
	counters(f, &c1);
	assert_int_equal(e.wrong, 0);
	/* A4[0] (every step includes it), ALLOW4_RANGE, ALLOW6_ADDR */
	assert_int_equal(e.allowed, 1 + 16 + 1);
	/* confirmed positives, every one; no Bloom positive was rejected */
	assert_int_equal(DELTA(c1, c0, PACKETS), e.runs);
	assert_int_equal(DELTA(c1, c0, POSITIVES), e.runs);
	assert_int_equal(DELTA(c1, c0, NEGATIVES), 0);
	assert_int_equal(DELTA(c1, c0, BLOOM_FP), 0);
	assert_int_equal(DELTA(c1, c0, DROPPED), e.stopped);
	assert_int_equal(DELTA(c1, c0, ALLOWLISTED), e.allowed);
	assert_int_equal(DELTA(c1, c0, PASSED), e.allowed);
}

/* One listed name through the program: NXDOMAIN (XDP_TX) or, allowed,
 * passed. */
static void want_name(struct fx *f, struct expect *e, const char *name,
		      int allowed)
{
	want(e, run_name(f, name), XDP_TX, allowed, name);
}

/*
 * Every listed name (the exact ones, every tree's own name) and
 * subdomains of the subdomain rules: answered, or passed and counted
 * dns_allowlisted under an allow rule. A subdomains-only rule's own name
 * is not listed: it passes (the stage may reject a Bloom positive for it).
 */
static void check_listed_names(struct fx *f, int quick)
{
	struct expect e = { 0 };
	struct bg_counters c0, c1;
	const struct bg_filter_header *h = f->mem;
	int stage = h->fp_nbuckets != 0;
	size_t i, step = quick ? 4 : 1, own = 0, own_rejected = 0, own_acted = 0;
	char n[160];

	counters(f, &c0);
	for (i = 0; i < N_EXACT; i += step) {
		exact_name(n, sizeof(n), (int)i);
		want_name(f, &e, n, i == 0);
	}
	for (i = 0; i < N_TREE; i += step) {
		snprintf(n, sizeof(n), "tracker%zu.net", i);
		want_name(f, &e, n, 0);
		snprintf(n, sizeof(n), "x%zu.tracker%zu.net", i, i);
		want_name(f, &e, n, 0);
		snprintf(n, sizeof(n), "a.b.c.tracker%zu.net", i);
		want_name(f, &e, n, 0);
	}
	/* the allow rules, and their neighbours still blocked */
	want_name(f, &e, "good.tracker0.net", 1);
	want_name(f, &e, "x.good.tracker0.net", 0); /* exact allow only */
	want_name(f, &e, "okay.tracker1.net", 1);
	want_name(f, &e, "x.y.okay.tracker1.net", 1);
	want_name(f, &e, ALLOW_LIST_NAME, 1);
	want_name(f, &e, "x." ALLOW_LIST_NAME, 0); /* a plain allow: the name */
	for (i = 0; i < N_SUBS; i += step) {
		int rej = 0, pos;
		__u32 v;

		snprintf(n, sizeof(n), "a.cdn.subs%zu.org", i);
		want_name(f, &e, n, 0);
		snprintf(n, sizeof(n), "b.c.d.cdn.subs%zu.org", i);
		want_name(f, &e, n, 0);
		/* the rule's own name: not listed; without the stage a
		 * Bloom positive for it is acted on */
		snprintf(n, sizeof(n), "cdn.subs%zu.org", i);
		pos = bg_filter_test_name(f->bloom, n, NULL);
		v = run_name(f, n);
		if (v != (!stage && pos ? XDP_TX : XDP_PASS))
			fail_msg("%s: not listed: verdict %u (Bloom %d, stage %d)",
				 n, v, pos, stage);
		assert_int_equal(bg_filter_judge_name(f->mem, n, NULL, NULL, &rej),
				 !stage && pos);
		assert_int_equal(rej, stage && pos);
		own++;
		own_rejected += (size_t)rej;
		own_acted += !stage && pos;
	}
	counters(f, &c1);
	assert_int_equal(e.wrong, 0);
	/* ads0 (every step includes it), the four allow names above */
	assert_int_equal(e.allowed, 5);
	assert_int_equal(DELTA(c1, c0, DNS_QUERIES), e.runs + own);
	assert_int_equal(DELTA(c1, c0, DNS_POSITIVES), e.runs + own_acted);
	assert_int_equal(DELTA(c1, c0, DNS_NEGATIVES), own - own_acted);
	assert_int_equal(DELTA(c1, c0, DNS_BLOOM_FP), own_rejected);
	assert_int_equal(DELTA(c1, c0, DNS_ALLOWLISTED), e.allowed);
	assert_int_equal(DELTA(c1, c0, ANSWERED), e.stopped + own_acted);
	assert_int_equal(DELTA(c1, c0, PASSED), e.allowed + own - own_acted);
	/* the server's address: a Bloom negative (snapshot()) */
	assert_int_equal(DELTA(c1, c0, NEGATIVES), e.runs + own);
	assert_int_equal(DELTA(c1, c0, BLOOM_FP), 0);
}

/* ---- Unlisted keys -------------------------------------------------------- */

struct unlisted {
	size_t runs4, runs6, runs_n;
	size_t bloom4, bloom6, bloom_n; /* Bloom positives (the Bloom part) */
	size_t stopped; /* dropped or answered */
	size_t disagree; /* bg_filter_judge*() says otherwise */
	double secs;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * n random unlisted keys of each kind through the program. Every one must
 * pass when the filter has the stage; without it, exactly the Bloom
 * positives are dropped or answered. The counters must say the same.
 */
static void check_unlisted(struct fx *f, size_t n, uint64_t seed,
			   struct unlisted *u)
{
	const struct bg_filter_header *h = f->mem;
	int stage = h->fp_nbuckets != 0;
	struct bg_counters c0, c1, c2;
	uint64_t s = seed;
	double t0 = now_s();
	size_t i, stop0 = 0, stop_n = 0;
	char name[160];

	memset(u, 0, sizeof(*u));
	counters(f, &c0);
	for (i = 0; i < n; i++) {
		uint32_t a = unlisted4(&s);
		int pos = bg_filter_test4(f->bloom, htonl(a)), rej = 0;
		__u32 v = run4(f, &f->p4, a);

		u->bloom4 += (size_t)pos;
		if (v != (stage || !pos ? XDP_PASS : XDP_DROP))
			fail_msg("%s: verdict %u (Bloom %d, stage %d)", txt4(a),
				 v, pos, stage);
		stop0 += v == XDP_DROP;
		if (bg_filter_judge4(f->mem, htonl(a), &rej) != (!stage && pos) ||
		    rej != (stage && pos))
			u->disagree++;
	}
	u->runs4 = n;
	for (i = 0; i < n; i++) {
		uint8_t a[16];
		int pos, rej = 0;
		__u32 v;

		unlisted6(&s, a);
		pos = bg_filter_test6(f->bloom, a);
		v = run6(f, &f->p6, a);
		u->bloom6 += (size_t)pos;
		if (v != (stage || !pos ? XDP_PASS : XDP_DROP))
			fail_msg("%s: verdict %u (Bloom %d, stage %d)", txt6(a),
				 v, pos, stage);
		stop0 += v == XDP_DROP;
		if (bg_filter_judge6(f->mem, a, &rej) != (!stage && pos) ||
		    rej != (stage && pos))
			u->disagree++;
	}
	u->runs6 = n;
	counters(f, &c1);
	for (i = 0; i < n; i++) {
		int pos, rej = 0;
		__u32 v;

		unlisted_name(&s, name, sizeof(name));
		pos = bg_filter_test_name(f->bloom, name, NULL);
		assert_true(pos >= 0);
		v = run_name(f, name);
		u->bloom_n += (size_t)pos;
		if (v != (stage || !pos ? XDP_PASS : XDP_TX))
			fail_msg("%s: verdict %u (Bloom %d, stage %d)", name, v,
				 pos, stage);
		stop_n += v == XDP_TX;
		if (bg_filter_judge_name(f->mem, name, NULL, NULL, &rej) !=
			    (!stage && pos) ||
		    rej != (stage && pos))
			u->disagree++;
	}
	u->runs_n = n;
	counters(f, &c2);
	u->stopped = stop0 + stop_n;
	u->secs = now_s() - t0;

	assert_int_equal(u->disagree, 0);
	/* addresses: each one a negative, unless the Bloom part alone
	 * decided; a Bloom positive the stage rejected counted once */
	assert_int_equal(DELTA(c1, c0, PACKETS), 2 * n);
	assert_int_equal(DELTA(c1, c0, POSITIVES), stage ? 0 : u->bloom4 + u->bloom6);
	assert_int_equal(DELTA(c1, c0, NEGATIVES),
			 2 * n - (stage ? 0 : u->bloom4 + u->bloom6));
	assert_int_equal(DELTA(c1, c0, BLOOM_FP), stage ? u->bloom4 + u->bloom6 : 0);
	assert_int_equal(DELTA(c1, c0, DROPPED), stop0);
	assert_int_equal(DELTA(c1, c0, PASSED), 2 * n - stop0);
	assert_int_equal(DELTA(c1, c0, ALLOWLISTED), 0);
	/* names: the same per query; the server's address a negative */
	assert_int_equal(DELTA(c2, c1, DNS_QUERIES), n);
	assert_int_equal(DELTA(c2, c1, DNS_POSITIVES), stage ? 0 : u->bloom_n);
	assert_int_equal(DELTA(c2, c1, DNS_NEGATIVES), n - (stage ? 0 : u->bloom_n));
	assert_int_equal(DELTA(c2, c1, DNS_BLOOM_FP), stage ? u->bloom_n : 0);
	assert_int_equal(DELTA(c2, c1, ANSWERED), stop_n);
	assert_int_equal(DELTA(c2, c1, DNS_ALLOWLISTED), 0);
	assert_int_equal(DELTA(c2, c1, NEGATIVES), n);
	assert_int_equal(DELTA(c2, c1, BLOOM_FP), 0);
	assert_int_equal(DELTA(c2, c1, PASSED), n - stop_n);
}

/* ---- Tests ---------------------------------------------------------------- */

/* The loose filter: the plan expands prefixes, the stage holds every key. */
static void test_loose_plan(void **state)
{
	struct fx *f = *state;
	struct bg_filter_params p;
	const struct bg_filter_header *h;

	publish(f, LOOSE_FPR, 1, FILTER_SEED, &p);
	h = f->mem;
	print_message("plan: %llu keys (%llu IPv4, %llu IPv6, %llu names), "
		      "%u blocks k=%u, predicted per probe %.4f, per address or "
		      "query %.4f, with the stage %.3g; %u buckets, load %.3f\n",
		      (unsigned long long)p.n, (unsigned long long)p.keys4,
		      (unsigned long long)p.keys6, (unsigned long long)p.name_keys,
		      p.nblocks, p.k, p.predicted, p.predicted_addr,
		      p.predicted_confirmed, p.fp_nbuckets, p.fp_load);
	/* eight lengths per family folded into BG_PROBES_MAX: expansion */
	print_message("probed lengths: IPv4 %u (/%u first), IPv6 %u (/%u first)\n",
		      h->n4, h->len4[0], h->n6, h->len6[0]);
	/* more than one probed length, fewer than the listed ones */
	assert_true(h->n4 >= 2 && h->n4 < 1 + ARRAY_SIZE(PFX4));
	assert_true(h->n6 >= 2 && h->n6 < 1 + ARRAY_SIZE(PFX6));
	assert_true(p.keys4 > p.prefixes4);
	assert_true(p.keys6 > p.prefixes6);
	assert_int_equal(p.short6_prefixes, 0);
	assert_false(h->flags & BG_FILTER_F_SHORT4);
	assert_true(h->flags & BG_FILTER_F_NAMES);
	assert_true(p.fp_nbuckets > 0);
	assert_true(p.predicted_confirmed < p.predicted_addr);
}

/* Zero false negatives, the allowlist first. */
static void test_listed(void **state)
{
	struct fx *f = *state;
	struct bg_filter_params p;

	publish(f, LOOSE_FPR, 1, FILTER_SEED, &p);
	check_listed_addrs(f, 0);
	check_listed_names(f, 0);
}

/* 10^6 unlisted keys of each kind: none stopped, every Bloom positive
 * counted as rejected. */
static void test_unlisted(void **state)
{
	struct fx *f = *state;
	struct bg_filter_params p;
	struct unlisted u;

	publish(f, LOOSE_FPR, 1, FILTER_SEED, &p);
	check_unlisted(f, N_UNLISTED, PROBE_SEED, &u);
	print_message("unlisted: %zu IPv4 (%zu Bloom positives, %.4f), %zu IPv6 "
		      "(%zu, %.4f), %zu names (%zu, %.4f); none stopped; %.1fs\n",
		      u.runs4, u.bloom4, (double)u.bloom4 / (double)u.runs4,
		      u.runs6, u.bloom6, (double)u.bloom6 / (double)u.runs6,
		      u.runs_n, u.bloom_n, (double)u.bloom_n / (double)u.runs_n,
		      u.secs);
	assert_int_equal(u.stopped, 0);
	/* the stage must have been exercised: more than 1 % each */
	assert_true(u.bloom4 > N_UNLISTED / 100);
	assert_true(u.bloom6 > N_UNLISTED / 100);
	assert_true(u.bloom_n > N_UNLISTED / 100);
}

/* Filters with and without the stage, other seeds and rates, one after the
 * other: each one checked in full after its swap. */
static void test_swaps(void **state)
{
	static const struct {
		double fpr;
		int confirm;
	} seq[] = {
		{ LOOSE_FPR, 1 }, { LOOSE_FPR, 0 }, { 0.01, 1 }, { 0.2, 1 },
		{ 0.001, 0 }, { LOOSE_FPR, 1 }, { 0.2, 0 }, { 0.01, 1 },
	};
	struct fx *f = *state;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(seq); i++) {
		struct bg_filter_params p;
		struct unlisted u;

		publish(f, seq[i].fpr, seq[i].confirm, FILTER_SEED + 17 * i, &p);
		check_listed_addrs(f, 1);
		check_listed_names(f, 1);
		check_unlisted(f, N_SWAP_SAMPLE, PROBE_SEED + 1 + i, &u);
		print_message("swap %zu: fpr %g, stage %s: %zu of %zu unlisted "
			      "Bloom positives, %zu stopped\n", i, seq[i].fpr,
			      seq[i].confirm ? "on" : "off",
			      u.bloom4 + u.bloom6 + u.bloom_n,
			      3 * (size_t)N_SWAP_SAMPLE, u.stopped);
		if (seq[i].confirm)
			assert_int_equal(u.stopped, 0);
		else /* without the stage the Bloom positives are acted on */
			assert_int_equal(u.stopped, u.bloom4 + u.bloom6 + u.bloom_n);
	}
}

/* ---- Swaps under traffic -------------------------------------------------- */

#define TRAFFIC_FILTERS 3
#define TRAFFIC_SWAPS 150
#define TRAFFIC_UNLISTED 3000 /* Bloom positives of each filter */

struct traffic {
	struct fx *f;
	uint32_t *listed, *unlisted;
	size_t nlisted, nunlisted;
	atomic_int stop;
	atomic_size_t runs, wrong;
};

static void *traffic_fn(void *arg)
{
	struct traffic *t = arg;
	struct pkt p = t->f->p4; /* this thread's own packet */
	size_t i = 0;

	while (!atomic_load(&t->stop)) {
		uint32_t a;
		__u32 v, want_v;

		if (i & 1) {
			a = t->listed[(i >> 1) % t->nlisted];
			want_v = XDP_DROP;
		} else {
			a = t->unlisted[(i >> 1) % t->nunlisted];
			want_v = XDP_PASS;
		}
		v = run4(t->f, &p, a);
		if (v != want_v)
			atomic_fetch_add(&t->wrong, 1);
		atomic_fetch_add(&t->runs, 1);
		i++;
	}
	return NULL;
}

/*
 * A second thread sends listed addresses (every prefix length among them)
 * and unlisted addresses that are Bloom positives of the filters swapped
 * in, while this one publishes filters with the stage, of other seeds and
 * rates, in turn. Each filter is one map with both parts, published with
 * one pointer store: a packet sees the Bloom part and the stage of the
 * same filter, so a listed address is always confirmed and a Bloom
 * positive of any of them always rejected.
 */
static void test_swap_under_traffic(void **state)
{
	static const double fprs[TRAFFIC_FILTERS] = { LOOSE_FPR, 0.2, 0.01 };
	struct fx *f = *state;
	struct traffic t = { .f = f };
	int fds[TRAFFIC_FILTERS];
	size_t i, tries, swaps = 0, pos_found[TRAFFIC_FILTERS] = { 0 };
	uint64_t s = PROBE_SEED + 99;
	pthread_t th;

	t.listed = calloc(N_ADDR4 / 16 + ARRAY_SIZE(PFX4) * 2, sizeof(*t.listed));
	t.unlisted = calloc(TRAFFIC_FILTERS * TRAFFIC_UNLISTED, sizeof(*t.unlisted));
	assert_non_null(t.listed);
	assert_non_null(t.unlisted);
	for (i = 1; i < N_ADDR4; i += 16) /* A4[0] is allowed */
		t.listed[t.nlisted++] = L.a4[i];
	for (i = 0; i < ARRAY_SIZE(PFX4); i++) {
		t.listed[t.nlisted++] = PFX4[i].start;
		t.listed[t.nlisted++] = PFX4[i].end;
	}
	for (i = 0; i < TRAFFIC_FILTERS; i++) {
		struct bg_filter_params p;

		assert_int_equal(bg_filter_plan_confirm(lists_bl(), fprs[i], 1, &p), 0);
		fds[i] = bg_filter_create(&p, FILTER_SEED + 1000 + i, lists_bl());
		assert_true(fds[i] >= 0);
		assert_int_equal(bg_filter_publish(f->filters, fds[i]), 0);
		snapshot(f);
		/* unlisted addresses the Bloom part of this filter says yes
		 * to (about one in 25 at 0.05: bounded all the same) */
		for (tries = 0; pos_found[i] < TRAFFIC_UNLISTED; tries++) {
			uint32_t a = unlisted4(&s);

			if (tries > 1000 * TRAFFIC_UNLISTED)
				fail_msg("filter %zu: %zu Bloom positives in %zu "
					 "unlisted addresses", i, pos_found[i], tries);
			if (bg_filter_test4(f->bloom, htonl(a))) {
				t.unlisted[t.nunlisted++] = a;
				pos_found[i]++;
			}
		}
	}
	snapshot_drop(f);

	assert_int_equal(pthread_create(&th, NULL, traffic_fn, &t), 0);
	for (swaps = 0; swaps < TRAFFIC_SWAPS; swaps++) {
		size_t r0 = atomic_load(&t.runs);

		assert_int_equal(bg_filter_publish(f->filters,
						   fds[swaps % TRAFFIC_FILTERS]), 0);
		/* let some traffic see this filter before the next swap */
		while (atomic_load(&t.runs) < r0 + 50 && !atomic_load(&t.wrong))
			sched_yield();
	}
	atomic_store(&t.stop, 1);
	pthread_join(th, NULL);
	print_message("%zu swaps under %zu packets (%zu listed, %zu unlisted "
		      "Bloom positives): %zu wrong verdicts\n", swaps,
		      atomic_load(&t.runs), t.nlisted, t.nunlisted,
		      atomic_load(&t.wrong));
	for (i = 0; i < TRAFFIC_FILTERS; i++)
		close(fds[i]);
	free(t.listed);
	free(t.unlisted);
	assert_int_equal(atomic_load(&t.wrong), 0);
	assert_true(atomic_load(&t.runs) >= 50 * TRAFFIC_SWAPS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loose_plan),
		cmocka_unit_test(test_listed),
		cmocka_unit_test(test_unlisted),
		cmocka_unit_test(test_swaps),
		cmocka_unit_test(test_swap_under_traffic),
	};

	/* one program and one blocklist for all: the lists take a while */
	return cmocka_run_group_tests(tests, fx_setup, fx_teardown);
}
