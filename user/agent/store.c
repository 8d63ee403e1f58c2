// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's store (user/agent/store.h): sources and their entries in SQLite.
 * One concern, long because every key kind (IPv4, IPv6, names of three
 * kinds) has its own columns, import and query.
 *
 * Schema (version BG_STORE_SCHEMA in PRAGMA user_version):
 *
 *  sources  one row per source, by name. id is the key entries refer to:
 *           an integer, so the name is not repeated in millions of rows.
 *  entries  one row per accepted entry: source, line, seq (the entries
 *           of one line: a hosts line names several), allow, text, and
 *           the key. Rows are inserted in the order of their index, a
 *           chunk at a time (see BG_STORE_CHUNK), so rowids follow that
 *           order and entries_source (source) is appended to.
 *           Addresses and prefixes: family 4 or 6, plen, and the range
 *           first..last: IPv4 as integers (host order), IPv6 as 16-byte
 *           blobs (SQLite compares blobs with memcmp(), which for
 *           big-endian bytes is numeric order). Prefixes nest or are
 *           disjoint, so an entry covers address A exactly when its first
 *           is A masked to its plen: "which entries cover A" is one index
 *           seek per prefix length (33 or 129 at most), not a range scan
 *           over every entry below A. last is kept for range queries
 *           (the confirm stage of a later issue).
 *           Names: name (normalised) and kind (enum bg_name_kind).
 *           Both: allow, and the line's text as `check` quotes it.
 *
 *  Two partial indexes, one per kind of entry, so neither holds the other
 *  kind's rows: entries_addr (family, first, plen) WHERE plen IS NOT NULL,
 *  entries_name (name) WHERE name IS NOT NULL. Queries say "plen = ?" and
 *  "name = ?", which SQLite knows imply the index's condition.
 *
 * Speed: an import is one transaction with one prepared INSERT bound and
 * stepped per entry (no SQL text per row), synchronous=NORMAL in WAL mode
 * (one fsync at checkpoint, not per commit), and a page cache large enough
 * to hold the B-tree pages an import of a million entries touches.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "bloomgate/bloom.h"
#include "bloomgate/dns.h"
#include "core/domains.h"
#include "core/io.h"
#include "core/lines.h"
#include "core/lists.h"
#include "core/sources.h"
#include "agent/store.h"

/* How long a statement waits for another connection's lock, in ms: a
 * reader meeting the agent's import or a checkpoint waits, not fails. */
#define BG_STORE_BUSY_MS 5000
/* Page cache, KiB (negative cache_size): a 1M-entry import keeps its index
 * pages in memory; SQLite allocates it only as pages are used. */
#define BG_STORE_CACHE_KIB 32768
/* Bytes of WAL file kept on disk after a checkpoint. */
#define BG_STORE_WAL_KEEP (4 << 20)

static const char SCHEMA[] =
	"CREATE TABLE sources ("
	" id INTEGER PRIMARY KEY,"
	" name TEXT NOT NULL UNIQUE,"
	" url TEXT NOT NULL DEFAULT '',"
	" path TEXT NOT NULL DEFAULT '',"
	" format INTEGER NOT NULL DEFAULT 0,"
	" subdomains INTEGER NOT NULL DEFAULT 0,"
	" allow INTEGER NOT NULL DEFAULT 0,"
	" etag TEXT NOT NULL DEFAULT '',"
	" last_modified TEXT NOT NULL DEFAULT '',"
	" sha256 TEXT NOT NULL DEFAULT '',"
	" last_ok REAL NOT NULL DEFAULT 0,"
	" last_attempt REAL NOT NULL DEFAULT 0,"
	" last_error TEXT NOT NULL DEFAULT '',"
	" entries INTEGER NOT NULL DEFAULT 0,"
	" fetches INTEGER NOT NULL DEFAULT 0,"
	" failures INTEGER NOT NULL DEFAULT 0,"
	" not_modified INTEGER NOT NULL DEFAULT 0,"
	" generation INTEGER NOT NULL DEFAULT 0,"
	" origin TEXT NOT NULL DEFAULT '',"
	" entries_format INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE entries ("
	" source INTEGER NOT NULL,"
	" line INTEGER NOT NULL,"
	" seq INTEGER NOT NULL,"
	" allow INTEGER NOT NULL,"
	" family INTEGER,"
	" plen INTEGER,"
	" first,"
	" last,"
	" name TEXT,"
	" kind INTEGER,"
	" text TEXT NOT NULL);"
	"CREATE INDEX entries_source ON entries (source);"
	"CREATE INDEX entries_addr ON entries (family, first, plen)"
	" WHERE plen IS NOT NULL;"
	"CREATE INDEX entries_name ON entries (name) WHERE name IS NOT NULL;";

/* The columns of struct bg_store_source, in the order every statement
 * below binds and reads them. */
#define SRC_COLS                                                               \
	"name, url, path, format, subdomains, allow, etag, last_modified, "    \
	"sha256, last_ok, last_attempt, last_error, entries, fetches, "        \
	"failures, not_modified, generation"
#define SRC_NCOLS 17

enum {
	ST_SRC_GET,
	ST_SRC_PUT,
	ST_SRC_LIST,
	ST_SRC_ID,
	ST_SRC_NEW,
	ST_SRC_DEL,
	ST_ENT_DEL,
	ST_ENT_ADD,
	ST_SRC_SET,
	ST_FIND_ADDR,
	ST_FIND_NAME,
	ST__COUNT,
};

static const char *const SQL[ST__COUNT] = {
	[ST_SRC_GET] = "SELECT " SRC_COLS ", origin, entries_format"
		       " FROM sources WHERE name = ?1",
	[ST_SRC_PUT] = "INSERT INTO sources (" SRC_COLS ") VALUES (?1, ?2, ?3,"
		       " ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
		       " ?16, ?17) ON CONFLICT (name) DO UPDATE SET"
		       " url = ?2, path = ?3, format = ?4, subdomains = ?5,"
		       " allow = ?6, etag = ?7, last_modified = ?8, sha256 = ?9,"
		       " last_ok = ?10, last_attempt = ?11, last_error = ?12,"
		       " entries = ?13, fetches = ?14, failures = ?15,"
		       " not_modified = ?16, generation = ?17",
	[ST_SRC_LIST] = "SELECT " SRC_COLS ", origin, entries_format"
			" FROM sources ORDER BY name",
	[ST_SRC_ID] = "SELECT id FROM sources WHERE name = ?1",
	[ST_SRC_NEW] = "INSERT INTO sources (name) VALUES (?1)",
	[ST_SRC_DEL] = "DELETE FROM sources WHERE id = ?1",
	[ST_ENT_DEL] = "DELETE FROM entries WHERE source = ?1",
	[ST_ENT_ADD] = "INSERT INTO entries (source, line, seq, allow, family,"
		       " plen, first, last, name, kind, text)"
		       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[ST_SRC_SET] = "UPDATE sources SET entries = ?2, entries_format = ?3,"
		       " origin = coalesce(?4, CASE WHEN url != '' THEN url"
		       " ELSE path END) WHERE id = ?1",
	[ST_FIND_ADDR] = "SELECT s.name, s.origin, e.line, e.text, e.allow"
			 " FROM entries e JOIN sources s ON s.id = e.source"
			 " WHERE e.family = ?1 AND e.first = ?2 AND e.plen = ?3",
	[ST_FIND_NAME] = "SELECT s.name, s.origin, e.line, e.text, e.allow,"
			 " e.kind FROM entries e JOIN sources s"
			 " ON s.id = e.source WHERE e.name = ?1",
};

struct bg_store {
	sqlite3 *db;
	sqlite3_stmt *st[ST__COUNT];
};

/* A SQLite result code as a negative errno (store.h lists them). */
static int sq_err(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return -EBADMSG;
	default:
		return -EIO;
	}
}

static int exec(struct bg_store *s, const char *sql)
{
	return sq_err(sqlite3_exec(s->db, sql, NULL, NULL, NULL));
}

/* A statement of the table, ready to bind: reset, bindings cleared.
 * Prepared on first use, so a read-only handle never prepares writes. */
static sqlite3_stmt *stmt(struct bg_store *s, int which, int *err)
{
	sqlite3_stmt *st = s->st[which];
	int rc;

	if (st) {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		return st;
	}
	rc = sqlite3_prepare_v3(s->db, SQL[which], -1, SQLITE_PREPARE_PERSISTENT,
				&s->st[which], NULL);
	if (rc != SQLITE_OK) {
		*err = sq_err(rc);
		return NULL;
	}
	return s->st[which];
}

/* Runs a statement that returns no rows (or ignores them). */
static int step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : sq_err(rc);
}

static int user_version(struct bg_store *s, int *v)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sq_err(rc);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : sq_err(rc);
}

/* The schema, when the database is new. Under an immediate transaction,
 * so that two openers racing on a new file create it once. */
static int schema(struct bg_store *s)
{
	char sql[64];
	int ret, v = 0;

	ret = exec(s, "BEGIN IMMEDIATE");
	if (ret)
		return ret;
	ret = user_version(s, &v);
	if (!ret && v == 0) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
			 BG_STORE_SCHEMA);
		ret = exec(s, SCHEMA);
		if (!ret)
			ret = exec(s, sql);
		v = BG_STORE_SCHEMA;
	}
	if (!ret && v != BG_STORE_SCHEMA)
		ret = -EPROTO; /* no older schema exists to migrate from yet */
	if (ret) {
		exec(s, "ROLLBACK");
		return ret;
	}
	return exec(s, "COMMIT");
}

static int open_db(const char *state_dir, int ro, struct bg_store **sp)
{
	struct bg_store *s;
	char *path = NULL;
	int ret, rc, v = 0;

	*sp = NULL;
	if (!state_dir || !*state_dir)
		return -EINVAL;
	if (!ro && mkdir(state_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (asprintf(&path, "%s/%s", state_dir, BG_STORE_FILE) < 0)
		return -ENOMEM;
	if (ro && access(path, F_OK) < 0) {
		ret = -errno;
		free(path);
		return ret;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		free(path);
		return -ENOMEM;
	}
	rc = sqlite3_open_v2(path,
			     &s->db,
			     (ro ? SQLITE_OPEN_READONLY
				 : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
				     SQLITE_OPEN_NOMUTEX,
			     NULL);
	free(path);
	if (rc != SQLITE_OK) {
		ret = s->db ? sq_err(rc) : -ENOMEM;
		goto err;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, BG_STORE_BUSY_MS);
	/* The first statement that reads the file tells a non-database. */
	ret = user_version(s, &v);
	if (ret)
		goto err;
	if (ro) {
		ret = v == 0 ? -ENOENT : v != BG_STORE_SCHEMA ? -EPROTO : 0;
		if (ret)
			goto err;
		*sp = s;
		return 0;
	}
	/* WAL: readers (check, status) never block the agent's import, nor
	 * the reverse; NORMAL: durable at checkpoints, never corrupt. */
	ret = exec(s, "PRAGMA journal_mode = WAL");
	if (!ret)
		ret = exec(s, "PRAGMA synchronous = NORMAL");
	if (!ret) {
		char sql[96];

		/* journal_size_limit: the WAL file, which grows to the size of
		 * the largest import, is cut back after a checkpoint */
		snprintf(sql, sizeof(sql),
			 "PRAGMA cache_size = %d; PRAGMA journal_size_limit = %d",
			 -BG_STORE_CACHE_KIB, BG_STORE_WAL_KEEP);
		ret = exec(s, sql);
	}
	if (!ret)
		ret = schema(s);
	if (ret)
		goto err;
	*sp = s;
	return 0;
err:
	bg_store_close(s);
	return ret;
}

int bg_store_open(const char *state_dir, struct bg_store **s)
{
	return open_db(state_dir, 0, s);
}

int bg_store_open_ro(const char *state_dir, struct bg_store **s)
{
	return open_db(state_dir, 1, s);
}

void bg_store_close(struct bg_store *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < ST__COUNT; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close(s->db);
	free(s);
}

const char *bg_store_errmsg(struct bg_store *s)
{
	return s && s->db ? sqlite3_errmsg(s->db) : "no store";
}

/* ---- Sources ------------------------------------------------------------ */

/* Column i as text into dst of size n, cut if longer. */
static void col_text(sqlite3_stmt *st, int i, char *dst, size_t n)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(dst, n, "%s", t ? (const char *)t : "");
}

static void col_u64(sqlite3_stmt *st, int i, uint64_t *v)
{
	sqlite3_int64 x = sqlite3_column_int64(st, i);

	*v = x < 0 ? 0 : (uint64_t)x;
}

static void read_source(sqlite3_stmt *st, struct bg_store_source *o)
{
	memset(o, 0, sizeof(*o));
	col_text(st, 0, o->name, sizeof(o->name));
	col_text(st, 1, o->url, sizeof(o->url));
	col_text(st, 2, o->path, sizeof(o->path));
	o->format = sqlite3_column_int(st, 3);
	o->subdomains = sqlite3_column_int(st, 4);
	o->allow = sqlite3_column_int(st, 5);
	col_text(st, 6, o->etag, sizeof(o->etag));
	col_text(st, 7, o->last_modified, sizeof(o->last_modified));
	col_text(st, 8, o->sha256, sizeof(o->sha256));
	o->last_ok = sqlite3_column_double(st, 9);
	o->last_attempt = sqlite3_column_double(st, 10);
	col_text(st, 11, o->last_error, sizeof(o->last_error));
	col_u64(st, 12, &o->entries);
	col_u64(st, 13, &o->fetches);
	col_u64(st, 14, &o->failures);
	col_u64(st, 15, &o->not_modified);
	col_u64(st, 16, &o->generation);
	col_text(st, SRC_NCOLS, o->origin, sizeof(o->origin));
	o->entries_format = sqlite3_column_int(st, SRC_NCOLS + 1);
}

/* The fields are fixed arrays: bind at most their size, up to a NUL. */
static int bind_str(sqlite3_stmt *st, int i, const char *v, size_t max)
{
	return sqlite3_bind_text(st, i, v, (int)strnlen(v, max), SQLITE_STATIC);
}

static int bind_u64(sqlite3_stmt *st, int i, uint64_t v)
{
	return sqlite3_bind_int64(st, i,
				  v > INT64_MAX ? INT64_MAX : (sqlite3_int64)v);
}

int bg_store_source_get(struct bg_store *s, const char *name,
			struct bg_store_source *out)
{
	sqlite3_stmt *st;
	int ret = 0, rc;

	if (!(st = stmt(s, ST_SRC_GET, &ret)))
		return ret;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		read_source(st, out);
	else
		ret = rc == SQLITE_DONE ? -ENOENT : sq_err(rc);
	sqlite3_reset(st);
	return ret;
}

int bg_store_source_put(struct bg_store *s, const struct bg_store_source *src)
{
	sqlite3_stmt *st;
	int ret = 0;

	if (!src->name[0] || strnlen(src->name, sizeof(src->name)) >=
				     BG_STORE_NAME_MAX)
		return -EINVAL;
	if (!(st = stmt(s, ST_SRC_PUT, &ret)))
		return ret;
	bind_str(st, 1, src->name, sizeof(src->name));
	bind_str(st, 2, src->url, sizeof(src->url));
	bind_str(st, 3, src->path, sizeof(src->path));
	sqlite3_bind_int(st, 4, src->format);
	sqlite3_bind_int(st, 5, src->subdomains);
	sqlite3_bind_int(st, 6, src->allow);
	bind_str(st, 7, src->etag, sizeof(src->etag));
	bind_str(st, 8, src->last_modified, sizeof(src->last_modified));
	bind_str(st, 9, src->sha256, sizeof(src->sha256));
	sqlite3_bind_double(st, 10, src->last_ok);
	sqlite3_bind_double(st, 11, src->last_attempt);
	bind_str(st, 12, src->last_error, sizeof(src->last_error));
	bind_u64(st, 13, src->entries);
	bind_u64(st, 14, src->fetches);
	bind_u64(st, 15, src->failures);
	bind_u64(st, 16, src->not_modified);
	bind_u64(st, 17, src->generation);
	return step_done(st);
}

int bg_store_source_list(struct bg_store *s, struct bg_store_source **v,
			 size_t *n)
{
	struct bg_store_source *out = NULL, *nv;
	size_t cnt = 0, cap = 0;
	sqlite3_stmt *st;
	int ret = 0, rc;

	*v = NULL;
	*n = 0;
	if (!(st = stmt(s, ST_SRC_LIST, &ret)))
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 8;
			nv = realloc(out, cap * sizeof(*out));
			if (!nv) {
				ret = -ENOMEM;
				break;
			}
			out = nv;
		}
		read_source(st, &out[cnt++]);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sq_err(rc);
	sqlite3_reset(st);
	if (ret) {
		free(out);
		return ret;
	}
	*v = out;
	*n = cnt;
	return 0;
}

/* The id of source name: 1 found, 0 not, or -errno. */
static int source_id(struct bg_store *s, const char *name, sqlite3_int64 *id)
{
	sqlite3_stmt *st;
	int ret = 0, rc;

	if (!(st = stmt(s, ST_SRC_ID, &ret)))
		return ret;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		ret = 1;
	} else if (rc != SQLITE_DONE) {
		ret = sq_err(rc);
	}
	sqlite3_reset(st);
	return ret;
}

/* Runs statement which with ?1 = id. */
static int by_id(struct bg_store *s, int which, sqlite3_int64 id)
{
	sqlite3_stmt *st;
	int ret = 0;

	if (!(st = stmt(s, which, &ret)))
		return ret;
	sqlite3_bind_int64(st, 1, id);
	return step_done(st);
}

/*
 * The transaction of one call: its own (BEGIN IMMEDIATE: the write lock
 * at once, waiting through the busy timeout, rather than failing at the
 * first write), or a savepoint inside the caller's bg_store_begin(), so
 * that a failed call leaves the caller's other changes in place.
 */
static int tx_begin(struct bg_store *s, int *nested)
{
	*nested = !sqlite3_get_autocommit(s->db);
	return exec(s, *nested ? "SAVEPOINT bg_store" : "BEGIN IMMEDIATE");
}

/* Ends it: kept when ret >= 0, else undone; ret or the commit's failure. */
static int tx_end(struct bg_store *s, int nested, int ret)
{
	if (ret >= 0) {
		int c = exec(s, nested ? "RELEASE bg_store" : "COMMIT");

		if (!c)
			return ret;
		ret = c;
	}
	exec(s, nested ? "ROLLBACK TO bg_store; RELEASE bg_store"
		       : "ROLLBACK");
	return ret;
}

int bg_store_begin(struct bg_store *s)
{
	return exec(s, "BEGIN IMMEDIATE");
}

int bg_store_commit(struct bg_store *s)
{
	return exec(s, "COMMIT");
}

int bg_store_rollback(struct bg_store *s)
{
	return exec(s, "ROLLBACK");
}

int bg_store_source_delete(struct bg_store *s, const char *name)
{
	sqlite3_int64 id = 0;
	int ret, nested;

	ret = tx_begin(s, &nested);
	if (ret)
		return ret;
	ret = source_id(s, name, &id);
	if (ret == 0)
		ret = -ENOENT;
	if (ret > 0)
		ret = by_id(s, ST_ENT_DEL, id);
	if (!ret)
		ret = by_id(s, ST_SRC_DEL, id);
	return tx_end(s, nested, ret);
}

/* ---- Entries ------------------------------------------------------------ */

/*
 * Entries are inserted in chunks sorted in the order of the index they go
 * to (entries_addr or entries_name): a sorted run walks the index B-tree
 * once, left to right, where rows in list order (random addresses, say)
 * would touch a random page per row. Measured on 1M random IPv4 addresses:
 * the import takes about 40 % less time, the replacement of a source
 * (its old rows deleted, in the same order) about 55 % less. The rowid,
 * in insertion order, keeps the table itself an append. Chunks bound the
 * memory an import needs besides the list (BG_STORE_CHUNK * 32 bytes).
 */
#define BG_STORE_CHUNK (1 << 18)

/* An address entry waiting in a chunk: its index key, and where its text
 * lies in the list buffer. */
struct arec {
	uint64_t hi, lo; /* IPv4: hi the address (host order), lo 0;
			    IPv6: the address's two big-endian halves */
	size_t toff; /* the line without surrounding blanks: buf + toff */
	uint32_t line;
	uint16_t tlen;
	uint8_t fam, plen;
};

/* A name entry waiting in a chunk. */
struct nrec {
	const char *name;
	size_t toff;
	uint32_t line;
	uint16_t tlen;
	uint8_t kind, allow;
	uint32_t seq;
};

/* One import: the statement, what every row shares, the chunk. */
struct import {
	sqlite3_stmt *st;
	sqlite3_int64 source;
	const char *buf;
	int allow;
	size_t count;
	int err;
	/* addresses: the lines, walked beside bg_list_scan()'s */
	struct bg_line_iter it;
	const char *ls, *le;
	struct arec *a;
	size_t n;
};

/*
 * The line's text as stored: [s, e) without surrounding blanks, cut to
 * BG_STORE_TEXT_MAX bytes on a UTF-8 boundary with "..." after. Returns
 * its length in out (BG_STORE_TEXT_MAX + 4 bytes).
 */
static size_t line_text(const char *s, const char *e, char *out)
{
	size_t n;

	while (s < e && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	n = (size_t)(e - s);
	if (n <= BG_STORE_TEXT_MAX) {
		memcpy(out, s, n);
		out[n] = '\0';
		return n;
	}
	n = BG_STORE_TEXT_MAX;
	/* not inside a multi-byte character: back off continuation bytes */
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	memcpy(out, s, n);
	memcpy(out + n, "...", 4);
	return n + 3;
}

/* Inserts one row; the caller bound columns 5 to 10. */
static void add_row(struct import *im, size_t line, size_t seq, size_t toff,
		    size_t tlen, int allow)
{
	char t[BG_STORE_TEXT_MAX + 4];
	size_t n = line_text(im->buf + toff, im->buf + toff + tlen, t);
	int rc;

	sqlite3_bind_int64(im->st, 1, im->source);
	sqlite3_bind_int64(im->st, 2, (sqlite3_int64)line);
	sqlite3_bind_int64(im->st, 3, (sqlite3_int64)seq);
	sqlite3_bind_int(im->st, 4, allow);
	sqlite3_bind_text(im->st, 11, t, (int)n, SQLITE_STATIC);
	rc = sqlite3_step(im->st);
	sqlite3_reset(im->st);
	if (rc != SQLITE_DONE)
		im->err = sq_err(rc);
	else
		im->count++;
}

/* Last address of an IPv6 prefix: the host bits set. */
static void last6(const __u8 first[16], unsigned int plen, __u8 last[16])
{
	unsigned int i;

	for (i = 0; i < 16; i++) {
		unsigned int bits = plen > i * 8 ? plen - i * 8 : 0;

		last[i] = bits >= 8 ? first[i]
				    : (__u8)(first[i] | (0xffu >> bits));
	}
}

/* The order of entries_addr: family, first, plen. */
static int cmp_arec(const void *x, const void *y)
{
	const struct arec *a = x, *b = y;

	if (a->fam != b->fam)
		return a->fam < b->fam ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return (a->plen > b->plen) - (a->plen < b->plen);
}

static void flush_addrs(struct import *im)
{
	size_t i;

	qsort(im->a, im->n, sizeof(*im->a), cmp_arec);
	for (i = 0; i < im->n && !im->err; i++) {
		const struct arec *r = &im->a[i];

		sqlite3_bind_int(im->st, 5, r->fam);
		sqlite3_bind_int(im->st, 6, r->plen);
		if (r->fam == 4) {
			uint32_t host = r->plen >= 32 ? 0
						     : 0xffffffffu >> r->plen;

			sqlite3_bind_int64(im->st, 7, (sqlite3_int64)r->hi);
			sqlite3_bind_int64(im->st, 8,
					   (sqlite3_int64)(r->hi | host));
		} else {
			uint64_t h = htobe64(r->hi), l = htobe64(r->lo);
			__u8 first[16], last[16];

			memcpy(first, &h, 8);
			memcpy(first + 8, &l, 8);
			last6(first, r->plen, last);
			sqlite3_bind_blob(im->st, 7, first, 16, SQLITE_TRANSIENT);
			sqlite3_bind_blob(im->st, 8, last, 16, SQLITE_TRANSIENT);
		}
		add_row(im, r->line, 0, r->toff, r->tlen, im->allow);
	}
	im->n = 0;
}

/* bg_list_scan()'s callback: the entry into the chunk. Its text is found
 * in the buffer by walking the same lines (the scan's text is a copy). */
static void on_addr(void *ctx, size_t line, const char *text,
		    const struct bg_key4 *k4, const struct bg_key6 *k6)
{
	struct import *im = ctx;
	struct arec *r;
	const char *s;

	if (im->err)
		return;
	while (im->it.lineno < line && bg_lines_next(&im->it, &im->ls, &im->le))
		;
	if (im->it.lineno != line) {
		im->err = -EIO; /* cannot be: the scan walks the same lines */
		return;
	}
	for (s = im->ls; s < im->le && (*s == ' ' || *s == '\t' || *s == '\r');
	     s++)
		;
	r = &im->a[im->n++];
	r->toff = (size_t)(s - im->buf);
	r->tlen = (uint16_t)strlen(text); /* at most BG_LIST_LINE_MAX */
	r->line = (uint32_t)line;
	if (k4) {
		r->fam = 4;
		r->plen = k4->plen;
		r->hi = ntohl(k4->addr);
		r->lo = 0;
	} else {
		uint64_t h, l;

		memcpy(&h, k6->addr, 8);
		memcpy(&l, k6->addr + 8, 8);
		r->fam = 6;
		r->plen = k6->plen;
		r->hi = be64toh(h);
		r->lo = be64toh(l);
	}
	if (im->n == BG_STORE_CHUNK)
		flush_addrs(im);
}

static int import_addrs(struct import *im, size_t len)
{
	im->a = malloc(BG_STORE_CHUNK * sizeof(*im->a));
	if (!im->a)
		return -ENOMEM;
	bg_lines_init(&im->it, im->buf, len);
	sqlite3_bind_null(im->st, 9);
	sqlite3_bind_null(im->st, 10);
	bg_list_scan(im->buf, len, on_addr, im);
	if (!im->err)
		flush_addrs(im);
	free(im->a);
	im->a = NULL;
	return im->err;
}

static void ignore_diag(void *ctx, const struct bg_diag *d)
{
	(void)ctx;
	(void)d;
}

/* The order of entries_name. */
static int cmp_nrec(const void *x, const void *y)
{
	const struct nrec *a = x, *b = y;

	return strcmp(a->name, b->name);
}

/* A domain list: parsed whole by the load's parser; each entry's line
 * text found by one walk over the lines (the parser appends entries in
 * line order), then stored a sorted chunk at a time. */
static int import_names(struct import *im, const char *copy, size_t len,
			int format, int subdomains, int allow)
{
	struct bg_dom_opts o = { .format = format, .subdomains = subdomains,
				 .allow = allow, .diag = ignore_diag };
	const char *ls = NULL, *le = NULL;
	struct bg_line_iter it;
	struct bg_names l;
	struct nrec *c;
	size_t i, k, n, toff = 0, tlen = 0, prev = 0;
	uint32_t seq = 0;
	int ret;

	c = malloc(BG_STORE_CHUNK * sizeof(*c));
	if (!c)
		return -ENOMEM;
	bg_names_init(&l);
	ret = bg_names_parse_buf(&l, copy, im->buf, len, &o);
	bg_lines_init(&it, im->buf, len);
	for (i = 0; !ret && !im->err && i < l.n; i += n) {
		n = l.n - i < BG_STORE_CHUNK ? l.n - i : BG_STORE_CHUNK;
		for (k = 0; k < n; k++) {
			const struct bg_name *e = &l.v[i + k];

			if (e->line != prev) {
				while (it.lineno < e->line &&
				       bg_lines_next(&it, &ls, &le))
					;
				if (it.lineno != e->line) {
					ret = -EIO; /* parser and lines disagree */
					break;
				}
				while (ls < le && (*ls == ' ' || *ls == '\t' ||
						   *ls == '\r'))
					ls++;
				toff = (size_t)(ls - im->buf);
				/* a kept line has at most BG_DOM_LINE_MAX bytes */
				tlen = (size_t)(le - ls);
				if (tlen > UINT16_MAX)
					tlen = UINT16_MAX;
				prev = e->line;
				seq = 0;
			}
			c[k] = (struct nrec){ .name = e->name, .toff = toff,
					      .tlen = (uint16_t)tlen,
					      .line = e->line, .kind = e->kind,
					      .allow = e->allow, .seq = seq++ };
		}
		if (ret)
			break;
		qsort(c, n, sizeof(*c), cmp_nrec);
		sqlite3_bind_null(im->st, 5);
		sqlite3_bind_null(im->st, 6);
		sqlite3_bind_null(im->st, 7);
		sqlite3_bind_null(im->st, 8);
		for (k = 0; k < n && !im->err; k++) {
			sqlite3_bind_text(im->st, 9, c[k].name, -1,
					  SQLITE_STATIC);
			sqlite3_bind_int(im->st, 10, c[k].kind);
			add_row(im, c[k].line, c[k].seq, c[k].toff, c[k].tlen,
				c[k].allow);
		}
	}
	bg_names_free(&l);
	free(c);
	return ret ? ret : im->err;
}

int bg_store_set_entries(struct bg_store *s, const char *name,
			 const char *origin, const char *copy, int format,
			 int subdomains, int allow)
{
	struct import im = { .allow = !!allow };
	sqlite3_stmt *st;
	char *buf = NULL;
	size_t len = 0;
	int ret, nested;

	if (!name || !*name || strlen(name) >= BG_STORE_NAME_MAX ||
	    format < 0 || format >= BG_FMT__COUNT)
		return -EINVAL;
	ret = bg_read_file(copy, &buf, &len);
	if (ret < 0)
		return ret;
	if (format == BG_FMT_AUTO)
		format = bg_format_detect(buf, len);

	ret = tx_begin(s, &nested);
	if (ret)
		goto out;
	ret = source_id(s, name, &im.source);
	if (ret == 0) {
		if ((st = stmt(s, ST_SRC_NEW, &ret))) {
			sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
			ret = step_done(st);
			im.source = sqlite3_last_insert_rowid(s->db);
		}
	} else if (ret > 0) {
		ret = by_id(s, ST_ENT_DEL, im.source);
	}
	if (!ret)
		im.st = stmt(s, ST_ENT_ADD, &ret);
	if (ret)
		goto tx;
	im.buf = buf;
	if (format == BG_FMT_ADDR)
		ret = import_addrs(&im, len);
	else
		ret = import_names(&im, copy, len, format, subdomains, allow);
	if (!ret && (st = stmt(s, ST_SRC_SET, &ret))) {
		sqlite3_bind_int64(st, 1, im.source);
		bind_u64(st, 2, im.count);
		sqlite3_bind_int(st, 3, format);
		if (origin)
			sqlite3_bind_text(st, 4, origin, -1, SQLITE_STATIC);
		ret = step_done(st);
	}
tx:
	if (im.st)
		sqlite3_reset(im.st);
	ret = tx_end(s, nested, ret);
	/* The import filled the page cache; the agent idles between
	 * imports, so give the memory back (the pages are on disk). */
	sqlite3_db_release_memory(s->db);
out:
	free(buf);
	if (ret < 0)
		return ret;
	return im.count > INT_MAX ? INT_MAX : (int)im.count;
}

/* ---- Explain ------------------------------------------------------------ */

struct hits {
	struct bg_explain_hit *v;
	size_t n, cap;
};

static struct bg_explain_hit *new_hit(struct hits *h)
{
	struct bg_explain_hit *nv;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 8;

		nv = realloc(h->v, cap * sizeof(*nv));
		if (!nv)
			return NULL;
		h->v = nv;
		h->cap = cap;
	}
	nv = &h->v[h->n++];
	memset(nv, 0, sizeof(*nv));
	return nv;
}

/* The rows of a find statement, already bound, into hits; the columns
 * shared by both finds: source, origin, line, text, allow. */
static int collect(sqlite3_stmt *st, struct hits *h, const char *entry,
		   const char *parent, int name_kinds)
{
	struct bg_explain_hit *x;
	int rc, kind = 0, ret = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (name_kinds) {
			kind = sqlite3_column_int(st, 5);
			if (kind < 0 || kind > 15 || !(name_kinds & (1 << kind)))
				continue;
		}
		if (!(x = new_hit(h))) {
			ret = -ENOMEM;
			break;
		}
		col_text(st, 0, x->source, sizeof(x->source));
		col_text(st, 1, x->origin, sizeof(x->origin));
		x->line = (size_t)sqlite3_column_int64(st, 2);
		col_text(st, 3, x->text, sizeof(x->text));
		x->allow = sqlite3_column_int(st, 4);
		x->kind = kind;
		snprintf(x->entry, sizeof(x->entry), "%s", entry);
		snprintf(x->parent, sizeof(x->parent), "%s", parent);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sq_err(rc);
	sqlite3_reset(st);
	return ret;
}

/* Every stored prefix containing the address: one seek per length. */
static int find_addr(struct bg_store *s, const struct bg_key4 *k4,
		     const struct bg_key6 *k6, struct hits *h)
{
	unsigned int bits = k4 ? 32 : 128, plen;
	char a[INET6_ADDRSTRLEN], entry[INET6_ADDRSTRLEN + 8];
	sqlite3_stmt *st;
	int ret = 0;

	for (plen = 0; plen <= bits && !ret; plen++) {
		if (!(st = stmt(s, ST_FIND_ADDR, &ret)))
			break;
		sqlite3_bind_int(st, 1, k4 ? 4 : 6);
		sqlite3_bind_int(st, 3, (int)plen);
		if (k4) {
			struct bg_key4 m;

			bg_key4_init(&m, k4->addr, (__u8)plen);
			sqlite3_bind_int64(st, 2, ntohl(m.addr));
			inet_ntop(AF_INET, &m.addr, a, sizeof(a));
		} else {
			struct bg_key6 m;

			bg_key6_init(&m, k6->addr, (__u8)plen);
			sqlite3_bind_blob(st, 2, m.addr, 16, SQLITE_TRANSIENT);
			inet_ntop(AF_INET6, m.addr, a, sizeof(a));
		}
		snprintf(entry, sizeof(entry), plen == bits ? "%s" : "%s/%u", a,
			 plen);
		ret = collect(st, h, entry, "", 0);
	}
	return ret;
}

/* The entries the datapath's probes for name q find (bg_names_find()):
 * q itself as an exact or tree rule, its proper parents of at most
 * BG_DNS_SUFFIX_MAX labels as tree or subdomains-only rules. */
static int find_name(struct bg_store *s, const char *q, struct hits *h)
{
	const int self = 1 << BG_NAME_EXACT | 1 << BG_NAME_TREE;
	const int parent = 1 << BG_NAME_TREE | 1 << BG_NAME_SUBS;
	unsigned int nlabels = 1, j;
	const char *p;
	sqlite3_stmt *st;
	int ret = 0;

	for (p = q; *p; p++)
		nlabels += *p == '.';
	for (p = q, j = 0; p && !ret; j++) {
		if (j == 0 || nlabels - j <= BG_DNS_SUFFIX_MAX) {
			if (!(st = stmt(s, ST_FIND_NAME, &ret)))
				break;
			sqlite3_bind_text(st, 1, p, -1, SQLITE_STATIC);
			ret = collect(st, h, p, j ? p : "", j ? parent : self);
		}
		p = strchr(p, '.');
		p = p ? p + 1 : NULL;
	}
	return ret;
}

static int cmp_hit(const void *a, const void *b)
{
	const struct bg_explain_hit *x = a, *y = b;
	int c = strcmp(x->source, y->source);

	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return strcmp(x->entry, y->entry);
}

int bg_store_explain(struct bg_store *s, const char *arg,
		     struct bg_explain_hit **hits, size_t *n)
{
	char q[256]; /* bg_name_normalise(): 254 bytes at least */
	struct hits h = { 0 };
	struct bg_key4 k4;
	struct bg_key6 k6;
	int kind, ret;

	*hits = NULL;
	*n = 0;
	if (!arg)
		return -EINVAL;
	/* as bg_explain(): an address when it parses as one, else a name */
	kind = bg_parse_addr(arg, &k4, &k6, NULL);
	if (kind)
		ret = find_addr(s, kind == BG_KEY_IPV4 ? &k4 : NULL,
				kind == BG_KEY_IPV6 ? &k6 : NULL, &h);
	else if (bg_name_normalise(arg, strlen(arg), q, NULL) == 0)
		ret = find_name(s, q, &h);
	else
		return -EINVAL;
	if (ret) {
		free(h.v);
		return ret;
	}
	if (h.n > 1)
		qsort(h.v, h.n, sizeof(*h.v), cmp_hit);
	*hits = h.v;
	*n = h.n;
	return 0;
}

int bg_store_find(void *ctx, const char *arg, struct bg_explain_hit **hits,
		  size_t *n)
{
	return bg_store_explain(ctx, arg, hits, n);
}
