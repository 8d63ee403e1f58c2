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
#include "agent/provenance_priv.h"
#include "core/sha.h"

const char MAGIC[8] = { 'B', 'G', 'P', 'R', 'O', 'V', '\r', '\n' };

/* ---- Shared ------------------------------------------------------------ */

/*
 * A checksum of any length with the one hash: bloomgate/hash.h hashes at
 * most BG_HASH_MAX_LEN bytes a call (a bound the BPF verifier needs), so
 * longer inputs are hashed a piece at a time, each piece seeded with the
 * hash so far.
 */
uint64_t prov_sum_bytes(const void *data, size_t n, uint64_t seed)
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
uint64_t prov_header_hash(const void *page)
{
	uint8_t buf[BG_PROV_HEADER];

	memcpy(buf, page, sizeof(buf));
	memset(buf + offsetof(struct hdr, header_hash), 0, sizeof(uint64_t));
	return prov_sum_bytes(buf, sizeof(buf), SEED_HEADER);
}

static uint64_t class_seed(uint64_t seed, int cl, int name_kind, int allow)
{
	/* spread over the seed's bits: classes next to each other must not
	 * give seeds that differ in one low bit only */
	return seed + (uint64_t)((cl << 4) | (name_kind << 1) | !!allow) *
			      0x9e3779b97f4a7c15ULL;
}

uint64_t prov_hash4(uint64_t seed, const struct bg_key4 *k, int allow)
{
	return bg_hash64(k, sizeof(*k), class_seed(seed, CL_V4, 0, allow));
}

uint64_t prov_hash6(uint64_t seed, const struct bg_key6 *k, int allow)
{
	return bg_hash64(k, sizeof(*k), class_seed(seed, CL_V6, 0, allow));
}

uint64_t prov_hash_name(uint64_t seed, const char *name, size_t len,
			int kind, int allow)
{
	return bg_hash64(name, (__u32)len, class_seed(seed, CL_NAME, kind, allow));
}

/* Pages of block sums (BG_PROV_BLOCK bytes of them each) of nblocks. */
uint64_t prov_sum_pages(uint64_t nblocks)
{
	return (nblocks * 8 + BG_PROV_BLOCK - 1) / BG_PROV_BLOCK;
}

/*
 * Reads and checks a header: magic, version, its checksum, the layout it
 * describes, and that the file has exactly the size it says. 0, or -errno
 * with why: -EBADMSG (corrupt, truncated, not an index), -EPROTO.
 */
int prov_check_header(const void *page, uint64_t size, char *why,
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
	if (prov_header_hash(page) != h->header_hash) {
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
	if (h->nblocks != nblocks || h->npages != prov_sum_pages(nblocks) ||
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



void prov_wsrc_free(struct wsrc *ws)
{
	if (ws->rec)
		munmap(ws->rec, ws->cap * BG_PROV_RECORD);
	free(ws->lines);
	ws->rec = NULL;
	ws->lines = NULL;
	ws->n = ws->cap = ws->nlines = 0;
}

void prov_writer_free(struct bg_prov_writer *w)
{
	size_t i, k;

	if (!w)
		return;
	for (k = 0; k < BG_PARSE_WORKERS_MAX; k++) {
		if (!w->wk[k])
			continue;
		for (i = 0; i < w->n; i++)
			prov_wsrc_free(&w->wk[k]->src[i]);
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
	return prov_check_header(buf, (uint64_t)st.st_size, why, sizeof(why));
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
	prov_writer_free(w);
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
		h = prov_hash4(KEY_SEED, &m, a);
		ws->plens4[a] |= 1ULL << m.plen;
		break;
	}
	case BG_KEY_IPV6: {
		const struct bg_key6 *k6 = e->key;
		struct bg_key6 m;

		if (k6->plen > 128)
			goto bad;
		bg_key6_init(&m, k6->addr, k6->plen);
		h = prov_hash6(KEY_SEED, &m, a);
		ws->plens6[a][m.plen / 64] |= 1ULL << (m.plen % 64);
		break;
	}
	case BG_ENTRY_NAME: {
		size_t len = strnlen(e->key, 256);

		if (!len || len > 253 || e->name_kind < BG_NAME_EXACT ||
		    e->name_kind > BG_NAME_SUBS)
			goto bad;
		h = prov_hash_name(KEY_SEED, e->key, len, e->name_kind, a);
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
int prov_scatter_sort(struct bg_prov_writer *w, size_t i, uint8_t *dst,
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

