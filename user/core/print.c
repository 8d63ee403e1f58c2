// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reports as text (user/core/print.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "bloomgate/dns.h"
#include "core/clock.h"
#include "core/print.h"
#include "core/wire.h"

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

static void print_lengths(FILE *out, const char *fam, const uint8_t *len,
			  int n, int extra, const char *extra_what)
{
	int i;

	fprintf(out, "probes %s:      up to %d per address (", fam, n + extra);
	if (extra)
		fprintf(out, "%s%s", extra_what, n ? ", " : "");
	for (i = 0; i < n; i++)
		fprintf(out, "%s/%u", i ? " " : "Bloom at ", len[i]);
	if (!n && !extra)
		fprintf(out, "none listed");
	fputs(")\n", out);
}

/* "2 3 4" for the subdomain depths of a subs_depths mask, "none" for 0. */
const char *bg_fmt_depths(char *b, size_t sz, unsigned int mask)
{
	size_t o = 0;
	int i;

	b[0] = 0;
	for (i = 1; i <= BG_DNS_SUFFIX_MAX; i++)
		if ((mask >> i) & 1)
			o += (size_t)snprintf(b + o, sz - o, "%s%d", o ? " " : "", i);
	return o ? b : "none";
}

static void print_sources(FILE *out, const struct bg_sources *srcs)
{
	size_t i;

	fprintf(out, "lists:            ");
	for (i = 0; i < srcs->n; i++) {
		const struct bg_source *s = &srcs->v[i];

		fprintf(out, "%s%s (%s%s%s)", i ? ", " : "", bg_list_name(s->path),
			bg_format_word(s->list.format),
			s->list.format == BG_FMT_PLAIN && s->list.subdomains ?
				", subdomains" : "",
			s->list.allow ? ", allow" : "");
	}
	fputc('\n', out);
}

static void print_names(FILE *out, const struct bg_load_report *r)
{
	const struct bg_names *n = &r->names;
	const struct bg_load_rules *k = &r->rules;
	size_t warn = n->warnings + n->too_deep;
	size_t allowed = k->allow_listed + k->allow_rules;
	char db[32];

	fprintf(out, "names read:       %zu from %zu file%s (%zu exact, %zu with subdomains "
		"kept; %zu duplicate%s, %zu skipped, %zu warning%s)\n",
		n->accepted, r->n_dom, plural(r->n_dom), k->exact, k->subs,
		n->duplicates, plural(n->duplicates), n->skipped, warn,
		plural(warn));
	fprintf(out, "names rejected:   %zu\n", n->rejected);
	fprintf(out, "names allowed:    %zu (%zu from --allow lists, %zu allow rule%s in "
		"block lists)%s\n",
		allowed, k->allow_listed, k->allow_rules, plural(k->allow_rules),
		allowed ? "; allow beats block" : "");
	if (n->too_deep)
		fprintf(out, "names too deep:   %zu subdomain rule%s deeper than %d labels, "
			"never matched below the name (reported above)\n",
			n->too_deep, plural(n->too_deep), BG_DNS_SUFFIX_MAX);
	fprintf(out, "probes per query: up to %d (the name, then its parent names of "
		"at most %d labels with a subdomain rule: depths %s)\n",
		1 + __builtin_popcount(r->plan.subs_depths), BG_DNS_SUFFIX_MAX,
		bg_fmt_depths(db, sizeof(db), r->plan.subs_depths));
}

void bg_fmt_detected(char *buf, size_t len, const struct bg_load_detected *d)
{
	char why[256];

	snprintf(buf, len, "%s: detected %s (%s)", d->file,
		 bg_format_word(d->ev.format),
		 bg_format_evidence_text(&d->ev, why, sizeof(why)));
}

void bg_print_load_report(FILE *out, const struct bg_sources *srcs,
			  const struct bg_load_report *r)
{
	const struct bg_filter_params *fp = &r->plan;
	const struct bg_list *b = &r->block, *a = &r->allow;
	int addrs = r->n_addr || !r->n_dom;
	char mem[32], xmem[32];
	double total = 0;
	char line[4352];
	size_t j;
	int i;

	for (j = 0; j < r->n_detected; j++) {
		bg_fmt_detected(line, sizeof(line), &r->detected[j]);
		fprintf(out, "%s\n", line);
	}
	bg_fmt_bytes(mem, sizeof(mem), (double)fp->bytes);
	bg_fmt_bytes(xmem, sizeof(xmem),
		     ((double)(fp->keys4 + fp->keys6) -
		      (double)(fp->prefixes4 - fp->short4_prefixes) -
		      (double)(fp->prefixes6 - fp->short6_prefixes)) *
			     fp->bits_per_entry / 8.0);
	if (r->n_dom)
		print_sources(out, srcs);
	if (addrs) {
		fprintf(out, "entries read:     %zu from %zu file%s (%zu IPv4, %zu IPv6 kept; "
			"%zu duplicate%s, %zu inside a shorter prefix, %zu warning%s)\n",
			b->accepted, b->files, plural(b->files), b->n4, b->n6,
			b->duplicates, plural(b->duplicates), b->covered,
			b->warnings, plural(b->warnings));
		fprintf(out, "entries rejected: %zu\n", b->rejected + a->rejected);
	}
	if (r->n_addr_allow)
		fprintf(out, "allowlist:        %zu entries from %zu file%s -> %u IPv4, %u IPv6 exact ranges\n",
			a->n4 + a->n6, a->files, plural(a->files),
			fp->allow4_n, fp->allow6_n);
	if (r->n_dom)
		print_names(out, r);
	if (addrs) {
		print_lengths(out, "IPv4", fp->len4, fp->n4, fp->short4,
			      "bitmap for /0-/16");
		print_lengths(out, "IPv6", fp->len6, fp->n6, fp->short6_n ? 1 : 0,
			      "exact ranges for the shortest prefixes");
		fprintf(out, "expansion:        %llu IPv4 + %llu IPv6 prefixes -> %llu Bloom keys (%s more)\n",
			(unsigned long long)(fp->prefixes4 - fp->short4_prefixes),
			(unsigned long long)(fp->prefixes6 - fp->short6_prefixes),
			(unsigned long long)(fp->keys4 + fp->keys6), xmem);
	}
	fprintf(out, "filter:           %u blocks of 512 bits, k=%u, %.2f Bloom bits/key",
		fp->nblocks, fp->k, fp->bits_per_entry);
	if (r->n_dom)
		fprintf(out, " (%llu address, %llu name keys)",
			(unsigned long long)(fp->keys4 + fp->keys6),
			(unsigned long long)fp->name_keys);
	fputc('\n', out);
	if (fp->fp_nbuckets)
		fprintf(out, "exact stage:      %u buckets of %d fingerprints (load %.2f): "
			"every Bloom positive confirmed\n", fp->fp_nbuckets,
			BG_FP_PER_BUCKET, fp->fp_load);
	else
		fprintf(out, "exact stage:      off (--confirm off): a Bloom positive "
			"is acted on as it is\n");
	fprintf(out, "false positives:  %.6f predicted per %s in the Bloom part "
		"(target %g; %.6f per Bloom probe)",
		fp->predicted_addr,
		!r->n_dom ? "address" : r->n_addr ? "address or query" : "query",
		r->fpr, fp->predicted);
	if (fp->fp_nbuckets)
		fprintf(out, "; %.1e after the exact stage", fp->predicted_confirmed);
	fputc('\n', out);
	/* the whole map a key (header, tables, Bloom part, exact stage): not
	 * the Bloom part's bits a key above */
	fprintf(out, "memory:           %s", mem);
	if (fp->n)
		fprintf(out, " (%.2f map bytes/key)", (double)fp->bytes / (double)fp->n);
	if (r->reshaped && r->grown)
		fprintf(out, " (the %scapacity is now %u elements, new programs "
			"swapped in: %s)", r->reshaped == 2 ? "growing " : "", r->grown,
			r->reshaped == 2 ? "the filter at its start, zeros after it" :
					   "the Bloom part fills it");
	else if (r->reshaped)
		fprintf(out, " (the capacity is now any size, new programs swapped in)");
	else if (fp->capacity && bg_filter_used(fp) < fp->capacity)
		fprintf(out, " (the attachment's growing capacity, %u elements: "
			"the filter takes %u, zeros after it)", fp->capacity,
			bg_filter_used(fp));
	else if (fp->capacity)
		fprintf(out, " (the attachment's fixed capacity, %u elements: the "
			"Bloom part fills it)", fp->capacity);
	fputc('\n', out);
	for (i = 0; i < BG_STAGE__COUNT; i++)
		total += r->ms[i];
	fprintf(out, "time:             %.1f ms (parse %.1f, build %.1f, swap %.2f)\n",
		total - r->ms[BG_STAGE_RECORD], r->ms[BG_STAGE_PARSE],
		r->ms[BG_STAGE_PLAN] + r->ms[BG_STAGE_BUILD],
		r->ms[BG_STAGE_PUBLISH]);
}

void bg_protect_where(char *buf, size_t len, const struct bg_sources *srcs,
		      const struct bg_protect_cover *c)
{
	const char *file = srcs && c->source < srcs->n ?
				   bg_list_name(srcs->v[c->source].path) : NULL;

	if (file && c->line)
		snprintf(buf, len, "at %s:%zu", file, c->line);
	else if (file)
		snprintf(buf, len, "in %s", file);
	else if (c->list[0])
		snprintf(buf, len, "in list %s", c->list);
	else
		buf[0] = 0;
}

void bg_print_protect(FILE *out, const struct bg_sources *srcs,
		      const struct bg_load_report *r)
{
	char line[1024], where[PATH_MAX + 32];
	size_t i;

	bg_protect_summary(line, sizeof(line), r->protect_kinds);
	fprintf(out, "protected set:    %s\n", line);
	if (r->protect_missing)
		fprintf(out, "protected set:    not written: the attachments were made "
			"by a bloomgate older than the set (detach and attach again)\n");
	for (i = 0; i < r->covers.n; i++) {
		bg_protect_where(where, sizeof(where), srcs, &r->covers.v[i]);
		bg_protect_cover_fmt(line, sizeof(line), &r->covers.v[i], where);
		fprintf(out, "protected:        %s\n", line);
	}
	if (r->covers.more)
		fprintf(out, "protected:        and %zu more entries over the protected set\n",
			r->covers.more);
}

/* Entries named per reason in a name's answer; the rest are counted
 * ("and N more"). Address answers name every entry. */
#define EXPLAIN_MAX 3

/* A line of text, bounded: check's answer stays one line. */
struct line {
	char buf[1024];
	size_t len;
};

static void add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->buf) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	l->len += n > 0 ? (size_t)n : 0;
	if (l->len >= sizeof(l->buf))
		l->len = sizeof(l->buf) - 1;
}

/* A list line for a report: quoted, at most 80 bytes, control bytes as
 * \xNN. */
static void quote_text(char *out, size_t outlen, const char *s)
{
	size_t o = 0, i;

	for (i = 0; s[i] && o + 5 < outlen; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == 80) {
			o += (size_t)snprintf(out + o, outlen - o, "...");
			break;
		}
		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = 0;
}

static void entries(struct line *l, const struct bg_explain_list *v, int name)
{
	char q[400];
	size_t i;

	for (i = 0; i < v->n; i++) {
		const struct bg_explain_entry *e = &v->v[i];

		/* line 0: the entry's list is known, not its line (an
		 * artifact's index names lists only) */
		if (!name && !e->line) {
			add(l, "%s%s in %s", i ? ", " : "", e->text, e->path);
			continue;
		}
		if (!name) {
			add(l, "%s%s at %s:%zu", i ? ", " : "", e->text, e->path,
			    e->line);
			continue;
		}
		if (i == EXPLAIN_MAX) {
			add(l, " and %zu more", v->n - EXPLAIN_MAX);
			break;
		}
		quote_text(q, sizeof(q), e->text);
		if (e->line)
			add(l, "%s'%s' at %s:%zu", i ? ", " : "", q, e->path, e->line);
		else
			add(l, "%s'%s' in %s", i ? ", " : "", q, e->path);
		if (e->parent)
			add(l, " as a subdomain of %s", e->parent);
	}
}

void bg_print_explanation(FILE *out, const char *arg,
			  const struct bg_explanation *x)
{
	int name = x->kind == BG_EXPLAIN_NAME;
	struct line blk = { .len = 0 }, alw = { .len = 0 };

	const char *conf = x->confirmed ? "confirmed; " : "";

	if (!x->listed) {
		fprintf(out, "%s: no match%s\n", arg,
			x->no_names ? " (the loaded filter holds no domain names)" :
			x->rejected ? " (Bloom positive, not listed: rejected by the exact stage)" :
				      "");
		return;
	}
	if (!x->known) {
		fprintf(out, "%s: %s (%s%s; the lists behind this filter are not known)\n",
			arg, x->allowed || x->protect ? "no match" : "match",
			x->protect ? "protected: " : "",
			x->protect ? x->protect_why : x->allowed ? "allowlisted" :
			x->confirmed ? "confirmed" : "maybe listed");
		return;
	}
	entries(&blk, &x->block, name);
	if (x->protect) {
		fprintf(out, "%s: no match (protected: %s%s%s)\n", arg, x->protect_why,
			x->block.n ? "; listed by " : "", x->block.n ? blk.buf : "");
	} else if (x->allowed) {
		entries(&alw, &x->allow, name);
		fprintf(out, "%s: no match (allowlisted by %s%s%s)\n", arg,
			x->allow.n ? alw.buf : "the allowlist",
			!x->block.n ? "" : name ? "; allow beats block: listed by " :
						  "; listed by ",
			x->block.n ? blk.buf : "");
	} else if (x->block.n) {
		fprintf(out, "%s: match (%slisted by %s)\n", arg, conf, blk.buf);
	} else if (x->unreadable) {
		fprintf(out, "%s: match (%s: %s cannot be read now)\n", arg,
			x->confirmed ? "confirmed" : "maybe listed", x->unreadable);
	} else if (x->confirmed) {
		/* the stage holds the key: the recorded lists changed since */
		fprintf(out, "%s: match (confirmed; no entry of the recorded lists "
			"covers it now: changed since the load?)\n", arg);
	} else {
		fprintf(out, "%s: match (probable false positive: no listed entry covers it)\n",
			arg);
	}
}

/* ---- Events ------------------------------------------------------------- */

double bg_event_unix_time(__u64 ts_ns)
{
	double now_mono = bg_mono();

	return bg_wall() - (now_mono - (double)ts_ns / 1e9);
}

int bg_print_event_json(FILE *out, const void *data, size_t size)
{
	const struct bg_event *e = data;
	char addr[INET6_ADDRSTRLEN] = "?", ifn[IF_NAMESIZE] = "?";
	char name[BG_NAME_TEXT_MAX];
	struct json_object *o;
	int ret = 0;

	if (size < sizeof(*e))
		return -EINVAL;
	o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	inet_ntop(e->family == BG_KEY_IPV4 ? AF_INET : AF_INET6, e->addr, addr,
		  sizeof(addr));
	if (!if_indextoname(e->ifindex, ifn))
		snprintf(ifn, sizeof(ifn), "?");
	json_object_object_add(o, "time", json_object_new_double(bg_event_unix_time(e->ts_ns)));
	json_object_object_add(o, "verdict", json_object_new_string(
		e->verdict == BG_VERDICT_FLAG ? "flag" : "drop"));
	json_object_object_add(o, "ifindex", json_object_new_int((int)e->ifindex));
	json_object_object_add(o, "interface", json_object_new_string(ifn));
	if (e->which == BG_EVENT_NAME) {
		const struct bg_name_event *ne = data;

		if (size < sizeof(*ne) ||
		    bg_name_from_wire(ne->name, sizeof(ne->name), name, sizeof(name)) < 0)
			snprintf(name, sizeof(name), "(malformed name)");
		json_object_object_add(o, "name", json_object_new_string(name));
		json_object_object_add(o, "client", json_object_new_string(addr));
	} else {
		json_object_object_add(o, "match", json_object_new_string(
			e->which == BG_MATCH_SRC ? "src" : "dst"));
		json_object_object_add(o, "addr", json_object_new_string(addr));
	}
	if (fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) < 0)
		ret = -EIO;
	fflush(out);
	json_object_put(o);
	return ret;
}

/* Wall-clock time of a bpf_ktime_get_ns() stamp (CLOCK_MONOTONIC). */
static void fmt_event_time(char *buf, size_t len, __u64 ts_ns)
{
	long long ns, now_mono = (long long)bg_mono_ns();
	time_t sec;
	struct tm tm;
	char t[32];

	ns = (long long)bg_wall_ns() - (now_mono - (long long)ts_ns);
	sec = (time_t)(ns / 1000000000LL);
	localtime_r(&sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03lld", t, (ns % 1000000000LL) / 1000000LL);
}

/* a name's text, an address, an interface and a time, with the words */
_Static_assert(BG_EVENT_TEXT_MAX >= BG_NAME_TEXT_MAX + INET6_ADDRSTRLEN + IF_NAMESIZE + 48 + 32,
	       "an event's line fits BG_EVENT_TEXT_MAX");

int bg_event_text(char *buf, size_t len, const void *data, size_t size,
		  const char *ifname)
{
	const struct bg_event *e = data;
	char addr[INET6_ADDRSTRLEN] = "?", ifn[IF_NAMESIZE] = "?";
	int n;

	if (size < sizeof(*e))
		return -EINVAL;
	inet_ntop(e->family == BG_KEY_IPV4 ? AF_INET : AF_INET6, e->addr, addr,
		  sizeof(addr));
	if (!ifname) {
		if_indextoname(e->ifindex, ifn);
		ifname = ifn;
	}
	if (e->which == BG_EVENT_NAME) {
		const struct bg_name_event *ne = data;
		char name[BG_NAME_TEXT_MAX], when[48];

		if (size < sizeof(*ne) ||
		    bg_name_from_wire(ne->name, sizeof(ne->name), name, sizeof(name)) < 0)
			snprintf(name, sizeof(name), "(malformed name)");
		fmt_event_time(when, sizeof(when), e->ts_ns);
		n = snprintf(buf, len, "%s name %s from %s on %s at %s\n",
			     e->verdict == BG_VERDICT_FLAG ? "flag" : "drop", name, addr,
			     ifname, when);
	} else {
		n = snprintf(buf, len, "%s %s %s on %s\n",
			     e->verdict == BG_VERDICT_FLAG ? "flag" : "drop",
			     e->which == BG_MATCH_SRC ? "src" : "dst", addr, ifname);
	}
	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

int bg_print_event_text(FILE *out, const void *data, size_t size)
{
	char line[BG_EVENT_TEXT_MAX];
	int n = bg_event_text(line, sizeof(line), data, size, NULL);

	if (n < 0)
		return n;
	fwrite(line, 1, (size_t)n, out);
	return ferror(out) ? -EIO : 0;
}
