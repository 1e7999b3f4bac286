/* SPDX-License-Identifier: MIT */
/*
 * ring/ledger.h - a domain's ledger: what a new vyred needs to adopt the
 * domain after a restart (docs/design.md section 3, docs/transport.md).
 *
 * A memfd vyred creates with the domain, maps shared and then seals with
 * F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL: vyred's
 * mapping stays writable, nobody else can write it. A header, then
 * @capacity entries, one per live buffer. An entry is committed by the
 * release store of its handle, written last, and emptied by storing handle
 * 0, so a vyred killed at any instruction leaves every entry either whole
 * or empty. Entries below @high are used or empty; none above it is used.
 *
 * Whoever reads a ledger handed over by a client trusts none of it:
 * vyre_ledger_read copies it out and checks every entry.
 */
#ifndef VYRE_RING_LEDGER_H
#define VYRE_RING_LEDGER_H

#include <stdint.h>
#include <sys/types.h>

#include "vyre/vyre.h"

#define VYRE_LEDGER_MAGIC   0x4c525956u /* "VYRL" little-endian */
#define VYRE_LEDGER_VERSION 1u

struct vyre_ledger_header {
	uint32_t magic;
	uint32_t version;
	uint32_t capacity; /* entries after the header */
	uint32_t high;	   /* entries [0, high) may be used */
	uint64_t heap_bytes;
	uint32_t creator_uid;
	uint32_t creator_gid;
	uint32_t domain_len; /* 0: a private domain */
	char domain[VYRE_DOMAIN_NAME_MAX];
	uint8_t pad[256 - 100];
};

struct vyre_ledger_entry {
	uint32_t handle; /* 0: empty; stored last, with release */
	uint32_t flags;	 /* VYRE_BUF_* */
	uint64_t off;	 /* in the heap; 0 for a device buffer */
	uint32_t bytes;
	uint32_t name_len; /* 0: no name */
	char name[VYRE_BUFFER_NAME_MAX];
	uint8_t pad[8];
};

_Static_assert(sizeof(struct vyre_ledger_header) == 256, "ledger header is 256 bytes");
_Static_assert(sizeof(struct vyre_ledger_entry) == 80, "ledger entry is 80 bytes");

/* vyred's side: the mapping and the entries free for reuse. */
struct vyre_ledger {
	int fd;
	struct vyre_ledger_header *hdr;
	struct vyre_ledger_entry *e;
	uint64_t bytes;
	uint32_t *free; /* indexes below hdr->high that are empty */
	uint32_t n_free;
	uint32_t cap_free;
};

/*
 * vyre_ledger_create - a sealed ledger of @capacity entries for a domain
 * named @domain ("" for a private one) of a @heap_bytes heap made by
 * @uid/@gid. Errors: VYRE_E_INVAL, VYRE_E_NOMEM.
 */
int vyre_ledger_create(uint32_t capacity, const char *domain, uint64_t heap_bytes, uid_t uid,
		       gid_t gid, struct vyre_ledger *out);

/* vyre_ledger_destroy - unmap and close; safe on a zeroed ledger (it closes nothing). */
void vyre_ledger_destroy(struct vyre_ledger *l);

/*
 * vyre_ledger_add - record a live buffer (@name may be NULL) and return its
 * entry's index in *index. Errors: VYRE_E_NOMEM (full).
 */
int vyre_ledger_add(struct vyre_ledger *l, uint32_t handle, uint32_t flags, uint64_t off,
		    uint32_t bytes, const char *name, uint32_t *index);

/* vyre_ledger_remove - empty the entry at @index (from vyre_ledger_add). */
void vyre_ledger_remove(struct vyre_ledger *l, uint32_t index);

/* A ledger handed over by a client, copied and checked. */
struct vyre_ledger_image {
	struct vyre_ledger_header hdr;
	struct vyre_ledger_entry *e; /* the used entries only, sorted by heap offset */
	uint32_t n;
};

/*
 * vyre_ledger_read - copy the ledger memfd @fd (it must be a memfd sealed
 * against shrinking and growing, of at most @max_entries entries) and check
 * it against a heap of @heap_bytes: magic, version, sizes, the domain name,
 * each entry's flags, alignment, bounds and name, no two heap buffers
 * overlapping, no handle or name twice. The caller frees out->e. Errors:
 * VYRE_E_PROTO (anything wrong), VYRE_E_NOMEM.
 */
int vyre_ledger_read(int fd, uint64_t heap_bytes, uint32_t max_entries,
		     struct vyre_ledger_image *out);

#endif /* VYRE_RING_LEDGER_H */
