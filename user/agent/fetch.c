// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fetching a source and keeping its last good copy (user/agent/fetch.h). One
 * concern: from a URL or a file to a candidate copy renamed into place,
 * and the rules of a good copy. The order of the steps is the point:
 * receive into an unnamed file, name it the candidate, and only once the
 * caller's parse judged it good give it the cache's name.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "core/clock.h"
#include "core/units.h"
#include "core/url.h"
#include "agent/fetch.h"
#include "core/sha.h"
#include "core/version.h"

#define FETCH_TIMEOUT_DEFAULT 30.0
#define FETCH_MAX_REDIRS 5L
#define FETCH_COPY_CHUNK 65536

int bg_fetch_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) ? -EIO : 0;
}

void bg_fetch_global_cleanup(void)
{
	curl_global_cleanup();
}

double bg_jitter(double interval, double rnd)
{
	if (rnd < 0)
		rnd = 0;
	if (rnd > 1)
		rnd = 1;
	return interval * (0.9 + 0.2 * rnd);
}

double bg_backoff(unsigned int n, double base, double max, double rnd)
{
	double d = base;
	unsigned int i;

	if (!n)
		return 0;
	/* doubling stops at the cap: no overflow for any n */
	for (i = 1; i < n && d < max; i++)
		d *= 2;
	if (d > max)
		d = max;
	return bg_jitter(d, rnd);
}


static void sha_final(EVP_MD_CTX *md, char out[65])
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_DigestFinal_ex(md, d, &n);
	bg_hex(d, n, out);
}


static int write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The new copy while it is received and checked. An O_TMPFILE file has no
 * name until it is published: an agent killed mid-transfer (kill -9 is an
 * expected event) leaves nothing behind in the state directory. Where the
 * file system has no O_TMPFILE, a named "cache_path.XXXXXX" is used and
 * removed on every path but a crash.
 */
struct tmp {
	int fd;
	int anon; /* O_TMPFILE: path is /proc/self/fd/N */
	char path[PATH_MAX + 16];
};

static int tmp_open(struct tmp *t, const char *cache_path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(cache_path, '/');
	size_t n;

	t->fd = -1;
	t->anon = 0;
	t->path[0] = '\0';
	if (strlen(cache_path) >= PATH_MAX)
		return -ENAMETOOLONG;
	if (!slash) {
		strcpy(dir, ".");
	} else {
		n = slash == cache_path ? 1 : (size_t)(slash - cache_path);
		memcpy(dir, cache_path, n);
		dir[n] = '\0';
	}
	t->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	if (t->fd >= 0) {
		t->anon = 1;
		snprintf(t->path, sizeof(t->path), "/proc/self/fd/%d", t->fd);
		return 0;
	}
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	snprintf(t->path, sizeof(t->path), "%s.XXXXXX", cache_path);
	t->fd = mkostemp(t->path, O_CLOEXEC);
	if (t->fd < 0) {
		t->path[0] = '\0';
		return -errno;
	}
	/* a list is no secret; mkstemp's 0600 would hide it from check */
	fchmod(t->fd, 0644);
	return 0;
}


static void tmp_close(struct tmp *t)
{
	if (t->fd >= 0)
		close(t->fd);
	if (!t->anon && t->path[0])
		unlink(t->path);
	t->fd = -1;
	t->path[0] = '\0';
}

int bg_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* fsync the directory holding path, so the rename survives a power cut */
static int fsync_dir(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash) {
		strcpy(dir, ".");
	} else {
		n = slash == path ? 1 : (size_t)(slash - path);
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	return bg_fsync_dir(dir);
}

/* Gives the checked copy the cache's name, atomically. 0 or -errno. */
static int tmp_publish(struct tmp *t, const char *cache_path)
{
	char name[PATH_MAX + 16];
	struct timespec ts;
	unsigned int i;

	if (fsync(t->fd) < 0)
		return -errno;
	if (!t->anon) {
		if (rename(t->path, cache_path) < 0)
			return -errno;
		t->path[0] = '\0';
		return fsync_dir(cache_path);
	}
	/* linkat() cannot replace a file: link under a fresh name, then
	 * rename() over the cache, which can */
	for (i = 0;; i++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(name, sizeof(name), "%s.%d.%lx", cache_path,
			 (int)getpid(), (unsigned long)ts.tv_nsec + i);
		if (!linkat(AT_FDCWD, t->path, AT_FDCWD, name,
			    AT_SYMLINK_FOLLOW))
			break;
		if (errno != EEXIST || i >= 16)
			return -errno;
	}
	if (rename(name, cache_path) < 0) {
		int err = -errno;

		unlink(name);
		return err;
	}
	return fsync_dir(cache_path);
}

static void fail(struct bg_fetch_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct bg_fetch_result *r, const char *fmt, ...)
{
	va_list ap;

	r->outcome = BG_FETCH_FAILED;
	r->sha256[0] = '\0';
	va_start(ap, fmt);
	bg_vwhyf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
}

/* tmp_open(), the failure reported in r; nonzero when it failed. */
static int tmp_open_for(struct tmp *t, const char *cache_path,
			struct bg_fetch_result *r)
{
	int ret = tmp_open(t, cache_path);

	if (ret < 0)
		fail(r, "a copy next to %s: %s", cache_path, strerror(-ret));
	return ret < 0;
}

/* A transfer or a copy stops at once when the caller says so (SIGTERM). */
static int aborted(const struct bg_fetch_src *src)
{
	return src->abort && __atomic_load_n(src->abort, __ATOMIC_RELAXED);
}

int bg_fetch_candidate(const char *cache_path, char *out, size_t len)
{
	if (snprintf(out, len, "%s.new", cache_path) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int bg_fetch_judge(const struct bg_fetch_src *src, uint64_t entries,
		   uint64_t rejected, uint64_t prev, char *err, size_t errlen)
{
	double keep;

	if (!entries && !rejected && src->list.path)
		return 0; /* a local list kept empty on purpose */
	if (!entries) {
		snprintf(err, errlen, "not a list: no entry, %" PRIu64
			 " lines rejected", rejected);
		return 1;
	}
	if (rejected > entries) {
		snprintf(err, errlen, "not a list: %" PRIu64 " lines rejected, %"
			 PRIu64 " entries accepted", rejected, entries);
		return 1;
	}
	if (prev && src->max_shrink < 1) {
		keep = src->max_shrink > 0 ? 1 - src->max_shrink : 1;
		if ((double)entries < keep * (double)prev) {
			snprintf(err, errlen, "shrank from %" PRIu64 " to %" PRIu64
				 " entries (more than %g%%)", prev, entries,
				 (src->max_shrink > 0 ? src->max_shrink : 0) * 100);
			return 1;
		}
	}
	return 0;
}

int bg_fetch_keep(const char *cache_path)
{
	char cand[PATH_MAX + 8];
	int ret = bg_fetch_candidate(cache_path, cand, sizeof(cand));

	if (ret)
		return ret;
	if (rename(cand, cache_path) < 0)
		return -errno;
	return fsync_dir(cache_path);
}

void bg_fetch_discard(const char *cache_path)
{
	char cand[PATH_MAX + 8];

	if (!bg_fetch_candidate(cache_path, cand, sizeof(cand)))
		unlink(cand);
}

/*
 * After a copy was received into t with SHA-256 sha: nothing when it is
 * the copy already kept (UNCHANGED), else it becomes the candidate
 * (CHANGED), judged by the caller's parse (bg_fetch_judge()). Sets the
 * outcome; 0.
 */
static int keep_copy(const struct bg_fetch_src *src, struct tmp *t,
		     const char *cache_path, const char *sha,
		     struct bg_fetch_result *r)
{
	char old[65], cand[PATH_MAX + 8];
	int ret;

	if (src->kept_sha256 && src->kept_sha256[0])
		snprintf(old, sizeof(old), "%s", src->kept_sha256);
	else if (bg_sha256_file(cache_path, old))
		old[0] = '\0';
	if (!strcmp(old, sha) && !access(cache_path, F_OK)) {
		r->outcome = BG_FETCH_UNCHANGED;
		snprintf(r->sha256, sizeof(r->sha256), "%s", sha);
		return 0;
	}
	ret = bg_fetch_candidate(cache_path, cand, sizeof(cand));
	if (!ret)
		ret = tmp_publish(t, cand);
	if (ret < 0) {
		fail(r, "keeping the copy at %s: %s", cand, strerror(-ret));
		return 0;
	}
	r->outcome = BG_FETCH_CHANGED;
	snprintf(r->sha256, sizeof(r->sha256), "%s", sha);
	return 0;
}

/* ---- a local file ---- */

static int fetch_path(const struct bg_fetch_src *src, const char *cache_path,
		      struct bg_fetch_result *r)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	char *buf = malloc(FETCH_COPY_CHUNK);
	char sha[65];
	struct tmp t = { .fd = -1 };
	struct stat st;
	ssize_t n;
	int fd = -1, ret = 0;

	if (!md || !buf || !EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
		ret = -ENOMEM;
		goto out;
	}
	/* O_NONBLOCK: a FIFO without a writer would block the agent's loop
	 * in open(); it is refused below, and reads block again after */
	fd = open(src->list.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		fail(r, "%s: %s", src->list.path, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		fail(r, "%s: %s", src->list.path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		fail(r, "%s: not a regular file", src->list.path);
		goto out;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		fail(r, "%s: %s", src->list.path, strerror(errno));
		goto out;
	}
	if (src->max_bytes && (uint64_t)st.st_size > src->max_bytes) {
		fail(r, "%s: larger than %" PRIu64 " bytes", src->list.path,
		     src->max_bytes);
		goto out;
	}
	if (tmp_open_for(&t, cache_path, r)) {
		ret = 0; /* a failed fetch, not a caller's error */
		goto out;
	}
	/* one copy, hashed as it is written: what is checked is what is
	 * kept, even while an editor rewrites the source */
	while ((n = read(fd, buf, FETCH_COPY_CHUNK)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail(r, "%s: %s", src->list.path, strerror(errno));
			goto out;
		}
		if (aborted(src)) {
			fail(r, "aborted: the agent is stopping");
			goto out;
		}
		r->bytes += (uint64_t)n;
		if (src->max_bytes && r->bytes > src->max_bytes) {
			fail(r, "%s: larger than %" PRIu64 " bytes", src->list.path,
			     src->max_bytes);
			goto out;
		}
		ret = write_all(t.fd, buf, (size_t)n);
		if (ret < 0) {
			fail(r, "writing the copy: %s", strerror(-ret));
			ret = 0;
			goto out;
		}
		EVP_DigestUpdate(md, buf, (size_t)n);
	}
	sha_final(md, sha);
	ret = keep_copy(src, &t, cache_path, sha, r);
out:
	tmp_close(&t);
	if (fd >= 0)
		close(fd);
	free(buf);
	EVP_MD_CTX_free(md);
	return ret;
}

/* ---- a URL ---- */

struct sink {
	const struct bg_fetch_src *src;
	CURL *h;
	int fd;
	EVP_MD_CTX *md;
	uint64_t bytes, cap;
	int over; /* the cap was reached: transfer aborted */
	int werr; /* errno of a failed write */
	/* the last response's header block ended (its blank line came): a
	 * server that closes in the middle of it leaves an "HTTP 200" with
	 * an empty body, which libcurl reports as a success */
	int hdr_done;
	uint64_t hdr_bytes; /* of the last response's headers */
	char location[512]; /* the last Location header, as sent */
};

/* Each header line of each response, redirects included. */
static size_t on_header(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct sink *s = ctx;
	size_t len = size * nmemb;

	if (len >= 5 && !memcmp(p, "HTTP/", 5)) {
		s->hdr_done = 0; /* a new response */
		s->hdr_bytes = 0;
	}
	s->hdr_bytes += len;
	if (len > 9 && !strncasecmp(p, "Location:", 9)) {
		const char *v = p + 9;
		size_t n;

		while (v < p + len && (*v == ' ' || *v == '\t'))
			v++;
		n = (size_t)(p + len - v);
		while (n && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' '))
			n--;
		snprintf(s->location, sizeof(s->location), "%.*s", (int)n, v);
	}
	if ((len == 2 && p[0] == '\r' && p[1] == '\n') || (len == 1 && p[0] == '\n'))
		s->hdr_done = 1;
	return len;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct sink *s = ctx;
	size_t len = size * nmemb;
	long status = 0;
	int ret;

	/* an error page is not a copy: not written, not capped, so that the
	 * error says "HTTP 500" rather than something about its body */
	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status >= 300)
		return len;
	if (s->cap && s->bytes + len > s->cap) {
		s->over = 1;
		return 0; /* aborts the transfer now, not after */
	}
	ret = write_all(s->fd, p, len);
	if (ret < 0) {
		s->werr = -ret;
		return 0;
	}
	EVP_DigestUpdate(s->md, p, len);
	s->bytes += len;
	return len;
}

/* libcurl's progress callback, at least once a second and after every
 * read: nonzero aborts the transfer (CURLE_ABORTED_BY_CALLBACK), so a
 * stopping agent does not wait for a slow body up to its timeout. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct sink *s = ctx;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return aborted(s->src);
}

/* A header of the last response into out ("" when absent or too long:
 * a validator cut short would never match). */
static void last_header(CURL *h, const char *name, char *out, size_t size,
			int keep_absent)
{
	struct curl_header *hh;

	if (curl_easy_header(h, name, 0, CURLH_HEADER, -1, &hh) != CURLHE_OK) {
		if (!keep_absent)
			out[0] = '\0';
		return;
	}
	if (strlen(hh->value) >= size) {
		out[0] = '\0';
		return;
	}
	strcpy(out, hh->value);
}

/* A stored validator fit to be sent back: not empty, one line. */
static int sendable(const char *s)
{
	return s[0] && !strpbrk(s, "\r\n");
}

/* The conditional GET's headers for the copy kept (its validators that
 * can be sent as they are): 0, or -ENOMEM. */
static int add_validators(struct curl_slist **hdrs,
			  const struct bg_fetch_validators *v)
{
	char hdr[sizeof(v->etag) + 32];
	struct curl_slist *l;

	if (sendable(v->etag)) {
		snprintf(hdr, sizeof(hdr), "If-None-Match: %s", v->etag);
		l = curl_slist_append(*hdrs, hdr);
		if (!l)
			return -ENOMEM;
		*hdrs = l;
	}
	if (sendable(v->last_modified)) {
		snprintf(hdr, sizeof(hdr), "If-Modified-Since: %s",
			 v->last_modified);
		l = curl_slist_append(*hdrs, hdr);
		if (!l)
			return -ENOMEM;
		*hdrs = l;
	}
	return 0;
}

/* The transfer's options: the URL, what it may follow, its bounds, and
 * the sink's callbacks. */
static void set_options(struct sink *s, const struct bg_fetch_src *src,
			double timeout, struct curl_slist *hdrs, char *errbuf)
{
	curl_easy_setopt(s->h, CURLOPT_URL, src->list.url);
	/* a config typo such as file:///etc/shadow or a redirect to gopher://
	 * is refused: the agent fetches from the web only */
	curl_easy_setopt(s->h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(s->h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(s->h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(s->h, CURLOPT_MAXREDIRS, FETCH_MAX_REDIRS);
	/* "": every encoding this libcurl decodes (gzip, deflate, ...) */
	curl_easy_setopt(s->h, CURLOPT_ACCEPT_ENCODING, "");
	/* at least 1 ms: 0 would mean no timeout at all */
	curl_easy_setopt(s->h, CURLOPT_TIMEOUT_MS,
			 timeout * 1000 < 1 ? 1L : (long)(timeout * 1000));
	/* no SIGALRM for name resolution: the agent has threads */
	curl_easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(s->h, CURLOPT_USERAGENT, BG_USER_AGENT);
	curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(s->h, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(s->h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(s->h, CURLOPT_HEADERDATA, s);
	curl_easy_setopt(s->h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(s->h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(s->h, CURLOPT_XFERINFODATA, s);
	curl_easy_setopt(s->h, CURLOPT_NOPROGRESS, 0L);
	/* a Content-Length above the cap is refused before any byte; the
	 * decoded body is capped by on_body() */
	if (src->max_bytes && src->max_bytes <= INT64_MAX)
		curl_easy_setopt(s->h, CURLOPT_MAXFILESIZE_LARGE,
				 (curl_off_t)src->max_bytes);
}

static int fetch_url(const struct bg_fetch_src *src, const char *cache_path,
		     struct bg_fetch_validators *v, struct bg_fetch_result *r)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL;
	struct sink s = { .fd = -1, .src = src };
	struct tmp t = { .fd = -1 };
	double timeout = src->timeout > 0 ? src->timeout
					  : FETCH_TIMEOUT_DEFAULT;
	char sha[65];
	long status = 0;
	CURLcode rc;
	int ret = 0, ask;

	s.h = curl_easy_init();
	s.md = EVP_MD_CTX_new();
	if (!s.h || !s.md || !EVP_DigestInit_ex(s.md, EVP_sha256(), NULL)) {
		ret = -ENOMEM;
		goto out;
	}
	if (tmp_open_for(&t, cache_path, r)) {
		ret = 0; /* a failed fetch, not a caller's error */
		goto out;
	}
	s.fd = t.fd;
	s.cap = src->max_bytes;

	/* the validators describe the copy kept: with no copy (removed by
	 * hand, a new state directory) a 304 would leave the source empty */
	ask = v && !access(cache_path, F_OK);
	if (ask && add_validators(&hdrs, v)) {
		ret = -ENOMEM;
		goto out;
	}

	set_options(&s, src, timeout, hdrs, errbuf);

	rc = curl_easy_perform(s.h);
	curl_easy_getinfo(s.h, CURLINFO_RESPONSE_CODE, &status);
	r->http_status = (int)status;
	r->bytes = s.bytes;

	if (rc == CURLE_TOO_MANY_REDIRECTS || rc == CURLE_UNSUPPORTED_PROTOCOL) {
		/* say where the refused redirect pointed (its password hidden) */
		char *to = NULL, shown[512];

		/* libcurl's own idea of the target, or the header as sent */
		curl_easy_getinfo(s.h, CURLINFO_REDIRECT_URL, &to);
		if (!to && s.location[0])
			to = s.location;
		if (to)
			fail(r, "redirect to %s refused: %s",
			     bg_url_redact(to, shown, sizeof(shown)),
			     errbuf[0] ? errbuf : curl_easy_strerror(rc));
		else
			fail(r, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
	} else if (status && (status < 200 || status >= 300) && status != 304) {
		fail(r, "HTTP %ld", status);
	} else if (rc == CURLE_ABORTED_BY_CALLBACK) {
		fail(r, "aborted: the agent is stopping");
	} else if (rc == CURLE_OK && !s.hdr_done) {
		fail(r, "the connection closed in the response's headers "
			"(after %" PRIu64 " bytes of them)", s.hdr_bytes);
	} else if (s.over || rc == CURLE_FILESIZE_EXCEEDED) {
		fail(r, "body larger than %" PRIu64 " bytes", src->max_bytes);
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		fail(r, "timeout after %g s", timeout);
	} else if (s.werr) {
		fail(r, "writing the copy: %s", strerror(s.werr));
	} else if (rc == CURLE_PARTIAL_FILE) {
		fail(r, "truncated body: %s", errbuf);
	} else if (rc != CURLE_OK) {
		fail(r, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
	} else if (status == 304) {
		r->outcome = BG_FETCH_NOT_MODIFIED;
		/* a 304 may carry newer validators (RFC 9110 15.4.5) */
		if (v) {
			last_header(s.h, "ETag", v->etag, sizeof(v->etag), 1);
			last_header(s.h, "Last-Modified", v->last_modified,
				    sizeof(v->last_modified), 1);
		}
	} else {
		sha_final(s.md, sha);
		ret = keep_copy(src, &t, cache_path, sha, r);
		/* the validators describe the copy kept: a candidate's go to
		 * r->v, for the caller to keep with the copy once judged good
		 * (a refused body's would turn the next fetch into a 304 for
		 * a copy we lack); the same bytes: they are the kept copy's */
		last_header(s.h, "ETag", r->v.etag, sizeof(r->v.etag), 0);
		last_header(s.h, "Last-Modified", r->v.last_modified,
			    sizeof(r->v.last_modified), 0);
		if (!ret && r->outcome == BG_FETCH_UNCHANGED && v)
			*v = r->v;
	}
out:
	tmp_close(&t);
	curl_slist_free_all(hdrs);
	if (s.h)
		curl_easy_cleanup(s.h);
	EVP_MD_CTX_free(s.md);
	return ret;
}

int bg_fetch(const struct bg_fetch_src *src, const char *cache_path,
	     struct bg_fetch_validators *v, struct bg_fetch_result *r)
{
	double t0 = bg_mono();
	int ret;

	if (!r)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	if (!src || !cache_path || !*cache_path || !src->list.url == !src->list.path)
		return -EINVAL;
	if (src->list.url)
		ret = fetch_url(src, cache_path, v, r);
	else
		ret = fetch_path(src, cache_path, r);
	r->seconds = bg_mono() - t0;
	return ret;
}
