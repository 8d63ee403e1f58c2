// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Flag events: the datapath's ring buffer, printed as JSON lines to
 * cfg.events, and as `bloomgate events` prints them (bg_event_text) to the
 * control socket's followers (`events`: members of the bloomgate group,
 * who cannot open the ring buffer themselves). The ring buffer is open
 * while either wants it: a ring buffer has one consumer, and one the agent
 * holds open for nobody would take the events from a root `bloomgate
 * events`. Its fd joins the loop's epoll set, so events cost no polling.
 *
 * The loop takes EVENTS_BATCH events at a time and goes back to epoll
 * between batches: during a flood of flagged packets the control socket
 * (root's `status`) is answered within a batch, and what the ring buffer
 * cannot hold meanwhile is lost in the datapath, counted there
 * (events_lost).
 *
 * Followers. Each event is written once, as its line, into the agent's
 * queue (struct evq: the last EVQ_LINES lines, EVQ_BYTES at most), and
 * each follower reads that queue from its own place (c->ev_next): an
 * event costs the same whatever the number of followers, and what a
 * follower has not taken yet is a window of the one queue, not a copy of
 * its own. A follower's socket is written after each batch when it had
 * taken everything before, and otherwise when it can take more (EPOLLOUT,
 * asked for only while something waits for it, so a socket that stays
 * full is never polled), FOLLOW_SEND_MAX bytes at a time. A follower whose
 * window is overrun (it reads more slowly than the events come) loses the
 * events overwritten: counted (status, metrics) and said in the log once
 * per episode, when it catches up again, leaves or is cut off; one that
 * stays behind for FOLLOW_BEHIND_S is cut off, its place given back.
 * FOLLOWERS_MAX followers at once, FOLLOWERS_PER_UID of one user.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <bpf/libbpf.h>

#include "agent/agent_priv.h"
#include "core/clock.h"
#include "core/print.h"

/* Events taken from the ring buffer before the loop goes back to epoll:
 * a few hundred microseconds of work. */
#define EVENTS_BATCH 256
/* The queue the followers read: its last lines, its last bytes. */
#define EVQ_LINES 16384
#define EVQ_BYTES (1U << 20)
/* Bytes sent to one follower in one go: one that reads fast holds up the
 * loop no longer than the copy of these takes. */
#define FOLLOW_SEND_MAX (256U * 1024)
/* A follower behind for this long, its window overrun all along, is cut
 * off. */
#define FOLLOW_BEHIND_S 5.0
#define FOLLOWERS_MAX 64
#define FOLLOWERS_PER_UID 16
/* Interface names cached for the lines, each looked up again after a
 * second (a renamed interface) */
#define EVQ_IFNAMES 8

_Static_assert((EVQ_BYTES & (EVQ_BYTES - 1)) == 0, "EVQ_BYTES a power of two");
_Static_assert(EVQ_BYTES >= 4 * BG_EVENT_TEXT_MAX, "a line fits the queue");

struct evq {
	uint64_t head, tail; /* the lines held: [tail, head) */
	uint64_t bytes; /* written since the start: where the next line goes */
	uint64_t start[EVQ_LINES]; /* line s starts at start[s % EVQ_LINES] */
	char buf[EVQ_BYTES]; /* byte b at buf[b % EVQ_BYTES] */
	struct {
		unsigned int ifindex;
		char name[IF_NAMESIZE];
		double at;
	} ifn[EVQ_IFNAMES];
};

/* Events left in the batch being consumed (the loop's alone). */
static unsigned int batch_left;

static uint64_t line_end(const struct evq *q, uint64_t s)
{
	return s + 1 < q->head ? q->start[(s + 1) % EVQ_LINES] : q->bytes;
}

/* A line into the queue, the oldest ones dropped for its room. */
static void evq_add(struct evq *q, const char *line, size_t n)
{
	size_t off = q->bytes % EVQ_BYTES, k = EVQ_BYTES - off < n ? EVQ_BYTES - off : n;

	while (q->tail < q->head && (q->head - q->tail >= EVQ_LINES ||
				     q->bytes + n - q->start[q->tail % EVQ_LINES] > EVQ_BYTES))
		q->tail++;
	q->start[q->head % EVQ_LINES] = q->bytes;
	memcpy(q->buf + off, line, k);
	memcpy(q->buf, line + k, n - k);
	q->bytes += n;
	q->head++;
}

static const char *ifname_of(struct evq *q, unsigned int ifindex, double now)
{
	size_t i, old = 0;

	for (i = 0; i < EVQ_IFNAMES; i++) {
		if (q->ifn[i].ifindex == ifindex && now - q->ifn[i].at < 1.0)
			return q->ifn[i].name;
		if (q->ifn[i].at < q->ifn[old].at)
			old = i;
	}
	q->ifn[old].ifindex = ifindex;
	q->ifn[old].at = now;
	if (!if_indextoname(ifindex, q->ifn[old].name))
		snprintf(q->ifn[old].name, sizeof(q->ifn[old].name), "?");
	return q->ifn[old].name;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct agent *a = ctx;
	const struct bg_event *e = data;
	char line[BG_EVENT_TEXT_MAX];
	int n;

	if (a->events_out)
		bg_print_event_json(a->events_out, data, size);
	if (a->evq && size >= sizeof(*e)) {
		n = bg_event_text(line, sizeof(line), data, size,
				  ifname_of(a->evq, e->ifindex, bg_mono()));
		if (n > 0)
			evq_add(a->evq, line, (size_t)n);
	}
	/* the batch is over: libbpf counts this event consumed and stops */
	return --batch_left ? 0 : -EAGAIN;
}

/* The ring buffer opened and in the loop's set; 0 or -errno, why said. */
static int ring_open(struct agent *a, char *why, size_t len)
{
	int err;

	if (a->events)
		return 0;
	if ((err = bg_state_open(&a->events_st, 0))) {
		snprintf(why, len, err == -ENOENT ? "bloomgate is not attached: no events" :
			 "cannot open the pinned state: %s", strerror(-err));
		return err;
	}
	a->events_open = 1;
	a->events = ring_buffer__new(a->events_st.events_fd, on_event, a, NULL);
	if (!a->events) {
		err = -errno;
		snprintf(why, len, "cannot open the ring buffer: %s", strerror(-err));
		bg_state_close(&a->events_st);
		a->events_open = 0;
		return err;
	}
	if (agent_add_fd(a, ring_buffer__epoll_fd(a->events), 0)) {
		err = -errno;
		snprintf(why, len, "%s", strerror(-err));
		ring_buffer__free(a->events);
		a->events = NULL;
		bg_state_close(&a->events_st);
		a->events_open = 0;
		return err;
	}
	return 0;
}

static void ring_close(struct agent *a)
{
	if (a->events_busy) {
		a->events_close = 1; /* from its own callback: after it */
		return;
	}
	if (a->events)
		ring_buffer__free(a->events);
	if (a->events_open)
		bg_state_close(&a->events_st);
	a->events = NULL;
	a->events_open = 0;
}

void open_events(struct agent *a)
{
	char why[256];

	if (a->cfg.events && !a->events_out) {
		if (!strcmp(a->cfg.events, "-"))
			a->events_out = stdout;
		else
			a->events_out = fopen(a->cfg.events, "ae");
		if (!a->events_out)
			agent_log("events: cannot open %s: %s", a->cfg.events, strerror(errno));
	}
	if ((a->events_out || a->followers) && ring_open(a, why, sizeof(why))) {
		agent_log("events: %s", why);
		close_events(a);
	}
}

void close_events(struct agent *a)
{
	ring_close(a);
	if (a->events_out && a->events_out != stdout)
		fclose(a->events_out);
	a->events_out = NULL;
}

int events_fd(const struct agent *a)
{
	return a->events ? ring_buffer__epoll_fd(a->events) : -1;
}

/* ---- followers ------------------------------------------------------------ */

static void count_unsent(struct agent *a, uint64_t n, int cut)
{
	pthread_mutex_lock(&a->lock);
	a->ctl.events_unsent += n;
	a->ctl.followers_cut += (uint64_t)cut;
	pthread_mutex_unlock(&a->lock);
}

/* The end of a follower's episode behind (caught up, gone or cut off),
 * said once. */
static void behind_end(struct client *c, double now, const char *how)
{
	if (!c->behind_since)
		return;
	agent_log("events: a follower (peer uid %d, pid %d) %s after losing %llu "
		  "events in %.1f s: it read more slowly than the events came",
		  (int)c->uid, (int)c->pid, how, (unsigned long long)c->ev_lost,
		  now - c->behind_since);
	c->behind_since = 0;
	c->deadline = 0;
	c->ev_lost = 0;
}

/* Events overwritten before c took them are lost for it: counted, and
 * its episode behind starts (it is cut off at its deadline). */
static void follower_lapped(struct agent *a, struct client *c, double now)
{
	uint64_t lost;

	if (c->ev_next >= a->evq->tail)
		return;
	lost = a->evq->tail - c->ev_next;
	c->ev_next = a->evq->tail;
	c->ev_lost += lost;
	count_unsent(a, lost, 0);
	if (!c->behind_since) {
		c->behind_since = now;
		c->deadline = now + FOLLOW_BEHIND_S;
	}
}

/* After w bytes of c's window went out: its next line, and the rest of a
 * line sent in part kept in c->out (the queue may drop it before the
 * socket takes it). */
static void follower_advance(struct evq *q, struct client *c, size_t w)
{
	uint64_t p = q->start[c->ev_next % EVQ_LINES] + w, e;

	while (c->ev_next < q->head && line_end(q, c->ev_next) <= p)
		c->ev_next++;
	if (c->ev_next == q->head || q->start[c->ev_next % EVQ_LINES] >= p)
		return;
	for (e = line_end(q, c->ev_next), c->out_len = 0; p < e; p++)
		c->out[c->out_len++] = q->buf[p % EVQ_BYTES];
	c->out_off = 0;
	c->ev_next++;
}

/* What c has pending, as far as its socket takes it, FOLLOW_SEND_MAX
 * bytes at most: 1 all sent, 0 the socket is full, 2 more to send, -1 the
 * peer went. */
static int follower_push(struct agent *a, struct client *c)
{
	struct evq *q = a->evq;
	size_t sent = 0;

	while (sent < FOLLOW_SEND_MAX) {
		struct iovec iov[3];
		struct msghdr m = { .msg_iov = iov };
		size_t part = c->out_len - c->out_off;
		ssize_t w;

		if (part)
			iov[m.msg_iovlen++] = (struct iovec){ c->out + c->out_off, part };
		if (c->ev_next < q->head) {
			uint64_t from = q->start[c->ev_next % EVQ_LINES], n = q->bytes - from;
			size_t off = from % EVQ_BYTES, k;

			if (n > FOLLOW_SEND_MAX - sent)
				n = FOLLOW_SEND_MAX - sent;
			k = EVQ_BYTES - off < n ? EVQ_BYTES - off : n;
			iov[m.msg_iovlen++] = (struct iovec){ q->buf + off, k };
			if (n > k)
				iov[m.msg_iovlen++] = (struct iovec){ q->buf, n - k };
		}
		if (!m.msg_iovlen)
			return 1;
		w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno == EAGAIN ? 0 : -1;
		sent += (size_t)w;
		if ((size_t)w < part) {
			c->out_off += (size_t)w;
			return 0;
		}
		c->out_off = c->out_len = 0;
		if ((size_t)w > part)
			follower_advance(q, c, (size_t)w - part);
	}
	return c->ev_next < q->head || c->out_len ? 2 : 1;
}

/* Sends to c and settles what follows: its interest in EPOLLOUT, its
 * episode behind, or its end. */
static void follower_send(struct agent *a, struct client *c, double now)
{
	int r = follower_push(a, c);

	if (r < 0) {
		client_drop(a, c); /* the peer went */
		return;
	}
	if (r == 1) {
		behind_end(c, now, "caught up");
		if (c->want_out && client_want(a, c, 0))
			client_drop(a, c);
		return;
	}
	if (!c->want_out && client_want(a, c, EPOLLOUT))
		client_drop(a, c);
}

/* After a batch: what overran each follower's window; those that had
 * taken everything get the new lines now, the others when their socket
 * can take them. */
static void followers_feed(struct agent *a)
{
	struct client *c, *next;
	double now = bg_mono();

	for (c = a->clients; c && a->evq; c = next) {
		next = c->next;
		if (!c->stream)
			continue;
		follower_lapped(a, c, now);
		if (!c->want_out)
			follower_send(a, c, now);
	}
}

void consume_events(struct agent *a)
{
	if (!a->events)
		return;
	a->events_busy = 1;
	batch_left = EVENTS_BATCH;
	ring_buffer__consume(a->events);
	a->events_busy = 0;
	if (a->evq)
		followers_feed(a);
	if (a->events_close) {
		a->events_close = 0;
		if (!a->followers && !a->events_out)
			ring_close(a);
	}
}

void events_writable(struct agent *a, struct client *c)
{
	double now = bg_mono();

	follower_lapped(a, c, now);
	follower_send(a, c, now);
}

void events_expire(struct agent *a, struct client *c, double now)
{
	char msg[256];
	int n;

	follower_lapped(a, c, now);
	if (!c->behind_since || now < c->behind_since + FOLLOW_BEHIND_S)
		return;
	count_unsent(a, 0, 1);
	/* said to the peer when its socket has room (a line of its own: not
	 * after a line sent in part) */
	n = snprintf(msg, sizeof(msg), "error: cut off: this reader lost %llu events in "
		     "%.0f s, reading more slowly than they came\n",
		     (unsigned long long)c->ev_lost, FOLLOW_BEHIND_S);
	if (c->out_len == c->out_off)
		send(c->fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	behind_end(c, now, "cut off");
	client_drop(a, c);
}

/* Refuses c when the followers are at a bound; 0 or -EMFILE with why. */
static int follow_bound(struct agent *a, const struct client *c, char *why, size_t len)
{
	const struct client *o;
	size_t mine = 0;

	for (o = a->clients; o; o = o->next)
		mine += o->stream && o->uid == c->uid;
	if (a->followers < FOLLOWERS_MAX && mine < FOLLOWERS_PER_UID)
		return 0;
	pthread_mutex_lock(&a->lock);
	a->ctl.refused_followers++;
	pthread_mutex_unlock(&a->lock);
	if (mine >= FOLLOWERS_PER_UID)
		snprintf(why, len, "too many followers of the events for uid %d: %d at "
			 "once (one user's bound)", (int)c->uid, FOLLOWERS_PER_UID);
	else
		snprintf(why, len, "too many followers of the events: %d at once (the "
			 "agent's bound)", FOLLOWERS_MAX);
	return -EMFILE;
}

int events_follow(struct agent *a, struct client *c, char *why, size_t len)
{
	int err = follow_bound(a, c, why, len);

	if (err)
		return err;
	c->out = malloc(BG_EVENT_TEXT_MAX);
	if (!a->evq)
		a->evq = calloc(1, sizeof(*a->evq));
	if (!c->out || !a->evq) {
		snprintf(why, len, "out of memory");
		err = -ENOMEM;
	} else if (!(err = ring_open(a, why, len)) && client_want(a, c, 0)) {
		err = -errno;
		snprintf(why, len, "%s", strerror(-err));
	}
	if (err) {
		/* the client gets its answer in c->out; the queue goes when
		 * it was made for nobody */
		free(c->out);
		c->out = NULL;
		if (!a->followers) {
			free(a->evq);
			a->evq = NULL;
		}
		return err;
	}
	pthread_mutex_lock(&a->lock);
	a->followers++;
	a->ctl.followers = a->followers;
	pthread_mutex_unlock(&a->lock);
	c->stream = 1;
	c->deadline = 0;
	c->out_len = c->out_off = 0;
	c->ev_next = a->evq->head;
	return 0;
}

void events_unfollow(struct agent *a, struct client *c)
{
	behind_end(c, bg_mono(), "left");
	pthread_mutex_lock(&a->lock);
	if (a->followers)
		a->followers--;
	a->ctl.followers = a->followers;
	pthread_mutex_unlock(&a->lock);
	if (a->followers)
		return;
	free(a->evq);
	a->evq = NULL;
	if (!a->events_out)
		ring_close(a);
}
