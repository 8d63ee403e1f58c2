/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Domain-name keys (issue 4), one definition for the builder (userspace)
 * and the datapath (bpf/dns.h).
 *
 * A name of labels l_1 . l_2 ... l_n (l_1 leftmost, "ads" in
 * "ads.example.com") has two kinds of hashes:
 *
 *   exact hash  E       = XXH64(the wire form [len, bytes] ... 0,
 *                               lowercased, zero padded to a multiple of
 *                               32 bytes (BG_DNS_EXACT_STRIPE), seed)
 *   label hash  L_j     = XXH64(64-byte buffer: [len, bytes lowercased,
 *                               zero padding], 64, seed)
 *   suffix hash S_{n+1} = 0
 *               S_j     = XXH64({L_j, S_{j+1}} as two little-endian u64,
 *                               16, seed)
 *   Bloom key   K       = XXH64({(u64)kind, E or S_j}, 16, seed)
 *
 * S_j is the suffix from label j on. A query for an n-label name probes E
 * as BG_KEY_NAME_EXACT and each proper suffix S_j (j >= 2) of at most
 * BG_DNS_SUFFIX_MAX labels as BG_KEY_NAME_SUBS, but only at the depths
 * (suffix label counts) some SUBS key of the filter has
 * (bg_filter_header.subs_depths, bg_dns_depth_probed). An "exact" entry is
 * inserted as EXACT (its E), a "subdomains only" entry (*.name) as SUBS
 * (its S_1), a "name and subdomains" entry as both.
 *
 * Why two: the exact key is one pass over the name's bytes, 32 at a time,
 * whatever the label count; the label and suffix hashes cost a round per
 * label, so the datapath makes them only for the last labels, the parents
 * it probes (at most BG_DNS_SUFFIX_MAX). A 127-label name then costs about
 * what a long name of few labels does (issue 10). The wire form ends at its
 * root byte, so the zero padding cannot make two names hash the same input;
 * the constant-length label buffer lets the label hash unroll in BPF.
 * Lowercasing is ASCII A-Z only (DNS names compare case-insensitively in
 * ASCII, RFC 4343).
 */
#ifndef BLOOMGATE_DNS_H
#define BLOOMGATE_DNS_H

#include "abi.h"
#include "hash.h"

#define BG_DNS_NAME_MAX 255 /* wire form: length bytes, labels, root byte */
#define BG_DNS_LABEL_MAX 63
/* Labels of a legal name: each takes at least 2 wire bytes, plus the root. */
#define BG_DNS_LABELS_MAX ((BG_DNS_NAME_MAX - 1) / 2) /* 127 */
/*
 * Suffixes probed per query, and the most labels a subdomain entry may
 * have (the loader must refuse longer ones). 10 covers every blocklist
 * entry seen in practice (ad/tracker entries have 2 to 6 labels) and keeps
 * a query at no more than 1 + 10 Bloom probes.
 */
#define BG_DNS_SUFFIX_MAX 10
_Static_assert(BG_SUBS_DEPTHS_ALL == (1U << (BG_DNS_SUFFIX_MAX + 1)) - 2,
	       "subs_depths: bits 1 .. BG_DNS_SUFFIX_MAX");
#define BG_DNS_LABEL_BUF 64 /* length byte + up to 63 label bytes */
/* The exact hash reads the wire name in stripes of 32 bytes (XXH64's),
 * zero padded: at most BG_DNS_EXACT_MAX bytes. */
#define BG_DNS_EXACT_STRIPE 32
#define BG_DNS_EXACT_MAX 256
_Static_assert(BG_DNS_EXACT_MAX >= BG_DNS_NAME_MAX &&
		       BG_DNS_EXACT_MAX % BG_DNS_EXACT_STRIPE == 0 &&
		       BG_DNS_EXACT_MAX <= BG_HASH_MAX_LEN,
	       "the exact hash's stripes hold every wire name");
#define BG_DNS_PORT 53

#define BG_DNS_INLINE static inline __attribute__((always_inline))

/* 1 when a query probes its suffix of i labels (1 <= i) as a SUBS key:
 * the filter holds a SUBS key of that depth (bg_filter_header.subs_depths;
 * never above BG_DNS_SUFFIX_MAX). The datapath and userspace both skip
 * the depths this says no to. */
BG_DNS_INLINE __u32 bg_dns_depth_probed(__u32 subs_depths, __u32 i)
{
	return (subs_depths >> (i & 15)) & 1;
}

struct bg_dns_pair {
	__u64 a, b;
};

/* ASCII A-Z to a-z without a branch; any other byte is unchanged. */
BG_DNS_INLINE __u32 bg_dns_lower(__u32 c)
{
	__u32 d = c - 'A'; /* wraps (top bit set) below 'A' */
	__u32 upper = ((d - 26) >> 31) & ((~d) >> 31); /* 0 <= d < 26 */

	return c + (upper << 5);
}

/* L_j of a 64-byte label buffer (wire form, lowercased, zero padded). The
 * datapath hashes the same 8 words without building the buffer
 * (bpf/dns.h, bg_dns_hash_cb). */
BG_DNS_INLINE __u64 bg_dns_label_hash(const __u8 *buf64, __u64 seed)
{
	__u64 w[BG_DNS_LABEL_BUF / 8];
	__u32 i;

	for (i = 0; i < BG_DNS_LABEL_BUF / 8; i++)
		w[i] = bg_load64(buf64 + 8 * i);
	return bg_hash64_words64(w, seed);
}

/* E of a wire name of wire_len bytes (1..BG_DNS_NAME_MAX, root byte
 * included), given as the little-endian words of its lowercased bytes with
 * zeros after them up to the next multiple of BG_DNS_EXACT_STRIPE bytes. */
BG_DNS_INLINE __u64 bg_dns_exact_hash(const __u64 *words, __u32 wire_len,
				      __u64 seed)
{
	return bg_hash64_stripes(words,
				 (wire_len + BG_DNS_EXACT_STRIPE - 1) /
					 BG_DNS_EXACT_STRIPE,
				 seed);
}

/* S_j from L_j and S_{j+1}: XXH64 of {L_j, S_{j+1}} (struct bg_dns_pair). */
BG_DNS_INLINE __u64 bg_dns_suffix_hash(__u64 label_hash, __u64 next, __u64 seed)
{
	return bg_hash64_words16(label_hash, next, seed);
}

/* The Bloom hash of a name key: kind is BG_KEY_NAME_EXACT or _SUBS; XXH64
 * of {(u64)kind, suffix} (struct bg_dns_pair). */
BG_DNS_INLINE __u64 bg_name_key_hash(__u32 kind, __u64 suffix, __u64 seed)
{
	return bg_hash64_words16(kind, suffix, seed);
}

#ifndef __bpf__
/*
 * Userspace: the exact hash and every suffix hash of a dotted name
 * ("ads.example.com", no trailing dot; letters are lowercased here too).
 * *exact = E; suffix_hashes must hold BG_DNS_LABELS_MAX + 1 values: [j] =
 * S_{j+1} (the suffix from the j-th label, 0-based), [n] = 0. 0, or -1 when
 * the name is not a legal non-root name (empty label, label over 63 bytes,
 * wire form over 255).
 */
static inline int bg_name_hashes(const char *dotted, __u64 seed, __u64 *exact,
				 __u64 *suffix_hashes, int *nlabels)
{
	__u64 lh[BG_DNS_LABELS_MAX], wire[BG_DNS_EXACT_MAX / 8] = { 0 };
	const char *p = dotted;
	__u32 wire_len = 0;
	int n = 0, j;

	if (!*p)
		return -1;
	for (;;) {
		__u8 buf[BG_DNS_LABEL_BUF] = { 0 };
		__u32 len = 0;

		while (p[len] && p[len] != '.')
			len++;
		if (!len || len > BG_DNS_LABEL_MAX || n >= BG_DNS_LABELS_MAX)
			return -1;
		/* this label and the root byte after the name */
		if (wire_len + 1 + len + 1 > BG_DNS_NAME_MAX)
			return -1;
		buf[0] = (__u8)len;
		for (j = 0; j < (int)len; j++)
			buf[1 + j] = (__u8)bg_dns_lower((__u8)p[j]);
		lh[n++] = bg_dns_label_hash(buf, seed);
		/* the wire form, little endian into the words */
		for (j = 0; j <= (int)len; j++, wire_len++)
			wire[wire_len / 8] |= (__u64)buf[j] << (8 * (wire_len % 8));
		p += len;
		if (!*p)
			break;
		p++; /* the dot; a trailing one makes an empty label */
	}
	wire_len++; /* the root byte, zero */
	*exact = bg_dns_exact_hash(wire, wire_len, seed);
	suffix_hashes[n] = 0;
	for (j = n - 1; j >= 0; j--)
		suffix_hashes[j] = bg_dns_suffix_hash(lh[j], suffix_hashes[j + 1],
						      seed);
	*nlabels = n;
	return 0;
}
#endif

#endif /* BLOOMGATE_DNS_H */
