// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Blocklist parsing: files of addresses into sorted, de-duplicated keys.
 *
 * Format: one IPv4 or IPv6 address per line (plain lists and FireHOL
 * .ipset files). '#' and ';' start a comment anywhere on a line; blank
 * lines, spaces, tabs and CRLF line ends are ignored, as are a missing final
 * newline and a UTF-8 byte-order mark at the start of a list. Every other
 * line is rejected, reported as "name:line: reason: 'text'" and counted;
 * the parse goes on without it.
 *
 * Speed (10M-line lists): lines are parsed in place, keys are appended to
 * amortised-doubling arrays (no allocation per line), and IPv4 dotted quads
 * go through a small parser with inet_pton() semantics (exactly four decimal
 * octets, 0..255, no leading zeros); IPv6 goes to inet_pton(). Finishing
 * sorts with a radix sort giving memcmp() order of the keys.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bloomgate/bloom.h"
#include "lists.h"

/* Longest line accepted, in bytes, without its "\n" or "\r\n". */
#define BG_LIST_LINE_MAX 4096
/* Source bytes of a rejected line quoted in its report. */
#define BG_LIST_QUOTE_MAX 80
/* First allocation of a key array, in keys. */
#define BG_LIST_CAP_MIN 1024

static const char R_NOT_IP[] = "not an IP address";
static const char R_CIDR[] = "CIDR ranges are not supported yet";
static const char R_RANGE[] = "address ranges are not supported";
static const char R_ZONE[] = "IPv6 zone index not allowed";
static const char R_TRAILING[] = "trailing text after address";
static const char R_TOO_LONG[] = "line too long";
static const char R_BINARY[] = "binary data";

void bg_list_init(struct bg_list *l)
{
	memset(l, 0, sizeof(*l));
}

void bg_list_free(struct bg_list *l)
{
	free(l->v4);
	free(l->v6);
	bg_list_init(l);
}

/* ---- Address tokens ----------------------------------------------------- */

/*
 * Dotted-quad IPv4, the inet_pton(AF_INET) grammar: exactly four decimal
 * octets of 0..255, no leading zeros ("0" alone is fine), nothing else.
 * Returns 0 and the address in network byte order, or -1.
 */
static int parse_ip4(const char *s, size_t n, __u32 *addr_be)
{
	__u32 addr = 0, oct = 0;
	unsigned int dots = 0, digits = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned int c = (unsigned char)s[i];

		if (c - '0' <= 9) {
			if (digits && !oct)
				return -1; /* leading zero */
			oct = oct * 10 + (c - '0');
			if (oct > 255)
				return -1;
			digits++;
		} else if (c == '.') {
			if (!digits || dots == 3)
				return -1;
			addr = addr << 8 | oct;
			oct = 0;
			digits = 0;
			dots++;
		} else {
			return -1;
		}
	}
	if (!digits || dots != 3)
		return -1;
	*addr_be = htonl(addr << 8 | oct);
	return 0;
}

/* IPv6 through inet_pton(); the token is copied to be NUL-terminated. */
static int parse_ip6(const char *s, size_t n, __u8 addr[16])
{
	char tmp[INET6_ADDRSTRLEN];

	if (n == 0 || n >= sizeof(tmp))
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	return inet_pton(AF_INET6, tmp, addr) == 1 ? 0 : -1;
}

/* A plain address, either family: the kind, or 0. */
static int parse_plain(const char *s, size_t n, struct bg_key4 *k4,
		       struct bg_key6 *k6)
{
	__u32 a4;
	__u8 a6[16];

	if (parse_ip4(s, n, &a4) == 0) {
		bg_key4_init(k4, a4, 32);
		return BG_KEY_IPV4;
	}
	if (memchr(s, ':', n) && parse_ip6(s, n, a6) == 0) {
		bg_key6_init(k6, a6, 128);
		return BG_KEY_IPV6;
	}
	return 0;
}

/*
 * One token of known length, no whitespace in it. On failure, tells why:
 * forms that are understood but not supported get their own reason.
 */
static int parse_token(const char *s, size_t n, struct bg_key4 *k4,
		       struct bg_key6 *k6, const char **reason)
{
	struct bg_key4 t4;
	struct bg_key6 t6;
	const char *c;
	int kind;

	kind = parse_plain(s, n, k4, k6);
	if (kind)
		return kind;

	*reason = R_NOT_IP;
	if ((c = memchr(s, '/', n))) {
		/* "addr/len": rejected even when valid, until CIDR support. */
		if (parse_plain(s, (size_t)(c - s), &t4, &t6))
			*reason = R_CIDR;
		else if (memchr(s, '%', (size_t)(c - s)))
			parse_token(s, (size_t)(c - s), &t4, &t6, reason);
	} else if ((c = memchr(s, '%', n))) {
		if (parse_plain(s, (size_t)(c - s), &t4, &t6) == BG_KEY_IPV6 &&
		    c + 1 < s + n)
			*reason = R_ZONE;
	} else if ((c = memchr(s, '-', n))) {
		size_t m = (size_t)(c - s);

		if (parse_plain(s, m, &t4, &t6) &&
		    parse_plain(c + 1, n - m - 1, &t4, &t6))
			*reason = R_RANGE;
	}
	return 0;
}

int bg_parse_addr(const char *tok, struct bg_key4 *k4, struct bg_key6 *k6,
		  const char **reason)
{
	const char *r = R_NOT_IP;
	struct bg_key4 t4;
	struct bg_key6 t6;
	int kind = parse_token(tok, strlen(tok), &t4, &t6, &r);

	/* Either key pointer may be NULL when that family is of no interest. */
	if (kind == BG_KEY_IPV4 && k4)
		*k4 = t4;
	else if (kind == BG_KEY_IPV6 && k6)
		*k6 = t6;
	else if (!kind && reason)
		*reason = r;
	return kind;
}

/* ---- Key arrays --------------------------------------------------------- */

/* Doubles an array of *cap elements of size bytes; NULL when out of memory. */
static void *grow(void *p, size_t *cap, size_t size)
{
	size_t ncap = *cap ? *cap * 2 : BG_LIST_CAP_MIN;
	void *np;

	if (ncap < *cap || ncap > SIZE_MAX / size)
		return NULL;
	np = realloc(p, ncap * size);
	if (np)
		*cap = ncap;
	return np;
}

static int push4(struct bg_list *l, const struct bg_key4 *k)
{
	if (l->n4 == l->cap4) {
		struct bg_key4 *v = grow(l->v4, &l->cap4, sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v4 = v;
	}
	l->v4[l->n4++] = *k;
	return 0;
}

static int push6(struct bg_list *l, const struct bg_key6 *k)
{
	if (l->n6 == l->cap6) {
		struct bg_key6 *v = grow(l->v6, &l->cap6, sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v6 = v;
	}
	l->v6[l->n6++] = *k;
	return 0;
}

/* ---- Lines -------------------------------------------------------------- */

static inline int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static inline int is_comment(char c)
{
	return c == '#' || c == ';';
}

static FILE *report_stream(const struct bg_list_opts *opts)
{
	return opts && opts->report ? opts->report : stderr;
}

/*
 * "name:line: reason: 'text'". The text is the line without surrounding
 * blanks, cut to BG_LIST_QUOTE_MAX bytes (on a UTF-8 boundary) with "...",
 * control bytes escaped as \xNN so the report stays one printable line.
 */
static void report_line(FILE *out, const char *name, size_t lineno,
			const char *reason, const char *s, size_t n)
{
	char quote[BG_LIST_QUOTE_MAX * 4 + 4];
	size_t i, q = 0, cut;

	while (n && is_space(*s))
		s++, n--;
	while (n && is_space(s[n - 1]))
		n--;
	cut = n;
	if (cut > BG_LIST_QUOTE_MAX) {
		cut = BG_LIST_QUOTE_MAX;
		while (cut && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut--;
	}
	for (i = 0; i < cut; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f) {
			static const char hex[] = "0123456789abcdef";

			quote[q++] = '\\';
			quote[q++] = 'x';
			quote[q++] = hex[c >> 4];
			quote[q++] = hex[c & 15];
		} else {
			quote[q++] = (char)c;
		}
	}
	if (cut < n) {
		memcpy(quote + q, "...", 3);
		q += 3;
	}
	quote[q] = '\0';
	fprintf(out, "%s:%zu: %s: '%s'\n", name, lineno, reason, quote);
}

int bg_list_parse_buf(struct bg_list *l, const char *name, const char *buf,
		      size_t len, const struct bg_list_opts *opts)
{
	const char *p, *end;
	int has_nul;
	size_t lineno = 0, rejected = 0;
	struct bg_key4 k4;
	struct bg_key6 k6;

	if (!name)
		name = "-";
	l->files++;
	if (!len)
		return 0; /* buf may be NULL */
	p = buf;
	end = buf + len;
	/* A UTF-8 byte-order mark, as some editors write, is not content. */
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		p += 3;
	/* One scan for NUL bytes, so clean lists skip the check per line. */
	has_nul = memchr(buf, '\0', len) != NULL;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q = p, *t;
		const char *reason;
		size_t n = (size_t)(le - p);
		int kind;

		lineno++;
		if (n && p[n - 1] == '\r')
			n--;
		if (has_nul && memchr(p, '\0', n)) {
			reason = R_BINARY;
			goto reject;
		}
		if (n > BG_LIST_LINE_MAX) {
			reason = R_TOO_LONG;
			goto reject;
		}

		while (q < le && is_space(*q))
			q++;
		if (q == le || is_comment(*q))
			goto next; /* blank or comment line */
		t = q;
		while (q < le && !is_space(*q) && !is_comment(*q))
			q++;
		kind = parse_token(t, (size_t)(q - t), &k4, &k6, &reason);
		if (!kind)
			goto reject;
		while (q < le && is_space(*q))
			q++;
		if (q < le && !is_comment(*q)) {
			reason = R_TRAILING;
			goto reject;
		}
		if ((kind == BG_KEY_IPV4 ? push4(l, &k4) : push6(l, &k6)) < 0) {
			l->lines += lineno;
			l->rejected += rejected;
			return -ENOMEM;
		}
		l->accepted++;
		goto next;
reject:
		rejected++;
		report_line(report_stream(opts), name, lineno, reason, p,
			    (size_t)(le - p));
next:
		p = nl ? nl + 1 : end;
	}

	l->lines += lineno;
	l->rejected += rejected;
	return rejected && opts && opts->strict ? -EINVAL : 0;
}

/* ---- Files -------------------------------------------------------------- */

/* Whole file into a malloc'd buffer; 0, or -errno. */
static int read_all(int fd, char **bufp, size_t *lenp)
{
	struct stat st;
	size_t cap, len = 0;
	char *buf;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	/* Regular files: one read of the known size (+1 to see EOF). */
	cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1
						     : 64 * 1024;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (len == cap) {
			char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2)
						       : NULL;

			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			free(buf);
			return -err;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

int bg_list_parse_file(struct bg_list *l, const char *path,
		       const struct bg_list_opts *opts)
{
	char *buf = NULL;
	size_t len = 0;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
	} else {
		ret = read_all(fd, &buf, &len);
		close(fd);
	}
	if (ret < 0) {
		fprintf(report_stream(opts), "%s: %s\n", path, strerror(-ret));
		return ret;
	}
	ret = bg_list_parse_buf(l, path, buf, len, opts);
	free(buf);
	return ret;
}

/* ---- Sorting ------------------------------------------------------------ */

/*
 * Keys sort in memcmp() order of their bytes (kind, plen, then the address,
 * so numeric address order). Comparing big-endian 64-bit words gives that
 * same order without a memcmp() call per comparison.
 */
static inline __u64 load_be64(const void *p)
{
	__u64 v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static inline int cmp_u64(__u64 a, __u64 b)
{
	return (a > b) - (a < b);
}

static int cmp_key4(const void *a, const void *b)
{
	_Static_assert(sizeof(struct bg_key4) == 8, "one word");
	return cmp_u64(load_be64(a), load_be64(b));
}

static int cmp_key6(const void *a, const void *b)
{
	const char *x = a, *y = b;
	int i, c = 0;

	_Static_assert(sizeof(struct bg_key6) == 24, "three words");
	for (i = 0; i < 24 && !c; i += 8)
		c = cmp_u64(load_be64(x + i), load_be64(y + i));
	return c;
}

/* Below this many keys qsort() is as fast and needs no buffer. */
#define BG_RADIX_MIN 1024

/*
 * Stable LSD radix sort by bytes, last byte first: the result is memcmp()
 * order, the order qsort() with cmp_key* gives, in O(n) per byte. Bytes
 * equal in every key (kind, plen, pads, shared prefixes) cost no pass.
 * Needs a copy of the array; returns -1 when that cannot be had.
 */
static inline __attribute__((always_inline)) int
radix_sort(char *v, size_t n, size_t size)
{
	size_t (*cnt)[256], i, b;
	char *tmp, *src = v, *dst;

	if (n > SIZE_MAX / size)
		return -1;
	tmp = malloc(n * size);
	cnt = calloc(size, sizeof(*cnt));
	if (!tmp || !cnt) {
		free(tmp);
		free(cnt);
		return -1;
	}
	for (i = 0; i < n; i++)
		for (b = 0; b < size; b++)
			cnt[b][(unsigned char)v[i * size + b]]++;
	dst = tmp;
	for (b = size; b-- > 0;) {
		size_t *c = cnt[b], sum = 0, j;

		if (c[(unsigned char)v[b]] == n)
			continue; /* same byte everywhere */
		for (j = 0; j < 256; j++) {
			size_t t = c[j];

			c[j] = sum;
			sum += t;
		}
		for (i = 0; i < n; i++) {
			const char *e = src + i * size;

			memcpy(dst + c[(unsigned char)e[b]]++ * size, e, size);
		}
		dst = src;
		src = src == v ? tmp : v;
	}
	if (src != v)
		memcpy(v, src, n * size);
	free(tmp);
	free(cnt);
	return 0;
}

/*
 * Sorts n elements of size bytes into memcmp() order (unless already
 * sorted, as lists often are) and squeezes out duplicates; returns the new
 * count. Inlined so that size is a constant in each copy.
 */
static inline __attribute__((always_inline)) size_t
sort_unique(void *base, size_t n, size_t size,
	    int (*cmp)(const void *, const void *))
{
	char *v = base;
	size_t i, out;

	for (i = 1; i < n; i++)
		if (cmp(v + (i - 1) * size, v + i * size) > 0)
			break;
	if (i < n && (n < BG_RADIX_MIN || radix_sort(v, n, size) < 0))
		qsort(v, n, size, cmp);
	for (i = 1, out = n ? 1 : 0; i < n; i++) {
		if (!cmp(v + (out - 1) * size, v + i * size))
			continue;
		if (out != i)
			memcpy(v + out * size, v + i * size, size);
		out++;
	}
	return out;
}

void bg_list_finish(struct bg_list *l)
{
	size_t n;

	n = sort_unique(l->v4, l->n4, sizeof(*l->v4), cmp_key4);
	l->duplicates += l->n4 - n;
	l->n4 = n;
	n = sort_unique(l->v6, l->n6, sizeof(*l->v6), cmp_key6);
	l->duplicates += l->n6 - n;
	l->n6 = n;
}
