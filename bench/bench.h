/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What bench/bench.bpf.c and the userspace benchmark (bench/main.c and the
 * section files beside it) both know: the indices of bench_pos[], the LCGs
 * that vary the packet, bench_dns's frame limits and the LPM trie key.
 * Included by clang -target bpf too: plain C and fixed-width types only,
 * no libc.
 */
#ifndef BLOOMGATE_BENCH_H
#define BLOOMGATE_BENCH_H

#include <linux/types.h>

/* Indices into bench_pos[], one positive counter per baseline program. */
enum {
	BP_PASS,
	BP_CLASSIC,
	BP_KBLOOM,
	BP_HASH,
	BP_BLOCKED,
	BP_BLOCKED_INNER,
	BP_BLOCKED_FIXED,
	BP_LPM,
	BP__COUNT,
};

/*
 * The address step after every probe, on the host-order IPv4 destination:
 * a = a * BENCH_LCG_MUL + BENCH_LCG_ADD (full period 2^32). The same step
 * as bg_bench_step() in bpf/bloomgate.bpf.c, so that bloomgate and the
 * baselines walk the same addresses.
 */
#define BENCH_LCG_MUL 2654435761U
#define BENCH_LCG_ADD 1U

/*
 * bench_dns (DNS section): it rewrites the first BD_RESTORE bytes of the
 * frame from bd_tmpl, varies up to BD_VARY_MAX name bytes and steps a
 * 64-bit LCG (MMIX constants: full period 2^64) each iteration.
 */
#define BD_RESTORE 64
#define BD_VARY_MAX 8
#define BD_LCG_MUL 6364136223846793005ULL
#define BD_LCG_ADD 1442695040888963407ULL

/* Key of the LPM trie (variant (i)) as the kernel wants it: prefix length,
 * then the address in network byte order. */
struct bench_lpm_key4 {
	__u32 prefixlen;
	__u32 addr;
};

#endif /* BLOOMGATE_BENCH_H */
