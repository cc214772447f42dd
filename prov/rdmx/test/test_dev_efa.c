/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx efa device against the fake rdma-core (fake_ibv.c): discovery and
 * capabilities, clean failures, the post and completion paths, the
 * status table, the address handle cache, a full send queue, and whole
 * tagged transfers of the rdm layer over it, RNR backoff included.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fake_ibv.h"
#include "rdmx_dev_ibv.h"
#include "rdmx_test_dev.h"
#include "rdmx_test_pair.h"

static struct fake_ibv_dev_cfg cfg;

/* One EFA device, rdmap0s6, installed as the only rdma-core device. */
static void efa_setup(void)
{
	fake_ibv_cfg(&cfg, FAKE_IBV_EFA, "rdmap0s6", 1);
	fake_ibv_install(&cfg, 1);
	g_rdmx_params.iface = NULL;
}

TestSuite(efa, .init = efa_setup);

static struct rdmx_dev *efa_open(void)
{
	struct rdmx_dev_attr attr = { .sq_size = 2048, .rq_size = 256 };
	struct rdmx_dev *dev;
	int ret = rdmx_dev_efa_ops.open(&attr, &dev);

	cr_assert_eq(ret, 0, "efa open: %s", fi_strerror(-ret));
	return dev;
}

/* Polls dev until it gives one completion (the fake completes at once). */
static struct rdmx_dev_cqe efa_poll_one(struct rdmx_dev *dev)
{
	struct rdmx_dev_cqe cqe;

	cr_assert_eq(dev->ops->poll_cq(dev, &cqe, 1), 1, "no completion");
	return cqe;
}

/* Posts a one-byte send; post_send's return. */
static int efa_send_byte(struct rdmx_dev *from, struct rdmx_ah *ah, uint64_t wr_id)
{
	static uint8_t byte = 1;
	struct iovec iov = { &byte, 1 };

	return from->ops->post_send(from, ah, &iov, 1, wr_id, 0);
}

/* Registers rx and posts its n receive buffers, wr_id 1 to n. */
static void efa_post_recvs(struct rdmx_dev *dev, uint8_t (*rx)[64], size_t n)
{
	cr_assert_eq(dev->ops->rx_memory(dev, rx, n * sizeof(*rx)), 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(dev->ops->post_recv(dev, rx[i], sizeof(*rx), i + 1), 0);
}

static struct rdmx_ah *efa_ah_to(struct rdmx_dev *from, struct rdmx_dev *to)
{
	struct rdmx_ibv_addr addr;
	struct rdmx_ah *ah;

	to->ops->getname(to, &addr);
	cr_assert_eq(from->ops->ah_create(from, &addr, &ah), 0);
	return ah;
}

Test(efa, lists_one_domain_per_device)
{
	struct fake_ibv_dev_cfg devs[3];
	struct rdmx_dev_domain dom[4];

	fake_ibv_cfg(&devs[0], FAKE_IBV_EFA, "rdmap0s6", 1);
	fake_ibv_cfg(&devs[1], FAKE_IBV_IB, "mlx5_0", 2);
	fake_ibv_cfg(&devs[2], FAKE_IBV_EFA, "rdmap1s6", 3);
	devs[2].port_down = true;
	fake_ibv_install(devs, 3);
	cr_assert_eq(rdmx_dev_efa_ops.domains(NULL, NULL, dom, 4), 1);
	cr_assert_str_eq(dom[0].name, "rdmap0s6");
	cr_assert_eq(dom[0].mtu, 8928);
	cr_assert_eq(rdmx_dev_verbs_ops.domains(NULL, NULL, dom, 4), 1);
	cr_assert_str_eq(dom[0].name, "mlx5_0");
	g_rdmx_params.iface = "mlx5_0";
	cr_assert_eq(rdmx_dev_efa_ops.domains(NULL, NULL, dom, 4), 0);
	cr_assert_eq(fake_ibv_live(), 0);
}

/*
 * A kernel without RDMA support (this machine): ibv_get_device_list is
 * NULL with ENOSYS. auto falls back to udp; naming efa or verbs is
 * -FI_ENODEV.
 */
Test(efa, no_rdma_in_the_kernel_falls_back_to_udp)
{
	static char dev_auto[] = "auto", dev_efa[] = "efa", dev_verbs[] = "verbs";
	const struct rdmx_dev_ops *ops = NULL;

	fake_ibv_fail(FAKE_IBV_GET_DEVICE_LIST, ENOSYS, 100);
	g_rdmx_params.device = dev_auto;
	cr_assert_eq(rdmx_dev_select(&ops), 0);
	cr_assert_str_eq(ops->name, "udp");
	g_rdmx_params.device = dev_efa;
	cr_assert_eq(rdmx_dev_select(&ops), -FI_ENODEV);
	g_rdmx_params.device = dev_verbs;
	cr_assert_eq(rdmx_dev_select(&ops), -FI_ENODEV);
	cr_assert_eq(fake_ibv_live(), 0);
}

Test(efa, open_reads_the_device_limits)
{
	struct rdmx_dev *dev = efa_open();
	struct rdmx_ibv_addr addr;

	cr_assert_eq(dev->caps.mtu, 8928);
	cr_assert_eq(dev->caps.sq_size, 512, "max_sq_wr bounds the send queue");
	cr_assert_eq(dev->caps.rq_size, 256);
	cr_assert_eq(dev->caps.flags, RDMX_DEV_CAP_RELIABLE | RDMX_DEV_CAP_RDMA_READ);
	dev->ops->getname(dev, &addr);
	cr_assert_eq(fake_ibv_qp_rnr_retry(rdmx_ibv_addr_qpn(&addr)),
		     (int) RDMX_MIN(g_rdmx_params.rnr_retry, 7),
		     "RNR retry comes from FI_RDMX_RNR_RETRY");
	dev->ops->close(dev);
	cr_assert_eq(fake_ibv_live(), 0);
}

Test(efa, device_without_read_does_not_offer_it)
{
	struct rdmx_dev *dev;

	cfg.efa.device_caps = EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID;
	fake_ibv_install(&cfg, 1);
	dev = efa_open();
	cr_assert_eq(dev->caps.flags, RDMX_DEV_CAP_RELIABLE);
	dev->ops->close(dev);
}

/* Without EFADV_DEVICE_ATTR_CAPS_RNR_RETRY the QP's retry count is left alone. */
Test(efa, device_without_rnr_retry_is_not_given_one)
{
	struct rdmx_ibv_addr addr;
	struct rdmx_dev *dev;

	cfg.efa.device_caps &= ~(uint32_t) EFADV_DEVICE_ATTR_CAPS_RNR_RETRY;
	fake_ibv_install(&cfg, 1);
	dev = efa_open();
	dev->ops->getname(dev, &addr);
	cr_assert_eq(fake_ibv_qp_rnr_retry(rdmx_ibv_addr_qpn(&addr)), -1,
		     "ibv_modify_qp was given IBV_QP_RNR_RETRY");
	dev->ops->close(dev);
}

/*
 * Each failing rdma-core call makes open fail with its error, leak-free;
 * a device that cannot be opened or probed is no usable device.
 */
Test(efa, failed_open_releases_everything)
{
	static const struct rdmx_test_open_fail fails[] = {
		{ FAKE_IBV_OPEN_DEVICE, 0, ENOMEM, -FI_ENODEV },
		{ FAKE_IBV_QUERY_PORT, 0, EIO, -FI_ENODEV },
		/* The first efadv_query_device probes, the second reads limits. */
		{ FAKE_IBV_EFADV_QUERY_DEVICE, 0, EIO, -FI_ENODEV },
		{ FAKE_IBV_EFADV_QUERY_DEVICE, 1, EIO, -FI_EIO },
		{ FAKE_IBV_QUERY_DEVICE, 0, EIO, -FI_EIO },	/* max_ah */
		{ FAKE_IBV_ALLOC_PD, 0, ENOMEM, -FI_ENOMEM },
		{ FAKE_IBV_CREATE_CQ, 0, ENOMEM, -FI_ENOMEM },
		{ FAKE_IBV_CREATE_QP, 0, ENOSPC, -FI_ENOSPC },
		{ FAKE_IBV_MODIFY_QP, 0, EINVAL, -FI_EINVAL },
		{ FAKE_IBV_MODIFY_QP, 2, EINVAL, -FI_EINVAL },	/* RTR to RTS */
		{ FAKE_IBV_REG_MR, 0, EFAULT, -FI_EFAULT },
	};

	rdmx_test_failed_opens(&rdmx_dev_efa_ops, &cfg, fails, RDMX_ARRAY_SIZE(fails));
}

Test(efa, send_reaches_a_posted_receive)
{
	struct rdmx_dev *a = efa_open(), *b = efa_open();
	struct rdmx_ibv_addr a_addr;
	uint8_t rx[2][8928], hdr[40], body[3000];
	struct iovec iov[2] = { { hdr, sizeof(hdr) }, { body, sizeof(body) } };
	struct rdmx_ah *to_b = efa_ah_to(a, b), *to_a;
	struct rdmx_dev_cqe cqe;

	memset(hdr, 0x11, sizeof(hdr));
	memset(body, 0x22, sizeof(body));
	a->ops->getname(a, &a_addr);
	cr_assert_eq(b->ops->rx_memory(b, rx, sizeof(rx)), 0);
	cr_assert_eq(b->ops->post_recv(b, rx[0], sizeof(rx[0]), 7), 0);
	cr_assert_eq(b->ops->post_recv(b, rx[1], sizeof(rx[1]), 8), 0);

	/* Copied through a registered slot: the caller's buffers are free. */
	cr_assert_eq(a->ops->post_send(a, to_b, iov, 2, 41, 0), 0);
	memset(body, 0, sizeof(body));
	cqe = efa_poll_one(b);
	cr_assert_eq(cqe.op, RDMX_DEV_OP_RECV);
	cr_assert_eq(cqe.status, RDMX_DEV_OK);
	cr_assert_eq(cqe.wr_id, 7);
	cr_assert_eq(cqe.len, sizeof(hdr) + sizeof(body));
	cr_assert_eq(rx[0][0], 0x11);
	cr_assert_eq(rx[0][sizeof(hdr) + sizeof(body) - 1], 0x22);
	/* An unknown sender is named by the CQ's source GID and QPN. */
	cr_assert_null(cqe.src_ah);
	cr_assert_not_null(cqe.src_addr);
	cr_assert_eq(memcmp(cqe.src_addr, &a_addr, sizeof(a_addr)), 0);
	cqe = efa_poll_one(a);
	cr_assert_eq(cqe.op, RDMX_DEV_OP_SEND);
	cr_assert_eq(cqe.status, RDMX_DEV_OK);
	cr_assert_eq(cqe.wr_id, 41);

	/* Inline, and from a sender b has a handle for: named by AH number. */
	to_a = efa_ah_to(b, a);
	iov[0].iov_len = 16;
	cr_assert_eq(a->ops->post_send(a, to_b, iov, 1, 42, 0), 0);
	cqe = efa_poll_one(b);
	cr_assert_eq(cqe.wr_id, 8);
	cr_assert_eq(cqe.len, 16);
	cr_assert_eq(cqe.src_ah, to_a);
	cr_assert_eq(memcmp(cqe.src_addr, &a_addr, sizeof(a_addr)), 0);
	cr_assert_eq(efa_poll_one(a).wr_id, 42);
	rdmx_test_close_devs(a, b);
}

Test(efa, each_queue_pair_draws_a_connection_id)
{
	struct rdmx_dev *a = efa_open(), *b = efa_open();
	struct rdmx_ibv_addr a_addr, b_addr;
	char str[128], want[32];

	a->ops->getname(a, &a_addr);
	b->ops->getname(b, &b_addr);
	cr_assert_neq(rdmx_ibv_addr_connid(&a_addr), 0);
	cr_assert_neq(rdmx_ibv_addr_connid(&a_addr), rdmx_ibv_addr_connid(&b_addr));
	rdmx_dev_efa_ops.addr_str(&a_addr, str, sizeof(str));
	snprintf(want, sizeof(want), ":0x%x:0x%x", RDMX_IBV_QKEY,
		 rdmx_ibv_addr_connid(&a_addr));
	cr_assert_not_null(strstr(str, want), "%s does not end in %s", str, want);
	a->ops->close(a);
	b->ops->close(b);
}

/*
 * A queue pair opened on the QPN of a closed one, on the same GID, has
 * another connection id: its packets come from another address, never
 * from the handle of the queue pair that had the QPN before.
 */
Test(efa, reused_qpn_is_another_sender)
{
	struct rdmx_dev *a = efa_open(), *b = efa_open(), *a2;
	struct rdmx_ibv_addr a_addr, a2_addr;
	uint8_t rx[2][64];
	struct rdmx_ah *to_a = efa_ah_to(b, a);
	struct rdmx_dev_cqe cqe;

	a->ops->getname(a, &a_addr);
	efa_post_recvs(b, rx, 2);
	cr_assert_eq(efa_send_byte(a, efa_ah_to(a, b), 5), 0);
	cqe = efa_poll_one(b);
	cr_assert_eq(cqe.src_ah, to_a);
	a->ops->close(a);

	fake_ibv_next_qpn(rdmx_ibv_addr_qpn(&a_addr));
	a2 = efa_open();
	a2->ops->getname(a2, &a2_addr);
	cr_assert_eq(rdmx_ibv_addr_qpn(&a2_addr), rdmx_ibv_addr_qpn(&a_addr));
	cr_assert_eq(memcmp(a2_addr.gid, a_addr.gid, sizeof(a_addr.gid)), 0);
	cr_assert_neq(rdmx_ibv_addr_connid(&a2_addr), rdmx_ibv_addr_connid(&a_addr));
	cr_assert_eq(efa_send_byte(a2, efa_ah_to(a2, b), 6), 0);
	cqe = efa_poll_one(b);
	cr_assert_eq(cqe.status, RDMX_DEV_OK);
	cr_assert_eq(cqe.wr_id, 2);
	cr_assert_null(cqe.src_ah, "the old queue pair's handle named the new one");
	cr_assert_eq(memcmp(cqe.src_addr, &a2_addr, sizeof(a2_addr)), 0);
	a2->ops->close(a2);
	b->ops->close(b);
	cr_assert_eq(fake_ibv_live(), 0);
}

/* No rdmx queue pair sends without immediate data: such a packet is dropped. */
Test(efa, receive_without_immediate_is_malformed)
{
	struct rdmx_dev *a = efa_open(), *b = efa_open();
	struct rdmx_ibv_addr a_addr;
	uint8_t rx[2][64];
	struct rdmx_ah *to_b = efa_ah_to(a, b);
	struct rdmx_dev_cqe cqe;

	a->ops->getname(a, &a_addr);
	efa_post_recvs(b, rx, 2);
	fake_ibv_inject_no_imm(rdmx_ibv_addr_qpn(&a_addr), 1);
	cr_assert_eq(efa_send_byte(a, to_b, 5), 0);
	/* The buffer comes back failed, for the rdm layer to post again. */
	cqe = efa_poll_one(b);
	cr_assert_eq(cqe.op, RDMX_DEV_OP_RECV);
	cr_assert_eq(cqe.wr_id, 1);
	cr_assert_neq(cqe.status, RDMX_DEV_OK);
	cr_assert_null(cqe.src_addr);
	cr_assert_eq(b->stats.rx_malformed, 1);
	cr_assert_eq(efa_send_byte(a, to_b, 6), 0);
	cqe = efa_poll_one(b);
	cr_assert_eq(cqe.status, RDMX_DEV_OK);
	cr_assert_eq(cqe.wr_id, 2);
	cr_assert_eq(memcmp(cqe.src_addr, &a_addr, sizeof(a_addr)), 0);
	cr_assert_eq(b->stats.rx_malformed, 1);
	a->ops->close(a);
	b->ops->close(b);
}

Test(efa, no_receive_posted_completes_with_rnr)
{
	struct rdmx_dev *a = efa_open(), *b = efa_open();
	uint8_t byte = 1;
	struct iovec iov = { &byte, 1 };
	struct rdmx_dev_cqe cqe;

	cr_assert_eq(a->ops->post_send(a, efa_ah_to(a, b), &iov, 1, 5, 0), 0);
	cqe = efa_poll_one(a);
	cr_assert_eq(cqe.wr_id, 5);
	cr_assert_eq(cqe.status, RDMX_DEV_RNR);
	a->ops->close(a);
	b->ops->close(b);
}

Test(efa, statuses_map_through_one_table)
{
	static const struct {
		enum ibv_wc_status	wc;
		enum rdmx_dev_status	dev;
	} map[] = {
		{ IBV_WC_SUCCESS, RDMX_DEV_OK },
		{ IBV_WC_RNR_RETRY_EXC_ERR, RDMX_DEV_RNR },
		{ IBV_WC_RESP_TIMEOUT_ERR, RDMX_DEV_UNREACH },
		{ IBV_WC_REM_INV_RD_REQ_ERR, RDMX_DEV_UNREACH },
		{ IBV_WC_RETRY_EXC_ERR, RDMX_DEV_UNREACH },
		{ IBV_WC_LOC_LEN_ERR, RDMX_DEV_MSGSIZE },
		{ IBV_WC_REM_INV_REQ_ERR, RDMX_DEV_MSGSIZE },
		{ IBV_WC_WR_FLUSH_ERR, RDMX_DEV_FLUSHED },
		{ IBV_WC_LOC_PROT_ERR, RDMX_DEV_IO },
		{ IBV_WC_GENERAL_ERR, RDMX_DEV_IO },
	};
	struct rdmx_dev *a = efa_open(), *b = efa_open();
	struct rdmx_ibv_addr addr;
	uint8_t byte = 1;
	struct iovec iov = { &byte, 1 };
	struct rdmx_ah *ah = efa_ah_to(a, b);

	a->ops->getname(a, &addr);
	for (size_t i = 0; i < RDMX_ARRAY_SIZE(map); i++) {
		struct rdmx_dev_cqe cqe;

		fake_ibv_inject_send_status(rdmx_ibv_addr_qpn(&addr), map[i].wc, 0, 1);
		cr_assert_eq(a->ops->post_send(a, ah, &iov, 1, i, 0), 0);
		cqe = efa_poll_one(a);
		cr_assert_eq(cqe.wr_id, i);
		cr_assert_eq(cqe.status, map[i].dev, "wc status %d gave %d, not %d",
			     map[i].wc, cqe.status, map[i].dev);
	}
	a->ops->close(a);
	b->ops->close(b);
}

/*
 * Every EFA status code, with the contract status it must give. The
 * values are written out (the kernel's efa_io_defs.h), so that a wrong
 * value in rdmx_dev_efa.h fails as a wrong mapping does.
 */
static const struct {
	uint32_t		code;
	enum rdmx_dev_status	dev;
} efa_codes[] = {
	{ 0, RDMX_DEV_OK },		/* OK */
	{ 1, RDMX_DEV_FLUSHED },	/* FLUSHED */
	{ 2, RDMX_DEV_IO },		/* LOCAL_ERROR_QP_INTERNAL_ERROR */
	{ 3, RDMX_DEV_IO },		/* LOCAL_ERROR_UNSUPPORTED_OP */
	{ 4, RDMX_DEV_IO },		/* LOCAL_ERROR_INVALID_AH */
	{ 5, RDMX_DEV_IO },		/* LOCAL_ERROR_INVALID_LKEY */
	{ 6, RDMX_DEV_MSGSIZE },	/* LOCAL_ERROR_BAD_LENGTH */
	{ 7, RDMX_DEV_ACCESS },		/* REMOTE_ERROR_BAD_ADDRESS */
	{ 8, RDMX_DEV_UNREACH },	/* REMOTE_ERROR_ABORT */
	{ 9, RDMX_DEV_UNREACH },	/* REMOTE_ERROR_BAD_DEST_QPN */
	{ 10, RDMX_DEV_RNR },		/* REMOTE_ERROR_RNR */
	{ 11, RDMX_DEV_MSGSIZE },	/* REMOTE_ERROR_BAD_LENGTH */
	{ 12, RDMX_DEV_IO },		/* REMOTE_ERROR_BAD_STATUS */
	{ 13, RDMX_DEV_UNREACH },	/* LOCAL_ERROR_UNRESP_REMOTE */
	{ 14, RDMX_DEV_NOTCONN },	/* REMOTE_ERROR_UNKNOWN_PEER */
	{ 15, RDMX_DEV_UNREACH },	/* LOCAL_ERROR_UNREACH_REMOTE */
	{ 18, RDMX_DEV_IO },		/* REMOTE_ERROR_FEATURE_MISMATCH */
};

/*
 * Every ibv_wc_status, with the contract status it must give: what
 * verbs devices report, and what the efa device falls back to for an EFA
 * code it does not know.
 */
static const struct {
	enum ibv_wc_status	wc;
	enum rdmx_dev_status	dev;
} wc_statuses[] = {
	{ IBV_WC_SUCCESS, RDMX_DEV_OK },
	{ IBV_WC_LOC_LEN_ERR, RDMX_DEV_MSGSIZE },
	{ IBV_WC_LOC_QP_OP_ERR, RDMX_DEV_IO },
	{ IBV_WC_LOC_EEC_OP_ERR, RDMX_DEV_IO },
	{ IBV_WC_LOC_PROT_ERR, RDMX_DEV_IO },
	{ IBV_WC_WR_FLUSH_ERR, RDMX_DEV_FLUSHED },
	{ IBV_WC_MW_BIND_ERR, RDMX_DEV_IO },
	{ IBV_WC_BAD_RESP_ERR, RDMX_DEV_IO },
	{ IBV_WC_LOC_ACCESS_ERR, RDMX_DEV_IO },
	{ IBV_WC_REM_INV_REQ_ERR, RDMX_DEV_MSGSIZE },
	{ IBV_WC_REM_ACCESS_ERR, RDMX_DEV_ACCESS },
	{ IBV_WC_REM_OP_ERR, RDMX_DEV_IO },
	{ IBV_WC_RETRY_EXC_ERR, RDMX_DEV_UNREACH },
	{ IBV_WC_RNR_RETRY_EXC_ERR, RDMX_DEV_RNR },
	{ IBV_WC_LOC_RDD_VIOL_ERR, RDMX_DEV_IO },
	{ IBV_WC_REM_INV_RD_REQ_ERR, RDMX_DEV_UNREACH },
	{ IBV_WC_REM_ABORT_ERR, RDMX_DEV_UNREACH },
	{ IBV_WC_INV_EECN_ERR, RDMX_DEV_IO },
	{ IBV_WC_INV_EEC_STATE_ERR, RDMX_DEV_IO },
	{ IBV_WC_FATAL_ERR, RDMX_DEV_IO },
	{ IBV_WC_RESP_TIMEOUT_ERR, RDMX_DEV_UNREACH },
	{ IBV_WC_GENERAL_ERR, RDMX_DEV_IO },
	{ IBV_WC_TM_ERR, RDMX_DEV_IO },
	{ IBV_WC_TM_RNDV_INCOMPLETE, RDMX_DEV_IO },
};

/* Sends a byte from a to b with the fake failing it with status/vendor. */
static enum rdmx_dev_status efa_send_failing(struct rdmx_dev *a, struct rdmx_ah *to_b,
					     enum ibv_wc_status status, uint32_t vendor)
{
	struct rdmx_ibv_addr addr;
	struct rdmx_dev_cqe cqe;

	a->ops->getname(a, &addr);
	fake_ibv_inject_send_status(rdmx_ibv_addr_qpn(&addr), status, vendor, 1);
	cr_assert_eq(efa_send_byte(a, to_b, 77), 0);
	cqe = efa_poll_one(a);
	cr_assert_eq(cqe.wr_id, 77);
	return cqe.status;
}

/* The fake reports each code as libefa does: code and folded status. */
Test(efa, every_efa_status_code_maps_through_one_table)
{
	struct rdmx_dev *a = efa_open(), *b = efa_open();
	struct rdmx_ah *to_b = efa_ah_to(a, b);

	cr_assert_eq(RDMX_ARRAY_SIZE(efa_codes), 17, "efa_io_defs.h has 17 codes");
	for (size_t i = 0; i < RDMX_ARRAY_SIZE(efa_codes); i++) {
		enum rdmx_dev_status got = efa_send_failing(a, to_b,
			fake_efa_fold(efa_codes[i].code), efa_codes[i].code);

		cr_assert_eq(got, efa_codes[i].dev, "efa status %u gave %s, not %s",
			     efa_codes[i].code, rdmx_dev_status_str(got),
			     rdmx_dev_status_str(efa_codes[i].dev));
	}
	a->ops->close(a);
	b->ops->close(b);
}

/* An EFA code the table does not know: its ibv_wc_status decides. */
Test(efa, every_wc_status_maps_through_one_table)
{
	static const uint32_t unknown[] = { 16, 17, 19, 4096 };
	struct rdmx_dev *a = efa_open(), *b = efa_open();
	struct rdmx_ah *to_b = efa_ah_to(a, b);

	cr_assert_eq(RDMX_ARRAY_SIZE(wc_statuses), IBV_WC_TM_RNDV_INCOMPLETE + 1);
	for (size_t i = 0; i < RDMX_ARRAY_SIZE(wc_statuses); i++) {
		uint32_t vendor = unknown[i % RDMX_ARRAY_SIZE(unknown)];
		enum rdmx_dev_status got = efa_send_failing(a, to_b, wc_statuses[i].wc,
							    vendor);

		cr_assert_eq(got, wc_statuses[i].dev, "%s gave %s, not %s",
			     ibv_wc_status_str(wc_statuses[i].wc),
			     rdmx_dev_status_str(got),
			     rdmx_dev_status_str(wc_statuses[i].dev));
	}
	a->ops->close(a);
	b->ops->close(b);
}

Test(efa, queue_that_does_not_exist_is_unreachable)
{
	struct rdmx_dev *a = efa_open(), *b = efa_open();
	struct rdmx_ibv_addr gone;
	union ibv_gid gid;
	uint8_t byte = 1;
	struct iovec iov = { &byte, 1 };
	struct rdmx_ah *ah;

	memcpy(gid.raw, cfg.gid, sizeof(gid.raw));
	rdmx_ibv_addr_make(&gone, &gid, 0x7777, 1);
	cr_assert_eq(a->ops->ah_create(a, &gone, &ah), 0);
	cr_assert_eq(a->ops->post_send(a, ah, &iov, 1, 9, 0), 0);
	cr_assert_eq(efa_poll_one(a).status, RDMX_DEV_UNREACH);
	a->ops->close(a);
	b->ops->close(b);
}

Test(efa, one_hardware_handle_per_remote_gid)
{
	struct rdmx_dev *a = efa_open(), *b = efa_open(), *c = efa_open();
	struct rdmx_ah *to_b = efa_ah_to(a, b), *to_c = efa_ah_to(a, c);

	cr_assert_neq(to_b, to_c);
	cr_assert_eq(efa_ah_to(a, b), to_b, "the same address gives the same handle");
	cr_assert_eq(fake_ibv_ahs(), 1, "b and c share a GID: one AH");
	a->ops->ah_destroy(a, to_b);
	a->ops->close(a);
	cr_assert_eq(fake_ibv_ahs(), 0);
	b->ops->close(b);
	c->ops->close(c);
	cr_assert_eq(fake_ibv_live(), 0);
}

/* The address of a queue pair that does not exist, on GID fe80::<last>. */
static struct rdmx_ibv_addr efa_addr_on(uint8_t last)
{
	struct rdmx_ibv_addr addr;
	union ibv_gid gid = { .raw = { 0xfe, 0x80 } };

	gid.raw[15] = last;
	rdmx_ibv_addr_make(&addr, &gid, 0x200, 1);
	return addr;
}

/*
 * At most max_ah hardware handles: a new GID at the bound takes the one
 * of the least recently used idle handle (neither held by the rdm layer
 * nor named by a send in flight), else ah_create is -FI_ENOSPC.
 */
Test(efa, address_handles_stay_within_max_ah)
{
	struct rdmx_ibv_addr x[4];
	struct rdmx_ah *ah[4], *again;
	struct rdmx_dev *a;

	cfg.max_ah = 2;
	fake_ibv_install(&cfg, 1);
	a = efa_open();
	for (int i = 0; i < 4; i++)
		x[i] = efa_addr_on((uint8_t) (0x10 + i));
	cr_assert_eq(a->ops->ah_create(a, &x[0], &ah[0]), 0);
	cr_assert_eq(a->ops->ah_create(a, &x[1], &ah[1]), 0);
	cr_assert_eq(a->ops->ah_create(a, &x[2], &ah[2]), -FI_ENOSPC, "both held");
	cr_assert_eq(fake_ibv_ahs(), 2);

	a->ops->ah_destroy(a, ah[0]);
	cr_assert_eq(a->ops->ah_create(a, &x[2], &ah[2]), 0);
	cr_assert_eq(fake_ibv_ah_destroys(), 1, "x0's handle was not destroyed");
	cr_assert_eq(fake_ibv_ahs(), 2);

	/* A handle a send still names stays until the send completes. */
	cr_assert_eq(efa_send_byte(a, ah[1], 7), 0);
	a->ops->ah_destroy(a, ah[1]);
	cr_assert_eq(a->ops->ah_create(a, &x[3], &ah[3]), -FI_ENOSPC, "x1 is busy");
	cr_assert_eq(efa_poll_one(a).wr_id, 7);
	cr_assert_eq(a->ops->ah_create(a, &x[3], &ah[3]), 0);
	cr_assert_eq(fake_ibv_ah_destroys(), 2);

	/* Least recently used first: x2 goes, x3 stays and comes back. */
	a->ops->ah_destroy(a, ah[2]);
	a->ops->ah_destroy(a, ah[3]);
	cr_assert_eq(a->ops->ah_create(a, &x[0], &ah[0]), 0);
	cr_assert_eq(fake_ibv_ah_destroys(), 3);
	cr_assert_eq(a->ops->ah_create(a, &x[3], &again), 0);
	cr_assert_eq(again, ah[3], "the idle handle of x3 was not kept");
	cr_assert_eq(fake_ibv_ah_destroys(), 3);
	cr_assert_eq(a->ops->ah_create(a, &x[2], &ah[2]), -FI_ENOSPC);
	a->ops->close(a);
	cr_assert_eq(fake_ibv_live(), 0);
}

Test(efa, full_send_queue_is_eagain)
{
	struct rdmx_dev *a = efa_open(), *b = efa_open();
	struct rdmx_ah *ah = efa_ah_to(a, b);
	uint8_t byte = 1;
	struct iovec iov = { &byte, 1 };
	struct rdmx_dev_cqe cqe[64];
	size_t n;

	for (n = 0; a->ops->post_send(a, ah, &iov, 1, n, 0) == 0; n++)
		cr_assert_lt(n, 4096);
	cr_assert_eq(n, a->caps.sq_size);
	cr_assert_eq(a->ops->post_send(a, ah, &iov, 1, n, 0), -FI_EAGAIN);
	cr_assert_gt(a->ops->poll_cq(a, cqe, 64), 0);
	cr_assert_eq(a->ops->post_send(a, ah, &iov, 1, n, 0), 0);
	cr_assert_not(fake_ibv_cq_overrun());
	a->ops->close(a);
	b->ops->close(b);
}

/*
 * A receive queue that takes no more says -FI_EAGAIN (ENOMEM from
 * ibv_post_recv too), another failure its code, and a failed post keeps
 * no entry: every entry can still be posted afterwards.
 */
Test(efa, full_receive_queue_is_eagain)
{
	struct rdmx_dev *b = efa_open();
	static uint8_t rx[256][64];
	size_t n;

	cr_assert_eq(b->caps.rq_size, 256);
	cr_assert_eq(b->ops->rx_memory(b, rx, sizeof(rx)), 0);
	fake_ibv_fail(FAKE_IBV_POST_RECV, ENOMEM, 1);
	cr_assert_eq(b->ops->post_recv(b, rx[0], sizeof(rx[0]), 0), -FI_EAGAIN);
	fake_ibv_fail(FAKE_IBV_POST_RECV, EINVAL, 1);
	cr_assert_eq(b->ops->post_recv(b, rx[0], sizeof(rx[0]), 0), -FI_EINVAL);
	for (n = 0; n < 256; n++)
		cr_assert_eq(b->ops->post_recv(b, rx[n], sizeof(rx[n]), n), 0,
			     "receive %zu refused", n);
	cr_assert_eq(b->ops->post_recv(b, rx[0], sizeof(rx[0]), n), -FI_EAGAIN);
	b->ops->close(b);
	cr_assert_eq(fake_ibv_live(), 0);
}

/*
 * A send ibv_wr_complete refuses is -FI_EAGAIN (ENOMEM) or its code,
 * and leaves nothing behind: no slot taken, no completion to come.
 */
Test(efa, refused_send_loses_and_leaks_nothing)
{
	struct rdmx_dev *a = efa_open(), *b = efa_open();
	struct rdmx_ah *ah = efa_ah_to(a, b);
	struct rdmx_dev_cqe cqe[64];
	size_t n, done = 0;
	int got;

	fake_ibv_fail(FAKE_IBV_WR_COMPLETE, ENOMEM, 1);
	cr_assert_eq(efa_send_byte(a, ah, 1000), -FI_EAGAIN);
	fake_ibv_fail(FAKE_IBV_WR_COMPLETE, EINVAL, 1);
	cr_assert_eq(efa_send_byte(a, ah, 1001), -FI_EINVAL);
	for (n = 0; efa_send_byte(a, ah, n) == 0; n++)
		cr_assert_lt(n, 4096);
	cr_assert_eq(n, a->caps.sq_size, "a refused send kept its slot");
	while ((got = a->ops->poll_cq(a, cqe, 64)) > 0) {
		for (int i = 0; i < got; i++)
			cr_assert_lt(cqe[i].wr_id, n, "a refused send completed");
		done += (size_t) got;
	}
	cr_assert_eq(done, n);
	rdmx_test_close_devs(a, b);
}

/*
 * Registration failures in the read path: read_expose undoes what it
 * registered and says why; post_read says -FI_EOPNOTSUPP (the caller
 * does without) or -FI_EAGAIN, keeping no registration either way.
 */
Test(efa, failed_read_registrations_leave_nothing)
{
	struct rdmx_dev *a = efa_open(), *b = efa_open();
	struct rdmx_ah *to_b = efa_ah_to(a, b);
	static uint8_t src[2][4096], dst[4096];
	struct iovec two[2] = { { src[0], 4096 }, { src[1], 4096 } };
	struct iovec local = { dst, sizeof(dst) };
	struct rdmx_dev_rkey rkey;
	size_t live;

	live = fake_ibv_live();
	fake_ibv_fail_after(FAKE_IBV_REG_MR, 1, ENOMEM, 1);
	cr_assert_eq(b->ops->read_expose(b, two, 2, &rkey), -FI_ENOMEM);
	cr_assert_eq(fake_ibv_live(), live, "the first segment stayed registered");
	cr_assert_eq(b->ops->read_expose(b, two, 1, &rkey), 0);
	live = fake_ibv_live();
	fake_ibv_fail(FAKE_IBV_REG_MR, ENOMEM, 1);
	cr_assert_eq(a->ops->post_read(a, to_b, &local, 1, two, 1, rkey.wire, 9),
		     -FI_EOPNOTSUPP);
	fake_ibv_fail(FAKE_IBV_WR_COMPLETE, ENOMEM, 1);
	cr_assert_eq(a->ops->post_read(a, to_b, &local, 1, two, 1, rkey.wire, 9),
		     -FI_EAGAIN);
	cr_assert_eq(fake_ibv_live(), live);
	memset(src[0], 0x3c, sizeof(src[0]));
	cr_assert_eq(a->ops->post_read(a, to_b, &local, 1, two, 1, rkey.wire, 9), 0);
	cr_assert_eq(efa_poll_one(a).status, RDMX_DEV_OK);
	cr_assert_eq(dst[4095], 0x3c);
	b->ops->read_revoke(b, &rkey);
	rdmx_test_close_devs(a, b);
}

/* ibv_create_ah failing fails ah_create with its code, leak-free. */
Test(efa, failed_address_handle_is_a_clean_error)
{
	struct rdmx_dev *a = efa_open(), *b = efa_open();
	struct rdmx_ah *ah = rdmx_test_failed_ah(a, b);

	cr_assert_eq(efa_send_byte(a, ah, 1), 0);
	cr_assert_eq(efa_poll_one(a).wr_id, 1);
	rdmx_test_close_devs(a, b);
}

/*
 * A long message whose memory cannot be registered, on either side,
 * goes the credit path instead of the read.
 */
Test(efa, rdm_read_registration_failure_goes_by_credit)
{
	struct rdmx_test_pair tp;

	rdmx_test_pair_open(&tp, "efa");
	rdmx_test_pair_transfer(&tp, 8, 1);
	/* The sender's exposure, then the receiver's registration. */
	fake_ibv_fail(FAKE_IBV_REG_MR, ENOMEM, 1);
	rdmx_test_pair_transfer(&tp, 1 << 20, 2);
	cr_assert_eq(fake_ibv_fail_left(FAKE_IBV_REG_MR), 0);
	fake_ibv_fail_after(FAKE_IBV_REG_MR, 1, ENOMEM, 1);
	rdmx_test_pair_transfer(&tp, 1 << 20, 3);
	cr_assert_eq(fake_ibv_fail_left(FAKE_IBV_REG_MR), 0);
	rdmx_test_pair_close(&tp);
	cr_assert_eq(fake_ibv_live(), 0);
}

/* FI_EP_DGRAM over efa: one SRD datagram per message, from 0 bytes to the limit. */
Test(efa, dgram_messages)
{
	struct rdmx_test_pair tp;

	rdmx_test_pair_open_type(&tp, "efa", FI_EP_DGRAM, FI_MSG | FI_SOURCE);
	cr_assert_eq(tp.info->ep_attr->type, FI_EP_DGRAM);
	rdmx_test_pair_datagram(&tp, 0, 1);
	rdmx_test_pair_datagram(&tp, 100, 2);
	rdmx_test_pair_datagram(&tp, tp.info->ep_attr->max_msg_size, 3);
	rdmx_test_pair_close(&tp);
	cr_assert_eq(fake_ibv_live(), 0);
}

Test(efa, rdm_transfers_every_protocol)
{
	struct rdmx_test_pair tp;
	static const size_t sizes[] = { 0, 8, 5000, 20000, 200000, 3 << 20 };

	rdmx_test_pair_open(&tp, "efa");
	cr_assert_eq(tp.info->addr_format, FI_ADDR_EFA);
	cr_assert_str_eq(tp.info->domain_attr->name, "rdmap0s6");
	for (size_t i = 0; i < RDMX_ARRAY_SIZE(sizes); i++)
		rdmx_test_pair_transfer(&tp, sizes[i], i);
	rdmx_test_pair_close(&tp);
	cr_assert_eq(fake_ibv_live(), 0);
}

/*
 * 8 MiB in 64 KiB reads is 128 requests, more than a 64-entry send
 * queue could ever hold at once: the device refuses the read and the
 * message must go the credit path instead.
 */
Test(efa, rdm_read_too_large_for_the_queue_goes_by_credit)
{
	struct rdmx_test_pair tp;

	cfg.efa.max_sq_wr = 64;
	cfg.efa.max_rdma_size = 64 << 10;
	fake_ibv_install(&cfg, 1);
	rdmx_test_pair_open(&tp, "efa");
	rdmx_test_pair_transfer(&tp, 8 << 20, 1);
	rdmx_test_pair_close(&tp);
	cr_assert_eq(fake_ibv_live(), 0);
}

Test(efa, rdm_backs_off_on_rnr_then_delivers)
{
	struct rdmx_test_pair tp;
	struct fi_rdmx_ep_stats stats;
	struct rdmx_ibv_addr addr;
	size_t len = sizeof(addr);

	rdmx_test_pair_open(&tp, "efa");
	rdmx_test_pair_transfer(&tp, 8, 1);
	cr_assert_eq(fi_getname(&tp.ep[0]->fid, &addr, &len), 0);
	fake_ibv_inject_efa_status(rdmx_ibv_addr_qpn(&addr),
				   RDMX_EFA_IO_REMOTE_ERROR_RNR, 3);
	rdmx_test_pair_transfer(&tp, 8, 2);
	stats = rdmx_test_pair_stats(&tp, 0);
	cr_assert_geq(stats.rnr_completions, 3);
	cr_assert_geq(stats.rnr_backoffs, 1);
	rdmx_test_pair_close(&tp);
}

/*
 * A send to another GID when the device has no hardware handle left (the
 * pair's two endpoints hold its two): fi_tsend says why, the device's
 * ENOMEM, not that the address is unknown, and the endpoint goes on.
 */
Test(efa, rdm_send_without_a_handle_left_says_why)
{
	struct rdmx_test_pair tp;
	struct rdmx_ibv_addr other;
	size_t len = sizeof(other);
	static uint8_t msg[8];
	fi_addr_t far;

	cfg.max_ah = 2;
	fake_ibv_install(&cfg, 1);
	rdmx_test_pair_open(&tp, "efa");
	rdmx_test_pair_transfer(&tp, 8, 1);
	cr_assert_eq(fi_getname(&tp.ep[1]->fid, &other, &len), 0);
	other.gid[15] ^= 0xff;		/* a device on another host */
	cr_assert_eq(fi_av_insert(tp.av[0], &other, 1, &far, 0, NULL), 1);
	cr_assert_eq(fi_tsend(tp.ep[0], msg, sizeof(msg), NULL, far, 2, msg), -FI_ENOMEM);
	rdmx_test_pair_transfer(&tp, 8, 3);
	rdmx_test_pair_close(&tp);
	cr_assert_eq(fake_ibv_live(), 0);
}

/*
 * Sends a message from endpoint 0 that the device fails with EFA status
 * code `code`; returns the error its completion carries.
 */
static int efa_pair_send_failing(struct rdmx_test_pair *tp, uint32_t code,
				 uint64_t tag)
{
	struct fi_cq_tagged_entry comp;
	struct fi_cq_err_entry err;
	struct rdmx_ibv_addr addr;
	size_t len = sizeof(addr);
	/* Past inject_size: the send completes only when the device says. */
	static uint8_t msg[8192];
	int ret;

	cr_assert_eq(fi_getname(&tp->ep[0]->fid, &addr, &len), 0);
	fake_ibv_inject_efa_status(rdmx_ibv_addr_qpn(&addr), code, 1);
	cr_assert_eq(fi_tsend(tp->ep[0], msg, sizeof(msg), NULL, tp->peer[0], tag, msg), 0);
	ret = rdmx_test_pair_wait(tp, 0, &comp, &err);
	cr_assert_eq(err.op_context, msg);
	return ret;
}

Test(efa, rdm_unreachable_peer_fails_the_send)
{
	struct rdmx_test_pair tp;

	rdmx_test_pair_open(&tp, "efa");
	rdmx_test_pair_transfer(&tp, 8, 1);
	cr_assert_eq(efa_pair_send_failing(&tp, RDMX_EFA_IO_LOCAL_ERROR_UNRESP_REMOTE, 3),
		     FI_EHOSTUNREACH);
	rdmx_test_pair_close(&tp);
}

/*
 * A send the device fails completes with the code of its status, every
 * status of the contract, and the endpoint goes on working: nothing
 * waits for a completion that will not come.
 */
Test(efa, rdm_failed_send_carries_its_status_code)
{
	static const struct {
		uint32_t	code;
		int		err;
	} fails[] = {
		{ 7, FI_EACCES },	/* REMOTE_ERROR_BAD_ADDRESS */
		{ 14, FI_ENOTCONN },	/* REMOTE_ERROR_UNKNOWN_PEER */
		{ 11, FI_EMSGSIZE },	/* REMOTE_ERROR_BAD_LENGTH */
		{ 1, FI_ECANCELED },	/* FLUSHED */
		{ 9, FI_EHOSTUNREACH },	/* REMOTE_ERROR_BAD_DEST_QPN */
		{ 12, FI_EIO },		/* REMOTE_ERROR_BAD_STATUS */
	};
	struct rdmx_test_pair tp;

	rdmx_test_pair_open(&tp, "efa");
	rdmx_test_pair_transfer(&tp, 8, 1);
	for (size_t i = 0; i < RDMX_ARRAY_SIZE(fails); i++) {
		int err = efa_pair_send_failing(&tp, fails[i].code, 10 + i);

		cr_assert_eq(err, fails[i].err, "efa status %u failed the send with %s",
			     fails[i].code, fi_strerror(err));
	}
	rdmx_test_pair_transfer(&tp, 5000, 2);
	rdmx_test_pair_close(&tp);
}
