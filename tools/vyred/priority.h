/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/priority.h - priority classes (docs/design.md 8.9).
 *
 * A connection's class is fixed at its HELLO and bounded per uid and gid
 * (--priority-max, --priority uid:U=N|gid:G=N). Each loop counts its
 * connected clients per class, so drain (drain.c) knows without a walk
 * whether classes are mixed: when they are not (every client in one class,
 * the common case), drain does exactly what it did before classes existed.
 */
#ifndef VYRED_PRIORITY_H
#define VYRED_PRIORITY_H

#include <stdint.h>

#include <sys/types.h>

#include "daemon_config.h"
#include "vyre/vyre.h"

#define VYRED_CLASSES (VYRE_PRIORITY_MAX + 1u)

/* A loop's connected clients per class, and what drain needs from them. */
struct vyre_classes {
	uint32_t clients[VYRED_CLASSES];
	uint32_t top; /* the highest class with a client */
	uint32_t low; /* the lowest class with a client */
	int mixed;    /* clients of more than one class */
};

/* The highest class a client of @uid, @gid and supplementary @groups may ask for. */
uint32_t vyre_priority_bound(const struct vyre_daemon_config *cfg, uid_t uid, gid_t gid,
			     const gid_t *groups, uint32_t n_groups);

/* 1 when some client may have a class above 0 (--priority-max, --priority). */
int vyre_priority_allowed(const struct vyre_daemon_config *cfg);

/* @c became ACTIVE in @d, or stopped being so: its class is counted, or not. */
void vyre_classes_join(struct vyre_classes *k, uint32_t cls);
void vyre_classes_leave(struct vyre_classes *k, uint32_t cls);

#endif /* VYRED_PRIORITY_H */
