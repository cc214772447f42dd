/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: address vectors. An entry is the canonical raw device address of
 * a peer endpoint; fi_addr_t values are entry indices for both FI_AV_MAP
 * and FI_AV_TABLE (a map reuses removed slots, a table never does). A
 * reverse map finds the entry of a packet's source address.
 */
#ifndef RDMX_AV_H
#define RDMX_AV_H

#include <rdma/fi_domain.h>

#include "rdmx_addrs.h"
#include "rdmx_hash.h"

struct rdmx_domain;
struct rdmx_ep;

struct rdmx_av {
	struct fid_av		av_fid;
	struct rdmx_addrs	lookups;	/* what the rdm layer gets */
	struct rdmx_domain	*domain;
	enum fi_av_type		type;
	size_t			addr_size;	/* canonical bytes per entry */
	uint8_t			*addrs;		/* cap * addr_size */
	uint8_t			*valid;		/* cap flags */
	size_t			count;		/* slots handed out */
	size_t			cap;
	size_t			*free_slots;	/* FI_AV_MAP: removed slots */
	size_t			free_cnt;
	size_t			free_cap;	/* grown by removes only */
	struct rdmx_hash	reverse;	/* canonical address → index */
	bool			had_dups;	/* an address was inserted twice */
	struct rdmx_ep		**eps;		/* endpoints bound to this AV */
	size_t			ep_cnt;
	int			refs;		/* bound endpoints */
};

/* fi_av_open. 0 or -FI_E*. */
int rdmx_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		 struct fid_av **av_p, void *context);

/*
 * Stores one canonical address, under the domain lock (fi_av_insert's
 * step); its index, or FI_ADDR_NOTAVAIL without memory.
 */
fi_addr_t rdmx_av_store(struct rdmx_av *av, const void *canon);

/* The canonical address of fi_addr, or NULL if it names no entry. */
const void *rdmx_av_addr(const struct rdmx_av *av, fi_addr_t fi_addr);

/* The entry holding a canonical address, or FI_ADDR_NOTAVAIL. */
fi_addr_t rdmx_av_reverse(const struct rdmx_av *av, const void *canon);

/* Records that ep uses this AV, so removals reach it. 0 or -FI_ENOMEM. */
int rdmx_av_attach(struct rdmx_av *av, struct rdmx_ep *ep);
void rdmx_av_detach(struct rdmx_av *av, struct rdmx_ep *ep);

#endif /* RDMX_AV_H */
