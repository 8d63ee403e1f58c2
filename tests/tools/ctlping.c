// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ctlping: how long the agent takes to answer on its control socket, asked
 * again and again (the agent's e2e tests: `status` while it rebuilds or
 * fetches a slow list). Each ask is one connection, as `bloomgate status`
 * makes it, timed from connect() to the end of the answer.
 *
 *   build/tests/ctlping [-c CMD] [-i MS] [-n COUNT] [-s STOP-FILE] [-t SECONDS] SOCKET
 *
 * -c CMD        what to ask (default "status")
 * -i MS         pause between asks (default 20)
 * -n COUNT      asks at most (default: until stopped)
 * -s STOP-FILE  stop once this file exists
 * -t SECONDS    stop after this long in all (default 120): never endless
 *
 * Prints "ms N" per answer (an empty answer or a refused connection is
 * "error ..."), then "samples N max MS p99 MS p50 MS".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "core/clock.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One ask; its time in ms, or -1. */
static double ask(const char *path, const char *cmd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[65536], line[256];
	size_t got = 0;
	double t0 = bg_mono_ms();
	ssize_t n;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("error connect: %s\n", strerror(errno));
		close(fd);
		return -1;
	}
	snprintf(line, sizeof(line), "%s\n", cmd);
	if (send(fd, line, strlen(line), MSG_NOSIGNAL) < 0) {
		close(fd);
		return -1;
	}
	shutdown(fd, SHUT_WR);
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		got += (size_t)n;
	close(fd);
	if (!got) {
		printf("error empty answer\n");
		return -1;
	}
	return bg_mono_ms() - t0;
}

int main(int argc, char **argv)
{
	const char *cmd = "status", *stop = NULL;
	double pause = 20, limit = 120, t_end, *v = NULL, t;
	long count = -1, n = 0, cap = 0;
	int o;

	while ((o = getopt(argc, argv, "c:i:n:s:t:")) != -1) {
		switch (o) {
		case 'c': cmd = optarg; break;
		case 'i': pause = atof(optarg); break;
		case 'n': count = atol(optarg); break;
		case 's': stop = optarg; break;
		case 't': limit = atof(optarg); break;
		default:
			fprintf(stderr, "usage: ctlping [-c CMD] [-i MS] [-n COUNT] "
				"[-s STOP-FILE] [-t SECONDS] SOCKET\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "ctlping: one SOCKET\n");
		return 2;
	}
	t_end = bg_mono_ms() + limit * 1e3;
	while ((count < 0 || n < count) && bg_mono_ms() < t_end &&
	       !(stop && !access(stop, F_OK))) {
		t = ask(argv[optind], cmd);
		if (t >= 0) {
			if (n == cap) {
				cap = cap ? 2 * cap : 256;
				v = realloc(v, (size_t)cap * sizeof(*v));
				if (!v)
					return 1;
			}
			v[n++] = t;
			printf("ms %.1f\n", t);
			fflush(stdout);
		}
		usleep((useconds_t)(pause * 1e3));
	}
	if (!n) {
		printf("samples 0 max 0 p99 0 p50 0\n");
		return 0;
	}
	qsort(v, (size_t)n, sizeof(*v), cmp);
	printf("samples %ld max %.1f p99 %.1f p50 %.1f\n", n, v[n - 1],
	       v[(size_t)((double)(n - 1) * 0.99)], v[(n - 1) / 2]);
	free(v);
	return 0;
}
