// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "bloomgate/dns.h"
#include "state.h"
#include "bloomgate.skel.h"

#define BG_PROG_NAME "bloomgate_xdp"

static const char *const map_names[] = {
	BG_TEXTIFY(BG_MAP_FILTERS), BG_TEXTIFY(BG_MAP_COUNTERS),
	BG_TEXTIFY(BG_MAP_EVENTS), BG_TEXTIFY(BG_MAP_ATTACH),
};
#define N_MAPS (sizeof(map_names) / sizeof(map_names[0]))

static void errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

const char *bg_pin_dir(void)
{
	const char *d = getenv("BLOOMGATE_PIN_DIR");

	return d && *d ? d : BG_PIN_DIR;
}

int bg_ensure_bpffs(void)
{
	struct statfs sfs;

	if (statfs("/sys/fs/bpf", &sfs) == 0 && sfs.f_type == BPF_FS_MAGIC)
		return 0;
	if (mkdir("/sys/fs/bpf", 0700) && errno != EEXIST)
		return -errno;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"))
		return -errno;
	return 0;
}

static void pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static int lock_dir(struct bg_state *st)
{
	st->lock_fd = open(st->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (st->lock_fd < 0)
		return -errno;
	/* Serialises attach, detach and load: concurrent loads queue here. */
	if (flock(st->lock_fd, LOCK_EX)) {
		int err = -errno;

		close(st->lock_fd);
		st->lock_fd = -1;
		return err;
	}
	return 0;
}

int bg_state_open(struct bg_state *st, int lock)
{
	int *fds[N_MAPS] = { &st->filters_fd, &st->counters_fd, &st->events_fd,
			     &st->attach_fd };
	char path[PATH_MAX];
	size_t i;
	int err;

	memset(st, 0, sizeof(*st));
	st->lock_fd = st->filters_fd = st->counters_fd = -1;
	st->events_fd = st->attach_fd = -1;
	snprintf(st->dir, sizeof(st->dir), "%s", bg_pin_dir());
	err = bg_ensure_bpffs();
	if (err)
		return err;
	if (access(st->dir, F_OK))
		return -ENOENT;
	if (lock) {
		err = lock_dir(st);
		if (err)
			return err;
	}
	for (i = 0; i < N_MAPS; i++) {
		pin_path(path, sizeof(path), st->dir, map_names[i]);
		*fds[i] = bpf_obj_get(path);
		if (*fds[i] < 0) {
			err = -errno;
			bg_state_close(st);
			return err;
		}
	}
	return 0;
}

void bg_state_close(struct bg_state *st)
{
	int fds[] = { st->filters_fd, st->counters_fd, st->events_fd,
		      st->attach_fd, st->lock_fd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	st->filters_fd = st->counters_fd = st->events_fd = -1;
	st->attach_fd = st->lock_fd = -1;
}

__u32 bg_map_id(int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

static __u32 prog_id_of(int fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

__u32 bg_filter_current_id(int filters_fd)
{
	__u32 zero = 0, id = 0;

	return bpf_map_lookup_elem(filters_fd, &zero, &id) ? 0 : id;
}

/* ---- The load record: which lists built the live filter --------------- */

void bg_record_path(char *buf, size_t len)
{
	const char *d = bg_pin_dir();
	size_t i, o;

	o = (size_t)snprintf(buf, len, "%s/", BG_RECORD_DIR);
	for (i = 0; d[i] && o + 1 < len; i++)
		buf[o++] = d[i] == '/' ? '_' : d[i];
	if (o + 7 < len)
		memcpy(buf + o, ".lists", 7);
	else
		buf[len - 1] = 0;
}

int bg_record_write(__u32 filter_id, const struct bg_source *src, size_t n)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], abs[PATH_MAX];
	FILE *f;
	size_t i;

	if (mkdir(BG_RECORD_DIR, 0700) && errno != EEXIST)
		return -errno;
	bg_record_path(path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "filter %u\n", filter_id);
	for (i = 0; i < n; i++) {
		const char *p = realpath(src[i].path, abs) ? abs : src[i].path;

		if (strchr(p, '\n'))
			continue; /* cannot be one line: check won't name it */
		fprintf(f, "source %s %s %d %s\n", src[i].allow ? "allow" : "block",
			bg_format_name(src[i].format), src[i].subdomains ? 1 : 0,
			p);
	}
	if (fclose(f) || rename(tmp, path)) {
		unlink(tmp);
		return -errno;
	}
	return 0;
}

/* One record line into a source; 0, 1 to skip it, or -ENOMEM. */
static int record_line(char *line, struct bg_source *src)
{
	char role[8], fmt[16];
	int sub, off = 0;

	memset(src, 0, sizeof(*src));
	if (!strncmp(line, "block ", 6) || !strncmp(line, "allow ", 6)) {
		/* the first version: address lists only */
		src->allow = line[0] == 'a';
		src->format = BG_FMT_ADDR;
		off = 6;
	} else if (sscanf(line, "source %7s %15s %d %n", role, fmt, &sub,
			  &off) == 3 && off > 0) {
		int f = bg_format_parse(fmt);

		if (f <= BG_FMT_AUTO || (strcmp(role, "block") &&
					 strcmp(role, "allow")))
			return 1;
		src->allow = !strcmp(role, "allow");
		src->format = (uint8_t)f;
		src->subdomains = sub != 0;
	} else {
		return 1;
	}
	if (!line[off])
		return 1;
	src->path = strdup(line + off);
	return src->path ? 0 : -ENOMEM;
}

int bg_record_read(struct bg_record *r)
{
	char path[PATH_MAX], line[PATH_MAX + 64];
	FILE *f;

	memset(r, 0, sizeof(*r));
	bg_record_path(path, sizeof(path));
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct bg_source src, *nv;
		int ret;

		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "filter ", 7)) {
			r->filter_id = (__u32)strtoul(line + 7, NULL, 10);
			continue;
		}
		ret = record_line(line, &src);
		if (ret == 1)
			continue;
		nv = ret ? NULL : realloc(r->src, sizeof(*nv) * (size_t)(r->n + 1));
		if (!nv) {
			free(src.path);
			fclose(f);
			bg_record_free(r);
			return -ENOMEM;
		}
		r->src = nv;
		r->src[r->n++] = src;
	}
	fclose(f);
	return 0;
}

void bg_record_free(struct bg_record *r)
{
	int i;

	for (i = 0; i < r->n; i++)
		free(r->src[i].path);
	free(r->src);
	memset(r, 0, sizeof(*r));
}

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

int bg_filter_create(const struct bg_filter_params *p, uint64_t seed,
		     const struct bg_blocklist *bl)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts,
		    .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	size_t len = page_round(p->bytes);
	void *mem;
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bg_filter", sizeof(__u32),
			    BG_FILTER_VALUE_SIZE, p->nelems, &opts);
	if (fd < 0)
		return -errno;
	/* Build straight into the map's memory: no per-block syscalls. */
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	bg_filter_build(mem, p, seed, bl);
	munmap(mem, len);
	/* Read-only from now on for every syscall user: the bits the datapath
	 * reads can no longer change under it. */
	if (bpf_map_freeze(fd)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int bg_filter_publish(int filters_fd, int filter_fd)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(filters_fd, &zero, &filter_fd, BPF_ANY))
		return -errno;
	return 0;
}

int bg_filter_map_current(int filters_fd, const void **mem, size_t *len)
{
	struct bpf_map_info info;
	__u32 info_len = sizeof(info), zero = 0, id = 0;
	const struct bg_filter_header *hdr;
	void *m;
	int fd, err;

	if (bpf_map_lookup_elem(filters_fd, &zero, &id) || !id)
		return -ENOENT;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return errno == ENOENT ? -EAGAIN : -errno; /* swapped meanwhile */
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len)) {
		err = -errno;
		close(fd);
		return err;
	}
	*len = page_round((size_t)info.max_entries * info.value_size);
	m = mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, 0);
	err = -errno;
	close(fd);
	if (m == MAP_FAILED)
		return err;
	hdr = m;
	if (hdr->magic != BG_FILTER_MAGIC || hdr->abi_version != BG_ABI_VERSION ||
	    bg_filter_nelems(hdr) > info.max_entries) {
		munmap(m, *len);
		return -EPROTO;
	}
	*mem = m;
	return 0;
}

void bg_filter_unmap(const void *mem, size_t len)
{
	munmap((void *)mem, len);
}

int bg_counters_read(int counters_fd, struct bg_counters *sum)
{
	int ncpu = libbpf_num_possible_cpus(), i, j;
	struct bg_counters *per;
	__u32 zero = 0;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	per = calloc((size_t)ncpu, sizeof(*per));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(counters_fd, &zero, per)) {
		int err = -errno;

		free(per);
		return err;
	}
	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < ncpu; i++) {
		for (j = 0; j < BG_CNT_SLOTS; j++)
			sum->cnt[j] += per[i].cnt[j];
		for (j = 0; j < BG_MAL_SLOTS; j++)
			sum->malformed[j] += per[i].malformed[j];
	}
	free(per);
	return 0;
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

/* The calling thread's network namespace: ifindexes are only unique in one. */
__u32 bg_netns_ino(void)
{
	struct stat sb;

	return stat("/proc/self/ns/net", &sb) ? 0 : (__u32)sb.st_ino;
}

static int find_rec(int attach_fd, __u32 ifindex, __u32 *slot)
{
	__u32 ns = bg_netns_ino();

	__u32 i, free_slot = BG_ATTACH_MAX;

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

void bg_progs_pin_path(char *buf, size_t len, const char *dir, __u32 ifindex,
		       __u32 netns_ino)
{
	snprintf(buf, len, "%s/%s%u_%u", dir, BG_PROGS_PIN_PREFIX, ifindex,
		 netns_ino);
}

/* Removes every pin and the directory once no interface is attached. */
static void unpin_all(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	size_t i;
	DIR *d;

	for (i = 0; i < N_MAPS; i++) {
		pin_path(path, sizeof(path), dir, map_names[i]);
		unlink(path);
	}
	/* the attachments' prog arrays, also ones a crash left behind */
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, BG_PROGS_PIN_PREFIX,
			    strlen(BG_PROGS_PIN_PREFIX)))
			continue;
		pin_path(path, sizeof(path), dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	bg_record_path(path, sizeof(path));
	unlink(path);
	/* libxdp's own pin directory, when it has nothing left in it. */
	rmdir("/sys/fs/bpf/xdp");
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
		errf(err, errlen, "interface %s does not exist", ifname);
		return -ENODEV;
	}
	return (int)idx;
}

int bg_attach(const char *ifname, const struct bg_attach_opts *o, char *err,
	      size_t errlen)
{
	struct bloomgate *skel = NULL;
	struct xdp_program *prog = NULL;
	struct bg_attach_rec rec;
	struct bpf_map *maps[N_MAPS];
	struct bg_state st = { .lock_fd = -1 };
	char path[PATH_MAX], ebuf[128];
	int ifindex, ret, fresh, progs_fd, dns_fd, pinned = 0;
	__u32 slot, key = BG_PROG_DNS, any_port = 0;
	size_t i;

	ifindex = ifindex_of(ifname, err, errlen);
	if (ifindex < 0)
		return ifindex;
	ret = bg_ensure_bpffs();
	if (ret) {
		errf(err, errlen, "cannot mount bpffs on /sys/fs/bpf: %s",
		     strerror(-ret));
		return ret;
	}
	snprintf(st.dir, sizeof(st.dir), "%s", bg_pin_dir());
	fresh = access(st.dir, F_OK) != 0;
	if (fresh && mkdir(st.dir, 0700) && errno != EEXIST) {
		ret = -errno;
		errf(err, errlen, "cannot create %s: %s", st.dir, strerror(errno));
		return ret;
	}
	ret = lock_dir(&st);
	if (ret) {
		errf(err, errlen, "cannot lock %s: %s", st.dir, strerror(-ret));
		return ret;
	}

	skel = bloomgate__open();
	if (!skel) {
		ret = -errno;
		errf(err, errlen, "cannot open the BPF object: %s", strerror(errno));
		goto out;
	}
	/* Load-time configuration: the verifier prunes the modes not used. */
	skel->rodata->cfg_match = (__u8)o->match;
	skel->rodata->cfg_action = (__u8)o->action;
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

	/* Reuse the pinned maps when another interface is attached already,
	 * so every interface shares one filter; otherwise pin new ones. */
	maps[0] = skel->maps.BG_MAP_FILTERS;
	maps[1] = skel->maps.BG_MAP_COUNTERS;
	maps[2] = skel->maps.BG_MAP_EVENTS;
	maps[3] = skel->maps.BG_MAP_ATTACH;
	for (i = 0; i < N_MAPS; i++) {
		pin_path(path, sizeof(path), st.dir, map_names[i]);
		if (bpf_map__set_pin_path(maps[i], path)) {
			ret = -errno;
			errf(err, errlen, "cannot set pin path %s", path);
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
		errf(err, errlen, "cannot load the XDP program: %s", ebuf);
		goto out;
	}
	/* Refuse a second attachment to the same interface. */
	if (!fresh) {
		pin_path(path, sizeof(path), st.dir, map_names[3]);
		st.attach_fd = bpf_obj_get(path);
		if (st.attach_fd >= 0) {
			ret = find_rec(st.attach_fd, (__u32)ifindex, &slot);
			close(st.attach_fd);
			st.attach_fd = -1;
			if (ret == 1) {
				ret = -EEXIST;
				errf(err, errlen, "bloomgate is already attached to %s",
				     ifname);
				goto out;
			}
			if (ret == 0 && slot == BG_ATTACH_MAX) {
				ret = -ENOSPC;
				errf(err, errlen, "bloomgate is attached to %d interfaces already",
				     BG_ATTACH_MAX);
				goto out;
			}
		}
	}
	ret = xdp_program__attach(prog, ifindex,
				  o->mode == BG_MODE_SKB ? XDP_MODE_SKB :
							   XDP_MODE_NATIVE,
				  0);
	if (ret) {
		libxdp_strerror(ret, ebuf, sizeof(ebuf));
		errf(err, errlen, "cannot attach to %s in %s mode: %s%s", ifname,
		     o->mode == BG_MODE_SKB ? "skb" : "native", ebuf,
		     o->mode == BG_MODE_SKB ? "" : " (try --mode skb)");
		goto out;
	}
	/* libxdp loaded the object: the (pinned) maps have fds now. Until
	 * bloomgate_dns is in this attachment's own prog array, the tail call
	 * fails and DNS queries pass, counted in dns_no_prog. */
	memset(&rec, 0, sizeof(rec));
	rec.ifindex = (__u32)ifindex;
	rec.mode = (__u8)o->mode;
	rec.match = (__u8)o->match;
	rec.action = (__u8)o->action;
	rec.prog_id = xdp_program__id(prog);
	rec.netns_ino = bg_netns_ino();
	rec.dns_action = skel->rodata->cfg_dns_action;
	for (i = 0; i < BG_DNS_PORTS_MAX; i++)
		rec.dns_ports[i] = skel->rodata->cfg_dns_ports[i];
	progs_fd = bpf_map__fd(skel->maps.BG_MAP_PROGS);
	dns_fd = bpf_program__fd(skel->progs.bloomgate_dns);
	rec.dns_prog_id = dns_fd >= 0 ? prog_id_of(dns_fd) : 0;
	if (progs_fd < 0 || dns_fd < 0 || !rec.dns_prog_id ||
	    bpf_map_update_elem(progs_fd, &key, &dns_fd, BPF_ANY)) {
		ret = progs_fd < 0 || dns_fd < 0 ? -ENOENT : -errno;
		errf(err, errlen, "cannot set up the DNS program: %s",
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
		errf(err, errlen, "cannot pin %s: %s", path, strerror(errno));
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
		errf(err, errlen, "cannot record the attachment: %s",
		     strerror(-ret));
		goto undo;
	}
	st.attach_fd = -1; /* owned by the skeleton */
	ret = 0;
	goto out;
undo:
	st.attach_fd = -1; /* owned by the skeleton */
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

		if (bg_state_open(&tmp, 0) == 0) {
			int n = bg_attach_list(&tmp, recs, 1);

			bg_state_close(&tmp);
			if (n == 0)
				unpin_all(st.dir);
		} else {
			unpin_all(st.dir);
		}
	}
	xdp_program__close(prog);
	bloomgate__destroy(skel);
	if (st.lock_fd >= 0)
		close(st.lock_fd);
	return ret;
}

/* Finds bloomgate's program among those libxdp attached to ifindex. */
static int detach_prog(int ifindex, __u32 prog_id)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *p = NULL;
	enum xdp_attach_mode mode;
	int ret = -ENOENT;

	if (libxdp_get_error(mp))
		return -ENOENT;
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

int bg_detach(const char *ifname, char *err, size_t errlen)
{
	struct bg_attach_rec rec, recs[1];
	struct bg_state st;
	char ebuf[128];
	int ifindex, ret;
	__u32 slot;

	ifindex = ifindex_of(ifname, err, errlen);
	if (ifindex < 0)
		return ifindex;
	ret = bg_state_open(&st, 1);
	if (ret == -ENOENT) {
		errf(err, errlen, "bloomgate is not attached to %s", ifname);
		return ret;
	}
	if (ret) {
		errf(err, errlen, "cannot open the pinned state in %s: %s",
		     bg_pin_dir(), strerror(-ret));
		return ret;
	}
	ret = find_rec(st.attach_fd, (__u32)ifindex, &slot);
	if (ret != 1) {
		errf(err, errlen, "bloomgate is not attached to %s", ifname);
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
		errf(err, errlen, "cannot detach from %s: %s", ifname, ebuf);
		goto out;
	}
	/* -ENOENT: the program is gone already (e.g. the link was reset);
	 * the record is stale, so clearing it is still right. */
	unpin_progs(st.dir, &rec);
	memset(&rec, 0, sizeof(rec));
	bpf_map_update_elem(st.attach_fd, &slot, &rec, BPF_ANY);
	if (bg_attach_list(&st, recs, 1) == 0) {
		/* Last interface: remove every pin so nothing is left. */
		unpin_all(st.dir);
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

	ret = bg_state_open(&st, 1);
	if (ret == -ENOENT) {
		errf(err, errlen, "bloomgate is not attached to any interface");
		return ret;
	}
	if (ret) {
		errf(err, errlen, "cannot open the pinned state in %s: %s",
		     bg_pin_dir(), strerror(-ret));
		return ret;
	}
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
		errf(err, errlen, "bloomgate is also attached in another network "
		     "namespace; run detach --all there too (pins kept)");
		bg_state_close(&st);
		return failed;
	}
	if (failed) {
		errf(err, errlen, "cannot detach from every interface: %s",
		     strerror(-failed));
		bg_state_close(&st);
		return failed;
	}
	unpin_all(st.dir);
	bg_state_close(&st);
	return 0;
}
