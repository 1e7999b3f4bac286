/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/regions.h - the region registry shared by the loops: per
 * connection slot of each loop, under sh->lock, the identity of the region
 * memfd it holds (struct vyre_region_id in daemon.h) and whether it is live
 * or being closed. conns.c enters and removes regions; control.c asks
 * before a RESUME adopts one.
 */
#ifndef VYRED_REGIONS_H
#define VYRED_REGIONS_H

struct vyre_daemon;
struct vyre_conn;

/* Who holds a region: nobody, a live connection, one being closed (its batch may still run). */
enum { VYRE_REGION_FREE, VYRE_REGION_LIVE, VYRE_REGION_CLOSING };
/* Which VYRE_REGION_* connection of any loop has the region memfd @fd (LIVE when unsure). */
int vyre_conn_region_live(const struct vyre_daemon *d, int fd);
/* Enter @c's region in what vyre_conn_region_live sees as @state, or take it out (FREE). */
void vyre_region_id_set(struct vyre_daemon *d, const struct vyre_conn *c, int state);

#endif /* VYRED_REGIONS_H */
