// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's sources (declared in agent_priv.h; one source is
 * source.h's): the table of them (made at
 * the start, remade by a reload, which keeps what it knew of each), their
 * state, their store rows, and when each is fetched and what becomes of a
 * fetch. What a fetch does is its kind's driver's (src_*.c).
 *
 * A source is idle, fetching (a job on the fetch threads), or holds a
 * candidate: a new copy that the next rebuild judges (rebuild.c), after
 * which it is the last good copy or is thrown away. One fetch per source
 * at a time, and none while its candidate waits: the candidate's file is
 * never written while a rebuild may read it. A change seen meanwhile
 * (inotify, a due refresh) is fetched as soon as the source is idle
 * again: never lost.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_priv.h"
#include "core/clock.h"
#include "core/url.h"

struct source *src_find(struct agent *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->nsrc; i++)
		if (!strcmp(a->src[i].cfg->list.name, name))
			return &a->src[i];
	return NULL;
}

/* ---- the store's rows (store thread) ------------------------------------ */

struct row_job {
	struct job j;
	struct bg_store_source r;
};

static void row_run(struct agent *a, struct job *jj)
{
	struct row_job *j = (struct row_job *)jj;

	if (a->store && bg_store_source_put(a->store, &j->r))
		agent_log("source %s: cannot update the store", j->r.name);
}

void store_put(struct agent *a, const struct source *s)
{
	struct row_job *j;

	if (!a->store)
		return;
	j = calloc(1, sizeof(*j));
	if (!j) {
		agent_log("source %s: cannot update the store: out of memory",
			  s->cfg->list.name);
		return;
	}
	j->j.run = row_run;
	bg_store_source_describe(&j->r, &s->cfg->list);
	/* the kept copy's, never a candidate's: a restart trusts these */
	j->r.rec = s->rec;
	j->r.generation = a->generation;
	work_store(a, &j->j);
}

struct forget_job {
	struct job j;
	char name[BG_CFG_NAME_MAX + 1];
	char copy[PATH_MAX];
};

static void forget_row_run(struct agent *a, struct job *jj)
{
	struct forget_job *j = (struct forget_job *)jj;
	int ret = a->store ? bg_store_source_delete(a->store, j->name) : 0;

	if (ret && ret != -ENOENT)
		agent_log("source %s: cannot remove it from the store: %s",
			  j->name, strerror(-ret));
}

static void forget_copy_run(struct agent *a, struct job *jj)
{
	struct forget_job *j = (struct forget_job *)jj;

	(void)a;
	unlink(j->copy);
	bg_fetch_discard(j->copy);
}

/* A list a reload removed: its store row and copies go (main worker, after
 * the rebuild in progress). */
static void forget_list(struct agent *a, const char *name, const char *copy)
{
	struct forget_job *row = calloc(1, sizeof(*row)), *file = calloc(1, sizeof(*file));

	if (!row || !file) {
		free(row);
		free(file);
		agent_log("source %s: cannot forget it: out of memory", name);
		return;
	}
	snprintf(row->name, sizeof(row->name), "%s", name);
	snprintf(row->copy, sizeof(row->copy), "%s", copy);
	*file = *row;
	row->j.run = forget_row_run;
	file->j.run = forget_copy_run;
	agent_log("source %s: removed from the config: its copy and its "
		  "entries go", name);
	/* the row after the jobs queued before (rows, entries of it); the
	 * copy after the rebuild in progress, which may be reading it */
	work_store(a, &row->j);
	work_main(a, &file->j);
}

/* ---- fetching ------------------------------------------------------------- */

struct fetch_job {
	struct job j;
	const struct src_ops *ops; /* the driver that began it */
	void *drv; /* its own job */
	char name[BG_CFG_NAME_MAX + 1];
	char copy[PATH_MAX];
	char kept_sha[65];
	struct bg_fetch_validators v;
	struct bg_fetch_result r;
	double seen; /* unix time the change was seen: an inotify event, or
			the fetch's start */
};

static void fetch_run(struct agent *a, struct job *jj)
{
	struct fetch_job *j = (struct fetch_job *)jj;

	j->ops->fetch(j->drv, j->copy, j->kept_sha, &j->v, &j->r, &a->work.quit);
}

/* A fetch's outcome applied to its source (a->lock held); 1 when it
 * brought a candidate. */
static int fetched(struct source *s, struct fetch_job *j)
{
	struct bg_fetch_result *r = &j->r;

	s->phase = SRC_IDLE;
	s->mark = 0;
	s->rec.fetches++;
	s->rec.last_attempt = bg_wall();
	if (r->outcome == BG_FETCH_CHANGED && s->refused_sha[0] &&
	    !strcmp(r->sha256, s->refused_sha)) {
		/* the bytes refused last time: refused again, no rebuild */
		bg_fetch_discard(s->copy);
		r->outcome = BG_FETCH_FAILED;
		snprintf(r->err, sizeof(r->err), "%s", s->refused_why);
	}
	switch (r->outcome) {
	case BG_FETCH_CHANGED:
		s->phase = SRC_CANDIDATE;
		memcpy(s->cand_sha, r->sha256, sizeof(s->cand_sha));
		s->cand_v = r->v;
		s->cand_seen = j->seen;
		s->cand_fetch_ms = r->seconds * 1e3;
		/* a change that came with a failure (a CrowdSec pull that
		 * failed while decisions ran out): failing all the same */
		if (r->err[0])
			src_failed(s, r->err);
		return 1;
	case BG_FETCH_UNCHANGED:
	case BG_FETCH_NOT_MODIFIED:
		if (r->outcome == BG_FETCH_NOT_MODIFIED)
			s->rec.not_modified++;
		/* *v came back updated (304, or the same bytes) */
		if (s->cfg->list.url)
			s->rec.v = j->v;
		/* the same bytes: their hash is known now (a copy whose
		 * store row was lost) */
		if (r->outcome == BG_FETCH_UNCHANGED && s->have_copy)
			memcpy(s->rec.sha256, r->sha256, sizeof(s->rec.sha256));
		src_ok(s);
		return 0;
	default:
		src_failed(s, r->err);
		return 0;
	}
}

static void fetch_done(struct agent *a, struct job *jj)
{
	struct fetch_job *j = (struct fetch_job *)jj;
	struct source *s = src_find(a, j->name);
	char note[512] = "";
	int changed = 0, live;

	if (s && s->ops != j->ops)
		s = NULL; /* of another kind since a reload */
	/* not removed (or moved) by a reload meanwhile */
	live = s && s->phase == SRC_FETCHING && !strcmp(s->copy, j->copy);
	pthread_mutex_lock(&a->lock);
	if (live) {
		changed = fetched(s, j);
		/* a watched file keeps the due time an event set while it
		 * was fetched: that change is fetched next */
		if (s->cfg->refresh > 0)
			s->due = j->r.outcome == BG_FETCH_FAILED ? src_retry_at(s) :
				 bg_mono() + bg_jitter(s->cfg->refresh, agent_rnd());
	}
	/* what the source owns goes back to it (or with the job) */
	j->ops->fetch_end(a, s, j->drv, &j->r, note, sizeof(note));
	pthread_mutex_unlock(&a->lock);
	if (!live) {
		if (j->r.outcome == BG_FETCH_CHANGED)
			bg_fetch_discard(j->copy);
		return;
	}
	if (changed) {
		if (note[0])
			agent_log("source %s: %s", s->cfg->list.name, note);
		else
			agent_log("source %s: new copy (%s in %.1f ms), to be judged "
				  "by the rebuild", s->cfg->list.name,
				  s->cfg->list.url ? "fetched" : "read",
				  j->r.seconds * 1e3);
		/* after the debounce window when a URL changed (others may
		 * follow), at once when a watched file did (its events were
		 * debounced already) or a built filter came (it is alone) */
		want_rebuild(a, s->ops->built || !s->cfg->list.url);
	}
	store_put(a, s);
}

static void start_fetch(struct agent *a, struct source *s)
{
	struct fetch_job *j = calloc(1, sizeof(*j));

	if (!j || s->ops->fetch_begin(a, s, &j->drv)) {
		free(j);
		agent_log("source %s: cannot fetch: out of memory", s->cfg->list.name);
		return;
	}
	j->j.run = fetch_run;
	j->j.done = fetch_done;
	j->ops = s->ops;
	snprintf(j->name, sizeof(j->name), "%s", s->cfg->list.name);
	memcpy(j->copy, s->copy, sizeof(j->copy));
	if (s->have_copy)
		memcpy(j->kept_sha, s->rec.sha256, sizeof(j->kept_sha));
	j->v = s->rec.v;
	j->seen = s->changed_at ? s->changed_at : bg_wall();
	s->changed_at = 0;
	s->due = 0;
	s->phase = SRC_FETCHING;
	work_fetch(a, &j->j);
}

void run_due(struct agent *a, int all)
{
	double now = bg_mono();
	size_t i;

	for (i = 0; i < a->nsrc && !a->stop; i++) {
		struct source *s = &a->src[i];

		if (s->phase != SRC_IDLE)
			continue;
		if (all || (s->due && s->due <= now))
			start_fetch(a, s);
	}
}

void mark_all(struct agent *a)
{
	size_t i;

	for (i = 0; i < a->nsrc; i++) {
		struct source *s = &a->src[i];

		/* a candidate waiting is what a fetch would bring */
		s->mark = s->phase != SRC_CANDIDATE;
		if (s->phase == SRC_IDLE || s->phase == SRC_IN_REBUILD)
			s->due = bg_mono();
	}
}

int marks_pending(const struct agent *a)
{
	size_t i;

	for (i = 0; i < a->nsrc; i++)
		if (a->src[i].mark)
			return 1;
	return 0;
}

double sources_due(const struct agent *a)
{
	double t = 0;
	size_t i;

	/* a source that is busy (fetching, or its candidate waiting) is
	 * fetched when it is idle again, not at its due time */
	for (i = 0; i < a->nsrc; i++)
		if (a->src[i].due && a->src[i].phase == SRC_IDLE &&
		    (!t || a->src[i].due < t))
			t = a->src[i].due;
	return t;
}

void on_inotify(struct agent *a)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	size_t i;

	while ((n = read(a->infd, buf, sizeof(buf))) > 0) {
		char *p = buf;

		while (p < buf + n) {
			const struct inotify_event *e = (const void *)p;

			for (i = 0; i < a->nsrc; i++) {
				struct source *s = &a->src[i];
				const char *base;

				if (s->wd != e->wd || !s->cfg->list.path)
					continue;
				base = strrchr(s->cfg->list.path, '/');
				base = base ? base + 1 : s->cfg->list.path;
				if (e->len && strcmp(e->name, base))
					continue;
				/* debounced: an editor's several writes are one */
				s->due = bg_mono() + a->cfg.debounce;
				if (!s->changed_at)
					s->changed_at = bg_wall();
			}
			p += sizeof(*e) + e->len;
		}
	}
}

/* ---- setup and reload ---------------------------------------------------- */

/* A source's state from the store and its copy on disk (a restart, or a
 * list added by a reload). */
static void src_restore(struct agent *a, struct source *s)
{
	char url[sizeof(((struct bg_store_source *)0)->url)];
	struct bg_store_source r;
	struct stat st;

	/* a candidate left by a killed agent was never judged */
	bg_fetch_discard(s->copy);
	s->have_copy = stat(s->copy, &st) == 0 && S_ISREG(st.st_mode);
	if (!a->store_ro || bg_store_source_get(a->store_ro, s->cfg->list.name, &r))
		return;
	s->rec = r.rec;
	/* validators only for the same URL: a moved list is fetched anew
	 * (the store keeps the URL without its password) */
	if (!s->cfg->list.url ||
	    strcmp(r.url, bg_url_redact(s->cfg->list.url, url, sizeof(url))))
		memset(&s->rec.v, 0, sizeof(s->rec.v));
	/* what the copy holds, only while there is one */
	if (!s->have_copy) {
		s->rec.sha256[0] = 0;
		s->rec.entries = s->rec.rejected = 0;
	}
	s->rec.last_attempt = 0;
	s->rec.last_error[0] = 0;
}

/* A reload keeps what it knew of a source (old) unless its kind changed;
 * 1 when it did. */
static int src_keep(struct source *s, const struct source *old)
{
	const struct bg_cfg_list *cfg = s->cfg;
	const struct src_ops *ops = s->ops;

	if (old->ops != ops)
		return 0;
	*s = *old;
	/* a moved list is fetched anew, without validators */
	if ((cfg->list.url || old->cfg->list.url) &&
	    (!cfg->list.url || !old->cfg->list.url ||
	     strcmp(cfg->list.url, old->cfg->list.url)))
		memset(&s->rec.v, 0, sizeof(s->rec.v));
	s->cfg = cfg;
	s->wd = -1;
	/* a reload tries again what was refused */
	s->refused_sha[0] = 0;
	return 1;
}

int setup_sources(struct agent *a, const struct source *old, size_t nold)
{
	char dir[PATH_MAX];
	size_t i, j;
	int ret;

	snprintf(dir, sizeof(dir), "%s/lists", a->cfg.state_dir);
	ret = agent_mkdir_p(dir, 0700);
	if (ret)
		return ret;
	a->src = calloc(a->cfg.n_lists ? a->cfg.n_lists : 1, sizeof(*a->src));
	if (!a->src)
		return -ENOMEM;
	a->nsrc = a->cfg.n_lists;
	for (i = 0; i < a->nsrc; i++) {
		struct source *s = &a->src[i];

		s->cfg = &a->cfg.lists[i];
		s->ops = src_ops_of(s->cfg);
		s->wd = -1;
		s->fd = -1;
		if (snprintf(s->copy, sizeof(s->copy), "%s/%s.list", dir,
			     s->cfg->list.name) >= (int)sizeof(s->copy))
			return -ENAMETOOLONG;
		for (j = 0; j < nold; j++)
			if (!strcmp(old[j].cfg->list.name, s->cfg->list.name))
				break;
		if (j == nold || !src_keep(s, &old[j]))
			src_restore(a, s);
		if (s->ops->open && (ret = s->ops->open(a, s)))
			return ret;
	}
	return 0;
}

static void src_close(struct agent *a, struct source *s)
{
	if (s->ops->close)
		s->ops->close(a, s);
	s->priv = NULL;
	if (s->wd >= 0 && a->infd >= 0)
		inotify_rm_watch(a->infd, s->wd);
	s->wd = -1;
}

void sources_free(struct agent *a)
{
	size_t i;

	for (i = 0; i < a->nsrc; i++) {
		if (a->src[i].phase == SRC_CANDIDATE)
			bg_fetch_discard(a->src[i].copy);
		src_close(a, &a->src[i]);
	}
	free(a->src);
	a->src = NULL;
	a->nsrc = 0;
}

int reload_config(struct agent *a, char *err, size_t errlen)
{
	struct bg_config cfg, prev;
	struct source *old = a->src;
	size_t nold = a->nsrc, i, k;
	int ret;

	ret = bg_config_load(a->config_path, &cfg, err, errlen);
	if (ret) {
		agent_log("%s; the agent runs on with the config it has", err);
		return ret;
	}
	for (i = 0; i < nold; i++) {
		for (k = 0; k < cfg.n_lists; k++)
			if (!strcmp(cfg.lists[k].list.name, old[i].cfg->list.name))
				break;
		if (k == cfg.n_lists)
			forget_list(a, old[i].cfg->list.name, old[i].copy);
		/* a source kept keeps its driver's state (open() again); one
		 * gone, or of another kind now, closes it */
		if (k == cfg.n_lists || src_ops_of(&cfg.lists[k]) != old[i].ops)
			src_close(a, &old[i]);
		else if (old[i].wd >= 0)
			inotify_rm_watch(a->infd, old[i].wd);
	}
	pthread_mutex_lock(&a->lock);
	/* old[] points into the old config until the new sources copy it */
	prev = a->cfg;
	a->cfg = cfg;
	a->src = NULL;
	ret = setup_sources(a, old, nold);
	bg_config_free(&prev);
	pthread_mutex_unlock(&a->lock);
	free(old);
	if (ret)
		return ret;
	attach_ifaces_later(a);
	close_events(a);
	open_events(a);
	return 0;
}
