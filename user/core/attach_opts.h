/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What an attachment is configured with, as plain types and the names
 * people write: shared by `bloomgate attach` (user/cli/), the agent's
 * config (interfaces:) and the attach code itself (user/kern/attach.c). Core:
 * no libbpf.
 */
#ifndef BLOOMGATE_ATTACH_OPTS_H
#define BLOOMGATE_ATTACH_OPTS_H

#include <stdint.h>

#include "bloomgate/abi.h"
#include "core/opts.h"

enum bg_mode {
	BG_MODE_NATIVE = 1,
	BG_MODE_SKB = 2,
};

struct bg_attach_opts {
	enum bg_mode mode;
	enum bg_match match;
	enum bg_action action;
	enum bg_dns_action dns_action; /* 0: BG_DNS_ACTION_NXDOMAIN */
	enum bg_unparsed unparsed; /* 0: BG_UNPARSED_PASS */
	__u16 dns_ports[BG_DNS_PORTS_MAX]; /* 0 = unused; all 0: BG_DNS_PORT */
	/* Bloom keys the filter map must hold at BG_FPR_DEFAULT: the map is
	 * then of that fixed size (bg_filter_capacity_elems()), so the
	 * verifier inlines the lookups in it. 0: any size (the default). */
	uint64_t capacity;
	/* The capacity grows: a filter that outgrows it gets a larger map
	 * and program in place of the attached ones (bg_attach_grow()).
	 * Without a capacity it starts at BG_CAPACITY_GROW_MIN keys. */
	int grow;
	/* Every packet passed goes on to the attachment's next program
	 * (`bloomgate chain`: a tail call into its BG_PROG_NEXT slot), when
	 * one is set; the way to run another XDP program behind bloomgate on
	 * the interface. */
	int chain;
};

/* The first capacity (Bloom keys) of a growing attachment without one,
 * and the least it shrinks to: small, as a load grows it at once to what
 * its keys need (about 24 KiB). */
#define BG_CAPACITY_GROW_MIN 4096
/* A growing capacity is made for this many times the keys that outgrew it
 * (numerator over 4: 1.25x; the memory a default filter takes is at
 * most that much more than it needs, until it grows again). */
#define BG_CAPACITY_GROW_HEADROOM4 5
/* It shrinks back to that when a filter would fit this many times over
 * (memory returned; the factor keeps lists that come and go near a size
 * from changing programs at every load). */
#define BG_CAPACITY_SHRINK_FACTOR 4

/* Largest capacity (Bloom keys) accepted: a map of about 1.8 GB. */
#define BG_CAPACITY_MAX 1000000000ULL

/* The defaults: native, dst, drop, nxdomain, port 53, unparsed pass. */
extern const struct bg_attach_opts bg_attach_defaults;

/* The names of each setting ("native", "dst", "drop", "nxdomain"...), with
 * a line of help each; NULL-terminated. */
extern const struct bg_opt_enum bg_mode_values[];
extern const struct bg_opt_enum bg_match_values[];
extern const struct bg_opt_enum bg_action_values[];
extern const struct bg_opt_enum bg_dns_action_values[];
extern const struct bg_opt_enum bg_unparsed_values[];

/* The name of value in a table above; "?" when it has none. */
const char *bg_enum_name(const struct bg_opt_enum *values, int value);

/* As `status` and `attach` print an attachment: the names of a setting,
 * of a record's mode and unparsed policy (abi.h's flags). */
const char *bg_match_name(int m);
const char *bg_action_name(int a);
const char *bg_dns_action_name(int a);
const char *bg_rec_mode_name(const struct bg_attach_rec *r);
const char *bg_rec_unparsed_name(const struct bg_attach_rec *r);
/* "53" or "53,5353" */
void bg_fmt_ports(char *buf, size_t len, const __u16 *ports);
/* "any size", or "16000 keys, 1.86 MiB" */
void bg_fmt_capacity(char *buf, size_t len, __u32 elems);

/*
 * What differs between two attachments' options, as a reload says it
 * ("match dst -> src, dns-ports 53 -> 53,5353"): their match, action, DNS
 * action and ports, unparsed policy and chain, with the defaults made
 * explicit (an absent DNS action is nxdomain, no port is 53); "" when
 * nothing does. 1 when something differs, else 0. out may be NULL.
 */
int bg_attach_opts_diff(const struct bg_attach_opts *a,
			const struct bg_attach_opts *b, char *out, size_t len);
static inline int bg_attach_opts_differ(const struct bg_attach_opts *a,
					const struct bg_attach_opts *b)
{
	return bg_attach_opts_diff(a, b, NULL, 0);
}

struct bg_filter_params;
/*
 * A growing capacity (attach's default): the one plan
 * p gets, in elements: BG_CAPACITY_GROW_HEADROOM4 / 4 times its tables'
 * elements (at least what BG_CAPACITY_GROW_MIN keys take at the
 * defaults), and at least its own elements.
 */
__u32 bg_capacity_grown(const struct bg_filter_params *p);
/* 1 when a growing capacity of elems elements must change for plan p: p
 * outgrows it, or would fit it BG_CAPACITY_SHRINK_FACTOR times over. */
int bg_capacity_regrow(const struct bg_filter_params *p, __u32 elems);

#endif
