/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/backend_select.h - --backend auto|cpu|cuda.
 */
#ifndef VYRED_BACKEND_SELECT_H
#define VYRED_BACKEND_SELECT_H

struct vyre_daemon;

int vyre_backend_select(struct vyre_daemon *d);

#endif /* VYRED_BACKEND_SELECT_H */
