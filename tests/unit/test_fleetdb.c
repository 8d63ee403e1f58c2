// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the fleet store (user/agent/fleetdb.c) against a real
 * PostgreSQL 15: a private cluster started by tests/pg.sh in a temporary
 * directory for the group (no TCP, trust; never the machine's own
 * cluster), stopped and removed at the end. Run from the repository root
 * (tests/run.sh does), as root or as a user that can run initdb.
 *
 * What the API would hide (chunk rows, the schema version, what a failed
 * publication left behind) is checked with SQL on a connection of the
 * test's own. Each case starts from empty tables.
 *
 * BG_FLEETDB_BENCH_MIB=200 adds a measure: publish and fetch of a file
 * that large, throughputs and the peak memory growth printed (skipped
 * otherwise). The peak is worth reading with ASAN_OPTIONS=
 * quarantine_size_mb=0: ASan holds freed memory back, and every chunk's
 * result is a fresh megabyte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <openssl/evp.h>

#include "agent/fleetdb.h"
#include "core/clock.h"

#define MIB (1024 * 1024)

static char pgdir[] = "/tmp/bg-test-fleetdb-pg.XXXXXX";
static char files[] = "/tmp/bg-test-fleetdb.XXXXXX";
static char url[512];
/* the test's own connection, for what the API does not show */
static PGconn *raw;
/* stops the cluster and removes the directories (start_watchdog()) */
static pid_t watchdog = -1;
static char why[512];

/* ---- helpers ---- */

/* tests/pg.sh VERB pgdir; its one line of output in out (may be NULL).
 * Its exit status. */
static int pg(const char *verb, char *out, size_t len)
{
	char cmd[PATH_MAX + 64], line[512] = "";
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "tests/pg.sh %s '%s'", verb, pgdir);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	while (fgetc(p) != EOF)
		;
	st = pclose(p);
	line[strcspn(line, "\n")] = '\0';
	if (out)
		snprintf(out, len, "%s", line);
	return st;
}

static void raw_connect(void)
{
	if (raw && PQstatus(raw) == CONNECTION_OK)
		return;
	PQfinish(raw);
	raw = PQconnectdb(url);
	if (PQstatus(raw) != CONNECTION_OK)
		fail_msg("connect %s: %s", url, PQerrorMessage(raw));
	PQclear(PQexec(raw, "SET client_min_messages = warning"));
}

/* Runs SQL (one or more commands) that must succeed. */
static void sql(const char *q)
{
	PGresult *res;

	raw_connect();
	res = PQexec(raw, q);
	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", q, PQerrorMessage(raw));
	PQclear(res);
}

/* The first column of the first row of a query, as a number. */
static long long sql_num(const char *q)
{
	PGresult *res;
	long long v;

	raw_connect();
	res = PQexec(raw, q);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		fail_msg("%s: %s", q, PQerrorMessage(raw));
	v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return v;
}

static struct bg_fleetdb *connect_db(void)
{
	struct bg_fleetdb *db = NULL;
	int ret = bg_fleetdb_connect(url, 5, &db, why, sizeof(why));

	if (ret)
		fail_msg("connect: %d %s", ret, why);
	return db;
}

static const char *in_files(const char *name)
{
	static char p[8][PATH_MAX];
	static int next;
	char *s = p[next++ % 8];

	snprintf(s, PATH_MAX, "%s/%s", files, name);
	return s;
}

/* size bytes of a xorshift stream seeded by seed: a stand-in artifact,
 * written a megabyte at a time (the bench's is 200 MiB). */
static void make_file(const char *path, uint64_t size, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1, *buf, done = 0;
	size_t i, n;
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	buf = malloc(MIB);
	assert_non_null(buf);
	while (done < size) {
		for (i = 0; i < MIB / 8; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = x;
		}
		n = size - done < MIB ? (size_t)(size - done) : MIB;
		assert_int_equal(fwrite(buf, 1, n, f), n);
		done += n;
	}
	free(buf);
	assert_int_equal(fclose(f), 0);
}

/* The SHA-256 of a file, in hex, read a megabyte at a time. */
static void sha_file(const char *path, char hex[65])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[32], *buf = malloc(MIB);
	unsigned int i, mdlen;
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	assert_non_null(ctx);
	assert_int_equal(EVP_DigestInit_ex(ctx, EVP_sha256(), NULL), 1);
	while ((n = fread(buf, 1, MIB, f)))
		EVP_DigestUpdate(ctx, buf, n);
	assert_int_equal(EVP_DigestFinal_ex(ctx, md, &mdlen), 1);
	for (i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	fclose(f);
	free(buf);
	EVP_MD_CTX_free(ctx);
}

static void assert_same_file(const char *a, const char *b)
{
	char ha[65], hb[65];
	struct stat sa, sb;

	assert_int_equal(stat(a, &sa), 0);
	assert_int_equal(stat(b, &sb), 0);
	assert_int_equal(sa.st_size, sb.st_size);
	sha_file(a, ha);
	sha_file(b, hb);
	assert_string_equal(ha, hb);
}

/* Lines of the server's log (tests/pg.sh: DIR/postgres.log) that hold
 * text. */
static int log_count(const char *text)
{
	char path[PATH_MAX], line[4096];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/postgres.log", pgdir);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, text);
	fclose(f);
	return n;
}

/* Files in the files directory whose name starts with prefix. */
static int count_files(const char *prefix)
{
	DIR *d = opendir(files);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

/* A generation's row as a publisher would fill it; its checksum is the
 * full file's SHA-256. */
static struct bg_fleet_gen gen_of(uint64_t n, const char *full)
{
	struct bg_fleet_gen g;

	memset(&g, 0, sizeof(g));
	g.generation = n;
	g.kind = BG_FLEET_FULL;
	sha_file(full, g.sha256);
	g.keys = 1000 * n;
	g.entries = 1000 * n + 7;
	snprintf(g.publisher, sizeof(g.publisher), "publisher-%" PRIu64, n);
	return g;
}

/* Publishes generation n, a full one of size bytes; returns what
 * bg_fleetdb_publish() did. */
static int publish_full(struct bg_fleetdb *db, uint64_t n, uint64_t size)
{
	char name[64];
	struct bg_fleet_gen g;

	snprintf(name, sizeof(name), "gen%" PRIu64 ".art", n);
	make_file(in_files(name), size, n);
	g = gen_of(n, in_files(name));
	return bg_fleetdb_publish(db, &g, "{\"lists\": []}", NULL, 0,
				  in_files(name), NULL, why, sizeof(why));
}

/* ---- group ---- */

/*
 * A child that stops the cluster and removes both directories when told
 * (SIGTERM from the group teardown) or when this process dies, however
 * it dies (PR_SET_PDEATHSIG: an ASan report aborts without a teardown,
 * and a server left running on a shared machine would stay for good).
 */
static int start_watchdog(void)
{
	pid_t parent = getpid();
	sigset_t term, old;
	int sig;

	/* blocked before the fork: a SIGTERM before the child waits for it
	 * is not lost (nor fatal to the child) */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);
	watchdog = fork();
	if (watchdog) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return watchdog < 0 ? -1 : 0;
	}
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == parent)
		sigwait(&term, &sig);
	/* the cluster as made, or the empty directory when tests/pg.sh
	 * failed before it made anything */
	execl("/bin/sh", "sh", "-c",
	      "tests/pg.sh stop \"$0\" >/dev/null 2>&1 || rmdir \"$0\";"
	      " rm -rf \"$1\"",
	      pgdir, files, (char *)NULL);
	_exit(127);
}

static int group_setup(void **state)
{
	struct bg_fleetdb *db;

	(void)state;
	if (!mkdtemp(pgdir) || !mkdtemp(files) || start_watchdog())
		return -1;
	if (pg("start", url, sizeof(url)) || strncmp(url, "postgresql://", 13)) {
		fprintf(stderr, "tests/pg.sh start %s failed\n", pgdir);
		return -1;
	}
	db = connect_db();
	if (bg_fleetdb_migrate(db, why, sizeof(why))) {
		fprintf(stderr, "migrate: %s\n", why);
		return -1;
	}
	bg_fleetdb_close(db);
	return 0;
}

static int group_teardown(void **state)
{
	int st = -1;

	(void)state;
	PQfinish(raw);
	raw = NULL;
	kill(watchdog, SIGTERM);
	if (waitpid(watchdog, &st, 0) != watchdog || st) {
		fprintf(stderr, "stopping the cluster in %s failed\n", pgdir);
		return -1;
	}
	return 0;
}

/* Every case from empty tables, and no file left by the last. */
static int empty(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	sql("TRUNCATE bloomgate_generations, bloomgate_gateways CASCADE;"
	    " DELETE FROM bloomgate_meta WHERE key = 'last_generation'");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/*", files);
	return system(cmd) ? -1 : 0;
}

/* ---- schema ---- */

struct racer {
	pthread_barrier_t *go;
	int ret;
	char why[256];
};

static void *migrate_racer(void *arg)
{
	struct racer *r = arg;
	struct bg_fleetdb *db = NULL;

	r->ret = bg_fleetdb_connect(url, 5, &db, r->why, sizeof(r->why));
	pthread_barrier_wait(r->go);
	if (!r->ret)
		r->ret = bg_fleetdb_migrate(db, r->why, sizeof(r->why));
	bg_fleetdb_close(db);
	return NULL;
}

static void test_migrate(void **state)
{
	struct bg_fleetdb *a = connect_db(), *b = connect_db();
	struct racer r[4];
	pthread_barrier_t go;
	pthread_t t[4];
	int i;

	(void)state;
	/* again on a migrated database, twice, from two connections */
	assert_int_equal(bg_fleetdb_migrate(a, why, sizeof(why)), 0);
	assert_int_equal(bg_fleetdb_migrate(a, why, sizeof(why)), 0);
	assert_int_equal(bg_fleetdb_migrate(b, why, sizeof(why)), 0);
	/* the schema version (the last generation: none, empty() removed it) */
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_meta"), 1);
	assert_int_equal(sql_num("SELECT value::int FROM bloomgate_meta"
				 " WHERE key = 'schema_version'"),
			 BG_FLEETDB_SCHEMA);

	/* from nothing, four processes at once: the lock makes them one
	 * after the other (without it, CREATE TABLE IF NOT EXISTS races) */
	sql("DROP TABLE bloomgate_chunks, bloomgate_lists, bloomgate_gateways,"
	    " bloomgate_generations, bloomgate_meta");
	assert_int_equal(pthread_barrier_init(&go, NULL, 4), 0);
	for (i = 0; i < 4; i++) {
		r[i].go = &go;
		assert_int_equal(pthread_create(&t[i], NULL, migrate_racer,
						&r[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		if (r[i].ret)
			fail_msg("racer %d: %d %s", i, r[i].ret, r[i].why);
	}
	pthread_barrier_destroy(&go);
	assert_int_equal(sql_num("SELECT count(*) FROM pg_tables WHERE"
				 " tablename LIKE 'bloomgate\\_%'"),
			 5);
	/* the schema version and the last generation, once */
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_meta"), 2);
	/* the tables made by the racers work */
	assert_int_equal(publish_full(a, 1, 1000), 0);
	bg_fleetdb_close(a);
	bg_fleetdb_close(b);
}

static void test_newer_schema(void **state)
{
	struct bg_fleetdb *db = connect_db();

	(void)state;
	sql("UPDATE bloomgate_meta SET value = '3' WHERE key = 'schema_version'");
	assert_int_equal(bg_fleetdb_migrate(db, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "schema version 3"));
	assert_null(strchr(why, '\n'));
	/* nothing was changed, and the handle still works */
	assert_int_equal(sql_num("SELECT value::int FROM bloomgate_meta"
				 " WHERE key = 'schema_version'"), 3);
	sql("UPDATE bloomgate_meta SET value = '2' WHERE key = 'schema_version'");
	assert_int_equal(bg_fleetdb_migrate(db, why, sizeof(why)), 0);
	bg_fleetdb_close(db);
}

/* ---- publish and fetch ---- */

static void test_publish_fetch_full(void **state)
{
	/* 3.5 MiB and a bit: four chunks, the last a short one */
	const uint64_t size = 7 * MIB / 2 + 123;
	struct bg_fleet_list lists[2];
	struct bg_fleet_gen g, got;
	struct bg_fleetdb *db = connect_db();
	const char *art = in_files("full.art"), *out = in_files("fetched.art");
	double t0;

	(void)state;
	assert_int_equal(bg_fleetdb_latest(db, &got, why, sizeof(why)), 0);
	assert_int_equal(got.generation, 0);

	make_file(art, size, 1);
	g = gen_of(1, art);
	memset(lists, 0, sizeof(lists));
	snprintf(lists[0].name, sizeof(lists[0].name), "spamhaus");
	snprintf(lists[0].origin, sizeof(lists[0].origin), "https://x.example/drop.txt");
	snprintf(lists[0].role, sizeof(lists[0].role), "block");
	snprintf(lists[0].format, sizeof(lists[0].format), "ip");
	snprintf(lists[0].sha256, sizeof(lists[0].sha256), "%s", g.sha256);
	lists[0].entries = 1234;
	lists[1] = lists[0];
	snprintf(lists[1].name, sizeof(lists[1].name), "ours");
	snprintf(lists[1].role, sizeof(lists[1].role), "allow");
	lists[1].entries = 5;
	t0 = time(NULL);
	assert_int_equal(bg_fleetdb_publish(db, &g, "{\"lists\": [\"spamhaus\", \"ours\"]}",
					    lists, 2, art, NULL, why, sizeof(why)),
			 0);

	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_chunks"
				 " WHERE generation = 1 AND part = 'full'"),
			 4);
	assert_int_equal(sql_num("SELECT max(length(data)) FROM bloomgate_chunks"),
			 BG_FLEETDB_CHUNK);
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_lists"
				 " WHERE generation = 1 AND role = 'allow'"),
			 1);
	assert_int_equal(sql_num("SELECT entries FROM bloomgate_lists"
				 " WHERE name = 'spamhaus'"),
			 1234);
	assert_int_equal(sql_num("SELECT jsonb_array_length(sources->'lists')"
				 " FROM bloomgate_generations"),
			 2);

	assert_int_equal(bg_fleetdb_get(db, 1, &got, why, sizeof(why)), 0);
	assert_int_equal(got.generation, 1);
	assert_int_equal(got.kind, BG_FLEET_FULL);
	assert_int_equal(got.base_generation, 0);
	assert_string_equal(got.sha256, g.sha256);
	assert_string_equal(got.base_sha256, "");
	assert_int_equal(got.full_bytes, size);
	assert_int_equal(got.delta_bytes, 0);
	assert_int_equal(got.keys, 1000);
	assert_int_equal(got.entries, 1007);
	assert_string_equal(got.publisher, "publisher-1");
	assert_true(got.created >= t0 - 5 && got.created <= time(NULL) + 5);
	memset(&got, 0, sizeof(got));
	assert_int_equal(bg_fleetdb_latest(db, &got, why, sizeof(why)), 0);
	assert_int_equal(got.generation, 1);
	assert_string_equal(got.sha256, g.sha256);

	{
		char got_sha[65];

		/* the file's SHA-256 comes with it, hashed as it streams */
		assert_int_equal(bg_fleetdb_fetch(db, 1, 0, out, got_sha, why,
						  sizeof(why)), 0);
		assert_string_equal(got_sha, g.sha256);
	}
	assert_same_file(art, out);
	/* over a file already there (the last generation's): replaced */
	make_file(out, 10, 99);
	assert_int_equal(bg_fleetdb_fetch(db, 1, 0, out, NULL, why, sizeof(why)), 0);
	assert_same_file(art, out);
	assert_int_equal(count_files("fetched.art"), 1); /* no temporary left */
	bg_fleetdb_close(db);
}

static void test_publish_fetch_delta(void **state)
{
	struct bg_fleetdb *db = connect_db();
	const char *full = in_files("gen2.art"), *delta = in_files("gen2.delta");
	struct bg_fleet_gen g, got;

	(void)state;
	assert_int_equal(publish_full(db, 1, 3 * MIB / 2), 0);
	make_file(full, 2 * MIB + 5, 2);
	make_file(delta, 300 * 1024, 3);
	g = gen_of(2, full);
	g.kind = BG_FLEET_DELTA;
	g.base_generation = 1;
	sha_file(in_files("gen1.art"), g.base_sha256);
	g.full_bytes = 2 * MIB + 5; /* given: must match */
	assert_int_equal(bg_fleetdb_publish(db, &g, NULL, NULL, 0, full, delta,
					    why, sizeof(why)),
			 0);

	assert_int_equal(bg_fleetdb_get(db, 2, &got, why, sizeof(why)), 0);
	assert_int_equal(got.kind, BG_FLEET_DELTA);
	assert_int_equal(got.base_generation, 1);
	assert_string_equal(got.base_sha256, g.base_sha256);
	assert_int_equal(got.full_bytes, 2 * MIB + 5);
	assert_int_equal(got.delta_bytes, 300 * 1024);
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_chunks"
				 " WHERE generation = 2 AND part = 'delta'"),
			 1);
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_chunks"
				 " WHERE generation = 2 AND part = 'full'"),
			 3);

	assert_int_equal(bg_fleetdb_fetch(db, 2, 0, in_files("f2"), NULL, why,
					  sizeof(why)),
			 0);
	assert_same_file(full, in_files("f2"));
	assert_int_equal(bg_fleetdb_fetch(db, 2, 1, in_files("d2"), NULL, why,
					  sizeof(why)),
			 0);
	assert_same_file(delta, in_files("d2"));
	/* a full generation has no delta */
	assert_int_equal(bg_fleetdb_fetch(db, 1, 1, in_files("d1"), NULL, why,
					  sizeof(why)),
			 -ENOENT);
	assert_int_equal(count_files("d1"), 0);

	/* a size that is not the file's: refused before anything is sent */
	g.generation = 3;
	g.base_generation = 2;
	g.full_bytes = 2 * MIB;
	assert_int_equal(bg_fleetdb_publish(db, &g, NULL, NULL, 0, full, delta,
					    why, sizeof(why)),
			 -EINVAL);
	/* a delta without its base, a checksum that is none, a bad role */
	g.full_bytes = 0;
	g.base_generation = 0;
	assert_int_equal(bg_fleetdb_publish(db, &g, NULL, NULL, 0, full, delta,
					    why, sizeof(why)),
			 -EINVAL);
	g.base_generation = 2;
	g.sha256[0] = 'X';
	assert_int_equal(bg_fleetdb_publish(db, &g, NULL, NULL, 0, full, delta,
					    why, sizeof(why)),
			 -EINVAL);
	/* SOURCES that is no JSON, a list named twice: refused by the
	 * schema, and nothing stays */
	{
		struct bg_fleet_list l[2];

		g = gen_of(3, full);
		assert_int_equal(bg_fleetdb_publish(db, &g, "{not json", NULL,
						    0, full, NULL, why,
						    sizeof(why)),
				 -EINVAL);
		memset(l, 0, sizeof(l));
		snprintf(l[0].name, sizeof(l[0].name), "twice");
		snprintf(l[0].role, sizeof(l[0].role), "block");
		l[1] = l[0];
		assert_int_equal(bg_fleetdb_publish(db, &g, NULL, l, 2, full,
						    NULL, why, sizeof(why)),
				 -EINVAL);
		snprintf(l[1].role, sizeof(l[1].role), "deny");
		snprintf(l[1].name, sizeof(l[1].name), "other");
		assert_int_equal(bg_fleetdb_publish(db, &g, NULL, l, 2, full,
						    NULL, why, sizeof(why)),
				 -EINVAL);
	}
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_generations"), 2);
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_chunks"), 6);
	bg_fleetdb_close(db);
}

static void test_stale_generation(void **state)
{
	struct bg_fleetdb *a = connect_db(), *b = connect_db();

	(void)state;
	assert_int_equal(publish_full(a, 1, 1500 * 1024), 0);
	/* another publisher was first with 1, or skips one */
	assert_int_equal(publish_full(b, 1, 1500 * 1024), -EAGAIN);
	assert_non_null(strstr(why, "the last published is 1"));
	assert_int_equal(publish_full(b, 3, 1500 * 1024), -EAGAIN);
	/* nothing left behind: the transaction was rolled back, and the
	 * handle goes on */
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_generations"), 1);
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_chunks"), 2);
	assert_int_equal(publish_full(b, 2, 1500 * 1024), 0);
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_chunks"), 4);
	/* a file gone: nothing sent */
	assert_int_equal(unlink(in_files("gen2.art")), 0);
	{
		struct bg_fleet_gen g = gen_of(1, in_files("gen1.art"));

		g.generation = 3;
		assert_int_equal(bg_fleetdb_publish(a, &g, NULL, NULL, 0,
						    in_files("gen2.art"), NULL,
						    why, sizeof(why)),
				 -ENOENT);
	}
	bg_fleetdb_close(a);
	bg_fleetdb_close(b);
}

static void test_missing_generation(void **state)
{
	struct bg_fleetdb *db = connect_db();
	int cancels = log_count("canceling statement due to user request");
	struct bg_fleet_gen got;

	(void)state;
	assert_int_equal(bg_fleetdb_fetch(db, 42, 0, in_files("x"), NULL, why,
					  sizeof(why)),
			 -ENOENT);
	assert_non_null(strstr(why, "42"));
	assert_int_equal(bg_fleetdb_get(db, 42, &got, why, sizeof(why)), -ENOENT);
	assert_int_equal(count_files("x"), 0);
	/* and the handle is fine after */
	assert_int_equal(publish_full(db, 1, 100), 0);
	assert_int_equal(bg_fleetdb_fetch(db, 1, 0, in_files("x"), NULL, why,
					  sizeof(why)),
			 0);
	assert_same_file(in_files("gen1.art"), in_files("x"));
	/* chunks gone from under a row: no file, an error */
	sql("DELETE FROM bloomgate_chunks WHERE generation = 1");
	assert_int_equal(bg_fleetdb_fetch(db, 1, 0, in_files("y"), NULL, why,
					  sizeof(why)),
			 -EIO);
	assert_int_equal(count_files("y"), 0);
	/* one gone in the middle: the stream is stopped at the gap, and the
	 * handle takes the next command */
	assert_int_equal(publish_full(db, 2, 5 * MIB), 0);
	sql("DELETE FROM bloomgate_chunks WHERE generation = 2 AND seq = 1");
	assert_int_equal(bg_fleetdb_fetch(db, 2, 0, in_files("y"), NULL, why,
					  sizeof(why)),
			 -EIO);
	assert_non_null(strstr(why, "chunk 2"));
	assert_int_equal(count_files("y"), 0);
	/* ... stopped: cancelled, not read to its end for nothing (3 MiB
	 * more than the socket holds: the server was still sending) */
	assert_true(log_count("canceling statement due to user request") >
		    cancels);
	assert_int_equal(bg_fleetdb_get(db, 2, &got, why, sizeof(why)), 0);
	assert_int_equal(got.full_bytes, 5 * MIB);
	/* a directory that is not there is not a generation that is not */
	assert_int_equal(publish_full(db, 3, 100), 0);
	assert_int_equal(bg_fleetdb_fetch(db, 3, 0, "/nonexistent/dir/x", NULL, why,
					  sizeof(why)),
			 -EIO);
	assert_non_null(strstr(why, "/nonexistent/dir/x"));
	bg_fleetdb_close(db);
}

/* ---- notifications ---- */

/* Waits up to ms for a notification on db: what bg_fleetdb_notified()
 * returned, *gen the highest. */
static int wait_notified(struct bg_fleetdb *db, int ms, uint64_t *gen)
{
	struct pollfd p = { .fd = bg_fleetdb_fd(db), .events = POLLIN };
	double end = bg_mono() + ms / 1000.0;
	int ret;

	for (;;) {
		ret = bg_fleetdb_notified(db, gen);
		if (ret)
			return ret;
		if (bg_mono() >= end)
			return 0;
		poll(&p, 1, (int)((end - bg_mono()) * 1000) + 1);
	}
}

static void test_notify(void **state)
{
	struct bg_fleetdb *gw = connect_db(), *pub = connect_db();
	uint64_t gen = 99;
	double t0;

	(void)state;
	assert_int_equal(bg_fleetdb_listen(gw, why, sizeof(why)), 0);
	assert_true(bg_fleetdb_fd(gw) >= 0);
	/* nothing yet, and no wait for it */
	t0 = bg_mono();
	assert_int_equal(bg_fleetdb_notified(gw, &gen), 0);
	assert_true(bg_mono() - t0 < 0.1);

	assert_int_equal(publish_full(pub, 1, 1200 * 1024), 0);
	assert_int_equal(wait_notified(gw, 5000, &gen), 1);
	assert_int_equal(gen, 1);
	assert_int_equal(bg_fleetdb_notified(gw, &gen), 0);

	/* two more before the gateway looks: the highest */
	assert_int_equal(publish_full(pub, 2, 100), 0);
	assert_int_equal(publish_full(pub, 3, 100), 0);
	{
		uint64_t hi = 0;
		double end = bg_mono() + 5;

		while (hi < 3 && bg_mono() < end)
			if (wait_notified(gw, 1000, &gen) == 1 && gen > hi)
				hi = gen;
		assert_int_equal(hi, 3);
	}
	/* a publication refused, or not committed, announces nothing */
	assert_int_equal(publish_full(pub, 3, 100), -EAGAIN);
	assert_int_equal(wait_notified(gw, 300, &gen), 0);
	/* another program's payload on the channel is no generation */
	sql("NOTIFY bloomgate_generation, 'hello'");
	assert_int_equal(wait_notified(gw, 300, &gen), 0);

	/* a notification that came before a fetch on the listening handle
	 * (in the socket, not read yet) is read by the fetch, and still
	 * returned after it although the socket no longer shows it */
	assert_int_equal(publish_full(pub, 4, 100), 0);
	{
		struct pollfd p = { .fd = bg_fleetdb_fd(gw), .events = POLLIN };

		assert_int_equal(poll(&p, 1, 5000), 1);
		assert_int_equal(bg_fleetdb_fetch(gw, 4, 0, in_files("f4"),
						  NULL, why, sizeof(why)),
				 0);
		assert_int_equal(poll(&p, 1, 0), 0);
	}
	assert_int_equal(bg_fleetdb_notified(gw, &gen), 1);
	assert_int_equal(gen, 4);
	bg_fleetdb_close(gw);
	bg_fleetdb_close(pub);
}

/* ---- gateways ---- */

static struct bg_fleet_report report_of(const char *name, uint64_t gen)
{
	struct bg_fleet_report r;

	memset(&r, 0, sizeof(r));
	snprintf(r.gateway, sizeof(r.gateway), "%s", name);
	r.generation = gen;
	r.applied_at = (double)time(NULL) - 30.5;
	r.filter_id = 77;
	r.keys = 1000000;
	r.entries = 1000100;
	r.packets = 123456789012ull;
	r.dropped = 42;
	r.bloom_fp = 3;
	snprintf(r.state, sizeof(r.state), "ok");
	return r;
}

static void test_status_lag(void **state)
{
	struct bg_fleetdb *db = connect_db();
	struct bg_fleet_report r, *v = NULL;
	struct bg_fleet_gen latest;
	double t;
	size_t n = 9;

	(void)state;
	/* none yet */
	assert_int_equal(bg_fleetdb_status(db, &latest, &v, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 0);
	assert_int_equal(latest.generation, 0);
	free(v);

	assert_int_equal(publish_full(db, 1, 100), 0);
	assert_int_equal(publish_full(db, 2, 100), 0);
	assert_int_equal(publish_full(db, 3, 100), 0);
	/* made an hour apart: which generation's age is the lag shows */
	sql("UPDATE bloomgate_generations SET created_at = now() -"
	    " (3 - generation) * interval '1 hour'");
	r = report_of("gw-b", 1);
	snprintf(r.last_error, sizeof(r.last_error), "verify: checksum mismatch");
	snprintf(r.state, sizeof(r.state), "failing");
	assert_int_equal(bg_fleetdb_report(db, &r, why, sizeof(why)), 0);
	r = report_of("gw-a", 3);
	assert_int_equal(bg_fleetdb_report(db, &r, why, sizeof(why)), 0);

	assert_int_equal(bg_fleetdb_status(db, &latest, &v, &n, why, sizeof(why)), 0);
	assert_int_equal(latest.generation, 3);
	assert_int_equal(n, 2);
	t = (double)time(NULL);
	/* by name */
	assert_string_equal(v[0].gateway, "gw-a");
	assert_int_equal(v[0].generation, 3);
	assert_int_equal(v[0].lag_generations, 0);
	assert_true(v[0].lag_seconds == 0);
	assert_int_equal(v[0].filter_id, 77);
	assert_int_equal(v[0].packets, 123456789012ull);
	assert_int_equal(v[0].dropped, 42);
	assert_int_equal(v[0].bloom_fp, 3);
	assert_int_equal(v[0].keys, 1000000);
	assert_int_equal(v[0].entries, 1000100);
	assert_string_equal(v[0].state, "ok");
	assert_string_equal(v[0].last_error, "");
	assert_true(v[0].applied_at > t - 40 && v[0].applied_at < t - 20);
	assert_true(v[0].reported_at > t - 10 && v[0].reported_at <= t + 1);
	/* two behind, late since generation 2 was made */
	assert_string_equal(v[1].gateway, "gw-b");
	assert_int_equal(v[1].generation, 1);
	assert_int_equal(v[1].lag_generations, 2);
	assert_string_equal(v[1].state, "failing");
	assert_string_equal(v[1].last_error, "verify: checksum mismatch");
	/* since generation 2, the first it does not run, was made */
	assert_true(v[1].lag_seconds > 3600 - 5 && v[1].lag_seconds < 3600 + 5);
	free(v);

	/* b catches up (the row is updated, not added); a never applied */
	r = report_of("gw-b", 3);
	assert_int_equal(bg_fleetdb_report(db, &r, why, sizeof(why)), 0);
	r = report_of("gw-c", 0);
	r.applied_at = 0;
	snprintf(r.state, sizeof(r.state), "pending");
	assert_int_equal(bg_fleetdb_report(db, &r, why, sizeof(why)), 0);
	assert_int_equal(bg_fleetdb_status(db, NULL, &v, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[1].lag_generations, 0);
	assert_true(v[1].lag_seconds == 0);
	assert_int_equal(v[2].lag_generations, 3);
	assert_true(v[2].applied_at == 0);
	assert_true(v[2].lag_seconds > 2 * 3600 - 5 && v[2].lag_seconds < 2 * 3600 + 5);
	free(v);
	bg_fleetdb_close(db);
}

/* A gateway ahead of the store (its generation's rows deleted): a
 * negative lag, no lag in seconds. */
static void test_status_ahead(void **state)
{
	struct bg_fleetdb *db = connect_db();
	struct bg_fleet_report r, *v = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(publish_full(db, 1, 100), 0);
	assert_int_equal(publish_full(db, 2, 100), 0);
	assert_int_equal(publish_full(db, 3, 100), 0);
	r = report_of("gw-a", 3);
	assert_int_equal(bg_fleetdb_report(db, &r, why, sizeof(why)), 0);
	sql("DELETE FROM bloomgate_generations WHERE generation >= 2");
	assert_int_equal(bg_fleetdb_status(db, NULL, &v, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].lag_generations, -2);
	assert_true(v[0].lag_seconds == 0);
	free(v);
	bg_fleetdb_close(db);
}

/* A number once published is never published again, whatever rows are
 * deleted: a gateway that applied it never meets it with other bytes. */
static void test_numbers_not_reused(void **state)
{
	struct bg_fleetdb *db = connect_db();
	uint64_t next = 0;

	(void)state;
	assert_int_equal(bg_fleetdb_next(db, &next, why, sizeof(why)), 0);
	assert_int_equal(next, 1);
	assert_int_equal(publish_full(db, 1, 100), 0);
	assert_int_equal(publish_full(db, 2, 100), 0);
	assert_int_equal(publish_full(db, 3, 100), 0);
	assert_int_equal(sql_num("SELECT value::bigint FROM bloomgate_meta"
				 " WHERE key = 'last_generation'"), 3);
	sql("DELETE FROM bloomgate_generations WHERE generation = 3");
	assert_int_equal(bg_fleetdb_next(db, &next, why, sizeof(why)), 0);
	assert_int_equal(next, 4);
	assert_int_equal(publish_full(db, 3, 100), -EAGAIN);
	assert_non_null(strstr(why, "the last published is 3"));
	assert_int_equal(publish_full(db, 4, 100), 0);
	/* every row gone: still above */
	sql("DELETE FROM bloomgate_generations");
	assert_int_equal(bg_fleetdb_next(db, &next, why, sizeof(why)), 0);
	assert_int_equal(next, 5);
	assert_int_equal(publish_full(db, 1, 100), -EAGAIN);
	assert_int_equal(publish_full(db, 5, 100), 0);
	bg_fleetdb_close(db);
}

/*
 * A store of schema version 1 (generations named by their header digest)
 * migrated: each generation's sha256 made its file's SHA-256 from its
 * chunks, a delta's base's too, one whose chunks do not add up left as
 * it was; the last generation recorded.
 */
static void test_migrate_v1(void **state)
{
	struct bg_fleetdb *db = connect_db();
	struct bg_fleet_gen g, got;
	const char *d2 = in_files("gen2.delta");
	char s1[65], s2[65], s3[65];
	uint64_t next;

	(void)state;
	assert_int_equal(publish_full(db, 1, 3 * MIB / 2), 0);
	make_file(in_files("gen2.art"), 2 * MIB + 3, 2);
	make_file(d2, 1000, 7);
	g = gen_of(2, in_files("gen2.art"));
	g.kind = BG_FLEET_DELTA;
	g.base_generation = 1;
	sha_file(in_files("gen1.art"), g.base_sha256);
	assert_int_equal(bg_fleetdb_publish(db, &g, NULL, NULL, 0,
					    in_files("gen2.art"), d2, why,
					    sizeof(why)), 0);
	assert_int_equal(publish_full(db, 3, 3 * MIB), 0);
	sha_file(in_files("gen1.art"), s1);
	sha_file(in_files("gen2.art"), s2);
	sha_file(in_files("gen3.art"), s3);
	/* as version 1 left it: header digests, no last generation; and
	 * generation 3 damaged (a chunk gone) */
	sql("UPDATE bloomgate_generations SET sha256 = repeat('a', 63) ||"
	    " generation::text, base_sha256 = CASE WHEN kind = 'delta' THEN"
	    " repeat('a', 63) || base_generation::text END;"
	    " DELETE FROM bloomgate_meta WHERE key = 'last_generation';"
	    " UPDATE bloomgate_meta SET value = '1' WHERE key = 'schema_version';"
	    " DELETE FROM bloomgate_chunks WHERE generation = 3 AND seq = 1");
	assert_int_equal(bg_fleetdb_migrate(db, why, sizeof(why)), 0);
	assert_int_equal(sql_num("SELECT value::int FROM bloomgate_meta"
				 " WHERE key = 'schema_version'"), BG_FLEETDB_SCHEMA);
	assert_int_equal(bg_fleetdb_get(db, 1, &got, why, sizeof(why)), 0);
	assert_string_equal(got.sha256, s1);
	assert_int_equal(bg_fleetdb_get(db, 2, &got, why, sizeof(why)), 0);
	assert_string_equal(got.sha256, s2);
	assert_string_equal(got.base_sha256, s1);
	assert_int_equal(bg_fleetdb_get(db, 3, &got, why, sizeof(why)), 0);
	assert_string_equal(got.sha256, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa3");
	assert_int_equal(bg_fleetdb_next(db, &next, why, sizeof(why)), 0);
	assert_int_equal(next, 4);
	/* done once: again, nothing changes */
	sql("UPDATE bloomgate_generations SET sha256 = repeat('b', 64)"
	    " WHERE generation = 1");
	assert_int_equal(bg_fleetdb_migrate(db, why, sizeof(why)), 0);
	assert_int_equal(bg_fleetdb_get(db, 1, &got, why, sizeof(why)), 0);
	assert_string_equal(got.sha256, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
	bg_fleetdb_close(db);
}

static void test_prune(void **state)
{
	struct bg_fleetdb *db = connect_db();
	struct bg_fleet_gen got;
	uint64_t i;

	(void)state;
	for (i = 1; i <= 6; i++)
		assert_int_equal(publish_full(db, i, 1500 * 1024), 0);
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_chunks"), 12);
	assert_int_equal(bg_fleetdb_prune(db, 0, why, sizeof(why)), 0);
	/* the default keeps BG_FLEETDB_KEEP: 3 to 6 */
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_generations"),
			 BG_FLEETDB_KEEP);
	assert_int_equal(sql_num("SELECT min(generation) FROM bloomgate_generations"),
			 7 - BG_FLEETDB_KEEP);
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_chunks"),
			 2 * BG_FLEETDB_KEEP);
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_chunks"
				 " WHERE generation < 3"),
			 0);
	assert_int_equal(bg_fleetdb_get(db, 2, &got, why, sizeof(why)), -ENOENT);
	assert_int_equal(bg_fleetdb_fetch(db, 2, 0, in_files("f"), NULL, why,
					  sizeof(why)),
			 -ENOENT);
	assert_int_equal(bg_fleetdb_prune(db, 2, why, sizeof(why)), 0);
	assert_int_equal(sql_num("SELECT count(*) FROM bloomgate_chunks"), 4);
	assert_int_equal(sql_num("SELECT min(generation) FROM bloomgate_chunks"), 5);
	/* the kept ones are whole */
	assert_int_equal(bg_fleetdb_fetch(db, 5, 0, in_files("f"), NULL, why,
					  sizeof(why)),
			 0);
	assert_same_file(in_files("gen5.art"), in_files("f"));
	/* the numbering goes on after a prune */
	assert_int_equal(publish_full(db, 7, 100), 0);
	bg_fleetdb_close(db);
}

/* ---- the database going away ---- */

static void test_server_gone(void **state)
{
	struct bg_fleetdb *db = connect_db(), *gw = connect_db(), *again = NULL;
	char secret_url[600], u2[512];
	struct bg_fleet_gen got;
	uint64_t gen;
	double t0;
	int ret;

	(void)state;
	assert_int_equal(publish_full(db, 1, 1500 * 1024), 0);
	assert_int_equal(bg_fleetdb_listen(gw, why, sizeof(why)), 0);
	PQfinish(raw);
	raw = NULL;

	assert_int_equal(pg("stop-keep", NULL, 0), 0);
	t0 = bg_mono();
	ret = bg_fleetdb_latest(db, &got, why, sizeof(why));
	assert_true(ret == -ENOTCONN || ret == -ECONNREFUSED);
	assert_null(strchr(why, '\n'));
	/* dead for good, and says so at once */
	assert_int_equal(bg_fleetdb_latest(db, &got, why, sizeof(why)), -ENOTCONN);
	assert_int_equal(bg_fleetdb_fetch(db, 1, 0, in_files("f"), NULL, why,
					  sizeof(why)),
			 -ENOTCONN);
	assert_int_equal(publish_full(db, 2, 100), -ENOTCONN);
	assert_int_equal(bg_fleetdb_notified(gw, &gen), -ENOTCONN);
	assert_int_equal(count_files("f"), 0);
	/* a new connection is refused, and the password is not said */
	snprintf(secret_url, sizeof(secret_url), "%s&password=s3cr3tpw", url);
	assert_int_equal(bg_fleetdb_connect(secret_url, 2, &again, why,
					    sizeof(why)),
			 -ECONNREFUSED);
	assert_null(again);
	assert_null(strstr(why, "s3cr3tpw"));
	assert_non_null(strstr(why, "password=***"));
	assert_true(bg_mono() - t0 < 2);
	bg_fleetdb_close(db);
	bg_fleetdb_close(gw);

	/* back, with its data */
	assert_int_equal(pg("restart", u2, sizeof(u2)), 0);
	assert_string_equal(u2, url);
	/* trust: the password is not asked for */
	assert_int_equal(bg_fleetdb_connect(secret_url, 2, &again, why,
					    sizeof(why)),
			 0);
	assert_int_equal(bg_fleetdb_migrate(again, why, sizeof(why)), 0);
	assert_int_equal(bg_fleetdb_latest(again, &got, why, sizeof(why)), 0);
	assert_int_equal(got.generation, 1);
	assert_int_equal(bg_fleetdb_fetch(again, 1, 0, in_files("f"), NULL, why,
					  sizeof(why)),
			 0);
	assert_same_file(in_files("gen1.art"), in_files("f"));
	assert_int_equal(publish_full(again, 2, 100), 0);
	bg_fleetdb_close(again);
}

static void test_connect_errors(void **state)
{
	struct bg_fleetdb *db = NULL;
	long long before;
	char u[600];
	size_t i;

	(void)state;
	/* malformed: the caller's mistake, and the token quoted by libpq is
	 * the password */
	assert_int_equal(bg_fleetdb_connect("postgresql://u:pw%zzsecret@localhost/db",
					    1, &db, why, sizeof(why)),
			 -EINVAL);
	assert_null(db);
	assert_null(strstr(why, "secret"));
	/* nor a part of it when why is too short for the message */
	for (i = 1; i <= sizeof(why); i++) {
		assert_int_equal(bg_fleetdb_connect("postgresql://u:pw%zzsecret@localhost/db",
						    1, &db, why, i),
				 -EINVAL);
		assert_null(strstr(why, "pw%"));
	}
	assert_int_equal(bg_fleetdb_connect("host=/nonexistent password='pw secret' user=x",
					    1, &db, why, sizeof(why)),
			 -ECONNREFUSED);
	assert_null(strstr(why, "secret"));
	assert_null(strchr(why, '\n'));
	/* a database that is not there */
	snprintf(u, sizeof(u), "host=%s port=5432 user=postgres dbname=nosuchdb"
		 " password=hunter2x", pgdir);
	assert_int_equal(bg_fleetdb_connect(u, 1, &db, why, sizeof(why)),
			 -ECONNREFUSED);
	assert_non_null(strstr(why, "nosuchdb"));
	assert_null(strstr(why, "hunter2x"));

	/* application_name is bloomgate, unless the URL names one (counted
	 * before and after: a failed case may have left handles open) */
	before = sql_num("SELECT count(*) FROM pg_stat_activity"
			 " WHERE application_name = 'bloomgate'");
	db = connect_db();
	assert_int_equal(sql_num("SELECT count(*) FROM pg_stat_activity"
				 " WHERE application_name = 'bloomgate'"),
			 before + 1);
	bg_fleetdb_close(db);
	snprintf(u, sizeof(u), "%s&application_name=gw7", url);
	assert_int_equal(bg_fleetdb_connect(u, 1, &db, why, sizeof(why)), 0);
	assert_int_equal(sql_num("SELECT count(*) FROM pg_stat_activity"
				 " WHERE application_name = 'gw7'"),
			 1);
	bg_fleetdb_close(db);
	/* key=value, and a database name alone (the rest from PG*) */
	snprintf(u, sizeof(u), "host=%s port=5432 user=postgres dbname=bloomgate",
		 pgdir);
	assert_int_equal(bg_fleetdb_connect(u, 1, &db, why, sizeof(why)), 0);
	assert_int_equal(bg_fleetdb_migrate(db, why, sizeof(why)), 0);
	bg_fleetdb_close(db);
	setenv("PGHOST", pgdir, 1);
	setenv("PGPORT", "5432", 1);
	setenv("PGUSER", "postgres", 1);
	assert_int_equal(bg_fleetdb_connect("bloomgate", 1, &db, why, sizeof(why)),
			 0);
	unsetenv("PGHOST");
	unsetenv("PGPORT");
	unsetenv("PGUSER");
	assert_int_equal(bg_fleetdb_migrate(db, why, sizeof(why)), 0);
	bg_fleetdb_close(db);
}

/* ---- redaction ---- */

static void test_redact(void **state)
{
	static const char *const cases[][2] = {
		{ "postgresql://alice:s3cret@db.example:5432/fleet",
		  "postgresql://alice:***@db.example:5432/fleet" },
		{ "postgres://alice:s3cret@db.example/fleet?sslmode=require",
		  "postgres://alice:***@db.example/fleet?sslmode=require" },
		{ "postgresql://alice@db.example/fleet",
		  "postgresql://alice@db.example/fleet" },
		{ "postgresql:///bloomgate?host=/tmp/x&password=s3cret&user=a",
		  "postgresql:///bloomgate?host=/tmp/x&password=***&user=a" },
		{ "postgresql://h1,h2/db?pass%77ord=s3cret",
		  "postgresql://h1,h2/db?pass%77ord=***" },
		{ "postgresql://a:b:s3cret@h/db", "postgresql://a:***@h/db" },
		{ "host=db.example user=alice password=s3cret dbname=fleet",
		  "host=db.example user=alice password=*** dbname=fleet" },
		{ "host=db password = 's3 cr\\'et' dbname=fleet",
		  "host=db password = *** dbname=fleet" },
		{ "dbname=postgresql://u:s3cret@h/db host=x",
		  "dbname=postgresql://u:***@h/db host=x" },
		{ "host=db user=alice", "host=db user=alice" },
		{ "fleet", "fleet" },
		{ "", "" },
	};
	char buf[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_ptr_equal(bg_fleetdb_redact(cases[i][0], buf, sizeof(buf)),
				 buf);
		assert_string_equal(buf, cases[i][1]);
	}
	/* cut short: never a byte of the secret */
	for (i = 1; i < 40; i++) {
		const char *full = "postgresql://alice:***@db/fleet";

		bg_fleetdb_redact("postgresql://alice:s3cret@db/fleet", buf, i);
		assert_int_equal(strlen(buf), i - 1 < strlen(full) ? i - 1 : strlen(full));
		assert_true(!strncmp(buf, full, strlen(buf)));
		assert_null(strstr(buf, "s3"));
	}
}

/* ---- the measure ---- */

static long vm_kib(const char *field)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			v = strtol(line + strlen(field) + 1, NULL, 10);
	fclose(f);
	return v;
}

/* Resets the peak resident size (VmHWM) to the current one. */
static void reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	if (f) {
		fputs("5", f);
		fclose(f);
	}
}

/* Publishes and fetches a file of BG_FLEETDB_BENCH_MIB MiB three times
 * (generations 1 to 3): the first in a fresh cluster also pays for its
 * WAL files being made, the others reuse them, as a server that has run
 * for a while does. */
static void test_bench(void **state)
{
	const char *mib_s = getenv("BG_FLEETDB_BENCH_MIB");
	uint64_t mib = mib_s ? strtoull(mib_s, NULL, 10) : 0, i;
	const char *art = in_files("big.art"), *out = in_files("big.fetched");
	struct bg_fleetdb *db;
	struct bg_fleet_gen g;
	long rss0, peak;
	double t0, t;

	(void)state;
	if (!mib)
		skip();
	db = connect_db();
	make_file(art, mib * MIB, 7);
	g = gen_of(1, art);
	sync();
	for (i = 1; i <= 3; i++) {
		g.generation = i;
		reset_peak();
		rss0 = vm_kib("VmRSS:");
		t0 = bg_mono();
		assert_int_equal(bg_fleetdb_publish(db, &g, NULL, NULL, 0, art,
						    NULL, why, sizeof(why)),
				 0);
		t = bg_mono() - t0;
		peak = vm_kib("VmHWM:");
		printf("# publish %" PRIu64 " MiB (generation %" PRIu64 "): %.2f s, %.1f MB/s, peak RSS +%ld KiB\n",
		       mib, i, t, mib * MIB / t / 1e6, peak - rss0);

		reset_peak();
		rss0 = vm_kib("VmRSS:");
		t0 = bg_mono();
		assert_int_equal(bg_fleetdb_fetch(db, i, 0, out, NULL, why,
						  sizeof(why)),
				 0);
		t = bg_mono() - t0;
		peak = vm_kib("VmHWM:");
		printf("# fetch %" PRIu64 " MiB (generation %" PRIu64 "): %.2f s, %.1f MB/s, peak RSS +%ld KiB\n",
		       mib, i, t, mib * MIB / t / 1e6, peak - rss0);
		assert_same_file(art, out);
	}
	bg_fleetdb_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_migrate, empty),
		cmocka_unit_test_setup(test_newer_schema, empty),
		cmocka_unit_test_setup(test_publish_fetch_full, empty),
		cmocka_unit_test_setup(test_publish_fetch_delta, empty),
		cmocka_unit_test_setup(test_stale_generation, empty),
		cmocka_unit_test_setup(test_missing_generation, empty),
		cmocka_unit_test_setup(test_notify, empty),
		cmocka_unit_test_setup(test_status_lag, empty),
		cmocka_unit_test_setup(test_status_ahead, empty),
		cmocka_unit_test_setup(test_numbers_not_reused, empty),
		cmocka_unit_test_setup(test_migrate_v1, empty),
		cmocka_unit_test_setup(test_prune, empty),
		cmocka_unit_test_setup(test_connect_errors, empty),
		cmocka_unit_test(test_redact),
		cmocka_unit_test_setup(test_bench, empty),
		/* last: it stops and restarts the server */
		cmocka_unit_test_setup(test_server_gone, empty),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
