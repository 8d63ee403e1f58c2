/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Pinned state: the bpffs directory everything bloomgate leaves in the
 * kernel is pinned under, and opening it with the directory lock.
 *
 * The pin directory (BG_PIN_DIR, or $BLOOMGATE_PIN_DIR) holds the filter
 * slot map, the counters, the event ring buffer, the attachment records,
 * the protected set and one prog array per attachment. libxdp pins the XDP dispatcher itself
 * under /sys/fs/bpf/xdp/. Kernel part: needs libbpf.
 */
#ifndef BLOOMGATE_PINS_H
#define BLOOMGATE_PINS_H

#include <stddef.h>

#include "bloomgate/abi.h"
#include "core/record.h" /* bg_pin_dir(): the record is named after it */

struct bg_state {
	char dir[256]; /* pin directory */
	int lock_fd; /* the directory, flock()ed; -1 when not locked */
	int filters_fd; /* ARRAY_OF_MAPS slot 0: current filter */
	int counters_fd;
	int events_fd;
	int attach_fd;
	/* the protected set (kern/protect.h); -1 when not pinned (an
	 * attachment made by a bloomgate older than the set) */
	int protect_fd;
};

/* The maps pinned once per pin directory, shared by every attachment. */
enum bg_pin_map {
	BG_PIN_FILTERS,
	BG_PIN_COUNTERS,
	BG_PIN_EVENTS,
	BG_PIN_ATTACH,
	BG_PIN_PROTECT, /* may be missing: bg_state.protect_fd */
	BG_PIN__COUNT,
};

/*
 * Mounts bpffs on /sys/fs/bpf when it is not mounted. Not in a network
 * namespace of /run/netns (`ip netns exec` runs a command there with a
 * mount namespace of its own, without the bpffs): a bpffs mounted there
 * would be a new, empty one that goes when the command exits, with every
 * pin made in it. -ENOMEDIUM then (bg_no_bpffs_why() says so).
 */
int bg_ensure_bpffs(void);
/* 1 when /sys/fs/bpf is a bpffs in this mount namespace. */
int bg_bpffs_mounted(void);
/* Why a command finds no pins when /sys/fs/bpf is not a bpffs here (its
 * -ENOMEDIUM), and how to reach them: one line, into buf. */
void bg_no_bpffs_why(char *buf, size_t len);

/* Pin path of map m in pin directory dir. */
void bg_map_pin_path(char *buf, size_t len, const char *dir,
		     enum bg_pin_map m);

/* Takes the exclusive flock on st->dir (st->lock_fd); serialises attach,
 * detach and load. */
int bg_state_lock(struct bg_state *st);

/* Opens the pinned maps, taking the directory lock when lock is 1.
 * Without it (0), a reader that finds bg_filters missing while the
 * records are pinned waits for the lock once: a capacity change pins a
 * new bg_filters under it (bg_attach_reshape()). BG_STATE_HELD: the
 * caller holds the lock already (no lock, no wait).
 * -ENOENT: nothing pinned (bloomgate is not attached anywhere);
 * -ENOMEDIUM: no bpffs on /sys/fs/bpf in this mount namespace (nothing
 * pinned can be seen from here; never mounted here: a new bpffs is an
 * empty one). */
#define BG_STATE_HELD 2
int bg_state_open(struct bg_state *st, int lock);
void bg_state_close(struct bg_state *st);

/*
 * Each attachment has its own bg_progs (the tail-call PROG_ARRAY holding
 * its bloomgate_dns), pinned in the pin directory as
 * "bg_progs_IFINDEX_NETNS" (netns: the nsfs inode of the interface's
 * network namespace, as in bg_attach_rec), so attachments in two
 * namespaces never share a name; it goes with the attachment on detach.
 */
#define BG_PROGS_PIN_PREFIX BG_TEXTIFY(BG_MAP_PROGS) "_"
void bg_progs_pin_path(char *buf, size_t len, const char *dir, __u32 ifindex,
		       __u32 netns_ino);

/*
 * The live filter map, pinned as "bg_filter" beside bg_filters by every
 * load that publishes one (bg_filter_pin()): a reader with CAP_BPF opens
 * it there, where getting the map of bg_filters' slot by its id would
 * need CAP_SYS_ADMIN (the agent's unit does not have it).
 */
#define BG_FILTER_PIN "bg_filter"
void bg_filter_pin_path(char *buf, size_t len, const char *dir);

/* Removes every pin in dir, prog arrays a crash left behind included, the
 * directory and the load record; for when no interface is attached. */
void bg_unpin_all(const char *dir);

/* Inode of the calling thread's network namespace (records carry it). */
__u32 bg_netns_ino(void);

#endif
