/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DNS query parser for XDP (issue 4), on top of the one packet parser
 * (bpf/parse.h): UDP to the DNS port, the 12-byte DNS header, then the
 * question's QNAME label by label, hashed as bloomgate/dns.h defines.
 *
 * A query is QR=0, OPCODE=0 (QUERY), QDCOUNT=1; ANCOUNT, NSCOUNT and
 * ARCOUNT are not looked at (ARCOUNT is 1 with EDNS). The message is the
 * UDP payload as the UDP length says; a UDP length over what the frame
 * holds, or under a DNS header, is a truncated message (the kernel's UDP
 * stack would drop it too), whichever byte is missing.
 *
 * Verifier cost is kept flat:
 *  - the question (up to BG_DNS_Q_COPY bytes) is copied from the packet into
 *    a per-CPU scratch map value by one bpf_xdp_load_bytes() at a scalar
 *    offset, so no packet pointer is live afterwards and the verifier
 *    states of every parse path merge (a byte loop over packet pointers
 *    ran into the 1M limit: each exit carried a different packet range);
 *  - the label walk runs in bpf_loop(): its state (position, labels) lives
 *    in the scratch value, so the callback is verified as one body, not
 *    unrolled 127 times;
 *  - each label is copied into a zero-padded 64-byte buffer with branch-free
 *    lowercasing and masking, then hashed at the constant length 64.
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
/* Question bytes ever needed: the longest name and QTYPE, QCLASS. */
#define BG_DNS_Q_COPY (BG_DNS_NAME_MAX + 4)
#define BG_DNS_Q_SIZE 512 /* power of two >= BG_DNS_Q_COPY + 64 */
#define BG_DNS_Q_MASK (BG_DNS_Q_SIZE - 1)
#define BG_DNS_LH_SIZE 128 /* >= BG_DNS_LABELS_MAX + 1, power of two */
#define BG_DNS_LH_MASK (BG_DNS_LH_SIZE - 1)

/* Walk status in the scratch value. */
#define BG_DNS_WALKING 0
#define BG_DNS_DONE 1
/* otherwise: a BG_CNT_DNS_* reason + 2 */

/* Per-CPU scratch: the value of a PERCPU_ARRAY with one element. */
struct bg_dns_scratch {
	__u8 q[BG_DNS_Q_SIZE]; /* question bytes copied from the packet */
	__u8 lbuf[BG_DNS_LABEL_BUF]; /* one label: wire form, lowercased */
	__u64 lh[BG_DNS_LH_SIZE]; /* label hashes L_1..L_n, left to right */
	__u64 suf[BG_DNS_LH_SIZE]; /* suffix hashes S_1..S_n, suf[n] = 0 */
	__u64 seed;
	__u32 len; /* question bytes in q */
	__u32 pos; /* walk position in q */
	__u32 n; /* labels */
	__u32 status; /* BG_DNS_WALKING, BG_DNS_DONE or a reason + 2 */
	__u16 qtype, qclass; /* host order */
	__u32 pad;
};

/* Parse results besides 0 (a query) and a BG_CNT_DNS_* reason (> 0). */
#define BG_DNS_QUERY 0
#define BG_DNS_NOT_DNS (-1) /* not UDP to the port: not ours */

struct bg_dns_walk_ctx {
	struct bg_dns_scratch *s;
};

/* One bpf_loop() round: one label (or the root byte). 1 stops the loop. */
static long bg_dns_label_cb(__u32 idx, void *ctx)
{
	struct bg_dns_scratch *s = ((struct bg_dns_walk_ctx *)ctx)->s;
	__u32 pos = s->pos, len = s->len, l, lv, j, n;

	(void)idx;
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
	s->lbuf[0] = (__u8)l;
	lv = l;
	asm volatile("" : "+r"(lv)); /* see keep below */
	for (j = 0; j < BG_DNS_LABEL_MAX; j++) {
		__u32 c = s->q[(pos + 1 + j) & BG_DNS_Q_MASK];
		__u32 keep = (j - lv) >> 31; /* 1 when j < l (both < 64) */

		/* l and keep opaque to clang, or it turns the mask back into a
		 * branch on l and the verifier walks O(63^2) paths a label. */
		asm volatile("" : "+r"(keep));
		s->lbuf[1 + j] = (__u8)(bg_dns_lower(c) & (0 - keep));
	}
	s->lh[n & BG_DNS_LH_MASK] = bg_dns_label_hash(s->lbuf, s->seed);
	s->n = n + 1;
	s->pos = pos + 1 + l;
	return 0;
}

/* One bpf_loop() round of the suffix chain, right to left. */
static long bg_dns_suffix_cb(__u32 idx, void *ctx)
{
	struct bg_dns_scratch *s = ((struct bg_dns_walk_ctx *)ctx)->s;
	__u32 n = s->n, j;

	if (idx >= n)
		return 1;
	j = n - 1 - idx;
	s->suf[j & BG_DNS_LH_MASK] =
		bg_dns_suffix_hash(s->lh[j & BG_DNS_LH_MASK],
				   s->suf[(j + 1) & BG_DNS_LH_MASK], s->seed);
	return 0;
}

/*
 * Parses pkt (from bg_parse of ctx) as a DNS query to UDP port `port` and
 * hashes its QNAME with seed into s: s->n labels, s->lh[] label hashes,
 * s->suf[] suffix hashes (s->suf[0] the whole name). Returns BG_DNS_QUERY,
 * BG_DNS_NOT_DNS (not UDP to the port, or the UDP header is not all there),
 * or the BG_CNT_DNS_* reason the packet is not judged by name.
 */
static __always_inline int bg_dns_parse(struct xdp_md *ctx,
					const struct bg_pkt *pkt, __u16 port,
					__u64 seed, struct bg_dns_scratch *s)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bg_dns_walk_ctx wctx = { .s = s };
	struct udphdr *udp = pkt->l4;
	__u32 ulen, qlen, qoff, i, flags;
	__u8 *dns;

	if (!udp || pkt->l4proto != IPPROTO_UDP)
		return BG_DNS_NOT_DNS;
	if ((void *)(udp + 1) > data_end || udp->dest != bpf_htons(port))
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

	/*
	 * The question, at most BG_DNS_Q_COPY bytes of it, into s->q by one
	 * helper call at a scalar offset: from here on no packet pointer is
	 * live, so the verifier states of every parse path (VLANs, IPv4
	 * options, IPv6 extension headers) merge instead of each walking the
	 * name on its own. The UDP length was checked against the frame.
	 */
	qlen = ulen - sizeof(*udp) - BG_DNS_HDR_LEN;
	if (qlen > BG_DNS_Q_COPY)
		qlen = BG_DNS_Q_COPY;
	qoff = (__u32)((long)(dns + BG_DNS_HDR_LEN) - (long)data);
	if (qlen && bpf_xdp_load_bytes(ctx, qoff, s->q, qlen))
		return BG_CNT_DNS_TRUNCATED;
	s->len = qlen;
	s->pos = 0;
	s->n = 0;
	s->status = BG_DNS_WALKING;
	s->seed = seed;
	s->qtype = 0;
	s->qclass = 0;

	bpf_loop(BG_DNS_LABELS_MAX + 1, bg_dns_label_cb, &wctx, 0);
	if (s->status != BG_DNS_DONE) {
		if (s->status >= 2)
			return (int)(s->status - 2);
		return BG_CNT_DNS_NAME_TOO_LONG; /* rounds ran out: unreachable */
	}
	/* QTYPE and QCLASS must follow the name. */
	i = s->pos;
	if (i + 4 > s->len || i + 4 > BG_DNS_Q_COPY)
		return BG_CNT_DNS_TRUNCATED;
	s->qtype = (__u16)(s->q[i & BG_DNS_Q_MASK] << 8 |
			   s->q[(i + 1) & BG_DNS_Q_MASK]);
	s->qclass = (__u16)(s->q[(i + 2) & BG_DNS_Q_MASK] << 8 |
			    s->q[(i + 3) & BG_DNS_Q_MASK]);

	/* The suffix chain, right to left: suf[n] = 0. */
	s->suf[s->n & BG_DNS_LH_MASK] = 0;
	bpf_loop(BG_DNS_LABELS_MAX, bg_dns_suffix_cb, &wctx, 0);
	return BG_DNS_QUERY;
}

#endif /* BLOOMGATE_BPF_DNS_H */
