// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The driver of a fleet source (user/agent/source.h): the fleet store's
 * newest generation (agent/fleet.h), fetched as a delta applied to the
 * copy kept or whole, and checked against the store's checksum on the
 * fetch thread; applied as an artifact is (src_artifact.c). Its link to
 * the store (a thread of its own) wakes the source through an eventfd the
 * loop watches (s->fd) when a generation is announced, and carries the
 * gateway's reports: on a timer, and at once when the live filter changed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "agent/agent_priv.h"
#include "agent/fleetdb.h"
#include "agent/rebuild.h"
#include "core/clock.h"
#include "core/counters.h"
#include "kern/pins.h"
#include "kern/swap.h"

struct fleet_src {
	struct bg_fleet_link *link;
	int pending; /* a wake-up came while the source was busy */
	double report_due; /* monotonic; 0: none */
};

static void fleet_close(struct agent *a, struct source *s)
{
	struct fleet_src *f = s->priv;

	if (f)
		bg_fleet_link_stop(f->link);
	free(f);
	if (s->fd >= 0) {
		epoll_ctl(a->epfd, EPOLL_CTL_DEL, s->fd, NULL);
		close(s->fd);
	}
	s->fd = -1;
}

/* The link started, or started again after a reload (its store may have
 * changed). */
static int fleet_open(struct agent *a, struct source *s)
{
	struct fleet_src *f = s->priv;
	int ret;

	if (!f && !(f = s->priv = calloc(1, sizeof(*f))))
		return -ENOMEM;
	bg_fleet_link_stop(f->link);
	f->link = NULL;
	f->report_due = 0;
	if (s->fd < 0) {
		s->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (s->fd < 0 || agent_add_fd(a, s->fd, 0)) {
			agent_log("fleet: cannot start its link: %s", strerror(errno));
			return 0; /* the slow poll fetches it all the same */
		}
	}
	ret = bg_fleet_link_start(a->cfg.fleet.db, s->fd, &f->link);
	if (ret) {
		agent_log("fleet: cannot start its link: %s", strerror(-ret));
		f->link = NULL;
		return 0;
	}
	f->report_due = bg_mono();
	return 0;
}

/* The link woke the loop: the source is fetched as soon as idle. */
static void fleet_on_fd(struct agent *a, struct source *s)
{
	struct fleet_src *f = s->priv;
	uint64_t n;

	(void)a;
	while (read(s->fd, &n, sizeof(n)) == sizeof(n))
		;
	/* a fetch (or a rebuild of its candidate) runs: this one's turn
	 * comes when it is done, and its due time is then the poll's */
	f->pending = s->phase != SRC_IDLE;
	if (!f->pending)
		s->due = bg_mono();
}

/* The gateway's report, sent now (the loop's; a->lock not held). */
static void fleet_report(struct agent *a, struct source *s, struct fleet_src *f)
{
	struct bg_fleet_report r = { .generation = 0 };
	struct bg_counters c;
	struct bg_state st;

	f->report_due = bg_mono() + a->cfg.fleet.report;
	if (!f->link)
		return;
	snprintf(r.gateway, sizeof(r.gateway), "%s", a->cfg.fleet.gateway);
	pthread_mutex_lock(&a->lock);
	if (a->art_live) {
		r.generation = a->art_generation;
		r.applied_at = a->art_applied_at;
	}
	r.filter_id = a->filter_id;
	r.keys = a->filter.keys;
	r.entries = s->rec.entries;
	snprintf(r.state, sizeof(r.state), "%s", s->state ? s->state : "pending");
	snprintf(r.last_error, sizeof(r.last_error), "%.500s",
		 a->last_error[0] ? a->last_error : s->rec.last_error);
	pthread_mutex_unlock(&a->lock);
	if (!bg_state_open(&st, 0)) {
		if (!bg_counters_read(st.counters_fd, &c)) {
			r.packets = c.cnt[BG_CNT_PACKETS];
			r.dropped = c.cnt[BG_CNT_DROPPED];
			r.bloom_fp = c.cnt[BG_CNT_BLOOM_FP] + c.cnt[BG_CNT_DNS_BLOOM_FP];
		}
		bg_state_close(&st);
	}
	bg_fleet_link_report(f->link, &r);
}

static double fleet_tick(struct agent *a, struct source *s)
{
	struct fleet_src *f = s->priv;

	if (f->pending && s->phase == SRC_IDLE) {
		f->pending = 0;
		s->due = bg_mono();
	}
	if (f->link && f->report_due && f->report_due <= bg_mono())
		fleet_report(a, s, f);
	return f->link ? f->report_due : 0;
}

static void fleet_live_changed(struct agent *a, struct source *s)
{
	struct fleet_src *f = s->priv;

	(void)a;
	/* the fleet hears at once what this gateway enforces now */
	if (f->link)
		f->report_due = bg_mono();
}

static int fleet_link_up(const struct source *s)
{
	const struct fleet_src *f = s->priv;

	return f ? bg_fleet_link_up(f->link) : 0;
}

/* A fetch: the store's connection string (the config's, copied; the
 * source's url names it without its password) and what it got. */
struct fleet_job {
	char *db;
	int allow_rollback; /* fleet: allow_rollback */
	struct bg_fleet_got got;
};

static int fleet_fetch_begin(struct agent *a, struct source *s, void **job)
{
	struct fleet_job *j = calloc(1, sizeof(*j));

	(void)s;
	if (!j || !(j->db = strdup(a->cfg.fleet.db))) {
		free(j);
		return -ENOMEM;
	}
	j->allow_rollback = a->cfg.fleet.allow_rollback;
	*job = j;
	return 0;
}

static void fleet_fetch(void *job, const char *copy, const char *kept_sha,
			struct bg_fetch_validators *v, struct bg_fetch_result *r,
			const int *quit)
{
	struct fleet_job *j = job;

	(void)v;
	if (bg_fleet_fetch(j->db, copy, kept_sha, j->allow_rollback, quit, r,
			   &j->got)) {
		r->outcome = BG_FETCH_FAILED;
		snprintf(r->err, sizeof(r->err), "cannot fetch (internal error)");
	}
}

static void fleet_fetch_end(struct agent *a, struct source *s, void *job,
			    const struct bg_fetch_result *r, char *note, size_t len)
{
	struct fleet_job *j = job;

	(void)a;
	if (r->outcome == BG_FETCH_CHANGED && j->got.rollback_from && s)
		agent_log("source %s: the store's newest generation %llu is older "
			  "than generation %llu applied here: taken (allow_rollback)",
			  s->cfg->list.name, (unsigned long long)j->got.generation,
			  (unsigned long long)j->got.rollback_from);
	if (r->outcome == BG_FETCH_CHANGED)
		snprintf(note, len, "generation %llu (%s, %llu bytes in %.1f ms)%s%.250s, "
			 "to be verified and swapped in",
			 (unsigned long long)j->got.generation,
			 j->got.delta ? "a delta applied to the copy kept" : "whole",
			 (unsigned long long)j->got.bytes, r->seconds * 1e3,
			 j->got.delta_why[0] ? "; the delta not used: " : "",
			 j->got.delta_why);
	free(j->db);
	free(j);
}

/* agent --check: the store's newest generation. */
static int fleet_check(const struct bg_config *cfg, const struct bg_cfg_list *l,
		       const char *dir, const struct bg_protect_set *ps,
		       FILE *out)
{
	struct bg_fleetdb *db;
	struct bg_fleet_gen g;
	char why[512];
	int ret = bg_fleetdb_connect(cfg->fleet.db, 0, &db, why, sizeof(why));

	(void)dir;
	(void)ps;
	if (!ret) {
		ret = bg_fleetdb_latest(db, &g, why, sizeof(why));
		bg_fleetdb_close(db);
	}
	if (ret)
		fprintf(out, "list %s (%s): FAILED: %s\n", l->list.name, l->list.url, why);
	else if (g.generation)
		fprintf(out, "list %s (%s): ok, generation %llu\n", l->list.name,
			l->list.url, (unsigned long long)g.generation);
	else
		fprintf(out, "list %s (%s): ok, no generation published yet\n",
			l->list.name, l->list.url);
	return ret != 0;
}

const struct src_ops src_fleet_ops = {
	.kind = "fleet",
	.built = 1,
	/* a store busy or restarting is usually back at once, and its link
	 * wakes the fetch too */
	.retry_base = 1.0,
	.open = fleet_open,
	.close = fleet_close,
	.fetch_begin = fleet_fetch_begin,
	.fetch = fleet_fetch,
	.fetch_end = fleet_fetch_end,
	.apply = src_built_apply,
	.live_changed = fleet_live_changed,
	.on_fd = fleet_on_fd,
	.tick = fleet_tick,
	.link_up = fleet_link_up,
	.check = fleet_check,
};
