// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * livegen: the end-to-end section's tool (bench/e2e.sh); loads
 * bench/livegen.bpf.c.
 *
 *   livegen list LO N
 *	the addresses numbered [LO, LO + N) (livegen.h), one a line
 *   livegen attach IFACE drop|pass|floor|twofloor|bloomfloor|probefloor
 *		[--bytes B] [--bytes2 B2] [--verdict drop|pass] [--match dst|src]
 *		[--k K] [--filter PIN [--part all|bloom|line|bucket1|early]]
 *		[--second apart|page|early]
 *	attaches a receiving program in native mode (netlink, no link: it
 *	stays after exit; `ip link set dev IFACE xdp off` removes it); the
 *	floor's array holds B bytes rounded up to 64-byte lines; the Bloom
 *	floor tests K bits (default 9) of a line; the probe floor runs
 *	bloomgate's lookup on a copy of the live filter of PIN (a pinned
 *	bg_filters: the map in its slot 0), in an array of the same size;
 *	--part runs only the lookup's first steps, or reads the first
 *	bucket early; --second places the two-line floor's second line
 *	(bench/livegen.bpf.c)
 *   livegen attach IFACE oneline --keys N --bytes B [--verdict ...] [--match ...]
 *	the one-line exact layout (livegen.h) of the addresses numbered
 *	[0, N) in B bytes, built and checked here
 *   livegen prog ID
 *	prints "XLATED_INSNS JITED_BYTES VERIFIED_INSNS" of loaded program ID
 *   livegen gen IFACE DSTMAC LO COUNT [--match dst|src] [--seconds S]
 *		[--cpu C] [--batch N]
 *	sends live frames into IFACE (one end of a veth pair) for S seconds
 *	from CPU C, each with the next address of [LO, LO + COUNT); prints
 *	"FRAMES NANOSECONDS"
 */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bloomgate/abi.h"
#include "bloomgate/bloom.h"
#include "livegen.h"
#include "livegen.skel.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: livegen list LO N\n"
		"       livegen attach IFACE drop|pass|floor|twofloor|bloomfloor|probefloor [--bytes B] [--bytes2 B2] [--verdict drop|pass] [--match dst|src] [--k K] [--filter PIN [--part all|bloom|line|bucket1|early]] [--second apart|page|early]\n"
		"       livegen attach IFACE oneline --keys N --bytes B [--verdict drop|pass] [--match dst|src]\n"
		"       livegen prog ID\n"
		"       livegen gen IFACE DSTMAC LO COUNT [--match dst|src] [--seconds S] [--cpu C] [--batch N]\n");
	exit(2);
}

static unsigned long num(const char *s)
{
	char *e;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &e, 0);
	if (errno || e == s || *e) {
		fprintf(stderr, "livegen: not a number: %s\n", s);
		exit(2);
	}
	return v;
}

static unsigned int ifindex_of(const char *name)
{
	unsigned int i = if_nametoindex(name);

	if (!i) {
		fprintf(stderr, "livegen: no interface %s\n", name);
		exit(1);
	}
	return i;
}

static int match_of(const char *s)
{
	if (!strcmp(s, "dst"))
		return LG_MATCH_DST;
	if (!strcmp(s, "src"))
		return LG_MATCH_SRC;
	usage();
	return -1;
}

static int cmd_list(int argc, char **argv)
{
	unsigned long lo, n, i;
	unsigned int a;

	if (argc != 2)
		usage();
	lo = num(argv[0]);
	n = num(argv[1]);
	if (lo + n > (1UL << LG_BITS)) {
		fprintf(stderr, "livegen: numbers end at 2^%d\n", LG_BITS);
		return 1;
	}
	for (i = lo; i < lo + n; i++) {
		a = LG_BASE + lg_perm(i);
		printf("%u.%u.%u.%u\n", a >> 24, (a >> 16) & 255, (a >> 8) & 255,
		       a & 255);
	}
	return fflush(stdout) ? 1 : 0;
}

static int part_of(const char *s)
{
	if (!strcmp(s, "all"))
		return LG_PART_ALL;
	if (!strcmp(s, "bloom"))
		return LG_PART_BLOOM;
	if (!strcmp(s, "line"))
		return LG_PART_LINE;
	if (!strcmp(s, "bucket1"))
		return LG_PART_BUCKET1;
	if (!strcmp(s, "early"))
		return LG_PART_EARLY;
	usage();
	return -1;
}

static int two_of(const char *s)
{
	if (!strcmp(s, "apart"))
		return LG_TWO_APART;
	if (!strcmp(s, "page"))
		return LG_TWO_PAGE;
	if (!strcmp(s, "early"))
		return LG_TWO_EARLY;
	usage();
	return -1;
}

static struct livegen *open_skel(void)
{
	struct livegen *skel = livegen__open();

	if (!skel) {
		fprintf(stderr, "livegen: cannot open the BPF object\n");
		exit(1);
	}
	return skel;
}

/*
 * The live filter of a pinned bg_filters (the map whose id is in slot 0):
 * its fd and number of 64-byte elements, or -1.
 */
static int open_filter(const char *pin, unsigned long *elems)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info), key = 0, id = 0;
	int outer, fd;

	outer = bpf_obj_get(pin);
	if (outer < 0 || bpf_map_lookup_elem(outer, &key, &id) || !id) {
		fprintf(stderr, "livegen: no filter in %s\n", pin);
		return -1;
	}
	close(outer);
	fd = bpf_map_get_fd_by_id(id);
	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    info.value_size != 64 || !info.max_entries) {
		fprintf(stderr, "livegen: cannot read the filter map %u\n", id);
		return -1;
	}
	*elems = info.max_entries;
	return fd;
}

/* Copies n 64-byte elements of the map src into the mmapable map dst. */
static int copy_elems(int src, int dst, unsigned long n)
{
	size_t len = n * 64;
	void *s, *d;
	int err = 0;

	s = mmap(NULL, len, PROT_READ, MAP_SHARED, src, 0);
	d = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, dst, 0);
	if (s == MAP_FAILED || d == MAP_FAILED) {
		fprintf(stderr, "livegen: cannot map the filter: %s\n", strerror(errno));
		err = 1;
	} else {
		memcpy(d, s, len);
	}
	if (s != MAP_FAILED)
		munmap(s, len);
	if (d != MAP_FAILED)
		munmap(d, len);
	return err;
}

/* the one-line layout's lines and fingerprint of address number i */
static void one_key(unsigned long i, __u32 lines, __u32 *line, __u32 *line2,
		    __u32 *hi, __u32 *lo)
{
	struct bg_key4 key;
	__u64 h, h2;

	bg_key4_init(&key, htonl(LG_BASE + lg_perm((unsigned int)i)), 32);
	h = bg_key4_hash(&key, LG_ONE_SEED);
	h2 = bg_fp_hash(h, LG_ONE_SEED);
	*line = bg_bloom_block(h, lines);
	*line2 = bg_fp_bucket2(h2, lines);
	*hi = lg_one_hi(h2);
	*lo = lg_one_lo(h2);
}

/* lookup as lg_oneline does it */
static int one_has(const struct lg_one_line *t, __u32 lines, unsigned long i)
{
	__u32 line, line2, hi, lo;

	one_key(i, lines, &line, &line2, &hi, &lo);
	if (lg_one_has(&t[line], hi, lo))
		return 1;
	return lg_one_over(&t[line]) && lg_one_has(&t[line2], hi, lo);
}

#define ONE_EMPTY 0xffffffffU
#define ONE_STEPS 1000

/*
 * Builds the one-line table of the addresses numbered [0, keys) in lines
 * lines: every key in its first line while it has room; the rest by a
 * cuckoo walk (a key that finds its line full takes a slot there, the key
 * it displaces moves to its own other line), which displaces a line's own
 * key only when the line has overflowed already or holds no other line's
 * key, so that as few lines as it can manage overflow. A line whose key sits in its second
 * line is marked overflowed. Checks every key is found and counts the
 * matches of a million unlisted numbers. NULL when it does not fit.
 */
static struct lg_one_line *one_build(unsigned long keys, __u32 lines)
{
	size_t nslots = (size_t)lines * LG_ONE_SLOTS;
	struct lg_one_line *t = calloc(lines, sizeof(*t));
	__u32 *at = malloc(nslots * sizeof(*at));
	unsigned char *used = calloc(lines, 1), *flag = calloc(lines, 1);
	__u32 *wait = malloc(keys * sizeof(*wait) + 1);
	__u32 l1, l2, hi, lo, cur, pos, s, n = 0, over = 0, moved = 0;
	unsigned long i, fp = 0, probes = 1000000, steps, rnd = 88172645463325252UL;

	if (!t || !at || !used || !flag || !wait) {
		fprintf(stderr, "livegen: out of memory\n");
		exit(1);
	}
	memset(at, 0xff, nslots * sizeof(*at));
	for (i = 0; i < keys; i++) {
		one_key(i, lines, &l1, &l2, &hi, &lo);
		if (used[l1] < LG_ONE_SLOTS)
			at[(size_t)l1 * LG_ONE_SLOTS + used[l1]++] = (__u32)i;
		else
			wait[n++] = (__u32)i;
	}
	for (i = 0; i < n; i++) {
		cur = wait[i];
		one_key(cur, lines, &l1, &pos, &hi, &lo);
		for (steps = 0; used[pos] == LG_ONE_SLOTS; steps++) {
			__u32 v;

			if (steps == ONE_STEPS) {
				fprintf(stderr, "livegen: one-line table: %lu keys do not fit %u lines\n",
					keys, lines);
				free(t);
				t = NULL;
				goto out;
			}
			rnd ^= rnd << 13; /* xorshift64 */
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			s = (__u32)(rnd % LG_ONE_SLOTS);
			if (!flag[pos]) { /* a guest if there is one */
				__u32 g;

				for (g = 0; g < LG_ONE_SLOTS; g++) {
					one_key(at[(size_t)pos * LG_ONE_SLOTS + (s + g) % LG_ONE_SLOTS],
						lines, &l1, &l2, &hi, &lo);
					if (l1 != pos)
						break;
				}
				if (g < LG_ONE_SLOTS)
					s = (s + g) % LG_ONE_SLOTS;
				else
					flag[pos] = 1;
			}
			v = at[(size_t)pos * LG_ONE_SLOTS + s];
			at[(size_t)pos * LG_ONE_SLOTS + s] = cur;
			cur = v;
			one_key(cur, lines, &l1, &l2, &hi, &lo);
			pos = l1 == pos ? l2 : l1;
		}
		at[(size_t)pos * LG_ONE_SLOTS + used[pos]++] = cur;
	}
	for (pos = 0; pos < lines; pos++)
		for (s = 0; s < used[pos]; s++) {
			cur = at[(size_t)pos * LG_ONE_SLOTS + s];
			one_key(cur, lines, &l1, &l2, &hi, &lo);
			t[pos].hi[s] = hi;
			t[pos].lo[s / 5] |= lo << (6 * (s % 5));
			if (l1 != pos) {
				t[l1].lo[2] |= 1U << 31;
				moved++;
			}
		}
	for (pos = 0; pos < lines; pos++)
		over += lg_one_over(&t[pos]);
	for (i = 0; i < keys; i++)
		if (!one_has(t, lines, i)) {
			fprintf(stderr, "livegen: one-line table: key %lu not found\n", i);
			exit(1);
		}
	for (i = 0; i < probes; i++)
		fp += one_has(t, lines, (1UL << (LG_BITS - 1)) + i);
	fprintf(stderr, "livegen: one-line table: %lu keys in %u lines (%.2f bytes/key, %.1f %% of slots full), %.2f %% of keys in their second line, %.1f %% of lines overflowed, every key found, %lu of %lu unlisted matched\n",
		keys, lines, lines * 64.0 / keys,
		100.0 * keys / ((double)nslots), 100.0 * moved / keys,
		100.0 * over / lines, fp, probes);
out:
	free(at);
	free(used);
	free(flag);
	free(wait);
	return t;
}

static int cmd_attach(int argc, char **argv)
{
	unsigned long bytes = 64, bytes2 = 0, lines, lines2, k = 9;
	int verdict = XDP_PASS, match = LG_MATCH_DST, err, i, filter = -1;
	int part = LG_PART_ALL, two = LG_TWO_APART;
	const char *pin = NULL;
	unsigned long keys = 0;
	struct lg_one_line *one = NULL;
	struct livegen *skel;
	struct bpf_program *prog;
	unsigned int ifindex;

	if (argc < 2)
		usage();
	ifindex = ifindex_of(argv[0]);
	for (i = 2; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--bytes"))
			bytes = num(argv[++i]);
		else if (!strcmp(argv[i], "--bytes2"))
			bytes2 = num(argv[++i]);
		else if (!strcmp(argv[i], "--verdict"))
			verdict = !strcmp(argv[++i], "drop") ? XDP_DROP : XDP_PASS;
		else if (!strcmp(argv[i], "--match"))
			match = match_of(argv[++i]);
		else if (!strcmp(argv[i], "--k"))
			k = num(argv[++i]);
		else if (!strcmp(argv[i], "--filter"))
			pin = argv[++i];
		else if (!strcmp(argv[i], "--part"))
			part = part_of(argv[++i]);
		else if (!strcmp(argv[i], "--second"))
			two = two_of(argv[++i]);
		else if (!strcmp(argv[i], "--keys"))
			keys = num(argv[++i]);
		else
			usage();
	}
	if (!strcmp(argv[1], "probefloor")) {
		if (!pin)
			usage();
		filter = open_filter(pin, &lines);
		if (filter < 0)
			return 1;
		bytes = lines * 64;
	}
	if (!k || k > BG_K_MAX)
		usage();
	lines = (bytes + 63) / 64;
	lines2 = (bytes2 + 63) / 64;
	if (!lines || lines + lines2 > 0xffffffffUL)
		usage();
	if (!strcmp(argv[1], "oneline")) {
		if (!keys || keys > (1UL << (LG_BITS - 1)))
			usage();
		one = one_build(keys, (__u32)lines);
		if (!one)
			return 1;
	}
	skel = open_skel();
	if (!strcmp(argv[1], "drop"))
		prog = skel->progs.lg_drop;
	else if (!strcmp(argv[1], "pass"))
		prog = skel->progs.lg_pass;
	else if (!strcmp(argv[1], "floor"))
		prog = skel->progs.lg_floor;
	else if (!strcmp(argv[1], "twofloor") && lines2)
		prog = skel->progs.lg_twofloor;
	else if (!strcmp(argv[1], "bloomfloor"))
		prog = skel->progs.lg_bloomfloor;
	else if (one)
		prog = skel->progs.lg_oneline;
	else if (filter >= 0)
		prog = skel->progs.lg_probefloor;
	else
		usage();
	skel->rodata->floor_lines = lines;
	skel->rodata->floor_lines2 = (__u32)lines2;
	skel->rodata->floor_verdict = verdict;
	skel->rodata->floor_match = match;
	skel->rodata->bloom_k = (__u32)k;
	skel->rodata->probe_part = (__u32)part;
	skel->rodata->two_layout = (__u32)two;
	err = bpf_map__set_max_entries(skel->maps.lg_floor_map, lines + lines2);
	if (!err)
		err = livegen__load(skel);
	if (!err && filter >= 0 &&
	    copy_elems(filter, bpf_map__fd(skel->maps.lg_floor_map), lines))
		err = -EIO;
	if (!err && one) {
		void *d = mmap(NULL, lines * 64, PROT_READ | PROT_WRITE, MAP_SHARED,
			       bpf_map__fd(skel->maps.lg_floor_map), 0);

		if (d == MAP_FAILED) {
			err = -errno;
		} else {
			memcpy(d, one, lines * 64);
			munmap(d, lines * 64);
		}
	}
	free(one);
	if (!err)
		err = bpf_xdp_attach(ifindex, bpf_program__fd(prog),
				     XDP_FLAGS_DRV_MODE, NULL);
	if (err)
		fprintf(stderr, "livegen: attach %s: %s\n", argv[0], strerror(-err));
	livegen__destroy(skel);
	return err ? 1 : 0;
}

static unsigned long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* 60 bytes: Ethernet, IPv4, UDP, 18 bytes of payload (64 on the wire) */
static void build_frame(unsigned char *f, const unsigned char *dst,
			const unsigned char *src)
{
	struct ethhdr *eth = (void *)f;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	unsigned int sum = 0, i;
	unsigned short *w = (void *)ip;

	memset(f, 0, 60);
	memcpy(eth->h_dest, dst, ETH_ALEN);
	memcpy(eth->h_source, src, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->tot_len = htons(60 - sizeof(*eth));
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = htonl(0xc0000201); /* 192.0.2.1 */
	ip->daddr = htonl(0xc6336401); /* 198.51.100.1 */
	for (i = 0; i < sizeof(*ip) / 2; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	ip->check = ~sum;
	udp->source = htons(40000);
	udp->dest = htons(9);
	udp->len = htons(60 - sizeof(*eth) - sizeof(*ip));
}

static int cmd_gen(int argc, char **argv)
{
	unsigned long lo, count, batch = 64, frames = 0, repeat = 1 << 20;
	unsigned char dst[ETH_ALEN], src[ETH_ALEN] = { 2, 0, 0, 0, 0, 1 };
	double seconds = 1;
	int match = LG_MATCH_DST, cpu = -1, err = 0, i, k;
	unsigned long long t0, t;
	struct livegen *skel;
	unsigned char frame[60];
	unsigned int ifindex;
	cpu_set_t set;

	if (argc < 4)
		usage();
	ifindex = ifindex_of(argv[0]);
	if (sscanf(argv[1], "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &dst[0], &dst[1],
		   &dst[2], &dst[3], &dst[4], &dst[5]) != 6)
		usage();
	lo = num(argv[2]);
	count = num(argv[3]);
	for (i = 4; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--match"))
			match = match_of(argv[++i]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--cpu"))
			cpu = num(argv[++i]);
		else if (!strcmp(argv[i], "--batch"))
			batch = num(argv[++i]);
		else
			usage();
	}
	if (!count || lo + count > (1UL << LG_BITS) || seconds <= 0)
		usage();
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("livegen: sched_setaffinity");
			return 1;
		}
	}
	for (k = 0; (1UL << k) < count; k++)
		;
	skel = open_skel();
	skel->rodata->gen_ifindex = ifindex;
	skel->rodata->gen_lo = lo;
	skel->rodata->gen_count = count;
	skel->rodata->gen_mask = k >= 32 ? 0xffffffffU : (1U << k) - 1;
	skel->rodata->gen_match = match;
	if (livegen__load(skel)) {
		fprintf(stderr, "livegen: cannot load the BPF object\n");
		livegen__destroy(skel);
		return 1;
	}
	build_frame(frame, dst, src);
	t0 = now_ns();
	do {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
			    .data_size_in = sizeof(frame), .repeat = repeat,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
			    .batch_size = batch);

		err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.lg_gen), &o);
		if (err) {
			fprintf(stderr, "livegen: test run: %s\n", strerror(-err));
			break;
		}
		frames += repeat;
		t = now_ns();
		/* about 0.1 s a call after the first, so the end is close to S */
		if (t > t0 && frames == repeat)
			repeat = repeat * 100000000ULL / (t - t0) + 1;
	} while (t - t0 < seconds * 1e9);
	livegen__destroy(skel);
	if (err)
		return 1;
	printf("%lu %llu\n", frames, t - t0);
	return 0;
}

/* livegen prog ID: "XLATED_INSNS JITED_BYTES VERIFIED_INSNS" of a loaded
 * program (bpftool 7.1 does not print what the verifier walked) */
static int cmd_prog(int argc, char **argv)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd;

	if (argc != 1)
		usage();
	fd = bpf_prog_get_fd_by_id((__u32)num(argv[0]));
	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		fprintf(stderr, "livegen: prog %s: %s\n", argv[0], strerror(errno));
		return 1;
	}
	close(fd);
	printf("%u %u %u\n", info.xlated_prog_len / 8, info.jited_prog_len,
	       info.verified_insns);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "list"))
		return cmd_list(argc - 2, argv + 2);
	if (!strcmp(argv[1], "attach"))
		return cmd_attach(argc - 2, argv + 2);
	if (!strcmp(argv[1], "prog"))
		return cmd_prog(argc - 2, argv + 2);
	if (!strcmp(argv[1], "gen"))
		return cmd_gen(argc - 2, argv + 2);
	usage();
	return 2;
}
