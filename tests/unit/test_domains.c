// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for user/core/domains.c: plain domain lists, hosts files, Adblock
 * rules, wildcards, name validation, format detection, reports, sorting and
 * de-duplication; the fixtures in tests/fixtures/domains/ (the shapes of
 * real lists), and the real lists in ../shared/data/ where they exist.
 *
 * Most parse cases are rows of tables (struct dom_case): one input, its
 * format and options, and what the parse must give; run_cases() checks
 * them and names the failing row.
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

#include "core/domains.h"
#include "core/wire.h"
#include "lists_helpers.h"

/* Relative to the repository root, the working directory of `make test`. */
#define FIXTURES "tests/fixtures/domains/"

/* ---- Helpers ------------------------------------------------------------ */

#define F_STRICT 1
#define F_SUBS 2
#define F_ALLOW 4

/* The list formats by short names: the only place the tables name them. */
#define PLAIN BG_FMT_PLAIN
#define HOSTS BG_FMT_HOSTS
#define ADBLOCK BG_FMT_ADBLOCK
#define AUTO BG_FMT_AUTO
typedef enum bg_format dom_format;
#define EXACT BG_NAME_EXACT
#define TREE BG_NAME_TREE
#define SUBS BG_NAME_SUBS

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
		  dom_format fmt, int flags)
{
	struct bg_dom_opts o = {
		.format = fmt,
		.subdomains = !!(flags & F_SUBS),
		.allow = !!(flags & F_ALLOW),
		.strict = !!(flags & F_STRICT),
	};
	struct capture c;

	free(r->report);
	o.report = capture_open(&c);
	r->rc = bg_names_parse_buf(&r->l, "t.txt", text, len, &o);
	capture_close(&c);
	r->report = c.text;
}

/* String literals may hold NUL bytes: take their size, not strlen. */
#define RUN(r, fmt, lit) run_n((r), (lit), sizeof(lit) - 1, (fmt), 0)

static void assert_counts(const struct bg_names *l, size_t lines,
			  size_t accepted, size_t rejected, size_t skipped,
			  size_t warnings)
{
	check_int(l->lines, lines);
	check_int(l->accepted, accepted);
	check_int(l->n, accepted);
	check_int(l->rejected, rejected);
	check_int(l->skipped, skipped);
	check_int(l->warnings, warnings);
}

static void assert_entry(const struct bg_names *l, size_t i, const char *name,
			 int kind, int allow, unsigned int line)
{
	check_true(i < l->n);
	check_str(l->v[i].name, name);
	check_int(l->v[i].kind, kind);
	check_int(l->v[i].allow, allow);
	check_int(l->v[i].line, line);
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

/* ---- Parse cases --------------------------------------------------------- */

/* Entry i of the list after the parse. */
struct want_entry {
	size_t i;
	const char *name;
	int kind, allow;
	unsigned int line;
};

/* e[0..n) up to the first without a name; with files, the list each
 * came from too. */
static void check_entries(const struct bg_names *l,
			  const struct want_entry *e, size_t n,
			  const unsigned int *files)
{
	size_t j;

	for (j = 0; j < n && e[j].name; j++) {
		assert_entry(l, e[j].i, e[j].name, e[j].kind, e[j].allow,
			     e[j].line);
		if (files)
			check_int(l->v[e[j].i].file, files[j]);
	}
}

struct dom_case {
	const char *name; /* what a failure prints; the input when NULL */
	dom_format fmt;
	int flags; /* F_* */
	const char *text;
	size_t len;
	int rc;
	const char *report; /* the whole report; NULL: not checked */
	int has_counts, has_deep;
	size_t lines, accepted, rejected, skipped, warnings, too_deep;
	struct want_entry e[12]; /* up to the first without a name */
	void (*more)(const struct bg_names *l); /* checks of its own */
};

#define TEXT(lit) .text = (lit), .len = sizeof(lit) - 1
#define COUNTS(li, a, r, s, w)                                              \
	.has_counts = 1, .lines = (li), .accepted = (a), .rejected = (r),   \
	.skipped = (s), .warnings = (w)
#define DEEP(n) .has_deep = 1, .too_deep = (n)
#define ENTRIES(...) .e = { __VA_ARGS__ }
/* One line, one rejection: the counts and the whole report. */
#define REJECT(f, lit, rep)                                                 \
	{ .name = (lit), .fmt = (f), TEXT(lit), .report = (rep),            \
	  COUNTS(1, 0, 1, 0, 0) }
/* One line, one accepted entry: its name, kind and allow flag. */
#define ACCEPT(f, fl, lit, nm, kind, al)                                    \
	{ .name = (lit), .fmt = (f), .flags = (fl), TEXT(lit), .report = "", \
	  COUNTS(1, 1, 0, 0, 0), ENTRIES({ 0, (nm), (kind), (al), 1 }) }

static void run_case(const void *row)
{
	const struct dom_case *c = row;
	struct run r;

	run_init(&r);
	run_n(&r, c->text, c->len, c->fmt, c->flags);
	check_int(r.rc, c->rc);
	if (c->report)
		check_str(r.report, c->report);
	if (c->has_counts)
		assert_counts(&r.l, c->lines, c->accepted, c->rejected,
			      c->skipped, c->warnings);
	if (c->has_deep)
		check_int(r.l.too_deep, c->too_deep);
	check_entries(&r.l, c->e, ARRAY_SIZE(c->e), NULL);
	if (c->more)
		c->more(&r.l);
	run_done(&r);
}

static const char *case_name(const void *row)
{
	const struct dom_case *c = row;

	return c->name ? c->name : c->text;
}

/* The cmocka test of a table (TABLE_TEST). */
static void run_cases(void **state)
{
	run_table(*state, case_name, run_case);
}

/* ---- Plain lists -------------------------------------------------------- */

static void plain_basic_more(const struct bg_names *l)
{
	check_int(l->nfiles, 1);
	check_str(l->files[0], "t.txt");
	check_int(l->v[5].file, 0);
}

static const struct dom_case plain[] = {
	{ "plain_basic", PLAIN, 0,
	  TEXT("example.com\n"
	       "ads.example.net\n"
	       "_dmarc.example.org\n"
	       "xn--bcher-kva.example\n"
	       "a-b--c.example\n"
	       "0ms.example\n"),
	  .report = "", COUNTS(6, 6, 0, 0, 0),
	  ENTRIES({ 0, "example.com", EXACT, 0, 1 },
		  { 1, "ads.example.net", EXACT, 0, 2 },
		  { 2, "_dmarc.example.org", EXACT, 0, 3 },
		  { 3, "xn--bcher-kva.example", EXACT, 0, 4 },
		  { 4, "a-b--c.example", EXACT, 0, 5 },
		  { 5, "0ms.example", EXACT, 0, 6 }),
	  .more = plain_basic_more },
	{ "comments and blanks", PLAIN, 0,
	  TEXT("# Title: a list\n"
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
	       "f.example\t#\ttabs\n"),
	  .report = "", COUNTS(12, 5, 0, 0, 0),
	  ENTRIES({ 0, "a.example", EXACT, 0, 6 },
		  { 1, "b.example", EXACT, 0, 7 },
		  { 2, "c.example", EXACT, 0, 8 },
		  { 3, "d.example", EXACT, 0, 9 },
		  { 4, "f.example", EXACT, 0, 12 }) },
	/* the BOM is not part of the first name, the CR not of the quote */
	{ "CRLF, BOM, no newline at the end", AUTO, 0,
	  TEXT("\xef\xbb\xbf"
	       "a.example\r\n"
	       "# comment\r\n"
	       "\r\n"
	       "b.example # c\r\n"
	       "bad..example\r\n"
	       "c.example"),
	  .report = "t.txt:5: empty label: 'bad..example'\n",
	  COUNTS(6, 3, 1, 0, 0),
	  ENTRIES({ 0, "a.example", EXACT, 0, 1 },
		  { 1, "b.example", EXACT, 0, 4 },
		  { 2, "c.example", EXACT, 0, 6 }) },
	/* a final line with CR but no LF; a BOM alone */
	{ "CR without LF at the end", PLAIN, 0,
	  TEXT("a.example\r\nb.example\r"), COUNTS(2, 2, 0, 0, 0),
	  ENTRIES({ 1, "b.example", EXACT, 0, 2 }) },
	{ "a BOM alone", AUTO, 0, TEXT("\xef\xbb\xbf"), COUNTS(0, 0, 0, 0, 0) },
	{ "subdomains", PLAIN, F_SUBS,
	  TEXT("a.example\n"
	       "*.b.example\n"
	       "C.Example.\n"),
	  .report = "", COUNTS(3, 3, 0, 0, 0),
	  /* an explicit wildcard keeps its meaning */
	  ENTRIES({ 0, "a.example", TREE, 0, 1 },
		  { 1, "b.example", SUBS, 0, 2 },
		  { 2, "c.example", TREE, 0, 3 }) },
};

#define WILDCARD "wildcard only allowed as a leading '*.': "

static const struct dom_case plain_wildcards[] = {
	ACCEPT(PLAIN, 0, "*.example.com", "example.com", SUBS, 0),
	ACCEPT(PLAIN, 0, "*.Example.COM.\n", "example.com", SUBS, 0),
	ACCEPT(PLAIN, F_ALLOW, "*.example.com", "example.com", SUBS, 1),
	REJECT(PLAIN, "*example.com", "t.txt:1: " WILDCARD "'*example.com'\n"),
	REJECT(PLAIN, "ads.*.example.com",
	       "t.txt:1: " WILDCARD "'ads.*.example.com'\n"),
	REJECT(PLAIN, "example.*", "t.txt:1: " WILDCARD "'example.*'\n"),
	REJECT(PLAIN, "*.*.example.com",
	       "t.txt:1: " WILDCARD "'*.*.example.com'\n"),
	REJECT(PLAIN, "*", "t.txt:1: " WILDCARD "'*'\n"),
	REJECT(PLAIN, "*.", "t.txt:1: empty name: '*.'\n"),
	/* several in one list, numbered */
	{ "several", PLAIN, 0, TEXT("*.a.example\nb.example\n*.c.example\n"),
	  COUNTS(3, 3, 0, 0, 0),
	  ENTRIES({ 0, "a.example", SUBS, 0, 1 },
		  { 1, "b.example", EXACT, 0, 2 },
		  { 2, "c.example", SUBS, 0, 3 }) },
};

#define ADBLOCK_IN_PLAIN "Adblock syntax in a plain list: "
#define NOT_A_NAME_IP "an IP address, not a name: "

static const struct dom_case plain_rejects[] = {
	REJECT(PLAIN, "0.0.0.0 ads.example.com",
	       "t.txt:1: hosts-file line in a plain list: "
	       "'0.0.0.0 ads.example.com'\n"),
	REJECT(PLAIN, "::1 ads.example.com",
	       "t.txt:1: hosts-file line in a plain list: "
	       "'::1 ads.example.com'\n"),
	REJECT(PLAIN, "a.example b.example",
	       "t.txt:1: trailing text after name: 'a.example b.example'\n"),
	REJECT(PLAIN, "||ads.example.com^",
	       "t.txt:1: " ADBLOCK_IN_PLAIN "'||ads.example.com^'\n"),
	REJECT(PLAIN, "@@||ads.example.com^",
	       "t.txt:1: " ADBLOCK_IN_PLAIN "'@@||ads.example.com^'\n"),
	REJECT(PLAIN, "! comment", "t.txt:1: " ADBLOCK_IN_PLAIN "'! comment'\n"),
	REJECT(PLAIN, "[Adblock Plus]",
	       "t.txt:1: " ADBLOCK_IN_PLAIN "'[Adblock Plus]'\n"),
	REJECT(PLAIN, "https://ads.example.com/x",
	       "t.txt:1: a URL, not a name: 'https://ads.example.com/x'\n"),
	REJECT(PLAIN, "ads.example.com/banner",
	       "t.txt:1: a path, not a name: 'ads.example.com/banner'\n"),
	REJECT(PLAIN, "192.0.2.1", "t.txt:1: " NOT_A_NAME_IP "'192.0.2.1'\n"),
	REJECT(PLAIN, "2001:db8::1", "t.txt:1: " NOT_A_NAME_IP "'2001:db8::1'\n"),
	REJECT(PLAIN, "ads.example.com:443",
	       "t.txt:1: invalid character in name: 'ads.example.com:443'\n"),
	REJECT(PLAIN, "ads.example.com^",
	       "t.txt:1: invalid character in name: 'ads.example.com^'\n"),
	REJECT(PLAIN, "b\xc3\xbc" "cher.example",
	       "t.txt:1: non-ASCII name (use punycode): "
	       "'b\xc3\xbc" "cher.example'\n"),
	REJECT(PLAIN, ".example.com", "t.txt:1: empty label: '.example.com'\n"),
	REJECT(PLAIN, "-ads.example.com",
	       "t.txt:1: label starts or ends with a hyphen: "
	       "'-ads.example.com'\n"),
};

/* ---- Hosts files -------------------------------------------------------- */

#define NOT_BLOCKING "not a blocking address (0.0.0.0, 127.x.x.x, :: or ::1): "
#define HOSTS_WILDCARD "wildcards are not allowed in hosts files: "

static const struct dom_case hosts[] = {
	{ "blocking addresses", HOSTS, 0,
	  TEXT("0.0.0.0 a.example\n"
	       "127.0.0.1 b.example\n"
	       ":: c.example\n"
	       "::1 d.example\n"
	       "0:0:0:0:0:0:0:0 e.example\n"
	       "0:0:0:0:0:0:0:1 f.example\n"
	       "127.0.0.2 g.example\n"
	       "127.255.255.254\th.example\n"),
	  .report = "", COUNTS(8, 8, 0, 0, 0),
	  ENTRIES({ 0, "a.example", EXACT, 0, 1 },
		  { 1, "b.example", EXACT, 0, 2 },
		  { 2, "c.example", EXACT, 0, 3 },
		  { 3, "d.example", EXACT, 0, 4 },
		  { 4, "e.example", EXACT, 0, 5 },
		  { 5, "f.example", EXACT, 0, 6 },
		  { 6, "g.example", EXACT, 0, 7 },
		  { 7, "h.example", EXACT, 0, 8 }) },
	/* a bad name does not take the good ones of its line with it */
	{ "several names a line", HOSTS, 0,
	  TEXT("0.0.0.0 a.example b.example\tc.example # three\n"
	       "0.0.0.0 d.example bad..example *.e.example f.example\n"
	       "0.0.0.0 ads*.example\n"),
	  .report = "t.txt:2: empty label: "
		    "'0.0.0.0 d.example bad..example *.e.example f.example'\n"
		    "t.txt:2: " HOSTS_WILDCARD
		    "'0.0.0.0 d.example bad..example *.e.example f.example'\n"
		    "t.txt:3: " HOSTS_WILDCARD "'0.0.0.0 ads*.example'\n",
	  COUNTS(3, 5, 3, 0, 0),
	  ENTRIES({ 0, "a.example", EXACT, 0, 1 },
		  { 1, "b.example", EXACT, 0, 1 },
		  { 2, "c.example", EXACT, 0, 1 },
		  { 3, "d.example", EXACT, 0, 2 },
		  { 4, "f.example", EXACT, 0, 2 }) },
	{ "comments", HOSTS, 0,
	  TEXT("# header\n"
	       "0.0.0.0 a.example # https://example.org/issues/1635\n"
	       "0.0.0.0 b.example #ad\n"
	       "0.0.0.0 c.example#ad\n"
	       "0.0.0.0 d.example\t# tab\n"
	       "   # indented\n"
	       "#0.0.0.0 e.example\n"
	       "0.0.0.0 f.example #comment with 0.0.0.0 g.example\n"),
	  .report = "", COUNTS(8, 5, 0, 0, 0),
	  ENTRIES({ 0, "a.example", EXACT, 0, 2 },
		  { 1, "b.example", EXACT, 0, 3 },
		  { 2, "c.example", EXACT, 0, 4 },
		  { 3, "d.example", EXACT, 0, 5 },
		  { 4, "f.example", EXACT, 0, 8 }) },
	/* hosts entries are exact, --subdomains or not */
	{ "bare names", HOSTS, F_SUBS,
	  TEXT("0.0.0.0 a.example\n"
	       "b.example\n"
	       "  C.example.  # bare, with a comment\n"
	       "*.d.example\n"
	       "||e.example^\n"),
	  .report = "t.txt:4: " HOSTS_WILDCARD "'*.d.example'\n"
		    "t.txt:5: Adblock syntax in a hosts file: "
		    "'||e.example^'\n",
	  COUNTS(5, 3, 2, 0, 0),
	  ENTRIES({ 0, "a.example", EXACT, 0, 1 },
		  { 1, "b.example", EXACT, 0, 2 },
		  { 2, "c.example", EXACT, 0, 3 }) },
	/* 12 names on lines 1-12 and 15, one on line 13 */
	{ "special names", HOSTS, 0,
	  TEXT("127.0.0.1 localhost\n"
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
	       "localhost\n"),
	  .report = "", COUNTS(15, 4, 0, 16, 0),
	  ENTRIES({ 0, "myhost.example", EXACT, 0, 13 },
		  { 1, "nlocalhost.example", EXACT, 0, 14 },
		  { 2, "localhost.example", EXACT, 0, 14 },
		  { 3, "local.example", EXACT, 0, 14 }) },
	/* a name of its own on a line that maps elsewhere is still refused */
	{ "special name beside a name", HOSTS, 0,
	  TEXT("255.255.255.255 broadcasthost nas.example\n"),
	  .report = "t.txt:1: " NOT_BLOCKING
		    "'255.255.255.255 broadcasthost nas.example'\n",
	  COUNTS(1, 0, 1, 1, 0) },
	/* skipped in the other formats too */
	{ "special names in a plain list", PLAIN, 0,
	  TEXT("localhost\nbroadcasthost.\n0.0.0.0\n"), COUNTS(3, 0, 0, 3, 0) },
	{ "special names in Adblock rules", ADBLOCK, 0,
	  TEXT("||localhost^\n@@||ip6-localhost^\n"), COUNTS(2, 0, 0, 2, 0) },
	/* names that start with digits and dots, as in StevenBlack's list */
	{ "digit names", HOSTS, 0,
	  TEXT("0.0.0.0 0.0.0.0.redirect.example\n"
	       "0.0.0.0 192.0.2.1.c752sa3k9.example.net\n"
	       "0.0.0.0 12724.example\n"
	       "0.0.0.0 1.2.3.4\n"
	       "0.0.0.0 3com\n"),
	  .report = "t.txt:4: " NOT_A_NAME_IP "'0.0.0.0 1.2.3.4'\n"
		    "t.txt:5: warning: single-label name: '0.0.0.0 3com'\n",
	  COUNTS(5, 4, 1, 0, 1),
	  ENTRIES({ 0, "0.0.0.0.redirect.example", EXACT, 0, 1 },
		  { 1, "192.0.2.1.c752sa3k9.example.net", EXACT, 0, 2 },
		  { 2, "12724.example", EXACT, 0, 3 },
		  { 3, "3com", EXACT, 0, 5 }) },
};

#define NOT_AN_IP "first field is not an IP address: "

static const struct dom_case hosts_rejects[] = {
	/* a redirect is not a block */
	REJECT(HOSTS, "192.0.2.1 nas.example",
	       "t.txt:1: " NOT_BLOCKING "'192.0.2.1 nas.example'\n"),
	REJECT(HOSTS, "fe80::1%lo0 router.example",
	       "t.txt:1: " NOT_BLOCKING "'fe80::1%lo0 router.example'\n"),
	REJECT(HOSTS, "::ffff:0.0.0.0 a.example",
	       "t.txt:1: " NOT_BLOCKING "'::ffff:0.0.0.0 a.example'\n"),
	/* not addresses at all */
	REJECT(HOSTS, "0.0.0.0.0 a.example",
	       "t.txt:1: " NOT_AN_IP "'0.0.0.0.0 a.example'\n"),
	REJECT(HOSTS, "127.1 a.example",
	       "t.txt:1: " NOT_AN_IP "'127.1 a.example'\n"),
	REJECT(HOSTS, "a.example b.example",
	       "t.txt:1: " NOT_AN_IP "'a.example b.example'\n"),
	REJECT(HOSTS, "0.0.0.0", "t.txt:1: no name after the address: '0.0.0.0'\n"),
	REJECT(HOSTS, "0.0.0.0   # a.example",
	       "t.txt:1: no name after the address: '0.0.0.0   # a.example'\n"),
};

/* ---- Adblock rules ------------------------------------------------------ */

static const struct dom_case adblock[] = {
	{ "rules", ADBLOCK, 0,
	  TEXT("||a.example^\n"
	       "@@||b.example^\n"
	       "||c.example^|\n"
	       "|d.example^\n"
	       "@@|e.example^|\n"
	       "f.example\n"
	       "@@g.example\n"
	       "||*.h.example^\n"
	       "*.i.example\n"
	       "@@||*.j.example^\n"
	       "||K.Example.^\n"),
	  .report = "", COUNTS(11, 11, 0, 0, 0),
	  ENTRIES({ 0, "a.example", TREE, 0, 1 },
		  { 1, "b.example", TREE, 1, 2 },
		  { 2, "c.example", TREE, 0, 3 },
		  { 3, "d.example", EXACT, 0, 4 },
		  { 4, "e.example", EXACT, 1, 5 },
		  { 5, "f.example", EXACT, 0, 6 },
		  { 6, "g.example", EXACT, 1, 7 },
		  { 7, "h.example", SUBS, 0, 8 },
		  { 8, "i.example", SUBS, 0, 9 },
		  { 9, "j.example", SUBS, 1, 10 },
		  { 10, "k.example", TREE, 0, 11 }) },
	/* --subdomains is for plain lists: bare names here stay exact */
	ACCEPT(ADBLOCK, F_SUBS, "f.example", "f.example", EXACT, 0),
	{ "comments", ADBLOCK, 0,
	  TEXT("[Adblock Plus]\n"
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
	       "||c.example^\r\n"),
	  .report = "", COUNTS(13, 3, 0, 0, 0),
	  ENTRIES({ 0, "a.example", TREE, 0, 10 },
		  { 1, "b.example", TREE, 0, 11 },
		  { 2, "c.example", TREE, 0, 13 }) },
	/* AdGuard Home reads hosts lines in any list; so does this */
	{ "hosts lines", ADBLOCK, 0,
	  TEXT("[Adblock Plus]\n"
	       "||a.example^\n"
	       "0.0.0.0 b.example c.example # two\n"
	       "127.0.0.1 localhost\n"
	       "192.0.2.1 d.example\n"),
	  .report = "t.txt:5: " NOT_BLOCKING "'192.0.2.1 d.example'\n",
	  COUNTS(5, 3, 1, 1, 0),
	  ENTRIES({ 0, "a.example", TREE, 0, 2 },
		  { 1, "b.example", EXACT, 0, 3 },
		  { 2, "c.example", EXACT, 0, 3 }) },
};

#define MODIFIER "unsupported modifier "

static const struct dom_case adblock_modifiers[] = {
	ACCEPT(ADBLOCK, 0, "||a.example^$important", "a.example", TREE, 0),
	ACCEPT(ADBLOCK, 0, "@@||a.example^$important", "a.example", TREE, 1),
	ACCEPT(ADBLOCK, 0, "||a.example^$IMPORTANT", "a.example", TREE, 0),
	ACCEPT(ADBLOCK, 0, "a.example$important", "a.example", EXACT, 0),
	REJECT(ADBLOCK, "||a.example^$third-party",
	       "t.txt:1: " MODIFIER "'$third-party': "
	       "'||a.example^$third-party'\n"),
	REJECT(ADBLOCK, "||a.example^$important,third-party",
	       "t.txt:1: " MODIFIER "'$third-party': "
	       "'||a.example^$important,third-party'\n"),
	REJECT(ADBLOCK, "||a.example^$script,important",
	       "t.txt:1: " MODIFIER "'$script': "
	       "'||a.example^$script,important'\n"),
	REJECT(ADBLOCK, "||a.example^$dnstype=AAAA",
	       "t.txt:1: " MODIFIER "'$dnstype=AAAA': "
	       "'||a.example^$dnstype=AAAA'\n"),
	REJECT(ADBLOCK, "||a.example^$badfilter",
	       "t.txt:1: " MODIFIER "'$badfilter': '||a.example^$badfilter'\n"),
	REJECT(ADBLOCK, "||a.example^$client=192.168.0.1",
	       "t.txt:1: " MODIFIER "'$client=192.168.0.1': "
	       "'||a.example^$client=192.168.0.1'\n"),
	REJECT(ADBLOCK, "@@||a.example^$denyallow=b.example",
	       "t.txt:1: " MODIFIER "'$denyallow=b.example': "
	       "'@@||a.example^$denyallow=b.example'\n"),
	REJECT(ADBLOCK, "||a.example^$",
	       "t.txt:1: empty modifier: '||a.example^$'\n"),
	REJECT(ADBLOCK, "||a.example^$important,",
	       "t.txt:1: empty modifier: '||a.example^$important,'\n"),
	/* a long modifier is cut to 40 bytes in the reason, not in the quote */
	REJECT(ADBLOCK,
	       "||a.example^$domain=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	       "t.txt:1: " MODIFIER "'$domain=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa': "
	       "'||a.example^$domain=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'\n"),
};

#define COSMETIC "cosmetic rule, not a DNS rule: "
#define REGEX "regex rules are not supported: "
#define PATH "a path, not a name: "
#define AFTER_CARET "trailing text after '^': "

static const struct dom_case adblock_rejects[] = {
	/* cosmetic rules */
	REJECT(ADBLOCK, "a.example##.banner",
	       "t.txt:1: " COSMETIC "'a.example##.banner'\n"),
	REJECT(ADBLOCK, "##.banner", "t.txt:1: " COSMETIC "'##.banner'\n"),
	REJECT(ADBLOCK, "a.example#@#.banner",
	       "t.txt:1: " COSMETIC "'a.example#@#.banner'\n"),
	REJECT(ADBLOCK, "a.example#?#div:has(> a)",
	       "t.txt:1: " COSMETIC "'a.example#?#div:has(> a)'\n"),
	REJECT(ADBLOCK, "a.example#$#body { x: y }",
	       "t.txt:1: " COSMETIC "'a.example#$#body { x: y }'\n"),
	REJECT(ADBLOCK, "a.example#%#//scriptlet('x')",
	       "t.txt:1: " COSMETIC "'a.example#%#//scriptlet('x')'\n"),
	REJECT(ADBLOCK, "a.example#@?#div",
	       "t.txt:1: " COSMETIC "'a.example#@?#div'\n"),
	REJECT(ADBLOCK, "a.example$$script[tag]",
	       "t.txt:1: " COSMETIC "'a.example$$script[tag]'\n"),
	REJECT(ADBLOCK, "a.example##div[title=\"a b\"]",
	       "t.txt:1: " COSMETIC "'a.example##div[title=\"a b\"]'\n"),
	/* regular expressions */
	REJECT(ADBLOCK, "/ads[0-9]+\\.example/",
	       "t.txt:1: " REGEX "'/ads[0-9]+\\.example/'\n"),
	REJECT(ADBLOCK, "@@/^a\\.example$/",
	       "t.txt:1: " REGEX "'@@/^a\\.example$/'\n"),
	/* paths and patterns */
	REJECT(ADBLOCK, "||a.example/ads", "t.txt:1: " PATH "'||a.example/ads'\n"),
	REJECT(ADBLOCK, "||a.example/ads^",
	       "t.txt:1: " PATH "'||a.example/ads^'\n"),
	REJECT(ADBLOCK, "||a.example^/ads",
	       "t.txt:1: " PATH "'||a.example^/ads'\n"),
	REJECT(ADBLOCK, "||a.example",
	       "t.txt:1: no '^' after the name (a prefix pattern): "
	       "'||a.example'\n"),
	REJECT(ADBLOCK, "a.example^",
	       "t.txt:1: '^' without '||' or '|' before the name: "
	       "'a.example^'\n"),
	REJECT(ADBLOCK, "||a.example^*",
	       "t.txt:1: " AFTER_CARET "'||a.example^*'\n"),
	REJECT(ADBLOCK, "||a.example^^",
	       "t.txt:1: " AFTER_CARET "'||a.example^^'\n"),
	REJECT(ADBLOCK, "||ads*.example^",
	       "t.txt:1: " WILDCARD "'||ads*.example^'\n"),
	REJECT(ADBLOCK, "||example.*^", "t.txt:1: " WILDCARD "'||example.*^'\n"),
	REJECT(ADBLOCK, "|*.a.example^", "t.txt:1: " WILDCARD "'|*.a.example^'\n"),
	REJECT(ADBLOCK, "||192.0.2.1^",
	       "t.txt:1: " NOT_A_NAME_IP "'||192.0.2.1^'\n"),
	REJECT(ADBLOCK, "||^", "t.txt:1: empty name: '||^'\n"),
	REJECT(ADBLOCK, "@@", "t.txt:1: empty name: '@@'\n"),
	REJECT(ADBLOCK, "||a.example^ b.example",
	       "t.txt:1: trailing text after rule: "
	       "'||a.example^ b.example'\n"),
	REJECT(ADBLOCK, "||b\xc3\xbc" "cher.example^",
	       "t.txt:1: non-ASCII name (use punycode): "
	       "'||b\xc3\xbc" "cher.example^'\n"),
};

static const struct dom_case allow_option[] = {
	{ "Adblock", ADBLOCK, F_ALLOW,
	  TEXT("||a.example^\n@@||b.example^\nc.example\n0.0.0.0 d.example\n"),
	  COUNTS(4, 4, 0, 0, 0),
	  ENTRIES({ 0, "a.example", TREE, 1, 1 },
		  { 1, "b.example", TREE, 1, 2 },
		  { 2, "c.example", EXACT, 1, 3 },
		  { 3, "d.example", EXACT, 1, 4 }) },
	{ "plain", PLAIN, F_ALLOW | F_SUBS, TEXT("a.example\n"),
	  ENTRIES({ 0, "a.example", TREE, 1, 1 }) },
	{ "hosts", HOSTS, F_ALLOW, TEXT("0.0.0.0 a.example\nb.example\n"),
	  ENTRIES({ 0, "a.example", EXACT, 1, 1 },
		  { 1, "b.example", EXACT, 1, 2 }) },
};

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

/* a warning, not a failure, even in strict mode */
static const struct dom_case single_label[] = {
	{ "plain, strict", PLAIN, F_SUBS | F_STRICT,
	  TEXT("com\nexample.com\n*.net\n"),
	  .report = "t.txt:1: warning: single-label name: 'com'\n",
	  COUNTS(3, 3, 0, 0, 1),
	  ENTRIES({ 0, "com", TREE, 0, 1 }, { 2, "net", SUBS, 0, 3 }) },
	{ "Adblock", ADBLOCK, 0,
	  TEXT("||zip^\n|mov^\n@@||lan^\nrouter\n*.test\n"),
	  .report = "t.txt:4: warning: single-label name: 'router'\n",
	  COUNTS(5, 5, 0, 0, 1),
	  ENTRIES({ 0, "zip", TREE, 0, 1 },
		  { 1, "mov", EXACT, 0, 2 },
		  { 2, "lan", TREE, 1, 3 },
		  { 3, "router", EXACT, 0, 4 },
		  { 4, "test", SUBS, 0, 5 }) },
	{ "hosts", HOSTS, 0, TEXT("0.0.0.0 router nas.example\nwpad\n"),
	  .report = "t.txt:1: warning: single-label name: "
		    "'0.0.0.0 router nas.example'\n"
		    "t.txt:2: warning: single-label name: 'wpad'\n",
	  COUNTS(2, 3, 0, 0, 2) },
};

/* ---- Lines, reports, strict mode ---------------------------------------- */

static const struct dom_case strict[] = {
	/* every bad line reported, the good ones still added */
	{ "strict", PLAIN, F_STRICT,
	  TEXT("a.example\nbad..example\nb.example\n-c.example\n"),
	  .rc = -EINVAL,
	  .report = "t.txt:2: empty label: 'bad..example'\n"
		    "t.txt:4: label starts or ends with a hyphen: "
		    "'-c.example'\n",
	  COUNTS(4, 2, 2, 0, 0),
	  ENTRIES({ 0, "a.example", EXACT, 0, 1 },
		  { 1, "b.example", EXACT, 0, 3 }) },
	/* not strict: the same list parses */
	{ "not strict", PLAIN, 0, TEXT("a.example\nbad..example\n"),
	  COUNTS(2, 1, 1, 0, 0) },
	/* strict and clean; skipped names are not failures */
	{ "strict, skipped names", HOSTS, F_STRICT,
	  TEXT("127.0.0.1 localhost\n0.0.0.0 a.example\n"),
	  COUNTS(2, 1, 0, 1, 0) },
};

static void test_line_limits(void **state)
{
	/* NUL bytes: the line is binary data, the quote escapes control bytes */
	static const struct dom_case nul[] = {
		{ "NUL bytes", PLAIN, 0,
		  TEXT("a.example\nb.ex\0ample\nc\x01.example\nd.example\n"),
		  .report = "t.txt:2: binary data: 'b.ex\\x00ample'\n"
			    "t.txt:3: invalid character in name: "
			    "'c\\x01.example'\n",
		  COUNTS(4, 2, 2, 0, 0),
		  ENTRIES({ 1, "d.example", EXACT, 0, 4 }) },
	};
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

	run_table(TABLE_REF(nul), case_name, run_case);
}

static const struct dom_case report_quote[] = {
	/* surrounding blanks trimmed; a long line cut at 80 bytes */
	{ "trimmed, cut at 80 bytes", PLAIN, 0,
	  TEXT("  \tnot a name at all  \r\n"
	       "1234567890123456789012345678901234567890"
	       "1234567890123456789012345678901234567890ab cd\n"),
	  .report = "t.txt:1: trailing text after name: 'not a name at all'\n"
		    "t.txt:2: trailing text after name: "
		    "'1234567890123456789012345678901234567890"
		    "1234567890123456789012345678901234567890...'\n" },
	/* the cut falls on a UTF-8 boundary */
	{ "cut on a UTF-8 boundary", PLAIN, 0,
	  TEXT("123456789012345678.123456789012345678.123456789012345678."
	       "123456789012345678.abc\xc3\xbc" "x.example\n"),
	  .report = "t.txt:1: non-ASCII name (use punycode): "
		    "'123456789012345678.123456789012345678.123456789012345678."
		    "123456789012345678.abc...'\n" },
};

static void test_empty(void **state)
{
	static const struct dom_case newline[] = {
		{ "a lone newline", AUTO, 0, TEXT("\n"), COUNTS(1, 0, 0, 0, 0) },
	};
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

	run_table(TABLE_REF(newline), case_name, run_case);

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

static int dom_detect(const char *buf, size_t len)
{
	return bg_dom_detect(buf, len);
}

static const struct detect_case detect[] = {
	DETECT_CASE("", PLAIN),
	DETECT_CASE("# only\n#comments\n\n", PLAIN),
	DETECT_CASE("# c\na.example\nb.example\n", PLAIN),
	DETECT_CASE("*.a.example\n", PLAIN),
	/* an address alone is not a hosts line */
	DETECT_CASE("0.0.0.0\n0.0.0.0 # c\n", PLAIN),

	DETECT_CASE("# c\n0.0.0.0 a.example\n", HOSTS),
	DETECT_CASE("127.0.0.1 localhost\n", HOSTS),
	DETECT_CASE("::1\tlocalhost\n", HOSTS),
	DETECT_CASE("\xef\xbb\xbf# c\r\n0.0.0.0 a.example\r\n", HOSTS),
	/* StevenBlack's bare names do not hide the hosts lines after them */
	DETECT_CASE("a.example\n0.0.0.0 b.example\n", HOSTS),

	DETECT_CASE("[Adblock Plus]\n! c\n||a.example^\n", ADBLOCK),
	DETECT_CASE("[Adblock Plus 2.0]\na.example\n", ADBLOCK),
	DETECT_CASE("! Title\na.example\n", ADBLOCK),
	DETECT_CASE("||a.example^\n", ADBLOCK),
	DETECT_CASE("@@||a.example^\n", ADBLOCK),
	DETECT_CASE("a.example\n  ||b.example^\n", ADBLOCK),
	/* Adblock wins over hosts lines */
	DETECT_CASE("0.0.0.0 a.example\n||b.example^\n", ADBLOCK),
};

static void test_detect(void **state)
{
	char *text;
	size_t i, n;

	(void)state;
	assert_int_equal(dom_detect(NULL, 0), PLAIN);
	run_detect_table("detect", detect, ARRAY_SIZE(detect), dom_detect);

	/* only the first 100 meaningful lines count */
	text = malloc(200 * 16);
	assert_non_null(text);
	for (n = 0, i = 0; i < 99; i++)
		n += (size_t)sprintf(text + n, "# c\nn%zu.example\n", i);
	n += (size_t)sprintf(text + n, "0.0.0.0 z.example\n");
	assert_int_equal(dom_detect(text, n), HOSTS);
	for (n = 0, i = 0; i < 100; i++)
		n += (size_t)sprintf(text + n, "n%zu.example\n", i);
	n += (size_t)sprintf(text + n, "0.0.0.0 z.example\n");
	assert_int_equal(dom_detect(text, n), PLAIN);
	free(text);
}

/* Detection in the parse, and opts.format overriding it. */
#define ADBLOCK_LIST "[Adblock Plus]\n! c\n||a.example^\n"
#define HOSTS_LIST "0.0.0.0 a.example\nb.example\n"

static const struct dom_case format_override[] = {
	{ "Adblock detected", AUTO, 0, TEXT(ADBLOCK_LIST),
	  COUNTS(3, 1, 0, 0, 0), ENTRIES({ 0, "a.example", TREE, 0, 3 }) },
	{ "Adblock read as plain", PLAIN, 0, TEXT(ADBLOCK_LIST),
	  .report = "t.txt:1: " ADBLOCK_IN_PLAIN "'[Adblock Plus]'\n"
		    "t.txt:2: " ADBLOCK_IN_PLAIN "'! c'\n"
		    "t.txt:3: " ADBLOCK_IN_PLAIN "'||a.example^'\n",
	  COUNTS(3, 0, 3, 0, 0) },
	{ "Adblock read as hosts", HOSTS, 0, TEXT(ADBLOCK_LIST),
	  COUNTS(3, 0, 3, 0, 0) },
	{ "hosts detected", AUTO, F_SUBS, TEXT(HOSTS_LIST),
	  COUNTS(2, 2, 0, 0, 0),
	  ENTRIES({ 0, "a.example", EXACT, 0, 1 },
		  { 1, "b.example", EXACT, 0, 2 }) },
	{ "hosts read as plain", PLAIN, F_SUBS, TEXT(HOSTS_LIST),
	  .report = "t.txt:1: hosts-file line in a plain list: "
		    "'0.0.0.0 a.example'\n",
	  COUNTS(2, 1, 1, 0, 0), ENTRIES({ 0, "b.example", TREE, 0, 2 }) },
	/* a plain list read as Adblock: names alone are exact rules */
	{ "plain read as Adblock", ADBLOCK, F_SUBS, TEXT("a.example\n"),
	  ENTRIES({ 0, "a.example", EXACT, 0, 1 }) },
};

/* ---- Sorting and duplicates ---------------------------------------------- */

static void test_finish(void **state)
{
	static const struct want_entry sorted[] = {
		{ 0, "a.example", EXACT, 0, 2 }, { 1, "a.example", TREE, 0, 3 },
		{ 2, "a.example", TREE, 1, 4 },  { 3, "a.example", SUBS, 0, 6 },
		{ 4, "b.example", EXACT, 0, 2 }, { 5, "b.example", TREE, 0, 1 },
		{ 6, "c.example", EXACT, 0, 1 },
	};
	static const unsigned int sorted_files[] = { 0, 0, 0, 0, 1, 0, 1 };
	static const struct want_entry more[] = {
		{ 0, "0.example", EXACT, 0, 2 }, { 1, "a.example", EXACT, 0, 2 },
	};
	static const unsigned int more_files[] = { 2, 0 };
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
	check_entries(&r.l, sorted, ARRAY_SIZE(sorted), sorted_files);
	/* idempotent */
	bg_names_finish(&r.l);
	assert_int_equal(r.l.duplicates, 4);
	assert_int_equal(r.l.n, 7);
	assert_entry(&r.l, 0, "a.example", EXACT, 0, 2);
	/* more lists after a finish, then finish again */
	RUN(&r, PLAIN, "a.example\n0.example\n");
	bg_names_finish(&r.l);
	assert_int_equal(r.l.duplicates, 5);
	assert_int_equal(r.l.n, 8);
	check_entries(&r.l, more, ARRAY_SIZE(more), more_files);
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
		assert_int_equal(r.l.v[i].kind, EXACT);
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
	char *path, *want;
	struct bg_names l;
	struct capture c;

	(void)state;
	path = write_temp(text, sizeof(text) - 1);
	o.report = capture_open(&c);
	bg_names_init(&l);
	assert_int_equal(bg_names_parse_file(&l, path, &o), 0);
	o.strict = 1;
	assert_int_equal(bg_names_parse_file(&l, path, &o), -EINVAL);
	assert_int_equal(bg_names_parse_file(&l, "/nonexistent/list", &o),
			 -ENOENT);
	assert_int_equal(bg_names_parse_file(&l, "/", &o), -EISDIR);
	capture_close(&c);
	assert_true(asprintf(&want,
			     "%s:3: label starts or ends with a hyphen: "
			     "'0.0.0.0 bad_.example-'\n"
			     "%s:3: label starts or ends with a hyphen: "
			     "'0.0.0.0 bad_.example-'\n"
			     "/nonexistent/list: No such file or directory\n"
			     "/: a directory, not a regular file\n",
			     path, path) > 0);
	assert_string_equal(c.text, want);
	assert_int_equal(l.nfiles, 2);
	assert_string_equal(l.files[0], path);
	assert_string_equal(l.files[1], path);
	assert_int_equal(l.lines, 8);
	assert_int_equal(l.accepted, 4);
	assert_entry(&l, 0, "a.example", EXACT, 0, 2);
	assert_entry(&l, 1, "b.example", EXACT, 0, 4);
	assert_int_equal(l.v[2].file, 1);
	bg_names_finish(&l);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.v[0].file, 0);
	bg_names_free(&l);
	free(want);
	capture_free(&c);
	unlink(path);
	free(path);
}

/* bg_name.file is 16 bits: the 65537th list is refused. */
static void test_many_files(void **state)
{
	struct bg_dom_opts o = { 0 };
	struct bg_names l;
	struct capture c;
	size_t i;

	(void)state;
	o.report = capture_open(&c);
	bg_names_init(&l);
	for (i = 0; i < 65536; i++)
		assert_int_equal(bg_names_parse_buf(&l, "x", "a.example", 9,
						    &o),
				 0);
	assert_int_equal(bg_names_parse_buf(&l, "y", "b.example", 9, &o),
			 -E2BIG);
	assert_string_equal(capture_close(&c),
			    "y: too many lists (at most 65536)\n");
	assert_int_equal(l.nfiles, 65536);
	assert_int_equal(l.v[65535].file, 65535);
	bg_names_finish(&l);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0].file, 0);
	bg_names_free(&l);
	capture_free(&c);
}

/* ---- Fixtures and real lists: whole files -------------------------------- */

static void parse_path(struct bg_names *l, const char *path, int flags,
		       const char *report_want)
{
	struct bg_dom_opts o = { .subdomains = !!(flags & F_SUBS),
				 .strict = 1 };
	struct capture c;

	o.report = capture_open(&c);
	assert_int_equal(bg_names_parse_file(l, path, &o), 0);
	assert_string_equal(capture_close(&c), report_want);
	capture_free(&c);
}

/* The StevenBlack fixture is as intended: no newline at its end. */
static void test_fixture_hosts_bytes(void **state)
{
	const char *path = FIXTURES "hosts_stevenblack.txt";
	char *buf;
	FILE *f;
	long len;

	(void)state;
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
	assert_int_equal(dom_detect(buf, (size_t)len), HOSTS);
	free(buf);
}

/*
 * One file parsed strictly (an empty report), then finished when
 * finish: counts and entries before and after. A zero lines, accepted or
 * n is not checked; rejected, skipped and warnings are when has_rsw.
 */
struct file_case {
	const char *path;
	int optional; /* shared data: the row is skipped when it is missing */
	int flags;    /* F_SUBS */
	size_t lines, accepted;
	int has_rsw;
	size_t rejected, skipped, warnings;
	int all_tree; /* every entry covers its subdomains */
	struct want_entry e[12];
	int finish, has_dups;
	size_t duplicates, n;
	struct want_entry after[8];
	void (*more)(const struct bg_names *l); /* before the finish */
};

#define RSW(r, s, w)                                                       \
	.has_rsw = 1, .rejected = (r), .skipped = (s), .warnings = (w)
#define AFTER(...) .finish = 1, .after = { __VA_ARGS__ }

/* a 63-byte label */
static void blp_more(const struct bg_names *l)
{
	check_int(strlen(l->v[2].name), 63 + 8);
	check_int(l->v[2].line, 12);
}

static const struct file_case files[] = {
	/* every quirk of StevenBlack's hosts file, in 44 lines; localhost
	 * and the rest of the machine's own names: 14 of them */
	{ FIXTURES "hosts_stevenblack.txt", 0, F_SUBS, 44, 18, RSW(0, 14, 0),
	  .e = { { 0, "ads.example.com", EXACT, 0, 23 },
		 { 2, "0.0.0.0.redirect.example.net", EXACT, 0, 25 },
		 { 3, "192.0.2.1.c752sa3k9oeb2eg2ehpgc8fnhkeyyyyyn.example.net",
		   EXACT, 0, 26 },
		 { 4, "12724.example", EXACT, 0, 27 },
		 { 5, "xn--bcher-kva.example", EXACT, 0, 28 },
		 { 7, "nlocalhost.example.org", EXACT, 0, 30 },
		 { 8, "docs.example.org", EXACT, 0, 31 },
		 { 9, "track.example.co.uk", EXACT, 0, 32 },
		 { 10, "amp.tracker.example.com", EXACT, 0, 33 },
		 /* the two bare names */
		 { 12, "analytics.example.com", EXACT, 0, 37 },
		 { 13, "analytics.example.co.uk", EXACT, 0, 38 },
		 /* the last line, unterminated, a duplicate of line 42 */
		 { 17, "assets.example.net", EXACT, 0, 44 } },
	  .has_dups = 1, .duplicates = 1, .n = 17,
	  AFTER({ 0, "0.0.0.0.redirect.example.net", EXACT, 0, 25 },
		{ 1, "12724.example", EXACT, 0, 27 },
		{ 6, "analytics.example.co.uk", EXACT, 0, 38 },
		{ 8, "assets.example.net", EXACT, 0, 42 },
		{ 15, "www.xn--bcher-kva.example", EXACT, 0, 29 },
		{ 16, "xn--bcher-kva.example", EXACT, 0, 28 }) },
	{ FIXTURES "adblock_hagezi.txt", 0, 0, 13, 6, RSW(0, 0, 0),
	  .e = { { 0, "in.appcenter.example", TREE, 0, 8 },
		 { 3, "telemetry.example.net", TREE, 0, 11 },
		 { 5, "settings-win.data.example.com", TREE, 0, 13 } },
	  .n = 6,
	  AFTER({ 0, "applicationinsights.example.com", TREE, 0, 9 }) },
	{ FIXTURES "plain_hagezi.txt", 0, F_SUBS, 10, 5, .all_tree = 1,
	  .e = { { 0, "ns.example.me", TREE, 0, 6 },
		 { 3, "1and1-dns.example.de", TREE, 0, 9 } } },
	/* without the option, the same list is of exact names */
	{ FIXTURES "plain_hagezi.txt", 0, 0,
	  .e = { { 0, "ns.example.me", EXACT, 0, 6 } } },
	{ FIXTURES "plain_blp.txt", 0, 0, 13, 4,
	  .e = { { 0, "25z5g623wpqpdwis.onion.example", EXACT, 0, 10 },
		 { 3, "zz4fodcxr6mxcn.onion.example", EXACT, 0, 13 } },
	  .more = blp_more },
	/* 2,332 address lines and the 2 bare names; after the finish,
	 * "assets-jpcust.jwpsrv.com" (lines 2495 and 2502) once */
	{ SHARED_DATA "stevenblack_hosts", 1, 0, 2502, 2334, RSW(0, 0, 0),
	  .e = { { 0, "eu1.clevertap-prod.com", EXACT, 0, 5 } },
	  .has_dups = 1, .duplicates = 1, .n = 2333,
	  AFTER({ 0, "0.0.0.0.creative.hpyrdr.com", EXACT, 0, 928 }) },
	/* "# Number of entries: 1216" */
	{ SHARED_DATA "hagezi_doh.txt", 1, F_SUBS, 0, 1216, RSW(0, 0, 0),
	  .all_tree = 1, .finish = 1, .n = 1216 },
	/* "# Entries: 1,904" */
	{ SHARED_DATA "blocklistproject_ransomware-nl.txt", 1, 0, 0, 1904,
	  RSW(0, 0, 0), .finish = 1, .n = 1904 },
	/* "! Number of entries: 337" */
	{ SHARED_DATA "hagezi_adblock_native.winoffice.txt", 1, 0, 0, 337,
	  RSW(0, 0, 0), .all_tree = 1, .finish = 1, .n = 337 },
};

/* A row of shared data whose file is missing is skipped. */
static void run_file_case(const void *row)
{
	const struct file_case *c = row;
	struct bg_names l;
	size_t j;

	if (c->optional && !have_file(c->path))
		return;
	bg_names_init(&l);
	parse_path(&l, c->path, c->flags, "");
	if (c->lines)
		check_int(l.lines, c->lines);
	if (c->accepted)
		check_int(l.accepted, c->accepted);
	if (c->has_rsw) {
		check_int(l.rejected, c->rejected);
		check_int(l.skipped, c->skipped);
		check_int(l.warnings, c->warnings);
	}
	for (j = 0; c->all_tree && j < l.n; j++)
		check_int(l.v[j].kind, TREE);
	check_entries(&l, c->e, ARRAY_SIZE(c->e), NULL);
	if (c->more)
		c->more(&l);
	if (c->finish) {
		bg_names_finish(&l);
		if (c->has_dups)
			check_int(l.duplicates, c->duplicates);
		if (c->n)
			check_int(l.n, c->n);
		check_entries(&l, c->after, ARRAY_SIZE(c->after), NULL);
	}
	bg_names_free(&l);
}

static const char *file_case_name(const void *row)
{
	return ((const struct file_case *)row)->path;
}

static void run_files(void **state)
{
	run_table(*state, file_case_name, run_file_case);
}

static void parse_real(void *list, const char *path)
{
	parse_path(list, path, 0, "");
}

/* All four in one set: files and lines of the survivors. (test_lists.c
 * has its own: addresses, where the point is overlaps across files.) */
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
	bg_names_init(&l);
	parse_real_set(paths, ARRAY_SIZE(paths), parse_real, &l);
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
#define DEEP_NAME "name deeper than 10 labels, its subdomains are never " \
		  "matched (the name itself is): "
#define DEEP_SUBS "subdomain rule deeper than 10 labels, never matched: "

static const struct dom_case too_deep[] = {
	/* 10 labels: fine in every kind; 11: reported unless exact; kept
	 * (the builder leaves the subdomain key out), not rejected, and not
	 * counted as ordinary warnings */
	{ "Adblock", ADBLOCK, 0,
	  TEXT("||" L10 "^\n"
	       "||*." L10 "^\n"
	       "|" L11 "^\n"
	       "||" L11 "^\n"
	       "! comment\n"
	       "||*." L11 "^\n"
	       "@@||" L11 "^\n"),
	  .report = "t.txt:4: warning: " DEEP_NAME "'||" L11 "^'\n"
		    "t.txt:6: warning: " DEEP_SUBS "'||*." L11 "^'\n"
		    "t.txt:7: warning: " DEEP_NAME "'@@||" L11 "^'\n",
	  COUNTS(7, 6, 0, 0, 0), DEEP(3) },
	/* plain: only with --subdomains, and *.name always */
	{ "plain", PLAIN, 0, TEXT(L11 "\n*." L11 "\n"),
	  .report = "t.txt:2: warning: " DEEP_SUBS "'*." L11 "'\n", DEEP(1) },
	{ "plain, --subdomains", PLAIN, F_SUBS,
	  TEXT("# x\n" L10 "\n" L11 " # deep\n"),
	  .report = "t.txt:3: warning: " DEEP_NAME "'" L11 " # deep'\n",
	  COUNTS(3, 2, 0, 0, 0), DEEP(1) },
	/* hosts entries are exact: never too deep */
	{ "hosts", HOSTS, F_SUBS, TEXT("0.0.0.0 " L11 "\n"), .report = "",
	  DEEP(0) },
	/* the parser reports and counts; `load --strict` is what fails on it
	 * (bg_source_parse(), test_lists.c) */
	{ "strict", ADBLOCK, F_STRICT, TEXT("||ok.example^\n||*." L11 "^\n"),
	  COUNTS(2, 2, 0, 0, 0), DEEP(1) },
	/* a rejected line still fails strict, deep rule or not */
	{ "strict, a rejected line", PLAIN, F_STRICT | F_SUBS,
	  TEXT(L11 "\nbad..name\n"), .rc = -EINVAL, COUNTS(2, 1, 1, 0, 0),
	  DEEP(1) },
};

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
static const char *find(const char *path, dom_format fmt, int flags,
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
		TABLE_TEST(run_cases, plain),
		TABLE_TEST(run_cases, plain_wildcards),
		TABLE_TEST(run_cases, plain_rejects),
		TABLE_TEST(run_cases, hosts),
		TABLE_TEST(run_cases, hosts_rejects),
		TABLE_TEST(run_cases, adblock),
		TABLE_TEST(run_cases, adblock_modifiers),
		TABLE_TEST(run_cases, adblock_rejects),
		TABLE_TEST(run_cases, allow_option),
		cmocka_unit_test(test_normalise_forms),
		cmocka_unit_test(test_normalise_lengths),
		cmocka_unit_test(test_list_lengths),
		TABLE_TEST(run_cases, single_label),
		TABLE_TEST(run_cases, strict),
		cmocka_unit_test(test_line_limits),
		TABLE_TEST(run_cases, report_quote),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_detect),
		TABLE_TEST(run_cases, format_override),
		cmocka_unit_test(test_finish),
		cmocka_unit_test(test_finish_large),
		cmocka_unit_test(test_parse_file),
		cmocka_unit_test(test_many_files),
		cmocka_unit_test(test_fixture_hosts_bytes),
		TABLE_TEST(run_files, files),
		cmocka_unit_test(test_real_combined),
		TABLE_TEST(run_cases, too_deep),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_find_options),
		cmocka_unit_test(test_wire_to_text),
		cmocka_unit_test(test_wire_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
