/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The fleet store: PostgreSQL (libpq) as the authority of a fleet of
 * gateways. A publisher stores each generation of the filter (the full
 * artifact, and for an incremental generation also its delta against the
 * one before), the lists it was built from, and announces it with NOTIFY;
 * gateways LISTEN, fetch what they need, and report what they enforce.
 *
 * Tables (created by bg_fleetdb_migrate(), all named bloomgate_*):
 *
 *   bloomgate_meta         key/value: the schema version, the last
 *                          generation ever published (last_generation)
 *   bloomgate_generations  one row a generation: number, kind (full or
 *                          delta), base generation, the full artifact's
 *                          checksum (the SHA-256 of its file, hex: what
 *                          sha256sum prints) and the base's, sizes, key
 *                          and entry counts, sources
 *                          (the artifact's SOURCES JSON), created_at,
 *                          the publisher's host name
 *   bloomgate_chunks       the artifacts' bytes: (generation, part 'full'
 *                          or 'delta', seq) -> up to BG_FLEETDB_CHUNK bytes
 *   bloomgate_lists        the lists of each generation: name, origin,
 *                          role, format, SHA-256, entries
 *   bloomgate_gateways     one row a gateway, its last report
 *
 * Every generation has its full artifact; a delta generation has its
 * delta too. Generation numbers only go up: each publish takes the one
 * after the last ever published, also when rows were deleted since (a
 * gateway that applied a number never sees it again for other bytes).
 * NOTIFY channel BG_FLEETDB_CHANNEL, payload the generation number in
 * decimal, sent when the publishing transaction commits.
 *
 * Schema version 2 (version 1 named generations by their header digest;
 * bg_fleetdb_migrate() recomputes them from the chunks, once). A
 * bloomgate of version 1 refuses a version 2 store.
 *
 * Every function returns 0 or a negative errno and, where a person must
 * read why, fills why (one line, no newline; never the password of the
 * connection string): -ECONNREFUSED / -ENOTCONN when the database cannot
 * be reached or the connection was lost (the caller retries with
 * backoff), -EPROTO for a schema of a newer bloomgate, -EIO for another
 * server error, -EINVAL for the caller's mistake.
 *
 * After -ENOTCONN a struct bg_fleetdb is dead for good (every call on it
 * returns -ENOTCONN at once): bg_fleetdb_close() it and
 * bg_fleetdb_connect() again, LISTEN again, and read bg_fleetdb_latest()
 * (what was announced meanwhile is not announced again). A call that
 * fails otherwise leaves the handle usable.
 *
 * One struct bg_fleetdb is one connection: one thread at a time.
 */
#ifndef BLOOMGATE_AGENT_FLEETDB_H
#define BLOOMGATE_AGENT_FLEETDB_H

#include <stddef.h>
#include <stdint.h>

#define BG_FLEETDB_CHANNEL "bloomgate_generation"
#define BG_FLEETDB_CHUNK (1u << 20)
#define BG_FLEETDB_SCHEMA 2
/* Generations kept by bg_fleetdb_prune() by default. */
#define BG_FLEETDB_KEEP 4

struct bg_fleetdb;

/*
 * Connects (a libpq connection string, key=value pairs or a postgresql://
 * URL) with a connect timeout of timeout seconds (0: 10; libpq counts
 * whole seconds, at least 2), which overrides a connect_timeout of url.
 * application_name is "bloomgate" unless url names another, and TCP
 * keepalives probe after 30 s of silence (a LISTENing gateway learns of a
 * vanished server in about 90 s). -EINVAL when url is malformed,
 * -ECONNREFUSED when the connection fails (refused, timed out, or
 * authentication refused: retrying is harmless).
 */
int bg_fleetdb_connect(const char *url, double timeout, struct bg_fleetdb **db,
		       char *why, size_t whylen);
void bg_fleetdb_close(struct bg_fleetdb *db);
/* Creates the tables when absent (idempotent, safe from several
 * processes at once: under an advisory lock). -EPROTO for a newer
 * schema. */
int bg_fleetdb_migrate(struct bg_fleetdb *db, char *why, size_t whylen);

enum bg_fleet_kind {
	BG_FLEET_FULL = 1,
	BG_FLEET_DELTA = 2,
};

/* A generation's row. */
struct bg_fleet_gen {
	uint64_t generation; /* 0: none yet */
	int kind; /* enum bg_fleet_kind */
	uint64_t base_generation; /* delta: the generation it applies to */
	char sha256[65]; /* the full artifact's checksum (hex) */
	char base_sha256[65]; /* delta: the base's full artifact checksum */
	uint64_t full_bytes, delta_bytes; /* delta_bytes 0 for a full one */
	uint64_t keys, entries;
	double created; /* unix time */
	char publisher[256];
};

/* One list of a generation (bloomgate_lists). */
struct bg_fleet_list {
	char name[256];
	char origin[1024]; /* path or URL, without a password */
	char role[16]; /* "block" or "allow" */
	char format[16];
	char sha256[65];
	uint64_t entries;
};

/* The newest generation (g->generation 0 when there is none). */
int bg_fleetdb_latest(struct bg_fleetdb *db, struct bg_fleet_gen *g,
		      char *why, size_t whylen);
/* The number the next publish takes: one above the last ever published
 * (rows deleted since included). */
int bg_fleetdb_next(struct bg_fleetdb *db, uint64_t *next, char *why,
		    size_t whylen);
/* Generation gen's row; -ENOENT when it is not (or no longer) there. */
int bg_fleetdb_get(struct bg_fleetdb *db, uint64_t gen, struct bg_fleet_gen *g,
		   char *why, size_t whylen);

/*
 * Stores a new generation g->generation, which must be bg_fleetdb_next()
 * (else -EAGAIN: another publisher was first), in one transaction under
 * an advisory lock: its row (sources: the SOURCES JSON text, stored as
 * jsonb; NULL: none), its full artifact read from full_path, its delta
 * from delta_path when g->kind is BG_FLEET_DELTA, its lists; then NOTIFY.
 * The bytes are streamed in BG_FLEETDB_CHUNK chunks.
 *
 * The row's sizes are the files' (g->full_bytes and g->delta_bytes: 0,
 * or the size expected, else -EINVAL); created_at is the server's clock;
 * an empty g->publisher is this host's name. -EINVAL too for a checksum
 * that is not 64 lowercase hex digits, a delta without a base below it,
 * a list whose role is neither "block" nor "allow" or whose name comes
 * twice, sources_json that is no JSON, an empty file; nothing is stored
 * then.
 */
int bg_fleetdb_publish(struct bg_fleetdb *db, const struct bg_fleet_gen *g,
		       const char *sources_json, const struct bg_fleet_list *lists,
		       size_t nlists, const char *full_path, const char *delta_path,
		       char *why, size_t whylen);

/* Deletes every generation but the newest keep (0: BG_FLEETDB_KEEP). */
int bg_fleetdb_prune(struct bg_fleetdb *db, unsigned int keep, char *why,
		     size_t whylen);

/*
 * Writes generation gen's full artifact (delta 0) or its delta (delta 1)
 * to path, atomically (a temporary file beside it, renamed), streaming
 * the chunks; sha (may be NULL): the SHA-256 of what was written, hex,
 * hashed as it is streamed. -ENOENT when the generation (or that part) is
 * not there. The artifact is not verified here: the caller opens and
 * verifies it and compares its checksum with the row's. A failure of the
 * local file is its -errno (-ENOSPC...), but ENOENT, a directory missing,
 * is -EIO.
 */
int bg_fleetdb_fetch(struct bg_fleetdb *db, uint64_t gen, int delta,
		     const char *path, char sha[65], char *why, size_t whylen);

/* LISTEN on BG_FLEETDB_CHANNEL; then bg_fleetdb_fd() is the socket to
 * poll for input and bg_fleetdb_notified() consumes it. */
int bg_fleetdb_listen(struct bg_fleetdb *db, char *why, size_t whylen);
int bg_fleetdb_fd(const struct bg_fleetdb *db);
/* Reads what the socket has: 1 with *gen the highest generation announced
 * when a notification came, 0 when none; -ENOTCONN when the connection
 * was lost. Never blocks. Notifications that came during another call on
 * the same handle (a fetch) are queued and returned here although the
 * socket no longer shows them: call it after such calls too, not only
 * when poll says the socket is readable. */
int bg_fleetdb_notified(struct bg_fleetdb *db, uint64_t *gen);

/* A gateway's report (bloomgate_gateways). */
struct bg_fleet_report {
	char gateway[256];
	uint64_t generation; /* applied; 0: none */
	double applied_at; /* unix time; 0: never */
	uint32_t filter_id;
	uint64_t keys, entries;
	/* the datapath's counters (sums over CPUs and attachments) */
	uint64_t packets, dropped, bloom_fp;
	char last_error[512]; /* "" when none */
	char state[32]; /* "ok", "failing", "pending" */
	double reported_at; /* unix time; set by bg_fleetdb_report() */
	/* bg_fleetdb_status(): the newest generation minus this one
	 * (negative: the gateway is ahead of the store, whose newest rows
	 * were deleted), and the seconds since the first generation it does
	 * not run was created (0 when current or ahead) */
	int64_t lag_generations;
	double lag_seconds;
};

/* Inserts or updates r->gateway's row (reported_at: now, the server's). */
int bg_fleetdb_report(struct bg_fleetdb *db, const struct bg_fleet_report *r,
		      char *why, size_t whylen);
/* Every gateway's row, by name, with its lag against the newest
 * generation (*latest filled, may be NULL); *v malloc'd. */
int bg_fleetdb_status(struct bg_fleetdb *db, struct bg_fleet_gen *latest,
		      struct bg_fleet_report **v, size_t *n, char *why,
		      size_t whylen);

/* The URL as it may be printed: its password replaced by "***"
 * (BG_URL_SECRET, the one mask; bg_redact() writes it); in a
 * URL the password of its userinfo and a password= of its query, in
 * key=value form the value of password (and a URL given as dbname).
 * Returns buf; a result cut short by len never holds a byte of the
 * password. */
const char *bg_fleetdb_redact(const char *url, char *buf, size_t len);

#endif
