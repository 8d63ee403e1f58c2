// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Table-driven command-line options: parsing, synopsis and help from one
 * declaration per option (opts.h). One concern: the parser, the synopsis
 * and the help text read the same table, so they live together.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/units.h"
#include "core/opts.h"
#include "core/roff.h"

/* Options per command: the repeat counters live on the stack. */
#define BG_OPTS_MAX 32

/* Where the help text starts (the option and its metavar before it). */
#define HELP_COL 24
/* Help lines are wrapped to this many columns. */
#define HELP_WIDTH 79

static int takes_value(const struct bg_opt *o)
{
	return o->type != BG_OPT_FLAG;
}

static const struct bg_opt *find_long(const struct bg_cmd *cmd, const char *name,
				      size_t len)
{
	const struct bg_opt *o;

	/* Exact names only: an abbreviation that is unique today would
	 * become ambiguous, and break scripts, when an option is added. */
	for (o = cmd->opts; o && o->name; o++)
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return o;
	return NULL;
}

static const struct bg_opt *find_short(const struct bg_cmd *cmd, char c)
{
	const struct bg_opt *o;

	for (o = cmd->opts; o && o->name; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

static int is_help(const char *a)
{
	return !strcmp(a, "-h") || !strcmp(a, "--help");
}

/*
 * Whether -h or --help is among the options, skipping the values of the
 * options that take one, so "--allow --help" names a file. A request for
 * help wins over any error, wherever it is on the line.
 */
static int wants_help(const struct bg_cmd *cmd, int argc, char **argv)
{
	const struct bg_opt *o;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			return 0;
		if (is_help(a))
			return 1;
		if (a[0] != '-' || !a[1])
			continue;
		if (a[1] == '-')
			o = strchr(a, '=') ? NULL : find_long(cmd, a + 2, strlen(a + 2));
		else
			o = a[2] ? NULL : find_short(cmd, a[1]);
		if (o && takes_value(o))
			i++;
	}
	return 0;
}

/* "1e-09..0.5", ">= 1", "> 0"; "" when the option has no range. */
static const char *fmt_range(const struct bg_opt *o, char *buf, size_t len)
{
	int open = !!(o->flags & BG_OPT_F_MIN_OPEN);

	buf[0] = 0;
	if (!(o->min < o->max))
		return buf;
	if (isinf(o->max))
		snprintf(buf, len, "%s %.15g", open ? ">" : ">=", o->min);
	else if (open)
		snprintf(buf, len, "> %.15g and <= %.15g", o->min, o->max);
	else
		snprintf(buf, len, "%.15g..%.15g", o->min, o->max);
	return buf;
}

static int in_range(const struct bg_opt *o, double v)
{
	if (!(o->min < o->max))
		return 1;
	if (o->flags & BG_OPT_F_MIN_OPEN ? !(v > o->min) : !(v >= o->min))
		return 0;
	return v <= o->max;
}

/* "native, skb" */
static void fmt_values(const struct bg_opt *o, char *buf, size_t len,
		       const char *sep)
{
	const struct bg_opt_enum *e;
	size_t n = 0;

	buf[0] = 0;
	for (e = o->values; e && e->name && n < len; e++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s",
				      e == o->values ? "" : sep, e->name);
}

/*
 * Converts and validates one argument of option or positional o. label
 * names it in errors: "--fpr", or the command for a positional.
 */
static int convert(const struct bg_opt *o, const char *label, const char *arg,
		   struct bg_optval *v, char *err, size_t errlen)
{
	const struct bg_opt_enum *e;
	char range[64], vals[256];
	char *end;

	memset(v, 0, sizeof(*v));
	v->arg = arg;
	switch (o->type) {
	case BG_OPT_FLAG:
		v->i = 1;
		return 0;
	case BG_OPT_ENUM:
		for (e = o->values; e && e->name; e++) {
			if (!strcmp(arg, e->name)) {
				v->i = e->value;
				return 0;
			}
		}
		fmt_values(o, vals, sizeof(vals), ", ");
		bg_whyf(err, errlen, "%s: '%s' is not one of %s", label, arg, vals);
		return -EINVAL;
	case BG_OPT_UINT:
		if (o->flags & BG_OPT_F_SIZE) {
			uint64_t sz;

			if (bg_opt_size(arg, &sz)) {
				bg_whyf(err, errlen,
				     "%s: '%s' is not a size (digits, then K, M or G if any)",
				     label, arg);
				return -EINVAL;
			}
			v->u = sz;
			if (!in_range(o, (double)v->u)) {
				bg_whyf(err, errlen, "%s: %s is out of range %s", label,
				     arg, fmt_range(o, range, sizeof(range)));
				return -EINVAL;
			}
			return 0;
		}
		/* strtoull() would take "-1", " 1" and "+1" */
		if (!isdigit((unsigned char)arg[0])) {
			bg_whyf(err, errlen, "%s: '%s' is not a whole number", label, arg);
			return -EINVAL;
		}
		errno = 0;
		v->u = strtoull(arg, &end, 10);
		if (*end) {
			bg_whyf(err, errlen, "%s: '%s' is not a whole number", label, arg);
			return -EINVAL;
		}
		if (errno == ERANGE || !in_range(o, (double)v->u)) {
			bg_whyf(err, errlen, "%s: %s is out of range %s", label, arg,
			     fmt_range(o, range, sizeof(range)));
			return -EINVAL;
		}
		return 0;
	case BG_OPT_DOUBLE:
		errno = 0;
		v->d = strtod(arg, &end);
		if (!arg[0] || isspace((unsigned char)arg[0]) || *end ||
		    !isfinite(v->d)) {
			bg_whyf(err, errlen, "%s: '%s' is not a number", label, arg);
			return -EINVAL;
		}
		/* ERANGE on underflow too: 1e-400 is out of any range here */
		if (errno == ERANGE || !in_range(o, v->d)) {
			bg_whyf(err, errlen, "%s: %s is out of range %s", label, arg,
			     fmt_range(o, range, sizeof(range)));
			return -EINVAL;
		}
		return 0;
	case BG_OPT_IFNAME:
		v->u = arg[0] && strlen(arg) < IF_NAMESIZE ? if_nametoindex(arg) : 0;
		if (!v->u) {
			bg_whyf(err, errlen, "%s: interface '%s' does not exist", label, arg);
			return -EINVAL;
		}
		return 0;
	case BG_OPT_PATH:
		if (!arg[0]) {
			bg_whyf(err, errlen, "%s: empty path", label);
			return -EINVAL;
		}
		if ((o->flags & BG_OPT_F_EXISTS) && strcmp(arg, "-") &&
		    access(arg, F_OK)) {
			bg_whyf(err, errlen, "%s: '%s': %s", label, arg, strerror(errno));
			return -EINVAL;
		}
		return 0;
	case BG_OPT_STRING:
		return 0;
	}
	bg_whyf(err, errlen, "%s: unknown option type %d", label, (int)o->type);
	return -EINVAL;
}

static void store(const struct bg_opt *o, void *ctx, const struct bg_optval *v)
{
	char *p = (char *)ctx + o->off;

	switch (o->type) {
	case BG_OPT_FLAG:
	case BG_OPT_ENUM:
		*(int *)p = v->i;
		break;
	case BG_OPT_UINT:
		*(unsigned long long *)p = v->u;
		break;
	case BG_OPT_DOUBLE:
		*(double *)p = v->d;
		break;
	case BG_OPT_IFNAME:
	case BG_OPT_PATH:
	case BG_OPT_STRING:
		*(const char **)p = v->arg;
		break;
	}
}

/* One option with its argument (NULL for a flag). */
static int apply_opt(const struct bg_opt *o, const char *arg, void *ctx,
		     unsigned int *count, char *err, size_t errlen)
{
	unsigned int max = o->max_count > 1 ? o->max_count : 1;
	struct bg_optval v;
	char label[64];
	int ret;

	snprintf(label, sizeof(label), "--%s", o->name);
	if (*count >= max) {
		if (max == 1)
			bg_whyf(err, errlen, "%s: given twice", label);
		else
			bg_whyf(err, errlen, "%s: given more than %u times", label, max);
		return -EINVAL;
	}
	(*count)++;
	ret = convert(o, label, arg, &v, err, errlen);
	if (ret)
		return ret;
	if (o->set)
		return o->set(ctx, o, &v, err, errlen);
	store(o, ctx, &v);
	return 0;
}

int bg_opts_parse(const struct bg_cmd *cmd, int argc, char **argv, void *ctx,
		  char *err, size_t errlen)
{
	unsigned int counts[BG_OPTS_MAX] = { 0 }, npos = 0;
	const struct bg_opt *o;
	int i, ret, dashdash = 0;

	if (err && errlen)
		err[0] = 0;
	for (o = cmd->opts; o && o->name; o++) {
		if (o - cmd->opts >= BG_OPTS_MAX) {
			bg_whyf(err, errlen, "%s: more than %d options", cmd->name,
			     BG_OPTS_MAX);
			return -E2BIG;
		}
	}
	if (wants_help(cmd, argc, argv))
		return BG_OPTS_HELP;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *arg = NULL;

		if (!dashdash && !strcmp(a, "--")) {
			dashdash = 1;
			continue;
		}
		if (dashdash || a[0] != '-' || !a[1]) {
			/* positional; "-" is one (stdin) */
			struct bg_optval v;

			if (!cmd->pos || npos >= cmd->max_pos) {
				bg_whyf(err, errlen, "%s: unexpected argument '%s'",
				     cmd->name, a);
				return -EINVAL;
			}
			ret = convert(cmd->pos, cmd->name, a, &v, err, errlen);
			if (!ret && cmd->pos->set)
				ret = cmd->pos->set(ctx, cmd->pos, &v, err, errlen);
			else if (!ret && cmd->max_pos == 1)
				store(cmd->pos, ctx, &v);
			if (ret)
				return ret;
			/* Only consumed slots are behind us: this is safe. */
			argv[1 + npos++] = argv[i];
			continue;
		}
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);

			o = find_long(cmd, a + 2, len);
			if (!o) {
				bg_whyf(err, errlen, "%s: unknown option '%.*s'", cmd->name,
				     (int)len + 2, a);
				return -EINVAL;
			}
			if (eq && !takes_value(o)) {
				bg_whyf(err, errlen, "--%s: takes no value", o->name);
				return -EINVAL;
			}
			arg = eq ? eq + 1 : NULL;
		} else {
			o = find_short(cmd, a[1]);
			if (!o) {
				bg_whyf(err, errlen, "%s: unknown option '-%c'", cmd->name, a[1]);
				return -EINVAL;
			}
			if (a[2] && !takes_value(o)) {
				bg_whyf(err, errlen, "--%s: takes no value ('%s')", o->name, a);
				return -EINVAL;
			}
			arg = a[2] ? a + 2 : NULL;
		}
		if (takes_value(o) && !arg) {
			if (i + 1 >= argc) {
				bg_whyf(err, errlen, "--%s: needs a value (--%s %s)", o->name,
				     o->name, o->metavar ? o->metavar : "VALUE");
				return -EINVAL;
			}
			arg = argv[++i];
		}
		ret = apply_opt(o, arg, ctx, &counts[o - cmd->opts], err, errlen);
		if (ret)
			return ret;
	}
	if (npos < cmd->min_pos) {
		bg_whyf(err, errlen, "%s: missing %s", cmd->name,
		     cmd->pos && cmd->pos->metavar ? cmd->pos->metavar : "argument");
		return -EINVAL;
	}
	if (cmd->done && (ret = cmd->done(ctx, npos, err, errlen)))
		return ret;
	return (int)npos;
}

/* ---- synopsis and help --------------------------------------------------- */

/* Appends to a bounded buffer, counting what it would need (snprintf). */
struct out {
	char *buf;
	size_t len, n;
};

static void add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(o->n < o->len ? o->buf + o->n : NULL,
		      o->n < o->len ? o->len - o->n : 0, fmt, ap);
	va_end(ap);
	if (r > 0)
		o->n += (size_t)r;
}

/* "--mode native|skb", "--fpr P", "--json", "-h, --help" is not here. */
static void opt_usage(struct out *s, const struct bg_opt *o)
{
	char vals[256];

	add(s, "--%s", o->name);
	if (o->type == BG_OPT_FLAG)
		return;
	if (o->type == BG_OPT_ENUM && !o->metavar) {
		fmt_values(o, vals, sizeof(vals), "|");
		add(s, " %s", vals);
	} else {
		add(s, " %s", o->metavar ? o->metavar : "VALUE");
	}
}

static void pos_usage(struct out *s, const struct bg_cmd *cmd)
{
	const char *m = cmd->pos->metavar ? cmd->pos->metavar : "ARG";
	int many = cmd->max_pos > 1;

	if (cmd->min_pos)
		add(s, " %s%s", m, many ? "..." : "");
	else
		add(s, " [%s]%s", m, many ? "..." : "");
}

size_t bg_cmd_synopsis(const struct bg_cmd *cmd, char *buf, size_t len)
{
	struct out s = { buf, len, 0 };
	const struct bg_opt *o;

	if (len)
		buf[0] = 0;
	add(&s, "%s", cmd->name);
	if (cmd->pos && cmd->max_pos && cmd->pos_first)
		pos_usage(&s, cmd);
	for (o = cmd->opts; o && o->name; o++) {
		if (o->flags & BG_OPT_F_NOSYN)
			continue;
		add(&s, " [");
		opt_usage(&s, o);
		add(&s, "]%s", o->max_count > 1 ? "..." : "");
	}
	if (cmd->pos && cmd->max_pos && !cmd->pos_first)
		pos_usage(&s, cmd);
	return s.n;
}

/* The option's default, from cmd->defaults, into buf; "" when none. */
static const char *fmt_default(const struct bg_cmd *cmd, const struct bg_opt *o,
			       char *buf, size_t len)
{
	const char *p = (const char *)cmd->defaults + o->off;
	const struct bg_opt_enum *e;

	buf[0] = 0;
	if (!cmd->defaults || o->set)
		return buf;
	switch (o->type) {
	case BG_OPT_ENUM:
		for (e = o->values; e && e->name; e++)
			if (e->value == *(const int *)p) {
				snprintf(buf, len, "%s", e->name);
				break;
			}
		break;
	case BG_OPT_UINT: {
		unsigned long long u = *(const unsigned long long *)p;

		/* out of range: "not given", not a value one could give */
		if ((o->min < o->max) ? in_range(o, (double)u) : u != 0)
			snprintf(buf, len, "%llu", u);
		break;
	}
	case BG_OPT_DOUBLE: {
		double d = *(const double *)p;

		if ((o->min < o->max) ? in_range(o, d) : d != 0)
			snprintf(buf, len, "%g", d);
		break;
	}
	case BG_OPT_IFNAME:
	case BG_OPT_PATH:
	case BG_OPT_STRING:
		if (*(const char *const *)p)
			snprintf(buf, len, "%s", *(const char *const *)p);
		break;
	case BG_OPT_FLAG:
		break;
	}
	return buf;
}

/*
 * "  LEFT<pad>help" with the help at HELP_COL (on the next line when LEFT
 * reaches it), wrapped at word boundaries to stay within HELP_WIDTH.
 */
static void help_line(FILE *f, const char *left, const char *help)
{
	int n = fprintf(f, "  %s", left), w = HELP_WIDTH - HELP_COL;
	const char *p = help ? help : "";

	if (!*p) {
		fputc('\n', f);
		return;
	}
	if (n >= HELP_COL - 1) {
		fputc('\n', f);
		n = 0;
	}
	while (*p) {
		int len = (int)strlen(p), cut = len;

		if (len > w) {
			/* the last space within the width; a longer word
			 * overflows rather than being split */
			for (cut = w; cut > 0 && p[cut] != ' '; cut--)
				;
			if (!cut)
				cut = (int)strcspn(p, " ");
		}
		fprintf(f, "%*s%.*s\n", HELP_COL - n, "", cut, p);
		n = 0;
		p += cut;
		while (*p == ' ')
			p++;
	}
}

/* The help text of o with its range, default and repeat count after it,
 * in one parenthesis: "the target (1e-09..0.5; default 0.001)". The help
 * and the man page print the same text. */
static void opt_text(const struct bg_cmd *cmd, const struct bg_opt *o,
		     int is_pos, char *help, size_t len)
{
	char range[64], def[128], notes[256];
	struct out h = { help, len, 0 }, nt = { notes, sizeof(notes), 0 };

	notes[0] = 0;
	help[0] = 0;
	if (fmt_range(o, range, sizeof(range))[0] &&
	    (o->type == BG_OPT_UINT || o->type == BG_OPT_DOUBLE))
		add(&nt, "%s", range);
	if (!is_pos && o->type != BG_OPT_ENUM &&
	    fmt_default(cmd, o, def, sizeof(def))[0])
		add(&nt, "%sdefault %s", nt.n ? "; " : "", def);
	if (!is_pos && o->max_count == BG_OPT_MANY)
		add(&nt, "%srepeatable", nt.n ? "; " : "");
	else if (!is_pos && o->max_count > 1)
		add(&nt, "%sup to %u times", nt.n ? "; " : "", o->max_count);
	add(&h, "%s", o->help ? o->help : "");
	if (nt.n)
		add(&h, "%s(%s)", h.n ? " " : "", notes);
}

/* The line of enum value e under its option: "driver XDP (default)". */
static void enum_text(const struct bg_cmd *cmd, const struct bg_opt *o,
		      const struct bg_opt_enum *e, char *buf, size_t len)
{
	char def[128];

	fmt_default(cmd, o, def, sizeof(def));
	snprintf(buf, len, "%s%s", e->help,
		 def[0] && !strcmp(def, e->name) ? " (default)" : "");
}

static void opt_help(FILE *f, const struct bg_cmd *cmd, const struct bg_opt *o,
		     const char *left, int is_pos)
{
	const struct bg_opt_enum *e;
	char help[512];

	opt_text(cmd, o, is_pos, help, sizeof(help));
	help_line(f, left, help);
	if (o->type != BG_OPT_ENUM)
		return;
	for (e = o->values; e && e->name; e++) {
		char l[64], t[256];

		if (!e->help)
			continue;
		snprintf(l, sizeof(l), "  %s", e->name);
		enum_text(cmd, o, e, t, sizeof(t));
		help_line(f, l, t);
	}
}

static void indent(FILE *f, const char *text)
{
	const char *p = text, *nl;

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		if (nl > p)
			fprintf(f, "  %.*s", (int)(nl - p), p);
		fputc('\n', f);
		p = *nl ? nl + 1 : nl;
	}
}

void bg_cmd_help(FILE *f, const char *prog, const struct bg_cmd *cmd)
{
	size_t n = bg_cmd_synopsis(cmd, NULL, 0) + 1;
	char *syn = malloc(n), left[128];
	const struct bg_opt *o;

	if (syn)
		bg_cmd_synopsis(cmd, syn, n);
	fprintf(f, "usage: %s %s\n", prog, syn ? syn : cmd->name);
	free(syn);
	if (cmd->summary) {
		fputc('\n', f);
		indent(f, cmd->summary);
	}
	if (cmd->pos && cmd->max_pos && cmd->pos->help) {
		fputs("\narguments:\n", f);
		opt_help(f, cmd, cmd->pos, cmd->pos->metavar ? cmd->pos->metavar : "ARG",
			 1);
	}
	fputs("\noptions:\n", f);
	for (o = cmd->opts; o && o->name; o++) {
		struct out s = { left, sizeof(left), 0 };

		if (o->short_name)
			add(&s, "-%c, ", o->short_name);
		opt_usage(&s, o);
		opt_help(f, cmd, o, left, 0);
	}
	help_line(f, "-h, --help", "print this help");
	if (cmd->details) {
		fputc('\n', f);
		indent(f, cmd->details);
	}
}

/* The option's usage in roff: "\fB\-\-mode\fR \fInative\fR|\fIskb\fR". */
static void opt_usage_roff(FILE *f, const struct bg_opt *o)
{
	const struct bg_opt_enum *e;

	if (o->short_name)
		fprintf(f, "\\fB\\-%c\\fR, ", o->short_name);
	fputs("\\fB\\-\\-", f);
	bg_roff_str(f, o->name, 0);
	fputs("\\fR", f);
	if (o->type == BG_OPT_FLAG)
		return;
	fputc(' ', f);
	if (o->type == BG_OPT_ENUM && !o->metavar) {
		for (e = o->values; e && e->name; e++) {
			fputs(e == o->values ? "\\fI" : "\\fR|\\fI", f);
			bg_roff_str(f, e->name, 0);
		}
	} else {
		fputs("\\fI", f);
		bg_roff_str(f, o->metavar ? o->metavar : "VALUE", 0);
	}
	fputs("\\fR", f);
}

/* An option's paragraph: its usage as the tag, its text, its values. */
static void opt_man(FILE *f, const struct bg_cmd *cmd, const struct bg_opt *o,
		    int is_pos)
{
	const struct bg_opt_enum *e;
	char help[512], t[256];

	fputs(".TP\n", f);
	if (is_pos) {
		fputs("\\fI", f);
		bg_roff_str(f, o->metavar ? o->metavar : "ARG", 0);
		fputs("\\fR", f);
	} else {
		opt_usage_roff(f, o);
	}
	fputc('\n', f);
	opt_text(cmd, o, is_pos, help, sizeof(help));
	bg_roff_str(f, help, 1);
	fputc('\n', f);
	if (o->type != BG_OPT_ENUM)
		return;
	fputs(".RS\n.PD 0\n", f);
	for (e = o->values; e && e->name; e++) {
		if (!e->help)
			continue;
		fputs(".TP\n\\fB", f);
		bg_roff_str(f, e->name, 0);
		fputs("\\fR\n", f);
		enum_text(cmd, o, e, t, sizeof(t));
		bg_roff_str(f, t, 1);
		fputc('\n', f);
	}
	fputs(".PD\n.RE\n", f);
}

void bg_cmd_man(FILE *f, const char *prog, const struct bg_cmd *cmd)
{
	size_t n = bg_cmd_synopsis(cmd, NULL, 0) + 1;
	char *syn = malloc(n);
	const struct bg_opt *o;

	if (syn)
		bg_cmd_synopsis(cmd, syn, n);
	fputs(".SS ", f);
	bg_roff_str(f, cmd->name, 0);
	fputs("\n.PP\n\\fB", f);
	bg_roff_str(f, prog, 0);
	fputs("\\fR ", f);
	bg_roff_str(f, syn ? syn : cmd->name, 0);
	fputc('\n', f);
	free(syn);
	if (cmd->summary) {
		fputs(".PP\n", f);
		bg_roff_block(f, cmd->summary);
	}
	if (cmd->pos && cmd->max_pos && cmd->pos->help)
		opt_man(f, cmd, cmd->pos, 1);
	for (o = cmd->opts; o && o->name; o++)
		opt_man(f, cmd, o, 0);
	if (cmd->details) {
		fputs(".PP\n", f);
		bg_roff_block(f, cmd->details);
	}
}

int bg_opt_size(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	switch (*s) {
	case '\0':
		break;
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	default:
		return -1;
	}
	if (*s && s[1])
		return -1;
	if (shift && v > UINT64_MAX >> shift)
		return -1;
	*out = v << shift;
	return 0;
}
