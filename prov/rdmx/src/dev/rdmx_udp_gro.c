/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: UDP receive offload helpers (rdmx_udp_gro.h). */
#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/udp.h>

#include "rdmx_udp_gro.h"

#ifndef UDP_GRO
#define UDP_GRO		104
#endif

int rdmx_udp_gro_enable(int fd)
{
	int on = 1;

	return setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof(on)) ? -errno : 0;
}

size_t rdmx_udp_gro_size(const struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR((struct msghdr *) m, c)) {
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int size;

			memcpy(&size, CMSG_DATA(c), sizeof(size));
			return size > 0 ? (size_t) size : 0;
		}
	}
	return 0;
}
