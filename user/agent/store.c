// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's store (user/agent/store.h): its sources in SQLite, and the
 * record of each source's provenance index (user/agent/provenance.h).
 *
 * Schema (version BG_STORE_SCHEMA in PRAGMA user_version):
 *
 *  sources  one row per source, by name: what the agent keeps of it
 *           (origin, validators, the copy's SHA-256, counters), and the
 *           index the provenance writer last committed for it (index_*:
 *           the SHA-256 of the copy it indexes, its checksum, entries and
 *           bytes). The entries themselves are not rows any more: at 10M
 *           entries a row each took 38 s and 1.5 GB (db + WAL); the index
 *           file takes about 12 bytes an entry, written in one sort.
 *
 * Version 1 had an entries table (a row per entry). Opening a version-1
 * file with bg_store_open() upgrades it in place: the index columns are
 * added, the table dropped (its rows would be re-imported into index
 * files anyway), and the file vacuumed so that the gigabytes the rows took
 * go back to the file system. The sources' validators and counters stay.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/grow.h"
#include "core/url.h"
#include "agent/store.h"

/* How long a statement waits for another connection's lock, in ms: a
 * reader meeting the agent's write or a checkpoint waits, not fails. */
#define BG_STORE_BUSY_MS 5000

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
	" rejected INTEGER NOT NULL DEFAULT 0,"
	" origin TEXT NOT NULL DEFAULT '',"
	" entries_format INTEGER NOT NULL DEFAULT 0,"
	" index_sha256 TEXT NOT NULL DEFAULT '',"
	" index_checksum INTEGER NOT NULL DEFAULT 0,"
	" index_entries INTEGER NOT NULL DEFAULT 0,"
	" index_bytes INTEGER NOT NULL DEFAULT 0);";

/* Version 1 to 2: the index record in, the entries table out (its two
 * indexes go with it). */
static const char UPGRADE_1[] =
	"ALTER TABLE sources ADD COLUMN index_sha256 TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE sources ADD COLUMN index_checksum INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE sources ADD COLUMN index_entries INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE sources ADD COLUMN index_bytes INTEGER NOT NULL DEFAULT 0;"
	"DROP TABLE IF EXISTS entries;";
/* Version 2 to 3: the lines a copy's parse rejected. */
static const char UPGRADE_2[] =
	"ALTER TABLE sources ADD COLUMN rejected INTEGER NOT NULL DEFAULT 0;";

/* The columns of struct bg_store_source, in the order every statement
 * below binds and reads them. */
#define SRC_COLS                                                               \
	"name, url, path, format, subdomains, allow, etag, last_modified, "    \
	"sha256, last_ok, last_attempt, last_error, entries, fetches, "        \
	"failures, not_modified, generation, rejected"
#define SRC_NCOLS 18
/* Read after them; set by bg_store_index_set() only. */
#define IDX_COLS                                                               \
	"origin, entries_format, index_sha256, index_checksum, "              \
	"index_entries, index_bytes"

enum {
	ST_SRC_GET,
	ST_SRC_PUT,
	ST_SRC_LIST,
	ST_SRC_DEL,
	ST_IDX_NEW,
	ST_IDX_SET,
	ST__COUNT,
};

static const char *const SQL[ST__COUNT] = {
	[ST_SRC_GET] = "SELECT " SRC_COLS ", " IDX_COLS
		       " FROM sources WHERE name = ?1",
	[ST_SRC_PUT] = "INSERT INTO sources (" SRC_COLS ") VALUES (?1, ?2, ?3,"
		       " ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
		       " ?16, ?17, ?18) ON CONFLICT (name) DO UPDATE SET"
		       " url = ?2, path = ?3, format = ?4, subdomains = ?5,"
		       " allow = ?6, etag = ?7, last_modified = ?8, sha256 = ?9,"
		       " last_ok = ?10, last_attempt = ?11, last_error = ?12,"
		       " entries = ?13, fetches = ?14, failures = ?15,"
		       " not_modified = ?16, generation = ?17, rejected = ?18",
	[ST_SRC_LIST] = "SELECT " SRC_COLS ", " IDX_COLS
			" FROM sources ORDER BY name",
	[ST_SRC_DEL] = "DELETE FROM sources WHERE name = ?1",
	[ST_IDX_NEW] = "INSERT INTO sources (name) VALUES (?1)"
		       " ON CONFLICT (name) DO NOTHING",
	[ST_IDX_SET] = "UPDATE sources SET origin = ?2, entries_format = ?3,"
		       " index_sha256 = ?4, index_checksum = ?5,"
		       " index_entries = ?6, index_bytes = ?7 WHERE name = ?1",
};

struct bg_store {
	sqlite3 *db;
	sqlite3_stmt *st[ST__COUNT];
	char *dir; /* the state directory: where the index files are */
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

/*
 * The schema, when the database is new, or the upgrade of an older one.
 * Under an immediate transaction, so that two openers racing on a new
 * file create it once. *upgraded: a version-1 file was upgraded (its
 * dropped entries leave free pages the caller vacuums away).
 */
static int schema(struct bg_store *s, int *upgraded)
{
	char sql[64];
	int ret, v = 0;

	*upgraded = 0;
	ret = exec(s, "BEGIN IMMEDIATE");
	if (ret)
		return ret;
	ret = user_version(s, &v);
	if (!ret && v >= 0 && v < BG_STORE_SCHEMA) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
			 BG_STORE_SCHEMA);
		ret = exec(s, v == 0 ? SCHEMA : v == 1 ? UPGRADE_1 : "");
		if (!ret && v >= 1)
			ret = exec(s, UPGRADE_2);
		if (!ret)
			ret = exec(s, sql);
		*upgraded = v == 1;
		v = BG_STORE_SCHEMA;
	}
	if (!ret && v != BG_STORE_SCHEMA)
		ret = -EPROTO; /* a newer bloomgate's: not ours to rewrite */
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
	int ret, rc, v = 0, upgraded = 0;

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
	if (!s || !(s->dir = strdup(state_dir))) {
		free(s);
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
		/* an older file is upgraded by the agent, not by a reader:
		 * until then it is another version (check falls back) */
		ret = v == 0 ? -ENOENT : v != BG_STORE_SCHEMA ? -EPROTO : 0;
		if (ret)
			goto err;
		*sp = s;
		return 0;
	}
	/* WAL: readers (check, status) never block the agent's writes, nor
	 * the reverse; NORMAL: durable at checkpoints, never corrupt. */
	ret = exec(s, "PRAGMA journal_mode = WAL");
	if (!ret)
		ret = exec(s, "PRAGMA synchronous = NORMAL");
	if (!ret)
		ret = schema(s, &upgraded);
	if (ret)
		goto err;
	/* The dropped entries' pages back to the file system (a 10M-entry
	 * version-1 store held 750 MiB of them). Outside any transaction,
	 * as VACUUM must be; a failure (no room for its copy) leaves a
	 * correct, only larger, file. */
	if (upgraded)
		exec(s, "VACUUM; PRAGMA wal_checkpoint(TRUNCATE)");
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
	free(s->dir);
	free(s);
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
	col_text(st, 6, o->rec.v.etag, sizeof(o->rec.v.etag));
	col_text(st, 7, o->rec.v.last_modified, sizeof(o->rec.v.last_modified));
	col_text(st, 8, o->rec.sha256, sizeof(o->rec.sha256));
	o->rec.last_ok = sqlite3_column_double(st, 9);
	o->rec.last_attempt = sqlite3_column_double(st, 10);
	col_text(st, 11, o->rec.last_error, sizeof(o->rec.last_error));
	col_u64(st, 12, &o->rec.entries);
	col_u64(st, 13, &o->rec.fetches);
	col_u64(st, 14, &o->rec.failures);
	col_u64(st, 15, &o->rec.not_modified);
	col_u64(st, 16, &o->generation);
	col_u64(st, 17, &o->rec.rejected);
	col_text(st, SRC_NCOLS, o->origin, sizeof(o->origin));
	o->entries_format = sqlite3_column_int(st, SRC_NCOLS + 1);
	col_text(st, SRC_NCOLS + 2, o->index_sha256, sizeof(o->index_sha256));
	/* all 64 bits: stored as the int64 of the same bits */
	o->index_checksum = (uint64_t)sqlite3_column_int64(st, SRC_NCOLS + 3);
	col_u64(st, SRC_NCOLS + 4, &o->index_entries);
	col_u64(st, SRC_NCOLS + 5, &o->index_bytes);
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

void bg_store_source_describe(struct bg_store_source *row,
			      const struct bg_list_desc *list)
{
	snprintf(row->name, sizeof(row->name), "%s", list->name ? list->name : "");
	/* never the URL's password (core/url.h): the store is a file */
	bg_url_redact(list->url ? list->url : "", row->url, sizeof(row->url));
	snprintf(row->path, sizeof(row->path), "%s", list->path ? list->path : "");
	row->format = list->format;
	row->subdomains = list->subdomains;
	row->allow = list->allow;
}

int bg_store_source_put(struct bg_store *s, const struct bg_store_source *src)
{
	char url[sizeof(src->url)];
	sqlite3_stmt *st;
	int ret = 0;

	if (!src->name[0] || strnlen(src->name, sizeof(src->name)) >=
				     BG_STORE_NAME_MAX)
		return -EINVAL;
	if (!(st = stmt(s, ST_SRC_PUT, &ret)))
		return ret;
	bind_str(st, 1, src->name, sizeof(src->name));
	/* a row filled by hand is no exception (bound SQLITE_STATIC: url
	 * lives until the statement has run) */
	bind_str(st, 2, bg_url_redact(src->url, url, sizeof(url)), sizeof(url));
	bind_str(st, 3, src->path, sizeof(src->path));
	sqlite3_bind_int(st, 4, src->format);
	sqlite3_bind_int(st, 5, src->subdomains);
	sqlite3_bind_int(st, 6, src->allow);
	bind_str(st, 7, src->rec.v.etag, sizeof(src->rec.v.etag));
	bind_str(st, 8, src->rec.v.last_modified, sizeof(src->rec.v.last_modified));
	bind_str(st, 9, src->rec.sha256, sizeof(src->rec.sha256));
	sqlite3_bind_double(st, 10, src->rec.last_ok);
	sqlite3_bind_double(st, 11, src->rec.last_attempt);
	bind_str(st, 12, src->rec.last_error, sizeof(src->rec.last_error));
	bind_u64(st, 13, src->rec.entries);
	bind_u64(st, 14, src->rec.fetches);
	bind_u64(st, 15, src->rec.failures);
	bind_u64(st, 16, src->rec.not_modified);
	bind_u64(st, 17, src->generation);
	bind_u64(st, 18, src->rec.rejected);
	return step_done(st);
}

int bg_store_source_list(struct bg_store *s, struct bg_store_source **v,
			 size_t *n)
{
	struct bg_store_source *out = NULL;
	size_t cnt = 0, cap = 0;
	sqlite3_stmt *st;
	int ret = 0, rc;

	*v = NULL;
	*n = 0;
	if (!(st = stmt(s, ST_SRC_LIST, &ret)))
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((ret = bg_grow(&out, &cap, cnt + 1, sizeof(*out), 8)))
			break;
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

/* ---- Index files ---------------------------------------------------- */

/* Source names are file names (the config allows A-Z a-z 0-9 . _ -, not
 * starting with '.'): anything else could name a path outside the
 * index directory, or one of the writer's temporary files. */
static int name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	return n && n < BG_STORE_NAME_MAX && name[0] != '.' &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

int bg_store_index_path(const char *state_dir, const char *name, char *buf,
			size_t len)
{
	int n;

	if (!state_dir || !name_ok(name))
		return -EINVAL;
	n = snprintf(buf, len, "%s/" BG_STORE_INDEX_DIR "/%s" BG_STORE_INDEX_EXT,
		     state_dir, name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

const char *bg_store_dir(const struct bg_store *s)
{
	return s->dir;
}

int bg_store_index_set(struct bg_store *s, const char *name,
		       const struct bg_store_index *ix)
{
	static const struct bg_store_index none = { .origin = "" };
	char origin[1024];
	sqlite3_stmt *st;
	int ret = 0, nested;

	if (!name_ok(name))
		return -EINVAL;
	if (!ix)
		ix = &none;
	ret = tx_begin(s, &nested);
	if (ret)
		return ret;
	if ((st = stmt(s, ST_IDX_NEW, &ret))) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		ret = step_done(st);
	}
	if (!ret && (st = stmt(s, ST_IDX_SET, &ret))) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		bg_url_redact(ix->origin ? ix->origin : "", origin, sizeof(origin));
		sqlite3_bind_text(st, 2, origin, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 3, ix->format);
		sqlite3_bind_text(st, 4, ix->sha256 ? ix->sha256 : "", -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)ix->checksum);
		bind_u64(st, 6, ix->entries);
		bind_u64(st, 7, ix->bytes);
		ret = step_done(st);
	}
	return tx_end(s, nested, ret);
}

/* Removes the index file of name, if any: 0, or -errno but -ENOENT. */
static int unlink_index(struct bg_store *s, const char *name)
{
	char path[PATH_MAX];
	int ret = bg_store_index_path(s->dir, name, path, sizeof(path));

	if (ret)
		return ret == -EINVAL ? 0 : ret; /* no such file can exist */
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

/*
 * The row goes first, the file after: a crash in between leaves a file no
 * row names, which no reader uses (a reader trusts only the index its row
 * records) and bg_store_prune() removes.
 */
int bg_store_source_delete(struct bg_store *s, const char *name)
{
	sqlite3_stmt *st;
	int ret = 0, nested;

	ret = tx_begin(s, &nested);
	if (ret)
		return ret;
	if ((st = stmt(s, ST_SRC_DEL, &ret))) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		ret = step_done(st);
		if (!ret && sqlite3_changes(s->db) == 0)
			ret = -ENOENT;
	}
	ret = tx_end(s, nested, ret);
	return ret ? ret : unlink_index(s, name);
}

static int kept(const char *name, const char *const *keep, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (keep[i] && !strcmp(keep[i], name))
			return 1;
	return 0;
}

/*
 * Files of the index directory no kept source owns: a removed source's
 * index, or a temporary file a crash left (".NAME.idx.XXXXXX"). A kept
 * source's temporary file is left to its writer, which may be writing it.
 */
static int prune_files(struct bg_store *s, const char *const *keep, size_t n)
{
	char dir[PATH_MAX], name[BG_STORE_NAME_MAX + 16];
	struct dirent *d;
	DIR *dp;
	int ret = 0;

	if (snprintf(dir, sizeof(dir), "%s/" BG_STORE_INDEX_DIR, s->dir) >=
	    (int)sizeof(dir))
		return -ENAMETOOLONG;
	dp = opendir(dir);
	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while ((d = readdir(dp))) {
		const char *f = d->d_name, *ext;
		size_t len;

		if (!strcmp(f, ".") || !strcmp(f, ".."))
			continue;
		snprintf(name, sizeof(name), "%s", f + (f[0] == '.'));
		ext = strstr(name, BG_STORE_INDEX_EXT);
		len = ext ? (size_t)(ext - name) : 0;
		if (ext && len < BG_STORE_NAME_MAX) {
			name[len] = '\0';
			/* NAME.idx exactly, or the temporary .NAME.idx.X */
			if (kept(name, keep, n) &&
			    (f[0] == '.' ? ext[strlen(BG_STORE_INDEX_EXT)] == '.'
					 : !ext[strlen(BG_STORE_INDEX_EXT)]))
				continue;
		}
		if (unlinkat(dirfd(dp), f, 0) < 0 && errno != ENOENT && !ret)
			ret = -errno;
	}
	closedir(dp);
	return ret;
}

int bg_store_prune(struct bg_store *s, const char *const *keep, size_t n)
{
	struct bg_store_source *v;
	size_t nv, i;
	int ret, gone = 0, nested;

	ret = bg_store_source_list(s, &v, &nv);
	if (ret)
		return ret;
	ret = tx_begin(s, &nested);
	if (ret) {
		free(v);
		return ret;
	}
	for (i = 0; !ret && i < nv; i++) {
		sqlite3_stmt *st;

		if (kept(v[i].name, keep, n))
			continue;
		if ((st = stmt(s, ST_SRC_DEL, &ret))) {
			sqlite3_bind_text(st, 1, v[i].name, -1, SQLITE_STATIC);
			ret = step_done(st);
			gone++;
		}
	}
	ret = tx_end(s, nested, ret);
	free(v);
	if (ret)
		return ret;
	/* after the rows: a file whose row is gone is used by nobody */
	ret = prune_files(s, keep, n);
	return ret ? ret : gone;
}
