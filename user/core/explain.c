// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The explanation behind `check` (user/core/explain.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomgate/dns.h"
#include "core/explain.h"
#include "core/filter.h"

/* Collecting entries: the list, the query (names) and what to keep. */
struct collect {
	struct bg_explain_list *out;
	const char *query;
	int want_allow;
	int wide_ok; /* the list's wide prefixes were loaded */
	int err;
};

static int push(struct collect *c, const char *path, size_t line,
		const char *text, const char *parent)
{
	struct bg_explain_list *l = c->out;
	struct bg_explain_entry *v, *e;

	if (c->err)
		return -1;
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v) {
		c->err = -ENOMEM;
		return -1;
	}
	l->v = v;
	e = &v[l->n];
	e->line = line;
	e->path = strdup(path);
	e->text = strdup(text);
	e->parent = parent ? strdup(parent) : NULL;
	if (!e->path || !e->text || (parent && !e->parent)) {
		free(e->path);
		free(e->text);
		free(e->parent);
		c->err = -ENOMEM;
		return -1;
	}
	l->n++;
	return 0;
}

static void on_cover(void *ctx, const char *path, size_t line, const char *text,
		     const struct bg_key4 *k4, const struct bg_key6 *k6)
{
	char a[INET6_ADDRSTRLEN] = "?", pfx[INET6_ADDRSTRLEN + 8] = "?";
	struct collect *c = ctx;

	/* The entry as it was read (masked), not the raw line with comments. */
	(void)text;
	/* a wide prefix the load rejected built nothing: not a reason */
	if (!c->wide_ok && bg_key_wide(k4 ? BG_KEY_IPV4 : BG_KEY_IPV6, k4, k6))
		return;
	if (k4) {
		inet_ntop(AF_INET, &k4->addr, a, sizeof(a));
		snprintf(pfx, sizeof(pfx), k4->plen == 32 ? "%s" : "%s/%u", a, k4->plen);
	} else if (k6) {
		inet_ntop(AF_INET6, k6->addr, a, sizeof(a));
		snprintf(pfx, sizeof(pfx), k6->plen == 128 ? "%s" : "%s/%u", a, k6->plen);
	}
	push(ctx, path, line, pfx, NULL);
}

/* A list read from standard input ("-") is gone: reported unreadable,
 * never read from check's own stdin. */
static int from_stdin(const char *path)
{
	return !strcmp(path, "-");
}

/* Address lists of the record (allow or block ones) covering the key. */
static void find_addr(struct bg_explanation *x, const struct bg_record *rec,
		      int allow, const struct bg_key4 *k4,
		      const struct bg_key6 *k6, struct collect *c)
{
	int i;

	c->out = allow ? &x->allow : &x->block;
	for (i = 0; i < rec->n; i++) {
		if (rec->src[i].list.format != BG_FMT_ADDR || rec->src[i].list.allow != allow)
			continue;
		/* as bg_source_parse() read it: an allowlist's always load */
		c->wide_ok = allow || rec->src[i].list.allow_wide;
		if ((from_stdin(rec->src[i].path) ||
		     bg_list_find_covering(rec->src[i].path, k4, k6, on_cover, c) < 0) &&
		    !x->unreadable)
			x->unreadable = bg_list_name(rec->src[i].path);
	}
}

static void on_name(void *ctx, const char *path, size_t line, const char *text,
		    const struct bg_name *ent, int label)
{
	struct collect *c = ctx;
	const char *parent = c->query;
	int j;

	if (!!ent->allow != c->want_allow)
		return;
	for (j = 0; j < label && parent; j++) {
		parent = strchr(parent, '.');
		parent = parent ? parent + 1 : NULL;
	}
	push(c, path, line, text, label > 0 ? parent : NULL);
}

/* Domain lists of the record: the allow (want_allow) or block rules that
 * the datapath's probes for the name find. Allow rules may sit in block
 * lists (@@||name^); every entry of an --allow list is one. */
static void find_name(struct bg_explanation *x, const struct bg_record *rec,
		      int want_allow, struct collect *c)
{
	int i;

	c->out = want_allow ? &x->allow : &x->block;
	c->query = x->name;
	c->want_allow = want_allow;
	for (i = 0; i < rec->n; i++) {
		const struct bg_source *src = &rec->src[i];
		struct bg_dom_opts o = { 0 };

		if (src->list.format == BG_FMT_ADDR || (src->list.allow && !want_allow))
			continue;
		o.format = src->list.format;
		o.subdomains = src->list.subdomains;
		o.allow = src->list.allow;
		if ((from_stdin(src->path) ||
		     bg_names_find(src->path, &o, x->name, on_name, c) < 0) &&
		    !x->unreadable)
			x->unreadable = bg_list_name(src->path);
	}
}

/*
 * check asks about one concrete name, as a query would have it. Not a
 * leading "*." taken off either: a list reads "*.x" as x's subdomains
 * only (BG_NAME_SUBS, user/core/domains.c), so checking x would answer another
 * question. The name parser's own reason ("only allowed as a leading
 * '*.'") is about lists and wrong here.
 */
static const char R_CHECK_SUBS[] =
	"a pattern, not a name: check takes a concrete name (in a list, "
	"'*.NAME' covers the subdomains of NAME, not NAME: check one of them, "
	"e.g. www.NAME)";
static const char R_CHECK_WILDCARD[] =
	"a pattern, not a name: check takes a concrete name, without '*'";

/* An argument that is neither an address nor a name: why, as an address
 * when it looks like one. */
static const char *bad_arg_reason(const char *arg, const char *addr_why,
				  const char *name_why)
{
	size_t n = strlen(arg);

	if (!strncmp(arg, "*.", 2) && !strchr(arg + 2, '*'))
		return R_CHECK_SUBS;
	if (strchr(arg, '*'))
		return R_CHECK_WILDCARD;
	if (strchr(arg, ':') || strchr(arg, '/') ||
	    strspn(arg, "0123456789.") == n)
		return addr_why;
	return name_why ? name_why : "not a domain name";
}

/* The verdict on arg, as the datapath gives it; fills kind, listed,
 * allowed, no_names, name (for a name) and the address keys. */
static void judge(const void *mem, const char *arg, struct bg_explanation *x,
		  struct bg_key4 *k4, struct bg_key6 *k6, int *family)
{
	const struct bg_filter_header *h = mem;
	const char *why = NULL, *name_why = NULL;
	int label = 0;
	__u32 probes;

	*family = bg_parse_addr(arg, k4, k6, &why);
	if (*family) {
		x->kind = BG_EXPLAIN_ADDR;
		x->family = *family;
		if (*family == BG_KEY_IPV4)
			memcpy(x->addr, &k4->addr, 4);
		else
			memcpy(x->addr, k6->addr, 16);
		x->listed = *family == BG_KEY_IPV4 ?
				    bg_filter_judge4(mem, k4->addr, &x->rejected) :
				    bg_filter_judge6(mem, k6->addr, &x->rejected);
		x->confirmed = x->listed && h->fp_nbuckets;
		if (x->listed)
			x->allowed = *family == BG_KEY_IPV4 ?
					     bg_filter_allowed4(mem, k4->addr) :
					     bg_filter_allowed6(mem, k6->addr);
		return;
	}
	if (bg_name_normalise(arg, strlen(arg), x->name, &name_why) ||
	    (x->listed = bg_filter_judge_name(mem, x->name, &label, &probes,
					      &x->rejected)) < 0) {
		x->kind = BG_EXPLAIN_INVALID;
		x->listed = 0;
		x->why = bad_arg_reason(arg, why, name_why);
		return;
	}
	x->kind = BG_EXPLAIN_NAME;
	x->confirmed = x->listed && h->fp_nbuckets;
	if (!x->listed) {
		x->no_names = !(h->flags & BG_FILTER_F_NAMES);
		return;
	}
	/* The datapath asks the name allowlist only after a positive. */
	x->allowed = bg_filter_name_allowed(mem, x->name, &label) == 1;
}

int bg_explain(const void *mem, const struct bg_record *rec, const char *arg,
	       struct bg_explanation *x)
{
	struct collect c = { 0 };
	struct bg_key4 k4;
	struct bg_key6 k6;
	int family;

	memset(x, 0, sizeof(*x));
	x->known = rec != NULL;
	judge(mem, arg, x, &k4, &k6, &family);
	if (!x->listed || !rec)
		return 0;
	if (x->kind == BG_EXPLAIN_ADDR) {
		const struct bg_key4 *p4 = family == BG_KEY_IPV4 ? &k4 : NULL;
		const struct bg_key6 *p6 = family == BG_KEY_IPV6 ? &k6 : NULL;

		find_addr(x, rec, 0, p4, p6, &c);
		if (x->allowed)
			find_addr(x, rec, 1, p4, p6, &c);
	} else {
		find_name(x, rec, 0, &c);
		if (x->allowed)
			find_name(x, rec, 1, &c);
	}
	return c.err;
}

int bg_explain_found(const void *mem, bg_explain_find_fn find, void *ctx,
		     const char *arg, struct bg_explanation *x)
{
	struct collect c = { 0 };
	struct bg_explain_hit *hits = NULL;
	struct bg_key4 k4;
	struct bg_key6 k6;
	size_t i, n = 0;
	char where[BG_EXPLAIN_NAME_MAX + 1024 + 4];
	int family, ret;

	memset(x, 0, sizeof(*x));
	x->known = 1;
	judge(mem, arg, x, &k4, &k6, &family);
	if (!x->listed)
		return 0;
	ret = find(ctx, arg, &hits, &n);
	if (ret)
		return ret == -EINVAL ? 0 : ret;
	for (i = 0; i < n && !c.err; i++) {
		const struct bg_explain_hit *h = &hits[i];

		if (h->allow && !x->allowed)
			continue; /* the datapath asks the allowlist only then */
		c.out = h->allow ? &x->allow : &x->block;
		/* the source by name, and where its copy came from */
		snprintf(where, sizeof(where), "%s (%s)", h->source, h->origin);
		push(&c, where, h->line,
		     x->kind == BG_EXPLAIN_ADDR ? h->entry : h->text,
		     h->parent[0] ? h->parent : NULL);
	}
	free(hits);
	return c.err;
}

void bg_explain_protect(struct bg_explanation *x, const struct bg_protect_set *s)
{
	const struct bg_protect_item *it;
	__u32 a;

	if (x->kind != BG_EXPLAIN_ADDR || !x->listed || x->allowed)
		return;
	memcpy(&a, x->addr, 4);
	if (!(x->family == BG_KEY_IPV4 ? bg_protect_test4(s, a) :
					 bg_protect_test6(s, x->addr)))
		return;
	x->protect = 1;
	it = bg_protect_lookup(s, x->family, x->addr);
	if (it)
		bg_protect_why(x->protect_why, sizeof(x->protect_why), it);
	else
		snprintf(x->protect_why, sizeof(x->protect_why), "in the protected set");
}

static void free_list(struct bg_explain_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].text);
		free(l->v[i].parent);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void bg_explain_free(struct bg_explanation *x)
{
	free_list(&x->block);
	free_list(&x->allow);
}
