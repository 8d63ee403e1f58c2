// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The datapath's lookups on a filter in memory (user/core/filter.h): what
 * `check`, the bench and the tests ask a built or mapped filter, with the
 * very code the XDP program runs (bloomgate/lookup.h through
 * user/core/mem_lookup.h).
 */
#include <errno.h>

#include "bloomgate/dns.h"
#include "core/filter.h"
#include "core/protect.h"
#include <string.h>

#include "core/mem_lookup.h"

int bg_filter_judge4(const void *mem, __u32 addr_be, int *rejected)
{
	__u32 probes = 0, rej = 0;
	int r = bg_header_ok(mem) && bg_listed4(mem, mem, addr_be, &probes, &rej);

	if (rejected)
		*rejected = !r && rej;
	return r;
}

int bg_filter_judge6(const void *mem, const __u8 addr[16], int *rejected)
{
	__u32 probes = 0, rej = 0;
	int r = bg_header_ok(mem) && bg_listed6(mem, mem, addr, &probes, &rej);

	if (rejected)
		*rejected = !r && rej;
	return r;
}

int bg_filter_test4(const void *mem, __u32 addr_be)
{
	return bg_filter_judge4(mem, addr_be, NULL);
}

int bg_filter_test6(const void *mem, const __u8 addr[16])
{
	return bg_filter_judge6(mem, addr, NULL);
}

int bg_filter_allowed4(const void *mem, __u32 addr_be)
{
	return bg_header_ok(mem) && bg_allowed4(mem, mem, addr_be);
}

int bg_filter_allowed6(const void *mem, const __u8 addr[16])
{
	return bg_header_ok(mem) && bg_allowed6(mem, mem, addr);
}

/* The protected set's search (bloomgate/lookup.h), as the datapath makes
 * it before it would drop or flag an address. */
int bg_protect_test4(const struct bg_protect_set *s, __u32 addr_be)
{
	return bg_protect_has4(s, __builtin_bswap32(addr_be));
}

int bg_protect_test6(const struct bg_protect_set *s, const __u8 addr[16])
{
	return bg_protect_has6(s, bg_be64_to_host(addr), bg_be64_to_host(addr + 8));
}

/*
 * Names: bloomgate_dns's own probe (bg_name_listed) and allow check
 * (bg_name_allow_round, in bg_name_allowlisted's rounds) on the suffix
 * hashes of the dotted name. Returns -1 for a name that is not legal, 0
 * when the filter is not probed for names (no name keys: the bits would
 * answer at their false-positive rate), else 1 with *label the index of
 * the matching key's first label (0: the whole name), or 0. *probes
 * counts the Bloom probes (0 for the allow check); *rejected is 1 when a
 * Bloom positive was rejected by the exact stage and nothing confirmed.
 */
static int name_lookup(const void *mem, const char *name, int allowed,
		       int *label, __u32 *probes, int *rejected)
{
	const struct bg_filter_header *h = mem;
	__u64 suf[BG_NAME_SUF_SIZE], exact;
	__u32 dummy, at = 0, rej = 0;
	int n, r;

	if (!probes)
		probes = &dummy;
	*probes = 0;
	if (rejected)
		*rejected = 0;
	if (bg_name_hashes(name, h->seed, &exact, suf, &n))
		return -1;
	if (!bg_header_ok(h) || !(h->flags & BG_FILTER_F_NAMES) || !h->nblocks)
		return 0;
	if (allowed)
		r = bg_name_allowlisted(mem, h, exact, suf, (__u32)n, &at);
	else
		r = bg_name_listed(mem, h, exact, suf, (__u32)n, &at, probes,
				   &rej);
	if (r && label)
		*label = (int)at;
	if (rejected)
		*rejected = !r && rej;
	return r;
}

int bg_filter_test_name(const void *mem, const char *name, int *label)
{
	return name_lookup(mem, name, 0, label, NULL, NULL);
}

int bg_filter_test_name_probes(const void *mem, const char *name, int *label,
			       __u32 *probes)
{
	return name_lookup(mem, name, 0, label, probes, NULL);
}

int bg_filter_judge_name(const void *mem, const char *name, int *label,
			 __u32 *probes, int *rejected)
{
	return name_lookup(mem, name, 0, label, probes, rejected);
}

int bg_filter_name_allowed(const void *mem, const char *name, int *label)
{
	return name_lookup(mem, name, 1, label, NULL, NULL);
}

/* The build and its header check (filter.h): here, where the lookups
 * (and bg_header_ok) are, rather than in filter.c, which they include. */
int bg_filter_build_seeded(void *mem, const struct bg_filter_params *p,
			   uint64_t seed, const struct bg_blocklist *bl,
			   unsigned int threads)
{
	int err, try;

	/* The exact stage may (never seen at its planned load) fail to place a
	 * key with one seed: another seed, up to 3 more times. The header
	 * holds the seed the filter was built with. */
	for (try = 0;; try++) {
		err = bg_filter_build_mt(mem, p,
					 try ? bg_hash64_u64(seed, try) : seed, bl,
					 threads);
		if (err != -EAGAIN || try == 3)
			break;
		memset(mem, 0, p->bytes);
	}
	if (err)
		return err == -EAGAIN ? -ENOSPC : err;
	/* The datapath tests only the header's first word per packet
	 * (bg_header_current): the rest is checked here, once. */
	return bg_header_ok(mem) ? 0 : -EINVAL;
}
