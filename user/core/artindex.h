/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The artifact's provenance index (section INDEX, layout in
 * bloomgate/artifact.h): which lists hold an entry, so that `check` on a
 * gateway that loaded an artifact names the list behind a verdict without
 * the lists themselves. A hash table of 64-byte buckets, so that a delta
 * that adds or removes a few entries changes a few of its elements.
 *
 * An item is one (entry, list) pair: the index hash h of the entry's key
 * in its class, and the list's number in the artifact's SOURCES (the
 * entry's bg_entry_ref.source). The same entry in two lists is two items;
 * the same entry twice in one list is one.
 *
 * Classes (the index hash's seed is the index's seed xor the class's
 * constant, so that classes never share a record):
 *   BG_AI_V4, BG_AI_V6        a blocked IPv4 / IPv6 prefix: the struct
 *                             bg_key4 / bg_key6 as the parse hands it
 *   BG_AI_NAME                a blocked domain rule: one byte, its enum
 *                             bg_name_kind, then the normalised name
 *   BG_AI_ALLOW_V4, _V6, _NAME  the same for allow entries (an --allow
 *                             list's, or an @@ rule)
 *
 * Core part: no libbpf.
 */
#ifndef BLOOMGATE_CORE_ARTINDEX_H
#define BLOOMGATE_CORE_ARTINDEX_H

#include <stddef.h>
#include <stdint.h>

#include "bloomgate/artifact.h"
#include "core/io.h"

enum bg_ai_class {
	BG_AI_V4 = 0,
	BG_AI_V6 = 1,
	BG_AI_NAME = 2,
	BG_AI_ALLOW_V4 = 3,
	BG_AI_ALLOW_V6 = 4,
	BG_AI_ALLOW_NAME = 5,
	BG_AI__CLASSES = 6,
};

/* Buckets are sized for this share of their slots at a full build, so
 * that deltas can add records; an add past BG_AI_LOAD_MAX is refused
 * (-ENOSPC: the publisher then builds a full generation). */
#define BG_AI_LOAD_BUILD 0.75
#define BG_AI_LOAD_MAX 0.92
/* List numbers fit the record's 16 bits. */
#define BG_AI_SOURCES_MAX 65535u

struct bg_ai_item {
	uint64_t h; /* the index hash (bg_ai_hash_entry) */
	uint32_t source; /* the list's number in SOURCES */
	uint8_t cls; /* enum bg_ai_class */
	uint8_t plen; /* addresses: the prefix length; names: 0 */
	uint16_t pad;
};

/* The index hash of an entry as a parse hands it (e->source is not part
 * of it); its class in *cls, its prefix length in *plen (0 for a name).
 * An entry of another kind: *cls BG_AI__CLASSES. */
uint64_t bg_ai_hash_entry(uint64_t seed, const struct bg_entry_ref *e,
			  uint8_t *cls, uint8_t *plen);

/*
 * Collects the items of a parse: bg_ai_entry() is a bg_entry_fn (core/io.h)
 * to give the load as its entry sink (bg_load_opts.entry; ctx the
 * collector); it may be called from several parse workers at once (one
 * vector per worker, as the contract of bg_entry_fn allows).
 */
struct bg_ai_collector;
int bg_ai_collector_new(uint64_t seed, struct bg_ai_collector **c);
void bg_ai_entry(void *ctx, unsigned int worker, const struct bg_entry_ref *e);
/* Drops what was collected (a load that starts over). */
void bg_ai_collector_reset(struct bg_ai_collector *c);
/* Every item collected, sorted by (h, source) (then class and prefix
 * length: a total order), duplicates gone; *v malloc'd (the caller frees
 * it; NULL when none). Sorted on every CPU. 0, -ENOMEM, -E2BIG when a
 * list number passes BG_AI_SOURCES_MAX, or -EINVAL for an entry of no
 * class (a bad kind or prefix length) or from a worker past
 * BG_PARSE_WORKERS_MAX. */
int bg_ai_items(struct bg_ai_collector *c, struct bg_ai_item **v, size_t *n);
void bg_ai_collector_free(struct bg_ai_collector *c);

/*
 * The INDEX section for items v[0, n) (sorted and unique, as bg_ai_items()
 * gives them): its header (seed, records, the prefix lengths and classes
 * that occur) and buckets for n records at BG_AI_LOAD_BUILD, each record
 * placed in a canonical order, so that the same items make the same bytes
 * whatever order they were collected in. *img malloc'd, *len bytes (a
 * multiple of 64). 0, -ENOMEM, -EINVAL when v is not sorted and unique or
 * an item is out of range, or -E2BIG past 2^32 buckets.
 */
int bg_ai_build(const struct bg_ai_item *v, size_t n, uint64_t seed,
		void **img, size_t *len);

/* Checks an INDEX section's header and size (a gateway's `check` reads
 * one it did not build): constant time, the buckets are checked as a
 * lookup reads them. img is 8-byte aligned (a malloc'd or mapped
 * section). 0 or -EBADMSG. */
int bg_ai_valid(const void *img, size_t len);

/*
 * A delta's changes, in place: the record of it added (-ENOSPC past
 * BG_AI_LOAD_MAX, the image unchanged; the header's records, prefix
 * lengths and classes updated; -EEXIST, unchanged, when the record is
 * there already), or removed (-ENOENT when it is not there; the header's
 * records updated, its prefix lengths and classes left: another item may
 * have them). Each touches the buckets of its probe chain only. Both
 * -EBADMSG for an image bg_ai_valid() refuses or a damaged bucket on the
 * way, -EINVAL for an item out of range.
 */
int bg_ai_add(void *img, size_t len, const struct bg_ai_item *it);
int bg_ai_remove(void *img, size_t len, const struct bg_ai_item *it);

/* One entry found behind a check. */
struct bg_ai_hit {
	uint32_t source; /* the list's number in SOURCES */
	int allow; /* an allow entry */
	int name_kind; /* names: enum bg_name_kind; addresses: 0 */
	/* the entry: "192.0.2.0/24" (masked; a /32 or /128 without its
	 * length), or the rule's normalised name */
	char entry[256];
	/* names: the parent the rule covers as a subdomain rule; "" when
	 * the rule names the query itself */
	char parent[256];
};

/*
 * The entries an index holds for arg (an IP address, or else a domain
 * name, as `check` takes it): for an address every prefix length the
 * index has that covers it, longest first, blocked and allowed; for a
 * name the name itself (exact and name-and-subdomains rules) and each of
 * its parents of at most BG_DNS_SUFFIX_MAX labels (name-and-subdomains and
 * subdomains-only rules: the datapath probes no deeper parent), the name
 * first. The hits of one key come in the order of their list numbers.
 * *hits malloc'd (NULL when none). 0, -EINVAL when arg is neither an
 * address nor a name, -EBADMSG for an image that is not an index, or
 * -ENOMEM.
 */
int bg_ai_find(const void *img, size_t len, const char *arg,
	       struct bg_ai_hit **hits, size_t *n);

#endif
