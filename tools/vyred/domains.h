/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/domains.h - named and private domains and their heaps.
 */
#ifndef VYRED_DOMAINS_H
#define VYRED_DOMAINS_H

#include <stdint.h>
#include <sys/types.h>

struct vyre_daemon;
struct vyre_conn;
struct vyre_domain;
struct vyre_buffer_ref;

int vyre_domain_join(struct vyre_daemon *d, const struct vyre_conn *c, const char *name,
		     uint64_t heap_bytes, struct vyre_domain **out);
/* The live named domain @name of this loop, or NULL. */
struct vyre_domain *vyre_domain_find(struct vyre_daemon *d, const char *name);
/* Whether @c may join @dom (its creator's uid or gid, or root). */
int vyre_domain_may_join(const struct vyre_conn *c, const struct vyre_domain *dom);
/* A free domain slot, or NULL (logged). */
struct vyre_domain *vyre_domain_slot(struct vyre_daemon *d, const struct vyre_conn *c);
/*
 * The domain at @dom, whose heap and ledger are set, goes live: its heap
 * registered with the backend, a fresh id. On failure both are destroyed.
 */
int vyre_domain_open(struct vyre_daemon *d, struct vyre_domain *dom, uid_t uid, gid_t gid,
		     const char *name, struct vyre_domain **out);
/* Record a new buffer in its domain's ledger (@slot: its handle-table slot). */
int vyre_domain_record(struct vyre_daemon *d, struct vyre_domain *dom, uint32_t handle,
		       uint32_t slot, const struct vyre_buffer_ref *ref, const char *name);
void vyre_domain_leave(struct vyre_daemon *d, struct vyre_domain *dom);

#endif /* VYRED_DOMAINS_H */
