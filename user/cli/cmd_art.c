// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate build and inspect: a filter artifact written once from lists
 * (core/artbuild.h) and read back (core/artifact.h).
 */
#include <errno.h>
#include <string.h>

#include "core/clock.h"
#include "core/artbuild.h"
#include "core/artifact.h"
#include "core/print.h"

#include "cli/cli.h"
#include "cli/listopts.h"

/* ---- build -------------------------------------------------------------- */

static int build_done(void *ctx, unsigned int npos, char *err, size_t errlen)
{
	struct list_ctx *c = ctx;

	if (!c->output) {
		snprintf(err, errlen, "build: missing -o FILE (where the artifact goes)");
		return -EINVAL;
	}
	return list_opts_done(ctx, npos, err, errlen);
}

static const struct bg_opt build_opts[] = {
	LIST_OPTS,
	{ .name = "output", .short_name = 'o', .type = BG_OPT_PATH,
	  .metavar = "FILE", .help = "where the artifact is written (atomically: "
	  "a temporary file beside it, renamed)",
	  .off = offsetof(struct list_ctx, output) },
	LIST_CAPACITY_OPT,
	{ NULL },
};

const struct bg_cmd cli_build_cmd = {
	.name = "build",
	.summary = "Runs load's pipeline up to the built filter and writes it to\n"
		   "FILE as an artifact: a versioned header (the plan, seed, key\n"
		   "counts, predicted rates), the lists it was built from (name,\n"
		   "path, SHA-256, entries), the filter map's image, the index that\n"
		   "check uses to name the list behind a verdict, and SHA-256\n"
		   "checksums over all of it. bloomgate load FILE then swaps it in\n"
		   "on any gateway without parsing or building; with the same\n"
		   "lists and --seed, the image is the filter load builds, bit for\n"
		   "bit. Needs no root and no attachment.",
	.details = LIST_DETAILS,
	.opts = build_opts, .pos = &list_pos, .min_pos = 1, .max_pos = BG_POS_MANY,
	.defaults = &list_defaults, .done = build_done,
};

int cli_cmd_build(int argc, char **argv)
{
	struct list_ctx c = list_defaults;
	struct bg_load_opts o = { .diag = list_print_diag };
	struct bg_load_report r;
	struct bg_art_built b;
	struct bg_sources srcs;
	char hex[65], size[32];
	double t0;
	int ret;

	bg_sources_init(&srcs);
	c.srcs = &srcs;
	if ((ret = cli_parse_args(&cli_build_cmd, &argc, argv, &c))) {
		bg_sources_free(&srcs);
		return ret < 0 ? 0 : ret;
	}
	list_load_opts(&c, &o);
	bg_load_report_init(&r);
	ret = bg_art_build(&o, NULL, &b, &r);
	if (ret) {
		ret = cli_fail(r.failed <= BG_STAGE_PLAN ? EXIT_LIST : 1, "%s", r.msg);
		goto out;
	}
	t0 = bg_mono_ms();
	ret = bg_art_built_write(&b, c.output, 0, hex);
	if (ret) {
		ret = cli_fail(1, "cannot write %s: %s", c.output, strerror(-ret));
		bg_art_built_free(&b);
		goto out;
	}
	r.ms[BG_STAGE_PUBLISH] = 0;
	bg_print_load_report(stdout, &srcs, &r);
	bg_fmt_bytes(size, sizeof(size), (double)b.h.file_len);
	printf("artifact:         %s, %s (index %zu bytes), sha256 %s, seed "
	       "0x%016llx, written in %.1f ms\n", c.output, size, b.index_len, hex,
	       (unsigned long long)b.h.plan.seed, bg_mono_ms() - t0);
	bg_art_built_free(&b);
out:
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
	return ret;
}

/* ---- inspect ------------------------------------------------------------ */

struct inspect_ctx {
	const char *path;
	int verify;
};

static const struct bg_opt inspect_opts[] = {
	{ .name = "verify", .type = BG_OPT_FLAG,
	  .help = "also check every section against its SHA-256 (load does)",
	  .off = offsetof(struct inspect_ctx, verify) },
	{ NULL },
};

static const struct bg_opt inspect_pos = {
	.type = BG_OPT_PATH, .metavar = "FILE", .help = "a filter artifact",
	.off = offsetof(struct inspect_ctx, path),
};

const struct bg_cmd cli_inspect_cmd = {
	.name = "inspect",
	.summary = "Prints an artifact's header: kind (full, or a delta and its\n"
		   "base), format version, datapath ABI, checksum (the SHA-256 of\n"
		   "the whole file, as sha256sum prints it and the fleet store names\n"
		   "it), generation, the plan (elements, blocks, k, seed, probed\n"
		   "lengths, the exact stage), key and entry counts, predicted\n"
		   "rates, its sections and the lists it was built from. Every field\n"
		   "of the header is always checked (its range, and against the\n"
		   "filter image's own header and the file); --verify checks the\n"
		   "sections' bytes too.",
	.opts = inspect_opts, .pos = &inspect_pos, .min_pos = 1, .max_pos = 1,
	.pos_first = 1,
};

int cli_cmd_inspect(int argc, char **argv)
{
	struct inspect_ctx c = { 0 };
	struct bg_art a;
	char why[512];
	int ret;

	if ((ret = cli_parse_args(&cli_inspect_cmd, &argc, argv, &c)))
		return ret < 0 ? 0 : ret;
	ret = bg_art_open(c.path, &a, why, sizeof(why));
	if (ret)
		return cli_fail(EXIT_LIST, "%s: %s", c.path, why);
	bg_art_print(stdout, &a, c.path);
	if (c.verify) {
		ret = bg_art_verify(&a, ~0u, NULL, 0, why, sizeof(why));
		if (ret)
			ret = cli_fail(EXIT_LIST, "%s: %s", c.path, why);
		else
			printf("verified:   every section matches its SHA-256\n");
	}
	bg_art_close(&a);
	return ret;
}
