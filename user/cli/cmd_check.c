// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate check: what the live filter says of an address or a name,
 * and why (agent/report.h: the same report whether it is made here, as
 * root, or by the agent for a member of the bloomgate group).
 */
#include <errno.h>
#include <string.h>

#include "agent/report.h"

#include "cli/cli.h"

/* ---- check -------------------------------------------------------------- */

static const struct bg_opt check_pos = {
	.type = BG_OPT_STRING, .metavar = "ADDR|NAME",
	.help = "an IP address, or else a domain name",
};

const struct bg_cmd cli_check_cmd = {
	.name = "check",
	.summary = "For each IP address or domain name, says whether the live\n"
		   "filter matches it (\"match\": dropped, or for a name, the\n"
		   "DNS action) or not (\"no match\"), and why: the listed entry\n"
		   "(file:line) that covers it -- for a name, the line's text, and\n"
		   "whether it lists the name itself or a parent with its\n"
		   "subdomains --, the allowlist entry that passes it (allow beats\n"
		   "block), or that the match is a probable false positive.\n"
		   "An argument that parses as an IP address is an address;\n"
		   "anything else must be a domain name (a trailing dot is fine,\n"
		   "case does not matter).",
	.pos = &check_pos, .min_pos = 1, .max_pos = BG_POS_MANY,
};

int cli_cmd_check(int argc, char **argv)
{
	struct bg_state st;
	char req[CLI_AGENT_REQ_MAX];
	size_t o;
	int i, ret;

	if ((ret = cli_parse_args(&cli_check_cmd, &argc, argv, NULL)))
		return ret < 0 ? 0 : ret;
	ret = cli_use_agent() ? -EPERM : bg_state_open(&st, 0);
	if (!ret) {
		ret = bg_report_check(&st, argc - 1, argv + 1, stdout, stderr);
		bg_state_close(&st);
		return ret;
	}
	if (!cli_denied(ret))
		return bg_report_open_failed(ret, 0, stdout, stderr);
	/* not root: the agent answers, the same report */
	o = (size_t)snprintf(req, sizeof(req), "check");
	for (i = 1; i < argc; i++) {
		if (!argv[i][0] || argv[i][strcspn(argv[i], " \t\r\n")])
			return cli_fail(EXIT_USAGE, "'%s': not an address or a domain name",
					argv[i]);
		o += (size_t)snprintf(req + o, o < sizeof(req) ? sizeof(req) - o : 0,
				      " %s", argv[i]);
	}
	if (o >= sizeof(req))
		return cli_fail(EXIT_USAGE, "check: too many arguments to ask the agent at "
				"once (at most %zu bytes): check fewer at a time",
				sizeof(req) - 1);
	return cli_agent_report("check", req);
}
