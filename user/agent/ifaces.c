// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's interfaces: attached as the config says (an interface
 * attached already is left as it is: fail-static, no gap), and the
 * attachments of deleted interfaces removed. At start before the workers
 * run; at a reload as a main-worker job (attaching loads programs: not on
 * the loop), with its own copy of the config's interfaces.
 */
#include <net/if.h>
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
};

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
			if (!w->reshape && shape_differs(&recs[k], f)) {
				w->reshape = 1;
				cfg_shape(f, &w->cap, &w->grow);
				agent_log("interface %s: its capacity setting changed: "
					  "the next build swaps in programs for it",
					  f->name);
			}
			continue;
		}
		if (bg_attach(f->name, &f->attach, err, sizeof(err)))
			agent_log("interface %s: %s", f->name, err);
		else
			agent_log("interface %s: attached", f->name);
	}
}

static void want_shape(struct agent *a, const struct shape_want *w)
{
	a->reshape = w->reshape;
	a->reshape_cap = w->cap;
	a->reshape_grow = w->grow;
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
