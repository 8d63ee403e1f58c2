// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Building a filter artifact from lists (core/artbuild.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <json-c/json.h>

#include "core/clock.h"
#include "core/artbuild.h"
#include "core/artifact.h"
#include "core/format.h"

/* The load's hooks, with the caller's behind them. */
struct hooks {
	const struct bg_load_opts *o;
	struct bg_ai_collector *ai;
	uint64_t *entries; /* per source */
};

static void hook_entry(void *ctx, unsigned int worker, const struct bg_entry_ref *e)
{
	struct hooks *h = ctx;

	bg_ai_entry(h->ai, worker, e);
	if (h->o->entry)
		h->o->entry(h->o->entry_ctx, worker, e);
}

static int hook_done(void *ctx, size_t source, const struct bg_source_info *in)
{
	struct hooks *h = ctx;

	h->entries[source] = in->entries;
	return h->o->source_done ? h->o->source_done(h->o->source_ctx, source, in) : 0;
}

static struct json_object *jstr(const char *s)
{
	return json_object_new_string(s ? s : "");
}

char *bg_art_sources_json(const struct bg_load_opts *o,
			  const struct bg_sources *srcs, const uint64_t *entries,
			  char (*sha)[65], int *err)
{
	struct json_object *root = json_object_new_object(), *opts, *lists, *l;
	char *text = NULL;
	size_t i;

	*err = -ENOMEM;
	if (!root)
		return NULL;
	opts = json_object_new_object();
	lists = json_object_new_array();
	json_object_object_add(root, "version", json_object_new_int(1));
	json_object_object_add(root, "options", opts);
	json_object_object_add(root, "lists", lists);
	if (!opts || !lists)
		goto out;
	json_object_object_add(opts, "fpr", json_object_new_double(o->fpr));
	json_object_object_add(opts, "confirm", json_object_new_boolean(!o->confirm_off));
	json_object_object_add(opts, "strict", json_object_new_boolean(o->strict));
	json_object_object_add(opts, "allow_wide", json_object_new_boolean(o->allow_wide));
	json_object_object_add(opts, "capacity", json_object_new_int64(o->capacity));
	for (i = 0; i < srcs->n; i++) {
		const struct bg_source *s = &srcs->v[i];
		const char *origin = bg_list_origin(&s->list);
		char abs[PATH_MAX];
		const char *name = s->list.name;

		if (!origin)
			origin = realpath(s->path, abs) ? abs : s->path;
		if (!name) {
			name = strrchr(origin, '/');
			name = name ? name + 1 : origin;
		}
		l = json_object_new_object();
		if (!l)
			goto out;
		json_object_array_add(lists, l);
		json_object_object_add(l, "name", jstr(name));
		json_object_object_add(l, "origin", jstr(origin));
		json_object_object_add(l, "role", jstr(s->list.allow ? "allow" : "block"));
		json_object_object_add(l, "format", jstr(bg_format_name(s->list.format)));
		json_object_object_add(l, "subdomains", json_object_new_boolean(s->list.subdomains));
		json_object_object_add(l, "allow_wide", json_object_new_boolean(s->list.allow_wide));
		json_object_object_add(l, "sha256", jstr(sha[i]));
		json_object_object_add(l, "entries", json_object_new_int64((int64_t)entries[i]));
	}
	text = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
	if (text)
		*err = 0;
out:
	json_object_put(root);
	return text;
}

static void *map_zeroed(size_t len)
{
	void *m = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return m == MAP_FAILED ? NULL : m;
}

int bg_art_build(const struct bg_load_opts *o, const struct bg_art_build_opts *bo,
		 struct bg_art_built *b, struct bg_load_report *r)
{
	struct bg_load_opts lo = *o;
	struct hooks hk = { .o = o };
	const struct bg_sources *srcs = o->sources;
	char (*sha)[65] = NULL;
	struct bg_ai_item *items = NULL;
	size_t nitems = 0, i;
	uint64_t seed;
	double t0;
	int ret;

	memset(b, 0, sizeof(*b));
	bg_blocklist_init(&b->bl);
	for (i = 0; i < srcs->n; i++)
		if (!strcmp(srcs->v[i].path, "-"))
			return bg_load_fail(r, BG_STAGE_PARSE, -EINVAL,
					    "an artifact describes each list by its "
					    "SHA-256: a list read from standard input "
					    "cannot be");
	seed = o->seed ? o->seed : bg_random_seed();
	hk.entries = calloc(srcs->n ? srcs->n : 1, sizeof(*hk.entries));
	sha = calloc(srcs->n ? srcs->n : 1, sizeof(*sha));
	if (!hk.entries || !sha || bg_ai_collector_new(seed, &hk.ai)) {
		ret = bg_load_fail(r, BG_STAGE_PARSE, -ENOMEM, "out of memory");
		goto out;
	}
	lo.entry = hook_entry;
	lo.entry_ctx = &hk;
	lo.source_done = hook_done;
	lo.source_ctx = &hk;
	lo.parsed = NULL; /* no map to make meanwhile: the image is memory */
	ret = bg_load_prepare(&lo, &b->bl, r);
	if (ret)
		goto out;
	r->seed = seed;
	lo.fpr = r->fpr; /* the rate used, for SOURCES */
	t0 = bg_mono_ms();
	b->filter_len = r->plan.bytes;
	b->filter = map_zeroed(b->filter_len);
	if (!b->filter) {
		ret = bg_load_fail(r, BG_STAGE_BUILD, -ENOMEM, "cannot build the "
				   "filter (%zu bytes): not enough memory", r->plan.bytes);
		goto out;
	}
	ret = bg_filter_build_seeded(b->filter, &r->plan, seed, &b->bl, o->threads);
	if (ret) {
		ret = bg_load_fail(r, BG_STAGE_BUILD, ret, "cannot build the filter: %s",
				   ret == -ENOSPC ? "the exact stage could not place "
				   "every key" : strerror(-ret));
		goto out;
	}
	/* the seed the image holds (another when the first could not place
	 * every key) */
	seed = ((const struct bg_filter_header *)b->filter)->seed;
	r->seed = seed;
	ret = bg_ai_items(hk.ai, &items, &nitems);
	if (!ret)
		ret = bg_ai_build(items, nitems, seed, &b->index, &b->index_len);
	if (ret) {
		ret = bg_load_fail(r, BG_STAGE_BUILD, ret, "cannot build the "
				   "provenance index: %s", ret == -E2BIG ?
				   "too many lists" : strerror(-ret));
		goto out;
	}
	for (i = 0; i < srcs->n; i++) {
		ret = bg_sha256_file(srcs->v[i].path, sha[i]);
		if (ret) {
			ret = bg_load_fail(r, BG_STAGE_BUILD, ret, "%s: cannot read it "
					   "again for its checksum: %s",
					   bg_list_name(srcs->v[i].path), strerror(-ret));
			goto out;
		}
	}
	b->sources = bg_art_sources_json(&lo, srcs, hk.entries, sha, &ret);
	if (!b->sources) {
		ret = bg_load_fail(r, BG_STAGE_BUILD, ret, "out of memory");
		goto out;
	}
	b->sources_len = strlen(b->sources);
	r->ms[BG_STAGE_BUILD] = bg_mono_ms() - t0;

	b->h.kind = BG_ART_FULL;
	b->h.generation = bo ? bo->generation : 0;
	b->h.created = (uint64_t)time(NULL);
	b->h.nsources = (__u32)srcs->n;
	bg_art_plan_fill(&b->h.plan, &r->plan, seed);
	b->h.plan.names = r->rules.exact + r->rules.subs;
	if (bo && bo->keep) {
		b->kept = 1;
		b->items = items;
		b->nitems = nitems;
		items = NULL;
	}
out:
	if (ret || !b->kept)
		bg_blocklist_free(&b->bl);
	if (ret)
		bg_art_built_free(b);
	free(items);
	free(sha);
	free(hk.entries);
	bg_ai_collector_free(hk.ai);
	return ret;
}

void bg_art_built_parts(const struct bg_art_built *b, struct bg_art_parts *parts)
{
	memset(parts, 0, sizeof(*parts));
	parts->data[BG_ART_SEC_SOURCES] = b->sources;
	parts->len[BG_ART_SEC_SOURCES] = b->sources_len;
	parts->data[BG_ART_SEC_FILTER] = b->filter;
	parts->len[BG_ART_SEC_FILTER] = b->filter_len;
	parts->data[BG_ART_SEC_INDEX] = b->index;
	parts->len[BG_ART_SEC_INDEX] = b->index_len;
}

int bg_art_built_write(struct bg_art_built *b, const char *path,
		       unsigned int threads, char sha[65])
{
	struct bg_art_parts parts;
	uint8_t d[BG_ART_SHA];
	int ret;

	bg_art_built_parts(b, &parts);
	ret = bg_art_write(path, &b->h, &parts, threads, sha ? d : NULL);
	if (!ret && sha)
		bg_sha_hex(d, sha);
	return ret;
}

void bg_art_built_free(struct bg_art_built *b)
{
	if (b->filter)
		munmap(b->filter, b->filter_len ? b->filter_len : 1);
	free(b->index);
	free(b->sources);
	free(b->items);
	if (b->kept)
		bg_blocklist_free(&b->bl);
	memset(b, 0, sizeof(*b));
}
