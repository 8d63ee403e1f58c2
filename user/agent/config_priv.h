/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The config parser's parts (user/agent/config.h is its interface), shared
 * by its four files: config_yaml.c (libyaml's events into a tree of
 * scalars, sequences and maps, each with its line), config_keys.c (the
 * tables of the keys each section accepts, and their description for
 * bloomgate.yaml(5)), config_check.c (a value against its key's type and
 * check) and config.c (the walk of the tree against the tables, the checks
 * across keys, the defaults).
 */
#ifndef BLOOMGATE_AGENT_CONFIG_PRIV_H
#define BLOOMGATE_AGENT_CONFIG_PRIV_H

#include <stddef.h>
#include <errno.h>

#include "agent/config.h"
#include "core/opts.h" /* struct bg_opt_enum */

/* ---- the tree (config_yaml.c) ---- */

enum ykind { Y_SCALAR, Y_SEQ, Y_MAP };

extern const char *const ykind_name[];

struct ynode {
	enum ykind kind;
	size_t line; /* 1-based */
	char *text; /* scalar */
	int plain; /* scalar written without quotes: only then can it be null */
	struct ynode **kids; /* map: key, value, key, value... */
	size_t n, cap;
};

struct pctx {
	const char *file;
	const char *buf; /* the config's text, len bytes */
	size_t len;
	char *err;
	size_t errlen;
	char where[96]; /* the key being read: "lists[2].refresh" */
	char quote[96]; /* the value, quoted for a message */
};

#define bad(p, line, ...) cfg_fail(p, -EINVAL, line, __VA_ARGS__)

/* ---- what each key accepts (config_keys.c) ---- */

/* ---- what each key accepts ---- */

enum ftype {
	F_SECTION, /* interfaces:, lists: (walked by their own function) */
	F_BOOL, /* int */
	F_FLAG, /* uint8_t, 0 or 1: a read option (struct bg_list_desc) */
	F_NUMBER, /* double in [min, max] */
	F_DURATION, /* double seconds in [min, max] */
	F_SHARE, /* double in [0, 1], or "N%" */
	F_SIZE, /* uint64_t >= 1 */
	F_COUNT, /* uint64_t in [min, max], decimal digits only */
	F_ENUM, /* int, from values[] */
	F_FORMAT, /* uint8_t, enum bg_format (struct bg_list_desc) */
	F_PORTS, /* __u16[BG_DNS_PORTS_MAX] */
	F_STR, /* char *, checked by check */
	F_WORDS, /* char *: a list of names ([a, b] or one), comma-joined */
	F_PROTECT, /* struct bg_cfg_protect: addresses and prefixes */
};

enum fcheck { C_ABSPATH, C_URL, C_LISTNAME, C_IFNAME, C_HOSTPORT, C_EVENTS, C_DB };

/* May be null (`metrics:`, `events: ~`): stored as NULL. */
#define FF_NULLABLE 0x1
/* Numbers: the value must be > min, not >=. */
#define FF_MIN_OPEN 0x2

struct field {
	const char *key; /* NULL ends a table */
	enum ftype type;
	size_t off;
	const struct bg_opt_enum *values; /* F_ENUM */
	enum fcheck check; /* F_STR */
	double min, max;
	unsigned int flags;
	/* One line for bloomgate.yaml(5) (bg_config_keys()). */
	const char *help;
	/*
	 * A default that depends on other keys (refresh: a URL's or a
	 * path's), written from the constants the parser uses. NULL: the
	 * default is read at off from the section's defaults (the same
	 * *_defaults() function the parser starts each item from).
	 */
	void (*def)(char *buf, size_t len);
};

/* The defaults that depend on other keys, for bg_config_keys(). */

#define FIELDS_MAX 24

/*
 * The tables are indexed by these enums so that the checks across keys
 * (walk_lists()) name a key by its index and cannot point at another.
 */
enum { R_INTERFACES, R_FPR, R_CONFIRM, R_STATE_DIR, R_METRICS, R_EVENTS, R_DETACH,
       R_DEBOUNCE, R_MAX_LIST_BYTES, R_MAX_ENTRIES, R_PROTECT, R_LISTS, R_ARTIFACT,
       R_FLEET, R__COUNT };

enum { I_NAME, I_MODE, I_MATCH, I_ACTION, I_DNS_ACTION, I_DNS_PORTS,
       I_CAPACITY, I_GROW, I_CHAIN, I_UNPARSED, I__COUNT };

enum { L_NAME, L_URL, L_PATH, L_FORMAT, L_SUBDOMAINS, L_ALLOW, L_REFRESH,
       L_TIMEOUT, L_MAX_BYTES, L_MAX_SHRINK, L_ALLOW_WIDE, L_CROWDSEC,
       L_API_KEY_FILE, L_UPDATE_FREQ, L_ORIGINS, L_SCOPES, L_SCEN_IN,
       L_SCEN_OUT, L_MAX_RANGE4, L_MAX_RANGE6, L__COUNT };

enum { A_URL, A_PATH, A_REFRESH, A_TIMEOUT, A_MAX_BYTES, A__COUNT };

enum { FL_DB, FL_GATEWAY, FL_POLL, FL_REPORT, FL_ALLOW_ROLLBACK, FL__COUNT };

_Static_assert(R__COUNT <= FIELDS_MAX && I__COUNT <= FIELDS_MAX &&
		       L__COUNT <= FIELDS_MAX && A__COUNT <= FIELDS_MAX &&
		       FL__COUNT <= FIELDS_MAX,
	       "lines[] holds every key of a table");

void cfg_ynode_free(struct ynode *y);
const char *cfg_q(struct pctx *p, const char *s);
int cfg_y_load(struct pctx *p, const char *buf, size_t len,
	       struct ynode **root);
int cfg_y_null(const struct ynode *y);
const char *cfg_num_range(const struct field *f, char *buf, size_t len);
void cfg_key_names(const struct field *f, char *buf, size_t len);
void cfg_enum_names(const struct bg_opt_enum *v, char *buf, size_t len);
int cfg_set_field(struct pctx *p, const struct field *f,
		  const struct ynode *y, void *base);
extern const struct field cfg_root_fields[R__COUNT + 1];
extern const struct field cfg_iface_fields[I__COUNT + 1];
extern const struct field cfg_list_fields[L__COUNT + 1];
extern const struct field cfg_artifact_fields[A__COUNT + 1];
extern const struct field cfg_fleet_fields[FL__COUNT + 1];
int cfg_root_defaults(struct bg_config *c);
void cfg_iface_defaults(struct bg_cfg_iface *f);
void cfg_list_defaults(struct bg_cfg_list *l);
void cfg_artifact_defaults(struct bg_cfg_list *l);
void cfg_fleet_defaults(struct bg_cfg_fleet *f);
int cfg_fail(struct pctx *p, int ret, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
