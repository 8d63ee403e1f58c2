// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * httpd: the test HTTP server of the agent's tests and demo. It serves the
 * files of one directory on 127.0.0.1 and misbehaves on request, the ways
 * list servers fail in the field.
 *
 *   build/tests/httpd [-p PORT] [-l LOG] [-c CONTROL] DIR
 *
 * -p PORT     port to listen on (default 0: one chosen by the kernel). The
 *             first line on stdout is the port, flushed, once listening.
 * -l LOG      request log, appended, one line per request as it is answered:
 *             "METHOD PATH IF-NONE-MATCH STATUS ENCODING", "-" for a
 *             missing If-None-Match, ENCODING "gzip" or "identity"; e.g.
 *             "GET /list.txt "3f2a..." 304 identity". Without -l: stderr.
 * -c CONTROL  a file read at every request (it may come and go), to steer a
 *             running server: lines "PATH MODE [ARG]", PATH an exact request
 *             path or "*"; the first line matching the request wins; '#'
 *             starts a comment. MODE is one of the behaviours below:
 *             ok, NNN (a status), truncate, garbage, slow, endless, plain,
 *             novalidators, redirect TARGET.
 * SIGTERM or SIGINT: stops (slow bodies in flight are cut).
 *
 * Behaviours, also chosen by a path prefix (/slow/list.txt serves list.txt):
 *   (none)        200 with the file, ETag (its SHA-256, quoted) and
 *                 Last-Modified (its mtime); 304 when If-None-Match names
 *                 the ETag (or, without If-None-Match, If-Modified-Since is
 *                 not older than the mtime); gzip-compressed when the
 *                 request's Accept-Encoding has gzip; 404 when missing.
 *   /status/NNN   that status, a one-line body.
 *   /truncate/F   200, Content-Length 1000 bytes longer than F, F's bytes,
 *                 then the connection closed.
 *   /garbage/F    200 with 4096 bytes of binary noise (same every time).
 *   /slow/F       200 with F dripped one byte every 100 ms, chunked (no
 *                 Content-Length, so a size cap must act while receiving).
 *   /endless/F    200, chunked, never ending: F's first line once, then the
 *                 rest of F over and over, as fast as the client reads (a
 *                 body only a bound or an abort stops).
 *   /plain/F      F without gzip, whatever the client accepts.
 *   /redirect/F   302 to /F.
 *   novalidators  (control only) 200 without ETag or Last-Modified, never
 *                 304: a server that supports no conditional GET.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <openssl/evp.h>
#include <zlib.h>

#define DRIP_USEC 100000
#define TRUNCATE_EXTRA 1000
#define GARBAGE_BYTES 4096

enum mode { M_OK, M_STATUS, M_TRUNCATE, M_GARBAGE, M_SLOW, M_ENDLESS,
	    M_REDIRECT };

struct req {
	enum mode mode;
	int status; /* M_STATUS */
	int plain; /* no gzip */
	int noval; /* no validators */
	char file[1024]; /* relative to the directory */
	char target[1024]; /* M_REDIRECT: Location */
};

static int dirfd_ = -1;
static int logfd = 2;
static const char *control;
static volatile int stopping;

/* A body handed out piecewise (truncate, slow, endless). */
struct drip {
	char *buf;
	size_t len;
	int slow;
	size_t head; /* endless: [0, head) once, then [head, len) for ever */
	int endless;
};

static void log_req(const char *method, const char *url, const char *inm,
		    int status, int gzip)
{
	char line[2048];
	int n;

	n = snprintf(line, sizeof(line), "%s %s %s %d %s\n", method, url,
		     inm ? inm : "-", status, gzip ? "gzip" : "identity");
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	/* one write() on an O_APPEND file: lines of concurrent requests do
	 * not interleave, and a test reading the log sees whole lines */
	if (write(logfd, line, (size_t)n) < 0)
		perror("httpd: log");
}

/* A mode word (and its argument) into q; 0, or -1 when unknown. */
static int parse_mode(struct req *q, const char *w, const char *arg)
{
	char *end;
	long st;

	if (!strcmp(w, "ok")) {
		q->mode = M_OK;
	} else if (!strcmp(w, "truncate")) {
		q->mode = M_TRUNCATE;
	} else if (!strcmp(w, "garbage")) {
		q->mode = M_GARBAGE;
	} else if (!strcmp(w, "slow")) {
		q->mode = M_SLOW;
	} else if (!strcmp(w, "endless")) {
		q->mode = M_ENDLESS;
	} else if (!strcmp(w, "plain")) {
		q->plain = 1;
	} else if (!strcmp(w, "novalidators")) {
		q->noval = 1;
	} else if (!strcmp(w, "redirect") && arg) {
		q->mode = M_REDIRECT;
		snprintf(q->target, sizeof(q->target), "%s", arg);
	} else {
		st = strtol(w, &end, 10);
		if (*end || st < 100 || st > 599)
			return -1;
		q->mode = M_STATUS;
		q->status = (int)st;
	}
	return 0;
}

/* The control file's word on url, if any, applied to q. */
static void apply_control(struct req *q, const char *url)
{
	char line[2048], *pat, *w, *arg, *save;
	FILE *f;

	if (!control)
		return;
	f = fopen(control, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '#'))
			*strchr(line, '#') = '\0';
		pat = strtok_r(line, " \t\r\n", &save);
		w = strtok_r(NULL, " \t\r\n", &save);
		arg = strtok_r(NULL, " \t\r\n", &save);
		if (!pat || !w || (strcmp(pat, "*") && strcmp(pat, url)))
			continue;
		if (parse_mode(q, w, arg) < 0)
			fprintf(stderr, "httpd: %s: unknown mode '%s'\n",
				control, w);
		break;
	}
	fclose(f);
}

static void parse_url(struct req *q, const char *url)
{
	static const char *const prefixes[] = { "truncate", "garbage", "slow",
						"endless", "plain", "redirect" };
	const char *p = url + (*url == '/');
	size_t i, n;

	memset(q, 0, sizeof(*q));
	if (!strncmp(p, "status/", 7)) {
		if (parse_mode(q, p + 7, NULL) < 0 || q->mode != M_STATUS) {
			q->mode = M_STATUS;
			q->status = 400;
		}
		return;
	}
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		n = strlen(prefixes[i]);
		if (!strncmp(p, prefixes[i], n) && p[n] == '/') {
			char target[sizeof(q->target)];

			p += n + 1;
			snprintf(target, sizeof(target), "/%s", p);
			parse_mode(q, prefixes[i], target);
			break;
		}
	}
	snprintf(q->file, sizeof(q->file), "%s", p);
}

/* The file into a malloc'd buffer; 0, or an HTTP status (404, 400). */
static int read_file(const char *name, char **buf, size_t *len,
		     struct stat *st)
{
	ssize_t n;
	size_t got = 0;
	int fd;

	if (!*name || strstr(name, ".."))
		return 400;
	fd = openat(dirfd_, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 404;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return 404;
	}
	*buf = malloc((size_t)st->st_size + 1);
	if (!*buf) {
		close(fd);
		return 500;
	}
	while (got < (size_t)st->st_size &&
	       (n = read(fd, *buf + got, (size_t)st->st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	*len = got;
	return 0;
}

static void etag_of(const char *buf, size_t len, char out[70])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;
	char *p = out;

	EVP_Digest(buf, len, md, &n, EVP_sha256(), NULL);
	*p++ = '"';
	for (i = 0; i < n && i < 32; i++)
		p += sprintf(p, "%02x", md[i]);
	*p++ = '"';
	*p = '\0';
}

/* 1 when an If-None-Match value names etag (a list; W/ ignored; "*"). */
static int inm_matches(const char *inm, const char *etag)
{
	const char *p = inm, *e, *q, *t;
	size_t n = strlen(etag);

	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!*p)
			break;
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		q = strncmp(p, "W/", 2) ? p : p + 2;
		t = e;
		while (t > q && t[-1] == ' ')
			t--;
		if ((t - q == 1 && *q == '*') ||
		    ((size_t)(t - q) == n && !strncmp(q, etag, n)))
			return 1;
		p = e;
	}
	return 0;
}

static char *gzip(const char *in, size_t len, size_t *outlen)
{
	z_stream z = { 0 };
	size_t cap = compressBound(len) + 64;
	char *out = malloc(cap);

	/* 15 + 16: a gzip wrapper rather than zlib's */
	if (!out || deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(out);
		return NULL;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(out);
		return NULL;
	}
	*outlen = z.total_out;
	deflateEnd(&z);
	return out;
}

static ssize_t drip_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct drip *d = cls;
	size_t n;

	if (stopping)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	if (d->endless) {
		uint64_t at = pos < d->head ? pos :
			      d->head + (pos - d->head) % (d->len - d->head);

		n = d->len - at < max ? d->len - at : max;
		if (at < d->head && n > d->head - at)
			n = d->head - at;
		memcpy(buf, d->buf + at, n);
		return (ssize_t)n;
	}
	if (pos >= d->len)
		/* truncate: the promised length is not reached; closing
		 * now is the truncation */
		return d->slow ? MHD_CONTENT_READER_END_OF_STREAM
			       : MHD_CONTENT_READER_END_WITH_ERROR;
	if (d->slow) {
		usleep(DRIP_USEC);
		if (stopping)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		n = 1;
	} else {
		n = d->len - pos < max ? d->len - pos : max;
	}
	memcpy(buf, d->buf + pos, n);
	return (ssize_t)n;
}

static void drip_free(void *cls)
{
	struct drip *d = cls;

	free(d->buf);
	free(d);
}

static void http_date(time_t t, char *out, size_t size)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, size, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

static enum MHD_Result send_text(struct MHD_Connection *c, int status,
				 const char *text)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(strlen(text), (void *)text,
					       MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	ret = MHD_queue_response(c, (unsigned int)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result serve(struct MHD_Connection *c, const char *method,
			     const char *url)
{
	const char *inm, *ims, *ae;
	struct MHD_Response *resp = NULL;
	char etag[70], lm[64], text[64], *buf = NULL, *z;
	struct req q;
	struct drip *d;
	struct stat st;
	struct tm tm;
	size_t len = 0, zlen;
	int st_code, use_gzip = 0;
	enum MHD_Result ret;

	inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					  MHD_HTTP_HEADER_IF_NONE_MATCH);
	ims = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					  MHD_HTTP_HEADER_IF_MODIFIED_SINCE);
	ae = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					 MHD_HTTP_HEADER_ACCEPT_ENCODING);
	parse_url(&q, url);
	apply_control(&q, url);

	if (q.mode == M_STATUS) {
		log_req(method, url, inm, q.status, 0);
		snprintf(text, sizeof(text), "status %d\n", q.status);
		return send_text(c, q.status, text);
	}
	if (q.mode == M_REDIRECT) {
		log_req(method, url, inm, 302, 0);
		resp = MHD_create_response_from_buffer(0, NULL,
						       MHD_RESPMEM_PERSISTENT);
		if (!resp)
			return MHD_NO;
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION,
					q.target);
		ret = MHD_queue_response(c, 302, resp);
		MHD_destroy_response(resp);
		return ret;
	}
	if (q.mode == M_GARBAGE) {
		uint32_t x = 2463534242u;
		size_t i;

		buf = malloc(GARBAGE_BYTES);
		if (!buf)
			return MHD_NO;
		for (i = 0; i < GARBAGE_BYTES; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			buf[i] = (char)(x >> 24);
		}
		log_req(method, url, inm, 200, 0);
		resp = MHD_create_response_from_buffer(GARBAGE_BYTES, buf,
						       MHD_RESPMEM_MUST_FREE);
		if (!resp) {
			free(buf);
			return MHD_NO;
		}
		ret = MHD_queue_response(c, 200, resp);
		MHD_destroy_response(resp);
		return ret;
	}

	st_code = read_file(q.file, &buf, &len, &st);
	if (st_code) {
		log_req(method, url, inm, st_code, 0);
		snprintf(text, sizeof(text), "status %d\n", st_code);
		return send_text(c, st_code, text);
	}
	etag_of(buf, len, etag);
	http_date(st.st_mtime, lm, sizeof(lm));

	if (q.mode == M_TRUNCATE || q.mode == M_SLOW || q.mode == M_ENDLESS) {
		const char *nl = memchr(buf, '\n', len);

		d = calloc(1, sizeof(*d));
		if (!d || (q.mode == M_ENDLESS && (!nl || nl + 1 == buf + len))) {
			free(d);
			free(buf);
			log_req(method, url, inm, 500, 0);
			return send_text(c, 500, "endless: a first line, then more\n");
		}
		d->buf = buf;
		d->len = len;
		d->slow = q.mode == M_SLOW;
		d->endless = q.mode == M_ENDLESS;
		d->head = nl ? (size_t)(nl + 1 - buf) : 0;
		log_req(method, url, inm, 200, 0);
		resp = MHD_create_response_from_callback(
			d->slow || d->endless ? MHD_SIZE_UNKNOWN : len + TRUNCATE_EXTRA,
			d->slow ? 1 : 4096, drip_read, d, drip_free);
		if (!resp) {
			drip_free(d);
			return MHD_NO;
		}
		ret = MHD_queue_response(c, 200, resp);
		MHD_destroy_response(resp);
		return ret;
	}

	if (!q.noval) {
		int not_modified = 0;

		if (inm) {
			not_modified = inm_matches(inm, etag);
		} else if (ims) {
			memset(&tm, 0, sizeof(tm));
			if (strptime(ims, "%a, %d %b %Y %H:%M:%S GMT", &tm))
				not_modified = st.st_mtime <= timegm(&tm);
		}
		if (not_modified) {
			free(buf);
			log_req(method, url, inm, 304, 0);
			resp = MHD_create_response_from_buffer(
				0, NULL, MHD_RESPMEM_PERSISTENT);
			if (!resp)
				return MHD_NO;
			MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG,
						etag);
			MHD_add_response_header(
				resp, MHD_HTTP_HEADER_LAST_MODIFIED, lm);
			ret = MHD_queue_response(c, 304, resp);
			MHD_destroy_response(resp);
			return ret;
		}
	}

	if (!q.plain && ae && strstr(ae, "gzip")) {
		z = gzip(buf, len, &zlen);
		if (z) {
			free(buf);
			buf = z;
			len = zlen;
			use_gzip = 1;
		}
	}
	log_req(method, url, inm, 200, use_gzip);
	resp = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(buf);
		return MHD_NO;
	}
	if (!q.noval) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LAST_MODIFIED,
					lm);
	}
	if (use_gzip)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING,
					"gzip");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY,
				MHD_HTTP_HEADER_ACCEPT_ENCODING);
	ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	static int first;

	(void)cls;
	(void)version;
	(void)upload;
	/* the first call announces the request; answer on the second, once
	 * any body is in (MHD's usual pattern) */
	if (!*req_cls) {
		*req_cls = &first;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		log_req(method, url, NULL, 405, 0);
		return send_text(c, 405, "GET or HEAD\n");
	}
	return serve(c, method, url);
}

/* MHD's messages, marked as the server's among a test's output */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	fputs("httpd: ", stderr);
	vfprintf(stderr, fmt, ap);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: httpd [-p PORT] [-l LOG] [-c CONTROL] DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;
	sigset_t set;
	int opt, sig;
	long port = 0;

	while ((opt = getopt(argc, argv, "p:l:c:")) != -1) {
		switch (opt) {
		case 'p':
			port = strtol(optarg, NULL, 10);
			if (port < 0 || port > 65535)
				usage();
			break;
		case 'l':
			logfd = open(optarg,
				     O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
				     0644);
			if (logfd < 0) {
				perror(optarg);
				return 1;
			}
			break;
		case 'c':
			control = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	dirfd_ = open(argv[optind], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd_ < 0) {
		perror(argv[optind]);
		return 1;
	}

	/* blocked before MHD starts its threads, so they inherit the mask
	 * and the signal reaches sigwait() below */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* a thread per connection: a dripping body sleeps in its own thread
	 * without holding up the other requests */
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
				     MHD_USE_THREAD_PER_CONNECTION |
				     MHD_USE_ERROR_LOG,
			     (uint16_t)port, NULL, NULL, on_request, NULL,
			     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "httpd: cannot listen on 127.0.0.1:%ld\n",
			port);
		return 1;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	printf("%u\n", info ? info->port : (unsigned int)port);
	fflush(stdout);

	while (sigwait(&set, &sig))
		;
	stopping = 1;
	MHD_stop_daemon(d);
	return 0;
}
