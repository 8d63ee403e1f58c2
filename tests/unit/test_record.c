// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the load record (user/core/record.c): the JSON document `load`
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
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "core/lists.h"
#include "core/record.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char record[PATH_MAX], recdir[PATH_MAX];

/* A pin directory of our own, so the record never meets a real one. */
static int setup(void **state)
{
	char dir[64];

	(void)state;
	snprintf(dir, sizeof(dir), "/sys/fs/bpf/bg-test-record-%d", (int)getpid());
	setenv("BLOOMGATE_PIN_DIR", dir, 1);
	bg_record_path(record, sizeof(record));
	bg_record_dir(recdir, sizeof(recdir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	bg_record_keep(0);
	return 0;
}

/* The path of the record of filter id, in a static buffer. */
static const char *id_path(__u32 id)
{
	static char p[PATH_MAX];

	bg_record_id_path(p, sizeof(p), id);
	return p;
}

static int can_write_record(void)
{
	if (mkdir(BG_RECORD_DIR, 0700) == 0 || errno == EEXIST) {
		/* and each test starts with no record of ours */
		if (access(BG_RECORD_DIR, W_OK) == 0)
			return bg_record_keep(0) == 0;
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
	/* the records beside it, one per filter map id */
	assert_int_equal(snprintf(NULL, 0, "%s/_sys_fs_bpf_bg-test-record-%d.records",
				  BG_RECORD_DIR, (int)getpid()),
			 (int)strlen(recdir));
	assert_int_equal(strncmp(id_path(4294967295U), recdir, strlen(recdir)), 0);
	assert_string_equal(id_path(4294967295U) + strlen(recdir), "/4294967295");
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

/* The names in the records directory, sorted, joined by ' ' ("" when it
 * is empty, "-" when it does not exist): a temporary file left behind by a
 * write or a record that should have gone would show. */
static const char *records_in_dir(void)
{
	static char names[1024];
	struct dirent **v;
	int n, i;
	size_t o = 0;

	n = scandir(recdir, &v, NULL, alphasort);
	if (n < 0) {
		assert_int_equal(errno, ENOENT);
		return "-";
	}
	names[0] = 0;
	for (i = 0; i < n; i++) {
		if (strcmp(v[i]->d_name, ".") && strcmp(v[i]->d_name, ".."))
			o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s",
					      o ? " " : "", v[i]->d_name);
		free(v[i]);
	}
	free(v);
	return names;
}

/* Where the current record's symlink points ("-": no symlink). */
static const char *current(void)
{
	static char target[PATH_MAX];
	ssize_t n = readlink(record, target, sizeof(target) - 1);

	if (n < 0) {
		assert_int_equal(errno, ENOENT);
		return "-";
	}
	target[n] = 0;
	return target;
}

/* What current() is when the record of id is current: relative, the
 * directory's name then the id. */
static const char *target_of(__u32 id)
{
	static char t[PATH_MAX];

	snprintf(t, sizeof(t), "%s/%u", strrchr(recdir, '/') + 1, id);
	return t;
}

/* The filter id in the record P.lists leads to, as any reader following
 * the symlink reads it; -1 when there is none. */
static int64_t current_id(void)
{
	struct json_object *root = json_object_from_file(record), *v;
	int64_t id = -1;

	if (root && json_object_object_get_ex(root, "filter_id", &v))
		id = json_object_get_int64(v);
	json_object_put(root);
	return id;
}

static void test_record_roundtrip(void **state)
{
	char cwd[PATH_MAX], *abs_rel;
	struct bg_source src[] = {
		{ .path = (char *)"/lists/ips.netset", .list.format = BG_FMT_ADDR },
		{ .path = (char *)"/lists/wide.txt", .list.format = BG_FMT_ADDR,
		  .list.allow_wide = 1 },
		{ .path = (char *)"/lists/hagezi.txt", .list.format = BG_FMT_PLAIN,
		  .list.subdomains = 1 },
		{ .path = (char *)"/lists/hosts file", .list.format = BG_FMT_HOSTS },
		{ .path = (char *)"/lists/ab.txt", .list.format = BG_FMT_ADBLOCK },
		/* JSON holds any path: a newline, a quote, a backslash, a
		 * byte that is not UTF-8 */
		{ .path = (char *)"/lists/new\nline \"q\" \\ \xe9.txt",
		  .list.format = BG_FMT_PLAIN },
		{ .path = (char *)"/lists/ok.txt", .list.format = BG_FMT_PLAIN,
		  .list.subdomains = 1, .list.allow = 1 },
		{ .path = (char *)"/lists/ok4.txt", .list.format = BG_FMT_ADDR, .list.allow = 1 },
		{ .path = (char *)"Makefile", .list.format = BG_FMT_ADDR },
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
	assert_string_equal(records_in_dir(), "4242");
	/* written, not made current: that is the caller's after the swap */
	assert_string_equal(current(), "-");

	/* the document, as any JSON reader sees it */
	root = json_object_from_file(id_path(4242));
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
				    src[i].list.allow ? "allow" : "block");
		assert_string_equal(json_object_get_string(member(s, "format", json_type_string)),
				    bg_format_name(src[i].list.format));
		assert_int_equal(json_object_get_boolean(member(s, "subdomains",
								json_type_boolean)),
				 src[i].list.subdomains);
		assert_int_equal(json_object_get_boolean(member(s, "allow_wide",
								json_type_boolean)),
				 src[i].list.allow_wide);
		assert_string_equal(json_object_get_string(member(s, "path", json_type_string)),
				    want);
		assert_int_equal(json_object_object_length(s), 5);
	}
	assert_int_equal(json_object_object_length(root), 3);
	json_object_put(root);

	/* and as bg_record_read gives it back, by the filter's id */
	assert_int_equal(bg_record_read(4241, &r), -ENOENT);
	assert_int_equal(bg_record_read(4242, &r), 0);
	assert_int_equal(r.filter_id, 4242);
	assert_int_equal(r.n, (int)N(src));
	for (i = 0; i < N(src); i++) {
		assert_string_equal(r.src[i].path,
				    src[i].path[0] == '/' ? src[i].path : abs_rel);
		assert_int_equal(r.src[i].list.format, src[i].list.format);
		assert_int_equal(r.src[i].list.subdomains, src[i].list.subdomains);
		assert_int_equal(r.src[i].list.allow, src[i].list.allow);
		assert_int_equal(r.src[i].list.allow_wide, src[i].list.allow_wide);
	}
	bg_record_free(&r);
	assert_int_equal(r.n, 0);
	assert_null(r.src);
	free(abs_rel);
}

/* A second write of the same id replaces the record by rename: a new file
 * (another inode), so a reader holding the old one open reads it whole. */
static void test_record_replace(void **state)
{
	struct bg_source one = { .path = (char *)"/one.txt", .list.format = BG_FMT_HOSTS };
	struct stat before, after;
	struct bg_record r;

	(void)state;
	if (!can_write_record())
		skip();
	assert_int_equal(bg_record_write(UINT32_MAX, &one, 1), 0);
	assert_int_equal(stat(id_path(UINT32_MAX), &before), 0);
	assert_int_equal(bg_record_write(UINT32_MAX, NULL, 0), 0);
	assert_int_equal(stat(id_path(UINT32_MAX), &after), 0);
	assert_true(before.st_ino != after.st_ino);
	assert_string_equal(records_in_dir(), "4294967295");
	assert_int_equal(bg_record_read(UINT32_MAX, &r), 0);
	assert_int_equal(r.filter_id, UINT32_MAX);
	assert_int_equal(r.n, 0);
	assert_null(r.src);
	bg_record_free(&r);
}

/* A file (or a dangling symlink) of that name in the records directory. */
static void in_dir(const char *name, int link)
{
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", recdir, name);
	if (link) {
		assert_int_equal(symlink("nowhere", p), 0);
		return;
	}
	f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
}

/* bg_record_keep: the live record made current, every other file gone. */
static void test_record_keep(void **state)
{
	struct bg_source one = { .path = (char *)"/one.txt", .list.format = BG_FMT_PLAIN };
	struct stat before, after;

	(void)state;
	if (!can_write_record())
		skip();
	assert_int_equal(bg_record_keep(0), 0);
	assert_string_equal(records_in_dir(), "-");
	assert_int_equal(bg_record_write(7, &one, 1), 0);
	assert_int_equal(bg_record_write(8, &one, 1), 0);
	assert_int_equal(bg_record_write(70, &one, 1), 0);
	/* what killed writes leave: a temporary record, a temporary link */
	in_dir("8.Ab12Cd", 0);
	in_dir(".current", 1);
	assert_string_equal(records_in_dir(), ".current 7 70 8 8.Ab12Cd");

	assert_int_equal(bg_record_keep(7), 0);
	assert_string_equal(current(), target_of(7));
	assert_int_equal(current_id(), 7);
	/* 70 is not 7: names are compared whole */
	assert_string_equal(records_in_dir(), "7");
	/* again: nothing changes but the link, a new one */
	assert_int_equal(lstat(record, &before), 0);
	assert_int_equal(bg_record_keep(7), 0);
	assert_int_equal(lstat(record, &after), 0);
	assert_true(S_ISLNK(after.st_mode));
	assert_true(before.st_ino != after.st_ino);
	assert_string_equal(records_in_dir(), "7");

	/* the switch to another record */
	assert_int_equal(bg_record_write(8, &one, 1), 0);
	assert_int_equal(bg_record_keep(8), 0);
	assert_string_equal(current(), target_of(8));
	assert_string_equal(records_in_dir(), "8");

	/* a live filter without a record (its write failed): nothing to
	 * make current, and nothing else may pass for its record */
	assert_int_equal(bg_record_keep(9), 0);
	assert_string_equal(current(), "-");
	assert_string_equal(records_in_dir(), "-");

	/* no filter live (the last detach): everything goes */
	assert_int_equal(bg_record_write(10, &one, 1), 0);
	assert_int_equal(bg_record_keep(10), 0);
	assert_int_equal(bg_record_keep(0), 0);
	assert_string_equal(current(), "-");
	assert_string_equal(records_in_dir(), "-");
	assert_int_equal(bg_record_keep(0), 0);
}

/*
 * The load's sequence (user/kern/load.c bg_load_commit), killed at each point:
 * keep(live), write(new), swap, keep(new). After any prefix of it, the
 * record of whatever filter is live can be read by its id, and the next
 * load leaves only the live one.
 */
static void test_record_killed_load(void **state)
{
	struct bg_source a = { .path = (char *)"/a.txt", .list.format = BG_FMT_ADDR };
	struct bg_source b = { .path = (char *)"/b.txt", .list.format = BG_FMT_ADDR };
	struct bg_record r;
	int kill_at;

	(void)state;
	if (!can_write_record())
		skip();
	for (kill_at = 0; kill_at <= 4; kill_at++) {
		__u32 live = 100, next = 101;

		/* filter 100 live, its record current */
		assert_int_equal(bg_record_keep(0), 0);
		assert_int_equal(bg_record_write(live, &a, 1), 0);
		assert_int_equal(bg_record_keep(live), 0);
		/* a load of filter 101, killed after kill_at steps */
		if (kill_at > 0)
			assert_int_equal(bg_record_keep(live), 0);
		if (kill_at > 1)
			assert_int_equal(bg_record_write(next, &b, 1), 0);
		if (kill_at > 2)
			live = next; /* swapped */
		if (kill_at > 3)
			assert_int_equal(bg_record_keep(next), 0);
		/* check: the live filter explained by its own lists */
		assert_int_equal(bg_record_read(live, &r), 0);
		assert_int_equal(r.n, 1);
		assert_string_equal(r.src[0].path, live == 100 ? "/a.txt" : "/b.txt");
		bg_record_free(&r);
		/* the next load's first step leaves the live record alone */
		assert_int_equal(bg_record_keep(live), 0);
		assert_string_equal(records_in_dir(), live == 100 ? "100" : "101");
		assert_string_equal(current(), target_of(live));
	}
}

/* The record of an earlier layout, a file at P.lists: never read, replaced
 * by the next load's symlink. */
static void test_record_old_layout(void **state)
{
	struct bg_source one = { .path = (char *)"/one.txt", .list.format = BG_FMT_PLAIN };
	struct bg_record r;
	struct stat sb;
	FILE *f;

	(void)state;
	if (!can_write_record())
		skip();
	f = fopen(record, "w");
	assert_non_null(f);
	fputs("{\"version\":2,\"filter_id\":5,\"sources\":[]}\n", f);
	fclose(f);
	assert_int_equal(bg_record_read(5, &r), -ENOENT);
	assert_int_equal(bg_record_write(5, &one, 1), 0);
	assert_int_equal(bg_record_keep(5), 0);
	assert_int_equal(lstat(record, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	assert_int_equal(bg_record_read(5, &r), 0);
	assert_int_equal(r.n, 1);
	bg_record_free(&r);
}

/* A hand-written record of filter 9 (or of what the text says), in its
 * place. */
static void write_record(const char *text)
{
	FILE *f;

	mkdir(recdir, 0700);
	f = fopen(id_path(9), "w");

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
	assert_int_equal(bg_record_read(9, &r), 0);
	assert_int_equal(r.filter_id, 9);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.src[0].path, "/h.txt");
	assert_int_equal(r.src[0].list.format, BG_FMT_HOSTS);
	assert_int_equal(r.src[0].list.subdomains, 1);
	assert_int_equal(r.src[0].list.allow, 1);
	/* absent (a record written before it): refused, the default */
	assert_int_equal(r.src[0].list.allow_wide, 0);
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
		"{\"version\":2,\"filter_id\":9,\"sources\":[]",
		"{\"version\":2,\"filter_id\":9,\"sources\":[]} trailing",
		"{\"version\":2,\"filter_id\":9,\"sources\":[]}{}",
		"[{\"version\":2,\"filter_id\":9,\"sources\":[]}]",
		"{\"version\":3,\"filter_id\":9,\"sources\":[]}",
		"{\"version\":\"2\",\"filter_id\":9,\"sources\":[]}",
		"{\"filter_id\":9,\"sources\":[]}",
		"{\"version\":2,\"sources\":[]}",
		"{\"version\":2,\"filter_id\":-1,\"sources\":[]}",
		"{\"version\":2,\"filter_id\":4294967296,\"sources\":[]}",
		"{\"version\":2,\"filter_id\":9.5,\"sources\":[]}",
		"{\"version\":2,\"filter_id\":9}",
		"{\"version\":2,\"filter_id\":9,\"sources\":{}}",
		/* sound, but of another filter than its name says */
		"{\"version\":2,\"filter_id\":1,\"sources\":[]}",
	};
	struct bg_record r;
	size_t i;

	(void)state;
	if (!can_write_record())
		skip();
	for (i = 0; i < N(bad); i++) {
		int ret;

		write_record(bad[i]);
		ret = bg_record_read(9, &r);
		if (ret != -EPROTO)
			fail_msg("record \"%s\": %d, expected -EPROTO", bad[i], ret);
		assert_int_equal(r.n, 0);
		assert_null(r.src);
		bg_record_free(&r);
	}
	/* white space after the document is fine */
	write_record("\n {\"version\":2,\"filter_id\":9,\"sources\":[]} \n\t\n");
	assert_int_equal(bg_record_read(9, &r), 0);
	assert_int_equal(r.filter_id, 9);
	bg_record_free(&r);
	unlink(id_path(9));
	assert_int_equal(bg_record_read(9, &r), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_path),
		cmocka_unit_test(test_record_roundtrip),
		cmocka_unit_test(test_record_replace),
		cmocka_unit_test(test_record_keep),
		cmocka_unit_test(test_record_killed_load),
		cmocka_unit_test(test_record_old_layout),
		cmocka_unit_test(test_record_junk),
		cmocka_unit_test(test_record_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
