// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fleet store's notifications (LISTEN/NOTIFY of a new generation) and
 * its gateways' reports and status (user/agent/fleetdb_priv.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <openssl/evp.h>

#include "agent/fetch.h"
#include "agent/fleetdb.h"
#include "agent/fleetdb_priv.h"
#include "core/sha.h"
#include "core/units.h"
#include "core/url.h"

/* ---- Notifications ----------------------------------------------------------- */

int bg_fleetdb_listen(struct bg_fleetdb *db, char *why, size_t whylen)
{
	int ret = fdb_usable(db, why, whylen);

	if (ret)
		return ret;
	return fdb_cmd(db, "listen", "LISTEN " BG_FLEETDB_CHANNEL, 0, NULL, why,
		   whylen);
}

int bg_fleetdb_fd(const struct bg_fleetdb *db)
{
	return db && db->conn ? PQsocket(db->conn) : -1;
}

int bg_fleetdb_notified(struct bg_fleetdb *db, uint64_t *gen)
{
	PGnotify *n;
	uint64_t v;
	char *end;
	int got = 0;

	if (!db || !db->conn || !gen)
		return -EINVAL;
	*gen = 0;
	/* libpq's socket is non-blocking: this reads what has come, if
	 * anything, and returns */
	if (PQstatus(db->conn) != CONNECTION_OK || db->gone ||
	    !PQconsumeInput(db->conn))
		return -ENOTCONN;
	while ((n = PQnotifies(db->conn))) {
		if (!strcmp(n->relname, BG_FLEETDB_CHANNEL)) {
			errno = 0;
			v = strtoull(n->extra, &end, 10);
			/* a payload that is no number (another program on
			 * the channel) announces nothing */
			if (!errno && end != n->extra && !*end) {
				got = 1;
				if (v > *gen)
					*gen = v;
			}
		}
		PQfreemem(n);
	}
	/* PQnotifies() parsed what came: a FATAL among it (db->gone), or
	 * the close read with it */
	if (PQstatus(db->conn) != CONNECTION_OK || db->gone)
		return -ENOTCONN;
	return got;
}

/* ---- Gateways ------------------------------------------------------------------ */

int bg_fleetdb_report(struct bg_fleetdb *db, const struct bg_fleet_report *r,
		      char *why, size_t whylen)
{
	char gen[24], applied[32], fid[24], keys[24], entries[24], packets[24],
		dropped[24], fp[24];
	const char *params[11];
	int ret;

	ret = fdb_usable(db, why, whylen);
	if (ret)
		return ret;
	if (!r || !r->gateway[0]) {
		fdb_say(why, whylen, "report: no gateway name");
		return -EINVAL;
	}
	snprintf(applied, sizeof(applied), "%.6f",
		 r->applied_at > 0 ? r->applied_at : 0);
	snprintf(fid, sizeof(fid), "%" PRIu32, r->filter_id);
	params[0] = r->gateway;
	params[1] = fdb_u64s(gen, r->generation);
	params[2] = applied;
	params[3] = fid;
	params[4] = fdb_u64s(keys, r->keys);
	params[5] = fdb_u64s(entries, r->entries);
	params[6] = fdb_u64s(packets, r->packets);
	params[7] = fdb_u64s(dropped, r->dropped);
	params[8] = fdb_u64s(fp, r->bloom_fp);
	params[9] = r->last_error;
	params[10] = r->state;
	return fdb_cmd(db, "report",
		   "INSERT INTO bloomgate_gateways AS g (gateway, generation,"
		   " applied_at, filter_id, keys, entries, packets, dropped,"
		   " bloom_fp, last_error, state, reported_at)"
		   " VALUES ($1, $2, CASE WHEN $3::float8 > 0"
		   " THEN to_timestamp($3::float8) END, $4, $5, $6, $7, $8, $9,"
		   " $10, $11, now())"
		   " ON CONFLICT (gateway) DO UPDATE SET"
		   " generation = EXCLUDED.generation,"
		   " applied_at = EXCLUDED.applied_at,"
		   " filter_id = EXCLUDED.filter_id, keys = EXCLUDED.keys,"
		   " entries = EXCLUDED.entries, packets = EXCLUDED.packets,"
		   " dropped = EXCLUDED.dropped, bloom_fp = EXCLUDED.bloom_fp,"
		   " last_error = EXCLUDED.last_error, state = EXCLUDED.state,"
		   " reported_at = EXCLUDED.reported_at",
		   11, params, why, whylen);
}

int bg_fleetdb_status(struct bg_fleetdb *db, struct bg_fleet_gen *latest,
		      struct bg_fleet_report **v, size_t *n, char *why,
		      size_t whylen)
{
	struct bg_fleet_gen newest;
	struct bg_fleet_report *out = NULL;
	PGresult *res = NULL;
	int ret, i, rows;

	if (v)
		*v = NULL;
	if (n)
		*n = 0;
	if (!v || !n)
		return -EINVAL;
	ret = fdb_usable(db, why, whylen);
	if (ret)
		return ret;
	/* the newest and the lags from one snapshot: a generation published
	 * meanwhile is in both or in neither */
	ret = fdb_cmd(db, "status: begin",
		  "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL,
		  why, whylen);
	if (!ret)
		ret = bg_fleetdb_latest(db, &newest, why, whylen);
	if (ret)
		goto out;
	/*
	 * lag_seconds: since the creation of the oldest generation newer than
	 * the gateway's, the first it does not run (a pruned one is not
	 * counted: the lag is then the oldest kept's). now() is the
	 * transaction's start, the same instant for every row.
	 */
	res = fdb_run(db, "status",
		  "SELECT g.gateway, g.generation,"
		  " coalesce(extract(epoch FROM g.applied_at), 0), g.filter_id,"
		  " g.keys, g.entries, g.packets, g.dropped, g.bloom_fp,"
		  " g.last_error, g.state, extract(epoch FROM g.reported_at),"
		  " n.newest - g.generation,"
		  " coalesce((SELECT greatest(extract(epoch FROM"
		  "   now() - min(x.created_at)), 0)"
		  "  FROM bloomgate_generations x"
		  "  WHERE x.generation > g.generation), 0)"
		  " FROM bloomgate_gateways g, (SELECT coalesce(max(generation),"
		  "  0) AS newest FROM bloomgate_generations) n"
		  " ORDER BY g.gateway",
		  0, NULL, &ret, why, whylen);
	if (!res)
		goto out;
	rows = PQntuples(res);
	out = calloc(rows ? (size_t)rows : 1, sizeof(*out));
	if (!out) {
		fdb_say(why, whylen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < rows; i++) {
		struct bg_fleet_report *r = &out[i];

		fdb_col_str(res, i, 0, r->gateway, sizeof(r->gateway));
		r->generation = fdb_col_u64(res, i, 1);
		r->applied_at = fdb_col_double(res, i, 2);
		r->filter_id = (uint32_t)fdb_col_u64(res, i, 3);
		r->keys = fdb_col_u64(res, i, 4);
		r->entries = fdb_col_u64(res, i, 5);
		r->packets = fdb_col_u64(res, i, 6);
		r->dropped = fdb_col_u64(res, i, 7);
		r->bloom_fp = fdb_col_u64(res, i, 8);
		fdb_col_str(res, i, 9, r->last_error, sizeof(r->last_error));
		fdb_col_str(res, i, 10, r->state, sizeof(r->state));
		r->reported_at = fdb_col_double(res, i, 11);
		r->lag_generations = strtoll(PQgetvalue(res, i, 12), NULL, 10);
		r->lag_seconds = fdb_col_double(res, i, 13);
	}
	ret = fdb_cmd(db, "status: end", "COMMIT", 0, NULL, why, whylen);
	if (ret)
		goto out;
	if (latest)
		*latest = newest;
	*v = out;
	*n = (size_t)rows;
	out = NULL;
out:
	PQclear(res);
	free(out);
	if (ret)
		fdb_rollback(db);
	return ret;
}

