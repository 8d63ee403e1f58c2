// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the control socket's requests (user/agent/request.c):
 * which are read, which write (root only), and what a request's
 * arguments may be.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "agent/request.h"

static void reads_and_writes(void **state)
{
	const char *args;

	(void)state;
	assert_int_equal(bg_req_parse("status", &args), BG_REQ_STATUS);
	assert_string_equal(args, "");
	assert_int_equal(bg_req_parse("stats", &args), BG_REQ_STATS);
	assert_int_equal(bg_req_parse("events", &args), BG_REQ_EVENTS);
	assert_int_equal(bg_req_parse("reload", &args), BG_REQ_RELOAD);
	assert_false(bg_req_writes(BG_REQ_STATUS));
	assert_false(bg_req_writes(BG_REQ_STATS));
	assert_false(bg_req_writes(BG_REQ_CHECK));
	assert_false(bg_req_writes(BG_REQ_EVENTS));
	assert_true(bg_req_writes(BG_REQ_RELOAD));
	assert_false(bg_req_writes(BG_REQ_UNKNOWN));
	assert_string_equal(bg_req_name(BG_REQ_RELOAD), "reload");
	assert_string_equal(bg_req_name(BG_REQ_UNKNOWN), "?");
}

static void arguments(void **state)
{
	const char *args;

	(void)state;
	assert_int_equal(bg_req_parse("check 192.0.2.1 a.example", &args), BG_REQ_CHECK);
	assert_string_equal(args, "192.0.2.1 a.example");
	assert_int_equal(bg_req_parse("status full", &args), BG_REQ_STATUS);
	assert_string_equal(args, "full");
	/* check needs one; the others take none */
	assert_int_equal(bg_req_parse("check", &args), BG_REQ_UNKNOWN);
	assert_int_equal(bg_req_parse("check ", &args), BG_REQ_UNKNOWN);
	assert_int_equal(bg_req_parse("stats now", &args), BG_REQ_UNKNOWN);
	assert_int_equal(bg_req_parse("events 5", &args), BG_REQ_UNKNOWN);
	/* a write with arguments is no read: unknown, refused either way */
	assert_int_equal(bg_req_parse("reload now", &args), BG_REQ_UNKNOWN);
	assert_string_equal(args, "");
}

static void not_requests(void **state)
{
	const char *args;

	(void)state;
	assert_int_equal(bg_req_parse("", &args), BG_REQ_UNKNOWN);
	assert_int_equal(bg_req_parse("statu", &args), BG_REQ_UNKNOWN);
	assert_int_equal(bg_req_parse("statuses", &args), BG_REQ_UNKNOWN);
	assert_int_equal(bg_req_parse("RELOAD", &args), BG_REQ_UNKNOWN);
	assert_int_equal(bg_req_parse(" reload", &args), BG_REQ_UNKNOWN);
	assert_int_equal(bg_req_parse("reloadx", &args), BG_REQ_UNKNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_and_writes),
		cmocka_unit_test(arguments),
		cmocka_unit_test(not_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
