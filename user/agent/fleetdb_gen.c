// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fleet store's generations (user/agent/fleetdb_priv.h): published in
 * one transaction, a chunk a row; fetched from one snapshot in single-row
 * mode, a chunk at a time to a temporary file; pruned.
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

/* ---- Generations ----------------------------------------------------------- */

static void gen_row(const PGresult *res, int row, struct bg_fleet_gen *g)
{
	memset(g, 0, sizeof(*g));
	g->generation = fdb_col_u64(res, row, 0);
	g->kind = !strcmp(PQgetvalue(res, row, 1), "delta") ? BG_FLEET_DELTA :
							       BG_FLEET_FULL;
	g->base_generation = fdb_col_u64(res, row, 2);
	fdb_col_str(res, row, 3, g->sha256, sizeof(g->sha256));
	fdb_col_str(res, row, 4, g->base_sha256, sizeof(g->base_sha256));
	g->full_bytes = fdb_col_u64(res, row, 5);
	g->delta_bytes = fdb_col_u64(res, row, 6);
	g->keys = fdb_col_u64(res, row, 7);
	g->entries = fdb_col_u64(res, row, 8);
	g->created = fdb_col_double(res, row, 9);
	fdb_col_str(res, row, 10, g->publisher, sizeof(g->publisher));
}

/* A generation's row: the newest (gen 0) or gen's. 1 found, 0 not,
 * -errno. */
static int gen_query(struct bg_fleetdb *db, uint64_t gen, struct bg_fleet_gen *g,
		     char *why, size_t whylen)
{
	const char *params[1];
	char b[24];
	PGresult *res;
	int ret;

	if (!g)
		return -EINVAL;
	memset(g, 0, sizeof(*g));
	ret = fdb_usable(db, why, whylen);
	if (ret)
		return ret;
	params[0] = fdb_u64s(b, gen);
	res = fdb_run(db, gen ? "generation" : "newest generation",
		  gen ? "SELECT " GEN_COLS " FROM bloomgate_generations"
			" WHERE generation = $1" :
			"SELECT " GEN_COLS " FROM bloomgate_generations"
			" ORDER BY generation DESC LIMIT 1",
		  gen ? 1 : 0, gen ? params : NULL, &ret, why, whylen);
	if (!res)
		return ret;
	ret = PQntuples(res) > 0;
	if (ret)
		gen_row(res, 0, g);
	PQclear(res);
	return ret;
}

int bg_fleetdb_latest(struct bg_fleetdb *db, struct bg_fleet_gen *g,
		      char *why, size_t whylen)
{
	int ret = gen_query(db, 0, g, why, whylen);

	return ret < 0 ? ret : 0;
}

int bg_fleetdb_next(struct bg_fleetdb *db, uint64_t *next, char *why,
		    size_t whylen)
{
	PGresult *res;
	int ret;

	*next = 0;
	ret = fdb_usable(db, why, whylen);
	if (ret)
		return ret;
	res = fdb_run(db, "the next generation", LAST_SQL, 0, NULL, &ret, why, whylen);
	if (!res)
		return ret;
	*next = fdb_col_u64(res, 0, 0) + 1;
	PQclear(res);
	return 0;
}

int bg_fleetdb_get(struct bg_fleetdb *db, uint64_t gen, struct bg_fleet_gen *g,
		   char *why, size_t whylen)
{
	int ret = gen ? gen_query(db, gen, g, why, whylen) : 0;

	if (!gen && g)
		memset(g, 0, sizeof(*g));

	if (ret == 0) {
		fdb_say(why, whylen, "generation %" PRIu64 " is not in the fleet database",
		    gen);
		return -ENOENT;
	}
	return ret < 0 ? ret : 0;
}

static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = read(fd, (char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/*
 * Inserts the file open at fd (size bytes when it was opened) as the
 * chunks of generation gen's part: a chunk read, a chunk sent, as a
 * binary parameter. buf holds BG_FLEETDB_CHUNK bytes.
 */
static int put_chunks(struct bg_fleetdb *db, const char *gen, const char *part,
		      int fd, const char *path, uint64_t size, char *buf,
		      char *why, size_t whylen)
{
	static const Oid types[4] = { 0, 0, 0, BYTEA_OID };
	static const int formats[4] = { 0, 0, 0, 1 };
	const char *params[4];
	int lengths[4] = { 0, 0, 0, 0 };
	char seqs[24], what[64];
	uint64_t done = 0;
	uint32_t seq;
	PGresult *res;
	ssize_t n;

	for (seq = 0;; seq++) {
		n = read_full(fd, buf, BG_FLEETDB_CHUNK);
		if (n < 0) {
			fdb_say(why, whylen, "%s: %s", path, strerror((int)-n));
			return (int)n;
		}
		if (!n)
			break;
		done += (uint64_t)n;
		if (done > size)
			break;
		snprintf(seqs, sizeof(seqs), "%" PRIu32, seq);
		params[0] = gen;
		params[1] = part;
		params[2] = seqs;
		params[3] = buf;
		lengths[3] = (int)n;
		res = PQexecParams(db->conn,
				   "INSERT INTO bloomgate_chunks"
				   " (generation, part, seq, data)"
				   " VALUES ($1, $2, $3, $4)",
				   4, types, params, lengths, formats, 0);
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			int err;

			snprintf(what, sizeof(what), "publish: %s chunk %" PRIu32,
				 part, seq);
			err = fdb_res_fail(db, res, what, why, whylen);
			PQclear(res);
			return err;
		}
		PQclear(res);
	}
	if (done != size) {
		fdb_say(why, whylen,
		    "%s: changed while it was read (%" PRIu64 " bytes, then %" PRIu64 " or more)",
		    path, size, done);
		return -EIO;
	}
	return 0;
}

/* The file at path, open; its size in *size (0 in *size: an error). */
static int open_part(const char *path, uint64_t want, uint64_t *size, int *fd,
		     char *why, size_t whylen)
{
	struct stat st;
	int err;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0 || fstat(*fd, &st) < 0) {
		err = -errno;
		fdb_say(why, whylen, "%s: %s", path, strerror(errno));
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return err;
	}
	posix_fadvise(*fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	*size = (uint64_t)st.st_size;
	if (!S_ISREG(st.st_mode) || !*size || (want && want != *size)) {
		if (!S_ISREG(st.st_mode))
			fdb_say(why, whylen, "%s: not a regular file", path);
		else if (!*size)
			fdb_say(why, whylen, "%s: empty", path);
		else
			fdb_say(why, whylen,
			    "%s: %" PRIu64 " bytes, the generation says %" PRIu64,
			    path, *size, want);
		close(*fd);
		*fd = -1;
		return -EINVAL;
	}
	return 0;
}

static int check_gen(const struct bg_fleet_gen *g, const char *full_path,
		     const char *delta_path, const struct bg_fleet_list *lists,
		     size_t nlists, char *why, size_t whylen)
{
	size_t i;

	if (!g || !full_path) {
		fdb_say(why, whylen, "publish: no generation or no artifact");
		return -EINVAL;
	}
	if (!g->generation || g->generation > INT64_MAX) {
		fdb_say(why, whylen, "publish: generation %" PRIu64 " out of range",
		    g->generation);
		return -EINVAL;
	}
	if (g->kind != BG_FLEET_FULL && g->kind != BG_FLEET_DELTA) {
		fdb_say(why, whylen, "publish: kind %d is neither full nor delta",
		    g->kind);
		return -EINVAL;
	}
	if (!bg_sha_hex_ok(g->sha256)) {
		fdb_say(why, whylen, "publish: checksum '%.64s' is no SHA-256 in hex",
		    g->sha256);
		return -EINVAL;
	}
	if (g->kind == BG_FLEET_DELTA &&
	    (!delta_path || !g->base_generation ||
	     g->base_generation >= g->generation || !bg_sha_hex_ok(g->base_sha256))) {
		fdb_say(why, whylen,
		    "publish: a delta needs its file, a base generation below %" PRIu64 " and the base's checksum",
		    g->generation);
		return -EINVAL;
	}
	if (nlists && !lists) {
		fdb_say(why, whylen, "publish: no lists");
		return -EINVAL;
	}
	for (i = 0; i < nlists; i++) {
		if (!lists[i].name[0] || (strcmp(lists[i].role, "block") &&
					  strcmp(lists[i].role, "allow"))) {
			fdb_say(why, whylen,
			    "publish: list %zu ('%.64s'): no name, or role '%.16s' is neither block nor allow",
			    i, lists[i].name, lists[i].role);
			return -EINVAL;
		}
	}
	return 0;
}

static int put_lists(struct bg_fleetdb *db, const char *gen,
		     const struct bg_fleet_list *lists, size_t nlists,
		     char *why, size_t whylen)
{
	const char *params[7];
	char entries[24];
	size_t i;
	int ret;

	for (i = 0; i < nlists; i++) {
		params[0] = gen;
		params[1] = lists[i].name;
		params[2] = lists[i].origin;
		params[3] = lists[i].role;
		params[4] = lists[i].format;
		params[5] = lists[i].sha256;
		params[6] = fdb_u64s(entries, lists[i].entries);
		ret = fdb_cmd(db, "publish: list",
			  "INSERT INTO bloomgate_lists (generation, name, origin,"
			  " role, format, sha256, entries)"
			  " VALUES ($1, $2, $3, $4, $5, $6, $7)",
			  7, params, why, whylen);
		if (ret)
			return ret;
	}
	return 0;
}

/* 0 when gen is the number the next publish takes (bg_fleetdb_next());
 * -EAGAIN when it is not: another publisher was first. */
static int is_next(struct bg_fleetdb *db, uint64_t gen, char *why, size_t whylen)
{
	uint64_t last;
	PGresult *res;
	int ret = 0;

	res = fdb_run(db, "publish: newest generation", LAST_SQL, 0, NULL, &ret, why,
		  whylen);
	if (!res)
		return ret;
	last = fdb_col_u64(res, 0, 0);
	PQclear(res);
	if (last == gen - 1)
		return 0;
	fdb_say(why, whylen,
	    "publish: generation %" PRIu64 " is not the next one (the last published is %" PRIu64 "): another publisher was first",
	    gen, last);
	return -EAGAIN;
}

int bg_fleetdb_publish(struct bg_fleetdb *db, const struct bg_fleet_gen *g,
		       const char *sources_json, const struct bg_fleet_list *lists,
		       size_t nlists, const char *full_path, const char *delta_path,
		       char *why, size_t whylen)
{
	char gen[24], base[24], fb[24], dbytes[24], keys[24], entries[24];
	char host[256], *buf = NULL;
	uint64_t full_size = 0, delta_size = 0;
	int full_fd = -1, delta_fd = -1, ret, delta;
	const char *params[12];

	ret = fdb_usable(db, why, whylen);
	if (!ret)
		ret = check_gen(g, full_path, delta_path, lists, nlists, why,
				whylen);
	if (ret)
		return ret;
	delta = g->kind == BG_FLEET_DELTA;
	/* the files first: a missing one is known before anything is sent */
	ret = open_part(full_path, g->full_bytes, &full_size, &full_fd, why,
			whylen);
	if (!ret && delta)
		ret = open_part(delta_path, g->delta_bytes, &delta_size,
				&delta_fd, why, whylen);
	if (ret)
		goto out;
	buf = malloc(BG_FLEETDB_CHUNK);
	if (!buf) {
		fdb_say(why, whylen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}

	fdb_u64s(gen, g->generation);
	ret = fdb_cmd(db, "publish: begin", "BEGIN", 0, NULL, why, whylen);
	/* publishers one at a time: the check of the newest below and the
	 * insert are then one step */
	if (!ret)
		ret = fdb_cmd(db, "publish: lock",
			  "SELECT pg_advisory_xact_lock(" LOCK_PUBLISH ")", 0,
			  NULL, why, whylen);
	if (ret)
		goto out;
	ret = is_next(db, g->generation, why, whylen);
	if (ret)
		goto out;

	if (!g->publisher[0] && !gethostname(host, sizeof(host)))
		host[sizeof(host) - 1] = '\0';
	else
		snprintf(host, sizeof(host), "%s", g->publisher);
	params[0] = gen;
	params[1] = delta ? "delta" : "full";
	params[2] = delta ? fdb_u64s(base, g->base_generation) : NULL;
	params[3] = g->sha256;
	params[4] = delta ? g->base_sha256 : NULL;
	params[5] = fdb_u64s(fb, full_size);
	params[6] = fdb_u64s(dbytes, delta_size);
	params[7] = fdb_u64s(keys, g->keys);
	params[8] = fdb_u64s(entries, g->entries);
	params[9] = sources_json;
	params[10] = host;
	ret = fdb_cmd(db, "publish: generation",
		  "INSERT INTO bloomgate_generations (generation, kind,"
		  " base_generation, sha256, base_sha256, full_bytes,"
		  " delta_bytes, keys, entries, sources, publisher)"
		  " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
		  11, params, why, whylen);
	if (!ret)
		ret = put_chunks(db, gen, "full", full_fd, full_path, full_size,
				 buf, why, whylen);
	if (!ret && delta)
		ret = put_chunks(db, gen, "delta", delta_fd, delta_path,
				 delta_size, buf, why, whylen);
	if (!ret)
		ret = put_lists(db, gen, lists, nlists, why, whylen);
	/* the number is used for good, whatever becomes of its rows */
	params[0] = gen;
	if (!ret)
		ret = fdb_cmd(db, "publish: the last generation",
			  "INSERT INTO bloomgate_meta (key, value)"
			  " VALUES ('last_generation', $1) ON CONFLICT (key)"
			  " DO UPDATE SET value = EXCLUDED.value", 1, params, why,
			  whylen);
	/* queued by the server, sent to the listeners when COMMIT succeeds
	 * (and never when it does not) */
	params[0] = BG_FLEETDB_CHANNEL;
	params[1] = gen;
	if (!ret)
		ret = fdb_cmd(db, "publish: notify", "SELECT pg_notify($1, $2)", 2,
			  params, why, whylen);
	if (!ret)
		ret = fdb_cmd(db, "publish: commit", "COMMIT", 0, NULL, why, whylen);
out:
	if (ret)
		fdb_rollback(db);
	free(buf);
	if (full_fd >= 0)
		close(full_fd);
	if (delta_fd >= 0)
		close(delta_fd);
	return ret;
}

int bg_fleetdb_prune(struct bg_fleetdb *db, unsigned int keep, char *why,
		     size_t whylen)
{
	const char *params[1];
	char k[24];
	int ret;

	ret = fdb_usable(db, why, whylen);
	if (ret)
		return ret;
	params[0] = fdb_u64s(k, keep ? keep : BG_FLEETDB_KEEP);
	/* under the publishers' lock: the newest are counted with no
	 * publication half done; chunks and lists go by ON DELETE CASCADE */
	ret = fdb_cmd(db, "prune: begin", "BEGIN", 0, NULL, why, whylen);
	if (!ret)
		ret = fdb_cmd(db, "prune: lock",
			  "SELECT pg_advisory_xact_lock(" LOCK_PUBLISH ")", 0,
			  NULL, why, whylen);
	if (!ret)
		ret = fdb_cmd(db, "prune",
			  "DELETE FROM bloomgate_generations WHERE generation"
			  " NOT IN (SELECT generation FROM bloomgate_generations"
			  " ORDER BY generation DESC LIMIT $1)",
			  1, params, why, whylen);
	if (!ret)
		ret = fdb_cmd(db, "prune: commit", "COMMIT", 0, NULL, why, whylen);
	if (ret)
		fdb_rollback(db);
	return ret;
}

/* ---- Fetch ----------------------------------------------------------------- */

/* The errno of a failure of the local file: its own, but ENOENT (the
 * directory of path is not there), which from fetch says that the
 * generation is not. */
static int file_err(int e)
{
	return e == ENOENT ? -EIO : -e;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Stops the query whose rows are coming (the rest would be read for
 * nothing) and reads what is left of them, so that the connection can
 * take the next command. */
static void abandon(struct bg_fleetdb *db)
{
	PGcancel *c = PQgetCancel(db->conn);
	char err[256];
	PGresult *res;

	if (c) {
		PQcancel(c, err, sizeof(err));
		PQfreeCancel(c);
	}
	while ((res = PQgetResult(db->conn)))
		PQclear(res);
}

/*
 * Streams the chunks of gen's part into fd (-1: none) and md (NULL: none:
 * their SHA-256), in seq order, each checked to be the next: the rows come
 * one at a time (single-row mode), binary, so that one chunk is in memory
 * whatever the artifact's size. -EIO when they are not want bytes in
 * order.
 */
int fdb_get_chunks(struct bg_fleetdb *db, const char *gen, const char *part,
		   uint64_t want, int fd, EVP_MD_CTX *md, const char *tmp,
		   char *why, size_t whylen)
{
	const char *params[2] = { gen, part };
	uint64_t done = 0;
	uint32_t seq = 0, s;
	PGresult *res;
	int ret = 0, len;

	if (!PQsendQueryParams(db->conn,
			       "SELECT seq, data FROM bloomgate_chunks"
			       " WHERE generation = $1 AND part = $2"
			       " ORDER BY seq",
			       2, NULL, params, NULL, NULL, 1) ||
	    !PQsetSingleRowMode(db->conn)) {
		ret = fdb_res_fail(db, NULL, "fetch: chunks", why, whylen);
		abandon(db);
		return ret;
	}
	while ((res = PQgetResult(db->conn))) {
		switch (PQresultStatus(res)) {
		case PGRES_SINGLE_TUPLE:
			len = PQgetlength(res, 0, 1);
			memcpy(&s, PQgetvalue(res, 0, 0), sizeof(s));
			s = ntohl(s);
			if (PQgetlength(res, 0, 0) != 4 || s != seq ||
			    !len || done + (uint64_t)len > want) {
				fdb_say(why, whylen,
				    "fetch: generation %s %s: chunk %" PRIu32 " (%d bytes) where chunk %" PRIu32 " of %" PRIu64 " bytes in all was due",
				    gen, part, s, len, seq, want);
				ret = -EIO;
			} else {
				if (md && !EVP_DigestUpdate(md, PQgetvalue(res, 0, 1),
							    (size_t)len))
					ret = -ENOMEM;
				if (!ret && fd >= 0)
					ret = write_all(fd, PQgetvalue(res, 0, 1),
							(size_t)len);
				if (ret) {
					fdb_say(why, whylen, "%s: %s", tmp,
					    strerror(-ret));
					ret = file_err(-ret);
				}
			}
			done += (uint64_t)len;
			seq++;
			break;
		case PGRES_TUPLES_OK:
			break; /* the end: no row, the query's status */
		default:
			ret = fdb_res_fail(db, res, "fetch: chunks", why, whylen);
			break;
		}
		PQclear(res);
		if (ret) {
			abandon(db);
			return ret;
		}
	}
	if (PQstatus(db->conn) != CONNECTION_OK)
		return fdb_res_fail(db, NULL, "fetch: chunks", why, whylen);
	if (done != want) {
		fdb_say(why, whylen,
		    "fetch: generation %s %s: %" PRIu64 " bytes in the chunks, %" PRIu64 " in its row",
		    gen, part, done, want);
		return -EIO;
	}
	return 0;
}

/* fsync of the directory holding path: the rename in it survives a power
 * cut. */
static int sync_dir_of(const char *path, char *why, size_t whylen)
{
	char dir[PATH_MAX], *slash;
	int ret;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		slash[slash == dir] = '\0'; /* "/x": "/" */
	ret = bg_fsync_dir(dir);
	if (ret)
		fdb_say(why, whylen, "fetch: %s: %s", dir, strerror(-ret));
	return ret ? file_err(-ret) : 0;
}

int bg_fleetdb_fetch(struct bg_fleetdb *db, uint64_t gen, int delta,
		     const char *path, char sha[65], char *why, size_t whylen)
{
	char g[24], tmp[PATH_MAX];
	const char *params[1];
	uint64_t want = 0;
	EVP_MD_CTX *md = NULL;
	uint8_t d[BG_SHA_LEN];
	PGresult *res;
	int ret, fd = -1;

	ret = fdb_usable(db, why, whylen);
	if (ret)
		return ret;
	if (!path) {
		fdb_say(why, whylen, "fetch: no path");
		return -EINVAL;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
		fdb_say(why, whylen, "fetch: %s: path too long", path);
		return -ENAMETOOLONG;
	}
	params[0] = fdb_u64s(g, gen);
	ret = fdb_cmd(db, "fetch: begin",
		  "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL,
		  why, whylen);
	if (ret)
		return ret;
	res = fdb_run(db, "fetch: generation",
		  "SELECT kind, full_bytes, delta_bytes"
		  " FROM bloomgate_generations WHERE generation = $1",
		  1, params, &ret, why, whylen);
	if (!res)
		goto out;
	if (!PQntuples(res)) {
		fdb_say(why, whylen,
		    "fetch: generation %" PRIu64 " is not in the fleet database",
		    gen);
		ret = -ENOENT;
	} else if (delta && strcmp(PQgetvalue(res, 0, 0), "delta")) {
		fdb_say(why, whylen,
		    "fetch: generation %" PRIu64 " is a full one: it has no delta",
		    gen);
		ret = -ENOENT;
	} else {
		want = fdb_col_u64(res, 0, delta ? 2 : 1);
	}
	PQclear(res);
	if (ret)
		goto out;

	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = file_err(errno);
		fdb_say(why, whylen, "fetch: %s: %s", tmp, strerror(errno));
		goto out;
	}
	/* an artifact is no secret; mkstemp's 0600 would hide it from a
	 * reader that is not root */
	fchmod(fd, 0644);
	if (sha && (!(md = EVP_MD_CTX_new()) ||
		    !EVP_DigestInit_ex(md, EVP_sha256(), NULL))) {
		fdb_say(why, whylen, "out of memory");
		ret = -ENOMEM;
	}
	if (!ret)
		ret = fdb_get_chunks(db, g, delta ? "delta" : "full", want, fd, md, tmp,
				 why, whylen);
	if (!ret && md && !EVP_DigestFinal_ex(md, d, NULL))
		ret = -ENOMEM;
	EVP_MD_CTX_free(md);
	if (!ret && sha)
		bg_sha_hex(d, sha);
	if (!ret)
		ret = fdb_cmd(db, "fetch: end", "COMMIT", 0, NULL, why, whylen);
	if (!ret && fsync(fd) < 0) {
		ret = file_err(errno);
		fdb_say(why, whylen, "fetch: %s: %s", tmp, strerror(errno));
	}
	if (close(fd) < 0 && !ret) {
		ret = file_err(errno);
		fdb_say(why, whylen, "fetch: %s: %s", tmp, strerror(errno));
	}
	if (!ret && rename(tmp, path) < 0) {
		ret = file_err(errno);
		fdb_say(why, whylen, "fetch: %s: %s", path, strerror(errno));
	}
	if (ret) {
		unlink(tmp);
		goto out;
	}
	return sync_dir_of(path, why, whylen);
out:
	fdb_rollback(db);
	return ret;
}

