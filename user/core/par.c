// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Running one job on several threads (user/core/par.h). */
#include <pthread.h>
#include <unistd.h>

#include "core/par.h"

unsigned int bg_par_threads(unsigned int requested)
{
	long n = requested ? (long)requested : sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	if (n > BG_PARSE_WORKERS_MAX)
		n = BG_PARSE_WORKERS_MAX;
	return (unsigned int)n;
}

struct par_arg {
	void (*fn)(void *ctx, unsigned int t);
	void *ctx;
	unsigned int t;
};

static void *par_main(void *p)
{
	struct par_arg *a = p;

	a->fn(a->ctx, a->t);
	return NULL;
}

void bg_par_run(unsigned int n, void (*fn)(void *ctx, unsigned int t),
		void *ctx)
{
	struct par_arg arg[BG_PARSE_WORKERS_MAX];
	pthread_t tid[BG_PARSE_WORKERS_MAX];
	int started[BG_PARSE_WORKERS_MAX] = { 0 };
	unsigned int t;

	if (n > BG_PARSE_WORKERS_MAX)
		n = BG_PARSE_WORKERS_MAX;
	for (t = 1; t < n; t++) {
		arg[t] = (struct par_arg){ fn, ctx, t };
		started[t] = !pthread_create(&tid[t], NULL, par_main, &arg[t]);
	}
	fn(ctx, 0);
	for (t = 1; t < n; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		else
			fn(ctx, t);
	}
}
