// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for user/agent/metrics.c: the exposition text of a fixed view, line
 * for line where it matters; every datapath counter shown exactly once;
 * the text accepted by promtool (Debian package prometheus); and the HTTP
 * server on 127.0.0.1, spoken to with a plain socket.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/counters.h"
#include "agent/csstream.h"
#include "agent/metrics.h"

static struct bg_counters counters;
static struct bg_attach_rec recs[3];
static const struct bg_metrics_filter filter = {
	.keys = 123456,
	.bytes = 262208,
	.bits_per_key = 14.4,
	.predicted_fpr = 0.001,
	.generation = 3,
	.build_seconds = 0.25,
	.swap_seconds = 0.000125,
};
/* a list's driver as metrics sees it (its flags; the ops are the
 * agent's, which a unit test does not link) */
static const struct src_ops list_ops = { .kind = "list" };
static const struct bg_cfg_list cfgs[] = {
	{ .list.name = "firehol" },
	/* a name that needs every escape a label value has */
	{ .list.name = "we\"ird\\na\nme" },
	{ .list.name = "cs" },
};
/* a crowdsec: source's driver: its entries are decisions */
static const struct src_ops cs_ops = { .kind = "crowdsec", .decisions = 1 };
static const struct source sources[] = {
	{ .cfg = &cfgs[0], .ops = &list_ops, .state = "ok",
	  .rec = { .entries = 4521, .last_ok = 1764599507.5, .failures = 2,
		   .not_modified = 7, .fetches = 12, .rejected = 3 } },
	{ .cfg = &cfgs[1], .ops = &list_ops, .state = "pending" },
	/* its decisions by origin, its refusals by reason (7000 + reason,
	 * in the order of bg_cs_ign_names) */
	{ .cfg = &cfgs[2], .ops = &cs_ops, .state = "ok", .rec = { .entries = 5 },
	  .n_origins = 2, .origins = { { "cscli", 3 }, { "CAPI", 2 } },
	  .refused = { .n = 8, .v = { { "type", 7000 }, { "scope", 7001 },
				   { "value", 7002 }, { "too_wide", 7003 },
				   { "duration", 7004 }, { "expired", 7005 },
				   { "malformed", 7006 }, { "too_large", 7007 } } } },
};
_Static_assert(BG_CS_IGN_MAX == 8, "a value for every reason above");

/* Every counter and reason its own value, so a value in the wrong place
 * or shown twice is seen. */
/* the control socket: promtool lints its families too */
static const struct bg_metrics_control control = {
	.followers = 3, .connections = 5, .events_unsent = 70000,
	.followers_cut = 2, .refused_followers = 48, .refused_connections = 136,
};

static void fill(struct bg_metrics_view *v)
{
	int i;

	memset(&counters, 0, sizeof(counters));
	for (i = 0; i < BG_CNT_SLOTS; i++)
		counters.cnt[i] = 1000 + i;
	for (i = 0; i < BG_MAL_SLOTS; i++)
		counters.malformed[i] = 5000 + i;
	counters.cnt[BG_CNT_PACKETS] = UINT64_MAX; /* all 20 digits kept */
	memset(recs, 0, sizeof(recs));
	recs[0] = (struct bg_attach_rec){ .ifindex = 7, .mode = 1, .match = BG_MATCH_DST,
					  .action = BG_ACTION_DROP,
					  .dns_action = BG_DNS_ACTION_NXDOMAIN,
					  .netns_ino = 4026531840U,
					  .dns_ports = { 53, 5353 } };
	/* recs[1]: a free slot, not shown */
	/* recs[2]: skb, with the --unparsed drop flag in the mode byte */
	recs[2] = (struct bg_attach_rec){ .ifindex = 7,
					  .mode = 2 | BG_ATTACH_F_UNPARSED_DROP,
					  .match = BG_MATCH_BOTH,
					  .action = BG_ACTION_FLAG,
					  .dns_action = BG_DNS_ACTION_REFUSED,
					  .netns_ino = 4026532000U, .dns_ports = { 53 } };
	memset(v, 0, sizeof(*v));
	v->counters = &counters;
	v->recs = recs;
	v->nrecs = 3;
	v->filter = &filter;
	v->rebuilds = 4;
	v->rebuild_failures = 1;
	v->sources = sources;
	v->nsources = 3;
	v->start_time = 1764590000;
	v->control = &control;
}

/* The rendered text, NUL-terminated; the caller frees it. */
static char *render(const struct bg_metrics_view *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(bg_metrics_render(f, v), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void assert_contains(const char *text, const char *block)
{
	if (!strstr(text, block))
		fail_msg("missing:\n%s\n--- in:\n%s", block, getenv("BG_DUMP") ? text : "(BG_DUMP=1 shows it)");
}

static void assert_containsf(const char *text, const char *fmt, ...)
{
	char block[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(block, sizeof(block), fmt, ap);
	va_end(ap);
	assert_contains(text, block);
}

static int count(const char *text, const char *s)
{
	int n = 0;

	for (; (text = strstr(text, s)); text++)
		n++;
	return n;
}

static void test_lines(void **state)
{
	struct bg_metrics_view v;
	char *t;

	(void)state;
	fill(&v);
	t = render(&v);
	assert_contains(t, "# HELP bloomgate_build_info The bloomgate release and datapath ABI (value 1).\n"
			   "# TYPE bloomgate_build_info gauge\n"
			   "bloomgate_build_info{version=\"" BG_VERSION "\",abi=\"" BG_TEXTIFY(BG_ABI_VERSION) "\"} 1\n"
			   "# HELP bloomgate_agent_start_time_seconds When the agent started (unix time).\n"
			   "# TYPE bloomgate_agent_start_time_seconds gauge\n"
			   "bloomgate_agent_start_time_seconds 1764590000\n");
	assert_contains(t, "# TYPE bloomgate_packets_total counter\n"
			   "bloomgate_packets_total 18446744073709551615\n");
	/* label values in counter-index order */
	assert_containsf(t, "# TYPE bloomgate_packets_by_family_total counter\n"
			    "bloomgate_packets_by_family_total{family=\"ipv4\"} %d\n"
			    "bloomgate_packets_by_family_total{family=\"ipv6\"} %d\n"
			    "bloomgate_packets_by_family_total{family=\"non_ip\"} %d\n",
			 1000 + BG_CNT_IPV4, 1000 + BG_CNT_IPV6, 1000 + BG_CNT_NON_IP);
	assert_containsf(t, "# TYPE bloomgate_verdicts_total counter\n"
			    "bloomgate_verdicts_total{verdict=\"dropped\"} %d\n"
			    "bloomgate_verdicts_total{verdict=\"passed\"} %d\n"
			    "bloomgate_verdicts_total{verdict=\"answered\"} %d\n",
			 1000 + BG_CNT_DROPPED, 1000 + BG_CNT_PASSED,
			 1000 + BG_CNT_ANSWERED);
	assert_containsf(t, "\nbloomgate_flagged_packets_total %d\n",
			 1000 + BG_CNT_FLAGGED);
	assert_containsf(t, "bloomgate_address_lookups_total{result=\"negative\"} %d\n"
			    "bloomgate_address_lookups_total{result=\"positive\"} %d\n",
			 1000 + BG_CNT_NEGATIVES, 1000 + BG_CNT_POSITIVES);
	assert_containsf(t, "bloomgate_dns_lookups_total{result=\"positive\"} %d\n"
			    "bloomgate_dns_lookups_total{result=\"negative\"} %d\n",
			 1000 + BG_CNT_DNS_POSITIVES, 1000 + BG_CNT_DNS_NEGATIVES);
	assert_containsf(t, "bloomgate_dns_unjudged_total{reason=\"response\"} %d\n",
			 1000 + BG_CNT_DNS_RESPONSE);
	assert_containsf(t, "bloomgate_dns_unjudged_total{reason=\"no_prog\"} %d\n",
			 1000 + BG_CNT_DNS_NO_PROG);
	assert_containsf(t, "# TYPE bloomgate_unparsed_dropped_total counter\n"
			    "bloomgate_unparsed_dropped_total %d\n",
			 1000 + BG_CNT_UNPARSED_DROPPED);
	assert_contains(t, "# TYPE bloomgate_malformed_packets_total counter\n"
			   "bloomgate_malformed_packets_total{reason=\"trunc_eth\"} 5000\n"
			   "bloomgate_malformed_packets_total{reason=\"trunc_vlan\"} 5001\n");
	assert_contains(t, "# TYPE bloomgate_interface_info gauge\n"
			   "bloomgate_interface_info{ifindex=\"7\",netns=\"4026531840\",mode=\"native\",match=\"dst\",action=\"drop\",dns_action=\"nxdomain\",dns_ports=\"53,5353\",unparsed=\"pass\"} 1\n"
			   "bloomgate_interface_info{ifindex=\"7\",netns=\"4026532000\",mode=\"skb\",match=\"both\",action=\"flag\",dns_action=\"refused\",dns_ports=\"53\",unparsed=\"drop\"} 1\n"
			   "# HELP");
	assert_contains(t, "bloomgate_filter_loaded 1\n");
	assert_contains(t, "bloomgate_filter_keys 123456\n");
	assert_contains(t, "bloomgate_filter_bytes 262208\n");
	/* the Bloom part's bits a key / 8, and the map's bytes a key: two
	 * things, two names */
	assert_contains(t, "bloomgate_filter_bloom_bytes_per_key 1.8\n");
	assert_contains(t, "bloomgate_filter_map_bytes_per_key 2.123898392949715\n"); /* 262208 / 123456 */
	assert_null(strstr(t, "\nbloomgate_filter_bytes_per_key "));
	assert_contains(t, "bloomgate_filter_predicted_false_positive_rate 0.001\n");
	assert_contains(t, "# TYPE bloomgate_control_followers gauge\nbloomgate_control_followers 3\n");
	assert_contains(t, "bloomgate_control_connections 5\n");
	assert_contains(t, "# TYPE bloomgate_control_events_unsent_total counter\n"
			   "bloomgate_control_events_unsent_total 70000\n");
	assert_contains(t, "bloomgate_control_followers_cut_total 2\n");
	assert_contains(t, "bloomgate_control_refused_total{reason=\"followers\"} 48\n"
			   "bloomgate_control_refused_total{reason=\"connections\"} 136\n");
	assert_contains(t, "# TYPE bloomgate_filter_generation gauge\n"
			   "bloomgate_filter_generation 3\n");
	assert_contains(t, "bloomgate_filter_build_duration_seconds 0.25\n");
	assert_contains(t, "bloomgate_filter_swap_duration_seconds 0.000125\n");
	assert_contains(t, "# TYPE bloomgate_filter_rebuilds_total counter\n"
			   "bloomgate_filter_rebuilds_total 4\n");
	assert_contains(t, "bloomgate_filter_rebuild_failures_total 1\n");
	assert_contains(t, "# TYPE bloomgate_source_entries gauge\n"
			   "bloomgate_source_entries{source=\"firehol\"} 4521\n"
			   "bloomgate_source_entries{source=\"we\\\"ird\\\\na\\nme\"} 0\n");
	assert_contains(t, "# TYPE bloomgate_source_rejected_lines gauge\n"
			   "bloomgate_source_rejected_lines{source=\"firehol\"} 3\n");
	assert_contains(t, "bloomgate_source_last_success_timestamp_seconds{source=\"firehol\"} 1764599507.5\n");
	assert_contains(t, "# TYPE bloomgate_source_fetch_failures_total counter\n"
			   "bloomgate_source_fetch_failures_total{source=\"firehol\"} 2\n");
	assert_contains(t, "bloomgate_source_not_modified_total{source=\"firehol\"} 7\n");
	assert_contains(t, "bloomgate_source_fetches_total{source=\"firehol\"} 12\n");
	assert_contains(t, "bloomgate_source_state{source=\"firehol\",state=\"ok\"} 1\n"
			   "bloomgate_source_state{source=\"firehol\",state=\"failing\"} 0\n"
			   "bloomgate_source_state{source=\"firehol\",state=\"stale\"} 0\n"
			   "bloomgate_source_state{source=\"firehol\",state=\"pending\"} 0\n");
	assert_contains(t, "bloomgate_source_state{source=\"we\\\"ird\\\\na\\nme\",state=\"pending\"} 1\n");
	/* every family announced once */
	assert_int_equal(count(t, "# TYPE bloomgate_verdicts_total "), 1);
	assert_int_equal(count(t, "# HELP bloomgate_source_state "), 1);
	assert_int_equal(count(t, "# HELP "), count(t, "# TYPE "));
	free(t);
}

/* A crowdsec: source's families: the decisions in the filter by origin,
 * and every reason of a refusal once, in the order of bg_cs_ign_names. */
static void test_crowdsec(void **state)
{
	struct bg_metrics_view v;
	char want[128];
	char *t;
	int i;

	(void)state;
	fill(&v);
	t = render(&v);
	assert_contains(t, "# TYPE bloomgate_crowdsec_decisions gauge\n"
			   "bloomgate_crowdsec_decisions{source=\"cs\",origin=\"cscli\"} 3\n"
			   "bloomgate_crowdsec_decisions{source=\"cs\",origin=\"CAPI\"} 2\n"
			   "# HELP bloomgate_crowdsec_ignored_total ");
	assert_contains(t, "# TYPE bloomgate_crowdsec_ignored_total counter\n"
			   "bloomgate_crowdsec_ignored_total{source=\"cs\",reason=\"type\"} 7000\n"
			   "bloomgate_crowdsec_ignored_total{source=\"cs\",reason=\"scope\"} 7001\n"
			   "bloomgate_crowdsec_ignored_total{source=\"cs\",reason=\"value\"} 7002\n"
			   "bloomgate_crowdsec_ignored_total{source=\"cs\",reason=\"too_wide\"} 7003\n"
			   "bloomgate_crowdsec_ignored_total{source=\"cs\",reason=\"duration\"} 7004\n"
			   "bloomgate_crowdsec_ignored_total{source=\"cs\",reason=\"expired\"} 7005\n"
			   "bloomgate_crowdsec_ignored_total{source=\"cs\",reason=\"malformed\"} 7006\n"
			   "bloomgate_crowdsec_ignored_total{source=\"cs\",reason=\"too_large\"} 7007\n");
	for (i = 0; i < BG_CS_IGN_MAX; i++) {
		snprintf(want, sizeof(want), "reason=\"%s\"} %d\n", bg_cs_ign_names[i], 7000 + i);
		assert_int_equal(count(t, want), 1);
	}
	/* only the crowdsec: source has them */
	assert_int_equal(count(t, "bloomgate_crowdsec_ignored_total{source=\"firehol\""), 0);
	assert_int_equal(count(t, "# TYPE bloomgate_crowdsec_"), 2);
	free(t);
}

/*
 * Every datapath counter index appears exactly once as a sample value
 * (1000 + index), but the malformed sum, which the reasons show; every
 * reason once (5000 + index). A counter added to abi.h without a place in
 * metrics.c fails here.
 */
static void test_every_counter_once(void **state)
{
	struct bg_metrics_view v;
	char want[32];
	char *t;
	int i;

	(void)state;
	fill(&v);
	counters.cnt[BG_CNT_PACKETS] = 1000 + BG_CNT_PACKETS;
	t = render(&v);
	for (i = 0; i < BG_CNT__COUNT; i++) {
		snprintf(want, sizeof(want), "} %d\n", 1000 + i);
		/* unlabelled families end in the name, not a brace */
		int n = count(t, want);

		snprintf(want, sizeof(want), "_total %d\n", 1000 + i);
		n += count(t, want);
		if (n != (i == BG_CNT_MALFORMED ? 0 : 1))
			fail_msg("counter %s (%d) shown %d times", bg_counter_names[i],
				 i, n);
	}
	for (i = 0; i < BG_MAL__COUNT; i++) {
		snprintf(want, sizeof(want), "{reason=\"%s\"} %d\n",
			 bg_malformed_names[i], 5000 + i);
		assert_int_equal(count(t, want), 1);
	}
	/* the reserved slots beyond the names are not shown */
	snprintf(want, sizeof(want), " %d\n", 1000 + BG_CNT__COUNT);
	assert_int_equal(count(t, want), 0);
	snprintf(want, sizeof(want), " %d\n", 5000 + BG_MAL__COUNT);
	assert_int_equal(count(t, want), 0);
	free(t);
}

/* Not attached, nothing loaded, no sources: those families are absent,
 * not zero; the rebuild counters count failures before any filter. */
static void test_empty(void **state)
{
	struct bg_metrics_view v = { .rebuild_failures = 3, .start_time = 1.5 };
	char *t;

	(void)state;
	t = render(&v);
	assert_null(strstr(t, "bloomgate_packets_total"));
	assert_null(strstr(t, "bloomgate_malformed"));
	assert_null(strstr(t, "bloomgate_interface_info"));
	assert_null(strstr(t, "bloomgate_filter_keys"));
	assert_null(strstr(t, "bloomgate_source_"));
	assert_contains(t, "\nbloomgate_agent_start_time_seconds 1.5\n");
	assert_contains(t, "\nbloomgate_filter_loaded 0\n");
	assert_contains(t, "\nbloomgate_filter_rebuilds_total 0\n");
	assert_contains(t, "\nbloomgate_filter_rebuild_failures_total 3\n");
	free(t);
}

/* Values Prometheus must read back exactly, and the special ones. */
static void test_numbers(void **state)
{
	struct bg_metrics_filter f = { .bits_per_key = 8.0 / 3,
				       .predicted_fpr = __builtin_nan(""),
				       .build_seconds = __builtin_inf(),
				       .swap_seconds = 1e-9 };
	struct bg_cfg_list cfg = { .list.name = "x" };
	struct source s = { .cfg = &cfg, .ops = &list_ops, .state = "rotten",
			    .rec.last_ok = 1764599507.123456 };
	struct bg_metrics_view v = { .filter = &f, .sources = &s, .nsources = 1 };
	char *t;

	(void)state;
	t = render(&v);
	assert_contains(t, "bloomgate_filter_bloom_bytes_per_key 0.3333333333333333\n");
	assert_contains(t, "bloomgate_filter_map_bytes_per_key 0\n"); /* no keys */
	assert_contains(t, "bloomgate_filter_predicted_false_positive_rate NaN\n");
	assert_contains(t, "bloomgate_filter_build_duration_seconds +Inf\n");
	assert_contains(t, "bloomgate_filter_swap_duration_seconds 1e-09\n");
	assert_contains(t, "{source=\"x\"} 1764599507.123456\n");
	/* a state outside the list is shown as the current one */
	assert_contains(t, "bloomgate_source_state{source=\"x\",state=\"pending\"} 0\n"
			   "bloomgate_source_state{source=\"x\",state=\"rotten\"} 1\n");
	free(t);
}

static void test_write_error(void **state)
{
	struct bg_metrics_view v;
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	fill(&v);
	assert_int_equal(bg_metrics_render(f, &v), -EIO);
	fclose(f);
}

/* promtool check metrics < FILE: its exit status; -1 when promtool is
 * not installed. */
static int promtool(const char *text, char *msg, size_t msglen)
{
	char path[] = "/tmp/bg-test-metrics.XXXXXX";
	char cmd[128];
	FILE *p;
	size_t n;
	int fd, st;

	if (system("command -v promtool >/dev/null 2>&1"))
		return -1;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(msg, 1, msglen - 1, p);
	msg[n] = '\0';
	st = pclose(p);
	unlink(path);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_promtool(void **state)
{
	struct bg_metrics_view v;
	char msg[4096];
	char *t;
	int rc;

	(void)state;
	fill(&v);
	t = render(&v);
	rc = promtool(t, msg, sizeof(msg));
	if (rc < 0) {
		print_message("promtool not installed (Debian package prometheus; "
			      "make deps installs it): skipped\n");
		free(t);
		skip();
	}
	if (rc)
		fail_msg("promtool check metrics: exit %d:\n%s", rc, msg);
	free(t);
	/* and promtool does judge: exit 1 for text that does not parse (an
	 * unterminated label value), 3 for a lint finding (the issue's
	 * _bits_per_key, hence _bytes_per_key) */
	rc = promtool("# TYPE a counter\na_total 1\nb{x=\"1} 2\n", msg, sizeof(msg));
	assert_int_equal(rc, 1);
	rc = promtool("# HELP a_bits_per_key x\n# TYPE a_bits_per_key gauge\n"
		      "a_bits_per_key 1\n", msg, sizeof(msg));
	assert_int_equal(rc, 3);
}

/* ---- The server -------------------------------------------------------- */

struct srv_ctx {
	struct bg_metrics_view v;
	int fail;
	int calls;
};

static int srv_render(void *ctx, FILE *out)
{
	struct srv_ctx *c = ctx;

	c->calls++;
	if (c->fail)
		return -EIO;
	return bg_metrics_render(out, &c->v);
}

struct resp {
	int status;
	char *headers; /* status line and headers, NUL-terminated */
	char *body;
	size_t body_len;
};

/* One request over a fresh connection; the answer read to EOF
 * (Connection: close), with a receive timeout so a hang fails. */
static void request(int family, int port, const char *method, const char *path,
		    struct resp *r)
{
	struct sockaddr_storage ss = { 0 };
	struct timeval tv = { .tv_sec = 5 };
	socklen_t sl;
	char req[256], *buf = NULL, *sep;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd;

	if (family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		a->sin6_addr = in6addr_loopback;
		sl = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(*a);
	}
	fd = socket(family, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&ss, sl), 0);
	snprintf(req, sizeof(req),
		 "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
		 method, path);
	assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
		n = recv(fd, buf + len, cap - len, 0);
		assert_true(n >= 0); /* < 0: timed out or failed */
		if (!n)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	sep = strstr(buf, "\r\n\r\n");
	assert_non_null(sep);
	*sep = '\0';
	r->headers = buf;
	r->body = sep + 4;
	r->body_len = len - (r->body - buf);
	assert_int_equal(sscanf(buf, "HTTP/1.1 %d ", &r->status), 1);
}

/* The value of header name (case-insensitive), or NULL. */
static const char *header(const struct resp *r, const char *name, char *val,
			  size_t vallen)
{
	const char *line = r->headers;

	while ((line = strstr(line, "\r\n"))) {
		line += 2;
		if (!strncasecmp(line, name, strlen(name)) &&
		    line[strlen(name)] == ':') {
			const char *v = line + strlen(name) + 1;
			size_t n = strcspn(v, "\r");

			while (*v == ' ')
				v++, n--;
			snprintf(val, vallen, "%.*s", (int)n, v);
			return val;
		}
	}
	return NULL;
}

static void check_server(const char *addr, int family)
{
	struct srv_ctx ctx = { 0 };
	struct bg_metrics_server *s;
	struct resp r;
	char err[256] = "", val[128];
	char *want;
	int port;

	fill(&ctx.v);
	s = bg_metrics_start(addr, srv_render, &ctx, err, sizeof(err));
	if (!s && family == AF_INET6 && strstr(err, "not available")) {
		print_message("no IPv6 loopback (%s): skipped\n", err);
		skip();
	}
	if (!s)
		fail_msg("bg_metrics_start(%s): %s", addr, err);
	port = bg_metrics_port(s);
	assert_true(port > 0 && port < 65536);
	want = render(&ctx.v);

	request(family, port, "GET", "/metrics", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(header(&r, "Content-Type", val, sizeof(val)));
	assert_string_equal(val, "text/plain; version=0.0.4; charset=utf-8");
	assert_non_null(header(&r, "Content-Length", val, sizeof(val)));
	assert_int_equal(strtoul(val, NULL, 10), strlen(want));
	assert_int_equal(r.body_len, strlen(want));
	assert_string_equal(r.body, want);
	assert_int_equal(ctx.calls, 1);
	free(r.headers);

	/* a query string is still /metrics */
	request(family, port, "GET", "/metrics?x=1", &r);
	assert_int_equal(r.status, 200);
	free(r.headers);

	request(family, port, "HEAD", "/metrics", &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, 0);
	free(r.headers);

	request(family, port, "GET", "/other", &r);
	assert_int_equal(r.status, 404);
	free(r.headers);
	request(family, port, "GET", "/metrics/", &r);
	assert_int_equal(r.status, 404);
	free(r.headers);

	request(family, port, "POST", "/metrics", &r);
	assert_int_equal(r.status, 405);
	assert_non_null(header(&r, "Allow", val, sizeof(val)));
	assert_string_equal(val, "GET, HEAD");
	free(r.headers);

	/* render() failing: 500, not a half page */
	ctx.fail = 1;
	request(family, port, "GET", "/metrics", &r);
	assert_int_equal(r.status, 500);
	assert_null(strstr(r.body, "bloomgate_"));
	free(r.headers);

	/* 2 GET /metrics with a query, 1 HEAD (render runs: the length is
	 * the body's), 1 failing; none for 404 and 405 */
	assert_int_equal(ctx.calls, 4);
	bg_metrics_stop(s);
	free(want);
}

static void test_server_ipv4(void **state)
{
	(void)state;
	check_server("127.0.0.1:0", AF_INET);
}

static void test_server_ipv6(void **state)
{
	(void)state;
	check_server("[::1]:0", AF_INET6);
}

static int noop_render(void *ctx, FILE *out)
{
	(void)ctx;
	(void)out;
	return 0;
}

/* Addresses that must be refused, with a message naming the address; and
 * a port in use. */
/*
 * Slow clients: 40 connections that send a request a byte at a time and
 * never finish it (more than the 32 connections the server once allowed,
 * each kept "active" by its trickle) while a scraper asks every 300 ms:
 * every scrape is answered, and every trickling client is cut off once
 * its request is late (the server's deadline), counted by bg_metrics_cut.
 */
#define SLOW_CLIENTS 40

static void test_slow_clients(void **state)
{
	struct srv_ctx ctx = { 0 };
	struct bg_metrics_server *s;
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	double t0;
	int fd[SLOW_CLIENTS], closed[SLOW_CLIENTS] = { 0 }, i, round, nclosed = 0;
	char err[256] = "";
	struct resp r;

	(void)state;
	fill(&ctx.v);
	s = bg_metrics_start("127.0.0.1:0", srv_render, &ctx, err, sizeof(err));
	if (!s)
		fail_msg("bg_metrics_start: %s", err);
	a.sin_port = htons(bg_metrics_port(s));
	for (i = 0; i < SLOW_CLIENTS; i++) {
		fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		assert_true(fd[i] >= 0);
		assert_true(connect(fd[i], (struct sockaddr *)&a, sizeof(a)) == 0 ||
			    errno == EINPROGRESS);
	}
	t0 = bg_mono();
	/* 30 rounds of 300 ms: 9 s, past the deadline (5 s) with room */
	for (round = 0; round < 30; round++) {
		for (i = 0; i < SLOW_CLIENTS; i++) {
			const char *req = "GET /metrics HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
			char c = req[round < (int)strlen(req) ? round : (int)strlen(req) - 1];
			char buf[64];
			ssize_t n;

			if (closed[i])
				continue;
			n = recv(fd[i], buf, sizeof(buf), MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
				closed[i] = 1;
				nclosed++;
				continue;
			}
			send(fd[i], &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		}
		request(AF_INET, bg_metrics_port(s), "GET", "/metrics", &r);
		assert_int_equal(r.status, 200);
		free(r.headers);
		usleep(300 * 1000);
	}
	assert_true(bg_mono() - t0 >= 6); /* the attack outlasted the deadline */
	assert_int_equal(nclosed, SLOW_CLIENTS);
	assert_true(bg_metrics_cut(s) >= SLOW_CLIENTS);
	for (i = 0; i < SLOW_CLIENTS; i++)
		close(fd[i]);
	bg_metrics_stop(s);
}

static void test_server_errors(void **state)
{
	static const char *const bad[] = {
		"nope", "127.0.0.1", "127.0.0.1:", ":9571", "127.0.0.1:http",
		"127.0.0.1:70000", "::1:9571", "[::1]9571", "[::1", "256.1.1.1:80",
		"example.com:9571", /* numeric only: no DNS lookup */
	};
	struct bg_metrics_server *s, *s2;
	char err[256], addr[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		s = bg_metrics_start(bad[i], noop_render, NULL, err, sizeof(err));
		if (s)
			fail_msg("%s accepted", bad[i]);
		if (!strstr(err, bad[i]))
			fail_msg("%s: message does not name it: %s", bad[i], err);
	}

	s = bg_metrics_start("localhost:0", noop_render, NULL, err, sizeof(err));
	assert_non_null(s);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", bg_metrics_port(s));
	s2 = bg_metrics_start(addr, noop_render, NULL, err, sizeof(err));
	assert_null(s2);
	assert_non_null(strstr(err, "in use"));
	bg_metrics_stop(s);
	/* stopped: the port is free again */
	s = bg_metrics_start(addr, noop_render, NULL, err, sizeof(err));
	if (!s)
		fail_msg("%s after stop: %s", addr, err);
	bg_metrics_stop(s);
	bg_metrics_stop(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_every_counter_once),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_crowdsec),
		cmocka_unit_test(test_promtool),
		cmocka_unit_test(test_server_ipv4),
		cmocka_unit_test(test_server_ipv6),
		cmocka_unit_test(test_slow_clients),
		cmocka_unit_test(test_server_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
