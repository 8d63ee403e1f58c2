// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's rebuilds (user/agent/rebuild.h): the job the main worker
 * runs, and what the loop makes of it.
 *
 * A rebuild parses every good copy, and each new copy (a candidate) in
 * the same parse: that parse is the one that checks it, line by line
 * (every line it rejects is logged with its file:line and reason, the
 * first few of each copy, and counted) and as a whole (its driver's
 * judge: the rules of a good copy, on the parse's count of that list), so
 * a changed list is parsed once for the filter. A refused candidate is
 * thrown away and the load runs again with the last good copy in its
 * place (bg_load_opts.source_done stops the load at it). Then the build
 * and swap (bg_load_commit(), under the pin directory's lock) and the
 * filter's description saved beside it (filter.json), on the main worker;
 * then the store's entries, on the store's thread (live.c). A source whose
 * copy is a built filter is applied by its driver (ops->apply), and a
 * source whose driver patches the live filter in place (ops->patch) goes
 * live that way when its change is the only one. The loop only hands the
 * jobs over and applies the results.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <systemd/sd-daemon.h>

#include "agent/agent_priv.h"
#include "agent/protect.h"
#include "agent/provenance.h"
#include "agent/rebuild.h"
#include "core/clock.h"
#include "core/print.h"
#include "core/record.h"
#include "core/url.h"
#include "kern/load.h"
#include "kern/pins.h"
#include "kern/swap.h"

/* ---- what the parse finds ------------------------------------------------ */

struct parse_ctx {
	struct rb_job *j;
	const struct bg_sources *srcs;
	size_t *map; /* index in the load's sources -> in j->v */
	size_t last; /* the load's source of the last diagnostic */
};

/* The job's source a diagnostic is of: the load's source whose path is
 * its file (the last one's, mostly: they come in file order). */
static struct rb_src *diag_source(struct parse_ctx *c, const char *file)
{
	size_t k;

	if (c->last < c->srcs->n && !strcmp(c->srcs->v[c->last].path, file))
		return &c->j->v[c->map[c->last]];
	for (k = 0; k < c->srcs->n; k++)
		if (!strcmp(c->srcs->v[k].path, file)) {
			c->last = k;
			return &c->j->v[c->map[k]];
		}
	return NULL;
}

/* Every line the parse rejects: logged when it is a new copy's (the copy
 * in use was logged when it was new), as the list's origin and line.
 * Called on the parse's threads, one diagnostic at a time. */
static void on_diag(void *ctx, const struct bg_diag *d)
{
	struct rb_src *s = diag_source(ctx, d->file);
	char where[1100], origin[1024];

	if (!s || d->warning || !s->cand || s->logged || s->verdict)
		return;
	bg_url_redact(bg_list_origin(&s->list), origin, sizeof(origin));
	if (d->line)
		snprintf(where, sizeof(where), "%s:%zu", origin, d->line);
	else
		snprintf(where, sizeof(where), "%s", origin);
	src_refused_log(&s->log, where, d->reason, d->text);
}

/* After each list's parse: its counts, and a candidate judged by them. */
static int judge(void *ctx, size_t i, const struct bg_source_info *in)
{
	struct parse_ctx *c = ctx;
	struct rb_src *s = &c->j->v[c->map[i]];

	if (s->cand && !s->logged) {
		src_refused_end(&s->log);
		s->logged = 1;
	}
	s->entries = in->entries;
	s->rejected = in->rejected;
	s->counted = 1;
	if (!s->cand || s->verdict || !s->ops->judge)
		return 0;
	if (s->ops->judge(&(struct bg_cfg_list){ .list = s->list,
						 .max_shrink = s->max_shrink },
			  in->entries, in->rejected, s->prev_entries, s->why,
			  sizeof(s->why))) {
		s->verdict = -1;
		return 1;
	}
	return 0;
}

/* The list of the load's source k, for the protected set's lines. */
static const struct bg_list_desc *job_list(void *ctx, size_t k, int *cs)
{
	struct parse_ctx *c = ctx;
	const struct rb_src *s = &c->j->v[c->map[k]];

	*cs = s->ops->decisions;
	return &s->list;
}

/* ---- what the job shares with the drivers --------------------------------- */

void rb_save_filter(const struct rb_job *j, uint32_t id)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	struct json_object *o = json_object_new_object(), *d = desc_json(&j->built);

	if (!o || !d) {
		json_object_put(o);
		json_object_put(d);
		agent_log("cannot save the filter's description: out of memory");
		return;
	}
	json_object_object_add(o, "abi", json_object_new_int(BG_ABI_VERSION));
	json_object_object_add(o, "filter_id", json_object_new_int64(id));
	json_object_object_add(o, "fingerprint", json_object_new_string(j->built.fp));
	json_object_object_add(o, "description", d);
	json_object_object_add(o, "generation", json_object_new_int64((int64_t)j->generation));
	json_object_object_add(o, "keys", json_object_new_int64((int64_t)j->filter.keys));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)j->filter.bytes));
	json_object_object_add(o, "bits_per_key", json_object_new_double(j->filter.bits_per_key));
	json_object_object_add(o, "predicted_fpr", json_object_new_double(j->filter.predicted_fpr));
	if (j->artifact) {
		char hex[65];

		bg_sha_hex(j->art_sha, hex);
		json_object_object_add(o, "artifact_generation",
				       json_object_new_int64((int64_t)j->art.generation));
		json_object_object_add(o, "artifact_sha256", json_object_new_string(hex));
		json_object_object_add(o, "artifact_applied_at",
				       json_object_new_double(j->timing.live_at));
	}
	snprintf(path, sizeof(path), "%s/filter.json", j->state_dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (json_object_to_file_ext(tmp, o, JSON_C_TO_STRING_PLAIN) == 0)
		rename(tmp, path);
	json_object_put(o);
}

void rb_published(struct rb_job *j, const struct bg_load_report *r)
{
	j->published = 1;
	j->filter_id = r->filter_id;
	j->filter.keys = r->plan.n;
	j->filter.bytes = r->plan.bytes;
	j->filter.bits_per_key = r->plan.bits_per_entry;
	/* the rate of wrong verdicts: after the exact stage when there is one
	 * (predicted_confirmed == predicted_addr without) */
	j->filter.predicted_fpr = r->plan.predicted_confirmed;
	j->filter.generation = j->generation;
	j->filter.build_seconds = (r->ms[BG_STAGE_PARSE] + r->ms[BG_STAGE_PLAN] +
				   r->ms[BG_STAGE_BUILD]) / 1e3;
	j->filter.swap_seconds = r->ms[BG_STAGE_PUBLISH] / 1e3;
}

void rb_timed(struct rb_job *j, const struct bg_load_report *r)
{
	/* live since the swap, before the description is saved */
	j->timing.live_at = bg_wall();
	rb_save_filter(j, r->filter_id);
	j->timing.parse = r->ms[BG_STAGE_PARSE];
	j->timing.plan = r->ms[BG_STAGE_PLAN];
	j->timing.build = r->ms[BG_STAGE_BUILD];
	j->timing.swap = r->ms[BG_STAGE_PUBLISH];
	j->timing.seen = j->change_seen;
	j->timing.fetch = j->fetch_ms;
}

/* What a failed rebuild leaves running, said at the failure: none of
 * this agent's yet, none at all (detached meanwhile: `detach --all`
 * removes the pins), or the filter that runs. */
const char *rb_unchanged(const struct rb_job *j)
{
	struct bg_state st;
	__u32 live = 0;

	if (j->none_live)
		return "no filter of this agent's runs yet";
	if (!bg_state_open(&st, 0)) {
		live = bg_filter_current_id(st.filters_fd);
		bg_state_close(&st);
	}
	return live ? "the running filter is unchanged" :
		      "no filter runs (nothing is attached)";
}

int rb_describe(struct rb_job *j)
{
	size_t i;
	int ret = 0;

	desc_free(&j->built);
	j->built.fpr = j->fpr;
	j->built.confirm = j->confirm;
	for (i = 0; !ret && i < j->n; i++) {
		struct rb_src *s = &j->v[i];
		struct desc_list l = { .list = s->list };

		if (s->verdict == 1)
			memcpy(l.sha256, s->cand_sha, sizeof(l.sha256));
		else if (s->have_copy)
			memcpy(l.sha256, s->sha, sizeof(l.sha256));
		else
			continue;
		ret = desc_add(&j->built, &l);
	}
	if (!ret)
		ret = desc_seal(&j->built);
	if (ret)
		desc_free(&j->built);
	return ret;
}

int rb_copies(const struct rb_job *j, struct bg_sources *srcs, long skip)
{
	size_t i;

	bg_sources_init(srcs);
	for (i = 0; i < j->n; i++)
		if (j->v[i].have_copy && (long)i != skip &&
		    bg_sources_add_list(srcs, j->v[i].copy, &j->v[i].list))
			return -ENOMEM;
	return 0;
}

/* ---- the rebuild job ----------------------------------------------------- */

/* The load's sources from the job: a candidate in place of the copy
 * unless it was refused; map[k]: the job's source of the load's k. */
static int job_sources(struct rb_job *j, struct bg_sources *srcs, size_t *map)
{
	char cand[PATH_MAX + 8];
	size_t i;

	bg_sources_init(srcs);
	for (i = 0; i < j->n; i++) {
		struct rb_src *s = &j->v[i];
		int use_cand = s->cand && s->verdict >= 0;

		if (!use_cand && !s->have_copy)
			continue;
		if (bg_fetch_candidate(s->copy, cand, sizeof(cand)))
			return -ENAMETOOLONG;
		/* read as configured (the format detected per copy when
		 * absent); the file parsed is the copy, not the origin */
		if (bg_sources_add_list(srcs, use_cand ? cand : s->copy, &s->list))
			return -ENOMEM;
		map[srcs->n - 1] = i;
	}
	return 0;
}

/* The provenance writer of one attempt of the load: its sources in the
 * load's order (as bg_entry_ref.source counts them), each with the path
 * its copy will have (a candidate is renamed there once judged good) and
 * the file the parse reads now. */
static int prov_begin(struct rb_job *j, const struct bg_sources *srcs,
		      const size_t *map)
{
	struct bg_prov_source *pv = calloc(srcs->n, sizeof(*pv));
	size_t k;
	int ret;

	if (!pv)
		return -ENOMEM;
	for (k = 0; k < srcs->n; k++) {
		const struct rb_src *s = &j->v[map[k]];
		int cand = strcmp(srcs->v[k].path, s->copy) != 0;
		const char *sha = cand ? s->cand_sha : s->sha;

		pv[k] = (struct bg_prov_source){
			.list = s->list, .copy = s->copy,
			.parsed = srcs->v[k].path, .sha256 = sha[0] ? sha : NULL,
		};
	}
	ret = bg_prov_begin(j->state_dir, pv, srcs->n, &j->pw);
	free(pv);
	if (ret) {
		j->pw = NULL;
		agent_log("provenance index: cannot start its writer (%s): check "
			  "will not name this rebuild's new entries", strerror(-ret));
	}
	return ret;
}

/*
 * The parse of every copy and candidate, until it holds no refused
 * candidate: each refused one is thrown away and the load runs again with
 * the last good copy in its place. 0 with bl the blocklist and srcs the
 * sources it is of; -ENODATA (nothing to build: j->nothing), or -errno
 * with r's msg.
 */
static int rb_parse(struct rb_job *j, struct bg_load_opts *o, size_t *map,
		    struct bg_sources *srcs, struct bg_blocklist *bl,
		    struct bg_load_report *r)
{
	struct parse_ctx pc = { .j = j, .srcs = srcs, .map = map };
	size_t i, k;
	int ret;

	o->diag = on_diag;
	o->diag_ctx = &pc;
	o->source_done = judge;
	o->source_ctx = &pc;
	for (;;) {
		bg_sources_free(srcs);
		bg_load_report_free(r);
		ret = job_sources(j, srcs, map);
		if (ret) {
			snprintf(r->msg, sizeof(r->msg), "%s", strerror(-ret));
			return ret;
		}
		/* the index of each list from this very parse (a writer per
		 * attempt: a refused candidate's entries are not indexed) */
		bg_prov_abort(j->pw);
		j->pw = NULL;
		o->entry = NULL;
		o->entry_ctx = NULL;
		if (srcs->n && !prov_begin(j, srcs, map)) {
			o->entry = bg_prov_entry;
			o->entry_ctx = j->pw;
		}
		if (bg_sources_done(srcs)) {
			agent_log("no block list has a good copy yet: %s", rb_unchanged(j));
			j->nothing = 1;
			return -ENODATA;
		}
		o->sources = srcs;
		/* the lists parsed before the lock, as `load` does: a CLI
		 * command waits for the agent's build and swap, never for
		 * its parse */
		ret = bg_load_prepare(o, bl, r);
		k = r->failed_source;
		if (ret && r->failed == BG_STAGE_PARSE && k < srcs->n &&
		    j->v[map[k]].cand && j->v[map[k]].verdict >= 0) {
			/* a new copy that cannot be read or pushes the lists
			 * past a bound: refused as a bad copy is */
			j->v[map[k]].verdict = -1;
			snprintf(j->v[map[k]].why, sizeof(j->v[map[k]].why), "%.200s",
				 r->msg);
		}
		if (!ret || k >= srcs->n || j->v[map[k]].verdict >= 0)
			return ret;
		/* again with the last good copy in its place */
		bg_blocklist_free(bl);
		bg_fetch_discard(j->v[map[k]].copy);
		agent_log("source %s: new copy refused: %s; the last good copy is "
			  "used", j->v[map[k]].list.name, j->v[map[k]].why);
		for (i = 0; i < j->n; i++)
			j->v[i].counted = 0;
	}
}

/* Each candidate parsed is good: it becomes the last good copy whatever
 * the build does (the next rebuild starts from it), and the record names
 * the copy, as check re-reads it. 0 or -ENOMEM. */
static int rb_keep(struct rb_job *j, const size_t *map, struct bg_sources *srcs)
{
	size_t i;

	for (i = 0; i < srcs->n; i++) {
		struct rb_src *s = &j->v[map[i]];
		int err;

		if (!s->cand || s->verdict)
			continue;
		err = bg_fetch_keep(s->copy);
		if (err) {
			snprintf(s->why, sizeof(s->why), "keeping the copy: %s",
				 strerror(-err));
			s->verdict = -1;
			agent_log("source %s: %s", s->list.name, s->why);
			continue;
		}
		s->verdict = 1;
		free(srcs->v[i].path);
		srcs->v[i].path = strdup(s->copy);
		if (!srcs->v[i].path)
			return -ENOMEM;
	}
	return 0;
}

/* The build and swap of bl under the pin directory's lock: 0, or -errno
 * with r's msg. */
static int rb_commit(struct rb_job *j, struct bg_load_opts *o,
		     struct bg_blocklist *bl, struct bg_load_report *r)
{
	struct bg_state st;
	int ret;

	clean_gone();
	ret = bg_state_open(&st, 1);
	if (ret) {
		snprintf(r->msg, sizeof(r->msg),
			 "cannot open the pinned state in %s: %s (is bloomgate attached?)",
			 bg_pin_dir(), strerror(-ret));
		r->failed = BG_STAGE_BUILD;
		return ret;
	}
	ret = bg_load_commit(&st, o, bl, r);
	bg_state_close(&st);
	j->seed = r->seed;
	return ret;
}

static void rb_live_log(const struct rb_job *j, const struct bg_load_report *r)
{
	agent_log("filter %llu live: %llu keys, %zu bytes, %.2f bits/key, "
		  "built in %.0f ms, swapped in %.1f ms",
		  (unsigned long long)j->generation, (unsigned long long)r->plan.n,
		  r->plan.bytes, r->plan.bits_per_entry, j->filter.build_seconds * 1e3,
		  r->ms[BG_STAGE_PUBLISH]);
	if (r->reshaped && r->grown)
		agent_log("the %scapacity is now %u elements (%llu keys): new "
			  "programs swapped in", r->reshaped == 2 ? "growing " : "",
			  r->grown, (unsigned long long)bg_filter_capacity_keys(r->grown));
	else if (r->reshaped)
		agent_log("the capacity is now any size: new programs swapped in");
	/* live, but `check` cannot name its entries: say so */
	if (r->failed == BG_STAGE_RECORD)
		agent_log("the load record was not written: %s", r->msg);
}

/* The one candidate of the job when its driver patches in place: its
 * index, else -1. */
static long patch_candidate(const struct rb_job *j)
{
	long at = -1;
	size_t i;

	for (i = 0; i < j->n; i++)
		if (j->v[i].cand) {
			if (at >= 0 || !j->v[i].ops->patch)
				return -1;
			at = (long)i;
		}
	return at;
}

static void rb_run(struct agent *a, struct job *jj)
{
	struct rb_job *j = (struct rb_job *)jj;
	struct bg_load_opts o = { .fpr = j->fpr, .confirm_off = !j->confirm,
				  .max_list_bytes = j->max_list_bytes,
				  .max_entries = j->max_entries,
				  .allow_empty = j->allow_empty, .reshape = j->reshape,
				  .reshape_cap = j->reshape_cap,
				  .reshape_grow = j->reshape_grow };
	size_t *map = calloc(j->n ? j->n : 1, sizeof(*map)), i;
	struct bg_premap pm = BG_PREMAP_INIT;
	struct bg_load_report r;
	struct bg_blocklist bl;
	struct bg_sources srcs;
	long at = patch_candidate(j);
	int ret;

	/* the set this filter is judged against, made live with it */
	ret = agent_protect_gather(j->protect, j->n_protect, &j->ps, j->msg,
				   sizeof(j->msg));
	if (ret) {
		agent_log("rebuild failed: %s; %s", j->msg, rb_unchanged(j));
		j->ret = ret;
		free(map);
		return;
	}
	if (j->n == 1 && j->v[0].ops->apply) {
		free(map);
		j->v[0].ops->apply(j);
		return;
	}
	if (!j->reshape && at >= 0 && !j->v[at].ops->patch(a, j, (size_t)at)) {
		free(map);
		return;
	}
	o.protect = j->ps;
	/* the full rebuild: the state of small changes made anew after it */
	incr_free(a->incr);
	a->incr = NULL;
	bg_load_report_init(&r);
	bg_sources_init(&srcs);
	bg_blocklist_init(&bl);
	if (!map) {
		j->ret = -ENOMEM;
		snprintf(j->msg, sizeof(j->msg), "out of memory");
		return;
	}
	/* the filter map made while the keys are sorted (kern/load.h): the
	 * hook runs only for a parse that succeeded, once a rebuild */
	o.parsed = bg_premap_parsed;
	o.parsed_ctx = &pm;
	ret = rb_parse(j, &o, map, &srcs, &bl, &r);
	/* what was detected, as `load` prints it: the copy's path names it */
	for (i = 0; !ret && i < r.n_detected; i++) {
		char line[PATH_MAX + 256];

		bg_fmt_detected(line, sizeof(line), &r.detected[i]);
		agent_log("%s", line);
	}
	if (!ret && (ret = rb_keep(j, map, &srcs)))
		snprintf(r.msg, sizeof(r.msg), "out of memory");
	if (!ret)
		ret = rb_describe(j);
	if (!ret && j->live_fp[0] && !strcmp(j->live_fp, j->built.fp)) {
		/* every new copy was refused: the live filter is this one */
	} else if (!ret) {
		ret = rb_commit(j, &o, &bl, &r);
		if (ret) {
			agent_log("rebuild failed (%s): %s; %s",
				  bg_load_stage_name(r.failed), r.msg, rb_unchanged(j));
			snprintf(j->msg, sizeof(j->msg), "rebuild failed (%s): %s",
				 bg_load_stage_name(r.failed), r.msg);
		} else {
			struct parse_ctx pc = { .j = j, .map = map };

			rb_published(j, &r);
			rb_live_log(j, &r);
			/* entries over the protected set, each with its list and line */
			agent_protect_say(NULL, &r.covers, job_list, &pc);
			rb_timed(j, &r);
		}
	}
	bg_blocklist_free(&bl);
	bg_premap_drop(&pm);
	if (!j->published) {
		/* not live: the indexes stay those of the live filter's copies */
		bg_prov_abort(j->pw);
		j->pw = NULL;
	}
	j->ret = ret;
	if (ret && !j->msg[0])
		snprintf(j->msg, sizeof(j->msg), "%s", j->nothing ?
			 "no block list has a good copy yet" : r.msg[0] ? r.msg :
			 strerror(-ret));
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
	free(map);
}

/* A job's source back in the agent's (a->lock held): a candidate kept
 * becomes the last good copy, one refused is remembered with why. */
static void rb_source_done(struct agent *a, struct rb_src *r)
{
	struct source *s = src_find(a, r->list.name);

	if (!s || s->ops != r->ops)
		return; /* removed by a reload meanwhile (rb_done frees its loan) */
	if (r->ops->take_back)
		r->ops->take_back(s, (struct rb_src *)r);
	if (!r->cand || s->phase != SRC_IN_REBUILD || strcmp(s->cand_sha, r->cand_sha)) {
		if (r->counted && r->have_copy && !strcmp(s->rec.sha256, r->sha)) {
			s->rec.entries = r->entries;
			s->rec.rejected = r->rejected;
		}
		return;
	}
	s->phase = SRC_IDLE;
	if (r->verdict == 1) {
		memcpy(s->rec.sha256, r->cand_sha, sizeof(s->rec.sha256));
		s->have_copy = 1;
		if (s->cfg->list.url)
			s->rec.v = s->cand_v;
		s->rec.entries = r->entries;
		s->rec.rejected = r->rejected;
		src_ok(s);
		if (r->rejected)
			agent_log("source %s: new copy, %llu entries, %llu rejected lines",
				  s->cfg->list.name, (unsigned long long)r->entries,
				  (unsigned long long)r->rejected);
		else
			agent_log("source %s: new copy, %llu entries", s->cfg->list.name,
				  (unsigned long long)r->entries);
	} else if (r->verdict < 0) {
		memcpy(s->refused_sha, r->cand_sha, sizeof(s->refused_sha));
		snprintf(s->refused_why, sizeof(s->refused_why), "%s", r->why);
		src_failed(s, r->why);
		if (s->ops->refused)
			s->ops->refused(a, s);
		if (s->cfg->refresh > 0 && !s->due)
			s->due = src_retry_at(s);
	} else {
		/* not reached by a load that failed before it: the next
		 * rebuild judges it */
		s->phase = SRC_CANDIDATE;
	}
}

/* What the agent says of its live filter after the job (a->lock held). */
static void rb_agent_done(struct agent *a, const struct rb_job *j)
{
	if (!j->nothing)
		a->rebuilds++;
	if (j->ret && !j->nothing)
		a->rebuild_failures++;
	if (j->published) {
		a->generation = j->generation;
		a->filter = j->filter;
		a->have_filter = 1;
		a->filter_id = j->filter_id;
		a->art_live = j->artifact;
		if (j->artifact) {
			a->art_generation = j->art.generation;
			memcpy(a->art_digest, j->art_sha, sizeof(a->art_digest));
			a->art_applied_at = j->timing.live_at;
		}
	}
	if (j->kept_live && !a->filter_id) {
		struct bg_filter_params p;

		bg_art_plan_params(&j->art.plan, &p);
		a->filter_id = j->filter_id;
		a->art_live = 1;
		a->art_generation = j->art.generation;
		memcpy(a->art_digest, j->art_sha, sizeof(a->art_digest));
		a->have_filter = 1;
		a->filter.keys = p.n;
		a->filter.bytes = p.bytes;
		a->filter.bits_per_key = p.bits_per_entry;
		a->filter.predicted_fpr = p.predicted_confirmed;
		a->filter.generation = a->generation;
	}
	if (j->ret && !j->nothing)
		snprintf(a->last_error, sizeof(a->last_error), "%s", j->msg);
	else if (j->published)
		a->last_error[0] = 0;
}

static void rb_done(struct agent *a, struct job *jj)
{
	struct rb_job *j = (struct rb_job *)jj;
	size_t i;

	a->rebuilding = 0;
	a->rb_done = j->seq;
	/* the shape asked for is live (a later change asks again) */
	if (j->reshape && j->published && a->reshape_cap == j->reshape_cap &&
	    a->reshape_grow == j->reshape_grow)
		a->reshape = 0;
	pthread_mutex_lock(&a->lock);
	for (i = 0; i < j->n; i++)
		rb_source_done(a, &j->v[i]);
	rb_agent_done(a, j);
	pthread_mutex_unlock(&a->lock);
	/* a full rebuild: a source that patches keeps it for its next change */
	for (i = 0; j->published && !j->fast && i < j->n; i++)
		if (j->v[i].ops->rebuilt)
			j->v[i].ops->rebuilt(a, j);
	if (!j->ret && (j->published || !a->have_live)) {
		desc_free(&a->live);
		a->live = j->built;
		memset(&j->built, 0, sizeof(j->built));
		a->have_live = 1;
	}
	/* the store follows, on its own thread: the next rebuild need not
	 * wait for the index of millions of entries. The indexes first, then
	 * the rows with the copies' new hashes: a kill between the two leaves
	 * rows that no index matches yet, which check reports and the next
	 * start writes again, never a row that trusts an index of another
	 * copy. */
	if (j->published || !j->ret)
		sync_store_entries(a, j->published ? &j->timing : NULL, j->pw);
	else
		bg_prov_abort(j->pw);
	j->pw = NULL;
	for (i = 0; i < j->n; i++) {
		struct source *s = src_find(a, j->v[i].list.name);

		if (s && j->v[i].cand)
			store_put(a, s);
		/* a loan not taken back: its source is gone */
		if (j->v[i].lent)
			j->v[i].ops->take_back(NULL, &j->v[i]);
		bg_list_desc_free(&j->v[i].list);
	}
	reloads_answer(a, j->seq, j->ret ? j->msg : NULL);
	for (i = 0; !j->nothing && i < a->nsrc; i++)
		if (a->src[i].ops->live_changed)
			a->src[i].ops->live_changed(a, &a->src[i]);
	sd_notifyf(0, "STATUS=generation %llu, %zu sources",
		   (unsigned long long)a->generation, a->nsrc);
	desc_free(&j->built);
	free(j->v);
	free(j->state_dir);
	free(j->protect);
	free(j->ps);
}

/* The job's copy of a source (a candidate taken for it: in rebuild now);
 * 0, or -ENOMEM (the source left out). */
static int rb_take(struct rb_job *j, struct source *s)
{
	struct rb_src *r = &j->v[j->n];

	if (bg_list_desc_dup(&r->list, &s->cfg->list))
		return -ENOMEM;
	r->ops = s->ops;
	r->max_shrink = s->cfg->max_shrink;
	r->log.source = s->cfg->list.name;
	j->allow_empty |= r->ops->may_be_empty;
	memcpy(r->copy, s->copy, sizeof(r->copy));
	memcpy(r->sha, s->rec.sha256, sizeof(r->sha));
	r->have_copy = s->have_copy;
	r->prev_entries = s->have_copy ? s->rec.entries : 0;
	if (s->phase == SRC_CANDIDATE) {
		r->cand = 1;
		memcpy(r->cand_sha, s->cand_sha, sizeof(r->cand_sha));
		s->phase = SRC_IN_REBUILD;
		if (!j->change_seen || s->cand_seen < j->change_seen)
			j->change_seen = s->cand_seen;
		j->fetch_ms += s->cand_fetch_ms;
	}
	if (s->ops->lend)
		s->ops->lend(s, r);
	j->n++;
	return 0;
}

static void start_rebuild(struct agent *a, int foreign)
{
	struct rb_job *j = calloc(1, sizeof(*j));
	size_t i;

	if (!j || !(j->v = calloc(a->nsrc ? a->nsrc : 1, sizeof(*j->v))) ||
	    !(j->state_dir = strdup(a->cfg.state_dir)) ||
	    !(j->protect = calloc(a->cfg.protect.n + 1, sizeof(*j->protect)))) {
		if (j) {
			free(j->v);
			free(j->state_dir);
		}
		free(j);
		agent_log("cannot rebuild: out of memory");
		return;
	}
	j->j.run = rb_run;
	j->j.done = rb_done;
	if (a->cfg.protect.n)
		memcpy(j->protect, a->cfg.protect.v,
		       a->cfg.protect.n * sizeof(*j->protect));
	j->n_protect = a->cfg.protect.n;
	j->fpr = a->cfg.fpr;
	j->confirm = a->cfg.confirm;
	j->max_list_bytes = a->cfg.max_list_bytes;
	j->max_entries = a->cfg.max_entries;
	/* (a foreign live filter is never "the one these copies build") */
	if (a->have_live && !foreign)
		memcpy(j->live_fp, a->live.fp, sizeof(j->live_fp));
	j->fast_ok = a->have_live && !foreign;
	j->none_live = !a->filter_id;
	j->reshape = a->reshape;
	j->reshape_cap = a->reshape_cap;
	j->reshape_grow = a->reshape_grow;
	j->seq = ++a->rb_started;
	j->generation = a->generation + 1;
	/* a string the job's sources point to lives in the config: each is
	 * copied (a reload may free the config while the job runs) */
	for (i = 0; i < a->nsrc; i++)
		if ((a->src[i].phase == SRC_CANDIDATE || a->src[i].have_copy) &&
		    rb_take(j, &a->src[i]))
			agent_log("source %s: left out of this rebuild: out of memory",
				  a->src[i].cfg->list.name);
	if (!j->change_seen)
		j->change_seen = a->reload_seen ? a->reload_seen : bg_wall();
	a->reload_seen = 0;
	a->rebuilding = 1;
	work_main(a, &j->j);
}

void want_rebuild(struct agent *a, int now)
{
	double t = bg_mono() + (now ? 0 : a->cfg.debounce);

	if (!a->rebuild_at || t < a->rebuild_at)
		a->rebuild_at = t;
}

/* The live filter is not this agent's (a forced `load` replaced it): the
 * next rebuild, a reload's included, builds and publishes its own again
 * even when its lists did not change. The loop's. */
static int live_foreign(struct agent *a)
{
	struct bg_state st;
	uint32_t live = 0;
	int foreign;

	if (!bg_state_open(&st, 0)) {
		live = bg_filter_current_id(st.filters_fd);
		bg_state_close(&st);
	}
	pthread_mutex_lock(&a->lock);
	foreign = agent_filter_foreign(a, live);
	pthread_mutex_unlock(&a->lock);
	return foreign;
}

void maybe_rebuild(struct agent *a)
{
	struct desc want;
	int foreign;

	if (!a->started || a->rebuilding || !a->rebuild_at ||
	    a->rebuild_at > bg_mono())
		return;
	a->rebuild_at = 0;
	if (wanted_desc(a, &want)) {
		agent_log("cannot rebuild: out of memory");
		return;
	}
	foreign = live_foreign(a);
	if (foreign)
		agent_log("the live filter is not the one this agent built (a "
			  "forced load?): building its own again");
	/* a new shape of the filter map is built, not adopted */
	foreign |= a->reshape;
	if (!foreign && a->have_live && !strcmp(want.fp, a->live.fp)) {
		/* what the live filter is built from: nothing to do */
		desc_free(&want);
		reloads_answer(a, 0, NULL);
		return;
	}
	desc_free(&want);
	start_rebuild(a, foreign);
}
