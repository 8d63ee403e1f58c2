/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DNS names in wire form as text: what `events` prints for a flagged query
 * (struct bg_name_event). Presentation, not list parsing: it depends on
 * nothing else in user/.
 */
#ifndef BLOOMGATE_WIRE_H
#define BLOOMGATE_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* Room for any name bg_name_from_wire() writes, NUL included. */
#define BG_NAME_TEXT_MAX 1024

/*
 * A DNS name in wire form (length-prefixed labels ending with the root
 * byte, as in struct bg_name_event) to text: labels joined by '.', letters,
 * digits, '-' and '_' as they are, every other byte (a '.' or a blank
 * inside a label, control bytes, bytes >= 0x80) as \DDD, the RFC 1035
 * presentation form; the root alone is ".". Reads at most len bytes and
 * never more than a name's 255; writes at most outlen bytes, NUL
 * included. Returns the length written, or -1 when the bytes are not a
 * name (a compression pointer or reserved label type, a label running past
 * len, no root byte within len or 255 bytes) or out is too small
 * (BG_NAME_TEXT_MAX is always enough).
 */
int bg_name_from_wire(const uint8_t *wire, size_t len, char *out,
		      size_t outlen);

#endif
