// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's control socket (`bloomgate status`, `bloomgate reload`) and
 * its client (bg_agent_ask()). The server is part of the loop: every
 * client socket is non-blocking and in the epoll set, so a client that
 * sends nothing, or reads its answer slowly, holds up nobody (a second
 * for its request line, five for reading the answer). `status` is
 * answered at once. `reload` re-reads the config, fetches every source
 * (waiting FETCH_WAIT at most: a slow list is taken by a later rebuild),
 * and is answered when the rebuild it caused is done (or at once when
 * nothing changed), with what changed: the client waits, the loop goes on.
 * SIGHUP is the same reload without a client (systemd hears READY=1).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <systemd/sd-daemon.h>

#include "agent/agent.h"
#include "agent/agent_priv.h"
#include "core/record.h"

#define CLIENT_READ_S 1.0
#define CLIENT_WRITE_S 5.0

int open_control(struct agent *a)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t um;
	int fd;

	bg_run_path(a->ctl_path, sizeof(a->ctl_path), ".sock");
	if (agent_mkdir_p(BG_RECORD_DIR, 0755))
		return -errno;
	if (strlen(a->ctl_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, a->ctl_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* a socket a killed agent left (no other agent runs: the instance
	 * lock is ours) */
	unlink(a->ctl_path);
	um = umask(0077); /* 0600: only root asks the agent */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64)) {
		int err = -errno;

		umask(um);
		close(fd);
		return err;
	}
	umask(um);
	/* a socket's mode is 0777 less the umask: 0700 so far; 0600 as the
	 * README says (no one executes a socket) */
	if (chmod(a->ctl_path, 0600)) {
		int err = -errno;

		close(fd);
		return err;
	}
	a->ctlfd = fd;
	return 0;
}

static struct client *client_of(struct agent *a, int fd)
{
	struct client *c;

	for (c = a->clients; c; c = c->next)
		if (c->fd == fd)
			return c;
	return NULL;
}

static void client_free(struct agent *a, struct client *c)
{
	struct client **p;

	for (p = &a->clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	if (c->fd >= 0)
		close(c->fd); /* leaves the epoll set with it */
	free(c->out);
	desc_free(&c->before);
	free(c);
}

static void client_flush(struct agent *a, struct client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return; /* EPOLLOUT says when it can go on */
		if (n <= 0)
			break;
		c->out_off += (size_t)n;
	}
	client_free(a, c);
}

/* The answer, one line; sent as the socket takes it. */
static void client_answer(struct agent *a, struct client *c, const char *text)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.fd = c->fd };
	size_t n = strlen(text);

	if (c->fd < 0) {
		client_free(a, c);
		return;
	}
	c->out = malloc(n + 2);
	if (!c->out) {
		client_free(a, c);
		return;
	}
	memcpy(c->out, text, n);
	c->out[n++] = '\n';
	c->out[n] = 0;
	c->out_len = n;
	c->out_off = 0;
	c->deadline = agent_mono() + CLIENT_WRITE_S;
	/* a waiting reload left the set; a reader is in it for input */
	if (epoll_ctl(a->epfd, EPOLL_CTL_MOD, c->fd, &ev) &&
	    epoll_ctl(a->epfd, EPOLL_CTL_ADD, c->fd, &ev)) {
		client_free(a, c);
		return;
	}
	client_flush(a, c);
}

void on_control(struct agent *a)
{
	struct client *c;
	int fd;

	while ((fd = accept4(a->ctlfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		c = calloc(1, sizeof(*c));
		if (!c || agent_add_fd(a, fd, EPOLLRDHUP)) {
			free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->deadline = agent_mono() + CLIENT_READ_S;
		c->next = a->clients;
		a->clients = c;
	}
}

static void client_line(struct agent *a, struct client *c)
{
	struct json_object *o;

	c->in[c->len] = 0;
	c->in[strcspn(c->in, "\r\n")] = 0;
	if (!strcmp(c->in, "status")) {
		o = status_json(a);
		client_answer(a, c, o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "{}");
		json_object_put(o);
	} else if (!strcmp(c->in, "reload")) {
		agent_log("reload asked on the control socket");
		/* no more input: the client only waits for the answer (and a
		 * hung-up socket must not wake the loop again and again) */
		epoll_ctl(a->epfd, EPOLL_CTL_DEL, c->fd, NULL);
		start_reload(a, c->fd);
	} else {
		char msg[sizeof(c->in) + 64];

		snprintf(msg, sizeof(msg), "error: unknown command '%s' (reload, status)", c->in);
		client_answer(a, c, msg);
	}
}

int on_client(struct agent *a, int fd, uint32_t events)
{
	struct client *c = client_of(a, fd);
	ssize_t n;

	if (!c)
		return 0;
	if (c->out) {
		client_flush(a, c);
		return 1;
	}
	if (c->reload)
		return 1;
	/* one line, possibly in several segments */
	while (c->len < sizeof(c->in) - 1) {
		n = recv(fd, c->in + c->len, sizeof(c->in) - 1 - c->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
				break;
			return 1;
		}
		if (n <= 0)
			break;
		c->len += (size_t)n;
		if (memchr(c->in, '\n', c->len))
			break;
	}
	client_line(a, c);
	return 1;
}

double clients_deadline(const struct agent *a)
{
	const struct client *c;
	double t = 0;

	for (c = a->clients; c; c = c->next) {
		if (!c->reload && c->deadline && (!t || c->deadline < t))
			t = c->deadline;
		if (c->reload == 1 && (!t || c->wait_until < t))
			t = c->wait_until;
	}
	return t;
}

void clients_expire(struct agent *a)
{
	struct client *c, *next;
	double now = agent_mono();

	for (c = a->clients; c; c = next) {
		next = c->next;
		if (!c->reload && c->deadline && c->deadline <= now) {
			if (c->out)
				client_free(a, c); /* it does not read */
			else
				client_line(a, c); /* what it sent, as is */
		}
	}
}

void clients_close(struct agent *a)
{
	while (a->clients)
		client_free(a, a->clients);
}

/* ---- reloads ------------------------------------------------------------- */

void start_reload(struct agent *a, int fd)
{
	struct client *c = fd >= 0 ? client_of(a, fd) : calloc(1, sizeof(*c));
	char err[512], text[700];

	if (!c)
		return;
	if (fd < 0) {
		c->fd = -1;
		c->next = a->clients;
		a->clients = c;
	}
	c->gen_before = a->generation;
	c->have_before = a->have_live && !desc_copy(&c->before, &a->live);
	if (reload_config(a, err, sizeof(err))) {
		if (fd < 0) {
			sd_notify(0, "READY=1");
			client_free(a, c);
		} else {
			/* the file:line, for `bloomgate reload` (and so
			 * `systemctl reload`) to print and fail on */
			snprintf(text, sizeof(text), "error: the config is invalid: "
				 "%s; the agent runs on as it was", err);
			client_answer(a, c, text);
		}
		return;
	}
	a->reload_seen = agent_wall();
	c->reload = 1;
	c->wait_until = agent_mono() + FETCH_WAIT;
	/* every source now; the rebuild when each was fetched once more */
	mark_all(a);
	run_due(a, 0);
}

void reloads_step(struct agent *a)
{
	int pending = marks_pending(a);
	double now = agent_mono();
	struct client *c;

	for (c = a->clients; c; c = c->next)
		if (c->reload == 1 && (!pending || now >= c->wait_until)) {
			/* the next rebuild to start has every change the
			 * reload brought, config and copies alike */
			c->reload = 2;
			c->seq = a->rb_started + 1;
			want_rebuild(a, 1);
		}
}

void reloads_answer(struct agent *a, uint64_t seq, const char *failure)
{
	struct client *c, *next;
	char what[1024], text[1200];

	for (c = a->clients; c; c = next) {
		next = c->next;
		if (c->reload != 2 || (seq && c->seq > seq))
			continue;
		if (a->generation == c->gen_before) {
			snprintf(what, sizeof(what), "nothing changed");
		} else {
			struct desc none = { 0 };

			desc_diff(c->have_before ? &c->before : &none, &a->live,
				  what, sizeof(what));
		}
		if (failure)
			snprintf(text, sizeof(text), "error: %s; the running filter "
				 "is unchanged (generation %llu)", failure,
				 (unsigned long long)a->generation);
		else
			snprintf(text, sizeof(text), "ok: generation %llu (%s)",
				 (unsigned long long)a->generation, what);
		agent_log("reload done: %s", text);
		if (c->fd < 0) {
			sd_notify(0, "READY=1");
			client_free(a, c);
		} else {
			c->reload = 0;
			client_answer(a, c, text);
		}
	}
}

/* ---- the client ----------------------------------------------------------- */

int bg_agent_ask(const char *cmd, double timeout, FILE *out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timespec t0, t;
	char path[PATH_MAX], buf[4096];
	ssize_t n;
	int fd, ret = 0;

	bg_run_path(path, sizeof(path), ".sock");
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	snprintf(buf, sizeof(buf), "%s\n", cmd);
	/* one write, no SIGPIPE: an agent that answers and closes first must
	 * not kill the client */
	if (send(fd, buf, strlen(buf), MSG_NOSIGNAL) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	shutdown(fd, SHUT_WR);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = timeout - ((double)(t.tv_sec - t0.tv_sec) +
				  (double)(t.tv_nsec - t0.tv_nsec) / 1e9);
		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		n = poll(&p, 1, (int)(left * 1000) + 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -ETIMEDOUT;
			break;
		}
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : 0;
			break;
		}
		fwrite(buf, 1, (size_t)n, out);
	}
	close(fd);
	return ret;
}
