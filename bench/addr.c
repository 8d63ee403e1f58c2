// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Section "addr": address lists. For each list size n (default 1M and 10M
 * random distinct IPv4 addresses from a fixed seed) it loads, side by side:
 *   - bloomgate's real XDP program (build/bloomgate.skel.h) with
 *     cfg_bench_vary=1 and cfg_action=DROP, its filter built by
 *     bg_filter_plan/bg_filter_create and swapped in by bg_filter_publish;
 *   - the baselines of bench/bench.bpf.c: parse-only XDP_PASS, a classic
 *     k-probe Bloom filter, the kernel's BLOOM_FILTER map, a HASH map, and
 *     bloomgate's blocked probe without its counters in a plain array, in a
 *     BPF_F_INNER_MAP map-in-map slot and in a fixed-size map-in-map slot;
 * times them in rounds shared with the CIDR section, checks every run's
 * positives against userspace, and times list parsing at the end.
 */
#include "common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

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
	/* the Bloom part alone: bg_filter_test4 on the same sequence on a
	 * copy of the live filter without the exact stage (fp_nbuckets 0) */
	EX_BLOCKED,
	/* bg_filter_test4 on the live filter (the stage included): what
	 * bloomgate's `positives` counts (addr's bloomgate only) */
	EX_CONFIRMED,
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
	void *bloom_only; /* a copy of it without the exact stage */
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
	/* userspace FPR: the Bloom part, the stage included, classic */
	uint64_t us_probes, us_pos_bg, us_pos_conf, us_pos_classic;
};

/* ---- classic Bloom filter (userspace half of bench_classic) ------------- */

/* The k bit positions of addr_be (network order), as bench_classic computes
 * them: double hashing of the two halves of one bg_hash64, fastrange to m. */
static inline void classic_bits(const struct set *s, uint32_t addr_be,
				uint32_t bit[BG_K_MAX])
{
	struct bg_key4 key;
	uint32_t h1, h2, i;
	uint64_t h;

	bg_key4_init(&key, addr_be, 32);
	h = bg_key4_hash(&key, s->cseed);
	h1 = (uint32_t)h;
	h2 = (uint32_t)(h >> 32);
	for (i = 0; i < s->ck; i++) {
		bit[i] = (uint32_t)(((uint64_t)h1 * s->cbits) >> 32);
		h1 += h2;
	}
}

static inline int classic_test(const struct set *s, uint32_t addr_be)
{
	uint32_t bit[BG_K_MAX], i;

	classic_bits(s, addr_be, bit);
	for (i = 0; i < s->ck; i++)
		if (!(s->cmem[bit[i] >> 6] & (1ULL << (bit[i] & 63))))
			return 0;
	return 1;
}

static void classic_add(struct set *s, uint32_t addr_be)
{
	uint32_t bit[BG_K_MAX], i;

	classic_bits(s, addr_be, bit);
	for (i = 0; i < s->ck; i++)
		s->cmem[bit[i] >> 6] |= 1ULL << (bit[i] & 63);
}

/* ---- set-up ------------------------------------------------------------- */

static void setup_bloomgate(struct set *s)
{
	struct bg_list l;
	uint64_t seeds[2] = { s->fseed, s->fseed ^ 0x5a5a5a5aULL };
	int fds[2], filters_fd, i, err;
	double t;

	s->bg = skel_load(1);
	filters_fd = bpf_map__fd(s->bg->maps.BG_MAP_FILTERS);

	list_from(&l, s->addr, s->n);
	t = now_s();
	err = bg_filter_plan(BL(&l, NULL, NULL), O.target, &s->p);
	s->t_size_us = (now_s() - t) * 1e6;
	if (err)
		die("bg_filter_plan(%llu): %s", (unsigned long long)s->n,
		    strerror(-err));

	/* Two filters: the one measured, and a second one (other seed) to
	 * swap with; both builds are timed. */
	for (i = 0; i < 2; i++) {
		t = now_s();
		fds[i] = bg_filter_create(&s->p, seeds[i], BL(&l, NULL, NULL));
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
	/* The Bloom part's own verdicts (what the blocked variants and
	 * bloomgate's Bloom probe see) from a copy without the exact stage,
	 * as tests/bpf/test_fpr.c does. */
	s->bloom_only = malloc(s->flen);
	if (!s->bloom_only)
		die("out of memory");
	memcpy(s->bloom_only, s->fmem, s->flen);
	((struct bg_filter_header *)s->bloom_only)->fp_nbuckets = 0;
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
	bg_filter_build(mem, &s->p, s->fseed, BL(&l, NULL, NULL));
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
		c[EX_BLOCKED] += (uint64_t)bg_filter_test4(s->bloom_only, be);
		c[EX_CONFIRMED] += (uint64_t)bg_filter_test4(s->fmem, be);
		c[EX_CLASSIC] += (uint64_t)classic_test(s, be);
		a = a * BENCH_LCG_MUL + BENCH_LCG_ADD;
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

	s->us_probes = s->us_pos_bg = s->us_pos_conf = s->us_pos_classic = 0;
	while (i < O.fpr_samples) {
		uint32_t a = (uint32_t)splitmix64(&rs);

		if (bm_test(s->bitmap, a))
			continue;
		i++;
		s->us_pos_bg += (uint64_t)bg_filter_test4(s->bloom_only, htonl(a));
		s->us_pos_conf += (uint64_t)bg_filter_test4(s->fmem, htonl(a));
		s->us_pos_classic += (uint64_t)classic_test(s, htonl(a));
	}
	s->us_probes = i;
}

/* ---- running ------------------------------------------------------------ */

/* A variant's positives; for bloomgate the Bloom part's (its confirmed
 * positives and the ones the exact stage rejected: one probe an address
 * here), comparable with the blocked variants', and *confirmed its
 * `positives` counter. */
static void read_pos(struct set *s, enum variant v, uint64_t *pos,
		     uint64_t *probes, uint64_t *confirmed)
{
	if (V[v].bp >= 0) {
		*pos = s->bn->bss->bench_pos[V[v].bp];
		*probes = *confirmed = 0;
	} else {
		struct bg_counters c;

		skel_counters(s->bg, &c);
		*pos = c.cnt[BG_CNT_POSITIVES] + c.cnt[BG_CNT_BLOOM_FP];
		*probes = c.cnt[BG_CNT_PROBES];
		*confirmed = c.cnt[BG_CNT_POSITIVES];
	}
}

static void run_one(struct set *s, enum variant v, uint32_t repeat,
		    struct run *r)
{
	uint64_t p0, q0, c0, p1, q1, c1;

	read_pos(s, v, &p0, &q0, &c0);
	prog_run(s->prog_fd[v], V[v].name, repeat, r);
	read_pos(s, v, &p1, &q1, &c1);
	r->pos = p1 - p0;
	r->probes = q1 - q0;
	r->confirmed = c1 - c0;
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
	if (v == V_BLOOMGATE && r->confirmed != ex[EX_CONFIRMED]) {
		fail("%s n=%s %s: %llu confirmed positives, userspace expects %llu",
		     V[v].name, human_n(s->n), what,
		     (unsigned long long)r->confirmed,
		     (unsigned long long)ex[EX_CONFIRMED]);
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

static double med[8][V__COUNT], cmed[8][V__COUNT];

static void print_timing(struct set *sets)
{
	int si, v;

	for (si = 0; si < O.nsizes; si++)
		variant_medians(sets[si].timed, V__COUNT, med[si], cmed[si]);

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
		for (si = 0; si < O.nsizes; si++)
			print_vs_base(med[si][v], med[si][V_PASS]);
		printf("\n");
	}
	printf("\n");

	printf("Same runs, CPU time of the calling thread per packet (fractional "
	       "ns; includes the syscall, which is negligible at this repeat), "
	       "median and min; and the positives each run saw (every run "
	       "walks the same keys, so every run sees the same count; for (b) "
	       "they come from bloomgate's own `bg_stats` counters, whose "
	       "`probes` grew by exactly %u per run: the Bloom part's positives, "
	       "`positives` + `bloom_false_positives`, the same bits the "
	       "blocked variants probe; its confirmed `positives` are checked "
	       "against userspace too).\n\n",
	       O.repeat);
	printf("| variant | n | cpu ns median | cpu ns min | x (cpu) | "
	       "positives / probes per run | of which members |\n");
	printf("|---|---|---:|---:|---:|---:|---:|\n");
	for (si = 0; si < O.nsizes; si++) {
		struct set *s = &sets[si];

		for (v = 0; v < V__COUNT; v++)
			printf("| %s | %s | %.1f | %.1f | %.2f | %llu / %u (%.4f%%) "
			       "| %llu |\n",
			       V[v].name, human_n(s->n), cmed[si][v],
			       ROUNDS_MIN(s->timed[v], O.rounds, cpu_ns),
			       cmed[si][v] / cmed[si][V_PASS],
			       (unsigned long long)s->timed[v][0].pos, O.repeat,
			       100.0 * (double)s->timed[v][0].pos / O.repeat,
			       V[v].ex == EX_NONE ?
				       0ULL :
				       (unsigned long long)s->ex_at_repeat[EX_MEMBERS]);
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
	       "members) / (probes - members). bloomgate's Bloom part: "
	       "userspace on a copy of the live filter without the exact stage, "
	       "datapath `positives` + `bloom_false_positives`; after the stage: "
	       "the live filter, `positives`.\n\n",
	       O.fpr_samples, O.fpr_samples);
	printf("| n | structure | k | predicted | userspace | datapath |\n");
	printf("|---|---|---:|---:|---:|---:|\n");
	for (si = 0; si < O.nsizes; si++) {
		struct set *s = &sets[si];
		uint64_t mem = s->ex_at_fpr[EX_MEMBERS];
		double nm = (double)(O.fpr_samples - mem);

		printf("| %s | bloomgate (blocked 512), the Bloom part | %u | %.3e | "
		       "%.3e | %.3e |\n",
		       human_n(s->n), s->p.k, s->p.predicted,
		       (double)s->us_pos_bg / (double)s->us_probes,
		       (double)(s->verify[V_BLOOMGATE].pos - mem) / nm);
		printf("| %s | bloomgate, after the exact stage | %u | %.3e | %.3e "
		       "| %.3e |\n",
		       human_n(s->n), s->p.k, s->p.predicted_confirmed,
		       (double)s->us_pos_conf / (double)s->us_probes,
		       (double)(s->verify[V_BLOOMGATE].confirmed - mem) / nm);
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
		       "(%.2f bits/entry in blocks) + the exact stage's %u buckets "
		       "| %s | %.2f |\n",
		       human_n(s->n), s->p.nblocks, s->p.k, s->p.bits_per_entry,
		       s->p.fp_nbuckets,
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
	       "call. \"Verifier walked\": the instructions the verifier "
	       "processed to accept the program (bpf_prog_info.verified_insns, "
	       "every path it explored; the limit is 1M).\n\n",
	       human_n(s->n), lpm_fd >= 0 ? " and of (i) for the " : "",
	       lpm_fd >= 0 ? lpm_list : "", lpm_fd >= 0 ? " list" : "");
	printf("| variant | xlated insns | JIT bytes | verifier walked (insns) | calls |\n");
	printf("|---|---:|---:|---:|---|\n");
	for (v = 0; v < V__COUNT; v++) {
		char calls[512];

		prog_calls_str(&pi[v], calls, sizeof(calls));
		printf("| %s | %u | %u | %u | %s |\n", V[v].name, pi[v].xlated_insns,
		       pi[v].jited_bytes, pi[v].verified_insns, calls);
	}
	if (lpm_fd >= 0) {
		char calls[512];

		prog_calls_str(&lpi, calls, sizeof(calls));
		printf("| (i) LPM trie | %u | %u | %u | %s |\n", lpi.xlated_insns,
		       lpi.jited_bytes, lpi.verified_insns, calls);
	}
	printf("\n");
}

/* ---- the section -------------------------------------------------------- */

static struct set SETS[8];
static uint32_t *keys; /* the largest list; the smaller ones are its start */
static uint64_t maxn;

static void addr_prepare(void)
{
	uint64_t *bitmap = NULL;
	int si, j;

	for (si = 0; si < O.nsizes; si++)
		if (O.sizes[si] > maxn)
			maxn = O.sizes[si];
	if (maxn) {
		progress("generating %s distinct random IPv4 addresses",
			 human_n(maxn));
		keys = gen_keys(maxn, O.seed, &bitmap);
	}

	for (si = 0; si < O.nsizes; si++) {
		struct set *s = &SETS[si];
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
}

/* Verification + datapath FPR: one long run per program. */
static void addr_verify(void)
{
	int si, j;

	for (si = 0; si < O.nsizes; si++) {
		struct set *s = &SETS[si];

		progress("n=%s: verification runs, %u packets each", human_n(s->n),
			 O.fpr_samples);
		for (j = 0; j < V__COUNT; j++) {
			run_one(s, (enum variant)j, O.fpr_samples, &s->verify[j]);
			check_run(s, (enum variant)j, O.fpr_samples, &s->verify[j],
				  s->ex_at_fpr, "verification run");
		}
	}
}

static void addr_round(int r)
{
	int si, j;

	for (si = 0; si < O.nsizes; si++) {
		struct set *s = &SETS[si];

		for (j = 0; j < V__COUNT; j++) {
			enum variant v = (enum variant)((j + r) % V__COUNT);

			run_one(s, v, O.repeat, &s->timed[v][r]);
			check_run(s, v, O.repeat, &s->timed[v][r],
				  s->ex_at_repeat, "timed run");
		}
	}
}

/* List parsing (bg_list_parse_file, bg_list_finish) of the first
 * O.parse_lines keys written as a file, after the timed rounds. */
static void addr_run(void)
{
	uint64_t n;

	if (!O.parse_lines || !maxn)
		return;
	n = O.parse_lines < maxn ? O.parse_lines : maxn;
	O.parse_lines = n;
	progress("list parse: writing and parsing %s lines", human_n(n));
	time_parse(keys, n);
}

static void addr_print(void)
{
	const char *lpm_list = NULL;
	int lpm_fd = cidr_lpm_prog(&lpm_list);

	if (!O.nsizes)
		return;
	print_timing(SETS);
	print_derived(SETS);
	print_fpr(SETS);
	print_memory(SETS);
	print_build(SETS);
	print_code(&SETS[O.nsizes - 1], lpm_fd, lpm_list);
}

static void addr_checks(void)
{
	int si;

	for (si = 0; si < O.nsizes; si++)
		printf("- n=%s: %d verification runs of %u packets and %d timed "
		       "runs of %u: destination after each run = LCG^repeat(start) "
		       "and positives = userspace count on the same keys: %s.\n",
		       human_n(SETS[si].n), V__COUNT, O.fpr_samples,
		       V__COUNT * O.rounds, O.repeat,
		       SETS[si].mismatches ? "**MISMATCH** (see stderr)" : "all held");
}

const struct section sec_addr = {
	.name = "addr",
	.prepare = addr_prepare,
	.verify = addr_verify,
	.round = addr_round,
	.run = addr_run,
	.print = addr_print,
	.checks = addr_checks,
};
