/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The load record: the list files that built the live filter, so `check`
 * can name the entry behind a match, re-reading each list the way `load`
 * read it. Core part: no libbpf.
 *
 * Kept in BG_RECORD_DIR (bpffs holds no plain files), one record per
 * filter map, a JSON document (version BG_RECORD_VERSION):
 *
 *   {"version":2,"filter_id":N,"sources":[{"role":"block"|"allow",
 *    "format":"addr"|"plain"|"hosts"|"adblock","subdomains":bool,
 *    "allow_wide":bool,"path":"..."}, ...]}
 *
 * or, for a filter loaded from an artifact, "sources":[] and
 * "artifact":{"path":"...","sha256":"<hex of its header digest>"} (a
 * reader that does not know the key names no entry, as without a record).
 *
 * ("allow_wide" may be absent, as in a record written before it: false.)
 *
 * Layout, for pin directory P ('/' made '_', bg_run_path):
 *
 *   P.records/N   the record of filter map id N
 *   P.lists       symlink to P.records/N, N the live filter's (current)
 *
 * Why one file per map id: `load` writes the new filter's record before
 * it swaps the filter in (the id is known once the map exists), so a load
 * killed at any moment leaves the live filter's record in place: before
 * the swap the old one is untouched, after it the new one is already
 * there. Readers pick the record by the live filter's id (the slot), not
 * through the symlink, which only says which one is current to a person or
 * an older reader. Records of filters no longer live (a load killed
 * between the write and the swap, or between the swap and the clean-up)
 * are removed by the next load (bg_record_keep).
 *
 * A record of an earlier layout (P.lists a file: the JSON one, or the text
 * one before it, "filter N" then one line per list) is not read:
 * BG_RECORD_DIR is a tmpfs, so such a record exists only when bloomgate
 * was upgraded while attached, and the next `load` replaces it; until then
 * `check` answers without naming entries, as with no record.
 */
#ifndef BLOOMGATE_RECORD_H
#define BLOOMGATE_RECORD_H

#include <stddef.h>

#include "bloomgate/abi.h"
#include "core/sources.h"

#define BG_RECORD_DIR "/run/bloomgate"
#define BG_RECORD_VERSION 2

/* Pin directory in use: $BLOOMGATE_PIN_DIR or BG_PIN_DIR. Here rather than
 * in pins.c, which needs libbpf, because the record is named after it. */
const char *bg_pin_dir(void);

struct bg_record {
	__u32 filter_id; /* map id of the filter these lists built */
	struct bg_source *src; /* paths absolute where they could be made so */
	int n;
	/* a filter loaded from an artifact (core/artifact.h): no sources, the
	 * artifact's path and header digest instead ("artifact": {"path",
	 * "sha256"}); check names lists from its index */
	char *artifact;
	__u8 artifact_sha[32];
};

/* A file of this pin directory's in BG_RECORD_DIR: BG_RECORD_DIR/<pin
 * directory, '/' made '_'><suffix> (the record ".lists", the agent's
 * control socket ".sock"). */
void bg_run_path(char *buf, size_t len, const char *suffix);

/* The current record's symlink: bg_run_path(".lists"). */
void bg_record_path(char *buf, size_t len);

/* The directory of the records: bg_run_path(".records"); the record of
 * filter map id in it. */
void bg_record_dir(char *buf, size_t len);
void bg_record_id_path(char *buf, size_t len, __u32 filter_id);

/* Writes the record of filter map filter_id, n sources, atomically (a
 * temporary file renamed to P.records/<filter_id>); format of each: the
 * one used (not BG_FMT_AUTO). Does not make it current (bg_record_keep).
 * 0 or -errno. */
int bg_record_write(__u32 filter_id, const struct bg_source *src, size_t n);

/* The record of a filter loaded from the artifact at path (its header
 * digest sha): what check reads the artifact's index from. As
 * bg_record_write(). */
int bg_record_write_artifact(__u32 filter_id, const char *path,
			     const __u8 sha[32]);

/*
 * Makes the record of live_id current (P.lists switched to it by one
 * rename) and removes every other file of P.records: records of filters
 * no longer live, temporary files of a killed write. live_id 0 (no filter
 * is live) or a live filter without a record: the symlink and the
 * directory go too. Called under the pin directory's lock. 0, or the
 * first -errno (the removals are all tried).
 */
int bg_record_keep(__u32 live_id);

/* Reads the record of filter map filter_id (found by its id, whatever is
 * current). -ENOENT: none; -EPROTO: not a record of version
 * BG_RECORD_VERSION (an older text record, a newer version, damaged) or
 * not of that filter. Sources this version does not understand (an
 * unknown role or format, no path) are skipped, not guessed. */
int bg_record_read(__u32 filter_id, struct bg_record *r);
void bg_record_free(struct bg_record *r);

#endif
