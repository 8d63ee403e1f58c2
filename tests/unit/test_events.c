// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the agent's flag events as JSON lines
 * (bg_print_event_json(), user/core/print.c): each record of the ring buffer,
 * an address or a DNS name, is one line that JSON reads back field by field.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "core/clock.h"
#include "core/print.h"

/* The line printed for the record, parsed; the line must end in '\n'. */
static struct json_object *json_line(const void *rec, size_t size)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_object *o;

	assert_non_null(f);
	assert_int_equal(bg_print_event_json(f, rec, size), 0);
	fclose(f);
	assert_true(len > 1);
	assert_int_equal(buf[len - 1], '\n');
	assert_null(memchr(buf, '\n', len - 1)); /* one line */
	o = json_tokener_parse(buf);
	free(buf);
	assert_non_null(o);
	return o;
}

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	return json_object_get_string(v);
}

static void test_address_event(void **state)
{
	struct bg_event e = { .ifindex = 1, .family = BG_KEY_IPV4,
			      .which = BG_MATCH_DST, .verdict = BG_VERDICT_FLAG };
	struct json_object *o, *v;

	(void)state;
	e.ts_ns = bg_mono_ns();
	memcpy(e.addr, (unsigned char[]){ 198, 51, 100, 7 }, 4);
	o = json_line(&e, sizeof(e));
	assert_string_equal(str(o, "verdict"), "flag");
	assert_string_equal(str(o, "match"), "dst");
	assert_string_equal(str(o, "addr"), "198.51.100.7");
	assert_string_equal(str(o, "interface"), "lo"); /* ifindex 1 */
	assert_true(json_object_object_get_ex(o, "time", &v));
	/* now, as unix time, within a few seconds */
	assert_true(json_object_get_double(v) > (double)time(NULL) - 5 &&
		    json_object_get_double(v) < (double)time(NULL) + 5);
	assert_false(json_object_object_get_ex(o, "name", &v));
	json_object_put(o);
}

static void test_name_event(void **state)
{
	struct bg_name_event e = { .ev = { .ifindex = 1, .family = BG_KEY_IPV6,
					   .which = BG_EVENT_NAME,
					   .verdict = BG_VERDICT_FLAG } };
	static const unsigned char wire[] = "\3ads\7example\3com";
	struct json_object *o, *v;

	(void)state;
	e.ev.addr[15] = 1; /* ::1 */
	memcpy(e.name, wire, sizeof(wire)); /* the root byte included */
	o = json_line(&e, sizeof(e));
	assert_string_equal(str(o, "name"), "ads.example.com");
	assert_string_equal(str(o, "client"), "::1");
	assert_false(json_object_object_get_ex(o, "addr", &v));
	json_object_put(o);
	/* a record cut short is refused, not read past its end */
	assert_int_equal(bg_print_event_json(stdout, &e, sizeof(e.ev) - 1), -EINVAL);
}

/* The line `bloomgate events` prints and the agent sends its followers:
 * written into a buffer once (bg_event_text), with the interface's name
 * given or looked up; the longest name's line fits BG_EVENT_TEXT_MAX; a
 * buffer too small is said, not cut. */
static void test_text_line(void **state)
{
	struct bg_name_event e = { .ev = { .ifindex = 1, .family = BG_KEY_IPV4,
					   .which = BG_MATCH_SRC,
					   .verdict = BG_VERDICT_FLAG } };
	char line[BG_EVENT_TEXT_MAX];
	size_t i;
	int n;

	(void)state;
	memcpy(e.ev.addr, (unsigned char[]){ 192, 0, 2, 9 }, 4);
	n = bg_event_text(line, sizeof(line), &e.ev, sizeof(e.ev), NULL);
	assert_string_equal(line, "flag src 192.0.2.9 on lo\n");
	assert_int_equal(n, (int)strlen(line));
	bg_event_text(line, sizeof(line), &e.ev, sizeof(e.ev), "eth7");
	assert_string_equal(line, "flag src 192.0.2.9 on eth7\n");
	assert_int_equal(bg_event_text(line, 10, &e.ev, sizeof(e.ev), "eth7"), -ENOSPC);
	assert_int_equal(bg_event_text(line, sizeof(line), &e.ev, sizeof(e.ev) - 1, NULL),
			 -EINVAL);
	/* a name of four labels of 63 bytes that are all odd: \DDD each */
	e.ev.which = BG_EVENT_NAME;
	for (i = 0; i < 4; i++) {
		e.name[i * 64] = 63;
		memset(e.name + i * 64 + 1, 0x01, 63);
	}
	/* the wire form's 255 bytes at most, the root byte included */
	e.name[192] = 61;
	memset(e.name + 254, 0, 2);
	n = bg_event_text(line, sizeof(line), &e, sizeof(e), "eth7");
	assert_null(strstr(line, "malformed"));
	assert_true(n > 900);
	assert_int_equal(line[n - 1], '\n');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_address_event),
		cmocka_unit_test(test_name_event),
		cmocka_unit_test(test_text_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
