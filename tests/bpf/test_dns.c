// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * BPF_PROG_TEST_RUN tests of the DNS path: bloomgate_dns (bpf/bloomgate.bpf.c;
 * parser bpf/dns.h, answers bpf/dns_reply.h, name keys bloomgate/dns.h), run
 * directly and through the tail call from bloomgate_xdp.
 *
 * Filters are built with the loader's own builder (bg_filter_plan +
 * bg_filter_create, as `bloomgate load` does) from name entries, so every
 * match through the program is also a check that the userspace and
 * datapath hashes agree. Expected probe counts come from a userspace model
 * of the probe order over the same filter bits (and of the allow table),
 * and the model must agree with what the entries say.
 *
 * Every run is checked against the verdict, the delta of EVERY counter,
 * the invariants (each packet counts exactly one of passed, dropped,
 * answered -- equal to packets when bloomgate_xdp ran -- and flagged <=
 * passed), the ring buffer events (= flagged - events_lost; name events
 * field by field) and the output bytes: unchanged unless answered. An
 * answer is checked field by field against the query it answers
 * (check_reply: Ethernet, VLAN tags, IP header with its checksum
 * recomputed, UDP with its checksum recomputed, DNS header, question, OPT
 * record) and byte for byte against a packet built here from the query's
 * description (expected_reply).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bloomgate/abi.h"
#include "bloomgate/bloom.h"
#include "bloomgate/dns.h"
#include "core/counters.h"
#include "core/domains.h"
#include "core/filter.h"
#include "core/mem_lookup.h"

#include "blocklist.h"
#include "core/lists.h"
#include "kern/attach.h"
#include "kern/pins.h"
#include "kern/swap.h"

#include "dns_ref.h"
#include "pktgen.h"
#include "bloomgate.skel.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SEED 0x5eed5eed12345678ULL
#define FUNC_FPR 1e-6

/* The answer's OPT record: UDP payload size (bpf/dns_reply.h). */
#define EDNS_SIZE 1232
#define RCODE_NXDOMAIN 3
#define RCODE_REFUSED 5

/* ---- Entries ------------------------------------------------------------- */

enum { E_EXACT = 1, E_SUBS = 2, E_TREE = 3 };

struct entry {
	const char *name;
	int kind; /* E_* */
	int allow; /* an allow rule */
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
	{ "ads.example.com", E_EXACT, 0 },
	{ "tracker.net", E_SUBS, 0 },
	{ "evil.org", E_TREE, 0 },
	{ NAME255, E_EXACT, 0 },
	{ LABEL63, E_EXACT, 0 },
	{ A127, E_EXACT, 0 },
	{ B10, E_SUBS, 0 },
	{ C11, E_SUBS, 0 }, /* more labels than probed: never matches */
};

/* Pi-hole precedence: ||blocked.test^ with allow rules under it. */
static struct entry ALLOW_BLOCK[] = {
	{ "blocked.test", E_TREE, 0 },
	{ "good.blocked.test", E_EXACT, 1 }, /* good.blocked.test only */
	{ "tree.blocked.test", E_TREE, 1 }, /* @@||tree.blocked.test^ */
	{ "subs.blocked.test", E_SUBS, 1 }, /* @@*.subs.blocked.test */
	{ "unblocked.test", E_TREE, 1 }, /* allowed, never blocked */
};

/* Listed addresses next to the names (F_MIXED). */
#define MIX4 "198.51.100.99"
#define MIX6 "2001:db8::99"

/* ---- Fixture ------------------------------------------------------------- */

enum { F_NAMES, F_MIXED, F_ALLOW_IN_BLOCK, F_ALLOW_LIST, F_NONE };

struct cfg {
	__u8 match, action, dns_action; /* 0: the program's default */
	__u16 ports[BG_DNS_PORTS_MAX]; /* all 0: the program's default */
	int filter; /* F_*, published at setup */
	int xdp; /* run through bloomgate_xdp (tail call) */
	int empty_progs; /* leave bg_progs empty */
};

static struct cfg C_DST = { .match = BG_MATCH_DST };
static struct cfg C_SRC = { .match = BG_MATCH_SRC };
static struct cfg C_BOTH = { .match = BG_MATCH_BOTH };
static struct cfg C_DROP = { .match = BG_MATCH_DST,
			     .dns_action = BG_DNS_ACTION_DROP };
static struct cfg C_FLAG = { .match = BG_MATCH_DST,
			     .dns_action = BG_DNS_ACTION_FLAG };
static struct cfg C_NXDOMAIN = { .match = BG_MATCH_DST,
				 .dns_action = BG_DNS_ACTION_NXDOMAIN };
static struct cfg C_REFUSED = { .match = BG_MATCH_DST,
				.dns_action = BG_DNS_ACTION_REFUSED };
static struct cfg C_XDP = { .match = BG_MATCH_DST, .xdp = 1 };
static struct cfg C_XDP_BOTH = { .match = BG_MATCH_BOTH, .xdp = 1 };
static struct cfg C_XDP_FLAG = { .match = BG_MATCH_SRC, .xdp = 1,
				 .dns_action = BG_DNS_ACTION_FLAG };
static struct cfg C_XDP_EMPTY = { .match = BG_MATCH_DST, .xdp = 1,
				  .empty_progs = 1 };
static struct cfg C_MIXED_DROP = { .match = BG_MATCH_DST,
				   .action = BG_ACTION_DROP, .xdp = 1,
				   .filter = F_MIXED };
static struct cfg C_MIXED_FLAG = { .match = BG_MATCH_BOTH,
				   .action = BG_ACTION_FLAG, .xdp = 1,
				   .filter = F_MIXED };
static struct cfg C_PORT5353 = { .match = BG_MATCH_DST, .ports = { 5353 } };
static struct cfg C_PORT5353_XDP = { .match = BG_MATCH_DST, .xdp = 1,
				     .ports = { 5353 } };
static struct cfg C_PORTS = { .match = BG_MATCH_DST,
			      .ports = { 53, 0, 0, 8053 } };
static struct cfg C_ALLOW_IN_BLOCK = { .match = BG_MATCH_DST,
				       .filter = F_ALLOW_IN_BLOCK };
static struct cfg C_ALLOW_LIST = { .match = BG_MATCH_DST, .xdp = 1,
				   .filter = F_ALLOW_LIST };
static struct cfg C_ALLOW_FLAG = { .match = BG_MATCH_DST,
				   .dns_action = BG_DNS_ACTION_FLAG,
				   .filter = F_ALLOW_IN_BLOCK };
static struct cfg C_NOFILTER = { .match = BG_MATCH_DST, .filter = F_NONE };
static struct cfg C_NOFILTER_XDP = { .match = BG_MATCH_DST, .xdp = 1,
				     .filter = F_NONE };

#define EV_MAX 8

struct fx {
	const struct cfg *cfg;
	struct bloomgate *skel;
	int dns, xdp, filters, stats, progs;
	int use_xdp; /* run bloomgate_xdp (else bloomgate_dns directly) */
	__u8 match, action, dns_action; /* as loaded */
	struct ring_buffer *rb;
	struct bg_name_event nev[EV_MAX]; /* name events of the last run */
	int nnev;
	struct bg_event aev[EV_MAX]; /* address events of the last run */
	int naev;
	int bad_ev; /* events of neither size */
	const void *mem; /* the published filter, mapped read-only */
	size_t len;
};

static int on_event(void *ctx, void *data, size_t len)
{
	struct fx *f = ctx;

	if (len == sizeof(struct bg_name_event)) {
		if (f->nnev < EV_MAX)
			memcpy(&f->nev[f->nnev], data, len);
		f->nnev++;
	} else if (len == sizeof(struct bg_event)) {
		if (f->naev < EV_MAX)
			memcpy(&f->aev[f->naev], data, len);
		f->naev++;
	} else {
		f->bad_ev++;
	}
	return 0;
}

static int labels_of(const char *name)
{
	int n = 1;

	for (; *name; name++)
		n += *name == '.';
	return n;
}

static void fill_names(struct bg_names *names, const struct entry *e, size_t ne)
{
	static const __u8 kinds[] = { [E_EXACT] = BG_NAME_EXACT,
				      [E_SUBS] = BG_NAME_SUBS,
				      [E_TREE] = BG_NAME_TREE };
	size_t i;

	memset(names, 0, sizeof(*names));
	names->v = calloc(ne ? ne : 1, sizeof(*names->v));
	assert_non_null(names->v);
	for (i = 0; i < ne; i++) {
		names->v[i].name = (char *)e[i].name;
		names->v[i].kind = kinds[e[i].kind];
		names->v[i].allow = (uint8_t)e[i].allow;
	}
	names->n = ne;
}

/* Keys an entry makes: EXACT for exact and tree entries, SUBS for subs and
 * tree entries unless deeper than the probed suffixes. */
static void count_keys(const struct entry *e, size_t ne, int allow,
		       size_t *keys, size_t *deep)
{
	size_t i;

	for (i = 0; i < ne; i++) {
		if (!!e[i].allow != allow)
			continue;
		if (e[i].kind & E_EXACT)
			(*keys)++;
		if (e[i].kind & E_SUBS) {
			if (labels_of(e[i].name) > BG_DNS_SUFFIX_MAX)
				(*deep)++;
			else
				(*keys)++;
		}
	}
}

/*
 * Builds the filter with the loader's builder and publishes it: the names
 * of e (allow rules among them marked), the allow list's names ae (every
 * entry an allow rule), addresses addrs. Keeps a read-only mapping in f
 * for the model.
 */
static void publish(struct fx *f, const struct entry *e, size_t ne,
		    const struct entry *ae, size_t nae, const char *addrs)
{
	struct bg_list_opts lo = { .strict = 1 };
	struct bg_filter_params p;
	struct bg_names names, anames, all;
	struct bg_list l, al;
	size_t nkeys = 0, deep = 0, akeys = 0, adeep = 0;
	const struct bg_filter_header *h;
	int fd;

	fill_names(&names, e, ne);
	count_keys(e, ne, 0, &nkeys, &deep);
	count_keys(e, ne, 1, &akeys, &adeep);
	bg_list_init(&l);
	if (addrs)
		assert_int_equal(bg_list_parse_buf(&l, "addrs", addrs, strlen(addrs),
						   &lo), 0);
	bg_list_finish(&l);
	bg_list_init(&al);
	if (ae) {
		struct entry tmp[16];
		size_t i;

		assert_true(nae <= ARRAY_SIZE(tmp));
		for (i = 0; i < nae; i++) {
			tmp[i] = ae[i];
			tmp[i].allow = 1;
		}
		/* an --allow list's entries are all allow rules */
		fill_names(&anames, tmp, nae);
		count_keys(tmp, nae, 1, &akeys, &adeep);
		bg_list_finish(&al);
	}
	names_concat(&all, &names, ae ? &anames : NULL);
	assert_int_equal(bg_filter_plan(BL(&l, &al, &all), FUNC_FPR, &p), 0);
	assert_int_equal(p.name_keys, nkeys);
	assert_int_equal(p.names_too_deep, deep + adeep);
	fd = bg_filter_create(&p, SEED, BL(&l, &al, &all));
	assert_true(fd >= 0);
	free(all.v);
	free(names.v);
	if (ae)
		free(anames.v);
	bg_list_free(&l);
	bg_list_free(&al);
	assert_int_equal(bg_filter_publish(f->filters, fd), 0);
	close(fd);
	assert_int_equal(bg_filter_map_current(f->filters, &f->mem, &f->len), 0);
	h = f->mem;
	assert_true(h->flags & BG_FILTER_F_NAMES);
	/* subs_depths: one bit per label count of the block SUBS keys */
	{
		__u16 depths = 0;
		size_t i;

		for (i = 0; i < ne; i++)
			if (!e[i].allow && (e[i].kind & E_SUBS) &&
			    labels_of(e[i].name) <= BG_DNS_SUFFIX_MAX)
				depths |= (__u16)(1U << labels_of(e[i].name));
		assert_int_equal(h->subs_depths, depths);
		assert_int_equal(p.subs_depths, depths);
	}
	/* the allow entries here are distinct names: distinct keys */
	assert_int_equal(h->allown_n, akeys);
	if (!addrs) { /* no address is probed at all: see add_xdp() */
		assert_int_equal(h->n4, 0);
		assert_int_equal(h->n6, 0);
		assert_int_equal(h->short6_n, 0);
		assert_false(h->flags & BG_FILTER_F_SHORT4);
	} else { /* exact addresses: one probe each */
		assert_int_equal(h->n4, 1);
		assert_int_equal(h->len4[0], 32);
		assert_int_equal(h->n6, 1);
		assert_int_equal(h->len6[0], 128);
		assert_int_equal(h->short6_n, 0);
		assert_false(h->flags & BG_FILTER_F_SHORT4);
	}
}

static int fx_setup(void **state)
{
	const struct cfg *cfg = *state;
	struct fx *f = calloc(1, sizeof(*f));
	static const __u16 default_ports[BG_DNS_PORTS_MAX] = { 53 };
	__u32 key = 0;
	int i, ports = 0;

	assert_non_null(f);
	f->cfg = cfg;
	init_names();
	f->skel = bloomgate__open();
	assert_non_null(f->skel);
	/* the defaults the contract names */
	assert_int_equal(f->skel->rodata->cfg_dns_action, BG_DNS_ACTION_NXDOMAIN);
	for (i = 0; i < BG_DNS_PORTS_MAX; i++) {
		assert_int_equal(f->skel->rodata->cfg_dns_ports[i], default_ports[i]);
		ports |= cfg->ports[i];
	}
	f->skel->rodata->cfg_match = cfg->match;
	if (cfg->action)
		f->skel->rodata->cfg_action = cfg->action;
	if (cfg->dns_action)
		f->skel->rodata->cfg_dns_action = cfg->dns_action;
	if (ports)
		for (i = 0; i < BG_DNS_PORTS_MAX; i++)
			f->skel->rodata->cfg_dns_ports[i] = cfg->ports[i];
	f->match = f->skel->rodata->cfg_match;
	f->action = f->skel->rodata->cfg_action;
	f->dns_action = f->skel->rodata->cfg_dns_action;
	assert_int_equal(bloomgate__load(f->skel), 0);
	f->dns = bpf_program__fd(f->skel->progs.bloomgate_dns);
	f->xdp = bpf_program__fd(f->skel->progs.bloomgate_xdp);
	f->filters = bpf_map__fd(f->skel->maps.bg_filters);
	f->stats = bpf_map__fd(f->skel->maps.bg_stats);
	f->progs = bpf_map__fd(f->skel->maps.bg_progs);
	if (!cfg->empty_progs)
		assert_int_equal(bpf_map_update_elem(f->progs, &key, &f->dns, BPF_ANY),
				 0);
	f->rb = ring_buffer__new(bpf_map__fd(f->skel->maps.bg_events), on_event, f,
				 NULL);
	assert_non_null(f->rb);
	f->use_xdp = cfg->xdp;
	switch (cfg->filter) {
	case F_NAMES:
		publish(f, ENTRIES, ARRAY_SIZE(ENTRIES), NULL, 0, NULL);
		break;
	case F_MIXED:
		publish(f, ENTRIES, ARRAY_SIZE(ENTRIES), NULL, 0,
			MIX4 "\n" MIX6 "\n");
		break;
	case F_ALLOW_IN_BLOCK:
		publish(f, ALLOW_BLOCK, ARRAY_SIZE(ALLOW_BLOCK), NULL, 0, NULL);
		break;
	case F_ALLOW_LIST: /* the same rules, the allow ones in an allow list */
		publish(f, ALLOW_BLOCK, 1, ALLOW_BLOCK + 1,
			ARRAY_SIZE(ALLOW_BLOCK) - 1, NULL);
		break;
	default:
		break;
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	if (f->mem)
		bg_filter_unmap(f->mem, f->len);
	ring_buffer__free(f->rb);
	bloomgate__destroy(f->skel);
	free(f);
	return 0;
}

/* ---- Model: the probe order of bloomgate_dns over the same bits ---------- */

static int has_key(const struct fx *f, __u32 kind, __u64 s)
{
	const struct bg_filter_header *h = f->mem;
	__u64 k = bg_name_key_hash(kind, s, h->seed);
	const struct bg_block *b =
		(const struct bg_block *)f->mem + 1 +
		((h->flags & BG_FILTER_F_SHORT4) ? BG_SHORT4_ELEMS : 0) +
		bg_bloom_block(k, h->nblocks);

	return bg_bloom_test(b, k, h->k);
}

/* 1 if bloomgate_dns probes the suffix of i labels: the filter has a SUBS
 * key of that depth (the header's subs_depths, checked against the
 * entries in publish()). */
static int depth_on(const struct fx *f, int i)
{
	const struct bg_filter_header *h = f->mem;

	return i >= 1 && i <= BG_DNS_SUFFIX_MAX && ((h->subs_depths >> i) & 1);
}

/* dns_probes of a negative query of n labels: the exact key, then every
 * depth below n the filter has SUBS keys at. */
static int negative_probes(const struct fx *f, int n)
{
	int i, probes = 1;

	for (i = 1; i < n && i <= BG_DNS_SUFFIX_MAX; i++)
		probes += depth_on(f, i);
	return probes;
}

/* 1 if the exact allow table (after the short6 table) holds key hash k:
 * a linear scan, not the datapath's search. */
static int allow_has(const struct fx *f, __u32 kind, __u64 s)
{
	const struct bg_filter_header *h = f->mem;
	__u64 k = bg_name_key_hash(kind, s, h->seed);
	const __u64 *t = (const __u64 *)((const __u8 *)f->mem +
					 64 * (size_t)(bg_short6_off(h) +
						       (h->short6_n + 1) / 2));
	__u32 i;

	for (i = 0; i < h->allown_n; i++)
		if (t[i] == k)
			return 1;
	return 0;
}

static int model(const struct fx *f, const char *name, int *probes)
{
	__u64 suf[BG_DNS_LABELS_MAX + 1], e;
	int n, i;

	assert_int_equal(bg_name_hashes(name, SEED, &e, suf, &n), 0);
	*probes = 1;
	if (has_key(f, BG_KEY_NAME_EXACT, e))
		return 1;
	for (i = 1; i <= BG_DNS_SUFFIX_MAX && i < n; i++) {
		if (!depth_on(f, i))
			continue; /* no SUBS key of i labels: not probed */
		(*probes)++;
		if (has_key(f, BG_KEY_NAME_SUBS, suf[n - i]))
			return 1;
	}
	return 0;
}

/* The allow decision: the exact key of the name, or the subdomains key of
 * any suffix the block probe uses. */
static int model_allowed(const struct fx *f, const char *name)
{
	__u64 suf[BG_DNS_LABELS_MAX + 1], e;
	int n, i;

	assert_int_equal(bg_name_hashes(name, SEED, &e, suf, &n), 0);
	if (allow_has(f, BG_KEY_NAME_EXACT, e))
		return 1;
	for (i = 1; i <= BG_DNS_SUFFIX_MAX && i < n; i++)
		if (allow_has(f, BG_KEY_NAME_SUBS, suf[n - i]))
			return 1;
	return 0;
}

/* ---- Packets --------------------------------------------------------------- */

struct dnsq {
	__u16 id; /* 0: 0x1234 */
	__u16 flags; /* host order */
	__u16 qd, an, ns, ar; /* ar 0 with edns: 1 */
	const __u8 *wire; /* raw QNAME bytes, or NULL: from name */
	size_t wire_len;
	const char *name; /* dotted, converted label by label (no checks) */
	int no_qtail; /* leave out QTYPE/QCLASS */
	__u16 qtype; /* 0: A */
	int edns; /* an OPT record right after the question */
	__u8 edns_version;
	int edns_do;
	const __u8 *edns_opts; /* the OPT record's RDATA (options) */
	size_t edns_opts_len;
	size_t edns_cut; /* nonzero: only this many bytes of the OPT record */
	const __u8 *extra; /* bytes after all of that */
	size_t extra_len;
};

static void put16(__u8 *b, unsigned int v)
{
	b[0] = (__u8)(v >> 8);
	b[1] = (__u8)v;
}

static unsigned int get16(const __u8 *b)
{
	return (unsigned int)b[0] << 8 | b[1];
}

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

/* The question as q describes it: QNAME, QTYPE, QCLASS. */
static size_t question(__u8 *b, const struct dnsq *q)
{
	size_t o;

	if (q->wire) {
		memcpy(b, q->wire, q->wire_len);
		o = q->wire_len;
	} else {
		o = to_wire(q->name, b);
	}
	if (!q->no_qtail) {
		put16(b + o, q->qtype ? q->qtype : 1); /* A */
		put16(b + o + 2, 1); /* IN */
		o += 4;
	}
	return o;
}

static size_t dns_write(__u8 *b, const struct dnsq *q)
{
	size_t o = 12;

	put16(b, q->id ? q->id : 0x1234);
	put16(b + 2, q->flags);
	put16(b + 4, q->qd);
	put16(b + 6, q->an);
	put16(b + 8, q->ns);
	put16(b + 10, q->ar ? q->ar : q->edns ? 1 : 0);
	o += question(b + o, q);
	if (q->edns) {
		__u8 opt[11 + 64];
		size_t n = 11 + q->edns_opts_len;

		assert_true(q->edns_opts_len <= 64);
		opt[0] = 0; /* root */
		put16(opt + 1, 41); /* OPT */
		put16(opt + 3, 4096); /* the client's UDP payload size */
		opt[5] = 0; /* extended RCODE */
		opt[6] = q->edns_version;
		opt[7] = q->edns_do ? 0x80 : 0;
		opt[8] = 0;
		put16(opt + 9, (unsigned int)q->edns_opts_len);
		if (q->edns_opts_len)
			memcpy(opt + 11, q->edns_opts, q->edns_opts_len);
		if (q->edns_cut)
			n = q->edns_cut;
		memcpy(b + o, opt, n);
		o += n;
	}
	if (q->extra_len) {
		memcpy(b + o, q->extra, q->extra_len);
		o += q->extra_len;
	}
	return o;
}

struct net {
	int af, vlans;
	int qinq; /* outer tag 802.1ad */
};

static const struct net NETS[] = {
	{ AF_INET, 0, 0 },  { AF_INET, 1, 0 },	{ AF_INET, 2, 0 },
	{ AF_INET, 2, 1 },  { AF_INET6, 0, 0 }, { AF_INET6, 1, 0 },
	{ AF_INET6, 2, 0 }, { AF_INET6, 2, 1 },
};
static const struct net *const NET4 = &NETS[0], *const NET6 = &NETS[4];

static const char *net_name(const struct net *n)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "%s/%d vlans%s", n->af == AF_INET ? "ipv4" : "ipv6",
		 n->vlans, n->qinq ? " (802.1ad)" : "");
	return buf;
}

/* How a query packet is built around the DNS message. */
struct qp {
	const struct net *n;
	__u16 dport; /* 0: 53 */
	const char *src, *dst; /* NULL: the defaults below */
	int ihl; /* IPv4 header words, 0: 5 (options are NOPs, then EOL) */
	__u8 tos, ttl; /* ttl 0: 64 */
	__u16 ip_id, frag_off; /* IPv4 frag_off field, host order */
	__u8 tclass, hop; /* IPv6; hop 0: 64 */
	__u32 flow; /* IPv6 flow label */
	int ext_hdrs; /* IPv6 destination-options headers */
	size_t pad; /* bytes after the UDP datagram (Ethernet padding) */
};

#define SPORT 40000

static const char *qp_src(const struct qp *qp)
{
	return qp->src ? qp->src : qp->n->af == AF_INET ? "192.0.2.10" : "2001:db8::10";
}

static const char *qp_dst(const struct qp *qp)
{
	return qp->dst ? qp->dst : qp->n->af == AF_INET ? "198.51.100.53" : "2001:db8::53";
}

/* ---- Checksums (RFC 1071), written here from scratch ------------------------ */

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t fold16(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* The header checksum an IPv4 header should carry (host order). */
static uint16_t ip4_csum(const uint8_t *ip)
{
	uint8_t h[60];
	size_t hl = (size_t)(ip[0] & 0xf) * 4;

	memcpy(h, ip, hl);
	h[10] = h[11] = 0;
	return (uint16_t)~fold16(sum16(h, hl, 0));
}

/* The UDP checksum the datagram at l4 should carry (host order): pseudo-
 * header (RFC 768 / RFC 8200 8.1), header with a zero checksum, data. */
static uint16_t udp_csum(const uint8_t *b, size_t l3, size_t l4, int af)
{
	size_t ulen = get16(b + l4 + 4);
	uint8_t u[8];
	uint32_t s;
	uint16_t c;

	if (af == AF_INET)
		s = sum16(b + l3 + 12, 8, 0);
	else
		s = sum16(b + l3 + 8, 32, 0);
	s += IPPROTO_UDP + (uint32_t)ulen;
	memcpy(u, b + l4, 8);
	u[6] = u[7] = 0;
	s = sum16(u, 8, s);
	s = sum16(b + l4 + 8, ulen - 8, s);
	c = (uint16_t)~fold16(s);
	return c ? c : 0xffff;
}

static void ip4_set(struct pkt *p, __u8 tos, __u8 ttl, __u16 id)
{
	uint8_t *ip = p->buf + p->l3;

	ip[1] = tos;
	put16(ip + 4, id);
	ip[8] = ttl;
	put16(ip + 10, ip4_csum(ip));
}

static void ip6_set(struct pkt *p, __u8 tclass, __u32 flow, __u8 hop)
{
	uint8_t *ip = p->buf + p->l3;

	ip[0] = (uint8_t)(0x60 | tclass >> 4);
	ip[1] = (uint8_t)((tclass & 0xf) << 4 | (flow >> 16 & 0xf));
	put16(ip + 2, flow & 0xffff);
	ip[7] = hop;
}

/* A UDP packet to qp's port carrying the DNS message q, with a correct UDP
 * checksum (the datapath does not look at it). */
static void build_query(struct pkt *p, const struct qp *qp, const struct dnsq *q)
{
	__u8 msg[1024];
	size_t len = dns_write(msg, q);
	struct pkt_spec s = {
		.family = qp->n->af,
		.vlans = qp->n->vlans,
		.vlan_tpid = { qp->n->qinq ? ETH_P_8021AD : 0 },
		.src = qp_src(qp),
		.dst = qp_dst(qp),
		.ihl = qp->ihl,
		.frag_off = qp->frag_off,
		.ext_hdrs = qp->ext_hdrs,
		.sport = SPORT,
		.dport = qp->dport ? qp->dport : 53,
		.payload = len,
	};

	assert_int_equal(pkt_build(p, &s), 0);
	memcpy(p->buf + p->l4 + 8, msg, len);
	if (qp->n->af == AF_INET)
		ip4_set(p, qp->tos, qp->ttl ? qp->ttl : 64, qp->ip_id);
	else
		ip6_set(p, qp->tclass, qp->flow, qp->hop ? qp->hop : 64);
	put16(p->buf + p->l4 + 6, udp_csum(p->buf, p->l3, p->l4, qp->n->af));
	if (qp->pad) {
		memset(p->buf + p->len, 0xee, qp->pad);
		p->len += qp->pad;
	}
}

static void build_dns(struct pkt *p, const struct net *n, __u16 dport,
		      const struct dnsq *q)
{
	struct qp qp = { .n = n, .dport = dport };

	build_query(p, &qp, q);
}

static struct dnsq Q(const char *name)
{
	return (struct dnsq){ .flags = 0x0100, .qd = 1, .name = name };
}

/*
 * The answer to the query qp/q with rcode, built from their description
 * (not from the query's bytes): addresses, ports and MACs swapped, VLAN
 * tags as built, IPv4 TTL 64 with DSCP, ID, DF and options kept and ECN
 * cleared, IPv6 hop limit 64 with the traffic class (ECN cleared) and flow
 * label kept; DNS: ID, QR=1, RD and CD copied, RA=RD, RCODE; the question;
 * an OPT record of our own when the query carries one right after the
 * question (RDLEN 0, DO copied, BADVERS for a version other than 0).
 */
static void expected_reply(struct pkt *r, const struct qp *qp,
			   const struct dnsq *q, int rcode)
{
	int opt = q->edns && !q->an && !q->ns && (!q->edns_cut || q->edns_cut >= 11);
	int badvers = opt && q->edns_version;
	__u16 rd = q->flags & 0x0100;
	__u8 m[600], mac[6];
	size_t o = 12;
	struct pkt_spec s = {
		.family = qp->n->af,
		.vlans = qp->n->vlans,
		.vlan_tpid = { qp->n->qinq ? ETH_P_8021AD : 0 },
		.src = qp_dst(qp),
		.dst = qp_src(qp),
		.ihl = qp->ihl,
		.frag_off = qp->frag_off & 0x4000, /* DF */
		.sport = qp->dport ? qp->dport : 53,
		.dport = SPORT,
	};

	put16(m, q->id ? q->id : 0x1234);
	put16(m + 2, 0x8000 | rd | (rd ? 0x0080 : 0) | (q->flags & 0x0010) |
			     (badvers ? 0 : rcode));
	put16(m + 4, 1);
	put16(m + 6, 0);
	put16(m + 8, 0);
	put16(m + 10, opt);
	o += question(m + o, q);
	if (opt) {
		m[o] = 0;
		put16(m + o + 1, 41);
		put16(m + o + 3, EDNS_SIZE);
		m[o + 5] = badvers ? 1 : 0; /* BADVERS = 16: 1 << 4 */
		m[o + 6] = 0;
		m[o + 7] = q->edns_do ? 0x80 : 0;
		m[o + 8] = 0;
		put16(m + o + 9, 0);
		o += 11;
	}
	s.payload = o;
	assert_int_equal(pkt_build(r, &s), 0);
	memcpy(mac, r->buf, 6);
	memcpy(r->buf, r->buf + 6, 6);
	memcpy(r->buf + 6, mac, 6);
	memcpy(r->buf + r->l4 + 8, m, o);
	if (qp->n->af == AF_INET)
		ip4_set(r, qp->tos & 0xfc, 64, qp->ip_id);
	else
		ip6_set(r, qp->tclass & 0xfc, qp->flow, 64);
	put16(r->buf + r->l4 + 6, udp_csum(r->buf, r->l3, r->l4, qp->n->af));
}

#define CHECK(cond, ...)                                                      \
	do {                                                                   \
		if (!(cond)) {                                                 \
			char m_[256];                                          \
			snprintf(m_, sizeof(m_), __VA_ARGS__);                 \
			fail_msg("%s: %s", what, m_);                          \
		}                                                              \
	} while (0)

/*
 * The answer o (olen bytes) to the query q, checked field by field with
 * what is expected from the query's bytes alone (its own reading of the
 * question and of an OPT record, independent of expected_reply).
 */
static void check_reply(const char *what, const struct pkt *q, int af,
			const __u8 *o, size_t olen, int rcode)
{
	const __u8 *qb = q->buf, *qm = qb + q->l4 + 8, *om = o + q->l4 + 8;
	size_t l3 = q->l3, l4 = q->l4, mlen = get16(qb + l4 + 4) - 8;
	size_t pos = 12, qsz, rlen, i;
	unsigned int qf = get16(qm + 2), of;
	int opt = 0, ver = 0, dobit = 0;

	while (qm[pos]) /* the query was judged: its name is well formed */
		pos += 1 + qm[pos];
	qsz = pos + 1 + 4 - 12;
	if (!get16(qm + 6) && !get16(qm + 8) && get16(qm + 10) &&
	    12 + qsz + 11 <= mlen && qm[12 + qsz] == 0 &&
	    get16(qm + 12 + qsz + 1) == 41) {
		opt = 1;
		ver = qm[12 + qsz + 6];
		dobit = qm[12 + qsz + 7] & 0x80;
	}
	rlen = 12 + qsz + (opt ? 11 : 0);
	CHECK(olen == l4 + 8 + rlen, "length %zu, expected %zu", olen, l4 + 8 + rlen);
	CHECK(rlen <= mlen, "answer longer than the query");
	/* Ethernet: MACs swapped; VLAN tags and the EtherType kept */
	CHECK(!memcmp(o, qb + 6, 6), "destination MAC is not the query's source");
	CHECK(!memcmp(o + 6, qb, 6), "source MAC is not the query's destination");
	for (i = 12; i < l3; i += 4) {
		if (i + 2 == l3) {
			CHECK(!memcmp(o + i, qb + i, 2), "EtherType changed");
			break;
		}
		CHECK(!memcmp(o + i, qb + i, 4), "VLAN tag at %zu changed", i);
	}
	if (af == AF_INET) {
		const __u8 *ip = o + l3, *qi = qb + l3;
		size_t hl = (size_t)(qi[0] & 0xf) * 4;

		CHECK(ip[0] == qi[0], "version/IHL %#x, query %#x", ip[0], qi[0]);
		CHECK(ip[1] == (qi[1] & 0xfc), "TOS %#x: DSCP kept, ECN 0 from %#x",
		      ip[1], qi[1]);
		CHECK(get16(ip + 2) == olen - l3, "total length %u", get16(ip + 2));
		CHECK(get16(ip + 4) == get16(qi + 4), "ID changed");
		CHECK(get16(ip + 6) == (get16(qi + 6) & 0x4000),
		      "frag_off %#x: DF kept from %#x, nothing else",
		      get16(ip + 6), get16(qi + 6));
		CHECK(ip[8] == 64, "TTL %u", ip[8]);
		CHECK(ip[9] == IPPROTO_UDP, "protocol %u", ip[9]);
		CHECK(get16(ip + 10) == ip4_csum(ip), "header checksum %#x, recomputed %#x",
		      get16(ip + 10), ip4_csum(ip));
		CHECK(fold16(sum16(ip, hl, 0)) == 0xffff, "header does not sum to 0xffff");
		CHECK(!memcmp(ip + 12, qi + 16, 4), "source is not the query's destination");
		CHECK(!memcmp(ip + 16, qi + 12, 4), "destination is not the query's source");
		CHECK(!memcmp(ip + 20, qi + 20, hl - 20), "options changed");
	} else {
		const __u8 *ip = o + l3, *qi = qb + l3;

		CHECK(ip[0] == qi[0], "version/traffic class %#x, query %#x", ip[0], qi[0]);
		CHECK(ip[1] == (qi[1] & 0xcf), "traffic class/flow %#x: ECN 0 from %#x",
		      ip[1], qi[1]);
		CHECK(get16(ip + 2) == get16(qi + 2), "flow label changed");
		CHECK(get16(ip + 4) == olen - l3 - 40, "payload length %u", get16(ip + 4));
		CHECK(ip[6] == IPPROTO_UDP, "next header %u", ip[6]);
		CHECK(ip[7] == 64, "hop limit %u", ip[7]);
		CHECK(!memcmp(ip + 8, qi + 24, 16), "source is not the query's destination");
		CHECK(!memcmp(ip + 24, qi + 8, 16), "destination is not the query's source");
	}
	/* UDP: ports swapped, length, checksum */
	CHECK(get16(o + l4) == get16(qb + l4 + 2), "source port %u", get16(o + l4));
	CHECK(get16(o + l4 + 2) == get16(qb + l4), "destination port %u",
	      get16(o + l4 + 2));
	CHECK(get16(o + l4 + 4) == 8 + rlen, "UDP length %u", get16(o + l4 + 4));
	CHECK(get16(o + l4 + 6) == udp_csum(o, l3, l4, af),
	      "UDP checksum %#x, recomputed %#x", get16(o + l4 + 6),
	      udp_csum(o, l3, l4, af));
	/* DNS header (RFC 1035 4.1.1) */
	of = get16(om + 2);
	CHECK(get16(om) == get16(qm), "ID %#x, query %#x", get16(om), get16(qm));
	CHECK(of & 0x8000, "QR is 0");
	CHECK(!(of & 0x7800), "OPCODE %u", of >> 11 & 0xf);
	CHECK(!(of & 0x0400), "AA is 1");
	CHECK(!(of & 0x0200), "TC is 1");
	CHECK((of & 0x0100) == (qf & 0x0100), "RD not copied");
	CHECK(!!(of & 0x0080) == !!(qf & 0x0100), "RA is not RD");
	CHECK(!(of & 0x0040), "Z is 1");
	CHECK(!(of & 0x0020), "AD is 1");
	CHECK((of & 0x0010) == (qf & 0x0010), "CD not copied");
	CHECK((int)(of & 0xf) == (opt && ver ? 0 : rcode), "RCODE %u", of & 0xf);
	CHECK(get16(om + 4) == 1, "QDCOUNT %u", get16(om + 4));
	CHECK(get16(om + 6) == 0, "ANCOUNT %u", get16(om + 6));
	CHECK(get16(om + 8) == 0, "NSCOUNT %u", get16(om + 8));
	CHECK(get16(om + 10) == (unsigned int)opt, "ARCOUNT %u, expected %d",
	      get16(om + 10), opt);
	CHECK(!memcmp(om + 12, qm + 12, qsz), "question not kept byte for byte");
	if (opt) { /* RFC 6891 6.1.2, 6.1.3; RFC 3225 3 */
		const __u8 *r = om + 12 + qsz;

		CHECK(r[0] == 0, "OPT owner is not the root");
		CHECK(get16(r + 1) == 41, "OPT TYPE %u", get16(r + 1));
		CHECK(get16(r + 3) == EDNS_SIZE, "OPT UDP payload size %u", get16(r + 3));
		CHECK(r[5] == (ver ? 1 : 0), "extended RCODE %u", r[5]);
		CHECK(r[6] == 0, "EDNS version %u", r[6]);
		CHECK(r[7] == dobit, "DO %#x, query %#x", r[7], dobit);
		CHECK(r[8] == 0, "Z %#x", r[8]);
		CHECK(get16(r + 9) == 0, "RDLEN %u", get16(r + 9));
	}
}

/* ---- Running ------------------------------------------------------------- */

struct exp {
	__u32 verdict;
	__u64 cnt[BG_CNT__COUNT];
	int rewritten; /* the output is an answer, not the input */
};

static struct exp e_pass(void)
{
	struct exp e = { .verdict = XDP_PASS };

	e.cnt[BG_CNT_PASSED] = 1;
	return e;
}

/* Not judged by name for reason cnt: counted, passed. */
static struct exp e_reason(int cnt)
{
	struct exp e = e_pass();

	e.cnt[cnt] = 1;
	return e;
}

/* Probes bloomgate_xdp makes for one address that is not listed. */
static __u64 addr_probes(const struct fx *f, int af)
{
	const struct bg_filter_header *h = f->mem;

	if (af == AF_INET)
		return (h->flags & BG_FILTER_F_SHORT4 ? 1 : 0) + h->n4;
	return (h->short6_n ? 1 : 0) + h->n6;
}

/* What bloomgate_xdp counts before it tail-calls bloomgate_dns for a packet
 * of family af whose addresses are not listed. */
static void add_xdp(const struct fx *f, struct exp *e, int af)
{
	int n = !!(f->match & BG_MATCH_DST) + !!(f->match & BG_MATCH_SRC);

	if (!f->use_xdp)
		return;
	e->cnt[BG_CNT_PACKETS]++;
	e->cnt[af == AF_INET ? BG_CNT_IPV4 : BG_CNT_IPV6]++;
	e->cnt[BG_CNT_NEGATIVES] += (__u64)n;
	e->cnt[BG_CNT_PROBES] += (__u64)n * addr_probes(f, af);
}

static const __u8 *OUT; /* output of the last run */
static size_t OUT_LEN;

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
	__u64 d[BG_CNT_SLOTS], verdicts;
	char what[512];
	va_list ap;
	int err, i;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	f->nnev = f->naev = f->bad_ev = 0;
	assert_int_equal(bg_counters_read(f->stats, &before), 0);
	err = bpf_prog_test_run_opts(f->use_xdp ? f->xdp : f->dns, &o);
	assert_int_equal(bg_counters_read(f->stats, &after), 0);
	assert_true(ring_buffer__consume(f->rb) >= 0);
	if (err)
		fail_msg("%s: BPF_PROG_TEST_RUN: %s", what, strerror(errno));
	if (o.retval != e->verdict)
		fail_msg("%s: verdict %u, expected %u", what, o.retval, e->verdict);
	for (i = 0; i < BG_CNT_SLOTS; i++) {
		__u64 want = i < BG_CNT__COUNT ? e->cnt[i] : 0;

		d[i] = after.cnt[i] - before.cnt[i];
		if (d[i] != want)
			fail_msg("%s: counter %s moved by %llu, expected %llu", what,
				 i < BG_CNT__COUNT ? bg_counter_names[i] : "(slot)",
				 (unsigned long long)d[i], (unsigned long long)want);
	}
	for (i = 0; i < BG_MAL_SLOTS; i++)
		if (after.malformed[i] != before.malformed[i])
			fail_msg("%s: malformed reason %d moved", what, i);
	/* the contract's invariants, whatever the expectation says */
	verdicts = d[BG_CNT_PASSED] + d[BG_CNT_DROPPED] + d[BG_CNT_ANSWERED];
	if (verdicts != 1)
		fail_msg("%s: passed + dropped + answered moved by %llu", what,
			 (unsigned long long)verdicts);
	if (f->use_xdp && d[BG_CNT_PACKETS] != verdicts)
		fail_msg("%s: packets != passed + dropped + answered", what);
	if (d[BG_CNT_FLAGGED] > d[BG_CNT_PASSED])
		fail_msg("%s: flagged but not passed", what);
	if ((o.retval == XDP_PASS && !d[BG_CNT_PASSED]) ||
	    (o.retval == XDP_DROP && !d[BG_CNT_DROPPED]) ||
	    (o.retval == XDP_TX && !d[BG_CNT_ANSWERED]))
		fail_msg("%s: verdict %u counted as another", what, o.retval);
	if (f->bad_ev || (__u64)(f->nnev + f->naev) !=
				 d[BG_CNT_FLAGGED] - d[BG_CNT_EVENTS_LOST])
		fail_msg("%s: %d+%d events (%d bad) for %llu flagged", what, f->nnev,
			 f->naev, f->bad_ev, (unsigned long long)d[BG_CNT_FLAGGED]);
	if (!e->rewritten && (o.data_size_out != len || memcmp(out, data, len)))
		fail_msg("%s: output differs from the input", what);
	OUT = out;
	OUT_LEN = o.data_size_out;
}

static int rcode_of(const struct fx *f)
{
	return f->dns_action == BG_DNS_ACTION_REFUSED ? RCODE_REFUSED : RCODE_NXDOMAIN;
}

/* The name event of the last run, for the query p (qp): the client and
 * the QNAME in wire form, lowercased, zero padded. */
static void check_name_event(const struct fx *f, const char *what,
			     const struct pkt *p, int af)
{
	const struct bg_name_event *ev = &f->nev[0];
	const __u8 *qn = p->buf + p->l4 + 8 + 12;
	__u8 addr[16] = { 0 }, name[256] = { 0 };
	size_t n = 0, i;

	CHECK(f->nnev == 1 && f->naev == 0, "%d name, %d address events", f->nnev,
	      f->naev);
	while (qn[n])
		n += 1 + qn[n];
	n++;
	for (i = 0; i < n; i++)
		name[i] = qn[i] >= 'A' && qn[i] <= 'Z' ? (__u8)(qn[i] + 32) : qn[i];
	if (af == AF_INET)
		memcpy(addr, p->buf + p->l3 + 12, 4);
	else
		memcpy(addr, p->buf + p->l3 + 8, 16);
	CHECK(ev->ev.ts_ns != 0, "no timestamp");
	CHECK(ev->ev.ifindex == if_nametoindex("lo"), "ifindex %u", ev->ev.ifindex);
	CHECK(ev->ev.family == (af == AF_INET ? BG_KEY_IPV4 : BG_KEY_IPV6),
	      "family %u", ev->ev.family);
	CHECK(ev->ev.which == BG_EVENT_NAME, "which %u", ev->ev.which);
	CHECK(ev->ev.verdict == BG_VERDICT_FLAG, "verdict %u", ev->ev.verdict);
	CHECK(ev->ev.pad == 0, "pad %u", ev->ev.pad);
	CHECK(!memcmp(ev->ev.addr, addr, 16), "address is not the client's");
	CHECK(!memcmp(ev->name, name, sizeof(name)),
	      "name not the lowercased wire form, zero padded");
}

/* What bloomgate_dns does with a query of the given kind, as the fixture's
 * action says; runs it and checks everything. listed/allowed: what the
 * entries say (the model must agree). */
static void judge(struct fx *f, const struct qp *qp, const struct dnsq *q,
		  const char *name, int listed, int allowed, const char *what)
{
	struct exp e = { .verdict = XDP_PASS };
	struct pkt p, r;
	int probes, m;

	m = model(f, name, &probes);
	if (m != listed)
		fail_msg("%s: model: %s answers %d, entries say %d (seed collision?)",
			 what, name, m, listed);
	if (listed && model_allowed(f, name) != allowed)
		fail_msg("%s: allow model: %s answers %d, entries say %d", what, name,
			 !allowed, allowed);
	e.cnt[BG_CNT_DNS_QUERIES] = 1;
	e.cnt[BG_CNT_DNS_PROBES] = (__u64)probes;
	e.cnt[listed ? BG_CNT_DNS_POSITIVES : BG_CNT_DNS_NEGATIVES] = 1;
	if (!listed) {
		e.cnt[BG_CNT_PASSED] = 1;
	} else if (allowed) {
		e.cnt[BG_CNT_DNS_ALLOWLISTED] = 1;
		e.cnt[BG_CNT_PASSED] = 1;
	} else if (f->dns_action == BG_DNS_ACTION_DROP ||
		   (f->dns_action != BG_DNS_ACTION_FLAG && qp->ext_hdrs)) {
		e.verdict = XDP_DROP; /* IPv6 extension headers: not answered */
		e.cnt[BG_CNT_DROPPED] = 1;
	} else if (f->dns_action == BG_DNS_ACTION_FLAG) {
		e.cnt[BG_CNT_FLAGGED] = 1;
		e.cnt[BG_CNT_PASSED] = 1;
	} else {
		e.verdict = XDP_TX;
		e.cnt[BG_CNT_ANSWERED] = 1;
		e.rewritten = 1;
	}
	add_xdp(f, &e, qp->n->af);
	build_query(&p, qp, q);
	run(f, p.buf, p.len, &e, "%s", what);
	if (e.cnt[BG_CNT_ANSWERED]) {
		size_t i;

		check_reply(what, &p, qp->n->af, OUT, OUT_LEN, rcode_of(f));
		expected_reply(&r, qp, q, rcode_of(f));
		CHECK(OUT_LEN == r.len, "answer of %zu bytes, expected %zu", OUT_LEN,
		      r.len);
		for (i = 0; i < r.len; i++)
			CHECK(OUT[i] == r.buf[i], "answer byte %zu is %#x, expected %#x",
			      i, OUT[i], r.buf[i]);
	}
	if (e.cnt[BG_CNT_FLAGGED])
		check_name_event(f, what, &p, qp->n->af);
}

/* A query for name through every network shape, with and without EDNS. */
static void expect_name_allowed(struct fx *f, const char *name, int listed,
				int allowed)
{
	size_t i;
	int edns;

	for (i = 0; i < ARRAY_SIZE(NETS); i++) {
		for (edns = 0; edns < 2; edns++) {
			struct qp qp = { .n = &NETS[i] };
			struct dnsq q = Q(name);
			char what[400];

			q.edns = edns;
			snprintf(what, sizeof(what), "%.300s %s%s%s", name,
				 net_name(&NETS[i]), edns ? " edns" : "",
				 f->use_xdp ? " (bloomgate_xdp)" : "");
			judge(f, &qp, &q, name, listed, allowed, what);
		}
	}
}

static void expect_name(struct fx *f, const char *name, int listed)
{
	expect_name_allowed(f, name, listed, 0);
}

/* A malformed or non-query message to port 53: counted, passed. */
static void expect_reason(struct fx *f, const struct dnsq *q, int cnt,
			  const char *what)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(NETS); i++) {
		struct exp e = e_reason(cnt);
		struct pkt p;

		add_xdp(f, &e, NETS[i].af);
		build_dns(&p, &NETS[i], 53, q);
		run(f, p.buf, p.len, &e, "%s %s", what, net_name(&NETS[i]));
	}
}

/* ---- Tests: names ----------------------------------------------------------- */

/* Verified instructions of both programs for every cfg_match and DNS
 * action: the budget is 1M per program. */
static void test_verifier_stats(void **state)
{
	static const char *const progs[] = { "bloomgate_xdp", "bloomgate_dns" };
	__u8 match, action;
	size_t i;

	(void)state;
	for (match = 1; match <= 3; match++) {
		for (action = 1; action <= 4; action++) {
			struct bloomgate *skel = bloomgate__open();

			assert_non_null(skel);
			skel->rodata->cfg_match = match;
			skel->rodata->cfg_dns_action = action;
			assert_int_equal(bloomgate__load(skel), 0);
			print_message("# cfg_match %u, cfg_dns_action %u:", match, action);
			for (i = 0; i < ARRAY_SIZE(progs); i++) {
				struct bpf_program *pr =
					bpf_object__find_program_by_name(skel->obj,
									 progs[i]);
				struct bpf_prog_info info;
				__u32 len = sizeof(info);

				assert_non_null(pr);
				memset(&info, 0, sizeof(info));
				assert_int_equal(bpf_obj_get_info_by_fd(bpf_program__fd(pr),
									&info, &len), 0);
				print_message(" %s %u", progs[i], info.verified_insns);
				assert_true(info.verified_insns > 0 &&
					    info.verified_insns < 1000000);
			}
			print_message(" verified insns\n");
			bloomgate__destroy(skel);
		}
	}
	/* attach --unparsed drop (the default DNS action) */
	for (match = 1; match <= 3; match++) {
		struct bloomgate *skel = bloomgate__open();
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		assert_non_null(skel);
		skel->rodata->cfg_match = match;
		skel->rodata->cfg_unparsed = BG_UNPARSED_DROP;
		assert_int_equal(bloomgate__load(skel), 0);
		memset(&info, 0, sizeof(info));
		assert_int_equal(bpf_obj_get_info_by_fd(
					 bpf_program__fd(skel->progs.bloomgate_xdp),
					 &info, &len), 0);
		print_message("# cfg_match %u, cfg_unparsed drop: bloomgate_xdp %u verified insns\n",
			      match, info.verified_insns);
		assert_true(info.verified_insns > 0 && info.verified_insns < 1000000);
		bloomgate__destroy(skel);
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

	/* matched case-insensitively; the answer keeps the client's case */
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
	expect_name(f, NAME255, 1); /* longest legal name: the longest answer */
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
			/* 4 labels: the exact key and the SUBS depths
			 * below 4 (2 in ENTRIES) */
			e.cnt[BG_CNT_DNS_PROBES] = (__u64)negative_probes(f, 4);
			assert_int_equal(e.cnt[BG_CNT_DNS_PROBES], 2);
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
	struct qp qp = { .n = NET4 };
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
	/* other header bits and counts do not matter to the judgement; the
	 * answer has AD 0, CD copied, and no OPT (ANCOUNT, NSCOUNT not 0) */
	q = Q("ads.example.com");
	q.flags = 0x0130; /* RD, AD, CD */
	q.an = 3;
	q.ns = 2;
	q.ar = 7;
	judge(f, &qp, &q, q.name, 1, 0, "header bits");
	/* no QTYPE/QCLASS */
	q = Q("ads.example.com");
	q.no_qtail = 1;
	expect_reason(f, &q, BG_CNT_DNS_TRUNCATED, "no qtype");
}

/* Every cut of a valid query (with EDNS): before the whole UDP header it
 * is not DNS (passed, no reason); after it the UDP length says more than
 * the frame holds: dns_truncated. */
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
 * where UDP says, and the answer is trimmed to its own length. */
static void test_udp_length(void **state)
{
	struct fx *f = *state;
	struct dnsq q = Q("www.evil.org");
	struct pkt p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(NETS); i++) {
		struct qp qp = { .n = &NETS[i], .pad = 40 };
		struct exp e;
		char what[64];
		__u16 ulen;

		snprintf(what, sizeof(what), "padded %s", net_name(&NETS[i]));
		judge(f, &qp, &q, q.name, 1, 0, what);
		q.edns = 1;
		snprintf(what, sizeof(what), "padded %s edns", net_name(&NETS[i]));
		judge(f, &qp, &q, q.name, 1, 0, what);
		q.edns = 0;
		/* UDP length cutting QCLASS */
		build_dns(&p, &NETS[i], 53, &q);
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

/* Not a DNS query to a judged port: passed, no dns_* counter. */
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
	/* IPv4 fragments to port 53: a non-first one has no UDP header, a
	 * first one (MF) is not judged either */
	{
		struct pkt_spec s = { .family = AF_INET, .src = "192.0.2.10",
				      .dst = "198.51.100.53", .dport = 53,
				      .frag_off = 100, .payload = 64 };

		assert_int_equal(pkt_build(&p, &s), 0);
		run(f, p.buf, p.len, &e, "ipv4 fragment");
		build_dns(&p, NET4, 53, &q);
		p.buf[p.l3 + 6] = 0x20; /* MF */
		run(f, p.buf, p.len, &e, "ipv4 first fragment");
	}
	/* an IPv6 atomic fragment (fragment header, offset 0, M 0) */
	{
		struct pkt_spec s = { .family = AF_INET6, .src = "2001:db8::10",
				      .dst = "2001:db8::53", .dport = 53,
				      .frag6 = 1, .payload = 40 };

		assert_int_equal(pkt_build(&p, &s), 0);
		run(f, p.buf, p.len, &e, "ipv6 fragment header");
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
	build_dns(&p, NET4, 53, &q);
	run(f, p.buf, p.len, &e, "root");
}

static void test_no_filter(void **state)
{
	struct fx *f = *state;
	struct dnsq q = Q("ads.example.com");
	struct exp e = e_pass();
	struct pkt p;

	e.cnt[BG_CNT_DNS_QUERIES] = 1;
	build_dns(&p, NET4, 53, &q);
	run(f, p.buf, p.len, &e, "no filter");
	q.flags = 0x8180;
	build_dns(&p, NET6, 53, &q);
	e = e_reason(BG_CNT_DNS_RESPONSE);
	run(f, p.buf, p.len, &e, "no filter response");
}

/* bloomgate_xdp without a filter: no_filter, passed, no tail call. */
static void test_no_filter_xdp(void **state)
{
	struct fx *f = *state;
	struct dnsq q = Q("ads.example.com");
	struct exp e = e_pass();
	struct pkt p;

	e.cnt[BG_CNT_PACKETS] = 1;
	e.cnt[BG_CNT_IPV4] = 1;
	e.cnt[BG_CNT_NO_FILTER] = 1;
	build_dns(&p, NET4, 53, &q);
	run(f, p.buf, p.len, &e, "no filter (bloomgate_xdp)");
}
static void test_name_hashes(void **state)
{
	__u64 a[BG_DNS_LABELS_MAX + 1], b[BG_DNS_LABELS_MAX + 1], ea, eb, ec;
	char big[300];
	int na, nb;

	(void)state;
	init_names();
	assert_int_equal(bg_name_hashes("Ads.Example.COM", 1, &ea, a, &na), 0);
	assert_int_equal(bg_name_hashes("ads.example.com", 1, &eb, b, &nb), 0);
	assert_int_equal(na, 3);
	assert_int_equal(nb, 3);
	assert_memory_equal(a, b, 4 * sizeof(a[0]));
	assert_int_equal(ea, eb);
	assert_int_equal(a[3], 0);
	assert_int_equal(bg_name_hashes("example.com", 1, &ec, b, &nb), 0);
	assert_int_equal(b[0], a[1]); /* a suffix hashes like the name */
	assert_int_not_equal(a[0], a[1]);
	assert_int_not_equal(ea, ec);
	/* the exact hash is not the suffix chain (issue 10, ABI 4) */
	assert_int_not_equal(ea, a[0]);
	assert_int_equal(bg_name_hashes(NAME255, 1, &ea, a, &na), 0);
	assert_int_equal(bg_name_hashes(A127, 1, &ea, a, &na), 0);
	assert_int_equal(na, 127);
	assert_int_equal(bg_name_hashes("", 1, &ea, a, &na), -1);
	assert_int_equal(bg_name_hashes("a..b", 1, &ea, a, &na), -1);
	assert_int_equal(bg_name_hashes("a.b.", 1, &ea, a, &na), -1);
	memset(big, 'x', 64);
	big[64] = 0;
	assert_int_equal(bg_name_hashes(big, 1, &ea, a, &na), -1);
	snprintf(big, sizeof(big), "x%s", NAME255); /* a 64-byte label */
	assert_int_equal(bg_name_hashes(big, 1, &ea, a, &na), -1);
	snprintf(big, sizeof(big), "x.%s", NAME255); /* 257 bytes */
	assert_int_equal(bg_name_hashes(big, 1, &ea, a, &na), -1);
	snprintf(big, sizeof(big), "x.%s", A127); /* 128 labels */
	assert_int_equal(bg_name_hashes(big, 1, &ea, a, &na), -1);
	/* the two key kinds of one name differ */
	assert_int_equal(bg_name_hashes("ads.example.com", 1, &ea, a, &na), 0);
	assert_int_not_equal(bg_name_key_hash(BG_KEY_NAME_EXACT, a[0], 1),
			     bg_name_key_hash(BG_KEY_NAME_SUBS, a[0], 1));
}

static __u64 rng_state = 0x9e3779b97f4a7c15ULL;

static __u32 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (__u32)(rng_state >> 16);
}

static size_t rnd_pick(size_t n)
{
	return rnd() % n;
}

/* ---- Fuzz: mutated queries against the reference parser (dns_ref.h) ------- */

/* Through bloomgate_dns and, every other case, through bloomgate_xdp's tail
 * call; a positive is answered (NXDOMAIN), and the answer checked against
 * the mutated query field by field. */
static void test_fuzz(void **state)
{
	static const char *const names[] = {
		"ads.example.com", "x.ads.example.com", "a.tracker.net",
		"tracker.net", "evil.org", "www.evil.org", "example.com", ".",
		"q.b.b.b.b.b.b.b.b.b.b", "some.host.example.org",
	};
	static const __u8 cookie[] = { 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8 };
	struct fx *f = *state;
	__u64 reasons[BG_CNT__COUNT] = { 0 };
	__u64 verdicts[4] = { 0 };
	int it, i;

	for (it = 0; it < 6000; it++) {
		const struct net *nt = &NETS[rnd_pick(ARRAY_SIZE(NETS))];
		char name[300];
		struct dnsq q;
		struct exp e = e_pass();
		__u64 suf[BG_DNS_LABELS_MAX + 1], ex = 0;
		struct pkt p;
		size_t len, dns_len;
		int nm = (int)rnd_pick(4), r, nl;
		char what[400];

		f->use_xdp = it & 1;
		snprintf(name, sizeof(name), "%s",
			 it % 7 == 0 ? A127 : it % 11 == 0 ? NAME255 :
			 names[rnd_pick(ARRAY_SIZE(names))]);
		for (i = 0; name[i]; i++)
			if (rnd_pick(4) == 0 && name[i] >= 'a' && name[i] <= 'z')
				name[i] = (char)(name[i] - 32);
		q = Q(name);
		q.edns = (int)rnd_pick(2);
		q.edns_do = (int)rnd_pick(2);
		if (rnd_pick(3) == 0) {
			q.edns_opts = cookie;
			q.edns_opts_len = sizeof(cookie);
		}
		build_dns(&p, nt, 53, &q);
		len = p.len;
		dns_len = p.len - p.l4 - 8;
		for (i = 0; i < nm; i++) {
			size_t at = p.l4 + 8 + rnd_pick(dns_len);
			static const __u8 special[] = { 0, 1, 0x3f, 0x40, 0x80,
							0xc0, 0xff, 'A', 41 };

			switch (rnd_pick(6)) {
			case 0: /* a random byte of the message */
				p.buf[at] = (__u8)rnd();
				break;
			case 1: /* a label-length-like byte */
				p.buf[at] = special[rnd_pick(sizeof(special))];
				break;
			case 2: /* the header flags and counts */
				p.buf[p.l4 + 8 + 2 + rnd_pick(10)] = (__u8)rnd();
				break;
			case 3: { /* the UDP length */
				__u16 ul = (__u16)get16(p.buf + p.l4 + 4);

				ul = (__u16)(ul + (int)rnd_pick(41) - 20);
				put16(p.buf + p.l4 + 4, ul);
				break;
			}
			case 4: /* cut the frame (not below the UDP header) */
				len = p.l4 + 8 + rnd_pick(len - p.l4 - 8 + 1);
				break;
			default: /* padding after the message */
				memset(p.buf + len, 0, 16);
				len += rnd_pick(17);
				break;
			}
		}
		r = ref_parse(p.buf, len, p.l4, SEED, &ex, suf, &nl);
		if (r) {
			e = e_reason(r);
		} else {
			int probes = 0, listed = 0;

			e.cnt[BG_CNT_DNS_QUERIES] = 1;
			if (nl) {
				probes = 1;
				listed = has_key(f, BG_KEY_NAME_EXACT, ex);
				for (i = 1; i <= BG_DNS_SUFFIX_MAX && i < nl && !listed;
				     i++) {
					if (!depth_on(f, i))
						continue;
					probes++;
					listed = has_key(f, BG_KEY_NAME_SUBS,
							 suf[nl - i]);
				}
				e.cnt[BG_CNT_DNS_PROBES] = (__u64)probes;
				e.cnt[listed ? BG_CNT_DNS_POSITIVES :
					       BG_CNT_DNS_NEGATIVES] = 1;
				if (listed) {
					e.verdict = XDP_TX;
					e.cnt[BG_CNT_PASSED] = 0;
					e.cnt[BG_CNT_ANSWERED] = 1;
					e.rewritten = 1;
				}
			}
		}
		add_xdp(f, &e, nt->af);
		snprintf(what, sizeof(what), "fuzz %d (%.280s, %s, %d mutations%s)", it,
			 name, net_name(nt), nm, f->use_xdp ? ", bloomgate_xdp" : "");
		run(f, p.buf, len, &e, "%s", what);
		if (e.rewritten)
			check_reply(what, &p, nt->af, OUT, OUT_LEN, RCODE_NXDOMAIN);
		reasons[r]++;
		verdicts[e.verdict]++;
	}
	f->use_xdp = 0;
	print_message("# fuzz: %llu answered, %llu passed; queries %llu",
		      (unsigned long long)verdicts[XDP_TX],
		      (unsigned long long)verdicts[XDP_PASS],
		      (unsigned long long)reasons[0]);
	for (i = BG_CNT_DNS_RESPONSE; i <= BG_CNT_DNS_TRUNCATED; i++)
		print_message(", %s %llu", bg_counter_names[i],
			      (unsigned long long)reasons[i]);
	print_message("\n");
	assert_true(verdicts[XDP_TX] > 0 && verdicts[XDP_PASS] > 0);
	for (i = BG_CNT_DNS_RESPONSE; i <= BG_CNT_DNS_TRUNCATED; i++)
		if (!reasons[i])
			fail_msg("fuzz never produced %s", bg_counter_names[i]);
}

/* ---- Label words: the datapath's hashes read back from its scratch -------- */

/* Offsets in struct bg_dns_scratch (bpf/dns.h), from the program's BTF. */
struct scratch_layout {
	size_t size, stride; /* value size; per-CPU stride in a lookup */
	size_t hdr, n, seed, lh, suf, exact, nsuf;
};

static size_t btf_member_off(const struct btf *btf, const struct btf_type *t,
			     const char *name)
{
	const struct btf_member *m = btf_members(t);
	__u16 i;

	for (i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), name))
			return btf_member_bit_offset(t, i) / 8;
	fail_msg("struct bg_dns_scratch has no member %s", name);
	return 0;
}

static void scratch_layout(const struct fx *f, struct scratch_layout *L)
{
	const struct btf *btf = bpf_object__btf(f->skel->obj);
	const struct btf_type *t;
	int id;

	assert_non_null(btf);
	id = btf__find_by_name_kind(btf, "bg_dns_scratch", BTF_KIND_STRUCT);
	assert_true(id > 0);
	t = btf__type_by_id(btf, (__u32)id);
	L->size = bpf_map__value_size(f->skel->maps.bg_dns_scratch);
	assert_int_equal(L->size, t->size);
	L->stride = (L->size + 7) & ~(size_t)7;
	L->hdr = btf_member_off(btf, t, "hdr");
	L->n = btf_member_off(btf, t, "n");
	L->seed = btf_member_off(btf, t, "seed");
	L->lh = btf_member_off(btf, t, "lh");
	L->suf = btf_member_off(btf, t, "suf");
	L->exact = btf_member_off(btf, t, "exact");
	L->nsuf = btf_member_off(btf, t, "nsuf");
}

/* Byte values seen by check_label_hashes at each offset in a label buffer
 * (1..63) of a label the datapath hashed, and at each offset modulo 8 in
 * the message (the word lanes, read by the exact hash and the labels). */
static __u8 SEEN_OFF[256][BG_DNS_LABEL_BUF], SEEN_LANE[256][8];

/* Reference hashes of a well-formed wire name, from the definition
 * (bloomgate/dns.h) with the byte interface of the hash only: the exact
 * hash of the lowercased wire form zero padded to 32-byte stripes; the
 * label buffers [len, bytes with A-Z lowercased, zeros], then the suffix
 * chain over the pair's bytes. Returns the number of labels. */
static int ref_label_hashes(const __u8 *w, __u64 seed, __u64 *exact, __u64 *lh,
			    __u64 *suf)
{
	__u8 ew[BG_DNS_EXACT_MAX] = { 0 };
	size_t pos = 0;
	int n = 0, j;

	while (w[pos]) {
		__u8 buf[BG_DNS_LABEL_BUF] = { 0 };
		size_t l = w[pos], i;

		assert_true(l <= BG_DNS_LABEL_MAX);
		buf[0] = (__u8)l;
		for (i = 0; i < l; i++) {
			__u8 c = w[pos + 1 + i];

			buf[1 + i] = c >= 'A' && c <= 'Z' ? (__u8)(c | 0x20) : c;
			SEEN_LANE[c][(pos + 1 + i) % 8] = 1;
		}
		lh[n++] = bg_hash64(buf, sizeof(buf), seed);
		memcpy(ew + pos, buf, 1 + l);
		pos += 1 + l;
	}
	*exact = bg_hash64(ew, (__u32)((pos + 1 + 31) / 32 * 32), seed);
	suf[n] = 0;
	for (j = n - 1; j >= 0; j--) {
		__u64 pair[2] = { lh[j], suf[j + 1] };

		suf[j] = bg_hash64(pair, sizeof(pair), seed);
	}
	return n;
}

/* The dotted form of wire name w when it has one (no '.' or NUL in a
 * label), for the builder's bg_name_hashes. */
static int wire_dotted(const __u8 *w, char *out)
{
	size_t pos = 0, o = 0, i;

	while (w[pos]) {
		for (i = 0; i < w[pos]; i++) {
			__u8 c = w[pos + 1 + i];

			if (c == '.' || !c)
				return 0;
			out[o++] = (char)c;
		}
		pos += 1 + w[pos];
		out[o++] = w[pos] ? '.' : 0;
	}
	return 1;
}

/* Fills n > 1 wire bytes with labels of label bytes from *next (cycling
 * through all 256 values); returns the bytes written. */
static size_t fill_labels(__u8 *w, size_t n, unsigned int *next, size_t maxl)
{
	size_t o = 0;

	while (o < n) {
		size_t t = n - o > maxl + 1 ? maxl + 1 : n - o, i;

		if (n - o - t == 1) /* leave no single byte: a label takes 2 */
			t--;
		w[o++] = (__u8)(t - 1);
		for (i = 1; i < t; i++)
			w[o++] = (__u8)(*next)++;
	}
	return o;
}

/*
 * Runs the query with wire name w (qlen bytes with the root) through
 * bloomgate_dns after filling every CPU's scratch value with pattern, and
 * checks the exact hash and the label and suffix hashes it left there
 * against ref_label_hashes, and against the builder's bg_name_hashes when
 * the name has a dotted form. The datapath hashes only the labels of the
 * suffixes it probes (bpf/dns.h, bg_dns_suffixes): depth d while d < n,
 * d <= BG_DNS_SUFFIX_MAX and the filter has a SUBS depth >= d; after a
 * positive with a name allowlist, every such d. Exactly those are checked,
 * and the count too (no more work than that).
 */
static void check_label_hashes(struct fx *f, const struct scratch_layout *L,
			       __u8 *pcpu, int ncpu, int cpu, const __u8 *w,
			       size_t wl, int pattern, const struct dnsq *tmpl,
			       const char *what)
{
	const struct bg_filter_header *h = f->mem;
	__u64 lh[BG_DNS_LABELS_MAX + 1], suf[BG_DNS_LABELS_MAX + 1];
	__u64 bsuf[BG_DNS_LABELS_MAX + 1], v, ex, bex;
	static __u16 id = 0x4000;
	char dotted[300];
	struct dnsq q = *tmpl;
	struct exp e = e_pass();
	const __u8 *sv;
	struct pkt p;
	__u32 key = 0, sn, nsuf;
	int n, i, d, bn, probes, listed = 0;
	size_t pos, k;

	q.wire = w;
	q.wire_len = wl;
	q.id = ++id;
	n = ref_label_hashes(w, h->seed, &ex, lh, suf);
	if (wire_dotted(w, dotted)) {
		assert_int_equal(bg_name_hashes(dotted, h->seed, &bex, bsuf, &bn), 0);
		assert_int_equal(bn, n);
		if (bex != ex)
			fail_msg("%s: builder exact hash differs from the reference",
				 what);
		for (i = 0; i <= n; i++)
			if (bsuf[i] != suf[i])
				fail_msg("%s: builder S_%d differs from the reference",
					 what, i + 1);
	}
	/* the probe model over the reference hashes */
	probes = 1;
	listed = has_key(f, BG_KEY_NAME_EXACT, ex);
	for (i = 1; i <= BG_DNS_SUFFIX_MAX && i < n && !listed; i++) {
		if (!depth_on(f, i))
			continue;
		probes++;
		listed = has_key(f, BG_KEY_NAME_SUBS, suf[n - i]);
	}
	/* the suffixes the datapath hashes */
	for (d = 0; d + 1 < n && d + 1 <= BG_DNS_SUFFIX_MAX &&
		    (h->subs_depths >> (d + 1));
	     d++)
		;
	if (listed && h->allown_n)
		while (d + 1 < n && d + 1 <= BG_DNS_SUFFIX_MAX)
			d++;
	e.cnt[BG_CNT_DNS_QUERIES] = 1;
	e.cnt[BG_CNT_DNS_PROBES] = (__u64)probes;
	e.cnt[listed ? BG_CNT_DNS_POSITIVES : BG_CNT_DNS_NEGATIVES] = 1;
	if (listed) {
		e.verdict = XDP_TX;
		e.cnt[BG_CNT_PASSED] = 0;
		e.cnt[BG_CNT_ANSWERED] = 1;
		e.rewritten = 1;
	}
	build_dns(&p, NET4, 53, &q);

	if (pattern >= 0)
		memset(pcpu, pattern, (size_t)ncpu * L->stride);
	else
		for (i = 0; i < ncpu * (int)L->stride; i++)
			pcpu[i] = (__u8)rnd();
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(f->skel->maps.bg_dns_scratch),
					     &key, pcpu, BPF_ANY), 0);
	run(f, p.buf, p.len, &e, "%s", what);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.bg_dns_scratch),
					     &key, pcpu), 0);
	sv = pcpu + (size_t)cpu * L->stride;
	if (get16(sv + L->hdr) != id)
		fail_msg("%s: CPU %d's scratch does not hold the query", what, cpu);
	memcpy(&sn, sv + L->n, sizeof(sn));
	memcpy(&v, sv + L->seed, sizeof(v));
	if ((int)sn != n || v != h->seed)
		fail_msg("%s: %u labels, seed %#llx in the scratch; expected %d, %#llx",
			 what, sn, (unsigned long long)v, n,
			 (unsigned long long)h->seed);
	memcpy(&v, sv + L->exact, sizeof(v));
	if (v != ex)
		fail_msg("%s: exact hash %#llx, expected %#llx", what,
			 (unsigned long long)v, (unsigned long long)ex);
	memcpy(&nsuf, sv + L->nsuf, sizeof(nsuf));
	if ((int)nsuf != d)
		fail_msg("%s: %u suffixes hashed, expected %d (%d labels, depths %#x)",
			 what, nsuf, d, n, h->subs_depths);
	for (i = n - d; i < n; i++) {
		memcpy(&v, sv + L->lh + 8 * (size_t)i, sizeof(v));
		if (v != lh[i])
			fail_msg("%s: label %d hash %#llx, expected %#llx", what, i + 1,
				 (unsigned long long)v, (unsigned long long)lh[i]);
		/* the bytes of this label went through the label words */
		for (pos = 0, k = 0; k < (size_t)i; k++)
			pos += 1 + w[pos];
		for (k = 0; k < w[pos]; k++)
			SEEN_OFF[w[pos + 1 + k]][1 + k] = 1;
	}
	for (i = n - d; i <= n; i++) {
		memcpy(&v, sv + L->suf + 8 * (size_t)i, sizeof(v));
		if (v != suf[i])
			fail_msg("%s: S_%d %#llx, expected %#llx", what, i + 1,
				 (unsigned long long)v, (unsigned long long)suf[i]);
	}
}

/*
 * The datapath reads each label's buffer as 8 words of the lowercased name
 * at the label's offset, masked to the label: every label length 1..63,
 * every byte value at every offset in a label and in a word (including
 * '@' '[' '`' '{', 0x80-0xff, '.', NUL and length-like bytes; checked
 * below), labels
 * ending at the last byte of the longest name, the question at the end of
 * the message or cut at the copy limit, and stale bytes of every kind in
 * the scratch past the copied bytes: the hashes must be the definition's.
 */
static void test_label_words(void **state)
{
	static const __u8 edns_opts[48] = { 0, 10, 0, 44 }; /* a long cookie */
	struct fx *f = *state;
	static const int patterns[] = { 0, 0xff, 'A', 'Z', 0x3f, -1 };
	struct dnsq plain = { .flags = 0x0100, .qd = 1 };
	struct dnsq edns = plain;
	struct scratch_layout L;
	cpu_set_t old, one;
	unsigned int next = 0;
	int ncpu = libbpf_num_possible_cpus(), cpu, checks = 0;
	size_t len, o;
	__u8 *pcpu, w[300];
	char what[128];

	edns.edns = 1;
	edns.edns_opts = edns_opts;
	edns.edns_opts_len = sizeof(edns_opts);
	assert_true(ncpu > 0);
	scratch_layout(f, &L);
	pcpu = calloc((size_t)ncpu, L.stride);
	assert_non_null(pcpu);
	/* stay on one CPU: the run uses that CPU's scratch value */
	assert_int_equal(sched_getaffinity(0, sizeof(old), &old), 0);
	cpu = sched_getcpu();
	assert_true(cpu >= 0 && cpu < ncpu);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);

	/* one label of each length, alone and as the last label of a 255-byte
	 * name (its window runs 61 bytes past the question's copy), with and
	 * without a long EDNS record after the question (copy cut at 270) */
	for (len = 1; len <= BG_DNS_LABEL_MAX; len++) {
		const struct dnsq *t = len & 1 ? &edns : &plain;

		w[0] = (__u8)len;
		for (o = 0; o < len; o++)
			w[1 + o] = (__u8)("AbCdEfGhIjKlMnOpQrStUvWxYz0-9_"[(len + o) % 30]);
		w[1 + len] = 0;
		snprintf(what, sizeof(what), "one %zu-byte label", len);
		check_label_hashes(f, &L, pcpu, ncpu, cpu, w, len + 2,
				   patterns[len % ARRAY_SIZE(patterns)], t, what);
		o = fill_labels(w, BG_DNS_NAME_MAX - 2 - len, &next, BG_DNS_LABEL_MAX);
		w[o++] = (__u8)len;
		for (size_t i = 0; i < len; i++)
			w[o++] = (__u8)(next++);
		w[o++] = 0;
		assert_int_equal(o, BG_DNS_NAME_MAX);
		snprintf(what, sizeof(what), "255-byte name ending in a %zu-byte label",
			 len);
		check_label_hashes(f, &L, pcpu, ncpu, cpu, w, o,
				   patterns[(len + 1) % ARRAY_SIZE(patterns)], t, what);
		checks += 2;
	}
	/* every byte value at every offset: 4 names per start byte; in the
	 * first 256 the last label (the datapath hashes the last labels only)
	 * has 63 bytes from the start byte, then the label lengths and the
	 * name's length vary */
	for (len = 0; len < 256 * 4; len++) {
		size_t maxl = len < 256 ? BG_DNS_LABEL_MAX :
					  1 + (len * 7) % BG_DNS_LABEL_MAX;

		next = (unsigned int)len;
		if (len < 256) {
			o = fill_labels(w, BG_DNS_NAME_MAX - 1 - 64 - (len % 5) * 40,
					&next, maxl);
			next = (unsigned int)len;
			w[o++] = BG_DNS_LABEL_MAX;
			while (o < BG_DNS_NAME_MAX - 1 - (len % 5) * 40)
				w[o++] = (__u8)(next++);
		} else {
			o = fill_labels(w, BG_DNS_NAME_MAX - 1 - (len % 5) * 40,
					&next, maxl);
		}
		w[o++] = 0;
		snprintf(what, sizeof(what), "byte sweep %zu (labels <= %zu, %zu bytes)",
			 len, maxl, o);
		check_label_hashes(f, &L, pcpu, ncpu, cpu, w, o,
				   patterns[len % ARRAY_SIZE(patterns)],
				   len & 1 ? &edns : &plain, what);
		checks++;
	}
	/* the exact hash over every stripe count and padding: every label
	 * count of one-byte labels (1..127), and every wire length (3..255)
	 * in labels of up to 63 bytes */
	for (len = 1; len <= BG_DNS_LABELS_MAX; len++) {
		next = (unsigned int)(len * 3);
		o = fill_labels(w, 2 * len, &next, 1);
		w[o++] = 0;
		snprintf(what, sizeof(what), "%zu one-byte labels", len);
		check_label_hashes(f, &L, pcpu, ncpu, cpu, w, o,
				   patterns[len % ARRAY_SIZE(patterns)],
				   len & 1 ? &edns : &plain, what);
		checks++;
	}
	for (len = 3; len <= BG_DNS_NAME_MAX; len++) {
		next = (unsigned int)(len * 5);
		o = fill_labels(w, len - 1, &next, BG_DNS_LABEL_MAX);
		w[o++] = 0;
		assert_int_equal(o, len);
		snprintf(what, sizeof(what), "a %zu-byte name", len);
		check_label_hashes(f, &L, pcpu, ncpu, cpu, w, o,
				   patterns[(len + 3) % ARRAY_SIZE(patterns)],
				   len & 1 ? &plain : &edns, what);
		checks++;
	}
	/* 127 one-byte labels of every value */
	for (len = 0; len < 4; len++) {
		next = (unsigned int)(len * 127);
		o = fill_labels(w, BG_DNS_NAME_MAX - 1, &next, 1);
		w[o++] = 0;
		snprintf(what, sizeof(what), "127 one-byte labels from %zu", len * 127);
		check_label_hashes(f, &L, pcpu, ncpu, cpu, w, o, patterns[len], &plain,
				   what);
		checks++;
	}
	assert_int_equal(sched_setaffinity(0, sizeof(old), &old), 0);
	free(pcpu);
	for (len = 0; len < 256; len++) {
		for (o = 1; o < BG_DNS_LABEL_BUF; o++)
			if (!SEEN_OFF[len][o])
				fail_msg("byte %#zx never at label offset %zu", len, o);
		for (o = 0; o < 8; o++)
			if (!SEEN_LANE[len][o])
				fail_msg("byte %#zx never in word lane %zu", len, o);
	}
	print_message("# label words: %d names checked against the definition\n",
		      checks);
}

/* A filter without name keys (addresses only) is not probed for names:
 * its bits would answer at its false-positive rate; bloomgate_xdp does
 * not tail-call for it. */
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
	assert_int_equal(bg_filter_plan(BL(&l, NULL, NULL), FUNC_FPR, &p), 0);
	assert_int_equal(p.name_keys, 0);
	assert_int_equal(p.n4, 1);
	assert_int_equal(p.short4, 0);
	fd = bg_filter_create(&p, SEED, BL(&l, NULL, NULL));
	assert_true(fd >= 0);
	assert_int_equal(bg_filter_publish(f->filters, fd), 0);
	close(fd);
	bg_list_free(&l);
	e.cnt[BG_CNT_DNS_QUERIES] = 1;
	build_dns(&pk, NET4, 53, &q);
	run(f, pk.buf, pk.len, &e, "address-only filter");
	/* bloomgate_xdp: judged by address only, no tail call */
	f->use_xdp = 1;
	e = e_pass();
	e.cnt[BG_CNT_PACKETS] = 1;
	e.cnt[BG_CNT_IPV4] = 1;
	e.cnt[BG_CNT_PROBES] = 1;
	e.cnt[BG_CNT_NEGATIVES] = 1;
	run(f, pk.buf, pk.len, &e, "address-only filter (bloomgate_xdp)");
	f->use_xdp = 0;
}

/* ---- Tests: suffix depths (subs_depths) ------------------------------------ */

/* Probes of name through bloomgate_dns (BPF_PROG_TEST_RUN, every network
 * shape: expect_name checks dns_probes against the model) and in
 * userspace (bg_filter_test_name_probes): both must be `probes`. */
static void expect_probes(struct fx *f, const char *name, int listed, int probes)
{
	__u32 up = 0;
	int m, mp;

	m = model(f, name, &mp);
	assert_int_equal(m, listed);
	if (mp != probes)
		fail_msg("%s: model makes %d probes, expected %d", name, mp, probes);
	expect_name(f, name, listed);
	assert_int_equal(bg_filter_test_name_probes(f->mem, name, NULL, &up), listed);
	if ((int)up != probes)
		fail_msg("%s: userspace makes %u probes, expected %d", name, up, probes);
}

static void republish(struct fx *f, const struct entry *e, size_t ne)
{
	if (f->mem)
		bg_filter_unmap(f->mem, f->len);
	f->mem = NULL;
	publish(f, e, ne, NULL, 0, NULL);
}

static void test_depths(void **state)
{
	static struct entry depth2[] = {
		{ "tracker.net", E_SUBS, 0 },
		{ "evil.org", E_TREE, 0 },
		{ "ads.example.com", E_EXACT, 0 }, /* exact: no depth */
		{ "good.evil.org", E_TREE, 1 }, /* allow: no depth */
	};
	static struct entry depth10[] = { { NULL, E_SUBS, 0 } };
	static struct entry none[] = { { "ads.example.com", E_EXACT, 0 },
				       { "a.b.c.d.e.example.com", E_EXACT, 0 } };
	const struct bg_filter_header *h;
	struct fx *f = *state;
	char buf[300];

	/* SUBS rules at depth 2 only: a 6-label name makes 2 probes */
	republish(f, depth2, ARRAY_SIZE(depth2));
	h = f->mem;
	assert_int_equal(h->subs_depths, 1U << 2);
	expect_probes(f, "a.b.c.d.nothing.test", 0, 2);
	expect_probes(f, "a.b.c.d.www.tracker.net", 1, 2);
	expect_probes(f, "a.b.c.d.www.evil.org", 1, 2);
	expect_probes(f, "a.b.c.ads.example.com", 0, 2);
	expect_probes(f, "ads.example.com", 1, 1);
	expect_probes(f, "x.evil.org", 1, 2);
	expect_probes(f, "evil.org", 1, 1);
	expect_probes(f, "org", 0, 1); /* no proper suffix */
	expect_probes(f, "example.com", 0, 1); /* depth 2 is the name */
	/* the allow table is still searched at every depth */
	expect_name_allowed(f, "a.b.good.evil.org", 1, 1);

	/* a rule of 10 labels (the deepest probed) matches an 11-label name */
	depth10[0].name = B10;
	republish(f, depth10, ARRAY_SIZE(depth10));
	h = f->mem;
	assert_int_equal(h->subs_depths, 1U << 10);
	snprintf(buf, sizeof(buf), "x.%s", B10);
	expect_probes(f, buf, 1, 2);
	expect_probes(f, B127, 1, 2);
	expect_probes(f, B10, 0, 1); /* itself: not a subdomain */
	snprintf(buf, sizeof(buf), "x.%s", C11 + 2); /* 11 labels, not listed */
	expect_probes(f, buf, 0, 2);
	{
		int at = -1;

		snprintf(buf, sizeof(buf), "x.%s", B10);
		assert_int_equal(bg_filter_test_name(f->mem, buf, &at), 1);
		assert_int_equal(at, 1);
	}

	/* no SUBS key: the mask is 0, only the exact probe */
	republish(f, none, ARRAY_SIZE(none));
	h = f->mem;
	assert_int_equal(h->subs_depths, 0);
	expect_probes(f, "a.b.c.d.e.f.g.h.i.j.k.l", 0, 1);
	expect_probes(f, "x.ads.example.com", 0, 1);
	expect_probes(f, "ads.example.com", 1, 1);
	expect_probes(f, "a.b.c.d.e.example.com", 1, 1);
	expect_probes(f, "com", 0, 1);
}

/*
 * bloomgate_dns and userspace (bg_filter_test_name_probes, the same
 * bg_name_listed) agree on the verdict and on dns_probes, for names of 1
 * to 13 labels, listed or not, under every mask subs_depths can hold: the
 * header element of the published map is rewritten in place per mask (the
 * bits stay those of depths 2, 3 and 10), and the userspace copy with it.
 * The masks make every combination of skipped depths and early stops.
 */
static void test_probes_agree(void **state)
{
	static struct entry rules[] = {
		{ "evil.org", E_TREE, 0 }, /* depth 2 */
		{ "b.c.example", E_SUBS, 0 }, /* depth 3 */
		{ NULL, E_SUBS, 0 }, /* B10: depth 10 */
	};
	static const char *const names[] = {
		"nothing", "a.nothing", "a.b.c.d.nothing", "evil.org",
		"x.evil.org", "a.b.c.d.e.f.g.h.i.j.k.evil.org", "x.b.c.example",
		"x.y.z.b.c.example", "b.c.example",
		"1.2.3.4.5.6.7.8.9.10.11.12.13",
		NULL, /* "x." B10 */
	};
	LIBBPF_OPTS(bpf_map_create_opts, opts,
		    .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	struct fx *f = *state;
	struct bg_filter_header *h;
	struct bg_filter_params p;
	struct bg_names bn;
	struct bg_list l;
	char deep[64];
	__u32 m, k, listed_n = 0;
	size_t i;
	void *mem;
	int fd;

	rules[2].name = B10;
	snprintf(deep, sizeof(deep), "x.%s", B10);
	fill_names(&bn, rules, ARRAY_SIZE(rules));
	bg_list_init(&l);
	bg_list_finish(&l);
	assert_int_equal(bg_filter_plan(BL(&l, NULL, &bn), FUNC_FPR, &p), 0);
	mem = calloc(p.nelems, BG_FILTER_VALUE_SIZE);
	assert_non_null(mem);
	bg_filter_build(mem, &p, SEED, BL(&l, NULL, &bn));
	h = mem;
	assert_int_equal(h->subs_depths, (1U << 2) | (1U << 3) | (1U << 10));
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bg_filter", sizeof(__u32),
			    BG_FILTER_VALUE_SIZE, p.nelems, &opts);
	assert_true(fd >= 0);
	for (k = 0; k < p.nelems; k++)
		assert_int_equal(bpf_map_update_elem(fd, &k, (char *)mem + 64 * k,
						     BPF_ANY), 0);
	assert_int_equal(bg_filter_publish(f->filters, fd), 0);
	f->use_xdp = 0;
	for (m = 0; m <= BG_SUBS_DEPTHS_ALL; m += 2) {
		k = 0;
		h->subs_depths = (__u16)m;
		assert_int_equal(bpf_map_update_elem(fd, &k, mem, BPF_ANY), 0);
		for (i = 0; i < ARRAY_SIZE(names); i++) {
			const char *name = names[i] ? names[i] : deep;
			struct dnsq q = Q(name);
			struct exp e = { .verdict = XDP_PASS };
			struct pkt pk;
			__u32 up = 99;
			int listed;

			listed = bg_filter_test_name_probes(mem, name, NULL, &up);
			assert_true(listed == 0 || listed == 1);
			listed_n += (__u32)listed;
			e.cnt[BG_CNT_DNS_QUERIES] = 1;
			e.cnt[BG_CNT_DNS_PROBES] = up;
			if (listed) { /* C_DROP */
				e.verdict = XDP_DROP;
				e.cnt[BG_CNT_DNS_POSITIVES] = 1;
				e.cnt[BG_CNT_DROPPED] = 1;
			} else {
				e.cnt[BG_CNT_DNS_NEGATIVES] = 1;
				e.cnt[BG_CNT_PASSED] = 1;
			}
			build_dns(&pk, NET4, 53, &q);
			run(f, pk.buf, pk.len, &e,
			    "subs_depths %#x, %s: userspace %s, %u probes", m,
			    name, listed ? "listed" : "not listed", up);
		}
	}
	/* the masks reached both verdicts (evil.org is listed at any mask) */
	assert_true(listed_n > 512 && listed_n < 512 * ARRAY_SIZE(names));
	close(fd);
	free(mem);
	free(bn.v);
	bg_list_free(&l);
}

/*
 * Headers the datapath must not judge by. A header with subs_depths bits
 * the builder never sets (0, above BG_DNS_SUFFIX_MAX) fails bg_header_ok(),
 * which bg_filter_create() applies before anything is published, and every
 * userspace reader: it never reaches the datapath. A header of another
 * magic, ABI version or layout is refused per packet (bg_header_current):
 * queries pass unjudged, bloomgate_xdp counts no_filter.
 */
static void test_depths_bad_header(void **state)
{
	static const struct {
		__u16 depths; /* or'ed into subs_depths */
		int byte; /* header byte xor'ed with x, -1: none */
		__u8 x;
	} bad[] = {
		{ 1U << 11, -1, 0 }, { 1U << 15, -1, 0 }, { 1U << 0, -1, 0 },
		{ 0xffff, -1, 0 },
		{ 0, 0, 0x01 }, /* magic */
		{ 0, 3, 0x80 }, /* magic */
		{ 0, 4, 0x07 }, /* abi_version */
		{ 0, 5, 0x02 }, /* layout */
	};
	LIBBPF_OPTS(bpf_map_create_opts, opts,
		    .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	struct bg_list_opts lo = { .strict = 1 };
	struct fx *f = *state;
	struct bg_filter_params p;
	struct bg_names names;
	struct bg_list l;
	struct dnsq q = Q("www.evil.org");
	struct pkt pk;
	size_t b, i;

	fill_names(&names, ENTRIES, 3);
	bg_list_init(&l);
	assert_int_equal(bg_list_parse_buf(&l, "a", "198.51.100.7\n", 13, &lo), 0);
	bg_list_finish(&l);
	assert_int_equal(bg_filter_plan(BL(&l, NULL, &names), FUNC_FPR, &p), 0);
	for (b = 0; b <= ARRAY_SIZE(bad); b++) {
		int good = b == ARRAY_SIZE(bad);
		struct bg_filter_header *h;
		struct exp e = e_pass();
		void *mem = calloc(p.nelems, BG_FILTER_VALUE_SIZE);
		int fd;

		assert_non_null(mem);
		bg_filter_build(mem, &p, SEED, BL(&l, NULL, &names));
		h = mem;
		assert_int_equal(h->subs_depths, 1U << 2);
		assert_true(bg_header_ok(h) && bg_header_current(h));
		if (!good) {
			h->subs_depths |= bad[b].depths;
			if (bad[b].byte >= 0)
				((__u8 *)h)[bad[b].byte] ^= bad[b].x;
		}
		/* userspace: refused by the whole check */
		assert_int_equal(bg_header_ok(h), good);
		assert_int_equal(bg_filter_test_name(mem, "www.evil.org", NULL), good);
		assert_int_equal(bg_filter_test4(mem, htonl(0xc6336407)), good);
		if (!good && bad[b].byte < 0) {
			free(mem); /* never published: nothing for the datapath */
			continue;
		}
		assert_int_equal(bg_header_current(h), good);
		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bg_filter", sizeof(__u32),
				    BG_FILTER_VALUE_SIZE, p.nelems, &opts);
		assert_true(fd >= 0);
		for (i = 0; i < p.nelems; i++) {
			__u32 k = (__u32)i;

			assert_int_equal(bpf_map_update_elem(fd, &k,
							     (char *)mem + 64 * i,
							     BPF_ANY), 0);
		}
		assert_int_equal(bg_filter_publish(f->filters, fd), 0);
		close(fd);
		free(mem);
		/* bloomgate_dns: no filter, the query passes unjudged */
		f->use_xdp = 0;
		e.cnt[BG_CNT_DNS_QUERIES] = 1;
		if (good) { /* the good header: answered */
			e.cnt[BG_CNT_DNS_PROBES] = 2;
			e.cnt[BG_CNT_DNS_POSITIVES] = 1;
			e.cnt[BG_CNT_PASSED] = 0;
			e.cnt[BG_CNT_ANSWERED] = 1;
			e.verdict = XDP_TX;
			e.rewritten = 1;
		}
		build_dns(&pk, NET4, 53, &q);
		run(f, pk.buf, pk.len, &e, "bad header %zu", b);
		if (good)
			continue;
		/* bloomgate_xdp: no_filter, no tail call */
		f->use_xdp = 1;
		e = e_pass();
		e.cnt[BG_CNT_PACKETS] = 1;
		e.cnt[BG_CNT_IPV4] = 1;
		e.cnt[BG_CNT_NO_FILTER] = 1;
		run(f, pk.buf, pk.len, &e, "bad header %zu (bloomgate_xdp)", b);
	}
	f->use_xdp = 0;
	free(names.v);
	bg_list_free(&l);
}

/* ---- Tests: answers --------------------------------------------------------- */

/* IP header fields of the query that the answer keeps, sets or clears. */
static void test_reply_ip_fields(void **state)
{
	struct fx *f = *state;
	const struct qp qps[] = {
		{ .n = NET4, .tos = 0xbb, .ttl = 7, .ip_id = 0xbeef,
		  .frag_off = 0x4000 },
		{ .n = &NETS[2], .ihl = 6, .tos = 0x03, .ttl = 255, .ip_id = 1 },
		{ .n = &NETS[3], .ihl = 15, .frag_off = 0x8000 | 0x4000 },
		{ .n = &NETS[1], .ttl = 1, .pad = 3, .src = "10.1.2.3",
		  .dst = "172.31.255.254" },
		{ .n = NET6, .tclass = 0xb7, .flow = 0xabcde, .hop = 3 },
		{ .n = &NETS[7], .tclass = 0x01, .flow = 0xfffff, .hop = 255,
		  .src = "fe80::1:2:3:4", .dst = "ff02::fb" },
		{ .n = &NETS[5], .tclass = 0xfc, .pad = 60 },
	};
	size_t i;
	int edns;

	for (i = 0; i < ARRAY_SIZE(qps); i++) {
		for (edns = 0; edns < 2; edns++) {
			struct dnsq q = Q("www.evil.org");
			char what[96];

			q.edns = edns;
			snprintf(what, sizeof(what), "ip fields %zu %s%s", i,
				 net_name(qps[i].n), edns ? " edns" : "");
			judge(f, &qps[i], &q, q.name, 1, 0, what);
		}
	}
}

/* DNS header bits, ID, QTYPE and the client's case (0x20) in the answer. */
static void test_reply_dns_fields(void **state)
{
	struct fx *f = *state;
	static const __u16 flags[] = {
		0x0000, /* RD 0: RA 0 */
		0x0100, /* RD 1: RA 1 */
		0x0110, /* RD, CD: CD copied */
		0x0010, /* CD alone */
		0x0020, /* AD: cleared */
		0x0080, /* RA without RD: RA 0 */
		0x0040, /* Z: cleared */
		0x0600, /* AA, TC: cleared */
		0x07ff, /* everything but QR and OPCODE, RCODE 15 */
	};
	static const __u16 ids[] = { 0xffff, 0x0001, 0x8000 };
	static const __u16 qtypes[] = { 28, 65, 255, 41 };
	const struct net *nets[] = { NET4, NET6, &NETS[3] };
	size_t i, j;
	char what[96];

	for (j = 0; j < ARRAY_SIZE(nets); j++) {
		struct qp qp = { .n = nets[j] };

		for (i = 0; i < ARRAY_SIZE(flags); i++) {
			struct dnsq q = Q("ads.example.com");

			q.flags = flags[i];
			snprintf(what, sizeof(what), "flags %#06x %s", flags[i],
				 net_name(nets[j]));
			judge(f, &qp, &q, q.name, 1, 0, what);
			q.edns = 1;
			judge(f, &qp, &q, q.name, 1, 0, what);
		}
		for (i = 0; i < ARRAY_SIZE(ids); i++) {
			struct dnsq q = Q("ads.example.com");

			q.id = ids[i];
			snprintf(what, sizeof(what), "id %#x %s", ids[i],
				 net_name(nets[j]));
			judge(f, &qp, &q, q.name, 1, 0, what);
		}
		for (i = 0; i < ARRAY_SIZE(qtypes); i++) {
			struct dnsq q = Q("a.tracker.net");

			q.qtype = qtypes[i];
			snprintf(what, sizeof(what), "qtype %u %s", qtypes[i],
				 net_name(nets[j]));
			judge(f, &qp, &q, q.name, 1, 0, what);
		}
		{
			struct dnsq q = Q("aDs.ExAmPlE.cOm");

			snprintf(what, sizeof(what), "0x20 case %s", net_name(nets[j]));
			judge(f, &qp, &q, q.name, 1, 0, what);
		}
	}
}

/* EDNS (RFC 6891): the answer carries its own OPT record exactly when the
 * query has one right after the question. */
static void test_reply_edns(void **state)
{
	struct fx *f = *state;
	static const __u8 cookie[] = { 0, 10, 0, 8, 0xc1, 0xc2, 0xc3, 0xc4,
				       0xc5, 0xc6, 0xc7, 0xc8 };
	static const __u8 cookie_ecs[] = { 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8,
					   0, 8, 0, 7, 0, 1, 24, 0, 192, 0, 2 };
	/* a TSIG-like record: owner "k", TYPE 250 */
	static const __u8 tsig[] = { 1, 'k', 0, 0, 250, 0, 255, 0, 0, 0, 0, 0, 0 };
	/* an OPT-typed record whose owner is not the root */
	static const __u8 not_root[] = { 1, 'a', 0, 0, 41, 16, 0, 0, 0, 0, 0, 0, 0 };
	static const __u8 junk[] = { 0xde, 0xad, 0xbe, 0xef, 0, 0, 41 };
	const struct net *nets[] = { NET4, NET6, &NETS[3], &NETS[7] };
	struct {
		const char *what;
		struct dnsq q;
	} cases[] = {
		{ "edns", { .edns = 1 } },
		{ "edns DO", { .edns = 1, .edns_do = 1 } },
		{ "edns cookie", { .edns = 1, .edns_opts = cookie,
				   .edns_opts_len = sizeof(cookie) } },
		{ "edns cookie+ecs DO", { .edns = 1, .edns_do = 1,
					  .edns_opts = cookie_ecs,
					  .edns_opts_len = sizeof(cookie_ecs) } },
		{ "edns version 1: BADVERS", { .edns = 1, .edns_version = 1 } },
		{ "edns version 255 DO: BADVERS", { .edns = 1, .edns_version = 255,
						    .edns_do = 1 } },
		{ "edns with ANCOUNT 1: no OPT", { .edns = 1, .an = 1 } },
		{ "edns with NSCOUNT 1: no OPT", { .edns = 1, .ns = 1 } },
		{ "OPT then TSIG, ARCOUNT 2", { .edns = 1, .ar = 2, .extra = tsig,
						.extra_len = sizeof(tsig) } },
		{ "OPT cut to 10 bytes: no OPT", { .edns = 1, .edns_cut = 10 } },
		{ "OPT cut to 3 bytes: no OPT", { .edns = 1, .edns_cut = 3 } },
		{ "OPT fixed part only, options cut", { .edns = 1, .edns_cut = 13,
							.edns_opts = cookie,
							.edns_opts_len = sizeof(cookie) } },
		{ "TSIG only: no OPT", { .ar = 1, .extra = tsig,
					 .extra_len = sizeof(tsig) } },
		{ "OPT type, owner not root: no OPT", { .ar = 1, .extra = not_root,
							.extra_len = sizeof(not_root) } },
		{ "trailing bytes, ARCOUNT 0", { .extra = junk,
						 .extra_len = sizeof(junk) } },
		{ "ARCOUNT 1, nothing after the question", { .ar = 1 } },
	};
	size_t i, j;

	for (j = 0; j < ARRAY_SIZE(nets); j++) {
		struct qp qp = { .n = nets[j] };

		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			const char *names[] = { "www.evil.org", NAME255 };
			size_t k;

			for (k = 0; k < ARRAY_SIZE(names); k++) {
				struct dnsq q = cases[i].q;
				char what[400];

				q.flags = 0x0100;
				q.qd = 1;
				q.name = names[k];
				snprintf(what, sizeof(what), "%s %s %s", cases[i].what,
					 net_name(nets[j]),
					 k ? "255-byte name" : q.name);
				judge(f, &qp, &q, q.name, 1, 0, what);
			}
		}
	}
	/* the longest answer: 255-byte name, OPT */
	{
		struct qp qp = { .n = &NETS[7] };
		struct dnsq q = Q(NAME255);

		q.edns = 1;
		q.edns_opts = cookie;
		q.edns_opts_len = sizeof(cookie);
		judge(f, &qp, &q, q.name, 1, 0, "longest answer");
		assert_int_equal(OUT_LEN, 14 + 8 + 40 + 8 + 12 + 259 + 11);
	}
}

/* The REFUSED action: RCODE 5, the rest as NXDOMAIN. */
static void test_reply_refused(void **state)
{
	struct fx *f = *state;
	struct qp qp = { .n = NET6 };
	struct dnsq q = Q("a.b.evil.org");

	assert_int_equal(f->dns_action, BG_DNS_ACTION_REFUSED);
	expect_name(f, "ads.example.com", 1);
	expect_name(f, "a.tracker.net", 1);
	expect_name(f, "example.com", 0);
	q.edns = 1;
	q.edns_version = 2;
	judge(f, &qp, &q, q.name, 1, 0, "refused BADVERS");
}

/* The default action is NXDOMAIN, and NXDOMAIN set explicitly too. */
static void test_reply_nxdomain(void **state)
{
	struct fx *f = *state;

	assert_int_equal(f->dns_action, BG_DNS_ACTION_NXDOMAIN);
	expect_name(f, "ads.example.com", 1);
	expect_name(f, "www.evil.org", 1);
	expect_name(f, "www.example.org", 0);
}

/* IPv6 with extension headers: dropped instead of answered (echoing a
 * routing header, AH or Shim6 back is not safe); flagged normally. */
static void test_ipv6_ext(void **state)
{
	struct fx *f = *state;
	const struct qp qps[] = {
		{ .n = NET6, .ext_hdrs = 1 },
		{ .n = &NETS[6], .ext_hdrs = 2 },
		{ .n = &NETS[7], .ext_hdrs = 6 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(qps); i++) {
		struct dnsq q = Q("ads.example.com");
		char what[64];

		snprintf(what, sizeof(what), "ipv6 %d ext headers %s", qps[i].ext_hdrs,
			 net_name(qps[i].n));
		judge(f, &qps[i], &q, q.name, 1, 0, what);
		q.edns = 1;
		judge(f, &qps[i], &q, q.name, 1, 0, what);
		q.name = "example.com";
		judge(f, &qps[i], &q, q.name, 0, 0, what);
	}
}

static void test_action_drop(void **state)
{
	struct fx *f = *state;

	assert_int_equal(f->dns_action, BG_DNS_ACTION_DROP);
	expect_name(f, "ads.example.com", 1);
	expect_name(f, "a.b.evil.org", 1);
	expect_name(f, "x.ads.example.com", 0);
}

static void test_action_flag(void **state)
{
	struct fx *f = *state;

	assert_int_equal(f->dns_action, BG_DNS_ACTION_FLAG);
	expect_name(f, "ads.example.com", 1);
	expect_name(f, "Www.EVIL.Org", 1); /* event name lowercased */
	expect_name(f, NAME255, 1); /* 255 bytes: the whole event name */
	expect_name(f, A127, 1);
	expect_name(f, "x.ads.example.com", 0);
}

/* ---- Tests: allowlist ---------------------------------------------------- */

/* ||blocked.test^ with good.blocked.test (exact), @@||tree.blocked.test^
 * and @@*.subs.blocked.test allowed: allow beats block, for exactly the
 * names each rule covers. */
static void test_allowlist(void **state)
{
	struct fx *f = *state;

	expect_name_allowed(f, "blocked.test", 1, 0);
	expect_name_allowed(f, "x.blocked.test", 1, 0);
	expect_name_allowed(f, "good.blocked.test", 1, 1);
	expect_name_allowed(f, "GOOD.Blocked.TEST", 1, 1);
	/* only the exact name is allowed: its subdomain is still blocked */
	expect_name_allowed(f, "ads.good.blocked.test", 1, 0);
	expect_name_allowed(f, "xgood.blocked.test", 1, 0);
	/* a tree allow: the name and every subdomain */
	expect_name_allowed(f, "tree.blocked.test", 1, 1);
	expect_name_allowed(f, "a.tree.blocked.test", 1, 1);
	expect_name_allowed(f, "a.b.c.d.tree.blocked.test", 1, 1);
	/* a subdomains allow: not the name itself */
	expect_name_allowed(f, "subs.blocked.test", 1, 0);
	expect_name_allowed(f, "x.subs.blocked.test", 1, 1);
	/* allowed but never blocked: a negative, the allowlist not asked */
	expect_name_allowed(f, "unblocked.test", 0, 0);
	expect_name_allowed(f, "x.unblocked.test", 0, 0);
	expect_name_allowed(f, "other.test", 0, 0);
}

/* ---- Tests: bloomgate_xdp and the tail call -------------------------------- */

static void test_tail_call(void **state)
{
	struct fx *f = *state;
	struct dnsq q = Q("ads.example.com");
	struct exp e;
	struct pkt p;
	size_t i;

	assert_true(f->use_xdp);
	expect_name(f, "ads.example.com", 1);
	expect_name(f, "Www.EVIL.org", 1);
	expect_name(f, "example.com", 0);
	q.flags = 0x8180;
	expect_reason(f, &q, BG_CNT_DNS_RESPONSE, "response (bloomgate_xdp)");
	q = Q("ads.example.com");
	for (i = 0; i < ARRAY_SIZE(NETS); i++) {
		const struct net *n = &NETS[i];

		/* not to a DNS port: not tail-called */
		e = e_pass();
		add_xdp(f, &e, n->af);
		build_dns(&p, n, 54, &q);
		run(f, p.buf, p.len, &e, "port 54 %s (bloomgate_xdp)", net_name(n));
		build_dns(&p, n, 53, &q);
		if (n->af == AF_INET)
			p.buf[p.l3 + 9] = IPPROTO_TCP;
		else
			p.buf[p.l3 + 6] = IPPROTO_TCP;
		run(f, p.buf, p.len, &e, "tcp %s (bloomgate_xdp)", net_name(n));
		/* a first fragment to port 53: judged by address only */
		if (n->af == AF_INET) {
			build_dns(&p, n, 53, &q);
			p.buf[p.l3 + 6] = 0x20; /* MF */
			e.cnt[BG_CNT_FRAGMENTS] = 1;
			run(f, p.buf, p.len, &e, "first fragment %s (bloomgate_xdp)",
			    net_name(n));
		}
	}
}

/* bg_progs empty: the tail call fails, dns_no_prog counts, the packet
 * passes unchanged (judged by address only). */
static void test_tail_call_empty(void **state)
{
	struct fx *f = *state;
	struct dnsq q = Q("ads.example.com");
	struct exp e;
	struct pkt p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(NETS); i++) {
		const struct net *n = &NETS[i];

		e = e_pass();
		add_xdp(f, &e, n->af);
		e.cnt[BG_CNT_DNS_NO_PROG] = 1;
		build_dns(&p, n, 53, &q);
		run(f, p.buf, p.len, &e, "empty bg_progs %s", net_name(n));
		e.cnt[BG_CNT_DNS_NO_PROG] = 0;
		build_dns(&p, n, 54, &q);
		run(f, p.buf, p.len, &e, "empty bg_progs, port 54 %s", net_name(n));
	}
}

/* A listed address keeps its verdict: dropped or flagged by bloomgate_xdp,
 * the name not looked at. */
static void test_address_listed(void **state)
{
	struct fx *f = *state;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(NETS); i++) {
		const struct net *n = &NETS[i];
		const char *mix = n->af == AF_INET ? MIX4 : MIX6;
		const char *names[] = { "ads.example.com", "example.com" };
		size_t k;
		int src;

		for (k = 0; k < ARRAY_SIZE(names); k++) {
			for (src = 0; src < 2; src++) {
				struct qp qp = { .n = n };
				struct dnsq q = Q(names[k]);
				struct exp e = { .verdict = XDP_DROP };
				__u8 which = src ? BG_MATCH_SRC : BG_MATCH_DST;
				struct pkt p;
				char what[128];

				if (!(f->match & which))
					continue;
				if (src)
					qp.src = mix;
				else
					qp.dst = mix;
				e.cnt[BG_CNT_PACKETS] = 1;
				e.cnt[n->af == AF_INET ? BG_CNT_IPV4 : BG_CNT_IPV6] = 1;
				e.cnt[BG_CNT_POSITIVES] = 1;
				e.cnt[BG_CNT_PROBES] = 1;
				if (src && (f->match & BG_MATCH_DST)) {
					e.cnt[BG_CNT_NEGATIVES] = 1; /* dst first */
					e.cnt[BG_CNT_PROBES] = 2;
				}
				if (f->action == BG_ACTION_DROP) {
					e.cnt[BG_CNT_DROPPED] = 1;
				} else {
					e.verdict = XDP_PASS;
					e.cnt[BG_CNT_FLAGGED] = 1;
					e.cnt[BG_CNT_PASSED] = 1;
				}
				build_query(&p, &qp, &q);
				snprintf(what, sizeof(what), "%s listed, %s %s",
					 src ? "source" : "destination", names[k],
					 net_name(n));
				run(f, p.buf, p.len, &e, "%s", what);
				if (f->action == BG_ACTION_FLAG) {
					__u8 a[16] = { 0 };

					CHECK(f->naev == 1 && f->nnev == 0, "events");
					CHECK(f->aev[0].which == which, "which %u",
					      f->aev[0].which);
					CHECK(f->aev[0].verdict == BG_VERDICT_FLAG, "verdict");
					assert_int_equal(inet_pton(n->af, mix, a), 1);
					CHECK(!memcmp(f->aev[0].addr, a, 16), "address");
				}
			}
		}
	}
	/* addresses not listed: the name is judged */
	expect_name(f, "ads.example.com", 1);
	expect_name(f, "example.com", 0);
}

/* cfg_dns_ports: the list both programs judge. */
static void test_ports(void **state)
{
	struct fx *f = *state;
	static const __u16 all[] = { 53, 54, 5353, 8053 };
	size_t i, j;
	int judged;

	for (i = 0; i < ARRAY_SIZE(all); i++) {
		judged = 0;
		for (j = 0; j < BG_DNS_PORTS_MAX; j++)
			judged |= f->cfg->ports[j] == all[i];
		for (j = 0; j < ARRAY_SIZE(NETS); j++) {
			struct qp qp = { .n = &NETS[j], .dport = all[i] };
			struct dnsq q = Q("ads.example.com");
			char what[96];

			snprintf(what, sizeof(what), "port %u %s%s", all[i],
				 net_name(&NETS[j]), f->use_xdp ? " (bloomgate_xdp)" : "");
			if (judged) {
				judge(f, &qp, &q, q.name, 1, 0, what);
			} else {
				struct exp e = e_pass();
				struct pkt p;

				add_xdp(f, &e, NETS[j].af);
				build_query(&p, &qp, &q);
				run(f, p.buf, p.len, &e, "%s", what);
			}
		}
	}
}

#define T(fn, cfg) cmocka_unit_test_prestate_setup_teardown(fn, fx_setup, fx_teardown, &cfg)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_hashes),
		cmocka_unit_test(test_verifier_stats),
		T(test_exact_vs_subdomains, C_DST),
		T(test_exact_vs_subdomains, C_BOTH),
		T(test_mixed_case, C_SRC),
		T(test_long_names, C_DST),
		T(test_bad_names, C_DST),
		T(test_header, C_DST),
		T(test_truncation, C_DST),
		T(test_udp_length, C_DST),
		T(test_not_dns, C_DST),
		T(test_root_query, C_DST),
		T(test_fuzz, C_BOTH),
		T(test_label_words, C_DST),
		T(test_address_only_filter, C_DST),
		T(test_depths, C_DST),
		T(test_depths, C_XDP),
		T(test_depths_bad_header, C_DST),
		T(test_probes_agree, C_DROP),
		T(test_no_filter, C_NOFILTER),
		T(test_no_filter_xdp, C_NOFILTER_XDP),
		T(test_reply_ip_fields, C_DST),
		T(test_reply_dns_fields, C_DST),
		T(test_reply_edns, C_DST),
		T(test_reply_nxdomain, C_DST),
		T(test_reply_nxdomain, C_NXDOMAIN),
		T(test_reply_refused, C_REFUSED),
		T(test_ipv6_ext, C_DST),
		T(test_ipv6_ext, C_FLAG),
		T(test_ipv6_ext, C_DROP),
		T(test_action_drop, C_DROP),
		T(test_action_flag, C_FLAG),
		T(test_action_flag, C_XDP_FLAG),
		T(test_allowlist, C_ALLOW_IN_BLOCK),
		T(test_allowlist, C_ALLOW_LIST),
		T(test_allowlist, C_ALLOW_FLAG),
		T(test_tail_call, C_XDP),
		T(test_tail_call, C_XDP_BOTH),
		T(test_tail_call_empty, C_XDP_EMPTY),
		T(test_address_listed, C_MIXED_DROP),
		T(test_address_listed, C_MIXED_FLAG),
		T(test_ports, C_PORT5353),
		T(test_ports, C_PORT5353_XDP),
		T(test_ports, C_PORTS),
	};

	return cmocka_run_group_tests_name("dns", tests, NULL, NULL);
}
