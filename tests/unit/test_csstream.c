// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The decision stream's parser (agent/csstream.h) alone: durations as the
 * API writes them (Go's time.Duration.String()) and nothing else; values
 * by the list parser's rules, a Range's width; the answer cut at every
 * byte gives what it gives whole; hostile answers and elements (not JSON,
 * too deep, an element past its bound, elements that are no decision).
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
#include <arpa/inet.h>

#include "agent/csstream.h"

static const struct bg_cs_limits lim = { .max_range4 = 16, .max_range6 = 32 };

static void test_durations(void **state)
{
	static const struct {
		const char *s;
		int64_t ns;
	} ok[] = {
		{ "0s", 0 },
		{ "1s", 1000000000 },
		{ "1.5\xc2\xb5s", 1500 }, /* U+00B5, what Go writes */
		{ "1.5\xce\xbcs", 1500 }, /* U+03BC */
		{ "500ns", 500 },
		{ "500ms", 500000000 },
		{ "999.999999ms", 999999999 },
		{ "0.5s", 500000000 },
		{ "59.9s", 59900000000 },
		{ "1m0s", 60000000000 },
		{ "1h0m0s", 3600000000000 },
		{ "3h59m58.123456789s", 14398123456789 },
		{ "-1.26s", -1260000000 },
		{ "-438.321315ms", -438321315 },
		{ "2562047h47m16.854775807s", INT64_MAX },
		{ "-2562047h47m16.854775808s", INT64_MIN },
	};
	static const char *const bad[] = {
		"5", "", "1h-5m", "nans", "1e400s", "inf", "NaN", "0x10s",
		"2562047h47m16.854775808s", "3000000h0m0s",
		"99999999999999999999h0m0s", "5m", "1h", "1h5m", "90m0s", "60s",
		"1h60m0s", "1m60s", "1000ms", "1.5ns", "1.2345\xc2\xb5s",
		"1.0000000001s", "01s", "1.s", ".5s", "+1s", "--1s", "1h1s",
		"1m1h0s", "1s0ms", "1us", " 1s", "1s ", "1.5h0m0s", "-", "1m0.5ms",
		"1m30", "1\xc2s", "1h0m0s0s", "4h0m0s\n",
	};
	const char *why;
	int64_t ns;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ns = 42;
		if (bg_cs_duration(ok[i].s, strlen(ok[i].s), &ns, &why) || ns != ok[i].ns)
			fail_msg("'%s': got %lld, want %lld", ok[i].s, (long long)ns,
				 (long long)ok[i].ns);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		if (!bg_cs_duration(bad[i], strlen(bad[i]), &ns, &why))
			fail_msg("'%s' taken as %lld ns", bad[i], (long long)ns);
		assert_non_null(why);
	}
	assert_int_equal(bg_cs_duration("1e400s", 6, &ns, &why), -1);
	assert_string_equal(why, "not a duration as the API writes one");
	assert_int_equal(bg_cs_duration("3000000h0m0s", 12, &ns, &why), -1);
	assert_string_equal(why, "longer than a duration can be");
	/* the bytes given, not the string: a NUL inside is not the end */
	assert_int_equal(bg_cs_duration("1s\0x", 4, &ns, &why), -1);
	assert_int_equal(bg_cs_duration(NULL, 0, &ns, &why), -1);
}

static void test_values(void **state)
{
	static const struct {
		const char *v;
		size_t len; /* 0: strlen */
		int range;
		int want; /* -1 taken, else the reason */
		const char *key; /* taken: the key, "addr/plen" */
		const char *why; /* refused: the words, or NULL */
	} t[] = {
		{ "192.0.2.7", 0, 0, -1, "192.0.2.7/32", NULL },
		{ "2001:db8::1", 0, 0, -1, "2001:db8::1/128", NULL },
		{ "::ffff:198.51.100.9", 0, 0, -1, "198.51.100.9/32", NULL },
		{ "198.51.100.0/24", 0, 1, -1, "198.51.100.0/24", NULL },
		{ "10.1.2.3/24", 0, 1, -1, "10.1.2.0/24", NULL },
		{ "192.0.2.0/16", 0, 1, -1, "192.0.0.0/16", NULL },
		{ "2001:db8::/48", 0, 1, -1, "2001:db8::/48", NULL },
		{ "2001:db8::/32", 0, 1, -1, "2001:db8::/32", NULL },
		{ "192.0.2.7/32", 0, 0, -1, "192.0.2.7/32", NULL },
		{ "1.2.3.4/ 24", 0, 1, BG_CS_IGN_VALUE, NULL,
		  "bad prefix length (no blanks around '/')" },
		{ "/+8", 0, 1, BG_CS_IGN_VALUE, NULL, "not an IP address" },
		{ "198.51.100.66/032", 0, 1, BG_CS_IGN_VALUE, NULL, "bad prefix length" },
		{ "198.51.100.66/33", 0, 1, BG_CS_IGN_VALUE, NULL,
		  "bad prefix length (IPv4 allows 0..32)" },
		{ "1.2.3.4 ", 0, 0, BG_CS_IGN_VALUE, NULL, "trailing text after address" },
		{ " 1.2.3.4", 0, 0, BG_CS_IGN_VALUE, NULL, "not an IP address" },
		{ "1.2.3.4#x", 0, 0, BG_CS_IGN_VALUE, NULL, "trailing text after address" },
		{ "1.2.3.4;x", 0, 0, BG_CS_IGN_VALUE, NULL, "trailing text after address" },
		{ "1.2.3.4\n", 0, 0, BG_CS_IGN_VALUE, NULL, NULL },
		{ "1.2.3.4\r", 0, 0, BG_CS_IGN_VALUE, NULL, NULL },
		{ "1.2.3.4\0x", 9, 0, BG_CS_IGN_VALUE, NULL, "binary data" },
		{ "", 0, 0, BG_CS_IGN_VALUE, NULL, NULL },
		{ "01.2.3.4", 0, 0, BG_CS_IGN_VALUE, NULL, "not an IP address" },
		{ "fe80::1%eth0", 0, 0, BG_CS_IGN_VALUE, NULL, "IPv6 zone index not allowed" },
		{ "1.2.3.4-1.2.3.9", 0, 1, BG_CS_IGN_VALUE, NULL,
		  "address ranges are not supported" },
		{ "198.51.100.0/24", 0, 0, BG_CS_IGN_VALUE, NULL,
		  "a prefix, not an address (scope Ip)" },
		{ "0.0.0.0/0", 0, 1, BG_CS_IGN_TOO_WIDE, NULL, "a prefix wider than max_range_v4" },
		{ "::/0", 0, 1, BG_CS_IGN_TOO_WIDE, NULL, "a prefix wider than max_range_v6" },
		{ "10.0.0.0/1", 0, 1, BG_CS_IGN_TOO_WIDE, NULL, NULL },
		{ "2000::/3", 0, 1, BG_CS_IGN_TOO_WIDE, NULL, NULL },
		{ "192.0.0.0/8", 0, 1, BG_CS_IGN_TOO_WIDE, NULL, NULL },
		{ "192.0.0.0/15", 0, 1, BG_CS_IGN_TOO_WIDE, NULL, NULL },
		{ "2001:db8::/31", 0, 1, BG_CS_IGN_TOO_WIDE, NULL, NULL },
		{ "::ffff:0.0.0.0/96", 0, 1, BG_CS_IGN_TOO_WIDE, NULL, NULL },
	};
	char a[INET6_ADDRSTRLEN], got[64];
	union bg_cs_key k;
	const char *why;
	size_t i;
	int r;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		why = NULL;
		memset(&k, 0xa5, sizeof(k));
		r = bg_cs_value(t[i].v, t[i].len ? t[i].len : strlen(t[i].v), t[i].range,
				&lim, &k, &why);
		if (r != t[i].want)
			fail_msg("case %zu '%s': %d, want %d (%s)", i, t[i].v, r, t[i].want,
				 why ? why : "");
		if (r >= 0) {
			assert_non_null(why);
			if (t[i].why && strcmp(why, t[i].why))
				fail_msg("case %zu '%s': '%s', want '%s'", i, t[i].v, why,
					 t[i].why);
			continue;
		}
		if (k.kind == BG_KEY_IPV4)
			snprintf(got, sizeof(got), "%s/%u",
				 inet_ntop(AF_INET, &k.k4.addr, a, sizeof(a)), k.k4.plen);
		else
			snprintf(got, sizeof(got), "%s/%u",
				 inet_ntop(AF_INET6, k.k6.addr, a, sizeof(a)), k.k6.plen);
		if (strcmp(got, t[i].key))
			fail_msg("case %zu '%s': key %s, want %s", i, t[i].v, got, t[i].key);
	}
	/* the bound is the caller's: /8 taken when allowed, never below the
	 * lists' own (wide prefixes) */
	{
		struct bg_cs_limits wide = { .max_range4 = 0, .max_range6 = 0 };

		assert_int_equal(bg_cs_value("10.0.0.0/8", 10, 1, &wide, &k, &why), -1);
		assert_int_equal(bg_cs_value("10.0.0.0/7", 10, 1, &wide, &k, &why),
				 BG_CS_IGN_TOO_WIDE);
		assert_int_equal(bg_cs_value("2000::/15", 9, 1, &wide, &k, &why),
				 BG_CS_IGN_TOO_WIDE);
	}
}

/* ---- the stream ---------------------------------------------------------------- */

/* What a parse handed on, as text: one line an element. */
struct rec {
	char text[8192];
	size_t len, n;
	int stop_at; /* > 0: the callback fails at that element */
};

static int on_elem(void *ctx, const struct bg_cs_elem *e)
{
	struct rec *r = ctx;
	char a[INET6_ADDRSTRLEN] = "-";
	unsigned int plen = 0;

	if (r->stop_at && (int)r->n + 1 == r->stop_at)
		return -ENOSPC;
	if (e->refused < 0 && !e->deleted) {
		if (e->key.kind == BG_KEY_IPV4)
			inet_ntop(AF_INET, &e->key.k4.addr, a, sizeof(a));
		else
			inet_ntop(AF_INET6, e->key.k6.addr, a, sizeof(a));
		plen = e->key.kind == BG_KEY_IPV4 ? e->key.k4.plen : e->key.k6.plen;
	}
	r->len += (size_t)snprintf(r->text + r->len, sizeof(r->text) - r->len,
				   "%s %lld %s %s/%u %lld ", e->deleted ? "del" : "new",
				   (long long)e->id,
				   e->refused < 0 ? "ok" : bg_cs_ign_names[e->refused], a,
				   plen, (long long)e->ns);
	/* the strings' bytes as they are, a NUL included */
	assert_true(r->len + e->origin_len + e->scenario_len + 3 < sizeof(r->text));
	memcpy(r->text + r->len, e->origin ? e->origin : "", e->origin_len);
	r->len += e->origin_len;
	r->text[r->len++] = '|';
	memcpy(r->text + r->len, e->scenario ? e->scenario : "", e->scenario_len);
	r->len += e->scenario_len;
	r->text[r->len++] = '\n';
	r->text[r->len] = 0;
	r->n++;
	return 0;
}

/* The answer fed in pieces: first bytes, then the rest in pieces of step
 * (0: at once). The parse's result; its elements in *r. */
static int parse(const char *a, size_t len, size_t first, size_t step, struct rec *r,
		 char *why, size_t whylen)
{
	struct bg_cs_stream s;
	size_t at = 0;
	int ret;

	r->len = r->n = 0;
	r->text[0] = 0;
	assert_int_equal(bg_cs_stream_init(&s, &lim, on_elem, r), 0);
	ret = bg_cs_stream_feed(&s, a, first < len ? first : len);
	at = first < len ? first : len;
	while (!ret && at < len) {
		size_t n = step && step < len - at ? step : len - at;

		ret = bg_cs_stream_feed(&s, a + at, n);
		at += n;
	}
	if (!ret)
		ret = bg_cs_stream_end(&s);
	if (why)
		snprintf(why, whylen, "%s", s.why);
	bg_cs_stream_free(&s);
	return ret;
}

static const char answer[] =
	"{ \"other\": {\"a\": [1, \"x]}\\\"\", {\"b\": null}], \"c\": true},\n"
	"  \"new\": [\n"
	"    {\"id\": 10, \"type\": \"ban\", \"scope\": \"ip\", \"value\": \"2001:db8::1\", "
	"\"duration\": \"3h59m58.123456789s\", \"origin\": \"CAPI\", \"scenario\": \"ssh-bf\"},\n"
	"    {\"id\": 11, \"type\": \"captcha\", \"scope\": \"Ip\", \"value\": \"192.0.2.1\", \"duration\": \"4h0m0s\"},\n"
	"    {\"id\": 12, \"type\": \"BAN\", \"scope\": \"Country\", \"value\": \"FR\", \"duration\": \"4h0m0s\"},\n"
	"    {\"id\": 13, \"type\": \"ban\", \"scope\": \"Range\", \"value\": \"1.2.3.4/ 24\", \"duration\": \"1m0s\"},\n"
	"    {\"id\": 14, \"type\": \"ban\", \"scope\": \"Range\", \"value\": \"192.0.0.0/8\", \"duration\": \"1m0s\"},\n"
	"    {\"id\": 15, \"type\": \"ban\", \"scope\": \"Ip\", \"value\": \"198.51.100.66\", \"duration\": \"1e400s\"},\n"
	"    {\"id\": 16, \"type\": \"ban\", \"scope\": \"Ip\", \"value\": \"198.51.100.67\", \"duration\": \"-1.26s\"},\n"
	"    {\"id\": 20, \"type\": \"ban\", \"scope\": \"Ip\", \"value\": \"198.51.100.68\"},\n"
	"    {\"id\": \"17\", \"type\": \"ban\"}, null, 42, [1, 2], \"x\",\n"
	"    {\"id\": 18, \"type\": \"ban\", \"scope\": \"Ip\", \"value\": \"::ffff:198.51.100.9\", "
	"\"duration\": \"1.5\\u00b5s\", \"origin\": \"a\\u0000b\\\"c\", \"scenario\": \"{[\\\\\\\"}\"},\n"
	"    {\"id\": 19, \"type\": \"ban\", \"scope\": \"Range\", \"value\": \"2001:db8:1::/48\", \"duration\": \"500ms\", "
	"\"nested\": {\"x\": [[{}]]}, \"scenario\": 7},\n"
	"    {\"id\": 21, \"type\": \"ban\", \"scope\": \"Range\", \"value\": \"203.0.113.0/24\", \"duration\": \"500ms\"}\n"
	"  ],\n"
	"  \"deleted\": [{\"id\": 10, \"duration\": \"-1s\"}, {\"id\": 0}, {}]\n"
	"}\n";

/* r's text holds t (its bytes up to the last, sizeof - 1: a NUL inside) */
#define has(r, t) (memmem((r)->text, (r)->len, t, sizeof(t) - 1) != NULL)

static void test_stream_splits(void **state)
{
	static struct rec whole, part;
	char why[200];
	size_t len = strlen(answer), i;

	(void)state;
	if (parse(answer, len, len, 0, &whole, why, sizeof(why)))
		fail_msg("%s", why);
	/* what each element is */
	assert_true(has(&whole, "new 10 ok 2001:db8::1/128 14398123456789 CAPI|ssh-bf\n"));
	assert_true(has(&whole, "new 11 type "));
	assert_true(has(&whole, "new 12 scope "));
	assert_true(has(&whole, "new 13 value "));
	assert_true(has(&whole, "new 14 too_wide "));
	assert_true(has(&whole, "new 15 duration "));
	assert_true(has(&whole, "new 16 expired "));
	assert_true(has(&whole, "new 20 duration "));
	/* "17" a string id, null, 42, [1, 2], "x": no decision */
	assert_true(has(&whole, "new 0 malformed -/0 0 |\nnew 0 malformed -/0 0 |\n"
				  "new 0 malformed -/0 0 |\nnew 0 malformed -/0 0 |\n"
				  "new 0 malformed -/0 0 |\n"));
	/* a NUL inside a string: its length kept */
	assert_true(has(&whole, "new 18 ok 198.51.100.9/32 1500 a\0b\"c|{[\\\"}\n"));
	/* a scenario that is a number: malformed, whatever else is right */
	assert_true(has(&whole, "new 19 malformed "));
	assert_true(has(&whole, "new 21 ok 203.0.113.0/24 500000000 |\n"));
	assert_true(has(&whole, "del 10 ok -/0 0 |\ndel 0 malformed -/0 0 |\n"
				  "del 0 malformed -/0 0 |\n"));
	assert_int_equal(whole.n, 19);
	/* cut at every byte: the same */
	for (i = 0; i <= len; i++) {
		assert_int_equal(parse(answer, len, i, 0, &part, NULL, 0), 0);
		if (part.n != whole.n || part.len != whole.len ||
		    memcmp(part.text, whole.text, whole.len))
			fail_msg("cut at %zu: %zu elements\n%s", i, part.n, part.text);
	}
	/* a byte at a time, and in threes */
	assert_int_equal(parse(answer, len, 1, 1, &part, NULL, 0), 0);
	assert_int_equal(part.len, whole.len);
	assert_memory_equal(part.text, whole.text, whole.len);
	assert_int_equal(parse(answer, len, 0, 3, &part, NULL, 0), 0);
	assert_int_equal(part.len, whole.len);
	assert_memory_equal(part.text, whole.text, whole.len);
}

static void test_stream_hostile(void **state)
{
	static const struct {
		const char *a;
		int ret;
		int elems; /* handed on */
		const char *why; /* a part of s.why */
	} t[] = {
		{ "{\"deleted\":null,\"new\":null}", 0, 0, NULL },
		{ "{\"new\":[]}", 0, 0, NULL },
		{ " \r\n\t{ \"new\" : [ ] , \"deleted\" : [ ] } \n", 0, 0, NULL },
		{ "", -EBADMSG, 0, "ends before its end" },
		{ "{}", -EBADMSG, 0, "neither \"new\" nor \"deleted\"" },
		{ "{\"other\":[]}", -EBADMSG, 0, "neither" },
		{ "[]", -EBADMSG, 0, "not a JSON object" },
		{ "null", -EBADMSG, 0, "not a JSON object" },
		{ "garbage", -EBADMSG, 0, "at byte 0: not a JSON object" },
		{ "{\"new\":[]} x", -EBADMSG, 0, "at byte 11: text after the answer" },
		{ "{\"new\":[]}{}", -EBADMSG, 0, "text after" },
		{ "{\"new\":{}}", -EBADMSG, 0, "\"new\" is not an array" },
		{ "{\"deleted\":\"x\"}", -EBADMSG, 0, "\"deleted\" is not an array" },
		{ "{\"new\":nul}", -EBADMSG, 0, "bad literal" },
		{ "{\"new\":nullx}", -EBADMSG, 0, "'}' or ',' expected" },
		{ "{\"new\":[{\"id\":1}", -EBADMSG, 1, "ends before its end" },
		{ "{\"new\":[{\"id\":1},]}", -EBADMSG, 1, "a value expected" },
		{ "{\"new\":[,]}", -EBADMSG, 0, "a value expected" },
		{ "{\"new\":[{\"id\":1} {\"id\":2}]}", -EBADMSG, 1, "']' or ',' expected" },
		{ "{\"new\":[{\"id\":1,}]}", -EBADMSG, 0, "not JSON" },
		{ "{\"new\":[{\"id\":1]}]}", -EBADMSG, 0, "not JSON" },
		{ "{\"new\":[tru e]}", -EBADMSG, 0, "not JSON" },
		{ "{\"new\":[{\"id\":01}]}", -EBADMSG, 0, "not JSON" },
		{ "{\"new\" [] }", -EBADMSG, 0, "':' expected" },
		{ "{new:[]}", -EBADMSG, 0, "a member's name expected" },
		{ "{\"new\":[],}", -EBADMSG, 0, "a member's name expected" },
		{ "{\"x\":[1,2}", -EBADMSG, 0, "not JSON" },
		{ "{\"new\":[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}", -EBADMSG, 0,
		  "nested deeper than 16" },
		{ "{\"new\":[{\"id\":1,\"value\":\"\\\"]}\"}]}", 0, 1, NULL },
		{ "{\"new\":[{\"id\":99999999999999999999}]}", 0, 1, NULL },
		{ "{\"new\":[{\"id\":-5,\"type\":\"ban\"}]}", 0, 1, NULL },
		{ "{\"new\":[{\"id\":1.5}]}", 0, 1, NULL },
	};
	static struct rec r;
	char why[200];
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ret = parse(t[i].a, strlen(t[i].a), strlen(t[i].a), 0, &r, why, sizeof(why));
		if (ret != t[i].ret || (int)r.n != t[i].elems ||
		    (t[i].why && !strstr(why, t[i].why)))
			fail_msg("case %zu '%s': %d, %zu elements, '%s'", i, t[i].a, ret,
				 r.n, why);
	}
	/* ids that are no positive integer: refused, not taken as 0 */
	parse("{\"new\":[{\"id\":-5}, {\"id\":1.5}, {\"id\":true}]}", 43, 43, 0, &r, NULL, 0);
	assert_string_equal(r.text, "new 0 malformed -/0 0 |\nnew 0 malformed -/0 0 |\n"
				    "new 0 malformed -/0 0 |\n");
	/* the callback's error stops the parse with it */
	r.stop_at = 2;
	ret = parse("{\"new\":[{\"id\":1},{\"id\":2},{\"id\":3}]}", 36, 36, 0, &r, NULL, 0);
	r.stop_at = 0;
	assert_int_equal(ret, -ENOSPC);
	assert_int_equal(r.n, 1);
}

/* An element past BG_CS_ELEM_MAX: refused (too_large) without its bytes
 * being kept; the elements around it taken. */
static void test_stream_large(void **state)
{
	static struct rec r;
	size_t big = 3 * BG_CS_ELEM_MAX, len = 0, i;
	char *a = malloc(big + 512);
	int ret;

	(void)state;
	assert_non_null(a);
	len += (size_t)sprintf(a, "{\"new\":[{\"id\":1,\"type\":\"ban\",\"scope\":\"ip\","
			       "\"value\":\"192.0.2.1\",\"duration\":\"1s\"},"
			       "{\"id\":2,\"scenario\":\"");
	memset(a + len, 'x', big);
	len += big;
	len += (size_t)sprintf(a + len, "\",\"z\":[{}]},{\"id\":3,\"type\":\"ban\",\"scope\":"
			       "\"ip\",\"value\":\"192.0.2.3\",\"duration\":\"1s\"}]}");
	for (i = 0; i < 2; i++) {
		ret = parse(a, len, i ? 1000 : len, i ? 4096 : 0, &r, NULL, 0);
		assert_int_equal(ret, 0);
		assert_string_equal(r.text, "new 1 ok 192.0.2.1/32 1000000000 |\n"
					    "new 0 too_large -/0 0 |\n"
					    "new 3 ok 192.0.2.3/32 1000000000 |\n");
	}
	/* another member's large value is skipped, not refused */
	len = (size_t)sprintf(a, "{\"x\":\"");
	memset(a + len, 'y', big);
	len += big;
	len += (size_t)sprintf(a + len, "\",\"new\":null}");
	assert_int_equal(parse(a, len, len, 0, &r, NULL, 0), 0);
	assert_int_equal(r.n, 0);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_stream_splits),
		cmocka_unit_test(test_stream_hostile),
		cmocka_unit_test(test_stream_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
