// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's config (user/agent/config.h). One concern, long because every key
 * is validated with its own message and line. Two passes: libyaml's events are
 * first turned into a small tree of scalars, sequences and maps, each with
 * its line; the tree is then walked against tables of the keys each
 * section accepts. Why not libyaml's document API: it resolves aliases
 * silently and forgets anchors, and we want to refuse them (a config that
 * shares a map between two lists reads as one thing and means another);
 * the events keep them. Why a tree rather than checking on the events:
 * the checks that concern several keys (url or path, the refresh default
 * that depends on which, duplicate names) need the whole item, with the
 * lines to point at.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "agent/config.h"
#include "agent/fleetdb.h"
#include "bloomgate/dns.h" /* BG_DNS_PORT */
#include "core/grow.h"
#include "core/url.h"
#include "core/filter.h"
#include "core/format.h"
#include "core/io.h"
#include "core/opts.h" /* bg_opt_size */
#include "core/prepare.h" /* BG_LOAD_ENTRIES_MAX */
#include "core/protect.h"

/* Deeper than any valid config (root, lists, item, dns_ports): a bound
 * on the recursion that a hostile or broken file could drive. */
#define Y_DEPTH_MAX 16

enum ykind { Y_SCALAR, Y_SEQ, Y_MAP };

static const char *const ykind_name[] = {
	[Y_SCALAR] = "single value", [Y_SEQ] = "list", [Y_MAP] = "map",
};

struct ynode {
	enum ykind kind;
	size_t line; /* 1-based */
	char *text; /* scalar */
	int plain; /* scalar written without quotes: only then can it be null */
	struct ynode **kids; /* map: key, value, key, value... */
	size_t n, cap;
};

struct pctx {
	const char *file;
	const char *buf; /* the config's text, len bytes */
	size_t len;
	char *err;
	size_t errlen;
	char where[96]; /* the key being read: "lists[2].refresh" */
	char quote[96]; /* the value, quoted for a message */
};

static void ynode_free(struct ynode *y)
{
	size_t i;

	if (!y)
		return;
	for (i = 0; i < y->n; i++)
		ynode_free(y->kids[i]);
	free(y->kids);
	free(y->text);
	free(y);
}

/* "FILE:LINE: ..." (line 0: "FILE: ..."); returns ret. */
static int __attribute__((format(printf, 4, 5)))
fail(struct pctx *p, int ret, size_t line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!p->err || !p->errlen)
		return ret;
	n = line ? snprintf(p->err, p->errlen, "%s:%zu: ", p->file, line)
		 : snprintf(p->err, p->errlen, "%s: ", p->file);
	if (n < 0 || (size_t)n >= p->errlen)
		return ret;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - n, fmt, ap);
	va_end(ap);
	return ret;
}

#define bad(p, line, ...) fail(p, -EINVAL, line, __VA_ARGS__)

/* A value as the messages quote it: one line (a quoted YAML scalar may
 * hold newlines and control bytes), cut so the reason still shows. */
static const char *q(struct pctx *p, const char *s)
{
	size_t n = 0, max = sizeof(p->quote) - 8;

	for (; *s && n < max; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			n += snprintf(p->quote + n, sizeof(p->quote) - n,
				      "\\x%02x", c);
		else
			p->quote[n++] = (char)c;
	}
	if (*s)
		n += snprintf(p->quote + n, sizeof(p->quote) - n, "...");
	p->quote[n < sizeof(p->quote) ? n : sizeof(p->quote) - 1] = '\0';
	return p->quote;
}

/* ---- YAML events into a tree ---- */

static int y_next(struct pctx *p, yaml_parser_t *yp, yaml_event_t *ev)
{
	size_t line, i;
	const char *hint = "";

	if (yaml_parser_parse(yp, ev))
		return 0;
	if (yp->error == YAML_MEMORY_ERROR)
		return fail(p, -ENOMEM, 0, "out of memory");
	line = yp->problem_mark.line + 1;
	/* The reader (bad UTF-8) knows the offset only. */
	if (yp->error == YAML_READER_ERROR)
		for (i = 0, line = 1; i < yp->problem_offset && i < p->len; i++)
			line += p->buf[i] == '\n';
	/* `events: -` reads as a list item where a value was expected. */
	if (yp->problem && strstr(yp->problem, "block sequence entries"))
		hint = " (a lone - as a value is written \"-\")";
	/* libyaml's own words: "mapping values are not allowed in this
	 * context", "found character that cannot start any token"... */
	return bad(p, line, "YAML: %s%s%s%s",
		   yp->problem ? yp->problem : "syntax error",
		   yp->context ? " " : "", yp->context ? yp->context : "", hint);
}

static int y_add(struct pctx *p, struct ynode *y, struct ynode *kid)
{
	if (bg_grow(&y->kids, &y->cap, y->n + 1, sizeof(*y->kids), 8)) {
		ynode_free(kid);
		return fail(p, -ENOMEM, 0, "out of memory");
	}
	y->kids[y->n++] = kid;
	return 0;
}

/* The node that ev starts (ev is consumed). */
static int y_node(struct pctx *p, yaml_parser_t *yp, yaml_event_t *ev,
		  int depth, struct ynode **out)
{
	size_t line = ev->start_mark.line + 1;
	const yaml_char_t *anchor = NULL, *tag = NULL;
	struct ynode *y;
	int err = 0;

	*out = NULL;
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		err = bad(p, line, "YAML aliases (*%s) are not supported: write the value out",
			  (const char *)ev->data.alias.anchor);
		break;
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	default:
		err = bad(p, line, "YAML: unexpected event %d", ev->type);
	}
	if (!err && anchor)
		err = bad(p, line, "YAML anchors (&%s) are not supported",
			  (const char *)anchor);
	/* A tag would ask for a type the key's table decides anyway. */
	if (!err && tag)
		err = bad(p, line, "YAML tags (%s) are not supported",
			  (const char *)tag);
	if (!err && depth > Y_DEPTH_MAX)
		err = bad(p, line, "nested deeper than any valid config");
	if (err)
		goto out;

	y = calloc(1, sizeof(*y));
	if (!y) {
		err = fail(p, -ENOMEM, 0, "out of memory");
		goto out;
	}
	y->line = line;
	if (ev->type == YAML_SCALAR_EVENT) {
		size_t len = ev->data.scalar.length;

		y->kind = Y_SCALAR;
		y->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		/* "\0" in a double-quoted scalar: it would cut the C string. */
		if (strlen((const char *)ev->data.scalar.value) != len)
			err = bad(p, line, "a value holds a NUL byte");
		else if (!(y->text = strndup((const char *)ev->data.scalar.value,
					      len)))
			err = fail(p, -ENOMEM, 0, "out of memory");
	} else {
		yaml_event_type_t end = ev->type == YAML_MAPPING_START_EVENT ?
						YAML_MAPPING_END_EVENT :
						YAML_SEQUENCE_END_EVENT;

		y->kind = ev->type == YAML_MAPPING_START_EVENT ? Y_MAP : Y_SEQ;
		for (;;) {
			yaml_event_t kev;
			struct ynode *kid;

			err = y_next(p, yp, &kev);
			if (err)
				break;
			if (kev.type == end) {
				yaml_event_delete(&kev);
				break;
			}
			err = y_node(p, yp, &kev, depth + 1, &kid);
			if (!err)
				err = y_add(p, y, kid);
			if (err)
				break;
		}
	}
	if (err)
		ynode_free(y);
	else
		*out = y;
out:
	yaml_event_delete(ev);
	return err;
}

/* The one document of buf; *root NULL when there is none (an empty file,
 * or only comments). */
static int y_load(struct pctx *p, const char *buf, size_t len,
		  struct ynode **root)
{
	yaml_parser_t yp;
	yaml_event_t ev;
	int err, docs = 0;

	*root = NULL;
	if (!yaml_parser_initialize(&yp))
		return fail(p, -ENOMEM, 0, "out of memory");
	yaml_parser_set_input_string(&yp, (const unsigned char *)buf, len);
	for (;;) {
		err = y_next(p, &yp, &ev);
		if (err)
			break;
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT && docs++) {
			/* One file, one config: a second document would
			 * be silently ignored or silently merged. */
			err = bad(p, ev.start_mark.line + 1,
				  "a second YAML document ('---'): a config is one document");
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type == YAML_SCALAR_EVENT ||
		    ev.type == YAML_SEQUENCE_START_EVENT ||
		    ev.type == YAML_MAPPING_START_EVENT ||
		    ev.type == YAML_ALIAS_EVENT) {
			err = y_node(p, &yp, &ev, 0, root);
			if (err)
				break;
			continue;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&yp);
	if (err) {
		ynode_free(*root);
		*root = NULL;
	}
	return err;
}

/* ---- values ---- */

/* YAML's null, as an unquoted value can write it (`metrics:`, `~`). */
static int y_null(const struct ynode *y)
{
	return y->kind == Y_SCALAR && y->plain &&
	       (!y->text[0] || !strcmp(y->text, "~") ||
		!strcmp(y->text, "null") || !strcmp(y->text, "Null") ||
		!strcmp(y->text, "NULL"));
}

double bg_config_duration(const char *s)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = {
		{ "", 1 }, { "ms", 1e-3 }, { "s", 1 },
		{ "m", 60 }, { "h", 3600 }, { "d", 86400 },
	};
	double v = 0, scale = 1;
	size_t i;

	/* By hand rather than strtod(): that would take "inf", "0x1p4",
	 * " 5", "-5" and "1e3", none of which is a duration. */
	if (!s || *s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (*s - '0');
	if (*s == '.') {
		if (*++s < '0' || *s > '9')
			return -1;
		for (; *s >= '0' && *s <= '9'; s++)
			v += (*s - '0') * (scale /= 10);
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(s, units[i].unit))
			return isfinite(v * units[i].mult) ? v * units[i].mult
							   : -1;
	return -1;
}

/* A decimal number, exponent allowed (fpr: 1e-4); not inf, nan or hex. */
static int number(const char *s, double *out)
{
	char *end;

	if (!*s || strspn(s, "0123456789.eE+-") != strlen(s))
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	return *end || errno || !isfinite(*out) ? -1 : 0;
}

static int boolean(const char *s)
{
	if (!strcasecmp(s, "true") || !strcasecmp(s, "yes"))
		return 1;
	if (!strcasecmp(s, "false") || !strcasecmp(s, "no"))
		return 0;
	return -1;
}

/* ---- what each key accepts ---- */

enum ftype {
	F_SECTION, /* interfaces:, lists: (walked by their own function) */
	F_BOOL, /* int */
	F_FLAG, /* uint8_t, 0 or 1: a read option (struct bg_list_desc) */
	F_NUMBER, /* double in [min, max] */
	F_DURATION, /* double seconds in [min, max] */
	F_SHARE, /* double in [0, 1], or "N%" */
	F_SIZE, /* uint64_t >= 1 */
	F_COUNT, /* uint64_t in [min, max], decimal digits only */
	F_ENUM, /* int, from values[] */
	F_FORMAT, /* uint8_t, enum bg_format (struct bg_list_desc) */
	F_PORTS, /* __u16[BG_DNS_PORTS_MAX] */
	F_STR, /* char *, checked by check */
	F_WORDS, /* char *: a list of names ([a, b] or one), comma-joined */
	F_PROTECT, /* struct bg_cfg_protect: addresses and prefixes */
};

enum fcheck { C_ABSPATH, C_URL, C_LISTNAME, C_IFNAME, C_HOSTPORT, C_EVENTS, C_DB };

/* May be null (`metrics:`, `events: ~`): stored as NULL. */
#define FF_NULLABLE 0x1
/* Numbers: the value must be > min, not >=. */
#define FF_MIN_OPEN 0x2

struct field {
	const char *key; /* NULL ends a table */
	enum ftype type;
	size_t off;
	const struct bg_opt_enum *values; /* F_ENUM */
	enum fcheck check; /* F_STR */
	double min, max;
	unsigned int flags;
	/* One line for bloomgate.yaml(5) (bg_config_keys()). */
	const char *help;
	/*
	 * A default that depends on other keys (refresh: a URL's or a
	 * path's), written from the constants the parser uses. NULL: the
	 * default is read at off from the section's defaults (the same
	 * *_defaults() function the parser starts each item from).
	 */
	void (*def)(char *buf, size_t len);
};

/* The defaults that depend on other keys, for bg_config_keys(). */
static void fmt_duration(char *buf, size_t len, double s);
static void def_fpr(char *buf, size_t len)
{
	snprintf(buf, len, "%g, or %g with confirm: false", bg_fpr_default(1),
		 bg_fpr_default(0));
}

static void def_refresh(char *buf, size_t len)
{
	char d[32];

	fmt_duration(d, sizeof(d), BG_CFG_URL_REFRESH);
	snprintf(buf, len, "%s for a url; none for a path (watched)", d);
}

static void def_cs_every(char *buf, size_t len)
{
	fmt_duration(buf, len, BG_CFG_CROWDSEC_EVERY);
}

static void def_grow(char *buf, size_t len)
{
	snprintf(buf, len, "true without capacity, false with it");
}

static void def_gateway(char *buf, size_t len)
{
	snprintf(buf, len, "the host name (what a name cannot hold as _)");
}

/* The line of each key of a map, by its index in the table; 0: absent. */
#define FIELDS_MAX 24

/*
 * The tables are indexed by these enums so that the checks across keys
 * (walk_lists()) name a key by its index and cannot point at another.
 */
enum { R_INTERFACES, R_FPR, R_CONFIRM, R_STATE_DIR, R_METRICS, R_EVENTS, R_DETACH,
       R_DEBOUNCE, R_MAX_LIST_BYTES, R_MAX_ENTRIES, R_PROTECT, R_LISTS, R_ARTIFACT,
       R_FLEET, R__COUNT };

#define R_OFF(m) offsetof(struct bg_config, m)
static const struct field root_fields[R__COUNT + 1] = {
	[R_INTERFACES] = { .key = "interfaces",
		.help = "the interfaces to attach to, each a map (interfaces[] below); none: the agent only feeds a bloomgate attached by other means", .type = F_SECTION },
	[R_FPR] = { .key = "fpr", .def = def_fpr,
		.help = "the Bloom part's target false-positive rate, per address or query (as load --fpr)", .type = F_NUMBER, .off = R_OFF(fpr),
		    .min = BG_FPR_MIN, .max = BG_FPR_MAX },
	[R_CONFIRM] = { .key = "confirm",
		.help = "the exact stage, which confirms every Bloom positive (as load --confirm); false: off", .type = F_BOOL, .off = R_OFF(confirm) },
	[R_STATE_DIR] = { .key = "state_dir",
		.help = "where the agent keeps the last good copy of every list, their provenance indexes and its store (an absolute path)", .type = F_STR,
			  .off = R_OFF(state_dir), .check = C_ABSPATH },
	[R_METRICS] = { .key = "metrics",
		.help = "HOST:PORT of the Prometheus endpoint (GET /metrics): an IPv4 address, [IPv6] or localhost, port 1..65535; null or absent: none", .type = F_STR, .off = R_OFF(metrics),
			.check = C_HOSTPORT, .flags = FF_NULLABLE },
	[R_EVENTS] = { .key = "events",
		.help = "flag events as JSON lines: - for stdout, or an absolute file path; null or absent: none", .type = F_STR, .off = R_OFF(events),
		       .check = C_EVENTS, .flags = FF_NULLABLE },
	[R_DETACH] = { .key = "detach_on_stop",
		.help = "detach from the interfaces when the agent stops; false: the filter stays live (fail-static)", .type = F_BOOL,
		       .off = R_OFF(detach_on_stop) },
	/* An hour: longer is a typo for a refresh, not a debounce. */
	[R_DEBOUNCE] = { .key = "debounce",
		.help = "changes that arrive within this time are one rebuild", .type = F_DURATION,
			 .off = R_OFF(debounce), .min = 0, .max = 3600 },
	/* load's --max-list-bytes and --max-entries, for every rebuild */
	[R_MAX_LIST_BYTES] = { .key = "max_list_bytes",
		.help = "as load --max-list-bytes, for every rebuild: the largest list file read (the copies of URLs included)", .type = F_SIZE,
			       .off = R_OFF(max_list_bytes) },
	[R_MAX_ENTRIES] = { .key = "max_entries",
		.help = "as load --max-entries, for every rebuild", .type = F_COUNT,
			    .off = R_OFF(max_entries), .min = 1, .max = 1e15 },
	[R_PROTECT] = { .key = "protect",
		.help = "addresses and prefixes never dropped, whatever a list or decision says (as load --protect): added to the protected set (the attached interfaces' addresses, the default routes' next hops, the resolvers of resolv.conf), which cannot be turned off", .type = F_PROTECT,
			.off = R_OFF(protect) },
	[R_LISTS] = { .key = "lists",
		.help = "the lists the filter is built from, each a map (lists[] below); excludes artifact and fleet", .type = F_SECTION },
	[R_ARTIFACT] = { .key = "artifact",
		.help = "a filter built elsewhere (bloomgate build), verified and swapped in as it is (artifact below); excludes lists and fleet", .type = F_SECTION },
	[R_FLEET] = { .key = "fleet",
		.help = "this gateway is one of a fleet: it loads the generations bloomgate publish stores (fleet below); excludes lists and artifact", .type = F_SECTION },
};

enum { I_NAME, I_MODE, I_MATCH, I_ACTION, I_DNS_ACTION, I_DNS_PORTS,
       I_CAPACITY, I_GROW, I_CHAIN, I_UNPARSED, I__COUNT };

#define I_OFF(m) offsetof(struct bg_cfg_iface, m)
static const struct field iface_fields[I__COUNT + 1] = {
	[I_NAME] = { .key = "name",
		.help = "the interface's name (required)", .type = F_STR, .off = I_OFF(name),
		     .check = C_IFNAME },
	[I_MODE] = { .key = "mode",
		.help = "as attach --mode", .type = F_ENUM, .off = I_OFF(attach.mode),
		     .values = bg_mode_values },
	[I_MATCH] = { .key = "match",
		.help = "as attach --match: the address probed", .type = F_ENUM,
		      .off = I_OFF(attach.match), .values = bg_match_values },
	[I_ACTION] = { .key = "action",
		.help = "as attach --action: what a listed address gets", .type = F_ENUM,
		       .off = I_OFF(attach.action), .values = bg_action_values },
	[I_DNS_ACTION] = { .key = "dns_action",
		.help = "as attach --dns-action: what a DNS query for a listed name gets", .type = F_ENUM,
			   .off = I_OFF(attach.dns_action),
			   .values = bg_dns_action_values },
	[I_DNS_PORTS] = { .key = "dns_ports",
		.help = "the UDP ports judged as DNS, a list of up to " BG_TEXTIFY(BG_DNS_PORTS_MAX) " (as attach --dns-port)", .type = F_PORTS,
			  .off = I_OFF(attach.dns_ports) },
	[I_CAPACITY] = { .key = "capacity",
		.help = "as attach --capacity: the Bloom keys the filter map holds, one fixed size (with grow: true, the size it starts at); absent: the capacity grows", .type = F_COUNT,
			 .off = I_OFF(attach.capacity), .min = 1,
			 .max = BG_CAPACITY_MAX },
	[I_GROW] = { .key = "grow", .def = def_grow,
		.help = "a fixed-size filter map (lookups inlined) whose capacity follows the filter, as attach's default; false without capacity: a map of any size, as attach --any-size", .type = F_BOOL, .off = I_OFF(attach.grow) },
	[I_CHAIN] = { .key = "chain",
		.help = "as attach --chain: bloomgate chain can run another XDP program after bloomgate", .type = F_BOOL, .off = I_OFF(attach.chain) },
	[I_UNPARSED] = { .key = "unparsed",
		.help = "as attach --unparsed: what a frame with no address to judge gets", .type = F_ENUM,
			 .off = I_OFF(attach.unparsed),
			 .values = bg_unparsed_values },
};

enum { L_NAME, L_URL, L_PATH, L_FORMAT, L_SUBDOMAINS, L_ALLOW, L_REFRESH,
       L_TIMEOUT, L_MAX_BYTES, L_MAX_SHRINK, L_ALLOW_WIDE, L_CROWDSEC,
       L_API_KEY_FILE, L_UPDATE_FREQ, L_ORIGINS, L_SCOPES, L_SCEN_IN,
       L_SCEN_OUT, L_MAX_RANGE4, L_MAX_RANGE6, L__COUNT };

#define L_OFF(m) offsetof(struct bg_cfg_list, m)
static const struct field list_fields[L__COUNT + 1] = {
	[L_NAME] = { .key = "name",
		.help = "the list's name, also its copy's file name in state_dir (required): 1 to " BG_TEXTIFY(BG_CFG_NAME_MAX) " of A-Z a-z 0-9 . _ -, not starting with .", .type = F_STR, .off = L_OFF(list.name),
		     .check = C_LISTNAME },
	[L_URL] = { .key = "url",
		.help = "an http:// or https:// URL, fetched every refresh with a conditional GET; a url or a path, not both", .type = F_STR, .off = L_OFF(list.url),
		    .check = C_URL },
	[L_PATH] = { .key = "path",
		.help = "an absolute path, watched and re-read when it changes; a url or a path, not both", .type = F_STR, .off = L_OFF(list.path),
		     .check = C_ABSPATH },
	[L_FORMAT] = { .key = "format",
		.help = "as load --format; detected when absent (auto)", .type = F_FORMAT, .off = L_OFF(list.format) },
	[L_SUBDOMAINS] = { .key = "subdomains",
		.help = "the names listed block their subdomains too (as load --subdomains)", .type = F_FLAG,
			   .off = L_OFF(list.subdomains) },
	[L_ALLOW] = { .key = "allow",
		.help = "an allowlist: what it lists always passes (as load --allow)", .type = F_FLAG, .off = L_OFF(list.allow) },
	/* Bounds that catch a unit mistaken (1d meant, 1000d written). */
	[L_REFRESH] = { .key = "refresh", .def = def_refresh,
		.help = "how often a URL is fetched (jittered); a path is watched and needs none", .type = F_DURATION,
			.off = L_OFF(refresh), .min = 0, .max = 30 * 86400 },
	[L_TIMEOUT] = { .key = "timeout",
		.help = "the time limit of a fetch (a URL only; a crowdsec: source's pull: 120s unless given, its local API takes some 30 s to answer a million decisions)", .type = F_DURATION,
			.off = L_OFF(timeout), .min = 0, .max = 86400,
			.flags = FF_MIN_OPEN },
	[L_MAX_BYTES] = { .key = "max_bytes",
		.help = "the largest copy fetched (a crowdsec: source: the largest answer, some 250 bytes a decision)", .type = F_SIZE,
			  .off = L_OFF(max_bytes) },
	[L_MAX_SHRINK] = { .key = "max_shrink",
		.help = "a share from 0 to 1 (or a percentage): a fetched copy with fewer than (1 - max_shrink) times the last good copy's entries is refused and the last good copy kept; 1: no guard", .type = F_SHARE,
			   .off = L_OFF(max_shrink) },
	/* per list, not global: the opt-in is trust in one list's
	 * content, and a fetched list stays guarded beside a local one */
	[L_ALLOW_WIDE] = { .key = "allow_wide",
		.help = "as load --allow-wide, for this list only (an address list)", .type = F_FLAG,
			   .off = L_OFF(list.allow_wide) },
	/* a CrowdSec local API's decisions (agent/crowdsec.h) */
	[L_CROWDSEC] = { .key = "crowdsec",
		.help = "the URL of a CrowdSec local API: its ban decisions are this list's addresses (then url, path, format, subdomains, allow, refresh, max_shrink and allow_wide do not apply)", .type = F_STR, .off = L_OFF(list.url),
			 .check = C_URL },
	[L_API_KEY_FILE] = { .key = "api_key_file",
		.help = "crowdsec: the absolute path of the file holding the bouncer's key (cscli bouncers add NAME), read at each pull (required with crowdsec)", .type = F_STR,
			     .off = L_OFF(api_key_file), .check = C_ABSPATH },
	[L_UPDATE_FREQ] = { .key = "update_frequency", .def = def_cs_every,
		.help = "crowdsec: how often the decisions are pulled", .type = F_DURATION,
			    .off = L_OFF(refresh), .min = 0, .max = 86400,
			    .flags = FF_MIN_OPEN },
	[L_ORIGINS] = { .key = "origins",
		.help = "crowdsec: only the decisions of these origins (a name or a list of names), as the firewall bouncer's filter", .type = F_WORDS, .off = L_OFF(cs_origins) },
	[L_SCOPES] = { .key = "scopes",
		.help = "crowdsec: the scopes pulled, ip and range (absent: both)", .type = F_WORDS, .off = L_OFF(cs_scopes) },
	[L_SCEN_IN] = { .key = "scenarios_containing",
		.help = "crowdsec: only the decisions whose scenario contains one of these", .type = F_WORDS,
			.off = L_OFF(cs_scen_in) },
	[L_SCEN_OUT] = { .key = "scenarios_not_containing",
		.help = "crowdsec: only the decisions whose scenario contains none of these", .type = F_WORDS,
			 .off = L_OFF(cs_scen_out) },
	/* what a Range decision may cut off: see BG_CFG_CS_RANGE4 */
	[L_MAX_RANGE4] = { .key = "max_range_v4",
		.help = "crowdsec: the widest IPv4 Range decision enforced, a prefix length: a wider one is refused and counted (reason too_wide); the default /16 is a large hosting provider's block, wider is an ISP's or a region's (CrowdSec itself takes a /8)", .type = F_COUNT,
			   .off = L_OFF(cs_max_range4), .min = 8, .max = 32 },
	[L_MAX_RANGE6] = { .key = "max_range_v6",
		.help = "crowdsec: the widest IPv6 Range decision enforced, a prefix length (too_wide past it); the default /32 is the usual allocation of a whole ISP, a site's is a /48", .type = F_COUNT,
			   .off = L_OFF(cs_max_range6), .min = 16, .max = 128 },
};

/* artifact: one built filter, fetched as a list is (url or path) */
enum { A_URL, A_PATH, A_REFRESH, A_TIMEOUT, A_MAX_BYTES, A__COUNT };
static const struct field artifact_fields[A__COUNT + 1] = {
	[A_URL] = { .key = "url",
		.help = "the artifact's http:// or https:// URL; a url or a path, not both", .type = F_STR, .off = L_OFF(list.url),
		    .check = C_URL },
	[A_PATH] = { .key = "path",
		.help = "the artifact's absolute path, watched; a url or a path, not both", .type = F_STR, .off = L_OFF(list.path),
		     .check = C_ABSPATH },
	[A_REFRESH] = { .key = "refresh", .def = def_refresh,
		.help = "how often the URL is fetched", .type = F_DURATION,
			.off = L_OFF(refresh), .min = 0, .max = 86400 * 366 },
	[A_TIMEOUT] = { .key = "timeout",
		.help = "the time limit of a fetch (a URL only)", .type = F_DURATION,
			.off = L_OFF(timeout), .min = 0, .max = 86400,
			.flags = FF_MIN_OPEN },
	[A_MAX_BYTES] = { .key = "max_bytes",
		.help = "the largest artifact fetched", .type = F_SIZE,
			  .off = L_OFF(max_bytes) },
	{ NULL },
};

/* fleet: a gateway of the fleet store */
enum { FL_DB, FL_GATEWAY, FL_POLL, FL_REPORT, FL_ALLOW_ROLLBACK, FL__COUNT };
#define FL_OFF(m) offsetof(struct bg_cfg_fleet, m)
static const struct field fleet_fields[FL__COUNT + 1] = {
	[FL_DB] = { .key = "db",
		.help = "the fleet store: a postgresql:// URL or a libpq key=value connection string (required)", .type = F_STR, .off = FL_OFF(db), .check = C_DB },
	[FL_GATEWAY] = { .key = "gateway", .def = def_gateway,
		.help = "this gateway's name in the store: 1 to " BG_TEXTIFY(BG_CFG_NAME_MAX) " of A-Z a-z 0-9 . _ -", .type = F_STR, .off = FL_OFF(gateway),
			 .check = C_LISTNAME },
	[FL_POLL] = { .key = "poll",
		.help = "how often the store is polled for a new generation, besides its NOTIFY", .type = F_DURATION, .off = FL_OFF(poll),
		      .min = 0, .max = 86400, .flags = FF_MIN_OPEN },
	[FL_REPORT] = { .key = "report",
		.help = "how often this gateway reports its state to the store", .type = F_DURATION, .off = FL_OFF(report),
			.min = 0, .max = 86400, .flags = FF_MIN_OPEN },
	[FL_ALLOW_ROLLBACK] = { .key = "allow_rollback",
		.help = "take the store's newest generation when it is older than the one applied here (its rows deleted, the store restored from a backup); false: refused and logged, the applied one stays live", .type = F_BOOL, .off = FL_OFF(allow_rollback) },
	{ NULL },
};

_Static_assert(R__COUNT <= FIELDS_MAX && I__COUNT <= FIELDS_MAX &&
		       L__COUNT <= FIELDS_MAX && A__COUNT <= FIELDS_MAX &&
		       FL__COUNT <= FIELDS_MAX,
	       "lines[] holds every key of a table");

/* A number's or a duration's range, as its errors and the man page say
 * it: "1e-09..0.5", "above 0..86400 s". */
static const char *num_range(const struct field *f, char *buf, size_t len)
{
	snprintf(buf, len, "%s%.15g..%.15g%s", f->flags & FF_MIN_OPEN ? "above " : "",
		 f->min, f->max, f->type == F_DURATION ? " s" : "");
	return buf;
}

static void key_names(const struct field *f, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; f->key && n < len; f++)
		n += snprintf(buf + n, len - n, "%s%s", n ? ", " : "", f->key);
}

static void enum_names(const struct bg_opt_enum *v, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; v->name && n < len; v++)
		n += snprintf(buf + n, len - n, "%s%s", n ? ", " : "", v->name);
}

/* HOST:PORT (bg_hostport()), the host an address or localhost. */
static int check_hostport(const char *s, const char **why)
{
	char host[256];
	unsigned char addr[16];
	unsigned int port;
	int v6;

	if (bg_hostport(s, 1, host, sizeof(host), &port, &v6, why))
		return -1;
	if (v6) {
		if (inet_pton(AF_INET6, host, addr) != 1) {
			*why = "not an IPv6 address";
			return -1;
		}
	} else if (strspn(host, "0123456789.") == strlen(host)) {
		if (inet_pton(AF_INET, host, addr) != 1) {
			*why = "not an IPv4 address";
			return -1;
		}
	} else if (strcmp(host, "localhost")) {
		/* the metrics server looks no name up (a daemon that asks DNS
		 * where to listen can stall at boot or bind somewhere
		 * unexpected): refused here, with the file and line, rather
		 * than at run time */
		*why = "an IPv4 address, [IPv6] or localhost: names are not looked up";
		return -1;
	}
	return 0;
}

static int check_str(struct pctx *p, const struct field *f,
		     const struct ynode *y)
{
	const char *s = y->text, *why;
	size_t len = strlen(s);

	switch (f->check) {
	case C_EVENTS:
		if (!strcmp(s, "-"))
			return 0;
		/* fallthrough */
	case C_ABSPATH:
		if (s[0] != '/')
			return bad(p, y->line, "%s: '%s' is not an absolute path%s",
				   p->where, q(p, s),
				   f->check == C_EVENTS ? " (or - for stdout)" : "");
		if (len >= PATH_MAX)
			return bad(p, y->line, "%s: longer than PATH_MAX", p->where);
		return 0;
	case C_URL: {
		size_t scheme = !strncasecmp(s, "http://", 7)  ? 7 :
				!strncasecmp(s, "https://", 8) ? 8 : 0;
		const char *c;

		for (c = s; *c; c++)
			if ((unsigned char)*c <= ' ' || *c == 0x7f)
				break;
		if (!scheme || !s[scheme] || s[scheme] == '/' || *c)
			return bad(p, y->line, "%s: '%s' is not an http:// or https:// URL",
				   p->where, q(p, s));
		return 0;
	}
	case C_LISTNAME:
		/* The name is the cache file's name in state_dir: no '/',
		 * no "..", no hidden file, nothing a shell would trip on. */
		if (!len || len > BG_CFG_NAME_MAX || s[0] == '.' ||
		    strspn(s, "abcdefghijklmnopqrstuvwxyz"
			      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != len)
			return bad(p, y->line, "%s: '%s' cannot be a file name: use 1 to %d of A-Z a-z 0-9 . _ -, not starting with '.'",
				   p->where, q(p, s), BG_CFG_NAME_MAX);
		return 0;
	case C_IFNAME:
		/* The kernel's dev_valid_name(). */
		if (len >= IFNAMSIZ)
			return bad(p, y->line, "%s: '%s' is too long for an interface name (%zu bytes, at most %d)",
				   p->where, q(p, s), len, IFNAMSIZ - 1);
		if (!len || !strcmp(s, ".") || !strcmp(s, "..") ||
		    strpbrk(s, "/: \t\n\r\f\v"))
			return bad(p, y->line, "%s: '%s' is not an interface name",
				   p->where, q(p, s));
		return 0;
	case C_DB: {
		/* a postgresql:// URL or a libpq key=value string; libpq
		 * itself judges the rest when the agent connects */
		const char *c;

		for (c = s; *c; c++)
			if ((unsigned char)*c < ' ' || *c == 0x7f)
				break;
		if (*c || (strncmp(s, "postgresql://", 13) &&
			   strncmp(s, "postgres://", 11) && !strchr(s, '=')))
			return bad(p, y->line, "%s: not a postgresql:// URL nor a "
				   "key=value connection string", p->where);
		return 0;
	}
	case C_HOSTPORT:
		if (check_hostport(s, &why))
			return bad(p, y->line, "%s: '%s' is not HOST:PORT (%s)",
				   p->where, q(p, s), why);
		return 0;
	}
	return 0;
}

static int set_ports(struct pctx *p, const struct ynode *y, __u16 *ports)
{
	size_t i, j;

	if (y->kind != Y_SEQ)
		return bad(p, y->line, "%s: expected a list of ports ([53, 5353]), not a %s",
			   p->where, ykind_name[y->kind]);
	if (!y->n)
		return bad(p, y->line, "%s: an empty list (leave the key out for port 53)",
			   p->where);
	if (y->n > BG_DNS_PORTS_MAX)
		return bad(p, y->kids[BG_DNS_PORTS_MAX]->line,
			   "%s: more than %d ports", p->where, BG_DNS_PORTS_MAX);
	for (i = 0; i < y->n; i++) {
		const struct ynode *k = y->kids[i];
		uint64_t v;

		if (k->kind != Y_SCALAR)
			return bad(p, k->line, "%s[%zu]: expected a port, not a %s",
				   p->where, i, ykind_name[k->kind]);
		if (bg_opt_size(k->text, &v) || strspn(k->text, "0123456789") !=
		    strlen(k->text) || v < 1 || v > 65535)
			return bad(p, k->line, "%s[%zu]: '%s' is not a port (1..65535)",
				   p->where, i, q(p, k->text));
		for (j = 0; j < i; j++)
			if (ports[j] == v)
				return bad(p, k->line, "%s[%zu]: port %u given twice",
					   p->where, i, (unsigned int)v);
		ports[i] = (__u16)v;
	}
	return 0;
}

/* A list of names ([cscli, crowdsec], or one name), comma-joined: what
 * the local API's query takes. A name is [A-Za-z0-9._/:-]. */
static int set_words(struct pctx *p, const struct ynode *y, char **out)
{
	const struct ynode *one[1] = { y };
	const struct ynode *const *v = y->kind == Y_SEQ ? (const struct ynode *const *)y->kids : one;
	size_t n = y->kind == Y_SEQ ? y->n : 1, i, len = 0;
	char *s;

	if (y->kind == Y_MAP)
		return bad(p, y->line, "%s: expected a name or a list of names, not a map",
			   p->where);
	if (!n)
		return bad(p, y->line, "%s: an empty list (leave the key out)", p->where);
	for (i = 0; i < n; i++) {
		const char *t = v[i]->text;
		size_t l;

		if (v[i]->kind != Y_SCALAR)
			return bad(p, v[i]->line, "%s[%zu]: expected a name, not a %s",
				   p->where, i, ykind_name[v[i]->kind]);
		l = strlen(t);
		if (!l || l > 128 ||
		    strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			      "0123456789._/:-") != l)
			return bad(p, v[i]->line, "%s: '%s' is not a name (A-Z a-z 0-9 . _ / : -)",
				   p->where, q(p, t));
		len += l + 1;
	}
	s = calloc(1, len);
	if (!s)
		return fail(p, -ENOMEM, 0, "out of memory");
	for (i = 0; i < n; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, v[i]->text);
	}
	free(*out);
	*out = s;
	return 0;
}

/* protect: a list of addresses and prefixes, each read by the lists' own
 * parser (bg_protect_parse()), or one; null: none. */
static int set_protect(struct pctx *p, const struct ynode *y,
		       struct bg_cfg_protect *out)
{
	const struct ynode *one[1] = { y };
	const struct ynode *const *v = y->kind == Y_SEQ ? (const struct ynode *const *)y->kids : one;
	size_t n = y->kind == Y_SEQ ? y->n : 1, i;
	const char *why;

	if (y_null(y))
		return 0;
	if (y->kind == Y_MAP)
		return bad(p, y->line, "%s: expected a list of addresses and prefixes, not a map",
			   p->where);
	if (n > BG_PROTECT_MAX)
		return bad(p, v[BG_PROTECT_MAX]->line, "%s: more than %d addresses and prefixes",
			   p->where, BG_PROTECT_MAX);
	free(out->v);
	out->n = 0;
	out->v = calloc(n ? n : 1, sizeof(*out->v));
	if (!out->v)
		return fail(p, -ENOMEM, 0, "out of memory");
	for (i = 0; i < n; i++) {
		if (v[i]->kind != Y_SCALAR)
			return bad(p, v[i]->line, "%s[%zu]: expected an address or a prefix, not a %s",
				   p->where, i, ykind_name[v[i]->kind]);
		if (bg_protect_parse(v[i]->text, BG_PROTECT_CONFIG, &out->v[out->n], &why))
			return bad(p, v[i]->line, "%s[%zu]: '%s': %s", p->where, i,
				   q(p, v[i]->text), why);
		out->n++;
	}
	return 0;
}

static int set_field(struct pctx *p, const struct field *f,
		     const struct ynode *y, void *base)
{
	char *at = (char *)base + f->off;
	const char *s;
	char names[160];
	double d;
	int v;

	if (f->type == F_PORTS)
		return set_ports(p, y, (__u16 *)at);
	if (f->type == F_WORDS)
		return set_words(p, y, (char **)at);
	if (f->type == F_PROTECT)
		return set_protect(p, y, (struct bg_cfg_protect *)at);
	if (y_null(y)) {
		if (f->flags & FF_NULLABLE) {
			free(*(char **)at);
			*(char **)at = NULL;
			return 0;
		}
		return bad(p, y->line, "%s: needs a value", p->where);
	}
	if (y->kind != Y_SCALAR)
		return bad(p, y->line, "%s: expected a single value, not a %s",
			   p->where, ykind_name[y->kind]);
	s = y->text;
	switch (f->type) {
	case F_BOOL:
	case F_FLAG:
		v = boolean(s);
		if (v < 0)
			return bad(p, y->line, "%s: '%s' is not true, false, yes or no",
				   p->where, q(p, s));
		if (f->type == F_FLAG)
			*(uint8_t *)at = (uint8_t)v;
		else
			*(int *)at = v;
		return 0;
	case F_NUMBER:
		if (number(s, &d))
			return bad(p, y->line, "%s: '%s' is not a number",
				   p->where, q(p, s));
		goto range;
	case F_DURATION:
		d = bg_config_duration(s);
		if (d < 0)
			return bad(p, y->line, "%s: '%s' is not a duration (a number with ms, s, m, h or d)",
				   p->where, q(p, s));
range:
		if (d < f->min || d > f->max ||
		    (f->flags & FF_MIN_OPEN && d <= f->min))
			return bad(p, y->line, "%s: %s is out of range (%s)",
				   p->where, q(p, s),
				   num_range(f, names, sizeof(names)));
		*(double *)at = d;
		return 0;
	case F_SHARE: {
		size_t len = strlen(s);
		char num[64];

		/* "0.3" or "30%" */
		if (len && len < sizeof(num) && s[len - 1] == '%') {
			memcpy(num, s, len - 1);
			num[len - 1] = '\0';
			if (number(num, &d))
				d = -1;
			else
				d /= 100;
		} else if (number(s, &d)) {
			d = -1;
		}
		if (d < 0 || d > 1)
			return bad(p, y->line, "%s: '%s' is not a share from 0 to 1 (or 0%% to 100%%)",
				   p->where, q(p, s));
		*(double *)at = d;
		return 0;
	}
	case F_SIZE:
		if (bg_opt_size(s, (uint64_t *)at) || !*(uint64_t *)at)
			return bad(p, y->line, "%s: '%s' is not a size above 0 (bytes, or with K, M, G)",
				   p->where, q(p, s));
		return 0;
	case F_COUNT: {
		unsigned long long u = 0;
		char *end = NULL;

		/* strtoull() would take "-1", " 1" and "+1" */
		if (isdigit((unsigned char)s[0])) {
			errno = 0;
			u = strtoull(s, &end, 10);
		}
		if (!end || *end || errno || (double)u < f->min || (double)u > f->max)
			return bad(p, y->line, "%s: '%s' is not a whole number from %g to %g",
				   p->where, q(p, s), f->min, f->max);
		*(uint64_t *)at = u;
		return 0;
	}
	case F_ENUM: {
		const struct bg_opt_enum *e;

		for (e = f->values; e->name; e++)
			if (!strcmp(e->name, s)) {
				*(int *)at = e->value;
				return 0;
			}
		enum_names(f->values, names, sizeof(names));
		return bad(p, y->line, "%s: unknown value '%s' (%s)", p->where,
			   q(p, s), names);
	}
	case F_FORMAT: {
		size_t n = 0;
		int i;

		v = bg_format_parse(s);
		if (v >= 0) {
			*(uint8_t *)at = (uint8_t)v;
			return 0;
		}
		for (i = 0; i < BG_FMT__COUNT; i++)
			n += snprintf(names + n, sizeof(names) - n, "%s%s",
				      i ? ", " : "", bg_format_name(i));
		return bad(p, y->line, "%s: unknown format '%s' (%s)", p->where,
			   q(p, s), names);
	}
	case F_STR: {
		int err = check_str(p, f, y);
		char *dup;

		if (err)
			return err;
		dup = strdup(s);
		if (!dup)
			return fail(p, -ENOMEM, 0, "out of memory");
		free(*(char **)at);
		*(char **)at = dup;
		return 0;
	}
	case F_SECTION:
	case F_PORTS:
	case F_WORDS:
	case F_PROTECT:
		break;
	}
	return 0;
}

/* ---- defaults ---- */

/*
 * What each section's keys are when absent: the parser starts every item
 * from these, and bg_config_keys() reads the defaults it describes from
 * them (one place for both). Defaults that depend on other keys are set
 * after the walk (refresh, fpr) and described by the field's def().
 */
static int root_defaults(struct bg_config *c)
{
	c->fpr = 0; /* absent: bg_fpr_default(confirm), at the end */
	c->confirm = 1;
	c->debounce = BG_CFG_DEBOUNCE;
	c->max_list_bytes = BG_LIST_BYTES_MAX;
	c->max_entries = BG_LOAD_ENTRIES_MAX;
	c->state_dir = strdup(BG_CFG_STATE_DIR);
	return c->state_dir ? 0 : -ENOMEM;
}

static void iface_defaults(struct bg_cfg_iface *f)
{
	f->attach = bg_attach_defaults;
}

static void list_defaults(struct bg_cfg_list *l)
{
	l->list.format = BG_FMT_AUTO;
	l->timeout = BG_CFG_TIMEOUT;
	l->max_bytes = BG_CFG_MAX_BYTES;
	l->max_shrink = BG_CFG_MAX_SHRINK;
	l->cs_max_range4 = BG_CFG_CS_RANGE4;
	l->cs_max_range6 = BG_CFG_CS_RANGE6;
}

static void artifact_defaults(struct bg_cfg_list *l)
{
	l->kind = BG_SRC_ARTIFACT;
	l->timeout = BG_CFG_TIMEOUT;
	l->max_bytes = BG_CFG_ARTIFACT_MAX_BYTES;
	l->max_shrink = 1; /* an artifact is judged by its checksums */
}

static void fleet_defaults(struct bg_cfg_fleet *f)
{
	f->poll = BG_CFG_FLEET_POLL;
	f->report = BG_CFG_FLEET_REPORT;
}

/*
 * Walks map y against fields, storing into base; where: the map's own path
 * ("lists[2]", "" for the root). The line of each key found goes to
 * lines[] (0: absent). F_SECTION keys are left to the caller, with their
 * value in sections[] by field index.
 */
static int walk_map(struct pctx *p, const struct ynode *y,
		    const struct field *fields, const char *where, void *base,
		    size_t *lines, const struct ynode **sections)
{
	char keys[400];
	size_t i;
	int err;

	key_names(fields, keys, sizeof(keys));
	if (y->kind != Y_MAP)
		return bad(p, y->line, "%s%sexpected a map of keys (%s), not a %s",
			   where, *where ? ": " : "", keys, ykind_name[y->kind]);
	for (i = 0; i + 1 < y->n; i += 2) {
		const struct ynode *k = y->kids[i], *v = y->kids[i + 1];
		const struct field *f;
		size_t idx;

		if (k->kind != Y_SCALAR)
			return bad(p, k->line, "%s%sa key must be a name, not a %s",
				   where, *where ? ": " : "", ykind_name[k->kind]);
		for (f = fields; f->key && strcmp(f->key, k->text); f++)
			;
		if (!f->key)
			return bad(p, k->line, "%s%sunknown key '%s' (%s)", where,
				   *where ? ": " : "", q(p, k->text), keys);
		idx = (size_t)(f - fields);
		snprintf(p->where, sizeof(p->where), "%s%s%s", where,
			 *where ? "." : "", f->key);
		if (lines[idx])
			return bad(p, k->line, "%s: given twice (first on line %zu)",
				   p->where, lines[idx]);
		lines[idx] = k->line;
		if (f->type == F_SECTION) {
			sections[idx] = v;
			continue;
		}
		err = set_field(p, f, v, base);
		if (err)
			return err;
	}
	return 0;
}

/* interfaces: and lists: are sequences; null (`interfaces:`) is empty. */
static int section_items(struct pctx *p, const struct ynode *y,
			 const char *key, size_t size, void **items)
{
	*items = NULL;
	if (y_null(y))
		return 0;
	if (y->kind != Y_SEQ)
		return bad(p, y->line, "%s: expected a list of maps ('- name: ...'), not a %s",
			   key, ykind_name[y->kind]);
	if (!y->n)
		return 0;
	*items = calloc(y->n, size);
	return *items ? 0 : fail(p, -ENOMEM, 0, "out of memory");
}

static int walk_ifaces(struct pctx *p, const struct ynode *y,
		       struct bg_config *c)
{
	size_t i, j;
	int err;

	err = section_items(p, y, "interfaces", sizeof(*c->ifaces),
			    (void **)&c->ifaces);
	if (err || !c->ifaces)
		return err;
	for (i = 0; i < y->n; i++) {
		struct bg_cfg_iface *f = &c->ifaces[c->n_ifaces++];
		size_t lines[FIELDS_MAX] = { 0 };
		const struct ynode *sec[FIELDS_MAX] = { 0 };
		char where[40];

		iface_defaults(f);
		f->line = y->kids[i]->line;
		snprintf(where, sizeof(where), "interfaces[%zu]", i);
		err = walk_map(p, y->kids[i], iface_fields, where, f, lines, sec);
		if (err)
			return err;
		if (!f->name)
			return bad(p, f->line, "%s: needs a name", where);
		/* as attach: without a capacity the capacity grows, unless
		 * `grow: false` asks for a map of any size */
		if (!lines[I_CAPACITY] && !lines[I_GROW])
			f->attach.grow = 1;
		for (j = 0; j < i; j++)
			if (!strcmp(c->ifaces[j].name, f->name))
				return bad(p, lines[I_NAME], "%s.name: '%s' is already interfaces[%zu] (line %zu)",
					   where, q(p, f->name), j,
					   c->ifaces[j].line);
	}
	return 0;
}

/* A `crowdsec:` list: the local API's ban decisions, read as addresses. */
static int crowdsec_list(struct pctx *p, struct bg_cfg_list *l, const size_t *lines,
			 const char *where)
{
	static const int not_for[] = { L_URL, L_PATH, L_FORMAT, L_SUBDOMAINS,
				       L_ALLOW, L_REFRESH, L_MAX_SHRINK, L_ALLOW_WIDE };
	size_t i;

	for (i = 0; i < sizeof(not_for) / sizeof(not_for[0]); i++)
		if (lines[not_for[i]])
			return bad(p, lines[not_for[i]], "%s.%s: not for a crowdsec: source%s",
				   where, list_fields[not_for[i]].key,
				   not_for[i] == L_REFRESH ? " (update_frequency)" :
				   not_for[i] == L_URL ? " (crowdsec: is its URL)" : "");
	if (!l->api_key_file)
		return bad(p, l->line, "%s (%s): a crowdsec: source needs api_key_file "
			   "(the bouncer's key: cscli bouncers add NAME)", where,
			   l->list.name);
	if (l->cs_scopes) {
		char *t = strdup(l->cs_scopes), *w, *save = NULL;

		if (!t)
			return fail(p, -ENOMEM, 0, "out of memory");
		for (w = strtok_r(t, ",", &save); w; w = strtok_r(NULL, ",", &save))
			if (strcasecmp(w, "ip") && strcasecmp(w, "range")) {
				bad(p, lines[L_SCOPES], "%s.scopes: '%s': ip and range are "
				    "the scopes of an address (others are not enforced here)",
				    where, q(p, w));
				free(t);
				return -EINVAL;
			}
		free(t);
	}
	l->kind = BG_SRC_CROWDSEC;
	l->list.format = BG_FMT_ADDR;
	if (!lines[L_UPDATE_FREQ])
		l->refresh = BG_CFG_CROWDSEC_EVERY;
	if (!lines[L_TIMEOUT])
		l->timeout = BG_CFG_CROWDSEC_TIMEOUT;
	l->max_shrink = 1; /* decisions come and go: no shrink guard */
	return 0;
}

static int walk_lists(struct pctx *p, const struct ynode *y, size_t key_line,
		      struct bg_config *c)
{
	size_t i, j, n_allow = 0;
	int err;

	err = section_items(p, y, "lists", sizeof(*c->lists), (void **)&c->lists);
	if (err)
		return err;
	if (!c->lists)
		return bad(p, key_line, "lists: no lists: the agent needs at least one");
	for (i = 0; i < y->n; i++) {
		struct bg_cfg_list *l = &c->lists[c->n_lists++];
		size_t lines[FIELDS_MAX] = { 0 };
		const struct ynode *sec[FIELDS_MAX] = { 0 };
		char where[40];
		struct bg_list_desc *d = &l->list;

		list_defaults(l);
		l->line = y->kids[i]->line;
		snprintf(where, sizeof(where), "lists[%zu]", i);
		err = walk_map(p, y->kids[i], list_fields, where, l, lines, sec);
		if (err)
			return err;
		if (!d->name)
			return bad(p, l->line, "%s: needs a name", where);
		for (j = 0; j < i; j++)
			if (!strcmp(c->lists[j].list.name, d->name))
				return bad(p, lines[L_NAME], "%s.name: '%s' is already the name of lists[%zu] (line %zu)",
					   where, q(p, d->name), j,
					   c->lists[j].line);
		if (lines[L_CROWDSEC]) {
			err = crowdsec_list(p, l, lines, where);
			if (err)
				return err;
			continue;
		}
		for (j = L_API_KEY_FILE; j < L__COUNT; j++)
			if (lines[j])
				return bad(p, lines[j], "%s.%s: only a crowdsec: source has it",
					   where, list_fields[j].key);
		if (!d->url && !d->path)
			return bad(p, l->line, "%s (%s): needs a url or a path",
				   where, d->name);
		if (d->url && d->path)
			return bad(p, lines[L_URL] > lines[L_PATH] ? lines[L_URL] :
								     lines[L_PATH],
				   "%s (%s): has both a url and a path: give one",
				   where, d->name);
		/* A file is watched: a timer would only re-read it
		 * unchanged; one can still be asked for. */
		if (!lines[L_REFRESH])
			l->refresh = d->url ? BG_CFG_URL_REFRESH : 0;
		else if (d->url && l->refresh <= 0)
			return bad(p, lines[L_REFRESH], "%s.refresh: a URL needs an interval above 0",
				   where);
		if (d->path && lines[L_TIMEOUT])
			return bad(p, lines[L_TIMEOUT], "%s.timeout: only a URL is fetched with a timeout",
				   where);
		if (d->subdomains && d->format == BG_FMT_ADDR)
			return bad(p, lines[L_SUBDOMAINS], "%s.subdomains: an addr list has no names",
				   where);
		if (d->allow_wide && d->format != BG_FMT_AUTO &&
		    d->format != BG_FMT_ADDR)
			return bad(p, lines[L_ALLOW_WIDE], "%s.allow_wide: a %s list has no prefixes",
				   where, bg_format_name(d->format));
		n_allow += !!d->allow;
	}
	/* As `bloomgate load` refuses: a filter built from allowlists only
	 * blocks nothing, which is a mistake, not a configuration. */
	if (n_allow == c->n_lists)
		return bad(p, key_line, "lists: every list is an allowlist: nothing would be blocked");
	return 0;
}

/* artifact: one source of kind BG_SRC_ARTIFACT, named "artifact" */
static int walk_artifact(struct pctx *p, const struct ynode *y, size_t key_line,
			 struct bg_config *c)
{
	size_t lines[FIELDS_MAX] = { 0 };
	const struct ynode *sec[FIELDS_MAX] = { 0 };
	struct bg_cfg_list *l;
	int err;

	c->lists = calloc(1, sizeof(*c->lists));
	if (!c->lists)
		return fail(p, -ENOMEM, 0, "out of memory");
	l = &c->lists[c->n_lists++];
	artifact_defaults(l);
	l->line = key_line;
	err = walk_map(p, y, artifact_fields, "artifact", l, lines, sec);
	if (err)
		return err;
	l->list.name = strdup(BG_CFG_ARTIFACT_NAME);
	if (!l->list.name)
		return fail(p, -ENOMEM, 0, "out of memory");
	if (!l->list.url && !l->list.path)
		return bad(p, key_line, "artifact: needs a url or a path");
	if (l->list.url && l->list.path)
		return bad(p, key_line, "artifact: has both a url and a path: give one");
	if (!lines[A_REFRESH])
		l->refresh = l->list.url ? BG_CFG_URL_REFRESH : 0;
	else if (l->list.url && l->refresh <= 0)
		return bad(p, lines[A_REFRESH], "artifact.refresh: a URL needs an interval above 0");
	if (l->list.path && lines[A_TIMEOUT])
		return bad(p, lines[A_TIMEOUT], "artifact.timeout: only a URL is fetched with a timeout");
	return 0;
}

/* fleet: one source of kind BG_SRC_FLEET, named "fleet", fetched from the
 * store (agent/fleet.c) every poll seconds and whenever a NOTIFY comes */
static int walk_fleet(struct pctx *p, const struct ynode *y, size_t key_line,
		      struct bg_config *c)
{
	size_t lines[FIELDS_MAX] = { 0 };
	const struct ynode *sec[FIELDS_MAX] = { 0 };
	struct bg_cfg_fleet *f = &c->fleet;
	struct bg_cfg_list *l;
	char host[256];
	int err;

	fleet_defaults(f);
	f->line = key_line;
	err = walk_map(p, y, fleet_fields, "fleet", f, lines, sec);
	if (err)
		return err;
	if (!f->db)
		return bad(p, key_line, "fleet: needs db (the store's connection string)");
	if (!f->gateway) {
		/* the host name, as a name the store keeps: what a name
		 * cannot hold becomes '_' */
		size_t i;

		if (gethostname(host, sizeof(host)))
			snprintf(host, sizeof(host), "gateway");
		host[sizeof(host) - 1] = 0;
		host[BG_CFG_NAME_MAX] = 0;
		for (i = 0; host[i]; i++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789._-", host[i]))
				host[i] = '_';
		f->gateway = strdup(host);
		if (!f->gateway)
			return fail(p, -ENOMEM, 0, "out of memory");
	}
	c->lists = calloc(1, sizeof(*c->lists));
	if (!c->lists)
		return fail(p, -ENOMEM, 0, "out of memory");
	l = &c->lists[c->n_lists++];
	l->kind = BG_SRC_FLEET;
	l->refresh = f->poll;
	l->timeout = BG_CFG_TIMEOUT;
	l->max_bytes = BG_CFG_ARTIFACT_MAX_BYTES;
	l->max_shrink = 1;
	l->line = key_line;
	l->list.name = strdup(BG_CFG_FLEET_NAME);
	/* the origin the status, the store and the filter's description
	 * name: without its password (the fetch uses fleet.db itself) */
	{
		char red[1024];

		l->list.url = strdup(bg_fleetdb_redact(f->db, red, sizeof(red)));
	}
	if (!l->list.name || !l->list.url)
		return fail(p, -ENOMEM, 0, "out of memory");
	return 0;
}

void bg_config_free(struct bg_config *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n_ifaces; i++)
		free(c->ifaces[i].name);
	for (i = 0; i < c->n_lists; i++) {
		bg_list_desc_free(&c->lists[i].list);
		free(c->lists[i].api_key_file);
		free(c->lists[i].cs_origins);
		free(c->lists[i].cs_scopes);
		free(c->lists[i].cs_scen_in);
		free(c->lists[i].cs_scen_out);
	}
	free(c->ifaces);
	free(c->lists);
	free(c->protect.v);
	free(c->fleet.db);
	free(c->fleet.gateway);
	free(c->file);
	free(c->state_dir);
	free(c->metrics);
	free(c->events);
	memset(c, 0, sizeof(*c));
}

int bg_config_parse_buf(const char *name, const char *buf, size_t len,
			struct bg_config *c, char *err, size_t errlen)
{
	struct pctx p = { .file = name, .buf = buf, .len = len, .err = err,
			  .errlen = errlen };
	size_t lines[FIELDS_MAX] = { 0 };
	const struct ynode *sec[FIELDS_MAX] = { 0 };
	struct ynode *root;
	int ret;

	memset(c, 0, sizeof(*c));
	if (err && errlen)
		err[0] = '\0';
	ret = y_load(&p, buf, len, &root);
	if (ret)
		return ret;
	c->file = strdup(name);
	if (!c->file || root_defaults(c)) {
		ret = fail(&p, -ENOMEM, 0, "out of memory");
		goto out;
	}
	if (!root || y_null(root)) {
		ret = bad(&p, 0, "empty: a config needs at least lists:");
		goto out;
	}
	ret = walk_map(&p, root, root_fields, "", c, lines, sec);
	if (!ret && sec[R_INTERFACES])
		ret = walk_ifaces(&p, sec[R_INTERFACES], c);
	/* one kind of source: lists, an artifact, or the fleet's */
	if (!ret && !!sec[R_LISTS] + !!sec[R_ARTIFACT] + !!sec[R_FLEET] > 1) {
		size_t l2 = lines[R_LISTS] > lines[R_ARTIFACT] ? lines[R_LISTS] :
								  lines[R_ARTIFACT];

		l2 = l2 > lines[R_FLEET] ? l2 : lines[R_FLEET];
		ret = bad(&p, l2, "lists:, artifact: and fleet: exclude each other: a "
			  "gateway builds its filter from lists, or loads one built "
			  "elsewhere");
	}
	if (!ret && !sec[R_LISTS] && !sec[R_ARTIFACT] && !sec[R_FLEET])
		ret = bad(&p, 0, "no lists: the agent needs at least one (lists:), "
			  "or an artifact: or a fleet:");
	if (!ret && sec[R_LISTS])
		ret = walk_lists(&p, sec[R_LISTS], lines[R_LISTS], c);
	if (!ret && sec[R_ARTIFACT])
		ret = walk_artifact(&p, sec[R_ARTIFACT], lines[R_ARTIFACT], c);
	if (!ret && sec[R_FLEET])
		ret = walk_fleet(&p, sec[R_FLEET], lines[R_FLEET], c);
	if (!ret && !c->fpr)
		c->fpr = bg_fpr_default(c->confirm);
out:
	ynode_free(root);
	if (ret)
		bg_config_free(c);
	return ret;
}

/* The reason bg_read_list() gives for a file it cannot read. */
struct read_why {
	char why[128];
};

static void why_of(void *ctx, const struct bg_diag *d)
{
	struct read_why *w = ctx;

	snprintf(w->why, sizeof(w->why), "%s", d->reason);
}

int bg_config_load(const char *path, struct bg_config *c, char *err,
		   size_t errlen)
{
	struct pctx p = { .file = path, .err = err, .errlen = errlen };
	struct read_why w = { "" };
	char *buf;
	size_t len;
	int ret;

	memset(c, 0, sizeof(*c));
	/* Read as a list is read: a regular file only (a FIFO in its place
	 * would hang a reload, a device such as /dev/zero never ends) and
	 * bounded, one byte past the limit telling "too large" apart. */
	ret = bg_read_list(path, BG_CFG_FILE_MAX + 1ull,
			   &(struct bg_reporter){ .fn = why_of, .ctx = &w }, &buf,
			   &len);
	if (ret == -EFBIG)
		return bad(&p, 0, "larger than %u bytes: not a config",
			   BG_CFG_FILE_MAX);
	if (ret)
		return fail(&p, ret, 0, "%s", w.why[0] ? w.why : strerror(-ret));
	if (len > BG_CFG_FILE_MAX)
		ret = bad(&p, 0, "larger than %u bytes: not a config",
			  BG_CFG_FILE_MAX);
	else
		ret = bg_config_parse_buf(path, buf, len, c, err, errlen);
	free(buf);
	return ret;
}

/* ---- the keys, described (bloomgate.yaml(5)) ---- */

/* "1h", "30s", "500ms": what the config would say, bg_config_duration()
 * reads it back. */
static void fmt_duration(char *buf, size_t len, double s)
{
	static const struct {
		const char *unit;
		double secs;
	} units[] = { { "d", 86400 }, { "h", 3600 }, { "m", 60 } };
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (s >= units[i].secs && fmod(s, units[i].secs) == 0) {
			snprintf(buf, len, "%g%s", s / units[i].secs, units[i].unit);
			return;
		}
	if (s > 0 && s < 1)
		snprintf(buf, len, "%gms", s * 1000);
	else
		snprintf(buf, len, "%gs", s);
}

/* "512M", "4G": as a size is written (bg_opt_size() reads it back). */
static void fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char units[] = "GMK";
	int i;

	for (i = 0; units[i]; i++) {
		unsigned int shift = 30 - 10 * (unsigned int)i;

		if (v && !(v & ((1ull << shift) - 1))) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(v >> shift),
				 units[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

static const char *type_name(const struct field *f)
{
	switch (f->type) {
	case F_SECTION:
		return "section";
	case F_BOOL:
	case F_FLAG:
		return "boolean";
	case F_NUMBER:
		return "number";
	case F_DURATION:
		return "duration";
	case F_SHARE:
		return "share";
	case F_SIZE:
		return "size";
	case F_COUNT:
		return "count";
	case F_ENUM:
	case F_FORMAT:
		return "one of";
	case F_PORTS:
		return "ports";
	case F_WORDS:
		return "names";
	case F_PROTECT:
		return "addresses";
	case F_STR:
		switch (f->check) {
		case C_ABSPATH:
			return "path";
		case C_URL:
			return "URL";
		case C_LISTNAME:
			return "name";
		case C_IFNAME:
			return "interface";
		case C_HOSTPORT:
			return "HOST:PORT";
		case C_EVENTS:
			return "path or -";
		case C_DB:
			return "connection string";
		}
	}
	return "?";
}

/* The value at f->off of base, as the config writes it; "" for none. */
static void fmt_value(const struct field *f, const void *base, char *buf,
		      size_t len)
{
	const char *at = (const char *)base + f->off;
	const __u16 *ports;
	double d;
	uint64_t u;

	buf[0] = '\0';
	switch (f->type) {
	case F_SECTION:
		break;
	case F_BOOL:
		snprintf(buf, len, "%s", *(const int *)at ? "true" : "false");
		break;
	case F_FLAG:
		snprintf(buf, len, "%s", *(const uint8_t *)at ? "true" : "false");
		break;
	case F_NUMBER:
	case F_SHARE:
	case F_DURATION:
		d = *(const double *)at;
		/* out of range: "not given", as the help of the options has it */
		if (f->type != F_SHARE && (d < f->min || d > f->max ||
					   (f->flags & FF_MIN_OPEN && d <= f->min)))
			break;
		if (f->type == F_DURATION)
			fmt_duration(buf, len, d);
		else
			snprintf(buf, len, "%g", d);
		break;
	case F_SIZE:
		u = *(const uint64_t *)at;
		if (u)
			fmt_size(buf, len, u);
		break;
	case F_COUNT:
		u = *(const uint64_t *)at;
		if ((double)u >= f->min && (double)u <= f->max)
			snprintf(buf, len, "%llu", (unsigned long long)u);
		break;
	case F_ENUM:
		snprintf(buf, len, "%s", bg_enum_name(f->values, *(const int *)at));
		break;
	case F_FORMAT:
		snprintf(buf, len, "%s", bg_format_name(*(const uint8_t *)at));
		break;
	case F_PORTS:
		ports = (const __u16 *)at;
		if (!ports[0])
			snprintf(buf, len, "[%d]", BG_DNS_PORT);
		break;
	case F_STR:
	case F_WORDS:
		if (*(char *const *)at)
			snprintf(buf, len, "%s", *(char *const *)at);
		break;
	case F_PROTECT:
		break;
	}
}

static void describe(const struct field *f, const char *section, int seq,
		     const void *defaults,
		     void (*fn)(void *ctx, const struct bg_config_key *k), void *ctx)
{
	struct bg_config_key k;
	size_t n;
	int i;

	for (; f->key; f++) {
		memset(&k, 0, sizeof(k));
		k.section = section;
		k.seq = seq;
		k.key = f->key;
		k.type = type_name(f);
		k.help = f->help;
		k.values = f->type == F_ENUM ? f->values : NULL;
		if (f->type == F_ENUM)
			enum_names(f->values, k.names, sizeof(k.names));
		if (f->type == F_FORMAT)
			for (i = 0, n = 0; i < BG_FMT__COUNT && n < sizeof(k.names); i++)
				n += snprintf(k.names + n, sizeof(k.names) - n, "%s%s",
					      i ? ", " : "", bg_format_name(i));
		switch (f->type) {
		case F_NUMBER:
		case F_DURATION:
			num_range(f, k.range, sizeof(k.range));
			break;
		case F_COUNT:
			snprintf(k.range, sizeof(k.range), "%g..%g", f->min, f->max);
			break;
		case F_SHARE:
			snprintf(k.range, sizeof(k.range), "0..1, or 0%%..100%%");
			break;
		case F_SIZE:
			snprintf(k.range, sizeof(k.range), "above 0");
			break;
		case F_PORTS:
			snprintf(k.range, sizeof(k.range), "1..65535, up to %d",
				 BG_DNS_PORTS_MAX);
			break;
		default:
			break;
		}
		if (f->def)
			f->def(k.def, sizeof(k.def));
		else
			fmt_value(f, defaults, k.def, sizeof(k.def));
		fn(ctx, &k);
	}
}

int bg_config_keys(void (*fn)(void *ctx, const struct bg_config_key *k),
		   void *ctx)
{
	struct bg_config c = { 0 };
	struct bg_cfg_iface iface = { 0 };
	struct bg_cfg_list list = { 0 }, art = { 0 };
	struct bg_cfg_fleet fleet = { 0 };

	if (root_defaults(&c))
		return -ENOMEM;
	iface_defaults(&iface);
	list_defaults(&list);
	artifact_defaults(&art);
	fleet_defaults(&fleet);
	describe(root_fields, "", 0, &c, fn, ctx);
	describe(iface_fields, "interfaces", 1, &iface, fn, ctx);
	describe(list_fields, "lists", 1, &list, fn, ctx);
	describe(artifact_fields, "artifact", 0, &art, fn, ctx);
	describe(fleet_fields, "fleet", 0, &fleet, fn, ctx);
	bg_config_free(&c);
	return 0;
}
