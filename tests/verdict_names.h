/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Names of counters, malformed reasons and XDP verdicts for the BPF tests'
 * messages (tests/bpf/test_datapath.c, tests/bpf/test_diff.c): a slot
 * past the names user/core/counters.c knows is a reserved one.
 */
#ifndef BLOOMGATE_TEST_VERDICT_NAMES_H
#define BLOOMGATE_TEST_VERDICT_NAMES_H

#include <linux/types.h>

#include "core/counters.h"

static inline const char *cnt_name(unsigned int i)
{
	return i < sizeof(bg_counter_names) / sizeof(bg_counter_names[0]) ?
		       bg_counter_names[i] :
		       "(reserved slot)";
}

static inline const char *mal_name(unsigned int i)
{
	return i < sizeof(bg_malformed_names) / sizeof(bg_malformed_names[0]) ?
		       bg_malformed_names[i] :
		       "(reserved slot)";
}

static inline const char *xdp_name(__u32 v)
{
	static const char *const n[] = { "XDP_ABORTED", "XDP_DROP", "XDP_PASS",
					 "XDP_TX", "XDP_REDIRECT" };

	return v < sizeof(n) / sizeof(n[0]) ? n[v] : "XDP_(unknown)";
}

#endif
