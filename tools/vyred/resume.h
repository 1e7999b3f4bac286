/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/resume.h - a client resuming with the region a vyred that died left it.
 */
#ifndef VYRED_RESUME_H
#define VYRED_RESUME_H

#include <stdint.h>

struct vyre_daemon;
struct vyre_conn;
struct vyre_domain;

/*
 * A RESUME hello: adopt the client's region (@region_fd) in @dom
 * and complete or rerun what the dead vyred accepted; *restarted says how
 * many. On success the connection owns @region_fd and @event_fd.
 */
int vyre_conn_resume(struct vyre_daemon *d, struct vyre_conn *c, int region_fd,
		     struct vyre_domain *dom, int event_fd, uint32_t *restarted);

#endif /* VYRED_RESUME_H */
