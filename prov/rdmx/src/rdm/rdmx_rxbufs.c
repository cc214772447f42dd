/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: an endpoint's packet buffers (rdmx_rxbufs.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_lane.h"
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

int rdmx_rxbufs_post_all(const struct rdmx_rxbufs *rb, struct rdmx_lanes *lanes)
{
	int ret = 0;

	if (lanes->nic->ops->rx_memory)
		ret = lanes->nic->ops->rx_memory(lanes->nic, rb->mem, lanes->nic_rx * rb->stride);
	for (size_t i = 0; !ret && i < rb->cnt; i++) {
		struct rdmx_dev *dev = rdmx_lanes_rx_dev(lanes, i);

		ret = dev->ops->post_recv(dev, rdmx_rxbufs_at(rb, i), rb->size, i);
	}
	return ret;
}

void rdmx_rxbufs_repost(const struct rdmx_rxbufs *rb, struct rdmx_lanes *lanes, size_t idx)
{
	/* Cannot fail: the buffer left the same receive queue earlier. */
	struct rdmx_dev *dev = rdmx_lanes_rx_dev(lanes, idx);

	(void) dev->ops->post_recv(dev, rdmx_rxbufs_at(rb, idx), rb->size, idx);
}
