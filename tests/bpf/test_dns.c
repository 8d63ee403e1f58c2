// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * BPF_PROG_TEST_RUN tests of the DNS query program (bloomgate_dns in
 * bpf/bloomgate.bpf.c, parser in bpf/dns.h, name keys in bloomgate/dns.h).
 *
 * The filter is built here from name entries (the builder only knows
 * address lists so far): the keys are hashed with the userspace
 * bg_name_hashes(), so every match through the program is also a check
 * that the userspace and datapath hashes agree. Each run is checked against
 * the verdict, the delta of EVERY counter (only dns_* may move) and the
 * output bytes (unchanged). Expected probe counts come from a userspace
 * model of the probe order over the same filter bits, and the model's
 * verdict must equal what the entries say (no false positive in the way).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bloomgate/abi.h"
#include "bloomgate/bloom.h"
#include "bloomgate/dns.h"
#include "domains.h"
#include "filter.h"
#include "lists.h"
#include "state.h"

#include "pktgen.h"
#include "bloomgate.skel.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SEED 0x5eed5eed12345678ULL
#define FUNC_FPR 1e-6

#define BG__NAME(name, str) str,
static const char *const CNT_NAMES[] = { BG_COUNTERS(BG__NAME) };
#undef BG__NAME

/* ---- Entries ------------------------------------------------------------- */

enum { E_EXACT = 1, E_SUBS = 2, E_TREE = 3 };

struct entry {
	const char *name;
	int kind; /* E_* */
};

static char NAME255[256]; /* 4 labels, 255-byte wire form */
static char LABEL63[128]; /* "<63 x 'l'>.example.net" */
static char A127[256], B127[256], C127[256]; /* 127 one-letter labels */
static char B10[32], C11[32]; /* 10 and 11 labels */

static void repeat_labels(char *out, char c, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		out[2 * i] = c;
		out[2 * i + 1] = i == n - 1 ? 0 : '.';
	}
}

static void init_names(void)
{
	size_t o = 0;
	int i, j;

	for (i = 0; i < 4; i++) {
		int len = i < 3 ? 63 : 61; /* 3 * 64 + 62 + root = 255 */

		for (j = 0; j < len; j++)
			NAME255[o++] = (char)('a' + (i * 7 + j) % 26);
		NAME255[o++] = i < 3 ? '.' : 0;
	}
	memset(LABEL63, 'l', 63);
	strcpy(LABEL63 + 63, ".example.net");
	repeat_labels(A127, 'a', 127);
	repeat_labels(B127, 'b', 127);
	repeat_labels(C127, 'c', 127);
	repeat_labels(B10, 'b', 10);
	repeat_labels(C11, 'c', 11);
}

static struct entry ENTRIES[] = {
	{ "ads.example.com", E_EXACT },
	{ "tracker.net", E_SUBS },
	{ "evil.org", E_TREE },
	{ NAME255, E_EXACT },
	{ LABEL63, E_EXACT },
	{ A127, E_EXACT },
	{ B10, E_SUBS },
	{ C11, E_SUBS }, /* more labels than probed: never matches */
};

/* ---- Fixture ------------------------------------------------------------- */

struct fx {
	struct bloomgate *skel;
	int prog, filters, stats;
	void *mem; /* the published filter, mapped read-only */
	size_t len;
};

static __u8 CFG_DST = BG_MATCH_DST, CFG_SRC = BG_MATCH_SRC,
	    CFG_BOTH = BG_MATCH_BOTH;

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

/* Builds the filter of entries' names with the loader's own builder
 * (bg_filter_plan + bg_filter_create, as `bloomgate load` does), publishes
 * it, and keeps a read-only mapping in f for the model. */
static void publish_names(struct fx *f, const struct entry *e, size_t ne)
{
	static const __u8 kinds[] = { [E_EXACT] = BG_NAME_EXACT,
				      [E_SUBS] = BG_NAME_SUBS,
				      [E_TREE] = BG_NAME_TREE };
	struct bg_filter_params p;
	struct bg_names names;
	struct bg_list l;
	size_t i, nkeys = 0, deep = 0;
	int fd;

	memset(&names, 0, sizeof(names));
	names.v = calloc(ne, sizeof(*names.v));
	assert_non_null(names.v);
	for (i = 0; i < ne; i++) {
		const char *c;
		int labels = 1;

		for (c = e[i].name; *c; c++)
			labels += *c == '.';
		names.v[i].name = (char *)e[i].name;
		names.v[i].kind = kinds[e[i].kind];
		/* subdomain keys deeper than the datapath probes are left out */
		if (e[i].kind & E_SUBS && labels > BG_DNS_SUFFIX_MAX)
			deep++;
		else if (e[i].kind == E_TREE)
			nkeys++;
		if (e[i].kind & E_EXACT || !(labels > BG_DNS_SUFFIX_MAX))
			nkeys++;
	}
	names.n = ne;
	bg_list_init(&l);
	l.names = &names;
	assert_int_equal(bg_filter_plan(&l, NULL, FUNC_FPR, &p), 0);
	assert_int_equal(p.name_keys, nkeys);
	assert_int_equal(p.names_too_deep, deep);
	fd = bg_filter_create(&p, SEED, &l, NULL);
	assert_true(fd >= 0);
	free(names.v);
	assert_int_equal(bg_filter_publish(f->filters, fd), 0);
	close(fd);
	f->len = page_round(p.bytes);
	f->mem = mmap(NULL, f->len, PROT_READ, MAP_SHARED,
		      bpf_map_get_fd_by_id(bg_filter_current_id(f->filters)), 0);
	assert_true(f->mem != MAP_FAILED);
	assert_true(((const struct bg_filter_header *)f->mem)->flags & BG_FILTER_F_NAMES);
	assert_int_equal(((const struct bg_filter_header *)f->mem)->entries, nkeys);
}

static int fx_setup(void **state)
{
	const __u8 *match = *state;
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	init_names();
	f->skel = bloomgate__open();
	assert_non_null(f->skel);
	f->skel->rodata->cfg_match = *match;
	assert_int_equal(bloomgate__load(f->skel), 0);
	f->prog = bpf_program__fd(f->skel->progs.bloomgate_dns);
	f->filters = bpf_map__fd(f->skel->maps.bg_filters);
	f->stats = bpf_map__fd(f->skel->maps.bg_stats);
	publish_names(f, ENTRIES, ARRAY_SIZE(ENTRIES));
	*state = f;
	return 0;
}

static int fx_setup_nofilter(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->skel = bloomgate__open();
	assert_non_null(f->skel);
	assert_int_equal(bloomgate__load(f->skel), 0);
	f->prog = bpf_program__fd(f->skel->progs.bloomgate_dns);
	f->filters = bpf_map__fd(f->skel->maps.bg_filters);
	f->stats = bpf_map__fd(f->skel->maps.bg_stats);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	if (f->mem)
		munmap(f->mem, f->len);
	bloomgate__destroy(f->skel);
	free(f);
	return 0;
}

/* ---- Model: the probe order of bloomgate_dns over the same bits ---------- */

static int has_key(const struct fx *f, __u32 kind, __u64 s)
{
	const struct bg_filter_header *h = f->mem;
	__u64 k = bg_name_key_hash(kind, s, h->seed);
	const struct bg_block *b = (const struct bg_block *)f->mem + 1 +
				   bg_bloom_block(k, h->nblocks);

	return bg_bloom_test(b, k, h->k);
}

static int model(const struct fx *f, const char *name, int *probes)
{
	__u64 suf[BG_DNS_LABELS_MAX + 1];
	int n, i;

	assert_int_equal(bg_name_hashes(name, SEED, suf, &n), 0);
	*probes = 1;
	if (has_key(f, BG_KEY_NAME_EXACT, suf[0]))
		return 1;
	for (i = 1; i <= BG_DNS_SUFFIX_MAX && i < n; i++) {
		(*probes)++;
		if (has_key(f, BG_KEY_NAME_SUBS, suf[n - i]))
			return 1;
	}
	return 0;
}

/* ---- Packets --------------------------------------------------------------- */

struct dnsq {
	__u16 flags; /* host order; default RD */
	__u16 qd, an, ns, ar;
	const __u8 *wire; /* raw QNAME bytes, or NULL: from name */
	size_t wire_len;
	const char *name; /* dotted, converted label by label (no checks) */
	int edns; /* append an OPT record (ARCOUNT is set to 1) */
	int no_qtail; /* leave out QTYPE/QCLASS */
};

/* Dotted name to wire form, without validation (so bad names can be
 * built); "" or "." is the root. Returns the length. */
static size_t to_wire(const char *name, __u8 *out)
{
	size_t o = 0;

	while (*name && strcmp(name, ".")) {
		const char *d = strchr(name, '.');
		size_t len = d ? (size_t)(d - name) : strlen(name);

		out[o++] = (__u8)len;
		memcpy(out + o, name, len);
		o += len;
		name += len + (d ? 1 : 0);
	}
	out[o++] = 0;
	return o;
}

static size_t dns_write(__u8 *b, const struct dnsq *q)
{
	size_t o = 12;
	__u16 ar = q->edns ? 1 : q->ar;

	b[0] = 0x12;
	b[1] = 0x34;
	b[2] = q->flags >> 8;
	b[3] = q->flags & 0xff;
	b[4] = q->qd >> 8;
	b[5] = q->qd & 0xff;
	b[6] = q->an >> 8;
	b[7] = q->an & 0xff;
	b[8] = q->ns >> 8;
	b[9] = q->ns & 0xff;
	b[10] = ar >> 8;
	b[11] = ar & 0xff;
	if (q->wire) {
		memcpy(b + o, q->wire, q->wire_len);
		o += q->wire_len;
	} else {
		o += to_wire(q->name, b + o);
	}
	if (!q->no_qtail) {
		static const __u8 tail[4] = { 0, 1, 0, 1 }; /* A, IN */

		memcpy(b + o, tail, 4);
		o += 4;
	}
	if (q->edns) {
		static const __u8 opt[11] = { 0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0 };

		memcpy(b + o, opt, sizeof(opt));
		o += sizeof(opt);
	}
	return o;
}

struct net {
	int af, vlans;
};

static const struct net NETS[] = {
	{ AF_INET, 0 },	 { AF_INET, 1 },  { AF_INET, 2 },
	{ AF_INET6, 0 }, { AF_INET6, 1 }, { AF_INET6, 2 },
};

static const char *net_name(const struct net *n)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "%s/%d vlans", n->af == AF_INET ? "ipv4" : "ipv6",
		 n->vlans);
	return buf;
}

/* A UDP packet to dport carrying the DNS message q. */
static void build_dns(struct pkt *p, const struct net *n, __u16 dport,
		      const struct dnsq *q)
{
	__u8 msg[1024];
	size_t len = dns_write(msg, q);
	struct pkt_spec s = {
		.family = n->af,
		.vlans = n->vlans,
		.src = n->af == AF_INET ? "192.0.2.10" : "2001:db8::10",
		.dst = n->af == AF_INET ? "198.51.100.53" : "2001:db8::53",
		.sport = 40000,
		.dport = dport,
		.payload = len,
	};

	assert_int_equal(pkt_build(p, &s), 0);
	memcpy(p->buf + p->l4 + 8, msg, len);
}

static struct dnsq Q(const char *name)
{
	return (struct dnsq){ .flags = 0x0100, .qd = 1, .name = name };
}

/* ---- Running ------------------------------------------------------------- */

struct exp {
	__u32 verdict;
	__u64 cnt[BG_CNT__COUNT];
};

static struct exp e_pass(void)
{
	return (struct exp){ .verdict = XDP_PASS };
}

static struct exp e_reason(int cnt)
{
	struct exp e = e_pass();

	e.cnt[cnt] = 1;
	return e;
}

static void run(struct fx *f, const void *data, size_t len, const struct exp *e,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void run(struct fx *f, const void *data, size_t len, const struct exp *e,
		const char *fmt, ...)
{
	static __u8 out[PKT_MAX + 256];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = data,
		    .data_size_in = (__u32)len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);
	struct bg_counters before, after;
	char what[512];
	va_list ap;
	int err, i;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	assert_int_equal(bg_counters_read(f->stats, &before), 0);
	err = bpf_prog_test_run_opts(f->prog, &o);
	assert_int_equal(bg_counters_read(f->stats, &after), 0);
	if (err)
		fail_msg("%s: BPF_PROG_TEST_RUN: %s", what, strerror(errno));
	if (o.retval != e->verdict)
		fail_msg("%s: verdict %u, expected %u", what, o.retval, e->verdict);
	for (i = 0; i < BG_CNT_SLOTS; i++) {
		__u64 want = i < BG_CNT__COUNT ? e->cnt[i] : 0;
		__u64 got = after.cnt[i] - before.cnt[i];

		if (got != want)
			fail_msg("%s: counter %s moved by %llu, expected %llu", what,
				 i < BG_CNT__COUNT ? CNT_NAMES[i] : "(slot)",
				 (unsigned long long)got, (unsigned long long)want);
	}
	for (i = 0; i < BG_MAL_SLOTS; i++)
		if (after.malformed[i] != before.malformed[i])
			fail_msg("%s: malformed reason %d moved", what, i);
	if (o.data_size_out != len || memcmp(out, data, len))
		fail_msg("%s: output differs from the input", what);
}

/* Query for name through every network shape; listed: what the entries
 * say (the model must agree, or a false positive is in the way). */
static void expect_name(struct fx *f, const char *name, int listed)
{
	size_t i;
	int probes, m;

	m = model(f, name, &probes);
	if (m != listed)
		fail_msg("model: %s answers %d, entries say %d (seed collision?)",
			 name, m, listed);
	for (i = 0; i < ARRAY_SIZE(NETS); i++) {
		struct dnsq q = Q(name);
		struct exp e = e_pass();
		struct pkt p;
		int edns;

		e.cnt[BG_CNT_DNS_QUERIES] = 1;
		e.cnt[BG_CNT_DNS_PROBES] = (__u64)probes;
		e.cnt[listed ? BG_CNT_DNS_POSITIVES : BG_CNT_DNS_NEGATIVES] = 1;
		e.verdict = listed ? XDP_DROP : XDP_PASS;
		for (edns = 0; edns < 2; edns++) {
			q.edns = edns;
			build_dns(&p, &NETS[i], 53, &q);
			run(f, p.buf, p.len, &e, "%s %s%s", name, net_name(&NETS[i]),
			    edns ? " edns" : "");
		}
	}
}

/* ---- Tests ----------------------------------------------------------------- */

static void test_verifier_stats(void **state)
{
	struct fx *f = *state;
	const char *progs[] = { "bloomgate_xdp", "bloomgate_dns" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(progs); i++) {
		struct bpf_program *pr =
			bpf_object__find_program_by_name(f->skel->obj, progs[i]);
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		assert_non_null(pr);
		memset(&info, 0, sizeof(info));
		assert_int_equal(bpf_obj_get_info_by_fd(bpf_program__fd(pr), &info,
							&len), 0);
		print_message("# cfg_match %u: %s verified %u insns\n",
			      f->skel->rodata->cfg_match, progs[i],
			      info.verified_insns);
		assert_true(info.verified_insns > 0 && info.verified_insns < 1000000);
	}
}

static void test_exact_vs_subdomains(void **state)
{
	struct fx *f = *state;

	/* exact entry: the name only */
	expect_name(f, "ads.example.com", 1);
	expect_name(f, "x.ads.example.com", 0);
	expect_name(f, "example.com", 0);
	expect_name(f, "com", 0);
	/* subdomains-only entry: proper subdomains only */
	expect_name(f, "tracker.net", 0);
	expect_name(f, "a.tracker.net", 1);
	expect_name(f, "b.c.tracker.net", 1);
	expect_name(f, "nottracker.net", 0);
	/* name-and-subdomains entry: both keys */
	expect_name(f, "evil.org", 1);
	expect_name(f, "www.evil.org", 1);
	expect_name(f, "a.b.c.evil.org", 1);
	expect_name(f, "notevil.org", 0);
	expect_name(f, "evil.org.example", 0);
}

static void test_mixed_case(void **state)
{
	struct fx *f = *state;

	expect_name(f, "ADS.Example.COM", 1);
	expect_name(f, "Www.EVIL.org", 1);
	expect_name(f, "A.TRACKER.NET", 1);
	expect_name(f, "Example.Com", 0);
}

static void test_long_names(void **state)
{
	struct fx *f = *state;
	char buf[300];
	__u8 w[300];

	assert_int_equal(to_wire(NAME255, w), 255);
	expect_name(f, NAME255, 1); /* longest legal name, exact */
	expect_name(f, LABEL63, 1); /* a 63-byte label */
	expect_name(f, A127, 1); /* 127 labels */
	snprintf(buf, sizeof(buf), "x.%s", LABEL63);
	expect_name(f, buf, 0);
	/* a 10-label subdomain entry matches under 117 more labels */
	expect_name(f, B127, 1);
	snprintf(buf, sizeof(buf), "x.%s", B10);
	expect_name(f, buf, 1);
	expect_name(f, B10, 0);
	/* an 11-label suffix is never probed (the loader must refuse it) */
	snprintf(buf, sizeof(buf), "x.%s", C11);
	expect_name(f, buf, 0);
	expect_name(f, C127, 0);
}

/* A malformed or non-query message to port 53: counted, passed. */
static void expect_reason(struct fx *f, const struct dnsq *q, int cnt,
			  const char *what)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(NETS); i++) {
		struct exp e = e_reason(cnt);
		struct pkt p;

		build_dns(&p, &NETS[i], 53, q);
		run(f, p.buf, p.len, &e, "%s %s", what, net_name(&NETS[i]));
	}
}

static void test_bad_names(void **state)
{
	struct fx *f = *state;
	char name[400];
	__u8 w[400];
	struct dnsq q;
	size_t n;

	/* 64-byte label: its length byte has the reserved type 01 */
	memset(name, 'x', 64);
	strcpy(name + 64, ".com");
	q = Q(name);
	expect_reason(f, &q, BG_CNT_DNS_BAD_LABEL, "64-byte label");

	/* 257-byte wire form: "q." and the longest legal name */
	snprintf(name, sizeof(name), "q.%s", NAME255);
	n = to_wire(name, w);
	assert_int_equal(n, 257);
	q = Q(name);
	expect_reason(f, &q, BG_CNT_DNS_NAME_TOO_LONG, "257-byte name");
	/* exactly 256 bytes */
	{
		__u8 w2[300];
		size_t o = 0;

		w2[o++] = 1;
		w2[o++] = 'z';
		/* labels 63, 63, 63, 60 + "z": 2 + 3*64 + 61 + 1 = 256 */
		for (int l = 0; l < 4; l++) {
			int len = l < 3 ? 63 : 60;

			w2[o++] = (__u8)len;
			memset(w2 + o, 'k', (size_t)len);
			o += (size_t)len;
		}
		w2[o++] = 0;
		assert_int_equal(o, 256);
		q = (struct dnsq){ .flags = 0x0100, .qd = 1, .wire = w2,
				   .wire_len = o };
		expect_reason(f, &q, BG_CNT_DNS_NAME_TOO_LONG, "256-byte name");
		/* the same without the "z": 254 bytes, a legal name */
		q.wire = w2 + 2;
		q.wire_len = o - 2;
		{
			struct exp e = e_pass();
			struct pkt p;

			e.cnt[BG_CNT_DNS_QUERIES] = 1;
			e.cnt[BG_CNT_DNS_NEGATIVES] = 1;
			e.cnt[BG_CNT_DNS_PROBES] = 4;
			build_dns(&p, &NETS[0], 53, &q);
			run(f, p.buf, p.len, &e, "254-byte name");
		}
	}

	/* compression pointer, first and after a label */
	{
		static const __u8 ptr0[] = { 0xc0, 0x0c };
		static const __u8 ptr1[] = { 3, 'w', 'w', 'w', 0xc0, 0x0c };
		static const __u8 r01[] = { 3, 'w', 'w', 'w', 0x41, 'a', 0 };
		static const __u8 r10[] = { 0x80, 0 };

		q = (struct dnsq){ .flags = 0x0100, .qd = 1, .wire = ptr0,
				   .wire_len = sizeof(ptr0) };
		expect_reason(f, &q, BG_CNT_DNS_BAD_LABEL, "pointer");
		q.wire = ptr1;
		q.wire_len = sizeof(ptr1);
		expect_reason(f, &q, BG_CNT_DNS_BAD_LABEL, "label + pointer");
		q.wire = r01;
		q.wire_len = sizeof(r01);
		expect_reason(f, &q, BG_CNT_DNS_BAD_LABEL, "type 01");
		q.wire = r10;
		q.wire_len = sizeof(r10);
		expect_reason(f, &q, BG_CNT_DNS_BAD_LABEL, "type 10");
	}
}

static void test_header(void **state)
{
	struct fx *f = *state;
	static const __u16 opcodes[] = { 1, 2, 4, 5, 15 };
	struct dnsq q;
	size_t i;

	q = Q("ads.example.com");
	q.qd = 0;
	expect_reason(f, &q, BG_CNT_DNS_QDCOUNT, "qdcount 0");
	q.qd = 2;
	expect_reason(f, &q, BG_CNT_DNS_QDCOUNT, "qdcount 2");
	q.qd = 256;
	expect_reason(f, &q, BG_CNT_DNS_QDCOUNT, "qdcount 256");
	q = Q("ads.example.com");
	q.flags = 0x8180; /* a response */
	expect_reason(f, &q, BG_CNT_DNS_RESPONSE, "response");
	q.flags = 0x8000 | 5 << 11; /* a response to an UPDATE */
	expect_reason(f, &q, BG_CNT_DNS_RESPONSE, "update response");
	for (i = 0; i < ARRAY_SIZE(opcodes); i++) {
		char what[32];

		q.flags = (__u16)(opcodes[i] << 11);
		snprintf(what, sizeof(what), "opcode %u", opcodes[i]);
		expect_reason(f, &q, BG_CNT_DNS_OPCODE, what);
	}
	/* other header bits and counts do not matter */
	q = Q("ads.example.com");
	q.flags = 0x0130; /* RD, AD, CD */
	q.an = 3;
	q.ns = 2;
	q.ar = 7;
	{
		struct exp e = e_pass();
		struct pkt p;

		e.verdict = XDP_DROP;
		e.cnt[BG_CNT_DNS_QUERIES] = 1;
		e.cnt[BG_CNT_DNS_PROBES] = 1;
		e.cnt[BG_CNT_DNS_POSITIVES] = 1;
		build_dns(&p, &NETS[0], 53, &q);
		run(f, p.buf, p.len, &e, "header bits");
	}
	/* no QTYPE/QCLASS */
	q = Q("ads.example.com");
	q.no_qtail = 1;
	expect_reason(f, &q, BG_CNT_DNS_TRUNCATED, "no qtype");
}

/* Every cut of a valid query (with EDNS): before the whole UDP header it
 * is not DNS (no counter); after it the UDP length says more than the frame
 * holds: dns_truncated. */
static void test_truncation(void **state)
{
	struct fx *f = *state;
	size_t i, cut;

	for (i = 0; i < ARRAY_SIZE(NETS); i++) {
		struct dnsq q = Q("www.evil.org");
		struct pkt p;

		q.edns = 1;
		build_dns(&p, &NETS[i], 53, &q);
		for (cut = ETH_HLEN; cut < p.len; cut++) {
			struct exp e = cut < p.l4 + 8 ? e_pass() :
							e_reason(BG_CNT_DNS_TRUNCATED);

			run(f, p.buf, cut, &e, "%s cut at %zu of %zu",
			    net_name(&NETS[i]), cut, p.len);
		}
	}
}

/* UDP length shorter than the frame (Ethernet padding): the message ends
 * where UDP says. */
static void test_udp_length(void **state)
{
	struct fx *f = *state;
	struct dnsq q = Q("www.evil.org");
	struct pkt p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(NETS); i++) {
		struct exp e = e_pass();
		__u16 ulen;

		build_dns(&p, &NETS[i], 53, &q);
		memset(p.buf + p.len, 0, 40); /* padding */
		e.verdict = XDP_DROP;
		e.cnt[BG_CNT_DNS_QUERIES] = 1;
		e.cnt[BG_CNT_DNS_PROBES] = 3;
		e.cnt[BG_CNT_DNS_POSITIVES] = 1;
		run(f, p.buf, p.len + 40, &e, "padded %s", net_name(&NETS[i]));
		/* UDP length cutting QCLASS */
		ulen = (__u16)(p.len - p.l4 - 1);
		p.buf[p.l4 + 4] = ulen >> 8;
		p.buf[p.l4 + 5] = ulen & 0xff;
		e = e_reason(BG_CNT_DNS_TRUNCATED);
		run(f, p.buf, p.len, &e, "udp len short %s", net_name(&NETS[i]));
		/* UDP length below the DNS header, and below the UDP header */
		p.buf[p.l4 + 4] = 0;
		p.buf[p.l4 + 5] = 19;
		run(f, p.buf, p.len, &e, "udp len 19 %s", net_name(&NETS[i]));
		p.buf[p.l4 + 5] = 3;
		run(f, p.buf, p.len, &e, "udp len 3 %s", net_name(&NETS[i]));
	}
}

static void test_not_dns(void **state)
{
	struct fx *f = *state;
	struct dnsq q = Q("ads.example.com");
	struct exp e = e_pass();
	struct pkt p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(NETS); i++) {
		const struct net *n = &NETS[i];

		build_dns(&p, n, 54, &q);
		run(f, p.buf, p.len, &e, "port 54 %s", net_name(n));
		build_dns(&p, n, 5353, &q);
		run(f, p.buf, p.len, &e, "port 5353 %s", net_name(n));
		/* from port 53 to a client port: a response direction */
		build_dns(&p, n, 40001, &q);
		p.buf[p.l4] = 0;
		p.buf[p.l4 + 1] = 53;
		run(f, p.buf, p.len, &e, "sport 53 %s", net_name(n));
		/* TCP to 53 (the bytes are UDP-shaped; only the protocol) */
		build_dns(&p, n, 53, &q);
		if (n->af == AF_INET)
			p.buf[p.l3 + 9] = IPPROTO_TCP;
		else
			p.buf[p.l3 + 6] = IPPROTO_TCP;
		run(f, p.buf, p.len, &e, "tcp %s", net_name(n));
	}
	/* a non-first IPv4 fragment to port 53: no UDP header */
	{
		struct pkt_spec s = { .family = AF_INET, .src = "192.0.2.10",
				      .dst = "198.51.100.53", .dport = 53,
				      .frag_off = 100, .payload = 64 };

		assert_int_equal(pkt_build(&p, &s), 0);
		run(f, p.buf, p.len, &e, "ipv4 fragment");
	}
	/* not IP at all */
	{
		struct pkt_spec s = { .ethertype = 0x0806, .payload = 46 };

		assert_int_equal(pkt_build(&p, &s), 0);
		run(f, p.buf, p.len, &e, "arp");
	}
}

static void test_root_query(void **state)
{
	struct fx *f = *state;
	struct dnsq q = Q(".");
	struct exp e = e_pass();
	struct pkt p;

	e.cnt[BG_CNT_DNS_QUERIES] = 1;
	build_dns(&p, &NETS[0], 53, &q);
	run(f, p.buf, p.len, &e, "root");
}

static void test_no_filter(void **state)
{
	struct fx *f = *state;
	struct dnsq q = Q("ads.example.com");
	struct exp e = e_pass();
	struct pkt p;

	e.cnt[BG_CNT_DNS_QUERIES] = 1;
	build_dns(&p, &NETS[0], 53, &q);
	run(f, p.buf, p.len, &e, "no filter");
	q.flags = 0x8180;
	build_dns(&p, &NETS[3], 53, &q);
	e = e_reason(BG_CNT_DNS_RESPONSE);
	run(f, p.buf, p.len, &e, "no filter response");
}

/* Userspace hashes: case folded, legal bounds enforced. */
static void test_name_hashes(void **state)
{
	__u64 a[BG_DNS_LABELS_MAX + 1], b[BG_DNS_LABELS_MAX + 1];
	char big[300];
	int na, nb;

	(void)state;
	init_names();
	assert_int_equal(bg_name_hashes("Ads.Example.COM", 1, a, &na), 0);
	assert_int_equal(bg_name_hashes("ads.example.com", 1, b, &nb), 0);
	assert_int_equal(na, 3);
	assert_int_equal(nb, 3);
	assert_memory_equal(a, b, 4 * sizeof(a[0]));
	assert_int_equal(a[3], 0);
	assert_int_equal(bg_name_hashes("example.com", 1, b, &nb), 0);
	assert_int_equal(b[0], a[1]); /* a suffix hashes like the name */
	assert_int_not_equal(a[0], a[1]);
	assert_int_equal(bg_name_hashes(NAME255, 1, a, &na), 0);
	assert_int_equal(bg_name_hashes(A127, 1, a, &na), 0);
	assert_int_equal(na, 127);
	assert_int_equal(bg_name_hashes("", 1, a, &na), -1);
	assert_int_equal(bg_name_hashes("a..b", 1, a, &na), -1);
	assert_int_equal(bg_name_hashes("a.b.", 1, a, &na), -1);
	memset(big, 'x', 64);
	big[64] = 0;
	assert_int_equal(bg_name_hashes(big, 1, a, &na), -1);
	snprintf(big, sizeof(big), "x%s", NAME255); /* a 64-byte label */
	assert_int_equal(bg_name_hashes(big, 1, a, &na), -1);
	snprintf(big, sizeof(big), "x.%s", NAME255); /* 257 bytes */
	assert_int_equal(bg_name_hashes(big, 1, a, &na), -1);
	snprintf(big, sizeof(big), "x.%s", A127); /* 128 labels */
	assert_int_equal(bg_name_hashes(big, 1, a, &na), -1);
	/* the two key kinds of one name differ */
	assert_int_not_equal(bg_name_key_hash(BG_KEY_NAME_EXACT, a[0], 1),
			     bg_name_key_hash(BG_KEY_NAME_SUBS, a[0], 1));
}


/* ---- Fuzz: mutated queries against a reference parser ---------------------- */

/* Reference: the rules of bpf/dns.h written over a plain buffer. Returns a
 * BG_CNT_DNS_* reason, or 0 with the suffix hashes in suf and n labels. */
static int ref_parse(const __u8 *b, size_t len, size_t l4, __u64 seed,
		     __u64 *suf, int *n)
{
	__u64 lh[BG_DNS_LABELS_MAX];
	size_t ulen, mlen, pos = 12, wire = 0;
	const __u8 *m = b + l4 + 8;
	int i;

	ulen = (size_t)b[l4 + 4] << 8 | b[l4 + 5];
	if (ulen < 20 || l4 + ulen > len)
		return BG_CNT_DNS_TRUNCATED;
	mlen = ulen - 8;
	if (m[2] & 0x80)
		return BG_CNT_DNS_RESPONSE;
	if ((m[2] >> 3) & 0xf)
		return BG_CNT_DNS_OPCODE;
	if (m[4] || m[5] != 1)
		return BG_CNT_DNS_QDCOUNT;
	*n = 0;
	for (;;) {
		__u8 buf[BG_DNS_LABEL_BUF] = { 0 };
		size_t l, j;

		if (pos >= mlen)
			return BG_CNT_DNS_TRUNCATED;
		l = m[pos];
		if (l >= 64)
			return BG_CNT_DNS_BAD_LABEL;
		if (!l) {
			pos++;
			break;
		}
		if (wire + l + 2 > BG_DNS_NAME_MAX)
			return BG_CNT_DNS_NAME_TOO_LONG;
		if (pos + 1 + l > mlen)
			return BG_CNT_DNS_TRUNCATED;
		buf[0] = (__u8)l;
		for (j = 0; j < l; j++) {
			__u8 c = m[pos + 1 + j];

			buf[1 + j] = c >= 'A' && c <= 'Z' ? (__u8)(c + 32) : c;
		}
		lh[(*n)++] = bg_hash64(buf, sizeof(buf), seed);
		wire += 1 + l;
		pos += 1 + l;
	}
	if (pos + 4 > mlen)
		return BG_CNT_DNS_TRUNCATED;
	suf[*n] = 0;
	for (i = *n - 1; i >= 0; i--)
		suf[i] = bg_dns_suffix_hash(lh[i], suf[i + 1], seed);
	return 0;
}

static __u64 rng_state = 0x9e3779b97f4a7c15ULL;

static __u32 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (__u32)(rng_state >> 16);
}

static void test_fuzz(void **state)
{
	static const char *const names[] = {
		"ads.example.com", "x.ads.example.com", "a.tracker.net",
		"tracker.net", "evil.org", "www.evil.org", "example.com", ".",
		"q.b.b.b.b.b.b.b.b.b.b", "some.host.example.org",
	};
	struct fx *f = *state;
	__u64 reasons[BG_CNT__COUNT] = { 0 };
	__u64 verdicts[3] = { 0 };
	int it, i;

	for (it = 0; it < 6000; it++) {
		const struct net *nt = &NETS[rnd() % ARRAY_SIZE(NETS)];
		char name[300];
		struct dnsq q;
		struct exp e = e_pass();
		__u64 suf[BG_DNS_LABELS_MAX + 1];
		struct pkt p;
		size_t len, dns_len;
		int nm = (int)(rnd() % 4), r, nl;

		snprintf(name, sizeof(name), "%s",
			 it % 7 == 0 ? A127 : it % 11 == 0 ? NAME255 :
			 names[rnd() % ARRAY_SIZE(names)]);
		for (i = 0; name[i]; i++)
			if (rnd() % 4 == 0 && name[i] >= 'a' && name[i] <= 'z')
				name[i] = (char)(name[i] - 32);
		q = Q(name);
		q.edns = (int)(rnd() % 2);
		build_dns(&p, nt, 53, &q);
		len = p.len;
		dns_len = p.len - p.l4 - 8;
		for (i = 0; i < nm; i++) {
			size_t at = p.l4 + 8 + rnd() % dns_len;
			static const __u8 special[] = { 0, 1, 0x3f, 0x40, 0x80,
							0xc0, 0xff, 'A' };

			switch (rnd() % 6) {
			case 0: /* a random byte of the message */
				p.buf[at] = (__u8)rnd();
				break;
			case 1: /* a label-length-like byte */
				p.buf[at] = special[rnd() % sizeof(special)];
				break;
			case 2: /* the header flags and counts */
				p.buf[p.l4 + 8 + 2 + rnd() % 4] = (__u8)rnd();
				break;
			case 3: { /* the UDP length */
				__u16 ul = (__u16)((size_t)p.buf[p.l4 + 4] << 8 |
						   p.buf[p.l4 + 5]);

				ul = (__u16)(ul + (int)(rnd() % 41) - 20);
				p.buf[p.l4 + 4] = ul >> 8;
				p.buf[p.l4 + 5] = ul & 0xff;
				break;
			}
			case 4: /* cut the frame (not below the UDP header) */
				len = p.l4 + 8 + rnd() % (len - p.l4 - 8 + 1);
				break;
			default: /* padding after the message */
				memset(p.buf + len, 0, 16);
				len += rnd() % 17;
				break;
			}
		}
		r = ref_parse(p.buf, len, p.l4, SEED, suf, &nl);
		if (r) {
			e = e_reason(r);
		} else {
			int probes = 0, listed = 0;

			e.cnt[BG_CNT_DNS_QUERIES] = 1;
			if (nl) {
				probes = 1;
				listed = has_key(f, BG_KEY_NAME_EXACT, suf[0]);
				for (i = 1; i <= BG_DNS_SUFFIX_MAX && i < nl && !listed;
				     i++) {
					probes++;
					listed = has_key(f, BG_KEY_NAME_SUBS,
							 suf[nl - i]);
				}
				e.cnt[BG_CNT_DNS_PROBES] = (__u64)probes;
				e.cnt[listed ? BG_CNT_DNS_POSITIVES :
					       BG_CNT_DNS_NEGATIVES] = 1;
				e.verdict = listed ? XDP_DROP : XDP_PASS;
			}
		}
		run(f, p.buf, len, &e, "fuzz %d (%s, %s, %d mutations)", it,
		    name, net_name(nt), nm);
		reasons[r]++;
		verdicts[e.verdict]++;
	}
	print_message("# fuzz: %llu dropped, %llu passed; queries %llu",
		      (unsigned long long)verdicts[XDP_DROP],
		      (unsigned long long)verdicts[XDP_PASS],
		      (unsigned long long)reasons[0]);
	for (i = BG_CNT_DNS_RESPONSE; i <= BG_CNT_DNS_TRUNCATED; i++)
		print_message(", %s %llu", CNT_NAMES[i],
			      (unsigned long long)reasons[i]);
	print_message("\n");
	assert_true(verdicts[XDP_DROP] > 0 && verdicts[XDP_PASS] > 0);
	for (i = BG_CNT_DNS_RESPONSE; i <= BG_CNT_DNS_TRUNCATED; i++)
		if (!reasons[i])
			fail_msg("fuzz never produced %s", CNT_NAMES[i]);
}

/* A filter without name keys (addresses only) is not probed for names:
 * its bits would answer at its false-positive rate. Then names again. */
static void test_address_only_filter(void **state)
{
	struct fx *f = *state;
	struct bg_filter_params p;
	struct bg_list l;
	struct dnsq q = Q("ads.example.com");
	struct exp e = e_pass();
	struct pkt pk;
	int fd;

	bg_list_init(&l);
	assert_int_equal(bg_list_parse_buf(&l, "t", "198.51.100.7\n", 13, NULL), 0);
	bg_list_finish(&l);
	assert_int_equal(bg_filter_plan(&l, NULL, FUNC_FPR, &p), 0);
	assert_int_equal(p.name_keys, 0);
	fd = bg_filter_create(&p, SEED, &l, NULL);
	assert_true(fd >= 0);
	assert_int_equal(bg_filter_publish(f->filters, fd), 0);
	close(fd);
	bg_list_free(&l);
	e.cnt[BG_CNT_DNS_QUERIES] = 1;
	build_dns(&pk, &NETS[0], 53, &q);
	run(f, pk.buf, pk.len, &e, "address-only filter");
}

#define T(fn, cfg) cmocka_unit_test_prestate_setup_teardown(fn, fx_setup, fx_teardown, &cfg)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_hashes),
		T(test_verifier_stats, CFG_DST),
		T(test_verifier_stats, CFG_SRC),
		T(test_verifier_stats, CFG_BOTH),
		T(test_exact_vs_subdomains, CFG_DST),
		T(test_exact_vs_subdomains, CFG_BOTH),
		T(test_mixed_case, CFG_SRC),
		T(test_long_names, CFG_DST),
		T(test_bad_names, CFG_DST),
		T(test_header, CFG_DST),
		T(test_truncation, CFG_DST),
		T(test_udp_length, CFG_DST),
		T(test_not_dns, CFG_DST),
		T(test_root_query, CFG_DST),
		T(test_fuzz, CFG_BOTH),
		T(test_address_only_filter, CFG_DST),
		cmocka_unit_test_setup_teardown(test_no_filter, fx_setup_nofilter,
						fx_teardown),
	};

	return cmocka_run_group_tests_name("dns", tests, NULL, NULL);
}
