/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: udp device addresses. Canonical socket addresses, their printable
 * form, name resolution, and the list of interfaces an endpoint can bind
 * to (one domain per interface address, named after the interface).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>

#include "rdmx.h"
#include "rdmx_dev_udp.h"
#include "rdmx_udp_route.h"
#include "rdmx_wire_srd.h"

/* The largest UDP payload over IPv4 (IPv6 allows 20 bytes more). */
#define RDMX_UDP_PAYLOAD_MAX	65507

socklen_t rdmx_udp_addr_len(const union rdmx_udp_addr *addr)
{
	switch (addr->sa.sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

int rdmx_udp_addr_canon(const union rdmx_udp_addr *in, socklen_t len,
			union rdmx_udp_addr *out)
{
	union rdmx_udp_addr tmp;

	memset(&tmp, 0, sizeof(tmp));
	if (in->sa.sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		tmp.sin.sin_family = AF_INET;
		tmp.sin.sin_port = in->sin.sin_port;
		tmp.sin.sin_addr = in->sin.sin_addr;
	} else if (in->sa.sa_family == AF_INET6 &&
		   len >= sizeof(struct sockaddr_in6)) {
		tmp.sin6.sin6_family = AF_INET6;
		tmp.sin6.sin6_port = in->sin6.sin6_port;
		tmp.sin6.sin6_addr = in->sin6.sin6_addr;
		tmp.sin6.sin6_scope_id = in->sin6.sin6_scope_id;
	} else {
		return -FI_EINVAL;
	}
	*out = tmp;
	return 0;
}

uint32_t rdmx_udp_addr_format(const void *canon)
{
	const union rdmx_udp_addr *addr = canon;

	return addr->sa.sa_family == AF_INET6 ? FI_SOCKADDR_IN6 : FI_SOCKADDR_IN;
}

int rdmx_udp_addr_check(const void *addr, size_t len, void *canon)
{
	union rdmx_udp_addr in;
	sa_family_t family;
	size_t need;

	if (!addr || len < sizeof(family))
		return -FI_EINVAL;
	memcpy(&family, addr, sizeof(family));
	need = family == AF_INET6 ? sizeof(struct sockaddr_in6) :
	       sizeof(struct sockaddr_in);
	if (len < need)
		return -FI_EINVAL;
	/* Copy only the family's bytes: the caller may hold no more. */
	memset(&in, 0, sizeof(in));
	memcpy(&in, addr, need);
	return rdmx_udp_addr_canon(&in, (socklen_t) need, canon);
}

size_t rdmx_udp_addr_size(const void *canon)
{
	return rdmx_udp_addr_len(canon);
}

void rdmx_udp_addr_str(const void *canon, char *buf, size_t len)
{
	const union rdmx_udp_addr *addr = canon;
	char ip[INET6_ADDRSTRLEN] = "?";

	if (addr->sa.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &addr->sin6.sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "fi_sockaddr_in6://[%s]:%u", ip,
			 ntohs(addr->sin6.sin6_port));
	} else {
		inet_ntop(AF_INET, &addr->sin.sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "fi_sockaddr_in://%s:%u", ip,
			 ntohs(addr->sin.sin_port));
	}
}

int rdmx_udp_resolve(const char *node, const char *service, void *canon)
{
	struct addrinfo hints, *res;
	int ret;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_flags = node ? 0 : AI_PASSIVE;
	ret = getaddrinfo(node, service ? service : "0", &hints, &res);
	if (ret) {
		RDMX_INFO(FI_LOG_CORE, "cannot resolve %s:%s: %s\n",
			  node ? node : "*", service ? service : "*",
			  gai_strerror(ret));
		return -FI_ENODATA;
	}
	ret = rdmx_udp_addr_canon((union rdmx_udp_addr *) res->ai_addr,
				  res->ai_addrlen, canon);
	freeaddrinfo(res);
	return ret ? -FI_ENODATA : 0;
}

static bool rdmx_udp_ip_equal(const union rdmx_udp_addr *a,
			      const union rdmx_udp_addr *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	if (a->sa.sa_family == AF_INET)
		return a->sin.sin_addr.s_addr == b->sin.sin_addr.s_addr;
	return !memcmp(&a->sin6.sin6_addr, &b->sin6.sin6_addr,
		       sizeof(a->sin6.sin6_addr));
}

bool rdmx_udp_addr_local(const union rdmx_udp_addr *addr)
{
	struct ifaddrs *ifas;
	union rdmx_udp_addr have;
	bool local = false;

	if (addr->sa.sa_family == AF_INET ?
	    (ntohl(addr->sin.sin_addr.s_addr) >> 24) == IN_LOOPBACKNET :
	    IN6_IS_ADDR_LOOPBACK(&addr->sin6.sin6_addr))
		return true;
	if (getifaddrs(&ifas))
		return false;
	for (const struct ifaddrs *ifa = ifas; ifa && !local; ifa = ifa->ifa_next) {
		local = ifa->ifa_addr &&
			!rdmx_udp_addr_canon((const union rdmx_udp_addr *) ifa->ifa_addr,
					     sizeof(have), &have) &&
			rdmx_udp_ip_equal(addr, &have);
	}
	freeifaddrs(ifas);
	return local;
}

bool rdmx_udp_addr_is_any(const union rdmx_udp_addr *a)
{
	if (a->sa.sa_family == AF_INET)
		return a->sin.sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&a->sin6.sin6_addr);
}

bool rdmx_udp_addr_same_host(const union rdmx_udp_addr *a, const union rdmx_udp_addr *b)
{
	union rdmx_udp_addr x = *a, y = *b;

	if (x.sa.sa_family != y.sa.sa_family || !rdmx_udp_addr_len(&x))
		return false;
	*rdmx_udp_addr_port(&x) = 0;
	*rdmx_udp_addr_port(&y) = 0;
	return !memcmp(&x, &y, sizeof(x));
}

int rdmx_udp_ctl_enable(int fd, int family)
{
	int on = 1;

	if (family == AF_INET ?
	    setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof(on)) :
	    setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof(on)))
		return -errno;
	return 0;
}

int rdmx_udp_pmtu_fixed(int fd, int family)
{
	int omit = family == AF_INET ? IP_PMTUDISC_OMIT : IPV6_PMTUDISC_OMIT;

	if (family == AF_INET ?
	    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &omit, sizeof(omit)) :
	    setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &omit, sizeof(omit)))
		return -errno;
	return 0;
}

void rdmx_udp_ctl_set_src(struct msghdr *m, union rdmx_udp_ctl *ctl,
			  const union rdmx_udp_addr *src)
{
	struct cmsghdr *c = &ctl->align;

	memset(ctl, 0, sizeof(*ctl));
	m->msg_control = ctl->buf;
	if (src->sa.sa_family == AF_INET) {
		struct in_pktinfo pi = { .ipi_spec_dst = src->sin.sin_addr };

		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
		m->msg_controllen = CMSG_SPACE(sizeof(pi));
	} else {
		struct in6_pktinfo pi = { .ipi6_addr = src->sin6.sin6_addr };

		c->cmsg_level = IPPROTO_IPV6;
		c->cmsg_type = IPV6_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
		m->msg_controllen = CMSG_SPACE(sizeof(pi));
	}
}

bool rdmx_udp_ctl_get_dst(const struct msghdr *m, union rdmx_udp_addr *out)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR((struct msghdr *) m, c)) {
		memset(out, 0, sizeof(*out));
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			/* The local address for a reply, even to a broadcast. */
			out->sin.sin_family = AF_INET;
			out->sin.sin_addr = pi.ipi_spec_dst;
			return pi.ipi_spec_dst.s_addr != htonl(INADDR_ANY);
		}
		if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			out->sin6.sin6_family = AF_INET6;
			out->sin6.sin6_addr = pi.ipi6_addr;
			return !IN6_IS_ADDR_MULTICAST(&pi.ipi6_addr) &&
			       !IN6_IS_ADDR_UNSPECIFIED(&pi.ipi6_addr);
		}
	}
	return false;
}

in_port_t *rdmx_udp_addr_port(union rdmx_udp_addr *a)
{
	return a->sa.sa_family == AF_INET ? &a->sin.sin_port : &a->sin6.sin6_port;
}

/* Bytes of UDP payload left for an rdm packet in a datagram of mtu. */
static size_t rdmx_udp_payload(size_t mtu, int family)
{
	size_t hdr = (family == AF_INET ? 20 : 40) + 8 + sizeof(struct rdmx_wire_srd);
	size_t max = RDMX_UDP_PAYLOAD_MAX - sizeof(struct rdmx_wire_srd);

	if (mtu > hdr)
		max = RDMX_MIN(max, mtu - hdr);
	if (g_rdmx_params.mtu)
		max = RDMX_MIN(max, g_rdmx_params.mtu);
	return max;
}

/*
 * Bytes of an rdm packet on an interface: its MTU less the IP, UDP and
 * swsrd headers.
 */
static size_t rdmx_udp_iface_mtu(const char *name, int family)
{
	struct ifreq ifr;
	size_t mtu = 0;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
		if (!ioctl(fd, SIOCGIFMTU, &ifr) && ifr.ifr_mtu > 0)
			mtu = (size_t) ifr.ifr_mtu;
		close(fd);
	}
	return rdmx_udp_payload(mtu, family);
}

/* Usable: up, IPv4 or IPv6 (not link-local, whose scope would leak). */
static bool rdmx_udp_iface_usable(const struct ifaddrs *ifa)
{
	if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP))
		return false;
	if (ifa->ifa_addr->sa_family == AF_INET)
		return true;
	return ifa->ifa_addr->sa_family == AF_INET6 &&
	       !IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *) ifa->ifa_addr)->sin6_addr);
}

/*
 * The source address the kernel would use to reach dest, found by
 * connecting a UDP socket (which sends nothing).
 */
static int rdmx_udp_route_src(const union rdmx_udp_addr *dest,
			      union rdmx_udp_addr *src)
{
	union rdmx_udp_addr to = *dest;
	socklen_t len = sizeof(*src);
	int fd, ret = 0;

	if (!*rdmx_udp_addr_port(&to))
		*rdmx_udp_addr_port(&to) = htons(9);
	fd = socket(to.sa.sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, &to.sa, rdmx_udp_addr_len(&to)) ||
	    getsockname(fd, &src->sa, &len))
		ret = -FI_ENODATA;
	close(fd);
	if (!ret)
		ret = rdmx_udp_addr_canon(src, len, src);
	if (!ret)
		*rdmx_udp_addr_port(src) = 0;
	return ret;
}

/* Whether an interface address is a candidate for the request. */
static bool rdmx_udp_domain_fits(const struct ifaddrs *ifa,
				 const union rdmx_udp_addr *want, bool any_ip)
{
	union rdmx_udp_addr have;

	if (!rdmx_udp_iface_usable(ifa))
		return false;
	if (rdmx_udp_addr_canon((const union rdmx_udp_addr *) ifa->ifa_addr,
				sizeof(have), &have))
		return false;
	if (want && want->sa.sa_family != have.sa.sa_family)
		return false;
	if (want && !any_ip)
		return rdmx_udp_ip_equal(want, &have);
	return !g_rdmx_params.iface || !strcmp(g_rdmx_params.iface, ifa->ifa_name);
}

size_t rdmx_udp_family_mtu(int family)
{
	struct ifaddrs *ifas;
	size_t max = 0;

	if (getifaddrs(&ifas))
		return 0;
	for (const struct ifaddrs *ifa = ifas; ifa; ifa = ifa->ifa_next) {
		if (rdmx_udp_iface_usable(ifa) && ifa->ifa_addr->sa_family == family)
			max = RDMX_MAX(max, rdmx_udp_iface_mtu(ifa->ifa_name, family));
	}
	freeifaddrs(ifas);
	return max;
}

size_t rdmx_udp_route_mtu(const union rdmx_udp_addr *dest)
{
	unsigned ifindex, route_mtu;
	char name[IF_NAMESIZE];
	size_t mtu;

	if (rdmx_udp_route_get(&dest->sa, &ifindex, &route_mtu) ||
	    !if_indextoname(ifindex, name))
		return 0;
	mtu = rdmx_udp_iface_mtu(name, dest->sa.sa_family);
	if (route_mtu)
		mtu = RDMX_MIN(mtu, rdmx_udp_payload(route_mtu, dest->sa.sa_family));
	return mtu;
}

/* Writes the domain of interface address ifa, with port, to out. */
static void rdmx_udp_domain_fill(const struct ifaddrs *ifa, in_port_t port,
				 struct rdmx_dev_domain *out)
{
	union rdmx_udp_addr *addr = (union rdmx_udp_addr *) out->addr;

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", ifa->ifa_name);
	rdmx_udp_addr_canon((const union rdmx_udp_addr *) ifa->ifa_addr,
			    sizeof(union rdmx_udp_addr), addr);
	*rdmx_udp_addr_port(addr) = port;
	out->mtu = rdmx_udp_iface_mtu(ifa->ifa_name, ifa->ifa_addr->sa_family);
}

/*
 * Appends to out the fitting interface addresses of one family: those of
 * other interfaces, or loopback's when no other fits. A loopback address
 * is meaningful on this host only, so offering it beside a NIC's would
 * let an application advertise an address its peers on other hosts
 * cannot reach; loopback is still what an application gets when it names
 * a loopback address or the host has nothing else.
 */
static size_t rdmx_udp_domains_family(const struct ifaddrs *ifas, int family,
				      const union rdmx_udp_addr *want, bool any_ip,
				      in_port_t port, struct rdmx_dev_domain *out,
				      size_t max)
{
	size_t n = 0;

	for (int loop = 0; loop < 2 && !n; loop++) {
		for (const struct ifaddrs *ifa = ifas; ifa && n < max; ifa = ifa->ifa_next) {
			if (!!(ifa->ifa_flags & IFF_LOOPBACK) != loop ||
			    !ifa->ifa_addr || ifa->ifa_addr->sa_family != family ||
			    !rdmx_udp_domain_fits(ifa, want, any_ip))
				continue;
			rdmx_udp_domain_fill(ifa, port, &out[n++]);
		}
	}
	return n;
}

int rdmx_udp_domains(const void *src, const void *dest,
		     struct rdmx_dev_domain *out, size_t max)
{
	static const int families[] = { AF_INET, AF_INET6 };
	union rdmx_udp_addr want, route;
	const union rdmx_udp_addr *wantp = NULL;
	struct ifaddrs *ifas;
	bool any_ip = false;
	in_port_t port = 0;
	size_t n = 0;

	if (src) {
		want = *(const union rdmx_udp_addr *) src;
		wantp = &want;
		any_ip = rdmx_udp_addr_is_any(&want);
		port = *rdmx_udp_addr_port(&want);
	} else if (dest) {
		want = *(const union rdmx_udp_addr *) dest;
		wantp = &want;
		any_ip = g_rdmx_params.iface != NULL;
		if (!any_ip) {
			if (rdmx_udp_route_src(&want, &route))
				return 0;
			want = route;
		}
	}

	if (getifaddrs(&ifas))
		return -errno;
	/* IPv4 first: what an application gets when it names no address. */
	for (size_t f = 0; f < RDMX_ARRAY_SIZE(families); f++)
		n += rdmx_udp_domains_family(ifas, families[f], wantp, any_ip, port,
					     out + n, max - n);
	freeifaddrs(ifas);
	return (int) n;
}
