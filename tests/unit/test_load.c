// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the core of the load pipeline and of check: the report of
 * bg_load_prepare() (counts, diagnostics with file:line, the failed stage)
 * and the structured answer of bg_explain() on a filter built in memory.
 * Nothing here touches the kernel: this links the core library only.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "bloomgate/bloom.h"
#include "core/attach_opts.h"
#include "core/domains.h"
#include "core/explain.h"
#include "core/filter.h"
#include "core/lists.h"
#include "core/prepare.h"
#include "core/print.h"

static char dir[] = "/tmp/bg-test-load.XXXXXX";

static const char *write_list(const char *name, const char *text)
{
	static char path[8][256];
	static int next;
	char *p = path[next++ % 8];
	FILE *f;

	snprintf(p, 256, "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* Diagnostics seen by the caller's callback, one line each. */
struct seen {
	char text[4096];
	size_t len;
	int n;
};

static void on_diag(void *ctx, const struct bg_diag *d)
{
	struct seen *s = ctx;
	FILE *f = fmemopen(s->text + s->len, sizeof(s->text) - s->len, "w");

	assert_non_null(f);
	bg_diag_print(f, d);
	s->len += (size_t)ftell(f);
	fclose(f);
	s->n++;
}

static void add(struct bg_sources *s, const char *path, const char *fmt,
		int subdomains, int allow)
{
	if (fmt)
		assert_int_equal(bg_sources_set_format(s, fmt), 0);
	bg_sources_set_subdomains(s, subdomains);
	assert_int_equal(bg_sources_add(s, path, allow), 0);
}

/* Addresses, names and allow lists in one load: every count of the report. */
static void test_prepare_report(void **state)
{
	const char *a = write_list("a.txt",
				   "192.0.2.1\n10.0.0.0/8\n10.1.2.3\n192.0.2.1\n"
				   "bogus\n10.1.2.3/8\n2001:db8::/32\n");
	const char *d = write_list("d.txt", "||ads.example.com^\n"
					    "@@||ok.ads.example.com^\n"
					    "|exact.example.org^\n");
	const char *al = write_list("al.txt", "192.0.2.1\n");
	const char *an = write_list("an.txt", "fine.example.net\n");
	struct bg_sources srcs;
	struct bg_blocklist bl;
	struct bg_load_report r;
	struct seen seen = { .len = 0 };
	struct bg_load_opts o = { .fpr = 0.01, .diag = on_diag,
				  .diag_ctx = &seen };

	(void)state;
	bg_sources_init(&srcs);
	add(&srcs, a, NULL, 0, 0);
	add(&srcs, d, NULL, 0, 0);
	add(&srcs, al, NULL, 0, 1);
	add(&srcs, an, "plain", 0, 1);
	o.sources = &srcs;
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), 0);
	assert_int_equal(r.failed, BG_STAGE_NONE);

	/* formats used, written back for the record */
	assert_int_equal(srcs.v[0].list.format, BG_FMT_ADDR);
	assert_int_equal(srcs.v[1].list.format, BG_FMT_ADBLOCK);
	assert_int_equal(srcs.v[2].list.format, BG_FMT_ADDR);
	assert_int_equal(srcs.v[3].list.format, BG_FMT_PLAIN);
	assert_int_equal(r.n_addr, 2);
	assert_int_equal(r.n_addr_allow, 1);
	assert_int_equal(r.n_dom, 2);
	assert_int_equal(r.n_allow, 2);

	/* addresses: 6 accepted (one with host bits), 1 rejected, 1 duplicate,
	 * 10.1.2.3 inside 10.0.0.0/8 */
	assert_int_equal(r.block.accepted, 6);
	assert_int_equal(r.block.rejected, 1);
	assert_int_equal(r.block.warnings, 1);
	assert_int_equal(r.block.duplicates, 2); /* 192.0.2.1, 10.0.0.0/8 */
	assert_int_equal(r.block.covered, 1);
	assert_int_equal(r.block.n4, 2);
	assert_int_equal(r.block.n6, 1);
	assert_null(r.block.v4); /* counters only */
	assert_int_equal(r.allow.n4, 1);

	/* names, by what they do */
	assert_int_equal(r.rules.subs, 1);
	assert_int_equal(r.rules.exact, 1);
	assert_int_equal(r.rules.allow_rules, 1);
	assert_int_equal(r.rules.allow_listed, 1);
	assert_int_equal(r.entries, 3 + 2);

	/* diagnostics: counted, kept with file:line, and passed on */
	assert_int_equal(r.n_errors, 1);
	assert_int_equal(r.n_warnings, 1);
	assert_int_equal(r.n_diags, 2);
	assert_int_equal(seen.n, 2);
	assert_string_equal(r.diags[0].file, a);
	assert_int_equal(r.diags[0].line, 5);
	assert_string_equal(r.diags[0].reason, "not an IP address");
	assert_string_equal(r.diags[0].text, "bogus");
	assert_int_equal(r.diags[1].line, 6);
	assert_true(r.diags[1].warning);
	assert_non_null(strstr(seen.text, ":5: not an IP address: 'bogus'\n"));
	assert_non_null(strstr(seen.text, ":6: warning: host bits set, using 10.0.0.0/8: '10.1.2.3/8'\n"));

	/* the plan: names and both families, at the target asked for */
	assert_true(r.plan.nblocks > 0);
	assert_int_equal(r.plan.name_keys, 2 + 1);
	assert_true(r.plan.predicted_addr <= 0.01);
	assert_true(r.ms[BG_STAGE_PARSE] >= 0);

	bg_blocklist_free(&bl);
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
}

/* Each stage that can fail before the kernel says so, with the message the
 * CLI prints. */
static void test_prepare_failures(void **state)
{
	const char *bad = write_list("bad.txt", "192.0.2.1\nnot-an-address\n");
	const char *empty = write_list("empty.txt", "# nothing\n");
	const char *deep = write_list("deep.txt",
				      "||a.b.c.d.e.f.g.h.i.j.k.example^\n");
	char missing[300];
	struct {
		const char *path, *fmt;
		int strict;
		enum bg_load_stage stage;
		int err;
		const char *msg_end;
	} cases[] = {
		{ bad, NULL, 1, BG_STAGE_PARSE, -EINVAL, ": rejected lines with --strict" },
		{ missing, NULL, 0, BG_STAGE_PARSE, -ENOENT, ": No such file or directory" },
		{ empty, NULL, 0, BG_STAGE_PLAN, -ENODATA, "no valid entries in the lists" },
		{ deep, "adblock", 1, BG_STAGE_PARSE, -EINVAL,
		  ": subdomain rules never matched (too deep) with --strict" },
		{ bad, NULL, 0, BG_STAGE_NONE, 0, "" },
	};
	size_t i;

	(void)state;
	snprintf(missing, sizeof(missing), "%s/missing.txt", dir);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bg_sources srcs;
		struct bg_blocklist bl;
		struct bg_load_report r;
		struct seen seen = { .len = 0 };
		struct bg_load_opts o = { .strict = cases[i].strict,
					  .diag = on_diag, .diag_ctx = &seen };
		size_t ml = strlen(cases[i].msg_end), l;

		print_message("case %zu: %s\n", i, cases[i].path);
		bg_sources_init(&srcs);
		add(&srcs, cases[i].path, cases[i].fmt, 0, 0);
		o.sources = &srcs;
		bg_load_report_init(&r);
		assert_int_equal(bg_load_prepare(&o, &bl, &r), cases[i].err);
		assert_int_equal(r.failed, cases[i].stage);
		assert_int_equal(r.err, cases[i].err);
		l = strlen(r.msg);
		assert_true(l >= ml);
		assert_string_equal(r.msg + l - ml, cases[i].msg_end);
		bg_blocklist_free(&bl);
		bg_load_report_free(&r);
		bg_sources_free(&srcs);
	}
}

/* Loads one file (fmt NULL: detected) with strict; the result. */
static int prepare_list(const char *path, const char *fmt, int strict,
			struct bg_load_report *r, struct seen *seen)
{
	struct bg_sources srcs;
	struct bg_blocklist bl;
	struct bg_load_opts o = { .strict = strict, .diag = on_diag,
				  .diag_ctx = seen };
	int ret;

	bg_sources_init(&srcs);
	add(&srcs, path, fmt, 0, 0);
	o.sources = &srcs;
	bg_load_report_init(r);
	ret = bg_load_prepare(&o, &bl, r);
	bg_blocklist_free(&bl);
	bg_sources_free(&srcs);
	return ret;
}

/*
 * Detection says what it chose and why, in the report (for load and the
 * agent's log), one entry per detected list; a list mostly rejected warns
 * and names the format that reads it; a list with no entry warns. Both
 * warnings are line 0, "file: warning: ...", counted as warnings.
 */
static void test_prepare_detection(void **state)
{
	const char *hosts = write_list("hosts.txt", "# hosts\n127.0.0.1 localhost\n"
						    "0.0.0.0 ads.example\n"
						    "0.0.0.0 t.example # x\n");
	const char *stated = write_list("stated.txt", "ok.example\n");
	const char *names = write_list("names.txt", "router\nnas\nads.example\n");
	const char *empty = write_list("empty.txt", "# nothing\n\n");
	const char *addr = write_list("addr.txt", "192.0.2.1\n");
	struct bg_sources srcs;
	struct bg_blocklist bl;
	struct bg_load_report r;
	struct seen seen = { .len = 0 };
	struct bg_load_opts o = { .diag = on_diag, .diag_ctx = &seen };
	char want[1024], line[1024], *out = NULL;
	size_t outlen = 0;
	FILE *f;

	(void)state;
	bg_sources_init(&srcs);
	add(&srcs, hosts, NULL, 0, 0);
	add(&srcs, stated, "plain", 0, 0);
	add(&srcs, names, "auto", 0, 0);
	add(&srcs, empty, NULL, 0, 0);
	add(&srcs, addr, NULL, 0, 0);
	o.sources = &srcs;
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), 0);

	/* detected: every list but the stated one, in order */
	assert_int_equal(r.n_detected, 4);
	assert_string_equal(r.detected[0].file, hosts);
	assert_int_equal(r.detected[0].ev.format, BG_FMT_HOSTS);
	assert_string_equal(r.detected[1].file, names);
	assert_int_equal(r.detected[1].ev.format, BG_FMT_ADDR);
	assert_string_equal(r.detected[2].file, empty);
	assert_string_equal(r.detected[3].file, addr);
	bg_fmt_detected(line, sizeof(line), &r.detected[0]);
	snprintf(want, sizeof(want), "%s: detected hosts (3 of 3 non-comment "
		 "lines look like hosts entries)", hosts);
	assert_string_equal(line, want);
	bg_fmt_detected(line, sizeof(line), &r.detected[2]);
	snprintf(want, sizeof(want), "%s: detected addresses (no line but "
		 "blanks and comments)", empty);
	assert_string_equal(line, want);

	/* the warnings, after the lines they are about */
	snprintf(want, sizeof(want),
		 "%s:1: not an IP address: 'router'\n"
		 "%s:2: not an IP address: 'nas'\n"
		 "%s:3: not an IP address: 'ads.example'\n"
		 "%s: warning: 3 of 3 lines rejected as addresses; they look "
		 "like a plain domain list (--format plain)\n"
		 "%s: warning: no entry loaded\n"
		 "%s: warning: no entry loaded\n",
		 names, names, names, names, names, empty);
	assert_string_equal(seen.text, want);
	assert_int_equal(r.n_errors, 3);
	assert_int_equal(r.n_warnings, 3);
	assert_int_equal(r.n_diags, 6);
	assert_int_equal(r.diags[3].line, 0);
	assert_true(r.diags[3].warning);
	/* the counts are the parsers', as before */
	assert_int_equal(r.block.rejected, 3);
	assert_int_equal(r.names.accepted, 3);

	/* load prints the detected lines first */
	f = open_memstream(&out, &outlen);
	assert_non_null(f);
	bg_print_load_report(f, &srcs, &r);
	fclose(f);
	snprintf(want, sizeof(want), "%s: detected hosts (", hosts);
	assert_memory_equal(out, want, strlen(want));
	snprintf(want, sizeof(want), "\n%s: detected addresses (1 of 1 "
		 "non-comment lines are addresses or prefixes)\nlists: ", addr);
	assert_non_null(strstr(out, want));
	free(out);
	bg_blocklist_free(&bl);
	bg_load_report_free(&r);
	assert_null(r.detected);
	bg_sources_free(&srcs);

	/* --strict: the mostly rejected list fails as a list with rejected
	 * lines, after its warning; the empty one fails as such */
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(prepare_list(names, NULL, 1, &r, &seen), -EINVAL);
	assert_int_equal(r.failed, BG_STAGE_PARSE);
	assert_true(r.strict_rejected);
	assert_non_null(strstr(seen.text, "names.txt: warning: 3 of 3 lines "
				"rejected as addresses; they look like a plain "
				"domain list (--format plain)\n"));
	assert_int_equal(r.n_detected, 1);
	bg_load_report_free(&r);
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(prepare_list(empty, NULL, 1, &r, &seen), -EINVAL);
	assert_int_equal(r.failed, BG_STAGE_PARSE);
	assert_true(r.strict_empty);
	snprintf(want, sizeof(want), "%s: no entry loaded, with --strict", empty);
	assert_string_equal(r.msg, want);
	bg_load_report_free(&r);
	/* without: the list warns, and the load of it alone has nothing to
	 * build (as before) */
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(prepare_list(empty, NULL, 0, &r, &seen), -ENODATA);
	assert_int_equal(r.failed, BG_STAGE_PLAN);
	assert_string_equal(seen.text + strlen(seen.text) - strlen("empty.txt: warning: no entry loaded\n"),
			    "empty.txt: warning: no entry loaded\n");
	bg_load_report_free(&r);
	/* stated as addresses, a plain list warns too, naming plain */
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(prepare_list(stated, "addr", 0, &r, &seen), -ENODATA);
	assert_int_equal(r.n_detected, 0);
	assert_non_null(strstr(seen.text, "stated.txt: warning: 1 of 1 lines "
				"rejected as addresses; they look like a plain "
				"domain list (--format plain)\n"));
	bg_load_report_free(&r);
}

/* A hosts line rejected in a second domain list, at the line number the
 * first list's last entry had: still its own line, not one that loaded
 * an entry (so 1 of 2 lines rejected: no warning). */
static void test_prepare_two_domain_lists(void **state)
{
	const char *a = write_list("a.txt", "a.example\n");
	const char *b = write_list("b.txt", "0.0.0.0 bad*.example\n"
					    "0.0.0.0 b.example\n");
	struct bg_sources srcs;
	struct bg_blocklist bl;
	struct bg_load_report r;
	struct seen seen = { .len = 0 };
	struct bg_load_opts o = { .diag = on_diag, .diag_ctx = &seen };

	(void)state;
	bg_sources_init(&srcs);
	add(&srcs, a, NULL, 0, 0);
	add(&srcs, b, NULL, 0, 0);
	o.sources = &srcs;
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), 0);
	assert_int_equal(seen.n, 1);
	assert_null(strstr(seen.text, "warning"));
	assert_int_equal(r.n_warnings, 0);
	bg_blocklist_free(&bl);
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
}

/* With the attachment's capacity: a list that fits fills it, one that does
 * not fails at the plan, naming what it needs and the capacity. */
static void test_prepare_capacity(void **state)
{
	char text[64 * 1024];
	const char *l;
	size_t i, n = 0;
	struct bg_sources srcs;
	struct bg_blocklist bl;
	struct bg_load_report r, r0;
	struct bg_load_opts o = { 0 };
	__u32 cap = bg_filter_capacity_elems(2000);
	char want[128];

	(void)state;
	/* 3000 /32s, more than 2000 keys, and a /16: the bitmap that the
	 * capacity always reserves is used */
	for (i = 0; i < 3000; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "10.%zu.%zu.1\n",
				      i / 250, i % 250);
	snprintf(text + n, sizeof(text) - n, "10.200.0.0/16\n");
	l = write_list("cap.txt", text);
	bg_sources_init(&srcs);
	add(&srcs, l, NULL, 0, 0);
	o.sources = &srcs;

	/* any size: the plan as sized for the target */
	bg_load_report_init(&r0);
	assert_int_equal(bg_load_prepare(&o, &bl, &r0), 0);
	bg_blocklist_free(&bl);
	assert_true(r0.plan.nelems > cap);

	/* too small: refused at the plan */
	o.capacity = cap;
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), -ENOSPC);
	bg_blocklist_free(&bl);
	assert_int_equal(r.failed, BG_STAGE_PLAN);
	snprintf(want, sizeof(want), "filter needs %u elements (", r0.plan.nelems);
	assert_non_null(strstr(r.msg, want));
	snprintf(want, sizeof(want), "the attachment's capacity is %u (", cap);
	assert_non_null(strstr(r.msg, want));
	assert_non_null(strstr(r.msg, "attach with a larger --capacity"));
	bg_load_report_free(&r);

	/* large enough: filled exactly, a lower predicted rate */
	o.capacity = bg_filter_capacity_elems(5000);
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), 0);
	bg_blocklist_free(&bl);
	assert_int_equal(r.plan.nelems, o.capacity);
	assert_int_equal(r.plan.capacity, o.capacity);
	assert_true(r.plan.nblocks > r0.plan.nblocks);
	assert_true(r.plan.predicted_addr <= r0.plan.predicted_addr);
	bg_load_report_free(&r);
	bg_load_report_free(&r0);
	bg_sources_free(&srcs);
}

/* The plan of a load prepared without a capacity, fitted afterwards (as
 * bg_load_commit() does under the lock), is the plan prepared with it. */
static void test_fit_after_prepare(void **state)
{
	char text[64 * 1024];
	size_t i, n = 0;
	struct bg_sources srcs;
	struct bg_blocklist bl;
	struct bg_load_report r, rc;
	struct bg_load_opts o = { .seed = 1 };
	__u32 small = bg_filter_capacity_elems(2000);

	(void)state;
	for (i = 0; i < 3000; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "10.%zu.%zu.1\n",
				      i / 250, i % 250);
	snprintf(text + n, sizeof(text) - n, "10.200.0.0/16\n"); /* a bitmap */
	bg_sources_init(&srcs);
	add(&srcs, write_list("fit.txt", text), NULL, 0, 0);
	o.sources = &srcs;
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), 0);
	bg_blocklist_free(&bl);
	rc = r;
	assert_int_equal(bg_load_fit(&rc, small, 0), -ENOSPC);
	assert_int_equal(rc.failed, BG_STAGE_PLAN);
	assert_non_null(strstr(rc.msg, "attach with a larger --capacity"));

	rc = r;
	assert_int_equal(bg_load_fit(&rc, bg_filter_capacity_elems(5000), 0), 0);
	/* fitted: the Bloom part takes the room */
	assert_true(rc.plan.nblocks > r.plan.nblocks);
	/* a growing capacity's: the plan as it is, zeros after its tables */
	rc = r;
	assert_int_equal(bg_load_fit(&rc, bg_filter_capacity_elems(5000), 1), 0);
	assert_int_equal(rc.plan.nblocks, r.plan.nblocks);
	assert_int_equal(rc.plan.k, r.plan.k);
	assert_int_equal(rc.plan.fp_off, r.plan.fp_off);
	assert_int_equal(rc.plan.allown_off, r.plan.allown_off);
	assert_int_equal(rc.plan.nelems, bg_filter_capacity_elems(5000));
	assert_int_equal(rc.plan.capacity, rc.plan.nelems);
	rc = r;
	assert_int_equal(bg_load_fit(&rc, small, 1), -ENOSPC);
	/* what load --capacity plans: the fitted one */
	rc = r;
	assert_int_equal(bg_load_fit(&rc, bg_filter_capacity_elems(5000), 0), 0);
	o.capacity = bg_filter_capacity_elems(5000);
	bg_load_report_free(&r);
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), 0);
	bg_blocklist_free(&bl);
	assert_memory_equal(&rc.plan, &r.plan, sizeof(r.plan));
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
}

/* A growing capacity is its filter's own tables with headroom: a filter
 * without the exact stage (--confirm off) gets a map about a third the
 * size of one with it, not one sized for the stage; both shrink back when
 * they would fit BG_CAPACITY_SHRINK_FACTOR times over, and grow when they
 * do not fit. */
static void test_capacity_grown(void **state)
{
	static char text[1200 * 1024];
	size_t i, n = 0;
	struct bg_sources srcs;
	struct bg_blocklist bl;
	struct bg_load_report on, off;
	struct bg_load_opts o = { .seed = 1 };
	__u32 gon, goff, used_on, used_off;

	(void)state;
	for (i = 0; i < 100000; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "10.%zu.%zu.%zu\n",
				      i / 62500, i / 250 % 250, i % 250);
	bg_sources_init(&srcs);
	add(&srcs, write_list("grown.txt", text), NULL, 0, 0);
	o.sources = &srcs;
	bg_load_report_init(&on);
	assert_int_equal(bg_load_prepare(&o, &bl, &on), 0);
	bg_blocklist_free(&bl);
	o.confirm_off = 1;
	bg_load_report_init(&off);
	assert_int_equal(bg_load_prepare(&o, &bl, &off), 0);
	bg_blocklist_free(&bl);
	assert_int_equal(on.plan.n, 100000);
	assert_int_equal(off.plan.n, 100000);
	assert_true(off.plan.fp_nbuckets == 0 && on.plan.fp_nbuckets > 0);

	used_on = bg_filter_used(&on.plan);
	used_off = bg_filter_used(&off.plan);
	gon = bg_capacity_grown(&on.plan);
	goff = bg_capacity_grown(&off.plan);
	/* 1.25 times the tables, give or take an element */
	assert_in_range((uint64_t)gon * 4, (uint64_t)used_on * 5, (uint64_t)used_on * 5 + 8);
	assert_in_range((uint64_t)goff * 4, (uint64_t)used_off * 5, (uint64_t)used_off * 5 + 8);
	/* with the stage about what the keys take at the defaults */
	assert_in_range(gon, bg_filter_capacity_elems(100000),
			bg_filter_capacity_elems(130000));
	/* without it well under half of that */
	assert_true((uint64_t)goff * 2 < gon);
	/* each is kept in its own capacity; a capacity the filter would
	 * fit BG_CAPACITY_SHRINK_FACTOR times over shrinks, one it outgrows
	 * grows */
	assert_false(bg_capacity_regrow(&off.plan, goff));
	assert_false(bg_capacity_regrow(&on.plan, gon));
	assert_true(bg_capacity_regrow(&off.plan, goff * BG_CAPACITY_SHRINK_FACTOR + 8));
	assert_true(bg_capacity_regrow(&on.plan, used_on - 1));
	bg_load_report_free(&on);
	bg_load_report_free(&off);
	bg_sources_free(&srcs);
}

/* Prepares one list with the given bounds: the result, the message. */
static int prepare_one(const char *path, uint64_t max_bytes,
		       uint64_t max_entries, struct bg_load_report *r,
		       struct seen *seen)
{
	struct bg_sources srcs;
	struct bg_blocklist bl;
	struct bg_load_opts o = { .diag = on_diag, .diag_ctx = seen,
				  .max_list_bytes = max_bytes,
				  .max_entries = max_entries };
	int ret;

	bg_sources_init(&srcs);
	add(&srcs, path, NULL, 0, 0);
	o.sources = &srcs;
	bg_load_report_init(r);
	ret = bg_load_prepare(&o, &bl, r);
	bg_blocklist_free(&bl);
	bg_sources_free(&srcs);
	return ret;
}

/*
 * Only regular files are read by name. A FIFO is refused at once: the old
 * reader blocked in open() until a writer came, so alarm() turns a hang
 * into a failure (SIGALRM kills the test). A directory, a socket and
 * /dev/zero (which never ends) are refused the same way: one message
 * naming the file and what it is, at the parse, nothing read.
 */
static void test_prepare_not_regular(void **state)
{
	char fifo[300], sock[100], want[512];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct {
		const char *path, *kind;
		int err;
	} cases[] = {
		{ fifo, "a FIFO", -ENOTSUP },
		{ dir, "a directory", -EISDIR },
		{ "/dev/zero", "a character device", -ENOTSUP },
		{ sock, "a socket", -ENXIO },
	};
	size_t i;
	int sfd;

	(void)state;
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	snprintf(sock, sizeof(sock), "%s/sock", dir);
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	sfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(sfd >= 0);
	assert_int_equal(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bg_load_report r;
		struct seen seen = { .len = 0 };

		print_message("case %zu: %s\n", i, cases[i].path);
		alarm(10);
		assert_int_equal(prepare_one(cases[i].path, 0, 0, &r, &seen),
				 cases[i].err);
		alarm(0);
		assert_int_equal(r.failed, BG_STAGE_PARSE);
		snprintf(want, sizeof(want),
			 "%s: %s, not a regular file%s", cases[i].path,
			 cases[i].kind,
			 i ? "" : " (- reads standard input)");
		assert_string_equal(r.msg, want);
		/* the caller's callback had it too, as the file's report */
		strcat(want, "\n");
		assert_string_equal(seen.text, want);
		bg_load_report_free(&r);
	}
	close(sfd);
}

static void never_cover(void *ctx, const char *path, size_t line,
			const char *text, const struct bg_key4 *k4,
			const struct bg_key6 *k6)
{
	(void)path;
	(void)line;
	(void)text;
	(void)k4;
	(void)k6;
	(*(int *)ctx)++;
}

static void never_name(void *ctx, const char *path, size_t line,
		       const char *text, const struct bg_name *e, int label)
{
	(void)path;
	(void)line;
	(void)text;
	(void)e;
	(void)label;
	(*(int *)ctx)++;
}

/*
 * `check` re-reads the lists a load recorded: a path that has become a
 * FIFO (or names standard input) is refused at once, not waited on (the
 * old reader blocked in open(); alarm() turns a hang into a failure).
 */
static void test_reread_not_regular(void **state)
{
	struct bg_dom_opts o = { .format = BG_FMT_PLAIN };
	char fifo[300];
	struct bg_key4 k4;
	int calls = 0;

	(void)state;
	snprintf(fifo, sizeof(fifo), "%s/fifo2", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	bg_key4_init(&k4, htonl(0xc6336407), 32);
	alarm(10);
	assert_int_equal(bg_list_find_covering(fifo, &k4, NULL, never_cover,
					       &calls), -ENOTSUP);
	assert_int_equal(bg_names_find(fifo, &o, "ads.example.com", never_name,
				       &calls), -ENOTSUP);
	assert_int_equal(bg_list_find_covering("-", &k4, NULL, never_cover,
					       &calls), -ENOENT);
	alarm(0);
	assert_int_equal(calls, 0);
	unlink(fifo);
}

/* Points standard input at a pipe holding text (less than a pipe's
 * buffer, the write end closed); the old stdin is returned. */
static int stdin_from(const char *text)
{
	int p[2], old = dup(STDIN_FILENO);

	assert_true(old >= 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
	close(p[1]);
	assert_int_equal(dup2(p[0], STDIN_FILENO), STDIN_FILENO);
	close(p[0]);
	return old;
}

static void stdin_restore(int old)
{
	assert_int_equal(dup2(old, STDIN_FILENO), STDIN_FILENO);
	close(old);
}

/* "-" reads standard input, a pipe included, named /dev/stdin in reports,
 * with the size bound of any list: more than it fails the load. */
static void test_prepare_stdin(void **state)
{
	char big[8192];
	struct bg_load_report r;
	struct seen seen = { .len = 0 };
	size_t n = 0;
	int old;

	(void)state;
	old = stdin_from("192.0.2.1\nbogus\n10.0.0.0/8\n");
	assert_int_equal(prepare_one("-", 0, 0, &r, &seen), 0);
	stdin_restore(old);
	assert_int_equal(r.entries, 2);
	assert_string_equal(seen.text, "/dev/stdin:2: not an IP address: 'bogus'\n");
	bg_load_report_free(&r);

	while (n + 16 < sizeof(big))
		n += (size_t)snprintf(big + n, sizeof(big) - n, "192.0.2.%zu\n",
				      n % 200);
	old = stdin_from(big);
	assert_int_equal(prepare_one("-", 1000, 0, &r, &seen), -EFBIG);
	stdin_restore(old);
	assert_int_equal(r.failed, BG_STAGE_PARSE);
	assert_string_equal(r.msg, "/dev/stdin: more than 1000 bytes "
				   "(--max-list-bytes)");
	bg_load_report_free(&r);

	/* exactly at the bound: read */
	old = stdin_from("192.0.2.1\n");
	assert_int_equal(prepare_one("-", 10, 0, &r, &seen), 0);
	stdin_restore(old);
	bg_load_report_free(&r);
}

/* A regular file past the bound is refused from its size, unread. */
static void test_prepare_max_bytes(void **state)
{
	const char *l = write_list("ten.txt", "192.0.2.1\n"); /* 10 bytes */
	struct bg_load_report r;
	struct seen seen = { .len = 0 };
	char want[512];

	(void)state;
	assert_int_equal(prepare_one(l, 9, 0, &r, &seen), -EFBIG);
	snprintf(want, sizeof(want), "%s: more than 9 bytes (--max-list-bytes)", l);
	assert_string_equal(r.msg, want);
	bg_load_report_free(&r);
	assert_int_equal(prepare_one(l, 10, 0, &r, &seen), 0);
	bg_load_report_free(&r);
}

/* The entries of all lists together, as parsed (duplicates counted): past
 * the bound, the load fails at the file that crossed it. */
static void test_prepare_max_entries(void **state)
{
	const char *a = write_list("e1.txt", "192.0.2.1\n192.0.2.1\n2001:db8::1\n");
	const char *d = write_list("e2.txt", "a.example.com\nb.example.com\n"
					     "c.example.com\n");
	struct {
		uint64_t max;
		int err;
		const char *at;
	} cases[] = { { 5, -E2BIG, d }, { 2, -E2BIG, a }, { 6, 0, NULL } };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bg_sources srcs;
		struct bg_blocklist bl;
		struct bg_load_report r;
		struct bg_load_opts o = { .max_entries = cases[i].max };
		char want[512];

		bg_sources_init(&srcs);
		add(&srcs, a, NULL, 0, 0);
		add(&srcs, d, NULL, 0, 1); /* allowed entries count too */
		o.sources = &srcs;
		bg_load_report_init(&r);
		assert_int_equal(bg_load_prepare(&o, &bl, &r), cases[i].err);
		bg_blocklist_free(&bl);
		bg_sources_free(&srcs);
		if (!cases[i].err) {
			bg_load_report_free(&r);
			continue;
		}
		assert_int_equal(r.failed, BG_STAGE_PARSE);
		snprintf(want, sizeof(want), "%s: the lists hold more than %llu "
			 "entries (--max-entries)", cases[i].at,
			 (unsigned long long)cases[i].max);
		assert_string_equal(r.msg, want);
		bg_load_report_free(&r);
	}
}

/* check's answers, on a filter built in memory from the same lists. */
/* Every accepted entry reaches the load's entry sink once, from the one
 * parse that builds the filter: its list, line, the line's bytes, the key
 * as loaded (masked) and whether it allows; rejected lines never. */
struct entries_seen {
	char text[4096];
	size_t len;
	const char *bufs[4]; /* the lists' texts, by source index */
};

static void on_entry(void *ctx, unsigned int worker,
		     const struct bg_entry_ref *e)
{
	struct entries_seen *s = ctx;
	char key[256] = "";

	assert_int_equal(worker, 0);
	if (e->kind == BG_KEY_IPV4) {
		const struct bg_key4 *k = e->key;

		inet_ntop(AF_INET, &k->addr, key, sizeof(key));
		snprintf(key + strlen(key), sizeof(key) - strlen(key), "/%u", k->plen);
	} else if (e->kind == BG_KEY_IPV6) {
		const struct bg_key6 *k = e->key;

		inet_ntop(AF_INET6, k->addr, key, sizeof(key));
		snprintf(key + strlen(key), sizeof(key) - strlen(key), "/%u", k->plen);
	} else {
		assert_int_equal(e->kind, BG_ENTRY_NAME);
		snprintf(key, sizeof(key), "%s:%u", (const char *)e->key, e->name_kind);
	}
	s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len,
				   "%zu:%zu:%s:%d:[%.*s]\n", e->source, e->line, key,
				   e->allow, (int)e->line_len,
				   s->bufs[e->source] + e->line_off);
}

static void test_prepare_entries(void **state)
{
	const char *a = "# c\n10.1.2.3/8\nbogus\n192.0.2.7\r\n2001:db8::1/128\n10.0.0.0/8\n";
	const char *d = "ads.example\n||trk.example^\n@@||ok.trk.example^\n";
	const char *w = "198.51.100.0/24\n";
	struct entries_seen seen = { .bufs = { a, d, w } };
	char want[4096];
	struct bg_load_opts o = { .entry = on_entry, .entry_ctx = &seen,
				  .diag = NULL };
	struct bg_load_report r;
	struct bg_blocklist bl;
	struct bg_sources srcs;

	(void)state;
	bg_sources_init(&srcs);
	add(&srcs, write_list("e-a.txt", a), "addr", 0, 0);
	add(&srcs, write_list("e-d.txt", d), "adblock", 0, 0);
	add(&srcs, write_list("e-w.txt", w), "addr", 0, 1);
	o.sources = &srcs;
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), 0);
	snprintf(want, sizeof(want),
			    "0:2:10.0.0.0/8:0:[10.1.2.3/8]\n"
			    "0:4:192.0.2.7/32:0:[192.0.2.7]\n"
			    "0:5:2001:db8::1/128:0:[2001:db8::1/128]\n"
			    "0:6:10.0.0.0/8:0:[10.0.0.0/8]\n"
			    "1:1:ads.example:%d:0:[ads.example]\n"
			    "1:2:trk.example:%d:0:[||trk.example^]\n"
			    "1:3:ok.trk.example:%d:1:[@@||ok.trk.example^]\n"
			    "2:1:198.51.100.0/24:1:[198.51.100.0/24]\n",
		 BG_NAME_EXACT, BG_NAME_TREE, BG_NAME_TREE);
	bg_blocklist_free(&bl);
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
	assert_string_equal(seen.text, want);
}

/* A list big enough to be parsed in pieces on two threads: entries come
 * from both workers, each worker's in line order, every accepted line
 * once with its line number and byte offset in the file; the reports are
 * those of a parse of the whole buffer, in line order. */
struct pieces_seen {
	const char *buf;
	const size_t *line_off; /* by line number */
	size_t nlines;
	size_t n[BG_PARSE_WORKERS_MAX], last[BG_PARSE_WORKERS_MAX];
	size_t bad[BG_PARSE_WORKERS_MAX];
	unsigned char *hit; /* by line number */
};

/* Called on the workers' threads: cmocka's asserts must not run there, so
 * what is wrong is counted per worker (calls of one worker never overlap)
 * and asserted after the parse. */
static void on_piece_entry(void *ctx, unsigned int worker,
			   const struct bg_entry_ref *e)
{
	struct pieces_seen *s = ctx;
	char key[64], tok[64];
	const char *t;
	size_t n;
	int ok = 1;

	if (worker >= BG_PARSE_WORKERS_MAX) {
		s->bad[0]++;
		return;
	}
	ok &= e->line > s->last[worker]; /* in line order */
	s->last[worker] = e->line;
	s->n[worker]++;
	if (!ok || e->line < 1 || e->line > s->nlines ||
	    e->line_off != s->line_off[e->line] || s->hit[e->line]) {
		s->bad[worker]++;
		return;
	}
	s->hit[e->line] = 1;
	/* the line's bytes, without its end, start with the key's text */
	t = s->buf + e->line_off;
	n = strcspn(t, " #\r\n");
	if (n >= sizeof(tok) || e->line_len < n ||
	    (t[e->line_len] != '\n' && t[e->line_len] != '\r')) {
		s->bad[worker]++;
		return;
	}
	memcpy(tok, t, n);
	tok[n] = '\0';
	if (e->kind == BG_KEY_IPV4)
		inet_ntop(AF_INET, &((const struct bg_key4 *)e->key)->addr, key,
			  sizeof(key));
	else
		inet_ntop(AF_INET6, ((const struct bg_key6 *)e->key)->addr, key,
			  sizeof(key));
	if (strcmp(key, tok))
		s->bad[worker]++;
}

/* Every report, printed, in order: a growing buffer. */
struct seen_big {
	char *text;
	size_t len, n;
};

static void on_diag_big(void *ctx, const struct bg_diag *d)
{
	struct seen_big *s = ctx;
	char line[512];
	FILE *f = fmemopen(line, sizeof(line), "w");
	size_t n;

	assert_non_null(f);
	bg_diag_print(f, d);
	n = (size_t)ftell(f);
	fclose(f);
	s->text = realloc(s->text, s->len + n + 1);
	assert_non_null(s->text);
	memcpy(s->text + s->len, line, n);
	s->len += n;
	s->text[s->len] = '\0';
	s->n++;
}

static void test_prepare_entries_pieces(void **state)
{
	const size_t lines = 400000;
	struct pieces_seen seen = { 0 };
	struct seen_big d1 = { 0 }, d2 = { 0 };
	struct bg_load_opts o = { .entry = on_piece_entry, .entry_ctx = &seen,
				  .diag = on_diag_big, .diag_ctx = &d1,
				  .threads = 2 };
	struct bg_list_opts lo = { .diag = on_diag_big, .diag_ctx = &d2 };
	struct bg_load_report r;
	struct bg_blocklist bl;
	struct bg_sources srcs;
	struct bg_list whole;
	size_t *off, i, len = 0, accepted = 0, rejects = 0;
	char *buf, path[300];
	FILE *f;

	(void)state;
	buf = malloc(lines * 48);
	off = calloc(lines + 2, sizeof(*off));
	seen.hit = calloc(lines + 2, 1);
	assert_non_null(buf);
	assert_non_null(off);
	assert_non_null(seen.hit);
	for (i = 1; i <= lines; i++) {
		uint32_t a = (uint32_t)(i * 2654435761u);

		off[i] = len;
		/* a rejected line every 5001 lines: more than BG_LOAD_DIAGS_MAX, in both pieces */
		if (i % 5001 == 0) {
			len += (size_t)sprintf(buf + len, "bad %zu\n", i);
			rejects++;
		} else if (i % 1009 == 0) {
			len += (size_t)sprintf(buf + len, "# c\n");
		} else if (i % 503 == 0) {
			len += (size_t)sprintf(buf + len, "2001:db8:%zx::%zx\r\n",
					       (i >> 16) + 1, i & 0xffff);
			accepted++;
		} else {
			len += (size_t)sprintf(buf + len, "%u.%u.%u.%u # x\n", a >> 24,
					       (a >> 16) & 255, (a >> 8) & 255,
					       a & 255);
			accepted++;
		}
	}
	assert_true(len > (4 << 20)); /* parsed in pieces */
	seen.buf = buf;
	seen.line_off = off;
	seen.nlines = lines;
	snprintf(path, sizeof(path), "%s/pieces.txt", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);

	bg_sources_init(&srcs);
	add(&srcs, path, "addr", 0, 0);
	o.sources = &srcs;
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), 0);
	assert_int_equal(seen.bad[0], 0);
	assert_int_equal(seen.bad[1], 0);
	assert_true(seen.n[0] > 0 && seen.n[1] > 0); /* both workers */
	assert_int_equal(seen.n[0] + seen.n[1], accepted);
	assert_int_equal(r.block.rejected, rejects);
	assert_int_equal(r.block.lines, lines);
	/* the reports of the whole buffer parsed on one thread, in order
	 * (the first BG_LOAD_DIAGS_MAX kept by the report too) */
	bg_list_init(&whole);
	lo.report = NULL;
	snprintf(path, sizeof(path), "%s/pieces.txt", dir);
	assert_int_equal(bg_list_parse_buf(&whole, path, buf, len, &lo), 0);
	assert_int_equal(d1.n, d2.n);
	assert_string_equal(d1.text, d2.text);
	assert_int_equal(r.diags[0].line, 5001);
	assert_int_equal(r.diags[BG_LOAD_DIAGS_MAX - 1].line,
			 5001 * BG_LOAD_DIAGS_MAX);
	bg_list_free(&whole);
	bg_blocklist_free(&bl);
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
	free(buf);
	free(off);
	free(seen.hit);
	free(d1.text);
	free(d2.text);
}

/* The per-list hook (bg_load_opts.source_done): called after each list
 * with its counts; a refusal stops the load at that list, and a load
 * without it goes through. */
struct done_seen {
	size_t calls, entries[4], rejected[4];
	size_t refuse; /* the list to refuse, SIZE_MAX none */
};

static int on_source_done(void *ctx, size_t i, const struct bg_source_info *in)
{
	struct done_seen *d = ctx;

	assert_int_equal(i, d->calls);
	d->entries[i] = in->entries;
	d->rejected[i] = in->rejected;
	d->calls++;
	return i == d->refuse;
}

static void test_prepare_source_done(void **state)
{
	struct done_seen seen = { .refuse = 1 };
	struct bg_load_opts o = { .source_done = on_source_done,
				  .source_ctx = &seen };
	struct bg_load_report r;
	struct bg_blocklist bl;
	struct bg_sources srcs;

	(void)state;
	bg_sources_init(&srcs);
	add(&srcs, write_list("sd-a.txt", "192.0.2.1\n192.0.2.2\nbogus\n"), "addr", 0, 0);
	add(&srcs, write_list("sd-b.txt", "not\na list\n198.51.100.1\n"), "addr", 0, 0);
	add(&srcs, write_list("sd-c.txt", "203.0.113.1\n"), "addr", 0, 0);
	o.sources = &srcs;
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), -ECANCELED);
	assert_int_equal(r.failed, BG_STAGE_PARSE);
	assert_int_equal(r.failed_source, 1);
	assert_non_null(strstr(r.msg, "sd-b.txt: refused"));
	assert_int_equal(seen.calls, 2); /* the third list never parsed */
	assert_int_equal(seen.entries[0], 2);
	assert_int_equal(seen.rejected[0], 1);
	assert_int_equal(seen.entries[1], 1);
	assert_int_equal(seen.rejected[1], 2);
	bg_blocklist_free(&bl);
	bg_load_report_free(&r);
	/* accepted: every list, and the failure index says none */
	seen = (struct done_seen){ .refuse = SIZE_MAX };
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), 0);
	assert_int_equal(seen.calls, 3);
	assert_int_equal(r.failed_source, SIZE_MAX);
	assert_int_equal(r.entries, 4);
	bg_blocklist_free(&bl);
	bg_load_report_free(&r);
	/* a list that cannot be read: the failure names it */
	assert_int_equal(unlink(srcs.v[2].path), 0);
	seen = (struct done_seen){ .refuse = SIZE_MAX };
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), -ENOENT);
	assert_int_equal(r.failed_source, 2);
	bg_blocklist_free(&bl);
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
}

static void test_explain(void **state)
{
	const char *a = write_list("xa.txt", "192.0.2.0/24 # docs\n2001:db8::1\n");
	const char *d = write_list("xd.txt", "||ads.example.com^\n"
					     "@@||ok.ads.example.com^\n");
	const char *al = write_list("xal.txt", "192.0.2.7\n");
	const char *p = write_list("xp.txt", "*.subs.example.org\n");
	struct bg_sources srcs;
	struct bg_blocklist bl;
	struct bg_load_report r;
	struct bg_record rec = { 0 };
	struct bg_load_opts o = { .fpr = 1e-6 };
	struct bg_explanation x;
	void *mem;

	(void)state;
	bg_sources_init(&srcs);
	add(&srcs, a, NULL, 0, 0);
	add(&srcs, d, NULL, 0, 0);
	add(&srcs, al, NULL, 0, 1);
	add(&srcs, p, NULL, 0, 0);
	o.sources = &srcs;
	bg_load_report_init(&r);
	assert_int_equal(bg_load_prepare(&o, &bl, &r), 0);
	mem = calloc(1, r.plan.bytes);
	assert_non_null(mem);
	bg_filter_build(mem, &r.plan, 42, &bl);
	rec.src = srcs.v;
	rec.n = (int)srcs.n;

	/* a listed address: the covering entry, masked, with file:line */
	assert_int_equal(bg_explain(mem, &rec, "192.0.2.9", &x), 0);
	assert_int_equal(x.kind, BG_EXPLAIN_ADDR);
	assert_true(x.listed);
	assert_false(x.allowed);
	assert_int_equal(x.block.n, 1);
	assert_string_equal(x.block.v[0].text, "192.0.2.0/24");
	assert_string_equal(x.block.v[0].path, a);
	assert_int_equal(x.block.v[0].line, 1);
	bg_explain_free(&x);

	/* allowlisted inside a listed range: both sides named */
	assert_int_equal(bg_explain(mem, &rec, "192.0.2.7", &x), 0);
	assert_true(x.listed && x.allowed);
	assert_int_equal(x.block.n, 1);
	assert_int_equal(x.allow.n, 1);
	assert_string_equal(x.allow.v[0].path, al);
	bg_explain_free(&x);

	/* a name under a subdomain rule: the parent it matched as */
	assert_int_equal(bg_explain(mem, &rec, "X.Ads.Example.com.", &x), 0);
	assert_int_equal(x.kind, BG_EXPLAIN_NAME);
	assert_string_equal(x.name, "x.ads.example.com");
	assert_true(x.listed);
	assert_int_equal(x.block.n, 1);
	assert_string_equal(x.block.v[0].text, "||ads.example.com^");
	assert_string_equal(x.block.v[0].parent, "ads.example.com");
	bg_explain_free(&x);

	/* allow beats block for names too */
	assert_int_equal(bg_explain(mem, &rec, "ok.ads.example.com", &x), 0);
	assert_true(x.allowed);
	assert_int_equal(x.allow.n, 1);
	assert_int_equal(x.allow.v[0].line, 2);
	assert_null(x.allow.v[0].parent);
	bg_explain_free(&x);

	/* not listed; not known; not an argument at all */
	assert_int_equal(bg_explain(mem, &rec, "198.51.100.1", &x), 0);
	assert_false(x.listed);
	assert_int_equal(x.block.n, 0);
	bg_explain_free(&x);
	assert_int_equal(bg_explain(mem, NULL, "192.0.2.9", &x), 0);
	assert_true(x.listed);
	assert_false(x.known);
	assert_int_equal(x.block.n, 0);
	bg_explain_free(&x);
	assert_int_equal(bg_explain(mem, &rec, "192.0.2.300", &x), 0);
	assert_int_equal(x.kind, BG_EXPLAIN_INVALID);
	assert_non_null(x.why);
	bg_explain_free(&x);

	/* A list's "*.x" covers x's subdomains, not x: check does not take
	 * "*.x" for x (it would answer no match while "*.x" is listed), and
	 * says what it takes instead of the parser's "only allowed as a
	 * leading '*.'", which is true of "*.x". */
	assert_int_equal(bg_explain(mem, &rec, "a.subs.example.org", &x), 0);
	assert_true(x.listed);
	assert_int_equal(x.block.n, 1);
	assert_string_equal(x.block.v[0].text, "*.subs.example.org");
	bg_explain_free(&x);
	assert_int_equal(bg_explain(mem, &rec, "subs.example.org", &x), 0);
	assert_false(x.listed);
	bg_explain_free(&x);
	assert_int_equal(bg_explain(mem, &rec, "*.subs.example.org", &x), 0);
	assert_int_equal(x.kind, BG_EXPLAIN_INVALID);
	assert_non_null(strstr(x.why, "check takes a concrete name"));
	assert_non_null(strstr(x.why, "subdomains of NAME"));
	assert_null(strstr(x.why, "leading"));
	bg_explain_free(&x);
	assert_int_equal(bg_explain(mem, &rec, "ads.*.example.com", &x), 0);
	assert_int_equal(x.kind, BG_EXPLAIN_INVALID);
	assert_non_null(strstr(x.why, "without '*'"));
	bg_explain_free(&x);
	assert_int_equal(bg_explain(mem, &rec, "*.*.example.com", &x), 0);
	assert_int_equal(x.kind, BG_EXPLAIN_INVALID);
	assert_non_null(strstr(x.why, "without '*'"));
	bg_explain_free(&x);

	free(mem);
	bg_blocklist_free(&bl);
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prepare_report),
		cmocka_unit_test(test_prepare_failures),
		cmocka_unit_test(test_prepare_detection),
		cmocka_unit_test(test_prepare_two_domain_lists),
		cmocka_unit_test(test_prepare_capacity),
		cmocka_unit_test(test_fit_after_prepare),
		cmocka_unit_test(test_prepare_not_regular),
		cmocka_unit_test(test_reread_not_regular),
		cmocka_unit_test(test_prepare_stdin),
		cmocka_unit_test(test_prepare_max_bytes),
		cmocka_unit_test(test_prepare_max_entries),
		cmocka_unit_test(test_prepare_entries),
		cmocka_unit_test(test_prepare_entries_pieces),
		cmocka_unit_test(test_prepare_source_done),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_capacity_grown),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
