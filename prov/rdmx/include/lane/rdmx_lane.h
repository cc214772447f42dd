/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: lanes. An endpoint has the NIC device it was opened on (udp,
 * verbs or efa) and, unless FI_RDMX_SHM=0 or this host cannot, a shm
 * device (rdmx_dev_shm.h); each peer has a lane that says which of the
 * two its packets go by. The rdm layer hands packets to the lane and
 * polls the lanes; it asks a lane what it can do, never which device it
 * is.
 *
 * A peer's lane is the NIC until its handshake shows it on this host
 * with a shm queue of its own: the handshake names the queue
 * (RDMX_HS_FEAT_SHM), and the lane maps it at once (rdmx_lane_learn), so
 * the peer's packets are recognised as its own before it can send any by
 * shm. Sends move to shm when the session is up (rdmx_lane_use_shm):
 * both sides then know the other's queue, since each answered the
 * other's probes only after taking its RESET or ACK. A session that ends
 * moves them back to the NIC, where the next handshake runs; the mapping
 * stays for as long as the peer's queue is the same.
 */
#ifndef RDMX_LANE_H
#define RDMX_LANE_H

#include <stdbool.h>
#include <stddef.h>

#include "rdmx_dev.h"
#include "rdmx_dev_shm.h"

/* An endpoint's devices. */
struct rdmx_lanes {
	struct rdmx_dev		*nic;
	struct rdmx_dev		*shm;		/* NULL: no same-host lane */
	size_t			nic_rx;		/* receive buffers below this
						   index are the NIC's */
	size_t			shm_peers;	/* lanes sending by shm */
	uint32_t		nic_idle;	/* NIC polls in a row with nothing */
	uint32_t		nic_wait;	/* shm polls before the NIC's next */
	bool			nic_skipped;	/* the last poll passed it by */
};

/* A peer's lane. */
struct rdmx_lane {
	struct rdmx_dev		*dev;		/* its packets go by this */
	struct rdmx_ah		*ah;		/* to this handle there */
	struct rdmx_ah		*nic_ah;
	uint8_t			nic_addr[RDMX_DEV_ADDR_MAX]; /* canonical */
	struct rdmx_ah		*shm_ah;	/* its shm queue, once known */
	struct rdmx_shm_addr	shm_addr;	/* the last name tried */
};

/*
 * Opens the shm device beside lanes->nic (open already) when want is
 * true, its queue sizes as attr's; a host where it cannot open has no
 * shm lane (logged). Never fails: the NIC lane always exists.
 */
void rdmx_lanes_open(struct rdmx_lanes *lanes, const struct rdmx_dev_attr *attr, bool want);
void rdmx_lanes_close(struct rdmx_lanes *lanes);

/* This host's identity for the handshake (a device's read_host), or 0. */
uint64_t rdmx_lanes_host(const struct rdmx_lanes *lanes);

/* The largest packet any lane delivers, and the headroom it needs. */
size_t rdmx_lanes_mtu(const struct rdmx_lanes *lanes);
size_t rdmx_lanes_headroom(const struct rdmx_lanes *lanes);

/*
 * The device that receive buffer idx belongs to: with a shm lane the
 * NIC's are [0, nic_rx) and the shm device's the rest; else all the NIC's.
 */
static inline struct rdmx_dev *rdmx_lanes_rx_dev(const struct rdmx_lanes *lanes, size_t idx)
{
	return lanes->shm && idx >= lanes->nic_rx ? lanes->shm : lanes->nic;
}

/*
 * Up to max completions of every lane: the shm device's at each call,
 * the NIC's at each call while no lane sends by shm, else at calls
 * spaced further apart the longer the NIC stays quiet (a system call
 * that finds nothing costs more than a whole shm round trip).
 */
int rdmx_lanes_poll(struct rdmx_lanes *lanes, struct rdmx_dev_cqe *cqe, int max);

/* The next rdmx_lanes_poll polls the NIC, however busy the shm lane is. */
static inline void rdmx_lanes_poll_nic_next(struct rdmx_lanes *lanes)
{
	lanes->nic_wait = 0;
}

/*
 * The descriptors a thread may sleep on for lanes (the wait_fd of each
 * device that has one) into fds; returns how many (at most 2).
 */
int rdmx_lanes_wait_fds(const struct rdmx_lanes *lanes, int fds[2]);

/*
 * Before a thread sleeps on those, after rdmx_lanes_poll: -FI_EAGAIN
 * when a device has something already (poll again); else 0, with *due_p
 * lowered to when the lanes must be polled anyway (their timers; a
 * device with no descriptor: a tick from now).
 */
int rdmx_lanes_wait_arm(struct rdmx_lanes *lanes, uint64_t *due_p);

/* A lane by the NIC to nic_ah, the peer's handle for canonical address nic_addr. */
void rdmx_lane_init(struct rdmx_lane *lane, const struct rdmx_lanes *lanes,
		    struct rdmx_ah *nic_ah, const void *nic_addr);
/* Lets go of the peer's shm queue; sends go by the NIC again. */
void rdmx_lane_fini(struct rdmx_lanes *lanes, struct rdmx_lane *lane);

/*
 * The peer's handshake named its shm queue: maps it (context: the rdm
 * layer's peer, for the packets that come from it), once per name: a
 * name that could not be mapped, or whose queue is another peer's lane
 * already, is not tried again. Returns whether the lane can send by shm
 * from now on.
 */
bool rdmx_lane_learn(struct rdmx_lanes *lanes, struct rdmx_lane *lane,
		     const struct rdmx_shm_addr *addr, void *context);

/* Sends go by shm if the peer's queue is mapped; returns whether they do. */
bool rdmx_lane_use_shm(struct rdmx_lanes *lanes, struct rdmx_lane *lane);
/* Sends go by the NIC (a session ended); the NIC ends its own session. */
void rdmx_lane_use_nic(struct rdmx_lanes *lanes, struct rdmx_lane *lane);

/* What the peer's handshake said its NIC device does (RDMX_DEV_PEER_*). */
void rdmx_lane_peer(struct rdmx_lanes *lanes, struct rdmx_lane *lane, unsigned flags);

/* Whether the peer's packets go by shm now. */
static inline bool rdmx_lane_by_shm(const struct rdmx_lane *lane)
{
	return lane->ah == lane->shm_ah;
}

/* Whether the peer is reached by shm: its queue is mapped, so it is here. */
static inline bool rdmx_lane_here(const struct rdmx_lane *lane)
{
	return lane->shm_ah != NULL;
}

/*
 * The device that exposes memory to the peer and reads the peer's:
 * shm (reads of this host) once its queue is mapped, else the NIC. Both
 * sides decide alike, as both map the other's queue before either's
 * session is up.
 */
static inline struct rdmx_dev *rdmx_lane_read_dev(const struct rdmx_lanes *lanes,
						  const struct rdmx_lane *lane)
{
	return lane->shm_ah ? lanes->shm : lanes->nic;
}

static inline struct rdmx_ah *rdmx_lane_read_ah(const struct rdmx_lane *lane)
{
	return lane->shm_ah ? lane->shm_ah : lane->nic_ah;
}

/* The device's post_send on the peer's lane. */
static inline int rdmx_lane_send(const struct rdmx_lane *lane, const struct iovec *iov,
				 size_t iov_cnt, uint64_t wr_id, unsigned flags)
{
	return lane->dev->ops->post_send(lane->dev, lane->ah, iov, iov_cnt, wr_id, flags);
}

/* The packets one post carries on the peer's lane (rdmx_dev_segs_max). */
static inline size_t rdmx_lane_segs(const struct rdmx_lane *lane)
{
	return rdmx_dev_segs_max(lane->dev);
}

/* The device's post_send_segs on the peer's lane (rdmx_lane_segs above 1). */
static inline int rdmx_lane_send_segs(const struct rdmx_lane *lane, const struct iovec *iov,
				      size_t iov_cnt, size_t seg_len, size_t off_at,
				      uint64_t wr_id, unsigned flags)
{
	return lane->dev->ops->post_send_segs(lane->dev, lane->ah, iov, iov_cnt, seg_len,
					      off_at, wr_id, flags);
}

/* The largest datagram the lane carries to the peer. */
size_t rdmx_lane_mtu(const struct rdmx_lane *lane);

#endif /* RDMX_LANE_H */
