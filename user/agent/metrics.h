/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's Prometheus metrics: a pure renderer of the text exposition
 * format 0.0.4 from a snapshot the agent gathers at scrape time, and a
 * small HTTP server (libmicrohttpd) answering GET /metrics with it.
 *
 * Nothing here keeps state between scrapes: the agent owns every number,
 * and a scrape costs one pass over what it already has (collected at
 * scrape time, so /metrics is never older than the request).
 *
 * The families, and the words of issue 9 they answer to (the datapath
 * counts totals, per CPU, summed; it splits packets by family only, and
 * nothing by interface or match: those are attributes of an attachment,
 * given by bloomgate_interface_info):
 *
 *   bloomgate_packets_total                 every frame the program saw
 *   bloomgate_packets_by_family_total{family="ipv4"|"ipv6"|"non_ip"}
 *                                           "by family"; a malformed frame
 *                                           without an IP header is in none
 *   bloomgate_verdicts_total{verdict="dropped"|"passed"|"answered"}
 *                                           "dropped/passed/answered": what
 *                                           became of each packet (XDP_DROP,
 *                                           XDP_PASS, XDP_TX); sums to
 *                                           bloomgate_packets_total
 *   bloomgate_flagged_packets_total         "flagged": passed with an event,
 *                                           a part of verdict="passed"
 *   bloomgate_interface_info{ifindex,netns,mode,match,action,dns_action,
 *                            dns_ports,unparsed} 1
 *                                           "by match": one per attachment
 *   bloomgate_malformed_packets_total{reason="trunc_eth"|...}
 *                                           "malformed reasons as labels"
 *   bloomgate_dns_unjudged_total{reason="response"|"opcode"|"qdcount"|
 *       "name_too_long"|"bad_label"|"truncated"|"no_prog"}
 *                                           "DNS reasons as labels": packets
 *                                           to a DNS port not judged by name
 *   bloomgate_address_lookups_total{result="positive"|"negative"},
 *   bloomgate_address_probes_total, bloomgate_address_allowlisted_total,
 *   bloomgate_dns_queries_total, bloomgate_dns_probes_total,
 *   bloomgate_dns_lookups_total{result}, bloomgate_dns_allowlisted_total,
 *   bloomgate_fragments_total, bloomgate_no_filter_packets_total,
 *   bloomgate_events_lost_total, bloomgate_address_protected_total,
 *   bloomgate_unparsed_dropped_total        the other datapath counters
 *   bloomgate_source_entries, _rejected_lines,
 *   _last_success_timestamp_seconds, _fetch_failures_total,
 *   _not_modified_total, _fetches_total,
 *   bloomgate_source_state{state} 0/1       per source, label source="NAME"
 *   bloomgate_crowdsec_decisions{origin}, bloomgate_crowdsec_ignored_total
 *   {reason}                                a source of decisions
 *   bloomgate_filter_loaded 0/1, bloomgate_filter_keys, _bytes,
 *   _bloom_bytes_per_key (the Bloom part's bits per key / 8: promtool's
 *   lint wants the base unit), _map_bytes_per_key (the map's: _bytes /
 *   _keys, load's "map bytes/key"), _predicted_false_positive_rate, _generation,
 *   _build_duration_seconds, _swap_duration_seconds (while one is loaded),
 *   bloomgate_filter_rebuilds_total, bloomgate_filter_rebuild_failures_total
 *   bloomgate_build_info{version,abi} 1, bloomgate_agent_start_time_seconds
 *   bloomgate_control_followers, _connections, _events_unsent_total,
 *   _followers_cut_total, _refused_total{reason}   the control socket
 *
 * Every datapath counter index maps to exactly one sample (the malformed
 * sum excepted: it is the sum of the reasons); tests/unit/test_metrics.c
 * fails when a counter is added to abi.h without a place here.
 */
#ifndef BLOOMGATE_METRICS_H
#define BLOOMGATE_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bloomgate/abi.h"
#include "agent/source.h"
#include "core/sources.h"
#include "core/version.h"

/* The states a source can be in, as bloomgate_source_state{state=...}
 * renders them (always all four, one of them 1); NULL-terminated. */
extern const char *const bg_metrics_source_states[];

/* The live filter, as the agent built (or adopted) it. */
struct bg_metrics_filter {
	uint64_t keys, bytes; /* Bloom keys, map bytes */
	double bits_per_key, predicted_fpr;
	uint64_t generation; /* filters published by this agent since start,
			      * + 1 when it adopted a pinned one */
	double build_seconds, swap_seconds; /* of the last rebuild */
};

/* The control socket: the followers of the events (`bloomgate events`
 * through the agent) and what it refused or cut off, since the start. */
struct bg_metrics_control {
	uint64_t followers, connections; /* now */
	uint64_t events_unsent; /* events not sent: the follower read too slowly */
	uint64_t followers_cut; /* followers cut off for it */
	uint64_t refused_followers, refused_connections; /* over a bound */
};

struct bg_metrics_view {
	/* Summed per-CPU datapath counters; NULL: not attached (no datapath
	 * families rendered). */
	const struct bg_counters *counters;
	/* Attachments, for bloomgate_interface_info; slots with ifindex 0
	 * are skipped. */
	const struct bg_attach_rec *recs;
	int nrecs;
	const struct bg_metrics_filter *filter; /* NULL: none loaded */
	/* Rebuilds since start, successful and failed: here rather than in
	 * the filter, because they count while no filter is loaded too. */
	uint64_t rebuilds, rebuild_failures;
	/* the agent's sources, as they are (agent/source.h): cfg->list.name,
	 * unique among them, labels their samples */
	const struct source *sources;
	size_t nsources;
	double start_time; /* agent start, unix time */
	/* 1: the live filter is not the one this agent published or
	 * adopted (a `bloomgate load --force` replaced it): its lists are not
	 * enforced until its next rebuild */
	int foreign;
	/* the live filter is an artifact's (artifact:, fleet:): its
	 * generation (the fleet store's; 0 for a file's) */
	int art_live;
	uint64_t art_generation;
	/* fleet: configured, and its link to the store connected now */
	int fleet, fleet_up;
	const struct bg_metrics_control *control; /* NULL: not shown */
};

/*
 * Writes v to out in the Prometheus text exposition format 0.0.4: every
 * family with # HELP and # TYPE, label values escaped, families without
 * samples left out. 0, or -EIO when out reports a write error.
 */
int bg_metrics_render(FILE *out, const struct bg_metrics_view *v);

/* The Content-Type of what bg_metrics_render() writes. */
#define BG_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/*
 * An HTTP server on addr ("127.0.0.1:9571", "[::1]:9571", "0.0.0.0:9571",
 * "localhost:9571" (the one name: 127.0.0.1; no DNS lookup); port 0: any
 * free one, see bg_metrics_port()), on its
 * own thread. GET (and HEAD) /metrics answers 200 with what render()
 * writes to its stream, 500 when render() returns nonzero; other paths
 * 404; other methods 405. render() runs on the server's thread, one
 * request at a time: the agent passes a callback that takes its own lock,
 * gathers a bg_metrics_view and calls bg_metrics_render().
 *
 * NULL on failure, with a message in err (an address that does not parse
 * or resolve, a port in use...).
 */
struct bg_metrics_server;
struct bg_metrics_server *bg_metrics_start(const char *addr,
					   int (*render)(void *ctx, FILE *out),
					   void *ctx, char *err, size_t errlen);
/* The TCP port the server listens on (the one chosen, for port 0). */
/* Connections cut off because their request was not in within the
 * server's deadline (slow or stuck clients), since the start. */
uint64_t bg_metrics_cut(struct bg_metrics_server *s);
int bg_metrics_port(const struct bg_metrics_server *s);
/* Stops the server (waits for a request in progress) and frees it; NULL
 * is a no-op. */
void bg_metrics_stop(struct bg_metrics_server *s);

#endif
