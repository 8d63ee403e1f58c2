// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's part of the protected set (agent/protect.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_priv.h"
#include "agent/crowdsec.h"
#include "agent/protect.h"
#include "core/url.h"
#include "kern/pins.h"
#include "kern/protect.h"

int agent_protect_gather(const struct bg_protect_item *v, size_t n,
			 struct bg_protect_set **out, char *why, size_t whylen)
{
	struct bg_protect_src src = { .extra = v, .n_extra = n };
	struct bg_state st;
	int ret, open;

	*out = malloc(sizeof(**out));
	if (!*out) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	/* nothing attached: resolv.conf's and the config's alone (the
	 * commit finds no state anyway) */
	open = !bg_state_open(&st, 0);
	src.st = open ? &st : NULL;
	ret = bg_protect_gather(&src, *out, why, whylen);
	if (open)
		bg_state_close(&st);
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

void agent_protect_refresh(const struct bg_protect_item *v, size_t n)
{
	struct bg_protect_src src = { .extra = v, .n_extra = n };
	struct bg_state st;
	char why[256];

	if (bg_state_open(&st, 1))
		return;
	src.st = &st;
	if (bg_protect_refresh(&src, why, sizeof(why)))
		agent_log("the protected set is unchanged: %s", why);
	bg_state_close(&st);
}

void agent_protect_where(char *buf, size_t len, const struct bg_list_desc *l,
			 int crowdsec, const struct bg_protect_cover *c)
{
	char what[512], origin[1024];

	if (!l) {
		if (c->list[0])
			snprintf(buf, len, "in list %s", c->list);
		else
			buf[0] = 0;
		return;
	}
	if (crowdsec && !bg_cs_line_text(c->text, what, sizeof(what))) {
		snprintf(buf, len, "(%s, list %s)", what, l->name);
		return;
	}
	bg_url_redact(bg_list_origin(l) ? bg_list_origin(l) : "?", origin, sizeof(origin));
	if (c->line)
		snprintf(buf, len, "at %s:%zu (list %s)", origin, c->line, l->name);
	else
		snprintf(buf, len, "in %s (list %s)", origin, l->name);
}

void agent_protect_say(FILE *out, const struct bg_protect_covers *c,
		       agent_list_of_fn list_of, void *ctx)
{
	char where[2048], line[3072];
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct bg_list_desc *l = NULL;
		int cs = 0;

		if (list_of && c->v[i].source != SIZE_MAX)
			l = list_of(ctx, c->v[i].source, &cs);
		agent_protect_where(where, sizeof(where), l, cs, &c->v[i]);
		bg_protect_cover_fmt(line, sizeof(line), &c->v[i], where);
		if (out)
			fprintf(out, "protected: %s\n", line);
		else
			agent_log("protected: %s", line);
	}
	if (c->more && out)
		fprintf(out, "protected: and %zu more entries over the protected set\n",
			c->more);
	else if (c->more)
		agent_log("protected: and %zu more entries over the protected set",
			  c->more);
}

static const struct bg_list_desc *one_list(void *ctx, size_t k, int *cs)
{
	(void)k;
	*cs = 1;
	return ctx;
}

/* 1 when old has a cover of the same entry over the same item. */
static int covered_before(const struct bg_protect_covers *old,
			  const struct bg_protect_cover *x)
{
	size_t i;

	for (i = 0; i < old->n; i++)
		if (old->v[i].family == x->family &&
		    !memcmp(&old->v[i].what, &x->what, sizeof(x->what)) &&
		    (x->family == BG_KEY_IPV4 ?
			     !memcmp(&old->v[i].k4, &x->k4, sizeof(x->k4)) :
			     !memcmp(&old->v[i].k6, &x->k6, sizeof(x->k6))))
			return 1;
	return 0;
}

void agent_protect_changes(const struct bg_protect_set *s, const struct bg_list *old,
			   const struct bg_list *nw, const char *copy,
			   const struct bg_list_desc *l)
{
	struct bg_protect_covers oc = { 0 }, nc = { 0 };
	struct bg_sources srcs;
	size_t i, k;

	bg_sources_init(&srcs);
	if (!bg_protect_covers_find(s, old, &oc) && !bg_protect_covers_find(s, nw, &nc)) {
		for (i = k = 0; i < nc.n; i++)
			if (!covered_before(&oc, &nc.v[i]))
				nc.v[k++] = nc.v[i];
		nc.n = k;
		if (nc.n && !bg_sources_add_list(&srcs, copy, l) &&
		    !bg_protect_covers_lines(&nc, &srcs))
			agent_protect_say(NULL, &nc, one_list, (void *)l);
	}
	bg_sources_free(&srcs);
	bg_protect_covers_free(&oc);
	bg_protect_covers_free(&nc);
}

/* ---- agent --check ---------------------------------------------------------- */

static void quiet(void *ctx, const struct bg_diag *d)
{
	(void)ctx;
	(void)d;
}

/* An address list copy parsed into bl (initialised here). */
static int parse_addrs(const char *path, struct bg_blocklist *bl)
{
	struct bg_source s = { .path = (char *)path };
	struct bg_list_opts o = { .diag = quiet };
	int used, ret;

	s.list.format = BG_FMT_ADDR;
	bg_blocklist_init(bl);
	ret = bg_source_parse(&s, bl, &o, &used);
	if (ret)
		bg_blocklist_free(bl);
	return ret;
}

struct bg_protect_set *agent_protect_check_set(const struct bg_config *cfg, FILE *out)
{
	struct bg_protect_src src = { .extra = cfg->protect.v,
				      .n_extra = cfg->protect.n };
	const char **names = calloc(cfg->n_ifaces + 1, sizeof(*names));
	struct bg_protect_set *ps = malloc(sizeof(*ps));
	unsigned int kinds[BG_PROTECT_CONFIG + 1];
	char why[256], line[512];
	size_t i;

	if (!names || !ps) {
		fprintf(out, "protected set: out of memory\n");
		free(names);
		free(ps);
		return NULL;
	}
	for (i = 0; i < cfg->n_ifaces; i++)
		names[i] = cfg->ifaces[i].name;
	src.ifnames = names;
	src.n_ifnames = cfg->n_ifaces;
	if (bg_protect_gather(&src, ps, why, sizeof(why))) {
		fprintf(out, "protected set: FAILED: %s\n", why);
		free(ps);
		ps = NULL;
	} else {
		bg_protect_kinds(ps, kinds);
		bg_protect_summary(line, sizeof(line), kinds);
		fprintf(out, "protected set: %s\n", line);
	}
	free(names);
	return ps;
}

static const struct bg_list_desc *the_list(void *ctx, size_t k, int *cs)
{
	const struct bg_cfg_list *l = ctx;

	(void)k;
	*cs = l->kind == BG_SRC_CROWDSEC;
	return &l->list;
}

void agent_protect_check_list(FILE *out, const struct bg_protect_set *ps,
			      struct bg_blocklist *bl, const char *file,
			      const struct bg_cfg_list *l)
{
	struct bg_protect_covers c = { 0 };
	struct bg_list_desc d = l->list;
	struct bg_blocklist own;
	struct bg_sources srcs;

	if (!ps || (!bl && parse_addrs(file, &own)))
		return;
	bg_sources_init(&srcs);
	d.format = BG_FMT_ADDR;
	if (!bl)
		bl = &own;
	bg_blocklist_finish(bl);
	if (!bg_protect_covers_find(ps, &bl->block, &c) &&
	    !bg_sources_add_list(&srcs, file, &d) &&
	    !bg_protect_covers_lines(&c, &srcs))
		agent_protect_say(out, &c, the_list, (void *)l);
	bg_protect_covers_free(&c);
	bg_sources_free(&srcs);
	if (bl == &own)
		bg_blocklist_free(&own);
}
