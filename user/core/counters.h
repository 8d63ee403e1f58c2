/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The names of the datapath counters and malformed-packet reasons, one
 * table for the CLI, the tests and the benchmark, and the `stats --json`
 * object. The indices and names themselves are defined once, by the
 * X-macros in bloomgate/abi.h. Core part: no libbpf.
 */
#ifndef BLOOMGATE_COUNTERS_H
#define BLOOMGATE_COUNTERS_H

#include <stdio.h>

#include "bloomgate/abi.h"

struct json_object;

/* bg_counter_names[BG_CNT_x]: "packets", "ipv4", ... */
extern const char *const bg_counter_names[BG_CNT__COUNT];
/* bg_malformed_names[BG_MAL_x]: "trunc_eth", ... (`stats` prefixes them
 * with "malformed_") */
extern const char *const bg_malformed_names[BG_MAL__COUNT];

/* Prefix of the malformed reasons' keys in `stats` output. */
#define BG_MALFORMED_PREFIX "malformed_"

/*
 * The `stats --json` object of summed counters: every counter by its name,
 * in index order, then every malformed reason as "malformed_" NAME; values
 * are unsigned 64-bit integers. The caller owns the object
 * (json_object_put()); NULL when out of memory.
 */
struct json_object *bg_counters_json(const struct bg_counters *sum);
/* Its inverse (the agent's `stats` answer read back): every key must be
 * there, an integer. 0, or -EINVAL. */
int bg_counters_from_json(struct json_object *o, struct bg_counters *sum);
/* `stats` as text: one "NAME VALUE" line per counter, then per malformed
 * reason. */
void bg_counters_print(FILE *out, const struct bg_counters *sum);

#endif
