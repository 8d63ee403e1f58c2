/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The rebuild job (rebuild.c), as the source drivers see it: a driver whose
 * copy is a built filter applies it (src_artifact.c), a driver that keeps
 * the live filter for its small changes patches it in place
 * (src_crowdsec.c). The job holds copies of all it needs: the main worker
 * reads nothing of struct agent but a->incr, which is the main worker's
 * alone (see agent_priv.h).
 */
#ifndef BLOOMGATE_AGENT_REBUILD_H
#define BLOOMGATE_AGENT_REBUILD_H

#include <limits.h>
#include <stdint.h>

#include "agent/agent_priv.h"
#include "core/artifact.h"
#include "core/prepare.h"

/* The change's way to the datapath, for the timing line (milliseconds;
 * seen and live_at unix time), logged once the store followed. */
struct rb_timing {
	double seen, fetch, parse, plan, build, swap, live_at;
};

/* A source of the rebuild, with its candidate and what became of it. */
struct rb_src {
	/* the list, the job's own copy (bg_list_desc_dup()): a reload may
	 * free the config while the job runs */
	struct bg_list_desc list;
	const struct src_ops *ops;
	double max_shrink;
	char copy[PATH_MAX];
	char sha[65]; /* of the copy */
	int have_copy;
	int cand; /* a candidate to judge, cand_sha */
	char cand_sha[65];
	uint64_t prev_entries; /* of the copy: the shrink guard's base */
	/* results: 1 the candidate kept, -1 refused (why); its counts */
	int verdict;
	char why[256];
	uint64_t entries, rejected;
	int counted;
	/* the rejected lines of its candidate, logged as the parse finds
	 * them (the first few; the count at the end), once */
	struct src_refusal_log log;
	int logged;
	/* the driver's, lent by its source for the job (ops->lend) */
	void *lent;
};

struct rb_job {
	struct job j;
	struct rb_src *v;
	size_t n;
	double fpr;
	int confirm;
	int allow_empty; /* a source may hold no entry (a CrowdSec source) */
	uint64_t max_list_bytes, max_entries;
	char *state_dir;
	/* the config's protect: (the job's copy), and the protected set
	 * gathered from it and the host by the run (the job's, made live
	 * with its filter; NULL before) */
	struct bg_protect_item *protect;
	size_t n_protect;
	struct bg_protect_set *ps;
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
	/* the load's seed (a filter kept for small changes is built with
	 * it), whether one source's change may be patched in place (the
	 * live filter is this agent's) and was */
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
	/* the live filter held nothing of this agent's before the job (no
	 * filter was published or adopted): a failure changes nothing */
	int none_live;
};

/* A job's filter went live: what metrics and status say of it, from the
 * load's report. */
void rb_published(struct rb_job *j, const struct bg_load_report *r);
/* The description of the filter saved beside it (filter.json). */
void rb_save_filter(const struct rb_job *j, uint32_t id);
/* The job's timing once its filter is live, from the load's report. */
void rb_timed(struct rb_job *j, const struct bg_load_report *r);
/* "the running filter is unchanged", or that none runs yet. */
const char *rb_unchanged(const struct rb_job *j);
/* j->built from the sources' good copies (a verdict 1 candidate's sha in
 * place of the copy's): 0 or -ENOMEM. */
int rb_describe(struct rb_job *j);
/* The load's sources: every copy (after the keep), in the job's order,
 * but skip (-1: none). */
int rb_copies(const struct rb_job *j, struct bg_sources *srcs, long skip);

/* The built filter of a source that is one (artifact, fleet): verified
 * while copied into a new filter map, swapped in (src_artifact.c: the
 * apply op of both). */
void src_built_apply(struct rb_job *j);

#endif
