/* SPDX-License-Identifier: MIT */
/*
 * A client resuming with the region a vyred that died left it (docs/design.md
 * section 3): the region is checked, the rings pick up where they stood, and
 * what the dead vyred accepted without completing is reported exactly once:
 * a VYRE_E_RESTARTED CQE each, or, for a client that asked to rerun, it is
 * taken again like any queued item.
 */
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conns.h"
#include "daemon.h"
#include "resume.h"
#include "trace.h"

/* One VYRE_E_RESTARTED CQE per item in [done, accepted); their SQEs are intact (section 3). */
static void post_restarted(struct vyre_daemon *d, struct vyre_conn *c,
			   const struct vyre_ring_resume *rs)
{
	uint64_t now = vyre_now_ns();

	for (uint32_t pos = rs->done; pos != rs->accepted; pos++) {
		const struct vyre_sqe *s = &c->region.sq[pos & (c->region.sq_entries - 1)];
		struct vyre_cqe cqe = {
		    .user_data = s->user_data, .status = VYRE_E_RESTARTED, .complete_ns = now};

		vyre_cq_post(&c->cq, &cqe);
	}
	/* CQEs first, as complete does: sq_head never passes cq_tail */
	if (vyre_cq_flush(&c->cq) & VYRE_CQ_WAKE_EVENTFD)
		vyre_conn_wake_later(d, c);
	vyre_sq_release(&c->sq, rs->accepted - rs->done);
}

int vyre_conn_resume(struct vyre_daemon *d, struct vyre_conn *c, int region_fd,
		     struct vyre_domain *dom, int event_fd, uint32_t *restarted)
{
	struct vyre_ring_resume rs;
	int rc =
	    vyre_region_adopt(region_fd, d->cfg.sq_entries_max, d->cfg.cq_entries_max, &c->region);

	if (rc != 0) {
		close(region_fd);
		return rc;
	}
	rc = vyre_ring_resume(&c->region, &rs);
	if (rc == 0)
		rc = vyre_conn_start(d, c, dom, event_fd);
	if (rc != 0) {
		vyre_region_unmap(&c->region);
		return rc;
	}
	struct vyre_region_header *h = c->region.hdr;

	h->client_id = c->id;
	h->domain_id = dom->id;
	vyre_ring_resume_at(&c->sq, &c->cq, &rs);
	/* a vyred killed between a CQ flush and its SQ release left sq_head behind cq_tail */
	__atomic_store_n(&h->sq_head, rs.done, __ATOMIC_RELEASE);
	*restarted = rs.accepted - rs.done;
	if (c->rerun || rs.accepted == rs.done)
		__atomic_store_n(&h->sq_accepted, rs.done, __ATOMIC_RELEASE);
	else
		post_restarted(d, c, &rs);
	__atomic_store_n(&h->closed, 0, __ATOMIC_RELEASE);
	return 0;
}
