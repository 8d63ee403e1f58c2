// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SHA-256 helpers (core/sha.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/sha.h"

/* read(2) size of a file hashed */
#define SHA_FILE_CHUNK (1u << 20)

void bg_sha256(const void *data, size_t len, uint8_t out[BG_SHA_LEN])
{
	unsigned int n = BG_SHA_LEN;

	EVP_Digest(data, len, out, &n, EVP_sha256(), NULL);
}

void bg_hex(const uint8_t *d, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[2 * n] = 0;
}

int bg_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int bg_unhex(const char *s, size_t n, uint8_t *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int hi = bg_hexval((unsigned char)s[2 * i]), lo;

		/* the second digit is read only after the first: a string
		 * shorter than 2n ends at its NUL, which is no digit */
		if (hi < 0 || (lo = bg_hexval((unsigned char)s[2 * i + 1])) < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

void bg_sha_hex(const uint8_t sha[BG_SHA_LEN], char out[65])
{
	bg_hex(sha, BG_SHA_LEN, out);
}

int bg_sha_hex_ok(const char *s)
{
	size_t i;

	for (i = 0; i < 2 * BG_SHA_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return !s[2 * BG_SHA_LEN];
}

int bg_sha_unhex(const char *s, uint8_t out[BG_SHA_LEN])
{
	return bg_sha_hex_ok(s) ? bg_unhex(s, BG_SHA_LEN, out) : -EINVAL;
}

int bg_sha256_file(const char *path, char out[65])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	uint8_t *buf = malloc(SHA_FILE_CHUNK), d[BG_SHA_LEN];
	unsigned int dn = 0;
	ssize_t n;
	int fd = -1, ret = 0;

	if (!md || !buf || !EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
		ret = -ENOMEM;
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	while ((n = read(fd, buf, SHA_FILE_CHUNK)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		EVP_DigestUpdate(md, buf, (size_t)n);
	}
	EVP_DigestFinal_ex(md, d, &dn);
	bg_hex(d, dn, out);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	EVP_MD_CTX_free(md);
	return ret;
}
