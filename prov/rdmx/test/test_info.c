/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_getinfo: hint matching by the rules of fi_getinfo(3). A hint rdmx
 * cannot honour must yield -FI_ENODATA (so libfabric offers the next
 * provider), and what is returned must describe the endpoint the
 * application will get. getinfo is called directly, not through
 * libfabric's fi_getinfo, so the core's own filtering cannot hide a
 * provider mistake.
 */
#include <stdlib.h>

#include "rdmx_test.h"

#define API_VERSION	RDMX_API_VERSION

/* The hints of the running test; fi_allocinfo defaults, freed after it. */
static struct fi_info *hints;

static void info_setup(void)
{
	rdmx_test_use_loopback();
	hints = fi_allocinfo();
	cr_assert_not_null(hints);
}

static void info_teardown(void)
{
	fi_freeinfo(hints);
}

TestSuite(info, .init = info_setup, .fini = info_teardown);

/* getinfo must succeed; returns its list (the caller frees it). */
static struct fi_info *getinfo_ok(uint32_t version, const char *node,
				  const char *service, uint64_t flags,
				  const struct fi_info *h)
{
	struct fi_info *info = NULL;
	int ret;

	ret = rdmx_getinfo(version, node, service, flags, h, &info);
	cr_assert_eq(ret, 0, "getinfo: %s", fi_strerror(-ret));
	cr_assert_not_null(info);
	return info;
}

/* The current hints must find nothing, and nothing must be returned. */
static void expect_nodata(const char *why)
{
	struct fi_info *info = NULL;
	int ret;

	ret = rdmx_getinfo(API_VERSION, NULL, NULL, 0, hints, &info);
	cr_assert_eq(ret, -FI_ENODATA, "%s: got %d (%s)", why, ret,
		     fi_strerror(-ret));
	cr_assert_null(info, "%s: info written on failure", why);
}

/* What rdmx offers with no hints: the limits the tests step beyond. */
static struct fi_info *offered(void)
{
	return getinfo_ok(API_VERSION, NULL, NULL, 0, NULL);
}

Test(info, null_hints_give_rdm_msg_tagged)
{
	struct fi_info *info = offered(), *cur;

	for (cur = info; cur; cur = cur->next) {
		cr_assert_eq(cur->ep_attr->type, FI_EP_RDM);
		cr_assert_eq(cur->caps & (FI_MSG | FI_TAGGED), FI_MSG | FI_TAGGED);
		cr_assert_str_eq(cur->fabric_attr->name, "udp");
		cr_assert_str_eq(cur->domain_attr->name, "lo",
				 "FI_RDMX_IFACE=lo must limit the domains");
		cr_assert(cur->addr_format == FI_SOCKADDR_IN ||
			  cur->addr_format == FI_SOCKADDR_IN6);
		cr_assert_not_null(cur->src_addr);
		cr_assert_eq(cur->fabric_attr->api_version, API_VERSION);
	}
	fi_freeinfo(info);
}

Test(info, null_hints_mem_tag_format_has_bit_63)
{
	struct fi_info *info = offered();

	cr_assert(info->ep_attr->mem_tag_format & (1ULL << 63),
		  "Open MPI's ofi mtl needs all 64 tag bits");
	fi_freeinfo(info);
}

/* Applications commonly hand an fi_info back as hints; it must still fit. */
Test(info, returned_info_fits_as_hints)
{
	struct fi_info *info = offered(), *again;

	again = getinfo_ok(API_VERSION, NULL, NULL, 0, info);
	cr_assert_eq(rdmx_info_check(info, info, API_VERSION), 0);
	fi_freeinfo(again);
	fi_freeinfo(info);
}

Test(info, other_ep_types_find_nothing)
{
	hints->ep_attr->type = FI_EP_SOCK_STREAM;
	expect_nodata("FI_EP_SOCK_STREAM");
	hints->ep_attr->type = FI_EP_SOCK_DGRAM;
	expect_nodata("FI_EP_SOCK_DGRAM");
}

/*
 * FI_EP_MSG when asked for by name: the RDM caps but a sender's name,
 * 63-bit tags; never to a utility provider's lookup (bit 59).
 */
Test(info, msg_when_asked)
{
	struct fi_info *info, *cur;

	hints->ep_attr->type = FI_EP_MSG;
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	for (cur = info; cur; cur = cur->next) {
		cr_assert_eq(cur->ep_attr->type, FI_EP_MSG);
		cr_assert_eq(cur->caps & (FI_DIRECTED_RECV | FI_SOURCE), 0);
		cr_assert_eq(cur->ep_attr->mem_tag_format >> 63, 0);
	}
	fi_freeinfo(info);
	info = NULL;
	cr_assert_eq(rdmx_getinfo(API_VERSION, NULL, NULL, 1ULL << 59, hints, &info),
		     -FI_ENODATA);
	cr_assert_null(info);
}

/*
 * FI_EP_DGRAM when asked for by name: messages of one datagram; never
 * to a utility provider's lookup (libfabric's OFI_CORE_PROV_ONLY, bit 59).
 */
Test(info, dgram_when_asked)
{
	struct fi_info *info, *cur;

	hints->ep_attr->type = FI_EP_DGRAM;
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	for (cur = info; cur; cur = cur->next) {
		cr_assert_eq(cur->ep_attr->type, FI_EP_DGRAM);
		cr_assert(cur->ep_attr->max_msg_size > 0 && cur->ep_attr->max_msg_size < 65536);
		cr_assert_eq(cur->caps & (FI_TAGGED | FI_RMA | FI_ATOMIC), 0);
	}
	fi_freeinfo(info);
	info = NULL;
	cr_assert_eq(rdmx_getinfo(API_VERSION, NULL, NULL, 1ULL << 59, hints, &info),
		     -FI_ENODATA);
	cr_assert_null(info);
}

Test(info, rdm_ep_type_fits)
{
	struct fi_info *info;

	hints->ep_attr->type = FI_EP_RDM;
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	cr_assert_eq(info->ep_attr->type, FI_EP_RDM);
	fi_freeinfo(info);
}

/* FI_PROGRESS_AUTO asked for is offered (a progress thread), each field as asked. */
Test(info, auto_progress_is_echoed)
{
	struct fi_info *info;

	hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	info = getinfo_ok(FI_VERSION(1, 17), NULL, NULL, 0, hints);
	cr_assert_eq(info->domain_attr->data_progress, FI_PROGRESS_AUTO);
	cr_assert_eq(info->domain_attr->control_progress, FI_PROGRESS_MANUAL);
	fi_freeinfo(info);
	hints->domain_attr->data_progress = FI_PROGRESS_UNSPEC;
	hints->domain_attr->control_progress = FI_PROGRESS_AUTO;
	info = getinfo_ok(FI_VERSION(1, 17), NULL, NULL, 0, hints);
	cr_assert_eq(info->domain_attr->control_progress, FI_PROGRESS_AUTO);
	cr_assert_eq(info->domain_attr->data_progress, FI_PROGRESS_MANUAL);
	fi_freeinfo(info);
}

/* FI_ATOMIC alone means every direction of it too. */
Test(info, atomics_are_offered_with_their_directions)
{
	struct fi_info *info;

	hints->caps = FI_TAGGED | FI_ATOMIC;
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	cr_assert_eq(info->caps & (FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ |
				   FI_REMOTE_WRITE),
		     FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE);
	fi_freeinfo(info);
}

/* FI_RMA alone means every direction of it, and one remote segment. */
Test(info, rma_is_offered_with_its_directions)
{
	struct fi_info *info;

	hints->caps = FI_MSG | FI_RMA;
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	cr_assert_eq(info->caps & (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ |
				   FI_REMOTE_WRITE),
		     FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE);
	cr_assert_eq(info->tx_attr->rma_iov_limit, 1);
	fi_freeinfo(info);
	hints->tx_attr->rma_iov_limit = 2;
	expect_nodata("rma_iov_limit 2");
}

Test(info, cq_data_size_beyond_ours_finds_nothing)
{
	hints->domain_attr->cq_data_size = 16;
	expect_nodata("cq_data_size 16");
}

Test(info, cq_data_size_ours_fits)
{
	struct fi_info *info;

	hints->domain_attr->cq_data_size = 8;
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	cr_assert_geq(info->domain_attr->cq_data_size, 8);
	fi_freeinfo(info);
}

Test(info, queue_limits_beyond_ours_find_nothing)
{
	struct fi_info *ours = offered();

	hints->tx_attr->size = ours->tx_attr->size + 1;
	expect_nodata("tx size");
	hints->tx_attr->size = 0;
	hints->tx_attr->inject_size = ours->tx_attr->inject_size + 1;
	expect_nodata("inject_size");
	hints->tx_attr->inject_size = 0;
	hints->tx_attr->iov_limit = ours->tx_attr->iov_limit + 1;
	expect_nodata("tx iov_limit");
	hints->tx_attr->iov_limit = 0;
	hints->rx_attr->size = ours->rx_attr->size + 1;
	expect_nodata("rx size");
	hints->rx_attr->size = 0;
	hints->rx_attr->iov_limit = ours->rx_attr->iov_limit + 1;
	expect_nodata("rx iov_limit");
	fi_freeinfo(ours);
}

/* Limits at exactly ours fit, and a smaller queue size is what comes back. */
Test(info, queue_limits_within_ours_fit)
{
	struct fi_info *ours = offered(), *info;

	hints->tx_attr->inject_size = ours->tx_attr->inject_size;
	hints->tx_attr->iov_limit = ours->tx_attr->iov_limit;
	hints->tx_attr->size = 16;
	hints->rx_attr->size = ours->rx_attr->size;
	hints->ep_attr->max_msg_size = ours->ep_attr->max_msg_size;
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	cr_assert_eq(info->tx_attr->size, 16);
	cr_assert_eq(info->rx_attr->size, ours->rx_attr->size);
	cr_assert_geq(info->tx_attr->inject_size, ours->tx_attr->inject_size);
	fi_freeinfo(info);
	fi_freeinfo(ours);
}

Test(info, max_msg_size_beyond_ours_finds_nothing)
{
	struct fi_info *ours = offered();

	hints->ep_attr->max_msg_size = ours->ep_attr->max_msg_size + 1;
	expect_nodata("max_msg_size");
	fi_freeinfo(ours);
}

/* Send-after-send and the atomics' orders are kept, RMA's are not: never promised. */
Test(info, msg_order_sas_is_offered_and_other_orders_are_not)
{
	const uint64_t atomic = FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW |
				FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW;
	struct fi_info *info;

	hints->tx_attr->msg_order = FI_ORDER_SAS | atomic;
	hints->rx_attr->msg_order = FI_ORDER_SAS;
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	cr_assert(info->tx_attr->msg_order & FI_ORDER_SAS);
	cr_assert_eq(info->tx_attr->msg_order & atomic, atomic);
	cr_assert(info->rx_attr->msg_order & FI_ORDER_SAS);
	fi_freeinfo(info);
	hints->tx_attr->msg_order = FI_ORDER_RAW;
	expect_nodata("tx FI_ORDER_RAW");
	hints->tx_attr->msg_order = 0;
	hints->rx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_WAW;
	expect_nodata("rx FI_ORDER_WAW");
}

Test(info, unknown_fabric_name_finds_nothing)
{
	hints->fabric_attr->name = strdup("no-such-fabric");
	expect_nodata("fabric name");
}

Test(info, unknown_domain_name_finds_nothing)
{
	hints->domain_attr->name = strdup("no-such-if0");
	expect_nodata("domain name");
}

Test(info, known_names_fit)
{
	struct fi_info *info;

	hints->fabric_attr->name = strdup("udp");
	hints->domain_attr->name = strdup("lo");
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	cr_assert_str_eq(info->domain_attr->name, "lo");
	fi_freeinfo(info);
}

Test(info, shared_contexts_find_nothing)
{
	hints->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
	expect_nodata("shared tx context");
	hints->ep_attr->tx_ctx_cnt = 0;
	hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	expect_nodata("shared rx context");
}

Test(info, auth_keys_find_nothing)
{
	hints->ep_attr->auth_key = calloc(1, 8);
	hints->ep_attr->auth_key_size = 8;
	expect_nodata("ep auth key");
	free(hints->ep_attr->auth_key);
	hints->ep_attr->auth_key = NULL;
	hints->ep_attr->auth_key_size = 0;

	hints->domain_attr->auth_key = calloc(1, 8);
	hints->domain_attr->auth_key_size = 8;
	expect_nodata("domain auth key");
}

/* fi_getinfo(3): asking for FI_TAGGED alone means tagged sends and receives. */
Test(info, tagged_caps_narrow_to_tagged)
{
	struct fi_info *info;

	hints->caps = FI_TAGGED;
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	cr_assert(info->caps & FI_TAGGED);
	cr_assert_eq(info->caps & FI_MSG, 0, "FI_MSG was not asked for");
	cr_assert_eq(info->caps & (FI_SEND | FI_RECV), FI_SEND | FI_RECV);
	cr_assert_eq(info->tx_attr->caps & FI_MSG, 0);
	cr_assert_eq(info->rx_attr->caps & FI_MSG, 0);
	cr_assert_eq(info->tx_attr->caps & ~info->caps, 0,
		     "tx caps must be a subset of caps");
	cr_assert_eq(info->rx_attr->caps & ~info->caps, 0,
		     "rx caps must be a subset of caps");
	fi_freeinfo(info);
}

Test(info, op_flags_are_echoed)
{
	struct fi_info *info;

	hints->tx_attr->op_flags = FI_COMPLETION;
	hints->rx_attr->op_flags = FI_COMPLETION;
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	cr_assert_eq(info->tx_attr->op_flags, FI_COMPLETION);
	cr_assert_eq(info->rx_attr->op_flags, FI_COMPLETION);
	fi_freeinfo(info);
}

Test(info, domain_levels_are_echoed)
{
	struct fi_info *info;

	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->domain_attr->av_type = FI_AV_TABLE;
	hints->domain_attr->resource_mgmt = FI_RM_DISABLED;
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	cr_assert_eq(info->domain_attr->threading, FI_THREAD_DOMAIN);
	cr_assert_eq(info->domain_attr->av_type, FI_AV_TABLE);
	cr_assert_eq(info->domain_attr->resource_mgmt, FI_RM_DISABLED);
	fi_freeinfo(info);

	hints->domain_attr->av_type = FI_AV_MAP;
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	cr_assert_eq(info->domain_attr->av_type, FI_AV_MAP);
	fi_freeinfo(info);
}

Test(info, mem_tag_format_is_echoed)
{
	struct fi_info *info;

	hints->ep_attr->mem_tag_format = 0x0000ffff0000ffffULL;
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	cr_assert_eq(info->ep_attr->mem_tag_format, 0x0000ffff0000ffffULL);
	fi_freeinfo(info);
}

/* Before API 1.5 mr_mode was one of FI_MR_BASIC and FI_MR_SCALABLE. */
Test(info, api_1_4_echoes_mr_basic)
{
	struct fi_info *info;

	hints->domain_attr->mr_mode = FI_MR_BASIC;
	info = getinfo_ok(FI_VERSION(1, 4), NULL, NULL, 0, hints);
	cr_assert_eq(info->domain_attr->mr_mode, FI_MR_BASIC);
	cr_assert_eq(info->fabric_attr->api_version, FI_VERSION(1, 4));
	fi_freeinfo(info);

	hints->domain_attr->mr_mode = FI_MR_SCALABLE;
	info = getinfo_ok(FI_VERSION(1, 4), NULL, NULL, 0, hints);
	cr_assert_eq(info->domain_attr->mr_mode, FI_MR_SCALABLE);
	fi_freeinfo(info);
}

/* From 1.5 mr_mode is a bit set; rdmx needs none of its bits. */
Test(info, api_1_5_and_later_give_mr_mode_0)
{
	struct fi_info *info;

	info = getinfo_ok(FI_VERSION(1, 5), NULL, NULL, 0, hints);
	cr_assert_eq(info->domain_attr->mr_mode, 0);
	fi_freeinfo(info);
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, NULL);
	cr_assert_eq(info->domain_attr->mr_mode, 0);
	fi_freeinfo(info);
}

/* The address a getinfo info carries, as a sockaddr_in. */
static const struct sockaddr_in *sin_of(const void *addr, size_t len)
{
	cr_assert_not_null(addr);
	cr_assert_eq(len, sizeof(struct sockaddr_in));
	cr_assert_eq(((const struct sockaddr *) addr)->sa_family, AF_INET);
	return addr;
}

Test(info, node_service_give_dest_addr)
{
	struct sockaddr_in want = rdmx_test_sin("127.0.0.1", 4000);
	const struct sockaddr_in *dest, *src;
	struct fi_info *info;

	info = getinfo_ok(API_VERSION, "127.0.0.1", "4000", 0, hints);
	cr_assert_eq(info->addr_format, FI_SOCKADDR_IN);
	dest = sin_of(info->dest_addr, info->dest_addrlen);
	cr_assert_eq(dest->sin_addr.s_addr, want.sin_addr.s_addr);
	cr_assert_eq(dest->sin_port, want.sin_port);
	src = sin_of(info->src_addr, info->src_addrlen);
	cr_assert_eq(src->sin_addr.s_addr, want.sin_addr.s_addr,
		     "the source must be on the route to 127.0.0.1");
	fi_freeinfo(info);
}

Test(info, fi_source_gives_src_addr)
{
	struct sockaddr_in want = rdmx_test_sin("127.0.0.1", 4000);
	const struct sockaddr_in *src;
	struct fi_info *info;

	info = getinfo_ok(API_VERSION, "127.0.0.1", "4000", FI_SOURCE, hints);
	src = sin_of(info->src_addr, info->src_addrlen);
	cr_assert_eq(src->sin_addr.s_addr, want.sin_addr.s_addr);
	cr_assert_eq(src->sin_port, want.sin_port);
	cr_assert_null(info->dest_addr, "FI_SOURCE names our side only");
	fi_freeinfo(info);
}

Test(info, ipv6_node_gives_sockaddr_in6)
{
	struct sockaddr_in6 want = rdmx_test_sin6("::1", 4000);
	const struct sockaddr_in6 *dest;
	struct fi_info *info;

	info = getinfo_ok(API_VERSION, "::1", "4000", 0, hints);
	cr_assert_eq(info->addr_format, FI_SOCKADDR_IN6);
	cr_assert_eq(info->dest_addrlen, sizeof(struct sockaddr_in6));
	dest = info->dest_addr;
	cr_assert_eq(dest->sin6_family, AF_INET6);
	cr_assert_eq(memcmp(&dest->sin6_addr, &want.sin6_addr,
			    sizeof(want.sin6_addr)), 0);
	cr_assert_eq(dest->sin6_port, want.sin6_port);
	cr_assert_eq(info->src_addrlen, sizeof(struct sockaddr_in6));
	fi_freeinfo(info);
}

Test(info, unresolvable_node_finds_nothing)
{
	struct fi_info *info = NULL;

	cr_assert_eq(rdmx_getinfo(API_VERSION, "no-such-host.invalid", "4000", 0,
				  hints, &info), -FI_ENODATA);
	cr_assert_null(info);
}

Test(info, hints_dest_addr_is_accepted)
{
	struct sockaddr_in want = rdmx_test_sin("127.0.0.1", 5000);
	const struct sockaddr_in *dest;
	struct fi_info *info;

	hints->addr_format = FI_SOCKADDR_IN;
	hints->dest_addr = malloc(sizeof(want));
	cr_assert_not_null(hints->dest_addr);
	memcpy(hints->dest_addr, &want, sizeof(want));
	hints->dest_addrlen = sizeof(want);
	info = getinfo_ok(API_VERSION, NULL, NULL, 0, hints);
	dest = sin_of(info->dest_addr, info->dest_addrlen);
	cr_assert_eq(dest->sin_addr.s_addr, want.sin_addr.s_addr);
	cr_assert_eq(dest->sin_port, want.sin_port);
	fi_freeinfo(info);
}

/* rdmx_info_check and rdmx_info_narrow on one offered info, directly. */
Test(info, check_and_narrow_directly)
{
	struct fi_info *ours = offered();

	hints->caps = FI_MSG | FI_COLLECTIVE;
	cr_assert_eq(rdmx_info_check(ours, hints, API_VERSION), -FI_ENODATA);
	hints->caps = FI_MSG;
	cr_assert_eq(rdmx_info_check(ours, hints, API_VERSION), 0);
	rdmx_info_narrow(ours, hints, API_VERSION);
	cr_assert(ours->caps & FI_MSG);
	cr_assert_eq(ours->caps & FI_TAGGED, 0);
	cr_assert_eq(ours->caps & (FI_SEND | FI_RECV), FI_SEND | FI_RECV);
	fi_freeinfo(ours);
}
