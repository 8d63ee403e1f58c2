// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Section "confirm": the exact stage on a live filter, in
 * userspace.
 *
 * One IPv4 filter of O.confirm_n /32 keys (default 10M) planned as
 * `bloomgate load` plans it by default (bg_filter_plan: the stage on, the
 * Bloom part at BG_FPR_DEFAULT_CONFIRM), built by bg_filter_create and
 * swapped into bloomgate's real bg_filters map by bg_filter_publish, then
 * mapped back read-only (bg_filter_map_current): what is measured is the
 * map the datapath would read.
 *
 * The listed addresses are the first n of the bijection i -> i * LIST_MUL
 * mod 2^31 (distinct, in 0.0.0.0/1); the trials are addresses with the top
 * bit set (128.0.0.0/1): disjoint from the list, so every trial's right
 * verdict is "not listed" without a second lookup, and a positive of
 * bg_filter_judge4 (user/core/probe.c, the datapath's own lookup code) is a
 * wrong verdict. There are only 2^31 of them, fewer than the 3 * 10^9 a
 * rule-of-three bound at 1e-9 would want: random draws would repeat
 * addresses (and a wrong one is wrong every time it is drawn). So trial i
 * is the i-th address of a bijection onto 128.0.0.0/1, every address at
 * most once, and the default, all 2^31 of them, gives this filter's exact
 * rate over that half of the space. The trials are split between the CPUs,
 * one thread a CPU.
 *
 * Also measured: the stage alone (random 64-bit Bloom hashes through
 * bg_fp_confirm, so its own rate is seen with many hits instead of
 * none: the combined rate is the product of the two, their hashes being
 * independent by construction, bloomgate/bloom.h); zero false negatives
 * (every listed key judged listed); the share of listed keys held in their
 * first bucket (a flood of listed traffic reads one cache line of the
 * stage for those, two for the rest); and, from plans alone, the bytes a
 * key costs with and without the stage at 1M and 10M keys and at other
 * Bloom targets.
 */
#include "common.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bloomgate/lookup.h"

/* The listed addresses: i * LIST_MUL mod 2^31 is a bijection on [0, 2^31)
 * (LIST_MUL odd), so the first n are distinct; the Bloom and stage hashes
 * (XXH64) do not see the pattern. */
#define LIST_MUL 0x9e3779b1U
#define LIST_MASK 0x7fffffffU
#define TRIAL_BIT 0x80000000U /* every trial address has it: never listed */
#define TRIAL_MUL 0x2545f491U /* trial i: i * TRIAL_MUL mod 2^31, odd */
#define TRIALS_ALL (1ULL << 31) /* every address of 128.0.0.0/1 */
/* The target for the combined rate per address. */
#define TARGET_COMBINED 1e-9
#define TARGET_BYTES_PER_KEY 8.0
#define MAX_THREADS 64
#define MAX_WRONG 8 /* wrong verdicts whose addresses are printed */

static struct {
	uint64_t n;
	struct bg_filter_params p;
	struct bloomgate *bg;
	int filter_fd;
	const void *fmem;
	size_t flen;
	long long memlock;
	double t_build_s;

	uint64_t fn; /* listed keys judged not listed */
	uint64_t first; /* listed keys found in their first bucket */

	/* the trials */
	uint64_t trials, wrong, bloom_pos, stage_trials, stage_pos;
	int nthreads, nwrong_addr;
	uint32_t wrong_addr[MAX_WRONG];
	double t_trials_s;
	int bad;
} C;

static inline uint32_t listed_addr(uint64_t i)
{
	return (uint32_t)(i * LIST_MUL) & LIST_MASK;
}

static void list_listed(struct bg_list *l, uint64_t n)
{
	uint32_t *a = malloc(n * sizeof(*a));
	uint64_t i;

	if (!a)
		die("out of memory");
	for (i = 0; i < n; i++)
		a[i] = listed_addr(i);
	list_from(l, a, n);
	free(a);
}

/* ---- plans only: bytes per key ------------------------------------------ */

/* Rows of the plan table: the stage, the Bloom part's target. The first of
 * each kind is the default `load` uses. */
static const struct {
	int confirm;
	double target;
} PLANS[] = {
	{ 1, BG_FPR_DEFAULT_CONFIRM },
	{ 0, BG_FPR_DEFAULT },
	{ 1, 0.001 },
	{ 1, 0.003 },
	{ 1, 0.03 },
	{ 1, 0.05 },
};
#define NPLANS (sizeof(PLANS) / sizeof(PLANS[0]))
#define NPLAN_SIZES 2
static const uint64_t PLAN_SIZES[NPLAN_SIZES] = { 1000000, 10000000 };
static struct bg_filter_params plans[NPLAN_SIZES][NPLANS];

static void plan_all(void)
{
	struct bg_list l;
	size_t s, i;
	int err;

	list_listed(&l, PLAN_SIZES[NPLAN_SIZES - 1]);
	for (s = 0; s < NPLAN_SIZES; s++) {
		/* the list's first PLAN_SIZES[s] keys: the plan reads n4 */
		l.n4 = l.accepted = PLAN_SIZES[s];
		for (i = 0; i < NPLANS; i++) {
			err = bg_filter_plan_confirm(BL(&l, NULL, NULL),
						     PLANS[i].target,
						     PLANS[i].confirm,
						     &plans[s][i]);
			if (err)
				die("bg_filter_plan_confirm(%s, %g): %s",
				    human_n(PLAN_SIZES[s]), PLANS[i].target,
				    strerror(-err));
		}
	}
	l.n4 = l.accepted = l.cap4;
	bg_list_free(&l);
}

/* ---- the live filter ---------------------------------------------------- */

static void confirm_prepare(void)
{
	const struct bg_filter_header *h;
	struct bg_list l;
	uint64_t i;
	int err, filters_fd;
	double t;

	progress("confirm: plans for 1M and 10M keys");
	plan_all();

	C.n = O.confirm_n;
	progress("confirm: building a %s-key filter with the exact stage",
		 human_n(C.n));
	C.bg = skel_load(0);
	filters_fd = bpf_map__fd(C.bg->maps.BG_MAP_FILTERS);
	list_listed(&l, C.n);
	err = bg_filter_plan(BL(&l, NULL, NULL), BG_FPR_DEFAULT_CONFIRM, &C.p);
	if (err)
		die("bg_filter_plan(%s): %s", human_n(C.n), strerror(-err));
	if (!C.p.fp_nbuckets)
		die("bg_filter_plan planned no exact stage");
	t = now_s();
	C.filter_fd = bg_filter_create(&C.p, O.seed ^ 0xc0f1ULL,
				       BL(&l, NULL, NULL));
	C.t_build_s = now_s() - t;
	bg_list_free(&l);
	if (C.filter_fd < 0)
		die("bg_filter_create: %s", strerror(-C.filter_fd));
	err = bg_filter_publish(filters_fd, C.filter_fd);
	if (err)
		die("bg_filter_publish: %s", strerror(-err));
	err = bg_filter_map_current(filters_fd, &C.fmem, &C.flen);
	if (err)
		die("bg_filter_map_current: %s", strerror(-err));
	C.memlock = fd_memlock(C.filter_fd);
	h = C.fmem;
	if (h->fp_nbuckets != C.p.fp_nbuckets)
		die("the live filter has %u stage buckets, the plan %u",
		    h->fp_nbuckets, C.p.fp_nbuckets);

	/* Zero false negatives, and where each listed key's fingerprint is. */
	progress("confirm: %s listed keys through bg_filter_judge4",
		 human_n(C.n));
	for (i = 0; i < C.n; i++) {
		__u32 be = htonl(listed_addr(i));
		struct bg_key4 key;
		const struct bg_fp_bucket *b;
		__u64 h2;

		if (!bg_filter_judge4(C.fmem, be, NULL))
			C.fn++;
		bg_key4_init(&key, be, 32);
		h2 = bg_fp_hash(bg_key4_hash(&key, h->seed), h->seed);
		b = bg_elem(C.fmem, h->fp_off + bg_fp_bucket1(h2, h->fp_nbuckets));
		if (b && bg_fp_bucket_has(b, bg_fp_of(h2)))
			C.first++;
	}
	if (C.fn) {
		fail("confirm: %llu of %llu listed keys not listed (false "
		     "negatives)",
		     (unsigned long long)C.fn, (unsigned long long)C.n);
		C.bad = 1;
	}
}

/* ---- the trials ---------------------------------------------------------- */

struct worker {
	pthread_t t;
	int cpu;
	uint64_t seed, first, trials, stage_trials;
	uint64_t wrong, bloom_pos, stage_pos;
	uint32_t wrong_addr[MAX_WRONG];
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct bg_filter_header *h = C.fmem;
	uint64_t s = w->seed, i, wrong = 0, pos = 0, spos = 0;
	cpu_set_t cs;

	/* main() pinned the process to one CPU: one thread a CPU instead */
	CPU_ZERO(&cs);
	CPU_SET(w->cpu, &cs);
	pthread_setaffinity_np(pthread_self(), sizeof(cs), &cs);
	for (i = w->first; i < w->first + w->trials; i++) {
		uint32_t a = ((uint32_t)i * TRIAL_MUL & LIST_MASK) | TRIAL_BIT;
		int rej = 0, listed;

		listed = bg_filter_judge4(C.fmem, htonl(a), &rej);
		if (listed && wrong < MAX_WRONG)
			w->wrong_addr[wrong] = a;
		wrong += (uint64_t)listed;
		/* a Bloom positive is either wrongly confirmed or rejected */
		pos += (uint64_t)(listed | rej);
	}
	/* The stage alone: a random Bloom hash is not a listed key's (but
	 * with probability n / 2^64), so a confirmation is its false
	 * positive. */
	for (i = 0; i < w->stage_trials; i++)
		spos += (uint64_t)bg_fp_confirm(C.fmem, h, splitmix64(&s));
	w->wrong = wrong;
	w->bloom_pos = pos;
	w->stage_pos = spos;
	return NULL;
}

static void confirm_run(void)
{
	struct worker w[MAX_THREADS];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t j;
	int i, err;
	double t;

	C.nthreads = ncpu < 1 ? 1 : ncpu > MAX_THREADS ? MAX_THREADS : (int)ncpu;
	C.trials = O.confirm_trials;
	C.stage_trials = O.confirm_trials / 4;
	progress("confirm: %llu unlisted addresses and %llu stage-only probes "
		 "on %d threads",
		 (unsigned long long)C.trials,
		 (unsigned long long)C.stage_trials, C.nthreads);
	t = now_s();
	for (i = 0, j = 0; i < C.nthreads; i++) {
		uint64_t per = C.trials / (uint64_t)C.nthreads;
		uint64_t sper = C.stage_trials / (uint64_t)C.nthreads;

		w[i].cpu = i;
		w[i].seed = (O.seed ^ 0x7e57ULL) + (uint64_t)i * 0x9e3779b97f4a7c15ULL;
		/* the first thread takes the remainders */
		w[i].first = j;
		w[i].trials = per + (i ? 0 : C.trials % (uint64_t)C.nthreads);
		j += w[i].trials;
		w[i].stage_trials = sper + (i ? 0 : C.stage_trials % (uint64_t)C.nthreads);
		err = pthread_create(&w[i].t, NULL, worker_main, &w[i]);
		if (err)
			die("pthread_create: %s", strerror(err));
	}
	for (i = 0; i < C.nthreads; i++) {
		pthread_join(w[i].t, NULL);
		C.wrong += w[i].wrong;
		C.bloom_pos += w[i].bloom_pos;
		C.stage_pos += w[i].stage_pos;
		for (j = 0; j < w[i].wrong && j < MAX_WRONG; j++)
			if (C.nwrong_addr < MAX_WRONG)
				C.wrong_addr[C.nwrong_addr++] = w[i].wrong_addr[j];
	}
	C.t_trials_s = now_s() - t;
}

/* ---- output ------------------------------------------------------------- */

/* Upper end of a one-sided 95 % interval for a Poisson count k (normal
 * approximation with continuity correction above 0; 3 at 0, the rule of
 * three). Good enough to compare with a target, not a statistics library;
 * conservative for draws without replacement (the trials). */
static double upper95(uint64_t k)
{
	double x = (double)k;

	return k ? x + 0.5 + 1.645 * sqrt(x + 0.5) : 3.0;
}

/* A rate against the combined target: met when its 95 % upper bound is
 * below; not met when the observed rate itself is above; else the sample
 * is too small to tell. */
static const char *verdict(double rate, double upper)
{
	return upper <= TARGET_COMBINED ? "met" :
	       rate > TARGET_COMBINED	? "**not met**" :
					  "not shown at this sample size";
}

static double stage_predicted(const struct bg_filter_params *p)
{
	return 2.0 * BG_FP_PER_BUCKET * p->fp_load * ldexp(1.0, -32);
}

static void print_plans(void)
{
	size_t s, i;

	printf("Planned sizes (`bg_filter_plan_confirm`, plans only) of IPv4 "
	       "filters of /32 keys: the whole filter map (header, Bloom part, "
	       "the stage's buckets) over the keys. The first row of each size "
	       "is `bloomgate load`'s default, the second `load --confirm off`; "
	       "the others are the stage with other Bloom targets (`load "
	       "--fpr P`). Target: at most %.0f bytes a key at the defaults, "
	       "combined rate at most %g.\n\n",
	       TARGET_BYTES_PER_KEY, TARGET_COMBINED);
	printf("| keys | exact stage | Bloom target | Bloom k | Bloom bits/key | "
	       "stage buckets (load) | filter map | bytes/key | predicted per "
	       "address: Bloom part | after the stage |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (s = 0; s < NPLAN_SIZES; s++)
		for (i = 0; i < NPLANS; i++) {
			const struct bg_filter_params *p = &plans[s][i];
			int def = i < 2;

			printf("| %s | %s%s | %g | %u | %.2f | ", human_n(p->n),
			       PLANS[i].confirm ? "on" : "off",
			       def ? " (default)" : "", PLANS[i].target, p->k,
			       p->bits_per_entry);
			if (p->fp_nbuckets)
				printf("%u (%.3f)", p->fp_nbuckets, p->fp_load);
			else
				printf("-");
			printf(" | %s | %.2f | %.2e | %.2e |\n",
			       human_bytes((long long)p->bytes),
			       (double)p->bytes / (double)p->n,
			       p->predicted_addr, p->predicted_confirmed);
		}
	printf("\n");
}

static void confirm_print(void)
{
	const struct bg_filter_params *p = &C.p;
	double tr = (double)C.trials, bloom = (double)C.bloom_pos / tr;
	double stage = C.stage_trials ?
			       (double)C.stage_pos / (double)C.stage_trials : 0;
	int all = C.trials == TRIALS_ALL;
	/* every unlisted address of the half: the rate is exact, no bound */
	double ub = all ? (double)C.wrong / tr : upper95(C.wrong) / tr;
	double sub = C.stage_trials ?
			     upper95(C.stage_pos) / (double)C.stage_trials : 1;
	int i;
	double bpk = (double)C.memlock / (double)C.n;

	printf("### The exact stage\n\n");
	printf("One filter of %s IPv4 /32 keys as `bloomgate load` builds it by "
	       "default (`bg_filter_plan`: the stage on, Bloom target %g; "
	       "`bg_filter_create`, `bg_filter_publish` into bloomgate's "
	       "`bg_filters`), mapped back read-only with "
	       "`bg_filter_map_current`. The listed addresses are in "
	       "0.0.0.0/1, the trials %s, so no trial is listed and every "
	       "positive of `bg_filter_judge4` (the datapath's lookup code) is "
	       "a wrong verdict. %d threads, one a CPU; %.1f s.\n\n",
	       human_n(C.n), BG_FPR_DEFAULT_CONFIRM,
	       all ? "every address of 128.0.0.0/1 (2^31), once each" :
		     "distinct addresses of 128.0.0.0/1 (i * 0x2545f491 mod 2^31, "
		     "top bit set)",
	       C.nthreads, C.t_trials_s);
	printf("| measure | observed | predicted (plan) | target |\n");
	printf("|---|---:|---:|---:|\n");
	printf("| Bloom part's positives among %llu unlisted addresses "
	       "(k=%u, %.2f bits/key) | %llu (%.3e) | %.3e | - |\n",
	       (unsigned long long)C.trials, p->k, p->bits_per_entry,
	       (unsigned long long)C.bloom_pos, bloom, p->predicted_addr);
	printf("| the stage alone: %llu random Bloom hashes through "
	       "`bg_fp_confirm` (%u buckets, load %.3f) | %llu (%.3e) | %.3e | - |\n",
	       (unsigned long long)C.stage_trials, p->fp_nbuckets, p->fp_load,
	       (unsigned long long)C.stage_pos, stage, stage_predicted(p));
	printf("| **combined: wrong verdicts among the %llu** | %llu (%.3e; "
	       "%s %.1e) | %.3e | <= %g: %s |\n",
	       (unsigned long long)C.trials, (unsigned long long)C.wrong,
	       (double)C.wrong / tr,
	       all ? "exact for this filter over 128.0.0.0/1:" :
		     "95 % upper bound",
	       ub, p->predicted_confirmed, TARGET_COMBINED,
	       verdict((double)C.wrong / tr, ub));
	printf("| combined, estimated: Bloom part observed x the stage's "
	       "observed rate (its 95 %% upper bound) | %.3e (%.1e) | %.3e | "
	       "<= %g: %s |\n",
	       bloom * stage, bloom * sub, p->predicted_confirmed,
	       TARGET_COMBINED, verdict(bloom * stage, bloom * sub));
	printf("| listed keys judged listed | %llu of %llu | all | all: %s |\n",
	       (unsigned long long)(C.n - C.fn), (unsigned long long)C.n,
	       C.fn ? "**not met**" : "met");
	printf("| listed keys in their first bucket (confirmed with one cache "
	       "line) | %.2f %% | - | - |\n",
	       100.0 * (double)C.first / (double)C.n);
	printf("| filter map: memlock (Bloom part + stage + header) | %s, %.2f "
	       "bytes/key | %s planned | <= %.0f bytes/key: %s |\n\n",
	       human_bytes(C.memlock), bpk, human_bytes((long long)p->bytes),
	       TARGET_BYTES_PER_KEY,
	       C.memlock < 0 ? "unknown" :
	       bpk <= TARGET_BYTES_PER_KEY ? "met" : "**not met**");
	if (C.nwrong_addr) {
		printf("Wrong verdicts (listed by the filter, not in the list):");
		for (i = 0; i < C.nwrong_addr; i++)
			printf("%s %u.%u.%u.%u", i ? "," : "",
			       C.wrong_addr[i] >> 24, (C.wrong_addr[i] >> 16) & 255,
			       (C.wrong_addr[i] >> 8) & 255, C.wrong_addr[i] & 255);
		printf("%s.\n\n", C.wrong > (uint64_t)C.nwrong_addr ? ", ..." : "");
	}
	printf("The 95 %% upper bound is the rule of three (3 / trials) when "
	       "no verdict was wrong: a count of trials can show a rate of at "
	       "most 3 / trials, and 128.0.0.0/1 has only 2^31 addresses, so "
	       "3 / 2^31 = 1.4e-9 is as far as counting goes; with all of them "
	       "the count is this filter's exact rate there, and what is left "
	       "unknown is how builds (seeds) differ. The stage's rate is measured on its own because "
	       "its fingerprints come from a second hash of the Bloom hash "
	       "(bloomgate/bloom.h), independent of the bits that chose the "
	       "Bloom block: the combined rate is the product, and the product "
	       "of the two observed rates is a far tighter estimate than a count "
	       "of wrong verdicts near zero. Above zero, the bound is a normal "
	       "approximation of the Poisson count's. Build (`bg_filter_create`): %.2f s.\n\n",
	       C.t_build_s);
	print_plans();
}

static void confirm_checks(void)
{
	/* The Bloom part's positives may not exceed the plan's rate plus 5
	 * standard deviations; the wrong verdicts not the plan's expected
	 * count plus a Poisson margin (5 sd + 3: a count near 0 must be
	 * allowed a few). Either failing means the model or the stage is
	 * wrong, not noise. */
	double tr = (double)C.trials;
	double mu = tr * C.p.predicted_addr;
	double mw = tr * C.p.predicted_confirmed;
	double ms = (double)C.stage_trials * stage_predicted(&C.p);
	int ok = !C.bad;

	if ((double)C.bloom_pos > mu + 5.0 * sqrt(mu)) {
		fail("confirm: %llu Bloom positives, the plan predicts %.0f",
		     (unsigned long long)C.bloom_pos, mu);
		ok = 0;
	}
	if ((double)C.wrong > mw + 5.0 * sqrt(mw) + 3.0) {
		fail("confirm: %llu wrong verdicts, the plan predicts %.2f",
		     (unsigned long long)C.wrong, mw);
		ok = 0;
	}
	if ((double)C.stage_pos > ms + 5.0 * sqrt(ms) + 3.0) {
		fail("confirm: the stage alone confirmed %llu random hashes, "
		     "the plan predicts %.2f",
		     (unsigned long long)C.stage_pos, ms);
		ok = 0;
	}
	printf("- confirm: every one of the %s listed keys judged listed; Bloom "
	       "positives at most the plan's rate + 5 sd, wrong verdicts and "
	       "the stage's own confirmations at most the plan's count + 5 sd "
	       "+ 3: %s.\n",
	       human_n(C.n), ok ? "all held" : "**FAILED** (see stderr)");
}

const struct section sec_confirm = {
	.name = "confirm",
	.prepare = confirm_prepare,
	.run = confirm_run,
	.print = confirm_print,
	.checks = confirm_checks,
};
