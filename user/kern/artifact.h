/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Loading a filter artifact (core/artifact.h) into the kernel: a new
 * filter map filled from its verified image and swapped in, without
 * parsing or building. Kernel part: needs libbpf.
 */
#ifndef BLOOMGATE_KERN_ARTIFACT_H
#define BLOOMGATE_KERN_ARTIFACT_H

#include "core/artifact.h"
#include "core/prepare.h"

struct bg_state; /* kern/pins.h */

/*
 * Verifies full artifact a (its sources and filter sections against their
 * digests, the filter copied into a new map as it is hashed; the index is
 * checked too unless skip_index), checks it fits the attachments' capacity,
 * writes the load record (record_path: the artifact file that check is to
 * read the index from, the record naming it with a's digest; NULL: none),
 * makes protect (NULL: none) the live protected set and publishes the
 * filter in st's slot. The caller holds st's lock. On any failure the
 * running filter is untouched and r says why (r->failed, r->msg);
 * r->plan's counts, r->seed and r->filter_id as a load's; r->covers: the
 * protected addresses the artifact's filter lists (bg_protect_art_covers()).
 */
int bg_art_commit(struct bg_state *st, const struct bg_art *a,
		  const char *record_path, int skip_index,
		  unsigned int threads, const struct bg_protect_set *protect,
		  struct bg_load_report *r);

#endif
