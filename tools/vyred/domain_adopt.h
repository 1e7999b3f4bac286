/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/domain_adopt.h - a domain a resuming client hands over (docs/design.md 3).
 */
#ifndef VYRED_DOMAIN_ADOPT_H
#define VYRED_DOMAIN_ADOPT_H

struct vyre_daemon;
struct vyre_conn;
struct vyre_domain;

int vyre_domain_adopt(struct vyre_daemon *d, const struct vyre_conn *c, const char *name,
		      int *heap_fd, int ledger_fd, struct vyre_domain **out);

#endif /* VYRED_DOMAIN_ADOPT_H */
