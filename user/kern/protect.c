// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The protected set in the kernel (kern/protect.h): gathered from the
 * attachments' namespaces, published into the pinned map, read back.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/membarrier.h>

#include "kern/netns.h"
#include "kern/pins.h"
#include "kern/protect.h"
#include "core/clock.h"

/* ---- Gathering ---------------------------------------------------------- */

/* The addresses of interface name (ifindex in netns_ino), as items. */
static int iface_addrs(struct bg_protect_set *s, const char *name, __u32 ifindex,
		       __u32 netns_ino)
{
	struct ifaddrs *ifa, *p;
	int ret = 0;

	if (getifaddrs(&ifa))
		return -errno;
	for (p = ifa; p && !ret; p = p->ifa_next) {
		struct bg_protect_item it;
		int fam = !p->ifa_addr ? 0 : p->ifa_addr->sa_family;

		if ((fam != AF_INET && fam != AF_INET6) || strcmp(p->ifa_name, name))
			continue;
		memset(&it, 0, sizeof(it));
		if (fam == AF_INET) {
			it.family = BG_KEY_IPV4;
			it.plen = 32;
			memcpy(it.addr, &((struct sockaddr_in *)p->ifa_addr)->sin_addr, 4);
		} else {
			it.family = BG_KEY_IPV6;
			it.plen = 128;
			memcpy(it.addr, &((struct sockaddr_in6 *)p->ifa_addr)->sin6_addr, 16);
		}
		it.kind = BG_PROTECT_IFACE;
		it.ifindex = ifindex;
		it.netns_ino = netns_ino;
		snprintf(it.ifname, sizeof(it.ifname), "%s", name);
		ret = bg_protect_add(s, &it);
	}
	freeifaddrs(ifa);
	return ret;
}

/* The next hops of the calling thread's namespace's default routes (its
 * own /proc/thread-self/net: /proc/net is the process's). A table of a
 * million IPv4 routes is not read past its default routes (key order);
 * the IPv6 one is read whole, a line at a time. */
static int default_routes(struct bg_protect_set *s, __u32 netns_ino)
{
	char line[512];
	FILE *f;
	int past = 0, r = 0;

	f = fopen("/proc/thread-self/net/route", "re");
	while (f && r >= 0 && !past && fgets(line, sizeof(line), f))
		r = bg_protect_route4(s, line, netns_ino, &past);
	if (f)
		fclose(f);
	f = r < 0 ? NULL : fopen("/proc/thread-self/net/ipv6_route", "re");
	while (f && r >= 0 && fgets(line, sizeof(line), f))
		r = bg_protect_route6(s, line, netns_ino);
	if (f)
		fclose(f);
	return r < 0 ? r : 0;
}

struct here {
	struct bg_protect_set *s;
	__u32 ifindex; /* 0: by name */
	const char *ifname;
	__u32 netns_ino;
	int routes; /* the namespace's default routes too */
};

/* One interface's items, in its namespace (a thread in it, or here). */
static int collect(void *arg)
{
	struct here *h = arg;
	char name[IF_NAMESIZE];
	const char *n = h->ifname;
	int ret;

	if (!n && !if_indextoname(h->ifindex, name))
		return 0; /* gone: no address */
	if (!n)
		n = name;
	ret = iface_addrs(h->s, n, h->ifindex ? h->ifindex : if_nametoindex(n),
			  h->netns_ino);
	if (!ret && h->routes)
		ret = default_routes(h->s, h->netns_ino);
	return ret;
}

/* The live set's items of an attachment whose namespace cannot be
 * entered now: its interface's addresses and its namespace's next hops. */
static int keep_live(struct bg_protect_set *s, const struct bg_protect_set *live,
		     const struct bg_attach_rec *r)
{
	__u32 i;
	int ret = 0;

	for (i = 0; !ret && i < live->nitems && i < BG_PROTECT_MAX; i++) {
		const struct bg_protect_item *it = &live->item[i];

		if (it->netns_ino == r->netns_ino &&
		    ((it->kind == BG_PROTECT_IFACE && it->ifindex == r->ifindex) ||
		     it->kind == BG_PROTECT_GATEWAY))
			ret = bg_protect_add(s, it) == -ENOSPC ? -ENOSPC : 0;
	}
	return ret;
}

/* The attachments' items; -ENOSPC, or 0 (a namespace that cannot be
 * entered keeps what the live set has of it). */
static int gather_attached(const struct bg_protect_src *src,
			   struct bg_protect_set *out, const struct bg_protect_set *live)
{
	struct bg_attach_rec recs[BG_ATTACH_MAX + 1];
	__u32 seen[BG_ATTACH_MAX + 1];
	int n = 0, i, j, ret = 0;

	for (i = 0; src->st && i < BG_ATTACH_MAX; i++) {
		__u32 k = (__u32)i;

		/* the records, as bg_attach_list() reads them */
		if (!bpf_map_lookup_elem(src->st->attach_fd, &k, &recs[n]) &&
		    recs[n].ifindex)
			n++;
	}
	if (src->also)
		recs[n++] = *src->also;
	for (i = 0; i < n && ret != -ENOSPC; i++) {
		struct here h = { .s = out, .ifindex = recs[i].ifindex,
				  .netns_ino = recs[i].netns_ino, .routes = 1 };

		for (j = 0; j < i; j++)
			h.routes &= seen[j] != recs[i].netns_ino;
		seen[i] = recs[i].netns_ino;
		ret = bg_in_netns_of(recs[i].netns_ino, collect, &h);
		if (ret && ret != -ENOSPC)
			ret = live ? keep_live(out, live, &recs[i]) : 0;
	}
	for (i = 0; (size_t)i < src->n_ifnames && ret != -ENOSPC; i++) {
		struct here h = { .s = out, .ifname = src->ifnames[i],
				  .netns_ino = bg_netns_ino(), .routes = !i };

		ret = collect(&h);
	}
	return ret == -ENOSPC ? ret : 0;
}

int bg_protect_gather(const struct bg_protect_src *src, struct bg_protect_set *out,
		      char *why, size_t whylen)
{
	struct bg_protect_set *live = NULL;
	size_t i;
	int ret;

	bg_protect_init(out);
	if (src->st && src->st->protect_fd >= 0) {
		live = malloc(sizeof(*live));
		if (live && bg_protect_read(src->st->protect_fd, live)) {
			free(live);
			live = NULL;
		}
	}
	ret = gather_attached(src, out, live);
	/* a resolv.conf that cannot be read (not a regular file...) names
	 * no resolver; only a full set stops here */
	if (!ret && bg_protect_resolv(out) == -ENOSPC)
		ret = -ENOSPC;
	for (i = 0; !ret && src->keep_extra && live && i < live->nitems &&
		    i < BG_PROTECT_MAX; i++)
		if (live->item[i].kind == BG_PROTECT_GIVEN ||
		    live->item[i].kind == BG_PROTECT_CONFIG)
			ret = bg_protect_add(out, &live->item[i]) == -ENOSPC ?
				      -ENOSPC : 0;
	for (i = 0; !ret && !src->keep_extra && i < src->n_extra; i++)
		ret = bg_protect_add(out, &src->extra[i]);
	free(live);
	if (ret) {
		snprintf(why, whylen, "the protected set is full: more than %d "
			 "addresses and prefixes (the attached interfaces' "
			 "addresses, the default routes' next hops, the resolvers, "
			 "the operator's)", BG_PROTECT_MAX);
		return ret;
	}
	bg_protect_finish(out);
	return 0;
}

/* ---- The map -------------------------------------------------------------- */

static size_t map_len(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (sizeof(struct bg_protect_map) + pg - 1) / pg * pg;
}

/* Waits until a grace period has certainly passed since the last flip
 * that could not wait for one (m->flipped_ns): at most a second. */
static void settle(const struct bg_protect_map *m)
{
	__u64 t = bg_mono_ns(), until = m->flipped_ns + BG_PROTECT_SETTLE_NS;
	struct timespec ts;

	if (!m->flipped_ns || t >= until)
		return;
	if (until - t > BG_PROTECT_SETTLE_NS) /* not a time of this boot */
		until = t + BG_PROTECT_SETTLE_NS;
	ts.tv_sec = (time_t)((until - t) / 1000000000ull);
	ts.tv_nsec = (long)((until - t) % 1000000000ull);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int bg_protect_publish(int fd, const struct bg_protect_set *s)
{
	struct bg_protect_map *m;
	__u32 cur;

	m = mmap(NULL, map_len(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	cur = m->sel & 1;
	if (memcmp(&m->half[cur], s, sizeof(*s))) {
		/* the other half: no packet reads it, once a grace period
		 * has passed since it was live */
		settle(m);
		memcpy(&m->half[!cur], s, sizeof(*s));
		/* marked before the flip: a writer killed before the grace
		 * period below leaves the next one waiting for it */
		m->flipped_ns = bg_mono_ns();
		__atomic_store_n(&m->sel, !cur, __ATOMIC_RELEASE);
		/* XDP programs run in RCU read-side sections: this returns
		 * once none that read the old half is still running (not
		 * available with nohz_full: the next writer waits instead) */
		if (!syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
			m->flipped_ns = 0;
	}
	munmap(m, map_len());
	return 0;
}

int bg_protect_read(int fd, struct bg_protect_set *out)
{
	struct bg_protect_map *m = malloc(sizeof(*m));
	__u32 zero = 0;
	int ret = 0;

	if (!m)
		return -ENOMEM;
	/* the live half is never the one being written */
	if (bpf_map_lookup_elem(fd, &zero, m))
		ret = -errno;
	else
		*out = m->half[m->sel & 1];
	free(m);
	return ret;
}

int bg_protect_refresh(const struct bg_protect_src *src, char *why, size_t whylen)
{
	struct bg_protect_set *s;
	int ret;

	if (!src->st || src->st->protect_fd < 0)
		return 0;
	s = malloc(sizeof(*s));
	if (!s) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	ret = bg_protect_gather(src, s, why, whylen);
	if (!ret) {
		ret = bg_protect_publish(src->st->protect_fd, s);
		if (ret)
			snprintf(why, whylen, "cannot write the protected set: %s",
				 strerror(-ret));
	}
	free(s);
	return ret;
}
