// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the commands share: one-line errors, the root and state checks,
 * argument parsing, the names and text of attachment options.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "agent/agent.h"
#include "agent/report.h"
#include "core/print.h"
#include "core/record.h"

#include "cli/cli.h"

#define EXIT_LIST 4

int cli_fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("bloomgate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

int cli_need_root(void)
{
	if (geteuid() != 0)
		return cli_fail(1, "must be run as root");
	return 0;
}

int cli_use_agent(void)
{
	return geteuid() != 0;
}

/* What opening the pins said before the agent was asked instead (root
 * without the capabilities): said too when the agent cannot be reached. */
static int direct_err;

int cli_denied(int err)
{
	if (err == -EPERM || err == -EACCES) {
		direct_err = geteuid() == 0 ? err : 0;
		return 1;
	}
	return 0;
}

int cli_agent_error(const char *cmd, int err)
{
	char path[PATH_MAX];

	bg_run_path(path, sizeof(path), ".sock");
	if (direct_err && err != -ETIMEDOUT)
		return cli_fail(1, "%s: cannot open the pinned state in %s: %s; nor ask "
				"the agent on %s: %s", cmd, bg_pin_dir(),
				strerror(-direct_err), path, strerror(-err));
	if (err == -EACCES || err == -EPERM)
		return cli_fail(1, "%s: needs root, or the agent: its socket %s refuses "
				"this user: not in group " BG_READ_GROUP, cmd, path);
	if (err == -ETIMEDOUT)
		return cli_fail(1, "%s: the agent did not answer within %.0f s "
				"(stopped or stuck?)", cmd, BG_AGENT_STATUS_WAIT);
	return cli_fail(EXIT_NOT_ATTACHED, "%s: needs root, or the agent: none answers "
			"on %s (%s): bloomgate is not attached, or its agent is not "
			"running", cmd, path, strerror(-err));
}

int cli_agent_ask(const char *cmd, const char *req, char **ans)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	*ans = NULL;
	if (!f)
		return cli_fail(1, "out of memory");
	ret = bg_agent_ask(req, BG_AGENT_STATUS_WAIT, f);
	fclose(f);
	if (ret) {
		free(buf);
		return cli_agent_error(cmd, ret);
	}
	if (!buf || !buf[0] || !strncmp(buf, "error: ", 7)) {
		if (buf)
			buf[strcspn(buf, "\n")] = 0;
		ret = cli_fail(1, "%s: %s", cmd, buf && buf[0] ? buf + 7 :
			       "the agent closed without an answer");
		free(buf);
		return ret;
	}
	*ans = buf;
	return 0;
}

int cli_agent_report(const char *cmd, const char *req)
{
	struct json_object *r;
	char *ans;
	int ret = cli_agent_ask(cmd, req, &ans);

	if (ret)
		return ret;
	r = json_tokener_parse(ans);
	free(ans);
	if (!r)
		return cli_fail(1, "%s: the agent's answer cannot be read", cmd);
	ret = bg_report_emit(r, stdout, stderr);
	json_object_put(r);
	return ret;
}

int cli_open_state(struct bg_state *st, int lock)
{
	int err = bg_state_open(st, lock);
	char why[512];

	if (err == -ENOMEDIUM) {
		bg_no_bpffs_why(why, sizeof(why));
		return cli_fail(1, "%s", why);
	}
	if (err == -ENOENT)
		return cli_fail(EXIT_NOT_ATTACHED,
			    "bloomgate is not attached to any interface "
			    "(run: bloomgate attach IFACE)");
	if (err)
		return cli_fail(1, "cannot open the pinned state in %s: %s",
			    bg_pin_dir(), strerror(-err));
	return 0;
}

/*
 * Parses a command's arguments into ctx (user/core/opts.h). 0: go on, with the
 * positional arguments now in argv[1..*argc); else what to exit with,
 * -1 when the help was asked for and printed (exit 0).
 */
int cli_parse_args(const struct bg_cmd *cmd, int *argc, char **argv, void *ctx)
{
	char err[256];
	int n = bg_opts_parse(cmd, *argc, argv, ctx, err, sizeof(err));

	if (n == BG_OPTS_HELP) {
		bg_cmd_help(stdout, "bloomgate", cmd);
		return -1;
	}
	if (n < 0)
		return cli_fail(n == -EINVAL ? EXIT_USAGE : 1, "%s", err);
	*argc = n + 1;
	return 0;
}
