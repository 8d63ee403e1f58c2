/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DNS query parser for XDP (issue 4), on top of the one packet parser
 * (bpf/parse.h): UDP (not a fragment) to one of the configured DNS ports,
 * the 12-byte DNS header, then the question's QNAME label by label, hashed
 * as bloomgate/dns.h defines.
 *
 * A query is QR=0, OPCODE=0 (QUERY), QDCOUNT=1; ANCOUNT, NSCOUNT and
 * ARCOUNT are not looked at here (ARCOUNT is 1 with EDNS; bpf/dns_reply.h
 * reads them to find an OPT record). The message is the UDP payload as the
 * UDP length says; a UDP length over what the frame holds, or under a DNS
 * header, is a truncated message (the kernel's UDP stack would drop it
 * too), whichever byte is missing.
 *
 * Verifier cost is kept flat:
 *  - the DNS header and the question (up to BG_DNS_Q_COPY bytes: the
 *    longest question and an OPT record's fixed part after it) are copied
 *    from the packet into a per-CPU scratch map value by one
 *    bpf_xdp_load_bytes() at a scalar offset, so no packet pointer is live
 *    afterwards and the verifier states of every parse path merge (a byte
 *    loop over packet pointers ran into the 1M limit: each exit carried a
 *    different packet range); what the answer needs later (offsets, UDP
 *    length, family) is kept as scalars in the scratch value too;
 *  - the label walk and the hashing run in bpf_loop(): their state lives in
 *    the scratch value, so each callback is verified as one body, not
 *    unrolled 127 times.
 *
 * Cost is bounded by the name's bytes, not its labels (a 127-label name is
 * the worst case a client can send; issue 10):
 *  - the name is lowercased once, 8 bytes at a time (bg_dns_lower64), into
 *    s->lq; lowercasing each label's 64-byte buffer would redo up to 64
 *    bytes per label;
 *  - the walk (left to right) only checks the labels and keeps their
 *    positions, BG_DNS_WALK_STEP labels per bpf_loop() round (a round
 *    costs a call; a label a handful of instructions);
 *  - the exact hash E is one XXH64 over lq, 32 bytes a stripe, after the
 *    name's bytes past its root byte are cleared (bg_dns_exact);
 *  - label and suffix hashes are made only for the last labels, the
 *    parents the filter's depths probe (bg_dns_suffixes, called by
 *    bloomgate_dns), at most BG_DNS_SUFFIX_MAX of them;
 *  - a label's 64-byte buffer [len, bytes lowercased, zero padding] is never
 *    built: it is the bytes of lq at the label's length byte with the bytes
 *    past the label cleared, so its 8 words are read there (unaligned),
 *    masked with a constant table (bg_dns_label_word) and hashed as words
 *    (bg_hash64_words64, the same XXH64 as bg_hash64 of the buffer).
 * Everything there is branch-free but the walk's checks.
 */
#ifndef BLOOMGATE_BPF_DNS_H
#define BLOOMGATE_BPF_DNS_H

#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "bloomgate/dns.h"
#include "parse.h"

#define BG_DNS_HDR_LEN 12
/* An OPT record without options: root name, TYPE, CLASS, TTL, RDLEN. */
#define BG_DNS_OPT_LEN 11
#define BG_DNS_TYPE_OPT 41
/* Bytes after the DNS header ever needed: the longest name, QTYPE, QCLASS,
 * and the fixed part of an OPT record right after the question. */
#define BG_DNS_Q_COPY (BG_DNS_NAME_MAX + 4 + BG_DNS_OPT_LEN)
#define BG_DNS_Q_SIZE 512 /* power of two >= BG_DNS_Q_COPY + 64 */
#define BG_DNS_Q_MASK (BG_DNS_Q_SIZE - 1)
/* Lowercased: the first BG_DNS_LQ_WORDS words of q, all a name can use. A
 * label's length byte is at pos, pos + l + 2 <= BG_DNS_NAME_MAX: its 64-byte
 * window is read at lq + (pos & BG_DNS_LW_MASK), inside lq. */
#define BG_DNS_LQ_WORDS 32
#define BG_DNS_LW_MASK 255
#define BG_DNS_LQ_SIZE (BG_DNS_LW_MASK + 1 + BG_DNS_LABEL_BUF)
#define BG_DNS_LH_SIZE 128 /* >= BG_DNS_LABELS_MAX + 1, power of two */
#define BG_DNS_LH_MASK (BG_DNS_LH_SIZE - 1)
/* Labels the walk checks per bpf_loop() round, and the rounds it needs for
 * the longest name (its labels and the root byte). */
#define BG_DNS_WALK_STEP 8
#define BG_DNS_WALK_ROUNDS \
	((BG_DNS_LABELS_MAX + 1 + BG_DNS_WALK_STEP - 1) / BG_DNS_WALK_STEP)

/* Walk status in the scratch value. */
#define BG_DNS_WALKING 0
#define BG_DNS_DONE 1
/* otherwise: a BG_CNT_DNS_* reason + 2 */

/* Per-CPU scratch: the value of a PERCPU_ARRAY with one element. */
struct bg_dns_scratch {
	/* hdr and q are one DNS message buffer: the query's header and the
	 * bytes after it as copied from the packet (case preserved); an
	 * answer is then built in place (bpf/dns_reply.h). */
	__u8 hdr[BG_DNS_HDR_LEN];
	__u8 q[BG_DNS_Q_SIZE]; /* question bytes, then what follows */
	/* q's first bytes (the name) with A-Z lowercased, then room for the
	 * 64-byte window of a label (bg_dns_label_word). */
	__u8 lq[BG_DNS_LQ_SIZE] __attribute__((aligned(8)));
	/* Label hashes L_j and suffix hashes S_j (suf[n] = 0), left to right;
	 * only the last nsuf labels' are made (bg_dns_suffixes). */
	__u64 lh[BG_DNS_LH_SIZE];
	__u8 lpos[BG_DNS_LH_SIZE]; /* the labels' length bytes' offsets in q */
	__u64 suf[BG_DNS_LH_SIZE];
	__u64 exact; /* E, the exact hash of the whole name */
	__u64 seed;
	__u32 nsuf; /* suffix hashes made: suf[n - nsuf .. n - 1] */
	__u32 want; /* bg_dns_suffixes: the depths asked for */
	__u32 len; /* question bytes in q */
	__u32 pos; /* walk position in q */
	__u32 n; /* labels */
	__u32 status; /* BG_DNS_WALKING, BG_DNS_DONE or a reason + 2 */
	__u16 qtype, qclass; /* host order */
	__u32 qname_len; /* QNAME wire bytes, root byte included */
	/* Where the query sits in the frame, for an answer (dns_reply.h). */
	__u32 l3off, l4off; /* IP and UDP header offsets */
	__u32 ulen; /* UDP length of the query (header included) */
	__u8 family; /* BG_KEY_IPV4 / BG_KEY_IPV6 */
	/* bloomgate_xdp: 1 = a UDP datagram to a DNS port (bg_dns_udp) and
	 * the filter holds names: judged by name after the address */
	__u8 to_dns;
	__u8 pad[2];
	/* Headers of an answer, built here before they are written back. */
	__u8 eth[12]; /* destination and source MAC */
	__u8 ip[80]; /* IPv4 header with options (<= 60), or IPv6 (40) */
	__u8 udp[8];
};
_Static_assert(__builtin_offsetof(struct bg_dns_scratch, q) == BG_DNS_HDR_LEN,
	       "the question follows the DNS header in the scratch");
_Static_assert(BG_DNS_LQ_SIZE >= BG_DNS_EXACT_MAX + 24,
	       "the zero padding after the name stays inside lq");
_Static_assert(8 * BG_DNS_LQ_WORDS >= BG_DNS_NAME_MAX &&
		       BG_DNS_LW_MASK + 1 >= BG_DNS_NAME_MAX &&
		       8 * BG_DNS_LQ_WORDS <= BG_DNS_Q_SIZE,
	       "lq holds every name byte, its windows stay inside lq");

/* Parse results besides 0 (a query) and a BG_CNT_DNS_* reason (> 0). */
#define BG_DNS_QUERY 0
#define BG_DNS_NOT_DNS (-1) /* not UDP to the port: not ours */

/* 1 if dest (network order) is one of ports (host order, 0 = unused). */
static __always_inline int bg_dns_port_in(__be16 dest,
					  const volatile __u16 *ports)
{
	__u32 i;

	for (i = 0; i < BG_DNS_PORTS_MAX; i++) {
		__u16 p = ports[i];

		if (p && dest == bpf_htons(p))
			return 1;
	}
	return 0;
}

/* 1 if pkt may be a DNS query by its headers: UDP, not an IP fragment (a
 * first fragment included). The port is tested apart (bg_dns_port_in). */
static __always_inline int bg_dns_l4_ok(const struct bg_pkt *pkt)
{
	return pkt->family && pkt->l4 && pkt->l4proto == IPPROTO_UDP &&
	       !pkt->frag;
}

/*
 * The UDP header of a packet judged as DNS: bg_dns_l4_ok, the whole UDP
 * header in the frame, destination port one of ports. NULL otherwise.
 * bloomgate_xdp makes it before the address judge (s->to_dns).
 */
static __always_inline struct udphdr *bg_dns_udp(struct xdp_md *ctx,
						 const struct bg_pkt *pkt,
						 const volatile __u16 *ports)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct udphdr *udp = pkt->l4;

	if (!bg_dns_l4_ok(pkt))
		return NULL;
	if ((void *)(udp + 1) > data_end || !bg_dns_port_in(udp->dest, ports))
		return NULL;
	return udp;
}

/* 8 bytes of q, lq or bg_dns_keep read as one word, at any offset (see
 * bg_dns_label_word about alignment). */
typedef __u64 __attribute__((may_alias)) bg_dns_u64;

/* bg_dns_lower on each byte of x (SWAR): ASCII A-Z to a-z, any other byte
 * unchanged. With lo a byte's low 7 bits, bit 7 of lo + 0x3f is set when lo
 * >= 'A', bit 7 of lo + 0x25 when lo > 'Z' (no carry crosses a byte: lo +
 * 0x3f <= 0xbe); a byte with bit 7 set is never a letter. */
static __always_inline __u64 bg_dns_lower64(__u64 x)
{
	__u64 lo = x & 0x7f7f7f7f7f7f7f7fULL;
	__u64 upper = ((lo + 0x3f3f3f3f3f3f3f3fULL) ^ (lo + 0x2525252525252525ULL)) &
		      ~x & 0x8080808080808080ULL;

	return x | (upper >> 2); /* 0x80 >> 2 = 0x20 */
}

/* 64 bytes 0xff, then 64 zero bytes: the 8 bytes at 63 - l + 8k are the
 * mask of word k of a label of l bytes (its l + 1 buffer bytes kept). */
static const __u8 bg_dns_keep[2 * BG_DNS_LABEL_BUF] = {
	[0 ... BG_DNS_LABEL_BUF - 1] = 0xff
};

/*
 * Word k (0..7, little endian) of the label buffer of the label whose length
 * byte l (1..63) is at p in lq: the buffer [l, label bytes lowercased, zero
 * padding] is the bytes p[0..l] followed by zeros, so word k is the 8 bytes
 * at p + 8k with the bytes past the label cleared (the next labels, or stale
 * bytes past the copied question). keep is bg_dns_keep + 63 - l: its word k
 * keeps the bytes of word k that belong to the buffer, without a branch.
 *
 * The 8-byte loads are unaligned (p is any byte of lq); the verifier allows
 * that on a map value where the architecture has efficient unaligned access
 * (x86-64, arm64) and the program is not loaded with BPF_F_STRICT_ALIGNMENT.
 */
static __always_inline __u64 bg_dns_label_word(const __u8 *p, const __u8 *keep,
					       __u32 k)
{
	return *(const bg_dns_u64 *)(p + 8 * k) &
	       *(const bg_dns_u64 *)(keep + 8 * k);
}

struct bg_dns_walk_ctx {
	struct bg_dns_scratch *s;
};

/* One label (or the root byte) of the walk checked at s->pos, its position
 * kept: 0 to go on, 1 when the walk stopped (s->status says why). */
static __always_inline int bg_dns_walk_one(struct bg_dns_scratch *s)
{
	__u32 pos = s->pos, len = s->len, l, n;

	if (pos >= len || pos >= BG_DNS_Q_COPY) {
		s->status = BG_CNT_DNS_TRUNCATED + 2;
		return 1;
	}
	l = s->q[pos & BG_DNS_Q_MASK];
	if (l & 0xc0) { /* compression pointer (11) or reserved (01, 10) */
		s->status = BG_CNT_DNS_BAD_LABEL + 2;
		return 1;
	}
	if (!l) { /* the root: the name ends here */
		s->pos = pos + 1;
		s->status = BG_DNS_DONE;
		return 1;
	}
	/* this label and at least the root byte after it */
	if (pos + l + 2 > BG_DNS_NAME_MAX) {
		s->status = BG_CNT_DNS_NAME_TOO_LONG + 2;
		return 1;
	}
	if (pos + 1 + l > len) {
		s->status = BG_CNT_DNS_TRUNCATED + 2;
		return 1;
	}
	n = s->n;
	if (n >= BG_DNS_LABELS_MAX) { /* unreachable: the name bound holds it */
		s->status = BG_CNT_DNS_NAME_TOO_LONG + 2;
		return 1;
	}
	s->lpos[n & BG_DNS_LH_MASK] = (__u8)pos;
	s->n = n + 1;
	s->pos = pos + 1 + l;
	return 0;
}

/* One bpf_loop() round of the walk: BG_DNS_WALK_STEP labels at most. Each
 * check that stops the walk returns, so the unrolled steps are one path
 * for the verifier, not a tree. 1 stops the loop. */
static long bg_dns_label_cb(__u32 idx, void *ctx)
{
	struct bg_dns_scratch *s = ((struct bg_dns_walk_ctx *)ctx)->s;
	__u32 k;

	(void)idx;
#pragma clang loop unroll(full)
	for (k = 0; k < BG_DNS_WALK_STEP; k++)
		if (bg_dns_walk_one(s))
			return 1;
	return 0;
}

/*
 * One bpf_loop() round of the suffix hashing, right to left: the suffix of
 * d = s->nsuf + 1 labels, i.e. label j = n - d (checked by the walk), its
 * hash L_j and S_j from L_j and S_{j+1}, so the suffix chain needs no pass
 * of its own. Only depths a probe reads are made: d < n (a proper suffix),
 * and some depth >= d set in the wanted mask s->want. 1 stops the loop.
 */
static long bg_dns_hash_cb(__u32 idx, void *ctx)
{
	struct bg_dns_scratch *s = ((struct bg_dns_walk_ctx *)ctx)->s;
	__u32 n = s->n, d = s->nsuf + 1, j, pos, l, k;
	__u64 seed = s->seed, w[BG_DNS_LABEL_BUF / 8], lh;
	const __u8 *p, *keep;

	(void)idx;
	if (d >= n || d > BG_DNS_SUFFIX_MAX || !(s->want >> d))
		return 1;
	j = (n - d) & BG_DNS_LH_MASK;
	pos = s->lpos[j] & BG_DNS_LW_MASK;
	p = s->lq + pos;
	l = p[0]; /* 1..63, as the walk found it (lq keeps length bytes) */
	keep = bg_dns_keep + ((BG_DNS_LABEL_MAX - l) & BG_DNS_LABEL_MAX);
#pragma clang loop unroll(full)
	for (k = 0; k < BG_DNS_LABEL_BUF / 8; k++)
		w[k] = bg_dns_label_word(p, keep, k);
	lh = bg_hash64_words64(w, seed);
	s->lh[j] = lh;
	s->suf[j] = bg_dns_suffix_hash(lh, s->suf[(j + 1) & BG_DNS_LH_MASK], seed);
	s->nsuf = d;
	return 0;
}

/*
 * The suffix hashes of the name bg_dns_parse accepted in s, for the depths
 * set in want (a subs_depths mask: bit d for the suffix of d labels; the
 * deepest set bit bounds the work), from the last label leftwards and
 * continuing where an earlier call stopped: s->suf[n - d] for every proper
 * suffix of d <= min(deepest wanted, BG_DNS_SUFFIX_MAX) labels. The block
 * probe asks for the filter's depths, the allow check then for all.
 */
static __always_inline void bg_dns_suffixes(struct bg_dns_scratch *s,
					    __u32 want)
{
	struct bg_dns_walk_ctx wctx = { .s = s };

	s->want = want;
	bpf_loop(BG_DNS_SUFFIX_MAX, bg_dns_hash_cb, &wctx, 0);
}

/*
 * E of the name in lq, qname_len wire bytes (1..BG_DNS_NAME_MAX): the bytes
 * from qname_len up to the next multiple of BG_DNS_EXACT_STRIPE are
 * cleared (stale bytes of the question or of earlier packets), then the
 * words of lq are hashed in stripes (bloomgate/dns.h, bg_dns_exact_hash).
 * The stores are 8-byte aligned: the word holding qname_len keeps its bytes
 * below it, the 3 words after it are zero.
 */
static __always_inline __u64 bg_dns_exact(struct bg_dns_scratch *s,
					  __u32 qname_len)
{
	__u64 *w = (__u64 *)s->lq;
	__u32 i = (qname_len / 8) & (BG_DNS_LQ_WORDS - 1);
	__u32 b = 8 * (qname_len % 8);

	w[i] &= ((__u64)1 << b) - 1;
	w[i + 1] = 0;
	w[i + 2] = 0;
	w[i + 3] = 0;
	return bg_dns_exact_hash(w, qname_len, s->seed);
}

/*
 * Parses pkt (from bg_parse of ctx) as a DNS query to one of ports (see
 * bg_dns_udp) and hashes its QNAME with seed into s: s->n labels, s->exact
 * its exact hash; s->suf[n] = 0 and no suffix hash yet (bg_dns_suffixes
 * makes those the probe needs); s->hdr and s->q hold the message's first
 * bytes, s->l3off/l4off/ulen/family where it is. Returns BG_DNS_QUERY, BG_DNS_NOT_DNS (see bg_dns_udp), or the
 * BG_CNT_DNS_* reason the packet is not judged by name.
 */
static __always_inline int bg_dns_parse(struct xdp_md *ctx,
					const struct bg_pkt *pkt,
					const volatile __u16 *ports, __u64 seed,
					struct bg_dns_scratch *s)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bg_dns_walk_ctx wctx = { .s = s };
	struct udphdr *udp = bg_dns_udp(ctx, pkt, ports);
	__u32 ulen, qlen, off, i, nw, flags;
	__u8 *dns;

	if (!udp)
		return BG_DNS_NOT_DNS;
	ulen = bpf_ntohs(udp->len);
	dns = (__u8 *)(udp + 1);
	if (ulen < sizeof(*udp) + BG_DNS_HDR_LEN)
		return BG_CNT_DNS_TRUNCATED;
	if ((void *)udp + ulen > data_end)
		return BG_CNT_DNS_TRUNCATED;
	if ((void *)(dns + BG_DNS_HDR_LEN) > data_end)
		return BG_CNT_DNS_TRUNCATED;
	flags = (__u32)dns[2] << 8 | dns[3];
	if (flags & 0x8000)
		return BG_CNT_DNS_RESPONSE;
	if ((flags >> 11) & 0xf)
		return BG_CNT_DNS_OPCODE;
	if (dns[4] != 0 || dns[5] != 1)
		return BG_CNT_DNS_QDCOUNT;

	s->family = pkt->family;
	/* from the tag count: the IP header pointers kept live this far cost
	 * the verifier ~80k instructions */
	s->l3off = ETH_HLEN + (__u32)pkt->vlans * sizeof(struct bg_vlan_hdr);
	s->l4off = (__u32)((long)udp - (long)data);
	s->ulen = ulen;

	/*
	 * The DNS header and at most BG_DNS_Q_COPY bytes after it, into
	 * s->hdr/s->q by one helper call at a scalar offset: from here on no
	 * packet pointer is live, so the verifier states of every parse path
	 * (VLANs, IPv4 options, IPv6 extension headers) merge instead of each
	 * walking the name on its own. The UDP length was checked against the
	 * frame.
	 */
	qlen = ulen - sizeof(*udp) - BG_DNS_HDR_LEN;
	if (qlen > BG_DNS_Q_COPY)
		qlen = BG_DNS_Q_COPY;
	off = (__u32)((long)dns - (long)data);
	if (bpf_xdp_load_bytes(ctx, off, s->hdr, BG_DNS_HDR_LEN + qlen))
		return BG_CNT_DNS_TRUNCATED;
	/* The name lowercased once, a word at a time (the label windows
	 * overlap: lowercasing each would redo up to 64 bytes a label). Bytes
	 * past qlen in the last word are stale; no label reaches them. */
	nw = (qlen + 7) / 8;
	for (i = 0; i < BG_DNS_LQ_WORDS && i < nw; i++)
		((bg_dns_u64 *)s->lq)[i] =
			bg_dns_lower64(*(const bg_dns_u64 *)(s->q + 8 * i));
	s->len = qlen;
	s->pos = 0;
	s->n = 0;
	s->status = BG_DNS_WALKING;
	s->seed = seed;
	s->qtype = 0;
	s->qclass = 0;
	s->qname_len = 0;
	s->nsuf = 0;
	s->exact = 0;

	bpf_loop(BG_DNS_WALK_ROUNDS, bg_dns_label_cb, &wctx, 0);
	if (s->status != BG_DNS_DONE) {
		if (s->status >= 2)
			return (int)(s->status - 2);
		return BG_CNT_DNS_NAME_TOO_LONG; /* rounds ran out: unreachable */
	}
	/* QTYPE and QCLASS must follow the name. */
	i = s->pos;
	s->qname_len = i;
	if (i + 4 > s->len || i + 4 > BG_DNS_Q_COPY)
		return BG_CNT_DNS_TRUNCATED;
	s->qtype = (__u16)(s->q[i & BG_DNS_Q_MASK] << 8 |
			   s->q[(i + 1) & BG_DNS_Q_MASK]);
	s->qclass = (__u16)(s->q[(i + 2) & BG_DNS_Q_MASK] << 8 |
			    s->q[(i + 3) & BG_DNS_Q_MASK]);

	/* The exact hash; the suffix chain starts from suf[n] = 0. */
	s->exact = bg_dns_exact(s, i);
	s->suf[s->n & BG_DNS_LH_MASK] = 0;
	return BG_DNS_QUERY;
}

#endif /* BLOOMGATE_BPF_DNS_H */
