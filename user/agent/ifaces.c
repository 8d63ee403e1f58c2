// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's interfaces: attached as the config says (an interface
 * attached already stays attached: fail-static, no gap; when its options
 * changed in the config, a program with the new ones is swapped in for
 * the attached one by the kernel's atomic replace, and when its capacity
 * did, the next build swaps in programs of the new shape), and the
 * attachments of deleted interfaces removed. At start before the workers
 * run; at a reload as a main-worker job (attaching loads programs: not on
 * the loop), with its own copy of the config's interfaces.
 */
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_priv.h"
#include "agent/protect.h"
#include "core/filter.h"
#include "kern/attach.h"
#include "kern/pins.h"

static void log_gone(void *ctx, const struct bg_attach_rec *r)
{
	(void)ctx;
	agent_log("interface ifindex %u (netns inode %u) is gone: its attachment "
		  "removed", r->ifindex, r->netns_ino);
}

/* As `detach --gone`: once removed, each is logged once. Quiet when
 * nothing is attached or the state cannot be opened: rebuild says so
 * itself. */
void clean_gone(void)
{
	char err[256];

	bg_detach_gone(log_gone, NULL, err, sizeof(err));
}

/* The filter map's shape that interface f's config asks for: a capacity
 * of *cap elements (0: any size) or, with *grow, one that follows the
 * filter. */
static void cfg_shape(const struct bg_cfg_iface *f, uint32_t *cap, int *grow)
{
	*grow = f->attach.grow;
	*cap = f->attach.capacity ? bg_filter_capacity_elems(f->attach.capacity) : 0;
}

/* 1 when attachment r has another shape than f asks for (a growing one's
 * size is the filter's, not the config's). */
static int shape_differs(const struct bg_attach_rec *r, const struct bg_cfg_iface *f)
{
	uint32_t cap;
	int grow;

	cfg_shape(f, &cap, &grow);
	if (!grow != !(r->mode & BG_ATTACH_F_GROW))
		return 1;
	return !grow && cap != r->capacity;
}

struct shape_want {
	int reshape, grow;
	uint32_t cap;
	/* what changed of the interfaces, for the reload's answer */
	char said[512];
};

/* Appends a part to w->said ("; " between parts). */
static void said(struct shape_want *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void said(struct shape_want *w, const char *fmt, ...)
{
	size_t o = strlen(w->said);
	va_list ap;

	if (o && o + 2 < sizeof(w->said))
		o += (size_t)snprintf(w->said + o, sizeof(w->said) - o, "; ");
	if (o >= sizeof(w->said))
		return;
	va_start(ap, fmt);
	vsnprintf(w->said + o, sizeof(w->said) - o, fmt, ap);
	va_end(ap);
}

/* An interface attached already whose options differ from its config's
 * (match, action, DNS action and ports, unparsed, chain): a program with
 * the new ones swapped in, no gap. */
static void reconfigure(const struct bg_attach_rec *r, const struct bg_cfg_iface *f,
			struct shape_want *w)
{
	struct bg_attach_opts have = bg_attach_defaults;
	char what[256], err[256];
	int ret;

	have.match = (enum bg_match)r->match;
	have.action = (enum bg_action)r->action;
	have.dns_action = (enum bg_dns_action)r->dns_action;
	have.unparsed = r->mode & BG_ATTACH_F_UNPARSED_DROP ? BG_UNPARSED_DROP :
							  BG_UNPARSED_PASS;
	memcpy(have.dns_ports, r->dns_ports, sizeof(have.dns_ports));
	have.chain = !!(r->mode & BG_ATTACH_F_CHAIN);
	if (!bg_attach_opts_diff(&have, &f->attach, what, sizeof(what)))
		return;
	if ((r->mode & BG_ATTACH_MODE_MASK) != f->attach.mode)
		agent_log("interface %s: its mode changed in the config: that takes "
			  "a detach (bloomgate detach %s) and the agent's attach",
			  f->name, f->name);
	ret = bg_attach_reconfigure(f->name, &f->attach, err, sizeof(err));
	if (ret < 0) {
		agent_log("interface %s: %s; its program stays as it was", f->name, err);
		said(w, "interface %s: %s not changed: %s", f->name, what, err);
		return;
	}
	agent_log("interface %s: %s: a program with them swapped in", f->name, what);
	said(w, "interface %s: %s", f->name, what);
}

/* Attaches the interfaces not attached yet; an attached one is left as it
 * is, and when its filter map's shape is not the one its config asks for,
 * *w says which (the next rebuild changes it, with new programs swapped
 * in: bg_load_opts.reshape). */
static void attach_all(const struct bg_cfg_iface *ifs, size_t n,
		       struct shape_want *w)
{
	struct bg_attach_rec recs[BG_ATTACH_MAX];
	struct bg_state st;
	int nrec = 0, k;
	char err[256];
	size_t i;

	memset(w, 0, sizeof(*w));
	/* first, so an interface deleted and created again is attached anew */
	clean_gone();
	if (!bg_state_open(&st, 0)) {
		nrec = bg_attach_list(&st, recs, BG_ATTACH_MAX);
		bg_state_close(&st);
	}
	for (i = 0; i < n; i++) {
		const struct bg_cfg_iface *f = &ifs[i];
		unsigned int idx = if_nametoindex(f->name);

		for (k = 0; k < nrec; k++)
			if (recs[k].ifindex == idx && recs[k].netns_ino == bg_netns_ino())
				break;
		if (idx && k < nrec) {
			/* attached already: fail-static, no gap */
			reconfigure(&recs[k], f, w);
			if (!w->reshape && shape_differs(&recs[k], f)) {
				w->reshape = 1;
				cfg_shape(f, &w->cap, &w->grow);
				agent_log("interface %s: its capacity setting changed: "
					  "the next build swaps in programs for it",
					  f->name);
				said(w, "interface %s: capacity changed", f->name);
			}
			continue;
		}
		if (bg_attach(f->name, &f->attach, err, sizeof(err))) {
			agent_log("interface %s: %s", f->name, err);
			said(w, "interface %s: not attached: %s", f->name, err);
		} else {
			agent_log("interface %s: attached", f->name);
			said(w, "interface %s: attached", f->name);
		}
	}
}

static void want_shape(struct agent *a, const struct shape_want *w)
{
	a->reshape = w->reshape;
	a->reshape_cap = w->cap;
	a->reshape_grow = w->grow;
	snprintf(a->ifaces_said, sizeof(a->ifaces_said), "%s", w->said);
}

void attach_ifaces_now(struct agent *a)
{
	struct shape_want w;

	attach_all(a->cfg.ifaces, a->cfg.n_ifaces, &w);
	/* the protected set with the config's protect:, also for a filter
	 * adopted without a rebuild */
	agent_protect_refresh(a->cfg.protect.v, a->cfg.protect.n);
	want_shape(a, &w);
}

struct ifaces_job {
	struct job j;
	struct bg_cfg_iface *v;
	size_t n;
	struct bg_cfg_protect protect; /* the config's, copied */
	struct shape_want w;
};

static void ifaces_run(struct agent *a, struct job *jj)
{
	struct ifaces_job *j = (struct ifaces_job *)jj;

	(void)a;
	attach_all(j->v, j->n, &j->w);
	/* a reload: addresses, routes, resolv.conf and protect: as now */
	agent_protect_refresh(j->protect.v, j->protect.n);
}

static void ifaces_done(struct agent *a, struct job *jj)
{
	struct ifaces_job *j = (struct ifaces_job *)jj;
	size_t i;

	a->ifaces_busy = 0;
	want_shape(a, &j->w);
	if (j->w.reshape)
		want_rebuild(a, 1);
	for (i = 0; i < j->n; i++)
		free(j->v[i].name);
	free(j->v);
	free(j->protect.v);
}

void attach_ifaces_later(struct agent *a)
{
	struct ifaces_job *j = calloc(1, sizeof(*j));
	size_t i;

	if (!j || !(j->v = calloc(a->cfg.n_ifaces ? a->cfg.n_ifaces : 1, sizeof(*j->v))) ||
	    !(j->protect.v = calloc(a->cfg.protect.n + 1, sizeof(*j->protect.v)))) {
		if (j)
			free(j->v);
		free(j);
		agent_log("interfaces: out of memory");
		return;
	}
	if (a->cfg.protect.n)
		memcpy(j->protect.v, a->cfg.protect.v,
		       a->cfg.protect.n * sizeof(*j->protect.v));
	j->protect.n = a->cfg.protect.n;
	j->j.run = ifaces_run;
	j->j.done = ifaces_done;
	/* a reload is answered once it is done (what changed is said) */
	a->ifaces_busy = 1;
	for (i = 0; i < a->cfg.n_ifaces; i++) {
		j->v[i] = a->cfg.ifaces[i];
		j->v[i].name = strdup(a->cfg.ifaces[i].name);
		if (!j->v[i].name)
			break;
		j->n++;
	}
	work_main(a, &j->j);
}

void detach_ifaces(const struct agent *a)
{
	char err[256];
	size_t i;

	for (i = 0; i < a->cfg.n_ifaces; i++)
		if (bg_detach(a->cfg.ifaces[i].name, err, sizeof(err)))
			agent_log("interface %s: %s", a->cfg.ifaces[i].name, err);
}
