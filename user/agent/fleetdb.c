// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fleet store (user/agent/fleetdb.h) over libpq.
 *
 * Artifacts are hundreds of MB at 100M keys, so their bytes never pass
 * through text: chunks go to the server as binary parameters and come back
 * as binary results (no hex or escape form, which would double them and
 * cost a pass each way), and neither side holds more than a chunk or two:
 * publishing reads BG_FLEETDB_CHUNK bytes of the file and inserts them as
 * one row, fetching reads the rows in single-row mode and writes each to
 * a temporary file as it comes.
 *
 * Everything small (numbers, names, checksums) is sent and read as text:
 * the server converts, and the code stays free of byte orders, except for
 * the chunks' seq read beside their data.
 *
 * Transactions: publishing is one transaction (a generation is there
 * whole or not at all, and its NOTIFY goes out at the commit, after its
 * rows are visible); fetching and the status read one snapshot
 * (REPEATABLE READ), so that a prune meanwhile does not leave a fetch
 * with half the chunks of a generation whose row it has read.

 * Its parts: this file (messages without a secret, errors, the connection,
 * the schema and its migrations), fleetdb_gen.c (the generations) and
 * fleetdb_gw.c (notifications, the gateways' reports and status).
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

/*
 * The tables of schema version 1; version 2 (to_v2()) changed what
 * sha256 and base_sha256 mean and added bloomgate_meta's last_generation,
 * no column. Notes:
 *
 * - generations: base_generation and base_sha256 are NULL for a full
 *   generation; no foreign key to the base, which prune may delete while
 *   the delta stays (a gateway at another generation fetches the full
 *   artifact instead).
 * - chunks and lists go with their generation (ON DELETE CASCADE): prune
 *   deletes the rows of generations only.
 * - chunks' data is stored EXTERNAL: out of line, uncompressed. A filter
 *   image is close to random bits; pglz would try every chunk and give up,
 *   which costs time and saves nothing.
 * - the gateways' counters are bigint: a uint64 above INT64_MAX (never in
 *   practice) is stored as INT64_MAX.
 */
static const char SCHEMA_SQL[] =
	"CREATE TABLE IF NOT EXISTS bloomgate_meta ("
	" key text PRIMARY KEY,"
	" value text NOT NULL);"
	"CREATE TABLE IF NOT EXISTS bloomgate_generations ("
	" generation bigint PRIMARY KEY CHECK (generation > 0),"
	" kind text NOT NULL CHECK (kind IN ('full', 'delta')),"
	" base_generation bigint"
	"  CHECK (base_generation > 0 AND base_generation < generation),"
	" sha256 text NOT NULL,"
	" base_sha256 text,"
	" full_bytes bigint NOT NULL CHECK (full_bytes > 0),"
	" delta_bytes bigint NOT NULL DEFAULT 0 CHECK (delta_bytes >= 0),"
	" keys bigint NOT NULL DEFAULT 0,"
	" entries bigint NOT NULL DEFAULT 0,"
	" sources jsonb,"
	" created_at timestamptz NOT NULL DEFAULT now(),"
	" publisher text NOT NULL DEFAULT '',"
	" CHECK ((kind = 'full') = (base_generation IS NULL)));"
	"CREATE TABLE IF NOT EXISTS bloomgate_chunks ("
	" generation bigint NOT NULL"
	"  REFERENCES bloomgate_generations ON DELETE CASCADE,"
	" part text NOT NULL CHECK (part IN ('full', 'delta')),"
	" seq integer NOT NULL CHECK (seq >= 0),"
	" data bytea NOT NULL,"
	" PRIMARY KEY (generation, part, seq));"
	"ALTER TABLE bloomgate_chunks ALTER COLUMN data SET STORAGE EXTERNAL;"
	"CREATE TABLE IF NOT EXISTS bloomgate_lists ("
	" generation bigint NOT NULL"
	"  REFERENCES bloomgate_generations ON DELETE CASCADE,"
	" name text NOT NULL,"
	" origin text NOT NULL DEFAULT '',"
	" role text NOT NULL CHECK (role IN ('block', 'allow')),"
	" format text NOT NULL DEFAULT '',"
	" sha256 text NOT NULL DEFAULT '',"
	" entries bigint NOT NULL DEFAULT 0,"
	" PRIMARY KEY (generation, name));"
	"CREATE TABLE IF NOT EXISTS bloomgate_gateways ("
	" gateway text PRIMARY KEY,"
	" generation bigint NOT NULL DEFAULT 0,"
	" applied_at timestamptz,"
	" filter_id bigint NOT NULL DEFAULT 0,"
	" keys bigint NOT NULL DEFAULT 0,"
	" entries bigint NOT NULL DEFAULT 0,"
	" packets bigint NOT NULL DEFAULT 0,"
	" dropped bigint NOT NULL DEFAULT 0,"
	" bloom_fp bigint NOT NULL DEFAULT 0,"
	" last_error text NOT NULL DEFAULT '',"
	" state text NOT NULL DEFAULT '',"
	" reported_at timestamptz NOT NULL DEFAULT now());";


/* ---- Why, in one line, without a secret -------------------------------- */

/* libpq's messages end with a newline and may carry a second line (a hint
 * after a tab): one line, each run of white space one space. */
static void one_line(char *s)
{
	char *w = s, *start = s;
	int space = 0;

	for (; *s; s++) {
		if (isspace((unsigned char)*s)) {
			space = 1;
			continue;
		}
		if (space && w != start)
			*w++ = ' ';
		space = 0;
		*w++ = *s;
	}
	*w = '\0';
}


void fdb_say(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bg_vwhyf(why, whylen, fmt, ap);
	va_end(ap);
	if (why && whylen)
		one_line(why);
}

/* Every occurrence of the n bytes at secret in *msg (malloc'd) replaced
 * by SECRET (bg_redact()), in a new string; -ENOMEM (then *msg is freed,
 * NULL). */
static int scrub(char **msg, const char *secret, size_t n)
{
	size_t hits = 0, len = strlen(*msg), k;
	struct bg_span *v;
	char *out, *p, *hit;

	if (!n)
		return 0;
	for (p = *msg; (hit = memmem(p, len - (size_t)(p - *msg), secret, n));
	     p = hit + n)
		hits++;
	if (!hits)
		return 0;
	v = calloc(hits, sizeof(*v));
	out = malloc(len + hits * sizeof(SECRET) + 1);
	if (!v || !out) {
		free(v);
		free(out);
		free(*msg);
		*msg = NULL;
		return -ENOMEM;
	}
	for (p = *msg, k = 0; (hit = memmem(p, len - (size_t)(p - *msg), secret, n));
	     p = hit + n, k++)
		v[k] = (struct bg_span){ (size_t)(hit - *msg), n };
	bg_redact(*msg, v, hits, out, len + hits * sizeof(SECRET) + 1);
	free(v);
	free(*msg);
	*msg = out;
	return 0;
}

#define MAX_SECRETS 8

static int add_span(struct bg_span *v, int n, size_t off, size_t len)
{
	if (n < MAX_SECRETS && len) {
		v[n].off = off;
		v[n].len = len;
		n++;
	}
	return n;
}

/* The length of a URI's scheme and "://" (0: not a URI), the two libpq
 * takes. */
static size_t uri_scheme(const char *s, size_t n)
{
	if (n >= 13 && !strncmp(s, "postgresql://", 13))
		return 13;
	if (n >= 11 && !strncmp(s, "postgres://", 11))
		return 11;
	return 0;
}

/* 1 when the n bytes at s, percent-decoded, are "password" (libpq
 * decodes a URI's query keys too: "pass%77ord" is the password). */
static int is_password_key(const char *s, size_t n)
{
	static const char want[] = "password";
	size_t i, k = 0;
	int c;

	for (i = 0; i < n; i++, k++) {
		c = (unsigned char)s[i];
		if (c == '%' && i + 2 < n && bg_hexval((unsigned char)s[i + 1]) >= 0 &&
		    bg_hexval((unsigned char)s[i + 2]) >= 0) {
			c = bg_hexval((unsigned char)s[i + 1]) * 16 +
			    bg_hexval((unsigned char)s[i + 2]);
			i += 2;
		}
		if (k >= sizeof(want) - 1 || c != want[k])
			return 0;
	}
	return k == sizeof(want) - 1;
}

/*
 * The passwords of a postgresql:// URI (the n bytes at s, at offset base
 * of the whole string), the way libpq reads one: the userinfo ends at the
 * first '@' before any '/', its password follows its first ':'; then a
 * "password" key of the query string (after the first '?').
 */
static int uri_secrets(const char *s, size_t n, size_t base, struct bg_span *v,
		       int nv)
{
	size_t h = uri_scheme(s, n), i, colon = 0, k, e;

	for (i = h; i < n && s[i] != '@' && s[i] != '/'; i++)
		if (s[i] == ':' && !colon)
			colon = i;
	if (i < n && s[i] == '@') {
		if (colon)
			nv = add_span(v, nv, base + colon + 1, i - colon - 1);
		h = i + 1;
	}
	for (i = h; i < n && s[i] != '?'; i++)
		;
	while (i < n) {
		k = ++i; /* a key, after '?' or '&' */
		for (e = k; e < n && s[e] != '=' && s[e] != '&'; e++)
			;
		for (i = e; i < n && s[i] != '&'; i++)
			;
		if (e < n && s[e] == '=' && is_password_key(s + k, e - k))
			nv = add_span(v, nv, base + e + 1, i - e - 1);
	}
	return nv;
}

/*
 * The passwords of a connection string, a URI or key=value pairs (the
 * grammar of libpq's conninfo_parse(): a value quoted with '...' or bare
 * up to white space, a backslash escaping the next byte in both). A
 * dbname value that is a URI is searched too: libpq expands one level
 * only, takes an inner one for a database name, and would quote it in
 * "database ... does not exist". Stops where the string stops making
 * sense: libpq refuses it there.
 */
static int secrets(const char *s, struct bg_span *v)
{
	size_t n = strlen(s), i = 0, k, klen, vs, ve, in, out;
	int nv = 0, quoted;

	if (uri_scheme(s, n))
		return uri_secrets(s, n, 0, v, 0);
	while (i < n) {
		while (i < n && isspace((unsigned char)s[i]))
			i++;
		if (i >= n)
			break;
		k = i;
		while (i < n && s[i] != '=' && !isspace((unsigned char)s[i]))
			i++;
		klen = i - k;
		while (i < n && isspace((unsigned char)s[i]))
			i++;
		if (i >= n || s[i] != '=')
			break; /* a database name alone, or garbage */
		i++;
		while (i < n && isspace((unsigned char)s[i]))
			i++;
		quoted = i < n && s[i] == '\'';
		vs = i;
		i += quoted;
		in = i;
		while (i < n) {
			if (s[i] == '\\' && i + 1 < n) {
				i += 2;
				continue;
			}
			if (quoted ? s[i] == '\'' : isspace((unsigned char)s[i]))
				break;
			i++;
		}
		out = i;
		if (quoted && i < n)
			i++; /* the closing quote */
		ve = i;
		if (klen == 8 && !strncmp(s + k, "password", 8))
			nv = add_span(v, nv, vs, ve - vs);
		else if (klen == 6 && !strncmp(s + k, "dbname", 6) &&
			 uri_scheme(s + in, out - in))
			nv = uri_secrets(s + in, out - in, in, v, nv);
	}
	return nv;
}

const char *bg_fleetdb_redact(const char *url, char *buf, size_t len)
{
	struct bg_span v[MAX_SECRETS];

	return bg_redact(url ? url : "", v, url ? (size_t)secrets(url, v) : 0, buf, len);
}

/* Scrubs from *msg (malloc'd) every password of url: as written in it
 * and as libpq decoded it (percent-encoding, quotes). libpq's own messages
 * do not quote a password, but some quote the string or a token of it
 * ("invalid percent-encoded token"), so this is checked, not assumed. */
static int scrub_url(char **msg, const char *url)
{
	struct bg_span v[MAX_SECRETS];
	PQconninfoOption *opts, *o;
	int n, j, ret = 0;

	n = secrets(url, v);
	for (j = 0; !ret && j < n; j++)
		ret = scrub(msg, url + v[j].off, v[j].len);
	opts = PQconninfoParse(url, NULL);
	for (o = opts; !ret && o && o->keyword; o++)
		if (!strcmp(o->keyword, "password") && o->val)
			ret = scrub(msg, o->val, strlen(o->val));
	PQconninfoFree(opts);
	return ret;
}

/*
 * fdb_say() for a message that may quote url: formatted whole, its passwords
 * scrubbed, then made one line and cut to whylen (in that order: a
 * password cut in half by whylen, or with its white space squeezed, would
 * no longer be found).
 */
static void say_url(char *why, size_t whylen, const char *url,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void say_url(char *why, size_t whylen, const char *url,
		    const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int n;

	if (!why || !whylen)
		return;
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0 || scrub_url(&msg, url)) {
		/* say nothing rather than what might hold the password */
		free(msg);
		snprintf(why, whylen, "(message withheld: out of memory)");
		return;
	}
	one_line(msg);
	snprintf(why, whylen, "%s", msg);
	free(msg);
}

/* ---- Errors -------------------------------------------------------------- */

/*
 * The errno of a failed command: -ENOTCONN when the connection is gone
 * (libpq saw it close, or the server said so: class 08, or 57P0x, the
 * server shutting down, which closes the session); -EAGAIN for a second
 * row of a generation (a publisher that skipped the lock was first);
 * -EINVAL for a value the schema refuses (class 22, data: JSON that is
 * none; class 23, constraints: a list named twice); else -EIO.
 */
static int res_errno(const struct bg_fleetdb *db, const PGresult *res)
{
	const char *st = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *con = res ? PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME) :
				NULL;

	if (PQstatus(db->conn) != CONNECTION_OK || db->gone)
		return -ENOTCONN;
	if (!st)
		return -EIO;
	if (!strncmp(st, "08", 2) || !strncmp(st, "57P0", 4))
		return -ENOTCONN;
	if (!strcmp(st, "23505") && con &&
	    !strcmp(con, "bloomgate_generations_pkey"))
		return -EAGAIN;
	if (!strncmp(st, "22", 2) || !strncmp(st, "23", 2))
		return -EINVAL;
	return -EIO;
}

/* Says why what failed: the server's primary message, or libpq's. */
int fdb_res_fail(const struct bg_fleetdb *db, const PGresult *res,
		 const char *what, char *why, size_t whylen)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) :
				NULL;
	int err = res_errno(db, res);

	if (!msg || !*msg)
		msg = PQerrorMessage(db->conn);
	if (err == -ENOTCONN)
		fdb_say(why, whylen, "%s: connection to the fleet database lost: %s",
		    what, msg);
	else
		fdb_say(why, whylen, "%s: %s", what, msg);
	return err;
}

/* 0 when db can be used; -ENOTCONN when its connection is gone (a dead
 * handle stays dead: see bg_fleetdb_connect() in the header). */
int fdb_usable(const struct bg_fleetdb *db, char *why, size_t whylen)
{
	if (!db || !db->conn) {
		fdb_say(why, whylen, "no fleet database handle");
		return -EINVAL;
	}
	if (PQstatus(db->conn) != CONNECTION_OK || db->gone) {
		fdb_say(why, whylen,
		    "connection to the fleet database lost: connect again");
		return -ENOTCONN;
	}
	return 0;
}

/*
 * Runs sql with n text parameters; the result when it is a success (its
 * rows or none), else NULL with *err and why set.
 */
PGresult *fdb_run(struct bg_fleetdb *db, const char *what, const char *sql,
		  int n, const char *const *params, int *err, char *why,
		  size_t whylen)
{
	PGresult *res;
	ExecStatusType st;

	if (n)
		res = PQexecParams(db->conn, sql, n, NULL, params, NULL, NULL, 0);
	else
		res = PQexec(db->conn, sql);
	st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return res;
	*err = fdb_res_fail(db, res, what, why, whylen);
	PQclear(res);
	return NULL;
}

/* fdb_run() for a command whose result is not needed: 0 or -errno. */
int fdb_cmd(struct bg_fleetdb *db, const char *what, const char *sql, int n,
	    const char *const *params, char *why, size_t whylen)
{
	int err = 0;
	PGresult *res = fdb_run(db, what, sql, n, params, &err, why, whylen);

	PQclear(res);
	return res ? 0 : err;
}

/* Ends a transaction that failed (its why already said), when there is
 * one and the connection can still say so. */
void fdb_rollback(struct bg_fleetdb *db)
{
	if (PQstatus(db->conn) == CONNECTION_OK &&
	    PQtransactionStatus(db->conn) != PQTRANS_IDLE)
		PQclear(PQexec(db->conn, "ROLLBACK"));
}

/* uint64 as a bigint parameter (above INT64_MAX: INT64_MAX). */
const char *fdb_u64s(char b[24], uint64_t v)
{
	if (v > INT64_MAX)
		v = INT64_MAX;
	snprintf(b, 24, "%" PRIu64, v);
	return b;
}

uint64_t fdb_col_u64(const PGresult *res, int row, int col)
{
	const char *s = PQgetvalue(res, row, col);

	/* bigint, never negative in these tables: a negative one is 0 */
	return *s == '-' ? 0 : strtoull(s, NULL, 10);
}

double fdb_col_double(const PGresult *res, int row, int col)
{
	return strtod(PQgetvalue(res, row, col), NULL);
}

void fdb_col_str(const PGresult *res, int row, int col, char *out,
		 size_t size)
{
	snprintf(out, size, "%s", PQgetvalue(res, row, col));
}

/* ---- Connection ---------------------------------------------------------- */

/*
 * Messages outside a command's result: notices ("relation ... already
 * exists, skipping"), no errors, which libpq would print on stderr; and
 * the FATAL of a server shutting down (57P01) as it comes to an idle
 * session, a LISTENing gateway's: libpq takes it for a notice, and the
 * close that follows may not have been read yet. Remembered, so that
 * bg_fleetdb_notified() says -ENOTCONN at once.
 */
static void on_notice(void *arg, const PGresult *res)
{
	struct bg_fleetdb *db = arg;
	const char *sev = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);

	if (sev && (!strcmp(sev, "FATAL") || !strcmp(sev, "PANIC")))
		db->gone = 1;
}

int bg_fleetdb_connect(const char *url, double timeout, struct bg_fleetdb **db,
		       char *why, size_t whylen)
{
	/*
	 * In index order, a later keyword overriding an earlier one (the
	 * URL's own are expanded where dbname is): application_name and the
	 * keepalives are defaults the URL may override; the timeout is the
	 * caller's, which overrides the URL's.
	 */
	const char *kw[] = { "application_name", "keepalives_idle",
			     "keepalives_interval", "keepalives_count",
			     "dbname", "connect_timeout", NULL };
	const char *val[7];
	char tmo[24], redacted[1024], *perr = NULL;
	PQconninfoOption *opts;
	struct bg_fleetdb *d;
	PGconn *conn;
	int secs;

	if (db)
		*db = NULL;
	if (!url || !db) {
		fdb_say(why, whylen, "no fleet database URL");
		return -EINVAL;
	}
	bg_fleetdb_redact(url, redacted, sizeof(redacted));
	/* a malformed string is the caller's mistake, not a server away;
	 * libpq takes a string without '=' that is no URI for a database
	 * name, which PQconninfoParse() would refuse */
	if (uri_scheme(url, strlen(url)) || strchr(url, '=')) {
		opts = PQconninfoParse(url, &perr);
		if (!opts) {
			say_url(why, whylen, url, "fleet database %s: %s",
				redacted, perr ? perr : "out of memory");
			if (!perr)
				return -ENOMEM;
			PQfreemem(perr);
			return -EINVAL;
		}
		PQconninfoFree(opts);
	}

	/* libpq's unit is whole seconds, and it takes 1 for 2 */
	if (timeout <= 0)
		timeout = 10;
	secs = timeout > 86400 ? 86400 : (int)timeout;
	if (secs < timeout)
		secs++;
	snprintf(tmo, sizeof(tmo), "%d", secs);
	val[0] = "bloomgate";
	val[1] = KEEPALIVE_IDLE;
	val[2] = KEEPALIVE_INTERVAL;
	val[3] = KEEPALIVE_COUNT;
	val[4] = url;
	val[5] = tmo;
	val[6] = NULL;
	conn = PQconnectdbParams(kw, val, 1);
	if (!conn) {
		fdb_say(why, whylen, "fleet database %s: out of memory", redacted);
		return -ENOMEM;
	}
	if (PQstatus(conn) != CONNECTION_OK) {
		say_url(why, whylen, url, "fleet database %s: %s", redacted,
			PQerrorMessage(conn));
		PQfinish(conn);
		return -ECONNREFUSED;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		PQfinish(conn);
		fdb_say(why, whylen, "out of memory");
		return -ENOMEM;
	}
	d->conn = conn;
	PQsetNoticeReceiver(conn, on_notice, d);
	*db = d;
	return 0;
}

void bg_fleetdb_close(struct bg_fleetdb *db)
{
	if (!db)
		return;
	PQfinish(db->conn);
	free(db);
}

/* ---- Schema -------------------------------------------------------------- */

/* The schema version bloomgate_meta records (0: no tables yet). */
static int read_version(struct bg_fleetdb *db, long *v, char *why, size_t whylen)
{
	PGresult *res;
	char *end;
	int ret = 0;

	*v = 0;
	res = fdb_run(db, "migrate: read the schema version",
		  "SELECT to_regclass('bloomgate_meta') IS NOT NULL", 0, NULL,
		  &ret, why, whylen);
	if (!res)
		return ret;
	if (!strcmp(PQgetvalue(res, 0, 0), "t")) {
		PQclear(res);
		res = fdb_run(db, "migrate: read the schema version",
			  "SELECT value FROM bloomgate_meta"
			  " WHERE key = 'schema_version'",
			  0, NULL, &ret, why, whylen);
		if (!res)
			return ret;
		if (PQntuples(res)) {
			*v = strtol(PQgetvalue(res, 0, 0), &end, 10);
			if (*end || *v < 1) {
				fdb_say(why, whylen,
				    "migrate: schema version '%.32s' in bloomgate_meta is no version",
				    PQgetvalue(res, 0, 0));
				ret = -EIO;
			}
		}
	}
	PQclear(res);
	return ret;
}

/* Generation gen's sha256 made the SHA-256 of its file, streamed from its
 * chunks, in a savepoint: chunks that do not add up to the file leave the
 * row as it was (and the transaction usable). */
static int rehash(struct bg_fleetdb *db, const char *gen, uint64_t want,
		  char *why, size_t whylen)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	const char *params[2] = { gen, NULL };
	uint8_t d[BG_SHA_LEN];
	char hex[65];
	int ret;

	if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(md);
		fdb_say(why, whylen, "out of memory");
		return -ENOMEM;
	}
	ret = fdb_cmd(db, "migrate: savepoint", "SAVEPOINT bg_rehash", 0, NULL, why,
		  whylen);
	if (!ret)
		ret = fdb_get_chunks(db, gen, "full", want, -1, md, "", why, whylen);
	if (ret == -EIO) {
		EVP_MD_CTX_free(md);
		return fdb_cmd(db, "migrate: savepoint", "ROLLBACK TO SAVEPOINT bg_rehash",
			   0, NULL, why, whylen);
	}
	if (!ret && !EVP_DigestFinal_ex(md, d, NULL))
		ret = -ENOMEM;
	EVP_MD_CTX_free(md);
	if (!ret) {
		bg_sha_hex(d, hex);
		params[1] = hex;
		ret = fdb_cmd(db, "migrate: generation's checksum",
			  "UPDATE bloomgate_generations SET sha256 = $2"
			  " WHERE generation = $1", 2, params, why, whylen);
	}
	if (!ret)
		ret = fdb_cmd(db, "migrate: savepoint", "RELEASE SAVEPOINT bg_rehash", 0,
			  NULL, why, whylen);
	return ret;
}

/*
 * Version 1 to 2. Version 1 named a generation (sha256, base_sha256) by
 * its artifact's header digest; version 2 by the SHA-256 of the artifact
 * file, what sha256sum prints: each generation's is computed from its
 * chunks (a chunk in memory at a time: this reads every artifact the
 * store keeps once, under the migration's lock), a delta's base's taken
 * from the base's row. A generation whose chunks do not add up to its
 * file keeps its old value, which no file's SHA-256 matches: no gateway
 * takes it, as none would have. And the highest generation published is
 * recorded (bloomgate_meta's last_generation), from which the next
 * publish counts: a number is never used twice, whatever rows go.
 */
static int to_v2(struct bg_fleetdb *db, char *why, size_t whylen)
{
	PGresult *res;
	int ret = 0, i;

	res = fdb_run(db, "migrate: generations",
		  "SELECT generation, full_bytes FROM bloomgate_generations"
		  " ORDER BY generation", 0, NULL, &ret, why, whylen);
	if (!res)
		return ret;
	for (i = 0; !ret && i < PQntuples(res); i++)
		ret = rehash(db, PQgetvalue(res, i, 0), fdb_col_u64(res, i, 1), why, whylen);
	PQclear(res);
	if (!ret)
		ret = fdb_cmd(db, "migrate: deltas' bases",
			  "UPDATE bloomgate_generations d SET base_sha256 = b.sha256"
			  " FROM bloomgate_generations b WHERE d.kind = 'delta'"
			  " AND b.generation = d.base_generation", 0, NULL, why, whylen);
	if (!ret)
		ret = fdb_cmd(db, "migrate: the last generation",
			  "INSERT INTO bloomgate_meta (key, value) SELECT"
			  " 'last_generation', coalesce(max(generation), 0)::text"
			  " FROM bloomgate_generations ON CONFLICT (key) DO NOTHING",
			  0, NULL, why, whylen);
	return ret;
}

int bg_fleetdb_migrate(struct bg_fleetdb *db, char *why, size_t whylen)
{
	const char *params[2];
	char ver[24];
	long v = 0;
	int ret;

	ret = fdb_usable(db, why, whylen);
	if (ret)
		return ret;
	/*
	 * A transaction-scoped advisory lock: two processes migrating at
	 * once would otherwise race in CREATE TABLE IF NOT EXISTS (which is
	 * not safe against itself: both see no table, one fails on the
	 * catalog's unique index). Released by COMMIT or ROLLBACK, also when
	 * an error ends the session.
	 */
	ret = fdb_cmd(db, "migrate: begin", "BEGIN", 0, NULL, why, whylen);
	if (!ret)
		ret = fdb_cmd(db, "migrate: lock",
			  "SELECT pg_advisory_xact_lock(" LOCK_MIGRATE ")", 0,
			  NULL, why, whylen);
	if (!ret)
		ret = read_version(db, &v, why, whylen);
	if (ret)
		goto out;
	if (v > BG_FLEETDB_SCHEMA) {
		fdb_say(why, whylen,
		    "the fleet database has schema version %ld, newer than this bloomgate's %d: upgrade bloomgate",
		    v, BG_FLEETDB_SCHEMA);
		ret = -EPROTO;
		goto out;
	}
	if (v == BG_FLEETDB_SCHEMA) {
		ret = fdb_cmd(db, "migrate: commit", "COMMIT", 0, NULL, why, whylen);
		goto out;
	}
	/* none yet (v 0): the tables; then each version's upgrade of the
	 * one before */
	if (v < 1)
		ret = fdb_cmd(db, "migrate: create the tables", SCHEMA_SQL, 0, NULL, why,
			  whylen);
	if (!ret && v < 2)
		ret = to_v2(db, why, whylen);
	if (ret)
		goto out;
	snprintf(ver, sizeof(ver), "%d", BG_FLEETDB_SCHEMA);
	params[0] = "schema_version";
	params[1] = ver;
	ret = fdb_cmd(db, "migrate: record the schema version",
		  "INSERT INTO bloomgate_meta (key, value) VALUES ($1, $2)"
		  " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
		  2, params, why, whylen);
	if (!ret)
		ret = fdb_cmd(db, "migrate: commit", "COMMIT", 0, NULL, why, whylen);
out:
	if (ret)
		fdb_rollback(db);
	return ret;
}

