// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Attachment settings and their names (user/core/attach_opts.h). */
#include "core/attach_opts.h"

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
