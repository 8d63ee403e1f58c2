// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Attach and detach through libxdp (see attach.h): load-time configuration
 * of the skeleton, the shared pinned maps, the per-attachment prog array
 * and the attachment record.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <xdp/libxdp.h>

#include "bloomgate/dns.h"
#include "kern/attach.h"
#include "kern/netns.h"
#include "kern/protect.h"
#include "core/filter.h"
#include "core/units.h"
#include "bloomgate.skel.h"

#define BG_PROG_NAME "bloomgate_xdp"

/* Why the pinned state cannot be opened (ret from bg_state_open()), for
 * interface ifname (NULL: any). */
static void state_err(int ret, const char *ifname, char *err, size_t errlen)
{
	if (ret == -ENOMEDIUM)
		bg_no_bpffs_why(err, errlen);
	else if (ret == -ENOENT && ifname)
		bg_whyf(err, errlen, "bloomgate is not attached to %s", ifname);
	else if (ret == -ENOENT)
		bg_whyf(err, errlen, "bloomgate is not attached to any interface");
	else
		bg_whyf(err, errlen, "cannot open the pinned state in %s: %s",
		     bg_pin_dir(), strerror(-ret));
}

static __u32 prog_id_of(int fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

int bg_attach_list(struct bg_state *st, struct bg_attach_rec *recs, int max)
{
	int n = 0;
	__u32 i;

	for (i = 0; i < BG_ATTACH_MAX && n < max; i++) {
		struct bg_attach_rec r;

		if (bpf_map_lookup_elem(st->attach_fd, &i, &r) || !r.ifindex)
			continue;
		recs[n++] = r;
	}
	return n;
}

/* The capacity of the first record into *cap: 1, or 0 when there is
 * none; -EPROTO when two records disagree. */
static int recs_capacity(int attach_fd, __u32 *cap)
{
	int found = 0;
	__u32 i;

	*cap = 0;
	for (i = 0; i < BG_ATTACH_MAX; i++) {
		struct bg_attach_rec r;

		if (bpf_map_lookup_elem(attach_fd, &i, &r))
			return -errno;
		if (!r.ifindex)
			continue;
		if (found && r.capacity != *cap)
			return -EPROTO;
		*cap = r.capacity;
		found = 1;
	}
	return found;
}

/* 1 when the records grow their capacity (attach --grow; they agree). */
static int recs_grow(int attach_fd)
{
	__u32 i;

	for (i = 0; i < BG_ATTACH_MAX; i++) {
		struct bg_attach_rec r;

		if (!bpf_map_lookup_elem(attach_fd, &i, &r) && r.ifindex)
			return !!(r.mode & BG_ATTACH_F_GROW);
	}
	return 0;
}

int bg_attach_grows(struct bg_state *st)
{
	return recs_grow(st->attach_fd);
}

int bg_attach_capacity(struct bg_state *st, __u32 *capacity)
{
	int ret = recs_capacity(st->attach_fd, capacity);

	return ret < 0 ? ret : 0;
}

/* An attachment's capacity in a refusal: "--capacity 1000 (1673
 * elements)" (keys: what was asked, 0 when unknown), "a capacity of 1673
 * elements" or "no --capacity (any size)". */
static const char *fmt_capacity(char *buf, size_t len, __u32 cap, uint64_t keys)
{
	if (cap && keys)
		snprintf(buf, len, "--capacity %llu (%u elements)",
			 (unsigned long long)keys, cap);
	else if (cap)
		snprintf(buf, len, "a capacity of %u elements", cap);
	else
		snprintf(buf, len, "no --capacity (any size)");
	return buf;
}

static int find_rec(int attach_fd, __u32 ifindex, __u32 *slot)
{
	__u32 ns = bg_netns_ino(), i, free_slot = BG_ATTACH_MAX;

	for (i = 0; i < BG_ATTACH_MAX; i++) {
		struct bg_attach_rec r;

		if (bpf_map_lookup_elem(attach_fd, &i, &r))
			return -errno;
		if (r.ifindex == ifindex && r.netns_ino == ns) {
			*slot = i;
			return 1;
		}
		if (!r.ifindex && free_slot == BG_ATTACH_MAX)
			free_slot = i;
	}
	*slot = free_slot;
	return 0;
}

/* Removes the prog array pin of one attachment (once it is detached). */
static void unpin_progs(const char *dir, const struct bg_attach_rec *rec)
{
	char path[PATH_MAX];

	bg_progs_pin_path(path, sizeof(path), dir, rec->ifindex, rec->netns_ino);
	unlink(path);
}

static int ifindex_of(const char *ifname, char *err, size_t errlen)
{
	unsigned int idx = if_nametoindex(ifname);

	if (!idx) {
		bg_whyf(err, errlen, "interface %s does not exist", ifname);
		return -ENODEV;
	}
	return (int)idx;
}

/*
 * The load-time configuration of one attachment's program: the verifier
 * prunes the modes not used. With cap, a fixed-size filter: bg_filters'
 * inner-map template without BPF_F_INNER_MAP and of exactly cap elements,
 * so the verifier can inline the lookups in the filter
 * (array_map_gen_lookup) and every filter map must have that size
 * (user/kern/swap.c). Not through
 * bpf_map__set_max_entries(bpf_map__inner_map()): libbpf 1.1 crashes on
 * it. The template's fd into *tmpl_fd (to close once loaded; -1 without
 * one). 0, or -errno with err set.
 */
static int skel_configure(struct bloomgate *skel, const struct bg_attach_opts *o,
			  __u32 cap, int *tmpl_fd, char *err, size_t errlen)
{
	__u32 any_port = 0;
	size_t i;

	*tmpl_fd = -1;
	skel->rodata->cfg_match = (__u8)o->match;
	skel->rodata->cfg_action = (__u8)o->action;
	skel->rodata->cfg_chain = !!o->chain;
	skel->rodata->cfg_unparsed = o->unparsed == BG_UNPARSED_DROP ?
					     BG_UNPARSED_DROP : BG_UNPARSED_PASS;
	skel->rodata->cfg_dns_action =
		(__u8)(o->dns_action ? o->dns_action : BG_DNS_ACTION_NXDOMAIN);
	for (i = 0; i < BG_DNS_PORTS_MAX; i++) {
		skel->rodata->cfg_dns_ports[i] = o->dns_ports[i];
		any_port |= o->dns_ports[i];
	}
	if (!any_port) {
		skel->rodata->cfg_dns_ports[0] = BG_DNS_PORT;
		for (i = 1; i < BG_DNS_PORTS_MAX; i++)
			skel->rodata->cfg_dns_ports[i] = 0;
	}
	if (cap) {
		LIBBPF_OPTS(bpf_map_create_opts, topts, .map_flags = BPF_F_MMAPABLE);
		int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bg_filter_tmpl",
					sizeof(__u32), BG_FILTER_VALUE_SIZE, cap,
					&topts);

		if (fd < 0) {
			int e = -errno;

			bg_whyf(err, errlen, "cannot create a filter map of %u elements: %s",
			     cap, strerror(-e));
			return e;
		}
		*tmpl_fd = fd;
		if (bpf_map__set_inner_map_fd(skel->maps.BG_MAP_FILTERS, fd)) {
			bg_whyf(err, errlen, "cannot set the filter map template");
			return -EINVAL;
		}
	}
	return 0;
}

/* The mode's XDP flag of a record or options. */
static __u32 xdp_mode_flag(int mode)
{
	return (mode & BG_ATTACH_MODE_MASK) == BG_MODE_SKB ? XDP_FLAGS_SKB_MODE :
							      XDP_FLAGS_DRV_MODE;
}

/* The protected set of pin directory dir (pinned already) refreshed with
 * interface ifindex of this namespace in it, before it is attached. The
 * operator's items stay. 0 (also when no set is pinned), or -errno with
 * err set: a set that would be full refuses the attach. */
static int protect_before(const char *dir, __u32 ifindex, char *err, size_t errlen)
{
	struct bg_attach_rec r = { .ifindex = ifindex, .netns_ino = bg_netns_ino() };
	struct bg_state p = { .lock_fd = -1 };
	struct bg_protect_src ps = { .st = &p, .also = &r, .keep_extra = 1 };
	char path[PATH_MAX], why[256];
	int ret;

	bg_map_pin_path(path, sizeof(path), dir, BG_PIN_ATTACH);
	p.attach_fd = bpf_obj_get(path);
	bg_map_pin_path(path, sizeof(path), dir, BG_PIN_PROTECT);
	p.protect_fd = bpf_obj_get(path);
	ret = p.attach_fd < 0 || p.protect_fd < 0 ? 0 :
		bg_protect_refresh(&ps, why, sizeof(why));
	if (ret)
		bg_whyf(err, errlen, "%s", why);
	if (p.attach_fd >= 0)
		close(p.attach_fd);
	if (p.protect_fd >= 0)
		close(p.protect_fd);
	return ret;
}

/* The set from st's records (an attachment just recorded among them). */
static int protect_after(const struct bg_state *st, char *err, size_t errlen)
{
	struct bg_protect_src ps = { .st = st, .keep_extra = 1 };
	char why[256];
	int ret = bg_protect_refresh(&ps, why, sizeof(why));

	if (ret)
		bg_whyf(err, errlen, "%s", why);
	return ret;
}

int bg_attach(const char *ifname, const struct bg_attach_opts *o, char *err,
	      size_t errlen)
{
	struct bloomgate *skel = NULL;
	struct xdp_program *prog = NULL;
	struct bg_attach_rec rec;
	struct bpf_map *maps[BG_PIN__COUNT];
	struct bg_state st = { .lock_fd = -1, .attach_fd = -1, .protect_fd = -1 };
	char path[PATH_MAX], ebuf[128], c1[64], c2[64];
	int ifindex, ret, fresh, progs_fd, dns_fd, pinned = 0, tmpl_fd = -1;
	__u32 slot, key = BG_PROG_DNS, cap = 0, have, grows = 0;
	size_t i;

	ifindex = ifindex_of(ifname, err, errlen);
	if (ifindex < 0)
		return ifindex;
	if (o->capacity || o->grow) {
		cap = bg_filter_capacity_elems(o->capacity ? o->capacity :
							      BG_CAPACITY_GROW_MIN);
		if (!cap) {
			bg_whyf(err, errlen, "--capacity %llu: too large",
			     (unsigned long long)o->capacity);
			return -E2BIG;
		}
	}
	ret = bg_ensure_bpffs();
	if (ret == -ENOMEDIUM) {
		/* pins made in a bpffs of our own would go when we exit */
		bg_no_bpffs_why(err, errlen);
		return ret;
	}
	if (ret) {
		bg_whyf(err, errlen, "cannot mount bpffs on /sys/fs/bpf: %s",
		     strerror(-ret));
		return ret;
	}
	snprintf(st.dir, sizeof(st.dir), "%s", bg_pin_dir());
	fresh = access(st.dir, F_OK) != 0;
	if (fresh && mkdir(st.dir, 0700) && errno != EEXIST) {
		ret = -errno;
		bg_whyf(err, errlen, "cannot create %s: %s", st.dir, strerror(errno));
		return ret;
	}
	ret = bg_state_lock(&st);
	if (ret) {
		bg_whyf(err, errlen, "cannot lock %s: %s", st.dir, strerror(-ret));
		return ret;
	}

	skel = bloomgate__open();
	if (!skel) {
		ret = -errno;
		bg_whyf(err, errlen, "cannot open the BPF object: %s", strerror(errno));
		goto out;
	}
	ret = skel_configure(skel, o, cap, &tmpl_fd, err, errlen);
	if (ret)
		goto out;

	/* Reuse the pinned maps when another interface is attached already,
	 * so every interface shares one filter; otherwise pin new ones. */
	maps[BG_PIN_FILTERS] = skel->maps.BG_MAP_FILTERS;
	maps[BG_PIN_COUNTERS] = skel->maps.BG_MAP_COUNTERS;
	maps[BG_PIN_EVENTS] = skel->maps.BG_MAP_EVENTS;
	maps[BG_PIN_ATTACH] = skel->maps.BG_MAP_ATTACH;
	maps[BG_PIN_PROTECT] = skel->maps.BG_MAP_PROTECT;
	for (i = 0; i < BG_PIN__COUNT; i++) {
		bg_map_pin_path(path, sizeof(path), st.dir, (enum bg_pin_map)i);
		if (bpf_map__set_pin_path(maps[i], path)) {
			ret = -errno;
			bg_whyf(err, errlen, "cannot set pin path %s", path);
			goto out;
		}
	}

	{
		DECLARE_LIBXDP_OPTS(xdp_program_opts, xopts, .obj = skel->obj,
				    .prog_name = BG_PROG_NAME);
		prog = xdp_program__create(&xopts);
	}
	ret = (int)libxdp_get_error(prog);
	if (ret) {
		prog = NULL;
		libxdp_strerror(ret, ebuf, sizeof(ebuf));
		bg_whyf(err, errlen, "cannot load the XDP program: %s", ebuf);
		goto out;
	}
	/* Refuse a second attachment to the same interface, and one whose
	 * capacity differs: every attachment here shares bg_filters and the
	 * template it was created with, the first attachment's. */
	if (!fresh) {
		bg_map_pin_path(path, sizeof(path), st.dir, BG_PIN_ATTACH);
		st.attach_fd = bpf_obj_get(path);
		if (st.attach_fd >= 0) {
			ret = find_rec(st.attach_fd, (__u32)ifindex, &slot);
			if (ret == 0 && slot != BG_ATTACH_MAX) {
				int r = recs_capacity(st.attach_fd, &have);

				ret = r < 0 ? r : ret;
				grows = r == 1 ? (__u32)recs_grow(st.attach_fd) : 0;
				/* a growing one joins growing ones at the
				 * size they grew to */
				if (r == 1 && o->grow && grows && have >= cap)
					cap = have;
				if (r == 1 && (have != cap || !o->grow != !grows))
					ret = -EXDEV;
			}
			close(st.attach_fd);
			st.attach_fd = -1;
			if (ret == 1) {
				ret = -EEXIST;
				bg_whyf(err, errlen, "bloomgate is already attached to %s",
				     ifname);
				goto out;
			}
			if (ret == 0 && slot == BG_ATTACH_MAX) {
				ret = -ENOSPC;
				bg_whyf(err, errlen, "bloomgate is attached to %d interfaces already",
				     BG_ATTACH_MAX);
				goto out;
			}
			if (ret == -EXDEV) {
				bg_whyf(err, errlen, "bloomgate is attached with %s%s in %s; "
				     "this attachment would have %s%s: all share one "
				     "filter map (detach them first to change it)",
				     fmt_capacity(c1, sizeof(c1), have, 0),
				     grows ? ", growing" : "", st.dir,
				     fmt_capacity(c2, sizeof(c2), cap, o->capacity),
				     o->grow ? ", growing" : "");
				goto out;
			}
			if (ret == -EPROTO) {
				bg_whyf(err, errlen, "the attachment records in %s disagree "
				     "on the capacity", st.dir);
				goto out;
			}
			/* other errors: as before, the attach itself decides */
		}
	}
	/* a filter may be live already (this is not the first attachment):
	 * the interface's addresses are protected before its program runs */
	if (!fresh) {
		ret = protect_before(st.dir, (__u32)ifindex, err, errlen);
		if (ret)
			goto out;
	}
	ret = xdp_program__attach(prog, ifindex,
				  o->mode == BG_MODE_SKB ? XDP_MODE_SKB :
							   XDP_MODE_NATIVE,
				  0);
	if (ret) {
		libxdp_strerror(ret, ebuf, sizeof(ebuf));
		bg_whyf(err, errlen, "cannot attach to %s in %s mode: %s%s", ifname,
		     o->mode == BG_MODE_SKB ? "skb" : "native", ebuf,
		     o->mode == BG_MODE_SKB ? "" : " (try --mode skb)");
		goto out;
	}
	/* libxdp loaded the object: the (pinned) maps have fds now. Until
	 * bloomgate_dns is in this attachment's own prog array, the tail call
	 * fails and DNS queries pass, counted in dns_no_prog. */
	memset(&rec, 0, sizeof(rec));
	rec.ifindex = (__u32)ifindex;
	rec.mode = (__u8)((__u8)o->mode & BG_ATTACH_MODE_MASK);
	if (skel->rodata->cfg_unparsed == BG_UNPARSED_DROP)
		rec.mode |= BG_ATTACH_F_UNPARSED_DROP;
	if (o->grow)
		rec.mode |= BG_ATTACH_F_GROW;
	if (o->chain)
		rec.mode |= BG_ATTACH_F_CHAIN;
	rec.match = (__u8)o->match;
	rec.action = (__u8)o->action;
	rec.prog_id = xdp_program__id(prog);
	rec.netns_ino = bg_netns_ino();
	rec.dns_action = skel->rodata->cfg_dns_action;
	rec.capacity = cap;
	for (i = 0; i < BG_DNS_PORTS_MAX; i++)
		rec.dns_ports[i] = skel->rodata->cfg_dns_ports[i];
	progs_fd = bpf_map__fd(skel->maps.BG_MAP_PROGS);
	dns_fd = bpf_program__fd(skel->progs.bloomgate_dns);
	rec.dns_prog_id = dns_fd >= 0 ? prog_id_of(dns_fd) : 0;
	if (progs_fd < 0 || dns_fd < 0 || !rec.dns_prog_id ||
	    bpf_map_update_elem(progs_fd, &key, &dns_fd, BPF_ANY)) {
		ret = progs_fd < 0 || dns_fd < 0 ? -ENOENT : -errno;
		bg_whyf(err, errlen, "cannot set up the DNS program: %s",
		     strerror(-ret));
		goto undo;
	}
	/* The kernel empties a prog array when its last fd or pin goes: the
	 * pin keeps it, and the tail call, alive after we exit. A pin left by
	 * an attachment that is not recorded any more is stale. */
	bg_progs_pin_path(path, sizeof(path), st.dir, rec.ifindex, rec.netns_ino);
	unlink(path);
	if (bpf_obj_pin(progs_fd, path)) {
		ret = -errno;
		bg_whyf(err, errlen, "cannot pin %s: %s", path, strerror(errno));
		goto undo;
	}
	pinned = 1;
	st.attach_fd = bpf_map__fd(skel->maps.BG_MAP_ATTACH);
	ret = find_rec(st.attach_fd, (__u32)ifindex, &slot);
	if (ret < 0 || slot == BG_ATTACH_MAX)
		ret = ret < 0 ? ret : -ENOSPC;
	else
		ret = 0;
	if (ret || bpf_map_update_elem(st.attach_fd, &slot, &rec, BPF_ANY)) {
		ret = ret ? ret : -errno;
		bg_whyf(err, errlen, "cannot record the attachment: %s",
		     strerror(-ret));
		goto undo;
	}
	/* the set from the records, this one's now included */
	st.protect_fd = bpf_map__fd(skel->maps.BG_MAP_PROTECT);
	ret = protect_after(&st, err, errlen);
	if (ret) {
		memset(&rec, 0, sizeof(rec));
		bpf_map_update_elem(st.attach_fd, &slot, &rec, BPF_ANY);
		goto undo;
	}
	st.attach_fd = st.protect_fd = -1; /* owned by the skeleton */
	ret = 0;
	goto out;
undo:
	st.attach_fd = st.protect_fd = -1; /* owned by the skeleton */
	xdp_program__detach(prog, ifindex,
			    o->mode == BG_MODE_SKB ? XDP_MODE_SKB : XDP_MODE_NATIVE,
			    0);
	if (pinned)
		unlink(path);
out:
	if (ret && fresh) {
		/* Nothing of ours was attached before: leave no pins behind. */
		struct bg_attach_rec recs[1];
		struct bg_state tmp;

		if (bg_state_open(&tmp, BG_STATE_HELD) == 0) {
			int n = bg_attach_list(&tmp, recs, 1);

			bg_state_close(&tmp);
			if (n == 0)
				bg_unpin_all(st.dir);
		} else {
			bg_unpin_all(st.dir);
		}
	}
	xdp_program__close(prog);
	bloomgate__destroy(skel);
	/* the kernel copied what it needs of the template into bg_filters */
	if (tmpl_fd >= 0)
		close(tmpl_fd);
	if (st.lock_fd >= 0)
		close(st.lock_fd);
	return ret;
}

/* ---- growing the capacity ------------------------------------------------ */

/* The options an attachment was made with, from its record. */
static void opts_of_rec(const struct bg_attach_rec *r, struct bg_attach_opts *o)
{
	*o = bg_attach_defaults;
	o->mode = (enum bg_mode)(r->mode & BG_ATTACH_MODE_MASK);
	o->match = (enum bg_match)r->match;
	o->action = (enum bg_action)r->action;
	o->dns_action = (enum bg_dns_action)r->dns_action;
	o->unparsed = r->mode & BG_ATTACH_F_UNPARSED_DROP ? BG_UNPARSED_DROP :
							  BG_UNPARSED_PASS;
	memcpy(o->dns_ports, r->dns_ports, sizeof(o->dns_ports));
	o->grow = !!(r->mode & BG_ATTACH_F_GROW);
	o->chain = !!(r->mode & BG_ATTACH_F_CHAIN);
}

struct grow_one {
	__u32 slot;
	struct bg_attach_rec rec;
	struct bloomgate *skel;
	int old_fd; /* the attached program */
	int ns_fd; /* its network namespace when not ours; else -1 */
	int replaced;
};

struct replace_call {
	const struct grow_one *g;
	int prog_fd, expect_fd;
};

static int replace_here(void *arg)
{
	const struct replace_call *c = arg;
	LIBBPF_OPTS(bpf_xdp_attach_opts, xo, .old_prog_fd = c->expect_fd);

	return bpf_xdp_attach((int)c->g->rec.ifindex, c->prog_fd,
			      xdp_mode_flag(c->g->rec.mode) | XDP_FLAGS_REPLACE, &xo);
}

/* Puts prog_fd on the interface of g in place of expect_fd (its mode's
 * hook; the kernel swaps the pointer: each packet runs one or the other),
 * from within the interface's network namespace. */
static int replace_prog(const struct grow_one *g, int prog_fd, int expect_fd)
{
	struct replace_call c = { .g = g, .prog_fd = prog_fd, .expect_fd = expect_fd };

	return bg_netns_call(g->ns_fd, replace_here, &c);
}

/* The program in an attachment's BG_PROG_NEXT slot into the same slot of
 * prog array to_fd; 0 when there is none. */
static int next_copy(const char *dir, const struct bg_attach_rec *r, int to_fd)
{
	char path[PATH_MAX];
	__u32 key = BG_PROG_NEXT, id = 0;
	int from, fd, ret = 0;

	bg_progs_pin_path(path, sizeof(path), dir, r->ifindex, r->netns_ino);
	from = bpf_obj_get(path);
	if (from < 0)
		return errno == ENOENT ? 0 : -errno;
	if (bpf_map_lookup_elem(from, &key, &id) || !id) {
		close(from);
		return 0;
	}
	close(from);
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (bpf_map_update_elem(to_fd, &key, &fd, BPF_ANY))
		ret = -errno;
	close(fd);
	return ret;
}

/* The id of the XDP program of r's mode on r's interface (0: none). */
static __u32 attached_id(const struct bg_attach_rec *r)
{
	__u32 id = 0;

	if (bpf_xdp_query_id((int)r->ifindex, (int)xdp_mode_flag(r->mode), &id))
		return 0;
	return id;
}

struct attached_call {
	const struct bg_attach_rec *r;
	__u32 id;
};

static int attached_here(void *arg)
{
	struct attached_call *c = arg;

	c->id = attached_id(c->r);
	return 0;
}

/* BLOOMGATE_FAULT=NAME: a test stops the process at that point, as a
 * kill there would (the only way to hit a window of microseconds). */
static int fault_at(const char *name)
{
	const char *f = getenv("BLOOMGATE_FAULT");

	return f && !strcmp(f, name);
}

int bg_attach_stale(struct bg_state *st)
{
	__u32 i;

	for (i = 0; i < BG_ATTACH_MAX; i++) {
		struct bg_attach_rec r;
		__u32 cur;

		if (bpf_map_lookup_elem(st->attach_fd, &i, &r) || !r.ifindex ||
		    r.netns_ino != bg_netns_ino())
			continue;
		cur = attached_id(&r);
		if (cur && cur != r.prog_id)
			return 1;
	}
	return 0;
}

int bg_attach_reshape(struct bg_state *st, __u32 cap, int grow, int filter_fd,
		      char *err, size_t errlen)
{
	struct grow_one *g = calloc(BG_ATTACH_MAX, sizeof(*g));
	char path[PATH_MAX];
	int n = 0, k, ret = 0, tmpl_fd = -1, outer = -1;
	__u32 i, zero = 0, key = BG_PROG_DNS, cur;

	if (!g) {
		bg_whyf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < BG_ATTACH_MAX; i++) {
		struct bg_attach_rec r;

		if (bpf_map_lookup_elem(st->attach_fd, &i, &r) || !r.ifindex)
			continue;
		g[n].slot = i;
		g[n].rec = r;
		g[n].old_fd = g[n].ns_fd = -1;
		/* an interface in another network namespace: its program is
		 * replaced from in there (setns(): CAP_SYS_ADMIN) */
		if (r.netns_ino != bg_netns_ino()) {
			struct attached_call ac = { .r = &g[n].rec };

			if (!bg_netns_path(r.netns_ino, path, sizeof(path)) ||
			    (g[n].ns_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
			    bg_netns_call(g[n].ns_fd, attached_here, &ac)) {
				ret = -EXDEV;
				bg_whyf(err, errlen, "cannot enter the network namespace "
				     "(inode %u) of ifindex %u to replace its program",
				     r.netns_ino, r.ifindex);
				n++;
				goto out;
			}
			cur = ac.id;
		} else {
			cur = attached_id(&r);
		}
		n++;
		/* the attached program, the expected one of the swap: the one
		 * the interface runs (after a change that was killed half way,
		 * not the record's), opened by id (CAP_SYS_ADMIN) */
		g[n - 1].old_fd = bpf_prog_get_fd_by_id(cur ? cur : r.prog_id);
		if (g[n - 1].old_fd < 0) {
			ret = -errno;
			bg_whyf(err, errlen, "cannot open the attached program %u: %s",
			     cur ? cur : r.prog_id, strerror(errno));
			goto out;
		}
	}
	if (!n) {
		ret = -ENOENT;
		bg_whyf(err, errlen, "bloomgate is not attached to any interface");
		goto out;
	}
	/* One program a attachment, configured as its record says, all with
	 * a new bg_filters of the new capacity holding filter_fd; the
	 * counters, events, records and protected set stay the pinned ones. */
	for (k = 0; k < n; k++) {
		struct bg_attach_opts o;
		enum bg_pin_map pm[] = { BG_PIN_COUNTERS, BG_PIN_EVENTS, BG_PIN_ATTACH,
					 BG_PIN_PROTECT };
		size_t m;
		int dns_fd;

		opts_of_rec(&g[k].rec, &o);
		o.grow = grow;
		g[k].skel = bloomgate__open();
		if (!g[k].skel) {
			ret = -errno;
			bg_whyf(err, errlen, "cannot open the BPF object: %s", strerror(errno));
			goto undo;
		}
		if (tmpl_fd >= 0)
			close(tmpl_fd);
		ret = skel_configure(g[k].skel, &o, cap, &tmpl_fd, err, errlen);
		if (ret)
			goto undo;
		for (m = 0; m < sizeof(pm) / sizeof(pm[0]); m++) {
			struct bpf_map *map = pm[m] == BG_PIN_COUNTERS ? g[k].skel->maps.BG_MAP_COUNTERS :
					      pm[m] == BG_PIN_EVENTS ? g[k].skel->maps.BG_MAP_EVENTS :
					      pm[m] == BG_PIN_PROTECT ? g[k].skel->maps.BG_MAP_PROTECT :
								    g[k].skel->maps.BG_MAP_ATTACH;

			bg_map_pin_path(path, sizeof(path), st->dir, pm[m]);
			if (bpf_map__set_pin_path(map, path)) {
				ret = -errno;
				bg_whyf(err, errlen, "cannot set pin path %s", path);
				goto undo;
			}
		}
		if (outer >= 0 && bpf_map__reuse_fd(g[k].skel->maps.BG_MAP_FILTERS, outer)) {
			ret = -errno;
			bg_whyf(err, errlen, "cannot share the new filter slot: %s",
			     strerror(errno));
			goto undo;
		}
		ret = bloomgate__load(g[k].skel);
		if (ret) {
			bg_whyf(err, errlen, "cannot load the XDP program of %u elements: %s",
			     cap, strerror(-ret));
			goto undo;
		}
		if (outer < 0) {
			outer = bpf_map__fd(g[k].skel->maps.BG_MAP_FILTERS);
			/* the new slot holds the new filter before any
			 * program that reads it runs */
			if (bpf_map_update_elem(outer, &zero, &filter_fd, BPF_ANY)) {
				ret = -errno;
				bg_whyf(err, errlen, "cannot put the filter in the new slot: %s",
				     strerror(errno));
				goto undo;
			}
		}
		dns_fd = bpf_program__fd(g[k].skel->progs.bloomgate_dns);
		if (bpf_map_update_elem(bpf_map__fd(g[k].skel->maps.BG_MAP_PROGS),
					&key, &dns_fd, BPF_ANY)) {
			ret = -errno;
			bg_whyf(err, errlen, "cannot set up the DNS program: %s",
			     strerror(errno));
			goto undo;
		}
		/* the operator's next program goes on with the new ones */
		ret = next_copy(st->dir, &g[k].rec,
				bpf_map__fd(g[k].skel->maps.BG_MAP_PROGS));
		if (ret) {
			bg_whyf(err, errlen, "cannot keep the chained program: %s",
			     strerror(-ret));
			goto undo;
		}
	}
	/* The swaps, each atomic on its interface: a packet runs the old
	 * program with the old filter or the new one with the new. */
	for (k = 0; k < n; k++) {
		ret = replace_prog(&g[k], bpf_program__fd(g[k].skel->progs.bloomgate_xdp),
				   g[k].old_fd);
		if (ret) {
			bg_whyf(err, errlen, "cannot replace the program on ifindex %u: %s",
			     g[k].rec.ifindex, strerror(-ret));
			goto undo;
		}
		g[k].replaced = 1;
		/* a test's stand-in for a kill here (tests/e2e/test_grow.sh) */
		if (fault_at("reshape-swapped"))
			_exit(9);
	}
	/* Past the swaps nothing is undone: the records, then the pins,
	 * name the new programs and maps. */
	for (k = 0; k < n; k++) {
		struct bg_attach_rec r = g[k].rec;
		int progs_fd = bpf_map__fd(g[k].skel->maps.BG_MAP_PROGS);

		r.prog_id = prog_id_of(bpf_program__fd(g[k].skel->progs.bloomgate_xdp));
		r.dns_prog_id = prog_id_of(bpf_program__fd(g[k].skel->progs.bloomgate_dns));
		r.capacity = cap;
		r.mode = (__u8)((r.mode & ~BG_ATTACH_F_GROW) | (grow ? BG_ATTACH_F_GROW : 0));
		bpf_map_update_elem(st->attach_fd, &g[k].slot, &r, BPF_ANY);
		bg_progs_pin_path(path, sizeof(path), st->dir, r.ifindex, r.netns_ino);
		unlink(path);
		if (bpf_obj_pin(progs_fd, path) && !ret) {
			ret = -errno;
			bg_whyf(err, errlen, "the capacity changed, but %s cannot be pinned: "
			     "DNS queries pass there once this program exits (%s)",
			     path, strerror(errno));
		}
	}
	/* bpffs cannot rename: the pin goes and comes back, under the lock,
	 * which a reader that finds it missing waits for (bg_state_open()) */
	bg_map_pin_path(path, sizeof(path), st->dir, BG_PIN_FILTERS);
	unlink(path);
	if (bpf_obj_pin(outer, path) && !ret) {
		ret = -errno;
		bg_whyf(err, errlen, "the capacity changed, but its slot cannot be "
		     "pinned at %s: %s", path, strerror(errno));
	}
	k = dup(outer);
	if (k >= 0) {
		close(st->filters_fd);
		st->filters_fd = k;
	}
	goto out;
undo:
	for (k = n - 1; k >= 0; k--)
		if (g[k].replaced)
			replace_prog(&g[k], g[k].old_fd,
				     bpf_program__fd(g[k].skel->progs.bloomgate_xdp));
out:
	for (k = 0; k < n; k++) {
		if (g[k].old_fd >= 0)
			close(g[k].old_fd);
		if (g[k].ns_fd >= 0)
			close(g[k].ns_fd);
		bloomgate__destroy(g[k].skel);
	}
	if (tmpl_fd >= 0)
		close(tmpl_fd);
	free(g);
	return ret;
}

/* ---- options of an attachment -------------------------------------------- */

/* The record of o's options, as bg_attach() writes them, over r's. */
static void rec_of_opts(struct bg_attach_rec *r, const struct bg_attach_opts *o,
			const struct bloomgate *skel)
{
	size_t i;

	r->match = (__u8)o->match;
	r->action = (__u8)o->action;
	r->dns_action = skel->rodata->cfg_dns_action;
	for (i = 0; i < BG_DNS_PORTS_MAX; i++)
		r->dns_ports[i] = skel->rodata->cfg_dns_ports[i];
	r->mode &= (__u8)~(BG_ATTACH_F_UNPARSED_DROP | BG_ATTACH_F_CHAIN);
	if (skel->rodata->cfg_unparsed == BG_UNPARSED_DROP)
		r->mode |= BG_ATTACH_F_UNPARSED_DROP;
	if (o->chain)
		r->mode |= BG_ATTACH_F_CHAIN;
}

/* The program for attachment g (its record's capacity and shape) with
 * options o, loaded on the pinned maps (the filter slot st->filters_fd
 * shared), its DNS program in its own prog array and, with o->chain, the
 * chained program kept. 0, or -errno with err. */
static int load_configured(struct bg_state *st, struct grow_one *g,
			   const struct bg_attach_opts *o, char *err, size_t errlen)
{
	enum bg_pin_map pm[] = { BG_PIN_COUNTERS, BG_PIN_EVENTS, BG_PIN_ATTACH };
	__u32 key = BG_PROG_DNS;
	char path[PATH_MAX];
	int tmpl_fd = -1, dns_fd, ret;
	size_t m;

	g->skel = bloomgate__open();
	if (!g->skel) {
		bg_whyf(err, errlen, "cannot open the BPF object: %s", strerror(errno));
		return -errno;
	}
	ret = skel_configure(g->skel, o, g->rec.capacity, &tmpl_fd, err, errlen);
	for (m = 0; !ret && m < sizeof(pm) / sizeof(pm[0]); m++) {
		struct bpf_map *map = pm[m] == BG_PIN_COUNTERS ? g->skel->maps.BG_MAP_COUNTERS :
				      pm[m] == BG_PIN_EVENTS ? g->skel->maps.BG_MAP_EVENTS :
							    g->skel->maps.BG_MAP_ATTACH;

		bg_map_pin_path(path, sizeof(path), st->dir, pm[m]);
		if (bpf_map__set_pin_path(map, path)) {
			ret = -errno;
			bg_whyf(err, errlen, "cannot set pin path %s", path);
		}
	}
	if (!ret && bpf_map__reuse_fd(g->skel->maps.BG_MAP_FILTERS, st->filters_fd)) {
		ret = -errno;
		bg_whyf(err, errlen, "cannot share the filter slot: %s", strerror(errno));
	}
	if (!ret && (ret = bloomgate__load(g->skel)))
		bg_whyf(err, errlen, "cannot load the XDP program: %s", strerror(-ret));
	if (tmpl_fd >= 0)
		close(tmpl_fd);
	if (ret)
		return ret;
	dns_fd = bpf_program__fd(g->skel->progs.bloomgate_dns);
	if (bpf_map_update_elem(bpf_map__fd(g->skel->maps.BG_MAP_PROGS), &key,
				&dns_fd, BPF_ANY)) {
		bg_whyf(err, errlen, "cannot set up the DNS program: %s", strerror(errno));
		return -errno;
	}
	ret = o->chain ? next_copy(st->dir, &g->rec,
				   bpf_map__fd(g->skel->maps.BG_MAP_PROGS)) : 0;
	if (ret)
		bg_whyf(err, errlen, "cannot keep the chained program: %s", strerror(-ret));
	return ret;
}

int bg_attach_reconfigure(const char *ifname, const struct bg_attach_opts *o,
			  char *err, size_t errlen)
{
	struct grow_one g = { .old_fd = -1, .ns_fd = -1 };
	struct bg_attach_opts want = *o, have;
	struct bg_state st;
	char path[PATH_MAX];
	int ifindex = ifindex_of(ifname, err, errlen), ret;
	__u32 cur;

	if (ifindex < 0)
		return ifindex;
	ret = bg_state_open(&st, 1);
	if (ret) {
		bg_whyf(err, errlen, "bloomgate is not attached to %s", ifname);
		return ret;
	}
	ret = find_rec(st.attach_fd, (__u32)ifindex, &g.slot);
	if (ret != 1) {
		bg_whyf(err, errlen, "bloomgate is not attached to %s", ifname);
		ret = ret < 0 ? ret : -ENOENT;
		goto out;
	}
	bpf_map_lookup_elem(st.attach_fd, &g.slot, &g.rec);
	opts_of_rec(&g.rec, &have);
	/* the shape is the filter's (a capacity change), the mode is the
	 * hook's: neither changes here */
	want.mode = have.mode;
	want.capacity = have.capacity;
	want.grow = have.grow;
	if (!bg_attach_opts_differ(&have, &want)) {
		ret = 1;
		goto out;
	}
	ret = load_configured(&st, &g, &want, err, errlen);
	if (ret)
		goto out;
	cur = attached_id(&g.rec);
	g.old_fd = bpf_prog_get_fd_by_id(cur ? cur : g.rec.prog_id);
	if (g.old_fd < 0) {
		ret = -errno;
		bg_whyf(err, errlen, "cannot open the attached program %u: %s",
		     cur ? cur : g.rec.prog_id, strerror(errno));
		goto out;
	}
	ret = replace_prog(&g, bpf_program__fd(g.skel->progs.bloomgate_xdp), g.old_fd);
	if (ret) {
		bg_whyf(err, errlen, "cannot replace the program on %s: %s", ifname,
		     strerror(-ret));
		goto out;
	}
	/* swapped in: the record and the prog array pin name the new ones */
	rec_of_opts(&g.rec, &want, g.skel);
	g.rec.prog_id = prog_id_of(bpf_program__fd(g.skel->progs.bloomgate_xdp));
	g.rec.dns_prog_id = prog_id_of(bpf_program__fd(g.skel->progs.bloomgate_dns));
	bpf_map_update_elem(st.attach_fd, &g.slot, &g.rec, BPF_ANY);
	bg_progs_pin_path(path, sizeof(path), st.dir, g.rec.ifindex, g.rec.netns_ino);
	unlink(path);
	if (bpf_obj_pin(bpf_map__fd(g.skel->maps.BG_MAP_PROGS), path)) {
		ret = -errno;
		bg_whyf(err, errlen, "the options changed, but %s cannot be pinned: DNS "
		     "queries pass there once this program exits (%s)", path,
		     strerror(errno));
	}
out:
	if (g.old_fd >= 0)
		close(g.old_fd);
	bloomgate__destroy(g.skel);
	bg_state_close(&st);
	return ret;
}

/* ---- the next program ------------------------------------------------------ */

int bg_attach_next_id(const char *dir, const struct bg_attach_rec *r, __u32 *id)
{
	char path[PATH_MAX];
	__u32 key = BG_PROG_NEXT;
	int fd, ret = 0;

	*id = 0;
	bg_progs_pin_path(path, sizeof(path), dir, r->ifindex, r->netns_ino);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_elem(fd, &key, id))
		ret = errno == ENOENT ? 0 : -errno;
	close(fd);
	return ret;
}

/*
 * bloomgate's own programs, by the name the kernel keeps for them (the
 * BPF functions'; the same in every instance and version). Chained after
 * bloomgate, one of them would run bloomgate again for every packet it
 * passes, itself again from its own slot, up to the kernel's 33 tail
 * calls, every counter counted again each time.
 */
static const char *const own_progs[] = { BG_PROG_NAME, "bloomgate_dns" };

static int own_prog(const struct bpf_prog_info *info)
{
	size_t i;

	for (i = 0; i < sizeof(own_progs) / sizeof(own_progs[0]); i++)
		if (!strncmp(info->name, own_progs[i], sizeof(info->name)))
			return 1;
	return 0;
}

/* A program named as a pinned path or "id:N": its fd, or -errno with err. */
static int prog_fd_of(const char *name, char *err, size_t errlen)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	char *end, link[64], kind[64];
	ssize_t n;
	int fd;

	if (!strncmp(name, "id:", 3)) {
		unsigned long id = strtoul(name + 3, &end, 10);

		if (!name[3] || *end || !id || id > UINT32_MAX) {
			bg_whyf(err, errlen, "%s: not a program id (id:N)", name);
			return -EINVAL;
		}
		fd = bpf_prog_get_fd_by_id((__u32)id);
	} else {
		fd = bpf_obj_get(name);
	}
	if (fd < 0) {
		int e = errno;

		bg_whyf(err, errlen, "%s: %s", name, e == ENOENT ? "no such program "
		     "(a pinned program's path on bpffs, or id:N)" : strerror(e));
		return -e;
	}
	/* a pin may be a map: the fd's inode tells (the info of a map
	 * would be read as a program's) */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, kind, sizeof(kind) - 1);
	kind[n > 0 ? n : 0] = 0;
	memset(&info, 0, sizeof(info));
	if (strcmp(kind, "anon_inode:bpf-prog") ||
	    bpf_obj_get_info_by_fd(fd, &info, &len) || info.type != BPF_PROG_TYPE_XDP) {
		close(fd);
		bg_whyf(err, errlen, "%s: not an XDP program", name);
		return -EINVAL;
	}
	if (own_prog(&info)) {
		close(fd);
		bg_whyf(err, errlen, "%s is bloomgate's own program (%.16s, prog id %u): "
		     "after bloomgate it would run bloomgate again for every packet, up "
		     "to 33 times, counting each again; name another XDP program",
		     name, info.name, info.id);
		return -EINVAL;
	}
	return fd;
}

int bg_attach_chain(const char *ifname, const char *prog, char *err, size_t errlen)
{
	struct bg_attach_rec rec;
	struct bg_state st;
	char path[PATH_MAX];
	__u32 slot, key = BG_PROG_NEXT;
	int ifindex, ret, arr = -1, fd = -1;

	ifindex = ifindex_of(ifname, err, errlen);
	if (ifindex < 0)
		return ifindex;
	ret = bg_state_open(&st, 1);
	if (ret) {
		state_err(ret, ifname, err, errlen);
		return ret;
	}
	ret = find_rec(st.attach_fd, (__u32)ifindex, &slot);
	if (ret != 1 || bpf_map_lookup_elem(st.attach_fd, &slot, &rec)) {
		bg_whyf(err, errlen, "bloomgate is not attached to %s", ifname);
		ret = -ENOENT;
		goto out;
	}
	ret = 0;
	if (!(rec.mode & BG_ATTACH_F_CHAIN)) {
		bg_whyf(err, errlen, "bloomgate is attached to %s without --chain: "
		     "its program has no next slot (detach, then attach with --chain)",
		     ifname);
		ret = -EINVAL;
		goto out;
	}
	bg_progs_pin_path(path, sizeof(path), st.dir, rec.ifindex, rec.netns_ino);
	arr = bpf_obj_get(path);
	if (arr < 0) {
		ret = -errno;
		bg_whyf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		goto out;
	}
	if (!prog) {
		ret = bpf_map_delete_elem(arr, &key) && errno != ENOENT ? -errno : 0;
		if (ret)
			bg_whyf(err, errlen, "cannot empty the next slot: %s", strerror(-ret));
		goto out;
	}
	fd = prog_fd_of(prog, err, errlen);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	/* the kernel refuses a program bloomgate cannot tail-call (another
	 * kind of XDP program: frags, offloaded, ...) */
	if (bpf_map_update_elem(arr, &key, &fd, BPF_ANY)) {
		ret = -errno;
		bg_whyf(err, errlen, "%s cannot run after bloomgate: %s%s", prog,
		     strerror(errno), errno == EINVAL ? " (the kernel tail-calls "
		     "only an XDP program of the same kind: no frags, not offloaded)" : "");
	}
out:
	if (fd >= 0)
		close(fd);
	if (arr >= 0)
		close(arr);
	bg_state_close(&st);
	return ret;
}

/* Finds bloomgate's program among those libxdp attached to ifindex. */
/*
 * Without CAP_SYS_ADMIN libxdp cannot open the attached program by id
 * (BPF_PROG_GET_FD_BY_ID) and reports EPERM. The kernel's own XDP query
 * and detach need CAP_NET_ADMIN only (the agent's unit has no
 * CAP_SYS_ADMIN): detach the program of that mode when it is ours (its id
 * is the recorded one), never another program.
 */
static int detach_by_id(int ifindex, __u32 prog_id)
{
	static const __u32 modes[] = { XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE };
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		__u32 id = 0;

		if (bpf_xdp_query_id(ifindex, (int)modes[i], &id) || id != prog_id)
			continue;
		return bpf_xdp_detach(ifindex, modes[i], NULL);
	}
	return -ENOENT;
}

static int detach_prog(int ifindex, __u32 prog_id)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *p = NULL;
	enum xdp_attach_mode mode;
	int ret = -ENOENT;

	ret = libxdp_get_error(mp);
	if (ret == -EPERM || ret == -EACCES)
		return detach_by_id(ifindex, prog_id);
	if (ret)
		return -ENOENT;
	ret = -ENOENT;
	mode = xdp_multiprog__attach_mode(mp);
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if (p && (xdp_program__id(p) == prog_id ||
			  !strcmp(xdp_program__name(p), BG_PROG_NAME)))
			ret = xdp_program__detach(p, ifindex, mode, 0);
	} else {
		while ((p = xdp_multiprog__next_prog(p, mp))) {
			if (xdp_program__id(p) == prog_id ||
			    !strcmp(xdp_program__name(p), BG_PROG_NAME)) {
				ret = xdp_program__detach(p, ifindex, mode, 0);
				break;
			}
		}
	}
	xdp_multiprog__close(mp);
	return ret;
}

/* ---- attachments whose interface is gone --------------------------------- */

/* 1: no interface has ifindex in the calling thread's namespace. */
static int ifindex_gone_here(__u32 ifindex)
{
	char name[IF_NAMESIZE];

	if (if_indextoname(ifindex, name))
		return 0;
	return errno == ENXIO || errno == ENODEV ? 1 : -errno;
}

static int gone_here(void *arg)
{
	return ifindex_gone_here(*(const __u32 *)arg);
}

int bg_attach_rec_gone(const struct bg_attach_rec *rec)
{
	__u32 ifindex = rec->ifindex;
	char path[PATH_MAX];
	int fd, ret;

	if (rec->netns_ino == bg_netns_ino())
		return ifindex_gone_here(rec->ifindex);
	/* A namespace nothing holds any more took its interfaces with it
	 * (veths are destroyed; a physical device moves to the initial
	 * namespace, under another name and record). */
	if (!bg_netns_path(rec->netns_ino, path, sizeof(path)))
		return 1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 1 : -errno;
	ret = bg_netns_call(fd, gone_here, &ifindex);
	close(fd);
	return ret;
}

int bg_attach_count_gone(struct bg_state *st)
{
	struct bg_attach_rec recs[BG_ATTACH_MAX];
	int n = bg_attach_list(st, recs, BG_ATTACH_MAX), i, gone = 0;

	for (i = 0; i < n; i++)
		gone += bg_attach_rec_gone(&recs[i]) == 1;
	return gone;
}

/* The pinned state, locked, for the detach commands: one line in err when
 * nothing is attached or the state cannot be opened. */
static int open_attached(struct bg_state *st, char *err, size_t errlen)
{
	int ret = bg_state_open(st, 1);

	if (ret)
		state_err(ret, NULL, err, errlen);
	return ret;
}

int bg_detach_gone(bg_gone_fn cb, void *ctx, char *err, size_t errlen)
{
	struct bg_attach_rec rec, recs[1];
	struct bg_state st;
	int ret, removed = 0;
	__u32 i;

	ret = open_attached(&st, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < BG_ATTACH_MAX; i++) {
		if (bpf_map_lookup_elem(st.attach_fd, &i, &rec) || !rec.ifindex)
			continue;
		/* unknown (e.g. EPERM entering its namespace): kept */
		if (bg_attach_rec_gone(&rec) != 1)
			continue;
		/* Its program went with the interface: only our pin and the
		 * record are left. */
		unpin_progs(st.dir, &rec);
		if (cb)
			cb(ctx, &rec);
		memset(&rec, 0, sizeof(rec));
		bpf_map_update_elem(st.attach_fd, &i, &rec, BPF_ANY);
		removed++;
	}
	/* The last attachment gone: nothing filters any more, as after the
	 * last detach. */
	if (removed && bg_attach_list(&st, recs, 1) == 0)
		bg_unpin_all(st.dir);
	bg_state_close(&st);
	return removed;
}

/* "interface X does not exist", and the way out when records of gone
 * interfaces are there (X may be one of them: its name is not kept). */
static void no_such_iface(const char *ifname, char *err, size_t errlen)
{
	struct bg_state st;
	int gone = 0;

	if (bg_state_open(&st, 0) == 0) {
		gone = bg_attach_count_gone(&st);
		bg_state_close(&st);
	}
	if (gone)
		bg_whyf(err, errlen, "interface '%s' does not exist; %d %s gone "
		     "(bloomgate detach --gone removes %s)", ifname, gone,
		     gone == 1 ? "attachment is to an interface that is" :
				 "attachments are to interfaces that are",
		     gone == 1 ? "it" : "them");
	else
		bg_whyf(err, errlen, "interface '%s' does not exist", ifname);
}

int bg_detach(const char *ifname, char *err, size_t errlen)
{
	struct bg_attach_rec rec, recs[1];
	struct bg_state st;
	char ebuf[128];
	int ifindex, ret;
	__u32 slot;

	ifindex = ifindex_of(ifname, err, errlen);
	if (ifindex < 0) {
		no_such_iface(ifname, err, errlen);
		return ifindex;
	}
	ret = bg_state_open(&st, 1);
	if (ret) {
		state_err(ret, ifname, err, errlen);
		return ret;
	}
	ret = find_rec(st.attach_fd, (__u32)ifindex, &slot);
	if (ret != 1) {
		bg_whyf(err, errlen, "bloomgate is not attached to %s", ifname);
		ret = -ENOENT;
		goto out;
	}
	if (bpf_map_lookup_elem(st.attach_fd, &slot, &rec)) {
		ret = -errno;
		goto out;
	}
	ret = detach_prog(ifindex, rec.prog_id);
	if (ret && ret != -ENOENT) {
		libxdp_strerror(ret, ebuf, sizeof(ebuf));
		bg_whyf(err, errlen, "cannot detach from %s: %s", ifname, ebuf);
		goto out;
	}
	/* -ENOENT: the program is gone already (e.g. the link was reset);
	 * the record is stale, so clearing it is still right. */
	unpin_progs(st.dir, &rec);
	memset(&rec, 0, sizeof(rec));
	bpf_map_update_elem(st.attach_fd, &slot, &rec, BPF_ANY);
	if (bg_attach_list(&st, recs, 1) == 0) {
		/* Last interface: remove every pin so nothing is left. */
		bg_unpin_all(st.dir);
	}
	ret = 0;
out:
	bg_state_close(&st);
	return ret;
}

int bg_detach_all(char *err, size_t errlen)
{
	struct bg_attach_rec rec;
	struct bg_state st;
	int ret, failed = 0;
	__u32 i;

	ret = open_attached(&st, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < BG_ATTACH_MAX; i++) {
		if (bpf_map_lookup_elem(st.attach_fd, &i, &rec) || !rec.ifindex)
			continue;
		if (rec.netns_ino != bg_netns_ino()) {
			/* Its ifindex means another interface here. */
			failed = -EXDEV;
			continue;
		}
		/* An interface that is gone took its program with it. */
		ret = detach_prog((int)rec.ifindex, rec.prog_id);
		if (ret && ret != -ENOENT) {
			failed = ret;
			continue;
		}
		unpin_progs(st.dir, &rec);
		memset(&rec, 0, sizeof(rec));
		bpf_map_update_elem(st.attach_fd, &i, &rec, BPF_ANY);
	}
	if (failed == -EXDEV) {
		bg_whyf(err, errlen, "bloomgate is also attached in another network "
		     "namespace; run detach --all there too (pins kept)");
		bg_state_close(&st);
		return failed;
	}
	if (failed) {
		bg_whyf(err, errlen, "cannot detach from every interface: %s",
		     strerror(-failed));
		bg_state_close(&st);
		return failed;
	}
	bg_unpin_all(st.dir);
	bg_state_close(&st);
	return 0;
}
