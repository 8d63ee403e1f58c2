// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The array grower (user/core/grow.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"

int bg_grow(void *pp, size_t *cap, size_t need, size_t elem, size_t min)
{
	size_t ncap = *cap ? *cap : (min ? min : 8);
	void *p, *np;

	if (need <= *cap)
		return 0;
	if (!elem)
		return -EINVAL;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	memcpy(&p, pp, sizeof(p));
	np = realloc(p, ncap * elem);
	if (!np)
		return -ENOMEM;
	memcpy(pp, &np, sizeof(np));
	*cap = ncap;
	return 0;
}
