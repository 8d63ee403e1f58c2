// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate agent, bloomgate reload: the agent (agent/agent.h) and its
 * control socket.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/config.h"

#include "cli/cli.h"

/* ---- agent / reload ----------------------------------------------------- */

struct agent_args {
	const char *config;
	int check;
};

static const struct agent_args agent_defaults = { .config = BG_CONFIG_DEFAULT };

static const struct bg_opt agent_opts[] = {
	{ .name = "config", .type = BG_OPT_PATH, .metavar = "FILE",
	  .help = "the agent's YAML config",
	  .off = offsetof(struct agent_args, config) },
	{ .name = "check", .type = BG_OPT_FLAG,
	  .help = "validate the config and fetch and parse every list, without "
		  "touching the datapath; exit 0 when all is usable",
	  .off = offsetof(struct agent_args, check) },
	{ NULL },
};

const struct bg_cmd cli_agent_cmd = {
	.name = "agent",
	.summary = "Runs the agent: attaches to the configured interfaces, keeps\n"
		   "a last good copy of every list (files watched, URLs fetched on\n"
		   "their interval with conditional GET), rebuilds and swaps the\n"
		   "filter when one changes, serves Prometheus metrics. The filter\n"
		   "stays live when the agent stops (fail-static).",
	.opts = agent_opts, .defaults = &agent_defaults,
};

int cli_cmd_agent(int argc, char **argv)
{
	struct agent_args a = agent_defaults;
	int ret;

	if ((ret = cli_parse_args(&cli_agent_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	if (a.check) {
		ret = bg_agent_check(a.config, stdout);
		return ret == 2 ? EXIT_USAGE : ret ? EXIT_LIST : 0;
	}
	if ((ret = cli_need_root()))
		return ret;
	return bg_agent_run(a.config);
}

const struct bg_cmd cli_reload_cmd = {
	.name = "reload",
	.summary = "Asks the running agent to re-read its config and every list\n"
		   "now, and waits until it has (the answer names the filter\n"
		   "generation). Same as SIGHUP, with an answer.",
};

int cli_cmd_reload(int argc, char **argv)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	if ((ret = cli_parse_args(&cli_reload_cmd, &argc, argv, NULL)))
		return ret < 0 ? 0 : ret;
	/* not refused here: the agent judges who asks (SO_PEERCRED) and
	 * says why it refuses */
	f = open_memstream(&buf, &len);
	if (!f)
		return cli_fail(1, "out of memory");
	ret = bg_agent_ask("reload", BG_AGENT_RELOAD_WAIT, f);
	fclose(f);
	if (ret == -ETIMEDOUT) {
		free(buf);
		return cli_fail(1, "the agent did not answer the reload within %.0f s "
				"(stopped or stuck?)", BG_AGENT_RELOAD_WAIT);
	}
	if (ret == -EACCES || ret == -EPERM) {
		free(buf);
		return cli_fail(1, "reload needs root (the agent's socket refuses this "
				"user: %s)", strerror(-ret));
	}
	if (ret) {
		free(buf);
		return cli_fail(EXIT_NOT_ATTACHED, "no agent is running (%s)", strerror(-ret));
	}
	/* "ok: ..." on stdout; "error: ..." (an invalid config with its
	 * file:line, a failed rebuild) on stderr and a failure, so that
	 * systemctl reload reports it */
	if (!strncmp(buf, "ok:", 3)) {
		fputs(buf, stdout);
		ret = 0;
	} else {
		buf[strcspn(buf, "\n")] = 0;
		ret = cli_fail(1, "reload: %s", !strncmp(buf, "error: ", 7) ? buf + 7 :
				buf[0] ? buf : "the agent closed without an answer");
	}
	free(buf);
	return ret;
}
