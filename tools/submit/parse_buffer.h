/* SPDX-License-Identifier: MIT */
/*
 * tools/submit/parse_buffer.h - the statements that declare buffers. Each
 * parses the current line of @ps (its first token names the statement).
 */
#ifndef VYRE_TOOLS_SUBMIT_PARSE_BUFFER_H
#define VYRE_TOOLS_SUBMIT_PARSE_BUFFER_H

#include "parser.h"

/* buffer NAME BYTES|OTHER [initialiser | device] [named] */
int vyre_submit_parse_buffer(struct vyre_submit_parser *ps);
/* dfa NAME PATTERN... */
int vyre_submit_parse_dfa(struct vyre_submit_parser *ps);
/* open NAME [as LOCAL] */
int vyre_submit_parse_open(struct vyre_submit_parser *ps);

#endif /* VYRE_TOOLS_SUBMIT_PARSE_BUFFER_H */
