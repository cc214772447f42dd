/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx fuzzing: a datagram device without sockets. It is built on
 * struct rdmx_dgram like the udp device, so swsrd, the handles of known
 * and unknown senders and rdmx_dgram_rx are the provider's own code;
 * only the wire is fake: what it sends is counted and dropped, and what
 * it receives is what the harness injected before the endpoint's next
 * poll. Remote reads (RDMX_DEV_CAP_RDMA_READ) complete at the next poll
 * after filling the local buffers, so a wrong length computed from a
 * hostile read descriptor is an out-of-bounds write the sanitizers see.
 *
 * Addresses are the udp device's canonical socket addresses, so AVs,
 * address strings and the cookies of unknown senders work as on udp.
 */
#ifndef FUZZ_DEV_H
#define FUZZ_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdmx_dev.h"

/* Datagrams one poll may find waiting, at most. */
#define FUZZ_DEV_RXQ		8
/* Bytes of the largest rdm packet (the receive buffers' size). */
#define FUZZ_DEV_MTU		1024

extern const struct rdmx_dev_ops fuzz_dev_ops;

/* The one device open now (the harness opens one endpoint), or NULL. */
struct rdmx_dev *fuzz_dev_current(void);

/*
 * Queues a datagram of len bytes (swsrd header and all) from the sender
 * at canonical address src for the next poll; false when the queue is
 * full and it was dropped, as a full socket would.
 */
bool fuzz_dev_inject(struct rdmx_dev *dev, const void *src, const void *buf,
		     size_t len);

/*
 * The dst_tag a datagram from src must carry to pass swsrd now: the tag
 * of its handle, or the cookie offered to an unknown sender.
 */
uint64_t fuzz_dev_tag(struct rdmx_dev *dev, const void *src);

/*
 * Our transmit session toward src, what its acks name, and the next psn
 * we will send in it; false without a handle.
 */
bool fuzz_dev_tx_state(struct rdmx_dev *dev, const void *src, uint32_t *epoch,
		       uint32_t *snd_nxt);

/* Datagrams the device sent (and dropped) since it opened. */
uint64_t fuzz_dev_sent(struct rdmx_dev *dev);

#endif /* FUZZ_DEV_H */
