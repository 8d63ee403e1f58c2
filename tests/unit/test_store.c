// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the agent's store (user/agent/store.c: the SQLite database
 * in the state directory, its sources, the upgrade of a version-1 file)
 * and its provenance indexes (user/agent/provenance.c: written from the
 * parse's entry sink, read by check). Each test gets a fresh temporary
 * state directory. What was written is checked through the API and, where
 * the API would hide a fault (schema version, journal mode, the bytes of
 * an index file), directly. Also bg_list_scan() (user/core/lists.c), which
 * check's re-reading of a recorded list goes through.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <sqlite3.h>

#include "bloomgate/bloom.h"
#include "bloomgate/dns.h"
#include "core/clock.h"
#include "core/domains.h"
#include "core/filter.h"
#include "core/format.h"
#include "core/lists.h"
#include "core/prepare.h"
#include "agent/provenance.h"
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

static off_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
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
	assert_int_equal(BG_STORE_SCHEMA, 3);
	/* the sources only: no table of entries */
	assert_int_equal(sql_int(f, "SELECT count(*) FROM sqlite_schema WHERE"
				    " type = 'table'"), 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM pragma_table_info"
				    "('sources') WHERE name LIKE 'index_%'"), 4);
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
	assert_string_equal(bg_store_dir(f->s), f->state);

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
	snprintf(s->rec.v.etag, sizeof(s->rec.v.etag), "\"etag-%d\"", k);
	snprintf(s->rec.v.last_modified, sizeof(s->rec.v.last_modified),
		 "Tue, 01 Dec 2026 12:00:%02d GMT", k);
	memset(s->rec.sha256, 'a' + k, 64);
	s->rec.last_ok = 1764590400.25 + k;
	s->rec.last_attempt = 1764590500.5 + k;
	snprintf(s->rec.last_error, sizeof(s->rec.last_error), "HTTP %d", 500 + k);
	s->rec.entries = 1000000 + k;
	s->rec.fetches = 10 + k;
	s->rec.failures = 2 + k;
	s->rec.not_modified = 7 + k;
	s->rec.rejected = 30 + k;
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
	assert_string_equal(a->rec.v.etag, b->rec.v.etag);
	assert_string_equal(a->rec.v.last_modified, b->rec.v.last_modified);
	assert_string_equal(a->rec.sha256, b->rec.sha256);
	assert_true(a->rec.last_ok == b->rec.last_ok);
	assert_true(a->rec.last_attempt == b->rec.last_attempt);
	assert_string_equal(a->rec.last_error, b->rec.last_error);
	assert_int_equal(a->rec.entries, b->rec.entries);
	assert_int_equal(a->rec.fetches, b->rec.fetches);
	assert_int_equal(a->rec.failures, b->rec.failures);
	assert_int_equal(a->rec.not_modified, b->rec.not_modified);
	assert_int_equal(a->rec.rejected, b->rec.rejected);
	assert_int_equal(a->generation, b->generation);
}

static void test_sources(void **state)
{
	struct fix *f = *state;
	struct bg_store_source a, b, c, got, *v;
	struct bg_store_index ix = { .origin = "https://elsewhere.example/z",
				     .format = BG_FMT_ADDR, .checksum = ~0ULL - 5,
				     .entries = 1ULL << 33, .bytes = 12345 };
	char sha[65];
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
	assert_string_equal(got.origin, ""); /* no index yet */
	assert_string_equal(got.index_sha256, "");

	/* the index record: every field, the checksum's 64 bits whole; kept
	 * across puts, which do not know it */
	memset(sha, 'e', 64);
	sha[64] = '\0';
	ix.sha256 = sha;
	assert_int_equal(bg_store_index_set(f->s, "zeta", &ix), 0);
	fill(&c, "zeta", 4);
	assert_int_equal(bg_store_source_put(f->s, &c), 0);
	assert_int_equal(bg_store_source_get(f->s, "zeta", &got), 0);
	assert_source_equal(&got, &c);
	assert_string_equal(got.origin, ix.origin);
	assert_int_equal(got.entries_format, BG_FMT_ADDR);
	assert_string_equal(got.index_sha256, sha);
	assert_true(got.index_checksum == ix.checksum);
	assert_true(got.index_entries == ix.entries);
	assert_int_equal(got.index_bytes, 12345);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM sources"), 2);
	/* cleared */
	assert_int_equal(bg_store_index_set(f->s, "zeta", NULL), 0);
	assert_int_equal(bg_store_source_get(f->s, "zeta", &got), 0);
	assert_string_equal(got.index_sha256, "");
	assert_int_equal(got.rec.fetches, c.rec.fetches);
	/* a row made by the index record alone */
	assert_int_equal(bg_store_index_set(f->s, "omega", &ix), 0);
	assert_int_equal(bg_store_source_get(f->s, "omega", &got), 0);
	assert_string_equal(got.url, "");
	assert_int_equal(bg_store_source_delete(f->s, "omega"), 0);
	/* names that cannot be file names */
	assert_int_equal(bg_store_index_set(f->s, "../x", &ix), -EINVAL);
	assert_int_equal(bg_store_index_set(f->s, ".hidden", &ix), -EINVAL);

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

	/* delete: the row; the other stays */
	assert_int_equal(bg_store_source_delete(f->s, "zeta"), 0);
	assert_int_equal(bg_store_source_get(f->s, "zeta", &got), -ENOENT);
	assert_int_equal(bg_store_source_delete(f->s, "zeta"), -ENOENT);
	assert_int_equal(bg_store_source_list(f->s, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].name, "alpha");
	free(v);
}

/* A group of calls is seen by readers all at once, or not at all; a call
 * failing inside the group undoes only itself. */
static void test_transaction(void **state)
{
	struct fix *f = *state;
	struct bg_store_source a = { .name = "a", .path = "/a" },
			       b = { .name = "b", .path = "/b" }, got;
	struct bg_store *ro;

	open_store(f);
	assert_int_equal(bg_store_open_ro(f->state, &ro), 0);

	assert_int_equal(bg_store_begin(f->s), 0);
	assert_int_equal(bg_store_source_put(f->s, &a), 0);
	/* fails inside the group: its own changes undone, not the group's */
	assert_int_equal(bg_store_index_set(f->s, "../a", NULL), -EINVAL);
	assert_int_equal(bg_store_source_delete(f->s, "nope"), -ENOENT);
	assert_int_equal(bg_store_source_put(f->s, &b), 0);
	/* the writer sees its changes, a reader none yet */
	assert_int_equal(bg_store_source_get(f->s, "a", &got), 0);
	assert_int_equal(bg_store_source_get(ro, "a", &got), -ENOENT);
	assert_int_equal(bg_store_source_get(ro, "b", &got), -ENOENT);
	assert_int_equal(bg_store_commit(f->s), 0);
	assert_int_equal(bg_store_source_get(ro, "a", &got), 0);
	assert_int_equal(bg_store_source_get(ro, "b", &got), 0);

	/* rolled back: none of it */
	assert_int_equal(bg_store_begin(f->s), 0);
	assert_int_equal(bg_store_source_delete(f->s, "a"), 0);
	assert_int_equal(bg_store_source_delete(f->s, "b"), 0);
	assert_int_equal(bg_store_rollback(f->s), 0);
	assert_int_equal(bg_store_source_get(f->s, "a", &got), 0);
	assert_int_equal(bg_store_source_get(f->s, "b", &got), 0);
	bg_store_close(ro);
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

/* ---- Indexes: helpers ----------------------------------------------------- */

static void sha256_hex(const char *data, size_t n, char out[65])
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int dn = 0, i;

	assert_true(EVP_Digest(data, n, d, &dn, EVP_sha256(), NULL));
	for (i = 0; i < dn; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void copy_path(struct fix *f, const char *name, char *out, size_t n)
{
	snprintf(out, n, "%s/lists/%s.list", f->state, name);
}

static void index_path(struct fix *f, const char *name, char *out, size_t n)
{
	assert_int_equal(bg_store_index_path(f->state, name, out, n), 0);
}

/* What a fetch leaves: the copy STATE/lists/NAME.list with text, and the
 * copy's SHA-256 in the source's row (the store opened first). */
static void fetched(struct fix *f, const char *name, const char *text)
{
	struct bg_store_source src;
	char path[256], dir[256];
	FILE *fp;

	snprintf(dir, sizeof(dir), "%s/lists", f->state);
	mkdir(dir, 0700);
	copy_path(f, name, path, sizeof(path));
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, strlen(text), fp), strlen(text));
	assert_int_equal(fclose(fp), 0);
	if (bg_store_source_get(f->s, name, &src)) {
		memset(&src, 0, sizeof(src));
		snprintf(src.name, sizeof(src.name), "%s", name);
	}
	sha256_hex(text, strlen(text), src.rec.sha256);
	assert_int_equal(bg_store_source_put(f->s, &src), 0);
}

/* The source as the agent hands it to the writer. */
static struct bg_prov_source psrc(struct fix *f, const char *name,
				  const char *origin, int format, int subdomains,
				  int allow)
{
	static char copies[8][256], shas[8][65];
	static int next;
	/* origin: a path ("/a") or a URL ("https://x/a") */
	int is_path = origin[0] == '/';
	struct bg_prov_source v = { .list = {
		.name = name, .url = is_path ? NULL : origin,
		.path = is_path ? origin : NULL, .format = (uint8_t)format,
		.subdomains = (uint8_t)subdomains, .allow = (uint8_t)allow } };
	struct bg_store_source row;
	int k = next++ % 8;

	copy_path(f, name, copies[k], sizeof(copies[k]));
	assert_int_equal(bg_store_source_get(f->s, name, &row), 0);
	snprintf(shas[k], sizeof(shas[k]), "%s", row.rec.sha256);
	v.copy = copies[k];
	v.sha256 = shas[k];
	return v;
}

/* A list fetched and indexed as an adopting agent does (its copy parsed
 * alone): returns what bg_prov_reindex() did. */
static int add_list(struct fix *f, const char *name, const char *origin,
		    const char *text, int format, int subdomains, int allow)
{
	struct bg_prov_source v;

	fetched(f, name, text);
	v = psrc(f, name, origin, format, subdomains, allow);
	return bg_prov_reindex(f->s, &v, 1, 0);
}

static void print_problems(const struct bg_prov_reader *r)
{
	const char *src, *why;
	size_t i;

	for (i = 0; bg_prov_problem(r, i, &src, &why); i++)
		print_message("problem: %s: %s\n", src, why);
}

/* The hits of a check of arg through a fresh reader, want of them; no
 * source may be a problem. Free them. */
static struct bg_explain_hit *explain(struct fix *f, const char *arg, size_t want)
{
	struct bg_prov_reader *r;
	struct bg_explain_hit *h;
	const char *src, *why;
	size_t n;

	assert_int_equal(bg_prov_open(f->s, &r), 0);
	assert_int_equal(bg_prov_find(r, arg, &h, &n), 0);
	print_problems(r);
	assert_int_equal(bg_prov_problem(r, 0, &src, &why), 0);
	bg_prov_close(r);
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

/* The one problem of a fresh reader: its source, and a reason holding
 * what; the hits of arg leave that source out (got of them). */
static void expect_problem(struct fix *f, const char *source, const char *what,
			   const char *arg, size_t got)
{
	struct bg_prov_reader *r;
	struct bg_explain_hit *h;
	const char *src, *why;
	size_t n, i;

	assert_int_equal(bg_prov_open(f->s, &r), 0);
	assert_int_equal(bg_prov_find(r, arg, &h, &n), 0);
	print_problems(r);
	assert_int_equal(bg_prov_problem(r, 0, &src, &why), 1);
	assert_string_equal(src, source);
	if (!strstr(why, what))
		fail_msg("'%s' does not say '%s'", why, what);
	assert_int_equal(bg_prov_problem(r, 1, &src, &why), 0);
	assert_int_equal(n, got);
	for (i = 0; i < n; i++)
		assert_string_not_equal(h[i].source, source);
	free(h);
	bg_prov_close(r);
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

/* ---- Indexes: what check finds -------------------------------------------- */

/* Addresses and prefixes of both families and several lengths, block and
 * allow: every indexed prefix containing the address, and nothing else. */
static void test_addr_entries(void **state)
{
	struct fix *f = *state;
	const char *url = "https://x.example/fire.netset";
	struct bg_store_source row;
	struct bg_explain_hit *h;

	open_store(f);
	assert_int_equal(add_list(f, "fire", url,
				  "# FireHOL\n"                  /* 1 */
				  "10.0.0.0/8\n"                 /* 2 */
				  "  10.1.0.0/16   # nested\r\n" /* 3 */
				  "not an address\n"             /* 4: rejected */
				  "10.1.2.3/24\n"                /* 5: host bits */
				  "2001:db8::/32\n"              /* 6 */
				  "10.1.2.3\n"                   /* 7 */
				  "2001:db8::1\n"                /* 8 */
				  "2001:db8:0:1::/64\n"          /* 9 */
				  "0.0.0.0/0\n",                 /* 10: too wide */
				  BG_FMT_AUTO, 0, 0), 1);
	assert_int_equal(bg_store_source_get(f->s, "fire", &row), 0);
	assert_int_equal(row.index_entries, 7); /* the wide one loads nothing */
	assert_string_equal(row.origin, url);
	assert_string_equal(row.index_sha256, row.rec.sha256);

	/* the allow list of another source, nesting inside the first */
	assert_int_equal(add_list(f, "ok", "/etc/ok.txt",
				  "10.1.2.0/25\n0.0.0.0/0\n::/0\n", BG_FMT_ADDR,
				  0, 1), 1);

	h = explain(f, "10.1.2.3", 6);
	assert_hit(&h[0], "fire", url, 2, "10.0.0.0/8", "10.0.0.0/8", 0, "");
	assert_hit(&h[1], "fire", url, 3, "10.1.0.0/16   # nested",
		   "10.1.0.0/16", 0, "");
	assert_hit(&h[2], "fire", url, 5, "10.1.2.3/24", "10.1.2.0/24", 0, "");
	assert_hit(&h[3], "fire", url, 7, "10.1.2.3", "10.1.2.3", 0, "");
	assert_hit(&h[4], "ok", "/etc/ok.txt", 1, "10.1.2.0/25", "10.1.2.0/25",
		   1, "");
	assert_hit(&h[5], "ok", "/etc/ok.txt", 2, "0.0.0.0/0", "0.0.0.0/0", 1, "");
	free(h);
	/* the edges of a prefix: its first and last address, and one past */
	free(explain(f, "10.1.2.128", 4));
	free(explain(f, "10.1.255.255", 3));
	free(explain(f, "10.2.0.0", 2));
	free(explain(f, "9.255.255.255", 1));
	h = explain(f, "2001:db8::1", 3);
	assert_hit(&h[0], "fire", url, 6, "2001:db8::/32", "2001:db8::/32", 0, "");
	assert_hit(&h[1], "fire", url, 8, "2001:db8::1", "2001:db8::1", 0, "");
	assert_hit(&h[2], "ok", "/etc/ok.txt", 3, "::/0", "::/0", 1, "");
	free(h);
	h = explain(f, "2001:db8:0:1:ffff::", 3);
	assert_hit(&h[1], "fire", url, 9, "2001:db8:0:1::/64",
		   "2001:db8:0:1::/64", 0, "");
	free(h);
	free(explain(f, "2001:db9::", 1));
	/* neither an address nor a name */
	{
		struct bg_prov_reader *r;
		struct bg_explain_hit *x = (void *)1;
		size_t n = 1;

		assert_int_equal(bg_prov_open(f->s, &r), 0);
		assert_int_equal(bg_prov_find(r, "10.0.0.0/8", &x, &n), -EINVAL);
		assert_int_equal(bg_prov_find(r, "bad..name", &x, &n), -EINVAL);
		assert_null(x);
		assert_int_equal(n, 0);
		bg_prov_close(r);
	}
}

/* Names of each kind, allow rules among them, the exact/tree/subdomains
 * semantics of the datapath's probes. */
static void test_name_entries(void **state)
{
	struct fix *f = *state;
	const char *url = "https://x.example/ads.txt";
	struct bg_explain_hit *h;

	open_store(f);
	assert_int_equal(add_list(f, "ads", url,
				  "[Adblock Plus 2.0]\n"            /* 1 */
				  "! comment\n"                     /* 2 */
				  "||ads.example.net^\n"            /* 3: tree */
				  "||*.track.example.net^\n"        /* 4: subs only */
				  "@@||ok.ads.example.net^\n"       /* 5: allow, tree */
				  "|exact.example.org^\n"           /* 6: exact */
				  "example.com##.banner\n"          /* 7: rejected */
				  "  ||Example.COM^   # upper\n",   /* 8 */
				  BG_FMT_AUTO, 0, 0), 1);
	assert_int_equal(add_list(f, "ok", "/etc/allow.txt", "cdn.example.com\n",
				  BG_FMT_PLAIN, 1, 1), 1);

	/* under a subdomain rule */
	h = explain(f, "a.b.ads.example.net", 1);
	assert_hit(&h[0], "ads", url, 3, "||ads.example.net^", "ads.example.net",
		   0, "ads.example.net");
	assert_int_equal(h[0].kind, BG_NAME_TREE);
	free(h);
	/* the tree rule's own name; an allow rule under it */
	free(explain(f, "ads.example.net.", 1));
	h = explain(f, "OK.ads.example.net", 2);
	assert_hit(&h[0], "ads", url, 3, "||ads.example.net^", "ads.example.net",
		   0, "ads.example.net");
	assert_hit(&h[1], "ads", url, 5, "@@||ok.ads.example.net^",
		   "ok.ads.example.net", 1, "");
	assert_int_equal(h[1].kind, BG_NAME_TREE);
	free(h);
	/* subdomains only: not the name itself */
	free(explain(f, "track.example.net", 0));
	h = explain(f, "x.track.example.net", 1);
	assert_int_equal(h[0].kind, BG_NAME_SUBS);
	assert_string_equal(h[0].parent, "track.example.net");
	assert_string_equal(h[0].text, "||*.track.example.net^");
	free(h);
	/* exact: the name only */
	h = explain(f, "exact.example.org", 1);
	assert_int_equal(h[0].kind, BG_NAME_EXACT);
	free(h);
	free(explain(f, "www.exact.example.org", 0));
	/* the allow list is plain with subdomains: its entries are trees,
	 * and allow */
	h = explain(f, "www.cdn.example.com", 2);
	assert_hit(&h[0], "ads", url, 8, "||Example.COM^   # upper",
		   "example.com", 0, "example.com");
	assert_hit(&h[1], "ok", "/etc/allow.txt", 1, "cdn.example.com",
		   "cdn.example.com", 1, "cdn.example.com");
	free(h);
	h = explain(f, "example.com", 1);
	assert_hit(&h[0], "ads", url, 8, "||Example.COM^   # upper",
		   "example.com", 0, "");
	free(h);
}

/* Parents deeper than BG_DNS_SUFFIX_MAX labels are never probed by the
 * datapath, so check does not name them either; the name itself is found
 * at any depth. */
static void test_name_depth(void **state)
{
	struct fix *f = *state;
	char list[1024], q[600], deep[512];
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
	assert_int_equal(add_list(f, "deep", "/d", list, BG_FMT_ADBLOCK, 0, 0), 1);
	{
		struct bg_explain_hit *h = explain(f, q, 1);

		assert_int_equal(h[0].line, 2);
		free(h);
	}
	/* the 11-label name itself: its own rule, and the 10-label parent */
	free(explain(f, deep, 2));
}

/* The line's text as check quotes it, straight from the copy: a hosts line
 * naming several hosts (one entry each, same line), a line cut on a UTF-8
 * boundary, a byte-order mark, CRLF, and lines far past a step of the
 * lines table with long runs of comments in between. */
static void test_quoted_text(void **state)
{
	struct fix *f = *state;
	char want[BG_EXPLAIN_TEXT_MAX + 4], q[64], *list;
	struct bg_explain_hit *h;
	size_t cut, o = 0, cap = 1 << 20, i;

	open_store(f);
	assert_int_equal(add_list(f, "hosts", "/h",
				  "127.0.0.1 localhost\n"
				  "0.0.0.0 a.example b.example\n", BG_FMT_AUTO,
				  1, 0), 1);
	h = explain(f, "b.example", 1);
	assert_hit(&h[0], "hosts", "/h", 2, "0.0.0.0 a.example b.example",
		   "b.example", 0, "");
	assert_int_equal(h[0].kind, BG_NAME_EXACT); /* hosts: never a tree */
	free(h);
	free(explain(f, "x.a.example", 0));

	/* a long line is cut on a UTF-8 boundary, "..." after: byte 200 is
	 * inside a two-byte character (199 bytes, then "é" at 199..200) */
	list = calloc(1, cap);
	assert_non_null(list);
	strcpy(list, "192.0.2.1 #");
	memset(list + strlen(list), 'x', 199 - strlen(list));
	strcat(list, "\xc3\xa9\xc3\xa9 and more\n");
	assert_int_equal(add_list(f, "long", "/l", list, BG_FMT_ADDR, 0, 0), 1);
	h = explain(f, "192.0.2.1", 1);
	cut = 199;
	memcpy(want, list, cut);
	strcpy(want + cut, "...");
	assert_string_equal(h[0].text, want);
	free(h);

	/* BOM and CRLF on line 1, then blocks of comments across many steps
	 * of BG_PROV_LINE_STEP lines: entry k on line 1 + 700 * k */
	o = (size_t)snprintf(list, cap, "\xef\xbb\xbf 198.51.100.0 # first\r\n");
	for (i = 1; i <= 40; i++) {
		size_t c;

		for (c = 0; c < 699; c++)
			o += (size_t)snprintf(list + o, cap - o, "# comment %zu.%zu\n",
					      i, c);
		o += (size_t)snprintf(list + o, cap - o, "\t198.51.100.%zu\t# line %zu\r\n",
				      i, 1 + 700 * i);
		assert_true(o < cap - 100);
	}
	assert_int_equal(add_list(f, "sparse", "/s", list, BG_FMT_ADDR, 0, 0), 1);
	h = explain(f, "198.51.100.0", 1);
	assert_hit(&h[0], "sparse", "/s", 1, "198.51.100.0 # first",
		   "198.51.100.0", 0, "");
	free(h);
	for (i = 1; i <= 40; i++) {
		char t[64];

		snprintf(q, sizeof(q), "198.51.100.%zu", i);
		snprintf(t, sizeof(t), "198.51.100.%zu\t# line %zu", i, 1 + 700 * i);
		h = explain(f, q, 1);
		assert_hit(&h[0], "sparse", "/s", 1 + 700 * i, t, q, 0, "");
		free(h);
	}
	free(list);
}

/* Hits are ordered by source, then line; one key repeated on more lines
 * than BG_PROV_HITS_MAX names the first of them. */
static void test_order_and_repeats(void **state)
{
	struct fix *f = *state;
	struct bg_explain_hit *h;
	size_t cap = 64 * (BG_PROV_HITS_MAX + 600), o = 0, i;
	char *list = malloc(cap);

	assert_non_null(list);
	open_store(f);
	for (i = 0; i < BG_PROV_HITS_MAX + 500; i++)
		o += (size_t)snprintf(list + o, cap - o, "203.0.113.5 # %zu\n", i);
	assert_int_equal(add_list(f, "zz", "/z", list, BG_FMT_ADDR, 0, 0), 1);
	assert_int_equal(add_list(f, "aa", "/a", "203.0.113.0/24\n#\n203.0.113.5\n",
				  BG_FMT_ADDR, 0, 0), 1);
	h = explain(f, "203.0.113.5", BG_PROV_HITS_MAX + 2);
	assert_hit(&h[0], "aa", "/a", 1, "203.0.113.0/24", "203.0.113.0/24", 0, "");
	assert_hit(&h[1], "aa", "/a", 3, "203.0.113.5", "203.0.113.5", 0, "");
	for (i = 0; i < BG_PROV_HITS_MAX; i++) {
		char t[64];

		snprintf(t, sizeof(t), "203.0.113.5 # %zu", i);
		assert_hit(&h[2 + i], "zz", "/z", i + 1, t, "203.0.113.5", 0, "");
	}
	free(h);
	free(list);
}

/* ---- Indexes: writing ------------------------------------------------------ */

/* A re-index with a new copy replaces that source's entries only; one
 * whose copy (and way of parsing it) is what its index records is not
 * written again; force, or another format, writes it. */
static void test_replace_and_unchanged(void **state)
{
	struct fix *f = *state;
	struct bg_store_source got;
	struct bg_prov_writer *w;
	struct bg_prov_source v;
	struct bg_explain_hit *h;
	char path[256];
	struct stat st0, st1;

	open_store(f);
	assert_int_equal(add_list(f, "a", "/a", "192.0.2.0/24\n198.51.100.1\n",
				  BG_FMT_AUTO, 0, 0), 1);
	assert_int_equal(add_list(f, "b", "/b", "192.0.2.0/25\n", BG_FMT_AUTO,
				  0, 0), 1);
	free(explain(f, "192.0.2.1", 2));

	/* the list changed at its origin and moved */
	assert_int_equal(add_list(f, "a", "/a2", "# new\n203.0.113.0/24\n192.0.2.1\n",
				  BG_FMT_AUTO, 0, 0), 1);
	free(explain(f, "198.51.100.1", 0));
	h = explain(f, "192.0.2.1", 2);
	assert_hit(&h[0], "a", "/a2", 3, "192.0.2.1", "192.0.2.1", 0, "");
	assert_hit(&h[1], "b", "/b", 1, "192.0.2.0/25", "192.0.2.0/25", 0, "");
	free(h);
	assert_int_equal(bg_store_source_get(f->s, "a", &got), 0);
	assert_int_equal(got.index_entries, 2);
	assert_string_equal(got.origin, "/a2");

	/* the same copy again: nothing written, the file untouched */
	index_path(f, "b", path, sizeof(path));
	assert_int_equal(stat(path, &st0), 0);
	v = psrc(f, "b", "/b", BG_FMT_AUTO, 0, 0);
	assert_int_equal(bg_prov_begin(f->state, &v, 1, &w), 0);
	assert_false(bg_prov_changed(w, 0));
	bg_prov_abort(w);
	assert_int_equal(bg_prov_reindex(f->s, &v, 1, 0), 0);
	assert_int_equal(stat(path, &st1), 0);
	assert_int_equal(st0.st_ino, st1.st_ino);
	/* another way of parsing it, or force: written anew */
	v.list.format = BG_FMT_ADDR;
	assert_int_equal(bg_prov_begin(f->state, &v, 1, &w), 0);
	assert_true(bg_prov_changed(w, 0));
	bg_prov_abort(w);
	v.list.format = BG_FMT_AUTO;
	v.force = 1;
	assert_int_equal(bg_prov_reindex(f->s, &v, 1, 0), 1);
	assert_int_equal(stat(path, &st1), 0);
	assert_int_not_equal(st0.st_ino, st1.st_ino);
	free(explain(f, "192.0.2.1", 2));

	/* an unreadable copy: an error, the old index stays in use */
	v = psrc(f, "b", "/b", BG_FMT_AUTO, 0, 0);
	v.force = 1;
	v.copy = "/nonexistent/bloomgate/copy";
	assert_true(bg_prov_reindex(f->s, &v, 1, 0) < 0);
	free(explain(f, "192.0.2.1", 2));
	/* a name that cannot be a file name */
	v.list.name = "../b";
	assert_int_equal(bg_prov_begin(f->state, &v, 1, &w), -EINVAL);

	/* an empty list: an empty index, the source names nothing */
	assert_int_equal(add_list(f, "a", "/a", "", BG_FMT_AUTO, 0, 0), 1);
	free(explain(f, "192.0.2.1", 1));
	assert_int_equal(bg_store_source_get(f->s, "a", &got), 0);
	assert_int_equal(got.index_entries, 0);
}

/* The rebuild's path: one parse (bg_load_prepare()) builds the filter and
 * feeds the writer, the commit comes after, check explains the filter
 * through the indexes (bg_explain_found()). */
static void test_rebuild_pipeline(void **state)
{
	struct fix *f = *state;
	struct bg_load_opts o = { .fpr = 1e-6 };
	struct bg_prov_source v[3];
	struct bg_prov_writer *w;
	struct bg_prov_reader *r;
	struct bg_load_report rep;
	struct bg_explanation x;
	struct bg_blocklist bl;
	struct bg_sources srcs;
	char path[256];
	void *mem;
	size_t i;

	open_store(f);
	fetched(f, "fire", "192.0.2.0/24 # docs\n2001:db8::1\n");
	fetched(f, "ads", "||ads.example.com^\n@@||ok.ads.example.com^\n");
	fetched(f, "ok", "192.0.2.7\n");
	v[0] = psrc(f, "fire", "https://x/fire", BG_FMT_AUTO, 0, 0);
	v[1] = psrc(f, "ads", "https://x/ads", BG_FMT_AUTO, 0, 0);
	v[2] = psrc(f, "ok", "/etc/ok", BG_FMT_AUTO, 0, 1);
	bg_sources_init(&srcs);
	for (i = 0; i < 3; i++)
		assert_int_equal(bg_sources_add(&srcs, v[i].copy, v[i].list.allow), 0);
	assert_int_equal(bg_prov_begin(f->state, v, 3, &w), 0);
	o.sources = &srcs;
	o.entry = bg_prov_entry;
	o.entry_ctx = w;
	bg_load_report_init(&rep);
	assert_int_equal(bg_load_prepare(&o, &bl, &rep), 0);
	mem = calloc(1, rep.plan.bytes);
	assert_non_null(mem);
	bg_filter_build(mem, &rep.plan, 42, &bl);
	assert_int_equal(bg_prov_commit(w, f->s), 3);

	assert_int_equal(bg_prov_open(f->s, &r), 0);
	assert_int_equal(bg_explain_found(mem, bg_prov_find, r, "192.0.2.7", &x), 0);
	assert_true(x.listed && x.allowed);
	assert_int_equal(x.block.n, 1);
	assert_string_equal(x.block.v[0].path, "fire (https://x/fire)");
	assert_int_equal(x.block.v[0].line, 1);
	assert_string_equal(x.block.v[0].text, "192.0.2.0/24");
	assert_int_equal(x.allow.n, 1);
	assert_string_equal(x.allow.v[0].path, "ok (/etc/ok)");
	bg_explain_free(&x);
	assert_int_equal(bg_explain_found(mem, bg_prov_find, r, "X.Ads.Example.com.",
					  &x), 0);
	assert_true(x.listed);
	assert_int_equal(x.block.n, 1);
	assert_string_equal(x.block.v[0].text, "||ads.example.com^");
	assert_string_equal(x.block.v[0].parent, "ads.example.com");
	bg_explain_free(&x);
	bg_prov_close(r);

	/* a rebuild that failed before its swap writes nothing */
	index_path(f, "fire", path, sizeof(path));
	v[0].force = 1;
	assert_int_equal(bg_prov_begin(f->state, v, 3, &w), 0);
	assert_true(bg_prov_changed(w, 0));
	assert_false(bg_prov_changed(w, 1));
	assert_false(bg_prov_changed(w, 7));
	bg_prov_abort(w);
	free(explain(f, "192.0.2.1", 1));

	bg_blocklist_free(&bl);
	bg_load_report_free(&rep);
	bg_sources_free(&srcs);
	free(mem);
}

/* Two workers feed one writer at once, as a parallel parse does (core/io.h:
 * each worker in line order, the workers in any order): every entry is
 * found with its line and text, across the place where the workers'
 * halves meet inside one step of the lines table. */
struct feed {
	struct bg_prov_writer *w;
	unsigned int worker;
	const char *buf;
	size_t first, last; /* lines, 1-based, inclusive */
};

static void *feed_worker(void *arg)
{
	struct feed *fd = arg;
	const char *p = fd->buf;
	size_t line = 1;

	while (*p) {
		const char *nl = strchr(p, '\n');

		if (line >= fd->first && line <= fd->last && *p != '#') {
			struct bg_entry_ref e = {
				.source = 0, .line = line,
				.line_off = (uint64_t)(p - fd->buf),
				.line_len = (uint32_t)(nl - p),
			};
			char tok[64];
			struct bg_key4 k4;
			struct bg_key6 k6;
			int kind;

			snprintf(tok, sizeof(tok), "%.*s", (int)(nl - p), p);
			*strchrnul(tok, ' ') = '\0';
			kind = bg_parse_addr(tok, &k4, &k6, NULL);
			if (kind) {
				e.kind = (uint8_t)kind;
				e.key = kind == BG_KEY_IPV4 ? (const void *)&k4
							    : (const void *)&k6;
			} else {
				e.kind = BG_ENTRY_NAME;
				e.name_kind = BG_NAME_EXACT;
				e.key = tok;
			}
			bg_prov_entry(fd->w, fd->worker, &e);
		}
		p = nl + 1;
		line++;
	}
	return NULL;
}

static void test_two_workers(void **state)
{
	const size_t lines = 20000, half = 9999; /* 9999 % 256 != 0 */
	struct fix *f = *state;
	size_t cap = lines * 40, o = 0, i;
	char *list = malloc(cap);
	struct bg_prov_source v;
	struct feed fd[2];
	pthread_t t[2];

	assert_non_null(list);
	open_store(f);
	for (i = 1; i <= lines; i++) {
		if (i % 7 == 0)
			o += (size_t)snprintf(list + o, cap - o, "# c %zu\n", i);
		else if (i % 5 == 0)
			o += (size_t)snprintf(list + o, cap - o, "h%zu.example n%zu\n",
					      i, i);
		else if (i % 3 == 0)
			o += (size_t)snprintf(list + o, cap - o, "2001:db8::%zx l%zu\n",
					      i, i);
		else
			o += (size_t)snprintf(list + o, cap - o, "10.0.%zu.%zu l%zu\n",
					      i / 256, i % 256, i);
	}
	fetched(f, "par", list);
	v = psrc(f, "par", "/par", BG_FMT_ADDR, 0, 0);
	assert_int_equal(bg_prov_begin(f->state, &v, 1, &fd[0].w), 0);
	fd[1].w = fd[0].w;
	for (i = 0; i < 2; i++) {
		fd[i].worker = (unsigned int)(i ? 5 : 0);
		fd[i].buf = list;
		fd[i].first = i ? half + 1 : 1;
		fd[i].last = i ? lines : half;
		assert_int_equal(pthread_create(&t[i], NULL, feed_worker, &fd[i]), 0);
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(bg_prov_commit(fd[0].w, f->s), 1);

	{
		struct bg_prov_reader *r;

		assert_int_equal(bg_prov_open(f->s, &r), 0);
		for (i = 1; i <= lines; i++) {
			struct bg_explain_hit *h;
			char q[48], text[96];
			size_t n;

			if (i % 7 == 0)
				continue;
			if (i % 5 == 0) {
				snprintf(q, sizeof(q), "h%zu.example", i);
				snprintf(text, sizeof(text), "%s n%zu", q, i);
			} else if (i % 3 == 0) {
				snprintf(q, sizeof(q), "2001:db8::%zx", i);
				snprintf(text, sizeof(text), "%s l%zu", q, i);
			} else {
				snprintf(q, sizeof(q), "10.0.%zu.%zu", i / 256, i % 256);
				snprintf(text, sizeof(text), "%s l%zu", q, i);
			}
			assert_int_equal(bg_prov_find(r, q, &h, &n), 0);
			assert_int_equal(n, 1);
			assert_int_equal(h[0].line, i);
			assert_string_equal(h[0].text, text);
			free(h);
		}
		bg_prov_close(r);
	}
	free(list);
}

/* 200k entries, timed; nothing is asserted about time (CI machines vary),
 * everything about what was written, and its size: at most 16 bytes an
 * entry on disk. */
static void test_index_200k(void **state)
{
	const size_t want = 200000;
	struct fix *f = *state;
	struct bg_explain_hit *h;
	struct bg_store_source row;
	size_t cap = want * 40, o = 0, i;
	char *list = malloc(cap), path[256];
	struct bg_prov_source v;
	double t0, t1;

	assert_non_null(list);
	open_store(f);
	/* addresses spread over 10.0.0.0/8, a /24 every 100th line, and
	 * some IPv6 */
	for (i = 0; i < want; i++) {
		uint32_t a = (uint32_t)(i * 2654435761u) & 0xffffffu;

		if (i % 100 == 0)
			o += (size_t)snprintf(list + o, cap - o, "10.%u.%u.0/24\n",
					      a >> 16, (a >> 8) & 0xff);
		else if (i % 10 == 0)
			o += (size_t)snprintf(list + o, cap - o, "2001:db8:%x::%x\n",
					      (unsigned)(i >> 16),
					      (unsigned)(i & 0xffff));
		else
			o += (size_t)snprintf(list + o, cap - o,
					      "10.%u.%u.%u # entry %zu\n", a >> 16,
					      (a >> 8) & 0xff, a & 0xff, i);
	}
	fetched(f, "big", list);
	v = psrc(f, "big", "/big", BG_FMT_ADDR, 0, 0);
	t0 = bg_mono();
	assert_int_equal(bg_prov_reindex(f->s, &v, 1, 0), 1);
	t1 = bg_mono();
	index_path(f, "big", path, sizeof(path));
	print_message("provenance: 200k entries parsed and indexed in %.3f s, "
		      "%.2f bytes an entry (sanitizer build)\n", t1 - t0,
		      (double)file_size(path) / (double)want);
	assert_true(file_size(path) <= (off_t)(16 * want));
	assert_int_equal(bg_store_source_get(f->s, "big", &row), 0);
	assert_int_equal(row.index_entries, want);
	assert_int_equal(row.index_bytes, file_size(path));
	/* line 1 is 10.0.0.0/24 (i = 0); line 2 is i = 1 */
	h = explain(f, "10.0.0.1", 1);
	assert_int_equal(h[0].line, 1);
	free(h);
	{
		uint32_t a = 2654435761u & 0xffffffu;
		char q[32], t[64];

		snprintf(q, sizeof(q), "10.%u.%u.%u", a >> 16, (a >> 8) & 0xff,
			 a & 0xff);
		snprintf(t, sizeof(t), "%s # entry 1", q);
		h = explain(f, q, 1);
		assert_int_equal(h[0].line, 2);
		assert_string_equal(h[0].text, t);
		free(h);
	}
	h = explain(f, "2001:db8:0::a", 1);
	assert_int_equal(h[0].line, 11);
	free(h);
	free(list);
}

/* ---- Indexes: removal ------------------------------------------------------- */

/* A source deleted, or pruned as gone from the config, leaves the store
 * and its index file: check names it no more, and reports nothing. */
static void test_delete_and_prune(void **state)
{
	struct fix *f = *state;
	const char *keep[] = { "b", "c" };
	char pa[256], pb[256], orphan[300], tmp[300];
	struct bg_store_source got;

	open_store(f);
	assert_int_equal(add_list(f, "a", "/a", "192.0.2.1\n", BG_FMT_ADDR, 0, 0), 1);
	assert_int_equal(add_list(f, "b", "/b", "192.0.2.1\n", BG_FMT_ADDR, 0, 0), 1);
	assert_int_equal(add_list(f, "c", "/c", "192.0.2.1\n", BG_FMT_ADDR, 0, 0), 1);
	assert_int_equal(add_list(f, "d", "/d", "192.0.2.1\n", BG_FMT_ADDR, 0, 0), 1);
	free(explain(f, "192.0.2.1", 4));

	index_path(f, "a", pa, sizeof(pa));
	assert_int_equal(access(pa, F_OK), 0);
	assert_int_equal(bg_store_source_delete(f->s, "a"), 0);
	assert_int_equal(access(pa, F_OK), -1);
	assert_int_equal(bg_store_source_get(f->s, "a", &got), -ENOENT);
	free(explain(f, "192.0.2.1", 3));

	/* prune: d goes; so does an orphan file and a removed source's
	 * temporary file; b's (it may be being written) and c's stay */
	snprintf(orphan, sizeof(orphan), "%s/index/zz.idx", f->state);
	put_file(f, "state/index/zz.idx", "x");
	snprintf(tmp, sizeof(tmp), "%s/index/.d.idx.123456", f->state);
	put_file(f, "state/index/.d.idx.123456", "x");
	put_file(f, "state/index/.b.idx.123456", "x");
	assert_int_equal(bg_store_prune(f->s, keep, N(keep)), 1);
	assert_int_equal(bg_store_source_get(f->s, "d", &got), -ENOENT);
	index_path(f, "d", pa, sizeof(pa));
	assert_int_equal(access(pa, F_OK), -1);
	assert_int_equal(access(orphan, F_OK), -1);
	assert_int_equal(access(tmp, F_OK), -1);
	snprintf(tmp, sizeof(tmp), "%s/index/.b.idx.123456", f->state);
	assert_int_equal(access(tmp, F_OK), 0);
	index_path(f, "b", pb, sizeof(pb));
	assert_int_equal(access(pb, F_OK), 0);
	{
		struct bg_explain_hit *h = explain(f, "192.0.2.1", 2);

		assert_string_equal(h[0].source, "b");
		assert_string_equal(h[1].source, "c");
		free(h);
	}
	/* b's next index write clears what a killed writer left */
	{
		struct bg_prov_source v = psrc(f, "b", "/b", BG_FMT_ADDR, 0, 0);

		v.force = 1;
		assert_int_equal(bg_prov_reindex(f->s, &v, 1, 0), 1);
		assert_int_equal(access(tmp, F_OK), -1);
	}
	assert_int_equal(bg_store_prune(f->s, keep, N(keep)), 0);
	assert_int_equal(bg_store_prune(f->s, NULL, 0), 2);
	free(explain(f, "192.0.2.1", 0));
}

/* ---- Indexes: bad input ------------------------------------------------------ */

/* A list of a few thousand entries: an index of several blocks. */
static char *blocks_list(size_t n)
{
	char *list = malloc(n * 24);
	size_t o = 0, i;

	assert_non_null(list);
	for (i = 0; i < n; i++)
		o += (size_t)snprintf(list + o, n * 24 - o, "10.9.%zu.%zu\n",
				      i / 256, i % 256);
	return list;
}

static void flip(const char *path, off_t off)
{
	unsigned char c;
	int fd = open(path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &c, 1, off), 1);
	c ^= 0x20;
	assert_int_equal(pwrite(fd, &c, 1, off), 1);
	close(fd);
}

/* Verify (in full, as the agent's start does) finds one bad source, with
 * a reason holding what. */
static void expect_bad(struct fix *f, const char *name, int err, const char *what)
{
	struct bg_prov_bad *bad;
	size_t n;

	assert_int_equal(bg_prov_verify(f->s, 0, &bad, &n), 0);
	if (n != 1)
		fail_msg("%zu bad sources", n);
	assert_string_equal(bad[0].name, name);
	assert_int_equal(bad[0].err, err);
	if (!strstr(bad[0].why, what))
		fail_msg("'%s' does not say '%s'", bad[0].why, what);
	free(bad);
}

static void restore(struct fix *f, const char *name, const char *list)
{
	struct bg_prov_bad *bad;
	size_t n;

	/* as the agent's start: dropped, then written anew */
	assert_int_equal(bg_prov_verify(f->s, 1, &bad, &n), 0);
	free(bad);
	assert_int_equal(add_list(f, name, "/c", list, BG_FMT_ADDR, 0, 0), 1);
	assert_int_equal(bg_prov_verify(f->s, 0, &bad, &n), 0);
	assert_int_equal(n, 0);
	free(bad);
}

/* Every address of the list checked: no hit ever names a wrong line, and
 * (the index being corrupt) at least one check finds it out. */
static void never_misled(struct fix *f, size_t n)
{
	struct bg_prov_reader *r;
	const char *src, *why;
	size_t i, k;
	int caught = 0;

	assert_int_equal(bg_prov_open(f->s, &r), 0);
	for (i = 0; i < n; i++) {
		struct bg_explain_hit *h;
		char q[32];

		snprintf(q, sizeof(q), "10.9.%zu.%zu", i / 256, i % 256);
		assert_int_equal(bg_prov_find(r, q, &h, &k), 0);
		while (k--) {
			if (strcmp(h[k].source, "c"))
				continue; /* "ok" lists 10.9.0.1 too */
			assert_int_equal(h[k].line, i + 1);
			assert_string_equal(h[k].text, q);
		}
		free(h);
	}
	caught = bg_prov_problem(r, 0, &src, &why);
	if (caught && !strstr(why, "block"))
		fail_msg("reason '%s'", why);
	bg_prov_close(r);
	assert_true(caught);
}

static void test_corrupt_and_stale(void **state)
{
	const size_t n = 3000;
	struct fix *f = *state;
	struct bg_store_source row;
	struct bg_explain_hit *h;
	char path[256], copy[256];
	char *list = blocks_list(n);
	off_t size;
	int fd;

	open_store(f);
	assert_int_equal(add_list(f, "ok", "/ok", "10.9.0.1\n", BG_FMT_ADDR, 0, 0), 1);
	assert_int_equal(add_list(f, "c", "/c", list, BG_FMT_ADDR, 0, 0), 1);
	index_path(f, "c", path, sizeof(path));
	copy_path(f, "c", copy, sizeof(copy));
	size = file_size(path);
	free(explain(f, "10.9.0.1", 2));

	/* truncated, as a half-written file would be */
	assert_int_equal(truncate(path, size - 100), 0);
	expect_problem(f, "c", "truncated", "10.9.0.1", 1);
	expect_bad(f, "c", -EBADMSG, "truncated");
	assert_int_equal(truncate(path, 100), 0);
	expect_problem(f, "c", "truncated", "10.9.0.1", 1);
	assert_int_equal(truncate(path, 0), 0);
	expect_problem(f, "c", "truncated", "10.9.0.1", 1);
	restore(f, "c", list);

	/* a flipped byte: in the header (its tail too), the sums table, the
	 * records, the lines table */
	flip(path, 9); /* the version */
	expect_problem(f, "c", "header's checksum", "10.9.0.1", 1);
	expect_bad(f, "c", -EPROTO, "or version");
	restore(f, "c", list);
	flip(path, 300); /* the source's name */
	expect_problem(f, "c", "header's checksum", "10.9.0.1", 1);
	expect_bad(f, "c", -EBADMSG, "header's checksum");
	restore(f, "c", list);
	flip(path, 4000);
	expect_problem(f, "c", "header's checksum", "10.9.0.1", 1);
	restore(f, "c", list);
	flip(path, size - 3); /* the sums of the sums' pages: seen at open */
	expect_problem(f, "c", "block checksums", "10.9.0.1", 1);
	restore(f, "c", list);
	/* a block's sum (provenance.h: header, records, a lines word per
	 * step, then the block sums): seen when its page is first used */
	flip(path, 4096 + 12 * (off_t)n + 8 * (off_t)(n / BG_PROV_LINE_STEP + 1) + 5);
	expect_bad(f, "c", -EBADMSG, "block checksums");
	never_misled(f, n);
	restore(f, "c", list);
	flip(path, 4096 + 12 * 1500 + 3);
	expect_bad(f, "c", -EBADMSG, "block");
	never_misled(f, n);
	restore(f, "c", list);
	flip(path, 4096 + 12 * (off_t)n + 2); /* the lines table */
	expect_bad(f, "c", -EBADMSG, "block");
	never_misled(f, n);
	restore(f, "c", list);
	/* not an index at all */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	{
		char junk[8192];

		memset(junk, 'j', sizeof(junk));
		assert_int_equal(write(fd, junk, sizeof(junk)), sizeof(junk));
	}
	close(fd);
	expect_problem(f, "c", "not a provenance index", "10.9.0.1", 1);
	restore(f, "c", list);
	free(explain(f, "10.9.0.1", 2));

	/* stale: a new copy fetched (the store has its SHA-256) but not yet
	 * indexed; its lines are not the index's */
	fetched(f, "c", "# new\n10.9.0.1\n");
	expect_problem(f, "c", "index of another copy", "10.9.0.1", 1);
	expect_bad(f, "c", -ESTALE, "index of another copy");
	restore(f, "c", list);
	/* the copy changed behind the store's back */
	{
		FILE *fp = fopen(copy, "a");

		assert_non_null(fp);
		fputs("10.9.255.255\n", fp);
		fclose(fp);
	}
	expect_problem(f, "c", "it changed since it was indexed", "10.9.0.1", 1);
	fetched(f, "c", list);
	free(explain(f, "10.9.0.1", 2));
	/* the copy gone */
	unlink(copy);
	expect_problem(f, "c", "its copy", "10.9.0.1", 1);
	restore(f, "c", list);
	/* an index the store does not record: renamed in, and the writer
	 * killed before it recorded it */
	assert_int_equal(bg_store_source_get(f->s, "c", &row), 0);
	assert_int_equal(bg_store_index_set(f->s, "c",
		&(struct bg_store_index){ .origin = row.origin, .sha256 = row.rec.sha256,
					  .checksum = row.index_checksum ^ 1 }), 0);
	expect_problem(f, "c", "not the one the store records", "10.9.0.1", 1);
	expect_bad(f, "c", -ESTALE, "not the one the store records");
	restore(f, "c", list);
	/* missing */
	unlink(path);
	expect_problem(f, "c", "missing", "10.9.0.1", 1);
	expect_bad(f, "c", -ENOENT, "missing");
	restore(f, "c", list);
	h = explain(f, "10.9.11.183", 1); /* the last entry, i = n - 1 */
	assert_int_equal(h[0].line, n);
	free(h);
	free(list);
}

/*
 * kill -9 of the writer at two points, caught with inotify (no timing):
 * its temporary file just created, and its index just renamed in. The
 * parent holds the store's write lock meanwhile, so the writer cannot have
 * recorded its new index when it dies: the old index stays in use (killed
 * while writing), or the new one is refused as not recorded (killed after
 * the rename); never a wrong line. verify and a re-index repair both.
 */
static void kill_writer_at(struct fix *f, const char *list, uint32_t mask)
{
	struct bg_prov_bad *bad;
	struct inotify_event *ev;
	char idir[200], buf[4096] __attribute__((aligned(8))), c;
	ssize_t k;
	pid_t pid;
	int in, status, hit = 0, up[2], go[2];
	size_t nb;

	snprintf(idir, sizeof(idir), "%s/index", f->state);
	in = inotify_init1(IN_CLOEXEC);
	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, idir, mask) >= 0);
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(go), 0);
	bg_store_close(f->s); /* a SQLite handle does not cross a fork */
	f->s = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct bg_store_source row;
		struct bg_store *s;
		/* allow_wide: same entries, another header: an index is a
		 * function of its copy and options, so the same ones would
		 * give the very file the store records */
		struct bg_prov_source v = { .list = { .name = "c", .path = "/c2",
						      .format = BG_FMT_ADDR,
						      .allow_wide = 1 },
					    .force = 1 };
		char copy[256];

		if (bg_store_open(f->state, &s) || bg_store_source_get(s, "c", &row))
			_exit(2);
		/* opened: the parent takes the write lock, then says go */
		if (write(up[1], "o", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		copy_path(f, "c", copy, sizeof(copy));
		v.copy = copy;
		v.sha256 = row.rec.sha256;
		bg_prov_reindex(s, &v, 1, 0);
		_exit(0);
	}
	assert_int_equal(read(up[0], &c, 1), 1);
	open_store(f);
	assert_int_equal(bg_store_begin(f->s), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	while (!hit && (k = read(in, buf, sizeof(buf))) > 0) {
		for (ev = (void *)buf; (char *)ev < buf + k;
		     ev = (void *)((char *)ev + sizeof(*ev) + ev->len)) {
			if (ev->len && ((mask & IN_CREATE) ? ev->name[0] == '.'
							  : !strcmp(ev->name, "c.idx")))
				hit = 1;
		}
	}
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(bg_store_rollback(f->s), 0);
	close(in);
	close(up[0]);
	close(up[1]);
	close(go[0]);
	close(go[1]);

	{
		struct bg_prov_reader *r;
		struct bg_explain_hit *h;
		const char *src, *why;
		size_t n;

		assert_int_equal(bg_prov_open(f->s, &r), 0);
		assert_int_equal(bg_prov_find(r, "10.9.0.200", &h, &n), 0);
		if (bg_prov_problem(r, 0, &src, &why)) {
			/* renamed in, not recorded */
			assert_string_equal(src, "c");
			assert_non_null(strstr(why, "not the one the store records"));
			assert_int_equal(n, 0);
		} else {
			/* killed before its rename: the old index */
			assert_true(mask & IN_CREATE);
			assert_int_equal(n, 1);
			assert_int_equal(h[0].line, 201);
		}
		free(h);
		bg_prov_close(r);
	}
	/* the agent's start: verify drops what is not sound, the next
	 * write of the source clears the killed writer's temporary file */
	assert_int_equal(bg_prov_verify(f->s, 1, &bad, &nb), 0);
	assert_int_equal(nb, (mask & IN_CREATE) ? nb : 1);
	free(bad);
	{
		struct bg_prov_source v;
		struct dirent *d;
		DIR *dp;

		fetched(f, "c", list);
		v = psrc(f, "c", "/c", BG_FMT_ADDR, 0, 0);
		v.force = 1;
		assert_int_equal(bg_prov_reindex(f->s, &v, 1, 0), 1);
		dp = opendir(idir);
		assert_non_null(dp);
		while ((d = readdir(dp)))
			assert_false(!strncmp(d->d_name, ".c.idx.", 7));
		closedir(dp);
	}
	free(explain(f, "10.9.0.200", 1));
	assert_int_equal(bg_prov_verify(f->s, 0, &bad, &nb), 0);
	assert_int_equal(nb, 0);
	free(bad);
}

static void test_kill_writer(void **state)
{
	struct fix *f = *state;
	char *list = blocks_list(60000);

	open_store(f);
	assert_int_equal(add_list(f, "c", "/c", list, BG_FMT_ADDR, 0, 0), 1);
	kill_writer_at(f, list, IN_CREATE);
	kill_writer_at(f, list, IN_MOVED_TO);
	free(list);
}

/* ---- Upgrade ----------------------------------------------------------------- */

/* A version-1 store (an entries table with its rows) is upgraded on open:
 * the table gone, the file shrunk, the sources and their validators kept;
 * their indexes are missing until written, which verify reports. */
static void test_upgrade_v1(void **state)
{
	static const char v1[] =
		"CREATE TABLE sources (id INTEGER PRIMARY KEY,"
		" name TEXT NOT NULL UNIQUE, url TEXT NOT NULL DEFAULT '',"
		" path TEXT NOT NULL DEFAULT '', format INTEGER NOT NULL DEFAULT 0,"
		" subdomains INTEGER NOT NULL DEFAULT 0,"
		" allow INTEGER NOT NULL DEFAULT 0, etag TEXT NOT NULL DEFAULT '',"
		" last_modified TEXT NOT NULL DEFAULT '',"
		" sha256 TEXT NOT NULL DEFAULT '', last_ok REAL NOT NULL DEFAULT 0,"
		" last_attempt REAL NOT NULL DEFAULT 0,"
		" last_error TEXT NOT NULL DEFAULT '',"
		" entries INTEGER NOT NULL DEFAULT 0,"
		" fetches INTEGER NOT NULL DEFAULT 0,"
		" failures INTEGER NOT NULL DEFAULT 0,"
		" not_modified INTEGER NOT NULL DEFAULT 0,"
		" generation INTEGER NOT NULL DEFAULT 0,"
		" origin TEXT NOT NULL DEFAULT '',"
		" entries_format INTEGER NOT NULL DEFAULT 0);"
		"CREATE TABLE entries (source INTEGER NOT NULL,"
		" line INTEGER NOT NULL, seq INTEGER NOT NULL,"
		" allow INTEGER NOT NULL, family INTEGER, plen INTEGER, first,"
		" last, name TEXT, kind INTEGER, text TEXT NOT NULL);"
		"CREATE INDEX entries_source ON entries (source);"
		"CREATE INDEX entries_addr ON entries (family, first, plen)"
		" WHERE plen IS NOT NULL;"
		"CREATE INDEX entries_name ON entries (name) WHERE name IS NOT NULL;"
		"INSERT INTO sources (name, url, etag, entries, fetches, origin)"
		" VALUES ('fire', 'https://x/fire', '\"e1\"', 50000, 7,"
		" 'https://x/fire');"
		"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c"
		" WHERE i < 50000) INSERT INTO entries SELECT 1, i, 0, 0, 4, 32,"
		" i, i, NULL, NULL, printf('10.0.%d.%d # a comment long enough',"
		" i / 256, i % 256) FROM c;"
		"PRAGMA user_version = 1;";
	struct fix *f = *state;
	struct bg_store_source got;
	struct bg_prov_bad *bad;
	struct bg_store *ro;
	sqlite3 *db;
	off_t before;
	size_t n;

	assert_int_equal(mkdir(f->state, 0700), 0);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, v1, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	before = file_size(f->db);
	assert_true(before > 2 << 20);

	/* a reader does not upgrade: another version to it, until the agent
	 * opens it (check then re-reads the recorded lists) */
	assert_int_equal(bg_store_open_ro(f->state, &ro), -EPROTO);
	open_store(f);
	assert_int_equal(sql_int(f, "PRAGMA user_version"), BG_STORE_SCHEMA);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM sqlite_schema WHERE"
				    " name LIKE 'entries%'"), 0);
	assert_true(file_size(f->db) < before / 10);
	assert_int_equal(bg_store_source_get(f->s, "fire", &got), 0);
	assert_string_equal(got.url, "https://x/fire");
	assert_string_equal(got.rec.v.etag, "\"e1\"");
	assert_int_equal(got.rec.fetches, 7);
	assert_string_equal(got.index_sha256, "");
	/* its copy is there, its index not yet */
	fetched(f, "fire", "10.0.0.1\n");
	expect_bad(f, "fire", -ENOENT, "not indexed yet");
	assert_int_equal(add_list(f, "fire", "https://x/fire", "10.0.0.1\n",
				  BG_FMT_AUTO, 0, 0), 1);
	assert_int_equal(bg_prov_verify(f->s, 0, &bad, &n), 0);
	assert_int_equal(n, 0);
	free(bad);
	free(explain(f, "10.0.0.1", 1));
	/* reopened: nothing to upgrade any more */
	bg_store_close(f->s);
	f->s = NULL;
	open_store(f);
	assert_int_equal(bg_store_open_ro(f->state, &ro), 0);
	bg_store_close(ro);
}

/* A version-2 store (no count of rejected lines) is upgraded on open: the
 * column added, 0 for the rows there, which keep everything else; a
 * reader waits for the agent's upgrade. */
static void test_upgrade_v2(void **state)
{
	struct fix *f = *state;
	struct bg_store_source got, c;
	struct bg_store *ro;
	sqlite3 *db;

	open_store(f);
	fill(&c, "kept", 3);
	c.rec.rejected = 0;
	assert_int_equal(bg_store_source_put(f->s, &c), 0);
	bg_store_close(f->s);
	f->s = NULL;
	/* back to what version 2 was */
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "ALTER TABLE sources DROP COLUMN rejected;"
				      "PRAGMA user_version = 2;", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(bg_store_open_ro(f->state, &ro), -EPROTO);
	open_store(f);
	assert_int_equal(sql_int(f, "PRAGMA user_version"), BG_STORE_SCHEMA);
	assert_int_equal(bg_store_source_get(f->s, "kept", &got), 0);
	assert_source_equal(&got, &c);
	c.rec.rejected = 17;
	assert_int_equal(bg_store_source_put(f->s, &c), 0);
	assert_int_equal(bg_store_source_get(f->s, "kept", &got), 0);
	assert_int_equal(got.rec.rejected, 17);
	assert_int_equal(bg_store_open_ro(f->state, &ro), 0);
	bg_store_close(ro);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_create_reopen, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sources, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transaction, setup,
						teardown),
		cmocka_unit_test(test_list_scan),
		cmocka_unit_test_setup_teardown(test_addr_entries, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_name_entries, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_name_depth, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_quoted_text, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_order_and_repeats, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replace_and_unchanged,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rebuild_pipeline, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_two_workers, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_index_200k, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_delete_and_prune, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_and_stale, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_kill_writer, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_v2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_v1, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
