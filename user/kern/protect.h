/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The protected set in the kernel (its layout and why: bloomgate/abi.h;
 * its pure part: core/protect.h): gathered from the attachments (their
 * interfaces' addresses and the next hops of their namespaces' default
 * routes), resolv.conf and the operator's items; published into the
 * pinned map bg_protect; read back for `check`. Kernel part: needs libbpf.
 */
#ifndef BLOOMGATE_KERN_PROTECT_H
#define BLOOMGATE_KERN_PROTECT_H

#include <stddef.h>

#include "bloomgate/abi.h"
#include "core/protect.h"

struct bg_state; /* kern/pins.h */

/* A writer waits this long after a flip whose grace period it could not
 * wait for (bloomgate/abi.h): no packet is judged for a second. */
#define BG_PROTECT_SETTLE_NS 1000000000ull

/* What a set is gathered from. */
struct bg_protect_src {
	/* the attachments (st->attach_fd) and the live set (st->protect_fd,
	 * -1: none), or NULL */
	const struct bg_state *st;
	/* one attachment more, not recorded yet (an attach), or NULL */
	const struct bg_attach_rec *also;
	/* interfaces of this network namespace by name, attached or not
	 * (agent --check: the config's) */
	const char *const *ifnames;
	size_t n_ifnames;
	/* the operator's items (load --protect, the agent's protect:) */
	const struct bg_protect_item *extra;
	size_t n_extra;
	/* 1: the operator's items of the live set instead of extra (attach
	 * keeps what the last load or rebuild gave) */
	int keep_extra;
};

/*
 * The set, finished: for each attachment the addresses of its interface
 * and the next hops of the default routes of its network namespace (one
 * in another namespace is read from a thread that enters it, which needs
 * CAP_SYS_ADMIN; when that fails its items of the live set are kept), the
 * resolvers of resolv.conf, then the operator's items. 0, or -ENOSPC
 * (more than BG_PROTECT_MAX items: refused, never cut) or -errno, with
 * why.
 */
int bg_protect_gather(const struct bg_protect_src *src, struct bg_protect_set *out,
		      char *why, size_t whylen);

/* Makes s the live set of the map fd: written into the half the datapath
 * does not read, then that half made live (nothing written when s is
 * live already). Under the pin directory's lock. 0 or -errno. */
int bg_protect_publish(int fd, const struct bg_protect_set *s);

/* The live set of the map fd into *out. 0 or -errno. */
int bg_protect_read(int fd, struct bg_protect_set *out);

/* gather and publish into st's map (st->protect_fd; nothing without one):
 * what attach and the agent's reload do. 0, or -errno with why. */
int bg_protect_refresh(const struct bg_protect_src *src, char *why, size_t whylen);

#endif
