// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's config: the tables of the keys each section accepts, and
 * their description for bloomgate.yaml(5) (bg_config_keys()).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "agent/config.h"
#include "agent/config_priv.h"
#include "agent/fleetdb.h"
#include "bloomgate/dns.h" /* BG_DNS_PORT */
#include "core/grow.h"
#include "core/url.h"
#include "core/filter.h"
#include "core/format.h"
#include "core/io.h"
#include "core/opts.h" /* bg_opt_size */
#include "core/prepare.h" /* BG_LOAD_ENTRIES_MAX */
#include "core/protect.h"

static void fmt_duration(char *buf, size_t len, double s);
static void def_fpr(char *buf, size_t len)
{
	snprintf(buf, len, "%g, or %g with confirm: false", bg_fpr_default(1),
		 bg_fpr_default(0));
}

static void def_refresh(char *buf, size_t len)
{
	char d[32];

	fmt_duration(d, sizeof(d), BG_CFG_URL_REFRESH);
	snprintf(buf, len, "%s for a url; none for a path (watched)", d);
}

static void def_cs_every(char *buf, size_t len)
{
	fmt_duration(buf, len, BG_CFG_CROWDSEC_EVERY);
}

static void def_grow(char *buf, size_t len)
{
	snprintf(buf, len, "true without capacity, false with it");
}

static void def_gateway(char *buf, size_t len)
{
	snprintf(buf, len, "the host name (what a name cannot hold as _)");
}

/* The line of each key of a map, by its index in the table; 0: absent. */


#define R_OFF(m) offsetof(struct bg_config, m)
const struct field cfg_root_fields[R__COUNT + 1] = {
	[R_INTERFACES] = { .key = "interfaces",
		.help = "the interfaces to attach to, each a map (interfaces[] below); none: the agent only feeds a bloomgate attached by other means", .type = F_SECTION },
	[R_FPR] = { .key = "fpr", .def = def_fpr,
		.help = "the Bloom part's target false-positive rate, per address or query (as load --fpr)", .type = F_NUMBER, .off = R_OFF(fpr),
		    .min = BG_FPR_MIN, .max = BG_FPR_MAX },
	[R_CONFIRM] = { .key = "confirm",
		.help = "the exact stage, which confirms every Bloom positive (as load --confirm); false: off", .type = F_BOOL, .off = R_OFF(confirm) },
	[R_STATE_DIR] = { .key = "state_dir",
		.help = "where the agent keeps the last good copy of every list, their provenance indexes and its store (an absolute path)", .type = F_STR,
			  .off = R_OFF(state_dir), .check = C_ABSPATH },
	[R_METRICS] = { .key = "metrics",
		.help = "HOST:PORT of the Prometheus endpoint (GET /metrics): an IPv4 address, [IPv6] or localhost, port 1..65535; null or absent: none", .type = F_STR, .off = R_OFF(metrics),
			.check = C_HOSTPORT, .flags = FF_NULLABLE },
	[R_EVENTS] = { .key = "events",
		.help = "flag events as JSON lines: - for stdout, or an absolute file path; null or absent: none", .type = F_STR, .off = R_OFF(events),
		       .check = C_EVENTS, .flags = FF_NULLABLE },
	[R_DETACH] = { .key = "detach_on_stop",
		.help = "detach from the interfaces when the agent stops; false: the filter stays live (fail-static)", .type = F_BOOL,
		       .off = R_OFF(detach_on_stop) },
	/* An hour: longer is a typo for a refresh, not a debounce. */
	[R_DEBOUNCE] = { .key = "debounce",
		.help = "changes that arrive within this time are one rebuild", .type = F_DURATION,
			 .off = R_OFF(debounce), .min = 0, .max = 3600 },
	/* load's --max-list-bytes and --max-entries, for every rebuild */
	[R_MAX_LIST_BYTES] = { .key = "max_list_bytes",
		.help = "as load --max-list-bytes, for every rebuild: the largest list file read (the copies of URLs included)", .type = F_SIZE,
			       .off = R_OFF(max_list_bytes) },
	[R_MAX_ENTRIES] = { .key = "max_entries",
		.help = "as load --max-entries, for every rebuild", .type = F_COUNT,
			    .off = R_OFF(max_entries), .min = 1, .max = 1e15 },
	[R_PROTECT] = { .key = "protect",
		.help = "addresses and prefixes never dropped, whatever a list or decision says (as load --protect): added to the protected set (the attached interfaces' addresses, the default routes' next hops, the resolvers of resolv.conf), which cannot be turned off", .type = F_PROTECT,
			.off = R_OFF(protect) },
	[R_LISTS] = { .key = "lists",
		.help = "the lists the filter is built from, each a map (lists[] below); excludes artifact and fleet", .type = F_SECTION },
	[R_ARTIFACT] = { .key = "artifact",
		.help = "a filter built elsewhere (bloomgate build), verified and swapped in as it is (artifact below); excludes lists and fleet", .type = F_SECTION },
	[R_FLEET] = { .key = "fleet",
		.help = "this gateway is one of a fleet: it loads the generations bloomgate publish stores (fleet below); excludes lists and artifact", .type = F_SECTION },
};


#define I_OFF(m) offsetof(struct bg_cfg_iface, m)
const struct field cfg_iface_fields[I__COUNT + 1] = {
	[I_NAME] = { .key = "name",
		.help = "the interface's name (required)", .type = F_STR, .off = I_OFF(name),
		     .check = C_IFNAME },
	[I_MODE] = { .key = "mode",
		.help = "as attach --mode", .type = F_ENUM, .off = I_OFF(attach.mode),
		     .values = bg_mode_values },
	[I_MATCH] = { .key = "match",
		.help = "as attach --match: the address probed", .type = F_ENUM,
		      .off = I_OFF(attach.match), .values = bg_match_values },
	[I_ACTION] = { .key = "action",
		.help = "as attach --action: what a listed address gets", .type = F_ENUM,
		       .off = I_OFF(attach.action), .values = bg_action_values },
	[I_DNS_ACTION] = { .key = "dns_action",
		.help = "as attach --dns-action: what a DNS query for a listed name gets", .type = F_ENUM,
			   .off = I_OFF(attach.dns_action),
			   .values = bg_dns_action_values },
	[I_DNS_PORTS] = { .key = "dns_ports",
		.help = "the UDP ports judged as DNS, a list of up to " BG_TEXTIFY(BG_DNS_PORTS_MAX) " (as attach --dns-port)", .type = F_PORTS,
			  .off = I_OFF(attach.dns_ports) },
	[I_CAPACITY] = { .key = "capacity",
		.help = "as attach --capacity: the Bloom keys the filter map holds, one fixed size (with grow: true, the size it starts at); absent: the capacity grows", .type = F_COUNT,
			 .off = I_OFF(attach.capacity), .min = 1,
			 .max = BG_CAPACITY_MAX },
	[I_GROW] = { .key = "grow", .def = def_grow,
		.help = "a fixed-size filter map (lookups inlined) whose capacity follows the filter, as attach's default; false without capacity: a map of any size, as attach --any-size", .type = F_BOOL, .off = I_OFF(attach.grow) },
	[I_CHAIN] = { .key = "chain",
		.help = "as attach --chain: bloomgate chain can run another XDP program after bloomgate", .type = F_BOOL, .off = I_OFF(attach.chain) },
	[I_UNPARSED] = { .key = "unparsed",
		.help = "as attach --unparsed: what a frame with no address to judge gets", .type = F_ENUM,
			 .off = I_OFF(attach.unparsed),
			 .values = bg_unparsed_values },
};


#define L_OFF(m) offsetof(struct bg_cfg_list, m)
const struct field cfg_list_fields[L__COUNT + 1] = {
	[L_NAME] = { .key = "name",
		.help = "the list's name, also its copy's file name in state_dir (required): 1 to " BG_TEXTIFY(BG_CFG_NAME_MAX) " of A-Z a-z 0-9 . _ -, not starting with .", .type = F_STR, .off = L_OFF(list.name),
		     .check = C_LISTNAME },
	[L_URL] = { .key = "url",
		.help = "an http:// or https:// URL, fetched every refresh with a conditional GET; a url or a path, not both", .type = F_STR, .off = L_OFF(list.url),
		    .check = C_URL },
	[L_PATH] = { .key = "path",
		.help = "an absolute path, watched and re-read when it changes; a url or a path, not both", .type = F_STR, .off = L_OFF(list.path),
		     .check = C_ABSPATH },
	[L_FORMAT] = { .key = "format",
		.help = "as load --format; detected when absent (auto)", .type = F_FORMAT, .off = L_OFF(list.format) },
	[L_SUBDOMAINS] = { .key = "subdomains",
		.help = "the names listed block their subdomains too (as load --subdomains)", .type = F_FLAG,
			   .off = L_OFF(list.subdomains) },
	[L_ALLOW] = { .key = "allow",
		.help = "an allowlist: what it lists always passes (as load --allow)", .type = F_FLAG, .off = L_OFF(list.allow) },
	/* Bounds that catch a unit mistaken (1d meant, 1000d written). */
	[L_REFRESH] = { .key = "refresh", .def = def_refresh,
		.help = "how often a URL is fetched (jittered); a path is watched and needs none", .type = F_DURATION,
			.off = L_OFF(refresh), .min = 0, .max = 30 * 86400 },
	[L_TIMEOUT] = { .key = "timeout",
		.help = "the time limit of a fetch (a URL only; a crowdsec: source's pull: 120s unless given, its local API takes some 30 s to answer a million decisions)", .type = F_DURATION,
			.off = L_OFF(timeout), .min = 0, .max = 86400,
			.flags = FF_MIN_OPEN },
	[L_MAX_BYTES] = { .key = "max_bytes",
		.help = "the largest copy fetched (a crowdsec: source: the largest answer, some 250 bytes a decision)", .type = F_SIZE,
			  .off = L_OFF(max_bytes) },
	[L_MAX_SHRINK] = { .key = "max_shrink",
		.help = "a share from 0 to 1 (or a percentage): a fetched copy with fewer than (1 - max_shrink) times the last good copy's entries is refused and the last good copy kept; 1: no guard", .type = F_SHARE,
			   .off = L_OFF(max_shrink) },
	/* per list, not global: the opt-in is trust in one list's
	 * content, and a fetched list stays guarded beside a local one */
	[L_ALLOW_WIDE] = { .key = "allow_wide",
		.help = "as load --allow-wide, for this list only (an address list)", .type = F_FLAG,
			   .off = L_OFF(list.allow_wide) },
	/* a CrowdSec local API's decisions (agent/crowdsec.h) */
	[L_CROWDSEC] = { .key = "crowdsec",
		.help = "the URL of a CrowdSec local API: its ban decisions are this list's addresses (then url, path, format, subdomains, allow, refresh, max_shrink and allow_wide do not apply)", .type = F_STR, .off = L_OFF(list.url),
			 .check = C_URL },
	[L_API_KEY_FILE] = { .key = "api_key_file",
		.help = "crowdsec: the absolute path of the file holding the bouncer's key (cscli bouncers add NAME), read at each pull (required with crowdsec)", .type = F_STR,
			     .off = L_OFF(api_key_file), .check = C_ABSPATH },
	[L_UPDATE_FREQ] = { .key = "update_frequency", .def = def_cs_every,
		.help = "crowdsec: how often the decisions are pulled", .type = F_DURATION,
			    .off = L_OFF(refresh), .min = 0, .max = 86400,
			    .flags = FF_MIN_OPEN },
	[L_ORIGINS] = { .key = "origins",
		.help = "crowdsec: only the decisions of these origins (a name or a list of names), as the firewall bouncer's filter", .type = F_WORDS, .off = L_OFF(cs_origins) },
	[L_SCOPES] = { .key = "scopes",
		.help = "crowdsec: the scopes pulled, ip and range (absent: both)", .type = F_WORDS, .off = L_OFF(cs_scopes) },
	[L_SCEN_IN] = { .key = "scenarios_containing",
		.help = "crowdsec: only the decisions whose scenario contains one of these", .type = F_WORDS,
			.off = L_OFF(cs_scen_in) },
	[L_SCEN_OUT] = { .key = "scenarios_not_containing",
		.help = "crowdsec: only the decisions whose scenario contains none of these", .type = F_WORDS,
			 .off = L_OFF(cs_scen_out) },
	/* what a Range decision may cut off: see BG_CFG_CS_RANGE4 */
	[L_MAX_RANGE4] = { .key = "max_range_v4",
		.help = "crowdsec: the widest IPv4 Range decision enforced, a prefix length: a wider one is refused and counted (reason too_wide); the default /16 is a large hosting provider's block, wider is an ISP's or a region's (CrowdSec itself takes a /8)", .type = F_COUNT,
			   .off = L_OFF(cs_max_range4), .min = 8, .max = 32 },
	[L_MAX_RANGE6] = { .key = "max_range_v6",
		.help = "crowdsec: the widest IPv6 Range decision enforced, a prefix length (too_wide past it); the default /32 is the usual allocation of a whole ISP, a site's is a /48", .type = F_COUNT,
			   .off = L_OFF(cs_max_range6), .min = 16, .max = 128 },
};

/* artifact: one built filter, fetched as a list is (url or path) */
const struct field cfg_artifact_fields[A__COUNT + 1] = {
	[A_URL] = { .key = "url",
		.help = "the artifact's http:// or https:// URL; a url or a path, not both", .type = F_STR, .off = L_OFF(list.url),
		    .check = C_URL },
	[A_PATH] = { .key = "path",
		.help = "the artifact's absolute path, watched; a url or a path, not both", .type = F_STR, .off = L_OFF(list.path),
		     .check = C_ABSPATH },
	[A_REFRESH] = { .key = "refresh", .def = def_refresh,
		.help = "how often the URL is fetched", .type = F_DURATION,
			.off = L_OFF(refresh), .min = 0, .max = 86400 * 366 },
	[A_TIMEOUT] = { .key = "timeout",
		.help = "the time limit of a fetch (a URL only)", .type = F_DURATION,
			.off = L_OFF(timeout), .min = 0, .max = 86400,
			.flags = FF_MIN_OPEN },
	[A_MAX_BYTES] = { .key = "max_bytes",
		.help = "the largest artifact fetched", .type = F_SIZE,
			  .off = L_OFF(max_bytes) },
	{ NULL },
};

/* fleet: a gateway of the fleet store */
#define FL_OFF(m) offsetof(struct bg_cfg_fleet, m)
const struct field cfg_fleet_fields[FL__COUNT + 1] = {
	[FL_DB] = { .key = "db",
		.help = "the fleet store: a postgresql:// URL or a libpq key=value connection string (required)", .type = F_STR, .off = FL_OFF(db), .check = C_DB },
	[FL_GATEWAY] = { .key = "gateway", .def = def_gateway,
		.help = "this gateway's name in the store: 1 to " BG_TEXTIFY(BG_CFG_NAME_MAX) " of A-Z a-z 0-9 . _ -", .type = F_STR, .off = FL_OFF(gateway),
			 .check = C_LISTNAME },
	[FL_POLL] = { .key = "poll",
		.help = "how often the store is polled for a new generation, besides its NOTIFY", .type = F_DURATION, .off = FL_OFF(poll),
		      .min = 0, .max = 86400, .flags = FF_MIN_OPEN },
	[FL_REPORT] = { .key = "report",
		.help = "how often this gateway reports its state to the store", .type = F_DURATION, .off = FL_OFF(report),
			.min = 0, .max = 86400, .flags = FF_MIN_OPEN },
	[FL_ALLOW_ROLLBACK] = { .key = "allow_rollback",
		.help = "take the store's newest generation when it is older than the one applied here (its rows deleted, the store restored from a backup); false: refused and logged, the applied one stays live", .type = F_BOOL, .off = FL_OFF(allow_rollback) },
	{ NULL },
};


/* ---- the keys, described (bloomgate.yaml(5)) ---- */

/* "1h", "30s", "500ms": what the config would say, bg_config_duration()
 * reads it back. */
static void fmt_duration(char *buf, size_t len, double s)
{
	static const struct {
		const char *unit;
		double secs;
	} units[] = { { "d", 86400 }, { "h", 3600 }, { "m", 60 } };
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (s >= units[i].secs && fmod(s, units[i].secs) == 0) {
			snprintf(buf, len, "%g%s", s / units[i].secs, units[i].unit);
			return;
		}
	if (s > 0 && s < 1)
		snprintf(buf, len, "%gms", s * 1000);
	else
		snprintf(buf, len, "%gs", s);
}

/* "512M", "4G": as a size is written (bg_opt_size() reads it back). */
static void fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char units[] = "GMK";
	int i;

	for (i = 0; units[i]; i++) {
		unsigned int shift = 30 - 10 * (unsigned int)i;

		if (v && !(v & ((1ull << shift) - 1))) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(v >> shift),
				 units[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

static const char *type_name(const struct field *f)
{
	switch (f->type) {
	case F_SECTION:
		return "section";
	case F_BOOL:
	case F_FLAG:
		return "boolean";
	case F_NUMBER:
		return "number";
	case F_DURATION:
		return "duration";
	case F_SHARE:
		return "share";
	case F_SIZE:
		return "size";
	case F_COUNT:
		return "count";
	case F_ENUM:
	case F_FORMAT:
		return "one of";
	case F_PORTS:
		return "ports";
	case F_WORDS:
		return "names";
	case F_PROTECT:
		return "addresses";
	case F_STR:
		switch (f->check) {
		case C_ABSPATH:
			return "path";
		case C_URL:
			return "URL";
		case C_LISTNAME:
			return "name";
		case C_IFNAME:
			return "interface";
		case C_HOSTPORT:
			return "HOST:PORT";
		case C_EVENTS:
			return "path or -";
		case C_DB:
			return "connection string";
		}
	}
	return "?";
}

/* The value at f->off of base, as the config writes it; "" for none. */
static void fmt_value(const struct field *f, const void *base, char *buf,
		      size_t len)
{
	const char *at = (const char *)base + f->off;
	const __u16 *ports;
	double d;
	uint64_t u;

	buf[0] = '\0';
	switch (f->type) {
	case F_SECTION:
		break;
	case F_BOOL:
		snprintf(buf, len, "%s", *(const int *)at ? "true" : "false");
		break;
	case F_FLAG:
		snprintf(buf, len, "%s", *(const uint8_t *)at ? "true" : "false");
		break;
	case F_NUMBER:
	case F_SHARE:
	case F_DURATION:
		d = *(const double *)at;
		/* out of range: "not given", as the help of the options has it */
		if (f->type != F_SHARE && (d < f->min || d > f->max ||
					   (f->flags & FF_MIN_OPEN && d <= f->min)))
			break;
		if (f->type == F_DURATION)
			fmt_duration(buf, len, d);
		else
			snprintf(buf, len, "%g", d);
		break;
	case F_SIZE:
		u = *(const uint64_t *)at;
		if (u)
			fmt_size(buf, len, u);
		break;
	case F_COUNT:
		u = *(const uint64_t *)at;
		if ((double)u >= f->min && (double)u <= f->max)
			snprintf(buf, len, "%llu", (unsigned long long)u);
		break;
	case F_ENUM:
		snprintf(buf, len, "%s", bg_enum_name(f->values, *(const int *)at));
		break;
	case F_FORMAT:
		snprintf(buf, len, "%s", bg_format_name(*(const uint8_t *)at));
		break;
	case F_PORTS:
		ports = (const __u16 *)at;
		if (!ports[0])
			snprintf(buf, len, "[%d]", BG_DNS_PORT);
		break;
	case F_STR:
	case F_WORDS:
		if (*(char *const *)at)
			snprintf(buf, len, "%s", *(char *const *)at);
		break;
	case F_PROTECT:
		break;
	}
}

static void describe(const struct field *f, const char *section, int seq,
		     const void *defaults,
		     void (*fn)(void *ctx, const struct bg_config_key *k), void *ctx)
{
	struct bg_config_key k;
	size_t n;
	int i;

	for (; f->key; f++) {
		memset(&k, 0, sizeof(k));
		k.section = section;
		k.seq = seq;
		k.key = f->key;
		k.type = type_name(f);
		k.help = f->help;
		k.values = f->type == F_ENUM ? f->values : NULL;
		if (f->type == F_ENUM)
			cfg_enum_names(f->values, k.names, sizeof(k.names));
		if (f->type == F_FORMAT)
			for (i = 0, n = 0; i < BG_FMT__COUNT && n < sizeof(k.names); i++)
				n += snprintf(k.names + n, sizeof(k.names) - n, "%s%s",
					      i ? ", " : "", bg_format_name(i));
		switch (f->type) {
		case F_NUMBER:
		case F_DURATION:
			cfg_num_range(f, k.range, sizeof(k.range));
			break;
		case F_COUNT:
			snprintf(k.range, sizeof(k.range), "%g..%g", f->min, f->max);
			break;
		case F_SHARE:
			snprintf(k.range, sizeof(k.range), "0..1, or 0%%..100%%");
			break;
		case F_SIZE:
			snprintf(k.range, sizeof(k.range), "above 0");
			break;
		case F_PORTS:
			snprintf(k.range, sizeof(k.range), "1..65535, up to %d",
				 BG_DNS_PORTS_MAX);
			break;
		default:
			break;
		}
		if (f->def)
			f->def(k.def, sizeof(k.def));
		else
			fmt_value(f, defaults, k.def, sizeof(k.def));
		fn(ctx, &k);
	}
}

int bg_config_keys(void (*fn)(void *ctx, const struct bg_config_key *k),
		   void *ctx)
{
	struct bg_config c = { 0 };
	struct bg_cfg_iface iface = { 0 };
	struct bg_cfg_list list = { 0 }, art = { 0 };
	struct bg_cfg_fleet fleet = { 0 };

	if (cfg_root_defaults(&c))
		return -ENOMEM;
	cfg_iface_defaults(&iface);
	cfg_list_defaults(&list);
	cfg_artifact_defaults(&art);
	cfg_fleet_defaults(&fleet);
	describe(cfg_root_fields, "", 0, &c, fn, ctx);
	describe(cfg_iface_fields, "interfaces", 1, &iface, fn, ctx);
	describe(cfg_list_fields, "lists", 1, &list, fn, ctx);
	describe(cfg_artifact_fields, "artifact", 0, &art, fn, ctx);
	describe(cfg_fleet_fields, "fleet", 0, &fleet, fn, ctx);
	bg_config_free(&c);
	return 0;
}

