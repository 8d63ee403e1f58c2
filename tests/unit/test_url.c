// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for user/core/url.h: a URL's password never survives
 * bg_url_redact(), whatever the URL looks like or however short the room;
 * bg_hostport() splits what it should and refuses the rest, saying why.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "core/url.h"

static void expect(const char *in, const char *want)
{
	char out[256];

	assert_ptr_equal(bg_url_redact(in, out, sizeof(out)), out);
	assert_string_equal(out, want);
}

static void test_redact(void **state)
{
	(void)state;
	expect("http://alice:s3cretPW@lists.example/x.txt",
	       "http://alice:***@lists.example/x.txt");
	expect("https://TOKEN@lists.example/", "https://***@lists.example/");
	/* an '@' inside the password: the authority ends at the last one */
	expect("http://bob:p@ss@h.example:8080/a?b=c@d",
	       "http://bob:***@h.example:8080/a?b=c@d");
	/* '@' after the authority is no userinfo */
	expect("http://h.example/path@x", "http://h.example/path@x");
	expect("http://h.example/", "http://h.example/");
	expect("/etc/bloomgate/local.txt", "/etc/bloomgate/local.txt");
	expect("http://:pw@h.example/", "http://:***@h.example/");
	expect("", "");
}

/* Every room from 0 to past the whole URL: the result is a prefix of the
 * redacted URL (or "***" when not even the user name fits), never a byte
 * of the password. */
static void test_short_room(void **state)
{
	const char *url = "http://alice:s3cretPW@lists.example/x.txt";
	const char *full = "http://alice:***@lists.example/x.txt";
	char out[64];
	size_t len;

	(void)state;
	for (len = 1; len < sizeof(out); len++) {
		memset(out, 'X', sizeof(out));
		bg_url_redact(url, out, len);
		assert_true(strlen(out) < len);
		assert_null(strstr(out, "s3cret"));
		assert_null(strstr(out, "s3"));
		if (strcmp(out, "***") && strcmp(out, "**") && strcmp(out, "*"))
			assert_int_equal(strncmp(out, full, strlen(out)), 0);
	}
}

/* The one redaction, with its spans given: every span becomes the one
 * mask, and a short room never cuts a span in half. */
static void test_spans(void **state)
{
	const char *s = "host=db password=s3cret user=a password=x9";
	const struct bg_span v[] = { { 17, 6 }, { 40, 2 } };
	const char *full = "host=db password=" BG_URL_SECRET " user=a password=" BG_URL_SECRET;
	char out[64];
	size_t len;

	(void)state;
	assert_string_equal(bg_redact(s, v, 2, out, sizeof(out)), full);
	assert_string_equal(bg_redact(s, v, 0, out, sizeof(out)), s);
	assert_string_equal(BG_URL_SECRET, "***");
	for (len = 1; len < sizeof(out); len++) {
		bg_redact(s, v, 2, out, len);
		assert_true(strlen(out) < len);
		assert_int_equal(strncmp(out, full, strlen(out)), 0);
		assert_null(strstr(out, "s3"));
		assert_null(strstr(out, "x9"));
	}
}

static void hostport_ok(const char *s, unsigned int min, const char *host,
			unsigned int port, int v6)
{
	char h[64] = "";
	const char *why = NULL;
	unsigned int p = 12345;
	int b = -1;

	assert_int_equal(bg_hostport(s, min, h, sizeof(h), &p, &b, &why), 0);
	assert_string_equal(h, host);
	assert_int_equal(p, port);
	assert_int_equal(b, v6);
}

static void hostport_bad(const char *s, unsigned int min, const char *want)
{
	char h[64] = "untouched";
	const char *why = NULL;
	unsigned int p = 12345;

	assert_int_equal(bg_hostport(s, min, h, sizeof(h), &p, NULL, &why), -EINVAL);
	assert_non_null(why);
	assert_string_equal(why, want);
	assert_int_equal(p, 12345);
}

static void test_hostport(void **state)
{
	char tiny[4];
	const char *why = NULL;
	unsigned int p;

	(void)state;
	hostport_ok("127.0.0.1:9571", 1, "127.0.0.1", 9571, 0);
	hostport_ok("localhost:65535", 1, "localhost", 65535, 0);
	hostport_ok("[::1]:9571", 1, "::1", 9571, 1);
	hostport_ok("[fe80::1%eth0]:80", 1, "fe80::1%eth0", 80, 1);
	hostport_ok("0.0.0.0:0", 0, "0.0.0.0", 0, 0);
	hostport_ok("h:0009571", 1, "h", 9571, 0);
	hostport_bad("9571", 1, "no :PORT");
	hostport_bad("::1:9571", 1, "an IPv6 address needs brackets: [::1]:9571");
	hostport_bad("[::1]9571", 1, "an IPv6 address is written [ADDR]:PORT");
	hostport_bad("[::1", 1, "an IPv6 address is written [ADDR]:PORT");
	hostport_bad(":9571", 1, "no host");
	hostport_bad("[]:9571", 1, "no host");
	hostport_bad("h:", 1, "the port is not a number");
	hostport_bad("h:http", 1, "the port is not a number");
	hostport_bad("h:+80", 1, "the port is not a number");
	hostport_bad("h:80 ", 1, "the port is not a number");
	hostport_bad("h:65536", 1, "the port is not 1..65535");
	hostport_bad("h:0", 1, "the port is not 1..65535");
	hostport_bad("h:65536", 0, "the port is not 0..65535");
	/* no overflow: twenty digits are still too many */
	hostport_bad("h:18446744073709551617", 0, "the port is not 0..65535");
	/* a host longer than the room is refused, not cut */
	assert_int_equal(bg_hostport("abcd:1", 1, tiny, sizeof(tiny), &p, NULL, &why),
			 -EINVAL);
	assert_string_equal(why, "no host");
	assert_int_equal(bg_hostport("abc:1", 1, tiny, sizeof(tiny), &p, NULL, &why), 0);
	assert_string_equal(tiny, "abc");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_short_room),
		cmocka_unit_test(test_spans),
		cmocka_unit_test(test_hostport),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
