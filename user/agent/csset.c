// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A crowdsec: source's set of decisions (agent/crowdsec.h): a dense array
 * in no order, indexed by id in a hash table of open addressing (linear
 * probing, at most half full, deletion by backward shift: no tombstone),
 * its strings held once. Insert, find and delete cost a few probes
 * whatever the order the ids come in; a deletion moves the last decision
 * into the hole. The hash is the project's (XXH64) with a random seed per
 * set: ids come from outside, and must not choose their slots.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/random.h>

#include "core/grow.h"
#include "agent/crowdsec.h"
#include "bloomgate/hash.h"

#define SLOTS_MIN 64

_Static_assert(2ull * BG_CS_MAX <= UINT32_MAX, "an index + 1 fits a slot");
_Static_assert(BG_CS_STRS_MAX < UINT32_MAX, "a string's offset + 1 fits a slot");

static uint64_t random_seed(void)
{
	uint64_t s;
	struct timespec ts;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) == sizeof(s))
		return s;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec;
}

void bg_cs_state_free(struct bg_cs_state *st)
{
	free(st->v);
	free(st->slot);
	free(st->strs.p);
	free(st->strs.slot);
	memset(st, 0, sizeof(*st));
}

/* ---- strings ------------------------------------------------------------------ */

static uint64_t str_hash(const struct bg_cs_state *st, const char *s, size_t n)
{
	return bg_hash64(s, (__u32)n, st->seed ^ 0x5bd1e995u);
}

static int strs_grow(struct bg_cs_state *st)
{
	struct bg_cs_strs *t = &st->strs;
	size_t ns = t->nslot ? 2 * t->nslot : SLOTS_MIN, i, off;
	uint32_t *slot = calloc(ns, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (off = 1; off < t->len; off += strlen(t->p + off) + 1) {
		i = str_hash(st, t->p + off, strlen(t->p + off)) & (ns - 1);
		while (slot[i])
			i = (i + 1) & (ns - 1);
		slot[i] = (uint32_t)off + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = ns;
	return 0;
}

/* The offset of s (made printable ASCII, at most max bytes) among the
 * set's strings, added when new: > 0, 0 for "", or -errno. */
static long intern(struct bg_cs_state *st, const char *src, size_t max)
{
	struct bg_cs_strs *t = &st->strs;
	char s[BG_CS_SCENARIO_MAX + 1];
	size_t n, i, need;

	for (n = 0; src && src[n] && n < max && n < sizeof(s) - 1; n++)
		s[n] = (unsigned char)src[n] >= 0x20 && (unsigned char)src[n] < 0x7f ?
			       src[n] : '?';
	s[n] = 0;
	if (!n)
		return 0;
	if (2 * (t->n + 1) > t->nslot && strs_grow(st))
		return -ENOMEM;
	for (i = str_hash(st, s, n) & (t->nslot - 1); t->slot[i];
	     i = (i + 1) & (t->nslot - 1))
		if (!strcmp(t->p + t->slot[i] - 1, s))
			return (long)t->slot[i] - 1;
	/* offset 0 is "": the first string goes after it */
	need = (t->len ? t->len : 1) + n + 1;
	if (need > BG_CS_STRS_MAX)
		return -E2BIG;
	if (bg_grow(&t->p, &t->cap, need, 1, 4096))
		return -ENOMEM;
	if (!t->len)
		t->p[t->len++] = 0;
	memcpy(t->p + t->len, s, n + 1);
	t->slot[i] = (uint32_t)t->len + 1;
	t->n++;
	t->len += n + 1;
	return (long)t->slot[i] - 1;
}

const char *bg_cs_str(const struct bg_cs_state *st, uint32_t off)
{
	return off && off < st->strs.len ? st->strs.p + off : "";
}

/* ---- the index by id ------------------------------------------------------------ */

static size_t home(const struct bg_cs_state *st, int64_t id)
{
	return bg_hash64(&id, sizeof(id), st->seed) & (st->nslot - 1);
}

/* The slot holding id, or the empty one where it would go. */
static size_t slot_of(const struct bg_cs_state *st, int64_t id)
{
	size_t i = home(st, id);

	((struct bg_cs_state *)st)->probes++;
	while (st->slot[i] && st->v[st->slot[i] - 1].id != id) {
		i = (i + 1) & (st->nslot - 1);
		((struct bg_cs_state *)st)->probes++;
	}
	return i;
}

static int index_grow(struct bg_cs_state *st)
{
	size_t ns = st->nslot ? 2 * st->nslot : SLOTS_MIN, k;
	uint32_t *slot = calloc(ns, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	free(st->slot);
	st->slot = slot;
	st->nslot = ns;
	for (k = 0; k < st->n; k++)
		st->slot[slot_of(st, st->v[k].id)] = (uint32_t)k + 1;
	return 0;
}

const struct bg_cs_decision *bg_cs_find(const struct bg_cs_state *st, int64_t id)
{
	size_t i;

	if (!st->nslot)
		return NULL;
	i = slot_of(st, id);
	return st->slot[i] ? &st->v[st->slot[i] - 1] : NULL;
}

/* Empties slot i, the entries after it in its run moved back where a
 * lookup still finds them (no tombstone). */
static void slot_clear(struct bg_cs_state *st, size_t i)
{
	size_t mask = st->nslot - 1, j = i, h;

	for (;;) {
		j = (j + 1) & mask;
		if (!st->slot[j])
			break;
		h = home(st, st->v[st->slot[j] - 1].id);
		/* the entry at j may move to i when its home is not in
		 * (i, j], cyclically */
		if (i <= j ? (h <= i || h > j) : (h <= i && h > j)) {
			st->slot[i] = st->slot[j];
			i = j;
		}
	}
	st->slot[i] = 0;
}

int bg_cs_put(struct bg_cs_state *st, int64_t id, const union bg_cs_key *key,
	      double until, const char *origin, const char *scenario)
{
	struct bg_cs_decision d;
	long o, s;
	size_t i;

	/* the key alone, no byte of the union beyond it: decisions are
	 * compared whole */
	memset(&d, 0, sizeof(d));
	d.id = id;
	d.until = until;
	if (key->kind == BG_KEY_IPV4)
		d.key.k4 = key->k4;
	else
		d.key.k6 = key->k6;

	if (!st->seed)
		st->seed = random_seed() | 1;
	/* the bound before any allocation: a new id past it is refused */
	if (st->n >= BG_CS_MAX && !bg_cs_find(st, id))
		return -E2BIG;
	if (2 * (st->n + 1) > st->nslot && index_grow(st))
		return -ENOMEM;
	o = intern(st, origin, BG_CS_ORIGIN_MAX);
	s = o < 0 ? o : intern(st, scenario, BG_CS_SCENARIO_MAX);
	if (o < 0 || s < 0)
		return (int)(o < 0 ? o : s);
	d.origin = (uint32_t)o;
	d.scenario = (uint32_t)s;
	i = slot_of(st, id);
	if (st->slot[i]) {
		struct bg_cs_decision *old = &st->v[st->slot[i] - 1];

		if (!memcmp(old, &d, sizeof(d)))
			return 0;
		*old = d;
		st->version++;
		return 1;
	}
	if (st->n == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : SLOTS_MIN;
		struct bg_cs_decision *v;

		if (cap > BG_CS_MAX)
			cap = BG_CS_MAX;
		v = realloc(st->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		st->v = v;
		st->cap = cap;
	}
	st->v[st->n] = d;
	st->slot[i] = (uint32_t)++st->n;
	st->version++;
	return 1;
}

int bg_cs_delete(struct bg_cs_state *st, int64_t id)
{
	size_t i, k, last;

	if (!st->nslot)
		return 0;
	i = slot_of(st, id);
	if (!st->slot[i])
		return 0;
	k = st->slot[i] - 1;
	slot_clear(st, i);
	last = st->n - 1;
	if (k != last) {
		/* the last decision into the hole, its slot following */
		st->v[k] = st->v[last];
		st->slot[slot_of(st, st->v[k].id)] = (uint32_t)k + 1;
	}
	st->n--;
	st->version++;
	return 1;
}

int bg_cs_foreach(const struct bg_cs_state *st,
		  int (*fn)(void *ctx, const struct bg_cs_decision *d), void *ctx)
{
	size_t i;
	int r;

	for (i = 0; i < st->n; i++)
		if ((r = fn(ctx, &st->v[i])))
			return r;
	return 0;
}

size_t bg_cs_expire(struct bg_cs_state *st, double now)
{
	size_t i = 0, gone = 0;

	/* a deletion moves the last decision to i: looked at next */
	while (i < st->n)
		if (st->v[i].until <= now && bg_cs_delete(st, st->v[i].id))
			gone++;
		else
			i++;
	return gone;
}

void bg_cs_key_text(const union bg_cs_key *k, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (k->kind == BG_KEY_IPV4) {
		inet_ntop(AF_INET, &k->k4.addr, a, sizeof(a));
		if (k->k4.plen == 32)
			snprintf(buf, len, "%s", a);
		else
			snprintf(buf, len, "%s/%u", a, k->k4.plen);
	} else {
		inet_ntop(AF_INET6, k->k6.addr, a, sizeof(a));
		if (k->k6.plen == 128)
			snprintf(buf, len, "%s", a);
		else
			snprintf(buf, len, "%s/%u", a, k->k6.plen);
	}
}

size_t bg_cs_origins(const struct bg_cs_state *st, struct bg_cs_origin_count *v,
		     size_t max)
{
	uint32_t off[BG_CS_ORIGINS_MAX];
	size_t i, j, n = 0;

	if (max > BG_CS_ORIGINS_MAX)
		max = BG_CS_ORIGINS_MAX;
	for (i = 0; i < st->n; i++) {
		/* a string is held once: its offset is its identity */
		for (j = 0; j < n && off[j] != st->v[i].origin; j++)
			;
		if (j == n) {
			if (n == max)
				continue;
			off[n] = st->v[i].origin;
			snprintf(v[n].origin, sizeof(v[n].origin), "%s",
				 bg_cs_str(st, st->v[i].origin));
			v[n++].n = 0;
		}
		v[j].n++;
	}
	return n;
}
