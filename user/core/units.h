/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Quantities as people read them, for reports and messages of every layer
 * (the load pipeline's own messages included, so below user/core/print.h).
 */
#ifndef BLOOMGATE_UNITS_H
#define BLOOMGATE_UNITS_H

#include <stddef.h>

/* "1.85 MiB", "12.0 KiB", "512 B". */
void bg_fmt_bytes(char *buf, size_t len, double bytes);

#endif
