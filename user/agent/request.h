/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The control socket's requests, classified: which ones only read (any
 * peer that can connect: root and the members of the bloomgate group) and
 * which ones change something (root only, judged by the peer's
 * credentials, SO_PEERCRED, never by the socket's mode alone). One table;
 * no kernel, no I/O: unit-tested (tests/unit/test_request.c).
 */
#ifndef BLOOMGATE_REQUEST_H
#define BLOOMGATE_REQUEST_H

#include <stddef.h>

/* The group whose members may read through the control socket. */
#define BG_READ_GROUP "bloomgate"
/* A request line's bytes at most, its newline included. */
#define BG_REQ_LINE_MAX 1024

enum bg_req {
	BG_REQ_UNKNOWN = 0, /* not a request: answered with an error */
	BG_REQ_STATUS,      /* "status" (the agent) or "status full" (+ datapath) */
	BG_REQ_STATS,       /* "stats": the summed counters */
	BG_REQ_CHECK,       /* "check ARG...": what `bloomgate check` says */
	BG_REQ_EVENTS,      /* "events": flag events, followed */
	BG_REQ_RELOAD,      /* "reload": writes */
};

/*
 * What line asks (without its newline): the request, and *args the rest
 * after the name and one space ("" when none). A request given arguments
 * it does not take, or none when it needs some, is BG_REQ_UNKNOWN.
 */
enum bg_req bg_req_parse(const char *line, const char **args);
/* 1 when the request changes state (root only), 0 when it only reads.
 * An unknown request reads nothing and changes nothing: 0. */
int bg_req_writes(enum bg_req r);
/* "status", "reload", ...; "?" for BG_REQ_UNKNOWN. */
const char *bg_req_name(enum bg_req r);
/* The names, for an error's "(reload, status, ...)". */
const char *bg_req_list(void);

#endif
