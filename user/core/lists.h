/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Blocklist parsing: files of addresses and CIDR prefixes into sorted,
 * de-duplicated, overlap-free keys. */
#ifndef BLOOMGATE_LISTS_H
#define BLOOMGATE_LISTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bloomgate/abi.h"
#include "core/io.h"

struct bg_list {
	struct bg_key4 *v4; /* keys, built with bg_key4_init() */
	size_t n4, cap4;
	struct bg_key6 *v6; /* keys, built with bg_key6_init() */
	size_t n6, cap6;
	size_t files; /* files parsed */
	size_t lines; /* lines read, all files */
	size_t accepted; /* entries accepted, before de-duplication */
	size_t rejected; /* lines rejected (reported) */
	size_t duplicates; /* accepted entries dropped by bg_list_finish() */
	size_t warnings; /* accepted lines reported with a warning (one
			  * a line, whatever it says) */
	size_t covered; /* distinct entries inside a shorter listed prefix,
			 * dropped by bg_list_finish() */
};

/* Options of a parse, shared by every list parser. */
struct bg_list_opts {
	int strict; /* a rejected line makes the parse fail with -EINVAL;
		     * an IPv4-mapped IPv6 entry is then rejected too */
	/* Wide prefixes (IPv4 shorter than /8, IPv6 shorter than /16, /0
	 * included) load with a warning instead of being rejected. */
	int allow_wide;
	/* An allowlist (`load --allow`): its wide prefixes load with a
	 * warning, opted in or not (see bg_list_parse_buf()). */
	int allowlist;
	FILE *report; /* where "file:line: reason" goes; NULL: stderr */
	bg_diag_fn diag; /* when set, diagnostics go here instead (io.h) */
	void *diag_ctx;
	/* bg_source_parse(): the file's size bound (bg_read_list()); 0:
	 * BG_LIST_BYTES_MAX */
	uint64_t max_bytes;
	/* every accepted entry, as it is read (io.h); NULL: none. source is
	 * copied into bg_entry_ref.source. */
	bg_entry_fn entry;
	void *entry_ctx;
	size_t source;
	/* threads of a parse in pieces (bg_list_parse_fd()); 0: every
	 * online CPU */
	unsigned int threads;
};

/* Where a parse with these options reports (NULL: stderr). */
static inline struct bg_reporter bg_reporter_of(const struct bg_list_opts *o)
{
	return o ? bg_reporter_make(o->report, o->diag, o->diag_ctx)
		 : bg_reporter_make(NULL, NULL, NULL);
}

/*
 * Wide prefixes: shorter than these need an opt-in (allow_wide above). One
 * mistaken line such as 0.0.0.0/0 would cut a gateway off from everything,
 * and no public blocklist means a /7 of IPv4 or a /15 of IPv6 (a /8 is a
 * whole RIR allocation; no IPv6 allocation comes near a /16).
 */
#define BG_WIDE4_PLEN 8
#define BG_WIDE6_PLEN 16

/* 1 if the key of the kind given (BG_KEY_IPV4/6) is a wide prefix. */
static inline int bg_key_wide(int kind, const struct bg_key4 *k4,
			      const struct bg_key6 *k6)
{
	return kind == BG_KEY_IPV4 ? k4->plen < BG_WIDE4_PLEN :
				     k6->plen < BG_WIDE6_PLEN;
}

void bg_list_init(struct bg_list *l);
void bg_list_free(struct bg_list *l);

/*
 * Parses one list held in memory; name is used in reports. Entries are
 * addresses (a /32 or /128 key) and CIDR prefixes ("192.0.2.0/24",
 * "2001:db8::/32"). Returns 0, or a negative errno: -EINVAL when
 * opts->strict and a line was rejected, -ENOMEM. Every rejected line is
 * reported as "name:line: reason: 'text'". A prefix with host bits set
 * ("10.1.2.3/8") is accepted masked (10.0.0.0/8) and reported as
 * "name:line: warning: host bits set, using 10.0.0.0/8: 'text'"; warnings
 * are counted in l->warnings and never fail a parse, strict or not.
 *
 * An IPv4-mapped IPv6 entry (::ffff:a.b.c.d, ::ffff:a.b.c.d/n with n >= 96)
 * is the IPv4 entry a.b.c.d/(n - 96), reported as "warning: IPv4-mapped
 * IPv6, using a.b.c.d"; opts->strict rejects it instead. A shorter
 * ::ffff:0:0/n is an ordinary IPv6 prefix.
 *
 * A wide prefix (IPv4 shorter than /8, IPv6 shorter than /16) is rejected,
 * with a reason naming --allow-wide, unless opts->allow_wide or
 * opts->allowlist; then it loads with a warning. One warning a line: the
 * reasons of a line are joined with "; ".
 */
int bg_list_parse_buf(struct bg_list *l, const char *name, const char *buf,
		      size_t len, const struct bg_list_opts *opts);

/*
 * bg_list_parse_buf() of the regular file open at fd, of size bytes, read
 * in chunks (not held whole) and parsed in pieces split at line boundaries
 * on opts->threads threads: the same keys, counts, reports (in line order,
 * the same words and lines) and entries (opts->entry: each piece's from
 * its own worker, with their lines and offsets in the file) as the
 * buffer's. -errno of a read reported as "name: reason".
 */
int bg_list_parse_fd(struct bg_list *l, const char *name, int fd,
		     uint64_t size, const struct bg_list_opts *opts);

/* Same for a file; -errno when it cannot be read (reported). */
int bg_list_parse_file(struct bg_list *l, const char *path,
		       const struct bg_list_opts *opts);

/*
 * Sorts the keys into memcmp() order and removes duplicates (counted in
 * l->duplicates), then every entry covered by a shorter prefix of the same
 * family also listed (counted in l->covered): {10.0.0.0/8, 10.1.0.0/16,
 * 10.1.2.3} leaves 10.0.0.0/8. Idempotent.
 */
void bg_list_finish(struct bg_list *l);
/* bg_list_finish() sorting on threads threads (0: every online CPU):
 * the same list whatever their number. */
void bg_list_finish_mt(struct bg_list *l, unsigned int threads);

/*
 * Parses one address token ("192.0.2.1", "2001:db8::1", also "192.0.2.1/32"
 * and "2001:db8::1/128"). Returns BG_KEY_IPV4 or BG_KEY_IPV6 and fills the
 * matching key, always a /32 or /128, or 0 and sets *reason (a shorter
 * prefix is refused: "a prefix, not an address"). Any pointer but tok may
 * be NULL.
 */
int bg_parse_addr(const char *tok, struct bg_key4 *k4, struct bg_key6 *k6,
		  const char **reason);

/*
 * Same grammar as a list entry: an address or a CIDR prefix; the key is
 * masked to its prefix length (host bits are dropped silently here).
 */
int bg_parse_prefix(const char *tok, struct bg_key4 *k4, struct bg_key6 *k6,
		    const char **reason);

/*
 * One entry alone, s[0..n) (not NUL-terminated; any bytes), read by the very
 * line parser of a list (bg_list_parse_buf()): an address or a CIDR prefix,
 * masked to its length, an IPv4-mapped IPv6 one made the IPv4 entry it
 * names. Nothing else may be there: a blank, a comment, a line end or a NUL
 * beside the token is refused. Returns BG_KEY_IPV4 or BG_KEY_IPV6 and fills
 * that key, or 0 and sets *reason (the list parser's own words: "bad prefix
 * length (no blanks around '/')"). Wide prefixes are accepted: the caller
 * judges them (bg_key_wide()). Any pointer but s may be NULL. The agent's
 * crowdsec: source checks each decision's value with it (agent/crowdsec.h),
 * so that what it takes is what its copy's list parse reads back.
 */
int bg_list_entry(const char *s, size_t n, struct bg_key4 *k4,
		  struct bg_key6 *k6, const char **reason);

/* 1 if addr (network byte order) lies inside prefix, else 0. */
int bg_prefix_covers4(const struct bg_key4 *prefix, __u32 addr_be);
int bg_prefix_covers6(const struct bg_key6 *prefix, const __u8 addr[16]);

/*
 * Explains a match: reads the list at path and calls cb for every accepted
 * entry (parsed exactly as bg_list_parse_file() does) of the family of the
 * non-NULL key whose prefix covers that key's address (k4 or k6 is the
 * /32 or /128 key of the address; if both are given, both are looked for).
 * cb gets the 1-based line number, the line's text without surrounding
 * blanks (comment included, NUL-terminated, valid during the call), and the
 * entry's masked key (the other key pointer NULL). cb may be NULL. Rejected
 * lines are skipped silently. Returns the number of covering entries,
 * -EINVAL when both keys are NULL, or -errno when the file cannot be read.
 */
typedef void (*bg_cover_fn)(void *ctx, const char *path, size_t line,
			    const char *text, const struct bg_key4 *k4,
			    const struct bg_key6 *k6);
int bg_list_find_covering(const char *path, const struct bg_key4 *k4,
			  const struct bg_key6 *k6, bg_cover_fn cb, void *ctx);

/*
 * Every accepted entry of an address list held in memory, in line order,
 * parsed exactly as bg_list_parse_buf() parses it (the same line parser,
 * without options: IPv4-mapped entries as IPv4, wide prefixes accepted):
 * cb gets the 1-based line number, the line's text without surrounding
 * blanks (comment included, NUL-terminated, valid during the call) and the
 * entry's masked key, k4 or k6 (the other NULL). Blank, comment and
 * rejected lines are skipped silently (nothing is reported). cb may be
 * NULL. Returns the number of accepted entries (INT_MAX at most). The
 * agent's store (user/agent/store.c) imports a list's entries with their lines
 * through it, and bg_list_find_covering() filters it.
 */
typedef void (*bg_scan_fn)(void *ctx, size_t line, const char *text,
			   const struct bg_key4 *k4, const struct bg_key6 *k6);
int bg_list_scan(const char *buf, size_t len, bg_scan_fn cb, void *ctx);

/*
 * One line [s, e) of an address list, classified as the parser would
 * (has_nul: the buffer holds a NUL byte somewhere, bg_line_iter.has_nul):
 * 1 an entry, 0 blank or comment, -1 rejected. For format detection.
 */
int bg_list_line_kind(const char *s, const char *e, int has_nul);

#endif
