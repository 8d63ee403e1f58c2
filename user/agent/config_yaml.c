// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's config, its first pass (user/agent/config_priv.h): libyaml's
 * events into a tree of scalars, sequences and maps, each with its line.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "agent/config.h"
#include "agent/config_priv.h"
#include "agent/fleetdb.h"
#include "bloomgate/dns.h" /* BG_DNS_PORT */
#include "core/grow.h"
#include "core/url.h"
#include "core/filter.h"
#include "core/format.h"
#include "core/io.h"
#include "core/opts.h" /* bg_opt_size */
#include "core/prepare.h" /* BG_LOAD_ENTRIES_MAX */
#include "core/protect.h"

/* Deeper than any valid config (root, lists, item, dns_ports): a bound
 * on the recursion that a hostile or broken file could drive. */
#define Y_DEPTH_MAX 16

const char *const ykind_name[] = {
	[Y_SCALAR] = "single value", [Y_SEQ] = "list", [Y_MAP] = "map",
};


void cfg_ynode_free(struct ynode *y)
{
	size_t i;

	if (!y)
		return;
	for (i = 0; i < y->n; i++)
		cfg_ynode_free(y->kids[i]);
	free(y->kids);
	free(y->text);
	free(y);
}

/* "FILE:LINE: ..." (line 0: "FILE: ..."); returns ret. */
int __attribute__((format(printf, 4, 5)))
cfg_fail(struct pctx *p, int ret, size_t line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!p->err || !p->errlen)
		return ret;
	n = line ? snprintf(p->err, p->errlen, "%s:%zu: ", p->file, line)
		 : snprintf(p->err, p->errlen, "%s: ", p->file);
	if (n < 0 || (size_t)n >= p->errlen)
		return ret;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - n, fmt, ap);
	va_end(ap);
	return ret;
}


/* A value as the messages quote it: one line (a quoted YAML scalar may
 * hold newlines and control bytes), cut so the reason still shows. */
const char *cfg_q(struct pctx *p, const char *s)
{
	size_t n = 0, max = sizeof(p->quote) - 8;

	for (; *s && n < max; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			n += snprintf(p->quote + n, sizeof(p->quote) - n,
				      "\\x%02x", c);
		else
			p->quote[n++] = (char)c;
	}
	if (*s)
		n += snprintf(p->quote + n, sizeof(p->quote) - n, "...");
	p->quote[n < sizeof(p->quote) ? n : sizeof(p->quote) - 1] = '\0';
	return p->quote;
}

/* ---- YAML events into a tree ---- */

static int y_next(struct pctx *p, yaml_parser_t *yp, yaml_event_t *ev)
{
	size_t line, i;
	const char *hint = "";

	if (yaml_parser_parse(yp, ev))
		return 0;
	if (yp->error == YAML_MEMORY_ERROR)
		return cfg_fail(p, -ENOMEM, 0, "out of memory");
	line = yp->problem_mark.line + 1;
	/* The reader (bad UTF-8) knows the offset only. */
	if (yp->error == YAML_READER_ERROR)
		for (i = 0, line = 1; i < yp->problem_offset && i < p->len; i++)
			line += p->buf[i] == '\n';
	/* `events: -` reads as a list item where a value was expected. */
	if (yp->problem && strstr(yp->problem, "block sequence entries"))
		hint = " (a lone - as a value is written \"-\")";
	/* libyaml's own words: "mapping values are not allowed in this
	 * context", "found character that cannot start any token"... */
	return bad(p, line, "YAML: %s%s%s%s",
		   yp->problem ? yp->problem : "syntax error",
		   yp->context ? " " : "", yp->context ? yp->context : "", hint);
}

static int y_add(struct pctx *p, struct ynode *y, struct ynode *kid)
{
	if (bg_grow(&y->kids, &y->cap, y->n + 1, sizeof(*y->kids), 8)) {
		cfg_ynode_free(kid);
		return cfg_fail(p, -ENOMEM, 0, "out of memory");
	}
	y->kids[y->n++] = kid;
	return 0;
}

/* The node that ev starts (ev is consumed). */
static int y_node(struct pctx *p, yaml_parser_t *yp, yaml_event_t *ev,
		  int depth, struct ynode **out)
{
	size_t line = ev->start_mark.line + 1;
	const yaml_char_t *anchor = NULL, *tag = NULL;
	struct ynode *y;
	int err = 0;

	*out = NULL;
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		err = bad(p, line, "YAML aliases (*%s) are not supported: write the value out",
			  (const char *)ev->data.alias.anchor);
		break;
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	default:
		err = bad(p, line, "YAML: unexpected event %d", ev->type);
	}
	if (!err && anchor)
		err = bad(p, line, "YAML anchors (&%s) are not supported",
			  (const char *)anchor);
	/* A tag would ask for a type the key's table decides anyway. */
	if (!err && tag)
		err = bad(p, line, "YAML tags (%s) are not supported",
			  (const char *)tag);
	if (!err && depth > Y_DEPTH_MAX)
		err = bad(p, line, "nested deeper than any valid config");
	if (err)
		goto out;

	y = calloc(1, sizeof(*y));
	if (!y) {
		err = cfg_fail(p, -ENOMEM, 0, "out of memory");
		goto out;
	}
	y->line = line;
	if (ev->type == YAML_SCALAR_EVENT) {
		size_t len = ev->data.scalar.length;

		y->kind = Y_SCALAR;
		y->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		/* "\0" in a double-quoted scalar: it would cut the C string. */
		if (strlen((const char *)ev->data.scalar.value) != len)
			err = bad(p, line, "a value holds a NUL byte");
		else if (!(y->text = strndup((const char *)ev->data.scalar.value,
					      len)))
			err = cfg_fail(p, -ENOMEM, 0, "out of memory");
	} else {
		yaml_event_type_t end = ev->type == YAML_MAPPING_START_EVENT ?
						YAML_MAPPING_END_EVENT :
						YAML_SEQUENCE_END_EVENT;

		y->kind = ev->type == YAML_MAPPING_START_EVENT ? Y_MAP : Y_SEQ;
		for (;;) {
			yaml_event_t kev;
			struct ynode *kid;

			err = y_next(p, yp, &kev);
			if (err)
				break;
			if (kev.type == end) {
				yaml_event_delete(&kev);
				break;
			}
			err = y_node(p, yp, &kev, depth + 1, &kid);
			if (!err)
				err = y_add(p, y, kid);
			if (err)
				break;
		}
	}
	if (err)
		cfg_ynode_free(y);
	else
		*out = y;
out:
	yaml_event_delete(ev);
	return err;
}

/* The one document of buf; *root NULL when there is none (an empty file,
 * or only comments). */
int cfg_y_load(struct pctx *p, const char *buf, size_t len,
	       struct ynode **root)
{
	yaml_parser_t yp;
	yaml_event_t ev;
	int err, docs = 0;

	*root = NULL;
	if (!yaml_parser_initialize(&yp))
		return cfg_fail(p, -ENOMEM, 0, "out of memory");
	yaml_parser_set_input_string(&yp, (const unsigned char *)buf, len);
	for (;;) {
		err = y_next(p, &yp, &ev);
		if (err)
			break;
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT && docs++) {
			/* One file, one config: a second document would
			 * be silently ignored or silently merged. */
			err = bad(p, ev.start_mark.line + 1,
				  "a second YAML document ('---'): a config is one document");
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type == YAML_SCALAR_EVENT ||
		    ev.type == YAML_SEQUENCE_START_EVENT ||
		    ev.type == YAML_MAPPING_START_EVENT ||
		    ev.type == YAML_ALIAS_EVENT) {
			err = y_node(p, &yp, &ev, 0, root);
			if (err)
				break;
			continue;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&yp);
	if (err) {
		cfg_ynode_free(*root);
		*root = NULL;
	}
	return err;
}
