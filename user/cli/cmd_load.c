// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bloomgate load: the load pipeline (kern/load.h) and its report.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kern/artifact.h"
#include "kern/load.h"
#include "kern/protect.h"
#include "core/clock.h"
#include "core/print.h"

#include "agent/instance.h"
#include "cli/cli.h"
#include "cli/listopts.h"

/* ---- load --------------------------------------------------------------- */

static int load_done(void *ctx, unsigned int npos, char *err, size_t errlen)
{
	struct list_ctx *c = ctx;
	int ret = list_opts_done(ctx, npos, err, errlen);

	if (!ret && c->artifact && (c->srcs->n != 1 || c->srcs->v[0].list.allow)) {
		snprintf(err, errlen, "--artifact: one FILE, an artifact, and no "
			 "other list");
		ret = -EINVAL;
	}
	return ret;
}

/* --protect ADDR[/LEN]: read by the lists' own parser; a set that
 * would be full is refused when it is gathered. */
static int opt_protect(void *ctx, const struct bg_opt *o, const struct bg_optval *v,
		       char *err, size_t errlen)
{
	struct list_ctx *c = ctx;
	const char *why = NULL;

	(void)o;
	if (c->n_protect >= BG_PROTECT_MAX) {
		snprintf(err, errlen, "--protect: more than %d given", BG_PROTECT_MAX);
		return -EINVAL;
	}
	if (bg_protect_parse(v->arg, BG_PROTECT_GIVEN, &c->protect[c->n_protect], &why)) {
		snprintf(err, errlen, "--protect: '%s': %s", v->arg, why);
		return -EINVAL;
	}
	c->n_protect++;
	return 0;
}

static const struct bg_opt load_opts[] = {
	LIST_OPTS,
	{ .name = "protect", .type = BG_OPT_STRING, .metavar = "ADDR[/LEN]",
	  .help = "never drop this address or prefix, whatever a list says (added "
		  "to the protected set, for this load's filter)",
	  .max_count = BG_OPT_MANY, .set = opt_protect },
	{ .name = "artifact", .type = BG_OPT_FLAG,
	  .help = "the one FILE is a filter artifact (bloomgate build): verified "
		  "and swapped in, nothing parsed or built (detected by its "
		  "magic without it)",
	  .off = offsetof(struct list_ctx, artifact) },
	{ .name = "force", .type = BG_OPT_FLAG,
	  .help = "load even when an agent feeds the filter (its lists stop "
		  "being enforced until its next rebuild)",
	  .off = offsetof(struct list_ctx, force) },
	{ NULL },
};

const struct bg_cmd cli_load_cmd = {
	.name = "load",
	.summary = "Parses the lists, builds a new filter sized for the target\n"
		   "false-positive rate and swaps it in atomically; or loads a\n"
		   "filter artifact built before (bloomgate build) without parsing\n"
		   "or building. A load that fails leaves the running filter as it\n"
		   "was.",
	.details = LIST_DETAILS
	"A LIST is a regular file, or - for standard input (read once, as\n"
	"/dev/stdin in reports); a FIFO, a device or a directory is refused.\n"
	"The lists are read and parsed before the pin directory is locked:\n"
	"a slow list holds up no other command.\n"
	"The protected set is never dropped nor flagged, whatever a list or\n"
	"an artifact says: the addresses of the attached interfaces, the next\n"
	"hops of the default routes, the resolvers of resolv.conf, and each\n"
	"--protect. A listed entry that covers a protected address is loaded\n"
	"without it (the address passes, the rest of the entry still blocks),\n"
	"and said: ENTRY at FILE:LINE covers ADDR, why it is protected. It\n"
	"cannot be turned off; --protect only adds to it.\n"
	"An artifact (one file starting with its magic, or --artifact) is\n"
	"checked (magic, format version, datapath ABI, every field of its\n"
	"header against its range and against the filter image's own header\n"
	"and the file, the padding, every section against its SHA-256, the\n"
	"attachments' capacity) while it is copied into a new filter map,\n"
	"then swapped in; a refusal is one line naming the field. The map is\n"
	"never larger than the artifact's filter image (a fixed capacity is\n"
	"the image's size) or the attachments' capacity. The list options do\n"
	"not apply to it (it was built with its own). The sha256 printed is\n"
	"the file's, as sha256sum prints it.",
	.opts = load_opts, .pos = &list_pos, .min_pos = 1, .max_pos = BG_POS_MANY,
	.defaults = &list_defaults, .done = load_done,
};

/* The list options do not apply to an artifact: it was built with its
 * own. Said rather than ignored. */
static const char *list_opt_given(const struct list_ctx *c)
{
	return c->fpr ? "--fpr" : !c->confirm ? "--confirm" : c->strict ? "--strict" :
	       c->allow_wide ? "--allow-wide" : c->seed ? "--seed" :
	       c->max_list_bytes != list_defaults.max_list_bytes ? "--max-list-bytes" :
	       c->max_entries != list_defaults.max_entries ? "--max-entries" :
	       c->srcs->v[0].list.format ? "--format" :
	       c->srcs->v[0].list.subdomains ? "--subdomains" : NULL;
}

static void print_art_report(const char *path, const struct bg_art *a,
			     const struct bg_load_report *r, double total)
{
	const struct bg_filter_params *fp = &r->plan;
	char hex[65], mem[32];

	/* its checksum, as sha256sum prints it (once it is live: a read of
	 * the file, not part of the swap) */
	bg_art_file_sha(a, hex);
	bg_fmt_bytes(mem, sizeof(mem), (double)fp->bytes);
	printf("artifact:         %s (sha256 %s", path, hex);
	if (a->h->generation)
		printf(", generation %llu", (unsigned long long)a->h->generation);
	printf(")\n");
	printf("filter:           %llu Bloom keys, %u blocks of 512 bits, k=%u, "
	       "%.2f Bloom bits/key; %llu IPv4, %llu IPv6 prefixes, %llu names\n",
	       (unsigned long long)fp->n, fp->nblocks, fp->k, fp->bits_per_entry,
	       (unsigned long long)fp->prefixes4, (unsigned long long)fp->prefixes6,
	       (unsigned long long)a->h->plan.names);
	printf("false positives:  %.6f predicted per address or query in the "
	       "Bloom part (target %g)", fp->predicted_addr, fp->target);
	if (fp->fp_nbuckets)
		printf("; %.1e after the exact stage", fp->predicted_confirmed);
	printf("\nmemory:           %s", mem);
	if (fp->n)
		printf(" (%.2f map bytes/key)", (double)fp->bytes / (double)fp->n);
	if (r->reshaped)
		printf(" (the %scapacity is now %u elements, new programs "
		       "swapped in)", r->reshaped == 2 ? "growing " : "", r->grown);
	printf("\ntime:             %.1f ms (verify and copy %.1f, swap %.2f); "
	       "nothing parsed or built\n", total, r->ms[BG_STAGE_BUILD],
	       r->ms[BG_STAGE_PUBLISH]);
}

/* load FILE of an artifact: verified while copied into a new map, swapped
 * in under the lock; the record names the file for check. */
static int load_artifact(const struct list_ctx *c, const char *path,
			 const struct bg_protect_set *protect)
{
	const char *opt = list_opt_given(c);
	struct bg_load_report r;
	struct bg_state st;
	struct bg_art a;
	char why[512];
	double t0 = bg_mono_ms();
	int ret;

	if (opt)
		return cli_fail(EXIT_USAGE, "load: %s applies to lists; an artifact "
				"was built with its own (bloomgate inspect %s)", opt,
				path);
	ret = bg_art_open(path, &a, why, sizeof(why));
	if (ret)
		return cli_fail(EXIT_LIST, "%s: %s; the running filter is unchanged",
				path, why);
	if ((ret = cli_open_state(&st, 1))) {
		bg_art_close(&a);
		return ret;
	}
	bg_load_report_init(&r);
	ret = bg_art_commit(&st, &a, path, 0, 0, protect, &r);
	bg_state_close(&st);
	if (ret)
		ret = cli_fail(r.failed <= BG_STAGE_PLAN ? EXIT_LIST : 1,
			       "%s: %s; the running filter is unchanged", path, r.msg);
	else if (r.failed == BG_STAGE_RECORD)
		cli_fail(0, "%s", r.msg);
	if (!ret) {
		print_art_report(path, &a, &r, bg_mono_ms() - t0);
		bg_print_protect(stdout, NULL, &r);
	}
	bg_load_report_free(&r);
	bg_art_close(&a);
	return ret;
}

/* The protected set this load makes live: the attachments' (st, open),
 * resolv.conf's and --protect's; NULL, said, when it cannot be. */
static struct bg_protect_set *gather_protect(const struct bg_state *st,
					     const struct list_ctx *c)
{
	struct bg_protect_src src = { .st = st, .extra = c->protect,
				      .n_extra = c->n_protect };
	struct bg_protect_set *s = malloc(sizeof(*s));
	char why[256];

	if (!s) {
		cli_fail(1, "out of memory");
		return NULL;
	}
	if (bg_protect_gather(&src, s, why, sizeof(why))) {
		cli_fail(1, "%s; the running filter is unchanged", why);
		free(s);
		return NULL;
	}
	return s;
}

int cli_cmd_load(int argc, char **argv)
{
	struct list_ctx c = list_defaults;
	struct bg_load_opts o = { .diag = list_print_diag };
	struct bg_load_report r;
	struct bg_blocklist bl;
	struct bg_sources srcs;
	struct bg_state st;
	struct bg_premap pm = BG_PREMAP_INIT;
	struct bg_protect_set *protect;
	pid_t agent;
	int ret;

	bg_sources_init(&srcs);
	c.srcs = &srcs;
	if ((ret = cli_parse_args(&cli_load_cmd, &argc, argv, &c))) {
		bg_sources_free(&srcs);
		return ret < 0 ? 0 : ret;
	}
	/* Not attached: said at once, not after a long parse. */
	if ((ret = cli_need_root()) || (ret = cli_open_state(&st, 0))) {
		bg_sources_free(&srcs);
		return ret;
	}
	protect = gather_protect(&st, &c);
	bg_state_close(&st);
	if (!protect) {
		bg_sources_free(&srcs);
		return 1;
	}
	/* The agent's filter is the agent's: a load would silently replace
	 * its lists (until its next rebuild), while its status and metrics
	 * still describe its own filter. */
	if (!c.force && bg_instance_running(&agent)) {
		bg_sources_free(&srcs);
		free(protect);
		return cli_fail(1, "the agent (pid %ld) feeds this filter (pin "
				"directory %s): change its lists, or use --force to "
				"replace its filter until its next rebuild",
				(long)agent, bg_pin_dir());
	}
	if (c.artifact || (srcs.n == 1 && !srcs.v[0].list.allow &&
			   bg_art_is_artifact(srcs.v[0].path))) {
		ret = load_artifact(&c, srcs.v[0].path, protect);
		bg_sources_free(&srcs);
		free(protect);
		return ret;
	}
	list_load_opts(&c, &o);
	o.protect = protect;
	/* the filter map made while the keys are sorted (kern/load.h) */
	o.parsed = bg_premap_parsed;
	o.parsed_ctx = &pm;
	bg_load_report_init(&r);
	/* Parse without the lock: a FIFO or a huge list holds up nobody.
	 * Then the lock, only to build, publish and record: concurrent loads
	 * queue there, and the last to take it is the one live. */
	ret = bg_load_prepare(&o, &bl, &r);
	if (!ret) {
		ret = cli_open_state(&st, 1);
		if (ret) {
			bg_premap_drop(&pm);
			bg_blocklist_free(&bl);
			bg_load_report_free(&r);
			bg_sources_free(&srcs);
			free(protect);
			return ret;
		}
		ret = bg_load_commit(&st, &o, &bl, &r);
		bg_state_close(&st);
	}
	bg_premap_drop(&pm);
	bg_blocklist_free(&bl);
	if (ret)
		ret = cli_fail(r.failed <= BG_STAGE_PLAN ? EXIT_LIST : 1,
			   "%s; the running filter is unchanged", r.msg);
	else if (r.failed == BG_STAGE_RECORD)
		cli_fail(0, "%s", r.msg);
	if (!ret) {
		bg_print_load_report(stdout, &srcs, &r);
		bg_print_protect(stdout, &srcs, &r);
	}
	bg_load_report_free(&r);
	bg_sources_free(&srcs);
	free(protect);
	return ret;
}
