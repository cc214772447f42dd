/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the domain lock. It is a real lock only when the domain's
 * threading level lets several threads enter the provider at once;
 * under FI_THREAD_DOMAIN the application serialises calls and locking
 * is skipped.
 *
 * It is a ticket lock: threads get it in the order they asked. A plain
 * mutex is not fair, and threads that busy-poll a CQ release and retake
 * it within nanoseconds, so a woken waiter could find it taken again
 * every time and starve for seconds while the other thread spins.
 * Waiters spin briefly, then yield the CPU so that a descheduled holder
 * (or next in line) can run when there are more threads than cores.
 */
#ifndef RDMX_LOCK_H
#define RDMX_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#define RDMX_LOCK_SPINS	64	/* polls of the turn before yielding */

struct rdmx_lock {
	uint32_t	next;		/* the next ticket handed out */
	uint32_t	turn;		/* the ticket that holds the lock */
	bool		enabled;
};

static inline void rdmx_lock_construct(struct rdmx_lock *lock, bool enabled)
{
	lock->next = 0;
	lock->turn = 0;
	lock->enabled = enabled;
}

/*
 * Waits for the turn of ticket (rdmx_util.c). Out of line: a caller that
 * finds the lock free, or disabled, then keeps no registers for the wait.
 */
void rdmx_lock_wait(struct rdmx_lock *lock, uint32_t ticket);

static inline void rdmx_lock_acquire(struct rdmx_lock *lock)
{
	uint32_t ticket;

	if (!lock->enabled)
		return;
	ticket = __atomic_fetch_add(&lock->next, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&lock->turn, __ATOMIC_ACQUIRE) != ticket)
		rdmx_lock_wait(lock, ticket);
}

static inline void rdmx_lock_release(struct rdmx_lock *lock)
{
	if (lock->enabled)
		__atomic_store_n(&lock->turn, lock->turn + 1, __ATOMIC_RELEASE);
}

#endif /* RDMX_LOCK_H */
