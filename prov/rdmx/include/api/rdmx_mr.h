/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: memory regions. The udp device copies through the kernel, so a
 * region only records the buffer, its access and its key; remote access
 * arrives with RMA.
 */
#ifndef RDMX_MR_H
#define RDMX_MR_H

#include <sys/uio.h>
#include <rdma/fi_domain.h>

struct rdmx_domain;

struct rdmx_mr {
	struct fid_mr		mr_fid;
	struct rdmx_domain	*domain;
	struct iovec		iov;
	uint64_t		access;
};

int rdmx_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		uint64_t offset, uint64_t requested_key, uint64_t flags,
		struct fid_mr **mr_p, void *context);
int rdmx_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		 uint64_t access, uint64_t offset, uint64_t requested_key,
		 uint64_t flags, struct fid_mr **mr_p, void *context);
int rdmx_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		    uint64_t flags, struct fid_mr **mr_p);

#endif /* RDMX_MR_H */
