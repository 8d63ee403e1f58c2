/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Forged artifacts, one field at a time: the table of cases that
 * tests/bpf/test_artifact.c opens and verifies (core) and
 * tests/e2e/test_artifact.sh loads (`bloomgate load`, through
 * build/tests/artforge), so that both go over the same fields.
 *
 * Each case sets one field of a full artifact out of range (or out of
 * agreement with another) and seals the file again as a forger would: the
 * digests that cover the field recomputed (the header's; for a field
 * inside a section, that section's chunk digests and digest, the DIGESTS
 * section's, then the header's), so that only the field checks can refuse
 * it. A few cases are left unsealed on purpose (the padding, the digest
 * itself). want: text the one-line refusal must hold (the field's name).
 *
 * The artifact forged must hold IPv4 entries (one probed length), names,
 * and no IPv6 or allow entry: the values below are out of range for it.
 */
#ifndef BLOOMGATE_TESTS_ARTFORGE_H
#define BLOOMGATE_TESTS_ARTFORGE_H

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/artifact.h"

enum forge_where {
	FW_HDR, /* off: into struct bg_art_header */
	FW_FILTER, /* off: into the filter image's struct bg_filter_header */
	FW_INDEX, /* off: into the index's struct bg_art_index_hdr */
	FW_PAD, /* off: bytes after the end of section .sec (not sealed) */
	FW_RAW, /* off: into the header, not sealed */
};

enum forge_op {
	FO_SET, /* the field (size bytes, little endian) := v */
	FO_ADD, /* the field += v */
	FO_DBL, /* the double := d */
	FO_XOR, /* one byte ^= v */
};

struct forge_case {
	const char *name; /* the e2e's name for it */
	enum forge_where where;
	int sec; /* FW_PAD: the section the padding follows */
	size_t off;
	unsigned int size; /* FO_SET, FO_ADD: 1, 2, 4 or 8 */
	enum forge_op op;
	uint64_t v;
	double d;
	const char *want;
	int err; /* what bg_art_open()/bg_art_verify() return */
};

#define H(f) FW_HDR, 0, offsetof(struct bg_art_header, f), \
	sizeof(((struct bg_art_header *)0)->f)
#define HA(f, i) FW_HDR, 0, offsetof(struct bg_art_header, f) + (i), 1
#define P(f) H(plan.f)
#define S(s, f) FW_HDR, 0, offsetof(struct bg_art_header, sec) + \
	(s) * sizeof(struct bg_art_section) + offsetof(struct bg_art_section, f), \
	sizeof(((struct bg_art_section *)0)->f)
#define F(f) FW_FILTER, 0, offsetof(struct bg_filter_header, f), \
	sizeof(((struct bg_filter_header *)0)->f)
#define I(f) FW_INDEX, 0, offsetof(struct bg_art_index_hdr, f), \
	sizeof(((struct bg_art_index_hdr *)0)->f)
#define BAD -EBADMSG

static const struct forge_case forge_cases[] = {
	/* the header's own fields */
	{ "magic", FW_HDR, 0, 0, 1, FO_XOR, 0x40, 0, "no magic", BAD },
	{ "version", H(version), FO_SET, BG_ART_VERSION + 1, 0, "version", -EPROTO },
	{ "header_len", H(header_len), FO_SET, 8192, 0, "version", -EPROTO },
	{ "abi_version", H(abi_version), FO_SET, BG_ABI_VERSION + 1, 0, "ABI", -EPROTO },
	{ "kind", H(kind), FO_SET, 3, 0, "kind 3", BAD },
	{ "kind_delta", H(kind), FO_SET, BG_ART_DELTA, 0, "base_generation", BAD },
	{ "generation", H(generation), FO_SET, 1ull << 63, 0, "generation", BAD },
	{ "base_generation", H(base_generation), FO_SET, 1, 0, "base_generation", BAD },
	{ "created", H(created), FO_SET, 1ull << 63, 0, "created", BAD },
	{ "file_len", H(file_len), FO_ADD, 4096, 0, "truncated or extended", BAD },
	{ "nsources", H(nsources), FO_SET, BG_ART_SOURCES_MAX + 1, 0, "nsources", BAD },
	{ "nsources_json", H(nsources), FO_ADD, 1, 0, "nsources", BAD },
	{ "pad0", H(pad0), FO_SET, 1, 0, "pad0", BAD },
	{ "reserved", HA(reserved, 100), FO_SET, 1, 0, "reserved", BAD },
	{ "base_sha256", HA(base_sha256, 0), FO_SET, 1, 0, "base_sha256", BAD },
	{ "result_file_sha256", HA(result_file_sha256, 31), FO_SET, 1, 0,
	  "base_sha256", BAD },
	{ "digest", FW_RAW, 0, offsetof(struct bg_art_header, digest) + 3, 1,
	  FO_XOR, 0x40, 0, "checksum", BAD },
	/* the plan */
	{ "plan.seed", P(seed), FO_ADD, 1, 0, "filter.seed", BAD },
	{ "plan.nelems", P(nelems), FO_ADD, 1, 0, "sec[filter].len", BAD },
	{ "plan.nelems_0", P(nelems), FO_SET, 0, 0, "plan.nelems", BAD },
	{ "plan.nblocks", P(nblocks), FO_SET, 0x7fffffff, 0, "plan.nblocks", BAD },
	{ "plan.nblocks_1", P(nblocks), FO_ADD, 1, 0, "nblocks", BAD },
	{ "plan.fp_nbuckets", P(fp_nbuckets), FO_SET, 0xffffffff, 0,
	  "plan.fp_nbuckets", BAD },
	{ "plan.fp_nbuckets_1", P(fp_nbuckets), FO_SET, 1, 0, "plan.fp_nbuckets", BAD },
	{ "plan.capacity", P(capacity), FO_SET, 30000000, 0, "plan.capacity", BAD },
	{ "plan.capacity_1", P(capacity), FO_SET, 1u << 31, 0, "plan.capacity", BAD },
	{ "plan.k", P(k), FO_SET, 0, 0, "plan.k", BAD },
	{ "plan.k_17", P(k), FO_SET, BG_K_MAX + 1, 0, "plan.k", BAD },
	{ "plan.n4", P(n4), FO_SET, BG_PROBES_MAX + 1, 0, "plan.n4", BAD },
	{ "plan.n6", P(n6), FO_SET, 200, 0, "plan.n6", BAD },
	{ "plan.confirm", P(confirm), FO_SET, 2, 0, "plan.confirm", BAD },
	{ "plan.confirm_0", P(confirm), FO_SET, 0, 0, "plan.confirm", BAD },
	{ "plan.len4", HA(plan.len4, 0), FO_SET, 33, 0, "plan.len4", BAD },
	{ "plan.len4_unused", HA(plan.len4, 1), FO_SET, 24, 0, "plan.len4", BAD },
	{ "plan.len6", HA(plan.len6, 0), FO_SET, 129, 0, "plan.len6", BAD },
	{ "plan.short4", P(short4), FO_SET, 2, 0, "plan.short4", BAD },
	{ "plan.short6_below", P(short6_below), FO_SET, 200, 0, "plan.short6_below", BAD },
	{ "plan.pad", HA(plan.pad, 1), FO_SET, 1, 0, "plan.pad", BAD },
	{ "plan.keys", P(keys), FO_ADD, 1, 0, "plan.keys", BAD },
	{ "plan.keys4", P(keys4), FO_SET, 1ull << 33, 0, "plan.keys4", BAD },
	{ "plan.keys6", P(keys6), FO_SET, 5, 0, "plan.keys", BAD },
	{ "plan.name_keys", P(name_keys), FO_SET, 1ull << 40, 0, "plan.name_keys", BAD },
	{ "plan.prefixes4", P(prefixes4), FO_SET, 1ull << 50, 0, "plan.prefixes4", BAD },
	{ "plan.prefixes6", P(prefixes6), FO_SET, 1ull << 50, 0, "plan.prefixes6", BAD },
	{ "plan.names", P(names), FO_SET, 1ull << 50, 0, "plan.names", BAD },
	{ "plan.allow4", P(allow4), FO_SET, 1ull << 30, 0, "plan.allow4", BAD },
	{ "plan.allow4_1", P(allow4), FO_SET, 1, 0, "filter.allow4_n", BAD },
	{ "plan.allow6", P(allow6), FO_SET, 1ull << 30, 0, "plan.allow6", BAD },
	{ "plan.allow6_1", P(allow6), FO_SET, 1, 0, "filter.allow6_n", BAD },
	{ "plan.allow_names", P(allow_names), FO_SET, 1ull << 30, 0,
	  "plan.allow_names", BAD },
	{ "plan.bloom_loaded", P(bloom_loaded), FO_SET, 0, 0, "plan.bloom_loaded", BAD },
	{ "plan.target", P(target), FO_DBL, 0, 0.9, "plan.target", BAD },
	{ "plan.target_nan", P(target), FO_DBL, 0, NAN, "plan.target", BAD },
	{ "plan.predicted", P(predicted), FO_DBL, 0, 2.0, "plan.predicted", BAD },
	{ "plan.predicted_addr", P(predicted_addr), FO_DBL, 0, INFINITY,
	  "plan.predicted_addr", BAD },
	{ "plan.predicted_confirmed", P(predicted_confirmed), FO_DBL, 0, -0.5,
	  "plan.predicted_confirmed", BAD },
	/* the section table */
	{ "sec.sources.off", S(BG_ART_SEC_SOURCES, off), FO_ADD, 4096, 0,
	  "sec[sources].off", BAD },
	{ "sec.sources.len", S(BG_ART_SEC_SOURCES, len), FO_SET, 1ull << 40, 0,
	  "sec[sources].len", BAD },
	{ "sec.sources.len_1", S(BG_ART_SEC_SOURCES, len), FO_ADD, 1, 0,
	  "sources", BAD },
	{ "sec.sources.sha256", S(BG_ART_SEC_SOURCES, sha256), FO_XOR, 1, 0,
	  "sources", BAD },
	{ "sec.filter.off", S(BG_ART_SEC_FILTER, off), FO_SET, 0, 0,
	  "sec[filter].off", BAD },
	{ "sec.filter.len", S(BG_ART_SEC_FILTER, len), FO_ADD, 64, 0,
	  "sec[filter].len", BAD },
	{ "sec.filter.len_big", S(BG_ART_SEC_FILTER, len), FO_SET, 1ull << 62, 0,
	  "sec[filter].len", BAD },
	{ "sec.filter.sha256", S(BG_ART_SEC_FILTER, sha256), FO_XOR, 1, 0,
	  "filter", BAD },
	{ "sec.index.len", S(BG_ART_SEC_INDEX, len), FO_ADD, (uint64_t)-1, 0,
	  "sec[index].len", BAD },
	{ "sec.index.off", S(BG_ART_SEC_INDEX, off), FO_ADD, 1, 0,
	  "sec[index].off", BAD },
	{ "sec.delta.len", S(BG_ART_SEC_DELTA, len), FO_SET, BG_ART_HEADER, 0,
	  "sec[delta]", BAD },
	{ "sec.delta.off", S(BG_ART_SEC_DELTA, off), FO_SET, 4096, 0,
	  "sec[delta].off", BAD },
	{ "sec.digests.len", S(BG_ART_SEC_DIGESTS, len), FO_ADD, 32, 0,
	  "sec[digests].len", BAD },
	{ "sec.digests.off", S(BG_ART_SEC_DIGESTS, off), FO_SET, 0, 0,
	  "sec[digests]", BAD },
	{ "sec.digests.sha256", S(BG_ART_SEC_DIGESTS, sha256), FO_XOR, 1, 0,
	  "digests", BAD },
	/* the filter image's own header, what the datapath reads */
	{ "filter.magic", F(magic), FO_XOR, 1, 0, "filter.magic", BAD },
	{ "filter.abi_version", F(abi_version), FO_ADD, 1, 0, "filter.abi_version", BAD },
	{ "filter.layout", F(layout), FO_ADD, 1, 0, "filter.layout", BAD },
	{ "filter.subs_depths", F(subs_depths), FO_SET, 0x8000, 0,
	  "filter.subs_depths", BAD },
	{ "filter.nblocks", F(nblocks), FO_ADD, 1, 0, "filter.nblocks", BAD },
	{ "filter.k", F(k), FO_SET, BG_K_MAX + 1, 0, "filter.k", BAD },
	{ "filter.flags", F(flags), FO_SET, 0x80 | BG_FILTER_F_NAMES, 0,
	  "filter.flags", BAD },
	{ "filter.flags_short4", F(flags), FO_SET, BG_FILTER_F_SHORT4 | BG_FILTER_F_NAMES,
	  0, "filter.flags", BAD },
	{ "filter.n4", F(n4), FO_ADD, 1, 0, "filter.n4", BAD },
	{ "filter.n6", F(n6), FO_ADD, 1, 0, "filter.n6", BAD },
	{ "filter.seed", F(seed), FO_ADD, 1, 0, "filter.seed", BAD },
	{ "filter.entries", F(entries), FO_ADD, 1, 0, "filter.entries", BAD },
	{ "filter.len4", F(len4), FO_SET, 24, 0, "filter.len4", BAD },
	{ "filter.allow4_off", F(allow4_off), FO_ADD, 1, 0, "filter.allow4_off", BAD },
	{ "filter.allow4_off_big", F(allow4_off), FO_SET, 0xfffffff0u, 0,
	  "filter.allow4_off", BAD },
	{ "filter.allow4_n", F(allow4_n), FO_SET, 0xffffffffu, 0, "filter.allow4_n", BAD },
	{ "filter.fp_off", F(fp_off), FO_ADD, 1, 0, "filter.fp_off", BAD },
	{ "filter.fp_nbuckets", F(fp_nbuckets), FO_SET, 0xffffffffu, 0,
	  "filter.fp_nbuckets", BAD },
	{ "filter.allow6_n", F(allow6_n), FO_SET, 0xffffffffu, 0, "filter.allow6_n", BAD },
	{ "filter.short6_n", F(short6_n), FO_SET, 0xffffffffu, 0, "filter.short6_n", BAD },
	{ "filter.short6_n_past", F(short6_n), FO_SET, 1000, 0, "tables end", BAD },
	{ "filter.allown_n", F(allown_n), FO_SET, 0xffffffffu, 0, "filter.allown_n", BAD },
	/* the index's header */
	{ "index.magic", I(magic), FO_XOR, 1, 0, "index", BAD },
	{ "index.nbuckets", I(nbuckets), FO_ADD, 1, 0, "index", BAD },
	{ "index.records", I(records), FO_SET, 1ull << 62, 0, "index", BAD },
	{ "index.seed", I(seed), FO_ADD, 1, 0, "index.seed", BAD },
	{ "index.classes", I(classes), FO_SET, 0x80, 0, "index", BAD },
	/* the padding between sections: not covered by a digest, checked */
	{ "pad.sources", FW_PAD, BG_ART_SEC_SOURCES, 1, 1, FO_XOR, 0x01, 0,
	  "padding after the sources", BAD },
	{ "pad.filter", FW_PAD, BG_ART_SEC_FILTER, 7, 1, FO_XOR, 0x80, 0,
	  "padding after the filter", BAD },
	{ "pad.index", FW_PAD, BG_ART_SEC_INDEX, 0, 1, FO_XOR, 0x20, 0,
	  "padding after the index", BAD },
};

#undef H
#undef HA
#undef P
#undef S
#undef F
#undef I
#undef BAD

#define FORGE_CASES (sizeof(forge_cases) / sizeof(forge_cases[0]))

/* The case named name; NULL when none is. */
static inline const struct forge_case *forge_find(const char *name)
{
	size_t i;

	for (i = 0; i < FORGE_CASES; i++)
		if (!strcmp(forge_cases[i].name, name))
			return &forge_cases[i];
	return NULL;
}

/* The field of c at p changed as c says. */
static inline void forge_poke(uint8_t *p, const struct forge_case *c)
{
	uint64_t v = 0;

	if (c->op == FO_XOR) {
		p[0] ^= (uint8_t)c->v;
		return;
	}
	if (c->op == FO_DBL) {
		memcpy(p, &c->d, sizeof(c->d));
		return;
	}
	memcpy(&v, p, c->size); /* little endian, the host's */
	v = c->op == FO_ADD ? v + c->v : c->v;
	memcpy(p, &v, c->size);
}

/* Section s of the artifact in buf (its header h, as it was) sealed
 * again: its chunk digests into DIGESTS, its digest, DIGESTS's. */
static inline void forge_seal_section(uint8_t *buf, const struct bg_art_header *h,
				      int s, struct bg_art_header *out)
{
	uint8_t *table = buf + h->sec[BG_ART_SEC_DIGESTS].off;
	size_t at = 0;
	int k;

	for (k = 0; k < s; k++)
		at += (h->sec[k].len + BG_ART_CHUNK - 1) / BG_ART_CHUNK;
	bg_art_digest(buf + h->sec[s].off, h->sec[s].len, out->sec[s].sha256,
		      (uint8_t(*)[BG_ART_SHA])(table + at * BG_ART_SHA), 1);
	bg_sha256(table, h->sec[BG_ART_SEC_DIGESTS].len,
		  out->sec[BG_ART_SEC_DIGESTS].sha256);
}

/* The header's digest made right. */
static inline void forge_seal_header(struct bg_art_header *h)
{
	struct bg_art_header t = *h;

	memset(t.digest, 0, sizeof(t.digest));
	bg_sha256(&t, sizeof(t), h->digest);
}

/*
 * Case c applied to the full artifact in buf (len bytes, as written):
 * the field changed and the file sealed again. -EINVAL when c does not
 * apply to this artifact (a section it needs is absent).
 */
static inline int forge_apply(uint8_t *buf, size_t len, const struct forge_case *c)
{
	struct bg_art_header h, *hp = (struct bg_art_header *)buf;
	int s = -1;

	if (len < BG_ART_HEADER)
		return -EINVAL;
	memcpy(&h, buf, sizeof(h));
	switch (c->where) {
	case FW_HDR:
		forge_poke(buf + c->off, c);
		forge_seal_header(hp);
		return 0;
	case FW_RAW:
		forge_poke(buf + c->off, c);
		return 0;
	case FW_PAD:
		if (!h.sec[c->sec].len ||
		    (h.sec[c->sec].off + h.sec[c->sec].len) % BG_ART_ALIGN + c->off >=
			    BG_ART_ALIGN)
			return -EINVAL;
		forge_poke(buf + h.sec[c->sec].off + h.sec[c->sec].len + c->off, c);
		return 0;
	case FW_FILTER:
		s = BG_ART_SEC_FILTER;
		break;
	case FW_INDEX:
		s = BG_ART_SEC_INDEX;
		break;
	}
	if (!h.sec[s].len)
		return -EINVAL;
	forge_poke(buf + h.sec[s].off + c->off, c);
	forge_seal_section(buf, &h, s, hp);
	forge_seal_header(hp);
	return 0;
}

#endif
