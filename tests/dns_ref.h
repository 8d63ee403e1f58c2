/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The DNS query parser's userspace reference: the rules of bpf/dns.h
 * (bg_dns_parse and its label walk) written over a plain buffer, byte by
 * byte, without the datapath's copies, word-wise lowercasing and bpf_loop()
 * rounds. tests/bpf/test_dns.c checks the datapath against it (its fuzz
 * test); tests/fuzz/fuzz_dnsref.c checks it against the userspace name
 * code (user/core/wire.c, bg_name_hashes) under the sanitizers.
 */
#ifndef BLOOMGATE_TESTS_DNS_REF_H
#define BLOOMGATE_TESTS_DNS_REF_H

#include <stddef.h>
#include <string.h>

#include "bloomgate/abi.h"
#include "bloomgate/dns.h"
#include "bloomgate/hash.h"

/* Reference: the rules of bpf/dns.h written over a plain buffer. b holds
 * len bytes of a frame whose UDP header is at l4 (the caller makes sure
 * the 8 bytes of it are there: bg_dns_udp's check). Returns a
 * BG_CNT_DNS_* reason, or 0 with the exact hash in *exact, the suffix
 * hashes in suf (BG_DNS_LABELS_MAX + 1 values, [n] = 0) and n labels. */
static inline int ref_parse(const __u8 *b, size_t len, size_t l4, __u64 seed,
			    __u64 *exact, __u64 *suf, int *n)
{
	__u64 lh[BG_DNS_LABELS_MAX];
	__u8 ew[BG_DNS_EXACT_MAX] = { 0 };
	size_t ulen, mlen, pos = 12, wire = 0;
	const __u8 *m = b + l4 + 8;
	int i;

	ulen = (size_t)b[l4 + 4] << 8 | b[l4 + 5];
	if (ulen < 20 || l4 + ulen > len)
		return BG_CNT_DNS_TRUNCATED;
	mlen = ulen - 8;
	if (m[2] & 0x80)
		return BG_CNT_DNS_RESPONSE;
	if ((m[2] >> 3) & 0xf)
		return BG_CNT_DNS_OPCODE;
	if (m[4] || m[5] != 1)
		return BG_CNT_DNS_QDCOUNT;
	*n = 0;
	for (;;) {
		__u8 buf[BG_DNS_LABEL_BUF] = { 0 };
		size_t l, j;

		if (pos >= mlen)
			return BG_CNT_DNS_TRUNCATED;
		l = m[pos];
		if (l >= 64)
			return BG_CNT_DNS_BAD_LABEL;
		if (!l) {
			pos++;
			break;
		}
		if (wire + l + 2 > BG_DNS_NAME_MAX)
			return BG_CNT_DNS_NAME_TOO_LONG;
		if (pos + 1 + l > mlen)
			return BG_CNT_DNS_TRUNCATED;
		buf[0] = (__u8)l;
		for (j = 0; j < l; j++) {
			__u8 c = m[pos + 1 + j];

			buf[1 + j] = c >= 'A' && c <= 'Z' ? (__u8)(c + 32) : c;
		}
		lh[(*n)++] = bg_hash64(buf, sizeof(buf), seed);
		memcpy(ew + wire, buf, 1 + l);
		wire += 1 + l;
		pos += 1 + l;
	}
	if (pos + 4 > mlen)
		return BG_CNT_DNS_TRUNCATED;
	wire++; /* the root byte */
	*exact = bg_hash64(ew, (__u32)((wire + 31) / 32 * 32), seed);
	suf[*n] = 0;
	for (i = *n - 1; i >= 0; i--)
		suf[i] = bg_dns_suffix_hash(lh[i], suf[i + 1], seed);
	return 0;
}

#endif /* BLOOMGATE_TESTS_DNS_REF_H */
