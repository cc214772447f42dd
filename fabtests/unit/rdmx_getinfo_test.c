/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_getinfo_test: what fi_getinfo answers for rdmx, through libfabric's
 * public fi_getinfo only. The harness sets FI_PROVIDER=rdmx and
 * FI_PROVIDER_PATH; the hints also name the provider. Prints one line per
 * check and "N passed, M failed"; exits 1 if any check failed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "ft_check.h"

#define TEST_VERSION	FI_VERSION(1, 17)
#define OMPI_VERSION	FI_VERSION(1, 5)
#define TEST_PORT	9999

/* Hints naming the rdmx provider and an RDM endpoint, nothing more. */
static struct fi_info *rdm_hints(void)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints) {
		fprintf(stderr, "fi_allocinfo failed\n");
		exit(2);
	}
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("rdmx");
	return hints;
}

/* Replaces hints->fabric_attr->prov_name (NULL: any provider). */
static void set_prov_name(struct fi_info *hints, const char *name)
{
	free(hints->fabric_attr->prov_name);
	hints->fabric_attr->prov_name = name ? strdup(name) : NULL;
}

/* The IPv4 socket address of a src/dest field, or NULL if it is not one. */
static const struct sockaddr_in *as_sin(const void *addr, size_t len,
					uint32_t format)
{
	const struct sockaddr_in *sin = addr;

	if (!addr || len < sizeof(*sin) || sin->sin_family != AF_INET ||
	    (format != FI_SOCKADDR_IN && format != FI_SOCKADDR))
		return NULL;
	return sin;
}

/* Whether addr is an IPv4 address with the given ip and, if port >= 0, port. */
static bool sin_is(const void *addr, size_t len, uint32_t format,
		   const char *ip, int port)
{
	const struct sockaddr_in *sin = as_sin(addr, len, format);
	struct in_addr want;

	if (!sin || inet_pton(AF_INET, ip, &want) != 1)
		return false;
	return sin->sin_addr.s_addr == want.s_addr &&
	       (port < 0 || ntohs(sin->sin_port) == port);
}

/* Printable form of an address field, for failure messages. */
static const char *addr_str(const void *addr, size_t len, uint32_t format)
{
	static char buf[64];
	const struct sockaddr_in *sin = as_sin(addr, len, format);
	char ip[INET_ADDRSTRLEN] = "?";

	if (!addr)
		return "(none)";
	if (!sin)
		return "(not an IPv4 address)";
	inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
	snprintf(buf, sizeof(buf), "%s:%u", ip, ntohs(sin->sin_port));
	return buf;
}

/* The name of a layered entry over rdmx (e.g. "rdmx;ofi_rxm") in list, or NULL. */
static const char *find_layered(const struct fi_info *list)
{
	for (const struct fi_info *i = list; i; i = i->next) {
		const char *name = i->fabric_attr ? i->fabric_attr->prov_name : NULL;

		if (name && strstr(name, "rdmx") && strcmp(name, "rdmx"))
			return name;
	}
	return NULL;
}

/* Number of entries whose provider is rdmx itself. */
static int count_rdmx(const struct fi_info *list)
{
	int n = 0;

	for (const struct fi_info *i = list; i; i = i->next)
		n += i->fabric_attr && i->fabric_attr->prov_name &&
		     !strcmp(i->fabric_attr->prov_name, "rdmx");
	return n;
}

/*
 * Baseline: NULL-ish hints with an RDM endpoint. Returns the info list
 * (the caller frees it) or NULL when the query failed.
 */
static struct fi_info *test_baseline(void)
{
	struct fi_info *hints = rdm_hints(), *info = NULL;
	const char *iface = getenv("FI_RDMX_IFACE");
	int ret;

	ret = fi_getinfo(TEST_VERSION, NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (!ft_check(ret == 0 && info, "baseline: RDM hints give an entry",
		      "fi_getinfo: %d (%s)", ret, fi_strerror(-ret)))
		return NULL;
	ft_check((info->caps & (FI_MSG | FI_TAGGED)) == (FI_MSG | FI_TAGGED),
		 "baseline: caps include FI_MSG|FI_TAGGED", "caps %s",
		 fi_tostr(&info->caps, FI_TYPE_CAPS));
	ft_check(info->fabric_attr->prov_name &&
		 !strcmp(info->fabric_attr->prov_name, "rdmx"),
		 "baseline: provider is rdmx", "prov_name %s",
		 info->fabric_attr->prov_name ? info->fabric_attr->prov_name : "(null)");
	ft_check(info->fabric_attr->name && !strcmp(info->fabric_attr->name, "udp"),
		 "baseline: fabric is udp", "fabric %s",
		 info->fabric_attr->name ? info->fabric_attr->name : "(null)");
	ft_check(info->ep_attr->type == FI_EP_RDM, "baseline: endpoint type RDM",
		 "type %d", info->ep_attr->type);
	ft_check(info->addr_format == FI_SOCKADDR_IN || info->addr_format == FI_SOCKADDR_IN6,
		 "baseline: addr_format is FI_SOCKADDR_IN or IN6", "format %u",
		 info->addr_format);
	ft_check(!iface || (info->domain_attr->name &&
			    !strcmp(info->domain_attr->name, iface)),
		 "baseline: domain named after FI_RDMX_IFACE", "domain %s, iface %s",
		 info->domain_attr->name ? info->domain_attr->name : "(null)",
		 iface ? iface : "(unset)");
	ft_check(info->domain_attr->cq_data_size == 8, "baseline: cq_data_size 8",
		 "cq_data_size %zu", info->domain_attr->cq_data_size);
	ft_check(info->domain_attr->data_progress == FI_PROGRESS_MANUAL &&
		 info->domain_attr->control_progress == FI_PROGRESS_MANUAL,
		 "baseline: manual progress", "control %d data %d",
		 info->domain_attr->control_progress, info->domain_attr->data_progress);
	ft_check(info->ep_attr->max_msg_size > 0 &&
		 info->tx_attr->inject_size <= info->ep_attr->max_msg_size &&
		 info->tx_attr->size > 0 && info->tx_attr->iov_limit > 0,
		 "baseline: sizes are consistent",
		 "max_msg %zu inject %zu tx size %zu iov_limit %zu",
		 info->ep_attr->max_msg_size, info->tx_attr->inject_size,
		 info->tx_attr->size, info->tx_attr->iov_limit);
	ft_check(info->src_addr != NULL && info->src_addrlen > 0,
		 "baseline: src_addr is set", "src_addrlen %zu", info->src_addrlen);
	return info;
}

/* Without prov_name, an RDM query yields rdmx entries and no layered ones. */
static void test_no_layering_rdm(void)
{
	struct fi_info *hints = rdm_hints(), *info = NULL;
	const char *layered;
	int ret;

	set_prov_name(hints, NULL);
	ret = fi_getinfo(TEST_VERSION, NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	layered = ret ? NULL : find_layered(info);
	ft_check(ret == 0 && count_rdmx(info) > 0 && !layered,
		 "rdm without prov_name: rdmx entries, no layered ones",
		 "fi_getinfo %d, rdmx entries %d, layered %s", ret,
		 ret ? 0 : count_rdmx(info), layered ? layered : "(none)");
	fi_freeinfo(info);
}

/*
 * Without prov_name, a DGRAM or MSG query yields rdmx's own entries of
 * that type and no layered ones (ofi_rxd or ofi_rxm over rdmx would
 * answer FI_EP_RDM queries).
 */
static void test_type_entries(enum fi_ep_type type, const char *name)
{
	struct fi_info *hints = rdm_hints(), *info = NULL;
	const char *layered;
	bool all_type = true;
	int ret;

	set_prov_name(hints, NULL);
	hints->caps = FI_MSG;
	hints->ep_attr->type = type;
	ret = fi_getinfo(TEST_VERSION, NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	layered = ret ? NULL : find_layered(info);
	for (const struct fi_info *i = ret ? NULL : info; i; i = i->next)
		all_type &= i->ep_attr->type == type;
	ft_check(ret == 0 && count_rdmx(info) > 0 && all_type && !layered, name,
		 "fi_getinfo %d, rdmx entries %d, all of the type %d, layered %s", ret,
		 ret ? 0 : count_rdmx(info), all_type, layered ? layered : "(none)");
	if (!ret)
		fi_freeinfo(info);
}

/* node "127.0.0.1", service 9999, no flags: the address is the destination. */
static void test_node_service(void)
{
	struct fi_info *hints = rdm_hints(), *info = NULL;
	int ret;

	ret = fi_getinfo(TEST_VERSION, "127.0.0.1", "9999", 0, hints, &info);
	fi_freeinfo(hints);
	if (!ft_check(ret == 0 && info, "node 127.0.0.1 service 9999: an entry",
		      "fi_getinfo: %d (%s)", ret, fi_strerror(-ret)))
		return;
	ft_check(sin_is(info->dest_addr, info->dest_addrlen, info->addr_format,
			"127.0.0.1", TEST_PORT),
		 "node/service: dest_addr is 127.0.0.1:9999", "dest_addr %s",
		 addr_str(info->dest_addr, info->dest_addrlen, info->addr_format));
	ft_check(sin_is(info->src_addr, info->src_addrlen, info->addr_format,
			"127.0.0.1", -1),
		 "node/service: src_addr is on 127.0.0.1", "src_addr %s",
		 addr_str(info->src_addr, info->src_addrlen, info->addr_format));
	fi_freeinfo(info);
}

/* With FI_SOURCE node and service name the local address. */
static void test_node_service_source(void)
{
	struct fi_info *hints = rdm_hints(), *info = NULL;
	int ret;

	ret = fi_getinfo(TEST_VERSION, "127.0.0.1", "9999", FI_SOURCE, hints, &info);
	fi_freeinfo(hints);
	if (!ft_check(ret == 0 && info, "FI_SOURCE 127.0.0.1:9999: an entry",
		      "fi_getinfo: %d (%s)", ret, fi_strerror(-ret)))
		return;
	ft_check(sin_is(info->src_addr, info->src_addrlen, info->addr_format,
			"127.0.0.1", TEST_PORT),
		 "FI_SOURCE: src_addr is 127.0.0.1:9999", "src_addr %s",
		 addr_str(info->src_addr, info->src_addrlen, info->addr_format));
	ft_check(info->dest_addr == NULL, "FI_SOURCE: no dest_addr", "dest_addr %s",
		 addr_str(info->dest_addr, info->dest_addrlen, info->addr_format));
	fi_freeinfo(info);
}

/* Hints asking for automatic progress get it (a thread per domain). */
static void test_progress_auto(void)
{
	struct fi_info *hints = rdm_hints(), *info = NULL;
	int ret;

	hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	ret = fi_getinfo(TEST_VERSION, NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (!ft_check(ret == 0 && info, "FI_PROGRESS_AUTO: an entry",
		      "fi_getinfo: %d (%s)", ret, fi_strerror(-ret)))
		return;
	ft_check(info->domain_attr->data_progress == FI_PROGRESS_AUTO,
		 "FI_PROGRESS_AUTO: data_progress granted", "data_progress %d",
		 info->domain_attr->data_progress);
	fi_freeinfo(info);
}

/* The hints Open MPI's ofi MTL passes (API 1.5). */
static void test_ompi_hints(void)
{
	const uint64_t caps = FI_TAGGED | FI_LOCAL_COMM | FI_REMOTE_COMM |
			      FI_DIRECTED_RECV;
	const uint64_t mode = FI_CONTEXT | FI_CONTEXT2;
	const uint64_t mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				 FI_MR_PROV_KEY;
	const uint64_t tag_format = 0xAAAAAAAAAAAAAAAAULL;
	struct fi_info *hints = rdm_hints(), *info = NULL;
	int ret;

	hints->caps = caps;
	hints->mode = mode;
	hints->tx_attr->op_flags = FI_COMPLETION;
	hints->rx_attr->op_flags = FI_COMPLETION;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
	hints->domain_attr->av_type = FI_AV_MAP;
	hints->domain_attr->mr_mode = (int) mr_mode;
	hints->domain_attr->cq_data_size = 4;
	hints->ep_attr->mem_tag_format = tag_format;
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	hints->rx_attr->msg_order = FI_ORDER_SAS;
	ret = fi_getinfo(OMPI_VERSION, NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (!ft_check(ret == 0 && info, "ompi hints: an entry", "fi_getinfo: %d (%s)",
		      ret, fi_strerror(-ret)))
		return;
	ft_check((info->caps & caps) == caps, "ompi hints: caps granted", "caps %s",
		 fi_tostr(&info->caps, FI_TYPE_CAPS));
	ft_check((info->mode & ~mode) == 0, "ompi hints: mode within FI_CONTEXT|FI_CONTEXT2",
		 "mode %#llx", (unsigned long long) info->mode);
	ft_check(info->tx_attr->op_flags == FI_COMPLETION &&
		 info->rx_attr->op_flags == FI_COMPLETION,
		 "ompi hints: op_flags FI_COMPLETION echoed", "tx %#llx rx %#llx",
		 (unsigned long long) info->tx_attr->op_flags,
		 (unsigned long long) info->rx_attr->op_flags);
	ft_check((info->tx_attr->msg_order & FI_ORDER_SAS) &&
		 (info->rx_attr->msg_order & FI_ORDER_SAS),
		 "ompi hints: msg_order FI_ORDER_SAS", "tx %#llx rx %#llx",
		 (unsigned long long) info->tx_attr->msg_order,
		 (unsigned long long) info->rx_attr->msg_order);
	ft_check(info->domain_attr->threading == FI_THREAD_DOMAIN,
		 "ompi hints: threading FI_THREAD_DOMAIN", "threading %d",
		 info->domain_attr->threading);
	ft_check(info->domain_attr->resource_mgmt == FI_RM_ENABLED,
		 "ompi hints: resource_mgmt FI_RM_ENABLED", "resource_mgmt %d",
		 info->domain_attr->resource_mgmt);
	ft_check(info->domain_attr->av_type == FI_AV_MAP, "ompi hints: av_type FI_AV_MAP",
		 "av_type %d", info->domain_attr->av_type);
	ft_check(((uint64_t) info->domain_attr->mr_mode & ~mr_mode) == 0,
		 "ompi hints: mr_mode within the hints", "mr_mode %#x",
		 info->domain_attr->mr_mode);
	ft_check(info->domain_attr->cq_data_size >= 4, "ompi hints: cq_data_size >= 4",
		 "cq_data_size %zu", info->domain_attr->cq_data_size);
	ft_check(info->ep_attr->mem_tag_format >> 63,
		 "ompi hints: mem_tag_format has bit 63", "mem_tag_format %#llx",
		 (unsigned long long) info->ep_attr->mem_tag_format);
	ft_check(info->domain_attr->data_progress != FI_PROGRESS_AUTO,
		 "ompi hints: progress not automatic", "data_progress %d",
		 info->domain_attr->data_progress);
	fi_freeinfo(info);
}

/* One hint that rdmx cannot satisfy, applied on top of rdm_hints(). */
struct nodata_case {
	const char	*name;
	void		(*apply)(struct fi_info *hints, const struct fi_info *base);
	const char	*node;
};

static void apply_caps_collective(struct fi_info *h, const struct fi_info *b)
{
	(void) b;
	h->caps = FI_MSG | FI_COLLECTIVE;
}

static void apply_cq_data_16(struct fi_info *h, const struct fi_info *b)
{
	(void) b;
	h->domain_attr->cq_data_size = 16;
}

static void apply_order_raw(struct fi_info *h, const struct fi_info *b)
{
	(void) b;
	h->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_RAW;
}

static void apply_tx_size(struct fi_info *h, const struct fi_info *b)
{
	h->tx_attr->size = b->tx_attr->size + 1;
}

static void apply_iov_limit(struct fi_info *h, const struct fi_info *b)
{
	h->tx_attr->iov_limit = b->tx_attr->iov_limit + 1;
}

static void apply_inject_size(struct fi_info *h, const struct fi_info *b)
{
	h->tx_attr->inject_size = b->tx_attr->inject_size + 1;
}

static void apply_max_msg_size(struct fi_info *h, const struct fi_info *b)
{
	h->ep_attr->max_msg_size = b->ep_attr->max_msg_size + 1;
}

static void apply_domain_name(struct fi_info *h, const struct fi_info *b)
{
	(void) b;
	h->domain_attr->name = strdup("rdmx-no-such-domain0");
}

static void apply_fabric_name(struct fi_info *h, const struct fi_info *b)
{
	(void) b;
	h->fabric_attr->name = strdup("rdmx-no-such-fabric");
}

static const struct nodata_case nodata_cases[] = {
	{ "caps FI_COLLECTIVE", apply_caps_collective, NULL },
	{ "cq_data_size 16", apply_cq_data_16, NULL },
	{ "msg_order FI_ORDER_RAW (a long write's data may follow a later read)", apply_order_raw, NULL },
	{ "tx size above the provider's", apply_tx_size, NULL },
	{ "iov_limit above the provider's", apply_iov_limit, NULL },
	{ "inject_size above the provider's", apply_inject_size, NULL },
	{ "max_msg_size above the provider's", apply_max_msg_size, NULL },
	{ "unknown domain name", apply_domain_name, NULL },
	{ "unknown fabric name", apply_fabric_name, NULL },
	{ "unresolvable node", NULL, "rdmx-no-such-host.invalid" },
};

static void run_nodata_case(const struct nodata_case *c, const struct fi_info *base)
{
	struct fi_info *hints = rdm_hints(), *info = NULL;
	char name[160];
	int ret;

	if (c->apply)
		c->apply(hints, base);
	ret = fi_getinfo(TEST_VERSION, c->node, c->node ? "9999" : NULL, 0, hints,
			 &info);
	snprintf(name, sizeof(name), "no data: %s", c->name);
	ft_check(ret == -FI_ENODATA, name, "fi_getinfo returned %d (%s)%s", ret,
		 fi_strerror(ret < 0 ? -ret : ret), ret == 0 ? ", an entry came back" : "");
	if (!ret)
		fi_freeinfo(info);
	fi_freeinfo(hints);
}

int main(void)
{
	struct fi_info *base;

	setvbuf(stdout, NULL, _IOLBF, 0);
	base = test_baseline();
	test_no_layering_rdm();
	test_type_entries(FI_EP_DGRAM, "dgram without prov_name: rdmx's FI_EP_DGRAM entries, no layered ones");
	test_type_entries(FI_EP_MSG, "msg without prov_name: rdmx's FI_EP_MSG entries, no layered ones");
	test_node_service();
	test_node_service_source();
	test_progress_auto();
	test_ompi_hints();
	if (base) {
		for (size_t i = 0; i < sizeof(nodata_cases) / sizeof(nodata_cases[0]); i++)
			run_nodata_case(&nodata_cases[i], base);
		fi_freeinfo(base);
	} else {
		ft_check(false, "negative hints",
			 "skipped: no baseline entry to derive sizes from");
	}
	return ft_check_summary();
}
