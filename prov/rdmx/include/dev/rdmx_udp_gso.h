/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: UDP segmentation offload (UDP_SEGMENT, Linux 4.18) for the udp
 * device's send batch.
 *
 * Consecutive datagrams of a batch to one peer, from one local address,
 * each as long as the first but the last (which may be shorter), leave
 * as one sendmmsg entry: their bytes one after another and a UDP_SEGMENT
 * control message naming the datagram size. The kernel crosses its stack
 * once for the run and cuts it back into the same datagrams, each with
 * its own UDP header, at the device (or in software just before it).
 * The receiver sees exactly the datagrams that were queued, swsrd
 * headers included.
 */
#ifndef RDMX_UDP_GSO_H
#define RDMX_UDP_GSO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rdmx_dev.h"
#include "rdmx_dev_udp.h"

/* Datagrams of one run at most: UDP_MAX_SEGMENTS of kernels before 6.x. */
#define RDMX_UDP_GSO_SEGS	64
/*
 * Bytes of one run at most: an IPv6 packet's 65,535 payload bytes less
 * its UDP header and room for the IPv6 header some paths count (IPv4
 * allows 65,507).
 */
#define RDMX_UDP_GSO_BYTES	65487

/* Room for the source address (wildcard devices) and UDP_SEGMENT. */
union rdmx_udp_gso_ctl {
	struct cmsghdr	align;
	uint8_t		buf[sizeof(union rdmx_udp_ctl) + CMSG_SPACE(sizeof(uint16_t))];
};

/*
 * Runs of datagrams up to this size are staged: copied into one buffer
 * and handed to the kernel as one piece. A whole batch of them fits.
 */
#define RDMX_UDP_GSO_STAGE_SEG	4096

/* A send batch packed into runs. */
struct rdmx_udp_gso {
	struct mmsghdr		msgs[RDMX_UDP_TX_BATCH];
	/* first[i]: index in the batch of msgs[i]'s first datagram. */
	size_t			first[RDMX_UDP_TX_BATCH + 1];
	struct iovec		iov[RDMX_UDP_TX_BATCH * (1 + RDMX_DEV_SGE_MAX)];
	union rdmx_udp_gso_ctl	ctl[RDMX_UDP_TX_BATCH];
	size_t			cnt;
	/* Datagrams moved to the end of their run: where, behind how many. */
	size_t			trail_at[RDMX_UDP_TX_BATCH];
	unsigned		trail_by[RDMX_UDP_TX_BATCH];
	size_t			trails;
	size_t			staged;		/* bytes of stage the runs fill */
	uint8_t			stage[RDMX_UDP_TX_BATCH * RDMX_UDP_GSO_STAGE_SEG];
};

/*
 * Packs the n (<= RDMX_UDP_TX_BATCH) datagrams of batch into g->msgs:
 * runs of two or more with UDP_SEGMENT (of small datagrams, copied into
 * g->stage), others as they are (pointing into batch's iovecs, names and
 * control). A shorter datagram that would cut a run short leaves at its
 * end instead, behind up to RDMX_UDP_GSO_SEGS - 2 later ones of its path:
 * batch is reordered so, and g->trail_at/trail_by say which moved, behind
 * how many. Returns g->cnt.
 */
size_t rdmx_udp_gso_pack(struct rdmx_udp_gso *g, struct mmsghdr *batch, size_t n);

/* Datagrams in g->msgs[i]. */
static inline size_t rdmx_udp_gso_segs(const struct rdmx_udp_gso *g, size_t i)
{
	return g->first[i + 1] - g->first[i];
}

#endif /* RDMX_UDP_GSO_H */
