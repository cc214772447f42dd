/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_udp_route: the route to a peer as the routing table holds it. A
 * wrong interface would size a peer's packets by another interface's
 * MTU; a socket that still took learned path MTUs into account would
 * let a forged ICMP shrink or refuse its sends (scripts/attack.sh forges
 * one between two namespaces and checks what the endpoint does).
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

#include "rdmx_test.h"
#include "rdmx_dev_udp.h"
#include "rdmx_udp_route.h"
#include "rdmx_test_udp.h"

static union rdmx_udp_addr loopback(int family)
{
	union rdmx_udp_addr a;

	memset(&a, 0, sizeof(a));
	a.sa.sa_family = (sa_family_t) family;
	if (family == AF_INET)
		a.sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		a.sin6.sin6_addr = in6addr_loopback;
	return a;
}

Test(udp_route, a_loopback_peer_is_reached_through_lo)
{
	union rdmx_udp_addr a = loopback(AF_INET);
	unsigned ifindex = 0, mtu = 1;

	cr_assert_eq(rdmx_udp_route_get(&a.sa, &ifindex, &mtu), 0);
	cr_assert_eq(ifindex, if_nametoindex("lo"), "route through interface %u", ifindex);
	cr_assert_eq(mtu, 0, "lo's route sets no MTU of its own");
	cr_assert_gt(rdmx_udp_route_mtu(&a), 60000, "loopback carries 64 KiB datagrams");
}

Test(udp_route, ipv6_is_asked_the_same_way)
{
	union rdmx_udp_addr a = loopback(AF_INET6);
	unsigned ifindex = 0, mtu = 1;
	int ret = rdmx_udp_route_get(&a.sa, &ifindex, &mtu);

	if (ret == -EAFNOSUPPORT || ret == -ENETUNREACH)
		cr_skip("no IPv6 loopback route here: %s", strerror(-ret));
	cr_assert_eq(ret, 0, "%s", strerror(-ret));
	cr_assert_eq(ifindex, if_nametoindex("lo"));
}

Test(udp_route, another_family_is_refused)
{
	struct sockaddr sa = { .sa_family = AF_UNIX };
	unsigned ifindex, mtu;

	cr_assert_eq(rdmx_udp_route_get(&sa, &ifindex, &mtu), -EAFNOSUPPORT);
}

/* The IPv4 datagram sockets open now, in fds (up to max); their count. */
static size_t udp_sockets(int *fds, size_t max)
{
	size_t n = 0;

	for (int fd = 0; fd < 1024 && n < max; fd++) {
		int type = 0, domain = 0;
		socklen_t len = sizeof(int);

		if (!getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) && type == SOCK_DGRAM &&
		    !getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) && domain == AF_INET)
			fds[n++] = fd;
	}
	return n;
}

Test(udp_route, every_socket_of_a_device_ignores_learned_path_mtus)
{
	int before[64], after[64];
	size_t nb = udp_sockets(before, 64), na, mine = 0;
	struct rdmx_dev *dev = rdmx_test_udp_open(3);

	na = udp_sockets(after, 64);
	for (size_t i = 0; i < na; i++) {
		int v = -1;
		socklen_t len = sizeof(v);
		bool old = false;

		for (size_t j = 0; j < nb; j++)
			old |= before[j] == after[i];
		if (old)
			continue;
		mine++;
		cr_assert_eq(getsockopt(after[i], IPPROTO_IP, IP_MTU_DISCOVER, &v, &len), 0);
		cr_assert_eq(v, IP_PMTUDISC_OMIT, "socket %d: path MTU discovery mode %d",
			     after[i], v);
	}
	cr_assert_eq(mine, 3, "the device's sockets: one per path");
	dev->ops->close(dev);
}
