/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The load pipeline: what `bloomgate load` and the agent run, one code path
 * for both. Sources and options in, a report out; nothing is printed.
 *
 *   sources --parse--> blocklist --finish--> --plan--> params   (prepare:
 *   user/prepare.c, the pure core: no libbpf, no kernel)
 *   params + blocklist --build--> filter map --publish--> live --record-->
 *   /run/bloomgate   (commit: user/load.c, the kernel layer)
 *
 * A failure at any stage leaves the running filter untouched: nothing is
 * published before every earlier stage has succeeded, and the publish is
 * one atomic slot update (user/swap.h).
 */
#ifndef BLOOMGATE_LOAD_H
#define BLOOMGATE_LOAD_H

#include "prepare.h"

struct bg_state; /* user/pins.h */

/*
 * The whole load: bg_load_prepare(), then build the planned filter into a
 * new map, publish it in st's slot (the caller holds the lock: st opened
 * with it) and write the load record. o->capacity is not used: the
 * capacity is the attachment records' (bg_attach_capacity()). 0 when the new filter is live (a
 * record that cannot be written is reported as BG_STAGE_RECORD with 0
 * returned: the filter is live, only `check`'s explanations suffer).
 */
int bg_load(struct bg_state *st, const struct bg_load_opts *o,
	    struct bg_load_report *r);

#endif
