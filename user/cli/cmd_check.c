// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate check: what the live filter says of an address or a name,
 * and why (core/explain.h; the agent's store when the agent built it).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "core/artifact.h"
#include "core/print.h"
#include "core/view.h"
#include "agent/crowdsec.h"
#include "agent/provenance.h"
#include "agent/store.h"
#include "kern/swap.h"

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

/* The agent's store behind a record, when the record names the agent's
 * copies (STATE_DIR/lists/NAME.list) and STATE_DIR/bloomgate.db is there:
 * then check names each source and the line as fetched, from the sources'
 * provenance indexes. NULL otherwise. */
static struct bg_store *agent_store_of(const struct bg_record *rec)
{
	char dir[PATH_MAX], *p;
	struct bg_store *st = NULL;
	int ret;

	if (rec->n < 1 || snprintf(dir, sizeof(dir), "%s", rec->src[0].path) >=
				  (int)sizeof(dir))
		return NULL;
	p = strrchr(dir, '/');
	if (!p || strcmp(p + strlen(p) - 5, ".list"))
		return NULL;
	*p = 0;
	p = strrchr(dir, '/');
	if (!p || strcmp(p, "/lists"))
		return NULL;
	*p = 0;
	ret = bg_store_open_ro(dir, &st);
	if (ret && ret != -ENOENT)
		/* said, not taken for something else (a corrupt page once
		 * read as "out of memory"): the lists' copies still name the
		 * entries */
		fprintf(stderr, "bloomgate: the agent's store in %s cannot be read "
			"(%s): entries named from the lists' copies instead\n", dir,
			ret == -EBADMSG ? "not a database, or a corrupt one" :
			ret == -EPROTO ? "written by a newer bloomgate" : strerror(-ret));
	return ret ? NULL : st;
}

/* A source whose entries check cannot name (its index is missing, stale or
 * corrupt): said once, on stderr, and *why names it for the verdict's line
 * when no other entry explains it. */
static void prov_problems(const struct bg_prov_reader *prov, int *said,
			  const char **why)
{
	static char what[BG_STORE_NAME_MAX + 64];
	const char *src, *reason;
	size_t i;

	for (i = 0; bg_prov_problem(prov, i, &src, &reason); i++) {
		if (!*said)
			fprintf(stderr, "bloomgate: check: list %s: %s; its entries "
				"are not named (the agent re-indexes it when it "
				"starts)\n", src, reason);
		if (i == 0) {
			snprintf(what, sizeof(what), "the provenance index of %s", src);
			*why = what;
		}
	}
	if (i)
		*said = 1;
}

/* The agent's indexes, a crowdsec: source's entries named by their
 * decision (its copy's line says which): "listed by crowdsec decision
 * 1234 (origin cscli, scenario ...) in crowdsec (URL)". */
static int prov_find(void *ctx, const char *arg, struct bg_explain_hit **hits,
		     size_t *n)
{
	char text[sizeof((*hits)->entry)];
	size_t i;
	int ret = bg_prov_find(ctx, arg, hits, n);

	for (i = 0; !ret && i < *n; i++)
		if (!bg_cs_line_text((*hits)[i].text, text, sizeof(text))) {
			memcpy((*hits)[i].entry, text, sizeof(text));
			(*hits)[i].line = 0;
		}
	return ret;
}

int cli_cmd_check(int argc, char **argv)
{
	struct bg_prov_reader *prov = NULL;
	struct bg_store *store = NULL;
	struct bg_art_finder art;
	int have_art = 0;
	struct bg_record rec;
	const void *mem;
	struct bg_state st;
	size_t len;
	__u32 id = 0;
	int i, ret, bad = 0, have_rec, said = 0;

	if ((ret = cli_parse_args(&cli_check_cmd, &argc, argv, NULL)))
		return ret < 0 ? 0 : ret;
	if ((ret = cli_need_root()))
		return ret;
	if ((ret = cli_open_state(&st, 0)))
		return ret;
	/* The record of the filter mapped: its id read before and after
	 * the mapping, so a swap in between is seen (and retried). */
	for (i = 0; i < 5; i++) {
		id = bg_filter_current_id(st.filters_fd);
		ret = bg_filter_view_current(st.filters_fd, &mem, &len);
		if (ret == 0 && id != bg_filter_current_id(st.filters_fd)) {
			bg_filter_unmap(mem, len);
			ret = -EAGAIN;
		}
		if (ret != -EAGAIN)
			break;
	}
	have_rec = ret == 0 && bg_record_read(id, &rec) == 0;
	bg_state_close(&st);
	if (ret == -ENOENT)
		return cli_fail(1, "no filter is loaded (run: bloomgate load LIST)");
	if (ret == -EPROTO)
		return cli_fail(1, "the loaded filter is from another bloomgate version "
			    "(ABI %d expected); reload it", BG_ABI_VERSION);
	if (ret)
		return cli_fail(1, "cannot read the live filter: %s", strerror(-ret));
	if (have_rec && rec.artifact) {
		char why[512];

		/* loaded from an artifact: its index names the lists */
		have_art = !bg_art_finder_open(rec.artifact, rec.artifact_sha, &art,
					       why, sizeof(why));
		if (!have_art)
			fprintf(stderr, "bloomgate: check: %s: entries are not "
				"named\n", why);
	} else if (have_rec) {
		store = agent_store_of(&rec);
	}
	/* the indexes, or (none can be opened) the record's lists re-read */
	if (store && bg_prov_open(store, &prov))
		prov = NULL;
	for (i = 1; i < argc; i++) {
		struct bg_explanation x;

		if (have_art)
			ret = bg_explain_found(mem, bg_art_find, &art, argv[i], &x);
		else if (prov)
			ret = bg_explain_found(mem, prov_find, prov, argv[i], &x);
		else
			ret = bg_explain(mem, have_rec && !rec.artifact ? &rec : NULL,
					 argv[i], &x);
		/* a chunk of the filter that could not be mapped answered "not
		 * listed": no answer at all then (core/view.h) */
		if (!ret && bg_view_error(mem))
			ret = bg_view_error(mem);
		if (ret) {
			bad = cli_fail(1, "%s: %s", argv[i], strerror(-ret));
		} else if (x.kind == BG_EXPLAIN_INVALID) {
			fprintf(stderr, "bloomgate: %s: %s\n", argv[i], x.why);
			bad = bad ? bad : EXIT_USAGE;
		} else {
			/* after the find: a block found corrupt on the way
			 * is a problem too */
			if (prov && x.listed)
				prov_problems(prov, &said, &x.unreadable);
			bg_print_explanation(stdout, argv[i], &x);
		}
		bg_explain_free(&x);
	}
	bg_filter_unmap(mem, len);
	bg_prov_close(prov);
	if (have_art)
		bg_art_finder_close(&art);
	if (store)
		bg_store_close(store);
	if (have_rec)
		bg_record_free(&rec);
	return bad;
}
