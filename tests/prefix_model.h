/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The test model of prefixes, shared by tests/bpf/test_prefixes.c and
 * tests/unit/test_plan.c: addresses and prefixes as host-order 128-bit
 * integers (IPv4 in the low 32 bits), independent of user/ and include/,
 * their merge into ranges, plus a fixed-seed splitmix64. Needs cmocka
 * (P() asserts its input).
 */
#ifndef BLOOMGATE_TESTS_PREFIX_MODEL_H
#define BLOOMGATE_TESTS_PREFIX_MODEL_H

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

typedef unsigned __int128 u128;

/* ---- Random numbers (splitmix64, fixed seeds) -------------------------- */

static uint64_t rng __attribute__((unused));

static inline void rng_seed(uint64_t s)
{
	rng = s;
}

static inline uint64_t rnd64(void)
{
	uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static inline uint64_t rnd_below(uint64_t n)
{
	return n ? rnd64() % n : 0;
}

static inline u128 rnd128(void)
{
	u128 hi = rnd64();

	return hi << 64 | rnd64();
}

/* ---- The model: prefixes as host-order integers ------------------------ */

struct pfx {
	int v6;
	int plen;
	u128 a; /* first address; IPv4 in the low 32 bits */
};

struct pset {
	struct pfx *v;
	size_t n, cap;
};

static inline int width(int v6)
{
	return v6 ? 128 : 32;
}

static inline u128 ones(int v6)
{
	return v6 ? ~(u128)0 : (u128)0xffffffffU;
}

/* The host bits of a prefix of length plen. */
static inline u128 hostmask(int v6, int plen)
{
	int h = width(v6) - plen;

	return h <= 0 ? 0 : h >= 128 ? ~(u128)0 : ((u128)1 << h) - 1;
}

static inline struct pfx mkpfx(int v6, u128 a, int plen)
{
	struct pfx p = { v6, plen, a & ones(v6) & ~hostmask(v6, plen) };

	return p;
}

static inline u128 pfx_last(const struct pfx *p)
{
	return p->a | hostmask(p->v6, p->plen);
}

static inline int pfx_has(const struct pfx *p, int v6, u128 x)
{
	return p->v6 == v6 && x >= p->a && x <= pfx_last(p);
}

static inline int pset_has(const struct pset *s, int v6, u128 x)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (pfx_has(&s->v[i], v6, x))
			return 1;
	return 0;
}

static inline void pset_add(struct pset *s, struct pfx p)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		assert_non_null(s->v);
	}
	s->v[s->n++] = p;
}

static inline void pset_free(struct pset *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/*
 * The prefixes of one family of s as disjoint ranges [r[i][0], r[i][1]],
 * sorted, overlapping and adjacent ones merged (r has room for s->n);
 * returns how many. Independent of filter.c's merge.
 */
static inline size_t pset_merge(const struct pset *s, int v6, u128 (*r)[2])
{
	size_t i, j, n = 0, w = 0;

	for (i = 0; i < s->n; i++) {
		if (s->v[i].v6 != v6)
			continue;
		r[n][0] = s->v[i].a;
		r[n][1] = pfx_last(&s->v[i]);
		n++;
	}
	/* insertion sort is too slow for 5000: shell sort by start */
	for (j = n / 2; j > 0; j /= 2)
		for (i = j; i < n; i++) {
			u128 t0 = r[i][0], t1 = r[i][1];
			size_t k = i;

			for (; k >= j && r[k - j][0] > t0; k -= j) {
				r[k][0] = r[k - j][0];
				r[k][1] = r[k - j][1];
			}
			r[k][0] = t0;
			r[k][1] = t1;
		}
	for (i = 0; i < n; i++) {
		if (w && (r[w - 1][1] == ones(v6) || r[i][0] <= r[w - 1][1] + 1)) {
			if (r[i][1] > r[w - 1][1])
				r[w - 1][1] = r[i][1];
			continue;
		}
		r[w][0] = r[i][0];
		r[w][1] = r[i][1];
		w++;
	}
	return w;
}

static inline void to_bytes(u128 x, __u8 b[16])
{
	int i;

	for (i = 0; i < 16; i++)
		b[i] = (__u8)(x >> (8 * (15 - i)));
}

static inline u128 from_bytes(const __u8 b[16])
{
	u128 x = 0;
	int i;

	for (i = 0; i < 16; i++)
		x = x << 8 | b[i];
	return x;
}

static inline const char *fmt(int v6, u128 x, char *buf)
{
	__u8 b[16];

	if (v6) {
		to_bytes(x, b);
		inet_ntop(AF_INET6, b, buf, INET6_ADDRSTRLEN);
	} else {
		__u32 be = htonl((uint32_t)x);

		inet_ntop(AF_INET, &be, buf, INET6_ADDRSTRLEN);
	}
	return buf;
}

static inline const char *fmtp(const struct pfx *p, char *buf)
{
	char a[INET6_ADDRSTRLEN];

	snprintf(buf, INET6_ADDRSTRLEN + 8, "%s/%d", fmt(p->v6, p->a, a), p->plen);
	return buf;
}

/* Parses "addr" or "addr/len" into the model (test data, must be valid). */
static inline struct pfx P(const char *text)
{
	char tmp[INET6_ADDRSTRLEN + 8], *slash;
	__u8 b[16];
	int v6 = strchr(text, ':') != NULL, plen;

	snprintf(tmp, sizeof(tmp), "%s", text);
	slash = strchr(tmp, '/');
	plen = slash ? atoi(slash + 1) : width(v6);
	if (slash)
		*slash = 0;
	assert_int_equal(inet_pton(v6 ? AF_INET6 : AF_INET, tmp, b), 1);
	if (v6)
		return mkpfx(1, from_bytes(b), plen);
	return mkpfx(0, (u128)((__u32)b[0] << 24 | (__u32)b[1] << 16 |
			       (__u32)b[2] << 8 | b[3]), plen);
}

static inline u128 A(const char *text)
{
	return P(text).a;
}

#endif
