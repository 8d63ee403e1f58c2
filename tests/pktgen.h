/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Packet builder for tests and benchmarks: Ethernet, VLAN tags, IPv4 (with
 * options), IPv6 (with extension headers), UDP, payload. Header-only; every
 * field of a built packet can be changed afterwards through the offsets in
 * struct pkt.
 */
#ifndef BLOOMGATE_TESTS_PKTGEN_H
#define BLOOMGATE_TESTS_PKTGEN_H

#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#define PKT_MAX 2048

struct pkt {
	uint8_t buf[PKT_MAX];
	size_t len;
	size_t l3; /* offset of the IP header */
	size_t l4; /* offset of the UDP header */
};

struct pkt_spec {
	int family; /* AF_INET or AF_INET6; 0: raw ethertype below */
	uint16_t ethertype; /* when family == 0 */
	int vlans; /* VLAN tags to push (0..4) */
	uint16_t vlan_tpid[4]; /* 0: 802.1Q (0x8100) */
	const char *src, *dst; /* addresses in text form */
	int ihl; /* IPv4 header length in 32-bit words; 0: 5 */
	uint16_t frag_off; /* IPv4 frag_off field, host order (flags|offset) */
	int ext_hdrs; /* IPv6: number of 8-byte destination-options headers */
	int frag6; /* IPv6: add a fragment header; >1: non-first fragment */
	uint16_t sport, dport;
	size_t payload; /* UDP payload bytes */
};

static inline uint16_t pkt_csum(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *p = data;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/* Builds the packet described by s into p. Returns 0, or -1 on bad spec. */
static inline int pkt_build(struct pkt *p, const struct pkt_spec *s)
{
	static const uint8_t dmac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	static const uint8_t smac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	uint8_t *b = p->buf;
	size_t off = 12;
	uint8_t nexthdr;
	int i;

	memset(p, 0, sizeof(*p));
	memcpy(b, dmac, 6);
	memcpy(b + 6, smac, 6);
	for (i = 0; i < s->vlans && i < 4; i++) {
		uint16_t tpid = s->vlan_tpid[i] ? s->vlan_tpid[i] : ETH_P_8021Q;

		b[off] = tpid >> 8;
		b[off + 1] = tpid & 0xff;
		b[off + 2] = 0;
		b[off + 3] = (uint8_t)(10 + i); /* VLAN id */
		off += 4;
	}
	if (s->family == AF_INET) {
		/* Headers are built in aligned locals and copied in: frame
		 * offsets (14, 18, 22) are not aligned for the structs. */
		struct iphdr ip;
		int ihl = s->ihl ? s->ihl : 5;
		size_t hlen = (size_t)(ihl < 5 ? 5 : ihl) * 4;

		b[off] = ETH_P_IP >> 8;
		b[off + 1] = ETH_P_IP & 0xff;
		off += 2;
		p->l3 = off;
		memset(&ip, 0, sizeof(ip));
		ip.version = 4;
		ip.ihl = (unsigned)ihl & 0xf;
		ip.ttl = 64;
		ip.protocol = IPPROTO_UDP;
		ip.frag_off = htons(s->frag_off);
		if (inet_pton(AF_INET, s->src, &ip.saddr) != 1 ||
		    inet_pton(AF_INET, s->dst, &ip.daddr) != 1)
			return -1;
		ip.tot_len = htons((uint16_t)(hlen + 8 + s->payload));
		memcpy(b + off, &ip, sizeof(ip));
		/* Options: NOPs, then End of options list. */
		memset(b + off + 20, 1, hlen - 20);
		if (hlen > 20)
			b[off + hlen - 1] = 0;
		{
			uint16_t sum = pkt_csum(b + off, hlen, 0);

			memcpy(b + off + offsetof(struct iphdr, check), &sum, 2);
		}
		off += hlen;
		p->l4 = off;
	} else if (s->family == AF_INET6) {
		struct ipv6hdr ip6;
		size_t l3;

		b[off] = ETH_P_IPV6 >> 8;
		b[off + 1] = ETH_P_IPV6 & 0xff;
		off += 2;
		p->l3 = l3 = off;
		memset(&ip6, 0, sizeof(ip6));
		ip6.version = 6;
		ip6.hop_limit = 64;
		if (inet_pton(AF_INET6, s->src, &ip6.saddr) != 1 ||
		    inet_pton(AF_INET6, s->dst, &ip6.daddr) != 1)
			return -1;
		off += sizeof(ip6);
		nexthdr = s->ext_hdrs || s->frag6 ? IPPROTO_DSTOPTS : IPPROTO_UDP;
		if (!s->ext_hdrs && s->frag6)
			nexthdr = IPPROTO_FRAGMENT;
		ip6.nexthdr = nexthdr;
		for (i = 0; i < s->ext_hdrs; i++) {
			int last = i == s->ext_hdrs - 1;

			b[off] = last ? (s->frag6 ? IPPROTO_FRAGMENT : IPPROTO_UDP) :
					IPPROTO_DSTOPTS;
			b[off + 1] = 0; /* 8 bytes */
			b[off + 2] = 1; /* PadN, 4 bytes of padding */
			b[off + 3] = 4;
			off += 8;
		}
		if (s->frag6) {
			uint16_t fo = (uint16_t)((s->frag6 > 1 ? 185 : 0) << 3 | 1);

			b[off] = IPPROTO_UDP;
			b[off + 2] = fo >> 8;
			b[off + 3] = fo & 0xff;
			b[off + 7] = 42; /* identification */
			off += 8;
		}
		p->l4 = off;
		ip6.payload_len = htons((uint16_t)(off - l3 - sizeof(ip6) + 8 +
						   s->payload));
		memcpy(b + l3, &ip6, sizeof(ip6));
	} else {
		b[off] = s->ethertype >> 8;
		b[off + 1] = s->ethertype & 0xff;
		off += 2;
		p->l3 = p->l4 = off;
		memset(b + off, 0xab, s->payload);
		p->len = off + s->payload;
		return 0;
	}
	{
		struct udphdr udp;

		memset(&udp, 0, sizeof(udp));
		udp.source = htons(s->sport ? s->sport : 40000);
		udp.dest = htons(s->dport ? s->dport : 9);
		udp.len = htons((uint16_t)(8 + s->payload));
		memcpy(b + off, &udp, sizeof(udp));
		off += 8;
		memset(b + off, 0x5a, s->payload);
		off += s->payload;
	}
	p->len = off;
	return off <= PKT_MAX ? 0 : -1;
}

#endif
