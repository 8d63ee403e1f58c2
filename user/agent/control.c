// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's control socket (`bloomgate status`, `stats`, `check`,
 * `events`, `reload`) and its client (bg_agent_ask()). Reads are answered
 * to any peer that could connect (root, and the group bloomgate when the
 * socket is theirs: control_perms()); a write (reload) only to a peer
 * whose credentials (SO_PEERCRED, read at accept) say uid 0. The server is part of the loop: every
 * client socket is non-blocking and in the epoll set, so a client that
 * sends nothing, or reads its answer slowly, holds up nobody (a second
 * for its request line, five for reading the answer), and a user other
 * than root holds CLIENTS_PER_UID connections at most (CLIENTS_MAX all
 * such users together; the followers of the events have bounds of their
 * own, events.c): past them a connection is told why and closed, so
 * root always gets in and is answered. `status` is
 * answered at once. `reload` re-reads the config, fetches every source
 * (waiting FETCH_WAIT at most: a slow list is taken by a later rebuild),
 * and is answered when the rebuild it caused is done (or at once when
 * nothing changed), with what changed: the client waits, the loop goes on.
 * SIGHUP is the same reload without a client (systemd hears READY=1).
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
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
#include "agent/report.h"
#include "agent/request.h"
#include "core/clock.h"
#include "core/counters.h"
#include "core/record.h"
#include "kern/swap.h"

#define CLIENT_READ_S 1.0
#define CLIENT_WRITE_S 5.0
/* Connections at once from peers other than root (followers of the
 * events included), in all and from one user: what a member of the group
 * can hold of the agent's descriptors and memory. Root's are not bounded
 * (root reaches everything anyway), so root always gets in. */
#define CLIENTS_MAX 256
#define CLIENTS_PER_UID 64
/* Connections taken from the listening socket in one wakeup: one peer
 * connecting in a loop does not hold the loop. */
#define ACCEPT_BATCH 64
/* One line in the log a second at most of each kind a peer other than
 * root can cause (log_limited()). */
#define PEER_LOG_S 1.0

/*
 * The socket's group and mode: 0660, group bloomgate, when that group
 * exists and the socket can be given to it; else 0600, root only, and
 * said once in the log. chown() to a group the process is not in needs
 * CAP_CHOWN, which the systemd unit does not grant: the unit makes the
 * agent a member instead (SupplementaryGroups=bloomgate), and a member
 * may give its own file to its group. Who may write is judged per
 * request from the peer's credentials (client_line()), not from this.
 */
/* path, never NULL to the compiler's eyes (-O1 with the sanitizers
 * thinks a path chown(2) was given might be) */
static const char *a_path(const char *path)
{
	return path ? path : "?";
}

static int control_perms(const char *path)
{
	struct group *gr;
	struct stat st;
	char dir[PATH_MAX], *p;

	errno = 0;
	gr = getgrnam(BG_READ_GROUP);
	if (!gr) {
		agent_log("control socket %s: root only (0600): %s", path,
			  errno ? strerror(errno) : "no group " BG_READ_GROUP
			  " on this system (create it to let its members read)");
		return chmod(path, 0600) ? -errno : 0;
	}
	if (chown(path, (uid_t)-1, gr->gr_gid)) {
		char why[128];

		snprintf(why, sizeof(why), "%s", strerror(errno));
		agent_log("control socket %s: root only (0600): cannot give it to group "
			  BG_READ_GROUP " (gid %u): %s (the agent needs to be a member, "
			  "SupplementaryGroups=" BG_READ_GROUP ", or CAP_CHOWN)", a_path(path),
			  (unsigned)gr->gr_gid, why);
		return chmod(path, 0600) ? -errno : 0;
	}
	if (chmod(path, 0660))
		return -errno;
	/* its directory must let the group through */
	snprintf(dir, sizeof(dir), "%s", path);
	p = strrchr(dir, '/');
	if (p && p != dir)
		*p = 0;
	/* its directory must let the group through: 0755, as the unit's
	 * RuntimeDirectoryMode (a `bloomgate load` before any agent made
	 * it 0700 once) */
	if (!stat(dir, &st) && !(st.st_mode & S_IXOTH) &&
	    !(st.st_gid == gr->gr_gid && (st.st_mode & S_IXGRP))) {
		if (chmod(dir, (st.st_mode & 07777) | 0755))
			agent_log("control socket %s: group " BG_READ_GROUP " cannot reach "
				  "it: %s is mode %04o: %s", path, dir,
				  (unsigned)(st.st_mode & 07777), strerror(errno));
		else
			agent_log("control socket %s: %s made 0755 (was %04o) for group "
				  BG_READ_GROUP, path, dir, (unsigned)(st.st_mode & 07777));
	}
	return 0;
}

int open_control(struct agent *a)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t um;
	int fd, err;

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
	um = umask(0077); /* root only until its group and mode are set */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64)) {
		int err = -errno;

		umask(um);
		close(fd);
		return err;
	}
	umask(um);
	/* a socket's mode is 0777 less the umask: 0700 so far; 0660 for
	 * the group or 0600 (no one executes a socket) */
	err = control_perms(a->ctl_path);
	if (err) {
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
	if (c->stream)
		events_unfollow(a, c);
	if (c->fd >= 0) {
		close(c->fd); /* leaves the epoll set with it */
		pthread_mutex_lock(&a->lock);
		a->ctl.connections--;
		pthread_mutex_unlock(&a->lock);
		if (c->uid != 0)
			a->ctl_clients--;
	}
	free(c->out);
	desc_free(&c->before);
	free(c);
}

void client_drop(struct agent *a, struct client *c)
{
	client_free(a, c);
}

int client_want(struct agent *a, struct client *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = c->fd };

	if (epoll_ctl(a->epfd, EPOLL_CTL_MOD, c->fd, &ev))
		return -errno;
	c->want_out = !!(events & EPOLLOUT);
	return 0;
}

/* Sends what c has pending, as far as the socket takes it: 1 all sent, 0
 * the socket is full (EPOLLOUT says when it can go on), -1 the peer went. */
static int client_send(struct client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return -1;
		c->out_off += (size_t)n;
	}
	return 1;
}

static void client_flush(struct agent *a, struct client *c)
{
	if (client_send(c))
		client_free(a, c); /* answered, or gone */
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
	c->deadline = bg_mono() + CLIENT_WRITE_S;
	/* a waiting reload left the set; a reader is in it for input */
	if (epoll_ctl(a->epfd, EPOLL_CTL_MOD, c->fd, &ev) &&
	    epoll_ctl(a->epfd, EPOLL_CTL_ADD, c->fd, &ev)) {
		client_free(a, c);
		return;
	}
	client_flush(a, c);
}

/* A line of the log about what a peer did, one a second at most of a
 * kind (a peer that is not root can connect again and again): those held
 * back are counted in the next line of that kind. */
struct log_limit {
	double last; /* monotonic */
	uint64_t held;
};

static void log_limited(struct log_limit *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void log_limited(struct log_limit *l, const char *fmt, ...)
{
	double now = bg_mono();
	char line[1024];
	va_list ap;

	if (l->last && now - l->last < PEER_LOG_S) {
		l->held++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (l->held)
		agent_log("%s (and %llu more since the last such line)", line,
			  (unsigned long long)l->held);
	else
		agent_log("%s", line);
	l->last = now;
	l->held = 0;
}

static void log_refusal(struct log_limit *l, const struct ucred *cred, const char *what,
			const char *why)
{
	log_limited(l, "control socket: refused %s (peer uid %d, pid %d): %s", what,
		    (int)cred->uid, (int)cred->pid, why);
}

/*
 * A connection past the bounds (CLIENTS_MAX, CLIENTS_PER_UID) gets one line
 * saying why and is closed at once. 1 when refused.
 */
static int client_refused(struct agent *a, int fd, const struct ucred *cred)
{
	static struct log_limit lim;
	const struct client *c;
	char msg[256];
	size_t mine = 0;
	int n;

	if (cred->uid == 0)
		return 0;
	for (c = a->clients; c; c = c->next)
		mine += c->fd >= 0 && c->uid == cred->uid;
	if (a->ctl_clients < CLIENTS_MAX && mine < CLIENTS_PER_UID)
		return 0;
	if (mine >= CLIENTS_PER_UID)
		n = snprintf(msg, sizeof(msg), "error: too many connections from uid %d: "
			     "%d at once (one user's bound)\n", (int)cred->uid,
			     CLIENTS_PER_UID);
	else
		n = snprintf(msg, sizeof(msg), "error: too many connections to the agent: "
			     "%d at once from users other than root\n", CLIENTS_MAX);
	send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	pthread_mutex_lock(&a->lock);
	a->ctl.refused_connections++;
	pthread_mutex_unlock(&a->lock);
	msg[n - 1] = 0;
	log_refusal(&lim, cred, "a connection", msg + 7);
	return 1;
}

void on_control(struct agent *a)
{
	struct ucred cred;
	socklen_t clen;
	struct client *c;
	int fd, i;

	for (i = 0; i < ACCEPT_BATCH; i++) {
		fd = accept4(a->ctlfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			break;
		/* who asks, from the kernel: what it may ask (client_line())
		 * and how many connections it may hold */
		clen = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen)) {
			cred.uid = (uid_t)-1;
			cred.pid = 0;
		}
		if (client_refused(a, fd, &cred)) {
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c || agent_add_fd(a, fd, EPOLLRDHUP)) {
			free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->uid = cred.uid;
		c->pid = cred.pid;
		c->deadline = bg_mono() + CLIENT_READ_S;
		c->next = a->clients;
		a->clients = c;
		pthread_mutex_lock(&a->lock);
		a->ctl.connections++;
		pthread_mutex_unlock(&a->lock);
		if (c->uid != 0)
			a->ctl_clients++;
	}
}

/* A report (agent/report.h) for a peer: the state opened here. */
struct report_req {
	struct agent *a;
	int status; /* 1: the datapath's status, 0: check */
	char *args;
};

static int run_report(void *ctx, FILE *out, FILE *errf)
{
	struct report_req *r = ctx;
	char *argv[BG_REQ_LINE_MAX / 2], *p, *save = NULL;
	struct bg_state st;
	int n = 0, ret = bg_state_open(&st, 0);

	if (ret)
		return bg_report_open_failed(ret, r->status, out, errf);
	if (r->status) {
		ret = bg_report_datapath(&st, out, errf);
	} else {
		for (p = strtok_r(r->args, " ", &save); p && n < (int)(sizeof(argv) / sizeof(argv[0]));
		     p = strtok_r(NULL, " ", &save))
			argv[n++] = p;
		ret = bg_report_check(&st, n, argv, out, errf);
	}
	bg_state_close(&st);
	return ret;
}

static void answer_json(struct agent *a, struct client *c, struct json_object *o)
{
	client_answer(a, c, o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) :
				"error: out of memory");
	json_object_put(o);
}

static void client_line(struct agent *a, struct client *c)
{
	struct report_req rr = { .a = a };
	struct json_object *o;
	const char *args;
	enum bg_req req;

	c->in[c->len] = 0;
	c->in[strcspn(c->in, "\r\n")] = 0;
	req = bg_req_parse(c->in, &args);
	/* writes: root only, by the peer's credentials (whatever the
	 * socket's mode let connect) */
	if (bg_req_writes(req) && c->uid != 0) {
		static struct log_limit lim;
		char msg[128];

		log_limited(&lim, "%s refused on the control socket: needs root (peer uid %d, "
			    "pid %d)", bg_req_name(req), (int)c->uid, (int)c->pid);
		snprintf(msg, sizeof(msg), "error: %s needs root (peer uid %d)",
			 bg_req_name(req), (int)c->uid);
		client_answer(a, c, msg);
		return;
	}
	switch (req) {
	case BG_REQ_STATUS:
		o = status_json(a);
		if (o && !strcmp(args, "full")) {
			/* the datapath's part too, for a peer that cannot
			 * open the pins (`bloomgate status` not as root) */
			rr.status = 1;
			json_object_object_add(o, "datapath", bg_report_capture(run_report, &rr));
		} else if (*args) {
			json_object_put(o);
			client_answer(a, c, "error: status takes nothing, or full");
			return;
		}
		answer_json(a, c, o);
		break;
	case BG_REQ_STATS: {
		struct bg_counters cnt;
		struct bg_state st;
		int ret = bg_state_open(&st, 0);

		if (!ret) {
			ret = bg_counters_read(st.counters_fd, &cnt);
			bg_state_close(&st);
		}
		if (ret == -ENOENT)
			client_answer(a, c, "error: bloomgate is not attached to any interface");
		else if (ret) {
			char msg[128];

			snprintf(msg, sizeof(msg), "error: cannot read counters: %s",
				 strerror(-ret));
			client_answer(a, c, msg);
		} else {
			answer_json(a, c, bg_counters_json(&cnt));
		}
		break;
	}
	case BG_REQ_CHECK:
		rr.args = (char *)args; /* in c->in, ours to cut */
		answer_json(a, c, bg_report_capture(run_report, &rr));
		break;
	case BG_REQ_EVENTS: {
		char why[256];

		if (events_follow(a, c, why, sizeof(why))) {
			static struct log_limit lim;
			struct ucred cred = { .pid = c->pid, .uid = c->uid };
			char msg[300];

			log_refusal(&lim, &cred, "a follower of the events", why);
			snprintf(msg, sizeof(msg), "error: %s", why);
			client_answer(a, c, msg);
		} else {
			static struct log_limit lim;

			log_limited(&lim, "events: followed on the control socket (peer "
				    "uid %d, pid %d)", (int)c->uid, (int)c->pid);
		}
		break;
	}
	case BG_REQ_RELOAD:
		agent_log("reload asked on the control socket");
		/* no more input: the client only waits for the answer (and a
		 * hung-up socket must not wake the loop again and again) */
		epoll_ctl(a->epfd, EPOLL_CTL_DEL, c->fd, NULL);
		start_reload(a, c->fd);
		break;
	default: {
		char msg[sizeof(c->in) + 64];

		snprintf(msg, sizeof(msg), "error: unknown command '%.*s' (%s)", 200, c->in,
			 bg_req_list());
		client_answer(a, c, msg);
	}
	}
}

int on_client(struct agent *a, int fd, uint32_t events)
{
	struct client *c = client_of(a, fd);
	ssize_t n;

	if (!c)
		return 0;
	if (c->stream) {
		if (events & (EPOLLHUP | EPOLLERR))
			client_free(a, c); /* the peer went */
		else
			events_writable(a, c);
		return 1;
	}
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
	double now = bg_mono();

	for (c = a->clients; c; c = next) {
		next = c->next;
		if (c->stream && c->deadline && c->deadline <= now)
			events_expire(a, c, now); /* behind for too long */
		else if (!c->reload && c->deadline && c->deadline <= now) {
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

/* ---- what status and the metrics say -------------------------------------- */

void control_metrics(const struct agent *a, struct bg_metrics_control *m)
{
	*m = a->ctl;
}

struct json_object *control_json(struct agent *a)
{
	struct json_object *o = json_object_new_object();
	struct bg_metrics_control m;

	if (!o)
		return NULL;
	pthread_mutex_lock(&a->lock);
	m = a->ctl;
	pthread_mutex_unlock(&a->lock);
	json_object_object_add(o, "followers", json_object_new_int64((int64_t)m.followers));
	json_object_object_add(o, "connections", json_object_new_int64((int64_t)m.connections));
	json_object_object_add(o, "events_unsent", json_object_new_int64((int64_t)m.events_unsent));
	json_object_object_add(o, "followers_cut", json_object_new_int64((int64_t)m.followers_cut));
	json_object_object_add(o, "refused_followers",
			       json_object_new_int64((int64_t)m.refused_followers));
	json_object_object_add(o, "refused_connections",
			       json_object_new_int64((int64_t)m.refused_connections));
	return o;
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
	a->reload_seen = bg_wall();
	c->reload = 1;
	c->wait_until = bg_mono() + FETCH_WAIT;
	/* every source now; the rebuild when each was fetched once more */
	mark_all(a);
	run_due(a, 0);
}

void reloads_step(struct agent *a)
{
	int pending = marks_pending(a);
	double now = bg_mono();
	struct client *c;

	for (c = a->clients; c; c = c->next)
		if (c->reload == 1 && !a->ifaces_busy &&
		    (!pending || now >= c->wait_until)) {
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
	int answered = 0;

	for (c = a->clients; c; c = next) {
		next = c->next;
		if (c->reload != 2 || (seq && c->seq > seq))
			continue;
		answered = 1;
		if (a->generation == c->gen_before) {
			snprintf(what, sizeof(what), "%s", a->ifaces_said[0] ?
				 "the filter unchanged" : "nothing changed");
		} else {
			struct desc none = { 0 };

			desc_diff(c->have_before ? &c->before : &none, &a->live,
				  what, sizeof(what));
		}
		if (a->ifaces_said[0])
			snprintf(what + strlen(what), sizeof(what) - strlen(what),
				 "; %s", a->ifaces_said);
		if (failure && !a->filter_id)
			snprintf(text, sizeof(text), "error: %s; no filter of this "
				 "agent's runs yet", failure);
		else if (failure)
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
	/* said once: the next reload says what it changes */
	if (answered)
		a->ifaces_said[0] = 0;
}

/* ---- the client ----------------------------------------------------------- */

/* Connected to the agent's socket, request cmd sent (one line, the
 * writing side shut): the socket, or -errno. */
static int agent_request(const char *cmd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[PATH_MAX], buf[2048];
	int fd, ret;

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
	if ((size_t)snprintf(buf, sizeof(buf), "%s\n", cmd) >= sizeof(buf)) {
		close(fd);
		return -E2BIG;
	}
	/* one write, no SIGPIPE: an agent that answers and closes first must
	 * not kill the client */
	if (send(fd, buf, strlen(buf), MSG_NOSIGNAL) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	shutdown(fd, SHUT_WR);
	return fd;
}

int bg_agent_ask(const char *cmd, double timeout, FILE *out)
{
	double t0;
	char buf[4096];
	ssize_t n;
	int fd, ret = 0;

	fd = agent_request(cmd);
	if (fd < 0)
		return fd;
	t0 = bg_mono();
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left;

		left = timeout - (bg_mono() - t0);
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

int bg_agent_follow(const char *cmd, double timeout, volatile sig_atomic_t *stop,
		    int (*line)(void *ctx, const char *l), void *ctx)
{
	double t0;
	char buf[8192];
	size_t have = 0;
	ssize_t n;
	int fd, ret = 0;

	fd = agent_request(cmd);
	if (fd < 0)
		return fd;
	t0 = bg_mono();
	while (!*stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char *nl;

		if (timeout > 0 && bg_mono() - t0 >= timeout)
			break;
		/* in slices: a signal's *stop and the timeout are seen */
		n = poll(&p, 1, 100);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (!n)
			continue;
		n = recv(fd, buf + have, sizeof(buf) - 1 - have, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EPIPE; /* the agent closed it */
			break;
		}
		have += (size_t)n;
		buf[have] = 0;
		while ((nl = memchr(buf, '\n', have))) {
			*nl = 0;
			if (line(ctx, buf)) {
				close(fd);
				return 0;
			}
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have);
			buf[have] = 0;
		}
		if (have == sizeof(buf) - 1)
			have = 0; /* no line is this long: not ours to read */
	}
	close(fd);
	return ret;
}
