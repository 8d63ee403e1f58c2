// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Section "dns": DNS queries.
 *
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
#include "common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bloomgate/dns.h"
#include "core/domains.h"

#define DNS_NLEN 5
static const int DNS_WIRE[DNS_NLEN] = { 10, 30, 60, 120, 255 };
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
	BG_CNT_DNS_POSITIVES, BG_CNT_DNS_NEGATIVES, BG_CNT_BLOOM_FP,
	BG_CNT_DNS_BLOOM_FP,
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
	uint16_t vary_off[BD_VARY_MAX];
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
	return x * BD_LCG_MUL + BD_LCG_ADD;
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
 * bloomgate_dns's judgement of a name, in userspace on the live filter,
 * with the datapath's own probe (bg_name_listed(), bloomgate/lookup.h).
 * Returns 1 if listed; *probes counts the probes made, *rejected is 1 when
 * a Bloom positive was rejected by the exact stage and nothing confirmed.
 */
static int dns_judge(const void *fmem, const char *dotted, uint32_t *probes,
		     uint32_t *rejected)
{
	const struct bg_filter_header *h = fmem;
	__u64 suf[BG_NAME_SUF_SIZE], exact;
	int n;

	*probes = 0;
	*rejected = 0;
	if (bg_name_hashes(dotted, h->seed, &exact, suf, &n))
		die("bg_name_hashes refused '%s'", dotted);
	return bg_name_listed(fmem, h, exact, suf, (__u32)n, NULL, probes,
			      rejected);
}

static int dns_is_query53(const struct dvar *v)
{
	return v->kind == DK_QUERY || v->kind == DK_LISTED;
}

/* bloomgate_xdp's judgement of the destination daddr_be (network order),
 * added to the expected counters ex: 1 if it drops the packet. */
static int model_addr(uint64_t *ex, __u32 daddr_be)
{
	uint32_t probes = 0, rejected = 0;
	int pos = bg_listed4(D.fmem, D.fmem, daddr_be, &probes, &rejected);

	ex[BG_CNT_PACKETS]++;
	ex[BG_CNT_PROBES] += probes;
	if (!pos) {
		ex[BG_CNT_NEGATIVES]++;
		ex[BG_CNT_BLOOM_FP] += rejected;
		return 0;
	}
	ex[BG_CNT_POSITIVES]++;
	ex[BG_CNT_DROPPED]++;
	return 1;
}

/*
 * Expected counter deltas over `repeat` iterations from DNS_X0, the frame
 * of the last iteration and its verdict, as the DNS contract says:
 * bloomgate_xdp judges the address first (a positive is dropped,
 * cfg_action=DROP), then tail-calls bloomgate_dns for UDP to port 53, which
 * answers a listed name (cfg_dns_action=NXDOMAIN, XDP_TX) and passes the
 * rest; packets = passed + dropped + answered.
 */
static void dns_model(struct dvar *v, uint32_t repeat, uint64_t *ex,
		      uint8_t *last, uint32_t *verdict)
{
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
			*verdict = model_addr(ex, htonl(a)) ? XDP_DROP : XDP_PASS;
			if (*verdict == XDP_PASS)
				ex[BG_CNT_PASSED]++;
			a = a * BENCH_LCG_MUL + BENCH_LCG_ADD;
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
		uint32_t probes = 0, rejected = 0, daddr;
		int dns = 0;

		x = dns_step(x);
		dns_apply(v, frame, x);
		*verdict = XDP_PASS;
		if (v->target == DT_NOP)
			continue;
		if (v->target == DT_XDP) {
			memcpy(&daddr, frame + v->pkt.l3 + offsetof(struct iphdr, daddr), 4);
			if (model_addr(ex, daddr)) {
				*verdict = XDP_DROP;
				continue; /* dropped by address */
			}
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
		if (dns_judge(D.fmem, dotted, &probes, &rejected)) {
			ex[BG_CNT_DNS_POSITIVES]++;
			ex[BG_CNT_ANSWERED]++;
			*verdict = XDP_TX;
		} else {
			ex[BG_CNT_DNS_NEGATIVES]++;
			ex[BG_CNT_DNS_BLOOM_FP] += rejected;
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
	struct bloomgate *bg = v->target == DT_XDP_VARY ? D.bgv : D.bg;
	__u32 zero = 0;
	double t0, t1;
	int i, fd = D.prog[v->target];

	if (!direct && bpf_map_update_elem(D.target_fd, &zero, &fd, BPF_ANY))
		die("bd_target: %s", strerror(errno));
	b->bd_x = DNS_X0;
	memcpy(b->bd_tmpl, v->pkt.buf, BD_RESTORE);
	b->bd_daddr_off = (__u32)(v->pkt.l3 + offsetof(struct iphdr, daddr));
	b->bd_vary_n = (__u32)v->vary_n;
	for (i = 0; i < BD_VARY_MAX; i++)
		b->bd_vary_off[i] = i < v->vary_n ? v->vary_off[i] : 0;
	skel_counters(bg, &c0);
	t0 = cpu_s();
	if (bpf_prog_test_run_opts(direct ? fd :
				   bpf_program__fd(D.bn->progs.bench_dns), &o))
		die("test run of %s: %s", v->name, strerror(errno));
	t1 = cpu_s();
	skel_counters(bg, &c1);
	r->ns = o.duration;
	r->cpu_ns = (t1 - t0) * 1e9 / repeat;
	r->retval = o.retval;
	r->out_len = o.data_size_out;
	for (i = 0; i < BG_CNT_SLOTS; i++)
		r->d[i] = c1.cnt[i] - c0.cnt[i];
}

static const char *cnt_name(int i)
{
	return i < BG_CNT__COUNT ? bg_counter_names[i] : "?";
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
		for (i = 0; i < BD_VARY_MAX; i++)
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
			for (j = 0; j < l && j < BD_VARY_MAX; j++)
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
	struct bg_dom_opts dopt = { .format = BG_FMT_ADBLOCK };
	struct bg_names names;
	struct bg_list l;
	uint64_t *bm = NULL;
	uint32_t *addr = NULL;
	int fd, err, try;
	size_t i;
	double t;
	FILE *devnull = fopen("/dev/null", "w");

	/* bloomgate, loaded as for an attachment: bloomgate_dns in bg_progs */
	D.bg = skel_load(0); /* bench_dns varies the packet */
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
	D.bgv = skel_load(1);
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
	t = now_s();
	err = bg_filter_plan(BL(&l, NULL, &names), O.target, &D.p);
	D.t_plan = now_s() - t;
	if (err)
		die("bg_filter_plan (names): %s", strerror(-err));

	/* A fixed seed; the next one if ".com" (or ".c") as a subdomains key,
	 * which every non-listed query probes, were a false positive of it
	 * (the queries would then measure the listed path). */
	for (try = 0; try < 16; try++) {
		const struct bg_filter_header *h;
		__u64 suf[2], exact;
		int n, pos;

		D.fseed = (O.seed * 0x9e3779b97f4a7c15ULL ^ 0xd0d0ULL) + (uint64_t)try;
		t = now_s();
		D.filter_fd = bg_filter_create(&D.p, D.fseed, BL(&l, NULL, &names));
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
		bg_name_hashes("com", h->seed, &exact, suf, &n);
		pos = bg_probe_hash(D.fmem, h, bg_name_key_hash(BG_KEY_NAME_SUBS,
								suf[0], h->seed));
		bg_name_hashes("c", h->seed, &exact, suf, &n); /* the 127-label name's */
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
		uint32_t pr, rej;

		if (e->allow)
			continue;
		if (e->kind == BG_NAME_SUBS)
			snprintf(child, sizeof(child), "x.%s", e->name);
		D.fn_checked++;
		if (!dns_judge(D.fmem, e->kind == BG_NAME_SUBS ? child : e->name,
			       &pr, &rej))
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

/* ---- DNS output --------------------------------------------------------- */

static double dmed(const struct dvar *v)
{
	return ROUNDS_MEDIAN(v->timed, O.dns_rounds, ns);
}

/* Interquartile range of the per-round ns. */
static double diqr(const struct dvar *v)
{
	return ROUNDS_STAT(iqr, v->timed, O.dns_rounds, ns);
}

static double dmed_cpu(const struct dvar *v)
{
	return ROUNDS_MEDIAN(v->timed, O.dns_rounds, cpu_ns);
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

	printf("### DNS queries\n\n");
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
	       "parentheses). The exact key hashes the lowercased wire name in "
	       "32-byte stripes, and only the labels of the suffixes probed "
	       "(at most %d, the deepest `subs_depths` bit) are hashed, each as "
	       "8 words of 64 bits read in place (bloomgate/dns.h, bpf/dns.h); "
	       "what is left per label is the walk that checks it, 8 labels a "
	       "`bpf_loop()` round.\n\n", BG_DNS_SUFFIX_MAX);
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
		/* the per-packet bound: the worst name against a 30-byte one */
		const struct dvar *w = dfind(DK_QUERY, D.tail ? DT_XDP : DT_DNS,
					     DS_WORST, 255);
		const struct dvar *t = dfind(DK_QUERY, D.tail ? DT_XDP : DT_DNS,
					     DS_SHORT, 30);

		if (w && t && dnet(t) > 0 && dmed_cpu(t) > 0)
			printf("| worst name / 30-byte name (ratio, not ns) | "
			       "127-label row / the 30-byte row of labels <= 9 "
			       "bytes (%d labels), not listed, net ns | %.2fx "
			       "(%.2fx) |\n",
			       t->labels, dnet(w) / dnet(t),
			       dmed_cpu(w) / dmed_cpu(t));
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
	       "`dns_queries`, `dns_probes`, `dns_positives`, `dns_negatives`, "
	       "`dns_bloom_false_positives` and (through `bloomgate_xdp`) "
	       "`packets`, `probes`, `positives`, `negatives`, "
	       "`bloom_false_positives`, `passed`, `dropped`, `answered` moved "
	       "exactly as "
	       "userspace computes for the same names and addresses (builder's "
	       "`bg_name_hashes`, bloomgate/lookup.h on the live filter; an "
	       "address positive is dropped, a listed name answered); the last "
	       "iteration's verdict, name and address are the expected ones; "
	       "every listed name matches: %s. Section time %.1f s.\n",
	       D.nv, O.dns_rounds,
	       D.mismatches ? "**MISMATCH** (see stderr)" : "all held",
	       D.t_section);
}

const struct section sec_dns = {
	.name = "dns",
	.run = dns_bench,
	.print = print_dns,
	.checks = print_dns_checks,
};
