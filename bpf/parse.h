/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one packet parser: Ethernet, up to BG_VLAN_MAX VLAN tags (802.1Q and
 * 802.1ad), IPv4 (IHL checked, options skipped) and IPv6 (extension-header
 * chain bounded by BG_IPV6_EXT_MAX). Every length is checked against
 * data_end before use.
 *
 * The result says which addresses can be trusted (family != 0) and, apart
 * from that, whether anything about the packet was malformed (malformed != 0
 * holds a BG_MAL_* reason + 1). The two are independent on purpose: an IPv6
 * packet whose extension chain is too long still has a valid fixed header, so
 * its addresses are judged - a malformed tail must not be a way around the
 * blocklist. An IPv4 header with IHL < 5 or a truncated IP header gives no
 * trusted addresses; the kernel drops such packets itself. A frame left with
 * family 0 and a malformed reason is "unparsed": bloomgate_xdp passes or
 * drops it as the attachment says (cfg_unparsed, `attach --unparsed`).
 */
#ifndef BLOOMGATE_PARSE_H
#define BLOOMGATE_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>

#include "bloomgate/abi.h"

#ifndef ETH_P_8021AD
#define ETH_P_8021AD 0x88A8
#endif
/* Cold paths (malformed frames, missing maps): clang lays them out after
 * the hot path, which keeps the code a plain IPv4 or IPv6 packet runs
 * through in fewer instruction-cache lines. */
#define bg_unlikely(x) __builtin_expect(!!(x), 0)

#define BG_IP_MF 0x2000
#define BG_IP_OFFSET 0x1fff

struct bg_vlan_hdr {
	__be16 tci;
	__be16 proto;
};

struct bg_pkt {
	__u8 family; /* BG_KEY_IPV4 / BG_KEY_IPV6, 0: no trusted addresses */
	__u8 malformed; /* BG_MAL_* + 1, 0: well formed */
	__u8 frag; /* 1: an IP fragment */
	__u8 vlans; /* VLAN tags seen */
	__u8 l4proto; /* upper-layer protocol, valid when l4 != NULL */
	__u8 pad[3];
	struct iphdr *ip4; /* valid when family == BG_KEY_IPV4 */
	struct ipv6hdr *ip6; /* valid when family == BG_KEY_IPV6 */
	void *l4; /* start of the upper-layer header, NULL if unknown */
};

static __always_inline int bg_ipv6_is_ext(__u8 nh)
{
	return nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING ||
	       nh == IPPROTO_FRAGMENT || nh == IPPROTO_DSTOPTS ||
	       nh == IPPROTO_AH || nh == 135 /* Mobility */ ||
	       nh == 139 /* HIP */ || nh == 140 /* Shim6 */;
}

static __always_inline void bg_parse_ipv6_ext(struct bg_pkt *pkt, void *pos,
					      void *data_end, __u8 nh)
{
	int i;

	/* Each round consumes one extension header; the bound is a named
	 * constant so the verifier sees a finite loop. */
	for (i = 0; i < BG_IPV6_EXT_MAX; i++) {
		__u8 *eh = pos;
		__u32 len;

		if (!bg_ipv6_is_ext(nh)) {
			pkt->l4proto = nh;
			pkt->l4 = pos;
			return;
		}
		if ((void *)(eh + 8) > data_end) { /* every ext is >= 8 bytes */
			pkt->malformed = BG_MAL_TRUNC_IPV6_EXT + 1;
			return;
		}
		if (nh == IPPROTO_FRAGMENT) {
			pkt->frag = 1;
			len = 8;
			/* Non-first fragments carry no upper-layer header. */
			if ((((__u16)eh[2] << 8 | eh[3]) & 0xfff8) != 0) {
				pkt->l4 = NULL;
				pkt->l4proto = eh[0];
				return;
			}
		} else if (nh == IPPROTO_AH) {
			len = ((__u32)eh[1] + 2) * 4;
		} else {
			len = ((__u32)eh[1] + 1) * 8;
		}
		nh = eh[0];
		pos = (void *)eh + len;
		if (pos > data_end) {
			pkt->malformed = BG_MAL_TRUNC_IPV6_EXT + 1;
			return;
		}
	}
	if (bg_ipv6_is_ext(nh)) {
		pkt->malformed = BG_MAL_IPV6_EXT_TOO_LONG + 1;
		return;
	}
	pkt->l4proto = nh;
	pkt->l4 = pos;
}

/* Parses the frame in ctx into pkt. Never fails: see pkt->family/malformed. */
static __always_inline void bg_parse(struct xdp_md *ctx, struct bg_pkt *pkt)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	void *pos = eth + 1;
	__u16 proto;
	int i;

	__builtin_memset(pkt, 0, sizeof(*pkt));
	if (bg_unlikely(pos > data_end)) {
		pkt->malformed = BG_MAL_TRUNC_ETH + 1;
		return;
	}
	proto = eth->h_proto;

	for (i = 0; i < BG_VLAN_MAX; i++) {
		struct bg_vlan_hdr *vh = pos;

		if (__builtin_expect(proto != bpf_htons(ETH_P_8021Q) &&
				     proto != bpf_htons(ETH_P_8021AD), 1))
			break;
		if (bg_unlikely((void *)(vh + 1) > data_end)) {
			pkt->malformed = BG_MAL_TRUNC_VLAN + 1;
			return;
		}
		proto = vh->proto;
		pos = vh + 1;
		pkt->vlans++;
	}
	if (bg_unlikely(proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD))) {
		pkt->malformed = BG_MAL_VLAN_TOO_DEEP + 1;
		return;
	}

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = pos;
		__u32 hlen;

		if (bg_unlikely((void *)(ip + 1) > data_end)) {
			pkt->malformed = BG_MAL_TRUNC_IPV4 + 1;
			return;
		}
		if (bg_unlikely(ip->version != 4)) {
			pkt->malformed = BG_MAL_BAD_IPV4_VERSION + 1;
			return;
		}
		hlen = (__u32)ip->ihl * 4;
		if (bg_unlikely(hlen < sizeof(*ip))) {
			pkt->malformed = BG_MAL_BAD_IPV4_IHL + 1;
			return;
		}
		if (bg_unlikely(pos + hlen > data_end)) {
			pkt->malformed = BG_MAL_TRUNC_IPV4 + 1;
			return;
		}
		pkt->family = BG_KEY_IPV4;
		pkt->ip4 = ip;
		pkt->l4proto = ip->protocol;
		if (ip->frag_off & bpf_htons(BG_IP_MF | BG_IP_OFFSET))
			pkt->frag = 1;
		/* Non-first fragments carry no upper-layer header. */
		if (!(ip->frag_off & bpf_htons(BG_IP_OFFSET)))
			pkt->l4 = pos + hlen;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = pos;

		if (bg_unlikely((void *)(ip6 + 1) > data_end)) {
			pkt->malformed = BG_MAL_TRUNC_IPV6 + 1;
			return;
		}
		if (bg_unlikely(ip6->version != 6)) {
			pkt->malformed = BG_MAL_BAD_IPV6_VERSION + 1;
			return;
		}
		pkt->family = BG_KEY_IPV6;
		pkt->ip6 = ip6;
		bg_parse_ipv6_ext(pkt, ip6 + 1, data_end, ip6->nexthdr);
	}
}

#endif /* BLOOMGATE_PARSE_H */
