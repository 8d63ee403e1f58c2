// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A crowdsec: source's decisions (agent/crowdsec.h) without the engine
 * (tests/e2e/test_crowdsec.sh runs them against it): the copy written and
 * read back as the same set (a restart's), its lines parsed by the address
 * parser as the decisions' values, check's text of a line, expiry, the
 * count by origin, and the config's keys of such a source.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/config.h"
#include "agent/crowdsec.h"
#include "core/sources.h"

static struct bg_cs_decision dec(int64_t id, const char *v, const char *origin,
				 const char *scen, double until)
{
	struct bg_cs_decision d;

	memset(&d, 0, sizeof(d));
	d.id = id;
	snprintf(d.value, sizeof(d.value), "%s", v);
	snprintf(d.origin, sizeof(d.origin), "%s", origin);
	snprintf(d.scenario, sizeof(d.scenario), "%s", scen);
	d.until = until;
	return d;
}

static void test_copy_roundtrip(void **state)
{
	char path[] = "/tmp/bg-test-cs.XXXXXX", text[256];
	struct bg_cs_state a = { 0 }, b = { 0 };
	struct bg_cs_origin_count oc[BG_CS_ORIGINS_MAX];
	struct bg_source src = { .list = { .format = BG_FMT_ADDR } };
	struct bg_list_opts lo = { 0 };
	struct bg_blocklist bl;
	double now = 2e9;
	int fd, used;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	a.v = calloc(4, sizeof(*a.v));
	a.v[0] = dec(7, "192.0.2.7", "cscli", "manual 'ban' from 'x'", now + 3600);
	a.v[1] = dec(9, "198.51.100.0/24", "crowdsec", "crowdsecurity/ssh-bf", now + 60);
	a.v[2] = dec(12, "2001:db8::/48", "cscli", "# not a comment", now + 7200);
	a.v[3] = dec(15, "203.0.113.9", "CAPI", "gone", now - 1);
	a.n = a.cap = 4;
	a.version = 1;
	assert_int_equal(bg_cs_expire(&a, now), 1);
	assert_int_equal(a.n, 3);
	assert_int_equal(bg_cs_origins(&a, oc, BG_CS_ORIGINS_MAX), 2);
	assert_string_equal(oc[0].origin, "cscli");
	assert_int_equal(oc[0].n, 2);
	assert_int_equal(oc[1].n, 1);
	assert_int_equal(bg_cs_write(&a, path, "http://127.0.0.1:8080/"), 0);
	assert_int_equal(a.written, a.version);
	/* read back: the same decisions */
	assert_int_equal(bg_cs_read(&b, path), 0);
	assert_int_equal(b.n, 3);
	assert_memory_equal(a.v, b.v, 3 * sizeof(a.v[0]));
	/* the list parser reads the values, and only them */
	src.path = path;
	bg_blocklist_init(&bl);
	assert_int_equal(bg_source_parse(&src, &bl, &lo, &used), 0);
	bg_blocklist_finish(&bl);
	assert_int_equal(bl.block.n4, 2);
	assert_int_equal(bl.block.n6, 1);
	assert_int_equal(bl.block.rejected, 0);
	bg_blocklist_free(&bl);
	/* check's text of a line */
	assert_int_equal(bg_cs_line_text("198.51.100.0/24 # crowdsec decision 9 "
					 "origin=crowdsec until=2000000060 "
					 "scenario=crowdsecurity/ssh-bf", text,
					 sizeof(text)), 0);
	assert_string_equal(text, "crowdsec decision 9 (origin crowdsec, scenario "
				  "crowdsecurity/ssh-bf)");
	assert_int_equal(bg_cs_line_text("198.51.100.7 # a list's comment", text,
					 sizeof(text)), -1);
	unlink(path);
	/* a copy that is not there: an empty set */
	bg_cs_state_free(&b);
	assert_int_equal(bg_cs_read(&b, path), 0);
	assert_int_equal(b.n, 0);
	bg_cs_state_free(&a);
	bg_cs_state_free(&b);
}

static void test_config(void **state)
{
	static const char ok[] =
		"lists:\n"
		"  - name: cs\n"
		"    crowdsec: http://127.0.0.1:8080/\n"
		"    api_key_file: /etc/k\n"
		"    origins: [cscli, crowdsec]\n"
		"    scenarios_not_containing: http-probing\n";
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "lists:\n  - name: cs\n    crowdsec: http://x/\n",
		  "t.yaml:2: lists[0] (cs): a crowdsec: source needs api_key_file (the bouncer's key: cscli bouncers add NAME)" },
		{ "lists:\n  - name: cs\n    crowdsec: http://x/\n    api_key_file: /k\n    refresh: 1m\n",
		  "t.yaml:5: lists[0].refresh: not for a crowdsec: source (update_frequency)" },
		{ "lists:\n  - name: cs\n    crowdsec: http://x/\n    api_key_file: /k\n    scopes: [ip, country]\n",
		  "t.yaml:5: lists[0].scopes: 'country': ip and range are the scopes of an address (others are not enforced here)" },
		{ "lists:\n  - name: l\n    path: /l\n    origins: [cscli]\n",
		  "t.yaml:4: lists[0].origins: only a crowdsec: source has it" },
		{ "lists:\n  - name: cs\n    crowdsec: http://x/\n    api_key_file: /k\n    origins: [a b]\n",
		  "t.yaml:5: lists[0].origins: 'a b' is not a name (A-Z a-z 0-9 . _ / : -)" },
	};
	struct bg_config c;
	char err[512];
	size_t i;

	(void)state;
	assert_int_equal(bg_config_parse_buf("t.yaml", ok, strlen(ok), &c, err,
					     sizeof(err)), 0);
	assert_int_equal(c.lists[0].kind, BG_SRC_CROWDSEC);
	assert_true(c.lists[0].refresh == BG_CFG_CROWDSEC_EVERY);
	assert_int_equal(c.lists[0].list.format, BG_FMT_ADDR);
	assert_string_equal(c.lists[0].cs_origins, "cscli,crowdsec");
	assert_string_equal(c.lists[0].cs_scen_out, "http-probing");
	assert_null(c.lists[0].cs_scopes);
	bg_config_free(&c);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = bg_config_parse_buf("t.yaml", bad[i].text, strlen(bad[i].text),
					    &c, err, sizeof(err));

		if (r != -EINVAL || strcmp(err, bad[i].msg))
			fail_msg("case %zu: %d\n  got:  %s\n  want: %s", i, r, err,
				 bad[i].msg);
		bg_config_free(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_roundtrip),
		cmocka_unit_test(test_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
