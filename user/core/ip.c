// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Address tokens (user/core/ip.h). */
#include <arpa/inet.h>
#include <string.h>

#include "core/ip.h"

/*
 * Dotted-quad IPv4, the inet_pton(AF_INET) grammar: exactly four decimal
 * octets of 0..255, no leading zeros ("0" alone is fine), nothing else.
 * Returns 0 and the address in network byte order, or -1.
 */
int bg_parse_ip4(const char *s, size_t n, __u32 *addr_be)
{
	__u32 addr = 0, oct = 0;
	unsigned int dots = 0, digits = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned int c = (unsigned char)s[i];

		if (c - '0' <= 9) {
			if (digits && !oct)
				return -1; /* leading zero */
			oct = oct * 10 + (c - '0');
			if (oct > 255)
				return -1;
			digits++;
		} else if (c == '.') {
			if (!digits || dots == 3)
				return -1;
			addr = addr << 8 | oct;
			oct = 0;
			digits = 0;
			dots++;
		} else {
			return -1;
		}
	}
	if (!digits || dots != 3)
		return -1;
	*addr_be = htonl(addr << 8 | oct);
	return 0;
}

/* IPv6 through inet_pton(); the token is copied to be NUL-terminated. */
int bg_parse_ip6(const char *s, size_t n, __u8 addr[16])
{
	char tmp[INET6_ADDRSTRLEN];

	if (n == 0 || n >= sizeof(tmp))
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	return inet_pton(AF_INET6, tmp, addr) == 1 ? 0 : -1;
}

