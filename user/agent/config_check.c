// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's config: one value against what its key accepts (the key's
 * type and check, user/agent/config_priv.h), with its own message and line.
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
#include "agent/config_priv.h"
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

/* ---- values ---- */

/* YAML's null, as an unquoted value can write it (`metrics:`, `~`). */
int cfg_y_null(const struct ynode *y)
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

/* A number's or a duration's range, as its errors and the man page say
 * it: "1e-09..0.5", "above 0..86400 s". */
const char *cfg_num_range(const struct field *f, char *buf, size_t len)
{
	snprintf(buf, len, "%s%.15g..%.15g%s", f->flags & FF_MIN_OPEN ? "above " : "",
		 f->min, f->max, f->type == F_DURATION ? " s" : "");
	return buf;
}

void cfg_key_names(const struct field *f, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; f->key && n < len; f++)
		n += snprintf(buf + n, len - n, "%s%s", n ? ", " : "", f->key);
}

void cfg_enum_names(const struct bg_opt_enum *v, char *buf, size_t len)
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
				   p->where, cfg_q(p, s),
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
				   p->where, cfg_q(p, s));
		return 0;
	}
	case C_LISTNAME:
		/* The name is the cache file's name in state_dir: no '/',
		 * no "..", no hidden file, nothing a shell would trip on. */
		if (!len || len > BG_CFG_NAME_MAX || s[0] == '.' ||
		    strspn(s, "abcdefghijklmnopqrstuvwxyz"
			      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != len)
			return bad(p, y->line, "%s: '%s' cannot be a file name: use 1 to %d of A-Z a-z 0-9 . _ -, not starting with '.'",
				   p->where, cfg_q(p, s), BG_CFG_NAME_MAX);
		return 0;
	case C_IFNAME:
		/* The kernel's dev_valid_name(). */
		if (len >= IFNAMSIZ)
			return bad(p, y->line, "%s: '%s' is too long for an interface name (%zu bytes, at most %d)",
				   p->where, cfg_q(p, s), len, IFNAMSIZ - 1);
		if (!len || !strcmp(s, ".") || !strcmp(s, "..") ||
		    strpbrk(s, "/: \t\n\r\f\v"))
			return bad(p, y->line, "%s: '%s' is not an interface name",
				   p->where, cfg_q(p, s));
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
				   p->where, cfg_q(p, s), why);
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
				   p->where, i, cfg_q(p, k->text));
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
				   p->where, cfg_q(p, t));
		len += l + 1;
	}
	s = calloc(1, len);
	if (!s)
		return cfg_fail(p, -ENOMEM, 0, "out of memory");
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

	if (cfg_y_null(y))
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
		return cfg_fail(p, -ENOMEM, 0, "out of memory");
	for (i = 0; i < n; i++) {
		if (v[i]->kind != Y_SCALAR)
			return bad(p, v[i]->line, "%s[%zu]: expected an address or a prefix, not a %s",
				   p->where, i, ykind_name[v[i]->kind]);
		if (bg_protect_parse(v[i]->text, BG_PROTECT_CONFIG, &out->v[out->n], &why))
			return bad(p, v[i]->line, "%s[%zu]: '%s': %s", p->where, i,
				   cfg_q(p, v[i]->text), why);
		out->n++;
	}
	return 0;
}

/* "0.3" or "30%": a share from 0 to 1. */
static int set_share(struct pctx *p, const struct ynode *y, char *at)
{
	const char *s = y->text;
	size_t len = strlen(s);
	char num[64];
	double d;

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
			   p->where, cfg_q(p, s));
	*(double *)at = d;
	return 0;
}

/* A whole number in [f->min, f->max], decimal digits only. */
static int set_count(struct pctx *p, const struct field *f,
		      const struct ynode *y, char *at)
{
	const char *s = y->text;
	unsigned long long u = 0;
	char *end = NULL;

	/* strtoull() would take "-1", " 1" and "+1" */
	if (isdigit((unsigned char)s[0])) {
		errno = 0;
		u = strtoull(s, &end, 10);
	}
	if (!end || *end || errno || (double)u < f->min || (double)u > f->max)
		return bad(p, y->line, "%s: '%s' is not a whole number from %g to %g",
			   p->where, cfg_q(p, s), f->min, f->max);
	*(uint64_t *)at = u;
	return 0;
}

/* One of f->values, by name. */
static int set_enum(struct pctx *p, const struct field *f,
		     const struct ynode *y, char *at)
{
	const char *s = y->text;
	const struct bg_opt_enum *e;
	char names[160];

	for (e = f->values; e->name; e++)
		if (!strcmp(e->name, s)) {
			*(int *)at = e->value;
			return 0;
		}
	cfg_enum_names(f->values, names, sizeof(names));
	return bad(p, y->line, "%s: unknown value '%s' (%s)", p->where,
		   cfg_q(p, s), names);
}

/* A list format, by name (bg_format_parse()). */
static int set_format(struct pctx *p, const struct ynode *y, char *at)
{
	const char *s = y->text;
	char names[160];
	size_t n = 0;
	int i, v;

	v = bg_format_parse(s);
	if (v >= 0) {
		*(uint8_t *)at = (uint8_t)v;
		return 0;
	}
	for (i = 0; i < BG_FMT__COUNT; i++)
		n += snprintf(names + n, sizeof(names) - n, "%s%s",
			      i ? ", " : "", bg_format_name(i));
	return bad(p, y->line, "%s: unknown format '%s' (%s)", p->where,
		   cfg_q(p, s), names);
}

int cfg_set_field(struct pctx *p, const struct field *f,
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
	if (cfg_y_null(y)) {
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
				   p->where, cfg_q(p, s));
		if (f->type == F_FLAG)
			*(uint8_t *)at = (uint8_t)v;
		else
			*(int *)at = v;
		return 0;
	case F_NUMBER:
		if (number(s, &d))
			return bad(p, y->line, "%s: '%s' is not a number",
				   p->where, cfg_q(p, s));
		goto range;
	case F_DURATION:
		d = bg_config_duration(s);
		if (d < 0)
			return bad(p, y->line, "%s: '%s' is not a duration (a number with ms, s, m, h or d)",
				   p->where, cfg_q(p, s));
range:
		if (d < f->min || d > f->max ||
		    (f->flags & FF_MIN_OPEN && d <= f->min))
			return bad(p, y->line, "%s: %s is out of range (%s)",
				   p->where, cfg_q(p, s),
				   cfg_num_range(f, names, sizeof(names)));
		*(double *)at = d;
		return 0;
	case F_SHARE:
		return set_share(p, y, at);
	case F_SIZE:
		if (bg_opt_size(s, (uint64_t *)at) || !*(uint64_t *)at)
			return bad(p, y->line, "%s: '%s' is not a size above 0 (bytes, or with K, M, G)",
				   p->where, cfg_q(p, s));
		return 0;
	case F_COUNT:
		return set_count(p, f, y, at);
	case F_ENUM:
		return set_enum(p, f, y, at);
	case F_FORMAT:
		return set_format(p, y, at);
	case F_STR: {
		int err = check_str(p, f, y);
		char *dup;

		if (err)
			return err;
		dup = strdup(s);
		if (!dup)
			return cfg_fail(p, -ENOMEM, 0, "out of memory");
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

