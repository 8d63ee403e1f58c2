// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Domain lists: plain domains, hosts files and Adblock-style rules into
 * validated, lowercased names, each with a kind (the name, the name and its
 * subdomains, or its subdomains only) and an allow flag.
 *
 * One concern, though a long file: the three formats share one name
 * grammar (normalise()), one storage (an arena and an entry array), one
 * sort, and `check`'s re-reading of a list (bg_names_find()) must parse
 * exactly as the load did, so it calls the same line parsers. Detection
 * across formats and dispatch live above, in user/core/sources.c.
 *
 * Lines. A UTF-8 byte-order mark at the start, CRLF line ends, blanks
 * (spaces, tabs) around the text, blank lines and a missing final newline
 * are all fine. A line with a NUL byte ("binary data") or longer than
 * BG_DOM_LINE_MAX bytes ("line too long") is rejected. Every rejected entry
 * is reported as "name:line: reason: 'text'" (the line without surrounding
 * blanks, cut to 80 bytes (bg_report_line) with "...", control bytes as \xNN)
 * and counted in bg_names.rejected; the parse goes on without it, and fails
 * with -EINVAL at the end in strict mode.
 *
 * Formats, detected per file by bg_dom_detect() unless opts->format says:
 *
 *  plain    "example.com": one name a line, the name only (BG_NAME_EXACT),
 *           or the name and its subdomains (BG_NAME_TREE) when
 *           opts->subdomains says that is what the list means (HaGeZi's
 *           "Domains (including possible subdomains)"). "*.example.com" is
 *           its subdomains only (BG_NAME_SUBS). '#' starts a comment
 *           anywhere. Hosts-file lines and Adblock syntax are rejected, with
 *           a reason saying so ("--format" can say what the file is).
 *  hosts    "0.0.0.0 a.example b.example": an address, then one or more
 *           names, each BG_NAME_EXACT whatever opts->subdomains says: a
 *           hosts file maps a host, not a zone (Pi-hole and AdGuard Home
 *           read it so; StevenBlack lists "x.com" and "www.x.com" one by
 *           one). The address must be one that blocks: 0.0.0.0 or :: (any
 *           spelling, "0:0:0:0:0:0:0:0" too), or a loopback address
 *           (127.0.0.0/8, ::1); a line mapping a name elsewhere
 *           ("192.0.2.1 nas.lan") is a redirect, not a block, and is
 *           rejected. A line holding a name alone is taken as that name
 *           (StevenBlack's list has two). '#' starts a comment anywhere
 *           ("x.com #ad" and "x.com#ad" alike). No wildcards.
 *  adblock  The DNS subset of Adblock Plus / AdGuard syntax:
 *             ||example.com^     the name and its subdomains (TREE)
 *             ||*.example.com^   its subdomains only (SUBS)
 *             |example.com^      the name only (EXACT)
 *             example.com        the name only (EXACT; AdGuard Home's
 *                                "simple domain rule")
 *             @@ before any of these: an allow rule
 *           "^|" may end a rule. Modifiers: "$important" is accepted (it
 *           is not recorded: an allow rule always wins here); every other
 *           modifier is rejected as "unsupported modifier '$name'", as
 *           AdGuard Home leaves rules it cannot apply to DNS unused.
 *           Comments: "!" lines, "#" lines (not "##..."), and a blank
 *           followed by '#' or '!' after a rule; "[Adblock Plus 2.0]"-style
 *           header lines are skipped. Rejected: cosmetic rules ("##",
 *           "#@#", "#?#", "#$#", "#%#", ...), regular expressions
 *           ("/.../"), paths ("||example.com/ads"), anchors without '^'
 *           ("||example.com", a prefix pattern), '^' without an anchor,
 *           any other wildcard. Hosts-file lines are read as in a hosts
 *           file (AdGuard Home accepts them in any list).
 *
 * Detection looks at the first BG_DOM_DETECT_LINES meaningful lines (not
 * blank, not starting with '#'): Adblock if one starts with '[', '|', '!'
 * or "@@"; else hosts if one is an address followed by a name; else plain.
 * A late stray line cannot turn a whole list into another format.
 *
 * opts->allow makes every entry of the file an allow rule.
 *
 * Names (bg_name_normalise()): ASCII letters, digits, '-' and '_' (which
 * real lists use, as in "_dmarc.example.com"), in labels of 1..63 bytes
 * that neither start nor end with '-' ("xn--" punycode is fine), at most
 * 253 characters without the trailing dot (255 bytes in wire form). One
 * trailing dot is dropped; uppercase is folded to lowercase. A name with a
 * byte >= 0x80 is refused ("non-ASCII name (use punycode)"), and so is one
 * made only of digits and dots ("an IP address, not a name"); a name with
 * a label of letters among numeric ones ("192.0.2.1.example.net") is a
 * name and kept.
 *
 * Single-label names ("com", "router") are accepted, but when written bare
 * (a plain line, a hosts entry, an unanchored Adblock rule) they are
 * reported as "name:line: warning: single-label name: 'text'" and counted
 * in bg_names.warnings: bare, they are more often a mistake than a choice,
 * and with opts->subdomains one would block a whole top-level domain.
 * Written as "||com^" or "*.com" they are deliberate and go quietly.
 * Warnings never fail a parse, strict or not.
 *
 * A rule covering subdomains (BG_NAME_TREE or BG_NAME_SUBS) of a name of
 * more than BG_DNS_SUFFIX_MAX labels is kept but reported,
 * "name:line: warning: subdomain rule deeper than 10 labels, never
 * matched: 'text'" (for a name-and-subdomains rule: "name deeper than 10
 * labels, its subdomains are never matched (the name itself is)"), and
 * counted in bg_names.too_deep, not in warnings: the datapath probes
 * parent names of at most BG_DNS_SUFFIX_MAX labels (bloomgate/dns.h), so
 * such a rule never matches a subdomain. `load --strict` fails on it
 * (bg_source_parse()); this parser does not.
 *
 * Skipped, counted in bg_names.skipped and not reported, wherever they
 * appear as a name: the entries a hosts file carries for the machine
 * itself (localhost, localhost.localdomain, local, broadcasthost,
 * ip6-localhost, ip6-loopback, ip6-localnet, ip6-mcastprefix,
 * ip6-allnodes, ip6-allrouters, ip6-allhosts, and 0.0.0.0 as a name). Such
 * a line may map them to any address ("255.255.255.255 broadcasthost",
 * "fe80::1%lo0 localhost").
 *
 * Counting: bg_names.lines counts lines read, accepted the entries added,
 * rejected the reports of rejected entries (one per line, except a hosts
 * line with several bad names, one per name), skipped the names above.
 *
 * bg_names_finish() sorts by name (strcmp() order), kind, allow, and keeps
 * the first of equal entries (lowest file, then line). An exact name and
 * the same name as a tree are two entries: nothing is dropped for being
 * covered by another entry (the filter probes parent names anyway).
 *
 * Speed: lines are parsed in place; names are normalised straight into
 * large shared blocks of memory (no allocation per name) and entries go to
 * an amortised-doubling array. bg_names_finish() radix-sorts on the first
 * eight bytes of each name and sorts only the runs sharing them by the
 * whole key.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "bloomgate/dns.h"
#include "core/grow.h"
#include "core/domains.h"
#include "core/lines.h"
#include "core/io.h"
#include "core/ip.h"

/* Longest line accepted, in bytes, without its "\n" or "\r\n". */
#define BG_DOM_LINE_MAX 4096
/* Source bytes of a rejected line quoted in its report. */
/* First allocation of the entry array, in entries. */
#define BG_DOM_CAP_MIN 1024
/* Meaningful lines bg_dom_detect() looks at. */
#define BG_DOM_DETECT_LINES 100
/* A name in text form, without the trailing dot; a label. */
#define BG_NAME_MAX 253
#define BG_LABEL_MAX 63
/* Blocks of name storage: the first, and the most one grows to. */
#define BG_ARENA_MIN (64 * 1024)
#define BG_ARENA_MAX (1024 * 1024)
/* Files one bg_names can hold: bg_name.file is 16 bits. */
#define BG_DOM_FILES_MAX ((size_t)UINT16_MAX + 1)

static const char R_BINARY[] = "binary data";
static const char R_TOO_LONG[] = "line too long";
static const char R_EMPTY[] = "empty name";
static const char R_NAME_LONG[] = "name longer than 253 characters";
static const char R_LABEL_EMPTY[] = "empty label";
static const char R_LABEL_LONG[] = "label longer than 63 characters";
static const char R_HYPHEN[] = "label starts or ends with a hyphen";
static const char R_NON_ASCII[] = "non-ASCII name (use punycode)";
static const char R_CHAR[] = "invalid character in name";
static const char R_IP[] = "an IP address, not a name";
static const char R_URL[] = "a URL, not a name";
static const char R_PATH[] = "a path, not a name";
static const char R_WILDCARD[] = "wildcard only allowed as a leading '*.'";
static const char R_WILDCARD_HOSTS[] = "wildcards are not allowed in hosts files";
static const char R_TRAILING[] = "trailing text after name";
static const char R_HOSTS_IN_PLAIN[] = "hosts-file line in a plain list";
static const char R_ADBLOCK_IN_PLAIN[] = "Adblock syntax in a plain list";
static const char R_ADBLOCK_IN_HOSTS[] = "Adblock syntax in a hosts file";
static const char R_NOT_IP[] = "first field is not an IP address";
static const char R_NO_NAME[] = "no name after the address";
static const char R_NOT_BLOCKING[] =
	"not a blocking address (0.0.0.0, 127.x.x.x, :: or ::1)";
static const char R_COSMETIC[] = "cosmetic rule, not a DNS rule";
static const char R_REGEX[] = "regex rules are not supported";
static const char R_MOD_EMPTY[] = "empty modifier";
static const char R_NO_CARET[] = "no '^' after the name (a prefix pattern)";
static const char R_UNANCHORED[] = "'^' without '||' or '|' before the name";
static const char R_AFTER_CARET[] = "trailing text after '^'";
static const char R_TRAILING_RULE[] = "trailing text after rule";
static const char W_SINGLE[] = "warning: single-label name";
static const char W_DEEP_SUBS[] =
	"warning: subdomain rule deeper than " BG_TEXTIFY(BG_DNS_SUFFIX_MAX)
	" labels, never matched";
static const char W_DEEP_TREE[] =
	"warning: name deeper than " BG_TEXTIFY(BG_DNS_SUFFIX_MAX)
	" labels, its subdomains are never matched (the name itself is)";

/* ---- Storage ------------------------------------------------------------ */

/*
 * Names live in blocks that never move (bg_name.name points into them),
 * newest first; a block is never shared between two bg_names.
 */
struct bg_arena {
	struct bg_arena *next;
	size_t used, cap;
	char data[];
};

void bg_names_init(struct bg_names *l)
{
	memset(l, 0, sizeof(*l));
}

void bg_names_free(struct bg_names *l)
{
	struct bg_arena *a = l->arena, *next;
	size_t i;

	for (; a; a = next) {
		next = a->next;
		free(a);
	}
	for (i = 0; i < l->nfiles; i++)
		free(l->files[i]);
	free(l->files);
	free(l->v);
	bg_names_init(l);
}

/* Room for n bytes of name text, or NULL; arena_commit() keeps them. */
static char *arena_room(struct bg_names *l, size_t n)
{
	struct bg_arena *a = l->arena, *na;
	size_t cap;

	if (a && a->cap - a->used >= n)
		return a->data + a->used;
	cap = a ? a->cap * 2 : BG_ARENA_MIN;
	if (cap > BG_ARENA_MAX)
		cap = BG_ARENA_MAX;
	if (cap < n)
		cap = n;
	na = malloc(sizeof(*na) + cap);
	if (!na)
		return NULL;
	na->next = a;
	na->used = 0;
	na->cap = cap;
	l->arena = na;
	return na->data;
}

static void arena_commit(struct bg_names *l, size_t n)
{
	((struct bg_arena *)l->arena)->used += n;
}

static int push_name(struct bg_names *l, const struct bg_name *e)
{
	if (bg_grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v), BG_DOM_CAP_MIN))
		return -ENOMEM;
	l->v[l->n++] = *e;
	return 0;
}

/* ---- Names -------------------------------------------------------------- */

static inline int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/*
 * The byte a name may hold, lowercased, or 0: letters, digits, '-', '_'.
 * '.' is handled apart.
 */
static const unsigned char name_char[256] = {
#define L(c) [c] = c
#define U(c) [c] = c - 'A' + 'a'
	L('-'), L('_'),
	L('0'), L('1'), L('2'), L('3'), L('4'),
	L('5'), L('6'), L('7'), L('8'), L('9'),
	L('a'), L('b'), L('c'), L('d'), L('e'), L('f'), L('g'), L('h'),
	L('i'), L('j'), L('k'), L('l'), L('m'), L('n'), L('o'), L('p'),
	L('q'), L('r'), L('s'), L('t'), L('u'), L('v'), L('w'), L('x'),
	L('y'), L('z'),
	U('A'), U('B'), U('C'), U('D'), U('E'), U('F'), U('G'), U('H'),
	U('I'), U('J'), U('K'), U('L'), U('M'), U('N'), U('O'), U('P'),
	U('Q'), U('R'), U('S'), U('T'), U('U'), U('V'), U('W'), U('X'),
	U('Y'), U('Z'),
#undef L
#undef U
};

/* Why a name holding a byte outside name_char[] is refused. */
static __attribute__((noinline, cold)) const char *
explain_char(const char *s, size_t n)
{
	uint8_t a6[16];
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80)
			return R_NON_ASCII;
	if (memmem(s, n, "://", 3))
		return R_URL;
	if (memchr(s, ':', n) && bg_parse_ip6(s, n, a6) == 0)
		return R_IP;
	if (memchr(s, '/', n))
		return R_PATH;
	if (memchr(s, '*', n))
		return R_WILDCARD;
	return R_CHAR;
}

/*
 * The work of bg_name_normalise(): writes the name to out (at least
 * BG_NAME_MAX + 1 bytes), NUL-terminated, and returns its length and its
 * number of labels; or -1 and *reason. One pass: the first fault from the
 * left is the one reported, the overall length last.
 */
static ssize_t normalise(const char *in, size_t n, char *out,
			 const char **reason, unsigned int *nlabels)
{
	size_t i, llen = 0;
	unsigned int labels = 0;
	int name_alpha = 0;

	if (n && in[n - 1] == '.')
		n--;
	if (!n) {
		*reason = R_EMPTY;
		return -1;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c == '.') {
			if (!llen) {
				*reason = R_LABEL_EMPTY;
				return -1;
			}
			if (in[i - 1] == '-') {
				*reason = R_HYPHEN;
				return -1;
			}
			labels++;
			llen = 0;
		} else {
			c = name_char[c];
			if (!c) {
				*reason = explain_char(in, n);
				return -1;
			}
			if (c == '-' && !llen) {
				*reason = R_HYPHEN;
				return -1;
			}
			if (++llen > BG_LABEL_MAX) {
				*reason = R_LABEL_LONG;
				return -1;
			}
			name_alpha |= c > '9' || c < '0';
		}
		if (i < BG_NAME_MAX)
			out[i] = (char)c;
	}
	/* n > 0 and in[n - 1] is not the dot removed: a label ends here */
	if (!llen) {
		*reason = R_LABEL_EMPTY;
		return -1;
	}
	if (in[n - 1] == '-') {
		*reason = R_HYPHEN;
		return -1;
	}
	if (n > BG_NAME_MAX) {
		*reason = R_NAME_LONG;
		return -1;
	}
	if (!name_alpha) {
		*reason = R_IP;
		return -1;
	}
	out[n] = '\0';
	*nlabels = labels + 1;
	return (ssize_t)n;
}

int bg_name_normalise(const char *in, size_t len, char *out,
		      const char **reason)
{
	const char *r = R_EMPTY;
	unsigned int labels;

	if (!in || normalise(in, len, out, &r, &labels) < 0) {
		if (reason)
			*reason = r;
		return -1;
	}
	return 0;
}

/*
 * The names a hosts file gives the machine itself: never blocked, skipped
 * wherever they appear. Compared after normalising, but for "0.0.0.0",
 * which normalising refuses as an address (see is_zero_name()).
 */
static const char *const special_names[] = {
	"localhost", "localhost.localdomain", "local", "broadcasthost",
	"ip6-localhost", "ip6-loopback", "ip6-localnet", "ip6-mcastprefix",
	"ip6-allnodes", "ip6-allrouters", "ip6-allhosts",
};

static int is_special(const char *name, size_t n)
{
	size_t i;

	/* every special name starts with 'b', 'i' or 'l' */
	if (n > 21 || (name[0] != 'b' && name[0] != 'i' && name[0] != 'l'))
		return 0;
	for (i = 0; i < sizeof(special_names) / sizeof(special_names[0]); i++)
		if (strlen(special_names[i]) == n &&
		    !memcmp(special_names[i], name, n))
			return 1;
	return 0;
}

/* "0.0.0.0" (or "0.0.0.0.") as a name: the odd line some hosts files carry. */
static int is_zero_name(const char *s, size_t n)
{
	if (n == 8 && s[7] == '.')
		n--;
	return n == 7 && !memcmp(s, "0.0.0.0", 7);
}

/* ---- Addresses ---------------------------------------------------------- */

/*
 * The address field of a hosts line: 0 if it is an address at all (an
 * IPv6 zone index, "fe80::1%lo0", allowed), and *blocking set when a name
 * mapped to it is blocked: 0.0.0.0, 127.0.0.0/8, ::, ::1. Else -1.
 */
static int parse_hosts_addr(const char *s, size_t n, int *blocking)
{
	static const uint8_t any6[16], loop6[16] = { [15] = 1 };
	const char *pct;
	uint8_t a6[16];
	uint32_t a4;

	if (bg_parse_ip4(s, n, &a4) == 0) {
		a4 = ntohl(a4);
		*blocking = a4 == 0 || (a4 >> 24) == 127;
		return 0;
	}
	if (!memchr(s, ':', n))
		return -1;
	pct = memchr(s, '%', n);
	if (bg_parse_ip6(s, pct ? (size_t)(pct - s) : n, a6))
		return -1;
	*blocking = !pct && (!memcmp(a6, any6, 16) || !memcmp(a6, loop6, 16));
	return 0;
}

/* ---- Reports ------------------------------------------------------------ */

/* ---- Lines -------------------------------------------------------------- */


/* [*s, *e) without blanks at either end. */
static inline void trim(const char **s, const char **e)
{
	while (*s < *e && is_space(**s))
		(*s)++;
	while (*e > *s && is_space((*e)[-1]))
		(*e)--;
}

/* The end of the token starting at s (the first blank, or e). */
static inline const char *token_end(const char *s, const char *e)
{
	while (s < e && !is_space(*s))
		s++;
	return s;
}

static inline const char *skip_blanks(const char *s, const char *e)
{
	while (s < e && is_space(*s))
		s++;
	return s;
}

/* Where a '#' comment starts in [s, e), or e. */
static inline const char *hash_comment(const char *s, const char *e)
{
	const char *h = memchr(s, '#', (size_t)(e - s));

	return h ? h : e;
}

/* A line that starts the way only Adblock rules do. */
static int adblock_start(const char *s, const char *e)
{
	return *s == '|' || *s == '!' || *s == '[' ||
	       (e - s >= 2 && s[0] == '@' && s[1] == '@');
}

static struct bg_reporter reporter_of(const struct bg_dom_opts *o)
{
	return o ? bg_reporter_make(o->report, o->diag, o->diag_ctx)
		 : bg_reporter_make(NULL, NULL, NULL);
}

/* The state of one parse. */
struct pctx {
	struct bg_names *l;
	struct bg_reporter rep;
	const char *name; /* the list, for reports */
	const char *ls, *le; /* the line, for reports */
	const char *buf; /* the list, for bg_entry_ref.line_off */
	const struct bg_dom_opts *o;
	size_t lineno;
	size_t rejected, warnings, too_deep;
	uint16_t file;
	int allow, subdomains;
	int err; /* -ENOMEM */
};

static void reject(struct pctx *c, const char *reason)
{
	c->rejected++;
	bg_report_line(&c->rep, c->name, c->lineno, reason, c->ls,
		    (size_t)(c->le - c->ls));
}

/*
 * Adds the name [s, s + n) of the kind given; bare: written without any
 * syntax around it (a single label earns a warning). Skips the special
 * names; rejects what does not normalise.
 */
static void add_name(struct pctx *c, const char *s, size_t n, int kind,
		     int allow, int bare)
{
	struct bg_names *l = c->l;
	struct bg_name e;
	const char *reason;
	unsigned int labels;
	ssize_t len;
	char *out;

	if (is_zero_name(s, n)) {
		l->skipped++;
		return;
	}
	out = arena_room(l, BG_NAME_MAX + 1);
	if (!out) {
		c->err = -ENOMEM;
		return;
	}
	len = normalise(s, n, out, &reason, &labels);
	if (len < 0) {
		reject(c, reason);
		return;
	}
	if (is_special(out, (size_t)len)) {
		l->skipped++;
		return;
	}
	e.name = out;
	e.kind = (uint8_t)kind;
	e.allow = (uint8_t)allow;
	e.file = c->file;
	e.line = c->lineno > UINT32_MAX ? UINT32_MAX : (uint32_t)c->lineno;
	if (push_name(l, &e) < 0) {
		c->err = -ENOMEM;
		return;
	}
	arena_commit(l, (size_t)len + 1);
	l->accepted++;
	if (c->o && c->o->entry) {
		struct bg_entry_ref ref = {
			.source = c->o->source, .line = c->lineno,
			.line_off = (uint64_t)(c->ls - c->buf),
			.line_len = (uint32_t)(c->le - c->ls),
			.kind = BG_ENTRY_NAME, .name_kind = (uint8_t)kind,
			.allow = (uint8_t)allow, .key = out,
		};

		c->o->entry(c->o->entry_ctx, 0, &ref);
	}
	if (kind != BG_NAME_EXACT && labels > BG_DNS_SUFFIX_MAX) {
		/* the datapath probes parents of at most BG_DNS_SUFFIX_MAX
		 * labels: kept (the builder leaves its subdomain key out) */
		c->too_deep++;
		bg_report_line(&c->rep, c->name, c->lineno,
			       kind == BG_NAME_SUBS ? W_DEEP_SUBS : W_DEEP_TREE,
			       c->ls, (size_t)(c->le - c->ls));
	}
	if (bare && labels == 1) {
		c->warnings++;
		bg_report_line(&c->rep, c->name, c->lineno, W_SINGLE, c->ls,
			    (size_t)(c->le - c->ls));
	}
}

/* "*.name": the name after "*.", and 1; else 0. */
static inline int wildcard(const char **s, const char *e)
{
	if (e - *s >= 2 && (*s)[0] == '*' && (*s)[1] == '.') {
		*s += 2;
		return 1;
	}
	return 0;
}

/* A plain list's line, [s, e) trimmed and not empty. */
static void plain_line(struct pctx *c, const char *s, const char *e)
{
	const char *t;
	int blocking, kind = c->subdomains ? BG_NAME_TREE : BG_NAME_EXACT;

	e = hash_comment(s, e);
	trim(&s, &e);
	if (s == e)
		return;
	if (adblock_start(s, e)) {
		reject(c, R_ADBLOCK_IN_PLAIN);
		return;
	}
	t = token_end(s, e);
	if (t < e) {
		reject(c, parse_hosts_addr(s, (size_t)(t - s), &blocking) == 0
				  ? R_HOSTS_IN_PLAIN
				  : R_TRAILING);
		return;
	}
	if (wildcard(&s, e))
		add_name(c, s, (size_t)(e - s), BG_NAME_SUBS, c->allow, 0);
	else
		add_name(c, s, (size_t)(e - s), kind, c->allow, 1);
}

/* A hosts file's line (or a hosts line in an Adblock list). */
static void hosts_line(struct pctx *c, const char *s, const char *e,
		       int in_adblock)
{
	const char *t, *n;
	int blocking, real = 0;

	e = hash_comment(s, e);
	trim(&s, &e);
	if (s == e)
		return;
	if (!in_adblock && adblock_start(s, e)) {
		reject(c, R_ADBLOCK_IN_HOSTS);
		return;
	}
	t = token_end(s, e);
	if (parse_hosts_addr(s, (size_t)(t - s), &blocking)) {
		if (t < e) {
			reject(c, R_NOT_IP);
			return;
		}
		/* a name alone: taken as if a blocking address came first */
		if (memchr(s, '*', (size_t)(e - s)))
			reject(c, R_WILDCARD_HOSTS);
		else
			add_name(c, s, (size_t)(e - s), BG_NAME_EXACT, c->allow,
				 1);
		return;
	}
	if (t == e) {
		reject(c, R_NO_NAME);
		return;
	}
	if (!blocking) {
		/* only the machine's own names may map elsewhere */
		char tmp[BG_NAME_MAX + 1];
		const char *r;
		unsigned int lb;
		ssize_t len;

		for (n = skip_blanks(t, e); n < e; n = skip_blanks(t, e)) {
			t = token_end(n, e);
			len = normalise(n, (size_t)(t - n), tmp, &r, &lb);
			if (is_zero_name(n, (size_t)(t - n)) ||
			    (len >= 0 && is_special(tmp, (size_t)len)))
				c->l->skipped++;
			else
				real++;
		}
		if (real)
			reject(c, R_NOT_BLOCKING);
		return;
	}
	for (n = skip_blanks(t, e); n < e && !c->err; n = skip_blanks(t, e)) {
		t = token_end(n, e);
		if (memchr(n, '*', (size_t)(t - n)))
			reject(c, R_WILDCARD_HOSTS);
		else
			add_name(c, n, (size_t)(t - n), BG_NAME_EXACT, c->allow,
				 1);
	}
}

/*
 * A cosmetic (element hiding, CSS, scriptlet, HTML filtering) separator in
 * [s, e): "##", "#@#", "#?#", "#$#", "#%#", "#@?#", "#@$#", "#@%#", "$$",
 * "$@$".
 */
static int has_cosmetic(const char *s, const char *e)
{
	const char *p;

	for (p = s; (p = memchr(p, '#', (size_t)(e - p))); p++) {
		const char *q = p + 1;

		if (q < e && *q == '@')
			q++;
		if (q < e && (*q == '?' || *q == '$' || *q == '%'))
			q++;
		if (q < e && *q == '#')
			return 1;
	}
	for (p = s; (p = memchr(p, '$', (size_t)(e - p))); p++) {
		const char *q = p + 1;

		if (q < e && *q == '@')
			q++;
		if (q < e && *q == '$')
			return 1;
	}
	return 0;
}

/*
 * The modifiers after '$', [s, e): 0 when all are understood; else reports
 * the first that is not and returns -1.
 */
static int check_modifiers(struct pctx *c, const char *s, const char *e)
{
	char why[96];
	const char *m, *t;

	if (s == e) {
		reject(c, R_MOD_EMPTY);
		return -1;
	}
	for (m = s; m <= e; m = t + 1) {
		t = memchr(m, ',', (size_t)(e - m));
		if (!t)
			t = e;
		if (t - m == 9 && !strncasecmp(m, "important", 9))
			continue;
		if (t == m) {
			reject(c, R_MOD_EMPTY);
			return -1;
		}
		snprintf(why, sizeof(why), "unsupported modifier '$%.*s'",
			 (int)(t - m > 40 ? 40 : t - m), m);
		reject(c, why);
		return -1;
	}
	return 0;
}

/* An Adblock list's line. */
static void adblock_line(struct pctx *c, const char *s, const char *e)
{
	const char *t, *r, *re, *d, *caret;
	int allow = c->allow, kind, bare = 0, blocking;

	trim(&s, &e);
	if (s == e || *s == '!')
		return;
	if (*s == '[' && e[-1] == ']')
		return; /* "[Adblock Plus 2.0]" */
	t = token_end(s, e);
	/* a cosmetic rule may hold blanks, but not before its separator */
	if (has_cosmetic(s, t)) {
		reject(c, R_COSMETIC);
		return;
	}
	if (*s == '#')
		return; /* "# comment" */
	if (parse_hosts_addr(s, (size_t)(t - s), &blocking) == 0) {
		hosts_line(c, s, e, 1);
		return;
	}
	/* after the rule, only a comment */
	r = skip_blanks(t, e);
	if (r < e && *r != '#' && *r != '!') {
		reject(c, R_TRAILING_RULE);
		return;
	}
	r = s;
	re = t;
	if (re - r >= 2 && r[0] == '@' && r[1] == '@') {
		allow = 1;
		r += 2;
	}
	if (r < re && *r == '/') {
		reject(c, R_REGEX);
		return;
	}
	d = memchr(r, '$', (size_t)(re - r));
	if (d) {
		if (check_modifiers(c, d + 1, re))
			return;
		re = d;
	}
	if (re - r >= 2 && r[0] == '|' && r[1] == '|') {
		r += 2;
		kind = BG_NAME_TREE;
	} else if (r < re && r[0] == '|') {
		r++;
		kind = BG_NAME_EXACT;
	} else {
		/* unanchored: a name alone */
		if (memchr(r, '^', (size_t)(re - r))) {
			reject(c, R_UNANCHORED);
			return;
		}
		if (wildcard(&r, re)) {
			kind = BG_NAME_SUBS;
		} else {
			kind = BG_NAME_EXACT;
			bare = 1;
		}
		add_name(c, r, (size_t)(re - r), kind, allow, bare);
		return;
	}
	caret = memchr(r, '^', (size_t)(re - r));
	if (!caret) {
		reject(c, memchr(r, '/', (size_t)(re - r)) ? R_PATH
							   : R_NO_CARET);
		return;
	}
	/* "^" or "^|" ends the rule */
	if (caret + 1 < re && !(caret + 2 == re && caret[1] == '|')) {
		reject(c, memchr(caret, '/', (size_t)(re - caret))
				  ? R_PATH
				  : R_AFTER_CARET);
		return;
	}
	if (kind == BG_NAME_TREE && wildcard(&r, caret))
		kind = BG_NAME_SUBS;
	add_name(c, r, (size_t)(caret - r), kind, allow, 0);
}

/* ---- Detection ---------------------------------------------------------- */

int bg_dom_line_format(const char *s, const char *e)
{
	const char *t;
	int blocking;

	trim(&s, &e);
	if (s == e || *s == '#')
		return BG_FMT_AUTO;
	if (adblock_start(s, e))
		return BG_FMT_ADBLOCK;
	t = token_end(s, e);
	if (t < e && parse_hosts_addr(s, (size_t)(t - s), &blocking) == 0 &&
	    skip_blanks(t, e) < e && *skip_blanks(t, e) != '#')
		return BG_FMT_HOSTS;
	return BG_FMT_PLAIN;
}

enum bg_format bg_dom_detect(const char *buf, size_t len)
{
	struct bg_line_iter it;
	const char *s, *e;
	unsigned int seen = 0;
	int hosts = 0, f;

	bg_lines_init(&it, buf, len);
	while (seen < BG_DOM_DETECT_LINES && bg_lines_next(&it, &s, &e)) {
		f = bg_dom_line_format(s, e);
		if (f == BG_FMT_AUTO)
			continue;
		seen++;
		if (f == BG_FMT_ADBLOCK)
			return BG_FMT_ADBLOCK;
		hosts |= f == BG_FMT_HOSTS;
	}
	return hosts ? BG_FMT_HOSTS : BG_FMT_PLAIN;
}

/* ---- Parsing ------------------------------------------------------------ */

int bg_names_parse_buf(struct bg_names *l, const char *name, const char *buf,
		       size_t len, const struct bg_dom_opts *o)
{
	struct pctx c = { 0 };
	struct bg_line_iter it;
	enum bg_format fmt;
	char why[64];
	const char *s, *e;
	char **files;

	if (!name)
		name = "-";
	c.rep = reporter_of(o);
	if (l->nfiles >= BG_DOM_FILES_MAX) {
		snprintf(why, sizeof(why), "too many lists (at most %zu)",
			 BG_DOM_FILES_MAX);
		bg_report_file(&c.rep, name, why);
		return -E2BIG;
	}
	/* the array doubles: its size is the power of two at or above nfiles */
	if (!(l->nfiles & (l->nfiles - 1))) {
		files = realloc(l->files, (l->nfiles ? l->nfiles * 2 : 1) *
						  sizeof(*files));
		if (!files)
			return -ENOMEM;
		l->files = files;
	}
	files = l->files;
	files[l->nfiles] = strdup(name);
	if (!files[l->nfiles])
		return -ENOMEM;
	c.file = (uint16_t)l->nfiles++;
	c.l = l;
	c.name = name;
	c.buf = buf;
	c.o = o;
	c.allow = o && o->allow;
	c.subdomains = o && o->subdomains;

	fmt = o ? o->format : BG_FMT_AUTO;
	if (fmt == BG_FMT_ADDR)
		return -EINVAL; /* not a domain list: user/core/sources.c dispatches */
	if (fmt == BG_FMT_AUTO)
		fmt = bg_dom_detect(buf, len);

	bg_lines_init(&it, buf, len);
	while (!c.err && bg_lines_next(&it, &s, &e)) {
		size_t n = (size_t)(e - s);

		if (n && s[n - 1] == '\r')
			n--;
		c.ls = s;
		c.le = s + n;
		c.lineno = it.lineno;
		if (it.has_nul && memchr(s, '\0', n)) {
			reject(&c, R_BINARY);
			continue;
		}
		if (n > BG_DOM_LINE_MAX) {
			reject(&c, R_TOO_LONG);
			continue;
		}
		switch (fmt) {
		case BG_FMT_HOSTS:
			hosts_line(&c, s, s + n, 0);
			break;
		case BG_FMT_ADBLOCK:
			adblock_line(&c, s, s + n);
			break;
		default:
			plain_line(&c, s, s + n);
			break;
		}
	}

	l->lines += it.lineno;
	l->rejected += c.rejected;
	l->warnings += c.warnings;
	l->too_deep += c.too_deep;
	if (c.err)
		return c.err;
	return c.rejected && o && o->strict ? -EINVAL : 0;
}

/* ---- Files -------------------------------------------------------------- */

static int parse_buf(void *l, const char *name, const char *buf, size_t len,
		     const void *o)
{
	return bg_names_parse_buf(l, name, buf, len, o);
}

int bg_names_parse_file(struct bg_names *l, const char *path,
			const struct bg_dom_opts *o)
{
	struct bg_reporter rep = reporter_of(o);

	return bg_parse_file(path, &rep, parse_buf, l, o);
}

/* ---- Sorting ------------------------------------------------------------ */

/* The order of bg_names_finish(): name, kind, allow, then file and line. */
static int cmp_entry(const struct bg_name *a, const struct bg_name *b)
{
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->allow != b->allow)
		return a->allow < b->allow ? -1 : 1;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return (a->line > b->line) - (a->line < b->line);
}

static int cmp_entry_q(const void *a, const void *b)
{
	return cmp_entry(a, b);
}

/* The first eight bytes of a name, zero-padded, as a big-endian number. */
static inline uint64_t name_prefix(const char *s)
{
	uint64_t k = 0;
	unsigned int i;

	for (i = 0; i < 8 && s[i]; i++)
		k |= (uint64_t)(unsigned char)s[i] << (56 - 8 * i);
	return k;
}

struct sort_item {
	uint64_t key;
	size_t idx;
};

/* Same (name, kind, allow): a duplicate. */
static inline int same_entry(const struct bg_name *a, const struct bg_name *b)
{
	return a->kind == b->kind && a->allow == b->allow &&
	       !strcmp(a->name, b->name);
}

/*
 * Sorts v[0..n) into cmp_entry() order and squeezes out duplicates, the
 * first of each kept; returns the new count, or SIZE_MAX without memory
 * (nothing done). Comparing whole strings through pointers costs a cache
 * miss a comparison on large lists; instead, an LSD radix sort (stable, so
 * the parse order stays inside ties) of (8-byte prefix, index) pairs, then
 * a comparison sort of each run sharing a prefix only. Neighbours with
 * different prefixes are different names: only runs need strcmp().
 */
static size_t prefix_sort_unique(struct bg_name *v, size_t n)
{
	struct sort_item *a, *b, *src, *dst;
	struct bg_name *tmp;
	size_t (*cnt)[256], i, j, out;
	unsigned int byte;

	if (n < 2)
		return n;
	if (n > SIZE_MAX / sizeof(*a) / 2)
		return SIZE_MAX;
	a = malloc(2 * n * sizeof(*a));
	cnt = calloc(8, sizeof(*cnt));
	tmp = malloc(n * sizeof(*tmp));
	if (!a || !cnt || !tmp) {
		free(a);
		free(cnt);
		free(tmp);
		return SIZE_MAX;
	}
	b = a + n;
	for (i = 0; i < n; i++) {
		a[i].key = name_prefix(v[i].name);
		a[i].idx = i;
		for (byte = 0; byte < 8; byte++)
			cnt[byte][(a[i].key >> (8 * byte)) & 0xff]++;
	}
	src = a;
	dst = b;
	for (byte = 0; byte < 8; byte++) {
		size_t *c = cnt[byte], sum = 0;

		if (c[(src[0].key >> (8 * byte)) & 0xff] == n)
			continue; /* same byte everywhere */
		for (j = 0; j < 256; j++) {
			size_t t = c[j];

			c[j] = sum;
			sum += t;
		}
		for (i = 0; i < n; i++)
			dst[c[(src[i].key >> (8 * byte)) & 0xff]++] = src[i];
		src = dst;
		dst = src == a ? b : a;
	}
	for (i = 0; i < n; i++)
		tmp[i] = v[src[i].idx];
	/* runs of one prefix: names of 8 bytes or more may still differ */
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && src[j].key == src[i].key; j++)
			;
		if (j - i > 1)
			qsort(tmp + i, j - i, sizeof(*tmp), cmp_entry_q);
	}
	for (i = 0, out = 0; i < n; i++) {
		if (i && src[i].key == src[i - 1].key &&
		    same_entry(&v[out - 1], &tmp[i]))
			continue;
		v[out++] = tmp[i];
	}
	free(a);
	free(cnt);
	free(tmp);
	return out;
}

void bg_names_finish(struct bg_names *l)
{
	struct bg_name *v = l->v;
	size_t i, out = SIZE_MAX, n = l->n;

	for (i = 1; i < n; i++)
		if (cmp_entry(&v[i - 1], &v[i]) > 0)
			break;
	if (i < n)
		out = prefix_sort_unique(v, n);
	if (out == SIZE_MAX) {
		/* sorted already, or no memory for the fast way */
		if (i < n)
			qsort(v, n, sizeof(*v), cmp_entry_q);
		/* equal (name, kind, allow): the first, from the earliest
		 * line, stays */
		for (i = 1, out = n ? 1 : 0; i < n; i++) {
			if (same_entry(&v[out - 1], &v[i]))
				continue;
			v[out++] = v[i];
		}
	}
	l->duplicates += n - out;
	l->n = out;
}

/* ---- Explaining a match (check) ----------------------------------------- */

struct find_hit {
	size_t idx; /* into the entries parsed */
	int label;
};

static void ignore_diag(void *ctx, const struct bg_diag *d)
{
	(void)ctx;
	(void)d;
}

int bg_names_find(const char *path, const struct bg_dom_opts *o,
		  const char *query,
		  void (*cb)(void *ctx, const char *path, size_t line,
			     const char *text, const struct bg_name *e,
			     int label),
		  void *ctx)
{
	/* suffix_at[len]: the label the suffix of that length starts at */
	int suffix_at[BG_NAME_MAX + 1];
	char q[BG_NAME_MAX + 1], text[BG_DOM_LINE_MAX + 1];
	struct bg_dom_opts po = o ? *o : (struct bg_dom_opts){ 0 };
	struct find_hit *hits = NULL;
	size_t qlen, i, nhits = 0, cap = 0, h;
	struct bg_line_iter it;
	struct bg_names l;
	const char *s, *e;
	unsigned int nlabels;
	char *buf = NULL;
	size_t len = 0;
	int ret, j;

	if (!query || normalise(query, strlen(query), q, &s, &nlabels) < 0)
		return -EINVAL;
	qlen = strlen(q);
	for (i = 0; i <= BG_NAME_MAX; i++)
		suffix_at[i] = -1;
	suffix_at[qlen] = 0;
	for (i = 0, j = 1; i < qlen; i++) {
		if (q[i] != '.')
			continue;
		/* the suffix from label j holds nlabels - j labels */
		if (nlabels - (unsigned int)j <= BG_DNS_SUFFIX_MAX)
			suffix_at[qlen - i - 1] = j;
		j++;
	}
	ret = bg_reread_list(path, &buf, &len);
	if (ret < 0)
		return ret;
	po.diag = ignore_diag; /* the load reported them */
	po.strict = 0;
	bg_names_init(&l);
	ret = bg_names_parse_buf(&l, path, buf, len, &po);
	for (i = 0; ret == 0 && i < l.n; i++) {
		const struct bg_name *n = &l.v[i];
		size_t nl = strlen(n->name);
		int at = nl <= BG_NAME_MAX ? suffix_at[nl] : -1;

		if (at < 0 || memcmp(n->name, q + (qlen - nl), nl))
			continue;
		/* the name itself: exact and tree entries; a parent: tree and
		 * subdomains-only entries (the datapath's probes) */
		if (at == 0 ? n->kind == BG_NAME_SUBS : n->kind == BG_NAME_EXACT)
			continue;
		if ((ret = bg_grow(&hits, &cap, nhits + 1, sizeof(*hits), 16)))
			break;
		hits[nhits].idx = i;
		hits[nhits++].label = at;
	}
	/* entries come in line order: one pass over the lines for the text */
	bg_lines_init(&it, buf, len);
	for (h = 0; ret == 0 && h < nhits && bg_lines_next(&it, &s, &e);) {
		const struct bg_name *n = &l.v[hits[h].idx];

		if (it.lineno != n->line)
			continue;
		trim(&s, &e);
		if ((size_t)(e - s) > BG_DOM_LINE_MAX)
			e = s + BG_DOM_LINE_MAX;
		memcpy(text, s, (size_t)(e - s));
		text[e - s] = '\0';
		for (; h < nhits && l.v[hits[h].idx].line == it.lineno; h++)
			if (cb)
				cb(ctx, path, it.lineno, text, &l.v[hits[h].idx],
				   hits[h].label);
	}
	free(hits);
	free(buf);
	bg_names_free(&l);
	if (ret)
		return ret;
	return nhits > INT_MAX ? INT_MAX : (int)nhits;
}

/* ---- Detection of plain lists (user/core/sources.c) --------------------------- */

int bg_names_plain_line(const char *s, const char *e)
{
	char out[BG_NAME_MAX + 1];
	const char *h = memchr(s, '#', (size_t)(e - s)), *r;

	if (h)
		e = h;
	trim(&s, &e);
	wildcard(&s, e);
	for (r = s; r < e; r++)
		if (is_space(*r))
			return 0;
	if (e - s > BG_NAME_MAX + 1 ||
	    bg_name_normalise(s, (size_t)(e - s), out, &r))
		return 0;
	return strchr(out, '.') != NULL;
}
