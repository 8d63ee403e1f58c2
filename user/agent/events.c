// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Flag events (cfg.events): the datapath's ring buffer, printed as JSON
 * lines. The ring buffer's fd joins the loop's epoll set, so events cost
 * no polling; printing one is quick, so it stays on the loop.
 */
#include <errno.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "agent/agent_priv.h"
#include "core/print.h"

static int on_event(void *ctx, void *data, size_t size)
{
	struct agent *a = ctx;

	bg_print_event_json(a->events_out, data, size);
	return 0;
}

void open_events(struct agent *a)
{
	if (!a->cfg.events || a->events)
		return;
	if (!strcmp(a->cfg.events, "-"))
		a->events_out = stdout;
	else
		a->events_out = fopen(a->cfg.events, "ae");
	if (!a->events_out) {
		agent_log("events: cannot open %s: %s", a->cfg.events, strerror(errno));
		return;
	}
	if (bg_state_open(&a->events_st, 0)) {
		agent_log("events: bloomgate is not attached: no events");
		goto fail;
	}
	a->events_open = 1;
	a->events = ring_buffer__new(a->events_st.events_fd, on_event, a, NULL);
	if (!a->events) {
		agent_log("events: cannot open the ring buffer: %s", strerror(errno));
		goto fail;
	}
	if (!agent_add_fd(a, ring_buffer__epoll_fd(a->events), 0))
		return;
	agent_log("events: %s", strerror(errno));
fail:
	close_events(a);
}

void close_events(struct agent *a)
{
	if (a->events)
		ring_buffer__free(a->events);
	if (a->events_open)
		bg_state_close(&a->events_st);
	if (a->events_out && a->events_out != stdout)
		fclose(a->events_out);
	a->events = NULL;
	a->events_open = 0;
	a->events_out = NULL;
}

int events_fd(const struct agent *a)
{
	return a->events ? ring_buffer__epoll_fd(a->events) : -1;
}

void consume_events(struct agent *a)
{
	if (a->events)
		ring_buffer__consume(a->events);
}
