/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Table-driven command-line options (in the style of xdp-tools' params.c).
 * A command declares each option once, with a type; the type validates the
 * argument while it is parsed and produces the help text, and the synopsis
 * ("attach IFACE [--mode native|skb] ...") is generated from the same
 * table, so the three cannot drift apart.
 *
 * Arguments are walked in order, options and positional arguments mixed,
 * so that options which apply to the arguments after them (load's --format)
 * see them in the order given: a set() callback and the positional
 * callback are called in command-line order. Accepted: --name=value,
 * --name value, -x value, -xvalue, "--" (everything after it is
 * positional), "-" (a positional: stdin), -h and --help anywhere before
 * "--".
 *
 * No libbpf here: this is part of the pure core that the unit tests link.
 */
#ifndef BLOOMGATE_OPTS_H
#define BLOOMGATE_OPTS_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

enum bg_opt_type {
	BG_OPT_FLAG, /* no value; stored: int 1 */
	BG_OPT_ENUM, /* one of values[]; stored: int (the value's .value) */
	BG_OPT_UINT, /* decimal digits only; stored: unsigned long long */
	BG_OPT_DOUBLE, /* strtod(), finite; stored: double */
	BG_OPT_IFNAME, /* an existing interface; stored: const char * */
	BG_OPT_PATH, /* stored: const char * ("-" allowed: stdin) */
	BG_OPT_STRING, /* stored: const char * */
};

struct bg_opt_enum {
	const char *name;
	int value;
	const char *help; /* NULL: not listed under the option */
};

/* The value of one option or positional argument, as set() receives it. */
struct bg_optval {
	const char *arg; /* as given; NULL for a flag */
	union {
		int i; /* FLAG: 1; ENUM: the value */
		unsigned long long u; /* UINT; IFNAME: the ifindex */
		double d; /* DOUBLE */
	};
};

struct bg_opt;
/* 0, or a negative errno with a message in err (-EINVAL: a usage error). */
typedef int (*bg_opt_set_fn)(void *ctx, const struct bg_opt *o,
			     const struct bg_optval *v, char *err, size_t errlen);

/* Flags of an option. */
#define BG_OPT_F_EXISTS 0x1 /* PATH: must exist (access(F_OK)); "-" always does */
#define BG_OPT_F_MIN_OPEN 0x2 /* numbers: the value must be > min, not >= */
#define BG_OPT_F_NOSYN 0x4 /* left out of the synopsis (an option's undo) */
#define BG_OPT_F_SIZE 0x8 /* UINT: a size, K, M or G allowed (bg_opt_size) */

/* Repeat any number of times (max_count). */
#define BG_OPT_MANY 0xffffffffu

struct bg_opt {
	const char *name; /* "mode" for --mode; NULL ends a table */
	char short_name; /* 0: none */
	enum bg_opt_type type;
	const char *metavar; /* "P", "IFACE"; ENUM: NULL lists the values */
	const char *help; /* one line */
	size_t off; /* offsetof() into the command's context (when !set) */
	const struct bg_opt_enum *values; /* ENUM: ends with { NULL } */
	/* Numbers: checked when min < max (max may be INFINITY). */
	double min, max;
	unsigned int max_count; /* 0 or 1: at most once; BG_OPT_MANY */
	unsigned int flags; /* BG_OPT_F_* */
	/* Order-sensitive options: called instead of storing at off. */
	bg_opt_set_fn set;
};

/* max_pos: no limit. */
#define BG_POS_MANY 0xffffffffu

struct bg_cmd {
	const char *name; /* "attach" */
	const char *summary; /* what it does: lines of up to 72 columns */
	const char *details; /* printed after the options; NULL: none */
	const struct bg_opt *opts; /* ends with { NULL }; NULL: no options */
	/*
	 * The positional arguments' type, metavar and help (its name is
	 * unused): each is validated by type, then given to pos->set() in
	 * order with the options, or stored at pos->off when there is no
	 * set() (then max_pos should be 1). NULL: none are taken.
	 */
	const struct bg_opt *pos;
	unsigned int min_pos, max_pos;
	int pos_first; /* the synopsis names the positionals first */
	/* The context's initial values: the help prints the defaults from
	 * them (enums, numbers in range, strings). NULL: none shown. */
	const void *defaults;
	/* After the last argument: checks that concern several of them.
	 * 0, or a negative errno with a message in err. NULL: none. */
	int (*done)(void *ctx, unsigned int npos, char *err, size_t errlen);
};

/* bg_opts_parse(): -h or --help was given (nothing else was checked). */
#define BG_OPTS_HELP (-4096)

/*
 * Parses argv[1..argc) (argv[0] is the command's name) into ctx.
 * Returns the number of positional arguments, which are moved, in order,
 * to argv[1..1+n); BG_OPTS_HELP; or a negative errno (-EINVAL for a usage
 * error; else what a set() or done() callback returned) with one line in
 * err naming the option or the command and why, without a newline.
 */
int bg_opts_parse(const struct bg_cmd *cmd, int argc, char **argv, void *ctx,
		  char *err, size_t errlen);

/* "attach IFACE [--mode native|skb] ...": the command's synopsis. The
 * length it needs, like snprintf(). */
size_t bg_cmd_synopsis(const struct bg_cmd *cmd, char *buf, size_t len);

/*
 * The help: "usage: PROG SYNOPSIS" on the first line, the summary, the
 * arguments and options with their metavars, enum values, ranges and
 * defaults, then the details. prog: "bloomgate".
 */
void bg_cmd_help(FILE *f, const char *prog, const struct bg_cmd *cmd);

/*
 * The same content as bg_cmd_help() in man(7) roff, for the COMMANDS
 * section of bloomgate(8): ".SS NAME", the synopsis, the summary, a .TP
 * paragraph per argument and option (with its values, range and default),
 * the details. -h, --help is left to the page's own text.
 */
void bg_cmd_man(FILE *f, const char *prog, const struct bg_cmd *cmd);

/* Sizes: decimal digits with an optional unit K, M, G (powers of 1024):
 * "64M" -> 67108864. 0 with the value in *out, or -1 if invalid or out of
 * uint64_t (*out untouched). The agent's config reads sizes with it too. */
int bg_opt_size(const char *s, uint64_t *out);

#endif
