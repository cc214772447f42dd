/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: blocks of one size, recycled, charged to a receive budget. A
 * block is charged while it exists, in use or kept free for reuse, so
 * the budget sees all the memory; a few free blocks are kept so a burst
 * that comes and goes does not call malloc per packet, the rest are
 * freed.
 */
#ifndef RDMX_CACHE_H
#define RDMX_CACHE_H

#include <stddef.h>

struct rdmx_budget;

struct rdmx_cache_free {
	struct rdmx_cache_free	*next;
};

struct rdmx_cache {
	size_t			size;		/* bytes of a block */
	size_t			spare_max;	/* free blocks kept at most */
	size_t			spare;		/* free blocks kept now */
	struct rdmx_cache_free	*free;
	struct rdmx_budget	*budget;
};

/* An empty cache of blocks of size bytes charged to budget. */
void rdmx_cache_construct(struct rdmx_cache *cache, size_t size, size_t spare_max,
			  struct rdmx_budget *budget);

/* A block: a free one, else a new one; NULL past the budget or out of memory. */
void *rdmx_cache_alloc(struct rdmx_cache *cache);

/* Gives a block back: kept for reuse, or freed and credited. */
void rdmx_cache_release(struct rdmx_cache *cache, void *block);

/*
 * Credits a block still in use, so that what its contents become can be
 * charged in its place; the block must then go back with
 * rdmx_cache_release_uncharged.
 */
void rdmx_cache_uncharge(struct rdmx_cache *cache, void *block);

/* Gives back an uncharged block: kept (charged again) if it fits, else freed. */
void rdmx_cache_release_uncharged(struct rdmx_cache *cache, void *block);

/* Frees the blocks kept free; every block must have been released. */
void rdmx_cache_destruct(struct rdmx_cache *cache);

#endif /* RDMX_CACHE_H */
