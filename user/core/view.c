// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Views that map a filter's chunks on first read (see view.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/view.h"

struct bg_view {
	struct bg_view *next;
	char *base;
	size_t len;
	int fd;		/* a duplicate of the caller's, closed with the view */
	int err;	/* the first chunk that could not be mapped: -errno */
	uint8_t *mapped; /* one bit a chunk */
};

_Thread_local struct bg_view *bg_views;

static int map_chunk(struct bg_view *v, size_t c)
{
	size_t off = c * BG_VIEW_CHUNK, n = v->len - off;

	if (v->mapped[c / 8] & (1u << (c % 8)))
		return 0;
	if (n > BG_VIEW_CHUNK)
		n = BG_VIEW_CHUNK;
	if (mmap(v->base + off, n, PROT_READ, MAP_SHARED | MAP_FIXED, v->fd,
		 (off_t)off) == MAP_FAILED)
		return -errno;
	v->mapped[c / 8] |= (uint8_t)(1u << (c % 8));
	return 0;
}

int bg_view_open(int fd, size_t len, const void **mem)
{
	struct bg_view *v;
	size_t chunks = (len + BG_VIEW_CHUNK - 1) / BG_VIEW_CHUNK;
	void *m;
	int err;

	if (!len)
		return -EINVAL;
	v = calloc(1, sizeof(*v));
	if (!v || !(v->mapped = calloc((chunks + 7) / 8, 1))) {
		free(v);
		return -ENOMEM;
	}
	/* the range reserved: nothing readable until a chunk is mapped */
	m = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	v->base = m;
	v->len = len;
	v->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (v->fd < 0) {
		err = -errno;
		goto fail_unmap;
	}
	if ((err = map_chunk(v, 0)))
		goto fail_close;
	v->next = bg_views;
	bg_views = v;
	*mem = v->base;
	return 0;
fail_close:
	close(v->fd);
fail_unmap:
	munmap(m, len);
fail:
	free(v->mapped);
	free(v);
	return err;
}

static struct bg_view *view_of(const void *p)
{
	struct bg_view *v;

	for (v = bg_views; v; v = v->next)
		if ((const char *)p >= v->base && (const char *)p < v->base + v->len)
			return v;
	return NULL;
}

int bg_view_error(const void *mem)
{
	struct bg_view *v = view_of(mem);

	return v ? v->err : 0;
}

int bg_view_fault(const void *p, size_t n)
{
	struct bg_view *v = view_of(p);
	size_t a, b;

	if (!v)
		return 0;
	a = (size_t)((const char *)p - v->base);
	if (n > v->len - a)
		return -1; /* past the view's end: the caller bounds its reads */
	for (b = a + (n ? n - 1 : 0), a /= BG_VIEW_CHUNK, b /= BG_VIEW_CHUNK; a <= b; a++) {
		int err = map_chunk(v, a);

		if (err) {
			if (!v->err)
				v->err = err;
			return -1;
		}
	}
	return 0;
}

int bg_view_close(const void *mem)
{
	struct bg_view **pv, *v;

	for (pv = &bg_views; (v = *pv); pv = &v->next)
		if (v->base == mem)
			break;
	if (!v)
		return -1;
	*pv = v->next;
	munmap(v->base, v->len);
	close(v->fd);
	free(v->mapped);
	free(v);
	return 0;
}
