/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Blocklist parsing: files of addresses into sorted, de-duplicated keys. */
#ifndef BLOOMGATE_LISTS_H
#define BLOOMGATE_LISTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bloomgate/abi.h"

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
};

struct bg_list_opts {
	int strict; /* a rejected line makes the parse fail with -EINVAL */
	FILE *report; /* where "file:line: reason" goes; NULL: stderr */
};

void bg_list_init(struct bg_list *l);
void bg_list_free(struct bg_list *l);

/*
 * Parses one list held in memory; name is used in reports. Returns 0, or a
 * negative errno: -EINVAL when opts->strict and a line was rejected,
 * -ENOMEM. Every rejected line is reported as "name:line: reason: text".
 */
int bg_list_parse_buf(struct bg_list *l, const char *name, const char *buf,
		      size_t len, const struct bg_list_opts *opts);

/* Same for a file; -errno when it cannot be read (reported). */
int bg_list_parse_file(struct bg_list *l, const char *path,
		       const struct bg_list_opts *opts);

/* Sorts and removes duplicate keys; counts them in l->duplicates. */
void bg_list_finish(struct bg_list *l);

/*
 * Parses one address token ("192.0.2.1", "2001:db8::1"). Returns BG_KEY_IPV4
 * or BG_KEY_IPV6 and fills the matching key, or 0 and sets *reason.
 */
int bg_parse_addr(const char *tok, struct bg_key4 *k4, struct bg_key6 *k6,
		  const char **reason);

#endif
