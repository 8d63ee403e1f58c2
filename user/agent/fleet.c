// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A gateway of a fleet: its fetch and its link to the store (agent/fleet.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/fleet.h"
#include "core/clock.h"
#include "core/artifact.h"

/* The generation of the artifact at path (the copy kept: the one applied
 * here); 0 when it is none (or not a store's); -1 when it cannot be
 * opened as an artifact. */
static int64_t generation_of(const char *path)
{
	struct bg_art a;
	uint64_t g;
	char why[64];

	if (bg_art_open(path, &a, why, sizeof(why)))
		return -1;
	g = a.h->generation;
	bg_art_close(&a);
	return (int64_t)g;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/* The delta of generation g applied to the copy at base_path, into cand
 * (its SHA-256 into sha): 0, or nonzero with why (then the whole
 * generation is fetched). */
static int from_delta(struct bg_fleetdb *db, const struct bg_fleet_gen *g,
		      const char *base_path, const char *cand, uint64_t *bytes,
		      char sha[65], char *why, size_t whylen)
{
	char dpath[4300];
	struct bg_art base, d;
	uint8_t fsha[BG_ART_SHA];
	int ret;

	if (snprintf(dpath, sizeof(dpath), "%s.delta", cand) >= (int)sizeof(dpath))
		return -ENAMETOOLONG;
	ret = bg_fleetdb_fetch(db, g->generation, 1, dpath, NULL, why, whylen);
	if (ret)
		return ret;
	*bytes += file_size(dpath);
	ret = bg_art_open(dpath, &d, why, whylen);
	if (ret) {
		unlink(dpath);
		return ret;
	}
	ret = bg_art_open(base_path, &base, why, whylen);
	if (!ret) {
		ret = bg_art_verify(&d, ~0u, NULL, 0, why, whylen);
		if (!ret)
			ret = bg_art_delta_apply(&base, &d, cand, 0, fsha, why, whylen);
		if (!ret)
			bg_sha_hex(fsha, sha);
		bg_art_close(&base);
	}
	bg_art_close(&d);
	unlink(dpath);
	return ret;
}

/*
 * The store's newest generation is older than the one applied here (rows
 * deleted, a store restored from a backup): refused into r unless the
 * operator allows it. 1 when refused.
 */
static int rollback_refused(const struct bg_fleet_gen *g, int64_t applied,
			    int allow, struct bg_fetch_result *r,
			    struct bg_fleet_got *got)
{
	if (applied <= 0 || g->generation >= (uint64_t)applied)
		return 0;
	got->rollback_from = (uint64_t)applied;
	if (allow)
		return 0;
	snprintf(r->err, sizeof(r->err), "the store's newest generation %llu is "
		 "older than generation %lld applied here: refused, the applied "
		 "one stays live (rows deleted? fleet: allow_rollback: true "
		 "takes it)", (unsigned long long)g->generation, (long long)applied);
	return 1;
}

/* The candidate cand (its file's SHA-256 sha) is what the store says
 * generation g is: 1; else 0 with r->err, cand removed. */
static int received_ok(const struct bg_fleet_gen *g, const char *cand,
		       const char *sha, struct bg_fetch_result *r)
{
	int64_t gen;

	/* its bytes, byte for byte (every section is then verified by the
	 * rebuild, while it is copied into the map) */
	if (strcmp(sha, g->sha256)) {
		unlink(cand);
		snprintf(r->err, sizeof(r->err), "generation %llu: the artifact "
			 "received (sha256 %.16s...) does not match the store's "
			 "checksum (%.16s...): damaged in the store or on the way",
			 (unsigned long long)g->generation, sha, g->sha256);
		return 0;
	}
	/* and its number: a gateway reports the generation its artifact
	 * carries, and never goes back from it */
	gen = generation_of(cand);
	if (gen >= 0 && (uint64_t)gen != g->generation) {
		unlink(cand);
		snprintf(r->err, sizeof(r->err), "generation %llu: the artifact "
			 "received is generation %lld", (unsigned long long)g->generation,
			 (long long)gen);
		return 0;
	}
	return 1;
}

int bg_fleet_fetch(const char *dburl, const char *cache_path, const char *kept_hex,
		   int allow_rollback, const int *abort, struct bg_fetch_result *r,
		   struct bg_fleet_got *got)
{
	char cand[4200], why[512], kept[65] = "", got_hex[65] = "";
	struct bg_fleetdb *db = NULL;
	struct bg_fleet_gen g;
	double t0 = bg_mono();
	int ret, done = 0;

	memset(r, 0, sizeof(*r));
	memset(got, 0, sizeof(*got));
	r->outcome = BG_FETCH_FAILED;
	if (bg_fetch_candidate(cache_path, cand, sizeof(cand)))
		return -ENAMETOOLONG;
	if (abort && __atomic_load_n(abort, __ATOMIC_RELAXED)) {
		snprintf(r->err, sizeof(r->err), "aborted: the agent stops");
		goto out;
	}
	ret = bg_fleetdb_connect(dburl, 10, &db, why, sizeof(why));
	if (ret) {
		snprintf(r->err, sizeof(r->err), "the fleet store cannot be reached: %.200s",
			 why);
		goto out;
	}
	ret = bg_fleetdb_latest(db, &g, why, sizeof(why));
	if (ret) {
		snprintf(r->err, sizeof(r->err), "the fleet store: %.230s", why);
		goto out;
	}
	if (!g.generation) {
		snprintf(r->err, sizeof(r->err), "no generation published yet");
		goto out;
	}
	got->generation = g.generation;
	if (!bg_sha_hex_ok(g.sha256)) {
		snprintf(r->err, sizeof(r->err), "the fleet store: generation %llu's "
			 "checksum is no SHA-256", (unsigned long long)g.generation);
		goto out;
	}
	/* the copy kept, as the store names generations: the SHA-256 of its
	 * file */
	if (kept_hex && kept_hex[0])
		snprintf(kept, sizeof(kept), "%s", kept_hex);
	else if (bg_sha256_file(cache_path, kept))
		kept[0] = 0;
	if (kept[0] && !strcmp(kept, g.sha256)) {
		r->outcome = BG_FETCH_UNCHANGED;
		memcpy(r->sha256, kept, sizeof(r->sha256));
		goto out;
	}
	if (kept[0] && rollback_refused(&g, generation_of(cache_path), allow_rollback,
					r, got))
		goto out;
	/* the delta when the copy is its base: a few elements instead of
	 * the whole filter */
	if (g.kind == BG_FLEET_DELTA && kept[0] && !strcmp(kept, g.base_sha256)) {
		if (!from_delta(db, &g, cache_path, cand, &got->bytes, got_hex, why,
				sizeof(why))) {
			done = 1;
			got->delta = 1;
		} else {
			snprintf(got->delta_why, sizeof(got->delta_why), "%.250s", why);
		}
	} else if (g.kind == BG_FLEET_DELTA) {
		snprintf(got->delta_why, sizeof(got->delta_why),
			 "this gateway does not hold its base (generation %llu)",
			 (unsigned long long)g.base_generation);
	}
	if (!done) {
		ret = bg_fleetdb_fetch(db, g.generation, 0, cand, got_hex, why,
				       sizeof(why));
		if (ret) {
			snprintf(r->err, sizeof(r->err), "generation %llu: %.200s",
				 (unsigned long long)g.generation, why);
			goto out;
		}
		got->bytes += file_size(cand);
	}
	if (!received_ok(&g, cand, got_hex, r))
		goto out;
	r->outcome = BG_FETCH_CHANGED;
	memcpy(r->sha256, got_hex, sizeof(r->sha256));
	r->bytes = got->bytes;
out:
	if (db)
		bg_fleetdb_close(db);
	r->seconds = bg_mono() - t0;
	return 0;
}

/* ---- the link ------------------------------------------------------------ */

struct bg_fleet_link {
	pthread_t th;
	pthread_mutex_t mu;
	char *db;
	int wake_fd;
	int pipe[2]; /* wakes the thread: a report, or stop */
	int quit;
	int up;
	int have_rep;
	struct bg_fleet_report rep;
};

static void poke(int fd)
{
	uint64_t one = 1;
	ssize_t w = write(fd, &one, sizeof(one));

	(void)w; /* an eventfd that is full is woken already */
}

static void drain(int fd)
{
	char buf[64];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static int quitting(struct bg_fleet_link *l)
{
	return __atomic_load_n(&l->quit, __ATOMIC_ACQUIRE);
}

/* Waits up to seconds for the pipe (a report or stop) or fd (-1: none);
 * 1 when fd is readable. */
static int wait_for(struct bg_fleet_link *l, int fd, double seconds)
{
	struct pollfd p[2] = { { .fd = l->pipe[0], .events = POLLIN },
			       { .fd = fd, .events = POLLIN } };
	int n = poll(p, fd >= 0 ? 2 : 1, (int)(seconds * 1e3));

	if (n > 0 && (p[0].revents & POLLIN))
		drain(l->pipe[0]);
	return n > 0 && fd >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR));
}

static void *link_main(void *arg)
{
	struct bg_fleet_link *l = arg;
	struct bg_fleetdb *db = NULL;
	double backoff = 0.5;
	char why[512];

	while (!quitting(l)) {
		struct bg_fleet_report rep;
		uint64_t gen;
		int have, ret;

		if (!db) {
			ret = bg_fleetdb_connect(l->db, 5, &db, why, sizeof(why));
			if (!ret)
				ret = bg_fleetdb_migrate(db, why, sizeof(why));
			if (!ret)
				ret = bg_fleetdb_listen(db, why, sizeof(why));
			if (ret) {
				if (db)
					bg_fleetdb_close(db);
				db = NULL;
				wait_for(l, -1, backoff);
				backoff = backoff * 2 > BG_FLEET_RECONNECT_MAX ?
						  BG_FLEET_RECONNECT_MAX : backoff * 2;
				continue;
			}
			backoff = 0.5;
			__atomic_store_n(&l->up, 1, __ATOMIC_RELEASE);
			/* (again) listening: what was announced meanwhile is
			 * fetched now */
			poke(l->wake_fd);
		}
		pthread_mutex_lock(&l->mu);
		have = l->have_rep;
		rep = l->rep;
		l->have_rep = 0;
		pthread_mutex_unlock(&l->mu);
		if (have && bg_fleetdb_report(db, &rep, why, sizeof(why))) {
			pthread_mutex_lock(&l->mu);
			if (!l->have_rep) { /* sent with the next connection */
				l->rep = rep;
				l->have_rep = 1;
			}
			pthread_mutex_unlock(&l->mu);
			goto lost;
		}
		/* a notification that came during the report is queued in
		 * libpq, not on the socket: asked for before waiting */
		ret = bg_fleetdb_notified(db, &gen);
		if (ret > 0)
			poke(l->wake_fd);
		if (ret < 0)
			goto lost;
		if (!wait_for(l, bg_fleetdb_fd(db), 1.0))
			continue;
		ret = bg_fleetdb_notified(db, &gen);
		if (ret > 0)
			poke(l->wake_fd);
		if (ret >= 0)
			continue;
lost:
		__atomic_store_n(&l->up, 0, __ATOMIC_RELEASE);
		bg_fleetdb_close(db);
		db = NULL;
	}
	if (db)
		bg_fleetdb_close(db);
	return NULL;
}

int bg_fleet_link_start(const char *db, int wake_fd, struct bg_fleet_link **out)
{
	struct bg_fleet_link *l = calloc(1, sizeof(*l));
	int ret;

	if (!l || !(l->db = strdup(db))) {
		free(l);
		return -ENOMEM;
	}
	l->wake_fd = wake_fd;
	if (pipe2(l->pipe, O_CLOEXEC | O_NONBLOCK)) {
		ret = -errno;
		free(l->db);
		free(l);
		return ret;
	}
	pthread_mutex_init(&l->mu, NULL);
	ret = -pthread_create(&l->th, NULL, link_main, l);
	if (ret) {
		close(l->pipe[0]);
		close(l->pipe[1]);
		pthread_mutex_destroy(&l->mu);
		free(l->db);
		free(l);
		return ret;
	}
	*out = l;
	return 0;
}

void bg_fleet_link_report(struct bg_fleet_link *l, const struct bg_fleet_report *r)
{
	ssize_t w;

	pthread_mutex_lock(&l->mu);
	l->rep = *r;
	l->have_rep = 1;
	pthread_mutex_unlock(&l->mu);
	w = write(l->pipe[1], "r", 1);
	(void)w;
}

int bg_fleet_link_up(struct bg_fleet_link *l)
{
	return l && __atomic_load_n(&l->up, __ATOMIC_ACQUIRE);
}

void bg_fleet_link_stop(struct bg_fleet_link *l)
{
	ssize_t w;

	if (!l)
		return;
	__atomic_store_n(&l->quit, 1, __ATOMIC_RELEASE);
	w = write(l->pipe[1], "q", 1);
	(void)w;
	pthread_join(l->th, NULL);
	close(l->pipe[0]);
	close(l->pipe[1]);
	pthread_mutex_destroy(&l->mu);
	free(l->db);
	free(l);
}
