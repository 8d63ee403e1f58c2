// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Counter and malformed-reason names, and the `stats --json` object (see
 * counters.h). Core part: must not need libbpf.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "core/counters.h"

#define BG__NAME(name, str) [BG_CNT_##name] = str,
const char *const bg_counter_names[BG_CNT__COUNT] = { BG_COUNTERS(BG__NAME) };
#undef BG__NAME
#define BG__NAME(name, str) [BG_MAL_##name] = str,
const char *const bg_malformed_names[BG_MAL__COUNT] = {
	BG_MALFORMED_REASONS(BG__NAME)
};
#undef BG__NAME

static int add_u64(struct json_object *o, const char *key, __u64 v)
{
	struct json_object *n = json_object_new_uint64(v);

	if (!n)
		return -1;
	if (json_object_object_add(o, key, n)) {
		json_object_put(n);
		return -1;
	}
	return 0;
}

struct json_object *bg_counters_json(const struct bg_counters *sum)
{
	struct json_object *o = json_object_new_object();
	char key[64];
	int i;

	if (!o)
		return NULL;
	for (i = 0; i < BG_CNT__COUNT; i++)
		if (add_u64(o, bg_counter_names[i], sum->cnt[i]))
			goto fail;
	for (i = 0; i < BG_MAL__COUNT; i++) {
		snprintf(key, sizeof(key), BG_MALFORMED_PREFIX "%s",
			 bg_malformed_names[i]);
		if (add_u64(o, key, sum->malformed[i]))
			goto fail;
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

int bg_counters_from_json(struct json_object *o, struct bg_counters *sum)
{
	struct json_object *v;
	char key[64];
	int i;

	if (!o || !json_object_is_type(o, json_type_object))
		return -EINVAL;
	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < BG_CNT__COUNT; i++) {
		if (!json_object_object_get_ex(o, bg_counter_names[i], &v) ||
		    !json_object_is_type(v, json_type_int))
			return -EINVAL;
		sum->cnt[i] = json_object_get_uint64(v);
	}
	for (i = 0; i < BG_MAL__COUNT; i++) {
		snprintf(key, sizeof(key), BG_MALFORMED_PREFIX "%s",
			 bg_malformed_names[i]);
		if (!json_object_object_get_ex(o, key, &v) ||
		    !json_object_is_type(v, json_type_int))
			return -EINVAL;
		sum->malformed[i] = json_object_get_uint64(v);
	}
	return 0;
}

void bg_counters_print(FILE *out, const struct bg_counters *sum)
{
	int i;

	for (i = 0; i < BG_CNT__COUNT; i++)
		fprintf(out, "%-28s %llu\n", bg_counter_names[i],
			(unsigned long long)sum->cnt[i]);
	for (i = 0; i < BG_MAL__COUNT; i++)
		fprintf(out, BG_MALFORMED_PREFIX "%-18s %llu\n", bg_malformed_names[i],
			(unsigned long long)sum->malformed[i]);
}
