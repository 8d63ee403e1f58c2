// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's workers (user/agent/agent_priv.h): the threads that do what
 * takes time, so that the loop only waits and dispatches. Three queues:
 * the fetches (FETCH_THREADS threads: a slow list holds one, the others
 * go on), the main worker (one thread: rebuilds and interface changes, in
 * the order the loop asked for them), and the store's (one thread, the
 * one that uses the store's handle: rows, entries, a list removed, in
 * order; an import of millions of entries holds up no rebuild). A
 * finished job goes to the done queue and wakes the loop through an
 * eventfd.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_priv.h"
#include "core/clock.h"

static void queue_init(struct queue *q)
{
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	q->head = q->tail = NULL;
	q->busy = 0;
}

static void queue_push(struct queue *q, struct job *j)
{
	j->next = NULL;
	pthread_mutex_lock(&q->mu);
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

static int quitting(struct work *w)
{
	return __atomic_load_n(&w->quit, __ATOMIC_RELAXED);
}

/* Takes the next job, waiting for one; NULL when the workers stop (the
 * store's queue is emptied first: its rows are what a restart reads). */
static struct job *queue_take(struct work *w, struct queue *q)
{
	struct job *j;

	pthread_mutex_lock(&q->mu);
	while (!q->head && !quitting(w))
		pthread_cond_wait(&q->cv, &q->mu);
	j = quitting(w) && q != &w->storeq ? NULL : q->head;
	if (j) {
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
		q->busy++;
	}
	pthread_mutex_unlock(&q->mu);
	return j;
}

static void job_finished(struct agent *a, struct queue *q, struct job *j)
{
	struct work *w = &a->work;
	uint64_t one = 1;

	queue_push(&w->doneq, j);
	pthread_mutex_lock(&q->mu);
	q->busy--;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	/* a full counter (never, in practice) still wakes the loop */
	if (write(w->wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		agent_log("cannot wake the loop: %s", strerror(errno));
}

struct worker_arg {
	struct agent *a;
	struct queue *q;
};

static void *worker(void *arg)
{
	struct worker_arg wa = *(struct worker_arg *)arg;
	struct job *j;

	free(arg);
	while ((j = queue_take(&wa.a->work, wa.q))) {
		j->run(wa.a, j);
		job_finished(wa.a, wa.q, j);
	}
	return NULL;
}

static int spawn(struct agent *a, struct queue *q, pthread_t *th)
{
	struct worker_arg *wa = malloc(sizeof(*wa));
	int ret;

	if (!wa)
		return -ENOMEM;
	wa->a = a;
	wa->q = q;
	ret = pthread_create(th, NULL, worker, wa);
	if (ret)
		free(wa);
	return -ret;
}

int work_start(struct agent *a)
{
	struct work *w = &a->work;
	int i, ret;

	queue_init(&w->fetchq);
	queue_init(&w->mainq);
	queue_init(&w->storeq);
	queue_init(&w->doneq);
	w->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->wakefd < 0)
		return -errno;
	ret = agent_add_fd(a, w->wakefd, 0);
	if (ret)
		return ret;
	ret = spawn(a, &w->mainq, &w->main_th);
	if (ret)
		return ret;
	w->have_main = 1;
	ret = spawn(a, &w->storeq, &w->store_th);
	if (ret)
		return ret;
	w->have_store = 1;
	for (i = 0; i < FETCH_THREADS; i++) {
		ret = spawn(a, &w->fetchq, &w->fetch_th[i]);
		if (ret)
			return ret;
		w->nfetch++;
	}
	return 0;
}

void work_fetch(struct agent *a, struct job *j)
{
	queue_push(&a->work.fetchq, j);
}

void work_main(struct agent *a, struct job *j)
{
	queue_push(&a->work.mainq, j);
}

void work_store(struct agent *a, struct job *j)
{
	queue_push(&a->work.storeq, j);
}

void work_drain(struct agent *a)
{
	struct work *w = &a->work;
	struct job *j, *next;
	uint64_t n;

	if (read(w->wakefd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		agent_log("the workers' eventfd: %s", strerror(errno));
	pthread_mutex_lock(&w->doneq.mu);
	j = w->doneq.head;
	w->doneq.head = w->doneq.tail = NULL;
	pthread_mutex_unlock(&w->doneq.mu);
	for (; j; j = next) {
		next = j->next;
		if (j->done)
			j->done(a, j);
		free(j);
	}
}

/* Jobs not started when the workers stop are dropped, unrun: the agent
 * exits right after, and what they hold goes with it. */
static void drop_queued(struct queue *q)
{
	struct job *j, *next;

	pthread_mutex_lock(&q->mu);
	j = q->head;
	q->head = q->tail = NULL;
	pthread_mutex_unlock(&q->mu);
	for (; j; j = next) {
		next = j->next;
		free(j);
	}
}

static void wake(struct queue *q)
{
	/* under the queue's mutex, so that no worker misses the wakeup
	 * between its check and its wait */
	pthread_mutex_lock(&q->mu);
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

/* Waits until q's thread is idle and its queue empty, at most until; 0 or
 * -ETIMEDOUT. */
static int wait_idle(struct queue *q, const struct timespec *until)
{
	int busy;

	pthread_mutex_lock(&q->mu);
	while ((q->busy || q->head) &&
	       pthread_cond_timedwait(&q->cv, &q->mu, until) != ETIMEDOUT)
		;
	busy = q->busy || q->head;
	pthread_mutex_unlock(&q->mu);
	return busy ? -ETIMEDOUT : 0;
}

int work_stop(struct agent *a)
{
	struct work *w = &a->work;
	struct timespec until;
	int i, ret = 0;

	if (!w->have_main && !w->have_store && !w->nfetch)
		return 0;
	/* one deadline for all: a stop takes at most STOP_WAIT */
	bg_deadline(&until, STOP_WAIT);
	__atomic_store_n(&w->quit, 1, __ATOMIC_RELAXED);
	wake(&w->fetchq);
	wake(&w->mainq);
	wake(&w->storeq);
	/* a fetch aborts at its next progress callback or chunk, a pull at
	 * its next decision; one that does not by the deadline is left */
	drop_queued(&w->fetchq);
	if (w->nfetch && wait_idle(&w->fetchq, &until))
		ret = -ETIMEDOUT;
	for (i = 0; !ret && i < w->nfetch; i++)
		pthread_join(w->fetch_th[i], NULL);
	if (!ret)
		w->nfetch = 0;
	/* a rebuild cannot be cut short mid-stage: it gets what is left of
	 * STOP_WAIT, and the store thread as long to write the rows queued */
	drop_queued(&w->mainq);
	if (w->have_main && wait_idle(&w->mainq, &until))
		ret = -ETIMEDOUT;
	if (w->have_store && wait_idle(&w->storeq, &until))
		ret = -ETIMEDOUT;
	if (ret) {
		/* the agent exits without them: the threads not joined are
		 * detached (the idle ones have returned; the busy one goes
		 * with the process) */
		for (i = 0; i < w->nfetch; i++)
			pthread_detach(w->fetch_th[i]);
		if (w->have_main)
			pthread_detach(w->main_th);
		if (w->have_store)
			pthread_detach(w->store_th);
		w->nfetch = 0;
		w->have_main = w->have_store = 0;
		return ret;
	}
	if (w->have_main)
		pthread_join(w->main_th, NULL);
	if (w->have_store)
		pthread_join(w->store_th, NULL);
	w->have_main = w->have_store = 0;
	return 0;
}
