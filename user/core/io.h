/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The bottom of the userspace core: reading a list into memory, and
 * reporting one of its lines. Every list parser (addresses, names) and the
 * load pipeline above them use these, so a file is read and a line is
 * quoted the same way everywhere. Depends on nothing else in user/.
 */
#ifndef BLOOMGATE_IO_H
#define BLOOMGATE_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Source bytes of a line quoted in its report. */
#define BG_QUOTE_MAX 80

/*
 * One diagnostic about a list: a rejected line, a line accepted with a
 * warning, or (line 0) the file as a whole (unreadable, too many lists).
 * Printed as "file:line: reason: 'text'", "file:line: warning: reason:
 * 'text'", "file: reason" or "file: warning: reason" (line 0: a list that
 * loaded but looks wrong as a whole, user/core/prepare.h).
 */
struct bg_diag {
	const char *file;
	size_t line; /* 1-based; 0: the file as a whole */
	int warning; /* 1: the line was accepted, with a warning (line 0:
			the file was read) */
	const char *reason;
	const char *text; /* the line quoted: no surrounding blanks, cut to
			     BG_QUOTE_MAX bytes on a UTF-8 boundary with
			     "...", control bytes as \xNN; "" for line 0 */
};

/* Receives every diagnostic of a parse, in line order. */
typedef void (*bg_diag_fn)(void *ctx, const struct bg_diag *d);

/* Where a parser's diagnostics go: to fn when set, else printed on out
 * (stderr when NULL). Built from the parser's options. */
struct bg_reporter {
	FILE *out;
	bg_diag_fn fn;
	void *ctx;
};

static inline struct bg_reporter bg_reporter_make(FILE *out, bg_diag_fn fn,
						  void *ctx)
{
	struct bg_reporter r = { .out = out, .fn = fn, .ctx = ctx };

	return r;
}

/*
 * One accepted entry, as a parse hands it on while it reads (the agent's
 * provenance index is written from these, in the same pass that builds the
 * filter: a list is parsed once). kind: BG_KEY_IPV4 or BG_KEY_IPV6 with
 * key the struct bg_key4 / bg_key6 (masked), or BG_ENTRY_NAME with key the
 * normalised name (NUL-terminated) and name_kind its enum bg_name_kind.
 * The line's text is [line_off, line_off + line_len) of the list as read.
 */
#define BG_ENTRY_NAME 0x80 /* bg_entry_ref.kind of a domain rule */
struct bg_entry_ref {
	size_t source; /* index of the list in bg_load_opts.sources */
	size_t line; /* 1-based */
	uint64_t line_off; /* byte offset of the line's first byte */
	uint32_t line_len; /* without the line end */
	uint8_t kind; /* BG_KEY_* (bloomgate/abi.h) */
	uint8_t name_kind; /* names: enum bg_name_kind */
	uint8_t allow; /* an allow entry: an allowlist's, or an @@ rule */
	const void *key;
};

/*
 * Receives every accepted entry of a parse (duplicates and covered
 * prefixes included: they are entries of their lines). A parse may run on
 * several threads: worker (< BG_PARSE_WORKERS_MAX) says which one calls,
 * calls with the same worker never overlap, and within one worker entries
 * come in line order; entries of different workers come in any order.
 */
#define BG_PARSE_WORKERS_MAX 16
typedef void (*bg_entry_fn)(void *ctx, unsigned int worker,
			    const struct bg_entry_ref *e);

/* Prints d in the form above, with a newline. */
void bg_diag_print(FILE *out, const struct bg_diag *d);

/* Reports line lineno, whose text is [s, s + n). A reason starting with
 * "warning: " is a warning (the prefix is not part of d->reason). */
void bg_report_line(const struct bg_reporter *r, const char *file,
		    size_t lineno, const char *reason, const char *s, size_t n);

/* Reports the file as a whole ("file: reason"). */
void bg_report_file(const struct bg_reporter *r, const char *file,
		    const char *reason);

/*
 * The default bound of one list's size: generous (the largest public
 * lists are a few hundred MB), but /dev/zero or an endless pipe stops
 * here instead of taking every byte of memory.
 */
#define BG_LIST_BYTES_MAX (4ull << 30)

/* The name a list read from standard input ("-") goes by in reports. */
#define BG_STDIN_NAME "/dev/stdin"

/* path as reports name it: BG_STDIN_NAME for "-", else path itself. */
const char *bg_list_name(const char *path);

/*
 * Reads a list into a malloc'd buffer: "-" is standard input (whatever it
 * is), anything else must be a regular file, checked on the opened file
 * without blocking (a FIFO with no writer is refused at once). At most max
 * bytes (0: BG_LIST_BYTES_MAX). 0, or -errno reported to r as "name:
 * reason": -EISDIR for a directory, -ENOTSUP for a FIFO or a device
 * ("a FIFO, not a regular file ..."), -EFBIG past max ("more than N
 * bytes"), else the open's or read's.
 */
int bg_read_list(const char *path, uint64_t max, const struct bg_reporter *r,
		 char **bufp, size_t *lenp);

/*
 * Opens a list to be read in pieces (bg_list_parse_fd()): a regular file,
 * as bg_read_list() opens it, of at most max bytes (0: BG_LIST_BYTES_MAX),
 * its size in *size. The fd, or -errno reported as bg_read_list() reports
 * it; -ESPIPE, not reported, for "-" (standard input is read whole).
 */
int bg_open_list(const char *path, uint64_t max, const struct bg_reporter *r,
		 uint64_t *size);

/* A parser of one list held in memory, into dst, with its options. */
typedef int (*bg_parse_fn)(void *dst, const char *name, const char *buf,
			   size_t len, const void *opts);

/*
 * Re-reads a list a load named, for `check` (bg_list_find_covering(),
 * bg_names_find()): as bg_read_list() with the default bound, but silent,
 * and never standard input ("-": -ENOENT). A recorded path that has become
 * a FIFO or a device since is refused at once instead of blocking check.
 */
int bg_reread_list(const char *path, char **bufp, size_t *lenp);

/* Reads the list at path (bg_read_list(), the default bound) and parses
 * it with fn under its report name; 0 or -errno, as bg_read_list() or fn
 * returns. */
int bg_parse_file(const char *path, const struct bg_reporter *r,
		  bg_parse_fn fn, void *dst, const void *opts);

#endif
