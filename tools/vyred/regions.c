/* SPDX-License-Identifier: MIT */
/*
 * The region registry (regions.h): which region memfd each connection slot
 * of every loop holds, so that a RESUME never adopts a region a live
 * connection of any loop still has.
 */
#include <pthread.h>
#include <sys/stat.h>

#include "conn.h"
#include "daemon.h"
#include "regions.h"
#include "shared.h"
#include "worker_link.h"

static int region_id(int fd, struct vyre_region_id *id)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return -1;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

void vyre_region_id_set(struct vyre_daemon *d, const struct vyre_conn *c, int state)
{
	struct vyre_region_id id = {0, 0, VYRE_REGION_FREE};

	if (state == VYRE_REGION_LIVE && region_id(c->region.fd, &id) != 0)
		return;
	/* the supervisor sends a RESUME of this region here while it is held */
	if (state == VYRE_REGION_LIVE)
		vyre_link_region(c->id, (uint64_t)id.dev, (uint64_t)id.ino);
	pthread_mutex_lock(&d->sh->lock);
	if (state == VYRE_REGION_CLOSING) {
		d->region_ids[c->slot].state = state;
	} else {
		id.state = state;
		d->region_ids[c->slot] = id;
	}
	pthread_mutex_unlock(&d->sh->lock);
}

int vyre_conn_region_live(const struct vyre_daemon *d, int fd)
{
	const struct vyre_shared *sh = d->sh;
	struct vyre_region_id id;
	int held = VYRE_REGION_FREE;

	if (region_id(fd, &id) != 0)
		return VYRE_REGION_LIVE;
	pthread_mutex_lock(&d->sh->lock);
	for (uint32_t l = 0; l < sh->n_made && held == VYRE_REGION_FREE; l++) {
		const struct vyre_daemon *o = &sh->loops[l];

		for (uint32_t s = 0; s < o->n_conn_slots && held == VYRE_REGION_FREE; s++)
			if (o->region_ids[s].ino == id.ino && o->region_ids[s].dev == id.dev)
				held = o->region_ids[s].state;
	}
	pthread_mutex_unlock(&d->sh->lock);
	return held;
}
