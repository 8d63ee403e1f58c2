// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The driver of an artifact source (user/agent/source.h): a filter built
 * elsewhere (`bloomgate build`), a file or a URL, fetched as a list is
 * (src_list.c) and checked whole at the boundary: a new copy is opened
 * and every section verified against its checksum on the fetch thread,
 * so a damaged, truncated or foreign file is refused there with its
 * reason and never reaches the rebuild. Its apply (the fleet driver's
 * too) copies the copy into a new filter map, verifying it again as it
 * goes, and swaps it in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_priv.h"
#include "agent/protect.h"
#include "agent/rebuild.h"
#include "core/sha.h"
#include "core/url.h"
#include "kern/artifact.h"
#include "kern/load.h"
#include "kern/pins.h"
#include "kern/swap.h"

/* 0 when the file at path is a whole artifact whose sections all verify;
 * else 1 with why. entries: the keys it was built from. */
static int art_good(const char *path, uint64_t *entries, char *why, size_t len)
{
	struct bg_art a;
	int bad = bg_art_open(path, &a, why, len) ||
		  bg_art_verify(&a, ~0u, NULL, 0, why, len);

	if (!bad && a.h->kind != BG_ART_FULL) {
		bad = 1;
		snprintf(why, len, "a delta, not a whole filter");
	}
	if (!bad && entries)
		*entries = a.h->plan.prefixes4 + a.h->plan.prefixes6 + a.h->plan.names;
	if (a.h)
		bg_art_close(&a);
	return bad;
}

static void art_fetch(void *job, const char *copy, const char *kept_sha,
		      struct bg_fetch_validators *v, struct bg_fetch_result *r,
		      const int *quit)
{
	char cand[PATH_MAX + 8], why[sizeof(r->err)];

	src_file_fetch(job, copy, kept_sha, v, r, quit);
	if (r->outcome != BG_FETCH_CHANGED ||
	    bg_fetch_candidate(copy, cand, sizeof(cand)) ||
	    !art_good(cand, &r->entries, why, sizeof(why)))
		return;
	bg_fetch_discard(copy);
	r->outcome = BG_FETCH_FAILED;
	snprintf(r->err, sizeof(r->err), "new copy refused: %.230s", why);
}

static int art_check(const struct bg_config *cfg, const struct bg_cfg_list *l,
		     const char *dir, const struct bg_protect_set *ps,
		     FILE *out)
{
	char copy[PATH_MAX], cand[PATH_MAX + 8], url[1024], why[256] = "";
	struct bg_fetch_validators v = { { 0 }, { 0 } };
	struct bg_fetch_result r;
	struct bg_fetch_src f;
	uint64_t entries = 0;

	(void)ps; /* an artifact is judged against the set where it is applied */
	src_fetch_opts(cfg, l, &f);
	bg_url_redact(bg_list_origin(&l->list), url, sizeof(url));
	snprintf(copy, sizeof(copy), "%s/%s.list", dir, l->list.name);
	if (bg_fetch(&f, copy, &v, &r) || r.outcome == BG_FETCH_FAILED) {
		fprintf(out, "list %s (%s): FAILED: %s\n", l->list.name, url, r.err);
		return 1;
	}
	if (bg_fetch_candidate(copy, cand, sizeof(cand)) ||
	    art_good(cand, &entries, why, sizeof(why))) {
		bg_fetch_discard(copy);
		fprintf(out, "list %s (%s): FAILED: %s\n", l->list.name, url, why);
		return 1;
	}
	bg_fetch_discard(copy);
	fprintf(out, "list %s (%s): ok, %llu entries, 0 rejected lines\n",
		l->list.name, url, (unsigned long long)entries);
	return 0;
}

const struct src_ops src_artifact_ops = {
	.kind = "artifact",
	.built = 1,
	.retry_base = RETRY_BASE,
	.open = src_watch_open,
	.fetch_begin = src_file_fetch_begin,
	.fetch = art_fetch,
	.fetch_end = src_file_fetch_end,
	.apply = src_built_apply,
	.check = art_check,
};

/* ---- the apply ------------------------------------------------------------ */

/* The live filter is this copy's already: this agent's now, as if adopted
 * (a restart whose new copy was refused). */
static void keep_live(struct rb_job *j, const struct rb_src *s)
{
	struct bg_state ro;
	struct bg_art a;
	char why[256];

	if (bg_art_open(s->copy, &a, why, sizeof(why)))
		return;
	j->art = *a.h;
	bg_sha_unhex(s->sha, j->art_sha);
	bg_art_close(&a);
	if (!bg_state_open(&ro, 0)) {
		j->filter_id = bg_filter_current_id(ro.filters_fd);
		bg_state_close(&ro);
	}
	j->kept_live = j->filter_id != 0;
}

/* file verified while it is copied into a new map and swapped in: 0, or
 * -errno with r filled; *opened: a is open (the caller closes it). */
static int commit(const char *file, const struct rb_job *j, const struct rb_src *s,
		  struct bg_art *a, int *opened, struct bg_load_report *r,
		  char *why, size_t len)
{
	struct bg_state st;
	int ret = bg_art_open(file, a, why, len);

	if (ret)
		return ret;
	*opened = 1;
	clean_gone();
	ret = bg_state_open(&st, 1);
	if (ret) {
		snprintf(r->msg, sizeof(r->msg), "cannot open the pinned state in "
			 "%s: %s (is bloomgate attached?)", bg_pin_dir(),
			 strerror(-ret));
		r->failed = BG_STAGE_BUILD;
		return ret;
	}
	/* the record names the copy, which the candidate becomes right after */
	ret = bg_art_commit(&st, a, s->copy, 0, 0, j->ps, r);
	bg_state_close(&st);
	if (ret && r->failed == BG_STAGE_PARSE)
		snprintf(why, len, "%s", r->msg);
	return ret;
}

/* The description of the filter the copy (or candidate) makes: 0 or
 * -ENOMEM. */
static int describe_one(struct rb_job *j, const struct rb_src *s, int cand)
{
	struct desc_list l = { .list = s->list };
	int ret;

	desc_free(&j->built);
	j->built.fpr = j->fpr;
	j->built.confirm = j->confirm;
	memcpy(l.sha256, cand ? s->cand_sha : s->sha, sizeof(l.sha256));
	ret = desc_add(&j->built, &l);
	return ret ? ret : desc_seal(&j->built);
}

/* The copy (or the candidate, while it is not refused) verified and
 * swapped in; a candidate that is not an artifact, damaged or of another
 * ABI is refused and the last good copy used. 0, 1 when the live filter
 * is the copy's already (nothing swapped), or -errno. */
static int apply_copy(struct rb_job *j, struct rb_src *s, struct bg_art *a,
		      int *opened, struct bg_load_report *r)
{
	char cand[PATH_MAX + 8], why[512];
	int use_cand = s->cand, ret;

	if (bg_fetch_candidate(s->copy, cand, sizeof(cand)))
		return -ENAMETOOLONG;
	for (;;) {
		if (!use_cand && !s->have_copy) {
			agent_log("no good artifact yet: %s", rb_unchanged(j));
			j->nothing = 1;
			return -ENODATA;
		}
		if (describe_one(j, s, use_cand)) {
			snprintf(j->msg, sizeof(j->msg), "out of memory");
			return -ENOMEM;
		}
		if (!use_cand && j->live_fp[0] && !strcmp(j->live_fp, j->built.fp)) {
			keep_live(j, s);
			return 1;
		}
		ret = commit(use_cand ? cand : s->copy, j, s, a, opened, r, why,
			     sizeof(why));
		if (ret && (!*opened || r->failed == BG_STAGE_PARSE) && use_cand) {
			if (*opened)
				bg_art_close(a);
			*opened = 0;
			s->verdict = -1;
			snprintf(s->why, sizeof(s->why), "%.250s", why);
			bg_fetch_discard(s->copy);
			agent_log("source %s: new copy refused: %s; the last good "
				  "copy is used", s->list.name, s->why);
			use_cand = 0;
			bg_load_report_free(r);
			bg_load_report_init(r);
			continue;
		}
		if (ret && !*opened)
			snprintf(r->msg, sizeof(r->msg), "the last good artifact: %.400s",
				 why);
		return ret;
	}
}

void src_built_apply(struct rb_job *j)
{
	struct rb_src *s = &j->v[0];
	struct bg_load_report r;
	struct bg_art a = { 0 };
	int ret, opened = 0;

	bg_load_report_init(&r);
	ret = apply_copy(j, s, &a, &opened, &r);
	if (opened && s->cand && s->verdict >= 0) {
		/* verified whole: the last good copy now, whatever the swap did */
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
		/* named by its file's SHA-256: the one applied */
		bg_sha_unhex(s->cand && s->verdict > 0 ? s->cand_sha : s->sha,
			     j->art_sha);
		bg_art_close(&a);
	}
	if (ret < 0 && !j->nothing) {
		agent_log("swap failed (%s): %s; %s", bg_load_stage_name(r.failed),
			  r.msg, rb_unchanged(j));
		snprintf(j->msg, sizeof(j->msg), "swap failed (%s): %s",
			 bg_load_stage_name(r.failed), r.msg);
	} else if (ret == 0) {
		j->artifact = 1;
		rb_published(j, &r);
		agent_log("filter %llu live: artifact generation %llu, %llu keys, %zu "
			  "bytes, verified and copied in %.0f ms, swapped in %.1f ms",
			  (unsigned long long)j->generation,
			  (unsigned long long)j->art.generation,
			  (unsigned long long)r.plan.n, r.plan.bytes,
			  r.ms[BG_STAGE_BUILD], r.ms[BG_STAGE_PUBLISH]);
		/* entries over this gateway's protected set, from its index */
		agent_protect_say(NULL, &r.covers, NULL, NULL);
		if (r.reshaped)
			agent_log("the growing capacity is now %u elements (the "
				  "artifact's shape): new programs swapped in", r.grown);
		if (r.failed == BG_STAGE_RECORD)
			agent_log("the load record was not written: %s", r.msg);
		rb_timed(j, &r);
	}
	if (ret == 1)
		ret = 0;
	j->ret = ret;
	if (ret && !j->msg[0])
		snprintf(j->msg, sizeof(j->msg), "%s", j->nothing ?
			 "no good artifact yet" : strerror(-ret));
	bg_load_report_free(&r);
}
