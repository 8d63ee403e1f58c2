/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the command files (user/cli/cmd_*.c) share with each other and with
 * main.c: the exit codes, one-line errors, the checks every command makes,
 * and each command's table and function.
 */
#ifndef BLOOMGATE_CLI_H
#define BLOOMGATE_CLI_H

#include <stddef.h>

#include "agent/request.h"
#include "core/opts.h"
#include "kern/attach.h"
#include "kern/pins.h"

#define EXIT_USAGE 2
#define EXIT_NOT_ATTACHED 3
#define EXIT_LIST 4

/* -v: libbpf's and libxdp's own messages are shown */
extern int bg_cli_verbose;

/* "bloomgate: MESSAGE" on stderr; returns code. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_need_root(void);
/* The pinned state, or an exit code with its one line printed. */
int cli_open_state(struct bg_state *st, int lock);
/* Whether the read-only commands (status, stats, check, events) ask the
 * agent over its control socket instead of opening the pins: not root.
 * cli_denied(err): an error opening them that asking the agent may get
 * around (EPERM, EACCES: root without the capabilities). */
int cli_use_agent(void);
int cli_denied(int err);
/* The length of a request to the agent at most (agent/request.h). */
#define CLI_AGENT_REQ_MAX BG_REQ_LINE_MAX
/* Asks the agent (req) for what command cmd prints: its answer in *ans
 * (free()), 0; or an exit code with its one line printed (no agent, a
 * socket that refuses this user, "error: ..." from the agent). */
int cli_agent_ask(const char *cmd, const char *req, char **ans);
/* The one line for a failure (-errno) to reach the agent; the exit code. */
int cli_agent_error(const char *cmd, int err);
/* cli_agent_ask() of a report (agent/report.h), printed: its exit code. */
int cli_agent_report(const char *cmd, const char *req);

/* Parses a command's arguments into ctx (core/opts.h). 0: go on, with the
 * positional arguments now in argv[1..*argc); else what to exit with, -1
 * when the help was asked for and printed (exit 0). */
int cli_parse_args(const struct bg_cmd *cmd, int *argc, char **argv, void *ctx);

/* bloomgate help --man 8|5, --completion bash (cli/docs.c): argv[1] the
 * flag, argv[2] its argument; the commands in help's order. An exit code. */
int cli_docs(int argc, char **argv, const struct bg_cmd *const *cmds, size_t n);

/* The commands (user/cli/cmd_*.c), in the order help lists them. */
#define CLI_COMMAND(name) \
	extern const struct bg_cmd cli_##name##_cmd; \
	int cli_cmd_##name(int argc, char **argv)
CLI_COMMAND(attach);
CLI_COMMAND(chain);
CLI_COMMAND(load);
CLI_COMMAND(build);
CLI_COMMAND(inspect);
CLI_COMMAND(publish);
CLI_COMMAND(fleet);
CLI_COMMAND(check);
CLI_COMMAND(stats);
CLI_COMMAND(status);
CLI_COMMAND(events);
CLI_COMMAND(detach);
CLI_COMMAND(agent);
CLI_COMMAND(reload);

#endif
