/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The explanation behind `bloomgate check` (and the agent's): what a built
 * filter says about one address or name, judged with the datapath's own
 * lookups (bloomgate/lookup.h), and why: the list entries (file:line) that
 * cover it, blocking and allowing, re-read from the lists recorded for that
 * filter. Pure: the caller maps the live filter (user/swap.h) and reads the
 * load record (user/record.h); nothing is printed.
 */
#ifndef BLOOMGATE_EXPLAIN_H
#define BLOOMGATE_EXPLAIN_H

#include <stddef.h>

#include "record.h"

enum bg_explain_kind {
	BG_EXPLAIN_INVALID = 0, /* neither an address nor a name: why */
	BG_EXPLAIN_ADDR, /* an IPv4 or IPv6 address */
	BG_EXPLAIN_NAME, /* a domain name */
};

/* One list entry behind a verdict. */
struct bg_explain_entry {
	char *path;
	size_t line;
	/* address lists: the entry as read ("192.0.2.0/24", masked);
	 * domain lists: the line's text without surrounding blanks */
	char *text;
	/* names: the parent the entry covers as a subdomain rule, or NULL
	 * when it names the query itself */
	char *parent;
};

struct bg_explain_list {
	struct bg_explain_entry *v;
	size_t n;
};

struct bg_explanation {
	enum bg_explain_kind kind;
	const char *why; /* BG_EXPLAIN_INVALID: the reason */
	char name[256]; /* BG_EXPLAIN_NAME: the query, normalised */
	int listed; /* the filter matches (for a name: some probe), confirmed by
		      the exact stage when the filter has one */
	int confirmed; /* listed, and the exact stage confirmed it */
	int rejected; /* not listed: a Bloom positive the stage rejected */
	int allowed; /* listed, and the exact allowlist holds it */
	int no_names; /* a name, and the filter holds no names at all */
	int known; /* the load record belongs to this filter */
	struct bg_explain_list block, allow; /* entries, in list order */
	const char *unreadable; /* a recorded list that cannot be read now */
};

/*
 * Explains arg against the filter at mem (a mapped, validated filter map);
 * rec: the load record of that filter, or NULL when it is not known. An
 * argument that parses as an IP address is an address; anything else must
 * be a domain name. Entries are looked for only when the filter matches.
 * 0, or -ENOMEM. Free x with bg_explain_free().
 */
int bg_explain(const void *mem, const struct bg_record *rec, const char *arg,
	       struct bg_explanation *x);
void bg_explain_free(struct bg_explanation *x);

struct bg_store; /* user/store.h */

/* The same verdict, with the entries behind it from the agent's store: the
 * source's name and origin (URL or path, as fetched) and the line. */
int bg_explain_store(const void *mem, struct bg_store *st, const char *arg,
		     struct bg_explanation *x);

#endif
