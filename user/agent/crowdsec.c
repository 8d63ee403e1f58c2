// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A CrowdSec local API as a source of the agent (agent/crowdsec.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "agent/crowdsec.h"
#include "core/ip.h"
#include "core/units.h"

/* The bounds of one pull: its answer's bytes (a million decisions are
 * some 250 MB of JSON) and its time. */
#define CS_BODY_MAX (1ull << 30)
#define CS_TIMEOUT 60L
#define CS_KEY_MAX 256

void bg_cs_state_free(struct bg_cs_state *st)
{
	free(st->v);
	memset(st, 0, sizeof(*st));
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the set ------------------------------------------------------------ */

static size_t find(const struct bg_cs_state *st, int64_t id, int *found)
{
	size_t lo = 0, hi = st->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (st->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < st->n && st->v[lo].id == id;
	return lo;
}

static int put(struct bg_cs_state *st, const struct bg_cs_decision *d)
{
	int found;
	size_t at = find(st, d->id, &found);

	if (found) {
		if (memcmp(&st->v[at], d, sizeof(*d))) {
			st->v[at] = *d;
			st->version++;
		}
		return 0;
	}
	if (st->n == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 64;
		struct bg_cs_decision *v = realloc(st->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		st->v = v;
		st->cap = cap;
	}
	memmove(&st->v[at + 1], &st->v[at], (st->n - at) * sizeof(*d));
	st->v[at] = *d;
	st->n++;
	st->version++;
	return 0;
}

static int drop(struct bg_cs_state *st, int64_t id)
{
	int found;
	size_t at = find(st, id, &found);

	if (!found)
		return 0;
	memmove(&st->v[at], &st->v[at + 1], (st->n - at - 1) * sizeof(st->v[0]));
	st->n--;
	st->version++;
	return 1;
}

size_t bg_cs_expire(struct bg_cs_state *st, double now)
{
	size_t i, w = 0, n = st->n;

	for (i = 0; i < st->n; i++)
		if (st->v[i].until > now)
			st->v[w++] = st->v[i];
	st->n = w;
	if (w != n)
		st->version++;
	return n - w;
}

/* ---- the API's fields ---------------------------------------------------- */

/* Go's time.Duration text ("3h59m51.2s", "-1.26s", "500ms"): seconds, or
 * NAN when it is not one. */
static double go_duration(const char *s)
{
	double total = 0, sign = 1;
	int any = 0;

	if (*s == '-') {
		sign = -1;
		s++;
	}
	while (*s) {
		char *end;
		double v = strtod(s, &end), unit;

		if (end == s || *s == '-' || *s == '+')
			return NAN;
		s = end;
		if (!strncmp(s, "ms", 2)) {
			unit = 1e-3;
			s += 2;
		} else if (!strncmp(s, "us", 2) || !strncmp(s, "\xc2\xb5s", 3)) {
			unit = 1e-6;
			s += *s == 'u' ? 2 : 3;
		} else if (!strncmp(s, "ns", 2)) {
			unit = 1e-9;
			s += 2;
		} else if (*s == 'h' || *s == 'm' || *s == 's') {
			unit = *s == 'h' ? 3600 : *s == 'm' ? 60 : 1;
			s++;
		} else {
			return NAN;
		}
		total += v * unit;
		any = 1;
	}
	return any ? sign * total : NAN;
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) &&
			       json_object_is_type(v, json_type_string) ?
		       json_object_get_string(v) :
		       NULL;
}

/* printable ASCII, no '#'-free requirement: the text after "scenario="
 * runs to the end of the line */
static void clean(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; src && src[i] && i + 1 < len; i++)
		dst[i] = (unsigned char)src[i] >= 0x20 && (unsigned char)src[i] < 0x7f ?
				 src[i] : '?';
	dst[i] = 0;
}

/* An address or prefix of the API's value, checked with the project's own
 * parsers (the copy is parsed by the list parser later; a value that is
 * not one is counted here rather than reported as a bad line there). */
static int value_ok(const char *v, int range)
{
	const char *slash = strchr(v, '/');
	size_t n = slash ? (size_t)(slash - v) : strlen(v);
	__u32 a4;
	__u8 a6[16];
	char *end;
	long len;
	int six;

	if (!n || (slash && !range))
		return 0;
	six = bg_parse_ip4(v, n, &a4) != 0;
	if (six && bg_parse_ip6(v, n, a6))
		return 0;
	if (!slash)
		return 1;
	len = strtol(slash + 1, &end, 10);
	return *end == 0 && end != slash + 1 && len >= 0 && len <= (six ? 128 : 32);
}

/* One decision of the stream; 1 taken, 0 ignored (counted). */
static int decision_of(struct json_object *o, struct bg_cs_state *st,
		       struct bg_cs_decision *d, double now)
{
	const char *type = jstr(o, "type"), *scope = jstr(o, "scope"),
		   *value = jstr(o, "value"), *dur = jstr(o, "duration");
	struct json_object *id;
	int range;
	double secs;

	memset(d, 0, sizeof(*d));
	if (!json_object_object_get_ex(o, "id", &id))
		return 0;
	d->id = json_object_get_int64(id);
	if (!type || strcasecmp(type, "ban")) {
		st->ignored_type++;
		return 0;
	}
	range = scope && !strcasecmp(scope, "range");
	if (!scope || (!range && strcasecmp(scope, "ip")) || !value ||
	    strlen(value) >= sizeof(d->value) || !value_ok(value, range)) {
		st->ignored_scope++;
		return 0;
	}
	snprintf(d->value, sizeof(d->value), "%s", value);
	clean(d->origin, sizeof(d->origin), jstr(o, "origin"));
	clean(d->scenario, sizeof(d->scenario), jstr(o, "scenario"));
	secs = dur ? go_duration(dur) : NAN;
	/* no duration: until the API deletes it */
	d->until = secs == secs ? now + secs : now + 10 * 365 * 86400.0;
	return 1;
}

/* ---- one pull ------------------------------------------------------------ */

struct body {
	char *p;
	size_t n, cap;
	int over;
};

static size_t on_body(char *data, size_t sz, size_t nm, void *ctx)
{
	struct body *b = ctx;
	size_t n = sz * nm;

	if (b->n + n + 1 > CS_BODY_MAX) {
		b->over = 1;
		return 0;
	}
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		char *p;

		while (cap < b->n + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, data, n);
	b->n += n;
	b->p[b->n] = 0;
	return n;
}

static int on_progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c,
		       curl_off_t d)
{
	const int *abort = ctx;

	(void)a;
	(void)b;
	(void)c;
	(void)d;
	return abort && __atomic_load_n(abort, __ATOMIC_RELAXED);
}

static int read_key(const char *path, char *key, size_t len, char *why,
		    size_t whylen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		bg_whyf(why, whylen, "api_key_file %s: %s", path, strerror(errno));
		return -errno;
	}
	n = read(fd, key, len - 1);
	close(fd);
	if (n < 0) {
		bg_whyf(why, whylen, "api_key_file %s: %s", path, strerror(errno));
		return -EIO;
	}
	key[n] = 0;
	while (n && isspace((unsigned char)key[n - 1]))
		key[--n] = 0;
	if (!n || strpbrk(key, "\r\n\t ")) {
		bg_whyf(why, whylen, "api_key_file %s: not one key", path);
		return -EINVAL;
	}
	return 0;
}

static void add_param(char *q, size_t len, const char *name, const char *v)
{
	size_t o = strlen(q);

	if (v && o < len)
		snprintf(q + o, len - o, "&%s=%s", name, v);
}

int bg_cs_pull(const struct bg_cfg_list *l, struct bg_cs_state *st,
	       const int *abort, struct bg_cs_pull_result *r, char *why,
	       size_t whylen)
{
	char key[CS_KEY_MAX], hdr[CS_KEY_MAX + 16], url[2048], q[1024];
	struct curl_slist *h = NULL;
	struct body b = { 0 };
	struct json_object *root = NULL, *arr;
	const char *base = l->list.url;
	double now = wall();
	long status = 0;
	CURLcode cc;
	CURL *c;
	size_t i;
	int ret, startup = !st->synced || st->want_full ||
			   now - st->last_full >= BG_CS_RESYNC;

	memset(r, 0, sizeof(*r));
	st->pulls++;
	ret = read_key(l->api_key_file, key, sizeof(key), why, whylen);
	if (ret)
		goto fail;
	snprintf(q, sizeof(q), "startup=%s", startup ? "true" : "false");
	add_param(q, sizeof(q), "scopes", l->cs_scopes ? l->cs_scopes : "ip,range");
	add_param(q, sizeof(q), "origins", l->cs_origins);
	add_param(q, sizeof(q), "scenarios_containing", l->cs_scen_in);
	add_param(q, sizeof(q), "scenarios_not_containing", l->cs_scen_out);
	snprintf(url, sizeof(url), "%s%sv1/decisions/stream?%s", base,
		 base[strlen(base) - 1] == '/' ? "" : "/", q);
	snprintf(hdr, sizeof(hdr), "X-Api-Key: %s", key);
	c = curl_easy_init();
	if (!c) {
		ret = -ENOMEM;
		bg_whyf(why, whylen, "out of memory");
		goto fail;
	}
	h = curl_slist_append(h, hdr);
	h = curl_slist_append(h, "Accept: application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, CS_TIMEOUT);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)abort);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "bloomgate");
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	memset(key, 0, sizeof(key));
	memset(hdr, 0, sizeof(hdr));
	r->http_status = (int)status;
	if (cc != CURLE_OK) {
		bg_whyf(why, whylen, "the local API: %s", b.over ? "answer too large" :
			curl_easy_strerror(cc));
		ret = -EIO;
		goto fail;
	}
	if (status == 403) {
		bg_whyf(why, whylen, "the local API refused the bouncer key (HTTP 403)");
		ret = -EACCES;
		goto fail;
	}
	if (status != 200) {
		bg_whyf(why, whylen, "the local API answered HTTP %ld", status);
		ret = -EIO;
		goto fail;
	}
	root = b.p ? json_tokener_parse(b.p) : NULL;
	if (!root || !json_object_is_type(root, json_type_object)) {
		bg_whyf(why, whylen, "the local API's answer is not its JSON");
		ret = -EBADMSG;
		goto fail;
	}
	/* the whole set at startup, built aside and compared, so that a
	 * restart whose set is the copy's changes nothing (a decision's end,
	 * computed from its remaining duration at each pull, is kept when
	 * within a minute); else the changes, in place */
	{
		struct bg_cs_state ns = { 0 }, *to = startup ? &ns : st;
		size_t k;
		int same, found;

		if (!startup && json_object_object_get_ex(root, "deleted", &arr) &&
		    json_object_is_type(arr, json_type_array))
			for (i = 0; i < json_object_array_length(arr); i++) {
				struct json_object *id;

				if (json_object_object_get_ex(json_object_array_get_idx(arr, i),
							      "id", &id))
					r->deleted += (size_t)drop(st,
								   json_object_get_int64(id));
			}
		if (json_object_object_get_ex(root, "new", &arr) &&
		    json_object_is_type(arr, json_type_array))
			for (i = 0; i < json_object_array_length(arr); i++) {
				struct bg_cs_decision d;

				if (!decision_of(json_object_array_get_idx(arr, i), st, &d,
						 now)) {
					r->ignored++;
					continue;
				}
				if (d.until <= now)
					continue;
				k = find(st, d.id, &found);
				if (startup && found && !strcmp(st->v[k].value, d.value) &&
				    fabs(st->v[k].until - d.until) < 60)
					d.until = st->v[k].until;
				ret = put(to, &d);
				if (ret) {
					bg_cs_state_free(&ns);
					goto fail;
				}
				r->added++;
			}
		if (startup) {
			same = ns.n == st->n &&
			       (!ns.n || !memcmp(ns.v, st->v, ns.n * sizeof(ns.v[0])));
			free(st->v);
			st->v = ns.v;
			st->n = ns.n;
			st->cap = ns.cap;
			if (!same)
				st->version++;
		}
	}
	st->synced = 1;
	if (startup) {
		st->last_full = now;
		st->want_full = 0;
		st->bulk = 0;
	} else if (r->added >= BG_CS_BULK) {
		st->bulk = 1;
	} else if (st->bulk) {
		/* the bulk ended: the whole set, for what the stream missed */
		st->bulk = 0;
		st->want_full = 1;
	}
	json_object_put(root);
	free(b.p);
	r->expired = bg_cs_expire(st, now);
	return 0;
fail:
	st->pull_failures++;
	json_object_put(root);
	free(b.p);
	/* what ran out goes, even while the API is away: its end is known */
	r->expired = bg_cs_expire(st, now);
	return ret;
}

/* ---- the copy ------------------------------------------------------------ */

int bg_cs_write(struct bg_cs_state *st, const char *path, const char *origin)
{
	char tmp[4200];
	FILE *f;
	size_t i;
	int ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "# bloomgate: the ban decisions of the CrowdSec local API %s, "
		"%zu, one a line\n", origin, st->n);
	for (i = 0; i < st->n; i++) {
		const struct bg_cs_decision *d = &st->v[i];

		fprintf(f, "%s # crowdsec decision %" PRId64 " origin=%s until=%.0f "
			"scenario=%s\n", d->value, d->id, d->origin[0] ? d->origin : "-",
			d->until, d->scenario);
	}
	if (fflush(f) || ferror(f) || fsync(fileno(f)))
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -EIO;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	else
		st->written = st->version;
	return ret;
}

/* The fields of a copy's line; 0, or -1 when it is not one. */
static int line_fields(const char *line, struct bg_cs_decision *d)
{
	const char *c = strstr(line, " # crowdsec decision ");
	char *end;
	const char *p;
	size_t n;

	memset(d, 0, sizeof(*d));
	if (!c)
		return -1;
	n = (size_t)(c - line);
	if (!n || n >= sizeof(d->value))
		return -1;
	memcpy(d->value, line, n);
	p = c + strlen(" # crowdsec decision ");
	d->id = strtoll(p, &end, 10);
	if (end == p || strncmp(end, " origin=", 8))
		return -1;
	p = end + 8;
	n = strcspn(p, " ");
	if (n >= sizeof(d->origin) || strncmp(p + n, " until=", 7))
		return -1;
	memcpy(d->origin, p, n);
	p += n + 7;
	d->until = strtod(p, &end);
	if (end == p || strncmp(end, " scenario=", 10))
		return -1;
	p = end + 10;
	n = strcspn(p, "\r\n");
	if (n >= sizeof(d->scenario))
		n = sizeof(d->scenario) - 1;
	{
		char tmp[sizeof(d->scenario)];

		memcpy(tmp, p, n);
		tmp[n] = 0;
		clean(d->scenario, sizeof(d->scenario), tmp);
	}
	return 0;
}

int bg_cs_read(struct bg_cs_state *st, const char *path)
{
	FILE *f = fopen(path, "re");
	char line[512];
	int ret = 0;

	st->loaded = 1;
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		struct bg_cs_decision d;

		if (line[0] == '#' || line_fields(line, &d))
			continue;
		ret = put(st, &d);
	}
	fclose(f);
	st->written = st->version;
	return ret;
}

size_t bg_cs_origins(const struct bg_cs_state *st, struct bg_cs_origin_count *v,
		     size_t max)
{
	size_t i, j, n = 0;

	for (i = 0; i < st->n; i++) {
		for (j = 0; j < n; j++)
			if (!strcmp(v[j].origin, st->v[i].origin))
				break;
		if (j == n) {
			if (n == max)
				continue;
			snprintf(v[n].origin, sizeof(v[n].origin), "%s", st->v[i].origin);
			v[n++].n = 0;
		}
		v[j].n++;
	}
	return n;
}

int bg_cs_line_text(const char *line, char *out, size_t len)
{
	struct bg_cs_decision d;

	if (line_fields(line, &d))
		return -1;
	snprintf(out, len, "crowdsec decision %" PRId64 " (origin %s, scenario %s)",
		 d.id, d.origin, d.scenario);
	return 0;
}
