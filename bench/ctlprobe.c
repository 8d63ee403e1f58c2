// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ctlprobe: how the agent answers while it works, for the scale section
 * of `make bench` (bench/scale.sh).
 *
 *   ctlprobe [-o FILE] SOCKET HOST:PORT SECONDS INTERVAL_MS
 *
 * Two threads, each a closed loop: one connects to the agent's control
 * socket SOCKET (a Unix stream socket), sends "status\n" and reads the
 * answer to its end, as `bloomgate status` does (bg_agent_ask); the other
 * GETs http://HOST:PORT/metrics (HTTP/1.0, the whole body read, a
 * "200" status line required). A request is started every INTERVAL_MS,
 * or at once when the previous one took longer. Each request has 5 s
 * from its start to its last byte; past that it is a timeout, closed and
 * counted as such, and the next one starts.
 *
 * It runs for SECONDS, or until SIGINT or SIGTERM (a request under way
 * then is finished, within its 5 s), and prints one line per probe:
 *
 *   status n=N ok=N timeout=N error=N p50=MS p99=MS max=MS stall=MS
 *   metrics ...
 *
 * p50, p99 (nearest rank) and max are over the answered requests, in ms;
 * stall is the longest time with no answer: between two answers, from the
 * start to the first, or from the last to the end. -o FILE writes every
 * request as "probe start_ms latency_ms outcome" (ok, timeout, error),
 * start_ms from the probe's start.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_MS 5000.0

enum outcome { OK, TIMEOUT, ERROR };
static const char *const outcome_name[] = { "ok", "timeout", "error" };

struct sample {
	double start, ms; /* ms from t0; latency */
	enum outcome o;
};

struct probe {
	const char *name;
	enum outcome (*run)(struct probe *p, double deadline);
	struct sample *v;
	size_t n, cap;
	int failed; /* out of memory */
	/* the target */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char request[512];
};

static double t0, interval_ms, end_ms;
static volatile sig_atomic_t stop;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6 - t0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Waits for EVENTS on fd until the deadline: 1 ready, 0 timeout, -1 error. */
static int wait_fd(int fd, short events, double deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	for (;;) {
		double left = deadline - now_ms();
		int r;

		if (left <= 0)
			return 0;
		r = poll(&pfd, 1, (int)left + 1);
		if (r > 0)
			return pfd.revents & (events | POLLHUP | POLLERR) ? 1 : -1;
		if (r == 0)
			continue; /* the deadline decides */
		if (errno != EINTR)
			return -1;
	}
}

/* Connects (non-blocking), sends the request, reads to EOF. HEAD gets the
 * first bytes of the answer (for the status line), at most headlen - 1. */
static enum outcome exchange(struct probe *p, double deadline, char *head,
			     size_t headlen, size_t *total)
{
	char buf[65536];
	size_t sent = 0, len = strlen(p->request), got = 0;
	enum outcome o = ERROR;
	int fd, r;

	fd = socket(p->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ERROR;
	/* a Unix socket's full backlog is EAGAIN: retried until the deadline */
	while (connect(fd, (struct sockaddr *)&p->addr, p->addrlen)) {
		if (errno == EINPROGRESS) {
			int err = 0;
			socklen_t el = sizeof(err);

			r = wait_fd(fd, POLLOUT, deadline);
			if (r <= 0) {
				o = r ? ERROR : TIMEOUT;
				goto out;
			}
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) || err)
				goto out;
			break;
		}
		if (errno != EAGAIN && errno != EINTR)
			goto out;
		if (now_ms() >= deadline) {
			o = TIMEOUT;
			goto out;
		}
		usleep(1000);
	}
	while (sent < len) {
		ssize_t w = send(fd, p->request + sent, len - sent, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno != EAGAIN && errno != EINTR)
				goto out;
			r = wait_fd(fd, POLLOUT, deadline);
			if (r <= 0) {
				o = r ? ERROR : TIMEOUT;
				goto out;
			}
			continue;
		}
		sent += (size_t)w;
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n == 0)
			break;
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				goto out;
			r = wait_fd(fd, POLLIN, deadline);
			if (r <= 0) {
				o = r ? ERROR : TIMEOUT;
				goto out;
			}
			continue;
		}
		if (got + 1 < headlen) {
			size_t c = (size_t)n < headlen - 1 - got ? (size_t)n : headlen - 1 - got;

			memcpy(head + got, buf, c);
			head[got + c] = 0;
		}
		got += (size_t)n;
	}
	*total = got;
	o = OK;
out:
	close(fd);
	return o;
}

static enum outcome run_status(struct probe *p, double deadline)
{
	char head[64] = "";
	size_t total = 0;
	enum outcome o = exchange(p, deadline, head, sizeof(head), &total);

	/* the answer is one JSON line */
	return o == OK && head[0] != '{' ? ERROR : o;
}

static enum outcome run_metrics(struct probe *p, double deadline)
{
	char head[64] = "";
	size_t total = 0;
	enum outcome o = exchange(p, deadline, head, sizeof(head), &total);

	return o == OK && (strncmp(head, "HTTP/1.", 7) || strncmp(head + 8, " 200", 4)) ?
		       ERROR : o;
}

static void record(struct probe *p, double start, double ms, enum outcome o)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 4096;
		struct sample *v = realloc(p->v, cap * sizeof(*v));

		if (!v) {
			p->failed = 1;
			return;
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = (struct sample){ .start = start, .ms = ms, .o = o };
}

static void *loop(void *arg)
{
	struct probe *p = arg;
	double next = 0;

	while (!stop && next < end_ms) {
		double start, t;
		enum outcome o;

		t = now_ms();
		if (t < next) {
			struct timespec d = { 0, (long)((next - t) * 1e6) };

			nanosleep(&d, NULL);
			continue; /* stop or the end may have come */
		}
		start = now_ms();
		o = p->run(p, start + TIMEOUT_MS);
		t = now_ms();
		record(p, start, t - start, o);
		next = start + interval_ms;
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double rank(const double *v, size_t n, double q)
{
	size_t k;

	if (!n)
		return 0;
	k = (size_t)(q * (double)n + 0.999999999);
	if (k < 1)
		k = 1;
	return v[k > n ? n - 1 : k - 1];
}

static void report(const struct probe *p, double t_end)
{
	size_t i, ok = 0, timeouts = 0, errors = 0;
	double *lat = malloc((p->n ? p->n : 1) * sizeof(double));
	double last = 0, stall = 0;

	if (!lat) {
		perror("ctlprobe");
		exit(1);
	}
	for (i = 0; i < p->n; i++) {
		const struct sample *s = &p->v[i];

		if (s->o == OK) {
			double done = s->start + s->ms;

			lat[ok++] = s->ms;
			if (done - last > stall)
				stall = done - last;
			last = done;
		} else if (s->o == TIMEOUT) {
			timeouts++;
		} else {
			errors++;
		}
	}
	if (t_end - last > stall)
		stall = t_end - last;
	qsort(lat, ok, sizeof(double), cmp_double);
	printf("%s n=%zu ok=%zu timeout=%zu error=%zu p50=%.3f p99=%.3f max=%.3f stall=%.3f\n",
	       p->name, p->n, ok, timeouts, errors, rank(lat, ok, 0.5), rank(lat, ok, 0.99),
	       ok ? lat[ok - 1] : 0.0, stall);
	free(lat);
}

static int positive(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return !errno && *s && !*end && *v > 0 ? 0 : -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: ctlprobe [-o FILE] SOCKET HOST:PORT SECONDS INTERVAL_MS\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct probe ps[2] = { { .name = "status", .run = run_status },
			       { .name = "metrics", .run = run_metrics } };
	struct sockaddr_un *sun = (struct sockaddr_un *)&ps[0].addr;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	const char *out_path = NULL;
	char host[256], *colon;
	pthread_t th[2];
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec ts;
	double secs, t_end;
	int c, i, err;

	while ((c = getopt(argc, argv, "o:h")) != -1) {
		if (c == 'o')
			out_path = optarg;
		else
			usage();
	}
	if (argc - optind != 4 || positive(argv[optind + 2], &secs) ||
	    positive(argv[optind + 3], &interval_ms))
		usage();

	if (strlen(argv[optind]) >= sizeof(sun->sun_path)) {
		fprintf(stderr, "ctlprobe: %s: path too long\n", argv[optind]);
		return 2;
	}
	sun->sun_family = AF_UNIX;
	strcpy(sun->sun_path, argv[optind]);
	ps[0].addrlen = sizeof(*sun);
	snprintf(ps[0].request, sizeof(ps[0].request), "status\n");

	/* HOST:PORT or [V6]:PORT, numeric */
	snprintf(host, sizeof(host), "%s", argv[optind + 1]);
	colon = strrchr(host, ':');
	if (!colon)
		usage();
	*colon = 0;
	if (host[0] == '[' && colon > host + 1 && colon[-1] == ']') {
		colon[-1] = 0;
		memmove(host, host + 1, strlen(host));
	}
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	err = getaddrinfo(host, colon + 1, &hints, &ai);
	if (err) {
		fprintf(stderr, "ctlprobe: %s: %s\n", argv[optind + 1], gai_strerror(err));
		return 2;
	}
	memcpy(&ps[1].addr, ai->ai_addr, ai->ai_addrlen);
	ps[1].addrlen = ai->ai_addrlen;
	freeaddrinfo(ai);
	snprintf(ps[1].request, sizeof(ps[1].request),
		 "GET /metrics HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n",
		 argv[optind + 1]);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
	end_ms = secs * 1e3;
	for (i = 0; i < 2; i++) {
		err = pthread_create(&th[i], NULL, loop, &ps[i]);
		if (err) {
			fprintf(stderr, "ctlprobe: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	t_end = now_ms();
	for (i = 0; i < 2; i++) {
		if (ps[i].failed) {
			fprintf(stderr, "ctlprobe: out of memory\n");
			return 1;
		}
		report(&ps[i], t_end);
	}
	if (out_path) {
		FILE *f = fopen(out_path, "w");
		size_t j;

		if (!f) {
			perror(out_path);
			return 1;
		}
		for (i = 0; i < 2; i++)
			for (j = 0; j < ps[i].n; j++)
				fprintf(f, "%s %.3f %.3f %s\n", ps[i].name, ps[i].v[j].start,
					ps[i].v[j].ms, outcome_name[ps[i].v[j].o]);
		if (fclose(f)) {
			perror(out_path);
			return 1;
		}
	}
	return fflush(stdout) ? 1 : 0;
}
