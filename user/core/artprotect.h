/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The protected set (core/protect.h) against an artifact (core/artifact.h),
 * built elsewhere and loaded byte for byte: which protected addresses its
 * filter lists, and in which of its lists. Core: no libbpf.
 */
#ifndef BLOOMGATE_CORE_ARTPROTECT_H
#define BLOOMGATE_CORE_ARTPROTECT_H

#include "core/artifact.h"
#include "core/protect.h"

/*
 * The covers of an artifact's filter: each protected address (a prefix:
 * its first address) probed with the datapath's own lookups against the
 * artifact's filter image (an allowlisted one covers nothing), and the
 * list entries behind a positive named from its index (their list, no
 * line) where it has one. 0 or -ENOMEM.
 */
int bg_protect_art_covers(const struct bg_art *a, const struct bg_protect_set *s,
			  struct bg_protect_covers *c);

#endif
