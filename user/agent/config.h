/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's configuration file (`bloomgate agent --config FILE`), YAML
 * read with libyaml into plain structs. Strict on purpose: an agent runs
 * unattended, so a misspelt key or a value it would have to guess about
 * must stop it at start (and `agent --check` in ExecStartPre) with the
 * file and line, never be ignored. The enum names come from the tables
 * that `bloomgate attach` and `load --format` use (user/core/attach_opts.h,
 * user/core/format.h): one vocabulary for the CLI and the config. Core: no
 * libbpf.
 */
#ifndef BLOOMGATE_CONFIG_H
#define BLOOMGATE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "bloomgate/abi.h" /* struct bg_protect_item */
#include "core/attach_opts.h"
#include "core/sources.h"

#define BG_CONFIG_DEFAULT "/etc/bloomgate/bloomgate.yaml"

/* The defaults of what a config may leave out. */
#define BG_CFG_STATE_DIR "/var/lib/bloomgate"
#define BG_CFG_DEBOUNCE 0.5 /* s */
#define BG_CFG_URL_REFRESH 3600.0 /* s */
#define BG_CFG_TIMEOUT 30.0 /* s */
#define BG_CFG_MAX_BYTES (512ull << 20)
#define BG_CFG_MAX_SHRINK 0.5
/* A list name is also its cache file's name in state_dir. */
#define BG_CFG_NAME_MAX 64
/* A config larger than this is not a config (and would be read whole). */
#define BG_CFG_FILE_MAX (1u << 20)

struct bg_cfg_iface {
	char *name; /* interface name: 1..IFNAMSIZ-1 bytes, no '/' or blank */
	struct bg_attach_opts attach; /* bg_attach_defaults for what is absent */
	size_t line; /* where it was declared (its "- " item) */
};

/* What a source of the agent is: a list (parsed into the filter), an
 * artifact (core/artifact.h: a built filter, verified and swapped in as it
 * is), or the fleet store's current generation (agent/fleet.h). */
enum bg_src_kind {
	BG_SRC_LIST = 0,
	BG_SRC_ARTIFACT = 1,
	BG_SRC_FLEET = 2,
	BG_SRC_CROWDSEC = 3, /* a CrowdSec local API's decisions (agent/crowdsec.h) */
};

/* crowdsec: update_frequency's default (s) */
#define BG_CFG_CROWDSEC_EVERY 10.0
/* crowdsec: a pull's time limit by default (s): the local API (1.4.6) takes
 * some 30 s to answer a million decisions */
#define BG_CFG_CROWDSEC_TIMEOUT 120.0
/* crowdsec: the widest Range decision taken by default. An IPv4 /16 is
 * 65,536 addresses, a large hosting provider's block: wider is a whole
 * network, an ISP's or a region's (CrowdSec itself takes a /8). An IPv6
 * /32 is the usual allocation of a whole ISP (a site gets a /48): wider
 * spans several. */
#define BG_CFG_CS_RANGE4 16
#define BG_CFG_CS_RANGE6 32

struct bg_cfg_list {
	/*
	 * What the list is and how it is read; the config owns its strings.
	 * name: unique, [A-Za-z0-9._-]{1,64}, not starting with '.'; url:
	 * http:// or https://, or NULL; path: absolute, or NULL; exactly one
	 * of url and path. format: BG_FMT_AUTO when absent; subdomains,
	 * allow (an allowlist), allow_wide (`load --allow-wide`; addr or
	 * detected lists only): 0 or 1.
	 */
	struct bg_list_desc list;
	/* Seconds. URL: default 3600, > 0. Path: 0 (watched, no timer)
	 * unless given. */
	double refresh;
	double timeout; /* seconds, > 0; default 30 */
	uint64_t max_bytes; /* > 0; default 512 MiB; 10K, 64M, 2G accepted */
	/* Share 0..1 (or "50%"): a fetched copy with fewer than
	 * (1 - max_shrink) * the last good entries is refused; default 0.5;
	 * 1 disables the guard. */
	double max_shrink;
	size_t line; /* where it was declared (its "- " item) */
	uint8_t kind; /* enum bg_src_kind */
	/* kind BG_SRC_CROWDSEC (`crowdsec: URL`, the local API, in list.url;
	 * `update_frequency` in refresh): the bouncer key's file (absolute;
	 * read at each pull, never logged), and the stream's filters as the
	 * firewall bouncer has them, comma-joined as the API takes them
	 * (NULL: none; scopes: NULL means ip,range) */
	char *api_key_file;
	char *cs_origins, *cs_scopes, *cs_scen_in, *cs_scen_out;
	/* the widest Range decision taken, a prefix length: IPv4 8..32
	 * (default BG_CFG_CS_RANGE4), IPv6 16..128 (BG_CFG_CS_RANGE6) */
	uint64_t cs_max_range4, cs_max_range6;
};

/* The name of the source an `artifact:` or `fleet:` section makes: its
 * copy is STATE_DIR/lists/NAME.list, as a list's. */
#define BG_CFG_ARTIFACT_NAME "artifact"
#define BG_CFG_FLEET_NAME "fleet"
/* fleet: defaults */
#define BG_CFG_FLEET_POLL 60.0 /* s: the slow poll, for a missed NOTIFY */
#define BG_CFG_FLEET_REPORT 15.0 /* s: the gateway's report to the store */
#define BG_CFG_ARTIFACT_MAX_BYTES (8ull << 30)

/* fleet: a gateway of a fleet (agent/fleet.h). */
struct bg_cfg_fleet {
	char *db; /* libpq connection string or postgresql:// URL */
	char *gateway; /* default: the host name */
	double poll, report; /* seconds */
	/* take a newest generation older than the one applied (rows deleted,
	 * a store restored): 0, refused (the default) */
	int allow_rollback;
	size_t line;
};

/* protect: the operator's part of the protected set (core/protect.h),
 * items of kind BG_PROTECT_CONFIG. */
struct bg_cfg_protect {
	struct bg_protect_item *v;
	size_t n;
};

struct bg_config {
	char *file; /* the name given to bg_config_load()/_parse_buf() */
	struct bg_cfg_iface *ifaces;
	size_t n_ifaces; /* 0: only feed an already attached bloomgate */
	double fpr; /* the Bloom part's target, BG_FPR_MIN..BG_FPR_MAX; default
		       bg_fpr_default(confirm) */
	int confirm; /* the exact stage (load --confirm); default 1 */
	char *state_dir; /* absolute; default BG_CFG_STATE_DIR */
	/* "HOST:PORT" (IPv4, [IPv6] or localhost; port 1..65535), or NULL:
	 * no metrics endpoint. No name is ever looked up. */
	char *metrics;
	/* Flag events as JSON lines: NULL none, "-" stdout, else an absolute
	 * file path. */
	char *events;
	int detach_on_stop; /* default 0: fail-static, the filter stays */
	double debounce; /* seconds, >= 0; default 0.5 */
	/* Bounds of every rebuild, as load's --max-list-bytes (each list
	 * file read, the copies of URLs included; a path list is not copied
	 * past it) and --max-entries: default BG_LIST_BYTES_MAX (4G) and
	 * BG_LOAD_ENTRIES_MAX (100M). */
	uint64_t max_list_bytes;
	uint64_t max_entries;
	struct bg_cfg_protect protect;
	/* the sources: lists (lists:), or one artifact (artifact:), or one
	 * fleet source (fleet:); never two of these kinds */
	struct bg_cfg_list *lists;
	size_t n_lists; /* >= 1 */
	struct bg_cfg_fleet fleet; /* fleet.db NULL: no fleet */
};

/*
 * Reads and validates the config at path into *c. 0, or -EINVAL (a bad
 * config), -ENOENT (no such file; other read errors as -errno), -ENOMEM,
 * with one line in err, without a newline: "FILE:LINE: reason" (LINE
 * 1-based, the line of the offending key or value) or "FILE: reason".
 * Reasons name the key as a path ("lists[2].refresh", indexes from 0)
 * and say why. On failure *c is left empty (bg_config_free() is safe).
 */
int bg_config_load(const char *path, struct bg_config *c, char *err,
		   size_t errlen);
/* The same for a config held in memory; name is used as FILE. */
int bg_config_parse_buf(const char *name, const char *buf, size_t len,
			struct bg_config *c, char *err, size_t errlen);
/* Frees what c holds and zeroes it. */
void bg_config_free(struct bg_config *c);

/*
 * One key the config accepts, described from the very tables the parser
 * walks (bloomgate.yaml(5) is generated from them: `bloomgate help --man
 * 5`). Defaults are read from the values the parser starts each item from.
 */
struct bg_config_key {
	const char *section; /* "" (the top level), "interfaces", "lists",
				"artifact", "fleet" */
	int seq; /* the section is a list of maps (interfaces:, lists:) */
	const char *key;
	/* "boolean", "number", "duration", "share", "size", "count",
	 * "one of", "ports", "names", "addresses", "path", "URL", "name", "interface",
	 * "HOST:PORT", "path or -", "connection string", "section" */
	const char *type;
	const char *help; /* one line */
	const struct bg_opt_enum *values; /* "one of" with a line each; or NULL */
	char names[256]; /* "one of": the values, "native, skb"; "" otherwise */
	char range[64]; /* "1e-09..0.5", "above 0..86400 s"; "" none */
	char def[128]; /* the default, as the config writes it; "" none */
};

/* Calls fn for every key, the top level's first, then each section's, in
 * the order of the tables. 0, or -ENOMEM. */
int bg_config_keys(void (*fn)(void *ctx, const struct bg_config_key *k),
		   void *ctx);

/*
 * Durations: a decimal number ("90", "1.5") with an optional unit ms, s,
 * m, h or d, no blanks: "1h" -> 3600, "500ms" -> 0.5. -1 if invalid
 * (negative numbers, exponents, hex and overflow included).
 */
double bg_config_duration(const char *s);
/* Sizes: bg_opt_size (opts.h), as load's --max-list-bytes reads them. */

#endif
