/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The load pipeline: what `bloomgate load` and the agent run, one code path
 * for both. Sources and options in, a report out; nothing is printed.
 *
 *   sources --parse--> blocklist --finish--> --plan--> params   (prepare:
 *   user/core/prepare.c, the pure core: no libbpf, no kernel)
 *   params + blocklist --build--> filter map --record--> /run/bloomgate
 *   --publish--> live   (commit: user/kern/load.c, the kernel layer; the
 *   record is written under the new map's id before the swap, made
 *   current after it: user/core/record.h)
 *
 * A failure at any stage leaves the running filter untouched: nothing is
 * published before every earlier stage has succeeded, and the publish is
 * one atomic slot update (user/kern/swap.h).
 */
#ifndef BLOOMGATE_LOAD_H
#define BLOOMGATE_LOAD_H

#include <pthread.h>

#include "core/prepare.h"

struct bg_state; /* user/kern/pins.h */

/*
 * The kernel half, for a blocklist bg_load_prepare() made (planned
 * without a capacity): fit the plan to the attachments' capacity
 * (bg_attach_capacity(), read here), build it into a new map, write its
 * load record, publish it in st's slot and make the record current. The caller holds the lock (st
 * opened with it) for this only: the lists are read and parsed before,
 * so a slow or endless list never holds up another command. 0 when the
 * new filter is live (a record that cannot be written is reported as
 * BG_STAGE_RECORD with 0 returned: the filter is live, only `check`'s
 * explanations suffer).
 */
int bg_load_commit(struct bg_state *st, const struct bg_load_opts *o,
		   const struct bg_blocklist *bl, struct bg_load_report *r);

/*
 * The same for a filter built (or changed) in memory: image, of plan p,
 * copied into a new map, frozen, recorded (o->sources) and published.
 * The attachments' capacity must be p's. 0 when it is live.
 */
int bg_load_commit_image(struct bg_state *st, const struct bg_load_opts *o,
			 const struct bg_filter_params *p, const void *image,
			 struct bg_load_report *r);

/*
 * Makes s (NULL: nothing to do) the live protected set of st, as a commit
 * does before its swap; st attached by a bloomgate older than the set
 * has none: r->protect_missing. 0, or failed at BG_STAGE_PUBLISH.
 */
int bg_load_protect(struct bg_state *st, const struct bg_protect_set *s,
		    struct bg_load_report *r);

/*
 * A filter map made on a thread of its own while the keys are sorted and
 * planned. Creating a map is the kernel zeroing its memory (542 MiB at
 * 100M keys: from a tenth of a second to over one on the VM the bench
 * runs on), on one core, which then no longer waits for the sort, nor the
 * sort for it. Its size comes from a plan of the keys as parsed; when the
 * plan of the sorted keys needs another number of elements (duplicates or
 * covered prefixes dropped, an attachment's capacity), it is closed
 * unused and the map made as before. Domain lists are planned only once
 * sorted: none is made for them.
 *
 * Use: struct bg_premap pm = BG_PREMAP_INIT; o.parsed = bg_premap_parsed;
 * o.parsed_ctx = &pm; then bg_load_prepare() and bg_load_commit() (which
 * takes the map when it fits), and bg_premap_drop(&pm) whatever happened.
 */
struct bg_premap {
	pthread_t tid;
	int started; /* the thread runs, or ran and is not joined */
	int fd; /* the map, or -errno */
	int used; /* bg_premap_take() handed it on */
	struct bg_filter_params p; /* the plan of the keys as parsed */
};
#define BG_PREMAP_INIT { .fd = -1 }

void bg_premap_parsed(void *ctx, const struct bg_blocklist *bl, double fpr,
		      int confirm);
/* The map when it is one of plan p's number of elements (and p has no
 * capacity): its fd, now the caller's; else -1 (closed). Joins. */
int bg_premap_take(struct bg_premap *pm, const struct bg_filter_params *p);
/* Joins the thread and closes a map not taken. */
void bg_premap_drop(struct bg_premap *pm);

#endif
