// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What follows the live filter (user/agent/agent_priv.h): the store's
 * provenance indexes (a rebuild's writer committed, or the copies
 * re-indexed, on the store's thread), and, at the start, the adoption of
 * a pinned filter that is built from what the agent would build now
 * (filter.json, saved beside it by every rebuild).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agent/agent_priv.h"
#include "agent/provenance.h"
#include "agent/rebuild.h"
#include "core/clock.h"
#include "core/sha.h"
#include "kern/pins.h"
#include "kern/swap.h"

struct sync_job {
	struct job j;
	struct bg_prov_writer *pw; /* a rebuild's writer, to commit; or */
	struct bg_prov_source *v; /* every list with a copy, to re-index */
	size_t n;
	char **names; /* every configured list: the store keeps these */
	size_t nnames;
	uint64_t max_list_bytes;
	int timed;
	struct rb_timing timing;
};

static void sync_run(struct agent *a, struct job *jj)
{
	struct sync_job *j = (struct sync_job *)jj;
	double t = bg_mono_ms();
	int ret = 0;

	/* a stopping agent leaves the indexes as they are: the next start
	 * verifies them and writes what is missing */
	if (__atomic_load_n(&a->work.quit, __ATOMIC_RELAXED)) {
		bg_prov_abort(j->pw);
		j->pw = NULL;
		return;
	}
	if (j->pw)
		ret = bg_prov_commit(j->pw, a->store);
	else if (j->n && a->store)
		ret = bg_prov_reindex(a->store, j->v, j->n, j->max_list_bytes);
	j->pw = NULL;
	if (ret < 0)
		agent_log("provenance index: %s: check may not name some entries",
			  strerror(-ret));
	/* a list removed from the config goes, with its index, now that a
	 * filter without it is live */
	if (a->store &&
	    bg_store_prune(a->store, (const char **)j->names, j->nnames) < 0)
		agent_log("cannot remove the lists gone from the config from the store");
	if (j->timed)
		/* one line for the bench (bench/agent.sh): the change's way to
		 * the datapath, stage by stage, and the store after it */
		agent_log("timing: change seen at %.6f, fetch %.1f ms, parse %.1f ms, "
			  "plan %.1f ms, build %.1f ms, swap %.2f ms, live at %.6f, "
			  "store %.1f ms", j->timing.seen, j->timing.fetch,
			  j->timing.parse, j->timing.plan, j->timing.build,
			  j->timing.swap, j->timing.live_at, bg_mono_ms() - t);
}

static void sync_done(struct agent *a, struct job *jj)
{
	struct sync_job *j = (struct sync_job *)jj;
	size_t i;

	(void)a;
	bg_prov_abort(j->pw);
	for (i = 0; i < j->n; i++) {
		bg_list_desc_free(&j->v[i].list);
		free((char *)j->v[i].copy);
		free((char *)j->v[i].sha256);
	}
	for (i = 0; i < j->nnames; i++)
		free(j->names[i]);
	free(j->v);
	free(j->names);
}

static char *dup_or_null(const char *s)
{
	return s && s[0] ? strdup(s) : NULL;
}

void sync_store_entries(struct agent *a, const struct rb_timing *timing,
			struct bg_prov_writer *pw)
{
	struct sync_job *j = calloc(1, sizeof(*j));
	size_t i;

	if (!j || !(j->v = calloc(a->nsrc ? a->nsrc : 1, sizeof(*j->v))) ||
	    !(j->names = calloc(a->nsrc ? a->nsrc : 1, sizeof(*j->names)))) {
		if (j)
			free(j->v);
		free(j);
		bg_prov_abort(pw);
		agent_log("cannot update the store: out of memory");
		return;
	}
	j->j.run = sync_run;
	j->j.done = sync_done;
	j->pw = pw;
	j->max_list_bytes = a->cfg.max_list_bytes;
	if (timing) {
		j->timed = 1;
		j->timing = *timing;
	}
	for (i = 0; i < a->nsrc; i++) {
		const struct source *s = &a->src[i];
		struct bg_prov_source *r = &j->v[j->n];

		if ((j->names[j->nnames] = strdup(s->cfg->list.name)))
			j->nnames++;
		/* a rebuild's writer knows its lists; else every copy is
		 * re-indexed where its index is missing or of another copy
		 * (an artifact has its own index, in it) */
		if (pw || !s->have_copy || s->ops->built)
			continue;
		/* the job's own copies: a reload may free the config */
		if (bg_list_desc_dup(&r->list, &s->cfg->list))
			continue;
		r->copy = strdup(s->copy);
		r->sha256 = dup_or_null(s->rec.sha256);
		j->n++;
		if (!r->copy) {
			/* freed by sync_done() only when counted */
			bg_list_desc_free(&r->list);
			free((char *)r->sha256);
			r->sha256 = NULL;
			j->n--;
		}
	}
	if (!a->store) {
		sync_done(a, &j->j);
		free(j);
		return;
	}
	work_store(a, &j->j);
}

int adopt(struct agent *a)
{
	char path[PATH_MAX];
	struct json_object *o, *id, *f, *g, *d;
	struct desc want;
	struct bg_state st;
	uint32_t live = 0;
	int ok = 0;

	snprintf(path, sizeof(path), "%s/filter.json", a->cfg.state_dir);
	o = json_object_from_file(path);
	if (!o)
		return 0;
	if (!bg_state_open(&st, 0)) {
		live = bg_filter_current_id(st.filters_fd);
		bg_state_close(&st);
	}
	/* Only a filter of this build's layout: after an upgrade to another
	 * ABI it is rebuilt, never adopted. The ABI is the one saved with it
	 * (reading the live map itself would need CAP_SYS_ADMIN, which the
	 * agent's unit does not grant). */
	if (!json_object_object_get_ex(o, "abi", &g) ||
	    json_object_get_int(g) != BG_ABI_VERSION ||
	    !json_object_object_get_ex(o, "filter_id", &id) || !live ||
	    (uint32_t)json_object_get_int64(id) != live) {
		json_object_put(o);
		return 0;
	}
	/* the live filter's description, for what a reload says changed */
	if (json_object_object_get_ex(o, "description", &d) &&
	    json_object_object_get_ex(o, "fingerprint", &f) &&
	    !desc_from_json(d, &a->live)) {
		snprintf(a->live.fp, sizeof(a->live.fp), "%s", json_object_get_string(f));
		a->have_live = 1;
	}
	if (a->have_live && !wanted_desc(a, &want)) {
		ok = !strcmp(want.fp, a->live.fp);
		desc_free(&want);
	}
	if (ok) {
		pthread_mutex_lock(&a->lock);
		if (json_object_object_get_ex(o, "generation", &g))
			a->generation = (uint64_t)json_object_get_int64(g);
		a->filter_id = live;
		/* what metrics say of it, as it was built */
		a->have_filter = 1;
		a->filter.generation = a->generation;
		if (json_object_object_get_ex(o, "keys", &g))
			a->filter.keys = (uint64_t)json_object_get_int64(g);
		if (json_object_object_get_ex(o, "bytes", &g))
			a->filter.bytes = (uint64_t)json_object_get_int64(g);
		if (json_object_object_get_ex(o, "bits_per_key", &g))
			a->filter.bits_per_key = json_object_get_double(g);
		if (json_object_object_get_ex(o, "predicted_fpr", &g))
			a->filter.predicted_fpr = json_object_get_double(g);
		if (json_object_object_get_ex(o, "artifact_generation", &g)) {
			const char *h;

			a->art_live = 1;
			a->art_generation = (uint64_t)json_object_get_int64(g);
			if (json_object_object_get_ex(o, "artifact_applied_at", &g))
				a->art_applied_at = json_object_get_double(g);
			if (json_object_object_get_ex(o, "artifact_sha256", &g) &&
			    (h = json_object_get_string(g)) && strlen(h) == 64 &&
			    bg_unhex(h, sizeof(a->art_digest), a->art_digest))
				memset(a->art_digest, 0, sizeof(a->art_digest));
		}
		pthread_mutex_unlock(&a->lock);
		agent_log("the live filter is built from these copies: adopted "
			  "(generation %llu)", (unsigned long long)a->generation);
		sync_store_entries(a, NULL, NULL);
	}
	json_object_put(o);
	return ok;
}
