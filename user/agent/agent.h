/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent: one process per gateway that keeps the filter fed. It reads
 * its config (user/agent/config.h), keeps a last good copy of every source
 * (user/agent/fetch.h) in its state directory, rebuilds and swaps through the
 * very pipeline `bloomgate load` runs (user/kern/load.h) when one changes,
 * records every entry with its source and line (user/agent/store.h), and serves
 * metrics (user/agent/metrics.h). The kernel state (programs, filter) is pinned
 * and outlives it: a stopped, crashed or killed agent leaves the filter
 * live, and a restarted one adopts it without a rebuild when nothing
 * changed (fail-static).
 */
#ifndef BLOOMGATE_AGENT_H
#define BLOOMGATE_AGENT_H

#include <signal.h>
#include <stdio.h>

/* Runs the agent until SIGTERM or SIGINT; the exit code. Logs to stderr
 * (journald adds the time). */
int bg_agent_run(const char *config_path);

/* agent --check: validates the config and fetches and parses every source
 * into a scratch directory, without touching the datapath or the state
 * directory; prints one line per source on out. 0 when everything is
 * usable, 1 when a source fails, 2 when the config is invalid. */
int bg_agent_check(const char *config_path, FILE *out);

/* Asks the running agent (its control socket) for cmd ("reload",
 * "status") and writes the answer to out, waiting timeout seconds at most
 * for it (a stopped or wedged agent must not hang the caller: status,
 * systemctl reload). 0, or -errno (-ENOENT, -ECONNREFUSED: no agent
 * running; -ETIMEDOUT: no whole answer in time). */
int bg_agent_ask(const char *cmd, double timeout, FILE *out);
/* Asks the agent for cmd ("events") and hands each line of its answer,
 * without the newline, to line() as it comes, until line() returns
 * non-zero, *stop is set (a signal) or timeout seconds went by (0: none):
 * 0; or the agent closes: -EPIPE (it stopped, or cut off a reader too
 * slow for the events); or -errno as bg_agent_ask(). */
int bg_agent_follow(const char *cmd, double timeout, volatile sig_atomic_t *stop,
		    int (*line)(void *ctx, const char *l), void *ctx);
/* How long `bloomgate status` and `bloomgate reload` wait for the agent:
 * a reload answers once its fetches (BG_AGENT_FETCH_WAIT at most) and the
 * rebuild they cause are done, which at 100M keys takes tens of seconds. */
#define BG_AGENT_STATUS_WAIT 10.0
#define BG_AGENT_RELOAD_WAIT 300.0

#endif
