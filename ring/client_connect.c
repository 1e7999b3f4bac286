/* SPDX-License-Identifier: MIT */
/*
 * libvyre: connecting (hello, region and heap mapping) and closing.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"

static int send_hello(struct vyre_client *c, const struct vyre_connect_opts *o)
{
	struct vyre_msg m;

	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_HELLO;
	m.id = ++c->next_id;
	if (o) {
		m.u.hello.sq_entries = o->sq_entries;
		m.u.hello.cq_entries = o->cq_entries;
		m.u.hello.heap_bytes = o->heap_bytes;
		m.u.hello.flags = vyre_client_hello_flags(c);
		strcpy(m.u.hello.domain, c->domain);
	}
	int rc = vyre_msg_send(c->sock, &m, &c->event_fd, 1);

	return rc == VYRE_E_AGAIN ? VYRE_E_DISCONNECTED : rc;
}

static int map_heap(struct vyre_client *c, int fd, uint64_t bytes)
{
	struct stat st;

	if (fstat(fd, &st) != 0 || st.st_size <= 0 || (uint64_t)st.st_size != bytes ||
	    bytes > SIZE_MAX)
		return VYRE_E_PROTO;
	void *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		return VYRE_E_NOMEM;
	c->heap = p;
	c->heap_bytes = bytes;
	return 0;
}

static int reply_status(const struct vyre_msg *m, unsigned nfds)
{
	if (m->type == VYRE_MSG_ERROR && m->u.error < 0)
		return m->u.error;
	if (m->type != VYRE_MSG_HELLO_REPLY || m->abi_version != VYRE_ABI_VERSION)
		return VYRE_E_PROTO;
	if (m->u.hello_reply.status != 0)
		return m->u.hello_reply.status;
	return nfds == 3 || nfds == 4 ? 0 : VYRE_E_PROTO;
}

/* The hello reply: status, then the region, heap and SQ eventfd. Consumes @fds. */
static int accept_reply(struct vyre_client *c, const struct vyre_msg *m, int *fds, unsigned nfds)
{
	const struct vyre_msg_hello_reply *r = &m->u.hello_reply;
	int rc = reply_status(m, nfds);

	if (rc == 0) {
		rc = vyre_region_map(fds[0], &c->region);
		if (rc == 0)
			fds[0] = -1; /* the region owns it now */
	}
	if (rc == 0)
		rc = map_heap(c, fds[1], r->heap_bytes);
	if (rc == 0 &&
	    (c->region.sq_entries != r->sq_entries || c->region.cq_entries != r->cq_entries ||
	     c->region.hdr->client_id != r->client_id))
		rc = VYRE_E_PROTO;
	/* a resumable connection keeps its heap and its domain's ledger for a resume */
	if (rc == 0 && (nfds == 4) != ((c->flags & VYRE_CONNECT_RESUMABLE) != 0))
		rc = VYRE_E_PROTO;
	if (rc == 0) {
		c->sq_wake_fd = fds[2];
		fds[2] = -1;
		c->client_id = r->client_id;
		c->domain_id = r->domain_id;
		if (nfds == 4) {
			c->heap_fd = fds[1];
			c->ledger_fd = fds[3];
			fds[1] = fds[3] = -1;
		}
	}
	for (unsigned i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

int vyre_connect(const struct vyre_connect_opts *o, struct vyre_client **out)
{
	const char *path = o && o->socket_path ? o->socket_path : getenv("VYRE_SOCKET");
	struct vyre_client *c = calloc(1, sizeof(*c));
	struct vyre_msg m;
	int fds[VYRE_MSG_MAX_FDS];
	unsigned nfds = 0;
	int rc;

	if (!c)
		return VYRE_E_NOMEM;
	if (!path || !*path)
		path = VYRE_DEFAULT_SOCKET;
	c->sock = c->event_fd = c->sq_wake_fd = c->region.fd = c->watch_stop_fd = -1;
	c->heap_fd = c->ledger_fd = -1;
	c->spin_ns = 20000;
	if (o && ((o->flags & ~VYRE_CONNECT_VALID) || o->priority > VYRE_PRIORITY_MAX ||
		  (o->domain && (strlen(o->domain) > VYRE_DOMAIN_NAME_MAX || !o->domain[0])))) {
		rc = VYRE_E_INVAL;
		goto fail;
	}
	if (o) {
		c->flags = o->flags;
		if (o->flags & VYRE_CONNECT_RECONNECT)
			c->flags |= VYRE_CONNECT_RESUMABLE;
		c->priority = o->priority;
		if (o->domain)
			strcpy(c->domain, o->domain);
	}
	if ((c->flags & VYRE_CONNECT_RESUMABLE) && !(c->socket_path = strdup(path))) {
		rc = VYRE_E_NOMEM;
		goto fail;
	}
	c->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->event_fd < 0) {
		rc = VYRE_E_NOMEM;
		goto fail;
	}
	rc = vyre_client_connect_socket(path, &c->sock);
	if (rc == 0)
		rc = send_hello(c, o);
	if (rc == 0)
		rc = vyre_msg_recv(c->sock, &m, fds, VYRE_MSG_MAX_FDS, &nfds, 0);
	if (rc == VYRE_E_DISCONNECTED && c->sock >= 0)
		rc = vyre_client_refusal(c->sock);
	if (rc == 0)
		rc = accept_reply(c, &m, fds, nfds);
	if (rc != 0)
		goto fail;
	vyre_sq_producer_init(&c->sq, &c->region, c->sq_wake_fd);
	vyre_cq_consumer_init(&c->cq, &c->region);
	/* a resumable client learns at once that vyred died: its pause is vyred's start-up */
	if ((c->flags & VYRE_CONNECT_RESUMABLE) && (rc = vyre_client_watch_start(c)) != 0)
		goto fail;
	*out = c;
	return 0;
fail:
	vyre_close(c);
	return rc;
}

void vyre_close(struct vyre_client *c)
{
	if (!c)
		return;
	/* First: the watcher polls the socket and writes the eventfd. */
	vyre_client_watch_stop(c);
	if (c->sock >= 0)
		close(c->sock);
	if (c->region.hdr)
		vyre_region_unmap(&c->region);
	else if (c->region.fd >= 0)
		close(c->region.fd);
	if (c->heap)
		munmap(c->heap, (size_t)c->heap_bytes);
	if (c->event_fd >= 0)
		close(c->event_fd);
	if (c->sq_wake_fd >= 0)
		close(c->sq_wake_fd);
	if (c->heap_fd >= 0)
		close(c->heap_fd);
	if (c->ledger_fd >= 0)
		close(c->ledger_fd);
	free(c->socket_path);
	free(c->bufs);
	free(c);
}
