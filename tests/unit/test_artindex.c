// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for the artifact's provenance index (user/core/artindex.c):
 * entries handed to the collector as a parse hands them (bg_entry_ref,
 * from several workers), the index built from them, and what `check`
 * finds in it; the same items in any order give the same bytes; a delta's
 * adds and removes in place, the load bound, removal inside a probe
 * chain; images bg_ai_valid() refuses; a million items.
 *
 * Hits are compared as text, one "list block|allow [kind] entry [<parent>]"
 * per hit, "; " between them, in the order bg_ai_find() gives them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomgate/bloom.h"
#include "core/artindex.h"
#include "core/domains.h"
#include "core/lists.h"
#include "core/par.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define SEED 0x1234abcd5678ef01ULL

/* One entry as a parse hands it: an address or prefix (kind 0), or a name
 * of enum bg_name_kind kind, already normalised. */
struct ent {
	unsigned int worker;
	size_t source;
	int allow;
	int kind;
	const char *text;
};

/* Hands e to the collector as a parse would. */
static void feed_one(struct bg_ai_collector *c, const struct ent *e)
{
	struct bg_entry_ref r = {
		.source = e->source, .line = 1, .allow = (uint8_t)e->allow,
	};
	struct bg_key4 k4;
	struct bg_key6 k6;

	if (e->kind) {
		r.kind = BG_ENTRY_NAME;
		r.name_kind = (uint8_t)e->kind;
		r.key = e->text;
	} else {
		r.kind = (uint8_t)bg_parse_prefix(e->text, &k4, &k6, NULL);
		assert_true(r.kind == BG_KEY_IPV4 || r.kind == BG_KEY_IPV6);
		r.key = r.kind == BG_KEY_IPV4 ? (const void *)&k4 : (const void *)&k6;
	}
	bg_ai_entry(c, e->worker, &r);
}

/* The item of e, as bg_ai_items() would give it. */
static struct bg_ai_item item_of(const struct ent *e)
{
	struct bg_entry_ref r = { .source = e->source, .allow = (uint8_t)e->allow };
	struct bg_ai_item it = { .source = (uint32_t)e->source };
	struct bg_key4 k4;
	struct bg_key6 k6;

	if (e->kind) {
		r.kind = BG_ENTRY_NAME;
		r.name_kind = (uint8_t)e->kind;
		r.key = e->text;
	} else {
		r.kind = (uint8_t)bg_parse_prefix(e->text, &k4, &k6, NULL);
		r.key = r.kind == BG_KEY_IPV4 ? (const void *)&k4 : (const void *)&k6;
	}
	it.h = bg_ai_hash_entry(SEED, &r, &it.cls, &it.plen);
	assert_true(it.cls < BG_AI__CLASSES);
	return it;
}

/* Collects v[0, n) and builds; the number of items in *nitems. */
static void build(const struct ent *v, size_t n, void **img, size_t *len,
		  size_t *nitems)
{
	struct bg_ai_collector *c;
	struct bg_ai_item *items;
	size_t i, k;

	assert_int_equal(bg_ai_collector_new(SEED, &c), 0);
	for (i = 0; i < n; i++)
		feed_one(c, &v[i]);
	assert_int_equal(bg_ai_items(c, &items, &k), 0);
	assert_int_equal(bg_ai_build(items, k, SEED, img, len), 0);
	assert_int_equal(bg_ai_valid(*img, *len), 0);
	if (nitems)
		*nitems = k;
	free(items);
	bg_ai_collector_free(c);
}

static const char *const kind_names[] = { "", "exact ", "tree ", "subs " };

/* The hits of arg as text (see the top), or "error N". */
static const char *found(const void *img, size_t len, const char *arg)
{
	static char out[1 << 16];
	struct bg_ai_hit *h;
	size_t n, i, o = 0;
	int ret = bg_ai_find(img, len, arg, &h, &n);

	if (ret) {
		assert_null(h);
		assert_int_equal(n, 0);
		snprintf(out, sizeof(out), "error %d", ret);
		return out;
	}
	assert_true(n ? h != NULL : h == NULL);
	out[0] = 0;
	for (i = 0; i < n; i++) {
		assert_true(h[i].name_kind >= 0 && h[i].name_kind <= 3);
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%u %s %s%s",
				      i ? "; " : "", h[i].source,
				      h[i].allow ? "allow" : "block",
				      kind_names[h[i].name_kind], h[i].entry);
		if (h[i].parent[0])
			o += (size_t)snprintf(out + o, sizeof(out) - o, " <%s>",
					      h[i].parent);
		assert_true(o < sizeof(out));
	}
	free(h);
	return out;
}

#define assert_found(img, len, arg, want) \
	assert_string_equal(found(img, len, arg), want)

/* ---- Finding --------------------------------------------------------------- */

static const struct ent addrs[] = {
	{ 0, 0, 0, 0, "192.0.2.0/24" },
	{ 1, 0, 0, 0, "198.51.100.7" },
	{ 1, 1, 0, 0, "192.0.2.5" },
	/* the same /24 in a second list: a second item */
	{ 0, 1, 0, 0, "192.0.2.0/24" },
	/* the same /24 again in list 0, from the other worker: one item */
	{ 1, 0, 0, 0, "192.0.2.0/24" },
	/* host bits: the parse hands the masked key */
	{ 0, 0, 0, 0, "192.0.2.77/24" },
	{ 0, 2, 1, 0, "192.0.2.5" },
	{ 1, 2, 1, 0, "203.0.113.0/25" },
	{ 0, 3, 0, 0, "2001:db8::/32" },
	{ 1, 3, 0, 0, "2001:db8::1" },
	{ 1, 4, 1, 0, "2001:db8:0:1::/64" },
	/* an IPv4-mapped IPv6 entry is an IPv6 one */
	{ 0, 3, 0, 0, "::ffff:198.51.100.9" },
};

static void test_find_addresses(void **state)
{
	size_t len, n;
	void *img;

	(void)state;
	build(addrs, N(addrs), &img, &len, &n);
	assert_int_equal(n, 10);
	assert_int_equal(((const struct bg_art_index_hdr *)img)->records, 10);

	/* longest first; block before allow; the lists in order */
	assert_found(img, len, "192.0.2.5",
		     "1 block 192.0.2.5; 2 allow 192.0.2.5; "
		     "0 block 192.0.2.0/24; 1 block 192.0.2.0/24");
	assert_found(img, len, "192.0.2.200",
		     "0 block 192.0.2.0/24; 1 block 192.0.2.0/24");
	assert_found(img, len, "192.0.2.0/32",
		     "0 block 192.0.2.0/24; 1 block 192.0.2.0/24");
	assert_found(img, len, "198.51.100.7", "0 block 198.51.100.7");
	assert_found(img, len, "198.51.100.8", "");
	assert_found(img, len, "203.0.113.127", "2 allow 203.0.113.0/25");
	assert_found(img, len, "203.0.113.128", "");
	assert_found(img, len, "2001:db8::1",
		     "3 block 2001:db8::1; 3 block 2001:db8::/32");
	assert_found(img, len, "2001:DB8:0:1::ff",
		     "4 allow 2001:db8:0:1::/64; 3 block 2001:db8::/32");
	assert_found(img, len, "2001:db9::1", "");
	/* IPv4-mapped: the IPv6 entry only, never the IPv4 ones */
	assert_found(img, len, "::ffff:198.51.100.9",
		     "3 block ::ffff:198.51.100.9");
	assert_found(img, len, "198.51.100.9", "");
	assert_found(img, len, "::ffff:192.0.2.5", "");

	/* neither an address nor a name */
	assert_found(img, len, "192.0.2.0/24", "error -22");
	assert_found(img, len, "not a name", "error -22");
	assert_found(img, len, "", "error -22");
	assert_found(img, len, "-bad.example", "error -22");
	/* a name: no name class in this index, nothing found */
	assert_found(img, len, "example.com", "");
	free(img);
}

/* eleven labels: deeper than the datapath probes parents */
#define DEEP "a.b.c.d.e.f.g.h.i.example.com"

static const struct ent names[] = {
	{ 0, 0, 0, BG_NAME_EXACT, "ads.example.com" },
	{ 1, 0, 0, BG_NAME_TREE, "example.com" },
	{ 0, 0, 0, BG_NAME_SUBS, "tracker.net" },
	{ 1, 1, 1, BG_NAME_TREE, "cdn.example.com" },
	{ 0, 1, 1, BG_NAME_EXACT, "ads.example.com" },
	{ 1, 2, 0, BG_NAME_SUBS, "example.com" },
	{ 0, 2, 0, BG_NAME_EXACT, "example.org" },
	/* the same rule in two lists, and twice in one */
	{ 0, 3, 0, BG_NAME_TREE, "tracker.net" },
	{ 1, 4, 0, BG_NAME_TREE, "tracker.net" },
	{ 0, 4, 0, BG_NAME_TREE, "tracker.net" },
	/* kinds are part of the key: an exact rule is not a tree one */
	{ 1, 5, 0, BG_NAME_EXACT, "tracker.net" },
	{ 0, 6, 0, BG_NAME_TREE, DEEP },
	/* an address next to the names */
	{ 1, 7, 0, 0, "192.0.2.1" },
};

static void test_find_names(void **state)
{
	size_t len, n;
	void *img;

	(void)state;
	build(names, N(names), &img, &len, &n);
	assert_int_equal(n, N(names) - 1);

	/* the query normalised (case, trailing dot); the name's own rules,
	 * then its parents' */
	assert_found(img, len, "ADS.Example.com.",
		     "0 block exact ads.example.com; "
		     "1 allow exact ads.example.com; "
		     "0 block tree example.com <example.com>; "
		     "2 block subs example.com <example.com>");
	/* a subdomains-only rule does not cover the name itself */
	assert_found(img, len, "example.com", "0 block tree example.com");
	assert_found(img, len, "x.cdn.example.com",
		     "1 allow tree cdn.example.com <cdn.example.com>; "
		     "0 block tree example.com <example.com>; "
		     "2 block subs example.com <example.com>");
	assert_found(img, len, "cdn.example.com",
		     "1 allow tree cdn.example.com; "
		     "0 block tree example.com <example.com>; "
		     "2 block subs example.com <example.com>");
	assert_found(img, len, "tracker.net",
		     "5 block exact tracker.net; "
		     "3 block tree tracker.net; 4 block tree tracker.net");
	assert_found(img, len, "a.b.tracker.net",
		     "3 block tree tracker.net <tracker.net>; "
		     "4 block tree tracker.net <tracker.net>; "
		     "0 block subs tracker.net <tracker.net>");
	assert_found(img, len, "example.org", "2 block exact example.org");
	assert_found(img, len, "www.example.org", "");
	assert_found(img, len, "example.net", "");
	/* the deep name itself is found; as a parent of eleven labels it is
	 * never probed (nor by the datapath) */
	assert_found(img, len, DEEP,
		     "6 block tree " DEEP "; "
		     "0 block tree example.com <example.com>; "
		     "2 block subs example.com <example.com>");
	assert_found(img, len, "x." DEEP,
		     "0 block tree example.com <example.com>; "
		     "2 block subs example.com <example.com>");
	/* the address class next to the names */
	assert_found(img, len, "192.0.2.1", "7 block 192.0.2.1");
	free(img);
}

/* ---- The same bytes whatever the order -------------------------------- */

/* xorshift64*: the tests' own reproducible numbers */
static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545F4914F6CDD1DULL;
}

/* n random entries of every class, their texts in buf (n * 64 bytes),
 * some of them repeated */
static struct ent *random_ents(size_t n, char **buf)
{
	struct ent *v = calloc(n, sizeof(*v));
	size_t i;

	*buf = malloc(n * 64);
	assert_non_null(v);
	assert_non_null(*buf);
	for (i = 0; i < n; i++) {
		char *t = *buf + i * 64;
		uint64_t r = rnd(), a = rnd();

		if (i > 10 && r % 10 == 0) {
			/* a repeat of an earlier entry, maybe in another list */
			v[i] = v[rnd() % i];
			if (r % 20 == 0)
				v[i].source = (v[i].source + 1) % 40;
			continue;
		}
		v[i].source = r % 40;
		v[i].allow = (r >> 8) % 5 == 0;
		switch ((r >> 16) % 3) {
		case 0:
			snprintf(t, 64, "%u.%u.%u.%u/%u", (unsigned int)(a >> 24) & 255,
				 (unsigned int)(a >> 16) & 255,
				 (unsigned int)(a >> 8) & 255, (unsigned int)a & 255,
				 8 + (unsigned int)(r >> 24) % 25);
			break;
		case 1:
			snprintf(t, 64, "%x:%x:%x::%x/%u",
				 0x2000 + (unsigned int)(r >> 32) % 0x2000,
				 (unsigned int)(a >> 48) & 0xffff,
				 (unsigned int)(a >> 32) & 0xffff,
				 (unsigned int)a & 0xffff,
				 16 + (unsigned int)(r >> 24) % 113);
			break;
		default:
			snprintf(t, 64, "n%llx.example.com",
				 (unsigned long long)(a & 0xffffffffff));
			v[i].kind = 1 + (int)((r >> 24) % 3);
			break;
		}
		v[i].text = t;
	}
	return v;
}

/* Collects v in the order perm gives, each entry from worker w[i], and
 * returns the items. */
static struct bg_ai_item *items_of(const struct ent *v, size_t n,
				   const size_t *perm, unsigned int nworkers,
				   size_t *k)
{
	struct bg_ai_collector *c;
	struct bg_ai_item *items;
	size_t i;

	assert_int_equal(bg_ai_collector_new(SEED, &c), 0);
	for (i = 0; i < n; i++) {
		struct ent e = v[perm ? perm[i] : i];

		e.worker = nworkers > 1 ? (unsigned int)(rnd() % nworkers) : 0;
		feed_one(c, &e);
	}
	assert_int_equal(bg_ai_items(c, &items, k), 0);
	bg_ai_collector_free(c);
	return items;
}

/*
 * Whether check finds e: an address entry by its own address (host bits
 * and all: the entry covers it), with its length; a name as the name
 * itself, or for a subdomains-only rule as a subdomain of it.
 */
static int listed(const void *img, size_t len, const struct ent *e)
{
	char q[300], *slash;
	const char *len_part = NULL;
	struct bg_ai_hit *h;
	size_t n, i;
	int ok = 0;

	if (e->kind == BG_NAME_SUBS)
		snprintf(q, sizeof(q), "x.%s", e->text);
	else
		snprintf(q, sizeof(q), "%s", e->text);
	if (!e->kind && (slash = strchr(q, '/'))) {
		*slash = 0;
		len_part = e->text + (slash - q);
	}
	assert_int_equal(bg_ai_find(img, len, q, &h, &n), 0);
	for (i = 0; i < n && !ok; i++) {
		const char *s = strchr(h[i].entry, '/');

		if (h[i].source != e->source || h[i].allow != e->allow ||
		    h[i].name_kind != e->kind)
			continue;
		if (e->kind)
			ok = !strcmp(h[i].entry, e->text) &&
			     !strcmp(h[i].parent,
				     e->kind == BG_NAME_SUBS ? e->text : "");
		else if (len_part && strcmp(len_part, strchr(q, ':') ? "/128" : "/32"))
			ok = s && !strcmp(s, len_part);
		else
			ok = !s;
	}
	free(h);
	return ok;
}

static void same_bytes(size_t n)
{
	struct bg_ai_item *a, *b;
	size_t i, ka, kb, la, lb, *perm = malloc(n * sizeof(*perm));
	void *ia, *ib;
	char *buf;
	struct ent *v = random_ents(n, &buf);

	assert_non_null(perm);
	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n; i > 1; i--) {
		size_t j = rnd() % i, t = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	a = items_of(v, n, NULL, 1, &ka);
	b = items_of(v, n, perm, BG_PARSE_WORKERS_MAX, &kb);
	assert_true(ka < n); /* the repeats went */
	assert_int_equal(ka, kb);
	assert_memory_equal(a, b, ka * sizeof(*a));
	/* sorted by (h, source), no repeats */
	for (i = 1; i < ka; i++) {
		assert_true(a[i - 1].h <= a[i].h);
		assert_true(a[i - 1].h < a[i].h || a[i - 1].source < a[i].source ||
			    a[i - 1].cls != a[i].cls || a[i - 1].plen != a[i].plen);
	}
	assert_int_equal(bg_ai_build(a, ka, SEED, &ia, &la), 0);
	assert_int_equal(bg_ai_build(b, kb, SEED, &ib, &lb), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(ia, ib, la);
	/* every entry is found where it was listed */
	for (i = 0; i < n; i += 7)
		if (!listed(ia, la, &v[i]))
			fail_msg("entry %zu (%zu %d %d %s) not found: %s", i,
				 v[i].source, v[i].allow, v[i].kind, v[i].text,
				 found(ia, la, v[i].text));
	free(ia);
	free(ib);
	free(a);
	free(b);
	free(perm);
	free(v);
	free(buf);
}

static void test_same_bytes(void **state)
{
	(void)state;
	same_bytes(3000);
	/* enough for the sort on every CPU */
	same_bytes(300000);
}

/* ---- Deltas --------------------------------------------------------------- */

static void test_add_remove(void **state)
{
	static const struct ent more[] = {
		{ 0, 9, 0, 0, "10.0.0.0/8" }, /* a length the index lacked */
		{ 0, 8, 1, BG_NAME_SUBS, "example.net" }, /* a class too */
		{ 0, 1, 0, 0, "192.0.2.5" }, /* there already */
	};
	const struct bg_art_index_hdr *hd;
	struct bg_ai_item it;
	size_t len;
	void *img;

	(void)state;
	build(addrs, N(addrs), &img, &len, NULL);
	hd = img;
	assert_found(img, len, "10.1.2.3", "");

	it = item_of(&more[0]);
	assert_int_equal(bg_ai_add(img, len, &it), 0);
	assert_int_equal(hd->records, 11);
	assert_found(img, len, "10.1.2.3", "9 block 10.0.0.0/8");
	/* once only */
	assert_int_equal(bg_ai_add(img, len, &it), -EEXIST);
	assert_int_equal(hd->records, 11);

	it = item_of(&more[1]);
	assert_found(img, len, "a.example.net", "");
	assert_int_equal(bg_ai_add(img, len, &it), 0);
	assert_found(img, len, "a.example.net",
		     "8 allow subs example.net <example.net>");

	it = item_of(&more[2]);
	assert_int_equal(bg_ai_add(img, len, &it), -EEXIST);
	assert_int_equal(bg_ai_remove(img, len, &it), 0);
	assert_int_equal(hd->records, 11);
	assert_found(img, len, "192.0.2.5",
		     "2 allow 192.0.2.5; "
		     "0 block 192.0.2.0/24; 1 block 192.0.2.0/24");
	assert_int_equal(bg_ai_remove(img, len, &it), -ENOENT);
	assert_int_equal(hd->records, 11);

	/* removed and added back, list 0's /24 now follows list 1's in the
	 * table: the hits still come in the lists' order */
	it = item_of(&addrs[0]);
	assert_int_equal(bg_ai_remove(img, len, &it), 0);
	assert_found(img, len, "192.0.2.7", "1 block 192.0.2.0/24");
	assert_int_equal(bg_ai_add(img, len, &it), 0);
	assert_found(img, len, "192.0.2.7",
		     "0 block 192.0.2.0/24; 1 block 192.0.2.0/24");

	it = item_of(&more[0]);
	assert_int_equal(bg_ai_remove(img, len, &it), 0);
	assert_found(img, len, "10.1.2.3", "");
	assert_int_equal(bg_ai_remove(img, len, &it), -ENOENT);
	/* the same entry in another list was never there */
	it.source = 3;
	assert_int_equal(bg_ai_remove(img, len, &it), -ENOENT);
	assert_int_equal(hd->records, 10);

	/* items no record can hold */
	it = item_of(&more[0]);
	it.source = BG_AI_SOURCES_MAX + 1;
	assert_int_equal(bg_ai_add(img, len, &it), -EINVAL);
	it = item_of(&more[0]);
	it.plen = 33;
	assert_int_equal(bg_ai_add(img, len, &it), -EINVAL);
	it.cls = BG_AI__CLASSES;
	assert_int_equal(bg_ai_remove(img, len, &it), -EINVAL);
	free(img);
}

/* Adds past BG_AI_LOAD_MAX of the slots are refused, the image unchanged. */
static void test_add_full(void **state)
{
	/* 5 items make one bucket, which takes 6 records (0.92 of 7) */
	const size_t max = (size_t)(BG_AI_LOAD_MAX * BG_ART_BKT_RECORDS);
	struct ent v[8];
	char text[8][32];
	struct bg_ai_item it;
	size_t len, i;
	void *img, *copy;

	(void)state;
	for (i = 0; i < N(v); i++) {
		snprintf(text[i], sizeof(text[i]), "192.0.2.%zu", i);
		v[i] = (struct ent){ 0, i, 0, 0, text[i] };
	}
	build(v, 5, &img, &len, NULL);
	assert_int_equal(len, 64 * 2);
	assert_int_equal(max, 6);
	for (i = 5; i < max; i++) {
		it = item_of(&v[i]);
		assert_int_equal(bg_ai_add(img, len, &it), 0);
	}
	copy = malloc(len);
	assert_non_null(copy);
	memcpy(copy, img, len);
	it = item_of(&v[max]);
	assert_int_equal(bg_ai_add(img, len, &it), -ENOSPC);
	assert_memory_equal(img, copy, len);
	for (i = 0; i < max; i++) {
		char want[300];

		snprintf(want, sizeof(want), "%zu block %s", i, text[i]);
		assert_found(img, len, text[i], want);
	}
	assert_found(img, len, text[max], "");
	/* a removal makes room again */
	it = item_of(&v[0]);
	assert_int_equal(bg_ai_remove(img, len, &it), 0);
	it = item_of(&v[max]);
	assert_int_equal(bg_ai_add(img, len, &it), 0);
	free(copy);
	free(img);
}

/*
 * Probe chains: with two buckets, nine entries of one home bucket and one
 * of the other fill the first and run over into the second (or, from the
 * second, wrap into the first). Each removal, alone, must leave every other
 * entry found: a record placed past a full bucket is looked for there
 * after that bucket has room again.
 */
static void chain(int home)
{
	struct ent v[10];
	char text[10][32];
	size_t len, i, k, nhome = 0, nother = 0;
	void *img, *copy;

	for (i = 0; nhome < 9 || nother < 1; i++) {
		struct ent e = { 0, i % 3, 0, 0, NULL };
		struct bg_ai_item it;
		int h;

		assert_true(i < 10000);
		snprintf(text[nhome + nother], sizeof(text[0]), "10.%zu.%zu.1",
			 i >> 8, i & 255);
		e.text = text[nhome + nother];
		it = item_of(&e);
		h = (int)(it.h >> 63); /* the home bucket of two */
		if (h == home && nhome < 9)
			nhome++;
		else if (h != home && nother < 1)
			nother++;
		else
			continue;
		v[nhome + nother - 1] = e;
	}
	build(v, 10, &img, &len, NULL);
	assert_int_equal(len, 64 * 3);
	copy = malloc(len);
	assert_non_null(copy);
	for (k = 0; k < 10; k++) {
		struct bg_ai_item it = item_of(&v[k]);

		memcpy(copy, img, len);
		assert_int_equal(bg_ai_remove(copy, len, &it), 0);
		for (i = 0; i < 10; i++) {
			char want[64];

			snprintf(want, sizeof(want), "%zu block %s", v[i].source,
				 v[i].text);
			assert_found(copy, len, v[i].text, i == k ? "" : want);
		}
		/* and back */
		assert_int_equal(bg_ai_add(copy, len, &it), 0);
		for (i = 0; i < 10; i++) {
			char want[64];

			snprintf(want, sizeof(want), "%zu block %s", v[i].source,
				 v[i].text);
			assert_found(copy, len, v[i].text, want);
		}
	}
	free(copy);
	free(img);
}

static void test_chain_removal(void **state)
{
	(void)state;
	chain(0);
	chain(1); /* wrapping round to bucket 0 */
}

/* ---- Images refused --------------------------------------------------------- */

static void test_valid(void **state)
{
	struct bg_art_index_hdr *hd;
	struct bg_ai_item it = item_of(&addrs[0]);
	struct bg_ai_hit *h = NULL;
	size_t len, n;
	char *img, *big;

	(void)state;
	build(addrs, N(addrs), (void **)&img, &len, NULL);
	hd = (struct bg_art_index_hdr *)img;
	assert_int_equal(bg_ai_valid(img, len), 0);
	assert_int_equal(len % 64, 0);
	assert_int_equal(len, 64 * (1 + (size_t)hd->nbuckets));

	/* truncated, or longer than its buckets */
	assert_int_equal(bg_ai_valid(img, 0), -EBADMSG);
	assert_int_equal(bg_ai_valid(img, 63), -EBADMSG);
	assert_int_equal(bg_ai_valid(img, 64), -EBADMSG);
	assert_int_equal(bg_ai_valid(img, len - 64), -EBADMSG);
	assert_int_equal(bg_ai_valid(img, len - 1), -EBADMSG);
	big = calloc(1, len + 64);
	assert_non_null(big);
	memcpy(big, img, len);
	assert_int_equal(bg_ai_valid(big, len + 64), -EBADMSG);
	assert_int_equal(bg_ai_valid(big, len), 0);
	free(big);
	assert_int_equal(bg_ai_valid(NULL, len), -EBADMSG);
	assert_int_equal(bg_ai_find(img, len - 64, "192.0.2.5", &h, &n), -EBADMSG);
	assert_null(h);
	assert_int_equal(bg_ai_add(img, len - 64, &it), -EBADMSG);
	assert_int_equal(bg_ai_remove(img, len - 64, &it), -EBADMSG);

	/* a bad magic */
	hd->magic ^= 1;
	assert_int_equal(bg_ai_valid(img, len), -EBADMSG);
	assert_found(img, len, "192.0.2.5", "error -74");
	assert_int_equal(bg_ai_add(img, len, &it), -EBADMSG);
	hd->magic ^= 1;
	/* no buckets, or more records than slots */
	hd->nbuckets = 0;
	assert_int_equal(bg_ai_valid(img, 64), -EBADMSG);
	hd->nbuckets = (uint32_t)(len / 64 - 1);
	hd->records = 7 * (uint64_t)hd->nbuckets + 1;
	assert_int_equal(bg_ai_valid(img, len), -EBADMSG);
	hd->records = 10;
	assert_int_equal(bg_ai_valid(img, len), 0);
	/* buckets with more records than they have room for: refused when
	 * a lookup reaches them (bg_ai_valid() does not read them all) */
	for (n = 1; n < len / 64; n++)
		((struct bg_art_bucket *)img)[n].n = BG_ART_BKT_RECORDS + 1;
	assert_int_equal(bg_ai_valid(img, len), 0);
	assert_found(img, len, "192.0.2.5", "error -74");
	assert_found(img, len, "example.com", "");
	assert_int_equal(bg_ai_add(img, len, &it), -EBADMSG);
	assert_int_equal(bg_ai_remove(img, len, &it), -EBADMSG);
	free(img);
}

/* ---- Errors of a collection ------------------------------------------------- */

static void test_collector(void **state)
{
	struct ent e = { 0, BG_AI_SOURCES_MAX, 0, 0, "192.0.2.1" };
	struct bg_ai_collector *c;
	struct bg_ai_item *items;
	size_t n, len;
	void *img;

	(void)state;
	assert_int_equal(bg_ai_collector_new(SEED, &c), 0);
	/* nothing collected: an empty index of one bucket */
	assert_int_equal(bg_ai_items(c, &items, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(bg_ai_build(items, n, SEED, &img, &len), 0);
	assert_int_equal(len, 128);
	assert_found(img, len, "192.0.2.1", "");
	assert_found(img, len, "example.com", "");
	free(img);
	free(items);

	/* the last list number a record holds, then one past it */
	feed_one(c, &e);
	assert_int_equal(bg_ai_items(c, &items, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(bg_ai_build(items, n, SEED, &img, &len), 0);
	assert_found(img, len, "192.0.2.1", "65535 block 192.0.2.1");
	free(img);
	free(items);
	e.source++;
	feed_one(c, &e);
	assert_int_equal(bg_ai_items(c, &items, &n), -E2BIG);
	assert_null(items);

	/* starting over forgets it */
	bg_ai_collector_reset(c);
	e.source = 1;
	feed_one(c, &e);
	assert_int_equal(bg_ai_items(c, &items, &n), 0);
	assert_int_equal(n, 1);
	/* the build takes sorted, unique items only */
	{
		struct bg_ai_item two[2] = { items[0], items[0] };

		assert_int_equal(bg_ai_build(two, 2, SEED, &img, &len), -EINVAL);
		two[1].source = 2;
		assert_int_equal(bg_ai_build(two, 2, SEED, &img, &len), 0);
		free(img);
		two[1].source = 0;
		assert_int_equal(bg_ai_build(two, 2, SEED, &img, &len), -EINVAL);
	}
	free(items);

	/* a worker past the bound */
	e.worker = BG_PARSE_WORKERS_MAX;
	feed_one(c, &e);
	assert_int_equal(bg_ai_items(c, &items, &n), -EINVAL);
	bg_ai_collector_free(c);
}

/* ---- A million ------------------------------------------------------------ */

#define LARGE 1000000

struct large {
	struct bg_ai_collector *c;
	struct bg_key4 *k;
	size_t n;
};

/* Each of two workers hands its half at once, as a parse's pieces do. */
static void large_worker(void *ctx, unsigned int t)
{
	struct large *l = ctx;
	size_t i;

	for (i = t; i < l->n; i += 2) {
		struct bg_entry_ref r = {
			.source = i % 1000, .line = i + 1,
			.kind = BG_KEY_IPV4, .key = &l->k[i],
		};

		bg_ai_entry(l->c, t, &r);
	}
}

static void test_large(void **state)
{
	struct large l = { .n = LARGE };
	struct bg_ai_item *items;
	size_t n, len, i;
	void *img;

	(void)state;
	l.k = malloc(LARGE * sizeof(*l.k));
	assert_non_null(l.k);
	for (i = 0; i < LARGE; i++)
		bg_key4_init(&l.k[i], (__u32)rnd(), (__u8)(16 + rnd() % 17));
	assert_int_equal(bg_ai_collector_new(SEED, &l.c), 0);
	bg_par_run(2, large_worker, &l);
	assert_int_equal(bg_ai_items(l.c, &items, &n), 0);
	/* random keys: a few repeats at most */
	assert_true(n > LARGE - 1000 && n <= LARGE);
	assert_int_equal(bg_ai_build(items, n, SEED, &img, &len), 0);
	assert_int_equal(((const struct bg_art_index_hdr *)img)->records, n);

	/* a sample through check's lookup */
	for (i = 0; i < LARGE; i += 997) {
		char a[INET_ADDRSTRLEN], want[64];

		inet_ntop(AF_INET, &l.k[i].addr, a, sizeof(a));
		snprintf(want, sizeof(want), l.k[i].plen == 32 ? "%zu block %s" :
			 "%zu block %s/%u", i % 1000, a, l.k[i].plen);
		assert_non_null(strstr(found(img, len, a), want));
	}
	/* every item there, once: each removed, then none left */
	for (i = 0; i < n; i++)
		assert_int_equal(bg_ai_remove(img, len, &items[i]), 0);
	assert_int_equal(((const struct bg_art_index_hdr *)img)->records, 0);
	for (i = 0; i < n; i += 101)
		assert_int_equal(bg_ai_remove(img, len, &items[i]), -ENOENT);
	for (i = 1; i < len / 64; i++)
		assert_int_equal(((const struct bg_art_bucket *)img)[i].n, 0);
	free(img);
	free(items);
	bg_ai_collector_free(l.c);
	free(l.k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_addresses),
		cmocka_unit_test(test_find_names),
		cmocka_unit_test(test_same_bytes),
		cmocka_unit_test(test_add_remove),
		cmocka_unit_test(test_add_full),
		cmocka_unit_test(test_chain_removal),
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_collector),
		cmocka_unit_test(test_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
