// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The control socket's requests: name, arguments, read or write
 * (agent/request.h).
 */
#include <string.h>

#include "agent/request.h"

enum { ARGS_NONE, ARGS_OPTIONAL, ARGS_NEEDED };

static const struct {
	enum bg_req req;
	const char *name;
	int args;
	int writes;
} reqs[] = {
	{ BG_REQ_STATUS, "status", ARGS_OPTIONAL, 0 },
	{ BG_REQ_STATS, "stats", ARGS_NONE, 0 },
	{ BG_REQ_CHECK, "check", ARGS_NEEDED, 0 },
	{ BG_REQ_EVENTS, "events", ARGS_NONE, 0 },
	{ BG_REQ_RELOAD, "reload", ARGS_NONE, 1 },
};

#define NREQS (sizeof(reqs) / sizeof(reqs[0]))

enum bg_req bg_req_parse(const char *line, const char **args)
{
	size_t i, n = strcspn(line, " ");

	*args = "";
	for (i = 0; i < NREQS; i++) {
		if (strlen(reqs[i].name) != n || strncmp(line, reqs[i].name, n))
			continue;
		if (line[n] == ' ')
			*args = line + n + 1;
		if ((**args && reqs[i].args == ARGS_NONE) ||
		    (!**args && reqs[i].args == ARGS_NEEDED) ||
		    (line[n] == ' ' && !**args)) {
			*args = "";
			return BG_REQ_UNKNOWN;
		}
		return reqs[i].req;
	}
	return BG_REQ_UNKNOWN;
}

int bg_req_writes(enum bg_req r)
{
	size_t i;

	for (i = 0; i < NREQS; i++)
		if (reqs[i].req == r)
			return reqs[i].writes;
	return 0;
}

const char *bg_req_name(enum bg_req r)
{
	size_t i;

	for (i = 0; i < NREQS; i++)
		if (reqs[i].req == r)
			return reqs[i].name;
	return "?";
}

const char *bg_req_list(void)
{
	return "check, events, reload, stats, status";
}
