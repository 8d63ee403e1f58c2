/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The filter map and its atomic swap: creating a filter map and building
 * a filter into it, publishing it in the slot the datapath reads, mapping
 * the live one back for `check` and `status`; reading the counters.
 * Kernel part: needs libbpf.
 */
#ifndef BLOOMGATE_SWAP_H
#define BLOOMGATE_SWAP_H

#include <stddef.h>
#include <stdint.h>

#include "bloomgate/abi.h"
#include "core/filter.h"

/* Creates a filter map, builds the planned filter (p from bg_filter_plan)
 * of the blocklist into it through mmap, freezes it. Returns the map fd or
 * a negative errno. A plan fitted to a capacity (bg_filter_fit) gets a
 * fixed-size map of exactly that many elements, without BPF_F_INNER_MAP. */
int bg_filter_create(const struct bg_filter_params *p, uint64_t seed,
		     const struct bg_blocklist *bl);
/* The same, built on threads threads (0: every online CPU). */
int bg_filter_create_mt(const struct bg_filter_params *p, uint64_t seed,
			const struct bg_blocklist *bl, unsigned int threads);
/*
 * Its two halves: a new, zeroed filter map for plan p (its elements and,
 * with a capacity, its flags are all it depends on; the kernel zeroes
 * the memory, which at 100M keys is most of a second here), then the
 * build into map fd (of p->nelems elements, from bg_filter_map_new()),
 * which takes fd: it is returned frozen, or closed with -errno.
 */
int bg_filter_map_new(const struct bg_filter_params *p);
int bg_filter_create_in(int fd, const struct bg_filter_params *p,
			uint64_t seed, const struct bg_blocklist *bl,
			unsigned int threads);

/*
 * Publishes filter map fd in the slot as one pointer store. The kernel waits
 * for an RCU grace period before the update returns, so when this returns no
 * packet can still be reading the old filter and its memory is released.
 */
int bg_filter_publish(int filters_fd, int filter_fd);
/* A new filter map of plan p holding image (p->bytes, built or patched in
 * memory), its header checked, frozen: its fd, or -errno. */
int bg_filter_create_image(const struct bg_filter_params *p, const void *image);

/*
 * Maps the live filter read-only, whole: any thread may read any byte of
 * it. -ENOENT when none is loaded.
 */
int bg_filter_map_current(int filters_fd, const void **mem, size_t *len);
/*
 * The same as a view (core/view.h), for the live filter of pin directory
 * dir: only the chunks a lookup of this thread reaches through bg_elem()
 * are mapped, the way a one-key check at 100M keys does not pay for
 * mapping and unmapping 542 MiB. Also without CAP_SYS_ADMIN: when the
 * kernel refuses the map by its id (EPERM), the map pinned as
 * BG_FILTER_PIN is taken if it is the one in the slot.
 */
int bg_filter_view_pinned(const char *dir, int filters_fd, const void **mem,
			  size_t *len);
/* Pins filter_fd, just published, as dir's BG_FILTER_PIN (in place of the
 * one before). 0 or -errno; the filter is live either way. */
int bg_filter_pin(const char *dir, int filter_fd);
/* Unmaps what either of the two returned. */
void bg_filter_unmap(const void *mem, size_t len);

/* Id of a map fd; id of the filter map in the slot (0: none). */
__u32 bg_map_id(int fd);
__u32 bg_filter_current_id(int filters_fd);

/* Sums the per-CPU counters. */
int bg_counters_read(int counters_fd, struct bg_counters *sum);

#endif
