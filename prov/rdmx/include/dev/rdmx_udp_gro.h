/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: UDP receive offload (UDP_GRO, Linux 5.0) for the udp device.
 *
 * With UDP_GRO on, the kernel may hand a socket several datagrams of one
 * sender in one read: those a sender's UDP_SEGMENT run carried (on one
 * host, or a veth pair, the run arrives whole) or that the receiving
 * device's GRO merged. Each datagram but the last is as long as a control
 * message (SOL_UDP, UDP_GRO) says, each starts with its own swsrd header,
 * and the read holds at most 65,535 bytes. The device reads into a
 * posted buffer followed by a small tail of its own, and hands up the
 * datagrams one by one, each copied into a posted buffer of its own.
 */
#ifndef RDMX_UDP_GRO_H
#define RDMX_UDP_GRO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rdmx_dev_udp.h"

/* Bytes of one read at most: UDP's 16-bit length. */
#define RDMX_UDP_GRO_MAX	65535
/* Bytes read past a posted buffer: a read fills buffer, then tail. */
#define RDMX_UDP_GRO_TAIL	128

/* Room for a received datagram's local address and UDP_GRO size. */
union rdmx_udp_rx_ctl {
	struct cmsghdr	align;
	uint8_t		buf[sizeof(union rdmx_udp_ctl) + CMSG_SPACE(sizeof(int))];
};

/* Asks the kernel to merge datagrams on socket fd; 0 or -errno. */
int rdmx_udp_gro_enable(int fd);

/*
 * The datagram size of a read with message header m (its UDP_GRO
 * control message); 0 when it has none: the read is one datagram.
 */
size_t rdmx_udp_gro_size(const struct msghdr *m);

#endif /* RDMX_UDP_GRO_H */
