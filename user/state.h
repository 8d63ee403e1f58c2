/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Pinned state, attach/detach and the atomic filter swap.
 *
 * Everything bloomgate leaves in the kernel is pinned under one directory
 * (BG_PIN_DIR, or $BLOOMGATE_PIN_DIR): the filter slot map, the counters,
 * the event ring buffer and the attachment records. libxdp pins the XDP
 * dispatcher itself under /sys/fs/bpf/xdp/.
 */
#ifndef BLOOMGATE_STATE_H
#define BLOOMGATE_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "bloomgate/abi.h"
#include "filter.h"
#include "sources.h"

struct bg_state {
	char dir[256]; /* pin directory */
	int lock_fd; /* the directory, flock()ed; -1 when not locked */
	int filters_fd; /* ARRAY_OF_MAPS slot 0: current filter */
	int counters_fd;
	int events_fd;
	int attach_fd;
};

enum bg_mode {
	BG_MODE_NATIVE = 1,
	BG_MODE_SKB = 2,
};

/* Pin directory in use: $BLOOMGATE_PIN_DIR or BG_PIN_DIR. */
const char *bg_pin_dir(void);

/* Mounts bpffs on /sys/fs/bpf when it is not mounted. */
int bg_ensure_bpffs(void);

/* Opens the pinned maps, taking the directory lock when lock != 0.
 * -ENOENT: nothing pinned (bloomgate is not attached anywhere). */
int bg_state_open(struct bg_state *st, int lock);
void bg_state_close(struct bg_state *st);

/* Creates a filter map, builds the planned filter (p from bg_filter_plan)
 * of block list l and allowlist allow (may be NULL) into it through mmap,
 * freezes it. Returns the map fd or a negative errno. */
int bg_filter_create(const struct bg_filter_params *p, uint64_t seed,
		     const struct bg_blocklist *bl);

/*
 * Publishes filter map fd in the slot as one pointer store. The kernel waits
 * for an RCU grace period before the update returns, so when this returns no
 * packet can still be reading the old filter and its memory is released.
 */
int bg_filter_publish(int filters_fd, int filter_fd);

/* Maps the live filter read-only. -ENOENT when none is loaded. */
int bg_filter_map_current(int filters_fd, const void **mem, size_t *len);
void bg_filter_unmap(const void *mem, size_t len);

/* Id of a map fd; id of the filter map in the slot (0: none). */
__u32 bg_map_id(int fd);
__u32 bg_filter_current_id(int filters_fd);

/*
 * The load record: the list files that built the live filter, so `check`
 * can name the entry behind a match. Kept in BG_RECORD_DIR (bpffs holds no
 * plain files), one file per pin directory: "filter ID", then one line per
 * list, "source block|allow FORMAT SUBDOMAINS PATH" with the format used
 * (detected or stated: addr, plain, hosts, adblock) and 0 or 1, so domain
 * lists are re-read the same way. Records of the first version ("block
 * PATH", "allow PATH") are read as address lists.
 */
#define BG_RECORD_DIR "/run/bloomgate"
struct bg_record {
	__u32 filter_id; /* map id of the filter these lists built */
	struct bg_source *src; /* paths absolute where they could be made so */
	int n;
};
void bg_record_path(char *buf, size_t len);
/* Writes the record of n sources; format of each: the one used (not
 * BG_FMT_AUTO). */
int bg_record_write(__u32 filter_id, const struct bg_source *src, size_t n);
int bg_record_read(struct bg_record *r);
void bg_record_free(struct bg_record *r);

/* Sums the per-CPU counters. */
int bg_counters_read(int counters_fd, struct bg_counters *sum);

struct bg_attach_opts {
	enum bg_mode mode;
	enum bg_match match;
	enum bg_action action;
	enum bg_dns_action dns_action; /* 0: BG_DNS_ACTION_NXDOMAIN */
	__u16 dns_ports[BG_DNS_PORTS_MAX]; /* 0 = unused; all 0: BG_DNS_PORT */
};

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

/* Attaches to ifname; errors carry a one-line message in err. */
int bg_attach(const char *ifname, const struct bg_attach_opts *o, char *err,
	      size_t errlen);
int bg_detach(const char *ifname, char *err, size_t errlen);
/* Detaches from every recorded interface (also ones that no longer exist)
 * and removes every pin. */
int bg_detach_all(char *err, size_t errlen);

/* Inode of the calling thread's network namespace (records carry it). */
__u32 bg_netns_ino(void);

/* Reads the attachment records (up to max), returns how many. */
int bg_attach_list(struct bg_state *st, struct bg_attach_rec *recs, int max);

#endif
