// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate benchmarks (`make bench`, through bench/run.sh): options,
 * the section table and the phases every section goes through. The sections
 * are files of their own (addr.c, cidr.c, dns.c); the machinery they share
 * is common.c, what they share with bench/bench.bpf.c is bench.h.
 *
 * Section addr: for each list size n (default 1M and 10M random distinct IPv4 addresses
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
 * cidr.c).
 *
 * Then DNS queries: ns per query through bloomgate_xdp and
 * bloomgate_dns for names of 10 to 255 wire bytes against the address-only
 * path, 1M listed domains and 1M listed addresses in one filter (see "DNS
 * queries" in dns.c).
 *
 * Then the exact stage: a 10M-key filter built as `bloomgate
 * load` builds it by default, and all 2^31 addresses of a half of the
 * space where none is listed through the datapath's lookup on the live map, on every CPU; bytes per
 * key with and without the stage from plans (see confirm.c).
 * `--only addr,cidr,dns,confirm` picks sections.
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

#include "common.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/*
 * The sections, in the order they run and print. A new section is a file
 * defining its `const struct section` (see common.h) and a line here; its
 * options, if any, go into struct opts and parse_args().
 */
extern const struct section sec_addr, sec_cidr, sec_dns, sec_confirm;
static const struct section *const SECTIONS[] = {
	&sec_addr,
	&sec_cidr,
	&sec_dns,
	&sec_confirm,
};
#define NSECTIONS (sizeof(SECTIONS) / sizeof(SECTIONS[0]))

static int section_on(const struct section *sec)
{
	size_t i;

	for (i = 0; i < NSECTIONS; i++)
		if (SECTIONS[i] == sec)
			return (O.sections >> i) & 1;
	return 0;
}

/* "addr, cidr, dns" */
static const char *section_names(void)
{
	static char buf[256];
	size_t i, off = 0;

	for (i = 0; i < NSECTIONS && off < sizeof(buf); i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s",
					i ? ", " : "", SECTIONS[i]->name);
	return buf;
}

/* Runs one hook of every selected section, in table order. */
#define EACH_SECTION(hook, ...)                                              \
	do {                                                                 \
		size_t i_;                                                   \
		for (i_ = 0; i_ < NSECTIONS; i_++)                           \
			if (SECTIONS[i_]->hook && section_on(SECTIONS[i_]))  \
				SECTIONS[i_]->hook(__VA_ARGS__);             \
	} while (0)

struct opts O = {
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
	.sections = ~0U, /* all */
	.dns_names = 1000000,
	.dns_addrs = 1000000,
	.dns_run_ms = 20,
	.dns_rounds = 15,
	/* every address of 128.0.0.0/1, 2^31 (bench/confirm.c) */
	.confirm_trials = 1ULL << 31,
	.confirm_n = 10000000,
};

/* ---- options ------------------------------------------------------------ */

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
		"                        dns, confirm (default all)\n"
		"      --dns-names N     listed domains in the DNS section (default 1M)\n"
		"      --dns-addrs N     listed IPv4 addresses in the same filter\n"
		"                        (default 1M, 0: names only)\n"
		"      --dns-run-ms MS   length of one timed DNS run (default %.0f)\n"
		"      --dns-rounds N    timed DNS rounds (default %d)\n"
		"      --dns-path P      auto (default): through bloomgate_xdp when it\n"
		"                        tail-calls bloomgate_dns, else bloomgate_dns\n"
		"                        directly; direct; tail (fail without it)\n"
		"      --confirm-n N     listed keys of the exact-stage filter\n"
		"                        (default 10M)\n"
		"      --confirm-trials N  unlisted addresses through it, at most\n"
		"                        2^31 (default: all 2^31 of 128.0.0.0/1)\n"
		"  -q, --quick           small smoke run\n",
		O.repeat, O.rounds, O.fpr_samples, O.target, O.kbloom_k, O.swaps,
		O.firehol, O.dns_run_ms, O.dns_rounds);
}

/* A count: digits (a fraction is fine before a suffix: 2.5M), then
 * nothing or one of k, M, G (10^3, 10^6, 10^9). Anything else is an error,
 * not a number read up to where it stopped ("3G" was 3 before G). */
static uint64_t parse_u64(const char *s)
{
	double d, mul = 1;
	char *end;

	errno = 0;
	d = strtod(s, &end);
	if (end == s || errno || !(d >= 0))
		die("bad number '%s'", s);
	switch (*end) {
	case 'k':
	case 'K':
		mul = 1e3;
		end++;
		break;
	case 'm':
	case 'M':
		mul = 1e6;
		end++;
		break;
	case 'g':
	case 'G':
		mul = 1e9;
		end++;
		break;
	}
	if (*end)
		die("bad number '%s' (a count, with k, M or G if any)", s);
	d *= mul;
	if (d >= 18446744073709551616.0)
		die("number out of range: '%s'", s);
	return (uint64_t)d;
}

static double parse_double(const char *s)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (end == s || *end || errno || d != d)
		die("bad number '%s'", s);
	return d;
}

/* The options that set one number, by type: integers through parse_u64
 * (k, M and G suffixes), doubles through parse_double. */
static const struct {
	int c; /* getopt_long's value */
	enum { NUM_U32, NUM_INT, NUM_U64, NUM_DOUBLE } type;
	void *dst;
} NUMOPTS[] = {
	{ 'r', NUM_U32, &O.repeat },
	{ 'R', NUM_INT, &O.rounds },
	{ 'f', NUM_U32, &O.fpr_samples },
	{ 'p', NUM_DOUBLE, &O.target },
	{ 'k', NUM_U32, &O.kbloom_k },
	{ 'w', NUM_INT, &O.swaps },
	{ 'l', NUM_U64, &O.parse_lines },
	{ 'C', NUM_U64, &O.cidr_n },
	{ 1001, NUM_U64, &O.dns_names },
	{ 1002, NUM_U64, &O.dns_addrs },
	{ 1003, NUM_DOUBLE, &O.dns_run_ms },
	{ 1005, NUM_INT, &O.dns_rounds },
	{ 1006, NUM_U64, &O.confirm_n },
	{ 1007, NUM_U64, &O.confirm_trials },
};

/* Sets the number option c from arg; 0 if c is not one. */
static int set_number(int c, const char *arg)
{
	size_t i;

	for (i = 0; i < sizeof(NUMOPTS) / sizeof(NUMOPTS[0]); i++) {
		if (NUMOPTS[i].c != c)
			continue;
		switch (NUMOPTS[i].type) {
		case NUM_U32:
			*(uint32_t *)NUMOPTS[i].dst = (uint32_t)parse_u64(arg);
			break;
		case NUM_INT:
			*(int *)NUMOPTS[i].dst = (int)parse_u64(arg);
			break;
		case NUM_U64:
			*(uint64_t *)NUMOPTS[i].dst = parse_u64(arg);
			break;
		case NUM_DOUBLE:
			*(double *)NUMOPTS[i].dst = parse_double(arg);
			break;
		}
		return 1;
	}
	return 0;
}

static void parse_args(int argc, char **argv)
{
	char *end;
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
		{ "confirm-n", required_argument, NULL, 1006 },
		{ "confirm-trials", required_argument, NULL, 1007 },
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
		case 's':
			errno = 0;
			O.seed = strtoull(optarg, &end, 0);
			if (end == optarg || *end || errno)
				die("bad seed '%s'", optarg);
			break;
		case 'c':
			errno = 0;
			O.cpu = (int)strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || O.cpu < -1)
				die("bad CPU '%s'", optarg);
			break;
		case 'F':
			O.firehol = optarg;
			break;
		case 'S': {
			char *t, *save = NULL, *dup = strdup(optarg);

			O.sections = 0;
			for (t = strtok_r(dup, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				size_t i;

				for (i = 0; i < NSECTIONS; i++)
					if (!strcmp(t, SECTIONS[i]->name))
						break;
				if (i == NSECTIONS)
					die("--only: unknown section '%s' (%s)", t,
					    section_names());
				O.sections |= 1U << i;
			}
			free(dup);
			break;
		}
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
			O.confirm_n = 1000000;
			O.confirm_trials = 10000000;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			if (!set_number(c, optarg)) {
				usage(stderr);
				exit(2);
			}
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
	if (!section_on(&sec_addr)) {
		O.nsizes = 0;
		O.parse_lines = 0;
	}
	if (!section_on(&sec_cidr)) {
		O.firehol = "";
		O.cidr_n = 0;
	}
	if (O.dns_names < 2 || O.dns_names > (1ULL << 27) ||
	    O.dns_addrs > (1ULL << 27) || !(O.dns_run_ms > 0) ||
	    O.dns_rounds < 1 || O.dns_rounds > 256)
		die("bad DNS parameters (see --help)");
	if (!O.confirm_n || O.confirm_n > (1ULL << 31) || !O.confirm_trials ||
	    O.confirm_trials > (1ULL << 31))
		die("bad exact-stage parameters (see --help)");
}

/* ---- output ------------------------------------------------------------- */

static void print_params(void)
{
	const char *sep;
	int i;

	printf("Parameters: sections ");
	for (i = 0, sep = ""; i < (int)NSECTIONS; i++)
		if (section_on(SECTIONS[i])) {
			printf("%s%s", sep, SECTIONS[i]->name);
			sep = ",";
		}
	printf("; sizes");
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
	if (section_on(&sec_dns))
		printf("; DNS: %s listed domains and %s listed IPv4 addresses in "
		       "one filter, %d rounds of about %.0f ms per run",
		       human_n(O.dns_names), O.dns_addrs ? human_n(O.dns_addrs) : "no",
		       O.dns_rounds, O.dns_run_ms);
	if (section_on(&sec_confirm))
		printf("; exact stage: %s listed keys, %s unlisted addresses",
		       human_n(O.confirm_n), human_n(O.confirm_trials));
	printf(".\n\n");
}

/* ---- main --------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	int r;

	progress_start();
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
	bench_init();

	EACH_SECTION(prepare);
	EACH_SECTION(verify);
	/* Timed rounds, every section's variants interleaved. */
	for (r = 0; r < O.rounds; r++) {
		progress("timed round %d/%d", r + 1, O.rounds);
		EACH_SECTION(round, r);
	}
	EACH_SECTION(run);

	print_params();
	EACH_SECTION(print);
	printf("### Checks\n\n");
	EACH_SECTION(checks);
	printf("\n");
	progress("done");
	return failures ? 1 : 0;
}
