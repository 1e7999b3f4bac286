/*
 * models/ring.pml - the vyre client region protocol (include/vyre/abi.h,
 * ring/ring.c, ring/doorbell.c, ring/client_wait.c).
 *
 * Processes and the code each one stands for:
 *   producer(i)  a client thread in vyre_submit: vyre_sq_reserve (CAS on
 *                sq_tail), fill the slot, vyre_sq_publish (seq = pos + 1,
 *                release), vyre_sq_kick (fence, vyre_wake)
 *   vyred()      the daemon's drain loop: vyre_sq_peek at its private head,
 *                vyre_cq_space, vyre_cq_post + vyre_cq_flush (store cq_tail,
 *                fence, vyre_wake), vyre_sq_release (store sq_head); when it
 *                has nothing it can do (SQ empty or CQ full) it sleeps on the
 *                SQ doorbell, re-checking with vyre_sq_pending and the CQ space
 *   reaper()     the client's reaping thread in vyre_wait: vyre_cq_reap (store
 *                cq_head, then vyre_sq_kick so a vyred blocked on a full CQ
 *                drains again); when the CQ is empty it sleeps on the CQ
 *                doorbell, re-checking with vyre_cq_ready
 *
 * The sleep protocol, both directions (vyre_sleep_prepare, vyre_futex_wait,
 * vyre_sleep_finish): set need_wakeup (a sequentially consistent RMW plus a
 * full fence), read the doorbell, re-check the ring, futex-wait on the
 * doorbell with the value read, clear need_wakeup. The waker (vyre_wake):
 * publish, full fence, and only if need_wakeup is set bump the doorbell and
 * wake. Promela is sequentially consistent, so a fence is the natural order
 * of statements; a missing fence is modelled as the store moving after the
 * loads it should precede (store buffering, the one reordering x86-TSO and
 * every weaker model allow). futex_wait is modelled without a timeout:
 * vyre_wait's 50 ms liveness slice would only hide a lost wake-up.
 *
 * Checked properties:
 *   - no lost or duplicated item: each ring's consumer asserts that every
 *     payload it takes is one that was published and that it sees it once;
 *   - no lost wake-up and no deadlock: every process must reach its end (all
 *     items reaped); a sleeper blocked forever is an invalid end state;
 *   - LTL no_lost_wakeup (-DCHECK_LTL): under weak fairness every sleeper is
 *     woken eventually.
 *
 * Deliberately broken variants, each of which spin must reject (check.sh):
 *   BUG_NO_RECHECK    the sleeper futex-waits without re-checking its ring
 *   BUG_NO_FENCE      the sleeper's need_wakeup store moves after its re-check
 *   BUG_LATE_SEEN     the sleeper reads the doorbell after re-checking
 *   BUG_WAKE_FIRST    the producer tests need_wakeup before publishing
 *   BUG_NO_REAP_KICK  the reaper frees CQ space without kicking vyred
 *   BUG_SEQ_FIRST     the producer stores the seq marker before the payload
 *   BUG_EARLY_HEAD    vyred releases the SQ slot before copying it out
 *   BUG_PLAIN_RESERVE the producer reserves with load + store instead of CAS
 */

#ifndef NPROD
#define NPROD 2
#endif
#ifndef NITEMS
#define NITEMS 2 /* items per producer */
#endif
#ifndef SQCAP
#define SQCAP 2
#endif
#ifndef CQCAP
#define CQCAP 2
#endif
#define TOTAL (NPROD * NITEMS)

typedef sqe_t {
	byte seq;  /* publish marker: position + 1 */
	byte data; /* payload: a unique item id, 1..TOTAL */
};

sqe_t sq[SQCAP];
byte sq_tail;
byte sq_head;
byte sq_doorbell;
bit sq_need_wakeup;
bit sq_sleeping; /* vyred blocked in futex_wait on sq_doorbell */

byte cq[CQCAP];
byte cq_tail;
byte cq_head;
byte cq_doorbell;
bit cq_need_wakeup;
bit cq_sleeping; /* the reaper blocked in futex_wait on cq_doorbell */

bit taken[TOTAL + 1];  /* ghost: ids vyred drained from the SQ */
bit reaped[TOTAL + 1]; /* ghost: ids the reaper took from the CQ */

/* FUTEX_WAIT: compare and block atomically; return when woken or on mismatch. */
inline futex_wait(word, seen, sleeping)
{
	atomic {
		if
		:: word == seen -> sleeping = 1
		:: else -> skip
		fi
	};
	sleeping == 0
}

/* vyre_wake, after the caller's publish and full fence. */
inline wake_if_needed(need, doorbell, sleeping)
{
	if
	:: need ->
		doorbell++;
		sleeping = 0
	:: else -> skip
	fi
}

/*
 * The sleeper's half. @ready re-checks the ring; the sleeper leaves when it
 * found work or when futex_wait returned, and its caller loops.
 */
inline sleep_until_rung(need, doorbell, sleeping, ready, seen)
{
#ifdef BUG_LATE_SEEN
	need = 1;
	if
	:: ready -> skip
	:: else ->
		seen = doorbell;
		futex_wait(doorbell, seen, sleeping)
	fi;
#elif defined(BUG_NO_FENCE)
	if
	:: ready -> need = 1
	:: else ->
		need = 1;
		seen = doorbell;
		futex_wait(doorbell, seen, sleeping)
	fi;
#elif defined(BUG_NO_RECHECK)
	need = 1;
	seen = doorbell;
	futex_wait(doorbell, seen, sleeping);
#else
	need = 1;
	seen = doorbell;
	if
	:: ready -> skip
	:: else -> futex_wait(doorbell, seen, sleeping)
	fi;
#endif
	need = 0;
	seen = 0
}

/* vyre_submit: vyre_sq_reserve, fill, vyre_sq_publish, vyre_sq_kick. */
proctype producer(byte id)
{
	byte i = 0;
	byte pos;
	do
	:: i < NITEMS ->
reserve:
		pos = sq_tail;
		/* a full SQ is VYRE_E_AGAIN: the client retries once vyred frees a slot */
		(pos - sq_head < SQCAP);
#ifdef BUG_PLAIN_RESERVE
		sq_tail = pos + 1;
#else
		atomic {
			if
			:: sq_tail == pos -> sq_tail = pos + 1
			:: else -> goto reserve
			fi
		};
#endif
#ifdef BUG_WAKE_FIRST
		wake_if_needed(sq_need_wakeup, sq_doorbell, sq_sleeping);
#endif
#ifdef BUG_SEQ_FIRST
		sq[pos % SQCAP].seq = pos + 1;
		sq[pos % SQCAP].data = id * NITEMS + i + 1;
#else
		sq[pos % SQCAP].data = id * NITEMS + i + 1;
		sq[pos % SQCAP].seq = pos + 1;
#endif
#ifndef BUG_WAKE_FIRST
		wake_if_needed(sq_need_wakeup, sq_doorbell, sq_sleeping);
#endif
		pos = 0;
		i++
	:: else -> break
	od
}

/*
 * vyred's drain loop for one client: an SQE is taken only when its CQE has
 * room, so a full CQ leaves items in the SQ (back-pressure, nothing dropped).
 */
proctype vyred()
{
	byte h = 0;
	byte got = 0;
	byte seen;
	byte d;
	bit published;
	bit room;
	do
	:: got == TOTAL -> break
	:: else ->
		published = (sq[h % SQCAP].seq == h + 1);
		room = (cq_tail - cq_head < CQCAP);
		if
		:: published && room ->
#ifdef BUG_EARLY_HEAD
			sq_head = h + 1;
			d = sq[h % SQCAP].data;
#else
			d = sq[h % SQCAP].data;
			sq_head = h + 1;
#endif
			d_step {
				assert(d >= 1 && d <= TOTAL);
				assert(!taken[d]);
				taken[d] = 1
			};
			cq[cq_tail % CQCAP] = d;
			d_step {
				cq_tail++;
				d = 0
			};
			wake_if_needed(cq_need_wakeup, cq_doorbell, cq_sleeping);
			d_step {
				h++;
				got++;
				published = 0;
				room = 0
			}
		:: else ->
			d_step {
				published = 0;
				room = 0
			};
			sleep_until_rung(sq_need_wakeup, sq_doorbell, sq_sleeping,
					 (sq[h % SQCAP].seq == h + 1 && cq_tail - cq_head < CQCAP),
					 seen)
		fi
	od
}

/* vyre_wait: vyre_cq_reap (then vyre_sq_kick), else sleep on the CQ doorbell. */
proctype reaper()
{
	byte h = 0;
	byte seen;
	byte d;
	do
	:: h == TOTAL -> break
	:: else ->
		if
		:: cq_tail != h ->
			d = cq[h % CQCAP];
			cq_head = h + 1;
			d_step {
				h++;
				assert(d >= 1 && d <= TOTAL);
				assert(taken[d] && !reaped[d]);
				reaped[d] = 1;
				d = 0
			}
#ifndef BUG_NO_REAP_KICK
			;
			wake_if_needed(sq_need_wakeup, sq_doorbell, sq_sleeping)
#endif
		:: else ->
			sleep_until_rung(cq_need_wakeup, cq_doorbell, cq_sleeping, (cq_tail != h),
					 seen)
		fi
	od
}

init
{
	byte p = 0;
	atomic {
		do
		:: p < NPROD ->
			run producer(p);
			p++
		:: else -> break
		od;
		run vyred();
		run reaper()
	}
}

#ifdef CHECK_LTL
ltl no_lost_wakeup { [] ((sq_sleeping -> <> !sq_sleeping) && (cq_sleeping -> <> !cq_sleeping)) }
#endif
