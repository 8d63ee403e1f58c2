/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sources: list files of any kind, above both list parsers. Detects each
 * file's format (user/core/format.h) and dispatches it to the address parser
 * (user/core/lists.h) or the domain parser (user/core/domains.h), into one blocklist
 * that holds what a filter is planned and built from (user/core/filter.h).
 *
 * `load` takes address lists and domain lists together. Each file's kind
 * is detected, or stated with --format, which applies to the list files
 * (blocked and --allow alike) after it on the command line, up to the next
 * --format ("auto" goes back to detecting); --subdomains and
 * --no-subdomains work the same way for plain domain lists. bg_sources
 * keeps that state while the arguments are read in order.
 */
#ifndef BLOOMGATE_SOURCES_H
#define BLOOMGATE_SOURCES_H

#include <stddef.h>
#include <stdint.h>

#include "core/domains.h"
#include "core/format.h"
#include "core/lists.h"

/* What a filter is built from: addresses and names side by side. */
struct bg_blocklist {
	struct bg_list block; /* blocked addresses and prefixes */
	struct bg_list allow; /* allowed addresses and prefixes (--allow) */
	struct bg_names names; /* domain rules, blocking and allowing
				  (bg_name.allow: an @@ rule or an --allow
				  list's entry) */
};

void bg_blocklist_init(struct bg_blocklist *bl);
void bg_blocklist_free(struct bg_blocklist *bl);
/* bg_list_finish() and bg_names_finish() on every part. */
void bg_blocklist_finish(struct bg_blocklist *bl);
/* The same, the address lists sorted on threads threads (0: every CPU). */
void bg_blocklist_finish_mt(struct bg_blocklist *bl, unsigned int threads);

/* Meaningful lines bg_format_detect() looks at. */
#define BG_FMT_DETECT_LINES 100

/*
 * The kind of a list, from its first BG_FMT_DETECT_LINES meaningful lines
 * (not blank, not a '#' or ';' comment): addresses (BG_FMT_ADDR) when more
 * than half of them are address or CIDR-prefix entries, or when there are
 * none; else Adblock when one of them starts as an Adblock rule, else
 * hosts when one is an address and a name (bg_dom_line_format()); else
 * plain when more than half of them are names of two labels or more (or
 * "*.name"); else addresses again: text that is neither is read as the
 * address list it was before domains, every line rejected as not an
 * address ("--format plain" says otherwise). A hosts file is never an
 * address list: "0.0.0.0 name" is not an address entry.
 */
enum bg_format bg_format_detect(const char *buf, size_t len);

/* Why bg_format_detect() chose its format. */
enum bg_detect_why {
	BG_DETECT_EMPTY = 1, /* no meaningful line: addresses */
	BG_DETECT_MAJORITY, /* more than half are its entries (addr, plain) */
	BG_DETECT_MARK, /* a line has its mark (Adblock syntax; hosts: an
			   address, then a name) */
	BG_DETECT_FALLBACK, /* nothing fits: addresses, lines rejected */
};

/* What detection saw, for `load` to say what it did and why. */
struct bg_format_evidence {
	uint8_t format; /* enum bg_format: the one chosen */
	uint8_t why; /* enum bg_detect_why */
	uint8_t cut; /* more meaningful lines follow the ones looked at */
	unsigned int lines; /* meaningful lines looked at */
	/* Of them, lines that look like each format's entries: [BG_FMT_ADDR]
	 * addresses and prefixes (bg_list_line_kind()), [BG_FMT_PLAIN] names
	 * of two labels or more (bg_names_plain_line()), [BG_FMT_HOSTS] and
	 * [BG_FMT_ADBLOCK] lines bg_dom_line_format() says are hosts entries
	 * or Adblock rules; [BG_FMT_AUTO] is 0. */
	unsigned int n[BG_FMT__COUNT];
};

/* bg_format_detect(), with its evidence in *ev (which may be NULL). */
enum bg_format bg_format_detect_ev(const char *buf, size_t len,
				   struct bg_format_evidence *ev);

/* The evidence in words, as `load` prints it after "detected FORMAT":
 * "97 of 100 non-comment lines look like hosts entries". Returns buf. */
const char *bg_format_evidence_text(const struct bg_format_evidence *ev,
				    char *buf, size_t len);

/* "addresses" for BG_FMT_ADDR, else bg_format_name(). */
const char *bg_format_word(int format);

/*
 * What a list is and how it is read: the one description of a list, from
 * the agent's config to the load, the provenance index, the store and the
 * metrics, each of which embeds it rather than copying its fields, so that
 * a new read option is added here once. Identity: name (the agent's; NULL
 * for a file given to `load`, which has only its path) and where it comes
 * from, a url or a path (exactly one for the agent's lists). Read options:
 * the same for a file given to `load`, as its options stated them.
 * Whoever fills the strings owns them (the agent's config, a job's copy
 * from bg_list_desc_dup()); a struct assignment borrows them.
 */
struct bg_list_desc {
	const char *name;
	const char *url; /* http:// or https://, or NULL */
	const char *path; /* the list's own file (not a copy of it), or NULL */
	uint8_t format; /* enum bg_format; BG_FMT_AUTO: detect */
	uint8_t subdomains; /* plain domain entries cover subdomains */
	uint8_t allow; /* an allowlist (`load --allow`) */
	uint8_t allow_wide; /* its wide prefixes load (bg_list_opts) */
};

/* Where the list comes from, as messages and explanations name it: the
 * url, else the path (NULL when it has neither). */
static inline const char *bg_list_origin(const struct bg_list_desc *d)
{
	return d->url ? d->url : d->path;
}

/* *dst = *src with the strings duplicated (NULL stays NULL), for a holder
 * that outlives src's owner (a worker's job); 0 or -ENOMEM (*dst then
 * holds nothing to free). */
int bg_list_desc_dup(struct bg_list_desc *dst, const struct bg_list_desc *src);
/* Frees the strings of a bg_list_desc_dup() copy and zeroes it. */
void bg_list_desc_free(struct bg_list_desc *d);

/* One file a load parses. path is that file, which is not always the
 * list's: the agent parses its copy of a list (or a candidate copy), so
 * list.url or list.path says where it came from and path what is read. */
struct bg_source {
	char *path; /* the file parsed; owned */
	struct bg_list_desc list; /* read options (and, from the agent, the
				     list's identity, borrowed) */
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
/* Adds a file read as list says (the state above not used); the path is
 * copied, list's strings borrowed. 0 or -ENOMEM. */
int bg_sources_add_list(struct bg_sources *s, const char *path,
			const struct bg_list_desc *list);
/* Sets the format for the files added next; -EINVAL for an unknown name. */
int bg_sources_set_format(struct bg_sources *s, const char *name);
void bg_sources_set_subdomains(struct bg_sources *s, int on);
/* After the last argument: -EINVAL when a --format or --(no-)subdomains
 * came after the last file (it would apply to none), -ENOENT when no
 * block list was given (only --allow lists, or nothing). */
int bg_sources_done(const struct bg_sources *s);

/*
 * Reads one list file of any kind, src->path, into bl as src->list says:
 * an address list into bl->block (bl->allow when list.allow), a domain
 * list into bl->names (every entry an allow rule when list.allow), with
 * opts->strict and its reports. The format used (list.format, or the one
 * detected) goes to *used. An address list's wide prefixes load when
 * opts->allow_wide or list.allow_wide (an --allow list's always:
 * bg_list_parse_buf()). The file is read with bg_read_list() ("-": standard input, reported as
 * BG_STDIN_NAME; else a regular file; opts->max_bytes). 0, or
 * -errno as bg_list_parse_file() / bg_names_parse_file() (-EINVAL: strict
 * and a line was rejected, or, in a domain list, a subdomain rule deeper
 * than BG_DNS_SUFFIX_MAX labels was reported: it would never match).
 */
int bg_source_parse(const struct bg_source *src, struct bg_blocklist *bl,
		    const struct bg_list_opts *opts, int *used);

/*
 * What bg_source_parse_info() found about one file. "Lines" are the lines
 * that loaded an entry or were rejected (blank lines, comments and lines
 * of skipped names only, such as "127.0.0.1 localhost", are neither); a
 * hosts line with one good name and one bad counts once, as rejected.
 */
struct bg_source_info {
	int format; /* the format used */
	int detected; /* 1: detected (ev says why); 0: stated */
	struct bg_format_evidence ev;
	size_t lines, rejected; /* lines, and of them lines rejected */
	size_t entries; /* entries loaded, before de-duplication */
	/* When more than half of the lines were rejected: the other format
	 * that would have loaded the most of them, when that is more than
	 * half of its own lines (BG_FMT_AUTO: none), and how many. */
	int likely;
	size_t likely_lines, likely_of;
};

/* 1 when more than half of the file's lines were rejected. */
static inline int bg_source_mostly_rejected(const struct bg_source_info *i)
{
	return 2 * i->rejected > i->lines;
}

/*
 * bg_source_parse(), and what it found in *info (filled whatever the
 * result, as far as the parse went). To find info->likely, a mostly
 * rejected file is parsed again as each other format, silently, into
 * scratch lists: only then, and never for a file that loads well.
 */
int bg_source_parse_info(const struct bg_source *src, struct bg_blocklist *bl,
			 const struct bg_list_opts *opts,
			 struct bg_source_info *info);

#endif
