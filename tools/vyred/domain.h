/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/domain.h - a domain's state: its heap, ledger and counts.
 * Types only; domains.c opens, joins and leaves them.
 */
#ifndef VYRED_DOMAIN_H
#define VYRED_DOMAIN_H

#include <stdint.h>
#include <sys/types.h>

#include "../../ring/heap.h"
#include "../../ring/ledger.h"
#include "vyre/vyre.h"

struct vyre_domain {
	int live;
	uint32_t id;   /* unique for the daemon's lifetime; what handles are tagged with */
	uint32_t slot; /* index in the domain table = the backend's heap index (devbufs.h) */
	char name[VYRE_DOMAIN_NAME_MAX + 1]; /* "" for a private domain */
	uid_t creator_uid;
	gid_t creator_gid;
	uint32_t n_clients;
	uint32_t n_transient; /* live VYRE_BUF_TRANSIENT buffers: resolve checks their rules */
	uint32_t n_names;     /* its named buffers (names.h) */
	struct vyre_heap heap;
	struct vyre_ledger ledger; /* what a new vyred needs to adopt it (docs/design.md 3) */
	dev_t heap_dev;		   /* the heap memfd's identity: a resuming client must name it */
	ino_t heap_ino;
};

#endif /* VYRED_DOMAIN_H */
