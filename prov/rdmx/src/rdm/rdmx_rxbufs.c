/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: an endpoint's packet buffers (rdmx_rxbufs.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_rxbufs.h"

int rdmx_rxbufs_alloc(struct rdmx_rxbufs *rb, size_t size, size_t headroom, size_t cnt)
{
	rb->size = size;
	rb->front = RDMX_ALIGN64(headroom);
	rb->stride = rb->front + RDMX_ALIGN64(size);
	rb->cnt = cnt;
	/* Large and lazily touched: pages fault in only as packets land. */
	rb->mem = aligned_alloc(64, cnt * rb->stride);
	return rb->mem ? 0 : -FI_ENOMEM;
}

void rdmx_rxbufs_free(struct rdmx_rxbufs *rb)
{
	free(rb->mem);
	rb->mem = NULL;
}
