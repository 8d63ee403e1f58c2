// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: format detection (user/core/sources.c bg_format_detect,
 * user/core/domains.c bg_dom_detect) and the per-line classifier it uses
 * (bg_list_line_kind, bg_list_scan). Detection must name a real format for
 * any bytes, never BG_FMT_AUTO, and a domain format for the domain
 * detector; its evidence (bg_format_detect_ev) must agree with it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/domains.h"
#include "core/lists.h"
#include "core/sources.h"

static void count_entry(void *ctx, size_t line, const char *text,
			const struct bg_key4 *k4, const struct bg_key6 *k6)
{
	(void)line;
	(void)text;
	if (!k4 == !k6)
		abort(); /* an entry is one address, of one family */
	(*(size_t *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	enum bg_format f = bg_format_detect(buf, size);
	enum bg_format d = bg_dom_detect(buf, size);
	size_t entries = 0;
	struct bg_format_evidence ev;
	char words[256];
	int i;

	if (f == BG_FMT_AUTO || !bg_format_name(f))
		abort();
	if (d != BG_FMT_PLAIN && d != BG_FMT_HOSTS && d != BG_FMT_ADBLOCK)
		abort();
	/* the evidence chose the same, and counts only lines it looked at */
	if (bg_format_detect_ev(buf, size, &ev) != f || ev.format != f ||
	    ev.lines > BG_FMT_DETECT_LINES)
		abort();
	for (i = 0; i < BG_FMT__COUNT; i++)
		if (ev.n[i] > ev.lines)
			abort();
	(void)bg_format_evidence_text(&ev, words, sizeof(words));
	(void)bg_list_scan(buf, size, count_entry, &entries);
	if (entries > size / 2 + 1)
		abort(); /* an entry takes at least two bytes of its own */
	(void)bg_list_line_kind(buf, buf + size, memchr(buf, 0, size) != NULL);
	return 0;
}
