/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The answer of a CrowdSec local API's decision stream (GET
 * /v1/decisions/stream), parsed as it comes in, in bounded memory:
 *
 *   {"deleted": [DECISION, ...] | null, "new": [DECISION, ...] | null}
 *
 * A small structural scanner (strings, escapes, depth) cuts the answer
 * into its members and the two arrays into elements, whatever the chunks
 * it arrives in; each element, at most BG_CS_ELEM_MAX bytes, is parsed
 * alone by json-c and checked here: its type and scope, its value by the
 * list parser's own rules (bg_list_entry(): what is taken is what the
 * source's copy reads back), a Range's width, its duration by the grammar
 * the API writes (Go's time.Duration.String()). A million decisions are
 * some 250 MB of JSON: never held whole, never one json-c tree. Nothing
 * here allocates per byte of the answer but the one element buffer.
 *
 * Everything in the answer is hostile until checked here: an element that
 * is not a decision the filter may hold is handed on refused, with the
 * reason (enum bg_cs_ign), never taken with a default; an answer that is
 * not the stream's JSON fails as a whole (the caller keeps its set).
 *
 * No libcurl, no agent: the fuzz target (tests/fuzz/fuzz_csstream.c) and
 * the unit tests drive it alone.
 */
#ifndef BLOOMGATE_AGENT_CSSTREAM_H
#define BLOOMGATE_AGENT_CSSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "bloomgate/abi.h"

/* Why a decision is not taken into the set, each counted by the source
 * (bloomgate_crowdsec_ignored_total{reason}, named by bg_cs_ign_names). */
enum bg_cs_ign {
	BG_CS_IGN_TYPE, /* "type": not a ban (captcha, throttle, ...) */
	BG_CS_IGN_SCOPE, /* "scope": not Ip or Range (Country, AS, ...) */
	/* "value": not one address (scope Ip) or one prefix (Range) as a
	 * list's line holding it alone is read, or absent */
	BG_CS_IGN_VALUE,
	BG_CS_IGN_TOO_WIDE, /* "too_wide": a Range wider than the bound */
	/* "duration": absent, not the API's duration text, or past the
	 * range of one (about 292 years) */
	BG_CS_IGN_DURATION,
	BG_CS_IGN_EXPIRED, /* "expired": its duration is not above 0 */
	/* "malformed": not an object, no positive integer id, a field of
	 * another JSON type than a string */
	BG_CS_IGN_MALFORMED,
	BG_CS_IGN_TOO_LARGE, /* "too_large": more than BG_CS_ELEM_MAX bytes */
	BG_CS_IGN_MAX
};
extern const char *const bg_cs_ign_names[BG_CS_IGN_MAX];

/* A decision's key: the address or prefix it bans, as the list parser
 * makes it (masked, an IPv4-mapped IPv6 value made IPv4). kind is the
 * first byte of either key: BG_KEY_IPV4 (k4) or BG_KEY_IPV6 (k6). */
union bg_cs_key {
	__u8 kind;
	struct bg_key4 k4;
	struct bg_key6 k6;
};

/* The widest Range taken, a prefix length per family: a shorter prefix
 * is refused (too_wide). */
struct bg_cs_limits {
	unsigned int max_range4; /* 0..32 */
	unsigned int max_range6; /* 0..128 */
};

/* The bytes of one element, at most: a decision of 1.4.6 is some 250. */
#define BG_CS_ELEM_MAX 16384
/* Nesting, at most, inside the answer (a decision is depth 3) */
#define BG_CS_DEPTH_MAX 16

/* One element of the "new" or "deleted" array, as checked. */
struct bg_cs_elem {
	int deleted; /* of "deleted" (only its id is read), else of "new" */
	int refused; /* -1: taken; else why not (enum bg_cs_ign) */
	const char *detail; /* refused: the reason in words ("bad prefix
			     * length (IPv4 allows 0..32)") */
	int64_t id; /* > 0; 0 when there was none to read */
	int64_t ns; /* the remaining duration, ns (new, taken: > 0) */
	union bg_cs_key key; /* new, taken */
	/* the fields as received (any bytes, NUL included: their lengths
	 * given), valid during the call; NULL when absent */
	const char *value, *origin, *scenario;
	size_t value_len, origin_len, scenario_len;
};

/* Called for every element in order; 0 goes on, a negative errno stops
 * the parse with it. */
typedef int (*bg_cs_elem_fn)(void *ctx, const struct bg_cs_elem *e);

struct bg_cs_stream {
	struct bg_cs_limits lim;
	bg_cs_elem_fn fn;
	void *ctx;
	int state; /* the scanner's (csstream.c) */
	int member; /* the member whose value is read: new, deleted, other */
	int seen; /* members seen: new and deleted (bits) */
	char key[16]; /* the member's name, its first bytes */
	size_t keyn;
	unsigned int lit; /* bytes of "null" matched */
	/* the value being cut out: an element, or another member's value */
	char *buf;
	size_t n, cap;
	int over; /* past BG_CS_ELEM_MAX: skipped, not kept */
	unsigned int depth;
	int in_str, esc;
	void *tok; /* json_tokener */
	uint64_t bytes, elems;
	int err; /* the first error, negative errno; then every call fails */
	char why[160]; /* and what it was, with its offset in the answer */
};

/* 0, or -ENOMEM. lim and fn are copied or kept. */
int bg_cs_stream_init(struct bg_cs_stream *s, const struct bg_cs_limits *lim,
		      bg_cs_elem_fn fn, void *ctx);
/*
 * The next n bytes of the answer, cut anywhere. 0, or a negative errno:
 * -EBADMSG when the answer is not the stream's JSON (s->why says where),
 * or fn's. After an error every call returns it again.
 */
int bg_cs_stream_feed(struct bg_cs_stream *s, const char *p, size_t n);
/* The answer ended: 0 when it was whole (one object holding "new" or
 * "deleted", nothing after it), else -EBADMSG (s->why). */
int bg_cs_stream_end(struct bg_cs_stream *s);
void bg_cs_stream_free(struct bg_cs_stream *s);

/*
 * A duration as the API writes it, Go's time.Duration.String(): "0s",
 * "1.5µs", "500ms", "59.9s", "1m0s", "3h59m58.123456789s", "-1.26s" (a
 * leading '-': gone by then), with Go's own bounds (minutes and seconds
 * below 60 after a larger unit; fractions of at most 9 digits; at most
 * 2562047h47m16.854775807s either way). s[0..n). 0 and *ns, or -1 and
 * *why: anything else ("5", "", "1h-5m", "nans", "1e400s", "90m0s") is
 * not one.
 */
int bg_cs_duration(const char *s, size_t n, int64_t *ns, const char **why);

/*
 * A decision's value v[0..n) of scope Ip (range 0) or Range (range 1):
 * one address (an Ip's /32 or /128 only), or one prefix no wider than
 * lim's, read by the list parser (bg_list_entry()). -1 and *key, or the
 * reason (BG_CS_IGN_VALUE, BG_CS_IGN_TOO_WIDE) and *why.
 */
int bg_cs_value(const char *v, size_t n, int range, const struct bg_cs_limits *lim,
		union bg_cs_key *key, const char **why);

#endif
