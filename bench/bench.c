// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate benchmarks (`make bench`, through bench/run.sh).
 *
 * For each list size n (default 1M and 10M random distinct IPv4 addresses
 * from a fixed seed) it loads, side by side:
 *   - bloomgate's real XDP program (build/bloomgate.skel.h) with
 *     cfg_bench_vary=1 and cfg_action=DROP, its filter built by
 *     bg_filter_plan/bg_filter_create and swapped in by bg_filter_publish;
 *   - the baselines of bench/bench.bpf.c: parse-only XDP_PASS, a classic
 *     k-probe Bloom filter, the kernel's BLOOM_FILTER map, a HASH map, and
 *     bloomgate's blocked probe without its counters in a plain array, in a
 *     BPF_F_INNER_MAP map-in-map slot and in a fixed-size map-in-map slot.
 *
 * Then, for CIDR lists (the FireHOL level 1 list when present, and 1M
 * generated prefixes), bloomgate loaded as `bloomgate load` does against
 * the kernel's LPM trie holding the same prefixes, in the same rounds (see
 * "CIDR lists" below).
 *
 * Then DNS queries (issue 4): ns per query through bloomgate_xdp and
 * bloomgate_dns for names of 10 to 255 wire bytes against the address-only
 * path, 1M listed domains and 1M listed addresses in one filter (see "DNS
 * queries" below). `--only addr,cidr,dns` picks sections.
 *
 * Every program steps the packet's destination through one full-period LCG
 * after probing, and XDP test runs reuse one packet buffer across `repeat`,
 * so one BPF_PROG_TEST_RUN probes `repeat` different (mostly non-member)
 * addresses. That is verified, not assumed: after a run the destination in
 * data_out must be the LCG iterated `repeat` times, and every program's
 * positive count must equal the count userspace computes for the same
 * address sequence with the same probe functions.
 *
 * Output: Markdown tables on stdout (bench/run.sh puts them into
 * docs/BENCHMARKS.md); progress on stderr.
 */
#include "../tests/pktgen.h" /* first: linux/in.h after netinet/in.h */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bloomgate/bloom.h"
#include "bloomgate/dns.h"
#include "domains.h"
#include "filter.h"
#include "lists.h"
#include "state.h"
#include "bloomgate.skel.h"
#include "bench.skel.h"

/* bloomgate's own lookup (bloomgate/lookup.h, the datapath's code) on a
 * filter mmapped in userspace, so the bench can count the probes an address
 * costs; bg_elem as user/filter.c defines it for bg_filter_test4. */
static inline const void *bg_elem(const void *filter, __u32 idx)
{
	return idx < bg_filter_nelems(filter) ?
		       (const struct bg_block *)filter + idx :
		       NULL;
}
#include "bloomgate/lookup.h"

/* Indices of bench_pos[] in bench/bench.bpf.c. */
enum {
	BP_PASS,
	BP_CLASSIC,
	BP_KBLOOM,
	BP_HASH,
	BP_BLOCKED,
	BP_BLOCKED_INNER,
	BP_BLOCKED_FIXED,
	BP_LPM,
	BP__COUNT,
};
_Static_assert(sizeof(((struct bench__bss *)0)->bench_pos) ==
		       BP__COUNT * sizeof(__u64),
	       "bench_pos[] and BP_* disagree");

/* The LCG of bg_bench_step() / bench_step(), on host-order addresses. */
#define LCG_MUL 2654435761U
#define LCG_ADD 1U

enum variant {
	V_PASS,
	V_BLOOMGATE,
	V_CLASSIC,
	V_KBLOOM,
	V_HASH,
	V_BLOCKED,
	V_BLOCKED_INNER,
	V_BLOCKED_FIXED,
	V__COUNT,
};

/* What a variant's positive count must equal. */
enum expect {
	EX_NONE, /* no positives */
	EX_BLOCKED, /* bg_filter_test4 on the same sequence */
	EX_CLASSIC, /* classic_test on the same sequence */
	EX_MEMBERS, /* exactly the members (exact set) */
	EX_ATLEAST, /* at least the members (kernel Bloom: unknown seed) */
};

static const struct {
	const char *name;
	const char *what;
	int bp; /* bench_pos index, -1: bloomgate's own counters */
	enum expect ex;
} V[V__COUNT] = {
	[V_PASS] = { "(a) pass", "parse + vary, XDP_PASS, no probe", BP_PASS,
		     EX_NONE },
	[V_BLOOMGATE] = { "(b) bloomgate", "bloomgate_xdp, real program", -1,
			  EX_BLOCKED },
	[V_CLASSIC] = { "(c) classic", "k-probe Bloom, ARRAY of u64 words",
			BP_CLASSIC, EX_CLASSIC },
	[V_KBLOOM] = { "(d) kernel bloom", "BPF_MAP_TYPE_BLOOM_FILTER peek",
		       BP_KBLOOM, EX_ATLEAST },
	[V_HASH] = { "(e) hash", "BPF_MAP_TYPE_HASH lookup (prealloc)",
		     BP_HASH, EX_MEMBERS },
	[V_BLOCKED] = { "(f) blocked/plain", "bloomgate probe, plain ARRAY",
			BP_BLOCKED, EX_BLOCKED },
	[V_BLOCKED_INNER] = { "(g) blocked/inner",
			      "bloomgate probe, map-in-map, BPF_F_INNER_MAP",
			      BP_BLOCKED_INNER, EX_BLOCKED },
	[V_BLOCKED_FIXED] = { "(h) blocked/fixed",
			      "bloomgate probe, map-in-map, fixed-size inner",
			      BP_BLOCKED_FIXED, EX_BLOCKED },
};

struct opts {
	uint64_t sizes[8];
	int nsizes;
	uint32_t repeat; /* iterations per timed test run */
	int rounds; /* timed rounds, variants interleaved */
	uint32_t fpr_samples; /* probes for the FPR measurements */
	double target; /* bloomgate / classic target FPR */
	uint32_t kbloom_k; /* map_extra of the kernel Bloom map */
	uint64_t seed; /* key generation */
	int cpu; /* pin to this CPU, -1: no pinning */
	int swaps; /* bg_filter_publish timing */
	uint64_t parse_lines; /* list-parse timing, 0: skip */
	const char *firehol; /* FireHOL level 1 list, "": skip */
	uint64_t cidr_n; /* generated CIDR list, 0: skip */
	unsigned sections; /* SEC_* to run */
	uint64_t dns_names; /* listed domains in the DNS section */
	uint64_t dns_addrs; /* listed IPv4 addresses in the same filter */
	double dns_run_ms; /* target length of one timed DNS run */
	int dns_rounds; /* timed DNS rounds */
	int dns_path; /* 0 auto, 1 bloomgate_dns directly, 2 tail call only */
};

enum { SEC_ADDR = 1, SEC_CIDR = 2, SEC_DNS = 4, SEC_ALL = 7 };

struct run {
	uint32_t ns; /* kernel: average ns per iteration */
	double cpu_ns; /* thread CPU time / repeat */
	uint32_t daddr; /* destination after the run, host order */
	uint64_t pos; /* positives counted by the program */
	uint64_t probes; /* bloomgate only: its probes counter */
	uint64_t packets; /* bloomgate only: its packets counter */
};

struct set {
	uint64_t n;
	const uint32_t *addr; /* host order, first n of the generated keys */
	uint64_t *bitmap; /* 2^32-bit membership */

	/* bloomgate */
	struct bloomgate *bg;
	struct bg_filter_params p;
	uint64_t fseed;
	int filter_fd, filter2_fd;
	const void *fmem; /* live filter, mmapped read-only */
	size_t flen;
	double t_size_us, t_create_ms[2], t_publish_ms[64];
	int npublish;

	/* baselines */
	struct bench *bn;
	uint64_t cseed;
	uint32_t cbits, ck; /* classic: m (multiple of 64), k */
	uint64_t *cmem;
	size_t clen;
	int blocked_fd;
	double c_predicted, t_classic_ms;
	uint64_t kb_bits;
	double kb_predicted, t_kbloom_s, t_hash_s, t_blocked_ms;

	int prog_fd[V__COUNT];
	long long memlock[V__COUNT];

	/* expected positives over the LCG sequence from the packet */
	uint64_t seq_len;
	uint64_t ex_at_repeat[EX_ATLEAST + 1], ex_at_fpr[EX_ATLEAST + 1];

	/* results */
	struct run verify[V__COUNT];
	struct run *timed[V__COUNT]; /* [rounds] */
	int mismatches;
	uint64_t us_probes, us_pos_bg, us_pos_classic; /* userspace FPR */
};

static struct opts O = {
	.sizes = { 1000000, 10000000 },
	.nsizes = 2,
	.repeat = 3000000,
	.rounds = 7,
	.fpr_samples = 10000000,
	.target = 0.001,
	.kbloom_k = 10,
	.seed = 0x626c6f6f6d676174ULL, /* "bloomgat" */
	.cpu = -2, /* default: the last CPU */
	.swaps = 20,
	.parse_lines = 10000000,
	/* bench/run.sh runs from the repository root: ../shared/data */
	.firehol = "../shared/data/firehol_level1.netset",
	.cidr_n = 1000000,
	.sections = SEC_ALL,
	.dns_names = 1000000,
	.dns_addrs = 1000000,
	.dns_run_ms = 20,
	.dns_rounds = 15,
};

static int firehol_missing; /* O.firehol given but not readable */
/* Seed of the generated CIDR list: O.seed ^ MIX_SEED_XOR. */
#define MIX_SEED_XOR 0xc1d7ULL

static struct pkt PKT;
static uint32_t PKT_DADDR0; /* host order */
static int failures;
static struct timespec T0;

/* ---- small helpers ------------------------------------------------------ */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void progress(const char *fmt, ...)
{
	struct timespec t;
	va_list ap;

	clock_gettime(CLOCK_MONOTONIC, &t);
	fprintf(stderr, "[%6.1fs] ", (double)(t.tv_sec - T0.tv_sec) +
					     (double)(t.tv_nsec - T0.tv_nsec) * 1e-9);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	failures++;
	fputs("bench: CHECK FAILED: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline int bm_test(const uint64_t *bm, uint32_t a)
{
	return (int)(bm[a >> 6] >> (a & 63)) & 1;
}

static inline void bm_set(uint64_t *bm, uint32_t a)
{
	bm[a >> 6] |= 1ULL << (a & 63);
}

static uint64_t *bm_alloc(void)
{
	void *m = mmap(NULL, 1ULL << 29, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (m == MAP_FAILED)
		die("cannot map a 512 MiB bitmap: %s", strerror(errno));
	return m;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double t[256];
	int i;

	if (n <= 0)
		return NAN;
	if (n > 256)
		n = 256;
	for (i = 0; i < n; i++)
		t[i] = v[i];
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	return n & 1 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static double minimum(const double *v, int n)
{
	double m = INFINITY;
	int i;

	for (i = 0; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

static long long fd_memlock(int fd)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static const char *human_n(uint64_t n)
{
	static char buf[8][32];
	static int i;
	char *b = buf[i++ & 7];

	if (n >= 1000000 && n % 1000000 == 0)
		snprintf(b, 32, "%lluM", (unsigned long long)(n / 1000000));
	else if (n >= 1000 && n % 1000 == 0)
		snprintf(b, 32, "%lluk", (unsigned long long)(n / 1000));
	else
		snprintf(b, 32, "%llu", (unsigned long long)n);
	return b;
}

static const char *human_bytes(long long b)
{
	static char buf[8][32];
	static int i;
	char *s = buf[i++ & 7];

	if (b < 0)
		snprintf(s, 32, "?");
	else if (b >= 10LL << 20)
		snprintf(s, 32, "%.1f MiB", (double)b / (1 << 20));
	else if (b >= 10LL << 10)
		snprintf(s, 32, "%.1f KiB", (double)b / (1 << 10));
	else
		snprintf(s, 32, "%lld B", b);
	return s;
}

/* ---- keys --------------------------------------------------------------- */

/* n random distinct addresses (host order) and their membership bitmap. */
static uint32_t *gen_keys(uint64_t n, uint64_t seed, uint64_t **bitmap)
{
	uint32_t *a = malloc(n * sizeof(*a));
	uint64_t *bm = bm_alloc(), s = seed, i = 0;

	if (!a)
		die("out of memory");
	while (i < n) {
		uint32_t x = (uint32_t)splitmix64(&s);

		if (bm_test(bm, x))
			continue;
		bm_set(bm, x);
		a[i++] = x;
	}
	*bitmap = bm;
	return a;
}

static void list_from(struct bg_list *l, const uint32_t *addr, uint64_t n)
{
	uint64_t i;

	bg_list_init(l);
	l->v4 = malloc(n * sizeof(*l->v4));
	if (!l->v4)
		die("out of memory");
	for (i = 0; i < n; i++)
		bg_key4_init(&l->v4[i], htonl(addr[i]), 32);
	l->n4 = l->cap4 = n;
	l->accepted = n;
}

/* ---- classic Bloom filter (userspace half of bench_classic) -------------- */

static inline int classic_test(const struct set *s, uint32_t addr_be)
{
	struct bg_key4 key;
	uint32_t h1, h2, i;
	uint64_t h;

	bg_key4_init(&key, addr_be, 32);
	h = bg_key4_hash(&key, s->cseed);
	h1 = (uint32_t)h;
	h2 = (uint32_t)(h >> 32);
	for (i = 0; i < s->ck; i++) {
		uint32_t bit = (uint32_t)(((uint64_t)h1 * s->cbits) >> 32);

		if (!(s->cmem[bit >> 6] & (1ULL << (bit & 63))))
			return 0;
		h1 += h2;
	}
	return 1;
}

static void classic_add(struct set *s, uint32_t addr_be)
{
	struct bg_key4 key;
	uint32_t h1, h2, i;
	uint64_t h;

	bg_key4_init(&key, addr_be, 32);
	h = bg_key4_hash(&key, s->cseed);
	h1 = (uint32_t)h;
	h2 = (uint32_t)(h >> 32);
	for (i = 0; i < s->ck; i++) {
		uint32_t bit = (uint32_t)(((uint64_t)h1 * s->cbits) >> 32);

		s->cmem[bit >> 6] |= 1ULL << (bit & 63);
		h1 += h2;
	}
}

/* ---- xlated code: which calls are left after the verifier --------------- */

struct callsite {
	uint64_t addr;
	char name[64];
};

static struct callsite callsites[64];
static int ncallsites;
static uint64_t call_base;

static void kallsyms_resolve(void)
{
	char line[512], name[256], type;
	unsigned long long a;
	FILE *f = fopen("/proc/kallsyms", "r");
	int i, left = ncallsites;

	if (!f)
		return;
	while (left && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		for (i = 0; i < ncallsites; i++) {
			if (callsites[i].addr == a && !callsites[i].name[0]) {
				size_t l = strnlen(name, sizeof(callsites[i].name) - 1);

				memcpy(callsites[i].name, name, l);
				callsites[i].name[l] = 0;
				left--;
			}
		}
	}
	fclose(f);
}

static uint64_t kallsyms_addr(const char *sym)
{
	char line[512], name[256], type;
	unsigned long long a;
	FILE *f = fopen("/proc/kallsyms", "r");
	uint64_t r = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
		    !strcmp(name, sym)) {
			r = a;
			break;
		}
	}
	fclose(f);
	return r;
}

#define PI_CALLS_MAX 512 /* call sites kept per program */
struct proginfo {
	uint32_t xlated_insns, jited_bytes;
	int ncalls;
	uint64_t call_addr[PI_CALLS_MAX];
};

static void prog_inspect(int fd, struct proginfo *pi)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info), n, i;
	struct bpf_insn *insns;

	memset(pi, 0, sizeof(*pi));
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return;
	n = info.xlated_prog_len;
	pi->xlated_insns = n / sizeof(struct bpf_insn);
	pi->jited_bytes = info.jited_prog_len;
	insns = calloc(1, n ? n : 1);
	if (!insns)
		return;
	memset(&info, 0, sizeof(info));
	len = sizeof(info);
	info.xlated_prog_len = n;
	info.xlated_prog_insns = (__u64)(unsigned long)insns;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && call_base) {
		for (i = 0; i < n / sizeof(*insns); i++) {
			struct bpf_insn *in = &insns[i];
			uint64_t a;
			int j;

			if (in->code != (BPF_JMP | BPF_CALL) || in->src_reg != 0)
				continue;
			a = call_base + (uint64_t)(int64_t)in->imm;
			if (pi->ncalls < PI_CALLS_MAX)
				pi->call_addr[pi->ncalls++] = a;
			for (j = 0; j < ncallsites; j++)
				if (callsites[j].addr == a)
					break;
			if (j == ncallsites && ncallsites < 64)
				callsites[ncallsites++].addr = a;
		}
	}
	free(insns);
}

static void prog_calls_str(const struct proginfo *pi, char *buf, size_t len)
{
	int i, j, done[PI_CALLS_MAX] = { 0 };
	size_t off = 0;

	buf[0] = 0;
	for (i = 0; i < pi->ncalls; i++) {
		const char *name = "?";
		char times[16] = "";
		int cnt = 0;

		if (done[i])
			continue;
		for (j = i; j < pi->ncalls; j++)
			if (pi->call_addr[j] == pi->call_addr[i]) {
				done[j] = 1;
				cnt++;
			}
		for (j = 0; j < ncallsites; j++)
			if (callsites[j].addr == pi->call_addr[i] &&
			    callsites[j].name[0])
				name = callsites[j].name;
		if (cnt > 1)
			snprintf(times, sizeof(times), " x%d", cnt);
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
					"%s`%s`%s", off ? ", " : "", name, times);
		if (off >= len)
			break;
	}
	if (!call_base)
		snprintf(buf, len, "? (no /proc/kallsyms)");
	else if (!buf[0])
		snprintf(buf, len, "none");
}

/* ---- set-up ------------------------------------------------------------- */

static void setup_bloomgate(struct set *s)
{
	struct bg_list l;
	uint64_t seeds[2] = { s->fseed, s->fseed ^ 0x5a5a5a5aULL };
	int fds[2], filters_fd, i, err;
	double t;

	s->bg = bloomgate__open();
	if (!s->bg)
		die("bloomgate__open: %s", strerror(errno));
	s->bg->rodata->cfg_bench_vary = 1;
	s->bg->rodata->cfg_action = BG_ACTION_DROP;
	s->bg->rodata->cfg_match = BG_MATCH_DST;
	err = bloomgate__load(s->bg);
	if (err)
		die("bloomgate__load: %s", strerror(-err));
	filters_fd = bpf_map__fd(s->bg->maps.BG_MAP_FILTERS);

	list_from(&l, s->addr, s->n);
	t = now_s();
	err = bg_filter_plan(&l, NULL, O.target, &s->p);
	s->t_size_us = (now_s() - t) * 1e6;
	if (err)
		die("bg_filter_plan(%llu): %s", (unsigned long long)s->n,
		    strerror(-err));

	/* Two filters: the one measured, and a second one (other seed) to
	 * swap with; both builds are timed. */
	for (i = 0; i < 2; i++) {
		t = now_s();
		fds[i] = bg_filter_create(&s->p, seeds[i], &l, NULL);
		s->t_create_ms[i] = (now_s() - t) * 1e3;
		if (fds[i] < 0)
			die("bg_filter_create: %s", strerror(-fds[i]));
	}
	bg_list_free(&l);
	s->filter_fd = fds[0];
	s->filter2_fd = fds[1];

	/* Swaps, ending on the filter measured. */
	s->npublish = O.swaps < 64 ? O.swaps & ~1 : 64;
	for (i = 0; i < s->npublish; i++) {
		t = now_s();
		err = bg_filter_publish(filters_fd, fds[(i + 1) & 1]);
		s->t_publish_ms[i] = (now_s() - t) * 1e3;
		if (err)
			die("bg_filter_publish: %s", strerror(-err));
	}
	if (!s->npublish && bg_filter_publish(filters_fd, fds[0]))
		die("bg_filter_publish: %s", strerror(errno));

	err = bg_filter_map_current(filters_fd, &s->fmem, &s->flen);
	if (err)
		die("bg_filter_map_current: %s", strerror(-err));
	if (((const struct bg_filter_header *)s->fmem)->seed != s->fseed)
		die("the live filter is not the one published last");
	s->prog_fd[V_BLOOMGATE] = bpf_program__fd(s->bg->progs.bloomgate_xdp);
	s->memlock[V_BLOOMGATE] = fd_memlock(s->filter_fd);
}

static void setup_bench(struct set *s)
{
	struct bench *b;
	struct bg_list l;
	__u32 zero = 0, i;
	double m, t;
	uint64_t kbits;
	int err, fd;
	void *mem;
	size_t len;

	/* Classic sizing at the same target: m = -n ln p / ln(2)^2 bits
	 * (rounded up to whole words), k = round(m/n ln 2). */
	m = ceil(-(double)s->n * log(O.target) / (M_LN2 * M_LN2));
	if (m > 4294967232.0)
		die("classic filter over 2^32 bits");
	s->cbits = (uint32_t)((uint64_t)(m + 63) / 64 * 64);
	s->ck = (uint32_t)lround((double)s->cbits / (double)s->n * M_LN2);
	if (s->ck < 1)
		s->ck = 1;
	if (s->ck > BG_K_MAX)
		s->ck = BG_K_MAX;
	s->cseed = s->fseed ^ 0xc1a551cULL;
	s->c_predicted = pow(1.0 - exp(-(double)s->ck * (double)s->n /
					(double)s->cbits),
			     (double)s->ck);

	/* The kernel sizes its Bloom map as n*k*7/5 bits (~ n k / ln 2),
	 * rounded up to a power of two (kernel/bpf/bloom_filter.c). */
	kbits = s->n * O.kbloom_k;
	kbits = kbits / 5 * 7;
	if (kbits > (1ULL << 31))
		kbits = 1ULL << 32;
	else {
		uint64_t p2 = 64;

		while (p2 < kbits)
			p2 <<= 1;
		kbits = p2;
	}
	s->kb_bits = kbits;
	s->kb_predicted = pow(1.0 - exp(-(double)O.kbloom_k * (double)s->n /
					(double)kbits),
			      (double)O.kbloom_k);

	/* (f) the blocked filter (same parameters and seed as bloomgate's)
	 * in a plain array created here, so that the same map can be the
	 * inner-map template of (h)'s fixed-size slot (libbpf 1.1 cannot
	 * resize a BTF-defined inner map). */
	{
		LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_MMAPABLE);

		s->blocked_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bench_blocked",
					       sizeof(__u32), BG_FILTER_VALUE_SIZE,
					       s->p.nelems, &mo);
		if (s->blocked_fd < 0)
			die("blocked map: %s", strerror(errno));
	}
	len = (s->p.bytes + 4095) / 4096 * 4096;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, s->blocked_fd,
		   0);
	if (mem == MAP_FAILED)
		die("mmap blocked: %s", strerror(errno));
	list_from(&l, s->addr, s->n);
	t = now_s();
	bg_filter_build(mem, &s->p, s->fseed, &l, NULL);
	s->t_blocked_ms = (now_s() - t) * 1e3;
	bg_list_free(&l);
	munmap(mem, len);
	s->memlock[V_BLOCKED] = s->memlock[V_BLOCKED_FIXED] =
		fd_memlock(s->blocked_fd);

	b = s->bn = bench__open();
	if (!b)
		die("bench__open: %s", strerror(errno));
	b->rodata->classic_seed = s->cseed;
	b->rodata->classic_mbits = s->cbits;
	b->rodata->classic_k = s->ck;
	if (bpf_map__set_max_entries(b->maps.classic_bits, s->cbits / 64) ||
	    bpf_map__set_max_entries(b->maps.kbloom, (__u32)s->n) ||
	    bpf_map__set_map_extra(b->maps.kbloom, O.kbloom_k) ||
	    bpf_map__set_max_entries(b->maps.hset, (__u32)s->n) ||
	    bpf_map__reuse_fd(b->maps.blocked, s->blocked_fd) ||
	    bpf_map__set_inner_map_fd(b->maps.blocked_outer_fixed, s->blocked_fd))
		die("cannot size the bench maps");
	err = bench__load(b);
	if (err)
		die("bench__load: %s", strerror(-err));
	if (bpf_map_update_elem(bpf_map__fd(b->maps.blocked_outer_fixed), &zero,
				&s->blocked_fd, BPF_ANY))
		die("blocked_outer_fixed: %s", strerror(errno));
	/* (g) bloomgate's own filter map in a BPF_F_INNER_MAP slot. */
	if (bpf_map_update_elem(bpf_map__fd(b->maps.blocked_outer), &zero,
				&s->filter_fd, BPF_ANY))
		die("blocked_outer: %s", strerror(errno));
	s->memlock[V_BLOCKED_INNER] = s->memlock[V_BLOOMGATE];

	/* (c) classic: built through mmap, kept mapped for userspace tests. */
	fd = bpf_map__fd(b->maps.classic_bits);
	s->clen = (size_t)s->cbits / 8;
	s->cmem = mmap(NULL, s->clen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s->cmem == MAP_FAILED)
		die("mmap classic: %s", strerror(errno));
	t = now_s();
	for (i = 0; i < s->n; i++)
		classic_add(s, htonl(s->addr[i]));
	s->t_classic_ms = (now_s() - t) * 1e3;
	s->memlock[V_CLASSIC] = fd_memlock(fd);

	/* (d) kernel Bloom: one update per key (the map has no batch ops). */
	fd = bpf_map__fd(b->maps.kbloom);
	t = now_s();
	for (i = 0; i < s->n; i++) {
		__u32 v = htonl(s->addr[i]);

		if (bpf_map_update_elem(fd, NULL, &v, BPF_ANY))
			die("kernel bloom push: %s", strerror(errno));
	}
	s->t_kbloom_s = now_s() - t;
	s->memlock[V_KBLOOM] = fd_memlock(fd);

	/* (e) hash: batched updates. */
	{
		enum { CHUNK = 65536 };
		__u32 *keys = malloc(CHUNK * sizeof(*keys));
		__u32 *vals = calloc(CHUNK, sizeof(*vals));
		LIBBPF_OPTS(bpf_map_batch_opts, bo, .elem_flags = BPF_ANY);
		uint64_t off;

		if (!keys || !vals)
			die("out of memory");
		fd = bpf_map__fd(b->maps.hset);
		t = now_s();
		for (off = 0; off < s->n; off += CHUNK) {
			__u32 cnt = (__u32)(s->n - off < CHUNK ? s->n - off : CHUNK);

			for (i = 0; i < cnt; i++)
				keys[i] = htonl(s->addr[off + i]);
			if (bpf_map_update_batch(fd, keys, vals, &cnt, &bo))
				die("hash batch update: %s", strerror(errno));
		}
		s->t_hash_s = now_s() - t;
		s->memlock[V_HASH] = fd_memlock(fd);
		free(keys);
		free(vals);
	}

	s->prog_fd[V_PASS] = bpf_program__fd(b->progs.bench_pass);
	s->prog_fd[V_CLASSIC] = bpf_program__fd(b->progs.bench_classic);
	s->prog_fd[V_KBLOOM] = bpf_program__fd(b->progs.bench_kbloom);
	s->prog_fd[V_HASH] = bpf_program__fd(b->progs.bench_hash);
	s->prog_fd[V_BLOCKED] = bpf_program__fd(b->progs.bench_blocked);
	s->prog_fd[V_BLOCKED_INNER] = bpf_program__fd(b->progs.bench_blocked_inner);
	s->prog_fd[V_BLOCKED_FIXED] = bpf_program__fd(b->progs.bench_blocked_fixed);
	s->memlock[V_PASS] = 0;
}

/* Expected positives along the LCG sequence the test runs walk. */
static void simulate(struct set *s)
{
	uint64_t c[EX_ATLEAST + 1] = { 0 }, i, len;
	uint32_t a = PKT_DADDR0;

	len = O.repeat > O.fpr_samples ? O.repeat : O.fpr_samples;
	for (i = 0; i < len; i++) {
		uint32_t be = htonl(a);

		if (i == O.repeat)
			memcpy(s->ex_at_repeat, c, sizeof(c));
		if (i == O.fpr_samples)
			memcpy(s->ex_at_fpr, c, sizeof(c));
		c[EX_MEMBERS] += (uint64_t)bm_test(s->bitmap, a);
		c[EX_BLOCKED] += (uint64_t)bg_filter_test4(s->fmem, be);
		c[EX_CLASSIC] += (uint64_t)classic_test(s, be);
		a = a * LCG_MUL + LCG_ADD;
	}
	if (len == O.repeat)
		memcpy(s->ex_at_repeat, c, sizeof(c));
	if (len == O.fpr_samples)
		memcpy(s->ex_at_fpr, c, sizeof(c));
	s->seq_len = len;
}

/* Userspace FPR: random non-members through the live (mmapped) filter. */
static void userspace_fpr(struct set *s)
{
	uint64_t rs = O.seed ^ 0xf00dULL ^ s->n, i = 0;

	s->us_probes = s->us_pos_bg = s->us_pos_classic = 0;
	while (i < O.fpr_samples) {
		uint32_t a = (uint32_t)splitmix64(&rs);

		if (bm_test(s->bitmap, a))
			continue;
		i++;
		s->us_pos_bg += (uint64_t)bg_filter_test4(s->fmem, htonl(a));
		s->us_pos_classic += (uint64_t)classic_test(s, htonl(a));
	}
	s->us_probes = i;
}

/* ---- running ------------------------------------------------------------ */

static void read_pos(struct set *s, enum variant v, uint64_t *pos,
		     uint64_t *probes)
{
	if (V[v].bp >= 0) {
		*pos = s->bn->bss->bench_pos[V[v].bp];
		*probes = 0;
	} else {
		struct bg_counters c;

		if (bg_counters_read(bpf_map__fd(s->bg->maps.BG_MAP_COUNTERS), &c))
			die("bg_counters_read: %s", strerror(errno));
		*pos = c.cnt[BG_CNT_POSITIVES];
		*probes = c.cnt[BG_CNT_PROBES];
	}
}

/* One BPF_PROG_TEST_RUN of `repeat` iterations on the bench packet: fills
 * the timings and the destination the packet ended with. */
static void prog_run(int prog_fd, const char *name, uint32_t repeat,
		     struct run *r)
{
	uint8_t out[PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = PKT.buf,
		    .data_size_in = (__u32)PKT.len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = repeat);
	uint32_t d;
	double c0, c1;

	c0 = cpu_s();
	if (bpf_prog_test_run_opts(prog_fd, &o))
		die("test run of %s: %s", name, strerror(errno));
	c1 = cpu_s();
	if (o.data_size_out != PKT.len)
		die("test run of %s: %u bytes out", name, o.data_size_out);
	memcpy(&d, out + PKT.l3 + offsetof(struct iphdr, daddr), 4);
	r->ns = o.duration;
	r->cpu_ns = (c1 - c0) * 1e9 / repeat;
	r->daddr = ntohl(d);
}

static void run_one(struct set *s, enum variant v, uint32_t repeat,
		    struct run *r)
{
	uint64_t p0, q0, p1, q1;

	read_pos(s, v, &p0, &q0);
	prog_run(s->prog_fd[v], V[v].name, repeat, r);
	read_pos(s, v, &p1, &q1);
	r->pos = p1 - p0;
	r->probes = q1 - q0;
}

static uint32_t lcg_pow(uint32_t a, uint64_t steps)
{
	/* Applies x -> x*M + A `steps` times, by squaring the affine map. */
	uint32_t mul = LCG_MUL, add = LCG_ADD, rm = 1, ra = 0;

	while (steps) {
		if (steps & 1) {
			rm *= mul;
			ra = ra * mul + add;
		}
		add = add * mul + add;
		mul *= mul;
		steps >>= 1;
	}
	return a * rm + ra;
}

static void check_run(struct set *s, enum variant v, uint32_t repeat,
		      const struct run *r, const uint64_t *ex, const char *what)
{
	uint32_t want = lcg_pow(PKT_DADDR0, repeat);

	if (r->daddr != want) {
		fail("%s n=%s %s: destination after %u repeats is %08x, "
		     "the LCG gives %08x: the packet did not carry over",
		     V[v].name, human_n(s->n), what, repeat, r->daddr, want);
		s->mismatches++;
	}
	if (v == V_BLOOMGATE && r->probes != repeat) {
		fail("%s n=%s %s: probes counter +%llu, expected +%u", V[v].name,
		     human_n(s->n), what, (unsigned long long)r->probes, repeat);
		s->mismatches++;
	}
	switch (V[v].ex) {
	case EX_ATLEAST:
		if (r->pos < ex[EX_MEMBERS]) {
			fail("%s n=%s %s: %llu positives < %llu members", V[v].name,
			     human_n(s->n), what, (unsigned long long)r->pos,
			     (unsigned long long)ex[EX_MEMBERS]);
			s->mismatches++;
		}
		break;
	default: {
		uint64_t e = V[v].ex == EX_NONE ? 0 : ex[V[v].ex];

		if (r->pos != e) {
			fail("%s n=%s %s: %llu positives, userspace expects %llu",
			     V[v].name, human_n(s->n), what,
			     (unsigned long long)r->pos, (unsigned long long)e);
			s->mismatches++;
		}
	}
	}
}

/* ---- list parsing ------------------------------------------------------- */

static double parse_s, parse_finish_s;
static size_t parse_keys;
static int parse_err;

static void time_parse(const uint32_t *addr, uint64_t n)
{
	char path[] = "/tmp/bloomgate-bench-XXXXXX";
	struct bg_list_opts lo = { .strict = 0, .report = NULL };
	struct bg_list l;
	int fd = mkstemp(path);
	uint64_t i;
	FILE *f;
	double t;

	if (fd < 0)
		die("mkstemp: %s", strerror(errno));
	f = fdopen(fd, "w");
	if (!f)
		die("fdopen: %s", strerror(errno));
	fprintf(f, "# bloomgate bench list, %llu addresses\n",
		(unsigned long long)n);
	for (i = 0; i < n; i++) {
		uint32_t a = addr[i];

		fprintf(f, "%u.%u.%u.%u\n", a >> 24, (a >> 16) & 255,
			(a >> 8) & 255, a & 255);
	}
	if (fclose(f))
		die("writing %s: %s", path, strerror(errno));
	bg_list_init(&l);
	t = now_s();
	parse_err = bg_list_parse_file(&l, path, &lo);
	parse_s = now_s() - t;
	t = now_s();
	bg_list_finish(&l);
	parse_finish_s = now_s() - t;
	parse_keys = l.n4;
	bg_list_free(&l);
	unlink(path);
}

/* ---- output ------------------------------------------------------------- */

static void print_params(void)
{
	int i;

	printf("Parameters: sections %s%s%s; sizes",
	       O.sections & SEC_ADDR ? "addr" : "",
	       O.sections & SEC_CIDR ? (O.sections & SEC_ADDR ? ",cidr" : "cidr") : "",
	       O.sections & SEC_DNS ? (O.sections & 3 ? ",dns" : "dns") : "");
	if (!O.nsizes)
		printf(" none");
	for (i = 0; i < O.nsizes; i++)
		printf("%s%s", i ? "," : " ", human_n(O.sizes[i]));
	printf("; repeat %u per test run; %d rounds, variants interleaved "
	       "(order rotated each round); target FPR %g; kernel bloom "
	       "map_extra %u; key seed 0x%llx; FPR samples %u; ",
	       O.repeat, O.rounds, O.target, O.kbloom_k,
	       (unsigned long long)O.seed, O.fpr_samples);
	if (O.cpu >= 0)
		printf("pinned to CPU %d", O.cpu);
	else
		printf("not pinned");
	printf("; CIDR lists: FireHOL level 1 %s, generated %s prefixes "
	       "(seed 0x%llx)",
	       !O.firehol || !O.firehol[0] ? "skipped" :
	       firehol_missing		    ? "absent" :
						      "present",
	       O.cidr_n ? human_n(O.cidr_n) : "no",
	       (unsigned long long)(O.seed ^ MIX_SEED_XOR));
	if (O.sections & SEC_DNS)
		printf("; DNS: %s listed domains and %s listed IPv4 addresses in "
		       "one filter, %d rounds of about %.0f ms per run",
		       human_n(O.dns_names), O.dns_addrs ? human_n(O.dns_addrs) : "no",
		       O.dns_rounds, O.dns_run_ms);
	printf(".\n\n");
}

static double med[8][V__COUNT], cmed[8][V__COUNT];

static void print_timing(struct set *sets)
{
	int si, v, r;

	for (si = 0; si < O.nsizes; si++)
		for (v = 0; v < V__COUNT; v++) {
			double ns[256], cn[256];

			for (r = 0; r < O.rounds && r < 256; r++) {
				ns[r] = sets[si].timed[v][r].ns;
				cn[r] = sets[si].timed[v][r].cpu_ns;
			}
			med[si][v] = median(ns, r);
			cmed[si][v] = median(cn, r);
		}

	printf("### Nanoseconds per packet (BPF_PROG_TEST_RUN)\n\n");
	printf("Median over %d rounds of the kernel's per-run average "
	       "(`duration`, whole ns) for %u packets per run; x = ratio to "
	       "(a), +ns = overhead above (a). Keys vary in every iteration, "
	       "mostly non-members.\n\n",
	       O.rounds, O.repeat);
	printf("| variant |");
	for (si = 0; si < O.nsizes; si++)
		printf(" %s ns | %s x | %s +ns |", human_n(sets[si].n),
		       human_n(sets[si].n), human_n(sets[si].n));
	printf("\n|---|");
	for (si = 0; si < O.nsizes; si++)
		printf("---:|---:|---:|");
	printf("\n");
	for (v = 0; v < V__COUNT; v++) {
		printf("| %s |", V[v].name);
		for (si = 0; si < O.nsizes; si++) {
			double b = med[si][V_PASS];

			printf(" %.0f | %.2f | %+.0f |", med[si][v], med[si][v] / b,
			       med[si][v] - b);
		}
		printf("\n");
	}
	printf("\n");

	printf("Same runs, CPU time of the calling thread per packet (fractional "
	       "ns; includes the syscall, which is negligible at this repeat), "
	       "median and min; and the positives each run saw (every run "
	       "walks the same keys, so every run sees the same count; for (b) "
	       "they come from bloomgate's own `bg_stats` counters, whose "
	       "`probes` grew by exactly %u per run).\n\n",
	       O.repeat);
	printf("| variant | n | cpu ns median | cpu ns min | x (cpu) | "
	       "positives / probes per run | of which members |\n");
	printf("|---|---|---:|---:|---:|---:|---:|\n");
	for (si = 0; si < O.nsizes; si++) {
		struct set *s = &sets[si];

		for (v = 0; v < V__COUNT; v++) {
			double cn[256];

			for (r = 0; r < O.rounds && r < 256; r++)
				cn[r] = s->timed[v][r].cpu_ns;
			printf("| %s | %s | %.1f | %.1f | %.2f | %llu / %u (%.4f%%) "
			       "| %llu |\n",
			       V[v].name, human_n(s->n), cmed[si][v], minimum(cn, r),
			       cmed[si][v] / cmed[si][V_PASS],
			       (unsigned long long)s->timed[v][0].pos, O.repeat,
			       100.0 * (double)s->timed[v][0].pos / O.repeat,
			       V[v].ex == EX_NONE ?
				       0ULL :
				       (unsigned long long)s->ex_at_repeat[EX_MEMBERS]);
		}
	}
	printf("\n");
}

static void print_derived(struct set *sets)
{
	int si;

	printf("### Differences between variants\n\n");
	printf("From the medians above: kernel `duration` ns (thread CPU-time ns "
	       "in parentheses).\n\n");
	printf("| n | what | variants | ns per packet |\n");
	printf("|---|---|---|---:|\n");
	for (si = 0; si < O.nsizes; si++) {
		const char *n = human_n(sets[si].n);
		static const struct {
			const char *what, *pair;
			int a, b;
		} d[] = {
			{ "bloomgate's whole cost above parsing", "(b) - (a)",
			  V_BLOOMGATE, V_PASS },
			{ "blocked probe, inlined lookups", "(f) - (a)", V_BLOCKED,
			  V_PASS },
			{ "classic probe", "(c) - (a)", V_CLASSIC, V_PASS },
			{ "map-in-map, BPF_F_INNER_MAP (lookups not inlined)",
			  "(g) - (f)", V_BLOCKED_INNER, V_BLOCKED },
			{ "map-in-map, fixed-size inner map", "(h) - (f)",
			  V_BLOCKED_FIXED, V_BLOCKED },
			{ "bloomgate's bookkeeping (counters, header checks)",
			  "(b) - (g)",
			  V_BLOOMGATE, V_BLOCKED_INNER },
		};
		size_t i;

		for (i = 0; i < sizeof(d) / sizeof(d[0]); i++)
			printf("| %s | %s | %s | %+.0f (%+.1f) |\n", n, d[i].what,
			       d[i].pair, med[si][d[i].a] - med[si][d[i].b],
			       cmed[si][d[i].a] - cmed[si][d[i].b]);
	}
	printf("\n");
}

static void print_fpr(struct set *sets)
{
	int si;

	printf("### False-positive rate\n\n");
	printf("Userspace: %u random non-members through `bg_filter_test4` on "
	       "the live filter mmapped read-only (and the same probe for the "
	       "classic filter). Datapath: the positives of one test run of "
	       "%u LCG-stepped destinations, members removed: (positives - "
	       "members) / (probes - members).\n\n",
	       O.fpr_samples, O.fpr_samples);
	printf("| n | structure | k | predicted | userspace | datapath |\n");
	printf("|---|---|---:|---:|---:|---:|\n");
	for (si = 0; si < O.nsizes; si++) {
		struct set *s = &sets[si];
		uint64_t mem = s->ex_at_fpr[EX_MEMBERS];
		double nm = (double)(O.fpr_samples - mem);

		printf("| %s | bloomgate (blocked 512) | %u | %.3e | %.3e | %.3e |\n",
		       human_n(s->n), s->p.k, s->p.predicted,
		       (double)s->us_pos_bg / (double)s->us_probes,
		       (double)(s->verify[V_BLOOMGATE].pos - mem) / nm);
		printf("| %s | classic | %u | %.3e | %.3e | %.3e |\n",
		       human_n(s->n), s->ck, s->c_predicted,
		       (double)s->us_pos_classic / (double)s->us_probes,
		       (double)(s->verify[V_CLASSIC].pos - mem) / nm);
		printf("| %s | kernel bloom | %u | %.3e | - | %.3e (%llu) |\n",
		       human_n(s->n), O.kbloom_k, s->kb_predicted,
		       (double)(s->verify[V_KBLOOM].pos - mem) / nm,
		       (unsigned long long)(s->verify[V_KBLOOM].pos - mem));
		printf("| %s | hash (exact) | - | 0 | - | %.3e |\n", human_n(s->n),
		       (double)(s->verify[V_HASH].pos - mem) / nm);
	}
	printf("\nMembers among the %u datapath keys: ", O.fpr_samples);
	for (si = 0; si < O.nsizes; si++)
		printf("%s%llu for %s", si ? ", " : "",
		       (unsigned long long)sets[si].ex_at_fpr[EX_MEMBERS],
		       human_n(sets[si].n));
	printf(" (random addresses hit a list of n with probability n/2^32).\n\n");
}

static void print_memory(struct set *sets)
{
	int si;

	printf("### Memory\n\n");
	printf("`memlock` is the kernel's own figure from /proc/self/fdinfo; "
	       "bits/entry = 8 x memlock / n.\n\n");
	printf("| n | structure | sizing | memlock | bits/entry |\n");
	printf("|---|---|---|---:|---:|\n");
	for (si = 0; si < O.nsizes; si++) {
		struct set *s = &sets[si];
		double n = (double)s->n;

		printf("| %s | bloomgate (blocked 512) | %u blocks + header, k=%u "
		       "(%.2f bits/entry in blocks) | %s | %.2f |\n",
		       human_n(s->n), s->p.nblocks, s->p.k, s->p.bits_per_entry,
		       human_bytes(s->memlock[V_BLOOMGATE]),
		       8.0 * (double)s->memlock[V_BLOOMGATE] / n);
		printf("| %s | classic | m=%u bits, k=%u | %s | %.2f |\n",
		       human_n(s->n), s->cbits, s->ck,
		       human_bytes(s->memlock[V_CLASSIC]),
		       8.0 * (double)s->memlock[V_CLASSIC] / n);
		printf("| %s | kernel bloom | %llu bits (n k 7/5 rounded up to "
		       "2^k), k=%u | %s | %.2f |\n",
		       human_n(s->n), (unsigned long long)s->kb_bits, O.kbloom_k,
		       human_bytes(s->memlock[V_KBLOOM]),
		       8.0 * (double)s->memlock[V_KBLOOM] / n);
		printf("| %s | hash (prealloc) | max_entries n, 4 B key, 4 B value "
		       "| %s | %.1f |\n",
		       human_n(s->n), human_bytes(s->memlock[V_HASH]),
		       8.0 * (double)s->memlock[V_HASH] / n);
	}
	printf("\n");
}

static void print_build(struct set *sets)
{
	int si;

	printf("### Build and swap\n\n");
	printf("| n | bg_filter_plan | bg_filter_create (2 builds) | "
	       "bg_filter_publish median (min-max, %d swaps) | classic build | "
	       "kernel bloom push (1 syscall/key) | hash batch insert |\n",
	       sets[0].npublish);
	printf("|---|---:|---:|---:|---:|---:|---:|\n");
	for (si = 0; si < O.nsizes; si++) {
		struct set *s = &sets[si];
		double mx = 0;
		int i;

		for (i = 0; i < s->npublish; i++)
			if (s->t_publish_ms[i] > mx)
				mx = s->t_publish_ms[i];
		printf("| %s | %.0f us | %.0f ms, %.0f ms | %.2f ms (%.2f-%.2f) | "
		       "%.0f ms | %.2f s (%.0f ns/key) | %.2f s (%.0f ns/key) |\n",
		       human_n(s->n), s->t_size_us, s->t_create_ms[0],
		       s->t_create_ms[1], median(s->t_publish_ms, s->npublish),
		       minimum(s->t_publish_ms, s->npublish), mx, s->t_classic_ms,
		       s->t_kbloom_s, s->t_kbloom_s * 1e9 / (double)s->n,
		       s->t_hash_s, s->t_hash_s * 1e9 / (double)s->n);
	}
	printf("\n");
	if (O.parse_lines) {
		if (parse_err)
			printf("List parse: bg_list_parse_file failed: %s.\n\n",
			       strerror(-parse_err));
		else
			printf("List parse: %s-line file (one IPv4 address per line): "
			       "`bg_list_parse_file` %.2f s, `bg_list_finish` (sort, "
			       "de-duplicate) %.2f s; %zu keys.\n\n",
			       human_n(O.parse_lines), parse_s, parse_finish_s,
			       parse_keys);
	}
}

/* The n=largest programs, and the LPM trie program of the CIDR benchmarks
 * (lpm_fd < 0: none). */
static void print_code(struct set *s, int lpm_fd, const char *lpm_list)
{
	struct proginfo pi[V__COUNT], lpi;
	int v;

	for (v = 0; v < V__COUNT; v++)
		prog_inspect(s->prog_fd[v], &pi[v]);
	if (lpm_fd >= 0)
		prog_inspect(lpm_fd, &lpi);
	kallsyms_resolve();
	printf("### What the verifier left in each program\n\n");
	printf("Calls remaining in the translated (post-verifier) code of the "
	       "n=%s programs%s%s%s, static count, resolved through "
	       "/proc/kallsyms; a map lookup the verifier inlined shows no "
	       "call.\n\n",
	       human_n(s->n), lpm_fd >= 0 ? " and of (i) for the " : "",
	       lpm_fd >= 0 ? lpm_list : "", lpm_fd >= 0 ? " list" : "");
	printf("| variant | xlated insns | JIT bytes | calls |\n");
	printf("|---|---:|---:|---|\n");
	for (v = 0; v < V__COUNT; v++) {
		char calls[512];

		prog_calls_str(&pi[v], calls, sizeof(calls));
		printf("| %s | %u | %u | %s |\n", V[v].name, pi[v].xlated_insns,
		       pi[v].jited_bytes, calls);
	}
	if (lpm_fd >= 0) {
		char calls[512];

		prog_calls_str(&lpi, calls, sizeof(calls));
		printf("| (i) LPM trie | %u | %u | %s |\n", lpi.xlated_insns,
		       lpi.jited_bytes, calls);
	}
	printf("\n");
}

/* ---- CIDR lists: bloomgate vs the kernel's LPM trie --------------------- */

/*
 * Two lists of IPv4 prefixes, each loaded into bloomgate exactly as
 * `bloomgate load` does (bg_list_parse_file, bg_list_finish, bg_filter_plan,
 * bg_filter_create, bg_filter_publish; a fixed seed instead of getrandom) and
 * into a BPF_MAP_TYPE_LPM_TRIE holding the same (reduced) prefixes, then
 * timed against the parse-only baseline in the same interleaved rounds:
 *   - the FireHOL level 1 list (O.firehol; skipped with a note if absent);
 *   - O.cidr_n generated prefixes, lengths in the proportions of MIX[],
 *     positions uniform over the IPv4 space, from a fixed seed.
 * Exact membership comes from a 2^32-bit bitmap of the kept prefixes.
 */
enum cvariant { C_PASS, C_BLOOMGATE, C_LPM, C__COUNT };

static const char *const CV_NAME[C__COUNT] = {
	[C_PASS] = "(a) pass",
	[C_BLOOMGATE] = "(b) bloomgate",
	[C_LPM] = "(i) LPM trie",
};

/* Prefix-length mix of the generated list, in thousandths: roughly the
 * FireHOL level 1 distribution (73 % /32, 10 % /24, 6 % /23, 4 % /22, ...),
 * with a thinner /16 tail and nothing shorter, so that the list covers
 * about as much of the address space (~13 %) as FireHOL does (~15 %). */
static const struct {
	uint8_t len;
	uint16_t permille;
} MIX[] = {
	{ 32, 730 }, { 31, 3 },	  { 30, 1 },  { 29, 1 },  { 28, 1 },  { 27, 1 },
	{ 26, 1 },   { 25, 2 },	  { 24, 104 }, { 23, 62 }, { 22, 42 }, { 21, 22 },
	{ 20, 12 },  { 19, 10 },  { 18, 4 },  { 17, 2 },  { 16, 2 },
};

/* Expected counts along the LCG sequence. */
enum { CE_LISTED, CE_BG_POS, CE_BG_PROBES, CE_BG_FN, CE__COUNT };

struct cset {
	const char *name; /* column label */
	const char *tag; /* short label for the per-length table */
	char source[512]; /* file, or how the list was generated */
	uint64_t generated; /* generated prefixes (0: read from a file) */
	uint64_t read_len[33], kept_len[33]; /* per length, before/after finish */
	size_t lines, accepted, rejected, warnings, duplicates, covered, n4, n6;
	uint64_t space; /* addresses covered by the kept prefixes */
	uint64_t *bitmap; /* exact membership */
	uint64_t fseed;

	struct bloomgate *bg;
	struct bg_filter_params p;
	int filter_fd;
	const void *fmem;
	size_t flen;

	struct bench *bn;
	int lpm_fd;
	const char *lpm_how; /* how the trie was filled */

	int prog_fd[C__COUNT];
	long long memlock_bg, memlock_lpm, slab_lpm;
	double t_parse, t_finish, t_plan, t_create, t_publish, t_lpm;

	uint64_t ex_rep[CE__COUNT], ex_fpr[CE__COUNT];
	uint64_t fn_checked, fn_found; /* every kept prefix probed in userspace */
	uint64_t us_samples, us_pos; /* userspace FPR */
	double live_probe, live_addr; /* FPR from the live filter's own bits */
	double fpr_bound; /* check: datapath FPR of non-listed addresses */
	struct run verify[C__COUNT];
	struct run *timed[C__COUNT];
	int mismatches;
};

static struct cset CS[2];
static int ncs;

static void bm_set_range(uint64_t *bm, uint64_t a, uint64_t end /* excl. */)
{
	for (; a < end && (a & 63); a++)
		bm[a >> 6] |= 1ULL << (a & 63);
	for (; a + 64 <= end; a += 64)
		bm[a >> 6] = ~0ULL;
	for (; a < end; a++)
		bm[a >> 6] |= 1ULL << (a & 63);
}

static long long meminfo_kb(const char *field)
{
	char line[256];
	size_t fl = strlen(field);
	long long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, fl) && line[fl] == ':') {
			v = atoll(line + fl + 1);
			break;
		}
	fclose(f);
	return v;
}

/* Target length of a prefix of length l in plan p (0: the /16 bitmap). */
static int plan_target(const struct bg_filter_params *p, int l)
{
	int i, best = -1;

	if (l <= BG_SHORT4_MAXLEN)
		return 0;
	for (i = 0; i < p->n4; i++)
		if (p->len4[i] >= l && (best < 0 || p->len4[i] < best))
			best = p->len4[i];
	return best;
}

/*
 * False-positive rate of the live filter itself, per Bloom probe: a key
 * lands in a uniformly chosen block and its k positions are independent
 * uniform draws (the model's own assumption, see bloomgate/bloom.h), so it
 * is positive with probability (bits set / 512)^k in that block. Unlike
 * the plan's prediction (an expectation over all builds), this removes the
 * spread between one build and another, which is several percent for a
 * filter of a few hundred blocks.
 */
static double live_probe_fpr(const void *fmem)
{
	const struct bg_filter_header *h = fmem;
	const struct bg_block *b = (const struct bg_block *)fmem + bg_bloom_base(h);
	double sum = 0.0;
	__u32 i, w;

	if (!h->nblocks)
		return 0.0;
	for (i = 0; i < h->nblocks; i++) {
		int pop = 0;

		for (w = 0; w < BG_BLOCK_WORDS; w++)
			pop += __builtin_popcountll(b[i].w[w]);
		sum += pow((double)pop / BG_BLOCK_BITS, h->k);
	}
	return sum / h->nblocks;
}

/* Writes the generated list as a list file, one entry a line as FireHOL
 * writes them (an address for a /32, else a.b.c.d/len). */
static void write_mix(const char *path, uint64_t n, uint64_t seed)
{
	uint64_t s = seed, left = n, i;
	FILE *f = fopen(path, "w");
	size_t m;

	if (!f)
		die("%s: %s", path, strerror(errno));
	fprintf(f, "# bloomgate bench: %llu generated IPv4 prefixes\n",
		(unsigned long long)n);
	for (m = 0; m < sizeof(MIX) / sizeof(MIX[0]); m++) {
		uint64_t cnt = m ? n * MIX[m].permille / 1000 : 0;
		int len = MIX[m].len;

		if (!m) { /* /32 (first) takes what the rounding leaves */
			size_t q;

			cnt = n;
			for (q = 1; q < sizeof(MIX) / sizeof(MIX[0]); q++)
				cnt -= n * MIX[q].permille / 1000;
		}
		if (cnt > left)
			cnt = left;
		left -= cnt;
		for (i = 0; i < cnt; i++) {
			uint32_t a = (uint32_t)splitmix64(&s);

			a &= len == 32 ? 0xffffffffU : ~(0xffffffffU >> len);
			if (len == 32)
				fprintf(f, "%u.%u.%u.%u\n", a >> 24, (a >> 16) & 255,
					(a >> 8) & 255, a & 255);
			else
				fprintf(f, "%u.%u.%u.%u/%d\n", a >> 24, (a >> 16) & 255,
					(a >> 8) & 255, a & 255, len);
		}
	}
	if (fclose(f))
		die("writing %s: %s", path, strerror(errno));
}

/* Parses the list file as `bloomgate load` does and loads it into a fresh
 * bloomgate program and an LPM trie. */
static void cset_setup(struct cset *c, const char *path)
{
	struct bg_list_opts lo = { .strict = 0, .report = NULL };
	struct bg_list l;
	struct bench *b;
	int filters_fd, err;
	long long slab0, slab1;
	double t;
	size_t i;

	/* parse and reduce */
	bg_list_init(&l);
	t = now_s();
	err = bg_list_parse_file(&l, path, &lo);
	c->t_parse = now_s() - t;
	if (err)
		die("%s: %s", path, strerror(-err));
	for (i = 0; i < l.n4; i++)
		c->read_len[l.v4[i].plen]++;
	t = now_s();
	bg_list_finish(&l);
	c->t_finish = now_s() - t;
	c->lines = l.lines;
	c->accepted = l.accepted;
	c->rejected = l.rejected;
	c->warnings = l.warnings;
	c->duplicates = l.duplicates;
	c->covered = l.covered;
	c->n4 = l.n4;
	c->n6 = l.n6;
	if (!l.n4)
		die("%s: no IPv4 entries", path);

	/* exact membership */
	c->bitmap = bm_alloc();
	for (i = 0; i < l.n4; i++) {
		uint64_t a = ntohl(l.v4[i].addr), sz = 1ULL << (32 - l.v4[i].plen);

		c->kept_len[l.v4[i].plen]++;
		bm_set_range(c->bitmap, a, a + sz);
		c->space += sz;
	}

	/* bloomgate, as `bloomgate load` builds and swaps a filter */
	c->bg = bloomgate__open();
	if (!c->bg)
		die("bloomgate__open: %s", strerror(errno));
	c->bg->rodata->cfg_bench_vary = 1;
	c->bg->rodata->cfg_action = BG_ACTION_DROP;
	c->bg->rodata->cfg_match = BG_MATCH_DST;
	err = bloomgate__load(c->bg);
	if (err)
		die("bloomgate__load: %s", strerror(-err));
	filters_fd = bpf_map__fd(c->bg->maps.BG_MAP_FILTERS);
	t = now_s();
	err = bg_filter_plan(&l, NULL, O.target, &c->p);
	c->t_plan = now_s() - t;
	if (err)
		die("bg_filter_plan(%s): %s", c->name, strerror(-err));
	t = now_s();
	c->filter_fd = bg_filter_create(&c->p, c->fseed, &l, NULL);
	c->t_create = now_s() - t;
	if (c->filter_fd < 0)
		die("bg_filter_create(%s): %s", c->name, strerror(-c->filter_fd));
	t = now_s();
	err = bg_filter_publish(filters_fd, c->filter_fd);
	c->t_publish = now_s() - t;
	if (err)
		die("bg_filter_publish: %s", strerror(-err));
	err = bg_filter_map_current(filters_fd, &c->fmem, &c->flen);
	if (err)
		die("bg_filter_map_current: %s", strerror(-err));
	if (((const struct bg_filter_header *)c->fmem)->seed != c->fseed ||
	    !bg_header_ok(c->fmem))
		die("the live filter is not the one published");
	c->memlock_bg = fd_memlock(c->filter_fd);
	c->live_probe = live_probe_fpr(c->fmem);
	c->live_addr = 1.0 - pow(1.0 - c->live_probe, c->p.n4 ? c->p.n4 : 1);
	c->prog_fd[C_BLOOMGATE] = bpf_program__fd(c->bg->progs.bloomgate_xdp);

	/* LPM trie of the same (kept) prefixes */
	b = c->bn = bench__open();
	if (!b)
		die("bench__open: %s", strerror(errno));
	if (bpf_map__set_max_entries(b->maps.lpm, (__u32)l.n4))
		die("cannot size the LPM trie");
	err = bench__load(b);
	if (err)
		die("bench__load: %s", strerror(-err));
	c->lpm_fd = bpf_map__fd(b->maps.lpm);
	{
		enum { CHUNK = 65536 };
		struct { __u32 plen, addr; } *keys = malloc(CHUNK * sizeof(*keys));
		__u32 *vals = malloc(CHUNK * sizeof(*vals));
		LIBBPF_OPTS(bpf_map_batch_opts, bo, .elem_flags = BPF_ANY);
		size_t off, j;
		int batch = 1;

		if (!keys || !vals)
			die("out of memory");
		for (j = 0; j < CHUNK; j++)
			vals[j] = 1;
		slab0 = meminfo_kb("Slab");
		t = now_s();
		for (off = 0; off < l.n4; off += CHUNK) {
			__u32 cnt = (__u32)(l.n4 - off < CHUNK ? l.n4 - off : CHUNK);

			for (j = 0; j < cnt; j++) {
				keys[j].plen = l.v4[off + j].plen;
				keys[j].addr = l.v4[off + j].addr;
			}
			if (batch && bpf_map_update_batch(c->lpm_fd, keys, vals, &cnt, &bo)) {
				/* 524: the kernel's ENOTSUPP */
				if (off || (errno != EINVAL && errno != 524 &&
					    errno != EOPNOTSUPP))
					die("LPM batch update: %s", strerror(errno));
				batch = 0; /* no batch ops for this map type */
			}
			if (!batch)
				for (j = 0; j < cnt; j++)
					if (bpf_map_update_elem(c->lpm_fd, &keys[j],
								&vals[j], BPF_ANY))
						die("LPM update: %s", strerror(errno));
		}
		c->t_lpm = now_s() - t;
		slab1 = meminfo_kb("Slab");
		c->lpm_how = batch ? "bpf_map_update_batch" :
				     "bpf_map_update_elem, 1 syscall/prefix";
		c->slab_lpm = slab0 >= 0 && slab1 >= 0 ? (slab1 - slab0) * 1024 : -1;
		free(keys);
		free(vals);
	}
	c->memlock_lpm = fd_memlock(c->lpm_fd);
	c->prog_fd[C_PASS] = bpf_program__fd(b->progs.bench_pass);
	c->prog_fd[C_LPM] = bpf_program__fd(b->progs.bench_lpm);

	/* No false negatives, over the whole list: the first, the last and a
	 * random address of every kept prefix must be positive. */
	{
		uint64_t rs = c->fseed ^ 0xfeedULL;

		for (i = 0; i < l.n4; i++) {
			uint32_t a = ntohl(l.v4[i].addr);
			uint32_t hm = l.v4[i].plen >= 32 ? 0 : 0xffffffffU >> l.v4[i].plen;
			uint32_t t3[3] = { a, a | hm, a | ((uint32_t)splitmix64(&rs) & hm) };
			int q;

			for (q = 0; q < 3; q++) {
				c->fn_checked++;
				if (!bg_filter_test4(c->fmem, htonl(t3[q])))
					c->fn_found++;
			}
		}
		if (c->fn_found) {
			fail("%s: %llu of %llu addresses of listed prefixes are "
			     "negative in bloomgate (false negatives)", c->name,
			     (unsigned long long)c->fn_found,
			     (unsigned long long)c->fn_checked);
			c->mismatches++;
		}
	}
	bg_list_free(&l);
}

/* Expected counts along the LCG sequence, with the datapath's lookup code. */
static void cset_simulate(struct cset *c)
{
	uint64_t e[CE__COUNT] = { 0 }, i, len;
	const struct bg_filter_header *h = c->fmem;
	uint32_t a = PKT_DADDR0;

	len = O.repeat > O.fpr_samples ? O.repeat : O.fpr_samples;
	for (i = 0; i < len; i++) {
		__u32 probes = 0;
		int listed, pos;

		if (i == O.repeat)
			memcpy(c->ex_rep, e, sizeof(e));
		if (i == O.fpr_samples)
			memcpy(c->ex_fpr, e, sizeof(e));
		listed = bm_test(c->bitmap, a);
		pos = bg_listed4(c->fmem, h, htonl(a), &probes);
		e[CE_LISTED] += (uint64_t)listed;
		e[CE_BG_POS] += (uint64_t)pos;
		e[CE_BG_PROBES] += probes;
		e[CE_BG_FN] += (uint64_t)(listed && !pos);
		a = a * LCG_MUL + LCG_ADD;
	}
	if (len == O.repeat)
		memcpy(c->ex_rep, e, sizeof(e));
	if (len == O.fpr_samples)
		memcpy(c->ex_fpr, e, sizeof(e));
	if (e[CE_BG_FN]) {
		fail("%s: %llu listed destinations negative in bloomgate",
		     c->name, (unsigned long long)e[CE_BG_FN]);
		c->mismatches++;
	}

	/* Userspace FPR: random non-listed addresses. */
	{
		uint64_t rs = O.seed ^ 0xc1d4ULL ^ c->fseed;

		c->us_samples = c->us_pos = 0;
		while (c->us_samples < O.fpr_samples) {
			uint32_t x = (uint32_t)splitmix64(&rs);

			if (bm_test(c->bitmap, x))
				continue;
			c->us_samples++;
			c->us_pos += (uint64_t)bg_filter_test4(c->fmem, htonl(x));
		}
	}
}

static void cset_read(struct cset *c, enum cvariant v, struct run *r)
{
	if (v == C_BLOOMGATE) {
		struct bg_counters k;

		if (bg_counters_read(bpf_map__fd(c->bg->maps.BG_MAP_COUNTERS), &k))
			die("bg_counters_read: %s", strerror(errno));
		r->pos = k.cnt[BG_CNT_POSITIVES];
		r->probes = k.cnt[BG_CNT_PROBES];
		r->packets = k.cnt[BG_CNT_PACKETS];
	} else {
		r->pos = c->bn->bss->bench_pos[v == C_LPM ? BP_LPM : BP_PASS];
		r->probes = r->packets = 0;
	}
}

static void cset_run(struct cset *c, enum cvariant v, uint32_t repeat,
		     struct run *r)
{
	struct run before;

	cset_read(c, v, &before);
	prog_run(c->prog_fd[v], CV_NAME[v], repeat, r);
	cset_read(c, v, r);
	r->pos -= before.pos;
	r->probes -= before.probes;
	r->packets -= before.packets;
}

static void cset_check(struct cset *c, enum cvariant v, uint32_t repeat,
		       const struct run *r, const uint64_t *ex, const char *what)
{
	uint32_t want = lcg_pow(PKT_DADDR0, repeat);
	uint64_t e = v == C_PASS ? 0 : v == C_LPM ? ex[CE_LISTED] : ex[CE_BG_POS];

	if (r->daddr != want) {
		fail("%s %s %s: destination after %u repeats is %08x, the LCG "
		     "gives %08x", CV_NAME[v], c->name, what, repeat, r->daddr,
		     want);
		c->mismatches++;
	}
	if (r->pos != e) {
		fail("%s %s %s: %llu positives, userspace expects %llu", CV_NAME[v],
		     c->name, what, (unsigned long long)r->pos,
		     (unsigned long long)e);
		c->mismatches++;
	}
	if (v != C_BLOOMGATE)
		return;
	if (r->pos < ex[CE_LISTED]) {
		fail("%s %s %s: %llu positives < %llu listed (false negatives)",
		     CV_NAME[v], c->name, what, (unsigned long long)r->pos,
		     (unsigned long long)ex[CE_LISTED]);
		c->mismatches++;
	}
	if (r->packets != repeat || r->probes != ex[CE_BG_PROBES]) {
		fail("%s %s %s: packets +%llu, probes +%llu; expected +%u, +%llu",
		     CV_NAME[v], c->name, what, (unsigned long long)r->packets,
		     (unsigned long long)r->probes, repeat,
		     (unsigned long long)ex[CE_BG_PROBES]);
		c->mismatches++;
	}
}

/*
 * Upper bound for the datapath FPR of non-listed destinations: the live
 * filter's per-address rate plus 5 standard deviations. Two sources of
 * spread: the sample (binomial over the non-listed destinations), and the
 * prefixes: a probe at length L asks about the destination's /L, and only
 * 2^L of those exist, so the share of /L prefixes that happen to be false
 * positives varies by sqrt(p (1 - p) / 2^L) (about 20 % of p at /17).
 */
static double cset_fpr_bound(const struct cset *c, uint64_t nonlisted)
{
	double p = c->live_probe, pa = c->live_addr, var;
	int i;

	var = nonlisted ? pa * (1.0 - pa) / (double)nonlisted : 0.0;
	for (i = 0; i < c->p.n4; i++)
		var += p * (1.0 - p) / ldexp(1.0, c->p.len4[i]);
	return pa + 5.0 * sqrt(var);
}

static void cset_verify(struct cset *c)
{
	uint64_t listed = c->ex_fpr[CE_LISTED], nl = O.fpr_samples - listed;
	double rate;
	int v;

	for (v = 0; v < C__COUNT; v++) {
		cset_run(c, (enum cvariant)v, O.fpr_samples, &c->verify[v]);
		cset_check(c, (enum cvariant)v, O.fpr_samples, &c->verify[v],
			   c->ex_fpr, "verification run");
	}
	c->fpr_bound = cset_fpr_bound(c, nl);
	rate = nl ? (double)(c->verify[C_BLOOMGATE].pos - listed) / (double)nl : 0;
	if (rate > c->fpr_bound) {
		fail("%s: datapath FPR %.3e of non-listed destinations above the "
		     "bound %.3e (live filter %.3e, plan %.3e per address)",
		     c->name, rate, c->fpr_bound, c->live_addr,
		     c->p.predicted_addr);
		c->mismatches++;
	}
}

static void cset_prepare(void)
{
	char path[] = "/tmp/bloomgate-bench-cidr-XXXXXX";
	struct cset *c;
	int fd;

	ncs = 0;
	if (O.firehol && O.firehol[0]) {
		if (access(O.firehol, R_OK)) {
			firehol_missing = 1;
			progress("FireHOL list %s: %s; skipped", O.firehol,
				 strerror(errno));
		} else {
			c = &CS[ncs++];
			c->name = "FireHOL level 1";
			c->tag = "FireHOL";
			snprintf(c->source, sizeof(c->source), "`%s`", O.firehol);
			c->fseed = O.seed * 0x9e3779b97f4a7c15ULL ^ 0xf1e401ULL;
			progress("%s: parse, plan, build, publish; LPM trie", c->name);
			cset_setup(c, O.firehol);
		}
	}
	if (O.cidr_n) {
		c = &CS[ncs++];
		c->name = "generated mix";
		c->tag = "mix";
		c->generated = O.cidr_n;
		snprintf(c->source, sizeof(c->source),
			 "%llu prefixes, lengths as in the mix table, uniform "
			 "positions, seed 0x%llx",
			 (unsigned long long)O.cidr_n,
			 (unsigned long long)(O.seed ^ MIX_SEED_XOR));
		c->fseed = O.seed * 0x9e3779b97f4a7c15ULL ^ 0x313131ULL;
		fd = mkstemp(path);
		if (fd < 0)
			die("mkstemp: %s", strerror(errno));
		close(fd);
		progress("%s: writing %s prefixes", c->name, human_n(O.cidr_n));
		write_mix(path, O.cidr_n, O.seed ^ MIX_SEED_XOR);
		progress("%s: parse, plan, build, publish; LPM trie", c->name);
		cset_setup(c, path);
		unlink(path);
	}
	for (c = CS; c < CS + ncs; c++) {
		int v;

		progress("%s: expected counts over the LCG keys, userspace FPR",
			 c->name);
		cset_simulate(c);
		for (v = 0; v < C__COUNT; v++) {
			c->timed[v] = calloc((size_t)O.rounds, sizeof(struct run));
			if (!c->timed[v])
				die("out of memory");
		}
	}
}

/* ---- CIDR output -------------------------------------------------------- */

static const char *pct(double x)
{
	static char buf[8][32];
	static int i;
	char *b = buf[i++ & 7];

	snprintf(b, 32, "%.2f%%", 100.0 * x);
	return b;
}

static void lens_str(const struct bg_filter_params *p, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = 0;
	if (p->short4)
		off += (size_t)snprintf(buf, len, "/16 bitmap (/0-/16)");
	for (i = 0; i < p->n4 && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s/%u",
					off ? (i ? " " : "; Bloom at ") : "Bloom at ",
					p->len4[i]);
	if (!off)
		snprintf(buf, len, "none");
}

static void print_cidr(void)
{
	double med_ns[2][C__COUNT], med_cpu[2][C__COUNT];
	int ci, v, r, l;

	printf("### CIDR lists: bloomgate vs the kernel's LPM trie\n\n");
	if (firehol_missing)
		printf("The FireHOL level 1 list was not found at `%s`: that part "
		       "is skipped.\n\n", O.firehol);
	if (!ncs) {
		printf("No CIDR list benchmarked (see --firehol, --cidr-n).\n\n");
		return;
	}
	printf("Each list is loaded into bloomgate as `bloomgate load` does it "
	       "(`bg_list_parse_file`, `bg_list_finish`, `bg_filter_plan` at "
	       "target %g per address, `bg_filter_create`, `bg_filter_publish`; "
	       "fixed filter seed) and into a `BPF_MAP_TYPE_LPM_TRIE` "
	       "(`BPF_F_NO_PREALLOC`, key {u32 prefixlen; u32 addr}, 4-byte "
	       "value) holding the same prefixes after the overlap reduction; "
	       "variant (i) looks the destination up as a /32 key. Destinations "
	       "walk the same LCG as above, so they are random addresses: the "
	       "share that is listed is the share of the IPv4 space the list "
	       "covers.\n\n", O.target);

	/* lists and plans */
	printf("#### Lists and plans\n\n|  |");
	for (ci = 0; ci < ncs; ci++)
		printf(" %s |", CS[ci].name);
	printf("\n|---|");
	for (ci = 0; ci < ncs; ci++)
		printf("---|");
	printf("\n| source |");
	for (ci = 0; ci < ncs; ci++)
		printf(" %s |", CS[ci].source);
	printf("\n| entries accepted (lines read) |");
	for (ci = 0; ci < ncs; ci++)
		printf(" %zu (%zu lines, %zu rejected) |", CS[ci].accepted,
		       CS[ci].lines, CS[ci].rejected);
	printf("\n| removed by `bg_list_finish`: duplicates, inside a shorter prefix |");
	for (ci = 0; ci < ncs; ci++)
		printf(" %zu, %zu |", CS[ci].duplicates, CS[ci].covered);
	printf("\n| prefixes kept = listed entries |");
	for (ci = 0; ci < ncs; ci++)
		printf(" %zu IPv4%s |", CS[ci].n4, CS[ci].n6 ? " (+ IPv6)" : "");
	printf("\n| IPv4 space covered |");
	for (ci = 0; ci < ncs; ci++)
		printf(" %s (%llu addresses) |",
		       pct((double)CS[ci].space / 4294967296.0),
		       (unsigned long long)CS[ci].space);
	printf("\n| lookups per address (plan) |");
	for (ci = 0; ci < ncs; ci++) {
		char b[128];

		lens_str(&CS[ci].p, b, sizeof(b));
		printf(" %s |", b);
	}
	printf("\n| prefixes in the /16 bitmap; in the Bloom part |");
	for (ci = 0; ci < ncs; ci++)
		printf(" %llu; %llu |",
		       (unsigned long long)CS[ci].p.short4_prefixes,
		       (unsigned long long)(CS[ci].p.prefixes4 -
					    CS[ci].p.short4_prefixes));
	printf("\n| Bloom keys after expansion (keys / Bloom prefixes; keys / all kept) |");
	for (ci = 0; ci < ncs; ci++) {
		const struct bg_filter_params *p = &CS[ci].p;
		uint64_t bp = p->prefixes4 - p->short4_prefixes;

		printf(" %llu (x%.3f; x%.3f) |", (unsigned long long)p->keys4,
		       bp ? (double)p->keys4 / (double)bp : 0.0,
		       (double)p->keys4 / (double)CS[ci].n4);
	}
	printf("\n| Bloom part |");
	for (ci = 0; ci < ncs; ci++)
		printf(" %u blocks, k=%u, %.2f bits/key |", CS[ci].p.nblocks,
		       CS[ci].p.k, CS[ci].p.bits_per_entry);
	printf("\n| predicted FPR per Bloom probe; per address |");
	for (ci = 0; ci < ncs; ci++)
		printf(" %.3e; %.3e |", CS[ci].p.predicted,
		       CS[ci].p.predicted_addr);
	printf("\n| probes per address, worst case (bitmap + n4) |");
	for (ci = 0; ci < ncs; ci++)
		printf(" %d |", (CS[ci].p.short4 ? 1 : 0) + CS[ci].p.n4);
	printf("\n| filter map (header, bitmap, blocks) |");
	for (ci = 0; ci < ncs; ci++)
		printf(" %u elements, %s |", CS[ci].p.nelems,
		       human_bytes((long long)CS[ci].p.bytes));
	printf("\n\n");

	/* per length */
	printf("Per prefix length: entries accepted, kept after the reduction, "
	       "where the plan puts them (the bitmap, or the Bloom length they "
	       "are expanded to) and the Bloom keys they become (kept x "
	       "2^(target - length)).%s\n\n",
	       CS[ncs - 1].generated ? " For the generated list, \"mix share\" "
				      "is the share of the generated prefixes "
				      "drawn at that length." : "");
	printf("| length |");
	for (ci = 0; ci < ncs; ci++)
		printf("%s %s accepted | %s kept | %s probed as | %s Bloom keys |",
		       CS[ci].generated ? " mix share |" : "", CS[ci].tag,
		       CS[ci].tag, CS[ci].tag, CS[ci].tag);
	printf("\n|---:|");
	for (ci = 0; ci < ncs; ci++)
		printf("%s---:|---:|---|---:|", CS[ci].generated ? "---:|" : "");
	printf("\n");
	for (l = 0; l <= 32; l++) {
		int any = 0;

		for (ci = 0; ci < ncs; ci++)
			any |= CS[ci].read_len[l] || CS[ci].kept_len[l];
		if (!any)
			continue;
		printf("| /%d |", l);
		for (ci = 0; ci < ncs; ci++) {
			struct cset *c = &CS[ci];
			int t = plan_target(&c->p, l);

			if (c->generated) {
				size_t m;
				int pm = 0;

				for (m = 0; m < sizeof(MIX) / sizeof(MIX[0]); m++)
					if (MIX[m].len == l)
						pm = MIX[m].permille;
				if (pm)
					printf(" %.1f%% |", pm / 10.0);
				else
					printf(" - |");
			}
			if (!c->read_len[l] && !c->kept_len[l])
				printf(" | | | |");
			else if (!t)
				printf(" %llu | %llu | bitmap | - |",
				       (unsigned long long)c->read_len[l],
				       (unsigned long long)c->kept_len[l]);
			else
				printf(" %llu | %llu | /%d | %llu |",
				       (unsigned long long)c->read_len[l],
				       (unsigned long long)c->kept_len[l], t,
				       (unsigned long long)(c->kept_len[l]
							    << (t - l)));
		}
		printf("\n");
	}
	printf("| all |");
	for (ci = 0; ci < ncs; ci++) {
		uint64_t rd = 0;

		for (l = 0; l <= 32; l++)
			rd += CS[ci].read_len[l];
		printf("%s %llu | %zu | | %llu |", CS[ci].generated ? " 100% |" : "",
		       (unsigned long long)rd, CS[ci].n4,
		       (unsigned long long)CS[ci].p.keys4);
	}
	printf("\n\n");

	/* timing */
	for (ci = 0; ci < ncs; ci++)
		for (v = 0; v < C__COUNT; v++) {
			double ns[256], cn[256];

			for (r = 0; r < O.rounds && r < 256; r++) {
				ns[r] = CS[ci].timed[v][r].ns;
				cn[r] = CS[ci].timed[v][r].cpu_ns;
			}
			med_ns[ci][v] = median(ns, r);
			med_cpu[ci][v] = median(cn, r);
		}
	printf("#### Nanoseconds per packet\n\n");
	printf("Median over %d rounds (interleaved with the runs above, order "
	       "rotated) of the kernel's `duration` for %u packets per run; x = "
	       "ratio to (a), +ns = overhead above (a).\n\n",
	       O.rounds, O.repeat);
	printf("| variant |");
	for (ci = 0; ci < ncs; ci++)
		printf(" %s ns | x | +ns |", CS[ci].name);
	printf("\n|---|");
	for (ci = 0; ci < ncs; ci++)
		printf("---:|---:|---:|");
	printf("\n");
	for (v = 0; v < C__COUNT; v++) {
		printf("| %s |", CV_NAME[v]);
		for (ci = 0; ci < ncs; ci++) {
			double b = med_ns[ci][C_PASS];

			printf(" %.0f | %.2f | %+.0f |", med_ns[ci][v],
			       med_ns[ci][v] / b, med_ns[ci][v] - b);
		}
		printf("\n");
	}
	printf("\nSame runs, CPU time of the calling thread per packet, median "
	       "and min; positives per run (every run walks the same %u "
	       "destinations; (b) from bloomgate's `bg_stats`), the listed ones "
	       "among them (exact), and bloomgate's lookups per packet "
	       "(`bg_stats` probes / packets: the bitmap read and each Bloom "
	       "probe count one).\n\n",
	       O.repeat);
	printf("| variant | list | cpu ns median | cpu ns min | x (cpu) | "
	       "positives / packets per run | listed | probes per packet |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
	for (ci = 0; ci < ncs; ci++) {
		struct cset *c = &CS[ci];

		for (v = 0; v < C__COUNT; v++) {
			double cn[256];
			const struct run *t0 = &c->timed[v][0];
			char pr[32] = "-";

			for (r = 0; r < O.rounds && r < 256; r++)
				cn[r] = c->timed[v][r].cpu_ns;
			if (v == C_BLOOMGATE)
				snprintf(pr, sizeof(pr), "%.4f",
					 (double)t0->probes / (double)t0->packets);
			printf("| %s | %s | %.1f | %.1f | %.2f | %llu / %u (%s) | "
			       "%llu | %s |\n",
			       CV_NAME[v], c->name, med_cpu[ci][v], minimum(cn, r),
			       med_cpu[ci][v] / med_cpu[ci][C_PASS],
			       (unsigned long long)t0->pos, O.repeat,
			       pct((double)t0->pos / O.repeat),
			       (unsigned long long)c->ex_rep[CE_LISTED], pr);
		}
	}
	printf("\n");

	/* positives, false positives, probes */
	printf("#### Positives, false positives and probes\n\n");
	printf("One verification run of %u LCG destinations per program. The "
	       "LPM trie is exact: its positives must equal the listed "
	       "destinations (from a 2^32-bit bitmap of the kept prefixes). "
	       "bloomgate may only add to them (no false negatives); its excess "
	       "over the non-listed destinations is its false-positive rate. "
	       "Predicted per address: by the plan (`p.predicted_addr`, the "
	       "model's expectation over builds), and from the live filter's "
	       "own bits (per probe, the mean over blocks of (bits set / "
	       "512)^k; per address, 1 - (1 - that)^n4). The datapath rate must "
	       "stay below the latter plus 5 standard deviations (sampling, and "
	       "the few distinct prefixes at short probed lengths): the check "
	       "bound. Userspace: %u random non-listed addresses through "
	       "`bg_filter_test4` on the live filter. Probes per packet: "
	       "`bg_stats` probes / packets of the same run (worst case: "
	       "bitmap + n4).\n\n",
	       O.fpr_samples, O.fpr_samples);
	printf("| list | listed (positive fraction) | LPM trie positives | "
	       "bloomgate positives | false positives | datapath FPR | "
	       "userspace FPR | predicted: plan | predicted: live filter | "
	       "check bound | probes per packet (worst case) |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (ci = 0; ci < ncs; ci++) {
		struct cset *c = &CS[ci];
		uint64_t listed = c->ex_fpr[CE_LISTED];
		uint64_t fp = c->verify[C_BLOOMGATE].pos - listed;
		double nl = (double)(O.fpr_samples - listed);

		printf("| %s | %llu (%s) | %llu | %llu | %llu | %.3e | %.3e | "
		       "%.3e | %.3e | %.3e | %.4f (%d) |\n",
		       c->name, (unsigned long long)listed,
		       pct((double)listed / O.fpr_samples),
		       (unsigned long long)c->verify[C_LPM].pos,
		       (unsigned long long)c->verify[C_BLOOMGATE].pos,
		       (unsigned long long)fp, (double)fp / nl,
		       (double)c->us_pos / (double)c->us_samples,
		       c->p.predicted_addr, c->live_addr, c->fpr_bound,
		       (double)c->verify[C_BLOOMGATE].probes /
			       (double)c->verify[C_BLOOMGATE].packets,
		       (c->p.short4 ? 1 : 0) + c->p.n4);
	}
	printf("\n");

	/* memory */
	printf("#### Memory\n\n");
	printf("Bytes per listed entry (prefixes kept after the reduction). "
	       "`memlock` is the kernel's figure from /proc/self/fdinfo. For the "
	       "LPM trie it counts each prefix node only: not the trie's "
	       "intermediate nodes (n - 1 of them for n prefixes none of which "
	       "contains another, as after the reduction), nor the "
	       "allocator's rounding, so the growth of "
	       "the kernel's slab memory while filling the trie "
	       "(/proc/meminfo `Slab`, system-wide, so approximate) is shown "
	       "beside it. bloomgate's map is one vmalloc'ed array: its "
	       "memlock is what it uses.\n\n");
	printf("| list | entries | bloomgate memlock | B/entry | LPM trie memlock | "
	       "B/entry | LPM trie slab growth | B/entry |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (ci = 0; ci < ncs; ci++) {
		struct cset *c = &CS[ci];
		double n = (double)c->n4;

		char sb[32] = "?";

		if (c->slab_lpm >= 0)
			snprintf(sb, sizeof(sb), "%.1f", (double)c->slab_lpm / n);
		printf("| %s | %zu | %s | %.2f | %s | %.1f | %s | %s |\n", c->name,
		       c->n4, human_bytes(c->memlock_bg),
		       (double)c->memlock_bg / n, human_bytes(c->memlock_lpm),
		       (double)c->memlock_lpm / n, human_bytes(c->slab_lpm), sb);
	}
	printf("\n");

	/* build */
	printf("#### Build\n\n");
	printf("bloomgate: the steps of `bloomgate load` (file parse, "
	       "`bg_list_finish`: sort, de-duplicate, drop covered prefixes; "
	       "plan; build into a new map; swap). LPM trie: inserting the kept "
	       "prefixes.\n\n");
	printf("| list | parse | finish | plan | create | publish | load total | "
	       "LPM trie fill |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (ci = 0; ci < ncs; ci++) {
		struct cset *c = &CS[ci];

		printf("| %s | %.1f ms | %.1f ms | %.2f ms | %.1f ms | %.1f ms | "
		       "%.1f ms | %.1f ms (%s, %.0f ns/prefix) |\n",
		       c->name, c->t_parse * 1e3, c->t_finish * 1e3,
		       c->t_plan * 1e3, c->t_create * 1e3, c->t_publish * 1e3,
		       (c->t_parse + c->t_finish + c->t_plan + c->t_create +
			c->t_publish) * 1e3,
		       c->t_lpm * 1e3, c->lpm_how,
		       c->t_lpm * 1e9 / (double)c->n4);
	}
	printf("\n");
}

static void print_cidr_checks(void)
{
	int ci;

	for (ci = 0; ci < ncs; ci++) {
		struct cset *c = &CS[ci];

		printf("- %s: %d verification runs of %u packets and %d timed runs "
		       "of %u: destination after each run = LCG^repeat(start); "
		       "LPM trie positives = listed destinations; bloomgate "
		       "positives and `probes` = userspace `bg_listed4` on the "
		       "same keys, `packets` = repeat, positives >= listed; "
		       "datapath FPR within the bound; first, last and one random "
		       "address of each of the %zu kept prefixes positive in "
		       "bloomgate (%llu lookups): %s.\n",
		       c->name, C__COUNT, O.fpr_samples, C__COUNT * O.rounds,
		       O.repeat, c->n4, (unsigned long long)c->fn_checked,
		       c->mismatches ? "**MISMATCH** (see stderr)" : "all held");
	}
}

/* ---- DNS queries (issue 4) ----------------------------------------------- */

/*
 * Nanoseconds per DNS query through the real programs, against the
 * address-only path, with O.dns_names listed domains (and O.dns_addrs listed
 * IPv4 addresses) in one filter.
 *
 * The filter: a generated Adblock-style list (exact names, "||name^" name
 * and subdomains, "||*.name^" subdomains only, and "||zip^") written as a
 * file and loaded as `bloomgate load` does: bg_names_parse_file,
 * bg_names_finish, bg_filter_plan (with the addresses), bg_filter_create,
 * bg_filter_publish into a bloomgate program loaded from
 * build/bloomgate.skel.h, whose bg_progs holds its own bloomgate_dns.
 *
 * Every run goes through bench_dns (bench/bench.bpf.c): it restores the
 * frame's first 64 bytes, writes a new destination address and new name
 * bytes from a 64-bit LCG, and tail-calls the program measured. That step
 * is the same in every variant; its own cost, (s) - (n), is subtracted in
 * "net ns". Userspace repeats the LCG and the datapath's lookups
 * (bloomgate/lookup.h and the builder's bg_name_hashes, on the live filter)
 * to know, for every run, the counters bloomgate must show (queries parsed,
 * name probes and positives, address probes and positives, verdicts) and
 * the last iteration's verdict.
 */
#define DNS_NLEN 5
static const int DNS_WIRE[DNS_NLEN] = { 10, 30, 60, 120, 255 };
#define DNS_VARY_MAX 8
#define DNS_RESTORE 64
#define DNS_LCG_MUL 6364136223846793005ULL
#define DNS_LCG_ADD 1442695040888963407ULL
#define DNS_X0 0x646e7362656e6368ULL /* "dnsbench" */
#define DNS_CAL_NS 5000000.0 /* calibration run: about 5 ms */

enum dseries {
	DS_SHORT, /* labels of at most 9 bytes: typical names */
	DS_LONG, /* labels of up to 63 bytes: the fewest labels */
	DS_WORST, /* 127 one-byte labels (255 bytes) */
	DS__COUNT,
};
static const int DS_LMAX[DS__COUNT] = { 9, 63, 1 };

enum dkind {
	DK_STEP, /* bench_dns alone (tail-calls bench_nop) */
	DK_NOP_DIRECT, /* bench_nop run directly: the test run's own cost */
	DK_XDP_DIRECT, /* bloomgate_xdp run directly, cfg_bench_vary=1 */
	DK_ADDR, /* the 30-byte query's frame to UDP port 9: address only */
	DK_QUERY, /* a query for a name that is not listed (mostly) */
	DK_LISTED, /* a query for a listed name (under ||zip^) */
};

enum dtarget { DT_NOP, DT_XDP, DT_DNS, DT_XDP_VARY, DT__COUNT };
static const char *const DT_NAME[DT__COUNT] = {
	"bench_nop", "bloomgate_xdp", "bloomgate_dns",
	"bloomgate_xdp (cfg_bench_vary=1)",
};

/* The counters a run is checked on. */
static const int DNS_CHECKED[] = {
	BG_CNT_PACKETS,	    BG_CNT_PROBES,	 BG_CNT_POSITIVES,
	BG_CNT_NEGATIVES,   BG_CNT_DNS_QUERIES,	 BG_CNT_DNS_PROBES,
	BG_CNT_DNS_POSITIVES, BG_CNT_DNS_NEGATIVES,
};
#define DNS_NCHECKED (sizeof(DNS_CHECKED) / sizeof(DNS_CHECKED[0]))

struct drun {
	uint32_t ns;
	double cpu_ns;
	uint32_t retval; /* verdict of the last iteration */
	uint64_t d[BG_CNT_SLOTS]; /* counter deltas */
	uint8_t out[PKT_MAX];
	uint32_t out_len;
};

struct dvar {
	char name[96];
	enum dkind kind;
	enum dtarget target;
	enum dseries series;
	int wire; /* QNAME wire bytes (0: not DNS) */
	int labels;
	struct pkt pkt;
	size_t qname; /* frame offset of the QNAME */
	uint16_t vary_off[DNS_VARY_MAX];
	int vary_n;
	uint32_t repeat;
	uint64_t ex[BG_CNT_SLOTS]; /* expected deltas for repeat */
	uint8_t ex_frame[PKT_MAX]; /* frame of the last iteration, before the
				      program ran */
	uint32_t ex_verdict; /* verdict of the last iteration */
	struct drun *timed; /* [rounds] */
	int mismatches;
};

static struct {
	struct bloomgate *bg, *bgv; /* bgv: cfg_bench_vary=1, same filter */
	struct bench *bn;
	int filters_fd, filter_fd, target_fd;
	int prog[DT__COUNT];
	const void *fmem;
	size_t flen;
	struct bg_filter_params p;
	uint64_t fseed;
	int seed_tries;
	int tail; /* bloomgate_xdp reaches bloomgate_dns */
	struct dvar v[64];
	int nv;
	/* the list */
	size_t lines, accepted, rejected, duplicates, kinds[4];
	size_t addrs;
	double t_write, t_parse, t_finish, t_plan, t_create, t_publish;
	long long memlock;
	uint64_t fn_checked, fn_found; /* every listed name probed */
	double t_section;
	int mismatches;
} D;

static inline uint64_t dns_step(uint64_t x)
{
	return x * DNS_LCG_MUL + DNS_LCG_ADD;
}

/* What bench_dns writes into the frame for state x. */
static void dns_apply(const struct dvar *v, uint8_t *frame, uint64_t x)
{
	uint64_t b = x >> 32;
	uint32_t a = htonl((uint32_t)(x >> 32));
	int i;

	memcpy(frame + v->pkt.l3 + offsetof(struct iphdr, daddr), &a, 4);
	for (i = 0; i < v->vary_n; i++) {
		frame[v->vary_off[i]] = (uint8_t)('a' + (b & 15));
		b >>= 4;
	}
}

/* Wire-form QNAME at q to a dotted name; its labels. */
static int wire_to_dotted(const uint8_t *q, char *out)
{
	int o = 0, n = 0;

	while (*q) {
		int l = *q++;

		if (n++)
			out[o++] = '.';
		memcpy(out + o, q, (size_t)l);
		o += l;
		q += l;
	}
	out[o] = 0;
	return n;
}

/*
 * bloomgate_dns's judgement of a name, in userspace on the live filter: the
 * whole name as an exact key, then each proper suffix of at most
 * BG_DNS_SUFFIX_MAX labels, shortest first, as a subdomains key, skipping
 * the depths (label counts) no SUBS key of the filter has (the header's
 * subs_depths); the first positive ends it. Returns 1 if listed; *probes
 * counts the probes made.
 */
static int dns_judge(const void *fmem, const char *dotted, uint32_t *probes)
{
	const struct bg_filter_header *h = fmem;
	__u64 suf[BG_DNS_LABELS_MAX + 1];
	int n, i;

	*probes = 0;
	if (bg_name_hashes(dotted, h->seed, suf, &n))
		die("bg_name_hashes refused '%s'", dotted);
	(*probes)++;
	if (bg_probe_hash(fmem, h, bg_name_key_hash(BG_KEY_NAME_EXACT, suf[0],
						    h->seed)))
		return 1;
	for (i = 1; i <= BG_DNS_SUFFIX_MAX && i < n; i++) {
		if (!bg_dns_depth_probed(h->subs_depths, (__u32)i))
			continue;
		(*probes)++;
		if (bg_probe_hash(fmem, h, bg_name_key_hash(BG_KEY_NAME_SUBS,
							    suf[n - i], h->seed)))
			return 1;
	}
	return 0;
}

static int dns_is_query53(const struct dvar *v)
{
	return v->kind == DK_QUERY || v->kind == DK_LISTED;
}

/*
 * Expected counter deltas over `repeat` iterations from DNS_X0, the frame
 * of the last iteration and its verdict, as the contract of issue 4 says:
 * bloomgate_xdp judges the address first (a positive is dropped,
 * cfg_action=DROP), then tail-calls bloomgate_dns for UDP to port 53, which
 * answers a listed name (cfg_dns_action=NXDOMAIN, XDP_TX) and passes the
 * rest; packets = passed + dropped + answered.
 */
static void dns_model(struct dvar *v, uint32_t repeat, uint64_t *ex,
		      uint8_t *last, uint32_t *verdict)
{
	const struct bg_filter_header *h = D.fmem;
	uint8_t frame[PKT_MAX];
	char dotted[300];
	uint64_t x = DNS_X0;
	uint32_t i;

	memset(ex, 0, BG_CNT_SLOTS * sizeof(*ex));
	memcpy(frame, v->pkt.buf, v->pkt.len);
	*verdict = XDP_PASS;
	if (v->kind == DK_XDP_DIRECT) { /* bg_bench_step's LCG, host order */
		uint32_t a, be;

		memcpy(&be, frame + v->pkt.l3 + offsetof(struct iphdr, daddr), 4);
		a = ntohl(be);
		for (i = 0; i < repeat; i++) {
			uint32_t probes = 0;

			ex[BG_CNT_PACKETS]++;
			*verdict = XDP_PASS;
			if (bg_listed4(D.fmem, h, htonl(a), &probes)) {
				ex[BG_CNT_POSITIVES]++;
				ex[BG_CNT_DROPPED]++;
				*verdict = XDP_DROP;
			} else {
				ex[BG_CNT_NEGATIVES]++;
				ex[BG_CNT_PASSED]++;
			}
			ex[BG_CNT_PROBES] += probes;
			a = a * LCG_MUL + LCG_ADD;
		}
		be = htonl(a);
		memcpy(frame + v->pkt.l3 + offsetof(struct iphdr, daddr), &be, 4);
		memcpy(last, frame, v->pkt.len);
		return;
	}
	if (v->kind == DK_NOP_DIRECT) {
		memcpy(last, frame, v->pkt.len);
		return;
	}
	for (i = 0; i < repeat; i++) {
		uint32_t probes = 0, daddr;
		int dns = 0;

		x = dns_step(x);
		dns_apply(v, frame, x);
		*verdict = XDP_PASS;
		if (v->target == DT_NOP)
			continue;
		if (v->target == DT_XDP) {
			memcpy(&daddr, frame + v->pkt.l3 + offsetof(struct iphdr, daddr), 4);
			ex[BG_CNT_PACKETS]++;
			if (bg_listed4(D.fmem, h, daddr, &probes)) {
				ex[BG_CNT_PROBES] += probes;
				ex[BG_CNT_POSITIVES]++;
				ex[BG_CNT_DROPPED]++;
				*verdict = XDP_DROP;
				continue; /* dropped by address */
			}
			ex[BG_CNT_PROBES] += probes;
			ex[BG_CNT_NEGATIVES]++;
			dns = D.tail && dns_is_query53(v);
		} else {
			dns = dns_is_query53(v);
		}
		if (!dns) {
			ex[BG_CNT_PASSED]++;
			continue;
		}
		wire_to_dotted(frame + v->qname, dotted);
		ex[BG_CNT_DNS_QUERIES]++;
		if (dns_judge(D.fmem, dotted, &probes)) {
			ex[BG_CNT_DNS_POSITIVES]++;
			ex[BG_CNT_ANSWERED]++;
			*verdict = XDP_TX;
		} else {
			ex[BG_CNT_DNS_NEGATIVES]++;
			ex[BG_CNT_PASSED]++;
		}
		ex[BG_CNT_DNS_PROBES] += probes;
	}
	memcpy(last, frame, v->pkt.len);
}

/* One run of the variant: bench_dns tail-calling its target. */
static void dns_run(struct dvar *v, uint32_t repeat, struct drun *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = v->pkt.buf,
		    .data_size_in = (__u32)v->pkt.len, .data_out = r->out,
		    .data_size_out = sizeof(r->out), .repeat = repeat);
	struct bg_counters c0, c1;
	struct bench__bss *b = D.bn->bss;
	int direct = v->kind == DK_NOP_DIRECT || v->kind == DK_XDP_DIRECT;
	int cfd = bpf_map__fd(v->target == DT_XDP_VARY ?
				      D.bgv->maps.BG_MAP_COUNTERS :
				      D.bg->maps.BG_MAP_COUNTERS);
	__u32 zero = 0;
	double t0, t1;
	int i, fd = D.prog[v->target];

	if (!direct && bpf_map_update_elem(D.target_fd, &zero, &fd, BPF_ANY))
		die("bd_target: %s", strerror(errno));
	b->bd_x = DNS_X0;
	memcpy(b->bd_tmpl, v->pkt.buf, DNS_RESTORE);
	b->bd_daddr_off = (__u32)(v->pkt.l3 + offsetof(struct iphdr, daddr));
	b->bd_vary_n = (__u32)v->vary_n;
	for (i = 0; i < DNS_VARY_MAX; i++)
		b->bd_vary_off[i] = i < v->vary_n ? v->vary_off[i] : 0;
	if (bg_counters_read(cfd, &c0))
		die("bg_counters_read: %s", strerror(errno));
	t0 = cpu_s();
	if (bpf_prog_test_run_opts(direct ? fd :
				   bpf_program__fd(D.bn->progs.bench_dns), &o))
		die("test run of %s: %s", v->name, strerror(errno));
	t1 = cpu_s();
	if (bg_counters_read(cfd, &c1))
		die("bg_counters_read: %s", strerror(errno));
	r->ns = o.duration;
	r->cpu_ns = (t1 - t0) * 1e9 / repeat;
	r->retval = o.retval;
	r->out_len = o.data_size_out;
	for (i = 0; i < BG_CNT_SLOTS; i++)
		r->d[i] = c1.cnt[i] - c0.cnt[i];
}

static const char *cnt_name(int i)
{
#define BG__NAME(name, str) str,
	static const char *const names[] = { BG_COUNTERS(BG__NAME) };
#undef BG__NAME
	return i < BG_CNT__COUNT ? names[i] : "?";
}

static void dns_check(struct dvar *v, uint32_t repeat, const struct drun *r,
		      const uint64_t *ex, const uint8_t *last, uint32_t verdict,
		      const char *what)
{
	size_t i, qend = v->qname + (size_t)v->wire;
	uint32_t a = 0;

	if (r->retval == XDP_ABORTED) {
		fail("DNS %s %s: XDP_ABORTED (bench_dns could not tail-call)",
		     v->name, what);
		v->mismatches++;
	}
	for (i = 0; i < DNS_NCHECKED + 3; i++) {
		/* the verdict counters: through bloomgate_xdp (the only path
		 * whose verdicts the contract fixes in every tree) */
		static const int VC[3] = { BG_CNT_PASSED, BG_CNT_DROPPED,
					   BG_CNT_ANSWERED };
		int c = i < DNS_NCHECKED ? DNS_CHECKED[i] : VC[i - DNS_NCHECKED];

		if (i >= DNS_NCHECKED && v->target != DT_XDP &&
		    v->target != DT_XDP_VARY)
			continue;
		if (r->d[c] != ex[c]) {
			fail("DNS %s %s: %s +%llu, userspace expects +%llu (%u "
			     "iterations)", v->name, what, cnt_name(c),
			     (unsigned long long)r->d[c],
			     (unsigned long long)ex[c], repeat);
			v->mismatches++;
		}
	}
	/* The last iteration's verdict: through bloomgate_xdp always;
	 * bloomgate_dns alone once it answers (the tail-call tree). */
	if ((v->target != DT_DNS || D.tail) && v->target != DT_NOP &&
	    r->retval != verdict) {
		fail("DNS %s %s: the last iteration returned %u, expected %u",
		     v->name, what, r->retval, verdict);
		v->mismatches++;
	}
	/* The last iteration's name and address (a destination, or a source
	 * after an answer swapped the addresses). */
	if (r->out_len != v->pkt.len) {
		fail("DNS %s %s: %u bytes out, %zu in", v->name, what, r->out_len,
		     v->pkt.len);
		v->mismatches++;
		return;
	}
	if (v->wire && memcmp(r->out + v->qname, last + v->qname, qend - v->qname)) {
		fail("DNS %s %s: the last name is not the LCG's %u-th", v->name,
		     what, repeat);
		v->mismatches++;
	}
	memcpy(&a, last + v->pkt.l3 + offsetof(struct iphdr, daddr), 4);
	if (memcmp(r->out + v->pkt.l3 + offsetof(struct iphdr, daddr), &a, 4) &&
	    memcmp(r->out + v->pkt.l3 + offsetof(struct iphdr, saddr), &a, 4)) {
		fail("DNS %s %s: the last address is not the LCG's %u-th",
		     v->name, what, repeat);
		v->mismatches++;
	}
}

/* The QNAME of a series/length in wire form; the frame offsets (relative
 * to the QNAME) of the varied bytes. Returns the labels. */
static int dns_qname(enum dseries s, int wire, const char *tld, uint8_t *q,
		     uint16_t *vary, int *nvary)
{
	int o = 0, n = 0, i, j, m, rem, base, extra, tl = (int)strlen(tld);
	static const char fill[] = "bloomgatexdpfilter";

	*nvary = 0;
	if (s == DS_WORST) { /* 127 one-byte labels, the last one the TLD */
		for (i = 0; i < 127; i++) {
			q[o++] = 1;
			q[o++] = (uint8_t)(i == 126 ? tld[0] : fill[i % 18]);
		}
		q[o++] = 0;
		/* the 8 labels before the last one */
		for (i = 0; i < DNS_VARY_MAX; i++)
			vary[(*nvary)++] = (uint16_t)(2 * (118 + i) + 1);
		return 127;
	}
	rem = wire - 1 - (1 + tl); /* the other labels, wire bytes */
	m = (rem + DS_LMAX[s]) / (DS_LMAX[s] + 1);
	base = rem / m;
	extra = rem % m;
	for (i = 0; i < m; i++) {
		int l = base + (i < extra) - 1;

		q[o++] = (uint8_t)l;
		for (j = 0; j < l; j++)
			q[o++] = (uint8_t)fill[(i * 5 + j) % 18];
		if (i == m - 1) /* the label before the TLD varies */
			for (j = 0; j < l && j < DNS_VARY_MAX; j++)
				vary[(*nvary)++] = (uint16_t)(o - l + j);
		n++;
	}
	q[o++] = (uint8_t)tl;
	memcpy(q + o, tld, (size_t)tl);
	o += tl;
	q[o++] = 0;
	if (o != wire)
		die("dns_qname: %d bytes for %d", o, wire);
	return n + 1;
}

/* A UDP packet from 192.0.2.10:40000 to 198.51.100.53:dport holding a DNS
 * query (RD, QDCOUNT 1, QTYPE A, QCLASS IN, no EDNS) for the QNAME. */
static void dns_packet(struct dvar *v, enum dseries s, int wire, const char *tld,
		       uint16_t dport)
{
	uint8_t q[256];
	size_t len;
	int i;
	struct pkt_spec ps = {
		.family = AF_INET,
		.src = "192.0.2.10",
		.dst = "198.51.100.53",
		.sport = 40000,
		.dport = dport,
	};

	v->series = s;
	v->wire = wire;
	v->labels = dns_qname(s, wire, tld, q, v->vary_off, &v->vary_n);
	len = 12 + (size_t)wire + 4;
	ps.payload = len;
	if (pkt_build(&v->pkt, &ps))
		die("pkt_build");
	{
		uint8_t *d = v->pkt.buf + v->pkt.l4 + 8;
		static const uint8_t hdr[12] = { 0x12, 0x34, 0x01, 0x00, 0, 1,
						 0,    0,    0,	   0,	 0, 0 };
		static const uint8_t tail[4] = { 0, 1, 0, 1 }; /* A, IN */

		memcpy(d, hdr, 12);
		memcpy(d + 12, q, (size_t)wire);
		memcpy(d + 12 + wire, tail, 4);
		v->qname = v->pkt.l4 + 8 + 12;
	}
	for (i = 0; i < v->vary_n; i++)
		v->vary_off[i] = (uint16_t)(v->vary_off[i] + v->qname);
}

static const char *const DS_NAME[DS__COUNT] = {
	"labels <= 9 bytes",
	"labels <= 63 bytes",
	"127 one-byte labels",
};

static struct dvar *dns_add(enum dkind k, enum dtarget t, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static struct dvar *dns_add(enum dkind k, enum dtarget t, const char *fmt, ...)
{
	struct dvar *v;
	va_list ap;

	if (D.nv >= (int)(sizeof(D.v) / sizeof(D.v[0])))
		die("too many DNS variants");
	v = &D.v[D.nv++];
	memset(v, 0, sizeof(*v));
	v->kind = k;
	v->target = t;
	va_start(ap, fmt);
	vsnprintf(v->name, sizeof(v->name), fmt, ap);
	va_end(ap);
	return v;
}

/* The frame of every non-DNS row: the 30-byte query (labels <= 9 bytes)
 * sent to UDP port 9, the same bytes varied: only the port differs. */
static void dns_plain_packet(struct dvar *v)
{
	dns_packet(v, DS_SHORT, 30, "com", 9);
}

static const char *const TLDS[] = { "com", "net", "org", "io", "info", "xyz",
				    "top", "de", "ru", "cn", "online", "site" };

/* Writes the generated list: n entries in Adblock syntax. */
static void dns_write_list(const char *path, uint64_t n, uint64_t seed)
{
	static const char al[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	uint64_t s = seed, i;
	FILE *f = fopen(path, "w");

	if (!f)
		die("%s: %s", path, strerror(errno));
	fprintf(f, "! bloomgate bench: %llu generated domain rules\n||zip^\n",
		(unsigned long long)n);
	for (i = 1; i < n; i++) {
		uint64_t r = splitmix64(&s);
		int kind = (int)(r % 100), labels, l, j, len;
		char name[256];
		size_t o = 0;

		r /= 100;
		labels = r % 100 < 50 ? 1 : r % 100 < 85 ? 2 : 3;
		r /= 100;
		for (l = 0; l < labels; l++) {
			uint64_t t = splitmix64(&s);

			len = 3 + (int)(t % 10);
			t /= 10;
			name[o++] = al[t % 26]; /* a letter first */
			t /= 26;
			for (j = 1; j < len; j++) {
				name[o++] = al[t % 36];
				t /= 36;
				if (!t)
					t = splitmix64(&s);
			}
			name[o++] = '.';
		}
		strcpy(name + o, TLDS[r % (sizeof(TLDS) / sizeof(TLDS[0]))]);
		if (kind < 55)
			fprintf(f, "%s\n", name); /* exact */
		else if (kind < 95)
			fprintf(f, "||%s^\n", name); /* name and subdomains */
		else
			fprintf(f, "||*.%s^\n", name); /* subdomains only */
	}
	if (fclose(f))
		die("writing %s: %s", path, strerror(errno));
}

static void dns_setup(void)
{
	char path[] = "/tmp/bloomgate-bench-dns-XXXXXX";
	struct bg_dom_opts dopt = { .format = BG_DOM_ADBLOCK };
	struct bg_names names;
	struct bg_list l;
	uint64_t *bm = NULL;
	uint32_t *addr = NULL;
	int fd, err, try;
	size_t i;
	double t;
	FILE *devnull = fopen("/dev/null", "w");

	/* bloomgate, loaded as for an attachment: bloomgate_dns in bg_progs */
	D.bg = bloomgate__open();
	if (!D.bg)
		die("bloomgate__open: %s", strerror(errno));
	D.bg->rodata->cfg_bench_vary = 0; /* bench_dns varies the packet */
	D.bg->rodata->cfg_action = BG_ACTION_DROP;
	D.bg->rodata->cfg_match = BG_MATCH_DST;
	err = bloomgate__load(D.bg);
	if (err)
		die("bloomgate__load: %s", strerror(-err));
	{
		__u32 k = BG_PROG_DNS;
		int pfd = bpf_program__fd(D.bg->progs.bloomgate_dns);

		if (bpf_map_update_elem(bpf_map__fd(D.bg->maps.BG_MAP_PROGS), &k,
					&pfd, BPF_ANY))
			die("bg_progs: %s", strerror(errno));
	}
	D.filters_fd = bpf_map__fd(D.bg->maps.BG_MAP_FILTERS);
	D.prog[DT_XDP] = bpf_program__fd(D.bg->progs.bloomgate_xdp);
	/* the address section's method, for comparison: the program steps
	 * its own destination */
	D.bgv = bloomgate__open();
	if (!D.bgv)
		die("bloomgate__open: %s", strerror(errno));
	D.bgv->rodata->cfg_bench_vary = 1;
	D.bgv->rodata->cfg_action = BG_ACTION_DROP;
	D.bgv->rodata->cfg_match = BG_MATCH_DST;
	err = bloomgate__load(D.bgv);
	if (err)
		die("bloomgate__load: %s", strerror(-err));
	D.prog[DT_XDP_VARY] = bpf_program__fd(D.bgv->progs.bloomgate_xdp);
	D.prog[DT_DNS] = bpf_program__fd(D.bg->progs.bloomgate_dns);

	D.bn = bench__open();
	if (!D.bn)
		die("bench__open: %s", strerror(errno));
	err = bench__load(D.bn);
	if (err)
		die("bench__load: %s", strerror(-err));
	D.target_fd = bpf_map__fd(D.bn->maps.bd_target);
	D.prog[DT_NOP] = bpf_program__fd(D.bn->progs.bench_nop);

	/* the list, as `bloomgate load` reads it */
	fd = mkstemp(path);
	if (fd < 0)
		die("mkstemp: %s", strerror(errno));
	close(fd);
	progress("DNS: writing %s domain rules", human_n(O.dns_names));
	t = now_s();
	dns_write_list(path, O.dns_names, O.seed ^ 0xd05ULL);
	D.t_write = now_s() - t;
	progress("DNS: parse, plan, build, publish");
	bg_names_init(&names);
	dopt.report = devnull;
	t = now_s();
	err = bg_names_parse_file(&names, path, &dopt);
	D.t_parse = now_s() - t;
	unlink(path);
	if (err)
		die("bg_names_parse_file: %s", strerror(-err));
	D.lines = names.lines;
	D.accepted = names.accepted;
	D.rejected = names.rejected;
	t = now_s();
	bg_names_finish(&names);
	D.t_finish = now_s() - t;
	D.duplicates = names.duplicates;
	for (i = 0; i < names.n; i++)
		D.kinds[names.v[i].kind & 3]++;

	if (O.dns_addrs) {
		addr = gen_keys(O.dns_addrs, O.seed ^ 0xadd5ULL, &bm);
		list_from(&l, addr, O.dns_addrs);
		D.addrs = O.dns_addrs;
	} else {
		bg_list_init(&l);
	}
	l.names = &names;
	t = now_s();
	err = bg_filter_plan(&l, NULL, O.target, &D.p);
	D.t_plan = now_s() - t;
	if (err)
		die("bg_filter_plan (names): %s", strerror(-err));

	/* A fixed seed; the next one if ".com" (or ".c") as a subdomains key,
	 * which every non-listed query probes, were a false positive of it
	 * (the queries would then measure the listed path). */
	for (try = 0; try < 16; try++) {
		const struct bg_filter_header *h;
		__u64 suf[2];
		int n, pos;

		D.fseed = (O.seed * 0x9e3779b97f4a7c15ULL ^ 0xd0d0ULL) + (uint64_t)try;
		t = now_s();
		D.filter_fd = bg_filter_create(&D.p, D.fseed, &l, NULL);
		D.t_create = now_s() - t;
		if (D.filter_fd < 0)
			die("bg_filter_create (names): %s", strerror(-D.filter_fd));
		t = now_s();
		err = bg_filter_publish(D.filters_fd, D.filter_fd);
		D.t_publish = now_s() - t;
		if (err)
			die("bg_filter_publish: %s", strerror(-err));
		if (D.fmem)
			munmap((void *)D.fmem, D.flen);
		err = bg_filter_map_current(D.filters_fd, &D.fmem, &D.flen);
		if (err)
			die("bg_filter_map_current: %s", strerror(-err));
		h = D.fmem;
		if (h->seed != D.fseed || !(h->flags & BG_FILTER_F_NAMES))
			die("the live filter is not the one published");
		D.seed_tries = try + 1;
		bg_name_hashes("com", h->seed, suf, &n);
		pos = bg_probe_hash(D.fmem, h, bg_name_key_hash(BG_KEY_NAME_SUBS,
								suf[0], h->seed));
		bg_name_hashes("c", h->seed, suf, &n); /* the 127-label name's */
		pos |= bg_probe_hash(D.fmem, h, bg_name_key_hash(BG_KEY_NAME_SUBS,
								 suf[0], h->seed));
		if (!pos)
			break;
		close(D.filter_fd);
	}
	D.memlock = fd_memlock(D.filter_fd);
	if (bg_filter_publish(bpf_map__fd(D.bgv->maps.BG_MAP_FILTERS), D.filter_fd))
		die("bg_filter_publish: %s", strerror(errno));

	/* No false negatives: every listed name matches through the
	 * datapath's lookup (a subdomains-only entry through a child). */
	for (i = 0; i < names.n; i++) {
		const struct bg_name *e = &names.v[i];
		char child[300];
		uint32_t pr;

		if (e->allow)
			continue;
		if (e->kind == BG_NAME_SUBS)
			snprintf(child, sizeof(child), "x.%s", e->name);
		D.fn_checked++;
		if (!dns_judge(D.fmem, e->kind == BG_NAME_SUBS ? child : e->name,
			       &pr))
			D.fn_found++;
	}
	if (D.fn_found) {
		fail("DNS: %llu of %llu listed names negative (false negatives)",
		     (unsigned long long)D.fn_found,
		     (unsigned long long)D.fn_checked);
		D.mismatches++;
	}
	if (addr) {
		free(l.v4);
		free(addr);
		munmap(bm, 1ULL << 29);
	}
	bg_names_free(&names);
	if (devnull)
		fclose(devnull);
}

/* Does bloomgate_xdp tail-call bloomgate_dns for a query to port 53? */
static int dns_tail_available(struct dvar *q)
{
	struct drun *r = malloc(sizeof(*r));
	enum dtarget t = q->target;
	int ok;

	if (!r)
		die("out of memory");
	q->target = DT_XDP;
	dns_run(q, 64, r);
	q->target = t;
	ok = r->d[BG_CNT_DNS_QUERIES] > 0;
	free(r);
	return ok;
}

static void dns_variants(void)
{
	enum dtarget qt;
	struct dvar *v;
	int s, i;

	v = dns_add(DK_ADDR, DT_XDP,
		    "(a) address only: the 30-byte query's frame to UDP port 9");
	dns_plain_packet(v);
	v = dns_add(DK_STEP, DT_NOP, "(s) bench_dns step alone");
	dns_plain_packet(v);
	v = dns_add(DK_NOP_DIRECT, DT_NOP, "(n) bench_nop run directly");
	dns_plain_packet(v);
	v = dns_add(DK_XDP_DIRECT, DT_XDP_VARY,
		    "(b) address only, run directly, stepping its destination");
	dns_plain_packet(v);

	/* probe: does the real path reach bloomgate_dns yet? */
	v = dns_add(DK_QUERY, DT_XDP, "probe");
	dns_packet(v, DS_SHORT, 30, "com", BG_DNS_PORT);
	D.tail = O.dns_path == 1 ? 0 : dns_tail_available(v);
	if (O.dns_path == 2 && !D.tail)
		die("--dns-path tail: bloomgate_xdp does not reach bloomgate_dns");
	D.nv--;
	qt = D.tail ? DT_XDP : DT_DNS;

	for (s = 0; s < DS__COUNT; s++)
		for (i = 0; i < DNS_NLEN; i++) {
			if (s == DS_WORST && DNS_WIRE[i] != 255)
				continue;
			v = dns_add(DK_QUERY, qt, "(q) %s, not listed",
				    DS_NAME[s]);
			dns_packet(v, (enum dseries)s, DNS_WIRE[i], "com",
				   BG_DNS_PORT);
		}
	for (i = 0; i < DNS_NLEN; i++) {
		v = dns_add(DK_LISTED, qt, "(l) %s, listed (rule \\|\\|zip^)",
			    DS_NAME[DS_SHORT]);
		dns_packet(v, DS_SHORT, DNS_WIRE[i], "zip", BG_DNS_PORT);
	}
	if (D.tail)
		for (i = 0; i < DNS_NLEN; i++) {
			v = dns_add(DK_QUERY, DT_DNS,
				    "(d) %s, not listed, bloomgate_dns alone",
				    DS_NAME[DS_SHORT]);
			dns_packet(v, DS_SHORT, DNS_WIRE[i], "com", BG_DNS_PORT);
		}
}

static void dns_bench(void)
{
	struct drun *cal = malloc(sizeof(*cal));
	uint64_t ex[BG_CNT_SLOTS];
	static uint8_t last[PKT_MAX];
	double t0 = now_s();
	int i, r;

	if (!cal)
		die("out of memory");
	dns_setup();
	dns_variants();
	progress("DNS: %d variants; path %s", D.nv,
		 D.tail ? "bloomgate_xdp -> tail call -> bloomgate_dns" :
			  "bloomgate_dns directly (no tail call yet)");

	/* Calibration (checked like any run), then the repeat for about
	 * O.dns_run_ms per run, and the expected counters for it. */
	for (i = 0; i < D.nv; i++) {
		struct dvar *v = &D.v[i];
		uint32_t n = 2000, verdict;
		double rep;

		dns_run(v, n, cal);
		if (cal->ns > 1000) { /* slow: stay near DNS_CAL_NS */
			n = (uint32_t)(DNS_CAL_NS / cal->ns) + 1;
			dns_run(v, n, cal);
		}
		dns_model(v, n, ex, last, &verdict);
		dns_check(v, n, cal, ex, last, verdict, "calibration run");
		rep = O.dns_run_ms * 1e6 / (cal->ns ? cal->ns : 1);
		rep = rep < 1000 ? 1000 : rep > 4e6 ? 4e6 : rep;
		v->repeat = (uint32_t)(rep / 1000) * 1000;
		dns_model(v, v->repeat, v->ex, v->ex_frame, &v->ex_verdict);
		v->timed = calloc((size_t)O.dns_rounds, sizeof(struct drun));
		if (!v->timed)
			die("out of memory");
	}
	for (r = 0; r < O.dns_rounds; r++) {
		progress("DNS: timed round %d/%d", r + 1, O.dns_rounds);
		for (i = 0; i < D.nv; i++) {
			struct dvar *v = &D.v[(i + r) % D.nv];

			dns_run(v, v->repeat, &v->timed[r]);
			dns_check(v, v->repeat, &v->timed[r], v->ex, v->ex_frame,
				  v->ex_verdict, "timed run");
		}
	}
	for (i = 0; i < D.nv; i++)
		D.mismatches += D.v[i].mismatches;
	D.t_section = now_s() - t0;
	free(cal);
}

/* ---- DNS output ---------------------------------------------------------- */

static double dmed(const struct dvar *v)
{
	double ns[256];
	int r;

	for (r = 0; r < O.dns_rounds && r < 256; r++)
		ns[r] = v->timed[r].ns;
	return median(ns, r);
}

/* Interquartile range of the per-round ns (linear interpolation). */
static double diqr(const struct dvar *v)
{
	double t[256], q[2];
	int r, n = O.dns_rounds < 256 ? O.dns_rounds : 256, i;

	for (r = 0; r < n; r++)
		t[r] = v->timed[r].ns;
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	for (i = 0; i < 2; i++) {
		double pos = (n - 1) * (i ? 0.75 : 0.25);
		int lo = (int)pos;

		q[i] = lo + 1 < n ? t[lo] + (pos - lo) * (t[lo + 1] - t[lo]) : t[lo];
	}
	return q[1] - q[0];
}

static double dmed_cpu(const struct dvar *v)
{
	double ns[256];
	int r;

	for (r = 0; r < O.dns_rounds && r < 256; r++)
		ns[r] = v->timed[r].cpu_ns;
	return median(ns, r);
}

static int dvar_direct(const struct dvar *v)
{
	return v->kind == DK_NOP_DIRECT || v->kind == DK_XDP_DIRECT;
}

/* bench_dns's own cost: (s) - (n). */
static double dstep(void);

/* The median without the step: what the program costs run directly. */
static double dnet(const struct dvar *v)
{
	return dvar_direct(v) ? dmed(v) : dmed(v) - dstep();
}

static const struct dvar *dfind(enum dkind k, int t, int s, int wire)
{
	int i;

	for (i = 0; i < D.nv; i++) {
		const struct dvar *v = &D.v[i];

		if (v->kind == k && (t < 0 || (int)v->target == t) &&
		    (s < 0 || (int)v->series == s) && (wire < 0 || v->wire == wire))
			return v;
	}
	return NULL;
}

/* Least squares y = a + b1 x1 + ... (k <= 4 regressors, normal equations). */
static int lsq(int n, int k, double x[][4], const double *y, double *coef)
{
	double A[5][6] = { { 0 } };
	int i, j, c, m = k + 1;

	for (i = 0; i < n; i++) {
		double row[5] = { 1, 0, 0, 0, 0 };

		for (j = 0; j < k; j++)
			row[j + 1] = x[i][j];
		for (j = 0; j < m; j++) {
			for (c = 0; c < m; c++)
				A[j][c] += row[j] * row[c];
			A[j][m] += row[j] * y[i];
		}
	}
	for (c = 0; c < m; c++) { /* Gauss-Jordan with partial pivoting */
		int p = c;

		for (j = c + 1; j < m; j++)
			if (fabs(A[j][c]) > fabs(A[p][c]))
				p = j;
		if (fabs(A[p][c]) < 1e-12)
			return -1;
		for (j = 0; j <= m; j++) {
			double t = A[c][j];

			A[c][j] = A[p][j];
			A[p][j] = t;
		}
		for (j = 0; j < m; j++) {
			double f;

			if (j == c)
				continue;
			f = A[j][c] / A[c][c];
			for (i = c; i <= m; i++)
				A[j][i] -= f * A[c][i];
		}
	}
	for (c = 0; c < m; c++)
		coef[c] = A[c][m] / A[c][c];
	return 0;
}

static double dstep(void)
{
	return dmed(dfind(DK_STEP, -1, -1, -1)) -
	       dmed(dfind(DK_NOP_DIRECT, -1, -1, -1));
}

static double dprobes(const struct dvar *v)
{
	const struct drun *t = &v->timed[0];
	uint64_t q = t->d[BG_CNT_DNS_QUERIES];

	return q ? (double)t->d[BG_CNT_DNS_PROBES] / (double)q : 0.0;
}

static void print_dns(void)
{
	const struct dvar *a = dfind(DK_ADDR, DT_XDP, -1, -1);
	const struct dvar *st = dfind(DK_STEP, -1, -1, -1);
	const struct dvar *nd = dfind(DK_NOP_DIRECT, -1, -1, -1);
	const struct dvar *bd = dfind(DK_XDP_DIRECT, -1, -1, -1);
	double ma = dnet(a), step = dstep();
	char depths[48] = "";
	int i, s;

	/* the filter's SUBS depths, "1, 2, 3, 4" ("no") */
	for (i = 1; i <= BG_DNS_SUFFIX_MAX; i++)
		if (bg_dns_depth_probed(((const struct bg_filter_header *)D.fmem)->subs_depths,
					(__u32)i))
			snprintf(depths + strlen(depths), sizeof(depths) - strlen(depths),
				 "%s%d", depths[0] ? ", " : "", i);
	if (!depths[0])
		strcpy(depths, "no");

	printf("### DNS queries (issue 4)\n\n");
	printf("Time per query through bloomgate's real programs "
	       "(`build/bloomgate.skel.h`, `cfg_action=DROP`, `cfg_match=dst`, "
	       "default `cfg_dns_action` and `cfg_dns_ports` {53}; "
	       "`bloomgate_dns` in its `bg_progs` as `attach` puts it) against "
	       "the address-only path, one filter holding %s listed domains%s%s%s.\n\n",
	       human_n(O.dns_names), D.addrs ? " and " : "",
	       D.addrs ? human_n(D.addrs) : "",
	       D.addrs ? " listed IPv4 addresses (random, distinct), as one "
			 "`bloomgate load` of a domain list and an address list "
			 "builds it" : "");
	printf("**Path measured:** %s\n\n",
	       D.tail ? "`bloomgate_xdp`, which judges the destination address "
			"and tail-calls `bloomgate_dns` through `bg_progs` for "
			"UDP to port 53: the path of an attached interface. "
			"Rows (d) run `bloomgate_dns` alone on the same queries." :
			"`bloomgate_dns` run directly: `bloomgate_xdp` in this tree "
			"does not tail-call it yet (checked at start: a query "
			"through it moved no `dns_queries` counter), so the "
			"query rows do not include `bloomgate_xdp`'s own work "
			"(parse, address probe, counters: about row (a)'s net "
			"ns) nor the tail call.");

	/* the list */
	printf("**List.** Generated (fixed seed) and loaded as `bloomgate load` "
	       "does: an Adblock-style file of %llu rules (`name` exact, "
	       "`||name^` name and subdomains, `||*.name^` subdomains only, "
	       "plus `||zip^`), 1 to 3 labels of 3 to 12 letters and digits "
	       "under one of %zu TLDs (%zu lines read, %zu rejected); "
	       "`bg_names_parse_file` (%.2f s), "
	       "`bg_names_finish` (%.2f s; %zu duplicates), `bg_filter_plan` "
	       "(%.1f ms) at target %g per probe, `bg_filter_create` (%.2f s), "
	       "`bg_filter_publish` (%.1f ms). Entries: %zu exact, %zu name and "
	       "subdomains, %zu subdomains only; %llu name keys, %llu address "
	       "keys; subdomain rules at %s labels (`subs_depths` %#x: the "
	       "suffix depths a query probes); "
	       "%u blocks, k=%u, %.2f bits/key, predicted FPR per probe "
	       "%.2e; filter map %s (memlock). Every listed name matched "
	       "through the datapath's lookup in userspace (%llu checked, %llu "
	       "false negatives).%s\n\n",
	       (unsigned long long)O.dns_names,
	       sizeof(TLDS) / sizeof(TLDS[0]), D.lines, D.rejected, D.t_parse,
	       D.t_finish,
	       D.duplicates, D.t_plan * 1e3, O.target, D.t_create,
	       D.t_publish * 1e3, D.kinds[BG_NAME_EXACT], D.kinds[BG_NAME_TREE],
	       D.kinds[BG_NAME_SUBS], (unsigned long long)D.p.name_keys,
	       (unsigned long long)D.p.keys4, depths,
	       ((const struct bg_filter_header *)D.fmem)->subs_depths,
	       D.p.nblocks, D.p.k,
	       D.p.bits_per_entry, D.p.predicted, human_bytes(D.memlock),
	       (unsigned long long)D.fn_checked, (unsigned long long)D.fn_found,
	       D.seed_tries > 1 ? " (filter seed: the first one under which "
				  "`com` and `c` as subdomains keys are negative)" :
				  "");

	printf("**Queries.** IPv4, no VLAN, UDP from port 40000 to port 53, "
	       "RD set, QDCOUNT 1, QTYPE A, QCLASS IN, no EDNS. **Name length** "
	       "is the QNAME's wire length: length bytes, labels and the root "
	       "byte (`example.com` is 13 bytes; at most 255). Names are built "
	       "right to left: the TLD (`com`; `zip` in the listed rows), then "
	       "labels of at most 9 bytes (typical names), of up to 63 bytes "
	       "(the fewest labels a length allows), or 127 one-byte labels "
	       "(the most labels any name can have). Every iteration, "
	       "`bench_dns` (bench/bench.bpf.c) writes new bytes into the "
	       "label before the TLD (its first 8 bytes, letters a-p from a "
	       "64-bit LCG; the 8 labels before the last in the 127-label "
	       "name) and a new IPv4 destination, then tail-calls the program "
	       "measured: every suffix but the TLD is a new key each time, so "
	       "the Bloom probes land in random blocks as real traffic's do. "
	       "It also rewrites the first 64 bytes of the frame from the "
	       "query each time, so that an answer sent with `XDP_TX` (built "
	       "in place) does not become the next iteration's packet. Row "
	       "(s) is that step alone (tail-calling a program that returns "
	       "at once), row (n) that program run directly: the step costs "
	       "(s) - (n) = %.0f ns, subtracted in the column \"net ns\" (what "
	       "the program measured costs, as the other sections measure "
	       "it). Row (b) checks that: the address-only path run directly "
	       "as in the sections above (`cfg_bench_vary=1`, the program "
	       "steps its own destination) should match (a)'s net ns. "
	       "Probes per query: `dns_probes` / "
	       "`dns_queries` of the run: the exact name, then one suffix a "
	       "label, shortest first, at most %d labels, until a positive, "
	       "skipping the depths (label counts) at which the list has no "
	       "subdomain rule (the filter's `subs_depths`: %s here).\n\n",
	       step, BG_DNS_SUFFIX_MAX, depths);

	printf("#### Nanoseconds per query\n\n");
	printf("Median over %d rounds (variants interleaved, order rotated) of "
	       "the kernel's `duration` per iteration (ns) with the "
	       "interquartile range of the rounds (IQR), the same less the "
	       "step (net ns), and the calling thread's CPU time per iteration "
	       "(cpu ns, median, step included); repeat per run chosen for "
	       "about %.0f ms a run. x and +ns compare net ns with row (a), "
	       "the address-only path: the frame of the 30-byte query (labels "
	       "<= 9 bytes) sent to UDP port 9, not a DNS port, through "
	       "`bloomgate_xdp` with the same filter and the same step (rows "
	       "(s), (n), (b) use that frame too). Positives: `dns_positives` "
	       "/ `dns_queries` of one run.\n\n",
	       O.dns_rounds, O.dns_run_ms);
	printf("| variant | program | name length (wire bytes) | labels | "
	       "probes per query | ns | IQR | net ns | x (a) | +ns over (a) | "
	       "cpu ns | positives per run | repeat |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < D.nv; i++) {
		const struct dvar *v = &D.v[i];
		double m = dnet(v);
		char pos[64] = "-", pr[16] = "-", w[16] = "-", lb[16] = "-";

		if (dns_is_query53(v)) {
			snprintf(w, sizeof(w), "%d", v->wire);
			snprintf(lb, sizeof(lb), "%d", v->labels);
		}
		if (v->timed[0].d[BG_CNT_DNS_QUERIES]) {
			snprintf(pr, sizeof(pr), "%.2f", dprobes(v));
			snprintf(pos, sizeof(pos), "%llu / %llu",
				 (unsigned long long)v->timed[0].d[BG_CNT_DNS_POSITIVES],
				 (unsigned long long)v->timed[0].d[BG_CNT_DNS_QUERIES]);
		}
		if (v->kind == DK_STEP || v->kind == DK_NOP_DIRECT) {
			printf("| %s | %s | - | - | - | %.0f | %.0f | %.0f | - | - | "
			       "%.1f | - | %u |\n",
			       v->name,
			       v->kind == DK_STEP ? "bench_dns, bench_nop" :
						    DT_NAME[v->target],
			       dmed(v), diqr(v), m, dmed_cpu(v), v->repeat);
			continue;
		}
		printf("| %s | %s | %s | %s | %s | %.0f | %.0f | %.0f | %.2f | %+.0f "
		       "| %.1f | %s | %u |\n",
		       v->name, DT_NAME[v->target], w, lb, pr, dmed(v), diqr(v), m,
		       m / ma, m - ma, dmed_cpu(v), pos, v->repeat);
	}
	printf("\nThe listed rows' verdict (last iteration of a run): ");
	{
		const struct dvar *l = dfind(DK_LISTED, -1, DS_SHORT, 30);
		uint32_t rv = l ? l->timed[0].retval : 0;

		printf("%s; `answered` +%llu, `dropped` +%llu per run of %u.\n\n",
		       rv == XDP_TX ? "`XDP_TX` (answered in place)" :
		       rv == XDP_DROP ? "`XDP_DROP`" :
		       rv == XDP_PASS ? "`XDP_PASS`" : "other",
		       l ? (unsigned long long)l->timed[0].d[BG_CNT_ANSWERED] : 0ULL,
		       l ? (unsigned long long)l->timed[0].d[BG_CNT_DROPPED] : 0ULL,
		       l ? l->repeat : 0);
	}

	/* per byte, per label */
	printf("#### Cost per byte and per label\n\n");
	printf("From the medians above (kernel `duration`; thread CPU time in "
	       "parentheses). Each label is hashed as 8 words of 64 bits (its "
	       "length byte, its bytes and zero padding: bloomgate/dns.h) read "
	       "in place from the lowercased name (bpf/dns.h), so the cost "
	       "follows the number of labels and probes more than the "
	       "bytes.\n\n");
	printf("| measure | how | ns (cpu ns) |\n|---|---|---:|\n");
	for (s = 0; s < DS_WORST; s++) {
		double x[DNS_NLEN][4], y[DNS_NLEN], yc[DNS_NLEN], c[5], cc[5];
		int n = 0;

		for (i = 0; i < DNS_NLEN; i++) {
			const struct dvar *v = dfind(DK_QUERY, D.tail ? DT_XDP : DT_DNS,
						     s, DNS_WIRE[i]);

			if (!v)
				continue;
			x[n][0] = v->wire;
			y[n] = dmed(v);
			yc[n++] = dmed_cpu(v);
		}
		if (n >= 2 && !lsq(n, 1, x, y, c) && !lsq(n, 1, x, yc, cc))
			printf("| per name byte, %s | least-squares slope of ns "
			       "over the %d lengths (10-255), not listed; "
			       "intercept %.0f ns | %.2f (%.2f) |\n",
			       DS_NAME[s], n, c[0], c[1], cc[1]);
	}
	{
		/* bytes alone: the labels<=63 names of 10, 30 and 60 bytes all
		 * have 2 labels and 2 probes */
		double x[3][4], y[3], yc[3], c[5], cc[5];
		int n = 0;

		for (i = 0; i < 3; i++) {
			const struct dvar *v = dfind(DK_QUERY, D.tail ? DT_XDP : DT_DNS,
						     DS_LONG, DNS_WIRE[i]);

			if (v && v->labels == 2) {
				x[n][0] = v->wire;
				y[n] = dmed(v);
				yc[n++] = dmed_cpu(v);
			}
		}
		if (n == 3 && !lsq(n, 1, x, y, c) && !lsq(n, 1, x, yc, cc))
			printf("| per name byte, labels and probes fixed | slope "
			       "over the 2-label names of 10, 30 and 60 bytes "
			       "(labels <= 63) | %.3f (%.3f) |\n",
			       c[1], cc[1]);
	}
	{
		const struct dvar *w = dfind(DK_QUERY, D.tail ? DT_XDP : DT_DNS,
					     DS_WORST, 255);
		const struct dvar *t = dfind(DK_QUERY, D.tail ? DT_XDP : DT_DNS,
					     DS_SHORT, 255);

		if (w && t && w->labels != t->labels &&
		    fabs(dprobes(w) - dprobes(t)) < 0.05)
			printf("| per label, bytes and probes fixed | (127-label "
			       "row - %d-label row), both 255 bytes and %.0f "
			       "probes, / %d labels | %.2f (%.2f) |\n",
			       t->labels, dprobes(t), w->labels - t->labels,
			       (dmed(w) - dmed(t)) / (w->labels - t->labels),
			       (dmed_cpu(w) - dmed_cpu(t)) / (w->labels - t->labels));
	}
	{
		double x[16][4], y[16], yc[16], c[5], cc[5];
		int n = 0;

		for (i = 0; i < D.nv && n < 16; i++) {
			const struct dvar *v = &D.v[i];

			if (v->kind != DK_QUERY || v->target != (D.tail ? DT_XDP : DT_DNS))
				continue;
			x[n][0] = v->wire;
			x[n][1] = v->labels;
			x[n][2] = dprobes(v);
			y[n] = dmed(v);
			yc[n++] = dmed_cpu(v);
		}
		if (n >= 5 && !lsq(n, 3, x, y, c) && !lsq(n, 3, x, yc, cc)) {
			printf("| fit over the %d not-listed rows: per byte | ns = a + "
			       "b bytes + c labels + d probes | %.3f (%.3f) |\n",
			       n, c[1], cc[1]);
			printf("| same fit: per label | c | %.2f (%.2f) |\n", c[2],
			       cc[2]);
			printf("| same fit: per probe | d | %.2f (%.2f) |\n", c[3],
			       cc[3]);
			printf("| same fit: fixed part | a | %.1f (%.1f) |\n", c[0],
			       cc[0]);
		}
	}
	printf("| the step (bench_dns) | (s) - (n) | %.0f (%.1f) |\n", step,
	       dmed_cpu(st) - dmed_cpu(nd));
	printf("| address-only path | (a) - ((s) - (n)); run directly: (b) | "
	       "%.0f; %.0f |\n", ma, dmed(bd));
	printf("\n");

	if (D.tail) {
		printf("#### Tail call\n\n");
		printf("The same not-listed queries through `bloomgate_xdp` (which "
		       "tail-calls `bloomgate_dns`) and through `bloomgate_dns` "
		       "alone (net ns). The difference is `bloomgate_xdp`'s own "
		       "work on the packet plus the tail call; subtracting (a), "
		       "that work on a non-DNS packet, leaves the tail call and "
		       "the DNS port check. Compare with the IQR of the rows "
		       "above: for long names the noise is larger than the "
		       "difference, and the short rows are the better "
		       "estimate.\n\n");
		printf("| name length | via bloomgate_xdp | bloomgate_dns alone | "
		       "difference | difference - (a) |\n");
		printf("|---:|---:|---:|---:|---:|\n");
		for (i = 0; i < DNS_NLEN; i++) {
			const struct dvar *x = dfind(DK_QUERY, DT_XDP, DS_SHORT,
						     DNS_WIRE[i]);
			const struct dvar *d = dfind(DK_QUERY, DT_DNS, DS_SHORT,
						     DNS_WIRE[i]);

			if (!x || !d)
				continue;
			printf("| %d | %.0f | %.0f | %+.0f | %+.0f |\n", DNS_WIRE[i],
			       dnet(x), dnet(d), dnet(x) - dnet(d),
			       dnet(x) - dnet(d) - ma);
		}
		printf("\n");
	}
}

static void print_dns_checks(void)
{
	printf("- DNS: %d variants, a calibration run and %d timed runs each: "
	       "`dns_queries`, `dns_probes`, `dns_positives`, `dns_negatives` "
	       "and (through `bloomgate_xdp`) `packets`, `probes`, `positives`, "
	       "`negatives`, `passed`, `dropped`, `answered` moved exactly as "
	       "userspace computes for the same names and addresses (builder's "
	       "`bg_name_hashes`, bloomgate/lookup.h on the live filter; an "
	       "address positive is dropped, a listed name answered); the last "
	       "iteration's verdict, name and address are the expected ones; "
	       "every listed name matches: %s. Section time %.1f s.\n",
	       D.nv, O.dns_rounds,
	       D.mismatches ? "**MISMATCH** (see stderr)" : "all held",
	       D.t_section);
}

/* ---- main --------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench [options]\n"
		"  -n, --sizes N[,N]     list sizes (default 1000000,10000000)\n"
		"  -r, --repeat N        iterations per timed test run (default %u)\n"
		"  -R, --rounds N        timed rounds (default %d)\n"
		"  -f, --fpr-samples N   probes for the FPR measurements (default %u)\n"
		"  -p, --fpr P           target false-positive rate (default %g)\n"
		"  -k, --kbloom-k K      kernel bloom hash functions (default %u)\n"
		"  -s, --seed S          key seed\n"
		"  -c, --cpu N           pin to CPU N, -1: no pinning (default: last)\n"
		"  -w, --swaps N         bg_filter_publish timings (default %d)\n"
		"  -l, --parse-lines N   list-parse timing, 0: skip (default 10M)\n"
		"  -F, --firehol PATH    FireHOL level 1 list, '': skip (default %s,\n"
		"                        relative to the working directory)\n"
		"  -C, --cidr-n N        generated CIDR list size, 0: skip (default 1M)\n"
		"  -S, --only LIST       sections to run, comma separated: addr, cidr,\n"
		"                        dns (default all)\n"
		"      --dns-names N     listed domains in the DNS section (default 1M)\n"
		"      --dns-addrs N     listed IPv4 addresses in the same filter\n"
		"                        (default 1M, 0: names only)\n"
		"      --dns-run-ms MS   length of one timed DNS run (default %.0f)\n"
		"      --dns-rounds N    timed DNS rounds (default %d)\n"
		"      --dns-path P      auto (default): through bloomgate_xdp when it\n"
		"                        tail-calls bloomgate_dns, else bloomgate_dns\n"
		"                        directly; direct; tail (fail without it)\n"
		"  -q, --quick           small smoke run\n",
		O.repeat, O.rounds, O.fpr_samples, O.target, O.kbloom_k, O.swaps,
		O.firehol, O.dns_run_ms, O.dns_rounds);
}

static uint64_t parse_u64(const char *s)
{
	char *end;
	double d = strtod(s, &end);

	if (end == s)
		die("bad number '%s'", s);
	if (*end == 'k' || *end == 'K')
		d *= 1e3;
	else if (*end == 'M' || *end == 'm')
		d *= 1e6;
	return (uint64_t)d;
}

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "sizes", required_argument, NULL, 'n' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "rounds", required_argument, NULL, 'R' },
		{ "fpr-samples", required_argument, NULL, 'f' },
		{ "fpr", required_argument, NULL, 'p' },
		{ "kbloom-k", required_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 's' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "swaps", required_argument, NULL, 'w' },
		{ "parse-lines", required_argument, NULL, 'l' },
		{ "firehol", required_argument, NULL, 'F' },
		{ "cidr-n", required_argument, NULL, 'C' },
		{ "only", required_argument, NULL, 'S' },
		{ "dns-names", required_argument, NULL, 1001 },
		{ "dns-addrs", required_argument, NULL, 1002 },
		{ "dns-run-ms", required_argument, NULL, 1003 },
		{ "dns-path", required_argument, NULL, 1004 },
		{ "dns-rounds", required_argument, NULL, 1005 },
		{ "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "n:r:R:f:p:k:s:c:w:l:F:C:S:qh", lo, NULL)) !=
	       -1) {
		switch (c) {
		case 'n': {
			char *t, *save = NULL, *dup = strdup(optarg);

			O.nsizes = 0;
			for (t = strtok_r(dup, ",", &save); t && O.nsizes < 8;
			     t = strtok_r(NULL, ",", &save))
				O.sizes[O.nsizes++] = parse_u64(t);
			free(dup);
			break;
		}
		case 'r':
			O.repeat = (uint32_t)parse_u64(optarg);
			break;
		case 'R':
			O.rounds = (int)parse_u64(optarg);
			break;
		case 'f':
			O.fpr_samples = (uint32_t)parse_u64(optarg);
			break;
		case 'p':
			O.target = strtod(optarg, NULL);
			break;
		case 'k':
			O.kbloom_k = (uint32_t)parse_u64(optarg);
			break;
		case 's':
			O.seed = strtoull(optarg, NULL, 0);
			break;
		case 'c':
			O.cpu = atoi(optarg);
			break;
		case 'w':
			O.swaps = (int)parse_u64(optarg);
			break;
		case 'l':
			O.parse_lines = parse_u64(optarg);
			break;
		case 'F':
			O.firehol = optarg;
			break;
		case 'C':
			O.cidr_n = parse_u64(optarg);
			break;
		case 'S': {
			char *t, *save = NULL, *dup = strdup(optarg);

			O.sections = 0;
			for (t = strtok_r(dup, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				if (!strcmp(t, "addr"))
					O.sections |= SEC_ADDR;
				else if (!strcmp(t, "cidr"))
					O.sections |= SEC_CIDR;
				else if (!strcmp(t, "dns"))
					O.sections |= SEC_DNS;
				else
					die("--only: unknown section '%s' (addr, cidr, dns)", t);
			}
			free(dup);
			break;
		}
		case 1001:
			O.dns_names = parse_u64(optarg);
			break;
		case 1002:
			O.dns_addrs = parse_u64(optarg);
			break;
		case 1003:
			O.dns_run_ms = strtod(optarg, NULL);
			break;
		case 1005:
			O.dns_rounds = (int)parse_u64(optarg);
			break;
		case 1004:
			if (!strcmp(optarg, "auto"))
				O.dns_path = 0;
			else if (!strcmp(optarg, "direct"))
				O.dns_path = 1;
			else if (!strcmp(optarg, "tail"))
				O.dns_path = 2;
			else
				die("--dns-path: auto, direct or tail");
			break;
		case 'q':
			O.dns_names = 100000;
			O.dns_addrs = 100000;
			O.dns_run_ms = 10;
			O.dns_rounds = 3;
			O.sizes[0] = 100000;
			O.sizes[1] = 1000000;
			O.nsizes = 2;
			O.repeat = 300000;
			O.rounds = 3;
			O.fpr_samples = 1000000;
			O.swaps = 4;
			O.parse_lines = 1000000;
			O.cidr_n = 100000;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (O.rounds < 1 || O.rounds > 256 || !O.repeat ||
	    !O.fpr_samples || !O.kbloom_k || O.kbloom_k > 15)
		die("bad parameters (see --help)");
	for (c = 0; c < O.nsizes; c++)
		if (!O.sizes[c] || O.sizes[c] > (1ULL << 31))
			die("sizes must be 1..2^31");
	if (O.cidr_n > (1ULL << 28))
		die("--cidr-n must be at most 2^28");
	if (!O.sections)
		die("--only: no section");
	if (!(O.sections & SEC_ADDR)) {
		O.nsizes = 0;
		O.parse_lines = 0;
	}
	if (!(O.sections & SEC_CIDR)) {
		O.firehol = "";
		O.cidr_n = 0;
	}
	if (O.dns_names < 2 || O.dns_names > (1ULL << 27) ||
	    O.dns_addrs > (1ULL << 27) || !(O.dns_run_ms > 0) ||
	    O.dns_rounds < 1 || O.dns_rounds > 256)
		die("bad DNS parameters (see --help)");
}

int main(int argc, char **argv)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	struct set sets[8];
	uint64_t maxn = 0, *bitmap;
	struct pkt_spec ps = {
		.family = AF_INET,
		.src = "192.0.2.1",
		.dst = "198.51.100.7",
		.payload = 18, /* 60-byte frame */
	};
	uint32_t *keys, d;
	int si, r, j;

	clock_gettime(CLOCK_MONOTONIC, &T0);
	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	setrlimit(RLIMIT_MEMLOCK, &rl);
	if (O.cpu == -2)
		O.cpu = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
	if (O.cpu >= 0) {
		cpu_set_t cs;

		CPU_ZERO(&cs);
		CPU_SET(O.cpu, &cs);
		if (sched_setaffinity(0, sizeof(cs), &cs))
			die("cannot pin to CPU %d: %s", O.cpu, strerror(errno));
	}
	if (pkt_build(&PKT, &ps))
		die("pkt_build failed");
	memcpy(&d, PKT.buf + PKT.l3 + offsetof(struct iphdr, daddr), 4);
	PKT_DADDR0 = ntohl(d);
	call_base = kallsyms_addr("__bpf_call_base");

	for (si = 0; si < O.nsizes; si++)
		if (O.sizes[si] > maxn)
			maxn = O.sizes[si];
	keys = NULL;
	bitmap = NULL;
	if (maxn) {
		progress("generating %s distinct random IPv4 addresses",
			 human_n(maxn));
		keys = gen_keys(maxn, O.seed, &bitmap);
	}

	memset(sets, 0, sizeof(sets));
	for (si = 0; si < O.nsizes; si++) {
		struct set *s = &sets[si];
		uint64_t i;

		s->n = O.sizes[si];
		s->addr = keys;
		s->fseed = O.seed * 0x9e3779b97f4a7c15ULL + s->n;
		if (s->n == maxn) {
			s->bitmap = bitmap;
		} else {
			s->bitmap = bm_alloc();
			for (i = 0; i < s->n; i++)
				bm_set(s->bitmap, keys[i]);
		}
		progress("n=%s: bloomgate filter (size, 2 builds, %d swaps)",
			 human_n(s->n), O.swaps);
		setup_bloomgate(s);
		progress("n=%s: baselines (classic, kernel bloom, hash, blocked)",
			 human_n(s->n));
		setup_bench(s);
		progress("n=%s: expected positives over %llu LCG keys, userspace FPR",
			 human_n(s->n),
			 (unsigned long long)(O.repeat > O.fpr_samples ? O.repeat :
									  O.fpr_samples));
		simulate(s);
		userspace_fpr(s);
		for (j = 0; j < V__COUNT; j++) {
			s->timed[j] = calloc((size_t)O.rounds, sizeof(struct run));
			if (!s->timed[j])
				die("out of memory");
		}
	}

	cset_prepare();

	/* Verification + datapath FPR: one long run per program. */
	for (si = 0; si < O.nsizes; si++) {
		struct set *s = &sets[si];

		progress("n=%s: verification runs, %u packets each", human_n(s->n),
			 O.fpr_samples);
		for (j = 0; j < V__COUNT; j++) {
			run_one(s, (enum variant)j, O.fpr_samples, &s->verify[j]);
			check_run(s, (enum variant)j, O.fpr_samples, &s->verify[j],
				  s->ex_at_fpr, "verification run");
		}
	}
	for (j = 0; j < ncs; j++) {
		progress("%s: verification runs, %u packets each", CS[j].name,
			 O.fpr_samples);
		cset_verify(&CS[j]);
	}

	/* Timed rounds, interleaved. */
	for (r = 0; r < O.rounds; r++) {
		progress("timed round %d/%d", r + 1, O.rounds);
		for (si = 0; si < O.nsizes; si++) {
			struct set *s = &sets[si];

			for (j = 0; j < V__COUNT; j++) {
				enum variant v = (enum variant)((j + r) % V__COUNT);

				run_one(s, v, O.repeat, &s->timed[v][r]);
				check_run(s, v, O.repeat, &s->timed[v][r],
					  s->ex_at_repeat, "timed run");
			}
		}
		for (si = 0; si < ncs; si++) {
			struct cset *c = &CS[si];

			for (j = 0; j < C__COUNT; j++) {
				enum cvariant v = (enum cvariant)((j + r) % C__COUNT);

				cset_run(c, v, O.repeat, &c->timed[v][r]);
				cset_check(c, v, O.repeat, &c->timed[v][r], c->ex_rep,
					   "timed run");
			}
		}
	}

	if (O.sections & SEC_DNS)
		dns_bench();

	if (O.parse_lines && maxn) {
		uint64_t n = O.parse_lines < maxn ? O.parse_lines : maxn;

		O.parse_lines = n;
		progress("list parse: writing and parsing %s lines", human_n(n));
		time_parse(keys, n);
	}

	print_params();
	if (O.nsizes) {
		print_timing(sets);
		print_derived(sets);
		print_fpr(sets);
		print_memory(sets);
		print_build(sets);
		print_code(&sets[O.nsizes - 1],
			   ncs ? CS[ncs - 1].prog_fd[C_LPM] : -1,
			   ncs ? CS[ncs - 1].name : NULL);
	}
	if (O.sections & SEC_CIDR)
		print_cidr();
	if (O.sections & SEC_DNS)
		print_dns();

	printf("### Checks\n\n");
	for (si = 0; si < O.nsizes; si++)
		printf("- n=%s: %d verification runs of %u packets and %d timed "
		       "runs of %u: destination after each run = LCG^repeat(start) "
		       "and positives = userspace count on the same keys: %s.\n",
		       human_n(sets[si].n), V__COUNT, O.fpr_samples,
		       V__COUNT * O.rounds, O.repeat,
		       sets[si].mismatches ? "**MISMATCH** (see stderr)" : "all held");
	print_cidr_checks();
	if (O.sections & SEC_DNS)
		print_dns_checks();
	printf("\n");
	progress("done");
	return failures ? 1 : 0;
}
