/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the route to a udp peer as the routing table holds it.
 *
 * Asked with RTM_F_FIB_MATCH (Linux 4.13), the table answers with the
 * route it matched, not with the kernel's cached copy of it: the cached
 * copy also carries the path MTU learned from ICMP "fragmentation
 * needed" and "packet too big", which anyone on the network can forge
 * with the two addresses alone, and which a socket's IP_MTU reports. One
 * forged datagram made every new session to a peer cut its data into
 * 524-byte packets for the ten minutes the kernel keeps what it learned.
 * The sockets ignore such reports too (rdmx_udp_pmtu_fixed).
 */
#ifndef RDMX_UDP_ROUTE_H
#define RDMX_UDP_ROUTE_H

#include <sys/socket.h>

/*
 * The route the table matches for the IPv4 or IPv6 address dest (a
 * struct sockaddr_in or _in6): its output interface in *ifindex, and its
 * own MTU (`ip route ... mtu N`) in *mtu, 0 when it sets none. 0, or
 * -errno: the kernel's (-ENETUNREACH: no route), -EHOSTUNREACH for a
 * route of several next hops (no one interface), -EAGAIN if no answer
 * came.
 */
int rdmx_udp_route_get(const struct sockaddr *dest, unsigned *ifindex, unsigned *mtu);

#endif /* RDMX_UDP_ROUTE_H */
