// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The provenance index (user/agent/provenance.h): written from the parse's
 * entry sink, sorted in the file's own mapping, checked block by block as
 * check reads it.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "bloomgate/bloom.h"
#include "bloomgate/dns.h"
#include "bloomgate/hash.h"
#include "core/grow.h"
#include "core/domains.h"
#include "core/lists.h"
#include "core/sources.h"
#include "agent/fetch.h"
#include "agent/provenance.h"
#include "core/sha.h"

/* "BGPROV" and a line end: a file cut to text, or read as text, shows it. */
static const char MAGIC[8] = { 'B', 'G', 'P', 'R', 'O', 'V', '\r', '\n' };

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

/* ---- Shared ------------------------------------------------------------ */

/*
 * A checksum of any length with the one hash: bloomgate/hash.h hashes at
 * most BG_HASH_MAX_LEN bytes a call (a bound the BPF verifier needs), so
 * longer inputs are hashed a piece at a time, each piece seeded with the
 * hash so far.
 */
static uint64_t sum_bytes(const void *data, size_t n, uint64_t seed)
{
	const uint8_t *p = data;
	uint64_t h = seed;

	do {
		size_t k = n < BG_HASH_MAX_LEN ? n : BG_HASH_MAX_LEN;

		h = bg_hash64(p, (__u32)k, h);
		p += k;
		n -= k;
	} while (n);
	return h;
}

/* The header page's checksum: all BG_PROV_HEADER bytes, the field that
 * holds it taken as 0 (a flipped byte in the unused tail is corrupt too). */
static uint64_t header_hash(const void *page)
{
	uint8_t buf[BG_PROV_HEADER];

	memcpy(buf, page, sizeof(buf));
	memset(buf + offsetof(struct hdr, header_hash), 0, sizeof(uint64_t));
	return sum_bytes(buf, sizeof(buf), SEED_HEADER);
}

static uint64_t class_seed(uint64_t seed, int cl, int name_kind, int allow)
{
	/* spread over the seed's bits: classes next to each other must not
	 * give seeds that differ in one low bit only */
	return seed + (uint64_t)((cl << 4) | (name_kind << 1) | !!allow) *
			      0x9e3779b97f4a7c15ULL;
}

static uint64_t hash4(uint64_t seed, const struct bg_key4 *k, int allow)
{
	return bg_hash64(k, sizeof(*k), class_seed(seed, CL_V4, 0, allow));
}

static uint64_t hash6(uint64_t seed, const struct bg_key6 *k, int allow)
{
	return bg_hash64(k, sizeof(*k), class_seed(seed, CL_V6, 0, allow));
}

static uint64_t hash_name(uint64_t seed, const char *name, size_t len,
			  int kind, int allow)
{
	return bg_hash64(name, (__u32)len, class_seed(seed, CL_NAME, kind, allow));
}

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

/* Pages of block sums (BG_PROV_BLOCK bytes of them each) of nblocks. */
static uint64_t sum_pages(uint64_t nblocks)
{
	return (nblocks * 8 + BG_PROV_BLOCK - 1) / BG_PROV_BLOCK;
}

/*
 * Reads and checks a header: magic, version, its checksum, the layout it
 * describes, and that the file has exactly the size it says. 0, or -errno
 * with why: -EBADMSG (corrupt, truncated, not an index), -EPROTO.
 */
static int check_header(const void *page, uint64_t size, char *why,
			size_t wl)
{
	const struct hdr *h = page;
	uint64_t data, nblocks;

	if (size < BG_PROV_HEADER) {
		snprintf(why, wl, "truncated: %llu bytes, shorter than its header",
			 (unsigned long long)size);
		return -EBADMSG;
	}
	if (memcmp(h->magic, MAGIC, sizeof(MAGIC))) {
		snprintf(why, wl, "not a provenance index (no magic)");
		return -EBADMSG;
	}
	/* the checksum before the version: a flipped bit in the version is
	 * corruption, and a newer version's header is not summed our way */
	if (header_hash(page) != h->header_hash) {
		if (h->version != BG_PROV_VERSION)
			snprintf(why, wl, "corrupt: its header's checksum does not "
				 "match (or version %u, which this bloomgate does "
				 "not read)", h->version);
		else
			snprintf(why, wl, "corrupt: its header's checksum does not match");
		return h->version != BG_PROV_VERSION ? -EPROTO : -EBADMSG;
	}
	if (h->version != BG_PROV_VERSION) {
		snprintf(why, wl, "version %u, this bloomgate reads %d",
			 h->version, BG_PROV_VERSION);
		return -EPROTO;
	}
	/* a sound checksum over a layout this build did not write: refused
	 * all the same, before any offset is used */
	if (h->header_size != BG_PROV_HEADER || h->record_size != BG_PROV_RECORD ||
	    h->block_size != BG_PROV_BLOCK || h->line_step != BG_PROV_LINE_STEP ||
	    h->count > (UINT64_MAX >> 8) / BG_PROV_RECORD ||
	    h->nlines > (UINT64_MAX >> 8) / 8 ||
	    h->lines_off != BG_PROV_HEADER + h->count * BG_PROV_RECORD ||
	    h->sums_off != h->lines_off + h->nlines * 8) {
		snprintf(why, wl, "corrupt: its layout is not one this bloomgate writes");
		return -EBADMSG;
	}
	data = h->sums_off - BG_PROV_HEADER;
	nblocks = (data + BG_PROV_BLOCK - 1) / BG_PROV_BLOCK;
	if (h->nblocks != nblocks || h->npages != sum_pages(nblocks) ||
	    h->file_size != h->sums_off + (nblocks + h->npages) * 8 ||
	    (h->count && h->nlines != h->max_line / BG_PROV_LINE_STEP + 1)) {
		snprintf(why, wl, "corrupt: its layout is not one this bloomgate writes");
		return -EBADMSG;
	}
	if (size != h->file_size) {
		snprintf(why, wl, "%s: %llu bytes, its header says %llu",
			 size < h->file_size ? "truncated" : "corrupt",
			 (unsigned long long)size,
			 (unsigned long long)h->file_size);
		return -EBADMSG;
	}
	return 0;
}

/* ---- Writing ----------------------------------------------------------- */

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

static void wsrc_free(struct wsrc *ws)
{
	if (ws->rec)
		munmap(ws->rec, ws->cap * BG_PROV_RECORD);
	free(ws->lines);
	ws->rec = NULL;
	ws->lines = NULL;
	ws->n = ws->cap = ws->nlines = 0;
}

static void writer_free(struct bg_prov_writer *w)
{
	size_t i, k;

	if (!w)
		return;
	for (k = 0; k < BG_PARSE_WORKERS_MAX; k++) {
		if (!w->wk[k])
			continue;
		for (i = 0; i < w->n; i++)
			wsrc_free(&w->wk[k]->src[i]);
		free(w->wk[k]->src);
		free(w->wk[k]);
	}
	for (i = 0; w->src && i < w->n; i++) {
		bg_list_desc_free(&w->src[i].list);
		free(w->src[i].origin);
		free(w->src[i].copy);
	}
	free(w->src);
	free(w->dir);
	free(w);
}

/* Reads the header of the index at path: 0 when it is sound (and its
 * size right), else -errno. */
static int read_header(const char *path, struct hdr *h)
{
	uint8_t buf[BG_PROV_HEADER] __attribute__((aligned(8)));
	char why[128];
	struct stat st;
	ssize_t k;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	k = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	if (k != (ssize_t)sizeof(buf))
		return -EBADMSG;
	memcpy(h, buf, sizeof(*h));
	return check_header(buf, (uint64_t)st.st_size, why, sizeof(why));
}

/* Whether source s's index on disk already is the one this rebuild would
 * write: a sound header for the same copy, parsed the same way. */
static int index_current(struct bg_prov_writer *w, struct psrc *s)
{
	char path[PATH_MAX], sha[65];
	struct hdr h;

	if (!s->sha[0] ||
	    bg_store_index_path(w->dir, s->list.name, path, sizeof(path)) ||
	    read_header(path, &h))
		return 0;
	bg_hex(h.copy_sha, 32, sha);
	if (strcmp(sha, s->sha) || h.format != s->list.format ||
	    h.subdomains != s->list.subdomains || h.allow != s->list.allow ||
	    h.allow_wide != s->list.allow_wide || strncmp(h.name, s->list.name, sizeof(h.name)) ||
	    strncmp(h.copy, s->copy, sizeof(h.copy)))
		return 0;
	s->checksum = h.header_hash;
	s->count = h.count;
	s->bytes = h.file_size;
	return 1;
}

int bg_prov_begin(const char *state_dir, const struct bg_prov_source *v,
		  size_t n, struct bg_prov_writer **wp)
{
	struct bg_prov_writer *w;
	char probe[PATH_MAX];
	const char *origin;
	size_t i;
	int ret = -ENOMEM;

	*wp = NULL;
	if (!state_dir || !n)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->n = n;
	w->dir = strdup(state_dir);
	w->src = calloc(n, sizeof(*w->src));
	if (!w->dir || !w->src)
		goto err;
	if (snprintf(w->idir, sizeof(w->idir), "%s/" BG_STORE_INDEX_DIR,
		     state_dir) >= (int)sizeof(w->idir)) {
		ret = -ENAMETOOLONG;
		goto err;
	}
	for (i = 0; i < n; i++) {
		struct psrc *s = &w->src[i];

		ret = bg_store_index_path(state_dir, v[i].list.name, probe, sizeof(probe));
		if (ret)
			goto err;
		ret = -EINVAL;
		if (!v[i].copy || strlen(v[i].copy) >= sizeof(((struct hdr *)0)->copy) ||
		    (v[i].sha256 && strlen(v[i].sha256) != 64))
			goto err;
		ret = -ENOMEM;
		origin = bg_list_origin(&v[i].list);
		s->origin = strdup(origin ? origin : v[i].copy);
		s->copy = strdup(v[i].copy);
		if (bg_list_desc_dup(&s->list, &v[i].list) || !s->origin || !s->copy)
			goto err;
		if (v[i].sha256)
			snprintf(s->sha, sizeof(s->sha), "%s", v[i].sha256);
		s->list.subdomains = !!s->list.subdomains;
		s->list.allow = !!s->list.allow;
		s->list.allow_wide = !!s->list.allow_wide;
		/* the file parsed now: the copy itself, or a candidate that
		 * is renamed to it before the commit (the same inode) */
		s->have_st = stat(v[i].parsed ? v[i].parsed : s->copy, &s->st) == 0;
		s->changed = v[i].force || !index_current(w, s);
	}
	if (mkdir(w->idir, 0700) < 0 && errno != EEXIST) {
		ret = -errno;
		goto err;
	}
	*wp = w;
	return 0;
err:
	writer_free(w);
	return ret;
}

int bg_prov_changed(const struct bg_prov_writer *w, size_t i)
{
	return w && i < w->n && w->src[i].changed;
}

static int grow_records(struct wsrc *ws)
{
	size_t cap = ws->cap ? ws->cap * 2 : REC_INIT;
	void *p;

	/* mremap moves the pages, it does not copy them: growing a 1 GB
	 * buffer costs no second gigabyte */
	p = ws->rec ? mremap(ws->rec, ws->cap * BG_PROV_RECORD,
			     cap * BG_PROV_RECORD, MREMAP_MAYMOVE)
		    : mmap(NULL, cap * BG_PROV_RECORD, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	/* huge pages: a fault per 2 MiB, not per 4 KiB (kept by mremap) */
	if (!ws->rec)
		madvise(p, cap * BG_PROV_RECORD, MADV_HUGEPAGE);
	ws->rec = p;
	ws->cap = cap;
	return 0;
}

static int grow_lines(struct wsrc *ws, size_t step)
{
	size_t nl = ws->nlines, i;

	if (bg_grow(&ws->lines, &nl, step + 1, sizeof(*ws->lines), 256))
		return -ENOMEM;
	for (i = ws->nlines; i < nl; i++)
		ws->lines[i] = LINE_NONE;
	ws->nlines = nl;
	return 0;
}

void bg_prov_entry(void *ctx, unsigned int worker, const struct bg_entry_ref *e)
{
	struct bg_prov_writer *w = ctx;
	struct worker *k;
	struct wsrc *ws;
	uint64_t h, word;
	size_t step;
	unsigned int in_step;
	int a = !!e->allow;
	uint8_t *r;
	uint32_t line;

	if (worker >= BG_PARSE_WORKERS_MAX || e->source >= w->n) {
		__atomic_store_n(&w->bad_call, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!w->src[e->source].changed)
		return; /* its index already records this copy */
	k = w->wk[worker];
	if (!k) {
		/* this worker's first entry: only it writes its slot */
		k = calloc(1, sizeof(*k));
		if (k && !(k->src = calloc(w->n, sizeof(*k->src)))) {
			free(k);
			k = NULL;
		}
		if (!k) {
			__atomic_store_n(&w->bad_call, -ENOMEM, __ATOMIC_RELAXED);
			return;
		}
		w->wk[worker] = k;
	}
	ws = &k->src[e->source];
	if (ws->err)
		return;
	if (!e->line || e->line > UINT32_MAX || e->line_off >= OFF_MASK) {
		ws->err = -EOVERFLOW; /* past what a record or a word holds */
		return;
	}
	switch (e->kind) {
	case BG_KEY_IPV4: {
		const struct bg_key4 *k4 = e->key;
		struct bg_key4 m;

		if (k4->plen > 32)
			goto bad;
		/* as the filter holds it: masked, padding zero */
		bg_key4_init(&m, k4->addr, k4->plen);
		h = hash4(KEY_SEED, &m, a);
		ws->plens4[a] |= 1ULL << m.plen;
		break;
	}
	case BG_KEY_IPV6: {
		const struct bg_key6 *k6 = e->key;
		struct bg_key6 m;

		if (k6->plen > 128)
			goto bad;
		bg_key6_init(&m, k6->addr, k6->plen);
		h = hash6(KEY_SEED, &m, a);
		ws->plens6[a][m.plen / 64] |= 1ULL << (m.plen % 64);
		break;
	}
	case BG_ENTRY_NAME: {
		size_t len = strnlen(e->key, 256);

		if (!len || len > 253 || e->name_kind < BG_NAME_EXACT ||
		    e->name_kind > BG_NAME_SUBS)
			goto bad;
		h = hash_name(KEY_SEED, e->key, len, e->name_kind, a);
		ws->kinds |= 1u << (e->name_kind * 2 + a);
		break;
	}
	default:
		goto bad;
	}
	if (ws->n == ws->cap && grow_records(ws)) {
		ws->err = -ENOMEM;
		return;
	}
	line = (uint32_t)e->line;
	r = ws->rec + ws->n++ * BG_PROV_RECORD;
	memcpy(r, &h, 8);
	memcpy(r + 8, &line, 4);
	/* the first entry line of each step: where quoting a line starts */
	step = line / BG_PROV_LINE_STEP;
	in_step = line % BG_PROV_LINE_STEP;
	if (step >= ws->nlines && grow_lines(ws, step)) {
		ws->err = -ENOMEM;
		return;
	}
	word = e->line_off | (uint64_t)in_step << OFF_BITS;
	if (ws->lines[step] == LINE_NONE || in_step < ws->lines[step] >> OFF_BITS)
		ws->lines[step] = word;
	if (line > ws->max_line)
		ws->max_line = line;
	return;
bad:
	ws->err = -EINVAL; /* not an entry io.h describes */
}

/* ---- Sorting ----------------------------------------------------------- */

/* Byte d of a record's sort key: the hash's 8 bytes from the top, then
 * the line's 4 (equal keys in line order). */
static inline unsigned int digit(const uint8_t *r, unsigned int d)
{
	if (d < 8)
		return (unsigned int)(rec_hash(r) >> (56 - 8 * d)) & 0xff;
	return (rec_line(r) >> (24 - 8 * (d - 8))) & 0xff;
}

static inline int rec_less(const uint8_t *a, const uint8_t *b)
{
	uint64_t x = rec_hash(a), y = rec_hash(b);

	return x < y || (x == y && rec_line(a) < rec_line(b));
}

static void insertion_sort(uint8_t *p, size_t n)
{
	uint8_t t[BG_PROV_RECORD];
	size_t i, j;

	for (i = 1; i < n; i++) {
		memcpy(t, p + i * BG_PROV_RECORD, BG_PROV_RECORD);
		for (j = i; j > 0 && rec_less(t, p + (j - 1) * BG_PROV_RECORD); j--)
			memcpy(p + j * BG_PROV_RECORD, p + (j - 1) * BG_PROV_RECORD,
			       BG_PROV_RECORD);
		memcpy(p + j * BG_PROV_RECORD, t, BG_PROV_RECORD);
	}
}

/*
 * In place, by key byte d on (MSD radix, "American flag" sort): no second
 * buffer, so the sort needs no memory beyond the index's. A bucket of the
 * first pass (the top byte) holds n / 256 records, 4.5 MiB at 100M: its
 * permutations work in the cache, a level takes n / 256 more off.
 */
static void sort_records(uint8_t *p, size_t n, unsigned int d)
{
	size_t cnt[256] = { 0 }, start[256], next[256], s = 0, i;
	unsigned int b;

	for (; d < 12; d++) {
		if (n <= 24) {
			insertion_sort(p, n);
			return;
		}
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[digit(p + i * BG_PROV_RECORD, d)]++;
		if (cnt[digit(p, d)] != n)
			break;
		/* one value of this byte throughout: on to the next */
	}
	if (d >= 12)
		return; /* all keys equal */
	for (b = 0; b < 256; b++) {
		start[b] = next[b] = s;
		s += cnt[b];
	}
	for (b = 0; b < 256; b++) {
		size_t end = start[b] + cnt[b];

		while (next[b] < end) {
			uint8_t *x = p + next[b] * BG_PROV_RECORD, t[BG_PROV_RECORD];
			unsigned int c = digit(x, d);

			if (c == b) {
				next[b]++;
				continue;
			}
			/* x to its bucket; what was there comes to x */
			memcpy(t, x, BG_PROV_RECORD);
			memcpy(x, p + next[c] * BG_PROV_RECORD, BG_PROV_RECORD);
			memcpy(p + next[c] * BG_PROV_RECORD, t, BG_PROV_RECORD);
			next[c]++;
		}
	}
	for (b = 0; b < 256; b++)
		if (cnt[b] > 1)
			sort_records(p + start[b] * BG_PROV_RECORD, cnt[b], d + 1);
}

/*
 * The scatter's fan-out: the top byte. 65536 buckets (two bytes) put
 * each record's write on another cache line and page of a 1.2 GB buffer
 * at 100M entries: the scatter took 3.4 s there, 1.6 s with 256 (whose
 * write heads stay in L1), the whole commit 6.4 s against 5.0 s; alike at
 * 10M. The buckets' in-place sort takes the other bytes.
 */
#define TOP_BITS 8
/* Bytes of an entry buffer scattered between two releases of its pages. */
#define RELEASE_EVERY (16u << 20)

/*
 * The records of every worker of source i into dst (count of them),
 * sorted: a scatter by the hash's top TOP_BITS, each buffer read in order
 * and its pages given back as the scatter passes them, then each bucket
 * sorted in place. Peak memory: the index once, plus a buffer's
 * RELEASE_EVERY.
 */
static int scatter_sort(struct bg_prov_writer *w, size_t i, uint8_t *dst,
			size_t count)
{
	const unsigned int top = TOP_BITS, nb = 1u << top;
	size_t *pos = calloc(nb + 1, sizeof(*pos)), k, j, b, s = 0;

	if (!pos)
		return -ENOMEM;
	for (k = 0; k < BG_PARSE_WORKERS_MAX; k++) {
		struct wsrc *ws = w->wk[k] ? &w->wk[k]->src[i] : NULL;

		for (j = 0; ws && j < ws->n; j++)
			pos[rec_hash(ws->rec + j * BG_PROV_RECORD) >> (64 - top)]++;
	}
	for (b = 0; b < nb; b++) {
		size_t c = pos[b];

		pos[b] = s;
		s += c;
	}
	pos[nb] = s;
	if (s != count) {
		free(pos);
		return -EIO; /* cannot be: counted twice from the same buffers */
	}
	for (k = 0; k < BG_PARSE_WORKERS_MAX; k++) {
		struct wsrc *ws = w->wk[k] ? &w->wk[k]->src[i] : NULL;
		size_t released = 0;

		for (j = 0; ws && j < ws->n; j++) {
			const uint8_t *r = ws->rec + j * BG_PROV_RECORD;

			memcpy(dst + pos[rec_hash(r) >> (64 - top)]++ * BG_PROV_RECORD, r,
			       BG_PROV_RECORD);
			if ((j + 1) * BG_PROV_RECORD - released >= RELEASE_EVERY) {
				madvise(ws->rec + released, RELEASE_EVERY,
					MADV_DONTNEED);
				released += RELEASE_EVERY;
			}
		}
		if (ws && ws->rec) {
			munmap(ws->rec, ws->cap * BG_PROV_RECORD);
			ws->rec = NULL;
			ws->n = ws->cap = 0;
		}
	}
	/* pos[b] is now the end of bucket b, the start of b + 1 */
	for (b = 0, s = 0; b < nb; s = pos[b], b++)
		if (pos[b] - s > 1)
			sort_records(dst + s * BG_PROV_RECORD, pos[b] - s, top / 8);
	free(pos);
	return 0;
}

/* ---- Committing -------------------------------------------------------- */


/* All of [p, p + n) to fd: 0 or -errno (-ENOSPC: the disk is full). */
static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Bytes written between two releases of the sorted buffer's pages: a
 * multiple of a huge page. */
#define WRITE_CHUNK (8u << 20)

/* Temporary files of source name a writer killed on the way left
 * (".NAME.idx.XXXXXX"): there is one writer, so none is being written. */
static void clean_temps(const char *idir, const char *name)
{
	char pfx[BG_STORE_NAME_MAX + 16];
	struct dirent *d;
	DIR *dp = opendir(idir);
	size_t n;

	if (!dp)
		return;
	n = (size_t)snprintf(pfx, sizeof(pfx), ".%s" BG_STORE_INDEX_EXT ".", name);
	while ((d = readdir(dp)))
		if (!strncmp(d->d_name, pfx, n))
			unlinkat(dirfd(dp), d->d_name, 0);
	closedir(dp);
}

/* What a commit wrote for one source. */
struct written {
	uint64_t checksum, count, bytes;
	char sha[65];
};

static int write_index(struct bg_prov_writer *w, size_t i, struct written *out)
{
	struct psrc *s = &w->src[i];
	char tmp[PATH_MAX], path[PATH_MAX];
	uint64_t count = 0, max_line = 0, nlines, data, nblocks, size, b;
	uint8_t page[BG_PROV_HEADER] __attribute__((aligned(8)));
	uint64_t *sums = NULL;
	struct hdr h;
	uint8_t *map = NULL;
	struct stat st;
	size_t k, j;
	int fd = -1, ret, made = 0;

	memset(&h, 0, sizeof(h));
	for (k = 0; k < BG_PARSE_WORKERS_MAX; k++) {
		struct wsrc *ws = w->wk[k] ? &w->wk[k]->src[i] : NULL;

		if (!ws)
			continue;
		if (ws->err)
			return ws->err;
		count += ws->n;
		if (ws->max_line > max_line)
			max_line = ws->max_line;
		h.plens4[0] |= ws->plens4[0];
		h.plens4[1] |= ws->plens4[1];
		for (j = 0; j < 3; j++) {
			h.plens6[0][j] |= ws->plens6[0][j];
			h.plens6[1][j] |= ws->plens6[1][j];
		}
		h.name_kinds |= ws->kinds;
	}
	/* the entries are of the copy that was parsed: gone when it was
	 * replaced since (a fetch renames a new one in) */
	if (!s->have_st || stat(s->copy, &st) < 0)
		return -ENOENT;
	if (st.st_ino != s->st.st_ino || st.st_dev != s->st.st_dev ||
	    st.st_size != s->st.st_size ||
	    st.st_mtim.tv_sec != s->st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != s->st.st_mtim.tv_nsec)
		return -ESTALE;
	if (!s->sha[0] && (ret = bg_sha256_file(s->copy, s->sha)))
		return ret;
	if (strlen(s->sha) != 64 || bg_unhex(s->sha, 32, h.copy_sha))
		return -EINVAL;

	nlines = count ? max_line / BG_PROV_LINE_STEP + 1 : 0;
	memcpy(h.magic, MAGIC, sizeof(MAGIC));
	h.version = BG_PROV_VERSION;
	h.header_size = BG_PROV_HEADER;
	h.record_size = BG_PROV_RECORD;
	h.block_size = BG_PROV_BLOCK;
	h.line_step = BG_PROV_LINE_STEP;
	h.count = count;
	h.lines_off = BG_PROV_HEADER + count * BG_PROV_RECORD;
	h.nlines = nlines;
	h.sums_off = h.lines_off + nlines * 8;
	data = h.sums_off - BG_PROV_HEADER;
	nblocks = (data + BG_PROV_BLOCK - 1) / BG_PROV_BLOCK;
	h.nblocks = nblocks;
	h.npages = sum_pages(nblocks);
	h.file_size = size = h.sums_off + (nblocks + h.npages) * 8;
	h.seed = KEY_SEED;
	h.copy_size = (uint64_t)st.st_size;
	h.max_line = max_line;
	h.format = s->list.format;
	h.subdomains = s->list.subdomains;
	h.allow = s->list.allow;
	h.allow_wide = s->list.allow_wide;
	snprintf(h.name, sizeof(h.name), "%s", s->list.name);
	snprintf(h.copy, sizeof(h.copy), "%s", s->copy);

	ret = bg_store_index_path(w->dir, s->list.name, path, sizeof(path));
	if (ret)
		return ret;
	if (snprintf(tmp, sizeof(tmp), "%s/.%s" BG_STORE_INDEX_EXT ".XXXXXX",
		     w->idir, s->list.name) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/*
	 * Records and lines are put together in anonymous memory, then
	 * written out: sorting in a mapping of the file itself took a page
	 * fault per 4 KiB (ext4's page_mkwrite, some 5-9 us each), more than
	 * the sort. The entry buffers are freed as the scatter reads them and
	 * this buffer as it is written, so the writer holds about one index's
	 * worth at any time. Not on huge pages (the entry buffers are): the
	 * scatter's 256 write heads would touch every 2 MiB page of it at
	 * once, and the writer would hold the index twice.
	 */
	if (data) {
		map = mmap(NULL, data, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED)
			return -ENOMEM;
		madvise(map, data, MADV_NOHUGEPAGE);
	}
	/* the block sums, then the sums of their pages: a reader checks the
	 * short second table when it opens the file, a page of the first
	 * when it first needs one (a 100M-entry index has 2.3 MB of them) */
	sums = malloc((nblocks + h.npages) * 8 + 8);
	if (!sums) {
		ret = -ENOMEM;
		goto err;
	}
	ret = scatter_sort(w, i, map, count);
	if (ret)
		goto err;
	for (b = 0; b < nlines; b++) {
		uint64_t word = LINE_NONE;

		for (k = 0; k < BG_PARSE_WORKERS_MAX; k++) {
			struct wsrc *ws = w->wk[k] ? &w->wk[k]->src[i] : NULL;

			/* two workers meeting in one step: the earlier line */
			if (ws && b < ws->nlines && ws->lines[b] != LINE_NONE &&
			    (word == LINE_NONE ||
			     ws->lines[b] >> OFF_BITS < word >> OFF_BITS))
				word = ws->lines[b];
		}
		memcpy(map + count * BG_PROV_RECORD + b * 8, &word, 8);
	}
	for (b = 0; b < nblocks; b++) {
		uint64_t len = data - b * BG_PROV_BLOCK < BG_PROV_BLOCK ?
				       data - b * BG_PROV_BLOCK : BG_PROV_BLOCK;

		sums[b] = sum_bytes(map + b * BG_PROV_BLOCK, len, SEED_BLOCK + b);
	}
	for (b = 0; b < h.npages; b++) {
		uint64_t len = nblocks * 8 - b * BG_PROV_BLOCK < BG_PROV_BLOCK ?
				       nblocks * 8 - b * BG_PROV_BLOCK : BG_PROV_BLOCK;

		sums[nblocks + b] = sum_bytes((uint8_t *)sums + b * BG_PROV_BLOCK, len,
					      SEED_SUMS + b);
	}
	h.sums_hash = sum_bytes(sums + nblocks, h.npages * 8, SEED_SUMS);
	memset(page, 0, sizeof(page));
	memcpy(page, &h, sizeof(h));
	h.header_hash = header_hash(page);
	memcpy(page + offsetof(struct hdr, header_hash), &h.header_hash,
	       sizeof(h.header_hash));

	/* the file in the order a reader checks it: header, records and
	 * lines, sums; durable before it takes the index's name */
	clean_temps(w->idir, s->list.name);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto err;
	}
	made = 1;
	ret = write_all(fd, page, sizeof(page));
	for (b = 0; !ret && b < data; b += WRITE_CHUNK) {
		uint64_t len = data - b < WRITE_CHUNK ? data - b : WRITE_CHUNK;

		ret = write_all(fd, map + b, len);
		if (len == WRITE_CHUNK)
			madvise(map + b, len, MADV_DONTNEED); /* in the page cache now */
	}
	if (!ret)
		ret = write_all(fd, (const uint8_t *)sums, (nblocks + h.npages) * 8);
	if (ret)
		goto err;
	if (fsync(fd) < 0) {
		ret = -errno;
		goto err;
	}
	close(fd);
	fd = -1;
	if (rename(tmp, path) < 0) {
		ret = -errno;
		goto err;
	}
	free(sums);
	if (map)
		munmap(map, data);
	ret = bg_fsync_dir(w->idir);
	if (ret)
		return ret; /* renamed: it is the index now, durable or not */
	out->checksum = h.header_hash;
	out->count = count;
	out->bytes = size;
	snprintf(out->sha, sizeof(out->sha), "%s", s->sha);
	return 0;
err:
	free(sums);
	if (map)
		munmap(map, data);
	if (fd >= 0)
		close(fd);
	if (made)
		unlink(tmp);
	return ret;
}

int bg_prov_commit(struct bg_prov_writer *w, struct bg_store *store)
{
	int first = 0, written = 0, ret;
	size_t i, k;

	if (!w)
		return -EINVAL;
	if (w->bad_call)
		first = w->bad_call < 0 ? w->bad_call : -EINVAL;
	for (i = 0; i < w->n; i++) {
		struct psrc *s = &w->src[i];
		struct written o = { 0 };

		if (s->err) {
			ret = s->err;
		} else if (!s->changed) {
			o.checksum = s->checksum;
			o.count = s->count;
			o.bytes = s->bytes;
			snprintf(o.sha, sizeof(o.sha), "%s", s->sha);
			ret = 0;
		} else if (w->bad_call) {
			ret = first; /* entries were lost: not a whole index */
		} else {
			ret = write_index(w, i, &o);
			written += !ret;
		}
		/* its buffers go as soon as it is done with, before the next
		 * source's index is written */
		for (k = 0; k < BG_PARSE_WORKERS_MAX; k++)
			if (w->wk[k])
				wsrc_free(&w->wk[k]->src[i]);
		if (!ret && store) {
			struct bg_store_index ix = {
				.origin = s->origin, .format = s->list.format,
				.sha256 = o.sha, .checksum = o.checksum,
				.entries = o.count, .bytes = o.bytes,
			};

			ret = bg_store_index_set(store, s->list.name, &ix);
		}
		if (ret && !first)
			first = ret;
	}
	writer_free(w);
	return first ? first : written;
}

void bg_prov_abort(struct bg_prov_writer *w)
{
	writer_free(w);
}

static void quiet(void *ctx, const struct bg_diag *d)
{
	(void)ctx;
	(void)d; /* the rebuild's parse reported them */
}

int bg_prov_reindex(struct bg_store *store, const struct bg_prov_source *v,
		    size_t n, uint64_t max_list_bytes)
{
	struct bg_prov_writer *w;
	size_t i;
	int ret;

	if (!store)
		return -EINVAL;
	if (!n)
		return 0;
	ret = bg_prov_begin(bg_store_dir(store), v, n, &w);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		/* read as the writer records it (w->src: flags 0 or 1) */
		struct bg_source src = { .path = (char *)v[i].copy,
					 .list = w->src[i].list };
		struct bg_list_opts lo = {
			.diag = quiet, .entry = bg_prov_entry, .entry_ctx = w,
			.source = i,
			.max_bytes = max_list_bytes ? max_list_bytes
						    : BG_LIST_BYTES_MAX,
		};
		struct bg_blocklist bl;

		if (!w->src[i].changed)
			continue;
		/* one source at a time: its parsed lists are dropped before
		 * the next is read, only the entry buffers stay */
		bg_blocklist_init(&bl);
		w->src[i].err = bg_source_parse(&src, &bl, &lo, NULL);
		bg_blocklist_free(&bl);
	}
	return bg_prov_commit(w, store);
}

/* ---- Reading ----------------------------------------------------------- */

/* One source as check reads it. */
struct rsrc {
	char name[BG_STORE_NAME_MAX];
	char origin[1024];
	int usable;
	char why[320]; /* !usable: the problem */
	/* the index, mapped */
	int fd;
	const uint8_t *map;
	size_t len;
	const struct hdr *h;
	uint8_t *checked; /* a bit per block: its sum matched */
	uint8_t *pages_checked; /* a bit per page of block sums */
	int copy_fd; /* the copy, for quoting lines */
};

struct bg_prov_reader {
	struct rsrc *v;
	size_t n;
};

static void rsrc_close(struct rsrc *s)
{
	if (s->map)
		munmap((void *)s->map, s->len);
	if (s->fd >= 0)
		close(s->fd);
	if (s->copy_fd >= 0)
		close(s->copy_fd);
	free(s->checked);
	free(s->pages_checked);
	s->map = NULL;
	s->h = NULL;
	s->checked = NULL;
	s->pages_checked = NULL;
	s->fd = s->copy_fd = -1;
}

/* Block b's sum, once: 0, or -EBADMSG with the source made a problem. */
static int block_ok(struct rsrc *s, uint64_t b)
{
	const struct hdr *h = s->h;
	uint64_t data = h->sums_off - BG_PROV_HEADER, off, len, want;

	if (s->checked[b / 8] & (1u << (b % 8)))
		return 0;
	/* the page of sums holding b's, against the table the open checked */
	if (!(s->pages_checked[b / 512 / 8] & (1u << (b / 512 % 8)))) {
		uint64_t p = b / 512, plen = h->nblocks * 8 - p * BG_PROV_BLOCK;

		_Static_assert(BG_PROV_BLOCK / 8 == 512, "sums a page");
		memcpy(&want, s->map + h->sums_off + (h->nblocks + p) * 8, 8);
		if (plen > BG_PROV_BLOCK)
			plen = BG_PROV_BLOCK;
		if (sum_bytes(s->map + h->sums_off + p * BG_PROV_BLOCK, plen,
			      SEED_SUMS + p) != want) {
			s->usable = 0;
			snprintf(s->why, sizeof(s->why),
				 "corrupt index: its table of block checksums does "
				 "not match (page %llu)", (unsigned long long)p);
			return -EBADMSG;
		}
		s->pages_checked[p / 8] |= (uint8_t)(1u << (p % 8));
	}
	off = BG_PROV_HEADER + b * BG_PROV_BLOCK;
	len = data - b * BG_PROV_BLOCK < BG_PROV_BLOCK ? data - b * BG_PROV_BLOCK
						       : BG_PROV_BLOCK;
	memcpy(&want, s->map + h->sums_off + b * 8, 8);
	if (sum_bytes(s->map + off, len, SEED_BLOCK + b) != want) {
		s->usable = 0;
		snprintf(s->why, sizeof(s->why),
			 "corrupt index: block %llu (bytes %llu-%llu) does not match its checksum",
			 (unsigned long long)b, (unsigned long long)off,
			 (unsigned long long)(off + len - 1));
		return -EBADMSG;
	}
	s->checked[b / 8] |= (uint8_t)(1u << (b % 8));
	return 0;
}

/* The bytes [off, off + len) of the file, checked: a pointer, or NULL. */
static const uint8_t *at(struct rsrc *s, uint64_t off, uint64_t len)
{
	uint64_t b, last;

	if (off < BG_PROV_HEADER || off + len > s->h->sums_off)
		return NULL;
	last = (off + len - 1 - BG_PROV_HEADER) / BG_PROV_BLOCK;
	for (b = (off - BG_PROV_HEADER) / BG_PROV_BLOCK; b <= last; b++)
		if (block_ok(s, b))
			return NULL;
	return s->map + off;
}

/*
 * Maps the index of store row src and checks what can be checked without
 * reading it all (full: every block too): 0 when s is usable, else -errno
 * with s->why.
 */
static int rsrc_open(struct bg_store *store, const struct bg_store_source *src,
		     struct rsrc *s, int full)
{
	struct bg_store_source row = *src;
	char path[PATH_MAX], sha[65];
	struct stat st;
	int ret = 0, tries;

	memset(s, 0, sizeof(*s));
	s->fd = s->copy_fd = -1;
	snprintf(s->name, sizeof(s->name), "%s", src->name);
	if (!row.index_sha256[0]) {
		snprintf(s->why, sizeof(s->why), "not indexed yet");
		return -ENOENT;
	}
	ret = bg_store_index_path(bg_store_dir(store), src->name, path,
				  sizeof(path));
	if (ret) {
		snprintf(s->why, sizeof(s->why), "no index file can have this name");
		return ret;
	}
	/* The agent renames a new index in, then records it: a reader
	 * between the two sees a file the row it read does not name, and
	 * reads both again (twice at most: a commit takes longer). */
	for (tries = 0; tries < 3; tries++) {
		rsrc_close(s);
		if (tries && bg_store_source_get(store, src->name, &row))
			break;
		s->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (s->fd < 0) {
			ret = -errno;
			snprintf(s->why, sizeof(s->why), "index %s",
				 errno == ENOENT ? "missing" : strerror(errno));
			return ret;
		}
		if (fstat(s->fd, &st) < 0) {
			ret = -errno;
			snprintf(s->why, sizeof(s->why), "index: %s", strerror(errno));
			return ret;
		}
		if (st.st_size < BG_PROV_HEADER) {
			ret = check_header(NULL, (uint64_t)st.st_size, s->why,
					   sizeof(s->why));
			continue;
		}
		s->len = (size_t)st.st_size;
		s->map = mmap(NULL, s->len, PROT_READ, MAP_SHARED, s->fd, 0);
		if (s->map == MAP_FAILED) {
			s->map = NULL;
			ret = -errno;
			snprintf(s->why, sizeof(s->why), "index: %s", strerror(errno));
			return ret;
		}
		/* check reads a few pages where a search lands: without this,
		 * each fault on a cold file reads around it (8 MiB here, the
		 * disk's read_ahead_kb), some 6 ms a fault; verify reads it
		 * all, in order */
		madvise((void *)s->map, s->len, full ? MADV_SEQUENTIAL : MADV_RANDOM);
		s->h = (const struct hdr *)s->map;
		ret = check_header(s->h, (uint64_t)st.st_size, s->why,
				   sizeof(s->why));
		if (ret)
			continue;
		if (s->h->header_hash != row.index_checksum ||
		    strncmp(s->h->name, src->name, sizeof(s->h->name))) {
			ret = -ESTALE;
			snprintf(s->why, sizeof(s->why),
				 "index is not the one the store records (a commit "
				 "cut short?)");
			continue;
		}
		break;
	}
	if (ret) {
		char w[sizeof(s->why)];

		/* "corrupt: ..." as an index's problem */
		snprintf(w, sizeof(w), "%s", s->why);
		snprintf(s->why, sizeof(s->why), "%s%.300s",
			 ret == -ESTALE ? "" : "index ", w);
		rsrc_close(s);
		return ret;
	}
	snprintf(s->origin, sizeof(s->origin), "%s", row.origin);
	bg_hex(s->h->copy_sha, 32, sha);
	if (strcmp(sha, row.rec.sha256)) {
		snprintf(s->why, sizeof(s->why),
			 "index of another copy (SHA-256 %.12s..., the copy's is "
			 "%.12s...): it changed since it was indexed",
			 sha, row.rec.sha256[0] ? row.rec.sha256 : "unknown");
		rsrc_close(s);
		return -ESTALE;
	}
	s->checked = calloc(s->h->nblocks / 8 + 1, 1);
	s->pages_checked = calloc(s->h->npages / 8 + 1, 1);
	if (!s->checked || !s->pages_checked) {
		rsrc_close(s);
		snprintf(s->why, sizeof(s->why), "out of memory");
		return -ENOMEM;
	}
	if (sum_bytes(s->map + s->h->sums_off + s->h->nblocks * 8,
		      s->h->npages * 8, SEED_SUMS) != s->h->sums_hash) {
		snprintf(s->why, sizeof(s->why),
			 "corrupt index: its table of block checksums does not match");
		rsrc_close(s);
		return -EBADMSG;
	}
	if (full) {
		uint64_t b;

		s->usable = 1;
		for (b = 0; b < s->h->nblocks; b++)
			if (block_ok(s, b)) {
				rsrc_close(s);
				return -EBADMSG;
			}
	}
	s->copy_fd = open(s->h->copy, O_RDONLY | O_CLOEXEC);
	if (s->copy_fd < 0 || fstat(s->copy_fd, &st) < 0) {
		snprintf(s->why, sizeof(s->why), "its copy: %s", strerror(errno));
		ret = errno == ENOENT ? -ESTALE : -errno;
		rsrc_close(s);
		return ret;
	}
	/* a line is quoted from a few pages of the copy, not a read-ahead */
	posix_fadvise(s->copy_fd, 0, 0, POSIX_FADV_RANDOM);
	if ((uint64_t)st.st_size != s->h->copy_size) {
		snprintf(s->why, sizeof(s->why),
			 "the copy is %llu bytes, the index is of one of %llu: "
			 "it changed since it was indexed",
			 (unsigned long long)st.st_size,
			 (unsigned long long)s->h->copy_size);
		rsrc_close(s);
		return -ESTALE;
	}
	s->usable = 1;
	return 0;
}

int bg_prov_open(struct bg_store *store, struct bg_prov_reader **rp)
{
	struct bg_store_source *v;
	struct bg_prov_reader *r;
	size_t n, i;
	int ret;

	*rp = NULL;
	ret = bg_store_source_list(store, &v, &n);
	if (ret)
		return ret;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->v = calloc(n ? n : 1, sizeof(*r->v)))) {
		free(r);
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		/* a source never fetched has nothing to name: not a problem */
		if (!v[i].rec.sha256[0] && !v[i].index_sha256[0])
			continue;
		ret = rsrc_open(store, &v[i], &r->v[r->n++], 0);
		if (ret == -ENOMEM) {
			free(v);
			bg_prov_close(r);
			return ret;
		}
	}
	free(v);
	*rp = r;
	return 0;
}

void bg_prov_close(struct bg_prov_reader *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		rsrc_close(&r->v[i]);
	free(r->v);
	free(r);
}

int bg_prov_problem(const struct bg_prov_reader *r, size_t i,
		    const char **source, const char **why)
{
	size_t k;

	for (k = 0; r && k < r->n; k++) {
		if (r->v[k].usable)
			continue;
		if (i-- == 0) {
			*source = r->v[k].name;
			*why = r->v[k].why;
			return 1;
		}
	}
	return 0;
}

int bg_prov_verify(struct bg_store *store, int drop, struct bg_prov_bad **badp,
		   size_t *np)
{
	struct bg_store_source *v;
	struct bg_prov_bad *bad;
	size_t n, i, nb = 0;
	int ret;

	*badp = NULL;
	*np = 0;
	ret = bg_store_source_list(store, &v, &n);
	if (ret)
		return ret;
	bad = calloc(n ? n : 1, sizeof(*bad));
	if (!bad) {
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct rsrc s;
		char path[PATH_MAX];

		if (!v[i].rec.sha256[0] && !v[i].index_sha256[0])
			continue;
		ret = rsrc_open(store, &v[i], &s, 1);
		rsrc_close(&s);
		if (!ret)
			continue;
		if (ret == -ENOMEM) {
			free(bad);
			free(v);
			return ret;
		}
		snprintf(bad[nb].name, sizeof(bad[nb].name), "%s", v[i].name);
		snprintf(bad[nb].why, sizeof(bad[nb].why), "%s", s.why);
		bad[nb++].err = ret;
		if (drop && !bg_store_index_path(bg_store_dir(store), v[i].name,
						 path, sizeof(path))) {
			/* the record first: a crash in between leaves a
			 * record of no file, which reads as missing */
			bg_store_index_set(store, v[i].name, NULL);
			unlink(path);
		}
	}
	free(v);
	*badp = bad;
	*np = nb;
	return 0;
}

/* ---- Finding ----------------------------------------------------------- */

struct hits {
	struct bg_explain_hit *v;
	size_t n, cap;
	int err;
};

static struct bg_explain_hit *new_hit(struct hits *h)
{
	struct bg_explain_hit *nv;

	if (bg_grow(&h->v, &h->cap, h->n + 1, sizeof(*h->v), 8)) {
		h->err = -ENOMEM;
		return NULL;
	}
	nv = &h->v[h->n++];
	memset(nv, 0, sizeof(*nv));
	return nv;
}

/*
 * The line's text as check quotes it: [s, e) without surrounding blanks,
 * cut to BG_EXPLAIN_TEXT_MAX bytes on a UTF-8 boundary with "..." after
 * (out: BG_EXPLAIN_TEXT_MAX + 4 bytes).
 */
static void line_text(const char *s, const char *e, char *out)
{
	size_t n;

	while (s < e && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	n = (size_t)(e - s);
	if (n <= BG_EXPLAIN_TEXT_MAX) {
		memcpy(out, s, n);
		out[n] = '\0';
		return;
	}
	n = BG_EXPLAIN_TEXT_MAX;
	/* not inside a multi-byte character: back off continuation bytes */
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	memcpy(out, s, n);
	memcpy(out + n, "...", 4);
}

/* Bytes of a line read to quote it: a longer line is cut anyway. */
#define QUOTE_READ 4096
/* Bytes read at once while skipping the lines before it (a step's lines
 * are one read or two) */
#define QUOTE_SKIP 65536
_Static_assert(QUOTE_SKIP > QUOTE_READ, "the quote's read fits the skip's buffer");

/*
 * Line `line` of s's copy into out: from the lines word of its step, the
 * lines before it skipped. 0, or -EBADMSG (s made a problem) when the
 * index and the copy disagree.
 */
static int quote(struct rsrc *s, uint64_t line, char *out)
{
	const struct hdr *h = s->h;
	uint64_t step = line / BG_PROV_LINE_STEP, word, first, off;
	char buf[QUOTE_SKIP];
	const uint8_t *p;
	ssize_t k;

	if (step >= h->nlines || !(p = at(s, h->lines_off + step * 8, 8)))
		goto bad;
	memcpy(&word, p, 8);
	first = step * BG_PROV_LINE_STEP + (word >> OFF_BITS);
	off = word & OFF_MASK;
	if (word == LINE_NONE || first > line || off > h->copy_size)
		goto bad;
	/* the word must be a line's start: the copy lines up with the index */
	if (off > 0) {
		char c;

		if (pread(s->copy_fd, &c, 1, (off_t)off - 1) != 1 ||
		    (c != '\n' && !(off == 3 && first == 1)))
			goto bad;
	}
	/* the lines before it skipped in big reads: one read, not one a line */
	while (first < line) {
		char *q, *end, *nl;

		k = pread(s->copy_fd, buf, sizeof(buf) - 1, (off_t)off);
		if (k <= 0)
			goto bad; /* the line is past the copy's end */
		q = buf;
		end = buf + k;
		while (first < line && (nl = memchr(q, '\n', (size_t)(end - q)))) {
			q = nl + 1;
			first++;
		}
		/* no end of line in it: all of it inside one long line */
		off += q == buf ? (uint64_t)k : (uint64_t)(q - buf);
		if (first == line && (nl = memchr(q, '\n', (size_t)(end - q)))) {
			line_text(q, nl, out); /* the line itself in this read */
			return 0;
		}
	}
	k = pread(s->copy_fd, buf, QUOTE_READ, (off_t)off);
	if (k < 0)
		goto bad;
	{
		char *nl = memchr(buf, '\n', (size_t)k);

		line_text(buf, nl ? nl : buf + k, out);
	}
	return 0;
bad:
	/* a block found corrupt on the way said so already */
	if (s->usable)
		snprintf(s->why, sizeof(s->why),
			 "index and copy disagree at line %llu (the copy changed, "
			 "or the index is corrupt)", (unsigned long long)line);
	s->usable = 0;
	return -EBADMSG;
}

static const uint8_t *rec_at(struct rsrc *s, uint64_t i)
{
	return at(s, BG_PROV_HEADER + i * BG_PROV_RECORD, BG_PROV_RECORD);
}

/*
 * The index of the first record of s with hash key, or count. The hashes
 * are uniform, so the place of key is guessed from its value between the
 * bounds' hashes (interpolation): two or three probes land on its page,
 * where halving would read some twenty pages of a 100M-entry index (each
 * a disk read when the index is not in the page cache). A guess that
 * does not halve the range (many equal hashes: one entry on many lines)
 * hands over to halving, so the worst case stays logarithmic.
 */
static int lower_bound(struct rsrc *s, uint64_t key, uint64_t *idx)
{
	uint64_t lo = 0, hi = s->h->count, klo = 0, khi = UINT64_MAX;
	int guesses = 0;

	/* [lo, hi]: where the first record >= key can be; klo, khi: hashes
	 * known below lo and at hi */
	while (lo < hi) {
		uint64_t mid, h;
		const uint8_t *r;

		if (guesses < 8 && key >= klo && key <= khi && khi > klo) {
			unsigned __int128 span = (unsigned __int128)(key - klo) * (hi - lo);

			mid = lo + (uint64_t)(span / ((unsigned __int128)(khi - klo) + 1));
			guesses++;
		} else {
			mid = lo + (hi - lo) / 2;
		}
		if (mid >= hi)
			mid = hi - 1;
		if (!(r = rec_at(s, mid)))
			return -EBADMSG;
		h = rec_hash(r);
		if (h < key) {
			lo = mid + 1;
			klo = h;
		} else {
			hi = mid;
			khi = h;
		}
	}
	*idx = lo;
	return 0;
}

/* What one probe looks for, and how its hits read. */
struct probe {
	uint64_t key;
	const char *entry, *parent;
	int allow, kind;
};

/* The hits of one probe in source s (first hit: s->hits0); a corrupt
 * index or copy drops every hit of s and makes it a problem. */
static void probe(struct rsrc *s, const struct probe *p, struct hits *h,
		  size_t hits0)
{
	uint64_t i;
	unsigned int found = 0;

	if (!s->usable || h->err)
		return;
	if (lower_bound(s, p->key, &i))
		goto bad;
	for (; i < s->h->count && found < BG_PROV_HITS_MAX; i++, found++) {
		const uint8_t *r = rec_at(s, i);
		struct bg_explain_hit *x;

		if (!r)
			goto bad;
		if (rec_hash(r) != p->key)
			break;
		if (!(x = new_hit(h)))
			return;
		snprintf(x->source, sizeof(x->source), "%s", s->name);
		snprintf(x->origin, sizeof(x->origin), "%s", s->origin);
		x->line = rec_line(r);
		x->allow = p->allow;
		x->kind = p->kind;
		snprintf(x->entry, sizeof(x->entry), "%s", p->entry);
		snprintf(x->parent, sizeof(x->parent), "%s", p->parent);
		if (quote(s, x->line, x->text))
			goto bad;
	}
	return;
bad:
	/* a source that lied once is not quoted at all */
	h->n = hits0;
	s->usable = 0;
}

static int plen_in(const struct hdr *h, int v6, int allow, unsigned int plen)
{
	return v6 ? !!(h->plens6[allow][plen / 64] & (1ULL << (plen % 64)))
		  : !!(h->plens4[allow] & (1ULL << plen));
}

/* Every indexed prefix of s containing the address: a probe per prefix
 * length that occurs. */
static void find_addr(struct rsrc *s, const struct bg_key4 *k4,
		      const struct bg_key6 *k6, struct hits *h)
{
	unsigned int bits = k4 ? 32 : 128, plen;
	char a[INET6_ADDRSTRLEN], entry[INET6_ADDRSTRLEN + 8];
	size_t hits0 = h->n;
	int allow;

	for (allow = 0; allow < 2; allow++) {
		for (plen = 0; plen <= bits && s->usable; plen++) {
			struct probe p = { .entry = entry, .parent = "",
					   .allow = allow };

			if (!plen_in(s->h, !k4, allow, plen))
				continue;
			if (k4) {
				struct bg_key4 m;

				bg_key4_init(&m, k4->addr, (__u8)plen);
				p.key = hash4(s->h->seed, &m, allow);
				inet_ntop(AF_INET, &m.addr, a, sizeof(a));
			} else {
				struct bg_key6 m;

				bg_key6_init(&m, k6->addr, (__u8)plen);
				p.key = hash6(s->h->seed, &m, allow);
				inet_ntop(AF_INET6, m.addr, a, sizeof(a));
			}
			snprintf(entry, sizeof(entry),
				 plen == bits ? "%s" : "%s/%u", a, plen);
			probe(s, &p, h, hits0);
		}
	}
}

/* The entries the datapath's probes for name q find (bg_names_find()):
 * q itself as an exact or tree rule, its proper parents of at most
 * BG_DNS_SUFFIX_MAX labels as tree or subdomains-only rules. */
static void find_name(struct rsrc *s, const char *q, struct hits *h)
{
	static const int self[] = { BG_NAME_EXACT, BG_NAME_TREE };
	static const int parent[] = { BG_NAME_TREE, BG_NAME_SUBS };
	unsigned int nlabels = 1, j;
	size_t hits0 = h->n, t;
	const char *p;
	int allow;

	for (p = q; *p; p++)
		nlabels += *p == '.';
	for (p = q, j = 0; p && s->usable; j++) {
		if (j == 0 || nlabels - j <= BG_DNS_SUFFIX_MAX) {
			const int *kinds = j ? parent : self;

			for (t = 0; t < 2; t++)
				for (allow = 0; allow < 2; allow++) {
					struct probe pr = {
						.entry = p, .parent = j ? p : "",
						.allow = allow, .kind = kinds[t],
					};

					if (!(s->h->name_kinds &
					      (1u << (kinds[t] * 2 + allow))))
						continue;
					pr.key = hash_name(s->h->seed, p, strlen(p),
							   kinds[t], allow);
					probe(s, &pr, h, hits0);
				}
		}
		p = strchr(p, '.');
		p = p ? p + 1 : NULL;
	}
}

static int cmp_hit(const void *a, const void *b)
{
	const struct bg_explain_hit *x = a, *y = b;
	int c = strcmp(x->source, y->source);

	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return strcmp(x->entry, y->entry);
}

int bg_prov_find(void *ctx, const char *arg, struct bg_explain_hit **hits,
		 size_t *n)
{
	struct bg_prov_reader *r = ctx;
	char q[256]; /* bg_name_normalise(): 254 bytes at least */
	struct hits h = { 0 };
	struct bg_key4 k4;
	struct bg_key6 k6;
	size_t i;
	int kind;

	*hits = NULL;
	*n = 0;
	if (!arg)
		return -EINVAL;
	/* as bg_explain(): an address when it parses as one, else a name */
	kind = bg_parse_addr(arg, &k4, &k6, NULL);
	if (!kind && bg_name_normalise(arg, strlen(arg), q, NULL))
		return -EINVAL;
	for (i = 0; i < r->n && !h.err; i++) {
		if (!r->v[i].usable)
			continue;
		if (kind)
			find_addr(&r->v[i], kind == BG_KEY_IPV4 ? &k4 : NULL,
				  kind == BG_KEY_IPV6 ? &k6 : NULL, &h);
		else
			find_name(&r->v[i], q, &h);
	}
	if (h.err) {
		free(h.v);
		return h.err;
	}
	if (h.n > 1)
		qsort(h.v, h.n, sizeof(*h.v), cmp_hit);
	*hits = h.v;
	*n = h.n;
	return 0;
}
