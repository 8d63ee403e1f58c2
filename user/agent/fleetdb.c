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
 *
 * This file is long (past the project's 900 lines) on purpose: it is
 * everything the store says in SQL (the schema and its migrations, each
 * query, the transactions) and the one place that quotes a connection
 * string (so the one that scrubs its passwords from messages), which
 * read best together.
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
#include "core/sha.h"
#include "core/units.h"
#include "core/url.h"

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

static void say(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *why, size_t whylen, const char *fmt, ...)
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
 * say() for a message that may quote url: formatted whole, its passwords
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
static int res_fail(const struct bg_fleetdb *db, const PGresult *res,
		    const char *what, char *why, size_t whylen)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) :
				NULL;
	int err = res_errno(db, res);

	if (!msg || !*msg)
		msg = PQerrorMessage(db->conn);
	if (err == -ENOTCONN)
		say(why, whylen, "%s: connection to the fleet database lost: %s",
		    what, msg);
	else
		say(why, whylen, "%s: %s", what, msg);
	return err;
}

/* 0 when db can be used; -ENOTCONN when its connection is gone (a dead
 * handle stays dead: see bg_fleetdb_connect() in the header). */
static int usable(const struct bg_fleetdb *db, char *why, size_t whylen)
{
	if (!db || !db->conn) {
		say(why, whylen, "no fleet database handle");
		return -EINVAL;
	}
	if (PQstatus(db->conn) != CONNECTION_OK || db->gone) {
		say(why, whylen,
		    "connection to the fleet database lost: connect again");
		return -ENOTCONN;
	}
	return 0;
}

/*
 * Runs sql with n text parameters; the result when it is a success (its
 * rows or none), else NULL with *err and why set.
 */
static PGresult *run(struct bg_fleetdb *db, const char *what, const char *sql,
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
	*err = res_fail(db, res, what, why, whylen);
	PQclear(res);
	return NULL;
}

/* run() for a command whose result is not needed: 0 or -errno. */
static int cmd(struct bg_fleetdb *db, const char *what, const char *sql, int n,
	       const char *const *params, char *why, size_t whylen)
{
	int err = 0;
	PGresult *res = run(db, what, sql, n, params, &err, why, whylen);

	PQclear(res);
	return res ? 0 : err;
}

/* Ends a transaction that failed (its why already said), when there is
 * one and the connection can still say so. */
static void rollback(struct bg_fleetdb *db)
{
	if (PQstatus(db->conn) == CONNECTION_OK &&
	    PQtransactionStatus(db->conn) != PQTRANS_IDLE)
		PQclear(PQexec(db->conn, "ROLLBACK"));
}

/* uint64 as a bigint parameter (above INT64_MAX: INT64_MAX). */
static const char *u64s(char b[24], uint64_t v)
{
	if (v > INT64_MAX)
		v = INT64_MAX;
	snprintf(b, 24, "%" PRIu64, v);
	return b;
}

static uint64_t col_u64(const PGresult *res, int row, int col)
{
	const char *s = PQgetvalue(res, row, col);

	/* bigint, never negative in these tables: a negative one is 0 */
	return *s == '-' ? 0 : strtoull(s, NULL, 10);
}

static double col_double(const PGresult *res, int row, int col)
{
	return strtod(PQgetvalue(res, row, col), NULL);
}

static void col_str(const PGresult *res, int row, int col, char *out,
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
		say(why, whylen, "no fleet database URL");
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
		say(why, whylen, "fleet database %s: out of memory", redacted);
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
		say(why, whylen, "out of memory");
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

static int get_chunks(struct bg_fleetdb *db, const char *gen, const char *part,
		      uint64_t want, int fd, EVP_MD_CTX *md, const char *tmp,
		      char *why, size_t whylen);

/* The schema version bloomgate_meta records (0: no tables yet). */
static int read_version(struct bg_fleetdb *db, long *v, char *why, size_t whylen)
{
	PGresult *res;
	char *end;
	int ret = 0;

	*v = 0;
	res = run(db, "migrate: read the schema version",
		  "SELECT to_regclass('bloomgate_meta') IS NOT NULL", 0, NULL,
		  &ret, why, whylen);
	if (!res)
		return ret;
	if (!strcmp(PQgetvalue(res, 0, 0), "t")) {
		PQclear(res);
		res = run(db, "migrate: read the schema version",
			  "SELECT value FROM bloomgate_meta"
			  " WHERE key = 'schema_version'",
			  0, NULL, &ret, why, whylen);
		if (!res)
			return ret;
		if (PQntuples(res)) {
			*v = strtol(PQgetvalue(res, 0, 0), &end, 10);
			if (*end || *v < 1) {
				say(why, whylen,
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
		say(why, whylen, "out of memory");
		return -ENOMEM;
	}
	ret = cmd(db, "migrate: savepoint", "SAVEPOINT bg_rehash", 0, NULL, why,
		  whylen);
	if (!ret)
		ret = get_chunks(db, gen, "full", want, -1, md, "", why, whylen);
	if (ret == -EIO) {
		EVP_MD_CTX_free(md);
		return cmd(db, "migrate: savepoint", "ROLLBACK TO SAVEPOINT bg_rehash",
			   0, NULL, why, whylen);
	}
	if (!ret && !EVP_DigestFinal_ex(md, d, NULL))
		ret = -ENOMEM;
	EVP_MD_CTX_free(md);
	if (!ret) {
		bg_sha_hex(d, hex);
		params[1] = hex;
		ret = cmd(db, "migrate: generation's checksum",
			  "UPDATE bloomgate_generations SET sha256 = $2"
			  " WHERE generation = $1", 2, params, why, whylen);
	}
	if (!ret)
		ret = cmd(db, "migrate: savepoint", "RELEASE SAVEPOINT bg_rehash", 0,
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

	res = run(db, "migrate: generations",
		  "SELECT generation, full_bytes FROM bloomgate_generations"
		  " ORDER BY generation", 0, NULL, &ret, why, whylen);
	if (!res)
		return ret;
	for (i = 0; !ret && i < PQntuples(res); i++)
		ret = rehash(db, PQgetvalue(res, i, 0), col_u64(res, i, 1), why, whylen);
	PQclear(res);
	if (!ret)
		ret = cmd(db, "migrate: deltas' bases",
			  "UPDATE bloomgate_generations d SET base_sha256 = b.sha256"
			  " FROM bloomgate_generations b WHERE d.kind = 'delta'"
			  " AND b.generation = d.base_generation", 0, NULL, why, whylen);
	if (!ret)
		ret = cmd(db, "migrate: the last generation",
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

	ret = usable(db, why, whylen);
	if (ret)
		return ret;
	/*
	 * A transaction-scoped advisory lock: two processes migrating at
	 * once would otherwise race in CREATE TABLE IF NOT EXISTS (which is
	 * not safe against itself: both see no table, one fails on the
	 * catalog's unique index). Released by COMMIT or ROLLBACK, also when
	 * an error ends the session.
	 */
	ret = cmd(db, "migrate: begin", "BEGIN", 0, NULL, why, whylen);
	if (!ret)
		ret = cmd(db, "migrate: lock",
			  "SELECT pg_advisory_xact_lock(" LOCK_MIGRATE ")", 0,
			  NULL, why, whylen);
	if (!ret)
		ret = read_version(db, &v, why, whylen);
	if (ret)
		goto out;
	if (v > BG_FLEETDB_SCHEMA) {
		say(why, whylen,
		    "the fleet database has schema version %ld, newer than this bloomgate's %d: upgrade bloomgate",
		    v, BG_FLEETDB_SCHEMA);
		ret = -EPROTO;
		goto out;
	}
	if (v == BG_FLEETDB_SCHEMA) {
		ret = cmd(db, "migrate: commit", "COMMIT", 0, NULL, why, whylen);
		goto out;
	}
	/* none yet (v 0): the tables; then each version's upgrade of the
	 * one before */
	if (v < 1)
		ret = cmd(db, "migrate: create the tables", SCHEMA_SQL, 0, NULL, why,
			  whylen);
	if (!ret && v < 2)
		ret = to_v2(db, why, whylen);
	if (ret)
		goto out;
	snprintf(ver, sizeof(ver), "%d", BG_FLEETDB_SCHEMA);
	params[0] = "schema_version";
	params[1] = ver;
	ret = cmd(db, "migrate: record the schema version",
		  "INSERT INTO bloomgate_meta (key, value) VALUES ($1, $2)"
		  " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
		  2, params, why, whylen);
	if (!ret)
		ret = cmd(db, "migrate: commit", "COMMIT", 0, NULL, why, whylen);
out:
	if (ret)
		rollback(db);
	return ret;
}

/* ---- Generations ----------------------------------------------------------- */

static void gen_row(const PGresult *res, int row, struct bg_fleet_gen *g)
{
	memset(g, 0, sizeof(*g));
	g->generation = col_u64(res, row, 0);
	g->kind = !strcmp(PQgetvalue(res, row, 1), "delta") ? BG_FLEET_DELTA :
							       BG_FLEET_FULL;
	g->base_generation = col_u64(res, row, 2);
	col_str(res, row, 3, g->sha256, sizeof(g->sha256));
	col_str(res, row, 4, g->base_sha256, sizeof(g->base_sha256));
	g->full_bytes = col_u64(res, row, 5);
	g->delta_bytes = col_u64(res, row, 6);
	g->keys = col_u64(res, row, 7);
	g->entries = col_u64(res, row, 8);
	g->created = col_double(res, row, 9);
	col_str(res, row, 10, g->publisher, sizeof(g->publisher));
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
	ret = usable(db, why, whylen);
	if (ret)
		return ret;
	params[0] = u64s(b, gen);
	res = run(db, gen ? "generation" : "newest generation",
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
	ret = usable(db, why, whylen);
	if (ret)
		return ret;
	res = run(db, "the next generation", LAST_SQL, 0, NULL, &ret, why, whylen);
	if (!res)
		return ret;
	*next = col_u64(res, 0, 0) + 1;
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
		say(why, whylen, "generation %" PRIu64 " is not in the fleet database",
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
			say(why, whylen, "%s: %s", path, strerror((int)-n));
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
			err = res_fail(db, res, what, why, whylen);
			PQclear(res);
			return err;
		}
		PQclear(res);
	}
	if (done != size) {
		say(why, whylen,
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
		say(why, whylen, "%s: %s", path, strerror(errno));
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return err;
	}
	posix_fadvise(*fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	*size = (uint64_t)st.st_size;
	if (!S_ISREG(st.st_mode) || !*size || (want && want != *size)) {
		if (!S_ISREG(st.st_mode))
			say(why, whylen, "%s: not a regular file", path);
		else if (!*size)
			say(why, whylen, "%s: empty", path);
		else
			say(why, whylen,
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
		say(why, whylen, "publish: no generation or no artifact");
		return -EINVAL;
	}
	if (!g->generation || g->generation > INT64_MAX) {
		say(why, whylen, "publish: generation %" PRIu64 " out of range",
		    g->generation);
		return -EINVAL;
	}
	if (g->kind != BG_FLEET_FULL && g->kind != BG_FLEET_DELTA) {
		say(why, whylen, "publish: kind %d is neither full nor delta",
		    g->kind);
		return -EINVAL;
	}
	if (!bg_sha_hex_ok(g->sha256)) {
		say(why, whylen, "publish: checksum '%.64s' is no SHA-256 in hex",
		    g->sha256);
		return -EINVAL;
	}
	if (g->kind == BG_FLEET_DELTA &&
	    (!delta_path || !g->base_generation ||
	     g->base_generation >= g->generation || !bg_sha_hex_ok(g->base_sha256))) {
		say(why, whylen,
		    "publish: a delta needs its file, a base generation below %" PRIu64 " and the base's checksum",
		    g->generation);
		return -EINVAL;
	}
	if (nlists && !lists) {
		say(why, whylen, "publish: no lists");
		return -EINVAL;
	}
	for (i = 0; i < nlists; i++) {
		if (!lists[i].name[0] || (strcmp(lists[i].role, "block") &&
					  strcmp(lists[i].role, "allow"))) {
			say(why, whylen,
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
		params[6] = u64s(entries, lists[i].entries);
		ret = cmd(db, "publish: list",
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

	res = run(db, "publish: newest generation", LAST_SQL, 0, NULL, &ret, why,
		  whylen);
	if (!res)
		return ret;
	last = col_u64(res, 0, 0);
	PQclear(res);
	if (last == gen - 1)
		return 0;
	say(why, whylen,
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

	ret = usable(db, why, whylen);
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
		say(why, whylen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}

	u64s(gen, g->generation);
	ret = cmd(db, "publish: begin", "BEGIN", 0, NULL, why, whylen);
	/* publishers one at a time: the check of the newest below and the
	 * insert are then one step */
	if (!ret)
		ret = cmd(db, "publish: lock",
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
	params[2] = delta ? u64s(base, g->base_generation) : NULL;
	params[3] = g->sha256;
	params[4] = delta ? g->base_sha256 : NULL;
	params[5] = u64s(fb, full_size);
	params[6] = u64s(dbytes, delta_size);
	params[7] = u64s(keys, g->keys);
	params[8] = u64s(entries, g->entries);
	params[9] = sources_json;
	params[10] = host;
	ret = cmd(db, "publish: generation",
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
		ret = cmd(db, "publish: the last generation",
			  "INSERT INTO bloomgate_meta (key, value)"
			  " VALUES ('last_generation', $1) ON CONFLICT (key)"
			  " DO UPDATE SET value = EXCLUDED.value", 1, params, why,
			  whylen);
	/* queued by the server, sent to the listeners when COMMIT succeeds
	 * (and never when it does not) */
	params[0] = BG_FLEETDB_CHANNEL;
	params[1] = gen;
	if (!ret)
		ret = cmd(db, "publish: notify", "SELECT pg_notify($1, $2)", 2,
			  params, why, whylen);
	if (!ret)
		ret = cmd(db, "publish: commit", "COMMIT", 0, NULL, why, whylen);
out:
	if (ret)
		rollback(db);
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

	ret = usable(db, why, whylen);
	if (ret)
		return ret;
	params[0] = u64s(k, keep ? keep : BG_FLEETDB_KEEP);
	/* under the publishers' lock: the newest are counted with no
	 * publication half done; chunks and lists go by ON DELETE CASCADE */
	ret = cmd(db, "prune: begin", "BEGIN", 0, NULL, why, whylen);
	if (!ret)
		ret = cmd(db, "prune: lock",
			  "SELECT pg_advisory_xact_lock(" LOCK_PUBLISH ")", 0,
			  NULL, why, whylen);
	if (!ret)
		ret = cmd(db, "prune",
			  "DELETE FROM bloomgate_generations WHERE generation"
			  " NOT IN (SELECT generation FROM bloomgate_generations"
			  " ORDER BY generation DESC LIMIT $1)",
			  1, params, why, whylen);
	if (!ret)
		ret = cmd(db, "prune: commit", "COMMIT", 0, NULL, why, whylen);
	if (ret)
		rollback(db);
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
static int get_chunks(struct bg_fleetdb *db, const char *gen, const char *part,
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
		ret = res_fail(db, NULL, "fetch: chunks", why, whylen);
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
				say(why, whylen,
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
					say(why, whylen, "%s: %s", tmp,
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
			ret = res_fail(db, res, "fetch: chunks", why, whylen);
			break;
		}
		PQclear(res);
		if (ret) {
			abandon(db);
			return ret;
		}
	}
	if (PQstatus(db->conn) != CONNECTION_OK)
		return res_fail(db, NULL, "fetch: chunks", why, whylen);
	if (done != want) {
		say(why, whylen,
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
		say(why, whylen, "fetch: %s: %s", dir, strerror(-ret));
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

	ret = usable(db, why, whylen);
	if (ret)
		return ret;
	if (!path) {
		say(why, whylen, "fetch: no path");
		return -EINVAL;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
		say(why, whylen, "fetch: %s: path too long", path);
		return -ENAMETOOLONG;
	}
	params[0] = u64s(g, gen);
	ret = cmd(db, "fetch: begin",
		  "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL,
		  why, whylen);
	if (ret)
		return ret;
	res = run(db, "fetch: generation",
		  "SELECT kind, full_bytes, delta_bytes"
		  " FROM bloomgate_generations WHERE generation = $1",
		  1, params, &ret, why, whylen);
	if (!res)
		goto out;
	if (!PQntuples(res)) {
		say(why, whylen,
		    "fetch: generation %" PRIu64 " is not in the fleet database",
		    gen);
		ret = -ENOENT;
	} else if (delta && strcmp(PQgetvalue(res, 0, 0), "delta")) {
		say(why, whylen,
		    "fetch: generation %" PRIu64 " is a full one: it has no delta",
		    gen);
		ret = -ENOENT;
	} else {
		want = col_u64(res, 0, delta ? 2 : 1);
	}
	PQclear(res);
	if (ret)
		goto out;

	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = file_err(errno);
		say(why, whylen, "fetch: %s: %s", tmp, strerror(errno));
		goto out;
	}
	/* an artifact is no secret; mkstemp's 0600 would hide it from a
	 * reader that is not root */
	fchmod(fd, 0644);
	if (sha && (!(md = EVP_MD_CTX_new()) ||
		    !EVP_DigestInit_ex(md, EVP_sha256(), NULL))) {
		say(why, whylen, "out of memory");
		ret = -ENOMEM;
	}
	if (!ret)
		ret = get_chunks(db, g, delta ? "delta" : "full", want, fd, md, tmp,
				 why, whylen);
	if (!ret && md && !EVP_DigestFinal_ex(md, d, NULL))
		ret = -ENOMEM;
	EVP_MD_CTX_free(md);
	if (!ret && sha)
		bg_sha_hex(d, sha);
	if (!ret)
		ret = cmd(db, "fetch: end", "COMMIT", 0, NULL, why, whylen);
	if (!ret && fsync(fd) < 0) {
		ret = file_err(errno);
		say(why, whylen, "fetch: %s: %s", tmp, strerror(errno));
	}
	if (close(fd) < 0 && !ret) {
		ret = file_err(errno);
		say(why, whylen, "fetch: %s: %s", tmp, strerror(errno));
	}
	if (!ret && rename(tmp, path) < 0) {
		ret = file_err(errno);
		say(why, whylen, "fetch: %s: %s", path, strerror(errno));
	}
	if (ret) {
		unlink(tmp);
		goto out;
	}
	return sync_dir_of(path, why, whylen);
out:
	rollback(db);
	return ret;
}

/* ---- Notifications ----------------------------------------------------------- */

int bg_fleetdb_listen(struct bg_fleetdb *db, char *why, size_t whylen)
{
	int ret = usable(db, why, whylen);

	if (ret)
		return ret;
	return cmd(db, "listen", "LISTEN " BG_FLEETDB_CHANNEL, 0, NULL, why,
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

	ret = usable(db, why, whylen);
	if (ret)
		return ret;
	if (!r || !r->gateway[0]) {
		say(why, whylen, "report: no gateway name");
		return -EINVAL;
	}
	snprintf(applied, sizeof(applied), "%.6f",
		 r->applied_at > 0 ? r->applied_at : 0);
	snprintf(fid, sizeof(fid), "%" PRIu32, r->filter_id);
	params[0] = r->gateway;
	params[1] = u64s(gen, r->generation);
	params[2] = applied;
	params[3] = fid;
	params[4] = u64s(keys, r->keys);
	params[5] = u64s(entries, r->entries);
	params[6] = u64s(packets, r->packets);
	params[7] = u64s(dropped, r->dropped);
	params[8] = u64s(fp, r->bloom_fp);
	params[9] = r->last_error;
	params[10] = r->state;
	return cmd(db, "report",
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
	ret = usable(db, why, whylen);
	if (ret)
		return ret;
	/* the newest and the lags from one snapshot: a generation published
	 * meanwhile is in both or in neither */
	ret = cmd(db, "status: begin",
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
	res = run(db, "status",
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
		say(why, whylen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < rows; i++) {
		struct bg_fleet_report *r = &out[i];

		col_str(res, i, 0, r->gateway, sizeof(r->gateway));
		r->generation = col_u64(res, i, 1);
		r->applied_at = col_double(res, i, 2);
		r->filter_id = (uint32_t)col_u64(res, i, 3);
		r->keys = col_u64(res, i, 4);
		r->entries = col_u64(res, i, 5);
		r->packets = col_u64(res, i, 6);
		r->dropped = col_u64(res, i, 7);
		r->bloom_fp = col_u64(res, i, 8);
		col_str(res, i, 9, r->last_error, sizeof(r->last_error));
		col_str(res, i, 10, r->state, sizeof(r->state));
		r->reported_at = col_double(res, i, 11);
		r->lag_generations = strtoll(PQgetvalue(res, i, 12), NULL, 10);
		r->lag_seconds = col_double(res, i, 13);
	}
	ret = cmd(db, "status: end", "COMMIT", 0, NULL, why, whylen);
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
		rollback(db);
	return ret;
}
