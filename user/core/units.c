// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Quantities as text (user/core/units.h). */
#include <stdarg.h>
#include <stdio.h>

#include "core/units.h"

void bg_fmt_bytes(char *buf, size_t len, double b)
{
	if (b >= 1 << 20)
		snprintf(buf, len, "%.2f MiB", b / (1 << 20));
	else if (b >= 1 << 10)
		snprintf(buf, len, "%.1f KiB", b / (1 << 10));
	else
		snprintf(buf, len, "%.0f B", b);
}

void bg_vwhyf(char *why, size_t len, const char *fmt, va_list ap)
{
	if (why && len)
		vsnprintf(why, len, fmt, ap);
}

void bg_whyf(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bg_vwhyf(why, len, fmt, ap);
	va_end(ap);
}
