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
#include "core/wire.h"
#include "core/print.h"
#include "agent/agent.h"
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
	struct timespec t0, t1, nap;
	int tty = isatty(STDOUT_FILENO), ret;
	unsigned long long n = 0;
	size_t i;

	signal(SIGINT, on_watch_signal);
	signal(SIGTERM, on_watch_signal);
	ret = bg_counters_read(counters_fd, &prev);
	if (ret)
		return cli_fail(1, "cannot read counters: %s", strerror(-ret));
	clock_gettime(CLOCK_MONOTONIC, &t0);
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
		ret = bg_counters_read(counters_fd, &cur);
		if (ret)
			return cli_fail(1, "cannot read counters: %s", strerror(-ret));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
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
	int json, ret, i;

	if ((ret = cli_parse_args(&cli_stats_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	json = a.json;
	if (a.watch && json)
		return cli_fail(EXIT_USAGE, "stats: --watch or --json, not both");
	if (a.count && !a.watch)
		return cli_fail(EXIT_USAGE, "stats: --count goes with --watch");
	if ((ret = cli_need_root()))
		return ret;
	if ((ret = cli_open_state(&st, 0)))
		return ret;
	if (a.watch) {
		ret = stats_watch(&a, st.counters_fd);
		bg_state_close(&st);
		return ret;
	}
	ret = bg_counters_read(st.counters_fd, &c);
	bg_state_close(&st);
	if (ret)
		return cli_fail(1, "cannot read counters: %s", strerror(-ret));
	if (json) {
		struct json_object *o = bg_counters_json(&c);

		if (!o)
			return cli_fail(1, "out of memory");
		puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		return 0;
	}
	for (i = 0; i < BG_CNT__COUNT; i++)
		printf("%-28s %llu\n", bg_counter_names[i],
		       (unsigned long long)c.cnt[i]);
	for (i = 0; i < BG_MAL__COUNT; i++)
		printf(BG_MALFORMED_PREFIX "%-18s %llu\n", bg_malformed_names[i],
		       (unsigned long long)c.malformed[i]);
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
	struct json_object *o, *v, *srcs;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		return;
	ret = bg_agent_ask("status", BG_AGENT_STATUS_WAIT, f);
	if (ret) {
		fclose(f);
		free(buf);
		if (ret == -ETIMEDOUT)
			printf("agent: running, but it did not answer within %.0f s "
			       "(stopped or stuck?)\n", BG_AGENT_STATUS_WAIT);
		else
			puts("agent: none running");
		return;
	}
	fclose(f);
	o = json_tokener_parse(buf);
	free(buf);
	if (!o) {
		puts("agent: running, but its status cannot be read");
		return;
	}
	printf("agent: pid %d, up %.0f s, config %s, filter generation %lld\n",
	       json_object_object_get_ex(o, "pid", &v) ? json_object_get_int(v) : 0,
	       json_object_object_get_ex(o, "uptime", &v) ? json_object_get_double(v) : 0,
	       json_object_object_get_ex(o, "config", &v) ? json_object_get_string(v) : "?",
	       json_object_object_get_ex(o, "generation", &v) ? (long long)json_object_get_int64(v) : 0);
	if (json_object_object_get_ex(o, "artifact", &v)) {
		struct json_object *g = NULL, *h = NULL;

		json_object_object_get_ex(v, "generation", &g);
		json_object_object_get_ex(v, "sha256", &h);
		printf("agent: the live filter is an artifact's: generation %lld, sha256 %s\n",
		       g ? (long long)json_object_get_int64(g) : 0,
		       h ? json_object_get_string(h) : "?");
	}
	if (json_object_object_get_ex(o, "fleet", &v)) {
		struct json_object *g = NULL, *c = NULL;

		json_object_object_get_ex(v, "gateway", &g);
		json_object_object_get_ex(v, "connected", &c);
		printf("agent: fleet gateway %s, the store %s\n",
		       g ? json_object_get_string(g) : "?",
		       c && json_object_get_boolean(c) ? "connected" :
							 "not connected (enforcing the last good generation)");
	}
	if (json_object_object_get_ex(o, "filter_foreign", &v) && json_object_get_boolean(v)) {
		struct json_object *mine = NULL, *live = NULL;

		json_object_object_get_ex(o, "filter_id", &mine);
		json_object_object_get_ex(o, "live_filter_id", &live);
		printf("agent: the live filter (id %lld) is not the one it built (id %lld), "
		       "replaced by a forced load: its lists are not enforced until its "
		       "next rebuild (bloomgate reload)\n",
		       live ? (long long)json_object_get_int64(live) : 0,
		       mine ? (long long)json_object_get_int64(mine) : 0);
	}
	if (json_object_object_get_ex(o, "sources", &srcs))
		for (i = 0; i < json_object_array_length(srcs); i++) {
			struct json_object *s = json_object_array_get_idx(srcs, i), *n;
			const char *err = json_object_object_get_ex(s, "last_error", &v) ?
						  json_object_get_string(v) : "";

			printf("  list %s (%s): %s, %lld entries",
			       json_object_object_get_ex(s, "name", &v) ? json_object_get_string(v) : "?",
			       json_object_object_get_ex(s, "origin", &v) ? json_object_get_string(v) : "?",
			       json_object_object_get_ex(s, "state", &v) ? json_object_get_string(v) : "?",
			       json_object_object_get_ex(s, "entries", &v) ? (long long)json_object_get_int64(v) : 0);
			if (json_object_object_get_ex(s, "last_success", &v) && json_object_get_double(v) > 0)
				printf(", last success %.0f s ago",
				       fmax(0, (double)time(NULL) - json_object_get_double(v)));
			if (json_object_object_get_ex(s, "next_fetch_in", &n) && n)
				printf(", next fetch in %.0f s", json_object_get_double(n));
			if (err && *err)
				printf(", last error: %s", err);
			putchar('\n');
		}
	json_object_put(o);
}

/* status: the lists behind the live filter, from its load record. */
static void print_record_lists(__u32 id)
{
	struct bg_record rec;
	int i;

	if (!id || bg_record_read(id, &rec)) {
		puts("lists: not recorded (check cannot name entries)");
		return;
	}
	printf("lists:");
	for (i = 0; i < rec.n; i++)
		printf("%s %s %s (%s%s)", i ? "," : "",
		       rec.src[i].list.allow ? "allow" : "block", rec.src[i].path,
		       bg_format_name(rec.src[i].list.format),
		       rec.src[i].list.subdomains ? ", subdomains" : "");
	puts(rec.n ? "" : " none");
	bg_record_free(&rec);
}

int cli_cmd_status(int argc, char **argv)
{
	struct bg_attach_rec recs[BG_ATTACH_MAX];
	struct bg_state st;
	const void *mem;
	char cap[96] = "";
	__u32 cap_elems = UINT32_MAX; /* none formatted yet */
	size_t len;
	int n, i, ret;

	if ((ret = cli_parse_args(&cli_status_cmd, &argc, argv, NULL)))
		return ret < 0 ? 0 : ret;
	if ((ret = cli_need_root()))
		return ret;
	/* Opened once. Not attached is an answer here (on stdout), with
	 * the exit code every command gives it. */
	ret = bg_state_open(&st, 0);
	if (ret == -ENOENT) {
		puts("bloomgate is not attached to any interface");
		return EXIT_NOT_ATTACHED;
	}
	if (ret)
		return cli_fail(1, "cannot open the pinned state in %s: %s",
			    bg_pin_dir(), strerror(-ret));
	n = bg_attach_list(&st, recs, BG_ATTACH_MAX);
	printf("pinned state: %s\n", st.dir);
	for (i = 0; i < n; i++) {
		char name[IF_NAMESIZE] = "?", ports[64];

		/* Its name cannot be had any more, nor kept in the record. */
		if (bg_attach_rec_gone(&recs[i]) == 1) {
			printf("attached: gone (ifindex %u)", recs[i].ifindex);
			if (recs[i].netns_ino != bg_netns_ino())
				printf(" in another network namespace (netns inode %u)",
				       recs[i].netns_ino);
			printf(", prog id %u (bloomgate detach --gone removes it)\n",
			       recs[i].prog_id);
			continue;
		}
		if (recs[i].netns_ino != bg_netns_ino()) {
			printf("attached: ifindex %u in another network namespace "
			       "(netns inode %u, prog id %u)\n", recs[i].ifindex,
			       recs[i].netns_ino, recs[i].prog_id);
			continue;
		}
		if_indextoname(recs[i].ifindex, name);
		cli_fmt_ports(ports, sizeof(ports), recs[i].dns_ports);
		/* the records agree (attach refuses another capacity): the
		 * keys are worked out once */
		if (recs[i].capacity != cap_elems) {
			cap_elems = recs[i].capacity;
			cli_fmt_capacity(cap, sizeof(cap), cap_elems);
		}
		printf("attached: %s (ifindex %u, %s mode, match %s, action %s, "
		       "dns-action %s, dns-ports %s, unparsed %s, capacity %s%s, "
		       "prog id %u, dns prog id %u)\n",
		       name, recs[i].ifindex, cli_rec_mode_name(&recs[i]),
		       cli_match_name(recs[i].match), cli_action_name(recs[i].action),
		       cli_dns_action_name(recs[i].dns_action), ports,
		       cli_rec_unparsed_name(&recs[i]), cap,
		       recs[i].mode & BG_ATTACH_F_GROW ? ", growing" : "", recs[i].prog_id,
		       recs[i].dns_prog_id);
		if (recs[i].mode & BG_ATTACH_F_CHAIN) {
			__u32 next = 0;

			if (bg_attach_next_id(st.dir, &recs[i], &next))
				printf("  chain: the next slot cannot be read\n");
			else if (next)
				printf("  chain: prog id %u runs after bloomgate\n", next);
			else
				printf("  chain: nothing runs after bloomgate (bloomgate chain)\n");
		}
	}
	ret = bg_filter_view_current(st.filters_fd, &mem, &len);
	if (ret == 0) {
		const struct bg_filter_header *h = mem;
		char b[32];

		double pp = bg_filter_model_fpr(h->entries, h->nblocks, h->k);
		int probes = h->n4 > h->n6 ? h->n4 : h->n6, i;

		bg_fmt_bytes(b, sizeof(b), (double)bg_filter_nelems(h) * BG_FILTER_VALUE_SIZE);
		printf("filter: %llu Bloom keys, %u blocks, k=%u, %.2f bits/key, "
		       "predicted false-positive rate %.6f per address",
		       (unsigned long long)h->entries, h->nblocks, h->k,
		       h->entries ? (double)h->nblocks * BG_BLOCK_BITS / (double)h->entries : 0.0,
		       1.0 - pow(1.0 - pp, probes ? probes : 1));
		if (h->flags & BG_FILTER_F_NAMES)
			printf(", %.6f per query",
			       1.0 - pow(1.0 - pp, 1 + __builtin_popcount(h->subs_depths)));
		printf(", memory %s\n", b);
		if (h->fp_nbuckets)
			printf("exact stage: %u buckets of %d fingerprints, every Bloom "
			       "positive confirmed\n", h->fp_nbuckets, BG_FP_PER_BUCKET);
		else
			printf("exact stage: off (loaded with --confirm off)\n");
		printf("probes: IPv4 %s", h->flags & BG_FILTER_F_SHORT4 ? "bitmap /0-/16" : "");
		for (i = 0; i < h->n4; i++)
			printf(" /%u", h->len4[i]);
		printf("; IPv6 %s", h->short6_n ? "exact ranges" : "");
		for (i = 0; i < h->n6; i++)
			printf(" /%u", h->len6[i]);
		printf("; allowlist %u IPv4 + %u IPv6 ranges\n", h->allow4_n, h->allow6_n);
		if (h->flags & BG_FILTER_F_NAMES) {
			char db[32];

			printf("names: up to %d probes per query (the name, then its parent "
			       "names of at most %d labels with a subdomain rule: depths "
			       "%s); %u allowed name keys\n",
			       1 + __builtin_popcount(h->subs_depths), BG_DNS_SUFFIX_MAX,
			       bg_fmt_depths(db, sizeof(db), h->subs_depths), h->allown_n);
		}
		else
			puts("names: none loaded (DNS queries pass)");
		bg_filter_unmap(mem, len);
		print_record_lists(bg_filter_current_id(st.filters_fd));
	} else if (ret == -ENOENT) {
		puts("filter: none loaded (every packet with an address passes)");
	} else {
		/* e.g. EPERM: the live map is found by id (CAP_SYS_ADMIN) */
		printf("filter: cannot be read: %s\n", strerror(-ret));
	}
	bg_state_close(&st);
	print_agent_status();
	return 0;
}

static volatile sig_atomic_t stop_events;
static long events_left = -1;

static void on_signal(int sig)
{
	(void)sig;
	stop_events = 1;
}

/* Wall-clock time of a bpf_ktime_get_ns() stamp (CLOCK_MONOTONIC). */
static void fmt_event_time(char *buf, size_t len, __u64 ts_ns)
{
	struct timespec mono, real;
	long long ns;
	time_t sec;
	struct tm tm;
	char t[32];

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	ns = (long long)real.tv_sec * 1000000000LL + real.tv_nsec -
	     ((long long)mono.tv_sec * 1000000000LL + mono.tv_nsec - (long long)ts_ns);
	sec = (time_t)(ns / 1000000000LL);
	localtime_r(&sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03lld", t, (ns % 1000000000LL) / 1000000LL);
}

static int print_event(void *ctx, void *data, size_t size)
{
	const struct bg_event *e = data;
	char addr[INET6_ADDRSTRLEN] = "?", ifn[IF_NAMESIZE] = "?";

	(void)ctx;
	if (size < sizeof(*e))
		return 0;
	inet_ntop(e->family == BG_KEY_IPV4 ? AF_INET : AF_INET6, e->addr, addr,
		  sizeof(addr));
	if_indextoname(e->ifindex, ifn);
	if (e->which == BG_EVENT_NAME) {
		const struct bg_name_event *ne = data;
		char name[BG_NAME_TEXT_MAX], when[48];

		if (size < sizeof(*ne) ||
		    bg_name_from_wire(ne->name, sizeof(ne->name), name, sizeof(name)) < 0)
			snprintf(name, sizeof(name), "(malformed name)");
		fmt_event_time(when, sizeof(when), e->ts_ns);
		printf("%s name %s from %s on %s at %s\n",
		       e->verdict == BG_VERDICT_FLAG ? "flag" : "drop", name, addr,
		       ifn, when);
	} else {
		printf("%s %s %s on %s\n", e->verdict == BG_VERDICT_FLAG ? "flag" : "drop",
		       e->which == BG_MATCH_SRC ? "src" : "dst", addr, ifn);
	}
	fflush(stdout);
	if (events_left > 0 && --events_left == 0)
		stop_events = 1;
	return 0;
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
		deadline = bg_now_ms() + 1000.0 * a.timeout;
	if ((ret = cli_need_root()))
		return ret;
	if ((ret = cli_open_state(&st, 0)))
		return ret;
	rb = ring_buffer__new(st.events_fd, print_event, NULL, NULL);
	if (!rb) {
		bg_state_close(&st);
		return cli_fail(1, "cannot open the event ring buffer: %s", strerror(errno));
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop_events && (!deadline || bg_now_ms() < deadline)) {
		ret = ring_buffer__poll(rb, 100);
		if (ret < 0 && ret != -EINTR)
			break;
	}
	ring_buffer__free(rb);
	bg_state_close(&st);
	return 0;
}
