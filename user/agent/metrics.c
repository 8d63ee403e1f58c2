// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Prometheus text exposition of the agent's state (user/agent/metrics.h;
 * metrics_http.c serves it). Core part: no libbpf; the counters arrive
 * summed, the attachments as plain records.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/attach_opts.h"
#include "core/counters.h"
#include "agent/metrics.h"

const char *const bg_metrics_source_states[] = {
	"ok", "failing", "stale", "pending", NULL,
};

/* ---- Writing the format ------------------------------------------------ */

struct label {
	const char *key, *val;
};

/* HELP text: backslash and newline escaped. */
static void put_help(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

/* A label value: backslash, double quote and newline escaped. */
static void put_label_value(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '"')
			fputs("\\\"", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

/*
 * The shortest decimal that reads back as v (Prometheus parses values
 * with Go's ParseFloat): "0.001", not the "0.0010000000000000000208" of a
 * fixed %.17g. printf's %g follows LC_NUMERIC; the agent stays in the C
 * locale.
 */
static void put_double(FILE *out, double v)
{
	char buf[40];
	int prec;

	if (isnan(v)) {
		fputs("NaN", out);
		return;
	}
	if (isinf(v)) {
		fputs(v > 0 ? "+Inf" : "-Inf", out);
		return;
	}
	/* whole numbers (timestamps, counts) without an exponent: exact
	 * up to 2^53, where every integer is a double */
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		fprintf(out, "%.0f", v);
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (prec == 17)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, out);
}

static void family(FILE *out, const char *name, const char *type,
		   const char *help)
{
	fprintf(out, "# HELP %s ", name);
	put_help(out, help);
	fprintf(out, "\n# TYPE %s %s\n", name, type);
}

static void sample_name(FILE *out, const char *name, const struct label *l,
			int nl)
{
	int i;

	fputs(name, out);
	if (!nl)
		return;
	fputc('{', out);
	for (i = 0; i < nl; i++) {
		fprintf(out, "%s%s=\"", i ? "," : "", l[i].key);
		put_label_value(out, l[i].val);
		fputc('"', out);
	}
	fputc('}', out);
}

/* Integers as integers: a 64-bit counter keeps all its digits. */
static void sample_u64(FILE *out, const char *name, const struct label *l,
		       int nl, uint64_t v)
{
	sample_name(out, name, l, nl);
	fprintf(out, " %" PRIu64 "\n", v);
}

static void sample_double(FILE *out, const char *name, const struct label *l,
			  int nl, double v)
{
	sample_name(out, name, l, nl);
	fputc(' ', out);
	put_double(out, v);
	fputc('\n', out);
}

/* ---- Datapath counters ------------------------------------------------- */

/*
 * The families the datapath counters are shown in. A family has no label
 * (one counter) or one label whose values are the counters' names, less a
 * prefix, unless the counter gives its own.
 */
enum cnt_fam {
	FAM_UNMAPPED = 0, /* a counter nobody placed: test_metrics fails */
	FAM_SUM, /* BG_CNT_MALFORMED: the sum of the reasons, shown by them */
	FAM_PACKETS,
	FAM_FAMILY,
	FAM_VERDICT,
	FAM_FLAGGED,
	FAM_FRAGMENTS,
	FAM_NO_FILTER,
	FAM_ADDR_PROBES,
	FAM_ADDR_LOOKUPS,
	FAM_ADDR_ALLOWLISTED,
	FAM_EVENTS_LOST,
	FAM_DNS_QUERIES,
	FAM_DNS_PROBES,
	FAM_DNS_LOOKUPS,
	FAM_DNS_ALLOWLISTED,
	FAM_DNS_UNJUDGED,
	FAM_ADDR_BLOOM_FP,
	FAM_DNS_BLOOM_FP,
	FAM_UNPARSED_DROPPED,
	FAM_ADDR_PROTECTED,
	FAM__COUNT,
};

static const struct {
	const char *name, *help;
	const char *label; /* NULL: no label */
	const char *strip; /* prefix of the counter names left out */
} cnt_families[FAM__COUNT] = {
	[FAM_PACKETS] = { "bloomgate_packets_total",
			  "Frames the XDP program saw, on every attached interface." },
	[FAM_FAMILY] = { "bloomgate_packets_by_family_total",
			 "Frames by parsed family; a malformed frame with no IP header is in none.",
			 "family", "" },
	[FAM_VERDICT] = { "bloomgate_verdicts_total",
			  "What became of each frame: dropped (XDP_DROP), passed (XDP_PASS, flagged ones included), answered (DNS reply, XDP_TX); sums to bloomgate_packets_total.",
			  "verdict", "" },
	[FAM_FLAGGED] = { "bloomgate_flagged_packets_total",
			  "Frames passed with an event (action flag); counted in verdict=\"passed\" too." },
	[FAM_FRAGMENTS] = { "bloomgate_fragments_total",
			    "IP fragments, judged by address only." },
	[FAM_NO_FILTER] = { "bloomgate_no_filter_packets_total",
			    "IP frames passed because no filter was loaded." },
	[FAM_ADDR_PROBES] = { "bloomgate_address_probes_total",
			      "Bloom, bitmap and range lookups made for addresses." },
	[FAM_ADDR_LOOKUPS] = { "bloomgate_address_lookups_total",
			       "Addresses judged: positive (listed, confirmed by the exact stage) or negative (not listed).",
			       "result", "" },
	[FAM_ADDR_ALLOWLISTED] = { "bloomgate_address_allowlisted_total",
				   "Address positives passed because the allowlist covers them." },
	[FAM_EVENTS_LOST] = { "bloomgate_events_lost_total",
			      "Events not sent because the ring buffer was full." },
	[FAM_DNS_QUERIES] = { "bloomgate_dns_queries_total",
			      "DNS queries parsed to a name." },
	[FAM_DNS_PROBES] = { "bloomgate_dns_probes_total",
			     "Bloom probes made for names." },
	[FAM_DNS_LOOKUPS] = { "bloomgate_dns_lookups_total",
			      "Names judged: positive (listed, confirmed by the exact stage) or negative (not listed).",
			      "result", "" },
	[FAM_DNS_ALLOWLISTED] = { "bloomgate_dns_allowlisted_total",
				  "Name positives passed because the allowlist covers them." },
	[FAM_DNS_UNJUDGED] = { "bloomgate_dns_unjudged_total",
			       "Packets to a DNS port not judged by name, by reason.",
			       "reason", "dns_" },
	[FAM_ADDR_BLOOM_FP] = { "bloomgate_address_bloom_false_positives_total",
			       "Addresses the Bloom part called maybe listed and the exact stage rejected: passed, counted among the negatives." },
	[FAM_DNS_BLOOM_FP] = { "bloomgate_dns_bloom_false_positives_total",
			      "Names the Bloom part called maybe listed and the exact stage rejected: passed, counted among the negatives." },
	[FAM_ADDR_PROTECTED] = { "bloomgate_address_protected_total",
				 "Address positives passed because the protected set holds them (the gateway's own addresses, its next hops, its resolvers, the operator's prefixes)." },
	[FAM_UNPARSED_DROPPED] = { "bloomgate_unparsed_dropped_total",
				   "Frames with no address to judge (cut or invalid headers, too many VLAN tags) dropped by attach --unparsed drop; counted in verdict=\"dropped\" and by malformed reason too." },
};

/* Where each counter goes; value: its label value when its name (less the
 * family's prefix) is not what a query would want to write. */
static const struct {
	enum cnt_fam fam;
	const char *value;
} cnt_map[BG_CNT__COUNT] = {
	[BG_CNT_PACKETS] = { FAM_PACKETS, NULL },
	[BG_CNT_IPV4] = { FAM_FAMILY, NULL },
	[BG_CNT_IPV6] = { FAM_FAMILY, NULL },
	[BG_CNT_NON_IP] = { FAM_FAMILY, NULL },
	[BG_CNT_FRAGMENTS] = { FAM_FRAGMENTS, NULL },
	[BG_CNT_PROBES] = { FAM_ADDR_PROBES, NULL },
	[BG_CNT_NEGATIVES] = { FAM_ADDR_LOOKUPS, "negative" },
	[BG_CNT_POSITIVES] = { FAM_ADDR_LOOKUPS, "positive" },
	[BG_CNT_DROPPED] = { FAM_VERDICT, NULL },
	[BG_CNT_FLAGGED] = { FAM_FLAGGED, NULL },
	[BG_CNT_PASSED] = { FAM_VERDICT, NULL },
	[BG_CNT_NO_FILTER] = { FAM_NO_FILTER, NULL },
	[BG_CNT_EVENTS_LOST] = { FAM_EVENTS_LOST, NULL },
	[BG_CNT_MALFORMED] = { FAM_SUM, NULL },
	[BG_CNT_ALLOWLISTED] = { FAM_ADDR_ALLOWLISTED, NULL },
	[BG_CNT_DNS_QUERIES] = { FAM_DNS_QUERIES, NULL },
	[BG_CNT_DNS_PROBES] = { FAM_DNS_PROBES, NULL },
	[BG_CNT_DNS_POSITIVES] = { FAM_DNS_LOOKUPS, "positive" },
	[BG_CNT_DNS_NEGATIVES] = { FAM_DNS_LOOKUPS, "negative" },
	[BG_CNT_DNS_RESPONSE] = { FAM_DNS_UNJUDGED, NULL },
	[BG_CNT_DNS_OPCODE] = { FAM_DNS_UNJUDGED, NULL },
	[BG_CNT_DNS_QDCOUNT] = { FAM_DNS_UNJUDGED, NULL },
	[BG_CNT_DNS_NAME_TOO_LONG] = { FAM_DNS_UNJUDGED, NULL },
	[BG_CNT_DNS_BAD_LABEL] = { FAM_DNS_UNJUDGED, NULL },
	[BG_CNT_DNS_TRUNCATED] = { FAM_DNS_UNJUDGED, NULL },
	[BG_CNT_ANSWERED] = { FAM_VERDICT, NULL },
	[BG_CNT_DNS_ALLOWLISTED] = { FAM_DNS_ALLOWLISTED, NULL },
	[BG_CNT_DNS_NO_PROG] = { FAM_DNS_UNJUDGED, NULL },
	[BG_CNT_BLOOM_FP] = { FAM_ADDR_BLOOM_FP, NULL },
	[BG_CNT_DNS_BLOOM_FP] = { FAM_DNS_BLOOM_FP, NULL },
	[BG_CNT_UNPARSED_DROPPED] = { FAM_UNPARSED_DROPPED, NULL },
	[BG_CNT_PROTECTED] = { FAM_ADDR_PROTECTED, NULL },
};

/* The label value of counter i in its family: the name from counters.c,
 * the one table, less the family's prefix. */
static const char *cnt_label_value(int i)
{
	const char *n = bg_counter_names[i];
	const char *strip = cnt_families[cnt_map[i].fam].strip;
	size_t len = strlen(strip);

	if (cnt_map[i].value)
		return cnt_map[i].value;
	return strncmp(n, strip, len) ? n : n + len;
}

static void render_counters(FILE *out, const struct bg_counters *c)
{
	int f, i;

	for (f = FAM_PACKETS; f < FAM__COUNT; f++) {
		int seen = 0;

		for (i = 0; i < BG_CNT__COUNT; i++) {
			struct label l;

			if (cnt_map[i].fam != (enum cnt_fam)f)
				continue;
			if (!seen++)
				family(out, cnt_families[f].name, "counter",
				       cnt_families[f].help);
			l.key = cnt_families[f].label;
			l.val = l.key ? cnt_label_value(i) : NULL;
			sample_u64(out, cnt_families[f].name, &l, !!l.key,
				   c->cnt[i]);
		}
	}

	family(out, "bloomgate_malformed_packets_total", "counter",
	       "Malformed frames, by the reason the parser gave up (passed, unless attach --unparsed drop dropped them).");
	for (i = 0; i < BG_MAL__COUNT; i++) {
		struct label l = { "reason", bg_malformed_names[i] };

		sample_u64(out, "bloomgate_malformed_packets_total", &l, 1,
			   c->malformed[i]);
	}
}

/* One sample per attachment; netns is a label because the same ifindex
 * can be attached in two namespaces, and two series may not share their
 * labels. */
static void render_interfaces(FILE *out, const struct bg_attach_rec *recs,
			      int n)
{
	static const char *name = "bloomgate_interface_info";
	int i, j, seen = 0;

	for (i = 0; i < n; i++) {
		const struct bg_attach_rec *r = &recs[i];
		char ifindex[16], netns[16], ports[8 * BG_DNS_PORTS_MAX] = "";
		size_t off = 0;
		struct label l[8];

		if (!r->ifindex)
			continue;
		if (!seen++)
			family(out, name, "gauge",
			       "An interface bloomgate is attached to, with its settings (value 1).");
		snprintf(ifindex, sizeof(ifindex), "%u", r->ifindex);
		snprintf(netns, sizeof(netns), "%u", r->netns_ino);
		for (j = 0; j < BG_DNS_PORTS_MAX; j++)
			if (r->dns_ports[j])
				off += snprintf(ports + off, sizeof(ports) - off,
						"%s%u", off ? "," : "",
						r->dns_ports[j]);
		l[0] = (struct label){ "ifindex", ifindex };
		l[1] = (struct label){ "netns", netns };
		l[2] = (struct label){ "mode", bg_enum_name(bg_mode_values,
							    r->mode & BG_ATTACH_MODE_MASK) };
		l[3] = (struct label){ "match", bg_enum_name(bg_match_values, r->match) };
		l[4] = (struct label){ "action", bg_enum_name(bg_action_values, r->action) };
		l[5] = (struct label){ "dns_action",
				       bg_enum_name(bg_dns_action_values, r->dns_action) };
		l[6] = (struct label){ "dns_ports", ports };
		/* a flag in mode (abi.h); 0 in older records: pass */
		l[7] = (struct label){ "unparsed",
				       bg_enum_name(bg_unparsed_values,
						    r->mode & BG_ATTACH_F_UNPARSED_DROP ?
							    BG_UNPARSED_DROP :
							    BG_UNPARSED_PASS) };
		sample_u64(out, name, l, 8, 1);
	}
}

/* ---- Sources and filter ------------------------------------------------ */

/* The families every source has: a value of its record each. */
static void render_records(FILE *out, const struct source *s, size_t n)
{
	static const struct {
		const char *name, *type, *help;
		size_t off; /* of a uint64_t in bg_src_record; SIZE_MAX:
			     * last_ok */
	} fams[] = {
		{ "bloomgate_source_entries", "gauge",
		  "Entries in the source's last good copy.",
		  offsetof(struct bg_src_record, entries) },
		{ "bloomgate_source_rejected_lines", "gauge",
		  "Lines of the source's last good copy its parse rejected "
		  "(the agent's log names the first of them).",
		  offsetof(struct bg_src_record, rejected) },
		{ "bloomgate_source_last_success_timestamp_seconds", "gauge",
		  "When the source last fetched or read successfully (unix time; 0: never).",
		  SIZE_MAX },
		{ "bloomgate_source_fetches_total", "counter",
		  "Fetch or read attempts.",
		  offsetof(struct bg_src_record, fetches) },
		{ "bloomgate_source_fetch_failures_total", "counter",
		  "Failed attempts (the last good copy stayed in use).",
		  offsetof(struct bg_src_record, failures) },
		{ "bloomgate_source_not_modified_total", "counter",
		  "Fetches answered 304 Not Modified.",
		  offsetof(struct bg_src_record, not_modified) },
	};
	size_t f, i;

	for (f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
		family(out, fams[f].name, fams[f].type, fams[f].help);
		for (i = 0; i < n; i++) {
			struct label l = { "source", s[i].cfg->list.name };

			if (fams[f].off == SIZE_MAX)
				sample_double(out, fams[f].name, &l, 1,
					      s[i].rec.last_ok);
			else
				sample_u64(out, fams[f].name, &l, 1,
					   *(const uint64_t *)((const char *)&s[i].rec +
							       fams[f].off));
		}
	}
}

/* The sources of decisions: by origin, and refused by reason. */
static void render_decisions(FILE *out, const struct source *s, size_t n)
{
	size_t i, k;

	for (i = 0; i < n && !s[i].ops->decisions; i++)
		;
	if (i == n)
		return;
	family(out, "bloomgate_crowdsec_decisions", "gauge",
	       "Ban decisions of a crowdsec: source in the filter, by origin "
	       "(the datapath counts drops per verdict, not per origin).");
	for (i = 0; i < n; i++)
		for (k = 0; s[i].ops->decisions && k < s[i].n_origins; k++) {
			struct label l[2] = { { "source", s[i].cfg->list.name },
					      { "origin", s[i].origins[k].name } };

			sample_u64(out, "bloomgate_crowdsec_decisions", l, 2,
				   s[i].origins[k].n);
		}
	family(out, "bloomgate_crowdsec_ignored_total", "counter",
	       "Decisions of a crowdsec: source refused, by reason: type "
	       "(not a ban), scope (not Ip or Range), value, too_wide, "
	       "duration, expired, malformed, too_large (each time the API "
	       "sends one; the agent's log names the first ten of a pull).");
	for (i = 0; i < n; i++)
		for (k = 0; s[i].ops->decisions && k < s[i].refused.n; k++) {
			struct label l[2] = { { "source", s[i].cfg->list.name },
					      { "reason", s[i].refused.v[k].reason } };

			sample_u64(out, "bloomgate_crowdsec_ignored_total", l, 2,
				   s[i].refused.v[k].count);
		}
}

static void render_sources(FILE *out, const struct source *s, size_t n)
{
	size_t i, k;

	if (!n)
		return;
	render_records(out, s, n);
	render_decisions(out, s, n);
	/* Every known state for every source, one of them 1, so that a
	 * query for state="failing" == 1 sees the source at 0 before it
	 * fails; a state outside the list is shown too rather than lost. */
	family(out, "bloomgate_source_state", "gauge",
	       "The source's state: 1 for the current one, 0 for the others.");
	for (i = 0; i < n; i++) {
		const char *cur = s[i].state ? s[i].state : "pending";
		int known = 0;

		for (k = 0; bg_metrics_source_states[k]; k++) {
			struct label l[2] = { { "source", s[i].cfg->list.name },
					      { "state", bg_metrics_source_states[k] } };
			int on = !strcmp(cur, bg_metrics_source_states[k]);

			known |= on;
			sample_u64(out, "bloomgate_source_state", l, 2, on);
		}
		if (!known) {
			struct label l[2] = { { "source", s[i].cfg->list.name },
					      { "state", cur } };

			sample_u64(out, "bloomgate_source_state", l, 2, 1);
		}
	}
}

static void gauge_u64(FILE *out, const char *name, const char *help,
		      uint64_t v)
{
	family(out, name, "gauge", help);
	sample_u64(out, name, NULL, 0, v);
}

static void gauge_double(FILE *out, const char *name, const char *help,
			 double v)
{
	family(out, name, "gauge", help);
	sample_double(out, name, NULL, 0, v);
}

static void counter_u64(FILE *out, const char *name, const char *help,
			uint64_t v)
{
	family(out, name, "counter", help);
	sample_u64(out, name, NULL, 0, v);
}

static void render_filter(FILE *out, const struct bg_metrics_view *v)
{
	const struct bg_metrics_filter *f = v->filter;

	gauge_u64(out, "bloomgate_filter_loaded",
		  "1 when a filter is published in the datapath.", !!f);
	if (f) {
		gauge_u64(out, "bloomgate_filter_keys",
			  "Keys in the live filter's Bloom part.", f->keys);
		gauge_u64(out, "bloomgate_filter_bytes",
			  "Size of the live filter's map.", f->bytes);
		/* Two figures a key, each named for what it is: the Bloom
		 * part's bits (in bytes: promtool's lint refuses "bits" for
		 * the base unit "bytes") and the whole map's bytes, load's
		 * "map bytes/key". */
		gauge_double(out, "bloomgate_filter_bloom_bytes_per_key",
			     "The live filter's Bloom part per key: its bits per key / 8 (the exact stage and the map's tables not included).",
			     f->bits_per_key / 8);
		gauge_double(out, "bloomgate_filter_map_bytes_per_key",
			     "The live filter's map per key: bloomgate_filter_bytes / bloomgate_filter_keys (Bloom part, exact stage, tables, header), as load reports it.",
			     f->keys ? (double)f->bytes / (double)f->keys : 0);
		gauge_double(out, "bloomgate_filter_predicted_false_positive_rate",
			     "Rate of wrong verdicts on unlisted addresses or names the live filter's size predicts (after the exact stage, when it has one).",
			     f->predicted_fpr);
		gauge_u64(out, "bloomgate_filter_generation",
			  "Filters this agent published since it started (+1 for an adopted one).",
			  f->generation);
		gauge_double(out, "bloomgate_filter_build_duration_seconds",
			     "Time the last rebuild took to parse and build.",
			     f->build_seconds);
		gauge_double(out, "bloomgate_filter_swap_duration_seconds",
			     "Time the last rebuild took to publish the new filter.",
			     f->swap_seconds);
	}
	gauge_u64(out, "bloomgate_filter_foreign",
		  "1 when the live filter is not the one this agent built (replaced by a forced load): the agent's lists are not enforced until its next rebuild.",
		  (uint64_t)!!v->foreign);
	if (v->art_live)
		gauge_u64(out, "bloomgate_artifact_generation",
			  "Generation of the artifact the live filter was loaded from "
			  "(the fleet store's number; 0 for an artifact file).",
			  v->art_generation);
	if (v->fleet)
		gauge_u64(out, "bloomgate_fleet_connected",
			  "1 while the agent's link to the fleet store is connected "
			  "(the filter stays live either way).",
			  (uint64_t)!!v->fleet_up);
	counter_u64(out, "bloomgate_filter_rebuilds_total",
		    "Rebuilds that published a filter.", v->rebuilds);
	counter_u64(out, "bloomgate_filter_rebuild_failures_total",
		    "Rebuilds that failed (the previous filter stayed live).",
		    v->rebuild_failures);
}

/* The control socket: its followers of the events, and what it refused
 * or cut off (a read-only user cannot make the agent hold more). */
static void render_control(FILE *out, const struct bg_metrics_control *c)
{
	struct label l = { "reason", "followers" };

	gauge_u64(out, "bloomgate_control_followers",
		  "Control socket peers following the events (bloomgate events through the agent).",
		  c->followers);
	gauge_u64(out, "bloomgate_control_connections",
		  "Control socket connections open.", c->connections);
	counter_u64(out, "bloomgate_control_events_unsent_total",
		    "Events not sent to a follower that read more slowly than they came.",
		    c->events_unsent);
	counter_u64(out, "bloomgate_control_followers_cut_total",
		    "Followers cut off for staying behind the events.", c->followers_cut);
	family(out, "bloomgate_control_refused_total", "counter",
	       "Requests refused at a bound: a follower of the events past the followers' bounds, a connection past the connections' bounds.");
	sample_u64(out, "bloomgate_control_refused_total", &l, 1, c->refused_followers);
	l.val = "connections";
	sample_u64(out, "bloomgate_control_refused_total", &l, 1, c->refused_connections);
}

int bg_metrics_render(FILE *out, const struct bg_metrics_view *v)
{
	struct label build[2] = { { "version", BG_VERSION },
				  { "abi", BG_TEXTIFY(BG_ABI_VERSION) } };

	family(out, "bloomgate_build_info", "gauge",
	       "The bloomgate release and datapath ABI (value 1).");
	sample_u64(out, "bloomgate_build_info", build, 2, 1);
	gauge_double(out, "bloomgate_agent_start_time_seconds",
		     "When the agent started (unix time).", v->start_time);
	if (v->counters)
		render_counters(out, v->counters);
	if (v->recs)
		render_interfaces(out, v->recs, v->nrecs);
	render_filter(out, v);
	if (v->control)
		render_control(out, v->control);
	render_sources(out, v->sources, v->nsources);
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}
