// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Differential test of the XDP datapath (bloomgate_xdp) against an
 * independent userspace model (issue 12, item 8).
 *
 * DIFF_FRAMES random and mutated frames per configuration go through
 * BPF_PROG_TEST_RUN; for each one the model below says, from the rules
 * (bpf/parse.h's comment, the README's "Malformed packets" paragraph,
 * BG_MALFORMED_REASONS in bloomgate/abi.h), what the verdict and the delta
 * of every counter and malformed reason must be. The model parses the frame
 * itself, byte by byte: it shares no code with bpf/parse.h. What it does
 * share, on purpose, is the one lookup: "listed" and "allowed" are asked of
 * the same filter built in memory (bg_filter_test4/6, bg_filter_allowed4/6
 * in user/core/probe.c run bloomgate/lookup.h), so a disagreement is about the
 * parse and the counting, not about Bloom bits.
 *
 * The filter holds addresses only (no names): bloomgate_dns is never tail
 * called, a UDP frame to port 53 is judged by address like any other.
 *
 * Cost: the verdict is compared for every frame; the per-CPU counters are
 * read after every frame only for the first PER_FRAME frames, then once
 * per BATCH frames and compared with the model's sums over the batch. A
 * batch that differs is run again frame by frame (frames are a function of
 * the seed and their index) to name the first differing frame.
 * With the flag action the ring's events are read after every batch and
 * compared, in order and field by field, with the model's (one per flagged
 * frame: the address that matched, which side, the family).
 *
 * Reproduce: BG_DIFF_SEED=<seed> [BG_DIFF_FRAMES=<n>] build/tests/test_diff
 * (the seed is printed at the start and with every failure).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bloomgate/abi.h"
#include "core/counters.h"
#include "core/filter.h"
#include "core/lists.h"
#include "kern/swap.h"

#include "blocklist.h"
#include "pktgen.h"
#include "verdict_names.h"
#include "bloomgate.skel.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define DIFF_FRAMES 1000000 /* per configuration; BG_DIFF_FRAMES overrides */
#define PER_FRAME 10000 /* frames whose counters are read one by one */
#define BATCH 1000 /* then frames per counter read */
#define DEFAULT_SEED 0x6469666662670001ULL

#define NLISTED 512 /* listed addresses per family */
#define ALLOW_EVERY 8 /* every 8th listed address is also allowlisted */
#define FRAME_MAX 1600 /* BPF_PROG_TEST_RUN takes up to ~3.5 KiB */

/* Header values, written out here rather than taken from the parser. */
#define ET_IPV4 0x0800
#define ET_IPV6 0x86dd
#define ET_8021Q 0x8100
#define ET_8021AD 0x88a8
#define NH_HOPOPTS 0
#define NH_ROUTING 43
#define NH_FRAGMENT 44
#define NH_AH 51
#define NH_DSTOPTS 60
#define NH_MOBILITY 135
#define NH_HIP 139
#define NH_SHIM6 140

/* The extension headers the datapath walks (bpf/parse.h's list). */
static const uint8_t EXT_KINDS[] = { NH_HOPOPTS, NH_ROUTING, NH_FRAGMENT,
				     NH_AH, NH_DSTOPTS, NH_MOBILITY,
				     NH_HIP, NH_SHIM6 };

/* ---- Names for messages ------------------------------------------------ */

/* cnt_name, mal_name, xdp_name: tests/verdict_names.h */

/* ---- Random numbers ----------------------------------------------------- */

/* splitmix64: every frame gets its own stream, a function of (seed, index),
 * so any frame can be built again without replaying the ones before. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ULL;
	return mix64(r->s);
}

/* Uniform in [0, n), n > 0 (the modulo bias is irrelevant here). */
static uint32_t below(struct rng *r, uint32_t n)
{
	return (uint32_t)(rnd(r) % n);
}

/* 1 with probability pct percent. */
static int chance(struct rng *r, uint32_t pct)
{
	return below(r, 100) < pct;
}

static void rnd_bytes(struct rng *r, uint8_t *p, size_t n)
{
	while (n--)
		*p++ = (uint8_t)rnd(r);
}

/* ---- Test configuration and the listed set ------------------------------ */

struct cfg {
	const char *name;
	__u8 match, action;
	__u8 unparsed; /* cfg_unparsed (attach --unparsed); 0: pass */
};

static struct cfg CFG_DST_DROP = { "match dst, drop", BG_MATCH_DST,
				   BG_ACTION_DROP, BG_UNPARSED_PASS };
static struct cfg CFG_BOTH_DROP = { "match both, drop", BG_MATCH_BOTH,
				    BG_ACTION_DROP, BG_UNPARSED_PASS };
/* attach --unparsed drop: the frames with no address to judge (about a
 * quarter of those generated) become drops. */
static struct cfg CFG_DST_DROP_UNP = { "match dst, drop, unparsed drop",
				       BG_MATCH_DST, BG_ACTION_DROP,
				       BG_UNPARSED_DROP };
/* attach --action flag: a listed, not allowlisted address passes, counted
 * as flagged, and leaves one event in the ring (checked in order against
 * the model's, field by field). */
static struct cfg CFG_BOTH_FLAG = { "match both, flag", BG_MATCH_BOTH,
				    BG_ACTION_FLAG, BG_UNPARSED_PASS };

struct fx {
	const struct cfg *cfg;
	struct bloomgate *skel;
	int prog, filters, stats;
	uint64_t seed;
	long frames;
	void *mem; /* the same filter, built in memory for the model */
	__u8 v4[NLISTED][4]; /* listed addresses, network order */
	__u8 v6[NLISTED][16];
	struct ring_buffer *rb; /* bg_events */
	struct bg_event got[BATCH + 1]; /* read from it since the last check */
	size_t ngot; /* may pass BATCH: counted, not stored */
};

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

/* Listed addresses: IPv4 in 1.0.0.0-223.255.255.255 but 127/8, IPv6 in
 * 2000::/3, so a strict list parse takes them all. */
static void make_listed(struct fx *f)
{
	struct rng r = { mix64(f->seed ^ 0x6c69737465640000ULL) };
	int i;

	for (i = 0; i < NLISTED; i++) {
		__u32 a;

		do
			a = (__u32)rnd(&r);
		while ((a >> 24) == 0 || (a >> 24) == 127 || (a >> 24) >= 224);
		a = htonl(a);
		memcpy(f->v4[i], &a, 4);
		rnd_bytes(&r, f->v6[i], 16);
		f->v6[i][0] = (__u8)(0x20 | (f->v6[i][0] & 0x1f));
	}
}

/* Text of the listed addresses, every step-th one from first. */
static char *list_text(const struct fx *f, int first, int step)
{
	size_t cap = (size_t)NLISTED * (INET6_ADDRSTRLEN + 1) * 2 + 1, n = 0;
	char *t = malloc(cap);
	int i;

	assert_non_null(t);
	t[0] = 0;
	for (i = first; i < NLISTED; i += step) {
		char a[INET6_ADDRSTRLEN];

		assert_non_null(inet_ntop(AF_INET, f->v4[i], a, sizeof(a)));
		n += (size_t)snprintf(t + n, cap - n, "%s\n", a);
		assert_non_null(inet_ntop(AF_INET6, f->v6[i], a, sizeof(a)));
		n += (size_t)snprintf(t + n, cap - n, "%s\n", a);
	}
	return t;
}

static void parse_list(struct bg_list *l, const char *name, const char *text,
		       int allowlist)
{
	struct bg_list_opts o = { .strict = 1, .allowlist = allowlist };

	bg_list_init(l);
	assert_int_equal(bg_list_parse_buf(l, name, text, strlen(text), &o), 0);
	bg_list_finish(l);
}

/*
 * Publishes the filter of the listed set (with every ALLOW_EVERY-th address
 * also in an allowlist) and builds the same one in memory for the model;
 * checks the two are the same bytes, and that the model's probe count (one
 * lookup per judged address) is what this filter makes: plain addresses
 * give one probed length per family, no bitmap, no short ranges.
 */
static void publish(struct fx *f)
{
	struct bg_filter_params p;
	const struct bg_filter_header *h;
	struct bg_list bl, al;
	char *bt = list_text(f, 0, 1), *at = list_text(f, 0, ALLOW_EVERY);
	const void *live;
	size_t len;
	int fd;

	parse_list(&bl, "block", bt, 0);
	parse_list(&al, "allow", at, 1);
	assert_int_equal(bl.n4, NLISTED);
	assert_int_equal(bl.n6, NLISTED);
	assert_int_equal(bg_filter_plan(BL(&bl, &al, NULL), BG_FPR_DEFAULT, &p),
			 0);
	assert_true(p.fp_nbuckets > 0);
	fd = bg_filter_create(&p, f->seed, BL(&bl, &al, NULL));
	assert_true(fd >= 0);
	assert_int_equal(bg_filter_publish(f->filters, fd), 0);
	close(fd);
	f->mem = calloc(1, p.bytes);
	assert_non_null(f->mem);
	assert_int_equal(bg_filter_build(f->mem, &p, f->seed, BL(&bl, &al, NULL)),
			 0);
	bg_list_free(&bl);
	bg_list_free(&al);
	free(bt);
	free(at);

	assert_int_equal(bg_filter_map_current(f->filters, &live, &len), 0);
	assert_true(len >= p.bytes);
	if (memcmp(live, f->mem, p.bytes))
		fail_msg("the published filter differs from the one built in memory");
	bg_filter_unmap(live, len);

	h = f->mem;
	assert_int_equal(h->n4, 1);
	assert_int_equal(h->n6, 1);
	assert_int_equal(h->flags & (BG_FILTER_F_SHORT4 | BG_FILTER_F_NAMES), 0);
	assert_int_equal(h->short6_n, 0);
	assert_true(h->allow4_n > 0 && h->allow6_n > 0);
}

/* The ring's events, appended to f->got (ring_buffer__consume calls it). */
static int on_event(void *ctx, void *data, size_t size)
{
	struct fx *f = ctx;

	if (size == sizeof(struct bg_event) && f->ngot < BATCH + 1)
		memcpy(&f->got[f->ngot], data, sizeof(struct bg_event));
	else if (size != sizeof(struct bg_event))
		memset(&f->got[f->ngot < BATCH ? f->ngot : BATCH], 0xff,
		       sizeof(struct bg_event)); /* never an expected one */
	f->ngot++;
	return 0;
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->cfg = *state;
	f->seed = env_u64("BG_DIFF_SEED", DEFAULT_SEED);
	f->frames = (long)env_u64("BG_DIFF_FRAMES", DIFF_FRAMES);
	f->skel = bloomgate__open();
	assert_non_null(f->skel);
	f->skel->rodata->cfg_match = f->cfg->match;
	f->skel->rodata->cfg_action = f->cfg->action;
	f->skel->rodata->cfg_unparsed = f->cfg->unparsed;
	assert_int_equal(bloomgate__load(f->skel), 0);
	f->prog = bpf_program__fd(f->skel->progs.bloomgate_xdp);
	f->filters = bpf_map__fd(f->skel->maps.bg_filters);
	f->stats = bpf_map__fd(f->skel->maps.bg_stats);
	f->rb = ring_buffer__new(bpf_map__fd(f->skel->maps.bg_events), on_event, f,
			 NULL);
	assert_non_null(f->rb);
	make_listed(f);
	publish(f);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	ring_buffer__free(f->rb);
	bloomgate__destroy(f->skel);
	free(f->mem);
	free(f);
	return 0;
}

/* ---- The model ----------------------------------------------------------- */

/* What one frame must do: the XDP verdict and the delta of every counter
 * slot and malformed-reason slot (reserved slots included: they must stay
 * at zero). */
struct outcome {
	__u32 verdict;
	__u64 cnt[BG_CNT_SLOTS];
	__u64 mal[BG_MAL_SLOTS];
	int event; /* 1: the frame leaves ev in the ring (action flag) */
	struct bg_event ev; /* ts_ns and ifindex not modelled */
};

static unsigned int be16(const uint8_t *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

static int is_ext(unsigned int nh)
{
	size_t i;

	for (i = 0; i < sizeof(EXT_KINDS); i++)
		if (EXT_KINDS[i] == nh)
			return 1;
	return 0;
}

/* The parse, as the rules state it. */
struct l3 {
	int family; /* 4, 6; 0: no address to judge */
	int reason; /* BG_MAL_*; -1: well formed */
	int frag; /* an IP fragment */
	const uint8_t *src, *dst;
};

/*
 * Ethernet, then as many 802.1Q/802.1ad tags as the frame has: the
 * (BG_VLAN_MAX + 1)-th tag type is "too deep" whatever follows, a tag cut
 * short is "trunc_vlan". IPv4: 20 bytes present, version 4, IHL >= 5, the
 * whole IHL present (options skipped); then its addresses are judged and
 * flags MF or a fragment offset make it a fragment. IPv6: 40 bytes present,
 * version 6, then the addresses are judged whatever the extension chain
 * does; the chain is walked over at most BG_IPV6_EXT_MAX headers (a 7th is
 * "too long"), each needing 8 bytes present and then its whole length (AH:
 * (len + 2) * 4, fragment: 8, others (len + 1) * 8) else "trunc_ipv6_ext";
 * a fragment header makes it a fragment, and a non-first fragment ends the
 * walk (the rest is payload of another fragment). Other ethertypes: non-IP.
 */
static void model_parse(const uint8_t *fr, size_t len, struct l3 *o)
{
	unsigned int type, tags = 0, nh, n;
	size_t at, need;

	memset(o, 0, sizeof(*o));
	o->reason = -1;
	if (len < 14) {
		o->reason = BG_MAL_TRUNC_ETH;
		return;
	}
	type = be16(fr + 12);
	at = 14;
	while (type == ET_8021Q || type == ET_8021AD) {
		if (tags == BG_VLAN_MAX) {
			o->reason = BG_MAL_VLAN_TOO_DEEP;
			return;
		}
		if (len - at < 4) {
			o->reason = BG_MAL_TRUNC_VLAN;
			return;
		}
		type = be16(fr + at + 2);
		at += 4;
		tags++;
	}

	if (type == ET_IPV4) {
		if (len - at < 20) {
			o->reason = BG_MAL_TRUNC_IPV4;
			return;
		}
		if (fr[at] >> 4 != 4) {
			o->reason = BG_MAL_BAD_IPV4_VERSION;
			return;
		}
		need = (size_t)(fr[at] & 0xf) * 4;
		if (need < 20) {
			o->reason = BG_MAL_BAD_IPV4_IHL;
			return;
		}
		if (len - at < need) {
			o->reason = BG_MAL_TRUNC_IPV4;
			return;
		}
		o->family = 4;
		/* MF (0x2000) or a fragment offset (low 13 bits); DF and the
		 * reserved bit do not make a fragment */
		o->frag = (be16(fr + at + 6) & 0x3fff) != 0;
		o->src = fr + at + 12;
		o->dst = fr + at + 16;
		return;
	}
	if (type != ET_IPV6)
		return;
	if (len - at < 40) {
		o->reason = BG_MAL_TRUNC_IPV6;
		return;
	}
	if (fr[at] >> 4 != 6) {
		o->reason = BG_MAL_BAD_IPV6_VERSION;
		return;
	}
	o->family = 6;
	o->src = fr + at + 8;
	o->dst = fr + at + 24;
	nh = fr[at + 6];
	at += 40;
	for (n = 0; is_ext(nh); n++) {
		if (n == BG_IPV6_EXT_MAX) {
			o->reason = BG_MAL_IPV6_EXT_TOO_LONG;
			return;
		}
		if (len - at < 8) {
			o->reason = BG_MAL_TRUNC_IPV6_EXT;
			return;
		}
		if (nh == NH_FRAGMENT) {
			o->frag = 1;
			if (be16(fr + at + 2) >> 3) /* fragment offset */
				return;
			need = 8;
		} else if (nh == NH_AH) {
			need = ((size_t)fr[at + 1] + 2) * 4;
		} else {
			need = ((size_t)fr[at + 1] + 1) * 8;
		}
		if (len - at < need) {
			o->reason = BG_MAL_TRUNC_IPV6_EXT;
			return;
		}
		nh = fr[at];
		at += need;
	}
}

/* 1 if the address is judged listed: maybe listed and not allowlisted. The
 * lookups are the shared ones (user/core/probe.c); one probe per address. */
static int model_judge(const struct fx *f, const struct l3 *l,
		       const uint8_t *addr, struct outcome *e)
{
	int listed, allowed, rejected;
	__u32 a4 = 0;

	if (l->family == 4) {
		memcpy(&a4, addr, 4);
		listed = bg_filter_judge4(f->mem, a4, &rejected);
	} else {
		listed = bg_filter_judge6(f->mem, addr, &rejected);
	}
	e->cnt[BG_CNT_PROBES]++;
	if (!listed) {
		e->cnt[BG_CNT_NEGATIVES]++;
		/* a Bloom positive the exact stage rejected */
		e->cnt[BG_CNT_BLOOM_FP] += (__u64)rejected;
		return 0;
	}
	e->cnt[BG_CNT_POSITIVES]++;
	allowed = l->family == 4 ? bg_filter_allowed4(f->mem, a4) :
				   bg_filter_allowed6(f->mem, addr);
	if (allowed) {
		e->cnt[BG_CNT_ALLOWLISTED]++;
		return 0;
	}
	return 1;
}

/* The whole outcome of one frame; *which: BG_MATCH_DST/SRC that matched. */
static void model(const struct fx *f, const uint8_t *fr, size_t len,
		  struct outcome *e, int *which)
{
	struct l3 l;
	int hit = 0;

	memset(e, 0, sizeof(*e));
	*which = 0;
	model_parse(fr, len, &l);
	e->cnt[BG_CNT_PACKETS] = 1;
	if (l.reason >= 0) {
		e->cnt[BG_CNT_MALFORMED] = 1;
		e->mal[l.reason] = 1;
	}
	if (!l.family) {
		/* no address to judge: non_ip unless malformed, and passed;
		 * a malformed one ("unparsed") is dropped under --unparsed
		 * drop, counted as dropped and unparsed_dropped */
		if (l.reason < 0) {
			e->cnt[BG_CNT_NON_IP] = 1;
		} else if (f->cfg->unparsed == BG_UNPARSED_DROP) {
			e->cnt[BG_CNT_UNPARSED_DROPPED] = 1;
			e->cnt[BG_CNT_DROPPED] = 1;
			e->verdict = XDP_DROP;
			return;
		}
		e->cnt[BG_CNT_PASSED] = 1;
		e->verdict = XDP_PASS;
		return;
	}
	e->cnt[l.family == 4 ? BG_CNT_IPV4 : BG_CNT_IPV6] = 1;
	if (l.frag)
		e->cnt[BG_CNT_FRAGMENTS] = 1;
	/* the destination first; the source only when the destination did
	 * not decide (not listed, or allowlisted) */
	if ((f->cfg->match & BG_MATCH_DST) && model_judge(f, &l, l.dst, e))
		hit = BG_MATCH_DST;
	else if ((f->cfg->match & BG_MATCH_SRC) && model_judge(f, &l, l.src, e))
		hit = BG_MATCH_SRC;
	*which = hit;
	if (hit && f->cfg->action == BG_ACTION_DROP) {
		e->cnt[BG_CNT_DROPPED] = 1;
		e->verdict = XDP_DROP;
		return;
	}
	if (hit) {
		/* flag: passed, counted as flagged, one event naming the
		 * address that matched */
		const uint8_t *a = hit == BG_MATCH_DST ? l.dst : l.src;

		e->cnt[BG_CNT_FLAGGED] = 1;
		e->event = 1;
		e->ev.family = l.family == 4 ? BG_KEY_IPV4 : BG_KEY_IPV6;
		e->ev.which = (__u8)hit;
		e->ev.verdict = BG_VERDICT_FLAG;
		memcpy(e->ev.addr, a, l.family == 4 ? 4 : 16);
	}
	e->cnt[BG_CNT_PASSED] = 1;
	e->verdict = XDP_PASS;
}

/* ---- Frames ------------------------------------------------------------- */

/* A field the parser reads, for the targeted mutations. */
enum field_kind {
	F_TYPE, /* an ethertype or tag type (2 bytes) */
	F_VER_IHL, /* the first byte of an IP header */
	F_FRAG4, /* IPv4 flags and fragment offset (2 bytes) */
	F_NEXTHDR, /* an IPv6 next-header byte */
	F_EXTLEN, /* an extension header's length byte */
	F_FRAG6, /* an IPv6 fragment offset and M flag (2 bytes) */
};

#define FIELDS_MAX 32

struct frame {
	uint8_t b[FRAME_MAX];
	size_t len;
	size_t hdr_end; /* end of the headers built (mutations aim there) */
	unsigned int nfields;
	struct {
		uint16_t off;
		uint8_t kind; /* enum field_kind */
	} field[FIELDS_MAX];
};

static void note(struct frame *fr, size_t off, enum field_kind kind)
{
	if (fr->nfields < FIELDS_MAX) {
		fr->field[fr->nfields].off = (uint16_t)off;
		fr->field[fr->nfields].kind = (uint8_t)kind;
		fr->nfields++;
	}
}

/* An address to put in a frame: half from the listed set, half random. */
static void pick_addr(const struct fx *f, struct rng *r, int v6, uint8_t *out)
{
	if (chance(r, 50)) {
		uint32_t i = below(r, NLISTED);

		if (v6)
			memcpy(out, f->v6[i], 16);
		else
			memcpy(out, f->v4[i], 4);
	} else {
		rnd_bytes(r, out, v6 ? 16 : 4);
	}
}

static void put16(uint8_t *p, unsigned int v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* IPv4 header and options at fr->b + at; returns the offset after them. */
static size_t tmpl_ipv4(const struct fx *f, struct rng *r, struct frame *fr,
			size_t at, uint8_t *proto)
{
	static const uint16_t FRAG[] = { 0, 0x4000, 0x2000, 0x2000 | 185,
					 185, 0x8000, 0x1fff };
	uint8_t *ip = fr->b + at;
	unsigned int ihl = chance(r, 70) ? 5 : 6 + below(r, 10);

	rnd_bytes(r, ip, ihl * 4); /* tos, id, ttl, checksum, options */
	ip[0] = (uint8_t)(0x40 | ihl);
	note(fr, at, F_VER_IHL);
	note(fr, at + 6, F_FRAG4);
	if (chance(r, 70))
		put16(ip + 6, FRAG[below(r, 2)]);
	else if (chance(r, 70))
		put16(ip + 6, FRAG[below(r, ARRAY_SIZE(FRAG))]);
	/* else: random flags and offset */
	*proto = chance(r, 90) ? (uint8_t)(chance(r, 50) ? IPPROTO_UDP :
							   IPPROTO_TCP) :
				 (uint8_t)rnd(r);
	ip[9] = *proto;
	pick_addr(f, r, 0, ip + 12);
	pick_addr(f, r, 0, ip + 16);
	return at + ihl * 4;
}

/* IPv6 header and an extension chain of 0-8 headers. */
static size_t tmpl_ipv6(const struct fx *f, struct rng *r, struct frame *fr,
			size_t at, uint8_t *proto)
{
	uint8_t *ip6 = fr->b + at;
	uint8_t *nhp = ip6 + 6;
	unsigned int next, i;

	rnd_bytes(r, ip6, 8);
	ip6[0] = (uint8_t)(0x60 | (ip6[0] & 0xf));
	note(fr, at, F_VER_IHL);
	note(fr, at + 6, F_NEXTHDR);
	pick_addr(f, r, 1, ip6 + 8);
	pick_addr(f, r, 1, ip6 + 24);
	at += 40;
	next = below(r, 100);
	next = next < 40 ? 0 : next < 75 ? 1 + below(r, 3) :
	       next < 92 ? 4 + below(r, 3) : 7 + below(r, 2);
	for (i = 0; i < next && at + 64 < FRAME_MAX - 200; i++) {
		uint8_t kind = EXT_KINDS[below(r, sizeof(EXT_KINDS))];
		uint8_t *eh = fr->b + at;
		size_t len;

		*nhp = kind;
		note(fr, at, F_NEXTHDR);
		note(fr, at + 1, F_EXTLEN);
		if (kind == NH_FRAGMENT) {
			note(fr, at + 2, F_FRAG6);
			len = 8;
			rnd_bytes(r, eh, 8);
			if (chance(r, 60)) /* first fragment, M set or not */
				put16(eh + 2, (unsigned int)below(r, 2));
		} else if (kind == NH_AH) {
			eh[1] = (uint8_t)(1 + below(r, 4));
			len = ((size_t)eh[1] + 2) * 4;
			rnd_bytes(r, eh + 2, len - 2);
		} else {
			eh[1] = (uint8_t)below(r, 3);
			len = ((size_t)eh[1] + 1) * 8;
			rnd_bytes(r, eh + 2, len - 2);
		}
		nhp = eh;
		at += len;
	}
	*proto = chance(r, 90) ? (uint8_t)(chance(r, 50) ? IPPROTO_UDP :
							   IPPROTO_TCP) :
				 (uint8_t)rnd(r);
	*nhp = *proto;
	put16(ip6 + 4, (unsigned int)(at - (size_t)(ip6 + 40 - fr->b)));
	return at;
}

/* A valid frame: Ethernet, 0-2 VLAN tags (sometimes more), IPv4 / IPv6 /
 * another ethertype, a UDP or TCP header, a payload. */
static void tmpl(const struct fx *f, struct rng *r, struct frame *fr)
{
	static const uint16_t OTHER[] = { 0x0806, 0x88cc, 0x8847, 0x86dd ^ 1,
					  0x0800 ^ 0x100, 0x22f0 };
	unsigned int tags = below(r, 100), i, kind = below(r, 100);
	size_t at = 12;
	uint8_t proto = 0;

	tags = tags < 50 ? 0 : tags < 70 ? 1 : tags < 90 ? 2 : tags < 97 ? 3 : 4;
	rnd_bytes(r, fr->b, 12);
	fr->nfields = 0;
	for (i = 0; i < tags; i++) {
		note(fr, at, F_TYPE);
		put16(fr->b + at, chance(r, 50) ? ET_8021Q : ET_8021AD);
		put16(fr->b + at + 2, (unsigned int)below(r, 0x10000));
		at += 4;
	}
	note(fr, at, F_TYPE);
	if (kind < 45) {
		put16(fr->b + at, ET_IPV4);
		at = tmpl_ipv4(f, r, fr, at + 2, &proto);
	} else if (kind < 90) {
		put16(fr->b + at, ET_IPV6);
		at = tmpl_ipv6(f, r, fr, at + 2, &proto);
	} else {
		put16(fr->b + at, chance(r, 50) ? OTHER[below(r, ARRAY_SIZE(OTHER))] :
						  (unsigned int)below(r, 0x10000));
		at += 2;
	}
	if (proto == IPPROTO_TCP) {
		rnd_bytes(r, fr->b + at, 20);
		fr->b[at + 12] = 0x50; /* data offset 5 */
		at += 20;
	} else if (proto) {
		rnd_bytes(r, fr->b + at, 8);
		if (chance(r, 20))
			put16(fr->b + at + 2, 53); /* DNS port: no name here */
		at += 8;
	}
	fr->hdr_end = at;
	i = below(r, 65);
	rnd_bytes(r, fr->b + at, i);
	fr->len = at + i;
}

/* One field the parser reads set to a value chosen for it: the values its
 * rules tell apart, or any. */
static void mutate_field(struct rng *r, struct frame *fr)
{
	static const uint16_t TYPES[] = { ET_IPV4, ET_IPV6, ET_8021Q, ET_8021AD };
	static const uint16_t FRAG4[] = { 0x2000, 0x4000, 0x8000, 0x0001,
					  0x1fff, 0x6000, 0xe000 };
	unsigned int i;
	uint8_t *p;

	if (!fr->nfields)
		return;
	i = below(r, fr->nfields);
	p = fr->b + fr->field[i].off;
	switch (fr->field[i].kind) {
	case F_TYPE:
		put16(p, chance(r, 70) ? TYPES[below(r, ARRAY_SIZE(TYPES))] :
					 (unsigned int)below(r, 0x10000));
		break;
	case F_VER_IHL: /* version 4, 6 or any; IHL 0-15 */
		*p = (uint8_t)((chance(r, 60) ? (chance(r, 50) ? 4 : 6) :
						below(r, 16)) << 4 |
			       below(r, 16));
		break;
	case F_FRAG4:
		put16(p, chance(r, 60) ? FRAG4[below(r, ARRAY_SIZE(FRAG4))] :
					 (unsigned int)below(r, 0x10000));
		break;
	case F_NEXTHDR:
		*p = chance(r, 70) ? EXT_KINDS[below(r, sizeof(EXT_KINDS))] :
				     (uint8_t)rnd(r);
		break;
	case F_EXTLEN:
		*p = chance(r, 70) ? (uint8_t)below(r, 4) : (uint8_t)rnd(r);
		break;
	case F_FRAG6: /* offset 0 or not, M flag */
		put16(p, chance(r, 50) ? (unsigned int)below(r, 2) :
					 (unsigned int)below(r, 0x10000));
		break;
	}
}

/*
 * Frame idx of a run: a template, then 0-3 mutations (a byte of the headers
 * set at random, a field the parser reads set to a value it tells apart, a
 * bit of the headers flipped, a cut at a random length >= 14, random bytes
 * appended), or one frame of random bytes, whose
 * ethertype is often set to one the parser follows. BPF_PROG_TEST_RUN
 * refuses frames below 14 bytes (tests/bpf/test_datapath.c), so none is
 * built: trunc_eth is out of reach from here.
 */
static void gen(const struct fx *f, long idx, struct frame *fr)
{
	static const uint16_t FOLLOWED[] = { ET_IPV4, ET_IPV6, ET_8021Q,
					     ET_8021AD };
	struct rng r = { mix64(f->seed) ^ mix64((uint64_t)idx + 1) };
	unsigned int m, i;

	if (chance(&r, 5)) {
		fr->len = 14 + below(&r, 200);
		rnd_bytes(&r, fr->b, fr->len);
		fr->hdr_end = fr->len;
		fr->nfields = 0;
		for (i = 12; i + 2 <= fr->len && i < 12 + 4 * 4 && chance(&r, 60);
		     i += 4)
			put16(fr->b + i, FOLLOWED[below(&r, ARRAY_SIZE(FOLLOWED))]);
		return;
	}
	tmpl(f, &r, fr);
	m = chance(&r, 30) ? 0 : 1 + below(&r, 3);
	for (i = 0; i < m; i++) {
		unsigned int what = below(&r, 100);

		if (what < 25) {
			fr->b[below(&r, (uint32_t)fr->hdr_end)] = (uint8_t)rnd(&r);
		} else if (what < 45) {
			mutate_field(&r, fr);
		} else if (what < 55) {
			uint32_t bit = below(&r, (uint32_t)fr->hdr_end * 8);

			fr->b[bit / 8] ^= (uint8_t)(1 << (bit % 8));
		} else if (what < 85) {
			fr->len = 14 + below(&r, (uint32_t)(fr->len - 14 + 1));
			if (fr->hdr_end > fr->len)
				fr->hdr_end = fr->len;
		} else {
			size_t add = below(&r, 64);

			if (fr->len + add <= FRAME_MAX) {
				rnd_bytes(&r, fr->b + fr->len, add);
				fr->len += add;
			}
		}
	}
}

/* ---- Running and comparing ----------------------------------------------- */

static void counters(const struct fx *f, struct bg_counters *c)
{
	assert_int_equal(bg_counters_read(f->stats, c), 0);
}

/* Runs one frame; returns the XDP verdict. The program never rewrites a
 * packet, whatever the verdict: checked here too. */
static __u32 run(const struct fx *f, const struct frame *fr)
{
	static __u8 out[FRAME_MAX + 256];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr->b,
		    .data_size_in = (__u32)fr->len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);
	int err = bpf_prog_test_run_opts(f->prog, &o);

	if (err)
		fail_msg("BPF_PROG_TEST_RUN: %s (%zu-byte frame, seed 0x%016" PRIx64 ")",
			 strerror(-err), fr->len, f->seed);
	if (o.data_size_out != fr->len || memcmp(out, fr->b, fr->len))
		fail_msg("seed 0x%016" PRIx64 ": the program modified a frame",
			 f->seed);
	return o.retval;
}

static void delta(const struct bg_counters *a, const struct bg_counters *b,
		  struct outcome *d)
{
	int i;

	for (i = 0; i < BG_CNT_SLOTS; i++)
		d->cnt[i] = b->cnt[i] - a->cnt[i];
	for (i = 0; i < BG_MAL_SLOTS; i++)
		d->mal[i] = b->malformed[i] - a->malformed[i];
}

static int same_counts(const struct outcome *a, const struct outcome *b)
{
	return !memcmp(a->cnt, b->cnt, sizeof(a->cnt)) &&
	       !memcmp(a->mal, b->mal, sizeof(a->mal));
}

static void add(struct outcome *sum, const struct outcome *e)
{
	int i;

	for (i = 0; i < BG_CNT_SLOTS; i++)
		sum->cnt[i] += e->cnt[i];
	for (i = 0; i < BG_MAL_SLOTS; i++)
		sum->mal[i] += e->mal[i];
}

static void print_counts(const char *who, const struct outcome *o, int verdict)
{
	unsigned int i;

	if (verdict)
		print_message("  %-9s %s;", who, xdp_name(o->verdict));
	else
		print_message("  %-9s", who);
	for (i = 0; i < BG_CNT_SLOTS; i++)
		if (o->cnt[i])
			print_message(" %s=%" PRIu64, cnt_name(i), (uint64_t)o->cnt[i]);
	for (i = 0; i < BG_MAL_SLOTS; i++)
		if (o->mal[i])
			print_message(" malformed_%s=%" PRIu64, mal_name(i),
				      (uint64_t)o->mal[i]);
	print_message("\n");
}

static void print_frame(const struct frame *fr)
{
	size_t i;

	for (i = 0; i < fr->len; i++)
		print_message("%s%02x", i % 32 ? (i % 4 ? "" : " ") : "\n    ",
			      fr->b[i]);
	print_message("\n");
}

/* Reports frame idx's disagreement and fails. */
static void differ(const struct fx *f, long idx, const struct frame *fr,
		   const struct outcome *want, const struct outcome *got,
		   const char *what)
{
	print_message("%s: frame %ld of seed 0x%016" PRIx64 " (%zu bytes): %s\n",
		      f->cfg->name, idx, f->seed, fr->len, what);
	print_frame(fr);
	print_counts("model", want, 1);
	print_counts("datapath", got, 1);
	fail_msg("datapath and model differ; reproduce with BG_DIFF_SEED=0x%016" PRIx64
		 " (frame %ld)", f->seed, idx);
}

/* Runs frame idx with its own counter reads and compares everything. */
static void check_one(const struct fx *f, long idx, struct outcome *want,
		      int *which)
{
	static struct frame fr;
	struct bg_counters before, after;
	struct outcome got;

	gen(f, idx, &fr);
	model(f, fr.b, fr.len, want, which);
	counters(f, &before);
	got.verdict = run(f, &fr);
	counters(f, &after);
	delta(&before, &after, &got);
	if (got.verdict != want->verdict || !same_counts(want, &got))
		differ(f, idx, &fr, want, &got,
		       got.verdict != want->verdict ? "verdicts differ" :
						      "counter deltas differ");
}

/* What the run covered: the generator must reach every corner the model
 * names, or agreement would mean little. */
struct cover {
	uint64_t verdict[8];
	uint64_t mal[BG_MAL__COUNT];
	uint64_t which[4]; /* by BG_MATCH_DST / BG_MATCH_SRC */
	uint64_t cnt[BG_CNT_SLOTS];
};

/*
 * The ring's events since the last check against the model's for frames
 * [b, end) (exp[k] from frame idx[k]), in order: family, which, verdict,
 * the address (zero padded), pad 0, the ingress interface BPF_PROG_TEST_RUN
 * gives (the namespace's loopback, ifindex 1), time not going back.
 */
static void check_events(struct fx *f, long b, long end,
			 const struct bg_event *exp, const long *idx, size_t n)
{
	size_t k;

	assert_true(ring_buffer__consume(f->rb) >= 0);
	if (f->ngot != n)
		fail_msg("%s: frames [%ld, %ld) of seed 0x%016" PRIx64
			 ": %zu events in the ring, the model says %zu",
			 f->cfg->name, b, end, f->seed, f->ngot, n);
	for (k = 0; k < n; k++) {
		const struct bg_event *g = &f->got[k], *w = &exp[k];

		if (g->family != w->family || g->which != w->which ||
		    g->verdict != w->verdict || g->pad ||
		    memcmp(g->addr, w->addr, sizeof(g->addr)) || g->ifindex != 1 ||
		    !g->ts_ns || (k && g->ts_ns < f->got[k - 1].ts_ns))
			fail_msg("%s: frame %ld of seed 0x%016" PRIx64
				 ": event family %u which %u verdict %u ifindex %u"
				 " addr %02x%02x%02x%02x..., the model's %u %u %u 1"
				 " %02x%02x%02x%02x...",
				 f->cfg->name, idx[k], f->seed, g->family, g->which,
				 g->verdict, g->ifindex, g->addr[0], g->addr[1],
				 g->addr[2], g->addr[3], w->family, w->which,
				 w->verdict, w->addr[0], w->addr[1], w->addr[2],
				 w->addr[3]);
	}
	f->ngot = 0;
}

static void diff_run(void **state)
{
	struct fx *f = *state;
	static struct bg_event exp[BATCH];
	static long exp_idx[BATCH];
	size_t nexp;
	uint64_t events = 0;
	static struct frame fr;
	struct outcome want, sum, got;
	struct bg_counters before, after;
	struct cover cv;
	long i, b;
	unsigned int j;
	time_t t0 = time(NULL);

	memset(&cv, 0, sizeof(cv));
	print_message("%s: %ld frames, seed 0x%016" PRIx64 "\n", f->cfg->name,
		      f->frames, f->seed);
	counters(f, &before);
	for (b = 0; b < f->frames; b += BATCH) {
		long end = b + BATCH < f->frames ? b + BATCH : f->frames;

		memset(&sum, 0, sizeof(sum));
		nexp = 0;
		for (i = b; i < end; i++) {
			int which;

			if (i < PER_FRAME) {
				check_one(f, i, &want, &which);
			} else {
				gen(f, i, &fr);
				model(f, fr.b, fr.len, &want, &which);
				if (run(f, &fr) != want.verdict) {
					/* again, with this frame's counters */
					check_one(f, i, &want, &which);
					fail_msg("frame %ld of seed 0x%016" PRIx64
						 ": verdict differs on its first run only",
						 i, f->seed);
				}
			}
			if (want.event) {
				exp_idx[nexp] = i;
				exp[nexp++] = want.ev;
			}
			add(&sum, &want);
			cv.verdict[want.verdict & 7]++;
			cv.which[which & 3]++;
			for (j = 0; j < BG_MAL__COUNT; j++)
				cv.mal[j] += want.mal[j];
		}
		counters(f, &after);
		delta(&before, &after, &got);
		before = after;
		if (!same_counts(&sum, &got)) {
			/* the batch as a whole differs: find the frame */
			print_message("batch [%ld, %ld) differs, re-running it frame by frame\n",
				      b, end);
			print_counts("model", &sum, 0);
			print_counts("datapath", &got, 0);
			for (i = b; i < end; i++) {
				int which;

				check_one(f, i, &want, &which);
			}
			fail_msg("batch [%ld, %ld) of seed 0x%016" PRIx64
				 " differs, but no frame does on its own",
				 b, end, f->seed);
		}
		check_events(f, b, end, exp, exp_idx, nexp);
		events += nexp;
		for (j = 0; j < BG_CNT_SLOTS; j++)
			cv.cnt[j] += sum.cnt[j];
	}

	print_message("%s: %ld frames agree in %lds: %" PRIu64 " passed, %" PRIu64
		      " dropped (dst %" PRIu64 ", src %" PRIu64 "), %" PRIu64 " events\n  ",
		      f->cfg->name, f->frames, (long)(time(NULL) - t0),
		      cv.verdict[XDP_PASS], cv.verdict[XDP_DROP],
		      cv.which[BG_MATCH_DST], cv.which[BG_MATCH_SRC], events);
	for (j = 0; j < BG_CNT__COUNT; j++)
		if (cv.cnt[j])
			print_message(" %s=%" PRIu64, cnt_name(j), cv.cnt[j]);
	for (j = 0; j < BG_MAL__COUNT; j++)
		print_message(" malformed_%s=%" PRIu64, mal_name(j), cv.mal[j]);
	print_message("\n");

	/* Coverage: only asserted on a run long enough to expect it. */
	if (f->frames < 100000)
		return;
	assert_true(cv.verdict[XDP_PASS] > 1000);
	if (f->cfg->action == BG_ACTION_FLAG) {
		/* nothing dropped (unparsed frames pass here); every listed
		 * match flagged, with its event */
		assert_int_equal(f->cfg->unparsed, BG_UNPARSED_PASS);
		assert_int_equal(cv.verdict[XDP_DROP], 0);
		assert_true(cv.cnt[BG_CNT_FLAGGED] > 1000);
		assert_true(events == cv.cnt[BG_CNT_FLAGGED]);
	} else {
		assert_true(cv.verdict[XDP_DROP] > 1000);
		assert_int_equal(cv.cnt[BG_CNT_FLAGGED], 0);
		assert_true(events == 0);
	}
	assert_true(cv.which[BG_MATCH_DST] > 1000);
	if (f->cfg->match & BG_MATCH_SRC)
		assert_true(cv.which[BG_MATCH_SRC] > 1000);
	else
		assert_int_equal(cv.which[BG_MATCH_SRC], 0);
	assert_true(cv.cnt[BG_CNT_ALLOWLISTED] > 100);
	assert_true(cv.cnt[BG_CNT_FRAGMENTS] > 1000);
	assert_true(cv.cnt[BG_CNT_NON_IP] > 1000);
	if (f->cfg->unparsed == BG_UNPARSED_DROP)
		assert_true(cv.cnt[BG_CNT_UNPARSED_DROPPED] > 1000);
	else
		assert_int_equal(cv.cnt[BG_CNT_UNPARSED_DROPPED], 0);
	/* trunc_eth: frames under 14 bytes are refused by the kernel */
	for (j = 0; j < BG_MAL__COUNT; j++)
		if (j != BG_MAL_TRUNC_ETH && cv.mal[j] < 100)
			fail_msg("only %" PRIu64 " frames malformed_%s in %ld",
				 cv.mal[j], mal_name(j), f->frames);
}

/* ---- The model against hand-built frames ----------------------------------
 * The model is checked on its own, against outcomes written out here, so a
 * model and a datapath wrong in the same way are not both trusted.
 */
static void build(struct pkt *p, struct pkt_spec s)
{
	assert_int_equal(pkt_build(p, &s), 0);
}

static void model_expect(const struct fx *f, const struct pkt *p, size_t len,
			 __u32 verdict, int fam_cnt, int reason, int frag)
{
	struct outcome e;
	int which, i;
	__u64 judged = fam_cnt >= 0 ? 1 : 0;

	model(f, p->buf, len, &e, &which);
	assert_int_equal(e.verdict, verdict);
	assert_int_equal(e.cnt[BG_CNT_PACKETS], 1);
	for (i = 0; i < BG_MAL__COUNT; i++)
		assert_int_equal(e.mal[i], i == reason);
	assert_int_equal(e.cnt[BG_CNT_MALFORMED], reason >= 0);
	assert_int_equal(e.cnt[BG_CNT_IPV4], fam_cnt == BG_CNT_IPV4);
	assert_int_equal(e.cnt[BG_CNT_IPV6], fam_cnt == BG_CNT_IPV6);
	assert_int_equal(e.cnt[BG_CNT_FRAGMENTS], frag);
	assert_int_equal(e.cnt[BG_CNT_PROBES], judged);
	assert_int_equal(e.cnt[BG_CNT_DROPPED], verdict == XDP_DROP);
	assert_int_equal(e.cnt[BG_CNT_PASSED], verdict == XDP_PASS);
	/* a drop without a family is the unparsed policy's */
	assert_int_equal(e.cnt[BG_CNT_UNPARSED_DROPPED],
			 fam_cnt < 0 && verdict == XDP_DROP);
}

static void test_model(void **state)
{
	struct fx *f = *state;
	char l4[INET_ADDRSTRLEN], l6[INET6_ADDRSTRLEN];
	char u4[INET_ADDRSTRLEN], u6[INET6_ADDRSTRLEN];
	__u8 a6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	__u32 a4 = 0;
	struct pkt p;
	int i;

	/* listed and not allowlisted (ALLOW_EVERY: index 1 is not) */
	assert_non_null(inet_ntop(AF_INET, f->v4[1], l4, sizeof(l4)));
	assert_non_null(inet_ntop(AF_INET6, f->v6[1], l6, sizeof(l6)));
	/* not listed: the first documentation address the filter says no to
	 * (the Bloom part may say yes to one, at its false-positive rate) */
	do
		a4 = htonl(0xc0000200 + (ntohl(a4) & 0xff) + 1);
	while (bg_filter_test4(f->mem, a4));
	do
		a6[15]++;
	while (bg_filter_test6(f->mem, a6));
	assert_non_null(inet_ntop(AF_INET, &a4, u4, sizeof(u4)));
	assert_non_null(inet_ntop(AF_INET6, a6, u6, sizeof(u6)));

#define SPEC(af_, src_, dst_, ...)                                            \
	((struct pkt_spec){ .family = (af_), .src = (src_), .dst = (dst_),    \
			    .payload = 16, __VA_ARGS__ })
	build(&p, SPEC(AF_INET, u4, l4));
	model_expect(f, &p, p.len, XDP_DROP, BG_CNT_IPV4, -1, 0);
	build(&p, SPEC(AF_INET, u4, u4, .vlans = 2,
		       .vlan_tpid = { ET_8021AD, ET_8021Q }));
	model_expect(f, &p, p.len, XDP_PASS, BG_CNT_IPV4, -1, 0);
	build(&p, SPEC(AF_INET, u4, l4, .vlans = 3));
	model_expect(f, &p, p.len, XDP_PASS, -1, BG_MAL_VLAN_TOO_DEEP, 0);
	/* the third tag's type is enough: it need not be whole */
	model_expect(f, &p, 14 + 8, XDP_PASS, -1, BG_MAL_VLAN_TOO_DEEP, 0);
	model_expect(f, &p, 14 + 6, XDP_PASS, -1, BG_MAL_TRUNC_VLAN, 0);
	build(&p, SPEC(AF_INET, u4, l4, .ihl = 4));
	model_expect(f, &p, p.len, XDP_PASS, -1, BG_MAL_BAD_IPV4_IHL, 0);
	build(&p, SPEC(AF_INET, u4, l4, .ihl = 15));
	model_expect(f, &p, p.l3 + 59, XDP_PASS, -1, BG_MAL_TRUNC_IPV4, 0);
	model_expect(f, &p, p.l3 + 60, XDP_DROP, BG_CNT_IPV4, -1, 0);
	build(&p, SPEC(AF_INET, u4, l4, .frag_off = 0x4000)); /* DF only */
	model_expect(f, &p, p.len, XDP_DROP, BG_CNT_IPV4, -1, 0);
	build(&p, SPEC(AF_INET, u4, l4, .frag_off = 185));
	model_expect(f, &p, p.len, XDP_DROP, BG_CNT_IPV4, -1, 1);
	p.buf[p.l3] = 0x65;
	model_expect(f, &p, p.len, XDP_PASS, -1, BG_MAL_BAD_IPV4_VERSION, 0);

	build(&p, SPEC(AF_INET6, u6, l6));
	model_expect(f, &p, p.len, XDP_DROP, BG_CNT_IPV6, -1, 0);
	model_expect(f, &p, p.l3 + 39, XDP_PASS, -1, BG_MAL_TRUNC_IPV6, 0);
	p.buf[p.l3] = 0x45;
	model_expect(f, &p, p.len, XDP_PASS, -1, BG_MAL_BAD_IPV6_VERSION, 0);
	for (i = 0; i <= BG_IPV6_EXT_MAX + 1; i++) {
		build(&p, SPEC(AF_INET6, u6, l6, .ext_hdrs = i));
		/* a long chain is still judged by address */
		model_expect(f, &p, p.len, XDP_DROP, BG_CNT_IPV6,
			     i > BG_IPV6_EXT_MAX ? BG_MAL_IPV6_EXT_TOO_LONG : -1,
			     0);
	}
	build(&p, SPEC(AF_INET6, u6, l6, .ext_hdrs = 2));
	model_expect(f, &p, p.l3 + 40 + 15, XDP_DROP, BG_CNT_IPV6,
		     BG_MAL_TRUNC_IPV6_EXT, 0);
	/* 6 headers then a non-first fragment header: too long, the 7th is
	 * never read */
	build(&p, SPEC(AF_INET6, u6, l6, .ext_hdrs = 6, .frag6 = 2));
	model_expect(f, &p, p.len, XDP_DROP, BG_CNT_IPV6,
		     BG_MAL_IPV6_EXT_TOO_LONG, 0);
	build(&p, SPEC(AF_INET6, u6, l6, .ext_hdrs = 5, .frag6 = 2));
	model_expect(f, &p, p.len, XDP_DROP, BG_CNT_IPV6, -1, 1);
	/* a non-first fragment ends the walk: what follows is not a header */
	model_expect(f, &p, p.l4, XDP_DROP, BG_CNT_IPV6, -1, 1);
	build(&p, SPEC(0, NULL, NULL, .ethertype = 0x0806));
	model_expect(f, &p, p.len, XDP_PASS, -1, -1, 0);
#undef SPEC
}

/* The model under --unparsed drop: what has no address (with a reason) is
 * dropped, listed or not; what has one is judged; non-IP passes. */
static void test_model_unparsed(void **state)
{
	struct fx *f = *state;
	char l4[INET_ADDRSTRLEN], l6[INET6_ADDRSTRLEN];
	const char *u4 = "192.0.2.1", *u6 = "2001:db8::1";
	__u8 a6[16];
	__u32 a4;
	struct pkt p;

	assert_int_equal(f->cfg->unparsed, BG_UNPARSED_DROP);
	assert_non_null(inet_ntop(AF_INET, f->v4[1], l4, sizeof(l4)));
	assert_non_null(inet_ntop(AF_INET6, f->v6[1], l6, sizeof(l6)));
	assert_int_equal(inet_pton(AF_INET, u4, &a4), 1);
	assert_int_equal(inet_pton(AF_INET6, u6, a6), 1);
	/* the documentation addresses are not listed here */
	assert_int_equal(bg_filter_test4(f->mem, a4), 0);
	assert_int_equal(bg_filter_test6(f->mem, a6), 0);

#define SPEC(af_, src_, dst_, ...)                                            \
	((struct pkt_spec){ .family = (af_), .src = (src_), .dst = (dst_),    \
			    .payload = 16, __VA_ARGS__ })
	build(&p, SPEC(AF_INET, u4, l4, .vlans = 3));
	model_expect(f, &p, p.len, XDP_DROP, -1, BG_MAL_VLAN_TOO_DEEP, 0);
	build(&p, SPEC(AF_INET6, u6, u6, .vlans = 3));
	model_expect(f, &p, p.len, XDP_DROP, -1, BG_MAL_VLAN_TOO_DEEP, 0);
	model_expect(f, &p, 14 + 6, XDP_DROP, -1, BG_MAL_TRUNC_VLAN, 0);
	build(&p, SPEC(AF_INET, u4, u4, .vlans = 2,
		       .vlan_tpid = { ET_8021AD, ET_8021Q }));
	model_expect(f, &p, p.len, XDP_PASS, BG_CNT_IPV4, -1, 0);
	build(&p, SPEC(AF_INET, u4, u4, .ihl = 4));
	model_expect(f, &p, p.len, XDP_DROP, -1, BG_MAL_BAD_IPV4_IHL, 0);
	build(&p, SPEC(AF_INET, u4, u4));
	model_expect(f, &p, p.l3 + 19, XDP_DROP, -1, BG_MAL_TRUNC_IPV4, 0);
	build(&p, SPEC(AF_INET6, u6, u6));
	model_expect(f, &p, p.l3 + 39, XDP_DROP, -1, BG_MAL_TRUNC_IPV6, 0);
	p.buf[p.l3] = 0x45;
	model_expect(f, &p, p.len, XDP_DROP, -1, BG_MAL_BAD_IPV6_VERSION, 0);
	/* an IPv6 chain too long or cut: judged by address, as by default */
	build(&p, SPEC(AF_INET6, u6, u6, .ext_hdrs = BG_IPV6_EXT_MAX + 1));
	model_expect(f, &p, p.len, XDP_PASS, BG_CNT_IPV6,
		     BG_MAL_IPV6_EXT_TOO_LONG, 0);
	build(&p, SPEC(AF_INET6, u6, l6, .ext_hdrs = 2));
	model_expect(f, &p, p.l3 + 40 + 15, XDP_DROP, BG_CNT_IPV6,
		     BG_MAL_TRUNC_IPV6_EXT, 0);
	build(&p, SPEC(0, NULL, NULL, .ethertype = 0x0806, .vlans = 2));
	model_expect(f, &p, p.len, XDP_PASS, -1, -1, 0);
#undef SPEC
}

/* ---- Main --------------------------------------------------------------- */

#define T(fn, cfg)                                                            \
	cmocka_unit_test_prestate_setup_teardown(fn, fx_setup, fx_teardown, &cfg)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_model, CFG_DST_DROP),
		T(diff_run, CFG_DST_DROP),
		T(diff_run, CFG_BOTH_DROP),
		T(test_model_unparsed, CFG_DST_DROP_UNP),
		T(diff_run, CFG_DST_DROP_UNP),
		T(diff_run, CFG_BOTH_FLAG),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
