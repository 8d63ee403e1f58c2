// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the core's small shared helpers: the array grower
 * (user/core/grow.h) grows to what is asked and refuses a size that
 * overflows, leaving the array as it was; the why-buffer (bg_whyf(),
 * user/core/units.h) writes one bounded line and nothing where there is
 * no room; the clocks (user/core/clock.h) agree with one another and a
 * deadline is normalized.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/grow.h"
#include "core/units.h"

static void test_grow(void **state)
{
	uint32_t *v = NULL, *was;
	size_t cap = 0, i;

	(void)state;
	/* nothing asked: nothing allocated */
	assert_int_equal(bg_grow(&v, &cap, 0, sizeof(*v), 16), 0);
	assert_null(v);
	assert_int_equal(cap, 0);
	/* the first room is min */
	assert_int_equal(bg_grow(&v, &cap, 1, sizeof(*v), 16), 0);
	assert_non_null(v);
	assert_int_equal(cap, 16);
	/* room already there: nothing moves */
	was = v;
	assert_int_equal(bg_grow(&v, &cap, 16, sizeof(*v), 16), 0);
	assert_ptr_equal(v, was);
	assert_int_equal(cap, 16);
	/* one more doubles; far more doubles until it fits */
	assert_int_equal(bg_grow(&v, &cap, 17, sizeof(*v), 16), 0);
	assert_int_equal(cap, 32);
	assert_int_equal(bg_grow(&v, &cap, 1000, sizeof(*v), 16), 0);
	assert_int_equal(cap, 1024);
	for (i = 0; i < 1000; i++) /* every element writable (ASan) */
		v[i] = (uint32_t)i;
	/* sizes that overflow: refused, the array and cap untouched */
	was = v;
	assert_int_equal(bg_grow(&v, &cap, SIZE_MAX / 2 + 2, sizeof(*v), 16), -ENOMEM);
	assert_int_equal(bg_grow(&v, &cap, SIZE_MAX / sizeof(*v) + 1, sizeof(*v), 16),
			 -ENOMEM);
	assert_ptr_equal(v, was);
	assert_int_equal(cap, 1024);
	assert_int_equal(v[999], 999);
	free(v);
	/* min 0: 8 */
	v = NULL;
	cap = 0;
	assert_int_equal(bg_grow(&v, &cap, 3, sizeof(*v), 0), 0);
	assert_int_equal(cap, 8);
	free(v);
}

static void test_whyf(void **state)
{
	char why[8] = "xxxxxxx";

	(void)state;
	bg_whyf(why, sizeof(why), "%s %d", "abc", 42);
	assert_string_equal(why, "abc 42");
	/* cut to the room, NUL-terminated */
	bg_whyf(why, sizeof(why), "%s", "0123456789");
	assert_string_equal(why, "0123456");
	/* no room, or no buffer: nothing written, nothing crashes */
	bg_whyf(why, 0, "%s", "zz");
	assert_string_equal(why, "0123456");
	bg_whyf(NULL, 16, "%s", "zz");
}

static void test_clock(void **state)
{
	struct timespec ts;
	double a, ms, b, w;
	uint64_t ns;

	(void)state;
	a = bg_mono();
	ms = bg_mono_ms();
	ns = bg_mono_ns();
	b = bg_mono();
	/* the three monotonic readers read the same clock, in their units */
	assert_true(ms / 1e3 >= a - 1e-6 && ms / 1e3 <= b + 1e-6);
	assert_true((double)ns / 1e9 >= a - 1e-6 && (double)ns / 1e9 <= b + 1e-6);
	w = bg_wall();
	assert_true(w > 1.5e9); /* after 2017: the wall clock, not the monotonic */
	assert_true((double)bg_wall_ns() / 1e9 >= w - 1e-6);
	/* a deadline: the wall clock plus secs, tv_nsec below a second */
	bg_deadline(&ts, 2.75);
	assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
	assert_true((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 >= w + 2.75 - 1e-3);
	assert_true((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 < bg_wall() + 2.75 + 1e-3);
	bg_deadline(&ts, -1);
	assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
	assert_true((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 <= bg_wall() + 1e-3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_whyf),
		cmocka_unit_test(test_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
