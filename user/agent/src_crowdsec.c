// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The driver of a CrowdSec source (user/agent/source.h): the local API's
 * decisions stream, pulled on a timer into the source's set of decisions
 * (agent/crowdsec.h), where each decision is checked as it arrives (its
 * type, scope, value, duration, width); a refused one is logged with its
 * id and reason (the first few of a pull, then a count) and counted by
 * reason. The set is written as the source's copy (the last good copy
 * across restarts and API outages, which `check` quotes).
 *
 * A change of the decisions alone goes live in place: after a full
 * rebuild, the filter is kept in memory with its exact stage's owners
 * (core/patch.h's bg_inc, a->incr: the main worker's alone), and the next
 * change of this source is applied to it and the image swapped in,
 * without parsing the other lists again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <json-c/json.h>

#include "agent/agent_priv.h"
#include "agent/crowdsec.h"
#include "agent/protect.h"
#include "agent/rebuild.h"
#include "core/clock.h"
#include "core/patch.h"
#include "core/url.h"
#include "kern/attach.h"
#include "kern/load.h"
#include "kern/swap.h"

/* A filter of more keys is not kept in memory for small changes (its image,
 * its exact stage's owners and its fixed keys: some 18 bytes a key). */
#define INCR_MAX_KEYS 50000000ull
/* A change that would raise the Bloom part's rate past this many times its
 * target is built whole (which resets it). */
#define INCR_RATE_BOUND 2.0

/* The keys of one copy of the decisions (the last good one, or a
 * candidate), made from the set in memory as the copy is written: what
 * the in-place patch changes the live filter by, without parsing the
 * copies. sha: the copy's. */
struct cs_keys {
	struct bg_blocklist bl; /* finished; block only */
	char sha[65];
};

/* The source's own state: its decisions (NULL while a pull holds them),
 * and the keys of its last good copy and of its candidate (NULL while a
 * rebuild holds them, or when not known: the patch then parses). */
struct cs_src {
	struct bg_cs_state *st;
	uint64_t decisions;
	struct cs_keys *kept, *cand;
};

static void keys_free(struct cs_keys *k)
{
	if (k) {
		bg_blocklist_free(&k->bl);
		free(k);
	}
}

/* The keys of the set as its copy of that sha holds them (the same the
 * list parser makes of the copy's lines: each decision's key, checked
 * by the parser's own bg_list_entry()), finished; NULL: out of memory. */
static struct cs_keys *keys_of(const struct bg_cs_state *st, const char *sha)
{
	struct cs_keys *k = calloc(1, sizeof(*k));
	struct bg_list *l;
	size_t i, n4 = 0, n6 = 0;

	if (!k)
		return NULL;
	bg_blocklist_init(&k->bl);
	l = &k->bl.block;
	for (i = 0; i < st->n; i++)
		st->v[i].key.kind == BG_KEY_IPV4 ? n4++ : n6++;
	if ((n4 && !(l->v4 = malloc(n4 * sizeof(*l->v4)))) ||
	    (n6 && !(l->v6 = malloc(n6 * sizeof(*l->v6))))) {
		keys_free(k);
		return NULL;
	}
	l->cap4 = n4;
	l->cap6 = n6;
	for (i = 0; i < st->n; i++)
		if (st->v[i].key.kind == BG_KEY_IPV4)
			l->v4[l->n4++] = st->v[i].key.k4;
		else
			l->v6[l->n6++] = st->v[i].key.k6;
	l->accepted = st->n;
	l->lines = st->n;
	l->files = 1;
	bg_blocklist_finish(&k->bl);
	snprintf(k->sha, sizeof(k->sha), "%s", sha);
	return k;
}

static int cs_open(struct agent *a, struct source *s)
{
	struct cs_src *c = s->priv;

	(void)a;
	if (c)
		return 0; /* kept by a reload (its set maybe in a pull) */
	c = calloc(1, sizeof(*c));
	if (!c || !(c->st = calloc(1, sizeof(*c->st)))) {
		free(c);
		return -ENOMEM;
	}
	s->priv = c;
	return 0;
}

static void cs_state_free(struct bg_cs_state *st)
{
	if (st) {
		bg_cs_state_free(st);
		free(st);
	}
}

static void cs_close(struct agent *a, struct source *s)
{
	struct cs_src *c = s->priv;

	(void)a;
	if (c) {
		cs_state_free(c->st);
		keys_free(c->kept);
		keys_free(c->cand);
	}
	free(c);
}

/* A pull: the set (the job's while it runs), the source's config (its
 * strings copied) and what the pull found. */
struct cs_job {
	struct bg_cs_state *st;
	/* the keys of the copy read back (a restart), and of the candidate
	 * written */
	struct cs_keys *kept, *cand;
	struct bg_cfg_list cfg;
	char name[BG_CFG_NAME_MAX + 1];
	char pull_err[256];
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

static int cs_fetch_begin(struct agent *a, struct source *s, void **job)
{
	struct cs_src *c = s->priv;
	struct cs_job *j;

	(void)a;
	if (!c || !c->st)
		return -EBUSY;
	j = calloc(1, sizeof(*j));
	if (!j || cscfg_dup(&j->cfg, s->cfg)) {
		free(j);
		return -ENOMEM;
	}
	snprintf(j->name, sizeof(j->name), "%s", s->cfg->list.name);
	j->st = c->st; /* the job's until it is done */
	c->st = NULL;
	*job = j;
	return 0;
}

/* A decision a pull refused: logged while the pull's first few (all are
 * counted in the set, by reason). */
static void cs_refused_one(void *ctx, const struct bg_cs_refusal *f)
{
	char where[BG_CS_SHOW_MAX + 48], reason[160];

	snprintf(where, sizeof(where), "decision %lld from '%s'", (long long)f->id,
		 f->origin);
	snprintf(reason, sizeof(reason), "%s (%s)", f->name, f->detail);
	src_refused_log(ctx, where, reason, f->value);
}

/* One pull of the stream into the set; the set written as a candidate copy
 * when it changed (also when only decisions ran out while the API was
 * away: then the pull's failure is in r->err beside it). */
static void cs_fetch(void *job, const char *copy, const char *kept_sha,
		     struct bg_fetch_validators *v, struct bg_fetch_result *r,
		     const int *quit)
{
	struct cs_job *j = job;
	struct bg_cs_state *st = j->st;
	struct bg_cs_pull_result pr;
	struct src_refusal_log log = { .source = j->name };
	char cand[PATH_MAX + 8], why[256];
	double t0 = bg_mono();
	int ret;

	(void)v;
	memset(r, 0, sizeof(*r));
	r->outcome = BG_FETCH_FAILED;
	if (bg_fetch_candidate(copy, cand, sizeof(cand))) {
		snprintf(r->err, sizeof(r->err), "%s", strerror(ENAMETOOLONG));
		return;
	}
	if (!st->loaded && bg_cs_read(st, copy, &j->cfg, quit))
		agent_log("source %s: its last copy cannot be read back: the local "
			  "API's next answer makes it", j->name);
	else if (kept_sha[0] && !j->kept && st->version == st->written)
		j->kept = keys_of(st, kept_sha); /* the copy, read back whole */
	ret = bg_cs_pull(&j->cfg, st, &(struct bg_cs_hooks){ .abort = quit,
			 .refused = cs_refused_one, .ctx = &log }, &pr, why, sizeof(why));
	src_refused_end(&log);
	if (pr.warn[0])
		agent_log("source %s: warning: %s", j->name, pr.warn);
	if (ret)
		snprintf(j->pull_err, sizeof(j->pull_err), "%s", why);
	/* no copy yet and no answer yet: nothing to write (an empty copy would
	 * say "no decision", which is not known) */
	if (st->version != st->written || (!kept_sha[0] && st->synced)) {
		int err = bg_cs_write(st, cand, j->cfg.list.url, quit);

		if (!err)
			err = bg_sha256_file(cand, r->sha256);
		if (err) {
			snprintf(r->err, sizeof(r->err), "cannot write the decisions' copy: %s",
				 strerror(-err));
			st->written = 0;
		} else if (kept_sha[0] && !strcmp(r->sha256, kept_sha)) {
			bg_fetch_discard(copy);
			r->outcome = ret ? BG_FETCH_FAILED : BG_FETCH_UNCHANGED;
		} else {
			r->outcome = BG_FETCH_CHANGED;
			j->cand = keys_of(st, r->sha256);
		}
	} else if (!ret) {
		r->outcome = BG_FETCH_UNCHANGED;
		memcpy(r->sha256, kept_sha, sizeof(r->sha256));
	}
	if (!r->err[0])
		snprintf(r->err, sizeof(r->err), "%s", j->pull_err);
	r->entries = st->n;
	r->seconds = bg_mono() - t0;
}

static void cs_fetch_end(struct agent *a, struct source *s, void *job,
			 const struct bg_fetch_result *r, char *note, size_t len)
{
	struct cs_job *j = job;
	struct cs_src *c = s ? s->priv : NULL;

	(void)a;
	(void)r;
	(void)note;
	(void)len;
	cscfg_free(&j->cfg);
	if (c && !c->st) {
		/* the decisions back to their source (a->lock held) */
		struct bg_cs_origin_count o[BG_CS_ORIGINS_MAX];
		size_t i;

		c->st = j->st;
		c->decisions = j->st->n;
		if (j->kept && !c->kept) {
			c->kept = j->kept;
			j->kept = NULL;
		}
		if (j->cand) {
			keys_free(c->cand);
			c->cand = j->cand;
			j->cand = NULL;
		}
		s->n_origins = bg_cs_origins(j->st, o, BG_CS_ORIGINS_MAX);
		if (s->n_origins > SRC_ORIGINS_MAX)
			s->n_origins = SRC_ORIGINS_MAX;
		for (i = 0; i < s->n_origins; i++) {
			_Static_assert(sizeof(s->origins[i].name) == sizeof(o[i].origin),
				       "an origin's name as crowdsec.h keeps it");
			memcpy(s->origins[i].name, o[i].origin, sizeof(o[i].origin));
			s->origins[i].n = o[i].n;
		}
		/* every reason, 0 included: a query for one sees it before
		 * it happens */
		s->refused.n = 0;
		for (i = 0; i < BG_CS_IGN_MAX; i++)
			src_refused_count(&s->refused, bg_cs_ign_names[i],
					  j->st->ignored[i]);
	} else {
		cs_state_free(j->st); /* gone with its source */
	}
	keys_free(j->kept);
	keys_free(j->cand);
	free(j);
}

/* The keys the patch reads: those of the rebuild's copy and candidate,
 * when they are the ones the source holds. */
struct cs_loan {
	struct cs_keys *old, *new;
};

static void cs_lend(struct source *s, struct rb_src *r)
{
	struct cs_src *c = s->priv;
	struct cs_loan *l;

	if (!c || !r->cand || !c->cand || strcmp(c->cand->sha, r->cand_sha) ||
	    (r->have_copy && (!c->kept || strcmp(c->kept->sha, r->sha))) ||
	    !(l = calloc(1, sizeof(*l))))
		return;
	l->new = c->cand;
	c->cand = NULL;
	if (r->have_copy) {
		l->old = c->kept;
		c->kept = NULL;
	}
	r->lent = l;
}

static void cs_take_back(struct source *s, struct rb_src *r)
{
	struct cs_src *c = s ? s->priv : NULL;
	struct cs_loan *l = r->lent;

	r->lent = NULL;
	if (!l) {
		/* kept by a rebuild without a loan (the copy's keys were not
		 * known): the candidate's keys are the copy's from now on */
		if (c && r->verdict == 1 && c->cand && !strcmp(c->cand->sha, r->cand_sha)) {
			keys_free(c->kept);
			c->kept = c->cand;
			c->cand = NULL;
		}
		return;
	}
	if (c && r->verdict == 1) {
		/* the candidate is the copy now */
		keys_free(c->kept);
		c->kept = l->new;
		l->new = NULL;
	} else if (c) {
		if (!c->kept) {
			c->kept = l->old;
			l->old = NULL;
		}
		/* not judged: a candidate still, for the next rebuild */
		if (!r->verdict && !c->cand) {
			c->cand = l->new;
			l->new = NULL;
		}
	}
	keys_free(l->old);
	keys_free(l->new);
	free(l);
}

/* The copy the rebuild refused is gone: the decisions are written again
 * at the next pull. */
static void cs_refused(struct agent *a, struct source *s)
{
	struct cs_src *c = s->priv;

	(void)a;
	if (c && c->st)
		c->st->written = 0;
}

static void cs_status(const struct source *s, struct json_object *o)
{
	const struct cs_src *c = s->priv;

	if (c)
		json_object_object_add(o, "decisions",
				       json_object_new_int64((int64_t)c->decisions));
}

/* agent --check: one startup pull, its decisions counted, the refused
 * ones named (the first few) and counted by reason; its decisions over
 * the protected set said, from the copy it would write. */
static int cs_check(const struct bg_config *cfg, const struct bg_cfg_list *l,
		    const char *dir, const struct bg_protect_set *ps, FILE *out)
{
	struct bg_cs_state st = { .loaded = 1 };
	struct bg_cs_pull_result pr;
	struct src_refusal_log log = { .source = l->list.name };
	char why[512], url[1024], copy[PATH_MAX], *lines = NULL;
	size_t k, n = 0;
	int ret;

	(void)cfg;
	log.out = open_memstream(&lines, &n);
	if (!log.out)
		log.out = out;
	ret = bg_cs_pull(l, &st, &(struct bg_cs_hooks){ .refused = cs_refused_one,
			 .ctx = &log }, &pr, why, sizeof(why));
	src_refused_end(&log);
	bg_url_redact(bg_list_origin(&l->list), url, sizeof(url));
	snprintf(copy, sizeof(copy), "%s/%s.list", dir, l->list.name);
	if (!ret && ps && !bg_cs_write(&st, copy, l->list.url, NULL))
		agent_protect_check_list(out, ps, NULL, copy, l);
	unlink(copy);
	if (ret) {
		fprintf(out, "list %s (%s): FAILED: %s\n", l->list.name, url, why);
	} else {
		fprintf(out, "list %s (%s): ok, %zu ban decisions (%zu refused", l->list.name,
			url, st.n, pr.refused);
		for (k = 0; k < BG_CS_IGN_MAX; k++)
			if (st.ignored[k])
				fprintf(out, ", %s %llu", bg_cs_ign_names[k],
					(unsigned long long)st.ignored[k]);
		fprintf(out, ")%s%s\n", pr.warn[0] ? "; warning: " : "", pr.warn);
	}
	if (log.out != out) {
		fclose(log.out);
		fputs(lines ? lines : "", out);
		free(lines);
	}
	bg_cs_state_free(&st);
	return ret != 0;
}

/* ---- changes in place ------------------------------------------------------ */

struct incr {
	struct bg_inc *inc;
	char fp[65]; /* the description of the filter it is */
	char cs[BG_CFG_NAME_MAX + 1]; /* the CrowdSec source, its changing part */
};

void incr_free(struct incr *in)
{
	if (!in)
		return;
	bg_inc_free(in->inc);
	free(in);
}

static void drop_incr(struct agent *a)
{
	incr_free(a->incr);
	a->incr = NULL;
}

/* The one source of the job's whose driver patches, or -1 (none, or
 * several: their changes are then built whole). */
static int patching_source(const struct rb_src *v, size_t n)
{
	size_t i;
	int at = -1;

	for (i = 0; i < n; i++)
		if (v[i].ops->patch) {
			if (at >= 0)
				return -1;
			at = (int)i;
		}
	return at;
}

static void on_diag(void *ctx, const struct bg_diag *d)
{
	(void)ctx;
	(void)d; /* the copy is the agent's own writing */
}

/* A finished blocklist of one copy (an empty one for none). */
static int parse_one(const struct bg_list_desc *d, const char *path,
		     struct bg_blocklist *bl)
{
	struct bg_source s = { .path = (char *)path, .list = *d };
	struct bg_list_opts o = { .diag = on_diag, .allow_wide = d->allow_wide };
	int used, ret = 0;

	bg_blocklist_init(bl);
	if (path)
		ret = bg_source_parse(&s, bl, &o, &used);
	if (!ret)
		bg_blocklist_finish(bl);
	return ret < 0 ? ret : 0;
}

/* Every list parsed (all), and all but the CrowdSec source's (fixed), as
 * the live filter was built: 0, or -errno (-E2BIG: too many keys to keep;
 * r's msg says why). */
static int incr_lists(const struct rb_job *j, int cs, struct bg_blocklist *all,
		      struct bg_blocklist *fixed, struct bg_load_report *r)
{
	struct bg_load_opts o = { .fpr = j->fpr, .diag = on_diag,
				  .confirm_off = !j->confirm,
				  .max_list_bytes = j->max_list_bytes,
				  .max_entries = j->max_entries, .allow_empty = 1 };
	struct bg_sources srcs;
	struct bg_state st;
	uint32_t capacity = 0;
	int ret = rb_copies(j, &srcs, -1);

	o.sources = &srcs;
	if (!ret)
		ret = bg_load_prepare(&o, all, r);
	if (!ret && !bg_state_open(&st, 0)) {
		int grows;

		ret = bg_attach_capacity(&st, &capacity);
		grows = capacity && bg_attach_grows(&st);
		bg_state_close(&st);
		if (!ret && capacity)
			ret = bg_load_fit(r, capacity, grows);
	}
	if (!ret && r->plan.n > INCR_MAX_KEYS)
		ret = -E2BIG;
	bg_sources_free(&srcs);
	if (!ret)
		ret = rb_copies(j, &srcs, cs);
	if (!ret && srcs.n) {
		struct bg_load_report rf;

		bg_load_report_init(&rf);
		o.sources = &srcs;
		ret = bg_load_prepare(&o, fixed, &rf);
		bg_load_report_free(&rf);
	} else if (!ret) {
		bg_blocklist_finish(fixed);
	}
	bg_sources_free(&srcs);
	return ret;
}

/* The live filter built again in memory with its seed (the same bytes:
 * the build is deterministic) and its stage's owners claimed: the state
 * of small changes, or NULL. */
static struct incr *incr_make(const struct rb_job *j, int cs)
{
	struct bg_blocklist all, fixed;
	struct bg_load_report r;
	struct incr *in = NULL;
	char why[256];
	void *img = MAP_FAILED;
	size_t len = 1;
	int ret;

	bg_load_report_init(&r);
	bg_blocklist_init(&all);
	bg_blocklist_init(&fixed);
	ret = incr_lists(j, cs, &all, &fixed, &r);
	if (!ret) {
		len = r.plan.bytes ? r.plan.bytes : 1;
		img = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ret = img == MAP_FAILED ? -ENOMEM :
		      bg_filter_build_seeded(img, &r.plan, j->seed, &all, 0);
	}
	if (!ret && !(in = calloc(1, sizeof(*in))))
		ret = -ENOMEM;
	if (ret && img != MAP_FAILED)
		munmap(img, len);
	if (!ret) {
		/* img is bg_inc_new()'s now, freed on failure too */
		ret = bg_inc_new(img, r.plan.bytes, &r.plan, r.plan.n, &all, &fixed,
				 0, &in->inc, why, sizeof(why));
		if (ret) {
			agent_log("source %s: its changes will be built whole: %s",
				  j->v[cs].list.name, why);
			free(in);
			in = NULL;
		}
	} else if (ret != -E2BIG) {
		agent_log("source %s: its changes will be built whole (%s)",
			  j->v[cs].list.name, r.msg[0] ? r.msg : strerror(-ret));
	}
	bg_blocklist_free(&all);
	bg_blocklist_free(&fixed);
	bg_load_report_free(&r);
	return in;
}

/* A job that keeps the live filter for small changes: the rebuild's
 * sources (copies of their descriptions), options, seed and description's
 * fingerprint. Main worker. */
struct incr_job {
	struct job j;
	struct rb_job rb;
};

static void incr_run(struct agent *a, struct job *jj)
{
	struct incr_job *ij = (struct incr_job *)jj;
	struct rb_job *j = &ij->rb;
	int cs = patching_source(j->v, j->n);
	double t0 = bg_mono_ms();
	struct incr *in;

	drop_incr(a);
	if (cs < 0 || __atomic_load_n(&a->work.quit, __ATOMIC_RELAXED))
		return;
	in = incr_make(j, cs);
	if (!in)
		return;
	memcpy(in->fp, j->built.fp, sizeof(in->fp));
	snprintf(in->cs, sizeof(in->cs), "%s", j->v[cs].list.name);
	a->incr = in;
	agent_log("source %s: its changes go live in place (the filter of %llu "
		  "keys kept in memory, %.0f ms)", in->cs,
		  (unsigned long long)bg_inc_plan(in->inc)->n, bg_mono_ms() - t0);
}

static void incr_done(struct agent *a, struct job *jj)
{
	struct incr_job *ij = (struct incr_job *)jj;
	size_t i;

	(void)a;
	for (i = 0; i < ij->rb.n; i++)
		bg_list_desc_free(&ij->rb.v[i].list);
	free(ij->rb.v);
}

static void cs_rebuilt(struct agent *a, const struct rb_job *j)
{
	struct incr_job *ij;
	size_t i;

	if (patching_source(j->v, j->n) < 0 || j->filter.keys > INCR_MAX_KEYS)
		return;
	ij = calloc(1, sizeof(*ij));
	if (!ij || !(ij->rb.v = calloc(j->n ? j->n : 1, sizeof(*ij->rb.v)))) {
		free(ij);
		return;
	}
	ij->j.run = incr_run;
	ij->j.done = incr_done;
	ij->rb.fpr = j->fpr;
	ij->rb.confirm = j->confirm;
	ij->rb.max_list_bytes = j->max_list_bytes;
	ij->rb.max_entries = j->max_entries;
	ij->rb.seed = j->seed;
	memcpy(ij->rb.built.fp, j->built.fp, sizeof(ij->rb.built.fp));
	for (i = 0; i < j->n; i++) {
		struct rb_src *d = &ij->rb.v[ij->rb.n];

		*d = j->v[i];
		if (bg_list_desc_dup(&d->list, &j->v[i].list))
			continue;
		/* the copy is the candidate kept when it was one */
		if (d->verdict == 1)
			d->have_copy = 1;
		ij->rb.n++;
	}
	work_main(a, &ij->j);
}

/* The old part and the new: the copy kept and the candidate, parsed;
 * then the change applied in the image. 0, or -errno (-EXDEV with the
 * image maybe changed in part: the caller drops the state). */
static int incr_apply(struct incr *in, struct rb_src *s,
		      const struct bg_protect_set *ps, struct bg_inc_result *res,
		      double *parse_ms)
{
	const struct cs_loan *l = s->lent;
	struct bg_blocklist old, new, none;
	const struct bg_blocklist *o = &old, *n = &new;
	char cand[PATH_MAX + 8], why[256];
	double t0 = bg_mono_ms();
	int ret = 0;

	if (bg_fetch_candidate(s->copy, cand, sizeof(cand)))
		return -ENAMETOOLONG;
	bg_blocklist_init(&old);
	bg_blocklist_init(&new);
	bg_blocklist_init(&none);
	bg_blocklist_finish(&none);
	if (l) {
		/* the keys made from the decisions in memory */
		o = l->old ? &l->old->bl : &none;
		n = &l->new->bl;
	} else {
		ret = parse_one(&s->list, s->have_copy ? s->copy : NULL, &old);
		if (!ret)
			ret = parse_one(&s->list, cand, &new);
	}
	*parse_ms = bg_mono_ms() - t0;
	if (!ret)
		ret = bg_inc_apply(in->inc, o, n, INCR_RATE_BOUND, res, why,
				   sizeof(why));
	s->entries = n->block.accepted;
	s->counted = 1;
	/* the new decisions over the protected set, located in the copy */
	if (!ret && ps)
		agent_protect_changes(ps, &o->block, &n->block, cand, &s->list);
	bg_blocklist_free(&old);
	bg_blocklist_free(&new);
	bg_blocklist_free(&none);
	if (ret == -EXDEV)
		agent_log("source %s: built whole: %s", s->list.name, why);
	return ret;
}

/* The image swapped in, recorded with the copies (check re-reads the
 * decisions' from its index): 0, or -errno with r's msg. */
static int incr_swap(struct incr *in, struct rb_job *j, struct bg_load_report *r)
{
	struct bg_load_opts o = { .fpr = j->fpr, .protect = j->ps };
	struct bg_sources srcs;
	struct bg_state st;
	size_t len;
	int ret = rb_copies(j, &srcs, -1);

	o.sources = &srcs;
	if (!ret) {
		clean_gone();
		ret = bg_state_open(&st, 1);
		if (!ret) {
			const void *img = bg_inc_image(in->inc, &len);

			ret = bg_load_commit_image(&st, &o, bg_inc_plan(in->inc), img, r);
			bg_state_close(&st);
		}
	}
	bg_sources_free(&srcs);
	return ret;
}

static int cs_patch(struct agent *a, struct rb_job *j, size_t at)
{
	struct incr *in = a->incr;
	struct rb_src *s = &j->v[at];
	struct bg_inc_result res;
	struct bg_load_report r;
	double parse_ms;
	int ret;

	if (!in || !j->fast_ok || strcmp(in->fp, j->live_fp) ||
	    strcmp(in->cs, s->list.name) || patching_source(j->v, j->n) != (int)at)
		return -EXDEV;
	ret = incr_apply(in, s, j->ps, &res, &parse_ms);
	/* the copy kept, then the filter swapped in */
	if (!ret && bg_fetch_keep(s->copy))
		ret = -EIO;
	if (ret) {
		/* the image may be changed in part: no longer the live filter */
		drop_incr(a);
		return ret;
	}
	s->verdict = 1;
	s->have_copy = 1;
	memcpy(s->sha, s->cand_sha, sizeof(s->sha));
	bg_load_report_init(&r);
	ret = incr_swap(in, j, &r);
	if (ret) {
		agent_log("source %s: the changed filter could not be swapped in "
			  "(%s): built whole", s->list.name, r.msg[0] ? r.msg :
			  strerror(-ret));
		drop_incr(a);
		bg_load_report_free(&r);
		return ret;
	}
	/* what the live filter is built from now; live, but not described:
	 * the next rebuild builds it whole */
	if (rb_describe(j))
		drop_incr(a);
	else
		memcpy(in->fp, j->built.fp, sizeof(in->fp));
	r.ms[BG_STAGE_PARSE] = parse_ms;
	rb_published(j, &r);
	j->fast = 1;
	agent_log("filter %llu live: %s's change in place (%llu keys added, %llu "
		  "removed; %llu keys), %s %.1f ms, copy %.1f ms, swapped in "
		  "%.1f ms", (unsigned long long)j->generation, s->list.name,
		  (unsigned long long)res.added, (unsigned long long)res.removed,
		  (unsigned long long)r.plan.n,
		  s->lent ? "from the decisions in memory" : "parse", parse_ms,
		  r.ms[BG_STAGE_BUILD], r.ms[BG_STAGE_PUBLISH]);
	rb_timed(j, &r);
	bg_load_report_free(&r);
	return 0;
}

const struct src_ops src_crowdsec_ops = {
	.kind = "crowdsec",
	.may_be_empty = 1,
	.decisions = 1,
	.retry_base = RETRY_BASE,
	.open = cs_open,
	.close = cs_close,
	.fetch_begin = cs_fetch_begin,
	.fetch = cs_fetch,
	.fetch_end = cs_fetch_end,
	.refused = cs_refused,
	.patch = cs_patch,
	.lend = cs_lend,
	.take_back = cs_take_back,
	.rebuilt = cs_rebuilt,
	.status = cs_status,
	.check = cs_check,
};
