// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the load record (user/state.c): what `load` writes to
 * /run/bloomgate/ so that `check` re-reads every list, address or domain,
 * the way it was read -- format used and --subdomains included -- and
 * records of the first version (address lists only).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lists.h"
#include "state.h"

static char record[PATH_MAX];

/* A pin directory of our own, so the record never meets a real one. */
static int setup(void **state)
{
	char dir[64];

	(void)state;
	snprintf(dir, sizeof(dir), "/sys/fs/bpf/bg-test-record-%d", (int)getpid());
	setenv("BLOOMGATE_PIN_DIR", dir, 1);
	bg_record_path(record, sizeof(record));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(record);
	return 0;
}

static int can_write_record(void)
{
	if (mkdir(BG_RECORD_DIR, 0700) == 0 || errno == EEXIST) {
		if (access(BG_RECORD_DIR, W_OK) == 0)
			return 1;
	}
	print_message("skipping: %s is not writable (run as root)\n", BG_RECORD_DIR);
	return 0;
}

static void test_record_path(void **state)
{
	(void)state;
	/* one file per pin directory, '/' made '_' */
	assert_int_equal(snprintf(NULL, 0, "%s/_sys_fs_bpf_bg-test-record-%d.lists",
				  BG_RECORD_DIR, (int)getpid()),
			 (int)strlen(record));
	assert_non_null(strstr(record, "/run/bloomgate/_sys_fs_bpf_bg-test-record-"));
}

static void test_record_roundtrip(void **state)
{
	char cwd[PATH_MAX], *abs_rel;
	struct bg_source src[] = {
		{ .path = (char *)"/lists/ips.netset", .format = BG_SRC_ADDR },
		{ .path = (char *)"/lists/hagezi.txt", .format = BG_SRC_PLAIN,
		  .subdomains = 1 },
		{ .path = (char *)"/lists/hosts file", .format = BG_SRC_HOSTS },
		{ .path = (char *)"/lists/ab.txt", .format = BG_SRC_ADBLOCK },
		{ .path = (char *)"/lists/new\nline", .format = BG_SRC_PLAIN },
		{ .path = (char *)"/lists/ok.txt", .format = BG_SRC_PLAIN,
		  .subdomains = 1, .allow = 1 },
		{ .path = (char *)"/lists/ok4.txt", .format = BG_SRC_ADDR, .allow = 1 },
		{ .path = (char *)"Makefile", .format = BG_SRC_ADDR },
	};
	struct bg_record r;
	size_t i, j;

	(void)state;
	if (!can_write_record())
		skip();
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_true(asprintf(&abs_rel, "%s/Makefile", cwd) > 0);
	assert_int_equal(bg_record_write(4242, src, sizeof(src) / sizeof(src[0])), 0);
	assert_int_equal(bg_record_read(&r), 0);
	assert_int_equal(r.filter_id, 4242);
	/* the path holding a newline cannot be one line: left out */
	assert_int_equal(r.n, (int)(sizeof(src) / sizeof(src[0])) - 1);
	for (i = 0, j = 0; i < sizeof(src) / sizeof(src[0]); i++) {
		if (strchr(src[i].path, '\n'))
			continue;
		/* a relative path that exists is made absolute */
		assert_string_equal(r.src[j].path,
				    src[i].path[0] == '/' ? src[i].path : abs_rel);
		assert_int_equal(r.src[j].format, src[i].format);
		assert_int_equal(r.src[j].subdomains, src[i].subdomains);
		assert_int_equal(r.src[j].allow, src[i].allow);
		j++;
	}
	bg_record_free(&r);
	assert_int_equal(r.n, 0);
	assert_null(r.src);
	free(abs_rel);
}

static void write_record(const char *text)
{
	FILE *f = fopen(record, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_record_compat_and_junk(void **state)
{
	struct bg_record r;

	(void)state;
	if (!can_write_record())
		skip();
	/* the first version: address lists */
	write_record("filter 17\nblock /a b.txt\nallow /c.txt\n");
	assert_int_equal(bg_record_read(&r), 0);
	assert_int_equal(r.filter_id, 17);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.src[0].path, "/a b.txt");
	assert_int_equal(r.src[0].format, BG_SRC_ADDR);
	assert_int_equal(r.src[0].allow, 0);
	assert_string_equal(r.src[1].path, "/c.txt");
	assert_int_equal(r.src[1].allow, 1);
	bg_record_free(&r);
	/* lines that are not understood are skipped, not guessed */
	write_record("filter 9\n"
		     "source block auto 0 /auto.txt\n"
		     "source block csv 0 /csv.txt\n"
		     "source deny plain 0 /deny.txt\n"
		     "source block plain 1\n"
		     "source block\n"
		     "future line\n"
		     "source allow hosts 0 /h.txt\n");
	assert_int_equal(bg_record_read(&r), 0);
	assert_int_equal(r.filter_id, 9);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.src[0].path, "/h.txt");
	assert_int_equal(r.src[0].format, BG_SRC_HOSTS);
	assert_int_equal(r.src[0].allow, 1);
	bg_record_free(&r);
	unlink(record);
	assert_int_equal(bg_record_read(&r), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_path),
		cmocka_unit_test(test_record_roundtrip),
		cmocka_unit_test(test_record_compat_and_junk),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
