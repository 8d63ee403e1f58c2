// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Section "cidr": CIDR lists, bloomgate against the kernel's LPM trie.
 *
 * Two lists of IPv4 prefixes, each loaded into bloomgate exactly as
 * `bloomgate load --allow-wide` does (bg_list_parse_file, bg_list_finish, bg_filter_plan,
 * bg_filter_create, bg_filter_publish; a fixed seed instead of getrandom) and
 * into a BPF_MAP_TYPE_LPM_TRIE holding the same (reduced) prefixes, then
 * timed against the parse-only baseline in the rounds shared with the
 * address section:
 *   - the FireHOL level 1 list (O.firehol; skipped with a note if absent);
 *   - O.cidr_n generated prefixes, lengths in the proportions of MIX[],
 *     positions uniform over the IPv4 space, from a fixed seed.
 * Exact membership comes from a 2^32-bit bitmap of the kept prefixes.
 */
#include "common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

int firehol_missing;

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
/* expected: listed, bloomgate's (confirmed) positives, its probes, its
 * false negatives, its Bloom positives the exact stage rejected */
enum { CE_LISTED, CE_BG_POS, CE_BG_PROBES, CE_BG_FN, CE_BG_BFP, CE__COUNT };

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

/* Parses the list file as `bloomgate load --allow-wide` does and loads it into a fresh
 * bloomgate program and an LPM trie. */
static void cset_setup(struct cset *c, const char *path)
{
	/* FireHOL level 1 holds 224.0.0.0/3: the whole list is measured, as
	 * `bloomgate load --allow-wide` loads it */
	struct bg_list_opts lo = { .strict = 0, .allow_wide = 1, .report = NULL };
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
	c->bg = skel_load(1);
	filters_fd = bpf_map__fd(c->bg->maps.BG_MAP_FILTERS);
	t = now_s();
	err = bg_filter_plan(BL(&l, NULL, NULL), O.target, &c->p);
	c->t_plan = now_s() - t;
	if (err)
		die("bg_filter_plan(%s): %s", c->name, strerror(-err));
	t = now_s();
	c->filter_fd = bg_filter_create(&c->p, c->fseed, BL(&l, NULL, NULL));
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
		struct bench_lpm_key4 *keys = malloc(CHUNK * sizeof(*keys));
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
				keys[j].prefixlen = l.v4[off + j].plen;
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
		__u32 probes = 0, rej = 0;
		int listed, pos;

		if (i == O.repeat)
			memcpy(c->ex_rep, e, sizeof(e));
		if (i == O.fpr_samples)
			memcpy(c->ex_fpr, e, sizeof(e));
		listed = bm_test(c->bitmap, a);
		pos = bg_listed4(c->fmem, h, htonl(a), &probes, &rej);
		e[CE_LISTED] += (uint64_t)listed;
		e[CE_BG_POS] += (uint64_t)pos;
		e[CE_BG_PROBES] += probes;
		e[CE_BG_FN] += (uint64_t)(listed && !pos);
		e[CE_BG_BFP] += (uint64_t)(!pos && rej);
		a = a * BENCH_LCG_MUL + BENCH_LCG_ADD;
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

		skel_counters(c->bg, &k);
		r->pos = k.cnt[BG_CNT_POSITIVES];
		r->probes = k.cnt[BG_CNT_PROBES];
		r->packets = k.cnt[BG_CNT_PACKETS];
		r->bloom_fp = k.cnt[BG_CNT_BLOOM_FP];
	} else {
		r->pos = c->bn->bss->bench_pos[v == C_LPM ? BP_LPM : BP_PASS];
		r->probes = r->packets = r->bloom_fp = 0;
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
	r->bloom_fp -= before.bloom_fp;
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
	if (r->bloom_fp != ex[CE_BG_BFP]) {
		fail("%s %s %s: bloom_false_positives +%llu, userspace expects "
		     "+%llu", CV_NAME[v], c->name, what,
		     (unsigned long long)r->bloom_fp,
		     (unsigned long long)ex[CE_BG_BFP]);
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
	/* the bound is the Bloom part's: its positives among the non-listed,
	 * the ones the exact stage rejected and any it let through */
	rate = nl ? (double)(c->verify[C_BLOOMGATE].pos - listed +
			     c->verify[C_BLOOMGATE].bloom_fp) / (double)nl : 0;
	if (rate > c->fpr_bound) {
		fail("%s: Bloom part's datapath FPR %.3e of non-listed destinations above the "
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

/* The head of a table with columns per list: the first column's title,
 * then for each list the titles of fmt (%s: its name) and their
 * alignment cells. No newline after the alignment row. */
static void table_head(const char *first, const char *fmt, const char *align)
{
	int ci;

	printf("| %s |", first);
	for (ci = 0; ci < ncs; ci++)
		printf(fmt, CS[ci].name);
	printf("\n|---|");
	for (ci = 0; ci < ncs; ci++)
		printf("%s", align);
}

static void print_cidr(void)
{
	double med_ns[2][C__COUNT], med_cpu[2][C__COUNT];
	int ci, v, l;

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
	printf("#### Lists and plans\n\n");
	table_head("", " %s |", "---|");
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
		variant_medians(CS[ci].timed, C__COUNT, med_ns[ci], med_cpu[ci]);
	printf("#### Nanoseconds per packet\n\n");
	printf("Median over %d rounds (interleaved with the runs above, order "
	       "rotated) of the kernel's `duration` for %u packets per run; x = "
	       "ratio to (a), +ns = overhead above (a).\n\n",
	       O.rounds, O.repeat);
	table_head("variant", " %s ns | x | +ns |", "---:|---:|---:|");
	printf("\n");
	for (v = 0; v < C__COUNT; v++) {
		printf("| %s |", CV_NAME[v]);
		for (ci = 0; ci < ncs; ci++)
			print_vs_base(med_ns[ci][v], med_ns[ci][C_PASS]);
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
			const struct run *t0 = &c->timed[v][0];
			char pr[32] = "-";

			if (v == C_BLOOMGATE)
				snprintf(pr, sizeof(pr), "%.4f",
					 (double)t0->probes / (double)t0->packets);
			printf("| %s | %s | %.1f | %.1f | %.2f | %llu / %u (%s) | "
			       "%llu | %s |\n",
			       CV_NAME[v], c->name, med_cpu[ci][v],
			       ROUNDS_MIN(c->timed[v], O.rounds, cpu_ns),
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
	       "over the non-listed destinations is its false-positive rate "
	       "after the exact stage, which confirms every Bloom "
	       "positive. The Bloom part's own rate is its positives among the "
	       "non-listed destinations: the stage's rejections "
	       "(`bloom_false_positives`, which must equal userspace's count) "
	       "plus that excess; the predictions and the check bound are "
	       "about it. Predicted per address: by the plan (`p.predicted_addr`, the "
	       "model's expectation over builds), and from the live filter's "
	       "own bits (per probe, the mean over blocks of (bits set / "
	       "512)^k; per address, 1 - (1 - that)^n4). The datapath rate must "
	       "stay below the latter plus 5 standard deviations (sampling, and "
	       "the few distinct prefixes at short probed lengths): the check "
	       "bound. Userspace: %u random non-listed addresses through "
	       "`bg_filter_test4` on the live filter (after the stage). Probes per packet: "
	       "`bg_stats` probes / packets of the same run (worst case: "
	       "bitmap + n4).\n\n",
	       O.fpr_samples, O.fpr_samples);
	printf("| list | listed (positive fraction) | LPM trie positives | "
	       "bloomgate positives | false positives | datapath FPR | "
	       "userspace FPR | Bloom part: rejected by the stage | Bloom part: "
	       "datapath FPR | predicted: plan | predicted: live filter | "
	       "check bound | probes per packet (worst case) |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (ci = 0; ci < ncs; ci++) {
		struct cset *c = &CS[ci];
		uint64_t listed = c->ex_fpr[CE_LISTED];
		uint64_t fp = c->verify[C_BLOOMGATE].pos - listed;
		double nl = (double)(O.fpr_samples - listed);

		printf("| %s | %llu (%s) | %llu | %llu | %llu | %.3e | %.3e | "
		       "%llu | %.3e | %.3e | %.3e | %.3e | %.4f (%d) |\n",
		       c->name, (unsigned long long)listed,
		       pct((double)listed / O.fpr_samples),
		       (unsigned long long)c->verify[C_LPM].pos,
		       (unsigned long long)c->verify[C_BLOOMGATE].pos,
		       (unsigned long long)fp, (double)fp / nl,
		       (double)c->us_pos / (double)c->us_samples,
		       (unsigned long long)c->verify[C_BLOOMGATE].bloom_fp,
		       (double)(fp + c->verify[C_BLOOMGATE].bloom_fp) / nl,
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
		       "positives, `probes` and `bloom_false_positives` = "
		       "userspace `bg_listed4` on the same keys, `packets` = "
		       "repeat, positives >= listed; the Bloom part's datapath "
		       "FPR within the bound; first, last and one random "
		       "address of each of the %zu kept prefixes positive in "
		       "bloomgate (%llu lookups): %s.\n",
		       c->name, C__COUNT, O.fpr_samples, C__COUNT * O.rounds,
		       O.repeat, c->n4, (unsigned long long)c->fn_checked,
		       c->mismatches ? "**MISMATCH** (see stderr)" : "all held");
	}
}

/* ---- the section -------------------------------------------------------- */

static void cidr_verify(void)
{
	int i;

	for (i = 0; i < ncs; i++) {
		progress("%s: verification runs, %u packets each", CS[i].name,
			 O.fpr_samples);
		cset_verify(&CS[i]);
	}
}

static void cidr_round(int r)
{
	int i, j;

	for (i = 0; i < ncs; i++) {
		struct cset *c = &CS[i];

		for (j = 0; j < C__COUNT; j++) {
			enum cvariant v = (enum cvariant)((j + r) % C__COUNT);

			cset_run(c, v, O.repeat, &c->timed[v][r]);
			cset_check(c, v, O.repeat, &c->timed[v][r], c->ex_rep,
				   "timed run");
		}
	}
}

int cidr_lpm_prog(const char **list)
{
	if (!ncs)
		return -1;
	*list = CS[ncs - 1].name;
	return CS[ncs - 1].prog_fd[C_LPM];
}

const struct section sec_cidr = {
	.name = "cidr",
	.prepare = cset_prepare,
	.verify = cidr_verify,
	.round = cidr_round,
	.print = print_cidr,
	.checks = print_cidr_checks,
};
