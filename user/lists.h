/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Blocklist parsing: files of addresses and CIDR prefixes into sorted,
 * de-duplicated, overlap-free keys. */
#ifndef BLOOMGATE_LISTS_H
#define BLOOMGATE_LISTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bloomgate/abi.h"

struct bg_names; /* user/domains.h */

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
	/* Domain names to block with these addresses (not owned; NULL: none).
	 * Allow rules among them are not loaded yet. */
	const struct bg_names *names;
	size_t warnings; /* accepted lines reported with a warning */
	size_t covered; /* distinct entries inside a shorter listed prefix,
			 * dropped by bg_list_finish() */
};

struct bg_list_opts {
	int strict; /* a rejected line makes the parse fail with -EINVAL */
	FILE *report; /* where "file:line: reason" goes; NULL: stderr */
};

/* Reports one list line as "name:line: reason: 'text'": the text without
 * surrounding blanks, cut to 80 bytes on a UTF-8 boundary with "...",
 * control bytes as \xNN. Shared by every list parser. */
void bg_report_line(FILE *out, const char *name, size_t lineno,
		    const char *reason, const char *s, size_t n);

/* Address tokens of n bytes: dotted-quad IPv4 with the inet_pton grammar
 * (network byte order out), IPv6 through inet_pton. 0, or -1. */
int bg_parse_ip4(const char *s, size_t n, __u32 *addr_be);
int bg_parse_ip6(const char *s, size_t n, __u8 addr[16]);

/* Reads a whole file (regular, pipe or device) into a malloc'd buffer;
 * 0 or -errno (-EISDIR for a directory). Shared by every list parser. */
int bg_read_file(const char *path, char **bufp, size_t *lenp);

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
 */
int bg_list_parse_buf(struct bg_list *l, const char *name, const char *buf,
		      size_t len, const struct bg_list_opts *opts);

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
int bg_list_find_covering(const char *path, const struct bg_key4 *k4,
			  const struct bg_key6 *k6,
			  void (*cb)(void *ctx, const char *path, size_t line,
				     const char *text,
				     const struct bg_key4 *k4,
				     const struct bg_key6 *k6),
			  void *ctx);

/* ---- List files of any kind (load, check) -------------------------------
 * `load` takes address lists and domain lists together. Each file's kind
 * is detected, or stated with --format, which applies to the list files
 * (blocked and --allow alike) after it on the command line, up to the next
 * --format ("auto" goes back to detecting); --subdomains and
 * --no-subdomains work the same way for plain domain lists. bg_sources
 * keeps that state while the arguments are read in order.
 */
enum bg_src_format {
	BG_SRC_AUTO = 0, /* detect per file (bg_src_detect()) */
	BG_SRC_ADDR, /* addresses and CIDR prefixes (this file) */
	BG_SRC_PLAIN, /* domain lists: user/domains.h */
	BG_SRC_HOSTS,
	BG_SRC_ADBLOCK,
};

/* "auto", "addr", "plain", "hosts", "adblock"; "?" for anything else. */
const char *bg_src_format_name(int format);
/* The format named s (the names above), or -1. */
int bg_src_format_parse(const char *s);

/* Meaningful lines bg_src_detect() looks at. */
#define BG_SRC_DETECT_LINES 100

/*
 * The kind of a list, from its first BG_SRC_DETECT_LINES meaningful lines
 * (not blank, not a '#' or ';' comment): addresses (BG_SRC_ADDR) when more
 * than half of them are address or CIDR-prefix entries, or when there are
 * none; else Adblock or hosts when bg_dom_detect() finds either; else
 * plain when more than half of them are names of two labels or more (or
 * "*.name"); else addresses again: text that is neither is read as the
 * address list it was before domains, every line rejected as not an
 * address ("--format plain" says otherwise). A hosts file is never an
 * address list: "0.0.0.0 name" is not an address entry.
 */
enum bg_src_format bg_src_detect(const char *buf, size_t len);

struct bg_source {
	char *path;
	uint8_t format; /* enum bg_src_format; BG_SRC_AUTO: detect */
	uint8_t subdomains; /* plain domain entries cover subdomains */
	uint8_t allow; /* an --allow list */
};

struct bg_sources {
	struct bg_source *v;
	size_t n, cap;
	/* what applies to the files added next */
	uint8_t format, subdomains;
	int pending; /* a --format or --(no-)subdomains since the last file */
};

void bg_sources_init(struct bg_sources *s);
void bg_sources_free(struct bg_sources *s);
/* Adds a file with the format and subdomains option in force; the path is
 * copied. 0 or -ENOMEM. */
int bg_sources_add(struct bg_sources *s, const char *path, int allow);
/* Sets the format for the files added next; -EINVAL for an unknown name. */
int bg_sources_set_format(struct bg_sources *s, const char *name);
void bg_sources_set_subdomains(struct bg_sources *s, int on);
/* After the last argument: -EINVAL when a --format or --(no-)subdomains
 * came after the last file (it would apply to none), -ENOENT when no
 * block list was given (only --allow lists, or nothing). */
int bg_sources_done(const struct bg_sources *s);

/*
 * Reads one list file of any kind: an address list into addrs, a domain
 * list into names (every entry an allow rule when src->allow), with
 * opts->strict and opts->report. The format used (src->format, or the one
 * detected) goes to *used. 0, or -errno as bg_list_parse_file() /
 * bg_names_parse_file() (-EINVAL: strict and a line was rejected, or, in
 * a domain list, a subdomain rule deeper than BG_DNS_SUFFIX_MAX labels was
 * reported: it would never match).
 */
int bg_source_parse(const struct bg_source *src, struct bg_list *addrs,
		    struct bg_names *names, const struct bg_list_opts *opts,
		    int *used);

#endif
