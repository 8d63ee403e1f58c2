// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The HTTP server that serves the agent's metrics (user/agent/metrics.h):
 * libmicrohttpd on one thread, GET /metrics answered with what the
 * caller's render() writes (metrics.c: the text exposition), slow clients
 * cut off by a reaper thread.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "core/clock.h"
#include "core/url.h"
#include "agent/metrics.h"

/*
 * Slow clients. A scrape is one short request: a client that has not sent
 * its whole request within BG_METRICS_DEADLINE_S of connecting is cut off,
 * however it trickles bytes (libmicrohttpd's own timeout is an idle one,
 * reset by every byte). Connections are tracked from libmicrohttpd's
 * connection notifications, and a reaper thread shuts the late ones down
 * (shutdown(2): libmicrohttpd then sees the socket fail and closes it
 * itself). Up to BG_METRICS_CONN_MAX connections at once, at most
 * BG_METRICS_PER_IP_MAX from one address: a scraper on another address
 * always finds room, and one on the same address finds it within the
 * deadline.
 */
#define BG_METRICS_CONN_MAX 256
#define BG_METRICS_PER_IP_MAX 128
#define BG_METRICS_DEADLINE_S 5.0
#define BG_METRICS_IDLE_S 3

struct conn_slot {
	int fd; /* -1: free */
	int answered; /* the request was read: it is being answered */
	double since; /* monotonic */
};

struct bg_metrics_server {
	struct MHD_Daemon *mhd;
	int (*render)(void *ctx, FILE *out);
	void *ctx;
	int port;
	/* the connections, for the reaper */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct conn_slot conns[BG_METRICS_CONN_MAX + 8];
	pthread_t reaper;
	int reaper_on, stopping;
	uint64_t cut; /* connections cut off at the deadline */
};

/* One slot per connection, found by socket: notify() and on_request()
 * run on the server's one thread, the reaper on its own. */
static struct conn_slot *slot_of(struct bg_metrics_server *s, int fd)
{
	size_t i;

	for (i = 0; i < sizeof(s->conns) / sizeof(s->conns[0]); i++)
		if (s->conns[i].fd == fd)
			return &s->conns[i];
	return NULL;
}

static void notify(void *cls, struct MHD_Connection *conn, void **socket_ctx,
		   enum MHD_ConnectionNotificationCode code)
{
	struct bg_metrics_server *s = cls;
	const union MHD_ConnectionInfo *ci;
	struct conn_slot *c;
	int fd;

	(void)socket_ctx;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci)
		return;
	fd = ci->connect_fd;
	pthread_mutex_lock(&s->lock);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		c = slot_of(s, -1);
		if (c) {
			c->fd = fd;
			c->answered = 0;
			c->since = bg_mono();
		}
	} else if ((c = slot_of(s, fd))) {
		/* before libmicrohttpd closes the socket: the reaper never
		 * touches a number that may be reused */
		c->fd = -1;
	}
	pthread_mutex_unlock(&s->lock);
}

static void mark_answered(struct bg_metrics_server *s, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct conn_slot *c;

	if (!ci)
		return;
	pthread_mutex_lock(&s->lock);
	c = slot_of(s, ci->connect_fd);
	if (c) {
		/* the next request on a kept-alive connection gets a deadline
		 * of its own */
		c->answered = 1;
		c->since = bg_mono();
	}
	pthread_mutex_unlock(&s->lock);
}

static void *reap(void *arg)
{
	struct bg_metrics_server *s = arg;
	struct timespec ts;
	size_t i;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		double now = bg_mono();

		for (i = 0; i < sizeof(s->conns) / sizeof(s->conns[0]); i++) {
			struct conn_slot *c = &s->conns[i];

			if (c->fd < 0 || now - c->since < BG_METRICS_DEADLINE_S)
				continue;
			if (!c->answered) {
				shutdown(c->fd, SHUT_RDWR);
				s->cut++;
			}
			c->since = now; /* once per deadline */
		}
		bg_deadline(&ts, 0.25);
		pthread_cond_timedwait(&s->wake, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status,
			     const char *text)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(text), (void *)text,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_size, void **req_cls)
{
	struct bg_metrics_server *s = cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;
	int err;

	(void)version;
	(void)upload_data;
	(void)upload_size;
	(void)req_cls;
	/* Answered on the first call, with the headers: a scrape has no
	 * body, and a request with one is refused before it is read. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			     "only GET and HEAD\n");
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n");

	out = open_memstream(&buf, &len);
	if (!out)
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	err = s->render(s->ctx, out);
	if (fclose(out) && !err)
		err = -EIO;
	if (err) {
		free(buf);
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			     "could not collect the metrics\n");
	}
	/* MUST_FREE: libmicrohttpd free()s the memstream's buffer. */
	r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				BG_METRICS_CONTENT_TYPE);
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* Every request that reaches here was read whole: no deadline for its
 * answer. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_size, void **req_cls)
{
	mark_answered(cls, conn);
	return handle(cls, conn, url, method, version, upload_data,
		      upload_size, req_cls);
}

/*
 * The listening socket is ours, not libmicrohttpd's: bind errors come back
 * with their errno for the message, IPv6 is bound v6-only (so "[::]:P"
 * and "0.0.0.0:P" mean what they say), and the port chosen for port 0 is
 * read with getsockname().
 */
static int listen_on(const char *addr, int *family, int *port, char *err,
		     size_t errlen)
{
	/* Numeric addresses only: a daemon that asks DNS where to listen
	 * can stall at boot or bind somewhere unexpected. "localhost" is
	 * the one name, taken to mean 127.0.0.1. */
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV |
					      AI_NUMERICHOST };
	struct addrinfo *res;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[256], serv[8];
	const char *why;
	unsigned int pn;
	int fd, one = 1, rc;

	if (bg_hostport(addr, 0, host, sizeof(host), &pn, NULL, &why)) {
		snprintf(err, errlen,
			 "metrics address %s: expected HOST:PORT or [IPV6]:PORT (%s)",
			 addr, why);
		return -EINVAL;
	}
	snprintf(serv, sizeof(serv), "%u", pn);
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	rc = getaddrinfo(host, serv, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "metrics address %s: %s", addr,
			 gai_strerror(rc));
		return -EINVAL;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (res->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl)) {
		rc = -errno;
		close(fd);
		goto fail;
	}
	*family = res->ai_family;
	*port = ntohs(ss.ss_family == AF_INET6 ?
			      ((struct sockaddr_in6 *)&ss)->sin6_port :
			      ((struct sockaddr_in *)&ss)->sin_port);
	freeaddrinfo(res);
	return fd;
fail:
	snprintf(err, errlen, "metrics address %s: %s", addr, strerror(-rc));
	freeaddrinfo(res);
	return rc;
}

struct bg_metrics_server *bg_metrics_start(const char *addr,
					   int (*render)(void *ctx, FILE *out),
					   void *ctx, char *err, size_t errlen)
{
	struct bg_metrics_server *s;
	unsigned int flags;
	int fd, family;

	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->render = render;
	s->ctx = ctx;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	for (size_t i = 0; i < sizeof(s->conns) / sizeof(s->conns[0]); i++)
		s->conns[i].fd = -1;
	fd = listen_on(addr, &family, &s->port, err, errlen);
	if (fd < 0) {
		free(s);
		return NULL;
	}
	/*
	 * One internal thread, blocking in epoll: an idle agent uses no CPU,
	 * and scrapes are answered one at a time, so render() never runs
	 * twice at once. ITC: bg_metrics_stop() wakes the thread instead of
	 * waiting for a connection. The limits keep a slow or stuck client
	 * from holding the one thread.
	 */
	flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC;
	if (family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
				  MHD_OPTION_LISTEN_SOCKET, fd,
				  MHD_OPTION_CONNECTION_LIMIT,
				  (unsigned int)BG_METRICS_CONN_MAX,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				  (unsigned int)BG_METRICS_PER_IP_MAX,
				  MHD_OPTION_CONNECTION_TIMEOUT,
				  (unsigned int)BG_METRICS_IDLE_S,
				  MHD_OPTION_NOTIFY_CONNECTION, notify, s,
				  MHD_OPTION_END);
	if (!s->mhd || pthread_create(&s->reaper, NULL, reap, s)) {
		snprintf(err, errlen, "metrics address %s: could not start the HTTP server",
			 addr);
		if (s->mhd)
			MHD_stop_daemon(s->mhd);
		else
			close(fd);
		free(s);
		return NULL;
	}
	s->reaper_on = 1;
	return s;
}

uint64_t bg_metrics_cut(struct bg_metrics_server *s)
{
	uint64_t n;

	pthread_mutex_lock(&s->lock);
	n = s->cut;
	pthread_mutex_unlock(&s->lock);
	return n;
}

int bg_metrics_port(const struct bg_metrics_server *s)
{
	return s->port;
}

void bg_metrics_stop(struct bg_metrics_server *s)
{
	if (!s)
		return;
	/* Also closes the listening socket. */
	MHD_stop_daemon(s->mhd);
	if (s->reaper_on) {
		pthread_mutex_lock(&s->lock);
		s->stopping = 1;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->reaper, NULL);
	}
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	free(s);
}
