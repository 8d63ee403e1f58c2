/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one array grower: every "n == cap: double it" of every layer.
 */
#ifndef BLOOMGATE_GROW_H
#define BLOOMGATE_GROW_H

#include <stddef.h>

/* Makes room for need elements of elem bytes in the array whose address is
 * at pp (a T ** passed as void *: &v), of *cap elements: the capacity
 * doubles from min (0: 8) until it holds need. 0 (nothing done when it
 * already holds need); -ENOMEM when the size overflows or realloc() fails,
 * the array and *cap then untouched. */
int bg_grow(void *pp, size_t *cap, size_t need, size_t elem, size_t min);

#endif
