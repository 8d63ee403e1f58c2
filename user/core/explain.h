/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The explanation behind `bloomgate check` (and the agent's): what a built
 * filter says about one address or name, judged with the datapath's own
 * lookups (bloomgate/lookup.h), and why: the list entries (file:line) that
 * cover it, blocking and allowing, re-read from the lists recorded for that
 * filter. Pure: the caller maps the live filter (user/kern/swap.h) and reads the
 * load record (user/core/record.h); nothing is printed.
 */
#ifndef BLOOMGATE_EXPLAIN_H
#define BLOOMGATE_EXPLAIN_H

#include <stddef.h>

#include "core/protect.h"
#include "core/record.h"

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
	/* listed, not allowed, and the protected set holds it: passed
	 * (bg_explain_protect()); why: its item's reason */
	int protect;
	char protect_why[128];
	int family; /* an address: BG_KEY_IPV4 or BG_KEY_IPV6, in addr */
	__u8 addr[16];
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

/* After bg_explain() or bg_explain_found(): a listed, not allowlisted
 * address that the protected set s (the live one, kern/protect.h) holds
 * passes, as the datapath has it: x->protect, and why. */
void bg_explain_protect(struct bg_explanation *x, const struct bg_protect_set *s);

/* Longest source name + 1; bytes of a line's text kept ("..." marks a cut). */
#define BG_EXPLAIN_NAME_MAX 65
#define BG_EXPLAIN_TEXT_MAX 200

/* One entry behind a verdict, as a provenance store (the agent's) finds it:
 * the source by name, where its copy came from, the line. */
struct bg_explain_hit {
	char source[BG_EXPLAIN_NAME_MAX];
	char origin[1024];
	size_t line;
	char text[BG_EXPLAIN_TEXT_MAX + 4]; /* the line, without surrounding
					     blanks, as `check` quotes it */
	/* the entry as read: "192.0.2.0/24" (masked; a /32 or /128 without
	 * its length), or the rule's normalised name */
	char entry[256];
	int allow;
	int kind; /* names: enum bg_name_kind; addresses: 0 */
	/* names: the parent matched as a subdomain rule, "" for the name
	 * itself */
	char parent[256];
};

/* Finds the entries behind a check of arg (a provenance store: the agent's
 * store.h provides one); 0 with *hits malloc'd (ordered by source, then
 * line), -EINVAL when arg is neither an address nor a name, or -errno. */
typedef int (*bg_explain_find_fn)(void *ctx, const char *arg,
				  struct bg_explain_hit **hits, size_t *n);

/* The same verdict, with the entries behind it from find: the source's name
 * and origin (URL or path, as fetched) and the line. */
int bg_explain_found(const void *mem, bg_explain_find_fn find, void *ctx,
		     const char *arg, struct bg_explanation *x);

#endif
