/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: lanes, the NIC or shm per peer (rdmx_lane.h). */
#include <string.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_lane.h"

/*
 * Shm polls between two NIC polls, at most, while the NIC is quiet. The
 * gap grows by one poll per empty NIC poll, so the NIC is polled this
 * seldom only after about RDMX_LANES_NIC_WAIT_MAX^2 / 2 polls without a
 * packet (a millisecond or more); a NIC packet then waits that many shm
 * polls at most (10-25 us here). A udp NIC poll is a system call, which
 * costs 1-3 us on the VMs measured: at 64, the 8 B ping-pong by shm
 * paid one every few messages (RESULTS.md).
 */
#define RDMX_LANES_NIC_WAIT_MAX	256u

void rdmx_lanes_open(struct rdmx_lanes *lanes, const struct rdmx_dev_attr *attr, bool want)
{
	int ret;

	lanes->shm = NULL;
	if (!want)
		return;
	ret = rdmx_dev_shm_ops.open(attr, &lanes->shm);
	if (ret) {
		lanes->shm = NULL;
		RDMX_INFO(FI_LOG_EP_CTRL, "no shared-memory lane: %s\n", fi_strerror(-ret));
	}
}

void rdmx_lanes_close(struct rdmx_lanes *lanes)
{
	if (lanes->shm)
		lanes->shm->ops->close(lanes->shm);
	lanes->shm = NULL;
}

uint64_t rdmx_lanes_host(const struct rdmx_lanes *lanes)
{
	if (lanes->nic->caps.read_host)
		return lanes->nic->caps.read_host;
	return lanes->shm ? lanes->shm->caps.read_host : 0;
}

size_t rdmx_lanes_mtu(const struct rdmx_lanes *lanes)
{
	size_t mtu = lanes->nic->caps.mtu;

	return lanes->shm ? RDMX_MAX(mtu, lanes->shm->caps.mtu) : mtu;
}

size_t rdmx_lanes_headroom(const struct rdmx_lanes *lanes)
{
	size_t room = lanes->nic->caps.rx_headroom;

	return lanes->shm ? RDMX_MAX(room, lanes->shm->caps.rx_headroom) : room;
}

int rdmx_lanes_poll(struct rdmx_lanes *lanes, struct rdmx_dev_cqe *cqe, int max)
{
	int n = 0, nic;

	if (lanes->shm)
		n = lanes->shm->ops->poll_cq(lanes->shm, cqe, max);
	if (n == max)
		return n;
	lanes->nic_skipped = lanes->shm_peers && lanes->nic_wait;
	if (lanes->nic_skipped) {
		lanes->nic_wait--;
		return n;
	}
	nic = lanes->nic->ops->poll_cq(lanes->nic, cqe + n, max - n);
	lanes->nic_idle = nic ? 0 : lanes->nic_idle + 1;
	lanes->nic_wait = RDMX_MIN(lanes->nic_idle, RDMX_LANES_NIC_WAIT_MAX);
	return n + nic;
}

int rdmx_lanes_wait_fds(const struct rdmx_lanes *lanes, int fds[2])
{
	struct rdmx_dev *devs[2] = { lanes->nic, lanes->shm };
	int n = 0;

	for (int i = 0; i < 2; i++) {
		int fd = devs[i] && devs[i]->ops->wait_fd ? devs[i]->ops->wait_fd(devs[i]) : -1;

		if (fd >= 0)
			fds[n++] = fd;
	}
	return n;
}

/* One device's part of rdmx_lanes_wait_arm. */
static int rdmx_lanes_dev_arm(struct rdmx_dev *dev, uint64_t *due_p)
{
	if (!dev->ops->wait_arm || dev->ops->wait_fd(dev) < 0) {
		*due_p = RDMX_MIN(*due_p, rdmx_clock_ns() + RDMX_DEV_WAIT_TICK_NS);
		return dev->ops->wait_arm ? dev->ops->wait_arm(dev, due_p) : 0;
	}
	return dev->ops->wait_arm(dev, due_p);
}

int rdmx_lanes_wait_arm(struct rdmx_lanes *lanes, uint64_t *due_p)
{
	/* The last poll passed the NIC by: poll it before anyone sleeps. */
	if (lanes->nic_skipped) {
		lanes->nic_wait = 0;
		return -FI_EAGAIN;
	}
	if (lanes->shm && rdmx_lanes_dev_arm(lanes->shm, due_p))
		return -FI_EAGAIN;
	return rdmx_lanes_dev_arm(lanes->nic, due_p);
}

void rdmx_lane_init(struct rdmx_lane *lane, const struct rdmx_lanes *lanes,
		    struct rdmx_ah *nic_ah, const void *nic_addr)
{
	*lane = (struct rdmx_lane) { .dev = lanes->nic, .ah = nic_ah, .nic_ah = nic_ah };
	memcpy(lane->nic_addr, nic_addr, lanes->nic->ops->addr_size);
}

/* Sends go by the NIC from now on. */
static void rdmx_lane_to_nic(struct rdmx_lanes *lanes, struct rdmx_lane *lane)
{
	if (lane->dev != lanes->nic)
		lanes->shm_peers--;
	lane->dev = lanes->nic;
	lane->ah = lane->nic_ah;
}

void rdmx_lane_fini(struct rdmx_lanes *lanes, struct rdmx_lane *lane)
{
	rdmx_lane_to_nic(lanes, lane);
	if (lane->shm_ah)
		lanes->shm->ops->ah_destroy(lanes->shm, lane->shm_ah);
	lane->shm_ah = NULL;
}

bool rdmx_lane_learn(struct rdmx_lanes *lanes, struct rdmx_lane *lane,
		     const struct rdmx_shm_addr *addr, void *context)
{
	struct rdmx_ah *ah;

	if (!lanes->shm)
		return false;
	/* A name tried before, mapped or not: tried once only. */
	if (!memcmp(&lane->shm_addr, addr, sizeof(*addr)))
		return lane->shm_ah != NULL;
	rdmx_lane_fini(lanes, lane);
	lane->shm_addr = *addr;
	if (lanes->shm->ops->ah_create(lanes->shm, addr, &ah)) {
		RDMX_INFO(FI_LOG_EP_CTRL, "the shm queue of a peer on this host "
			  "cannot be mapped: it stays on the NIC\n");
		return false;
	}
	/*
	 * A queue is one peer's lane. Another peer naming it (the same
	 * endpoint known at two of its addresses, or a claim of someone
	 * else's queue) stays on the NIC: its packets name their sender by
	 * the queue, and would be the first peer's, or outlive the second.
	 */
	if (ah->context && ah->context != context) {
		lanes->shm->ops->ah_destroy(lanes->shm, ah);
		RDMX_INFO(FI_LOG_EP_CTRL, "an shm queue another peer's lane "
			  "has: this one stays on the NIC\n");
		return false;
	}
	ah->context = context;
	lane->shm_ah = ah;
	return true;
}

bool rdmx_lane_use_shm(struct rdmx_lanes *lanes, struct rdmx_lane *lane)
{
	if (!lane->shm_ah)
		return false;
	if (lane->dev == lanes->nic)
		lanes->shm_peers++;
	lane->dev = lanes->shm;
	lane->ah = lane->shm_ah;
	return true;
}

void rdmx_lane_use_nic(struct rdmx_lanes *lanes, struct rdmx_lane *lane)
{
	rdmx_lane_to_nic(lanes, lane);
	if (lanes->nic->ops->ah_reset)
		lanes->nic->ops->ah_reset(lanes->nic, lane->nic_ah);
}

void rdmx_lane_peer(struct rdmx_lanes *lanes, struct rdmx_lane *lane, unsigned flags)
{
	if (lanes->nic->ops->ah_peer)
		lanes->nic->ops->ah_peer(lanes->nic, lane->nic_ah, flags);
}

size_t rdmx_lane_mtu(const struct rdmx_lane *lane)
{
	const struct rdmx_dev *dev = lane->dev;

	return dev->ops->ah_mtu ? dev->ops->ah_mtu(lane->dev, lane->ah) : dev->caps.mtu;
}
