/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: the domain object: one device domain (for udp, an interface). */
#ifndef RDMX_DOMAIN_H
#define RDMX_DOMAIN_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "rdmx_autoprog.h"
#include "rdmx_dev.h"
#include "rdmx_epset.h"
#include "rdmx_fabric.h"
#include "rdmx_lock.h"
#include "rdmx_mr.h"

struct rdmx_domain {
	struct fid_domain		domain_fid;
	struct rdmx_fabric		*fabric;
	const struct rdmx_dev_ops	*dev_ops;
	struct rdmx_dev_domain		dev_dom;
	/*
	 * Serialises the domain's objects unless FI_THREAD_DOMAIN with
	 * manual progress.
	 */
	struct rdmx_lock		lock;
	struct rdmx_autoprog		autoprog;	/* FI_PROGRESS_AUTO */
	enum fi_threading		threading;
	enum fi_resource_mgmt		resource_mgmt;
	enum fi_av_type			av_type;
	uint64_t			mr_mode;
	uint32_t			api_version;
	struct rdmx_mr_map		mrs;	/* regions remote access may reach */
	/*
	 * The enabled endpoints with FI_RMA_EVENT: a counter bound to a
	 * region counts their accesses, so reading it progresses them.
	 */
	struct rdmx_epset		rma_eps;
	int				rma_refs;
	int				refs;	/* open children */
};

/* fi_domain: opens the device domain info names. 0 or -FI_E*. */
/* fi_open_ops on a domain: FI_RDMX_PEER_OPS (rdmx_peer_ops.c). */
int rdmx_domain_ops_open(struct fid *fid, const char *name, uint64_t flags,
			 void **ops, void *context);

int rdmx_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		     struct fid_domain **domain_p, void *context);

static inline struct rdmx_domain *rdmx_domain(struct fid_domain *domain_fid)
{
	return rdmx_container_of(domain_fid, struct rdmx_domain, domain_fid);
}

#endif /* RDMX_DOMAIN_H */
