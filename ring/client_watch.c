/* SPDX-License-Identifier: MIT */
/*
 * libvyre: the hang-up watcher behind vyre_event_fd(). vyred writes a
 * client's eventfd when it closes the connection, but a vyred that is
 * killed writes nothing, and a client that only polls the eventfd would
 * never learn that it is gone. The watcher sleeps in poll() on the control
 * socket's hang-up (never on its data: replies stay for the caller of the
 * control call) and on a private eventfd that vyre_close() writes to stop
 * it; on hang-up it marks the connection dead and writes the eventfd once.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

/* A poll() that fails for want of kernel memory is retried after this pause. */
#define WATCH_RETRY_NS 10000000l

static void *watch(void *arg)
{
	struct vyre_client *c = arg;
	struct pollfd p[2] = {{.fd = c->sock, .events = POLLRDHUP},
			      {.fd = c->watch_stop_fd, .events = POLLIN}};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			struct timespec pause = {.tv_nsec = WATCH_RETRY_NS};

			if (errno != EINTR)
				nanosleep(&pause, NULL);
			continue;
		}
		if (p[1].revents)
			return NULL;
		/* Only hang-up was asked for: any event on the socket means vyred is gone. */
		if (p[0].revents) {
			__atomic_store_n(&c->hung_up, 1, __ATOMIC_RELEASE);
			eventfd_write(c->event_fd, 1); /* EAGAIN: already readable */
			/* a vyre_wait asleep on the CQ doorbell learns it now, not at its next look */
			__atomic_fetch_add(&c->region.hdr->cq_doorbell, 1, __ATOMIC_SEQ_CST);
			vyre_futex_wake(&c->region.hdr->cq_doorbell);
			return NULL;
		}
	}
}

int vyre_client_watch_start(struct vyre_client *c)
{
	sigset_t all, old;

	if (c->watch_stop_fd >= 0)
		return 0;
	c->watch_stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->watch_stop_fd < 0)
		return VYRE_E_NOMEM;
	/* The application's signal handlers must never run on our thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&c->watcher, NULL, watch, c);

	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		close(c->watch_stop_fd);
		c->watch_stop_fd = -1;
		return VYRE_E_NOMEM;
	}
	/* A child of fork() inherits the connection but not the thread. */
	c->watch_pid = getpid();
	return 0;
}

void vyre_client_watch_stop(struct vyre_client *c)
{
	if (c->watch_stop_fd < 0)
		return;
	if (c->watch_pid == getpid()) {
		eventfd_write(c->watch_stop_fd, 1);
		pthread_join(c->watcher, NULL);
	}
	close(c->watch_stop_fd);
	c->watch_stop_fd = -1;
}
