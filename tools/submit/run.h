/* SPDX-License-Identifier: MIT */
/*
 * tools/submit/run.h - executes a parsed vyre-submit program on a target.
 */
#ifndef VYRE_TOOLS_SUBMIT_RUN_H
#define VYRE_TOOLS_SUBMIT_RUN_H

#include <stdio.h>

#include "program.h"
#include "target.h"

/*
 * vyre_submit_run - run @p statement by statement on @t, printing CQEs (in
 * submission order, at each wait/print and at the end) and buffers to @out.
 * @timeout_ns bounds any wait that makes no progress. Returns the number of
 * items whose CQE status was not 0, or a negative VYRE_E_* with @err naming
 * the statement's line (buffer allocation refused, disconnected, timed out,
 * a CQE that matches no outstanding item).
 */
int vyre_submit_run(const struct vyre_submit_program *p, const struct vyre_submit_target *t,
		    FILE *out, int64_t timeout_ns, struct vyre_submit_error *err);

/* Heap bytes the program's buffers need (their sum), for sizing a heap. */
uint64_t vyre_submit_heap_bytes(const struct vyre_submit_program *p);

#endif /* VYRE_TOOLS_SUBMIT_RUN_H */
