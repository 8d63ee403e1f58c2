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

/* 1 when fd is the file path names now. */
static int still_at(int fd, const char *path)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(path, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/*
 * Takes the flock on path and writes our pid into it; -EBUSY (with *holder
 * the pid in the file) when another process holds it. The lock is the
 * flock, never the file's existence: a file a killed agent left is taken
 * over. An agent that stops cleanly removes its file while it still holds
 * the lock (drop()), so a lock taken on a file that is no longer at path
 * (removed between our open and our flock) is no lock at all: taken again
 * on the file now there.
 */
static int take(const char *path, int *fdp, pid_t *holder)
{
	char pid[32];
	int fd, n, tries;

	for (tries = 0;; tries++) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int err = errno == EWOULDBLOCK ? -EBUSY : -errno;

			*holder = read_pid(fd);
			close(fd);
			return err;
		}
		if (still_at(fd, path))
			break;
		close(fd);
		if (tries == 8)
			return -EAGAIN; /* removed again and again: not ours */
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

/* Our lock file removed, while we hold its lock (only when path still
 * names it), then the lock dropped. */
static void drop(int fd, const char *path)
{
	if (fd < 0)
		return;
	if (still_at(fd, path))
		unlink(path);
	close(fd);
}

int bg_instance_lock(struct bg_instance *in, const char *state_dir,
		     char *err, size_t errlen)
{
	char path[PATH_MAX];
	pid_t holder = 0;
	int ret;

	in->run_fd = in->state_fd = -1;
	mkdir(BG_RECORD_DIR, 0755); /* /run/bloomgate, as the records' */
	bg_run_path(in->run_path, sizeof(in->run_path), BG_INSTANCE_RUN_SUFFIX);
	snprintf(path, sizeof(path), "%s", in->run_path);
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
	snprintf(in->state_path, sizeof(in->state_path), "%s/%s", state_dir,
		 BG_INSTANCE_STATE_LOCK);
	snprintf(path, sizeof(path), "%s", in->state_path);
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
	drop(in->state_fd, in->state_path);
	drop(in->run_fd, in->run_path);
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
