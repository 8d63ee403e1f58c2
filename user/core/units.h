/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Quantities as people read them, for reports and messages of every layer
 * (the load pipeline's own messages included, so below user/core/print.h).
 */
#ifndef BLOOMGATE_UNITS_H
#define BLOOMGATE_UNITS_H

#include <stdarg.h>
#include <stddef.h>

/* "1.85 MiB", "12.0 KiB", "512 B". */
void bg_fmt_bytes(char *buf, size_t len, double bytes);

/* One line saying why into why (len bytes; nothing when why is NULL or
 * len 0): the "why" out-parameter of the functions that fail for a reason
 * a person must read. */
void bg_whyf(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same from a va_list (for the wrappers that add to it). */
void bg_vwhyf(char *why, size_t len, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
