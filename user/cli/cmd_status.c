// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate stats, status, events.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <bpf/libbpf.h>

#include "bloomgate/dns.h"
#include "core/clock.h"
#include "core/wire.h"
#include "core/print.h"
#include "agent/agent.h"
#include "agent/report.h"
#include "core/counters.h"
#include "kern/swap.h"

#include "cli/cli.h"

/* ---- stats / status / events ------------------------------------------- */

struct stats_args {
	int json, watch;
	double interval;
	unsigned long long count;
};

static const struct stats_args stats_defaults = { .interval = 1.0 };

static const struct bg_opt stats_opts[] = {
	{ .name = "json", .type = BG_OPT_FLAG, .help = "one JSON object",
	  .off = offsetof(struct stats_args, json) },
	{ .name = "watch", .type = BG_OPT_FLAG,
	  .help = "rates per second, every interval, until interrupted: in place "
		  "on a terminal, a line each otherwise",
	  .off = offsetof(struct stats_args, watch) },
	{ .name = "interval", .type = BG_OPT_DOUBLE, .metavar = "S",
	  .help = "seconds between two --watch lines", .min = 0.1, .max = 3600,
	  .off = offsetof(struct stats_args, interval) },
	{ .name = "count", .type = BG_OPT_UINT, .metavar = "N",
	  .help = "with --watch: stop after N lines", .min = 1, .max = 1e9,
	  .off = offsetof(struct stats_args, count) },
	{ NULL },
};

const struct bg_cmd cli_stats_cmd = {
	.name = "stats",
	.summary = "Prints the datapath counters, summed over CPUs;\n"
		   "malformed_* count packets by malformation reason. --watch\n"
		   "prints rates per second instead: packets, dropped, flagged,\n"
		   "answered, Bloom false positives, DNS queries.",
	.opts = stats_opts,
	.defaults = &stats_defaults,
};

static volatile sig_atomic_t watch_stop;

static void on_watch_signal(int sig)
{
	(void)sig;
	watch_stop = 1;
}

/* The summed counters: from the pins (fd >= 0), or else (-1) from the
 * agent, which reads them the same way (bg_counters_read()) for a member
 * of the bloomgate group. 0, or an exit code with its line printed. */
static int read_counters(int fd, struct bg_counters *c)
{
	struct json_object *o;
	char *ans;
	int ret;

	if (fd >= 0) {
		ret = bg_counters_read(fd, c);
		return ret ? cli_fail(1, "cannot read counters: %s", strerror(-ret)) : 0;
	}
	if ((ret = cli_agent_ask("stats", "stats", &ans)))
		return ret;
	o = json_tokener_parse(ans);
	free(ans);
	ret = bg_counters_from_json(o, c);
	json_object_put(o);
	return ret ? cli_fail(1, "stats: the agent's answer cannot be read") : 0;
}

/* stats --watch: the counters read every interval, their growth per
 * second printed; on a terminal one line rewritten in place (as xdp-bench
 * does), else one line an interval. */
static int stats_watch(const struct stats_args *a, int counters_fd)
{
	static const struct { int cnt; const char *name; } cols[] = {
		{ BG_CNT_PACKETS, "packets/s" }, { BG_CNT_DROPPED, "dropped/s" },
		{ BG_CNT_FLAGGED, "flagged/s" }, { BG_CNT_ANSWERED, "answered/s" },
		{ BG_CNT_BLOOM_FP, "bloom_fp/s" }, { BG_CNT_DNS_QUERIES, "dns_queries/s" },
	};
	struct bg_counters prev, cur;
	struct timespec nap;
	double t0, t1;
	int tty = isatty(STDOUT_FILENO), ret;
	unsigned long long n = 0;
	size_t i;

	signal(SIGINT, on_watch_signal);
	signal(SIGTERM, on_watch_signal);
	if ((ret = read_counters(counters_fd, &prev)))
		return ret;
	t0 = bg_mono();
	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		printf("%s%14s", i ? " " : "", cols[i].name);
	printf("\n");
	fflush(stdout);
	while (!watch_stop && (!a->count || n < a->count)) {
		double dt;

		nap.tv_sec = (time_t)a->interval;
		nap.tv_nsec = (long)((a->interval - (double)nap.tv_sec) * 1e9);
		while (nanosleep(&nap, &nap) && errno == EINTR && !watch_stop)
			;
		if (watch_stop)
			break;
		if ((ret = read_counters(counters_fd, &cur)))
			return ret;
		t1 = bg_mono();
		dt = t1 - t0;
		if (tty)
			printf("\r\033[K");
		for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
			printf("%s%14.0f", i ? " " : "",
			       dt > 0 ? (double)(cur.cnt[cols[i].cnt] - prev.cnt[cols[i].cnt]) / dt : 0.0);
		if (!tty)
			printf("\n");
		fflush(stdout);
		prev = cur;
		t0 = t1;
		n++;
	}
	if (tty)
		printf("\n");
	return 0;
}

int cli_cmd_stats(int argc, char **argv)
{
	struct stats_args a = stats_defaults;
	struct bg_counters c;
	struct bg_state st;
	int json, ret, fd;

	if ((ret = cli_parse_args(&cli_stats_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	json = a.json;
	if (a.watch && json)
		return cli_fail(EXIT_USAGE, "stats: --watch or --json, not both");
	if (a.count && !a.watch)
		return cli_fail(EXIT_USAGE, "stats: --count goes with --watch");
	/* not root, or root without the capabilities: the agent's */
	ret = cli_use_agent() ? -EPERM : bg_state_open(&st, 0);
	if (ret && !cli_denied(ret))
		return bg_report_open_failed(ret, 0, stdout, stderr);
	fd = ret ? -1 : st.counters_fd;
	if (a.watch) {
		ret = stats_watch(&a, fd);
		if (fd >= 0)
			bg_state_close(&st);
		return ret;
	}
	ret = read_counters(fd, &c);
	if (fd >= 0)
		bg_state_close(&st);
	if (ret)
		return ret;
	if (json) {
		struct json_object *o = bg_counters_json(&c);

		if (!o)
			return cli_fail(1, "out of memory");
		puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		return 0;
	}
	bg_counters_print(stdout, &c);
	return 0;
}

const struct bg_cmd cli_status_cmd = {
	.name = "status",
	.summary = "Shows the interfaces bloomgate is attached to and the\n"
		   "loaded filter.",
};

/* status: the agent's part, when one runs ("agent: none running" else). */
static void print_agent_status(void)
{
	struct json_object *o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		return;
	ret = bg_agent_ask("status", BG_AGENT_STATUS_WAIT, f);
	fclose(f);
	if (ret) {
		free(buf);
		if (ret == -ETIMEDOUT)
			printf("agent: running, but it did not answer within %.0f s "
			       "(stopped or stuck?)\n", BG_AGENT_STATUS_WAIT);
		else
			puts("agent: none running");
		return;
	}
	o = json_tokener_parse(buf);
	free(buf);
	if (!o) {
		puts("agent: running, but its status cannot be read");
		return;
	}
	bg_report_agent_status(stdout, o);
	json_object_put(o);
}

/* status from the agent ("status full"): the datapath's part as it made
 * it (the same report), then its own. */
static int status_via_agent(void)
{
	struct json_object *o, *dp;
	char *ans;
	int ret;

	if ((ret = cli_agent_ask("status", "status full", &ans)))
		return ret;
	o = json_tokener_parse(ans);
	free(ans);
	if (!o || !json_object_object_get_ex(o, "datapath", &dp)) {
		json_object_put(o);
		return cli_fail(1, "status: the agent's answer cannot be read");
	}
	ret = bg_report_emit(dp, stdout, stderr);
	if (!ret)
		bg_report_agent_status(stdout, o);
	json_object_put(o);
	return ret;
}

int cli_cmd_status(int argc, char **argv)
{
	struct bg_state st;
	int ret;

	if ((ret = cli_parse_args(&cli_status_cmd, &argc, argv, NULL)))
		return ret < 0 ? 0 : ret;
	/* Opened once. Not attached is an answer here (on stdout), with
	 * the exit code every command gives it. Not root, or root without
	 * the capabilities: the agent's answer. */
	ret = cli_use_agent() ? -EPERM : bg_state_open(&st, 0);
	if (ret && cli_denied(ret))
		return status_via_agent();
	if (ret)
		return bg_report_open_failed(ret, 1, stdout, stderr);
	ret = bg_report_datapath(&st, stdout, stderr);
	bg_state_close(&st);
	print_agent_status();
	return ret;
}

static volatile sig_atomic_t stop_events;
static long events_left = -1;

static void on_signal(int sig)
{
	(void)sig;
	stop_events = 1;
}

static int print_event(void *ctx, void *data, size_t size)
{
	(void)ctx;
	if (bg_print_event_text(stdout, data, size))
		return 0;
	fflush(stdout);
	if (events_left > 0 && --events_left == 0)
		stop_events = 1;
	return 0;
}

/* A line of the agent's `events` answer: an event as print_event()
 * prints it, or the agent's error. */
static int follow_line(void *ctx, const char *l)
{
	if (!strncmp(l, "error: ", 7)) {
		*(int *)ctx = cli_fail(1, "events: %s", l + 7);
		return 1;
	}
	puts(l);
	fflush(stdout);
	return events_left > 0 && --events_left == 0;
}

struct events_args {
	unsigned long long count;
	double timeout;
};

static const struct bg_opt events_opts[] = {
	{ .name = "count", .type = BG_OPT_UINT, .metavar = "N",
	  .help = "exit after N events", .min = 1, .max = INFINITY,
	  .off = offsetof(struct events_args, count) },
	{ .name = "timeout", .type = BG_OPT_DOUBLE, .metavar = "SEC",
	  .help = "exit after SEC seconds", .min = 0, .max = INFINITY,
	  .flags = BG_OPT_F_MIN_OPEN, .off = offsetof(struct events_args, timeout) },
	{ NULL },
};

const struct bg_cmd cli_events_cmd = {
	.name = "events",
	.summary = "Prints flagged packets as they happen, one line each:\n"
		   "\"flag dst|src ADDR on IFACE\" for a listed address, and\n"
		   "\"flag name NAME from CLIENT on IFACE at TIME\" for a DNS\n"
		   "query for a listed name (attach --dns-action flag); NAME\n"
		   "as the query had it, lowercased, odd bytes as \\DDD.",
	.opts = events_opts,
};

int cli_cmd_events(int argc, char **argv)
{
	struct events_args a = { 0 };
	struct ring_buffer *rb;
	struct bg_state st;
	double deadline = 0;
	int ret;

	if ((ret = cli_parse_args(&cli_events_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	if (a.count)
		events_left = a.count > LONG_MAX ? LONG_MAX : (long)a.count;
	if (a.timeout > 0)
		deadline = bg_mono_ms() + 1000.0 * a.timeout;
	ret = cli_use_agent() ? -EPERM : bg_state_open(&st, 0);
	if (ret && cli_denied(ret)) {
		/* followed through the agent, which reads the ring buffer */
		int code = 0;

		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		ret = bg_agent_follow("events", a.timeout, &stop_events, follow_line, &code);
		if (ret == -EPIPE)
			return cli_fail(1, "events: the agent ended the stream (it stopped, "
					"or cut off this reader for reading more slowly than "
					"the events came: see its log)");
		return ret ? cli_agent_error("events", ret) : code;
	}
	if (ret)
		return bg_report_open_failed(ret, 0, stdout, stderr);
	rb = ring_buffer__new(st.events_fd, print_event, NULL, NULL);
	if (!rb) {
		bg_state_close(&st);
		return cli_fail(1, "cannot open the event ring buffer: %s", strerror(errno));
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop_events && (!deadline || bg_mono_ms() < deadline)) {
		ret = ring_buffer__poll(rb, 100);
		if (ret < 0 && ret != -EINTR)
			break;
	}
	ring_buffer__free(rb);
	bg_state_close(&st);
	return 0;
}
