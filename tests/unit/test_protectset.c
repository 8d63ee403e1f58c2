// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the protected set's pure part (user/core/protect.c): the
 * operator's addresses read by the lists' parser and what is refused,
 * resolv.conf read from hostile text, the route tables' lines, the ranges
 * made of the items (merged, searched as the datapath searches them), the
 * entries of a finished list that cover the set and their lines, the
 * words of the reports, and the agent's protect: key (file:line errors).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/config.h"
#include "core/lists.h"
#include "core/protect.h"

static struct bg_protect_set S; /* large: off the stack */

static void add(const char *tok, int kind)
{
	struct bg_protect_item it;
	const char *why = NULL;

	if (bg_protect_parse(tok, kind, &it, &why))
		fail_msg("%s: %s", tok, why);
	assert_int_equal(bg_protect_add(&S, &it), 0);
}

static int has(const char *addr)
{
	__u8 a[16];
	__u32 a4;

	if (inet_pton(AF_INET, addr, a) == 1) {
		memcpy(&a4, a, 4);
		return bg_protect_test4(&S, a4);
	}
	assert_int_equal(inet_pton(AF_INET6, addr, a), 1);
	return bg_protect_test6(&S, a);
}

static void test_parse(void **state)
{
	static const struct {
		const char *tok, *why;
	} bad[] = {
		{ "10.1.2.3/8", "host bits set" },
		{ "0.0.0.0/0", "shorter than /8" },
		{ "10.0.0.0/7", "shorter than /8" },
		{ "2000::/15", "shorter than /16" },
		{ "::ffff:192.0.2.1", "IPv4-mapped" },
		{ "example.com", "not an IP address" },
		{ "192.0.2.1 ", "" },
		{ "", "" },
	};
	struct bg_protect_item it;
	const char *why;
	char buf[64];
	size_t i;

	(void)state;
	assert_int_equal(bg_protect_parse("192.0.2.1", BG_PROTECT_GIVEN, &it, &why), 0);
	assert_int_equal(it.family, BG_KEY_IPV4);
	assert_int_equal(it.plen, 32);
	assert_int_equal(it.kind, BG_PROTECT_GIVEN);
	assert_int_equal(bg_protect_parse("2001:db8:1::/48", BG_PROTECT_CONFIG, &it, &why), 0);
	bg_protect_item_text(buf, sizeof(buf), &it);
	assert_string_equal(buf, "2001:db8:1::/48");
	assert_int_equal(bg_protect_parse("10.0.0.0/8", BG_PROTECT_GIVEN, &it, &why), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		if (!bg_protect_parse(bad[i].tok, BG_PROTECT_GIVEN, &it, &why))
			fail_msg("'%s' accepted", bad[i].tok);
		assert_non_null(why);
		if (!strstr(why, bad[i].why))
			fail_msg("'%s': '%s', expected '%s'", bad[i].tok, why, bad[i].why);
	}
}

/* Items into ranges: overlapping and touching ones merged, the search
 * exact at every edge, both families, the ends of the spaces included. */
static void test_ranges(void **state)
{
	(void)state;
	bg_protect_init(&S);
	add("10.0.0.0/24", BG_PROTECT_GIVEN);
	add("10.0.1.0/24", BG_PROTECT_GIVEN); /* touches: one range */
	add("10.0.0.7", BG_PROTECT_GIVEN); /* inside */
	add("192.0.2.1", BG_PROTECT_GIVEN);
	add("192.0.2.1", BG_PROTECT_GIVEN); /* again: kept once */
	add("255.255.255.255", BG_PROTECT_GIVEN);
	add("2001:db8::/64", BG_PROTECT_GIVEN);
	add("2001:db8:0:1::/64", BG_PROTECT_GIVEN);
	add("ffff::/16", BG_PROTECT_GIVEN);
	add("ffff:ffff::/32", BG_PROTECT_GIVEN);
	bg_protect_finish(&S);
	assert_int_equal(S.nitems, 9);
	assert_int_equal(S.n4, 3);
	assert_int_equal(S.n6, 2);
	assert_true(has("10.0.0.0") && has("10.0.1.255") && has("10.0.0.7"));
	assert_false(has("9.255.255.255") || has("10.0.2.0"));
	assert_true(has("192.0.2.1"));
	assert_false(has("192.0.2.0") || has("192.0.2.2"));
	assert_true(has("255.255.255.255"));
	assert_false(has("255.255.255.254") || has("0.0.0.0"));
	assert_true(has("2001:db8::") && has("2001:db8:0:1:ffff:ffff:ffff:ffff"));
	assert_false(has("2001:db8:0:2::") || has("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff"));
	assert_true(has("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff") && has("ffff::"));
	assert_false(has("fffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff") || has("::"));
}

/* A set holds BG_PROTECT_MAX items and refuses the next one. */
static void test_full(void **state)
{
	struct bg_protect_item it;
	__u32 i;

	(void)state;
	bg_protect_init(&S);
	memset(&it, 0, sizeof(it));
	it.family = BG_KEY_IPV4;
	it.plen = 32;
	it.kind = BG_PROTECT_IFACE;
	for (i = 0; i < BG_PROTECT_MAX; i++) {
		__u32 a = htonl(0x0a000000 + 2 * i);

		memcpy(it.addr, &a, 4);
		assert_int_equal(bg_protect_add(&S, &it), 0);
	}
	it.addr[3] = 1;
	assert_int_equal(bg_protect_add(&S, &it), -ENOSPC);
	/* one already there still is no error */
	it.addr[3] = 0;
	assert_int_equal(bg_protect_add(&S, &it), 0);
	bg_protect_finish(&S);
	assert_int_equal(S.n4, BG_PROTECT_MAX);
}

/* resolv.conf as a hostile file may have it: only nameserver lines, each
 * address once, a zone cut off, nothing past BG_RESOLV_NS_MAX, no
 * overrun on a line without an end, NUL bytes or huge tokens. */
static void test_resolv(void **state)
{
	static const char text[] =
		"# comment nameserver 10.9.9.9\n"
		"search example.com\n"
		"nameserver 192.0.2.53\n"
		"  nameserver\t2001:db8::53 # the v6 one\n"
		"nameserver fe80::1%eth0\n"
		"nameservers 10.8.8.8\n"
		"nameserver 192.0.2.53\n"
		"nameserver not-an-address\n"
		"nameserver 10.7.7.7/24\n"
		"nameserver\n"
		"options ndots:2\n"
		"nameserver 203.0.113.53"; /* no final newline */
	char big[8192];
	size_t i, o;
	int n;

	(void)state;
	bg_protect_init(&S);
	n = bg_protect_resolv_parse(&S, text, sizeof(text) - 1);
	assert_int_equal(n, 5); /* 192.0.2.53 twice: one item */
	assert_int_equal(S.nitems, 4);
	bg_protect_finish(&S);
	assert_true(has("192.0.2.53") && has("2001:db8::53") && has("fe80::1") &&
		    has("203.0.113.53"));
	assert_false(has("10.9.9.9") || has("10.8.8.8") || has("10.7.7.7"));
	assert_int_equal(S.item[0].kind, BG_PROTECT_RESOLVER);

	/* a NUL in an address, a token longer than any address, then more
	 * nameservers than are read, then a line without an end */
	bg_protect_init(&S);
	memcpy(big, "nameserver 10.1.", 16);
	big[16] = 0;
	memcpy(big + 17, "1.1\nnameserver ", 15);
	o = 32;
	memset(big + o, '1', 200);
	o += 200;
	big[o++] = '\n';
	for (i = 0; i < 40; i++)
		o += (size_t)snprintf(big + o, sizeof(big) - o, "nameserver 10.0.%zu.1\n", i);
	memset(big + o, 'x', sizeof(big) - o);
	n = bg_protect_resolv_parse(&S, big, sizeof(big));
	assert_int_equal(n, BG_RESOLV_NS_MAX);
	assert_int_equal(S.nitems, BG_RESOLV_NS_MAX);
	bg_protect_finish(&S);
	assert_true(has("10.0.0.1") && has("10.0.15.1"));
	assert_false(has("10.0.16.1") || has("10.1.1.1"));
}

/* /proc/net/route and /proc/net/ipv6_route lines, as Linux 6.18 writes
 * them: the default routes' next hops only. */
static void test_routes(void **state)
{
	static const char *const r4[] = {
		"Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT",
		"gws\t00000000\t820200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0",
		"gwc\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0",
		"gws\t0000000A\t0200000A\t0003\t0\t0\t0\t00FFFFFF\t0\t0\t0",
	};
	static const char *const r6[] = {
		"20010db8000900000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000003 00000000 00000001       d0",
		"00000000000000000000000000000000 00 00000000000000000000000000000000 00 20010db80009000000000000000000fe 00000400 00000001 00000000 00000003       d0",
		"00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo",
		"00000000000000000000000000000000 00 00000000000000000000000000000000 00 zz0db80009000000000000000000fe 00000400 00000001 00000000 00000003       d0",
	};
	char why[96];
	int past = 0, i, n = 0;

	(void)state;
	bg_protect_init(&S);
	for (i = 0; i < 4 && !past; i++)
		n += bg_protect_route4(&S, r4[i], 7, &past);
	assert_int_equal(n, 1);
	assert_int_equal(past, 1); /* stopped at the first other route */
	for (i = 0; i < 4; i++)
		n += bg_protect_route6(&S, r6[i], 7);
	assert_int_equal(n, 2);
	bg_protect_finish(&S);
	assert_true(has("192.0.2.130") && has("2001:db8:9::fe"));
	assert_false(has("10.0.0.2"));
	assert_int_equal(S.item[0].netns_ino, 7);
	bg_protect_why(why, sizeof(why), &S.item[0]);
	assert_string_equal(why, "the next hop of the default route via gws");
}

/* The entries of a finished list over the set: a covering prefix, the
 * address itself, entries inside a protected prefix; each found by a
 * search, none missed, none extra; then their lines in the list file. */
static void test_covers(void **state)
{
	static const char list[] =
		"# a FireHOL-like list\n"
		"10.0.0.0/8\n"
		"10.1.2.3\n" /* covered by 10/8: not an entry of its own */
		"192.0.2.0/24 ; documentation\n"
		"198.51.100.7\n"
		"198.51.100.9\n"
		"203.0.113.0/24\n"
		"2001:db8::/32\n"
		"192.0.2.0/24\n"; /* again, on another line */
	char path[] = "/tmp/bg-test-protect.XXXXXX", line[512];
	struct bg_list_opts o = { .strict = 1 };
	struct bg_protect_covers c = { 0 };
	struct bg_sources srcs;
	struct bg_list l;
	int fd;

	(void)state;
	bg_protect_init(&S);
	add("192.0.2.1", BG_PROTECT_IFACE);
	snprintf(S.item[0].ifname, sizeof(S.item[0].ifname), "eth0");
	add("10.1.2.3", BG_PROTECT_RESOLVER);
	add("198.51.100.0/28", BG_PROTECT_GIVEN);
	add("2001:db8::1", BG_PROTECT_GATEWAY);
	add("172.16.0.1", BG_PROTECT_GIVEN); /* listed nowhere */
	bg_protect_finish(&S);
	bg_list_init(&l);
	assert_int_equal(bg_list_parse_buf(&l, "t", list, sizeof(list) - 1, &o), 0);
	bg_list_finish(&l);
	assert_int_equal(bg_protect_covers_find(&S, &l, &c), 0);
	/* 192.0.2.0/24, 10.0.0.0/8, .7 and .9 inside the /28, 2001:db8::/32 */
	assert_int_equal(c.n, 5);
	assert_int_equal(c.more, 0);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, list, sizeof(list) - 1), (ssize_t)sizeof(list) - 1);
	close(fd);
	bg_sources_init(&srcs);
	assert_int_equal(bg_sources_add(&srcs, path, 0), 0);
	srcs.v[0].list.format = BG_FMT_ADDR;
	assert_int_equal(bg_protect_covers_lines(&c, &srcs), 0);
	/* 192.0.2.0/24 is on two lines */
	assert_int_equal(c.n, 6);
	assert_int_equal(c.v[0].line, 2);
	assert_int_equal(c.v[0].source, 0);
	assert_int_equal(c.v[1].line, 4);
	assert_string_equal(c.v[1].text, "192.0.2.0/24 ; documentation");
	snprintf(line, sizeof(line), "at %s:%zu", path, c.v[1].line);
	{
		char out[512], want[512];

		bg_protect_cover_fmt(out, sizeof(out), &c.v[1], line);
		snprintf(want, sizeof(want), "192.0.2.0/24 at %s:4 covers 192.0.2.1, "
			 "the address of interface eth0: loaded without it", path);
		assert_string_equal(out, want);
		bg_protect_cover_fmt(out, sizeof(out), &c.v[2], "");
		assert_string_equal(out, "198.51.100.7 lies inside 198.51.100.0/28, "
			 "given with --protect: it blocks nothing");
	}
	assert_int_equal(c.v[5].line, 9);
	bg_protect_covers_free(&c);
	bg_sources_free(&srcs);
	bg_list_free(&l);
	unlink(path);
}

/* Past BG_PROTECT_COVERS_MAX the entries are counted, not kept. */
static void test_covers_bounded(void **state)
{
	struct bg_protect_covers c = { 0 };
	struct bg_list_opts o = { .strict = 1 };
	struct bg_list l;
	char *buf = malloc(20 * 1000), *p;
	int i;

	(void)state;
	assert_non_null(buf);
	for (i = 0, p = buf; i < 1000; i++)
		p += sprintf(p, "10.3.%d.%d\n", i / 250, i % 250 + 1);
	bg_protect_init(&S);
	add("10.0.0.0/8", BG_PROTECT_GIVEN);
	bg_protect_finish(&S);
	bg_list_init(&l);
	assert_int_equal(bg_list_parse_buf(&l, "t", buf, (size_t)(p - buf), &o), 0);
	bg_list_finish(&l);
	assert_int_equal(bg_protect_covers_find(&S, &l, &c), 0);
	assert_int_equal(c.n, BG_PROTECT_COVERS_MAX);
	assert_int_equal(c.n + c.more, 1000);
	assert_int_equal(c.v[0].inside, 1);
	bg_protect_covers_free(&c);
	bg_list_free(&l);
	free(buf);
}

static void test_words(void **state)
{
	unsigned int n[BG_PROTECT_CONFIG + 1];
	char buf[256];

	(void)state;
	bg_protect_init(&S);
	add("192.0.2.1", BG_PROTECT_IFACE);
	add("2001:db8::1", BG_PROTECT_IFACE);
	add("192.0.2.53", BG_PROTECT_RESOLVER);
	add("10.0.0.0/8", BG_PROTECT_CONFIG);
	bg_protect_kinds(&S, n);
	bg_protect_summary(buf, sizeof(buf), n);
	assert_string_equal(buf, "4 addresses and prefixes: 2 addresses of the "
			    "attached interfaces, 1 resolver, 1 under protect:");
	n[0] = 0;
	bg_protect_summary(buf, sizeof(buf), n);
	assert_string_equal(buf, "none");
	setenv("BLOOMGATE_RESOLV_CONF", "/tmp/r.conf", 1);
	bg_protect_why(buf, sizeof(buf), &S.item[2]);
	assert_string_equal(buf, "a resolver in /tmp/r.conf");
	unsetenv("BLOOMGATE_RESOLV_CONF");
	bg_protect_why(buf, sizeof(buf), &S.item[3]);
	assert_string_equal(buf, "under protect: in the agent's config");
}

/* The agent's protect: key: a list of addresses and prefixes, read by
 * the lists' parser; errors with the file, line and item. */
static void test_config_key(void **state)
{
	static const char ok[] = "protect:\n  - 192.0.2.1\n  - 2001:db8::/48\n"
				 "lists:\n  - name: a\n    path: /a.txt\n";
	static const char one[] = "protect: 10.0.0.0/8\nlists:\n  - name: a\n"
				  "    path: /a.txt\n";
	static const char bad[] = "protect:\n  - 192.0.2.1\n  - 10.1.2.3/8\n"
				  "lists:\n  - name: a\n    path: /a.txt\n";
	static const char map[] = "protect:\n  a: 1\nlists:\n  - name: a\n"
				  "    path: /a.txt\n";
	struct bg_config c;
	char err[256];

	(void)state;
	if (bg_config_parse_buf("t.yaml", ok, sizeof(ok) - 1, &c, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(c.protect.n, 2);
	assert_int_equal(c.protect.v[0].kind, BG_PROTECT_CONFIG);
	assert_int_equal(c.protect.v[1].plen, 48);
	bg_config_free(&c);
	if (bg_config_parse_buf("t.yaml", one, sizeof(one) - 1, &c, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(c.protect.n, 1);
	bg_config_free(&c);
	assert_int_equal(bg_config_parse_buf("t.yaml", bad, sizeof(bad) - 1, &c, err,
					     sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.yaml:3: protect[1]: '10.1.2.3/8': host bits set: "
			    "an address, or a prefix with its host bits clear");
	assert_int_equal(bg_config_parse_buf("t.yaml", map, sizeof(map) - 1, &c, err,
					     sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.yaml:2: protect: expected a list of addresses and "
			    "prefixes, not a map");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_resolv),
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_covers),
		cmocka_unit_test(test_covers_bounded),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_config_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
