// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent (user/agent/agent.h): one event loop over epoll, no polling. One
 * concern, the loop and its handlers; what they call is in the libraries
 * (config, fetch, store, metrics, load). What
 * wakes it: a signal (signalfd: TERM/INT stop, HUP re-reads the config and
 * every source), a file source changing (inotify on its directory, so a
 * file replaced by rename counts), a client on the control socket
 * (`bloomgate reload`, `status`), and the nearest deadline as the epoll
 * timeout (a URL's next fetch, the end of the debounce window of a
 * rebuild, the systemd watchdog). Between events it sleeps.
 *
 * The filter is always built from the last good copies in
 * STATE_DIR/lists/, never from a source directly: a source that fails
 * keeps its copy, so one bad source never empties the filter nor removes
 * the others' entries, also across restarts (the copies and the sources'
 * validators live on disk). A burst of changes coalesces into one rebuild
 * (cfg.debounce); a rebuild that fails leaves the old filter live and is
 * retried at the next change.
 *
 * Fetches run in the loop itself (libcurl, bounded by each source's
 * timeout): a slow source delays the others' events by at most that.
 * The metrics server answers on its own thread and reads the agent's
 * state under a mutex.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <net/if.h>
#include <systemd/sd-daemon.h>
#include <bpf/libbpf.h>

#include "agent/agent.h"
#include "kern/attach.h"
#include "agent/config.h"
#include "core/counters.h"
#include "agent/fetch.h"
#include "kern/load.h"
#include "agent/metrics.h"
#include "kern/pins.h"
#include "core/print.h"
#include "core/record.h"
#include "agent/provenance.h"
#include "agent/store.h"
#include "kern/swap.h"

/* Retry after a failed fetch: 30 s, doubling, at most the refresh interval
 * or an hour. */
#define RETRY_BASE 30.0
#define RETRY_MAX 3600.0

/* One source at run time. */
struct src {
	const struct bg_cfg_list *cfg;
	char copy[PATH_MAX]; /* the last good copy */
	struct bg_fetch_validators v;
	const char *state; /* "pending", "ok", "failing" */
	char sha256[65]; /* of the copy */
	char stored_sha[65]; /* of the copy the store's entries come from */
	uint64_t entries, fetches, failures, not_modified;
	unsigned failed_in_row;
	double last_ok, last_attempt; /* unix time */
	double due; /* monotonic time of the next fetch or check; 0: none */
	char last_error[256];
	int have_copy;
	int wd; /* inotify watch of its directory (path sources), -1 */
	double changed_at; /* unix time of its first inotify event since the
			      last refresh; 0: none */
};

struct agent {
	char *config_path;
	struct bg_config cfg;
	struct src *src;
	size_t nsrc;
	struct bg_store *store;
	struct bg_metrics_server *metrics;
	pthread_mutex_t lock; /* the state the metrics thread reads */
	int epfd, sigfd, infd, ctlfd;
	char ctl_path[PATH_MAX];
	double rebuild_at; /* monotonic; 0: no rebuild due */
	double watchdog_every; /* seconds; 0: no watchdog */
	double watchdog_due;
	uint64_t generation, rebuilds, rebuild_failures;
	struct bg_metrics_filter filter;
	int have_filter;
	double start_time;
	/* the pending rebuild: when its first change was seen (unix time, from
	 * the inotify event or the fetch start) and the fetch time in it */
	double change_seen, change_fetch_ms;
	int stop;
	/* flag events as JSON lines (cfg.events) */
	FILE *events_out;
	struct ring_buffer *events;
	struct bg_state events_st;
	int events_open;
};

/* ---- Helpers ------------------------------------------------------------ */

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;

	fputs("bloomgate agent: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double rnd(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)rand();
	return (double)r / 4294967296.0;
}

static int mkdir_p(const char *dir, mode_t mode)
{
	char tmp[PATH_MAX], *p;

	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Logs a source's state when it changes: once per change. */
static void set_state(struct src *s, const char *state, const char *why)
{
	if (s->state && !strcmp(s->state, state))
		return;
	s->state = state;
	logf_("source %s: %s%s%s", s->cfg->name, state, why ? ": " : "",
	      why ? why : "");
}

static void fetch_src_of(const struct bg_config *c, const struct bg_cfg_list *l,
			 struct bg_fetch_src *f)
{
	memset(f, 0, sizeof(*f));
	f->name = l->name;
	f->url = l->url;
	f->path = l->path;
	f->format = l->format;
	f->subdomains = l->subdomains;
	f->allow = l->allow;
	f->allow_wide = l->allow_wide;
	f->timeout = l->timeout;
	f->max_bytes = l->max_bytes;
	/* a file is read by the rebuild as it is, so the rebuild's bound
	 * holds for its copy too; a URL keeps its own cap (the rebuild
	 * still refuses a copy past max_list_bytes) */
	if (l->path && c->max_list_bytes < f->max_bytes)
		f->max_bytes = c->max_list_bytes;
	f->max_shrink = l->max_shrink;
}

/* ---- Sources ------------------------------------------------------------ */

/* The store's record of a source, with what the agent keeps there. */
static void store_put(struct agent *a, const struct src *s)
{
	struct bg_store_source r;

	if (!a->store)
		return;
	memset(&r, 0, sizeof(r));
	snprintf(r.name, sizeof(r.name), "%s", s->cfg->name);
	snprintf(r.url, sizeof(r.url), "%s", s->cfg->url ? s->cfg->url : "");
	snprintf(r.path, sizeof(r.path), "%s", s->cfg->path ? s->cfg->path : "");
	r.format = s->cfg->format;
	r.subdomains = s->cfg->subdomains;
	r.allow = s->cfg->allow;
	snprintf(r.etag, sizeof(r.etag), "%s", s->v.etag);
	snprintf(r.last_modified, sizeof(r.last_modified), "%s", s->v.last_modified);
	snprintf(r.sha256, sizeof(r.sha256), "%s", s->sha256);
	r.last_ok = s->last_ok;
	r.last_attempt = s->last_attempt;
	snprintf(r.last_error, sizeof(r.last_error), "%s", s->last_error);
	r.entries = s->entries;
	r.fetches = s->fetches;
	r.failures = s->failures;
	r.not_modified = s->not_modified;
	r.generation = a->generation;
	if (bg_store_source_put(a->store, &r))
		logf_("source %s: cannot update the store", s->cfg->name);
}

/* A source's state from the store and its copy on disk (a restart). */
static void src_restore(struct agent *a, struct src *s)
{
	struct bg_store_source r;
	struct stat st;

	s->have_copy = stat(s->copy, &st) == 0 && S_ISREG(st.st_mode);
	if (!a->store || bg_store_source_get(a->store, s->cfg->name, &r))
		return;
	/* validators only for the same URL: a moved list is fetched anew */
	if (s->cfg->url && !strcmp(r.url, s->cfg->url)) {
		snprintf(s->v.etag, sizeof(s->v.etag), "%s", r.etag);
		snprintf(s->v.last_modified, sizeof(s->v.last_modified), "%s",
			 r.last_modified);
	}
	if (s->have_copy) {
		snprintf(s->sha256, sizeof(s->sha256), "%s", r.sha256);
		snprintf(s->stored_sha, sizeof(s->stored_sha), "%s", r.sha256);
		s->entries = r.entries;
	}
	s->last_ok = r.last_ok;
	s->fetches = r.fetches;
	s->failures = r.failures;
	s->not_modified = r.not_modified;
}

/* Fetches or checks one source now; 1 when its copy changed. */
static int src_refresh(struct agent *a, struct src *s)
{
	struct bg_fetch_result r;
	struct bg_fetch_src f;
	double t0 = wall();
	int changed = 0;

	fetch_src_of(&a->cfg, s->cfg, &f);
	memset(&r, 0, sizeof(r));
	if (bg_fetch(&f, s->copy, s->have_copy ? s->entries : 0, &s->v, &r)) {
		r.outcome = BG_FETCH_FAILED;
		snprintf(r.err, sizeof(r.err), "cannot fetch (internal error)");
	}
	pthread_mutex_lock(&a->lock);
	s->fetches++;
	s->last_attempt = wall();
	switch (r.outcome) {
	case BG_FETCH_CHANGED:
		changed = 1;
		s->have_copy = 1;
		snprintf(s->sha256, sizeof(s->sha256), "%s", r.sha256);
		s->entries = r.entries;
		/* fall through */
	case BG_FETCH_UNCHANGED:
	case BG_FETCH_NOT_MODIFIED:
		if (r.outcome == BG_FETCH_NOT_MODIFIED)
			s->not_modified++;
		if (r.outcome == BG_FETCH_UNCHANGED && r.entries)
			s->entries = r.entries;
		s->last_ok = s->last_attempt;
		s->failed_in_row = 0;
		s->last_error[0] = 0;
		break;
	default:
		s->failures++;
		s->failed_in_row++;
		snprintf(s->last_error, sizeof(s->last_error), "%s", r.err);
		break;
	}
	if (r.outcome == BG_FETCH_FAILED)
		set_state(s, "failing", r.err);
	else
		set_state(s, "ok", NULL);
	if (s->cfg->refresh > 0) {
		double next = r.outcome == BG_FETCH_FAILED ?
				      bg_backoff(s->failed_in_row, RETRY_BASE,
						 fmin(s->cfg->refresh, RETRY_MAX), rnd()) :
				      bg_jitter(s->cfg->refresh, rnd());

		s->due = mono() + next;
	} else {
		s->due = 0; /* watched */
	}
	pthread_mutex_unlock(&a->lock);
	if (changed) {
		double seen = s->changed_at ? s->changed_at : t0;

		if (!a->change_seen || seen < a->change_seen)
			a->change_seen = seen;
		a->change_fetch_ms += r.seconds * 1e3;
		logf_("source %s: new copy, %llu entries (%s in %.1f ms)",
		      s->cfg->name, (unsigned long long)s->entries,
		      s->cfg->url ? "fetched" : "read", r.seconds * 1e3);
	}
	s->changed_at = 0;
	store_put(a, s);
	return changed;
}

/* ---- Rebuild ------------------------------------------------------------ */

/* What the live filter was built from: every copy's hash, how it is read,
 * the target rate. Equal fingerprints: nothing to rebuild. */
static void fingerprint(const struct agent *a, char *out, size_t len)
{
	size_t i, o = 0;

	o += (size_t)snprintf(out + o, len - o, "fpr=%g;confirm=%d", a->cfg.fpr,
			      a->cfg.confirm);
	for (i = 0; i < a->nsrc && o < len; i++) {
		const struct src *s = &a->src[i];

		if (!s->have_copy)
			continue;
		o += (size_t)snprintf(out + o, len - o, ";%s:%s:%d:%d:%d:%d",
				      s->cfg->name, s->sha256, s->cfg->format,
				      s->cfg->subdomains, s->cfg->allow,
				      s->cfg->allow_wide);
	}
}

static void filter_file(const struct agent *a, char *buf, size_t len)
{
	snprintf(buf, len, "%s/filter.json", a->cfg.state_dir);
}

/* Remembers the filter this agent published and what built it. */
static void save_filter(const struct agent *a, uint32_t id)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], fp[8192];
	struct json_object *o = json_object_new_object();

	if (!o)
		return;
	fingerprint(a, fp, sizeof(fp));
	json_object_object_add(o, "abi", json_object_new_int(BG_ABI_VERSION));
	json_object_object_add(o, "filter_id", json_object_new_int64(id));
	json_object_object_add(o, "fingerprint", json_object_new_string(fp));
	json_object_object_add(o, "generation", json_object_new_int64((int64_t)a->generation));
	json_object_object_add(o, "keys", json_object_new_int64((int64_t)a->filter.keys));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)a->filter.bytes));
	json_object_object_add(o, "bits_per_key", json_object_new_double(a->filter.bits_per_key));
	json_object_object_add(o, "predicted_fpr", json_object_new_double(a->filter.predicted_fpr));
	filter_file(a, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (json_object_to_file_ext(tmp, o, JSON_C_TO_STRING_PLAIN) == 0)
		rename(tmp, path);
	json_object_put(o);
}

/* 1 when the live filter is the one saved with the fingerprint of the
 * copies now: a restarted agent adopts it instead of rebuilding. */
static int can_adopt(struct agent *a)
{
	char path[PATH_MAX], fp[8192];
	struct json_object *o, *id, *f, *g;
	struct bg_state st;
	uint32_t live = 0;
	int ok = 0;

	filter_file(a, path, sizeof(path));
	o = json_object_from_file(path);
	if (!o)
		return 0;
	if (!bg_state_open(&st, 0)) {
		live = bg_filter_current_id(st.filters_fd);
		bg_state_close(&st);
	}
	fingerprint(a, fp, sizeof(fp));
	/* Only a filter of this build's layout: after an upgrade to another
	 * ABI it is rebuilt, never adopted. The ABI is the one saved with it
	 * (reading the live map itself would need CAP_SYS_ADMIN, which the
	 * agent's unit does not grant). */
	if (json_object_object_get_ex(o, "abi", &g) &&
	    json_object_get_int(g) == BG_ABI_VERSION &&
	    json_object_object_get_ex(o, "filter_id", &id) &&
	    json_object_object_get_ex(o, "fingerprint", &f) && live &&
	    (uint32_t)json_object_get_int64(id) == live &&
	    !strcmp(json_object_get_string(f), fp)) {
		ok = 1;
		if (json_object_object_get_ex(o, "generation", &g))
			a->generation = (uint64_t)json_object_get_int64(g);
		/* what metrics say of it, as it was built */
		a->have_filter = 1;
		a->filter.generation = a->generation;
		if (json_object_object_get_ex(o, "keys", &g))
			a->filter.keys = (uint64_t)json_object_get_int64(g);
		if (json_object_object_get_ex(o, "bytes", &g))
			a->filter.bytes = (uint64_t)json_object_get_int64(g);
		if (json_object_object_get_ex(o, "bits_per_key", &g))
			a->filter.bits_per_key = json_object_get_double(g);
		if (json_object_object_get_ex(o, "predicted_fpr", &g))
			a->filter.predicted_fpr = json_object_get_double(g);
	}
	json_object_put(o);
	return ok;
}

/* The sources with a copy, in the order rebuild() hands them to the
 * parse, as the provenance index takes them (pv: a->nsrc of them). */
static size_t prov_sources(const struct agent *a, struct bg_prov_source *pv)
{
	size_t i, n = 0;

	for (i = 0; i < a->nsrc; i++) {
		const struct src *s = &a->src[i];

		if (s->have_copy)
			pv[n++] = (struct bg_prov_source){
				.name = s->cfg->name, .copy = s->copy,
				.origin = s->cfg->url ? s->cfg->url : s->cfg->path,
				.sha256 = s->sha256[0] ? s->sha256 : NULL,
				.format = s->cfg->format, .allow = s->cfg->allow,
				.subdomains = s->cfg->subdomains,
				.allow_wide = s->cfg->allow_wide };
	}
	return n;
}

/* The store keeps the configured sources only: a list removed from the
 * config goes, with its index, once a filter without it is live. */
static void prune_store(struct agent *a)
{
	const char **keep = calloc(a->nsrc + 1, sizeof(*keep));
	size_t i;

	for (i = 0; keep && i < a->nsrc; i++)
		keep[i] = a->src[i].cfg->name;
	if (keep && a->store && bg_store_prune(a->store, keep, a->nsrc) < 0)
		logf_("cannot remove the sources gone from the config from the store");
	free(keep);
}

/* At the start: an index missing, truncated, corrupt or not of its copy
 * is dropped, so that the rebuild (or the adoption) writes it anew. */
static void verify_indexes(struct agent *a)
{
	struct bg_prov_bad *bad;
	size_t n, i;

	if (!a->store || bg_prov_verify(a->store, 1, &bad, &n))
		return;
	for (i = 0; i < n; i++)
		logf_("source %s: provenance %s: indexing it again", bad[i].name,
		      bad[i].why);
	free(bad);
}

/* The indexes follow the copies of an adopted filter: written for the
 * sources whose index is missing or of another copy (user/agent/provenance.h). */
static void store_entries(struct agent *a)
{
	struct bg_prov_source *pv = calloc(a->nsrc + 1, sizeof(*pv));
	int ret;

	if (!pv || !a->store)
		goto out;
	ret = bg_prov_reindex(a->store, pv, prov_sources(a, pv), a->cfg.max_list_bytes);
	if (ret < 0)
		logf_("provenance index: %s", strerror(-ret));
	prune_store(a);
out:
	free(pv);
}

static void on_diag(void *ctx, const struct bg_diag *d)
{
	(void)ctx;
	(void)d; /* counted in the report; the fetch validated each copy */
}

static void log_gone(void *ctx, const struct bg_attach_rec *r)
{
	(void)ctx;
	logf_("interface ifindex %u (netns inode %u) is gone: its attachment "
	      "removed", r->ifindex, r->netns_ino);
}

/* Removes the attachments whose interface was deleted (as `detach
 * --gone`): once removed, each is logged once. Quiet when nothing is
 * attached or the state cannot be opened: rebuild says so itself. */
static void clean_gone(void)
{
	char err[256];

	bg_detach_gone(log_gone, NULL, err, sizeof(err));
}

/* Builds a filter from every last good copy and swaps it in. */
static int rebuild(struct agent *a)
{
	struct bg_load_opts o = { .fpr = a->cfg.fpr, .diag = on_diag,
				  .confirm_off = !a->cfg.confirm,
				  .max_list_bytes = a->cfg.max_list_bytes,
				  .max_entries = a->cfg.max_entries };
	struct bg_load_report r;
	struct bg_blocklist bl;
	struct bg_sources srcs;
	struct bg_state st;
	struct bg_prov_writer *pw = NULL;
	struct bg_prov_source *pv;
	size_t i;
	int ret;

	a->rebuild_at = 0;
	bg_sources_init(&srcs);
	for (i = 0; i < a->nsrc; i++) {
		const struct src *s = &a->src[i];

		if (!s->have_copy)
			continue;
		/* the format as configured; detected per copy when absent */
		srcs.format = (uint8_t)s->cfg->format;
		srcs.subdomains = (uint8_t)s->cfg->subdomains;
		if (bg_sources_add(&srcs, s->copy, s->cfg->allow)) {
			bg_sources_free(&srcs);
			return -ENOMEM;
		}
		srcs.v[srcs.n - 1].allow_wide = (uint8_t)!!s->cfg->allow_wide;
	}
	if (bg_sources_done(&srcs)) {
		logf_("no block list has a good copy yet: the filter is unchanged");
		bg_sources_free(&srcs);
		return -ENODATA;
	}
	clean_gone();
	o.sources = &srcs;
	/* the provenance index from the same parse (same order as srcs) */
	pv = calloc(a->nsrc + 1, sizeof(*pv));
	ret = pv ? bg_prov_begin(a->cfg.state_dir, pv, prov_sources(a, pv), &pw) : -ENOMEM;
	if (!ret) {
		o.entry = bg_prov_entry;
		o.entry_ctx = pw;
	} else {
		logf_("provenance index: %s; check will not name this filter's lines",
		      strerror(-ret));
	}
	free(pv);
	bg_load_report_init(&r);
	/* the lists parsed before the lock, as `load` does: a CLI command
	 * waits for the agent's build and swap, never for its parse */
	ret = bg_load_prepare(&o, &bl, &r);
	/* what was detected, as `load` prints it: the copy's path names it */
	for (i = 0; i < r.n_detected; i++) {
		char line[PATH_MAX + 256];

		bg_fmt_detected(line, sizeof(line), &r.detected[i]);
		logf_("%s", line);
	}
	if (!ret) {
		ret = bg_state_open(&st, 1);
		if (ret) {
			logf_("cannot open the pinned state in %s: %s (is bloomgate attached?)",
			      bg_pin_dir(), strerror(-ret));
			bg_blocklist_free(&bl);
			bg_load_report_free(&r);
			bg_sources_free(&srcs);
			bg_prov_abort(pw);
			a->rebuild_failures++;
			return ret;
		}
		ret = bg_load_commit(&st, &o, &bl, &r);
		bg_state_close(&st);
	}
	bg_blocklist_free(&bl);
	pthread_mutex_lock(&a->lock);
	a->rebuilds++;
	if (ret) {
		a->rebuild_failures++;
		logf_("rebuild failed (%s): %s; the running filter is unchanged",
		      bg_load_stage_name(r.failed), r.msg);
	} else {
		a->generation++;
		a->have_filter = 1;
		a->filter.keys = r.plan.n;
		a->filter.bytes = r.plan.bytes;
		a->filter.bits_per_key = r.plan.bits_per_entry;
		/* the rate of wrong verdicts: after the exact stage when there is
		 * one (predicted_confirmed == predicted_addr without) */
		a->filter.predicted_fpr = r.plan.predicted_confirmed;
		a->filter.generation = a->generation;
		a->filter.build_seconds =
			(r.ms[BG_STAGE_PARSE] + r.ms[BG_STAGE_PLAN] + r.ms[BG_STAGE_BUILD]) / 1e3;
		a->filter.swap_seconds = r.ms[BG_STAGE_PUBLISH] / 1e3;
		logf_("filter %llu live: %llu keys, %zu bytes, %.2f bits/key, "
		      "built in %.0f ms, swapped in %.1f ms",
		      (unsigned long long)a->generation,
		      (unsigned long long)r.plan.n, r.plan.bytes,
		      r.plan.bits_per_entry, a->filter.build_seconds * 1e3,
		      r.ms[BG_STAGE_PUBLISH]);
		/* live, but `check` cannot name its entries: say so */
		if (r.failed == BG_STAGE_RECORD)
			logf_("the load record was not written: %s", r.msg);
	}
	pthread_mutex_unlock(&a->lock);
	if (!ret) {
		double t = bg_now_ms();

		save_filter(a, r.filter_id);
		if (pw && (ret = bg_prov_commit(pw, a->store)) < 0)
			logf_("provenance index: %s", strerror(-ret));
		pw = NULL;
		ret = 0;
		prune_store(a); /* a list gone from the config left the filter now */
		/* one line for the bench (bench/agent.sh): the change's way to
		 * the datapath, stage by stage */
		logf_("timing: change seen at %.6f, fetch %.1f ms, parse %.1f ms, "
		      "plan %.1f ms, build %.1f ms, swap %.2f ms, live at %.6f, "
		      "store %.1f ms", a->change_seen, a->change_fetch_ms,
		      r.ms[BG_STAGE_PARSE], r.ms[BG_STAGE_PLAN], r.ms[BG_STAGE_BUILD],
		      r.ms[BG_STAGE_PUBLISH], wall() - (bg_now_ms() - t) / 1e3,
		      bg_now_ms() - t);
	}
	bg_prov_abort(pw); /* not committed: the old filter stays, and its indexes */
	a->change_seen = 0;
	a->change_fetch_ms = 0;
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
	return ret;
}

static void want_rebuild(struct agent *a)
{
	if (!a->rebuild_at)
		a->rebuild_at = mono() + a->cfg.debounce;
}

/* ---- Flag events ------------------------------------------------------- */

static int on_event(void *ctx, void *data, size_t size)
{
	struct agent *a = ctx;

	bg_print_event_json(a->events_out, data, size);
	return 0;
}

/* Opens the event ring buffer and the output when cfg.events asks; the
 * ring buffer's fd joins the epoll set, so events cost no polling. */
static void open_events(struct agent *a)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (!a->cfg.events || a->events)
		return;
	if (!strcmp(a->cfg.events, "-"))
		a->events_out = stdout;
	else
		a->events_out = fopen(a->cfg.events, "ae");
	if (!a->events_out) {
		logf_("events: cannot open %s: %s", a->cfg.events, strerror(errno));
		return;
	}
	if (bg_state_open(&a->events_st, 0)) {
		logf_("events: bloomgate is not attached: no events");
		goto fail;
	}
	a->events_open = 1;
	a->events = ring_buffer__new(a->events_st.events_fd, on_event, a, NULL);
	if (!a->events) {
		logf_("events: cannot open the ring buffer: %s", strerror(errno));
		goto fail;
	}
	ev.data.fd = ring_buffer__epoll_fd(a->events);
	if (epoll_ctl(a->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) == 0)
		return;
	logf_("events: %s", strerror(errno));
fail:
	if (a->events)
		ring_buffer__free(a->events);
	a->events = NULL;
	if (a->events_open)
		bg_state_close(&a->events_st);
	a->events_open = 0;
	if (a->events_out && a->events_out != stdout)
		fclose(a->events_out);
	a->events_out = NULL;
}

static void close_events(struct agent *a)
{
	if (a->events)
		ring_buffer__free(a->events);
	if (a->events_open)
		bg_state_close(&a->events_st);
	if (a->events_out && a->events_out != stdout)
		fclose(a->events_out);
	a->events = NULL;
	a->events_open = 0;
	a->events_out = NULL;
}

/* ---- Setup -------------------------------------------------------------- */

static int setup_sources(struct agent *a, const struct src *old, size_t nold)
{
	char dir[PATH_MAX];
	size_t i, j;
	int ret;

	snprintf(dir, sizeof(dir), "%s/lists", a->cfg.state_dir);
	ret = mkdir_p(dir, 0700);
	if (ret)
		return ret;
	a->src = calloc(a->cfg.n_lists ? a->cfg.n_lists : 1, sizeof(*a->src));
	if (!a->src)
		return -ENOMEM;
	a->nsrc = a->cfg.n_lists;
	for (i = 0; i < a->nsrc; i++) {
		struct src *s = &a->src[i];

		s->cfg = &a->cfg.lists[i];
		s->wd = -1;
		if (snprintf(s->copy, sizeof(s->copy), "%s/%s.list", dir,
			     s->cfg->name) >= (int)sizeof(s->copy))
			return -ENAMETOOLONG;
		s->state = NULL;
		for (j = 0; j < nold; j++) {
			if (strcmp(old[j].cfg->name, s->cfg->name))
				continue;
			/* a reload keeps what it knew of a source */
			*s = old[j];
			s->cfg = &a->cfg.lists[i];
			s->wd = -1;
			break;
		}
		if (j == nold)
			src_restore(a, s);
		s->due = mono(); /* every source is refreshed at start */
		if (s->cfg->path && a->infd >= 0) {
			char d[PATH_MAX], *slash;

			snprintf(d, sizeof(d), "%s", s->cfg->path);
			slash = strrchr(d, '/');
			if (slash)
				*(slash == d ? slash + 1 : slash) = 0;
			s->wd = inotify_add_watch(a->infd, d,
						  IN_CLOSE_WRITE | IN_MOVED_TO |
						  IN_CREATE | IN_DELETE | IN_MOVED_FROM |
						  IN_ATTRIB);
			if (s->wd < 0)
				logf_("source %s: cannot watch %s: %s", s->cfg->name,
				      d, strerror(errno));
		}
	}
	return 0;
}

static void attach_ifaces(const struct agent *a)
{
	struct bg_attach_rec recs[BG_ATTACH_MAX];
	struct bg_state st;
	int n = 0, i, k;
	char err[256];

	/* first, so an interface deleted and created again is attached anew */
	clean_gone();
	if (!bg_state_open(&st, 0)) {
		n = bg_attach_list(&st, recs, BG_ATTACH_MAX);
		bg_state_close(&st);
	}
	for (i = 0; i < (int)a->cfg.n_ifaces; i++) {
		const struct bg_cfg_iface *f = &a->cfg.ifaces[i];
		unsigned int idx = if_nametoindex(f->name);

		for (k = 0; k < n; k++)
			if (recs[k].ifindex == idx && recs[k].netns_ino == bg_netns_ino())
				break;
		if (idx && k < n)
			continue; /* attached already: fail-static, no gap */
		if (bg_attach(f->name, &f->attach, err, sizeof(err)))
			logf_("interface %s: %s", f->name, err);
		else
			logf_("interface %s: attached", f->name);
	}
}

static void detach_ifaces(const struct agent *a)
{
	char err[256];
	size_t i;

	for (i = 0; i < a->cfg.n_ifaces; i++)
		if (bg_detach(a->cfg.ifaces[i].name, err, sizeof(err)))
			logf_("interface %s: %s", a->cfg.ifaces[i].name, err);
}

/* ---- Metrics and status ------------------------------------------------ */

static int render(void *ctx, FILE *out)
{
	struct agent *a = ctx;
	struct bg_attach_rec recs[BG_ATTACH_MAX];
	struct bg_metrics_source *ms;
	struct bg_metrics_view v = { 0 };
	struct bg_counters c;
	struct bg_state st;
	size_t i;
	int ret;

	if (!bg_state_open(&st, 0)) {
		if (!bg_counters_read(st.counters_fd, &c))
			v.counters = &c;
		v.nrecs = bg_attach_list(&st, recs, BG_ATTACH_MAX);
		v.recs = recs;
		bg_state_close(&st);
	}
	pthread_mutex_lock(&a->lock);
	ms = calloc(a->nsrc ? a->nsrc : 1, sizeof(*ms));
	if (!ms) {
		pthread_mutex_unlock(&a->lock);
		return -ENOMEM;
	}
	for (i = 0; i < a->nsrc; i++) {
		const struct src *s = &a->src[i];

		ms[i].name = s->cfg->name;
		ms[i].state = s->state ? s->state : "pending";
		ms[i].entries = s->entries;
		ms[i].last_success = s->last_ok;
		ms[i].fetch_failures = s->failures;
		ms[i].not_modified = s->not_modified;
		ms[i].fetches = s->fetches;
	}
	v.filter = a->have_filter ? &a->filter : NULL;
	v.rebuilds = a->rebuilds;
	v.rebuild_failures = a->rebuild_failures;
	v.sources = ms;
	v.nsources = a->nsrc;
	v.start_time = a->start_time;
	ret = bg_metrics_render(out, &v);
	pthread_mutex_unlock(&a->lock);
	free(ms);
	return ret;
}

static struct json_object *status_json(struct agent *a)
{
	struct json_object *o = json_object_new_object(), *arr;
	double now = mono();
	size_t i;

	if (!o)
		return NULL;
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "uptime", json_object_new_double(wall() - a->start_time));
	json_object_object_add(o, "config", json_object_new_string(a->config_path));
	json_object_object_add(o, "generation", json_object_new_int64((int64_t)a->generation));
	arr = json_object_new_array();
	for (i = 0; arr && i < a->nsrc; i++) {
		const struct src *s = &a->src[i];
		struct json_object *j = json_object_new_object();

		if (!j)
			break;
		json_object_object_add(j, "name", json_object_new_string(s->cfg->name));
		json_object_object_add(j, "origin", json_object_new_string(
			s->cfg->url ? s->cfg->url : s->cfg->path));
		json_object_object_add(j, "state", json_object_new_string(
			s->state ? s->state : "pending"));
		json_object_object_add(j, "entries", json_object_new_int64((int64_t)s->entries));
		json_object_object_add(j, "last_success", json_object_new_double(s->last_ok));
		json_object_object_add(j, "last_error", json_object_new_string(s->last_error));
		json_object_object_add(j, "next_fetch_in", s->due ?
			json_object_new_double(fmax(0, s->due - now)) : NULL);
		json_object_array_add(arr, j);
	}
	json_object_object_add(o, "sources", arr);
	return o;
}

/* ---- Events ------------------------------------------------------------- */

static int reload_config(struct agent *a);

/* Refreshes every due source, then rebuilds when one changed: after the
 * debounce window when a URL changed (others may follow), at once when
 * only watched files did (their events were debounced already). */
static void run_due(struct agent *a, int all)
{
	double now = mono();
	size_t i;
	int url = 0, file = 0;

	for (i = 0; i < a->nsrc && !a->stop; i++) {
		struct src *s = &a->src[i];

		if (!all && !(s->due && s->due <= now))
			continue;
		if (src_refresh(a, s)) {
			url |= !!s->cfg->url;
			file |= !s->cfg->url;
		}
	}
	if (url)
		want_rebuild(a);
	else if (file && !a->rebuild_at)
		a->rebuild_at = mono();
}

static void on_inotify(struct agent *a)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	size_t i;

	while ((n = read(a->infd, buf, sizeof(buf))) > 0) {
		char *p = buf;

		while (p < buf + n) {
			const struct inotify_event *e = (const void *)p;

			for (i = 0; i < a->nsrc; i++) {
				struct src *s = &a->src[i];
				const char *base;

				if (s->wd != e->wd || !s->cfg->path)
					continue;
				base = strrchr(s->cfg->path, '/');
				base = base ? base + 1 : s->cfg->path;
				if (e->len && strcmp(e->name, base))
					continue;
				/* debounced: an editor's several writes are one */
				s->due = mono() + a->cfg.debounce;
				if (!s->changed_at)
					s->changed_at = wall();
			}
			p += sizeof(*e) + e->len;
		}
	}
}

static void on_control(struct agent *a)
{
	char line[256] = "";
	struct json_object *o;
	size_t len;
	ssize_t n = 0;
	int c;
	FILE *f;

	c = accept4(a->ctlfd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return;
	/* one line, possibly in several segments; a client that sends
	 * nothing for a second is dropped (the loop must not hang on it) */
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO,
		   &(struct timeval){ .tv_sec = 1 }, sizeof(struct timeval));
	for (len = 0; len < sizeof(line) - 1 && !memchr(line, '\n', len); len += (size_t)n) {
		n = recv(c, line + len, sizeof(line) - 1 - len, 0);
		if (n <= 0)
			break;
	}
	line[len] = 0;
	line[strcspn(line, "\r\n")] = 0;
	f = fdopen(c, "w");
	if (!f) {
		close(c);
		return;
	}
	if (!strcmp(line, "reload")) {
		uint64_t g = a->generation;

		logf_("reload asked on the control socket");
		if (reload_config(a)) {
			fprintf(f, "error: the config is invalid; the agent runs on as it was\n");
		} else {
			run_due(a, 1);
			if (a->rebuild_at)
				rebuild(a);
			fprintf(f, "ok: generation %llu%s\n",
				(unsigned long long)a->generation,
				a->generation == g ? " (nothing changed)" : "");
		}
	} else if (!strcmp(line, "status")) {
		pthread_mutex_lock(&a->lock);
		o = status_json(a);
		pthread_mutex_unlock(&a->lock);
		fprintf(f, "%s\n", o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "{}");
		json_object_put(o);
	} else {
		fprintf(f, "error: unknown command '%s' (reload, status)\n", line);
	}
	fclose(f);
}

/* Re-reads the config (SIGHUP, reload): on an invalid one the agent runs
 * on with the old. */
static int reload_config(struct agent *a)
{
	struct bg_config cfg;
	struct src *old = a->src;
	size_t nold = a->nsrc, i;
	char err[512];
	int ret;

	ret = bg_config_load(a->config_path, &cfg, err, sizeof(err));
	if (ret) {
		logf_("%s; the agent runs on with the config it has", err);
		return ret;
	}
	for (i = 0; i < nold; i++)
		if (old[i].wd >= 0)
			inotify_rm_watch(a->infd, old[i].wd);
	pthread_mutex_lock(&a->lock);
	/* old[] points into the old config until the new sources copy it */
	{
		struct bg_config prev = a->cfg;

		a->cfg = cfg;
		a->src = NULL;
		ret = setup_sources(a, old, nold);
		bg_config_free(&prev);
	}
	pthread_mutex_unlock(&a->lock);
	free(old);
	if (ret)
		return ret;
	attach_ifaces(a);
	close_events(a);
	open_events(a);
	return 0;
}

static int on_signal(struct agent *a)
{
	struct signalfd_siginfo si;

	while (read(a->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			logf_("SIGHUP: re-reading the config and every source");
			sd_notify(0, "RELOADING=1");
			if (!reload_config(a))
				run_due(a, 1);
			sd_notify(0, "READY=1");
		} else {
			a->stop = 1;
		}
	}
	return 0;
}

/* Milliseconds to the nearest deadline, -1 for none. */
static int next_timeout(const struct agent *a)
{
	double now = mono(), t = 0;
	size_t i;

	for (i = 0; i < a->nsrc; i++)
		if (a->src[i].due && (!t || a->src[i].due < t))
			t = a->src[i].due;
	if (a->rebuild_at && (!t || a->rebuild_at < t))
		t = a->rebuild_at;
	if (a->watchdog_due && (!t || a->watchdog_due < t))
		t = a->watchdog_due;
	if (!t)
		return -1;
	return t <= now ? 0 : (int)ceil((t - now) * 1e3);
}

static int open_control(struct agent *a)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t um;
	int fd;

	bg_run_path(a->ctl_path, sizeof(a->ctl_path), ".sock");
	if (mkdir_p(BG_RECORD_DIR, 0755))
		return -errno;
	if (strlen(a->ctl_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, a->ctl_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(a->ctl_path); /* a socket a killed agent left */
	um = umask(0077); /* 0600: only root asks the agent */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8)) {
		int err = -errno;

		umask(um);
		close(fd);
		return err;
	}
	umask(um);
	a->ctlfd = fd;
	return 0;
}

static int add_fd(struct agent *a, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static void agent_free(struct agent *a)
{
	close_events(a);
	if (a->metrics)
		bg_metrics_stop(a->metrics);
	if (a->ctlfd >= 0) {
		close(a->ctlfd);
		unlink(a->ctl_path);
	}
	if (a->infd >= 0)
		close(a->infd);
	if (a->sigfd >= 0)
		close(a->sigfd);
	if (a->epfd >= 0)
		close(a->epfd);
	if (a->store)
		bg_store_close(a->store);
	free(a->src);
	bg_config_free(&a->cfg);
	free(a->config_path);
	pthread_mutex_destroy(&a->lock);
}

int bg_agent_run(const char *config_path)
{
	struct agent a = { .epfd = -1, .sigfd = -1, .infd = -1, .ctlfd = -1 };
	struct epoll_event ev[8];
	uint64_t usec = 0;
	char err[512];
	sigset_t mask;
	int ret, n, i;

	pthread_mutex_init(&a.lock, NULL);
	a.start_time = wall();
	if (bg_fetch_global_init()) {
		logf_("cannot initialise libcurl");
		return 1;
	}
	a.config_path = strdup(config_path);
	if (!a.config_path)
		return 1;
	if (bg_config_load(config_path, &a.cfg, err, sizeof(err))) {
		logf_("%s", err);
		free(a.config_path);
		return 2;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	a.epfd = epoll_create1(EPOLL_CLOEXEC);
	a.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	a.infd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	ret = bg_ensure_bpffs();
	if (!ret)
		ret = mkdir_p(a.cfg.state_dir, 0700);
	if (ret) {
		logf_("cannot prepare %s: %s", a.cfg.state_dir, strerror(-ret));
		agent_free(&a);
		return 1;
	}
	ret = bg_store_open(a.cfg.state_dir, &a.store);
	if (ret) {
		logf_("cannot open the store in %s: %s; going on without it",
		      a.cfg.state_dir, strerror(-ret));
		a.store = NULL;
	}
	if (a.epfd < 0 || a.sigfd < 0 || a.infd < 0 || setup_sources(&a, NULL, 0) ||
	    open_control(&a) || add_fd(&a, a.sigfd) || add_fd(&a, a.infd) ||
	    add_fd(&a, a.ctlfd)) {
		logf_("cannot start: %s", strerror(errno));
		agent_free(&a);
		return 1;
	}
	if (a.cfg.metrics) {
		a.metrics = bg_metrics_start(a.cfg.metrics, render, &a, err, sizeof(err));
		if (!a.metrics)
			logf_("metrics on %s: %s", a.cfg.metrics, err);
	}
	attach_ifaces(&a);
	open_events(&a);
	/* Every source once, then the filter: adopted when the copies are
	 * those the live filter was built from, rebuilt otherwise. */
	run_due(&a, 1);
	verify_indexes(&a);
	if (can_adopt(&a)) {
		logf_("the live filter is built from these copies: adopted "
		      "(generation %llu)", (unsigned long long)a.generation);
		a.rebuild_at = 0;
		store_entries(&a);
	} else {
		rebuild(&a);
	}
	if (sd_watchdog_enabled(0, &usec) > 0 && usec) {
		a.watchdog_every = (double)usec / 2e6;
		a.watchdog_due = mono() + a.watchdog_every;
	}
	sd_notifyf(0, "READY=1\nSTATUS=generation %llu, %zu sources",
		   (unsigned long long)a.generation, a.nsrc);
	logf_("running (pid %d, %zu sources, config %s)", getpid(), a.nsrc,
	      config_path);

	while (!a.stop) {
		n = epoll_wait(a.epfd, ev, 8, next_timeout(&a));
		if (n < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++) {
			if (ev[i].data.fd == a.sigfd)
				on_signal(&a);
			else if (ev[i].data.fd == a.infd)
				on_inotify(&a);
			else if (ev[i].data.fd == a.ctlfd)
				on_control(&a);
			else if (a.events)
				ring_buffer__consume(a.events);
		}
		if (a.stop)
			break;
		run_due(&a, 0);
		if (a.rebuild_at && a.rebuild_at <= mono())
			rebuild(&a);
		if (a.watchdog_due && a.watchdog_due <= mono()) {
			sd_notify(0, "WATCHDOG=1");
			a.watchdog_due = mono() + a.watchdog_every;
		}
	}
	sd_notify(0, "STOPPING=1");
	logf_("stopping; %s", a.cfg.detach_on_stop ?
		      "detaching as the config asks" :
		      "the filter stays live (fail-static)");
	if (a.cfg.detach_on_stop)
		detach_ifaces(&a);
	agent_free(&a);
	return 0;
}

/* ---- check and the control client -------------------------------------- */

int bg_agent_check(const char *config_path, FILE *out)
{
	struct bg_config cfg;
	char err[512], dir[] = "/tmp/bloomgate-check.XXXXXX", copy[PATH_MAX];
	size_t i;
	int bad = 0;

	if (bg_config_load(config_path, &cfg, err, sizeof(err))) {
		fprintf(out, "%s\n", err);
		return 2;
	}
	if (bg_fetch_global_init()) {
		fprintf(out, "cannot initialise libcurl\n");
		bg_config_free(&cfg);
		return 1;
	}
	fprintf(out, "%s: config valid: %zu interfaces, %zu lists\n", config_path,
		cfg.n_ifaces, cfg.n_lists);
	if (!mkdtemp(dir)) {
		fprintf(out, "cannot make a scratch directory: %s\n", strerror(errno));
		bg_config_free(&cfg);
		return 1;
	}
	for (i = 0; i < cfg.n_lists; i++) {
		const struct bg_cfg_list *l = &cfg.lists[i];
		struct bg_fetch_validators v = { { 0 }, { 0 } };
		struct bg_fetch_result r;
		struct bg_fetch_src f;

		fetch_src_of(&cfg, l, &f);
		snprintf(copy, sizeof(copy), "%s/%s.list", dir, l->name);
		memset(&r, 0, sizeof(r));
		if (bg_fetch(&f, copy, 0, &v, &r) || r.outcome == BG_FETCH_FAILED) {
			fprintf(out, "list %s (%s): FAILED: %s\n", l->name,
				l->url ? l->url : l->path, r.err);
			bad = 1;
		} else {
			fprintf(out, "list %s (%s): ok, %llu entries, %llu rejected lines\n",
				l->name, l->url ? l->url : l->path,
				(unsigned long long)r.entries,
				(unsigned long long)r.rejected);
		}
		unlink(copy);
	}
	rmdir(dir);
	bg_config_free(&cfg);
	return bad;
}

int bg_agent_ask(const char *cmd, FILE *out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[PATH_MAX], buf[4096];
	ssize_t n;
	int fd, ret = 0;

	bg_run_path(path, sizeof(path), ".sock");
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	snprintf(buf, sizeof(buf), "%s\n", cmd);
	/* one write, no SIGPIPE: an agent that answers and closes first must
	 * not kill the client */
	if (send(fd, buf, strlen(buf), MSG_NOSIGNAL) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	shutdown(fd, SHUT_WR);
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		fwrite(buf, 1, (size_t)n, out);
	close(fd);
	return 0;
}
