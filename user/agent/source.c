// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One source (user/agent/source.h): its driver, its state and what it
 * refused. The agent's table of them, their fetches and reloads are
 * sources.c's.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "agent/fetch.h"
#include "agent/log.h"
#include "agent/source.h"
#include "core/clock.h"

const struct src_ops *src_ops_of(const struct bg_cfg_list *l)
{
	switch (l->kind) {
	case BG_SRC_CROWDSEC:
		return &src_crowdsec_ops;
	case BG_SRC_ARTIFACT:
		return &src_artifact_ops;
	case BG_SRC_FLEET:
		return &src_fleet_ops;
	default:
		return &src_list_ops;
	}
}

void src_set_state(struct source *s, const char *state, const char *why)
{
	if (s->state && !strcmp(s->state, state))
		return;
	s->state = state;
	agent_log("source %s: %s%s%s", s->cfg->list.name, state, why ? ": " : "",
		  why ? why : "");
}

void src_ok(struct source *s)
{
	s->rec.last_ok = bg_wall();
	s->failed_in_row = 0;
	s->rec.last_error[0] = 0;
	src_set_state(s, "ok", NULL);
}

void src_failed(struct source *s, const char *why)
{
	s->rec.failures++;
	s->failed_in_row++;
	snprintf(s->rec.last_error, sizeof(s->rec.last_error), "%s", why);
	src_set_state(s, "failing", why);
}

double src_retry_at(const struct source *s)
{
	double max = fmin(s->cfg->refresh, RETRY_MAX);

	return bg_mono() + bg_backoff(s->failed_in_row,
					 fmin(s->ops->retry_base, max), max,
					 agent_rnd());
}

void src_refused_count(struct src_refusals *r, const char *reason, uint64_t n)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].reason, reason))
			break;
	if (i == r->n) {
		if (r->n == SRC_REASONS_MAX) {
			i = r->n - 1;
			r->v[i].reason = "other";
		} else {
			r->v[r->n++].reason = reason;
		}
	}
	r->v[i].count += n;
}

void src_refused_log(struct src_refusal_log *l, const char *where,
		     const char *reason, const char *text)
{
	if (l->n++ >= SRC_REFUSED_LOGGED)
		return;
	if (l->out)
		fprintf(l->out, "  %s: %s: '%s'\n", where, reason, text);
	else
		agent_log("source %s: refused %s: %s: '%s'", l->source, where,
			  reason, text);
}

void src_refused_end(struct src_refusal_log *l)
{
	uint64_t more = l->n > SRC_REFUSED_LOGGED ? l->n - SRC_REFUSED_LOGGED : 0;

	if (!more)
		;
	else if (l->out)
		fprintf(l->out, "  ... and %llu more\n", (unsigned long long)more);
	else
		agent_log("source %s: refused %llu more (%llu in all)", l->source,
			  (unsigned long long)more, (unsigned long long)l->n);
	l->n = 0;
}
