// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * agent --check (user/agent/agent.h): the config validated, and every
 * list fetched into a scratch directory and judged as the agent judges a
 * new copy (one parse, bg_fetch_judge()), without touching the datapath
 * or the state directory.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/artifact.h"
#include "agent/agent.h"
#include "agent/crowdsec.h"
#include "agent/fleetdb.h"
#include "core/url.h"
#include "agent/config.h"
#include "agent/fetch.h"
#include "agent/protect.h"
#include "core/sources.h"

static void quiet(void *ctx, const struct bg_diag *d)
{
	(void)ctx;
	(void)d;
}

/* The candidate parsed as the rebuild parses it, and judged; 0: good.
 * Its entries over the protected set (ps) said on out. */
static int judge_copy(const struct bg_config *cfg, const struct bg_cfg_list *l,
		      const struct bg_fetch_src *f, const char *copy,
		      struct bg_fetch_result *r, const struct bg_protect_set *ps,
		      FILE *out)
{
	char cand[PATH_MAX + 8];
	struct bg_source s = { .list = l->list };
	struct bg_list_opts o = { .diag = quiet,
				  .max_bytes = cfg->max_list_bytes };
	struct bg_source_info in;
	struct bg_blocklist bl;
	int ret;

	if (bg_fetch_candidate(copy, cand, sizeof(cand)))
		return -ENAMETOOLONG;
	if (l->kind == BG_SRC_ARTIFACT) {
		struct bg_art a;
		char why[256];
		int bad = bg_art_open(cand, &a, why, sizeof(why)) ||
			  bg_art_verify(&a, ~0u, NULL, 0, why, sizeof(why));

		if (!bad && a.h->kind != BG_ART_FULL) {
			bad = 1;
			snprintf(why, sizeof(why), "a delta, not a whole filter");
		}
		if (!bad)
			r->entries = a.h->plan.prefixes4 + a.h->plan.prefixes6 +
				     a.h->plan.names;
		if (a.h)
			bg_art_close(&a);
		unlink(cand);
		if (bad)
			snprintf(r->err, sizeof(r->err), "%s", why);
		return bad;
	}
	s.path = cand;
	bg_blocklist_init(&bl);
	ret = bg_source_parse_info(&s, &bl, &o, &in);
	if (!ret && in.format == BG_FMT_ADDR)
		agent_protect_check_list(out, ps, &bl, cand, l);
	bg_blocklist_free(&bl);
	unlink(cand);
	r->entries = in.entries;
	r->rejected = in.rejected;
	if (ret < 0) {
		snprintf(r->err, sizeof(r->err), "reading the copy: %s", strerror(-ret));
		return 1;
	}
	return bg_fetch_judge(f, in.entries, in.rejected, 0, r->err, sizeof(r->err));
}

/* A crowdsec: source: one startup pull (its decisions counted); a fleet:
 * the store's newest generation. 0 with what was found in why, or -errno
 * with why not. */
static int other_check(const struct bg_config *cfg, const struct bg_cfg_list *l,
		       char *why, size_t whylen, const struct bg_protect_set *ps,
		       const char *copy, FILE *out)
{
	if (l->kind == BG_SRC_CROWDSEC) {
		struct bg_cs_state st = { .loaded = 1 };
		struct bg_cs_pull_result pr;
		int ret = bg_cs_pull(l, &st, NULL, &pr, why, whylen);
		size_t k, w;

		if (!ret) {
			w = (size_t)snprintf(why, whylen, "%zu ban decisions (%zu refused",
					     st.n, pr.refused);
			for (k = 0; k < BG_CS_IGN_MAX && w < whylen; k++)
				if (st.ignored[k])
					w += (size_t)snprintf(why + w, whylen - w, ", %s %llu",
							      bg_cs_ign_names[k],
							      (unsigned long long)st.ignored[k]);
			if (w < whylen)
				w += (size_t)snprintf(why + w, whylen - w, ")");
			if (pr.warn[0] && w < whylen)
				snprintf(why + w, whylen - w, "; warning: %s", pr.warn);
		}
		/* written as the agent's copy: its lines name the decisions */
		if (!ret && ps && !bg_cs_write(&st, copy, l->list.url, NULL))
			agent_protect_check_list(out, ps, NULL, copy, l);
		unlink(copy);
		bg_cs_state_free(&st);
		return ret;
	} else {
		struct bg_fleetdb *db;
		struct bg_fleet_gen g;
		int ret = bg_fleetdb_connect(cfg->fleet.db, 0, &db, why, whylen);

		if (ret)
			return ret;
		ret = bg_fleetdb_latest(db, &g, why, whylen);
		bg_fleetdb_close(db);
		if (!ret && g.generation)
			snprintf(why, whylen, "generation %llu",
				 (unsigned long long)g.generation);
		else if (!ret)
			snprintf(why, whylen, "no generation published yet");
		return ret;
	}
}

int bg_agent_check(const char *config_path, FILE *out)
{
	struct bg_protect_set *ps = NULL;
	struct bg_config cfg;
	char err[512], dir[PATH_MAX - 128], copy[PATH_MAX];
	char url[1024];
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
	for (i = 0; i < cfg.n_lists; i++) {
		const struct bg_cfg_list *l = &cfg.lists[i];
		struct bg_fetch_validators v = { { 0 }, { 0 } };
		struct bg_fetch_result r;
		struct bg_fetch_src f = {
			.list = l->list, .timeout = l->timeout, .max_bytes = l->max_bytes,
			.max_shrink = l->max_shrink,
		};

		if (l->list.path && cfg.max_list_bytes < f.max_bytes)
			f.max_bytes = cfg.max_list_bytes;
		if (snprintf(copy, sizeof(copy), "%s/%s.list", dir, l->list.name) >=
		    (int)sizeof(copy))
			copy[0] = 0; /* not reached: dir and names are bounded */
		memset(&r, 0, sizeof(r));
		if (l->kind == BG_SRC_CROWDSEC || l->kind == BG_SRC_FLEET) {
			char why[512];
			int ret = other_check(&cfg, l, why, sizeof(why), ps, copy, out);

			bg_url_redact(bg_list_origin(&l->list), url, sizeof(url));
			if (ret) {
				fprintf(out, "list %s (%s): FAILED: %s\n", l->list.name, url, why);
				bad = 1;
			} else {
				fprintf(out, "list %s (%s): ok, %s\n", l->list.name, url, why);
			}
			continue;
		}
		if (bg_fetch(&f, copy, &v, &r) || r.outcome == BG_FETCH_FAILED ||
		    judge_copy(&cfg, l, &f, copy, &r, ps, out)) {
			fprintf(out, "list %s (%s): FAILED: %s\n", l->list.name,
				bg_url_redact(bg_list_origin(&l->list), url, sizeof(url)),
				r.err);
			bad = 1;
		} else {
			fprintf(out, "list %s (%s): ok, %llu entries, %llu rejected lines\n",
				l->list.name,
				bg_url_redact(bg_list_origin(&l->list), url, sizeof(url)),
				(unsigned long long)r.entries,
				(unsigned long long)r.rejected);
		}
		bg_fetch_discard(copy);
		unlink(copy);
	}
	rmdir(dir);
	bg_config_free(&cfg);
	free(ps);
	return bad;
}
