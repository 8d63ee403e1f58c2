/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A CrowdSec local API as a source of the agent (a `crowdsec:` list): the
 * bouncer's stream (GET /v1/decisions/stream with the bouncer key in
 * X-Api-Key: the whole set at the first pull, startup=true, then what was
 * added and deleted since), kept as a set of decisions by id. Decisions of
 * type ban and scope Ip or Range (IPv4 and IPv6) are block entries; other
 * types and scopes are ignored and counted. A decision leaves the set when
 * the API deletes it or its duration runs out, also while the API cannot be
 * reached (its end is known).
 *
 * The set is written as the source's copy, an address list the rebuild
 * parses like any other, one decision a line:
 *
 *   192.0.2.7 # crowdsec decision 1234 origin=cscli until=1796012345 scenario=ssh-bf
 *
 * (the comment is what `check` quotes, and what a restarted agent reads the
 * set back from: the last good copy across restarts and API outages).
 */
#ifndef BLOOMGATE_AGENT_CROWDSEC_H
#define BLOOMGATE_AGENT_CROWDSEC_H

#include <stddef.h>
#include <stdint.h>

#include "agent/config.h"

struct bg_cs_decision {
	int64_t id;
	char value[64]; /* "192.0.2.7", "198.51.100.0/24", "2001:db8::/48" */
	char origin[32];
	char scenario[160]; /* printable ASCII, no newline */
	double until; /* unix time */
};

#define BG_CS_RESYNC 60.0 /* s */
#define BG_CS_BULK 1000 /* decisions a pull: a bulk */

/* Decisions counted per origin (metrics). */
#define BG_CS_ORIGINS_MAX 16
struct bg_cs_origin_count {
	char origin[32];
	uint64_t n;
};

/* A source's decisions: its fetch jobs' alone (one at a time). */
struct bg_cs_state {
	struct bg_cs_decision *v; /* sorted by id */
	size_t n, cap;
	int loaded; /* read back from the copy (or there was none) */
	int synced; /* a startup pull made in this process */
	/* the whole set again (startup=true) at the next pull: after a bulk
	 * (the pull after pulls of many decisions), and every
	 * BG_CS_RESYNC seconds: the local API's stream can miss decisions
	 * committed while a pull ran (seen with 1.4.6: 50 of a 100k import),
	 * which only a whole pull finds */
	int bulk, want_full;
	double last_full;
	uint64_t version; /* bumped at every change of the set */
	uint64_t written; /* the version the last copy written has */
	/* ignored since the start: decisions of another type or scope */
	uint64_t ignored_type, ignored_scope;
	uint64_t pulls, pull_failures;
};

void bg_cs_state_free(struct bg_cs_state *st);

/* What one pull changed. */
struct bg_cs_pull_result {
	size_t added, deleted, expired, ignored;
	int http_status;
};

/*
 * One pull of the stream of the local API at l->list.url with the key in
 * l->api_key_file: the whole set when !st->synced (then synced), else the
 * changes; the filters of l in the query. Then the decisions whose time
 * ran out go. 0, or -errno with why (the key's file unreadable, no
 * answer, HTTP 403: the key refused, a body that is not the API's JSON);
 * the set is unchanged on any failure but expiry (bg_cs_expire()).
 * abort: nonzero stops a transfer in flight.
 */
int bg_cs_pull(const struct bg_cfg_list *l, struct bg_cs_state *st,
	       const int *abort, struct bg_cs_pull_result *r, char *why,
	       size_t whylen);

/* Drops the decisions whose time ran out by now; how many. */
size_t bg_cs_expire(struct bg_cs_state *st, double now);

/* Writes the set to path as the address list above (atomically: a
 * temporary file beside it renamed); st->written = st->version. 0 or
 * -errno. */
int bg_cs_write(struct bg_cs_state *st, const char *path, const char *origin);

/* Reads a copy written by bg_cs_write() back into st (a restart); a
 * missing file is an empty set. 0 or -errno. */
int bg_cs_read(struct bg_cs_state *st, const char *path);

/* The set's decisions per origin, into v (at most max); how many. */
size_t bg_cs_origins(const struct bg_cs_state *st, struct bg_cs_origin_count *v,
		     size_t max);

/* "crowdsec decision 1234 (origin cscli, scenario ssh-bf)" from a copy's
 * line (the text after the address); 0, or -1 when it is not one. */
int bg_cs_line_text(const char *line, char *out, size_t len);

#endif
