// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * genaddrs: N distinct IPv4 addresses, one a line, for the scale section
 * of `make bench` (bench/scale.sh).
 *
 *   genaddrs [-s SEED] [-k SKIP] N
 *
 * Address i is f(i) for i = 0, 1, 2, ... where f is a bijection of the
 * 32-bit integers (an offset from the seed, then a xorshift-multiply
 * mixer: every step is invertible mod 2^32), so no two are equal. Values
 * in 0.0.0.0/8, 127.0.0.0/8 and 224.0.0.0/3 (multicast, reserved,
 * broadcast) are skipped, so every line is a unicast address; `bloomgate
 * load` takes any dotted quad as a /32, this only keeps the lists
 * plausible. The first SKIP addresses of the sequence are skipped too:
 * `-k N` gives addresses that are in no list of N or fewer lines with the
 * same seed, and a list of N lines is the first N lines of any longer one.
 *
 * Output is formatted from two tables of "0." .. "255." and "0\n" ..
 * "255\n" into a 1 MiB buffer written with write(2): about 200M lines a
 * second into /dev/null on one core here; into a new file on disk the
 * kernel's page-cache writes bound it (100M lines, 1.4 GB: 0.7-3.3 s).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_SIZE (1U << 20)

struct oct {
	char s[4]; /* "255." or "255\n", unused bytes zero */
	uint8_t len;
};

static struct oct mid[256], last[256];

static void tables(void)
{
	char t[8];
	int i;

	for (i = 0; i < 256; i++) {
		mid[i].len = (uint8_t)snprintf(t, sizeof(t), "%d.", i);
		memcpy(mid[i].s, t, mid[i].len);
		last[i].len = (uint8_t)snprintf(t, sizeof(t), "%d\n", i);
		memcpy(last[i].s, t, last[i].len);
	}
}

/* lowbias32 (C. Wellons): xorshifts and odd multiplies, a bijection. */
static inline uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

static inline int unicast(uint32_t a)
{
	uint32_t top = a >> 24;

	return top != 0 && top != 127 && top < 224;
}

static int write_all(const char *b, size_t n)
{
	while (n) {
		ssize_t w = write(STDOUT_FILENO, b, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int number(const char *s, unsigned long long *v)
{
	char *end;

	errno = 0;
	if (!*s || *s == '-')
		return -1;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: genaddrs [-s SEED] [-k SKIP] N\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long seed = 20260901, skip = 0, n, done = 0;
	uint64_t i, offset;
	char *buf, *p, *end;
	int c;

	while ((c = getopt(argc, argv, "s:k:h")) != -1) {
		switch (c) {
		case 's':
			if (number(optarg, &seed))
				usage();
			break;
		case 'k':
			if (number(optarg, &skip))
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || number(argv[optind], &n))
		usage();
	tables();
	buf = malloc(BUF_SIZE);
	if (!buf) {
		perror("genaddrs");
		return 1;
	}
	offset = mix((uint32_t)seed ^ (uint32_t)(seed >> 32) ^ 0x9e3779b9U);
	p = buf;
	end = buf + BUF_SIZE - 16; /* room for one more line */
	for (i = 0; done < n && i < (1ULL << 32); i++) {
		uint32_t a = mix((uint32_t)(i + offset));
		const struct oct *o;

		if (!unicast(a))
			continue;
		if (skip) {
			skip--;
			continue;
		}
		/* 4 bytes copied each time, the pointer moved by the length */
		o = &mid[a >> 24];
		memcpy(p, o->s, 4);
		p += o->len;
		o = &mid[(a >> 16) & 255];
		memcpy(p, o->s, 4);
		p += o->len;
		o = &mid[(a >> 8) & 255];
		memcpy(p, o->s, 4);
		p += o->len;
		o = &last[a & 255];
		memcpy(p, o->s, 4);
		p += o->len;
		done++;
		if (p >= end) {
			if (write_all(buf, (size_t)(p - buf)))
				goto fail;
			p = buf;
		}
	}
	if (p > buf && write_all(buf, (size_t)(p - buf)))
		goto fail;
	free(buf);
	if (done < n) {
		fprintf(stderr, "genaddrs: only %llu unicast addresses after the skip\n", done);
		return 1;
	}
	return 0;
fail:
	if (errno != EPIPE)
		perror("genaddrs: write");
	free(buf);
	return 1;
}
