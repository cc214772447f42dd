/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: helpers shared by the test files. Criterion runs every
 * test in its own process, so a helper may change provider globals such
 * as g_rdmx_params without leaking into other tests.
 */
#ifndef RDMX_TEST_H
#define RDMX_TEST_H

#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <criterion/criterion.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include "rdmx.h"
#include "rdmx_fabric.h"
#include "rdmx_info.h"

/*
 * Restricts the udp device to the loopback interface, so what getinfo
 * returns does not depend on the NICs of the machine running the tests.
 */
static inline void rdmx_test_use_loopback(void)
{
	static char lo[] = "lo";

	g_rdmx_params.iface = lo;
}

/* An IPv4 socket address; every byte not naming ip:port is zero. */
static inline struct sockaddr_in rdmx_test_sin(const char *ip, uint16_t port)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	cr_assert_eq(inet_pton(AF_INET, ip, &sin.sin_addr), 1, "bad test ip %s", ip);
	return sin;
}

/* A UDP socket bound to 127.0.0.1 on a port the kernel picks (in *port). */
static inline int rdmx_test_udp_socket(uint16_t *port)
{
	struct sockaddr_in sin = rdmx_test_sin("127.0.0.1", 0);
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *) &sin, sizeof(sin)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *) &sin, &len), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

/* An IPv6 socket address; every byte not naming ip:port is zero. */
static inline struct sockaddr_in6 rdmx_test_sin6(const char *ip, uint16_t port)
{
	struct sockaddr_in6 sin6;

	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(port);
	cr_assert_eq(inet_pton(AF_INET6, ip, &sin6.sin6_addr), 1,
		     "bad test ip %s", ip);
	return sin6;
}

/* A fabric and a domain on the loopback IPv4 address, and their fi_info. */
struct rdmx_test_domain {
	struct fi_info		*info;
	struct fid_fabric	*fabric;
	struct fid_domain	*domain;
};

/*
 * Opens a fabric and domain the way an application does: an fi_info from
 * getinfo at the given API version, then fi_fabric and fi_domain on it.
 */
static inline void rdmx_test_domain_open(struct rdmx_test_domain *td,
					 uint32_t version)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	cr_assert_not_null(hints);
	hints->addr_format = FI_SOCKADDR_IN;
	hints->ep_attr->type = FI_EP_RDM;
	rdmx_test_use_loopback();
	ret = rdmx_getinfo(version, NULL, NULL, 0, hints, &td->info);
	fi_freeinfo(hints);
	cr_assert_eq(ret, 0, "getinfo on lo: %s", fi_strerror(-ret));

	ret = rdmx_fabric_open(td->info->fabric_attr, &td->fabric, NULL);
	cr_assert_eq(ret, 0, "fabric open: %s", fi_strerror(-ret));
	ret = fi_domain(td->fabric, td->info, &td->domain, NULL);
	cr_assert_eq(ret, 0, "domain open: %s", fi_strerror(-ret));
}

/*
 * Closes what rdmx_test_domain_open opened. Both closes must succeed: a
 * domain that refuses to close still counts a child the test closed.
 */
static inline void rdmx_test_domain_close(struct rdmx_test_domain *td)
{
	cr_assert_eq(fi_close(&td->domain->fid), 0);
	cr_assert_eq(fi_close(&td->fabric->fid), 0);
	fi_freeinfo(td->info);
}

/* Reads cq (tagged format) empty; returns how many entries it held. */
static inline int rdmx_test_cq_drain(struct fid_cq *cq)
{
	struct fi_cq_tagged_entry e;
	int n = 0;

	while (fi_cq_read(cq, &e, 1) == 1)
		n++;
	return n;
}

#endif /* RDMX_TEST_H */
