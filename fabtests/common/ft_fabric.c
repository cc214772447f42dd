/* SPDX-License-Identifier: BSD-2-Clause */
/* ft_fabric: the libfabric support of the test programs (see ft_fabric.h). */
#include <stdarg.h>
#include <stdio.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include "ft_common.h"
#include "ft_fabric.h"

/* Largest endpoint address printed. */
#define FT_ADDR_MAX	256

int ft_err(const char *what, ssize_t ret)
{
	fprintf(stderr, "%s: %s: %s (%zd)\n", ft_prog, what, fi_strerror((int) -ret),
		ret);
	return ret < 0 ? (int) ret : -FI_EOTHER;
}

int ft_cq_readerr(struct fid_cq *cq, struct fi_cq_err_entry *err, char *text,
		  size_t len)
{
	char err_data[256] = "", prov_text[256];
	ssize_t ret;

	*err = (struct fi_cq_err_entry) {
		.err_data = err_data,
		.err_data_size = sizeof(err_data),
	};
	ret = fi_cq_readerr(cq, err, 0);
	if (ret < 0)
		return ft_err("fi_cq_readerr", ret);
	snprintf(text, len, "%s (err %d, prov_errno %d): %s", fi_strerror(err->err),
		 err->err, err->prov_errno,
		 fi_cq_strerror(cq, err->prov_errno, err->err_data, prov_text,
				sizeof(prov_text)));
	/* err_data is this function's: hand out no pointer to it. */
	err->err_data = NULL;
	err->err_data_size = 0;
	return 0;
}

int ft_check_cq_flags(uint64_t got, uint64_t want, uint64_t mask, const char *what)
{
	char got_s[128], want_s[128];

	if ((got & mask) == want)
		return 0;
	got &= mask;
	snprintf(got_s, sizeof(got_s), "%s", fi_tostr(&got, FI_TYPE_CQ_EVENT_FLAGS));
	snprintf(want_s, sizeof(want_s), "%s", fi_tostr(&want, FI_TYPE_CQ_EVENT_FLAGS));
	return ft_fail("%s: completion flags [%s], expected [%s]", what, got_s,
		       want_s);
}

void ft_close_fid(struct fid *fid, const char *what, int *status)
{
	int ret;

	if (!fid)
		return;
	ret = fi_close(fid);
	if (ret) {
		ft_err(what, ret);
		if (!*status)
			*status = ret;
	}
}

int ft_rdm_open(struct ft_rdm *rdm, struct fi_info *info, size_t cq_size)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_TAGGED,
		.wait_obj = rdm->cq_wait,
		.size = cq_size,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int ret;

	ret = fi_fabric(info->fabric_attr, &rdm->fabric, NULL);
	if (ret)
		return ft_err("fi_fabric", ret);
	ret = fi_domain(rdm->fabric, info, &rdm->domain, NULL);
	if (ret)
		return ft_err("fi_domain", ret);
	ret = fi_cq_open(rdm->domain, &cq_attr, &rdm->cq, NULL);
	if (ret)
		return ft_err("fi_cq_open", ret);
	ret = fi_av_open(rdm->domain, &av_attr, &rdm->av, NULL);
	if (ret)
		return ft_err("fi_av_open", ret);
	return 0;
}

int ft_rdm_enable(struct ft_rdm *rdm, struct fi_info *info)
{
	int ret;

	ret = fi_endpoint(rdm->domain, info, &rdm->ep, NULL);
	if (ret)
		return ft_err("fi_endpoint", ret);
	ret = fi_ep_bind(rdm->ep, &rdm->cq->fid, FI_TRANSMIT | FI_RECV);
	if (ret)
		return ft_err("fi_ep_bind (cq)", ret);
	ret = fi_ep_bind(rdm->ep, &rdm->av->fid, 0);
	if (ret)
		return ft_err("fi_ep_bind (av)", ret);
	ret = fi_enable(rdm->ep);
	if (ret)
		return ft_err("fi_enable", ret);
	return 0;
}

void ft_rdm_close_ep(struct ft_rdm *rdm, int *status)
{
	ft_close_fid(rdm->ep ? &rdm->ep->fid : NULL, "fi_close (ep)", status);
}

void ft_rdm_close(struct ft_rdm *rdm, int *status)
{
	ft_close_fid(rdm->av ? &rdm->av->fid : NULL, "fi_close (av)", status);
	ft_close_fid(rdm->cq ? &rdm->cq->fid : NULL, "fi_close (cq)", status);
	ft_close_fid(rdm->domain ? &rdm->domain->fid : NULL, "fi_close (domain)",
		     status);
	ft_close_fid(rdm->fabric ? &rdm->fabric->fid : NULL, "fi_close (fabric)",
		     status);
}

struct fi_info *ft_rdm_hints(uint64_t op_flags)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		return NULL;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
				      FI_MR_VIRT_ADDR;
	hints->tx_attr->op_flags = op_flags;
	return hints;
}

struct fi_info *ft_rdm_getinfo_hints(uint32_t version, const char *bind_addr,
				     const char *host, const char *port,
				     const struct fi_info *hints)
{
	struct fi_info *info = NULL;
	int ret = host ? fi_getinfo(version, host, port, 0, hints, &info) :
		  fi_getinfo(version, bind_addr, port, FI_SOURCE, hints, &info);

	if (ret)
		ft_err("fi_getinfo", ret);
	return ret ? NULL : info;
}

struct fi_info *ft_rdm_getinfo(uint32_t version, const char *bind_addr,
			       const char *host, const char *port, uint64_t op_flags)
{
	struct fi_info *hints = ft_rdm_hints(op_flags), *info;

	if (!hints)
		return NULL;
	info = ft_rdm_getinfo_hints(version, bind_addr, host, port, hints);
	fi_freeinfo(hints);
	return info;
}

int ft_rdm_insert(struct ft_rdm *rdm, const void *addr, fi_addr_t *fi_addr,
		  const char *what)
{
	int ret = fi_av_insert(rdm->av, addr, 1, fi_addr, 0, NULL);

	if (ret != 1) {
		*fi_addr = FI_ADDR_UNSPEC;
		return ft_err(what, ret < 0 ? ret : -FI_EINVAL);
	}
	return 0;
}

int ft_rdm_print_listening(struct ft_rdm *rdm, const char *fmt, ...)
{
	/* One byte more than the name may take: a string address stays terminated. */
	char name[FT_ADDR_MAX + 1] = "", text[FT_ADDR_MAX];
	char details[128];
	size_t len = FT_ADDR_MAX, text_len = sizeof(text);
	int ret = fi_getname(&rdm->ep->fid, name, &len);
	va_list ap;

	if (ret)
		return ft_err("fi_getname", ret);
	if (!fi_av_straddr(rdm->av, name, text, &text_len))
		snprintf(text, sizeof(text), "(unprintable address)");
	va_start(ap, fmt);
	vsnprintf(details, sizeof(details), fmt, ap);
	va_end(ap);
	ft_print_listening(text, ft_port_of(name, len), details);
	return 0;
}

int ft_rdm_run(const char *name, uint32_t version, const char *bind_addr,
	       const char *host, const char *port, ft_rdm_run_fn run, const void *arg)
{
	struct ft_rdm rdm = { 0 };
	struct fi_info *info;
	int ret, status = 0;

	info = ft_rdm_getinfo(version, bind_addr, host, port, FI_DELIVERY_COMPLETE);
	if (!info)
		return 1;
	ret = ft_rdm_open(&rdm, info, 4096);
	if (!ret)
		ret = ft_rdm_enable(&rdm, info);
	if (!ret)
		ret = run(&rdm, info, arg, &status);
	ft_rdm_close_ep(&rdm, &status);
	ft_rdm_close(&rdm, &status);
	fi_freeinfo(info);
	if (ret || status) {
		fprintf(stderr, "%s: FAIL\n", name);
		return 1;
	}
	return 0;
}
