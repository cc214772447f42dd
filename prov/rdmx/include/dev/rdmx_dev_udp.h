/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: udp device internals shared by its two files: the device itself
 * (rdmx_dev_udp.c) and address handling (rdmx_dev_udp_addr.c).
 */
#ifndef RDMX_DEV_UDP_H
#define RDMX_DEV_UDP_H

#include <stdbool.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "rdmx_dev.h"

/* Datagrams one recvmmsg batch holds. */
#define RDMX_UDP_BATCH		32
/*
 * Datagrams one send batch holds: three whole runs of full-size datagrams
 * of a 1500-byte MTU (44 each), in one sendmmsg. A batch that ends inside
 * a run sends its rest as a short run, and every run costs the kernel
 * about as much as a full one (veth, 2026-11-30: runs of 20 moved a
 * third less than runs of 44).
 */
#define RDMX_UDP_TX_BATCH	132

/*
 * The canonical raw address: an IPv4 or IPv6 socket address with every
 * byte that does not name the queue zeroed, so two canonical addresses
 * are equal exactly when memcmp says so.
 */
union rdmx_udp_addr {
	struct sockaddr		sa;
	struct sockaddr_in	sin;
	struct sockaddr_in6	sin6;
};

_Static_assert(sizeof(union rdmx_udp_addr) <= RDMX_DEV_ADDR_MAX,
	       "udp address exceeds RDMX_DEV_ADDR_MAX");

/* Socket address length of a canonical address (0 if unknown family). */
socklen_t rdmx_udp_addr_len(const union rdmx_udp_addr *addr);

/*
 * Writes the canonical form of a socket address of len bytes to out
 * (which may alias in); returns 0 or -FI_EINVAL.
 */
int rdmx_udp_addr_canon(const union rdmx_udp_addr *in, socklen_t len,
			union rdmx_udp_addr *out);

/* The port (queue) of a canonical address, to read or write. */
in_port_t *rdmx_udp_addr_port(union rdmx_udp_addr *addr);

/* Whether two canonical addresses differ at most in their ports. */
bool rdmx_udp_addr_same_host(const union rdmx_udp_addr *a, const union rdmx_udp_addr *b);

/* Whether a canonical address names every address of its family. */
bool rdmx_udp_addr_is_any(const union rdmx_udp_addr *addr);

/*
 * Whether a canonical address is one of this network namespace's own: a
 * loopback address, or one an interface here has now.
 */
bool rdmx_udp_addr_local(const union rdmx_udp_addr *addr);

/*
 * Room for the one control message a datagram carries on a socket bound
 * to the wildcard: the local address it was sent to (IP_PKTINFO or
 * IPV6_PKTINFO on receive) or the one to send it from (on send).
 */
union rdmx_udp_ctl {
	struct cmsghdr	align;
	uint8_t		buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
};

/*
 * Asks the kernel to tell, for every datagram the socket fd of family
 * receives, the local address it was sent to. 0 or -errno.
 */
int rdmx_udp_ctl_enable(int fd, int family);

/*
 * Attaches to m (using ctl) the local address src (a canonical address
 * of the socket's family, port ignored) to send the datagram from.
 */
void rdmx_udp_ctl_set_src(struct msghdr *m, union rdmx_udp_ctl *ctl,
			  const union rdmx_udp_addr *src);

/*
 * The unicast local address a datagram received with m was sent to, in
 * out (port 0); false when the kernel said none, or it was sent to a
 * group address (IPv4 gives the receiving interface's own then).
 */
bool rdmx_udp_ctl_get_dst(const struct msghdr *m, union rdmx_udp_addr *out);

/* The rdmx_dev_ops address and domain calls of the udp device. */
uint32_t rdmx_udp_addr_format(const void *canon);
int rdmx_udp_addr_check(const void *addr, size_t len, void *canon);
size_t rdmx_udp_addr_size(const void *canon);
void rdmx_udp_addr_str(const void *canon, char *buf, size_t len);
int rdmx_udp_resolve(const char *node, const char *service, void *canon);
int rdmx_udp_domains(const void *src, const void *dest,
		     struct rdmx_dev_domain *out, size_t max);

/*
 * The largest rdm packet any interface of family takes (loopback's when
 * it is up): what an endpoint's receive buffers must hold, since peers
 * on this host reach it over loopback whatever its domain.
 */
size_t rdmx_udp_family_mtu(int family);

/*
 * Makes the socket fd of family send up to its interface's MTU whatever
 * path MTU ICMP reports, and not take such reports in at all
 * (IP_PMTUDISC_OMIT, Linux 3.15): anyone can forge them
 * (rdmx_udp_route.h). Over IPv4 its datagrams then leave without "do not
 * fragment", so a router before a narrower link fragments them; IPv6
 * routers never do. 0 or -errno.
 */
int rdmx_udp_pmtu_fixed(int fd, int family);

/*
 * The largest rdm packet the route to dest carries as configured: the
 * route's own MTU or its interface's, never a path MTU learned from
 * ICMP; 0 if unknown (no route, several next hops).
 */
size_t rdmx_udp_route_mtu(const union rdmx_udp_addr *dest);

#endif /* RDMX_DEV_UDP_H */
