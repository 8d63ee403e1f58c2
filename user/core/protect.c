// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The protected set, its pure part (user/core/protect.h): items in, the
 * datapath's ranges out; the operator's addresses, resolv.conf and the
 * route tables read; which listed entries cover a protected address.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bloomgate/bloom.h"
#include "core/protect.h"

void bg_protect_init(struct bg_protect_set *s)
{
	memset(s, 0, sizeof(*s));
}

/* The item's address masked to its length, the bytes past it zero. */
static void item_mask(struct bg_protect_item *it)
{
	if (it->family == BG_KEY_IPV4) {
		struct bg_key4 k;
		__u32 a;

		memcpy(&a, it->addr, sizeof(a));
		bg_key4_init(&k, a, it->plen);
		memset(it->addr, 0, sizeof(it->addr));
		memcpy(it->addr, &k.addr, sizeof(k.addr));
	} else {
		struct bg_key6 k;

		bg_key6_init(&k, it->addr, it->plen);
		memcpy(it->addr, k.addr, sizeof(k.addr));
	}
}

int bg_protect_add(struct bg_protect_set *s, const struct bg_protect_item *it)
{
	struct bg_protect_item m;
	__u32 i, bits = it->family == BG_KEY_IPV4 ? 32 : 128;

	if (it->family != BG_KEY_IPV4 && it->family != BG_KEY_IPV6)
		return -EINVAL;
	/* a copy with every byte defined, so that items compare whole */
	memset(&m, 0, sizeof(m));
	m.family = it->family;
	m.plen = it->plen < bits ? it->plen : (__u8)bits;
	m.kind = it->kind;
	m.ifindex = it->ifindex;
	m.netns_ino = it->netns_ino;
	memcpy(m.addr, it->addr, sizeof(m.addr));
	memcpy(m.ifname, it->ifname, strnlen(it->ifname, sizeof(m.ifname) - 1));
	item_mask(&m);
	for (i = 0; i < s->nitems && i < BG_PROTECT_MAX; i++)
		if (!memcmp(&s->item[i], &m, sizeof(m)))
			return 0;
	if (s->nitems >= BG_PROTECT_MAX)
		return -ENOSPC;
	s->item[s->nitems++] = m;
	return 0;
}

int bg_protect_add_addr(struct bg_protect_set *s, int family, const void *addr,
			int kind, const char *ifname)
{
	struct bg_protect_item it;

	memset(&it, 0, sizeof(it));
	it.family = (__u8)family;
	it.plen = family == BG_KEY_IPV4 ? 32 : 128;
	it.kind = (__u8)kind;
	memcpy(it.addr, addr, family == BG_KEY_IPV4 ? 4 : 16);
	if (ifname)
		snprintf(it.ifname, sizeof(it.ifname), "%s", ifname);
	return bg_protect_add(s, &it);
}

/* ---- The ranges ---------------------------------------------------------- */

static int cmp_r4(const void *a, const void *b)
{
	const struct bg_range4 *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_r6(const void *a, const void *b)
{
	const struct bg_range6 *x = a, *y = b;

	if (x->start_hi != y->start_hi)
		return x->start_hi < y->start_hi ? -1 : 1;
	return x->start_lo < y->start_lo ? -1 : x->start_lo > y->start_lo;
}

/* The inclusive host-order range of an item. */
static void item_range4(const struct bg_protect_item *it, struct bg_range4 *r)
{
	__u32 a;

	memcpy(&a, it->addr, sizeof(a));
	r->start = ntohl(a);
	r->end = r->start | (it->plen >= 32 ? 0 : 0xffffffffU >> it->plen);
}

static void item_range6(const struct bg_protect_item *it, struct bg_range6 *r)
{
	unsigned int p = it->plen;

	r->start_hi = bg_be64_to_host(it->addr);
	r->start_lo = bg_be64_to_host(it->addr + 8);
	r->end_hi = r->start_hi | (p >= 64 ? 0 : p ? ~0ULL >> p : ~0ULL);
	r->end_lo = r->start_lo | (p >= 128 ? 0 : p > 64 ? ~0ULL >> (p - 64) : ~0ULL);
}

/* The steps a binary search over n ranges takes to close (lookup.h). */
static __u8 bit_length(__u32 n)
{
	__u8 b = 0;

	for (; n; n >>= 1)
		b++;
	return b;
}

/* The maps of the first look (bloomgate/abi.h), from the ranges. */
static void fill_maps(struct bg_protect_set *s)
{
	__u32 i, b;

	memset(s->map4, 0, sizeof(s->map4));
	memset(s->map6, 0, sizeof(s->map6));
	for (i = 0; i < s->n4; i++)
		for (b = s->r4[i].start >> 24; b <= s->r4[i].end >> 24; b++)
			s->map4[b / 64] |= 1ULL << (b % 64);
	for (i = 0; i < s->n6; i++) {
		if (s->r6[i].start_hi >> 32 != s->r6[i].end_hi >> 32) {
			memset(s->map6, 0xff, sizeof(s->map6));
			break;
		}
		b = bg_protect_bit6((__u32)(s->r6[i].start_hi >> 32));
		s->map6[b / 64] |= 1ULL << (b % 64);
	}
}

void bg_protect_finish(struct bg_protect_set *s)
{
	__u32 i, n4 = 0, n6 = 0, k;

	for (i = 0; i < s->nitems && i < BG_PROTECT_MAX; i++) {
		if (s->item[i].family == BG_KEY_IPV4)
			item_range4(&s->item[i], &s->r4[n4++]);
		else
			item_range6(&s->item[i], &s->r6[n6++]);
	}
	qsort(s->r4, n4, sizeof(s->r4[0]), cmp_r4);
	qsort(s->r6, n6, sizeof(s->r6[0]), cmp_r6);
	/* merged when they overlap or touch: the search wants them disjoint */
	for (i = 0, k = 0; i < n4; i++) {
		if (k && (s->r4[k - 1].end == 0xffffffffU ||
			  s->r4[i].start <= s->r4[k - 1].end + 1)) {
			if (s->r4[i].end > s->r4[k - 1].end)
				s->r4[k - 1].end = s->r4[i].end;
			continue;
		}
		s->r4[k++] = s->r4[i];
	}
	s->n4 = k;
	for (i = 0, k = 0; i < n6; i++) {
		struct bg_range6 *p = k ? &s->r6[k - 1] : NULL;
		__u64 nhi = p ? p->end_hi + (p->end_lo == ~0ULL) : 0;
		__u64 nlo = p ? p->end_lo + 1 : 0; /* the address after p */
		int full = p && p->end_hi == ~0ULL && p->end_lo == ~0ULL;

		if (p && (full || !bg_u128_gt(s->r6[i].start_hi, s->r6[i].start_lo,
					       nhi, nlo))) {
			if (bg_u128_gt(s->r6[i].end_hi, s->r6[i].end_lo, p->end_hi,
				       p->end_lo)) {
				p->end_hi = s->r6[i].end_hi;
				p->end_lo = s->r6[i].end_lo;
			}
			continue;
		}
		s->r6[k++] = s->r6[i];
	}
	s->n6 = k;
	s->steps4 = bit_length(s->n4);
	s->steps6 = bit_length(s->n6);
	fill_maps(s);
	/* the unused ranges zero: two sets of the same items are the same
	 * bytes (a writer compares them) */
	memset(&s->r4[s->n4], 0, (BG_PROTECT_MAX - s->n4) * sizeof(s->r4[0]));
	memset(&s->r6[s->n6], 0, (BG_PROTECT_MAX - s->n6) * sizeof(s->r6[0]));
}

/* ---- The operator's addresses ---------------------------------------------- */

int bg_protect_parse(const char *tok, int kind, struct bg_protect_item *it,
		     const char **why)
{
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };
	const char *slash = strchr(tok, '/');
	struct bg_key4 k4, a4;
	struct bg_key6 k6, a6;
	char addr[64];
	int fam, afam;

	memset(it, 0, sizeof(*it));
	fam = bg_parse_prefix(tok, &k4, &k6, why);
	if (!fam)
		return -EINVAL;
	/* host bits: the address before the '/' read alone */
	if (slash && (size_t)(slash - tok) < sizeof(addr)) {
		memcpy(addr, tok, (size_t)(slash - tok));
		addr[slash - tok] = 0;
		afam = bg_parse_addr(addr, &a4, &a6, NULL);
		if ((afam == BG_KEY_IPV4 && a4.addr != k4.addr) ||
		    (afam == BG_KEY_IPV6 && memcmp(a6.addr, k6.addr, 16))) {
			*why = "host bits set: an address, or a prefix with its host "
			       "bits clear";
			return -EINVAL;
		}
	}
	if (fam == BG_KEY_IPV6 && k6.plen >= 96 && !memcmp(k6.addr, mapped, 12)) {
		*why = "an IPv4-mapped IPv6 address: write it as IPv4";
		return -EINVAL;
	}
	if (bg_key_wide(fam, &k4, &k6)) {
		*why = fam == BG_KEY_IPV4 ?
			       "a prefix shorter than /8 would let most of a blocklist through" :
			       "a prefix shorter than /16 would let most of a blocklist through";
		return -EINVAL;
	}
	it->family = (__u8)fam;
	it->kind = (__u8)kind;
	if (fam == BG_KEY_IPV4) {
		it->plen = k4.plen;
		memcpy(it->addr, &k4.addr, 4);
	} else {
		it->plen = k6.plen;
		memcpy(it->addr, k6.addr, 16);
	}
	return 0;
}

/* ---- resolv.conf ----------------------------------------------------------- */

const char *bg_protect_resolv_path(void)
{
	const char *p = getenv("BLOOMGATE_RESOLV_CONF");

	return p && *p ? p : BG_RESOLV_CONF;
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The address of one "nameserver ADDR" line [p, e), added; 1 when one
 * was, 0 for any other line. */
static int resolv_line(struct bg_protect_set *s, const char *p, const char *e)
{
	static const char kw[] = "nameserver";
	struct bg_key4 k4;
	struct bg_key6 k6;
	char tok[64];
	const char *t;
	size_t n;
	int fam;

	while (p < e && blank(*p))
		p++;
	if ((size_t)(e - p) <= sizeof(kw) - 1 || memcmp(p, kw, sizeof(kw) - 1) ||
	    !blank(p[sizeof(kw) - 1]))
		return 0;
	p += sizeof(kw) - 1;
	while (p < e && blank(*p))
		p++;
	for (t = p; t < e && !blank(*t) && *t != '%' && *t != '#' && *t != ';'; t++)
		;
	n = (size_t)(t - p);
	if (!n || n >= sizeof(tok) || memchr(p, 0, n))
		return 0;
	memcpy(tok, p, n);
	tok[n] = 0;
	fam = bg_parse_addr(tok, &k4, &k6, NULL);
	if (!fam)
		return 0;
	return bg_protect_add_addr(s, fam, fam == BG_KEY_IPV4 ? (const void *)&k4.addr :
			   (const void *)k6.addr, BG_PROTECT_RESOLVER, NULL) ? -ENOSPC : 1;
}

int bg_protect_resolv_parse(struct bg_protect_set *s, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *e;
	int found = 0, r;

	for (; p < end && found < BG_RESOLV_NS_MAX; p = e + 1) {
		e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			e = end;
		r = resolv_line(s, p, e);
		if (r < 0)
			return r;
		found += r;
	}
	return found;
}

int bg_protect_resolv(struct bg_protect_set *s)
{
	const char *path = bg_protect_resolv_path();
	struct stat st;
	char *buf;
	ssize_t n;
	size_t len = 0;
	int fd, ret;

	/* O_NONBLOCK: a FIFO put there is refused below, not waited on */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	buf = malloc(BG_RESOLV_BYTES_MAX);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < BG_RESOLV_BYTES_MAX &&
	       (n = read(fd, buf + len, BG_RESOLV_BYTES_MAX - len)) > 0)
		len += (size_t)n;
	close(fd);
	ret = bg_protect_resolv_parse(s, buf, len);
	free(buf);
	return ret;
}

/* ---- The route tables ------------------------------------------------------ */

static int gateway_add(struct bg_protect_set *s, int fam, const void *addr,
		       const char *dev, __u32 netns_ino)
{
	struct bg_protect_item it;

	memset(&it, 0, sizeof(it));
	it.family = (__u8)fam;
	it.plen = fam == BG_KEY_IPV4 ? 32 : 128;
	it.kind = BG_PROTECT_GATEWAY;
	it.netns_ino = netns_ino;
	memcpy(it.addr, addr, fam == BG_KEY_IPV4 ? 4 : 16);
	snprintf(it.ifname, sizeof(it.ifname), "%s", dev);
	return bg_protect_add(s, &it) ? -ENOSPC : 1;
}

#define RTF_UP_ 0x1 /* linux/route.h's RTF_UP and RTF_GATEWAY */
#define RTF_GATEWAY_ 0x2
#define RTF_DEFAULT_ (RTF_UP_ | RTF_GATEWAY_)

/* "Iface Destination Gateway Flags RefCnt Use Metric Mask ...", the
 * addresses as the kernel prints a __be32: the word's memory is network
 * order. */
int bg_protect_route4(struct bg_protect_set *s, const char *line, __u32 netns_ino,
		      int *past)
{
	char dev[16];
	unsigned int dst, gw, flags, mask;

	if (sscanf(line, "%15s %8x %8x %x %*d %*u %*d %8x", dev, &dst, &gw,
		   &flags, &mask) != 5)
		return 0;
	if (dst)
		*past = 1;
	if (dst || mask || !gw || (flags & RTF_DEFAULT_) != RTF_DEFAULT_)
		return 0;
	return gateway_add(s, BG_KEY_IPV4, &gw, dev, netns_ino);
}

static int hex16(const char *h, __u8 out[16])
{
	unsigned int b, i;

	if (strlen(h) != 32)
		return -1;
	for (i = 0; i < 16; i++) {
		if (!isxdigit((unsigned char)h[2 * i]) ||
		    !isxdigit((unsigned char)h[2 * i + 1]) ||
		    sscanf(h + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = (__u8)b;
	}
	return 0;
}

/* "DEST PLEN SRC SPLEN NEXTHOP METRIC REFCNT USE FLAGS DEV", in hex. */
int bg_protect_route6(struct bg_protect_set *s, const char *line, __u32 netns_ino)
{
	static const __u8 zero[16];
	char dst[40], src[40], nh[40], dev[16];
	unsigned int plen, splen, flags;
	__u8 d[16], g[16];

	if (sscanf(line, "%39s %2x %39s %2x %39s %*x %*x %*x %8x %15s", dst, &plen,
		   src, &splen, nh, &flags, dev) != 7)
		return 0;
	if (hex16(dst, d) || hex16(nh, g) || plen || memcmp(d, zero, 16) ||
	    !memcmp(g, zero, 16) || (flags & RTF_DEFAULT_) != RTF_DEFAULT_)
		return 0;
	return gateway_add(s, BG_KEY_IPV6, g, dev, netns_ino);
}

/* ---- Words ------------------------------------------------------------------ */

void bg_protect_kinds(const struct bg_protect_set *s, unsigned int *n)
{
	__u32 i;

	memset(n, 0, (BG_PROTECT_CONFIG + 1) * sizeof(*n));
	for (i = 0; i < s->nitems && i < BG_PROTECT_MAX; i++) {
		n[0]++;
		if (s->item[i].kind >= BG_PROTECT_IFACE && s->item[i].kind <= BG_PROTECT_CONFIG)
			n[s->item[i].kind]++;
	}
}

void bg_protect_summary(char *buf, size_t len, const unsigned int *n)
{
	static const char *const what[BG_PROTECT_CONFIG + 1][2] = {
		[BG_PROTECT_IFACE] = { "address of the attached interfaces",
				       "addresses of the attached interfaces" },
		[BG_PROTECT_GATEWAY] = { "default route's next hop",
					 "default routes' next hops" },
		[BG_PROTECT_RESOLVER] = { "resolver", "resolvers" },
		[BG_PROTECT_GIVEN] = { "given with --protect", "given with --protect" },
		[BG_PROTECT_CONFIG] = { "under protect:", "under protect:" },
	};
	size_t o;
	int k, first = 1;

	if (!n[0]) {
		snprintf(buf, len, "none");
		return;
	}
	o = (size_t)snprintf(buf, len, "%u address%s and prefix%s:", n[0],
			     n[0] == 1 ? "" : "es", n[0] == 1 ? "" : "es");
	for (k = BG_PROTECT_IFACE; k <= BG_PROTECT_CONFIG && o < len; k++) {
		if (!n[k])
			continue;
		o += (size_t)snprintf(buf + o, len - o, "%s %u %s", first ? "" : ",",
				      n[k], what[k][n[k] != 1]);
		first = 0;
	}
}

void bg_protect_item_text(char *buf, size_t len, const struct bg_protect_item *it)
{
	char a[INET6_ADDRSTRLEN] = "?";
	int v4 = it->family == BG_KEY_IPV4;

	inet_ntop(v4 ? AF_INET : AF_INET6, it->addr, a, sizeof(a));
	if (it->plen == (v4 ? 32 : 128))
		snprintf(buf, len, "%s", a);
	else
		snprintf(buf, len, "%s/%u", a, it->plen);
}

void bg_protect_why(char *buf, size_t len, const struct bg_protect_item *it)
{
	switch (it->kind) {
	case BG_PROTECT_IFACE:
		snprintf(buf, len, "the address of interface %.15s", it->ifname);
		break;
	case BG_PROTECT_GATEWAY:
		snprintf(buf, len, "the next hop of the default route via %.15s",
			 it->ifname);
		break;
	case BG_PROTECT_RESOLVER:
		snprintf(buf, len, "a resolver in %s", bg_protect_resolv_path());
		break;
	case BG_PROTECT_GIVEN:
		snprintf(buf, len, "given with --protect");
		break;
	case BG_PROTECT_CONFIG:
		snprintf(buf, len, "under protect: in the agent's config");
		break;
	default:
		snprintf(buf, len, "protected");
	}
}

const struct bg_protect_item *bg_protect_lookup(const struct bg_protect_set *s,
						int family, const __u8 *addr)
{
	__u32 i;

	for (i = 0; i < s->nitems && i < BG_PROTECT_MAX; i++) {
		const struct bg_protect_item *it = &s->item[i];
		struct bg_key4 k4;
		struct bg_key6 k6;
		__u32 a;

		if (it->family != family)
			continue;
		if (family == BG_KEY_IPV4) {
			memcpy(&k4.addr, it->addr, 4);
			k4.plen = it->plen;
			memcpy(&a, addr, 4);
			if (bg_prefix_covers4(&k4, a))
				return it;
		} else {
			memcpy(k6.addr, it->addr, 16);
			k6.plen = it->plen;
			if (bg_prefix_covers6(&k6, addr))
				return it;
		}
	}
	return NULL;
}

/* ---- The entries that cover the set ------------------------------------------ */

int bg_protect_covers_push(struct bg_protect_covers *c, const struct bg_protect_cover *x)
{
	struct bg_protect_cover *v;

	if (c->n >= BG_PROTECT_COVERS_MAX) {
		c->more++;
		return 0;
	}
	v = realloc(c->v, (c->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	c->v = v;
	c->v[c->n++] = *x;
	return 0;
}

/* The first index of v (n keys of size sz, memcmp order) not below key
 * (above: past key). */
static size_t bound(const void *v, size_t n, size_t sz, const void *key, int above)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = memcmp((const char *)v + mid * sz, key, sz);

		if (d < 0 || (above && !d))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The entries of a sorted key array (v, n of size sz) at each prefix
 * length e: for e <= the item's, the one that covers it (its address
 * masked to e), if listed; past it, those from its first to its last
 * address masked to e, which lie inside it. mk(item, e, last, key) makes
 * those keys.
 */
static int find_in(struct bg_protect_covers *c, const void *v, size_t n,
		   size_t sz, unsigned int bits,
		   void (*mk)(const struct bg_protect_item *it, unsigned int e,
			      int last, void *key),
		   struct bg_protect_cover *x)
{
	void *entry = sz == sizeof(x->k4) ? (void *)&x->k4 : (void *)&x->k6;
	unsigned char lo[sizeof(struct bg_key6)], hi[sizeof(struct bg_key6)];
	unsigned int e;
	size_t i, end;
	int ret;

	for (e = 0; e <= bits; e++) {
		mk(&x->what, e, 0, lo);
		i = bound(v, n, sz, lo, 0);
		if (e <= x->what.plen) {
			end = i < n && !memcmp((const char *)v + i * sz, lo, sz) ? i + 1 : i;
		} else {
			mk(&x->what, e, 1, hi);
			end = bound(v, n, sz, hi, 1);
		}
		x->inside = e > x->what.plen;
		for (; i < end; i++) {
			if (c->n >= BG_PROTECT_COVERS_MAX) {
				c->more += end - i; /* counted, not walked */
				break;
			}
			memcpy(entry, (const char *)v + i * sz, sz);
			if ((ret = bg_protect_covers_push(c, x)))
				return ret;
		}
	}
	return 0;
}

static void mk4(const struct bg_protect_item *it, unsigned int e, int last, void *key)
{
	__u32 a;

	memcpy(&a, it->addr, 4);
	if (last)
		a |= ~bg_mask4(it->plen);
	bg_key4_init(key, a, (__u8)e);
}

static void mk6(const struct bg_protect_item *it, unsigned int e, int last, void *key)
{
	__u8 a[16];
	unsigned int i;

	memcpy(a, it->addr, 16);
	for (i = 0; last && i < 16; i++) {
		unsigned int bits = it->plen > i * 8 ? it->plen - i * 8 : 0;

		a[i] |= bits >= 8 ? 0 : (__u8)(0xff >> bits);
	}
	bg_key6_init(key, a, (__u8)e);
}

int bg_protect_covers_find(const struct bg_protect_set *s, const struct bg_list *l,
			   struct bg_protect_covers *c)
{
	struct bg_protect_cover x;
	__u32 i;
	int ret = 0;

	for (i = 0; !ret && i < s->nitems && i < BG_PROTECT_MAX; i++) {
		memset(&x, 0, sizeof(x));
		x.what = s->item[i];
		x.family = x.what.family;
		x.source = SIZE_MAX;
		if (x.family == BG_KEY_IPV4)
			ret = find_in(c, l->v4, l->n4, sizeof(*l->v4), 32, mk4, &x);
		else
			ret = find_in(c, l->v6, l->n6, sizeof(*l->v6), 128, mk6, &x);
	}
	return ret;
}

struct scan {
	const struct bg_protect_covers *c;
	struct bg_protect_covers out;
	char *seen; /* c->v[i] was found on a line */
	size_t source;
	int wide_ok, err;
};

static void on_scan(void *ctx, size_t line, const char *text,
		    const struct bg_key4 *k4, const struct bg_key6 *k6)
{
	struct scan *sc = ctx;
	size_t i;

	if (!sc->wide_ok && bg_key_wide(k4 ? BG_KEY_IPV4 : BG_KEY_IPV6, k4, k6))
		return; /* the load rejected it: it built nothing */
	for (i = 0; i < sc->c->n && !sc->err; i++) {
		const struct bg_protect_cover *x = &sc->c->v[i];
		struct bg_protect_cover y;

		if (k4 ? x->family != BG_KEY_IPV4 || memcmp(k4, &x->k4, sizeof(*k4)) :
			 x->family != BG_KEY_IPV6 || memcmp(k6, &x->k6, sizeof(*k6)))
			continue;
		y = *x;
		y.source = sc->source;
		y.line = line;
		snprintf(y.text, sizeof(y.text), "%s", text);
		sc->seen[i] = 1;
		sc->err = bg_protect_covers_push(&sc->out, &y);
	}
}

int bg_protect_covers_lines(struct bg_protect_covers *c, const struct bg_sources *srcs)
{
	struct scan sc = { .c = c };
	size_t i, len;
	char *buf;
	int ret = 0;

	if (!c->n)
		return 0;
	sc.seen = calloc(c->n, 1);
	if (!sc.seen)
		return -ENOMEM;
	for (i = 0; i < srcs->n && !sc.err; i++) {
		const struct bg_source *src = &srcs->v[i];

		if (src->list.format != BG_FMT_ADDR || src->list.allow ||
		    bg_reread_list(src->path, &buf, &len))
			continue;
		sc.source = i;
		sc.wide_ok = src->list.allow_wide;
		bg_list_scan(buf, len, on_scan, &sc);
		free(buf);
	}
	/* those no line was found for (standard input): as they are */
	for (i = 0; i < c->n && !sc.err; i++)
		if (!sc.seen[i])
			sc.err = bg_protect_covers_push(&sc.out, &c->v[i]);
	ret = sc.err;
	free(sc.seen);
	if (ret) {
		bg_protect_covers_free(&sc.out);
		return ret;
	}
	sc.out.more += c->more;
	bg_protect_covers_free(c);
	*c = sc.out;
	return 0;
}

void bg_protect_covers_free(struct bg_protect_covers *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

void bg_protect_entry_text(char *buf, size_t len, const struct bg_protect_cover *c)
{
	struct bg_protect_item it;

	memset(&it, 0, sizeof(it));
	it.family = (__u8)c->family;
	if (c->family == BG_KEY_IPV4) {
		it.plen = c->k4.plen;
		memcpy(it.addr, &c->k4.addr, 4);
	} else {
		it.plen = c->k6.plen;
		memcpy(it.addr, c->k6.addr, 16);
	}
	bg_protect_item_text(buf, len, &it);
}

void bg_protect_cover_fmt(char *buf, size_t len, const struct bg_protect_cover *c,
			  const char *where)
{
	char e[INET6_ADDRSTRLEN + 8], a[INET6_ADDRSTRLEN + 8], why[96];

	if (c->unnamed)
		snprintf(e, sizeof(e), "an entry");
	else
		bg_protect_entry_text(e, sizeof(e), c);
	bg_protect_item_text(a, sizeof(a), &c->what);
	bg_protect_why(why, sizeof(why), &c->what);
	snprintf(buf, len, "%s%s%s %s %s, %s: %s", e, where && *where ? " " : "",
		 where ? where : "", c->inside ? "lies inside" : "covers", a, why,
		 c->inside ? "it blocks nothing" : "loaded without it");
}
