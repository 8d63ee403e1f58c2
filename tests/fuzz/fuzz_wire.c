// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: DNS names in wire form, as the datapath sees them
 * (user/core/wire.c bg_name_from_wire, include/bloomgate/dns.h). Differential:
 * for a name whose labels hold only letters, digits, '-' and '_' (printed
 * as they are), the text that `check` and the events print hashes
 * (bg_name_hashes, the userspace path) to the same exact key as the wire
 * bytes themselves (bg_dns_exact_hash over the lowercased wire form, the
 * datapath's path), with the same label count.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomgate/dns.h"
#include "core/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	__u64 words[BG_DNS_EXACT_MAX / 8] = { 0 }, exact, suf[BG_DNS_LABELS_MAX + 1];
	char text[BG_NAME_TEXT_MAX];
	size_t i = 0, wl;
	int n, labels = 0, plain = 1, r;

	r = bg_name_from_wire(data, size, text, sizeof(text));
	if (r < 0)
		return 0;
	if ((size_t)r != strlen(text))
		abort();
	/* walk the name as the datapath does: lowercase, count labels */
	while (data[i]) {
		size_t l = data[i], k;

		for (k = 1; k <= l; k++) {
			unsigned char c = data[i + k];

			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || c == '-' || c == '_'))
				plain = 0;
		}
		i += l + 1;
		labels++;
	}
	wl = i + 1; /* the root byte */
	if (!labels) {
		if (strcmp(text, "."))
			abort();
		return 0;
	}
	if (!plain)
		return 0;
	for (i = 0; i < wl; i++)
		words[i / 8] |= (__u64)bg_dns_lower(data[i]) << (8 * (i % 8));
	if (bg_name_hashes(text, 7, &exact, suf, &n))
		abort(); /* a name from the wire is a legal name */
	if (n != labels || exact != bg_dns_exact_hash(words, (__u32)wl, 7))
		abort();
	return 0;
}
