/* SPDX-License-Identifier: MIT */
/*
 * The need-wakeup + shared futex doorbell protocol (include/vyre/abi.h).
 * Futex words live in a region mapped by two processes, so every futex call
 * is shared (no FUTEX_PRIVATE_FLAG).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "atomics.h"
#include "doorbell.h"

#if defined(__SANITIZE_THREAD__)
uint32_t vyre_fence_word;
#endif

uint64_t vyre_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int vyre_sleep_prepare(uint32_t *need_wakeup, const uint32_t *doorbell, uint32_t bit,
		       uint32_t *seen)
{
	__atomic_fetch_or(need_wakeup, bit, __ATOMIC_SEQ_CST);
	vyre_full_fence();
	*seen = __atomic_load_n(doorbell, __ATOMIC_SEQ_CST);
	/*
	 * A waker may take the futex bit between our setting it and our reading
	 * the doorbell: its bump is then already in *seen, so a futex wait
	 * would not return at once, and its wake may come before we wait. The
	 * bit being gone says a wake-up was meant for us: do not sleep.
	 */
	if ((bit & VYRE_SQ_WAKE_FUTEX) &&
	    !(__atomic_load_n(need_wakeup, __ATOMIC_SEQ_CST) & VYRE_SQ_WAKE_FUTEX))
		return 0;
	return 1;
}

void vyre_sleep_finish(uint32_t *need_wakeup, uint32_t bit)
{
	__atomic_fetch_and(need_wakeup, ~bit, __ATOMIC_RELAXED);
}

int vyre_wake(uint32_t *need_wakeup, uint32_t *doorbell, int eventfd)
{
	uint32_t need = __atomic_load_n(need_wakeup, __ATOMIC_SEQ_CST);

	if (need == 0)
		return 0;
	/*
	 * The first waker takes the futex bit, so the producers that publish
	 * before the sleeper is up again need no syscall; the sleeper sets it
	 * again (and re-checks the ring) before it next sleeps. An armed eventfd
	 * bit stays: it is the owner's to clear.
	 */
	uint32_t taken = __atomic_fetch_and(need_wakeup, ~VYRE_SQ_WAKE_FUTEX, __ATOMIC_SEQ_CST);

	__atomic_fetch_add(doorbell, 1, __ATOMIC_SEQ_CST);
	if (taken & VYRE_SQ_WAKE_FUTEX)
		vyre_futex_wake(doorbell);
	if ((need & VYRE_SQ_WAKE_EVENTFD) && eventfd >= 0) {
		uint64_t one = 1;
		ssize_t w = write(eventfd, &one, sizeof(one));

		/* EAGAIN means the counter is saturated: the reader is already due. */
		(void)w;
	}
	return (int)((taken & VYRE_SQ_WAKE_FUTEX) | (need & VYRE_SQ_WAKE_EVENTFD));
}

int vyre_futex_wait(uint32_t *word, uint32_t expected, int64_t timeout_ns)
{
	struct timespec ts, *tsp = NULL;

	if (timeout_ns >= 0) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000);
		ts.tv_nsec = (long)(timeout_ns % 1000000000);
		tsp = &ts;
	}
	if (syscall(SYS_futex, word, FUTEX_WAIT, expected, tsp, NULL, 0) == 0)
		return 0;
	switch (errno) {
	case EAGAIN:
		return VYRE_E_AGAIN;
	case ETIMEDOUT:
		return VYRE_E_TIMEDOUT;
	default:
		return 0;
	}
}

void vyre_futex_wake(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}
