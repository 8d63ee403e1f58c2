// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for user/domains.c: plain domain lists, hosts files, Adblock
 * rules, wildcards, name validation, format detection, reports, sorting and
 * de-duplication; the fixtures in tests/fixtures/domains/ (the shapes of
 * real lists), and the real lists in ../shared/data/ where they exist.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, open_memstream */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domains.h"

/* Relative to the repository root, the working directory of `make test`. */
#define FIXTURES "tests/fixtures/domains/"
#define SHARED_DATA "../shared/data/"

/* ---- Helpers ------------------------------------------------------------ */

#define F_STRICT 1
#define F_SUBS 2
#define F_ALLOW 4

struct run {
	struct bg_names l;
	int rc;
	char *report; /* everything written to opts.report */
};

static void run_init(struct run *r)
{
	memset(r, 0, sizeof(*r));
	bg_names_init(&r->l);
}

static void run_done(struct run *r)
{
	bg_names_free(&r->l);
	free(r->report);
	r->report = NULL;
}

/* Parses len bytes as list "t.txt" in format fmt, capturing the report. */
static void run_n(struct run *r, const char *text, size_t len,
		  enum bg_dom_format fmt, int flags)
{
	struct bg_dom_opts o = {
		.format = fmt,
		.subdomains = !!(flags & F_SUBS),
		.allow = !!(flags & F_ALLOW),
		.strict = !!(flags & F_STRICT),
	};
	size_t size = 0;
	FILE *f;

	free(r->report);
	r->report = NULL;
	f = open_memstream(&r->report, &size);
	assert_non_null(f);
	o.report = f;
	r->rc = bg_names_parse_buf(&r->l, "t.txt", text, len, &o);
	assert_int_equal(fclose(f), 0);
	assert_non_null(r->report);
}

/* String literals may hold NUL bytes: take their size, not strlen. */
#define RUN(r, fmt, lit) run_n((r), (lit), sizeof(lit) - 1, (fmt), 0)
#define RUNF(r, fmt, flags, lit) run_n((r), (lit), sizeof(lit) - 1, (fmt), (flags))
#define PLAIN BG_DOM_PLAIN
#define HOSTS BG_DOM_HOSTS
#define ADBLOCK BG_DOM_ADBLOCK
#define AUTO BG_DOM_AUTO

static void assert_counts(const struct bg_names *l, size_t lines,
			  size_t accepted, size_t rejected, size_t skipped,
			  size_t warnings)
{
	assert_int_equal(l->lines, lines);
	assert_int_equal(l->accepted, accepted);
	assert_int_equal(l->n, accepted);
	assert_int_equal(l->rejected, rejected);
	assert_int_equal(l->skipped, skipped);
	assert_int_equal(l->warnings, warnings);
}

static void assert_entry(const struct bg_names *l, size_t i, const char *name,
			 int kind, int allow, unsigned int line)
{
	assert_true(i < l->n);
	assert_string_equal(l->v[i].name, name);
	assert_int_equal(l->v[i].kind, kind);
	assert_int_equal(l->v[i].allow, allow);
	assert_int_equal(l->v[i].line, line);
}

/* One line, one rejection: checks the counts and the whole report. */
static void assert_rejected_fmt(enum bg_dom_format fmt, const char *line,
				const char *report)
{
	struct run r;

	run_init(&r);
	run_n(&r, line, strlen(line), fmt, 0);
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 1, 0, 1, 0, 0);
	assert_string_equal(r.report, report);
	run_done(&r);
}

/* One line, one accepted entry: its name, kind and allow flag. */
static void assert_accepted_fmt(enum bg_dom_format fmt, int flags,
				const char *line, const char *name, int kind,
				int allow)
{
	struct run r;

	run_init(&r);
	run_n(&r, line, strlen(line), fmt, flags);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.report, "");
	assert_counts(&r.l, 1, 1, 0, 0, 0);
	assert_entry(&r.l, 0, name, kind, allow, 1);
	run_done(&r);
}

static int have_file(const char *path)
{
	if (access(path, R_OK) == 0)
		return 1;
	print_message("skipping: %s not found (the shared data is optional)\n",
		      path);
	return 0;
}

/* A temporary file holding text; returns its malloc'd path. */
static char *write_temp(const char *text, size_t len)
{
	const char *dir = getenv("TMPDIR");
	char *path;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	assert_true(asprintf(&path, "%s/test_domains.XXXXXX", dir) > 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
	return path;
}

/* A string of n copies of c (static buffer, one at a time). */
static const char *rep(char c, size_t n)
{
	static char buf[1024];

	assert_true(n < sizeof(buf));
	memset(buf, c, n);
	buf[n] = '\0';
	return buf;
}

/* ---- Plain lists -------------------------------------------------------- */

static void test_plain_basic(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, PLAIN,
	    "example.com\n"
	    "ads.example.net\n"
	    "_dmarc.example.org\n"
	    "xn--bcher-kva.example\n"
	    "a-b--c.example\n"
	    "0ms.example\n");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.report, "");
	assert_counts(&r.l, 6, 6, 0, 0, 0);
	assert_int_equal(r.l.nfiles, 1);
	assert_string_equal(r.l.files[0], "t.txt");
	assert_entry(&r.l, 0, "example.com", BG_NAME_EXACT, 0, 1);
	assert_entry(&r.l, 1, "ads.example.net", BG_NAME_EXACT, 0, 2);
	assert_entry(&r.l, 2, "_dmarc.example.org", BG_NAME_EXACT, 0, 3);
	assert_entry(&r.l, 3, "xn--bcher-kva.example", BG_NAME_EXACT, 0, 4);
	assert_entry(&r.l, 4, "a-b--c.example", BG_NAME_EXACT, 0, 5);
	assert_entry(&r.l, 5, "0ms.example", BG_NAME_EXACT, 0, 6);
	assert_int_equal(r.l.v[5].file, 0);
	run_done(&r);
}

static void test_plain_comments_blanks(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, PLAIN,
	    "# Title: a list\n"
	    "#\n"
	    "\n"
	    "   \n"
	    "\t\n"
	    "  a.example  \n"
	    "\tb.example\t\n"
	    "c.example # inline comment\n"
	    "d.example#no-blank\n"
	    "   # indented comment\n"
	    "#e.example commented out\n"
	    "f.example\t#\ttabs\n");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.report, "");
	assert_counts(&r.l, 12, 5, 0, 0, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_EXACT, 0, 6);
	assert_entry(&r.l, 1, "b.example", BG_NAME_EXACT, 0, 7);
	assert_entry(&r.l, 2, "c.example", BG_NAME_EXACT, 0, 8);
	assert_entry(&r.l, 3, "d.example", BG_NAME_EXACT, 0, 9);
	assert_entry(&r.l, 4, "f.example", BG_NAME_EXACT, 0, 12);
	run_done(&r);
}

static void test_plain_crlf_bom_eof(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, AUTO,
	    "\xef\xbb\xbf"
	    "a.example\r\n"
	    "# comment\r\n"
	    "\r\n"
	    "b.example # c\r\n"
	    "bad..example\r\n"
	    "c.example");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 6, 3, 1, 0, 0);
	/* the BOM is not part of the first name, the CR not of the quote */
	assert_entry(&r.l, 0, "a.example", BG_NAME_EXACT, 0, 1);
	assert_entry(&r.l, 1, "b.example", BG_NAME_EXACT, 0, 4);
	assert_entry(&r.l, 2, "c.example", BG_NAME_EXACT, 0, 6);
	assert_string_equal(r.report,
			    "t.txt:5: empty label: 'bad..example'\n");
	run_done(&r);

	/* a final line with CR but no LF; a BOM alone */
	run_init(&r);
	RUN(&r, PLAIN, "a.example\r\nb.example\r");
	assert_counts(&r.l, 2, 2, 0, 0, 0);
	assert_entry(&r.l, 1, "b.example", BG_NAME_EXACT, 0, 2);
	run_done(&r);

	run_init(&r);
	RUN(&r, AUTO, "\xef\xbb\xbf");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 0, 0, 0, 0, 0);
	run_done(&r);
}

static void test_plain_subdomains(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUNF(&r, PLAIN, F_SUBS,
	     "a.example\n"
	     "*.b.example\n"
	     "C.Example.\n");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.report, "");
	assert_counts(&r.l, 3, 3, 0, 0, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_TREE, 0, 1);
	/* an explicit wildcard keeps its meaning */
	assert_entry(&r.l, 1, "b.example", BG_NAME_SUBS, 0, 2);
	assert_entry(&r.l, 2, "c.example", BG_NAME_TREE, 0, 3);
	run_done(&r);
}

static void test_plain_wildcards(void **state)
{
	struct run r;

	(void)state;
	assert_accepted_fmt(PLAIN, 0, "*.example.com", "example.com",
			    BG_NAME_SUBS, 0);
	assert_accepted_fmt(PLAIN, 0, "*.Example.COM.\n", "example.com",
			    BG_NAME_SUBS, 0);
	assert_accepted_fmt(PLAIN, F_ALLOW, "*.example.com", "example.com",
			    BG_NAME_SUBS, 1);
	assert_rejected_fmt(PLAIN, "*example.com",
			    "t.txt:1: wildcard only allowed as a leading '*.': "
			    "'*example.com'\n");
	assert_rejected_fmt(PLAIN, "ads.*.example.com",
			    "t.txt:1: wildcard only allowed as a leading '*.': "
			    "'ads.*.example.com'\n");
	assert_rejected_fmt(PLAIN, "example.*",
			    "t.txt:1: wildcard only allowed as a leading '*.': "
			    "'example.*'\n");
	assert_rejected_fmt(PLAIN, "*.*.example.com",
			    "t.txt:1: wildcard only allowed as a leading '*.': "
			    "'*.*.example.com'\n");
	assert_rejected_fmt(PLAIN, "*",
			    "t.txt:1: wildcard only allowed as a leading '*.': "
			    "'*'\n");
	assert_rejected_fmt(PLAIN, "*.", "t.txt:1: empty name: '*.'\n");

	/* several in one list, numbered */
	run_init(&r);
	RUN(&r, PLAIN, "*.a.example\nb.example\n*.c.example\n");
	assert_counts(&r.l, 3, 3, 0, 0, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_SUBS, 0, 1);
	assert_entry(&r.l, 1, "b.example", BG_NAME_EXACT, 0, 2);
	assert_entry(&r.l, 2, "c.example", BG_NAME_SUBS, 0, 3);
	run_done(&r);
}

static void test_plain_rejects(void **state)
{
	(void)state;
	assert_rejected_fmt(PLAIN, "0.0.0.0 ads.example.com",
			    "t.txt:1: hosts-file line in a plain list: "
			    "'0.0.0.0 ads.example.com'\n");
	assert_rejected_fmt(PLAIN, "::1 ads.example.com",
			    "t.txt:1: hosts-file line in a plain list: "
			    "'::1 ads.example.com'\n");
	assert_rejected_fmt(PLAIN, "a.example b.example",
			    "t.txt:1: trailing text after name: "
			    "'a.example b.example'\n");
	assert_rejected_fmt(PLAIN, "||ads.example.com^",
			    "t.txt:1: Adblock syntax in a plain list: "
			    "'||ads.example.com^'\n");
	assert_rejected_fmt(PLAIN, "@@||ads.example.com^",
			    "t.txt:1: Adblock syntax in a plain list: "
			    "'@@||ads.example.com^'\n");
	assert_rejected_fmt(PLAIN, "! comment",
			    "t.txt:1: Adblock syntax in a plain list: "
			    "'! comment'\n");
	assert_rejected_fmt(PLAIN, "[Adblock Plus]",
			    "t.txt:1: Adblock syntax in a plain list: "
			    "'[Adblock Plus]'\n");
	assert_rejected_fmt(PLAIN, "https://ads.example.com/x",
			    "t.txt:1: a URL, not a name: "
			    "'https://ads.example.com/x'\n");
	assert_rejected_fmt(PLAIN, "ads.example.com/banner",
			    "t.txt:1: a path, not a name: "
			    "'ads.example.com/banner'\n");
	assert_rejected_fmt(PLAIN, "192.0.2.1",
			    "t.txt:1: an IP address, not a name: "
			    "'192.0.2.1'\n");
	assert_rejected_fmt(PLAIN, "2001:db8::1",
			    "t.txt:1: an IP address, not a name: "
			    "'2001:db8::1'\n");
	assert_rejected_fmt(PLAIN, "ads.example.com:443",
			    "t.txt:1: invalid character in name: "
			    "'ads.example.com:443'\n");
	assert_rejected_fmt(PLAIN, "ads.example.com^",
			    "t.txt:1: invalid character in name: "
			    "'ads.example.com^'\n");
	assert_rejected_fmt(PLAIN, "b\xc3\xbc" "cher.example",
			    "t.txt:1: non-ASCII name (use punycode): "
			    "'b\xc3\xbc" "cher.example'\n");
	assert_rejected_fmt(PLAIN, ".example.com",
			    "t.txt:1: empty label: '.example.com'\n");
	assert_rejected_fmt(PLAIN, "-ads.example.com",
			    "t.txt:1: label starts or ends with a hyphen: "
			    "'-ads.example.com'\n");
}

/* ---- Hosts files -------------------------------------------------------- */

static void test_hosts_addresses(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, HOSTS,
	    "0.0.0.0 a.example\n"
	    "127.0.0.1 b.example\n"
	    ":: c.example\n"
	    "::1 d.example\n"
	    "0:0:0:0:0:0:0:0 e.example\n"
	    "0:0:0:0:0:0:0:1 f.example\n"
	    "127.0.0.2 g.example\n"
	    "127.255.255.254\th.example\n");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.report, "");
	assert_counts(&r.l, 8, 8, 0, 0, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_EXACT, 0, 1);
	assert_entry(&r.l, 1, "b.example", BG_NAME_EXACT, 0, 2);
	assert_entry(&r.l, 2, "c.example", BG_NAME_EXACT, 0, 3);
	assert_entry(&r.l, 3, "d.example", BG_NAME_EXACT, 0, 4);
	assert_entry(&r.l, 4, "e.example", BG_NAME_EXACT, 0, 5);
	assert_entry(&r.l, 5, "f.example", BG_NAME_EXACT, 0, 6);
	assert_entry(&r.l, 6, "g.example", BG_NAME_EXACT, 0, 7);
	assert_entry(&r.l, 7, "h.example", BG_NAME_EXACT, 0, 8);
	run_done(&r);

	/* a redirect is not a block */
	assert_rejected_fmt(HOSTS, "192.0.2.1 nas.example",
			    "t.txt:1: not a blocking address (0.0.0.0, "
			    "127.x.x.x, :: or ::1): '192.0.2.1 nas.example'\n");
	assert_rejected_fmt(HOSTS, "fe80::1%lo0 router.example",
			    "t.txt:1: not a blocking address (0.0.0.0, "
			    "127.x.x.x, :: or ::1): "
			    "'fe80::1%lo0 router.example'\n");
	assert_rejected_fmt(HOSTS, "::ffff:0.0.0.0 a.example",
			    "t.txt:1: not a blocking address (0.0.0.0, "
			    "127.x.x.x, :: or ::1): "
			    "'::ffff:0.0.0.0 a.example'\n");
	/* not addresses at all */
	assert_rejected_fmt(HOSTS, "0.0.0.0.0 a.example",
			    "t.txt:1: first field is not an IP address: "
			    "'0.0.0.0.0 a.example'\n");
	assert_rejected_fmt(HOSTS, "127.1 a.example",
			    "t.txt:1: first field is not an IP address: "
			    "'127.1 a.example'\n");
	assert_rejected_fmt(HOSTS, "a.example b.example",
			    "t.txt:1: first field is not an IP address: "
			    "'a.example b.example'\n");
	assert_rejected_fmt(HOSTS, "0.0.0.0",
			    "t.txt:1: no name after the address: '0.0.0.0'\n");
	assert_rejected_fmt(HOSTS, "0.0.0.0   # a.example",
			    "t.txt:1: no name after the address: "
			    "'0.0.0.0   # a.example'\n");
}

static void test_hosts_several_names(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, HOSTS,
	    "0.0.0.0 a.example b.example\tc.example # three\n"
	    "0.0.0.0 d.example bad..example *.e.example f.example\n"
	    "0.0.0.0 ads*.example\n");
	assert_int_equal(r.rc, 0);
	/* a bad name does not take the good ones of its line with it */
	assert_counts(&r.l, 3, 5, 3, 0, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_EXACT, 0, 1);
	assert_entry(&r.l, 1, "b.example", BG_NAME_EXACT, 0, 1);
	assert_entry(&r.l, 2, "c.example", BG_NAME_EXACT, 0, 1);
	assert_entry(&r.l, 3, "d.example", BG_NAME_EXACT, 0, 2);
	assert_entry(&r.l, 4, "f.example", BG_NAME_EXACT, 0, 2);
	assert_string_equal(
		r.report,
		"t.txt:2: empty label: "
		"'0.0.0.0 d.example bad..example *.e.example f.example'\n"
		"t.txt:2: wildcards are not allowed in hosts files: "
		"'0.0.0.0 d.example bad..example *.e.example f.example'\n"
		"t.txt:3: wildcards are not allowed in hosts files: "
		"'0.0.0.0 ads*.example'\n");
	run_done(&r);
}

static void test_hosts_comments(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, HOSTS,
	    "# header\n"
	    "0.0.0.0 a.example # https://example.org/issues/1635\n"
	    "0.0.0.0 b.example #ad\n"
	    "0.0.0.0 c.example#ad\n"
	    "0.0.0.0 d.example\t# tab\n"
	    "   # indented\n"
	    "#0.0.0.0 e.example\n"
	    "0.0.0.0 f.example #comment with 0.0.0.0 g.example\n");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.report, "");
	assert_counts(&r.l, 8, 5, 0, 0, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_EXACT, 0, 2);
	assert_entry(&r.l, 1, "b.example", BG_NAME_EXACT, 0, 3);
	assert_entry(&r.l, 2, "c.example", BG_NAME_EXACT, 0, 4);
	assert_entry(&r.l, 3, "d.example", BG_NAME_EXACT, 0, 5);
	assert_entry(&r.l, 4, "f.example", BG_NAME_EXACT, 0, 8);
	run_done(&r);
}

static void test_hosts_bare_names(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUNF(&r, HOSTS, F_SUBS,
	     "0.0.0.0 a.example\n"
	     "b.example\n"
	     "  C.example.  # bare, with a comment\n"
	     "*.d.example\n"
	     "||e.example^\n");
	assert_int_equal(r.rc, 0);
	/* hosts entries are exact, --subdomains or not */
	assert_counts(&r.l, 5, 3, 2, 0, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_EXACT, 0, 1);
	assert_entry(&r.l, 1, "b.example", BG_NAME_EXACT, 0, 2);
	assert_entry(&r.l, 2, "c.example", BG_NAME_EXACT, 0, 3);
	assert_string_equal(r.report,
			    "t.txt:4: wildcards are not allowed in hosts files: "
			    "'*.d.example'\n"
			    "t.txt:5: Adblock syntax in a hosts file: "
			    "'||e.example^'\n");
	run_done(&r);
}

static void test_hosts_special_names(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, HOSTS,
	    "127.0.0.1 localhost\n"
	    "127.0.0.1 localhost.localdomain\n"
	    "127.0.0.1 local\n"
	    "255.255.255.255 broadcasthost\n"
	    "::1 localhost ip6-localhost ip6-loopback\n"
	    "fe80::1%lo0 localhost\n"
	    "ff00::0 ip6-localnet\n"
	    "ff00::0 ip6-mcastprefix\n"
	    "ff02::1 ip6-allnodes\n"
	    "ff02::2 ip6-allrouters\n"
	    "ff02::3 ip6-allhosts\n"
	    "0.0.0.0 0.0.0.0\n"
	    "127.0.0.1 LocalHost. myhost.example\n"
	    "0.0.0.0 nlocalhost.example localhost.example local.example\n"
	    "localhost\n");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.report, "");
	/* 12 names on lines 1-12 and 15, one on line 13 */
	assert_counts(&r.l, 15, 4, 0, 16, 0);
	assert_entry(&r.l, 0, "myhost.example", BG_NAME_EXACT, 0, 13);
	assert_entry(&r.l, 1, "nlocalhost.example", BG_NAME_EXACT, 0, 14);
	assert_entry(&r.l, 2, "localhost.example", BG_NAME_EXACT, 0, 14);
	assert_entry(&r.l, 3, "local.example", BG_NAME_EXACT, 0, 14);
	run_done(&r);

	/* a name of its own on a line that maps elsewhere is still refused */
	run_init(&r);
	RUN(&r, HOSTS, "255.255.255.255 broadcasthost nas.example\n");
	assert_counts(&r.l, 1, 0, 1, 1, 0);
	assert_string_equal(r.report,
			    "t.txt:1: not a blocking address (0.0.0.0, "
			    "127.x.x.x, :: or ::1): "
			    "'255.255.255.255 broadcasthost nas.example'\n");
	run_done(&r);

	/* skipped in the other formats too */
	run_init(&r);
	RUN(&r, PLAIN, "localhost\nbroadcasthost.\n0.0.0.0\n");
	assert_counts(&r.l, 3, 0, 0, 3, 0);
	run_done(&r);
	run_init(&r);
	RUN(&r, ADBLOCK, "||localhost^\n@@||ip6-localhost^\n");
	assert_counts(&r.l, 2, 0, 0, 2, 0);
	run_done(&r);
}

static void test_hosts_digit_names(void **state)
{
	struct run r;

	(void)state;
	/* names that start with digits and dots, as in StevenBlack's list */
	run_init(&r);
	RUN(&r, HOSTS,
	    "0.0.0.0 0.0.0.0.redirect.example\n"
	    "0.0.0.0 192.0.2.1.c752sa3k9.example.net\n"
	    "0.0.0.0 12724.example\n"
	    "0.0.0.0 1.2.3.4\n"
	    "0.0.0.0 3com\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 5, 4, 1, 0, 1);
	assert_entry(&r.l, 0, "0.0.0.0.redirect.example", BG_NAME_EXACT, 0, 1);
	assert_entry(&r.l, 1, "192.0.2.1.c752sa3k9.example.net", BG_NAME_EXACT,
		     0, 2);
	assert_entry(&r.l, 2, "12724.example", BG_NAME_EXACT, 0, 3);
	assert_entry(&r.l, 3, "3com", BG_NAME_EXACT, 0, 5);
	assert_string_equal(r.report,
			    "t.txt:4: an IP address, not a name: "
			    "'0.0.0.0 1.2.3.4'\n"
			    "t.txt:5: warning: single-label name: "
			    "'0.0.0.0 3com'\n");
	run_done(&r);
}

/* ---- Adblock rules ------------------------------------------------------ */

static void test_adblock_rules(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, ADBLOCK,
	    "||a.example^\n"
	    "@@||b.example^\n"
	    "||c.example^|\n"
	    "|d.example^\n"
	    "@@|e.example^|\n"
	    "f.example\n"
	    "@@g.example\n"
	    "||*.h.example^\n"
	    "*.i.example\n"
	    "@@||*.j.example^\n"
	    "||K.Example.^\n");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.report, "");
	assert_counts(&r.l, 11, 11, 0, 0, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_TREE, 0, 1);
	assert_entry(&r.l, 1, "b.example", BG_NAME_TREE, 1, 2);
	assert_entry(&r.l, 2, "c.example", BG_NAME_TREE, 0, 3);
	assert_entry(&r.l, 3, "d.example", BG_NAME_EXACT, 0, 4);
	assert_entry(&r.l, 4, "e.example", BG_NAME_EXACT, 1, 5);
	assert_entry(&r.l, 5, "f.example", BG_NAME_EXACT, 0, 6);
	assert_entry(&r.l, 6, "g.example", BG_NAME_EXACT, 1, 7);
	assert_entry(&r.l, 7, "h.example", BG_NAME_SUBS, 0, 8);
	assert_entry(&r.l, 8, "i.example", BG_NAME_SUBS, 0, 9);
	assert_entry(&r.l, 9, "j.example", BG_NAME_SUBS, 1, 10);
	assert_entry(&r.l, 10, "k.example", BG_NAME_TREE, 0, 11);
	run_done(&r);

	/* --subdomains is for plain lists: bare names here stay exact */
	assert_accepted_fmt(ADBLOCK, F_SUBS, "f.example", "f.example",
			    BG_NAME_EXACT, 0);
}

static void test_adblock_comments(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, ADBLOCK,
	    "[Adblock Plus]\n"
	    "[Adblock Plus 2.0]\n"
	    "[AdGuard]\n"
	    "! Title: a list\n"
	    "!\n"
	    "  ! indented\n"
	    "# hash comment\n"
	    "#hash comment\n"
	    "#\n"
	    "||a.example^ # inline\n"
	    "||b.example^\t! inline\n"
	    "\n"
	    "||c.example^\r\n");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.report, "");
	assert_counts(&r.l, 13, 3, 0, 0, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_TREE, 0, 10);
	assert_entry(&r.l, 1, "b.example", BG_NAME_TREE, 0, 11);
	assert_entry(&r.l, 2, "c.example", BG_NAME_TREE, 0, 13);
	run_done(&r);
}

static void test_adblock_modifiers(void **state)
{
	(void)state;
	assert_accepted_fmt(ADBLOCK, 0, "||a.example^$important", "a.example",
			    BG_NAME_TREE, 0);
	assert_accepted_fmt(ADBLOCK, 0, "@@||a.example^$important",
			    "a.example", BG_NAME_TREE, 1);
	assert_accepted_fmt(ADBLOCK, 0, "||a.example^$IMPORTANT", "a.example",
			    BG_NAME_TREE, 0);
	assert_accepted_fmt(ADBLOCK, 0, "a.example$important", "a.example",
			    BG_NAME_EXACT, 0);
	assert_rejected_fmt(ADBLOCK, "||a.example^$third-party",
			    "t.txt:1: unsupported modifier '$third-party': "
			    "'||a.example^$third-party'\n");
	assert_rejected_fmt(ADBLOCK, "||a.example^$important,third-party",
			    "t.txt:1: unsupported modifier '$third-party': "
			    "'||a.example^$important,third-party'\n");
	assert_rejected_fmt(ADBLOCK, "||a.example^$script,important",
			    "t.txt:1: unsupported modifier '$script': "
			    "'||a.example^$script,important'\n");
	assert_rejected_fmt(ADBLOCK, "||a.example^$dnstype=AAAA",
			    "t.txt:1: unsupported modifier '$dnstype=AAAA': "
			    "'||a.example^$dnstype=AAAA'\n");
	assert_rejected_fmt(ADBLOCK, "||a.example^$badfilter",
			    "t.txt:1: unsupported modifier '$badfilter': "
			    "'||a.example^$badfilter'\n");
	assert_rejected_fmt(ADBLOCK, "||a.example^$client=192.168.0.1",
			    "t.txt:1: unsupported modifier "
			    "'$client=192.168.0.1': "
			    "'||a.example^$client=192.168.0.1'\n");
	assert_rejected_fmt(ADBLOCK, "@@||a.example^$denyallow=b.example",
			    "t.txt:1: unsupported modifier "
			    "'$denyallow=b.example': "
			    "'@@||a.example^$denyallow=b.example'\n");
	assert_rejected_fmt(ADBLOCK, "||a.example^$",
			    "t.txt:1: empty modifier: '||a.example^$'\n");
	assert_rejected_fmt(ADBLOCK, "||a.example^$important,",
			    "t.txt:1: empty modifier: "
			    "'||a.example^$important,'\n");
	/* a long modifier is cut to 40 bytes in the reason, not in the quote */
	assert_rejected_fmt(
		ADBLOCK,
		"||a.example^$domain=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"t.txt:1: unsupported modifier "
		"'$domain=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa': "
		"'||a.example^$domain=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'\n");
}

static void test_adblock_rejects(void **state)
{
	(void)state;
	/* cosmetic rules */
	assert_rejected_fmt(ADBLOCK, "a.example##.banner",
			    "t.txt:1: cosmetic rule, not a DNS rule: "
			    "'a.example##.banner'\n");
	assert_rejected_fmt(ADBLOCK, "##.banner",
			    "t.txt:1: cosmetic rule, not a DNS rule: "
			    "'##.banner'\n");
	assert_rejected_fmt(ADBLOCK, "a.example#@#.banner",
			    "t.txt:1: cosmetic rule, not a DNS rule: "
			    "'a.example#@#.banner'\n");
	assert_rejected_fmt(ADBLOCK, "a.example#?#div:has(> a)",
			    "t.txt:1: cosmetic rule, not a DNS rule: "
			    "'a.example#?#div:has(> a)'\n");
	assert_rejected_fmt(ADBLOCK, "a.example#$#body { x: y }",
			    "t.txt:1: cosmetic rule, not a DNS rule: "
			    "'a.example#$#body { x: y }'\n");
	assert_rejected_fmt(ADBLOCK, "a.example#%#//scriptlet('x')",
			    "t.txt:1: cosmetic rule, not a DNS rule: "
			    "'a.example#%#//scriptlet('x')'\n");
	assert_rejected_fmt(ADBLOCK, "a.example#@?#div",
			    "t.txt:1: cosmetic rule, not a DNS rule: "
			    "'a.example#@?#div'\n");
	assert_rejected_fmt(ADBLOCK, "a.example$$script[tag]",
			    "t.txt:1: cosmetic rule, not a DNS rule: "
			    "'a.example$$script[tag]'\n");
	assert_rejected_fmt(ADBLOCK, "a.example##div[title=\"a b\"]",
			    "t.txt:1: cosmetic rule, not a DNS rule: "
			    "'a.example##div[title=\"a b\"]'\n");
	/* regular expressions */
	assert_rejected_fmt(ADBLOCK, "/ads[0-9]+\\.example/",
			    "t.txt:1: regex rules are not supported: "
			    "'/ads[0-9]+\\.example/'\n");
	assert_rejected_fmt(ADBLOCK, "@@/^a\\.example$/",
			    "t.txt:1: regex rules are not supported: "
			    "'@@/^a\\.example$/'\n");
	/* paths and patterns */
	assert_rejected_fmt(ADBLOCK, "||a.example/ads",
			    "t.txt:1: a path, not a name: "
			    "'||a.example/ads'\n");
	assert_rejected_fmt(ADBLOCK, "||a.example/ads^",
			    "t.txt:1: a path, not a name: "
			    "'||a.example/ads^'\n");
	assert_rejected_fmt(ADBLOCK, "||a.example^/ads",
			    "t.txt:1: a path, not a name: "
			    "'||a.example^/ads'\n");
	assert_rejected_fmt(ADBLOCK, "||a.example",
			    "t.txt:1: no '^' after the name (a prefix "
			    "pattern): '||a.example'\n");
	assert_rejected_fmt(ADBLOCK, "a.example^",
			    "t.txt:1: '^' without '||' or '|' before the name: "
			    "'a.example^'\n");
	assert_rejected_fmt(ADBLOCK, "||a.example^*",
			    "t.txt:1: trailing text after '^': "
			    "'||a.example^*'\n");
	assert_rejected_fmt(ADBLOCK, "||a.example^^",
			    "t.txt:1: trailing text after '^': "
			    "'||a.example^^'\n");
	assert_rejected_fmt(ADBLOCK, "||ads*.example^",
			    "t.txt:1: wildcard only allowed as a leading '*.': "
			    "'||ads*.example^'\n");
	assert_rejected_fmt(ADBLOCK, "||example.*^",
			    "t.txt:1: wildcard only allowed as a leading '*.': "
			    "'||example.*^'\n");
	assert_rejected_fmt(ADBLOCK, "|*.a.example^",
			    "t.txt:1: wildcard only allowed as a leading '*.': "
			    "'|*.a.example^'\n");
	assert_rejected_fmt(ADBLOCK, "||192.0.2.1^",
			    "t.txt:1: an IP address, not a name: "
			    "'||192.0.2.1^'\n");
	assert_rejected_fmt(ADBLOCK, "||^", "t.txt:1: empty name: '||^'\n");
	assert_rejected_fmt(ADBLOCK, "@@", "t.txt:1: empty name: '@@'\n");
	assert_rejected_fmt(ADBLOCK, "||a.example^ b.example",
			    "t.txt:1: trailing text after rule: "
			    "'||a.example^ b.example'\n");
	assert_rejected_fmt(ADBLOCK, "||b\xc3\xbc" "cher.example^",
			    "t.txt:1: non-ASCII name (use punycode): "
			    "'||b\xc3\xbc" "cher.example^'\n");
}

static void test_adblock_hosts_lines(void **state)
{
	struct run r;

	(void)state;
	/* AdGuard Home reads hosts lines in any list; so does this */
	run_init(&r);
	RUN(&r, ADBLOCK,
	    "[Adblock Plus]\n"
	    "||a.example^\n"
	    "0.0.0.0 b.example c.example # two\n"
	    "127.0.0.1 localhost\n"
	    "192.0.2.1 d.example\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 5, 3, 1, 1, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_TREE, 0, 2);
	assert_entry(&r.l, 1, "b.example", BG_NAME_EXACT, 0, 3);
	assert_entry(&r.l, 2, "c.example", BG_NAME_EXACT, 0, 3);
	assert_string_equal(r.report,
			    "t.txt:5: not a blocking address (0.0.0.0, "
			    "127.x.x.x, :: or ::1): '192.0.2.1 d.example'\n");
	run_done(&r);
}

static void test_allow_option(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUNF(&r, ADBLOCK, F_ALLOW,
	     "||a.example^\n@@||b.example^\nc.example\n0.0.0.0 d.example\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 4, 4, 0, 0, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_TREE, 1, 1);
	assert_entry(&r.l, 1, "b.example", BG_NAME_TREE, 1, 2);
	assert_entry(&r.l, 2, "c.example", BG_NAME_EXACT, 1, 3);
	assert_entry(&r.l, 3, "d.example", BG_NAME_EXACT, 1, 4);
	run_done(&r);

	run_init(&r);
	RUNF(&r, PLAIN, F_ALLOW | F_SUBS, "a.example\n");
	assert_entry(&r.l, 0, "a.example", BG_NAME_TREE, 1, 1);
	run_done(&r);

	run_init(&r);
	RUNF(&r, HOSTS, F_ALLOW, "0.0.0.0 a.example\nb.example\n");
	assert_entry(&r.l, 0, "a.example", BG_NAME_EXACT, 1, 1);
	assert_entry(&r.l, 1, "b.example", BG_NAME_EXACT, 1, 2);
	run_done(&r);
}

/* ---- Names -------------------------------------------------------------- */

/* bg_name_normalise() on a string: 0 and out, or -1 and the reason. */
static void assert_norm(const char *in, const char *want)
{
	char out[254];
	const char *reason = "unset";

	memset(out, 'X', sizeof(out));
	assert_int_equal(bg_name_normalise(in, strlen(in), out, &reason), 0);
	assert_string_equal(out, want);
	assert_string_equal(reason, "unset"); /* untouched on success */
}

static void assert_norm_fails(const char *in, const char *reason_want)
{
	char out[254];
	const char *reason = NULL;

	assert_int_equal(bg_name_normalise(in, strlen(in), out, &reason), -1);
	assert_non_null(reason);
	assert_string_equal(reason, reason_want);
}

static void test_normalise_forms(void **state)
{
	(void)state;
	assert_norm("example.com", "example.com");
	assert_norm("example.com.", "example.com");
	assert_norm("ExAmPlE.CoM", "example.com");
	assert_norm("WWW.Example.COM.", "www.example.com");
	assert_norm("xn--bcher-kva.example", "xn--bcher-kva.example");
	assert_norm("XN--BCHER-KVA.EXAMPLE", "xn--bcher-kva.example");
	assert_norm("_dmarc.example.com", "_dmarc.example.com");
	assert_norm("a_.b-c.example", "a_.b-c.example");
	assert_norm("_", "_");
	assert_norm("com", "com");
	assert_norm("0.0.0.0.example", "0.0.0.0.example");
	assert_norm("1.2.3.4a", "1.2.3.4a");
	assert_norm("3com.example", "3com.example");
	assert_norm("a", "a");

	assert_norm_fails("", "empty name");
	assert_norm_fails(".", "empty name");
	assert_norm_fails("..", "empty label");
	assert_norm_fails("a..b", "empty label");
	assert_norm_fails(".a", "empty label");
	assert_norm_fails("a.b..", "empty label");
	assert_norm_fails("-a.example", "label starts or ends with a hyphen");
	assert_norm_fails("a-.example", "label starts or ends with a hyphen");
	assert_norm_fails("a.-b.example", "label starts or ends with a hyphen");
	assert_norm_fails("a.example-", "label starts or ends with a hyphen");
	assert_norm_fails("a.example-.", "label starts or ends with a hyphen");
	assert_norm_fails("-", "label starts or ends with a hyphen");
	assert_norm_fails("b\xc3\xbc" "cher.example",
			  "non-ASCII name (use punycode)");
	assert_norm_fails("a b.example", "invalid character in name");
	assert_norm_fails("a@b.example", "invalid character in name");
	assert_norm_fails("1.2.3.4", "an IP address, not a name");
	assert_norm_fails("1.2.3.4.", "an IP address, not a name");
	assert_norm_fails("0.0.0.0", "an IP address, not a name");
	assert_norm_fails("10.1", "an IP address, not a name");
	assert_norm_fails("123", "an IP address, not a name");
	assert_norm_fails("::1", "an IP address, not a name");
	assert_norm_fails("2001:DB8::1", "an IP address, not a name");
	assert_norm_fails("*.example.com",
			  "wildcard only allowed as a leading '*.'");
	assert_norm_fails("http://a.example", "a URL, not a name");
	assert_norm_fails("a.example/x", "a path, not a name");
}

static void test_normalise_lengths(void **state)
{
	char in[600], out[254], want[600];
	const char *reason = NULL;
	const char *l63, *l61;

	(void)state;
	/* labels: 63 bytes fine, 64 not */
	snprintf(in, sizeof(in), "%s.example", rep('a', 63));
	assert_norm(in, in);
	snprintf(in, sizeof(in), "%s.example", rep('a', 64));
	assert_norm_fails(in, "label longer than 63 characters");
	snprintf(in, sizeof(in), "example.%s", rep('b', 64));
	assert_norm_fails(in, "label longer than 63 characters");

	/* 253 characters (255 bytes in wire form) fine, 254 not */
	l63 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	l61 = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	assert_int_equal(strlen(l63), 63);
	assert_int_equal(strlen(l61), 61);
	snprintf(in, sizeof(in), "%s.%s.%s.%s", l63, l63, l63, l61);
	assert_int_equal(strlen(in), 253);
	assert_norm(in, in);
	/* with its trailing dot: 254 bytes in, 253 out */
	snprintf(want, sizeof(want), "%s", in);
	strcat(in, ".");
	assert_norm(in, want);
	snprintf(in, sizeof(in), "%s.%s.%s.%sb", l63, l63, l63, l61);
	assert_int_equal(strlen(in), 254);
	assert_norm_fails(in, "name longer than 253 characters");
	strcat(in, ".");
	assert_norm_fails(in, "name longer than 253 characters");
	/* far too long: the output buffer is never overrun */
	memset(in, 'a', sizeof(in) - 1);
	for (size_t i = 60; i < sizeof(in) - 1; i += 61)
		in[i] = '.';
	in[sizeof(in) - 1] = '\0';
	memset(out, 0, sizeof(out));
	assert_int_equal(bg_name_normalise(in, strlen(in), out, &reason), -1);
	assert_string_equal(reason, "name longer than 253 characters");

	/* only len bytes are read */
	assert_int_equal(bg_name_normalise("a.example.com", 9, out, &reason),
			 0);
	assert_string_equal(out, "a.example");
	/* NULL input, NULL reason */
	assert_int_equal(bg_name_normalise(NULL, 0, out, &reason), -1);
	assert_string_equal(reason, "empty name");
	assert_int_equal(bg_name_normalise("a..b", 4, out, NULL), -1);
}

/* The same limits through a list: exact reports. */
static void test_list_lengths(void **state)
{
	char *text, *report;
	struct run r;

	(void)state;
	run_init(&r);
	/* rep() has one buffer: one call at a time */
	assert_true(asprintf(&text, "%s.example\n", rep('a', 63)) > 0);
	run_n(&r, text, strlen(text), PLAIN, 0);
	free(text);
	assert_true(asprintf(&text, "%s.example\n", rep('b', 64)) > 0);
	run_n(&r, text, strlen(text), PLAIN, 0);
	assert_counts(&r.l, 2, 1, 1, 0, 0);
	assert_int_equal(strlen(r.l.v[0].name), 63 + 8);
	assert_true(asprintf(&report,
			     "t.txt:1: label longer than 63 characters: "
			     "'%s.example'\n",
			     rep('b', 64)) > 0);
	assert_string_equal(r.report, report);
	free(report);
	free(text);
	run_done(&r);
}

static void test_single_label(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUNF(&r, PLAIN, F_SUBS | F_STRICT, "com\nexample.com\n*.net\n");
	/* a warning, not a failure, even in strict mode */
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 3, 3, 0, 0, 1);
	assert_entry(&r.l, 0, "com", BG_NAME_TREE, 0, 1);
	assert_entry(&r.l, 2, "net", BG_NAME_SUBS, 0, 3);
	assert_string_equal(r.report,
			    "t.txt:1: warning: single-label name: 'com'\n");
	run_done(&r);

	run_init(&r);
	RUN(&r, ADBLOCK, "||zip^\n|mov^\n@@||lan^\nrouter\n*.test\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 5, 5, 0, 0, 1);
	assert_entry(&r.l, 0, "zip", BG_NAME_TREE, 0, 1);
	assert_entry(&r.l, 1, "mov", BG_NAME_EXACT, 0, 2);
	assert_entry(&r.l, 2, "lan", BG_NAME_TREE, 1, 3);
	assert_entry(&r.l, 3, "router", BG_NAME_EXACT, 0, 4);
	assert_entry(&r.l, 4, "test", BG_NAME_SUBS, 0, 5);
	assert_string_equal(r.report,
			    "t.txt:4: warning: single-label name: 'router'\n");
	run_done(&r);

	run_init(&r);
	RUN(&r, HOSTS, "0.0.0.0 router nas.example\nwpad\n");
	assert_counts(&r.l, 2, 3, 0, 0, 2);
	assert_string_equal(r.report,
			    "t.txt:1: warning: single-label name: "
			    "'0.0.0.0 router nas.example'\n"
			    "t.txt:2: warning: single-label name: 'wpad'\n");
	run_done(&r);
}

/* ---- Lines, reports, strict mode ---------------------------------------- */

static void test_strict(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUNF(&r, PLAIN, F_STRICT,
	     "a.example\nbad..example\nb.example\n-c.example\n");
	/* every bad line reported, the good ones still added */
	assert_int_equal(r.rc, -EINVAL);
	assert_counts(&r.l, 4, 2, 2, 0, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_EXACT, 0, 1);
	assert_entry(&r.l, 1, "b.example", BG_NAME_EXACT, 0, 3);
	assert_string_equal(r.report,
			    "t.txt:2: empty label: 'bad..example'\n"
			    "t.txt:4: label starts or ends with a hyphen: "
			    "'-c.example'\n");
	run_done(&r);

	/* not strict: the same list parses */
	run_init(&r);
	RUN(&r, PLAIN, "a.example\nbad..example\n");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.l.rejected, 1);
	run_done(&r);

	/* strict and clean; skipped names are not failures */
	run_init(&r);
	RUNF(&r, HOSTS, F_STRICT, "127.0.0.1 localhost\n0.0.0.0 a.example\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 2, 1, 0, 1, 0);
	run_done(&r);
}

static void test_line_limits(void **state)
{
	char *text;
	struct run r;
	size_t n;

	(void)state;
	/* 4096 bytes of line fine (then rejected for its name), 4097 not */
	n = 4096;
	text = malloc(n + 32);
	assert_non_null(text);
	memset(text, 'a', n);
	memcpy(text + n, "\nb.example\n", 12);
	run_init(&r);
	run_n(&r, text, strlen(text), PLAIN, 0);
	assert_counts(&r.l, 2, 1, 1, 0, 0);
	assert_non_null(strstr(r.report, "t.txt:1: label longer than 63 "
					 "characters: 'aaaa"));
	run_done(&r);
	memset(text, 'a', n + 1);
	memcpy(text + n + 1, "\nb.example\n", 12);
	run_init(&r);
	run_n(&r, text, strlen(text), PLAIN, 0);
	assert_counts(&r.l, 2, 1, 1, 0, 0);
	assert_non_null(strstr(r.report, "t.txt:1: line too long: 'aaaa"));
	assert_non_null(strstr(r.report, "aaaa...'\n"));
	run_done(&r);
	free(text);

	/* NUL bytes: the line is binary data, the quote escapes control bytes */
	run_init(&r);
	RUN(&r, PLAIN, "a.example\nb.ex\0ample\nc\x01.example\nd.example\n");
	assert_counts(&r.l, 4, 2, 2, 0, 0);
	assert_entry(&r.l, 1, "d.example", BG_NAME_EXACT, 0, 4);
	assert_string_equal(r.report,
			    "t.txt:2: binary data: 'b.ex\\x00ample'\n"
			    "t.txt:3: invalid character in name: "
			    "'c\\x01.example'\n");
	run_done(&r);
}

static void test_report_quote(void **state)
{
	struct run r;

	(void)state;
	/* surrounding blanks trimmed; a long line cut at 80 bytes */
	run_init(&r);
	RUN(&r, PLAIN,
	    "  \tnot a name at all  \r\n"
	    "1234567890123456789012345678901234567890"
	    "1234567890123456789012345678901234567890ab cd\n");
	assert_string_equal(
		r.report,
		"t.txt:1: trailing text after name: 'not a name at all'\n"
		"t.txt:2: trailing text after name: "
		"'1234567890123456789012345678901234567890"
		"1234567890123456789012345678901234567890...'\n");
	run_done(&r);

	/* the cut falls on a UTF-8 boundary */
	run_init(&r);
	RUN(&r, PLAIN,
	    "123456789012345678.123456789012345678.123456789012345678."
	    "123456789012345678.abc\xc3\xbc" "x.example\n");
	assert_string_equal(
		r.report,
		"t.txt:1: non-ASCII name (use punycode): "
		"'123456789012345678.123456789012345678.123456789012345678."
		"123456789012345678.abc...'\n");
	run_done(&r);
}

static void test_empty(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	run_n(&r, NULL, 0, AUTO, F_STRICT);
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 0, 0, 0, 0, 0);
	assert_int_equal(r.l.nfiles, 1);
	bg_names_finish(&r.l);
	assert_int_equal(r.l.n, 0);
	assert_int_equal(r.l.duplicates, 0);
	run_done(&r);

	run_init(&r);
	RUN(&r, AUTO, "\n");
	assert_counts(&r.l, 1, 0, 0, 0, 0);
	run_done(&r);

	/* a NULL name is "-" */
	run_init(&r);
	assert_int_equal(bg_names_parse_buf(&r.l, NULL, "a.example", 9, NULL),
			 0);
	assert_string_equal(r.l.files[0], "-");
	run_done(&r);

	/* freeing twice, and a fresh list, are fine */
	run_init(&r);
	bg_names_free(&r.l);
	bg_names_finish(&r.l);
	run_done(&r);
}

/* ---- Detection ---------------------------------------------------------- */

#define DETECT(lit) bg_dom_detect((lit), sizeof(lit) - 1)

static void test_detect(void **state)
{
	char *text;
	size_t i, n;

	(void)state;
	assert_int_equal(bg_dom_detect(NULL, 0), BG_DOM_PLAIN);
	assert_int_equal(DETECT(""), BG_DOM_PLAIN);
	assert_int_equal(DETECT("# only\n#comments\n\n"), BG_DOM_PLAIN);
	assert_int_equal(DETECT("# c\na.example\nb.example\n"), BG_DOM_PLAIN);
	assert_int_equal(DETECT("*.a.example\n"), BG_DOM_PLAIN);
	/* an address alone is not a hosts line */
	assert_int_equal(DETECT("0.0.0.0\n0.0.0.0 # c\n"), BG_DOM_PLAIN);

	assert_int_equal(DETECT("# c\n0.0.0.0 a.example\n"), BG_DOM_HOSTS);
	assert_int_equal(DETECT("127.0.0.1 localhost\n"), BG_DOM_HOSTS);
	assert_int_equal(DETECT("::1\tlocalhost\n"), BG_DOM_HOSTS);
	assert_int_equal(DETECT("\xef\xbb\xbf# c\r\n0.0.0.0 a.example\r\n"),
			 BG_DOM_HOSTS);
	/* StevenBlack's bare names do not hide the hosts lines after them */
	assert_int_equal(DETECT("a.example\n0.0.0.0 b.example\n"),
			 BG_DOM_HOSTS);

	assert_int_equal(DETECT("[Adblock Plus]\n! c\n||a.example^\n"),
			 BG_DOM_ADBLOCK);
	assert_int_equal(DETECT("[Adblock Plus 2.0]\na.example\n"),
			 BG_DOM_ADBLOCK);
	assert_int_equal(DETECT("! Title\na.example\n"), BG_DOM_ADBLOCK);
	assert_int_equal(DETECT("||a.example^\n"), BG_DOM_ADBLOCK);
	assert_int_equal(DETECT("@@||a.example^\n"), BG_DOM_ADBLOCK);
	assert_int_equal(DETECT("a.example\n  ||b.example^\n"),
			 BG_DOM_ADBLOCK);
	/* Adblock wins over hosts lines */
	assert_int_equal(DETECT("0.0.0.0 a.example\n||b.example^\n"),
			 BG_DOM_ADBLOCK);

	/* only the first 100 meaningful lines count */
	text = malloc(200 * 16);
	assert_non_null(text);
	for (n = 0, i = 0; i < 99; i++)
		n += (size_t)sprintf(text + n, "# c\nn%zu.example\n", i);
	n += (size_t)sprintf(text + n, "0.0.0.0 z.example\n");
	assert_int_equal(bg_dom_detect(text, n), BG_DOM_HOSTS);
	for (n = 0, i = 0; i < 100; i++)
		n += (size_t)sprintf(text + n, "n%zu.example\n", i);
	n += (size_t)sprintf(text + n, "0.0.0.0 z.example\n");
	assert_int_equal(bg_dom_detect(text, n), BG_DOM_PLAIN);
	free(text);
}

/* Detection in the parse, and opts.format overriding it. */
static void test_format_override(void **state)
{
	static const char adblock[] = "[Adblock Plus]\n! c\n||a.example^\n";
	static const char hosts[] = "0.0.0.0 a.example\nb.example\n";
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, AUTO, adblock);
	assert_counts(&r.l, 3, 1, 0, 0, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_TREE, 0, 3);
	run_done(&r);

	run_init(&r);
	RUN(&r, PLAIN, adblock);
	assert_counts(&r.l, 3, 0, 3, 0, 0);
	assert_string_equal(r.report,
			    "t.txt:1: Adblock syntax in a plain list: "
			    "'[Adblock Plus]'\n"
			    "t.txt:2: Adblock syntax in a plain list: '! c'\n"
			    "t.txt:3: Adblock syntax in a plain list: "
			    "'||a.example^'\n");
	run_done(&r);

	run_init(&r);
	RUN(&r, HOSTS, adblock);
	assert_counts(&r.l, 3, 0, 3, 0, 0);
	run_done(&r);

	run_init(&r);
	RUNF(&r, AUTO, F_SUBS, hosts);
	assert_counts(&r.l, 2, 2, 0, 0, 0);
	assert_entry(&r.l, 0, "a.example", BG_NAME_EXACT, 0, 1);
	assert_entry(&r.l, 1, "b.example", BG_NAME_EXACT, 0, 2);
	run_done(&r);

	run_init(&r);
	RUNF(&r, PLAIN, F_SUBS, hosts);
	assert_counts(&r.l, 2, 1, 1, 0, 0);
	assert_entry(&r.l, 0, "b.example", BG_NAME_TREE, 0, 2);
	assert_string_equal(r.report,
			    "t.txt:1: hosts-file line in a plain list: "
			    "'0.0.0.0 a.example'\n");
	run_done(&r);

	/* a plain list read as Adblock: names alone are exact rules */
	run_init(&r);
	RUNF(&r, ADBLOCK, F_SUBS, "a.example\n");
	assert_entry(&r.l, 0, "a.example", BG_NAME_EXACT, 0, 1);
	run_done(&r);
}

/* ---- Sorting and duplicates ---------------------------------------------- */

static void test_finish(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, ADBLOCK,
	    "||b.example^\n"
	    "a.example\n"
	    "||a.example^\n"
	    "@@||a.example^\n"
	    "||b.example^\n"
	    "*.a.example\n"
	    "||a.example^$important\n"
	    "0.0.0.0 a.example\n");
	RUN(&r, PLAIN, "c.example\nb.example\na.example\n");
	assert_int_equal(r.l.nfiles, 2);
	assert_int_equal(r.l.accepted, 11);
	bg_names_finish(&r.l);
	/*
	 * Sorted by name, kind (exact, tree, subs), allow; of equal ones the
	 * first file and line kept: lines 5, 7 (a modifier changes nothing),
	 * 8 (a hosts line is exact, like line 2) and the plain a.example go.
	 */
	assert_int_equal(r.l.duplicates, 4);
	assert_int_equal(r.l.n, 7);
	assert_entry(&r.l, 0, "a.example", BG_NAME_EXACT, 0, 2);
	assert_int_equal(r.l.v[0].file, 0);
	assert_entry(&r.l, 1, "a.example", BG_NAME_TREE, 0, 3);
	assert_entry(&r.l, 2, "a.example", BG_NAME_TREE, 1, 4);
	assert_entry(&r.l, 3, "a.example", BG_NAME_SUBS, 0, 6);
	assert_entry(&r.l, 4, "b.example", BG_NAME_EXACT, 0, 2);
	assert_int_equal(r.l.v[4].file, 1);
	assert_entry(&r.l, 5, "b.example", BG_NAME_TREE, 0, 1);
	assert_int_equal(r.l.v[5].file, 0);
	assert_entry(&r.l, 6, "c.example", BG_NAME_EXACT, 0, 1);
	assert_int_equal(r.l.v[6].file, 1);
	/* idempotent */
	bg_names_finish(&r.l);
	assert_int_equal(r.l.duplicates, 4);
	assert_int_equal(r.l.n, 7);
	assert_entry(&r.l, 0, "a.example", BG_NAME_EXACT, 0, 2);
	/* more lists after a finish, then finish again */
	RUN(&r, PLAIN, "a.example\n0.example\n");
	bg_names_finish(&r.l);
	assert_int_equal(r.l.duplicates, 5);
	assert_int_equal(r.l.n, 8);
	assert_entry(&r.l, 0, "0.example", BG_NAME_EXACT, 0, 2);
	assert_int_equal(r.l.v[0].file, 2);
	assert_entry(&r.l, 1, "a.example", BG_NAME_EXACT, 0, 2);
	assert_int_equal(r.l.v[1].file, 0);
	run_done(&r);
}

struct name_line {
	char *name;
	unsigned int line;
};

static int cmp_name_line(const void *a, const void *b)
{
	return strcmp(((const struct name_line *)a)->name,
		      ((const struct name_line *)b)->name);
}

/*
 * Many names, shuffled, many sharing their first 8 bytes or more (the
 * radix sort's ties), some shorter than 8, then repeats of them: the result
 * is strcmp() order, each name once, at its first line.
 */
static void test_finish_large(void **state)
{
	enum { N = 20000, DISTINCT = 15000 };
	struct name_line *want;
	char *text, *p;
	struct run r;
	size_t i, j;
	uint32_t x = 12345;

	(void)state;
	want = calloc(DISTINCT, sizeof(*want));
	text = malloc((size_t)N * 64);
	assert_non_null(want);
	assert_non_null(text);
	for (i = 0; i < DISTINCT; i++) {
		char **n = &want[i].name;

		switch (i % 4) {
		case 0: /* shorter than 8 bytes */
			assert_true(asprintf(n, "%zx.ex", i) > 0);
			break;
		case 1: /* a long shared prefix */
			assert_true(asprintf(n, "27lelchgcvs2wpm7.%zx.example",
					     i) > 0);
			break;
		case 2:
			assert_true(asprintf(n, "ads.%zx.example",
					     i * 7919 % 100003) > 0);
			break;
		default: /* single labels: warned about, accepted */
			assert_true(asprintf(n, "t%zu", i) > 0);
			break;
		}
	}
	for (i = DISTINCT - 1; i > 0; i--) {
		struct name_line t;

		x = x * 1103515245u + 12345u;
		j = (x >> 8) % (i + 1);
		t = want[i];
		want[i] = want[j];
		want[j] = t;
	}
	p = text;
	for (i = 0; i < N; i++) {
		x = x * 1103515245u + 12345u;
		j = i < DISTINCT ? i : (x >> 8) % DISTINCT;
		p += sprintf(p, "%s\n", want[j].name);
		if (i < DISTINCT)
			want[i].line = (unsigned int)i + 1;
	}

	run_init(&r);
	run_n(&r, text, (size_t)(p - text), PLAIN, 0);
	assert_int_equal(r.l.rejected, 0);
	assert_int_equal(r.l.accepted, N);
	bg_names_finish(&r.l);
	assert_int_equal(r.l.n, DISTINCT);
	assert_int_equal(r.l.duplicates, N - DISTINCT);
	qsort(want, DISTINCT, sizeof(*want), cmp_name_line);
	for (i = 0; i < DISTINCT; i++) {
		assert_string_equal(r.l.v[i].name, want[i].name);
		assert_int_equal(r.l.v[i].line, want[i].line);
		assert_int_equal(r.l.v[i].kind, BG_NAME_EXACT);
	}
	run_done(&r);

	for (i = 0; i < DISTINCT; i++)
		free(want[i].name);
	free(want);
	free(text);
}

/* ---- Files -------------------------------------------------------------- */

static void test_parse_file(void **state)
{
	static const char text[] = "\xef\xbb\xbf# c\r\n"
				   "0.0.0.0 a.example\r\n"
				   "0.0.0.0 bad_.example-\r\n"
				   "b.example";
	struct bg_dom_opts o = { 0 };
	char *path, *report = NULL, *want;
	struct bg_names l;
	size_t size = 0;
	FILE *f;

	(void)state;
	path = write_temp(text, sizeof(text) - 1);
	f = open_memstream(&report, &size);
	assert_non_null(f);
	o.report = f;
	bg_names_init(&l);
	assert_int_equal(bg_names_parse_file(&l, path, &o), 0);
	o.strict = 1;
	assert_int_equal(bg_names_parse_file(&l, path, &o), -EINVAL);
	assert_int_equal(bg_names_parse_file(&l, "/nonexistent/list", &o),
			 -ENOENT);
	assert_int_equal(bg_names_parse_file(&l, "/", &o), -EISDIR);
	assert_int_equal(fclose(f), 0);
	assert_true(asprintf(&want,
			     "%s:3: label starts or ends with a hyphen: "
			     "'0.0.0.0 bad_.example-'\n"
			     "%s:3: label starts or ends with a hyphen: "
			     "'0.0.0.0 bad_.example-'\n"
			     "/nonexistent/list: No such file or directory\n"
			     "/: Is a directory\n",
			     path, path) > 0);
	assert_string_equal(report, want);
	assert_int_equal(l.nfiles, 2);
	assert_string_equal(l.files[0], path);
	assert_string_equal(l.files[1], path);
	assert_int_equal(l.lines, 8);
	assert_int_equal(l.accepted, 4);
	assert_entry(&l, 0, "a.example", BG_NAME_EXACT, 0, 2);
	assert_entry(&l, 1, "b.example", BG_NAME_EXACT, 0, 4);
	assert_int_equal(l.v[2].file, 1);
	bg_names_finish(&l);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.v[0].file, 0);
	bg_names_free(&l);
	free(want);
	free(report);
	unlink(path);
	free(path);
}

/* bg_name.file is 16 bits: the 65537th list is refused. */
static void test_many_files(void **state)
{
	struct bg_dom_opts o = { 0 };
	struct bg_names l;
	char *report = NULL;
	size_t i, size = 0;
	FILE *f;

	(void)state;
	f = open_memstream(&report, &size);
	assert_non_null(f);
	o.report = f;
	bg_names_init(&l);
	for (i = 0; i < 65536; i++)
		assert_int_equal(bg_names_parse_buf(&l, "x", "a.example", 9,
						    &o),
				 0);
	assert_int_equal(bg_names_parse_buf(&l, "y", "b.example", 9, &o),
			 -E2BIG);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(report, "y: too many lists (at most 65536)\n");
	assert_int_equal(l.nfiles, 65536);
	assert_int_equal(l.v[65535].file, 65535);
	bg_names_finish(&l);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0].file, 0);
	bg_names_free(&l);
	free(report);
}

/* ---- Fixtures: the shapes of real lists ----------------------------------- */

static void parse_path(struct bg_names *l, const char *path, int flags,
		       const char *report_want)
{
	struct bg_dom_opts o = { .subdomains = !!(flags & F_SUBS),
				 .strict = 1 };
	char *report = NULL;
	size_t size = 0;
	FILE *f;

	f = open_memstream(&report, &size);
	assert_non_null(f);
	o.report = f;
	assert_int_equal(bg_names_parse_file(l, path, &o), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(report, report_want);
	free(report);
}

/* Every quirk of StevenBlack's hosts file, in 44 lines. */
static void test_fixture_hosts(void **state)
{
	const char *path = FIXTURES "hosts_stevenblack.txt";
	struct bg_names l;
	char *buf;
	FILE *f;
	long len;

	(void)state;
	/* the file is as intended: no newline at its end */
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len > 0);
	buf = malloc((size_t)len);
	assert_non_null(buf);
	rewind(f);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	assert_int_equal(fclose(f), 0);
	assert_int_not_equal(buf[len - 1], '\n');
	assert_int_equal(bg_dom_detect(buf, (size_t)len), BG_DOM_HOSTS);
	free(buf);

	bg_names_init(&l);
	parse_path(&l, path, F_SUBS, "");
	assert_int_equal(l.lines, 44);
	/* localhost and the rest of the machine's own names: 14 of them */
	assert_int_equal(l.skipped, 14);
	assert_int_equal(l.accepted, 18);
	assert_int_equal(l.rejected, 0);
	assert_int_equal(l.warnings, 0);
	assert_entry(&l, 0, "ads.example.com", BG_NAME_EXACT, 0, 23);
	assert_entry(&l, 2, "0.0.0.0.redirect.example.net", BG_NAME_EXACT, 0,
		     25);
	assert_entry(&l, 3,
		     "192.0.2.1.c752sa3k9oeb2eg2ehpgc8fnhkeyyyyyn.example.net",
		     BG_NAME_EXACT, 0, 26);
	assert_entry(&l, 4, "12724.example", BG_NAME_EXACT, 0, 27);
	assert_entry(&l, 5, "xn--bcher-kva.example", BG_NAME_EXACT, 0, 28);
	assert_entry(&l, 7, "nlocalhost.example.org", BG_NAME_EXACT, 0, 30);
	assert_entry(&l, 8, "docs.example.org", BG_NAME_EXACT, 0, 31);
	assert_entry(&l, 9, "track.example.co.uk", BG_NAME_EXACT, 0, 32);
	assert_entry(&l, 10, "amp.tracker.example.com", BG_NAME_EXACT, 0, 33);
	/* the two bare names */
	assert_entry(&l, 12, "analytics.example.com", BG_NAME_EXACT, 0, 37);
	assert_entry(&l, 13, "analytics.example.co.uk", BG_NAME_EXACT, 0, 38);
	/* the last line, unterminated, a duplicate of line 42 */
	assert_entry(&l, 17, "assets.example.net", BG_NAME_EXACT, 0, 44);
	bg_names_finish(&l);
	assert_int_equal(l.duplicates, 1);
	assert_int_equal(l.n, 17);
	assert_entry(&l, 0, "0.0.0.0.redirect.example.net", BG_NAME_EXACT, 0,
		     25);
	assert_entry(&l, 1, "12724.example", BG_NAME_EXACT, 0, 27);
	assert_entry(&l, 6, "analytics.example.co.uk", BG_NAME_EXACT, 0, 38);
	assert_entry(&l, 8, "assets.example.net", BG_NAME_EXACT, 0, 42);
	assert_entry(&l, 15, "www.xn--bcher-kva.example", BG_NAME_EXACT, 0,
		     29);
	assert_entry(&l, 16, "xn--bcher-kva.example", BG_NAME_EXACT, 0, 28);
	bg_names_free(&l);
}

static void test_fixture_adblock(void **state)
{
	const char *path = FIXTURES "adblock_hagezi.txt";
	struct bg_names l;

	(void)state;
	bg_names_init(&l);
	parse_path(&l, path, 0, "");
	assert_int_equal(l.lines, 13);
	assert_int_equal(l.accepted, 6);
	assert_int_equal(l.rejected + l.skipped + l.warnings, 0);
	assert_entry(&l, 0, "in.appcenter.example", BG_NAME_TREE, 0, 8);
	assert_entry(&l, 3, "telemetry.example.net", BG_NAME_TREE, 0, 11);
	assert_entry(&l, 5, "settings-win.data.example.com", BG_NAME_TREE, 0,
		     13);
	bg_names_finish(&l);
	assert_int_equal(l.n, 6);
	assert_entry(&l, 0, "applicationinsights.example.com", BG_NAME_TREE, 0,
		     9);
	bg_names_free(&l);
}

static void test_fixture_plain_subdomains(void **state)
{
	const char *path = FIXTURES "plain_hagezi.txt";
	struct bg_names l;
	size_t i;

	(void)state;
	bg_names_init(&l);
	parse_path(&l, path, F_SUBS, "");
	assert_int_equal(l.lines, 10);
	assert_int_equal(l.accepted, 5);
	for (i = 0; i < l.n; i++)
		assert_int_equal(l.v[i].kind, BG_NAME_TREE);
	assert_entry(&l, 0, "ns.example.me", BG_NAME_TREE, 0, 6);
	assert_entry(&l, 3, "1and1-dns.example.de", BG_NAME_TREE, 0, 9);
	bg_names_free(&l);

	/* without the option, the same list is of exact names */
	bg_names_init(&l);
	parse_path(&l, path, 0, "");
	assert_entry(&l, 0, "ns.example.me", BG_NAME_EXACT, 0, 6);
	bg_names_free(&l);
}

static void test_fixture_plain_blp(void **state)
{
	const char *path = FIXTURES "plain_blp.txt";
	struct bg_names l;

	(void)state;
	bg_names_init(&l);
	parse_path(&l, path, 0, "");
	assert_int_equal(l.lines, 13);
	assert_int_equal(l.accepted, 4);
	assert_entry(&l, 0, "25z5g623wpqpdwis.onion.example", BG_NAME_EXACT, 0,
		     10);
	/* a 63-byte label */
	assert_int_equal(strlen(l.v[2].name), 63 + 8);
	assert_int_equal(l.v[2].line, 12);
	assert_entry(&l, 3, "zz4fodcxr6mxcn.onion.example", BG_NAME_EXACT, 0,
		     13);
	bg_names_free(&l);
}

/* ---- The real lists, where the shared data is ---------------------------- */

static void test_real_stevenblack(void **state)
{
	const char *path = SHARED_DATA "stevenblack_hosts";
	struct bg_names l;

	(void)state;
	if (!have_file(path))
		skip();
	bg_names_init(&l);
	parse_path(&l, path, 0, "");
	assert_int_equal(l.lines, 2502);
	/* 2,332 address lines and the 2 bare names */
	assert_int_equal(l.accepted, 2334);
	assert_int_equal(l.rejected + l.skipped + l.warnings, 0);
	assert_entry(&l, 0, "eu1.clevertap-prod.com", BG_NAME_EXACT, 0, 5);
	bg_names_finish(&l);
	/* "assets-jpcust.jwpsrv.com", lines 2495 and 2502 */
	assert_int_equal(l.duplicates, 1);
	assert_int_equal(l.n, 2333);
	assert_entry(&l, 0, "0.0.0.0.creative.hpyrdr.com", BG_NAME_EXACT, 0,
		     928);
	bg_names_free(&l);
}

static void test_real_hagezi_doh(void **state)
{
	const char *path = SHARED_DATA "hagezi_doh.txt";
	struct bg_names l;
	size_t i;

	(void)state;
	if (!have_file(path))
		skip();
	bg_names_init(&l);
	parse_path(&l, path, F_SUBS, "");
	/* "# Number of entries: 1216" */
	assert_int_equal(l.accepted, 1216);
	assert_int_equal(l.rejected + l.skipped + l.warnings, 0);
	for (i = 0; i < l.n; i++)
		assert_int_equal(l.v[i].kind, BG_NAME_TREE);
	bg_names_finish(&l);
	assert_int_equal(l.n, 1216);
	bg_names_free(&l);
}

static void test_real_blocklistproject(void **state)
{
	const char *path = SHARED_DATA "blocklistproject_ransomware-nl.txt";
	struct bg_names l;

	(void)state;
	if (!have_file(path))
		skip();
	bg_names_init(&l);
	parse_path(&l, path, 0, "");
	/* "# Entries: 1,904" */
	assert_int_equal(l.accepted, 1904);
	assert_int_equal(l.rejected + l.skipped + l.warnings, 0);
	bg_names_finish(&l);
	assert_int_equal(l.n, 1904);
	bg_names_free(&l);
}

static void test_real_hagezi_adblock(void **state)
{
	const char *path = SHARED_DATA "hagezi_adblock_native.winoffice.txt";
	struct bg_names l;
	size_t i;

	(void)state;
	if (!have_file(path))
		skip();
	bg_names_init(&l);
	parse_path(&l, path, 0, "");
	/* "! Number of entries: 337" */
	assert_int_equal(l.accepted, 337);
	assert_int_equal(l.rejected + l.skipped + l.warnings, 0);
	for (i = 0; i < l.n; i++)
		assert_int_equal(l.v[i].kind, BG_NAME_TREE);
	bg_names_finish(&l);
	assert_int_equal(l.n, 337);
	bg_names_free(&l);
}

/* All four in one set: files and lines of the survivors. */
static void test_real_combined(void **state)
{
	static const char *const paths[] = {
		SHARED_DATA "stevenblack_hosts",
		SHARED_DATA "hagezi_doh.txt",
		SHARED_DATA "blocklistproject_ransomware-nl.txt",
		SHARED_DATA "hagezi_adblock_native.winoffice.txt",
	};
	struct bg_names l;
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++)
		if (!have_file(paths[i]))
			skip();
	bg_names_init(&l);
	for (i = 0; i < 4; i++)
		parse_path(&l, paths[i], 0, "");
	assert_int_equal(l.nfiles, 4);
	assert_int_equal(l.accepted, 2334 + 1216 + 1904 + 337);
	bg_names_finish(&l);
	for (i = 1; i < l.n; i++)
		assert_true(strcmp(l.v[i - 1].name, l.v[i].name) <= 0);
	for (i = 0; i < l.n; i++)
		assert_string_equal(l.files[l.v[i].file], paths[l.v[i].file]);
	bg_names_free(&l);
}

/* ---- Subdomain rules deeper than the datapath probes ------------------- */

/* 10 labels: the deepest parent the datapath probes (BG_DNS_SUFFIX_MAX). */
#define L10 "a.b.c.d.e.f.g.h.i.example"
#define L11 "z." L10

static void test_too_deep(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	/* 10 labels: fine in every kind; 11: reported unless exact */
	RUN(&r, ADBLOCK,
	    "||" L10 "^\n"
	    "||*." L10 "^\n"
	    "|" L11 "^\n"
	    "||" L11 "^\n"
	    "! comment\n"
	    "||*." L11 "^\n"
	    "@@||" L11 "^\n");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.report,
		"t.txt:4: warning: name deeper than 10 labels, its subdomains are "
		"never matched (the name itself is): '||" L11 "^'\n"
		"t.txt:6: warning: subdomain rule deeper than 10 labels, never "
		"matched: '||*." L11 "^'\n"
		"t.txt:7: warning: name deeper than 10 labels, its subdomains are "
		"never matched (the name itself is): '@@||" L11 "^'\n");
	/* kept (the builder leaves the subdomain key out), not rejected, and
	 * not counted as ordinary warnings */
	assert_counts(&r.l, 7, 6, 0, 0, 0);
	assert_int_equal(r.l.too_deep, 3);
	run_done(&r);

	/* plain: only with --subdomains, and *.name always */
	run_init(&r);
	RUN(&r, PLAIN, L11 "\n*." L11 "\n");
	assert_string_equal(r.report,
		"t.txt:2: warning: subdomain rule deeper than 10 labels, never "
		"matched: '*." L11 "'\n");
	assert_int_equal(r.l.too_deep, 1);
	run_done(&r);
	run_init(&r);
	RUNF(&r, PLAIN, F_SUBS, "# x\n" L10 "\n" L11 " # deep\n");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.report,
		"t.txt:3: warning: name deeper than 10 labels, its subdomains are "
		"never matched (the name itself is): '" L11 " # deep'\n");
	assert_int_equal(r.l.too_deep, 1);
	assert_int_equal(r.l.n, 2);
	run_done(&r);

	/* hosts entries are exact: never too deep */
	run_init(&r);
	RUNF(&r, HOSTS, F_SUBS, "0.0.0.0 " L11 "\n");
	assert_string_equal(r.report, "");
	assert_int_equal(r.l.too_deep, 0);
	run_done(&r);
}

static void test_too_deep_strict(void **state)
{
	struct run r;

	(void)state;
	/* the parser reports and counts; `load --strict` is what fails on it
	 * (bg_source_parse(), test_lists.c) */
	run_init(&r);
	RUNF(&r, ADBLOCK, F_STRICT, "||ok.example^\n||*." L11 "^\n");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.l.too_deep, 1);
	assert_int_equal(r.l.rejected, 0);
	assert_int_equal(r.l.warnings, 0);
	run_done(&r);
	/* a rejected line still fails strict, deep rule or not */
	run_init(&r);
	RUNF(&r, PLAIN, F_STRICT | F_SUBS, L11 "\nbad..name\n");
	assert_int_equal(r.rc, -EINVAL);
	assert_int_equal(r.l.too_deep, 1);
	assert_int_equal(r.l.rejected, 1);
	run_done(&r);
}

/* ---- bg_names_find(): what check says about a name --------------------- */

struct found {
	char buf[2048];
	size_t len;
	int n;
};

static void on_found(void *ctx, const char *path, size_t line, const char *text,
		     const struct bg_name *e, int label)
{
	struct found *f = ctx;

	(void)path;
	f->len += (size_t)snprintf(f->buf + f->len, sizeof(f->buf) - f->len,
				   "%zu:%s:%s:%s:%d|", line, text, e->name,
				   e->allow ? "allow" : "block", label);
	f->n++;
}

/* Entries bg_names_find() reports for query in file path, as
 * "line:text:name:allow|block:label|..." */
static const char *find(const char *path, enum bg_dom_format fmt, int flags,
			const char *query, int *ret)
{
	static struct found f;
	struct bg_dom_opts o = { .format = fmt,
				 .subdomains = !!(flags & F_SUBS),
				 .allow = !!(flags & F_ALLOW) };

	memset(&f, 0, sizeof(f));
	*ret = bg_names_find(path, &o, query, on_found, &f);
	if (*ret >= 0)
		assert_int_equal(*ret, f.n);
	return f.buf;
}

static void test_find(void **state)
{
	static const char ab[] =
		"[Adblock Plus]\n"
		"! title\n"
		"||example.org^\n"
		"@@||good.example.org^\n"
		"|exact.example.org^ # only this one\n"
		"||*.wild.example^\n"
		"||" L10 "^\n"
		"||" L11 "^\n"
		"||Example.ORG^\r\n"
		"bare.example\n";
	char *path = write_temp(ab, sizeof(ab) - 1);
	int ret;

	(void)state;
	/* the name itself: a tree rule counts as its exact key */
	assert_string_equal(find(path, ADBLOCK, 0, "example.org", &ret),
			    "3:||example.org^:example.org:block:0|"
			    "9:||Example.ORG^:example.org:block:0|");
	/* a parent, case and trailing dot folded in the query */
	assert_string_equal(find(path, ADBLOCK, 0, "A.B.Example.Org.", &ret),
			    "3:||example.org^:example.org:block:2|"
			    "9:||Example.ORG^:example.org:block:2|");
	/* allow rules are reported too, with their flag and label */
	assert_string_equal(find(path, ADBLOCK, 0, "x.good.example.org", &ret),
			    "3:||example.org^:example.org:block:2|"
			    "4:@@||good.example.org^:good.example.org:allow:1|"
			    "9:||Example.ORG^:example.org:block:2|");
	/* an exact rule covers no subdomain */
	assert_string_equal(find(path, ADBLOCK, 0, "exact.example.org", &ret),
			    "3:||example.org^:example.org:block:1|"
			    "5:|exact.example.org^ # only this one:exact.example.org:block:0|"
			    "9:||Example.ORG^:example.org:block:1|");
	assert_string_equal(find(path, ADBLOCK, 0, "x.bare.example", &ret), "");
	assert_int_equal(ret, 0);
	assert_string_equal(find(path, ADBLOCK, 0, "bare.example", &ret),
			    "10:bare.example:bare.example:block:0|");
	/* subdomains only: not the name itself */
	assert_string_equal(find(path, ADBLOCK, 0, "wild.example", &ret), "");
	assert_string_equal(find(path, ADBLOCK, 0, "a.wild.example", &ret),
			    "6:||*.wild.example^:wild.example:block:1|");
	/* parents of at most 10 labels, as the datapath probes */
	assert_string_equal(find(path, ADBLOCK, 0, "q." L10, &ret),
			    "7:||" L10 "^:" L10 ":block:1|");
	assert_string_equal(find(path, ADBLOCK, 0, L11, &ret),
			    "7:||" L10 "^:" L10 ":block:1|"
			    "8:||" L11 "^:" L11 ":block:0|");
	/* 12 labels: the 10-label parent is probed, the 11-label one not */
	assert_string_equal(find(path, ADBLOCK, 0, "q." L11, &ret),
			    "7:||" L10 "^:" L10 ":block:2|");
	assert_string_equal(find(path, ADBLOCK, 0, "nothing.example", &ret), "");
	/* not a name */
	find(path, ADBLOCK, 0, "bad..name", &ret);
	assert_int_equal(ret, -EINVAL);
	find(path, ADBLOCK, 0, "", &ret);
	assert_int_equal(ret, -EINVAL);
	unlink(path);
	free(path);
	find("/nonexistent/list.txt", ADBLOCK, 0, "example.org", &ret);
	assert_int_equal(ret, -ENOENT);
}

static void test_find_options(void **state)
{
	static const char plain[] = "# list\nads.example\n*.cdn.example\n";
	static const char hosts[] =
		"127.0.0.1 localhost\n"
		"0.0.0.0 a.example b.example #ad\n"
		"0.0.0.0 a.example\n";
	char *p = write_temp(plain, sizeof(plain) - 1);
	char *h = write_temp(hosts, sizeof(hosts) - 1);
	int ret;

	(void)state;
	/* the same options as the load: --subdomains makes a plain entry
	 * cover its subdomains */
	assert_string_equal(find(p, PLAIN, 0, "x.ads.example", &ret), "");
	assert_string_equal(find(p, PLAIN, F_SUBS, "x.ads.example", &ret),
			    "2:ads.example:ads.example:block:1|");
	assert_string_equal(find(p, PLAIN, F_SUBS | F_ALLOW, "ads.example", &ret),
			    "2:ads.example:ads.example:allow:0|");
	assert_string_equal(find(p, PLAIN, 0, "x.cdn.example", &ret),
			    "3:*.cdn.example:cdn.example:block:1|");
	/* hosts: every name on a line, each exact; duplicates each reported */
	assert_string_equal(find(h, HOSTS, F_SUBS, "b.example", &ret),
			    "2:0.0.0.0 a.example b.example #ad:b.example:block:0|");
	assert_string_equal(find(h, HOSTS, 0, "a.example", &ret),
			    "2:0.0.0.0 a.example b.example #ad:a.example:block:0|"
			    "3:0.0.0.0 a.example:a.example:block:0|");
	assert_string_equal(find(h, HOSTS, 0, "x.a.example", &ret), "");
	assert_string_equal(find(h, HOSTS, 0, "localhost", &ret), "");
	/* detection when no format is given */
	assert_string_equal(find(h, AUTO, 0, "b.example", &ret),
			    "2:0.0.0.0 a.example b.example #ad:b.example:block:0|");
	unlink(p);
	unlink(h);
	free(p);
	free(h);
}

/* ---- bg_name_from_wire(): names in events ------------------------------ */

/* Converts n wire bytes; returns the text, or NULL when refused. */
static const char *wire(const void *bytes, size_t n, size_t outlen)
{
	static char out[BG_NAME_TEXT_MAX + 16];
	int ret;

	assert_true(outlen <= sizeof(out));
	memset(out, 'X', sizeof(out));
	ret = bg_name_from_wire(bytes, n, out, outlen);
	if (ret < 0)
		return NULL;
	assert_int_equal((size_t)ret, strlen(out));
	assert_true((size_t)ret < outlen);
	return out;
}

#define WIRE(lit) wire((lit), sizeof(lit) - 1, BG_NAME_TEXT_MAX)
/* assert_string_equal() with a NULL that fails instead of crashing */
#define assert_text(got, want)                                         \
	do {                                                           \
		const char *g_ = (got);                                \
		assert_non_null(g_);                                   \
		assert_string_equal(g_, (want));                       \
	} while (0)

static void test_wire_to_text(void **state)
{
	uint8_t buf[512];
	size_t i, o;

	(void)state;
	assert_text(WIRE("\3www\7example\3com\0"), "www.example.com");
	assert_text(WIRE("\0"), ".");
	assert_text(WIRE("\3ads\7example\0zzzz"), "ads.example"); /* padding */
	assert_text(WIRE("\6_dmarc\2X-\0"), "_dmarc.X-");
	/* bytes that are not name characters: \DDD */
	assert_text(WIRE("\3a.b\2c \0"), "a\\046b.c\\032");
	assert_text(WIRE("\4\x00\x01\xff\\\0"), "\\000\\001\\255\\092");
	assert_text(WIRE("\2\n\x7f\0"), "\\010\\127");

	/* hostile: no root, label past the end, pointer, reserved types */
	assert_null(WIRE(""));
	assert_null(WIRE("\3www"));
	assert_null(WIRE("\3www\7example"));
	assert_null(WIRE("\7exa"));
	assert_null(WIRE("\xc0\x0c"));
	assert_null(WIRE("\3www\xc0\x0c\0"));
	assert_null(WIRE("\x40" "aaaa\0"));
	assert_null(WIRE("\x80\0"));
	assert_null(bg_name_from_wire(NULL, 4, (char[8]){ 0 }, 8) < 0 ? NULL : "");
	/* the output never runs past outlen */
	assert_null(wire("\3www\7example\0", 14, 11));
	assert_text(wire("\3www\7example\0", 14, 12), "www.example");
	assert_null(wire("\1\x01\0", 3, 4));
	assert_text(wire("\1\x01\0", 3, 5), "\\001");
	assert_null(wire("\0", 1, 1));

	/* the longest name: 255 wire bytes, labels of 63, 63, 63 and 61 */
	o = 0;
	for (i = 0; i < 4; i++) {
		size_t l = i < 3 ? 63 : 61;

		buf[o++] = (uint8_t)l;
		memset(buf + o, 'a' + (int)i, l);
		o += l;
	}
	buf[o++] = 0;
	assert_int_equal(o, 255);
	assert_non_null(wire(buf, o, BG_NAME_TEXT_MAX));
	assert_int_equal(strlen(wire(buf, o, BG_NAME_TEXT_MAX)), 250 + 3);
	/* the same with every label byte escaped fits BG_NAME_TEXT_MAX */
	for (i = 0, o = 0; i < 4; i++) {
		memset(buf + o + 1, 0xff, buf[o]);
		o += 1 + buf[o];
	}
	assert_non_null(wire(buf, 255, BG_NAME_TEXT_MAX));
	assert_int_equal(strlen(wire(buf, 255, BG_NAME_TEXT_MAX)), 4 * 250 + 3);
	/* a last label one byte longer makes 256 bytes: not a name */
	buf[1 + 63 * 3 + 3] = 62;
	memset(buf + 1 + 63 * 3 + 3 + 1, 'd', 62);
	buf[256] = 0;
	assert_null(wire(buf, 257, BG_NAME_TEXT_MAX));
	assert_null(wire(buf, 300, BG_NAME_TEXT_MAX));
	/* a long run of labels with no root within 255 bytes */
	memset(buf, 1, sizeof(buf));
	assert_null(wire(buf, sizeof(buf), BG_NAME_TEXT_MAX));
}

/* Every byte string of up to 2 bytes, and random longer ones: never read
 * past len (ASan), never write past outlen, and the text names exactly
 * the labels a careful reference walk finds. */
static void test_wire_fuzz(void **state)
{
	char out[BG_NAME_TEXT_MAX];
	unsigned int seed = 12345, iter;
	size_t n;

	(void)state;
	for (n = 0; n <= 2; n++) {
		uint32_t v, lim = 1U << (8 * n);

		for (v = 0; v < lim; v++) {
			uint8_t *b = malloc(n ? n : 1); /* exact size: ASan */

			assert_non_null(b);
			memcpy(b, &v, n);
			(void)bg_name_from_wire(b, n, out, sizeof(out));
			free(b);
		}
	}
	for (iter = 0; iter < 200000; iter++) {
		size_t len = (size_t)(rand_r(&seed) % 300), i, p = 0, labels = 0;
		size_t outlen = 1 + (size_t)(rand_r(&seed) % 40);
		uint8_t *b;
		char small[48];
		int ret, ok = 1, ret2;

		b = malloc(len ? len : 1);
		assert_non_null(b);
		for (i = 0; i < len; i++) {
			/* mostly plausible label lengths and letters */
			unsigned int r = (unsigned int)rand_r(&seed);

			b[i] = (uint8_t)(r % 4 == 0 ? r % 8 : r % 4 == 1 ? 'a' + r % 26 :
					 r % 4 == 2 ? r >> 8 : 0);
		}
		/* reference: a name iff labels of 1..63 end with a root byte
		 * within min(len, 255) bytes */
		for (;;) {
			if (p >= len || p >= 255) {
				ok = 0;
				break;
			}
			if (!b[p])
				break;
			if (b[p] > 63 || p + 1 + b[p] > (len < 255 ? len : 255)) {
				ok = 0;
				break;
			}
			labels++;
			p += 1 + b[p];
		}
		ret = bg_name_from_wire(b, len, out, sizeof(out));
		assert_int_equal(ret >= 0, ok);
		if (ok) {
			size_t dots = 0;

			for (i = 0; out[i]; i++)
				dots += out[i] == '.';
			assert_int_equal(dots, labels ? labels - 1 : 1);
			/* printable ASCII only */
			for (i = 0; out[i]; i++)
				assert_true(out[i] > 0x20 && out[i] < 0x7f);
		}
		/* a small output: refused or fits, never overflows */
		memset(small, 'Z', sizeof(small));
		ret2 = bg_name_from_wire(b, len, small, outlen);
		if (ret2 >= 0) {
			assert_true((size_t)ret2 < outlen);
			assert_int_equal(ret2, ret);
			assert_string_equal(small, out);
		}
		for (i = outlen; i < sizeof(small); i++)
			assert_int_equal(small[i], 'Z');
		free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_basic),
		cmocka_unit_test(test_plain_comments_blanks),
		cmocka_unit_test(test_plain_crlf_bom_eof),
		cmocka_unit_test(test_plain_subdomains),
		cmocka_unit_test(test_plain_wildcards),
		cmocka_unit_test(test_plain_rejects),
		cmocka_unit_test(test_hosts_addresses),
		cmocka_unit_test(test_hosts_several_names),
		cmocka_unit_test(test_hosts_comments),
		cmocka_unit_test(test_hosts_bare_names),
		cmocka_unit_test(test_hosts_special_names),
		cmocka_unit_test(test_hosts_digit_names),
		cmocka_unit_test(test_adblock_rules),
		cmocka_unit_test(test_adblock_comments),
		cmocka_unit_test(test_adblock_modifiers),
		cmocka_unit_test(test_adblock_rejects),
		cmocka_unit_test(test_adblock_hosts_lines),
		cmocka_unit_test(test_allow_option),
		cmocka_unit_test(test_normalise_forms),
		cmocka_unit_test(test_normalise_lengths),
		cmocka_unit_test(test_list_lengths),
		cmocka_unit_test(test_single_label),
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_line_limits),
		cmocka_unit_test(test_report_quote),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_format_override),
		cmocka_unit_test(test_finish),
		cmocka_unit_test(test_finish_large),
		cmocka_unit_test(test_parse_file),
		cmocka_unit_test(test_many_files),
		cmocka_unit_test(test_fixture_hosts),
		cmocka_unit_test(test_fixture_adblock),
		cmocka_unit_test(test_fixture_plain_subdomains),
		cmocka_unit_test(test_fixture_plain_blp),
		cmocka_unit_test(test_real_stevenblack),
		cmocka_unit_test(test_real_hagezi_doh),
		cmocka_unit_test(test_real_blocklistproject),
		cmocka_unit_test(test_real_hagezi_adblock),
		cmocka_unit_test(test_real_combined),
		cmocka_unit_test(test_too_deep),
		cmocka_unit_test(test_too_deep_strict),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_find_options),
		cmocka_unit_test(test_wire_to_text),
		cmocka_unit_test(test_wire_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
