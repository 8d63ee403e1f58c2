/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The provenance index's parts (user/agent/provenance.h is its interface),
 * shared by its three files: provenance.c (the file's layout, its hashes
 * and sums, the writer fed by the parse's entry sink, the sort),
 * prov_commit.c (each changed source's index written and recorded in the
 * store) and prov_read.c (check's reader: blocks verified as they are
 * read, the lookups, the lines quoted).
 */
#ifndef BLOOMGATE_AGENT_PROVENANCE_PRIV_H
#define BLOOMGATE_AGENT_PROVENANCE_PRIV_H

#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "core/lists.h"
#include "core/sources.h"
#include "agent/provenance.h"


/* "BGPROV" and a line end: a file cut to text, or read as text, shows it. */
extern const char MAGIC[8];

/* Seeds: of the key hashes (the header keeps it, so a later version may
 * pick another), and of the checksums, one per kind of region so that a
 * region copied over another does not check. */
#define KEY_SEED 0x70726f76656e616eULL
#define SEED_BLOCK 0x626c6f636bULL
#define SEED_SUMS 0x73756d73ULL
#define SEED_HEADER 0x686561646572ULL

/* A lines word: offset in the low 56 bits, line within its step above. */
#define LINE_NONE UINT64_MAX
#define OFF_BITS 56
#define OFF_MASK ((1ULL << OFF_BITS) - 1)

/* Key classes (in the hash's seed, provenance.h): family or name. */
enum { CL_V4 = 1, CL_V6 = 2, CL_NAME = 3 };

struct hdr {
	char magic[8];
	uint32_t version, header_size, record_size, block_size;
	uint32_t line_step, flags;
	uint64_t file_size;
	uint64_t count; /* records, from header_size on */
	uint64_t lines_off, nlines; /* the lines words */
	uint64_t sums_off, nblocks; /* a sum per block of [header_size, sums_off) */
	uint64_t npages; /* after the sums: a sum per BG_PROV_BLOCK of them */
	uint64_t seed;
	uint64_t copy_size; /* bytes of the copy indexed */
	uint64_t max_line;
	uint8_t copy_sha[32];
	int32_t format, subdomains, allow, allow_wide; /* how it was parsed */
	uint64_t plens4[2]; /* [allow]: bit p, a /p occurs */
	uint64_t plens6[2][3]; /* [allow]: bits 0..128 */
	uint32_t name_kinds; /* bit kind * 2 + allow */
	uint32_t pad;
	char name[72];
	char copy[1024];
	uint64_t sums_hash; /* of the table of the sums' pages' sums */
	uint64_t header_hash; /* of the BG_PROV_HEADER bytes, this field 0 */
};
_Static_assert(sizeof(struct hdr) <= BG_PROV_HEADER, "header size");
_Static_assert(BG_STORE_NAME_MAX <= 72, "header name");
_Static_assert(BG_PROV_LINE_STEP <= 256, "a line's place in its step: 8 bits");

/* Records are 12 bytes, unaligned: read and written with memcpy (a plain
 * load on x86-64). */
static inline uint64_t rec_hash(const uint8_t *r)
{
	uint64_t h;

	memcpy(&h, r, 8);
	return h;
}

static inline uint32_t rec_line(const uint8_t *r)
{
	uint32_t l;

	memcpy(&l, r + 8, 4);
	return l;
}


/* ---- The writer (provenance.c, prov_commit.c) ---- */

/* One source's entries as one worker handed them on. */
struct wsrc {
	uint8_t *rec; /* records, an anonymous mapping */
	size_t n, cap; /* records */
	uint64_t *lines; /* lines words, by step */
	size_t nlines;
	uint64_t plens4[2], plens6[2][3];
	uint32_t kinds;
	uint64_t max_line;
	int err;
};

struct worker {
	struct wsrc *src; /* one per source of the writer */
};

struct psrc {
	/* the writer's copy (bg_list_desc_dup()); its read options 0 or 1
	 * but the format, as the index's header records them */
	struct bg_list_desc list;
	char *origin, *copy; /* where it came from (else the copy), the copy */
	char sha[65]; /* hex; "" when the writer hashes the copy */
	int changed;
	int err; /* a failure known before the commit (reindex's parse) */
	struct stat st; /* the copy at bg_prov_begin() */
	int have_st;
	/* the index on disk when unchanged: what the store must record */
	uint64_t checksum, count, bytes;
};

struct bg_prov_writer {
	char *dir; /* the state directory */
	char idir[PATH_MAX]; /* its index directory */
	struct psrc *src;
	size_t n;
	struct worker *wk[BG_PARSE_WORKERS_MAX];
	int bad_call; /* an entry of a worker or source out of range */
};

/* Records a buffer starts with: 768 KiB, grown by doubling. */
#define REC_INIT (1 << 16)

/* What a commit wrote for one source. */
struct written {
	uint64_t checksum, count, bytes;
	char sha[65];
};

/* ---- Shared by the three files (provenance.c) ---- */

uint64_t prov_sum_bytes(const void *data, size_t n, uint64_t seed);
uint64_t prov_header_hash(const void *page);
uint64_t prov_hash4(uint64_t seed, const struct bg_key4 *k, int allow);
uint64_t prov_hash6(uint64_t seed, const struct bg_key6 *k, int allow);
uint64_t prov_hash_name(uint64_t seed, const char *name, size_t len,
			int kind, int allow);
uint64_t prov_sum_pages(uint64_t nblocks);
int prov_check_header(const void *page, uint64_t size, char *why,
		      size_t wl);
void prov_wsrc_free(struct wsrc *ws);
void prov_writer_free(struct bg_prov_writer *w);
int prov_scatter_sort(struct bg_prov_writer *w, size_t i, uint8_t *dst,
		      size_t count);

#endif
