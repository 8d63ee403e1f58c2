/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Attaching bloomgate to interfaces and detaching it, through libxdp, and
 * the attachment records `status` lists. Kernel part: needs libbpf and
 * libxdp.
 */
#ifndef BLOOMGATE_ATTACH_H
#define BLOOMGATE_ATTACH_H

#include <stddef.h>

#include "bloomgate/abi.h"
#include "core/attach_opts.h"
#include "kern/pins.h"

/* Attaches to ifname; errors carry a one-line message in err. */
int bg_attach(const char *ifname, const struct bg_attach_opts *o, char *err,
	      size_t errlen);
int bg_detach(const char *ifname, char *err, size_t errlen);
/* Detaches from every recorded interface (also ones that no longer exist)
 * and removes every pin. */
int bg_detach_all(char *err, size_t errlen);

/*
 * An attachment is gone when its interface no longer exists: its ifindex
 * is free in the record's network namespace (netns_ino), or nothing holds
 * that namespace any more (no bind mount in our mountinfo, no process in
 * it). Records have no room for a name: a gone one is known by its
 * ifindex only. 1 gone, 0 there, -errno when it cannot be told (entering
 * another namespace needs CAP_SYS_ADMIN).
 */
int bg_attach_rec_gone(const struct bg_attach_rec *rec);
/* How many of the records are gone. */
int bg_attach_count_gone(struct bg_state *st);
/* Removes every gone attachment: its record and its prog array pin (its
 * program went with the interface), calling cb for each; after the last
 * attachment, every pin (as bg_detach). How many were removed, or -errno
 * (-ENOENT: nothing pinned), with a message in err. */
typedef void (*bg_gone_fn)(void *ctx, const struct bg_attach_rec *rec);
int bg_detach_gone(bg_gone_fn cb, void *ctx, char *err, size_t errlen);

/* Reads the attachment records (up to max), returns how many. */
int bg_attach_list(struct bg_state *st, struct bg_attach_rec *recs, int max);

/* The filter capacity of the attachments (bg_attach_rec.capacity: elements,
 * 0 = any size) into *capacity; 0 with none attached. -EPROTO when the
 * records disagree (attach refuses that), else -errno. */
int bg_attach_capacity(struct bg_state *st, __u32 *capacity);

/* 1 when the attachments' capacity grows (attach --grow), else 0. */
int bg_attach_grows(struct bg_state *st);

/*
 * Changes the filter map's shape, under the lock: its capacity cap
 * (elements; 0: any size) and whether it grows. For every attachment a new
 * program, configured as its record says, with a new bg_filters of that
 * shape whose slot holds filter_fd (a map of that shape:
 * bg_filter_map_new() with capacity cap), replaces the attached one with
 * the kernel's atomic XDP replace (each packet runs the old program with
 * the old filter or the new with the new: no gap); then the records, the
 * prog array pins and the bg_filters pin name the new ones, and
 * st->filters_fd is the new slot. A failure before the last swap puts the
 * old programs back. Needs CAP_SYS_ADMIN (the attached programs are opened
 * by id, the expected side of each swap). 0 or -errno with err set.
 */
int bg_attach_reshape(struct bg_state *st, __u32 cap, int grow, int filter_fd,
		      char *err, size_t errlen);

/*
 * Changes the options of ifname's attachment in this network namespace to
 * o's: its match, action, DNS action and ports, unparsed policy and chain
 * (not its mode, nor its filter map's shape: a capacity change is
 * bg_attach_reshape()'s). A new program with o's options, on the pinned
 * filter slot, counters and records, replaces the attached one with the
 * kernel's atomic XDP replace (each packet runs the old program or the
 * new: no gap), then the record and the prog array pin name it; the
 * chained program stays when o->chain. 0, 1 when nothing differs, or
 * -errno with err set (the old program then stays).
 */
int bg_attach_reconfigure(const char *ifname, const struct bg_attach_opts *o,
			  char *err, size_t errlen);

/*
 * `bloomgate chain`: puts program prog (a pinned path on bpffs, or "id:N")
 * in the BG_PROG_NEXT slot of ifname's attachment, which must have been
 * made with --chain: every packet bloomgate passes there goes on to it
 * (a tail call; what it returns is the verdict). prog NULL empties the
 * slot. 0, or -errno with err set.
 */
int bg_attach_chain(const char *ifname, const char *prog, char *err, size_t errlen);
/* 1 when an interface of this network namespace runs another program
 * than its record names: a shape change killed between its swaps and its
 * records (bg_load_commit() then makes the shape anew, every attachment
 * on a program of the pinned slot). */
int bg_attach_stale(struct bg_state *st);
/* The id of the program in r's next slot into *id (0: none). */
int bg_attach_next_id(const char *dir, const struct bg_attach_rec *r, __u32 *id);

#endif
