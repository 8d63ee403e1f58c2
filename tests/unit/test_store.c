// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the agent's store (user/agent/store.c): the SQLite database in
 * the state directory, its sources and its entries, and the explanation of
 * a check from it. Each test gets a fresh temporary state directory. What
 * the store wrote is checked through its API and, where the API would hide
 * a fault (schema version, journal mode, index use), with SQLite directly.
 * Also bg_list_scan() (user/core/lists.c), which the store imports through.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "bloomgate/dns.h"
#include "core/domains.h"
#include "core/format.h"
#include "core/lists.h"
#include "agent/store.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct fix {
	char tmp[64]; /* mkdtemp() */
	char state[128]; /* tmp/state: not there until bg_store_open() */
	char db[160];
	struct bg_store *s;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->tmp, sizeof(f->tmp), "/tmp/bg-test-store-XXXXXX");
	assert_non_null(mkdtemp(f->tmp));
	snprintf(f->state, sizeof(f->state), "%s/state", f->tmp);
	snprintf(f->db, sizeof(f->db), "%s/%s", f->state, BG_STORE_FILE);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;
	char cmd[128];

	bg_store_close(f->s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->tmp);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* Writes text to tmp/name; returns the path (static, one at a time). */
static const char *put_file(struct fix *f, const char *name, const char *text)
{
	static char path[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->tmp, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, strlen(text), fp), strlen(text));
	assert_int_equal(fclose(fp), 0);
	return path;
}

static struct bg_store *open_store(struct fix *f)
{
	assert_int_equal(bg_store_open(f->state, &f->s), 0);
	assert_non_null(f->s);
	return f->s;
}

/* One integer from SQL run on the database file by a connection of ours. */
static long long sql_int(struct fix *f, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	long long v;

	assert_int_equal(sqlite3_open_v2(f->db, &db, SQLITE_OPEN_READONLY, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static void sql_exec(struct fix *f, const char *sql)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* ---- Open --------------------------------------------------------------- */

static void test_open_create_reopen(void **state)
{
	struct fix *f = *state;
	struct bg_store_source src = { .name = "a" }, got;
	struct bg_store *ro;
	struct stat st;
	char text[] = "not a database, but long enough to have a header.....";
	int fd;

	/* read-only before anything exists: nothing is created */
	assert_int_equal(bg_store_open_ro(f->state, &ro), -ENOENT);
	assert_null(ro);
	assert_int_equal(stat(f->state, &st), -1);

	open_store(f);
	assert_int_equal(stat(f->state, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(f->db, &st), 0);
	assert_int_equal(sql_int(f, "PRAGMA user_version"), BG_STORE_SCHEMA);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM sqlite_schema WHERE"
				    " name IN ('sources', 'entries',"
				    " 'entries_addr', 'entries_name')"), 4);
	/* WAL is recorded in the file header: bytes 18 and 19 are 2 */
	{
		unsigned char hdr[20];

		fd = open(f->db, O_RDONLY);
		assert_true(fd >= 0);
		assert_int_equal(read(fd, hdr, sizeof(hdr)), sizeof(hdr));
		close(fd);
		assert_int_equal(hdr[18], 2);
		assert_int_equal(hdr[19], 2);
	}
	assert_int_equal(bg_store_source_put(f->s, &src), 0);

	/* a read-only handle beside the writer sees what it committed, and
	 * cannot write */
	assert_int_equal(bg_store_open_ro(f->state, &ro), 0);
	assert_int_equal(bg_store_source_get(ro, "a", &got), 0);
	assert_int_equal(bg_store_source_put(ro, &src), -EROFS);
	bg_store_close(ro);

	/* reopen: same schema, data kept, nothing re-created */
	bg_store_close(f->s);
	f->s = NULL;
	open_store(f);
	assert_int_equal(bg_store_source_get(f->s, "a", &got), 0);
	assert_string_equal(got.name, "a");
	bg_store_close(f->s);
	f->s = NULL;

	/* a store from a newer bloomgate is refused, not rewritten */
	sql_exec(f, "PRAGMA user_version = 99");
	assert_int_equal(bg_store_open(f->state, &f->s), -EPROTO);
	assert_null(f->s);
	assert_int_equal(bg_store_open_ro(f->state, &ro), -EPROTO);
	assert_int_equal(sql_int(f, "PRAGMA user_version"), 99);

	/* a file that is not a database */
	unlink(f->db);
	put_file(f, "state/" BG_STORE_FILE, text);
	assert_int_equal(bg_store_open(f->state, &f->s), -EBADMSG);
	assert_null(f->s);

	/* no state directory can be made */
	assert_int_equal(bg_store_open("/nonexistent/bloomgate/state", &f->s),
			 -ENOENT);
	assert_int_equal(bg_store_open("", &f->s), -EINVAL);
}

/* ---- Sources ------------------------------------------------------------ */

static void fill(struct bg_store_source *s, const char *name, int k)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->url, sizeof(s->url), "https://lists.example/%s-%d", name, k);
	s->format = BG_FMT_ADBLOCK;
	s->subdomains = 1;
	s->allow = k & 1;
	snprintf(s->etag, sizeof(s->etag), "\"etag-%d\"", k);
	snprintf(s->last_modified, sizeof(s->last_modified),
		 "Tue, 01 Dec 2026 12:00:%02d GMT", k);
	memset(s->sha256, 'a' + k, 64);
	s->last_ok = 1764590400.25 + k;
	s->last_attempt = 1764590500.5 + k;
	snprintf(s->last_error, sizeof(s->last_error), "HTTP %d", 500 + k);
	s->entries = 1000000 + k;
	s->fetches = 10 + k;
	s->failures = 2 + k;
	s->not_modified = 7 + k;
	s->generation = (1ULL << 40) + k;
}

static void assert_source_equal(const struct bg_store_source *a,
				const struct bg_store_source *b)
{
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->url, b->url);
	assert_string_equal(a->path, b->path);
	assert_int_equal(a->format, b->format);
	assert_int_equal(a->subdomains, b->subdomains);
	assert_int_equal(a->allow, b->allow);
	assert_string_equal(a->etag, b->etag);
	assert_string_equal(a->last_modified, b->last_modified);
	assert_string_equal(a->sha256, b->sha256);
	assert_true(a->last_ok == b->last_ok);
	assert_true(a->last_attempt == b->last_attempt);
	assert_string_equal(a->last_error, b->last_error);
	assert_int_equal(a->entries, b->entries);
	assert_int_equal(a->fetches, b->fetches);
	assert_int_equal(a->failures, b->failures);
	assert_int_equal(a->not_modified, b->not_modified);
	assert_int_equal(a->generation, b->generation);
}

static void test_sources(void **state)
{
	struct fix *f = *state;
	struct bg_store_source a, b, c, got, *v;
	const char *copy;
	size_t n;

	open_store(f);
	assert_int_equal(bg_store_source_list(f->s, &v, &n), 0);
	assert_int_equal(n, 0);
	free(v);
	assert_int_equal(bg_store_source_get(f->s, "zeta", &got), -ENOENT);

	fill(&a, "zeta", 1);
	fill(&b, "alpha", 2);
	b.url[0] = '\0';
	snprintf(b.path, sizeof(b.path), "/etc/bloomgate/alpha.txt");
	assert_int_equal(bg_store_source_put(f->s, &a), 0);
	assert_int_equal(bg_store_source_put(f->s, &b), 0);
	assert_int_equal(bg_store_source_get(f->s, "zeta", &got), 0);
	assert_source_equal(&got, &a);
	assert_string_equal(got.origin, ""); /* no entries yet */

	/* upsert: every field replaced, still one row; the origin of the
	 * stored entries is the store's, kept across puts */
	copy = put_file(f, "zeta.txt", "192.0.2.1\n");
	assert_int_equal(bg_store_set_entries(f->s, "zeta", NULL, copy,
					      BG_FMT_AUTO, 0, 0), 1);
	fill(&c, "zeta", 4);
	assert_int_equal(bg_store_source_put(f->s, &c), 0);
	assert_int_equal(bg_store_source_get(f->s, "zeta", &got), 0);
	assert_source_equal(&got, &c);
	assert_string_equal(got.origin, a.url);
	assert_int_equal(got.entries_format, BG_FMT_ADDR);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM sources"), 2);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM entries"), 1);

	/* list: by name */
	assert_int_equal(bg_store_source_list(f->s, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_source_equal(&v[0], &b);
	assert_source_equal(&v[1], &c);
	free(v);

	/* a name that would not fit, or none */
	memset(got.name, 'x', sizeof(got.name));
	assert_int_equal(bg_store_source_put(f->s, &got), -EINVAL);
	got.name[0] = '\0';
	assert_int_equal(bg_store_source_put(f->s, &got), -EINVAL);

	/* delete: the row and its entries; the other stays */
	assert_int_equal(bg_store_source_delete(f->s, "zeta"), 0);
	assert_int_equal(bg_store_source_get(f->s, "zeta", &got), -ENOENT);
	assert_int_equal(bg_store_source_delete(f->s, "zeta"), -ENOENT);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM entries"), 0);
	assert_int_equal(bg_store_source_list(f->s, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].name, "alpha");
	free(v);
}

/* ---- bg_list_scan -------------------------------------------------------- */

struct scanned {
	size_t n, line[8];
	char text[8][64];
	int fam[8];
	unsigned int plen[8];
};

static void on_scan(void *ctx, size_t line, const char *text,
		    const struct bg_key4 *k4, const struct bg_key6 *k6)
{
	struct scanned *sc = ctx;

	assert_true(sc->n < 8);
	assert_true(!k4 != !k6);
	sc->line[sc->n] = line;
	snprintf(sc->text[sc->n], sizeof(sc->text[0]), "%s", text);
	sc->fam[sc->n] = k4 ? 4 : 6;
	sc->plen[sc->n] = k4 ? k4->plen : k6->plen;
	sc->n++;
}

static void test_list_scan(void **state)
{
	static const char text[] = "\xef\xbb\xbf# c\r\n"
				   " 10.1.2.3/8 ; host bits\r\n"
				   "bad\n"
				   "\n"
				   "2001:db8::/32\n"
				   "10.0.0.1 x\n"
				   "192.0.2.7";
	struct scanned sc = { 0 };

	(void)state;
	assert_int_equal(bg_list_scan(text, sizeof(text) - 1, on_scan, &sc), 3);
	assert_int_equal(sc.n, 3);
	assert_int_equal(sc.line[0], 2);
	assert_string_equal(sc.text[0], "10.1.2.3/8 ; host bits");
	assert_int_equal(sc.fam[0], 4);
	assert_int_equal(sc.plen[0], 8);
	assert_int_equal(sc.line[1], 5);
	assert_int_equal(sc.fam[1], 6);
	assert_int_equal(sc.plen[1], 32);
	assert_int_equal(sc.line[2], 7);
	assert_string_equal(sc.text[2], "192.0.2.7");
	assert_int_equal(bg_list_scan(text, sizeof(text) - 1, NULL, NULL), 3);
	assert_int_equal(bg_list_scan(NULL, 0, on_scan, &sc), 0);
}

/* ---- Entries and explain ------------------------------------------------- */

/* Explains arg; checks the count and returns the hits (free them). */
static struct bg_explain_hit *explain(struct bg_store *s, const char *arg,
				    size_t want)
{
	struct bg_explain_hit *h;
	size_t n;

	assert_int_equal(bg_store_explain(s, arg, &h, &n), 0);
	if (n != want) {
		size_t i;

		for (i = 0; i < n; i++)
			print_message("hit %s:%zu '%s' entry %s parent %s\n",
				      h[i].source, h[i].line, h[i].text,
				      h[i].entry, h[i].parent);
	}
	assert_int_equal(n, want);
	return h;
}

static void assert_hit(const struct bg_explain_hit *h, const char *source,
		       const char *origin, size_t line, const char *text,
		       const char *entry, int allow, const char *parent)
{
	assert_string_equal(h->source, source);
	assert_string_equal(h->origin, origin);
	assert_int_equal(h->line, line);
	assert_string_equal(h->text, text);
	assert_string_equal(h->entry, entry);
	assert_int_equal(h->allow, allow);
	assert_string_equal(h->parent, parent);
}

static void test_addr_entries(void **state)
{
	struct fix *f = *state;
	struct bg_store_source src = { .name = "fire",
				       .url = "https://x.example/fire.netset" };
	struct bg_explain_hit *h;
	const char *copy;

	open_store(f);
	assert_int_equal(bg_store_source_put(f->s, &src), 0);
	copy = put_file(f, "fire.copy",
			"# FireHOL\n"                  /* 1 */
			"10.0.0.0/8\n"                 /* 2 */
			"  10.1.0.0/16   # nested\r\n" /* 3 */
			"not an address\n"             /* 4: rejected */
			"10.1.2.3/24\n"                /* 5: host bits */
			"2001:db8::/32\n"              /* 6 */
			"10.1.2.3\n"                   /* 7 */
			"2001:db8::1\n");              /* 8 */
	/* origin NULL: the source's URL */
	assert_int_equal(bg_store_set_entries(f->s, "fire", NULL, copy,
					      BG_FMT_AUTO, 0, 0), 6);

	/* the allow list of another source, nesting inside the first */
	copy = put_file(f, "ok.copy", "10.1.2.0/25\n0.0.0.0/0\n::/0\n");
	assert_int_equal(bg_store_set_entries(f->s, "ok", "/etc/ok.txt", copy,
					      BG_FMT_ADDR, 0, 1), 3);

	h = explain(f->s, "10.1.2.3", 6);
	assert_hit(&h[0], "fire", src.url, 2, "10.0.0.0/8", "10.0.0.0/8", 0, "");
	assert_hit(&h[1], "fire", src.url, 3, "10.1.0.0/16   # nested",
		   "10.1.0.0/16", 0, "");
	assert_hit(&h[2], "fire", src.url, 5, "10.1.2.3/24", "10.1.2.0/24", 0, "");
	assert_hit(&h[3], "fire", src.url, 7, "10.1.2.3", "10.1.2.3", 0, "");
	assert_hit(&h[4], "ok", "/etc/ok.txt", 1, "10.1.2.0/25", "10.1.2.0/25",
		   1, "");
	assert_hit(&h[5], "ok", "/etc/ok.txt", 2, "0.0.0.0/0", "0.0.0.0/0", 1, "");
	free(h);
	/* the edges of a prefix: its first and last address, and one past */
	free(explain(f->s, "10.1.2.128", 4));
	free(explain(f->s, "10.1.255.255", 3));
	free(explain(f->s, "10.2.0.0", 2));
	free(explain(f->s, "9.255.255.255", 1));
	h = explain(f->s, "2001:db8::1", 3);
	assert_hit(&h[0], "fire", src.url, 6, "2001:db8::/32", "2001:db8::/32",
		   0, "");
	assert_hit(&h[1], "fire", src.url, 8, "2001:db8::1", "2001:db8::1", 0, "");
	assert_hit(&h[2], "ok", "/etc/ok.txt", 3, "::/0", "::/0", 1, "");
	free(h);
	free(explain(f->s, "2001:db9::", 1));

	/* ranges are stored for range queries: 10.1.2.0/24 */
	assert_int_equal(sql_int(f, "SELECT last - first FROM entries"
				    " WHERE line = 5 AND family = 4"), 255);
	assert_int_equal(sql_int(f, "SELECT hex(last) = 'FFFFFFFFFFFFFFFFFFFF"
				    "FFFFFFFFFFFF' FROM entries WHERE"
				    " family = 6 AND plen = 0"), 1);
	assert_int_equal(sql_int(f, "SELECT hex(last) = '20010DB8FFFFFFFFFFFF"
				    "FFFFFFFFFFFF' FROM entries WHERE"
				    " family = 6 AND plen = 32"), 1);
}

/* The explanation's lookups are index seeks, not scans of a table that
 * holds millions of entries. */
static void test_explain_uses_indexes(void **state)
{
	static const char *const queries[] = {
		"SELECT s.name FROM entries e JOIN sources s ON s.id = e.source"
		" WHERE e.family = 4 AND e.first = 1 AND e.plen = 8",
		"SELECT s.name FROM entries e JOIN sources s ON s.id = e.source"
		" WHERE e.name = 'x.example'",
	};
	static const char *const want[] = { "entries_addr", "entries_name" };
	struct fix *f = *state;
	sqlite3_stmt *st;
	sqlite3 *db;
	size_t i;

	open_store(f);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	for (i = 0; i < N(queries); i++) {
		char sql[512];
		int found = 0;

		snprintf(sql, sizeof(sql), "EXPLAIN QUERY PLAN %s", queries[i]);
		assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL),
				 SQLITE_OK);
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *d = (const char *)sqlite3_column_text(st, 3);

			if (strstr(d, "SEARCH e USING") && strstr(d, want[i]))
				found = 1;
		}
		sqlite3_finalize(st);
		assert_true(found);
	}
	sqlite3_close(db);
}

static void test_name_entries(void **state)
{
	struct fix *f = *state;
	struct bg_explain_hit *h;
	const char *copy;
	struct bg_explain_hit *x;
	size_t n;

	open_store(f);
	copy = put_file(f, "ads.copy",
			"[Adblock Plus 2.0]\n"            /* 1 */
			"! comment\n"                     /* 2 */
			"||ads.example.net^\n"            /* 3: tree */
			"||*.track.example.net^\n"        /* 4: subs only */
			"@@||ok.ads.example.net^\n"       /* 5: allow, tree */
			"|exact.example.org^\n"           /* 6: exact */
			"example.com##.banner\n"          /* 7: rejected */
			"  ||Example.COM^   # upper\n");  /* 8 */
	assert_int_equal(bg_store_set_entries(f->s, "ads",
					      "https://x.example/ads.txt", copy,
					      BG_FMT_AUTO, 0, 0), 5);
	copy = put_file(f, "allow.copy", "cdn.example.com\n");
	assert_int_equal(bg_store_set_entries(f->s, "ok", "/etc/allow.txt", copy,
					      BG_FMT_PLAIN, 1, 1), 1);

	/* under a subdomain rule */
	h = explain(f->s, "a.b.ads.example.net", 1);
	assert_hit(&h[0], "ads", "https://x.example/ads.txt", 3,
		   "||ads.example.net^", "ads.example.net", 0, "ads.example.net");
	assert_int_equal(h[0].kind, BG_NAME_TREE);
	free(h);
	/* the tree rule's own name; an allow rule under it */
	free(explain(f->s, "ads.example.net.", 1));
	h = explain(f->s, "OK.ads.example.net", 2);
	assert_hit(&h[0], "ads", "https://x.example/ads.txt", 3,
		   "||ads.example.net^", "ads.example.net", 0, "ads.example.net");
	assert_hit(&h[1], "ads", "https://x.example/ads.txt", 5,
		   "@@||ok.ads.example.net^", "ok.ads.example.net", 1, "");
	free(h);
	/* subdomains only: not the name itself */
	free(explain(f->s, "track.example.net", 0));
	h = explain(f->s, "x.track.example.net", 1);
	assert_int_equal(h[0].kind, BG_NAME_SUBS);
	assert_string_equal(h[0].parent, "track.example.net");
	free(h);
	/* exact: the name only */
	free(explain(f->s, "exact.example.org", 1));
	free(explain(f->s, "www.exact.example.org", 0));
	/* an adblock simple rule is exact; the allow list is plain with
	 * subdomains: its entries are trees, and allow */
	h = explain(f->s, "www.cdn.example.com", 2);
	assert_hit(&h[0], "ads", "https://x.example/ads.txt", 8,
		   "||Example.COM^   # upper", "example.com", 0, "example.com");
	assert_hit(&h[1], "ok", "/etc/allow.txt", 1, "cdn.example.com",
		   "cdn.example.com", 1, "cdn.example.com");
	free(h);
	h = explain(f->s, "example.com", 1);
	assert_hit(&h[0], "ads", "https://x.example/ads.txt", 8,
		   "||Example.COM^   # upper", "example.com", 0, "");
	free(h);

	/* neither an address nor a name */
	assert_int_equal(bg_store_explain(f->s, "10.0.0.0/8", &x, &n), -EINVAL);
	assert_int_equal(bg_store_explain(f->s, "bad..name", &x, &n), -EINVAL);
	assert_null(x);
	assert_int_equal(n, 0);
}

/* Parents deeper than BG_DNS_SUFFIX_MAX labels are never probed by the
 * datapath, so the store does not name them either; the name itself is
 * found at any depth. */
static void test_name_depth(void **state)
{
	struct fix *f = *state;
	char list[1024], q[600], deep[512];
	const char *copy;
	int i;

	_Static_assert(BG_DNS_SUFFIX_MAX == 10, "the names below");
	open_store(f);
	/* deep: 11 labels l1...l10.example; q: 12 labels x.deep */
	deep[0] = '\0';
	for (i = 1; i <= 10; i++)
		snprintf(deep + strlen(deep), sizeof(deep) - strlen(deep),
			 "l%d.", i);
	strcat(deep, "example");
	snprintf(q, sizeof(q), "x.%s", deep);
	/* the tree at 11 labels and one at 10 labels (l2...example) */
	snprintf(list, sizeof(list), "||%s^\n||%s^\n", deep, strchr(deep, '.') + 1);
	copy = put_file(f, "deep.copy", list);
	assert_int_equal(bg_store_set_entries(f->s, "deep", "/d", copy,
					      BG_FMT_ADBLOCK, 0, 0), 2);
	{
		struct bg_explain_hit *h = explain(f->s, q, 1);

		assert_int_equal(h[0].line, 2);
		free(h);
	}
	/* the 11-label name itself: its own rule, and the 10-label parent */
	free(explain(f->s, deep, 2));
}

/* A hosts line naming several hosts: one entry each, same line and text. */
static void test_hosts_and_text(void **state)
{
	struct fix *f = *state;
	char list[1024], want[BG_STORE_TEXT_MAX + 4];
	struct bg_explain_hit *h;
	const char *copy;
	size_t cut;

	open_store(f);
	copy = put_file(f, "hosts.copy",
			"127.0.0.1 localhost\n"
			"0.0.0.0 a.example b.example\n");
	assert_int_equal(bg_store_set_entries(f->s, "hosts", "/h", copy,
					      BG_FMT_AUTO, 1, 0), 2);
	h = explain(f->s, "b.example", 1);
	assert_hit(&h[0], "hosts", "/h", 2, "0.0.0.0 a.example b.example",
		   "b.example", 0, "");
	assert_int_equal(h[0].kind, BG_NAME_EXACT); /* hosts: never a tree */
	free(h);
	free(explain(f->s, "x.a.example", 0));

	/* a long line is cut on a UTF-8 boundary, "..." after: byte 200 is
	 * inside a two-byte character (199 bytes, then "é" at 199..200) */
	memset(list, 0, sizeof(list));
	strcpy(list, "192.0.2.1 #");
	memset(list + strlen(list), 'x', 199 - strlen(list));
	strcat(list, "\xc3\xa9\xc3\xa9 and more\n");
	copy = put_file(f, "long.copy", list);
	assert_int_equal(bg_store_set_entries(f->s, "long", "/l", copy,
					      BG_FMT_ADDR, 0, 0), 1);
	h = explain(f->s, "192.0.2.1", 1);
	cut = 199;
	memcpy(want, list, cut);
	strcpy(want + cut, "...");
	assert_string_equal(h[0].text, want);
	free(h);
}

/* Replacing one source's entries leaves the others'; a failed import
 * leaves the old ones. */
static void test_replace(void **state)
{
	struct fix *f = *state;
	struct bg_store_source got;
	struct bg_explain_hit *h;
	const char *copy;

	open_store(f);
	copy = put_file(f, "a.copy", "192.0.2.0/24\n198.51.100.1\n");
	assert_int_equal(bg_store_set_entries(f->s, "a", "/a", copy,
					      BG_FMT_AUTO, 0, 0), 2);
	copy = put_file(f, "b.copy", "192.0.2.0/25\n");
	assert_int_equal(bg_store_set_entries(f->s, "b", "/b", copy,
					      BG_FMT_AUTO, 0, 0), 1);
	free(explain(f->s, "192.0.2.1", 2));

	/* the list changed at its origin and moved: a's new entries name
	 * the new origin, b is untouched */
	copy = put_file(f, "a.copy", "# new\n203.0.113.0/24\n192.0.2.1\n");
	assert_int_equal(bg_store_set_entries(f->s, "a", "/a2", copy,
					      BG_FMT_AUTO, 0, 0), 2);
	free(explain(f->s, "198.51.100.1", 0));
	h = explain(f->s, "192.0.2.1", 2);
	assert_hit(&h[0], "a", "/a2", 3, "192.0.2.1", "192.0.2.1", 0, "");
	assert_hit(&h[1], "b", "/b", 1, "192.0.2.0/25", "192.0.2.0/25", 0, "");
	free(h);
	assert_int_equal(bg_store_source_get(f->s, "a", &got), 0);
	assert_int_equal(got.entries, 2);
	assert_string_equal(got.origin, "/a2");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM entries"), 3);

	/* an unreadable copy: an error, the old entries stay */
	assert_int_equal(bg_store_set_entries(f->s, "a", "/a3",
					      "/nonexistent/bloomgate/copy",
					      BG_FMT_AUTO, 0, 0), -ENOENT);
	assert_int_equal(bg_store_set_entries(f->s, "a", "/a3", copy, 99, 0, 0),
			 -EINVAL);
	free(explain(f->s, "203.0.113.9", 1));
	assert_int_equal(bg_store_source_get(f->s, "a", &got), 0);
	assert_string_equal(got.origin, "/a2");

	/* an empty list empties the source, and only it */
	copy = put_file(f, "a.copy", "");
	assert_int_equal(bg_store_set_entries(f->s, "a", NULL, copy,
					      BG_FMT_AUTO, 0, 0), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM entries"), 1);
}

/* A group of calls is seen by readers all at once, or not at all; a call
 * failing inside the group undoes only itself. */
static void test_transaction(void **state)
{
	struct fix *f = *state;
	struct bg_store_source src = { .name = "b", .path = "/b" }, got;
	struct bg_store *ro;
	const char *copy;

	open_store(f);
	assert_int_equal(bg_store_open_ro(f->state, &ro), 0);
	copy = put_file(f, "a.copy", "192.0.2.1\n");

	assert_int_equal(bg_store_begin(f->s), 0);
	assert_int_equal(bg_store_set_entries(f->s, "a", "/a", copy,
					      BG_FMT_AUTO, 0, 0), 1);
	/* fails inside the group: its own changes undone, not the group's */
	assert_int_equal(bg_store_set_entries(f->s, "a", "/a",
					      "/nonexistent/bloomgate/copy",
					      BG_FMT_AUTO, 0, 0), -ENOENT);
	assert_int_equal(bg_store_source_delete(f->s, "nope"), -ENOENT);
	assert_int_equal(bg_store_source_put(f->s, &src), 0);
	/* the writer sees its changes, a reader none yet */
	free(explain(f->s, "192.0.2.1", 1));
	free(explain(ro, "192.0.2.1", 0));
	assert_int_equal(bg_store_source_get(ro, "b", &got), -ENOENT);
	assert_int_equal(bg_store_commit(f->s), 0);
	free(explain(ro, "192.0.2.1", 1));
	assert_int_equal(bg_store_source_get(ro, "b", &got), 0);

	/* rolled back: none of it */
	assert_int_equal(bg_store_begin(f->s), 0);
	assert_int_equal(bg_store_source_delete(f->s, "a"), 0);
	assert_int_equal(bg_store_source_delete(f->s, "b"), 0);
	assert_int_equal(bg_store_rollback(f->s), 0);
	free(explain(f->s, "192.0.2.1", 1));
	assert_int_equal(bg_store_source_get(f->s, "b", &got), 0);
	bg_store_close(ro);
}

/* 200k entries, timed; nothing is asserted about time (CI machines vary),
 * everything about what was stored. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_import_200k(void **state)
{
	const size_t want = 200000;
	struct fix *f = *state;
	struct bg_explain_hit *h;
	char path[256];
	double t0, t1;
	FILE *fp;
	size_t i;

	open_store(f);
	snprintf(path, sizeof(path), "%s/big.copy", f->tmp);
	fp = fopen(path, "w");
	assert_non_null(fp);
	/* addresses spread over 10.0.0.0/8, a /24 every 100th line, and
	 * some IPv6: the index sees inserts all over its key range */
	for (i = 0; i < want; i++) {
		uint32_t a = (uint32_t)(i * 2654435761u) & 0xffffffu;

		if (i % 100 == 0)
			fprintf(fp, "10.%u.%u.0/24\n", a >> 16, (a >> 8) & 0xff);
		else if (i % 10 == 0)
			fprintf(fp, "2001:db8:%x::%x\n", (unsigned)(i >> 16),
				(unsigned)(i & 0xffff));
		else
			fprintf(fp, "10.%u.%u.%u # entry %zu\n", a >> 16,
				(a >> 8) & 0xff, a & 0xff, i);
	}
	assert_int_equal(fclose(fp), 0);

	t0 = now();
	assert_int_equal(bg_store_set_entries(f->s, "big", "/big", path,
					      BG_FMT_ADDR, 0, 0), (int)want);
	t1 = now();
	print_message("store: 200k entries imported in %.3f s (%.0f rows/s,"
		      " sanitizer build)\n", t1 - t0, (double)want / (t1 - t0));
	assert_int_equal(sql_int(f, "SELECT count(*) FROM entries"), want);
	/* line 1 is 10.0.0.0/24 (i = 0); line 2 is i = 1 */
	h = explain(f->s, "10.0.0.1", 1);
	assert_int_equal(h[0].line, 1);
	free(h);
	{
		uint32_t a = 2654435761u & 0xffffffu;
		char q[32];

		snprintf(q, sizeof(q), "10.%u.%u.%u", a >> 16, (a >> 8) & 0xff,
			 a & 0xff);
		h = explain(f->s, q, 1);
		assert_int_equal(h[0].line, 2);
		free(h);
	}
	h = explain(f->s, "2001:db8:0::a", 1);
	assert_int_equal(h[0].line, 11);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_create_reopen, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sources, setup, teardown),
		cmocka_unit_test(test_list_scan),
		cmocka_unit_test_setup_teardown(test_addr_entries, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_explain_uses_indexes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_name_entries, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_name_depth, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hosts_and_text, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transaction, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_import_200k, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
