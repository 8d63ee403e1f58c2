// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for user/core/url.h: a URL's password never survives
 * bg_url_redact(), whatever the URL looks like or however short the room.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

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
	assert_true(bg_url_has_secret("http://a:b@h/"));
	assert_true(bg_url_has_secret("http://a@h/"));
	assert_false(bg_url_has_secret("http://h/a@b"));
	assert_false(bg_url_has_secret(NULL));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_short_room),
		cmocka_unit_test(test_spans),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
