// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark baselines for bloomgate, run through BPF_PROG_TEST_RUN by
 * the userspace benchmark (bench/addr.c: (a), (c)-(h); bench/cidr.c: (a),
 * (i); bench/dns.c: the DNS section's packet step, bench_dns, at the end).
 * Every program parses the packet with the datapath's own parser
 * (bpf/parse.h), probes the IPv4 destination against one structure, then
 * steps the destination through the same full-period LCG as the
 * datapath's bg_bench_step(), so that the `repeat` iterations of one test
 * run probe different keys (XDP test runs reuse one packet buffer).
 *
 * Each program counts its positives in bench_pos[] (.bss, read by
 * userspace through the skeleton); the count is only touched on a positive,
 * so the common "not listed" path pays nothing for it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "bloomgate/bloom.h"
#include "parse.h"
#include "bench.h"

__u64 bench_pos[BP__COUNT];

/* Classic Bloom filter parameters, set before load. */
const volatile __u64 classic_seed = 0;
const volatile __u32 classic_mbits = 64; /* m, bits */
const volatile __u32 classic_k = 1;

/* (c) Classic k-probe Bloom filter: m bits in 64-bit words. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1); /* m / 64, set before load */
} classic_bits SEC(".maps");

/* (d) The kernel's Bloom filter map; the value is the address. */
struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__type(value, __u32);
	__uint(max_entries, 1); /* n, set before load */
	__uint(map_extra, 10); /* hash functions, set before load */
} kbloom SEC(".maps");

/* (e) Exact set: hash map keyed by the address (preallocated). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1); /* n, set before load */
} hset SEC(".maps");

/* (f) bloomgate's blocked layout in a plain array: lookups are inlined.
 * bench/addr.c creates this map itself (nblocks + 1 entries) and hands it over
 * with bpf_map__reuse_fd(); it is also the inner-map template of (h). */
struct blocked_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, BG_FILTER_VALUE_SIZE);
	__uint(max_entries, 2); /* header + blocks: the real map replaces it */
};
struct blocked_map blocked SEC(".maps");

/* (g) The same through a map-in-map slot, inner maps of any size
 * (BPF_F_INNER_MAP, as bloomgate does): lookups are helper calls. */
struct blocked_inner_any {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, BG_FILTER_VALUE_SIZE);
	__uint(max_entries, 2);
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct blocked_inner_any);
} blocked_outer SEC(".maps");

/* (h) Map-in-map slot whose inner maps all have one fixed size (no
 * BPF_F_INNER_MAP): bench/addr.c sets the template with
 * bpf_map__set_inner_map_fd to the map of (f), so its max_entries is the
 * real one. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct blocked_map);
} blocked_outer_fixed SEC(".maps");

/* (i) Exact longest-prefix match: the kernel's LPM trie holding the listed
 * IPv4 prefixes (CIDR benchmarks), key as in bench.h. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* required for LPM tries */
	__type(key, struct bench_lpm_key4);
	__type(value, __u32);
	__uint(max_entries, 1); /* prefixes, set before load */
} lpm SEC(".maps");

/* Same step as bg_bench_step() in bpf/bloomgate.bpf.c (IPv4 part). */
static __always_inline void bench_step(struct bg_pkt *pkt)
{
	__u32 a = bpf_ntohl(pkt->ip4->daddr);

	pkt->ip4->daddr = bpf_htonl(a * BENCH_LCG_MUL + BENCH_LCG_ADD);
}

/* The probe of bloomgate's bg_probe() without its counters. */
static __always_inline int blocked_probe(void *map, __u32 addr)
{
	const struct bg_filter_header *hdr;
	struct bg_key4 key;
	struct bg_block *b;
	__u32 zero = 0, idx;
	__u64 h;

	hdr = bpf_map_lookup_elem(map, &zero);
	if (!hdr)
		return 0;
	bg_key4_init(&key, addr, 32);
	h = bg_key4_hash(&key, hdr->seed);
	idx = 1 + bg_bloom_block(h, hdr->nblocks);
	b = bpf_map_lookup_elem(map, &idx);
	return b && bg_bloom_test(b, h, hdr->k);
}

/* blocked_probe() on the filter in slot 0 of a map-in-map: (g) and (h)
 * differ only in how their outer map declares the inner one. */
static __always_inline int slot_probe(void *outer, __u32 addr)
{
	__u32 zero = 0;
	void *filter = bpf_map_lookup_elem(outer, &zero);

	return filter && blocked_probe(filter, addr);
}

/*
 * The probes, one per variant: 1 if the IPv4 destination `a` (network byte
 * order) is positive. They differ only here; BENCH_PROG() below wraps each
 * in the same program, so the parse and the step cost the same in all.
 */

/* (a) No probe: parse and step only. */
static __always_inline int probe_pass(__u32 a)
{
	(void)a;
	return 0;
}

/* (c) k bit positions over the whole array, double hashing of the two
 * halves of one bg_hash64, fastrange to m. */
static __always_inline int probe_classic(__u32 a)
{
	struct bg_key4 key;
	__u32 h1, h2, i;
	__u64 h;

	bg_key4_init(&key, a, 32);
	h = bg_key4_hash(&key, classic_seed);
	h1 = (__u32)h;
	h2 = (__u32)(h >> 32);
	for (i = 0; i < BG_K_MAX && i < classic_k; i++) {
		__u32 bit = (__u32)(((__u64)h1 * classic_mbits) >> 32);
		__u32 w = bit >> 6;
		__u64 *word = bpf_map_lookup_elem(&classic_bits, &w);

		if (!word || !(*word & (1ULL << (bit & 63))))
			return 0;
		h1 += h2;
	}
	return 1;
}

/* (d) bpf_map_peek_elem on the kernel's Bloom filter map. */
static __always_inline int probe_kbloom(__u32 a)
{
	return bpf_map_peek_elem(&kbloom, &a) == 0;
}

/* (e) Exact lookup in a hash map. */
static __always_inline int probe_hash(__u32 a)
{
	return bpf_map_lookup_elem(&hset, &a) != NULL;
}

/* (f) Blocked probe, filter in a plain array map. */
static __always_inline int probe_blocked(__u32 a)
{
	return blocked_probe(&blocked, a);
}

/* (g) Blocked probe through ARRAY_OF_MAPS, BPF_F_INNER_MAP inner map. */
static __always_inline int probe_blocked_inner(__u32 a)
{
	return slot_probe(&blocked_outer, a);
}

/* (h) Blocked probe through ARRAY_OF_MAPS, fixed-size inner map. */
static __always_inline int probe_blocked_fixed(__u32 a)
{
	return slot_probe(&blocked_outer_fixed, a);
}

/* (i) LPM trie lookup of the destination (a /32 key: longest match). */
static __always_inline int probe_lpm(__u32 a)
{
	struct bench_lpm_key4 key = { .prefixlen = 32, .addr = a };

	return bpf_map_lookup_elem(&lpm, &key) != NULL;
}

/*
 * XDP program `name`: parse with the datapath's parser (non-IPv4 passes
 * unprobed), probe the destination, step it, and on a positive count it
 * in bench_pos[idx] and drop.
 */
#define BENCH_PROG(name, probe, idx)                                         \
	SEC("xdp")                                                           \
	int name(struct xdp_md *ctx)                                         \
	{                                                                    \
		struct bg_pkt pkt;                                           \
		int hit;                                                     \
									     \
		bg_parse(ctx, &pkt);                                         \
		if (pkt.family != BG_KEY_IPV4)                               \
			return XDP_PASS;                                     \
		hit = probe(pkt.ip4->daddr);                                 \
		bench_step(&pkt);                                            \
		if (!hit)                                                    \
			return XDP_PASS;                                     \
		bench_pos[idx]++;                                            \
		return XDP_DROP;                                             \
	}

BENCH_PROG(bench_pass, probe_pass, BP_PASS)
BENCH_PROG(bench_classic, probe_classic, BP_CLASSIC)
BENCH_PROG(bench_kbloom, probe_kbloom, BP_KBLOOM)
BENCH_PROG(bench_hash, probe_hash, BP_HASH)
BENCH_PROG(bench_blocked, probe_blocked, BP_BLOCKED)
BENCH_PROG(bench_blocked_inner, probe_blocked_inner, BP_BLOCKED_INNER)
BENCH_PROG(bench_blocked_fixed, probe_blocked_fixed, BP_BLOCKED_FIXED)
BENCH_PROG(bench_lpm, probe_lpm, BP_LPM)

/* ---- DNS section: vary the query, then run the real program -------------
 *
 * bench_dns is the program BPF_PROG_TEST_RUN runs; it measures nothing of
 * its own. Each iteration it
 *   1. steps a 64-bit LCG (bd_x, MMIX constants: full period 2^64);
 *   2. rewrites the first BD_RESTORE bytes of the frame from bd_tmpl, the
 *      query as bench/dns.c built it: a previous iteration answered with XDP_TX
 *      swapped the headers and set QR=1 in place, and the next one must be
 *      the query again;
 *   3. writes the top 32 bits of the state as the IPv4 destination, and up to
 *      BD_VARY_MAX name bytes at bd_vary_off[] as letters "a".."p", 4 bits
 *      each from bits 32..63 of the state;
 *   4. tail-calls bd_target[0]: bloomgate's own bloomgate_xdp (which
 *      tail-calls bloomgate_dns through its bg_progs for UDP to port 53) or
 *      bloomgate_dns itself, loaded from build/bloomgate.skel.h, or
 *      bench_nop to measure steps 1-4 alone.
 * bench/dns.c repeats the same steps in userspace to know every name and
 * address the datapath saw. The step is the same whatever the target and
 * the packet, so it cancels out of every difference between variants.
 */
__u64 bd_x; /* LCG state: userspace sets the start before each run */
__u64 bd_tmpl[BD_RESTORE / 8]; /* the frame's first BD_RESTORE bytes */
__u32 bd_daddr_off; /* frame offset of the IPv4 destination */
__u32 bd_vary_n; /* name bytes varied, <= BD_VARY_MAX */
__u16 bd_vary_off[BD_VARY_MAX]; /* their frame offsets */

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} bd_target SEC(".maps");


SEC("xdp")
int bench_dns(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 x = bd_x * BD_LCG_MUL + BD_LCG_ADD, v = x >> 32;
	__u64 *w = data;
	__u32 i, off;
	__u8 *p;

	bd_x = x;
	if (data + BD_RESTORE > data_end)
		return XDP_ABORTED;
	for (i = 0; i < BD_RESTORE / 8; i++)
		w[i] = bd_tmpl[i];
	off = bd_daddr_off & 511;
	p = data + off;
	if ((void *)(p + 4) > data_end)
		return XDP_ABORTED;
	*(__u32 *)p = bpf_htonl((__u32)(x >> 32));
	for (i = 0; i < BD_VARY_MAX; i++) {
		if (i >= bd_vary_n)
			break;
		off = bd_vary_off[i] & 511;
		p = data + off;
		if ((void *)(p + 1) > data_end)
			return XDP_ABORTED;
		*p = (__u8)('a' + (v & 15)); /* no branch: one would mispredict */
		v >>= 4;
	}
	bpf_tail_call(ctx, &bd_target, 0);
	return XDP_ABORTED; /* empty slot: bench/dns.c treats it as an error */
}

/* Tail-call target that does nothing: bench_dns's own cost. */
SEC("xdp")
int bench_nop(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
