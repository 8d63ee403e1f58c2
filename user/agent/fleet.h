/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A gateway of a fleet (the agent's `fleet:` section): the fleet store
 * (agent/fleetdb.h) is its one source. Two parts:
 *
 *   the fetch (bg_fleet_fetch(), on a fetch thread like any source's): the
 *   newest generation, as a delta applied to the copy kept when the copy
 *   is the delta's base, else whole; written as the source's candidate,
 *   which the rebuild verifies and swaps in (rebuild.c) as it does any
 *   artifact. The kept copy is never written here: the database going
 *   away, a damaged chunk, a delta on another base leave it as it is. A
 *   generation is named by its bytes: the SHA-256 of its artifact file,
 *   which the store holds, the candidate is checked against, and the
 *   agent remembers a refused one by (so the same generation number with
 *   repaired bytes is another candidate). A newest generation older than
 *   the copy kept (rows deleted, a store restored from a backup) is
 *   refused unless the config allows it (fleet: allow_rollback).
 *
 *   the link (a thread of its own): one connection that LISTENs, wakes the
 *   agent when a generation is announced or when the connection comes
 *   back (a notification may have been missed meanwhile), and sends the
 *   gateway's reports. It reconnects with backoff, for ever: the agent
 *   enforces its last good generation whatever the database does.
 */
#ifndef BLOOMGATE_AGENT_FLEET_H
#define BLOOMGATE_AGENT_FLEET_H

#include <stdint.h>

#include "agent/config.h"
#include "agent/fetch.h"
#include "agent/fleetdb.h"

/* Reconnection of the link: 0.5 s, doubling, at most this. */
#define BG_FLEET_RECONNECT_MAX 5.0

/* What a fleet fetch did, beside the fetch's result. */
struct bg_fleet_got {
	uint64_t generation; /* the store's newest (CHANGED: the candidate's) */
	/* the generation applied here, when the store's newest is older
	 * (refused, or taken with allow_rollback); 0 otherwise */
	uint64_t rollback_from;
	int delta; /* CHANGED: made from a delta */
	uint64_t bytes; /* downloaded */
	char delta_why[256]; /* a delta not used, and why ("" when used or
				none) */
};

/*
 * The newest generation of the store at db into the candidate of
 * cache_path (bg_fetch_candidate()): CHANGED (r->sha256 the hex SHA-256
 * of the candidate's file, the store's checksum of it), UNCHANGED (the
 * copy kept is it: its file's SHA-256 is kept_hex, or computed when
 * kept_hex is empty), or FAILED with r->err (the store cannot be reached,
 * no generation yet, a download that does not match its checksum, a
 * generation older than the copy kept while allow_rollback is 0). 0, or
 * -ENOMEM.
 */
int bg_fleet_fetch(const char *db, const char *cache_path, const char *kept_hex,
		   int allow_rollback, const int *abort, struct bg_fetch_result *r,
		   struct bg_fleet_got *got);

struct bg_fleet_link;

/* Starts the link's thread for the store at db: an 8-byte write to
 * wake_fd (an eventfd) each time the agent should fetch now. 0 or
 * -errno. */
int bg_fleet_link_start(const char *db, int wake_fd, struct bg_fleet_link **l);
/* The report to send (copied); the newest one replaces one not sent yet. */
void bg_fleet_link_report(struct bg_fleet_link *l, const struct bg_fleet_report *r);
/* 1 when the link is connected now (for status and metrics). */
int bg_fleet_link_up(struct bg_fleet_link *l);
/* Stops the thread (at most about a second) and frees l. */
void bg_fleet_link_stop(struct bg_fleet_link *l);

#endif
