// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A CrowdSec local API as a source of the agent (agent/crowdsec.h): the
 * key, one pull, the copy. The set itself is agent/csset.c, the answer's
 * parse agent/csstream.c.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "agent/crowdsec.h"
#include "core/clock.h"
#include "core/units.h"
#include "core/version.h"

/* The bouncer key's bytes, at most (1.4.6 makes 32 hex digits) */
#define CS_KEY_MAX 256
/* The body of an answer that is not 200 read, at most, before the
 * transfer is cut (its status is what tells) */
#define CS_ERROR_BODY_MAX 65536
/* The apply loops read the abort flag every this many decisions */
#define CS_ABORT_EVERY 65536

static int aborted(const int *abort)
{
	return abort && __atomic_load_n(abort, __ATOMIC_RELAXED);
}

/* ---- the key ------------------------------------------------------------- */

static void key_warning(const char *path, const struct stat *sb, char *warn,
			size_t warnlen)
{
	const char *what = NULL;

	if (sb->st_mode & (S_IROTH | S_IWOTH))
		what = "readable or writable by others";
	else if (sb->st_mode & S_IWGRP)
		what = "writable by its group";
	else if (sb->st_uid && sb->st_uid != geteuid())
		what = "owned by another user";
	if (what)
		bg_whyf(warn, warnlen, "api_key_file %s is %s (mode %04o, uid %u): "
			"the bouncer's key is a secret (chmod 600)", path, what,
			(unsigned int)(sb->st_mode & 07777), (unsigned int)sb->st_uid);
}

int bg_cs_read_key(const char *path, char *key, size_t len, char *why,
		   size_t whylen, char *warn, size_t warnlen)
{
	/* O_NONBLOCK: a FIFO without a writer opens at once (and is refused
	 * below) rather than holding the pull, and the agent's stop, for
	 * ever */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), err;
	struct stat sb;
	size_t n = 0;
	ssize_t k;

	if (warnlen)
		warn[0] = 0;
	if (fd < 0) {
		err = errno;
		bg_whyf(why, whylen, "api_key_file %s: %s", path, strerror(err));
		return -err;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		bg_whyf(why, whylen, "api_key_file %s: not a regular file (%s)", path,
			S_ISFIFO(sb.st_mode) ? "a FIFO" : S_ISDIR(sb.st_mode) ? "a directory" :
			S_ISSOCK(sb.st_mode) ? "a socket" : "a device");
		close(fd);
		return -EINVAL;
	}
	if (sb.st_size >= (off_t)len) {
		bg_whyf(why, whylen, "api_key_file %s: %lld bytes, more than a key (%zu at "
			"most)", path, (long long)sb.st_size, len - 1);
		close(fd);
		return -EINVAL;
	}
	/* bounded: a file that grows meanwhile is cut at len - 1 */
	while (n < len - 1 && (k = read(fd, key + n, len - 1 - n)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			err = errno;
			close(fd);
			bg_whyf(why, whylen, "api_key_file %s: %s", path, strerror(err));
			return -err;
		}
		n += (size_t)k;
	}
	close(fd);
	key[n] = 0;
	while (n && isspace((unsigned char)key[n - 1]))
		key[--n] = 0;
	for (k = 0; (size_t)k < n && key[k] > 0x20 && key[k] < 0x7f; k++)
		;
	if (!n || (size_t)k != n) {
		memset(key, 0, len);
		bg_whyf(why, whylen, "api_key_file %s: not one key (printable, no blank)",
			path);
		return -EINVAL;
	}
	if (warnlen)
		key_warning(path, &sb, warn, warnlen);
	return 0;
}

/* ---- one pull ---------------------------------------------------------------- */

struct pull {
	struct bg_cs_state *st; /* the set */
	struct bg_cs_state ns; /* what the answer holds: the whole set at a
				  startup pull, else what is new */
	int64_t *dels; /* the ids deleted (not at a startup pull) */
	size_t ndel, capdel;
	const struct bg_cs_hooks *h;
	struct bg_cs_pull_result *r;
	struct bg_cs_stream sc;
	CURL *c;
	double now;
	uint64_t bytes, max_bytes;
	long status;
	int startup, over, stopped, err;
};

/* what was received, for a log: printable ASCII but '\\' and '\'', the
 * rest \xNN, cut with "..." */
static void show(char *dst, size_t len, const char *src, size_t n)
{
	size_t i, w = 0;

	for (i = 0; src && i < n && w + 5 < len; i++) {
		unsigned char c = (unsigned char)src[i];

		if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'')
			dst[w++] = (char)c;
		else
			w += (size_t)snprintf(dst + w, len - w, "\\x%02x", c);
	}
	if (src && i < n && len > 4)
		memcpy(dst + (w + 4 < len ? w : len - 4), "...", 4);
	else
		dst[w < len ? w : len - 1] = 0;
}

static void refused(struct pull *p, const struct bg_cs_elem *e)
{
	struct bg_cs_refusal f = { .id = e->id, .reason = e->refused,
				   .name = bg_cs_ign_names[e->refused],
				   .detail = e->detail, .deleted = e->deleted };

	p->st->ignored[e->refused]++;
	p->r->refused++;
	/* a deletion not read: the decision it names stays until a whole
	 * pull, due at once */
	if (e->deleted)
		p->st->want_full = 1;
	if (!p->h || !p->h->refused)
		return;
	show(f.value, sizeof(f.value), e->value, e->value_len);
	show(f.origin, sizeof(f.origin), e->origin, e->origin_len);
	p->h->refused(p->h->ctx, &f);
}

/* An element of the answer, checked (agent/csstream.h), into the pull. */
static int on_elem(void *ctx, const struct bg_cs_elem *e)
{
	struct pull *p = ctx;
	char origin[BG_CS_ORIGIN_MAX + 1], scen[BG_CS_SCENARIO_MAX + 1];
	int ret;

	if (e->refused >= 0) {
		refused(p, e);
		return 0;
	}
	if (e->deleted) {
		if (p->startup)
			return 0; /* the whole set is what "new" holds */
		if (p->ndel == p->capdel) {
			size_t cap = p->capdel ? 2 * p->capdel : 1024;
			int64_t *d;

			if (cap > BG_CS_MAX)
				return -E2BIG;
			d = realloc(p->dels, cap * sizeof(*d));
			if (!d)
				return -ENOMEM;
			p->dels = d;
			p->capdel = cap;
		}
		p->dels[p->ndel++] = e->id;
		return 0;
	}
	/* NUL-terminated (a string of JSON may hold a NUL: cut there) */
	snprintf(origin, sizeof(origin), "%.*s", (int)e->origin_len,
		 e->origin ? e->origin : "");
	snprintf(scen, sizeof(scen), "%.*s", (int)e->scenario_len,
		 e->scenario ? e->scenario : "");
	ret = bg_cs_put(&p->ns, e->id, &e->key, p->now + (double)e->ns / 1e9, origin, scen);
	if (ret < 0)
		return ret;
	p->r->added++;
	return 0;
}

static size_t on_body(char *data, size_t sz, size_t nm, void *ctx)
{
	struct pull *p = ctx;
	size_t n = sz * nm;

	if (aborted(p->h ? p->h->abort : NULL)) {
		p->stopped = 1;
		return 0;
	}
	if (!p->status)
		curl_easy_getinfo(p->c, CURLINFO_RESPONSE_CODE, &p->status);
	p->bytes += n;
	if (p->status != 200)
		return p->bytes > CS_ERROR_BODY_MAX ? 0 : n;
	if (p->max_bytes && p->bytes > p->max_bytes) {
		p->over = 1;
		return 0;
	}
	p->err = bg_cs_stream_feed(&p->sc, data, n);
	return p->err ? 0 : n;
}

static int on_progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c,
		       curl_off_t d)
{
	const struct pull *p = ctx;

	(void)a;
	(void)b;
	(void)c;
	(void)d;
	return aborted(p->h ? p->h->abort : NULL);
}

static void add_param(char *q, size_t len, const char *name, const char *v)
{
	size_t o = strlen(q);

	if (v && o < len)
		snprintf(q + o, len - o, "&%s=%s", name, v);
}

/* The transfer, the answer parsed as it comes. 0, or -errno with why. */
static int transfer(const struct bg_cfg_list *l, struct pull *p, const char *key,
		    char *why, size_t whylen)
{
	char hdr[CS_KEY_MAX + 16], url[2048], q[1024];
	const char *base = l->list.url;
	struct curl_slist *h = NULL;
	CURLcode cc;

	snprintf(q, sizeof(q), "startup=%s", p->startup ? "true" : "false");
	add_param(q, sizeof(q), "scopes", l->cs_scopes ? l->cs_scopes : "ip,range");
	add_param(q, sizeof(q), "origins", l->cs_origins);
	add_param(q, sizeof(q), "scenarios_containing", l->cs_scen_in);
	add_param(q, sizeof(q), "scenarios_not_containing", l->cs_scen_out);
	snprintf(url, sizeof(url), "%s%sv1/decisions/stream?%s", base,
		 base[strlen(base) - 1] == '/' ? "" : "/", q);
	snprintf(hdr, sizeof(hdr), "X-Api-Key: %s", key);
	p->c = curl_easy_init();
	if (!p->c) {
		bg_whyf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	h = curl_slist_append(h, hdr);
	h = curl_slist_append(h, "Accept: application/json");
	curl_easy_setopt(p->c, CURLOPT_URL, url);
	curl_easy_setopt(p->c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(p->c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(p->c, CURLOPT_WRITEDATA, p);
	curl_easy_setopt(p->c, CURLOPT_TIMEOUT_MS,
			 (long)((l->timeout > 0 ? l->timeout : 120) * 1000));
	curl_easy_setopt(p->c, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(p->c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(p->c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(p->c, CURLOPT_XFERINFODATA, p);
	curl_easy_setopt(p->c, CURLOPT_USERAGENT, BG_USER_AGENT);
	cc = curl_easy_perform(p->c);
	if (!p->status)
		curl_easy_getinfo(p->c, CURLINFO_RESPONSE_CODE, &p->status);
	curl_easy_cleanup(p->c);
	curl_slist_free_all(h);
	memset(hdr, 0, sizeof(hdr));
	p->r->http_status = (int)p->status;
	p->r->bytes = p->bytes;
	if (p->stopped || aborted(p->h ? p->h->abort : NULL)) {
		bg_whyf(why, whylen, "the pull was aborted (the agent stops)");
		return -EINTR;
	}
	if (p->status == 403) {
		bg_whyf(why, whylen, "the local API refused the bouncer key (HTTP 403)");
		return -EACCES;
	}
	if (p->status && p->status != 200) {
		bg_whyf(why, whylen, "the local API answered HTTP %ld", p->status);
		return -EIO;
	}
	if (p->over) {
		bg_whyf(why, whylen, "the local API's answer is larger than max_bytes "
			"(%" PRIu64 ")", p->max_bytes);
		return -EFBIG;
	}
	if (p->err == -E2BIG) {
		bg_whyf(why, whylen, "the local API's answer holds more than %u decisions "
			"(or %u bytes of their strings)", BG_CS_MAX, BG_CS_STRS_MAX);
		return -E2BIG;
	}
	if (p->err && p->err != -EBADMSG) {
		bg_whyf(why, whylen, "the local API's answer: %s", strerror(-p->err));
		return p->err;
	}
	if (cc != CURLE_OK && !p->err) {
		bg_whyf(why, whylen, "the local API: %s", curl_easy_strerror(cc));
		return -EIO;
	}
	if (p->err || bg_cs_stream_end(&p->sc)) {
		bg_whyf(why, whylen, "the local API's answer is not the stream's JSON: %s",
			p->sc.why);
		return -EBADMSG;
	}
	return 0;
}

/* The whole set read (a startup pull) made the set: each decision the
 * set held already keeps its end when within a minute (its end is
 * computed from its remaining duration at each pull), so that a set
 * unchanged writes the same copy. 0, or -EINTR. */
static int apply_whole(struct pull *p)
{
	struct bg_cs_state *st = p->st, *ns = &p->ns, keep;
	size_t i, same = 0;

	for (i = 0; i < ns->n; i++) {
		struct bg_cs_decision *d = &ns->v[i];
		const struct bg_cs_decision *o = bg_cs_find(st, d->id);

		if (i % CS_ABORT_EVERY == 0 && aborted(p->h ? p->h->abort : NULL))
			return -EINTR;
		if (o && !memcmp(&o->key, &d->key, sizeof(d->key)) &&
		    fabs(o->until - d->until) < 60 &&
		    !strcmp(bg_cs_str(st, o->origin), bg_cs_str(ns, d->origin)) &&
		    !strcmp(bg_cs_str(st, o->scenario), bg_cs_str(ns, d->scenario))) {
			d->until = o->until;
			same++;
		}
	}
	/* ns becomes the set; st's counters and flags stay */
	keep = *st;
	st->v = ns->v;
	st->n = ns->n;
	st->cap = ns->cap;
	st->slot = ns->slot;
	st->nslot = ns->nslot;
	st->seed = ns->seed;
	st->strs = ns->strs;
	ns->v = keep.v;
	ns->slot = keep.slot;
	ns->strs = keep.strs;
	if (same != st->n || st->n != keep.n)
		st->version++;
	return 0;
}

/* What changed since the last pull, made in the set. 0, -errno (-EINTR:
 * the set may be changed in part; then it is pulled whole next). */
static int apply_changes(struct pull *p)
{
	struct bg_cs_state *st = p->st, *ns = &p->ns;
	size_t i;
	int ret;

	for (i = 0; i < p->ndel; i++) {
		if (i % CS_ABORT_EVERY == 0 && aborted(p->h ? p->h->abort : NULL))
			goto stopped;
		p->r->deleted += (size_t)bg_cs_delete(st, p->dels[i]);
	}
	for (i = 0; i < ns->n; i++) {
		const struct bg_cs_decision *d = &ns->v[i];

		if (i % CS_ABORT_EVERY == 0 && aborted(p->h ? p->h->abort : NULL))
			goto stopped;
		ret = bg_cs_put(st, d->id, &d->key, d->until, bg_cs_str(ns, d->origin),
				bg_cs_str(ns, d->scenario));
		if (ret < 0) {
			st->want_full = 1;
			return ret;
		}
	}
	return 0;
stopped:
	st->want_full = 1;
	return -EINTR;
}

int bg_cs_pull(const struct bg_cfg_list *l, struct bg_cs_state *st,
	       const struct bg_cs_hooks *h, struct bg_cs_pull_result *r, char *why,
	       size_t whylen)
{
	struct bg_cs_limits lim = { .max_range4 = (unsigned int)l->cs_max_range4,
				    .max_range6 = (unsigned int)l->cs_max_range6 };
	struct pull p = { .st = st, .h = h, .r = r, .now = bg_wall(),
			  .max_bytes = l->max_bytes };
	char key[CS_KEY_MAX], warn[sizeof(r->warn)];
	int ret;

	memset(r, 0, sizeof(*r));
	p.startup = !st->synced || st->want_full || p.now - st->last_full >= BG_CS_RESYNC;
	st->pulls++;
	ret = bg_cs_read_key(l->api_key_file, key, sizeof(key), why, whylen, warn,
			     sizeof(warn));
	/* the key file's warning once, until its cause changes */
	if (!ret && strcmp(warn, st->key_warned))
		snprintf(r->warn, sizeof(r->warn), "%s", warn);
	if (!ret)
		snprintf(st->key_warned, sizeof(st->key_warned), "%s", warn);
	if (!ret)
		ret = bg_cs_stream_init(&p.sc, &lim, on_elem, &p);
	if (!ret) {
		ret = transfer(l, &p, key, why, whylen);
		bg_cs_stream_free(&p.sc);
	}
	memset(key, 0, sizeof(key));
	if (!ret) {
		ret = p.startup ? apply_whole(&p) : apply_changes(&p);
		if (ret == -EINTR)
			bg_whyf(why, whylen, "the pull was aborted (the agent stops)");
		else if (ret)
			bg_whyf(why, whylen, "the decisions do not fit in the set (%u at "
				"most, %u bytes of their strings): %s", BG_CS_MAX,
				BG_CS_STRS_MAX, strerror(-ret));
	}
	bg_cs_state_free(&p.ns);
	free(p.dels);
	if (ret) {
		st->pull_failures++;
	} else {
		st->synced = 1;
		if (p.startup) {
			st->last_full = p.now;
			st->want_full = 0;
			st->bulk = 0;
		} else if (r->added >= BG_CS_BULK) {
			st->bulk = 1;
		} else if (st->bulk) {
			/* the bulk ended: the whole set, for what the stream missed */
			st->bulk = 0;
			st->want_full = 1;
		}
	}
	/* what ran out goes, even while the API is away: its end is known */
	r->expired = bg_cs_expire(st, p.now);
	return ret;
}

/* ---- the copy ------------------------------------------------------------ */

struct by_id {
	int64_t id;
	uint32_t at;
};

static int cmp_id(const void *a, const void *b)
{
	const struct by_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int write_lines(const struct bg_cs_state *st, FILE *f, const char *origin,
		       const int *abort)
{
	struct by_id *o = malloc((st->n ? st->n : 1) * sizeof(*o));
	char text[64];
	size_t i;

	if (!o)
		return -ENOMEM;
	/* in id order: the same set, the same bytes */
	for (i = 0; i < st->n; i++) {
		o[i].id = st->v[i].id;
		o[i].at = (uint32_t)i;
	}
	qsort(o, st->n, sizeof(*o), cmp_id);
	fprintf(f, "# bloomgate: the ban decisions of the CrowdSec local API %s, "
		"%zu, one a line\n", origin, st->n);
	for (i = 0; i < st->n; i++) {
		const struct bg_cs_decision *d = &st->v[o[i].at];

		if (i % CS_ABORT_EVERY == 0 && aborted(abort)) {
			free(o);
			return -EINTR;
		}
		bg_cs_key_text(&d->key, text, sizeof(text));
		fprintf(f, "%s # crowdsec decision %" PRId64 " origin=%s until=%.0f "
			"scenario=%s\n", text, d->id,
			d->origin ? bg_cs_str(st, d->origin) : "-", d->until,
			bg_cs_str(st, d->scenario));
	}
	free(o);
	return 0;
}

int bg_cs_write(struct bg_cs_state *st, const char *path, const char *origin,
		const int *abort)
{
	char tmp[4200];
	FILE *f;
	int ret;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	ret = write_lines(st, f, origin, abort);
	if (!ret && (fflush(f) || ferror(f) || fsync(fileno(f))))
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

/* A copy's line: its value's text and fields; 0, or -1 when it is not
 * one. origin and scenario as written (printable ASCII). */
struct line {
	char value[64];
	int64_t id;
	char origin[BG_CS_ORIGIN_MAX + 1];
	char scenario[BG_CS_SCENARIO_MAX + 1];
	double until;
};

static int line_fields(const char *line, struct line *d)
{
	static const char tag[] = " # crowdsec decision ";
	const char *c = strstr(line, tag), *p;
	char *end;
	size_t n;

	memset(d, 0, sizeof(*d));
	if (!c)
		return -1;
	n = (size_t)(c - line);
	if (!n || n >= sizeof(d->value))
		return -1;
	memcpy(d->value, line, n);
	p = c + strlen(tag);
	d->id = strtoll(p, &end, 10);
	if (end == p || d->id <= 0 || strncmp(end, " origin=", 8))
		return -1;
	p = end + 8;
	n = strcspn(p, " ");
	if (n >= sizeof(d->origin) || strncmp(p + n, " until=", 7))
		return -1;
	memcpy(d->origin, p, n);
	if (!strcmp(d->origin, "-"))
		d->origin[0] = 0;
	p += n + 7;
	d->until = strtod(p, &end);
	if (end == p || !isfinite(d->until) || strncmp(end, " scenario=", 10))
		return -1;
	p = end + 10;
	n = strcspn(p, "\r\n");
	if (n >= sizeof(d->scenario))
		n = sizeof(d->scenario) - 1;
	memcpy(d->scenario, p, n);
	return 0;
}

int bg_cs_read(struct bg_cs_state *st, const char *path, const struct bg_cfg_list *l,
	       const int *abort)
{
	struct bg_cs_limits lim = { .max_range4 = (unsigned int)l->cs_max_range4,
				    .max_range6 = (unsigned int)l->cs_max_range6 };
	FILE *f = fopen(path, "re");
	char buf[512];
	size_t lines = 0, dropped = 0;
	int ret = 0;

	st->loaded = 1;
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && fgets(buf, sizeof(buf), f)) {
		union bg_cs_key k;
		struct line d;
		const char *why;

		if (lines++ % CS_ABORT_EVERY == 0 && aborted(abort))
			ret = -EINTR;
		else if (buf[0] == '#')
			continue;
		else if (line_fields(buf, &d) ||
			 bg_cs_value(d.value, strlen(d.value), 1, &lim, &k, &why) >= 0)
			dropped++; /* written by another bloomgate, or refused now */
		else if ((ret = bg_cs_put(st, d.id, &k, d.until, d.origin, d.scenario)) > 0)
			ret = 0;
	}
	fclose(f);
	st->written = st->version;
	if (dropped)
		st->version++;
	return ret;
}

int bg_cs_line_text(const char *line, char *out, size_t len)
{
	struct line d;

	if (line_fields(line, &d))
		return -1;
	snprintf(out, len, "crowdsec decision %" PRId64 " (origin %s, scenario %s)",
		 d.id, d.origin[0] ? d.origin : "-", d.scenario);
	return 0;
}
