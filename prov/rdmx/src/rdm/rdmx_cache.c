/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: recycled blocks charged to a receive budget (see rdmx_cache.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_budget.h"
#include "rdmx_cache.h"

void rdmx_cache_construct(struct rdmx_cache *cache, size_t size, size_t spare_max,
			  struct rdmx_budget *budget)
{
	cache->size = RDMX_MAX(size, sizeof(struct rdmx_cache_free));
	cache->spare_max = spare_max;
	cache->spare = 0;
	cache->free = NULL;
	cache->budget = budget;
}

void *rdmx_cache_alloc(struct rdmx_cache *cache)
{
	struct rdmx_cache_free *block = cache->free;

	if (block) {
		cache->free = block->next;
		cache->spare--;
		return block;
	}
	if (!rdmx_budget_charge_bulk(cache->budget, cache->size))
		return NULL;
	block = malloc(cache->size);
	if (!block)
		rdmx_budget_credit(cache->budget, cache->size);
	return block;
}

void rdmx_cache_uncharge(struct rdmx_cache *cache, void *block)
{
	(void) block;
	rdmx_budget_credit(cache->budget, cache->size);
}

void rdmx_cache_release_uncharged(struct rdmx_cache *cache, void *block)
{
	struct rdmx_cache_free *free_block = block;

	if (cache->spare < cache->spare_max &&
	    rdmx_budget_charge(cache->budget, cache->size)) {
		free_block->next = cache->free;
		cache->free = free_block;
		cache->spare++;
		return;
	}
	free(block);
}

void rdmx_cache_release(struct rdmx_cache *cache, void *block)
{
	rdmx_cache_uncharge(cache, block);
	rdmx_cache_release_uncharged(cache, block);
}

void rdmx_cache_destruct(struct rdmx_cache *cache)
{
	while (cache->free) {
		struct rdmx_cache_free *block = cache->free;

		cache->free = block->next;
		free(block);
		rdmx_budget_credit(cache->budget, cache->size);
	}
	cache->spare = 0;
}
