// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's state as others see it: the metrics snapshot (render(), on
 * the metrics server's thread, under a->lock: the loop writes what it
 * reads under the same lock) and the control socket's `status` (JSON, on
 * the loop).
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include <json-c/json.h>

#include "agent/agent_priv.h"
#include "core/clock.h"
#include "core/url.h"
#include "core/counters.h"
#include "kern/attach.h"
#include "kern/pins.h"
#include "kern/swap.h"

int agent_filter_foreign(const struct agent *a, uint32_t live)
{
	return a->filter_id && live && live != a->filter_id;
}

/* 1 when a source's link is up now (fleet), -1 when none has a link. */
static int links_up(const struct agent *a)
{
	int up = -1;
	size_t i;

	for (i = 0; i < a->nsrc; i++)
		if (a->src[i].ops->link_up && a->src[i].ops->link_up(&a->src[i]) > up)
			up = a->src[i].ops->link_up(&a->src[i]);
	return up;
}

int render(void *ctx, FILE *out)
{
	struct agent *a = ctx;
	struct bg_attach_rec recs[BG_ATTACH_MAX];
	struct bg_metrics_view v = { 0 };
	struct bg_metrics_filter filter;
	struct bg_metrics_control ctl;
	struct bg_counters c;
	struct bg_state st;
	uint32_t live = 0;
	int ret;

	/* the kernel's part first, outside the lock */
	if (!bg_state_open(&st, 0)) {
		live = bg_filter_current_id(st.filters_fd);
		if (!bg_counters_read(st.counters_fd, &c))
			v.counters = &c;
		v.nrecs = bg_attach_list(&st, recs, BG_ATTACH_MAX);
		v.recs = recs;
		bg_state_close(&st);
	}
	pthread_mutex_lock(&a->lock);
	v.foreign = agent_filter_foreign(a, live);
	filter = a->filter;
	v.filter = a->have_filter ? &filter : NULL;
	v.rebuilds = a->rebuilds;
	v.rebuild_failures = a->rebuild_failures;
	v.sources = a->src;
	v.nsources = a->nsrc;
	v.start_time = a->start_time;
	v.art_live = a->art_live;
	v.art_generation = a->art_generation;
	v.fleet = a->cfg.fleet.db != NULL;
	v.fleet_up = links_up(a) > 0;
	control_metrics(a, &ctl);
	v.control = &ctl;
	/* rendered under the lock: the sources and their names (the
	 * config's) are freed under it by a reload */
	ret = bg_metrics_render(out, &v);
	pthread_mutex_unlock(&a->lock);
	return ret;
}

/* One source as status shows it. */
static struct json_object *source_json(const struct source *s, double now)
{
	struct json_object *j = json_object_new_object();
	char url[1024];

	if (!j)
		return NULL;
	json_object_object_add(j, "name", json_object_new_string(s->cfg->list.name));
	json_object_object_add(j, "kind", json_object_new_string(s->ops->kind));
	json_object_object_add(j, "origin", json_object_new_string(
		bg_url_redact(bg_list_origin(&s->cfg->list), url, sizeof(url))));
	json_object_object_add(j, "state", json_object_new_string(
		s->state ? s->state : "pending"));
	json_object_object_add(j, "entries", json_object_new_int64((int64_t)s->rec.entries));
	json_object_object_add(j, "rejected", json_object_new_int64((int64_t)s->rec.rejected));
	json_object_object_add(j, "last_success", json_object_new_double(s->rec.last_ok));
	json_object_object_add(j, "last_error", json_object_new_string(s->rec.last_error));
	json_object_object_add(j, "next_fetch_in", s->due ?
		json_object_new_double(fmax(0, s->due - now)) : NULL);
	if (s->refused.n) {
		struct json_object *r = json_object_new_object();
		size_t k;

		for (k = 0; r && k < s->refused.n; k++)
			json_object_object_add(r, s->refused.v[k].reason,
					       json_object_new_int64((int64_t)s->refused.v[k].count));
		json_object_object_add(j, "refused", r);
	}
	if (s->ops->status)
		s->ops->status(s, j);
	return j;
}

struct json_object *status_json(struct agent *a)
{
	struct bg_state st;
	uint32_t live = 0;
	struct json_object *o = json_object_new_object(), *arr;
	double now = bg_mono();
	size_t i;

	if (!o)
		return NULL;
	if (!bg_state_open(&st, 0)) {
		live = bg_filter_current_id(st.filters_fd);
		bg_state_close(&st);
	}
	pthread_mutex_lock(&a->lock);
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "filter_id", json_object_new_int64(a->filter_id));
	json_object_object_add(o, "live_filter_id", json_object_new_int64(live));
	json_object_object_add(o, "filter_foreign",
			       json_object_new_boolean(agent_filter_foreign(a, live)));
	json_object_object_add(o, "uptime", json_object_new_double(bg_wall() - a->start_time));
	json_object_object_add(o, "config", json_object_new_string(a->config_path));
	json_object_object_add(o, "generation", json_object_new_int64((int64_t)a->generation));
	json_object_object_add(o, "rebuilding", json_object_new_boolean(a->rebuilding));
	if (a->art_live) {
		struct json_object *art = json_object_new_object();
		char hex[65];

		bg_hex(a->art_digest, sizeof(a->art_digest), hex);
		json_object_object_add(art, "generation",
				       json_object_new_int64((int64_t)a->art_generation));
		json_object_object_add(art, "sha256", json_object_new_string(hex));
		json_object_object_add(art, "applied_at",
				       json_object_new_double(a->art_applied_at));
		json_object_object_add(o, "artifact", art);
	}
	if (a->cfg.fleet.db) {
		struct json_object *fl = json_object_new_object();

		json_object_object_add(fl, "gateway", json_object_new_string(a->cfg.fleet.gateway));
		json_object_object_add(fl, "connected",
				       json_object_new_boolean(links_up(a) > 0));
		json_object_object_add(o, "fleet", fl);
	}
	arr = json_object_new_array();
	for (i = 0; arr && i < a->nsrc; i++) {
		struct json_object *j = source_json(&a->src[i], now);

		if (!j)
			break;
		json_object_array_add(arr, j);
	}
	json_object_object_add(o, "sources", arr);
	pthread_mutex_unlock(&a->lock);
	json_object_object_add(o, "control", control_json(a));
	return o;
}
