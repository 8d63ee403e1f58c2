// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the load record (user/record.c): the JSON document `load`
 * writes to /run/bloomgate/ so that `check` re-reads every list, address
 * or domain, the way it was read -- format used and --subdomains included.
 * What is written is checked by reading it back with json-c, not through
 * bg_record_read alone; what is read is checked against hand-written
 * documents, junk and the old text record included.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lists.h"
#include "record.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

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

/* Member key of o, which must be there with type t. */
static struct json_object *member(struct json_object *o, const char *key,
				  json_type t)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("record: no \"%s\"", key);
	if (!json_object_is_type(v, t))
		fail_msg("record: \"%s\" is a %s, not a %s", key,
			 json_type_to_name(json_object_get_type(v)),
			 json_type_to_name(t));
	return v;
}

/* Files beside the record whose name starts with the record's: a temporary
 * file left behind by a write would be one. */
static int files_like_record(void)
{
	const char *base = strrchr(record, '/') + 1;
	struct dirent *de;
	DIR *d = opendir(BG_RECORD_DIR);
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, base, strlen(base));
	closedir(d);
	return n;
}

static void test_record_roundtrip(void **state)
{
	char cwd[PATH_MAX], *abs_rel;
	struct bg_source src[] = {
		{ .path = (char *)"/lists/ips.netset", .format = BG_FMT_ADDR },
		{ .path = (char *)"/lists/wide.txt", .format = BG_FMT_ADDR,
		  .allow_wide = 1 },
		{ .path = (char *)"/lists/hagezi.txt", .format = BG_FMT_PLAIN,
		  .subdomains = 1 },
		{ .path = (char *)"/lists/hosts file", .format = BG_FMT_HOSTS },
		{ .path = (char *)"/lists/ab.txt", .format = BG_FMT_ADBLOCK },
		/* JSON holds any path: a newline, a quote, a backslash, a
		 * byte that is not UTF-8 */
		{ .path = (char *)"/lists/new\nline \"q\" \\ \xe9.txt",
		  .format = BG_FMT_PLAIN },
		{ .path = (char *)"/lists/ok.txt", .format = BG_FMT_PLAIN,
		  .subdomains = 1, .allow = 1 },
		{ .path = (char *)"/lists/ok4.txt", .format = BG_FMT_ADDR, .allow = 1 },
		{ .path = (char *)"Makefile", .format = BG_FMT_ADDR },
	};
	struct json_object *root, *arr;
	struct bg_record r;
	size_t i;

	(void)state;
	if (!can_write_record())
		skip();
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_true(asprintf(&abs_rel, "%s/Makefile", cwd) > 0);
	assert_int_equal(bg_record_write(4242, src, N(src)), 0);
	/* nothing but the record itself: the temporary file was renamed */
	assert_int_equal(files_like_record(), 1);

	/* the document, as any JSON reader sees it */
	root = json_object_from_file(record);
	assert_non_null(root);
	assert_true(json_object_is_type(root, json_type_object));
	assert_int_equal(json_object_get_int64(member(root, "version", json_type_int)),
			 BG_RECORD_VERSION);
	assert_int_equal(json_object_get_int64(member(root, "filter_id", json_type_int)),
			 4242);
	arr = member(root, "sources", json_type_array);
	assert_int_equal(json_object_array_length(arr), N(src));
	for (i = 0; i < N(src); i++) {
		struct json_object *s = json_object_array_get_idx(arr, i);
		/* a relative path that exists is made absolute */
		const char *want = src[i].path[0] == '/' ? src[i].path : abs_rel;

		assert_true(json_object_is_type(s, json_type_object));
		assert_string_equal(json_object_get_string(member(s, "role", json_type_string)),
				    src[i].allow ? "allow" : "block");
		assert_string_equal(json_object_get_string(member(s, "format", json_type_string)),
				    bg_format_name(src[i].format));
		assert_int_equal(json_object_get_boolean(member(s, "subdomains",
								json_type_boolean)),
				 src[i].subdomains);
		assert_int_equal(json_object_get_boolean(member(s, "allow_wide",
								json_type_boolean)),
				 src[i].allow_wide);
		assert_string_equal(json_object_get_string(member(s, "path", json_type_string)),
				    want);
		assert_int_equal(json_object_object_length(s), 5);
	}
	assert_int_equal(json_object_object_length(root), 3);
	json_object_put(root);

	/* and as bg_record_read gives it back */
	assert_int_equal(bg_record_read(&r), 0);
	assert_int_equal(r.filter_id, 4242);
	assert_int_equal(r.n, (int)N(src));
	for (i = 0; i < N(src); i++) {
		assert_string_equal(r.src[i].path,
				    src[i].path[0] == '/' ? src[i].path : abs_rel);
		assert_int_equal(r.src[i].format, src[i].format);
		assert_int_equal(r.src[i].subdomains, src[i].subdomains);
		assert_int_equal(r.src[i].allow, src[i].allow);
		assert_int_equal(r.src[i].allow_wide, src[i].allow_wide);
	}
	bg_record_free(&r);
	assert_int_equal(r.n, 0);
	assert_null(r.src);
	free(abs_rel);
}

/* A second write replaces the record by rename: a new file (another inode),
 * so a reader holding the old one open reads it whole. */
static void test_record_replace(void **state)
{
	struct bg_source one = { .path = (char *)"/one.txt", .format = BG_FMT_HOSTS };
	struct stat before, after;
	struct bg_record r;

	(void)state;
	if (!can_write_record())
		skip();
	assert_int_equal(bg_record_write(1, &one, 1), 0);
	assert_int_equal(stat(record, &before), 0);
	assert_int_equal(bg_record_write(UINT32_MAX, NULL, 0), 0);
	assert_int_equal(stat(record, &after), 0);
	assert_true(before.st_ino != after.st_ino);
	assert_int_equal(files_like_record(), 1);
	assert_int_equal(bg_record_read(&r), 0);
	assert_int_equal(r.filter_id, UINT32_MAX);
	assert_int_equal(r.n, 0);
	assert_null(r.src);
	bg_record_free(&r);
}

static void write_record(const char *text)
{
	FILE *f = fopen(record, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_record_junk(void **state)
{
	struct bg_record r;

	(void)state;
	if (!can_write_record())
		skip();
	/* sources that are not understood are skipped, not guessed; members
	 * this version does not know are ignored */
	write_record("{\"version\":2,\"filter_id\":9,\"future\":[1],\"sources\":["
		     "{\"role\":\"block\",\"format\":\"auto\",\"subdomains\":false,\"path\":\"/auto.txt\"},"
		     "{\"role\":\"block\",\"format\":\"csv\",\"subdomains\":false,\"path\":\"/csv.txt\"},"
		     "{\"role\":\"deny\",\"format\":\"plain\",\"subdomains\":false,\"path\":\"/deny.txt\"},"
		     "{\"role\":\"block\",\"format\":\"plain\",\"subdomains\":true},"
		     "{\"role\":\"block\",\"format\":\"plain\",\"subdomains\":true,\"path\":\"\"},"
		     "{\"role\":\"block\",\"format\":\"plain\",\"subdomains\":1,\"path\":\"/one.txt\"},"
		     "{\"role\":\"block\",\"format\":\"plain\",\"subdomains\":true,\"path\":\"/a\\u0000b\"},"
		     "{\"role\":\"block\",\"format\":\"plain\",\"subdomains\":true,\"path\":7},"
		     "{\"role\":\"block\",\"format\":\"addr\",\"subdomains\":false,\"allow_wide\":1,\"path\":\"/w.txt\"},"
		     "\"/string.txt\",null,[],"
		     "{\"role\":\"allow\",\"format\":\"hosts\",\"subdomains\":true,\"path\":\"/h.txt\",\"new\":1}"
		     "]}\n");
	assert_int_equal(bg_record_read(&r), 0);
	assert_int_equal(r.filter_id, 9);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.src[0].path, "/h.txt");
	assert_int_equal(r.src[0].format, BG_FMT_HOSTS);
	assert_int_equal(r.src[0].subdomains, 1);
	assert_int_equal(r.src[0].allow, 1);
	/* absent (a record written before it): refused, the default */
	assert_int_equal(r.src[0].allow_wide, 0);
	bg_record_free(&r);
}

/* Documents that are not a record of this version: -EPROTO, and r is left
 * empty (bg_record_free on it is harmless). */
static void test_record_refused(void **state)
{
	static const char *const bad[] = {
		/* the text record before version 2 (only after an upgrade
		 * while attached: /run does not survive a reboot) */
		"filter 17\nsource block addr 0 /a.txt\n",
		"filter 17\nblock /a b.txt\nallow /c.txt\n",
		"",
		"{\"version\":2,\"filter_id\":1,\"sources\":[]",
		"{\"version\":2,\"filter_id\":1,\"sources\":[]} trailing",
		"{\"version\":2,\"filter_id\":1,\"sources\":[]}{}",
		"[{\"version\":2,\"filter_id\":1,\"sources\":[]}]",
		"{\"version\":3,\"filter_id\":1,\"sources\":[]}",
		"{\"version\":\"2\",\"filter_id\":1,\"sources\":[]}",
		"{\"filter_id\":1,\"sources\":[]}",
		"{\"version\":2,\"sources\":[]}",
		"{\"version\":2,\"filter_id\":-1,\"sources\":[]}",
		"{\"version\":2,\"filter_id\":4294967296,\"sources\":[]}",
		"{\"version\":2,\"filter_id\":1.5,\"sources\":[]}",
		"{\"version\":2,\"filter_id\":1}",
		"{\"version\":2,\"filter_id\":1,\"sources\":{}}",
	};
	struct bg_record r;
	size_t i;

	(void)state;
	if (!can_write_record())
		skip();
	for (i = 0; i < N(bad); i++) {
		int ret;

		write_record(bad[i]);
		ret = bg_record_read(&r);
		if (ret != -EPROTO)
			fail_msg("record \"%s\": %d, expected -EPROTO", bad[i], ret);
		assert_int_equal(r.n, 0);
		assert_null(r.src);
		bg_record_free(&r);
	}
	/* white space after the document is fine */
	write_record("\n {\"version\":2,\"filter_id\":1,\"sources\":[]} \n\t\n");
	assert_int_equal(bg_record_read(&r), 0);
	assert_int_equal(r.filter_id, 1);
	bg_record_free(&r);
	unlink(record);
	assert_int_equal(bg_record_read(&r), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_path),
		cmocka_unit_test(test_record_roundtrip),
		cmocka_unit_test(test_record_replace),
		cmocka_unit_test(test_record_junk),
		cmocka_unit_test(test_record_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
