// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the option tables (user/core/opts.c): each type's parsing and
 * validation, ranges, enums, repeat counts, the order in which set() and
 * positional callbacks see the arguments, --x=y, "--", "-", -h anywhere,
 * one-line errors, and the synopsis and help generated from a table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/opts.h"

struct ctx {
	int flag, color;
	unsigned long long num;
	double ratio;
	const char *iface, *path, *name, *one;
	char log[256]; /* "fmt:x pos:a ..." in callback order */
	int fail_set; /* the set() callback returns this */
	int done_calls;
	unsigned int done_npos;
};

static const struct ctx defaults = { .color = 2, .ratio = 0.25 };

static void log_add(struct ctx *c, const char *what, const char *arg)
{
	size_t n = strlen(c->log);

	snprintf(c->log + n, sizeof(c->log) - n, "%s%s:%s", n ? " " : "", what,
		 arg ? arg : "-");
}

static int on_set(void *ctx, const struct bg_opt *o, const struct bg_optval *v,
		  char *err, size_t errlen)
{
	struct ctx *c = ctx;

	if (c->fail_set) {
		snprintf(err, errlen, "--%s: refused", o->name);
		return c->fail_set;
	}
	log_add(c, o->name, v->arg);
	return 0;
}

static int on_pos(void *ctx, const struct bg_opt *o, const struct bg_optval *v,
		  char *err, size_t errlen)
{
	(void)o;
	(void)err;
	(void)errlen;
	log_add(ctx, "pos", v->arg);
	return 0;
}

static int on_done(void *ctx, unsigned int npos, char *err, size_t errlen)
{
	struct ctx *c = ctx;

	c->done_calls++;
	c->done_npos = npos;
	if (c->flag && c->num == 13) {
		snprintf(err, errlen, "demo: --flag and 13 do not mix");
		return -EINVAL;
	}
	return 0;
}

static const struct bg_opt_enum colors[] = {
	{ "red", 1, "the first" },
	{ "green", 2, "the second" },
	{ "blue", 3, NULL }, /* accepted, not described */
	{ NULL },
};

static const struct bg_opt_enum kinds[] = {
	{ "a", 10, "kind a" },
	{ "b", 20, "kind b" },
	{ NULL },
};

static const struct bg_opt demo_opts[] = {
	{ .name = "flag", .short_name = 'f', .type = BG_OPT_FLAG, .help = "a flag",
	  .off = offsetof(struct ctx, flag) },
	{ .name = "color", .type = BG_OPT_ENUM, .values = colors, .help = "a color",
	  .off = offsetof(struct ctx, color) },
	{ .name = "num", .short_name = 'n', .type = BG_OPT_UINT, .metavar = "N",
	  .help = "a number", .min = 1, .max = 100, .max_count = 3,
	  .off = offsetof(struct ctx, num) },
	{ .name = "ratio", .type = BG_OPT_DOUBLE, .metavar = "R", .help = "a ratio",
	  .min = 0, .max = 1, .flags = BG_OPT_F_MIN_OPEN,
	  .off = offsetof(struct ctx, ratio) },
	{ .name = "iface", .type = BG_OPT_IFNAME, .metavar = "IF", .help = "an interface",
	  .off = offsetof(struct ctx, iface) },
	{ .name = "path", .type = BG_OPT_PATH, .metavar = "FILE", .help = "a file",
	  .flags = BG_OPT_F_EXISTS, .off = offsetof(struct ctx, path) },
	{ .name = "name", .type = BG_OPT_STRING, .metavar = "S", .help = "a string",
	  .off = offsetof(struct ctx, name) },
	{ .name = "kind", .type = BG_OPT_ENUM, .metavar = "K", .values = kinds,
	  .help = "applies to what follows", .max_count = BG_OPT_MANY, .set = on_set },
	{ .name = "hidden", .type = BG_OPT_FLAG, .help = "not in the synopsis",
	  .max_count = BG_OPT_MANY, .flags = BG_OPT_F_NOSYN, .set = on_set },
	{ NULL },
};

static const struct bg_opt demo_pos = {
	.type = BG_OPT_PATH, .metavar = "FILE", .help = "input files", .set = on_pos,
};

static const struct bg_cmd demo = {
	.name = "demo", .summary = "A command for the tests.",
	.details = "Free text after the options.",
	.opts = demo_opts, .pos = &demo_pos, .min_pos = 1, .max_pos = 3,
	.defaults = &defaults, .done = on_done,
};

/* One positional, stored: like attach IFACE. */
static const struct bg_opt one_pos = {
	.type = BG_OPT_IFNAME, .metavar = "IFACE", .help = "the interface",
	.off = offsetof(struct ctx, one),
};

static const struct bg_cmd one = {
	.name = "one", .opts = demo_opts, .pos = &one_pos, .min_pos = 1,
	.max_pos = 1, .pos_first = 1,
};

static const struct bg_cmd bare = { .name = "bare" };

/* A size (BG_OPT_F_SIZE), like load's --max-list-bytes. */
static const struct bg_opt size_opts[] = {
	{ .name = "size", .type = BG_OPT_UINT, .metavar = "SIZE", .help = "a size",
	  .min = 1, .max = 1 << 30, .flags = BG_OPT_F_SIZE,
	  .off = offsetof(struct ctx, num) },
	{ NULL },
};

static const struct bg_cmd sized = { .name = "sized", .opts = size_opts };

static char err[256];
static char *args[32];

/* Parses the NULL-terminated words with cmd into c (from the defaults). */
#define PARSE(cmd, c, ...) parse(cmd, c, (const char *[]){ "cmd", __VA_ARGS__, NULL })

static int parse(const struct bg_cmd *cmd, struct ctx *c, const char **words)
{
	int n = 0;

	*c = defaults;
	while (words[n] && n < 31) {
		args[n] = (char *)words[n];
		n++;
	}
	args[n] = NULL;
	memset(err, 'x', sizeof(err));
	return bg_opts_parse(cmd, n, args, c, err, sizeof(err));
}

static void test_types(void **state)
{
	struct ctx c;

	(void)state;
	assert_int_equal(PARSE(&demo, &c, "--flag", "--color", "red", "--num=42",
			       "--ratio", "0.5", "--iface", "lo", "--path=/",
			       "--name", "x y", "in"), 1);
	assert_string_equal(err, ""); /* cleared on success */
	assert_int_equal(c.flag, 1);
	assert_int_equal(c.color, 1);
	assert_int_equal(c.num, 42);
	assert_true(c.ratio == 0.5);
	assert_string_equal(c.iface, "lo");
	assert_string_equal(c.path, "/");
	assert_string_equal(c.name, "x y");
	assert_string_equal(c.log, "pos:in");

	/* short forms, "-n 5" and "-n5"; defaults stay when not given */
	assert_int_equal(PARSE(&demo, &c, "-f", "-n", "5", "in"), 1);
	assert_int_equal(c.flag, 1);
	assert_int_equal(c.num, 5);
	assert_int_equal(c.color, 2);
	assert_true(c.ratio == 0.25);
	assert_int_equal(PARSE(&demo, &c, "-n5", "in"), 1);
	assert_int_equal(c.num, 5);
	/* a value may start with '-' */
	assert_int_equal(PARSE(&demo, &c, "--name", "-x", "in"), 1);
	assert_string_equal(c.name, "-x");
	/* an enum value without help is still accepted */
	assert_int_equal(PARSE(&demo, &c, "--color=blue", "in"), 1);
	assert_int_equal(c.color, 3);
}

static void test_ranges(void **state)
{
	struct ctx c;

	(void)state;
	assert_int_equal(PARSE(&demo, &c, "--num", "1", "in"), 1);
	assert_int_equal(PARSE(&demo, &c, "--num", "100", "in"), 1);
	assert_int_equal(PARSE(&demo, &c, "--num", "101", "in"), -EINVAL);
	assert_string_equal(err, "--num: 101 is out of range 1..100");
	assert_int_equal(PARSE(&demo, &c, "--num", "0", "in"), -EINVAL);
	assert_string_equal(err, "--num: 0 is out of range 1..100");
	assert_int_equal(PARSE(&demo, &c, "--num", "99999999999999999999999", "in"),
			 -EINVAL);
	assert_non_null(strstr(err, "out of range"));
	/* strtoull() would take these */
	assert_int_equal(PARSE(&demo, &c, "--num", "-1", "in"), -EINVAL);
	assert_string_equal(err, "--num: '-1' is not a whole number");
	assert_int_equal(PARSE(&demo, &c, "--num", " 5", "in"), -EINVAL);
	assert_int_equal(PARSE(&demo, &c, "--num", "+5", "in"), -EINVAL);
	assert_int_equal(PARSE(&demo, &c, "--num", "5x", "in"), -EINVAL);
	assert_string_equal(err, "--num: '5x' is not a whole number");
	assert_int_equal(PARSE(&demo, &c, "--num=", "in"), -EINVAL);

	/* the ratio's minimum is open: 0 is out, 1 is in */
	assert_int_equal(PARSE(&demo, &c, "--ratio", "1", "in"), 1);
	assert_int_equal(PARSE(&demo, &c, "--ratio", "1e-300", "in"), 1);
	assert_int_equal(PARSE(&demo, &c, "--ratio", "0", "in"), -EINVAL);
	assert_string_equal(err, "--ratio: 0 is out of range > 0 and <= 1");
	assert_int_equal(PARSE(&demo, &c, "--ratio", "1.0001", "in"), -EINVAL);
	assert_int_equal(PARSE(&demo, &c, "--ratio", "nan", "in"), -EINVAL);
	assert_string_equal(err, "--ratio: 'nan' is not a number");
	assert_int_equal(PARSE(&demo, &c, "--ratio", "inf", "in"), -EINVAL);
	assert_int_equal(PARSE(&demo, &c, "--ratio", "", "in"), -EINVAL);
	assert_int_equal(PARSE(&demo, &c, "--ratio", "0.5s", "in"), -EINVAL);
	assert_string_equal(err, "--ratio: '0.5s' is not a number");
}

/* K, M, G are powers of 1024; anything else after the digits, a sign, a
 * fraction or a value past the range is refused with the option's name. */
static void test_sizes(void **state)
{
	struct ctx c;

	(void)state;
	assert_int_equal(PARSE(&sized, &c, "--size", "100000"), 0);
	assert_int_equal(c.num, 100000);
	assert_int_equal(PARSE(&sized, &c, "--size=64K"), 0);
	assert_int_equal(c.num, 65536);
	assert_int_equal(PARSE(&sized, &c, "--size", "3M"), 0);
	assert_int_equal(c.num, 3 << 20);
	assert_int_equal(PARSE(&sized, &c, "--size", "1G"), 0);
	assert_int_equal(c.num, 1 << 30);
	assert_int_equal(PARSE(&sized, &c, "--size", "2G"), -EINVAL);
	assert_string_equal(err, "--size: 2G is out of range 1..1073741824");
	assert_int_equal(PARSE(&sized, &c, "--size", "0"), -EINVAL);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(PARSE(&sized, &c, "--size", "3X"), -EINVAL);
	assert_string_equal(err, "--size: '3X' is not a size (digits, then K, M or G if any)");
	assert_int_equal(PARSE(&sized, &c, "--size", "1.5M"), -EINVAL);
	assert_int_equal(PARSE(&sized, &c, "--size", "-1"), -EINVAL);
	assert_int_equal(PARSE(&sized, &c, "--size", "1MB"), -EINVAL);
	assert_int_equal(PARSE(&sized, &c, "--size", "m"), -EINVAL);
	assert_int_equal(PARSE(&sized, &c, "--size", "99999999999999999999G"), -EINVAL);
}

static void test_enum_ifname_path(void **state)
{
	struct ctx c;

	(void)state;
	assert_int_equal(PARSE(&demo, &c, "--color", "Red", "in"), -EINVAL);
	assert_string_equal(err, "--color: 'Red' is not one of red, green, blue");
	assert_int_equal(PARSE(&demo, &c, "--iface", "bg-no-such0", "in"), -EINVAL);
	assert_string_equal(err, "--iface: interface 'bg-no-such0' does not exist");
	assert_int_equal(PARSE(&demo, &c, "--iface", "", "in"), -EINVAL);
	/* longer than IF_NAMESIZE: not an interface, whatever its prefix */
	assert_int_equal(PARSE(&demo, &c, "--iface", "lo0123456789abcdef", "in"),
			 -EINVAL);
	assert_int_equal(PARSE(&demo, &c, "--path", "/no/such/file", "in"), -EINVAL);
	assert_string_equal(err, "--path: '/no/such/file': No such file or directory");
	assert_int_equal(PARSE(&demo, &c, "--path", "-", "in"), 1); /* stdin */
	assert_string_equal(c.path, "-");

	/* positional type check, named by the command */
	assert_int_equal(PARSE(&one, &c, "bg-no-such0"), -EINVAL);
	assert_string_equal(err, "one: interface 'bg-no-such0' does not exist");
	assert_int_equal(PARSE(&one, &c, "lo"), 1);
	assert_string_equal(c.one, "lo");
}

static void test_repeats(void **state)
{
	struct ctx c;

	(void)state;
	assert_int_equal(PARSE(&demo, &c, "--flag", "--flag", "in"), -EINVAL);
	assert_string_equal(err, "--flag: given twice");
	assert_int_equal(PARSE(&demo, &c, "-f", "--flag", "in"), -EINVAL);
	assert_int_equal(PARSE(&demo, &c, "--color", "red", "--color=blue", "in"),
			 -EINVAL);
	assert_string_equal(err, "--color: given twice");
	/* up to 3: the last one wins in storage */
	assert_int_equal(PARSE(&demo, &c, "-n1", "-n2", "-n", "3", "in"), 1);
	assert_int_equal(c.num, 3);
	assert_int_equal(PARSE(&demo, &c, "-n1", "-n2", "-n3", "-n4", "in"), -EINVAL);
	assert_string_equal(err, "--num: given more than 3 times");
	/* BG_OPT_MANY: no limit */
	assert_int_equal(PARSE(&demo, &c, "--hidden", "--hidden", "--hidden",
			       "--hidden", "--hidden", "in"), 1);
	assert_string_equal(c.log, "hidden:- hidden:- hidden:- hidden:- hidden:- pos:in");
}

static void test_order_and_positionals(void **state)
{
	struct ctx c;

	(void)state;
	/* set() and the positional callback in command-line order */
	assert_int_equal(PARSE(&demo, &c, "one", "--kind", "a", "two", "--flag",
			       "--kind=b", "--hidden", "three"), 3);
	assert_string_equal(c.log, "pos:one kind:a pos:two kind:b hidden:- pos:three");
	/* the positionals end up in argv[1..], in order */
	assert_string_equal(args[1], "one");
	assert_string_equal(args[2], "two");
	assert_string_equal(args[3], "three");
	assert_int_equal(c.done_calls, 1);
	assert_int_equal(c.done_npos, 3);

	/* "--" ends the options; "-" is a positional */
	assert_int_equal(PARSE(&demo, &c, "-", "--", "--flag", "-h"), 3);
	assert_int_equal(c.flag, 0);
	assert_string_equal(c.log, "pos:- pos:--flag pos:-h");
	assert_string_equal(args[1], "-");
	assert_string_equal(args[2], "--flag");
	assert_string_equal(args[3], "-h");

	assert_int_equal(PARSE(&demo, &c, "a", "b", "c", "d"), -EINVAL);
	assert_string_equal(err, "demo: unexpected argument 'd'");
	assert_int_equal(PARSE(&demo, &c, "--flag"), -EINVAL);
	assert_string_equal(err, "demo: missing FILE");
	assert_int_equal(c.done_calls, 0);
	assert_int_equal(PARSE(&bare, &c, "x"), -EINVAL);
	assert_string_equal(err, "bare: unexpected argument 'x'");
	assert_int_equal(bg_opts_parse(&bare, 1, (char *[]){ "bare", NULL }, &c, err,
				       sizeof(err)), 0);
}

static void test_errors(void **state)
{
	struct ctx c;

	(void)state;
	assert_int_equal(PARSE(&demo, &c, "--nope", "in"), -EINVAL);
	assert_string_equal(err, "demo: unknown option '--nope'");
	assert_int_equal(PARSE(&demo, &c, "--nope=3", "in"), -EINVAL);
	assert_string_equal(err, "demo: unknown option '--nope'");
	/* no abbreviations */
	assert_int_equal(PARSE(&demo, &c, "--fla", "in"), -EINVAL);
	assert_int_equal(PARSE(&demo, &c, "-z", "in"), -EINVAL);
	assert_string_equal(err, "demo: unknown option '-z'");
	assert_int_equal(PARSE(&demo, &c, "in", "--num"), -EINVAL);
	assert_string_equal(err, "--num: needs a value (--num N)");
	assert_int_equal(PARSE(&demo, &c, "--flag=1", "in"), -EINVAL);
	assert_string_equal(err, "--flag: takes no value");
	assert_int_equal(PARSE(&demo, &c, "-fx", "in"), -EINVAL);

	/* a callback's error and code come through */
	{
		char *v[] = { "cmd", "--kind", "a", "in", NULL };
		struct ctx d = defaults;

		d.fail_set = -ENOMEM;
		assert_int_equal(bg_opts_parse(&demo, 4, v, &d, err, sizeof(err)),
				 -ENOMEM);
		assert_string_equal(err, "--kind: refused");
	}
	/* done() sees the whole line */
	assert_int_equal(PARSE(&demo, &c, "--num", "13", "in", "--flag"), -EINVAL);
	assert_string_equal(err, "demo: --flag and 13 do not mix");
	assert_int_equal(c.done_calls, 1);

	/* errors are one line */
	assert_null(strchr(err, '\n'));
}

static void test_help_request(void **state)
{
	struct ctx c;

	(void)state;
	assert_int_equal(PARSE(&demo, &c, "--help"), BG_OPTS_HELP);
	assert_int_equal(PARSE(&demo, &c, "-h"), BG_OPTS_HELP);
	/* help wins over an error before it, and nothing is called */
	assert_int_equal(PARSE(&demo, &c, "--color", "mauve", "x", "--help"),
			 BG_OPTS_HELP);
	assert_string_equal(c.log, "");
	assert_int_equal(PARSE(&one, &c, "bg-no-such0", "-h"), BG_OPTS_HELP);
	/* but a value that looks like it is a value, and "--" ends options */
	assert_int_equal(PARSE(&demo, &c, "--name", "--help", "in"), 1);
	assert_string_equal(c.name, "--help");
	assert_int_equal(PARSE(&demo, &c, "--kind", "-h", "in"), -EINVAL);
	assert_string_equal(err, "--kind: '-h' is not one of a, b");
	assert_int_equal(PARSE(&demo, &c, "--", "--help"), 1);
}

static void test_synopsis(void **state)
{
	char buf[256];
	size_t n;

	(void)state;
	n = bg_cmd_synopsis(&demo, buf, sizeof(buf));
	assert_string_equal(buf, "demo [--flag] [--color red|green|blue] [--num N]... "
				 "[--ratio R] [--iface IF] [--path FILE] [--name S] "
				 "[--kind K]... FILE...");
	assert_int_equal(n, strlen(buf));
	/* too small a buffer: cut, and the length needed */
	assert_int_equal(bg_cmd_synopsis(&demo, buf, 8), n);
	assert_string_equal(buf, "demo [-");
	assert_int_equal(bg_cmd_synopsis(&demo, NULL, 0), n);

	bg_cmd_synopsis(&one, buf, sizeof(buf));
	assert_non_null(strstr(buf, "one IFACE [--flag]"));
	bg_cmd_synopsis(&bare, buf, sizeof(buf));
	assert_string_equal(buf, "bare");
}

static void test_help_text(void **state)
{
	char *text = NULL, syn[256], first[300];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	bg_cmd_help(f, "prog", &demo);
	fclose(f);
	bg_cmd_synopsis(&demo, syn, sizeof(syn));
	snprintf(first, sizeof(first), "usage: prog %s\n", syn);
	/* the first line is the synopsis */
	assert_int_equal(strncmp(text, first, strlen(first)), 0);
	assert_non_null(strstr(text, "A command for the tests."));
	assert_non_null(strstr(text, "\n  FILE                  input files\n"));
	assert_non_null(strstr(text, "\n  -f, --flag            a flag\n"));
	/* enum values with their help, the default marked; blue has none */
	assert_non_null(strstr(text, "\n    green               the second (default)\n"));
	assert_non_null(strstr(text, "\n    red                 the first\n"));
	assert_null(strstr(text, "    blue"));
	/* ranges, defaults, repeat counts */
	assert_non_null(strstr(text, "a number (1..100; up to 3 times)"));
	assert_non_null(strstr(text, "a ratio (> 0 and <= 1; default 0.25)"));
	assert_non_null(strstr(text, "applies to what follows (repeatable)"));
	assert_non_null(strstr(text, "  --hidden "));
	assert_non_null(strstr(text, "\n  -h, --help            print this help\n"));
	/* the details come last */
	assert_non_null(strstr(text, "\n  Free text after the options.\n"));
	assert_int_equal(strcmp(text + len - strlen("Free text after the options.\n"),
				"Free text after the options.\n"), 0);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_enum_ifname_path),
		cmocka_unit_test(test_repeats),
		cmocka_unit_test(test_order_and_positionals),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_help_request),
		cmocka_unit_test(test_synopsis),
		cmocka_unit_test(test_help_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
