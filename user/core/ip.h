/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Address tokens, at the bottom of the core: the address-list parser reads
 * entries with them, the domain-list parser the addresses of hosts-file
 * lines, and `check` its arguments.
 */
#ifndef BLOOMGATE_IP_H
#define BLOOMGATE_IP_H

#include <stddef.h>
#include <linux/types.h>

/* Tokens of n bytes: dotted-quad IPv4 with the inet_pton grammar (network
 * byte order out), IPv6 through inet_pton. 0, or -1. */
int bg_parse_ip4(const char *s, size_t n, __u32 *addr_be);
int bg_parse_ip6(const char *s, size_t n, __u8 addr[16]);

#endif
