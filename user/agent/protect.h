/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's part of the protected set (core/protect.h, kern/protect.h):
 * the set its rebuilds make live, with the config's protect: items; the
 * refresh at its start and at each reload (an interface's addresses, a
 * route, resolv.conf may have changed); and the lines that say which
 * list entry covers a protected address, in the log and in agent --check.
 */
#ifndef BLOOMGATE_AGENT_PROTECT_H
#define BLOOMGATE_AGENT_PROTECT_H

#include <stddef.h>
#include <stdio.h>

#include "agent/config.h"
#include "core/protect.h"

/* The set for a rebuild: the pinned attachments' items, resolv.conf's and
 * the config's v[0, n). *out malloc'd. 0, or -errno with why (a full set:
 * the rebuild fails with it, the running filter untouched). */
int agent_protect_gather(const struct bg_protect_item *v, size_t n,
			 struct bg_protect_set **out, char *why, size_t whylen);

/* The live set made anew with the config's v[0, n), under the pin
 * directory's lock (nothing attached: nothing to do); a failure logged. */
void agent_protect_refresh(const struct bg_protect_item *v, size_t n);

/* Where a cover's entry is, for its line: a crowdsec: list's decision,
 * "(crowdsec decision 1234 (origin cscli, scenario ssh-bf), list cs)",
 * else "at ORIGIN:LINE (list NAME)"; an artifact's list "in list NAME";
 * l NULL: the cover's own. */
void agent_protect_where(char *buf, size_t len, const struct bg_list_desc *l,
			 int crowdsec, const struct bg_protect_cover *c);

/* The list of a load's source k (its kind a crowdsec: source's in *cs),
 * or NULL. */
typedef const struct bg_list_desc *(*agent_list_of_fn)(void *ctx, size_t k, int *cs);

/* Each cover of c as a line, "protected: ENTRY WHERE covers ADDR, WHY:
 * loaded without it": logged (out NULL) or printed on out. */
void agent_protect_say(FILE *out, const struct bg_protect_covers *c,
		       agent_list_of_fn list_of, void *ctx);

/* A crowdsec: source's change made in place: the covers of its new
 * decisions (in nw, not in old), located in its copy, logged. */
void agent_protect_changes(const struct bg_protect_set *s, const struct bg_list *old,
			   const struct bg_list *nw, const char *copy,
			   const struct bg_list_desc *l);

/* agent --check: the set the agent would make live (its interfaces'
 * addresses, by name, in this namespace; the next hops; resolv.conf's;
 * protect:'s), said on out as "protected set: ..."; NULL when it cannot be
 * made (a full set: said, the agent's rebuilds would fail). */
struct bg_protect_set *agent_protect_check_set(const struct bg_config *cfg, FILE *out);
/* agent --check: the entries of list l over the set ps, each said on out
 * as the agent logs it; bl: the list's blocklist as parsed from file (it
 * is finished here), or NULL to read file as addresses (a crowdsec:
 * source's copy). ps NULL: nothing. */
void agent_protect_check_list(FILE *out, const struct bg_protect_set *ps,
			      struct bg_blocklist *bl, const char *file,
			      const struct bg_cfg_list *l);

#endif
