// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's workers (user/agent/agent_priv.h): the threads that do what
 * takes time, so that the loop only waits and dispatches. Two queues: the
 * fetches (FETCH_THREADS threads: a slow list holds one, the others go
 * on), and the main worker (one thread: rebuilds, interface changes and
 * every store write, in the order the loop asked for them, so that a row
 * or an entry table is never written by two threads and a rebuild sees the
 * store as the jobs before it left it). A finished job goes to the done
 * queue and wakes the loop through an eventfd.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_priv.h"

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

/* Takes the next job, waiting for one; NULL when the workers stop. */
static struct job *queue_take(struct work *w, struct queue *q)
{
	struct job *j;

	pthread_mutex_lock(&q->mu);
	while (!q->head && !quitting(w))
		pthread_cond_wait(&q->cv, &q->mu);
	j = quitting(w) ? NULL : q->head;
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

int work_stop(struct agent *a)
{
	struct work *w = &a->work;
	struct timespec until;
	int i, busy;

	if (!w->have_main && !w->nfetch)
		return 0;
	__atomic_store_n(&w->quit, 1, __ATOMIC_RELAXED);
	/* under each queue's mutex, so that no worker misses the wakeup
	 * between its check and its wait */
	pthread_mutex_lock(&w->fetchq.mu);
	pthread_cond_broadcast(&w->fetchq.cv);
	pthread_mutex_unlock(&w->fetchq.mu);
	pthread_mutex_lock(&w->mainq.mu);
	pthread_cond_broadcast(&w->mainq.cv);
	pthread_mutex_unlock(&w->mainq.mu);
	/* a fetch aborts at its next progress callback or chunk */
	for (i = 0; i < w->nfetch; i++)
		pthread_join(w->fetch_th[i], NULL);
	w->nfetch = 0;
	drop_queued(&w->fetchq);
	if (!w->have_main)
		return 0;
	/* a rebuild cannot be cut short mid-stage: it gets STOP_WAIT */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)STOP_WAIT;
	pthread_mutex_lock(&w->mainq.mu);
	while (w->mainq.busy &&
	       pthread_cond_timedwait(&w->mainq.cv, &w->mainq.mu, &until) != ETIMEDOUT)
		;
	busy = w->mainq.busy;
	pthread_mutex_unlock(&w->mainq.mu);
	if (busy)
		return -ETIMEDOUT;
	pthread_join(w->main_th, NULL);
	w->have_main = 0;
	drop_queued(&w->mainq);
	return 0;
}
