/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers shared by the list suites (tests/unit/test_lists.c for address
 * lists, tests/unit/test_domains.c for domain lists): tables of cases whose
 * failures name the row, the capture of a parse report, temporary files,
 * and the optional real lists in ../shared/data. Needs cmocka.
 */
#ifndef BLOOMGATE_TESTS_LISTS_HELPERS_H
#define BLOOMGATE_TESTS_LISTS_HELPERS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Relative to the repository root, the working directory of `make test`. */
#define SHARED_DATA "../shared/data/"

/* ---- Case tables --------------------------------------------------------- */

/*
 * A table driver names the row it checks with tcase_begin(); the check_*()
 * macros print that row (table, index, name) before a failing assertion,
 * since cmocka's own message only says which line of the driver failed.
 */
struct tcase {
	const char *table;
	size_t index;
	const char *name;
};

static struct tcase tcase_cur __attribute__((unused));

static inline void tcase_begin(const char *table, size_t index,
			       const char *name)
{
	tcase_cur.table = table;
	tcase_cur.index = index;
	tcase_cur.name = name;
}

static inline void tcase_end(void)
{
	tcase_cur.table = NULL;
}

static inline void tcase_failed(void)
{
	if (tcase_cur.table)
		print_message("FAILED CASE %s[%zu]: %s\n", tcase_cur.table,
			      tcase_cur.index,
			      tcase_cur.name ? tcase_cur.name : "");
}

#define check_int(got, want)                                               \
	do {                                                               \
		const uintmax_t g_ = (uintmax_t)(got), w_ = (uintmax_t)(want); \
		if (g_ != w_)                                              \
			tcase_failed();                                    \
		assert_int_equal(g_, w_);                                  \
	} while (0)

#define check_true(cond)                                                   \
	do {                                                               \
		const int c_ = !!(cond);                                   \
		if (!c_)                                                   \
			tcase_failed();                                    \
		assert_true(c_);                                           \
	} while (0)

#define check_str(got, want)                                               \
	do {                                                               \
		const char *g_ = (got), *w_ = (want);                      \
		if (!g_ || !w_ || strcmp(g_, w_))                          \
			tcase_failed();                                    \
		assert_string_equal(g_, w_);                               \
	} while (0)

#define check_mem(got, want, n)                                            \
	do {                                                               \
		const size_t n_ = (n);                                     \
		if (memcmp((got), (want), n_))                             \
			tcase_failed();                                    \
		assert_memory_equal((got), (want), n_);                    \
	} while (0)

/* A table: its rows, how many, the size of one, its name. */
struct table_ref {
	const void *rows;
	size_t n, size;
	const char *name;
};

#define TABLE_REF(table)                                                   \
	(&(const struct table_ref){ (table), ARRAY_SIZE(table),            \
				    sizeof((table)[0]), #table })

/*
 * One cmocka test per table: TABLE_TEST(driver, name), in the CMUnitTest
 * array of main(), is the test "test_name" that runs driver with the
 * table (a struct table_ref) as its state.
 */
#define TABLE_TEST(driver, table)                                          \
	{ "test_" #table, (driver), NULL, NULL, (void *)TABLE_REF(table) }

/* run(row) for every row, each named by name(row) for failures. */
static inline void run_table(const struct table_ref *t,
			     const char *(*name)(const void *row),
			     void (*run)(const void *row))
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		const void *row = (const char *)t->rows + i * t->size;

		tcase_begin(t->name, i, name(row));
		run(row);
	}
	tcase_end();
}

/* Format detection: a text and the format it must be detected as. */
struct detect_case {
	const char *text;
	size_t len;
	int want;
};

/* String literals may hold NUL bytes: take their size, not strlen. */
#define DETECT_CASE(lit, format) { (lit), sizeof(lit) - 1, (format) }

static inline void run_detect_table(const char *table,
				    const struct detect_case *c, size_t n,
				    int (*detect)(const char *buf, size_t len))
{
	size_t i;

	for (i = 0; i < n; i++) {
		tcase_begin(table, i, c[i].text);
		check_int(detect(c[i].text, c[i].len), c[i].want);
	}
	tcase_end();
}

/* ---- Reports ------------------------------------------------------------- */

/* What a parse writes to its report stream, captured in memory. */
struct capture {
	FILE *f;
	char *text;
	size_t size;
};

static inline FILE *capture_open(struct capture *c)
{
	c->text = NULL;
	c->size = 0;
	c->f = open_memstream(&c->text, &c->size);
	assert_non_null(c->f);
	return c->f;
}

/* Closes the stream; the text stays in c->text until capture_free(). */
static inline const char *capture_close(struct capture *c)
{
	assert_int_equal(fclose(c->f), 0);
	c->f = NULL;
	assert_non_null(c->text);
	return c->text;
}

static inline void capture_free(struct capture *c)
{
	free(c->text);
	c->text = NULL;
}

/* ---- Files --------------------------------------------------------------- */

/* A temporary file holding text; returns its malloc'd path. */
static inline char *write_temp(const char *text, size_t len)
{
	const char *dir = getenv("TMPDIR");
	char *path;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	assert_true(asprintf(&path, "%s/bloomgate_test.XXXXXX", dir) > 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
	return path;
}

/* 1 if path can be read; else says why what needs it is skipped. */
static inline int have_file(const char *path)
{
	if (access(path, R_OK) == 0)
		return 1;
	print_message("skipping: %s not found (the shared data is optional; "
		      "run from the repository root with it next to it)\n",
		      path);
	return 0;
}

/*
 * Several real lists into one set, as `load a b c d` does: skips the test
 * unless every one of paths[0..n) is there, then parse(list, path) for
 * each (the suite's strict parse of one file into its kind of list).
 */
static inline void parse_real_set(const char *const *paths, size_t n,
				  void (*parse)(void *list, const char *path),
				  void *list)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!have_file(paths[i]))
			skip();
	for (i = 0; i < n; i++)
		parse(list, paths[i]);
}

#endif
