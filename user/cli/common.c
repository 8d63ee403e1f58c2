// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the commands share: one-line errors, the root and state checks,
 * argument parsing, the names and text of attachment options.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>

#include "core/print.h"

#include "cli/cli.h"

#define EXIT_LIST 4

int cli_fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("bloomgate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

int cli_need_root(void)
{
	if (geteuid() != 0)
		return cli_fail(1, "must be run as root");
	return 0;
}

int cli_open_state(struct bg_state *st, int lock)
{
	int err = bg_state_open(st, lock);

	if (err == -ENOENT)
		return cli_fail(EXIT_NOT_ATTACHED,
			    "bloomgate is not attached to any interface "
			    "(run: bloomgate attach IFACE)");
	if (err)
		return cli_fail(1, "cannot open the pinned state in %s: %s",
			    bg_pin_dir(), strerror(-err));
	return 0;
}

const char *cli_match_name(int m)
{
	return bg_enum_name(bg_match_values, m);
}

const char *cli_action_name(int a)
{
	return bg_enum_name(bg_action_values, a);
}

const char *cli_dns_action_name(int a)
{
	return bg_enum_name(bg_dns_action_values, a);
}

/* "native" or "skb": the mode of a record, less its flags (abi.h). */
const char *cli_rec_mode_name(const struct bg_attach_rec *r)
{
	return bg_enum_name(bg_mode_values, r->mode & BG_ATTACH_MODE_MASK);
}

/* "pass" or "drop": a record's policy for unparsed frames; 0 in records
 * written before the flag existed, which is pass. */
const char *cli_rec_unparsed_name(const struct bg_attach_rec *r)
{
	return bg_enum_name(bg_unparsed_values,
			    r->mode & BG_ATTACH_F_UNPARSED_DROP ? BG_UNPARSED_DROP :
								  BG_UNPARSED_PASS);
}

/* "53" or "53,5353": the ports in use (0 = unused), into buf. */
void cli_fmt_ports(char *buf, size_t len, const __u16 *ports)
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
void cli_fmt_capacity(char *buf, size_t len, __u32 elems)
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

/*
 * Parses a command's arguments into ctx (user/core/opts.h). 0: go on, with the
 * positional arguments now in argv[1..*argc); else what to exit with,
 * -1 when the help was asked for and printed (exit 0).
 */
int cli_parse_args(const struct bg_cmd *cmd, int *argc, char **argv, void *ctx)
{
	char err[256];
	int n = bg_opts_parse(cmd, *argc, argv, ctx, err, sizeof(err));

	if (n == BG_OPTS_HELP) {
		bg_cmd_help(stdout, "bloomgate", cmd);
		return -1;
	}
	if (n < 0)
		return cli_fail(n == -EINVAL ? EXIT_USAGE : 1, "%s", err);
	*argc = n + 1;
	return 0;
}
