/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The protected set (its layout: bloomgate/abi.h), the pure part: the set
 * built from its items (addresses and prefixes, each with why it is
 * there), the operator's addresses parsed by the lists' own parser,
 * resolv.conf's and the route tables' text read, the words that say why
 * an address is protected, and which list entries cover a protected
 * address (the load's report). Gathering the items of the attached
 * interfaces, and the map itself, are the kernel layer's
 * (user/kern/protect.h). Core: no libbpf.
 */
#ifndef BLOOMGATE_CORE_PROTECT_H
#define BLOOMGATE_CORE_PROTECT_H

#include <stddef.h>
#include <stdint.h>

#include "bloomgate/abi.h"
#include "core/lists.h"
#include "core/sources.h"

/* resolv.conf: where it is read from, BLOOMGATE_RESOLV_CONF overriding
 * (tests); at most this many bytes of it and this many nameservers (the
 * resolver library takes 3; the rest of a hostile file is ignored). */
#define BG_RESOLV_CONF "/etc/resolv.conf"
#define BG_RESOLV_BYTES_MAX (64u << 10)
#define BG_RESOLV_NS_MAX 16

/* Starts an empty set. */
void bg_protect_init(struct bg_protect_set *s);
/* Adds an item (its address masked to its length here). The same item
 * twice is kept once. 0, -EINVAL for a family that is neither, or
 * -ENOSPC when the set holds BG_PROTECT_MAX items already (nothing is
 * dropped silently: the caller refuses). */
int bg_protect_add(struct bg_protect_set *s, const struct bg_protect_item *it);
/* An address (BG_KEY_IPV4: 4 bytes; BG_KEY_IPV6: 16) of kind added as a
 * /32 or /128; ifname (may be NULL) and the rest of it zero. */
int bg_protect_add_addr(struct bg_protect_set *s, int family, const void *addr,
			int kind, const char *ifname);
/* The datapath's ranges from the items: sorted, overlaps and neighbours
 * merged. After the last add. */
void bg_protect_finish(struct bg_protect_set *s);

/*
 * One address or prefix as `load --protect` and the agent's protect: take
 * it, read by the lists' own parser (bg_parse_prefix(), user/core/lists.c).
 * Refused, with the reason in *why: what is not an address or a prefix;
 * host bits set ("10.1.2.3/8": an address or a prefix was meant, not
 * both); an IPv4-mapped IPv6 address (write it as IPv4); a prefix shorter
 * than a list may hold without --allow-wide (/8, /16: protecting that much
 * would let most of a blocklist through). 0 with *it filled, kind set.
 */
int bg_protect_parse(const char *tok, int kind, struct bg_protect_item *it,
		     const char **why);

/* The resolv.conf read: BLOOMGATE_RESOLV_CONF, else BG_RESOLV_CONF. */
const char *bg_protect_resolv_path(void);
/* Adds the nameserver addresses of resolv.conf text buf[0, len) as
 * resolvers ("nameserver ADDR", a %zone after an IPv6 address ignored;
 * any other line, or an address that does not parse, skipped): at most
 * BG_RESOLV_NS_MAX. How many were added, or -ENOSPC. */
int bg_protect_resolv_parse(struct bg_protect_set *s, const char *buf, size_t len);
/* The same from the file (a regular file, at most BG_RESOLV_BYTES_MAX
 * bytes read; none there: 0). How many, or -errno. */
int bg_protect_resolv(struct bg_protect_set *s);

/*
 * The next hop of a default route, from one line of /proc/net/route
 * (route4) or /proc/net/ipv6_route (route6) of a network namespace
 * (netns_ino, for the item): a route to 0.0.0.0/0 or ::/0 through a
 * gateway adds it, with its device's name. 1 added, 0 for any other line
 * (a header, a malformed line), -ENOSPC. route4 sets *past on a route of
 * another destination: /proc/net/route lists the main table in key order,
 * its default routes first, so no later line is one.
 */
int bg_protect_route4(struct bg_protect_set *s, const char *line, __u32 netns_ino,
		      int *past);
int bg_protect_route6(struct bg_protect_set *s, const char *line, __u32 netns_ino);

/* How many items of each kind: n[kind], n[0] the total
 * (BG_PROTECT_CONFIG + 1 counts). */
void bg_protect_kinds(const struct bg_protect_set *s, unsigned int *n);
/* "6 addresses and prefixes: 2 of the attached interfaces, 1 next hop, 2
 * resolvers, 1 given with --protect" ("none" for an empty set). */
void bg_protect_summary(char *buf, size_t len, const unsigned int *n);

/* "192.0.2.1" (an address) or "10.0.0.0/8" (a prefix). */
void bg_protect_item_text(char *buf, size_t len, const struct bg_protect_item *it);
/* Why it is protected: "the address of interface eth0", "the next hop of
 * the default route via eth1", "a resolver in /etc/resolv.conf", "given
 * with --protect", "under protect: in the agent's config". */
void bg_protect_why(char *buf, size_t len, const struct bg_protect_item *it);
/* The first item holding the address (family BG_KEY_IPV4 with 4 bytes,
 * or BG_KEY_IPV6), NULL when none does. */
const struct bg_protect_item *bg_protect_lookup(const struct bg_protect_set *s,
						int family, const __u8 *addr);

/* The datapath's own search of the ranges (bloomgate/lookup.h; in
 * user/core/probe.c): 1 if the set protects the address (network order). */
int bg_protect_test4(const struct bg_protect_set *s, __u32 addr_be);
int bg_protect_test6(const struct bg_protect_set *s, const __u8 addr[16]);

/* ---- The load's report: entries that cover a protected address ---------- */

/* Covers kept in a report; the rest are counted. */
#define BG_PROTECT_COVERS_MAX 32

struct bg_protect_cover {
	int family; /* BG_KEY_IPV4 or BG_KEY_IPV6 */
	struct bg_key4 k4; /* the listed entry, of its family */
	struct bg_key6 k6;
	/* 1: the entry lies inside a protected prefix (it blocks nothing);
	 * 0: it covers the protected address or prefix */
	int inside;
	size_t source; /* the list in the load's sources; SIZE_MAX: unknown */
	size_t line; /* 1-based; 0: not known */
	char text[256]; /* the line, without surrounding blanks ("" unknown) */
	char list[128]; /* an artifact's: the list's name; "" otherwise */
	/* an artifact's filter lists the address, and its index names no
	 * entry for it (no index, or not that entry): the keys are unset */
	int unnamed;
	struct bg_protect_item what; /* the protected item */
};

struct bg_protect_covers {
	struct bg_protect_cover *v; /* malloc'd; by source, then line */
	size_t n;
	size_t more; /* found past BG_PROTECT_COVERS_MAX */
};

/*
 * The entries of a finished list l (sorted keys: bg_list_finish()) that
 * cover an item of s or lie inside one: for each item, a binary search a
 * prefix length, so a list of 100M keys costs nothing more to check than
 * one of ten. Appended to c (source and line unknown: *_lines()). 0 or
 * -ENOMEM.
 */
int bg_protect_covers_find(const struct bg_protect_set *s, const struct bg_list *l,
			   struct bg_protect_covers *c);
/* The line(s) of each cover: every block address list of srcs re-read
 * once, only when there is a cover (standard input cannot be: its covers
 * stay without a line). 0 or -ENOMEM. */
int bg_protect_covers_lines(struct bg_protect_covers *c, const struct bg_sources *srcs);
/* Appends x to c (past BG_PROTECT_COVERS_MAX: counted in more). 0 or
 * -ENOMEM. */
int bg_protect_covers_push(struct bg_protect_covers *c, const struct bg_protect_cover *x);
void bg_protect_covers_free(struct bg_protect_covers *c);
/* "203.0.113.0/24" */
void bg_protect_entry_text(char *buf, size_t len, const struct bg_protect_cover *c);
/* One line: "ENTRY WHERE covers ADDR, WHY: loaded without it" (where:
 * "at /lists/x.txt:12", "in list x", or "" to say nothing; ENTRY "an
 * entry" when unnamed), or for an entry inside a protected prefix "ENTRY
 * WHERE lies inside PREFIX, WHY: it blocks nothing". */
void bg_protect_cover_fmt(char *buf, size_t len, const struct bg_protect_cover *c,
			  const char *where);

#endif
