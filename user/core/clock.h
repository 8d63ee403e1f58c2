/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The clocks, read one way by every layer: CLOCK_MONOTONIC for intervals
 * and deadlines measured here (and bpf_ktime_get_ns()'s stamps),
 * CLOCK_REALTIME for times shown to people or compared with other
 * machines' (a decision's expiry, a report's date), and the absolute
 * CLOCK_REALTIME instant pthread_cond_timedwait() takes. Inline so the
 * test tools (tests/tools, built without the libraries) read them the
 * same way.
 */
#ifndef BLOOMGATE_CLOCK_H
#define BLOOMGATE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds (the clock of bpf_ktime_get_ns()). */
static inline uint64_t bg_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in seconds. */
static inline double bg_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CLOCK_MONOTONIC in milliseconds. */
static inline double bg_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Unix time in nanoseconds (CLOCK_REALTIME). */
static inline uint64_t bg_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Unix time in seconds (CLOCK_REALTIME). */
static inline double bg_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The CLOCK_REALTIME instant secs (negative: 0) from now into *ts,
 * normalized (tv_nsec below a second): pthread_cond_timedwait()'s
 * deadline. */
static inline void bg_deadline(struct timespec *ts, double secs)
{
	long ns;

	clock_gettime(CLOCK_REALTIME, ts);
	if (secs < 0)
		secs = 0;
	ts->tv_sec += (time_t)secs;
	ns = ts->tv_nsec + (long)((secs - (double)(time_t)secs) * 1e9);
	ts->tv_sec += ns / 1000000000L;
	ts->tv_nsec = ns % 1000000000L;
}

#endif
