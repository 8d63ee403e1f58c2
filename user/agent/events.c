// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Flag events: the datapath's ring buffer, printed as JSON lines to
 * cfg.events, and as `bloomgate events` prints them (bg_print_event_text)
 * to the control socket's followers (`events`: members of the bloomgate
 * group, who cannot open the ring buffer themselves). The ring buffer is
 * open while either wants it: a ring buffer has one consumer, and one the
 * agent holds open for nobody would take the events from a root
 * `bloomgate events`. Its fd joins the loop's epoll set, so events cost no
 * polling; printing one is quick, so it stays on the loop.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "agent/agent_priv.h"
#include "core/print.h"

static int on_event(void *ctx, void *data, size_t size)
{
	struct agent *a = ctx;
	char line[512];
	FILE *f;

	if (a->events_out)
		bg_print_event_json(a->events_out, data, size);
	if (!a->followers)
		return 0;
	f = fmemopen(line, sizeof(line), "w");
	if (!f)
		return 0;
	if (!bg_print_event_text(f, data, size) && !fflush(f)) {
		long n = ftell(f);

		fclose(f);
		if (n > 0 && (size_t)n < sizeof(line))
			events_push(a, line, (size_t)n);
		return 0;
	}
	fclose(f);
	return 0;
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

int events_follow(struct agent *a, struct client *c, char *why, size_t len)
{
	int err = ring_open(a, why, len);

	if (err)
		return err;
	a->followers++;
	stream_start(a, c);
	return 0;
}

void events_unfollow(struct agent *a)
{
	if (a->followers)
		a->followers--;
	if (!a->followers && !a->events_out)
		ring_close(a);
}

int events_fd(const struct agent *a)
{
	return a->events ? ring_buffer__epoll_fd(a->events) : -1;
}

void consume_events(struct agent *a)
{
	if (!a->events)
		return;
	a->events_busy = 1;
	ring_buffer__consume(a->events);
	a->events_busy = 0;
	if (a->events_close) {
		a->events_close = 0;
		if (!a->followers && !a->events_out)
			ring_close(a);
	}
}
