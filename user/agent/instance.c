// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* One agent per pin directory and state directory (user/agent/instance.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/record.h"
#include "agent/instance.h"

/* The pid in a lock file, 0 when it holds none. */
static pid_t read_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	return (pid_t)strtol(buf, NULL, 10);
}

/*
 * Takes the flock on path and writes our pid into it; -EBUSY (with *holder
 * the pid in the file) when another process holds it. The lock file stays
 * when we are gone: the lock is the flock, never the file's existence.
 */
static int take(const char *path, int *fdp, pid_t *holder)
{
	char pid[32];
	int fd, n;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno == EWOULDBLOCK ? -EBUSY : -errno;

		*holder = read_pid(fd);
		close(fd);
		return err;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n) {
		int err = -errno;

		close(fd);
		return err;
	}
	*fdp = fd;
	return 0;
}

int bg_instance_lock(struct bg_instance *in, const char *state_dir,
		     char *err, size_t errlen)
{
	char path[PATH_MAX];
	pid_t holder = 0;
	int ret;

	in->run_fd = in->state_fd = -1;
	mkdir(BG_RECORD_DIR, 0755); /* /run/bloomgate, as the records' */
	bg_run_path(path, sizeof(path), BG_INSTANCE_RUN_SUFFIX);
	ret = take(path, &in->run_fd, &holder);
	if (ret == -EBUSY) {
		snprintf(err, errlen,
			 "another agent (pid %ld) runs on pin directory %s: one agent a pin directory",
			 (long)holder, bg_pin_dir());
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	snprintf(path, sizeof(path), "%s/%s", state_dir, BG_INSTANCE_STATE_LOCK);
	ret = take(path, &in->state_fd, &holder);
	if (ret == -EBUSY)
		snprintf(err, errlen,
			 "another agent (pid %ld) uses state directory %s: one agent a state directory",
			 (long)holder, state_dir);
	else if (ret)
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
	if (ret)
		bg_instance_unlock(in);
	return ret;
}

void bg_instance_unlock(struct bg_instance *in)
{
	if (in->run_fd >= 0)
		close(in->run_fd);
	if (in->state_fd >= 0)
		close(in->state_fd);
	in->run_fd = in->state_fd = -1;
}

int bg_instance_running(pid_t *pid)
{
	char path[PATH_MAX];
	int fd, running = 0;

	*pid = 0;
	bg_run_path(path, sizeof(path), BG_INSTANCE_RUN_SUFFIX);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	/* a shared lock we cannot take: an agent holds the exclusive one */
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
	} else if (errno == EWOULDBLOCK) {
		running = 1;
		*pid = read_pid(fd);
	}
	close(fd);
	return running;
}
