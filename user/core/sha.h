/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * SHA-256, one set of helpers for every part that checksums (list copies,
 * provenance indexes, filter artifacts): libcrypto's EVP underneath.
 * Core part: no libbpf.
 */
#ifndef BLOOMGATE_CORE_SHA_H
#define BLOOMGATE_CORE_SHA_H

#include <stddef.h>
#include <stdint.h>

#define BG_SHA_LEN 32

/* SHA-256 of one buffer. */
void bg_sha256(const void *data, size_t len, uint8_t out[BG_SHA_LEN]);
/* Lowercase hex of n bytes into out (2n + 1 bytes with the NUL). */
void bg_hex(const uint8_t *d, size_t n, char *out);
/* The value of one hex digit (either case), -1 for another byte. */
int bg_hexval(int c);
/* n bytes from the 2n hex digits at s (either case): 0, or -EINVAL (a
 * byte that is not a digit; out then holds what came before it). */
int bg_unhex(const char *s, size_t n, uint8_t *out);
/* Hex of a digest (65 bytes with the NUL). */
void bg_sha_hex(const uint8_t sha[BG_SHA_LEN], char out[65]);
/* 1 when s is a digest as bg_sha_hex() writes it: 64 lowercase hex digits
 * and the NUL. */
int bg_sha_hex_ok(const char *s);
/* The digest a bg_sha_hex_ok() string spells, into out; -EINVAL (out
 * untouched) when it is not one. */
int bg_sha_unhex(const char *s, uint8_t out[BG_SHA_LEN]);
/* SHA-256 of the file at path, as hex, into out: what a fetch records of a
 * copy, the provenance index of what it indexes, and an artifact of each
 * list it is built from. 0 or -errno (-ENOENT: no such file). */
int bg_sha256_file(const char *path, char out[65]);

#endif
