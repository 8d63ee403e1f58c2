/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's log and its jitter (loop.c), for the parts of the agent
 * below agent_priv.h (one source, source.c) as for the rest.
 */
#ifndef BLOOMGATE_AGENT_LOG_H
#define BLOOMGATE_AGENT_LOG_H

/* One line to stderr, whole even when threads log at once. */
void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double agent_rnd(void); /* 0..1 */

#endif
