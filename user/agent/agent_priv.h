/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's own state, shared by its files (user/agent/agent.h has what
 * the CLI sees). Who touches what:
 *
 *   the loop (loop.c: one thread) owns struct agent and every struct
 *   source (source.h): it alone writes them, and writes what the metrics
 *   thread reads (status.c: render()) under a->lock. It never blocks on
 *   work: it waits in epoll, and hands every fetch, parse, build, swap and
 *   store write to the workers as a job (work.c).
 *
 *   the workers (work.c): FETCH_THREADS fetch threads; one main worker
 *   that runs rebuilds (rebuild.c) and interface changes (ifaces.c), in
 *   order; one store thread for every store write (rows, entries, a list
 *   removed), in order. A job holds copies of all it needs, or what a
 *   source lends it until its done() (ops->lend: CrowdSec's decisions
 *   as keys): a worker reads of struct agent only a->work.quit
 *   (atomic), the store thread a->store (its alone once the workers
 *   run), and the main worker a->incr (the filter a CrowdSec source
 *   patches in place: the main worker's alone, made, used and dropped
 *   by its jobs). When a job is done, its done() runs on the loop,
 *   which applies the result.
 *
 *   the metrics thread (metrics_http.c) calls render(), which takes
 *   a->lock.
 */
#ifndef BLOOMGATE_AGENT_PRIV_H
#define BLOOMGATE_AGENT_PRIV_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "agent/config.h"
#include "agent/crowdsec.h"
#include "agent/fetch.h"
#include "agent/fleet.h"
#include "agent/instance.h"
#include "agent/log.h"
#include "agent/metrics.h"
#include "agent/request.h"
#include "agent/source.h"
#include "agent/store.h"
#include "kern/pins.h"

/* Fetches at once: a slow list holds one of them, the others go on. */
#define FETCH_THREADS 4
/* Seconds a stopping agent waits for the fetches and the rebuild in
 * progress before it exits without them (the filter stays live: nothing
 * is published before the build is whole, and the store's transaction is
 * rolled back): a stop takes at most about this long, whatever the agent
 * was doing (the unit gives it 10 s). */
#define STOP_WAIT 1.5
/* Seconds the start (or a reload) waits for its round of fetches before
 * it goes on without the lists still being fetched: a slow list is taken
 * by a later rebuild, and holds up neither the first filter nor the
 * reload's answer for its whole timeout. */
#define FETCH_WAIT 10.0

struct agent;
struct json_object;

/* ---- sources.c: the agent's table of sources ------------------------------ */

struct source *src_find(struct agent *a, const char *name);
int setup_sources(struct agent *a, const struct source *old, size_t nold);
/* Frees the sources' own state (the agent stops). */
void sources_free(struct agent *a);
/* Starts the fetch of every due source that is idle; all: every source. */
void run_due(struct agent *a, int all);
void on_inotify(struct agent *a);
/* Marks every source for a reload (or the start): the wait ends when each
 * has been fetched once more. */
void mark_all(struct agent *a);
int marks_pending(const struct agent *a);
/* The earliest due time of an idle source (monotonic), 0 for none. */
double sources_due(const struct agent *a);
/* The store's row of s, written by the store thread. */
void store_put(struct agent *a, const struct source *s);
/* Re-reads the config; 0, or nonzero with the old one kept. err: why not
 * (the config's file:line), errlen bytes. */
int reload_config(struct agent *a, char *err, size_t errlen);

/* ---- loop.c: helpers ---------------------------------------------------- */

int agent_mkdir_p(const char *dir, mode_t mode);
int agent_add_fd(struct agent *a, int fd, uint32_t events);

/* ---- rebuild.c: the description of a filter ------------------------------ */

/*
 * What a filter is built from, as far as it decides what the filter holds:
 * each list with a good copy (name, origin, the copy's SHA-256, how it is
 * read), the target rate and the exact stage. The live filter's is kept
 * (and saved beside it, filter.json); a reload or a change compares the
 * one wanted with it, and a restarted agent adopts the pinned filter when
 * the fingerprints (SHA-256 of the whole description) are equal.
 */
struct desc_list {
	/* the list; desc_add() copies its strings (desc_json() writes its
	 * origin, bg_list_origin(), not the url or path) */
	struct bg_list_desc list;
	char sha256[65];
};

struct desc {
	double fpr;
	int confirm;
	struct desc_list *v;
	size_t n;
	char fp[65]; /* SHA-256 of desc_json()'s text (desc_seal()) */
};

void desc_free(struct desc *d);
int desc_copy(struct desc *dst, const struct desc *src);
/* Appends a list (strings copied); 0 or -ENOMEM. */
int desc_add(struct desc *d, const struct desc_list *l);
/* Computes d->fp; 0 or -ENOMEM. */
int desc_seal(struct desc *d);
struct json_object *desc_json(const struct desc *d);
int desc_from_json(struct json_object *o, struct desc *d);
/* What changed from old to new, one line ("lists removed: gone; fpr
 * 0.01 -> 0.001"); "nothing changed" when nothing did. */
void desc_diff(const struct desc *old, const struct desc *new, char *out,
	       size_t len);

/* The description wanted now: every good copy, a candidate as if good
 * (desc.c). */
int wanted_desc(const struct agent *a, struct desc *d);

/* ---- rebuild.c, live.c --------------------------------------------------- */

/* Starts a rebuild when one is due and none runs, or settles the reloads
 * waiting when nothing changed. */
void maybe_rebuild(struct agent *a);
void want_rebuild(struct agent *a, int now);
/* At start, once every source was fetched: adopts the pinned filter when
 * it is built from what is wanted now; 1 when adopted. */
int adopt(struct agent *a);
struct rb_timing;
struct bg_prov_writer;
struct incr;
/* The filter kept for a CrowdSec source's changes (src_crowdsec.c), freed. */
void incr_free(struct incr *in);
/* The store follows the live filter (store thread): pw, a rebuild's
 * provenance writer, committed; or, without one, every copy re-indexed
 * where its index is missing or of another copy (an adopted filter);
 * then the lists gone from the config pruned. Takes pw. timing: the
 * rebuild's, logged once the store followed. */
void sync_store_entries(struct agent *a, const struct rb_timing *timing,
			struct bg_prov_writer *pw);

/* ---- work.c -------------------------------------------------------------- */

struct job;
typedef void (*job_run_fn)(struct agent *a, struct job *j);
typedef void (*job_done_fn)(struct agent *a, struct job *j);

/* The head of every job; the job is malloc'd with it first, and freed with
 * free() after done() (which frees what it holds). */
struct job {
	struct job *next;
	job_run_fn run; /* on a worker */
	job_done_fn done; /* on the loop; NULL: none */
};

struct queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *head, *tail;
	int busy; /* jobs taken and not finished */
};

struct work {
	struct queue fetchq, mainq, storeq, doneq;
	pthread_t fetch_th[FETCH_THREADS], main_th, store_th;
	int nfetch, have_main, have_store;
	int wakefd; /* eventfd: a job is done */
	int quit; /* atomic: the workers stop, a fetch aborts */
};

int work_start(struct agent *a);
void work_fetch(struct agent *a, struct job *j);
void work_main(struct agent *a, struct job *j);
void work_store(struct agent *a, struct job *j);
/* The loop: done() of every job finished. */
void work_drain(struct agent *a);
/* Tells the workers to stop and joins them: the fetches abort, the main
 * worker's queue is dropped, the store thread writes the rows still
 * queued (not entries). -ETIMEDOUT when a fetch, the main worker or the
 * store thread was still busy after STOP_WAIT (left running). */
int work_stop(struct agent *a);

/* ---- control.c ----------------------------------------------------------- */

int open_control(struct agent *a);
void on_control(struct agent *a);
/* An fd of a control client: handled, 1; else 0. */
int on_client(struct agent *a, int fd, uint32_t events);
/* A reload asked (client fd, or -1 for SIGHUP): the config re-read, every
 * source fetched, then the rebuild it causes; answered when done. */
void start_reload(struct agent *a, int fd);
/* After events: reloads whose fetches are done go on to their rebuild. */
void reloads_step(struct agent *a);
/* A rebuild finished (seq, its failure message or NULL) or none was
 * needed (seq 0): the reloads waiting for it are answered. */
void reloads_answer(struct agent *a, uint64_t seq, const char *failure);
double clients_deadline(const struct agent *a); /* monotonic; 0: none */
void clients_expire(struct agent *a);
void clients_close(struct agent *a);

/* ---- events.c, ifaces.c, status.c --------------------------------------- */

void open_events(struct agent *a);
void close_events(struct agent *a);
void consume_events(struct agent *a);
int events_fd(const struct agent *a);
struct client;
/* A control client follows the events from now on (the ring buffer is
 * opened for it when it was not): 0, or -errno with why (the followers'
 * bounds included). */
int events_follow(struct agent *a, struct client *c, char *why, size_t len);
/* One follower less (its client is being freed). */
void events_unfollow(struct agent *a, struct client *c);
/* A follower's socket can take more (EPOLLOUT), or its deadline came:
 * sent, caught up, or cut off (then freed). */
void events_writable(struct agent *a, struct client *c);
void events_expire(struct agent *a, struct client *c, double now);
/* control.c: a client closed and freed; its epoll interest set. */
void client_drop(struct agent *a, struct client *c);
int client_want(struct agent *a, struct client *c, uint32_t events);
/* control.c: what the control socket holds, refused and cut, for status
 * and metrics (control_metrics(): a->lock held by its caller) */
struct json_object *control_json(struct agent *a);
void control_metrics(const struct agent *a, struct bg_metrics_control *m);

/* Attaches to the configured interfaces: now (start), or as a main-worker
 * job (reload). */
void attach_ifaces_now(struct agent *a);
void attach_ifaces_later(struct agent *a);
void detach_ifaces(const struct agent *a);
/* Removes the attachments whose interface was deleted (worker). */
void clean_gone(void);

int render(void *ctx, FILE *out);
/* 1 when the live filter (live: its map id, read from the pins) is not the
 * one this agent published or adopted; a->lock held. */
int agent_filter_foreign(const struct agent *a, uint32_t live);
struct json_object *status_json(struct agent *a);

/* ---- struct agent -------------------------------------------------------- */

/* A control client, or a SIGHUP's reload (fd -1). */
struct client {
	struct client *next;
	int fd;
	uid_t uid; /* the peer's, at accept (SO_PEERCRED) */
	pid_t pid;
	int stream; /* events: followed until the peer goes */
	/* a follower (events.c): the next event of the agent's queue it
	 * gets; events lost since it fell behind (its queue, a window of
	 * the agent's, overrun) and since when (monotonic; 0: not behind);
	 * EPOLLOUT wanted. c->out holds the rest of a line sent in part. */
	uint64_t ev_next, ev_lost;
	double behind_since;
	int want_out;
	char in[BG_REQ_LINE_MAX];
	size_t len;
	double deadline; /* monotonic: the request line by then */
	char *out; /* the answer, written as the socket takes it */
	size_t out_len, out_off;
	/* a reload: 1 waiting for its fetches, 2 for its rebuild (seq) */
	int reload;
	double wait_until; /* monotonic: the fetches waited for at most */
	uint64_t seq;
	uint64_t gen_before;
	struct desc before;
	int have_before;
};

struct agent {
	char *config_path;
	struct bg_instance instance; /* the locks: one agent a pin and state dir */
	struct bg_config cfg;
	struct source *src; /* one a configured source, in the config's order */
	size_t nsrc;
	/* the main worker's once it runs (rebuilds, rows, entries) */
	struct bg_store *store;
	/* the loop's own handle, for reading (a re-added list's validators) */
	struct bg_store *store_ro;
	struct bg_metrics_server *metrics;
	pthread_mutex_t lock; /* what the metrics thread reads */
	int epfd, sigfd, infd, ctlfd;
	char ctl_path[PATH_MAX];
	double rebuild_at; /* monotonic; 0: no rebuild due */
	double watchdog_every; /* seconds; 0: no watchdog */
	double watchdog_due;
	uint64_t generation, rebuilds, rebuild_failures;
	/* the map id of the filter this agent published or adopted, 0: none
	 * yet (agent_filter_foreign()) */
	uint32_t filter_id;
	struct bg_metrics_filter filter;
	int have_filter;
	/* the live filter is an artifact's (artifact:, fleet:): its header's
	 * generation, its file's SHA-256, and when it went live (unix time) */
	int art_live;
	uint64_t art_generation;
	uint8_t art_digest[32];
	double art_applied_at;
	char last_error[600]; /* the last rebuild's failure; "" after a success */
	/* the live filter kept for a CrowdSec source's small changes
	 * (src_crowdsec.c, core/patch.h's bg_inc): the main worker's alone,
	 * made after a full rebuild, used and changed by the next ones */
	struct incr *incr;
	double start_time;
	struct desc live; /* what the live filter is built from */
	int have_live;
	int started; /* the first fetches done, the filter adopted or due */
	double start_until; /* monotonic: the first fetches waited for */
	int rebuilding; /* a rebuild job runs */
	/* the interfaces' config asks for another filter map shape than the
	 * attached one (capacity:, grow:): the next rebuild changes it
	 * (ifaces.c) */
	int reshape, reshape_grow;
	uint32_t reshape_cap;
	/* the interfaces' job of a reload runs (its answer waits for it), and
	 * what it changed of them ("" nothing) */
	int ifaces_busy;
	char ifaces_said[512];
	uint64_t rb_started, rb_done; /* rebuild jobs started, the last done */
	double reload_seen; /* unix time of the last reload: a config
			       change's "change seen" */
	int stop;
	struct client *clients;
	struct work work;
	/* flag events as JSON lines (cfg.events) */
	FILE *events_out;
	struct ring_buffer *events;
	struct bg_state events_st;
	int events_open;
	/* control socket peers following the events (`events`), the ring
	 * buffer being consumed (its close then waits), a close due */
	size_t followers;
	int events_busy, events_close;
	/* the events as followers get them (events.c), and what the control
	 * socket holds, refused and cut (control.c; written under a->lock) */
	struct evq *evq;
	struct bg_metrics_control ctl;
	size_t ctl_clients; /* connected, root's not counted */
};

#endif
