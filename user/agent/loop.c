// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent (user/agent/agent.h): its event loop over epoll, no polling,
 * and nothing in it that takes time: every fetch, parse, build, swap and
 * store write runs on a worker (work.c), and the loop applies what they
 * found when they are done. So the control socket and the metrics answer
 * at once and the watchdog is pinged on time during a slow fetch or a
 * rebuild of millions of entries. What wakes it: a signal (signalfd:
 * TERM/INT stop, HUP re-reads the config and every source), a file source
 * changing (inotify on its directory, so a file replaced by rename
 * counts), a client on the control socket, a worker done (eventfd), a flag
 * event, and the nearest deadline as the epoll timeout (a URL's next
 * fetch, the end of the debounce window of a rebuild, a client's read
 * deadline, the systemd watchdog). Between events it sleeps.
 *
 * The filter is always built from the last good copies in
 * STATE_DIR/lists/, never from a source directly: a source that fails
 * keeps its copy, so one bad source never empties the filter nor removes
 * the others' entries, also across restarts (the copies and the sources'
 * validators live on disk). A new copy is a candidate until the rebuild's
 * parse judged it (source.c, rebuild.c). A burst of changes coalesces into
 * one rebuild (cfg.debounce); a change during a rebuild is taken by the
 * next; a rebuild that fails leaves the old filter live and is retried at
 * the next change.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "agent/agent.h"
#include "agent/agent_priv.h"
#include "agent/instance.h"
#include "agent/provenance.h"
#include "kern/swap.h"
#include "core/clock.h"

/* ---- helpers ------------------------------------------------------------ */

void agent_log(const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	/* formatted first and written in one call: lines of the loop and
	 * the workers never interleave */
	n = snprintf(line, sizeof(line), "bloomgate agent: ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	flockfile(stderr);
	fwrite(line, 1, (size_t)n, stderr);
	fflush(stderr);
	funlockfile(stderr);
}

double agent_rnd(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)rand();
	return (double)r / 4294967296.0;
}

int agent_mkdir_p(const char *dir, mode_t mode)
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

int agent_add_fd(struct agent *a, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = EPOLLIN | events, .data.fd = fd };

	return epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* ---- signals, timers ----------------------------------------------------- */

static void on_signal(struct agent *a)
{
	struct signalfd_siginfo si;

	while (read(a->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			agent_log("SIGHUP: re-reading the config and every source");
			sd_notify(0, "RELOADING=1");
			start_reload(a, -1);
		} else {
			a->stop = 1;
		}
	}
}

/* Milliseconds to the nearest deadline, -1 for none. */
static int next_timeout(const struct agent *a)
{
	double now = bg_mono(), t = sources_due(a), c;
	size_t i;

	for (i = 0; i < a->nsrc; i++)
		if (a->src[i].tick_at && (!t || a->src[i].tick_at < t))
			t = a->src[i].tick_at;
	/* a rebuild due waits for the one running, and for the start */
	if (a->rebuild_at && !a->rebuilding && a->started &&
	    (!t || a->rebuild_at < t))
		t = a->rebuild_at;
	if (a->watchdog_due && (!t || a->watchdog_due < t))
		t = a->watchdog_due;
	if (!a->started && (!t || a->start_until < t))
		t = a->start_until;
	c = clients_deadline(a);
	if (c && (!t || c < t))
		t = c;
	if (!t)
		return -1;
	return t <= now ? 0 : (int)ceil((t - now) * 1e3);
}

/* After every wakeup: what is due now. */
static void step(struct agent *a)
{
	size_t i;

	if (!a->started && (!marks_pending(a) || bg_mono() >= a->start_until)) {
		a->started = 1;
		if (adopt(a))
			a->rebuild_at = 0;
		else
			want_rebuild(a, 1);
	}
	reloads_step(a);
	for (i = 0; i < a->nsrc; i++)
		if (a->src[i].ops->tick)
			a->src[i].tick_at = a->src[i].ops->tick(a, &a->src[i]);
	run_due(a, 0);
	maybe_rebuild(a);
	clients_expire(a);
	if (a->watchdog_due && a->watchdog_due <= bg_mono()) {
		sd_notify(0, "WATCHDOG=1");
		a->watchdog_due = bg_mono() + a->watchdog_every;
	}
}

/* A driver's own file descriptor: handled, 1; else 0. */
static int on_source_fd(struct agent *a, int fd)
{
	size_t i;

	for (i = 0; i < a->nsrc; i++)
		if (a->src[i].fd == fd && a->src[i].ops->on_fd) {
			a->src[i].ops->on_fd(a, &a->src[i]);
			return 1;
		}
	return 0;
}

/* ---- start and stop ------------------------------------------------------ */

static void agent_free(struct agent *a)
{
	/* the metrics thread first: its render reads the agent (the
	 * sources' links included) until it is stopped */
	if (a->metrics)
		bg_metrics_stop(a->metrics);
	a->metrics = NULL;
	clients_close(a);
	close_events(a);
	if (a->ctlfd >= 0) {
		close(a->ctlfd);
		unlink(a->ctl_path);
	}
	sources_free(a);
	if (a->infd >= 0)
		close(a->infd);
	if (a->sigfd >= 0)
		close(a->sigfd);
	if (a->epfd >= 0)
		close(a->epfd);
	if (a->work.wakefd > 0)
		close(a->work.wakefd);
	if (a->store)
		bg_store_close(a->store);
	if (a->store_ro)
		bg_store_close(a->store_ro);
	desc_free(&a->live);
	incr_free(a->incr); /* the workers are stopped */
	a->incr = NULL;
	bg_config_free(&a->cfg);
	free(a->config_path);
	pthread_mutex_destroy(&a->lock);
	/* last: the next agent may start once the socket is gone */
	bg_instance_unlock(&a->instance);
}

/* At the start, before anything else uses the store: an index missing,
 * truncated, corrupt or not of its copy is dropped, so that the first
 * rebuild (or, for an adopted filter, the store thread's re-index) writes
 * it anew; each one is logged with its reason. */
static void verify_indexes(struct agent *a)
{
	struct bg_prov_bad *bad;
	size_t n, i;

	if (!a->store || bg_prov_verify(a->store, 1, &bad, &n))
		return;
	for (i = 0; i < n; i++) {
		const struct source *s = src_find(a, bad[i].name);

		/* a built filter's index is in it, not in the store */
		if (s && s->ops->built)
			continue;
		agent_log("source %s: provenance %s: indexing it again",
			  bad[i].name, bad[i].why);
	}
	free(bad);
}

/* The agent up to its loop: the config, the signals, the pin and state
 * directories, the store, the sources, the control socket, the metrics,
 * the attachments, the workers, the first fetches. 0, or the exit status
 * (every part made freed). */
static int agent_start(struct agent *a, const char *config_path)
{
	uint64_t usec = 0;
	char err[512];
	sigset_t mask;
	int ret;

	pthread_mutex_init(&a->lock, NULL);
	a->start_time = bg_wall();
	if (bg_fetch_global_init()) {
		agent_log("cannot initialise libcurl");
		return 1;
	}
	a->config_path = strdup(config_path);
	if (!a->config_path)
		return 1;
	if (bg_config_load(config_path, &a->cfg, err, sizeof(err))) {
		agent_log("%s", err);
		free(a->config_path);
		return 2;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* before any thread starts: every thread inherits the mask, so the
	 * signals reach the loop's signalfd alone */
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	a->epfd = epoll_create1(EPOLL_CLOEXEC);
	a->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	a->infd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	ret = bg_ensure_bpffs();
	if (ret == -ENOMEDIUM) {
		bg_no_bpffs_why(err, sizeof(err));
		agent_log("%s", err);
		agent_free(a);
		return 1;
	}
	if (!ret)
		ret = agent_mkdir_p(a->cfg.state_dir, 0700);
	if (ret) {
		agent_log("cannot prepare %s: %s", a->cfg.state_dir, strerror(-ret));
		agent_free(a);
		return 1;
	}
	/* One agent a pin directory (its filter and control socket) and a
	 * state directory: a second one exits here, before it touches
	 * either (it used to rebuild and take the control socket). */
	if (bg_instance_lock(&a->instance, a->cfg.state_dir, err, sizeof(err))) {
		agent_log("%s", err);
		agent_free(a);
		return 1;
	}
	ret = bg_store_open(a->cfg.state_dir, &a->store);
	if (ret) {
		agent_log("cannot open the store in %s: %s; going on without it",
			  a->cfg.state_dir, strerror(-ret));
		a->store = NULL;
	} else if (bg_store_open_ro(a->cfg.state_dir, &a->store_ro)) {
		a->store_ro = NULL;
	}
	if (a->epfd < 0 || a->sigfd < 0 || a->infd < 0 || setup_sources(a, NULL, 0) ||
	    open_control(a) || agent_add_fd(a, a->sigfd, 0) ||
	    agent_add_fd(a, a->infd, 0) || agent_add_fd(a, a->ctlfd, 0)) {
		agent_log("cannot start: %s", strerror(errno));
		agent_free(a);
		return 1;
	}
	if (a->cfg.metrics) {
		a->metrics = bg_metrics_start(a->cfg.metrics, render, a, err, sizeof(err));
		if (!a->metrics)
			agent_log("metrics on %s: %s", a->cfg.metrics, err);
	}
	/* before the workers: nothing else runs yet */
	verify_indexes(a);
	attach_ifaces_now(a);
	if (a->reshape)
		want_rebuild(a, 1);
	open_events(a);
	ret = work_start(a);
	if (ret) {
		agent_log("cannot start the workers: %s", strerror(-ret));
		work_stop(a);
		agent_free(a);
		return 1;
	}
	/* Every source once, then the filter (step()): adopted when the
	 * copies are those the live filter was built from, rebuilt
	 * otherwise. */
	mark_all(a);
	a->start_until = bg_mono() + FETCH_WAIT;
	run_due(a, 1);
	if (sd_watchdog_enabled(0, &usec) > 0 && usec) {
		a->watchdog_every = (double)usec / 2e6;
		a->watchdog_due = bg_mono() + a->watchdog_every;
	}
	/* Ready now: the agent answers, and a pinned filter is live; the
	 * first fetches (one may be slow) and rebuild go on behind. */
	sd_notifyf(0, "READY=1\nSTATUS=starting, %zu sources", a->nsrc);
	agent_log("running (pid %d, %zu sources, config %s)", getpid(), a->nsrc,
		  config_path);
	return 0;
}

/* The loop: each ready descriptor dispatched, then step(), until a stop. */
static void agent_loop(struct agent *a)
{
	struct epoll_event ev[16];
	int n, i;

	while (!a->stop) {
		n = epoll_wait(a->epfd, ev, 16, next_timeout(a));
		if (n < 0 && errno != EINTR)
			break;
		for (i = 0; i < n && !a->stop; i++) {
			int fd = ev[i].data.fd;

			if (fd == a->sigfd)
				on_signal(a);
			else if (fd == a->infd)
				on_inotify(a);
			else if (fd == a->ctlfd)
				on_control(a);
			else if (fd == a->work.wakefd)
				work_drain(a);
			else if (fd == events_fd(a))
				consume_events(a);
			else if (!on_source_fd(a, fd))
				on_client(a, fd, ev[i].events);
		}
		if (a->stop)
			break;
		step(a);
	}
}

int bg_agent_run(const char *config_path)
{
	struct agent a = { .epfd = -1, .sigfd = -1, .infd = -1, .ctlfd = -1,
			   .instance = { .run_fd = -1, .state_fd = -1 } };
	int ret;

	ret = agent_start(&a, config_path);
	if (ret)
		return ret;
	agent_loop(&a);
	sd_notify(0, "STOPPING=1");
	agent_log("stopping; %s", a.cfg.detach_on_stop ?
		      "detaching as the config asks" :
		      "the filter stays live (fail-static)");
	if (work_stop(&a)) {
		/* a build or a store import in progress: its filter is not
		 * published, its transaction not committed; the live filter
		 * stays. Exiting here rather than waiting for it is what
		 * makes a stop prompt. */
		agent_log("a fetch, a build or a store import is in progress: abandoned, "
			  "the filter stays as it is");
		if (a.cfg.detach_on_stop)
			detach_ifaces(&a);
		unlink(a.ctl_path);
		bg_instance_unlock(&a.instance); /* and its lock files */
		fflush(NULL);
		_exit(0);
	}
	/* jobs done since the last wakeup are not applied: a candidate
	 * they left is removed at the next start */
	if (a.cfg.detach_on_stop)
		detach_ifaces(&a);
	agent_free(&a);
	return 0;
}
