// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Loading a verified artifact (kern/artifact.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/clock.h"
#include "core/artprotect.h"
#include "core/record.h"
#include "kern/artifact.h"
#include "kern/attach.h"
#include "kern/load.h"
#include "kern/pins.h"
#include "kern/swap.h"

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

struct make_ctx {
	const struct bg_filter_params *p;
	int fd; /* the map, or -errno */
};

static void *make_map(void *arg)
{
	struct make_ctx *m = arg;

	m->fd = bg_filter_map_new(m->p);
	return NULL;
}

int bg_art_commit(struct bg_state *st, const struct bg_art *a,
		  const char *record_path, int skip_index,
		  unsigned int threads, const struct bg_protect_set *protect,
		  struct bg_load_report *r)
{
	const struct bg_art_plan *ap = &a->h->plan;
	uint32_t capacity = 0, reshape = 0;
	int reshape_grow = 1, repair = 0;
	void *dst[BG_ART_SEC__COUNT] = { 0 };
	char why[256] = "";
	unsigned int mask;
	struct make_ctx mk;
	pthread_t th;
	size_t len;
	double t0, t1;
	void *mem;
	int ret, fd, rec, keep, made;

	/* the plan with its tables where the image has them: a growing
	 * capacity is then sized from what the filter takes, never from a
	 * header's number (bg_art_open() checked every field) */
	bg_art_params(a, &r->plan);
	r->seed = ap->seed;
	r->fpr = ap->target;
	if (a->h->kind != BG_ART_FULL)
		return bg_load_fail(r, BG_STAGE_PARSE, -EINVAL,
				    "a delta artifact is applied by the agent to "
				    "its generation, not loaded alone");
	if (protect) {
		bg_protect_kinds(protect, r->protect_kinds);
		if (bg_protect_art_covers(a, protect, &r->covers))
			return bg_load_fail(r, BG_STAGE_BUILD, -ENOMEM, "out of memory");
	}
	ret = bg_attach_capacity(st, &capacity);
	if (ret)
		return bg_load_fail(r, BG_STAGE_BUILD, ret,
				    "cannot read the attachments' filter capacity: %s",
				    ret == -EPROTO ? "the records disagree" :
						     strerror(-ret));
	/* A growing capacity: an artifact of a fixed capacity takes its
	 * shape; one of any size goes into a map of the attached capacity,
	 * its elements first and zeros after them (nothing reads past the
	 * header's tables), while it fits as a list's filter would
	 * (bg_capacity_regrow()); else new programs for a capacity grown
	 * from its keys (bg_attach_reshape()). A fleet's next generations
	 * then swap in without new programs, as lists do. */
	if (capacity && capacity != ap->capacity && bg_attach_grows(st)) {
		uint32_t want = ap->capacity ? ap->capacity :
			!bg_capacity_regrow(&r->plan, capacity) ? capacity :
			bg_capacity_grown(&r->plan);

		r->plan.capacity = r->plan.nelems = want;
		r->plan.bytes = (size_t)want * BG_FILTER_VALUE_SIZE;
		reshape = want != capacity ? want : 0;
	} else if (capacity != ap->capacity) {
		if (capacity)
			return bg_load_fail(r, BG_STAGE_PLAN, -ENOSPC,
					    "the interfaces are attached with a fixed "
					    "capacity of %u elements; this artifact has %u%s: "
					    "build it with the attachment's --capacity",
					    capacity, ap->nelems,
					    ap->capacity ? " (a fixed capacity)" : "");
		return bg_load_fail(r, BG_STAGE_PLAN, -ENOSPC,
				    "this artifact was built for a fixed capacity of "
				    "%u elements; the interfaces are attached without "
				    "one: build it without --capacity", ap->capacity);
	}
	/* a shape change killed half way (bg_attach_stale()): made anew at
	 * the shape the records hold, as bg_load_commit() does */
	if (!reshape && bg_attach_stale(st)) {
		repair = 1;
		reshape = r->plan.capacity;
		reshape_grow = capacity && bg_attach_grows(st);
	}
	t0 = bg_mono_ms();
	/* The map is made (the kernel zeroing it, on one core: most of a
	 * second at 100M keys here) while the index and the sources are
	 * checked on the others; then the filter is copied into it and
	 * hashed there, chunk by chunk on every CPU: one read of the file,
	 * and nothing is published unless every section matches. */
	mk.p = &r->plan;
	mk.fd = -1;
	made = !pthread_create(&th, NULL, make_map, &mk);
	if (!made)
		make_map(&mk);
	mask = 1u << BG_ART_SEC_SOURCES;
	if (!skip_index)
		mask |= 1u << BG_ART_SEC_INDEX;
	ret = bg_art_verify(a, mask, NULL, threads, why, sizeof(why));
	if (made)
		pthread_join(th, NULL);
	fd = mk.fd;
	if (fd < 0) {
		r->ms[BG_STAGE_BUILD] = bg_mono_ms() - t0;
		return bg_load_fail(r, BG_STAGE_BUILD, fd,
				    "cannot create the filter map (%zu bytes): %s",
				    r->plan.bytes,
				    fd == -ENOMEM || fd == -E2BIG ? "not enough memory" :
				    fd == -EPERM ? "not permitted (creating BPF maps needs CAP_BPF)" :
						   strerror(-fd));
	}
	len = page_round(r->plan.bytes);
	mem = MAP_FAILED;
	if (!ret) {
		mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (mem == MAP_FAILED) {
			ret = -errno;
			snprintf(why, sizeof(why), "cannot map the new filter map: %s",
				 strerror(-ret));
		}
	}
	if (!ret) {
		dst[BG_ART_SEC_FILTER] = mem;
		ret = bg_art_verify(a, 1u << BG_ART_SEC_FILTER, dst, threads, why,
				    sizeof(why));
	}
	if (mem != MAP_FAILED)
		munmap(mem, len);
	if (!ret && bpf_map_freeze(fd))
		ret = -errno;
	t1 = bg_mono_ms();
	r->ms[BG_STAGE_BUILD] = t1 - t0;
	if (ret) {
		close(fd);
		return bg_load_fail(r, ret == -EBADMSG ? BG_STAGE_PARSE : BG_STAGE_BUILD,
				    ret, "%s", *why ? why : strerror(-ret));
	}
	r->filter_id = bg_map_id(fd);
	t1 = bg_mono_ms();
	bg_record_keep(bg_filter_current_id(st->filters_fd));
	rec = r->filter_id && record_path ?
		      bg_record_write_artifact(r->filter_id, record_path,
					       a->h->digest) :
		      -ENOENT;
	r->ms[BG_STAGE_RECORD] = bg_mono_ms() - t1;
	t1 = bg_mono_ms();
	/* the set it is judged against live before it is */
	ret = bg_load_protect(st, protect, r);
	if (ret) {
		close(fd);
		bg_record_keep(bg_filter_current_id(st->filters_fd));
		return ret;
	}
	ret = reshape || repair ?
		      bg_attach_reshape(st, reshape, reshape_grow, fd, why, sizeof(why)) :
			bg_filter_publish(st->filters_fd, fd);
	r->ms[BG_STAGE_PUBLISH] = bg_mono_ms() - t1;
	if (bg_filter_current_id(st->filters_fd) == r->filter_id)
		bg_filter_pin(st->dir, fd); /* bg_filter_view_pinned() */
	close(fd);
	r->reshaped = (reshape || repair) &&
			      bg_filter_current_id(st->filters_fd) == r->filter_id ?
			      1 + reshape_grow : 0;
	r->grown = r->reshaped ? reshape : 0;
	if (ret && !r->reshaped) {
		bg_record_keep(bg_filter_current_id(st->filters_fd));
		if (reshape || repair)
			return bg_load_fail(r, BG_STAGE_PUBLISH, ret, "cannot change "
					    "the capacity to %u elements: %s",
					    reshape, why);
		return bg_load_fail(r, BG_STAGE_PUBLISH, ret,
				    "cannot swap the filter in: %s", strerror(-ret));
	}
	if (ret) /* live; a pin could not follow */
		bg_load_fail(r, BG_STAGE_RECORD, ret, "%s", why);
	keep = bg_record_keep(r->filter_id);
	if (record_path && rec)
		bg_load_fail(r, BG_STAGE_RECORD, rec,
			     "the filter is live, but its load record could not "
			     "be written (%s): check cannot name entries",
			     strerror(-rec));
	else if (record_path && keep)
		bg_load_fail(r, BG_STAGE_RECORD, keep,
			     "the filter is live, but its load record could not be "
			     "made current (%s)", strerror(-keep));
	return 0;
}
