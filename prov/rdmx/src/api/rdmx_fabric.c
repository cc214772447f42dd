/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: the fabric object (see rdmx_fabric.h). */
#include <stdlib.h>
#include <rdma/fi_domain.h>

#include "rdmx.h"
#include "rdmx_cm.h"
#include "rdmx_domain.h"
#include "rdmx_fabric.h"
#include "rdmx_stubs.h"
#include "rdmx_wait.h"

static int rdmx_fabric_close(struct fid *fid)
{
	struct rdmx_fabric *fab = rdmx_container_of(fid, struct rdmx_fabric,
						    fabric_fid.fid);

	if (rdmx_ref_read(&fab->refs)) {
		RDMX_WARN(FI_LOG_FABRIC, "fabric still has %d open children\n",
			  rdmx_ref_read(&fab->refs));
		return -FI_EBUSY;
	}
	free(fab);
	return 0;
}

static int rdmx_fabric_domain2(struct fid_fabric *fabric, struct fi_info *info,
			       struct fid_domain **dom, uint64_t flags,
			       void *context)
{
	if (flags) {
		RDMX_WARN(FI_LOG_FABRIC, "fi_domain2 flags %#lx not supported\n",
			  (unsigned long) flags);
		return -FI_ENOSYS;
	}
	return rdmx_domain_open(fabric, info, dom, context);
}

static struct fi_ops rdmx_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rdmx_fabric_close,
	.bind = rdmx_no_bind,
	.control = rdmx_no_control,
	.ops_open = rdmx_no_ops_open,
	.tostr = rdmx_no_tostr,
	.ops_set = rdmx_no_ops_set,
};

static struct fi_ops_fabric rdmx_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = rdmx_domain_open,
	.passive_ep = rdmx_pep_open,
	.eq_open = rdmx_eq_open,
	.wait_open = rdmx_wait_open,
	.trywait = rdmx_trywait,
	.domain2 = rdmx_fabric_domain2,
};

int rdmx_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric_p,
		     void *context)
{
	const struct rdmx_dev_ops *ops;
	struct rdmx_fabric *fab;
	int ret;

	if (attr->name) {
		ops = rdmx_dev_by_name(attr->name);
		if (!ops) {
			RDMX_WARN(FI_LOG_FABRIC, "unknown fabric %s\n", attr->name);
			return -FI_ENODATA;
		}
	} else {
		ret = rdmx_dev_select(&ops);
		if (ret)
			return ret;
	}
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	fab->dev_ops = ops;
	fab->api_version = attr->api_version ? attr->api_version : rdmx_prov.fi_version;
	fab->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric_fid.fid.context = context;
	fab->fabric_fid.fid.ops = &rdmx_fabric_fi_ops;
	fab->fabric_fid.ops = &rdmx_fabric_ops;
	fab->fabric_fid.api_version = fab->api_version;
	*fabric_p = &fab->fabric_fid;
	return 0;
}
