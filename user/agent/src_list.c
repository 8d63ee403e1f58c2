// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The driver of a list source (user/agent/source.h): a file, watched with
 * inotify, or a URL, fetched on a timer with a conditional GET
 * (agent/fetch.h). Its input is checked by the rebuild's parse of the new
 * copy, the very parse that builds the filter: every line the parser
 * rejects is logged with its file:line and reason (the first few of each
 * copy, then a count) and counted, and the copy as a whole is judged by
 * the rules of a good copy (bg_fetch_judge(): not a list, shrank past its
 * guard). The file fetch is the artifact driver's too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>

#include "agent/agent_priv.h"
#include "agent/protect.h"
#include "core/url.h"

void src_fetch_opts(const struct bg_config *c, const struct bg_cfg_list *l,
		    struct bg_fetch_src *f)
{
	memset(f, 0, sizeof(*f));
	f->list = l->list;
	f->timeout = l->timeout;
	f->max_bytes = l->max_bytes;
	/* a file is read by the rebuild as it is, so the rebuild's bound
	 * holds for its copy too; a URL keeps its own cap (the rebuild
	 * still refuses a copy past max_list_bytes) */
	if (l->list.path && c->max_list_bytes < f->max_bytes)
		f->max_bytes = c->max_list_bytes;
	f->max_shrink = l->max_shrink;
}

/* A file or URL fetch: the options, with the job's own copy of the list
 * (a reload may free the config meanwhile). */
struct file_job {
	struct bg_fetch_src f;
};

int src_file_fetch_begin(struct agent *a, struct source *s, void **job)
{
	struct file_job *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	src_fetch_opts(&a->cfg, s->cfg, &j->f);
	if (bg_list_desc_dup(&j->f.list, &s->cfg->list)) {
		free(j);
		return -ENOMEM;
	}
	*job = j;
	return 0;
}

void src_file_fetch(void *job, const char *copy, const char *kept_sha,
		    struct bg_fetch_validators *v, struct bg_fetch_result *r,
		    const int *quit)
{
	struct file_job *j = job;

	j->f.abort = quit;
	j->f.kept_sha256 = kept_sha;
	if (bg_fetch(&j->f, copy, j->f.list.url ? v : NULL, r)) {
		r->outcome = BG_FETCH_FAILED;
		snprintf(r->err, sizeof(r->err), "cannot fetch (internal error)");
	}
}

void src_file_fetch_end(struct agent *a, struct source *s, void *job,
			const struct bg_fetch_result *r, char *note, size_t len)
{
	struct file_job *j = job;

	(void)a;
	(void)s;
	(void)r;
	(void)note;
	(void)len;
	bg_list_desc_free(&j->f.list);
	free(j);
}

int src_watch_open(struct agent *a, struct source *s)
{
	char d[PATH_MAX], *slash;

	if (!s->cfg->list.path || a->infd < 0)
		return 0;
	snprintf(d, sizeof(d), "%s", s->cfg->list.path);
	slash = strrchr(d, '/');
	if (slash)
		*(slash == d ? slash + 1 : slash) = 0;
	s->wd = inotify_add_watch(a->infd, d,
				  IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE |
				  IN_DELETE | IN_MOVED_FROM | IN_ATTRIB);
	if (s->wd < 0)
		agent_log("source %s: cannot watch %s: %s", s->cfg->list.name, d,
			  strerror(errno));
	return 0;
}

static int list_judge(const struct bg_cfg_list *cfg, uint64_t entries,
		      uint64_t rejected, uint64_t prev_entries, char *why,
		      size_t len)
{
	struct bg_fetch_src f = { .list = cfg->list, .max_shrink = cfg->max_shrink };

	return bg_fetch_judge(&f, entries, rejected, prev_entries, why, len);
}

/* agent --check: the rejected lines printed as the parse finds them,
 * each named as the agent's log names it: the list's origin and line */
struct check_ctx {
	struct src_refusal_log log;
	char origin[1024]; /* redacted */
};

static void check_diag(void *ctx, const struct bg_diag *d)
{
	struct check_ctx *c = ctx;
	char where[sizeof(c->origin) + 32];

	if (d->warning)
		return;
	if (d->line)
		snprintf(where, sizeof(where), "%s:%zu", c->origin, d->line);
	else
		snprintf(where, sizeof(where), "%s", c->origin);
	src_refused_log(&c->log, where, d->reason, d->text);
}

/* The copy fetched into dir parsed as the rebuild parses it, and judged:
 * 0 good, 1 not; its line printed, then the lines its parse rejected. */
static int list_check(const struct bg_config *cfg, const struct bg_cfg_list *l,
		      const char *dir, const struct bg_protect_set *ps,
		      FILE *out)
{
	char copy[PATH_MAX], cand[PATH_MAX + 8], *lines = NULL;
	struct bg_fetch_validators v = { { 0 }, { 0 } };
	struct check_ctx c = { .log = { .source = l->list.name } };
	struct src_refusal_log *log = &c.log;
	const char *url = c.origin;
	struct bg_list_opts o = { .diag = check_diag, .diag_ctx = &c,
				  .max_bytes = cfg->max_list_bytes,
				  .allow_wide = l->list.allow_wide };
	struct bg_source s = { .list = l->list };
	struct bg_source_info in = { 0 };
	struct bg_fetch_result r;
	struct bg_fetch_src f;
	struct bg_blocklist bl;
	size_t n = 0;
	int bad, ret;

	src_fetch_opts(cfg, l, &f);
	bg_url_redact(bg_list_origin(&l->list), c.origin, sizeof(c.origin));
	snprintf(copy, sizeof(copy), "%s/%s.list", dir, l->list.name);
	if (bg_fetch(&f, copy, &v, &r) || r.outcome == BG_FETCH_FAILED ||
	    bg_fetch_candidate(copy, cand, sizeof(cand))) {
		fprintf(out, "list %s (%s): FAILED: %s\n", l->list.name, url, r.err);
		return 1;
	}
	/* the rejected lines after the list's own line */
	log->out = open_memstream(&lines, &n);
	if (!log->out)
		log->out = out;
	s.path = cand;
	bg_blocklist_init(&bl);
	ret = bg_source_parse_info(&s, &bl, &o, &in);
	if (!ret && in.format == BG_FMT_ADDR)
		agent_protect_check_list(out, ps, &bl, cand, l);
	bg_blocklist_free(&bl);
	src_refused_end(log);
	bg_fetch_discard(copy);
	if (ret < 0) {
		snprintf(r.err, sizeof(r.err), "reading the copy: %s", strerror(-ret));
		bad = 1;
	} else {
		bad = bg_fetch_judge(&f, in.entries, in.rejected, 0, r.err,
				     sizeof(r.err));
	}
	if (bad)
		fprintf(out, "list %s (%s): FAILED: %s\n", l->list.name, url, r.err);
	else
		fprintf(out, "list %s (%s): ok, %zu entries, %zu rejected lines\n",
			l->list.name, url, in.entries, in.rejected);
	if (log->out != out) {
		fclose(log->out);
		fputs(lines ? lines : "", out);
		free(lines);
	}
	return bad;
}

const struct src_ops src_list_ops = {
	.kind = "list",
	.retry_base = RETRY_BASE,
	.open = src_watch_open,
	.fetch_begin = src_file_fetch_begin,
	.fetch = src_file_fetch,
	.fetch_end = src_file_fetch_end,
	.judge = list_judge,
	.check = list_check,
};
