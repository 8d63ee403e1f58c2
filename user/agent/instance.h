/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One agent per pin directory (its control socket and its filter) and per
 * state directory: the agent holds an flock on a lock file for each, for
 * as long as it runs, with its pid written in them, and removes them when
 * it exits cleanly. The kernel drops the
 * locks when the process dies however it dies, so a crashed agent never
 * blocks the next. `bloomgate load` asks whether an agent feeds the pin
 * directory before it replaces the filter.
 */
#ifndef BLOOMGATE_INSTANCE_H
#define BLOOMGATE_INSTANCE_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

/* The lock file in the state directory. */
#define BG_INSTANCE_STATE_LOCK "agent.lock"
/* The lock of the pin directory: bg_run_path(".agent.lock"). */
#define BG_INSTANCE_RUN_SUFFIX ".agent.lock"

struct bg_instance {
	int run_fd, state_fd; /* -1 when not held */
	char run_path[PATH_MAX], state_path[PATH_MAX]; /* the lock files */
};

/*
 * Takes both locks for this process (state_dir must exist). -EBUSY when
 * another agent holds one, with err saying which and its pid ("another
 * agent (pid 123) runs on pin directory /sys/fs/bpf/bloomgate"), or
 * -errno of creating a lock file.
 */
int bg_instance_lock(struct bg_instance *in, const char *state_dir,
		     char *err, size_t errlen);
/* Drops both locks and removes their files (each only while it is still
 * ours): a clean exit leaves nothing in /run/bloomgate. A killed agent's
 * files stay, taken over by the next. */
void bg_instance_unlock(struct bg_instance *in);

/* 1 when an agent runs on the pin directory ($BLOOMGATE_PIN_DIR), with
 * *pid its pid (0 if its lock file holds none); else 0. */
int bg_instance_running(pid_t *pid);

#endif
