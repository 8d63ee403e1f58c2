/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Text for man(7) pages (bloomgate.8, bloomgate.yaml.5), which are
 * generated from the same tables as the help: what makes a string print
 * as itself in roff. Core: no libbpf.
 */
#ifndef BLOOMGATE_ROFF_H
#define BLOOMGATE_ROFF_H

#include <stdio.h>

/*
 * s escaped, as text within a line: '\' as \e, '-' as \- (a minus, so
 * options can be searched for and copied). A '.' or '\'' starting the
 * line (at_bol) is prefixed with \& (it would be a request).
 */
void bg_roff_str(FILE *f, const char *s, int at_bol);

/*
 * A block of text of lines (the commands' summaries and details): lines
 * that start with blanks (aligned tables, examples) are kept as they are
 * (.nf), the others filled; an empty line is a vertical space.
 */
void bg_roff_block(FILE *f, const char *text);

#endif
