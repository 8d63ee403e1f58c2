// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every field of an artifact checked before it is believed
 * (core/artifact.h, layout in bloomgate/artifact.h).
 *
 * An artifact comes from outside the operator (a file, a URL, the fleet
 * store, which any gateway's database role can write): whoever forges one
 * can also recompute its header digest, a plain SHA-256. So the digests
 * say only that the bytes are the ones written; whether the numbers in
 * them make sense is checked here, each field against its range and
 * against the fields it must agree with: the plan against the filter
 * image's own header (element 0 of FILTER, what the datapath reads), the
 * section table against the file, the element counts against the section
 * lengths (in 64 bits: nothing wraps), the padding and reserved bytes
 * zero. Nothing is allocated for a field before it is checked, and the
 * largest thing a header can make a gateway allocate is then a filter map
 * the size of the image it carries (a fixed capacity is the image's
 * size), or the attachments' own capacity.
 *
 * Each refusal is one line naming the field and why; -EBADMSG, or
 * -EPROTO for another format version or datapath ABI.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/artifact.h"
#include "core/artindex.h"
#include "core/attach_opts.h"
#include "core/mem_lookup.h"
#include "core/units.h"

/* A file larger than this is no artifact (256 TiB): every sum of offsets
 * and lengths below it fits 64 bits many times over. */
#define FILE_MAX (1ull << 48)
/* Counts of entries, keys and keys ever loaded: more than any list holds,
 * and small enough that their sums never wrap. */
#define COUNT_MAX (1ull << 48)

static const char *const sec_names[BG_ART_SEC__COUNT] = {
	"sources", "filter", "index", "delta", "digests",
};

static int bad(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bg_vwhyf(why, whylen, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

static uint64_t align_up(uint64_t v)
{
	return (v + BG_ART_ALIGN - 1) & ~(uint64_t)(BG_ART_ALIGN - 1);
}

static uint64_t nchunks(uint64_t len)
{
	return (len + BG_ART_CHUNK - 1) / BG_ART_CHUNK;
}

static uint64_t elems(uint64_t n, uint64_t per)
{
	return (n + per - 1) / per;
}

static int all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

static void header_digest(const struct bg_art_header *h, uint8_t out[BG_ART_SHA])
{
	struct bg_art_header t = *h;

	memset(t.digest, 0, sizeof(t.digest));
	bg_sha256(&t, sizeof(t), out);
}

/* Magic, version, the digest, ABI, kind: what the file is. */
static int check_ident(const struct bg_art_header *h, const char *what,
		       char *why, size_t whylen)
{
	uint8_t d[BG_ART_SHA];

	if (memcmp(h->magic, BG_ART_MAGIC, BG_ART_MAGIC_LEN))
		return bad(why, whylen, "%snot a bloomgate artifact (no magic)", what);
	if (h->version != BG_ART_VERSION || h->header_len != BG_ART_HEADER) {
		bg_whyf(why, whylen, "%sartifact format version %u (header %u bytes); "
			"this bloomgate reads version %u", what, h->version,
			h->header_len, BG_ART_VERSION);
		return -EPROTO;
	}
	header_digest(h, d);
	if (memcmp(d, h->digest, BG_ART_SHA))
		return bad(why, whylen, "%sthe header's checksum does not match: damaged",
			   what);
	if (h->abi_version != BG_ABI_VERSION) {
		bg_whyf(why, whylen, "%sbuilt for datapath ABI %u; this bloomgate's is "
			"%u: build it again with this version", what, h->abi_version,
			BG_ABI_VERSION);
		return -EPROTO;
	}
	if (h->kind != BG_ART_FULL && h->kind != BG_ART_DELTA)
		return bad(why, whylen, "%skind %u: neither full (%d) nor delta (%d)",
			   what, h->kind, BG_ART_FULL, BG_ART_DELTA);
	return 0;
}

/* The header's own numbers, one by one. */
static int check_scalars(const struct bg_art_header *h, char *why, size_t whylen)
{
	int full = h->kind == BG_ART_FULL;

	if (h->generation > INT64_MAX)
		return bad(why, whylen, "generation %" PRIu64 ": past %" PRId64
			   " (the fleet store's largest)", (uint64_t)h->generation,
			   INT64_MAX);
	if (full && h->base_generation)
		return bad(why, whylen, "base_generation %" PRIu64 " in a full artifact "
			   "(a delta's only)", (uint64_t)h->base_generation);
	if (!full && h->base_generation >= h->generation)
		return bad(why, whylen, "base_generation %" PRIu64 ": not below the "
			   "delta's generation %" PRIu64, (uint64_t)h->base_generation,
			   (uint64_t)h->generation);
	if (h->created > INT64_MAX)
		return bad(why, whylen, "created %" PRIu64 ": no time", (uint64_t)h->created);
	if (h->file_len > FILE_MAX || h->file_len < BG_ART_HEADER)
		return bad(why, whylen, "file_len %" PRIu64 ": out of range %u..%llu",
			   (uint64_t)h->file_len, BG_ART_HEADER, FILE_MAX);
	if (h->nsources > BG_ART_SOURCES_MAX)
		return bad(why, whylen, "nsources %u: more than %u lists (an index "
			   "names a list in 16 bits)", h->nsources, BG_ART_SOURCES_MAX);
	if (h->pad0)
		return bad(why, whylen, "pad0 %u: not zero", h->pad0);
	if (!all_zero(h->reserved, sizeof(h->reserved)))
		return bad(why, whylen, "reserved: not zero");
	if (full && !all_zero(h->base_sha256, 4 * BG_ART_SHA))
		return bad(why, whylen, "base_sha256, result_sha256 and their file "
			   "checksums: not zero in a full artifact (a delta's only)");
	return 0;
}

/* Probed prefix lengths: n of them, each in lo..hi, longest first, the
 * unused ones zero. */
static int check_lens(const uint8_t *len, unsigned int n, unsigned int lo,
		      unsigned int hi, const char *name, char *why, size_t whylen)
{
	unsigned int i;

	for (i = 0; i < BG_PROBES_MAX; i++) {
		if (i >= n ? len[i] != 0 :
			     len[i] < lo || len[i] > hi || (i && len[i] >= len[i - 1]))
			return bad(why, whylen, "plan.%s[%u] %u: not a probed length "
				   "(%u..%u, longest first, unused ones 0)", name, i,
				   len[i], lo, hi);
	}
	return 0;
}

static int check_rate(double v, double lo, double hi, const char *name, char *why,
		      size_t whylen)
{
	if (!isfinite(v) || v < lo || v > hi)
		return bad(why, whylen, "plan.%s %g: out of range %g..%g", name, v, lo, hi);
	return 0;
}

/* The counts of the plan: keys and entries. */
static int check_counts(const struct bg_art_plan *p, char *why, size_t whylen)
{
	const struct {
		const char *name;
		uint64_t v, max;
	} c[] = {
		{ "keys4", p->keys4, UINT32_MAX },
		{ "keys6", p->keys6, UINT32_MAX },
		{ "name_keys", p->name_keys, UINT32_MAX },
		{ "prefixes4", p->prefixes4, COUNT_MAX },
		{ "prefixes6", p->prefixes6, COUNT_MAX },
		{ "names", p->names, COUNT_MAX },
		{ "allow4", p->allow4, (1u << BG_RANGE_STEPS) - 1 },
		{ "allow6", p->allow6, (1u << BG_RANGE_STEPS) - 1 },
		{ "allow_names", p->allow_names, (1u << BG_RANGE_STEPS) - 1 },
		{ "bloom_loaded", p->bloom_loaded, COUNT_MAX },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (c[i].v > c[i].max)
			return bad(why, whylen, "plan.%s %" PRIu64 ": more than %" PRIu64,
				   c[i].name, c[i].v, c[i].max);
	if (p->keys != p->keys4 + p->keys6 + p->name_keys)
		return bad(why, whylen, "plan.keys %" PRIu64 ": not keys4 + keys6 + "
			   "name_keys (%" PRIu64 ")", (uint64_t)p->keys,
			   (uint64_t)(p->keys4 + p->keys6 + p->name_keys));
	if (p->bloom_loaded < p->keys)
		return bad(why, whylen, "plan.bloom_loaded %" PRIu64 ": fewer than its "
			   "%" PRIu64 " keys", (uint64_t)p->bloom_loaded, (uint64_t)p->keys);
	return 0;
}

/* The plan: sizes, lengths, rates, and the capacity against the image. */
static int check_plan(const struct bg_art_plan *p, char *why, size_t whylen)
{
	uint64_t least;
	int ret;

	if (!p->k || p->k > BG_K_MAX)
		return bad(why, whylen, "plan.k %u: out of range 1..%u", p->k, BG_K_MAX);
	if (p->n4 > BG_PROBES_MAX || p->n6 > BG_PROBES_MAX)
		return bad(why, whylen, "plan.n%s %u: more than %u probed lengths",
			   p->n4 > BG_PROBES_MAX ? "4" : "6",
			   p->n4 > BG_PROBES_MAX ? p->n4 : p->n6, BG_PROBES_MAX);
	ret = check_lens(p->len4, p->n4, BG_SHORT4_MAXLEN + 1, 32, "len4", why, whylen);
	if (!ret)
		ret = check_lens(p->len6, p->n6, 0, 128, "len6", why, whylen);
	if (!ret)
		ret = check_counts(p, why, whylen);
	if (ret)
		return ret;
	if (p->confirm > 1 || (p->fp_nbuckets && !p->confirm))
		return bad(why, whylen, "plan.confirm %u: not 0 or 1, or 0 with %u "
			   "buckets of the exact stage", p->confirm, p->fp_nbuckets);
	if (p->fp_nbuckets > UINT32_MAX / 2 ||
	    (p->fp_nbuckets && p->keys > (uint64_t)p->fp_nbuckets * BG_FP_PER_BUCKET))
		return bad(why, whylen, "plan.fp_nbuckets %u: out of range for %" PRIu64
			   " keys (%u a bucket, at most %u buckets)", p->fp_nbuckets,
			   (uint64_t)p->keys, BG_FP_PER_BUCKET, UINT32_MAX / 2);
	if (p->keys && !p->nblocks)
		return bad(why, whylen, "plan.nblocks 0: no Bloom block for %" PRIu64
			   " keys", (uint64_t)p->keys);
	if (p->short4 > 1 || p->short6_below > 129)
		return bad(why, whylen, "plan.short%s %u: out of range 0..%u",
			   p->short4 > 1 ? "4" : "6_below",
			   p->short4 > 1 ? p->short4 : p->short6_below,
			   p->short4 > 1 ? 1 : 129);
	if (!all_zero(p->pad, sizeof(p->pad)))
		return bad(why, whylen, "plan.pad: not zero");
	/* the header, the bitmap, the Bloom blocks, the stage: the least
	 * image there is for these counts */
	least = 1 + (p->short4 ? BG_SHORT4_ELEMS : 0) + (uint64_t)p->nblocks +
		p->fp_nbuckets;
	if (p->nelems < least)
		return bad(why, whylen, "plan.nelems %u: fewer than the %" PRIu64
			   " elements of the header, the bitmap, plan.nblocks %u and "
			   "plan.fp_nbuckets %u", p->nelems, least, p->nblocks,
			   p->fp_nbuckets);
	/* A fixed capacity is the image's size: the filter fitted to it fills
	 * it (bg_filter_fit()), and a gateway makes the map that size. Any
	 * other number would size a map for an image that is not there. */
	if (p->capacity && p->capacity != p->nelems)
		return bad(why, whylen, "plan.capacity %u: neither 0 nor the filter "
			   "image's %u elements (a fixed capacity is the size of the "
			   "image fitted to it)", p->capacity, p->nelems);
	if (p->capacity > bg_filter_capacity_elems(BG_CAPACITY_MAX))
		return bad(why, whylen, "plan.capacity %u: more than the largest "
			   "capacity an attachment takes (%u elements)", p->capacity,
			   bg_filter_capacity_elems(BG_CAPACITY_MAX));
	ret = check_rate(p->target, BG_FPR_MIN, BG_FPR_MAX, "target", why, whylen);
	if (!ret)
		ret = check_rate(p->predicted, 0, 1, "predicted", why, whylen);
	if (!ret)
		ret = check_rate(p->predicted_addr, 0, 1, "predicted_addr", why, whylen);
	if (!ret)
		ret = check_rate(p->predicted_confirmed, 0, 1, "predicted_confirmed",
				 why, whylen);
	return ret;
}

/*
 * The section table: each section of its kind present or absent, its
 * length in range, at the offset the writer puts it (after the one before,
 * aligned: bg_art_write_fd()), and the file ending with DIGESTS.
 */
static int check_sections(const struct bg_art_header *h, char *why, size_t whylen)
{
	int full = h->kind == BG_ART_FULL;
	/* 1: must be there, 0: must not, -1: may */
	const int want[BG_ART_SEC__COUNT] = { -1, full, full ? -1 : 0, !full, -1 };
	uint64_t off = BG_ART_HEADER, chunks = 0;
	int s;

	for (s = 0; s < BG_ART_SEC__COUNT; s++) {
		const struct bg_art_section *sc = &h->sec[s];

		if (!sc->len ? want[s] == 1 : want[s] == 0)
			return bad(why, whylen, "sec[%s]: %s in a %s artifact", sec_names[s],
				   sc->len ? "present" : "absent", full ? "full" : "delta");
		if (!sc->len) {
			if (sc->off || !all_zero(sc->sha256, BG_ART_SHA))
				return bad(why, whylen, "sec[%s].off %" PRIu64 ": an absent "
					   "section with an offset or a digest",
					   sec_names[s], (uint64_t)sc->off);
			continue;
		}
		if (sc->len > h->file_len)
			return bad(why, whylen, "sec[%s].len %" PRIu64 ": more than the "
				   "file's %" PRIu64 " bytes", sec_names[s],
				   (uint64_t)sc->len, (uint64_t)h->file_len);
		if (sc->off != off)
			return bad(why, whylen, "sec[%s].off %" PRIu64 ": the section "
				   "belongs at %" PRIu64, sec_names[s], (uint64_t)sc->off, off);
		if (s == BG_ART_SEC_DIGESTS) {
			if (sc->len != chunks * BG_ART_SHA)
				return bad(why, whylen, "sec[digests].len %" PRIu64 ": not "
					   "%" PRIu64 " chunk digests of %u bytes",
					   (uint64_t)sc->len, chunks, BG_ART_SHA);
			off += sc->len;
		} else {
			chunks += nchunks(sc->len);
			off = align_up(off + sc->len);
		}
	}
	if (!h->sec[BG_ART_SEC_DIGESTS].len && chunks)
		return bad(why, whylen, "sec[digests]: absent for %" PRIu64 " chunks", chunks);
	if (h->file_len != off)
		return bad(why, whylen, "file_len %" PRIu64 ": its sections end at %" PRIu64,
			   (uint64_t)h->file_len, off);
	return 0;
}

/* Section lengths against what they hold. */
static int check_lengths(const struct bg_art_header *h, char *why, size_t whylen)
{
	const struct bg_art_section *sc = h->sec;
	uint64_t dl = sc[BG_ART_SEC_DELTA].len, il = sc[BG_ART_SEC_INDEX].len;

	if (sc[BG_ART_SEC_SOURCES].len > BG_ART_SOURCES_BYTES)
		return bad(why, whylen, "sec[sources].len %" PRIu64 ": more than %u bytes",
			   (uint64_t)sc[BG_ART_SEC_SOURCES].len, BG_ART_SOURCES_BYTES);
	if (h->kind == BG_ART_FULL &&
	    sc[BG_ART_SEC_FILTER].len != (uint64_t)h->plan.nelems * BG_FILTER_VALUE_SIZE)
		return bad(why, whylen, "sec[filter].len %" PRIu64 ": not the plan's %u "
			   "elements of %u bytes", (uint64_t)sc[BG_ART_SEC_FILTER].len,
			   h->plan.nelems, BG_FILTER_VALUE_SIZE);
	if (il && (il % sizeof(struct bg_art_bucket) ||
		   il < 2 * sizeof(struct bg_art_bucket) ||
		   il / sizeof(struct bg_art_bucket) - 1 > UINT32_MAX))
		return bad(why, whylen, "sec[index].len %" PRIu64 ": not a header and "
			   "1 to %u buckets of %zu bytes", il, UINT32_MAX,
			   sizeof(struct bg_art_bucket));
	if (dl && (dl < BG_ART_HEADER || (dl - BG_ART_HEADER) % sizeof(struct bg_art_patch)))
		return bad(why, whylen, "sec[delta].len %" PRIu64 ": not a header and "
			   "patches of %zu bytes", dl, sizeof(struct bg_art_patch));
	return 0;
}

/* A header alone, once its identity is checked (check_ident()): what it
 * says of itself, with nothing read past it. */
static int check_fields(const struct bg_art_header *h, char *why, size_t whylen)
{
	int ret = check_scalars(h, why, whylen);

	if (!ret)
		ret = check_plan(&h->plan, why, whylen);
	if (!ret)
		ret = check_sections(h, why, whylen);
	if (!ret)
		ret = check_lengths(h, why, whylen);
	return ret;
}

/* The filter image's own header (what the datapath reads) against the
 * plan, its tables inside the image. */
static int check_image(const struct bg_art_plan *p, const struct bg_filter_header *f,
		       char *why, size_t whylen)
{
	/* what must be the plan's, field by field */
	const struct {
		const char *name;
		uint64_t f, p;
	} same[] = {
		{ "magic", f->magic, BG_FILTER_MAGIC },
		{ "abi_version", f->abi_version, BG_ABI_VERSION },
		{ "layout", f->layout, BG_LAYOUT_BLOCKED512 },
		{ "seed", f->seed, p->seed },
		{ "nblocks", f->nblocks, p->nblocks },
		{ "k", f->k, p->k },
		{ "fp_nbuckets", f->fp_nbuckets, p->fp_nbuckets },
		{ "n4", f->n4, p->n4 },
		{ "n6", f->n6, p->n6 },
		{ "entries", f->entries, p->keys },
		{ "allow4_n", f->allow4_n, p->allow4 },
		{ "allow6_n", f->allow6_n, p->allow6 },
	};
	uint64_t end;
	size_t i;

	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		if (same[i].f != same[i].p)
			return bad(why, whylen, "filter.%s %#" PRIx64 ": not the plan's "
				   "%#" PRIx64, same[i].name, same[i].f, same[i].p);
	if (memcmp(f->len4, p->len4, sizeof(f->len4)) ||
	    memcmp(f->len6, p->len6, sizeof(f->len6)))
		return bad(why, whylen, "filter.len4, len6: not the plan's probed "
			   "lengths");
	if (f->flags & ~(BG_FILTER_F_SHORT4 | BG_FILTER_F_NAMES) ||
	    !(f->flags & BG_FILTER_F_SHORT4) != !p->short4 ||
	    !(f->flags & BG_FILTER_F_NAMES) != !p->name_keys)
		return bad(why, whylen, "filter.flags %#x: not the plan's bitmap and "
			   "names", f->flags);
	if (f->subs_depths & ~BG_SUBS_DEPTHS_ALL)
		return bad(why, whylen, "filter.subs_depths %#x: bits past %#x",
			   f->subs_depths, BG_SUBS_DEPTHS_ALL);
	if (f->fp_off != (uint64_t)bg_bloom_base(f) + f->nblocks)
		return bad(why, whylen, "filter.fp_off %u: not right after the Bloom "
			   "blocks (%" PRIu64 ")", f->fp_off,
			   (uint64_t)bg_bloom_base(f) + f->nblocks);
	if (f->allow4_off != (uint64_t)f->fp_off + f->fp_nbuckets)
		return bad(why, whylen, "filter.allow4_off %u: not right after the exact "
			   "stage (%" PRIu64 ")", f->allow4_off,
			   (uint64_t)f->fp_off + f->fp_nbuckets);
	if (f->allown_n > p->allow_names)
		return bad(why, whylen, "filter.allown_n %u: more than the plan's %"
			   PRIu64 " allowed name keys", f->allown_n,
			   (uint64_t)p->allow_names);
	if (f->short6_n >> BG_RANGE_STEPS)
		return bad(why, whylen, "filter.short6_n %u: 2^%d ranges or more",
			   f->short6_n, BG_RANGE_STEPS);
	end = (uint64_t)f->allow4_off + elems(f->allow4_n, BG_RANGE4_PER_ELEM) +
	      elems(f->allow6_n, BG_RANGE6_PER_ELEM) +
	      elems(f->short6_n, BG_RANGE6_PER_ELEM) +
	      elems(f->allown_n, BG_NAMEKEY_PER_ELEM);
	if (end > p->nelems)
		return bad(why, whylen, "filter: its tables end at element %" PRIu64
			   ", past the image's %u", end, p->nelems);
	return 0;
}

/* The index's header: its own checks (bg_ai_valid()) and the seed. */
static int check_index(const struct bg_art_plan *p, const void *idx, size_t len,
		       char *why, size_t whylen)
{
	const struct bg_art_index_hdr *hd = idx;

	if (bg_ai_valid(idx, len))
		return bad(why, whylen, "index: its header (magic, nbuckets %u, records "
			   "%" PRIu64 ", lengths, classes) does not describe the section",
			   hd->nbuckets, (uint64_t)hd->records);
	if (hd->seed != p->seed)
		return bad(why, whylen, "index.seed %#" PRIx64 ": not the plan's %#" PRIx64,
			   (uint64_t)hd->seed, (uint64_t)p->seed);
	return 0;
}

/*
 * A delta's section: the header of the full artifact it makes, checked as
 * any header (it becomes one), the delta's own fields agreeing with it,
 * and no more patches than that artifact has elements to patch.
 */
static int check_delta(const struct bg_art_header *h, const uint8_t *dsec,
		       char *why, size_t whylen)
{
	const struct bg_art_header *rh = (const void *)dsec;
	uint64_t n = (h->sec[BG_ART_SEC_DELTA].len - BG_ART_HEADER) /
		     sizeof(struct bg_art_patch);
	uint64_t room;
	int ret;

	ret = check_ident(rh, "the delta's result: ", why, whylen);
	if (ret)
		return ret;
	ret = check_fields(rh, why, whylen);
	if (ret) {
		char inner[300];

		snprintf(inner, sizeof(inner), "%s", why ? why : "");
		return bad(why, whylen, "the delta's result: %s", inner);
	}
	if (rh->kind != BG_ART_FULL)
		return bad(why, whylen, "the delta's result: kind %u, not a full artifact",
			   rh->kind);
	if (memcmp(rh->digest, h->result_sha256, BG_ART_SHA))
		return bad(why, whylen, "result_sha256: not the digest of the result "
			   "header the delta carries");
	if (memcmp(&rh->plan, &h->plan, sizeof(h->plan)) || rh->nsources != h->nsources ||
	    rh->generation != h->generation)
		return bad(why, whylen, "plan, nsources, generation: not the ones of the "
			   "result header the delta carries");
	room = (rh->sec[BG_ART_SEC_FILTER].len + rh->sec[BG_ART_SEC_INDEX].len) /
	       BG_FILTER_VALUE_SIZE;
	if (n > room)
		return bad(why, whylen, "sec[delta].len: %" PRIu64 " patches for the %"
			   PRIu64 " elements of the result", n, room);
	return 0;
}

/* Between the sections: zero. */
static int check_padding(const struct bg_art_header *h, const uint8_t *base,
			 char *why, size_t whylen)
{
	int s;

	for (s = 0; s < BG_ART_SEC_DIGESTS; s++) {
		uint64_t end = h->sec[s].off + h->sec[s].len;

		if (h->sec[s].len && !all_zero(base + end, align_up(end) - end))
			return bad(why, whylen, "the padding after the %s section (at %"
				   PRIu64 "): not zero", sec_names[s], end);
	}
	return 0;
}

int bg_art_check(const struct bg_art_header *h, const uint8_t *base, size_t len,
		 char *why, size_t whylen)
{
	int ret;

	if (len < BG_ART_HEADER)
		return bad(why, whylen, "not a bloomgate artifact (%zu bytes)", len);
	if (memcmp(h->magic, BG_ART_MAGIC, BG_ART_MAGIC_LEN))
		return bad(why, whylen, "not a bloomgate artifact (no magic)");
	ret = check_ident(h, "", why, whylen);
	if (ret)
		return ret;
	/* before the other fields: a file cut or grown says so */
	if (h->file_len != len)
		return bad(why, whylen, "%zu bytes where the header says %" PRIu64
			   ": truncated or extended", len, (uint64_t)h->file_len);
	ret = check_fields(h, why, whylen);
	if (!ret)
		ret = check_padding(h, base, why, whylen);
	if (ret)
		return ret;
	if (h->kind == BG_ART_DELTA)
		return check_delta(h, base + h->sec[BG_ART_SEC_DELTA].off, why, whylen);
	ret = check_image(&h->plan, (const void *)(base + h->sec[BG_ART_SEC_FILTER].off),
			  why, whylen);
	if (!ret && h->sec[BG_ART_SEC_INDEX].len)
		ret = check_index(&h->plan, base + h->sec[BG_ART_SEC_INDEX].off,
				  h->sec[BG_ART_SEC_INDEX].len, why, whylen);
	return ret;
}
