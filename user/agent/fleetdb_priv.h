/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The fleet store's parts (user/agent/fleetdb.h is its interface), shared
 * by its three files: fleetdb.c (a message in one line without a secret,
 * the errors, the connection, the schema and its migrations),
 * fleetdb_gen.c (the generations: published, fetched, pruned) and
 * fleetdb_gw.c (the notifications and the gateways' reports and status).
 */
#ifndef BLOOMGATE_AGENT_FLEETDB_PRIV_H
#define BLOOMGATE_AGENT_FLEETDB_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>
#include <openssl/evp.h>

#include "agent/fleetdb.h"


/* pg_type.oid of bytea (catalog/pg_type_d.h is a server header) */
#define BYTEA_OID 17

/* pg_advisory_xact_lock() keys: "bloomgat" in ASCII, then which critical
 * section. Every bloomgate takes the same, and they are unlikely to meet
 * another application's keys in the same database. */
#define LOCK_MIGRATE "7092166037569233152" /* 0x626c6f6f6d676100 */
#define LOCK_PUBLISH "7092166037569233153" /* 0x626c6f6f6d676101 */

/* The text that replaces a password: the one mask (core/url.h). */
#define SECRET BG_URL_SECRET

/* Seconds of silence on a TCP connection before the kernel probes it, and
 * the probes: a gateway that LISTENs for hours learns within a minute or
 * two that its server went away with the network (no FIN, no RST), instead
 * of after the kernel's default two hours. Unix sockets ignore them. */
#define KEEPALIVE_IDLE "30"
#define KEEPALIVE_INTERVAL "10"
#define KEEPALIVE_COUNT "6"

struct bg_fleetdb {
	PGconn *conn;
	/* the server said FATAL outside a command: the session is over */
	int gone;
};



/* The highest generation ever published: the store's newest, or the one
 * bloomgate_meta remembers when rows were deleted since. */
#define LAST_SQL                                                               \
	"SELECT greatest(coalesce(max(generation), 0),"                       \
	" coalesce((SELECT value::bigint FROM bloomgate_meta"                 \
	" WHERE key = 'last_generation'), 0)) FROM bloomgate_generations"

/* The columns of struct bg_fleet_gen, in the order gen_row() reads them. */
#define GEN_COLS                                                               \
	"generation, kind, coalesce(base_generation, 0), sha256,"             \
	" coalesce(base_sha256, ''), full_bytes, delta_bytes, keys, entries," \
	" extract(epoch FROM created_at), publisher"

void fdb_say(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int fdb_res_fail(const struct bg_fleetdb *db, const PGresult *res,
		 const char *what, char *why, size_t whylen);
int fdb_usable(const struct bg_fleetdb *db, char *why, size_t whylen);
PGresult *fdb_run(struct bg_fleetdb *db, const char *what, const char *sql,
		  int n, const char *const *params, int *err, char *why,
		  size_t whylen);
int fdb_cmd(struct bg_fleetdb *db, const char *what, const char *sql, int n,
	    const char *const *params, char *why, size_t whylen);
void fdb_rollback(struct bg_fleetdb *db);
const char *fdb_u64s(char b[24], uint64_t v);
uint64_t fdb_col_u64(const PGresult *res, int row, int col);
double fdb_col_double(const PGresult *res, int row, int col);
void fdb_col_str(const PGresult *res, int row, int col, char *out,
		 size_t size);
int fdb_get_chunks(struct bg_fleetdb *db, const char *gen, const char *part,
		   uint64_t want, int fd, EVP_MD_CTX *md, const char *tmp,
		   char *why, size_t whylen);

#endif
