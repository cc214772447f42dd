/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx verbs device against the fake rdma-core (fake_ibv.c): discovery,
 * clean failures, the UD post and completion paths with their GRH, and
 * whole tagged transfers of the rdm layer over swsrd on UD queue pairs,
 * on InfiniBand and on RoCE v2 with IPv4 GIDs, with lost datagrams.
 */
#include "fake_ibv.h"
#include "rdmx_test_pair.h"
#include "rdmx_dev_ibv.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_swsrd.h"
#include "rdmx_test_dev.h"

static struct fake_ibv_dev_cfg cfg;

static void verbs_setup(void)
{
	fake_ibv_cfg(&cfg, FAKE_IBV_IB, "mlx5_0", 1);
	fake_ibv_install(&cfg, 1);
	g_rdmx_params.iface = NULL;
}

TestSuite(verbs, .init = verbs_setup);

static struct rdmx_dev *verbs_open_sized(size_t sq_size, size_t rq_size)
{
	struct rdmx_dev_attr attr = { .sq_size = sq_size, .rq_size = rq_size };
	struct rdmx_dev *dev;
	int ret = rdmx_dev_verbs_ops.open(&attr, &dev);

	cr_assert_eq(ret, 0, "verbs open: %s", fi_strerror(-ret));
	return dev;
}

static struct rdmx_dev *verbs_open(void)
{
	return verbs_open_sized(256, 64);
}

Test(verbs, mtu_is_the_active_mtu_less_swsrd)
{
	struct rdmx_dev_domain dom;
	struct rdmx_dev *dev;

	cfg.active_mtu = IBV_MTU_2048;
	fake_ibv_install(&cfg, 1);
	cr_assert_eq(rdmx_dev_verbs_ops.domains(NULL, NULL, &dom, 1), 1);
	cr_assert_str_eq(dom.name, "mlx5_0");
	cr_assert_eq(dom.mtu, 2048 - sizeof(struct rdmx_wire_srd));
	dev = verbs_open();
	cr_assert_eq(dev->caps.mtu, dom.mtu);
	cr_assert_eq(dev->caps.flags, RDMX_DEV_CAP_RELIABLE, "UD has no RDMA read");
	dev->ops->close(dev);
	cr_assert_eq(fake_ibv_live(), 0);
}

Test(verbs, failed_open_releases_everything)
{
	static const struct rdmx_test_open_fail fails[] = {
		{ FAKE_IBV_OPEN_DEVICE, 0, ENOMEM, -FI_ENODEV },
		{ FAKE_IBV_QUERY_PORT, 0, EIO, -FI_ENODEV },
		{ FAKE_IBV_QUERY_DEVICE, 0, EIO, -FI_EIO },
		{ FAKE_IBV_ALLOC_PD, 0, ENOMEM, -FI_ENOMEM },
		{ FAKE_IBV_CREATE_CQ, 0, ENOMEM, -FI_ENOMEM },
		{ FAKE_IBV_CREATE_QP, 0, ENOMEM, -FI_ENOMEM },
		{ FAKE_IBV_MODIFY_QP, 0, ENOMEM, -FI_ENOMEM },
		{ FAKE_IBV_REG_MR, 0, ENOMEM, -FI_ENOMEM },
		{ FAKE_IBV_REG_MR, 1, EFAULT, -FI_EFAULT },	/* the receive ring */
		{ FAKE_IBV_POST_RECV, 0, ENOMEM, -FI_ENOMEM },
		{ FAKE_IBV_POST_RECV, 10, EINVAL, -FI_EINVAL },
	};

	rdmx_test_failed_opens(&rdmx_dev_verbs_ops, &cfg, fails, RDMX_ARRAY_SIZE(fails));
}

/*
 * a's first datagram to b: b has no handle for a and verbs cannot answer
 * without one, so b makes one and challenges; a learns b's tag and sends
 * again, and b takes it. Afterwards a's datagrams carry b's tag.
 */
static void verbs_meet(struct rdmx_dev *a, struct rdmx_ah *ah, struct rdmx_dev *b)
{
	static uint8_t rx[4096], byte;
	struct iovec iov = { &byte, 1 };
	struct rdmx_dev_cqe cqe[4];
	bool got = false, sent = false;

	cr_assert_eq(b->ops->post_recv(b, rx, sizeof(rx), 999), 0);
	cr_assert_eq(a->ops->post_send(a, ah, &iov, 1, 999, RDMX_DEV_SEND_AWAITED), 0);
	for (int i = 0; i < 20 && !(got && sent); i++) {
		got |= b->ops->poll_cq(b, cqe, 4) > 0;
		sent |= a->ops->poll_cq(a, cqe, 4) > 0;
	}
	cr_assert(got && sent, "a and b never exchanged tags");
	cr_assert_eq(b->stats.challenges, 1);
}

/* A datagram through swsrd lands in the posted buffer, GRH stripped. */
Test(verbs, send_reaches_a_posted_receive)
{
	struct rdmx_dev *a = verbs_open(), *b = verbs_open();
	struct rdmx_ibv_addr a_addr, b_addr;
	static uint8_t rx[4096], body[1000];
	struct iovec iov = { body, sizeof(body) };
	struct rdmx_dev_cqe cqe[4];
	struct rdmx_ah *ah;
	int n = 0;

	memset(body, 0x5a, sizeof(body));
	a->ops->getname(a, &a_addr);
	b->ops->getname(b, &b_addr);
	cr_assert_eq(a->ops->ah_create(a, &b_addr, &ah), 0);
	verbs_meet(a, ah, b);
	cr_assert_eq(b->ops->post_recv(b, rx, sizeof(rx), 3), 0);
	cr_assert_eq(a->ops->post_send(a, ah, &iov, 1, 77, RDMX_DEV_SEND_AWAITED), 0);
	memset(body, 0, sizeof(body));
	for (int i = 0; i < 10 && !n; i++)
		n = b->ops->poll_cq(b, cqe, 4);
	cr_assert_eq(n, 1);
	cr_assert_eq(cqe[0].op, RDMX_DEV_OP_RECV);
	cr_assert_eq(cqe[0].wr_id, 3);
	cr_assert_eq(cqe[0].len, 1000);
	cr_assert_eq(rx[0], 0x5a);
	cr_assert_eq(rx[999], 0x5a);
	cr_assert_eq(memcmp(cqe[0].src_addr, &a_addr, sizeof(a_addr)), 0);
	/* The send completes when b's acknowledgement arrives. */
	n = 0;
	for (int i = 0; i < 10 && !n; i++)
		n = a->ops->poll_cq(a, cqe, 4);
	cr_assert_eq(n, 1);
	cr_assert_eq(cqe[0].wr_id, 77);
	cr_assert_eq(cqe[0].status, RDMX_DEV_OK);
	rdmx_test_close_devs(a, b);
}

static struct rdmx_dev *verbs_open_unreliable(void)
{
	struct rdmx_dev_attr attr = { .sq_size = 16, .rq_size = 16, .unreliable = true };
	struct rdmx_dev *dev;

	cr_assert_eq(rdmx_dev_verbs_ops.open(&attr, &dev), 0);
	return dev;
}

/* Polls dev until it gives a completion (at most 10 polls); how many it gave. */
static int verbs_poll_some(struct rdmx_dev *dev, struct rdmx_dev_cqe *cqe)
{
	int n = 0;

	for (int i = 0; i < 10 && !n; i++)
		n = dev->ops->poll_cq(dev, cqe, 4);
	return n;
}

/*
 * A datagram endpoint's device (attr.unreliable): no challenge, no
 * acknowledgement, a send done once posted, a receive named by its
 * sender's address alone; no buffer, no datagram; datagrams of a
 * reliable endpoint and to one are dropped.
 */
Test(verbs, unreliable_datagrams_go_without_swsrd)
{
	struct rdmx_dev *a = verbs_open_unreliable(), *b = verbs_open_unreliable();
	struct rdmx_dev *r = verbs_open();
	struct rdmx_ibv_addr a_addr, b_addr, r_addr;
	static uint8_t rx[4096], body[100];
	struct iovec iov = { body, sizeof(body) };
	struct rdmx_dev_cqe cqe[4];
	struct rdmx_ah *ah, *r_ah, *ar_ah;

	memset(body, 0x5a, sizeof(body));
	a->ops->getname(a, &a_addr);
	b->ops->getname(b, &b_addr);
	r->ops->getname(r, &r_addr);
	cr_assert_eq(a->ops->ah_create(a, &b_addr, &ah), 0);
	cr_assert_eq(b->ops->post_recv(b, rx, sizeof(rx), 3), 0);
	cr_assert_eq(a->ops->post_send(a, ah, &iov, 1, 77, 0), 0);
	cr_assert_eq(verbs_poll_some(a, cqe), 1, "the send is done once posted");
	cr_assert_eq(cqe[0].op, RDMX_DEV_OP_SEND);
	cr_assert_eq(cqe[0].wr_id, 77);
	cr_assert_eq(verbs_poll_some(b, cqe), 1);
	cr_assert_eq(cqe[0].op, RDMX_DEV_OP_RECV);
	cr_assert_eq(cqe[0].len, sizeof(body));
	cr_assert_eq(rx[99], 0x5a);
	cr_assert_null(cqe[0].src_ah, "no handle made for a sender");
	cr_assert_eq(memcmp(cqe[0].src_addr, &a_addr, sizeof(a_addr)), 0);
	cr_assert_eq(a->stats.acks_sent + b->stats.acks_sent + b->stats.challenges, 0);

	/* No buffer posted: the datagram is lost, not refused. */
	cr_assert_eq(a->ops->post_send(a, ah, &iov, 1, 78, 0), 0);
	cr_assert_eq(verbs_poll_some(a, cqe), 1);
	cr_assert_eq(verbs_poll_some(b, cqe), 0);
	cr_assert_eq(b->stats.rx_dropped, 1);

	/* A reliable endpoint's datagram to b, and a's to a reliable endpoint. */
	cr_assert_eq(b->ops->post_recv(b, rx, sizeof(rx), 4), 0);
	cr_assert_eq(r->ops->ah_create(r, &b_addr, &r_ah), 0);
	cr_assert_eq(r->ops->post_send(r, r_ah, &iov, 1, 79, 0), 0);
	(void) verbs_poll_some(r, cqe);
	cr_assert_eq(verbs_poll_some(b, cqe), 0);
	cr_assert_geq(b->stats.rx_malformed, 1);
	cr_assert_eq(r->ops->post_recv(r, rx, sizeof(rx), 5), 0);
	cr_assert_eq(a->ops->ah_create(a, &r_addr, &ar_ah), 0);
	cr_assert_eq(a->ops->post_send(a, ar_ah, &iov, 1, 80, 0), 0);
	(void) verbs_poll_some(a, cqe);
	cr_assert_eq(verbs_poll_some(r, cqe), 0);
	cr_assert_geq(r->stats.rx_malformed, 1);
	r->ops->close(r);
	rdmx_test_close_devs(a, b);
}

/* FI_EP_DGRAM over verbs: one UD datagram per message, from 0 bytes to the limit. */
Test(verbs, dgram_messages)
{
	struct rdmx_test_pair tp;

	rdmx_test_pair_open_type(&tp, "verbs", FI_EP_DGRAM, FI_MSG | FI_SOURCE);
	rdmx_test_pair_datagram(&tp, 0, 1);
	rdmx_test_pair_datagram(&tp, 100, 2);
	rdmx_test_pair_datagram(&tp, tp.info->ep_attr->max_msg_size, 3);
	rdmx_test_pair_close(&tp);
	cr_assert_eq(fake_ibv_live(), 0);
}

Test(verbs, rdm_transfers_every_protocol)
{
	struct rdmx_test_pair tp;
	static const size_t sizes[] = { 0, 8, 3000, 20000, 200000, 3 << 20 };

	rdmx_test_pair_open(&tp, "verbs");
	cr_assert_eq(tp.info->addr_format, FI_ADDR_IB_UD);
	for (size_t i = 0; i < RDMX_ARRAY_SIZE(sizes); i++)
		rdmx_test_pair_transfer(&tp, sizes[i], i);
	rdmx_test_pair_close(&tp);
	cr_assert_eq(fake_ibv_live(), 0);
}

/*
 * The rdm layer hands a medium or long message's packets to the device
 * in posts of up to RDMX_DEV_SEGS_MAX (post_send_segs): every packet but
 * a message's first and a post's lone last goes in one.
 */
Test(verbs, a_message_leaves_in_posts_of_segments)
{
	struct rdmx_test_pair tp;
	const struct rdmx_dev *nic;
	size_t pkts;

	rdmx_test_pair_open(&tp, "verbs");
	nic = rdmx_container_of(tp.ep[0], struct rdmx_ep, ep_fid)->lanes.nic;
	rdmx_test_pair_transfer(&tp, 3 << 20, 1);
	pkts = (3 << 20) / nic->caps.mtu;
	cr_assert_geq(nic->stats.tx_segs, pkts - pkts / RDMX_DEV_SEGS_MAX - 1,
		      "%lu of about %zu packets posted as segments",
		      (unsigned long) nic->stats.tx_segs, pkts);
	rdmx_test_pair_transfer(&tp, 20000, 2);
	cr_assert_eq(rdmx_container_of(tp.ep[0], struct rdmx_ep, ep_fid)->seg_pkts, 0,
		     "packets of posts still counted at the device");
	rdmx_test_pair_close(&tp);
}

Test(verbs, roce_ipv4_senders_are_named_from_the_grh)
{
	struct rdmx_test_pair tp;

	fake_ibv_cfg(&cfg, FAKE_IBV_ROCE, "rocep1s0", 7);
	fake_ibv_install(&cfg, 1);
	rdmx_test_pair_open(&tp, "verbs");
	rdmx_test_pair_transfer(&tp, 100, 1);
	rdmx_test_pair_transfer(&tp, 100000, 2);
	rdmx_test_pair_close(&tp);
}

/*
 * Opens a pair that retransmits quickly and has connected once; returns
 * the QPN of endpoint 0, for failures to be injected on.
 */
static uint32_t verbs_pair_open_quick(struct rdmx_test_pair *tp)
{
	struct rdmx_ibv_addr addr;
	size_t len = sizeof(addr);

	g_rdmx_params.rto_min_us = 100;
	rdmx_test_pair_open(tp, "verbs");
	rdmx_test_pair_transfer(tp, 8, 1);
	cr_assert_eq(fi_getname(&tp->ep[0]->fid, &addr, &len), 0);
	return rdmx_ibv_addr_qpn(&addr);
}

/*
 * A peer that never answers (its endpoint is never progressed): the
 * handshake retries every millisecond, but its RESET is still at the
 * device, which resends it until the peer is found unreachable, so no
 * copy is added: one packet held for the silent peer, not one per retry.
 */
Test(verbs, a_silent_peer_holds_one_copy_of_a_handshake_packet)
{
	struct rdmx_test_pair tp;
	struct rdmx_ep *ep;
	struct rdmx_peer *peer;
	struct fi_cq_tagged_entry comp;
	uint64_t deadline;
	char buf[8] = { 0 };

	g_rdmx_params.hs_retry_ms = 1;
	rdmx_test_pair_open(&tp, "verbs");
	ep = rdmx_container_of(tp.ep[0], struct rdmx_ep, ep_fid);
	cr_assert_eq(fi_tsend(tp.ep[0], buf, sizeof(buf), NULL, tp.peer[0], 1, NULL), 0);
	peer = rdmx_peer_find(ep, tp.peer[0]);
	cr_assert_not_null(peer);
	deadline = rdmx_test_now_ms() + 5000;
	while (peer->hs.tries < 20) {
		cr_assert_neq(fi_cq_read(tp.cq[0], &comp, 1), -FI_EAVAIL);
		cr_assert_lt(rdmx_test_now_ms(), deadline, "20 retries in 5 s");
	}
	cr_assert_eq(peer->hs.state, RDMX_HS_RESET_SENT);
	cr_assert_eq(peer->hs_out, 1);
	cr_assert_eq(ep->pke_pool.in_use, 1, "%zu packets held", ep->pke_pool.in_use);
	rdmx_test_pair_close(&tp);
}

/*
 * The receive budget in the endpoint's counters: an unexpected message
 * is charged while it waits, given back when a receive takes it, and the
 * high-water mark keeps it.
 */
Test(verbs, counters_report_the_receive_budget)
{
	struct rdmx_test_pair tp;
	struct fi_cq_tagged_entry comp;
	char out[1000] = { 1 }, in[1000];
	uint64_t deadline;

	rdmx_test_pair_open(&tp, "verbs");
	rdmx_test_pair_transfer(&tp, 8, 1);
	cr_assert_eq(rdmx_test_pair_stats(&tp, 1).budget_used, 0);
	cr_assert_eq(fi_tsend(tp.ep[0], out, sizeof(out), NULL, tp.peer[0], 2, out), 0);
	deadline = rdmx_test_now_ms() + 10000;
	while (!rdmx_test_pair_stats(&tp, 1).rx_unexpected) {
		(void) fi_cq_read(tp.cq[0], &comp, 1);
		cr_assert_eq(fi_cq_read(tp.cq[1], &comp, 1), -FI_EAGAIN);
		cr_assert_lt(rdmx_test_now_ms(), deadline, "no unexpected message in 10 s");
	}
	cr_assert_geq(rdmx_test_pair_stats(&tp, 1).budget_used, sizeof(out));
	cr_assert_eq(fi_trecv(tp.ep[1], in, sizeof(in), NULL, tp.peer[1], 2, 0, in), 0);
	cr_assert_eq(rdmx_test_pair_wait(&tp, 1, &comp, NULL), 0);
	cr_assert_eq(memcmp(in, out, sizeof(out)), 0);
	cr_assert_eq(rdmx_test_pair_stats(&tp, 1).budget_used, 0);
	cr_assert_geq(rdmx_test_pair_stats(&tp, 1).budget_peak, sizeof(out));
	cr_assert_eq(rdmx_test_pair_stats(&tp, 1).budget_refused, 0);
	cr_assert_eq(rdmx_test_pair_stats(&tp, 1).anon_peers, 0);
	rdmx_test_pair_close(&tp);
}

/* UD loses what the fake fails; swsrd resends it. */
Test(verbs, lost_datagrams_are_sent_again)
{
	struct rdmx_test_pair tp;
	uint32_t qpn = verbs_pair_open_quick(&tp);

	fake_ibv_inject_send_status(qpn, IBV_WC_GENERAL_ERR, 0, 5);
	rdmx_test_pair_transfer(&tp, 20000, 2);
	cr_assert_geq(rdmx_test_pair_stats(&tp, 0).retransmits, 1);
	rdmx_test_pair_close(&tp);
}

/* A datagram without immediate data is no rdmx packet: dropped, counted. */
Test(verbs, receive_without_immediate_is_malformed)
{
	struct rdmx_test_pair tp;
	uint32_t qpn = verbs_pair_open_quick(&tp);

	cr_assert_eq(rdmx_test_pair_stats(&tp, 1).rx_malformed, 0);
	fake_ibv_inject_no_imm(qpn, 1);
	rdmx_test_pair_transfer(&tp, 100, 2);
	cr_assert_eq(rdmx_test_pair_stats(&tp, 1).rx_malformed, 1);
	cr_assert_geq(rdmx_test_pair_stats(&tp, 0).retransmits, 1);
	rdmx_test_pair_close(&tp);
}

/* Every status a UD send can fail with is a loss, which swsrd resends. */
Test(verbs, every_failed_send_is_a_loss)
{
	struct rdmx_test_pair tp;
	uint32_t qpn = verbs_pair_open_quick(&tp);
	uint64_t tag = 2;

	for (int wc = IBV_WC_LOC_LEN_ERR; wc <= IBV_WC_TM_RNDV_INCOMPLETE; wc++) {
		fake_ibv_inject_send_status(qpn, (enum ibv_wc_status) wc, 0, 1);
		rdmx_test_pair_transfer(&tp, 100, tag++);
	}
	cr_assert_geq(rdmx_test_pair_stats(&tp, 0).retransmits, tag - 2);
	rdmx_test_pair_close(&tp);
}

/*
 * A failed receive is dropped and counted, and its ring slot goes back
 * to the queue pair: 4 failures fill a 4-slot ring, and 2 more failures
 * and a good datagram still find slots after the next poll.
 */
Test(verbs, failed_receives_are_dropped_and_reposted)
{
	struct rdmx_dev *a = verbs_open(), *b = verbs_open_sized(256, 4);
	struct rdmx_ibv_addr b_addr;
	static uint8_t rx[4096], byte = 7;
	struct iovec iov = { &byte, 1 };
	struct rdmx_dev_cqe cqe[4];
	struct rdmx_ah *ah;
	int n = 0;

	b->ops->getname(b, &b_addr);
	cr_assert_eq(b->caps.rq_size, 4);
	cr_assert_eq(a->ops->ah_create(a, &b_addr, &ah), 0);
	verbs_meet(a, ah, b);
	cr_assert_eq(b->ops->post_recv(b, rx, sizeof(rx), 3), 0);
	fake_ibv_inject_recv_status(rdmx_ibv_addr_qpn(&b_addr), IBV_WC_LOC_PROT_ERR, 6);
	for (uint64_t i = 0; i < 4; i++)
		cr_assert_eq(a->ops->post_send(a, ah, &iov, 1, i, RDMX_DEV_SEND_AWAITED), 0);
	cr_assert_eq(b->ops->poll_cq(b, cqe, 4), 0);
	cr_assert_eq(b->stats.rx_malformed, 4);
	for (uint64_t i = 4; i < 7; i++)
		cr_assert_eq(a->ops->post_send(a, ah, &iov, 1, i, RDMX_DEV_SEND_AWAITED), 0);
	n = b->ops->poll_cq(b, cqe, 4);
	cr_assert_eq(n, 1, "%d completions, %lu malformed", n,
		     (unsigned long) b->stats.rx_malformed);
	cr_assert_eq(cqe[0].wr_id, 3);
	cr_assert_eq(cqe[0].status, RDMX_DEV_OK);
	cr_assert_eq(rx[0], 7);
	cr_assert_eq(b->stats.rx_malformed, 6);
	rdmx_test_close_devs(a, b);
}

/* ibv_create_ah failing fails ah_create with its code, leak-free. */
Test(verbs, failed_address_handle_is_a_clean_error)
{
	struct rdmx_dev *a = verbs_open(), *b = verbs_open();
	struct rdmx_ah *ah = rdmx_test_failed_ah(a, b);

	a->ops->ah_destroy(a, ah);
	rdmx_test_close_devs(a, b);
}

/* A send ibv_wr_complete refuses is a loss: swsrd sends it again. */
Test(verbs, refused_send_is_sent_again)
{
	struct rdmx_test_pair tp;

	(void) verbs_pair_open_quick(&tp);
	fake_ibv_fail(FAKE_IBV_WR_COMPLETE, ENOMEM, 3);
	rdmx_test_pair_transfer(&tp, 20000, 2);
	cr_assert_eq(fake_ibv_fail_left(FAKE_IBV_WR_COMPLETE), 0);
	cr_assert_geq(rdmx_test_pair_stats(&tp, 0).retransmits, 1);
	rdmx_test_pair_close(&tp);
	cr_assert_eq(fake_ibv_live(), 0);
}

/*
 * verbs keeps a handle's hardware part as long as its swsrd state (until
 * close): a GID more than max_ah is -FI_ENOSPC.
 */
Test(verbs, address_handles_stay_within_max_ah)
{
	struct rdmx_dev *a, *b;
	struct rdmx_ibv_addr b_addr, other;
	union ibv_gid gid = { .raw = { 0xfe, 0x80 } };
	struct rdmx_ah *to_b, *ah = NULL;

	cfg.max_ah = 1;
	fake_ibv_install(&cfg, 1);
	a = verbs_open();
	b = verbs_open();
	b->ops->getname(b, &b_addr);
	gid.raw[15] = 0x30;
	rdmx_ibv_addr_make(&other, &gid, 0x200, 1);
	cr_assert_eq(a->ops->ah_create(a, &b_addr, &to_b), 0);
	cr_assert_eq(a->ops->ah_create(a, &other, &ah), -FI_ENOSPC);
	cr_assert_null(ah);
	cr_assert_eq(fake_ibv_ahs(), 1);
	rdmx_test_close_devs(a, b);
}

/*
 * Full queues: the send queue and the receive queue say -FI_EAGAIN, the
 * sends they took all complete, and then there is room again.
 */
Test(verbs, full_queues_are_eagain)
{
	struct rdmx_dev *a = verbs_open_sized(16, 64), *b = verbs_open_sized(256, 16);
	struct rdmx_ibv_addr b_addr;
	static uint8_t rx[16][256], byte = 1;
	struct iovec iov = { &byte, 1 };
	struct rdmx_dev_cqe cqe[16];
	size_t sent, sends_done = 0, recvs_done = 0;
	struct rdmx_ah *ah;

	b->ops->getname(b, &b_addr);
	cr_assert_eq(a->ops->ah_create(a, &b_addr, &ah), 0);
	for (uint64_t i = 0; i < 16; i++)
		cr_assert_eq(b->ops->post_recv(b, rx[i], sizeof(rx[i]), i), 0);
	cr_assert_eq(b->ops->post_recv(b, rx[0], sizeof(rx[0]), 16), -FI_EAGAIN);
	for (sent = 0; a->ops->post_send(a, ah, &iov, 1, sent,
					 RDMX_DEV_SEND_AWAITED) == 0; sent++)
		cr_assert_lt(sent, 64);
	cr_assert_eq(sent, a->caps.sq_size);
	cr_assert_eq(a->ops->post_send(a, ah, &iov, 1, sent, 0), -FI_EAGAIN);
	for (int round = 0; round < 1000 && sends_done < sent; round++) {
		int n = b->ops->poll_cq(b, cqe, 16);

		recvs_done += (size_t) RDMX_MAX(n, 0);
		n = a->ops->poll_cq(a, cqe, 16);
		for (int i = 0; i < n; i++)
			cr_assert_eq(cqe[i].status, RDMX_DEV_OK);
		sends_done += (size_t) RDMX_MAX(n, 0);
	}
	cr_assert_eq(sends_done, sent);
	cr_assert_eq(recvs_done, sent);
	cr_assert_eq(a->ops->post_send(a, ah, &iov, 1, sent, 0), 0);
	cr_assert_not(fake_ibv_cq_overrun());
	rdmx_test_close_devs(a, b);
}

/* UD has no RNR retry: the verbs device never sets one. */
Test(verbs, no_rnr_retry_on_ud)
{
	struct rdmx_ibv_addr addr;
	struct rdmx_dev *dev = verbs_open();

	dev->ops->getname(dev, &addr);
	cr_assert_eq(fake_ibv_qp_rnr_retry(rdmx_ibv_addr_qpn(&addr)), -1);
	dev->ops->close(dev);
}
