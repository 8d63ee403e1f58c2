/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The filter artifact: a built filter written to a file once (`bloomgate
 * build`, `bloomgate publish`) and loaded by any number of gateways
 * without parsing or building (`bloomgate load FILE`, the agent's
 * `artifact:` and `fleet:` sources). One definition of its layout, shared
 * by every reader and writer (user/core/artifact.c).
 *
 * The file (little-endian: the host's, as the filter map's; the header's
 * abi_version and the filter header's own magic refuse any other):
 *
 *   [0, 4096)          struct bg_art_header
 *   sections           each at a 4096-byte-aligned offset, in the order
 *                      of enum bg_art_sec, zero padding between them
 *
 * Sections:
 *
 *   SOURCES   JSON text: the load options that built the filter and, for
 *             each list, its name, origin (path or URL), role, format,
 *             SHA-256 and entry count (user/core/artifact.h)
 *   FILTER    the filter map image, nelems elements of 64 bytes, element
 *             0 its struct bg_filter_header: loaded into a new map as is
 *   INDEX     the provenance index of a gateway's `check`: which list
 *             holds a key (struct bg_art_index_hdr, then buckets of
 *             struct bg_art_bucket); a hash table, so that a change of a
 *             few entries changes a few of its elements
 *   DELTA     (kind BG_ART_DELTA only) struct bg_art_patch records: the
 *             64-byte elements of FILTER and INDEX that differ from the
 *             base generation's, in (section, element) order
 *   DIGESTS   the SHA-256 of every BG_ART_CHUNK bytes of each section
 *             above, section after section, chunk after chunk
 *
 * Checksums: a section's digest (bg_art_section.sha256) is the SHA-256 of
 * its chunk digests (so chunks are hashed on every CPU, and one chunk can
 * be checked alone); DIGESTS's is the SHA-256 of its bytes; the header's
 * digest is the SHA-256 of the header with that field zeroed, and covers
 * every section's digest. Every other byte of the file is zero padding,
 * checked to be zero: the header digest then stands for every byte of
 * the file. The artifact's checksum, the one `inspect`, the logs and the
 * fleet store name, is nevertheless the SHA-256 of the whole file (what
 * `sha256sum FILE` prints), which no field can hold: the header digest is
 * internal (a delta names its base and result by it, a load record the
 * file it loaded).
 *
 * A delta (kind BG_ART_DELTA) carries the header of the full artifact it
 * makes (result), whole: applying it to the base (whose header digest is
 * base_sha256) gives FILTER and INDEX sections whose digests are the
 * result header's, and the result header's digest is result_sha256. It
 * also names the two files by their SHA-256 (base_file_sha256,
 * result_file_sha256), so that the result written is checked byte for
 * byte; a delta written before those fields existed has them zero.
 *
 * Every field is checked before anything is allocated for it
 * (user/core/artcheck.c): the numbers against their ranges and against
 * each other and the filter image's own header, the sections against
 * the file, the padding and the reserved bytes zero.
 */
#ifndef BLOOMGATE_ARTIFACT_ABI_H
#define BLOOMGATE_ARTIFACT_ABI_H

#include <linux/types.h>

#include "bloomgate/abi.h"

#define BG_ART_MAGIC "BLGART\r\n" /* 8 bytes, no NUL */
#define BG_ART_MAGIC_LEN 8
#define BG_ART_VERSION 1
#define BG_ART_HEADER 4096
#define BG_ART_ALIGN 4096
#define BG_ART_CHUNK (1u << 20) /* bytes a chunk digest covers */
#define BG_ART_SHA 32

enum bg_art_kind {
	BG_ART_FULL = 1,
	BG_ART_DELTA = 2,
};

enum bg_art_sec {
	BG_ART_SEC_SOURCES = 0,
	BG_ART_SEC_FILTER = 1,
	BG_ART_SEC_INDEX = 2,
	BG_ART_SEC_DELTA = 3,
	BG_ART_SEC_DIGESTS = 4,
	BG_ART_SEC__COUNT = 5,
};

struct bg_art_section {
	__u64 off; /* from the start of the file; 0 with len 0: absent */
	__u64 len; /* bytes */
	__u8 sha256[BG_ART_SHA]; /* SHA-256 of the chunk digests */
};
_Static_assert(sizeof(struct bg_art_section) == 48, "section entry");

/* The plan, as `inspect` shows it and `load` checks it against the
 * filter header and the attachments' capacity. */
struct bg_art_plan {
	__u64 seed;
	__u32 nelems; /* filter map elements */
	__u32 nblocks; /* Bloom blocks */
	__u32 fp_nbuckets; /* exact stage buckets, 0: none */
	__u32 capacity; /* fitted to a fixed-size map: its elements; 0 */
	__u8 k, n4, n6, confirm;
	__u8 len4[BG_PROBES_MAX], len6[BG_PROBES_MAX];
	__u8 short4; /* the IPv4 /16 bitmap is present */
	__u8 short6_below; /* IPv6 prefixes shorter: exact ranges */
	__u8 pad[2];
	__u64 keys; /* Bloom keys, after expansion */
	__u64 keys4, keys6, name_keys;
	__u64 prefixes4, prefixes6, names; /* listed entries */
	__u64 allow4, allow6, allow_names;
	/* Bloom keys whose bits are set in the Bloom part: keys at a full
	 * build, then every delta's additions (a removal leaves its bits) */
	__u64 bloom_loaded;
	double target; /* requested false-positive rate */
	double predicted; /* per Bloom probe, at keys */
	double predicted_addr; /* per address or query, worst case */
	double predicted_confirmed; /* once the exact stage has confirmed */
};
_Static_assert(sizeof(struct bg_art_plan) == 160, "plan size");

struct bg_art_header {
	char magic[BG_ART_MAGIC_LEN]; /* BG_ART_MAGIC */
	__u32 version; /* BG_ART_VERSION */
	__u32 header_len; /* BG_ART_HEADER */
	__u32 abi_version; /* BG_ABI_VERSION of the filter image */
	__u32 kind; /* enum bg_art_kind */
	__u64 generation; /* the fleet store's; 0 outside a fleet */
	__u64 base_generation; /* delta: the generation it applies to */
	__u64 created; /* Unix time, seconds */
	__u64 file_len; /* bytes of the whole file */
	__u32 nsources; /* lists in SOURCES */
	__u32 pad0;
	struct bg_art_plan plan;
	struct bg_art_section sec[BG_ART_SEC__COUNT];
	/* delta: digest of the base's header, and of the result's */
	__u8 base_sha256[BG_ART_SHA];
	__u8 result_sha256[BG_ART_SHA];
	/* delta: SHA-256 of the base's whole file, and of the result's (all
	 * zero: not recorded) */
	__u8 base_file_sha256[BG_ART_SHA];
	__u8 result_file_sha256[BG_ART_SHA];
	__u8 reserved[BG_ART_HEADER - 64 - 160 - 48 * BG_ART_SEC__COUNT -
		      5 * BG_ART_SHA]; /* zero */
	__u8 digest[BG_ART_SHA]; /* SHA-256 of this header, this field zeroed */
};
_Static_assert(sizeof(struct bg_art_header) == BG_ART_HEADER, "header size");

/*
 * A delta's patch record: element elem of section sec (BG_ART_SEC_FILTER
 * or BG_ART_SEC_INDEX) of the result is data.
 */
struct bg_art_patch {
	__u32 sec;
	__u32 elem;
	__u8 data[64];
};
_Static_assert(sizeof(struct bg_art_patch) == 72, "patch record");

/* ---- The index (section INDEX) --------------------------------------------
 * Element 0 its header, then nbuckets buckets. A record is one 64-bit
 * word: the low 48 bits of the key's index hash (never all zero: 0 is an
 * empty slot; a hash whose low 48 bits are 0 is stored as 1), the list's
 * number in SOURCES in the high 16. A key hashes to bucket
 * (h >> 32) * nbuckets >> 32 and is stored there or, when full, in the
 * next bucket with room (wrapping); a bucket that had to pass one on has
 * BG_ART_BKT_OVERFLOW set, so a lookup goes on to the next bucket only
 * while the flag is set. A removed record leaves the flag (a lookup looks
 * one bucket further, never misses one).
 *
 * The index hash of a key is bg_hash64() (bloomgate/hash.h) of the key as
 * the filter holds it (struct bg_key4, bg_key6, or the normalised name's
 * bytes) with the index's seed xor a class constant (user/core/artindex.c:
 * family, name kind, allow), so that its classes never share a record.
 */
#define BG_ART_INDEX_MAGIC 0x58444e49U /* "INDX" */
#define BG_ART_BKT_RECORDS 7
#define BG_ART_BKT_OVERFLOW 0x1U
#define BG_ART_REC_TAG_MASK 0x0000ffffffffffffULL
#define BG_ART_REC_SOURCE_SHIFT 48

struct bg_art_index_hdr {
	__u32 magic; /* BG_ART_INDEX_MAGIC */
	__u32 nbuckets;
	__u64 records;
	__u64 seed;
	__u64 plens4; /* bit l: an IPv4 entry of length l (0..32) is indexed */
	__u64 plens6[3]; /* bit l of 129: an IPv6 entry of length l */
	__u8 classes; /* bit c: a name or allow class c occurs (artindex.c) */
	__u8 pad[7];
};
_Static_assert(sizeof(struct bg_art_index_hdr) == 64, "index header");

struct bg_art_bucket {
	__u32 flags; /* BG_ART_BKT_* */
	__u32 n; /* records in use, the first n */
	__u64 rec[BG_ART_BKT_RECORDS];
};
_Static_assert(sizeof(struct bg_art_bucket) == 64, "index bucket");

#endif
