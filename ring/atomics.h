/* SPDX-License-Identifier: MIT */
/*
 * ring/atomics.h - the one full fence the doorbell protocol needs.
 *
 * Publishing then checking need-wakeup (and setting need-wakeup then checking
 * the ring) is a store followed by a load of another word: only a full fence
 * keeps them ordered. GCC rejects atomic_thread_fence under TSan, so TSan
 * builds get a sequentially consistent read-modify-write instead, which is a
 * full barrier on the hardware; the ring data itself is always published with
 * release/acquire pairs that TSan does model.
 */
#ifndef VYRE_RING_ATOMICS_H
#define VYRE_RING_ATOMICS_H

#include <stdint.h>

#if defined(__SANITIZE_THREAD__)
extern uint32_t vyre_fence_word;
static inline void vyre_full_fence(void)
{
	__atomic_fetch_add(&vyre_fence_word, 0, __ATOMIC_SEQ_CST);
}
#else
static inline void vyre_full_fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#endif

#endif /* VYRE_RING_ATOMICS_H */
