// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The benchmark's shared machinery: see common.h. Every section's timing,
 * statistics, loading and report helpers live here, once.
 */
#include "common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <bpf/bpf.h>

struct pkt PKT;
uint32_t PKT_DADDR0;
int failures;
static struct timespec T0;

/* ---- progress, errors, time --------------------------------------------- */

void progress_start(void)
{
	clock_gettime(CLOCK_MONOTONIC, &T0);
}

double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void progress(const char *fmt, ...)
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

void die(const char *fmt, ...)
{
	va_list ap;

	fputs("bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void fail(const char *fmt, ...)
{
	va_list ap;

	failures++;
	fputs("bench: CHECK FAILED: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- numbers ------------------------------------------------------------ */

uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median(const double *v, int n)
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

/* Interquartile range (linear interpolation); sorts v. */
double iqr(double *v, int n)
{
	double q[2];
	int i;

	if (n <= 0)
		return NAN;
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	for (i = 0; i < 2; i++) {
		double pos = (n - 1) * (i ? 0.75 : 0.25);
		int lo = (int)pos;

		q[i] = lo + 1 < n ? v[lo] + (pos - lo) * (v[lo + 1] - v[lo]) : v[lo];
	}
	return q[1] - q[0];
}

double minimum(const double *v, int n)
{
	double m = INFINITY;
	int i;

	for (i = 0; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

void variant_medians(struct run *const *timed, int nv, double *ns,
		     double *cpu_ns)
{
	int v;

	for (v = 0; v < nv; v++) {
		ns[v] = ROUNDS_MEDIAN(timed[v], O.rounds, ns);
		cpu_ns[v] = ROUNDS_MEDIAN(timed[v], O.rounds, cpu_ns);
	}
}

/* ---- address sets ------------------------------------------------------- */

uint64_t *bm_alloc(void)
{
	void *m = mmap(NULL, 1ULL << 29, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (m == MAP_FAILED)
		die("cannot map a 512 MiB bitmap: %s", strerror(errno));
	return m;
}

/* n random distinct addresses (host order) and their membership bitmap. */
uint32_t *gen_keys(uint64_t n, uint64_t seed, uint64_t **bitmap)
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

void list_from(struct bg_list *l, const uint32_t *addr, uint64_t n)
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
/* ---- bloomgate ---------------------------------------------------------- */

struct bloomgate *skel_load(int bench_vary)
{
	struct bloomgate *bg = bloomgate__open();
	int err;

	if (!bg)
		die("bloomgate__open: %s", strerror(errno));
	bg->rodata->cfg_bench_vary = bench_vary;
	bg->rodata->cfg_action = BG_ACTION_DROP;
	bg->rodata->cfg_match = BG_MATCH_DST;
	err = bloomgate__load(bg);
	if (err)
		die("bloomgate__load: %s", strerror(-err));
	return bg;
}

void skel_counters(struct bloomgate *bg, struct bg_counters *c)
{
	if (bg_counters_read(bpf_map__fd(bg->maps.BG_MAP_COUNTERS), c))
		die("bg_counters_read: %s", strerror(errno));
}

/* ---- xlated code: which calls are left after the verifier --------------- */

struct callsite {
	uint64_t addr;
	char name[64];
};

static struct callsite callsites[64];
static int ncallsites;
static uint64_t call_base;

void kallsyms_resolve(void)
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

void prog_inspect(int fd, struct proginfo *pi)
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
	pi->verified_insns = info.verified_insns;
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

void prog_calls_str(const struct proginfo *pi, char *buf, size_t len)
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
/* ---- the bench packet and its test runs --------------------------------- */

void bench_init(void)
{
	struct pkt_spec ps = {
		.family = AF_INET,
		.src = "192.0.2.1",
		.dst = "198.51.100.7",
		.payload = 18, /* 60-byte frame */
	};
	uint32_t d;

	if (pkt_build(&PKT, &ps))
		die("pkt_build failed");
	memcpy(&d, PKT.buf + PKT.l3 + offsetof(struct iphdr, daddr), 4);
	PKT_DADDR0 = ntohl(d);
	call_base = kallsyms_addr("__bpf_call_base");
}

/* One BPF_PROG_TEST_RUN of `repeat` iterations on the bench packet: fills
 * the timings and the destination the packet ended with. */
void prog_run(int prog_fd, const char *name, uint32_t repeat,
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

uint32_t lcg_pow(uint32_t a, uint64_t steps)
{
	/* Applies x -> x*M + A `steps` times, by squaring the affine map. */
	uint32_t mul = BENCH_LCG_MUL, add = BENCH_LCG_ADD, rm = 1, ra = 0;

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

/* ---- report helpers ----------------------------------------------------- */

long long fd_memlock(int fd)
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

const char *human_n(uint64_t n)
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

const char *human_bytes(long long b)
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

void print_vs_base(double ns, double base)
{
	printf(" %.0f | %.2f | %+.0f |", ns, ns / base, ns - base);
}

const char *pct(double x)
{
	static char buf[8][32];
	static int i;
	char *b = buf[i++ & 7];

	snprintf(b, 32, "%.2f%%", 100.0 * x);
	return b;
}
