// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * artforge: a full artifact with one field forged and the file sealed
 * again as a forger would (tests/artforge.h), for tests/e2e/test_artifact.sh.
 *
 *   artforge --list            the cases: NAME TAB WANT, one a line
 *   artforge IN OUT NAME       IN forged by case NAME into OUT
 *
 * Exit status 0, 1 on an error, 2 for a case that does not apply to IN.
 */
#include <stdio.h>
#include <stdlib.h>

#include "artforge.h"

static int forge(const char *in, const char *out, const char *name)
{
	const struct forge_case *c = forge_find(name);
	FILE *f;
	uint8_t *buf;
	long len;
	int ret;

	if (!c) {
		fprintf(stderr, "artforge: no case %s\n", name);
		return 1;
	}
	f = fopen(in, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		perror(in);
		return 1;
	}
	buf = malloc((size_t)len + 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		perror(in);
		return 1;
	}
	fclose(f);
	ret = forge_apply(buf, (size_t)len, c);
	if (ret) {
		fprintf(stderr, "artforge: case %s does not apply to %s\n", name, in);
		return 2;
	}
	f = fopen(out, "wb");
	if (!f || fwrite(buf, 1, (size_t)len, f) != (size_t)len || fclose(f)) {
		perror(out);
		return 1;
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < FORGE_CASES; i++)
			printf("%s\t%s\n", forge_cases[i].name, forge_cases[i].want);
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: artforge --list | artforge IN OUT CASE\n");
		return 1;
	}
	return forge(argv[1], argv[2], argv[3]);
}
