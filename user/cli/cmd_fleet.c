// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate publish and fleet status: a generation built once and stored
 * in the fleet store (core/publish.h, agent/fleetdb.h); what every gateway
 * of the fleet enforces.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "agent/fleetdb.h"
#include "core/clock.h"
#include "core/artifact.h"
#include "core/print.h"
#include "core/publish.h"

#include "cli/cli.h"
#include "cli/listopts.h"

#define PUBLISH_STATE "/var/lib/bloomgate/publish"

/* ---- publish ------------------------------------------------------------ */

static int publish_done(void *ctx, unsigned int npos, char *err, size_t errlen)
{
	struct list_ctx *c = ctx;

	if (!c->db) {
		snprintf(err, errlen, "publish: missing --db URL (the fleet store)");
		return -EINVAL;
	}
	if (c->state && c->state[0] != '/') {
		snprintf(err, errlen, "publish: --state must be an absolute path");
		return -EINVAL;
	}
	return list_opts_done(ctx, npos, err, errlen);
}

static const struct bg_opt publish_opts[] = {
	LIST_OPTS,
	{ .name = "db", .type = BG_OPT_STRING, .metavar = "URL",
	  .help = "the fleet store: a postgresql:// URL or a libpq connection "
		  "string", .off = offsetof(struct list_ctx, db) },
	{ .name = "state", .type = BG_OPT_PATH, .metavar = "DIR",
	  .help = "the publisher's own files: the last generation and a copy of "
		  "its lists, from which the next delta is made",
	  .off = offsetof(struct list_ctx, state) },
	{ .name = "full", .type = BG_OPT_FLAG,
	  .help = "a full generation even when a delta would do (it also resets "
		  "the Bloom part's rate)", .off = offsetof(struct list_ctx, full) },
	{ .name = "keep", .type = BG_OPT_UINT, .metavar = "N",
	  .help = "generations the store keeps (older ones are deleted)",
	  .min = 1, .max = 1000000, .off = offsetof(struct list_ctx, keep) },
	LIST_CAPACITY_OPT,
	{ NULL },
};

static const struct list_ctx publish_defaults = {
	.confirm = 1, .max_list_bytes = BG_LIST_BYTES_MAX,
	.max_entries = BG_LOAD_ENTRIES_MAX, .state = PUBLISH_STATE,
	.keep = BG_FLEETDB_KEEP,
};

const struct bg_cmd cli_publish_cmd = {
	.name = "publish",
	.summary = "Builds the lists once for a whole fleet and stores the result\n"
		   "in the fleet store (PostgreSQL) as its next generation, with\n"
		   "the lists' names, sources and checksums, then announces it\n"
		   "(NOTIFY): every gateway agent configured with fleet: fetches\n"
		   "it, verifies it and swaps it in. When few entries changed since\n"
		   "the last generation, the gateways download only a delta: the\n"
		   "64-byte elements of the filter and its index that changed\n"
		   "(added keys set their Bloom bits and fingerprints; removed keys\n"
		   "lose their fingerprint, so they pass at once, exactly). A full\n"
		   "generation is built instead when the lists or options changed\n"
		   "shape, when the bits of removed keys have raised the Bloom\n"
		   "part's predicted rate past twice its target, or with --full.",
	.details = LIST_DETAILS
	"The publisher keeps its last generation and a copy of each list it\n"
	"published in --state: a delta is made against them. Another publisher\n"
	"(or a lost --state) makes the next generation a full one. A\n"
	"generation is named in the store by the SHA-256 of its artifact file\n"
	"(what sha256sum prints); its number is one above the last ever\n"
	"published, also when rows were deleted since, so a number never\n"
	"stands for two generations.",
	.opts = publish_opts, .pos = &list_pos, .min_pos = 1, .max_pos = BG_POS_MANY,
	.defaults = &publish_defaults, .done = publish_done,
};

static int mkdir_p(const char *dir)
{
	char tmp[PATH_MAX], *p;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(tmp, 0700) && errno != EEXIST ? -errno : 0;
}

/* The lists of a generation's row, from its SOURCES. */
static int row_lists(const struct bg_art_sources *s, struct bg_fleet_list **out)
{
	struct bg_fleet_list *v = calloc(s->n ? s->n : 1, sizeof(*v));
	size_t i;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < s->n; i++) {
		char origin[1024];

		snprintf(v[i].name, sizeof(v[i].name), "%s", s->v[i].name);
		snprintf(v[i].origin, sizeof(v[i].origin), "%s",
			 bg_fleetdb_redact(s->v[i].origin, origin, sizeof(origin)));
		snprintf(v[i].role, sizeof(v[i].role), "%s", s->v[i].role);
		snprintf(v[i].format, sizeof(v[i].format), "%s", s->v[i].format);
		snprintf(v[i].sha256, sizeof(v[i].sha256), "%s", s->v[i].sha256);
		v[i].entries = s->v[i].entries;
	}
	*out = v;
	return 0;
}

int cli_cmd_publish(int argc, char **argv)
{
	struct list_ctx c = publish_defaults;
	struct bg_load_opts o = { .diag = list_print_diag };
	struct bg_pub_opts po = { .load = &o };
	struct bg_pub_result res;
	struct bg_load_report r;
	struct bg_sources srcs;
	struct bg_fleetdb *db = NULL;
	struct bg_fleet_gen latest, g;
	uint64_t next_gen = 0;
	struct bg_fleet_list *lists = NULL;
	struct bg_art_sources as = { 0 };
	struct bg_art a;
	char why[512], cur[PATH_MAX], next[PATH_MAX], delta[PATH_MAX];
	char cache[PATH_MAX], hex[65], host[256], fsz[32], dsz[32];
	const void *stext;
	size_t slen, i;
	double t0 = bg_mono_ms(), tb, tp;
	int ret, have_base = 0, opened = 0;

	bg_sources_init(&srcs);
	c.srcs = &srcs;
	bg_load_report_init(&r);
	if ((ret = cli_parse_args(&cli_publish_cmd, &argc, argv, &c))) {
		bg_sources_free(&srcs);
		return ret < 0 ? 0 : ret;
	}
	list_load_opts(&c, &o);
	if (snprintf(cur, sizeof(cur), "%s/current.bga", c.state) >= (int)sizeof(cur) ||
	    snprintf(next, sizeof(next), "%s/next.bga", c.state) >= (int)sizeof(next) ||
	    snprintf(delta, sizeof(delta), "%s/next.delta", c.state) >= (int)sizeof(delta) ||
	    snprintf(cache, sizeof(cache), "%s/lists", c.state) >= (int)sizeof(cache)) {
		ret = cli_fail(EXIT_USAGE, "--state: too long a path");
		goto out;
	}
	if ((ret = mkdir_p(c.state))) {
		ret = cli_fail(1, "--state %s: %s", c.state, strerror(-ret));
		goto out;
	}
	ret = bg_fleetdb_connect(c.db, 0, &db, why, sizeof(why));
	if (!ret)
		ret = bg_fleetdb_migrate(db, why, sizeof(why));
	if (!ret)
		ret = bg_fleetdb_latest(db, &latest, why, sizeof(why));
	if (!ret)
		ret = bg_fleetdb_next(db, &next_gen, why, sizeof(why));
	if (ret) {
		ret = cli_fail(1, "the fleet store: %s", why);
		goto out;
	}
	/* the base: the store's newest generation, when this publisher's
	 * copy is it (the same file: its SHA-256 is the store's checksum) */
	if (latest.generation && !bg_sha256_file(cur, hex))
		have_base = !strcmp(hex, latest.sha256);
	po.base = have_base ? cur : NULL;
	po.cache = cache;
	/* above every generation ever published, rows deleted since too */
	po.generation = next_gen;
	po.full = c.full;
	po.out_full = next;
	po.out_delta = delta;
	unlink(delta);
	ret = bg_publish_build(&po, &res, &r);
	tb = bg_mono_ms();
	if (ret) {
		ret = cli_fail(r.failed <= BG_STAGE_PLAN ? EXIT_LIST : 1,
			       "%s; nothing published", r.msg);
		goto out;
	}
	if (latest.generation && !have_base && !c.full)
		snprintf(res.why_full, sizeof(res.why_full), "the store's generation "
			 "%" PRIu64 " is not this publisher's (%s)", latest.generation,
			 c.state);
	/* the row */
	ret = bg_art_open(next, &a, why, sizeof(why));
	if (ret) {
		ret = cli_fail(1, "%s: %s", next, why);
		goto out;
	}
	opened = 1;
	stext = bg_art_sec(&a, BG_ART_SEC_SOURCES, &slen);
	if (bg_art_sources_read(&a, &as) || row_lists(&as, &lists)) {
		ret = cli_fail(1, "cannot read the lists of %s", next);
		goto out;
	}
	memset(&g, 0, sizeof(g));
	g.generation = po.generation;
	g.kind = res.delta ? BG_FLEET_DELTA : BG_FLEET_FULL;
	g.base_generation = res.delta ? latest.generation : 0;
	snprintf(g.sha256, sizeof(g.sha256), "%s", res.sha256);
	if (res.delta)
		snprintf(g.base_sha256, sizeof(g.base_sha256), "%s", latest.sha256);
	g.keys = a.h->plan.keys;
	g.entries = res.entries;
	if (gethostname(host, sizeof(host)))
		host[0] = 0;
	host[sizeof(host) - 1] = 0;
	snprintf(g.publisher, sizeof(g.publisher), "%s", host);
	{
		char *json = strndup(stext, slen);

		ret = json ? bg_fleetdb_publish(db, &g, json, lists, as.n, next,
						res.delta ? delta : NULL, why,
						sizeof(why)) : -ENOMEM;
		free(json);
	}
	tp = bg_mono_ms();
	if (ret == -EAGAIN) {
		ret = cli_fail(1, "another publisher stored generation %" PRIu64
			       " first: run publish again", g.generation);
		goto out;
	}
	if (ret) {
		ret = cli_fail(1, "the fleet store: %s; nothing published", why);
		goto out;
	}
	/* the next delta's base: this generation, and its lists */
	if (rename(next, cur))
		fprintf(stderr, "bloomgate: %s: %s: the next generation will be a "
			"full one\n", cur, strerror(errno));
	{
		char (*sha)[65] = calloc(srcs.n ? srcs.n : 1, sizeof(*sha));

		for (i = 0; sha && i < srcs.n && i < as.n; i++)
			snprintf(sha[i], sizeof(sha[i]), "%s", as.v[i].sha256);
		if (!sha || bg_publish_cache_lists(cache, &srcs, sha))
			fprintf(stderr, "bloomgate: cannot keep a copy of the lists in "
				"%s: the next generation will be a full one\n", cache);
		free(sha);
	}
	unlink(delta);
	if (bg_fleetdb_prune(db, (unsigned int)c.keep, why, sizeof(why)))
		fprintf(stderr, "bloomgate: the fleet store: %s (old generations "
			"kept)\n", why);
	bg_fmt_bytes(fsz, sizeof(fsz), (double)res.full_bytes);
	bg_fmt_bytes(dsz, sizeof(dsz), (double)res.delta_bytes);
	printf("generation:       %" PRIu64 " published (%s), sha256 %s\n",
	       g.generation, res.delta ? "delta" : "full", g.sha256);
	printf("entries:          %" PRIu64 " from %zu lists, %" PRIu64 " Bloom keys\n",
	       res.entries, as.n, g.keys);
	if (res.delta) {
		printf("delta:            against generation %" PRIu64 ": %zu elements "
		       "of 64 bytes, %" PRIu64 " bytes (%s; %.2f%% of the full %" PRIu64
		       " bytes, %s); %" PRIu64 " keys added, %" PRIu64 " removed; the "
		       "Bloom part's rate %.3g (target %g)\n", latest.generation,
		       res.patches, res.delta_bytes, dsz,
		       100.0 * (double)res.delta_bytes / (double)res.full_bytes,
		       res.full_bytes, fsz, res.keys_added, res.keys_removed,
		       res.predicted_addr, a.h->plan.target);
	} else {
		printf("full:             %s (%s)\n", fsz, res.why_full);
	}
	printf("time:             %.0f ms (build %.0f, store %.0f)\n",
	       bg_mono_ms() - t0, tb - t0, tp - tb);
out:
	if (opened)
		bg_art_close(&a);
	bg_art_sources_free(&as);
	free(lists);
	if (db)
		bg_fleetdb_close(db);
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
	return ret;
}

/* ---- fleet status ------------------------------------------------------- */

struct fleet_ctx {
	int what;
	const char *db;
	int json;
};

static const struct bg_opt_enum fleet_what[] = {
	{ "status", 1, "every gateway: the generation it enforces and its lag" },
	{ NULL },
};

static const struct bg_opt fleet_opts[] = {
	{ .name = "db", .type = BG_OPT_STRING, .metavar = "URL",
	  .help = "the fleet store: a postgresql:// URL or a libpq connection "
		  "string", .off = offsetof(struct fleet_ctx, db) },
	{ .name = "json", .type = BG_OPT_FLAG, .help = "one JSON document",
	  .off = offsetof(struct fleet_ctx, json) },
	{ NULL },
};

static const struct bg_opt fleet_pos = {
	.type = BG_OPT_ENUM, .values = fleet_what, .metavar = "status",
	.help = "what to show", .off = offsetof(struct fleet_ctx, what),
};

static int fleet_done(void *ctx, unsigned int npos, char *err, size_t errlen)
{
	struct fleet_ctx *c = ctx;

	(void)npos;
	if (!c->db) {
		snprintf(err, errlen, "fleet: missing --db URL (the fleet store)");
		return -EINVAL;
	}
	return 0;
}

const struct bg_cmd cli_fleet_cmd = {
	.name = "fleet",
	.summary = "What the fleet store knows: its newest generation and, for\n"
		   "every gateway, the generation it enforces, how far behind it\n"
		   "is (generations, and seconds since the first one it lacks was\n"
		   "published; a negative lag and the state \"ahead\": the gateway\n"
		   "enforces a generation newer than the store's newest, whose rows\n"
		   "were deleted), when it reported last, its keys, the datapath's\n"
		   "drops and Bloom false positives, and its last error. Text from\n"
		   "the store (names, states, errors) is printed with every byte\n"
		   "that is not printable ASCII as \\xNN (and in --json as \\uXXXX).",
	.opts = fleet_opts, .pos = &fleet_pos, .min_pos = 1, .max_pos = 1,
	.pos_first = 1, .done = fleet_done,
};

static void fmt_ago(char *buf, size_t len, double t, double now)
{
	if (t && now < t)
		now = t; /* the store's clock a little ahead of ours */
	if (!t)
		snprintf(buf, len, "never");
	else if (now - t < 120)
		snprintf(buf, len, "%.0fs ago", now - t);
	else if (now - t < 7200)
		snprintf(buf, len, "%.0fm ago", (now - t) / 60);
	else
		snprintf(buf, len, "%.1fh ago", (now - t) / 3600);
}

/*
 * The store's text as a terminal may show it. Any gateway's database role
 * can write a gateway's name, state and error (and a publisher's name):
 * every byte that is not printable ASCII (control characters, DEL, and
 * past 0x7e, so no UTF-8 either, whose C1 controls some terminals obey)
 * is printed as \xNN and a backslash as \\, so that a row can neither
 * move the cursor, clear the screen, nor start another row.
 */
static const char *esc(char *out, size_t outlen, const char *s)
{
	size_t o = 0;

	for (; *s && o + 5 < outlen; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\\')
			o += (size_t)snprintf(out + o, outlen - o, "\\\\");
		else if (c < 0x20 || c > 0x7e)
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = 0;
	return out;
}

/* One UTF-8 character at s (n bytes left): its code point and length;
 * U+FFFD and 1 for a byte that starts none (a forged name need not be
 * UTF-8). */
static uint32_t utf8_next(const unsigned char *s, size_t n, size_t *len)
{
	uint32_t cp, min;
	size_t k, i;

	*len = 1;
	if (s[0] < 0x80)
		return s[0];
	if ((s[0] & 0xe0) == 0xc0)
		k = 2, cp = s[0] & 0x1f, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		k = 3, cp = s[0] & 0x0f, min = 0x800;
	else if ((s[0] & 0xf8) == 0xf0)
		k = 4, cp = s[0] & 0x07, min = 0x10000;
	else
		return 0xfffd;
	if (k > n)
		return 0xfffd;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0xfffd;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0xfffd;
	*len = k;
	return cp;
}

/*
 * json-c's text made ASCII: json-c escapes the control characters below
 * 0x20 itself (\n, \u001b...), but passes DEL and every byte past 0x7f as
 * it is. Outside strings JSON is ASCII, so each such byte is in a string:
 * its character as \uXXXX (a surrogate pair past U+FFFF; U+FFFD for bytes
 * that are no UTF-8). What a JSON reader reads is the same text; what a
 * terminal shows is ASCII. malloc'd, NULL on failure.
 */
static char *json_ascii(const char *in)
{
	size_t n = strlen(in), i = 0, o = 0, len;
	char *out = malloc(n * 12 + 1);
	uint32_t cp;

	if (!out)
		return NULL;
	while (i < n) {
		const unsigned char *s = (const unsigned char *)in + i;

		if (*s < 0x7f) {
			out[o++] = (char)*s;
			i++;
			continue;
		}
		cp = utf8_next(s, n - i, &len);
		i += len;
		if (cp > 0xffff) {
			cp -= 0x10000;
			o += (size_t)sprintf(out + o, "\\u%04x\\u%04x", 0xd800 + (cp >> 10),
					     0xdc00 + (cp & 0x3ff));
		} else {
			o += (size_t)sprintf(out + o, "\\u%04x", cp);
		}
	}
	out[o] = 0;
	return out;
}

static void status_json(const struct bg_fleet_gen *latest,
			const struct bg_fleet_report *v, size_t n)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	char *text;
	size_t i;

	json_object_object_add(o, "generation", json_object_new_int64((int64_t)latest->generation));
	json_object_object_add(o, "kind", json_object_new_string(
		latest->kind == BG_FLEET_DELTA ? "delta" : "full"));
	json_object_object_add(o, "sha256", json_object_new_string(latest->sha256));
	json_object_object_add(o, "created", json_object_new_double(latest->created));
	json_object_object_add(o, "gateways", arr);
	for (i = 0; i < n; i++) {
		struct json_object *g = json_object_new_object();

		json_object_object_add(g, "gateway", json_object_new_string(v[i].gateway));
		json_object_object_add(g, "generation", json_object_new_int64((int64_t)v[i].generation));
		json_object_object_add(g, "lag_generations", json_object_new_int64(v[i].lag_generations));
		json_object_object_add(g, "ahead", json_object_new_boolean(v[i].lag_generations < 0));
		json_object_object_add(g, "lag_seconds", json_object_new_double(v[i].lag_seconds));
		json_object_object_add(g, "applied_at", json_object_new_double(v[i].applied_at));
		json_object_object_add(g, "reported_at", json_object_new_double(v[i].reported_at));
		json_object_object_add(g, "filter_id", json_object_new_int64(v[i].filter_id));
		json_object_object_add(g, "keys", json_object_new_int64((int64_t)v[i].keys));
		json_object_object_add(g, "entries", json_object_new_int64((int64_t)v[i].entries));
		json_object_object_add(g, "packets", json_object_new_int64((int64_t)v[i].packets));
		json_object_object_add(g, "dropped", json_object_new_int64((int64_t)v[i].dropped));
		json_object_object_add(g, "bloom_false_positives", json_object_new_int64((int64_t)v[i].bloom_fp));
		json_object_object_add(g, "state", json_object_new_string(v[i].state));
		json_object_object_add(g, "last_error", json_object_new_string(v[i].last_error));
		json_object_array_add(arr, g);
	}
	text = json_ascii(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	printf("%s\n", text ? text : "{}");
	free(text);
	json_object_put(o);
}

static void status_text(const struct bg_fleet_gen *latest,
			const struct bg_fleet_report *v, size_t n)
{
	char ago[32], applied[32], lag[24], name[4 * 256], state[4 * 32];
	char err[4 * 512], sha[4 * 65], pub[4 * 256];
	double now = (double)time(NULL);
	size_t i;

	if (latest->generation)
		printf("generation %" PRIu64 " (%s), sha256 %.16s..., %" PRIu64 " keys, "
		       "%" PRIu64 " entries, published %s by %s\n", latest->generation,
		       latest->kind == BG_FLEET_DELTA ? "delta" : "full",
		       esc(sha, sizeof(sha), latest->sha256), latest->keys,
		       latest->entries,
		       (fmt_ago(ago, sizeof(ago), latest->created, now), ago),
		       latest->publisher[0] ? esc(pub, sizeof(pub), latest->publisher) : "?");
	else
		printf("no generation published yet\n");
	printf("%-24s %10s %5s %9s %10s %-8s %12s %12s %10s  %s\n", "GATEWAY",
	       "GENERATION", "LAG", "LAG_S", "APPLIED", "STATE", "KEYS", "DROPPED",
	       "REPORTED", "LAST ERROR");
	for (i = 0; i < n; i++) {
		fmt_ago(applied, sizeof(applied), v[i].applied_at, now);
		fmt_ago(ago, sizeof(ago), v[i].reported_at, now);
		snprintf(lag, sizeof(lag), "%" PRId64, v[i].lag_generations);
		/* ahead of the store: its newest rows were deleted (the
		 * gateway keeps what it applied; it refuses the older one
		 * unless allowed) */
		printf("%-24s %10" PRIu64 " %5s %9.1f %10s %-8s %12" PRIu64
		       " %12" PRIu64 " %10s  %s\n", esc(name, sizeof(name), v[i].gateway),
		       v[i].generation, lag, v[i].lag_seconds, applied,
		       v[i].lag_generations < 0 ? "ahead" : esc(state, sizeof(state), v[i].state),
		       v[i].keys, v[i].dropped, ago,
		       v[i].last_error[0] ? esc(err, sizeof(err), v[i].last_error) : "-");
	}
}

int cli_cmd_fleet(int argc, char **argv)
{
	struct fleet_ctx c = { 0 };
	struct bg_fleetdb *db = NULL;
	struct bg_fleet_report *v = NULL;
	struct bg_fleet_gen latest;
	char why[512];
	size_t n = 0;
	int ret;

	if ((ret = cli_parse_args(&cli_fleet_cmd, &argc, argv, &c)))
		return ret < 0 ? 0 : ret;
	ret = bg_fleetdb_connect(c.db, 0, &db, why, sizeof(why));
	if (!ret)
		ret = bg_fleetdb_status(db, &latest, &v, &n, why, sizeof(why));
	if (db)
		bg_fleetdb_close(db);
	if (ret)
		return cli_fail(1, "the fleet store: %s", why);
	if (c.json)
		status_json(&latest, v, n);
	else
		status_text(&latest, v, n);
	free(v);
	return 0;
}
