/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: the route to a udp peer, from the routing table (rdmx_udp_route.h). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "rdmx_udp_route.h"

/* RTM_GETROUTE for one address: the attribute follows the rtmsg unpadded. */
struct rdmx_udp_route_req {
	struct nlmsghdr		nh;
	struct rtmsg		rt;
	struct rtattr		dst_attr;
	unsigned char		dst[sizeof(struct in6_addr)];
};

_Static_assert(sizeof(struct nlmsghdr) + NLMSG_ALIGN(sizeof(struct rtmsg)) ==
	       offsetof(struct rdmx_udp_route_req, dst_attr),
	       "the request's attribute must sit where the kernel reads it");

/* The route's own MTU from its RTA_METRICS attribute a. */
static unsigned rdmx_udp_route_metric_mtu(const struct rtattr *a)
{
	int left = (int) RTA_PAYLOAD(a);
	unsigned mtu = 0;

	for (const struct rtattr *m = RTA_DATA(a); RTA_OK(m, left); m = RTA_NEXT(m, left))
		if (m->rta_type == RTAX_MTU && RTA_PAYLOAD(m) >= sizeof(uint32_t))
			memcpy(&mtu, RTA_DATA(m), sizeof(uint32_t));
	return mtu;
}

/* Reads the answer nh (len bytes were received) into ifindex and mtu. */
static int rdmx_udp_route_parse(const struct nlmsghdr *nh, ssize_t len,
				unsigned *ifindex, unsigned *mtu)
{
	const struct rtmsg *rt = NLMSG_DATA(nh);
	int left;

	if (len < (ssize_t) NLMSG_HDRLEN || !NLMSG_OK(nh, (unsigned) len))
		return -EPROTO;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nh);

		return nh->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ? e->error : -EPROTO;
	}
	if (nh->nlmsg_type != RTM_NEWROUTE || nh->nlmsg_len < NLMSG_LENGTH(sizeof(*rt)))
		return -EPROTO;
	*ifindex = 0;
	*mtu = 0;
	left = (int) RTM_PAYLOAD(nh);
	for (const struct rtattr *a = RTM_RTA(rt); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) >= sizeof(uint32_t))
			memcpy(ifindex, RTA_DATA(a), sizeof(uint32_t));
		else if (a->rta_type == RTA_METRICS)
			*mtu = rdmx_udp_route_metric_mtu(a);
	}
	return *ifindex ? 0 : -EHOSTUNREACH;
}

int rdmx_udp_route_get(const struct sockaddr *dest, unsigned *ifindex, unsigned *mtu)
{
	struct rdmx_udp_route_req req;
	union {
		struct nlmsghdr	nh;
		char		buf[4096];
	} ans;
	size_t alen = dest->sa_family == AF_INET ? sizeof(struct in_addr) : sizeof(struct in6_addr);
	ssize_t n;
	int fd, ret;

	if (dest->sa_family != AF_INET && dest->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = (uint32_t) (offsetof(struct rdmx_udp_route_req, dst) + alen);
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.rt.rtm_family = (unsigned char) dest->sa_family;
	req.rt.rtm_dst_len = (unsigned char) (alen * 8);
	req.rt.rtm_flags = RTM_F_FIB_MATCH;
	req.dst_attr.rta_type = RTA_DST;
	req.dst_attr.rta_len = (unsigned short) RTA_LENGTH(alen);
	memcpy(req.dst, dest->sa_family == AF_INET ?
	       (const void *) &((const struct sockaddr_in *) dest)->sin_addr :
	       (const void *) &((const struct sockaddr_in6 *) dest)->sin6_addr, alen);

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	/* The kernel answers while it takes the request: the read finds it. */
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	n = recv(fd, &ans, sizeof(ans), MSG_DONTWAIT);
	ret = n < 0 ? -errno : rdmx_udp_route_parse(&ans.nh, n, ifindex, mtu);
	close(fd);
	return ret;
}
