// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The filter map and its atomic swap (see swap.h), and the per-CPU
 * counters summed.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/mem_lookup.h"
#include "kern/pins.h"
#include "kern/swap.h"

__u32 bg_map_id(int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

__u32 bg_filter_current_id(int filters_fd)
{
	__u32 zero = 0, id = 0;

	return bpf_map_lookup_elem(filters_fd, &zero, &id) ? 0 : id;
}

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

int bg_filter_create(const struct bg_filter_params *p, uint64_t seed,
		     const struct bg_blocklist *bl)
{
	return bg_filter_create_mt(p, seed, bl, 0);
}

int bg_filter_map_new(const struct bg_filter_params *p)
{
	/* BPF_F_INNER_MAP lets a filter of any size replace another, but the
	 * verifier then cannot inline the lookups in it. A fixed-size map
	 * (attach --capacity) must match the template bg_filters was created
	 * with exactly: its size and its flags (user/kern/attach.c). */
	LIBBPF_OPTS(bpf_map_create_opts, opts,
		    .map_flags = p->capacity ? BPF_F_MMAPABLE :
					       BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	int fd;

	if (p->capacity && p->nelems != p->capacity)
		return -EINVAL; /* not fitted (bg_filter_fit) */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bg_filter", sizeof(__u32),
			    BG_FILTER_VALUE_SIZE, p->nelems, &opts);
	return fd < 0 ? -errno : fd;
}

int bg_filter_create_mt(const struct bg_filter_params *p, uint64_t seed,
			const struct bg_blocklist *bl, unsigned int threads)
{
	int fd = bg_filter_map_new(p);

	return fd < 0 ? fd : bg_filter_create_in(fd, p, seed, bl, threads);
}

int bg_filter_create_in(int fd, const struct bg_filter_params *p,
			uint64_t seed, const struct bg_blocklist *bl,
			unsigned int threads)
{
	size_t len = page_round(p->bytes);
	void *mem;
	int err;

	/* Build straight into the map's memory: no per-block syscalls. */
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	err = bg_filter_build_seeded(mem, p, seed, bl, threads);
	if (err) {
		munmap(mem, len);
		close(fd);
		return err;
	}
	munmap(mem, len);
	/* Read-only from now on for every syscall user: the bits the datapath
	 * reads can no longer change under it. */
	if (bpf_map_freeze(fd)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int bg_filter_publish(int filters_fd, int filter_fd)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(filters_fd, &zero, &filter_fd, BPF_ANY))
		return -errno;
	return 0;
}

int bg_filter_pin(const char *dir, int filter_fd)
{
	char path[PATH_MAX];

	bg_filter_pin_path(path, sizeof(path), dir);
	/* bpffs cannot replace a pin: a reader that finds none, or the one
	 * before, takes the map by its id or waits (bg_filter_view_pinned) */
	if (unlink(path) && errno != ENOENT)
		return -errno;
	return bpf_obj_pin(filter_fd, path) ? -errno : 0;
}

/* An fd of the map in the slot: by its id, or (dir set, the id refused
 * without CAP_SYS_ADMIN) the pinned one when it is that map. */
static int current_fd(int filters_fd, const char *dir)
{
	__u32 zero = 0, id = 0, len;
	struct bpf_map_info info;
	char path[PATH_MAX];
	int fd, tries;

	for (tries = 0; tries < 50; tries++) {
		if (bpf_map_lookup_elem(filters_fd, &zero, &id) || !id)
			return -ENOENT;
		fd = bpf_map_get_fd_by_id(id);
		if (fd >= 0)
			return fd;
		if (errno != EPERM || !dir)
			return errno == ENOENT ? -EAGAIN : -errno; /* swapped meanwhile */
		bg_filter_pin_path(path, sizeof(path), dir);
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			len = sizeof(info);
			memset(&info, 0, sizeof(info));
			if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.id == id)
				return fd;
			close(fd);
		}
		/* a load between its publish and its pin: a moment */
		usleep(2000);
	}
	return -EPERM;
}

static int map_current(int filters_fd, const char *dir, const void **mem,
		       size_t *len, int lazy)
{
	struct bpf_map_info info;
	__u32 info_len = sizeof(info);
	const struct bg_filter_header *hdr;
	void *m;
	int fd, err;

	fd = current_fd(filters_fd, dir);
	if (fd < 0)
		return fd;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len)) {
		err = -errno;
		close(fd);
		return err;
	}
	*len = page_round((size_t)info.max_entries * info.value_size);
	if (lazy) {
		/* only the chunks a reader reaches are mapped (core/view.h) */
		err = bg_view_open(fd, *len, (const void **)&m);
	} else {
		m = mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, 0);
		err = m == MAP_FAILED ? -errno : 0;
	}
	close(fd);
	if (err)
		return err;
	hdr = m;
	if (hdr->magic != BG_FILTER_MAGIC || hdr->abi_version != BG_ABI_VERSION ||
	    bg_filter_nelems(hdr) > info.max_entries) {
		bg_filter_unmap(m, *len);
		return -EPROTO;
	}
	*mem = m;
	return 0;
}

int bg_filter_map_current(int filters_fd, const void **mem, size_t *len)
{
	return map_current(filters_fd, NULL, mem, len, 0);
}

int bg_filter_view_pinned(const char *dir, int filters_fd, const void **mem,
			  size_t *len)
{
	return map_current(filters_fd, dir, mem, len, 1);
}

void bg_filter_unmap(const void *mem, size_t len)
{
	if (bg_view_close(mem))
		munmap((void *)mem, len);
}

int bg_counters_read(int counters_fd, struct bg_counters *sum)
{
	int ncpu = libbpf_num_possible_cpus(), i, j;
	struct bg_counters *per;
	__u32 zero = 0;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	per = calloc((size_t)ncpu, sizeof(*per));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(counters_fd, &zero, per)) {
		int err = -errno;

		free(per);
		return err;
	}
	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < ncpu; i++) {
		for (j = 0; j < BG_CNT_SLOTS; j++)
			sum->cnt[j] += per[i].cnt[j];
		for (j = 0; j < BG_MAL_SLOTS; j++)
			sum->malformed[j] += per[i].malformed[j];
	}
	free(per);
	return 0;
}

int bg_filter_create_image(const struct bg_filter_params *p, const void *image)
{
	size_t len = page_round(p->bytes);
	void *mem;
	int fd = bg_filter_map_new(p), err;

	if (fd < 0)
		return fd;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	memcpy(mem, image, p->bytes);
	err = bg_header_ok(mem) ? 0 : -EINVAL;
	munmap(mem, len);
	if (!err && bpf_map_freeze(fd))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}
