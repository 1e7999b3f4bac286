/* SPDX-License-Identifier: MIT */
/*
 * ring/doorbell.h - the need-wakeup + shared futex doorbell protocol of
 * include/vyre/abi.h, and the clock and spin pause its sleepers use.
 */
#ifndef VYRE_RING_DOORBELL_H
#define VYRE_RING_DOORBELL_H

#include <stdint.h>

#include "vyre/abi.h"

/* Bits of sq_need_wakeup: how vyred asks to be woken (cq_need_wakeup uses VYRE_CQ_WAKE_*). */
#define VYRE_SQ_WAKE_FUTEX   (1u << 0)
#define VYRE_SQ_WAKE_EVENTFD (1u << 1)
_Static_assert(VYRE_SQ_WAKE_FUTEX == VYRE_CQ_WAKE_FUTEX &&
		   VYRE_SQ_WAKE_EVENTFD == VYRE_CQ_WAKE_EVENTFD,
	       "both directions share one wake-bit encoding (vyre_wake)");

/*
 * The sleeper's half of the protocol:
 *	if (vyre_sleep_prepare(need, bell, bit, &seen) && nothing to do after
 *	    re-checking the ring)
 *		vyre_futex_wait(bell, seen, timeout);
 *	vyre_sleep_finish(need, bit);
 * prepare sets @bit in *need and reads the doorbell with sequentially
 * consistent ordering, so a waker that published before the re-check is seen
 * by it, and one that published after sees the bit and changes the doorbell.
 * It returns 0 when a waker already took the futex bit again (a wake-up is
 * under way, and its doorbell bump may already be in @seen): do not sleep.
 */
int vyre_sleep_prepare(uint32_t *need_wakeup, const uint32_t *doorbell, uint32_t bit,
		       uint32_t *seen);
void vyre_sleep_finish(uint32_t *need_wakeup, uint32_t bit);

/*
 * vyre_wake - the waker's half, after publishing: if *need_wakeup is
 * non-zero, bump the doorbell; if the futex bit is set, clear it and
 * futex-wake the sleepers (only the first of several wakers pays the
 * syscall); if the eventfd bit is set, write 1 to @eventfd (when >= 0). A
 * sleeper sets its bit again before each sleep. Returns the bits acted on
 * (0: nobody sleeps, nothing done: one shared load, no write).
 */
int vyre_wake(uint32_t *need_wakeup, uint32_t *doorbell, int eventfd);

/*
 * vyre_futex_wait - shared FUTEX_WAIT on @word while it holds @expected, for
 * at most @timeout_ns (negative: forever). Returns 0 when woken (or
 * interrupted), VYRE_E_AGAIN when the word had already changed,
 * VYRE_E_TIMEDOUT.
 */
int vyre_futex_wait(uint32_t *word, uint32_t expected, int64_t timeout_ns);

/* vyre_futex_wake - shared FUTEX_WAKE of every waiter on @word. */
void vyre_futex_wake(uint32_t *word);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t vyre_now_ns(void);

/* A pause instruction for spin loops. */
static inline void vyre_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

#endif /* VYRE_RING_DOORBELL_H */
