/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A read-only view of a filter in a file or map descriptor that maps its
 * pages only when a lookup reads them. Mapping a BPF array map whole makes
 * the kernel insert every page at mmap() and tear every one down at
 * munmap(): 9 + 10 ms for a 100M-key filter (542 MiB), where a lookup
 * reads a few dozen elements. A view reserves the address range, maps the
 * header's page at once and every other chunk the first time bg_elem()
 * (core/mem_lookup.h) reaches into it.
 *
 * A view is known to the thread that opened it only (the CLI's readers
 * are single-threaded); the agent and the builder never open one, and
 * bg_elem() costs them one thread-local load.
 */
#ifndef BLOOMGATE_CORE_VIEW_H
#define BLOOMGATE_CORE_VIEW_H

#include <stddef.h>

/* Bytes mapped at once when a lookup first reaches into them. */
#define BG_VIEW_CHUNK (64 * 1024)

/*
 * A view of the first len bytes (a page multiple) of fd from offset 0,
 * read-only and shared: *mem its base. fd may be closed after. 0 or
 * -errno.
 */
int bg_view_open(int fd, size_t len, const void **mem);

/*
 * Unmaps the view at mem (a base bg_view_open() returned): 0, or -1 when
 * mem is the base of no view of this thread (left untouched).
 */
int bg_view_close(const void *mem);

/*
 * The first error (-errno) a lookup in the view at mem met mapping a chunk
 * (its bg_elem() then answered NULL, which the lookup reads as "not
 * listed": a reader must not trust an answer given with an error), or 0.
 */
int bg_view_error(const void *mem);

struct bg_view;
extern _Thread_local struct bg_view *bg_views;

/*
 * Makes [p, p + n) readable when it lies in a view of this thread: 0 when
 * it is (or lies in none), -1 when its chunk cannot be mapped.
 */
int bg_view_fault(const void *p, size_t n);

static inline int bg_view_ready(const void *p, size_t n)
{
	return bg_views ? bg_view_fault(p, n) : 0;
}

#endif
