// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A CrowdSec local API's decision stream, parsed as it comes in
 * (agent/csstream.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "agent/csstream.h"
#include "bloomgate/bloom.h"
#include "core/lists.h"

const char *const bg_cs_ign_names[BG_CS_IGN_MAX] = {
	[BG_CS_IGN_TYPE] = "type",
	[BG_CS_IGN_SCOPE] = "scope",
	[BG_CS_IGN_VALUE] = "value",
	[BG_CS_IGN_TOO_WIDE] = "too_wide",
	[BG_CS_IGN_DURATION] = "duration",
	[BG_CS_IGN_EXPIRED] = "expired",
	[BG_CS_IGN_MALFORMED] = "malformed",
	[BG_CS_IGN_TOO_LARGE] = "too_large",
};

/* ---- durations ------------------------------------------------------------ */

#define NS_S 1000000000ull
/* Go's time.Duration is an int64 of ns: 2562047h47m16.854775807s at most;
 * one more ns for a negative one */
#define NS_MAX ((uint64_t)INT64_MAX)
/* no duration the API writes is longer */
#define DUR_TEXT_MAX 40

/* "N" or "N.F" in [p, e), all of it, of a unit worth unit_ns into *ns: 0;
 * -1 when it is not one (a leading zero, more fraction digits than the
 * unit has ns digits), -2 when past NS_MAX + 1. */
static int number(const char *p, const char *e, uint64_t unit_ns, uint64_t *ns)
{
	uint64_t v = 0, f = 0, scale = 1;
	const char *d = p;

	for (; p < e && *p >= '0' && *p <= '9'; p++) {
		if (v > (NS_MAX + 1) / 10)
			return -2;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == d || (p - d > 1 && *d == '0'))
		return -1;
	if (v > (NS_MAX + 1) / unit_ns)
		return -2;
	*ns = v * unit_ns;
	if (p < e && *p == '.') {
		for (d = ++p; p < e && *p >= '0' && *p <= '9'; p++) {
			if (scale * 10 > unit_ns)
				return -1;
			f = f * 10 + (uint64_t)(*p - '0');
			scale *= 10;
		}
		if (p == d)
			return -1;
		/* below one unit: exact in ns (the digits are bounded so) */
		*ns += f * (unit_ns / scale);
	}
	if (p != e)
		return -1;
	return *ns > NS_MAX + 1 ? -2 : 0;
}

/* The unit at p: its length and *ns, 0 when none. µ is U+00B5 (what Go
 * writes) or U+03BC (which Go reads too). */
static size_t unit(const char *p, const char *e, uint64_t *ns)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = { { "ns", 1 }, { "\xc2\xb5s", 1000 }, { "\xce\xbcs", 1000 },
		      { "ms", 1000000 }, { "h", 3600 * NS_S }, { "m", 60 * NS_S },
		      { "s", NS_S } };
	size_t i, l;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		l = strlen(units[i].name);
		if ((size_t)(e - p) >= l && !memcmp(p, units[i].name, l)) {
			*ns = units[i].ns;
			return l;
		}
	}
	return 0;
}

/*
 * Go's String() writes either a sub-second amount alone, in ns, µs or ms
 * ("1.5µs", "500ms"), or seconds, after minutes, after hours: each larger
 * unit followed by every smaller one down to the seconds ("59.9s", "1m0s",
 * "3h0m0s"), minutes and seconds below 60, a fraction on the seconds only.
 * Each part is its digits, then its unit; the unit read first tells what
 * the digits may be.
 */
int bg_cs_duration(const char *s, size_t n, int64_t *ns, const char **why)
{
	static const char not_one[] = "not a duration as the API writes one",
			  too_long[] = "longer than a duration can be";
	const char *p = s, *e = s + n, *q;
	uint64_t total = 0, v, u;
	/* 0: nothing yet; 1: hours read; 2: minutes; 3: the last part */
	int neg = 0, step = 0, r;
	size_t l;

	*why = not_one;
	if (!s || !n || n > DUR_TEXT_MAX)
		return -1;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	while (p < e) {
		if (step == 3)
			return -1; /* nothing after the seconds */
		for (q = p; q < e && ((*q >= '0' && *q <= '9') || *q == '.'); q++)
			;
		l = unit(q, e, &u);
		if (!l || (r = number(p, q, u, &v)) == -1)
			return -1;
		if (r == -2) {
			*why = too_long;
			return -1;
		}
		if (u == 3600 * NS_S) {
			if (step || memchr(p, '.', (size_t)(q - p)))
				return -1;
			step = 1;
		} else if (u == 60 * NS_S) {
			if (step > 1 || memchr(p, '.', (size_t)(q - p)) || v >= 60 * u)
				return -1;
			step = 2;
		} else if (u == NS_S) {
			if (step == 1 || v >= 60 * u)
				return -1; /* "1h1s": the minutes are written too */
			step = 3;
		} else {
			if (step || v >= 1000 * u)
				return -1;
			step = 3;
		}
		if (v > NS_MAX + 1 - total) {
			*why = too_long;
			return -1;
		}
		total += v;
		p = q + l;
	}
	if (step != 3)
		return -1; /* "5m", "1h", "-": Go writes "5m0s", "1h0m0s" */
	if (total > NS_MAX + (uint64_t)neg) {
		*why = too_long;
		return -1;
	}
	*ns = neg ? (int64_t)(0 - total) : (int64_t)total;
	return 0;
}

/* ---- values ----------------------------------------------------------------- */

int bg_cs_value(const char *v, size_t n, int range, const struct bg_cs_limits *lim,
		union bg_cs_key *key, const char **why)
{
	union bg_cs_key k;
	unsigned int plen, full, max;
	int kind;

	memset(&k, 0, sizeof(k));
	if (!v) {
		*why = "absent";
		return BG_CS_IGN_VALUE;
	}
	kind = bg_list_entry(v, n, &k.k4, &k.k6, why);
	if (!kind)
		return BG_CS_IGN_VALUE;
	plen = kind == BG_KEY_IPV4 ? k.k4.plen : k.k6.plen;
	full = kind == BG_KEY_IPV4 ? 32 : 128;
	max = kind == BG_KEY_IPV4 ? lim->max_range4 : lim->max_range6;
	if (!range && plen != full) {
		*why = "a prefix, not an address (scope Ip)";
		return BG_CS_IGN_VALUE;
	}
	/* the lists' own bound on wide prefixes too: the source's copy is
	 * read by the list parser without the opt-in */
	if (plen < max || bg_key_wide(kind, &k.k4, &k.k6)) {
		*why = kind == BG_KEY_IPV4 ? "a prefix wider than max_range_v4" :
					     "a prefix wider than max_range_v6";
		return BG_CS_IGN_TOO_WIDE;
	}
	*key = k;
	return -1;
}

/* ---- one element -------------------------------------------------------------- */

/* The string member k of o: 1 and its bytes, 0 absent (or null), -1 of
 * another type. */
static int field(struct json_object *o, const char *k, const char **p, size_t *len)
{
	struct json_object *v;

	*p = NULL;
	*len = 0;
	if (!json_object_object_get_ex(o, k, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return -1;
	*p = json_object_get_string(v);
	*len = (size_t)json_object_get_string_len(v);
	return 1;
}

static int refuse(struct bg_cs_elem *e, int why, const char *detail)
{
	e->refused = why;
	e->detail = detail;
	return why;
}

static int is_word(const char *p, size_t n, const char *w)
{
	return p && n == strlen(w) && !strncasecmp(p, w, n);
}

/* An element's object checked into *e: -1 taken, else why not. */
static int check(struct json_object *o, const struct bg_cs_limits *lim,
		 struct bg_cs_elem *e)
{
	const char *type, *scope, *dur, *why;
	size_t type_len, scope_len, dur_len;
	struct json_object *id;
	int r;

	if (!json_object_is_type(o, json_type_object))
		return refuse(e, BG_CS_IGN_MALFORMED, "not an object");
	if (json_object_object_get_ex(o, "id", &id) &&
	    json_object_is_type(id, json_type_int) && json_object_get_int64(id) > 0)
		e->id = json_object_get_int64(id);
	if (field(o, "value", &e->value, &e->value_len) < 0 ||
	    field(o, "origin", &e->origin, &e->origin_len) < 0 ||
	    field(o, "scenario", &e->scenario, &e->scenario_len) < 0 ||
	    field(o, "type", &type, &type_len) < 0 ||
	    field(o, "scope", &scope, &scope_len) < 0 ||
	    field(o, "duration", &dur, &dur_len) < 0)
		return refuse(e, BG_CS_IGN_MALFORMED, "a field that is not a string");
	if (!e->id)
		return refuse(e, BG_CS_IGN_MALFORMED, "no id (a positive integer)");
	if (e->deleted)
		return -1; /* its id is all that is needed */
	if (!is_word(type, type_len, "ban"))
		return refuse(e, BG_CS_IGN_TYPE, "not a ban");
	if (!is_word(scope, scope_len, "ip") && !is_word(scope, scope_len, "range"))
		return refuse(e, BG_CS_IGN_SCOPE, "not Ip or Range");
	r = bg_cs_value(e->value, e->value_len, is_word(scope, scope_len, "range"), lim,
			&e->key, &why);
	if (r >= 0)
		return refuse(e, r, why);
	/* 1.4.6 writes a duration in every decision: one without is not
	 * taken as a ban without end */
	if (!dur)
		return refuse(e, BG_CS_IGN_DURATION, "absent");
	if (bg_cs_duration(dur, dur_len, &e->ns, &why))
		return refuse(e, BG_CS_IGN_DURATION, why);
	if (e->ns <= 0)
		return refuse(e, BG_CS_IGN_EXPIRED, "its duration ran out");
	return -1;
}

/* ---- the scanner -------------------------------------------------------------- */

enum { M_OTHER, M_NEW, M_DELETED };
enum {
	S_TOP, /* '{' */
	S_KEY0, /* a member's name or '}' */
	S_KEY, /* a member's name */
	S_KEYSTR, /* in it */
	S_COLON,
	S_VALUE, /* a member's value */
	S_NULL, /* "null" of new or deleted */
	S_ARRAY0, /* an element or ']' */
	S_ELEM, /* an element */
	S_CUT, /* cutting a value out: an element or another member's */
	S_AFTER_ELEM, /* ',' or ']' */
	S_AFTER_VALUE, /* ',' or '}' */
	S_END, /* blanks only */
};

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int fail(struct bg_cs_stream *s, size_t at, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(s->why, sizeof(s->why), "at byte %" PRIu64 ": ", s->bytes + at);
	va_start(ap, fmt);
	vsnprintf(s->why + n, sizeof(s->why) - (size_t)n, fmt, ap);
	va_end(ap);
	s->err = -EBADMSG;
	return s->err;
}

int bg_cs_stream_init(struct bg_cs_stream *s, const struct bg_cs_limits *lim,
		      bg_cs_elem_fn fn, void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->lim = *lim;
	s->fn = fn;
	s->ctx = ctx;
	/* the one buffer: an element at most, and its terminating NUL */
	s->cap = BG_CS_ELEM_MAX + 1;
	s->buf = malloc(s->cap);
	s->tok = json_tokener_new_ex(BG_CS_DEPTH_MAX);
	if (!s->buf || !s->tok) {
		bg_cs_stream_free(s);
		return -ENOMEM;
	}
	/* JSON as RFC 8259 has it: no trailing comma, no single quotes */
	json_tokener_set_flags(s->tok, JSON_TOKENER_STRICT);
	return 0;
}

void bg_cs_stream_free(struct bg_cs_stream *s)
{
	free(s->buf);
	if (s->tok)
		json_tokener_free(s->tok);
	s->buf = NULL;
	s->tok = NULL;
}

/* The value cut out, whole: an element handed on, another member's value
 * checked to be JSON. 0 or -errno. */
static int value_done(struct bg_cs_stream *s, size_t at)
{
	struct bg_cs_elem e = { .deleted = s->member == M_DELETED, .refused = -1 };
	struct json_object *o;
	enum json_tokener_error je;
	int ret = 0;

	if (s->over) {
		s->over = 0;
		if (s->member == M_OTHER)
			return 0; /* not ours to judge: skipped */
		refuse(&e, BG_CS_IGN_TOO_LARGE, "larger than " BG_TEXTIFY(BG_CS_ELEM_MAX) " bytes");
		s->elems++;
		return s->fn(s->ctx, &e);
	}
	if (!s->n)
		return fail(s, at, "a value expected");
	s->buf[s->n] = 0;
	json_tokener_reset(s->tok);
	/* with its NUL: a number at the end is whole */
	o = json_tokener_parse_ex(s->tok, s->buf, (int)s->n + 1);
	je = json_tokener_get_error(s->tok);
	if (je != json_tokener_success || json_tokener_get_parse_end(s->tok) != s->n) {
		json_object_put(o);
		return fail(s, at, "not JSON (%s)", je != json_tokener_success ?
			    json_tokener_error_desc(je) : "text after a value");
	}
	if (s->member != M_OTHER) {
		if (!o)
			refuse(&e, BG_CS_IGN_MALFORMED, "null");
		else
			check(o, &s->lim, &e);
		s->elems++;
		ret = s->fn(s->ctx, &e);
	}
	json_object_put(o);
	return ret;
}

/* Cuts the value out of p[i..n) as far as it goes: the index after it
 * (then *done), or n. A scalar ends at the byte after it, which is left
 * to the next state. */
static size_t cut(struct bg_cs_stream *s, const char *p, size_t i, size_t n, int *done)
{
	for (; i < n; i++) {
		char c = p[i];

		if (s->in_str) {
			if (s->esc)
				s->esc = 0;
			else if (c == '\\')
				s->esc = 1;
			else if (c == '"')
				s->in_str = 0;
			/* a string alone is whole at its closing quote */
			if (!s->in_str && !s->depth)
				*done = 1;
		} else if (c == '"') {
			s->in_str = 1;
		} else if (c == '{' || c == '[') {
			if (++s->depth > BG_CS_DEPTH_MAX) {
				fail(s, i, "nested deeper than " BG_TEXTIFY(BG_CS_DEPTH_MAX));
				return n;
			}
		} else if (c == '}' || c == ']') {
			if (!s->depth) {
				*done = 1;
				return i;
			}
			if (!--s->depth)
				*done = 1;
		} else if ((c == ',' || is_blank(c)) && !s->depth) {
			*done = 1;
			return i;
		}
		if (s->n < BG_CS_ELEM_MAX)
			s->buf[s->n++] = c;
		else
			s->over = 1;
		if (*done)
			return i + 1;
	}
	return n;
}

static void cut_start(struct bg_cs_stream *s)
{
	s->state = S_CUT;
	s->n = 0;
	s->over = 0;
	s->depth = 0;
	s->in_str = s->esc = 0;
}

/* The member named by the key just read: its value's reading begins. */
static int member_value(struct bg_cs_stream *s, size_t i, char c)
{
	if (s->member == M_OTHER) {
		cut_start(s);
		return 0;
	}
	if (c == '[') {
		s->state = S_ARRAY0;
	} else if (c == 'n') {
		s->state = S_NULL;
		s->lit = 1;
	} else {
		return fail(s, i, "\"%s\" is not an array",
			    s->member == M_NEW ? "new" : "deleted");
	}
	s->seen |= 1 << s->member;
	return 1;
}

/* One byte outside a value being cut: 1 consumed, 0 to be read again
 * by the state it led to, or -errno. */
static int step(struct bg_cs_stream *s, size_t i, char c)
{
	if (s->state == S_KEYSTR) {
		if (s->esc) {
			s->esc = 0;
		} else if (c == '\\') {
			s->esc = 1;
		} else if (c == '"') {
			s->member = s->keyn == 3 && !memcmp(s->key, "new", 3) ? M_NEW :
				    s->keyn == 7 && !memcmp(s->key, "deleted", 7) ? M_DELETED :
										   M_OTHER;
			s->state = S_COLON;
			return 1;
		}
		if (s->keyn < sizeof(s->key))
			s->key[s->keyn] = c;
		s->keyn++;
		return 1;
	}
	if (s->state == S_NULL) {
		if (c != "null"[s->lit])
			return fail(s, i, "not JSON (a bad literal)");
		if (++s->lit == 4)
			s->state = S_AFTER_VALUE;
		return 1;
	}
	if (is_blank(c))
		return 1;
	switch (s->state) {
	case S_TOP:
		if (c != '{')
			return fail(s, i, "not a JSON object");
		s->state = S_KEY0;
		return 1;
	case S_KEY0:
	case S_KEY:
		if (c == '}' && s->state == S_KEY0) {
			s->state = S_END;
			return 1;
		}
		if (c != '"')
			return fail(s, i, "a member's name expected");
		s->state = S_KEYSTR;
		s->keyn = 0;
		s->esc = 0;
		return 1;
	case S_COLON:
		if (c != ':')
			return fail(s, i, "':' expected");
		s->state = S_VALUE;
		return 1;
	case S_VALUE:
		return member_value(s, i, c);
	case S_ARRAY0:
	case S_ELEM:
		if (c == ']' && s->state == S_ARRAY0) {
			s->state = S_AFTER_VALUE;
			return 1;
		}
		cut_start(s);
		return 0;
	case S_AFTER_ELEM:
	case S_AFTER_VALUE:
		if (c == ',') {
			s->state = s->state == S_AFTER_ELEM ? S_ELEM : S_KEY;
			return 1;
		}
		if (c != (s->state == S_AFTER_ELEM ? ']' : '}'))
			return fail(s, i, "'%c' or ',' expected",
				    s->state == S_AFTER_ELEM ? ']' : '}');
		s->state = s->state == S_AFTER_ELEM ? S_AFTER_VALUE : S_END;
		return 1;
	default: /* S_END */
		return fail(s, i, "text after the answer");
	}
}

int bg_cs_stream_feed(struct bg_cs_stream *s, const char *p, size_t n)
{
	size_t i = 0;
	int r;

	while (!s->err && i < n) {
		if (s->state == S_CUT) {
			int done = 0;

			i = cut(s, p, i, n, &done);
			if (done && !s->err) {
				r = value_done(s, i);
				if (r < 0 && !s->err)
					s->err = r;
				s->state = s->member == M_OTHER ? S_AFTER_VALUE :
								  S_AFTER_ELEM;
			}
			continue;
		}
		r = step(s, i, p[i]);
		if (r > 0)
			i++;
		else if (r < 0 && !s->err)
			s->err = r;
	}
	s->bytes += n;
	return s->err;
}

int bg_cs_stream_end(struct bg_cs_stream *s)
{
	if (s->err)
		return s->err;
	if (s->state != S_END)
		return fail(s, 0, "the answer ends before its end");
	if (!(s->seen & (1 << M_NEW | 1 << M_DELETED)))
		return fail(s, 0, "neither \"new\" nor \"deleted\" in it");
	return 0;
}
