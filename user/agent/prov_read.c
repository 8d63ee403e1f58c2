// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The provenance index, read (user/agent/provenance_priv.h): check maps
 * each source's index, verifies each block as a lookup reaches it, and
 * quotes the lines of the copy that gave a key.
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
		if (prov_sum_bytes(s->map + h->sums_off + p * BG_PROV_BLOCK, plen,
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
	if (prov_sum_bytes(s->map + off, len, SEED_BLOCK + b) != want) {
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

/* Maps the index file at path and checks its header against the store's
 * row (re-read into *row on a retry): 0, or -errno with s->why. */
static int rsrc_map(struct bg_store *store, const char *name, const char *path,
		    struct bg_store_source *row, struct rsrc *s, int full)
{
	struct stat st;
	int ret = 0, tries;

	/* The agent renames a new index in, then records it: a reader
	 * between the two sees a file the row it read does not name, and
	 * reads both again (twice at most: a commit takes longer). */
	for (tries = 0; tries < 3; tries++) {
		rsrc_close(s);
		if (tries && bg_store_source_get(store, name, row))
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
			ret = prov_check_header(NULL, (uint64_t)st.st_size, s->why,
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
		ret = prov_check_header(s->h, (uint64_t)st.st_size, s->why,
				   sizeof(s->why));
		if (ret)
			continue;
		if (s->h->header_hash != row->index_checksum ||
		    strncmp(s->h->name, name, sizeof(s->h->name))) {
			ret = -ESTALE;
			snprintf(s->why, sizeof(s->why),
				 "index is not the one the store records (a commit "
				 "cut short?)");
			continue;
		}
		break;
	}
	return ret;
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
	int ret;

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
	ret = rsrc_map(store, src->name, path, &row, s, full);
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
	if (prov_sum_bytes(s->map + s->h->sums_off + s->h->nblocks * 8,
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
				p.key = prov_hash4(s->h->seed, &m, allow);
				inet_ntop(AF_INET, &m.addr, a, sizeof(a));
			} else {
				struct bg_key6 m;

				bg_key6_init(&m, k6->addr, (__u8)plen);
				p.key = prov_hash6(s->h->seed, &m, allow);
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
					pr.key = prov_hash_name(s->h->seed, p, strlen(p),
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

