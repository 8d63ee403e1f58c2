// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Another network namespace, by its nsfs inode (kern/netns.h): found, and
 * entered by a thread of its own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kern/netns.h"
#include "kern/pins.h"

struct ns_call {
	int fd;
	int (*fn)(void *arg);
	void *arg;
	int ret;
};

/* In a thread of its own: setns() moves the calling thread only, and this
 * one ends right after. */
static void *ns_call_thread(void *arg)
{
	struct ns_call *c = arg;

	c->ret = setns(c->fd, CLONE_NEWNET) ? -errno : c->fn(c->arg);
	return NULL;
}

int bg_netns_call(int fd, int (*fn)(void *arg), void *arg)
{
	struct ns_call c = { .fd = fd, .fn = fn, .arg = arg };
	pthread_t t;
	int ret;

	if (fd < 0)
		return fn(arg);
	ret = pthread_create(&t, NULL, ns_call_thread, &c);
	if (ret)
		return -ret;
	pthread_join(t, NULL);
	return c.ret;
}

/* A bind-mounted namespace (ip netns add, container runtimes) with nsfs
 * inode ino, from our mountinfo: its mount point into path. */
static int ns_mount_of(__u32 ino, char *path, size_t len)
{
	char line[4096], want[32], root[64], mnt[PATH_MAX];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int found = 0;

	if (!f)
		return 0;
	snprintf(want, sizeof(want), "net:[%u]", ino);
	while (!found && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - nsfs ");
		char *o;
		const char *i;

		/* id parent major:minor root mountpoint ... - nsfs ... */
		if (!sep || sscanf(line, "%*s %*s %*s %63s %4095s", root, mnt) != 2 ||
		    strcmp(root, want))
			continue;
		/* the mount point is octal-escaped (\040 for a blank) */
		for (i = mnt, o = mnt; *i; o++) {
			if (i[0] == '\\' && i[1] >= '0' && i[1] <= '3' && i[2] && i[3]) {
				*o = (char)(((i[1] - '0') << 6) | ((i[2] - '0') << 3) |
					    (i[3] - '0'));
				i += 4;
			} else {
				*o = *i++;
			}
		}
		*o = 0;
		found = snprintf(path, len, "%s", mnt) < (int)len;
	}
	fclose(f);
	return found;
}

int bg_netns_path(__u32 ino, char *path, size_t len)
{
	struct dirent *de;
	struct stat sb;
	DIR *d;
	int found = 0;

	if (ns_mount_of(ino, path, len))
		return 1;
	d = opendir("/proc");
	while (d && !found && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, len, "/proc/%s/ns/net", de->d_name);
		found = stat(path, &sb) == 0 && (__u32)sb.st_ino == ino;
	}
	if (d)
		closedir(d);
	return found;
}

int bg_in_netns_of(__u32 ino, int (*fn)(void *arg), void *arg)
{
	char path[PATH_MAX];
	int fd, ret;

	if (ino == bg_netns_ino())
		return fn(arg);
	if (!bg_netns_path(ino, path, sizeof(path)))
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = bg_netns_call(fd, fn, arg);
	close(fd);
	return ret;
}
