// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's config (user/agent/config.h). One concern, long because every key
 * is validated with its own message and line. Two passes: libyaml's events are
 * first turned into a small tree of scalars, sequences and maps, each with
 * its line; the tree is then walked against tables of the keys each
 * section accepts. Why not libyaml's document API: it resolves aliases
 * silently and forgets anchors, and we want to refuse them (a config that
 * shares a map between two lists reads as one thing and means another);
 * the events keep them. Why a tree rather than checking on the events:
 * the checks that concern several keys (url or path, the refresh default
 * that depends on which, duplicate names) need the whole item, with the
 * lines to point at.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "agent/config.h"
#include "agent/config_priv.h"
#include "agent/fleetdb.h"
#include "bloomgate/dns.h" /* BG_DNS_PORT */
#include "core/grow.h"
#include "core/url.h"
#include "core/filter.h"
#include "core/format.h"
#include "core/io.h"
#include "core/opts.h" /* bg_opt_size */
#include "core/prepare.h" /* BG_LOAD_ENTRIES_MAX */
#include "core/protect.h"

/* ---- defaults ---- */

/*
 * What each section's keys are when absent: the parser starts every item
 * from these, and bg_config_keys() reads the defaults it describes from
 * them (one place for both). Defaults that depend on other keys are set
 * after the walk (refresh, fpr) and described by the field's def().
 */
int cfg_root_defaults(struct bg_config *c)
{
	c->fpr = 0; /* absent: bg_fpr_default(confirm), at the end */
	c->confirm = 1;
	c->debounce = BG_CFG_DEBOUNCE;
	c->max_list_bytes = BG_LIST_BYTES_MAX;
	c->max_entries = BG_LOAD_ENTRIES_MAX;
	c->state_dir = strdup(BG_CFG_STATE_DIR);
	return c->state_dir ? 0 : -ENOMEM;
}

void cfg_iface_defaults(struct bg_cfg_iface *f)
{
	f->attach = bg_attach_defaults;
}

void cfg_list_defaults(struct bg_cfg_list *l)
{
	l->list.format = BG_FMT_AUTO;
	l->timeout = BG_CFG_TIMEOUT;
	l->max_bytes = BG_CFG_MAX_BYTES;
	l->max_shrink = BG_CFG_MAX_SHRINK;
	l->cs_max_range4 = BG_CFG_CS_RANGE4;
	l->cs_max_range6 = BG_CFG_CS_RANGE6;
}

void cfg_artifact_defaults(struct bg_cfg_list *l)
{
	l->kind = BG_SRC_ARTIFACT;
	l->timeout = BG_CFG_TIMEOUT;
	l->max_bytes = BG_CFG_ARTIFACT_MAX_BYTES;
	l->max_shrink = 1; /* an artifact is judged by its checksums */
}

void cfg_fleet_defaults(struct bg_cfg_fleet *f)
{
	f->poll = BG_CFG_FLEET_POLL;
	f->report = BG_CFG_FLEET_REPORT;
}

/*
 * Walks map y against fields, storing into base; where: the map's own path
 * ("lists[2]", "" for the root). The line of each key found goes to
 * lines[] (0: absent). F_SECTION keys are left to the caller, with their
 * value in sections[] by field index.
 */
static int walk_map(struct pctx *p, const struct ynode *y,
		    const struct field *fields, const char *where, void *base,
		    size_t *lines, const struct ynode **sections)
{
	char keys[400];
	size_t i;
	int err;

	cfg_key_names(fields, keys, sizeof(keys));
	if (y->kind != Y_MAP)
		return bad(p, y->line, "%s%sexpected a map of keys (%s), not a %s",
			   where, *where ? ": " : "", keys, ykind_name[y->kind]);
	for (i = 0; i + 1 < y->n; i += 2) {
		const struct ynode *k = y->kids[i], *v = y->kids[i + 1];
		const struct field *f;
		size_t idx;

		if (k->kind != Y_SCALAR)
			return bad(p, k->line, "%s%sa key must be a name, not a %s",
				   where, *where ? ": " : "", ykind_name[k->kind]);
		for (f = fields; f->key && strcmp(f->key, k->text); f++)
			;
		if (!f->key)
			return bad(p, k->line, "%s%sunknown key '%s' (%s)", where,
				   *where ? ": " : "", cfg_q(p, k->text), keys);
		idx = (size_t)(f - fields);
		snprintf(p->where, sizeof(p->where), "%s%s%s", where,
			 *where ? "." : "", f->key);
		if (lines[idx])
			return bad(p, k->line, "%s: given twice (first on line %zu)",
				   p->where, lines[idx]);
		lines[idx] = k->line;
		if (f->type == F_SECTION) {
			sections[idx] = v;
			continue;
		}
		err = cfg_set_field(p, f, v, base);
		if (err)
			return err;
	}
	return 0;
}

/* interfaces: and lists: are sequences; null (`interfaces:`) is empty. */
static int section_items(struct pctx *p, const struct ynode *y,
			 const char *key, size_t size, void **items)
{
	*items = NULL;
	if (cfg_y_null(y))
		return 0;
	if (y->kind != Y_SEQ)
		return bad(p, y->line, "%s: expected a list of maps ('- name: ...'), not a %s",
			   key, ykind_name[y->kind]);
	if (!y->n)
		return 0;
	*items = calloc(y->n, size);
	return *items ? 0 : cfg_fail(p, -ENOMEM, 0, "out of memory");
}

static int walk_ifaces(struct pctx *p, const struct ynode *y,
		       struct bg_config *c)
{
	size_t i, j;
	int err;

	err = section_items(p, y, "interfaces", sizeof(*c->ifaces),
			    (void **)&c->ifaces);
	if (err || !c->ifaces)
		return err;
	for (i = 0; i < y->n; i++) {
		struct bg_cfg_iface *f = &c->ifaces[c->n_ifaces++];
		size_t lines[FIELDS_MAX] = { 0 };
		const struct ynode *sec[FIELDS_MAX] = { 0 };
		char where[40];

		cfg_iface_defaults(f);
		f->line = y->kids[i]->line;
		snprintf(where, sizeof(where), "interfaces[%zu]", i);
		err = walk_map(p, y->kids[i], cfg_iface_fields, where, f, lines, sec);
		if (err)
			return err;
		if (!f->name)
			return bad(p, f->line, "%s: needs a name", where);
		/* as attach: without a capacity the capacity grows, unless
		 * `grow: false` asks for a map of any size */
		if (!lines[I_CAPACITY] && !lines[I_GROW])
			f->attach.grow = 1;
		for (j = 0; j < i; j++)
			if (!strcmp(c->ifaces[j].name, f->name))
				return bad(p, lines[I_NAME], "%s.name: '%s' is already interfaces[%zu] (line %zu)",
					   where, cfg_q(p, f->name), j,
					   c->ifaces[j].line);
	}
	return 0;
}

/* A `crowdsec:` list: the local API's ban decisions, read as addresses. */
static int crowdsec_list(struct pctx *p, struct bg_cfg_list *l, const size_t *lines,
			 const char *where)
{
	static const int not_for[] = { L_URL, L_PATH, L_FORMAT, L_SUBDOMAINS,
				       L_ALLOW, L_REFRESH, L_MAX_SHRINK, L_ALLOW_WIDE };
	size_t i;

	for (i = 0; i < sizeof(not_for) / sizeof(not_for[0]); i++)
		if (lines[not_for[i]])
			return bad(p, lines[not_for[i]], "%s.%s: not for a crowdsec: source%s",
				   where, cfg_list_fields[not_for[i]].key,
				   not_for[i] == L_REFRESH ? " (update_frequency)" :
				   not_for[i] == L_URL ? " (crowdsec: is its URL)" : "");
	if (!l->api_key_file)
		return bad(p, l->line, "%s (%s): a crowdsec: source needs api_key_file "
			   "(the bouncer's key: cscli bouncers add NAME)", where,
			   l->list.name);
	if (l->cs_scopes) {
		char *t = strdup(l->cs_scopes), *w, *save = NULL;

		if (!t)
			return cfg_fail(p, -ENOMEM, 0, "out of memory");
		for (w = strtok_r(t, ",", &save); w; w = strtok_r(NULL, ",", &save))
			if (strcasecmp(w, "ip") && strcasecmp(w, "range")) {
				bad(p, lines[L_SCOPES], "%s.scopes: '%s': ip and range are "
				    "the scopes of an address (others are not enforced here)",
				    where, cfg_q(p, w));
				free(t);
				return -EINVAL;
			}
		free(t);
	}
	l->kind = BG_SRC_CROWDSEC;
	l->list.format = BG_FMT_ADDR;
	if (!lines[L_UPDATE_FREQ])
		l->refresh = BG_CFG_CROWDSEC_EVERY;
	if (!lines[L_TIMEOUT])
		l->timeout = BG_CFG_CROWDSEC_TIMEOUT;
	l->max_shrink = 1; /* decisions come and go: no shrink guard */
	return 0;
}

static int walk_lists(struct pctx *p, const struct ynode *y, size_t key_line,
		      struct bg_config *c)
{
	size_t i, j, n_allow = 0;
	int err;

	err = section_items(p, y, "lists", sizeof(*c->lists), (void **)&c->lists);
	if (err)
		return err;
	if (!c->lists)
		return bad(p, key_line, "lists: no lists: the agent needs at least one");
	for (i = 0; i < y->n; i++) {
		struct bg_cfg_list *l = &c->lists[c->n_lists++];
		size_t lines[FIELDS_MAX] = { 0 };
		const struct ynode *sec[FIELDS_MAX] = { 0 };
		char where[40];
		struct bg_list_desc *d = &l->list;

		cfg_list_defaults(l);
		l->line = y->kids[i]->line;
		snprintf(where, sizeof(where), "lists[%zu]", i);
		err = walk_map(p, y->kids[i], cfg_list_fields, where, l, lines, sec);
		if (err)
			return err;
		if (!d->name)
			return bad(p, l->line, "%s: needs a name", where);
		for (j = 0; j < i; j++)
			if (!strcmp(c->lists[j].list.name, d->name))
				return bad(p, lines[L_NAME], "%s.name: '%s' is already the name of lists[%zu] (line %zu)",
					   where, cfg_q(p, d->name), j,
					   c->lists[j].line);
		if (lines[L_CROWDSEC]) {
			err = crowdsec_list(p, l, lines, where);
			if (err)
				return err;
			continue;
		}
		for (j = L_API_KEY_FILE; j < L__COUNT; j++)
			if (lines[j])
				return bad(p, lines[j], "%s.%s: only a crowdsec: source has it",
					   where, cfg_list_fields[j].key);
		if (!d->url && !d->path)
			return bad(p, l->line, "%s (%s): needs a url or a path",
				   where, d->name);
		if (d->url && d->path)
			return bad(p, lines[L_URL] > lines[L_PATH] ? lines[L_URL] :
								     lines[L_PATH],
				   "%s (%s): has both a url and a path: give one",
				   where, d->name);
		/* A file is watched: a timer would only re-read it
		 * unchanged; one can still be asked for. */
		if (!lines[L_REFRESH])
			l->refresh = d->url ? BG_CFG_URL_REFRESH : 0;
		else if (d->url && l->refresh <= 0)
			return bad(p, lines[L_REFRESH], "%s.refresh: a URL needs an interval above 0",
				   where);
		if (d->path && lines[L_TIMEOUT])
			return bad(p, lines[L_TIMEOUT], "%s.timeout: only a URL is fetched with a timeout",
				   where);
		if (d->subdomains && d->format == BG_FMT_ADDR)
			return bad(p, lines[L_SUBDOMAINS], "%s.subdomains: an addr list has no names",
				   where);
		if (d->allow_wide && d->format != BG_FMT_AUTO &&
		    d->format != BG_FMT_ADDR)
			return bad(p, lines[L_ALLOW_WIDE], "%s.allow_wide: a %s list has no prefixes",
				   where, bg_format_name(d->format));
		n_allow += !!d->allow;
	}
	/* As `bloomgate load` refuses: a filter built from allowlists only
	 * blocks nothing, which is a mistake, not a configuration. */
	if (n_allow == c->n_lists)
		return bad(p, key_line, "lists: every list is an allowlist: nothing would be blocked");
	return 0;
}

/* artifact: one source of kind BG_SRC_ARTIFACT, named "artifact" */
static int walk_artifact(struct pctx *p, const struct ynode *y, size_t key_line,
			 struct bg_config *c)
{
	size_t lines[FIELDS_MAX] = { 0 };
	const struct ynode *sec[FIELDS_MAX] = { 0 };
	struct bg_cfg_list *l;
	int err;

	c->lists = calloc(1, sizeof(*c->lists));
	if (!c->lists)
		return cfg_fail(p, -ENOMEM, 0, "out of memory");
	l = &c->lists[c->n_lists++];
	cfg_artifact_defaults(l);
	l->line = key_line;
	err = walk_map(p, y, cfg_artifact_fields, "artifact", l, lines, sec);
	if (err)
		return err;
	l->list.name = strdup(BG_CFG_ARTIFACT_NAME);
	if (!l->list.name)
		return cfg_fail(p, -ENOMEM, 0, "out of memory");
	if (!l->list.url && !l->list.path)
		return bad(p, key_line, "artifact: needs a url or a path");
	if (l->list.url && l->list.path)
		return bad(p, key_line, "artifact: has both a url and a path: give one");
	if (!lines[A_REFRESH])
		l->refresh = l->list.url ? BG_CFG_URL_REFRESH : 0;
	else if (l->list.url && l->refresh <= 0)
		return bad(p, lines[A_REFRESH], "artifact.refresh: a URL needs an interval above 0");
	if (l->list.path && lines[A_TIMEOUT])
		return bad(p, lines[A_TIMEOUT], "artifact.timeout: only a URL is fetched with a timeout");
	return 0;
}

/* fleet: one source of kind BG_SRC_FLEET, named "fleet", fetched from the
 * store (agent/fleet.c) every poll seconds and whenever a NOTIFY comes */
static int walk_fleet(struct pctx *p, const struct ynode *y, size_t key_line,
		      struct bg_config *c)
{
	size_t lines[FIELDS_MAX] = { 0 };
	const struct ynode *sec[FIELDS_MAX] = { 0 };
	struct bg_cfg_fleet *f = &c->fleet;
	struct bg_cfg_list *l;
	char host[256];
	int err;

	cfg_fleet_defaults(f);
	f->line = key_line;
	err = walk_map(p, y, cfg_fleet_fields, "fleet", f, lines, sec);
	if (err)
		return err;
	if (!f->db)
		return bad(p, key_line, "fleet: needs db (the store's connection string)");
	if (!f->gateway) {
		/* the host name, as a name the store keeps: what a name
		 * cannot hold becomes '_' */
		size_t i;

		if (gethostname(host, sizeof(host)))
			snprintf(host, sizeof(host), "gateway");
		host[sizeof(host) - 1] = 0;
		host[BG_CFG_NAME_MAX] = 0;
		for (i = 0; host[i]; i++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789._-", host[i]))
				host[i] = '_';
		f->gateway = strdup(host);
		if (!f->gateway)
			return cfg_fail(p, -ENOMEM, 0, "out of memory");
	}
	c->lists = calloc(1, sizeof(*c->lists));
	if (!c->lists)
		return cfg_fail(p, -ENOMEM, 0, "out of memory");
	l = &c->lists[c->n_lists++];
	l->kind = BG_SRC_FLEET;
	l->refresh = f->poll;
	l->timeout = BG_CFG_TIMEOUT;
	l->max_bytes = BG_CFG_ARTIFACT_MAX_BYTES;
	l->max_shrink = 1;
	l->line = key_line;
	l->list.name = strdup(BG_CFG_FLEET_NAME);
	/* the origin the status, the store and the filter's description
	 * name: without its password (the fetch uses fleet.db itself) */
	{
		char red[1024];

		l->list.url = strdup(bg_fleetdb_redact(f->db, red, sizeof(red)));
	}
	if (!l->list.name || !l->list.url)
		return cfg_fail(p, -ENOMEM, 0, "out of memory");
	return 0;
}

void bg_config_free(struct bg_config *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n_ifaces; i++)
		free(c->ifaces[i].name);
	for (i = 0; i < c->n_lists; i++) {
		bg_list_desc_free(&c->lists[i].list);
		free(c->lists[i].api_key_file);
		free(c->lists[i].cs_origins);
		free(c->lists[i].cs_scopes);
		free(c->lists[i].cs_scen_in);
		free(c->lists[i].cs_scen_out);
	}
	free(c->ifaces);
	free(c->lists);
	free(c->protect.v);
	free(c->fleet.db);
	free(c->fleet.gateway);
	free(c->file);
	free(c->state_dir);
	free(c->metrics);
	free(c->events);
	memset(c, 0, sizeof(*c));
}

int bg_config_parse_buf(const char *name, const char *buf, size_t len,
			struct bg_config *c, char *err, size_t errlen)
{
	struct pctx p = { .file = name, .buf = buf, .len = len, .err = err,
			  .errlen = errlen };
	size_t lines[FIELDS_MAX] = { 0 };
	const struct ynode *sec[FIELDS_MAX] = { 0 };
	struct ynode *root;
	int ret;

	memset(c, 0, sizeof(*c));
	if (err && errlen)
		err[0] = '\0';
	ret = cfg_y_load(&p, buf, len, &root);
	if (ret)
		return ret;
	c->file = strdup(name);
	if (!c->file || cfg_root_defaults(c)) {
		ret = cfg_fail(&p, -ENOMEM, 0, "out of memory");
		goto out;
	}
	if (!root || cfg_y_null(root)) {
		ret = bad(&p, 0, "empty: a config needs at least lists:");
		goto out;
	}
	ret = walk_map(&p, root, cfg_root_fields, "", c, lines, sec);
	if (!ret && sec[R_INTERFACES])
		ret = walk_ifaces(&p, sec[R_INTERFACES], c);
	/* one kind of source: lists, an artifact, or the fleet's */
	if (!ret && !!sec[R_LISTS] + !!sec[R_ARTIFACT] + !!sec[R_FLEET] > 1) {
		size_t l2 = lines[R_LISTS] > lines[R_ARTIFACT] ? lines[R_LISTS] :
								  lines[R_ARTIFACT];

		l2 = l2 > lines[R_FLEET] ? l2 : lines[R_FLEET];
		ret = bad(&p, l2, "lists:, artifact: and fleet: exclude each other: a "
			  "gateway builds its filter from lists, or loads one built "
			  "elsewhere");
	}
	if (!ret && !sec[R_LISTS] && !sec[R_ARTIFACT] && !sec[R_FLEET])
		ret = bad(&p, 0, "no lists: the agent needs at least one (lists:), "
			  "or an artifact: or a fleet:");
	if (!ret && sec[R_LISTS])
		ret = walk_lists(&p, sec[R_LISTS], lines[R_LISTS], c);
	if (!ret && sec[R_ARTIFACT])
		ret = walk_artifact(&p, sec[R_ARTIFACT], lines[R_ARTIFACT], c);
	if (!ret && sec[R_FLEET])
		ret = walk_fleet(&p, sec[R_FLEET], lines[R_FLEET], c);
	if (!ret && !c->fpr)
		c->fpr = bg_fpr_default(c->confirm);
out:
	cfg_ynode_free(root);
	if (ret)
		bg_config_free(c);
	return ret;
}

/* The reason bg_read_list() gives for a file it cannot read. */
struct read_why {
	char why[128];
};

static void why_of(void *ctx, const struct bg_diag *d)
{
	struct read_why *w = ctx;

	snprintf(w->why, sizeof(w->why), "%s", d->reason);
}

int bg_config_load(const char *path, struct bg_config *c, char *err,
		   size_t errlen)
{
	struct pctx p = { .file = path, .err = err, .errlen = errlen };
	struct read_why w = { "" };
	char *buf;
	size_t len;
	int ret;

	memset(c, 0, sizeof(*c));
	/* Read as a list is read: a regular file only (a FIFO in its place
	 * would hang a reload, a device such as /dev/zero never ends) and
	 * bounded, one byte past the limit telling "too large" apart. */
	ret = bg_read_list(path, BG_CFG_FILE_MAX + 1ull,
			   &(struct bg_reporter){ .fn = why_of, .ctx = &w }, &buf,
			   &len);
	if (ret == -EFBIG)
		return bad(&p, 0, "larger than %u bytes: not a config",
			   BG_CFG_FILE_MAX);
	if (ret)
		return cfg_fail(&p, ret, 0, "%s", w.why[0] ? w.why : strerror(-ret));
	if (len > BG_CFG_FILE_MAX)
		ret = bad(&p, 0, "larger than %u bytes: not a config",
			  BG_CFG_FILE_MAX);
	else
		ret = bg_config_parse_buf(path, buf, len, c, err, errlen);
	free(buf);
	return ret;
}

