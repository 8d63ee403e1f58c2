/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's store (issue 9): an embedded SQLite database,
 * STATE_DIR/bloomgate.db, holding every source the agent feeds the filter
 * from (its origin, HTTP validators, checksum, counters, last error) and
 * every entry of every source with the line it came from. It outlives the
 * agent, so a restart knows its validators (no re-download) and `check`
 * can explain a verdict after the list file changed or the URL moved on:
 * the entries are those of the agent's last good copy, which built the
 * filter, not those of whatever the origin holds now.
 *
 * Core library: SQLite only, no libbpf. Entries are parsed by the load's
 * own parsers (bg_list_scan(), bg_names_parse_buf()), never a copy.
 *
 * Concurrency: one writer (the agent), any number of readers (`check`,
 * `status`): WAL journal, and a busy timeout so that a reader meeting a
 * checkpoint waits instead of failing. A handle is for one thread.
 *
 * Every function returns 0 (or a count) or a negative errno: -ENOMEM,
 * -EBUSY (locked past the timeout), -ENOSPC, -EROFS, -EACCES, -EBADMSG
 * (the file is not a SQLite database, or is corrupt), -EPROTO (a schema
 * version this build does not know, from a newer bloomgate), -EIO for any
 * other SQLite failure; bg_store_errmsg() says more.
 */
#ifndef BLOOMGATE_STORE_H
#define BLOOMGATE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "core/explain.h"

/* The database file in the state directory. */
#define BG_STORE_FILE "bloomgate.db"
/* PRAGMA user_version of the schema this build writes. */
#define BG_STORE_SCHEMA 1
/* Longest source name + 1 (struct bg_store_source.name). */
#define BG_STORE_NAME_MAX BG_EXPLAIN_NAME_MAX
/* Bytes of a line's text kept per entry ("..." marks a cut). */
#define BG_STORE_TEXT_MAX BG_EXPLAIN_TEXT_MAX

struct bg_store;

/*
 * Opens STATE_DIR/bloomgate.db, creating the directory (mode 0700, its
 * parent must exist) and the database with its schema when absent.
 */
int bg_store_open(const char *state_dir, struct bg_store **s);
/*
 * Opens an existing store read-only (for `check` and `status`): nothing is
 * created; -ENOENT when there is no database or it has no schema yet.
 */
int bg_store_open_ro(const char *state_dir, struct bg_store **s);
void bg_store_close(struct bg_store *s);
/* SQLite's message about the last failure on s, for logs. */
const char *bg_store_errmsg(struct bg_store *s);

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

struct bg_store_source {
	char name[BG_STORE_NAME_MAX];
	char url[1024], path[1024]; /* one of them, the other "" */
	int format, subdomains, allow; /* as configured (enum bg_format) */
	char etag[256], last_modified[64], sha256[65];
	double last_ok, last_attempt; /* unix time, 0: never */
	char last_error[256];
	uint64_t entries, fetches, failures, not_modified, generation;
	/*
	 * Set by bg_store_set_entries(), ignored by bg_store_source_put():
	 * where the stored entries came from (what explanations name) and the
	 * format they were parsed as (detected when format is BG_FMT_AUTO).
	 */
	char origin[1024];
	int entries_format;
};

/* -ENOENT when there is no source of that name. */
int bg_store_source_get(struct bg_store *s, const char *name,
			struct bg_store_source *out);
/* Inserts or updates the source by name (origin, entries_format kept). */
int bg_store_source_put(struct bg_store *s, const struct bg_store_source *src);
/* All sources, by name; free(*v). */
int bg_store_source_list(struct bg_store *s, struct bg_store_source **v,
			 size_t *n);
/* Removes the source and its entries; -ENOENT when there is none. */
int bg_store_source_delete(struct bg_store *s, const char *name);

/*
 * Replaces the entries of source name by those of the list file at copy
 * (the agent's last good copy), parsed exactly as `load` parses it with
 * the given format (BG_FMT_AUTO: detected, bg_format_detect()), subdomains
 * and allow: every accepted entry with its line; rejected lines are left
 * out silently (the agent's parse reported them). origin (the URL or path
 * the copy came from; NULL: the source's url, else its path) is what
 * explanations name. One transaction: on any failure the old entries stay.
 * The source's row is created when absent; its entries (the count
 * stored), origin and entries_format are set. Returns the number of
 * entries stored, or -errno (-errno of reading copy included; -EINVAL for
 * a name too long or an unknown format).
 */
int bg_store_set_entries(struct bg_store *s, const char *name,
			 const char *origin, const char *copy, int format,
			 int subdomains, int allow);

/*
 * The entries behind a check of arg, from the store: for an address (as
 * bg_parse_addr() reads it) every stored prefix containing it, any length,
 * both block and allow entries; for a name (bg_name_normalise()) the
 * entries the datapath's probes find, as bg_names_find() does: the name
 * itself as an exact or name-and-subdomains rule, and each proper parent
 * of at most BG_DNS_SUFFIX_MAX labels as a name-and-subdomains or
 * subdomains-only rule. Hits are ordered by source name, then line; free
 * *hits. -EINVAL when arg is neither an address nor a name.
 */
int bg_store_explain(struct bg_store *s, const char *arg,
		     struct bg_explain_hit **hits, size_t *n);
/* bg_store_explain() as a bg_explain_find_fn (ctx: the store). */
int bg_store_find(void *ctx, const char *arg, struct bg_explain_hit **hits,
		  size_t *n);

#endif
