// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's sources (user/agent/agent_priv.h): when each is fetched, and
 * what becomes of a fetch. A source is idle, fetching (a job on the fetch
 * threads), or holds a candidate: a new copy that the next rebuild's
 * parse judges (rebuild.c), after which it is the last good copy or is
 * thrown away. One fetch per source at a time, and none while its
 * candidate waits: the candidate's file is never written while a rebuild
 * may read it. A change seen meanwhile (inotify, a due refresh) is
 * fetched as soon as the source is idle again: never lost.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_priv.h"
#include "agent/fleet.h"
#include "core/url.h"

struct src *src_find(struct agent *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->nsrc; i++)
		if (!strcmp(a->src[i].cfg->list.name, name))
			return &a->src[i];
	return NULL;
}

/* Logs a source's state when it changes: once per change. The caller
 * holds a->lock (the metrics thread reads the state). */
void src_set_state(struct src *s, const char *state, const char *why)
{
	if (s->state && !strcmp(s->state, state))
		return;
	s->state = state;
	agent_log("source %s: %s%s%s", s->cfg->list.name, state, why ? ": " : "",
		  why ? why : "");
}

static void fetch_src_of(const struct bg_config *c, const struct bg_cfg_list *l,
			 struct bg_fetch_src *f)
{
	memset(f, 0, sizeof(*f));
	f->list = l->list;
	f->timeout = l->timeout;
	f->max_bytes = l->max_bytes;
	/* a file is read by the rebuild as it is, so the rebuild's bound
	 * holds for its copy too; a URL keeps its own cap (the rebuild
	 * still refuses a copy past max_list_bytes) */
	if (l->list.path && c->max_list_bytes < f->max_bytes)
		f->max_bytes = c->max_list_bytes;
	f->max_shrink = l->max_shrink;
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

void store_put(struct agent *a, const struct src *s)
{
	struct row_job *j;
	struct bg_store_source *r;

	if (!a->store)
		return;
	j = calloc(1, sizeof(*j));
	if (!j) {
		agent_log("source %s: cannot update the store: out of memory",
			  s->cfg->list.name);
		return;
	}
	j->j.run = row_run;
	r = &j->r;
	bg_store_source_describe(r, &s->cfg->list);
	/* the kept copy's, never a candidate's: a restart trusts these */
	snprintf(r->etag, sizeof(r->etag), "%s", s->v.etag);
	snprintf(r->last_modified, sizeof(r->last_modified), "%s", s->v.last_modified);
	snprintf(r->sha256, sizeof(r->sha256), "%s", s->sha256);
	r->last_ok = s->last_ok;
	r->last_attempt = s->last_attempt;
	snprintf(r->last_error, sizeof(r->last_error), "%s", s->last_error);
	r->entries = s->entries;
	r->fetches = s->fetches;
	r->failures = s->failures;
	r->not_modified = s->not_modified;
	r->generation = a->generation;
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

void forget_list(struct agent *a, const char *name, const char *copy)
{
	struct forget_job *row = calloc(1, sizeof(*row)), *file = calloc(1, sizeof(*file));

	if (!row || !file) {
		free(row);
		free(file);
		agent_log("source %s: cannot forget it: out of memory", name);
		return;
	}
	row->j.run = forget_row_run;
	file->j.run = forget_copy_run;
	snprintf(row->name, sizeof(row->name), "%s", name);
	snprintf(row->copy, sizeof(row->copy), "%s", copy);
	*file = *row;
	file->j.run = forget_copy_run;
	agent_log("source %s: removed from the config: its copy and its "
		  "entries go", name);
	/* the row after the jobs queued before (rows, entries of it); the
	 * copy after the rebuild in progress, which may be reading it */
	work_store(a, &row->j);
	work_main(a, &file->j);
}

/* ---- fetching (fetch threads) -------------------------------------------- */

struct fetch_job {
	struct job j;
	struct bg_fetch_src f; /* f.list: the job's own copy (bg_list_desc_dup()) */
	char copy[PATH_MAX];
	char kept_sha[65];
	struct bg_fetch_validators v;
	struct bg_fetch_result r;
	double seen; /* unix time the change was seen: an inotify event, or
			the fetch's start */
	uint8_t kind; /* enum bg_src_kind */
	char *db; /* a fleet source's store (the config's, copied) */
	int allow_rollback; /* a fleet source's: fleet.allow_rollback */
	/* a crowdsec: source's: its decisions (the job's while it runs), its
	 * config (the strings copied), a pull that failed */
	struct bg_cs_state *cs;
	struct bg_cfg_list cscfg;
	char cs_err[256];
	struct bg_fleet_got got; /* a fleet source's */
	int ret;
};

static void cscfg_free(struct bg_cfg_list *c)
{
	free((char *)c->list.url);
	free(c->api_key_file);
	free(c->cs_origins);
	free(c->cs_scopes);
	free(c->cs_scen_in);
	free(c->cs_scen_out);
	memset(c, 0, sizeof(*c));
}

static char *dup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int cscfg_dup(struct bg_cfg_list *d, const struct bg_cfg_list *s)
{
	memset(d, 0, sizeof(*d));
	d->list.url = dup0(s->list.url);
	d->api_key_file = dup0(s->api_key_file);
	d->cs_origins = dup0(s->cs_origins);
	d->cs_scopes = dup0(s->cs_scopes);
	d->cs_scen_in = dup0(s->cs_scen_in);
	d->cs_scen_out = dup0(s->cs_scen_out);
	d->timeout = s->timeout;
	d->max_bytes = s->max_bytes;
	d->cs_max_range4 = s->cs_max_range4;
	d->cs_max_range6 = s->cs_max_range6;
	if (!d->list.url || !d->api_key_file || (s->cs_origins && !d->cs_origins) ||
	    (s->cs_scopes && !d->cs_scopes) || (s->cs_scen_in && !d->cs_scen_in) ||
	    (s->cs_scen_out && !d->cs_scen_out)) {
		cscfg_free(d);
		return -ENOMEM;
	}
	return 0;
}

/* A decision refused by a pull: the first few logged (all are counted) */
#define CS_REFUSED_LOGGED 5
struct cs_refusals {
	const char *source;
	size_t n;
};

static void cs_refused(void *ctx, const struct bg_cs_refusal *f)
{
	struct cs_refusals *c = ctx;

	if (c->n++ < CS_REFUSED_LOGGED)
		agent_log("source %s: decision %lld refused (%s: %s): value '%s', "
			  "origin '%s'", c->source, (long long)f->id, f->name, f->detail,
			  f->value, f->origin);
}

/* A crowdsec: source's fetch: one pull of its stream into its set; the set
 * written as a candidate copy when it changed (also when only decisions
 * ran out while the API was away: then the fetch is reported failed
 * beside it). */
static void cs_fetch(struct agent *a, struct fetch_job *j)
{
	struct bg_fetch_result *r = &j->r;
	struct bg_cs_state *st = j->cs;
	struct bg_cs_pull_result pr;
	char cand[PATH_MAX + 8], why[256];
	double t0 = agent_mono();
	int ret;

	memset(r, 0, sizeof(*r));
	r->outcome = BG_FETCH_FAILED;
	if (bg_fetch_candidate(j->copy, cand, sizeof(cand))) {
		snprintf(r->err, sizeof(r->err), "%s", strerror(ENAMETOOLONG));
		return;
	}
	struct cs_refusals refusals = { .source = j->f.list.name };
	struct bg_cs_hooks hooks = { .abort = &a->work.quit, .refused = cs_refused,
				     .ctx = &refusals };

	if (!st->loaded && bg_cs_read(st, j->copy, &j->cscfg, &a->work.quit))
		agent_log("source %s: its last copy cannot be read back: the local "
			  "API's next answer makes it", j->f.list.name);
	ret = bg_cs_pull(&j->cscfg, st, &hooks, &pr, why, sizeof(why));
	if (pr.warn[0])
		agent_log("source %s: warning: %s", j->f.list.name, pr.warn);
	if (refusals.n > CS_REFUSED_LOGGED)
		agent_log("source %s: %zu more decisions refused by that pull "
			  "(bloomgate_crowdsec_ignored_total)", j->f.list.name,
			  refusals.n - CS_REFUSED_LOGGED);
	if (ret)
		snprintf(j->cs_err, sizeof(j->cs_err), "%s", why);
	/* no copy yet and no answer yet: nothing to write (an empty copy would
	 * say "no decision", which is not known) */
	if (st->version != st->written || (!j->kept_sha[0] && st->synced)) {
		int err = bg_cs_write(st, cand, j->f.list.url, &a->work.quit);

		if (!err)
			err = bg_sha256_file(cand, r->sha256);
		if (err) {
			snprintf(r->err, sizeof(r->err), "cannot write the decisions' copy: %s",
				 strerror(-err));
			st->written = 0;
		} else if (j->kept_sha[0] && !strcmp(r->sha256, j->kept_sha)) {
			bg_fetch_discard(j->copy);
			r->outcome = ret ? BG_FETCH_FAILED : BG_FETCH_UNCHANGED;
		} else {
			r->outcome = BG_FETCH_CHANGED;
		}
	} else if (!ret) {
		r->outcome = BG_FETCH_UNCHANGED;
		memcpy(r->sha256, j->kept_sha, sizeof(r->sha256));
	}
	if (r->outcome == BG_FETCH_FAILED && !r->err[0])
		snprintf(r->err, sizeof(r->err), "%s", j->cs_err);
	r->entries = st->n;
	r->seconds = agent_mono() - t0;
}

static void fetch_run(struct agent *a, struct job *jj)
{
	struct fetch_job *j = (struct fetch_job *)jj;

	j->f.abort = &a->work.quit;
	if (j->kind == BG_SRC_CROWDSEC)
		cs_fetch(a, j);
	else if (j->kind == BG_SRC_FLEET)
		/* the store's newest generation (list.url names it without
		 * its password; the config's connection string is copied) */
		j->ret = !j->db ? -ENOMEM :
			 bg_fleet_fetch(j->db, j->copy, j->kept_sha, j->allow_rollback,
					&a->work.quit, &j->r, &j->got);
	else
		j->ret = bg_fetch(&j->f, j->copy, j->f.list.url ? &j->v : NULL, &j->r);
}

static void fetch_done(struct agent *a, struct job *jj)
{
	struct fetch_job *j = (struct fetch_job *)jj;
	struct bg_fetch_result *r = &j->r;
	struct src *s = src_find(a, j->f.list.name);
	int changed = 0;

	bg_list_desc_free(&j->f.list);
	free(j->db);
	j->db = NULL;
	cscfg_free(&j->cscfg);
	if (j->cs) {
		/* the decisions back to their source (or gone with it) */
		if (s && s->phase == SRC_FETCHING && !s->cs &&
		    s->cfg->kind == BG_SRC_CROWDSEC) {
			pthread_mutex_lock(&a->lock);
			s->cs = j->cs;
			s->cs_n_origins = bg_cs_origins(j->cs, s->cs_origins,
							BG_CS_ORIGINS_MAX);
			memcpy(s->cs_ignored, j->cs->ignored, sizeof(s->cs_ignored));
			pthread_mutex_unlock(&a->lock);
		} else {
			bg_cs_state_free(j->cs);
			free(j->cs);
		}
		j->cs = NULL;
	}
	if (!s || s->phase != SRC_FETCHING || strcmp(s->copy, j->copy)) {
		/* removed (or moved) by a reload meanwhile */
		if (!j->ret && r->outcome == BG_FETCH_CHANGED)
			bg_fetch_discard(j->copy);
		return;
	}
	if (j->ret) {
		r->outcome = BG_FETCH_FAILED;
		snprintf(r->err, sizeof(r->err), "cannot fetch (internal error)");
	}
	pthread_mutex_lock(&a->lock);
	s->phase = SRC_IDLE;
	s->mark = 0;
	s->fetches++;
	s->last_attempt = agent_wall();
	if (r->outcome == BG_FETCH_CHANGED && s->refused_sha[0] &&
	    !strcmp(r->sha256, s->refused_sha)) {
		/* the bytes refused last time: refused again, no rebuild */
		bg_fetch_discard(s->copy);
		r->outcome = BG_FETCH_FAILED;
		snprintf(r->err, sizeof(r->err), "%s", s->refused_why);
	}
	switch (r->outcome) {
	case BG_FETCH_CHANGED:
		changed = 1;
		s->phase = SRC_CANDIDATE;
		memcpy(s->cand_sha, r->sha256, sizeof(s->cand_sha));
		s->cand_v = r->v;
		s->cand_seen = j->seen;
		s->cand_fetch_ms = r->seconds * 1e3;
		break;
	case BG_FETCH_UNCHANGED:
	case BG_FETCH_NOT_MODIFIED:
		if (r->outcome == BG_FETCH_NOT_MODIFIED)
			s->not_modified++;
		/* *v came back updated (304, or the same bytes) */
		if (s->cfg->list.url)
			s->v = j->v;
		/* the same bytes: their hash is known now (a copy whose
		 * store row was lost) */
		if (r->outcome == BG_FETCH_UNCHANGED && s->have_copy)
			memcpy(s->sha256, r->sha256, sizeof(s->sha256));
		s->last_ok = s->last_attempt;
		s->failed_in_row = 0;
		s->last_error[0] = 0;
		src_set_state(s, "ok", NULL);
		break;
	default:
		s->failures++;
		s->failed_in_row++;
		snprintf(s->last_error, sizeof(s->last_error), "%s", r->err);
		src_set_state(s, "failing", r->err);
		break;
	}
	/* a crowdsec: pull that failed while decisions ran out: the copy
	 * changes, and the source is failing all the same */
	if (changed && j->cs_err[0]) {
		s->failures++;
		s->failed_in_row++;
		snprintf(s->last_error, sizeof(s->last_error), "%s", j->cs_err);
		src_set_state(s, "failing", j->cs_err);
	}
	/* a watched file keeps the due time an event set while it was
	 * fetched: that change is fetched next */
	if (s->cfg->refresh > 0)
		s->due = agent_mono() +
			 (r->outcome == BG_FETCH_FAILED ?
				  bg_backoff(s->failed_in_row,
					     s->cfg->kind == BG_SRC_FLEET ? FLEET_RETRY_BASE :
					     s->cfg->kind == BG_SRC_CROWDSEC ?
						     fmin(RETRY_BASE, s->cfg->refresh) :
						     RETRY_BASE,
					     fmin(s->cfg->refresh, RETRY_MAX), agent_rnd()) :
				  bg_jitter(s->cfg->refresh, agent_rnd()));
	pthread_mutex_unlock(&a->lock);
	if (changed && j->kind == BG_SRC_FLEET && j->got.rollback_from)
		agent_log("source %s: the store's newest generation %llu is older "
			  "than generation %llu applied here: taken (allow_rollback)",
			  s->cfg->list.name, (unsigned long long)j->got.generation,
			  (unsigned long long)j->got.rollback_from);
	if (changed && j->kind == BG_SRC_FLEET) {
		agent_log("source %s: generation %llu (%s, %llu bytes in %.1f ms)%s%s, "
			  "to be verified and swapped in", s->cfg->list.name,
			  (unsigned long long)j->got.generation,
			  j->got.delta ? "a delta applied to the copy kept" : "whole",
			  (unsigned long long)j->got.bytes, r->seconds * 1e3,
			  j->got.delta_why[0] ? "; the delta not used: " : "",
			  j->got.delta_why);
		want_rebuild(a, 1);
	} else if (changed) {
		agent_log("source %s: new copy (%s in %.1f ms), to be judged by "
			  "the rebuild", s->cfg->list.name,
			  s->cfg->list.url ? "fetched" : "read", r->seconds * 1e3);
		/* after the debounce window when a URL changed (others may
		 * follow), at once when a watched file did (its events were
		 * debounced already) */
		want_rebuild(a, !s->cfg->list.url);
	}
	store_put(a, s);
}

static void start_fetch(struct agent *a, struct src *s)
{
	struct fetch_job *j = calloc(1, sizeof(*j));

	if (j)
		fetch_src_of(&a->cfg, s->cfg, &j->f);
	/* the job's own copies: a reload may free the config meanwhile */
	if (!j || bg_list_desc_dup(&j->f.list, &s->cfg->list)) {
		free(j);
		agent_log("source %s: cannot fetch: out of memory", s->cfg->list.name);
		return;
	}
	j->j.run = fetch_run;
	j->j.done = fetch_done;
	j->kind = s->cfg->kind;
	if (j->kind == BG_SRC_FLEET && a->cfg.fleet.db)
		j->db = strdup(a->cfg.fleet.db);
	j->allow_rollback = a->cfg.fleet.allow_rollback;
	if (j->kind == BG_SRC_CROWDSEC) {
		if (!s->cs || cscfg_dup(&j->cscfg, s->cfg)) {
			bg_list_desc_free(&j->f.list);
			free(j);
			agent_log("source %s: cannot pull: out of memory", s->cfg->list.name);
			return;
		}
		j->cs = s->cs; /* the job's until it is done */
		s->cs = NULL;
	}
	memcpy(j->copy, s->copy, sizeof(j->copy));
	if (s->have_copy)
		memcpy(j->kept_sha, s->sha256, sizeof(j->kept_sha));
	j->f.kept_sha256 = j->kept_sha;
	j->v = s->v;
	j->seen = s->changed_at ? s->changed_at : agent_wall();
	s->changed_at = 0;
	s->due = 0;
	s->phase = SRC_FETCHING;
	work_fetch(a, &j->j);
}

void run_due(struct agent *a, int all)
{
	double now = agent_mono();
	size_t i;

	for (i = 0; i < a->nsrc && !a->stop; i++) {
		struct src *s = &a->src[i];

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
		struct src *s = &a->src[i];

		/* a candidate waiting is what a fetch would bring */
		s->mark = s->phase != SRC_CANDIDATE;
		if (s->phase == SRC_IDLE || s->phase == SRC_IN_REBUILD)
			s->due = agent_mono();
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
				struct src *s = &a->src[i];
				const char *base;

				if (s->wd != e->wd || !s->cfg->list.path)
					continue;
				base = strrchr(s->cfg->list.path, '/');
				base = base ? base + 1 : s->cfg->list.path;
				if (e->len && strcmp(e->name, base))
					continue;
				/* debounced: an editor's several writes are one */
				s->due = agent_mono() + a->cfg.debounce;
				if (!s->changed_at)
					s->changed_at = agent_wall();
			}
			p += sizeof(*e) + e->len;
		}
	}
}

int wanted_desc(const struct agent *a, struct desc *d)
{
	size_t i;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	d->fpr = a->cfg.fpr;
	d->confirm = a->cfg.confirm;
	for (i = 0; i < a->nsrc && !ret; i++) {
		const struct src *s = &a->src[i];
		int cand = s->phase == SRC_CANDIDATE || s->phase == SRC_IN_REBUILD;
		struct desc_list l = { .list = s->cfg->list };

		if (!cand && !s->have_copy)
			continue;
		memcpy(l.sha256, cand ? s->cand_sha : s->sha256, sizeof(l.sha256));
		ret = desc_add(d, &l);
	}
	if (!ret)
		ret = desc_seal(d);
	if (ret)
		desc_free(d);
	return ret;
}

/* ---- setup and reload ---------------------------------------------------- */

/* A source's state from the store and its copy on disk (a restart, or a
 * list added by a reload). */
static void src_restore(struct agent *a, struct src *s)
{
	char url[sizeof(((struct bg_store_source *)0)->url)];
	struct bg_store_source r;
	struct stat st;

	/* a candidate left by a killed agent was never judged */
	bg_fetch_discard(s->copy);
	s->have_copy = stat(s->copy, &st) == 0 && S_ISREG(st.st_mode);
	if (!a->store_ro || bg_store_source_get(a->store_ro, s->cfg->list.name, &r))
		return;
	/* validators only for the same URL: a moved list is fetched anew */
	/* (the store keeps the URL without its password) */
	if (s->cfg->list.url &&
	    !strcmp(r.url, bg_url_redact(s->cfg->list.url, url, sizeof(url)))) {
		snprintf(s->v.etag, sizeof(s->v.etag), "%s", r.etag);
		snprintf(s->v.last_modified, sizeof(s->v.last_modified), "%s",
			 r.last_modified);
	}
	if (s->have_copy) {
		snprintf(s->sha256, sizeof(s->sha256), "%s", r.sha256);
		s->entries = r.entries;
	}
	s->last_ok = r.last_ok;
	s->fetches = r.fetches;
	s->failures = r.failures;
	s->not_modified = r.not_modified;
}

static void watch(struct agent *a, struct src *s)
{
	char d[PATH_MAX], *slash;

	snprintf(d, sizeof(d), "%s", s->cfg->list.path);
	slash = strrchr(d, '/');
	if (slash)
		*(slash == d ? slash + 1 : slash) = 0;
	s->wd = inotify_add_watch(a->infd, d,
				  IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE |
				  IN_DELETE | IN_MOVED_FROM | IN_ATTRIB);
	if (s->wd < 0)
		agent_log("source %s: cannot watch %s: %s", s->cfg->list.name, d,
			  strerror(errno));
}

int setup_sources(struct agent *a, const struct src *old, size_t nold)
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
		struct src *s = &a->src[i];

		s->cfg = &a->cfg.lists[i];
		s->wd = -1;
		if (snprintf(s->copy, sizeof(s->copy), "%s/%s.list", dir,
			     s->cfg->list.name) >= (int)sizeof(s->copy))
			return -ENAMETOOLONG;
		for (j = 0; j < nold; j++) {
			if (strcmp(old[j].cfg->list.name, s->cfg->list.name))
				continue;
			/* a reload keeps what it knew of a source */
			*s = old[j];
			/* a moved list is fetched anew, without validators */
			if ((s->cfg->list.url || old[j].cfg->list.url) &&
			    (!s->cfg->list.url || !old[j].cfg->list.url ||
			     strcmp(s->cfg->list.url, old[j].cfg->list.url)))
				memset(&s->v, 0, sizeof(s->v));
			s->cfg = &a->cfg.lists[i];
			s->wd = -1;
			/* a reload tries again what was refused */
			s->refused_sha[0] = 0;
			break;
		}
		if (j == nold)
			src_restore(a, s);
		/* a crowdsec: source's decisions: kept across a reload (in a
		 * fetch job meanwhile: given back when it is done), none for
		 * another kind */
		if (s->cfg->kind != BG_SRC_CROWDSEC && s->cs) {
			bg_cs_state_free(s->cs);
			free(s->cs);
			s->cs = NULL;
		}
		if (s->cfg->kind == BG_SRC_CROWDSEC && !s->cs &&
		    s->phase != SRC_FETCHING && !(s->cs = calloc(1, sizeof(*s->cs))))
			return -ENOMEM;
		if (s->cfg->list.path && a->infd >= 0)
			watch(a, s);
	}
	return 0;
}

int reload_config(struct agent *a, char *err, size_t errlen)
{
	struct bg_config cfg, prev;
	struct src *old = a->src;
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
		if (k == cfg.n_lists) {
			forget_list(a, old[i].cfg->list.name, old[i].copy);
			if (old[i].cs) {
				bg_cs_state_free(old[i].cs);
				free(old[i].cs);
				old[i].cs = NULL;
			}
		}
		if (old[i].wd >= 0)
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
	fleet_setup(a);
	return 0;
}
