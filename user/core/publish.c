// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A publisher's next generation (core/publish.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/units.h"
#include "core/artbuild.h"
#include "core/artifact.h"
#include "core/artindex.h"
#include "core/format.h"
#include "core/patch.h"
#include "core/publish.h"

static void whyf(struct bg_pub_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void whyf(struct bg_pub_result *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bg_vwhyf(res->why_full, sizeof(res->why_full), fmt, ap);
	va_end(ap);
}

static int item_cmp(const struct bg_ai_item *a, const struct bg_ai_item *b)
{
	if (a->h != b->h)
		return a->h < b->h ? -1 : 1;
	if (a->source != b->source)
		return a->source < b->source ? -1 : 1;
	if (a->cls != b->cls)
		return a->cls < b->cls ? -1 : 1;
	if (a->plen != b->plen)
		return a->plen < b->plen ? -1 : 1;
	return 0;
}

/* The base's lists read again from the cache, as the base read them: the
 * format it used, its read options, in its order. */
static int old_sources(const struct bg_art_sources *bs, const char *cache,
		       struct bg_sources *srcs, struct bg_pub_result *res)
{
	size_t i;

	bg_sources_init(srcs);
	for (i = 0; i < bs->n; i++) {
		const struct bg_art_source *e = &bs->v[i];
		struct bg_list_desc d = { .name = e->name };
		char path[PATH_MAX];
		char sha[65];
		int f = bg_format_parse(e->format);

		if (f <= 0 || strlen(e->sha256) != 64) {
			whyf(res, "the base's list %s is not described", e->name);
			return -EXDEV;
		}
		snprintf(path, sizeof(path), "%s/%s", cache, e->sha256);
		if (bg_sha256_file(path, sha) || strcmp(sha, e->sha256)) {
			whyf(res, "the base's list %s is not in the publisher's cache "
			     "(%s)", e->name, cache);
			return -EXDEV;
		}
		d.format = (uint8_t)f;
		d.subdomains = (uint8_t)e->subdomains;
		d.allow = !strcmp(e->role, "allow");
		d.allow_wide = (uint8_t)e->allow_wide;
		if (bg_sources_add_list(srcs, path, &d))
			return -ENOMEM;
	}
	return 0;
}

/* The same options and the same lists in the same order (their numbers
 * are the index's records): else no delta. */
static int same_shape(const struct bg_art_sources *bs, const struct bg_art_sources *ns,
		      struct bg_pub_result *res)
{
	size_t i;

	if (bs->fpr != ns->fpr || bs->confirm != ns->confirm ||
	    bs->allow_wide != ns->allow_wide || bs->capacity != ns->capacity) {
		whyf(res, "the options changed (rate, stage, wide prefixes or "
		     "capacity)");
		return 0;
	}
	if (bs->n != ns->n) {
		whyf(res, "lists were added or removed");
		return 0;
	}
	for (i = 0; i < bs->n; i++) {
		const struct bg_art_source *b = &bs->v[i], *n = &ns->v[i];

		if (strcmp(b->name, n->name) || strcmp(b->role, n->role) ||
		    strcmp(b->format, n->format) || b->subdomains != n->subdomains ||
		    b->allow_wide != n->allow_wide) {
			whyf(res, "list %zu changed its name, role or format (%s)", i,
			     n->name);
			return 0;
		}
	}
	return 1;
}

/* The old lists parsed as the base parsed them: their blocklist and index
 * items. */
static int parse_old(const struct bg_pub_opts *o, const struct bg_art_sources *bs,
		     uint64_t seed, struct bg_blocklist *bl, struct bg_ai_item **items,
		     size_t *nitems, struct bg_pub_result *res)
{
	struct bg_load_opts lo = { .fpr = bs->fpr, .confirm_off = !bs->confirm,
				   .allow_wide = bs->allow_wide, .strict = 0,
				   .threads = o->threads,
				   .max_list_bytes = o->load->max_list_bytes,
				   .max_entries = o->load->max_entries };
	struct bg_ai_collector *c = NULL;
	struct bg_load_report r;
	struct bg_sources srcs;
	int ret;

	bg_blocklist_init(bl);
	ret = old_sources(bs, o->cache, &srcs, res);
	if (ret) {
		bg_sources_free(&srcs);
		return ret;
	}
	ret = bg_ai_collector_new(seed, &c);
	if (ret) {
		bg_sources_free(&srcs);
		return ret;
	}
	lo.sources = &srcs;
	lo.entry = bg_ai_entry;
	lo.entry_ctx = c;
	bg_load_report_init(&r);
	ret = bg_load_prepare(&lo, bl, &r);
	if (ret) {
		whyf(res, "the base's lists do not parse again: %.200s", r.msg);
		ret = -EXDEV;
	}
	if (!ret)
		ret = bg_ai_items(c, items, nitems);
	bg_load_report_free(&r);
	bg_ai_collector_free(c);
	bg_sources_free(&srcs);
	return ret;
}

/* old -> new in a copy of the base's index: removals first (their slots
 * free room for the additions). */
static int patch_index(void *img, size_t len, const struct bg_ai_item *ov,
		       size_t on, const struct bg_ai_item *nv, size_t nn,
		       struct bg_pub_result *res)
{
	size_t i = 0, j = 0;
	int ret = 0, c, pass;

	for (pass = 0; pass < 2 && !ret; pass++) {
		i = j = 0;
		while ((i < on || j < nn) && !ret) {
			c = i == on ? 1 : j == nn ? -1 : item_cmp(&ov[i], &nv[j]);
			if (c == 0) {
				i++;
				j++;
			} else if (c < 0) {
				if (pass == 0) {
					ret = bg_ai_remove(img, len, &ov[i]);
					res->items_removed++;
				}
				i++;
			} else {
				if (pass == 1) {
					ret = bg_ai_add(img, len, &nv[j]);
					res->items_added++;
				}
				j++;
			}
		}
	}
	if (ret == -ENOSPC)
		whyf(res, "the index has no room for the new entries");
	else if (ret)
		whyf(res, "the base's index does not hold its lists' entries (%s)",
		     strerror(-ret));
	return ret;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

static double now_ms(void)
{
	return bg_mono_ms();
}

/* The delta generation, when it can be made: 0 with out_full and
 * out_delta written; -EXDEV (res->why_full says why) when a full one must
 * be shipped; another -errno on a failure. */
static int try_delta(const struct bg_pub_opts *o, struct bg_art_built *nb,
		     struct bg_pub_result *res)
{
	struct bg_art base, full;
	struct bg_art_sources bs, ns;
	struct bg_blocklist old;
	struct bg_ai_item *oitems = NULL;
	struct bg_filter_params p;
	struct bg_patch_result pr;
	struct bg_art_header h;
	struct bg_art_parts parts;
	size_t oi = 0, flen, ilen;
	const void *bf, *bi;
	void *img = NULL, *idx = NULL;
	uint8_t fsha[BG_ART_SHA];
	char why[300];
	double t0 = now_ms(), target;
	int ret, fd, base_open = 0;

	memset(&bs, 0, sizeof(bs));
	memset(&ns, 0, sizeof(ns));
	bg_blocklist_init(&old);
	ret = bg_art_open(o->base, &base, why, sizeof(why));
	if (ret) {
		whyf(res, "the base cannot be read: %.250s", why);
		return -EXDEV;
	}
	base_open = 1;
	if (base.h->kind != BG_ART_FULL ||
	    bg_art_verify(&base, ~0u, NULL, o->threads, why, sizeof(why))) {
		whyf(res, "the base is damaged: %.250s", why);
		ret = -EXDEV;
		goto out;
	}
	if (bg_art_sources_read(&base, &bs) ||
	    bg_art_sources_parse(nb->sources, nb->sources_len, &ns)) {
		whyf(res, "the base's lists are not described");
		ret = -EXDEV;
		goto out;
	}
	if (!same_shape(&bs, &ns, res)) {
		ret = -EXDEV;
		goto out;
	}
	ret = parse_old(o, &bs, base.h->plan.seed, &old, &oitems, &oi, res);
	if (ret)
		goto out;
	res->ms_parse = now_ms() - t0;
	t0 = now_ms();
	/* the filter: a copy of the base's, patched from the old lists to
	 * the new */
	bf = bg_art_sec(&base, BG_ART_SEC_FILTER, &flen);
	bi = bg_art_sec(&base, BG_ART_SEC_INDEX, &ilen);
	img = malloc(flen);
	idx = malloc(ilen ? ilen : 1);
	if (!img || !idx) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(img, bf, flen);
	memcpy(idx, bi, ilen);
	bg_art_plan_params(&base.h->plan, &p);
	ret = bg_filter_patch(img, &p, base.h->plan.bloom_loaded, &old, &nb->bl,
			      o->threads, &pr, why, sizeof(why));
	if (ret == -EXDEV) {
		whyf(res, "%.280s", why);
		goto out;
	}
	if (ret)
		goto out;
	res->keys_added = pr.added;
	res->keys_removed = pr.removed;
	res->predicted_addr = pr.plan.predicted_addr;
	target = base.h->plan.target;
	if (pr.plan.predicted_addr > (o->bound > 0 ? o->bound : BG_PUB_RATE_BOUND) * target) {
		whyf(res, "the keys removed since the last full generation raised "
		     "the Bloom part's rate to %.3g (target %g): built anew",
		     pr.plan.predicted_addr, target);
		ret = -EXDEV;
		goto out;
	}
	ret = patch_index(idx, ilen, oitems, oi, nb->items, nb->nitems, res);
	if (ret) {
		ret = ret == -ENOMEM ? ret : -EXDEV;
		goto out;
	}
	res->ms_patch = now_ms() - t0;
	t0 = now_ms();
	/* the full artifact of the new generation: the base's header, plan
	 * and layout, with the new counts and rates */
	memset(&h, 0, sizeof(h));
	h.kind = BG_ART_FULL;
	h.generation = o->generation;
	h.created = (uint64_t)time(NULL);
	h.nsources = nb->h.nsources;
	bg_art_plan_fill(&h.plan, &pr.plan, base.h->plan.seed);
	h.plan.bloom_loaded = pr.bloom_loaded;
	h.plan.names = nb->h.plan.names;
	h.plan.target = target;
	memset(&parts, 0, sizeof(parts));
	parts.data[BG_ART_SEC_SOURCES] = nb->sources;
	parts.len[BG_ART_SEC_SOURCES] = nb->sources_len;
	parts.data[BG_ART_SEC_FILTER] = img;
	parts.len[BG_ART_SEC_FILTER] = flen;
	parts.data[BG_ART_SEC_INDEX] = idx;
	parts.len[BG_ART_SEC_INDEX] = ilen;
	ret = bg_art_write(o->out_full, &h, &parts, o->threads, fsha);
	if (ret)
		goto out;
	res->h = h;
	bg_sha_hex(fsha, res->sha256);
	ret = bg_art_open(o->out_full, &full, why, sizeof(why));
	if (ret)
		goto out;
	fd = open(o->out_delta, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		bg_art_close(&full);
		goto out;
	}
	ret = bg_art_delta_write_fd(fd, &base, &full, o->generation, o->threads,
				    &res->patches);
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	bg_art_close(&full);
	if (ret) {
		unlink(o->out_delta);
		if (ret == -EXDEV)
			whyf(res, "the patched filter is not the base's size");
		goto out;
	}
	res->full_bytes = file_size(o->out_full);
	res->delta_bytes = file_size(o->out_delta);
	res->ms_write = now_ms() - t0;
	if ((double)res->delta_bytes > BG_PUB_DELTA_SHARE * (double)res->full_bytes) {
		whyf(res, "the delta (%llu bytes) is not much smaller than the "
		     "whole filter (%llu bytes)", (unsigned long long)res->delta_bytes,
		     (unsigned long long)res->full_bytes);
		unlink(o->out_delta);
		/* the patched full artifact stands: a full generation
		 * needs no delta */
		ret = 0;
		goto out;
	}
	res->delta = 1;
out:
	free(img);
	free(idx);
	free(oitems);
	bg_blocklist_free(&old);
	bg_art_sources_free(&bs);
	bg_art_sources_free(&ns);
	if (base_open)
		bg_art_close(&base);
	return ret;
}

/* The seed of the artifact at path; 0 when it cannot be read. */
static uint64_t seed_of(const char *path)
{
	struct bg_art a;
	char why[64];
	uint64_t seed;

	if (bg_art_open(path, &a, why, sizeof(why)))
		return 0;
	seed = a.h->plan.seed;
	bg_art_close(&a);
	return seed;
}

int bg_publish_build(const struct bg_pub_opts *o, struct bg_pub_result *res,
		     struct bg_load_report *r)
{
	struct bg_art_build_opts bo = { .generation = o->generation, .keep = 1 };
	struct bg_load_opts lo = *o->load;
	struct bg_art_built nb;
	struct bg_art a;
	char why[256];
	uint64_t base_seed = !o->full && o->base ? seed_of(o->base) : 0;
	int ret;

	memset(res, 0, sizeof(*res));
	/* A delta keeps the base's seed: its keys and index records must hash
	 * as the base's did. The lists are parsed (and built) once with it. */
	if (base_seed)
		lo.seed = base_seed;
	ret = bg_art_build(&lo, &bo, &nb, r);
	if (ret)
		return ret;
	res->entries = nb.h.plan.prefixes4 + nb.h.plan.prefixes6 + nb.h.plan.names;
	if (o->full)
		whyf(res, "asked for (--full)");
	else if (!o->base)
		whyf(res, "the first generation");
	else if (!base_seed)
		whyf(res, "the base cannot be read");
	else {
		ret = try_delta(o, &nb, res);
		if (!ret) {
			bg_art_built_free(&nb);
			return 0; /* out_full written (and out_delta when made) */
		}
		if (ret != -EXDEV) {
			bg_art_built_free(&nb);
			return bg_load_fail(r, BG_STAGE_BUILD, ret, "cannot make the "
					    "delta: %s", strerror(-ret));
		}
		/* a full generation after all: built anew with its own seed
		 * (the given one, or a fresh one), so that a false positive
		 * of the last seed does not survive it */
		bg_art_built_free(&nb);
		bg_load_report_free(r);
		bg_load_report_init(r);
		ret = bg_art_build(o->load, &bo, &nb, r);
		if (ret)
			return ret;
	}
	/* full: the new lists' own build */
	ret = bg_art_built_write(&nb, o->out_full, o->threads, res->sha256);
	if (!ret && !bg_art_open(o->out_full, &a, why, sizeof(why))) {
		res->h = *a.h;
		bg_art_close(&a);
	}
	res->full_bytes = file_size(o->out_full);
	bg_art_built_free(&nb);
	if (ret)
		return bg_load_fail(r, BG_STAGE_BUILD, ret, "cannot write %s: %s",
				    o->out_full, strerror(-ret));
	return 0;
}

/* cp src dst (dst's directory exists): a temporary file renamed. */
static int copy_file(const char *src, const char *dst)
{
	char tmp[PATH_MAX + 16], buf[1 << 16];
	int in, out, ret = 0;
	ssize_t n;

	snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		ret = -errno;
		close(in);
		return ret;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			ret = -EIO;
			break;
		}
	if (n < 0)
		ret = -errno;
	close(in);
	if (!ret && fsync(out))
		ret = -errno;
	close(out);
	if (!ret && rename(tmp, dst))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

int bg_publish_cache_lists(const char *cache, const struct bg_sources *srcs,
			   char (*sha)[65])
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;
	size_t i;
	int ret;

	if (mkdir(cache, 0700) && errno != EEXIST)
		return -errno;
	for (i = 0; i < srcs->n; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", cache, sha[i]);
		if (!stat(path, &st))
			continue;
		ret = copy_file(srcs->v[i].path, path);
		if (ret)
			return ret;
	}
	/* what the next delta cannot need goes */
	d = opendir(cache);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		int keep = e->d_name[0] == '.';

		for (i = 0; i < srcs->n && !keep; i++)
			keep = !strcmp(e->d_name, sha[i]);
		if (!keep) {
			snprintf(path, sizeof(path), "%s/%s", cache, e->d_name);
			unlink(path);
		}
	}
	closedir(d);
	return 0;
}
