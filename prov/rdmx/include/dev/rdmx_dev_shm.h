/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the shm device, for peers on this host (the lane layer picks it
 * per peer, rdmx_lane.h). Each open device owns one receive queue: a
 * ring of RDMX_SHM_SLOTS packet slots in an anonymous shared-memory file
 * (memfd), which peers map by opening /proc/<pid>/fd/<fd> of the owner,
 * so nothing is left behind when a process dies. Any number of senders
 * enqueue lock-free (a ticket per slot, published by the slot's sequence
 * number); the owner alone dequeues, into the buffers posted to it.
 *
 * Reliable and ordered per sender: a send is complete once its packet is
 * in the peer's ring (copied there at post time); a full ring is a full
 * send queue (-FI_EAGAIN) while the owner lives. Polls ask every 100 ms
 * whether the owners of the rings mapped still live (their pidfds): once
 * one exited, every send to it completes UNREACH, full ring or not.
 * Bulk data goes by RDMA read (CMA, rdmx_cma.h).
 *
 * An address is what a peer needs to map the ring: the owner's pid, the
 * memfd's descriptor number there and a random token the ring's header
 * must hold. Only processes of the same user in the same pid namespace
 * can open it; a ring whose header does not match is not used. Packets
 * from a sender without a handle here (a peer not yet known as on this
 * host) are dropped and counted: the lane layer makes the handle before
 * that peer can send (rdmx_lane.h).
 */
#ifndef RDMX_DEV_SHM_H
#define RDMX_DEV_SHM_H

#include <stdint.h>

#include "rdmx_dev.h"

/* The canonical address of a shm device. */
struct rdmx_shm_addr {
	uint32_t	pid;
	uint32_t	fd;
	uint64_t	token;
};

extern const struct rdmx_dev_ops rdmx_dev_shm_ops;

#endif /* RDMX_DEV_SHM_H */
