// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * agent --check (user/agent/agent.h): the config validated, and every
 * source fetched into a scratch directory and checked as the agent checks
 * a new copy (its driver's check: a list's rejected lines printed with
 * their reasons), without touching the datapath or the state directory.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/config.h"
#include "agent/fetch.h"
#include "agent/protect.h"
#include "agent/source.h"

int bg_agent_check(const char *config_path, FILE *out)
{
	struct bg_protect_set *ps = NULL;
	struct bg_config cfg;
	char err[512], dir[PATH_MAX - 128];
	struct stat st;
	size_t i;
	int bad = 0;

	if (bg_config_load(config_path, &cfg, err, sizeof(err))) {
		fprintf(out, "%s\n", err);
		return 2;
	}
	if (bg_fetch_global_init()) {
		fprintf(out, "cannot initialise libcurl\n");
		bg_config_free(&cfg);
		return 1;
	}
	/* a state directory that cannot be one fails here, not at the start */
	if (!stat(cfg.state_dir, &st) && !S_ISDIR(st.st_mode)) {
		fprintf(out, "%s: state_dir %s: not a directory\n", config_path,
			cfg.state_dir);
		bg_config_free(&cfg);
		return 2;
	}
	/* `agent --check | head -1`: the rest of the output goes nowhere,
	 * but the scratch directory is still removed (SIGPIPE killed us
	 * before the rmdir) */
	signal(SIGPIPE, SIG_IGN);
	fprintf(out, "%s: config valid: %zu interfaces, %zu lists\n", config_path,
		cfg.n_ifaces, cfg.n_lists);
	ps = agent_protect_check_set(&cfg, out);
	if (!ps)
		bad = 1;
	/* in $TMPDIR (a test's own, or /tmp) */
	snprintf(dir, sizeof(dir), "%s/bloomgate-check.XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(out, "cannot make a scratch directory: %s\n", strerror(errno));
		bg_config_free(&cfg);
		free(ps);
		return 1;
	}
	/* each source by its kind's driver: fetched into the scratch
	 * directory and checked as the agent checks a new copy */
	for (i = 0; i < cfg.n_lists; i++)
		bad |= src_ops_of(&cfg.lists[i])->check(&cfg, &cfg.lists[i], dir, ps, out);
	rmdir(dir);
	bg_config_free(&cfg);
	free(ps);
	return bad;
}
