/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: typed stubs for calls rdmx does not implement. Each returns
 * -FI_ENOSYS, so an application calling one gets a clear error instead of
 * a crash through a NULL slot. Whole tables are provided for the endpoint
 * interfaces rdmx does not offer yet (collectives).
 */
#ifndef RDMX_STUBS_H
#define RDMX_STUBS_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_collective.h>

int rdmx_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int rdmx_no_control(struct fid *fid, int command, void *arg);
int rdmx_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		     void **ops, void *context);
int rdmx_no_tostr(const struct fid *fid, char *buf, size_t len);
int rdmx_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		    void *ops, void *context);

extern struct fi_ops_collective rdmx_no_collective_ops;

/* fi_ops_cm slots for an RDM endpoint (connection calls). */
int rdmx_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int rdmx_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		    size_t paramlen);
int rdmx_no_listen(struct fid_pep *pep);
int rdmx_no_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int rdmx_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		   size_t paramlen);
int rdmx_no_shutdown(struct fid_ep *ep, uint64_t flags);
int rdmx_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		 struct fid_mc **mc, void *context);

/* fi_ops_ep slots of a passive endpoint. */
ssize_t rdmx_no_cancel(fid_t fid, void *context);
int rdmx_no_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen);
ssize_t rdmx_no_size_left(struct fid_ep *ep);

/* fi_ops_ep slots for scalable endpoints. */
int rdmx_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		   struct fid_ep **tx_ep, void *context);
int rdmx_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		   struct fid_ep **rx_ep, void *context);

#endif /* RDMX_STUBS_H */
