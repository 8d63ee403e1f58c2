// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* bg_hash64 and its word interface must be XXH64: compared with libxxhash on
 * many inputs, and the DNS name keys built on them with the definition
 * (bloomgate/dns.h) hashed by libxxhash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <xxhash.h>

#include "bloomgate/bloom.h"
#include "bloomgate/dns.h"

#define SEEDS { 0, 1, 0x9E3779B97F4A7C15ULL, 0xffffffffffffffffULL }

/* Published XXH64 reference values (xxHash's sanity checks). */
static void test_reference_vectors(void **state)
{
	(void)state;
	assert_int_equal(bg_hash64("", 0, 0), 0xEF46DB3751D8E999ULL);
	assert_int_equal(bg_hash64("a", 1, 0), 0xD24EC4F1A98C6E5BULL);
	assert_int_equal(bg_hash64("abc", 3, 0), 0x44BC2CF5AD770999ULL);
	assert_int_equal(bg_hash64("xxhash", 6, 0), 0x32DD38952C4BC720ULL);
}

/* Every length 0..256 and several seeds, against libxxhash. */
static void test_matches_libxxhash(void **state)
{
	static const uint64_t seeds[] = { 0, 1, 0x9E3779B97F4A7C15ULL,
					  0xffffffffffffffffULL };
	uint8_t buf[257];
	size_t len, s;

	(void)state;
	srand(7);
	for (len = 0; len < sizeof(buf); len++)
		buf[len] = (uint8_t)rand();
	for (s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++)
		for (len = 0; len <= 256; len++)
			assert_int_equal(bg_hash64(buf, (uint32_t)len, seeds[s]),
					 XXH64(buf, len, seeds[s]));
	/* Unaligned starts too. */
	for (len = 0; len < 64; len++)
		assert_int_equal(bg_hash64(buf + 1, (uint32_t)len, 42),
				 XXH64(buf + 1, len, 42));
}

/* The key encodings hash as their bytes, and masking is applied. */
static void test_key_encoding(void **state)
{
	struct bg_key4 k4;
	struct bg_key6 k6;
	uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0xff, 0xff,
			   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	int i;

	(void)state;
	bg_key4_init(&k4, __builtin_bswap32(0xc0000281), 24);
	assert_int_equal(k4.kind, BG_KEY_IPV4);
	assert_int_equal(k4.plen, 24);
	assert_int_equal(k4.pad, 0);
	assert_int_equal(k4.addr, __builtin_bswap32(0xc0000200));
	assert_int_equal(bg_key4_hash(&k4, 5), XXH64(&k4, sizeof(k4), 5));
	for (i = 0; i < 100000; i++) { /* the register path is XXH64 too */
		__u64 seed = (__u64)i * 0x9E3779B97F4A7C15ULL;

		bg_key4_init(&k4, (__u32)(i * 2654435761U), (__u8)(i % 33));
		assert_int_equal(bg_key4_hash(&k4, seed), XXH64(&k4, sizeof(k4), seed));
		assert_int_equal(bg_hash64_u64(seed ^ (__u64)i << 7, (__u64)i),
				 XXH64(&(__u64){ seed ^ (__u64)i << 7 }, 8, (__u64)i));
	}
	bg_key4_init(&k4, 0xffffffff, 0);
	assert_int_equal(k4.addr, 0);
	bg_key4_init(&k4, 0xffffffff, 32);
	assert_int_equal(k4.addr, 0xffffffff);

	bg_key6_init(&k6, a6, 36);
	assert_int_equal(k6.kind, BG_KEY_IPV6);
	assert_int_equal(k6.plen, 36);
	assert_int_equal(k6.addr[3], 0xb8);
	assert_int_equal(k6.addr[4], 0xf0);
	for (i = 5; i < 16; i++)
		assert_int_equal(k6.addr[i], 0);
	bg_key6_init(&k6, a6, 128);
	assert_memory_equal(k6.addr, a6, 16);
	assert_int_equal(bg_key6_hash(&k6, 9), XXH64(&k6, sizeof(k6), 9));
}

/* Little-endian bytes of n words (the words' memory order on x86 and BPF,
 * written out so the test does not depend on it). */
static void le_bytes(const __u64 *w, size_t n, uint8_t *b)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < 8; j++)
			b[8 * i + j] = (uint8_t)(w[i] >> (8 * j));
}

static __u64 rnd64(void)
{
	__u64 x = 0;
	int i;

	for (i = 0; i < 8; i++)
		x = x << 8 | (__u64)(rand() & 0xff);
	return x;
}

/* bg_hash64_words is bg_hash64 of the words' bytes, for 0..32 words (every
 * branch: stripes, 8-byte tail), several seeds; words64, words16 and
 * stripes (1..8 run-time stripes of 32 bytes) too. */
static void test_words_match_bytes(void **state)
{
	static const __u64 seeds[] = SEEDS;
	__u64 w[32];
	uint8_t b[256];
	size_t n, s, r;

	(void)state;
	srand(11);
	for (r = 0; r < 200; r++) {
		for (n = 0; n < 32; n++)
			/* sparse words too: zero padding, single bytes */
			w[n] = r % 4 == 0 ? rnd64() & (0xffULL << (8 * (n % 8))) :
			       r % 4 == 1 && n > r % 9 ? 0 : rnd64();
		le_bytes(w, 32, b);
		for (s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
			for (n = 0; n <= 32; n++) {
				__u64 x = XXH64(b, 8 * n, seeds[s]);

				assert_int_equal(bg_hash64_words(w, (uint32_t)n, seeds[s]), x);
				assert_int_equal(bg_hash64(b, (uint32_t)(8 * n), seeds[s]), x);
				if (n && n % 4 == 0)
					assert_int_equal(bg_hash64_stripes(w, (uint32_t)n / 4,
									   seeds[s]),
							 x);
			}
			assert_int_equal(bg_hash64_words64(w, seeds[s]),
					 XXH64(b, 64, seeds[s]));
			assert_int_equal(bg_hash64_words16(w[0], w[1], seeds[s]),
					 XXH64(b, 16, seeds[s]));
		}
	}
}

/* The definition written with libxxhash: label buffer [len, bytes with
 * A-Z lowercased, zeros], S_j = XXH64({L_j, S_j+1}). */
static __u64 ref_label(const char *p, size_t len, __u64 seed)
{
	uint8_t buf[BG_DNS_LABEL_BUF] = { 0 };
	size_t i;

	buf[0] = (uint8_t)len;
	for (i = 0; i < len; i++) {
		uint8_t c = (uint8_t)p[i];

		buf[1 + i] = c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
	}
	return XXH64(buf, sizeof(buf), seed);
}

static __u64 ref_pair(__u64 a, __u64 b, __u64 seed)
{
	__u64 w[2] = { a, b };
	uint8_t bytes[16];

	le_bytes(w, 2, bytes);
	return XXH64(bytes, sizeof(bytes), seed);
}

/* The exact hash and every suffix hash of a dotted name by the
 * definition: E = XXH64 of the lowercased wire form zero padded to a
 * multiple of 32 bytes. Returns n. */
static int ref_name(const char *name, __u64 seed, __u64 *exact, __u64 *suf)
{
	__u64 lh[BG_DNS_LABELS_MAX];
	uint8_t wire[BG_DNS_EXACT_MAX] = { 0 };
	size_t o = 0, i;
	int n = 0, j;

	for (;;) {
		size_t len = strcspn(name, ".");

		lh[n++] = ref_label(name, len, seed);
		wire[o++] = (uint8_t)len;
		for (i = 0; i < len; i++)
			wire[o++] = (uint8_t)bg_dns_lower((uint8_t)name[i]);
		if (!name[len])
			break;
		name += len + 1;
	}
	o++; /* the root byte */
	*exact = XXH64(wire, (o + 31) / 32 * 32, seed);
	suf[n] = 0;
	for (j = n - 1; j >= 0; j--)
		suf[j] = ref_pair(lh[j], suf[j + 1], seed);
	return n;
}

/* The DNS keys (bloomgate/dns.h), now hashed through the word interface,
 * are the definition's: label buffers of every length and byte value,
 * suffix and Bloom keys, whole names through bg_name_hashes; and three
 * names keep the values the byte-buffer code gave before the word
 * interface (the keys of every filter ever built must not move). */
static void test_dns_keys(void **state)
{
	static const __u64 seeds[] = SEEDS;
	static const char *const names[] = {
		"ads.example.com", "Ads.Example.COM", "x@[`{.\x80\xc1\xda\xff.zZ",
		"a", "AZaz@[`{09-_.\x7f\x01\xfe",
	};
	char name[300];
	__u64 suf[BG_DNS_LABELS_MAX + 1], ref[BG_DNS_LABELS_MAX + 1], e, re;
	uint8_t buf[BG_DNS_LABEL_BUF], raw[BG_DNS_LABEL_MAX];
	size_t s, len, i, k;
	int n, rn, j;

	(void)state;
	srand(13);
	for (s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		const __u64 seed = seeds[s];

		/* label buffers: every length, every byte value at every offset */
		for (len = 1; len <= BG_DNS_LABEL_MAX; len++) {
			for (k = 0; k < 256; k += 7) {
				memset(buf, 0, sizeof(buf));
				buf[0] = (uint8_t)len;
				for (i = 0; i < len; i++) {
					raw[i] = (char)(k + i * 13);
					buf[1 + i] = (uint8_t)bg_dns_lower((uint8_t)raw[i]);
				}
				assert_int_equal(bg_dns_label_hash(buf, seed),
						 XXH64(buf, sizeof(buf), seed));
				assert_int_equal(bg_dns_label_hash(buf, seed),
						 ref_label((const char *)raw, len, seed));
			}
		}
		for (i = 0; i < 1000; i++) {
			__u64 a = rnd64(), b = i % 3 ? rnd64() : 0;

			assert_int_equal(bg_dns_suffix_hash(a, b, seed), ref_pair(a, b, seed));
			assert_int_equal(bg_name_key_hash(BG_KEY_NAME_EXACT, a, seed),
					 ref_pair(BG_KEY_NAME_EXACT, a, seed));
			assert_int_equal(bg_name_key_hash(BG_KEY_NAME_SUBS, a, seed),
					 ref_pair(BG_KEY_NAME_SUBS, a, seed));
		}
		/* whole names: fixed ones, 127 labels, 63-byte labels, random
		 * bytes (no dot, no NUL) in random label lengths */
		for (i = 0; i < sizeof(names) / sizeof(names[0]) + 300 + 127 + 253;
		     i++) {
			const size_t nf = sizeof(names) / sizeof(names[0]);

			if (i < nf) {
				snprintf(name, sizeof(name), "%s", names[i]);
			} else if (i >= nf + 300 && i < nf + 300 + 127) {
				/* 1 .. 127 one-byte labels */
				size_t nl = i - nf - 300 + 1;

				for (k = 0; k < nl; k++) {
					name[2 * k] = (char)('A' + (k * 7) % 58);
					name[2 * k + 1] = k == nl - 1 ? 0 : '.';
				}
			} else if (i >= nf + 300 + 127) {
				/* every wire length 3 .. 255: labels of up to
				 * 63 bytes, the last one what is left */
				size_t wl = i - nf - 300 - 127 + 3, o = 0, left;

				for (left = wl - 1; left;) {
					size_t l = left - 1 > 63 ? 63 : left - 1;

					if (left - 1 - l == 1)
						l--; /* leave no 1-byte rest */
					if (o)
						name[o++] = '.';
					for (k = 0; k < l; k++)
						name[o + k] = (char)('a' + (o + k) % 26);
					o += l;
					left -= 1 + l;
				}
				name[o] = 0;
				assert_int_equal(o + 2, wl);
			} else if (i % 100 == 0) {
				for (k = 0; k < 127; k++) {
					name[2 * k] = (char)('A' + k % 58);
					name[2 * k + 1] = k == 126 ? 0 : '.';
				}
			} else {
				size_t o = 0, wire = 1;

				for (;;) {
					size_t l = 1 + (size_t)rand() % (i % 2 ? 63 : 9);

					if (wire + 1 + l > BG_DNS_NAME_MAX)
						break;
					if (o)
						name[o++] = '.';
					for (k = 0; k < l; k++) {
						char c;

						do
							c = (char)rand();
						while (c == '.' || !c);
						name[o++] = c;
					}
					wire += 1 + l;
				}
				name[o] = 0;
			}
			assert_int_equal(bg_name_hashes(name, seed, &e, suf, &n), 0);
			rn = ref_name(name, seed, &re, ref);
			assert_int_equal(n, rn);
			assert_int_equal(e, re);
			for (j = 0; j <= n; j++)
				assert_int_equal(suf[j], ref[j]);
		}
	}
	/* values from the byte-buffer code before the word interface (s1,
	 * s2, subs), and of the exact key since ABI 4 (exact: E hashes the
	 * wire name; the values are libxxhash's XXH64 of the padded wire
	 * form, then of {EXACT, E}) */
	{
		static const struct {
			const char *name;
			__u64 s1, s2, exact, subs;
		} gold[] = {
			{ "ads.example.com", 0xe60a3cef77419445ULL, 0x92e74d0df22a9a91ULL,
			  0x5e07f46181722788ULL, 0xf4f71381c4ac8bfcULL },
			{ "Ads.Example.COM", 0xe60a3cef77419445ULL, 0x92e74d0df22a9a91ULL,
			  0x5e07f46181722788ULL, 0xf4f71381c4ac8bfcULL },
			{ "x@[`{.\x80\xc1\xda\xff.zZ", 0x5bc6fd7d1b20187eULL,
			  0xbcc2b7dccc08027bULL, 0xb7b96edf38a401d5ULL,
			  0xa004bf0daae49c2fULL },
		};
		const __u64 seed = 0x5eed5eed12345678ULL;

		for (i = 0; i < sizeof(gold) / sizeof(gold[0]); i++) {
			assert_int_equal(bg_name_hashes(gold[i].name, seed, &e, suf, &n), 0);
			assert_int_equal(n, 3);
			assert_int_equal(suf[0], gold[i].s1);
			assert_int_equal(suf[1], gold[i].s2);
			assert_int_equal(bg_name_key_hash(BG_KEY_NAME_EXACT, e, seed),
					 gold[i].exact);
			assert_int_equal(bg_name_key_hash(BG_KEY_NAME_SUBS, suf[1], seed),
					 gold[i].subs);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_vectors),
		cmocka_unit_test(test_matches_libxxhash),
		cmocka_unit_test(test_key_encoding),
		cmocka_unit_test(test_words_match_bytes),
		cmocka_unit_test(test_dns_keys),
	};

	return cmocka_run_group_tests_name("hash", tests, NULL, NULL);
}
