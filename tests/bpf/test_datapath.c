// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * BPF_PROG_TEST_RUN tests of the XDP datapath (bpf/bloomgate.bpf.c).
 *
 * Every test gets its own freshly loaded skeleton (cfg_match/cfg_action set
 * per test through the cmocka prestate) and, unless the test says otherwise,
 * a published filter holding LIST_AB. Each packet is run once and checked
 * against a complete expectation: the XDP verdict, the delta of EVERY
 * counter and malformed reason (anything not named must not move), the
 * output bytes (the program never rewrites packets) and the number of ring
 * buffer events (= flagged - events_lost).
 *
 * Short frames: BPF_PROG_TEST_RUN refuses data_size_in < ETH_HLEN (14) with
 * EINVAL, and on this kernel it also refuses a frame whose length after the
 * XDP metadata (ctx_in->data) is below 14. So trunc_eth can not be reached
 * from here; test_short_frames_refused asserts the refusal and that the
 * program did not run (packets counter unchanged).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <net/if.h>
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
#include "core/counters.h"
#include "core/filter.h"

#include "blocklist.h"
#include "core/lists.h"
#include "kern/attach.h"
#include "kern/pins.h"
#include "kern/swap.h"

#include "pktgen.h"
#include "verdict_names.h"
#include "bloomgate.skel.h"

/* ---- Addresses and lists ---------------------------------------------- */

#define A4 "192.0.2.1" /* listed in LIST_AB */
#define B4 "198.51.100.7" /* listed in LIST_AB */
#define U4 "203.0.113.9" /* not listed */
#define W4 "10.9.8.7" /* not listed */
#define C4 "192.0.2.77" /* listed in LIST_C only */
#define A6 "2001:db8::1"
#define B6 "2001:db8::bad"
#define U6 "2001:db8::2"
#define W6 "fd00::9"
#define C6 "2001:db8::77"

static const char LIST_AB[] = A4 "\n" B4 "\n" A6 "\n" B6 "\n";
static const char LIST_C[] = C4 "\n" C6 "\n";
static const char LIST_V6_ONLY[] = A6 "\n";

/* Every address the tests use: the filter sanity check probes them all. */
static const char *const ALL_ADDRS[] = { A4, B4, U4, W4, C4,
					 A6, B6, U6, W6, C6 };

#define SEED_AB 0x0123456789abcdefULL
#define SEED_C 0xfedcba9876543210ULL
#define FUNC_FPR 1e-6 /* functional filters: collisions are not the point */

struct fam {
	const char *name;
	int af;
	int cnt; /* BG_CNT_IPV4 / BG_CNT_IPV6 */
	__u8 key; /* BG_KEY_IPV4 / BG_KEY_IPV6 */
	const char *listed, *listed2, *unlisted, *unlisted2;
};

static const struct fam FAMS[] = {
	{ "ipv4", AF_INET, BG_CNT_IPV4, BG_KEY_IPV4, A4, B4, U4, W4 },
	{ "ipv6", AF_INET6, BG_CNT_IPV6, BG_KEY_IPV6, A6, B6, U6, W6 },
};
#define NFAMS (sizeof(FAMS) / sizeof(FAMS[0]))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Names for messages ------------------------------------------------ */

/* cnt_name, mal_name, xdp_name: tests/verdict_names.h */

/* ---- Fixture ------------------------------------------------------------ */

struct cfg {
	__u8 match, action;
	const char *list; /* published at setup; NULL: no filter */
	__u8 unparsed; /* cfg_unparsed; 0: the program's default (pass) */
};

static struct cfg CFG_DST_DROP = { BG_MATCH_DST, BG_ACTION_DROP, LIST_AB, 0 };
static struct cfg CFG_SRC_DROP = { BG_MATCH_SRC, BG_ACTION_DROP, LIST_AB, 0 };
static struct cfg CFG_BOTH_DROP = { BG_MATCH_BOTH, BG_ACTION_DROP, LIST_AB, 0 };
static struct cfg CFG_BOTH_FLAG = { BG_MATCH_BOTH, BG_ACTION_FLAG, LIST_AB, 0 };
static struct cfg CFG_DST_NOFILTER = { BG_MATCH_DST, BG_ACTION_DROP, NULL, 0 };
/* attach --unparsed drop */
static struct cfg CFG_DST_DROP_UNP = { BG_MATCH_DST, BG_ACTION_DROP, LIST_AB,
				       BG_UNPARSED_DROP };
static struct cfg CFG_BOTH_FLAG_UNP = { BG_MATCH_BOTH, BG_ACTION_FLAG, LIST_AB,
					BG_UNPARSED_DROP };
static struct cfg CFG_DST_NOFILTER_UNP = { BG_MATCH_DST, BG_ACTION_DROP, NULL,
					   BG_UNPARSED_DROP };

#define EV_MAX 16

struct fx {
	struct bloomgate *skel;
	int prog, filters, stats;
	__u8 unparsed; /* cfg_unparsed as loaded */
	struct ring_buffer *rb;
	struct bg_event ev[EV_MAX]; /* events consumed by the last run */
	int nev; /* events consumed, may exceed EV_MAX */
	int bad_ev; /* events of the wrong size */
};

static int on_event(void *ctx, void *data, size_t len)
{
	struct fx *f = ctx;

	if (len != sizeof(struct bg_event)) {
		f->bad_ev++;
		return 0;
	}
	if (f->nev < EV_MAX)
		memcpy(&f->ev[f->nev], data, sizeof(struct bg_event));
	f->nev++;
	return 0;
}

/* 1 if addr is one of the lines of list (lists here are one per line). */
static int in_list(const char *list, const char *addr)
{
	size_t n = strlen(addr);
	const char *p = list;

	while ((p = strstr(p, addr))) {
		if ((p == list || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

/* Builds a filter from list text, publishes it, and checks through the
 * userspace probe that every test address answers as the list says: a
 * Bloom false positive on a "not listed" address would make the datapath
 * expectations wrong for reasons unrelated to the datapath. */
static void publish_list(struct fx *f, const char *list, uint64_t seed)
{
	struct bg_list_opts opts = { .strict = 1 };
	struct bg_filter_params p;
	struct bg_list l;
	const void *mem;
	size_t len, i;
	int fd;

	bg_list_init(&l);
	assert_int_equal(bg_list_parse_buf(&l, "test", list, strlen(list),
					   &opts), 0);
	bg_list_finish(&l);
	assert_int_equal(bg_filter_plan(BL(&l, NULL, NULL), FUNC_FPR, &p), 0);
	fd = bg_filter_create(&p, seed, BL(&l, NULL, NULL));
	assert_true(fd >= 0);
	assert_int_equal(bg_filter_publish(f->filters, fd), 0);
	close(fd); /* the slot holds the map now */
	bg_list_free(&l);

	assert_int_equal(bg_filter_map_current(f->filters, &mem, &len), 0);
	for (i = 0; i < ARRAY_SIZE(ALL_ADDRS); i++) {
		__u8 a[16];
		int got;

		if (strchr(ALL_ADDRS[i], ':')) {
			assert_int_equal(inet_pton(AF_INET6, ALL_ADDRS[i], a), 1);
			got = bg_filter_test6(mem, a);
		} else {
			__u32 a4;

			assert_int_equal(inet_pton(AF_INET, ALL_ADDRS[i], a), 1);
			memcpy(&a4, a, sizeof(a4));
			got = bg_filter_test4(mem, a4);
		}
		if (got != in_list(list, ALL_ADDRS[i]))
			fail_msg("filter sanity: %s answers %d (seed collision?)",
				 ALL_ADDRS[i], got);
	}
	bg_filter_unmap(mem, len);
}

static int fx_setup(void **state)
{
	const struct cfg *c = *state;
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->skel = bloomgate__open();
	assert_non_null(f->skel);
	f->skel->rodata->cfg_match = c->match;
	f->skel->rodata->cfg_action = c->action;
	/* the default, unless the test asks: nothing unparsed is dropped */
	assert_int_equal(f->skel->rodata->cfg_unparsed, BG_UNPARSED_PASS);
	if (c->unparsed)
		f->skel->rodata->cfg_unparsed = c->unparsed;
	f->unparsed = f->skel->rodata->cfg_unparsed;
	assert_int_equal(bloomgate__load(f->skel), 0);
	f->prog = bpf_program__fd(f->skel->progs.bloomgate_xdp);
	f->filters = bpf_map__fd(f->skel->maps.bg_filters);
	f->stats = bpf_map__fd(f->skel->maps.bg_stats);
	f->rb = ring_buffer__new(bpf_map__fd(f->skel->maps.bg_events),
				 on_event, f, NULL);
	assert_non_null(f->rb);
	if (c->list)
		publish_list(f, c->list, SEED_AB);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	ring_buffer__free(f->rb);
	bloomgate__destroy(f->skel);
	free(f);
	return 0;
}

/* ---- Running packets ---------------------------------------------------- */

struct result {
	int err; /* bpf_prog_test_run_opts(): 0 or -errno */
	__u32 verdict;
	struct bg_counters d; /* counter deltas over the run */
	__u8 out[PKT_MAX + 256];
	__u32 out_len;
	int nev; /* ring buffer events consumed after the run */
};

static void counters(struct fx *f, struct bg_counters *c)
{
	assert_int_equal(bg_counters_read(f->stats, c), 0);
}

static void run_bytes(struct fx *f, const void *data, size_t len,
		      struct result *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = data,
		    .data_size_in = (__u32)len, .data_out = r->out,
		    .data_size_out = sizeof(r->out), .repeat = 1);
	struct bg_counters before, after;
	int i;

	counters(f, &before);
	f->nev = 0;
	f->bad_ev = 0;
	r->err = bpf_prog_test_run_opts(f->prog, &o);
	r->verdict = o.retval;
	r->out_len = o.data_size_out;
	assert_true(ring_buffer__consume(f->rb) >= 0);
	assert_int_equal(f->bad_ev, 0);
	r->nev = f->nev;
	counters(f, &after);
	for (i = 0; i < BG_CNT_SLOTS; i++)
		r->d.cnt[i] = after.cnt[i] - before.cnt[i];
	for (i = 0; i < BG_MAL_SLOTS; i++)
		r->d.malformed[i] = after.malformed[i] - before.malformed[i];
}

/* ---- Expectations ------------------------------------------------------- */

/* Expected outcome of one run: the verdict, the delta of every counter
 * (PACKETS included; MALFORMED is implied by mal) and the one malformed
 * reason, if any. Counters not set here must not move. */
struct exp {
	__u32 verdict;
	int mal; /* BG_MAL_* + 1; 0: well formed */
	__u64 cnt[BG_CNT__COUNT];
};

static struct exp e_base(__u32 verdict)
{
	struct exp e = { .verdict = verdict };

	e.cnt[BG_CNT_PACKETS] = 1;
	return e;
}

static struct exp plus(struct exp e, int idx)
{
	e.cnt[idx]++;
	return e;
}

static struct exp mal(struct exp e, int reason)
{
	e.mal = reason + 1;
	return e;
}

/* Judged, one probe, positive, dropped. fam: BG_CNT_IPV4 / BG_CNT_IPV6. */
static struct exp e_drop(int fam)
{
	struct exp e = e_base(XDP_DROP);

	e = plus(plus(plus(plus(e, fam), BG_CNT_PROBES), BG_CNT_POSITIVES),
		 BG_CNT_DROPPED);
	return e;
}

/* Judged, one probe, negative, passed. */
static struct exp e_pass(int fam)
{
	struct exp e = e_base(XDP_PASS);

	return plus(plus(plus(plus(e, fam), BG_CNT_PROBES), BG_CNT_NEGATIVES),
		    BG_CNT_PASSED);
}

/* Judged, one probe, positive, flagged and passed. */
static struct exp e_flag(int fam)
{
	struct exp e = e_base(XDP_PASS);

	e = plus(plus(plus(e, fam), BG_CNT_PROBES), BG_CNT_POSITIVES);
	return plus(plus(e, BG_CNT_FLAGGED), BG_CNT_PASSED);
}

/* A second probe (match both: dst negative, then src) answering negative. */
static struct exp extra_negative(struct exp e)
{
	return plus(plus(e, BG_CNT_PROBES), BG_CNT_NEGATIVES);
}

/* No trusted addresses (headers cut or invalid, too many VLAN tags): not
 * judged; with the default policy (--unparsed pass), passed. */
static struct exp e_unparsed_passed(int reason)
{
	return mal(plus(e_base(XDP_PASS), BG_CNT_PASSED), reason);
}

/* The same frame under --unparsed drop: dropped, counted as dropped, as
 * unparsed_dropped and under its reason; no family, no probe. */
static struct exp e_unparsed_dropped(int reason)
{
	struct exp e = e_base(XDP_DROP);

	return mal(plus(plus(e, BG_CNT_DROPPED), BG_CNT_UNPARSED_DROPPED), reason);
}

/* An unparsed frame under the fixture's policy. */
static struct exp e_unjudged(const struct fx *f, int reason)
{
	return f->unparsed == BG_UNPARSED_DROP ? e_unparsed_dropped(reason) :
						 e_unparsed_passed(reason);
}

static struct exp e_non_ip(void)
{
	return plus(plus(e_base(XDP_PASS), BG_CNT_NON_IP), BG_CNT_PASSED);
}

static struct exp e_no_filter(int fam)
{
	struct exp e = e_base(XDP_PASS);

	return plus(plus(plus(e, fam), BG_CNT_NO_FILTER), BG_CNT_PASSED);
}

static void verify(const char *what, const void *in, size_t len,
		   const struct result *r, const struct exp *e)
{
	unsigned int i;

	if (r->err)
		fail_msg("%s: BPF_PROG_TEST_RUN failed: %s", what,
			 strerror(-r->err));
	if (r->verdict != e->verdict)
		fail_msg("%s: verdict %s, expected %s", what,
			 xdp_name(r->verdict), xdp_name(e->verdict));
	for (i = 0; i < BG_CNT_SLOTS; i++) {
		__u64 want = i < BG_CNT__COUNT ? e->cnt[i] : 0;

		if (i == BG_CNT_MALFORMED)
			want = e->mal ? 1 : 0;
		if (r->d.cnt[i] != want)
			fail_msg("%s: counter %s moved by %llu, expected %llu",
				 what, cnt_name(i),
				 (unsigned long long)r->d.cnt[i],
				 (unsigned long long)want);
	}
	for (i = 0; i < BG_MAL_SLOTS; i++) {
		__u64 want = (unsigned int)e->mal == i + 1;

		if (r->d.malformed[i] != want)
			fail_msg("%s: malformed reason %s moved by %llu, expected %llu",
				 what, mal_name(i),
				 (unsigned long long)r->d.malformed[i],
				 (unsigned long long)want);
	}
	/* The program must never modify a packet, whatever the verdict. */
	if (r->out_len != len || memcmp(r->out, in, len))
		fail_msg("%s: output packet differs from the input (%u bytes out, %zu in)",
			 what, r->out_len, len);
	if ((__u64)r->nev != r->d.cnt[BG_CNT_FLAGGED] - r->d.cnt[BG_CNT_EVENTS_LOST])
		fail_msg("%s: %d ring buffer events for %llu flagged packets",
			 what, r->nev,
			 (unsigned long long)r->d.cnt[BG_CNT_FLAGGED]);
}

/* Runs len bytes of p and checks them against e; what is printf-like. */
static void __attribute__((format(printf, 5, 6)))
expect_len(struct fx *f, const struct pkt *p, size_t len, struct exp e,
	   const char *fmt, ...)
{
	static struct result r; /* large: keep it off the stack */
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	run_bytes(f, p->buf, len, &r);
	verify(what, p->buf, len, &r, &e);
}

#define expect_pkt(f, p, e, ...) expect_len((f), (p), (p)->len, (e), __VA_ARGS__)

/* ---- Packets ------------------------------------------------------------ */

#define SPEC(af_, src_, dst_, ...)                                            \
	((struct pkt_spec){ .family = (af_), .src = (src_), .dst = (dst_),    \
			    .payload = 16, __VA_ARGS__ })

static void build(struct pkt *p, struct pkt_spec s)
{
	assert_int_equal(pkt_build(p, &s), 0);
}

static void set_ethertype(struct pkt *p, uint16_t et)
{
	p->buf[p->l3 - 2] = et >> 8;
	p->buf[p->l3 - 1] = et & 0xff;
}

/* First byte of the IP header: version (high nibble), IHL (low nibble). */
static void set_ver_ihl(struct pkt *p, unsigned int ver, unsigned int ihl)
{
	p->buf[p->l3] = (uint8_t)(ver << 4 | (ihl & 0xf));
}

static void set_version(struct pkt *p, unsigned int ver)
{
	p->buf[p->l3] = (uint8_t)(ver << 4 | (p->buf[p->l3] & 0xf));
}

/* Offset of the i-th IPv6 extension header built by pkt_build(). */
static size_t ext_off(const struct pkt *p, int i)
{
	return p->l3 + 40 + 8 * (size_t)i;
}

/* ---- Tests: addresses, families, VLANs ---------------------------------- */

static void test_listed_unlisted(void **state)
{
	struct fx *f = *state;
	struct pkt p;
	size_t i;

	for (i = 0; i < NFAMS; i++) {
		const struct fam *m = &FAMS[i];

		build(&p, SPEC(m->af, m->unlisted, m->listed));
		expect_pkt(f, &p, e_drop(m->cnt), "%s listed dst", m->name);
		build(&p, SPEC(m->af, m->unlisted, m->listed2));
		expect_pkt(f, &p, e_drop(m->cnt), "%s second listed dst", m->name);
		build(&p, SPEC(m->af, m->unlisted2, m->unlisted));
		expect_pkt(f, &p, e_pass(m->cnt), "%s unlisted dst", m->name);
		build(&p, SPEC(m->af, m->listed, m->listed2));
		expect_pkt(f, &p, e_drop(m->cnt), "%s both listed", m->name);
	}
}

struct tags {
	const char *name;
	int n;
	uint16_t tpid[4];
};

static const struct tags TAGS_OK[] = {
	{ "untagged", 0, { 0 } },
	{ "802.1Q", 1, { ETH_P_8021Q } },
	{ "802.1ad", 1, { 0x88a8 } },
	{ "802.1ad+802.1Q", 2, { 0x88a8, ETH_P_8021Q } },
	{ "802.1Q+802.1Q", 2, { ETH_P_8021Q, ETH_P_8021Q } },
	{ "802.1ad+802.1ad", 2, { 0x88a8, 0x88a8 } },
	{ "802.1Q+802.1ad", 2, { ETH_P_8021Q, 0x88a8 } },
};

static const struct tags TAGS_DEEP[] = {
	{ "3x802.1Q", 3, { ETH_P_8021Q, ETH_P_8021Q, ETH_P_8021Q } },
	{ "802.1ad+802.1Q+802.1Q", 3, { 0x88a8, ETH_P_8021Q, ETH_P_8021Q } },
	{ "802.1ad+802.1ad+802.1Q", 3, { 0x88a8, 0x88a8, ETH_P_8021Q } },
	{ "802.1Q+802.1Q+802.1ad", 3, { ETH_P_8021Q, ETH_P_8021Q, 0x88a8 } },
	{ "4 tags", 4, { 0x88a8, ETH_P_8021Q, ETH_P_8021Q, ETH_P_8021Q } },
};

static struct pkt_spec tagged(struct pkt_spec s, const struct tags *t)
{
	s.vlans = t->n;
	memcpy(s.vlan_tpid, t->tpid, sizeof(s.vlan_tpid));
	return s;
}

static void test_vlan_tags(void **state)
{
	struct fx *f = *state;
	struct pkt p;
	size_t i, j;

	for (i = 0; i < NFAMS; i++) {
		const struct fam *m = &FAMS[i];

		for (j = 0; j < ARRAY_SIZE(TAGS_OK); j++) {
			const struct tags *t = &TAGS_OK[j];

			build(&p, tagged(SPEC(m->af, m->unlisted, m->listed), t));
			expect_pkt(f, &p, e_drop(m->cnt), "%s %s listed dst",
				   m->name, t->name);
			build(&p, tagged(SPEC(m->af, m->listed, m->unlisted), t));
			expect_pkt(f, &p, e_pass(m->cnt), "%s %s unlisted dst",
				   m->name, t->name);
		}
		/* Beyond BG_VLAN_MAX tags nothing is parsed: the policy
		 * decides (pass by default, even when the destination is
		 * listed; --unparsed drop drops it, listed or not). */
		for (j = 0; j < ARRAY_SIZE(TAGS_DEEP); j++) {
			const struct tags *t = &TAGS_DEEP[j];

			build(&p, tagged(SPEC(m->af, m->unlisted, m->listed), t));
			expect_pkt(f, &p, e_unjudged(f, BG_MAL_VLAN_TOO_DEEP),
				   "%s %s listed dst", m->name, t->name);
			build(&p, tagged(SPEC(m->af, m->listed, m->unlisted), t));
			expect_pkt(f, &p, e_unjudged(f, BG_MAL_VLAN_TOO_DEEP),
				   "%s %s unlisted dst", m->name, t->name);
		}
	}
}

/* ---- Tests: IPv4 header ------------------------------------------------- */

static void test_ipv4_ihl(void **state)
{
	struct fx *f = *state;
	struct pkt p;
	unsigned int ihl;

	/* IHL below 5: no trusted addresses, passed although dst is listed. */
	for (ihl = 0; ihl < 5; ihl++) {
		build(&p, SPEC(AF_INET, U4, A4));
		set_ver_ihl(&p, 4, ihl);
		expect_pkt(f, &p, e_unjudged(f, BG_MAL_BAD_IPV4_IHL),
			   "ipv4 IHL %u, listed dst", ihl);
	}
	/* IHL 5..15: options are skipped, the address is judged. IHL 15 is
	 * 40 bytes of options. */
	for (ihl = 5; ihl <= 15; ihl++) {
		build(&p, SPEC(AF_INET, U4, A4, .ihl = (int)ihl));
		assert_int_equal(p.l4 - p.l3, ihl * 4);
		expect_pkt(f, &p, e_drop(BG_CNT_IPV4), "ipv4 IHL %u, listed dst",
			   ihl);
		build(&p, SPEC(AF_INET, A4, U4, .ihl = (int)ihl));
		expect_pkt(f, &p, e_pass(BG_CNT_IPV4),
			   "ipv4 IHL %u, unlisted dst", ihl);
	}
	/* IHL 15 cut inside the options: the fixed header is complete but
	 * the header as a whole is not. */
	build(&p, SPEC(AF_INET, U4, A4, .ihl = 15));
	expect_len(f, &p, p.l3 + 20, e_unjudged(f, BG_MAL_TRUNC_IPV4),
		   "ipv4 IHL 15 cut after the fixed header");
	expect_len(f, &p, p.l3 + 59, e_unjudged(f, BG_MAL_TRUNC_IPV4),
		   "ipv4 IHL 15 cut one byte short of the options");
	expect_len(f, &p, p.l3 + 60, e_drop(BG_CNT_IPV4),
		   "ipv4 IHL 15 exactly the header, no UDP");
}

static void test_ip_version_mismatch(void **state)
{
	struct fx *f = *state;
	static const unsigned int bad4[] = { 0, 5, 6, 15 };
	static const unsigned int bad6[] = { 0, 4, 7, 15 };
	struct pkt p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad4); i++) {
		build(&p, SPEC(AF_INET, U4, A4));
		set_version(&p, bad4[i]);
		expect_pkt(f, &p, e_unjudged(f, BG_MAL_BAD_IPV4_VERSION),
			   "ipv4 ethertype, version %u", bad4[i]);
	}
	/* A whole IPv6 packet behind the IPv4 ethertype. */
	build(&p, SPEC(AF_INET6, U6, A6));
	set_ethertype(&p, ETH_P_IP);
	expect_pkt(f, &p, e_unjudged(f, BG_MAL_BAD_IPV4_VERSION),
		   "ipv6 packet behind ethertype 0x0800");

	for (i = 0; i < ARRAY_SIZE(bad6); i++) {
		build(&p, SPEC(AF_INET6, U6, A6));
		set_version(&p, bad6[i]);
		expect_pkt(f, &p, e_unjudged(f, BG_MAL_BAD_IPV6_VERSION),
			   "ipv6 ethertype, version %u", bad6[i]);
	}
	/* An IPv4 packet behind the IPv6 ethertype: long enough for 40 bytes
	 * (payload 16: 20 + 8 + 16 = 44), so the version is what fails. */
	build(&p, SPEC(AF_INET, U4, A4));
	set_ethertype(&p, ETH_P_IPV6);
	expect_pkt(f, &p, e_unjudged(f, BG_MAL_BAD_IPV6_VERSION),
		   "ipv4 packet behind ethertype 0x86dd");
}

/* ---- Tests: IPv6 extension headers -------------------------------------- */

static void test_ipv6_ext_chain(void **state)
{
	struct fx *f = *state;
	struct pkt p;
	int n;

	/* Up to BG_IPV6_EXT_MAX headers: parsed to the end, well formed. */
	for (n = 0; n <= BG_IPV6_EXT_MAX; n++) {
		build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = n));
		expect_pkt(f, &p, e_drop(BG_CNT_IPV6),
			   "ipv6 %d ext headers, listed dst", n);
		build(&p, SPEC(AF_INET6, A6, U6, .ext_hdrs = n));
		expect_pkt(f, &p, e_pass(BG_CNT_IPV6),
			   "ipv6 %d ext headers, unlisted dst", n);
	}
	/* Longer chains are malformed, but the addresses come from the fixed
	 * header: a listed destination is still dropped. */
	for (n = BG_IPV6_EXT_MAX + 1; n <= BG_IPV6_EXT_MAX + 4; n++) {
		build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = n));
		expect_pkt(f, &p, mal(e_drop(BG_CNT_IPV6), BG_MAL_IPV6_EXT_TOO_LONG),
			   "ipv6 %d ext headers, listed dst", n);
		build(&p, SPEC(AF_INET6, A6, U6, .ext_hdrs = n));
		expect_pkt(f, &p, mal(e_pass(BG_CNT_IPV6), BG_MAL_IPV6_EXT_TOO_LONG),
			   "ipv6 %d ext headers, unlisted dst", n);
	}
	/* The fragment header counts towards the bound. */
	build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = BG_IPV6_EXT_MAX - 1,
		       .frag6 = 1));
	expect_pkt(f, &p, plus(e_drop(BG_CNT_IPV6), BG_CNT_FRAGMENTS),
		   "ipv6 %d dstopts + fragment header", BG_IPV6_EXT_MAX - 1);
	/* Here the fragment header is past the bound: never seen, so not
	 * counted as a fragment. */
	build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = BG_IPV6_EXT_MAX,
		       .frag6 = 1));
	expect_pkt(f, &p, mal(e_drop(BG_CNT_IPV6), BG_MAL_IPV6_EXT_TOO_LONG),
		   "ipv6 %d dstopts + fragment header", BG_IPV6_EXT_MAX);
}

static void test_ipv6_ext_kinds(void **state)
{
	struct fx *f = *state;
	struct pkt p;

	/* Hop-by-hop -> routing -> AH -> UDP, each 8 bytes (AH: (0+2)*4). */
	build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = 3));
	p.buf[p.l3 + 6] = IPPROTO_HOPOPTS;
	p.buf[ext_off(&p, 0)] = IPPROTO_ROUTING;
	p.buf[ext_off(&p, 1)] = IPPROTO_AH;
	expect_pkt(f, &p, e_drop(BG_CNT_IPV6), "ipv6 hop+routing+AH");

	/* One 16-byte destination-options header (length field 1). */
	build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = 2));
	p.buf[ext_off(&p, 0)] = IPPROTO_UDP;
	p.buf[ext_off(&p, 0) + 1] = 1;
	expect_pkt(f, &p, e_drop(BG_CNT_IPV6), "ipv6 one 16-byte dstopts");

	/* One 16-byte AH (length field 2: (2+2)*4). */
	build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = 2));
	p.buf[p.l3 + 6] = IPPROTO_AH;
	p.buf[ext_off(&p, 0)] = IPPROTO_UDP;
	p.buf[ext_off(&p, 0) + 1] = 2;
	expect_pkt(f, &p, e_drop(BG_CNT_IPV6), "ipv6 one 16-byte AH");

	/* Mixed lengths, framed exactly: HOP (16) -> AH (16) -> DSTOPTS (8)
	 * -> UDP. Each length is checked by cutting the frame at the end of
	 * the chain (complete) and one byte earlier (cut short). */
	build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = 5));
	p.buf[p.l3 + 6] = IPPROTO_HOPOPTS;
	p.buf[ext_off(&p, 0)] = IPPROTO_AH;
	p.buf[ext_off(&p, 0) + 1] = 1;
	p.buf[ext_off(&p, 2)] = IPPROTO_DSTOPTS;
	p.buf[ext_off(&p, 2) + 1] = 2;
	expect_pkt(f, &p, e_drop(BG_CNT_IPV6), "ipv6 hop16+AH16+dstopts8");
	expect_len(f, &p, p.l4, e_drop(BG_CNT_IPV6),
		   "ipv6 hop16+AH16+dstopts8, cut at the chain's end");
	expect_len(f, &p, p.l4 - 1, mal(e_drop(BG_CNT_IPV6), BG_MAL_TRUNC_IPV6_EXT),
		   "ipv6 hop16+AH16+dstopts8, cut one byte short");

	/* Length fields pointing past the end of the frame: the chain is
	 * cut short, the fixed header is still judged. */
	build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = 2));
	p.buf[ext_off(&p, 1) + 1] = 255;
	expect_pkt(f, &p, mal(e_drop(BG_CNT_IPV6), BG_MAL_TRUNC_IPV6_EXT),
		   "ipv6 dstopts length 2048 bytes");
	build(&p, SPEC(AF_INET6, A6, U6, .ext_hdrs = 2));
	p.buf[ext_off(&p, 1) + 1] = 255;
	expect_pkt(f, &p, mal(e_pass(BG_CNT_IPV6), BG_MAL_TRUNC_IPV6_EXT),
		   "ipv6 dstopts length 2048 bytes, unlisted dst");
	build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = 1));
	p.buf[p.l3 + 6] = IPPROTO_AH;
	p.buf[ext_off(&p, 0) + 1] = 200;
	expect_pkt(f, &p, mal(e_drop(BG_CNT_IPV6), BG_MAL_TRUNC_IPV6_EXT),
		   "ipv6 AH length 808 bytes");

	/* The frame ends inside the extension chain. */
	build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = 3));
	expect_len(f, &p, ext_off(&p, 1) + 3,
		   mal(e_drop(BG_CNT_IPV6), BG_MAL_TRUNC_IPV6_EXT),
		   "ipv6 cut inside the second ext header");
	/* ...or exactly at its end: the chain is complete, UDP is absent. */
	expect_len(f, &p, p.l4, e_drop(BG_CNT_IPV6),
		   "ipv6 cut right after the ext chain");

	/* No Next Header (59) and ESP (50) end the chain. */
	build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = 1));
	p.buf[ext_off(&p, 0)] = 59;
	expect_pkt(f, &p, e_drop(BG_CNT_IPV6), "ipv6 dstopts -> no next header");
	p.buf[ext_off(&p, 0)] = 50;
	expect_pkt(f, &p, e_drop(BG_CNT_IPV6), "ipv6 dstopts -> ESP");
}

/* ---- Tests: fragments --------------------------------------------------- */

static void test_fragments(void **state)
{
	static const struct {
		const char *name;
		uint16_t frag_off;
		int frag;
	} v4[] = {
		{ "first fragment (MF)", 0x2000, 1 },
		{ "middle fragment (MF, offset 185)", 0x2000 | 185, 1 },
		{ "last fragment (offset 185)", 185, 1 },
		{ "offset 1", 1, 1 },
		{ "DF only: not a fragment", 0x4000, 0 },
		{ "DF + MF", 0x6000, 1 },
	};
	struct fx *f = *state;
	struct pkt p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(v4); i++) {
		struct exp d = e_drop(BG_CNT_IPV4), n = e_pass(BG_CNT_IPV4);

		if (v4[i].frag) {
			d = plus(d, BG_CNT_FRAGMENTS);
			n = plus(n, BG_CNT_FRAGMENTS);
		}
		build(&p, SPEC(AF_INET, U4, A4, .frag_off = v4[i].frag_off));
		expect_pkt(f, &p, d, "ipv4 %s, listed dst", v4[i].name);
		build(&p, SPEC(AF_INET, A4, U4, .frag_off = v4[i].frag_off));
		expect_pkt(f, &p, n, "ipv4 %s, unlisted dst", v4[i].name);
	}

	build(&p, SPEC(AF_INET6, U6, A6, .frag6 = 1));
	expect_pkt(f, &p, plus(e_drop(BG_CNT_IPV6), BG_CNT_FRAGMENTS),
		   "ipv6 first fragment, listed dst");
	build(&p, SPEC(AF_INET6, U6, A6, .frag6 = 2));
	expect_pkt(f, &p, plus(e_drop(BG_CNT_IPV6), BG_CNT_FRAGMENTS),
		   "ipv6 non-first fragment, listed dst");
	build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = 2, .frag6 = 2));
	expect_pkt(f, &p, plus(e_drop(BG_CNT_IPV6), BG_CNT_FRAGMENTS),
		   "ipv6 2 dstopts + non-first fragment, listed dst");
	build(&p, SPEC(AF_INET6, A6, U6, .frag6 = 1));
	expect_pkt(f, &p, plus(e_pass(BG_CNT_IPV6), BG_CNT_FRAGMENTS),
		   "ipv6 first fragment, unlisted dst");
	build(&p, SPEC(AF_INET6, A6, U6, .frag6 = 2));
	expect_pkt(f, &p, plus(e_pass(BG_CNT_IPV6), BG_CNT_FRAGMENTS),
		   "ipv6 non-first fragment, unlisted dst");
	/* A non-first fragment ends the parse: whatever follows is payload.
	 * Here the payload (UDP: length byte 0x40) read as a destination-
	 * options header would run past the frame. Offsets 1 and 8191 are
	 * the extremes of the 13-bit field. */
	{
		static const uint16_t offs[] = { 1, 185, 8191 };
		size_t o;

		for (o = 0; o < ARRAY_SIZE(offs); o++) {
			uint16_t fo = (uint16_t)(offs[o] << 3 | 1);

			build(&p, SPEC(AF_INET6, U6, A6, .frag6 = 2));
			p.buf[p.l4 - 8] = IPPROTO_DSTOPTS;
			p.buf[p.l4 - 8 + 2] = fo >> 8;
			p.buf[p.l4 - 8 + 3] = fo & 0xff;
			expect_pkt(f, &p, plus(e_drop(BG_CNT_IPV6), BG_CNT_FRAGMENTS),
				   "ipv6 fragment offset %u, next header dstopts",
				   offs[o]);
		}
	}
	/* A first fragment does not: the same header is parsed (and cut). */
	build(&p, SPEC(AF_INET6, U6, A6, .frag6 = 1));
	p.buf[p.l4 - 8] = IPPROTO_DSTOPTS;
	expect_pkt(f, &p, mal(plus(e_drop(BG_CNT_IPV6), BG_CNT_FRAGMENTS),
			      BG_MAL_TRUNC_IPV6_EXT),
		   "ipv6 first fragment, next header dstopts");
	/* Atomic fragment (offset 0, M clear): counted as a fragment. */
	build(&p, SPEC(AF_INET6, U6, A6, .frag6 = 1));
	p.buf[p.l4 - 8 + 3] &= (uint8_t)~1;
	expect_pkt(f, &p, plus(e_drop(BG_CNT_IPV6), BG_CNT_FRAGMENTS),
		   "ipv6 atomic fragment, listed dst");
}

/* ---- Tests: truncation -------------------------------------------------- */

/*
 * What the datapath must do with the first len bytes of the packet built
 * from s (listed destination). The reasons by range:
 *   [14, l3)            inside a VLAN tag          trunc_vlan, not judged
 *   [l3, l3 + 20|40)    inside the fixed IP header trunc_ipv4/6, not judged
 *   [l3 + 20, l3+IHL*4) inside the IPv4 options    trunc_ipv4, not judged
 *   [l3 + 40, l4)       inside the IPv6 ext chain  trunc_ipv6_ext, JUDGED
 *   [l4, len]           inside or after UDP        well formed, judged
 * UDP is not parsed for address matching, so a cut inside it is not
 * malformed: the IP header is complete and the address is what counts.
 */
static struct exp trunc_expect(const struct fx *f, const struct pkt_spec *s,
			       const struct pkt *p, size_t len, const char **why)
{
	int v4 = s->family == AF_INET;
	int fam = v4 ? BG_CNT_IPV4 : BG_CNT_IPV6;
	size_t fixed = v4 ? 20 : 40;
	struct exp e;

	if (len < p->l3) {
		*why = "inside a VLAN tag";
		return e_unjudged(f, BG_MAL_TRUNC_VLAN);
	}
	if (len < p->l3 + fixed) {
		*why = "inside the fixed IP header";
		return e_unjudged(f, v4 ? BG_MAL_TRUNC_IPV4 : BG_MAL_TRUNC_IPV6);
	}
	if (v4 && len < p->l4) {
		*why = "inside the IPv4 options";
		return e_unjudged(f, BG_MAL_TRUNC_IPV4);
	}
	e = e_drop(fam);
	/* pktgen puts the IPv6 fragment header last, right before UDP. */
	if ((v4 && s->frag_off) || (s->frag6 && len >= p->l4))
		e = plus(e, BG_CNT_FRAGMENTS);
	if (len < p->l4) {
		*why = "inside the IPv6 extension chain";
		return mal(e, BG_MAL_TRUNC_IPV6_EXT);
	}
	*why = len < p->len ? "inside UDP or its payload" : "complete";
	return e;
}

static void truncations(struct fx *f, const char *name, struct pkt_spec s)
{
	struct bg_counters before, after;
	struct pkt p;
	size_t len;

	build(&p, s);
	counters(f, &before);
	for (len = 0; len < ETH_HLEN; len++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p.buf,
			    .data_size_in = (__u32)len, .repeat = 1);
		int err = bpf_prog_test_run_opts(f->prog, &o);

		if (err != -EINVAL)
			fail_msg("%s, %zu bytes: test_run returned %d, expected -EINVAL",
				 name, len, err);
	}
	counters(f, &after);
	assert_int_equal(after.cnt[BG_CNT_PACKETS], before.cnt[BG_CNT_PACKETS]);

	for (len = ETH_HLEN; len <= p.len; len++) {
		const char *why = "";
		struct exp e = trunc_expect(f, &s, &p, len, &why);

		expect_len(f, &p, len, e, "%s cut to %zu of %zu bytes (%s)",
			   name, len, p.len, why);
	}
}

static void test_truncation_ipv4(void **state)
{
	struct fx *f = *state;
	static const struct tags q1 = { "", 1, { ETH_P_8021Q } };
	static const struct tags ad2 = { "", 2, { 0x88a8, ETH_P_8021Q } };

	truncations(f, "ipv4/udp", SPEC(AF_INET, U4, A4));
	truncations(f, "802.1Q ipv4/udp", tagged(SPEC(AF_INET, U4, A4), &q1));
	truncations(f, "802.1ad+802.1Q ipv4/udp",
		    tagged(SPEC(AF_INET, U4, A4), &ad2));
	truncations(f, "ipv4 IHL 15/udp", SPEC(AF_INET, U4, A4, .ihl = 15));
	truncations(f, "ipv4 first fragment",
		    SPEC(AF_INET, U4, A4, .frag_off = 0x2000));
}

static void test_truncation_ipv6(void **state)
{
	struct fx *f = *state;
	static const struct tags q1 = { "", 1, { ETH_P_8021Q } };
	static const struct tags ad1 = { "", 1, { 0x88a8 } };

	truncations(f, "ipv6/udp", SPEC(AF_INET6, U6, A6));
	truncations(f, "802.1Q ipv6/udp", tagged(SPEC(AF_INET6, U6, A6), &q1));
	truncations(f, "802.1ad ipv6/udp", tagged(SPEC(AF_INET6, U6, A6), &ad1));
	truncations(f, "ipv6 2 dstopts + fragment/udp",
		    SPEC(AF_INET6, U6, A6, .ext_hdrs = 2, .frag6 = 1));
}

/* Frames under ETH_HLEN never reach the program through test_run, not even
 * behind XDP metadata (ctx_in->data), so trunc_eth is unreachable here. */
static void test_short_frames_refused(void **state)
{
	struct fx *f = *state;
	struct bg_counters before, after;
	__u8 buf[64];
	__u32 len, meta;

	memset(buf, 0, sizeof(buf));
	counters(f, &before);
	for (meta = 0; meta <= 32; meta += 4) {
		for (len = 0; len < ETH_HLEN; len++) {
			struct xdp_md ctx = { .data = meta, .data_end = meta + len };
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf,
				    .data_size_in = meta + len, .repeat = 1);
			int err;

			if (meta) {
				o.ctx_in = &ctx;
				o.ctx_size_in = sizeof(ctx);
			}
			err = bpf_prog_test_run_opts(f->prog, &o);
			if (err != -EINVAL)
				fail_msg("%u bytes behind %u bytes of metadata: test_run returned %d, expected -EINVAL",
					 len, meta, err);
		}
	}
	counters(f, &after);
	assert_memory_equal(&before, &after, sizeof(before));
}

/* ---- Tests: non-IP ------------------------------------------------------ */

static void test_non_ip(void **state)
{
	static const struct {
		const char *name;
		uint16_t et;
		int vlans;
		size_t payload;
	} cases[] = {
		{ "ARP", ETH_P_ARP, 0, 28 },
		{ "ARP, header only", ETH_P_ARP, 0, 0 },
		{ "unknown ethertype 0x88b5", 0x88b5, 0, 46 },
		{ "IPX", 0x8137, 0, 30 },
		{ "802.3 length field", 0x002e, 0, 46 },
		{ "ethertype 0", 0, 0, 46 },
		{ "old QinQ TPID 0x9100", 0x9100, 0, 46 },
		{ "ARP behind 802.1Q", ETH_P_ARP, 1, 28 },
		{ "ARP behind two tags", ETH_P_ARP, 2, 28 },
		{ "unknown behind 802.1Q, no payload", 0x88b5, 1, 0 },
	};
	struct fx *f = *state;
	struct pkt p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct pkt_spec s = { .ethertype = cases[i].et,
				      .vlans = cases[i].vlans,
				      .payload = cases[i].payload };

		build(&p, s);
		expect_pkt(f, &p, e_non_ip(), "%s", cases[i].name);
	}
	/* An IPv4 packet with a listed destination behind the ARP ethertype
	 * is not parsed as IP. */
	build(&p, SPEC(AF_INET, U4, A4));
	set_ethertype(&p, ETH_P_ARP);
	expect_pkt(f, &p, e_non_ip(), "ipv4 bytes behind the ARP ethertype");
	build(&p, SPEC(AF_INET6, U6, A6));
	set_ethertype(&p, 0x88b5);
	expect_pkt(f, &p, e_non_ip(), "ipv6 bytes behind ethertype 0x88b5");
}

/* ---- Tests: match modes ------------------------------------------------- */

static void test_match_dst(void **state)
{
	struct fx *f = *state;
	struct pkt p;
	size_t i;

	for (i = 0; i < NFAMS; i++) {
		const struct fam *m = &FAMS[i];

		build(&p, SPEC(m->af, m->unlisted, m->listed));
		expect_pkt(f, &p, e_drop(m->cnt), "dst mode, %s dst listed", m->name);
		build(&p, SPEC(m->af, m->listed, m->unlisted));
		expect_pkt(f, &p, e_pass(m->cnt), "dst mode, %s src listed", m->name);
		build(&p, SPEC(m->af, m->unlisted2, m->unlisted));
		expect_pkt(f, &p, e_pass(m->cnt), "dst mode, %s none listed", m->name);
	}
}

static void test_match_src(void **state)
{
	struct fx *f = *state;
	struct pkt p;
	size_t i;

	for (i = 0; i < NFAMS; i++) {
		const struct fam *m = &FAMS[i];

		build(&p, SPEC(m->af, m->listed, m->unlisted));
		expect_pkt(f, &p, e_drop(m->cnt), "src mode, %s src listed", m->name);
		build(&p, SPEC(m->af, m->unlisted, m->listed));
		expect_pkt(f, &p, e_pass(m->cnt), "src mode, %s dst listed", m->name);
		build(&p, SPEC(m->af, m->unlisted2, m->unlisted));
		expect_pkt(f, &p, e_pass(m->cnt), "src mode, %s none listed", m->name);
		build(&p, SPEC(m->af, m->listed2, m->listed, .vlans = 2));
		expect_pkt(f, &p, e_drop(m->cnt), "src mode, %s both listed, 2 tags",
			   m->name);
	}
}

static void test_match_both(void **state)
{
	struct fx *f = *state;
	struct pkt p;
	size_t i;

	for (i = 0; i < NFAMS; i++) {
		const struct fam *m = &FAMS[i];

		/* The destination is probed first; a hit ends the probing. */
		build(&p, SPEC(m->af, m->unlisted, m->listed));
		expect_pkt(f, &p, e_drop(m->cnt), "both mode, %s dst listed", m->name);
		build(&p, SPEC(m->af, m->listed, m->listed2));
		expect_pkt(f, &p, e_drop(m->cnt), "both mode, %s both listed", m->name);
		build(&p, SPEC(m->af, m->listed, m->unlisted));
		expect_pkt(f, &p, extra_negative(e_drop(m->cnt)),
			   "both mode, %s src listed", m->name);
		build(&p, SPEC(m->af, m->unlisted2, m->unlisted));
		expect_pkt(f, &p, extra_negative(e_pass(m->cnt)),
			   "both mode, %s none listed", m->name);
	}
}

/* ---- Tests: actions and events ------------------------------------------ */

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static void check_event(struct fx *f, const char *what, const struct fam *m,
			__u8 which, const char *addr, __u64 t0, __u64 t1)
{
	const struct bg_event *ev = &f->ev[0];
	__u8 want[16] = { 0 };

	assert_int_equal(inet_pton(m->af, addr, want), 1);
	if (f->nev != 1)
		fail_msg("%s: %d events, expected 1", what, f->nev);
	if (ev->family != m->key || ev->which != which ||
	    ev->verdict != BG_VERDICT_FLAG || ev->pad != 0)
		fail_msg("%s: event family %u which %u verdict %u pad %u, expected %u %u %u 0",
			 what, ev->family, ev->which, ev->verdict, ev->pad,
			 m->key, which, BG_VERDICT_FLAG);
	if (memcmp(ev->addr, want, sizeof(want)))
		fail_msg("%s: event address is not %s", what, addr);
	/* test_run without ctx_in runs on the loopback device's queue. */
	if (ev->ifindex != if_nametoindex("lo"))
		fail_msg("%s: event ifindex %u, expected lo (%u)", what,
			 ev->ifindex, if_nametoindex("lo"));
	if (ev->ts_ns < t0 || ev->ts_ns > t1)
		fail_msg("%s: event timestamp %llu outside the run [%llu, %llu]",
			 what, (unsigned long long)ev->ts_ns,
			 (unsigned long long)t0, (unsigned long long)t1);
}

static void test_action_flag(void **state)
{
	struct fx *f = *state;
	struct pkt p;
	size_t i;

	for (i = 0; i < NFAMS; i++) {
		const struct fam *m = &FAMS[i];
		__u64 t0;

		build(&p, SPEC(m->af, m->unlisted, m->listed));
		t0 = mono_ns();
		expect_pkt(f, &p, e_flag(m->cnt), "flag, %s dst listed", m->name);
		check_event(f, "flag dst", m, BG_MATCH_DST, m->listed, t0, mono_ns());

		build(&p, SPEC(m->af, m->listed2, m->unlisted));
		t0 = mono_ns();
		expect_pkt(f, &p, extra_negative(e_flag(m->cnt)),
			   "flag, %s src listed", m->name);
		check_event(f, "flag src", m, BG_MATCH_SRC, m->listed2, t0, mono_ns());

		/* Addresses read through a longer header path: two tags and
		 * an over-long extension chain. */
		build(&p, SPEC(m->af, m->unlisted, m->listed2, .vlans = 2,
			       .ext_hdrs = m->af == AF_INET6 ? 8 : 0,
			       .ihl = m->af == AF_INET ? 15 : 0));
		t0 = mono_ns();
		expect_pkt(f, &p,
			   m->af == AF_INET6 ? mal(e_flag(m->cnt), BG_MAL_IPV6_EXT_TOO_LONG)
					     : e_flag(m->cnt),
			   "flag, %s dst listed, long headers", m->name);
		check_event(f, "flag long headers", m, BG_MATCH_DST, m->listed2,
			    t0, mono_ns());

		build(&p, SPEC(m->af, m->unlisted, m->unlisted2));
		expect_pkt(f, &p, extra_negative(e_pass(m->cnt)),
			   "flag, %s none listed", m->name);
		assert_int_equal(f->nev, 0);
	}
}

static void test_action_drop(void **state)
{
	struct fx *f = *state;
	struct pkt p;
	size_t i;

	for (i = 0; i < NFAMS; i++) {
		const struct fam *m = &FAMS[i];

		build(&p, SPEC(m->af, m->unlisted, m->listed));
		expect_pkt(f, &p, e_drop(m->cnt), "drop, %s dst listed", m->name);
		if (f->nev != 0)
			fail_msg("drop, %s: %d events sent for a drop", m->name,
				 f->nev);
	}
}

/* More flagged packets than the ring buffer holds, without consuming:
 * the overflow is counted in events_lost, never lost silently. */
static void test_flag_ring_full(void **state)
{
	struct fx *f = *state;
	const __u32 runs = 10000; /* 256 KiB / (32 + 8 bytes) < 6600 */
	LIBBPF_OPTS(bpf_test_run_opts, o, .repeat = runs);
	struct bg_counters before, after;
	__u64 lost, flagged;
	struct pkt p;

	build(&p, SPEC(AF_INET, U4, A4));
	o.data_in = p.buf;
	o.data_size_in = (__u32)p.len;
	counters(f, &before);
	assert_int_equal(bpf_prog_test_run_opts(f->prog, &o), 0);
	assert_int_equal(o.retval, XDP_PASS);
	counters(f, &after);
	flagged = after.cnt[BG_CNT_FLAGGED] - before.cnt[BG_CNT_FLAGGED];
	lost = after.cnt[BG_CNT_EVENTS_LOST] - before.cnt[BG_CNT_EVENTS_LOST];
	assert_int_equal(flagged, runs);
	assert_int_equal(after.cnt[BG_CNT_PACKETS] - before.cnt[BG_CNT_PACKETS], runs);
	assert_true(lost > 0);
	f->nev = 0;
	assert_true(ring_buffer__consume(f->rb) >= 0);
	if ((__u64)f->nev + lost != runs)
		fail_msg("%d events + %llu lost != %u flagged", f->nev,
			 (unsigned long long)lost, runs);
	/* Drained: the next one is delivered again. */
	expect_pkt(f, &p, e_flag(BG_CNT_IPV4), "flag after draining the ring");
}

/* ---- Tests: the unparsed policy (attach --unparsed) --------------------- */

/*
 * Under --unparsed drop, every frame with no address to judge is dropped
 * with its reason, dropped and unparsed_dropped counted, listed
 * destination or not; what has an address is judged as always (two VLAN
 * tags, an IPv6 extension chain cut or too long), and a well-formed
 * non-IP frame passes. The tests above run under this policy too (their
 * unparsed frames through e_unjudged); this one spells the cases out.
 * trunc_eth cannot be reached through test_run (test_short_frames_refused).
 */
static void test_unparsed_drop(void **state)
{
	static const struct tags qinq3 = { "", 3, { 0x88a8, ETH_P_8021Q,
						    ETH_P_8021Q } };
	static const struct tags qinq2 = { "", 2, { 0x88a8, ETH_P_8021Q } };
	struct fx *f = *state;
	struct pkt p;
	size_t i;

	assert_int_equal(f->unparsed, BG_UNPARSED_DROP);
	for (i = 0; i < NFAMS; i++) {
		const struct fam *m = &FAMS[i];
		int trunc = m->af == AF_INET ? BG_MAL_TRUNC_IPV4 : BG_MAL_TRUNC_IPV6;
		int badver = m->af == AF_INET ? BG_MAL_BAD_IPV4_VERSION :
						BG_MAL_BAD_IPV6_VERSION;

		/* QinQ, three tags: a listed destination inside is not let
		 * through, nor an unlisted one (it cannot be told apart). */
		build(&p, tagged(SPEC(m->af, m->unlisted, m->listed), &qinq3));
		expect_pkt(f, &p, e_unparsed_dropped(BG_MAL_VLAN_TOO_DEEP),
			   "%s 3 tags, listed dst", m->name);
		build(&p, tagged(SPEC(m->af, m->listed, m->unlisted), &qinq3));
		expect_pkt(f, &p, e_unparsed_dropped(BG_MAL_VLAN_TOO_DEEP),
			   "%s 3 tags, unlisted dst", m->name);
		/* Two tags: parsed, judged by address. */
		build(&p, tagged(SPEC(m->af, m->unlisted, m->listed), &qinq2));
		expect_pkt(f, &p, e_drop(m->cnt), "%s 2 tags, listed dst", m->name);
		build(&p, tagged(SPEC(m->af, m->listed, m->unlisted), &qinq2));
		expect_pkt(f, &p, e_pass(m->cnt), "%s 2 tags, unlisted dst", m->name);
		/* A VLAN tag cut short, the fixed IP header cut short. */
		build(&p, tagged(SPEC(m->af, m->listed, m->unlisted), &qinq2));
		expect_len(f, &p, ETH_HLEN + 2,
			   e_unparsed_dropped(BG_MAL_TRUNC_VLAN),
			   "%s cut inside the first tag", m->name);
		build(&p, SPEC(m->af, m->listed, m->unlisted));
		expect_len(f, &p, p.l3 + 19, e_unparsed_dropped(trunc),
			   "%s cut inside the IP header, unlisted dst", m->name);
		/* The wrong IP version for the ethertype. */
		build(&p, SPEC(m->af, m->listed, m->unlisted));
		set_version(&p, m->af == AF_INET ? 6 : 4);
		expect_pkt(f, &p, e_unparsed_dropped(badver),
			   "%s wrong version, unlisted dst", m->name);
	}
	/* IHL < 5, and IHL 15 cut inside its options. */
	build(&p, SPEC(AF_INET, A4, U4));
	set_ver_ihl(&p, 4, 4);
	expect_pkt(f, &p, e_unparsed_dropped(BG_MAL_BAD_IPV4_IHL),
		   "ipv4 IHL 4, unlisted dst");
	build(&p, SPEC(AF_INET, A4, U4, .ihl = 15));
	expect_len(f, &p, p.l3 + 40, e_unparsed_dropped(BG_MAL_TRUNC_IPV4),
		   "ipv4 IHL 15 cut inside the options, unlisted dst");

	/* Malformed past a valid IPv6 header: judged by address, as by
	 * default; the policy is not a way to drop these. */
	build(&p, SPEC(AF_INET6, A6, U6, .ext_hdrs = BG_IPV6_EXT_MAX + 1));
	expect_pkt(f, &p, mal(e_pass(BG_CNT_IPV6), BG_MAL_IPV6_EXT_TOO_LONG),
		   "ipv6 chain too long, unlisted dst");
	build(&p, SPEC(AF_INET6, U6, A6, .ext_hdrs = BG_IPV6_EXT_MAX + 1));
	expect_pkt(f, &p, mal(e_drop(BG_CNT_IPV6), BG_MAL_IPV6_EXT_TOO_LONG),
		   "ipv6 chain too long, listed dst");
	build(&p, SPEC(AF_INET6, A6, U6, .ext_hdrs = 2));
	expect_len(f, &p, ext_off(&p, 1) + 4,
		   mal(e_pass(BG_CNT_IPV6), BG_MAL_TRUNC_IPV6_EXT),
		   "ipv6 chain cut, unlisted dst");

	/* Non-IP is not unparsed: it passes, tagged or not. */
	build(&p, (struct pkt_spec){ .ethertype = ETH_P_ARP, .payload = 28 });
	expect_pkt(f, &p, e_non_ip(), "ARP");
	build(&p, (struct pkt_spec){ .ethertype = ETH_P_ARP, .vlans = 2,
				     .payload = 28 });
	expect_pkt(f, &p, e_non_ip(), "ARP behind two tags");
	build(&p, (struct pkt_spec){ .ethertype = 0x88b5, .payload = 0 });
	expect_pkt(f, &p, e_non_ip(), "unknown ethertype, no payload");
}

/* The policy does not wait for a filter: with none loaded, an unparsed
 * frame is dropped all the same, and IP frames pass (no_filter). */
static void test_unparsed_drop_no_filter(void **state)
{
	static const struct tags qinq3 = { "", 3, { 0x88a8, ETH_P_8021Q,
						    ETH_P_8021Q } };
	struct fx *f = *state;
	struct pkt p;

	build(&p, tagged(SPEC(AF_INET, U4, A4), &qinq3));
	expect_pkt(f, &p, e_unparsed_dropped(BG_MAL_VLAN_TOO_DEEP),
		   "no filter, 3 tags");
	build(&p, SPEC(AF_INET, U4, A4));
	set_ver_ihl(&p, 4, 3);
	expect_pkt(f, &p, e_unparsed_dropped(BG_MAL_BAD_IPV4_IHL),
		   "no filter, IHL 3");
	build(&p, SPEC(AF_INET, U4, A4));
	expect_pkt(f, &p, e_no_filter(BG_CNT_IPV4), "no filter, ipv4");
	build(&p, (struct pkt_spec){ .ethertype = ETH_P_ARP, .payload = 28 });
	expect_pkt(f, &p, e_non_ip(), "no filter, ARP");
}

/* ---- Tests: filter slot ------------------------------------------------- */

static void test_no_filter(void **state)
{
	struct fx *f = *state;
	struct pkt p;
	__u32 zero = 0;
	size_t i;

	for (i = 0; i < NFAMS; i++) {
		const struct fam *m = &FAMS[i];

		build(&p, SPEC(m->af, m->listed2, m->listed));
		expect_pkt(f, &p, e_no_filter(m->cnt), "no filter, %s", m->name);
		build(&p, SPEC(m->af, m->listed2, m->listed, .frag6 = 1,
			       .frag_off = 0x2000));
		expect_pkt(f, &p, plus(e_no_filter(m->cnt), BG_CNT_FRAGMENTS),
			   "no filter, %s fragment", m->name);
	}
	/* Non-IP and unparseable frames never reach the filter lookup. */
	build(&p, (struct pkt_spec){ .ethertype = ETH_P_ARP, .payload = 28 });
	expect_pkt(f, &p, e_non_ip(), "no filter, ARP");
	build(&p, SPEC(AF_INET, U4, A4));
	set_ver_ihl(&p, 4, 3);
	expect_pkt(f, &p, e_unjudged(f, BG_MAL_BAD_IPV4_IHL), "no filter, IHL 3");

	publish_list(f, LIST_AB, SEED_AB);
	build(&p, SPEC(AF_INET, U4, A4));
	expect_pkt(f, &p, e_drop(BG_CNT_IPV4), "after the first publish");

	/* Emptying the slot goes back to no_filter. */
	assert_int_equal(bpf_map_delete_elem(f->filters, &zero), 0);
	expect_pkt(f, &p, e_no_filter(BG_CNT_IPV4), "after emptying the slot");
}

static void test_filter_swap(void **state)
{
	struct fx *f = *state;
	struct pkt p;
	size_t i;

	for (i = 0; i < NFAMS; i++) {
		const struct fam *m = &FAMS[i];
		const char *c = m->af == AF_INET ? C4 : C6;

		publish_list(f, LIST_AB, SEED_AB);
		build(&p, SPEC(m->af, m->unlisted, m->listed));
		expect_pkt(f, &p, e_drop(m->cnt), "%s list AB: old key", m->name);
		build(&p, SPEC(m->af, m->unlisted, c));
		expect_pkt(f, &p, e_pass(m->cnt), "%s list AB: new key", m->name);

		publish_list(f, LIST_C, SEED_C);
		build(&p, SPEC(m->af, m->unlisted, m->listed));
		expect_pkt(f, &p, e_pass(m->cnt), "%s after swap: old key", m->name);
		build(&p, SPEC(m->af, m->unlisted, c));
		expect_pkt(f, &p, e_drop(m->cnt), "%s after swap: new key", m->name);
	}
}

/* A filter without any IPv4 /32 key: IPv4 packets are not probed at all
 * (plen4 says there is nothing to find), so no probe is counted. */
static void test_filter_one_family(void **state)
{
	struct fx *f = *state;
	struct pkt p;

	publish_list(f, LIST_V6_ONLY, SEED_C);
	build(&p, SPEC(AF_INET, U4, A4));
	/* Nothing IPv4 is listed: no lookup, and the address is a negative. */
	expect_pkt(f, &p, plus(plus(plus(e_base(XDP_PASS), BG_CNT_IPV4), BG_CNT_PASSED),
			       BG_CNT_NEGATIVES),
		   "ipv4 packet, ipv6-only filter");
	build(&p, SPEC(AF_INET6, U6, A6));
	expect_pkt(f, &p, e_drop(BG_CNT_IPV6), "ipv6 packet, ipv6-only filter");
}

/* ---- Tests: packets are never modified ---------------------------------- */

static void fill_random(struct pkt *p, size_t from)
{
	size_t i;

	for (i = from; i < p->len; i++)
		p->buf[i] = (uint8_t)rand();
}

static void test_packets_untouched(void **state)
{
	struct fx *f = *state;
	struct pkt p;
	size_t i;

	srand(7);
	for (i = 0; i < NFAMS; i++) {
		const struct fam *m = &FAMS[i];
		struct pkt_spec s = SPEC(m->af, m->unlisted, m->listed, .vlans = 1);

		s.payload = 1400;
		build(&p, s);
		fill_random(&p, p.l4 + 8);
		expect_pkt(f, &p, e_flag(m->cnt), "%s flagged, random payload", m->name);

		s.dst = m->unlisted2;
		build(&p, s);
		fill_random(&p, p.l4 + 8);
		expect_pkt(f, &p, extra_negative(e_pass(m->cnt)),
			   "%s passed, random payload", m->name);

		s.payload = 0;
		build(&p, s);
		expect_len(f, &p, p.l3 + 3,
			   e_unjudged(f, m->af == AF_INET ? BG_MAL_TRUNC_IPV4 : BG_MAL_TRUNC_IPV6),
			   "%s malformed", m->name);
	}
	build(&p, (struct pkt_spec){ .ethertype = 0x88b5, .payload = 1000 });
	fill_random(&p, p.l3);
	expect_pkt(f, &p, e_non_ip(), "non-IP, random payload");
}

/* ---- Tests: malformed-packet fuzz --------------------------------------- */

#define FUZZ_RUNS 8000

static void test_fuzz(void **state)
{
	static const uint16_t interesting[] = { ETH_P_IP, ETH_P_IPV6,
						ETH_P_8021Q, 0x88a8 };
	static const uint8_t ext_types[] = { 0, 43, 44, 51, 60, 135, 17, 59 };
	struct fx *f = *state;
	struct pkt base[8], p;
	size_t nb = 0, i, verdicts[8] = { 0 };
	__u64 reasons[BG_MAL_SLOTS] = { 0 }, unparsed_dropped = 0;
	static struct result r;
	int run;

	build(&base[nb++], SPEC(AF_INET, U4, A4));
	build(&base[nb++], SPEC(AF_INET, A4, U4, .ihl = 8, .frag_off = 0x2000));
	build(&base[nb++], SPEC(AF_INET, U4, B4, .vlans = 1));
	build(&base[nb++], SPEC(AF_INET6, U6, A6, .ext_hdrs = 3));
	build(&base[nb++], SPEC(AF_INET6, U6, B6, .ext_hdrs = 1, .frag6 = 2));
	build(&base[nb++], SPEC(AF_INET6, A6, U6, .vlans = 2,
				.vlan_tpid = { 0x88a8, ETH_P_8021Q }));
	build(&base[nb++], SPEC(AF_INET6, U6, A6, .ext_hdrs = BG_IPV6_EXT_MAX));
	build(&base[nb++], (struct pkt_spec){ .ethertype = ETH_P_ARP, .payload = 28 });

	srand(1);
	for (run = 0; run < FUZZ_RUNS; run++) {
		const struct pkt *b = &base[(size_t)rand() % nb];
		size_t len = b->len, hdr = b->l4 + 8 < b->len ? b->l4 + 8 : b->len;
		int k, flips = 1 + rand() % 4;
		__u64 msum = 0, cls;
		char what[96];

		p = *b;
		for (k = 0; k < flips; k++) {
			size_t pos = (size_t)rand() % hdr;

			switch (rand() % 8) {
			case 0: { /* an ethertype/TPID where one may sit */
				size_t at = 12 + 4 * (size_t)(rand() % 3);
				uint16_t v = interesting[rand() % 4];

				p.buf[at] = v >> 8;
				p.buf[at + 1] = v & 0xff;
				break;
			}
			case 1: { /* a next-header slot of the IPv6 chain */
				size_t at = rand() % 2 ? b->l3 + 6 :
					    b->l3 + 40 + 8 * (size_t)(rand() % 8);

				if (at < hdr)
					p.buf[at] = ext_types[rand() % 8];
				break;
			}
			case 2: /* version and IHL */
				p.buf[b->l3] = (uint8_t)((rand() % 2 ? 0x40 : 0x60) |
							 rand() % 16);
				break;
			default:
				p.buf[pos] ^= (uint8_t)(1 + rand() % 255);
			}
		}
		if (rand() % 2)
			len = ETH_HLEN + (size_t)rand() % (b->len - ETH_HLEN + 1);

		snprintf(what, sizeof(what), "fuzz run %d (%zu bytes)", run, len);
		run_bytes(f, p.buf, len, &r);
		if (r.err)
			fail_msg("%s: test_run failed: %s", what, strerror(-r.err));
		if (r.verdict != XDP_PASS && r.verdict != XDP_DROP)
			fail_msg("%s: verdict %s", what, xdp_name(r.verdict));
		verdicts[r.verdict]++;
		if (r.d.cnt[BG_CNT_PACKETS] != 1)
			fail_msg("%s: packets moved by %llu", what,
				 (unsigned long long)r.d.cnt[BG_CNT_PACKETS]);
		for (i = 0; i < BG_MAL_SLOTS; i++) {
			msum += r.d.malformed[i];
			reasons[i] += r.d.malformed[i];
		}
		if (msum != r.d.cnt[BG_CNT_MALFORMED] || msum > 1)
			fail_msg("%s: malformed %llu, sum of reasons %llu", what,
				 (unsigned long long)r.d.cnt[BG_CNT_MALFORMED],
				 (unsigned long long)msum);
		/* One class per packet: IPv4, IPv6, non-IP, or unparseable. */
		cls = r.d.cnt[BG_CNT_IPV4] + r.d.cnt[BG_CNT_IPV6] +
		      r.d.cnt[BG_CNT_NON_IP];
		if (cls > 1 || (cls == 0 && msum != 1) ||
		    (r.d.cnt[BG_CNT_NON_IP] && msum))
			fail_msg("%s: ipv4 %llu ipv6 %llu non_ip %llu malformed %llu",
				 what, (unsigned long long)r.d.cnt[BG_CNT_IPV4],
				 (unsigned long long)r.d.cnt[BG_CNT_IPV6],
				 (unsigned long long)r.d.cnt[BG_CNT_NON_IP],
				 (unsigned long long)msum);
		/* Verdict and its counters agree; probes are answered once. */
		/* An unparsed frame (no family, a reason) is dropped under
		 * --unparsed drop and passed otherwise; the rest as judged. */
		if (r.d.cnt[BG_CNT_UNPARSED_DROPPED] !=
		    (f->unparsed == BG_UNPARSED_DROP && cls == 0))
			fail_msg("%s: unparsed_dropped %llu (ipv4/ipv6/non_ip %llu)",
				 what, (unsigned long long)r.d.cnt[BG_CNT_UNPARSED_DROPPED],
				 (unsigned long long)cls);
		unparsed_dropped += r.d.cnt[BG_CNT_UNPARSED_DROPPED];
		if (r.d.cnt[BG_CNT_DROPPED] != (r.verdict == XDP_DROP) ||
		    r.d.cnt[BG_CNT_PASSED] != (r.verdict == XDP_PASS) ||
		    r.d.cnt[BG_CNT_FLAGGED] || r.d.cnt[BG_CNT_NO_FILTER] ||
		    r.d.cnt[BG_CNT_PROBES] > 1 ||
		    r.d.cnt[BG_CNT_PROBES] != r.d.cnt[BG_CNT_POSITIVES] +
						      r.d.cnt[BG_CNT_NEGATIVES] ||
		    r.d.cnt[BG_CNT_POSITIVES] + r.d.cnt[BG_CNT_UNPARSED_DROPPED] !=
			    r.d.cnt[BG_CNT_DROPPED])
			fail_msg("%s: verdict %s with probes %llu positives %llu dropped %llu passed %llu",
				 what, xdp_name(r.verdict),
				 (unsigned long long)r.d.cnt[BG_CNT_PROBES],
				 (unsigned long long)r.d.cnt[BG_CNT_POSITIVES],
				 (unsigned long long)r.d.cnt[BG_CNT_DROPPED],
				 (unsigned long long)r.d.cnt[BG_CNT_PASSED]);
		if (r.out_len != len || memcmp(r.out, p.buf, len))
			fail_msg("%s: packet modified", what);
	}
	print_message("fuzz: %d runs, %zu passed, %zu dropped; malformed:",
		      FUZZ_RUNS, verdicts[XDP_PASS], verdicts[XDP_DROP]);
	for (i = 0; i < BG_MAL__COUNT; i++)
		if (reasons[i])
			print_message(" %s=%llu", mal_name((unsigned int)i),
				      (unsigned long long)reasons[i]);
	print_message("; unparsed_dropped=%llu\n",
		      (unsigned long long)unparsed_dropped);
	/* The mutations must reach both verdicts and the parser's corners. */
	assert_true(verdicts[XDP_PASS] > 0 && verdicts[XDP_DROP] > 0);
	assert_true((unparsed_dropped > 0) == (f->unparsed == BG_UNPARSED_DROP));
	for (i = BG_MAL_TRUNC_VLAN; i < BG_MAL__COUNT; i++)
		if (!reasons[i])
			fail_msg("fuzz never produced %s", mal_name((unsigned int)i));
}

/* ---- Main --------------------------------------------------------------- */

#define T(fn, cfg)                                                            \
	cmocka_unit_test_prestate_setup_teardown(fn, fx_setup, fx_teardown, &cfg)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_listed_unlisted, CFG_DST_DROP),
		T(test_vlan_tags, CFG_DST_DROP),
		T(test_ipv4_ihl, CFG_DST_DROP),
		T(test_ip_version_mismatch, CFG_DST_DROP),
		T(test_ipv6_ext_chain, CFG_DST_DROP),
		T(test_ipv6_ext_kinds, CFG_DST_DROP),
		T(test_fragments, CFG_DST_DROP),
		T(test_truncation_ipv4, CFG_DST_DROP),
		T(test_truncation_ipv6, CFG_DST_DROP),
		T(test_short_frames_refused, CFG_DST_DROP),
		T(test_non_ip, CFG_DST_DROP),
		T(test_match_dst, CFG_DST_DROP),
		T(test_match_src, CFG_SRC_DROP),
		T(test_match_both, CFG_BOTH_DROP),
		T(test_action_drop, CFG_BOTH_DROP),
		T(test_action_flag, CFG_BOTH_FLAG),
		T(test_flag_ring_full, CFG_BOTH_FLAG),
		T(test_no_filter, CFG_DST_NOFILTER),
		T(test_filter_swap, CFG_DST_DROP),
		T(test_filter_one_family, CFG_DST_NOFILTER),
		T(test_packets_untouched, CFG_BOTH_FLAG),
		T(test_fuzz, CFG_DST_DROP),
		/* attach --unparsed drop: the same parser tests, their
		 * unparsed frames now dropped (e_unjudged) */
		T(test_unparsed_drop, CFG_DST_DROP_UNP),
		T(test_unparsed_drop_no_filter, CFG_DST_NOFILTER_UNP),
		T(test_vlan_tags, CFG_DST_DROP_UNP),
		T(test_ipv4_ihl, CFG_DST_DROP_UNP),
		T(test_ip_version_mismatch, CFG_DST_DROP_UNP),
		T(test_ipv6_ext_chain, CFG_DST_DROP_UNP),
		T(test_truncation_ipv4, CFG_DST_DROP_UNP),
		T(test_truncation_ipv6, CFG_DST_DROP_UNP),
		T(test_non_ip, CFG_DST_DROP_UNP),
		T(test_packets_untouched, CFG_BOTH_FLAG_UNP),
		T(test_fuzz, CFG_DST_DROP_UNP),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
