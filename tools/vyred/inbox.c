/* SPDX-License-Identifier: MIT */
/* A loop's inbox (inbox.h): clients handed over by loop 0, and the stop flag. */
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>

#include "daemon.h"
#include "inbox.h"
#include "shared.h"

int vyre_handoff(struct vyre_daemon *d, struct vyre_conn *c, uint32_t loop,
		 const struct vyre_msg *m, const int *fds, unsigned nfds)
{
	struct vyre_shared *sh = d->sh;
	struct vyre_daemon *to = &sh->loops[loop];
	struct vyre_handoff *h = NULL;

	pthread_mutex_lock(&sh->lock);
	if (to->n_inbox < to->inbox_cap)
		h = &to->inbox[to->n_inbox++];
	if (h) {
		h->conn = *c;
		h->hello = *m;
		h->nfds = nfds;
		for (unsigned i = 0; i < nfds; i++)
			h->fds[i] = fds[i];
	}
	pthread_mutex_unlock(&sh->lock);
	if (!h)
		return VYRE_E_NOMEM;
	eventfd_write(to->inbox_fd, 1);
	return 0;
}

uint32_t vyre_inbox_take(struct vyre_daemon *d)
{
	struct vyre_shared *sh = d->sh;
	uint32_t n;

	if (!d->inbox)
		return 0; /* one loop: nobody hands clients over */
	pthread_mutex_lock(&sh->lock);
	n = d->n_inbox;
	memcpy(d->inbox_work, d->inbox, n * sizeof(*d->inbox));
	d->n_inbox = 0;
	pthread_mutex_unlock(&sh->lock);
	return n;
}

void vyre_loops_stop(struct vyre_daemon *d)
{
	struct vyre_shared *sh = d->sh;

	if (__atomic_exchange_n(&sh->stopping, 1, __ATOMIC_ACQ_REL))
		return;
	for (uint32_t l = 0; l < sh->n_loops; l++)
		if (l != d->loop_index && sh->loops[l].inbox_fd >= 0)
			eventfd_write(sh->loops[l].inbox_fd, 1);
}
