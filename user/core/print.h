/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Front end: the core's reports as text for people. The CLI prints a load
 * report and a check answer with these; the agent logs the same lines.
 */
#ifndef BLOOMGATE_PRINT_H
#define BLOOMGATE_PRINT_H

#include <stddef.h>
#include <stdio.h>

#include "core/explain.h"
#include "core/prepare.h"
#include "core/units.h" /* bg_fmt_bytes */


/* "2 3 4" for the subdomain depths of a subs_depths mask, "none" for 0;
 * returns b or the constant. */
const char *bg_fmt_depths(char *b, size_t sz, unsigned int mask);

/* One detected list as a line without its newline: "hosts.txt: detected
 * hosts (97 of 100 non-comment lines look like hosts entries)". */
void bg_fmt_detected(char *buf, size_t len, const struct bg_load_detected *d);

/* The summary of a successful load (sources: as the report left them),
 * after a line for each list whose format was detected. */
void bg_print_load_report(FILE *out, const struct bg_sources *srcs,
			  const struct bg_load_report *r);

/* The protected set's part of a load's report: "protected set:" and
 * what it holds, then one line for each entry that covers a protected
 * address ("protected: 203.0.113.0/24 at /lists/x.txt:12 covers
 * 203.0.113.1, the address of interface eth0: loaded without it"); srcs
 * (NULL for an artifact's) names the lists. */
void bg_print_protect(FILE *out, const struct bg_sources *srcs,
		      const struct bg_load_report *r);
/* Where a cover's entry is, for its line: "at FILE:LINE", "in FILE", "in
 * list NAME" (an artifact's), or "". */
void bg_protect_where(char *buf, size_t len, const struct bg_sources *srcs,
		      const struct bg_protect_cover *c);

/* The one-line answer of check for arg, as "ARG: match (listed by ...)". */
void bg_print_explanation(FILE *out, const char *arg,
			  const struct bg_explanation *x);

/* An event's kernel time (bpf_ktime_get_ns) as unix time. */
double bg_event_unix_time(__u64 ts_ns);

/* One ring-buffer event (struct bg_event or bg_name_event) as one JSON
 * line: time, verdict, ifindex, interface, and match and addr, or name and
 * client. 0, -EINVAL for a short record, -EIO, -ENOMEM. */
int bg_print_event_json(FILE *out, const void *data, size_t size);
/* The same event as `bloomgate events` prints it, one line: "flag dst
 * ADDR on IFACE", "flag name NAME from CLIENT on IFACE at TIME" (local
 * time). 0, -EINVAL for a short record, -EIO. */
int bg_print_event_text(FILE *out, const void *data, size_t size);
/* That line, its newline included, into buf: its length, or -EINVAL for a
 * short record, -ENOSPC when len is too small (BG_EVENT_TEXT_MAX always
 * holds one). ifname: the interface's name, NULL to look it up. */
#define BG_EVENT_TEXT_MAX 1280
int bg_event_text(char *buf, size_t len, const void *data, size_t size,
		  const char *ifname);

#endif
