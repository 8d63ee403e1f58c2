// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate XDP datapath: parse, probe the current Bloom filter for the
 * destination and/or source address, act on a positive (unless the
 * allowlist or the protected set holds the address); then, for a DNS
 * query to one of the configured ports, tail-call bloomgate_dns, which
 * judges the query name and drops, flags or answers it.
 *
 * The current filter is the single inner map of bg_filters (ARRAY_OF_MAPS).
 * A packet looks the slot up once and reads the header and the bits from
 * that one inner map, so it is judged entirely by one filter: a swap
 * replaces the inner map as one pointer store (see user/kern/swap.c).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "bloomgate/bloom.h"
#include "parse.h"
#include "dns.h"
#include "dns_reply.h"

/* Load-time configuration: the verifier prunes the branches not taken. */
const volatile __u8 cfg_match = BG_MATCH_DST;
const volatile __u8 cfg_action = BG_ACTION_DROP;
/* What becomes of a frame with no address to judge (enum bg_unparsed,
 * `attach --unparsed`). */
const volatile __u8 cfg_unparsed = BG_UNPARSED_PASS;
/* Benchmarks only: rewrite the destination after each run so that repeated
 * BPF_PROG_TEST_RUN iterations probe different keys (see bench/). */
const volatile __u8 cfg_bench_vary = 0;
/* attach --chain: a passed packet goes on to the program in BG_PROG_NEXT
 * (`bloomgate chain`); without it the verifier prunes the tail call. */
const volatile __u8 cfg_chain = 0;
/* DNS (issue 4): what to do with a listed query, and the UDP destination
 * ports judged as DNS (host order, 0 = unused). */
const volatile __u8 cfg_dns_action = BG_DNS_ACTION_NXDOMAIN;
const volatile __u16 cfg_dns_ports[BG_DNS_PORTS_MAX] = { BG_DNS_PORT };

struct bg_filter_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, BG_FILTER_VALUE_SIZE);
	__uint(max_entries, 2); /* header + one block; real maps are larger */
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
};

/* Slot 0 holds the current filter map; empty until the first load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct bg_filter_inner);
} BG_MAP_FILTERS SEC(".maps");

/* Packet, probe, verdict and malformed-reason counters, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bg_counters);
} BG_MAP_COUNTERS SEC(".maps");

/* Events for flagged packets (struct bg_event). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} BG_MAP_EVENTS SEC(".maps");

/* Attachment records for `bloomgate status`; written by userspace only. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BG_ATTACH_MAX);
	__type(key, __u32);
	__type(value, struct bg_attach_rec);
} BG_MAP_ATTACH SEC(".maps");

/* bloomgate_dns at BG_PROG_DNS, tail-called for UDP to a DNS port, and the
 * next program at BG_PROG_NEXT. One array per attachment, pinned with it
 * (bloomgate/abi.h says why). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, BG_PROGS_MAX);
	__type(key, __u32);
	__type(value, __u32);
} BG_MAP_PROGS SEC(".maps");

/* The protected set (bloomgate/abi.h): addresses never dropped nor
 * flagged. Read only where a listed address would be; written by
 * userspace through its mapping, one half while the other is read. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bg_protect_map);
	__uint(map_flags, BPF_F_MMAPABLE);
} BG_MAP_PROTECT SEC(".maps");

/* Per-CPU scratch of bloomgate_dns (bpf/dns.h); bloomgate_xdp keeps one
 * flag in it across the address judge (see there). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bg_dns_scratch);
} bg_dns_scratch SEC(".maps");

/*
 * Never called, so never loaded: it only puts the shared layouts into this
 * object's BTF, where tests/unit/test_abi.c compares them with userspace.
 */
struct bg_btf_types {
	struct bg_filter_header header;
	struct bg_key4 key4;
	struct bg_key6 key6;
	struct bg_block block;
	struct bg_counters counters;
	struct bg_event event;
	struct bg_name_event name_event;
	struct bg_attach_rec attach;
	struct bg_range4 range4;
	struct bg_range6 range6;
	struct bg_fp_bucket fp_bucket;
	struct bg_protect_map protect;
};

__attribute__((noinline)) int bg_btf_anchor(struct bg_btf_types *t)
{
	return t != 0;
}

static __always_inline void bg_count(struct bg_counters *c, int idx)
{
	c->cnt[idx]++;
}

static __always_inline const void *bg_elem(const void *filter, __u32 idx)
{
	return bpf_map_lookup_elem((void *)filter, &idx);
}

#include "bloomgate/lookup.h"

/*
 * 1 if an unparsed frame (no address to judge: cut or invalid headers, more
 * than BG_VLAN_MAX tags; its reason is counted already) is to be dropped,
 * counted as dropped and unparsed_dropped: cfg_unparsed, whether a filter is
 * loaded or not. A subprogram, not inlined: inline, the new exit changed
 * clang's register allocation of the whole program and took bloomgate_xdp
 * from 470k to 557k verified instructions with --match both; as a call it
 * is 447k (tests/bpf/test_dns.c prints them).
 */
static __attribute__((noinline)) int bg_unparsed_drop(struct bg_counters *c)
{
	if (cfg_unparsed != BG_UNPARSED_DROP)
		return 0;
	bg_count(c, BG_CNT_UNPARSED_DROPPED);
	bg_count(c, BG_CNT_DROPPED);
	return 1;
}

/*
 * 1 if the address (host order: a, or hi and lo) is in the protected set,
 * counted as protected (it passes). Asked only for a positive that is not allowlisted, right before it would
 * be dropped or flagged: no other packet reads the map. An empty map (sel
 * 0, no range) protects nothing. Inlined, as the map lookup is (a plain
 * ARRAY): the verified instructions went from 213k to 259k with --match
 * dst, 514k to 602k with --match both --action flag, --chain and
 * --unparsed drop (tests/bpf/test_protect.c prints them; as global
 * functions, verified once each, about the same: the cost is the outcomes
 * a positive now has, not the search).
 */
static __always_inline int bg_protected4(__u32 a, struct bg_counters *c)
{
	const struct bg_protect_map *m;
	__u32 zero = 0;

	m = bpf_map_lookup_elem(&BG_MAP_PROTECT, &zero);
	if (!m || !bg_protect_has4(bg_protect_live(m), a))
		return 0;
	bg_count(c, BG_CNT_PROTECTED);
	return 1;
}

static __always_inline int bg_protected6(__u64 hi, __u64 lo,
					 struct bg_counters *c)
{
	const struct bg_protect_map *m;
	__u32 zero = 0;

	m = bpf_map_lookup_elem(&BG_MAP_PROTECT, &zero);
	if (!m || !bg_protect_has6(bg_protect_live(m), hi, lo))
		return 0;
	bg_count(c, BG_CNT_PROTECTED);
	return 1;
}

/*
 * Judges one address: 1 = listed (and not allowlisted, not protected).
 * Counts the lookups made, and the address as a positive (confirmed by the
 * exact stage) or a negative, a negative that was a Bloom positive also as
 * a bloom_false_positive; a positive that the exact allowlist holds is
 * counted as allowlisted and passes, then one in the protected set as
 * protected, and passes.
 */
static __always_inline int bg_judge4(const void *filter,
				     const struct bg_filter_header *hdr,
				     __u32 addr, struct bg_counters *c)
{
	__u32 probes = 0, rejected = 0;
	int listed = bg_listed4(filter, hdr, addr, &probes, &rejected);

	c->cnt[BG_CNT_PROBES] += probes;
	if (!listed) {
		bg_count(c, BG_CNT_NEGATIVES);
		c->cnt[BG_CNT_BLOOM_FP] += rejected;
		return 0;
	}
	bg_count(c, BG_CNT_POSITIVES);
	if (hdr->allow4_n && bg_allowed4(filter, hdr, addr)) {
		bg_count(c, BG_CNT_ALLOWLISTED);
		return 0;
	}
	return !bg_protected4(__builtin_bswap32(addr), c);
}

static __always_inline int bg_judge6(const void *filter,
				     const struct bg_filter_header *hdr,
				     const struct in6_addr *addr,
				     struct bg_counters *c)
{
	__u32 probes = 0, rejected = 0;
	int listed = bg_listed6(filter, hdr, (const __u8 *)addr, &probes,
				&rejected);

	c->cnt[BG_CNT_PROBES] += probes;
	if (!listed) {
		bg_count(c, BG_CNT_NEGATIVES);
		c->cnt[BG_CNT_BLOOM_FP] += rejected;
		return 0;
	}
	bg_count(c, BG_CNT_POSITIVES);
	if (hdr->allow6_n && bg_allowed6(filter, hdr, (const __u8 *)addr)) {
		bg_count(c, BG_CNT_ALLOWLISTED);
		return 0;
	}
	return !bg_protected6(bg_be64_to_host((const __u8 *)addr),
			      bg_be64_to_host((const __u8 *)addr + 8), c);
}

/*
 * 1 if the packet is a UDP datagram (not a fragment) to one of the DNS
 * ports. The port is read with bpf_xdp_load_bytes(), not through a packet
 * pointer: a bounds check here would leave the judge after it with two
 * packet ranges, and the verifier walking it once for each.
 */
static __always_inline int bg_dns_to_port(struct xdp_md *ctx,
					  const struct bg_pkt *pkt)
{
	struct udphdr udp;

	if (!bg_dns_l4_ok(pkt))
		return 0;
	/* fails unless the whole UDP header is in the frame */
	if (bpf_xdp_load_bytes(ctx, (__u32)((long)pkt->l4 - (long)ctx->data),
			       &udp, sizeof(udp)))
		return 0;
	return bg_dns_port_in(udp.dest, cfg_dns_ports);
}

static __always_inline void bg_emit(struct xdp_md *ctx, struct bg_pkt *pkt,
				    __u8 which, __u8 verdict,
				    struct bg_counters *c)
{
	struct bg_event *ev = bpf_ringbuf_reserve(&BG_MAP_EVENTS, sizeof(*ev), 0);

	if (!ev) {
		bg_count(c, BG_CNT_EVENTS_LOST);
		return;
	}
	ev->ts_ns = bpf_ktime_get_ns();
	ev->ifindex = ctx->ingress_ifindex;
	ev->family = pkt->family;
	ev->which = which;
	ev->verdict = verdict;
	ev->pad = 0;
	__builtin_memset(ev->addr, 0, sizeof(ev->addr));
	if (pkt->family == BG_KEY_IPV4) {
		__u32 a = which == BG_MATCH_DST ? pkt->ip4->daddr : pkt->ip4->saddr;

		__builtin_memcpy(ev->addr, &a, 4);
	} else {
		if (which == BG_MATCH_DST)
			__builtin_memcpy(ev->addr, &pkt->ip6->daddr, 16);
		else
			__builtin_memcpy(ev->addr, &pkt->ip6->saddr, 16);
	}
	bpf_ringbuf_submit(ev, 0);
}

/* Benchmarks: step the destination through a full-period LCG. */
static __always_inline void bg_bench_step(struct bg_pkt *pkt)
{
	if (pkt->family == BG_KEY_IPV4) {
		__u32 a = bpf_ntohl(pkt->ip4->daddr);

		pkt->ip4->daddr = bpf_htonl(a * 2654435761U + 1);
	} else if (pkt->family == BG_KEY_IPV6) {
		__u32 *w = (__u32 *)&pkt->ip6->daddr;

		w[3] = w[3] * 2654435761U + 1;
		w[2] = w[2] * 2246822519U + w[3];
	}
}

SEC("xdp")
int bloomgate_xdp(struct xdp_md *ctx)
{
	const struct bg_filter_header *hdr;
	struct bg_counters *c;
	struct bg_dns_scratch *s;
	struct bg_pkt pkt;
	__u32 zero = 0;
	__u8 which = 0;
	void *filter;

	c = bpf_map_lookup_elem(&BG_MAP_COUNTERS, &zero);
	s = bpf_map_lookup_elem(&bg_dns_scratch, &zero);
	if (bg_unlikely(!c || !s)) /* never: one-element arrays, key 0 */
		return XDP_PASS;
	bg_count(c, BG_CNT_PACKETS);

	bg_parse(ctx, &pkt);
	if (bg_unlikely(pkt.malformed)) {
		__u32 r = pkt.malformed - 1;

		bg_count(c, BG_CNT_MALFORMED);
		if (r < BG_MAL_SLOTS)
			c->malformed[r]++;
	}
	if (bg_unlikely(!pkt.family)) { /* neither IPv4 nor IPv6 */
		if (!pkt.malformed)
			bg_count(c, BG_CNT_NON_IP); /* ARP...: always passes */
		else if (bg_unparsed_drop(c))
			return XDP_DROP;
		goto pass;
	}
	if (pkt.family == BG_KEY_IPV4)
		bg_count(c, BG_CNT_IPV4);
	else
		bg_count(c, BG_CNT_IPV6);
	if (bg_unlikely(pkt.frag))
		bg_count(c, BG_CNT_FRAGMENTS);

	filter = bpf_map_lookup_elem(&BG_MAP_FILTERS, &zero);
	if (bg_unlikely(!filter))
		goto no_filter;
	hdr = bpf_map_lookup_elem(filter, &zero);
	/* The loader checked the whole header before publishing it (and the
	 * map is frozen): one compare tells a filter of this ABI. */
	if (bg_unlikely(!hdr || !bg_header_current(hdr)))
		goto no_filter;
	/*
	 * Whether the packet goes to bloomgate_dns after the address judge,
	 * decided here while the packet pointers are checked anyway, and kept
	 * in the scratch map value: a 0/1 register known on every path would
	 * be marked precise where it is tested and have the verifier walk the
	 * judge once per value (~195k verified instructions to ~360k, over
	 * the 1M limit with --match both); a value read back from a map is
	 * unknown to it. Only a filter with names needs the UDP header.
	 */
	s->to_dns = (hdr->flags & BG_FILTER_F_NAMES) && bg_dns_to_port(ctx, &pkt);

	if (pkt.family == BG_KEY_IPV4) {
		if ((cfg_match & BG_MATCH_DST) &&
		    bg_judge4(filter, hdr, pkt.ip4->daddr, c))
			which = BG_MATCH_DST;
		else if ((cfg_match & BG_MATCH_SRC) &&
			 bg_judge4(filter, hdr, pkt.ip4->saddr, c))
			which = BG_MATCH_SRC;
	} else {
		if ((cfg_match & BG_MATCH_DST) &&
		    bg_judge6(filter, hdr, &pkt.ip6->daddr, c))
			which = BG_MATCH_DST;
		else if ((cfg_match & BG_MATCH_SRC) &&
			 bg_judge6(filter, hdr, &pkt.ip6->saddr, c))
			which = BG_MATCH_SRC;
	}
	if (cfg_bench_vary)
		bg_bench_step(&pkt);
	if (!which) {
		/* Not listed by address: a DNS query is judged by name in
		 * bloomgate_dns, which counts the verdict from here on. */
		if (s->to_dns) {
			/* In the program's body, not in a subprogram: a tail
			 * call from a subprogram returns to its caller. */
			bpf_tail_call(ctx, &BG_MAP_PROGS, BG_PROG_DNS);
			bg_count(c, BG_CNT_DNS_NO_PROG);
		}
		goto pass;
	}

	if (cfg_action == BG_ACTION_DROP) {
		bg_count(c, BG_CNT_DROPPED);
		return XDP_DROP;
	}
	bg_count(c, BG_CNT_FLAGGED);
	bg_emit(ctx, &pkt, which, BG_VERDICT_FLAG, c);
	goto pass;

no_filter:
	bg_count(c, BG_CNT_NO_FILTER);
	if (cfg_bench_vary)
		bg_bench_step(&pkt);
pass:
	bg_count(c, BG_CNT_PASSED);
	/* the next program judges what bloomgate passed (an empty slot:
	 * the tail call falls through) */
	if (cfg_chain)
		bpf_tail_call(ctx, &BG_MAP_PROGS, BG_PROG_NEXT);
	return XDP_PASS;
}

/* ---- DNS (issue 4): tail-called by bloomgate_xdp ------------------------ */

/* bg_name_listed and bg_name_allow_round (bloomgate/lookup.h) read
 * s->suf[] with their masked indices. */
_Static_assert(sizeof(((struct bg_dns_scratch *)0)->suf) ==
		       BG_NAME_SUF_SIZE * sizeof(__u64),
	       "the scratch suffix hashes are the array bg_name_listed reads");

struct bg_dns_allow_ctx {
	void *filter;
	const struct bg_filter_header *hdr;
	struct bg_dns_scratch *s;
	__u32 allowed;
};

/* One bpf_loop() round of the name allowlist (bg_name_allow_round). 1
 * stops the loop: the name is allowed, or no round is left. */
static long bg_dns_allow_cb(__u32 i, void *ctx)
{
	struct bg_dns_allow_ctx *a = ctx;
	int r = bg_name_allow_round(a->filter, a->hdr, a->s->exact, a->s->suf,
				    a->s->n, i);

	if (!r)
		return 0;
	a->allowed = r > 0;
	return 1;
}

/* 1 if the name in s is allowed (checked after a positive only). The
 * searches run in bpf_loop(): 11 unrolled branch-free searches of
 * BG_RANGE_STEPS map lookups each would cost the verifier far more. */
static __always_inline int bg_dns_allowed(void *filter,
					  const struct bg_filter_header *hdr,
					  struct bg_dns_scratch *s)
{
	struct bg_dns_allow_ctx a = { .filter = filter, .hdr = hdr, .s = s };

	if (!hdr->allown_n)
		return 0;
	/* every suffix the rounds read, past the depths the probe asked for */
	bg_dns_suffixes(s, BG_SUBS_DEPTHS_ALL);
	bpf_loop(BG_NAME_ALLOW_ROUNDS, bg_dns_allow_cb, &a, 0);
	return a.allowed;
}

/* Event for a flagged query: the client and the name (wire form,
 * lowercased, zero padded). */
static __always_inline void bg_dns_emit(struct xdp_md *ctx,
					struct bg_dns_scratch *s,
					struct bg_counters *c)
{
	struct bg_name_event *e;
	__u32 nl = s->qname_len, j, off, alen;

	e = bpf_ringbuf_reserve(&BG_MAP_EVENTS, sizeof(*e), 0);
	if (!e) {
		bg_count(c, BG_CNT_EVENTS_LOST);
		return;
	}
	e->ev.ts_ns = bpf_ktime_get_ns();
	e->ev.ifindex = ctx->ingress_ifindex;
	e->ev.family = s->family;
	e->ev.which = BG_EVENT_NAME;
	e->ev.verdict = BG_VERDICT_FLAG;
	e->ev.pad = 0;
	__builtin_memset(e->ev.addr, 0, sizeof(e->ev.addr));
	if (s->family == BG_KEY_IPV4) {
		off = s->l3off + 12; /* iphdr.saddr */
		alen = 4;
	} else {
		off = s->l3off + 8; /* ipv6hdr.saddr */
		alen = 16;
	}
	if (bpf_xdp_load_bytes(ctx, off, e->ev.addr, alen)) {
		bpf_ringbuf_discard(e, 0);
		bg_count(c, BG_CNT_EVENTS_LOST);
		return;
	}
	asm volatile("" : "+r"(nl)); /* keep the mask below branch-free */
	for (j = 0; j < sizeof(e->name); j++) {
		__u32 keep = (j - nl) >> 31; /* 1 when j < nl (both <= 256) */

		asm volatile("" : "+r"(keep));
		e->name[j] = (__u8)(bg_dns_lower(s->q[j]) & (0 - keep));
	}
	bpf_ringbuf_submit(e, 0);
}

/*
 * Judges DNS queries by name; tail-called by bloomgate_xdp for UDP (not a
 * fragment) to one of cfg_dns_ports when the filter holds names, after the
 * address verdict. The name is probed as `bloomgate check` probes it
 * (bg_name_listed, bloomgate/lookup.h): the exact hash as an exact key, then
 * each proper suffix of at most BG_DNS_SUFFIX_MAX labels, shortest first,
 * as a "subdomains" key, only at the depths (label counts) at which the
 * filter has a SUBS key (hdr->subs_depths; dns_probes counts the probes
 * made); a positive that the name allowlist holds passes
 * (dns_allowlisted); otherwise cfg_dns_action: drop, flag (pass, event),
 * or answer NXDOMAIN / REFUSED in place with XDP_TX (bpf/dns_reply.h; any
 * other value answers NXDOMAIN). An answer that cannot be built (IPv6
 * extension headers, a helper failing) is a drop.
 *
 * Counting: bloomgate_xdp has counted packets, families, malformed reasons
 * and the address probes; every return here counts exactly one of passed,
 * dropped, answered (flagged is counted with passed), so packets = passed
 * + dropped + answered holds across both programs. A packet that is not a
 * judged query (not UDP to a DNS port, a response, a malformed name...)
 * passes, with its dns_* reason counted when it has one.
 */
SEC("xdp")
int bloomgate_dns(struct xdp_md *ctx)
{
	const struct bg_filter_header *hdr = NULL;
	struct bg_dns_scratch *s;
	struct bg_counters *c;
	struct bg_pkt pkt;
	void *filter = NULL;
	__u32 zero = 0, probes = 0, rejected = 0, n;
	int ret, listed;

	c = bpf_map_lookup_elem(&BG_MAP_COUNTERS, &zero);
	if (!c)
		return XDP_PASS;
	s = bpf_map_lookup_elem(&bg_dns_scratch, &zero);
	if (!s)
		goto pass;
	bg_parse(ctx, &pkt);

	filter = bpf_map_lookup_elem(&BG_MAP_FILTERS, &zero);
	if (filter) {
		hdr = bpf_map_lookup_elem(filter, &zero);
		/* A filter without name keys is not probed for names: its
		 * bits would answer at its false-positive rate. */
		if (hdr && (!bg_header_current(hdr) || !hdr->nblocks ||
			    !(hdr->flags & BG_FILTER_F_NAMES)))
			hdr = NULL;
	}
	ret = bg_dns_parse(ctx, &pkt, cfg_dns_ports, hdr ? hdr->seed : 0, s);
	if (ret == BG_DNS_NOT_DNS)
		goto pass;
	if (ret != BG_DNS_QUERY) {
		__u32 r = (__u32)ret;

		/* The reason is a counter index by construction; the barrier
		 * keeps clang from dropping the mask the verifier needs. */
		asm volatile("" : "+r"(r));
		c->cnt[r & (BG_CNT_SLOTS - 1)]++;
		goto pass;
	}
	bg_count(c, BG_CNT_DNS_QUERIES);
	n = s->n;
	if (!hdr || !filter || !n || n > BG_DNS_LABELS_MAX)
		goto pass; /* no filter, or the root name: not judged */

	/* the suffix hashes of the depths the probe reads, no more */
	bg_dns_suffixes(s, hdr->subs_depths);
	listed = bg_name_listed(filter, hdr, s->exact, s->suf, n, NULL, &probes,
				&rejected);
	c->cnt[BG_CNT_DNS_PROBES] += probes;
	if (!listed) {
		bg_count(c, BG_CNT_DNS_NEGATIVES);
		c->cnt[BG_CNT_DNS_BLOOM_FP] += rejected;
		goto pass;
	}
	bg_count(c, BG_CNT_DNS_POSITIVES);
	if (bg_dns_allowed(filter, hdr, s)) {
		bg_count(c, BG_CNT_DNS_ALLOWLISTED);
		goto pass;
	}

	if (cfg_dns_action == BG_DNS_ACTION_DROP)
		goto drop;
	if (cfg_dns_action == BG_DNS_ACTION_FLAG) {
		bg_count(c, BG_CNT_FLAGGED);
		bg_dns_emit(ctx, s, c);
		goto pass;
	}
	if (bg_dns_answer(ctx, s,
			  cfg_dns_action == BG_DNS_ACTION_REFUSED ?
				  BG_DNS_RCODE_REFUSED : BG_DNS_RCODE_NXDOMAIN))
		goto drop;
	bg_count(c, BG_CNT_ANSWERED);
	return XDP_TX;

drop:
	bg_count(c, BG_CNT_DROPPED);
	return XDP_DROP;
pass:
	bg_count(c, BG_CNT_PASSED);
	if (cfg_chain)
		bpf_tail_call(ctx, &BG_MAP_PROGS, BG_PROG_NEXT);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
