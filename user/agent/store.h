/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's store (issue 9): an embedded SQLite database,
 * STATE_DIR/bloomgate.db, holding every source the agent feeds the filter
 * from (its origin, HTTP validators, checksum, counters, last error) and
 * the record of its provenance index: STATE_DIR/index/NAME.idx, one file
 * per source, which says for every entry of the agent's last good copy
 * which line it came from (user/agent/provenance.h writes and reads them).
 * It outlives the agent, so a restart knows its validators (no
 * re-download) and `check` can explain a verdict after the list file
 * changed or the URL moved on: the entries are those of the agent's last
 * good copy, which built the filter, not those of whatever the origin
 * holds now.
 *
 * Agent library: SQLite only, no libbpf.
 *
 * Concurrency: one writer (the agent), any number of readers (`check`,
 * `status`): WAL journal, and a busy timeout so that a reader meeting a
 * checkpoint waits instead of failing. A handle is for one thread.
 *
 * Every function returns 0 (or a count) or a negative errno: -ENOMEM,
 * -EBUSY (locked past the timeout), -ENOSPC, -EROFS, -EACCES, -EBADMSG
 * (the file is not a SQLite database, or is corrupt), -EPROTO (a schema
 * version this build does not know, from a newer bloomgate), -EIO for any
 * other SQLite failure.
 */
#ifndef BLOOMGATE_STORE_H
#define BLOOMGATE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "agent/source.h" /* struct bg_src_record */
#include "core/explain.h" /* BG_EXPLAIN_NAME_MAX */
#include "core/sources.h"

/* The database file in the state directory. */
#define BG_STORE_FILE "bloomgate.db"
/* PRAGMA user_version of the schema this build writes. 2: the entries
 * table gave way to index files; 3: the rejected lines of a copy (older
 * versions are upgraded on open). */
#define BG_STORE_SCHEMA 3
/* STATE_DIR/BG_STORE_INDEX_DIR/NAME BG_STORE_INDEX_EXT: a source's index. */
#define BG_STORE_INDEX_DIR "index"
#define BG_STORE_INDEX_EXT ".idx"
/* Longest source name + 1 (struct bg_store_source.name). */
#define BG_STORE_NAME_MAX BG_EXPLAIN_NAME_MAX

struct bg_store;

/*
 * Opens STATE_DIR/bloomgate.db, creating the directory (mode 0700, its
 * parent must exist) and the database with its schema when absent. A
 * version-1 store is upgraded: its entries table dropped and the file
 * vacuumed (its sources kept; their indexes are missing until written).
 */
int bg_store_open(const char *state_dir, struct bg_store **s);
/*
 * Opens an existing store read-only (for `check` and `status`): nothing is
 * created; -ENOENT when there is no database or it has no schema yet.
 */
int bg_store_open_ro(const char *state_dir, struct bg_store **s);
void bg_store_close(struct bg_store *s);

/*
 * Each call below is atomic on its own. bg_store_begin() groups the calls
 * up to bg_store_commit() into one transaction, so that readers see all
 * of them or none (say, every source a rebuild used and its generation,
 * when the new filter is published); a call failing inside it undoes only
 * its own changes. bg_store_rollback() drops the group.
 */
int bg_store_begin(struct bg_store *s);
int bg_store_commit(struct bg_store *s);
int bg_store_rollback(struct bg_store *s);

/*
 * A source's row. What the list is (struct bg_list_desc) is held here as
 * the row's columns, in arrays: a row read comes out of SQLite into the
 * caller's struct without an allocation, and is copied by value. Filled
 * from the list's description by bg_store_source_describe() only; the
 * store keeps name, url, path, format, subdomains and allow (allow_wide
 * has no column: it decides nothing the store is read for).
 */
struct bg_store_source {
	char name[BG_STORE_NAME_MAX];
	char url[1024], path[1024]; /* one of them, the other "" */
	int format, subdomains, allow; /* as configured (enum bg_format) */
	/* what the source holds and did: the agent's struct source.rec, as
	 * it is */
	struct bg_src_record rec;
	uint64_t generation; /* the agent's filter generation at the write */
	/*
	 * Set by bg_store_index_set(), ignored by bg_store_source_put(): the
	 * index the provenance writer committed for the source: where its
	 * copy came from (what explanations name), the format it was parsed
	 * with (as configured: BG_FMT_AUTO when detected), the SHA-256 of the
	 * copy it indexes, the file's checksum (its header's, which covers
	 * the whole file: a reader uses only the file this names), its
	 * entries and bytes. index_sha256 "": no index.
	 */
	char origin[1024];
	int entries_format;
	char index_sha256[65];
	uint64_t index_checksum, index_entries, index_bytes;
};

/* The row's description of the list from *list: name, url and path
 * copied into the arrays (NULL as ""), the read options it keeps. */
void bg_store_source_describe(struct bg_store_source *row,
			      const struct bg_list_desc *list);
/* -ENOENT when there is no source of that name. */
int bg_store_source_get(struct bg_store *s, const char *name,
			struct bg_store_source *out);
/* Inserts or updates the source by name (origin, entries_format kept). */
int bg_store_source_put(struct bg_store *s, const struct bg_store_source *src);
/* All sources, by name; free(*v). */
int bg_store_source_list(struct bg_store *s, struct bg_store_source **v,
			 size_t *n);
/* Removes the source and its index file; -ENOENT when there is none.
 * The file goes at once, after the row, even inside a bg_store_begin()
 * group that is rolled back later: the index is then missing, which check
 * reports and bg_prov_verify() finds. */
int bg_store_source_delete(struct bg_store *s, const char *name);
/*
 * Keeps only the sources named in keep[0..n-1] (the agent's configured
 * lists): every other source's row and index file are removed, and every
 * file of the index directory that no kept source owns (a temporary file
 * a crash left, an orphan). Returns the number of sources removed.
 */
int bg_store_prune(struct bg_store *s, const char *const *keep, size_t n);

/* What the provenance writer records of an index it committed. */
struct bg_store_index {
	const char *origin; /* the URL or path the copy came from */
	int format; /* as parsed (enum bg_format) */
	const char *sha256; /* hex SHA-256 of the copy the index indexes */
	uint64_t checksum; /* the index file's checksum (its header's) */
	uint64_t entries, bytes;
};

/* Records (replaces) the index of source name, creating the row when
 * absent; ix NULL: the source has no index. -EINVAL for a name that cannot
 * be a file name. */
int bg_store_index_set(struct bg_store *s, const char *name,
		       const struct bg_store_index *ix);
/* STATE_DIR/index/NAME.idx into buf: 0, -EINVAL (a name that cannot be a
 * file name: A-Z a-z 0-9 . _ -, not starting with '.'), -ENAMETOOLONG. */
int bg_store_index_path(const char *state_dir, const char *name, char *buf,
			size_t len);
/* The state directory s was opened in. */
const char *bg_store_dir(const struct bg_store *s);

#endif
