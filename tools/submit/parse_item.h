/* SPDX-License-Identifier: MIT */
/*
 * tools/submit/parse_item.h - the item statement, parsed from the current
 * line of @ps.
 */
#ifndef VYRE_TOOLS_SUBMIT_PARSE_ITEM_H
#define VYRE_TOOLS_SUBMIT_PARSE_ITEM_H

#include "parser.h"

/* item OP IN OUT [PARAM] [fence] [nodedupe] [id=N] [in=OFF+LEN] [out=OFF+LEN] */
int vyre_submit_parse_item(struct vyre_submit_parser *ps);

#endif /* VYRE_TOOLS_SUBMIT_PARSE_ITEM_H */
