/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The provenance index: for every entry of a source's last good copy, the
 * line it came from, so that `check` names the list and line behind a
 * verdict. One file per source, STATE_DIR/index/NAME.idx, written from the
 * parse that builds the filter (core/io.h's entry sink: the list is parsed
 * once), recorded in the store (user/agent/store.h), memory-mapped by
 * check.
 *
 * The file (little-endian, the host's):
 *
 *   header    4096 bytes: magic, version, layout, the SHA-256 and size of
 *             the copy it indexes and how that copy was parsed, the prefix
 *             lengths and name kinds that occur, the checksum of the block
 *             sums, and its own checksum (which therefore covers the whole
 *             file: it is the file's checksum, the one the store records).
 *   records   12 bytes each, sorted: the 64-bit hash of what a check
 *             probes for (the key as the filter holds it, struct bg_key4,
 *             bg_key6 or the normalised name, hashed by bloomgate/hash.h
 *             with a seed that says the key's class: family or name kind,
 *             and allow), then the line (32 bits). A class in the seed
 *             instead of the record keeps a record at 12 bytes; check
 *             probes only the classes the header says occur.
 *   lines     one 64-bit word per BG_PROV_LINE_STEP lines: the byte offset
 *             (56 bits) and line (8 bits: within the step) of the first
 *             entry line of that step, or ~0. Quoting line L reads the copy
 *             from the word of L / STEP on, fewer than STEP lines.
 *   sums      the checksum of each BG_PROV_BLOCK bytes of records and
 *             lines, then the checksum of each BG_PROV_BLOCK bytes of
 *             those (a page of them). A reader checks the header, the
 *             file's size and the short second table when it opens the
 *             file, and a page of block sums and the block before it reads
 *             from a block: a 100M-entry index (1.2 GB, 2.3 MB of block
 *             sums) is never read whole by `check`, yet no byte of it is
 *             used unchecked.
 *
 * Durability: written to a temporary file in the index directory, fsync'd,
 * renamed over NAME.idx, the directory fsync'd, then recorded in the store.
 * A reader uses an index only when its header's checksum is the one the
 * store records and the SHA-256 it indexes is the store's of the copy: a
 * kill -9 at any point leaves either the old index in use or a new one
 * that the store does not name yet (reported, and rewritten by
 * bg_prov_reindex() at the agent's start).
 *
 * Agent library: no libbpf. Every function returns 0 (or a count) or a
 * negative errno.
 */
#ifndef BLOOMGATE_PROVENANCE_H
#define BLOOMGATE_PROVENANCE_H

#include <stddef.h>
#include <stdint.h>

#include "core/explain.h"
#include "core/io.h"
#include "core/sources.h"
#include "agent/store.h"

#define BG_PROV_VERSION 1
#define BG_PROV_HEADER 4096
#define BG_PROV_RECORD 12
#define BG_PROV_BLOCK 4096
#define BG_PROV_LINE_STEP 256
/* Lines named per key and source at most: a list that repeats one entry
 * on millions of lines makes check name the first of them, not allocate a
 * hit for each. */
#define BG_PROV_HITS_MAX 1000

/* One source of a rebuild, in the order of bg_load_opts.sources (the
 * index of bg_entry_ref.source). */
struct bg_prov_source {
	/* the list: its name in the store, where its copy came from
	 * (bg_list_origin(); neither: the copy is named), and how it is
	 * parsed (format as configured, BG_FMT_AUTO for detected): a change
	 * of any read option changes its entries */
	struct bg_list_desc list;
	const char *copy; /* the last good copy, as parsed */
	/* the file the parse reads, when it is not yet at copy: a candidate
	 * renamed there (the same file) before bg_prov_commit(); NULL: copy */
	const char *parsed;
	/* hex SHA-256 of that copy, as the fetch found it; NULL: the writer
	 * hashes the copy itself */
	const char *sha256;
	/* 1: write its index even when the one on disk records this copy */
	int force;
};

/* ---- Writing ----------------------------------------------------------- */

struct bg_prov_writer;

/*
 * A writer for one rebuild of the n sources v[] (the strings are copied).
 * Which sources are written is decided here: one whose index on disk has
 * a sound header recording the same copy SHA-256 and parse options, and
 * which the store records (bg_prov_commit() checks that part), is marked
 * unchanged and its entries are dropped as they come; the others are
 * marked changed (force marks one changed whatever its index says).
 * bg_prov_changed() tells which. Creates STATE_DIR/index (mode 0700).
 * -EINVAL: a name that cannot be a file name (store.h), n == 0.
 */
int bg_prov_begin(const char *state_dir, const struct bg_prov_source *v,
		  size_t n, struct bg_prov_writer **w);
/* 1 when source i of w will be written by bg_prov_commit(). */
int bg_prov_changed(const struct bg_prov_writer *w, size_t i);

/*
 * The entry sink (a bg_entry_fn; ctx: the writer): bg_load_opts.entry =
 * bg_prov_entry, entry_ctx = the writer. Thread-safe as core/io.h asks:
 * each worker appends to buffers of its own, so no lock is taken; calls
 * with the same worker must not overlap (io.h promises it). Memory: 12
 * bytes an entry of a changed source, in anonymous mappings that grow
 * without copying (mremap), plus 8 bytes per BG_PROV_LINE_STEP lines.
 * A failure (no memory, a line past 2^32) is kept and fails that source's
 * commit.
 */
void bg_prov_entry(void *ctx, unsigned int worker, const struct bg_entry_ref *e);

/*
 * After the parse (and the swap): writes the index of every changed
 * source, records every source's index in the store (one transaction),
 * and frees w. A source whose copy was replaced since bg_prov_begin()
 * (another inode, size or mtime) is not written (-ESTALE): its entries are
 * of the copy that was parsed, which is gone. The records are sorted by a
 * radix scatter out of the entry buffers (each freed as it is read) into
 * one buffer, then an in-place radix sort of each bucket, and written out
 * a chunk at a time (each freed once written): the writer needs the
 * index's size about once, not twice. Returns the number of indexes written, or
 * the first failure's -errno (the other sources are still written; a
 * source that failed keeps its old index, which check then reports as not
 * of the copy). store may be NULL (files only: tests, tools).
 */
int bg_prov_commit(struct bg_prov_writer *w, struct bg_store *store);
/* Drops w: nothing written (a rebuild that failed before its swap). */
void bg_prov_abort(struct bg_prov_writer *w);

/*
 * Writes the index of each of v[0..n-1] that needs it (the same decision
 * as bg_prov_begin()) by parsing its copy alone, without building a
 * filter: for an agent that adopts the live filter at start, and for the
 * sources bg_prov_verify() found bad. max_list_bytes as in bg_load_opts
 * (0: BG_LIST_BYTES_MAX). Returns the number written, or -errno.
 */
int bg_prov_reindex(struct bg_store *store, const struct bg_prov_source *v,
		    size_t n, uint64_t max_list_bytes);

/* ---- Verifying --------------------------------------------------------- */

/* A source whose index cannot be used, and why. */
struct bg_prov_bad {
	char name[BG_STORE_NAME_MAX];
	int err; /* -ENOENT missing, -EBADMSG corrupt or truncated, -ESTALE
		    not of the copy or not the store's, -EPROTO another
		    version, or the open's -errno */
	char why[320];
};

/*
 * Checks every source of the store that has a copy or an index, in full
 * (every block's checksum): the file is there, its header, size and
 * checksums are sound, the store records it, it indexes the copy the store
 * has the SHA-256 of, and the copy has the size the index was written for.
 * The failing ones into *bad (malloc'd, *n of them; free it). drop: their
 * index files are removed and their store records cleared, so that the
 * next bg_prov_begin() or bg_prov_reindex() writes them anew. For the
 * agent's start. 0 or -errno.
 */
int bg_prov_verify(struct bg_store *store, int drop, struct bg_prov_bad **bad,
		   size_t *n);

/* ---- Reading (check) --------------------------------------------------- */

struct bg_prov_reader;

/*
 * Opens the index of every source of the store (read-only is enough):
 * each one is mapped and its header, size and sums table checked, and it
 * is used only when the store records it and it indexes the copy the
 * store has; each other source with a copy is a problem (bg_prov_problem()).
 */
int bg_prov_open(struct bg_store *store, struct bg_prov_reader **r);
void bg_prov_close(struct bg_prov_reader *r);

/*
 * The entries behind a check of arg, as bg_store_explain() gave them
 * before the index (its semantics, its struct bg_explain_hit, its order):
 * for an address (bg_parse_addr()) every indexed prefix containing it, any
 * length, block and allow entries; for a name (bg_name_normalise()) the
 * name itself as an exact or name-and-subdomains rule, and each proper
 * parent of at most BG_DNS_SUFFIX_MAX labels as a name-and-subdomains or
 * subdomains-only rule. Hits are ordered by source name, then line; the
 * text is the line as quoted from the copy. A bg_explain_find_fn (ctx: the
 * reader). A block found corrupt on the way makes its source a problem
 * and drops its hits. -EINVAL when arg is neither an address nor a name.
 */
int bg_prov_find(void *ctx, const char *arg, struct bg_explain_hit **hits,
		 size_t *n);

/* Problem i (0, 1, ... while it returns 1): a source whose entries check
 * cannot name, and why ("index of the previous copy: ..."). */
int bg_prov_problem(const struct bg_prov_reader *r, size_t i,
		    const char **source, const char **why);

#endif
