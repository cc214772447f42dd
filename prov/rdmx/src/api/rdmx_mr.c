/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: memory regions (see rdmx_mr.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_domain.h"
#include "rdmx_mr.h"
#include "rdmx_stubs.h"

#define RDMX_MR_ACCESS	(FI_SEND | FI_RECV | FI_READ | FI_WRITE | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE)

static int rdmx_mr_close(struct fid *fid)
{
	struct rdmx_mr *mr = rdmx_container_of(fid, struct rdmx_mr, mr_fid.fid);

	rdmx_ref_put(&mr->domain->refs);
	free(mr);
	return 0;
}

static struct fi_ops rdmx_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rdmx_mr_close,
	.bind = rdmx_no_bind,
	.control = rdmx_no_control,
	.ops_open = rdmx_no_ops_open,
	.tostr = rdmx_no_tostr,
	.ops_set = rdmx_no_ops_set,
};

int rdmx_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		    uint64_t flags, struct fid_mr **mr_p)
{
	struct rdmx_domain *dom;
	struct rdmx_mr *mr;

	if (fid->fclass != FI_CLASS_DOMAIN) {
		RDMX_WARN(FI_LOG_MR, "memory is registered with a domain\n");
		return -FI_EINVAL;
	}
	dom = rdmx_container_of(fid, struct rdmx_domain, domain_fid.fid);
	if (!attr || attr->iov_count > 1 || (attr->iov_count && !attr->mr_iov)) {
		RDMX_WARN(FI_LOG_MR, "one iov per region at most\n");
		return -FI_EINVAL;
	}
	if (!attr->access || (attr->access & ~(uint64_t) RDMX_MR_ACCESS)) {
		RDMX_WARN(FI_LOG_MR, "bad access flags %#lx\n",
			  (unsigned long) attr->access);
		return -FI_EINVAL;
	}
	if (flags) {
		RDMX_WARN(FI_LOG_MR, "registration flags %#lx not supported\n",
			  (unsigned long) flags);
		return -FI_EBADFLAGS;
	}
	if (attr->iface != FI_HMEM_SYSTEM) {
		RDMX_WARN(FI_LOG_MR, "device memory is not supported\n");
		return -FI_ENOSYS;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->domain = dom;
	mr->access = attr->access;
	if (attr->iov_count)
		mr->iov = attr->mr_iov[0];
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = attr->context;
	mr->mr_fid.fid.ops = &rdmx_mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	rdmx_lock_acquire(&dom->lock);
	mr->mr_fid.key = (dom->mr_mode & FI_MR_PROV_KEY) ? dom->next_mr_key++ :
			 attr->requested_key;
	rdmx_lock_release(&dom->lock);
	rdmx_ref_get(&dom->refs);
	*mr_p = &mr->mr_fid;
	return 0;
}

int rdmx_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		 uint64_t access, uint64_t offset, uint64_t requested_key,
		 uint64_t flags, struct fid_mr **mr_p, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
		.iface = FI_HMEM_SYSTEM,
	};

	return rdmx_mr_regattr(fid, &attr, flags, mr_p);
}

int rdmx_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		uint64_t offset, uint64_t requested_key, uint64_t flags,
		struct fid_mr **mr_p, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return rdmx_mr_regv(fid, &iov, 1, access, offset, requested_key, flags,
			    mr_p, context);
}
