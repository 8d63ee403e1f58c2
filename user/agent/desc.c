// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The description of a filter (user/agent/agent_priv.h): what decides what
 * it holds, each list with a good copy (name, origin, the copy's SHA-256,
 * how it is read), the target rate and the exact stage; its fingerprint,
 * its JSON (filter.json), and what changed between two of them (what a
 * reload answers).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "agent/agent_priv.h"
#include "core/url.h"

void desc_free(struct desc *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		bg_list_desc_free(&d->v[i].list);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

int desc_add(struct desc *d, const struct desc_list *l)
{
	struct desc_list *v = d->v, *e;

	if (!(d->n & (d->n - 1))) { /* doubles at powers of two */
		v = realloc(d->v, (d->n ? 2 * d->n : 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->v = v;
	}
	e = &d->v[d->n];
	*e = *l;
	if (bg_list_desc_dup(&e->list, &l->list))
		return -ENOMEM;
	d->n++;
	return 0;
}

int desc_copy(struct desc *dst, const struct desc *src)
{
	size_t i;

	memset(dst, 0, sizeof(*dst));
	dst->fpr = src->fpr;
	dst->confirm = src->confirm;
	memcpy(dst->fp, src->fp, sizeof(dst->fp));
	for (i = 0; i < src->n; i++)
		if (desc_add(dst, &src->v[i])) {
			desc_free(dst);
			return -ENOMEM;
		}
	return 0;
}

struct json_object *desc_json(const struct desc *d)
{
	struct json_object *o = json_object_new_object(), *arr, *l;
	size_t i;

	if (!o)
		return NULL;
	json_object_object_add(o, "fpr", json_object_new_double(d->fpr));
	json_object_object_add(o, "confirm", json_object_new_boolean(d->confirm));
	arr = json_object_new_array();
	json_object_object_add(o, "lists", arr);
	for (i = 0; arr && i < d->n; i++) {
		const struct bg_list_desc *e = &d->v[i].list;
		char origin[1024];

		/* filter.json is a file: the URL without its password (a
		 * changed password alone changes no list's content) */
		bg_url_redact(bg_list_origin(e), origin, sizeof(origin));

		l = json_object_new_object();
		if (!l)
			break;
		json_object_object_add(l, "name", json_object_new_string(e->name));
		json_object_object_add(l, "origin", json_object_new_string(origin));
		json_object_object_add(l, "sha256", json_object_new_string(d->v[i].sha256));
		json_object_object_add(l, "format", json_object_new_int(e->format));
		json_object_object_add(l, "subdomains", json_object_new_boolean(e->subdomains));
		json_object_object_add(l, "allow", json_object_new_boolean(e->allow));
		json_object_object_add(l, "allow_wide", json_object_new_boolean(e->allow_wide));
		json_object_array_add(arr, l);
	}
	if (!arr || i < d->n) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* The whole description hashed: no list is left out however many there
 * are (the text may be megabytes), so a change in any of them tells. */
int desc_seal(struct desc *d)
{
	static const char digits[] = "0123456789abcdef";
	struct json_object *o = desc_json(d);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;
	const char *text;

	if (!o)
		return -ENOMEM;
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if (!text || !EVP_Digest(text, strlen(text), md, &n, EVP_sha256(), NULL)) {
		json_object_put(o);
		return -ENOMEM;
	}
	json_object_put(o);
	for (i = 0; i < n && 2 * i + 1 < sizeof(d->fp); i++) {
		d->fp[2 * i] = digits[md[i] >> 4];
		d->fp[2 * i + 1] = digits[md[i] & 15];
	}
	d->fp[2 * i] = 0;
	return 0;
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "";
}

static int jint(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_int(v) : 0;
}

int desc_from_json(struct json_object *o, struct desc *d)
{
	struct json_object *arr, *v;
	size_t i;

	memset(d, 0, sizeof(*d));
	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "lists", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return -EINVAL;
	if (json_object_object_get_ex(o, "fpr", &v))
		d->fpr = json_object_get_double(v);
	d->confirm = json_object_object_get_ex(o, "confirm", &v) &&
		     json_object_get_boolean(v);
	for (i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *origin = jstr(e, "origin");
		struct desc_list l = { .list = {
			.name = jstr(e, "name"),
			.format = (uint8_t)jint(e, "format"),
			.subdomains = (uint8_t)jint(e, "subdomains"),
			.allow = (uint8_t)jint(e, "allow"),
			.allow_wide = (uint8_t)jint(e, "allow_wide"),
		} };

		/* only the origin is saved: a path is absolute, a url
		 * http(s):// (the config checks both), so its first byte
		 * tells which it is */
		if (origin[0] == '/')
			l.list.path = origin;
		else
			l.list.url = origin;

		snprintf(l.sha256, sizeof(l.sha256), "%s", jstr(e, "sha256"));
		if (desc_add(d, &l)) {
			desc_free(d);
			return -ENOMEM;
		}
	}
	return 0;
}

static const struct desc_list *desc_get(const struct desc *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].list.name, name))
			return &d->v[i];
	return NULL;
}

/* Appends to out ("; " between parts, ", " between names), cut at len. */
static void put(char *out, size_t len, int *part, int *first, const char *head,
		const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void put(char *out, size_t len, int *part, int *first, const char *head,
		const char *fmt, ...)
{
	size_t o = strlen(out);
	va_list ap;

	if (*first) {
		if (o < len)
			o += (size_t)snprintf(out + o, len - o, "%s%s", *part ? "; " : "", head);
		*part = 1;
		*first = 0;
	} else if (o < len) {
		o += (size_t)snprintf(out + o, len - o, ", ");
	}
	if (o < len) {
		va_start(ap, fmt);
		vsnprintf(out + o, len - o, fmt, ap);
		va_end(ap);
	}
}

void desc_diff(const struct desc *old, const struct desc *new, char *out,
	       size_t len)
{
	int part = 0, first;
	size_t i;

	out[0] = 0;
	first = 1;
	for (i = 0; i < old->n; i++)
		if (!desc_get(new, old->v[i].list.name))
			put(out, len, &part, &first, "lists removed: ", "%s",
			    old->v[i].list.name);
	first = 1;
	for (i = 0; i < new->n; i++)
		if (!desc_get(old, new->v[i].list.name))
			put(out, len, &part, &first, "lists added: ", "%s",
			    new->v[i].list.name);
	first = 1;
	for (i = 0; i < new->n; i++) {
		const struct desc_list *nl = &new->v[i],
				       *ol = desc_get(old, nl->list.name);
		const struct bg_list_desc *n = &nl->list, *o = ol ? &ol->list : NULL;
		char what[128] = "", ou[1024], nu[1024];

		if (!o)
			continue;
#define DIFF(c, word)                                                        \
	if (c)                                                               \
		snprintf(what + strlen(what), sizeof(what) - strlen(what), "%s%s", \
			 what[0] ? ", " : "", word)
		DIFF(strcmp(ol->sha256, nl->sha256), "copy");
		DIFF(strcmp(bg_url_redact(bg_list_origin(o), ou, sizeof(ou)),
			    bg_url_redact(bg_list_origin(n), nu, sizeof(nu))), "origin");
		DIFF(o->format != n->format, "format");
		DIFF(o->subdomains != n->subdomains, "subdomains");
		DIFF(o->allow != n->allow, "allow");
		DIFF(o->allow_wide != n->allow_wide, "allow_wide");
#undef DIFF
		if (what[0])
			put(out, len, &part, &first, "lists changed: ", "%s (%s)",
			    n->name, what);
	}
	first = 1;
	if (old->fpr != new->fpr)
		put(out, len, &part, &first, "", "fpr %g -> %g", old->fpr, new->fpr);
	first = 1;
	if (!old->confirm != !new->confirm)
		put(out, len, &part, &first, "", "confirm %s -> %s",
		    old->confirm ? "on" : "off", new->confirm ? "on" : "off");
	if (!out[0] && strcmp(old->fp, new->fp))
		snprintf(out, len, "lists reordered");
	if (!out[0])
		snprintf(out, len, "nothing changed");
}


int wanted_desc(const struct agent *a, struct desc *d)
{
	size_t i;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	d->fpr = a->cfg.fpr;
	d->confirm = a->cfg.confirm;
	for (i = 0; i < a->nsrc && !ret; i++) {
		const struct source *s = &a->src[i];
		int cand = s->phase == SRC_CANDIDATE || s->phase == SRC_IN_REBUILD;
		struct desc_list l = { .list = s->cfg->list };

		if (!cand && !s->have_copy)
			continue;
		memcpy(l.sha256, cand ? s->cand_sha : s->rec.sha256, sizeof(l.sha256));
		ret = desc_add(d, &l);
	}
	if (!ret)
		ret = desc_seal(d);
	if (ret)
		desc_free(d);
	return ret;
}
