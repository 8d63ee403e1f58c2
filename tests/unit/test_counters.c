// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for user/core/counters.c: the one table of counter and malformed-
 * reason names, and the `stats --json` object built from it, read back
 * with json-c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include <json-c/json.h>

#include "core/counters.h"

/* The table follows the X-macros in abi.h, index for index. */
static void test_names(void **state)
{
	(void)state;
	assert_string_equal(bg_counter_names[BG_CNT_PACKETS], "packets");
	assert_string_equal(bg_counter_names[BG_CNT_NO_FILTER], "no_filter");
	assert_string_equal(bg_counter_names[BG_CNT_DNS_NO_PROG], "dns_no_prog");
	assert_string_equal(bg_malformed_names[BG_MAL_TRUNC_ETH], "trunc_eth");
	assert_string_equal(bg_malformed_names[BG_MAL_IPV6_EXT_TOO_LONG],
			    "ipv6_ext_too_long");
	assert_int_equal(sizeof(bg_counter_names) / sizeof(bg_counter_names[0]),
			 BG_CNT__COUNT);
	assert_int_equal(sizeof(bg_malformed_names) / sizeof(bg_malformed_names[0]),
			 BG_MAL__COUNT);
}

/* Every counter by name, in index order, then every malformed reason as
 * "malformed_" NAME; every value its own, so a key paired with the wrong
 * slot shows; the reserved slots are not printed. */
static void test_json(void **state)
{
	struct bg_counters c;
	struct json_object *o, *v;
	struct json_object_iterator it, end;
	char key[64];
	int i;

	(void)state;
	memset(&c, 0, sizeof(c));
	for (i = 0; i < BG_CNT_SLOTS; i++)
		c.cnt[i] = 1000 + (__u64)i;
	for (i = 0; i < BG_MAL_SLOTS; i++)
		c.malformed[i] = 2000 + (__u64)i;
	c.cnt[BG_CNT_PACKETS] = UINT64_MAX; /* above INT64_MAX: unsigned */
	o = bg_counters_json(&c);
	assert_non_null(o);
	assert_true(json_object_is_type(o, json_type_object));
	assert_int_equal(json_object_object_length(o), BG_CNT__COUNT + BG_MAL__COUNT);

	it = json_object_iter_begin(o);
	end = json_object_iter_end(o);
	for (i = 0; i < BG_CNT__COUNT + BG_MAL__COUNT; i++) {
		int mal = i >= BG_CNT__COUNT;
		int j = mal ? i - BG_CNT__COUNT : i;

		assert_false(json_object_iter_equal(&it, &end));
		if (mal)
			snprintf(key, sizeof(key), "malformed_%s", bg_malformed_names[j]);
		else
			snprintf(key, sizeof(key), "%s", bg_counter_names[j]);
		assert_string_equal(json_object_iter_peek_name(&it), key);
		v = json_object_iter_peek_value(&it);
		assert_true(json_object_is_type(v, json_type_int));
		assert_true(json_object_get_uint64(v) ==
			    (mal ? c.malformed[j] : c.cnt[j]));
		json_object_iter_next(&it);
	}
	assert_true(json_object_iter_equal(&it, &end));
	/* as text, the way `stats --json` prints it */
	assert_non_null(strstr(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			       "{\"packets\":18446744073709551615,\"ipv4\":1001,"));
	assert_non_null(strstr(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			       ",\"malformed_ipv6_ext_too_long\":2009}"));
	json_object_put(o);
}

/* The agent's `stats` answer read back: the same counters, the
 * UINT64_MAX one included; a key missing or not a number is refused. */
static void test_json_round_trip(void **state)
{
	struct bg_counters c, back;
	struct json_object *o;
	int i;

	(void)state;
	memset(&c, 0, sizeof(c));
	for (i = 0; i < BG_CNT__COUNT; i++)
		c.cnt[i] = 7 * (__u64)i + 1;
	for (i = 0; i < BG_MAL__COUNT; i++)
		c.malformed[i] = 11 * (__u64)i + 3;
	c.cnt[BG_CNT_DROPPED] = UINT64_MAX;
	o = bg_counters_json(&c);
	assert_non_null(o);
	assert_int_equal(bg_counters_from_json(o, &back), 0);
	for (i = 0; i < BG_CNT__COUNT; i++)
		assert_true(back.cnt[i] == c.cnt[i]);
	for (i = 0; i < BG_MAL__COUNT; i++)
		assert_true(back.malformed[i] == c.malformed[i]);
	json_object_object_add(o, "packets", json_object_new_string("1"));
	assert_int_equal(bg_counters_from_json(o, &back), -EINVAL);
	json_object_object_del(o, "packets");
	assert_int_equal(bg_counters_from_json(o, &back), -EINVAL);
	json_object_put(o);
	assert_int_equal(bg_counters_from_json(NULL, &back), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
