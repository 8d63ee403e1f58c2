// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's rebuilds (user/agent/agent_priv.h): the description of a
 * filter (what decides what it holds), the rebuild job that the main
 * worker runs, and adoption of a pinned filter at start.
 *
 * A rebuild parses every good copy, and each new copy (a candidate) in
 * the same parse: that parse is the one that judges it (the rules of a
 * good copy, bg_fetch_judge(), on the parse's count of that list), so a
 * changed list is parsed once for the filter. A refused candidate is
 * thrown away and the load runs again with the last good copy in its
 * place (bg_load_opts.source_done stops the load at it). Then the build
 * and swap (bg_load_commit(), under the pin directory's lock) and the
 * filter's description saved beside it (filter.json), on the main worker;
 * then the store's entries, on the store's thread (an import of millions
 * of entries holds up no rebuild). The loop only hands the jobs over and
 * applies the results.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>
#include <systemd/sd-daemon.h>

#include "agent/agent_priv.h"
#include "agent/protect.h"
#include "agent/provenance.h"
#include "core/print.h"
#include "core/record.h"
#include "core/url.h"
#include "core/patch.h"
#include "kern/artifact.h"
#include "kern/attach.h"
#include "kern/load.h"
#include "kern/swap.h"

/* ---- the description ----------------------------------------------------- */

void desc_free(struct desc *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		bg_list_desc_free(&d->v[i].list);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

int desc_add(struct desc *d, const struct desc_list *l)
{
	struct desc_list *v = d->v, *e;

	if (!(d->n & (d->n - 1))) { /* doubles at powers of two */
		v = realloc(d->v, (d->n ? 2 * d->n : 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->v = v;
	}
	e = &d->v[d->n];
	*e = *l;
	if (bg_list_desc_dup(&e->list, &l->list))
		return -ENOMEM;
	d->n++;
	return 0;
}

int desc_copy(struct desc *dst, const struct desc *src)
{
	size_t i;

	memset(dst, 0, sizeof(*dst));
	dst->fpr = src->fpr;
	dst->confirm = src->confirm;
	memcpy(dst->fp, src->fp, sizeof(dst->fp));
	for (i = 0; i < src->n; i++)
		if (desc_add(dst, &src->v[i])) {
			desc_free(dst);
			return -ENOMEM;
		}
	return 0;
}

struct json_object *desc_json(const struct desc *d)
{
	struct json_object *o = json_object_new_object(), *arr, *l;
	size_t i;

	if (!o)
		return NULL;
	json_object_object_add(o, "fpr", json_object_new_double(d->fpr));
	json_object_object_add(o, "confirm", json_object_new_boolean(d->confirm));
	arr = json_object_new_array();
	json_object_object_add(o, "lists", arr);
	for (i = 0; arr && i < d->n; i++) {
		const struct bg_list_desc *e = &d->v[i].list;
		char origin[1024];

		/* filter.json is a file: the URL without its password (a
		 * changed password alone changes no list's content) */
		bg_url_redact(bg_list_origin(e), origin, sizeof(origin));

		l = json_object_new_object();
		if (!l)
			break;
		json_object_object_add(l, "name", json_object_new_string(e->name));
		json_object_object_add(l, "origin", json_object_new_string(origin));
		json_object_object_add(l, "sha256", json_object_new_string(d->v[i].sha256));
		json_object_object_add(l, "format", json_object_new_int(e->format));
		json_object_object_add(l, "subdomains", json_object_new_boolean(e->subdomains));
		json_object_object_add(l, "allow", json_object_new_boolean(e->allow));
		json_object_object_add(l, "allow_wide", json_object_new_boolean(e->allow_wide));
		json_object_array_add(arr, l);
	}
	if (!arr || i < d->n) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* The whole description hashed: no list is left out however many there
 * are (the text may be megabytes), so a change in any of them tells. */
int desc_seal(struct desc *d)
{
	static const char digits[] = "0123456789abcdef";
	struct json_object *o = desc_json(d);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;
	const char *text;

	if (!o)
		return -ENOMEM;
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if (!text || !EVP_Digest(text, strlen(text), md, &n, EVP_sha256(), NULL)) {
		json_object_put(o);
		return -ENOMEM;
	}
	json_object_put(o);
	for (i = 0; i < n && 2 * i + 1 < sizeof(d->fp); i++) {
		d->fp[2 * i] = digits[md[i] >> 4];
		d->fp[2 * i + 1] = digits[md[i] & 15];
	}
	d->fp[2 * i] = 0;
	return 0;
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "";
}

static int jint(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_int(v) : 0;
}

int desc_from_json(struct json_object *o, struct desc *d)
{
	struct json_object *arr, *v;
	size_t i;

	memset(d, 0, sizeof(*d));
	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "lists", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return -EINVAL;
	if (json_object_object_get_ex(o, "fpr", &v))
		d->fpr = json_object_get_double(v);
	d->confirm = json_object_object_get_ex(o, "confirm", &v) &&
		     json_object_get_boolean(v);
	for (i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *origin = jstr(e, "origin");
		struct desc_list l = { .list = {
			.name = jstr(e, "name"),
			.format = (uint8_t)jint(e, "format"),
			.subdomains = (uint8_t)jint(e, "subdomains"),
			.allow = (uint8_t)jint(e, "allow"),
			.allow_wide = (uint8_t)jint(e, "allow_wide"),
		} };

		/* only the origin is saved: a path is absolute, a url
		 * http(s):// (the config checks both), so its first byte
		 * tells which it is */
		if (origin[0] == '/')
			l.list.path = origin;
		else
			l.list.url = origin;

		snprintf(l.sha256, sizeof(l.sha256), "%s", jstr(e, "sha256"));
		if (desc_add(d, &l)) {
			desc_free(d);
			return -ENOMEM;
		}
	}
	return 0;
}

static const struct desc_list *desc_get(const struct desc *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].list.name, name))
			return &d->v[i];
	return NULL;
}

/* Appends to out ("; " between parts, ", " between names), cut at len. */
static void put(char *out, size_t len, int *part, int *first, const char *head,
		const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void put(char *out, size_t len, int *part, int *first, const char *head,
		const char *fmt, ...)
{
	size_t o = strlen(out);
	va_list ap;

	if (*first) {
		if (o < len)
			o += (size_t)snprintf(out + o, len - o, "%s%s", *part ? "; " : "", head);
		*part = 1;
		*first = 0;
	} else if (o < len) {
		o += (size_t)snprintf(out + o, len - o, ", ");
	}
	if (o < len) {
		va_start(ap, fmt);
		vsnprintf(out + o, len - o, fmt, ap);
		va_end(ap);
	}
}

void desc_diff(const struct desc *old, const struct desc *new, char *out,
	       size_t len)
{
	int part = 0, first;
	size_t i;

	out[0] = 0;
	first = 1;
	for (i = 0; i < old->n; i++)
		if (!desc_get(new, old->v[i].list.name))
			put(out, len, &part, &first, "lists removed: ", "%s",
			    old->v[i].list.name);
	first = 1;
	for (i = 0; i < new->n; i++)
		if (!desc_get(old, new->v[i].list.name))
			put(out, len, &part, &first, "lists added: ", "%s",
			    new->v[i].list.name);
	first = 1;
	for (i = 0; i < new->n; i++) {
		const struct desc_list *nl = &new->v[i],
				       *ol = desc_get(old, nl->list.name);
		const struct bg_list_desc *n = &nl->list, *o = ol ? &ol->list : NULL;
		char what[128] = "", ou[1024], nu[1024];

		if (!o)
			continue;
#define DIFF(c, word)                                                        \
	if (c)                                                               \
		snprintf(what + strlen(what), sizeof(what) - strlen(what), "%s%s", \
			 what[0] ? ", " : "", word)
		DIFF(strcmp(ol->sha256, nl->sha256), "copy");
		DIFF(strcmp(bg_url_redact(bg_list_origin(o), ou, sizeof(ou)),
			    bg_url_redact(bg_list_origin(n), nu, sizeof(nu))), "origin");
		DIFF(o->format != n->format, "format");
		DIFF(o->subdomains != n->subdomains, "subdomains");
		DIFF(o->allow != n->allow, "allow");
		DIFF(o->allow_wide != n->allow_wide, "allow_wide");
#undef DIFF
		if (what[0])
			put(out, len, &part, &first, "lists changed: ", "%s (%s)",
			    n->name, what);
	}
	first = 1;
	if (old->fpr != new->fpr)
		put(out, len, &part, &first, "", "fpr %g -> %g", old->fpr, new->fpr);
	first = 1;
	if (!old->confirm != !new->confirm)
		put(out, len, &part, &first, "", "confirm %s -> %s",
		    old->confirm ? "on" : "off", new->confirm ? "on" : "off");
	if (!out[0] && strcmp(old->fp, new->fp))
		snprintf(out, len, "lists reordered");
	if (!out[0])
		snprintf(out, len, "nothing changed");
}

/* ---- the rebuild job ----------------------------------------------------- */

/* The change's way to the datapath, for the timing line (milliseconds;
 * seen and live_at unix time), logged once the store followed. */
struct rb_timing {
	double seen, fetch, parse, plan, build, swap, live_at;
};

struct rb_src {
	/* the list, the job's own copy (bg_list_desc_dup()): a reload may
	 * free the config while the job runs */
	struct bg_list_desc list;
	uint8_t kind; /* enum bg_src_kind */
	double max_shrink;
	char copy[PATH_MAX];
	char sha[65]; /* of the copy */
	int have_copy;
	int cand; /* a candidate to judge, cand_sha */
	char cand_sha[65];
	uint64_t prev_entries; /* of the copy: the shrink guard's base */
	/* results: 1 the candidate kept, -1 refused (why); its count */
	int verdict;
	char why[256];
	uint64_t entries;
	int counted;
};

struct rb_job {
	struct job j;
	struct rb_src *v;
	size_t n;
	double fpr;
	int confirm;
	int allow_empty; /* a crowdsec: source may hold no decision */
	uint64_t max_list_bytes, max_entries;
	char *state_dir;
	/* the config's protect: (the job's copy) */
	struct bg_protect_item *protect;
	size_t n_protect;
	char live_fp[65];
	uint64_t seq, generation;
	double change_seen, fetch_ms;
	/* the provenance index, fed by the load's parse (bg_load_opts.entry):
	 * begun anew for each attempt of the load (a refused candidate makes
	 * it run again without it), committed by the store thread after the
	 * swap (sync_store_entries()), dropped when nothing was published */
	struct bg_prov_writer *pw;
	/* results */
	int ret, published, nothing;
	uint32_t filter_id; /* of the filter published */
	char msg[600];
	struct desc built;
	struct bg_metrics_filter filter;
	struct rb_timing timing;
	/* the load's seed (the incremental state is built with it), and
	 * whether the fast path of a crowdsec: source's change may be tried
	 * (its source the one candidate) and was taken */
	uint64_t seed;
	int fast_ok, fast;
	/* the filter map's shape the config asks for (a changed capacity:
	 * or grow:), to change to with this build (bg_load_opts.reshape) */
	int reshape, reshape_grow;
	uint32_t reshape_cap;
	/* an artifact applied: its header (generation, digest) and its
	 * file's SHA-256 (the fetch's: what status names it by); kept_live:
	 * the live filter was this artifact's already (filter_id its id) */
	int artifact, kept_live;
	struct bg_art_header art;
	uint8_t art_sha[32];
};

static void on_diag(void *ctx, const struct bg_diag *d)
{
	(void)ctx;
	(void)d; /* counted in the report */
}

struct judge_ctx {
	struct rb_job *j;
	size_t *map; /* index in the load's sources -> in j->v */
};

/* The list of the load's source k, for the protected set's lines. */
static const struct bg_list_desc *job_list(void *ctx, size_t k, int *cs)
{
	struct judge_ctx *c = ctx;
	const struct rb_src *s = &c->j->v[c->map[k]];

	*cs = s->kind == BG_SRC_CROWDSEC;
	return &s->list;
}

/* After each list's parse: its count, and a candidate judged by it. */
static int judge(void *ctx, size_t i, const struct bg_source_info *in)
{
	struct judge_ctx *c = ctx;
	struct rb_src *s = &c->j->v[c->map[i]];
	struct bg_fetch_src f = { .max_shrink = s->max_shrink };

	s->entries = in->entries;
	s->counted = 1;
	/* a crowdsec: copy is the agent's own writing: its decisions may well
	 * be none, or far fewer than before */
	if (!s->cand || s->verdict || s->kind == BG_SRC_CROWDSEC)
		return 0;
	f.list = s->list;
	if (bg_fetch_judge(&f, in->entries, in->rejected, s->prev_entries,
			   s->why, sizeof(s->why))) {
		s->verdict = -1;
		return 1;
	}
	return 0;
}

static void save_filter(const struct rb_job *j, uint32_t id)
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

/* A job's filter went live: what metrics and status say of it, from the
 * load's report (an artifact's parse and plan stages took no time). */
static void job_published(struct rb_job *j, const struct bg_load_report *r)
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

/*
 * The rebuild of an agent fed a built filter (an artifact: file or URL,
 * or the fleet store's generation): nothing parsed or built. A new copy
 * is verified while it is copied into the new filter map (every section
 * against its SHA-256, the header's checksum, the datapath ABI, the
 * attachments' capacity); one that fails is refused and the last good
 * copy stays live, untouched. A good one replaces the copy once it is
 * live.
 */
static void rb_run_artifact(struct rb_job *j, const struct bg_protect_set *ps)
{
	struct rb_src *s = &j->v[0];
	char cand[PATH_MAX + 8], why[512];
	struct bg_load_report r;
	struct bg_state st;
	struct bg_art a;
	int use_cand = s->cand, ret = 0, opened = 0;

	bg_load_report_init(&r);
	if (bg_fetch_candidate(s->copy, cand, sizeof(cand))) {
		j->ret = -ENAMETOOLONG;
		snprintf(j->msg, sizeof(j->msg), "%s", strerror(ENAMETOOLONG));
		return;
	}
	for (;;) {
		const char *file = use_cand ? cand : s->copy;
		struct desc_list l = { .list = s->list };

		if (!use_cand && !s->have_copy) {
			agent_log("no good artifact yet: the filter is unchanged");
			j->nothing = 1;
			ret = -ENODATA;
			goto out;
		}
		desc_free(&j->built);
		j->built.fpr = j->fpr;
		j->built.confirm = j->confirm;
		memcpy(l.sha256, use_cand ? s->cand_sha : s->sha, sizeof(l.sha256));
		ret = desc_add(&j->built, &l);
		if (!ret)
			ret = desc_seal(&j->built);
		if (ret) {
			snprintf(j->msg, sizeof(j->msg), "out of memory");
			goto out;
		}
		if (!use_cand && j->live_fp[0] && !strcmp(j->live_fp, j->built.fp)) {
			/* the live filter is this copy's already: this agent's
			 * now, as if adopted (a restart whose new copy was
			 * refused) */
			struct bg_state ro;

			if (!bg_art_open(s->copy, &a, why, sizeof(why))) {
				j->art = *a.h;
				bg_sha_unhex(s->sha, j->art_sha);
				bg_art_close(&a);
				if (!bg_state_open(&ro, 0)) {
					j->filter_id = bg_filter_current_id(ro.filters_fd);
					bg_state_close(&ro);
				}
				j->kept_live = j->filter_id != 0;
			}
			goto out;
		}
		ret = bg_art_open(file, &a, why, sizeof(why));
		if (!ret) {
			opened = 1;
			clean_gone();
			ret = bg_state_open(&st, 1);
			if (ret) {
				snprintf(r.msg, sizeof(r.msg), "cannot open the pinned "
					 "state in %s: %s (is bloomgate attached?)",
					 bg_pin_dir(), strerror(-ret));
				r.failed = BG_STAGE_BUILD;
			} else {
				/* the record names the copy, which the candidate
				 * becomes right after */
				ret = bg_art_commit(&st, &a, s->copy, 0, 0, ps, &r);
				bg_state_close(&st);
			}
			if (ret && r.failed == BG_STAGE_PARSE)
				snprintf(why, sizeof(why), "%s", r.msg);
		}
		/* not an artifact, damaged, a delta, another ABI: refused */
		if (ret && (!opened || r.failed == BG_STAGE_PARSE) && use_cand) {
			if (opened)
				bg_art_close(&a);
			opened = 0;
			s->verdict = -1;
			snprintf(s->why, sizeof(s->why), "%.250s", why);
			bg_fetch_discard(s->copy);
			agent_log("source %s: new copy refused: %s; the last good "
				  "copy is used", s->list.name, s->why);
			use_cand = 0;
			bg_load_report_free(&r);
			continue;
		}
		if (ret && !opened)
			snprintf(r.msg, sizeof(r.msg), "the last good artifact: %.400s", why);
		break;
	}
	if (use_cand && opened) {
		/* verified whole (or refused above): the last good copy now,
		 * whatever the swap did */
		int err = bg_fetch_keep(s->copy);

		if (err) {
			snprintf(s->why, sizeof(s->why), "keeping the copy: %s",
				 strerror(-err));
			s->verdict = -1;
		} else {
			s->verdict = 1;
		}
	}
	if (opened) {
		s->entries = a.h->plan.prefixes4 + a.h->plan.prefixes6 + a.h->plan.names;
		s->counted = 1;
		j->art = *a.h;
		bg_sha_unhex(use_cand ? s->cand_sha : s->sha, j->art_sha);
	}
	if (ret) {
		agent_log("swap failed (%s): %s; the running filter is unchanged",
			  bg_load_stage_name(r.failed), r.msg);
		snprintf(j->msg, sizeof(j->msg), "swap failed (%s): %s",
			 bg_load_stage_name(r.failed), r.msg);
		goto out;
	}
	j->artifact = 1;
	job_published(j, &r);
	agent_log("filter %llu live: artifact generation %llu, %llu keys, %zu "
		  "bytes, verified and copied in %.0f ms, swapped in %.1f ms",
		  (unsigned long long)j->generation,
		  (unsigned long long)j->art.generation,
		  (unsigned long long)r.plan.n, r.plan.bytes, r.ms[BG_STAGE_BUILD],
		  r.ms[BG_STAGE_PUBLISH]);
	agent_protect_say(NULL, &r.covers, NULL, NULL);
	if (r.reshaped)
		agent_log("the growing capacity is now %u elements (the artifact's "
			  "shape): new programs swapped in", r.grown);
	if (r.failed == BG_STAGE_RECORD)
		agent_log("the load record was not written: %s", r.msg);
	j->timing.live_at = agent_wall();
	save_filter(j, r.filter_id);
	j->timing.build = r.ms[BG_STAGE_BUILD];
	j->timing.swap = r.ms[BG_STAGE_PUBLISH];
	j->timing.seen = j->change_seen;
	j->timing.fetch = j->fetch_ms;
out:
	if (opened)
		bg_art_close(&a);
	j->ret = ret;
	if (ret && !j->msg[0])
		snprintf(j->msg, sizeof(j->msg), "%s", j->nothing ?
			 "no good artifact yet" : strerror(-ret));
	bg_load_report_free(&r);
}

/* ---- small changes of a crowdsec: source ---------------------------------- */

/* A filter of more keys is not kept in memory for small changes (its image,
 * its exact stage's owners and its fixed keys: some 18 bytes a key). */
#define INCR_MAX_KEYS 50000000ull
/* A change that would raise the Bloom part's rate past this many times its
 * target is built whole (which resets it). */
#define INCR_RATE_BOUND 2.0

struct incr {
	struct bg_inc *inc;
	char fp[65]; /* the description of the filter it is */
	char cs[BG_CFG_NAME_MAX + 1]; /* the crowdsec: source, its changing part */
};

void incr_free(struct incr *in)
{
	if (!in)
		return;
	bg_inc_free(in->inc);
	free(in);
}

/* The single crowdsec: source of the job's, or -1 (none, or several: their
 * changes are then built whole). */
static int crowdsec_of(const struct rb_src *v, size_t n)
{
	size_t i;
	int at = -1;

	for (i = 0; i < n; i++)
		if (v[i].kind == BG_SRC_CROWDSEC) {
			if (at >= 0)
				return -1;
			at = (int)i;
		}
	return at;
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

/* The load's sources: every copy (after the keep), in the job's order,
 * but skip (-1: none). */
static int copies_of(const struct rb_job *j, struct bg_sources *srcs, long skip)
{
	size_t i;

	bg_sources_init(srcs);
	for (i = 0; i < j->n; i++)
		if (j->v[i].have_copy && (long)i != skip &&
		    bg_sources_add_list(srcs, j->v[i].copy, &j->v[i].list))
			return -ENOMEM;
	return 0;
}

/* A job that keeps the live filter for small changes: its lists parsed
 * again (all, and all but the crowdsec: source's), the filter built again
 * in memory with the live one's seed (the same bytes: the build is
 * deterministic), its stage's owners claimed. Main worker. */
struct incr_job {
	struct job j;
	/* the rebuild's sources (copies of their descriptions), options,
	 * seed and description's fingerprint */
	struct rb_job rb;
};

static void incr_run(struct agent *a, struct job *jj)
{
	struct incr_job *ij = (struct incr_job *)jj;
	struct rb_job *j = &ij->rb;
	struct bg_load_opts o = { .fpr = j->fpr, .diag = on_diag,
				  .confirm_off = !j->confirm,
				  .max_list_bytes = j->max_list_bytes,
				  .max_entries = j->max_entries, .allow_empty = 1 };
	struct bg_blocklist all, fixed;
	struct bg_load_report r;
	struct bg_sources srcs;
	struct bg_state st;
	struct incr *in = NULL;
	uint32_t capacity = 0;
	char why[256];
	double t0 = bg_now_ms();
	void *img;
	int cs = crowdsec_of(j->v, j->n), ret;

	incr_free(a->incr);
	a->incr = NULL;
	if (cs < 0 || __atomic_load_n(&a->work.quit, __ATOMIC_RELAXED))
		return;
	bg_load_report_init(&r);
	bg_blocklist_init(&all);
	bg_blocklist_init(&fixed);
	bg_sources_init(&srcs);
	ret = copies_of(j, &srcs, -1);
	o.sources = &srcs;
	if (!ret)
		ret = bg_load_prepare(&o, &all, &r);
	if (!ret && !bg_state_open(&st, 0)) {
		int grows;

		ret = bg_attach_capacity(&st, &capacity);
		grows = capacity && bg_attach_grows(&st);
		bg_state_close(&st);
		if (!ret && capacity)
			ret = bg_load_fit(&r, capacity, grows);
	}
	if (!ret && r.plan.n > INCR_MAX_KEYS)
		ret = -E2BIG;
	if (!ret) {
		bg_sources_free(&srcs);
		ret = copies_of(j, &srcs, cs);
		if (!ret && srcs.n) {
			struct bg_load_report rf;

			bg_load_report_init(&rf);
			o.sources = &srcs;
			ret = bg_load_prepare(&o, &fixed, &rf);
			bg_load_report_free(&rf);
		} else if (!ret) {
			bg_blocklist_finish(&fixed);
		}
	}
	img = MAP_FAILED;
	if (!ret) {
		img = mmap(NULL, r.plan.bytes ? r.plan.bytes : 1, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ret = img == MAP_FAILED ? -ENOMEM :
		      bg_filter_build_seeded(img, &r.plan, j->seed, &all, 0);
		if (ret && img != MAP_FAILED)
			munmap(img, r.plan.bytes ? r.plan.bytes : 1);
	}
	if (!ret)
		in = calloc(1, sizeof(*in));
	if (!ret && !in) {
		munmap(img, r.plan.bytes);
		ret = -ENOMEM;
	}
	if (!ret) {
		ret = bg_inc_new(img, r.plan.bytes, &r.plan, r.plan.n, &all, &fixed, 0,
				 &in->inc, why, sizeof(why));
		if (ret) {
			agent_log("source %s: its changes will be built whole: %s",
				  j->v[cs].list.name, why);
			free(in);
			in = NULL;
		}
	}
	if (in) {
		memcpy(in->fp, j->built.fp, sizeof(in->fp));
		snprintf(in->cs, sizeof(in->cs), "%s", j->v[cs].list.name);
		a->incr = in;
		agent_log("source %s: its changes go live in place (the filter of "
			  "%llu keys kept in memory, %.0f ms)", in->cs,
			  (unsigned long long)r.plan.n, bg_now_ms() - t0);
	} else if (ret && ret != -E2BIG) {
		agent_log("source %s: its changes will be built whole (%s)",
			  j->v[cs].list.name, r.msg[0] ? r.msg : strerror(-ret));
	}
	bg_blocklist_free(&all);
	bg_blocklist_free(&fixed);
	bg_sources_free(&srcs);
	bg_load_report_free(&r);
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

/* After a full rebuild of a filter with one crowdsec: source: a job that
 * keeps it for that source's small changes (the loop's). */
static void incr_later(struct agent *a, const struct rb_job *j)
{
	struct incr_job *ij;
	size_t i;

	if (crowdsec_of(j->v, j->n) < 0 || j->filter.keys > INCR_MAX_KEYS)
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

/*
 * The fast path of a rebuild whose one new copy is the crowdsec: source's
 * (its decisions changed): the change made in the filter kept in memory
 * (bg_inc_apply) and that image swapped in; no list parsed but the
 * decisions' two copies. 0 when it went live (the job filled as a
 * rebuild's); nonzero: build it whole (the state dropped when it may no
 * longer be the live filter).
 */
static int rb_fast(struct agent *a, struct rb_job *j, const struct bg_protect_set *ps)
{
	struct incr *in = a->incr;
	int cs = crowdsec_of(j->v, j->n);
	struct rb_src *s;
	struct bg_blocklist old, new;
	struct bg_inc_result res;
	struct bg_load_opts o = { .fpr = j->fpr, .protect = ps };
	struct bg_load_report r;
	struct bg_sources srcs;
	struct bg_state st;
	char cand[PATH_MAX + 8], why[256];
	double t0 = bg_now_ms(), t1;
	size_t i, len;
	int ret;

	if (!in || cs < 0 || !j->fast_ok || strcmp(in->fp, j->live_fp) ||
	    strcmp(in->cs, j->v[cs].list.name))
		return -EXDEV;
	s = &j->v[cs];
	for (i = 0; i < j->n; i++)
		if ((int)i != cs && j->v[i].cand)
			return -EXDEV;
	if (!s->cand || bg_fetch_candidate(s->copy, cand, sizeof(cand)))
		return -EXDEV;
	ret = parse_one(&s->list, s->have_copy ? s->copy : NULL, &old);
	if (!ret)
		ret = parse_one(&s->list, cand, &new);
	else
		bg_blocklist_init(&new);
	t1 = bg_now_ms();
	if (!ret)
		ret = bg_inc_apply(in->inc, &old, &new, INCR_RATE_BOUND, &res, why,
				   sizeof(why));
	s->entries = new.block.accepted;
	s->counted = 1;
	if (!ret && ps)
		agent_protect_changes(ps, &old.block, &new.block, cand, &s->list);
	bg_blocklist_free(&old);
	bg_blocklist_free(&new);
	if (ret) {
		if (ret == -EXDEV)
			agent_log("source %s: built whole: %s", s->list.name, why);
		/* the image may be changed in part: no longer the live filter */
		incr_free(in);
		a->incr = NULL;
		return ret;
	}
	/* the copy kept, then the filter swapped in, recorded with the
	 * copies (check re-reads the decisions' from its index) */
	if (bg_fetch_keep(s->copy)) {
		incr_free(in);
		a->incr = NULL;
		return -EIO;
	}
	s->verdict = 1;
	s->have_copy = 1;
	memcpy(s->sha, s->cand_sha, sizeof(s->sha));
	bg_load_report_init(&r);
	ret = copies_of(j, &srcs, -1);
	o.sources = &srcs;
	if (!ret) {
		clean_gone();
		ret = bg_state_open(&st, 1);
		if (!ret) {
			const void *img = bg_inc_image(in->inc, &len);

			ret = bg_load_commit_image(&st, &o, bg_inc_plan(in->inc), img, &r);
			bg_state_close(&st);
		}
	}
	bg_sources_free(&srcs);
	if (ret) {
		agent_log("source %s: the changed filter could not be swapped in "
			  "(%s): built whole", s->list.name, r.msg[0] ? r.msg :
			  strerror(-ret));
		incr_free(in);
		a->incr = NULL;
		bg_load_report_free(&r);
		return ret;
	}
	/* what the live filter is built from now */
	desc_free(&j->built);
	j->built.fpr = j->fpr;
	j->built.confirm = j->confirm;
	for (i = 0; !ret && i < j->n; i++) {
		struct desc_list l = { .list = j->v[i].list };

		if (!j->v[i].have_copy)
			continue;
		memcpy(l.sha256, j->v[i].sha, sizeof(l.sha256));
		ret = desc_add(&j->built, &l);
	}
	if (!ret)
		ret = desc_seal(&j->built);
	if (ret) {
		/* live, but not described: the next rebuild builds it whole */
		incr_free(in);
		a->incr = NULL;
		bg_load_report_free(&r);
		return 0;
	}
	memcpy(in->fp, j->built.fp, sizeof(in->fp));
	r.ms[BG_STAGE_PARSE] = t1 - t0;
	job_published(j, &r);
	j->fast = 1;
	agent_log("filter %llu live: %s's change in place (%llu keys added, %llu "
		  "removed; %llu keys), parse %.1f ms, copy %.1f ms, swapped in "
		  "%.1f ms", (unsigned long long)j->generation, s->list.name,
		  (unsigned long long)res.added, (unsigned long long)res.removed,
		  (unsigned long long)r.plan.n,
		  t1 - t0, r.ms[BG_STAGE_BUILD], r.ms[BG_STAGE_PUBLISH]);
	j->timing.live_at = agent_wall();
	save_filter(j, r.filter_id);
	j->timing.parse = r.ms[BG_STAGE_PARSE];
	j->timing.build = r.ms[BG_STAGE_BUILD];
	j->timing.swap = r.ms[BG_STAGE_PUBLISH];
	j->timing.seen = j->change_seen;
	j->timing.fetch = j->fetch_ms;
	bg_load_report_free(&r);
	return 0;
}

static void rb_run(struct agent *a, struct job *jj)
{
	struct rb_job *j = (struct rb_job *)jj;
	struct bg_load_opts o = { .fpr = j->fpr, .diag = on_diag,
				  .confirm_off = !j->confirm,
				  .max_list_bytes = j->max_list_bytes,
				  .max_entries = j->max_entries,
				  .allow_empty = j->allow_empty,
				  .source_done = judge, .reshape = j->reshape,
				  .reshape_cap = j->reshape_cap,
				  .reshape_grow = j->reshape_grow };
	size_t *map = calloc(j->n ? j->n : 1, sizeof(*map)), i, k;
	struct judge_ctx jc = { .j = j, .map = map };
	struct bg_load_report r;
	struct bg_blocklist bl;
	struct bg_sources srcs;
	struct bg_state st;
	struct bg_premap pm = BG_PREMAP_INIT;
	struct bg_protect_set *ps = NULL;
	int ret;

	(void)a; /* nothing of the agent's: the job holds what it needs */
	/* the set this filter is judged against, made live with it */
	ret = agent_protect_gather(j->protect, j->n_protect, &ps, j->msg, sizeof(j->msg));
	if (ret || (j->n == 1 && BG_SRC_BUILT(j->v[0].kind)) ||
	    (!j->reshape && !rb_fast(a, j, ps))) {
		if (ret)
			agent_log("rebuild failed: %s; the running filter is unchanged",
				  j->msg);
		else if (j->n == 1 && BG_SRC_BUILT(j->v[0].kind))
			rb_run_artifact(j, ps);
		j->ret = ret ? ret : j->ret;
		free(ps);
		free(map);
		return;
	}
	o.protect = ps;
	/* the full rebuild: the state of small changes made anew after it */
	incr_free(a->incr);
	a->incr = NULL;
	bg_load_report_init(&r);
	bg_sources_init(&srcs);
	if (!map) {
		j->ret = -ENOMEM;
		snprintf(j->msg, sizeof(j->msg), "out of memory");
		return;
	}
	o.source_ctx = &jc;
	/* the filter map made while the keys are sorted (kern/load.h): the
	 * hook runs only for a parse that succeeded, once a rebuild */
	o.parsed = bg_premap_parsed;
	o.parsed_ctx = &pm;
	for (;;) {
		bg_sources_free(&srcs);
		bg_load_report_free(&r);
		ret = job_sources(j, &srcs, map);
		if (ret) {
			snprintf(j->msg, sizeof(j->msg), "%s", strerror(-ret));
			goto out;
		}
		/* the index of each list from this very parse (a writer per
		 * attempt: a refused candidate's entries are not indexed) */
		bg_prov_abort(j->pw);
		j->pw = NULL;
		o.entry = NULL;
		o.entry_ctx = NULL;
		if (srcs.n && !prov_begin(j, &srcs, map)) {
			o.entry = bg_prov_entry;
			o.entry_ctx = j->pw;
		}
		if (bg_sources_done(&srcs)) {
			agent_log("no block list has a good copy yet: the filter is unchanged");
			j->nothing = 1;
			ret = -ENODATA;
			goto out;
		}
		o.sources = &srcs;
		/* the lists parsed before the lock, as `load` does: a CLI
		 * command waits for the agent's build and swap, never for
		 * its parse */
		ret = bg_load_prepare(&o, &bl, &r);
		k = r.failed_source;
		if (ret && r.failed == BG_STAGE_PARSE && k < srcs.n &&
		    j->v[map[k]].cand && j->v[map[k]].verdict >= 0) {
			/* a new copy that cannot be read or pushes the lists
			 * past a bound: refused as a bad copy is */
			j->v[map[k]].verdict = -1;
			snprintf(j->v[map[k]].why, sizeof(j->v[map[k]].why), "%.200s", r.msg);
		}
		if (ret && k < srcs.n && j->v[map[k]].verdict < 0) {
			struct rb_src *s = &j->v[map[k]];

			/* again with the last good copy in its place */
			bg_blocklist_free(&bl);
			bg_fetch_discard(s->copy);
			agent_log("source %s: new copy refused: %s; the last good "
				  "copy is used", s->list.name, s->why);
			for (i = 0; i < j->n; i++)
				j->v[i].counted = 0;
			continue;
		}
		break;
	}
	/* entries over the protected set, each with its list and line */
	if (!ret)
		agent_protect_say(NULL, &r.covers, job_list, &jc);
	/* what was detected, as `load` prints it: the copy's path names it */
	for (i = 0; i < r.n_detected; i++) {
		char line[PATH_MAX + 256];

		bg_fmt_detected(line, sizeof(line), &r.detected[i]);
		agent_log("%s", line);
	}
	/* each candidate parsed is good: it becomes the last good copy
	 * whatever the build does (the next rebuild starts from it) */
	for (i = 0; !ret && i < srcs.n; i++) {
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
		/* the record names the copy, as check re-reads it */
		free(srcs.v[i].path);
		srcs.v[i].path = strdup(s->copy);
		if (!srcs.v[i].path) {
			ret = -ENOMEM;
			snprintf(r.msg, sizeof(r.msg), "out of memory");
		}
	}
	/* what the new filter is built from */
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
	if (!ret && j->live_fp[0] && !strcmp(j->live_fp, j->built.fp)) {
		/* every new copy was refused: the live filter is this one */
		bg_blocklist_free(&bl);
		goto store;
	}
	if (!ret) {
		clean_gone();
		ret = bg_state_open(&st, 1);
		if (ret) {
			snprintf(r.msg, sizeof(r.msg),
				 "cannot open the pinned state in %s: %s (is bloomgate attached?)",
				 bg_pin_dir(), strerror(-ret));
			r.failed = BG_STAGE_BUILD;
		} else {
			ret = bg_load_commit(&st, &o, &bl, &r);
			bg_state_close(&st);
			j->seed = r.seed;
		}
	}
	bg_blocklist_free(&bl);
	if (ret) {
		agent_log("rebuild failed (%s): %s; the running filter is unchanged",
			  bg_load_stage_name(r.failed), r.msg);
		snprintf(j->msg, sizeof(j->msg), "rebuild failed (%s): %s",
			 bg_load_stage_name(r.failed), r.msg);
		goto store;
	}
	job_published(j, &r);
	agent_log("filter %llu live: %llu keys, %zu bytes, %.2f bits/key, "
		  "built in %.0f ms, swapped in %.1f ms",
		  (unsigned long long)j->generation, (unsigned long long)r.plan.n,
		  r.plan.bytes, r.plan.bits_per_entry, j->filter.build_seconds * 1e3,
		  r.ms[BG_STAGE_PUBLISH]);
	if (r.reshaped && r.grown)
		agent_log("the %scapacity is now %u elements (%llu keys): new "
			  "programs swapped in", r.reshaped == 2 ? "growing " : "",
			  r.grown, (unsigned long long)bg_filter_capacity_keys(r.grown));
	else if (r.reshaped)
		agent_log("the capacity is now any size: new programs swapped in");
	/* live, but `check` cannot name its entries: say so */
	if (r.failed == BG_STAGE_RECORD)
		agent_log("the load record was not written: %s", r.msg);
store:
	if (j->published) {
		/* live since the swap, before the description is saved */
		j->timing.live_at = agent_wall();
		save_filter(j, r.filter_id);
		j->timing.parse = r.ms[BG_STAGE_PARSE];
		j->timing.plan = r.ms[BG_STAGE_PLAN];
		j->timing.build = r.ms[BG_STAGE_BUILD];
		j->timing.swap = r.ms[BG_STAGE_PUBLISH];
		j->timing.seen = j->change_seen;
		j->timing.fetch = j->fetch_ms;
	}
out:
	bg_premap_drop(&pm);
	if (!j->published) {
		/* not live: the indexes stay those of the live filter's copies */
		bg_prov_abort(j->pw);
		j->pw = NULL;
	}
	j->ret = ret;
	if (ret && !j->msg[0])
		snprintf(j->msg, sizeof(j->msg), "%s", j->nothing ?
			 "no block list has a good copy yet" : strerror(-ret));
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
	free(map);
	free(ps);
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
	for (i = 0; i < j->n; i++) {
		struct rb_src *r = &j->v[i];
		struct src *s = src_find(a, r->list.name);

		if (!s)
			continue; /* removed by a reload meanwhile */
		if (r->cand && s->phase == SRC_IN_REBUILD &&
		    !strcmp(s->cand_sha, r->cand_sha)) {
			s->phase = SRC_IDLE;
			if (r->verdict == 1) {
				memcpy(s->sha256, r->cand_sha, sizeof(s->sha256));
				s->have_copy = 1;
				if (s->cfg->list.url)
					s->v = s->cand_v;
				s->entries = r->entries;
				s->last_ok = agent_wall();
				s->failed_in_row = 0;
				s->last_error[0] = 0;
				src_set_state(s, "ok", NULL);
				agent_log("source %s: new copy, %llu entries",
					  s->cfg->list.name, (unsigned long long)r->entries);
			} else if (r->verdict < 0) {
				/* its decisions are written again at the next
				 * pull (the refused copy is gone) */
				if (s->cs)
					s->cs->written = 0;
				memcpy(s->refused_sha, r->cand_sha, sizeof(s->refused_sha));
				snprintf(s->refused_why, sizeof(s->refused_why), "%s", r->why);
				s->failures++;
				s->failed_in_row++;
				snprintf(s->last_error, sizeof(s->last_error), "%s", r->why);
				src_set_state(s, "failing", r->why);
				if (s->cfg->refresh > 0 && !s->due)
					s->due = agent_mono() +
						 bg_backoff(s->failed_in_row, RETRY_BASE,
							    s->cfg->refresh < RETRY_MAX ?
								    s->cfg->refresh : RETRY_MAX,
							    agent_rnd());
			} else {
				/* not reached by a load that failed before it:
				 * the next rebuild judges it */
				s->phase = SRC_CANDIDATE;
			}
		} else if (r->counted && r->have_copy && !strcmp(s->sha256, r->sha)) {
			s->entries = r->entries;
		}
	}
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
	pthread_mutex_unlock(&a->lock);
	/* a full rebuild: kept for small changes (a fast one keeps its own) */
	if (j->published && !j->fast && !j->artifact)
		incr_later(a, j);
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
		struct src *s = src_find(a, j->v[i].list.name);

		if (s && j->v[i].cand)
			store_put(a, s);
		bg_list_desc_free(&j->v[i].list);
	}
	reloads_answer(a, j->seq, j->ret ? j->msg : NULL);
	/* the fleet hears at once what this gateway enforces now */
	if (a->fleet && !j->nothing)
		a->fleet_report_due = agent_mono();
	sd_notifyf(0, "STATUS=generation %llu, %zu sources",
		   (unsigned long long)a->generation, a->nsrc);
	desc_free(&j->built);
	free(j->v);
	free(j->state_dir);
	free(j->protect);
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
	j->reshape = a->reshape;
	j->reshape_cap = a->reshape_cap;
	j->reshape_grow = a->reshape_grow;
	j->seq = ++a->rb_started;
	j->generation = a->generation + 1;
	for (i = 0; i < a->nsrc; i++) {
		struct src *s = &a->src[i];
		struct rb_src *r = &j->v[j->n];

		if (s->phase != SRC_CANDIDATE && !s->have_copy)
			continue;
		if (bg_list_desc_dup(&r->list, &s->cfg->list))
			continue;
		r->max_shrink = s->cfg->max_shrink;
		r->kind = s->cfg->kind;
		j->allow_empty |= r->kind == BG_SRC_CROWDSEC;
		memcpy(r->copy, s->copy, sizeof(r->copy));
		memcpy(r->sha, s->sha256, sizeof(r->sha));
		r->have_copy = s->have_copy;
		r->prev_entries = s->have_copy ? s->entries : 0;
		if (s->phase == SRC_CANDIDATE) {
			r->cand = 1;
			memcpy(r->cand_sha, s->cand_sha, sizeof(r->cand_sha));
			s->phase = SRC_IN_REBUILD;
			if (!j->change_seen || s->cand_seen < j->change_seen)
				j->change_seen = s->cand_seen;
			j->fetch_ms += s->cand_fetch_ms;
		}
		j->n++;
	}
	if (!j->change_seen)
		j->change_seen = a->reload_seen ? a->reload_seen : agent_wall();
	a->reload_seen = 0;
	a->rebuilding = 1;
	work_main(a, &j->j);
}

void want_rebuild(struct agent *a, int now)
{
	double t = agent_mono() + (now ? 0 : a->cfg.debounce);

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
	    a->rebuild_at > agent_mono())
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

/* ---- the provenance indexes, following the copies (store thread) ------- */

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
	double t = bg_now_ms();
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
			  j->timing.swap, j->timing.live_at, bg_now_ms() - t);
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
		const struct src *s = &a->src[i];
		struct bg_prov_source *r = &j->v[j->n];

		if ((j->names[j->nnames] = strdup(s->cfg->list.name)))
			j->nnames++;
		/* a rebuild's writer knows its lists; else every copy is
		 * re-indexed where its index is missing or of another copy
		 * (an artifact has its own index, in it) */
		if (pw || !s->have_copy || BG_SRC_BUILT(s->cfg->kind))
			continue;
		/* the job's own copies: a reload may free the config */
		if (bg_list_desc_dup(&r->list, &s->cfg->list))
			continue;
		r->copy = strdup(s->copy);
		r->sha256 = dup_or_null(s->sha256);
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
			int k;

			a->art_live = 1;
			a->art_generation = (uint64_t)json_object_get_int64(g);
			if (json_object_object_get_ex(o, "artifact_applied_at", &g))
				a->art_applied_at = json_object_get_double(g);
			if (json_object_object_get_ex(o, "artifact_sha256", &g) &&
			    (h = json_object_get_string(g)) && strlen(h) == 64)
				for (k = 0; k < 32; k++) {
					unsigned int b;

					if (sscanf(h + 2 * k, "%2x", &b) == 1)
						a->art_digest[k] = (uint8_t)b;
				}
		}
		pthread_mutex_unlock(&a->lock);
		agent_log("the live filter is built from these copies: adopted "
			  "(generation %llu)", (unsigned long long)a->generation);
		sync_store_entries(a, NULL, NULL);
	}
	json_object_put(o);
	return ok;
}
