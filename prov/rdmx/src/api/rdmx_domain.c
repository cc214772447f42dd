/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: the domain object (see rdmx_domain.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_av.h"
#include "rdmx_cntr.h"
#include "rdmx_cq.h"
#include "rdmx_domain.h"
#include "rdmx_ep.h"
#include "rdmx_mr.h"
#include "rdmx_poll.h"
#include "rdmx_stubs.h"

static int rdmx_domain_close(struct fid *fid)
{
	struct rdmx_domain *dom = rdmx_container_of(fid, struct rdmx_domain,
						    domain_fid.fid);

	if (rdmx_ref_read(&dom->refs)) {
		RDMX_WARN(FI_LOG_DOMAIN, "domain still has %d open children\n",
			  rdmx_ref_read(&dom->refs));
		return -FI_EBUSY;
	}
	rdmx_autoprog_stop(&dom->autoprog);
	rdmx_mr_map_destruct(&dom->mrs);
	rdmx_epset_destruct(&dom->rma_eps);
	rdmx_ref_put(&dom->fabric->refs);
	free(dom);
	return 0;
}

static int rdmx_no_scalable_ep(struct fid_domain *domain, struct fi_info *info,
			       struct fid_ep **sep, void *context)
{
	(void) domain; (void) info; (void) sep; (void) context;
	return -FI_ENOSYS;
}

static int rdmx_no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
			   struct fid_stx **stx, void *context)
{
	(void) domain; (void) attr; (void) stx; (void) context;
	return -FI_ENOSYS;
}

static int rdmx_no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
			   struct fid_ep **rx_ep, void *context)
{
	(void) domain; (void) attr; (void) rx_ep; (void) context;
	return -FI_ENOSYS;
}

static int rdmx_domain_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
				    enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags)
{
	(void) domain;
	return rdmx_atomic_query(datatype, op, attr, flags);
}

static int rdmx_no_query_collective(struct fid_domain *domain,
				    enum fi_collective_op coll,
				    struct fi_collective_attr *attr,
				    uint64_t flags)
{
	(void) domain; (void) coll; (void) attr; (void) flags;
	return -FI_ENOSYS;
}

static int rdmx_domain_endpoint2(struct fid_domain *domain, struct fi_info *info,
				 struct fid_ep **ep, uint64_t flags, void *context)
{
	if (flags) {
		RDMX_WARN(FI_LOG_DOMAIN, "fi_endpoint2 flags %#lx not supported\n",
			  (unsigned long) flags);
		return -FI_ENOSYS;
	}
	return rdmx_ep_open(domain, info, ep, context);
}

static struct fi_ops rdmx_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rdmx_domain_close,
	.bind = rdmx_no_bind,
	.control = rdmx_no_control,
	.ops_open = rdmx_domain_ops_open,
	.tostr = rdmx_no_tostr,
	.ops_set = rdmx_no_ops_set,
};

static struct fi_ops_domain rdmx_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = rdmx_av_open,
	.cq_open = rdmx_cq_open,
	.endpoint = rdmx_ep_open,
	.scalable_ep = rdmx_no_scalable_ep,
	.cntr_open = rdmx_cntr_open,
	.poll_open = rdmx_poll_open,
	.stx_ctx = rdmx_no_stx_ctx,
	.srx_ctx = rdmx_no_srx_ctx,
	.query_atomic = rdmx_domain_query_atomic,
	.query_collective = rdmx_no_query_collective,
	.endpoint2 = rdmx_domain_endpoint2,
};

static struct fi_ops_mr rdmx_domain_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = rdmx_mr_reg,
	.regv = rdmx_mr_regv,
	.regattr = rdmx_mr_regattr,
};

/*
 * Finds the device domain info names, with info's source port if any;
 * with neither a name nor an address, the first of info's address
 * format (a passive endpoint's before fi_setname gives it an address).
 */
static int rdmx_domain_find(const struct rdmx_dev_ops *ops,
			    const struct fi_info *info,
			    struct rdmx_dev_domain *out)
{
	struct rdmx_dev_domain doms[RDMX_DOMAINS_MAX];
	uint8_t src[RDMX_DEV_ADDR_MAX];
	const char *name = info->domain_attr ? info->domain_attr->name : NULL;
	bool have_src = info->src_addr &&
		!ops->addr_canon(info->src_addr, info->src_addrlen, src);
	bool any_format = have_src || info->addr_format == FI_FORMAT_UNSPEC ||
			  info->addr_format == FI_SOCKADDR;
	int n;

	n = ops->domains(have_src ? src : NULL, NULL, doms, RDMX_DOMAINS_MAX);
	for (int i = 0; i < n; i++) {
		if (name ? !strcmp(name, doms[i].name) :
			   any_format || ops->addr_format(doms[i].addr) == info->addr_format) {
			*out = doms[i];
			return 0;
		}
	}
	RDMX_WARN(FI_LOG_DOMAIN, "no device domain %s\n",
		  name ? name : any_format ? "(any)" : "of the info's address format");
	return -FI_ENODEV;
}

int rdmx_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		     struct fid_domain **domain_p, void *context)
{
	struct rdmx_fabric *fab = rdmx_container_of(fabric, struct rdmx_fabric,
						    fabric_fid);
	const struct fi_domain_attr *attr = info->domain_attr;
	struct rdmx_domain *dom;
	int ret;

	bool autoprog = attr && (attr->control_progress == FI_PROGRESS_AUTO ||
				 attr->data_progress == FI_PROGRESS_AUTO);

	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	ret = rdmx_domain_find(fab->dev_ops, info, &dom->dev_dom);
	if (ret) {
		free(dom);
		return ret;
	}
	dom->fabric = fab;
	dom->dev_ops = fab->dev_ops;
	dom->api_version = fab->api_version;
	dom->threading = attr && attr->threading ? attr->threading : FI_THREAD_SAFE;
	dom->resource_mgmt = attr && attr->resource_mgmt ? attr->resource_mgmt :
			     FI_RM_ENABLED;
	dom->av_type = attr ? attr->av_type : FI_AV_UNSPEC;
	dom->mr_mode = attr ? attr->mr_mode : 0;
	ret = rdmx_mr_map_construct(&dom->mrs, dom->mr_mode);
	if (ret) {
		free(dom);
		return ret;
	}
	rdmx_lock_construct(&dom->lock, dom->threading != FI_THREAD_DOMAIN || autoprog);
	if (autoprog) {
		ret = rdmx_autoprog_start(&dom->autoprog);
		if (ret) {
			rdmx_mr_map_destruct(&dom->mrs);
			free(dom);
			return ret;
		}
	}

	dom->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	dom->domain_fid.fid.context = context;
	dom->domain_fid.fid.ops = &rdmx_domain_fi_ops;
	dom->domain_fid.ops = &rdmx_domain_ops;
	dom->domain_fid.mr = &rdmx_domain_mr_ops;
	rdmx_ref_get(&fab->refs);
	*domain_p = &dom->domain_fid;
	return 0;
}
