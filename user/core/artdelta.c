// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Deltas between two full artifacts of one plan (core/artifact.h): the
 * 64-byte elements of FILTER and INDEX that differ, written by a
 * publisher, applied by a gateway to the generation it holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/artifact.h"
#include "core/par.h"
#include "core/units.h"

static const char *const sec_names[BG_ART_SEC__COUNT] = {
	"sources", "filter", "index", "delta", "digests",
};

struct diff_job {
	const uint8_t *a, *b;
	size_t nelems;
	unsigned int nt;
	uint32_t *idx[BG_PARSE_WORKERS_MAX];
	size_t n[BG_PARSE_WORKERS_MAX];
	int nomem;
};

static void job_diff(void *ctx, unsigned int t)
{
	struct diff_job *j = ctx;
	size_t e0 = j->nelems * t / j->nt, e1 = j->nelems * (t + 1) / j->nt, e;
	size_t cap = 0, n = 0;
	uint32_t *v = NULL;

	for (e = e0; e < e1; e++) {
		if (!memcmp(j->a + e * 64, j->b + e * 64, 64))
			continue;
		if (bg_grow(&v, &cap, n + 1, sizeof(*v), 1024)) {
			j->nomem = 1;
			break;
		}
		v[n++] = (uint32_t)e;
	}
	j->idx[t] = v;
	j->n[t] = n;
}

/* The elements of a and b (nelems each) that differ, appended to out as
 * patches of section sec. */
static int diff_sec(const uint8_t *a, const uint8_t *b, size_t nelems, __u32 sec,
		    struct bg_art_patch **out, size_t *n, size_t *cap,
		    unsigned int threads)
{
	struct diff_job j = { .a = a, .b = b, .nelems = nelems };
	unsigned int t;
	int ret = 0;

	j.nt = bg_par_threads(threads);
	bg_par_run(j.nt, job_diff, &j);
	for (t = 0; t < j.nt; t++) {
		size_t i;

		if (!ret && (j.nomem || *n + j.n[t] > *cap)) {
			size_t nc = (*n + j.n[t]) * 2 + 16;
			struct bg_art_patch *np = j.nomem ? NULL :
						  realloc(*out, nc * sizeof(**out));

			if (!np)
				ret = -ENOMEM;
			else {
				*out = np;
				*cap = nc;
			}
		}
		for (i = 0; !ret && i < j.n[t]; i++) {
			struct bg_art_patch *p = &(*out)[(*n)++];

			p->sec = sec;
			p->elem = j.idx[t][i];
			memcpy(p->data, b + (size_t)j.idx[t][i] * 64, 64);
		}
		free(j.idx[t]);
	}
	return ret;
}

int bg_art_delta_write_fd(int fd, const struct bg_art *base,
			  const struct bg_art *res, uint64_t generation,
			  unsigned int threads, size_t *patches)
{
	static const int secs[] = { BG_ART_SEC_FILTER, BG_ART_SEC_INDEX };
	struct bg_art_patch *pv = NULL;
	struct bg_art_header h;
	struct bg_art_parts parts;
	size_t n = 0, cap = 0, i;
	uint8_t *delta;
	int ret = 0;

	if (base->h->kind != BG_ART_FULL || res->h->kind != BG_ART_FULL ||
	    base->h->plan.seed != res->h->plan.seed)
		return -EXDEV;
	for (i = 0; i < 2; i++)
		if (base->h->sec[secs[i]].len != res->h->sec[secs[i]].len ||
		    base->h->sec[secs[i]].len % 64)
			return -EXDEV;
	for (i = 0; !ret && i < 2; i++) {
		size_t la, lb;
		const uint8_t *a = bg_art_sec(base, secs[i], &la);
		const uint8_t *b = bg_art_sec(res, secs[i], &lb);

		if (la)
			ret = diff_sec(a, b, la / 64, (__u32)secs[i], &pv, &n, &cap,
				       threads);
	}
	if (ret) {
		free(pv);
		return ret;
	}
	delta = malloc(BG_ART_HEADER + n * sizeof(*pv));
	if (!delta) {
		free(pv);
		return -ENOMEM;
	}
	memcpy(delta, res->h, BG_ART_HEADER);
	if (n)
		memcpy(delta + BG_ART_HEADER, pv, n * sizeof(*pv));
	free(pv);
	memset(&h, 0, sizeof(h));
	h.kind = BG_ART_DELTA;
	h.generation = generation ? generation : res->h->generation;
	h.base_generation = base->h->generation;
	h.created = res->h->created;
	h.nsources = res->h->nsources;
	h.plan = res->h->plan;
	memcpy(h.base_sha256, base->h->digest, BG_ART_SHA);
	memcpy(h.result_sha256, res->h->digest, BG_ART_SHA);
	/* the files' own checksums: a gateway checks the result byte for
	 * byte, and `inspect` names them as sha256sum does */
	bg_sha256(base->base, base->len, h.base_file_sha256);
	bg_sha256(res->base, res->len, h.result_file_sha256);
	memset(&parts, 0, sizeof(parts));
	parts.data[BG_ART_SEC_SOURCES] = bg_art_sec(res, BG_ART_SEC_SOURCES,
						    &parts.len[BG_ART_SEC_SOURCES]);
	parts.data[BG_ART_SEC_DELTA] = delta;
	parts.len[BG_ART_SEC_DELTA] = BG_ART_HEADER + n * sizeof(*pv);
	ret = bg_art_write_fd(fd, &h, &parts, threads, NULL);
	free(delta);
	if (patches)
		*patches = n;
	return ret;
}

/* The result's FILTER and INDEX: base's, copied (img, parts), with d's
 * patches applied: each inside its section, in (section, element) order,
 * each element once, as bg_art_delta_write_fd() writes them. */
static int patch_images(const struct bg_art *base, const struct bg_art *d,
			uint8_t **img, struct bg_art_parts *parts, char *why,
			size_t whylen)
{
	const struct bg_art_patch *pv;
	const struct bg_art_header *rh;
	const uint8_t *dsec;
	size_t dlen, n, i;
	int s;

	dsec = bg_art_sec(d, BG_ART_SEC_DELTA, &dlen);
	rh = (const void *)dsec;
	for (s = BG_ART_SEC_FILTER; s <= BG_ART_SEC_INDEX; s++) {
		size_t bl;
		const void *b = bg_art_sec(base, s, &bl);

		if (bl != rh->sec[s].len) {
			bg_whyf(why, whylen, "the delta's %s section has another size than "
			     "the base's", sec_names[s]);
			return -EBADMSG;
		}
		if (!bl)
			continue;
		img[s] = malloc(bl);
		if (!img[s])
			return -ENOMEM;
		memcpy(img[s], b, bl);
		parts->data[s] = img[s];
		parts->len[s] = bl;
	}
	pv = (const void *)(dsec + BG_ART_HEADER);
	n = (dlen - BG_ART_HEADER) / sizeof(*pv);
	for (i = 0; i < n; i++) {
		if ((pv[i].sec != BG_ART_SEC_FILTER && pv[i].sec != BG_ART_SEC_INDEX) ||
		    (uint64_t)pv[i].elem * 64 + 64 > parts->len[pv[i].sec]) {
			bg_whyf(why, whylen, "patch %zu (section %u, element %u) is out "
				"of range", i, pv[i].sec, pv[i].elem);
			return -EBADMSG;
		}
		if (i && (pv[i].sec < pv[i - 1].sec ||
			  (pv[i].sec == pv[i - 1].sec && pv[i].elem <= pv[i - 1].elem))) {
			bg_whyf(why, whylen, "patch %zu (section %u, element %u) is out "
				"of order", i, pv[i].sec, pv[i].elem);
			return -EBADMSG;
		}
		memcpy(img[pv[i].sec] + (size_t)pv[i].elem * 64, pv[i].data, 64);
	}
	return 0;
}

int bg_art_delta_apply(const struct bg_art *base, const struct bg_art *d,
		       const char *path, unsigned int threads,
		       uint8_t file_sha[BG_ART_SHA], char *why, size_t whylen)
{
	uint8_t *img[BG_ART_SEC__COUNT] = { 0 };
	struct bg_art_parts parts;
	struct bg_art_header h;
	size_t dlen;
	int ret, s;

	if (why && whylen)
		*why = 0;
	if (d->h->kind != BG_ART_DELTA) {
		bg_whyf(why, whylen, "not a delta");
		return -EINVAL;
	}
	if (base->h->kind != BG_ART_FULL ||
	    memcmp(base->h->digest, d->h->base_sha256, BG_ART_SHA)) {
		bg_whyf(why, whylen, "a delta against another base (generation %"
		     PRIu64 "): this gateway runs generation %" PRIu64,
		     (uint64_t)d->h->base_generation, (uint64_t)base->h->generation);
		return -ESTALE;
	}
	/* its result header was checked as any header when d was opened
	 * (bg_art_check()) */
	memset(&parts, 0, sizeof(parts));
	ret = patch_images(base, d, img, &parts, why, whylen);
	if (!ret) {
		parts.data[BG_ART_SEC_SOURCES] =
			bg_art_sec(d, BG_ART_SEC_SOURCES, &parts.len[BG_ART_SEC_SOURCES]);
		/* The result's header, its sections recomputed from what the
		 * patches made: its digest is then the one the delta names
		 * only if every section came out as the publisher's did. */
		h = *(const struct bg_art_header *)bg_art_sec(d, BG_ART_SEC_DELTA, &dlen);
		ret = bg_art_write_as(path, &h, &parts, threads, d->h->result_sha256,
				      d->h->result_file_sha256, file_sha);
		if (ret == -EBADMSG)
			bg_whyf(why, whylen, "the result of the delta does not match "
				"its checksum");
		else if (ret)
			bg_whyf(why, whylen, "cannot write %s: %s", path, strerror(-ret));
	}
	for (s = 0; s < BG_ART_SEC__COUNT; s++)
		free(img[s]);
	return ret;
}
