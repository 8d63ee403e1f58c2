/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The userspace benchmark's shared machinery (bench/common.c): options,
 * the section table's entry type, timing and statistics, the bench packet
 * and its test runs, program loading, xlated-code inspection and report
 * helpers. What the BPF side shares is in bench.h.
 */
#ifndef BLOOMGATE_BENCH_COMMON_H
#define BLOOMGATE_BENCH_COMMON_H

#include "../tests/pktgen.h" /* first: linux/in.h after netinet/in.h */
#include "../tests/blocklist.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <bpf/libbpf.h>

#include "bloomgate/bloom.h"
#include "core/filter.h"
#include "core/lists.h"
#include "core/counters.h"
#include "kern/pins.h"
#include "kern/swap.h"
#include "bloomgate.skel.h"
#include "bench.skel.h"
#include "bench.h"

/* bloomgate's own lookup (bloomgate/lookup.h, the datapath's code) on a
 * filter mmapped in userspace, so the bench can count the probes an address
 * costs. */
#include "core/mem_lookup.h"

/* ---- options (bench/main.c) --------------------------------------------- */

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
	unsigned sections; /* bit i: SECTIONS[i] in main.c runs */
	uint64_t dns_names; /* listed domains in the DNS section */
	uint64_t dns_addrs; /* listed IPv4 addresses in the same filter */
	double dns_run_ms; /* target length of one timed DNS run */
	int dns_rounds; /* timed DNS rounds */
	int dns_path; /* 0 auto, 1 bloomgate_dns directly, 2 tail call only */
	uint64_t confirm_n; /* listed keys of the exact-stage filter */
	uint64_t confirm_trials; /* unlisted addresses through it */
};

extern struct opts O;

/* ---- sections ----------------------------------------------------------- */

/*
 * One benchmark section: a file of its own defining a `const struct
 * section`, and one line in main.c's SECTIONS[]. main runs the hooks of
 * the selected sections phase by phase, each phase in table order; any
 * hook may be NULL.
 */
struct section {
	const char *name; /* --only token */
	void (*prepare)(void); /* build what is measured, expected counts */
	void (*verify)(void); /* verification runs, before the timed rounds */
	/* its share of timed round r: the rounds interleave every section
	 * that has this hook, so drift hits all their variants alike */
	void (*round)(int r);
	void (*run)(void); /* its own measurements after the shared rounds */
	void (*print)(void); /* its tables, after the Parameters line */
	void (*checks)(void); /* its lines under "Checks" */
};

/* cidr.c: the LPM trie program of the last CIDR list and that list's name
 * (for addr.c's code table); -1 when no list was benchmarked. */
int cidr_lpm_prog(const char **list);
/* cidr.c: O.firehol was given but is not readable. */
extern int firehol_missing;
/* Seed of the generated CIDR list: O.seed ^ MIX_SEED_XOR. */
#define MIX_SEED_XOR 0xc1d7ULL

/* ---- progress, errors, time --------------------------------------------- */

extern int failures; /* failed checks: the exit status */

void progress_start(void);
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* A failed check: counted, reported on stderr, the run goes on. */
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double now_s(void);
double cpu_s(void); /* CPU time of the calling thread */

/* ---- numbers ------------------------------------------------------------ */

uint64_t splitmix64(uint64_t *s);
int cmp_double(const void *a, const void *b);
double median(const double *v, int n);
double minimum(const double *v, int n);
double iqr(double *v, int n); /* interquartile range; sorts v */

/* stat(double *v, int n) (median, minimum, iqr) of one field over the
 * first n (at most 256) of an array of per-round results. */
#define ROUNDS_STAT(stat, runs, n, field)                                    \
	({                                                                   \
		double t_[256];                                              \
		int i_;                                                      \
		for (i_ = 0; i_ < (n) && i_ < 256; i_++)                     \
			t_[i_] = (runs)[i_].field;                           \
		stat(t_, i_);                                                \
	})
#define ROUNDS_MEDIAN(runs, n, field) ROUNDS_STAT(median, runs, n, field)
#define ROUNDS_MIN(runs, n, field) ROUNDS_STAT(minimum, runs, n, field)

/* ---- address sets ------------------------------------------------------- */

static inline int bm_test(const uint64_t *bm, uint32_t a)
{
	return (int)(bm[a >> 6] >> (a & 63)) & 1;
}

static inline void bm_set(uint64_t *bm, uint32_t a)
{
	bm[a >> 6] |= 1ULL << (a & 63);
}

uint64_t *bm_alloc(void); /* a zeroed 2^32-bit bitmap, 512 MiB */
/* n random distinct addresses (host order) and their membership bitmap. */
uint32_t *gen_keys(uint64_t n, uint64_t seed, uint64_t **bitmap);
/* A bg_list of the n addresses as /32 keys, without a file to parse. */
void list_from(struct bg_list *l, const uint32_t *addr, uint64_t n);

/* ---- bloomgate ---------------------------------------------------------- */

/* bloomgate's real program, loaded with cfg_action=DROP, cfg_match=dst and
 * cfg_bench_vary as given (1: it steps its own destination). */
struct bloomgate *skel_load(int bench_vary);
/* bg_counters_read of bg's counters map; dies on failure. */
void skel_counters(struct bloomgate *bg, struct bg_counters *c);

/* ---- the bench packet and its test runs --------------------------------- */

extern struct pkt PKT; /* 60-byte IPv4/UDP frame */
extern uint32_t PKT_DADDR0; /* its destination, host order */

/* Builds PKT and reads what prog_inspect needs; once, at start. */
void bench_init(void);

struct run {
	uint32_t ns; /* kernel: average ns per iteration */
	double cpu_ns; /* thread CPU time / repeat */
	uint32_t daddr; /* destination after the run, host order */
	uint64_t pos; /* positives counted by the program */
	uint64_t probes; /* bloomgate only: its probes counter */
	uint64_t packets; /* bloomgate only: its packets counter */
	uint64_t confirmed; /* addr's bloomgate: its positives counter */
	uint64_t bloom_fp; /* cidr's bloomgate: its bloom_false_positives */
};

/* One BPF_PROG_TEST_RUN of `repeat` iterations on PKT: fills the timings
 * and the destination the packet ended with. */
void prog_run(int prog_fd, const char *name, uint32_t repeat, struct run *r);
/* The address LCG (bench.h) applied `steps` times to a. */
uint32_t lcg_pow(uint32_t a, uint64_t steps);

/* Medians over the O.rounds timed rounds of each of nv variants, from
 * timed[v][round]: kernel ns and thread CPU ns. */
void variant_medians(struct run *const *timed, int nv, double *ns,
		     double *cpu_ns);

/* ---- xlated code: which calls are left after the verifier --------------- */

#define PI_CALLS_MAX 512 /* call sites kept per program */
struct proginfo {
	/* verified: the instructions the verifier walked to accept it
	 * (bpf_prog_info.verified_insns), over all its paths */
	uint32_t xlated_insns, jited_bytes, verified_insns;
	int ncalls;
	uint64_t call_addr[PI_CALLS_MAX];
};

void prog_inspect(int fd, struct proginfo *pi);
/* Names the call sites of every program inspected so far. */
void kallsyms_resolve(void);
void prog_calls_str(const struct proginfo *pi, char *buf, size_t len);

/* ---- report helpers ----------------------------------------------------- */

long long fd_memlock(int fd); /* the kernel's memlock figure, -1: unknown */
/* Short forms for tables: 8 results may be in use at once. */
const char *human_n(uint64_t n); /* 1M, 10k, 123 */
const char *human_bytes(long long b); /* 1.2 MiB, "?" below 0 */
const char *pct(double x); /* 12.34% */
/* Three table cells: ns, its ratio to the baseline's ns, the difference. */
void print_vs_base(double ns, double base);

#endif /* BLOOMGATE_BENCH_COMMON_H */
