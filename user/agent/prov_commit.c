// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The provenance index, committed (user/agent/provenance_priv.h): each
 * changed source's records written as an index file, synced, renamed into
 * place and recorded in the store.
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


/* The index's header for source i, from its workers' entries and the
 * copy they were parsed from (which must still be the one in place):
 * counts, offsets, sizes; its hashes are filled once the data is. */
static int index_header(struct bg_prov_writer *w, size_t i, struct hdr *h)
{
	struct psrc *s = &w->src[i];
	uint64_t count = 0, max_line = 0, nlines, data, nblocks;
	struct stat st;
	size_t k, j;
	int ret;

	memset(h, 0, sizeof(*h));
	for (k = 0; k < BG_PARSE_WORKERS_MAX; k++) {
		struct wsrc *ws = w->wk[k] ? &w->wk[k]->src[i] : NULL;

		if (!ws)
			continue;
		if (ws->err)
			return ws->err;
		count += ws->n;
		if (ws->max_line > max_line)
			max_line = ws->max_line;
		h->plens4[0] |= ws->plens4[0];
		h->plens4[1] |= ws->plens4[1];
		for (j = 0; j < 3; j++) {
			h->plens6[0][j] |= ws->plens6[0][j];
			h->plens6[1][j] |= ws->plens6[1][j];
		}
		h->name_kinds |= ws->kinds;
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
	if (strlen(s->sha) != 64 || bg_unhex(s->sha, 32, h->copy_sha))
		return -EINVAL;

	nlines = count ? max_line / BG_PROV_LINE_STEP + 1 : 0;
	memcpy(h->magic, MAGIC, sizeof(MAGIC));
	h->version = BG_PROV_VERSION;
	h->header_size = BG_PROV_HEADER;
	h->record_size = BG_PROV_RECORD;
	h->block_size = BG_PROV_BLOCK;
	h->line_step = BG_PROV_LINE_STEP;
	h->count = count;
	h->lines_off = BG_PROV_HEADER + count * BG_PROV_RECORD;
	h->nlines = nlines;
	h->sums_off = h->lines_off + nlines * 8;
	data = h->sums_off - BG_PROV_HEADER;
	nblocks = (data + BG_PROV_BLOCK - 1) / BG_PROV_BLOCK;
	h->nblocks = nblocks;
	h->npages = prov_sum_pages(nblocks);
	h->file_size = h->sums_off + (nblocks + h->npages) * 8;
	h->seed = KEY_SEED;
	h->copy_size = (uint64_t)st.st_size;
	h->max_line = max_line;
	h->format = s->list.format;
	h->subdomains = s->list.subdomains;
	h->allow = s->list.allow;
	h->allow_wide = s->list.allow_wide;
	snprintf(h->name, sizeof(h->name), "%s", s->list.name);
	snprintf(h->copy, sizeof(h->copy), "%s", s->copy);
	return 0;
}

/* The block sums of the data, then the sums of their pages: a reader
 * checks the short second table when it opens the file, a page of the
 * first when it first needs one (a 100M-entry index has 2.3 MB of
 * them). */
static void index_sums(const uint8_t *map, uint64_t data, uint64_t *sums,
		       struct hdr *h)
{
	uint64_t nblocks = h->nblocks, b;

	for (b = 0; b < nblocks; b++) {
		uint64_t len = data - b * BG_PROV_BLOCK < BG_PROV_BLOCK ?
				       data - b * BG_PROV_BLOCK : BG_PROV_BLOCK;

		sums[b] = prov_sum_bytes(map + b * BG_PROV_BLOCK, len, SEED_BLOCK + b);
	}
	for (b = 0; b < h->npages; b++) {
		uint64_t len = nblocks * 8 - b * BG_PROV_BLOCK < BG_PROV_BLOCK ?
				       nblocks * 8 - b * BG_PROV_BLOCK : BG_PROV_BLOCK;

		sums[nblocks + b] = prov_sum_bytes((uint8_t *)sums + b * BG_PROV_BLOCK, len,
					      SEED_SUMS + b);
	}
	h->sums_hash = prov_sum_bytes(sums + nblocks, h->npages * 8, SEED_SUMS);
}

/* The line table of source i: for each step of BG_PROV_LINE_STEP lines,
 * the offset of its first line, from the workers' own tables. */
static void index_lines(struct bg_prov_writer *w, size_t i, uint8_t *to,
			uint64_t nlines)
{
	uint64_t b;
	size_t k;

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
		memcpy(to + b * 8, &word, 8);
	}
}

/* The index written to a new file tmp (a mkostemp() template), synced
 * and renamed to path; tmp removed on a failure. The data's pages are
 * dropped as they are written (they are in the page cache then). */
static int write_file(char *tmp, const char *path, const uint8_t *page,
		      uint8_t *map, uint64_t data, const uint64_t *sums,
		      uint64_t nsums)
{
	uint64_t b;
	int fd, ret;

	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = write_all(fd, page, BG_PROV_HEADER);
	for (b = 0; !ret && b < data; b += WRITE_CHUNK) {
		uint64_t len = data - b < WRITE_CHUNK ? data - b : WRITE_CHUNK;

		ret = write_all(fd, map + b, len);
		if (len == WRITE_CHUNK)
			madvise(map + b, len, MADV_DONTNEED);
	}
	if (!ret)
		ret = write_all(fd, (const uint8_t *)sums, nsums * 8);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	close(fd);
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

static int write_index(struct bg_prov_writer *w, size_t i, struct written *out)
{
	struct psrc *s = &w->src[i];
	char tmp[PATH_MAX], path[PATH_MAX];
	uint8_t page[BG_PROV_HEADER] __attribute__((aligned(8)));
	uint64_t count, data, nblocks, *sums = NULL;
	uint8_t *map = NULL;
	struct hdr h;
	int ret;

	ret = index_header(w, i, &h);
	if (ret)
		return ret;
	count = h.count;
	nblocks = h.nblocks;
	data = h.sums_off - BG_PROV_HEADER;

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
	/* the block sums, then their pages' (index_sums()) */
	sums = malloc((nblocks + h.npages) * 8 + 8);
	if (!sums) {
		ret = -ENOMEM;
		goto err;
	}
	ret = prov_scatter_sort(w, i, map, count);
	if (ret)
		goto err;
	index_lines(w, i, map + count * BG_PROV_RECORD, h.nlines);
	index_sums(map, data, sums, &h);
	memset(page, 0, sizeof(page));
	memcpy(page, &h, sizeof(h));
	h.header_hash = prov_header_hash(page);
	memcpy(page + offsetof(struct hdr, header_hash), &h.header_hash,
	       sizeof(h.header_hash));

	/* the file in the order a reader checks it: header, records and
	 * lines, sums; durable before it takes the index's name */
	clean_temps(w->idir, s->list.name);
	ret = write_file(tmp, path, page, map, data, sums, nblocks + h.npages);
	if (ret)
		goto err;
	free(sums);
	if (map)
		munmap(map, data);
	ret = bg_fsync_dir(w->idir);
	if (ret)
		return ret; /* renamed: it is the index now, durable or not */
	out->checksum = h.header_hash;
	out->count = count;
	out->bytes = h.file_size;
	snprintf(out->sha, sizeof(out->sha), "%s", s->sha);
	return 0;
err:
	free(sums);
	if (map)
		munmap(map, data);
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
				prov_wsrc_free(&w->wk[k]->src[i]);
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
	prov_writer_free(w);
	return first ? first : written;
}

void bg_prov_abort(struct bg_prov_writer *w)
{
	prov_writer_free(w);
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

