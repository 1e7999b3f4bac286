/* SPDX-License-Identifier: MIT */
/*
 * tools/submit/print.h - vyre-submit's output lines (docs/vyre-submit.md):
 *
 *	cqe user_data=U line=L op=OP status=S flags=F result=R
 *	buffer NAME words W0 W1 ...  |  buffer NAME hex HH...  |  buffer NAME text "..."
 *	name NAME bytes=N flags=-|device|transient
 */
#ifndef VYRE_TOOLS_SUBMIT_PRINT_H
#define VYRE_TOOLS_SUBMIT_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include "program.h"

/* "ok", "E_INVAL", ..., or NULL for a status without a name. */
const char *vyre_submit_status_name(int32_t status);

void vyre_submit_print_cqe(FILE *f, const struct vyre_submit_program *p,
			   const struct vyre_submit_item *it, const struct vyre_cqe *cqe);

void vyre_submit_print_buffer(FILE *f, const char *name, const uint8_t *data, uint32_t bytes,
			      enum vyre_submit_print_format format);

/* One named buffer of the domain (the `names` statement); its handle is left out. */
void vyre_submit_print_name(FILE *f, const struct vyre_buffer_info *b);

#endif /* VYRE_TOOLS_SUBMIT_PRINT_H */
