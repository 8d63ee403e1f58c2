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

enum bg_name_kind {
	BG_NAME_EXACT = 1, /* the name only */
	BG_NAME_TREE = 2, /* the name and all its subdomains */
	BG_NAME_SUBS = 3, /* its subdomains only (*.name) */
};

enum bg_dom_format {
	BG_DOM_AUTO = 0, /* detect per file */
	BG_DOM_PLAIN, /* one domain per line */
	BG_DOM_HOSTS, /* 0.0.0.0 name [name...] */
	BG_DOM_ADBLOCK, /* ||name^, @@||name^ */
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
	void *arena; /* internal: the blocks the names point into */
};

struct bg_dom_opts {
	enum bg_dom_format format; /* BG_DOM_AUTO: detect */
	int subdomains; /* plain entries cover subdomains (BG_NAME_TREE) */
	int allow; /* every entry of this file is an allow rule */
	int strict; /* a rejected line fails the parse with -EINVAL */
	FILE *report; /* "file:line: reason: 'text'"; NULL: stderr */
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

/* Detects the format of a buffer from its first meaningful lines. */
enum bg_dom_format bg_dom_detect(const char *buf, size_t len);

#endif
