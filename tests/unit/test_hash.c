// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* bg_hash64 must be XXH64: compared with libxxhash on many inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include <xxhash.h>

#include "bloomgate/bloom.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_vectors),
		cmocka_unit_test(test_matches_libxxhash),
		cmocka_unit_test(test_key_encoding),
	};

	return cmocka_run_group_tests_name("hash", tests, NULL, NULL);
}
