// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the decision stream's parser (user/agent/csstream.c) on
 * any bytes. Beyond "no crash, no leak, no undefined behaviour" (ASan,
 * UBSan), it checks what the set relies on: the answer cut anywhere gives
 * the same elements and the same outcome as in one piece (the cuts taken
 * from the input's last bytes, and every byte alone); every element taken
 * has a positive id, and a "new" one a key as the list parser makes it
 * (masked, no wider than the bounds) and a duration above 0; a refusal
 * names a reason in range with words.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/csstream.h"
#include "bloomgate/bloom.h"

static const struct bg_cs_limits lim = { .max_range4 = 16, .max_range6 = 32 };

/* every element seen, folded: the same elements give the same sum */
struct seen {
	uint64_t sum;
	size_t n;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static int on_elem(void *ctx, const struct bg_cs_elem *e)
{
	struct seen *s = ctx;
	struct bg_key6 m;

	if (e->refused >= BG_CS_IGN_MAX || !e->detail != (e->refused < 0))
		abort();
	if (e->refused < 0 && e->id <= 0)
		abort();
	if (e->refused < 0 && !e->deleted) {
		if (e->ns <= 0)
			abort();
		if (e->key.kind == BG_KEY_IPV4) {
			if (e->key.k4.plen < lim.max_range4 || e->key.k4.plen > 32 ||
			    (e->key.k4.addr & ~bg_mask4(e->key.k4.plen)))
				abort();
		} else if (e->key.kind == BG_KEY_IPV6) {
			bg_key6_init(&m, e->key.k6.addr, e->key.k6.plen);
			if (e->key.k6.plen < lim.max_range6 || memcmp(&m, &e->key.k6, sizeof(m)))
				abort();
		} else {
			abort();
		}
		s->sum = mix(s->sum, (uint64_t)e->ns);
		s->sum = mix(s->sum, e->key.kind);
	}
	s->sum = mix(s->sum, (uint64_t)e->id);
	s->sum = mix(s->sum, (uint64_t)(e->refused + 1) << 1 | (uint64_t)e->deleted);
	s->n++;
	return 0;
}

/* The parse of data fed in pieces: step bytes each, or cut[i] bytes
 * (0: the rest). */
static int parse(const uint8_t *data, size_t size, size_t step, const size_t *cut,
		 size_t ncut, struct seen *s)
{
	struct bg_cs_stream sc;
	size_t at = 0, i = 0;
	int r = 0;

	memset(s, 0, sizeof(*s));
	if (bg_cs_stream_init(&sc, &lim, on_elem, s))
		abort();
	while (!r && at < size) {
		size_t n = step ? step : i < ncut && cut[i] ? cut[i] : size - at;

		if (n > size - at)
			n = size - at;
		r = bg_cs_stream_feed(&sc, (const char *)data + at, n);
		at += n;
		i++;
	}
	if (!r)
		r = bg_cs_stream_end(&sc);
	if (r && !sc.why[0])
		abort(); /* every failure says why */
	bg_cs_stream_free(&sc);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cut[8], i;
	struct seen a, b, c;
	int ra, rb, rc;

	ra = parse(data, size, 0, NULL, 0, &a);
	for (i = 0; i < 8; i++)
		cut[i] = size > i ? 1 + data[size - 1 - i] % 61 : 0;
	rb = parse(data, size, 0, cut, 8, &b);
	/* every byte alone (bounded: the fuzzer's long inputs) */
	c = a;
	rc = size <= 4096 ? parse(data, size, 1, NULL, 0, &c) : ra;
	/* an element handed on before a failure is in either, up to it */
	if (ra != rb || ra != rc || a.n != b.n || a.n != c.n || a.sum != b.sum ||
	    a.sum != c.sum)
		abort();
	return 0;
}
