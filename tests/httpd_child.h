/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The project's test HTTP server (build/tests/httpd, tests/tools/httpd.c)
 * as the child of a unit test (test_fetch, test_crowdsec): started on
 * 127.0.0.1 at a port the kernel picks, serving www, logging to log,
 * steered by the control file ctl; stopped, and the test's scratch
 * directory removed, by httpd_teardown().
 */
#ifndef BLOOMGATE_TESTS_HTTPD_CHILD_H
#define BLOOMGATE_TESTS_HTTPD_CHILD_H

#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static pid_t httpd_pid = -1;

/* The server's port, or -1. BG_TEST_HTTPD names another binary; by
 * default the one built next to this test. */
static int httpd_start(const char *log, const char *ctl, const char *www)
{
	char exe[PATH_MAX], httpd[PATH_MAX], line[32];
	const char *env = getenv("BG_TEST_HTTPD");
	int pfd[2], port;
	ssize_t n;
	FILE *f;

	if (env) {
		snprintf(httpd, sizeof(httpd), "%s", env);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			return -1;
		exe[n] = '\0';
		snprintf(httpd, sizeof(httpd), "%s/httpd", dirname(exe));
	}
	if (access(httpd, X_OK)) {
		fprintf(stderr, "no %s (make build/tests/httpd)\n", httpd);
		return -1;
	}
	if (pipe(pfd))
		return -1;
	httpd_pid = fork();
	if (httpd_pid < 0)
		return -1;
	if (!httpd_pid) {
		/* a test that crashes takes its server with it */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execl(httpd, httpd, "-l", log, "-c", ctl, www, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	if (!f || !fgets(line, sizeof(line), f))
		return -1;
	fclose(f);
	port = atoi(line);
	return port > 0 ? port : -1;
}

/* The server stopped, then dir removed: 0, or system()'s status. */
static int httpd_teardown(const char *dir)
{
	char cmd[PATH_MAX + 16];
	int status;

	if (httpd_pid > 0) {
		kill(httpd_pid, SIGTERM);
		waitpid(httpd_pid, &status, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

#endif
