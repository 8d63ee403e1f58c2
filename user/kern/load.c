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
#include "kern/protect.h"
#include "core/clock.h"
#include "core/record.h"
#include "kern/swap.h"

/* A new shape of the filter map (bg_attach_reshape()). */
struct shape {
	uint32_t cap; /* elements; 0: any size */
	int grow;
};

static int commit_fd(struct bg_state *st, const struct bg_load_opts *o, int fd,
		     struct bg_load_report *r, const struct shape *to);

int bg_load_commit(struct bg_state *st, const struct bg_load_opts *o,
		   const struct bg_blocklist *bl, struct bg_load_report *r)
{
	uint32_t capacity = 0;
	struct shape to = { 0, 0 }, *reshape = NULL;
	double t0, t1;
	int ret, fd, grows;

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
	grows = capacity && bg_attach_grows(st);
	/* a shape asked for (the agent's config changed): a capacity that
	 * grows from now on, or one of a fixed size (or any size) */
	if (o->reshape && o->reshape_grow && !grows)
		to = (struct shape){ bg_capacity_grown(&r->plan), 1 }, reshape = &to;
	else if (o->reshape && !o->reshape_grow && (o->reshape_cap != capacity || grows))
		to = (struct shape){ o->reshape_cap, 0 }, reshape = &to;
	/* A growing capacity that the plan outgrows, or would fit
	 * BG_CAPACITY_SHRINK_FACTOR times over: a map of the size its keys
	 * need with headroom, and programs for it, replace the attached ones
	 * (bg_attach_reshape()). */
	if (!reshape && grows && bg_capacity_regrow(&r->plan, capacity))
		to = (struct shape){ bg_capacity_grown(&r->plan), 1 }, reshape = &to;
	/* a shape change killed half way: some interfaces run programs of
	 * a slot nothing pinned; made anew, every one on the new slot */
	if (!reshape && bg_attach_stale(st))
		to = (struct shape){ capacity, grows }, reshape = &to;
	if (reshape) {
		capacity = reshape->cap;
		grows = reshape->grow;
	}
	if (capacity) {
		ret = bg_load_fit(r, capacity, grows);
		if (ret)
			return ret;
	}

	t0 = bg_mono_ms();
	r->seed = o->seed ? o->seed : bg_random_seed();
	fd = o->parsed == bg_premap_parsed ?
		     bg_premap_take(o->parsed_ctx, &r->plan) : -1;
	fd = fd >= 0 ? bg_filter_create_in(fd, &r->plan, r->seed, bl, o->threads) :
		       bg_filter_create_mt(&r->plan, r->seed, bl, o->threads);
	t1 = bg_mono_ms();
	r->ms[BG_STAGE_BUILD] = t1 - t0;
	if (fd < 0)
		return bg_load_fail(r, BG_STAGE_BUILD, fd,
				    "cannot build the filter (%zu bytes): %s",
				    r->plan.bytes,
				    fd == -ENOMEM || fd == -E2BIG ? "not enough memory" :
				    fd == -EPERM ? "not permitted (creating BPF maps needs CAP_BPF)" :
						   strerror(-fd));
	return commit_fd(st, o, fd, r, reshape);
}

/* A built filter map fd (taken) recorded and published (bg_load_commit()
 * and bg_load_commit_image() share it); with a shape to, in a new slot of
 * that shape, with new programs (bg_attach_reshape()). */
static int commit_fd(struct bg_state *st, const struct bg_load_opts *o, int fd,
		     struct bg_load_report *r, const struct shape *to)
{
	char err[256] = "";

	double t1;
	int ret, rec, keep;

	r->filter_id = bg_map_id(fd);
	/* The record before the swap, under the new map's id: a load killed
	 * at any moment leaves the live filter's record in place (see
	 * record.h). First the records a killed load may have left: all but
	 * the live filter's go. */
	t1 = bg_mono_ms();
	bg_record_keep(bg_filter_current_id(st->filters_fd));
	rec = r->filter_id ? bg_record_write(r->filter_id, o->sources->v,
					     o->sources->n) : -ENOENT;
	r->ms[BG_STAGE_RECORD] = bg_mono_ms() - t1;
	t1 = bg_mono_ms();
	/* the set the new filter is judged against live before it is */
	ret = bg_load_protect(st, o->protect, r);
	if (ret) {
		close(fd);
		bg_record_keep(bg_filter_current_id(st->filters_fd));
		return ret;
	}
	ret = to ? bg_attach_reshape(st, to->cap, to->grow, fd, err, sizeof(err)) :
		   bg_filter_publish(st->filters_fd, fd);
	r->ms[BG_STAGE_PUBLISH] = bg_mono_ms() - t1;
	/* pinned for readers without CAP_SYS_ADMIN (bg_filter_view_pinned) */
	if (bg_filter_current_id(st->filters_fd) == r->filter_id)
		bg_filter_pin(st->dir, fd);
	close(fd); /* the slot holds the map now, or nothing does */
	r->reshaped = to && bg_filter_current_id(st->filters_fd) == r->filter_id ?
			      1 + !!to->grow : 0;
	r->grown = r->reshaped ? to->cap : 0;
	if (ret && !r->reshaped) {
		/* the new record explains nothing that runs */
		bg_record_keep(bg_filter_current_id(st->filters_fd));
		return to ? bg_load_fail(r, BG_STAGE_PUBLISH, ret,
					 "cannot change the capacity to %u elements: %s",
					 to->cap, err) :
			    bg_load_fail(r, BG_STAGE_PUBLISH, ret,
					 "cannot swap the filter in: %s", strerror(-ret));
	}
	if (ret)
		bg_load_fail(r, BG_STAGE_RECORD, ret, "%s", err);
	/* Made current; the old filter's record goes. */
	t1 = bg_mono_ms();
	keep = bg_record_keep(r->filter_id);
	r->ms[BG_STAGE_RECORD] += bg_mono_ms() - t1;
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

int bg_load_protect(struct bg_state *st, const struct bg_protect_set *s,
		    struct bg_load_report *r)
{
	int ret;

	if (!s)
		return 0;
	if (st->protect_fd < 0) {
		r->protect_missing = 1;
		return 0;
	}
	ret = bg_protect_publish(st->protect_fd, s);
	return ret ? bg_load_fail(r, BG_STAGE_PUBLISH, ret, "cannot write the "
				  "protected set: %s", strerror(-ret)) : 0;
}

int bg_load_commit_image(struct bg_state *st, const struct bg_load_opts *o,
			 const struct bg_filter_params *p, const void *image,
			 struct bg_load_report *r)
{
	uint32_t capacity = 0;
	double t0 = bg_mono_ms();
	int ret, fd;

	r->plan = *p;
	ret = bg_attach_capacity(st, &capacity);
	if (ret || capacity != p->capacity)
		return bg_load_fail(r, BG_STAGE_BUILD, ret ? ret : -ESTALE,
				    "the attachments' capacity changed");
	fd = bg_filter_create_image(p, image);
	r->ms[BG_STAGE_BUILD] = bg_mono_ms() - t0;
	if (fd < 0)
		return bg_load_fail(r, BG_STAGE_BUILD, fd, "cannot make the filter "
				    "map (%zu bytes): %s", p->bytes, strerror(-fd));
	return commit_fd(st, o, fd, r, NULL);
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
