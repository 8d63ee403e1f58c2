/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fetching a source and keeping its last good copy (issue 9). One call
 * refreshes one source: a URL (libcurl, conditional GET) or a local file,
 * into a candidate beside the cache file; the cache file only ever holds a
 * copy that parsed as a list. The agent decides when to call (timer,
 * inotify, reload), parses the candidate in the very parse that builds the
 * filter (one parse per change), and persists the validators and counts;
 * this file decides what a good copy is (bg_fetch_judge()) and moves it
 * into place (bg_fetch_keep()).
 *
 * Why a cache file rather than the source itself: a server answering 500,
 * a truncated transfer or a file half-written by an editor must never reach
 * the filter, also across restarts (pi-hole#5168, AdGuardHome#4845). The
 * copy is replaced by rename() only after it parsed, so a crash at any
 * point leaves either the old or the new copy, whole (and maybe a
 * candidate, which the agent removes at start).
 *
 * Core library: no libbpf; links libcurl and libcrypto (SHA-256).
 */
#ifndef BLOOMGATE_FETCH_H
#define BLOOMGATE_FETCH_H

#include <stdint.h>

#include "core/sha.h" /* bg_sha256_file() */

#include "core/sources.h"

/* A source as configured (the agent fills it from its config). */
struct bg_fetch_src {
	/* the list: list.url or list.path fetched (exactly one of the two),
	 * list.name for the caller's messages (r->err has none) */
	struct bg_list_desc list;
	double timeout; /* seconds, the whole transfer (URL); <= 0: 30 s */
	uint64_t max_bytes; /* size cap of a body (decoded); 0: no cap */
	/* refuse a copy with fewer than (1 - max_shrink) * prev_entries
	 * entries; >= 1 (or prev_entries 0): no guard (bg_fetch_judge()) */
	double max_shrink;
	/* SHA-256 (hex) of the copy at cache_path, as the caller knows it;
	 * NULL or "": the file is hashed */
	const char *kept_sha256;
	/* read atomically while fetching: nonzero stops the transfer (or the
	 * file's copy) at once, FAILED "aborted: ..." (SIGTERM: the agent
	 * does not wait for a slow body up to its timeout); may be NULL */
	const int *abort;
};

/* HTTP validators of the copy kept, as the server sent them (quotes and
 * all); "" when none. Persisted by the caller, so that a restart asks with
 * If-None-Match / If-Modified-Since instead of downloading again. */
struct bg_fetch_validators {
	char etag[256];
	char last_modified[64];
};

enum bg_fetch_outcome {
	BG_FETCH_CHANGED, /* a new copy, not judged yet, at the candidate's
			     path (bg_fetch_candidate()) */
	BG_FETCH_UNCHANGED, /* the same bytes as the copy kept (SHA-256) */
	BG_FETCH_NOT_MODIFIED, /* 304: nothing downloaded */
	BG_FETCH_FAILED, /* r->err says why; cache_path untouched */
};

struct bg_fetch_result {
	enum bg_fetch_outcome outcome;
	int http_status; /* of the last response; 0: not HTTP or no answer */
	uint64_t bytes; /* body bytes received (decoded), or the file's size */
	/* not set by bg_fetch(): the caller's parse of a candidate fills
	 * them (entries before de-duplication, lines rejected), e.g. for
	 * agent --check's line */
	uint64_t entries;
	uint64_t rejected;
	/* CHANGED (URL): the validators of the candidate, to become *v when
	 * the candidate is kept */
	struct bg_fetch_validators v;
	/* CHANGED/UNCHANGED: SHA-256 (hex) of the copy now kept; "" for
	 * NOT_MODIFIED and FAILED (the caller keeps the one it stored) */
	char sha256[65];
	/* FAILED: one line, e.g. "HTTP 500", "timeout after 30 s", "body
	 * larger than 67108864 bytes", "/etc/x.txt: No such file or
	 * directory"; else "" */
	char err[256];
	double seconds; /* time spent in bg_fetch() */
};

/*
 * Once per process, before any thread is started and before bg_fetch():
 * curl_global_init(). The agent's main() calls it (and bg_fetch_cleanup()
 * at exit); a unit test calls it in its setup. 0, or -EIO.
 */
int bg_fetch_global_init(void);
void bg_fetch_global_cleanup(void);

/* fsync(2) of the directory dir, so that a rename in it survives a power
 * cut. 0 or -errno. */
int bg_fsync_dir(const char *dir);

/*
 * Refreshes the candidate copy of src beside cache_path. Its directory must
 * exist and be writable: the new copy is received into an unnamed file
 * there (O_TMPFILE; a named "cache_path.XXXXXX" where the file system
 * has none), linked as "cache_path.new.PID.N" and renamed over the
 * candidate "cache_path.new", so a kill -9 at any point leaves nothing but
 * the old copy and maybe a whole candidate (and, in the short
 * link-to-rename window, that one extra name). cache_path itself is never
 * written here. Blocks for up to src->timeout (or until *src->abort). Calls
 * from several threads at once are fine when their cache_paths differ.
 *
 * URL: a GET with If-None-Match / If-Modified-Since from *v (304:
 * NOT_MODIFIED; no validators are sent when cache_path does not exist, so
 * a removed copy is downloaded again); compressed transfer accepted
 * (whatever libcurl decodes); up to 5 redirects followed, http and https
 * only; TLS verified; the size cap enforced on the decoded bytes while
 * receiving (the transfer is aborted at the cap: a decompression bomb or an
 * endless body costs at most max_bytes of disk); the timeout covers
 * connect and body. Any status but 2xx and 304 fails ("HTTP 500"). On 2xx
 * the body becomes the candidate (fsync of the file and the directory),
 * its validators in r->v; *v is updated on 304 from the headers it
 * carries, and on UNCHANGED; untouched otherwise: the validators describe
 * the kept copy. The same bytes as the kept copy (src->kept_sha256, or the
 * file hashed): UNCHANGED, nothing written.
 *
 * path: the file (regular, at most max_bytes) is copied to the temporary
 * file once, and that copy is the candidate: an editor writing the source
 * meanwhile cannot make the kept copy differ from the one parsed.
 * UNCHANGED when its SHA-256 is the kept copy's. v is not used.
 *
 * A failure never touches cache_path: the last good copy stays. Returns 0
 * (r->outcome says what happened), -EINVAL for a caller error (no src,
 * cache_path or r; both or neither of url and path), -ENOMEM.
 */
int bg_fetch(const struct bg_fetch_src *src, const char *cache_path,
	     struct bg_fetch_validators *v, struct bg_fetch_result *r);

/* The candidate of cache_path: "cache_path.new". 0 or -ENAMETOOLONG. */
int bg_fetch_candidate(const char *cache_path, char *out, size_t len);

/*
 * The rules of a good copy, applied to the counts of the parse of a
 * candidate (entries accepted before de-duplication, lines rejected)
 * against prev_entries, the kept copy's. Not a list: no entry at all, or
 * more rejected lines than entries ("not a list: 98 lines rejected, 2
 * entries accepted"). One exception: a local file with no entry and no
 * rejected line (empty, or comments only) is good, for a local list kept
 * empty on purpose; an empty answer from a server is not. Then the shrink
 * guard ("shrank from 1000 to 10 entries (more than 50%)"). 0: good; 1:
 * refused, with why in err.
 */
int bg_fetch_judge(const struct bg_fetch_src *src, uint64_t entries,
		   uint64_t rejected, uint64_t prev_entries, char *err,
		   size_t errlen);

/* The candidate judged good becomes the kept copy: renamed over cache_path,
 * the directory synced. 0 or -errno. */
int bg_fetch_keep(const char *cache_path);

/* The candidate refused (or stale, at start) is removed. */
void bg_fetch_discard(const char *cache_path);

/*
 * Retry delay after n consecutive failures: base * 2^(n-1), capped at max,
 * then jittered by +-10% from rnd (0..1; 0.5: none), so that gateways that
 * failed together do not retry together. At the cap the delay may exceed
 * max by up to 10% for the same reason. 0 for n == 0.
 */
double bg_backoff(unsigned int n, double base, double max, double rnd);

/* A refresh interval jittered by +-10% from rnd (0..1; 0.5: none). */
double bg_jitter(double interval, double rnd);

#endif
