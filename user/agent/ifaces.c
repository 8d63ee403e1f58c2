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

static void attach_all(const struct bg_cfg_iface *ifs, size_t n)
{
	struct bg_attach_rec recs[BG_ATTACH_MAX];
	struct bg_state st;
	int nrec = 0, k;
	char err[256];
	size_t i;

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
		if (idx && k < nrec)
			continue; /* attached already: fail-static, no gap */
		if (bg_attach(f->name, &f->attach, err, sizeof(err)))
			agent_log("interface %s: %s", f->name, err);
		else
			agent_log("interface %s: attached", f->name);
	}
}

void attach_ifaces_now(const struct bg_config *cfg)
{
	attach_all(cfg->ifaces, cfg->n_ifaces);
}

struct ifaces_job {
	struct job j;
	struct bg_cfg_iface *v;
	size_t n;
};

static void ifaces_run(struct agent *a, struct job *jj)
{
	struct ifaces_job *j = (struct ifaces_job *)jj;

	(void)a;
	attach_all(j->v, j->n);
}

static void ifaces_done(struct agent *a, struct job *jj)
{
	struct ifaces_job *j = (struct ifaces_job *)jj;
	size_t i;

	(void)a;
	for (i = 0; i < j->n; i++)
		free(j->v[i].name);
	free(j->v);
}

void attach_ifaces_later(struct agent *a)
{
	struct ifaces_job *j = calloc(1, sizeof(*j));
	size_t i;

	if (!j || !(j->v = calloc(a->cfg.n_ifaces ? a->cfg.n_ifaces : 1, sizeof(*j->v)))) {
		free(j);
		agent_log("interfaces: out of memory");
		return;
	}
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
