// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the DNS query parser's userspace reference (ref_parse,
 * tests/dns_ref.h: the rules of bpf/dns.h over a plain buffer, test_dns's
 * oracle for the datapath). The input is a UDP header and what follows it
 * (l4 = 0), at most a frame's 1500 bytes; ASan and UBSan catch a read past
 * it. Differential checks, abort() on a violation:
 *  - a rejected packet has one of the BG_CNT_DNS_* reasons, and the header
 *    reasons are the ones the header's bytes say;
 *  - an accepted query's QNAME lies in the message, each label 1..63 bytes,
 *    at most 255 bytes in wire form, n labels; user/core/wire.c prints it
 *    (bg_name_from_wire) with n labels ("." for the root);
 *  - its hashes are the builder's: for a name of plain characters (letters,
 *    digits, '-', '_': printed as they are) bg_name_hashes of that text,
 *    and for any name without a '.' or NUL byte in a label bg_name_hashes
 *    of its labels joined by '.', give the same exact hash, label count
 *    and suffix hashes suf[0..n]; whatever the bytes, the exact hash is
 *    bg_dns_exact_hash over the lowercased wire words (the datapath's way);
 *  - the name's letters in the other case give the same result.
 * The seed corpus (tests/fuzz/corpus/dnsref): queries (one label, 10
 * labels, a 255-byte name, uppercase, an EDNS OPT record, the root), a
 * response, opcode 1, QDCOUNT 2, a compression pointer, a truncated name,
 * a UDP length past the data, a 256-byte name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomgate/dns.h"
#include "dns_ref.h"
#include "core/wire.h"

#define FRAME_MAX 1500
#define UDP_HLEN 8
#define QNAME_OFF (UDP_HLEN + 12) /* after the UDP and DNS headers */
#define SEED 0x5eed5eed12345678ULL

static int plain_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* The reason the header alone gives (in bg_dns_parse's order), or 0 when
 * the header is a query's and the name decides. */
static int header_reason(const uint8_t *d, size_t size)
{
	size_t ulen = (size_t)d[4] << 8 | d[5];

	if (ulen < UDP_HLEN + 12 || ulen > size)
		return BG_CNT_DNS_TRUNCATED;
	if (d[UDP_HLEN + 2] & 0x80)
		return BG_CNT_DNS_RESPONSE;
	if ((d[UDP_HLEN + 2] >> 3) & 0xf)
		return BG_CNT_DNS_OPCODE;
	if (d[UDP_HLEN + 4] || d[UDP_HLEN + 5] != 1)
		return BG_CNT_DNS_QDCOUNT;
	return 0;
}

static void check_same(const __u64 *suf, int n, __u64 exact, const char *text)
{
	__u64 e2, s2[BG_DNS_LABELS_MAX + 1];
	int n2, i;

	if (bg_name_hashes(text, SEED, &e2, s2, &n2))
		abort(); /* a name the parser accepts is a legal name */
	if (n2 != n || e2 != exact)
		abort();
	for (i = 0; i <= n; i++)
		if (s2[i] != suf[i])
			abort();
}

/* An accepted query: its name against the userspace name code. */
static void check_query(const uint8_t *d, size_t size, __u64 exact,
			const __u64 *suf, int n)
{
	__u64 words[BG_DNS_EXACT_MAX / 8] = { 0 };
	size_t ulen = (size_t)d[4] << 8 | d[5], i = QNAME_OFF, wl, o = 0;
	const uint8_t *name = d + QNAME_OFF;
	char text[BG_NAME_TEXT_MAX], raw[BG_DNS_NAME_MAX + 1];
	int labels = 0, plain = 1, rawok = 1, r, dots = 0;

	if (n < 0 || n > BG_DNS_LABELS_MAX || suf[n] != 0)
		abort();
	/* the name, walked here: labels 1..63, in the message, <= 255 */
	for (;;) {
		size_t l, k;

		if (i >= ulen)
			abort();
		l = d[i];
		if (!l)
			break;
		if (l > BG_DNS_LABEL_MAX || i + 1 + l > ulen)
			abort();
		/* this label and the root byte after it */
		if (i + 1 + l + 1 - QNAME_OFF > BG_DNS_NAME_MAX)
			abort();
		if (labels)
			raw[o++] = '.';
		for (k = 1; k <= l; k++) {
			unsigned char c = d[i + k];

			plain &= plain_char(c);
			if (c == '.' || !c)
				rawok = 0;
			raw[o++] = (char)c;
		}
		i += 1 + l;
		labels++;
	}
	raw[o] = '\0';
	wl = i + 1 - QNAME_OFF; /* the root byte */
	if (labels != n || i + 1 + 4 > ulen) /* QTYPE, QCLASS follow */
		abort();

	/* printed by user/core/wire.c: n labels (every '.' in a label is \046) */
	r = bg_name_from_wire(name, size - QNAME_OFF, text, sizeof(text));
	if (r < 0 || (size_t)r != strlen(text))
		abort();
	for (i = 0; text[i]; i++)
		dots += text[i] == '.';
	if (!n) {
		if (strcmp(text, "."))
			abort();
	} else if (dots + 1 != n) {
		abort();
	}

	/* the exact hash as the datapath makes it: lowercased words */
	for (i = 0; i < wl; i++)
		words[i / 8] |= (__u64)bg_dns_lower(name[i]) << (8 * (i % 8));
	if (exact != bg_dns_exact_hash(words, (__u32)wl, SEED))
		abort();

	if (!n)
		return; /* bg_name_hashes takes no root */
	if (plain)
		check_same(suf, n, exact, text);
	if (rawok)
		check_same(suf, n, exact, raw);
}

/* The same input with the QNAME's letters in the other case (as far as
 * the walk reaches): the same verdict, the same hashes. */
static void check_case(const uint8_t *d, size_t size, int r0, __u64 exact,
		       const __u64 *suf, int n)
{
	__u64 e2 = 0, s2[BG_DNS_LABELS_MAX + 1];
	uint8_t *c = malloc(size); /* exactly size bytes: ASan sees past it */
	size_t i = QNAME_OFF;
	int r, n2 = 0, k;

	if (!c)
		abort();
	memcpy(c, d, size);
	while (i < size && c[i] && c[i] <= BG_DNS_LABEL_MAX) {
		size_t l = c[i], j;

		for (j = i + 1; j <= i + l && j < size; j++)
			if ((c[j] | 0x20) >= 'a' && (c[j] | 0x20) <= 'z')
				c[j] ^= 0x20;
		i += 1 + l;
	}
	r = ref_parse(c, size, 0, SEED, &e2, s2, &n2);
	free(c);
	if (r != r0)
		abort();
	if (r)
		return;
	if (n2 != n || e2 != exact)
		abort();
	for (k = 0; k <= n; k++)
		if (s2[k] != suf[k])
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	__u64 exact = 0, suf[BG_DNS_LABELS_MAX + 1];
	int n = -1, r, h;

	/* a frame's worth; under a UDP header the datapath never looks at
	 * the packet as DNS (bg_dns_udp) */
	if (size > FRAME_MAX || size < UDP_HLEN)
		return 0;
	r = ref_parse(data, size, 0, SEED, &exact, suf, &n);
	h = header_reason(data, size);
	if (h) {
		if (r != h)
			abort();
	} else if (r && r != BG_CNT_DNS_NAME_TOO_LONG &&
		   r != BG_CNT_DNS_BAD_LABEL && r != BG_CNT_DNS_TRUNCATED) {
		abort(); /* past the header, only the name rejects */
	}
	if (!r)
		check_query(data, size, exact, suf, n);
	check_case(data, size, r, exact, suf, n);
	return 0;
}
