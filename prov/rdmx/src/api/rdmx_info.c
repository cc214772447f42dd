/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: fi_getinfo (see rdmx_info.h). The rules follow fi_getinfo(3):
 * hints ask for a subset of what the provider does, a provider's required
 * mode bits must be ones the application accepts, and what comes back
 * describes the endpoint the application will get.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "rdmx.h"
#include "rdmx_info.h"
#include "rdmx_match.h"
#include "rdmx_version.h"
#include "rdmx_wire.h"

/*
 * The flag libfabric's utility providers (ofi_rxd, ofi_rxm) add to the
 * fi_getinfo by which they look for a core provider to layer over
 * (OFI_CORE_PROV_ONLY in libfabric's internal ofi.h, the same since 1.5).
 * rdmx's datagram and connected endpoints decline it, as libfabric
 * itself keeps its utility providers off efa and shm: an application
 * asking for FI_EP_RDM with FI_PROVIDER=rdmx would otherwise be offered
 * "rdmx;ofi_rxd" or "rdmx;ofi_rxm" first.
 */
#define RDMX_OFI_CORE_PROV_ONLY	(1ULL << 59)

/*
 * All 64 tag bits are the application's (libfabric's FI_TAG_GENERIC
 * pattern, bit 63 set), as Open MPI's ofi MTL requires.
 */
#define RDMX_TAG_FORMAT		0xAAAAAAAAAAAAAAAAULL

struct fi_info *rdmx_info_base(const struct rdmx_dev_ops *ops,
			       const struct rdmx_dev_domain *dom,
			       uint32_t version)
{
	struct fi_info *info = fi_allocinfo();

	if (!info)
		return NULL;
	info->caps = RDMX_CAPS;
	info->addr_format = ops->addr_format(dom->addr);
	info->src_addrlen = ops->addr_len(dom->addr);
	info->src_addr = malloc(info->src_addrlen);
	info->domain_attr->name = strdup(dom->name);
	info->fabric_attr->name = strdup(ops->name);
	if (!info->src_addr || !info->domain_attr->name || !info->fabric_attr->name) {
		fi_freeinfo(info);
		return NULL;
	}
	memcpy(info->src_addr, dom->addr, info->src_addrlen);

	info->tx_attr->caps = RDMX_TX_CAPS;
	info->tx_attr->op_flags = RDMX_TX_OP_FLAGS;
	info->tx_attr->inject_size = RDMX_MIN(g_rdmx_params.inject_size, RDMX_INJECT_MAX);
	info->tx_attr->msg_order = RDMX_MSG_ORDER;
	info->tx_attr->size = g_rdmx_params.tx_size;
	info->tx_attr->iov_limit = RDMX_IOV_LIMIT;
	info->tx_attr->rma_iov_limit = 1;

	info->rx_attr->caps = RDMX_RX_CAPS;
	info->rx_attr->size = g_rdmx_params.rx_size;
	info->rx_attr->iov_limit = RDMX_IOV_LIMIT;
	info->rx_attr->msg_order = RDMX_MSG_ORDER;

	info->ep_attr->type = FI_EP_RDM;
	info->ep_attr->protocol = RDMX_PROTO;
	info->ep_attr->protocol_version = RDMX_WIRE_VERSION;
	info->ep_attr->max_msg_size = RDMX_MAX_MSG_SIZE;
	info->ep_attr->mem_tag_format = RDMX_TAG_FORMAT;
	info->ep_attr->tx_ctx_cnt = 1;
	info->ep_attr->rx_ctx_cnt = 1;

	info->domain_attr->threading = FI_THREAD_SAFE;
	info->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	info->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	info->domain_attr->resource_mgmt = FI_RM_ENABLED;
	info->domain_attr->av_type = FI_AV_UNSPEC;
	info->domain_attr->mr_mode = rdmx_version_mr_mode(version);
	info->domain_attr->mr_key_size = sizeof(uint64_t);
	info->domain_attr->cq_data_size = sizeof(uint64_t);
	info->domain_attr->cq_cnt = 1024;
	info->domain_attr->cntr_cnt = 1024;
	info->domain_attr->ep_cnt = 1024;
	info->domain_attr->tx_ctx_cnt = 1024;
	info->domain_attr->rx_ctx_cnt = 1024;
	info->domain_attr->max_ep_tx_ctx = 1;
	info->domain_attr->max_ep_rx_ctx = 1;
	info->domain_attr->mr_iov_limit = 1;
	info->domain_attr->caps = RDMX_DOM_CAPS;
	info->domain_attr->max_err_data = RDMX_ERR_DATA_MAX;
	info->domain_attr->mr_cnt = 1 << 20;

	info->fabric_attr->prov_version = RDMX_PROV_VERSION;
	info->fabric_attr->api_version = version;
	return info;
}

size_t rdmx_info_dgram_max(const struct rdmx_dev_ops *ops)
{
	struct rdmx_dev_domain doms[RDMX_DOMAINS_MAX];
	int n = ops->domains(NULL, NULL, doms, RDMX_DOMAINS_MAX);
	size_t mtu = SIZE_MAX;

	for (int i = 0; i < n; i++)
		mtu = RDMX_MIN(mtu, doms[i].mtu);
	return n > 0 && mtu > sizeof(struct rdmx_wire_ud) ? mtu - sizeof(struct rdmx_wire_ud) : 0;
}

void rdmx_info_dgram(struct fi_info *info, size_t max_msg)
{
	info->caps = RDMX_UD_CAPS;
	info->tx_attr->caps = RDMX_UD_TX_CAPS;
	info->rx_attr->caps = RDMX_UD_RX_CAPS;
	info->tx_attr->msg_order = FI_ORDER_NONE;
	info->rx_attr->msg_order = FI_ORDER_NONE;
	info->tx_attr->inject_size = RDMX_MIN(info->tx_attr->inject_size, max_msg);
	info->tx_attr->rma_iov_limit = 0;
	info->ep_attr->type = FI_EP_DGRAM;
	info->ep_attr->protocol_version = RDMX_WIRE_UD_VERSION;
	info->ep_attr->max_msg_size = max_msg;
	info->ep_attr->mem_tag_format = 0;
}

void rdmx_info_msg(struct fi_info *info)
{
	info->caps &= ~(uint64_t) RDMX_MSG_NOT_CAPS;
	info->tx_attr->caps &= ~(uint64_t) RDMX_MSG_NOT_CAPS;
	info->rx_attr->caps &= ~(uint64_t) RDMX_MSG_NOT_CAPS;
	info->ep_attr->type = FI_EP_MSG;
	info->ep_attr->mem_tag_format = RDMX_MSG_TAG_FORMAT;
}

/* Logs why a hint did not fit and returns -FI_ENODATA. */
static int __attribute__((format(printf, 1, 2)))
rdmx_info_nofit(const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	RDMX_INFO(FI_LOG_CORE, "hints do not fit: %s\n", why);
	return -FI_ENODATA;
}

static int rdmx_info_check_ep(const struct fi_ep_attr *prov,
			      const struct fi_ep_attr *hint)
{
	if (hint->type != FI_EP_UNSPEC && hint->type != prov->type)
		return rdmx_info_nofit("ep type %s", fi_tostr(&hint->type, FI_TYPE_EP_TYPE));
	if (hint->protocol != FI_PROTO_UNSPEC && hint->protocol != prov->protocol)
		return rdmx_info_nofit("protocol");
	if (hint->protocol_version > prov->protocol_version)
		return rdmx_info_nofit("protocol version %u", hint->protocol_version);
	if (hint->max_msg_size > prov->max_msg_size)
		return rdmx_info_nofit("max_msg_size %zu > %zu", hint->max_msg_size,
				  prov->max_msg_size);
	if (hint->msg_prefix_size || hint->max_order_raw_size ||
	    hint->max_order_war_size || hint->max_order_waw_size)
		return rdmx_info_nofit("message prefix or ordered RMA sizes");
	if ((hint->tx_ctx_cnt > 1 && hint->tx_ctx_cnt != FI_SHARED_CONTEXT) ||
	    (hint->rx_ctx_cnt > 1 && hint->rx_ctx_cnt != FI_SHARED_CONTEXT))
		return rdmx_info_nofit("several tx/rx contexts");
	if (hint->tx_ctx_cnt == FI_SHARED_CONTEXT ||
	    hint->rx_ctx_cnt == FI_SHARED_CONTEXT)
		return rdmx_info_nofit("shared contexts");
	if (hint->auth_key_size)
		return rdmx_info_nofit("authorization keys");
	return 0;
}

static int rdmx_info_check_domain(const struct fi_domain_attr *prov,
				  const struct fi_domain_attr *hint,
				  uint32_t version)
{
	if (hint->name && strcmp(hint->name, prov->name))
		return rdmx_info_nofit("domain %s", hint->name);
	/* 2.x calls data_progress "progress"; control_progress is 1.x's. */
	if (!rdmx_version_progress_ok(version, hint->control_progress) ||
	    !rdmx_version_progress_ok(version, hint->data_progress))
		return rdmx_info_nofit("progress %d/%d",
				  hint->control_progress, hint->data_progress);
	if (hint->av_type != FI_AV_UNSPEC && hint->av_type != FI_AV_MAP &&
	    hint->av_type != FI_AV_TABLE)
		return rdmx_info_nofit("av type");
	if (hint->cq_data_size > prov->cq_data_size)
		return rdmx_info_nofit("cq_data_size %zu", hint->cq_data_size);
	if (hint->mr_iov_limit > prov->mr_iov_limit ||
	    hint->cq_cnt > prov->cq_cnt || hint->ep_cnt > prov->ep_cnt ||
	    hint->tx_ctx_cnt > prov->tx_ctx_cnt ||
	    hint->rx_ctx_cnt > prov->rx_ctx_cnt ||
	    hint->max_ep_tx_ctx > prov->max_ep_tx_ctx ||
	    hint->max_ep_rx_ctx > prov->max_ep_rx_ctx ||
	    hint->max_ep_stx_ctx || hint->max_ep_srx_ctx ||
	    hint->cntr_cnt > prov->cntr_cnt || hint->mr_cnt > prov->mr_cnt)
		return rdmx_info_nofit("domain object counts");
	if (hint->caps & ~prov->caps)
		return rdmx_info_nofit("domain caps %s", fi_tostr(&hint->caps, FI_TYPE_CAPS));
	if (hint->auth_key_size)
		return rdmx_info_nofit("authorization keys");
	if (hint->max_err_data > prov->max_err_data)
		return rdmx_info_nofit("max_err_data %zu", hint->max_err_data);
	return 0;
}

/* Common checks of tx and rx attributes. */
static int rdmx_info_check_queue(uint64_t prov_caps, uint64_t hint_caps,
				 uint64_t prov_order, uint64_t hint_order,
				 uint64_t hint_comp_order,
				 size_t prov_size, size_t hint_size,
				 size_t prov_iov, size_t hint_iov)
{
	if (hint_caps & ~prov_caps)
		return rdmx_info_nofit("queue caps %s", fi_tostr(&hint_caps, FI_TYPE_CAPS));
	if (hint_order & ~prov_order)
		return rdmx_info_nofit("message ordering %s",
				  fi_tostr(&hint_order, FI_TYPE_MSG_ORDER));
	if (hint_comp_order & ~(uint64_t) FI_ORDER_NONE)
		return rdmx_info_nofit("completion ordering");
	if (hint_size > prov_size || hint_iov > prov_iov)
		return rdmx_info_nofit("queue size %zu or iov_limit %zu", hint_size, hint_iov);
	return 0;
}

int rdmx_info_check(const struct fi_info *prov, const struct fi_info *hints,
		    uint32_t version)
{
	int ret;

	if (hints->caps & ~prov->caps)
		return rdmx_info_nofit("caps %s", fi_tostr(&hints->caps, FI_TYPE_CAPS));
	if (hints->addr_format != FI_FORMAT_UNSPEC &&
	    hints->addr_format != FI_SOCKADDR &&
	    hints->addr_format != prov->addr_format)
		return rdmx_info_nofit("address format");
	/*
	 * A handle names a connection request to accept, or a passive
	 * endpoint whose address the endpoint takes (fi_endpoint).
	 */
	if (hints->handle && (prov->ep_attr->type != FI_EP_MSG ||
			      (hints->handle->fclass != FI_CLASS_CONNREQ &&
			       hints->handle->fclass != FI_CLASS_PEP)))
		return rdmx_info_nofit("handle (a connection request's or a passive endpoint's)");
	if (hints->ep_attr && (ret = rdmx_info_check_ep(prov->ep_attr, hints->ep_attr)))
		return ret;
	if (hints->domain_attr &&
	    (ret = rdmx_info_check_domain(prov->domain_attr, hints->domain_attr,
					     version)))
		return ret;
	if (hints->fabric_attr && hints->fabric_attr->name &&
	    strcmp(hints->fabric_attr->name, prov->fabric_attr->name))
		return rdmx_info_nofit("fabric %s", hints->fabric_attr->name);
	/* Queue caps are checked against everything: apps often copy caps. */
	if (hints->tx_attr &&
	    (ret = rdmx_info_check_queue(prov->caps, hints->tx_attr->caps,
					 prov->tx_attr->msg_order,
					 hints->tx_attr->msg_order,
					 hints->tx_attr->comp_order,
					 prov->tx_attr->size, hints->tx_attr->size,
					 prov->tx_attr->iov_limit,
					 hints->tx_attr->iov_limit)))
		return ret;
	if (hints->tx_attr &&
	    (hints->tx_attr->op_flags & rdmx_levels_refused(prov->ep_attr->type)))
		return rdmx_info_nofit("tx op_flags %s (completion level)",
				       fi_tostr(&hints->tx_attr->op_flags, FI_TYPE_OP_FLAGS));
	if (hints->tx_attr && (hints->tx_attr->inject_size > prov->tx_attr->inject_size ||
			       hints->tx_attr->rma_iov_limit > prov->tx_attr->rma_iov_limit))
		return rdmx_info_nofit("inject_size %zu or rma_iov_limit",
				  hints->tx_attr->inject_size);
	if (hints->rx_attr &&
	    (ret = rdmx_info_check_queue(prov->caps, hints->rx_attr->caps,
					 prov->rx_attr->msg_order,
					 hints->rx_attr->msg_order,
					 hints->rx_attr->comp_order,
					 prov->rx_attr->size, hints->rx_attr->size,
					 prov->rx_attr->iov_limit,
					 hints->rx_attr->iov_limit)))
		return ret;
	return 0;
}

/*
 * The caps returned: the primary caps asked for, our secondary caps (those
 * of RDMX_ASKED_CAPS only if asked for).
 */
static uint64_t rdmx_info_caps(uint64_t prov, uint64_t hint)
{
	uint64_t caps;

	if (!hint)
		return prov & ~(uint64_t) RDMX_ASKED_CAPS;
	caps = (hint & (RDMX_PRIMARY_CAPS | RDMX_ASKED_CAPS)) |
	       (prov & RDMX_SECONDARY_CAPS & ~(uint64_t) RDMX_ASKED_CAPS);
	/* Neither direction named means both (fi_getinfo(3)). */
	if ((caps & (FI_MSG | FI_TAGGED)) && !(caps & (FI_SEND | FI_RECV)))
		caps |= FI_SEND | FI_RECV;
	if ((caps & (FI_RMA | FI_ATOMIC)) &&
	    !(caps & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)))
		caps |= FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	return caps & prov;
}

void rdmx_info_narrow(struct fi_info *prov, const struct fi_info *hints,
		      uint32_t version)
{
	struct fi_domain_attr *dom = prov->domain_attr;

	prov->caps = rdmx_info_caps(prov->caps, hints->caps);
	prov->handle = hints->handle;
	prov->tx_attr->caps &= prov->caps;
	prov->rx_attr->caps &= prov->caps;
	if (hints->tx_attr) {
		/* No level asked: the default, transmit complete, stays said. */
		if (hints->tx_attr->op_flags)
			prov->tx_attr->op_flags = hints->tx_attr->op_flags;
		if (hints->tx_attr->size)
			prov->tx_attr->size = hints->tx_attr->size;
	}
	if (hints->rx_attr) {
		prov->rx_attr->op_flags = hints->rx_attr->op_flags;
		if (hints->rx_attr->size)
			prov->rx_attr->size = hints->rx_attr->size;
	}
	if (hints->ep_attr && hints->ep_attr->mem_tag_format)
		prov->ep_attr->mem_tag_format = hints->ep_attr->mem_tag_format;
	if (hints->domain_attr) {
		const struct fi_domain_attr *hint = hints->domain_attr;

		if (hint->threading != FI_THREAD_UNSPEC)
			dom->threading = hint->threading;
		if (hint->resource_mgmt != FI_RM_UNSPEC)
			dom->resource_mgmt = hint->resource_mgmt;
		if (hint->av_type != FI_AV_UNSPEC)
			dom->av_type = hint->av_type;
		/*
		 * Automatic progress when asked for (rdmx_autoprog.h), or the
		 * application's promise to serialise control calls.
		 */
		if (hint->data_progress == RDMX_PROGRESS_CONTROL_UNIFIED ||
		    hint->data_progress == FI_PROGRESS_AUTO)
			dom->data_progress = hint->data_progress;
		if (hint->control_progress == FI_PROGRESS_AUTO)
			dom->control_progress = hint->control_progress;
		/*
		 * Basic or scalable alone (the modes before 1.5, and since):
		 * echoed. Else rdmx requires nothing (0); with FI_RDMX_MR_PROV_KEY it
		 * takes the keys it chooses (random) and virtual addresses
		 * when the application can use them.
		 */
		if (hint->mr_mode == FI_MR_BASIC || hint->mr_mode == FI_MR_SCALABLE)
			dom->mr_mode = hint->mr_mode;
		else if (FI_VERSION_GE(version, FI_VERSION(1, 5)) && g_rdmx_params.mr_prov_key)
			dom->mr_mode = hint->mr_mode & (FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
	}
}

/* Resolves node/service and the hints' addresses into src and dest. */
static int rdmx_info_addrs(const struct rdmx_dev_ops *ops, const char *node,
			   const char *service, uint64_t flags,
			   const struct fi_info *hints, uint8_t *src,
			   bool *have_src, uint8_t *dest, bool *have_dest)
{
	*have_src = false;
	*have_dest = false;
	if ((flags & FI_SOURCE) || (!node && service)) {
		if (!node && !service)
			return -FI_EINVAL;
		if (ops->resolve(node, service, src))
			return -FI_ENODATA;
		*have_src = true;
	} else if (node) {
		if (ops->resolve(node, service, dest))
			return -FI_ENODATA;
		*have_dest = true;
	}
	if (hints && hints->src_addr && !*have_src) {
		if (ops->addr_canon(hints->src_addr, hints->src_addrlen, src))
			return rdmx_info_nofit("src_addr is not an address of this fabric");
		*have_src = true;
	}
	if (hints && hints->dest_addr && !*have_dest) {
		if (ops->addr_canon(hints->dest_addr, hints->dest_addrlen, dest))
			return rdmx_info_nofit("dest_addr is not an address of this fabric");
		*have_dest = true;
	}
	return 0;
}

/*
 * Whether a domain's entry may be offered beside the first one found. An
 * application that named no address format gets entries of one format
 * only (the device's preferred, listed first): peers that picked entries
 * of two formats (IPv4 and IPv6) could not reach each other.
 */
static bool rdmx_info_same_format(const struct fi_info *hints, uint32_t first,
				  const struct fi_info *info)
{
	if (hints && hints->addr_format != FI_FORMAT_UNSPEC &&
	    hints->addr_format != FI_SOCKADDR)
		return true;
	return info->addr_format == first;
}

/*
 * Sets info's source address: src when the application gave one (a
 * wildcard stays a wildcard: the endpoint is then reachable at every
 * address of its family), the domain's own address otherwise.
 */
static void rdmx_info_set_src(const struct rdmx_dev_ops *ops, struct fi_info *info,
			      const uint8_t *src)
{
	if (src) {
		info->src_addrlen = ops->addr_len(src);
		memcpy(info->src_addr, src, info->src_addrlen);
	}
}

/* Appends one narrowed fi_info per fitting domain to *tail_p. */
static int rdmx_info_collect(const struct rdmx_dev_ops *ops, uint32_t version,
			     const struct fi_info *hints, const uint8_t *src,
			     const uint8_t *dest, struct fi_info ***tail_p)
{
	struct rdmx_dev_domain doms[RDMX_DOMAINS_MAX];
	uint32_t first = FI_FORMAT_UNSPEC;
	enum fi_ep_type type = hints && hints->ep_attr ? hints->ep_attr->type : FI_EP_UNSPEC;
	bool dgram = type == FI_EP_DGRAM;
	size_t dgram_max = dgram ? rdmx_info_dgram_max(ops) : 0;
	int n, found = 0;

	n = ops->domains(src, dest, doms, RDMX_DOMAINS_MAX);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct fi_info *info = rdmx_info_base(ops, &doms[i], version);

		if (!info)
			return -FI_ENOMEM;
		/* Datagram and connected endpoints only when asked for by name. */
		if (dgram)
			rdmx_info_dgram(info, dgram_max);
		else if (type == FI_EP_MSG)
			rdmx_info_msg(info);
		if ((hints && rdmx_info_check(info, hints, version)) ||
		    (first != FI_FORMAT_UNSPEC &&
		     !rdmx_info_same_format(hints, first, info))) {
			fi_freeinfo(info);
			continue;
		}
		first = info->addr_format;
		rdmx_info_set_src(ops, info, src);
		if (hints)
			rdmx_info_narrow(info, hints, version);
		if (dest) {
			info->dest_addrlen = ops->addr_len(dest);
			info->dest_addr = malloc(info->dest_addrlen);
			if (!info->dest_addr) {
				fi_freeinfo(info);
				return -FI_ENOMEM;
			}
			memcpy(info->dest_addr, dest, info->dest_addrlen);
		}
		**tail_p = info;
		*tail_p = &info->next;
		found++;
	}
	return found;
}

int rdmx_getinfo(uint32_t version, const char *node, const char *service,
		 uint64_t flags, const struct fi_info *hints,
		 struct fi_info **info)
{
	const struct rdmx_dev_ops *ops;
	uint8_t src[RDMX_DEV_ADDR_MAX], dest[RDMX_DEV_ADDR_MAX];
	struct fi_info *head = NULL, **tail = &head;
	bool have_src, have_dest;
	int ret;

	if (hints && hints->ep_attr && hints->ep_attr->type != FI_EP_UNSPEC &&
	    hints->ep_attr->type != FI_EP_RDM && hints->ep_attr->type != FI_EP_DGRAM &&
	    hints->ep_attr->type != FI_EP_MSG)
		return rdmx_info_nofit("ep type %s",
				  fi_tostr(&hints->ep_attr->type, FI_TYPE_EP_TYPE));
	if (hints && hints->ep_attr && (hints->ep_attr->type == FI_EP_DGRAM ||
					hints->ep_attr->type == FI_EP_MSG) &&
	    (flags & RDMX_OFI_CORE_PROV_ONLY))
		return rdmx_info_nofit("no utility provider over rdmx's %s",
				       fi_tostr(&hints->ep_attr->type, FI_TYPE_EP_TYPE));
	ret = rdmx_dev_select(&ops);
	if (ret)
		return ret;
	ret = rdmx_info_addrs(ops, node, service, flags, hints, src, &have_src,
			      dest, &have_dest);
	if (ret)
		return ret;
	ret = rdmx_info_collect(ops, version, hints, have_src ? src : NULL,
				have_dest ? dest : NULL, &tail);
	if (ret <= 0) {
		fi_freeinfo(head);
		return ret ? ret : -FI_ENODATA;
	}
	*info = head;
	return 0;
}
