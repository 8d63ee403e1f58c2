// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel half of the load pipeline (user/kern/load.h): build the planned
 * filter into a new map, publish it, record which lists built it.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kern/attach.h"
#include "kern/load.h"
#include "kern/pins.h"
#include "core/record.h"
#include "kern/swap.h"

static int commit_fd(struct bg_state *st, const struct bg_load_opts *o, int fd,
		     struct bg_load_report *r);

int bg_load_commit(struct bg_state *st, const struct bg_load_opts *o,
		   const struct bg_blocklist *bl, struct bg_load_report *r)
{
	uint32_t capacity = 0;
	double t0, t1;
	int ret, fd;

	/* The filter map must fit the slot: a fixed size when the
	 * attachments have a capacity (attach --capacity). Read under the
	 * lock, as an attach may have changed it while the lists were
	 * parsed. Not a fault of the lists when it cannot be read: reported
	 * as the build's. */
	ret = bg_attach_capacity(st, &capacity);
	if (ret)
		return bg_load_fail(r, BG_STAGE_BUILD, ret,
				    "cannot read the attachments' filter capacity: %s",
				    ret == -EPROTO ? "the records disagree" :
						     strerror(-ret));
	if (capacity) {
		ret = bg_load_fit(r, capacity);
		if (ret)
			return ret;
	}

	t0 = bg_now_ms();
	r->seed = o->seed ? o->seed : bg_random_seed();
	fd = o->parsed == bg_premap_parsed ?
		     bg_premap_take(o->parsed_ctx, &r->plan) : -1;
	fd = fd >= 0 ? bg_filter_create_in(fd, &r->plan, r->seed, bl, o->threads) :
		       bg_filter_create_mt(&r->plan, r->seed, bl, o->threads);
	t1 = bg_now_ms();
	r->ms[BG_STAGE_BUILD] = t1 - t0;
	if (fd < 0)
		return bg_load_fail(r, BG_STAGE_BUILD, fd,
				    "cannot build the filter (%zu bytes): %s",
				    r->plan.bytes,
				    fd == -ENOMEM || fd == -E2BIG ? "not enough memory" :
				    fd == -EPERM ? "not permitted (creating BPF maps needs CAP_BPF)" :
						   strerror(-fd));
	return commit_fd(st, o, fd, r);
}

/* A built filter map fd (taken) recorded and published (bg_load_commit()
 * and bg_load_commit_image() share it). */
static int commit_fd(struct bg_state *st, const struct bg_load_opts *o, int fd,
		     struct bg_load_report *r)
{
	double t1;
	int ret, rec, keep;

	r->filter_id = bg_map_id(fd);
	/* The record before the swap, under the new map's id: a load killed
	 * at any moment leaves the live filter's record in place (see
	 * record.h). First the records a killed load may have left: all but
	 * the live filter's go. */
	t1 = bg_now_ms();
	bg_record_keep(bg_filter_current_id(st->filters_fd));
	rec = r->filter_id ? bg_record_write(r->filter_id, o->sources->v,
					     o->sources->n) : -ENOENT;
	r->ms[BG_STAGE_RECORD] = bg_now_ms() - t1;
	t1 = bg_now_ms();
	ret = bg_filter_publish(st->filters_fd, fd);
	close(fd); /* the slot holds the map now, or nothing does */
	r->ms[BG_STAGE_PUBLISH] = bg_now_ms() - t1;
	if (ret) {
		/* the new record explains nothing that runs */
		bg_record_keep(bg_filter_current_id(st->filters_fd));
		return bg_load_fail(r, BG_STAGE_PUBLISH, ret,
				    "cannot swap the filter in: %s", strerror(-ret));
	}
	/* Made current; the old filter's record goes. */
	t1 = bg_now_ms();
	keep = bg_record_keep(r->filter_id);
	r->ms[BG_STAGE_RECORD] += bg_now_ms() - t1;
	if (rec)
		bg_load_fail(r, BG_STAGE_RECORD, rec,
			     "the filter is live, but its load record could not "
			     "be written (%s): check cannot name entries",
			     strerror(-rec));
	else if (keep)
		bg_load_fail(r, BG_STAGE_RECORD, keep,
			     "the filter is live and check can name its entries, "
			     "but its load record could not be made current in %s "
			     "(%s)", BG_RECORD_DIR, strerror(-keep));
	return 0;
}

int bg_load_commit_image(struct bg_state *st, const struct bg_load_opts *o,
			 const struct bg_filter_params *p, const void *image,
			 struct bg_load_report *r)
{
	uint32_t capacity = 0;
	double t0 = bg_now_ms();
	int ret, fd;

	r->plan = *p;
	ret = bg_attach_capacity(st, &capacity);
	if (ret || capacity != p->capacity)
		return bg_load_fail(r, BG_STAGE_BUILD, ret ? ret : -ESTALE,
				    "the attachments' capacity changed");
	fd = bg_filter_create_image(p, image);
	r->ms[BG_STAGE_BUILD] = bg_now_ms() - t0;
	if (fd < 0)
		return bg_load_fail(r, BG_STAGE_BUILD, fd, "cannot make the filter "
				    "map (%zu bytes): %s", p->bytes, strerror(-fd));
	return commit_fd(st, o, fd, r);
}

/* ---- The map made while the keys are sorted ------------------------------ */

static void *premap_main(void *arg)
{
	struct bg_premap *pm = arg;

	pm->fd = bg_filter_map_new(&pm->p);
	return NULL;
}

void bg_premap_parsed(void *ctx, const struct bg_blocklist *bl, double fpr,
		      int confirm)
{
	struct bg_premap *pm = ctx;

	if (pm->started || bl->names.n ||
	    bg_filter_plan_confirm(bl, fpr, confirm, &pm->p))
		return;
	pm->fd = -1;
	pm->started = !pthread_create(&pm->tid, NULL, premap_main, pm);
}

static void premap_join(struct bg_premap *pm)
{
	if (pm->started) {
		pthread_join(pm->tid, NULL);
		pm->started = 0;
	}
}

int bg_premap_take(struct bg_premap *pm, const struct bg_filter_params *p)
{
	int fd;

	premap_join(pm);
	fd = pm->fd;
	pm->fd = -1;
	if (fd >= 0 && !p->capacity && pm->p.nelems == p->nelems) {
		pm->used = 1;
		return fd;
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

void bg_premap_drop(struct bg_premap *pm)
{
	premap_join(pm);
	if (pm->fd >= 0)
		close(pm->fd);
	pm->fd = -1;
}
