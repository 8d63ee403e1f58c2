// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests for user/lists.c: list parsing, reports, keys, de-duplication. */
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
#include "lists.h"

/* ---- Helpers ------------------------------------------------------------ */

struct run {
	struct bg_list l;
	int rc;
	char *report; /* everything written to opts.report */
};

/* Parses len bytes of text as list "t.txt", capturing the report. */
static void run_n(struct run *r, const char *text, size_t len, int strict)
{
	size_t size = 0;
	FILE *f;
	struct bg_list_opts opts = { .strict = strict };

	r->report = NULL;
	f = open_memstream(&r->report, &size);
	assert_non_null(f);
	opts.report = f;
	r->rc = bg_list_parse_buf(&r->l, "t.txt", text, len, &opts);
	assert_int_equal(fclose(f), 0);
	assert_non_null(r->report);
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
	assert_int_equal(l->lines, lines);
	assert_int_equal(l->accepted, accepted);
	assert_int_equal(l->rejected, rejected);
	assert_int_equal(l->n4, n4);
	assert_int_equal(l->n6, n6);
}

static void assert_key4(const struct bg_key4 *k, __u32 addr_host)
{
	assert_int_equal(k->kind, BG_KEY_IPV4);
	assert_int_equal(k->plen, 32);
	assert_int_equal(k->pad, 0);
	assert_int_equal(k->addr, htonl(addr_host));
}

static void assert_key6(const struct bg_key6 *k, const char *text)
{
	__u8 want[16];

	assert_int_equal(inet_pton(AF_INET6, text, want), 1);
	assert_int_equal(k->kind, BG_KEY_IPV6);
	assert_int_equal(k->plen, 128);
	assert_int_equal(k->pad0, 0);
	assert_int_equal(k->pad1, 0);
	assert_memory_equal(k->addr, want, 16);
}

/* One line, one rejection: checks the counts and the whole report. */
static void assert_rejected(const char *line, const char *report)
{
	struct run r;

	run_init(&r);
	run_n(&r, line, strlen(line), 0);
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 1, 0, 1, 0, 0);
	assert_string_equal(r.report, report);
	run_done(&r);
}

/* A temporary file holding text; returns its malloc'd path. */
static char *write_temp(const char *text, size_t len)
{
	const char *dir = getenv("TMPDIR");
	char *path;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	assert_true(asprintf(&path, "%s/test_lists.XXXXXX", dir) > 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
	return path;
}

/* ---- Accepted forms ----------------------------------------------------- */

static void test_ipv4_key(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "192.0.2.1\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 1, 1, 0, 1, 0);
	assert_int_equal(r.l.files, 1);
	assert_int_equal(r.l.duplicates, 0);
	assert_key4(&r.l.v4[0], 0xc0000201);
	/* the exact 8 bytes: kind, plen, pad, address in network order */
	assert_memory_equal(&r.l.v4[0], "\x01\x20\x00\x00\xc0\x00\x02\x01", 8);
	assert_string_equal(r.report, "");
	run_done(&r);
}

static void test_ipv4_edges(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "0.0.0.0\n255.255.255.255\n10.0.0.1\n100.64.0.10\n"
		"1.22.133.244\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 5, 5, 0, 5, 0);
	assert_key4(&r.l.v4[0], 0x00000000);
	assert_key4(&r.l.v4[1], 0xffffffff);
	assert_key4(&r.l.v4[2], 0x0a000001);
	assert_key4(&r.l.v4[3], 0x6440000a);
	assert_key4(&r.l.v4[4], 0x011685f4);
	assert_string_equal(r.report, "");
	run_done(&r);
}

static void test_ipv6_key(void **state)
{
	static const __u8 want[24] = {
		2, 128, 0, 0, 0, 0, 0, 0,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
	};
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "2001:db8::1\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 1, 1, 0, 0, 1);
	assert_key6(&r.l.v6[0], "2001:db8::1");
	assert_memory_equal(&r.l.v6[0], want, sizeof(want));
	assert_string_equal(r.report, "");
	run_done(&r);
}

static void test_ipv6_forms(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "::\n"
		"::1\n"
		"2001:DB8::AbCd\n"
		"1:2:3:4:5:6:7:8\n"
		"2001:0db8:0000:0000:0000:0000:0000:0001\n"
		"::ffff:192.0.2.1\n"
		"64:ff9b::192.0.2.1\n"
		"fe80::1\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 8, 8, 0, 0, 8);
	assert_key6(&r.l.v6[0], "::");
	assert_key6(&r.l.v6[1], "::1");
	assert_key6(&r.l.v6[2], "2001:db8::abcd");
	assert_key6(&r.l.v6[3], "1:2:3:4:5:6:7:8");
	assert_key6(&r.l.v6[4], "2001:db8::1");
	/* IPv4-mapped stays an IPv6 key: it is what an IPv6 packet carries */
	assert_key6(&r.l.v6[5], "::ffff:c000:201");
	assert_key6(&r.l.v6[6], "64:ff9b::c000:201");
	assert_key6(&r.l.v6[7], "fe80::1");
	assert_string_equal(r.report, "");
	run_done(&r);
}

static void test_mixed_families(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "192.0.2.1\n2001:db8::1\n198.51.100.7\n2001:db8::2\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 4, 4, 0, 2, 2);
	assert_key4(&r.l.v4[0], 0xc0000201);
	assert_key4(&r.l.v4[1], 0xc6336407);
	assert_key6(&r.l.v6[0], "2001:db8::1");
	assert_key6(&r.l.v6[1], "2001:db8::2");
	run_done(&r);
}

static void test_comments(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "# whole-line hash comment\n"
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
		"192.0.2.6 # a # b ; c 1.2.3.4/8\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 13, 8, 0, 6, 2);
	assert_key4(&r.l.v4[0], 0xc0000201);
	assert_key4(&r.l.v4[1], 0xc0000202);
	assert_key4(&r.l.v4[2], 0xc0000203);
	assert_key4(&r.l.v4[3], 0xc0000204);
	assert_key4(&r.l.v4[4], 0xc0000205);
	assert_key4(&r.l.v4[5], 0xc0000206);
	assert_key6(&r.l.v6[0], "2001:db8::1");
	assert_key6(&r.l.v6[1], "2001:db8::2");
	assert_string_equal(r.report, "");
	run_done(&r);
}

static void test_whitespace(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "\n"
		"   \n"
		"\t\t\n"
		"  192.0.2.1\n"
		"192.0.2.2   \n"
		"\t192.0.2.3\t\n"
		" \t 2001:db8::1 \t \n"
		"\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 8, 4, 0, 3, 1);
	assert_key4(&r.l.v4[0], 0xc0000201);
	assert_key4(&r.l.v4[1], 0xc0000202);
	assert_key4(&r.l.v4[2], 0xc0000203);
	assert_key6(&r.l.v6[0], "2001:db8::1");
	assert_string_equal(r.report, "");
	run_done(&r);
}

/* The head of a FireHOL .ipset file, as distributed. */
static void test_firehol_ipset(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "#\n"
		"# example_level1\n"
		"#\n"
		"# ipv4 hash:ip ipset\n"
		"#\n"
		"# Source URL: https://example.org/list.txt\n"
		"# Entries      : 3 unique IPs\n"
		"#\n"
		"192.0.2.10\n"
		"198.51.100.20\n"
		"203.0.113.30\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 11, 3, 0, 3, 0);
	assert_key4(&r.l.v4[0], 0xc000020a);
	assert_key4(&r.l.v4[1], 0xc6336414);
	assert_key4(&r.l.v4[2], 0xcb00711e);
	run_done(&r);
}

static void test_crlf(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "# header\r\n"
		"192.0.2.1\r\n"
		"\r\n"
		"2001:db8::1\r\n"
		"192.0.2.2 # c\r\n"
		"example.com\r\n"
		"192.0.2.3\r\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 7, 4, 1, 3, 1);
	assert_key4(&r.l.v4[0], 0xc0000201);
	assert_key4(&r.l.v4[1], 0xc0000202);
	assert_key4(&r.l.v4[2], 0xc0000203);
	assert_key6(&r.l.v6[0], "2001:db8::1");
	/* the CR is not part of the quoted text */
	assert_string_equal(r.report,
			    "t.txt:6: not an IP address: 'example.com'\n");
	run_done(&r);
}

static void test_no_final_newline(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "192.0.2.1\n192.0.2.2");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 2, 2, 0, 2, 0);
	assert_key4(&r.l.v4[1], 0xc0000202);
	run_done(&r);

	run_init(&r);
	RUN(&r, "2001:db8::1\r\n2001:db8::2\r");
	assert_counts(&r.l, 2, 2, 0, 0, 2);
	assert_key6(&r.l.v6[1], "2001:db8::2");
	run_done(&r);

	/* an unterminated bad last line is still reported with its number */
	run_init(&r);
	RUN(&r, "192.0.2.1\nbad");
	assert_counts(&r.l, 2, 1, 1, 1, 0);
	assert_string_equal(r.report, "t.txt:2: not an IP address: 'bad'\n");
	run_done(&r);
}

static void test_empty_buffer(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 0, 0, 0, 0, 0);
	assert_int_equal(r.l.files, 1);
	assert_string_equal(r.report, "");
	run_done(&r);

	/* NULL with length 0 is an empty list too */
	run_init(&r);
	run_n(&r, NULL, 0, 1);
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 0, 0, 0, 0, 0);
	bg_list_finish(&r.l);
	assert_int_equal(r.l.duplicates, 0);
	run_done(&r);

	/* a lone newline is one blank line */
	run_init(&r);
	RUN(&r, "\n");
	assert_counts(&r.l, 1, 0, 0, 0, 0);
	run_done(&r);
}

static void test_only_comments(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN_STRICT(&r, "# one\n; two\n\n   # three\n#");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 5, 0, 0, 0, 0);
	assert_string_equal(r.report, "");
	bg_list_finish(&r.l);
	assert_int_equal(r.l.n4, 0);
	assert_int_equal(r.l.n6, 0);
	run_done(&r);
}

static void test_bom(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "\xef\xbb\xbf"
		"192.0.2.1\n192.0.2.2\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 2, 2, 0, 2, 0);
	assert_key4(&r.l.v4[0], 0xc0000201);
	run_done(&r);

	/* only at the very start: elsewhere it is garbage */
	run_init(&r);
	RUN(&r, "192.0.2.1\n\xef\xbb\xbf"
		"192.0.2.2\n");
	assert_counts(&r.l, 2, 1, 1, 1, 0);
	assert_string_equal(r.report, "t.txt:2: not an IP address: "
				      "'\xef\xbb\xbf"
				      "192.0.2.2'\n");
	run_done(&r);
}

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

static void test_duplicates(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "192.0.2.1\n"
		"192.0.2.1\n"
		"  192.0.2.1 # again\n"
		"2001:db8::1\n"
		"2001:DB8:0:0::1\n"
		"2001:0db8::0001\n"
		"192.0.2.2\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 7, 7, 0, 4, 3);
	bg_list_finish(&r.l);
	assert_int_equal(r.l.duplicates, 4);
	assert_int_equal(r.l.n4, 2);
	assert_int_equal(r.l.n6, 1);
	assert_int_equal(r.l.accepted, 7); /* before de-duplication */
	assert_key4(&r.l.v4[0], 0xc0000201);
	assert_key4(&r.l.v4[1], 0xc0000202);
	assert_key6(&r.l.v6[0], "2001:db8::1");
	run_done(&r);
}

static void test_finish_sorts(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "203.0.113.9\n"
		"10.0.0.1\n"
		"2001:db8::ff\n"
		"192.0.2.1\n"
		"10.0.0.1\n"
		"::1\n"
		"1.0.0.0\n"
		"2001:db8::1\n"
		"255.255.255.255\n"
		"2001:db8::ff\n"
		"0.0.0.0\n");
	assert_counts(&r.l, 11, 11, 0, 7, 4);
	bg_list_finish(&r.l);
	assert_int_equal(r.l.duplicates, 2);
	assert_int_equal(r.l.n4, 6);
	assert_int_equal(r.l.n6, 3);
	/* memcmp order of the keys is numeric order of the addresses */
	assert_key4(&r.l.v4[0], 0x00000000);
	assert_key4(&r.l.v4[1], 0x01000000);
	assert_key4(&r.l.v4[2], 0x0a000001);
	assert_key4(&r.l.v4[3], 0xc0000201);
	assert_key4(&r.l.v4[4], 0xcb007109);
	assert_key4(&r.l.v4[5], 0xffffffff);
	assert_key6(&r.l.v6[0], "::1");
	assert_key6(&r.l.v6[1], "2001:db8::1");
	assert_key6(&r.l.v6[2], "2001:db8::ff");

	/* finishing again changes nothing */
	bg_list_finish(&r.l);
	assert_int_equal(r.l.duplicates, 2);
	assert_int_equal(r.l.n4, 6);
	run_done(&r);
}

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

/* ---- Rejected lines ------------------------------------------------------ */

static void test_reject_cidr(void **state)
{
	(void)state;
	assert_rejected("192.0.2.0/24\n",
			"t.txt:1: CIDR ranges are not supported yet: "
			"'192.0.2.0/24'\n");
	assert_rejected("192.0.2.1/32",
			"t.txt:1: CIDR ranges are not supported yet: "
			"'192.0.2.1/32'\n");
	assert_rejected("2001:db8::/32 # net\n",
			"t.txt:1: CIDR ranges are not supported yet: "
			"'2001:db8::/32 # net'\n");
	/* rejected as CIDR even when the length is out of range */
	assert_rejected("192.0.2.0/99\n",
			"t.txt:1: CIDR ranges are not supported yet: "
			"'192.0.2.0/99'\n");
	/* a slash after something that is no address is not CIDR */
	assert_rejected("foo/24\n", "t.txt:1: not an IP address: 'foo/24'\n");
	assert_rejected("/24\n", "t.txt:1: not an IP address: '/24'\n");
}

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
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[128], want[256];

		snprintf(line, sizeof(line), "%s\n", bad[i]);
		snprintf(want, sizeof(want),
			 "t.txt:1: not an IP address: '%s'\n", bad[i]);
		assert_rejected(line, want);
	}
}

static void test_reject_trailing(void **state)
{
	(void)state;
	assert_rejected("1.2.3.4 5.6.7.8\n",
			"t.txt:1: trailing text after address: "
			"'1.2.3.4 5.6.7.8'\n");
	assert_rejected("1.2.3.4 foo\n",
			"t.txt:1: trailing text after address: "
			"'1.2.3.4 foo'\n");
	assert_rejected("0.0.0.0\texample.com # hosts file\n",
			"t.txt:1: trailing text after address: "
			"'0.0.0.0\\x09example.com # hosts file'\n");
	assert_rejected("2001:db8::1 x\r\n",
			"t.txt:1: trailing text after address: "
			"'2001:db8::1 x'\n");
	/* a bad first word is reported as such, not as trailing text */
	assert_rejected("example.com 1.2.3.4\n",
			"t.txt:1: not an IP address: 'example.com 1.2.3.4'\n");
}

static void test_reject_zone(void **state)
{
	(void)state;
	assert_rejected("fe80::1%eth0\n",
			"t.txt:1: IPv6 zone index not allowed: "
			"'fe80::1%eth0'\n");
	assert_rejected("fe80::1%2 # scope 2\n",
			"t.txt:1: IPv6 zone index not allowed: "
			"'fe80::1%2 # scope 2'\n");
	assert_rejected("fe80::%eth0/64\n",
			"t.txt:1: IPv6 zone index not allowed: "
			"'fe80::%eth0/64'\n");
}

static void test_reject_range(void **state)
{
	(void)state;
	assert_rejected("192.0.2.1-192.0.2.9\n",
			"t.txt:1: address ranges are not supported: "
			"'192.0.2.1-192.0.2.9'\n");
	assert_rejected("2001:db8::1-2001:db8::9\n",
			"t.txt:1: address ranges are not supported: "
			"'2001:db8::1-2001:db8::9'\n");
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

static void test_reject_binary(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "192.0.2.1\n192.0.2.2\0\n\0\0\0\n192.0.2.3\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 4, 2, 2, 2, 0);
	assert_string_equal(r.report,
			    "t.txt:2: binary data: '192.0.2.2\\x00'\n"
			    "t.txt:3: binary data: '\\x00\\x00\\x00'\n");
	assert_key4(&r.l.v4[1], 0xc0000203);
	run_done(&r);

	/* even behind a comment marker */
	run_init(&r);
	RUN(&r, "192.0.2.1 # \0\n");
	assert_counts(&r.l, 1, 0, 1, 0, 0);
	assert_string_equal(r.report,
			    "t.txt:1: binary data: '192.0.2.1 # \\x00'\n");
	run_done(&r);
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

	/* control bytes are escaped, surrounding blanks dropped */
	assert_rejected(" \t a\x1b[31mb \t\r\n",
			"t.txt:1: not an IP address: 'a\\x1b[31mb'\n");

	/* the name given is used verbatim; NULL becomes "-" */
	run_init(&r);
	{
		size_t size;
		FILE *f = open_memstream(&r.report, &size);
		struct bg_list_opts o = { .report = f };

		assert_non_null(f);
		assert_int_equal(bg_list_parse_buf(&r.l, NULL, "x\n", 2, &o), 0);
		assert_int_equal(bg_list_parse_buf(&r.l, "lists/a b.txt", "\n\ny",
						   3, &o), 0);
		fclose(f);
	}
	assert_string_equal(r.report, "-:1: not an IP address: 'x'\n"
				      "lists/a b.txt:3: not an IP address: 'y'\n");
	run_done(&r);
}

/* Every bad line is reported with its own number; good lines still count. */
static void test_report_many(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN(&r, "# list\n"
		"192.0.2.1\n"
		"192.0.2.0/24\n"
		"\n"
		"1.2.3.256\n"
		"2001:db8::1\n"
		"fe80::1%eth0\n"
		"1.2.3.4 5.6.7.8\n"
		"192.0.2.2 ; ok\n"
		"host.example\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 10, 3, 5, 2, 1);
	assert_string_equal(
		r.report,
		"t.txt:3: CIDR ranges are not supported yet: '192.0.2.0/24'\n"
		"t.txt:5: not an IP address: '1.2.3.256'\n"
		"t.txt:7: IPv6 zone index not allowed: 'fe80::1%eth0'\n"
		"t.txt:8: trailing text after address: '1.2.3.4 5.6.7.8'\n"
		"t.txt:10: not an IP address: 'host.example'\n");
	run_done(&r);
}

static void test_strict(void **state)
{
	struct run r;

	(void)state;
	run_init(&r);
	RUN_STRICT(&r, "192.0.2.1\n"
		       "bad one\n"
		       "192.0.2.2\n"
		       "10.0.0.0/8\n"
		       "2001:db8::1\n");
	assert_int_equal(r.rc, -EINVAL);
	/* the whole list is parsed, so every bad line is reported */
	assert_counts(&r.l, 5, 3, 2, 2, 1);
	assert_string_equal(
		r.report,
		"t.txt:2: not an IP address: 'bad one'\n"
		"t.txt:4: CIDR ranges are not supported yet: '10.0.0.0/8'\n");
	run_done(&r);

	/* a clean list passes in strict mode */
	run_init(&r);
	RUN_STRICT(&r, "192.0.2.1 # c\r\n2001:db8::1\n\n");
	assert_int_equal(r.rc, 0);
	assert_counts(&r.l, 3, 2, 0, 1, 1);
	assert_string_equal(r.report, "");
	run_done(&r);

	/* a binary or too-long line fails strict mode too */
	run_init(&r);
	RUN_STRICT(&r, "192.0.2.1\0\n");
	assert_int_equal(r.rc, -EINVAL);
	assert_int_equal(r.l.rejected, 1);
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
	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	assert_int_equal(l.rejected, 2);
	bg_list_free(&l);

	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, got, sizeof(got) - 1);
	assert_true(n >= 0);
	got[n] = '\0';
	close(fd);
	assert_string_equal(got,
			    "e.txt:1: not an IP address: 'nope'\n"
			    "e.txt:1: CIDR ranges are not supported yet: "
			    "'1.2.3.4/8'\n");
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
	assert_int_equal(bg_parse_addr("10.0.0.0/8", &k4, &k6, &reason), 0);
	assert_string_equal(reason, "CIDR ranges are not supported yet");
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

/* ---- Files ---------------------------------------------------------------- */

static void test_parse_file(void **state)
{
	static const char text[] = "# list\n192.0.2.1\n2001:db8::1\nbad\n"
				   "192.0.2.1";
	char *path = write_temp(text, sizeof(text) - 1), *report = NULL;
	char want[512];
	size_t size;
	struct bg_list l;
	FILE *f = open_memstream(&report, &size);
	struct bg_list_opts o = { .report = f };

	(void)state;
	assert_non_null(f);
	bg_list_init(&l);
	assert_int_equal(bg_list_parse_file(&l, path, &o), 0);
	o.strict = 1;
	assert_int_equal(bg_list_parse_file(&l, path, &o), -EINVAL);
	fclose(f);
	assert_int_equal(l.files, 2);
	assert_counts(&l, 10, 6, 2, 4, 2);
	snprintf(want, sizeof(want),
		 "%s:4: not an IP address: 'bad'\n"
		 "%s:4: not an IP address: 'bad'\n",
		 path, path);
	assert_string_equal(report, want);
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
	free(report);
}

static void test_parse_file_empty(void **state)
{
	char *path = write_temp("", 0);
	struct bg_list l;
	struct bg_list_opts o = { .strict = 1 };

	(void)state;
	bg_list_init(&l);
	assert_int_equal(bg_list_parse_file(&l, path, &o), 0);
	assert_int_equal(bg_list_parse_file(&l, "/dev/null", &o), 0);
	assert_int_equal(l.files, 2);
	assert_counts(&l, 0, 0, 0, 0, 0);
	bg_list_free(&l);
	unlink(path);
	free(path);
}

/* Runs parse_file on path, expecting failure ret and report "path: msg". */
static void assert_file_fails(const char *path, int ret, const char *msg)
{
	char *report = NULL, want[512];
	size_t size;
	struct bg_list l;
	FILE *f = open_memstream(&report, &size);
	struct bg_list_opts o = { .report = f };

	assert_non_null(f);
	bg_list_init(&l);
	assert_int_equal(bg_list_parse_file(&l, path, &o), ret);
	fclose(f);
	assert_int_equal(l.files, 0);
	assert_counts(&l, 0, 0, 0, 0, 0);
	snprintf(want, sizeof(want), "%s: %s\n", path, msg);
	assert_string_equal(report, want);
	bg_list_free(&l);
	free(report);
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
	assert_file_fails("/tmp", -EISDIR, "Is a directory");
	assert_file_fails(".", -EISDIR, "Is a directory");
}

static void test_parse_file_unreadable(void **state)
{
	char *path;

	(void)state;
	if (geteuid() == 0)
		skip(); /* root reads anything */
	path = write_temp("192.0.2.1\n", 10);
	assert_int_equal(chmod(path, 0), 0);
	assert_file_fails(path, -EACCES, "Permission denied");
	unlink(path);
	free(path);
}

/* ---- Volume --------------------------------------------------------------- */

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_key),
		cmocka_unit_test(test_ipv4_edges),
		cmocka_unit_test(test_ipv6_key),
		cmocka_unit_test(test_ipv6_forms),
		cmocka_unit_test(test_mixed_families),
		cmocka_unit_test(test_comments),
		cmocka_unit_test(test_whitespace),
		cmocka_unit_test(test_firehol_ipset),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_no_final_newline),
		cmocka_unit_test(test_empty_buffer),
		cmocka_unit_test(test_only_comments),
		cmocka_unit_test(test_bom),
		cmocka_unit_test(test_line_length_limit),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_finish_sorts),
		cmocka_unit_test(test_several_lists),
		cmocka_unit_test(test_finish_matches_qsort),
		cmocka_unit_test(test_reject_cidr),
		cmocka_unit_test(test_reject_not_ip),
		cmocka_unit_test(test_reject_trailing),
		cmocka_unit_test(test_reject_zone),
		cmocka_unit_test(test_reject_range),
		cmocka_unit_test(test_reject_too_long),
		cmocka_unit_test(test_reject_binary),
		cmocka_unit_test(test_report_quote),
		cmocka_unit_test(test_report_many),
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_report_stderr),
		cmocka_unit_test(test_parse_addr),
		cmocka_unit_test(test_ipv4_matches_inet_pton),
		cmocka_unit_test(test_parse_file),
		cmocka_unit_test(test_parse_file_empty),
		cmocka_unit_test(test_parse_file_missing),
		cmocka_unit_test(test_parse_file_directory),
		cmocka_unit_test(test_parse_file_unreadable),
		cmocka_unit_test(test_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
