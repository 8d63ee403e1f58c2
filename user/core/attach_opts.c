// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Attachment settings and their names (user/core/attach_opts.h). */
#include <stdio.h>
#include <string.h>

#include "bloomgate/dns.h"
#include "core/attach_opts.h"
#include "core/filter.h"
#include "core/units.h"

const struct bg_attach_opts bg_attach_defaults = {
	.mode = BG_MODE_NATIVE, .match = BG_MATCH_DST, .action = BG_ACTION_DROP,
	.dns_action = BG_DNS_ACTION_NXDOMAIN, .unparsed = BG_UNPARSED_PASS,
};

const struct bg_opt_enum bg_mode_values[] = {
	{ "native", BG_MODE_NATIVE, "driver XDP" },
	{ "skb", BG_MODE_SKB, "generic XDP, for drivers without native XDP" },
	{ NULL, 0, NULL },
};

const struct bg_opt_enum bg_match_values[] = {
	{ "dst", BG_MATCH_DST, "the destination address" },
	{ "src", BG_MATCH_SRC, "the source address" },
	{ "both", BG_MATCH_BOTH, "either" },
	{ NULL, 0, NULL },
};

const struct bg_opt_enum bg_action_values[] = {
	{ "drop", BG_ACTION_DROP, "drop the packet" },
	{ "flag", BG_ACTION_FLAG, "pass, count, and send an event (bloomgate events)" },
	{ NULL, 0, NULL },
};

/* In the order the synopsis has always listed them. */
const struct bg_opt_enum bg_dns_action_values[] = {
	{ "drop", BG_DNS_ACTION_DROP, "drop the query" },
	{ "flag", BG_DNS_ACTION_FLAG, "pass, count, and send an event with the name" },
	{ "nxdomain", BG_DNS_ACTION_NXDOMAIN, "answer NXDOMAIN from XDP" },
	{ "refused", BG_DNS_ACTION_REFUSED, "answer REFUSED from XDP" },
	{ NULL, 0, NULL },
};

const struct bg_opt_enum bg_unparsed_values[] = {
	{ "pass", BG_UNPARSED_PASS, "pass it, counted under its malformed reason" },
	{ "drop", BG_UNPARSED_DROP, "drop it, counted in unparsed_dropped too" },
	{ NULL, 0, NULL },
};

const char *bg_enum_name(const struct bg_opt_enum *values, int value)
{
	for (; values->name; values++)
		if (values->value == value)
			return values->name;
	return "?";
}

/* ---- as status and attach print them ---------------------------------- */

const char *bg_match_name(int m)
{
	return bg_enum_name(bg_match_values, m);
}

const char *bg_action_name(int a)
{
	return bg_enum_name(bg_action_values, a);
}

const char *bg_dns_action_name(int a)
{
	return bg_enum_name(bg_dns_action_values, a);
}

/* "native" or "skb": the mode of a record, less its flags (abi.h). */
const char *bg_rec_mode_name(const struct bg_attach_rec *r)
{
	return bg_enum_name(bg_mode_values, r->mode & BG_ATTACH_MODE_MASK);
}

/* "pass" or "drop": a record's policy for unparsed frames; 0 in records
 * written before the flag existed, which is pass. */
const char *bg_rec_unparsed_name(const struct bg_attach_rec *r)
{
	return bg_enum_name(bg_unparsed_values,
			    r->mode & BG_ATTACH_F_UNPARSED_DROP ? BG_UNPARSED_DROP :
								  BG_UNPARSED_PASS);
}

/* "53" or "53,5353": the ports in use (0 = unused), into buf. */
void bg_fmt_ports(char *buf, size_t len, const __u16 *ports)
{
	size_t o = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < BG_DNS_PORTS_MAX; i++)
		if (ports[i] && o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%u", o ? "," : "",
					      ports[i]);
	if (!o)
		snprintf(buf, len, "none");
}

/* "any size", or "16000 keys, 1.86 MiB": a filter map capacity of elems
 * elements (bg_attach_rec.capacity), in the keys it holds at the default
 * false-positive rate. */
void bg_fmt_capacity(char *buf, size_t len, __u32 elems)
{
	char b[32];

	if (!elems) {
		snprintf(buf, len, "any size");
		return;
	}
	bg_fmt_bytes(b, sizeof(b), (double)elems * BG_FILTER_VALUE_SIZE);
	snprintf(buf, len, "%llu keys, %s",
		 (unsigned long long)bg_filter_capacity_keys(elems), b);
}

__u32 bg_capacity_grown(const struct bg_filter_params *p)
{
	/* the plan's own tables with headroom, not what its keys would take
	 * at the defaults: a filter without the exact stage (load --confirm
	 * off) needs about a third of that and gets no more than it needs */
	uint64_t used = bg_filter_used(p);
	uint64_t c = used * BG_CAPACITY_GROW_HEADROOM4 / 4 + 1;
	__u32 least = bg_filter_capacity_elems(BG_CAPACITY_GROW_MIN);

	if (c < least)
		c = least;
	if (c > UINT32_MAX)
		c = used > p->nelems ? used : p->nelems;
	return (__u32)c > p->nelems ? (__u32)c : p->nelems;
}

int bg_capacity_regrow(const struct bg_filter_params *p, __u32 elems)
{
	return p->nelems > elems ||
	       (uint64_t)bg_capacity_grown(p) * BG_CAPACITY_SHRINK_FACTOR < elems;
}

/* The ports as set: none given is BG_DNS_PORT alone. */
static void ports_of(const struct bg_attach_opts *o, char *buf, size_t len)
{
	__u16 p[BG_DNS_PORTS_MAX] = { BG_DNS_PORT };
	size_t i;

	for (i = 0; i < BG_DNS_PORTS_MAX; i++)
		if (o->dns_ports[i])
			break;
	bg_fmt_ports(buf, len, i < BG_DNS_PORTS_MAX ? o->dns_ports : p);
}

/* Appends "what a -> b" to out (", " between) when a and b differ. */
static int diff_one(char *out, size_t len, const char *what, const char *a,
		    const char *b)
{
	size_t o;

	if (!strcmp(a, b))
		return 0;
	if (out && (o = strlen(out)) < len)
		snprintf(out + o, len - o, "%s%s %s -> %s", o ? ", " : "", what, a, b);
	return 1;
}

int bg_attach_opts_diff(const struct bg_attach_opts *a,
			const struct bg_attach_opts *b, char *out, size_t len)
{
	char pa[64], pb[64];
	int d = 0;

	if (out && len)
		out[0] = 0;
	ports_of(a, pa, sizeof(pa));
	ports_of(b, pb, sizeof(pb));
	d |= diff_one(out, len, "match", bg_match_name(a->match), bg_match_name(b->match));
	d |= diff_one(out, len, "action", bg_action_name(a->action),
		      bg_action_name(b->action));
	d |= diff_one(out, len, "dns-action",
		      bg_dns_action_name(a->dns_action ? a->dns_action : BG_DNS_ACTION_NXDOMAIN),
		      bg_dns_action_name(b->dns_action ? b->dns_action : BG_DNS_ACTION_NXDOMAIN));
	d |= diff_one(out, len, "dns-ports", pa, pb);
	d |= diff_one(out, len, "unparsed", bg_enum_name(bg_unparsed_values, a->unparsed),
		      bg_enum_name(bg_unparsed_values, b->unparsed));
	d |= diff_one(out, len, "chain", a->chain ? "on" : "off", b->chain ? "on" : "off");
	return d;
}
