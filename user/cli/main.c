// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate: the command line. One binary, iproute2-style subcommands, one
 * file per command family (user/cli/cmd_*.c), each declaring its options
 * (core/opts.h), calling the libraries and printing what they return.
 * Exit codes: 0 success, 1 runtime failure, 2 usage error, 3 bloomgate is
 * not attached (no pinned state), 4 the list was rejected (nothing loaded).
 */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "core/version.h"

#include "cli/cli.h"

int bg_cli_verbose;

static int quiet_print(enum libbpf_print_level level, const char *fmt,
		       va_list ap)
{
	(void)level;
	if (!bg_cli_verbose)
		return 0; /* one clear message from us instead of libbpf's */
	return vfprintf(stderr, fmt, ap);
}

static int quiet_xdp_print(enum libxdp_print_level level, const char *fmt,
			   va_list ap)
{
	(void)level;
	if (!bg_cli_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* ---- main --------------------------------------------------------------- */

/* The commands, in the order help lists them. */
static const struct {
	const struct bg_cmd *cmd;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ &cli_attach_cmd, cli_cmd_attach },
	{ &cli_load_cmd, cli_cmd_load },
	{ &cli_build_cmd, cli_cmd_build },
	{ &cli_inspect_cmd, cli_cmd_inspect },
	{ &cli_publish_cmd, cli_cmd_publish },
	{ &cli_fleet_cmd, cli_cmd_fleet },
	{ &cli_check_cmd, cli_cmd_check },
	{ &cli_stats_cmd, cli_cmd_stats },
	{ &cli_status_cmd, cli_cmd_status },
	{ &cli_events_cmd, cli_cmd_events },
	{ &cli_detach_cmd, cli_cmd_detach },
	{ &cli_chain_cmd, cli_cmd_chain },
	{ &cli_agent_cmd, cli_cmd_agent },
	{ &cli_reload_cmd, cli_cmd_reload },
};

#define N_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static int find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < N_CMDS; i++)
		if (!strcmp(name, cmds[i].cmd->name))
			return (int)i;
	return -1;
}

static int usage(FILE *f)
{
	char syn[512];
	size_t i;

	fputs("usage: bloomgate [-v] COMMAND [ARGS]\n"
	      "XDP Bloom-filter blocklist for Linux gateways.\n\ncommands:\n", f);
	for (i = 0; i < N_CMDS; i++) {
		bg_cmd_synopsis(cmds[i].cmd, syn, sizeof(syn));
		fprintf(f, "  bloomgate %s\n", syn);
	}
	fputs("\n-v shows libbpf's and libxdp's own messages. A command's options:\n"
	      "bloomgate help COMMAND, or bloomgate COMMAND --help. bloomgate --version:\n"
	      "the version.\n", f);
	return f == stdout ? 0 : EXIT_USAGE;
}

/* bloomgate help [COMMAND]; bloomgate help --man 8|5, --completion bash
 * (cli/docs.c: what make man writes, not listed) */
static int cmd_help(int argc, char **argv)
{
	const struct bg_cmd *list[N_CMDS];
	size_t i;
	int c;

	if (argc < 2)
		return usage(stdout);
	if (!strcmp(argv[1], "--man") || !strcmp(argv[1], "--completion")) {
		for (i = 0; i < N_CMDS; i++)
			list[i] = cmds[i].cmd;
		return cli_docs(argc, argv, list, N_CMDS);
	}
	if (argc > 2)
		return cli_fail(EXIT_USAGE, "help: one COMMAND at most");
	c = find_cmd(argv[1]);
	if (c < 0)
		return cli_fail(EXIT_USAGE, "help: unknown command '%s'", argv[1]);
	bg_cmd_help(stdout, "bloomgate", cmds[c].cmd);
	return 0;
}

int main(int argc, char **argv)
{
	int c;

	libbpf_set_print(quiet_print);
	libxdp_set_print(quiet_xdp_print);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (argc > 1 && !strcmp(argv[1], "-v")) {
		bg_cli_verbose = 1;
		argc--;
		argv++;
	}
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version")) {
		printf("bloomgate %s\n", BG_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help"))
		return cmd_help(argc - 1, argv + 1);
	c = find_cmd(argv[1]);
	if (c >= 0)
		return cmds[c].fn(argc - 1, argv + 1);
	cli_fail(EXIT_USAGE, "unknown command '%s'", argv[1]);
	return usage(stderr);
}
