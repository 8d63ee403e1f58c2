// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Pinned state: bpffs, the pin directory and its lock, opening the pinned
 * maps, the pin names of the per-attachment prog arrays.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>
#include <bpf/bpf.h>

#include "kern/pins.h"

/* Pin file names are the BPF symbols, so the two cannot drift. */
static const char *const map_names[BG_PIN__COUNT] = {
	[BG_PIN_FILTERS] = BG_TEXTIFY(BG_MAP_FILTERS),
	[BG_PIN_COUNTERS] = BG_TEXTIFY(BG_MAP_COUNTERS),
	[BG_PIN_EVENTS] = BG_TEXTIFY(BG_MAP_EVENTS),
	[BG_PIN_ATTACH] = BG_TEXTIFY(BG_MAP_ATTACH),
	[BG_PIN_PROTECT] = BG_TEXTIFY(BG_MAP_PROTECT),
};

int bg_bpffs_mounted(void)
{
	struct statfs sfs;

	return statfs("/sys/fs/bpf", &sfs) == 0 && sfs.f_type == BPF_FS_MAGIC;
}

/* The name of our network namespace under /run/netns (ip netns), into
 * buf; 0 when it has none there. */
static int netns_name(char *buf, size_t len)
{
	char path[PATH_MAX];
	struct stat self, sb;
	struct dirent *de;
	DIR *d;
	int found = 0;

	if (stat("/proc/self/ns/net", &self) || !(d = opendir("/run/netns")))
		return 0;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		if (!stat(path, &sb) && sb.st_dev == self.st_dev && sb.st_ino == self.st_ino) {
			snprintf(buf, len, "%s", de->d_name);
			found = 1;
		}
	}
	closedir(d);
	return found;
}

void bg_no_bpffs_why(char *buf, size_t len)
{
	char ns[NAME_MAX + 1];

	if (!netns_name(ns, sizeof(ns)))
		snprintf(ns, sizeof(ns), "NAME");
	snprintf(buf, len, "no bpffs on /sys/fs/bpf in this mount namespace, so "
		 "bloomgate's pins cannot be seen from here (ip netns exec gives a "
		 "command a mount namespace of its own, without it): run it as "
		 "nsenter --net=/run/netns/%s bloomgate ..., which enters the network "
		 "namespace and keeps the mount namespace, or bind-mount the bpffs that "
		 "holds the pins on /sys/fs/bpf (a new mount of bpffs is an empty one)",
		 ns);
}

int bg_ensure_bpffs(void)
{
	char ns[NAME_MAX + 1];

	if (bg_bpffs_mounted())
		return 0;
	if (netns_name(ns, sizeof(ns)))
		return -ENOMEDIUM;
	if (mkdir("/sys/fs/bpf", 0700) && errno != EEXIST)
		return -errno;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"))
		return -errno;
	return 0;
}

static void pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

void bg_map_pin_path(char *buf, size_t len, const char *dir,
		     enum bg_pin_map m)
{
	pin_path(buf, len, dir, map_names[m]);
}

void bg_filter_pin_path(char *buf, size_t len, const char *dir)
{
	pin_path(buf, len, dir, BG_FILTER_PIN);
}

int bg_state_lock(struct bg_state *st)
{
	st->lock_fd = open(st->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (st->lock_fd < 0)
		return -errno;
	/* Serialises attach, detach and load: concurrent loads queue here. */
	if (flock(st->lock_fd, LOCK_EX)) {
		int err = -errno;

		close(st->lock_fd);
		st->lock_fd = -1;
		return err;
	}
	return 0;
}

/* 1 when dir holds the attachment records' pin. */
static int attach_pinned(const char *dir)
{
	char path[PATH_MAX];

	bg_map_pin_path(path, sizeof(path), dir, BG_PIN_ATTACH);
	return access(path, F_OK) == 0;
}

int bg_state_open(struct bg_state *st, int lock)
{
	int *fds[BG_PIN__COUNT] = {
		[BG_PIN_FILTERS] = &st->filters_fd,
		[BG_PIN_COUNTERS] = &st->counters_fd,
		[BG_PIN_EVENTS] = &st->events_fd,
		[BG_PIN_ATTACH] = &st->attach_fd,
		[BG_PIN_PROTECT] = &st->protect_fd,
	};
	char path[PATH_MAX];
	int err, i, retried = 0;

	memset(st, 0, sizeof(*st));
	st->lock_fd = st->filters_fd = st->counters_fd = -1;
	st->events_fd = st->attach_fd = st->protect_fd = -1;
	snprintf(st->dir, sizeof(st->dir), "%s", bg_pin_dir());
	/* never mounted here: a new bpffs holds nothing to open */
	if (!bg_bpffs_mounted())
		return -ENOMEDIUM;
	if (access(st->dir, F_OK))
		return -ENOENT;
	if (lock == 1) {
		err = bg_state_lock(st);
		if (err)
			return err;
	}
	for (i = 0; i < BG_PIN__COUNT; i++) {
		bg_map_pin_path(path, sizeof(path), st->dir, (enum bg_pin_map)i);
		*fds[i] = bpf_obj_get(path);
		/* bg_filters is pinned anew when the capacity changes
		 * (bg_attach_grow(), under the lock; bpffs cannot rename):
		 * missing for a moment. The lock waits that moment out. */
		if (*fds[i] < 0 && errno == ENOENT && i == BG_PIN_FILTERS &&
		    !lock && !retried && attach_pinned(st->dir)) {
			retried = 1;
			err = bg_state_lock(st);
			if (err) {
				bg_state_close(st);
				return err;
			}
			i--;
			continue;
		}
		/* attached by a bloomgate older than the protected set */
		if (*fds[i] < 0 && errno == ENOENT && i == BG_PIN_PROTECT)
			continue;
		if (*fds[i] < 0) {
			err = -errno;
			bg_state_close(st);
			return err;
		}
	}
	if (retried) {
		close(st->lock_fd);
		st->lock_fd = -1;
	}
	return 0;
}

void bg_state_close(struct bg_state *st)
{
	int fds[] = { st->filters_fd, st->counters_fd, st->events_fd,
		      st->attach_fd, st->protect_fd, st->lock_fd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	st->filters_fd = st->counters_fd = st->events_fd = -1;
	st->attach_fd = st->protect_fd = st->lock_fd = -1;
}

void bg_progs_pin_path(char *buf, size_t len, const char *dir, __u32 ifindex,
		       __u32 netns_ino)
{
	snprintf(buf, len, "%s/%s%u_%u", dir, BG_PROGS_PIN_PREFIX, ifindex,
		 netns_ino);
}

void bg_unpin_all(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int i;

	for (i = 0; i < BG_PIN__COUNT; i++) {
		bg_map_pin_path(path, sizeof(path), dir, (enum bg_pin_map)i);
		unlink(path);
	}
	bg_filter_pin_path(path, sizeof(path), dir);
	unlink(path);
	/* the attachments' prog arrays, also ones a crash left behind */
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, BG_PROGS_PIN_PREFIX,
			    strlen(BG_PROGS_PIN_PREFIX)))
			continue;
		pin_path(path, sizeof(path), dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	bg_record_keep(0); /* no filter is live: every load record goes */
	/* libxdp's own pin directory, when it has nothing left in it. */
	rmdir("/sys/fs/bpf/xdp");
}

/* The calling thread's network namespace: ifindexes are only unique in one. */
__u32 bg_netns_ino(void)
{
	struct stat sb;

	return stat("/proc/self/ns/net", &sb) ? 0 : (__u32)sb.st_ino;
}
