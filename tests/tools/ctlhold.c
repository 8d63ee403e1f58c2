// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ctlhold: control socket peers that ask and never read (the agent's e2e
 * tests: followers of the events that do not read, connections that send
 * nothing).
 *
 *   build/tests/ctlhold [-n N] [-c CMD] [-t SECONDS] SOCKET
 *
 * -n N           connections (default 1)
 * -c CMD         what each sends, with a newline (default "events"; "" sends
 *                nothing)
 * -t SECONDS     stop after this long in all (default 120): never endless
 *
 * Connects N times (one at a time, as the agent accepts), sends CMD on
 * each, then after a second peeks at what came (MSG_PEEK: nothing is taken
 * from a socket that is held): a connection whose first bytes are "error: "
 * was refused (its line is read and it is closed); the others are held,
 * never read, until SIGTERM or SIGINT or the time limit. Prints:
 *   refused REASON        one line per refused connection (its error line)
 *   held N                connections held
 *   ready                 once every connection was sorted
 * and when it stops:
 *   closed N              of those held, closed by the agent meanwhile
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "core/clock.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int connect_to(const char *path, const char *cmd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char line[256];
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	if (*cmd) {
		snprintf(line, sizeof(line), "%s\n", cmd);
		send(fd, line, strlen(line), MSG_NOSIGNAL);
	}
	return fd;
}

/* A refused connection's line: printed, the connection closed. 1 when
 * refused, 0 when held (nothing yet, or not an error). */
static int sort_one(int fd)
{
	char buf[512];
	ssize_t n = recv(fd, buf, 7, MSG_PEEK | MSG_DONTWAIT);

	if (n < 7 || memcmp(buf, "error: ", 7))
		return 0;
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	printf("refused %s\n", buf + 7);
	close(fd);
	return 1;
}

int main(int argc, char **argv)
{
	const char *cmd = "events";
	double limit = 120, t_end, t;
	long n = 1, i, held = 0, closed = 0;
	int *fds, o;

	while ((o = getopt(argc, argv, "c:n:t:")) != -1) {
		switch (o) {
		case 'c': cmd = optarg; break;
		case 'n': n = atol(optarg); break;
		case 't': limit = atof(optarg); break;
		default:
			fprintf(stderr, "usage: ctlhold [-n N] [-c CMD] [-t SECONDS] SOCKET\n");
			return 2;
		}
	}
	if (optind != argc - 1 || n < 1) {
		fprintf(stderr, "ctlhold: one SOCKET, -n at least 1\n");
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	t_end = bg_mono() + limit;
	fds = calloc((size_t)n, sizeof(*fds));
	if (!fds)
		return 1;
	for (i = 0; i < n; i++) {
		fds[i] = connect_to(argv[optind], cmd);
		if (fds[i] < 0)
			printf("error connect: %s\n", strerror(errno));
	}
	/* a refusal is answered at once: a second for every answer to come */
	for (t = bg_mono() + 1.0; bg_mono() < t;)
		usleep(20000);
	for (i = 0; i < n; i++) {
		if (fds[i] >= 0 && sort_one(fds[i]))
			fds[i] = -1;
		held += fds[i] >= 0;
	}
	printf("held %ld\nready\n", held);
	fflush(stdout);
	while (bg_mono() < t_end && !stop)
		usleep(50000);
	for (i = 0; i < n; i++) {
		struct pollfd p = { .fd = fds[i], .events = POLLRDHUP };

		if (fds[i] < 0)
			continue;
		closed += poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP));
		close(fds[i]);
	}
	printf("closed %ld\n", closed);
	free(fds);
	return 0;
}
