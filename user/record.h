/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The load record: the list files that built the live filter, so `check`
 * can name the entry behind a match, re-reading each list the way `load`
 * read it. Core part: no libbpf.
 *
 * Kept in BG_RECORD_DIR (bpffs holds no plain files), one file per pin
 * directory, a JSON document (version BG_RECORD_VERSION):
 *
 *   {"version":2,"filter_id":N,"sources":[{"role":"block"|"allow",
 *    "format":"addr"|"plain"|"hosts"|"adblock","subdomains":bool,
 *    "allow_wide":bool,"path":"..."}, ...]}
 *
 * ("allow_wide" may be absent, as in a record written before it: false.)
 *
 * The record of the text format before it ("filter N" then one line per
 * list) is not read: BG_RECORD_DIR is a tmpfs, so such a record exists only
 * when bloomgate was upgraded while attached, and the next `load` replaces
 * it; until then `check` answers without naming entries, as with no record.
 */
#ifndef BLOOMGATE_RECORD_H
#define BLOOMGATE_RECORD_H

#include <stddef.h>

#include "bloomgate/abi.h"
#include "sources.h"

#define BG_RECORD_DIR "/run/bloomgate"
#define BG_RECORD_VERSION 2

/* Pin directory in use: $BLOOMGATE_PIN_DIR or BG_PIN_DIR. Here rather than
 * in pins.c, which needs libbpf, because the record is named after it. */
const char *bg_pin_dir(void);

struct bg_record {
	__u32 filter_id; /* map id of the filter these lists built */
	struct bg_source *src; /* paths absolute where they could be made so */
	int n;
};

/* A file of this pin directory's in BG_RECORD_DIR: BG_RECORD_DIR/<pin
 * directory, '/' made '_'><suffix> (the record ".lists", the agent's
 * control socket ".sock"). */
void bg_run_path(char *buf, size_t len, const char *suffix);

/* The record's file: bg_run_path(".lists"). */
void bg_record_path(char *buf, size_t len);

/* Writes the record of n sources atomically (a temporary file renamed over
 * it); format of each: the one used (not BG_FMT_AUTO). 0 or -errno. */
int bg_record_write(__u32 filter_id, const struct bg_source *src, size_t n);

/* Reads the record. -ENOENT: none; -EPROTO: not a record of version
 * BG_RECORD_VERSION (an older text record, a newer version, or damaged).
 * Sources this version does not understand (an unknown role or format, no
 * path) are skipped, not guessed. */
int bg_record_read(struct bg_record *r);
void bg_record_free(struct bg_record *r);

#endif
