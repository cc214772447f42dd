/*
 * rdmx: the domain lock. It is a real mutex only when the domain's
 * threading level lets several threads enter the provider at once;
 * under FI_THREAD_DOMAIN the application serialises calls and locking
 * is skipped.
 */
#ifndef RDMX_LOCK_H
#define RDMX_LOCK_H

#include <pthread.h>
#include <stdbool.h>

struct rdmx_lock {
	pthread_mutex_t	mutex;
	bool		enabled;
};

static inline void rdmx_lock_construct(struct rdmx_lock *lock, bool enabled)
{
	pthread_mutex_init(&lock->mutex, NULL);
	lock->enabled = enabled;
}

static inline void rdmx_lock_destruct(struct rdmx_lock *lock)
{
	pthread_mutex_destroy(&lock->mutex);
}

static inline void rdmx_lock_acquire(struct rdmx_lock *lock)
{
	if (lock->enabled)
		pthread_mutex_lock(&lock->mutex);
}

static inline void rdmx_lock_release(struct rdmx_lock *lock)
{
	if (lock->enabled)
		pthread_mutex_unlock(&lock->mutex);
}

#endif /* RDMX_LOCK_H */
