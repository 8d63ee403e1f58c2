/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Negative answers built in place (issue 4): a listed query is turned into
 * its own NXDOMAIN (RCODE 3) or REFUSED (RCODE 5) response and sent back
 * with XDP_TX. Input: the scratch value filled by bg_dns_parse (bpf/dns.h):
 * the query's DNS header and the bytes after it, and where the query sits
 * in the frame.
 *
 * DNS message (RFC 1035 4.1.1, RFC 6891, RFC 4035):
 *   ID       kept
 *   flags    QR=1, OPCODE=0 (the query's: only QUERY is judged), AA=0,
 *            TC=0, RD copied, RA=RD (we answer as the recursive resolver
 *            the client asked for), Z=0, AD=0 (nothing was validated), CD
 *            copied (RFC 4035 3.2.2: a recursive server copies CD into
 *            the response), RCODE 3 or 5
 *   counts   QDCOUNT=1, ANCOUNT=NSCOUNT=0, ARCOUNT=1 with an OPT record
 *            below, else 0
 *   question kept byte for byte (case preserved: DNS 0x20 clients compare it)
 *   OPT      only when the query carries one: ANCOUNT=NSCOUNT=0,
 *            ARCOUNT>=1 and the record right after the question starts
 *            with the root name and TYPE 41, its 11-byte fixed part inside
 *            the message. The answer's OPT is its own: root name, TYPE 41,
 *            CLASS (UDP payload size) BG_DNS_EDNS_UDP_SIZE, TTL = extended
 *            RCODE 0, VERSION 0, DO copied from the query (RFC 3225 3: the
 *            DO bit of the query MUST be copied in the response), other Z
 *            bits 0, RDLEN 0: no options (a client cookie is not echoed; a
 *            server that does not implement cookies ignores the option,
 *            RFC 7873 5.2.1). A query whose OPT VERSION is not 0 is
 *            answered BADVERS instead (RFC 6891 6.1.3: extended RCODE 1,
 *            header RCODE 0, VERSION 0), as a resolver implementing
 *            version 0 does.
 *   Everything after the question (or after the OPT fixed part) is cut:
 *   the answer is never longer than the query.
 *
 * Frame: Ethernet MACs swapped, VLAN tags kept as they are. IPv4: addresses
 * swapped, total length, TTL 64, DF kept (the query is not a fragment, so
 * MF and the offset are 0; the reserved bit is cleared), ID, DSCP and
 * options kept, ECN cleared (the answer does not come from an ECN-capable
 * transport), header checksum recomputed. IPv6: addresses swapped, payload
 * length, hop limit 64, ECN cleared, traffic class and flow label kept;
 * a query with extension headers is NOT answered (the caller drops it):
 * echoing a routing header, AH or a Shim6 header back is not safe, and
 * such queries are rare. UDP: ports swapped, length, checksum over the
 * pseudo-header (both families; IPv6 requires it, RFC 8200 8.1; 0 sent as
 * 0xffff). Trailing bytes (the rest of the query, Ethernet padding) are
 * trimmed with bpf_xdp_adjust_tail().
 *
 * Every byte of the answer is built in the scratch value first and written
 * with bpf_xdp_store_bytes() at scalar offsets (no packet pointer, so the
 * verifier states stay merged). Any failure returns -1 before or while
 * writing: the caller drops the packet, a half-built answer is never sent.
 */
#ifndef BLOOMGATE_BPF_DNS_REPLY_H
#define BLOOMGATE_BPF_DNS_REPLY_H

#include <linux/bpf.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "dns.h"

#define BG_DNS_RCODE_NXDOMAIN 3
#define BG_DNS_RCODE_REFUSED 5
/* BADVERS is 16: the OPT record's extended RCODE holds its upper 8 bits. */
#define BG_DNS_EXT_RCODE_BADVERS 1
#define BG_DNS_EDNS_UDP_SIZE 1232 /* the DNS Flag Day 2020 figure */
/* The longest answer: header, the longest question and an OPT record. */
#define BG_DNS_REPLY_MAX (BG_DNS_HDR_LEN + BG_DNS_Q_COPY)
/* Header offsets an answer can have: Ethernet, two VLAN tags, IPv4 with
 * options (60) or IPv6 (40). */
#define BG_DNS_L3_MAX (14 + 4 * BG_VLAN_MAX)
#define BG_DNS_L4_MAX (BG_DNS_L3_MAX + 60)

#define BG_QB(s, i) ((s)->q[(i) & BG_DNS_Q_MASK])

/* Ones' complement fold of a sum of 16-bit words to 16 bits. */
static __always_inline __u32 bg_csum_fold(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u32)sum;
}

/*
 * Turns the query message in s->hdr/s->q into the answer with rcode, in
 * place, and zeroes the 3 bytes after it (the checksum sums whole 32-bit
 * words). Returns the answer's length, or -1.
 */
static __always_inline int bg_dns_reply_msg(struct bg_dns_scratch *s,
					    __u32 rcode)
{
	__u32 qsz = s->qname_len + 4; /* QNAME, QTYPE, QCLASS */
	__u32 qf = (__u32)s->hdr[2] << 8 | s->hdr[3];
	__u32 opt = 0, ext = 0, dobit = 0, flags, o;

	if (s->qname_len < 1 || s->qname_len > BG_DNS_NAME_MAX ||
	    qsz > s->len)
		return -1;
	/* clang knows qsz < 512 from the test above and would drop the masks
	 * of BG_QB; the verifier does not follow it there. */
	asm volatile("" : "+r"(qsz));
	if (!s->hdr[6] && !s->hdr[7] && !s->hdr[8] && !s->hdr[9] &&
	    (s->hdr[10] || s->hdr[11]) && qsz + BG_DNS_OPT_LEN <= s->len &&
	    BG_QB(s, qsz) == 0 && BG_QB(s, qsz + 1) == 0 &&
	    BG_QB(s, qsz + 2) == BG_DNS_TYPE_OPT) {
		opt = 1;
		dobit = BG_QB(s, qsz + 7) & 0x80;
		if (BG_QB(s, qsz + 6)) { /* VERSION > 0: BADVERS */
			ext = BG_DNS_EXT_RCODE_BADVERS;
			rcode = 0;
		}
	}
	flags = 0x8000 | (qf & 0x0100) | (qf & 0x0100) >> 1 | (qf & 0x0010) |
		(rcode & 0xf);
	/* ID (hdr[0..1]) kept */
	s->hdr[2] = (__u8)(flags >> 8);
	s->hdr[3] = (__u8)flags;
	s->hdr[4] = 0; /* QDCOUNT 1 */
	s->hdr[5] = 1;
	s->hdr[6] = 0; /* ANCOUNT 0 */
	s->hdr[7] = 0;
	s->hdr[8] = 0; /* NSCOUNT 0 */
	s->hdr[9] = 0;
	s->hdr[10] = 0; /* ARCOUNT 0 or 1 */
	s->hdr[11] = (__u8)opt;
	o = qsz;
	if (opt) {
		BG_QB(s, o) = 0; /* root name */
		BG_QB(s, o + 1) = 0; /* TYPE OPT */
		BG_QB(s, o + 2) = BG_DNS_TYPE_OPT;
		BG_QB(s, o + 3) = BG_DNS_EDNS_UDP_SIZE >> 8; /* CLASS */
		BG_QB(s, o + 4) = BG_DNS_EDNS_UDP_SIZE & 0xff;
		BG_QB(s, o + 5) = (__u8)ext; /* TTL: extended RCODE */
		BG_QB(s, o + 6) = 0; /* VERSION */
		BG_QB(s, o + 7) = (__u8)dobit; /* DO, Z */
		BG_QB(s, o + 8) = 0; /* Z */
		BG_QB(s, o + 9) = 0; /* RDLEN */
		BG_QB(s, o + 10) = 0;
		o += BG_DNS_OPT_LEN;
	}
	BG_QB(s, o) = 0;
	BG_QB(s, o + 1) = 0;
	BG_QB(s, o + 2) = 0;
	return (int)(BG_DNS_HDR_LEN + o);
}

static __always_inline void bg_swap_bytes(__u8 *a, __u8 *b, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++) {
		__u8 t = a[i];

		a[i] = b[i];
		b[i] = t;
	}
}

/*
 * Rewrites the frame in ctx into the answer to the query bg_dns_parse left
 * in s, RCODE rcode (3 or 5). 0: the frame is the answer, return XDP_TX;
 * -1: not answered (IPv6 extension headers, or a helper failed), drop.
 */
static __always_inline int bg_dns_answer(struct xdp_md *ctx,
					 struct bg_dns_scratch *s, __u32 rcode)
{
	/* 64-bit lengths: clang 14 bounds-checks a zero-extended copy of a
	 * 32-bit value and hands the helper the unchecked register */
	__u64 l3 = s->l3off, l4 = s->l4off, hlen, rlen, ulen, padded;
	__u32 cs;
	__s64 sum, delta;
	__u64 t;
	int r;

	if (l3 < 14 || l3 > BG_DNS_L3_MAX || l4 <= l3 || l4 > BG_DNS_L4_MAX)
		return -1;
	if (s->family == BG_KEY_IPV4) {
		/* 20..60 in steps of 4; the verifier sees 20 + (x & 0x3c), at
		 * most 80 (the size of s->ip), and the test keeps it honest */
		hlen = 20 + ((l4 - l3 - 20) & 0x3c);
		asm volatile("" : "+r"(hlen));
		if (hlen != l4 - l3 || hlen > 60)
			return -1;
	} else if (s->family == BG_KEY_IPV6) {
		hlen = 40;
		if (l4 - l3 != hlen) /* extension headers: not answered */
			return -1;
	} else {
		return -1;
	}

	r = bg_dns_reply_msg(s, rcode);
	if (r < BG_DNS_HDR_LEN || r > BG_DNS_REPLY_MAX)
		return -1;
	rlen = (__u64)r;
	if (rlen + 8 > s->ulen) /* never longer than the query */
		return -1;
	ulen = rlen + 8;
	padded = (rlen + 3) & ~3U;
	/* the checks below are on the registers the helpers get */
	asm volatile("" : "+r"(padded), "+r"(rlen));
	if (padded < 16 || padded > BG_DNS_REPLY_MAX + 3 || rlen < 12 ||
	    rlen > BG_DNS_REPLY_MAX)
		return -1;

	/* Headers into the scratch value. */
	if (bpf_xdp_load_bytes(ctx, 0, s->eth, sizeof(s->eth)) ||
	    bpf_xdp_load_bytes(ctx, l3, s->ip, hlen) ||
	    bpf_xdp_load_bytes(ctx, l4, s->udp, sizeof(s->udp)))
		return -1;
	bg_swap_bytes(s->eth, s->eth + 6, 6);
	if (s->family == BG_KEY_IPV4) {
		__u64 tot = hlen + ulen;

		s->ip[1] &= 0xfc; /* ECN: not ECN-capable */
		s->ip[2] = (__u8)(tot >> 8);
		s->ip[3] = (__u8)tot;
		s->ip[6] &= 0x40; /* DF kept; MF, offset, reserved bit 0 */
		s->ip[7] = 0;
		s->ip[8] = 64; /* TTL */
		s->ip[10] = 0; /* checksum */
		s->ip[11] = 0;
		bg_swap_bytes(s->ip + 12, s->ip + 16, 4);
		sum = bpf_csum_diff(NULL, 0, (__be32 *)s->ip, hlen, 0);
		if (sum < 0)
			return -1;
		cs = ~bg_csum_fold((__u64)sum) & 0xffff;
		__builtin_memcpy(s->ip + 10, &cs, 2); /* summed in memory order */
		/* pseudo-header addresses */
		sum = bpf_csum_diff(NULL, 0, (__be32 *)(s->ip + 12), 8, 0);
	} else {
		s->ip[1] &= 0xcf; /* ECN: not ECN-capable */
		s->ip[4] = (__u8)(ulen >> 8); /* payload length */
		s->ip[5] = (__u8)ulen;
		s->ip[7] = 64; /* hop limit */
		bg_swap_bytes(s->ip + 8, s->ip + 24, 16);
		sum = bpf_csum_diff(NULL, 0, (__be32 *)(s->ip + 8), 32, 0);
	}
	if (sum < 0)
		return -1;
	bg_swap_bytes(s->udp, s->udp + 2, 2); /* ports */
	s->udp[4] = (__u8)(ulen >> 8);
	s->udp[5] = (__u8)ulen;
	s->udp[6] = 0;
	s->udp[7] = 0;
	sum = bpf_csum_diff(NULL, 0, (__be32 *)s->udp, sizeof(s->udp), (__u32)sum);
	if (sum < 0)
		return -1;
	sum = bpf_csum_diff(NULL, 0, (__be32 *)s->hdr, padded, (__u32)sum);
	if (sum < 0)
		return -1;
	/* the rest of the pseudo-header: protocol and UDP length, as the
	 * big-endian 16-bit words they are in memory */
	t = (__u64)sum + bpf_htons(IPPROTO_UDP) + bpf_htons((__u16)ulen);
	cs = ~bg_csum_fold(t) & 0xffff;
	if (!cs)
		cs = 0xffff; /* 0 means "no checksum" */
	__builtin_memcpy(s->udp + 6, &cs, 2);

	/* Trim, then write: every write lands inside the new frame. */
	delta = (__s64)(l4 + ulen) - (__s64)bpf_xdp_get_buff_len(ctx);
	if (delta > 0)
		return -1;
	if (delta && bpf_xdp_adjust_tail(ctx, (int)delta))
		return -1;
	if (bpf_xdp_store_bytes(ctx, 0, s->eth, sizeof(s->eth)) ||
	    bpf_xdp_store_bytes(ctx, l3, s->ip, hlen) ||
	    bpf_xdp_store_bytes(ctx, l4, s->udp, sizeof(s->udp)) ||
	    bpf_xdp_store_bytes(ctx, l4 + 8, s->hdr, rlen))
		return -1;
	return 0;
}

#endif /* BLOOMGATE_BPF_DNS_REPLY_H */
