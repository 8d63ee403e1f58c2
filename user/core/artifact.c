// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Filter artifacts (core/artifact.h, layout in bloomgate/artifact.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "core/units.h"
#include "core/mem_lookup.h"
#include "core/artifact.h"
#include "core/artindex.h"
#include "core/par.h"

_Static_assert(BG_ART_SHA == BG_SHA_LEN, "one SHA-256 size");

static const char *const sec_names[BG_ART_SEC__COUNT] = {
	"sources", "filter", "index", "delta", "digests",
};

static size_t nchunks(size_t len)
{
	return (len + BG_ART_CHUNK - 1) / BG_ART_CHUNK;
}

static uint64_t align_up(uint64_t v)
{
	return (v + BG_ART_ALIGN - 1) & ~(uint64_t)(BG_ART_ALIGN - 1);
}

/* ---- Chunk digests on every CPU ---------------------------------------- */

struct chunk_job {
	const uint8_t *src;
	uint8_t *dst; /* copy while hashing, or NULL */
	size_t len;
	uint8_t (*out)[BG_ART_SHA];
	unsigned int nt;
};

static void job_chunks(void *ctx, unsigned int t)
{
	struct chunk_job *j = ctx;
	size_t n = nchunks(j->len), c;

	/* interleaved: neighbouring chunks on different threads, so that the
	 * threads read the file (and fill the map) side by side */
	for (c = t; c < n; c += j->nt) {
		size_t off = c * BG_ART_CHUNK;
		size_t l = j->len - off < BG_ART_CHUNK ? j->len - off : BG_ART_CHUNK;

		if (j->dst) {
			/* copy, then hash the copy: one read of the source */
			memcpy(j->dst + off, j->src + off, l);
			bg_sha256(j->dst + off, l, j->out[c]);
		} else {
			bg_sha256(j->src + off, l, j->out[c]);
		}
	}
}

static void chunk_digests(const void *src, void *dst, size_t len,
			  uint8_t (*out)[BG_ART_SHA], unsigned int threads)
{
	struct chunk_job j = { src, dst, len, out, bg_par_threads(threads) };
	size_t n = nchunks(len);

	if (j.nt > n)
		j.nt = n ? (unsigned int)n : 1;
	bg_par_run(j.nt, job_chunks, &j);
}

void bg_art_digest(const void *data, size_t len, uint8_t out[BG_ART_SHA],
		   uint8_t (*chunks)[BG_ART_SHA], unsigned int threads)
{
	size_t n = nchunks(len);
	uint8_t (*c)[BG_ART_SHA] = chunks;
	uint8_t one[1][BG_ART_SHA];

	if (!c)
		c = n <= 1 ? one : malloc(n * BG_ART_SHA);
	if (!c) { /* no memory for the table: the same digest, one thread */
		EVP_MD_CTX *md = EVP_MD_CTX_new();
		uint8_t d[BG_ART_SHA];
		size_t i;

		EVP_DigestInit_ex(md, EVP_sha256(), NULL);
		for (i = 0; i < n; i++) {
			size_t off = i * BG_ART_CHUNK;

			bg_sha256((const uint8_t *)data + off,
				  len - off < BG_ART_CHUNK ? len - off : BG_ART_CHUNK, d);
			EVP_DigestUpdate(md, d, sizeof(d));
		}
		EVP_DigestFinal_ex(md, out, NULL);
		EVP_MD_CTX_free(md);
		return;
	}
	chunk_digests(data, NULL, len, c, threads);
	bg_sha256(c, n * BG_ART_SHA, out);
	if (c != chunks && c != one)
		free(c);
}

static void header_digest(const struct bg_art_header *h, uint8_t out[BG_ART_SHA])
{
	struct bg_art_header t = *h;

	memset(t.digest, 0, sizeof(t.digest));
	bg_sha256(&t, sizeof(t), out);
}

void bg_art_plan_fill(struct bg_art_plan *ap, const struct bg_filter_params *p,
		      uint64_t seed)
{
	memset(ap, 0, sizeof(*ap));
	ap->seed = seed;
	ap->nelems = p->nelems;
	ap->nblocks = p->nblocks;
	ap->fp_nbuckets = p->fp_nbuckets;
	ap->capacity = p->capacity;
	ap->k = (__u8)p->k;
	ap->n4 = p->n4;
	ap->n6 = p->n6;
	ap->confirm = (__u8)p->confirm;
	memcpy(ap->len4, p->len4, sizeof(ap->len4));
	memcpy(ap->len6, p->len6, sizeof(ap->len6));
	ap->short4 = (__u8)!!p->short4;
	ap->short6_below = p->short6_below;
	ap->keys = p->n;
	ap->keys4 = p->keys4;
	ap->keys6 = p->keys6;
	ap->name_keys = p->name_keys;
	ap->prefixes4 = p->prefixes4;
	ap->prefixes6 = p->prefixes6;
	ap->allow4 = p->allow4_n;
	ap->allow6 = p->allow6_n;
	ap->allow_names = p->allown_n;
	ap->bloom_loaded = p->n;
	ap->target = p->target;
	ap->predicted = p->predicted;
	ap->predicted_addr = p->predicted_addr;
	ap->predicted_confirmed = p->predicted_confirmed;
}

void bg_art_plan_params(const struct bg_art_plan *ap, struct bg_filter_params *p)
{
	memset(p, 0, sizeof(*p));
	p->n = ap->keys;
	p->target = ap->target;
	p->nblocks = ap->nblocks;
	p->k = ap->k;
	p->predicted = ap->predicted;
	p->predicted_addr = ap->predicted_addr;
	p->predicted_confirmed = ap->predicted_confirmed;
	p->n4 = ap->n4;
	p->n6 = ap->n6;
	memcpy(p->len4, ap->len4, sizeof(p->len4));
	memcpy(p->len6, ap->len6, sizeof(p->len6));
	p->prefixes4 = ap->prefixes4;
	p->prefixes6 = ap->prefixes6;
	p->keys4 = ap->keys4;
	p->keys6 = ap->keys6;
	p->name_keys = ap->name_keys;
	p->allow4_n = (uint32_t)ap->allow4;
	p->allow6_n = (uint32_t)ap->allow6;
	p->allown_n = (uint32_t)ap->allow_names;
	p->confirm = ap->confirm;
	p->fp_nbuckets = ap->fp_nbuckets;
	p->nelems = ap->nelems;
	p->bytes = (size_t)ap->nelems * BG_FILTER_VALUE_SIZE;
	p->capacity = ap->capacity;
	p->short4 = ap->short4;
	p->short6_below = ap->short6_below;
	if (ap->nblocks)
		p->bits_per_entry = ap->keys ? 512.0 * ap->nblocks / ap->keys : 0;
}

void bg_art_params(const struct bg_art *a, struct bg_filter_params *p)
{
	const struct bg_filter_header *f;
	size_t len;

	bg_art_plan_params(&a->h->plan, p);
	f = bg_art_sec(a, BG_ART_SEC_FILTER, &len);
	if (!f)
		return;
	/* the tables where the image has them (bg_art_check() saw them
	 * inside it): bg_filter_used() is then what the filter takes */
	p->bloom_off = bg_bloom_base(f);
	p->fp_off = f->fp_off;
	p->allow4_off = f->allow4_off;
	p->allow6_off = bg_allow6_off(f);
	p->short6_off = bg_short6_off(f);
	p->allown_off = bg_allown_off(f);
	p->allow4_n = f->allow4_n;
	p->allow6_n = f->allow6_n;
	p->short6_n = f->short6_n;
	p->allown_n = f->allown_n;
	p->subs_depths = f->subs_depths;
}

void bg_art_file_sha(const struct bg_art *a, char hex[65])
{
	uint8_t d[BG_ART_SHA];

	bg_sha256(a->base, a->len, d);
	bg_sha_hex(d, hex);
}

/* ---- Writing ------------------------------------------------------------ */

/* Writes len bytes at buf to fd, and adds them to md when it is not
 * NULL (the file's SHA-256, as it is written). */
static int write_all(int fd, const void *buf, size_t len, EVP_MD_CTX *md)
{
	const uint8_t *p = buf;

	if (md && !EVP_DigestUpdate(md, buf, len))
		return -ENOMEM;
	while (len) {
		ssize_t w = write(fd, p, len > (1u << 30) ? (1u << 30) : len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int write_zeros(int fd, size_t len, EVP_MD_CTX *md)
{
	static const uint8_t z[BG_ART_ALIGN];
	int ret;

	while (len) {
		size_t l = len < sizeof(z) ? len : sizeof(z);

		if ((ret = write_all(fd, z, l, md)))
			return ret;
		len -= l;
	}
	return 0;
}

/* The header of parts: its sections, digests (dig: every chunk's) and
 * length. */
static void fill_header(struct bg_art_header *h, const struct bg_art_parts *parts,
			uint8_t (*dig)[BG_ART_SHA], size_t total, unsigned int threads)
{
	uint64_t off = BG_ART_HEADER;
	size_t at = 0;
	int s;

	memcpy(h->magic, BG_ART_MAGIC, BG_ART_MAGIC_LEN);
	h->version = BG_ART_VERSION;
	h->header_len = BG_ART_HEADER;
	h->abi_version = BG_ABI_VERSION;
	memset(h->sec, 0, sizeof(h->sec));
	memset(h->reserved, 0, sizeof(h->reserved));
	h->pad0 = 0;
	for (s = 0; s < BG_ART_SEC_DIGESTS; s++) {
		size_t len = parts->len[s], n = nchunks(len);

		if (!len)
			continue;
		h->sec[s].off = off;
		h->sec[s].len = len;
		chunk_digests(parts->data[s], NULL, len, dig + at, threads);
		bg_sha256(dig + at, n * BG_ART_SHA, h->sec[s].sha256);
		at += n;
		off = align_up(off + len);
	}
	h->sec[BG_ART_SEC_DIGESTS].off = total ? off : 0;
	h->sec[BG_ART_SEC_DIGESTS].len = total * BG_ART_SHA;
	if (total)
		bg_sha256(dig, total * BG_ART_SHA, h->sec[BG_ART_SEC_DIGESTS].sha256);
	h->file_len = total ? off + total * BG_ART_SHA : off;
	header_digest(h, h->digest);
}

int bg_art_write_fd(int fd, struct bg_art_header *h,
		    const struct bg_art_parts *parts, unsigned int threads,
		    uint8_t file_sha[BG_ART_SHA])
{
	EVP_MD_CTX *md = NULL;
	uint8_t (*dig)[BG_ART_SHA];
	size_t total = 0;
	uint64_t off = BG_ART_HEADER;
	int s, ret;

	for (s = 0; s < BG_ART_SEC_DIGESTS; s++)
		total += nchunks(parts->len[s]);
	dig = calloc(total ? total : 1, BG_ART_SHA);
	if (file_sha && (!(md = EVP_MD_CTX_new()) ||
			 !EVP_DigestInit_ex(md, EVP_sha256(), NULL))) {
		free(dig);
		dig = NULL;
	}
	if (!dig) {
		EVP_MD_CTX_free(md);
		return -ENOMEM;
	}
	fill_header(h, parts, dig, total, threads);
	ret = write_all(fd, h, sizeof(*h), md);
	for (s = 0; !ret && s < BG_ART_SEC_DIGESTS; s++) {
		if (!parts->len[s])
			continue;
		ret = write_all(fd, parts->data[s], parts->len[s], md);
		off += parts->len[s];
		if (!ret)
			ret = write_zeros(fd, align_up(off) - off, md);
		off = align_up(off);
	}
	if (!ret && total)
		ret = write_all(fd, dig, total * BG_ART_SHA, md);
	if (!ret && md && !EVP_DigestFinal_ex(md, file_sha, NULL))
		ret = -ENOMEM;
	EVP_MD_CTX_free(md);
	free(dig);
	return ret;
}

/* 1 when want is given (not NULL, not all zero) and is not got. */
static int differs(const uint8_t *want, const uint8_t *got)
{
	static const uint8_t zero[BG_ART_SHA];

	return want && memcmp(want, zero, BG_ART_SHA) && memcmp(want, got, BG_ART_SHA);
}

int bg_art_write_as(const char *path, struct bg_art_header *h,
		    const struct bg_art_parts *parts, unsigned int threads,
		    const uint8_t *want_digest, const uint8_t *want_file,
		    uint8_t file_sha[BG_ART_SHA])
{
	uint8_t got[BG_ART_SHA];
	char tmp[4096];
	int fd, ret;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ret = bg_art_write_fd(fd, h, parts, threads, got);
	if (!ret && (differs(want_digest, h->digest) || differs(want_file, got)))
		ret = -EBADMSG;
	if (!ret && file_sha)
		memcpy(file_sha, got, BG_ART_SHA);
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

int bg_art_write(const char *path, struct bg_art_header *h,
		 const struct bg_art_parts *parts, unsigned int threads,
		 uint8_t file_sha[BG_ART_SHA])
{
	return bg_art_write_as(path, h, parts, threads, NULL, NULL, file_sha);
}

/* ---- Opening ------------------------------------------------------------ */

int bg_art_open(const char *path, struct bg_art *a, char *why, size_t whylen)
{
	struct stat sb;
	void *m;
	int fd, ret;

	memset(a, 0, sizeof(*a));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		bg_whyf(why, whylen, "%s", strerror(-ret));
		return ret;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		ret = errno ? -errno : -EINVAL;
		close(fd);
		bg_whyf(why, whylen, "not a regular file");
		return -EINVAL;
	}
	if ((size_t)sb.st_size < BG_ART_HEADER) {
		close(fd);
		bg_whyf(why, whylen, "not a bloomgate artifact (%lld bytes)",
		     (long long)sb.st_size);
		return -EBADMSG;
	}
	m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
	ret = m == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret) {
		bg_whyf(why, whylen, "cannot map it: %s", strerror(-ret));
		return ret;
	}
	madvise(m, (size_t)sb.st_size, MADV_SEQUENTIAL);
	a->base = m;
	a->len = (size_t)sb.st_size;
	a->mapped = 1;
	ret = bg_art_check((const void *)a->base, a->base, a->len, why, whylen);
	if (ret)
		bg_art_close(a);
	else
		a->h = (const void *)a->base;
	return ret;
}

void bg_art_close(struct bg_art *a)
{
	if (a->mapped && a->base)
		munmap((void *)a->base, a->len);
	memset(a, 0, sizeof(*a));
}

int bg_art_is_artifact(const char *path)
{
	char m[BG_ART_MAGIC_LEN];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat sb;
	int is = 0;

	if (fd < 0)
		return 0;
	if (!fstat(fd, &sb) && S_ISREG(sb.st_mode) &&
	    pread(fd, m, sizeof(m), 0) == (ssize_t)sizeof(m))
		is = !memcmp(m, BG_ART_MAGIC, BG_ART_MAGIC_LEN);
	close(fd);
	return is;
}

const void *bg_art_sec(const struct bg_art *a, int sec, size_t *len)
{
	const struct bg_art_section *s = &a->h->sec[sec];

	*len = s->len;
	return s->len ? a->base + s->off : NULL;
}

static int sources_check(const struct bg_art *a, char *why, size_t whylen);

/* Where section sec's chunk digests start in DIGESTS, in digests. */
static size_t digest_at(const struct bg_art_header *h, int sec)
{
	size_t at = 0;
	int s;

	for (s = 0; s < sec; s++)
		at += nchunks(h->sec[s].len);
	return at;
}

int bg_art_verify(const struct bg_art *a, unsigned int mask, void *const *dst,
		  unsigned int threads, char *why, size_t whylen)
{
	const struct bg_art_header *h = a->h;
	const uint8_t (*table)[BG_ART_SHA];
	size_t tlen;
	uint8_t d[BG_ART_SHA];
	int s;

	table = bg_art_sec(a, BG_ART_SEC_DIGESTS, &tlen);
	/* the table whole (a few KiB): every byte of it is then covered,
	 * whichever sections are checked */
	bg_sha256(table, tlen, d);
	if (tlen && memcmp(d, h->sec[BG_ART_SEC_DIGESTS].sha256, BG_ART_SHA)) {
		bg_whyf(why, whylen, "the digests section does not match its "
			"checksum: damaged");
		return -EBADMSG;
	}
	for (s = 0; s < BG_ART_SEC_DIGESTS; s++) {
		size_t len = h->sec[s].len, n = nchunks(len), at, c;
		uint8_t (*got)[BG_ART_SHA];

		if (!(mask & (1u << s)) || !len)
			continue;
		at = digest_at(h, s);
		/* the table's part first: then each chunk against it */
		bg_sha256(table[at], n * BG_ART_SHA, d);
		if (memcmp(d, h->sec[s].sha256, BG_ART_SHA)) {
			bg_whyf(why, whylen, "the %s section's digests do not match "
			     "its checksum: damaged", sec_names[s]);
			return -EBADMSG;
		}
		got = malloc(n * BG_ART_SHA);
		if (!got)
			return -ENOMEM;
		chunk_digests(a->base + h->sec[s].off, dst ? dst[s] : NULL, len,
			      got, threads);
		for (c = 0; c < n; c++)
			if (memcmp(got[c], table[at + c], BG_ART_SHA))
				break;
		free(got);
		if (c < n) {
			bg_whyf(why, whylen, "the %s section is damaged (chunk %zu of %zu "
			     "does not match its checksum)", sec_names[s], c + 1, n);
			return -EBADMSG;
		}
	}
	if ((mask & (1u << BG_ART_SEC_SOURCES)) && h->sec[BG_ART_SEC_SOURCES].len)
		return sources_check(a, why, whylen);
	return 0;
}

/* ---- inspect ------------------------------------------------------------ */

static char *jdup(struct json_object *o, const char *k)
{
	struct json_object *v;

	return strdup(json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "");
}

static int64_t jnum(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : 0;
}

void bg_art_sources_free(struct bg_art_sources *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].origin);
		free(s->v[i].role);
		free(s->v[i].format);
		free(s->v[i].sha256);
	}
	free(s->v);
	free(s->options);
	memset(s, 0, sizeof(*s));
}

int bg_art_sources_parse(const char *text, size_t len, struct bg_art_sources *s)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root, *lists, *o, *v;
	size_t i, n;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	if (!tok)
		return -ENOMEM;
	root = len <= INT_MAX ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
	json_tokener_free(tok);
	if (!root || !json_object_object_get_ex(root, "lists", &lists) ||
	    !json_object_is_type(lists, json_type_array)) {
		json_object_put(root);
		return -EBADMSG;
	}
	if (json_object_object_get_ex(root, "options", &o)) {
		if (json_object_object_get_ex(o, "fpr", &v))
			s->fpr = json_object_get_double(v);
		if (json_object_object_get_ex(o, "confirm", &v))
			s->confirm = json_object_get_boolean(v);
		if (json_object_object_get_ex(o, "strict", &v))
			s->strict = json_object_get_boolean(v);
		if (json_object_object_get_ex(o, "allow_wide", &v))
			s->allow_wide = json_object_get_boolean(v);
		s->capacity = (uint32_t)jnum(o, "capacity");
		s->options = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	}
	n = json_object_array_length(lists);
	s->v = calloc(n ? n : 1, sizeof(*s->v));
	if (!s->v)
		ret = -ENOMEM;
	for (i = 0; !ret && i < n; i++) {
		struct json_object *l = json_object_array_get_idx(lists, i);
		struct bg_art_source *e = &s->v[i];

		s->n++;
		e->name = jdup(l, "name");
		e->origin = jdup(l, "origin");
		e->role = jdup(l, "role");
		e->format = jdup(l, "format");
		e->sha256 = jdup(l, "sha256");
		e->entries = (uint64_t)jnum(l, "entries");
		e->subdomains = json_object_object_get_ex(l, "subdomains", &v) &&
				json_object_get_boolean(v);
		e->allow_wide = json_object_object_get_ex(l, "allow_wide", &v) &&
				json_object_get_boolean(v);
		if (!e->name || !e->origin || !e->role || !e->format || !e->sha256)
			ret = -ENOMEM;
	}
	json_object_put(root);
	if (ret)
		bg_art_sources_free(s);
	return ret;
}

int bg_art_sources_read(const struct bg_art *a, struct bg_art_sources *s)
{
	size_t len;
	const char *t = bg_art_sec(a, BG_ART_SEC_SOURCES, &len);
	int ret;

	if (!t) {
		memset(s, 0, sizeof(*s));
		return -ENOENT;
	}
	ret = bg_art_sources_parse(t, len, s);
	/* the lists the index numbers: as many as the header says */
	if (!ret && s->n != a->h->nsources) {
		bg_art_sources_free(s);
		ret = -EBADMSG;
	}
	return ret;
}

/* The SOURCES section (its digest checked): JSON, one list a source of
 * the header's, each a role and a SHA-256. */
static int sources_check(const struct bg_art *a, char *why, size_t whylen)
{
	struct bg_art_sources s;
	size_t i;
	int ret = bg_art_sources_read(a, &s);

	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		bg_whyf(why, whylen, "the sources section: not the JSON of %u lists "
			"(nsources)", a->h->nsources);
		return -EBADMSG;
	}
	for (i = 0; i < s.n && !ret; i++)
		if ((strcmp(s.v[i].role, "block") && strcmp(s.v[i].role, "allow")) ||
		    !bg_sha_hex_ok(s.v[i].sha256)) {
			bg_whyf(why, whylen, "the sources section: list %zu: its role "
				"is not block or allow, or its sha256 not 64 hex digits",
				i);
			ret = -EBADMSG;
		}
	bg_art_sources_free(&s);
	return ret;
}

static void print_sources(FILE *f, const struct bg_art *a)
{
	struct bg_art_sources s;
	size_t i;
	int ret = bg_art_sources_read(a, &s);

	if (ret == -ENOENT) {
		fprintf(f, "sources:    none recorded\n");
		return;
	}
	if (ret) {
		fprintf(f, "sources:    (not readable)\n");
		return;
	}
	if (s.options)
		fprintf(f, "options:    %s\n", s.options);
	fprintf(f, "sources:    %zu\n", s.n);
	for (i = 0; i < s.n; i++)
		fprintf(f, "  %-3zu %s (%s, %s) %" PRIu64 " entries\n      %s\n"
			"      sha256 %s\n", i, s.v[i].name, s.v[i].role,
			s.v[i].format, s.v[i].entries, s.v[i].origin, s.v[i].sha256);
	bg_art_sources_free(&s);
}

void bg_art_print(FILE *f, const struct bg_art *a, const char *name)
{
	const struct bg_art_header *h = a->h;
	const struct bg_art_plan *p = &h->plan;
	char hex[65], created[64];
	time_t t = (time_t)h->created;
	struct tm tm;
	int s, i;

	bg_art_file_sha(a, hex);
	if (gmtime_r(&t, &tm))
		strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	else
		snprintf(created, sizeof(created), "%" PRIu64, (uint64_t)h->created);
	fprintf(f, "artifact:   %s\n", name);
	fprintf(f, "kind:       %s, format version %u, datapath ABI %u\n",
		h->kind == BG_ART_FULL ? "full" : "delta", h->version,
		h->abi_version);
	fprintf(f, "checksum:   sha256 %s\n", hex);
	fprintf(f, "created:    %s\n", created);
	if (h->generation || h->kind == BG_ART_DELTA)
		fprintf(f, "generation: %" PRIu64 "\n", (uint64_t)h->generation);
	if (h->kind == BG_ART_DELTA) {
		static const uint8_t zero[BG_ART_SHA];
		size_t len;
		int old;

		bg_art_sec(a, BG_ART_SEC_DELTA, &len);
		/* the files' checksums; a delta written before they were
		 * recorded names its base and result by their headers' */
		old = !memcmp(h->base_file_sha256, zero, BG_ART_SHA);
		bg_sha_hex(old ? h->base_sha256 : h->base_file_sha256, hex);
		fprintf(f, "base:       generation %" PRIu64 ", %s %s\n",
			(uint64_t)h->base_generation, old ? "header digest" : "sha256",
			hex);
		bg_sha_hex(old ? h->result_sha256 : h->result_file_sha256, hex);
		fprintf(f, "result:     %s %s\n", old ? "header digest" : "sha256", hex);
		fprintf(f, "patches:    %zu elements of 64 bytes\n",
			(len - BG_ART_HEADER) / sizeof(struct bg_art_patch));
	}
	fprintf(f, "bytes:      %" PRIu64 "\n", (uint64_t)h->file_len);
	fprintf(f, "plan:       %u elements (%" PRIu64 " bytes), %u Bloom blocks, "
		"k=%u, seed 0x%016" PRIx64 "\n", p->nelems,
		(uint64_t)p->nelems * 64, p->nblocks, p->k, (uint64_t)p->seed);
	fprintf(f, "            exact stage: %s", p->confirm ? "on" : "off");
	if (p->confirm)
		fprintf(f, ", %u buckets", p->fp_nbuckets);
	if (p->capacity)
		fprintf(f, "; fitted to a capacity of %u elements", p->capacity);
	fprintf(f, "\n            probed lengths: IPv4");
	for (i = 0; i < p->n4; i++)
		fprintf(f, " /%u", p->len4[i]);
	fprintf(f, "; IPv6");
	for (i = 0; i < p->n6; i++)
		fprintf(f, " /%u", p->len6[i]);
	fprintf(f, "\n");
	fprintf(f, "keys:       %" PRIu64 " Bloom keys (%" PRIu64 " IPv4, %" PRIu64
		" IPv6, %" PRIu64 " names), %" PRIu64 " loaded in the Bloom part\n",
		(uint64_t)p->keys, (uint64_t)p->keys4, (uint64_t)p->keys6,
		(uint64_t)p->name_keys, (uint64_t)p->bloom_loaded);
	fprintf(f, "entries:    %" PRIu64 " IPv4, %" PRIu64 " IPv6 prefixes; allowed: %"
		PRIu64 " IPv4, %" PRIu64 " IPv6 ranges, %" PRIu64 " names\n",
		(uint64_t)p->prefixes4, (uint64_t)p->prefixes6,
		(uint64_t)p->allow4, (uint64_t)p->allow6, (uint64_t)p->allow_names);
	fprintf(f, "rates:      target %g; predicted %.3g a probe, %.3g an address "
		"or query, %.3g confirmed\n", p->target, p->predicted,
		p->predicted_addr, p->predicted_confirmed);
	for (s = 0; s < BG_ART_SEC__COUNT; s++) {
		if (!h->sec[s].len)
			continue;
		bg_sha_hex(h->sec[s].sha256, hex);
		fprintf(f, "section:    %-8s %12" PRIu64 " bytes at %-10" PRIu64 " %s\n",
			sec_names[s], (uint64_t)h->sec[s].len,
			(uint64_t)h->sec[s].off, hex);
	}
	print_sources(f, a);
}

/* ---- check on an artifact ------------------------------------------------ */

int bg_art_finder_open(const char *path, const uint8_t *digest,
		       struct bg_art_finder *f, char *why, size_t whylen)
{
	size_t len;
	const void *idx;
	int ret;

	memset(f, 0, sizeof(*f));
	ret = bg_art_open(path, &f->a, why, whylen);
	if (ret)
		return ret;
	if (digest && memcmp(digest, f->a.h->digest, BG_ART_SHA)) {
		bg_art_close(&f->a);
		bg_whyf(why, whylen, "%s is no longer the artifact loaded", path);
		return -ESTALE;
	}
	idx = bg_art_sec(&f->a, BG_ART_SEC_INDEX, &len);
	if (f->a.h->kind != BG_ART_FULL || !idx || bg_ai_valid(idx, len) ||
	    bg_art_sources_read(&f->a, &f->s)) {
		bg_art_close(&f->a);
		bg_whyf(why, whylen, "%s has no readable index", path);
		return -EBADMSG;
	}
	return 0;
}

void bg_art_finder_close(struct bg_art_finder *f)
{
	bg_art_sources_free(&f->s);
	bg_art_close(&f->a);
}

int bg_art_find(void *ctx, const char *arg, struct bg_explain_hit **hits,
		size_t *n)
{
	struct bg_art_finder *f = ctx;
	struct bg_ai_hit *ah = NULL;
	struct bg_explain_hit *v;
	size_t len, na = 0, i;
	const void *idx = bg_art_sec(&f->a, BG_ART_SEC_INDEX, &len);
	int ret = bg_ai_find(idx, len, arg, &ah, &na);

	*hits = NULL;
	*n = 0;
	if (ret)
		return ret;
	v = calloc(na ? na : 1, sizeof(*v));
	if (!v) {
		free(ah);
		return -ENOMEM;
	}
	for (i = 0; i < na; i++) {
		const struct bg_art_source *s =
			ah[i].source < f->s.n ? &f->s.v[ah[i].source] : NULL;

		snprintf(v[i].source, sizeof(v[i].source), "%s",
			 s ? s->name : "?");
		snprintf(v[i].origin, sizeof(v[i].origin), "%s", s ? s->origin : "?");
		v[i].line = 0; /* the index names the list, not the line */
		snprintf(v[i].entry, sizeof(v[i].entry), "%s", ah[i].entry);
		snprintf(v[i].text, sizeof(v[i].text), "%.*s",
			 (int)sizeof(v[i].text) - 1, ah[i].entry);
		snprintf(v[i].parent, sizeof(v[i].parent), "%s", ah[i].parent);
		v[i].allow = ah[i].allow;
		v[i].kind = ah[i].name_kind;
	}
	free(ah);
	*hits = v;
	*n = na;
	return 0;
}
