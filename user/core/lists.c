// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Blocklist parsing: files of addresses and CIDR prefixes into sorted,
 * de-duplicated, overlap-free keys.
 *
 * One concern, though a long file: address lists, from a line to the
 * finished key arrays. The sort and the overlap reduction are most of its
 * length (they are what makes 10M-line lists fast), and `check`'s
 * re-reading (bg_list_find_covering()) and the agent's store (bg_list_scan())
 * must use the same line parser.
 *
 * Format: one IPv4 or IPv6 address or CIDR prefix per line (plain lists,
 * FireHOL .ipset and .netset files, Spamhaus DROP files). '#' and ';' start
 * a comment anywhere on a line; blank lines, spaces, tabs and CRLF line ends
 * are ignored, as are a missing final newline and a UTF-8 byte-order mark at
 * the start of a list. Every other line is rejected, reported as
 * "name:line: reason: 'text'" and counted; the parse goes on without it.
 *
 * A prefix is "address/length": the length in decimal, 0..32 for IPv4 and
 * 0..128 for IPv6, no sign, no leading zero, no blank around the '/'. Host
 * bits set below the length ("10.1.2.3/8") are cleared, and the line is
 * reported as a warning; it is still accepted. An IPv4-mapped IPv6 entry
 * (::ffff:a.b.c.d[/n], n >= 96) is read as the IPv4 entry it names, with a
 * warning (rejected under strict); a wide prefix (IPv4 below /8, IPv6
 * below /16) is rejected unless allowed (see bg_list_parse_buf() in
 * lists.h).
 *
 * Speed (10M-line lists): lines are parsed in place, keys are appended to
 * amortised-doubling arrays (no allocation per line), and IPv4 dotted quads
 * go through a small parser with inet_pton() semantics (exactly four decimal
 * octets, 0..255, no leading zeros); IPv6 goes to inet_pton(). Finishing
 * sorts with a radix sort giving memcmp() order of the keys, then drops the
 * entries a shorter prefix covers, in place (see reduce_covered()).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bloomgate/bloom.h"
#include "core/grow.h"
#include "core/io.h"
#include "core/ip.h"
#include "core/lists.h"
#include "core/lines.h"
#include "core/par.h"

/* Longest line accepted, in bytes, without its "\n" or "\r\n". */
#define BG_LIST_LINE_MAX 4096
/* First allocation of a key array, in keys. */
#define BG_LIST_CAP_MIN 1024

static const char R_NOT_IP[] = "not an IP address";
static const char R_PLEN[] = "bad prefix length";
static const char R_PLEN4[] = "bad prefix length (IPv4 allows 0..32)";
static const char R_PLEN6[] = "bad prefix length (IPv6 allows 0..128)";
static const char R_PLEN_BLANK[] = "bad prefix length (no blanks around '/')";
static const char R_PREFIX[] = "a prefix, not an address";
static const char R_RANGE[] = "address ranges are not supported";
static const char R_ZONE[] = "IPv6 zone index not allowed";
static const char R_TRAILING[] = "trailing text after address";
static const char R_TOO_LONG[] = "line too long";
static const char R_BINARY[] = "binary data";
static const char R_MAPPED[] =
	"IPv4-mapped IPv6 address, refused by --strict (write it as IPv4)";
static const char R_WIDE4[] =
	"prefix shorter than /8 blocks too much (needs --allow-wide)";
static const char R_WIDE6[] =
	"prefix shorter than /16 blocks too much (needs --allow-wide)";
/* ::ffff:0:0/96, the IPv4-mapped IPv6 addresses (RFC 4291 2.5.5.2). */
#define BG_MAPPED_PLEN 96

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

/* A plain address, either family: the kind, or 0. */
static int parse_plain(const char *s, size_t n, struct bg_key4 *k4,
		       struct bg_key6 *k6)
{
	__u32 a4;
	__u8 a6[16];

	if (bg_parse_ip4(s, n, &a4) == 0) {
		bg_key4_init(k4, a4, 32);
		return BG_KEY_IPV4;
	}
	if (memchr(s, ':', n) && bg_parse_ip6(s, n, a6) == 0) {
		bg_key6_init(k6, a6, 128);
		return BG_KEY_IPV6;
	}
	return 0;
}

/*
 * The length after the '/': decimal digits only, no sign, no leading zero
 * ("0" alone is fine), at most max. Returns 0, or -1 and sets *reason. The
 * value saturates while scanning, so no length of digits can overflow.
 */
static int parse_plen(const char *s, size_t n, unsigned int max,
		      unsigned int *plen, const char **reason)
{
	unsigned int v = 0;
	size_t i;

	*reason = R_PLEN;
	if (!n || (s[0] == '0' && n > 1))
		return -1;
	for (i = 0; i < n; i++) {
		unsigned int d = (unsigned char)s[i] - (unsigned int)'0';

		if (d > 9)
			return -1;
		v = v > 1000 ? v : v * 10 + d;
	}
	if (v > max) {
		*reason = max == 32 ? R_PLEN4 : R_PLEN6;
		return -1;
	}
	*plen = v;
	return 0;
}

static int parse_token(const char *s, size_t n, struct bg_key4 *k4,
		       struct bg_key6 *k6, const char **reason,
		       int *host_bits);

/*
 * "addr/len": the address is s[0..m), the length l[0..ln). On success
 * *host_bits tells whether the address had bits set below the length.
 */
static int parse_cidr(const char *s, size_t m, const char *l, size_t ln,
		      struct bg_key4 *k4, struct bg_key6 *k6,
		      const char **reason, int *host_bits)
{
	struct bg_key4 t4;
	struct bg_key6 t6;
	unsigned int plen;
	__u32 a4;
	__u8 a6[16];
	int hb;

	if (bg_parse_ip4(s, m, &a4) == 0) {
		if (parse_plen(l, ln, 32, &plen, reason))
			return 0;
		bg_key4_init(k4, a4, (__u8)plen);
		*host_bits = k4->addr != a4;
		return BG_KEY_IPV4;
	}
	if (memchr(s, ':', m) && bg_parse_ip6(s, m, a6) == 0) {
		if (parse_plen(l, ln, 128, &plen, reason))
			return 0;
		bg_key6_init(k6, a6, (__u8)plen);
		*host_bits = memcmp(k6->addr, a6, sizeof(a6)) != 0;
		return BG_KEY_IPV6;
	}
	/* not an address before the '/'; say why if it is a zone index */
	*reason = R_NOT_IP;
	if (memchr(s, '%', m))
		parse_token(s, m, &t4, &t6, reason, &hb);
	return 0;
}

/*
 * One token of known length, no whitespace in it. On failure, tells why:
 * forms that are understood but not supported get their own reason.
 * *host_bits is set only for a prefix (callers start it at 0).
 */
static int parse_token(const char *s, size_t n, struct bg_key4 *k4,
		       struct bg_key6 *k6, const char **reason,
		       int *host_bits)
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
		size_t m = (size_t)(c - s);

		return parse_cidr(s, m, c + 1, n - m - 1, k4, k6, reason,
				  host_bits);
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

/* bg_parse_addr() (single: /32 and /128 only) and bg_parse_prefix(). */
static int parse_one(const char *tok, struct bg_key4 *k4, struct bg_key6 *k6,
		     const char **reason, int single)
{
	const char *r = R_NOT_IP;
	struct bg_key4 t4;
	struct bg_key6 t6;
	int hb = 0, kind = parse_token(tok, strlen(tok), &t4, &t6, &r, &hb);

	if (single && ((kind == BG_KEY_IPV4 && t4.plen != 32) ||
		       (kind == BG_KEY_IPV6 && t6.plen != 128))) {
		kind = 0;
		r = R_PREFIX;
	}
	/* Either key pointer may be NULL when that family is of no interest. */
	if (kind == BG_KEY_IPV4 && k4)
		*k4 = t4;
	else if (kind == BG_KEY_IPV6 && k6)
		*k6 = t6;
	else if (!kind && reason)
		*reason = r;
	return kind;
}

int bg_parse_addr(const char *tok, struct bg_key4 *k4, struct bg_key6 *k6,
		  const char **reason)
{
	return parse_one(tok, k4, k6, reason, 1);
}

int bg_parse_prefix(const char *tok, struct bg_key4 *k4, struct bg_key6 *k6,
		    const char **reason)
{
	return parse_one(tok, k4, k6, reason, 0);
}

int bg_prefix_covers4(const struct bg_key4 *prefix, __u32 addr_be)
{
	return !((addr_be ^ prefix->addr) & bg_mask4(prefix->plen));
}

int bg_prefix_covers6(const struct bg_key6 *prefix, const __u8 addr[16])
{
	unsigned int plen = prefix->plen < 128 ? prefix->plen : 128, i;

	for (i = 0; i < plen / 8; i++)
		if (addr[i] != prefix->addr[i])
			return 0;
	if (plen % 8) {
		__u8 m = (__u8)(0xff00 >> (plen % 8));

		if ((addr[i] ^ prefix->addr[i]) & m)
			return 0;
	}
	return 1;
}

/* ---- Key arrays --------------------------------------------------------- */

static int push4(struct bg_list *l, const struct bg_key4 *k)
{
	if (bg_grow(&l->v4, &l->cap4, l->n4 + 1, sizeof(*l->v4), BG_LIST_CAP_MIN))
		return -ENOMEM;
	l->v4[l->n4++] = *k;
	return 0;
}

static int push6(struct bg_list *l, const struct bg_key6 *k)
{
	if (bg_grow(&l->v6, &l->cap6, l->n6 + 1, sizeof(*l->v6), BG_LIST_CAP_MIN))
		return -ENOMEM;
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


/* What parse_line() noticed about an entry it accepted (*flags). */
#define LINE_F_HOST_BITS 1 /* bits set below the length, cleared */
#define LINE_F_MAPPED 2 /* IPv4-mapped IPv6, made the IPv4 key */
/* and what bg_list_parse_buf() adds before reporting */
#define LINE_F_WIDE 4 /* a wide prefix, loaded: opted in */
#define LINE_F_WIDE_ALLOW 8 /* a wide prefix, loaded: an allowlist's */

/*
 * The one warning of an accepted line, its reasons joined with "; ":
 * "name:line: warning: host bits set, using 10.0.0.0/8: 'text'",
 * "warning: IPv4-mapped IPv6, using 10.9.0.1",
 * "warning: host bits set, using 0.0.0.0/0; wide prefix, loaded
 * (--allow-wide)". The key is written as it was loaded, its /length
 * left out for a single address.
 */
static void report_warning(const struct bg_reporter *out, const char *name,
			   size_t lineno, int flags, int kind,
			   const struct bg_key4 *k4, const struct bg_key6 *k6,
			   const char *s, size_t n)
{
	char addr[INET6_ADDRSTRLEN], key[INET6_ADDRSTRLEN + 8], why[192];
	unsigned int plen, bits;
	size_t w = 0;

	if (kind == BG_KEY_IPV4) {
		inet_ntop(AF_INET, &k4->addr, addr, sizeof(addr));
		plen = k4->plen;
		bits = 32;
	} else {
		inet_ntop(AF_INET6, k6->addr, addr, sizeof(addr));
		plen = k6->plen;
		bits = 128;
	}
	if (plen == bits && (flags & LINE_F_MAPPED))
		snprintf(key, sizeof(key), "%s", addr);
	else
		snprintf(key, sizeof(key), "%s/%u", addr, plen);
	/* mapped names the key loaded, masked: host bits need no word */
	if (flags & LINE_F_MAPPED)
		w += (size_t)snprintf(why + w, sizeof(why) - w,
				      "warning: IPv4-mapped IPv6, using %s", key);
	else if (flags & LINE_F_HOST_BITS)
		w += (size_t)snprintf(why + w, sizeof(why) - w,
				      "warning: host bits set, using %s", key);
	if (flags & (LINE_F_WIDE | LINE_F_WIDE_ALLOW))
		snprintf(why + w, sizeof(why) - w, "%s%s", w ? "; " : "warning: ",
			 flags & LINE_F_WIDE ?
				 "wide prefix, loaded (--allow-wide)" :
				 "wide prefix in an allowlist: lets all of it through");
	bg_report_line(out, name, lineno, why, s, n);
}

/* parse_line() outcomes besides an entry's kind (BG_KEY_IPV4/6). */
#define LINE_SKIP 0 /* blank or comment */
#define LINE_REJECT (-1) /* *reason tells why */

/*
 * ::ffff:a.b.c.d/n, n >= 96, into a.b.c.d/(n - 96). No IPv4 packet is ever
 * probed with an IPv6 key, so the IPv6 key of such an entry would never
 * match anything: the list meant the IPv4 address. A shorter ::ffff:0:0/n
 * also covers addresses that are not mapped ones: an IPv6 prefix, left.
 */
static inline int unmap(const struct bg_key6 *k6, struct bg_key4 *k4)
{
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };
	__u32 a;

	if (k6->plen < BG_MAPPED_PLEN || memcmp(k6->addr, mapped, 12))
		return 0;
	memcpy(&a, k6->addr + 12, sizeof(a));
	bg_key4_init(k4, a, (__u8)(k6->plen - BG_MAPPED_PLEN));
	return 1;
}

/*
 * One line [p, le): an entry (its kind, the key filled, *flags set:
 * LINE_F_HOST_BITS, LINE_F_MAPPED), LINE_SKIP or LINE_REJECT.
 */
static inline __attribute__((always_inline)) int
parse_line(const char *p, const char *le, int has_nul, struct bg_key4 *k4,
	   struct bg_key6 *k6, const char **reason, int *flags)
{
	const char *q = p, *t;
	size_t n = (size_t)(le - p);
	int kind, host_bits = 0;

	if (n && p[n - 1] == '\r')
		n--;
	if (has_nul && memchr(p, '\0', n)) {
		*reason = R_BINARY;
		return LINE_REJECT;
	}
	if (n > BG_LIST_LINE_MAX) {
		*reason = R_TOO_LONG;
		return LINE_REJECT;
	}

	while (q < le && is_space(*q))
		q++;
	if (q == le || is_comment(*q))
		return LINE_SKIP;
	t = q;
	while (q < le && !is_space(*q) && !is_comment(*q))
		q++;
	*flags = 0;
	kind = parse_token(t, (size_t)(q - t), k4, k6, reason, &host_bits);
	if (!kind) {
		/* "192.0.2.0/ 24": the length is behind a blank */
		if (*reason == R_PLEN &&
		    memchr(t, '/', (size_t)(q - t)) == q - 1) {
			const char *r = q;

			while (r < le && is_space(*r))
				r++;
			if (r < le && !is_comment(*r))
				*reason = R_PLEN_BLANK;
		}
		return LINE_REJECT;
	}
	while (q < le && is_space(*q))
		q++;
	if (q < le && !is_comment(*q)) {
		/* "192.0.2.0 /24" */
		*reason = *q == '/' ? R_PLEN_BLANK : R_TRAILING;
		return LINE_REJECT;
	}
	if (host_bits)
		*flags |= LINE_F_HOST_BITS;
	if (kind == BG_KEY_IPV6 && unmap(k6, k4)) {
		*flags |= LINE_F_MAPPED;
		kind = BG_KEY_IPV4;
	}
	return kind;
}

int bg_list_entry(const char *s, size_t n, struct bg_key4 *k4,
		  struct bg_key6 *k6, const char **reason)
{
	const char *r = R_NOT_IP;
	struct bg_key4 t4;
	struct bg_key6 t6;
	size_t i;
	int fl, kind = parse_line(s, s + n, 1, &t4, &t6, &r, &fl);

	/* the one token and nothing else: a blank, a comment or a line
	 * end beside it would be text a list line could hold, not an entry */
	for (i = 0; kind > 0 && i < n; i++)
		if (is_space(s[i]) || is_comment(s[i]) || s[i] == '\n') {
			kind = 0;
			r = i ? R_TRAILING : R_NOT_IP;
		}
	if (kind == BG_KEY_IPV4 && k4)
		*k4 = t4;
	else if (kind == BG_KEY_IPV6 && k6)
		*k6 = t6;
	else if (kind <= 0 && reason)
		*reason = r;
	return kind > 0 ? kind : 0;
}

/* A wide prefix (lists.h): 1, and its reason of rejection. */
static inline int is_wide(int kind, const struct bg_key4 *k4,
			  const struct bg_key6 *k6, const char **reason)
{
	if (!bg_key_wide(kind, k4, k6))
		return 0;
	*reason = kind == BG_KEY_IPV4 ? R_WIDE4 : R_WIDE6;
	return 1;
}

/*
 * One parse's state, shared by the whole-buffer parse and the pieces of a
 * parallel one (bg_list_parse_fd()): where keys, counts and reports go.
 */
struct lparse {
	struct bg_list *l;
	const char *name;
	const struct bg_list_opts *opts;
	struct bg_reporter rep;
	int strict, allow_wide, allowlist;
	unsigned int worker; /* bg_entry_fn's */
	size_t line0; /* lines before this piece (absolute = line0 + local) */
	size_t rejected, warnings;
};

static void lparse_init(struct lparse *c, struct bg_list *l, const char *name,
			const struct bg_list_opts *opts)
{
	memset(c, 0, sizeof(*c));
	c->l = l;
	c->name = name ? name : "-";
	c->opts = opts;
	c->rep = bg_reporter_of(opts);
	c->strict = opts && opts->strict;
	c->allow_wide = opts && opts->allow_wide;
	c->allowlist = opts && opts->allowlist;
}

/* An accepted entry: its key into the list, its line to opts->entry. */
static inline __attribute__((always_inline)) int
lparse_accept(struct lparse *c, int kind, const struct bg_key4 *k4,
	      const struct bg_key6 *k6, size_t lineno, uint64_t off,
	      uint32_t line_len)
{
	const struct bg_list_opts *opts = c->opts;

	if ((kind == BG_KEY_IPV4 ? push4(c->l, k4) : push6(c->l, k6)) < 0)
		return -ENOMEM;
	c->l->accepted++;
	if (opts && opts->entry) {
		struct bg_entry_ref ref = {
			.source = opts->source, .line = c->line0 + lineno,
			.line_off = off,
			.line_len = line_len,
			.kind = (uint8_t)kind,
			.allow = (uint8_t)!!c->allowlist,
			.key = kind == BG_KEY_IPV4 ? (const void *)k4 :
						     (const void *)k6,
		};

		opts->entry(opts->entry_ctx, c->worker, &ref);
	}
	return 0;
}

/* 0x80 in every byte of x that is 0, 0 elsewhere (exact, no carries). */
static inline uint64_t swar_zero(uint64_t x)
{
	const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL;

	return ~(((x & lo7) + lo7) | x | lo7);
}

/* Bit i set for every byte i of f (0x80 or 0) that is 0x80: the eight
 * bits gathered into the top byte by one multiplication. */
static inline unsigned int swar_mask(uint64_t f)
{
	return (unsigned int)(((f >> 7) * 0x0102040810204080ULL) >> 56);
}

/*
 * The commonest line of a big list, one dotted-quad IPv4 address alone
 * ("192.0.2.1\n"): its newline found and its address read from two
 * 8-byte words, with no branch on which byte is a digit. s has 16
 * readable bytes. Returns the line's length (s[len] is its newline) and
 * the address in network order, or 0 for any other line, which
 * parse_line() then reads; a line this takes parse_line() reads as the
 * same /32 with no warning (test_lists compares the two on every kind of
 * line).
 */
static inline __attribute__((always_inline)) size_t
fast_ip4_line(const char *s, __u32 *addr_be)
{
	const uint64_t ones = 0x0101010101010101ULL;
	unsigned int dig = 0, dot = 0, nl = 0, i, len, x, o, a = 0;
	unsigned int end[4], l;
	unsigned char d[24]; /* d[3 + i]: byte i's digit value, 0 if none */
	uint64_t w[2];

	memcpy(w, s, sizeof(w));
	for (i = 0; i < 2; i++) {
		uint64_t v = le64toh(w[i]), lo = v & (ones * 0x0f);
		/* a digit: high nibble 3, low nibble + 6 below 16 */
		uint64_t fd = swar_zero((v & (ones * 0xf0)) ^ (ones * 0x30)) &
			      (~(lo + ones * 6) & (ones * 0x10)) << 3;

		dig |= swar_mask(fd) << (8 * i);
		dot |= swar_mask(swar_zero(v ^ (ones * '.'))) << (8 * i);
		nl |= swar_mask(swar_zero(v ^ (ones * '\n'))) << (8 * i);
		w[i] = htole64(lo & ((fd >> 7) * 0xff));
	}
	memset(d, 0, 3);
	memcpy(d + 3, w, sizeof(w));
	if (!nl)
		return 0;
	len = (unsigned int)__builtin_ctz(nl);
	x = (1u << len) - 1; /* len <= 15 */
	if (((dig | dot) & x) != x)
		return 0; /* a byte neither digit nor dot */
	x &= dot;
	for (i = 0; i < 3; i++) {
		if (!x)
			return 0;
		end[i] = (unsigned int)__builtin_ctz(x);
		x &= x - 1;
	}
	if (x)
		return 0;
	end[3] = len;
	for (i = 0; i < 4; i++) {
		/* octet i is s[end[i] - l, end[i]), after a dot or the
		 * start: d holds 0 at a dot and before the line */
		l = end[i] - (i ? end[i - 1] + 1 : 0);
		if (l - 1 > 2)
			return 0; /* empty, or more than 3 digits */
		if (l > 1 && s[end[i] - l] == '0')
			return 0; /* a leading zero: parse_line() says so */
		o = d[3 + end[i] - 1] + 10u * d[3 + end[i] - 2] +
		    (l == 3) * 100u * d[3 + end[i] - 3];
		if (o > 255)
			return 0;
		a = a << 8 | o;
	}
	*addr_be = htonl(a);
	return len;
}

/* Line lineno (of this piece) [s, e), its first byte at offset off of the
 * list. 0, or -ENOMEM. */
static inline __attribute__((always_inline)) int
lparse_line(struct lparse *c, const char *s, const char *e, int has_nul,
	    size_t lineno, uint64_t off)
{
	const char *reason = NULL;
	struct bg_key4 k4;
	struct bg_key6 k6;
	int kind, fl = 0;

	kind = parse_line(s, e, has_nul, &k4, &k6, &reason, &fl);
	if (kind == LINE_SKIP)
		return 0;
	if (kind > 0 && (fl & LINE_F_MAPPED) && c->strict) {
		/* strict: the list says what it means, or is refused */
		kind = LINE_REJECT;
		reason = R_MAPPED;
	}
	/*
	 * A wide prefix in an allowlist loads without the opt-in: it
	 * only lets traffic through, so the worst it does is turn
	 * the filter off for its range, never cut the gateway off.
	 * The warning says so, since that is rarely what was meant.
	 */
	if (kind > 0 && is_wide(kind, &k4, &k6, &reason)) {
		if (c->allowlist)
			fl |= LINE_F_WIDE_ALLOW;
		else if (c->allow_wide)
			fl |= LINE_F_WIDE;
		else
			kind = LINE_REJECT;
	}
	if (kind == LINE_REJECT) {
		c->rejected++;
		bg_report_line(&c->rep, c->name, c->line0 + lineno, reason, s,
			       (size_t)(e - s));
		return 0;
	}
	if (lparse_accept(c, kind, &k4, &k6, lineno, off,
			  (uint32_t)(e - s - (e > s && e[-1] == '\r'))) < 0)
		return -ENOMEM;
	if (fl) {
		c->warnings++;
		report_warning(&c->rep, c->name, c->line0 + lineno, fl, kind,
			       &k4, &k6, s, (size_t)(e - s));
	}
	return 0;
}

int bg_list_parse_buf(struct bg_list *l, const char *name, const char *buf,
		      size_t len, const struct bg_list_opts *opts)
{
	struct bg_line_iter it;
	struct lparse c;
	const char *s, *e;
	int ret = 0;

	lparse_init(&c, l, name, opts);
	l->files++;
	bg_lines_init(&it, buf, len);
	while (bg_lines_next(&it, &s, &e))
		if ((ret = lparse_line(&c, s, e, it.has_nul, it.lineno,
				       (uint64_t)(s - buf))) < 0)
			break;
	l->lines += it.lineno;
	l->rejected += c.rejected;
	l->warnings += c.warnings;
	if (ret)
		return ret;
	return c.rejected && c.strict ? -EINVAL : 0;
}

/* ---- A regular file, in pieces on several threads ------------------------
 *
 * A list of 100M lines is 1.4 GB: read whole it was most of a load's
 * memory, and parsed on one thread most of its time. bg_list_parse_fd()
 * splits the file at line boundaries into one piece per thread; each
 * thread reads its piece in chunks (pread: only a chunk a thread is held
 * in memory) into keys of its own. Piece 0 runs on the calling thread and
 * reports at once; the others hold their reports back, with their lines
 * counted within the piece, and the caller passes them on after the
 * pieces before, with the lines of those added: the reports come in line
 * order and say what a parse of the whole buffer says. A piece whose held
 * reports grow past BG_PAR_HELD_BYTES stops at a line boundary, and the
 * caller parses the rest of it itself, reporting at once (a list of
 * nothing but rejected lines costs no more memory than it did). With an
 * entry sink the newlines of every piece are counted first, so that every
 * entry is handed on with its line as it is read.
 */
#define BG_PAR_CHUNK (8u << 20)
#define BG_PAR_HELD_BYTES (16u << 20)
/* No piece smaller than this: threads cost more than they gain there. */
#define BG_PAR_PIECE_MIN (1u << 20)

struct held_diag {
	size_t line;
	int warning;
	char *reason, *text;
};

struct piece {
	uint64_t start, end; /* [start, end) of the file; start begins a line */
	uint64_t stop; /* parsed up to here: end, or where it stopped */
	size_t lines; /* lines of [start, stop) */
	size_t nl; /* newlines of [start, end), when counted */
	size_t line0; /* the lines before it, as used while parsing */
	struct bg_list own; /* pieces after the first: their keys */
	struct lparse c;
	struct held_diag *d;
	size_t nd, capd, held_bytes;
	int full; /* held reports past the bound: stop */
	int err;
	char *buf; /* the chunk */
	size_t cap;
};

struct fdparse {
	int fd;
	struct bg_list *l;
	const char *name;
	const struct bg_list_opts *opts;
	unsigned int n;
	struct piece pc[BG_PARSE_WORKERS_MAX];
};

static void hold_diag(void *ctx, const struct bg_diag *d)
{
	struct piece *p = ctx;
	struct held_diag *h;

	if (bg_grow(&p->d, &p->capd, p->nd + 1, sizeof(*p->d), 64)) {
		p->err = -ENOMEM;
		return;
	}
	h = &p->d[p->nd];
	h->line = d->line;
	h->warning = d->warning;
	h->reason = strdup(d->reason);
	h->text = strdup(d->text);
	if (!h->reason || !h->text) {
		free(h->reason);
		free(h->text);
		p->err = -ENOMEM;
		return;
	}
	p->nd++;
	p->held_bytes += sizeof(*h) + strlen(h->reason) + strlen(h->text) + 2;
	if (p->held_bytes > BG_PAR_HELD_BYTES)
		p->full = 1;
}

/* Reads [from, p->end) chunk by chunk: each call, the next run of whole
 * lines (the last may lack its "\n" at the end of the piece) in p->buf,
 * [0, *n) at file offset *off. 1, 0 at the end, or -errno. */
struct rd {
	uint64_t pos; /* next byte to read */
	size_t have, used; /* bytes in the buffer; of them, handed out */
};

static int rd_next(int fd, struct piece *p, struct rd *r, uint64_t *off,
		   size_t *n)
{
	const char *nl;

	if (r->used) {
		memmove(p->buf, p->buf + r->used, r->have - r->used);
		r->have -= r->used;
		r->used = 0;
	}
	for (;;) {
		if (r->pos < p->end && r->have < p->cap) {
			size_t want = p->cap - r->have;
			ssize_t got;

			if ((uint64_t)want > p->end - r->pos)
				want = (size_t)(p->end - r->pos);
			got = pread(fd, p->buf + r->have, want, (off_t)r->pos);
			if (got < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			if (got == 0) /* the file shrank: it ends here */
				p->end = r->pos;
			r->have += (size_t)got;
			r->pos += (uint64_t)got;
		}
		if (!r->have)
			return 0;
		*off = r->pos - r->have;
		if (r->pos >= p->end) {
			*n = r->used = r->have;
			return 1;
		}
		nl = memrchr(p->buf, '\n', r->have);
		if (nl) {
			*n = r->used = (size_t)(nl - p->buf) + 1;
			return 1;
		}
		if (r->have == p->cap) { /* a line longer than the chunk */
			char *nb = realloc(p->buf, 2 * p->cap);

			if (!nb)
				return -ENOMEM;
			p->buf = nb;
			p->cap *= 2;
		}
	}
}

/* Parses p from byte from (a line start; p->lines lines before it) to its
 * end, or until its held reports are full. */
static void piece_parse(struct fdparse *f, struct piece *p, uint64_t from)
{
	struct rd r = { .pos = from };
	uint64_t off;
	size_t n;
	int ret;

	p->stop = from;
	if (!p->buf) {
		p->cap = BG_PAR_CHUNK;
		p->buf = malloc(p->cap);
		if (!p->buf) {
			p->err = -ENOMEM;
			return;
		}
	}
	while ((ret = rd_next(f->fd, p, &r, &off, &n)) > 0) {
		const char *q = p->buf, *end = p->buf + n, *nl, *e;
		int has_nul = memchr(q, '\0', n) != NULL;

		/* a UTF-8 byte-order mark, as some editors write, is not
		 * content (as bg_lines_init()) */
		if (off == 0 && n >= 3 && !memcmp(q, "\xef\xbb\xbf", 3))
			q += 3;
		while (q < end) {
			size_t fl;
			__u32 a;

			if (!has_nul && end - q >= 16 && (fl = fast_ip4_line(q, &a))) {
				struct bg_key4 k4;

				bg_key4_init(&k4, a, 32);
				p->lines++;
				ret = lparse_accept(&p->c, BG_KEY_IPV4, &k4, NULL,
						    p->lines,
						    off + (uint64_t)(q - p->buf),
						    (uint32_t)fl);
				q += fl + 1;
				if (ret < 0) {
					p->err = ret;
					return;
				}
				continue; /* no report: p->full as it was */
			}
			nl = memchr(q, '\n', (size_t)(end - q));
			e = nl ? nl : end;
			p->lines++;
			ret = lparse_line(&p->c, q, e, has_nul, p->lines,
					  off + (uint64_t)(q - p->buf));
			q = nl ? nl + 1 : end;
			if (ret < 0 || p->err) {
				p->err = ret < 0 ? ret : p->err;
				return;
			}
			if (p->full) {
				p->stop = off + (uint64_t)(q - p->buf);
				return;
			}
		}
		p->stop = off + n;
	}
	if (ret < 0)
		p->err = ret;
	else
		p->stop = p->end;
}

/* Newlines of [p->start, p->end), into p->nl. */
static void piece_count(struct fdparse *f, struct piece *p)
{
	struct rd r = { .pos = p->start };
	uint64_t off;
	size_t n, c = 0;
	const char *q, *e;
	int ret;

	if (!p->buf) {
		p->cap = BG_PAR_CHUNK;
		p->buf = malloc(p->cap);
		if (!p->buf) {
			p->err = -ENOMEM;
			return;
		}
	}
	while ((ret = rd_next(f->fd, p, &r, &off, &n)) > 0)
		for (q = p->buf, e = p->buf + n; (q = memchr(q, '\n', (size_t)(e - q)));
		     q++)
			c++;
	if (ret < 0)
		p->err = ret;
	p->nl = c;
}

static void job_count(void *ctx, unsigned int t)
{
	struct fdparse *f = ctx;

	piece_count(f, &f->pc[t]);
}

static void job_parse(void *ctx, unsigned int t)
{
	struct fdparse *f = ctx;
	struct piece *p = &f->pc[t];

	if (!p->err)
		piece_parse(f, p, p->start);
}

/* The first line start at or after byte at (size when none). */
static uint64_t line_start(int fd, uint64_t at, uint64_t size)
{
	char win[4096];

	if (!at)
		return 0;
	at--; /* at itself begins a line when the byte before is "\n" */
	while (at < size) {
		ssize_t got = pread(fd, win, sizeof(win), (off_t)at);
		const char *nl;

		if (got <= 0) {
			if (got < 0 && errno == EINTR)
				continue;
			return size;
		}
		nl = memchr(win, '\n', (size_t)got);
		if (nl)
			return at + (uint64_t)(nl - win) + 1;
		at += (uint64_t)got;
	}
	return size;
}

/* Appends m keys of size bytes from src to *dst (n, cap), releasing the
 * pages of src as they are copied: two copies of half the keys are not
 * held at once. 0 or -ENOMEM. */
static int append_keys(void **dst, size_t *n, size_t *cap, void *src, size_t m,
		       size_t size)
{
	const size_t step = 64u << 20, pg = 4096;
	char *d, *s = src;
	size_t done = 0;

	if (!m)
		return 0;
	if (*n + m > *cap) {
		d = realloc(*dst, (*n + m) * size);
		if (!d)
			return -ENOMEM;
		*dst = d;
		*cap = *n + m;
	}
	d = (char *)*dst + *n * size;
	while (done < m * size) {
		size_t c = m * size - done < step ? m * size - done : step;
		uintptr_t a = ((uintptr_t)s + done + pg - 1) & ~(uintptr_t)(pg - 1);
		uintptr_t b = ((uintptr_t)s + done + c) & ~(uintptr_t)(pg - 1);

		memcpy(d + done, s + done, c);
		/* src is freed after: its copied whole pages can go now */
		if (b > a)
			madvise((void *)a, b - a, MADV_DONTNEED);
		done += c;
	}
	*n += m;
	return 0;
}

int bg_list_parse_fd(struct bg_list *l, const char *name, int fd,
		     uint64_t size, const struct bg_list_opts *opts)
{
	struct bg_reporter rep = bg_reporter_of(opts);
	const char *fname = name ? name : "-";
	struct fdparse *f;
	unsigned int n, i;
	size_t line0 = 0, j;
	int ret = 0, strict = opts && opts->strict;
	size_t rejected = 0;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fd = fd;
	f->l = l;
	f->name = name ? name : "-";
	f->opts = opts;
	n = bg_par_threads(opts ? opts->threads : 0);
	if ((uint64_t)n > size / BG_PAR_PIECE_MIN)
		n = size / BG_PAR_PIECE_MIN ? (unsigned int)(size / BG_PAR_PIECE_MIN) : 1;
	f->n = n;
	for (i = 0; i < n; i++) {
		struct piece *p = &f->pc[i];

		p->start = i ? line_start(fd, size * i / n, size) : 0;
		if (i && p->start < f->pc[i - 1].start)
			p->start = f->pc[i - 1].start;
		if (i)
			f->pc[i - 1].end = p->start;
		p->end = size;
		lparse_init(&p->c, i ? &p->own : l, f->name, opts);
		p->c.worker = i;
		if (i)
			p->c.rep = bg_reporter_make(NULL, hold_diag, p);
	}
	l->files++;
	if (opts && opts->entry && n > 1) {
		/* every entry's line as it is read: the lines before each
		 * piece first */
		bg_par_run(n - 1, job_count, f);
		for (i = 0; i < n; i++) {
			f->pc[i].c.line0 = f->pc[i].line0 = line0;
			line0 += f->pc[i].nl;
		}
	}
	bg_par_run(n, job_parse, f);
	/* in piece order: the held reports with the lines before added, the
	 * rest of a piece that stopped, the keys */
	line0 = 0;
	for (i = 0; i < n; i++) {
		struct piece *p = &f->pc[i];

		if (i && !ret) {
			for (j = 0; j < p->nd; j++) {
				struct bg_diag d = {
					.file = f->name,
					.line = p->d[j].line - p->line0 + line0,
					.warning = p->d[j].warning,
					.reason = p->d[j].reason,
					.text = p->d[j].text,
				};

				if (rep.fn)
					rep.fn(rep.ctx, &d);
				else
					bg_diag_print(rep.out ? rep.out : stderr, &d);
			}
			if (!p->err && p->stop < p->end) {
				p->full = 0;
				p->c.rep = rep;
				p->c.line0 = line0;
				/* local numbers go on from the lines done */
				p->line0 = line0;
				piece_parse(f, p, p->stop);
			}
		}
		if (p->err && !ret)
			ret = p->err;
		line0 += p->lines;
		rejected += p->c.rejected;
		l->rejected += p->c.rejected;
		l->warnings += p->c.warnings;
		if (i && !ret) {
			l->accepted += p->own.accepted;
			if (append_keys((void **)&l->v4, &l->n4, &l->cap4, p->own.v4,
					p->own.n4, sizeof(*l->v4)) ||
			    append_keys((void **)&l->v6, &l->n6, &l->cap6, p->own.v6,
					p->own.n6, sizeof(*l->v6)))
				ret = -ENOMEM;
		}
	}
	l->lines += line0;
	for (i = 0; i < n; i++) {
		for (j = 0; j < f->pc[i].nd; j++) {
			free(f->pc[i].d[j].reason);
			free(f->pc[i].d[j].text);
		}
		free(f->pc[i].d);
		free(f->pc[i].buf);
		bg_list_free(&f->pc[i].own);
	}
	free(f);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		bg_report_file(&rep, fname, strerror(-ret));
		return ret;
	}
	return rejected && strict ? -EINVAL : 0;
}

/* ---- Files -------------------------------------------------------------- */

static int parse_buf(void *l, const char *name, const char *buf, size_t len,
		     const void *opts)
{
	return bg_list_parse_buf(l, name, buf, len, opts);
}

int bg_list_parse_file(struct bg_list *l, const char *path,
		       const struct bg_list_opts *opts)
{
	struct bg_reporter rep = bg_reporter_of(opts);

	return bg_parse_file(path, &rep, parse_buf, l, opts);
}

int bg_list_scan(const char *buf, size_t len, bg_scan_fn cb, void *ctx)
{
	char text[BG_LIST_LINE_MAX + 1];
	const char *s, *e, *reason;
	struct bg_line_iter it;
	struct bg_key4 e4;
	struct bg_key6 e6;
	size_t count = 0;
	int kind, fl;

	bg_lines_init(&it, buf, len);
	while (bg_lines_next(&it, &s, &e)) {
		kind = parse_line(s, e, it.has_nul, &e4, &e6, &reason, &fl);
		if (kind != BG_KEY_IPV4 && kind != BG_KEY_IPV6)
			continue; /* blank, comment or rejected */
		count++;
		if (!cb)
			continue;
		/* an accepted line has at most BG_LIST_LINE_MAX bytes */
		while (s < e && is_space(*s))
			s++;
		while (e > s && is_space(e[-1]))
			e--;
		memcpy(text, s, (size_t)(e - s));
		text[e - s] = '\0';
		cb(ctx, it.lineno, text, kind == BG_KEY_IPV4 ? &e4 : NULL,
		   kind == BG_KEY_IPV6 ? &e6 : NULL);
	}
	return count > INT_MAX ? INT_MAX : (int)count;
}

/* bg_list_find_covering(): the scan, filtered to the entries covering. */
struct covering {
	const char *path;
	const struct bg_key4 *k4;
	const struct bg_key6 *k6;
	bg_cover_fn cb;
	void *ctx;
	size_t count;
};

static void on_scan_cover(void *ctx, size_t line, const char *text,
			  const struct bg_key4 *k4, const struct bg_key6 *k6)
{
	struct covering *c = ctx;

	if (k4 ? !c->k4 || !bg_prefix_covers4(k4, c->k4->addr)
	       : !c->k6 || !bg_prefix_covers6(k6, c->k6->addr))
		return;
	c->count++;
	if (c->cb)
		c->cb(c->ctx, c->path, line, text, k4, k6);
}

int bg_list_find_covering(const char *path, const struct bg_key4 *k4,
			  const struct bg_key6 *k6, bg_cover_fn cb, void *ctx)
{
	struct covering c = { .path = path, .k4 = k4, .k6 = k6, .cb = cb,
			      .ctx = ctx };
	char *buf = NULL;
	size_t len = 0;
	int ret;

	if (!k4 && !k6)
		return -EINVAL;
	ret = bg_reread_list(path, &buf, &len);
	if (ret < 0)
		return ret;
	bg_list_scan(buf, len, on_scan_cover, &c);
	free(buf);
	return c.count > INT_MAX ? INT_MAX : (int)c.count;
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
 * The LSD passes of a radix sort over bytes [lo, size) of the n keys in a,
 * their counts in cnt[lo..size), b a buffer as large: byte by byte, the
 * last first, each a stable scatter into the other buffer (a byte equal
 * in every key costs none). Returns the buffer holding the result.
 */
static inline __attribute__((always_inline)) char *
lsd_passes(char *a, char *b, size_t n, size_t size, size_t lo,
	   size_t (*cnt)[256])
{
	char *src = a, *dst = b, *t;
	size_t i, byte;

	for (byte = size; byte-- > lo;) {
		size_t *c = cnt[byte], sum = 0, j;

		if (c[(unsigned char)src[byte]] == n)
			continue; /* same byte everywhere */
		for (j = 0; j < 256; j++) {
			size_t x = c[j];

			c[j] = sum;
			sum += x;
		}
		for (i = 0; i < n; i++) {
			const char *e = src + i * size;

			memcpy(dst + c[(unsigned char)e[byte]]++ * size, e, size);
		}
		t = src;
		src = dst;
		dst = t;
	}
	return src;
}

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
	char *tmp, *src;

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
	src = lsd_passes(v, tmp, n, size, 0, cnt);
	if (src != v)
		memcpy(v, src, n * size);
	free(tmp);
	free(cnt);
	return 0;
}

/*
 * The same order on several threads, for big arrays: the first byte that
 * differs between keys splits them into 256 buckets (counted and scattered
 * by every thread over its slice, in slice order: stable), then each
 * bucket is sorted alone by the bytes after it (the LSD sort above, on a
 * bucket small enough to stay in the caches), the buckets shared out in
 * runs of about n / threads keys. Same result as radix_sort(), bit for bit.
 */
#define BG_RADIX_MT_MIN (1u << 20)

struct msd {
	char *v, *tmp;
	size_t n, size, byte; /* the splitting byte */
	unsigned int nt;
	size_t (*cnt)[256];   /* per thread: its slice's counts of byte */
	unsigned char diff[BG_PARSE_WORKERS_MAX][24]; /* per thread: bytes that differ */
	size_t start[257];    /* the buckets in tmp */
	unsigned int bfirst[BG_PARSE_WORKERS_MAX + 1]; /* thread t: buckets [bfirst[t], bfirst[t + 1]) */
	int nomem;
};

/* Thread t: which bytes of its slice's keys differ from the first key's
 * (or-ed xors, a word at a time: size is a multiple of 8). */
static void msd_diff(void *ctx, unsigned int t)
{
	struct msd *m = ctx;
	size_t i0 = m->n * t / m->nt, i1 = m->n * (t + 1) / m->nt, i, w;
	uint64_t d[3] = { 0 }, f[3], x;

	memcpy(f, m->v, m->size);
	for (i = i0; i < i1; i++)
		for (w = 0; w < m->size / 8; w++) {
			memcpy(&x, m->v + i * m->size + w * 8, 8);
			d[w] |= x ^ f[w];
		}
	memcpy(m->diff[t], d, m->size);
}

/* Thread t: its slice's counts of the splitting byte. */
static void msd_count(void *ctx, unsigned int t)
{
	struct msd *m = ctx;
	size_t i0 = m->n * t / m->nt, i1 = m->n * (t + 1) / m->nt, i;
	size_t *c = m->cnt[t];

	for (i = i0; i < i1; i++)
		c[(unsigned char)m->v[i * m->size + m->byte]]++;
}

static void msd_scatter(void *ctx, unsigned int t)
{
	struct msd *m = ctx;
	size_t i0 = m->n * t / m->nt, i1 = m->n * (t + 1) / m->nt, i;
	size_t *at = m->cnt[t];

	for (i = i0; i < i1; i++) {
		const char *e = m->v + i * m->size;

		memcpy(m->tmp + at[(unsigned char)e[m->byte]]++ * m->size, e, m->size);
	}
}

/* Bucket [a, a + n) of tmp sorted by the bytes after the splitting one,
 * v's same range the other buffer; the result in v. */
static void msd_bucket(const struct msd *m, size_t a, size_t n, size_t (*cnt)[256])
{
	size_t size = m->size, i, b;
	char *src = m->tmp + a * size, *dst = m->v + a * size;

	if (n < 2) {
		memcpy(dst, src, n * size);
		return;
	}
	memset(cnt, 0, size * sizeof(*cnt));
	for (i = 0; i < n; i++)
		for (b = m->byte + 1; b < size; b++)
			cnt[b][(unsigned char)src[i * size + b]]++;
	src = lsd_passes(src, dst, n, size, m->byte + 1, cnt);
	if (src != m->v + a * size)
		memcpy(m->v + a * size, src, n * size);
}

static void msd_buckets(void *ctx, unsigned int t)
{
	struct msd *m = ctx;
	size_t (*cnt)[256] = calloc(m->size, sizeof(*cnt));
	unsigned int d;

	if (!cnt) {
		m->nomem = 1;
		return;
	}
	for (d = m->bfirst[t]; d < m->bfirst[t + 1]; d++)
		msd_bucket(m, m->start[d], m->start[d + 1] - m->start[d], cnt);
	free(cnt);
}

/* 0, 1 when the keys are all equal (nothing moved), -1 out of memory */
static int radix_sort_mt(char *v, size_t n, size_t size, unsigned int nt)
{
	struct msd m = { .v = v, .n = n, .size = size, .nt = nt };
	size_t b, d, sum = 0, t;
	unsigned int th;
	int ret = -1;

	_Static_assert(sizeof(struct bg_key6) <= sizeof(m.diff[0]), "a key's bytes fit");
	if (size % 8 || size > sizeof(m.diff[0]))
		return -1;
	m.tmp = malloc(n * size);
	m.cnt = calloc(nt, sizeof(*m.cnt));
	if (!m.tmp || !m.cnt)
		goto out;
	bg_par_run(nt, msd_diff, &m);
	for (b = 0; b < size; b++) {
		unsigned char c = 0;

		for (th = 0; th < nt; th++)
			c |= m.diff[th][b];
		if (c)
			break; /* the first byte that differs */
	}
	if (b == size) {
		ret = 1;
		goto out;
	}
	m.byte = b;
	bg_par_run(nt, msd_count, &m);
	/* bucket d of thread th starts after every key of a smaller byte
	 * and the same byte's keys of the threads before */
	for (d = 0; d < 256; d++) {
		m.start[d] = sum;
		for (th = 0; th < nt; th++) {
			size_t x = m.cnt[th][d];

			m.cnt[th][d] = sum;
			sum += x;
		}
	}
	m.start[256] = sum;
	bg_par_run(nt, msd_scatter, &m);
	/* runs of buckets of about n / nt keys */
	m.bfirst[0] = 0;
	for (th = 1, d = 0; th < nt; th++) {
		t = n * th / nt;
		while (d < 256 && m.start[d + 1] <= t)
			d++;
		m.bfirst[th] = (unsigned int)d;
	}
	m.bfirst[nt] = 256;
	bg_par_run(nt, msd_buckets, &m);
	ret = m.nomem ? -1 : 0;
out:
	free(m.tmp);
	free(m.cnt);
	return ret;
}

/*
 * Sorts n elements of size bytes into memcmp() order (unless already
 * sorted, as lists often are) and squeezes out duplicates; returns the new
 * count. Inlined so that size is a constant in each copy.
 */
static inline __attribute__((always_inline)) size_t
sort_unique(void *base, size_t n, size_t size,
	    int (*cmp)(const void *, const void *), unsigned int nt)
{
	char *v = base;
	size_t i, out;

	for (i = 1; i < n; i++)
		if (cmp(v + (i - 1) * size, v + i * size) > 0)
			break;
	if (i < n && nt > 1 && n >= BG_RADIX_MT_MIN && radix_sort_mt(v, n, size, nt) >= 0)
		; /* sorted on nt threads */
	else if (i < n && (n < BG_RADIX_MIN || radix_sort(v, n, size) < 0))
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

/* ---- Overlap reduction --------------------------------------------------- */

/*
 * After sort_unique() the keys of one family are grouped by prefix length
 * (the second byte), shortest first, and each group is in address order;
 * prefixes of one length are disjoint. An entry is covered when a group of
 * a shorter length holds a prefix containing its address. For every pair of
 * groups (q shorter than p) a merge walks both in address order, galloping
 * (exponential then binary search) over runs that cannot meet, so a pair
 * costs O(m log(n/m)) for groups of m <= n keys, and marks the covered
 * entries of p by clearing their kind byte; one pass then squeezes them
 * out, keeping memcmp() order. No memory is allocated (but see
 * sweep_mark6()); lists of a single prefix length (all /32, all /128) are
 * left untouched at once. Marked
 * entries of q still serve as coverers: whatever they cover, the shorter
 * prefix covering them covers too.
 */
typedef unsigned __int128 bg_u128;

/* The address of key i, as a number (host order). */
static inline __attribute__((always_inline)) bg_u128
key_addr(const char *v, size_t i, size_t size)
{
	const char *k = v + i * size;
	__u32 a;

	if (size == sizeof(struct bg_key4)) {
		memcpy(&a, k + offsetof(struct bg_key4, addr), sizeof(a));
		return ntohl(a);
	}
	k += offsetof(struct bg_key6, addr);
	return (bg_u128)load_be64(k) << 64 | load_be64(k + 8);
}

static inline __attribute__((always_inline)) unsigned int
key_plen(const char *v, size_t i, size_t size)
{
	_Static_assert(offsetof(struct bg_key4, plen) == 1, "plen byte");
	_Static_assert(offsetof(struct bg_key6, plen) == 1, "plen byte");
	return (unsigned char)v[i * size + 1];
}

/* Host part of a /plen in a bits-wide family: the last address is a | it. */
static inline bg_u128 host_mask(unsigned int plen, unsigned int bits)
{
	if (plen >= bits)
		return 0;
	if (plen == 0 && bits == 128)
		return ~(bg_u128)0;
	return ((bg_u128)1 << (bits - plen)) - 1;
}

/*
 * First index in [i, e) whose address is >= a (gt: > a), e if none; the
 * addresses of [i, e) ascend. Gallops from i: O(log distance).
 */
static inline __attribute__((always_inline)) size_t
gallop(const char *v, size_t i, size_t e, size_t size, bg_u128 a, int gt)
{
#define BG_PAST(x)                                                             \
	(gt ? key_addr(v, (x), size) > a : key_addr(v, (x), size) >= a)
	size_t lo = i, hi, step = 1;

	if (i >= e || BG_PAST(i))
		return i;
	for (;;) { /* lo is not past a */
		if (step >= e - lo) {
			hi = e;
			break;
		}
		hi = lo + step;
		if (BG_PAST(hi))
			break;
		lo = hi;
		step *= 2;
	}
	while (hi - lo > 1) { /* lo not past, hi past (or e) */
		size_t mid = lo + (hi - lo) / 2;

		if (BG_PAST(mid))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
#undef BG_PAST
}

/* Marks the entries of [pb, pe) covered by a prefix of [qb, qe), of /q. */
static inline __attribute__((always_inline)) size_t
mark_pair(char *v, size_t size, size_t pb, size_t pe, size_t qb, size_t qe,
	  bg_u128 qmask)
{
	size_t i = pb, j = qb, marked = 0;

	while (i < pe) {
		bg_u128 a = key_addr(v, i, size), last;

		/* j: the first prefix starting after a; j - 1 may contain a */
		j = gallop(v, j, qe, size, a, 1);
		if (j > qb && a <= (last = key_addr(v, j - 1, size) | qmask)) {
			do {
				if (v[i * size]) {
					v[i * size] = 0;
					marked++;
				}
				i++;
			} while (i < pe && key_addr(v, i, size) <= last);
			continue;
		}
		if (j == qe)
			break; /* no prefix left at or after a */
		i = gallop(v, i, pe, size, key_addr(v, j, size), 0);
	}
	return marked;
}

/*
 * IPv6 lists may use up to 129 lengths, and the pairs of groups grow with
 * their square: past BG_SWEEP_GROUPS lengths, one sweep in address order
 * instead. (start, length) of every key, sorted by start then length: a
 * prefix starting inside the last uncovered one lies inside it (prefixes
 * nest or are disjoint). Returns the number marked, or SIZE_MAX without
 * memory (the caller then takes the pairwise way).
 */
#define BG_SWEEP_GROUPS 32

struct span6 {
	bg_u128 start;
	size_t idx;
	unsigned int plen;
};

static int cmp_span6(const void *a, const void *b)
{
	const struct span6 *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->plen > y->plen) - (x->plen < y->plen);
}

static size_t sweep_mark6(char *v, size_t n)
{
	const size_t size = sizeof(struct bg_key6);
	struct span6 *s = n <= SIZE_MAX / sizeof(*s) ? malloc(n * sizeof(*s))
						       : NULL;
	size_t i, marked = 0;
	bg_u128 end = 0;

	if (!s)
		return SIZE_MAX;
	for (i = 0; i < n; i++) {
		s[i].start = key_addr(v, i, size);
		s[i].idx = i;
		s[i].plen = key_plen(v, i, size);
	}
	qsort(s, n, sizeof(*s), cmp_span6);
	for (i = 0; i < n; i++) {
		if (i && s[i].start <= end) {
			v[s[i].idx * size] = 0;
			marked++;
			continue;
		}
		end = s[i].start | host_mask(s[i].plen, 128);
	}
	free(s);
	return marked;
}

/* Drops covered entries of n sorted, unique keys; returns the new count. */
static inline __attribute__((always_inline)) size_t
reduce_covered(char *v, size_t n, size_t size, unsigned int bits)
{
	size_t start[129 + 2], marked = 0, i, out;
	unsigned int plens[129 + 1], ng = 0, a, b, p;

	if (n < 2 || key_plen(v, 0, size) == key_plen(v, n - 1, size))
		return n; /* one prefix length: nothing can cover anything */
	/* start[p]: first key with a length >= p, found by binary search */
	for (p = 0; p <= bits + 1; p++) {
		size_t lo = 0, hi = n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (key_plen(v, mid, size) < p)
				lo = mid + 1;
			else
				hi = mid;
		}
		start[p] = lo;
	}
	for (p = 0; p <= bits; p++)
		if (start[p + 1] > start[p])
			plens[ng++] = p;
	if (size == sizeof(struct bg_key6) && ng > BG_SWEEP_GROUPS &&
	    (marked = sweep_mark6(v, n)) != SIZE_MAX)
		ng = 0; /* done */
	else
		marked = 0;
	for (b = 1; b < ng; b++)
		for (a = 0; a < b; a++)
			marked += mark_pair(v, size, start[plens[b]],
					    start[plens[b] + 1],
					    start[plens[a]],
					    start[plens[a] + 1],
					    host_mask(plens[a], bits));
	if (!marked)
		return n;
	for (i = 0, out = 0; i < n; i++) {
		if (!v[i * size])
			continue;
		if (out != i)
			memcpy(v + out * size, v + i * size, size);
		out++;
	}
	return out;
}

/* One copy per family, out of line: finish's sort loops stay as they were. */
static __attribute__((noinline)) size_t reduce4(struct bg_key4 *v, size_t n)
{
	return reduce_covered((char *)v, n, sizeof(*v), 32);
}

static __attribute__((noinline)) size_t reduce6(struct bg_key6 *v, size_t n)
{
	return reduce_covered((char *)v, n, sizeof(*v), 128);
}

void bg_list_finish(struct bg_list *l)
{
	bg_list_finish_mt(l, 1);
}

void bg_list_finish_mt(struct bg_list *l, unsigned int threads)
{
	unsigned int nt = bg_par_threads(threads);
	size_t n, m;

	n = sort_unique(l->v4, l->n4, sizeof(*l->v4), cmp_key4, nt);
	l->duplicates += l->n4 - n;
	m = reduce4(l->v4, n);
	l->covered += n - m;
	l->n4 = m;
	n = sort_unique(l->v6, l->n6, sizeof(*l->v6), cmp_key6, nt);
	l->duplicates += l->n6 - n;
	m = reduce6(l->v6, n);
	l->covered += n - m;
	l->n6 = m;
}


/* ---- Detection (user/core/sources.c) ------------------------------------------ */

int bg_list_line_kind(const char *s, const char *e, int has_nul)
{
	const char *reason;
	struct bg_key4 k4;
	struct bg_key6 k6;
	int kind, fl;

	kind = parse_line(s, e, has_nul, &k4, &k6, &reason, &fl);
	return kind == LINE_SKIP ? 0 : kind == LINE_REJECT ? -1 : 1;
}
