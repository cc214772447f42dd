/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: fixed-size object pools. All objects are carved from one block at
 * construction, so taking and returning one never calls malloc.
 */
#ifndef RDMX_POOL_H
#define RDMX_POOL_H

#include <stddef.h>

struct rdmx_pool_free {
	struct rdmx_pool_free *next;
};

struct rdmx_pool {
	void			*mem;
	size_t			elem_size;
	size_t			count;
	size_t			in_use;
	struct rdmx_pool_free	*free;	/* list of free objects */
};

/* Carves count objects of elem_size bytes; returns 0 or -FI_ENOMEM. */
int rdmx_pool_construct(struct rdmx_pool *pool, size_t elem_size, size_t count);

/* Frees the block; objects still taken become invalid. */
void rdmx_pool_destruct(struct rdmx_pool *pool);

/* Takes an object, or returns NULL when all are in use. */
static inline void *rdmx_pool_alloc(struct rdmx_pool *pool)
{
	struct rdmx_pool_free *obj = pool->free;

	if (!obj)
		return NULL;
	pool->free = obj->next;
	pool->in_use++;
	return obj;
}

/* Returns an object taken from this pool. */
static inline void rdmx_pool_release(struct rdmx_pool *pool, void *ptr)
{
	struct rdmx_pool_free *obj = ptr;

	obj->next = pool->free;
	pool->free = obj;
	pool->in_use--;
}

/* The index of an object of this pool. */
static inline size_t rdmx_pool_index(const struct rdmx_pool *pool, const void *ptr)
{
	return (size_t) ((const char *) ptr - (const char *) pool->mem) / pool->elem_size;
}

/* The object at idx, taken or not; NULL when idx is out of range. */
static inline void *rdmx_pool_at(const struct rdmx_pool *pool, size_t idx)
{
	return idx < pool->count ? (char *) pool->mem + idx * pool->elem_size : NULL;
}

#endif /* RDMX_POOL_H */
