/*
 * rdmx: udp device internals shared by its two files: the device itself
 * (rdmx_dev_udp.c) and address handling (rdmx_dev_udp_addr.c).
 */
#ifndef RDMX_DEV_UDP_H
#define RDMX_DEV_UDP_H

#include <sys/socket.h>
#include <netinet/in.h>

#include "rdmx_dev.h"

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

/* The rdmx_dev_ops address and domain calls of the udp device. */
uint32_t rdmx_udp_addr_format(const void *canon);
int rdmx_udp_addr_check(const void *addr, size_t len, void *canon);
size_t rdmx_udp_addr_size(const void *canon);
void rdmx_udp_addr_str(const void *canon, char *buf, size_t len);
int rdmx_udp_resolve(const char *node, const char *service, void *canon);
int rdmx_udp_domains(const void *src, const void *dest,
		     struct rdmx_dev_domain *out, size_t max);

#endif /* RDMX_DEV_UDP_H */
