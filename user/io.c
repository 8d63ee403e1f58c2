// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading lists and reporting their lines (user/io.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

static const char WARNING[] = "warning: ";

static inline int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

void bg_diag_print(FILE *out, const struct bg_diag *d)
{
	if (!d->line)
		fprintf(out, "%s: %s\n", d->file, d->reason);
	else
		fprintf(out, "%s:%zu: %s%s: '%s'\n", d->file, d->line,
			d->warning ? WARNING : "", d->reason, d->text);
}

static void emit(const struct bg_reporter *r, const struct bg_diag *d)
{
	if (r && r->fn)
		r->fn(r->ctx, d);
	else
		bg_diag_print(r && r->out ? r->out : stderr, d);
}

void bg_report_file(const struct bg_reporter *r, const char *file,
		    const char *reason)
{
	struct bg_diag d = { .file = file, .reason = reason, .text = "" };

	emit(r, &d);
}

/*
 * The text is the line without surrounding blanks, cut to BG_QUOTE_MAX
 * bytes (on a UTF-8 boundary) with "...", control bytes escaped as \xNN so
 * the report stays one printable line.
 */
void bg_report_line(const struct bg_reporter *r, const char *file,
		    size_t lineno, const char *reason, const char *s, size_t n)
{
	char quote[BG_QUOTE_MAX * 4 + 4];
	struct bg_diag d = { .file = file, .line = lineno, .text = quote };
	size_t i, q = 0, cut;

	while (n && is_space(*s))
		s++, n--;
	while (n && is_space(s[n - 1]))
		n--;
	cut = n;
	if (cut > BG_QUOTE_MAX) {
		cut = BG_QUOTE_MAX;
		while (cut && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut--;
	}
	for (i = 0; i < cut; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f) {
			static const char hex[] = "0123456789abcdef";

			quote[q++] = '\\';
			quote[q++] = 'x';
			quote[q++] = hex[c >> 4];
			quote[q++] = hex[c & 15];
		} else {
			quote[q++] = (char)c;
		}
	}
	if (cut < n) {
		memcpy(quote + q, "...", 3);
		q += 3;
	}
	quote[q] = '\0';
	d.warning = !strncmp(reason, WARNING, sizeof(WARNING) - 1);
	d.reason = d.warning ? reason + sizeof(WARNING) - 1 : reason;
	emit(r, &d);
}

/* Whole file into a malloc'd buffer; 0, or -errno. */
static int read_all(int fd, char **bufp, size_t *lenp)
{
	struct stat st;
	size_t cap, len = 0;
	char *buf;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	/* Regular files: one read of the known size (+1 to see EOF). */
	cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1
						     : 64 * 1024;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (len == cap) {
			char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2)
						       : NULL;

			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			free(buf);
			return -err;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

int bg_read_file(const char *path, char **bufp, size_t *lenp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = read_all(fd, bufp, lenp);
	close(fd);
	return ret;
}


int bg_read_list(const char *path, const struct bg_reporter *r, char **bufp,
		 size_t *lenp)
{
	int ret = bg_read_file(path, bufp, lenp);

	if (ret < 0)
		bg_report_file(r, path, strerror(-ret));
	return ret;
}

int bg_parse_file(const char *path, const struct bg_reporter *r,
		  bg_parse_fn fn, void *dst, const void *opts)
{
	char *buf = NULL;
	size_t len = 0;
	int ret = bg_read_list(path, r, &buf, &len);

	if (ret < 0)
		return ret;
	ret = fn(dst, path, buf, len, opts);
	free(buf);
	return ret;
}
