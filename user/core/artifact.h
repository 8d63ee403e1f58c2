/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Writing, opening and verifying filter artifacts (the layout is
 * bloomgate/artifact.h), and deltas between two of them. Core part: no
 * libbpf; loading one into the kernel is kern/artifact.h's.
 *
 * Every function returns 0 or a negative errno; those that can fail for a
 * reason a person must read fill why (one line, no newline).
 */
#ifndef BLOOMGATE_CORE_ARTIFACT_H
#define BLOOMGATE_CORE_ARTIFACT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bloomgate/artifact.h"
#include "core/explain.h"
#include "core/filter.h"
#include "core/sha.h"

/* Lists an artifact names at most (its index numbers a list in 16 bits,
 * BG_AI_SOURCES_MAX + 1), and the largest SOURCES section read. */
#define BG_ART_SOURCES_MAX 65536u
#define BG_ART_SOURCES_BYTES (64u << 20)

/* The plan's part of a header, from a plan (bg_filter_plan) and seed. */
void bg_art_plan_fill(struct bg_art_plan *ap, const struct bg_filter_params *p,
		      uint64_t seed);
/* The other way: a plan as far as the header tells it (counts, lengths,
 * sizes and rates; not the map's layout offsets, which the filter image's
 * own header holds). */
void bg_art_plan_params(const struct bg_art_plan *ap, struct bg_filter_params *p);

/*
 * What a writer gives: the header's fields other than the sections,
 * offsets and digests (magic, version, lengths are set here), and each
 * section's bytes (len 0: absent). Sections are hashed on every CPU.
 */
struct bg_art_parts {
	const void *data[BG_ART_SEC__COUNT]; /* DIGESTS: computed, ignored */
	size_t len[BG_ART_SEC__COUNT];
};

/*
 * Completes h (sections, digests, file_len, header digest) for parts and
 * writes the artifact to fd from its current offset (header, sections,
 * padding, digests). threads: 0 every CPU. file_sha (may be NULL): the
 * SHA-256 of the bytes written, the file's checksum, hashed as they are
 * written (one sequential pass). 0 or -errno.
 */
int bg_art_write_fd(int fd, struct bg_art_header *h,
		    const struct bg_art_parts *parts, unsigned int threads,
		    uint8_t file_sha[BG_ART_SHA]);
/* The same into path, atomically (a temporary file beside it, fsync'd,
 * renamed over path). */
int bg_art_write(const char *path, struct bg_art_header *h,
		 const struct bg_art_parts *parts, unsigned int threads,
		 uint8_t file_sha[BG_ART_SHA]);
/* bg_art_write() of what must come out as want_digest (the header's) and
 * want_file (the file's SHA-256; each NULL or all zero: not checked):
 * -EBADMSG, nothing renamed over path, when it does not. */
int bg_art_write_as(const char *path, struct bg_art_header *h,
		    const struct bg_art_parts *parts, unsigned int threads,
		    const uint8_t *want_digest, const uint8_t *want_file,
		    uint8_t file_sha[BG_ART_SHA]);

/* An artifact opened for reading: mapped read-only, the header checked. */
struct bg_art {
	const struct bg_art_header *h;
	const uint8_t *base; /* the whole file */
	size_t len;
	int mapped; /* base is an mmap of len bytes (else borrowed) */
};

/*
 * Opens path (or mem: borrowed, not copied) and checks every field of the
 * header (bg_art_check()): the magic, version, header length, ABI, kind,
 * the header's digest, the file's length, every field of the plan, each
 * section's place and length, the padding, and for a full artifact the
 * filter image's header and the index's, for a delta the header of its
 * result. Section contents are not read: bg_art_verify(). -EBADMSG (why
 * names the field and says why), -EPROTO (another version or ABI), or the
 * open's -errno.
 */
int bg_art_open(const char *path, struct bg_art *a, char *why, size_t whylen);
void bg_art_close(struct bg_art *a);
/*
 * The checks of bg_art_open() on the len bytes at base (h: its first
 * BG_ART_HEADER, when len has them), nothing allocated: one line in why
 * naming the field (user/core/artcheck.c).
 */
int bg_art_check(const struct bg_art_header *h, const uint8_t *base, size_t len,
		 char *why, size_t whylen);
/* The artifact's checksum: the SHA-256 of the whole file, in hex (what
 * `sha256sum` prints; one sequential read of it). */
void bg_art_file_sha(const struct bg_art *a, char hex[65]);
/* A full artifact's plan as a load's (bg_art_plan_params()), with its
 * tables where the filter image has them: bg_filter_used() is then the
 * elements the filter takes, for a growing capacity's rule. */
void bg_art_params(const struct bg_art *a, struct bg_filter_params *p);
/* 1 when the file at path starts with BG_ART_MAGIC; 0 when not (or it
 * cannot be read: the caller's open says why). */
int bg_art_is_artifact(const char *path);

/* Section sec's bytes (NULL, *len 0 when absent). */
const void *bg_art_sec(const struct bg_art *a, int sec, size_t *len);

/*
 * Checks the sections of mask (bit 1 << BG_ART_SEC_*) against their
 * digests, on threads threads (0: every CPU), and the DIGESTS section
 * against its own; SOURCES is also read (JSON, nsources lists). With
 * dst[sec] not NULL, section sec is also copied there, chunk by chunk, as
 * it is hashed (one read of the file for both: `load` fills the new filter
 * map so). 0, or -EBADMSG naming the section and chunk.
 */
int bg_art_verify(const struct bg_art *a, unsigned int mask, void *const *dst,
		  unsigned int threads, char *why, size_t whylen);

/* A section's digest as the header holds it (the SHA-256 of its chunks'
 * digests), on threads threads; chunk digests into chunks when not NULL
 * ((len + BG_ART_CHUNK - 1) / BG_ART_CHUNK of them). */
void bg_art_digest(const void *data, size_t len, uint8_t out[BG_ART_SHA],
		   uint8_t (*chunks)[BG_ART_SHA], unsigned int threads);

/* The SOURCES section, parsed. */
struct bg_art_source {
	char *name, *origin, *role, *format, *sha256;
	uint64_t entries;
	int subdomains, allow_wide;
};

struct bg_art_sources {
	struct bg_art_source *v; /* in list-number order */
	size_t n;
	/* the build's options */
	double fpr;
	int confirm, strict, allow_wide;
	uint32_t capacity;
	char *options; /* the options object as JSON text, or NULL */
};

/* 0, -ENOENT (no SOURCES section), -EBADMSG (not its JSON, or not
 * nsources lists), -ENOMEM. */
int bg_art_sources_read(const struct bg_art *a, struct bg_art_sources *s);
int bg_art_sources_parse(const char *text, size_t len, struct bg_art_sources *s);
void bg_art_sources_free(struct bg_art_sources *s);

/* `inspect`: the header, plan and sources as text. */
void bg_art_print(FILE *f, const struct bg_art *a, const char *name);

/* ---- check on a gateway that loaded an artifact --------------------------- */

/* An artifact opened for `check`: its index and the names of its lists. */
struct bg_art_finder {
	struct bg_art a;
	struct bg_art_sources s;
};

/* Opens the artifact at path for check; digest (may be NULL): the header
 * digest of the artifact loaded (its load record's), -ESTALE when the
 * file is another now. -EBADMSG: no readable index. */
int bg_art_finder_open(const char *path, const uint8_t *digest,
		       struct bg_art_finder *f, char *why, size_t whylen);
void bg_art_finder_close(struct bg_art_finder *f);
/* A bg_explain_find_fn (core/explain.h), ctx a bg_art_finder: the lists
 * that hold the entries behind arg, line 0 (the index names lists). */
int bg_art_find(void *ctx, const char *arg, struct bg_explain_hit **hits,
		size_t *n);

/* ---- Deltas ------------------------------------------------------------ */

/*
 * The delta from full artifact base to full artifact res (same seed and
 * plan, sections of the same size: res made by patching base's images),
 * as a delta artifact into fd: res's header (whole, in the DELTA's
 * result), res's SOURCES, the two files' SHA-256, and a patch for every
 * 64-byte element of FILTER and INDEX that differs, in (section, element)
 * order. -EXDEV when the two cannot be diffed (other sizes or seed): ship
 * res whole. (In artdelta.c.)
 */
int bg_art_delta_write_fd(int fd, const struct bg_art *base,
			  const struct bg_art *res, uint64_t generation,
			  unsigned int threads, size_t *patches);

/*
 * Applies delta d to base (which must be the full artifact whose digest is
 * d's base_sha256: else -ESTALE) and writes the resulting full artifact to
 * path (atomically); it is verified against the result's digest, and its
 * bytes against the result file's SHA-256 when d records it, before it
 * replaces anything (-EBADMSG; so is a patch out of range or out of
 * order). file_sha (may be NULL): the SHA-256 of the file written. why
 * says what failed.
 */
int bg_art_delta_apply(const struct bg_art *base, const struct bg_art *d,
		       const char *path, unsigned int threads,
		       uint8_t file_sha[BG_ART_SHA], char *why, size_t whylen);

#endif
