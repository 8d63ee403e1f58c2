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

#endif
