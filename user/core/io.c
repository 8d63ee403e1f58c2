// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading lists and reporting their lines (user/core/io.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/io.h"

static const char WARNING[] = "warning: ";

static inline int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

void bg_diag_print(FILE *out, const struct bg_diag *d)
{
	if (!d->line)
		fprintf(out, "%s: %s%s\n", d->file, d->warning ? WARNING : "",
			d->reason);
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

/*
 * Whole file into a malloc'd buffer, at most max bytes (-EFBIG past them:
 * the bound is checked before a regular file is read and while anything
 * else is, so an endless source costs max + 1 bytes, never all memory);
 * 0, or -errno.
 */
static int read_all(int fd, uint64_t max, char **bufp, size_t *lenp)
{
	struct stat st;
	size_t cap, len = 0, lim;
	char *buf;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max)
		return -EFBIG;
	/* one byte past the bound: reading it is how a stream says it is
	 * longer than allowed */
	lim = max < SIZE_MAX - 1 ? (size_t)max + 1 : SIZE_MAX;
	/* Regular files: one read of the known size (+1 to see EOF). */
	cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1
						     : 64 * 1024;
	if (cap > lim)
		cap = lim;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (len == cap) {
			size_t ncap = cap <= SIZE_MAX / 2 ? cap * 2 : SIZE_MAX;
			char *nb;

			if (ncap > lim)
				ncap = lim;
			nb = ncap > cap ? realloc(buf, ncap) : NULL;
			if (!nb) {
				free(buf);
				return len >= lim ? -EFBIG : -ENOMEM;
			}
			buf = nb;
			cap = ncap;
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
	if ((uint64_t)len > max) {
		free(buf);
		return -EFBIG;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

/* Why a file that is not a regular one is refused: what it is. */
static const char *kind_of(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory, not a regular file";
	if (S_ISFIFO(m))
		return "a FIFO, not a regular file (- reads standard input)";
	if (S_ISSOCK(m))
		return "a socket, not a regular file";
	if (S_ISCHR(m))
		return "a character device, not a regular file";
	if (S_ISBLK(m))
		return "a block device, not a regular file";
	return "not a regular file";
}

/*
 * Only a regular file is read by name: a FIFO would block the reader until
 * some writer appears (forever, if none does) and a device such as
 * /dev/zero never ends. The open does not block (O_NONBLOCK: a FIFO opens
 * at once without a writer), the type is the opened file's own (fstat, so
 * nothing can be swapped in between a check and the open), and reading is
 * blocking again once the file is known to be regular. Standard input is
 * read only when asked for ("-"), whatever it is, with the same bound.
 */
static int open_list(const char *path, const char **why)
{
	struct stat st;
	int fd, err;

	*why = NULL;
	if (!strcmp(path, "-")) {
		fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
		return fd < 0 ? -errno : fd;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		/* a socket cannot be opened at all: say what it is */
		if (err == -ENXIO && !stat(path, &st) && !S_ISREG(st.st_mode))
			*why = kind_of(st.st_mode);
		return err;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = kind_of(st.st_mode);
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -ENOTSUP;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

const char *bg_list_name(const char *path)
{
	return strcmp(path, "-") ? path : BG_STDIN_NAME;
}

/* A list that could not be read, as bg_read_list() reports it. */
static void report_list_err(const struct bg_reporter *r, const char *path,
			    int ret, const char *kind, uint64_t max)
{
	char why[128];

	if (kind)
		snprintf(why, sizeof(why), "%s", kind);
	else if (ret == -EFBIG)
		snprintf(why, sizeof(why), "more than %llu bytes",
			 (unsigned long long)max);
	else
		snprintf(why, sizeof(why), "%s", strerror(-ret));
	bg_report_file(r, bg_list_name(path), why);
}

int bg_read_list(const char *path, uint64_t max, const struct bg_reporter *r,
		 char **bufp, size_t *lenp)
{
	const char *kind;
	int fd, ret;

	if (!max)
		max = BG_LIST_BYTES_MAX;
	fd = open_list(path, &kind);
	ret = fd < 0 ? fd : read_all(fd, max, bufp, lenp);
	if (fd >= 0)
		close(fd);
	if (ret >= 0)
		return 0;
	report_list_err(r, path, ret, kind, max);
	return ret;
}

int bg_open_list(const char *path, uint64_t max, const struct bg_reporter *r,
		 uint64_t *size)
{
	const char *kind = NULL;
	struct stat st;
	int fd;

	if (!max)
		max = BG_LIST_BYTES_MAX;
	if (!strcmp(path, "-"))
		return -ESPIPE; /* not seekable: bg_read_list() reads it */
	fd = open_list(path, &kind);
	if (fd >= 0 && fstat(fd, &st) < 0) {
		int err = -errno;

		close(fd);
		fd = err;
	} else if (fd >= 0 && (uint64_t)st.st_size > max) {
		close(fd);
		fd = -EFBIG;
	}
	if (fd < 0) {
		report_list_err(r, path, fd, kind, max);
		return fd;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

int bg_reread_list(const char *path, char **bufp, size_t *lenp)
{
	const char *kind;
	int fd, ret;

	if (!strcmp(path, "-"))
		return -ENOENT; /* standard input is gone with its load */
	fd = open_list(path, &kind);
	if (fd < 0)
		return fd;
	ret = read_all(fd, BG_LIST_BYTES_MAX, bufp, lenp);
	close(fd);
	return ret < 0 ? ret : 0;
}

int bg_parse_file(const char *path, const struct bg_reporter *r,
		  bg_parse_fn fn, void *dst, const void *opts)
{
	char *buf = NULL;
	size_t len = 0;
	int ret = bg_read_list(path, 0, r, &buf, &len);

	if (ret < 0)
		return ret;
	ret = fn(dst, bg_list_name(path), buf, len, opts);
	free(buf);
	return ret;
}
