// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate attach, bloomgate detach.
 */
#include <errno.h>
#include <string.h>

#include "bloomgate/dns.h"
#include "core/filter.h"

#include "cli/cli.h"

/* ---- attach / detach ---------------------------------------------------- */

struct attach_args {
	const char *ifname;
	int mode, match, action, dns_action, unparsed;
	__u16 ports[BG_DNS_PORTS_MAX];
	int nports;
	unsigned long long capacity;
	int grow, chain, any_size;
};

static const struct attach_args attach_defaults = {
	.mode = BG_MODE_NATIVE, .match = BG_MATCH_DST, .action = BG_ACTION_DROP,
	.dns_action = BG_DNS_ACTION_NXDOMAIN, .unparsed = BG_UNPARSED_PASS,
};

/* A --dns-port: in range already (the table), not given twice. */
static int attach_port(void *ctx, const struct bg_opt *o,
		       const struct bg_optval *v, char *err, size_t errlen)
{
	struct attach_args *a = ctx;
	int i;

	for (i = 0; i < a->nports; i++) {
		if (a->ports[i] == v->u) {
			snprintf(err, errlen, "--%s: %llu given twice", o->name, v->u);
			return -EINVAL;
		}
	}
	/* the table allows BG_DNS_PORTS_MAX: cannot overflow */
	a->ports[a->nports++] = (__u16)v->u;
	return 0;
}

static const struct bg_opt attach_opts[] = {
	{ .name = "mode", .type = BG_OPT_ENUM, .values = bg_mode_values,
	  .help = "how the program is attached",
	  .off = offsetof(struct attach_args, mode) },
	{ .name = "match", .type = BG_OPT_ENUM, .values = bg_match_values,
	  .help = "the address looked up",
	  .off = offsetof(struct attach_args, match) },
	{ .name = "action", .type = BG_OPT_ENUM, .values = bg_action_values,
	  .help = "on a listed address",
	  .off = offsetof(struct attach_args, action) },
	{ .name = "dns-action", .type = BG_OPT_ENUM, .values = bg_dns_action_values,
	  .help = "on a DNS query (UDP to a DNS port) for a listed name",
	  .off = offsetof(struct attach_args, dns_action) },
	{ .name = "dns-port", .type = BG_OPT_UINT, .metavar = "N",
	  .help = "UDP destination port judged as DNS; given ports replace 53",
	  .min = 1, .max = 65535, .max_count = BG_DNS_PORTS_MAX,
	  .set = attach_port },
	{ .name = "unparsed", .type = BG_OPT_ENUM, .values = bg_unparsed_values,
	  .help = "on a frame with no address to judge: cut or invalid "
		  "Ethernet/VLAN/IP headers, more than " BG_TEXTIFY(BG_VLAN_MAX)
		  " VLAN tags (ARP and other non-IP frames always pass)",
	  .off = offsetof(struct attach_args, unparsed) },
	{ .name = "capacity", .type = BG_OPT_UINT, .metavar = "KEYS",
	  .help = "a filter map of one fixed size, for KEYS Bloom keys at fpr "
		  BG_TEXTIFY(BG_FPR_DEFAULT_CONFIRM) " with the exact stage: a larger "
		  "list refused (with --grow: the size it starts at); without it "
		  "the capacity grows",
	  .min = 1, .max = (double)BG_CAPACITY_MAX,
	  .off = offsetof(struct attach_args, capacity) },
	{ .name = "chain", .type = BG_OPT_FLAG,
	  .help = "every packet passed goes on to a next XDP program, set with "
		  "`bloomgate chain` (a tail call: what it returns is the verdict)",
	  .off = offsetof(struct attach_args, chain) },
	{ .name = "grow", .type = BG_OPT_FLAG,
	  .help = "the default: a fixed-size filter map (lookups inlined) whose "
		  "capacity follows the filter: one that outgrows it (or would fit "
		  "it 4 times over) gets a map for 1.25 times its keys and a new "
		  "program, swapped in with no gap; it starts at --capacity, or "
		  "at " BG_TEXTIFY(BG_CAPACITY_GROW_MIN) " keys",
	  .off = offsetof(struct attach_args, grow) },
	{ .name = "any-size", .type = BG_OPT_FLAG,
	  .help = "a filter map of any size instead: never a new program, "
		  "but every lookup a helper call (not inlined)",
	  .off = offsetof(struct attach_args, any_size) },
	{ NULL },
};

static const struct bg_opt attach_pos = {
	.type = BG_OPT_IFNAME, .metavar = "IFACE", .help = "the interface",
	.off = offsetof(struct attach_args, ifname),
};

/* --any-size excludes a capacity; without either the capacity grows. */
static int attach_done(void *ctx, unsigned int npos, char *err, size_t errlen)
{
	struct attach_args *a = ctx;

	(void)npos;
	if (a->any_size && (a->capacity || a->grow)) {
		snprintf(err, errlen, "--any-size: not with --%s (a map of any size "
			 "has no capacity)", a->capacity ? "capacity" : "grow");
		return -EINVAL;
	}
	if (!a->any_size && !a->capacity)
		a->grow = 1;
	return 0;
}

const struct bg_cmd cli_attach_cmd = {
	.name = "attach",
	.summary = "Attaches the XDP filter to IFACE, through libxdp, alone on the\n"
		   "interface: libxdp's dispatcher, which would let other XDP\n"
		   "programs share it, does not load on every kernel (it fails on\n"
		   "Linux 6.18 with Debian 12's libxdp 1.3). To run another XDP\n"
		   "program after bloomgate, attach with --chain and name it with\n"
		   "bloomgate chain. Every attached interface shares one filter,\n"
		   "pinned under /sys/fs/bpf/bloomgate.",
	.opts = attach_opts, .pos = &attach_pos, .min_pos = 1, .max_pos = 1,
	.pos_first = 1, .defaults = &attach_defaults, .done = attach_done,
};

int cli_cmd_attach(int argc, char **argv)
{
	struct attach_args a = attach_defaults;
	struct bg_attach_opts o = { 0 };
	char err[256] = "", ports[64], cap[96];
	int ret;

	if ((ret = cli_parse_args(&cli_attach_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	if ((ret = cli_need_root()))
		return ret;
	o.mode = (enum bg_mode)a.mode;
	o.match = (enum bg_match)a.match;
	o.action = (enum bg_action)a.action;
	o.dns_action = (enum bg_dns_action)a.dns_action;
	o.unparsed = (enum bg_unparsed)a.unparsed;
	memcpy(o.dns_ports, a.ports, sizeof(o.dns_ports));
	if (!a.nports)
		o.dns_ports[0] = BG_DNS_PORT;
	o.capacity = a.capacity;
	o.grow = a.grow;
	o.chain = a.chain;
	if (bg_attach(a.ifname, &o, err, sizeof(err)))
		return cli_fail(1, "%s", err);
	bg_fmt_ports(ports, sizeof(ports), o.dns_ports);
	bg_fmt_capacity(cap, sizeof(cap),
		     o.capacity || o.grow ?
			     bg_filter_capacity_elems(o.capacity ? o.capacity :
								   BG_CAPACITY_GROW_MIN) : 0);
	printf("attached to %s (%s mode, match %s, action %s, dns-action %s, dns-ports %s, "
	       "unparsed %s, capacity %s%s%s)\n",
	       a.ifname, o.mode == BG_MODE_SKB ? "skb" : "native",
	       bg_match_name(o.match), bg_action_name(o.action),
	       bg_dns_action_name(o.dns_action), ports,
	       bg_enum_name(bg_unparsed_values, o.unparsed), cap,
	       o.grow ? ", growing" : "", o.chain ? ", chain" : "");
	return 0;
}

/* ---- chain ------------------------------------------------------------------ */

struct chain_args {
	const char *ifname, *prog;
	int none;
};

static int chain_done(void *ctx, unsigned int npos, char *err, size_t errlen)
{
	const struct chain_args *a = ctx;

	(void)npos;
	if (!a->prog == !a->none) {
		snprintf(err, errlen, "chain: %s", a->none ? "--prog or --none, not both" :
			 "missing --prog PROG (or --none)");
		return -EINVAL;
	}
	return 0;
}

static const struct bg_opt chain_opts[] = {
	{ .name = "prog", .type = BG_OPT_STRING, .metavar = "PROG",
	  .help = "the XDP program: its pinned path on bpffs (bpftool prog load "
		  "OBJ PATH) or id:N",
	  .off = offsetof(struct chain_args, prog) },
	{ .name = "none", .type = BG_OPT_FLAG,
	  .help = "empty the next slot: bloomgate's verdicts alone again",
	  .off = offsetof(struct chain_args, none) },
	{ NULL },
};

static const struct bg_opt chain_pos = {
	.type = BG_OPT_STRING, .metavar = "IFACE", .help = "the interface",
	.off = offsetof(struct chain_args, ifname),
};

const struct bg_cmd cli_chain_cmd = {
	.name = "chain",
	.summary = "Runs XDP program PROG after bloomgate on IFACE: every packet\n"
		   "bloomgate passes there goes on to PROG (a tail call), whose\n"
		   "verdict stands; the way to share an interface with another\n"
		   "XDP program. The attachment must be made with --chain; --none\n"
		   "empties the slot. status shows the chained program's id.",
	.opts = chain_opts, .pos = &chain_pos, .min_pos = 1, .max_pos = 1,
	.pos_first = 1, .done = chain_done,
};

int cli_cmd_chain(int argc, char **argv)
{
	struct chain_args a = { 0 };
	char err[512] = "";
	int ret;

	if ((ret = cli_parse_args(&cli_chain_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	if ((ret = cli_need_root()))
		return ret;
	ret = bg_attach_chain(a.ifname, a.none ? NULL : a.prog, err, sizeof(err));
	if (ret == -ENODEV)
		return cli_fail(EXIT_USAGE, "chain: %s", err);
	if (ret)
		return cli_fail(ret == -ENOENT && !strstr(err, ": ") ? EXIT_NOT_ATTACHED : 1,
				"%s", err);
	if (a.none)
		printf("%s: nothing chained after bloomgate\n", a.ifname);
	else
		printf("%s: %s runs after bloomgate\n", a.ifname, a.prog);
	return 0;
}

struct detach_args {
	const char *ifname;
	int all, gone;
};

static int detach_done(void *ctx, unsigned int npos, char *err, size_t errlen)
{
	const struct detach_args *a = ctx;

	(void)npos;
	if (!!a->ifname + a->all + a->gone != 1) {
		snprintf(err, errlen, "detach: %s", a->ifname || a->all || a->gone ?
			 "one of IFACE, --all and --gone" :
			 "missing IFACE (or --all, --gone)");
		return -EINVAL;
	}
	return 0;
}

static const struct bg_opt detach_opts[] = {
	{ .name = "all", .type = BG_OPT_FLAG,
	  .help = "every interface of this network namespace, also gone ones",
	  .off = offsetof(struct detach_args, all) },
	{ .name = "gone", .type = BG_OPT_FLAG,
	  .help = "the attachments whose interface no longer exists (status: "
		  "gone), in any network namespace",
	  .off = offsetof(struct detach_args, gone) },
	{ NULL },
};

/* A string, not BG_OPT_IFNAME: the name of a deleted interface gets
 * bg_detach()'s answer, which points at --gone when there are such. */
static const struct bg_opt detach_pos = {
	.type = BG_OPT_STRING, .metavar = "IFACE", .help = "the interface",
	.off = offsetof(struct detach_args, ifname),
};

const struct bg_cmd cli_detach_cmd = {
	.name = "detach",
	.summary = "Removes bloomgate's XDP program from IFACE, and the pin of\n"
		   "its DNS program array; after the last interface, removes\n"
		   "every pinned map too. --all detaches from every interface of\n"
		   "this network namespace, also ones that no longer exist.\n"
		   "--gone removes only the attachments whose interface was\n"
		   "deleted, one line each.",
	.opts = detach_opts, .pos = &detach_pos, .min_pos = 0, .max_pos = 1,
	.pos_first = 1, .done = detach_done,
};

/* detach --gone: one line per removed attachment. */
static void print_gone(void *ctx, const struct bg_attach_rec *r)
{
	(void)ctx;
	printf("removed: gone (ifindex %u, netns inode %u, prog id %u)\n",
	       r->ifindex, r->netns_ino, r->prog_id);
}

int cli_cmd_detach(int argc, char **argv)
{
	struct detach_args a = { 0 };
	char err[256] = "";
	int ret;

	if ((ret = cli_parse_args(&cli_detach_cmd, &argc, argv, &a)))
		return ret < 0 ? 0 : ret;
	if ((ret = cli_need_root()))
		return ret;
	if (a.gone) {
		ret = bg_detach_gone(print_gone, NULL, err, sizeof(err));
		if (ret < 0)
			return cli_fail(ret == -ENOENT ? EXIT_NOT_ATTACHED : 1, "%s", err);
		if (!ret)
			puts("no attachment is gone");
		return 0;
	}
	if (a.all)
		ret = bg_detach_all(err, sizeof(err));
	else
		ret = bg_detach(a.ifname, err, sizeof(err));
	if (ret == -ENODEV) /* a usage error, as attach's */
		return cli_fail(EXIT_USAGE, "detach: %s", err);
	if (ret)
		return cli_fail(ret == -ENOENT ? EXIT_NOT_ATTACHED : 1, "%s", err);
	printf("detached from %s\n", a.all ? "every interface" : a.ifname);
	return 0;
}
