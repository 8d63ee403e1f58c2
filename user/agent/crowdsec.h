/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A CrowdSec local API as a source of the agent (a `crowdsec:` list): the
 * bouncer's stream (GET /v1/decisions/stream with the bouncer key in
 * X-Api-Key: the whole set at the first pull, startup=true, then what was
 * added and deleted since), kept as a set of decisions by id. Decisions of
 * type ban and scope Ip or Range (IPv4 and IPv6) whose value, width and
 * duration pass the checks of agent/csstream.h are block entries; every
 * other decision is refused, counted by reason and handed to a callback. A
 * decision leaves the set when the API deletes it or its duration runs
 * out, also while the API cannot be reached (its end is known).
 *
 * The set holds any number of decisions up to BG_CS_MAX in any id order:
 * a hash table by id (open addressing, grown by doubling) over a dense
 * array, each decision with its parsed key, so that the agent can build
 * the source's entries from memory (bg_cs_foreach()). The answer is
 * parsed as it streams in (agent/csstream.h), into a set aside, applied
 * only when the whole answer was read: a failed pull changes nothing but
 * expiry. Every loop of a pull (the transfer, the parse, the apply, the
 * copy written) reads the abort flag, so a stopping agent is not held.
 *
 * The set is written as the source's copy, an address list the rebuild
 * parses like any other, one decision a line, in id order:
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
#include "agent/csstream.h"

/* One decision of the set. */
struct bg_cs_decision {
	int64_t id; /* > 0 */
	double until; /* unix time */
	/* its origin ("cscli", "crowdsec", "CAPI") and scenario, printable
	 * ASCII, in the set's strings: bg_cs_str() */
	uint32_t origin, scenario;
	union bg_cs_key key; /* what it bans (key.kind: k4 or k6) */
};
_Static_assert(sizeof(struct bg_cs_decision) == 48, "bg_cs_decision: 48 bytes");

/* Decisions in a set, at most: a pull that would hold more fails (a
 * million is some 250 MB of JSON; the set takes 56 bytes a decision). */
#define BG_CS_MAX (8u << 20)
/* The bytes of a set's strings (origins and scenarios, each once), at
 * most: a pull that would need more fails, and the next is whole */
#define BG_CS_STRS_MAX (64u << 20)
/* An origin's and a scenario's length kept, at most (bytes) */
#define BG_CS_ORIGIN_MAX 31
#define BG_CS_SCENARIO_MAX 159

#define BG_CS_RESYNC 60.0 /* s */
#define BG_CS_BULK 1000 /* decisions a pull: a bulk */

/* Decisions counted per origin (metrics). */
#define BG_CS_ORIGINS_MAX 16
struct bg_cs_origin_count {
	char origin[32];
	uint64_t n;
};

/* Strings held once (origins and scenarios): NUL-terminated, back to
 * back in p (offset 0 is ""), found by their hash. */
struct bg_cs_strs {
	char *p;
	size_t len, cap;
	uint32_t *slot; /* offset + 1, 0: empty; nslot a power of two */
	size_t n, nslot;
};

/* A source's decisions: its fetch jobs' alone (one at a time). Zeroed is
 * an empty set. */
struct bg_cs_state {
	struct bg_cs_decision *v; /* the set, dense, in no order */
	size_t n, cap;
	/* by id: index + 1 into v, 0: empty; a power of two, >= 2 n */
	uint32_t *slot;
	size_t nslot;
	uint64_t seed; /* of the hash: random, per set */
	uint64_t probes; /* slots looked at by id, since the start */
	struct bg_cs_strs strs;
	int loaded; /* read back from the copy (or there was none) */
	int synced; /* a startup pull made in this process */
	/* the whole set again (startup=true) at the next pull: after a bulk
	 * (the pull after pulls of many decisions), and every
	 * BG_CS_RESYNC seconds: the local API's stream can miss decisions
	 * committed while a pull ran (seen with 1.4.6: 50 of a 100k import),
	 * which only a whole pull finds; also after a deletion that could
	 * not be read */
	int bulk, want_full;
	double last_full;
	uint64_t version; /* bumped at every change of the set */
	uint64_t written; /* the version the last copy written has */
	/* refused since the start, by reason (a decision the API sends
	 * again, as every whole pull does, is counted again) */
	uint64_t ignored[BG_CS_IGN_MAX];
	uint64_t pulls, pull_failures;
	char key_warned[256]; /* the key file's last warning, given once */
};

void bg_cs_state_free(struct bg_cs_state *st);

/* ---- the set ------------------------------------------------------------ */

/*
 * Puts a decision into the set (a new id, or the one of that id
 * replaced): origin and scenario are cut to their bounds and made
 * printable ASCII. 1 when the set changed (version bumped), 0 when it
 * held that decision already, -ENOMEM, -E2BIG (BG_CS_MAX decisions, or
 * BG_CS_STRS_MAX bytes of strings).
 */
int bg_cs_put(struct bg_cs_state *st, int64_t id, const union bg_cs_key *key,
	      double until, const char *origin, const char *scenario);
/* Deletes the decision of that id: 1, or 0 when there is none. */
int bg_cs_delete(struct bg_cs_state *st, int64_t id);
/* The decision of that id, or NULL (valid until the set changes). */
const struct bg_cs_decision *bg_cs_find(const struct bg_cs_state *st, int64_t id);
/* A string of the set (a decision's origin or scenario). */
const char *bg_cs_str(const struct bg_cs_state *st, uint32_t off);
/*
 * Every decision of the set, in no order, to fn (which must not change
 * the set); a nonzero return of fn stops and is returned. The agent
 * builds the source's entries from them (each decision's key, as the
 * list parser reads its copy's line). Direct access is st->v[0..n).
 */
int bg_cs_foreach(const struct bg_cs_state *st,
		  int (*fn)(void *ctx, const struct bg_cs_decision *d), void *ctx);
/* A key as its copy's line writes it: "192.0.2.7", "198.51.100.0/24". */
void bg_cs_key_text(const union bg_cs_key *k, char *buf, size_t len);

/* Drops the decisions whose time ran out by now; how many. */
size_t bg_cs_expire(struct bg_cs_state *st, double now);

/* ---- one pull ------------------------------------------------------------ */

/* A decision refused, as the refusal callback gets it. */
#define BG_CS_SHOW_MAX 80
struct bg_cs_refusal {
	int64_t id; /* 0: none could be read */
	int reason; /* enum bg_cs_ign */
	const char *name; /* bg_cs_ign_names[reason] */
	const char *detail; /* why, in words */
	int deleted; /* of the answer's "deleted" array */
	/* as received: bytes outside printable ASCII, '\\' and '\'' written
	 * \xNN, cut with "..." past the buffer */
	char value[BG_CS_SHOW_MAX];
	char origin[BG_CS_SHOW_MAX];
};

struct bg_cs_hooks {
	/* read atomically: nonzero stops the pull, wherever it is (the
	 * transfer, the parse, the apply), as failed; may be NULL */
	const int *abort;
	/* every decision refused, as it is read (counted in st->ignored
	 * too); may be NULL */
	void (*refused)(void *ctx, const struct bg_cs_refusal *r);
	void *ctx;
};

/* What one pull changed. */
struct bg_cs_pull_result {
	size_t added, deleted, expired, refused;
	int http_status;
	uint64_t bytes; /* of the answer, read */
	/* a warning to log (the key file's mode), once per set and cause;
	 * "" when none */
	char warn[256];
};

/*
 * One pull of the stream of the local API at l->list.url with the key in
 * l->api_key_file (bg_cs_read_key()): the whole set when !st->synced
 * (then synced) or when one is due, else the changes; the filters of l in
 * the query, l->timeout and l->max_bytes its bounds, l->cs_max_range4/6
 * the widest Range taken. Then the decisions whose time ran out go. 0, or
 * -errno with why (the key's file refused, no answer, HTTP 403: the key
 * refused, an answer that is not the stream's JSON or past a bound,
 * -EINTR: aborted); the set is unchanged on any failure but expiry.
 */
int bg_cs_pull(const struct bg_cfg_list *l, struct bg_cs_state *st,
	       const struct bg_cs_hooks *h, struct bg_cs_pull_result *r, char *why,
	       size_t whylen);

/*
 * The bouncer key in path: a regular file (a FIFO, a device or a
 * directory is refused at once, never waited on), of one key, at most
 * len - 1 bytes of printable ASCII (surrounding blanks dropped). 0, or
 * -errno with why. *warn (warnlen > 0) is set when the file is readable
 * or writable by others, writable by its group, or owned by another
 * user than root or this one; "" otherwise.
 */
int bg_cs_read_key(const char *path, char *key, size_t len, char *why,
		   size_t whylen, char *warn, size_t warnlen);

/* ---- the copy ------------------------------------------------------------ */

/* Writes the set to path as the address list above, in id order
 * (atomically: a temporary file beside it renamed); st->written =
 * st->version. 0 or -errno (-EINTR: abort, may be NULL). */
int bg_cs_write(struct bg_cs_state *st, const char *path, const char *origin,
		const int *abort);

/* Reads a copy written by bg_cs_write() back into st (a restart): lines
 * whose value l's checks refuse now are left out (and the set is then
 * to be written again: version != written). A missing file is an empty
 * set. 0 or -errno (-EINTR: abort, may be NULL). */
int bg_cs_read(struct bg_cs_state *st, const char *path, const struct bg_cfg_list *l,
	       const int *abort);

/* The set's decisions per origin, into v (at most max); how many. */
size_t bg_cs_origins(const struct bg_cs_state *st, struct bg_cs_origin_count *v,
		     size_t max);

/* "crowdsec decision 1234 (origin cscli, scenario ssh-bf)" from a copy's
 * line (the text after the address); 0, or -1 when it is not one. */
int bg_cs_line_text(const char *line, char *out, size_t len);

#endif
