/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Building a filter artifact (core/artifact.h) from lists: the load
 * pipeline (core/prepare.h) up to the built filter, into memory instead of
 * a map, with the provenance index fed by the same parse and the sources
 * described with their SHA-256. `bloomgate build` and `publish` run it;
 * the filter image is the one `load` builds from the same lists and seed,
 * bit for bit (both build with bg_filter_build_seeded()). Core: no libbpf.
 */
#ifndef BLOOMGATE_CORE_ARTBUILD_H
#define BLOOMGATE_CORE_ARTBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "bloomgate/artifact.h"
#include "core/artifact.h"
#include "core/artindex.h"
#include "core/prepare.h"

/* A built artifact, in memory until written. */
struct bg_art_built {
	struct bg_art_header h; /* kind, generation, created, plan, nsources */
	void *filter; /* the filter image, h.plan.nelems elements (mmap'd) */
	size_t filter_len;
	void *index; /* the INDEX section (malloc'd) */
	size_t index_len;
	char *sources; /* the SOURCES JSON (malloc'd) */
	size_t sources_len;
	/* kept when asked (a publisher's delta is made from them): the
	 * finished blocklist and the index's items */
	int kept;
	struct bg_blocklist bl;
	struct bg_ai_item *items;
	size_t nitems;
};

/* The SOURCES JSON's "options": what a gateway shows and a publisher
 * compares before it ships a delta (another rate or stage is a full
 * generation). */
struct bg_art_build_opts {
	uint64_t generation; /* the header's; 0 outside a fleet */
	int keep; /* keep the blocklist and the items in the result */
};

/*
 * Runs o's load up to the built filter (o->seed, o->capacity, o->threads
 * as `load` uses them; o->entry and o->source_done are the caller's and
 * are called too) and describes it. 0, or -errno with r->failed and
 * r->msg saying why, as bg_load_prepare() and the build fail. b is empty
 * after a failure. Lists read from standard input cannot be described
 * (their SHA-256 needs a second read): -EINVAL.
 */
int bg_art_build(const struct bg_load_opts *o, const struct bg_art_build_opts *bo,
		 struct bg_art_built *b, struct bg_load_report *r);

/* The parts of b as bg_art_write() takes them. */
void bg_art_built_parts(const struct bg_art_built *b, struct bg_art_parts *parts);

/* Writes b to path atomically (bg_art_write()); h's digests filled, and
 * sha (may be NULL) the file's SHA-256 in hex. */
int bg_art_built_write(struct bg_art_built *b, const char *path,
		       unsigned int threads, char sha[65]);

void bg_art_built_free(struct bg_art_built *b);

/*
 * The SOURCES JSON of an artifact built from sources with options o:
 * {"version":1,"options":{...},"lists":[{"name","origin","role","format",
 * "subdomains","allow_wide","sha256","entries"}, ...]} (entries[i]: list
 * i's accepted entries; the format the one used). malloc'd text; NULL on
 * failure (-errno in *err).
 */
char *bg_art_sources_json(const struct bg_load_opts *o,
			  const struct bg_sources *srcs, const uint64_t *entries,
			  char (*sha)[65], int *err);

#endif
