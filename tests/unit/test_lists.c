// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for user/core/lists.c: list parsing, reports, keys, CIDR prefixes,
 * de-duplication, overlap reduction, bg_list_find_covering().
 *
 * Most parse cases are rows of tables (struct list_case): one list text
 * and what the parse, and the finish after it, must give; run_cases()
 * checks them and names the failing row.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bloomgate/bloom.h"
#include "core/domains.h"
#include "core/lists.h"
#include "core/sources.h"
#include "lists_helpers.h"

/* ---- Helpers ------------------------------------------------------------ */

/* The list formats of bg_source: the only place the tests name them. */
#define SRC_AUTO BG_FMT_AUTO
#define SRC_ADDR BG_FMT_ADDR
#define SRC_HOSTS BG_FMT_HOSTS
#define SRC_PLAIN BG_FMT_PLAIN
#define SRC_ADBLOCK BG_FMT_ADBLOCK

struct run {
	struct bg_list l;
	int rc;
	char *report; /* everything written to opts.report */
};

/* Parses len bytes of text as list "t.txt" with these options, capturing
 * the report. */
static void run_o(struct run *r, const char *text, size_t len, int strict,
		  int allow_wide, int allowlist)
{
	struct bg_list_opts opts = { .strict = strict, .allow_wide = allow_wide,
				     .allowlist = allowlist };
	struct capture c;

	opts.report = capture_open(&c);
	r->rc = bg_list_parse_buf(&r->l, "t.txt", text, len, &opts);
	r->report = (char *)capture_close(&c);
}

static void run_n(struct run *r, const char *text, size_t len, int strict)
{
	run_o(r, text, len, strict, 0, 0);
}

/* String literals may hold NUL bytes: take their size, not strlen. */
#define RUN(r, lit) run_n((r), (lit), sizeof(lit) - 1, 0)
#define RUN_STRICT(r, lit) run_n((r), (lit), sizeof(lit) - 1, 1)

static void run_init(struct run *r)
{
	memset(r, 0, sizeof(*r));
	bg_list_init(&r->l);
}

static void run_done(struct run *r)
{
	bg_list_free(&r->l);
	free(r->report);
	r->report = NULL;
}

static void assert_counts(const struct bg_list *l, size_t lines,
			  size_t accepted, size_t rejected, size_t n4, size_t n6)
{
	check_int(l->lines, lines);
	check_int(l->accepted, accepted);
	check_int(l->rejected, rejected);
	check_int(l->n4, n4);
	check_int(l->n6, n6);
}

static void assert_pfx4(const struct bg_key4 *k, __u32 addr_host, __u8 plen)
{
	check_int(k->kind, BG_KEY_IPV4);
	check_int(k->plen, plen);
	check_int(k->pad, 0);
	check_int(k->addr, htonl(addr_host));
}

static void assert_pfx6(const struct bg_key6 *k, const char *text, __u8 plen)
{
	__u8 want[16];

	check_int(inet_pton(AF_INET6, text, want), 1);
	check_int(k->kind, BG_KEY_IPV6);
	check_int(k->plen, plen);
	check_int(k->pad0, 0);
	check_int(k->pad1, 0);
	check_mem(k->addr, want, 16);
}

/* A single address is a prefix of its whole length. */
#define assert_key4(k, addr_host) assert_pfx4((k), (addr_host), 32)
#define assert_key6(k, text) assert_pfx6((k), (text), 128)

/* ---- Parse cases --------------------------------------------------------- */

/* Key i of v4[] (an IPv4 address in host order) or v6[] (text). */
struct want_key {
	int set, v6;
	size_t i;
	__u32 a4;
	const char *a6;
	__u8 plen;
};

#define K4(i, a, plen) { 1, 0, (i), (a), NULL, (plen) }
#define K6(i, a, plen) { 1, 1, (i), 0, (a), (plen) }

struct list_case {
	const char *name; /* what a failure prints; the input when NULL */
	const char *text;
	size_t len;
	int strict;
	int allow_wide, allowlist; /* bg_list_opts */
	int rc;
	const char *report; /* the whole report; NULL: not checked */
	int has_counts, has_warnings;
	size_t lines, accepted, rejected, n4, n6, warnings;
	struct want_key k[16]; /* up to the first not set */
	void (*more)(const struct bg_list *l); /* checks of its own */
	/* then, when finish, bg_list_finish() (twice with refinish: the
	 * second changes nothing) and the list it leaves */
	int finish, refinish;
	size_t duplicates, covered, f4, f6;
	struct want_key after[10];
};

#define TEXT(lit) .text = (lit), .len = sizeof(lit) - 1
#define COUNTS(li, a, r, n4_, n6_)                                         \
	.has_counts = 1, .lines = (li), .accepted = (a), .rejected = (r),  \
	.n4 = (n4_), .n6 = (n6_)
#define WARNINGS(n) .has_warnings = 1, .warnings = (n)
#define KEYS(...) .k = { __VA_ARGS__ }
/* bg_list_finish(): duplicates, covered, then n4 and n6 */
#define FINISH(d, c, n4_, n6_)                                             \
	.finish = 1, .duplicates = (d), .covered = (c), .f4 = (n4_),        \
	.f6 = (n6_)
#define AFTER(...) .after = { __VA_ARGS__ }
/* One line, one rejection: the counts and the whole report. */
#define REJECT(lit, rep)                                                   \
	{ .name = (lit), TEXT(lit), .report = (rep), COUNTS(1, 0, 1, 0, 0) }

static void check_keys(const struct bg_list *l, const struct want_key *k,
		       size_t n)
{
	size_t j;

	for (j = 0; j < n && k[j].set; j++) {
		if (k[j].v6) {
			check_true(k[j].i < l->n6);
			assert_pfx6(&l->v6[k[j].i], k[j].a6, k[j].plen);
		} else {
			check_true(k[j].i < l->n4);
			assert_pfx4(&l->v4[k[j].i], k[j].a4, k[j].plen);
		}
	}
}

static void check_finished(const struct list_case *c, const struct bg_list *l)
{
	check_int(l->duplicates, c->duplicates);
	check_int(l->covered, c->covered);
	check_int(l->n4, c->f4);
	check_int(l->n6, c->f6);
}

static void run_case(const void *row)
{
	const struct list_case *c = row;
	struct run r;

	run_init(&r);
	run_o(&r, c->text, c->len, c->strict, c->allow_wide, c->allowlist);
	check_int(r.rc, c->rc);
	if (c->report)
		check_str(r.report, c->report);
	if (c->has_counts)
		assert_counts(&r.l, c->lines, c->accepted, c->rejected, c->n4,
			      c->n6);
	if (c->has_warnings)
		check_int(r.l.warnings, c->warnings);
	check_keys(&r.l, c->k, ARRAY_SIZE(c->k));
	if (c->more)
		c->more(&r.l);
	if (c->finish) {
		bg_list_finish(&r.l);
		check_finished(c, &r.l);
		check_keys(&r.l, c->after, ARRAY_SIZE(c->after));
		/* accepted counts lines, before de-duplication */
		if (c->has_counts)
			check_int(r.l.accepted, c->accepted);
	}
	if (c->refinish) {
		bg_list_finish(&r.l);
		check_finished(c, &r.l);
	}
	run_done(&r);
}

static const char *case_name(const void *row)
{
	const struct list_case *c = row;

	return c->name ? c->name : c->text;
}

/* The cmocka test of a table (TABLE_TEST). */
static void run_cases(void **state)
{
	run_table(*state, case_name, run_case);
}

/* One line, one rejection, for cases built at run time. */
static void assert_rejected(const char *line, const char *report)
{
	const struct list_case c = { .text = line, .len = strlen(line),
				     .report = report,
				     COUNTS(1, 0, 1, 0, 0) };

	run_case(&c);
}

/* ---- Accepted forms ----------------------------------------------------- */

/* the exact 8 bytes: kind, plen, pad, address in network order */
static void ipv4_key_more(const struct bg_list *l)
{
	check_int(l->files, 1);
	check_int(l->duplicates, 0);
	check_mem(&l->v4[0], "\x01\x20\x00\x00\xc0\x00\x02\x01", 8);
}

static void ipv6_key_more(const struct bg_list *l)
{
	static const __u8 want[24] = {
		2, 128, 0, 0, 0, 0, 0, 0,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
	};

	check_mem(&l->v6[0], want, sizeof(want));
}

static void files_one_more(const struct bg_list *l)
{
	check_int(l->files, 1);
}

static const struct list_case accepted[] = {
	{ "IPv4 key", TEXT("192.0.2.1\n"), .report = "",
	  COUNTS(1, 1, 0, 1, 0), KEYS(K4(0, 0xc0000201, 32)),
	  .more = ipv4_key_more },
	{ "IPv4 edges",
	  TEXT("0.0.0.0\n255.255.255.255\n10.0.0.1\n100.64.0.10\n"
	       "1.22.133.244\n"),
	  .report = "", COUNTS(5, 5, 0, 5, 0),
	  KEYS(K4(0, 0x00000000, 32), K4(1, 0xffffffff, 32),
	       K4(2, 0x0a000001, 32), K4(3, 0x6440000a, 32),
	       K4(4, 0x011685f4, 32)) },
	{ "IPv6 key", TEXT("2001:db8::1\n"), .report = "",
	  COUNTS(1, 1, 0, 0, 1), KEYS(K6(0, "2001:db8::1", 128)),
	  .more = ipv6_key_more },
	/* ::fffe: is next to the IPv4-mapped prefix, not in it: an IPv6 key
	 * (mapped ones: the table mapped[]) */
	{ "IPv6 forms",
	  TEXT("::\n"
	       "::1\n"
	       "2001:DB8::AbCd\n"
	       "1:2:3:4:5:6:7:8\n"
	       "2001:0db8:0000:0000:0000:0000:0000:0001\n"
	       "::fffe:192.0.2.1\n"
	       "64:ff9b::192.0.2.1\n"
	       "fe80::1\n"),
	  .report = "", COUNTS(8, 8, 0, 0, 8),
	  KEYS(K6(0, "::", 128), K6(1, "::1", 128),
	       K6(2, "2001:db8::abcd", 128), K6(3, "1:2:3:4:5:6:7:8", 128),
	       K6(4, "2001:db8::1", 128), K6(5, "::fffe:c000:201", 128),
	       K6(6, "64:ff9b::c000:201", 128), K6(7, "fe80::1", 128)) },
	{ "mixed families",
	  TEXT("192.0.2.1\n2001:db8::1\n198.51.100.7\n2001:db8::2\n"),
	  COUNTS(4, 4, 0, 2, 2),
	  KEYS(K4(0, 0xc0000201, 32), K4(1, 0xc6336407, 32),
	       K6(0, "2001:db8::1", 128), K6(1, "2001:db8::2", 128)) },
	{ "comments",
	  TEXT("# whole-line hash comment\n"
	       "; whole-line semicolon comment\n"
	       "192.0.2.1 # comment\n"
	       "192.0.2.2 ; SBL123\n"
	       "192.0.2.3#x\n"
	       "192.0.2.4;x\n"
	       "2001:db8::1 # v6 comment\n"
	       "2001:db8::2#x\n"
	       "   # indented comment\n"
	       "\t; tab-indented comment\n"
	       "#192.0.2.99 commented-out address\n"
	       "192.0.2.5\t#\ttabs\n"
	       "192.0.2.6 # a # b ; c 1.2.3.4/8\n"),
	  .report = "", COUNTS(13, 8, 0, 6, 2),
	  KEYS(K4(0, 0xc0000201, 32), K4(1, 0xc0000202, 32),
	       K4(2, 0xc0000203, 32), K4(3, 0xc0000204, 32),
	       K4(4, 0xc0000205, 32), K4(5, 0xc0000206, 32),
	       K6(0, "2001:db8::1", 128), K6(1, "2001:db8::2", 128)) },
	{ "whitespace",
	  TEXT("\n"
	       "   \n"
	       "\t\t\n"
	       "  192.0.2.1\n"
	       "192.0.2.2   \n"
	       "\t192.0.2.3\t\n"
	       " \t 2001:db8::1 \t \n"
	       "\n"),
	  .report = "", COUNTS(8, 4, 0, 3, 1),
	  KEYS(K4(0, 0xc0000201, 32), K4(1, 0xc0000202, 32),
	       K4(2, 0xc0000203, 32), K6(0, "2001:db8::1", 128)) },
	/* the head of a FireHOL .ipset file, as distributed */
	{ "FireHOL ipset",
	  TEXT("#\n"
	       "# example_level1\n"
	       "#\n"
	       "# ipv4 hash:ip ipset\n"
	       "#\n"
	       "# Source URL: https://example.org/list.txt\n"
	       "# Entries      : 3 unique IPs\n"
	       "#\n"
	       "192.0.2.10\n"
	       "198.51.100.20\n"
	       "203.0.113.30\n"),
	  COUNTS(11, 3, 0, 3, 0),
	  KEYS(K4(0, 0xc000020a, 32), K4(1, 0xc6336414, 32),
	       K4(2, 0xcb00711e, 32)) },
	/* the CR is not part of the quoted text */
	{ "CRLF",
	  TEXT("# header\r\n"
	       "192.0.2.1\r\n"
	       "\r\n"
	       "2001:db8::1\r\n"
	       "192.0.2.2 # c\r\n"
	       "example.com\r\n"
	       "192.0.2.3\r\n"),
	  .report = "t.txt:6: not an IP address: 'example.com'\n",
	  COUNTS(7, 4, 1, 3, 1),
	  KEYS(K4(0, 0xc0000201, 32), K4(1, 0xc0000202, 32),
	       K4(2, 0xc0000203, 32), K6(0, "2001:db8::1", 128)) },
	{ "no final newline", TEXT("192.0.2.1\n192.0.2.2"),
	  COUNTS(2, 2, 0, 2, 0), KEYS(K4(1, 0xc0000202, 32)) },
	{ "no final newline, CR", TEXT("2001:db8::1\r\n2001:db8::2\r"),
	  COUNTS(2, 2, 0, 0, 2), KEYS(K6(1, "2001:db8::2", 128)) },
	/* an unterminated bad last line is still reported with its number */
	{ "no final newline, bad", TEXT("192.0.2.1\nbad"),
	  .report = "t.txt:2: not an IP address: 'bad'\n",
	  COUNTS(2, 1, 1, 1, 0) },
	{ "empty", TEXT(""), .report = "", COUNTS(0, 0, 0, 0, 0),
	  .more = files_one_more },
	/* NULL with length 0 is an empty list too */
	{ "NULL", .text = NULL, .len = 0, .strict = 1, COUNTS(0, 0, 0, 0, 0),
	  FINISH(0, 0, 0, 0) },
	/* a lone newline is one blank line */
	{ "a lone newline", TEXT("\n"), COUNTS(1, 0, 0, 0, 0) },
	{ "only comments", TEXT("# one\n; two\n\n   # three\n#"), .strict = 1,
	  .report = "", COUNTS(5, 0, 0, 0, 0), FINISH(0, 0, 0, 0) },
	{ "BOM", TEXT("\xef\xbb\xbf" "192.0.2.1\n192.0.2.2\n"),
	  COUNTS(2, 2, 0, 2, 0), KEYS(K4(0, 0xc0000201, 32)) },
	/* only at the very start: elsewhere it is garbage */
	{ "BOM not at the start", TEXT("192.0.2.1\n\xef\xbb\xbf" "192.0.2.2\n"),
	  .report = "t.txt:2: not an IP address: '\xef\xbb\xbf" "192.0.2.2'\n",
	  COUNTS(2, 1, 1, 1, 0) },
};

/* A 4096-byte line is fine; 4097 is too long (CR not counted). */
static void test_line_length_limit(void **state)
{
	char *buf = malloc(4096 + 3);
	struct run r;

	(void)state;
	assert_non_null(buf);
	memset(buf, ' ', 4096);
	memcpy(buf, "192.0.2.1 #", 11);
	memcpy(buf + 4096, "\r\n", 2);
	run_init(&r);
	run_n(&r, buf, 4098, 0);
	assert_counts(&r.l, 1, 1, 0, 1, 0);
	assert_string_equal(r.report, "");
	run_done(&r);

	memset(buf, ' ', 4097);
	memcpy(buf, "192.0.2.1", 9);
	buf[4097] = '\n';
	run_init(&r);
	run_n(&r, buf, 4098, 0);
	assert_counts(&r.l, 1, 0, 1, 0, 0);
	assert_string_equal(r.report,
			    "t.txt:1: line too long: '192.0.2.1'\n");
	run_done(&r);
	free(buf);
}

/* ---- Duplicates and sorting ---------------------------------------------- */

static const struct list_case sorting[] = {
	{ "duplicates",
	  TEXT("192.0.2.1\n"
	       "192.0.2.1\n"
	       "  192.0.2.1 # again\n"
	       "2001:db8::1\n"
	       "2001:DB8:0:0::1\n"
	       "2001:0db8::0001\n"
	       "192.0.2.2\n"),
	  COUNTS(7, 7, 0, 4, 3), FINISH(4, 0, 2, 1),
	  AFTER(K4(0, 0xc0000201, 32), K4(1, 0xc0000202, 32),
		K6(0, "2001:db8::1", 128)) },
	/* memcmp order of the keys is numeric order of the addresses;
	 * finishing again changes nothing */
	{ "finish sorts",
	  TEXT("203.0.113.9\n"
	       "10.0.0.1\n"
	       "2001:db8::ff\n"
	       "192.0.2.1\n"
	       "10.0.0.1\n"
	       "::1\n"
	       "1.0.0.0\n"
	       "2001:db8::1\n"
	       "255.255.255.255\n"
	       "2001:db8::ff\n"
	       "0.0.0.0\n"),
	  COUNTS(11, 11, 0, 7, 4), FINISH(2, 0, 6, 3), .refinish = 1,
	  AFTER(K4(0, 0x00000000, 32), K4(1, 0x01000000, 32),
		K4(2, 0x0a000001, 32), K4(3, 0xc0000201, 32),
		K4(4, 0xcb007109, 32), K4(5, 0xffffffff, 32),
		K6(0, "::1", 128), K6(1, "2001:db8::1", 128),
		K6(2, "2001:db8::ff", 128)) },
};

/* Several lists into one set: counts add up, duplicates across lists go. */
static void test_several_lists(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "192.0.2.1\n192.0.2.2\nbad\n");
	free(r.report);
	RUN(&r, "192.0.2.2\n192.0.2.3\n2001:db8::1\n");
	assert_int_equal(r.l.files, 2);
	assert_counts(&r.l, 6, 5, 1, 4, 1);
	bg_list_finish(&r.l);
	assert_int_equal(r.l.duplicates, 1);
	assert_int_equal(r.l.n4, 3);
	assert_int_equal(r.l.n6, 1);
	run_done(&r);
}

/* ---- CIDR prefixes ------------------------------------------------------- */

/* the exact 8 bytes: kind, plen, pad, address in network order */
static void cidr4_more(const struct bg_list *l)
{
	static const char want[][9] = {
		"\x01\x00\x00\x00\x00\x00\x00\x00",
		"\x01\x01\x00\x00\x80\x00\x00\x00",
		"\x01\x08\x00\x00\x0a\x00\x00\x00",
		"\x01\x18\x00\x00\xc0\x00\x02\x00",
		"\x01\x1f\x00\x00\xc0\x00\x02\x02",
		"\x01\x20\x00\x00\xc0\x00\x02\x01",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(want); i++)
		check_mem(&l->v4[i], want[i], 8);
}

static void cidr6_more(const struct bg_list *l)
{
	static const __u8 want32[24] = {
		2, 32, 0, 0, 0, 0, 0, 0,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	static const __u8 want0[24] = { 2 };

	check_mem(&l->v6[0], want0, sizeof(want0));
	check_mem(&l->v6[1], want32, sizeof(want32));
}

/* The warning of a wide prefix loaded with the opt-in. */
#define WIDE_OK "warning: wide prefix, loaded (--allow-wide): "
#define HOST_BITS "warning: host bits set, using "

static const struct list_case cidr[] = {
	/* a /32 is the same key as the plain address; /0 covers everything
	 * else (wide prefixes: opted in, warned) */
	{ "IPv4 forms", .allow_wide = 1,
	  TEXT("0.0.0.0/0\n"
	       "128.0.0.0/1\n"
	       "10.0.0.0/8\n"
	       "192.0.2.0/24\n"
	       "192.0.2.2/31\n"
	       "192.0.2.1/32\n"
	       "255.255.255.254/31\n"
	       "255.255.255.255/32\n"
	       "198.51.100.0/22 # comment\n"
	       "203.0.113.128/25;x\n"),
	  .strict = 1,
	  .report = "t.txt:1: " WIDE_OK "'0.0.0.0/0'\n"
		    "t.txt:2: " WIDE_OK "'128.0.0.0/1'\n",
	  COUNTS(10, 10, 0, 10, 0), WARNINGS(2),
	  KEYS(K4(6, 0xfffffffe, 31), K4(7, 0xffffffff, 32),
	       K4(8, 0xc6336400, 22), K4(9, 0xcb007180, 25),
	       K4(5, 0xc0000201, 32)),
	  .more = cidr4_more, FINISH(0, 9, 1, 0), AFTER(K4(0, 0, 0)) },
	/* plain address and its /32: one key */
	{ "address and its /32", TEXT("192.0.2.1\n192.0.2.1/32\n"),
	  FINISH(1, 0, 1, 0), AFTER(K4(0, 0xc0000201, 32)) },
	{ "IPv6 forms", .allow_wide = 1,
	  TEXT("::/0\n"
	       "2001:db8::/32\n"
	       "::1/128\n"
	       "2001:DB8:0:0:1::/80\n"
	       "2001:0db8:0000:0000:0000:0000:0000:0000/64\n"
	       "fe80::/10\n"
	       "::ffff:0:0/95\n"
	       "2001:db8:8000::/33 ; SBL1\n"
	       "8000::/1\n"
	       "1:2:3:4:5:6:7:8/128\n"
	       "2001:db8::fffe/127\n"
	       "64:ff9b::/96#x\n"),
	  .strict = 1,
	  .report = "t.txt:1: " WIDE_OK "'::/0'\n"
		    "t.txt:6: " WIDE_OK "'fe80::/10'\n"
		    /* below /96: an IPv6 prefix, its host bit and all */
		    "t.txt:7: " HOST_BITS "::fffe:0:0/95: '::ffff:0:0/95'\n"
		    "t.txt:9: " WIDE_OK "'8000::/1'\n",
	  COUNTS(12, 12, 0, 0, 12), WARNINGS(4),
	  KEYS(K6(0, "::", 0), K6(1, "2001:db8::", 32), K6(2, "::1", 128),
	       K6(3, "2001:db8:0:0:1::", 80), K6(4, "2001:db8::", 64),
	       K6(5, "fe80::", 10), K6(6, "::fffe:0:0", 95),
	       K6(7, "2001:db8:8000::", 33), K6(8, "8000::", 1),
	       K6(9, "1:2:3:4:5:6:7:8", 128), K6(10, "2001:db8::fffe", 127),
	       K6(11, "64:ff9b::", 96)),
	  .more = cidr6_more },
	/* a Spamhaus DROP file (documentation prefixes): "prefix ; SBLnnn";
	 * 2001:db8:1234::/48 lies inside 2001:db8::/32; memcmp order after
	 * the finish: by prefix length first */
	{ "Spamhaus DROP",
	  TEXT("; Example DROP List 2025/01/15 - (c) nobody\r\n"
	       "; https://www.example.org/drop/drop.txt\r\n"
	       "; Last-Modified: Wed, 08 Jan 2025 22:38:36 GMT\r\n"
	       ";Expires: Wed, 15 Jan 2025 18:37:54 GMT\r\n"
	       "192.0.2.0/24 ; SBL123456\r\n"
	       "198.51.100.0/22 ; SBL000002\r\n"
	       "203.0.113.128/25;SBL3\r\n"
	       "2001:db8::/32 ; SBL626637\r\n"
	       "3fff:100::/24 ; SBL631364\r\n"
	       "2001:db8:1234::/48\t;\tSBL9\r\n"
	       "; end\r\n"),
	  .strict = 1, .report = "", COUNTS(11, 6, 0, 3, 3), WARNINGS(0),
	  KEYS(K4(0, 0xc0000200, 24), K4(1, 0xc6336400, 22),
	       K4(2, 0xcb007180, 25), K6(0, "2001:db8::", 32),
	       K6(1, "3fff:100::", 24), K6(2, "2001:db8:1234::", 48)),
	  FINISH(0, 1, 3, 2),
	  AFTER(K4(0, 0xc6336400, 22), K4(1, 0xc0000200, 24),
		K4(2, 0xcb007180, 25), K6(0, "3fff:100::", 24),
		K6(1, "2001:db8::", 32)) },
	/* the head of a FireHOL .netset file: addresses and prefixes mixed */
	{ "FireHOL netset",
	  TEXT("#\n"
	       "# example_level1\n"
	       "#\n"
	       "# ipv4 hash:net ipset\n"
	       "#\n"
	       "# Entries         : 7 subnets, 285217032 unique IPs\n"
	       "#\n"
	       "0.0.0.0/8\n"
	       "1.10.16.0/20\n"
	       "1.93.0.224\n"
	       "5.8.37.0/24\n"
	       "100.64.0.0/10\n"
	       "192.0.2.7\n"
	       "224.0.0.0/3\n"),
	  .strict = 1, .allow_wide = 1, COUNTS(14, 7, 0, 7, 0), WARNINGS(1),
	  KEYS(K4(0, 0x00000000, 8), K4(1, 0x010a1000, 20),
	       K4(2, 0x015d00e0, 32), K4(3, 0x05082500, 24),
	       K4(4, 0x64400000, 10), K4(5, 0xc0000207, 32),
	       K4(6, 0xe0000000, 3)),
	  FINISH(0, 0, 7, 0),
	  AFTER(K4(0, 0xe0000000, 3), K4(6, 0xc0000207, 32)) },
};

/* a second reason on the same warning line */
#define WIDE_TOO "; wide prefix, loaded (--allow-wide): "

/* Host bits set: accepted masked, reported as a warning, never an error. */
static const struct list_case host_bits[] = {
	/* strict, yet warnings do not fail; after the finish, 10.1.2.3/8
	 * and 10.0.0.0/8 are one key, and /0 covers the rest */
	{ "host bits", .allow_wide = 1,
	  TEXT("10.1.2.3/8\n"
	       "  192.0.2.255/24 # c\r\n"
	       "2001:db8::1/32\n"
	       "0.0.0.1/0\n"
	       "::1/0\n"
	       "192.0.2.1/31\n"
	       "10.0.0.0/8\n"
	       "2001:db8:0:0:1:2:3:4/64 ; SBL1\n"
	       "255.255.255.255/1\n"
	       "2001:db8::1/128\n"
	       "2001:db8::1/127\n"),
	  .strict = 1,
	  .report = "t.txt:1: " HOST_BITS "10.0.0.0/8: '10.1.2.3/8'\n"
		    "t.txt:2: " HOST_BITS "192.0.2.0/24: '192.0.2.255/24 # c'\n"
		    "t.txt:3: " HOST_BITS "2001:db8::/32: '2001:db8::1/32'\n"
		    "t.txt:4: " HOST_BITS "0.0.0.0/0" WIDE_TOO "'0.0.0.1/0'\n"
		    "t.txt:5: " HOST_BITS "::/0" WIDE_TOO "'::1/0'\n"
		    "t.txt:6: " HOST_BITS "192.0.2.0/31: '192.0.2.1/31'\n"
		    "t.txt:8: " HOST_BITS "2001:db8::/64: "
		    "'2001:db8:0:0:1:2:3:4/64 ; SBL1'\n"
		    "t.txt:9: " HOST_BITS "128.0.0.0/1" WIDE_TOO
		    "'255.255.255.255/1'\n"
		    "t.txt:11: " HOST_BITS "2001:db8::/127: "
		    "'2001:db8::1/127'\n",
	  COUNTS(11, 11, 0, 6, 5), WARNINGS(9),
	  KEYS(K4(0, 0x0a000000, 8), K4(1, 0xc0000200, 24),
	       K6(0, "2001:db8::", 32), K4(2, 0, 0), K6(1, "::", 0),
	       K4(3, 0xc0000200, 31), K4(4, 0x0a000000, 8),
	       K6(2, "2001:db8::", 64), K4(5, 0x80000000, 1),
	       K6(4, "2001:db8::", 127)),
	  FINISH(1, 4 + 4, 1, 1) },
	/* warnings and rejections together: only the rejection fails strict */
	{ "host bits and a rejection", TEXT("10.1.2.3/8\nbad\n"), .strict = 1,
	  .rc = -EINVAL,
	  .report = "t.txt:1: " HOST_BITS "10.0.0.0/8: '10.1.2.3/8'\n"
		    "t.txt:2: not an IP address: 'bad'\n",
	  COUNTS(2, 1, 1, 1, 0), WARNINGS(1) },
};

#define MAPPED "warning: IPv4-mapped IPv6, using "
#define R_MAPPED "IPv4-mapped IPv6 address, refused by --strict (write it as IPv4)"
#define R_WIDE4 "prefix shorter than /8 blocks too much (needs --allow-wide)"
#define R_WIDE6 "prefix shorter than /16 blocks too much (needs --allow-wide)"
#define WIDE_ALLOW "wide prefix in an allowlist: lets all of it through"

/* IPv4-mapped IPv6 entries (::ffff:0:0/96 and longer) are their IPv4
 * entries, with a warning; --strict refuses them. (Every length 96..128:
 * test_mapped_lengths.) */
static const struct list_case mapped[] = {
	{ "mapped address", TEXT("::ffff:10.9.0.1\n"), .rc = 0,
	  .report = "t.txt:1: " MAPPED "10.9.0.1: '::ffff:10.9.0.1'\n",
	  COUNTS(1, 1, 0, 1, 0), WARNINGS(1), KEYS(K4(0, 0x0a090001, 32)) },
	/* any spelling of it, and with /128 */
	{ "mapped spellings",
	  TEXT("::FFFF:a09:1\n"
	       "0:0:0:0:0:ffff:10.9.0.2/128 # c\n"
	       "0000:0000::ffff:0a09:0003\n"),
	  .report = "t.txt:1: " MAPPED "10.9.0.1: '::FFFF:a09:1'\n"
		    "t.txt:2: " MAPPED "10.9.0.2: '0:0:0:0:0:ffff:10.9.0.2/128 # c'\n"
		    "t.txt:3: " MAPPED "10.9.0.3: '0000:0000::ffff:0a09:0003'\n",
	  COUNTS(3, 3, 0, 3, 0), WARNINGS(3),
	  KEYS(K4(0, 0x0a090001, 32), K4(1, 0x0a090002, 32),
	       K4(2, 0x0a090003, 32)) },
	/* the warning names the key loaded, masked: one warning, not two */
	{ "mapped prefix, host bits", TEXT("::ffff:10.9.0.1/104\n"),
	  .report = "t.txt:1: " MAPPED "10.0.0.0/8: '::ffff:10.9.0.1/104'\n",
	  COUNTS(1, 1, 0, 1, 0), WARNINGS(1), KEYS(K4(0, 0x0a000000, 8)) },
	/* the same entry as its IPv4 spelling: a duplicate after the finish */
	{ "mapped duplicate", TEXT("10.9.0.1\n::ffff:10.9.0.1\n"),
	  COUNTS(2, 2, 0, 2, 0), WARNINGS(1), FINISH(1, 0, 1, 0),
	  AFTER(K4(0, 0x0a090001, 32)) },
	/* shorter than /96: more than mapped addresses, an IPv6 prefix */
	{ "below /96", TEXT("::ffff:0:0/96\n::fffe:0:0/95\n::ffff:0:0/80\n"),
	  .allow_wide = 1,
	  .report = "t.txt:1: " MAPPED "0.0.0.0/0" WIDE_TOO "'::ffff:0:0/96'\n"
		    "t.txt:3: " HOST_BITS "::/80: '::ffff:0:0/80'\n",
	  COUNTS(3, 3, 0, 1, 2), WARNINGS(2),
	  KEYS(K4(0, 0, 0), K6(0, "::fffe:0:0", 95), K6(1, "::", 80)) },
	/* next to the mapped prefix, not in it: IPv6 keys, no warning */
	{ "not mapped",
	  TEXT("::fffe:10.9.0.1\n::1:ffff:10.9.0.1\n::ffff:0:10.9.0.1\n"
	       "64:ff9b::10.9.0.1\n"),
	  .strict = 1, .report = "", COUNTS(4, 4, 0, 0, 4), WARNINGS(0),
	  KEYS(K6(0, "::fffe:a09:1", 128), K6(1, "::1:ffff:a09:1", 128),
	       K6(2, "::ffff:0:a09:1", 128), K6(3, "64:ff9b::a09:1", 128)) },
	/* strict: a rejected line, and the parse fails */
	{ "mapped, strict", TEXT("192.0.2.1\n::ffff:10.9.0.1\n::ffff:10.0.0.0/104\n"),
	  .strict = 1, .rc = -EINVAL,
	  .report = "t.txt:2: " R_MAPPED ": '::ffff:10.9.0.1'\n"
		    "t.txt:3: " R_MAPPED ": '::ffff:10.0.0.0/104'\n",
	  COUNTS(3, 1, 2, 1, 0), WARNINGS(0) },
	/* mapped and wide: strict says mapped first */
	{ "mapped wide, strict", TEXT("::ffff:0.0.0.0/96\n"), .strict = 1,
	  .allow_wide = 1, .rc = -EINVAL,
	  .report = "t.txt:1: " R_MAPPED ": '::ffff:0.0.0.0/96'\n",
	  COUNTS(1, 0, 1, 0, 0) },
	/* mapped and wide, not opted in: the wide prefix is refused */
	{ "mapped wide", TEXT("::ffff:0.0.0.0/100\n"),
	  .report = "t.txt:1: " R_WIDE4 ": '::ffff:0.0.0.0/100'\n",
	  COUNTS(1, 0, 1, 0, 0), WARNINGS(0) },
	/* an allowlist's mapped entries too */
	{ "mapped allowlist", TEXT("::ffff:10.9.0.1\n"), .allowlist = 1,
	  .report = "t.txt:1: " MAPPED "10.9.0.1: '::ffff:10.9.0.1'\n",
	  COUNTS(1, 1, 0, 1, 0), WARNINGS(1), KEYS(K4(0, 0x0a090001, 32)) },
};

/* ::ffff:10.9.0.1/n for every n of 96..128: 10.9.0.1 masked to n - 96;
 * below /104 (an IPv4 /8) a wide prefix, refused without the opt-in. */
static void test_mapped_lengths(void **state)
{
	unsigned int n;

	(void)state;
	for (n = 96; n <= 128; n++) {
		char *line, *rep, a[INET_ADDRSTRLEN], key[32];
		unsigned int p4 = n - 96;
		__u32 want = p4 ? 0x0a090001u & ~((1ull << (32 - p4)) - 1) : 0;
		__u32 be = htonl(want);
		struct list_case c = { 0 };
		int wide = p4 < 8;

		assert_non_null(inet_ntop(AF_INET, &be, a, sizeof(a)));
		if (p4 == 32)
			snprintf(key, sizeof(key), "%s", a);
		else
			snprintf(key, sizeof(key), "%s/%u", a, p4);
		assert_true(asprintf(&line, "::ffff:10.9.0.1/%u\n", n) > 0);
		c.text = line;
		c.len = strlen(line);
		c.name = line;
		/* opted in: every length loads as IPv4 */
		c.allow_wide = 1;
		assert_true(asprintf(&rep, "t.txt:1: " MAPPED "%s%s'::ffff:10.9.0.1/%u'\n",
				     key, wide ? WIDE_TOO : ": ", n) > 0);
		c.report = rep;
		c.has_counts = 1;
		c.lines = 1;
		c.accepted = c.n4 = 1;
		c.has_warnings = 1;
		c.warnings = 1;
		c.k[0] = (struct want_key)K4(0, want, (__u8)p4);
		run_case(&c);
		free(rep);
		/* not opted in: the wide ones are rejected lines */
		c.allow_wide = 0;
		if (wide) {
			assert_true(asprintf(&rep, "t.txt:1: " R_WIDE4
					     ": '::ffff:10.9.0.1/%u'\n", n) > 0);
			c.report = rep;
			c.accepted = c.n4 = 0;
			c.rejected = 1;
			c.warnings = 0;
			c.k[0].set = 0;
			run_case(&c);
			free(rep);
		}
		free(line);
	}
}

/* Wide prefixes: IPv4 shorter than /8, IPv6 shorter than /16, refused
 * without the opt-in (the rest of the list loads), loaded with a warning
 * with it; an allowlist's always load, with a warning. */
static const struct list_case wide[] = {
	{ "IPv4 /0", TEXT("0.0.0.0/0\n"),
	  .report = "t.txt:1: " R_WIDE4 ": '0.0.0.0/0'\n",
	  COUNTS(1, 0, 1, 0, 0), WARNINGS(0) },
	{ "IPv6 /0", TEXT("::/0\n"),
	  .report = "t.txt:1: " R_WIDE6 ": '::/0'\n",
	  COUNTS(1, 0, 1, 0, 0), WARNINGS(0) },
	/* the edges: /7 and /15 refused, /8 and /16 not */
	{ "edges",
	  TEXT("2.0.0.0/7\n1.0.0.0/8\n2000::/15\n2001::/16\n"),
	  .report = "t.txt:1: " R_WIDE4 ": '2.0.0.0/7'\n"
		    "t.txt:3: " R_WIDE6 ": '2000::/15'\n",
	  COUNTS(4, 2, 2, 1, 1), WARNINGS(0),
	  KEYS(K4(0, 0x01000000, 8), K6(0, "2001::", 16)) },
	/* the rest of the list loads; host bits of a refused line go
	 * unsaid (the line is not loaded) */
	{ "among others",
	  TEXT("192.0.2.1\n0.0.0.1/0 # all\n2001:db8::/32\n8000::/1\n"
	       "10.0.0.0/8\n"),
	  .report = "t.txt:2: " R_WIDE4 ": '0.0.0.1/0 # all'\n"
		    "t.txt:4: " R_WIDE6 ": '8000::/1'\n",
	  COUNTS(5, 3, 2, 2, 1), WARNINGS(0),
	  FINISH(0, 0, 2, 1) },
	{ "strict", TEXT("192.0.2.1\n0.0.0.0/0\n"), .strict = 1, .rc = -EINVAL,
	  .report = "t.txt:2: " R_WIDE4 ": '0.0.0.0/0'\n",
	  COUNTS(2, 1, 1, 1, 0), WARNINGS(0) },
	/* opted in: loaded, each line warned once, never failing strict */
	{ "allow-wide", TEXT("192.0.2.1\n0.0.0.0/0\n::/0\n2.0.0.0/7\n2000::/15\n"),
	  .strict = 1, .allow_wide = 1,
	  .report = "t.txt:2: " WIDE_OK "'0.0.0.0/0'\n"
		    "t.txt:3: " WIDE_OK "'::/0'\n"
		    "t.txt:4: " WIDE_OK "'2.0.0.0/7'\n"
		    "t.txt:5: " WIDE_OK "'2000::/15'\n",
	  COUNTS(5, 5, 0, 3, 2), WARNINGS(4),
	  KEYS(K4(1, 0, 0), K6(0, "::", 0)),
	  FINISH(0, 2 + 1, 1, 1), AFTER(K4(0, 0, 0), K6(0, "::", 0)) },
	{ "allow-wide, host bits", TEXT("0.0.0.1/0\n"), .allow_wide = 1,
	  .report = "t.txt:1: " HOST_BITS "0.0.0.0/0" WIDE_TOO "'0.0.0.1/0'\n",
	  COUNTS(1, 1, 0, 1, 0), WARNINGS(1) },
	/* an allowlist: loaded without the opt-in, strict or not */
	{ "allowlist", TEXT("0.0.0.0/0\n::/1\n"), .allowlist = 1, .strict = 1,
	  .report = "t.txt:1: warning: " WIDE_ALLOW ": '0.0.0.0/0'\n"
		    "t.txt:2: warning: " WIDE_ALLOW ": '::/1'\n",
	  COUNTS(2, 2, 0, 1, 1), WARNINGS(2) },
	{ "allowlist, allow-wide", TEXT("0.0.0.1/1\n"), .allowlist = 1,
	  .allow_wide = 1,
	  .report = "t.txt:1: " HOST_BITS "0.0.0.0/1; " WIDE_ALLOW ": '0.0.0.1/1'\n",
	  COUNTS(1, 1, 0, 1, 0), WARNINGS(1) },
};

/* Through bg_source_parse(): a block list refuses wide prefixes unless the
 * options or the source opt in; an --allow list takes them. */
static void test_wide_sources(void **state)
{
	static const char text[] = "0.0.0.0/0\n10.0.0.0/8\n::/0\n";
	char *path = write_temp(text, sizeof(text) - 1);
	static const struct {
		int opt, src, allow;
		size_t accepted, rejected, warnings;
	} rows[] = {
		{ 0, 0, 0, 1, 2, 0 },
		{ 1, 0, 0, 3, 0, 2 },
		{ 0, 1, 0, 3, 0, 2 },
		{ 0, 0, 1, 3, 0, 2 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		struct bg_source src = { .path = path, .list.format = SRC_ADDR };
		struct bg_list_opts lo = { .allow_wide = rows[i].opt };
		struct bg_blocklist bl;
		struct bg_list *l;
		struct capture c;

		src.list.allow_wide = (uint8_t)rows[i].src;
		src.list.allow = (uint8_t)rows[i].allow;
		lo.report = capture_open(&c);
		bg_blocklist_init(&bl);
		assert_int_equal(bg_source_parse(&src, &bl, &lo, NULL), 0);
		capture_close(&c);
		capture_free(&c);
		l = rows[i].allow ? &bl.allow : &bl.block;
		assert_int_equal(l->accepted, rows[i].accepted);
		assert_int_equal(l->rejected, rows[i].rejected);
		assert_int_equal(l->warnings, rows[i].warnings);
		bg_blocklist_free(&bl);
	}
	unlink(path);
	free(path);
}

/* Host-bit warnings add up over several lists. */
static void test_host_bits_lists(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "10.1.2.3/8\n");
	free(r.report);
	RUN(&r, "10.1.2.3/16\n");
	assert_int_equal(r.l.warnings, 2);
	assert_int_equal(r.l.files, 2);
	run_done(&r);
}

/* ---- Rejected lines ------------------------------------------------------ */

static void test_reject_not_ip(void **state)
{
	static const char *const bad[] = {
		"example.com",
		"1.2.3.256",
		"1.2.3",
		"1.2.3.4.5",
		"1.2.3.4.",
		".1.2.3.4",
		"1..3.4",
		"01.2.3.4",   /* leading zeros: rejected, as inet_pton does */
		"1.2.3.04",
		"00.1.2.3",
		"0x7f.0.0.1", /* inet_aton forms are not addresses here */
		"127.1",
		"2130706433",
		"-1.2.3.4",
		"+1.2.3.4",
		"1.2.3.4:80",
		"1::2::3",
		":::",
		"1:2:3:4:5:6:7:8:9",
		"00001::",
		"::ffff:01.2.3.4",
		"[2001:db8::1]",
		"g::1",
		"fe80::1%",
		"1.2.3.4%eth0",
		"192.0.2.1,192.0.2.2",
		"1.2.3.4-foo",
		"\302\2401.2.3.4", /* U+00A0 no-break space: not a blank */
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char line[128], want[256];

		snprintf(line, sizeof(line), "%s\n", bad[i]);
		snprintf(want, sizeof(want),
			 "t.txt:1: not an IP address: '%s'\n", bad[i]);
		tcase_begin("reject_not_ip", i, bad[i]);
		assert_rejected(line, want);
	}
	tcase_end();
}

#define TRAILING "trailing text after address: "
#define ZONE "IPv6 zone index not allowed: "
#define RANGE "address ranges are not supported: "

static const struct list_case rejects[] = {
	REJECT("1.2.3.4 5.6.7.8\n", "t.txt:1: " TRAILING "'1.2.3.4 5.6.7.8'\n"),
	REJECT("1.2.3.4 foo\n", "t.txt:1: " TRAILING "'1.2.3.4 foo'\n"),
	REJECT("0.0.0.0\texample.com # hosts file\n",
	       "t.txt:1: " TRAILING "'0.0.0.0\\x09example.com # hosts file'\n"),
	REJECT("2001:db8::1 x\r\n", "t.txt:1: " TRAILING "'2001:db8::1 x'\n"),
	/* a bad first word is reported as such, not as trailing text */
	REJECT("example.com 1.2.3.4\n",
	       "t.txt:1: not an IP address: 'example.com 1.2.3.4'\n"),
	REJECT("fe80::1%eth0\n", "t.txt:1: " ZONE "'fe80::1%eth0'\n"),
	REJECT("fe80::1%2 # scope 2\n", "t.txt:1: " ZONE "'fe80::1%2 # scope 2'\n"),
	REJECT("fe80::%eth0/64\n", "t.txt:1: " ZONE "'fe80::%eth0/64'\n"),
	REJECT("192.0.2.1-192.0.2.9\n",
	       "t.txt:1: " RANGE "'192.0.2.1-192.0.2.9'\n"),
	REJECT("2001:db8::1-2001:db8::9\n",
	       "t.txt:1: " RANGE "'2001:db8::1-2001:db8::9'\n"),
	REJECT("10.0.0.0/\t8\n",
	       "t.txt:1: bad prefix length (no blanks around '/'): "
	       "'10.0.0.0/\\x098'\n"),
	/* an empty length is just that, even before a comment */
	REJECT("10.0.0.0/ # c\n", "t.txt:1: bad prefix length: '10.0.0.0/ # c'\n"),
	/* no prefix length is accepted by the strict parser either */
	{ "strict, bad prefix length", TEXT("10.0.0.0/33\n"), .strict = 1,
	  .rc = -EINVAL },
	/* control bytes are escaped, surrounding blanks dropped */
	REJECT(" \t a\x1b[31mb \t\r\n",
	       "t.txt:1: not an IP address: 'a\\x1b[31mb'\n"),
	{ "binary data", TEXT("192.0.2.1\n192.0.2.2\0\n\0\0\0\n192.0.2.3\n"),
	  .report = "t.txt:2: binary data: '192.0.2.2\\x00'\n"
		    "t.txt:3: binary data: '\\x00\\x00\\x00'\n",
	  COUNTS(4, 2, 2, 2, 0), KEYS(K4(1, 0xc0000203, 32)) },
	/* even behind a comment marker */
	{ "binary data in a comment", TEXT("192.0.2.1 # \0\n"),
	  .report = "t.txt:1: binary data: '192.0.2.1 # \\x00'\n",
	  COUNTS(1, 0, 1, 0, 0) },
	/* every bad line is reported with its own number; good lines count */
	{ "many bad lines",
	  TEXT("# list\n"
	       "192.0.2.1\n"
	       "192.0.2.0/33\n"
	       "\n"
	       "1.2.3.256\n"
	       "2001:db8::1\n"
	       "fe80::1%eth0\n"
	       "1.2.3.4 5.6.7.8\n"
	       "192.0.2.2 ; ok\n"
	       "host.example\n"),
	  .report = "t.txt:3: bad prefix length (IPv4 allows 0..32): "
		    "'192.0.2.0/33'\n"
		    "t.txt:5: not an IP address: '1.2.3.256'\n"
		    "t.txt:7: " ZONE "'fe80::1%eth0'\n"
		    "t.txt:8: " TRAILING "'1.2.3.4 5.6.7.8'\n"
		    "t.txt:10: not an IP address: 'host.example'\n",
	  COUNTS(10, 3, 5, 2, 1) },
	/* the whole list is parsed, so every bad line is reported */
	{ "strict",
	  TEXT("192.0.2.1\n"
	       "bad one\n"
	       "192.0.2.2\n"
	       "10.0.0.0/08\n"
	       "2001:db8::1\n"),
	  .strict = 1, .rc = -EINVAL,
	  .report = "t.txt:2: not an IP address: 'bad one'\n"
		    "t.txt:4: bad prefix length: '10.0.0.0/08'\n",
	  COUNTS(5, 3, 2, 2, 1) },
	/* a clean list passes in strict mode */
	{ "strict, clean", TEXT("192.0.2.1 # c\r\n2001:db8::1\n\n"), .strict = 1,
	  .report = "", COUNTS(3, 2, 0, 1, 1) },
	/* a binary or too-long line fails strict mode too */
	{ "strict, binary data", TEXT("192.0.2.1\0\n"), .strict = 1,
	  .rc = -EINVAL, COUNTS(1, 0, 1, 0, 0) },
};

static void test_reject_prefix_length(void **state)
{
	static const struct {
		const char *line, *reason;
	} bad[] = {
		{ "192.0.2.0/33", "bad prefix length (IPv4 allows 0..32)" },
		{ "0.0.0.0/100", "bad prefix length (IPv4 allows 0..32)" },
		{ "2001:db8::/129", "bad prefix length (IPv6 allows 0..128)" },
		{ "::/1000", "bad prefix length (IPv6 allows 0..128)" },
		{ "10.0.0.0/99999999999999999999",
		  "bad prefix length (IPv4 allows 0..32)" },
		{ "2001:db8::/99999999999999999999999999999999",
		  "bad prefix length (IPv6 allows 0..128)" },
		{ "10.0.0.0/4294967304", /* 2^32 + 8: no wrap to 8 */
		  "bad prefix length (IPv4 allows 0..32)" },
		{ "10.0.0.0/-1", "bad prefix length" },
		{ "10.0.0.0/+8", "bad prefix length" },
		{ "10.0.0.0/024", "bad prefix length" },
		{ "10.0.0.0/08", "bad prefix length" },
		{ "10.0.0.0/00", "bad prefix length" },
		{ "2001:db8::/032", "bad prefix length" },
		{ "10.0.0.0/", "bad prefix length" },
		{ "2001:db8::/", "bad prefix length" },
		{ "10.0.0.0/8/8", "bad prefix length" },
		{ "10.0.0.0//8", "bad prefix length" },
		{ "10.0.0.0/8x", "bad prefix length" },
		{ "10.0.0.0/0x8", "bad prefix length" },
		{ "10.0.0.0/8.0", "bad prefix length" },
		{ "2001:db8::/64/", "bad prefix length" },
		{ "2001:db8::/64%eth0", "bad prefix length" },
		{ "10.0.0.0/\xd9\xa8", "bad prefix length" }, /* Arabic 8 */
		{ "10.0.0.0/ 8", "bad prefix length (no blanks around '/')" },
		{ "1.2.3.0 /24", "bad prefix length (no blanks around '/')" },
		{ "1.2.3.0 / 24", "bad prefix length (no blanks around '/')" },
		{ "2001:db8:: /32",
		  "bad prefix length (no blanks around '/')" },
		/* not an address before the '/' */
		{ "/24", "not an IP address" },
		{ "/", "not an IP address" },
		{ "foo/24", "not an IP address" },
		{ "1.2.3.256/24", "not an IP address" },
		{ "01.2.3.0/24", "not an IP address" },
		{ "1.2.3/24", "not an IP address" },
		{ "1::2::3/64", "not an IP address" },
		{ "[2001:db8::]/32", "not an IP address" },
		{ "1.2.3.0-1.2.3.9/24", "not an IP address" },
		{ "fe80::%eth0/64", "IPv6 zone index not allowed" },
		/* a good prefix followed by more */
		{ "192.0.2.0/24 extra", "trailing text after address" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char line[128], want[256];

		snprintf(line, sizeof(line), "%s\n", bad[i].line);
		snprintf(want, sizeof(want), "t.txt:1: %s: '%s'\n",
			 bad[i].reason, bad[i].line);
		tcase_begin("reject_prefix_length", i, bad[i].line);
		assert_rejected(line, want);
	}
	tcase_end();
	/* more in the table rejects[] */
}

/* Every length in range is accepted, and every one just past it is not. */
static void test_prefix_length_range(void **state)
{
	unsigned int p;

	(void)state;
	for (p = 0; p <= 129; p++) {
		char t4[64], t6[64];
		struct bg_key4 k4;
		struct bg_key6 k6;
		const char *why = NULL;

		snprintf(t4, sizeof(t4), "255.255.255.255/%u", p);
		snprintf(t6, sizeof(t6), "ffff:ffff:ffff:ffff:ffff:ffff:"
					 "ffff:ffff/%u", p);
		if (p <= 32) {
			__u32 m = p ? 0xffffffffU << (32 - p) : 0;

			assert_int_equal(bg_parse_prefix(t4, &k4, NULL, &why),
					 BG_KEY_IPV4);
			assert_pfx4(&k4, m, (__u8)p);
		} else {
			assert_int_equal(bg_parse_prefix(t4, &k4, NULL, &why),
					 0);
			assert_string_equal(why, "bad prefix length (IPv4 "
						 "allows 0..32)");
		}
		if (p <= 128) {
			__u8 want[16] = { 0 };
			unsigned int b;

			for (b = 0; b < p; b++)
				want[b / 8] |= (__u8)(0x80 >> (b % 8));
			assert_int_equal(bg_parse_prefix(t6, NULL, &k6, &why),
					 BG_KEY_IPV6);
			assert_int_equal(k6.plen, p);
			assert_memory_equal(k6.addr, want, 16);
		} else {
			assert_int_equal(bg_parse_prefix(t6, NULL, &k6, &why),
					 0);
			assert_string_equal(why, "bad prefix length (IPv6 "
						 "allows 0..128)");
		}
	}
}

static void test_reject_too_long(void **state)
{
	char *buf = malloc(5002), want[256];
	struct run r;

	(void)state;
	assert_non_null(buf);
	memset(buf, 'a', 5000);
	memcpy(buf + 5000, "\n", 2);
	snprintf(want, sizeof(want),
		 "t.txt:1: line too long: '%.80s...'\n", buf);
	run_init(&r);
	run_n(&r, buf, 5001, 0);
	assert_counts(&r.l, 1, 0, 1, 0, 0);
	assert_string_equal(r.report, want);
	run_done(&r);

	/* a long comment is still a long line */
	buf[0] = '#';
	run_init(&r);
	run_n(&r, buf, 5001, 0);
	assert_counts(&r.l, 1, 0, 1, 0, 0);
	run_done(&r);
	free(buf);
}

/* Quoted text: trimmed, cut at 80 bytes, never inside a UTF-8 character. */
static void test_report_quote(void **state)
{
	char line[256], want[512];
	struct run r;
	int i;

	(void)state;
	memset(line, 'x', 100);
	strcpy(line + 100, "\n");
	snprintf(want, sizeof(want),
		 "t.txt:1: not an IP address: '%.80s...'\n", line);
	assert_rejected(line, want);

	/* exactly 80 bytes: no ellipsis */
	memset(line, 'y', 80);
	strcpy(line + 80, "  \n");
	snprintf(want, sizeof(want),
		 "t.txt:1: not an IP address: '%.80s'\n", line);
	assert_rejected(line, want);

	/* "a" then 50 two-byte characters: byte 80 is a continuation byte */
	line[0] = 'a';
	for (i = 0; i < 50; i++)
		memcpy(line + 1 + 2 * i, "\xc3\xa9", 2);
	strcpy(line + 101, "\n");
	snprintf(want, sizeof(want),
		 "t.txt:1: not an IP address: '%.79s...'\n", line);
	assert_rejected(line, want);

	/* control bytes: in the table rejects[] */

	/* the name given is used verbatim; NULL becomes "-" */
	run_init(&r);
	{
		struct capture c;
		struct bg_list_opts o = { .report = capture_open(&c) };

		assert_int_equal(bg_list_parse_buf(&r.l, NULL, "x\n", 2, &o), 0);
		assert_int_equal(bg_list_parse_buf(&r.l, "lists/a b.txt", "\n\ny",
						   3, &o), 0);
		r.report = (char *)capture_close(&c);
	}
	assert_string_equal(r.report, "-:1: not an IP address: 'x'\n"
				      "lists/a b.txt:3: not an IP address: 'y'\n");
	run_done(&r);
}

/* NULL opts (or a NULL report stream): reports go to stderr, not strict. */
static void test_report_stderr(void **state)
{
	struct bg_list l;
	struct bg_list_opts o = { .strict = 0, .report = NULL };
	char *path = write_temp("", 0), got[256];
	int saved, fd;
	ssize_t n;

	(void)state;
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(saved >= 0 && fd >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);

	bg_list_init(&l);
	assert_int_equal(bg_list_parse_buf(&l, "e.txt", "nope\n", 5, NULL), 0);
	assert_int_equal(bg_list_parse_buf(&l, "e.txt", "1.2.3.4/8\n", 10, &o),
			 0);
	assert_int_equal(bg_list_parse_buf(&l, "e.txt", "1.2.3.4/", 8, &o), 0);
	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	assert_int_equal(l.rejected, 2);
	assert_int_equal(l.warnings, 1);
	assert_int_equal(l.accepted, 1);
	bg_list_free(&l);

	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, got, sizeof(got) - 1);
	assert_true(n >= 0);
	got[n] = '\0';
	close(fd);
	assert_string_equal(got,
			    "e.txt:1: not an IP address: 'nope'\n"
			    "e.txt:1: warning: host bits set, using 1.0.0.0/8: "
			    "'1.2.3.4/8'\n"
			    "e.txt:1: bad prefix length: '1.2.3.4/'\n");
	unlink(path);
	free(path);
}

/* ---- bg_parse_addr ------------------------------------------------------- */

static void test_parse_addr(void **state)
{
	struct bg_key4 k4;
	struct bg_key6 k6;
	const char *reason = NULL;

	(void)state;
	assert_int_equal(bg_parse_addr("192.0.2.1", &k4, &k6, &reason),
			 BG_KEY_IPV4);
	assert_key4(&k4, 0xc0000201);
	assert_null(reason);
	assert_int_equal(bg_parse_addr("2001:db8::1", &k4, &k6, &reason),
			 BG_KEY_IPV6);
	assert_key6(&k6, "2001:db8::1");
	assert_null(reason);

	assert_int_equal(bg_parse_addr("", &k4, &k6, &reason), 0);
	assert_string_equal(reason, "not an IP address");
	assert_int_equal(bg_parse_addr("1.2.3.256", &k4, &k6, &reason), 0);
	assert_string_equal(reason, "not an IP address");
	assert_int_equal(bg_parse_addr("1.2.3.4 ", &k4, &k6, &reason), 0);
	assert_string_equal(reason, "not an IP address");
	/* an address, so a prefix only when it is one address */
	assert_int_equal(bg_parse_addr("10.0.0.0/8", &k4, &k6, &reason), 0);
	assert_string_equal(reason, "a prefix, not an address");
	assert_int_equal(bg_parse_addr("2001:db8::/127", &k4, &k6, &reason),
			 0);
	assert_string_equal(reason, "a prefix, not an address");
	assert_int_equal(bg_parse_addr("10.0.0.0/33", &k4, &k6, &reason), 0);
	assert_string_equal(reason, "bad prefix length (IPv4 allows 0..32)");
	reason = NULL;
	assert_int_equal(bg_parse_addr("192.0.2.7/32", &k4, &k6, &reason),
			 BG_KEY_IPV4);
	assert_key4(&k4, 0xc0000207);
	assert_int_equal(bg_parse_addr("2001:db8::7/128", &k4, &k6, &reason),
			 BG_KEY_IPV6);
	assert_key6(&k6, "2001:db8::7");
	assert_null(reason);
	assert_int_equal(bg_parse_addr("fe80::1%lo", &k4, &k6, &reason), 0);
	assert_string_equal(reason, "IPv6 zone index not allowed");
	assert_int_equal(bg_parse_addr("1.1.1.1-1.1.1.2", &k4, &k6, &reason),
			 0);
	assert_string_equal(reason, "address ranges are not supported");
	/* longer than any IPv6 text */
	assert_int_equal(bg_parse_addr("1111:2222:3333:4444:5555:6666:"
				       "255.255.255.255:1",
				       &k4, &k6, &reason), 0);
	assert_string_equal(reason, "not an IP address");
	/* reason and either key may be NULL */
	assert_int_equal(bg_parse_addr("x", &k4, &k6, NULL), 0);
	assert_int_equal(bg_parse_addr("10.0.0.1", NULL, NULL, NULL),
			 BG_KEY_IPV4);
	assert_int_equal(bg_parse_addr("::2", NULL, &k6, NULL), BG_KEY_IPV6);
	assert_key6(&k6, "::2");
}

/* The fast dotted-quad parser agrees with inet_pton on every octet value. */
static void test_ipv4_matches_inet_pton(void **state)
{
	static const char *const octets[] = {
		"0", "1", "9", "10", "99", "100", "199", "200", "249", "250",
		"255", "256", "299", "300", "999", "1000", "00", "01", "000",
		"001", "010", "0255", "", "a", "-1", "2a", " 1",
	};
	size_t n = sizeof(octets) / sizeof(octets[0]), i, j;

	(void)state;
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++) {
			char text[64];
			struct bg_key4 k4;
			struct bg_key6 k6;
			__u32 want;
			int ok, kind;

			snprintf(text, sizeof(text), "%s.2.%s.4", octets[i],
				 octets[j]);
			ok = inet_pton(AF_INET, text, &want) == 1;
			kind = bg_parse_addr(text, &k4, &k6, NULL);
			assert_int_equal(kind, ok ? BG_KEY_IPV4 : 0);
			if (ok)
				assert_int_equal(k4.addr, want);
		}
	}
}

/*
 * A list read from its descriptor (as load reads it) takes a fast path
 * for lines that are one dotted-quad IPv4 address alone; a buffer always
 * goes through the general parser. The
 * two must say the same of every line: keys, counts, reports (reasons and
 * line numbers) and the entries handed on, on crafted lines around every
 * rule of an address (octets, zeros, dots, line ends, what may follow)
 * and on 200k random lines made mostly of digits and dots.
 */
struct seen_entries {
	size_t n, cap;
	struct bg_entry_ref *v;
	struct bg_key4 *k;
};

/* ctx: an array of BG_PARSE_WORKERS_MAX, one for each worker */
static void on_seen(void *ctx, unsigned int worker, const struct bg_entry_ref *e)
{
	struct seen_entries *s = (struct seen_entries *)ctx + worker;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		s->k = realloc(s->k, s->cap * sizeof(*s->k));
		assert_non_null(s->v);
		assert_non_null(s->k);
	}
	s->v[s->n] = *e;
	memset(&s->k[s->n], 0, sizeof(s->k[0]));
	if (e->kind == BG_KEY_IPV4)
		s->k[s->n] = *(const struct bg_key4 *)e->key;
	s->v[s->n].key = NULL;
	s->n++;
}

static int cmp_seen_line(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* The workers' entries in one array in line order (each line one entry):
 * their indexes into w's arrays, as (line, worker, index) triples. */
static size_t *seen_by_line(const struct seen_entries *w, size_t *n)
{
	size_t i, total = 0, at = 0, *v;
	unsigned int k;

	for (k = 0; k < BG_PARSE_WORKERS_MAX; k++)
		total += w[k].n;
	v = malloc((total ? total : 1) * 3 * sizeof(*v));
	assert_non_null(v);
	for (k = 0; k < BG_PARSE_WORKERS_MAX; k++)
		for (i = 0; i < w[k].n; i++, at += 3) {
			v[at] = w[k].v[i].line;
			v[at + 1] = k;
			v[at + 2] = i;
		}
	qsort(v, total, 3 * sizeof(*v), cmp_seen_line);
	*n = total;
	return v;
}

static void test_fast_path_same(void **state)
{
	static const char *const crafted[] = {
		"1.2.3.4", "0.0.0.0", "255.255.255.255", "9.99.199.249",
		"100.200.250.255", "10.0.0.1", "256.1.1.1", "1.2.3.256",
		"1.300.3.4", "1.2.999.4", "1234.1.1.1", "01.2.3.4", "1.2.3.04",
		"1.00.3.4", "1.2.3.0", "1.2.3", "1.2.3.4.", ".1.2.3.4", "1..2.3",
		"1.2.3.4.5", "1.2.3.4\r", "1.2.3.4 ", " 1.2.3.4", "\t1.2.3.4",
		"1.2.3.4#c", "1.2.3.4 # c", "1.2.3.4/32", "1.2.3.0/24",
		"1.2.3.4/", "::1", "::ffff:1.2.3.4", "#c", "", "1.2.3.a",
		"1.2.3.4x", "111.111.111.111", "11.111.111.111", "1.2.3.4\r\r",
		"0.0.0.0/0", "123.45.67.89",
	};
	static const char alpha[] = "0123456789012345678901234567890123456789"
				    "....................  \r/#x:";
	size_t cap = 8 << 20, len = 0, i, j, t;
	char *text = malloc(cap), *path;
	uint64_t r = 0x9e3779b97f4a7c15ULL;

	(void)state;
	assert_non_null(text);
	for (i = 0; i < 200000; i++) {
		if (i % 5 == 0) {
			const char *c = crafted[(i / 5) % (sizeof(crafted) / sizeof(crafted[0]))];

			memcpy(text + len, c, strlen(c));
			len += strlen(c);
		} else {
			/* four octets of 1 to 3 digits (some past 255, some
			 * with a leading zero), then maybe a byte changed */
			size_t at = len;

			for (j = 0; j < 4; j++) {
				r ^= r << 13, r ^= r >> 7, r ^= r << 17;
				len += (size_t)sprintf(text + len, j ? ".%u" : "%u",
						       (unsigned int)(r % 7 ? r % 256 :
							r % 3 ? r % 1000 : r % 10));
				if (r % 97 == 0)
					text[len++] = '0' + (char)(r % 10);
			}
			r ^= r << 13, r ^= r >> 7, r ^= r << 17;
			if (r % 4 == 0)
				text[at + (r >> 8) % (len - at)] =
					alpha[(r >> 20) % (sizeof(alpha) - 1)];
		}
		text[len++] = '\n';
	}
	path = write_temp(text, len);
	for (t = 1; t <= 2; t++) {
		struct seen_entries ef[BG_PARSE_WORKERS_MAX] = { { 0 } },
				    eb[BG_PARSE_WORKERS_MAX] = { { 0 } };
		struct bg_list_opts of = { .threads = (unsigned int)t, .entry = on_seen,
					   .entry_ctx = ef };
		struct bg_list_opts ob = { .entry = on_seen, .entry_ctx = eb };
		size_t nf, *byline;
		struct capture cf, cb;
		struct bg_list lf, lb;
		int fd;

		bg_list_init(&lf);
		bg_list_init(&lb);
		of.report = capture_open(&cf);
		ob.report = capture_open(&cb);
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		assert_int_equal(bg_list_parse_fd(&lf, path, fd, len, &of), 0);
		close(fd);
		assert_int_equal(bg_list_parse_buf(&lb, path, text, len, &ob), 0);
		capture_close(&cf);
		capture_close(&cb);
		assert_string_equal(cf.text, cb.text);
		assert_true(lb.accepted > 100000 && lb.rejected > 30000 &&
			    lb.warnings >= 1000);
		assert_int_equal(lf.lines, lb.lines);
		assert_int_equal(lf.accepted, lb.accepted);
		assert_int_equal(lf.rejected, lb.rejected);
		assert_int_equal(lf.warnings, lb.warnings);
		assert_int_equal(lf.n4, lb.n4);
		assert_int_equal(lf.n6, lb.n6);
		assert_memory_equal(lf.v4, lb.v4, lb.n4 * sizeof(*lb.v4));
		/* every entry with its line, offset, length and key */
		byline = seen_by_line(ef, &nf);
		assert_int_equal(nf, eb[0].n);
		for (i = 0; i < nf; i++) {
			const struct seen_entries *w = &ef[byline[3 * i + 1]];
			size_t k = byline[3 * i + 2];

			assert_int_equal(w->v[k].line, eb[0].v[i].line);
			assert_int_equal(w->v[k].line_off, eb[0].v[i].line_off);
			assert_int_equal(w->v[k].line_len, eb[0].v[i].line_len);
			assert_int_equal(w->v[k].kind, eb[0].v[i].kind);
			assert_memory_equal(&w->k[k], &eb[0].k[i], sizeof(eb[0].k[i]));
		}
		free(byline);
		for (i = 0; i < BG_PARSE_WORKERS_MAX; i++) {
			free(ef[i].v);
			free(ef[i].k);
			free(eb[i].v);
			free(eb[i].k);
		}
		bg_list_free(&lf);
		bg_list_free(&lb);
		capture_free(&cf);
		capture_free(&cb);
	}
	unlink(path);
	free(path);
	free(text);
}

/* ---- Files --------------------------------------------------------------- */

static void test_parse_file(void **state)
{
	static const char text[] = "# list\n192.0.2.1\n2001:db8::1\nbad\n"
				   "192.0.2.1";
	char *path = write_temp(text, sizeof(text) - 1);
	char want[512];
	struct bg_list l;
	struct capture c;
	struct bg_list_opts o = { .report = capture_open(&c) };

	(void)state;
	bg_list_init(&l);
	assert_int_equal(bg_list_parse_file(&l, path, &o), 0);
	o.strict = 1;
	assert_int_equal(bg_list_parse_file(&l, path, &o), -EINVAL);
	capture_close(&c);
	assert_int_equal(l.files, 2);
	assert_counts(&l, 10, 6, 2, 4, 2);
	snprintf(want, sizeof(want),
		 "%s:4: not an IP address: 'bad'\n"
		 "%s:4: not an IP address: 'bad'\n",
		 path, path);
	assert_string_equal(c.text, want);
	bg_list_finish(&l);
	assert_int_equal(l.duplicates, 4);
	assert_int_equal(l.n4, 1);
	assert_int_equal(l.n6, 1);
	assert_key4(&l.v4[0], 0xc0000201);
	assert_key6(&l.v6[0], "2001:db8::1");
	bg_list_free(&l);
	assert_null(l.v4);
	assert_int_equal(l.files, 0);
	unlink(path);
	free(path);
	capture_free(&c);
}

static void test_parse_file_empty(void **state)
{
	char *path = write_temp("", 0);
	struct bg_list l;
	struct bg_list_opts o = { .strict = 1 };

	(void)state;
	bg_list_init(&l);
	assert_int_equal(bg_list_parse_file(&l, path, &o), 0);
	assert_int_equal(bg_list_parse_file(&l, path, &o), 0);
	assert_int_equal(l.files, 2);
	assert_counts(&l, 0, 0, 0, 0, 0);
	bg_list_free(&l);
	unlink(path);
	free(path);
}

/* Runs parse_file on path, expecting failure ret and report "path: msg". */
static void assert_file_fails(const char *path, int ret, const char *msg)
{
	char want[512];
	struct bg_list l;
	struct capture c;
	struct bg_list_opts o = { .report = capture_open(&c) };

	bg_list_init(&l);
	assert_int_equal(bg_list_parse_file(&l, path, &o), ret);
	capture_close(&c);
	assert_int_equal(l.files, 0);
	assert_counts(&l, 0, 0, 0, 0, 0);
	snprintf(want, sizeof(want), "%s: %s\n", path, msg);
	assert_string_equal(c.text, want);
	bg_list_free(&l);
	capture_free(&c);
}

static void test_parse_file_missing(void **state)
{
	(void)state;
	assert_file_fails("/nonexistent/bloomgate/list.txt", -ENOENT,
			  "No such file or directory");
}

static void test_parse_file_directory(void **state)
{
	(void)state;
	assert_file_fails("/tmp", -EISDIR, "a directory, not a regular file");
	assert_file_fails(".", -EISDIR, "a directory, not a regular file");
}

static void test_parse_file_unreadable(void **state)
{
	char *path;

	(void)state;
	/* A directory cannot be read, whoever asks. */
	assert_file_fails("/", -EISDIR, "a directory, not a regular file");
	path = write_temp("192.0.2.1\n", 10);
	assert_int_equal(chmod(path, 0), 0);
	if (geteuid() != 0) /* root reads a mode-000 file */
		assert_file_fails(path, -EACCES, "Permission denied");
	unlink(path);
	free(path);
}

/* ---- Volume -------------------------------------------------------------- */

/*
 * 200k lines: three IPv4 for every IPv6, with every entry written twice
 * (line i and line i + 100000 hold the same address), a comment every 1000
 * lines and a bad line every 50000.
 */
static void test_large(void **state)
{
	const size_t nlines = 200000, half = nlines / 2;
	size_t i, len = 0, cap = nlines * 48, lines = 0, bad = 0, cmt = 0;
	char *buf = malloc(cap);
	struct run r;

	(void)state;
	assert_non_null(buf);
	for (i = 0; i < nlines; i++) {
		size_t v = i % half;

		if (i % 1000 == 999) {
			len += (size_t)snprintf(buf + len, cap - len,
						"# comment %zu\n", i);
			lines++;
			cmt++;
		}
		if (i % 50000 == 49999) {
			len += (size_t)snprintf(buf + len, cap - len,
						"10.0.0.%zu/32\n", i);
			lines++;
			bad++;
		}
		if (v % 4 == 3)
			len += (size_t)snprintf(buf + len, cap - len,
						"2001:db8::%zx:%zx\n", v >> 16,
						v & 0xffff);
		else
			len += (size_t)snprintf(buf + len, cap - len,
						"10.%zu.%zu.%zu\n", v >> 16,
						(v >> 8) & 255, v & 255);
		lines++;
		assert_true(len < cap);
	}
	assert_int_equal(cmt, 200);
	assert_int_equal(bad, 4);

	run_init(&r);
	run_n(&r, buf, len, 0);
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, lines, nlines, bad, nlines / 4 * 3, nlines / 4);
	bg_list_finish(&r.l);
	assert_int_equal(r.l.duplicates, half);
	assert_int_equal(r.l.n4, half / 4 * 3);
	assert_int_equal(r.l.n6, half / 4);
	for (i = 1; i < r.l.n4; i++)
		assert_true(ntohl(r.l.v4[i - 1].addr) <
			    ntohl(r.l.v4[i].addr));
	for (i = 1; i < r.l.n6; i++)
		assert_true(memcmp(&r.l.v6[i - 1], &r.l.v6[i],
				   sizeof(r.l.v6[i])) < 0);
	assert_key4(&r.l.v4[0], 0x0a000000);
	assert_key6(&r.l.v6[0], "2001:db8::3");
	run_done(&r);
	free(buf);
}

static int cmp4(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct bg_key4));
}

static int cmp6(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct bg_key6));
}

/* qsort()s n keys of size bytes with cmp, drops repeats: the new count. */
static size_t qsort_unique(void *v, size_t n, size_t size,
			   int (*cmp)(const void *, const void *))
{
	char *c = v;
	size_t i, out = 0;

	qsort(v, n, size, cmp);
	for (i = 0; i < n; i++)
		if (!out || cmp(c + (out - 1) * size, c + i * size))
			memmove(c + out++ * size, c + i * size, size);
	return out;
}

/* finish() gives exactly the qsort() + memcmp() order, without repeats. */
static void test_finish_matches_qsort(void **state)
{
	const size_t n = 30000;
	size_t i, len = 0, cap = n * 48, u4, u6;
	char *buf = malloc(cap);
	struct bg_key4 *w4;
	struct bg_key6 *w6;
	struct run r;
	unsigned int seed = 12345;

	(void)state;
	assert_non_null(buf);
	for (i = 0; i < n; i++) {
		unsigned int x = ((unsigned int)rand_r(&seed) & 0xffff) << 16 ^
				 (unsigned int)rand_r(&seed);

		/* narrow ranges: random order and plenty of repeats */
		if (i % 3 == 0)
			len += (size_t)snprintf(buf + len, cap - len,
						"%x:db8::%x:%x\n", x >> 28,
						(x >> 8) & 0xfff, x & 0x3);
		else
			len += (size_t)snprintf(buf + len, cap - len,
						"%u.%u.%u.%u\n", x >> 24,
						(x >> 16) & 0x0f, (x >> 8) & 0xff,
						x & 0x3);
	}
	run_init(&r);
	run_n(&r, buf, len, 1);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.l.accepted, n);
	assert_int_equal(r.l.n6, n / 3);
	w4 = malloc(r.l.n4 * sizeof(*w4));
	w6 = malloc(r.l.n6 * sizeof(*w6));
	assert_true(w4 && w6);
	memcpy(w4, r.l.v4, r.l.n4 * sizeof(*w4));
	memcpy(w6, r.l.v6, r.l.n6 * sizeof(*w6));
	u4 = qsort_unique(w4, r.l.n4, sizeof(*w4), cmp4);
	u6 = qsort_unique(w6, r.l.n6, sizeof(*w6), cmp6);
	assert_true(u4 < r.l.n4 && u6 < r.l.n6); /* there were repeats */

	bg_list_finish(&r.l);
	assert_int_equal(r.l.n4, u4);
	assert_int_equal(r.l.n6, u6);
	assert_int_equal(r.l.duplicates, n - u4 - u6);
	assert_memory_equal(r.l.v4, w4, u4 * sizeof(*w4));
	assert_memory_equal(r.l.v6, w6, u6 * sizeof(*w6));
	run_done(&r);
	free(w4);
	free(w6);
	free(buf);
}

/*
 * A big list (past the size where the sort runs on several threads) is
 * finished to the same keys and counts on 1, 2 and 3 threads: IPv4 keys
 * of mixed lengths with repeats, IPv6 keys whose first bytes are shared
 * (the first byte that differs is not the first).
 */
static void test_finish_threads_same(void **state)
{
	const size_t n4 = 1500000, n6 = 1100000;
	unsigned int seed = 777, th;
	struct bg_list ref, l;
	struct bg_key4 *in4;
	struct bg_key6 *in6;
	size_t i;

	(void)state;
	bg_list_init(&ref);
	ref.v4 = malloc(n4 * sizeof(*ref.v4));
	ref.v6 = malloc(n6 * sizeof(*ref.v6));
	assert_true(ref.v4 && ref.v6);
	ref.cap4 = ref.n4 = n4;
	ref.cap6 = ref.n6 = n6;
	for (i = 0; i < n4; i++) {
		__u32 a = ((__u32)rand_r(&seed) << 8) ^ (__u32)rand_r(&seed);
		__u8 plen = i % 50 == 0 ? (__u8)(8 + rand_r(&seed) % 24) : 32;

		if (i % 7 == 0)
			a &= 0xffff; /* repeats */
		if (plen < 32)
			a &= htonl(~0U << (32 - plen));
		bg_key4_init(&ref.v4[i], htonl(a), plen);
	}
	for (i = 0; i < n6; i++) {
		__u8 b[16] = { 0x20, 0x01, 0x0d, 0xb8 };
		__u32 x = (__u32)rand_r(&seed);

		memcpy(b + 4, &x, 4);
		b[8] = (__u8)(i % 5);
		bg_key6_init(&ref.v6[i], b, 128);
	}
	/* the input kept: finishing sorts and squeezes in place */
	in4 = malloc(n4 * sizeof(*in4));
	in6 = malloc(n6 * sizeof(*in6));
	assert_true(in4 && in6);
	memcpy(in4, ref.v4, n4 * sizeof(*in4));
	memcpy(in6, ref.v6, n6 * sizeof(*in6));
	bg_list_init(&l);
	l.v4 = malloc(n4 * sizeof(*l.v4));
	l.v6 = malloc(n6 * sizeof(*l.v6));
	assert_true(l.v4 && l.v6);
	for (th = 1; th <= 3; th++) {
		l.cap4 = l.n4 = n4;
		l.cap6 = l.n6 = n6;
		l.duplicates = l.covered = 0;
		memcpy(l.v4, in4, n4 * sizeof(*l.v4));
		memcpy(l.v6, in6, n6 * sizeof(*l.v6));
		bg_list_finish_mt(&l, th);
		if (th == 1) {
			struct bg_key4 *v4 = ref.v4;
			struct bg_key6 *v6 = ref.v6;

			bg_list_finish(&ref);
			assert_true(ref.duplicates > 0 && ref.covered > 0);
			for (i = 1; i < ref.n4; i++)
				assert_true(memcmp(&v4[i - 1], &v4[i], sizeof(*v4)) < 0);
			for (i = 1; i < ref.n6; i++)
				assert_true(memcmp(&v6[i - 1], &v6[i], sizeof(*v6)) < 0);
		}
		assert_int_equal(l.n4, ref.n4);
		assert_int_equal(l.n6, ref.n6);
		assert_int_equal(l.duplicates, ref.duplicates);
		assert_int_equal(l.covered, ref.covered);
		assert_memory_equal(l.v4, ref.v4, ref.n4 * sizeof(*l.v4));
		assert_memory_equal(l.v6, ref.v6, ref.n6 * sizeof(*l.v6));
	}
	bg_list_free(&l);
	bg_list_free(&ref);
	free(in4);
	free(in6);
}

/* ---- Overlap reduction --------------------------------------------------- */

static const struct list_case reduce[] = {
	/* finishing again changes nothing */
	{ "nested", TEXT("10.1.2.3\n10.1.0.0/16\n10.0.0.0/8\n"),
	  COUNTS(3, 3, 0, 3, 0), FINISH(0, 2, 1, 0), .refinish = 1,
	  AFTER(K4(0, 0x0a000000, 8)) },
	/* a chain with gaps: each level inside the one before */
	{ "nested chain with gaps",
	  TEXT("192.0.2.129\n192.0.2.128/25\n192.0.2.128/26\n"
	       "192.0.2.0/24\n192.0.0.0/16\n192.0.2.130/31\n"),
	  FINISH(0, 5, 1, 0), AFTER(K4(0, 0xc0000000, 16)) },
	/* next to a prefix, or just outside it, is not inside it */
	{ "adjacent",
	  TEXT("10.0.0.0/16\n"
	       "10.1.0.0/16\n"       /* adjacent to 10.0.0.0/16: stays */
	       "10.0.255.255\n"      /* last address of 10.0.0.0/16: covered */
	       "10.0.0.0\n"          /* first address: covered */
	       "10.1.255.255\n"      /* last of 10.1.0.0/16: covered */
	       "10.2.0.0\n"          /* just after 10.1.0.0/16: stays */
	       "9.255.255.255\n"     /* just before 10.0.0.0/16: stays */
	       "192.0.2.0/25\n"
	       "192.0.2.128/25\n"    /* two halves, no whole: both stay */
	       "192.0.2.127\n"       /* covered by the first half */
	       "192.0.2.128\n"       /* covered by the second half */
	       "192.0.2.0/26\n"      /* covered by the first half */
	       "192.0.3.0\n"),       /* outside both */
	  FINISH(0, 6, 7, 0),
	  AFTER(K4(0, 0x0a000000, 16), K4(1, 0x0a010000, 16),
		K4(2, 0xc0000200, 25), K4(3, 0xc0000280, 25),
		K4(4, 0x09ffffff, 32), K4(5, 0x0a020000, 32),
		K4(6, 0xc0000300, 32)) },
	/* then a /15 over both /16s, and a /15 next to it over 10.2.0.0 */
	{ "adjacent /15s",
	  TEXT("10.0.0.0/16\n10.1.0.0/16\n10.0.0.0/15\n10.2.0.0\n"
	       "10.2.0.0/15\n10.4.0.0\n"),
	  FINISH(0, 3, 3, 0),
	  AFTER(K4(0, 0x0a000000, 15), K4(1, 0x0a020000, 15),
		K4(2, 0x0a040000, 32)) },
	/* equal after masking: a duplicate, not an overlap */
	{ "equal after the mask",
	  TEXT("10.1.2.3/8\n10.0.0.0/8\n10.255.255.255/8\n"
	       "2001:db8::1/64\n2001:db8::/64\n"),
	  WARNINGS(3), FINISH(3, 0, 1, 1),
	  AFTER(K4(0, 0x0a000000, 8), K6(0, "2001:db8::", 64)) },
	/* /0 covers its whole family, and only its family: no IPv6 /0, so
	 * IPv6 keeps its /32 */
	{ "IPv4 /0", .allow_wide = 1,
	  TEXT("0.0.0.0/0\n0.0.0.0\n255.255.255.255\n128.0.0.0/1\n"
	       "10.0.0.0/8\n2001:db8::1\n2001:db8::/32\n"),
	  FINISH(0, 4 + 1, 1, 1),
	  AFTER(K4(0, 0, 0), K6(0, "2001:db8::", 32)) },
	/* an IPv4-mapped IPv6 prefix is its IPv4 prefix: a duplicate of
	 * 10.0.0.0/8, not covered by ::/0 */
	{ "IPv6 /0", .allow_wide = 1,
	  TEXT("::/0\n::\nffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\n"
	       "::ffff:10.0.0.0/104\n10.0.0.0/8\n10.1.2.3\n"),
	  FINISH(1, 2 + 1, 1, 1),
	  AFTER(K6(0, "::", 0), K4(0, 0x0a000000, 8)) },
	/* 2001:db9:: is inside 2001:db9::/64 as well */
	{ "IPv6",
	  TEXT("2001:db8:1::1\n"
	       "2001:db8:1::/48\n"
	       "2001:db8::/32\n"
	       "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff\n" /* last of the /32 */
	       "2001:db9::\n"                             /* just after */
	       "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff\n" /* just before */
	       "2001:db9::/64\n"
	       "2001:db9::8000:0:0:0/65\n"  /* inside 2001:db9::/64 */
	       "2001:db9:0:0:8000::/66\n"    /* inside too */
	       "2001:db9:0:1::/64\n"         /* adjacent: stays */
	       "2001:db9:0:1:ffff::/80\n"    /* inside it */
	       "::1\n"
	       "::/127\n"                    /* covers ::1 */
	       "::2\n"),                     /* outside ::/127 */
	  FINISH(0, 8, 0, 6),
	  AFTER(K6(0, "2001:db8::", 32), K6(1, "2001:db9::", 64),
		K6(2, "2001:db9:0:1::", 64), K6(3, "::", 127),
		K6(4, "::2", 128),
		K6(5, "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", 128)) },
};

/* ---- Reduction against a naive model ------------------------------------- */

/* Bit b (0 = most significant) of a big-endian address. */
static int bit_at(const __u8 *a, unsigned int b)
{
	return a[b / 8] >> (7 - b % 8) & 1;
}

/* Naive: p contains e, bit by bit over whole bytes first. */
static int naive_contains(const __u8 *pa, unsigned int pl, const __u8 *ea)
{
	unsigned int b;

	if (memcmp(pa, ea, pl / 8))
		return 0;
	for (b = pl / 8 * 8; b < pl; b++)
		if (bit_at(pa, b) != bit_at(ea, b))
			return 0;
	return 1;
}

/* Clears bits plen.. of an address of n bytes, one bit at a time. */
static void naive_mask(__u8 *a, size_t n, unsigned int plen)
{
	unsigned int b;

	for (b = plen; b < n * 8; b++)
		a[b / 8] &= (__u8)~(0x80 >> (b % 8));
}

struct rng {
	unsigned long long s;
};

static unsigned int rnd(struct rng *g)
{
	g->s = g->s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned int)(g->s >> 33);
}

/*
 * One random prefix of an nb-byte family into a[]/plen: fresh (a random
 * address in the first byte's cluster, a long length), or made from an
 * earlier one (prev[0..np), stride bytes apart, address at aoff): inside
 * it, its neighbour of the same length, or a parent a few bits shorter.
 * Lengths stay at least min, so that no prefix swallows everything; fresh
 * addresses are in one cluster (10/8, 2000::/8) unless spread.
 */
static void gen_one(struct rng *g, size_t nb, __u8 *a, unsigned int *plen,
		    const __u8 *prev, size_t np, size_t stride, size_t aoff,
		    unsigned int min, int spread)
{
	unsigned int bits = (unsigned int)nb * 8, r = rnd(g) % 100, b;
	size_t i;

	if (np && r < 62) {
		const __u8 *base = prev + (rnd(g) % np) * stride;
		unsigned int bp = base[1];

		memcpy(a, base + aoff, nb);
		if (r < 40) { /* inside: random bits below a longer length */
			for (b = bp; b < bits; b++)
				if (rnd(g) & 1)
					a[b / 8] ^= (__u8)(0x80 >> (b % 8));
			*plen = bp + (bp < bits ? 1 + rnd(g) % (bits - bp) : 0);
		} else if (r < 55) { /* neighbour */
			if (bp)
				a[(bp - 1) / 8] ^=
					(__u8)(0x80 >> ((bp - 1) % 8));
			*plen = bp;
		} else { /* parent, at most 8 bits shorter, not below min */
			*plen = bp - rnd(g) % 9;
			if (*plen > bp || *plen < min)
				*plen = bp < min ? bp : min;
		}
		return;
	}
	for (i = 0; i < nb; i++)
		a[i] = (__u8)rnd(g);
	if (!spread)
		a[0] = nb == 4 ? 10 : 0x20;
	/* IPv4 /24../32; IPv6 /56../128, across the 64-bit middle */
	*plen = bits - rnd(g) % (nb == 4 ? 9 : 73);
}

/*
 * n random IPv4 and IPv6 prefixes (two IPv4 for each IPv6) with plenty of
 * nesting, half written with host bits set: the text into *buf, the masked
 * keys into w4/w6 (the model's input). Returns the text length. With
 * coarse, IPv6 lengths are multiples of 8 (17 lengths at most, so finish
 * takes its pairwise way; otherwise there are more than 32, and it sweeps).
 */
static size_t gen_prefixes(struct rng *g, size_t n, char **buf,
			   struct bg_key4 *w4, size_t *n4, struct bg_key6 *w6,
			   size_t *n6, size_t *host_bits, int coarse)
{
	size_t i, len = 0, cap = n * 64;
	char *b = malloc(cap);

	assert_non_null(b);
	*n4 = *n6 = *host_bits = 0;
	for (i = 0; i < n; i++) {
		char text[INET6_ADDRSTRLEN];
		unsigned int plen;
		__u8 a[16];

		if (i % 3 != 2) {
			struct bg_key4 *k = &w4[*n4];

			gen_one(g, 4, a, &plen, (const __u8 *)w4, *n4,
				sizeof(*w4), offsetof(struct bg_key4, addr), 10,
				0);
			memset(k, 0, sizeof(*k));
			k->kind = BG_KEY_IPV4;
			k->plen = (__u8)plen;
			memcpy(&k->addr, a, 4);
			naive_mask((__u8 *)&k->addr, 4, plen);
			if (i % 2)
				memcpy(a, &k->addr, 4);
			*host_bits += memcmp(a, &k->addr, 4) != 0;
			(*n4)++;
			inet_ntop(AF_INET, a, text, sizeof(text));
		} else {
			struct bg_key6 *k = &w6[*n6];

			gen_one(g, 16, a, &plen, (const __u8 *)w6, *n6,
				sizeof(*w6), offsetof(struct bg_key6, addr), 40,
				0);
			if (coarse)
				plen &= ~7U;
			memset(k, 0, sizeof(*k));
			k->kind = BG_KEY_IPV6;
			k->plen = (__u8)plen;
			memcpy(k->addr, a, 16);
			naive_mask(k->addr, 16, plen);
			if (i % 2)
				memcpy(a, k->addr, 16);
			*host_bits += memcmp(a, k->addr, 16) != 0;
			(*n6)++;
			inet_ntop(AF_INET6, a, text, sizeof(text));
		}
		len += (size_t)snprintf(b + len, cap - len, "%s/%u\n", text,
					plen);
		assert_true(len < cap);
	}
	*buf = b;
	return len;
}

static int cmp4(const void *a, const void *b);
static int cmp6(const void *a, const void *b);
static size_t qsort_unique(void *v, size_t n, size_t size,
			   int (*cmp)(const void *, const void *));

/* Drops from sorted unique keys every one inside another: O(n^2). */
static size_t naive_reduce(void *v, size_t n, size_t size, size_t aoff)
{
	char *c = v;
	char *gone = calloc(n ? n : 1, 1);
	size_t i, j, out = 0;

	assert_non_null(gone);
	for (i = 0; i < n; i++) {
		const __u8 *e = (const __u8 *)c + i * size;

		for (j = 0; j < n && !gone[i]; j++) {
			const __u8 *p = (const __u8 *)c + j * size;

			if (p[1] < e[1] && naive_contains(p + aoff, p[1],
							  e + aoff))
				gone[i] = 1;
		}
	}
	for (i = 0; i < n; i++)
		if (!gone[i])
			memmove(c + out++ * size, c + i * size, size);
	free(gone);
	return out;
}

static void test_reduce_matches_naive(void **state)
{
	const size_t n = 4500; /* 3000 IPv4, 1500 IPv6 */
	struct bg_key4 *w4 = malloc(n * sizeof(*w4));
	struct bg_key6 *w6 = malloc(n * sizeof(*w6));
	size_t n4, n6, u4, u6, f4, f6, hb, len, seed, i, lens;
	char *buf;
	struct run r;

	(void)state;
	assert_true(w4 && w6);
	for (seed = 1; seed <= 6; seed++) {
		struct rng g = { seed * 0x9e3779b97f4a7c15ULL };
		int coarse = seed % 2;
		char seen[129] = { 0 };

		len = gen_prefixes(&g, n, &buf, w4, &n4, w6, &n6, &hb, coarse);
		assert_int_equal(n4, 3000);
		assert_int_equal(n6, 1500);
		u4 = qsort_unique(w4, n4, sizeof(*w4), cmp4);
		u6 = qsort_unique(w6, n6, sizeof(*w6), cmp6);
		for (i = 0, lens = 0; i < u6; i++)
			if (!seen[w6[i].plen]++)
				lens++;
		if (coarse)
			assert_true(lens <= 17);
		else
			assert_true(lens > 32);
		f4 = naive_reduce(w4, u4, sizeof(*w4),
				  offsetof(struct bg_key4, addr));
		f6 = naive_reduce(w6, u6, sizeof(*w6),
				  offsetof(struct bg_key6, addr));
		/* the data is interesting: plenty of nesting, plenty not */
		assert_true(f4 > u4 / 10 && f4 < u4 * 9 / 10);
		assert_true(f6 > u6 / 10 && f6 < u6 * 9 / 10);

		run_init(&r);
		run_n(&r, buf, len, 1);
		assert_int_equal(r.rc, 0);
		assert_int_equal(r.l.warnings, hb);
		assert_true(hb > 0);
		bg_list_finish(&r.l);
		assert_int_equal(r.l.duplicates, n - u4 - u6);
		assert_int_equal(r.l.covered, u4 - f4 + u6 - f6);
		assert_int_equal(r.l.n4, f4);
		assert_int_equal(r.l.n6, f6);
		assert_memory_equal(r.l.v4, w4, f4 * sizeof(*w4));
		assert_memory_equal(r.l.v6, w6, f6 * sizeof(*w6));
		run_done(&r);
		free(buf);
	}
	free(w4);
	free(w6);
}

/*
 * Larger: 200k IPv4 keys, straight into the list (no text), checked by a
 * model that looks every masked shorter prefix up by binary search.
 */
static void test_reduce_large(void **state)
{
	const size_t n = 200000;
	struct bg_key4 *w = malloc(n * sizeof(*w));
	struct rng g = { 42 };
	struct bg_list l;
	size_t i, u, out = 0;
	unsigned int q;

	(void)state;
	assert_non_null(w);
	bg_list_init(&l);
	l.v4 = malloc(n * sizeof(*l.v4));
	assert_non_null(l.v4);
	l.cap4 = l.n4 = n;
	for (i = 0; i < n; i++) {
		unsigned int plen;
		__u32 a;

		gen_one(&g, 4, (__u8 *)&a, &plen, (const __u8 *)w, i,
			sizeof(*w), offsetof(struct bg_key4, addr), 16, 1);
		bg_key4_init(&w[i], a, (__u8)plen);
		l.v4[i] = w[i];
	}
	u = qsort_unique(w, n, sizeof(*w), cmp4);
	for (i = 0; i < u; i++) {
		int covered = 0;

		for (q = 0; q < w[i].plen && !covered; q++) {
			struct bg_key4 s = w[i];

			naive_mask((__u8 *)&s.addr, 4, q);
			s.plen = (__u8)q;
			covered = bsearch(&s, w, u, sizeof(*w), cmp4) != NULL;
		}
		if (!covered)
			w[out++] = w[i];
	}
	assert_true(out > u / 5 && out < u * 4 / 5);
	bg_list_finish(&l);
	assert_int_equal(l.duplicates, n - u);
	assert_int_equal(l.covered, u - out);
	assert_int_equal(l.n4, out);
	assert_memory_equal(l.v4, w, out * sizeof(*w));
	bg_list_free(&l);
	free(w);
}

/* ---- bg_prefix_covers4/6 ------------------------------------------------- */

static int covers4(const char *prefix, const char *addr)
{
	struct bg_key4 p, a;

	assert_int_equal(bg_parse_prefix(prefix, &p, NULL, NULL), BG_KEY_IPV4);
	assert_int_equal(bg_parse_addr(addr, &a, NULL, NULL), BG_KEY_IPV4);
	return bg_prefix_covers4(&p, a.addr);
}

static int covers6(const char *prefix, const char *addr)
{
	struct bg_key6 p;
	__u8 a[16];

	assert_int_equal(bg_parse_prefix(prefix, NULL, &p, NULL), BG_KEY_IPV6);
	assert_int_equal(inet_pton(AF_INET6, addr, a), 1);
	return bg_prefix_covers6(&p, a);
}

/* Does the prefix cover the address? */
struct cover_case {
	const char *prefix, *addr;
	int want;
};

static const struct cover_case covers[] = {
	{ "0.0.0.0/0", "0.0.0.0", 1 },
	{ "0.0.0.0/0", "255.255.255.255", 1 },
	{ "128.0.0.0/1", "128.0.0.0", 1 },
	{ "128.0.0.0/1", "255.255.255.255", 1 },
	{ "128.0.0.0/1", "127.255.255.255", 0 },
	{ "10.0.0.0/8", "10.0.0.0", 1 },
	{ "10.0.0.0/8", "10.255.255.255", 1 },
	{ "10.0.0.0/8", "9.255.255.255", 0 },
	{ "10.0.0.0/8", "11.0.0.0", 0 },
	{ "192.0.2.0/24", "192.0.2.0", 1 },
	{ "192.0.2.0/24", "192.0.2.255", 1 },
	{ "192.0.2.0/24", "192.0.1.255", 0 },
	{ "192.0.2.0/24", "192.0.3.0", 0 },
	{ "192.0.2.2/31", "192.0.2.2", 1 },
	{ "192.0.2.2/31", "192.0.2.3", 1 },
	{ "192.0.2.2/31", "192.0.2.1", 0 },
	{ "192.0.2.2/31", "192.0.2.4", 0 },
	{ "192.0.2.1/32", "192.0.2.1", 1 },
	{ "192.0.2.1/32", "192.0.2.0", 0 },
	{ "192.0.2.1/32", "192.0.2.2", 0 },
	{ "255.255.255.255/32", "255.255.255.255", 1 },
	{ "255.255.255.255/32", "255.255.255.254", 0 },

	{ "::/0", "::", 1 },
	{ "::/0", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1 },
	{ "::1/128", "::1", 1 },
	{ "::1/128", "::", 0 },
	{ "::1/128", "::2", 0 },
	{ "::1/128", "8000::1", 0 },
	{ "2001:db8::/32", "2001:db8::", 1 },
	{ "2001:db8::/32", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", 1 },
	{ "2001:db8::/32", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
	{ "2001:db8::/32", "2001:db9::", 0 },
	{ "2001:db8::/33", "2001:db8:7fff:ffff:ffff:ffff:ffff:ffff", 1 },
	{ "2001:db8::/33", "2001:db8:8000::", 0 },
	{ "2001:db8::8000:0:0:0/65", "2001:db8::8000:0:0:0", 1 },
	{ "2001:db8::8000:0:0:0/65", "2001:db8::ffff:ffff:ffff:ffff", 1 },
	{ "2001:db8::8000:0:0:0/65", "2001:db8::7fff:ffff:ffff:ffff", 0 },
	{ "2001:db8::8000:0:0:0/65", "2001:db8:0:1::", 0 },
	{ "2001:db8::fffe/127", "2001:db8::ffff", 1 },
	{ "2001:db8::fffe/127", "2001:db8::fffd", 0 },
	{ "2001:db8::fffe/127", "2001:db8::1:0", 0 },
	{ "8000::/1", "ffff::", 1 },
	{ "8000::/1", "7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
};

static const char *cover_name(const void *row)
{
	return ((const struct cover_case *)row)->prefix;
}

static void run_cover(const void *row)
{
	const struct cover_case *c = row;
	int got = strchr(c->prefix, ':') ? covers6(c->prefix, c->addr) :
					  covers4(c->prefix, c->addr);

	if (!got != !c->want)
		print_message("%s covers %s: %d, expected %d\n", c->prefix,
			      c->addr, got, c->want);
	check_int(!!got, c->want);
}

static void run_covers(void **state)
{
	run_table(*state, cover_name, run_cover);
}

/* ---- bg_list_find_covering ----------------------------------------------- */

struct hits {
	size_t n;
	size_t line[16];
	char *text[16];
	struct bg_key4 k4[16];
	struct bg_key6 k6[16];
	int fam[16];
	const char *path;
};

static void hit_cb(void *ctx, const char *path, size_t line, const char *text,
		   const struct bg_key4 *k4, const struct bg_key6 *k6)
{
	struct hits *h = ctx;

	assert_true(h->n < 16);
	assert_string_equal(path, h->path);
	assert_true((k4 == NULL) != (k6 == NULL));
	h->line[h->n] = line;
	h->text[h->n] = strdup(text);
	assert_non_null(h->text[h->n]);
	h->fam[h->n] = k4 ? BG_KEY_IPV4 : BG_KEY_IPV6;
	if (k4)
		h->k4[h->n] = *k4;
	else
		h->k6[h->n] = *k6;
	h->n++;
}

static void hits_free(struct hits *h)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		free(h->text[i]);
	h->n = 0;
}

/* Looks addr up in path; checks count, then lines and texts in order. */
static void assert_covering(const char *path, const char *addr, int want,
			    const size_t *lines, const char *const *texts,
			    struct hits *h)
{
	struct bg_key4 k4;
	struct bg_key6 k6;
	int kind = bg_parse_addr(addr, &k4, &k6, NULL), i;

	assert_true(kind);
	memset(h, 0, sizeof(*h));
	h->path = path;
	assert_int_equal(bg_list_find_covering(path,
					       kind == BG_KEY_IPV4 ? &k4 : NULL,
					       kind == BG_KEY_IPV6 ? &k6 : NULL,
					       hit_cb, h),
			 want);
	assert_int_equal(h->n, want);
	for (i = 0; i < want; i++) {
		assert_int_equal(h->line[i], lines[i]);
		assert_string_equal(h->text[i], texts[i]);
		assert_int_equal(h->fam[i], kind);
	}
}

static void test_find_covering(void **state)
{
	static const char text[] =
		"\xef\xbb\xbf# test list\r\n"         /* 1 */
		"10.0.0.0/8 ; big\r\n"                /* 2 */
		"  10.1.0.0/16\t\r\n"                 /* 3 */
		"bad line\n"                          /* 4 */
		"10.1.2.3\n"                          /* 5 */
		"10.1.2.3/8\n"                        /* 6: host bits */
		"192.0.2.0/24\n"                      /* 7 */
		"2001:db8::/32 # v6\n"                /* 8 */
		"10.1.2.0/33\n"                       /* 9: rejected */
		"0.0.0.0/0\n"                         /* 10 */
		"\n"                                  /* 11 */
		"10.1.2.4\n"                          /* 12 */
		"::/0\n"                              /* 13 */
		"2001:db8::1 x\n"                     /* 14: rejected */
		"2001:db8::/64";                      /* 15, no newline */
	char *path = write_temp(text, sizeof(text) - 1);
	struct hits h;
	struct bg_key4 k4;
	struct bg_key6 k6;

	(void)state;
	{
		static const size_t l[] = { 2, 3, 5, 6, 10 };
		static const char *const t[] = { "10.0.0.0/8 ; big",
						 "10.1.0.0/16", "10.1.2.3",
						 "10.1.2.3/8", "0.0.0.0/0" };

		assert_covering(path, "10.1.2.3", 5, l, t, &h);
		assert_pfx4(&h.k4[0], 0x0a000000, 8);
		assert_pfx4(&h.k4[1], 0x0a010000, 16);
		assert_pfx4(&h.k4[2], 0x0a010203, 32);
		assert_pfx4(&h.k4[3], 0x0a000000, 8); /* masked */
		assert_pfx4(&h.k4[4], 0, 0);
		hits_free(&h);
	}
	{
		static const size_t l[] = { 2, 3, 6, 10, 12 };
		static const char *const t[] = { "10.0.0.0/8 ; big",
						 "10.1.0.0/16", "10.1.2.3/8",
						 "0.0.0.0/0", "10.1.2.4" };

		assert_covering(path, "10.1.2.4", 5, l, t, &h);
		hits_free(&h);
	}
	{
		static const size_t l[] = { 7, 10 };
		static const char *const t[] = { "192.0.2.0/24", "0.0.0.0/0" };

		assert_covering(path, "192.0.2.255", 2, l, t, &h);
		hits_free(&h);
		assert_covering(path, "192.0.2.0", 2, l, t, &h);
		hits_free(&h);
		assert_covering(path, "192.0.3.0", 1, l + 1, t + 1, &h);
		hits_free(&h);
	}
	{
		static const size_t l[] = { 8, 13, 15 };
		static const char *const t[] = { "2001:db8::/32 # v6", "::/0",
						 "2001:db8::/64" };

		assert_covering(path, "2001:db8::1", 3, l, t, &h);
		assert_pfx6(&h.k6[0], "2001:db8::", 32);
		assert_pfx6(&h.k6[1], "::", 0);
		assert_pfx6(&h.k6[2], "2001:db8::", 64);
		hits_free(&h);
		assert_covering(path, "2001:db8:0:1::", 2, l, t, &h);
		hits_free(&h);
		assert_covering(path, "2001:db9::", 1, l + 1, t + 1, &h);
		hits_free(&h);
	}

	/* both keys: both families; no callback: just the count */
	assert_int_equal(bg_parse_addr("10.1.2.3", &k4, NULL, NULL),
			 BG_KEY_IPV4);
	assert_int_equal(bg_parse_addr("2001:db8::1", NULL, &k6, NULL),
			 BG_KEY_IPV6);
	assert_int_equal(bg_list_find_covering(path, &k4, &k6, NULL, NULL), 8);
	assert_int_equal(bg_list_find_covering(path, &k4, NULL, NULL, NULL), 5);
	assert_int_equal(bg_list_find_covering(path, NULL, NULL, NULL, NULL),
			 -EINVAL);
	assert_int_equal(bg_list_find_covering("/nonexistent/bloomgate/x", &k4,
					       NULL, NULL, NULL),
			 -ENOENT);
	assert_int_equal(bg_list_find_covering("/tmp", &k4, NULL, NULL, NULL),
			 -EISDIR);
	/* a device is refused as the loader refuses it (check re-reads) */
	assert_int_equal(bg_list_find_covering("/dev/null", &k4, &k6, NULL,
					       NULL), -ENOTSUP);
	/* an empty file covers nothing */
	fclose(fopen(path, "w"));
	assert_int_equal(bg_list_find_covering(path, &k4, &k6, NULL, NULL), 0);
	unlink(path);
	free(path);
}

/* Line numbers of find_covering and of parse reports agree. */
static void test_find_covering_lines_agree(void **state)
{
	static const char text[] = "\xef\xbb\xbf"
				   "x\r\n\n10.0.0.0/9\0\n10.0.0.1/9\r\n"
				   "10.0.0.0/8\n";
	char *path = write_temp(text, sizeof(text) - 1);
	char want[512];
	struct bg_list l;
	struct bg_key4 k4;
	struct hits h;
	struct capture c;
	struct bg_list_opts o = { .report = capture_open(&c) };

	(void)state;
	bg_list_init(&l);
	assert_int_equal(bg_list_parse_file(&l, path, &o), 0);
	capture_close(&c);
	snprintf(want, sizeof(want),
		 "%s:1: not an IP address: 'x'\n"
		 "%s:3: binary data: '10.0.0.0/9\\x00'\n"
		 "%s:4: warning: host bits set, using 10.0.0.0/9: "
		 "'10.0.0.1/9'\n",
		 path, path, path);
	assert_string_equal(c.text, want);
	bg_list_free(&l);
	capture_free(&c);

	assert_int_equal(bg_parse_addr("10.0.0.1", &k4, NULL, NULL),
			 BG_KEY_IPV4);
	memset(&h, 0, sizeof(h));
	h.path = path;
	assert_int_equal(bg_list_find_covering(path, &k4, NULL, hit_cb, &h), 2);
	assert_int_equal(h.line[0], 4);
	assert_string_equal(h.text[0], "10.0.0.1/9");
	assert_int_equal(h.line[1], 5);
	assert_string_equal(h.text[1], "10.0.0.0/8");
	hits_free(&h);
	unlink(path);
	free(path);
}

/* `check` reads a list again through bg_list_scan(): a mapped entry is
 * found behind its IPv4 address, not behind the IPv6 one. */
static void test_mapped_covering(void **state)
{
	static const char text[] = "192.0.2.1\n::ffff:10.9.0.1\n::ffff:10.0.0.0/104\n";
	static const size_t l4[] = { 2, 3 };
	static const char *const t4[] = { "::ffff:10.9.0.1", "::ffff:10.0.0.0/104" };
	char *path = write_temp(text, sizeof(text) - 1);
	struct hits h;

	(void)state;
	assert_covering(path, "10.9.0.1", 2, l4, t4, &h);
	assert_pfx4(&h.k4[0], 0x0a090001, 32);
	assert_pfx4(&h.k4[1], 0x0a000000, 8);
	hits_free(&h);
	assert_covering(path, "::ffff:10.9.0.1", 0, NULL, NULL, &h);
	unlink(path);
	free(path);
}

/* ---- Real lists (../shared/data, when present) --------------------------- */

/* The one wide prefix of FireHOL level 1 (multicast and reserved space),
 * its last line. */
#define FIREHOL_WIDE ":17234: warning: wide prefix, loaded (--allow-wide): " \
		     "'224.0.0.0/3'\n"

/* A real list parses strictly, wide prefixes opted in, with an empty
 * report but for FireHOL's one wide prefix. */
static void parse_real(void *l, const char *path)
{
	struct capture c;
	struct bg_list_opts o = { .strict = 1, .allow_wide = 1,
				  .report = capture_open(&c) };
	char *want = NULL;

	assert_int_equal(bg_list_parse_file(l, path, &o), 0);
	capture_close(&c);
	if (strstr(path, "firehol_level1"))
		assert_true(asprintf(&want, "%s" FIREHOL_WIDE, path) > 0);
	assert_string_equal(c.text, want ? want : "");
	free(want);
	capture_free(&c);
}

/* A real list that is clean: skips unless it is there; parses it into l,
 * n4 + n6 entries on lines lines. */
static void real_parse_clean(struct bg_list *l, const char *path,
			     size_t lines, size_t n4, size_t n6)
{
	if (!have_file(path))
		skip();
	bg_list_init(l);
	parse_real(l, path);
	assert_int_equal(l->rejected, 0);
	assert_int_equal(l->warnings, strstr(path, "firehol_level1") ? 1 : 0);
	assert_int_equal(l->accepted, n4 + n6);
	assert_int_equal(l->lines, lines);
	assert_int_equal(l->n4, n4);
	assert_int_equal(l->n6, n6);
}

/* ... and already minimal: finishing it drops nothing. */
static void real_finish_minimal(struct bg_list *l, size_t n4, size_t n6)
{
	bg_list_finish(l);
	assert_int_equal(l->duplicates, 0);
	assert_int_equal(l->covered, 0);
	assert_int_equal(l->n4, n4);
	assert_int_equal(l->n6, n6);
}

static void test_real_firehol(void **state)
{
	const char *path = SHARED_DATA "firehol_level1.netset";
	struct bg_list l;
	size_t i, hosts = 0;
	unsigned long long ips = 0;

	(void)state;
	real_parse_clean(&l, path, 17234, 17200, 0);
	for (i = 0; i < l.n4; i++)
		hosts += l.v4[i].plen == 32;
	assert_int_equal(hosts, 12515);
	assert_int_equal(l.n4 - hosts, 4685);
	/* "sorted, no overlaps": nothing to drop */
	real_finish_minimal(&l, 17200, 0);
	/* the header says "662616961 unique IPs" */
	for (i = 0; i < l.n4; i++)
		ips += 1ULL << (32 - l.v4[i].plen);
	assert_int_equal(ips, 662616961ULL);
	assert_pfx4(&l.v4[0], 0xe0000000, 3);
	bg_list_free(&l);
}

/* Without the opt-in, FireHOL's 224.0.0.0/3 is a rejected line: reported
 * with its file:line and why, the other 17199 entries load; --strict
 * fails. */
static void test_real_firehol_wide(void **state)
{
	const char *path = SHARED_DATA "firehol_level1.netset";
	struct bg_list_opts o = { 0 };
	struct capture c;
	struct bg_list l;
	char *want;

	(void)state;
	if (!have_file(path))
		skip();
	bg_list_init(&l);
	o.report = capture_open(&c);
	assert_int_equal(bg_list_parse_file(&l, path, &o), 0);
	capture_close(&c);
	assert_true(asprintf(&want, "%s:17234: prefix shorter than /8 blocks too "
			     "much (needs --allow-wide): '224.0.0.0/3'\n", path) > 0);
	assert_string_equal(c.text, want);
	capture_free(&c);
	assert_int_equal(l.rejected, 1);
	assert_int_equal(l.warnings, 0);
	assert_int_equal(l.accepted, 17199);
	o.strict = 1;
	o.report = capture_open(&c);
	assert_int_equal(bg_list_parse_file(&l, path, &o), -EINVAL);
	capture_close(&c);
	assert_string_equal(c.text, want);
	capture_free(&c);
	free(want);
	bg_list_free(&l);
}

static void test_real_spamhaus_v6(void **state)
{
	const char *path = SHARED_DATA "spamhaus_dropv6.txt";
	static const size_t l5[] = { 5 };
	static const char *const t5[] = { "2001:678:6c4::/48 ; SBL626637" };
	struct bg_list l;
	struct hits h;
	size_t i;

	(void)state;
	real_parse_clean(&l, path, 83, 0, 78);
	real_finish_minimal(&l, 0, 78);
	for (i = 0; i < l.n6; i++)
		assert_true(l.v6[i].plen >= 28 && l.v6[i].plen <= 48);
	bg_list_free(&l);

	assert_covering(path, "2001:678:6c4:ffff::1", 1, l5, t5, &h);
	assert_pfx6(&h.k6[0], "2001:678:6c4::", 48);
	hits_free(&h);
}

/* FireHOL level 1 with three .ipset lists: overlaps across files go.
 * (test_domains.c has its own: names, where the point is the files and
 * lines the survivors keep.) */
static void test_real_combined(void **state)
{
	static const char *const paths[] = {
		SHARED_DATA "firehol_level1.netset",
		SHARED_DATA "greensnow.ipset",
		SHARED_DATA "feodo.ipset",
		SHARED_DATA "bambenek_c2.ipset",
	};
	struct bg_list l;

	(void)state;
	bg_list_init(&l);
	parse_real_set(paths, ARRAY_SIZE(paths), parse_real, &l);
	assert_int_equal(l.files, 4);
	assert_int_equal(l.rejected, 0);
	assert_int_equal(l.accepted, 18927);
	bg_list_finish(&l);
	assert_int_equal(l.duplicates, 301);
	assert_int_equal(l.covered, 30);
	assert_int_equal(l.n4, 18596);
	bg_list_free(&l);
}

/* ---- Files of any kind: detection, --format, bg_source_parse() -------- */

static int src_detect(const char *buf, size_t len)
{
	return bg_format_detect(buf, len);
}

static const struct detect_case src_detect_cases[] = {
	/* address lists, with their comments */
	DETECT_CASE("192.0.2.1\n2001:db8::/32\n", SRC_ADDR),
	DETECT_CASE("#\n# FireHOL\n#\n1.2.3.0/24\n5.6.7.8\n", SRC_ADDR),
	DETECT_CASE("; Spamhaus DROP\n1.10.16.0/20 ; SBL256894\n", SRC_ADDR),
	/* nothing meaningful: addresses, as load always read such files */
	DETECT_CASE("", SRC_ADDR),
	DETECT_CASE("# only\n\n; comments\n", SRC_ADDR),
	/* hosts files: the first column holds addresses, but a line is not an
	 * address entry */
	DETECT_CASE("127.0.0.1 localhost\n0.0.0.0 ads.example\n", SRC_HOSTS),
	DETECT_CASE(":: ads.example\n::1 ip6-localhost\n", SRC_HOSTS),
	DETECT_CASE("0.0.0.0\tads.example #ad\n", SRC_HOSTS),
	/* domain lists */
	DETECT_CASE("ads.example\ntracker.example\n", SRC_PLAIN),
	DETECT_CASE("*.ads.example\n", SRC_PLAIN),
	DETECT_CASE("[Adblock Plus]\n||ads.example^\n", SRC_ADBLOCK),
	DETECT_CASE("! comment\n||ads.example^\n", SRC_ADBLOCK),
	DETECT_CASE("@@||ok.example^\n", SRC_ADBLOCK),
	/* text that is neither: read as addresses, so every line is rejected
	 * as not an address (and a load of it fails) rather than taken as
	 * single-label names */
	DETECT_CASE("garbage\nnot-an-address\n1.2.3\n2001:db8::zz\n", SRC_ADDR),
	DETECT_CASE("router\nnas\nads.example\n", SRC_ADDR),
	DETECT_CASE("this line is bad\nads.example\nb.example\n", SRC_PLAIN),
	DETECT_CASE("ads.example # why\n*.cdn.example\nEVIL.EXAMPLE.\n", SRC_PLAIN),
	/* majority: a stray name in an address list, a stray address in a
	 * domain list; a tie is no majority either way: addresses */
	DETECT_CASE("192.0.2.1\n192.0.2.2\nads.example\n", SRC_ADDR),
	DETECT_CASE("a.example\nb.example\n192.0.2.1\n", SRC_PLAIN),
	DETECT_CASE("192.0.2.1\nads.example\n", SRC_ADDR),
};

static void test_src_detect(void **state)
{
	char *big;
	size_t i, o;

	(void)state;
	run_detect_table("src_detect", src_detect_cases,
			 ARRAY_SIZE(src_detect_cases), src_detect);
	/* only the first BG_FMT_DETECT_LINES meaningful lines count */
	big = malloc(64 * 1000);
	assert_non_null(big);
	for (i = 0, o = 0; i < BG_FMT_DETECT_LINES; i++)
		o += (size_t)sprintf(big + o, "# c\n198.51.100.%zu\n", i % 250);
	for (i = 0; i < 500; i++)
		o += (size_t)sprintf(big + o, "n%zu.example\n", i);
	assert_int_equal(src_detect(big, o), SRC_ADDR);
	free(big);
}

/* What detection saw: the format, why, the counts per format, and the
 * words `load` prints. */
struct evidence_case {
	const char *text;
	int format, why;
	unsigned int lines, addr, plain, hosts, adblock;
	const char *words;
};

static const struct evidence_case evidence[] = {
	{ "192.0.2.1\n2001:db8::/32\nads.example\n# c\n", SRC_ADDR,
	  BG_DETECT_MAJORITY, 3, 2, 1, 0, 0,
	  "2 of 3 non-comment lines are addresses or prefixes" },
	{ "", SRC_ADDR, BG_DETECT_EMPTY, 0, 0, 0, 0, 0,
	  "no line but blanks and comments" },
	{ "# only\n\n; comments\n", SRC_ADDR, BG_DETECT_EMPTY, 0, 0, 0, 0, 0,
	  "no line but blanks and comments" },
	/* "127.0.0.1 localhost" is no address entry: trailing text */
	{ "127.0.0.1 localhost\n0.0.0.0 ads.example\nplain.example\n",
	  SRC_HOSTS, BG_DETECT_MARK, 3, 0, 1, 2, 0,
	  "2 of 3 non-comment lines look like hosts entries" },
	{ "[Adblock Plus]\n||ads.example^\nbare.example\n", SRC_ADBLOCK,
	  BG_DETECT_MARK, 3, 0, 1, 0, 2,
	  "2 of 3 non-comment lines look like Adblock rules" },
	/* one Adblock line beats hosts lines: an Adblock list reads both */
	{ "0.0.0.0 a.example\n0.0.0.0 b.example\n@@||ok.example^\n",
	  SRC_ADBLOCK, BG_DETECT_MARK, 3, 0, 0, 2, 1,
	  "1 of 3 non-comment lines look like Adblock rules" },
	{ "a.example\nb.example\n192.0.2.1\n", SRC_PLAIN, BG_DETECT_MAJORITY,
	  3, 1, 2, 0, 0, "2 of 3 non-comment lines are domain names" },
	/* nothing fits: addresses, as before, and the numbers say so */
	{ "router\nnas\nads.example\n", SRC_ADDR, BG_DETECT_FALLBACK, 3, 0, 1,
	  0, 0, "no format fits: of the 3 non-comment lines, 0 are addresses "
		"or prefixes and 1 domain names" },
};

static const char *evidence_name(const void *row)
{
	return ((const struct evidence_case *)row)->text;
}

static void run_evidence(const void *row)
{
	const struct evidence_case *c = row;
	struct bg_format_evidence ev;
	size_t len = strlen(c->text);
	char words[256];

	memset(&ev, 0xa5, sizeof(ev)); /* every field is set */
	check_int(bg_format_detect_ev(c->text, len, &ev), c->format);
	check_int(bg_format_detect(c->text, len), c->format);
	check_int(ev.format, c->format);
	check_int(ev.why, c->why);
	check_int(ev.cut, 0);
	check_int(ev.lines, c->lines);
	check_int(ev.n[SRC_AUTO], 0);
	check_int(ev.n[SRC_ADDR], c->addr);
	check_int(ev.n[SRC_PLAIN], c->plain);
	check_int(ev.n[SRC_HOSTS], c->hosts);
	check_int(ev.n[SRC_ADBLOCK], c->adblock);
	check_str(bg_format_evidence_text(&ev, words, sizeof(words)), c->words);
}

static void run_evidences(void **state)
{
	run_table(*state, evidence_name, run_evidence);
}

/* The evidence never disagrees with the detection of the table above, and
 * says "of the first" when it stopped looking. */
static void test_src_evidence(void **state)
{
	struct bg_format_evidence ev;
	char words[256], *big;
	size_t i, o;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(src_detect_cases); i++) {
		const struct detect_case *c = &src_detect_cases[i];

		tcase_begin("src_detect_cases", i, c->text);
		check_int(bg_format_detect_ev(c->text, c->len, &ev), c->want);
		check_int(ev.format, c->want);
		check_true(ev.lines <= BG_FMT_DETECT_LINES);
	}
	tcase_end();
	/* a NULL evidence is fine */
	assert_int_equal(bg_format_detect_ev("a.example\n", 10, NULL), SRC_PLAIN);
	big = malloc(32 * 150);
	assert_non_null(big);
	for (i = 0, o = 0; i < 150; i++)
		o += (size_t)sprintf(big + o, "198.51.100.%zu\n", i);
	assert_int_equal(bg_format_detect_ev(big, o, &ev), SRC_ADDR);
	assert_int_equal(ev.lines, BG_FMT_DETECT_LINES);
	assert_int_equal(ev.cut, 1);
	assert_string_equal(bg_format_evidence_text(&ev, words, sizeof(words)),
			    "100 of the first 100 non-comment lines are addresses or prefixes");
	/* exactly BG_FMT_DETECT_LINES: nothing was left unread */
	for (i = 0, o = 0; i < BG_FMT_DETECT_LINES; i++)
		o += (size_t)sprintf(big + o, "198.51.100.%zu\n", i);
	bg_format_detect_ev(big, o, &ev);
	assert_int_equal(ev.cut, 0);
	free(big);
}

static void test_src_format_names(void **state)
{
	int f;

	(void)state;
	for (f = SRC_AUTO; f <= SRC_ADBLOCK; f++)
		assert_int_equal(bg_format_parse(bg_format_name(f)), f);
	assert_string_equal(bg_format_name(SRC_ADDR), "addr");
	assert_string_equal(bg_format_name(SRC_HOSTS), "hosts");
	assert_string_equal(bg_format_name(99), "?");
	assert_int_equal(bg_format_parse("Hosts"), -1);
	assert_int_equal(bg_format_parse(""), -1);
	assert_int_equal(bg_format_parse(NULL), -1);
}

/* The rule of load's arguments: --format and --subdomains apply to the
 * lists after them, --allow lists included, until changed. */
static void test_sources_rule(void **state)
{
	struct bg_sources s;

	(void)state;
	bg_sources_init(&s);
	/* load a --subdomains b --allow c --format hosts d --no-subdomains
	 *      --format auto --allow e f */
	assert_int_equal(bg_sources_add(&s, "a", 0), 0);
	bg_sources_set_subdomains(&s, 1);
	assert_int_equal(bg_sources_add(&s, "b", 0), 0);
	assert_int_equal(bg_sources_add(&s, "c", 1), 0);
	assert_int_equal(bg_sources_set_format(&s, "hosts"), 0);
	assert_int_equal(bg_sources_add(&s, "d", 0), 0);
	bg_sources_set_subdomains(&s, 0);
	assert_int_equal(bg_sources_set_format(&s, "auto"), 0);
	assert_int_equal(bg_sources_add(&s, "e", 1), 0);
	assert_int_equal(bg_sources_add(&s, "f", 0), 0);
	assert_int_equal(bg_sources_done(&s), 0);
	assert_int_equal(s.n, 6);
	{
		static const struct {
			const char *path;
			int format, subdomains, allow;
		} want[] = {
			{ "a", SRC_AUTO, 0, 0 },  { "b", SRC_AUTO, 1, 0 },
			{ "c", SRC_AUTO, 1, 1 },  { "d", SRC_HOSTS, 1, 0 },
			{ "e", SRC_AUTO, 0, 1 },  { "f", SRC_AUTO, 0, 0 },
		};
		size_t i;

		for (i = 0; i < s.n; i++) {
			assert_string_equal(s.v[i].path, want[i].path);
			assert_int_equal(s.v[i].list.format, want[i].format);
			assert_int_equal(s.v[i].list.subdomains, want[i].subdomains);
			assert_int_equal(s.v[i].list.allow, want[i].allow);
		}
	}
	/* an option after the last list applies to none */
	bg_sources_set_subdomains(&s, 1);
	assert_int_equal(bg_sources_done(&s), -EINVAL);
	assert_int_equal(bg_sources_add(&s, "g", 0), 0);
	assert_int_equal(bg_sources_done(&s), 0);
	assert_int_equal(bg_sources_set_format(&s, "addr"), 0);
	assert_int_equal(bg_sources_done(&s), -EINVAL);
	/* an unknown format changes nothing */
	assert_int_equal(bg_sources_set_format(&s, "csv"), -EINVAL);
	assert_int_equal(s.format, SRC_ADDR);
	bg_sources_free(&s);

	/* only --allow lists, or nothing: no block list */
	bg_sources_init(&s);
	assert_int_equal(bg_sources_done(&s), -ENOENT);
	assert_int_equal(bg_sources_add(&s, "ok.txt", 1), 0);
	assert_int_equal(bg_sources_done(&s), -ENOENT);
	bg_sources_free(&s);
}

struct src_run {
	struct bg_list addrs;
	struct bg_names names;
	char *report;
	int rc, used;
};

/* Parses text as a list file with the given source options. */
static void src_run(struct src_run *r, const char *text, int format,
		    int subdomains, int allow, int strict)
{
	struct bg_list_opts lo = { .strict = strict };
	struct bg_source src = { 0 };
	struct bg_blocklist bl;
	struct capture c;

	memset(r, 0, sizeof(*r));
	bg_list_init(&r->addrs);
	bg_names_init(&r->names);
	src.path = write_temp(text, strlen(text));
	src.list.format = (uint8_t)format;
	src.list.subdomains = (uint8_t)subdomains;
	src.list.allow = (uint8_t)allow;
	lo.report = capture_open(&c);
	r->used = -1;
	bg_blocklist_init(&bl);
	r->rc = bg_source_parse(&src, &bl, &lo, &r->used);
	/* the addresses land in the part the source's role says */
	r->addrs = allow ? bl.allow : bl.block;
	bg_list_free(allow ? &bl.block : &bl.allow);
	r->names = bl.names;
	r->report = (char *)capture_close(&c);
	/* reports name the file: replace its temporary name with "L" */
	if (r->report) {
		char *p;
		size_t n = strlen(src.path);

		while ((p = strstr(r->report, src.path))) {
			*p = 'L';
			memmove(p + 1, p + n, strlen(p + n) + 1);
		}
	}
	unlink(src.path);
	free(src.path);
}

static void src_done(struct src_run *r)
{
	bg_list_free(&r->addrs);
	bg_names_free(&r->names);
	free(r->report);
}

static const char hosts_text[] =
	"# hosts\n"
	"127.0.0.1 localhost\n"
	"::1 ip6-localhost\n"
	"0.0.0.0 ads.example tracker.example\n"
	"127.0.0.1 evil.example # sinkhole\n"
	":: v6.example\n";

static void test_source_hosts_no_addresses(void **state)
{
	struct src_run r;
	size_t i;

	(void)state;
	/* detected: the names only; 0.0.0.0, 127.0.0.1, ::1, :: are where the
	 * names point, not blocked addresses */
	src_run(&r, hosts_text, SRC_AUTO, 0, 0, 1);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.used, SRC_HOSTS);
	assert_string_equal(r.report, "");
	assert_int_equal(r.addrs.n4 + r.addrs.n6, 0);
	assert_int_equal(r.addrs.accepted, 0);
	assert_int_equal(r.names.n, 4);
	assert_int_equal(r.names.skipped, 2);
	for (i = 0; i < r.names.n; i++) {
		assert_int_equal(r.names.v[i].kind, BG_NAME_EXACT);
		assert_int_equal(r.names.v[i].allow, 0);
	}
	assert_string_equal(r.names.v[0].name, "ads.example");
	assert_string_equal(r.names.v[3].name, "v6.example");
	src_done(&r);
	/* stated as hosts, with --subdomains: still exact, still no address */
	src_run(&r, hosts_text, SRC_HOSTS, 1, 0, 0);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.addrs.accepted, 0);
	assert_int_equal(r.names.n, 4);
	assert_int_equal(r.names.v[1].kind, BG_NAME_EXACT);
	src_done(&r);
	/* as an --allow list */
	src_run(&r, hosts_text, SRC_AUTO, 0, 1, 0);
	assert_int_equal(r.addrs.accepted, 0);
	assert_int_equal(r.names.n, 4);
	assert_int_equal(r.names.v[0].allow, 1);
	src_done(&r);
	/* stated as addresses: every hosts line is rejected, file:line */
	src_run(&r, hosts_text, SRC_ADDR, 0, 0, 0);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.used, SRC_ADDR);
	assert_int_equal(r.addrs.n4 + r.addrs.n6, 0);
	assert_int_equal(r.addrs.rejected, 5);
	assert_int_equal(r.names.n, 0);
	assert_non_null(strstr(r.report,
		"L:4: trailing text after address: '0.0.0.0 ads.example tracker.example'\n"));
	src_done(&r);
	src_run(&r, hosts_text, SRC_ADDR, 0, 0, 1);
	assert_int_equal(r.rc, -EINVAL);
	src_done(&r);
}

static void test_source_formats(void **state)
{
	struct src_run r;

	(void)state;
	/* addresses, detected */
	src_run(&r, "# x\n192.0.2.0/24\n2001:db8::1\n", SRC_AUTO, 1, 0, 0);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.used, SRC_ADDR);
	assert_int_equal(r.addrs.n4, 1);
	assert_int_equal(r.addrs.n6, 1);
	assert_int_equal(r.names.n, 0);
	src_done(&r);
	/* plain: exact, or name and subdomains with --subdomains */
	src_run(&r, "ads.example\n*.cdn.example\n", SRC_AUTO, 0, 0, 0);
	assert_int_equal(r.used, SRC_PLAIN);
	assert_int_equal(r.names.n, 2);
	assert_int_equal(r.names.v[0].kind, BG_NAME_EXACT);
	assert_int_equal(r.names.v[1].kind, BG_NAME_SUBS);
	src_done(&r);
	src_run(&r, "ads.example\n*.cdn.example\n", SRC_AUTO, 1, 0, 0);
	assert_int_equal(r.names.v[0].kind, BG_NAME_TREE);
	assert_int_equal(r.names.v[1].kind, BG_NAME_SUBS);
	src_done(&r);
	/* adblock, with allow rules and --subdomains ignored */
	src_run(&r, "||ads.example^\n@@||ok.ads.example^\n|one.example^\n",
		SRC_AUTO, 1, 0, 0);
	assert_int_equal(r.used, SRC_ADBLOCK);
	assert_int_equal(r.names.n, 3);
	assert_int_equal(r.names.v[0].kind, BG_NAME_TREE);
	assert_int_equal(r.names.v[1].allow, 1);
	assert_int_equal(r.names.v[2].kind, BG_NAME_EXACT);
	src_done(&r);
	/* a stated format wins over detection: a plain list read as Adblock
	 * keeps bare names exact */
	src_run(&r, "ads.example\n", SRC_ADBLOCK, 1, 0, 0);
	assert_int_equal(r.used, SRC_ADBLOCK);
	assert_int_equal(r.names.v[0].kind, BG_NAME_EXACT);
	src_done(&r);
	/* an address list stated as plain: rejected names, file:line */
	src_run(&r, "192.0.2.1\n", SRC_PLAIN, 0, 0, 0);
	assert_int_equal(r.addrs.accepted, 0);
	assert_int_equal(r.names.rejected, 1);
	assert_string_equal(r.report, "L:1: an IP address, not a name: '192.0.2.1'\n");
	src_done(&r);
	/* too deep: reported file:line, fails strict */
	src_run(&r, "||ok.example^\n||*.a.b.c.d.e.f.g.h.i.j.example^\n",
		SRC_AUTO, 0, 0, 1);
	assert_int_equal(r.rc, -EINVAL);
	assert_int_equal(r.names.too_deep, 1);
	assert_string_equal(r.report,
		"L:2: warning: subdomain rule deeper than 10 labels, never matched: "
		"'||*.a.b.c.d.e.f.g.h.i.j.example^'\n");
	src_done(&r);
	src_run(&r, "||ok.example^\n||*.a.b.c.d.e.f.g.h.i.j.example^\n",
		SRC_AUTO, 0, 0, 0);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.names.n, 2);
	src_done(&r);
	/* plain with --subdomains: the name is kept, its subdomains are not
	 * matched; strict fails, also for an --allow list */
	src_run(&r, "ok.example\na.b.c.d.e.f.g.h.i.j.example\n", SRC_PLAIN, 1, 1, 1);
	assert_int_equal(r.rc, -EINVAL);
	assert_string_equal(r.report,
		"L:2: warning: name deeper than 10 labels, its subdomains are never "
		"matched (the name itself is): 'a.b.c.d.e.f.g.h.i.j.example'\n");
	src_done(&r);
	src_run(&r, "ok.example\na.b.c.d.e.f.g.h.i.j.example\n", SRC_PLAIN, 0, 0, 1);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.report, "");
	src_done(&r);
}

/* What bg_source_parse_info() says about a file: its lines, the rejected
 * ones, and the format that reads a mostly rejected file. */
struct info_case {
	const char *name, *text;
	int format, strict; /* stated (SRC_AUTO: detected) */
	int used, rc;
	size_t lines, rejected, entries;
	int likely;
	size_t likely_lines, likely_of;
	size_t reports; /* lines of report: the trial parses print none */
};

static const struct info_case info_cases[] = {
	{ "plain, detected", "a.example\nb.example\n# c\n*.c.example\n",
	  SRC_AUTO, 0, SRC_PLAIN, 0, 3, 0, 3, SRC_AUTO, 0, 0, 0 },
	{ "a stray line is no majority", "a.example\nb.example\nnot a name\n",
	  SRC_AUTO, 0, SRC_PLAIN, 0, 3, 1, 2, SRC_AUTO, 0, 0, 1 },
	{ "single labels: detected as addresses, plain reads them",
	  "router\nnas\nads.example\n", SRC_AUTO, 0, SRC_ADDR, 0, 3, 3, 0,
	  SRC_PLAIN, 3, 3, 3 },
	{ "the same, strict", "router\nnas\nads.example\n", SRC_AUTO, 1,
	  SRC_ADDR, -EINVAL, 3, 3, 0, SRC_PLAIN, 3, 3, 3 },
	/* a hosts file as addresses: hosts and Adblock read it as well (the
	 * localhost lines are neither), the simpler is named */
	{ "hosts stated as addresses",
	  "# hosts\n127.0.0.1 localhost\n::1 ip6-localhost\n"
	  "0.0.0.0 ads.example tracker.example\n"
	  "127.0.0.1 evil.example # sinkhole\n:: v6.example\n",
	  SRC_ADDR, 0, SRC_ADDR, 0, 5, 5, 0, SRC_HOSTS, 3, 3, 5 },
	{ "adblock stated as plain", "||a.example^\n||b.example^\n",
	  SRC_PLAIN, 0, SRC_PLAIN, 0, 2, 2, 0, SRC_ADBLOCK, 2, 2, 2 },
	{ "addresses stated as plain", "192.0.2.1\n198.51.100.0/24\n",
	  SRC_PLAIN, 0, SRC_PLAIN, 0, 2, 2, 0, SRC_ADDR, 2, 2, 2 },
	/* test_gateway.sh's garbage list: two single labels are names to
	 * plain, hosts and Adblock alike, two lines of four: not most */
	{ "garbage", "garbage\nnot-an-address\n1.2.3\n2001:db8::zz\n",
	  SRC_AUTO, 0, SRC_ADDR, 0, 4, 4, 0, SRC_AUTO, 0, 0, 4 },
	{ "only comments", "# only comments\n\n; and this\n", SRC_AUTO, 0,
	  SRC_ADDR, 0, 0, 0, 0, SRC_AUTO, 0, 0, 0 },
	{ "only comments, strict: no failure here (prepare's)",
	  "# only comments\n", SRC_AUTO, 1, SRC_ADDR, 0, 0, 0, 0, SRC_AUTO, 0,
	  0, 0 },
	/* a line with a name loaded and one rejected is one line, rejected,
	 * whichever comes first; no other format reads wildcards in hosts
	 * lines */
	{ "hosts lines partly rejected",
	  "0.0.0.0 good.example bad*.example\n"
	  "0.0.0.0 bad*.example good2.example\n0.0.0.0 x.example\n",
	  SRC_HOSTS, 0, SRC_HOSTS, 0, 3, 2, 3, SRC_AUTO, 0, 0, 2 },
	{ "hosts lines, two rejections on one line",
	  "0.0.0.0 a*.example b*.example\n0.0.0.0 x.example\n"
	  "0.0.0.0 y.example\n",
	  SRC_HOSTS, 0, SRC_HOSTS, 0, 3, 1, 2, SRC_AUTO, 0, 0, 2 },
};

static const char *info_name(const void *row)
{
	return ((const struct info_case *)row)->name;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

/* Parses text as a list file through bg_source_parse_info(). */
static void info_run(const char *text, size_t len, int format, int strict,
		     struct bg_source_info *in, int *rc, char **report)
{
	struct bg_list_opts lo = { .strict = strict };
	struct bg_source src = { 0 };
	struct bg_blocklist bl;
	struct capture c;

	src.path = write_temp(text, len);
	src.list.format = (uint8_t)format;
	lo.report = capture_open(&c);
	bg_blocklist_init(&bl);
	memset(in, 0xa5, sizeof(*in)); /* every field is set */
	*rc = bg_source_parse_info(&src, &bl, &lo, in);
	*report = (char *)capture_close(&c);
	bg_blocklist_free(&bl);
	unlink(src.path);
	free(src.path);
}

static void run_info(const void *row)
{
	const struct info_case *c = row;
	struct bg_source_info in;
	char *report;
	int rc;

	info_run(c->text, strlen(c->text), c->format, c->strict, &in, &rc,
		 &report);
	check_int(rc, c->rc);
	check_int(in.format, c->used);
	check_int(in.detected, c->format == SRC_AUTO);
	if (in.detected)
		check_int(in.ev.format, c->used);
	check_int(in.lines, c->lines);
	check_int(in.rejected, c->rejected);
	check_int(in.entries, c->entries);
	check_int(bg_source_mostly_rejected(&in), 2 * c->rejected > c->lines);
	check_int(in.likely, c->likely);
	check_int(in.likely_lines, c->likely_lines);
	check_int(in.likely_of, c->likely_of);
	check_int(count_lines(report), c->reports);
	free(report);
}

static void run_infos(void **state)
{
	run_table(*state, info_name, run_info);
}

/* A domain list of which 90 % are garbage lines: no format reads most of
 * it, so it is the address list detection falls back to, every line
 * rejected, no format named; --strict fails it. */
static void test_source_info_garbage(void **state)
{
	struct bg_source_info in;
	char *text, *report;
	size_t i, o = 0;
	int rc, strict;

	(void)state;
	text = malloc(100 * 40);
	assert_non_null(text);
	for (i = 0; i < 100; i++)
		o += (size_t)(i % 10 ? sprintf(text + o, "junk line %zu here\n", i)
				     : sprintf(text + o, "n%zu.example\n", i));
	for (strict = 0; strict <= 1; strict++) {
		info_run(text, o, SRC_AUTO, strict, &in, &rc, &report);
		assert_int_equal(rc, strict ? -EINVAL : 0);
		assert_int_equal(in.format, SRC_ADDR);
		assert_int_equal(in.ev.why, BG_DETECT_FALLBACK);
		assert_int_equal(in.ev.n[SRC_PLAIN], 10);
		assert_int_equal(in.lines, 100);
		assert_int_equal(in.rejected, 100);
		assert_int_equal(in.entries, 0);
		assert_true(bg_source_mostly_rejected(&in));
		/* plain would read 10 of 100: not most */
		assert_int_equal(in.likely, SRC_AUTO);
		assert_int_equal(count_lines(report), 100);
		free(report);
	}
	/* stated plain, it is 90 rejected of 100, and still nothing better */
	info_run(text, o, SRC_PLAIN, 0, &in, &rc, &report);
	assert_int_equal(rc, 0);
	assert_int_equal(in.lines, 100);
	assert_int_equal(in.rejected, 90);
	assert_int_equal(in.entries, 10);
	assert_int_equal(in.likely, SRC_AUTO);
	free(report);
	free(text);
}

static void test_source_unreadable(void **state)
{
	struct bg_list_opts lo = { 0 };
	struct bg_source src = { .path = (char *)"/nonexistent/list.txt" };
	struct bg_blocklist bl;
	struct capture c;
	int used = -1;

	(void)state;
	bg_blocklist_init(&bl);
	lo.report = capture_open(&c);
	assert_int_equal(bg_source_parse(&src, &bl, &lo, &used), -ENOENT);
	assert_string_equal(capture_close(&c), "/nonexistent/list.txt: No such file or directory\n");
	capture_free(&c);
	bg_blocklist_free(&bl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TABLE_TEST(run_cases, accepted),
		cmocka_unit_test(test_line_length_limit),
		TABLE_TEST(run_cases, sorting),
		cmocka_unit_test(test_several_lists),
		TABLE_TEST(run_cases, cidr),
		TABLE_TEST(run_cases, host_bits),
		TABLE_TEST(run_cases, mapped),
		cmocka_unit_test(test_mapped_lengths),
		cmocka_unit_test(test_mapped_covering),
		TABLE_TEST(run_cases, wide),
		cmocka_unit_test(test_wide_sources),
		cmocka_unit_test(test_host_bits_lists),
		cmocka_unit_test(test_finish_matches_qsort),
		cmocka_unit_test(test_finish_threads_same),
		cmocka_unit_test(test_reject_not_ip),
		TABLE_TEST(run_cases, rejects),
		cmocka_unit_test(test_reject_prefix_length),
		cmocka_unit_test(test_prefix_length_range),
		cmocka_unit_test(test_reject_too_long),
		cmocka_unit_test(test_report_quote),
		cmocka_unit_test(test_report_stderr),
		cmocka_unit_test(test_parse_addr),
		cmocka_unit_test(test_ipv4_matches_inet_pton),
		cmocka_unit_test(test_fast_path_same),
		cmocka_unit_test(test_parse_file),
		cmocka_unit_test(test_parse_file_empty),
		cmocka_unit_test(test_parse_file_missing),
		cmocka_unit_test(test_parse_file_directory),
		cmocka_unit_test(test_parse_file_unreadable),
		cmocka_unit_test(test_large),
		TABLE_TEST(run_cases, reduce),
		cmocka_unit_test(test_reduce_matches_naive),
		cmocka_unit_test(test_reduce_large),
		TABLE_TEST(run_covers, covers),
		cmocka_unit_test(test_find_covering),
		cmocka_unit_test(test_find_covering_lines_agree),
		cmocka_unit_test(test_real_firehol),
		cmocka_unit_test(test_real_firehol_wide),
		cmocka_unit_test(test_real_spamhaus_v6),
		cmocka_unit_test(test_real_combined),
		cmocka_unit_test(test_src_detect),
		TABLE_TEST(run_evidences, evidence),
		cmocka_unit_test(test_src_evidence),
		cmocka_unit_test(test_src_format_names),
		cmocka_unit_test(test_sources_rule),
		cmocka_unit_test(test_source_hosts_no_addresses),
		cmocka_unit_test(test_source_formats),
		cmocka_unit_test(test_source_unreadable),
		TABLE_TEST(run_infos, info_cases),
		cmocka_unit_test(test_source_info_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
