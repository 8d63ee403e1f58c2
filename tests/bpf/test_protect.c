// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * BPF_PROG_TEST_RUN tests of the protected set (bloomgate/abi.h): a
 * listed address the set holds passes, counted as protected, for every
 * --match and --action; the address beside it is still dropped; the
 * allowlist is asked first; a set published anew (two halves, one flip)
 * is the one the next packet sees. The datapath's search is held to a
 * model (every item's prefix compared) over random sets and addresses,
 * and every attach configuration must still pass the verifier.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bloomgate/abi.h"
#include "core/filter.h"
#include "core/lists.h"
#include "core/protect.h"
#include "kern/protect.h"
#include "kern/swap.h"

#include "blocklist.h"
#include "pktgen.h"
#include "verdict_names.h"
#include "bloomgate.skel.h"

/* Listed: two /24s and a /32 of IPv6; 198.51.100.77 allowlisted. */
static const char LIST[] = "192.0.2.0/24\n198.51.100.0/24\n2001:db8::/32\n";
static const char ALLOW[] = "198.51.100.77\n";
/* Outside anything listed: the other end of every packet. */
#define OUT4 "203.0.113.9"
#define OUT6 "fd00::9"

struct fx {
	struct bloomgate *skel;
	int prog, filters, stats, protect;
	struct ring_buffer *rb;
	int nev;
};

struct cfg {
	__u8 match, action;
};

static struct cfg CFG_DST_DROP = { BG_MATCH_DST, BG_ACTION_DROP };
static struct cfg CFG_SRC_DROP = { BG_MATCH_SRC, BG_ACTION_DROP };
static struct cfg CFG_BOTH_DROP = { BG_MATCH_BOTH, BG_ACTION_DROP };
static struct cfg CFG_DST_FLAG = { BG_MATCH_DST, BG_ACTION_FLAG };

static int on_event(void *ctx, void *data, size_t len)
{
	struct fx *f = ctx;

	(void)data;
	(void)len;
	f->nev++;
	return 0;
}

/* A filter of list (wide prefixes allowed) and allow, published. */
static void publish_filter(struct fx *f, const char *list, const char *allow)
{
	struct bg_list_opts o = { .strict = 1, .allow_wide = 1 };
	struct bg_filter_params p;
	struct bg_list b, a;
	int fd;

	bg_list_init(&b);
	bg_list_init(&a);
	assert_int_equal(bg_list_parse_buf(&b, "block", list, strlen(list), &o), 0);
	if (allow)
		assert_int_equal(bg_list_parse_buf(&a, "allow", allow, strlen(allow), &o), 0);
	bg_list_finish(&b);
	bg_list_finish(&a);
	assert_int_equal(bg_filter_plan(BL(&b, &a, NULL), 1e-6, &p), 0);
	fd = bg_filter_create(&p, 0x5eed5eed5eedULL, BL(&b, &a, NULL));
	assert_true(fd >= 0);
	assert_int_equal(bg_filter_publish(f->filters, fd), 0);
	close(fd);
	bg_list_free(&b);
	bg_list_free(&a);
}

/* The set of the items (text, each of kind BG_PROTECT_GIVEN), live. */
static void publish_set(struct fx *f, const char *const *items, size_t n)
{
	static struct bg_protect_set s;
	struct bg_protect_item it;
	const char *why = NULL;
	size_t i;

	bg_protect_init(&s);
	for (i = 0; i < n; i++) {
		if (bg_protect_parse(items[i], BG_PROTECT_GIVEN, &it, &why))
			fail_msg("%s: %s", items[i], why);
		assert_int_equal(bg_protect_add(&s, &it), 0);
	}
	bg_protect_finish(&s);
	assert_int_equal(bg_protect_publish(f->protect, &s), 0);
}

static const char *const SET[] = { "192.0.2.1", "2001:db8::1", "198.51.100.77",
				   "198.51.100.128/25" };

static int fx_setup(void **state)
{
	const struct cfg *c = *state;
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->skel = bloomgate__open();
	assert_non_null(f->skel);
	f->skel->rodata->cfg_match = c->match;
	f->skel->rodata->cfg_action = c->action;
	assert_int_equal(bloomgate__load(f->skel), 0);
	f->prog = bpf_program__fd(f->skel->progs.bloomgate_xdp);
	f->filters = bpf_map__fd(f->skel->maps.bg_filters);
	f->stats = bpf_map__fd(f->skel->maps.bg_stats);
	f->protect = bpf_map__fd(f->skel->maps.bg_protect);
	f->rb = ring_buffer__new(bpf_map__fd(f->skel->maps.bg_events), on_event, f,
				 NULL);
	assert_non_null(f->rb);
	publish_filter(f, LIST, ALLOW);
	publish_set(f, SET, sizeof(SET) / sizeof(SET[0]));
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	ring_buffer__free(f->rb);
	bloomgate__destroy(f->skel);
	free(f);
	return 0;
}

/* ---- Runs ---------------------------------------------------------------- */

/* The expected delta of every counter (anything not named: 0). */
struct exp {
	__u32 verdict;
	__u64 cnt[BG_CNT__COUNT];
};

static struct exp e_of(__u32 verdict, int fam)
{
	struct exp e = { .verdict = verdict };

	e.cnt[BG_CNT_PACKETS] = 1;
	e.cnt[fam] = 1;
	e.cnt[verdict == XDP_DROP ? BG_CNT_DROPPED : BG_CNT_PASSED] = 1;
	return e;
}

/* An address judged with one probe: positive (then protected, allowlisted
 * or acted on) or negative. */
static void judged(struct exp *e, int positive)
{
	e->cnt[BG_CNT_PROBES]++;
	e->cnt[positive ? BG_CNT_POSITIVES : BG_CNT_NEGATIVES]++;
}

static void run(struct fx *f, const char *src, const char *dst,
		const struct exp *e, const char *what)
{
	struct pkt p;
	struct pkt_spec s = { .family = strchr(dst, ':') ? AF_INET6 : AF_INET,
			      .src = src, .dst = dst, .payload = 16 };
	__u8 out[PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);
	struct bg_counters before, after;
	unsigned int i;

	assert_int_equal(pkt_build(&p, &s), 0);
	o.data_in = p.buf;
	o.data_size_in = (__u32)p.len;
	assert_int_equal(bg_counters_read(f->stats, &before), 0);
	f->nev = 0;
	assert_int_equal(bpf_prog_test_run_opts(f->prog, &o), 0);
	assert_true(ring_buffer__consume(f->rb) >= 0);
	assert_int_equal(bg_counters_read(f->stats, &after), 0);
	if (o.retval != e->verdict)
		fail_msg("%s: %s, expected %s", what, xdp_name(o.retval),
			 xdp_name(e->verdict));
	for (i = 0; i < BG_CNT__COUNT; i++)
		if (after.cnt[i] - before.cnt[i] != e->cnt[i])
			fail_msg("%s: counter %s moved by %llu, expected %llu", what,
				 cnt_name(i),
				 (unsigned long long)(after.cnt[i] - before.cnt[i]),
				 (unsigned long long)e->cnt[i]);
	if ((__u64)f->nev != e->cnt[BG_CNT_FLAGGED])
		fail_msg("%s: %d events for %llu flagged", what, f->nev,
			 (unsigned long long)e->cnt[BG_CNT_FLAGGED]);
}

/* dst (listed) protected: passes, counted as a positive and protected. */
static struct exp e_protected(int fam)
{
	struct exp e = e_of(XDP_PASS, fam);

	judged(&e, 1);
	e.cnt[BG_CNT_PROTECTED] = 1;
	return e;
}

static struct exp e_dropped(int fam)
{
	struct exp e = e_of(XDP_DROP, fam);

	judged(&e, 1);
	return e;
}

/* ---- Tests --------------------------------------------------------------- */

/* --match dst: the protected address passes, the one beside it (same
 * listed prefix) is dropped; a protected prefix inside a listed one
 * passes its addresses only. */
static void test_dst_protected(void **state)
{
	struct fx *f = *state;
	struct exp e;

	e = e_protected(BG_CNT_IPV4);
	run(f, OUT4, "192.0.2.1", &e, "192.0.2.1 (protected)");
	e = e_dropped(BG_CNT_IPV4);
	run(f, OUT4, "192.0.2.2", &e, "192.0.2.2 (beside it)");
	run(f, OUT4, "192.0.2.0", &e, "192.0.2.0 (beside it)");
	e = e_protected(BG_CNT_IPV6);
	run(f, OUT6, "2001:db8::1", &e, "2001:db8::1 (protected)");
	e = e_dropped(BG_CNT_IPV6);
	run(f, OUT6, "2001:db8::2", &e, "2001:db8::2 (beside it)");
	run(f, OUT6, "2001:db8::", &e, "2001:db8:: (beside it)");
	e = e_protected(BG_CNT_IPV4);
	run(f, OUT4, "198.51.100.128", &e, "first of a protected /25");
	run(f, OUT4, "198.51.100.255", &e, "last of a protected /25");
	e = e_dropped(BG_CNT_IPV4);
	run(f, OUT4, "198.51.100.127", &e, "just before a protected /25");
}

/* The allowlist is asked first: an address both allow and protect pass
 * is counted as allowlisted, not protected. */
static void test_allow_first(void **state)
{
	struct fx *f = *state;
	struct exp e = e_of(XDP_PASS, BG_CNT_IPV4);

	judged(&e, 1);
	e.cnt[BG_CNT_ALLOWLISTED] = 1;
	run(f, OUT4, "198.51.100.77", &e, "allowlisted and protected");
}

/* --action flag: a protected address is neither flagged nor sent as an
 * event; the one beside it is. */
static void test_flag_protected(void **state)
{
	struct fx *f = *state;
	struct exp e = e_protected(BG_CNT_IPV4);

	run(f, OUT4, "192.0.2.1", &e, "flag: 192.0.2.1 (protected)");
	e = e_of(XDP_PASS, BG_CNT_IPV4);
	judged(&e, 1);
	e.cnt[BG_CNT_FLAGGED] = 1;
	run(f, OUT4, "192.0.2.2", &e, "flag: 192.0.2.2 (beside it)");
}

/* --match src: the protected source passes, its neighbour is dropped. */
static void test_src_protected(void **state)
{
	struct fx *f = *state;
	struct exp e = e_protected(BG_CNT_IPV4);

	run(f, "192.0.2.1", OUT4, &e, "src 192.0.2.1 (protected)");
	e = e_dropped(BG_CNT_IPV4);
	run(f, "192.0.2.2", OUT4, &e, "src 192.0.2.2");
	e = e_protected(BG_CNT_IPV6);
	run(f, "2001:db8::1", OUT6, &e, "src 2001:db8::1 (protected)");
}

/* --match both: a protected destination does not let a listed source
 * through (each address is judged for itself); with an unlisted source it
 * passes. */
static void test_both(void **state)
{
	struct fx *f = *state;
	struct exp e = e_protected(BG_CNT_IPV4);

	judged(&e, 0);
	run(f, OUT4, "192.0.2.1", &e, "dst protected, src unlisted");
	e = e_protected(BG_CNT_IPV4);
	e.verdict = XDP_DROP;
	e.cnt[BG_CNT_PASSED] = 0;
	e.cnt[BG_CNT_DROPPED] = 1;
	judged(&e, 1);
	run(f, "192.0.2.2", "192.0.2.1", &e, "dst protected, src listed");
	e = e_protected(BG_CNT_IPV4);
	e.cnt[BG_CNT_PROTECTED] = 2;
	judged(&e, 1);
	run(f, "192.0.2.1", "198.51.100.200", &e, "both protected");
}

/* A set published anew is the one the next packet sees (one flip of its
 * halves); the same set again changes nothing, not even the half. */
static void test_republish(void **state)
{
	static const char *const fewer[] = { "2001:db8::1" };
	struct fx *f = *state;
	struct bg_protect_map *m = malloc(sizeof(*m));
	__u32 zero = 0, sel;
	struct exp e;

	assert_non_null(m);
	assert_int_equal(bpf_map_lookup_elem(f->protect, &zero, m), 0);
	sel = m->sel;
	publish_set(f, fewer, 1);
	assert_int_equal(bpf_map_lookup_elem(f->protect, &zero, m), 0);
	assert_int_equal(m->sel & 1, !(sel & 1));
	e = e_dropped(BG_CNT_IPV4);
	run(f, OUT4, "192.0.2.1", &e, "192.0.2.1, no longer protected");
	e = e_protected(BG_CNT_IPV6);
	run(f, OUT6, "2001:db8::1", &e, "2001:db8::1, still protected");
	sel = m->sel;
	publish_set(f, fewer, 1);
	assert_int_equal(bpf_map_lookup_elem(f->protect, &zero, m), 0);
	assert_int_equal(m->sel, sel);
	publish_set(f, SET, sizeof(SET) / sizeof(SET[0]));
	e = e_protected(BG_CNT_IPV4);
	run(f, OUT4, "192.0.2.1", &e, "192.0.2.1, protected again");
	free(m);
}

/* ---- The search against a model ------------------------------------------- */

static uint64_t rnd_state = 0x243f6a8885a308d3ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* 1 if an item of s covers the address: every item compared. */
static int model(const struct bg_protect_set *s, int fam, const __u8 *a)
{
	__u32 i;

	for (i = 0; i < s->nitems; i++) {
		const struct bg_protect_item *it = &s->item[i];
		struct bg_key4 k4;
		struct bg_key6 k6;
		__u32 a4;

		if (it->family != fam)
			continue;
		if (fam == BG_KEY_IPV4) {
			memcpy(&k4.addr, it->addr, 4);
			k4.plen = it->plen;
			memcpy(&a4, a, 4);
			if (bg_prefix_covers4(&k4, a4))
				return 1;
		} else {
			memcpy(k6.addr, it->addr, 16);
			k6.plen = it->plen;
			if (bg_prefix_covers6(&k6, a))
				return 1;
		}
	}
	return 0;
}

/* An address near a random item (its first or last address, one before
 * or after, or random inside or near): where a search goes wrong. */
static void near_item(const struct bg_protect_set *s, int fam, __u8 *a)
{
	const struct bg_protect_item *it;
	unsigned int n = fam == BG_KEY_IPV4 ? 4 : 16, i, tries;
	int carry;

	for (tries = 0; tries < 64; tries++) {
		it = &s->item[rnd() % s->nitems];
		if (it->family == fam)
			break;
	}
	memcpy(a, it->addr, n);
	switch (rnd() % 4) {
	case 0: /* the first, or one before it */
		if (rnd() & 1)
			for (i = n, carry = 1; i-- > 0 && carry;)
				carry = a[i]-- == 0;
		break;
	case 1: /* the last, or one after it */
		for (i = 0; i < n; i++) {
			unsigned int bits = it->plen > i * 8 ? it->plen - i * 8 : 0;

			a[i] |= bits >= 8 ? 0 : (__u8)(0xff >> bits);
		}
		if (rnd() & 1)
			for (i = n, carry = 1; i-- > 0 && carry;)
				carry = ++a[i] == 0;
		break;
	default: /* anywhere in its /plen-4 */
		for (i = 0; i < n; i++)
			if (i * 8 + 8 > (unsigned int)(it->plen > 4 ? it->plen - 4 : 0))
				a[i] ^= (__u8)rnd();
	}
}

static void test_search_model(void **state)
{
	struct fx *f = *state;
	static struct bg_protect_set s;
	unsigned int round, i, k;

	(void)state;
	/* every address listed: the verdict is the set's alone */
	publish_filter(f, "0.0.0.0/0\n::/0\n", NULL);
	for (round = 0; round < 12; round++) {
		unsigned int n = round < 4 ? round : (unsigned int)(rnd() % BG_PROTECT_MAX) + 1;

		bg_protect_init(&s);
		for (i = 0; i < n; i++) {
			struct bg_protect_item it = { 0 };
			int v4 = rnd() & 1;

			it.family = v4 ? BG_KEY_IPV4 : BG_KEY_IPV6;
			it.plen = (__u8)(v4 ? 8 + rnd() % 25 : 16 + rnd() % 113);
			it.kind = BG_PROTECT_GIVEN;
			for (k = 0; k < 16; k++)
				it.addr[k] = (__u8)rnd();
			/* some near neighbours, so ranges touch and overlap */
			if (s.nitems && rnd() % 4 == 0) {
				memcpy(it.addr, s.item[s.nitems - 1].addr, 16);
				it.family = s.item[s.nitems - 1].family;
				it.plen = s.item[s.nitems - 1].plen;
				it.addr[it.family == BG_KEY_IPV4 ? 3 : 15] ^= (__u8)(rnd() % 4);
			}
			assert_int_equal(bg_protect_add(&s, &it), 0);
		}
		bg_protect_finish(&s);
		assert_int_equal(bg_protect_publish(f->protect, &s), 0);
		for (i = 0; i < 400; i++) {
			int fam = rnd() & 1 ? BG_KEY_IPV4 : BG_KEY_IPV6, want, dp;
			char txt[INET6_ADDRSTRLEN], what[128];
			struct exp e;
			__u8 a[16];
			__u32 a4;

			for (k = 0; k < 16; k++)
				a[k] = (__u8)rnd();
			if (s.nitems && rnd() % 4)
				near_item(&s, fam, a);
			want = model(&s, fam, a);
			memcpy(&a4, a, 4);
			dp = fam == BG_KEY_IPV4 ? bg_protect_test4(&s, a4) :
						  bg_protect_test6(&s, a);
			inet_ntop(fam == BG_KEY_IPV4 ? AF_INET : AF_INET6, a, txt,
				  sizeof(txt));
			if (dp != want)
				fail_msg("round %u (%u items): userspace search says %d "
					 "for %s, the model %d", round, n, dp, txt, want);
			e = want ? e_protected(fam == BG_KEY_IPV4 ? BG_CNT_IPV4 : BG_CNT_IPV6) :
				   e_dropped(fam == BG_KEY_IPV4 ? BG_CNT_IPV4 : BG_CNT_IPV6);
			/* the /0 lives in the short-prefix tables: one lookup */
			snprintf(what, sizeof(what), "round %u (%u items): %s", round, n, txt);
			run(f, fam == BG_KEY_IPV4 ? OUT4 : OUT6, txt, &e, what);
		}
	}
}

/* ---- Every attach configuration verifies ------------------------------------ */

static void test_verifies(void **state)
{
	int match, action, cap, extra, dns;

	(void)state;
	for (match = 1; match <= 3; match++)
	for (action = 1; action <= 2; action++)
	for (cap = 0; cap <= 1; cap++)
	for (extra = 0; extra <= 1; extra++)
	for (dns = BG_DNS_ACTION_DROP; dns <= BG_DNS_ACTION_REFUSED; dns++) {
		struct bloomgate *skel;
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int tmpl = -1, err;

		/* every DNS action with the heaviest address judge only */
		if (dns != BG_DNS_ACTION_NXDOMAIN &&
		    (match != 3 || action != 2 || !cap || !extra))
			continue;
		skel = bloomgate__open();
		assert_non_null(skel);
		skel->rodata->cfg_match = (__u8)match;
		skel->rodata->cfg_action = (__u8)action;
		skel->rodata->cfg_dns_action = (__u8)dns;
		skel->rodata->cfg_chain = (__u8)extra;
		skel->rodata->cfg_unparsed = extra ? BG_UNPARSED_DROP : BG_UNPARSED_PASS;
		if (cap) {
			/* a fixed capacity: the filter lookups inlined */
			LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);

			tmpl = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bg_tmpl", 4,
					      BG_FILTER_VALUE_SIZE, 4096, &o);
			assert_true(tmpl >= 0);
			assert_int_equal(bpf_map__set_inner_map_fd(skel->maps.bg_filters,
								   tmpl), 0);
		}
		err = bloomgate__load(skel);
		if (err)
			fail_msg("match %d action %d capacity %d chain/unparsed %d "
				 "dns-action %d: not loaded (%d)", match, action, cap,
				 extra, dns, err);
		memset(&info, 0, sizeof(info));
		assert_int_equal(bpf_obj_get_info_by_fd(
					 bpf_program__fd(skel->progs.bloomgate_xdp),
					 &info, &len), 0);
		print_message("# match %d action %d capacity %d chain/unparsed %d "
			      "dns-action %d: bloomgate_xdp %u verified insns\n",
			      match, action, cap, extra, dns, info.verified_insns);
		bloomgate__destroy(skel);
		if (tmpl >= 0)
			close(tmpl);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate_setup_teardown(test_dst_protected, fx_setup,
							 fx_teardown, &CFG_DST_DROP),
		cmocka_unit_test_prestate_setup_teardown(test_allow_first, fx_setup,
							 fx_teardown, &CFG_DST_DROP),
		cmocka_unit_test_prestate_setup_teardown(test_flag_protected, fx_setup,
							 fx_teardown, &CFG_DST_FLAG),
		cmocka_unit_test_prestate_setup_teardown(test_src_protected, fx_setup,
							 fx_teardown, &CFG_SRC_DROP),
		cmocka_unit_test_prestate_setup_teardown(test_both, fx_setup,
							 fx_teardown, &CFG_BOTH_DROP),
		cmocka_unit_test_prestate_setup_teardown(test_republish, fx_setup,
							 fx_teardown, &CFG_DST_DROP),
		cmocka_unit_test_prestate_setup_teardown(test_search_model, fx_setup,
							 fx_teardown, &CFG_DST_DROP),
		cmocka_unit_test(test_verifies),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_protect: needs root (BPF_PROG_TEST_RUN)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
