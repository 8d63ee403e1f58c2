/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Running one job on several threads: the load's parse and build split
 * their work into pieces whose result does not depend on how many threads
 * ran them (user/core/lists.c, user/core/filter.c). Worker 0 is always the
 * calling thread, so a job with one thread creates none.
 */
#ifndef BLOOMGATE_PAR_H
#define BLOOMGATE_PAR_H

#include "core/io.h"

/* Threads for a request: 0 is every online CPU; at most
 * BG_PARSE_WORKERS_MAX (core/io.h), at least 1. */
unsigned int bg_par_threads(unsigned int requested);

/* Runs fn(ctx, t) for t in [0, n) at once, t = 0 on the calling thread,
 * and returns when all have. A thread that cannot be created runs its
 * part on the caller after the others (slower, same result). */
void bg_par_run(unsigned int n, void (*fn)(void *ctx, unsigned int t),
		void *ctx);

#endif
