/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the packet buffers an endpoint posts to its devices, one block
 * of cnt buffers. Each leaves front bytes for the device's headroom
 * (a header it writes before the packet) and is 64-byte aligned after
 * it, so packet headers are read in place.
 */
#ifndef RDMX_RXBUFS_H
#define RDMX_RXBUFS_H

#include <stddef.h>
#include <stdint.h>

struct rdmx_lanes;

struct rdmx_rxbufs {
	uint8_t	*mem;
	size_t	size;		/* bytes a packet may fill */
	size_t	front;		/* the devices' headroom, 64-byte aligned */
	size_t	stride;		/* front + size, 64-byte aligned */
	size_t	cnt;
};

/* Allocates cnt buffers of size bytes after headroom. 0 or -FI_ENOMEM. */
int rdmx_rxbufs_alloc(struct rdmx_rxbufs *rb, size_t size, size_t headroom, size_t cnt);
void rdmx_rxbufs_free(struct rdmx_rxbufs *rb);

/* Buffer idx, where the packet starts. */
static inline uint8_t *rdmx_rxbufs_at(const struct rdmx_rxbufs *rb, size_t idx)
{
	return rb->mem + idx * rb->stride + rb->front;
}

/*
 * Posts every buffer to the device of the lanes that owns its index
 * (rdmx_lanes_rx_dev), after registering the NIC's share where the
 * device asks for it. 0 or the first -FI_E* of a device.
 */
int rdmx_rxbufs_post_all(const struct rdmx_rxbufs *rb, struct rdmx_lanes *lanes);

/* Gives buffer idx back to its device. */
void rdmx_rxbufs_repost(const struct rdmx_rxbufs *rb, struct rdmx_lanes *lanes, size_t idx);

#endif /* RDMX_RXBUFS_H */
