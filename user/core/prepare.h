/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pure half of the load pipeline (user/kern/load.h has the whole picture):
 * sources and options in, a finished blocklist, a plan and a report out.
 * Core library: no libbpf, no kernel state, nothing printed.
 */
#ifndef BLOOMGATE_PREPARE_H
#define BLOOMGATE_PREPARE_H

#include <stddef.h>
#include <stdint.h>

#include "core/filter.h"
#include "core/io.h"
#include "core/protect.h"
#include "core/sources.h"

enum bg_load_stage {
	BG_STAGE_NONE = 0, /* no failure */
	BG_STAGE_PARSE, /* reading and parsing the lists */
	BG_STAGE_PLAN, /* sizing the filter; also: no entry at all */
	BG_STAGE_BUILD, /* creating and filling the filter map */
	BG_STAGE_PUBLISH, /* the swap */
	BG_STAGE_RECORD, /* the load record (the filter is live) */
	BG_STAGE__COUNT,
};

/* "parse", "plan", ...; "none". */
const char *bg_load_stage_name(int stage);

struct bg_load_opts {
	struct bg_sources *sources; /* in order; each source's format is set
				       to the one used (detected or stated) */
	double fpr; /* the Bloom part's target false-positive rate; 0: the
		       default (bg_fpr_default()) */
	int strict; /* a rejected line (or a too-deep rule) fails the load */
	int allow_wide; /* wide prefixes of every list load (bg_list_opts) */
	/* 1: no exact stage (`load --confirm off`): a Bloom positive is acted
	 * on as it is; the default (0) confirms it (bloomgate/lookup.h) */
	int confirm_off;
	bg_diag_fn diag; /* every diagnostic as it happens; may be NULL */
	void *diag_ctx;
	/* every accepted entry of every list as it is read, with the list's
	 * index in sources (core/io.h: the agent's provenance index is written
	 * from these); may be NULL */
	bg_entry_fn entry;
	void *entry_ctx;
	/* Called after each source parsed without error, with what its parse
	 * found (its counts: entries, lines rejected); nonzero refuses the
	 * source: the load stops there, failed at BG_STAGE_PARSE with
	 * -ECANCELED and r->failed_source its index, so that the caller can
	 * load again with another copy of it (the agent judges a new copy of
	 * a list by the very parse that builds the filter, and falls back to
	 * the last good copy). Entries already handed to entry are not taken
	 * back: a caller that retries starts its sink anew. May be NULL. */
	int (*source_done)(void *ctx, size_t source,
			   const struct bg_source_info *in);
	void *source_ctx;
	/* Called once, when every source is parsed and before the keys are
	 * sorted and planned, with the keys as parsed (duplicates and covered
	 * prefixes still in) and the rate and stage the plan will be for: the
	 * CLI makes the filter map meanwhile (kern/load.h, struct
	 * bg_premap). May be NULL. */
	void (*parsed)(void *ctx, const struct bg_blocklist *bl, double fpr,
		       int confirm);
	void *parsed_ctx;
	uint64_t seed; /* 0: random (getrandom()) */
	/* The filter map's fixed size in elements (the attachment's
	 * --capacity), 0: any size. With one, a plan that needs more fails
	 * at BG_STAGE_PLAN and one that fits fills it (bg_filter_fit). */
	uint32_t capacity;
	/* A shape for the filter map (the agent's config changed): a
	 * capacity of reshape_cap elements (0: any size), or with
	 * reshape_grow one that follows the filter. The commit changes the
	 * attachments' programs to it when theirs differs. */
	int reshape;
	uint32_t reshape_cap;
	int reshape_grow;
	/* Bounds, so that no list can hold the loader (and, after it, the
	 * lock) for ever or take all memory: each file's size
	 * (bg_read_list(); 0: BG_LIST_BYTES_MAX) and the entries of all
	 * lists together (0: BG_LOAD_ENTRIES_MAX). Past either, the load
	 * fails at BG_STAGE_PARSE (-EFBIG, -E2BIG). */
	uint64_t max_list_bytes;
	uint64_t max_entries;
	/* 1: lists with no entry at all make a filter that lists nothing
	 * instead of failing (the agent's, when a source such as a CrowdSec
	 * API's decisions may well be empty) */
	int allow_empty;
	/* Threads of the parse and the build (0: every online CPU, at most
	 * BG_PARSE_WORKERS_MAX); the filter is the same with any number. */
	unsigned int threads;
	/* The protected set (core/protect.h), finished, or NULL: the
	 * entries that cover it are found once the lists are finished
	 * (bg_load_report.covers), and the commit makes it the live set
	 * before the new filter is swapped in. */
	const struct bg_protect_set *protect;
};

/*
 * The default bound of the entries of one load (addresses, prefixes and
 * names, blocked and allowed, counted as parsed: before duplicates go).
 * The largest public lists hold a few million entries; 100M is some
 * twenty times the largest, and still fits a gateway's memory: 100M
 * IPv4 addresses (a 1.4 GB list, read in chunks, not whole) peak at 1.9
 * GB resident, the 542 MiB filter map included (8 bytes a key, 4 a slot
 * of the exact stage while it is built, one pass of hashes). More is a mistake (a list concatenated with itself in a
 * loop, a generator gone wrong), not a blocklist. Checked after each
 * file: within one file, its size bound caps what the parse can take.
 */
#define BG_LOAD_ENTRIES_MAX 100000000ull

/* Rules of the domain lists kept after finishing, by what they do. */
struct bg_load_rules {
	size_t exact, subs; /* blocking rules, by kind */
	size_t allow_rules; /* allow rules (@@) in block lists */
	size_t allow_listed; /* entries of --allow domain lists */
};

/* Diagnostics kept in the report (all are passed to opts->diag). */
#define BG_LOAD_DIAGS_MAX 64

/* A list whose format was detected, and why (printed by `load`, logged by
 * the agent: bg_fmt_detected()). */
struct bg_load_detected {
	char *file; /* as reports name it */
	struct bg_format_evidence ev;
};

struct bg_load_report {
	/* files by kind */
	size_t n_addr, n_addr_allow, n_dom, n_allow;
	/* the counters of the finished lists (their arrays are not kept:
	 * the pointers are NULL) */
	struct bg_list block, allow;
	struct bg_names names;
	struct bg_load_rules rules;
	size_t entries; /* blocked addresses, prefixes and names kept */
	double fpr; /* the target used */
	struct bg_filter_params plan;
	uint64_t seed;
	uint32_t filter_id; /* map id of the filter published */
	/* reshaped: the filter map's shape changed for it, with new programs
	 * (bg_attach_reshape()): a growing capacity that grew or shrank, or
	 * the one bg_load_opts.reshape asked for (2 when it grows, else 1);
	 * grown: its capacity then (elements; 0: any size) */
	int reshaped;
	uint32_t grown;
	double ms[BG_STAGE__COUNT]; /* time per stage, milliseconds */
	/* diagnostics: counts, and the first BG_LOAD_DIAGS_MAX (copies) */
	size_t n_errors, n_warnings, n_diags;
	struct bg_diag diags[BG_LOAD_DIAGS_MAX];
	/* every list whose format was detected, in order (malloc'd) */
	struct bg_load_detected *detected;
	size_t n_detected;
	/* failure: the stage, -errno, and one line saying what and why */
	enum bg_load_stage failed;
	int err;
	/* a BG_STAGE_PARSE failure at one list: its index in sources;
	 * SIZE_MAX when none (bg_load_prepare() sets it) */
	size_t failed_source;
	/* why a strict parse failed: rejected lines, too-deep rules, a list
	 * that loaded no entry */
	int strict_rejected, strict_too_deep, strict_empty;
	/* the protected set: its items by kind (enum bg_protect_kind), the
	 * entries that cover one (loaded, the datapath passing the protected
	 * part), and protect_missing: the attachments have no set to write
	 * (attached by a bloomgate older than it) */
	unsigned int protect_kinds[BG_PROTECT_CONFIG + 1];
	struct bg_protect_covers covers;
	int protect_missing;
	char msg[512];
};

void bg_load_report_init(struct bg_load_report *r);
void bg_load_report_free(struct bg_load_report *r);

/*
 * Besides each line's diagnostic, two about a list as a whole, warnings
 * (line 0) that --strict turns into a failure at BG_STAGE_PARSE: more
 * than half of its lines rejected ("180 of 200 lines rejected as
 * addresses; they look like a plain domain list (--format plain)", the
 * format named when another reads most of them), and no entry loaded
 * ("no entry loaded": every line rejected, or only comments).
 *
 * Parses every source into bl (initialised here; free it with
 * bg_blocklist_free() whatever the result), finishes it and plans the
 * filter into r->plan. 0, or a negative errno with r->failed, r->err and
 * r->msg set (BG_STAGE_PARSE or BG_STAGE_PLAN). Pure: touches no kernel
 * state, so the agent can validate lists with it (agent --check).
 */
int bg_load_prepare(const struct bg_load_opts *o, struct bg_blocklist *bl,
		    struct bg_load_report *r);

/* Fits r->plan into a map of capacity elements (bg_filter_fit(); a
 * growing one's: bg_filter_pad()); 0, or -ENOSPC failed at BG_STAGE_PLAN
 * saying why. For the capacity read under the lock, after
 * bg_load_prepare() planned without one. */
int bg_load_fit(struct bg_load_report *r, uint32_t capacity, int grows);

/* A filter's seed when none is given: nobody can predict it, so keys that
 * collide cannot be precomputed, and a false positive does not survive a
 * rebuild. */
uint64_t bg_random_seed(void);
/* For the two halves of the pipeline: setting the report's failure
 * (returns err). Their clock: core/clock.h's bg_mono_ms(). */
int bg_load_fail(struct bg_load_report *r, enum bg_load_stage stage, int err,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
