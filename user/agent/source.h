/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A source of the agent: one struct source per configured source (a list
 * file or URL, a CrowdSec local API, an artifact file or URL, the fleet
 * store), and one driver per kind behind struct src_ops.
 *
 * struct source is the one description of a source at run time: what it
 * is (its config), where it stands (phase, state, due time), its last
 * good copy and what it did (struct bg_src_record: what the store keeps
 * across restarts, as it is), its candidate, the input it refused, and
 * its driver's own state (priv). The store (agent/store.h), status,
 * /metrics and `agent --check` read it as it is.
 *
 * A driver checks its kind's input at the boundary, before anything else
 * sees it: a list's lines are judged by the very parse that builds the
 * filter (ops->judge, called by the rebuild for each new copy), a CrowdSec
 * decision when it is pulled, an artifact as a whole when it is fetched.
 * Nothing outside a driver switches on the kind.
 *
 * Threads: the loop owns every struct source and writes what the metrics
 * thread reads under a->lock. A fetch runs on a fetch thread with a job
 * (struct fetch_job) that holds copies of what it needs (ops->fetch_begin
 * makes them, ops->fetch_end gives back what the source owns).
 */
#ifndef BLOOMGATE_AGENT_SOURCE_H
#define BLOOMGATE_AGENT_SOURCE_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/config.h"
#include "agent/fetch.h"

struct bg_protect_set;
struct rb_src;

struct agent;
struct json_object;
struct rb_job;

/*
 * What a source holds and did: the last good copy (its SHA-256, HTTP
 * validators, entries, the lines its parse rejected) and its counters.
 * The store keeps it as it is (bg_store_source.rec), status and /metrics
 * show it.
 */
struct bg_src_record {
	char sha256[65]; /* of the last good copy; "" none */
	struct bg_fetch_validators v; /* of the last good copy (a URL's) */
	uint64_t entries; /* accepted in the last good copy */
	uint64_t rejected; /* lines its parse rejected */
	uint64_t fetches, failures, not_modified; /* since the source was added */
	double last_ok, last_attempt; /* unix time; 0: never */
	char last_error[256];
};

enum src_phase {
	SRC_IDLE,
	SRC_FETCHING, /* a fetch job runs */
	SRC_CANDIDATE, /* a new copy waits for a rebuild to judge it */
	SRC_IN_REBUILD, /* ... and a rebuild judges it now */
};

/* Input refused, by reason (a driver's words: "not an address", "too
 * wide", "duration"): counted since the start, for status and /metrics.
 * The reasons are static strings; a reason beyond the table is counted
 * under the last slot's "other". */
#define SRC_REASONS_MAX 12
struct src_refusals {
	size_t n;
	struct {
		const char *reason;
		uint64_t count;
	} v[SRC_REASONS_MAX];
};

/* Of one input (a copy's parse, a pull): the first SRC_REFUSED_LOGGED
 * refusals are logged one a line, then one line with how many more. */
#define SRC_REFUSED_LOGGED 10
struct src_refusal_log {
	const char *source; /* its name */
	FILE *out; /* NULL: the agent's log */
	uint64_t n;
};

/* A source's entries by their origin, when its driver knows it (a
 * CrowdSec source's decisions: bloomgate_crowdsec_decisions{origin}). */
#define SRC_ORIGINS_MAX 16
struct src_origin {
	char name[32];
	uint64_t n;
};

struct src_ops;

struct source {
	const struct bg_cfg_list *cfg; /* what it is (the config's) */
	const struct src_ops *ops; /* its kind's driver */
	char copy[PATH_MAX]; /* the last good copy: STATE_DIR/lists/NAME.list */
	int have_copy;
	struct bg_src_record rec;
	/* where it stands */
	int phase; /* enum src_phase */
	const char *state; /* "pending", "ok", "failing" */
	unsigned failed_in_row;
	double due; /* monotonic time of the next fetch or check; 0: none */
	double changed_at; /* unix time of its first change seen since the
			      last fetch (an inotify event); 0: none */
	int mark; /* a reload (or the start) waits for this source's fetch */
	int wd; /* inotify watch of a path source's directory; -1 */
	/* the candidate: its hash, validators, when its change was seen
	 * (unix time) and the fetch time */
	char cand_sha[65];
	struct bg_fetch_validators cand_v;
	double cand_seen, cand_fetch_ms;
	/* the last candidate refused, and why: the same bytes again are
	 * refused at once, without a rebuild */
	char refused_sha[65];
	char refused_why[256];
	struct src_refusals refused;
	size_t n_origins;
	struct src_origin origins[SRC_ORIGINS_MAX];
	/* the driver's own state (a CrowdSec source's decisions, a fleet
	 * source's link), and a file descriptor the loop watches for it
	 * (ops->on_fd); -1: none */
	void *priv;
	int fd;
	double tick_at; /* the next deadline of ops->tick (monotonic); 0: none */
};

/*
 * One driver a kind. Every op but fetch runs on the loop; NULL ops do
 * nothing (or, for judge, take the copy as it is).
 */
struct src_ops {
	const char *kind; /* "list", "crowdsec", "artifact", "fleet" */
	/* the copy is a built filter swapped in as it is (artifact, fleet):
	 * never parsed with the others, its index is in it */
	int built;
	/* its copy may hold no entry (a CrowdSec source with no decision) */
	int may_be_empty;
	/* its entries are decisions, counted by origin (s->origins) and
	 * refused by reason (s->refused) as /metrics' bloomgate_crowdsec_*
	 * families show them */
	int decisions;
	/* retry after n failures: base (s), doubling up to the refresh */
	double retry_base;
	/* set up for a new source or one a reload kept (s->priv as it was):
	 * 0 or -errno */
	int (*open)(struct agent *a, struct source *s);
	/* the source goes (a reload removed it, the agent stops) */
	void (*close)(struct agent *a, struct source *s);
	/* the job's own copies of what the fetch needs (loop): 0 or -errno */
	int (*fetch_begin)(struct agent *a, struct source *s, void **job);
	/* on a fetch thread: the source's input to a checked candidate
	 * beside copy (bg_fetch_candidate()), r->outcome saying what
	 * happened; quit: nonzero stops it */
	void (*fetch)(void *job, const char *copy, const char *kept_sha,
		      struct bg_fetch_validators *v, struct bg_fetch_result *r,
		      const int *quit);
	/* the job done (loop): s NULL when the source went meanwhile; frees
	 * job; returns what to log of a changed copy in note ("" for the
	 * default line) */
	void (*fetch_end)(struct agent *a, struct source *s, void *job,
			  const struct bg_fetch_result *r, char *note,
			  size_t len);
	/* a new copy judged by the counts of its parse (the rebuild's):
	 * 0 good, 1 refused with why */
	int (*judge)(const struct bg_cfg_list *cfg, uint64_t entries,
		     uint64_t rejected, uint64_t prev_entries, char *why,
		     size_t len);
	/* main worker: a built source's copy (the job's one source)
	 * verified and swapped in; NULL: parsed with the others */
	void (*apply)(struct rb_job *j);
	/* main worker: the job's one candidate, the source at index at,
	 * patched into the live filter in place: 0 when it went live;
	 * nonzero: the filter is built whole */
	int (*patch)(struct agent *a, struct rb_job *j, size_t at);
	/* loop: the rebuild refused the source's candidate */
	void (*refused)(struct agent *a, struct source *s);
	/* loop: what the source's patch reads, lent to the rebuild's copy
	 * of the source (r->lent) when the job starts, and taken back when
	 * it is done (s NULL: the source is gone; r->lent is freed) */
	void (*lend)(struct source *s, struct rb_src *r);
	void (*take_back)(struct source *s, struct rb_src *r);
	/* loop: a full rebuild went live (a source that patches keeps the
	 * filter for its next change) */
	void (*rebuilt)(struct agent *a, const struct rb_job *j);
	/* loop: the live filter changed or failed to (a fleet gateway
	 * reports at once) */
	void (*live_changed)(struct agent *a, struct source *s);
	/* the driver's own file descriptor (s->fd) is readable */
	void (*on_fd)(struct agent *a, struct source *s);
	/* loop, after every wakeup: what is due now; returns the next
	 * deadline (monotonic), 0: none */
	double (*tick)(struct agent *a, struct source *s);
	/* -1: the source has no link; else 1 when its link is up now */
	int (*link_up)(const struct source *s);
	/* what status shows beside the common fields */
	void (*status)(const struct source *s, struct json_object *o);
	/* agent --check: the source fetched into dir and judged, one line
	 * (and the rejected lines, and its entries over the protected set ps,
	 * which may be NULL) on out; 0 good, 1 failed */
	int (*check)(const struct bg_config *cfg, const struct bg_cfg_list *l,
		     const char *dir, const struct bg_protect_set *ps, FILE *out);
};

/* Retry after a failed fetch: 30 s (a driver may say less), doubling, at
 * most the refresh interval or an hour. */
#define RETRY_BASE 30.0
#define RETRY_MAX 3600.0

extern const struct src_ops src_list_ops, src_crowdsec_ops, src_artifact_ops,
	src_fleet_ops;

/* The driver of a configured source's kind. */
const struct src_ops *src_ops_of(const struct bg_cfg_list *l);

/* ---- source.c ------------------------------------------------------------- */

/* Logs a source's state when it changes: once per change. The caller
 * holds a->lock (the metrics thread reads the state). */
void src_set_state(struct source *s, const char *state, const char *why);
/* A success or a failure of the source (a->lock held). */
void src_ok(struct source *s);
void src_failed(struct source *s, const char *why);
/* When a source that failed s->failed_in_row times is tried again
 * (monotonic): its kind's retry base, doubling, at most its refresh. */
double src_retry_at(const struct source *s);
/* Counts a refusal under its reason (a->lock held). */
void src_refused_count(struct src_refusals *r, const char *reason, uint64_t n);
/* One refusal of an input: logged while the log's first
 * SRC_REFUSED_LOGGED; where: "FILE:LINE" or "decision 12"; text: what was
 * refused (quoted by the caller). src_refused_end(): the count beyond. */
void src_refused_log(struct src_refusal_log *l, const char *where,
		     const char *reason, const char *text);
void src_refused_end(struct src_refusal_log *l);
/* ---- the list driver's, shared by the artifact's ---------------------- */

/* The fetch options of a list or artifact (its bounds, its shrink
 * guard); list strings borrowed. */
void src_fetch_opts(const struct bg_config *c, const struct bg_cfg_list *l,
		    struct bg_fetch_src *f);
/* A path source's open: its directory watched (a file replaced by rename
 * counts). */
int src_watch_open(struct agent *a, struct source *s);
/* The common job of a file or URL fetch: 0 or -ENOMEM. */
int src_file_fetch_begin(struct agent *a, struct source *s, void **job);
void src_file_fetch(void *job, const char *copy, const char *kept_sha,
		    struct bg_fetch_validators *v, struct bg_fetch_result *r,
		    const int *quit);
void src_file_fetch_end(struct agent *a, struct source *s, void *job,
			const struct bg_fetch_result *r, char *note, size_t len);

#endif
