/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: fixed-size object pools (see rdmx_pool.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_pool.h"

int rdmx_pool_construct(struct rdmx_pool *pool, size_t elem_size, size_t count)
{
	size_t align = _Alignof(max_align_t);

	elem_size = RDMX_MAX(elem_size, sizeof(struct rdmx_pool_free));
	elem_size = (elem_size + align - 1) / align * align;
	pool->mem = calloc(count, elem_size);
	if (!pool->mem && count)
		return -FI_ENOMEM;
	pool->elem_size = elem_size;
	pool->count = count;
	pool->in_use = 0;
	pool->free = NULL;
	/* Thread the free list so the first object is handed out first. */
	for (size_t i = count; i > 0; i--) {
		struct rdmx_pool_free *obj =
			(void *) ((char *) pool->mem + (i - 1) * elem_size);

		obj->next = pool->free;
		pool->free = obj;
	}
	return 0;
}

void rdmx_pool_destruct(struct rdmx_pool *pool)
{
	free(pool->mem);
	pool->mem = NULL;
	pool->free = NULL;
}
