// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The end-to-end section's programs (bench/e2e.sh, loaded by bench/livegen.c).
 *
 * lg_gen is the generator: run by BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES, it gives each frame a new IPv4 destination
 * (or source) from the full-period LCG of livegen.h and redirects it into
 * one end of a veth pair. Live frames come from a page pool whose pages
 * keep what the last frame wrote, so the sequence lives in .bss, not in the
 * packet.
 *
 * The others run on the receiving end: bare XDP_DROP and XDP_PASS, and the
 * floor, which reads one 64-byte line of an array as large as the filter
 * compared with it, chosen by a hash of the address, then gives a fixed
 * verdict: the least any filter that touches one cache line can cost.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "livegen.h"
#include "bloomgate/bloom.h"

const volatile __u32 gen_ifindex = 0;
const volatile __u32 gen_lo = 0;    /* first number sent */
const volatile __u32 gen_count = 1; /* numbers sent: [lo, lo + count) */
const volatile __u32 gen_mask = 0;  /* 2^k - 1 >= count - 1 */
const volatile __u32 gen_match = LG_MATCH_DST;

__u32 gen_state;

static __always_inline __u16 csum_fold(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

SEC("xdp")
int lg_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct iphdr *iph = data + sizeof(struct ethhdr);
	__u32 s = gen_state, old, new, sum;
	int i;

	if ((void *)(iph + 1) > end)
		return XDP_ABORTED;
	for (i = 0; i < 64; i++) {
		s = (s * LG_LCG_A + LG_LCG_C) & gen_mask;
		if (s < gen_count)
			break;
	}
	if (s >= gen_count) /* 64 misses in a row: < 2^-64 */
		s %= gen_count;
	gen_state = s;
	new = bpf_htonl(LG_BASE + lg_perm(gen_lo + s));
	if (gen_match == LG_MATCH_SRC) {
		old = iph->saddr;
		iph->saddr = new;
	} else {
		old = iph->daddr;
		iph->daddr = new;
	}
	/* incremental header checksum (RFC 1624): the stack checks it */
	sum = (__u16)~iph->check;
	sum += (__u16)~(old & 0xffff) + (__u16)~(old >> 16);
	sum += (new & 0xffff) + (new >> 16);
	iph->check = csum_fold(sum);
	return bpf_redirect(gen_ifindex, 0);
}

SEC("xdp")
int lg_drop(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_DROP;
}

SEC("xdp")
int lg_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

const volatile __u32 floor_lines = 1;
const volatile __u32 floor_verdict = XDP_PASS;
const volatile __u32 floor_match = LG_MATCH_DST;

/* The receiving programs' parse: 1 and the address the row matches on
 * (floor_match) in *addr when the frame is IPv4, else 0. */
static __always_inline int lg_addr(struct xdp_md *ctx, __u32 *addr)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);

	if ((void *)(iph + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return 0;
	*addr = floor_match == LG_MATCH_SRC ? iph->saddr : iph->daddr;
	return 1;
}

struct lg_line {
	__u64 w[8];
};

/* mmapable: the data starts on a page, so every line is one cache line */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct lg_line);
	__uint(max_entries, 1); /* floor_lines, set before load */
} lg_floor_map SEC(".maps");

SEC("xdp")
int lg_floor(struct xdp_md *ctx)
{
	struct lg_line *line;
	__u32 addr, h, idx;

	if (!lg_addr(ctx, &addr))
		return floor_verdict;
	h = (__u32)(((__u64)addr * 0x9e3779b97f4a7c15ULL) >> 32);
	idx = (__u32)(((__u64)h * floor_lines) >> 32);
	line = bpf_map_lookup_elem(&lg_floor_map, &idx);
	if (!line)
		return XDP_ABORTED;
	/* the array is zeroed: never true; the load is what is measured */
	if (line->w[0] == 1)
		return XDP_ABORTED;
	return floor_verdict;
}

/*
 * The two-line floor: the least a filter with an exact stage behind a
 * one-line gate can cost on traffic the gate passes on to the stage (a
 * flood of listed addresses): one random line of the first floor_lines
 * (the Bloom part's size) and one of the floor_lines2 after them (the
 * stage's size), the second picked by another hash of the address and
 * read after a test of the first that always comes out the same way, as
 * bloomgate reads the stage's bucket after a Bloom positive.
 */
const volatile __u32 floor_lines2 = 0;
/*
 * Where the second line is (LG_TWO_*), the layouts an exact stage could
 * have: APART, a table of its own after the first's (bloomgate's layout);
 * PAGE, in the first line's 4 KiB page (a bucket beside its Bloom block:
 * one page, one TLB entry, for both; the first line then picked among
 * all floor_lines + floor_lines2, the whole filter interleaved); EARLY,
 * apart but read before the first line is tested, so that the two loads
 * overlap (a bucket index computed before the Bloom test).
 */
const volatile __u32 two_layout = LG_TWO_APART;

SEC("xdp")
int lg_twofloor(struct xdp_md *ctx)
{
	struct lg_line *line, *line2;
	__u32 addr, idx, idx2;
	__u64 h, h2, w2 = 0;

	if (!lg_addr(ctx, &addr))
		return floor_verdict;
	h = (__u64)addr * 0x9e3779b97f4a7c15ULL;
	h2 = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
	if (two_layout == LG_TWO_PAGE) {
		idx = (__u32)(((h >> 32) * (floor_lines + floor_lines2)) >> 32);
		idx2 = (idx & ~63u) | (__u32)(h2 >> 58);
		if (idx2 >= floor_lines + floor_lines2)
			idx2 = idx;
	} else {
		idx = (__u32)(((h >> 32) * floor_lines) >> 32);
		idx2 = floor_lines + (__u32)(((h2 >> 32) * floor_lines2) >> 32);
	}
	line = bpf_map_lookup_elem(&lg_floor_map, &idx);
	if (!line)
		return XDP_ABORTED;
	if (two_layout == LG_TWO_EARLY) {
		line2 = bpf_map_lookup_elem(&lg_floor_map, &idx2);
		if (!line2)
			return XDP_ABORTED;
		w2 = line2->w[1];
		/* the load stays before the test below */
		asm volatile("" : "+r"(w2));
	}
	if (line->w[0] == 1) /* the array is zeroed: never */
		return XDP_ABORTED;
	if (two_layout != LG_TWO_EARLY) {
		line2 = bpf_map_lookup_elem(&lg_floor_map, &idx2);
		if (!line2)
			return XDP_ABORTED;
		w2 = line2->w[1];
	}
	if (w2 == 1)
		return XDP_ABORTED;
	return floor_verdict;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * The Bloom floor: the least a Bloom probe of bloomgate's layout costs,
 * with none of bloomgate's own work (no map-in-map, no header, no counters,
 * no parse beyond the address): the address's key hashed as bloomgate
 * hashes it (XXH64 from a register, bg_key4_hash), one 64-byte line picked
 * as bloomgate picks a block (bg_bloom_block) in an array of floor_lines,
 * and its bloom_k bits and-ed (bg_bloom_test). The array is zeroed, so the
 * test says "no"; the verdict is floor_verdict whatever it says, compared
 * with a rodata value the compiler cannot know, so the test is not dropped.
 */
const volatile __u32 bloom_k = 9;
const volatile __u32 bloom_never = 2;

SEC("xdp")
int lg_bloomfloor(struct xdp_md *ctx)
{
	const struct bg_block *b;
	struct bg_key4 key;
	__u32 idx, addr;
	__u64 h;

	if (!lg_addr(ctx, &addr))
		return floor_verdict;
	bg_key4_init(&key, addr, 32);
	h = bg_key4_hash(&key, 0x626c6f6f6d676174ULL);
	idx = bg_bloom_block(h, floor_lines);
	b = bpf_map_lookup_elem(&lg_floor_map, &idx);
	if (!b)
		return XDP_ABORTED;
	if ((__u32)bg_bloom_test(b, h, bloom_k) == bloom_never)
		return XDP_ABORTED;
	return floor_verdict;
}

/*
 * The probe floor: bloomgate's own lookup (bloomgate/lookup.h, bg_listed4:
 * the /16 bitmap if the filter has one, the Bloom probe at each prefix
 * length, the exact stage's buckets after a Bloom positive) on a copy of a
 * live bloomgate filter (livegen attach ... probefloor --filter PIN: every
 * 64-byte element of the map in slot 0 of the pinned bg_filters, header
 * included) held in a plain array of the same size, so every lookup is
 * inlined, and nothing else: no map-in-map, no counters, no full parse.
 * Its ratio to the floor is what the lookup itself costs, bloomgate's ratio
 * to it what bloomgate's own work around the lookup costs.
 */
static __always_inline const void *bg_elem(const void *filter, __u32 idx)
{
	(void)filter;
	return bpf_map_lookup_elem(&lg_floor_map, &idx);
}

#include "bloomgate/lookup.h"

/*
 * probe_part takes the lookup apart on a flood of listed addresses (the
 * filter must have the exact stage): LG_PART_BLOOM the Bloom probe alone
 * (one line), LG_PART_LINE the probe and then one word of the first
 * bucket's line (what the two-line floor reads), LG_PART_BUCKET1 the probe
 * and the first bucket's fingerprints compared (never the second bucket);
 * LG_PART_ALL the whole lookup (bg_listed4).
 */
const volatile __u32 probe_part = LG_PART_ALL;

static __always_inline __u32 lg_probe_part(const struct bg_filter_header *hdr,
					   __u32 addr)
{
	const struct bg_fp_bucket *b;
	struct bg_key4 key;
	__u64 h, h2;

	bg_key4_init(&key, addr, hdr->len4[0]);
	h = bg_key4_hash(&key, hdr->seed);
	if (!bg_probe_hash(0, hdr, h))
		return 0;
	if (probe_part == LG_PART_BLOOM)
		return 1;
	h2 = bg_fp_hash(h, hdr->seed);
	b = bg_elem(0, hdr->fp_off + bg_fp_bucket1(h2, hdr->fp_nbuckets));
	if (!b)
		return 0;
	if (probe_part == LG_PART_LINE)
		return b->fp[0] == 1;
	return bg_fp_bucket_has(b, bg_fp_of(h2));
}

/* LG_PART_EARLY: the whole lookup of one /32 key, the first bucket's line
 * read and compared before the Bloom test (whose positive still decides
 * whether the stage's answer counts), the second bucket's after it. */
static __always_inline __u32 lg_probe_early(const struct bg_filter_header *hdr,
					    __u32 addr)
{
	const struct bg_fp_bucket *b;
	struct bg_key4 key;
	__u64 h, h2;
	__u32 f, hit;

	bg_key4_init(&key, addr, hdr->len4[0]);
	h = bg_key4_hash(&key, hdr->seed);
	h2 = bg_fp_hash(h, hdr->seed);
	f = bg_fp_of(h2);
	b = bg_elem(0, hdr->fp_off + bg_fp_bucket1(h2, hdr->fp_nbuckets));
	if (!b)
		return 0;
	hit = (__u32)bg_fp_bucket_has(b, f);
	asm volatile("" : "+r"(hit)); /* not sunk below the test */
	if (!bg_probe_hash(0, hdr, h))
		return 0;
	if (hit)
		return 1;
	b = bg_elem(0, hdr->fp_off + bg_fp_bucket2(h2, hdr->fp_nbuckets));
	return b && bg_fp_bucket_has(b, f);
}

SEC("xdp")
int lg_probefloor(struct xdp_md *ctx)
{
	const struct bg_filter_header *hdr;
	__u32 zero = 0, probes = 0, rejected = 0, addr, r;

	if (!lg_addr(ctx, &addr))
		return floor_verdict;
	hdr = bpf_map_lookup_elem(&lg_floor_map, &zero);
	if (!hdr)
		return XDP_ABORTED;
	if (probe_part == LG_PART_ALL)
		r = (__u32)bg_listed4(0, hdr, addr, &probes, &rejected);
	else if (probe_part == LG_PART_EARLY)
		r = lg_probe_early(hdr, addr);
	else
		r = lg_probe_part(hdr, addr);
	if (r == bloom_never)
		return XDP_ABORTED;
	return floor_verdict;
}

/*
 * The one-line exact layout (livegen.h, struct lg_one_line), built by
 * livegen attach ... oneline for the list [0, --keys): the address's key
 * hashed as bloomgate hashes it, one line picked as bloomgate picks a Bloom
 * block, its 13 fingerprints compared; the key's second line (picked as
 * the stage picks a second bucket) read only when the fingerprint is not in
 * the first and the first has overflowed. The same
 * parse and verdict as the probe floor, so the two compare as lookups.
 */
static __always_inline __u32 lg_one_probe(__u32 addr)
{
	const struct lg_one_line *l;
	struct bg_key4 key;
	__u32 idx, hi, lo, r;
	__u64 h, h2;

	bg_key4_init(&key, addr, 32);
	h = bg_key4_hash(&key, LG_ONE_SEED);
	h2 = bg_fp_hash(h, LG_ONE_SEED);
	hi = lg_one_hi(h2);
	lo = lg_one_lo(h2);
	idx = bg_bloom_block(h, floor_lines);
	l = bpf_map_lookup_elem(&lg_floor_map, &idx);
	if (!l)
		return 0;
	r = lg_one_has(l, hi, lo);
	if (r || !lg_one_over(l))
		return r;
	idx = bg_fp_bucket2(h2, floor_lines);
	l = bpf_map_lookup_elem(&lg_floor_map, &idx);
	return l ? lg_one_has(l, hi, lo) : 0;
}

SEC("xdp")
int lg_oneline(struct xdp_md *ctx)
{
	__u32 addr;

	if (!lg_addr(ctx, &addr))
		return floor_verdict;
	if (lg_one_probe(addr) == bloom_never)
		return XDP_ABORTED;
	return floor_verdict;
}
