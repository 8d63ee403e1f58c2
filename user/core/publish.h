/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A publisher's next generation (`bloomgate publish`): the new lists built
 * into a full artifact, and, when the base generation allows it, that
 * artifact made instead by patching the base's filter and index
 * (core/patch.h, core/artindex.h) so that a delta of the changed 64-byte
 * elements (core/artifact.h) is all a gateway on the base downloads.
 *
 * A delta needs the base's lists as they were (to know which keys went):
 * the publisher keeps a copy of each list it published, named by its
 * SHA-256, in its cache directory. It is made only when the base is the
 * publisher's own last generation, built with the same options (rate,
 * stage, wide prefixes, capacity) from the same lists in the same order
 * (list numbers are the index's), every list of it is in the cache, the
 * patch can express the new lists in the base's plan, the index has room,
 * and the Bloom part's predicted rate, with the bits of removed keys still
 * set, stays within bound times its target; else (and on demand) the new
 * generation is a full one, built from scratch, which resets the rate.
 * Core: no libbpf, no database.
 */
#ifndef BLOOMGATE_CORE_PUBLISH_H
#define BLOOMGATE_CORE_PUBLISH_H

#include <stddef.h>
#include <stdint.h>

#include "bloomgate/artifact.h"
#include "core/prepare.h"

/* A delta generation is made while the Bloom part's predicted rate per
 * address stays within this many times its target. */
#define BG_PUB_RATE_BOUND 2.0
/* ... and while the delta is at most this share of the full artifact
 * (else the full one is all there is to ship). */
#define BG_PUB_DELTA_SHARE 0.5

struct bg_pub_opts {
	const struct bg_load_opts *load; /* the new lists and options */
	const char *base; /* the base generation's full artifact; NULL: none */
	const char *cache; /* the publisher's copies of lists, by SHA-256 */
	uint64_t generation; /* the new one's number */
	int full; /* a full generation whatever the base */
	double bound; /* 0: BG_PUB_RATE_BOUND */
	const char *out_full; /* where the full artifact is written */
	const char *out_delta; /* where the delta is written, when made */
	unsigned int threads;
};

struct bg_pub_result {
	int delta; /* 1: a delta generation (out_delta written) */
	char why_full[300]; /* a full one: why */
	size_t patches; /* the delta's 64-byte elements */
	uint64_t full_bytes, delta_bytes;
	uint64_t keys_added, keys_removed; /* Bloom keys (delta) */
	uint64_t items_added, items_removed; /* index records (delta) */
	uint64_t entries; /* listed entries of the new generation */
	double predicted_addr; /* the Bloom part's rate, bits of removed
				  keys included (delta) */
	struct bg_art_header h; /* the full artifact's, as written */
	char sha256[65]; /* the full artifact's checksum: its file's SHA-256 */
	double ms_parse, ms_patch, ms_write; /* the delta's work */
};

/*
 * Builds generation o->generation from o->load (its lists parsed once,
 * the base's cached lists once more for a delta) into o->out_full, and its
 * delta against o->base into o->out_delta when one is made (see above).
 * 0, or -errno with r->failed and r->msg saying why (a list that does not
 * parse fails the publish as it fails a load: nothing is written).
 */
int bg_publish_build(const struct bg_pub_opts *o, struct bg_pub_result *res,
		     struct bg_load_report *r);

/*
 * Keeps a copy of each list of srcs in cache as cache/<sha256> (sha[i]:
 * its SHA-256 as the artifact names it), and removes the other files of
 * cache: the next generation's delta parses them as the base's lists.
 * 0 or -errno.
 */
int bg_publish_cache_lists(const char *cache, const struct bg_sources *srcs,
			   char (*sha)[65]);

#endif
