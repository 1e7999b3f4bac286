/* SPDX-License-Identifier: MIT */
/*
 * Control messages of one connection: the HELLO handshake (version, allow
 * list, ring and heap sizes, domain join, region creation) and buffer
 * alloc/free/lookup with their named forms (create, open, free by name,
 * list). Every field is checked; a bad request gets an error reply, a
 * malformed message an ERROR and a disconnect.
 *
 * A FREE (or FREE_NAME) of a buffer that an in-flight batch uses waits for
 * that batch: the message is kept, the socket is not read meanwhile (so the
 * client's later messages keep their order), and vyre_control_retry handles
 * it once the buffer is idle. The buffer keeps its name until then, and a
 * deferred FREE_NAME looks the name up again when it is retried.
 *
 * A client loop 0 handed over (inbox.h) takes a free slot of this loop in
 * vyre_control_adopt, and its HELLO is answered here as if read here.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conns.h"
#include "control.h"
#include "daemon.h"
#include "devbufs.h"
#include "domain_adopt.h"
#include "domains.h"
#include "hazards.h"
#include "inbox.h"
#include "log.h"
#include "names.h"
#include "ops_dir.h"
#include "priority.h"
#include "regions.h"
#include "resume.h"
#include "route.h"
#include "worker_link.h"

/* Messages handled per readiness, so one chatty client cannot hold up the batch loop. */
#define MESSAGES_PER_WAKE 64

static int reply_hello(struct vyre_conn *c, uint32_t id, int status, const int *fds, unsigned nfds,
		       uint32_t restarted)
{
	struct vyre_msg m;

	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_HELLO_REPLY;
	m.id = id;
	m.u.hello_reply.status = status;
	if (status == 0) {
		m.u.hello_reply.client_id = c->id;
		m.u.hello_reply.domain_id = c->domain->id;
		m.u.hello_reply.sq_entries = c->region.sq_entries;
		m.u.hello_reply.cq_entries = c->region.cq_entries;
		m.u.hello_reply.region_bytes = c->region.bytes;
		m.u.hello_reply.heap_bytes = c->domain->heap.bytes;
		m.u.hello_reply.restarted = restarted;
	}
	return vyre_msg_send(c->sock, &m, fds, nfds);
}

static int is_eventfd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	return strcmp(target, "anon_inode:[eventfd]") == 0;
}

/* A ring size from a request: 0 -> default (capped by the limit), else a power of two <= limit. */
static uint32_t ring_size(uint32_t requested, uint32_t dflt, uint32_t limit)
{
	uint32_t n = vyre_ring_entries(requested, dflt < limit ? dflt : limit);

	return n && n <= limit ? n : 0;
}

/* Validates a HELLO; returns 0 or the status to refuse it with. */
static int check_hello(struct vyre_daemon *d, const struct vyre_conn *c, const struct vyre_msg *m,
		       int nfds, const int *fds)
{
	if (m->abi_version != VYRE_ABI_VERSION)
		return VYRE_E_PROTO;
	if (!c->allowed)
		return VYRE_E_PERM;
	if (d->stopping)
		return VYRE_E_DISCONNECTED;
	const uint32_t flags = m->u.hello.flags;

	if ((flags & ~VYRE_HELLO_VALID) || vyre_hello_priority(&m->u.hello) > VYRE_PRIORITY_MAX ||
	    nfds < 1 || !is_eventfd(fds[0]))
		return VYRE_E_INVAL;
	/* a plain HELLO's extra descriptors are closed unread; a RESUME needs its four */
	if ((flags & VYRE_HELLO_RESUME) && nfds != 4)
		return VYRE_E_PROTO;
	if (vyre_hello_priority(&m->u.hello) >
	    vyre_priority_bound(&d->cfg, c->uid, c->gid, c->groups, c->n_groups)) {
		vyre_log(
		    "client %u: priority class %u above its bound %u (--priority-max, --priority)",
		    c->id, vyre_hello_priority(&m->u.hello),
		    vyre_priority_bound(&d->cfg, c->uid, c->gid, c->groups, c->n_groups));
		return VYRE_E_PERM;
	}
	if (d->n_active >= d->cfg.max_clients) {
		vyre_log("client %u: --max-clients %u reached", c->id, d->cfg.max_clients);
		return VYRE_E_NOMEM;
	}
	return 0;
}

/* A new connection's region in the domain it names. Takes fds[0] on success. */
static int join(struct vyre_daemon *d, struct vyre_conn *c, const char *name, uint64_t heap,
		uint32_t sq, uint32_t cq, int *fds)
{
	struct vyre_domain *dom;
	int rc = vyre_domain_join(d, c, name, heap, &dom);

	if (rc == 0) {
		rc = vyre_conn_activate(d, c, sq, cq, dom, fds[0]);
		if (rc != 0)
			vyre_domain_leave(d, dom);
		else
			fds[0] = -1; /* the connection owns the client's eventfd now */
	}
	return rc;
}

/*
 * A RESUME: fds are the client's eventfd, region, heap and ledger (docs/
 * design.md section 3). Takes what it keeps, setting it to -1.
 */
static int resume(struct vyre_daemon *d, struct vyre_conn *c, const char *name, int *fds,
		  uint32_t *restarted)
{
	struct vyre_domain *dom;
	int rc;

	switch (vyre_conn_region_live(d, fds[1])) {
	case VYRE_REGION_LIVE:
		return VYRE_E_PROTO;
	case VYRE_REGION_CLOSING:
		return VYRE_E_AGAIN; /* its last batch still runs: vyre_reconnect tries again */
	}
	rc = vyre_domain_adopt(d, c, name, &fds[2], fds[3], &dom);
	if (rc != 0)
		return rc;
	rc = vyre_conn_resume(d, c, fds[1], dom, fds[0], restarted);
	fds[1] = -1;
	if (rc != 0) {
		vyre_domain_leave(d, dom);
		return rc;
	}
	fds[0] = -1;
	return 0;
}

static void handle_hello(struct vyre_daemon *d, struct vyre_conn *c, const struct vyre_msg *m,
			 int *fds, unsigned nfds)
{
	const struct vyre_msg_hello *h = &m->u.hello;
	uint32_t sq = ring_size(h->sq_entries, VYRE_DEFAULT_SQ_ENTRIES, d->cfg.sq_entries_max);
	uint32_t cq = ring_size(h->cq_entries, VYRE_DEFAULT_CQ_ENTRIES, d->cfg.cq_entries_max);
	uint64_t heap = h->heap_bytes ? h->heap_bytes : VYRE_DEFAULT_HEAP_BYTES;
	struct vyre_domain *dom = NULL;
	uint32_t restarted = 0;
	int rc = check_hello(d, c, m, (int)nfds, fds);

	c->priority = vyre_hello_priority(h);

	if (rc == 0 && !h->heap_bytes && heap > d->cfg.heap_bytes_max)
		heap = d->cfg.heap_bytes_max;
	if (rc == 0 && (sq == 0 || cq == 0 || heap > d->cfg.heap_bytes_max))
		rc = VYRE_E_INVAL;
	if (rc == 0 && !c->routed) {
		uint32_t loop;

		rc = vyre_route_client(d, c, h->domain, &loop);
		/* the loop it goes to answers; the descriptors go with it */
		if (rc == 0 && loop != d->loop_index &&
		    (rc = vyre_handoff(d, c, loop, m, fds, nfds)) == 0) {
			vyre_conn_handed_off(d, c);
			return;
		}
	}
	c->resumable = (h->flags & (VYRE_HELLO_RESUMABLE | VYRE_HELLO_RESUME)) != 0;
	c->rerun = (h->flags & VYRE_HELLO_RERUN) != 0;
	if (rc == 0 && (h->flags & VYRE_HELLO_RESUME))
		rc = resume(d, c, h->domain, fds, &restarted);
	else if (rc == 0)
		rc = join(d, c, h->domain, heap, sq, cq, fds);
	for (unsigned i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (rc != 0) {
		vyre_log("client %u (pid %d uid %u gid %u) refused%s: %s", c->id, (int)c->pid,
			 (unsigned)c->uid, (unsigned)c->gid,
			 (h->flags & VYRE_HELLO_RESUME) ? " to resume" : "", vyre_strerror(rc));
		reply_hello(c, m->id, rc, NULL, 0, 0);
		vyre_conn_close(d, c, rc);
		return;
	}
	dom = c->domain;
	sq = c->region.sq_entries;
	cq = c->region.cq_entries;
	int out[4] = {c->region.fd, dom->heap.fd, c->sq_efd, dom->ledger.fd};

	if (reply_hello(c, m->id, 0, out, c->resumable ? 4 : 3, restarted) != 0) {
		vyre_conn_close(d, c, VYRE_E_DISCONNECTED);
		return;
	}
	vyre_log("client %u (pid %d uid %u) %s domain %u%s%s%s: sq %u cq %u heap %llu%s", c->id,
		 (int)c->pid, (unsigned)c->uid,
		 (h->flags & VYRE_HELLO_RESUME) ? "resumed in" : "joined", dom->id,
		 dom->name[0] ? " '" : " (private)", dom->name, dom->name[0] ? "'" : "", sq, cq,
		 (unsigned long long)dom->heap.bytes, c->resumable ? ", resumable" : "");
	if (restarted)
		vyre_log("client %u: %u items the last vyred accepted without completing them %s",
			 c->id, restarted, c->rerun ? "run again" : "completed VYRE_E_RESTARTED");
}

static void buffer_reply(struct vyre_msg *rep, int status, uint32_t handle,
			 const struct vyre_buffer_ref *ref)
{
	rep->type = VYRE_MSG_BUFFER_REPLY;
	rep->u.buffer_reply.status = status;
	rep->u.buffer_reply.handle = status == 0 ? handle : 0;
	rep->u.buffer_reply.offset = status == 0 && ref ? ref->off : 0;
	rep->u.buffer_reply.bytes = status == 0 && ref ? ref->bytes : 0;
	rep->u.buffer_reply.flags = status == 0 && ref ? ref->flags : 0;
}

static int heap_alloc(struct vyre_conn *c, struct vyre_buffer_ref *ref)
{
	struct vyre_domain *dom = c->domain;
	int rc = vyre_heap_alloc(&dom->heap, ref->bytes, &ref->off);

	if (rc == VYRE_E_NOMEM && !(c->limits_logged & LIMIT_HEAP)) {
		c->limits_logged |= LIMIT_HEAP; /* once per client: no log flood */
		vyre_log("client %u: no room for %llu bytes in domain %u's %llu-byte heap", c->id,
			 (unsigned long long)ref->bytes, dom->id,
			 (unsigned long long)dom->heap.bytes);
	}
	return rc;
}

/* Give back what an allocation took: heap space or a device buffer. */
static void release(struct vyre_daemon *d, struct vyre_domain *dom,
		    const struct vyre_buffer_ref *ref)
{
	if (ref->flags & VYRE_BUF_DEVICE)
		vyre_devbuf_free(d, ref);
	else
		vyre_heap_free(&dom->heap, ref->off, ref->bytes);
}

/* ALLOC, or CREATE with @name: a buffer in the heap or on the device, maybe named. */
static void handle_alloc(struct vyre_daemon *d, struct vyre_conn *c, uint32_t bytes, uint32_t flags,
			 const char *name, struct vyre_msg *rep)
{
	struct vyre_domain *dom = c->domain;
	struct vyre_buffer_ref ref = {.bytes = bytes, .domain = dom->id};
	uint32_t handle = 0, len = name ? (uint32_t)strlen(name) : 0;
	int rc = VYRE_E_INVAL;

	if (name && vyre_names_find(&d->names, dom->id, name, len)) {
		buffer_reply(rep, VYRE_E_EXIST, 0, NULL);
		return;
	}
	/* a transient buffer takes heap room like any other (docs/design.md section 6.3) */
	if ((ref.bytes & 3u) == 0 && (flags == 0 || flags == VYRE_BUF_TRANSIENT)) {
		ref.flags = flags;
		rc = heap_alloc(c, &ref);
	} else if ((ref.bytes & 3u) == 0 && flags == VYRE_BUF_DEVICE)
		rc = vyre_devbuf_alloc(d, c, ref.bytes, &ref);
	if (rc == 0 && vyre_handles_add(&d->handles, &ref, &handle) != 0) {
		release(d, dom, &ref);
		rc = VYRE_E_NOMEM;
		if (!(c->limits_logged & LIMIT_BUFFERS)) {
			c->limits_logged |= LIMIT_BUFFERS;
			vyre_log("client %u: --max-buffers %u reached", c->id, d->cfg.max_buffers);
		}
	}
	if (rc == 0 &&
	    vyre_domain_record(d, dom, handle, handle & VYRE_HANDLE_SLOT_MASK, &ref, name) != 0) {
		vyre_handles_remove(&d->handles, handle, dom->id, &ref);
		release(d, dom, &ref);
		rc = VYRE_E_NOMEM;
	}
	if (rc == 0 && (ref.flags & VYRE_BUF_TRANSIENT))
		dom->n_transient++;
	if (rc == 0 && name) {
		vyre_names_add(&d->names, dom->id, name, len, handle,
			       handle & VYRE_HANDLE_SLOT_MASK);
		dom->n_names++;
	}
	buffer_reply(rep, rc, handle, &ref);
}

/* Frees @handle of the client's domain, and its name with it. */
static int free_buffer(struct vyre_daemon *d, struct vyre_conn *c, uint32_t handle)
{
	struct vyre_buffer_ref ref;
	uint32_t slot = vyre_handles_slot(&d->handles, handle, c->domain->id);

	if (slot == 0)
		return VYRE_E_INVAL;
	vyre_ledger_remove(&c->domain->ledger, d->handles.slots[slot].ledger);
	if (vyre_names_remove(&d->names, slot))
		c->domain->n_names--;
	vyre_handles_remove(&d->handles, handle, c->domain->id, &ref);
	release(d, c->domain, &ref);
	if (ref.flags & VYRE_BUF_TRANSIENT)
		c->domain->n_transient--;
	return 0;
}

/* The buffer a FREE, FREE_NAME or OPEN is about: 0 when the name names none. */
static uint32_t target_of(const struct vyre_daemon *d, const struct vyre_conn *c,
			  const struct vyre_msg *m)
{
	if (m->type == VYRE_MSG_FREE)
		return m->u.buffer.handle;
	return vyre_names_find(&d->names, c->domain->id, m->u.named.name,
			       (uint32_t)strlen(m->u.named.name));
}

/* Slots one LIST looks at, so that no request holds the loop for long. */
#define LIST_BUDGET 4096u

static void handle_list(struct vyre_daemon *d, const struct vyre_conn *c, uint32_t cursor,
			struct vyre_msg *rep)
{
	struct vyre_msg_list_reply *r = &rep->u.list_reply;
	const struct vyre_name_entry *e = NULL;
	struct vyre_buffer_ref ref;

	rep->type = VYRE_MSG_LIST_REPLY;
	r->next = 0;
	if (c->domain->n_names)
		e = vyre_names_next(&d->names, c->domain->id, cursor, d->handles.n_slots,
				    LIST_BUDGET, &r->next);
	if (!e || vyre_handles_get(&d->handles, e->handle, c->domain->id, &ref) != 0)
		return;
	r->handle = e->handle;
	r->bytes = ref.bytes;
	r->flags = ref.flags;
	memcpy(r->name, e->name, e->len);
	r->name[e->len] = '\0';
}

static void handle_buffer(struct vyre_daemon *d, struct vyre_conn *c, const struct vyre_msg *m)
{
	struct vyre_msg rep;
	struct vyre_buffer_ref ref;
	uint32_t handle;
	int rc;

	memset(&rep, 0, sizeof(rep));
	rep.id = m->id;
	switch (m->type) {
	case VYRE_MSG_ALLOC:
		handle_alloc(d, c, m->u.buffer.bytes, m->u.buffer.flags, NULL, &rep);
		break;
	case VYRE_MSG_CREATE:
		handle_alloc(d, c, m->u.named.bytes, m->u.named.flags, m->u.named.name, &rep);
		break;
	case VYRE_MSG_FREE:
	case VYRE_MSG_FREE_NAME:
		handle = target_of(d, c, m);
		if (vyre_hazards_busy(&d->hazards, handle)) {
			c->deferred = *m;
			c->has_deferred = 1;
			d->n_deferred++;
			return;
		}
		if (m->type == VYRE_MSG_FREE_NAME && handle == 0)
			rc = VYRE_E_NOENT;
		else
			rc = free_buffer(d, c, handle);
		buffer_reply(&rep, rc, handle, NULL);
		break;
	case VYRE_MSG_LOOKUP:
		handle = m->u.buffer.handle;
		rc = vyre_handles_get(&d->handles, handle, c->domain->id, &ref);
		buffer_reply(&rep, rc, handle, &ref);
		break;
	case VYRE_MSG_OPEN:
		handle = target_of(d, c, m);
		rc = handle ? vyre_handles_get(&d->handles, handle, c->domain->id, &ref)
			    : VYRE_E_NOENT;
		buffer_reply(&rep, rc, handle, &ref);
		break;
	case VYRE_MSG_LIST:
		handle_list(d, c, m->u.list_cursor, &rep);
		break;
	case VYRE_MSG_OP_LOOKUP:
		rep.type = VYRE_MSG_OP_REPLY;
		vyre_ops_dir_lookup(m->u.op_name, &rep.u.op_reply);
		break;
	case VYRE_MSG_OP_LIST:
		rep.type = VYRE_MSG_OP_REPLY;
		vyre_ops_dir_list(m->u.list_cursor, &rep.u.op_reply);
		break;
	default:
		rep.type = VYRE_MSG_ERROR;
		rep.u.error = VYRE_E_PROTO;
		vyre_msg_send(c->sock, &rep, NULL, 0);
		vyre_conn_close(d, c, VYRE_E_PROTO);
		return;
	}
	/* A client that does not read its replies fills its socket: it is dropped. */
	if (vyre_msg_send(c->sock, &rep, NULL, 0) != 0)
		vyre_conn_close(d, c, VYRE_E_PROTO);
}

/* Returns 1 when the connection is still open. */
static int handle_one(struct vyre_daemon *d, struct vyre_conn *c)
{
	struct vyre_msg m;
	int fds[VYRE_MSG_MAX_FDS];
	unsigned nfds = 0;
	int rc = vyre_msg_recv(c->sock, &m, fds, VYRE_MSG_MAX_FDS, &nfds, MSG_DONTWAIT);

	if (rc == VYRE_E_AGAIN)
		return 2;
	if (rc == VYRE_E_DISCONNECTED) {
		vyre_conn_close(d, c, 0);
		return 0;
	}
	if (rc == 0 && c->state == VYRE_CONN_HANDSHAKE && m.type == VYRE_MSG_HELLO) {
		handle_hello(d, c, &m, fds, nfds);
		return c->state == VYRE_CONN_ACTIVE;
	}
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
	if (rc != 0 || c->state != VYRE_CONN_ACTIVE) {
		struct vyre_msg err = {.type = VYRE_MSG_ERROR, .id = m.id, .u.error = VYRE_E_PROTO};

		vyre_log("client %u: malformed or unexpected control message: disconnecting",
			 c->id);
		vyre_msg_send(c->sock, &err, NULL, 0);
		vyre_conn_close(d, c, VYRE_E_PROTO);
		return 0;
	}
	handle_buffer(d, c, &m);
	return c->state == VYRE_CONN_ACTIVE;
}

void vyre_control_readable(struct vyre_daemon *d, struct vyre_conn *c)
{
	for (int i = 0; i < MESSAGES_PER_WAKE; i++) {
		int open = handle_one(d, c);

		if (open == 0 || c->has_deferred)
			return;
		if (open == 2)
			break;
	}
	vyre_conn_arm_poll(d, c);
}

/* A client handed to this loop: answer the HELLO loop 0 read from it. */
static void adopt_hello(struct vyre_daemon *d, struct vyre_conn *c, const struct vyre_msg *m,
			int *fds, unsigned nfds)
{
	handle_hello(d, c, m, fds, nfds);
	if (c->state == VYRE_CONN_ACTIVE)
		vyre_control_readable(d, c);
}

/* A client that found no slot in its loop: refused, and no longer counted. */
static void refuse(struct vyre_daemon *d, struct vyre_handoff *h)
{
	struct vyre_msg m;

	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_HELLO_REPLY;
	m.id = h->hello.id;
	m.u.hello_reply.status = VYRE_E_NOMEM;
	vyre_msg_send(h->conn.sock, &m, NULL, 0);
	close(h->conn.sock);
	vyre_link_gone(h->conn.link_route, h->conn.id);
	for (unsigned i = 0; i < h->nfds; i++)
		close(h->fds[i]);
	vyre_route_drop(d->sh, d->loop_index + 1, h->conn.route, h->conn.priority);
}

void vyre_control_adopt(struct vyre_daemon *d, struct vyre_handoff *h)
{
	struct vyre_conn *c = NULL;

	for (uint32_t s = 0; s < d->n_conn_slots && !c; s++)
		if (d->conns[s].state == VYRE_CONN_FREE)
			c = &d->conns[s];
	if (!c) {
		refuse(d, h);
		return;
	}
	const uint32_t slot = c->slot;

	/* a handshake owns nothing of loop 0's but the io_uring poll that read its HELLO */
	*c = h->conn;
	c->slot = slot;
	c->pending_ops = 0;
	c->poll_armed = 0;
	c->routed = d->loop_index + 1;
	adopt_hello(d, c, &h->hello, h->fds, h->nfds);
}

void vyre_control_retry(struct vyre_daemon *d)
{
	uint32_t k = 0;

	while (k < d->n_active && d->n_deferred) {
		struct vyre_conn *c = &d->conns[d->active[k]];

		if (c->has_deferred &&
		    !vyre_hazards_busy(&d->hazards, target_of(d, c, &c->deferred))) {
			c->has_deferred = 0;
			d->n_deferred--;
			handle_buffer(d, c, &c->deferred);
			if (c->state == VYRE_CONN_ACTIVE)
				vyre_control_readable(d, c);
		}
		/* a closed one's place now holds the last active connection: look at it too */
		if (c->state == VYRE_CONN_ACTIVE)
			k++;
	}
}
