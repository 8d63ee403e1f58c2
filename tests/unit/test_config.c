// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the agent's config (user/agent/config.c): the example shipped
 * in etc/ parses to what it says (so it cannot rot), the defaults of what
 * a config leaves out, every error with its exact one-line message and
 * line number, durations, sizes, the file-level errors of
 * bg_config_load() (missing file, too large), and the keys as
 * bg_config_keys() describes them (bloomgate.yaml(5)).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/config.h"
#include "core/filter.h"
#include "core/format.h"
#include "core/opts.h" /* bg_opt_size */

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Parses text as "t.yaml"; returns what bg_config_parse_buf() did. */
static int parse(const char *text, struct bg_config *c, char *err,
		 size_t errlen)
{
	return bg_config_parse_buf("t.yaml", text, strlen(text), c, err,
				   errlen);
}

/* The example next to the sources: __FILE__ is tests/unit/test_config.c
 * as the Makefile names it, relative to the top (where tests run) or not. */
static void example_path(char *buf, size_t len)
{
	const char *me = __FILE__, *tail = "tests/unit/test_config.c";
	size_t prefix = strlen(me) - strlen(tail);

	assert_string_equal(me + prefix, tail);
	snprintf(buf, len, "%.*setc/bloomgate.yaml", (int)prefix, me);
}

static void test_example_file(void **state)
{
	struct bg_config c;
	char path[PATH_MAX], err[256];
	const struct bg_cfg_list *l;
	(void)state;

	example_path(path, sizeof(path));
	if (bg_config_load(path, &c, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(c.file, path);

	assert_int_equal(c.n_ifaces, 1);
	assert_string_equal(c.ifaces[0].name, "eth0");
	assert_int_equal(c.ifaces[0].attach.mode, BG_MODE_NATIVE);
	assert_int_equal(c.ifaces[0].attach.match, BG_MATCH_DST);
	assert_int_equal(c.ifaces[0].attach.action, BG_ACTION_DROP);
	assert_int_equal(c.ifaces[0].attach.dns_action, BG_DNS_ACTION_NXDOMAIN);
	assert_int_equal(c.ifaces[0].attach.dns_ports[0], 0);
	assert_int_equal(c.ifaces[0].attach.unparsed, BG_UNPARSED_PASS);

	assert_true(c.fpr == BG_FPR_DEFAULT_CONFIRM);
	assert_int_equal(c.confirm, 1);
	assert_string_equal(c.state_dir, "/var/lib/bloomgate");
	assert_string_equal(c.metrics, "127.0.0.1:9571");
	assert_string_equal(c.events, "-");
	assert_int_equal(c.detach_on_stop, 0);
	assert_true(c.debounce == 0.5);

	assert_int_equal(c.n_lists, 4);
	l = &c.lists[0];
	assert_string_equal(l->list.name, "firehol");
	assert_string_equal(l->list.url,
			    "https://iplists.firehol.org/files/firehol_level1.netset");
	assert_null(l->list.path);
	assert_true(l->refresh == 3600);
	assert_int_equal(l->list.format, BG_FMT_AUTO);
	assert_int_equal(l->list.allow_wide, 1); /* FireHOL lists 224.0.0.0/3 */
	l = &c.lists[1];
	assert_string_equal(l->list.name, "local");
	assert_null(l->list.url);
	assert_string_equal(l->list.path, "/etc/bloomgate/local.txt");
	assert_true(l->refresh == 0);
	assert_int_equal(l->list.allow_wide, 0);
	l = &c.lists[2];
	assert_string_equal(l->list.name, "ads");
	assert_int_equal(l->list.format, BG_FMT_ADBLOCK);
	assert_int_equal(l->list.subdomains, 1);
	assert_int_equal(l->list.allow, 0);
	l = &c.lists[3];
	assert_string_equal(l->list.name, "ok");
	assert_string_equal(l->list.path, "/etc/bloomgate/allow.txt");
	assert_int_equal(l->list.allow, 1);
	assert_int_equal(l->list.subdomains, 0);
	bg_config_free(&c);
	assert_null(c.lists);
	bg_config_free(&c); /* twice: harmless */
}

/* The issue's example as written there (less its duplicated path: key,
 * which is an error, tested below), with the lines the structs record. */
static void test_issue_example(void **state)
{
	static const char text[] =
		"interfaces:\n" /* 1 */
		"  - name: eth0            # attach options\n"
		"    mode: native\n"
		"    match: dst\n"
		"    action: drop\n" /* 5 */
		"    dns_action: nxdomain\n"
		"fpr: 0.001\n"
		"state_dir: /var/lib/bloomgate\n"
		"metrics: 127.0.0.1:9571   # Prometheus\n"
		"lists:\n" /* 10 */
		"  - name: firehol\n"
		"    url: https://iplists.firehol.org/files/firehol_level1.netset\n"
		"    refresh: 1h           # s, m, h; jittered\n"
		"  - name: local\n"
		"    path: /etc/bloomgate/local.txt   # watched\n" /* 15 */
		"  - name: ads\n"
		"    path: /etc/bloomgate/ads.txt\n"
		"    format: adblock\n"
		"    subdomains: true\n"
		"  - name: ok\n" /* 20 */
		"    path: /etc/bloomgate/allow.txt\n"
		"    allow: true\n";
	struct bg_config c;
	char err[256] = "";
	(void)state;

	assert_int_equal(parse(text, &c, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(c.ifaces[0].line, 2);
	assert_int_equal(c.n_lists, 4);
	assert_int_equal(c.lists[0].line, 11);
	assert_int_equal(c.lists[1].line, 14);
	assert_int_equal(c.lists[2].line, 16);
	assert_int_equal(c.lists[3].line, 20);
	assert_null(c.events); /* absent: none */
	bg_config_free(&c);
}

/* The capacity's shape: grows by default; capacity alone is fixed; grow:
 * false without a capacity is a map of any size. */
static void test_capacity_shape(void **state)
{
	static const struct {
		const char *keys;
		unsigned long long capacity;
		int grow;
	} t[] = {
		{ "", 0, 1 },
		{ ", capacity: 5000", 5000, 0 },
		{ ", capacity: 5000, grow: true", 5000, 1 },
		{ ", grow: false", 0, 0 },
		{ ", grow: true", 0, 1 },
	};
	char text[256], err[256];
	struct bg_config c;
	size_t i;
	(void)state;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(text, sizeof(text), "interfaces:\n  - {name: lo%s}\n"
			 "lists:\n  - {name: a, path: /a}\n", t[i].keys);
		assert_int_equal(parse(text, &c, err, sizeof(err)), 0);
		assert_int_equal(c.ifaces[0].attach.capacity, t[i].capacity);
		assert_int_equal(c.ifaces[0].attach.grow, t[i].grow);
		bg_config_free(&c);
	}
}

static void test_defaults(void **state)
{
	struct bg_config c;
	char err[256];
	(void)state;

	assert_int_equal(parse("lists:\n"
			       "  - name: a\n"
			       "    url: http://127.0.0.1/a\n"
			       "  - name: b\n"
			       "    path: /b\n",
			       &c, err, sizeof(err)),
			 0);
	assert_string_equal(c.file, "t.yaml");
	assert_int_equal(c.n_ifaces, 0);
	assert_null(c.ifaces);
	assert_true(c.fpr == BG_FPR_DEFAULT_CONFIRM);
	assert_int_equal(c.confirm, 1);
	assert_string_equal(c.state_dir, BG_CFG_STATE_DIR);
	assert_null(c.metrics);
	assert_null(c.events);
	assert_int_equal(c.detach_on_stop, 0);
	assert_true(c.debounce == 0.5);
	assert_true(c.max_list_bytes == 4ull << 30);
	assert_true(c.max_entries == 100000000);
	assert_int_equal(c.n_lists, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct bg_cfg_list *l = &c.lists[i];

		assert_int_equal(l->list.format, BG_FMT_AUTO);
		assert_int_equal(l->list.subdomains, 0);
		assert_int_equal(l->list.allow, 0);
		assert_true(l->timeout == 30);
		assert_true(l->max_bytes == 512ull << 20);
		assert_true(l->max_shrink == 0.5);
	}
	assert_true(c.lists[0].refresh == 3600); /* a URL */
	assert_true(c.lists[1].refresh == 0); /* a path: watched */
	bg_config_free(&c);
	/* without the exact stage, the Bloom part's default target is lower */
	assert_int_equal(parse("confirm: false\nlists: [{name: a, path: /a}]\n", &c,
			       err, sizeof(err)),
			 0);
	assert_int_equal(c.confirm, 0);
	assert_true(c.fpr == BG_FPR_DEFAULT);
	bg_config_free(&c);
}

/* Every key given, with values other than the defaults. */
static void test_all_keys(void **state)
{
	static const char text[] =
		"interfaces:\n"
		"  - {name: veth-gw, mode: skb, match: both, action: flag,\n"
		"     dns_action: refused, dns_ports: [53, 5353, 853, 1053],\n"
		"     capacity: 2000000, grow: true, chain: true, unparsed: drop}\n"
		"  - name: lan0\n"
		"    match: src\n"
		"    dns_action: flag\n"
		"    dns_ports:\n"
		"      - 5300\n"
		"fpr: 1e-4\n"
		"confirm: no\n"
		"state_dir: '/srv/bg state'\n"
		"metrics: '[::1]:9571'\n"
		"events: /var/log/bloomgate/events.jsonl\n"
		"detach_on_stop: yes\n"
		"debounce: 2s\n"
		"max_list_bytes: 1G\n"
		"max_entries: 5000000\n"
		"lists:\n"
		"  - name: Big_list-1.v4\n"
		"    url: HTTPS://example.org/x?y=1\n"
		"    format: addr\n"
		"    refresh: 90m\n"
		"    timeout: 1.5m\n"
		"    max_bytes: 64M\n"
		"    max_shrink: 30%\n"
		"  - name: file\n"
		"    path: /etc/x\n"
		"    format: \"hosts\"\n"
		"    subdomains: True\n"
		"    allow: no\n"
		"    refresh: 1d\n"
		"    max_bytes: 1000\n"
		"    max_shrink: 1\n"
		"  - {name: al, path: /a, allow: true, format: auto}\n";
	struct bg_config c;
	char err[256] = "";
	const struct bg_cfg_list *l;
	(void)state;

	assert_int_equal(parse(text, &c, err, sizeof(err)), 0);
	assert_int_equal(c.n_ifaces, 2);
	assert_string_equal(c.ifaces[0].name, "veth-gw");
	assert_int_equal(c.ifaces[0].attach.mode, BG_MODE_SKB);
	assert_int_equal(c.ifaces[0].attach.match, BG_MATCH_BOTH);
	assert_int_equal(c.ifaces[0].attach.action, BG_ACTION_FLAG);
	assert_int_equal(c.ifaces[0].attach.dns_action, BG_DNS_ACTION_REFUSED);
	assert_int_equal(c.ifaces[0].attach.dns_ports[0], 53);
	assert_int_equal(c.ifaces[0].attach.dns_ports[1], 5353);
	assert_int_equal(c.ifaces[0].attach.dns_ports[2], 853);
	assert_int_equal(c.ifaces[0].attach.dns_ports[3], 1053);
	assert_string_equal(c.ifaces[1].name, "lan0");
	assert_int_equal(c.ifaces[1].line, 5);
	assert_int_equal(c.ifaces[1].attach.mode, BG_MODE_NATIVE);
	assert_int_equal(c.ifaces[1].attach.match, BG_MATCH_SRC);
	assert_int_equal(c.ifaces[1].attach.action, BG_ACTION_DROP);
	assert_int_equal(c.ifaces[1].attach.dns_action, BG_DNS_ACTION_FLAG);
	assert_int_equal(c.ifaces[1].attach.dns_ports[0], 5300);
	assert_int_equal(c.ifaces[1].attach.dns_ports[1], 0);
	assert_int_equal(c.ifaces[0].attach.capacity, 2000000);
	/* neither capacity nor grow: a capacity that grows, from the least */
	assert_int_equal(c.ifaces[1].attach.capacity, 0);
	assert_int_equal(c.ifaces[0].attach.grow, 1);
	assert_int_equal(c.ifaces[0].attach.chain, 1);
	assert_int_equal(c.ifaces[1].attach.grow, 1);
	assert_int_equal(c.ifaces[1].attach.chain, 0);
	assert_int_equal(c.ifaces[0].attach.unparsed, BG_UNPARSED_DROP);
	assert_int_equal(c.ifaces[1].attach.unparsed, BG_UNPARSED_PASS);
	assert_true(c.fpr == 1e-4);
	assert_int_equal(c.confirm, 0);
	assert_string_equal(c.state_dir, "/srv/bg state");
	assert_string_equal(c.metrics, "[::1]:9571");
	assert_string_equal(c.events, "/var/log/bloomgate/events.jsonl");
	assert_int_equal(c.detach_on_stop, 1);
	assert_true(c.debounce == 2);
	assert_true(c.max_list_bytes == 1ull << 30);
	assert_true(c.max_entries == 5000000);
	assert_int_equal(c.n_lists, 3);
	l = &c.lists[0];
	assert_string_equal(l->list.name, "Big_list-1.v4");
	assert_string_equal(l->list.url, "HTTPS://example.org/x?y=1");
	assert_int_equal(l->list.format, BG_FMT_ADDR);
	assert_true(l->refresh == 5400);
	assert_true(l->timeout == 90);
	assert_true(l->max_bytes == 64ull << 20);
	assert_true(fabs(l->max_shrink - 0.3) < 1e-12);
	l = &c.lists[1];
	assert_int_equal(l->list.format, BG_FMT_HOSTS);
	assert_int_equal(l->list.subdomains, 1);
	assert_int_equal(l->list.allow, 0);
	assert_true(l->refresh == 86400);
	assert_true(l->max_bytes == 1000);
	assert_true(l->max_shrink == 1);
	l = &c.lists[2];
	assert_int_equal(l->line, 35);
	assert_int_equal(l->list.allow, 1);
	assert_int_equal(l->list.format, BG_FMT_AUTO);
	bg_config_free(&c);
}

/* Values that are fine, each in a config of its own. */
static void test_accepted(void **state)
{
	static const char *const cases[] = {
		"interfaces:\nlists: [{name: a, path: /a}]\n",
		"interfaces: []\nlists: [{name: a, path: /a}]\n",
		"interfaces: ~\nlists: [{name: a, path: /a}]\n",
		"metrics:\nevents: null\nlists: [{name: a, path: /a}]\n",
		"metrics: localhost:9571\nlists: [{name: a, path: /a}]\n",
		"metrics: 0.0.0.0:1\nlists: [{name: a, path: /a}]\n",
		"events: '-'\nlists: [{name: a, path: /a}]\n",
		"debounce: 0\nlists: [{name: a, path: /a}]\n",
		"fpr: 0.5\nlists: [{name: a, path: /a}]\n",
		"---\nlists: [{name: a, path: /a}]\n...\n",
		"interfaces: [{name: 123456789012345}]\nlists: [{name: a, path: /a}]\n",
		"lists: [{name: a, path: /a, refresh: 10s}]\n",
		"lists: [{name: a, url: http://h, refresh: 0.1s}]\n",
		"lists: [{name: a, path: /a, max_shrink: 0}]\n",
		"lists: [{name: a, path: /a, max_shrink: 100%}]\n",
		"lists: [{name: a, path: /a, subdomains: false, format: addr}]\n",
		"lists:\n  - name: a\n    path: /a\n  - name: b\n    path: /a\n",
		"lists:\n- name: a\n  path: /a\n", /* sequence not indented */
	};
	struct bg_config c;
	char err[256];
	size_t i;
	(void)state;

	for (i = 0; i < N(cases); i++) {
		int r = parse(cases[i], &c, err, sizeof(err));

		if (r)
			fail_msg("case %zu: %s", i, err);
		bg_config_free(&c);
	}
}

struct err_case {
	const char *text;
	const char *msg; /* exact */
};

#define L1 "lists: [{name: a, path: /a}]\n"

static const struct err_case err_cases[] = {
	/* the file as a whole */
	{ "", "t.yaml: empty: a config needs at least lists:" },
	{ "# only a comment\n", "t.yaml: empty: a config needs at least lists:" },
	{ "fpr: 0.01\n", "t.yaml: no lists: the agent needs at least one (lists:), or an artifact: or a fleet:" },
	{ "- a\n- b\n",
	  "t.yaml:1: expected a map of keys (interfaces, fpr, confirm, state_dir, metrics, events, detach_on_stop, debounce, max_list_bytes, max_entries, protect, lists, artifact, fleet), not a list" },
	{ "hello\n",
	  "t.yaml:1: expected a map of keys (interfaces, fpr, confirm, state_dir, metrics, events, detach_on_stop, debounce, max_list_bytes, max_entries, protect, lists, artifact, fleet), not a single value" },
	{ L1 "---\n" L1,
	  "t.yaml:2: a second YAML document ('---'): a config is one document" },
	/* YAML syntax, from libyaml */
	{ "fpr: 0.01\nlists:\n  - name: a\n    path: /a\n   oops: 1\n",
	  "t.yaml:5: YAML: did not find expected '-' indicator while parsing a block collection" },
	{ "fpr: [0.01\n" L1,
	  "t.yaml:2: YAML: did not find expected ',' or ']' while parsing a flow sequence" },
	{ "lists:\n\t- name: a\n",
	  "t.yaml:2: YAML: found character that cannot start any token while scanning for the next token" },
	{ "fpr: 0.1\nlists:\n  - name: \"a\xff\"\n",
	  "t.yaml:3: YAML: invalid leading UTF-8 octet" },
	{ "events: -\n" L1,
	  "t.yaml:1: YAML: block sequence entries are not allowed in this context (a lone - as a value is written \"-\")" },
	/* keys */
	{ "fpr: 0.01\nfrp: 0.01\n" L1,
	  "t.yaml:2: unknown key 'frp' (interfaces, fpr, confirm, state_dir, metrics, events, detach_on_stop, debounce, max_list_bytes, max_entries, protect, lists, artifact, fleet)" },
	{ L1 "fpr: 0.01\nfpr: 0.02\n",
	  "t.yaml:3: fpr: given twice (first on line 2)" },
	{ "? [a, b]\n: 1\n" L1,
	  "t.yaml:1: a key must be a name, not a list" },
	{ "lists:\n  - name: a\n    path: /a\n    refrsh: 1h\n",
	  "t.yaml:4: lists[0]: unknown key 'refrsh' (name, url, path, format, subdomains, allow, refresh, timeout, max_bytes, max_shrink, allow_wide, crowdsec, api_key_file, update_frequency, origins, scopes, scenarios_containing, scenarios_not_containing, max_range_v4, max_range_v6)" },
	{ "lists:\n  - name: a\n    path: /a\n    path: /b\n",
	  "t.yaml:4: lists[0].path: given twice (first on line 3)" },
	{ "interfaces:\n  - name: eth0\n    mtu: 1500\n" L1,
	  "t.yaml:3: interfaces[0]: unknown key 'mtu' (name, mode, match, action, dns_action, dns_ports, capacity, grow, chain, unparsed)" },
	{ "interfaces:\n  - name: eth0\n    capacity: 0\n" L1,
	  "t.yaml:3: interfaces[0].capacity: '0' is not a whole number from 1 to 1e+09" },
	{ "interfaces:\n  - name: eth0\n    capacity: 1M\n" L1,
	  "t.yaml:3: interfaces[0].capacity: '1M' is not a whole number from 1 to 1e+09" },
	{ "interfaces:\n  - name: eth0\n    capacity: 1000000001\n" L1,
	  "t.yaml:3: interfaces[0].capacity: '1000000001' is not a whole number from 1 to 1e+09" },
	{ "interfaces:\n  - name: eth0\n    capacity: -5\n" L1,
	  "t.yaml:3: interfaces[0].capacity: '-5' is not a whole number from 1 to 1e+09" },
	/* anchors, aliases, tags */
	{ "lists:\n  - &x {name: a, path: /a}\n", "t.yaml:2: YAML anchors (&x) are not supported" },
	{ "p: &p /a\n" L1, "t.yaml:1: YAML anchors (&p) are not supported" },
	{ "lists:\n  - name: a\n    path: *p\n", "t.yaml:3: YAML aliases (*p) are not supported: write the value out" },
	{ "fpr: !!float 0.1\n" L1, "t.yaml:1: YAML tags (tag:yaml.org,2002:float) are not supported" },
	{ "lists:\n  - name: \"a\\0b\"\n    path: /a\n", "t.yaml:2: a value holds a NUL byte" },
	/* wrong YAML types */
	{ "lists:\n  name: a\n  path: /a\n",
	  "t.yaml:2: lists: expected a list of maps ('- name: ...'), not a map" },
	{ "lists:\n  - [a, /a]\n",
	  "t.yaml:2: lists[0]: expected a map of keys (name, url, path, format, subdomains, allow, refresh, timeout, max_bytes, max_shrink, allow_wide, crowdsec, api_key_file, update_frequency, origins, scopes, scenarios_containing, scenarios_not_containing, max_range_v4, max_range_v6), not a list" },
	{ "interfaces: eth0\n" L1,
	  "t.yaml:1: interfaces: expected a list of maps ('- name: ...'), not a single value" },
	{ "interfaces:\n  - eth0\n" L1,
	  "t.yaml:2: interfaces[0]: expected a map of keys (name, mode, match, action, dns_action, dns_ports, capacity, grow, chain, unparsed), not a single value" },
	{ "fpr:\n  - 0.1\n" L1, "t.yaml:2: fpr: expected a single value, not a list" },
	{ "lists:\n  - name: {a: 1}\n    path: /a\n",
	  "t.yaml:2: lists[0].name: expected a single value, not a map" },
	{ "state_dir:\n" L1, "t.yaml:1: state_dir: needs a value" },
	{ "lists:\n  - name: a\n    path: ~\n", "t.yaml:3: lists[0].path: needs a value" },
	/* lists */
	{ "lists:\n", "t.yaml:1: lists: no lists: the agent needs at least one" },
	{ "fpr: 0.1\nlists: []\n", "t.yaml:2: lists: no lists: the agent needs at least one" },
	{ "lists:\n  - path: /a\n", "t.yaml:2: lists[0]: needs a name" },
	{ "lists:\n  - name: a\n    path: /a\n  - name: b\n", "t.yaml:4: lists[1] (b): needs a url or a path" },
	{ "lists:\n  - name: a\n    url: http://h/a\n    path: /a\n",
	  "t.yaml:4: lists[0] (a): has both a url and a path: give one" },
	{ "lists:\n  - path: /a\n    name: a\n    url: http://h/a\n",
	  "t.yaml:4: lists[0] (a): has both a url and a path: give one" },
	{ "lists:\n  - name: a\n    path: /a\n  - name: b\n    path: /b\n  - name: a\n    path: /c\n",
	  "t.yaml:6: lists[2].name: 'a' is already the name of lists[0] (line 2)" },
	{ "lists:\n  - name: a\n    path: etc/a.txt\n",
	  "t.yaml:3: lists[0].path: 'etc/a.txt' is not an absolute path" },
	{ "lists:\n  - name: a\n    url: ftp://h/a\n",
	  "t.yaml:3: lists[0].url: 'ftp://h/a' is not an http:// or https:// URL" },
	{ "lists:\n  - name: a\n    url: http://\n",
	  "t.yaml:3: lists[0].url: 'http://' is not an http:// or https:// URL" },
	{ "lists:\n  - name: a\n    url: 'http://h/a b'\n",
	  "t.yaml:3: lists[0].url: 'http://h/a b' is not an http:// or https:// URL" },
	{ "lists:\n  - name: a/b\n    path: /a\n",
	  "t.yaml:2: lists[0].name: 'a/b' cannot be a file name: use 1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.'" },
	{ "lists:\n  - name: ..\n    path: /a\n",
	  "t.yaml:2: lists[0].name: '..' cannot be a file name: use 1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.'" },
	{ "lists:\n  - name: ''\n    path: /a\n",
	  "t.yaml:2: lists[0].name: '' cannot be a file name: use 1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.'" },
	{ "lists:\n  - name: x12345678901234567890123456789012345678901234567890123456789012345\n    path: /a\n",
	  "t.yaml:2: lists[0].name: 'x12345678901234567890123456789012345678901234567890123456789012345' cannot be a file name: use 1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.'" },
	{ "lists:\n  - name: a\n    path: /a\n    refresh: 1x\n",
	  "t.yaml:4: lists[0].refresh: '1x' is not a duration (a number with ms, s, m, h or d)" },
	{ "lists:\n  - name: a\n    path: /a\n    refresh: 31d\n",
	  "t.yaml:4: lists[0].refresh: 31d is out of range (0..2592000 s)" },
	{ "lists:\n  - name: a\n    url: http://h/a\n    refresh: 0s\n",
	  "t.yaml:4: lists[0].refresh: a URL needs an interval above 0" },
	{ "lists:\n  - name: a\n    url: http://h/a\n    timeout: 0\n",
	  "t.yaml:4: lists[0].timeout: 0 is out of range (above 0..86400 s)" },
	{ "lists:\n  - name: a\n    path: /a\n    timeout: 5s\n",
	  "t.yaml:4: lists[0].timeout: only a URL is fetched with a timeout" },
	{ "lists:\n  - name: a\n    path: /a\n    max_bytes: 10k\n",
	  "t.yaml:4: lists[0].max_bytes: '10k' is not a size above 0 (bytes, or with K, M, G)" },
	{ "lists:\n  - name: a\n    path: /a\n    max_bytes: 0\n",
	  "t.yaml:4: lists[0].max_bytes: '0' is not a size above 0 (bytes, or with K, M, G)" },
	{ "lists:\n  - name: a\n    path: /a\n    max_shrink: 1.5\n",
	  "t.yaml:4: lists[0].max_shrink: '1.5' is not a share from 0 to 1 (or 0% to 100%)" },
	{ "lists:\n  - name: a\n    path: /a\n    max_shrink: 120%\n",
	  "t.yaml:4: lists[0].max_shrink: '120%' is not a share from 0 to 1 (or 0% to 100%)" },
	{ "lists:\n  - name: a\n    path: /a\n    format: csv\n",
	  "t.yaml:4: lists[0].format: unknown format 'csv' (auto, addr, plain, hosts, adblock)" },
	{ "lists:\n  - name: a\n    path: /a\n    allow: maybe\n",
	  "t.yaml:4: lists[0].allow: 'maybe' is not true, false, yes or no" },
	{ "lists:\n  - name: a\n    path: /a\n    format: addr\n    subdomains: yes\n",
	  "t.yaml:5: lists[0].subdomains: an addr list has no names" },
	{ "lists:\n  - name: a\n    path: /a\n    format: hosts\n    allow_wide: yes\n",
	  "t.yaml:5: lists[0].allow_wide: a hosts list has no prefixes" },
	{ "lists:\n  - name: a\n    path: /a\n    allow_wide: 1\n",
	  "t.yaml:4: lists[0].allow_wide: '1' is not true, false, yes or no" },
	{ "lists:\n  - name: a\n    path: /a\n    allow: true\n",
	  "t.yaml:1: lists: every list is an allowlist: nothing would be blocked" },
	/* interfaces */
	{ "interfaces:\n  - name: a-very-long-ifname\n" L1,
	  "t.yaml:2: interfaces[0].name: 'a-very-long-ifname' is too long for an interface name (18 bytes, at most 15)" },
	{ "interfaces:\n  - name: eth/0\n" L1,
	  "t.yaml:2: interfaces[0].name: 'eth/0' is not an interface name" },
	{ "interfaces:\n  - mode: skb\n" L1, "t.yaml:2: interfaces[0]: needs a name" },
	{ "interfaces:\n  - name: eth0\n  - name: eth1\n  - name: eth0\n" L1,
	  "t.yaml:4: interfaces[2].name: 'eth0' is already interfaces[0] (line 2)" },
	{ "interfaces:\n  - name: eth0\n    mode: generic\n" L1,
	  "t.yaml:3: interfaces[0].mode: unknown value 'generic' (native, skb)" },
	{ "interfaces:\n  - name: eth0\n    match: any\n" L1,
	  "t.yaml:3: interfaces[0].match: unknown value 'any' (dst, src, both)" },
	{ "interfaces:\n  - name: eth0\n    action: reject\n" L1,
	  "t.yaml:3: interfaces[0].action: unknown value 'reject' (drop, flag)" },
	{ "interfaces:\n  - name: eth0\n    dns_action: servfail\n" L1,
	  "t.yaml:3: interfaces[0].dns_action: unknown value 'servfail' (drop, flag, nxdomain, refused)" },
	{ "interfaces:\n  - name: eth0\n    unparsed: reject\n" L1,
	  "t.yaml:3: interfaces[0].unparsed: unknown value 'reject' (pass, drop)" },
	{ "interfaces:\n  - name: eth0\n    dns_ports: 53\n" L1,
	  "t.yaml:3: interfaces[0].dns_ports: expected a list of ports ([53, 5353]), not a single value" },
	{ "interfaces:\n  - name: eth0\n    dns_ports: []\n" L1,
	  "t.yaml:3: interfaces[0].dns_ports: an empty list (leave the key out for port 53)" },
	{ "interfaces:\n  - name: eth0\n    dns_ports:\n      - 1\n      - 2\n      - 3\n      - 4\n      - 5\n" L1,
	  "t.yaml:8: interfaces[0].dns_ports: more than 4 ports" },
	{ "interfaces:\n  - name: eth0\n    dns_ports: [53, 65536]\n" L1,
	  "t.yaml:3: interfaces[0].dns_ports[1]: '65536' is not a port (1..65535)" },
	{ "interfaces:\n  - name: eth0\n    dns_ports:\n      - 53\n      - 0\n" L1,
	  "t.yaml:5: interfaces[0].dns_ports[1]: '0' is not a port (1..65535)" },
	{ "interfaces:\n  - name: eth0\n    dns_ports: [53, 1K]\n" L1,
	  "t.yaml:3: interfaces[0].dns_ports[1]: '1K' is not a port (1..65535)" },
	{ "interfaces:\n  - name: eth0\n    dns_ports: [53, 53]\n" L1,
	  "t.yaml:3: interfaces[0].dns_ports[1]: port 53 given twice" },
	/* top-level values */
	{ "fpr: 0.9\n" L1, "t.yaml:1: fpr: 0.9 is out of range (1e-09..0.5)" },
	{ "fpr: 0x1p-4\n" L1, "t.yaml:1: fpr: '0x1p-4' is not a number" },
	{ "fpr: .nan\n" L1, "t.yaml:1: fpr: '.nan' is not a number" },
	{ "state_dir: var/lib\n" L1, "t.yaml:1: state_dir: 'var/lib' is not an absolute path" },
	{ "events: events.jsonl\n" L1,
	  "t.yaml:1: events: 'events.jsonl' is not an absolute path (or - for stdout)" },
	{ "metrics: 9571\n" L1, "t.yaml:1: metrics: '9571' is not HOST:PORT (no :PORT)" },
	{ "metrics: ':9571'\n" L1, "t.yaml:1: metrics: ':9571' is not HOST:PORT (no host)" },
	{ "metrics: 127.0.0.1:http\n" L1,
	  "t.yaml:1: metrics: '127.0.0.1:http' is not HOST:PORT (the port is not a number)" },
	{ "metrics: 127.0.0.1:70000\n" L1,
	  "t.yaml:1: metrics: '127.0.0.1:70000' is not HOST:PORT (the port is not 1..65535)" },
	{ "metrics: 127.0.0.256:80\n" L1,
	  "t.yaml:1: metrics: '127.0.0.256:80' is not HOST:PORT (not an IPv4 address)" },
	{ "metrics: ::1:9571\n" L1,
	  "t.yaml:1: metrics: '::1:9571' is not HOST:PORT (an IPv6 address needs brackets: [::1]:9571)" },
	{ "metrics: '[::g]:9571'\n" L1,
	  "t.yaml:1: metrics: '[::g]:9571' is not HOST:PORT (not an IPv6 address)" },
	{ "metrics: '[::1]9571'\n" L1,
	  "t.yaml:1: metrics: '[::1]9571' is not HOST:PORT (an IPv6 address is written [ADDR]:PORT)" },
	{ "metrics: 'my host:80'\n" L1,
	  "t.yaml:1: metrics: 'my host:80' is not HOST:PORT (an IPv4 address, [IPv6] or localhost: names are not looked up)" },
	/* documented once, refused only when the agent started: now at once */
	{ "metrics: gw-1.example.org:65535\n" L1,
	  "t.yaml:1: metrics: 'gw-1.example.org:65535' is not HOST:PORT (an IPv4 address, [IPv6] or localhost: names are not looked up)" },
	{ "detach_on_stop: on\n" L1,
	  "t.yaml:1: detach_on_stop: 'on' is not true, false, yes or no" },
	{ "debounce: -1s\n" L1,
	  "t.yaml:1: debounce: '-1s' is not a duration (a number with ms, s, m, h or d)" },
	{ "debounce: 2h\n" L1, "t.yaml:1: debounce: 2h is out of range (0..3600 s)" },
	/* a value quoted on one line, and cut */
	{ "fpr: \"a\\nb\"\n" L1, "t.yaml:1: fpr: 'a\\x0ab' is not a number" },
};

static void test_errors(void **state)
{
	struct bg_config c;
	char err[512];
	size_t i;
	(void)state;

	for (i = 0; i < N(err_cases); i++) {
		int r;

		memset(&c, 0xa5, sizeof(c)); /* must be left empty */
		strcpy(err, "untouched");
		r = parse(err_cases[i].text, &c, err, sizeof(err));
		if (r != -EINVAL || strcmp(err, err_cases[i].msg))
			fail_msg("case %zu: returned %d\n  got:  %s\n  want: %s",
				 i, r, err, err_cases[i].msg);
		assert_null(c.lists);
		assert_null(c.ifaces);
		assert_null(c.file);
		assert_int_equal(c.n_lists, 0);
		bg_config_free(&c);
	}
}

/* artifact: and fleet: make one source each, of their kind, with their
 * defaults; they exclude lists: and each other; a fleet's origin is kept
 * without the password. */
static void test_artifact_fleet(void **state)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "artifact:\n  url: http://x/a.bga\nlists:\n  - name: a\n    path: /a\n",
		  "t.yaml:3: lists:, artifact: and fleet: exclude each other: a gateway builds its filter from lists, or loads one built elsewhere" },
		{ "fleet:\n  db: postgresql:///x\nartifact:\n  path: /a.bga\n",
		  "t.yaml:3: lists:, artifact: and fleet: exclude each other: a gateway builds its filter from lists, or loads one built elsewhere" },
		{ "artifact:\n  refresh: 1m\n", "t.yaml:1: artifact: needs a url or a path" },
		{ "artifact:\n  path: /a\n  url: http://x/a\n",
		  "t.yaml:1: artifact: has both a url and a path: give one" },
		{ "artifact:\n  path: a.bga\n",
		  "t.yaml:2: artifact.path: 'a.bga' is not an absolute path" },
		{ "artifact:\n  path: /a\n  format: addr\n",
		  "t.yaml:3: artifact: unknown key 'format' (url, path, refresh, timeout, max_bytes)" },
		{ "fleet:\n  gateway: gw1\n", "t.yaml:1: fleet: needs db (the store's connection string)" },
		{ "fleet:\n  db: mysql://x\n",
		  "t.yaml:2: fleet.db: not a postgresql:// URL nor a key=value connection string" },
		{ "fleet:\n  db: postgresql:///x\n  gateway: a/b\n",
		  "t.yaml:3: fleet.gateway: 'a/b' cannot be a file name: use 1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.'" },
		{ "fleet:\n  db: postgresql:///x\n  poll: 0s\n",
		  "t.yaml:3: fleet.poll: 0s is out of range (above 0..86400 s)" },
		{ "fleet:\n  db: postgresql:///x\n  allow_rollback: maybe\n",
		  "t.yaml:3: fleet.allow_rollback: 'maybe' is not true, false, yes or no" },
	};
	struct bg_config c;
	char err[512];
	size_t i;
	(void)state;

	assert_int_equal(parse("artifact:\n  url: https://p.example/f.bga\n", &c, err,
			       sizeof(err)), 0);
	assert_int_equal(c.n_lists, 1);
	assert_int_equal(c.lists[0].kind, BG_SRC_ARTIFACT);
	assert_string_equal(c.lists[0].list.name, BG_CFG_ARTIFACT_NAME);
	assert_string_equal(c.lists[0].list.url, "https://p.example/f.bga");
	assert_true(c.lists[0].refresh == BG_CFG_URL_REFRESH);
	assert_true(c.lists[0].max_bytes == BG_CFG_ARTIFACT_MAX_BYTES);
	assert_null(c.fleet.db);
	bg_config_free(&c);

	assert_int_equal(parse("artifact:\n  path: /srv/f.bga\n", &c, err,
			       sizeof(err)), 0);
	assert_string_equal(c.lists[0].list.path, "/srv/f.bga");
	assert_true(c.lists[0].refresh == 0); /* watched */
	bg_config_free(&c);

	assert_int_equal(parse("fleet:\n  db: postgresql://u:s3cret@db/x\n"
			       "  gateway: gw-1\n  poll: 30s\n  report: 5s\n",
			       &c, err, sizeof(err)), 0);
	assert_int_equal(c.n_lists, 1);
	assert_int_equal(c.lists[0].kind, BG_SRC_FLEET);
	assert_string_equal(c.lists[0].list.name, BG_CFG_FLEET_NAME);
	assert_string_equal(c.fleet.db, "postgresql://u:s3cret@db/x");
	assert_null(strstr(c.lists[0].list.url, "s3cret"));
	assert_string_equal(c.fleet.gateway, "gw-1");
	assert_true(c.fleet.poll == 30 && c.lists[0].refresh == 30);
	assert_true(c.fleet.report == 5);
	assert_int_equal(c.fleet.allow_rollback, 0); /* refused by default */
	bg_config_free(&c);

	assert_int_equal(parse("fleet:\n  db: postgresql:///x\n  allow_rollback: true\n",
			       &c, err, sizeof(err)), 0);
	assert_int_equal(c.fleet.allow_rollback, 1);
	bg_config_free(&c);

	assert_int_equal(parse("fleet:\n  db: host=/run/pg dbname=x\n", &c, err,
			       sizeof(err)), 0);
	assert_true(c.fleet.poll == BG_CFG_FLEET_POLL);
	assert_true(c.fleet.report == BG_CFG_FLEET_REPORT);
	assert_non_null(c.fleet.gateway); /* the host name */
	assert_true(strlen(c.fleet.gateway) > 0);
	bg_config_free(&c);

	for (i = 0; i < N(bad); i++) {
		int r = parse(bad[i].text, &c, err, sizeof(err));

		if (r != -EINVAL || strcmp(err, bad[i].msg))
			fail_msg("case %zu: returned %d\n  got:  %s\n  want: %s", i, r,
				 err, bad[i].msg);
		assert_null(c.lists);
		bg_config_free(&c);
	}
}

/* An error message never has a newline, and stays within errlen. */
static void test_error_truncation(void **state)
{
	struct bg_config c;
	char err[24];
	(void)state;

	assert_int_equal(parse("frp: 1\n" L1, &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.yaml:1: unknown key '");
	/* errlen 0 and err NULL are allowed */
	assert_int_equal(parse("frp: 1\n" L1, &c, NULL, 0), -EINVAL);
	/* a long value is cut with "..." */
	{
		char text[1024], big[512];

		memset(big, 'x', 300);
		big[300] = '\0';
		snprintf(text, sizeof(text), "fpr: %s\n" L1, big);
		assert_int_equal(parse(text, &c, big, sizeof(big)), -EINVAL);
		assert_int_equal(strncmp(big, "t.yaml:1: fpr: 'xxx", 19), 0);
		/* 88 bytes of the value, then "..." */
		assert_string_equal(big + 16 + 88, "...' is not a number");
	}
}

/* ---- bg_config_keys(): what bloomgate.yaml(5) is generated from ---- */

struct keys_seen {
	size_t n, in_section[5];
	char sections[5][16];
	size_t n_sections;
};

/* A config with KEY: VALUE in section sec, the rest minimal, in buf: the
 * variant-th way to write that section (a path list, a URL list, a
 * crowdsec list...); 0 when there is no such variant. */
static int with_key(char *buf, size_t len, const struct bg_config_key *k,
		    int variant)
{
	if (!*k->section && !variant)
		return snprintf(buf, len, "%s: %s\n" L1, k->key, k->def) > 0;
	if (!strcmp(k->section, "interfaces") && !variant)
		return snprintf(buf, len, "interfaces:\n  - name: eth0\n    %s: %s\n" L1,
				k->key, k->def) > 0;
	if (!strcmp(k->section, "lists") && variant < 3)
		return snprintf(buf, len, "lists:\n  - name: a\n    %s\n    %s: %s\n",
				variant == 0 ? "path: /a" :
				variant == 1 ? "url: http://example.com/a" :
				"crowdsec: http://127.0.0.1:8080\n    api_key_file: /k",
				k->key, k->def) > 0;
	if (!strcmp(k->section, "artifact") && variant < 2)
		return snprintf(buf, len, "artifact:\n  %s\n  %s: %s\n",
				variant ? "url: http://example.com/a" : "path: /a",
				k->key, k->def) > 0;
	if (!strcmp(k->section, "fleet") && !variant)
		return snprintf(buf, len, "fleet:\n  db: postgresql://h/db\n  %s: %s\n",
				k->key, k->def) > 0;
	return 0;
}

static void key_seen(void *ctx, const struct bg_config_key *k)
{
	struct keys_seen *s = ctx;
	struct bg_config c;
	char text[512], err[512], probe[256];
	size_t i;
	int v, ok = 0;

	s->n++;
	/* every key says what it is */
	assert_non_null(k->help);
	assert_true(strlen(k->help) > 8);
	assert_string_not_equal(k->type, "?");
	assert_true(!strcmp(k->type, "one of") == !!k->names[0]);
	/* the sections in order, each once */
	for (i = 0; i < s->n_sections && strcmp(s->sections[i], k->section); i++)
		;
	if (i == s->n_sections) {
		assert_true(i < 5);
		snprintf(s->sections[s->n_sections++], sizeof(s->sections[0]), "%s",
			 k->section);
	} else {
		assert_int_equal(i, s->n_sections - 1);
	}
	s->in_section[i]++;
	/* the parser knows the key in that section: its error for an unknown
	 * key lists the section's keys */
	snprintf(probe, sizeof(probe), "%s",
		 !*k->section ? "bogus_key: 1\n" L1 :
		 !strcmp(k->section, "interfaces") ? "interfaces: [{name: x, bogus_key: 1}]\n" L1 :
		 !strcmp(k->section, "lists") ? "lists: [{name: x, bogus_key: 1}]\n" :
		 !strcmp(k->section, "artifact") ? "artifact: {bogus_key: 1}\n" :
		 "fleet: {bogus_key: 1}\n");
	assert_int_equal(parse(probe, &c, err, sizeof(err)), -EINVAL);
	{
		char list[512];
		const char *open = strchr(err, '(');

		assert_non_null(open);
		snprintf(list, sizeof(list), " %s", open + 1);
		list[strlen(list) - 1] = ','; /* the closing ')' */
		snprintf(text, sizeof(text), " %s,", k->key);
		if (!strstr(list, text))
			fail_msg("%s.%s: not among the parser's keys: %s", k->section,
				 k->key, err);
	}
	/* a default, written as the page gives it, is a valid value: it is
	 * what the config would say (durations, sizes, [53]) */
	if (!k->def[0] || strchr(k->def, ' '))
		return;
	for (v = 0; !ok && with_key(text, sizeof(text), k, v); v++) {
		ok = !parse(text, &c, err, sizeof(err));
		bg_config_free(&c);
	}
	if (!ok)
		fail_msg("%s.%s: default '%s' does not parse: %s", k->section, k->key,
			 k->def, err);
}

static void test_keys(void **state)
{
	struct keys_seen s = { 0 };
	(void)state;

	assert_int_equal(bg_config_keys(key_seen, &s), 0);
	assert_int_equal(s.n_sections, 5);
	assert_string_equal(s.sections[0], "");
	assert_string_equal(s.sections[1], "interfaces");
	assert_string_equal(s.sections[2], "lists");
	assert_string_equal(s.sections[3], "artifact");
	assert_string_equal(s.sections[4], "fleet");
	/* as many as the parser names in its errors (test_errors) */
	assert_int_equal(s.in_section[0], 14);
	assert_int_equal(s.in_section[1], 10);
	assert_int_equal(s.in_section[2], 20);
	assert_int_equal(s.in_section[3], 5);
	assert_int_equal(s.in_section[4], 5);
}

static void test_duration(void **state)
{
	static const struct {
		const char *s;
		double want;
	} cases[] = {
		{ "0", 0 },	    { "90", 90 },	 { "90s", 90 },
		{ "1m", 60 },	    { "1h", 3600 },	 { "2d", 172800 },
		{ "1.5h", 5400 },   { "500ms", 0.5 },	 { "0.25s", 0.25 },
		{ "10.5m", 630 },   { "", -1 },		 { "h", -1 },
		{ "1x", -1 },	    { "1H", -1 },	 { "-1s", -1 },
		{ "+1s", -1 },	    { " 1s", -1 },	 { "1s ", -1 },
		{ "1 s", -1 },	    { ".5s", -1 },	 { "1.s", -1 },
		{ "1e3", -1 },	    { "0x10", -1 },	 { "inf", -1 },
		{ "nan", -1 },	    { "1hh", -1 },	 { "1ms5", -1 },
	};
	char huge[400];
	size_t i;
	(void)state;

	for (i = 0; i < N(cases); i++) {
		double got = bg_config_duration(cases[i].s);

		if (fabs(got - cases[i].want) > 1e-9)
			fail_msg("'%s': got %g, want %g", cases[i].s, got,
				 cases[i].want);
	}
	assert_true(bg_config_duration(NULL) == -1);
	memset(huge, '9', sizeof(huge) - 2);
	huge[sizeof(huge) - 2] = 'd';
	huge[sizeof(huge) - 1] = '\0';
	assert_true(bg_config_duration(huge) == -1); /* overflows to inf */
}

static void test_size(void **state)
{
	static const struct {
		const char *s;
		int ret;
		uint64_t want;
	} cases[] = {
		{ "0", 0, 0 },
		{ "1000", 0, 1000 },
		{ "10K", 0, 10240 },
		{ "64M", 0, 64ull << 20 },
		{ "2G", 0, 2ull << 30 },
		{ "512M", 0, BG_CFG_MAX_BYTES },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", -1, 0 },
		{ "17179869183G", 0, 17179869183ull << 30 },
		{ "17179869184G", -1, 0 },
		{ "", -1, 0 },
		{ "K", -1, 0 },
		{ "10k", -1, 0 },
		{ "10KB", -1, 0 },
		{ "10T", -1, 0 },
		{ "1.5M", -1, 0 },
		{ "-1", -1, 0 },
		{ " 1", -1, 0 },
		{ "1 K", -1, 0 },
	};
	size_t i;
	(void)state;

	for (i = 0; i < N(cases); i++) {
		uint64_t got = 777;
		int r = bg_opt_size(cases[i].s, &got);

		if (r != cases[i].ret || got != (r ? 777 : cases[i].want))
			fail_msg("'%s': got %d, %llu", cases[i].s, r,
				 (unsigned long long)got);
	}
}

static void test_load_errors(void **state)
{
	struct bg_config c;
	char err[256], path[] = "/tmp/bg-test-config.XXXXXX";
	FILE *f;
	int fd;
	(void)state;

	assert_int_equal(bg_config_load("/nonexistent/bloomgate.yaml", &c, err,
					 sizeof(err)),
			 -ENOENT);
	assert_string_equal(err,
			    "/nonexistent/bloomgate.yaml: No such file or directory");
	assert_null(c.file);

	/* A file's errors carry its name; one over the size cap is refused
	 * before it is parsed. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("lists:\n  - name: a\n    path: rel\n", f);
	fclose(f);
	assert_int_equal(bg_config_load(path, &c, err, sizeof(err)), -EINVAL);
	{
		char want[256];

		snprintf(want, sizeof(want),
			 "%s:3: lists[0].path: 'rel' is not an absolute path",
			 path);
		assert_string_equal(err, want);
	}
	assert_int_equal(truncate(path, BG_CFG_FILE_MAX + 1), 0);
	assert_int_equal(bg_config_load(path, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ": larger than 1048576 bytes: not a config"));
	unlink(path);

	/* Read like a list: a FIFO in its place would hang a reload, a
	 * device never ends; both refused at once, as is a directory. */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(bg_config_load(path, &c, err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, ": a FIFO, not a regular file"));
	unlink(path);
	assert_int_equal(bg_config_load("/dev/zero", &c, err, sizeof(err)), -ENOTSUP);
	assert_string_equal(err, "/dev/zero: a character device, not a regular file");
	assert_int_equal(bg_config_load("/tmp", &c, err, sizeof(err)), -EISDIR);
	assert_string_equal(err, "/tmp: a directory, not a regular file");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_file),
		cmocka_unit_test(test_issue_example),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_capacity_shape),
		cmocka_unit_test(test_all_keys),
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_artifact_fleet),
		cmocka_unit_test(test_error_truncation),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_load_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
