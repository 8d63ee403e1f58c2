// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `status` and `check` as text, for the CLI and for the agent's control
 * socket alike (agent/report.h).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "bloomgate/dns.h"
#include "core/artifact.h"
#include "core/attach_opts.h"
#include "core/print.h"
#include "core/record.h"
#include "core/view.h"
#include "agent/crowdsec.h"
#include "agent/provenance.h"
#include "agent/report.h"
#include "agent/store.h"
#include "kern/attach.h"
#include "kern/protect.h"
#include "kern/swap.h"

static int fail(FILE *errf, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "bloomgate: MESSAGE" on errf, as the CLI's errors; returns code. */
static int fail(FILE *errf, int code, const char *fmt, ...)
{
	va_list ap;

	fputs("bloomgate: ", errf);
	va_start(ap, fmt);
	vfprintf(errf, fmt, ap);
	va_end(ap);
	fputc('\n', errf);
	return code;
}

int bg_report_open_failed(int err, int status, FILE *out, FILE *errf)
{
	char why[512];

	if (err == -ENOMEDIUM) {
		/* not "not attached": nothing can be seen from here */
		bg_no_bpffs_why(why, sizeof(why));
		return fail(errf, 1, "%s", why);
	}
	if (err == -ENOENT && status) {
		fputs("bloomgate is not attached to any interface\n", out);
		return BG_REPORT_NOT_ATTACHED;
	}
	if (err == -ENOENT)
		return fail(errf, BG_REPORT_NOT_ATTACHED,
			    "bloomgate is not attached to any interface "
			    "(run: bloomgate attach IFACE)");
	return fail(errf, 1, "cannot open the pinned state in %s: %s",
		    bg_pin_dir(), strerror(-err));
}

/* ---- status -------------------------------------------------------------- */

static long long jint(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? (long long)json_object_get_int64(v) : 0;
}

/* The control socket's line: its followers of the events and what it
 * refused or cut off; none while there is nothing to say. */
static void print_control(FILE *out, struct json_object *c)
{
	long long fol = jint(c, "followers"), unsent = jint(c, "events_unsent"),
		  cut = jint(c, "followers_cut"), rf = jint(c, "refused_followers"),
		  rc = jint(c, "refused_connections");

	if (!fol && !unsent && !cut && !rf && !rc)
		return;
	fprintf(out, "agent: events followed by %lld; %lld events not sent to followers "
		"too slow for them, %lld followers cut off; refused at a bound: %lld "
		"followers, %lld connections\n", fol, unsent, cut, rf, rc);
}

/* A source's rejected input, as status counts it: a list's rejected lines
 * (", 2 rejected lines"), a source of decisions' refusals by reason
 * (", refused: value 3, too_wide 1"); nothing when there is none. */
static void print_refused(FILE *out, struct json_object *s)
{
	struct json_object *v;
	int first = 1;

	if (json_object_object_get_ex(s, "rejected", &v) && json_object_get_int64(v) > 0)
		fprintf(out, ", %lld rejected lines", (long long)json_object_get_int64(v));
	if (!json_object_object_get_ex(s, "refused", &v) ||
	    !json_object_is_type(v, json_type_object))
		return;
	json_object_object_foreach(v, reason, n) {
		if (json_object_get_int64(n) <= 0)
			continue;
		fprintf(out, "%s %s %lld", first ? ", refused:" : ",", reason,
			(long long)json_object_get_int64(n));
		first = 0;
	}
}

void bg_report_agent_status(FILE *out, struct json_object *o)
{
	struct json_object *v, *srcs;
	size_t i;

	fprintf(out, "agent: pid %d, up %.0f s, config %s, filter generation %lld\n",
	       json_object_object_get_ex(o, "pid", &v) ? json_object_get_int(v) : 0,
	       json_object_object_get_ex(o, "uptime", &v) ? json_object_get_double(v) : 0,
	       json_object_object_get_ex(o, "config", &v) ? json_object_get_string(v) : "?",
	       json_object_object_get_ex(o, "generation", &v) ? (long long)json_object_get_int64(v) : 0);
	if (json_object_object_get_ex(o, "artifact", &v)) {
		struct json_object *g = NULL, *h = NULL;

		json_object_object_get_ex(v, "generation", &g);
		json_object_object_get_ex(v, "sha256", &h);
		fprintf(out, "agent: the live filter is an artifact's: generation %lld, sha256 %s\n",
		       g ? (long long)json_object_get_int64(g) : 0,
		       h ? json_object_get_string(h) : "?");
	}
	if (json_object_object_get_ex(o, "fleet", &v)) {
		struct json_object *g = NULL, *c = NULL;

		json_object_object_get_ex(v, "gateway", &g);
		json_object_object_get_ex(v, "connected", &c);
		fprintf(out, "agent: fleet gateway %s, the store %s\n",
		       g ? json_object_get_string(g) : "?",
		       c && json_object_get_boolean(c) ? "connected" :
							 "not connected (enforcing the last good generation)");
	}
	if (json_object_object_get_ex(o, "filter_foreign", &v) && json_object_get_boolean(v)) {
		struct json_object *mine = NULL, *live = NULL;

		json_object_object_get_ex(o, "filter_id", &mine);
		json_object_object_get_ex(o, "live_filter_id", &live);
		fprintf(out, "agent: the live filter (id %lld) is not the one it built (id %lld), "
		       "replaced by a forced load: its lists are not enforced until its "
		       "next rebuild (bloomgate reload)\n",
		       live ? (long long)json_object_get_int64(live) : 0,
		       mine ? (long long)json_object_get_int64(mine) : 0);
	}
	if (json_object_object_get_ex(o, "control", &v))
		print_control(out, v);
	if (json_object_object_get_ex(o, "sources", &srcs))
		for (i = 0; i < json_object_array_length(srcs); i++) {
			struct json_object *s = json_object_array_get_idx(srcs, i), *n;
			const char *err = json_object_object_get_ex(s, "last_error", &v) ?
						  json_object_get_string(v) : "";

			fprintf(out, "  list %s (%s): %s, %lld entries",
			       json_object_object_get_ex(s, "name", &v) ? json_object_get_string(v) : "?",
			       json_object_object_get_ex(s, "origin", &v) ? json_object_get_string(v) : "?",
			       json_object_object_get_ex(s, "state", &v) ? json_object_get_string(v) : "?",
			       json_object_object_get_ex(s, "entries", &v) ? (long long)json_object_get_int64(v) : 0);
			print_refused(out, s);
			if (json_object_object_get_ex(s, "last_success", &v) && json_object_get_double(v) > 0)
				fprintf(out, ", last success %.0f s ago",
				       fmax(0, (double)time(NULL) - json_object_get_double(v)));
			if (json_object_object_get_ex(s, "next_fetch_in", &n) && n)
				fprintf(out, ", next fetch in %.0f s", json_object_get_double(n));
			if (err && *err)
				fprintf(out, ", last error: %s", err);
			fputc('\n', out);
		}
}

/* status: the lists behind the live filter, from its load record. */
static void print_record_lists(FILE *out, __u32 id)
{
	struct bg_record rec;
	int i;

	if (!id || bg_record_read(id, &rec)) {
		fputs("lists: not recorded (check cannot name entries)\n", out);
		return;
	}
	fprintf(out, "lists:");
	for (i = 0; i < rec.n; i++)
		fprintf(out, "%s %s %s (%s%s)", i ? "," : "",
		       rec.src[i].list.allow ? "allow" : "block", rec.src[i].path,
		       bg_format_name(rec.src[i].list.format),
		       rec.src[i].list.subdomains ? ", subdomains" : "");
	fputs(rec.n ? "\n" : " none\n", out);
	bg_record_free(&rec);
}

/* One attachment's line (and its chain's); cap, cap_elems: the capacity
 * last formatted, kept across the records (they agree: attach refuses
 * another capacity, so it is worked out once). */
static void report_attachment(struct bg_state *st, const struct bg_attach_rec *r,
			      char *cap, size_t caplen, __u32 *cap_elems,
			      FILE *out)
{
	char name[IF_NAMESIZE] = "?", ports[64];

	/* Its name cannot be had any more, nor kept in the record. */
	if (bg_attach_rec_gone(r) == 1) {
		fprintf(out, "attached: gone (ifindex %u)", r->ifindex);
		if (r->netns_ino != bg_netns_ino())
			fprintf(out, " in another network namespace (netns inode %u)",
				r->netns_ino);
		fprintf(out, ", prog id %u (bloomgate detach --gone removes it)\n",
			r->prog_id);
		return;
	}
	if (r->netns_ino != bg_netns_ino()) {
		fprintf(out, "attached: ifindex %u in another network namespace "
			"(netns inode %u, prog id %u)\n", r->ifindex,
			r->netns_ino, r->prog_id);
		return;
	}
	if_indextoname(r->ifindex, name);
	bg_fmt_ports(ports, sizeof(ports), r->dns_ports);
	if (r->capacity != *cap_elems) {
		*cap_elems = r->capacity;
		bg_fmt_capacity(cap, caplen, *cap_elems);
	}
	fprintf(out, "attached: %s (ifindex %u, %s mode, match %s, action %s, "
		"dns-action %s, dns-ports %s, unparsed %s, capacity %s%s, "
		"prog id %u, dns prog id %u)\n",
		name, r->ifindex, bg_rec_mode_name(r), bg_match_name(r->match),
		bg_action_name(r->action), bg_dns_action_name(r->dns_action), ports,
		bg_rec_unparsed_name(r), cap,
		r->mode & BG_ATTACH_F_GROW ? ", growing" : "", r->prog_id,
		r->dns_prog_id);
	if (r->mode & BG_ATTACH_F_CHAIN) {
		__u32 next = 0;

		if (bg_attach_next_id(st->dir, r, &next))
			fprintf(out, "  chain: the next slot cannot be read\n");
		else if (next)
			fprintf(out, "  chain: prog id %u runs after bloomgate\n", next);
		else
			fprintf(out, "  chain: nothing runs after bloomgate (bloomgate chain)\n");
	}
}

/* The live filter's shape: its Bloom part, exact stage, probes, names. */
static void report_filter(const struct bg_filter_header *h, FILE *out)
{
	double pp = bg_filter_model_fpr(h->entries, h->nblocks, h->k);
	int probes = h->n4 > h->n6 ? h->n4 : h->n6, i;
	char b[32];

	bg_fmt_bytes(b, sizeof(b), (double)bg_filter_nelems(h) * BG_FILTER_VALUE_SIZE);
	fprintf(out, "filter: %llu Bloom keys, %u blocks, k=%u, %.2f Bloom bits/key, "
		"predicted false-positive rate %.6f per address",
		(unsigned long long)h->entries, h->nblocks, h->k,
		h->entries ? (double)h->nblocks * BG_BLOCK_BITS / (double)h->entries : 0.0,
		1.0 - pow(1.0 - pp, probes ? probes : 1));
	if (h->flags & BG_FILTER_F_NAMES)
		fprintf(out, ", %.6f per query",
			1.0 - pow(1.0 - pp, 1 + __builtin_popcount(h->subs_depths)));
	fprintf(out, ", memory %s\n", b);
	if (h->fp_nbuckets)
		fprintf(out, "exact stage: %u buckets of %d fingerprints, every Bloom "
			"positive confirmed\n", h->fp_nbuckets, BG_FP_PER_BUCKET);
	else
		fprintf(out, "exact stage: off (loaded with --confirm off)\n");
	fprintf(out, "probes: IPv4 %s", h->flags & BG_FILTER_F_SHORT4 ? "bitmap /0-/16" : "");
	for (i = 0; i < h->n4; i++)
		fprintf(out, " /%u", h->len4[i]);
	fprintf(out, "; IPv6 %s", h->short6_n ? "exact ranges" : "");
	for (i = 0; i < h->n6; i++)
		fprintf(out, " /%u", h->len6[i]);
	fprintf(out, "; allowlist %u IPv4 + %u IPv6 ranges\n", h->allow4_n, h->allow6_n);
	if (h->flags & BG_FILTER_F_NAMES) {
		char db[32];

		fprintf(out, "names: up to %d probes per query (the name, then its parent "
			"names of at most %d labels with a subdomain rule: depths "
			"%s); %u allowed name keys\n",
			1 + __builtin_popcount(h->subs_depths), BG_DNS_SUFFIX_MAX,
			bg_fmt_depths(db, sizeof(db), h->subs_depths), h->allown_n);
	} else {
		fputs("names: none loaded (DNS queries pass)\n", out);
	}
}

int bg_report_datapath(struct bg_state *st, FILE *out, FILE *errf)
{
	struct bg_attach_rec recs[BG_ATTACH_MAX];
	const void *mem;
	char cap[96] = "";
	__u32 cap_elems = UINT32_MAX; /* none formatted yet */
	size_t len;
	int n, i, ret;

	(void)errf;
	n = bg_attach_list(st, recs, BG_ATTACH_MAX);
	fprintf(out, "pinned state: %s\n", st->dir);
	for (i = 0; i < n; i++)
		report_attachment(st, &recs[i], cap, sizeof(cap), &cap_elems, out);
	ret = bg_filter_view_pinned(st->dir, st->filters_fd, &mem, &len);
	if (ret == 0) {
		report_filter(mem, out);
		bg_filter_unmap(mem, len);
		print_record_lists(out, bg_filter_current_id(st->filters_fd));
	} else if (ret == -ENOENT) {
		fputs("filter: none loaded (every packet with an address passes)\n", out);
	} else {
		/* e.g. EPERM: the live map is found by id (CAP_SYS_ADMIN) */
		fprintf(out, "filter: cannot be read: %s\n", strerror(-ret));
	}
	return 0;
}

/* ---- check --------------------------------------------------------------- */

/* The agent's store behind a record, when the record names the agent's
 * copies (STATE_DIR/lists/NAME.list) and STATE_DIR/bloomgate.db is there:
 * then check names each source and the line as fetched, from the sources'
 * provenance indexes. NULL otherwise. */
static struct bg_store *agent_store_of(const struct bg_record *rec, FILE *errf)
{
	char dir[PATH_MAX], *p;
	struct bg_store *st = NULL;
	int ret;

	if (rec->n < 1 || snprintf(dir, sizeof(dir), "%s", rec->src[0].path) >=
				  (int)sizeof(dir))
		return NULL;
	p = strrchr(dir, '/');
	if (!p || strcmp(p + strlen(p) - 5, ".list"))
		return NULL;
	*p = 0;
	p = strrchr(dir, '/');
	if (!p || strcmp(p, "/lists"))
		return NULL;
	*p = 0;
	ret = bg_store_open_ro(dir, &st);
	if (ret && ret != -ENOENT)
		/* said, not taken for something else (a corrupt page once
		 * read as "out of memory"): the lists' copies still name the
		 * entries */
		fprintf(errf, "bloomgate: the agent's store in %s cannot be read "
			"(%s): entries named from the lists' copies instead\n", dir,
			ret == -EBADMSG ? "not a database, or a corrupt one" :
			ret == -EPROTO ? "written by a newer bloomgate" : strerror(-ret));
	return ret ? NULL : st;
}

/* A source whose entries check cannot name (its index is missing, stale or
 * corrupt): said once, on stderr, and *why names it for the verdict's line
 * when no other entry explains it. */
static void prov_problems(const struct bg_prov_reader *prov, int *said,
			  const char **why, FILE *errf)
{
	static char what[BG_STORE_NAME_MAX + 64];
	const char *src, *reason;
	size_t i;

	for (i = 0; bg_prov_problem(prov, i, &src, &reason); i++) {
		if (!*said)
			fprintf(errf, "bloomgate: check: list %s: %s; its entries "
				"are not named (the agent re-indexes it when it "
				"starts)\n", src, reason);
		if (i == 0) {
			snprintf(what, sizeof(what), "the provenance index of %s", src);
			*why = what;
		}
	}
	if (i)
		*said = 1;
}

/* The agent's indexes, a crowdsec: source's entries named by their
 * decision (its copy's line says which): "listed by crowdsec decision
 * 1234 (origin cscli, scenario ...) in crowdsec (URL)". */
static int prov_find(void *ctx, const char *arg, struct bg_explain_hit **hits,
		     size_t *n)
{
	char text[sizeof((*hits)->entry)];
	size_t i;
	int ret = bg_prov_find(ctx, arg, hits, n);

	for (i = 0; !ret && i < *n; i++)
		if (!bg_cs_line_text((*hits)[i].text, text, sizeof(text))) {
			memcpy((*hits)[i].entry, text, sizeof(text));
			(*hits)[i].line = 0;
		}
	return ret;
}

int bg_report_check(const struct bg_state *st, int n, char *const *args,
		    FILE *out, FILE *errf)
{
	struct bg_prov_reader *prov = NULL;
	struct bg_store *store = NULL;
	struct bg_art_finder art;
	int have_art = 0;
	struct bg_record rec;
	const void *mem;
	size_t len;
	__u32 id = 0;
	int i, ret, bad = 0, have_rec, said = 0;
	struct bg_protect_set *ps = NULL;

	/* The record of the filter mapped: its id read before and after
	 * the mapping, so a swap in between is seen (and retried). */
	for (i = 0; i < 5; i++) {
		id = bg_filter_current_id(st->filters_fd);
		ret = bg_filter_view_pinned(st->dir, st->filters_fd, &mem, &len);
		if (ret == 0 && id != bg_filter_current_id(st->filters_fd)) {
			bg_filter_unmap(mem, len);
			ret = -EAGAIN;
		}
		if (ret != -EAGAIN)
			break;
	}
	have_rec = ret == 0 && bg_record_read(id, &rec) == 0;
	if (ret == -ENOENT)
		return fail(errf, 1, "no filter is loaded (run: bloomgate load LIST)");
	if (ret == -EPROTO)
		return fail(errf, 1, "the loaded filter is from another bloomgate version "
			    "(ABI %d expected); reload it", BG_ABI_VERSION);
	if (ret)
		return fail(errf, 1, "cannot read the live filter: %s", strerror(-ret));
	if (have_rec && rec.artifact) {
		char why[512];

		/* loaded from an artifact: its index names the lists */
		have_art = !bg_art_finder_open(rec.artifact, rec.artifact_sha, &art,
					       why, sizeof(why));
		if (!have_art)
			fprintf(errf, "bloomgate: check: %s: entries are not "
				"named\n", why);
	} else if (have_rec) {
		store = agent_store_of(&rec, errf);
	}
	/* the indexes, or (none can be opened) the record's lists re-read */
	if (store && bg_prov_open(store, &prov))
		prov = NULL;
	/* the live protected set: a listed address it holds passes */
	if (st->protect_fd >= 0 && (ps = malloc(sizeof(*ps))) &&
	    bg_protect_read(st->protect_fd, ps)) {
		free(ps);
		ps = NULL;
	}
	for (i = 0; i < n; i++) {
		struct bg_explanation x;

		if (have_art)
			ret = bg_explain_found(mem, bg_art_find, &art, args[i], &x);
		else if (prov)
			ret = bg_explain_found(mem, prov_find, prov, args[i], &x);
		else
			ret = bg_explain(mem, have_rec && !rec.artifact ? &rec : NULL,
					 args[i], &x);
		/* a chunk of the filter that could not be mapped answered "not
		 * listed": no answer at all then (core/view.h) */
		if (!ret && bg_view_error(mem))
			ret = bg_view_error(mem);
		if (ret) {
			bad = fail(errf, 1, "%s: %s", args[i], strerror(-ret));
		} else if (x.kind == BG_EXPLAIN_INVALID) {
			fprintf(errf, "bloomgate: %s: %s\n", args[i], x.why);
			bad = bad ? bad : BG_REPORT_USAGE;
		} else {
			/* after the find: a block found corrupt on the way
			 * is a problem too */
			if (prov && x.listed)
				prov_problems(prov, &said, &x.unreadable, errf);
			if (ps)
				bg_explain_protect(&x, ps);
			bg_print_explanation(out, args[i], &x);
		}
		bg_explain_free(&x);
	}
	bg_filter_unmap(mem, len);
	free(ps);
	bg_prov_close(prov);
	if (have_art)
		bg_art_finder_close(&art);
	if (store)
		bg_store_close(store);
	if (have_rec)
		bg_record_free(&rec);
	return bad;
}

/* ---- the envelope -------------------------------------------------------- */

struct json_object *bg_report_capture(int (*fn)(void *ctx, FILE *out, FILE *errf),
				      void *ctx)
{
	char *ob = NULL, *eb = NULL;
	size_t ol = 0, el = 0;
	FILE *out = open_memstream(&ob, &ol), *errf = open_memstream(&eb, &el);
	struct json_object *o = NULL;
	int code;

	if (out && errf) {
		code = fn(ctx, out, errf);
		fclose(out);
		fclose(errf);
		out = errf = NULL;
		o = json_object_new_object();
		if (o) {
			json_object_object_add(o, "exit", json_object_new_int(code));
			json_object_object_add(o, "out", json_object_new_string(ob ? ob : ""));
			json_object_object_add(o, "err", json_object_new_string(eb ? eb : ""));
		}
	}
	if (out)
		fclose(out);
	if (errf)
		fclose(errf);
	free(ob);
	free(eb);
	return o;
}

int bg_report_emit(struct json_object *r, FILE *out, FILE *errf)
{
	struct json_object *code, *o, *e;

	if (!r || !json_object_object_get_ex(r, "exit", &code) ||
	    !json_object_object_get_ex(r, "out", &o) ||
	    !json_object_object_get_ex(r, "err", &e))
		return 1;
	fputs(json_object_get_string(o), out);
	fflush(out);
	fputs(json_object_get_string(e), errf);
	return json_object_get_int(code);
}
