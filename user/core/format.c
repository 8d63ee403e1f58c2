// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Names of the list formats (user/core/format.h). */
#include <string.h>

#include "core/format.h"

static const char *const format_names[BG_FMT__COUNT] = {
	[BG_FMT_AUTO] = "auto", [BG_FMT_ADDR] = "addr",
	[BG_FMT_PLAIN] = "plain", [BG_FMT_HOSTS] = "hosts",
	[BG_FMT_ADBLOCK] = "adblock",
};

const char *bg_format_name(int format)
{
	return format >= 0 && format < BG_FMT__COUNT ? format_names[format]
						     : "?";
}

int bg_format_parse(const char *s)
{
	int i;

	for (i = 0; s && i < BG_FMT__COUNT; i++)
		if (!strcmp(s, format_names[i]))
			return i;
	return -1;
}
