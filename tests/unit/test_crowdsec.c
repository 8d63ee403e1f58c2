// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A crowdsec: source's decisions (agent/crowdsec.h) without the engine
 * (tests/e2e/test_crowdsec.sh runs them against it):
 *
 *   set_orders       a million decisions put and deleted in ascending,
 *                    descending and random id order: every one found, a
 *                    few slots looked at each (no sorted insertion)
 *   copy_roundtrip   the copy written (in id order) and read back as the
 *                    same set, its lines parsed by the address parser as
 *                    the decisions' keys; a copy line now refused is left
 *                    out and the set marked to be written again; check's
 *                    text of a line; expiry; the count by origin
 *   key_file         the bouncer key's file: a FIFO and a directory
 *                    refused at once (never waited on), a world-readable,
 *                    a group-writable one taken with a warning
 *   pull_*           bg_cs_pull() against build/tests/httpd serving
 *                    canned answers, the ones the engine never sends
 *                    (garbage durations, bad values, a never-ending body,
 *                    a refused key, a truncated answer): the set, the
 *                    counts by reason, the refusal callback, the set
 *                    unchanged by a failed pull, an abort
 *   config           the config's keys of such a source
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "agent/config.h"
#include "agent/crowdsec.h"
#include "agent/fetch.h"
#include "bloomgate/bloom.h"
#include "core/sources.h"
#include "httpd_child.h"

static char dir[] = "/tmp/bg-test-cs.XXXXXX";
static char www[PATH_MAX], keypath[PATH_MAX], ctlpath[PATH_MAX], logpath[PATH_MAX];
static int port;

static char *in(const char *d, const char *name)
{
	static char buf[4][PATH_MAX];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", d, name);
	return buf[k];
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(tmp, mode), 0);
	assert_int_equal(rename(tmp, path), 0);
}

static union bg_cs_key key4(const char *a, unsigned int plen)
{
	union bg_cs_key k;
	__u32 x;

	memset(&k, 0, sizeof(k));
	assert_int_equal(inet_pton(AF_INET, a, &x), 1);
	bg_key4_init(&k.k4, x, (__u8)plen);
	return k;
}

/* ---- the set -------------------------------------------------------------- */

#define MANY 1000000

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Slots looked at by id: a few per operation (a sorted array's insertion
 * moves a decision per decision held; chains that grow with the set would
 * too). Checked as the operations go, so that a quadratic set fails here
 * in a moment rather than running for hours. */
#define PROBES_PER_OP 5
static void probes_ok(const struct bg_cs_state *st, uint64_t ops, int order)
{
	if (st->probes > PROBES_PER_OP * ops + 64)
		fail_msg("order %d: %llu slots looked at for %llu operations", order,
			 (unsigned long long)st->probes, (unsigned long long)ops);
}

static int count_one(void *ctx, const struct bg_cs_decision *d)
{
	(*(size_t *)ctx)++;
	return d->id <= 0;
}

/* ids in the order asked: 0 ascending, 1 descending, 2 random */
static void ids(int64_t *v, size_t n, int order)
{
	uint64_t s = 88172645463325252ull;
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = order == 1 ? (int64_t)(n - i) : (int64_t)(i + 1);
	for (i = n - 1; order == 2 && i > 0; i--) {
		size_t j = rnd(&s) % (i + 1);
		int64_t t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

static void test_set_orders(void **state)
{
	int64_t *v = malloc(MANY * sizeof(*v));
	struct bg_cs_state st;
	int order, del;
	uint64_t ops;
	size_t i, n;

	(void)state;
	assert_non_null(v);
	for (order = 0; order < 3; order++) {
		memset(&st, 0, sizeof(st));
		ids(v, MANY, order);
		for (i = 0; i < MANY; i++) {
			union bg_cs_key k = key4("10.0.0.0", 32);

			k.k4.addr = htonl(0x0a000000u + (uint32_t)v[i]);
			assert_int_equal(bg_cs_put(&st, v[i], &k, 2e9, "cscli", "ssh-bf"), 1);
			if (i % 4096 == 0)
				probes_ok(&st, i + 1, order);
		}
		ops = MANY;
		assert_int_equal(st.n, MANY);
		/* put again: no change; another end: a change */
		{
			const struct bg_cs_decision *d = bg_cs_find(&st, v[7]);
			union bg_cs_key k = d->key;

			assert_int_equal(bg_cs_put(&st, v[7], &k, 2e9, "cscli", "ssh-bf"), 0);
			assert_int_equal(bg_cs_put(&st, v[7], &k, 3e9, "cscli", "ssh-bf"), 1);
		}
		for (i = 0; i < MANY; i++) {
			const struct bg_cs_decision *d = bg_cs_find(&st, v[i]);

			if (!d || d->id != v[i] ||
			    d->key.k4.addr != htonl(0x0a000000u + (uint32_t)v[i]))
				fail_msg("order %d: decision %lld not found", order, (long long)v[i]);
		}
		assert_null(bg_cs_find(&st, MANY + 1));
		assert_string_equal(bg_cs_str(&st, st.v[0].scenario), "ssh-bf");
		n = 0;
		assert_int_equal(bg_cs_foreach(&st, count_one, &n), 0);
		assert_int_equal(n, MANY);
		/* deleted in another order: half, then the rest */
		del = (order + 1) % 3;
		ids(v, MANY, del);
		for (i = 0; i < MANY / 2; i++) {
			assert_int_equal(bg_cs_delete(&st, v[i]), 1);
			if (i % 4096 == 0)
				probes_ok(&st, ops + 2 * MANY + 8 + i, order);
		}
		assert_int_equal(bg_cs_delete(&st, v[0]), 0);
		for (i = MANY / 2; i < MANY; i++)
			if (!bg_cs_find(&st, v[i]))
				fail_msg("order %d: %lld lost by the deletions", order,
					 (long long)v[i]);
		for (i = MANY / 2; i < MANY; i++)
			assert_int_equal(bg_cs_delete(&st, v[i]), 1);
		assert_int_equal(st.n, 0);
		/* puts, finds, deletions: 3.5 million operations by id, each
		 * deletion two lookups (its own and the last one moved) */
		probes_ok(&st, 5 * (uint64_t)MANY, order);
		bg_cs_state_free(&st);
	}
	free(v);
}

/* The strings' bound: a scenario each, all different, until the bytes of
 * BG_CS_STRS_MAX; the put past it refused, the set unchanged by it. */
static void test_set_strings_bound(void **state)
{
	struct bg_cs_state st = { 0 };
	union bg_cs_key k = key4("10.0.0.1", 32);
	char scen[BG_CS_SCENARIO_MAX + 1];
	uint64_t v;
	int64_t id;
	int r = 0;

	(void)state;
	memset(scen, 'x', sizeof(scen) - 1);
	scen[sizeof(scen) - 1] = 0;
	for (id = 1; id < 1000000; id++) {
		snprintf(scen, 12, "%011u", (unsigned)id);
		scen[11] = 'x';
		v = st.version;
		r = bg_cs_put(&st, id, &k, 2e9, "o", scen);
		if (r != 1)
			break;
	}
	assert_int_equal(r, -E2BIG);
	assert_int_equal(st.version, v);
	assert_int_equal(st.n, (size_t)id - 1);
	assert_null(bg_cs_find(&st, id));
	/* about BG_CS_STRS_MAX / 160 of them */
	assert_true(st.n > BG_CS_STRS_MAX / (BG_CS_SCENARIO_MAX + 1) - 2);
	assert_true(st.strs.len <= BG_CS_STRS_MAX);
	/* a string held already still is */
	assert_int_equal(bg_cs_put(&st, id, &k, 2e9, "o", bg_cs_str(&st, st.v[0].scenario)), 1);
	bg_cs_state_free(&st);
}

/* ---- the copy ------------------------------------------------------------- */

static void test_copy_roundtrip(void **state)
{
	struct bg_cfg_list l = { .cs_max_range4 = 16, .cs_max_range6 = 32 };
	struct bg_cs_state a = { 0 }, b = { 0 };
	struct bg_cs_origin_count oc[BG_CS_ORIGINS_MAX];
	struct bg_source src = { .list = { .format = BG_FMT_ADDR } };
	struct bg_list_opts lo = { 0 };
	struct bg_blocklist bl;
	union bg_cs_key k6;
	char text[256], line[512], *path = in(dir, "copy.list");
	double now = 2e9;
	int64_t last = 0;
	size_t i;
	FILE *f;
	int used;

	(void)state;
	memset(&k6, 0, sizeof(k6));
	assert_int_equal(bg_cs_value("2001:db8::/48", 13, 1, &(struct bg_cs_limits){ 16, 32 },
				     &k6, &(const char *){ NULL }), -1);
	assert_int_equal(bg_cs_put(&a, 12, &k6, now + 7200, "cscli", "# not a comment"), 1);
	assert_int_equal(bg_cs_put(&a, 9, &(union bg_cs_key){ .k4 = key4("198.51.100.0", 24).k4 },
				   now + 60, "crowdsec", "crowdsecurity/ssh-bf"), 1);
	assert_int_equal(bg_cs_put(&a, 7, &(union bg_cs_key){ .k4 = key4("192.0.2.7", 32).k4 },
				   now + 3600, "cscli", "manual 'ban' from 'x'\n\x01"), 1);
	assert_int_equal(bg_cs_put(&a, 15, &(union bg_cs_key){ .k4 = key4("203.0.113.9", 32).k4 },
				   now - 1, "CAPI", "gone"), 1);
	assert_int_equal(bg_cs_put(&a, 16, &(union bg_cs_key){ .k4 = key4("203.0.113.10", 32).k4 },
				   now + 5, "", ""), 1);
	assert_int_equal(bg_cs_delete(&a, 16), 1);
	/* the strings kept printable: what the copy's line can hold */
	assert_string_equal(bg_cs_str(&a, bg_cs_find(&a, 7)->scenario),
			    "manual 'ban' from 'x'??");
	assert_int_equal(bg_cs_expire(&a, now), 1);
	assert_int_equal(a.n, 3);
	assert_int_equal(bg_cs_origins(&a, oc, BG_CS_ORIGINS_MAX), 2);
	assert_string_equal(oc[0].origin, "cscli");
	assert_int_equal(oc[0].n, 2);
	assert_int_equal(oc[1].n, 1);
	assert_int_equal(bg_cs_write(&a, path, "http://127.0.0.1:8080/", NULL), 0);
	assert_int_equal(a.written, a.version);
	/* in id order, keys as the list parser writes them */
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		int64_t id;

		if (line[0] == '#')
			continue;
		id = strtoll(strstr(line, "decision ") + 9, NULL, 10);
		assert_true(id > last);
		last = id;
	}
	fclose(f);
	assert_int_equal(last, 12);
	/* read back: the same decisions */
	assert_int_equal(bg_cs_read(&b, path, &l, NULL), 0);
	assert_int_equal(b.n, 3);
	assert_int_equal(b.written, b.version);
	for (i = 0; i < a.n; i++) {
		const struct bg_cs_decision *x = &a.v[i], *y = bg_cs_find(&b, x->id);

		assert_non_null(y);
		assert_memory_equal(&x->key, &y->key, sizeof(x->key));
		assert_true(x->until == y->until);
		assert_string_equal(bg_cs_str(&a, x->origin), bg_cs_str(&b, y->origin));
		assert_string_equal(bg_cs_str(&a, x->scenario), bg_cs_str(&b, y->scenario));
	}
	/* the list parser reads the keys, and only them */
	src.path = path;
	bg_blocklist_init(&bl);
	assert_int_equal(bg_source_parse(&src, &bl, &lo, &used), 0);
	bg_blocklist_finish(&bl);
	assert_int_equal(bl.block.n4, 2);
	assert_int_equal(bl.block.n6, 1);
	assert_int_equal(bl.block.rejected, 0);
	assert_int_equal(bl.block.warnings, 0);
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
	/* a narrower bound now: the /24 left out, the set to be written */
	bg_cs_state_free(&b);
	l.cs_max_range4 = 25;
	assert_int_equal(bg_cs_read(&b, path, &l, NULL), 0);
	assert_int_equal(b.n, 2);
	assert_null(bg_cs_find(&b, 9));
	assert_true(b.version != b.written);
	/* an abort stops the read */
	bg_cs_state_free(&b);
	assert_int_equal(bg_cs_read(&b, path, &l, &(int){ 1 }), -EINTR);
	assert_int_equal(bg_cs_write(&a, path, "x", &(int){ 1 }), -EINTR);
	unlink(path);
	/* a copy that is not there: an empty set */
	bg_cs_state_free(&b);
	assert_int_equal(bg_cs_read(&b, path, &l, NULL), 0);
	assert_int_equal(b.n, 0);
	bg_cs_state_free(&a);
	bg_cs_state_free(&b);
}

/* ---- the key file ---------------------------------------------------------- */

static void test_key_file(void **state)
{
	char key[256], why[512], warn[256], *fifo = in(dir, "fifo"), *d = in(dir, "kdir");

	(void)state;
	/* a FIFO without a writer: refused at once (the alarm a safety net:
	 * a blocked open would hang here) */
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(20);
	assert_int_equal(bg_cs_read_key(fifo, key, sizeof(key), why, sizeof(why), warn,
					sizeof(warn)), -EINVAL);
	alarm(0);
	assert_non_null(strstr(why, "not a regular file (a FIFO)"));
	assert_int_equal(mkdir(d, 0700), 0);
	assert_int_equal(bg_cs_read_key(d, key, sizeof(key), why, sizeof(why), warn,
					sizeof(warn)), -EINVAL);
	assert_non_null(strstr(why, "not a regular file (a directory)"));
	assert_int_equal(bg_cs_read_key("/dev/null", key, sizeof(key), why, sizeof(why),
					warn, sizeof(warn)), -EINVAL);
	assert_int_equal(bg_cs_read_key(in(dir, "none"), key, sizeof(key), why,
					sizeof(why), warn, sizeof(warn)), -ENOENT);
	/* a good one */
	write_file(keypath, "0123456789abcdef\n", 0600);
	assert_int_equal(bg_cs_read_key(keypath, key, sizeof(key), why, sizeof(why), warn,
					sizeof(warn)), 0);
	assert_string_equal(key, "0123456789abcdef");
	assert_string_equal(warn, "");
	/* readable by all, writable by the group: taken, with a warning */
	assert_int_equal(chmod(keypath, 0644), 0);
	assert_int_equal(bg_cs_read_key(keypath, key, sizeof(key), why, sizeof(why), warn,
					sizeof(warn)), 0);
	assert_non_null(strstr(warn, "is readable or writable by others (mode 0644"));
	assert_int_equal(chmod(keypath, 0620), 0);
	assert_int_equal(bg_cs_read_key(keypath, key, sizeof(key), why, sizeof(why), warn,
					sizeof(warn)), 0);
	assert_non_null(strstr(warn, "writable by its group"));
	/* not one key */
	write_file(in(dir, "k2"), "two keys\n", 0600);
	assert_int_equal(bg_cs_read_key(in(dir, "k2"), key, sizeof(key), why, sizeof(why),
					warn, sizeof(warn)), -EINVAL);
	write_file(in(dir, "k3"), "\n", 0600);
	assert_int_equal(bg_cs_read_key(in(dir, "k3"), key, sizeof(key), why, sizeof(why),
					warn, sizeof(warn)), -EINVAL);
	/* larger than a key: refused before it is read */
	assert_int_equal(bg_cs_read_key(keypath, key, 8, why, sizeof(why), warn,
					sizeof(warn)), -EINVAL);
	assert_non_null(strstr(why, "more than a key"));
	write_file(keypath, "0123456789abcdef\n", 0600);
	unlink(fifo);
	rmdir(d);
}

/* ---- pulls against the test server -------------------------------------------- */

static struct bg_cfg_list lapi(char *url, size_t len)
{
	struct bg_cfg_list l = { .api_key_file = keypath, .timeout = 20,
				 .max_bytes = 64 << 20, .cs_max_range4 = 16,
				 .cs_max_range6 = 32 };

	snprintf(url, len, "http://127.0.0.1:%d/", port);
	l.list.url = url;
	return l;
}

/* The answer the server gives next, and how (a control line, or none). */
static void answer(const char *json, const char *mode)
{
	char ctl[128];

	write_file(in(www, "v1/decisions/stream"), json, 0644);
	if (mode) {
		snprintf(ctl, sizeof(ctl), "/v1/decisions/stream %s\n", mode);
		write_file(ctlpath, ctl, 0644);
	} else {
		unlink(ctlpath);
	}
}

struct seen {
	char text[4096];
	size_t n;
};

static void on_refused(void *ctx, const struct bg_cs_refusal *r)
{
	struct seen *s = ctx;
	size_t w = strlen(s->text);

	snprintf(s->text + w, sizeof(s->text) - w, "%lld %s %s '%s' '%s'\n",
		 (long long)r->id, r->name, r->detail, r->value, r->origin);
	s->n++;
}

#define DEC(id, type, scope, value, dur)                                          \
	"{\"id\":" #id ",\"type\":\"" type "\",\"scope\":\"" scope "\",\"value\":\"" \
	value "\",\"duration\":\"" dur "\",\"origin\":\"cscli\",\"scenario\":\"t\"}"

static void test_pull_checked(void **state)
{
	static struct seen seen;
	char url[64], why[256];
	struct bg_cfg_list l = lapi(url, sizeof(url));
	struct bg_cs_hooks h = { .refused = on_refused, .ctx = &seen };
	struct bg_cs_state st = { .loaded = 1 };
	struct bg_cs_pull_result r;
	uint64_t v;

	(void)state;
	/* what the engine never sends: every duration and value the brief
	 * names, refused and counted; the good ones taken */
	answer("{\"new\":[" DEC(1, "ban", "Ip", "192.0.2.1", "3h59m58.123456789s") ","
	       DEC(2, "ban", "Ip", "192.0.2.2", "5") ","
	       DEC(3, "ban", "Ip", "192.0.2.3", "") ","
	       DEC(4, "ban", "Ip", "192.0.2.4", "1h-5m") ","
	       DEC(5, "ban", "Ip", "192.0.2.5", "nans") ","
	       DEC(6, "ban", "Ip", "192.0.2.6", "1e400s") ","
	       DEC(7, "ban", "Range", "1.2.3.4/ 24", "1h0m0s") ","
	       DEC(8, "ban", "Range", "/+8", "1h0m0s") ","
	       DEC(9, "ban", "Range", "198.51.100.66/032", "1h0m0s") ","
	       DEC(10, "ban", "Range", "0.0.0.0/0", "1h0m0s") ","
	       DEC(11, "ban", "Range", "::/0", "1h0m0s") ","
	       DEC(12, "ban", "Range", "10.0.0.0/1", "1h0m0s") ","
	       DEC(13, "ban", "Range", "2000::/3", "1h0m0s") ","
	       DEC(14, "ban", "Range", "192.0.0.0/8", "1h0m0s") ","
	       DEC(15, "captcha", "Ip", "192.0.2.15", "1h0m0s") ","
	       DEC(16, "ban", "Country", "FR", "1h0m0s") ","
	       DEC(17, "ban", "Ip", "192.0.2.17", "-1.26s") ","
	       DEC(18, "ban", "Range", "203.0.113.0/24", "1m0s") ","
	       DEC(19, "ban", "Ip", "2001:db8::1", "500ms") ","
	       "{\"id\":20,\"type\":\"ban\",\"scope\":\"Ip\",\"value\":\"192.0.2.20\"},"
	       DEC(21, "ban", "Ip", "192.0.2.21\\u0000'\\\\\\u00e9", "1m0s")
	       "],\"deleted\":null}", NULL);
	assert_int_equal(bg_cs_pull(&l, &st, &h, &r, why, sizeof(why)), 0);
	assert_int_equal(r.http_status, 200);
	assert_int_equal(st.n, 3);
	assert_non_null(bg_cs_find(&st, 1));
	assert_non_null(bg_cs_find(&st, 18));
	assert_non_null(bg_cs_find(&st, 19));
	assert_int_equal(r.added, 3);
	assert_int_equal(r.refused, 18);
	assert_int_equal(st.ignored[BG_CS_IGN_DURATION], 6);
	assert_int_equal(st.ignored[BG_CS_IGN_VALUE], 4);
	assert_int_equal(st.ignored[BG_CS_IGN_TOO_WIDE], 5);
	assert_int_equal(st.ignored[BG_CS_IGN_TYPE], 1);
	assert_int_equal(st.ignored[BG_CS_IGN_SCOPE], 1);
	assert_int_equal(st.ignored[BG_CS_IGN_EXPIRED], 1);
	assert_int_equal(seen.n, 18);
	assert_non_null(strstr(seen.text, "2 duration not a duration as the API writes one "
					  "'192.0.2.2' 'cscli'\n"));
	assert_non_null(strstr(seen.text, "6 duration "));
	assert_non_null(strstr(seen.text, "20 duration absent '192.0.2.20'"));
	assert_non_null(strstr(seen.text, "7 value bad prefix length (no blanks around '/') "
					  "'1.2.3.4/ 24'"));
	assert_non_null(strstr(seen.text, "14 too_wide a prefix wider than max_range_v4 "
					  "'192.0.0.0/8'"));
	/* the value as received, escaped */
	assert_non_null(strstr(seen.text, "21 value binary data "
					  "'192.0.2.21\\x00\\x27\\x5c\\xc3\\xa9'"));
	/* the same answer again, whole: the same set, no change */
	v = st.version;
	st.want_full = 1;
	assert_int_equal(bg_cs_pull(&l, &st, NULL, &r, why, sizeof(why)), 0);
	assert_int_equal(st.version, v);
	assert_int_equal(st.ignored[BG_CS_IGN_DURATION], 12);
	/* the changes: one deleted, one new, one replaced */
	answer("{\"deleted\":[{\"id\":1,\"duration\":\"-1s\"},{\"id\":99}],\"new\":["
	       DEC(30, "ban", "Ip", "192.0.2.30", "1m0s") ","
	       DEC(18, "ban", "Range", "203.0.113.0/25", "1m0s") "]}", NULL);
	assert_int_equal(bg_cs_pull(&l, &st, NULL, &r, why, sizeof(why)), 0);
	assert_int_equal(r.deleted, 1);
	assert_int_equal(r.added, 2);
	assert_int_equal(st.n, 3);
	assert_null(bg_cs_find(&st, 1));
	assert_int_equal(bg_cs_find(&st, 18)->key.k4.plen, 25);
	assert_true(st.version > v);
	/* a deletion that cannot be read: a whole pull next */
	answer("{\"deleted\":[{\"id\":\"x\"}],\"new\":null}", NULL);
	assert_int_equal(bg_cs_pull(&l, &st, NULL, &r, why, sizeof(why)), 0);
	assert_int_equal(st.want_full, 1);
	assert_int_equal(st.ignored[BG_CS_IGN_MALFORMED], 1);
	bg_cs_state_free(&st);
}

/* Failures leave the set as it was (but expiry). */
static void test_pull_failures(void **state)
{
	static const struct {
		const char *body, *mode;
		int ret;
		const char *why;
	} t[] = {
		{ "{}", "403", -EACCES, "refused the bouncer key (HTTP 403)" },
		{ "{}", "500", -EIO, "answered HTTP 500" },
		{ "{\"new\":[" DEC(5, "ban", "Ip", "192.0.2.5", "1m0s") "]", NULL, -EBADMSG,
		  "not the stream's JSON: at byte" },
		{ "{\"new\":[" DEC(5, "ban", "Ip", "192.0.2.5", "1m0s") "]}", "truncate", -EIO,
		  "the local API: " },
		{ "{\"new\":[" DEC(5, "ban", "Ip", "192.0.2.5", "1m0s") "]}", "garbage",
		  -EBADMSG, "not a JSON object" },
		{ "{\"new\":[\n" DEC(5, "ban", "Ip", "192.0.2.5", "1m0s") ",\n", "endless",
		  -EFBIG, "larger than max_bytes (1048576)" },
	};
	char url[64], why[256];
	struct bg_cfg_list l = lapi(url, sizeof(url));
	struct bg_cs_state st = { .loaded = 1 };
	struct bg_cs_pull_result r;
	uint64_t v;
	size_t i, k;

	(void)state;
	l.max_bytes = 1 << 20;
	answer("{\"new\":[" DEC(1, "ban", "Ip", "192.0.2.1", "1h0m0s") "]}", NULL);
	assert_int_equal(bg_cs_pull(&l, &st, NULL, &r, why, sizeof(why)), 0);
	assert_int_equal(st.n, 1);
	for (k = 0; k < 2; k++) {
		for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			int ret;

			answer(t[i].body, t[i].mode);
			v = st.version;
			st.want_full = (int)k; /* a whole pull, then the changes */
			ret = bg_cs_pull(&l, &st, NULL, &r, why, sizeof(why));
			if (ret != t[i].ret || !strstr(why, t[i].why))
				fail_msg("case %zu: %d '%s'", i, ret, why);
			assert_int_equal(st.version, v);
			assert_int_equal(st.n, 1);
			assert_non_null(bg_cs_find(&st, 1));
		}
	}
	/* the key file a FIFO: refused at once, nothing asked */
	unlink(keypath);
	assert_int_equal(mkfifo(keypath, 0600), 0);
	alarm(20);
	assert_int_equal(bg_cs_pull(&l, &st, NULL, &r, why, sizeof(why)), -EINVAL);
	alarm(0);
	assert_non_null(strstr(why, "not a regular file (a FIFO)"));
	unlink(keypath);
	/* a world-readable key: a warning, once */
	write_file(keypath, "0123456789abcdef\n", 0644);
	answer("{\"new\":null}", NULL);
	assert_int_equal(bg_cs_pull(&l, &st, NULL, &r, why, sizeof(why)), 0);
	assert_non_null(strstr(r.warn, "readable or writable by others"));
	assert_int_equal(bg_cs_pull(&l, &st, NULL, &r, why, sizeof(why)), 0);
	assert_string_equal(r.warn, "");
	write_file(keypath, "0123456789abcdef\n", 0600);
	/* what ran out goes, also when the pull fails */
	answer("{}", "500");
	assert_int_equal(bg_cs_put(&st, 2, &(union bg_cs_key){ .k4 = key4("192.0.2.2", 32).k4 },
				   1.0, "x", "y"), 1);
	assert_int_equal(bg_cs_pull(&l, &st, NULL, &r, why, sizeof(why)), -EIO);
	assert_int_equal(r.expired, 1);
	assert_null(bg_cs_find(&st, 2));
	bg_cs_state_free(&st);
}

/* The peak of this process's resident memory (kB), since the last
 * reset_peak(). */
static long peak_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

static void reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	assert_non_null(f);
	fputs("5", f);
	fclose(f);
}

/* The answer is parsed as it comes: 64 MiB of it (blanks inside the
 * array, a never-ending body cut at max_bytes) cost no 64 MiB of memory. */
static void test_pull_memory(void **state)
{
	char url[64], why[256], *body = malloc(8192 + 16);
	struct bg_cfg_list l = lapi(url, sizeof(url));
	struct bg_cs_state st = { .loaded = 1 };
	struct bg_cs_pull_result r;
	long before;

	(void)state;
	assert_non_null(body);
	strcpy(body, "{\"new\":[\n");
	memset(body + 9, ' ', 8191);
	strcpy(body + 9 + 8191, "\n");
	answer(body, "endless");
	free(body);
	l.max_bytes = 64 << 20;
	reset_peak();
	before = peak_kb();
	assert_true(before > 0);
	assert_int_equal(bg_cs_pull(&l, &st, NULL, &r, why, sizeof(why)), -EFBIG);
	assert_true(r.bytes > l.max_bytes);
	if (peak_kb() - before > 16 << 10)
		fail_msg("64 MiB of answer took %ld kB more memory", peak_kb() - before);
	bg_cs_state_free(&st);
}

struct aborter {
	int *flag;
	double after;
};

static void *set_later(void *arg)
{
	struct aborter *a = arg;

	usleep((useconds_t)(a->after * 1e6));
	__atomic_store_n(a->flag, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void raise_flag(void *ctx, const struct bg_cs_refusal *r)
{
	(void)r;
	__atomic_store_n((int *)ctx, 1, __ATOMIC_RELAXED);
}

/* A never-ending body: only the abort flag (the agent's stop) ends it,
 * within the transfer's next chunk; the set unchanged. */
static void test_pull_abort(void **state)
{
	char url[64], why[256];
	struct bg_cfg_list l = lapi(url, sizeof(url));
	struct bg_cs_state st = { .loaded = 1 };
	struct bg_cs_pull_result r;
	int flag = 0;
	struct aborter a = { .flag = &flag, .after = 0.5 };
	struct bg_cs_hooks h = { .abort = &flag };
	pthread_t th;

	(void)state;
	/* no bound but the abort: the time limit past the safety alarm */
	l.max_bytes = 0;
	l.timeout = 3600;
	answer("{\"new\":[\n" DEC(1, "ban", "Ip", "192.0.2.1", "1h0m0s") ",\n", "endless");
	assert_int_equal(pthread_create(&th, NULL, set_later, &a), 0);
	alarm(30);
	assert_int_equal(bg_cs_pull(&l, &st, &h, &r, why, sizeof(why)), -EINTR);
	alarm(0);
	pthread_join(th, NULL);
	assert_non_null(strstr(why, "aborted"));
	assert_int_equal(st.n, 0);
	assert_int_equal(st.synced, 0);
	/* raised while the answer's last element is read: the answer whole,
	 * nothing of it taken */
	flag = 0;
	h.refused = raise_flag;
	h.ctx = &flag;
	answer("{\"new\":[" DEC(1, "ban", "Ip", "192.0.2.1", "1h0m0s") ","
	       DEC(2, "captcha", "Ip", "192.0.2.2", "1h0m0s") "]}", NULL);
	assert_int_equal(bg_cs_pull(&l, &st, &h, &r, why, sizeof(why)), -EINTR);
	assert_int_equal(st.n, 0);
	assert_int_equal(st.version, 0);
	bg_cs_state_free(&st);
}

/* ---- the config ---------------------------------------------------------------- */

static void test_config(void **state)
{
	static const char ok[] =
		"lists:\n"
		"  - name: cs\n"
		"    crowdsec: http://127.0.0.1:8080/\n"
		"    api_key_file: /etc/k\n"
		"    origins: [cscli, crowdsec]\n"
		"    scenarios_not_containing: http-probing\n"
		"    max_range_v6: 48\n";
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
		{ "lists:\n  - name: l\n    path: /l\n    max_range_v4: 24\n",
		  "t.yaml:4: lists[0].max_range_v4: only a crowdsec: source has it" },
		{ "lists:\n  - name: cs\n    crowdsec: http://x/\n    api_key_file: /k\n    max_range_v4: 7\n",
		  "t.yaml:5: lists[0].max_range_v4: '7' is not a whole number from 8 to 32" },
		{ "lists:\n  - name: cs\n    crowdsec: http://x/\n    api_key_file: /k\n    max_range_v6: 129\n",
		  "t.yaml:5: lists[0].max_range_v6: '129' is not a whole number from 16 to 128" },
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
	assert_true(c.lists[0].timeout == BG_CFG_CROWDSEC_TIMEOUT);
	assert_int_equal(c.lists[0].list.format, BG_FMT_ADDR);
	assert_string_equal(c.lists[0].cs_origins, "cscli,crowdsec");
	assert_string_equal(c.lists[0].cs_scen_out, "http-probing");
	assert_null(c.lists[0].cs_scopes);
	assert_int_equal(c.lists[0].cs_max_range4, BG_CFG_CS_RANGE4);
	assert_int_equal(c.lists[0].cs_max_range6, 48);
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

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(www, sizeof(www), "%s/www", dir);
	snprintf(keypath, sizeof(keypath), "%s/key", dir);
	snprintf(ctlpath, sizeof(ctlpath), "%s/control", dir);
	snprintf(logpath, sizeof(logpath), "%s/requests.log", dir);
	if (mkdir(www, 0755) || mkdir(in(www, "v1"), 0755) ||
	    mkdir(in(www, "v1/decisions"), 0755))
		return -1;
	if (bg_fetch_global_init())
		return -1;
	write_file(keypath, "0123456789abcdef\n", 0600);
	port = httpd_start(logpath, ctlpath, www);
	return port > 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	bg_fetch_global_cleanup();
	return httpd_teardown(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_orders),
		cmocka_unit_test(test_set_strings_bound),
		cmocka_unit_test(test_copy_roundtrip),
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_pull_checked),
		cmocka_unit_test(test_pull_failures),
		cmocka_unit_test(test_pull_abort),
		cmocka_unit_test(test_pull_memory),
		cmocka_unit_test(test_config),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
