/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The read-only reports (`status`, `check`) as text, written by one piece
 * of code whoever asks: the CLI running as root calls these with stdout
 * and stderr; the agent calls them for a peer of its control socket
 * (the bloomgate group: agent/request.h) with memory streams and answers
 * the text in a JSON envelope, {"exit": N, "out": "...", "err": "..."},
 * which the CLI prints as it is (bg_report_emit()). So both paths print
 * the same bytes and there is one formatter.
 */
#ifndef BLOOMGATE_REPORT_H
#define BLOOMGATE_REPORT_H

#include <stdio.h>

#include "kern/pins.h"

struct json_object;

#define BG_REPORT_USAGE 2
#define BG_REPORT_NOT_ATTACHED 3

/* A failed bg_state_open() (err: its -errno) said on out or errf as the
 * command says it; the exit code. status: "not attached" is its answer
 * on out, as `bloomgate status` prints it. */
int bg_report_open_failed(int err, int status, FILE *out, FILE *errf);

/* `status`, the datapath's part: the pinned state, the attachments, the
 * live filter and its lists. 0. */
int bg_report_datapath(struct bg_state *st, FILE *out, FILE *errf);
/* `status`, the agent's part, from the agent's `status` answer. */
void bg_report_agent_status(FILE *out, struct json_object *o);

/* `check` of args[0..n): one line per argument on out, problems on errf.
 * st is only read from (the caller closes it). 0, 1, or BG_REPORT_USAGE. */
int bg_report_check(const struct bg_state *st, int n, char *const *args,
		    FILE *out, FILE *errf);

/* fn(ctx, out, err) run into memory, as the envelope: NULL when out of
 * memory. */
struct json_object *bg_report_capture(int (*fn)(void *ctx, FILE *out, FILE *errf),
				      void *ctx);
/* An envelope printed (out, errf) as the report would have been; its exit
 * code, 1 when it is not one. */
int bg_report_emit(struct json_object *r, FILE *out, FILE *errf);

#endif
