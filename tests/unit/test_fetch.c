// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of bg_fetch() (user/agent/fetch.h): a URL or a file to a last good
 * copy. A real HTTP exchange with the project's test server
 * (build/tests/httpd, started here as a child on 127.0.0.1, steered by path
 * prefixes and its control file), whose request log tells what was really
 * sent: a 304 and no 200 is "no re-download". No root, no network beyond
 * the loopback; the slowest case is the 1 s timeout.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "agent/fetch.h"
#include "core/clock.h"
#include "core/format.h"
#include "core/prepare.h"
#include "httpd_child.h"

static char dir[] = "/tmp/bg-test-fetch.XXXXXX";
static char www[256], cache[256], logpath[256],
	ctlpath[256];
static int port;

/* ---- helpers ---- */

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Text of a file (malloc'd, NUL-terminated), or NULL when missing. */
static char *slurp(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (lenp)
		*lenp = (size_t)n;
	return buf;
}

static const char *in(const char *base, const char *name)
{
	static char p[8][PATH_MAX];
	static int next;
	char *s = p[next++ % 8];

	snprintf(s, PATH_MAX, "%s/%s", base, name);
	return s;
}

static const char *url(const char *path)
{
	static char u[4][256];
	static int next;
	char *s = u[next++ % 4];

	snprintf(s, 256, "http://127.0.0.1:%d%s", port, path);
	return s;
}

/* n addresses, one a line, starting at 10.<base>.0.1: a list. */
static char *addrs(unsigned int n, unsigned int base)
{
	char *buf = malloc((size_t)n * 20 + 1), *p = buf;
	unsigned int i;

	assert_non_null(buf);
	*p = '\0';
	for (i = 0; i < n; i++)
		p += sprintf(p, "10.%u.%u.%u\n", base & 255, (i >> 8) & 255,
			     (i & 255) ^ 1);
	return buf;
}

static void serve(const char *name, const char *text)
{
	write_file(in(www, name), text, strlen(text));
}

static void serve_addrs(const char *name, unsigned int n, unsigned int base)
{
	char *t = addrs(n, base);

	serve(name, t);
	free(t);
}

/* The server reads its control file at every request: written by rename
 * so that it never sees half of one. */
static void control(const char *text)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s.tmp", ctlpath);
	write_file(tmp, text, strlen(text));
	assert_int_equal(rename(tmp, ctlpath), 0);
}

/* Lines of the request log containing every one of the (NULL-ended)
 * needles. */
static int log_count(const char *needle, ...)
{
	char *text = slurp(logpath, NULL), *line, *save = NULL;
	const char *n;
	va_list ap;
	int count = 0, ok;

	if (!text)
		return 0;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		ok = !!strstr(line, needle);
		va_start(ap, needle);
		while (ok && (n = va_arg(ap, const char *)))
			ok = !!strstr(line, n);
		va_end(ap);
		count += ok;
	}
	free(text);
	return count;
}

/* The last line of the request log. */
static void log_last(char *out, size_t size)
{
	char *text = slurp(logpath, NULL), *end, *start;

	assert_non_null(text);
	end = text + strlen(text);
	while (end > text && end[-1] == '\n')
		*--end = '\0';
	start = strrchr(text, '\n');
	snprintf(out, size, "%s", start ? start + 1 : text);
	free(text);
}

/* ---- the agent's way: fetch, then judge the candidate by the load ---- */

struct judged {
	const struct bg_fetch_src *src;
	uint64_t prev;
	struct bg_fetch_result *r;
	int refused;
};

static void quiet(void *ctx, const struct bg_diag *d)
{
	(void)ctx;
	(void)d;
}

/* The load's per-list hook (bg_load_opts.source_done), as the agent's
 * rebuild uses it: the rules of a good copy on the parse's counts. */
static int judge(void *ctx, size_t i, const struct bg_source_info *in)
{
	struct judged *j = ctx;

	assert_int_equal(i, 0);
	j->r->entries = in->entries;
	j->r->rejected = in->rejected;
	j->refused = bg_fetch_judge(j->src, in->entries, in->rejected, j->prev,
				    j->r->err, sizeof(j->r->err));
	return j->refused;
}

/*
 * bg_fetch(), then what the agent does with a candidate: parsed once by
 * the load pipeline, judged there (bg_fetch_judge() on its counts against
 * prev, the kept copy's), and kept (bg_fetch_keep(), validators and all)
 * or refused (bg_fetch_discard(); FAILED with the reason): the outcome as
 * the agent's status shows it.
 */
static int fetch(const struct bg_fetch_src *s, const char *c, uint64_t prev,
		 struct bg_fetch_validators *v, struct bg_fetch_result *r)
{
	char cand[PATH_MAX + 8];
	struct judged j = { .src = s, .prev = prev, .r = r };
	struct bg_sources srcs;
	struct bg_load_opts o = { .diag = quiet, .source_done = judge,
				  .source_ctx = &j };
	struct bg_load_report rep;
	struct bg_blocklist bl;
	int ret = bg_fetch(s, c, v, r), lr;

	if (ret || r->outcome != BG_FETCH_CHANGED)
		return ret;
	assert_int_equal(bg_fetch_candidate(c, cand, sizeof(cand)), 0);
	bg_sources_init(&srcs);
	srcs.format = s->list.format;
	srcs.subdomains = s->list.subdomains;
	assert_int_equal(bg_sources_add(&srcs, cand, s->list.allow), 0);
	o.sources = &srcs;
	bg_load_report_init(&rep);
	lr = bg_load_prepare(&o, &bl, &rep);
	if (j.refused) {
		assert_int_equal(lr, -ECANCELED);
		assert_int_equal(rep.failed, BG_STAGE_PARSE);
		assert_int_equal(rep.failed_source, 0);
	} else if (lr && rep.failed == BG_STAGE_PARSE) {
		snprintf(r->err, sizeof(r->err), "%.200s", rep.msg);
		j.refused = 1;
	}
	bg_blocklist_free(&bl);
	bg_load_report_free(&rep);
	bg_sources_free(&srcs);
	if (j.refused) {
		bg_fetch_discard(c);
		r->outcome = BG_FETCH_FAILED;
		r->sha256[0] = '\0';
		return 0;
	}
	assert_int_equal(bg_fetch_keep(c), 0);
	if (v)
		*v = r->v;
	return 0;
}

static struct bg_fetch_src url_src(const char *path)
{
	struct bg_fetch_src s = {
		.list = { .name = "test", .url = url(path),
			  .format = BG_FMT_AUTO },
		.timeout = 5,
		.max_bytes = 1 << 20,
		.max_shrink = 1,
	};
	return s;
}

static struct bg_fetch_src path_src(const char *path)
{
	struct bg_fetch_src s = {
		.list = { .name = "local", .path = path,
			  .format = BG_FMT_AUTO },
		.max_bytes = 1 << 20,
		.max_shrink = 1,
	};
	return s;
}

static void assert_same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *ta = slurp(a, &la), *tb = slurp(b, &lb);

	assert_non_null(ta);
	assert_non_null(tb);
	assert_int_equal(la, lb);
	assert_memory_equal(ta, tb, la);
	free(ta);
	free(tb);
}

/* The file at path holds text, or (text NULL) does not exist. */
static void assert_file_is(const char *path, const char *text)
{
	char *t = slurp(path, NULL);

	if (!text) {
		assert_null(t);
		return;
	}
	assert_non_null(t);
	assert_string_equal(t, text);
	free(t);
}

/* Fetches a good copy of www/name into cache/cname: the "last good". */
static void prime(const char *path, const char *cname,
		  struct bg_fetch_validators *v)
{
	struct bg_fetch_src s = url_src(path);
	struct bg_fetch_result r;

	assert_int_equal(fetch(&s, in(cache, cname), 0, v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
}

/* No file but the kept copies in the cache directory: no temporary left. */
static void assert_cache_clean(int expected_files)
{
	DIR *d = opendir(cache);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	assert_int_equal(n, expected_files);
}

/* ---- the server ---- */

static int start_server(void)
{
	port = httpd_start(logpath, ctlpath, www);
	return port > 0 ? 0 : -1;
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(www, sizeof(www), "%s/www", dir);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	snprintf(logpath, sizeof(logpath), "%s/requests.log", dir);
	snprintf(ctlpath, sizeof(ctlpath), "%s/control", dir);
	if (mkdir(www, 0755) || mkdir(cache, 0755))
		return -1;
	if (bg_fetch_global_init())
		return -1;
	return start_server();
}

static int teardown(void **state)
{
	(void)state;
	bg_fetch_global_cleanup();
	return httpd_teardown(dir);
}

/* Each test starts with an empty cache and a server behaving. */
static int each(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	unlink(ctlpath);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir '%s'", cache, cache);
	return system(cmd);
}

/* ---- URL ---- */

static void test_200_then_304(void **state)
{
	struct bg_fetch_validators v = { 0 }, restarted;
	struct bg_fetch_src s = url_src("/l1.txt");
	struct bg_fetch_result r;
	const char *c = in(cache, "l1");
	struct stat a, b;
	char last[512], want[512];

	(void)state;
	serve_addrs("l1.txt", 100, 1);
	assert_int_equal(fetch(&s, c, 0, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
	assert_int_equal(r.http_status, 200);
	assert_int_equal(r.entries, 100);
	assert_int_equal(r.rejected, 0);
	assert_int_equal(strlen(r.sha256), 64);
	assert_string_equal(r.err, "");
	assert_int_equal(v.etag[0], '"');
	assert_true(strstr(v.last_modified, " GMT") != NULL);
	assert_same_file(c, in(www, "l1.txt"));
	assert_int_equal(stat(c, &a), 0);
	assert_int_equal(a.st_mode & 0777, 0644);

	/* a restarted agent: the validators come from its store */
	restarted = v;
	assert_int_equal(fetch(&s, c, 100, &restarted, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_NOT_MODIFIED);
	assert_int_equal(r.http_status, 304);
	assert_int_equal(r.bytes, 0);
	assert_string_equal(r.err, "");
	assert_string_equal(restarted.etag, v.etag);
	assert_string_equal(restarted.last_modified, v.last_modified);
	assert_int_equal(stat(c, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(a.st_mtim.tv_nsec, b.st_mtim.tv_nsec);
	assert_int_equal(a.st_mtim.tv_sec, b.st_mtim.tv_sec);

	/* the server sent the If-None-Match back as 304, one 200 in all */
	snprintf(want, sizeof(want), "GET /l1.txt %s 304 ", v.etag);
	log_last(last, sizeof(last));
	assert_true(!strncmp(last, want, strlen(want)));
	assert_int_equal(log_count("GET /l1.txt ", " 200 ", NULL), 1);
	assert_cache_clean(1);

	/* the copy removed by hand: validators are not sent, so the
	 * answer is the list, not a 304 about a copy we no longer have */
	assert_int_equal(unlink(c), 0);
	assert_int_equal(fetch(&s, c, 100, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
	assert_int_equal(r.entries, 100);
	assert_same_file(c, in(www, "l1.txt"));
	log_last(last, sizeof(last));
	assert_true(!strncmp(last, "GET /l1.txt - 200 ", 18));
}

static void test_http_500_keeps_last_good(void **state)
{
	struct bg_fetch_validators v = { 0 }, before;
	struct bg_fetch_src s = url_src("/l2.txt");
	struct bg_fetch_result r;
	const char *c = in(cache, "l2");
	char *kept;

	(void)state;
	serve_addrs("l2.txt", 50, 2);
	prime("/l2.txt", "l2", &v);
	kept = slurp(c, NULL);
	/* the list moves on while the server fails: the old copy stays */
	serve_addrs("l2.txt", 60, 3);
	control("/l2.txt 500\n");
	before = v;
	assert_int_equal(fetch(&s, c, 50, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_int_equal(r.http_status, 500);
	assert_string_equal(r.err, "HTTP 500");
	assert_string_equal(r.sha256, "");
	assert_memory_equal(&v, &before, sizeof(v));
	assert_file_is(c, kept);

	s.list.url = url("/status/404");
	assert_int_equal(fetch(&s, c, 50, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_string_equal(r.err, "HTTP 404");
	assert_file_is(c, kept);
	assert_cache_clean(1);
	free(kept);
}

static void test_truncated_body(void **state)
{
	struct bg_fetch_validators v = { 0 }, before;
	struct bg_fetch_src s = url_src("/truncate/l3.txt");
	struct bg_fetch_result r;
	const char *c = in(cache, "l3");
	char *kept;

	(void)state;
	serve_addrs("l3.txt", 80, 4);
	prime("/l3.txt", "l3", &v);
	kept = slurp(c, NULL);
	before = v;
	/* a truncated body can parse fine: only the transfer can tell */
	assert_int_equal(fetch(&s, c, 80, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_true(!strncmp(r.err, "truncated body", 14));
	assert_memory_equal(&v, &before, sizeof(v));
	assert_file_is(c, kept);
	assert_cache_clean(1);
	free(kept);
}

static void test_garbage_is_not_a_list(void **state)
{
	struct bg_fetch_validators v = { 0 };
	struct bg_fetch_src s = url_src("/garbage/l4.txt");
	struct bg_fetch_result r;
	const char *c = in(cache, "l4");
	char *kept;

	(void)state;
	serve_addrs("l4.txt", 30, 5);
	prime("/l4.txt", "l4", &v);
	kept = slurp(c, NULL);
	assert_int_equal(fetch(&s, c, 30, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_int_equal(r.http_status, 200);
	assert_true(!strncmp(r.err, "not a list: ", 12));
	assert_file_is(c, kept);

	/* a captive portal's page, 200 and all */
	serve("page.html", "<html>\n<body>\nPlease log in\n</body>\n</html>\n");
	s.list.url = url("/page.html");
	assert_int_equal(fetch(&s, c, 30, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_string_equal(r.err,
			    "not a list: no entry, 5 lines rejected");
	/* more rejected lines than entries */
	serve("mixed.txt", "10.0.0.1\nfoo bar\nbaz qux\n");
	s.list.url = url("/mixed.txt");
	assert_int_equal(fetch(&s, c, 30, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_string_equal(r.err,
			    "not a list: 2 lines rejected, 1 entries accepted");
	/* an empty answer from a server is refused too */
	serve("empty.txt", "");
	s.list.url = url("/empty.txt");
	assert_int_equal(fetch(&s, c, 0, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_true(!strncmp(r.err, "not a list: no entry", 20));
	assert_file_is(c, kept);
	assert_cache_clean(1);
	free(kept);
}

static void test_slow_body_times_out(void **state)
{
	struct bg_fetch_validators v = { 0 };
	struct bg_fetch_src s = url_src("/slow/l5.txt");
	struct bg_fetch_result r;
	const char *c = in(cache, "l5");
	double t0;
	char *kept;

	(void)state;
	serve_addrs("l5.txt", 100, 6); /* ~1200 bytes: 2 minutes of drip */
	prime("/l5.txt", "l5", &v);
	kept = slurp(c, NULL);
	s.timeout = 1;
	t0 = bg_mono();
	assert_int_equal(fetch(&s, c, 100, &v, &r), 0);
	assert_true(bg_mono() - t0 < 1.5);
	assert_true(r.seconds >= 0.9 && r.seconds < 1.5);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_string_equal(r.err, "timeout after 1 s");
	assert_true(r.bytes > 0 && r.bytes < 20); /* it was dripping */
	assert_file_is(c, kept);
	assert_cache_clean(1);
	free(kept);
}

static void test_size_cap(void **state)
{
	struct bg_fetch_validators v = { 0 };
	struct bg_fetch_src s = url_src("/l6.txt");
	struct bg_fetch_result r;
	const char *c = in(cache, "l6");
	double t0;

	(void)state;
	serve_addrs("l6.txt", 200, 7); /* ~2400 bytes */
	/* Content-Length above the cap */
	s.max_bytes = 100;
	assert_int_equal(fetch(&s, c, 0, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_string_equal(r.err, "body larger than 100 bytes");
	assert_file_is(c, NULL);

	/* no Content-Length: the cap acts while receiving, long before the
	 * 10 s timeout (5 bytes at 100 ms each) */
	s.list.url = url("/slow/l6.txt");
	s.max_bytes = 5;
	s.timeout = 10;
	t0 = bg_mono();
	assert_int_equal(fetch(&s, c, 0, &v, &r), 0);
	assert_true(bg_mono() - t0 < 2);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_string_equal(r.err, "body larger than 5 bytes");
	assert_true(r.bytes <= 5);

	/* the cap is on the decoded bytes: a gzip body far below it that
	 * inflates beyond it is cut (a decompression bomb) */
	serve_addrs("bomb.txt", 20000, 8); /* ~260 KB, compresses well */
	s.list.url = url("/bomb.txt");
	s.max_bytes = 100000;
	s.timeout = 5;
	assert_int_equal(fetch(&s, c, 0, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_string_equal(r.err, "body larger than 100000 bytes");
	assert_int_equal(log_count("GET /bomb.txt - 200 gzip", NULL), 1);
	assert_file_is(c, NULL);
	assert_cache_clean(0);
}

static void test_gzip(void **state)
{
	struct bg_fetch_validators v = { 0 };
	struct bg_fetch_src s = url_src("/l7.txt");
	struct bg_fetch_result r;
	const char *c = in(cache, "l7");
	char last[512];
	struct stat st;

	(void)state;
	serve_addrs("l7.txt", 5000, 9);
	assert_int_equal(stat(in(www, "l7.txt"), &st), 0);
	assert_int_equal(fetch(&s, c, 0, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
	assert_int_equal(r.entries, 5000);
	assert_int_equal(r.bytes, st.st_size); /* decoded */
	log_last(last, sizeof(last));
	assert_string_equal(last, "GET /l7.txt - 200 gzip");
	assert_same_file(c, in(www, "l7.txt"));
}

static void test_shrink_guard(void **state)
{
	struct bg_fetch_validators v = { 0 }, before;
	struct bg_fetch_src s = url_src("/l8.txt");
	struct bg_fetch_result r;
	const char *c = in(cache, "l8");
	char *kept;

	(void)state;
	serve_addrs("l8.txt", 1000, 10);
	prime("/l8.txt", "l8", &v);
	kept = slurp(c, NULL);
	before = v;
	serve_addrs("l8.txt", 10, 10);
	s.max_shrink = 0.5;
	assert_int_equal(fetch(&s, c, 1000, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_string_equal(r.err,
			    "shrank from 1000 to 10 entries (more than 50%)");
	assert_int_equal(r.entries, 10);
	/* the validators stay the kept copy's: the next fetch downloads
	 * again rather than being told 304 about a copy we refused */
	assert_memory_equal(&v, &before, sizeof(v));
	assert_file_is(c, kept);

	/* exactly half is within a 50% guard */
	serve_addrs("l8.txt", 500, 10);
	assert_int_equal(fetch(&s, c, 1000, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
	assert_int_equal(r.entries, 500);

	/* no guard: 1, or no previous count */
	serve_addrs("l8.txt", 10, 10);
	assert_int_equal(fetch(&s, c, 0, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
	serve_addrs("l8.txt", 1, 10);
	s.max_shrink = 1;
	assert_int_equal(fetch(&s, c, 10, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
	assert_int_equal(r.entries, 1);
	free(kept);
}

static void test_unchanged_without_validators(void **state)
{
	struct bg_fetch_validators v = { 0 };
	struct bg_fetch_src s = url_src("/l9.txt");
	struct bg_fetch_result r;
	const char *c = in(cache, "l9");
	char sha[65];
	struct stat a, b;

	(void)state;
	control("* novalidators\n");
	serve_addrs("l9.txt", 20, 11);
	assert_int_equal(fetch(&s, c, 0, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
	assert_string_equal(v.etag, "");
	assert_string_equal(v.last_modified, "");
	strcpy(sha, r.sha256);
	assert_int_equal(stat(c, &a), 0);
	assert_int_equal(fetch(&s, c, 20, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_UNCHANGED);
	assert_string_equal(r.sha256, sha);
	assert_int_equal(r.entries, 0); /* the same bytes: not parsed again */
	assert_int_equal(stat(c, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino); /* not rewritten */
	assert_cache_clean(1);
}

static void test_redirect_and_refused(void **state)
{
	struct bg_fetch_validators v = { 0 };
	struct bg_fetch_src s = url_src("/redirect/l10.txt");
	struct bg_fetch_result r;
	const char *c = in(cache, "l10");

	(void)state;
	serve_addrs("l10.txt", 7, 12);
	assert_int_equal(fetch(&s, c, 0, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
	assert_int_equal(r.http_status, 200);
	assert_int_equal(r.entries, 7);
	assert_int_equal(log_count("GET /redirect/l10.txt - 302", NULL), 1);

	/* nobody listening: a connection error, no status */
	s.list.url = "http://127.0.0.1:1/l10.txt";
	assert_int_equal(fetch(&s, c, 7, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_int_equal(r.http_status, 0);
	assert_true(r.err[0] != '\0');
	/* not http(s) */
	s.list.url = "file:///etc/passwd";
	assert_int_equal(fetch(&s, c, 7, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_int_equal(r.entries, 0);
	assert_same_file(c, in(www, "l10.txt"));

	/* a redirect refused names where it pointed, its password hidden */
	s.list.url = url_src("/l10.txt").list.url;
	control("/l10.txt redirect gopher://bob:pw@h.example/x\n");
	assert_int_equal(fetch(&s, c, 7, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_non_null(strstr(r.err, "redirect to gopher://bob:***@h.example/x refused"));
	assert_null(strstr(r.err, "pw@"));
	control("");
	assert_same_file(c, in(www, "l10.txt"));
}

/*
 * A server that closes the connection in the middle of its headers:
 * libcurl reports an HTTP 200 with an empty body as a success, which was
 * then judged "not a list". It is said as what it is, and the copy kept.
 */
static void *close_in_headers(void *arg)
{
	int *lfd = arg, c, i;
	char buf[1024];

	for (i = 0; i < 1; i++) {
		c = accept(*lfd, NULL, NULL);
		if (c < 0)
			return NULL;
		if (recv(c, buf, sizeof(buf), 0) > 0) {
			static const char part[] = "HTTP/1.1 200 OK\r\nContent-Le";

			send(c, part, sizeof(part) - 1, MSG_NOSIGNAL);
		}
		close(c);
	}
	return NULL;
}

static void test_closed_in_headers(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	struct bg_fetch_validators v = { 0 };
	struct bg_fetch_result r;
	struct bg_fetch_src s;
	const char *c = in(cache, "hdr");
	char url[64];
	pthread_t th;
	int lfd;

	(void)state;
	serve_addrs("hdr.txt", 5, 3);
	s = url_src("/hdr.txt");
	assert_int_equal(fetch(&s, c, 0, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &al), 0);
	assert_int_equal(pthread_create(&th, NULL, close_in_headers, &lfd), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/hdr.txt", ntohs(a.sin_port));
	s.list.url = url;
	memset(&v, 0, sizeof(v));
	assert_int_equal(fetch(&s, c, 5, &v, &r), 0);
	pthread_join(th, NULL);
	close(lfd);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_non_null(strstr(r.err, "the connection closed in the response's headers"));
	assert_null(strstr(r.err, "not a list"));
	assert_same_file(c, in(www, "hdr.txt"));
}

static void test_domain_list(void **state)
{
	struct bg_fetch_validators v = { 0 };
	struct bg_fetch_src s = url_src("/hosts");
	struct bg_fetch_result r;

	(void)state;
	serve("hosts", "# ads\n0.0.0.0 ads.example.com\n"
		       "0.0.0.0 track.example.net\n0.0.0.0 x.example.org\n");
	assert_int_equal(fetch(&s, in(cache, "hosts"), 0, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
	assert_int_equal(r.entries, 3);
	/* stated as an address list, it is not one (a new copy: the same
	 * bytes as the kept one are not judged again) */
	s.list.format = BG_FMT_ADDR;
	v.etag[0] = v.last_modified[0] = '\0';
	assert_int_equal(unlink(in(cache, "hosts")), 0);
	assert_int_equal(fetch(&s, in(cache, "hosts"), 0, &v, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_true(!strncmp(r.err, "not a list", 10));
}

/* ---- a local file ---- */

static void test_path_source(void **state)
{
	struct bg_fetch_result r;
	const char *p = in(dir, "local.txt"), *c = in(cache, "local");
	struct bg_fetch_src s = path_src(p);
	char *t, tmp[PATH_MAX];
	struct stat a, b;

	(void)state;
	t = addrs(40, 13);
	write_file(p, t, strlen(t));
	free(t);
	assert_int_equal(fetch(&s, c, 0, NULL, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
	assert_int_equal(r.entries, 40);
	assert_int_equal(r.http_status, 0);
	assert_same_file(c, p);
	assert_int_equal(stat(c, &a), 0);

	assert_int_equal(fetch(&s, c, 40, NULL, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_UNCHANGED);
	assert_int_equal(r.entries, 0); /* the same bytes: not parsed again */
	assert_int_equal(stat(c, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);

	/* edited in place */
	t = addrs(41, 13);
	write_file(p, t, strlen(t));
	free(t);
	assert_int_equal(fetch(&s, c, 40, NULL, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
	assert_int_equal(r.entries, 41);
	assert_same_file(c, p);

	/* replaced by rename, as editors and config management do */
	snprintf(tmp, sizeof(tmp), "%s.new", p);
	t = addrs(45, 14);
	write_file(tmp, t, strlen(t));
	free(t);
	assert_int_equal(rename(tmp, p), 0);
	assert_int_equal(fetch(&s, c, 41, NULL, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
	assert_int_equal(r.entries, 45);
	assert_same_file(c, p);

	/* garbage: refused, the copy stays */
	write_file(p, "hello\nworld\n", 12);
	assert_int_equal(fetch(&s, c, 45, NULL, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_true(!strncmp(r.err, "not a list", 10));
	assert_int_equal(r.entries, 0);

	/* missing */
	assert_int_equal(unlink(p), 0);
	assert_int_equal(fetch(&s, c, 45, NULL, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	snprintf(tmp, sizeof(tmp), "%s: No such file or directory", p);
	assert_string_equal(r.err, tmp);
	t = slurp(c, NULL);
	assert_non_null(t);
	assert_true(strstr(t, "10.14.0.1\n") == t);
	free(t);

	/* too large, and not a file */
	t = addrs(100, 15);
	write_file(p, t, strlen(t));
	free(t);
	s.max_bytes = 50;
	assert_int_equal(fetch(&s, c, 45, NULL, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	snprintf(tmp, sizeof(tmp), "%s: larger than 50 bytes", p);
	assert_string_equal(r.err, tmp);
	s.list.path = www;
	assert_int_equal(fetch(&s, c, 45, NULL, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
	assert_true(strstr(r.err, "not a regular file") != NULL);

	/* a local list kept empty on purpose (comments only) is valid */
	s.list.path = p;
	s.max_bytes = 0;
	write_file(p, "# nothing yet\n", 14);
	assert_int_equal(fetch(&s, c, 45, NULL, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_CHANGED);
	assert_int_equal(r.entries, 0);
	assert_same_file(c, p);
	assert_cache_clean(1);
}

static void test_caller_errors(void **state)
{
	struct bg_fetch_src s = path_src("/x");
	struct bg_fetch_result r;

	(void)state;
	assert_int_equal(bg_fetch(&s, in(cache, "x"), NULL, NULL), -EINVAL);
	assert_int_equal(bg_fetch(NULL, in(cache, "x"), NULL, &r), -EINVAL);
	assert_int_equal(bg_fetch(&s, NULL, NULL, &r), -EINVAL);
	s.list.url = url("/x");
	assert_int_equal(bg_fetch(&s, in(cache, "x"), NULL, &r), -EINVAL);
	s.list.url = s.list.path = NULL;
	assert_int_equal(bg_fetch(&s, in(cache, "x"), NULL, &r), -EINVAL);
	/* a cache directory that does not exist: a failure, not a crash */
	s.list.path = in(www, "l1.txt");
	assert_int_equal(bg_fetch(&s, "/nonexistent/dir/x", NULL, &r), 0);
	assert_int_equal(r.outcome, BG_FETCH_FAILED);
}

/* ---- timing ---- */

static int near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

static void test_backoff_and_jitter(void **state)
{
	(void)state;
	assert_true(bg_backoff(0, 10, 3600, 0.5) == 0);
	assert_true(near(bg_backoff(1, 10, 3600, 0.5), 10));
	assert_true(near(bg_backoff(2, 10, 3600, 0.5), 20));
	assert_true(near(bg_backoff(4, 10, 3600, 0.5), 80));
	assert_true(near(bg_backoff(9, 10, 3600, 0.5), 2560));
	assert_true(near(bg_backoff(10, 10, 3600, 0.5), 3600));
	assert_true(near(bg_backoff(4000000000u, 10, 3600, 0.5), 3600));
	/* +-10%, also at the cap */
	assert_true(near(bg_backoff(1, 10, 3600, 0), 9));
	assert_true(near(bg_backoff(1, 10, 3600, 1), 11));
	assert_true(near(bg_backoff(20, 10, 3600, 1), 3960));
	assert_true(near(bg_backoff(20, 10, 3600, 0), 3240));
	assert_true(near(bg_jitter(100, 0), 90));
	assert_true(near(bg_jitter(100, 0.5), 100));
	assert_true(near(bg_jitter(100, 1), 110));
	assert_true(near(bg_jitter(100, 7), 110)); /* clamped */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_200_then_304, each),
		cmocka_unit_test_setup(test_http_500_keeps_last_good, each),
		cmocka_unit_test_setup(test_truncated_body, each),
		cmocka_unit_test_setup(test_garbage_is_not_a_list, each),
		cmocka_unit_test_setup(test_slow_body_times_out, each),
		cmocka_unit_test_setup(test_size_cap, each),
		cmocka_unit_test_setup(test_gzip, each),
		cmocka_unit_test_setup(test_shrink_guard, each),
		cmocka_unit_test_setup(test_unchanged_without_validators, each),
		cmocka_unit_test_setup(test_redirect_and_refused, each),
		cmocka_unit_test_setup(test_closed_in_headers, each),
		cmocka_unit_test_setup(test_domain_list, each),
		cmocka_unit_test_setup(test_path_source, each),
		cmocka_unit_test_setup(test_caller_errors, each),
		cmocka_unit_test(test_backoff_and_jitter),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
