// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* DNS names in wire form as text (user/core/wire.h). */
#include <stdio.h>
#include <string.h>

#include "bloomgate/dns.h"
#include "core/wire.h"

/* Letters, digits, '-' and '_' stand as they are in a name's text. */
static int plain_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int bg_name_from_wire(const uint8_t *wire, size_t len, char *out,
		      size_t outlen)
{
	size_t i = 0, o = 0, total = 0;

	if (!wire || !out || outlen < 2)
		return -1;
	if (len > BG_DNS_NAME_MAX)
		len = BG_DNS_NAME_MAX; /* a name is never longer */
	for (;;) {
		unsigned int l, k;

		if (i >= len)
			return -1; /* no root byte */
		l = wire[i++];
		if (l == 0)
			break;
		if (l > BG_DNS_LABEL_MAX)
			return -1; /* a pointer (0xc0) or a reserved type */
		if (l > len - i)
			return -1; /* the label runs past the bytes */
		total += 1 + l;
		if (o) {
			if (o + 1 >= outlen)
				return -1;
			out[o++] = '.';
		}
		for (k = 0; k < l; k++) {
			unsigned char c = wire[i + k];

			if (plain_char(c)) {
				if (o + 1 >= outlen)
					return -1;
				out[o++] = (char)c;
			} else {
				/* RFC 1035 5.1 presentation form: \DDD */
				if (o + 4 >= outlen)
					return -1;
				snprintf(out + o, 5, "\\%03u", c);
				o += 4;
			}
		}
		i += l;
	}
	if (total + 1 > BG_DNS_NAME_MAX)
		return -1;
	if (!o)
		out[o++] = '.'; /* the root */
	out[o] = '\0';
	return (int)o;
}

