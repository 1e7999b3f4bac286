/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/devbufs.h - a loop's device buffers (docs/design.md section
 * 6.2): buffers allocated with VYRE_BUF_DEVICE, whose bytes live in the
 * backend's device memory and which clients see only through items.
 *
 * Each is a backend heap of its own. Heap indices 0 .. --max-domains - 1
 * are the domains' heaps (a domain's slot); index --max-domains + k is
 * device buffer k, for k < --max-device-buffers. Their bytes count against
 * --device-bytes-max over every loop together (struct vyre_shared). A
 * device buffer is released when it is freed (after the batches in flight
 * that use it, control.c), when its domain closes (domains.c), and at exit
 * by the backend's shutdown.
 *
 * Validate once per write (docs/planner.md): no client can write a device
 * buffer except through items, so vyred knows every write. Each buffer
 * counts the items accepted that write it (write_gen, bumped in acceptance
 * order when the batch is planned) and remembers the write_gen at which a
 * DFA scan that used it as its table last completed with status 0 (not
 * deduplicated, in a batch that did not fail). A later scan accepted at that
 * same write_gen gets VYRE_EXEC_TABLE_TRUSTED: the table is still what was
 * found valid, so the executor skips the whole-table check (never a
 * per-lookup bound). Likewise a DFA_REPORT* item that completed with status
 * 0 found its table's report section valid (report_gen): a later DFA_REPORT*
 * at that same write_gen gets VYRE_EXEC_REPORT_TRUSTED too, and skips the
 * section's check (a DFA_SCAN checks next[] only, so never earns it). Heap
 * tables never get either: clients write heap bytes at any time.
 */
#ifndef VYRED_DEVBUFS_H
#define VYRED_DEVBUFS_H

#include <stdint.h>

#include "../../ring/handles.h"
#include "devbuf_table.h"

struct vyre_daemon;
struct vyre_conn;
struct vyre_batch;

/* Empty tables for @max buffers from heap index @base. 0 or VYRE_E_NOMEM. */
int vyre_devbufs_init(struct vyre_devbufs *t, uint32_t base, uint32_t max);
void vyre_devbufs_fini(struct vyre_devbufs *t);

/*
 * A zero-filled device buffer of @bytes for @c's domain: *ref gets its heap
 * index, offset 0 and VYRE_BUF_DEVICE. VYRE_E_NOMEM past --device-bytes-max
 * or --max-device-buffers (logged once per client, naming the flag) or when
 * the device has no room; another negative VYRE_E_* when the backend fails.
 */
int vyre_devbuf_alloc(struct vyre_daemon *d, struct vyre_conn *c, uint32_t bytes,
		      struct vyre_buffer_ref *ref);

/* Release the device buffer of @ref; no batch in flight may use it. */
void vyre_devbuf_free(struct vyre_daemon *d, const struct vyre_buffer_ref *ref);

/*
 * After planning, in acceptance order: mark the scans whose device table is
 * trusted, record each one's table generation, count the writes, and sum
 * the batch's read-back bytes (b->stats.readback_bytes).
 */
void vyre_devbufs_stamp(struct vyre_daemon *d, struct vyre_batch *b);

/* The backend reported @b with @status: scans that succeeded validate their table's generation. */
void vyre_devbufs_finish(struct vyre_daemon *d, const struct vyre_batch *b, int status);

#endif /* VYRED_DEVBUFS_H */
