/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the addresses the rdm layer sends to and names senders by. The
 * api layer binds an address vector (rdmx_av.c) to the endpoint and
 * gives the rdm layer its lookups as these ops: fi_addr_t to the
 * canonical device address of a peer, and back.
 */
#ifndef RDMX_ADDRS_H
#define RDMX_ADDRS_H

#include <rdma/fabric.h>

struct rdmx_addrs;

struct rdmx_addrs_ops {
	/* The canonical address of fi_addr, or NULL if it names no entry. */
	const void	*(*lookup)(const struct rdmx_addrs *addrs, fi_addr_t fi_addr);
	/* The entry holding a canonical address, or FI_ADDR_NOTAVAIL. */
	fi_addr_t	(*reverse)(const struct rdmx_addrs *addrs, const void *canon);
};

struct rdmx_addrs {
	const struct rdmx_addrs_ops	*ops;
};

/* What addrs (NULL: none bound yet) says of fi_addr; NULL if nothing. */
static inline const void *rdmx_addrs_lookup(const struct rdmx_addrs *addrs, fi_addr_t fi_addr)
{
	return addrs ? addrs->ops->lookup(addrs, fi_addr) : NULL;
}

static inline fi_addr_t rdmx_addrs_reverse(const struct rdmx_addrs *addrs, const void *canon)
{
	return addrs ? addrs->ops->reverse(addrs, canon) : FI_ADDR_NOTAVAIL;
}

#endif /* RDMX_ADDRS_H */
