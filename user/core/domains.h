/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Domain lists (issue 4): plain domains, hosts files, Adblock-style rules
 * and wildcards, parsed into validated, lowercased names with a kind and an
 * allow flag. Hashing and the filter build are elsewhere.
 */
#ifndef BLOOMGATE_DOMAINS_H
#define BLOOMGATE_DOMAINS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/format.h"
#include "core/io.h"

enum bg_name_kind {
	BG_NAME_EXACT = 1, /* the name only */
	BG_NAME_TREE = 2, /* the name and all its subdomains */
	BG_NAME_SUBS = 3, /* its subdomains only (*.name) */
};

struct bg_name {
	char *name; /* lowercased, no trailing dot, e.g. "ads.example.com" */
	uint8_t kind; /* enum bg_name_kind */
	uint8_t allow; /* 1: an allow rule (@@||name^, or an --allow file) */
	uint16_t file; /* index into bg_names.files */
	uint32_t line; /* 1-based line number */
};

struct bg_names {
	struct bg_name *v;
	size_t n, cap;
	char **files; /* file names, as given */
	size_t nfiles;
	size_t lines, accepted, rejected, skipped, duplicates, warnings;
	/* rules covering subdomains of a name deeper than BG_DNS_SUFFIX_MAX
	 * labels (reported; their subdomain part never matches) */
	size_t too_deep;
	void *arena; /* internal: the blocks the names point into */
};

struct bg_dom_opts {
	/* BG_FMT_PLAIN, _HOSTS or _ADBLOCK; BG_FMT_AUTO: detect
	 * (bg_dom_detect()); BG_FMT_ADDR: refused with -EINVAL */
	enum bg_format format;
	int subdomains; /* plain entries cover subdomains (BG_NAME_TREE) */
	int allow; /* every entry of this file is an allow rule */
	int strict; /* a rejected line fails the parse with -EINVAL */
	FILE *report; /* "file:line: reason: 'text'"; NULL: stderr */
	bg_diag_fn diag; /* when set, diagnostics go here instead (io.h) */
	void *diag_ctx;
	/* every accepted rule, as it is read (io.h); NULL: none */
	bg_entry_fn entry;
	void *entry_ctx;
	size_t source;
};

void bg_names_init(struct bg_names *l);
void bg_names_free(struct bg_names *l);

/* Parses a buffer / a file; 0 or -errno (-EINVAL on a strict violation). */
int bg_names_parse_buf(struct bg_names *l, const char *name, const char *buf,
		       size_t len, const struct bg_dom_opts *o);
int bg_names_parse_file(struct bg_names *l, const char *path,
			const struct bg_dom_opts *o);

/* Sorts by (name, kind, allow) and removes exact duplicates. */
void bg_names_finish(struct bg_names *l);

/* Validates and normalises one name (lowercase, trailing dot removed) into
 * out (at least 254 bytes). 0, or -1 with *reason set. */
int bg_name_normalise(const char *in, size_t len, char *out, const char **reason);

/* Detects the format of a domain list from its first meaningful lines:
 * BG_FMT_ADBLOCK, BG_FMT_HOSTS or BG_FMT_PLAIN. */
enum bg_format bg_dom_detect(const char *buf, size_t len);

/* The line [s, e) as bg_dom_detect() sees it: BG_FMT_AUTO blank or a '#'
 * comment, BG_FMT_ADBLOCK when it starts as an Adblock rule does ('|',
 * '!', '[', "@@"), BG_FMT_HOSTS an address followed by a name, else
 * BG_FMT_PLAIN (which says nothing of whether it is a valid name:
 * bg_names_plain_line() does). */
int bg_dom_line_format(const char *s, const char *e);

/* 1 if the line [s, e) is a plain domain list's entry: one name of two
 * labels or more, or "*.name", and maybe a '#' comment. For detection. */
int bg_names_plain_line(const char *s, const char *e);

/*
 * Explains a name match (check): parses the list at path exactly as
 * bg_names_parse_file() does with options o (format, subdomains, allow;
 * reports and strict are ignored) and calls cb for every entry that the
 * datapath's probes for query find, in line order: the entry naming query
 * itself (an exact or name-and-subdomains rule; label 0), or one naming a
 * parent of at most BG_DNS_SUFFIX_MAX labels and covering its subdomains
 * (a name-and-subdomains or subdomains-only rule; label j >= 1: the parent
 * starts at the j-th label of query, 0-based). Allow rules are found like
 * block rules (e->allow says which). cb gets the 1-based line number and
 * the line's text without surrounding blanks (NUL-terminated, valid during
 * the call). query is normalised first (case, trailing dot). Returns the
 * number of entries found, -EINVAL for a query that is not a name, or
 * -errno when the file cannot be read.
 */
int bg_names_find(const char *path, const struct bg_dom_opts *o,
		  const char *query,
		  void (*cb)(void *ctx, const char *path, size_t line,
			     const char *text, const struct bg_name *e,
			     int label),
		  void *ctx);

#endif
