/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the sender's side of delivery acknowledgements
 * (rdmx_dack.c, rdmx_send.c): a DACK completes a delivery-complete send
 * only if it names that live send of that peer with its message number,
 * once, and only together with the device's acknowledgement of its
 * packets; a DACK with a status fails it; anything else is counted as
 * malformed and changes nothing. The device is a stub that takes every
 * packet.
 */
#include "rdmx_test_ep.h"
#include "rdmx_dack.h"
#include "rdmx_peer.h"
#include "rdmx_tx.h"
#include "rdmx_wire.h"

static int stub_post_send(struct rdmx_dev *dev, struct rdmx_ah *ah,
			  const struct iovec *iov, size_t iov_cnt,
			  uint64_t wr_id, unsigned flags)
{
	(void) dev; (void) ah; (void) iov; (void) iov_cnt; (void) wr_id; (void) flags;
	return 0;
}

static const struct rdmx_dev_ops stub_ops = { .post_send = stub_post_send };

static struct rdmx_test_ep t;
static struct rdmx_dev dev = { .ops = &stub_ops };
static struct rdmx_ah ah;
static struct rdmx_ep ep;
static struct rdmx_peer peer, other;

static void setup(void)
{
	rdmx_test_ep_open(&t, &ep, &dev);
	ep.enabled = true;
	cr_assert_eq(rdmx_pool_construct(&ep.txe_pool, sizeof(struct rdmx_txe), 4), 0);
	memset(&peer, 0, sizeof(peer));
	memset(&other, 0, sizeof(other));
	/* The stub device's addresses are empty (addr_size 0). */
	rdmx_lane_init(&peer.lane, &ep.lanes, &ah, "");
	rdmx_lane_init(&other.lane, &ep.lanes, &ah, "");
	peer.hs.peer_features = RDMX_HS_FEAT_DELIVERY_ACK;
}

static void teardown(void)
{
	rdmx_pool_destruct(&ep.txe_pool);
	rdmx_test_ep_close(&t);
}

TestSuite(dack, .init = setup, .fini = teardown);

/* An eager send of message msg_id at level, its one packet at the device. */
static struct rdmx_txe *send_new(enum rdmx_tx_level level, uint32_t msg_id)
{
	struct rdmx_txe *txe = rdmx_pool_alloc(&ep.txe_pool);

	cr_assert_not_null(txe);
	memset(txe, 0, sizeof(*txe));
	txe->cq_flags = FI_SEND | FI_TAGGED;
	txe->context = txe;
	txe->completion = true;
	txe->level = level;
	txe->in_use = true;
	txe->cleared = true;
	txe->peer = &peer;
	txe->pkts_out = 1;
	txe->msg_id = msg_id;
	peer.dack_awaited += level == RDMX_TX_DELIVERY_AWAITED;
	rdmx_tx_pke_init(&txe->pke, txe, &peer, false);
	txe->pke.busy = true;
	return txe;
}

static void dack(struct rdmx_peer *from, const struct rdmx_txe *txe, uint32_t msg_id,
		 uint32_t status)
{
	struct rdmx_pkt pkt = {
		.type = RDMX_PKT_DACK,
		.msg_id = msg_id,
		.tx_id = (uint32_t) rdmx_pool_index(&ep.txe_pool, txe),
		.status = status,
		.count = 1,
	};

	rdmx_dack_recv(&ep, from, &pkt);
}

Test(dack, completes_only_with_both_acknowledgements)
{
	struct rdmx_txe *txe = send_new(RDMX_TX_DELIVERY_AWAITED, 5);

	rdmx_tx_done(&ep, &txe->pke, RDMX_DEV_OK);
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 0, "the device's ack alone does not complete it");
	dack(&peer, txe, 5, 0);
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 1);
	cr_assert_eq(ep.txe_pool.in_use, 0);
	cr_assert_eq(peer.dack_awaited, 0, "no send waits for a DACK");
}

Test(dack, early_dack_waits_for_the_packets)
{
	struct rdmx_txe *txe = send_new(RDMX_TX_DELIVERY_AWAITED, 5);

	dack(&peer, txe, 5, 0);
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 0, "the packet may still be resent from the buffer");
	cr_assert_eq(txe->level, RDMX_TX_DELIVERED);
	dack(&peer, txe, 5, 0);
	cr_assert_eq(ep.stats.rx_malformed, 1, "a second DACK counts for nothing");
	rdmx_tx_done(&ep, &txe->pke, RDMX_DEV_OK);
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 1);
}

Test(dack, forged_dacks_change_nothing)
{
	struct rdmx_txe *txe = send_new(RDMX_TX_DELIVERY_AWAITED, 5);
	struct rdmx_txe *plain = send_new(RDMX_TX_TRANSMIT, 6);
	struct rdmx_pkt pkt = { .type = RDMX_PKT_DACK, .msg_id = 5, .tx_id = 99, .count = 1 };

	dack(&peer, txe, 4, 0);			/* another message */
	dack(&other, txe, 5, 0);		/* another peer */
	dack(&peer, plain, 6, 0);		/* a send that asked no DACK */
	rdmx_dack_recv(&ep, &peer, &pkt);	/* no such send */
	cr_assert_eq(ep.stats.rx_malformed, 4);
	cr_assert_eq(txe->level, RDMX_TX_DELIVERY_AWAITED);
	rdmx_tx_done(&ep, &txe->pke, RDMX_DEV_OK);
	rdmx_tx_done(&ep, &plain->pke, RDMX_DEV_OK);
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 1, "only the transmit-complete send completed");
}

Test(dack, a_status_fails_the_send)
{
	struct fi_cq_err_entry err = { 0 };
	struct rdmx_txe *txe = send_new(RDMX_TX_DELIVERY_AWAITED, 5);

	txe->orphan = true;	/* no VOID: the stub device has no peer to tell */
	rdmx_tx_done(&ep, &txe->pke, RDMX_DEV_OK);
	dack(&peer, txe, 5, FI_EOPNOTSUPP);
	cr_assert_eq(fi_cq_readerr(t.cq, &err, 0), 1);
	cr_assert_eq(err.err, FI_EOPNOTSUPP);
	cr_assert_eq(err.op_context, txe);
	cr_assert_eq(ep.txe_pool.in_use, 0);
	cr_assert_eq(peer.dack_awaited, 0);
}

Test(dack, a_peer_without_the_feature_refuses_delivery_complete)
{
	struct rdmx_txe *txe = send_new(RDMX_TX_DELIVERY_ASKED, 5);

	cr_assert_not(rdmx_tx_level_refused(txe));
	peer.hs.peer_features = 0;
	cr_assert(rdmx_tx_level_refused(txe));
	txe->level = RDMX_TX_TRANSMIT;
	cr_assert_not(rdmx_tx_level_refused(txe));
}

/* The peer is found unreachable: a send waiting only for its DACK fails too. */
Test(dack, unreachable_peer_fails_the_sends_waiting_for_a_dack)
{
	struct fi_cq_err_entry err = { 0 };
	struct rdmx_txe *waiting = send_new(RDMX_TX_DELIVERY_AWAITED, 5);
	struct rdmx_txe *lost = send_new(RDMX_TX_TRANSMIT, 6);

	waiting->orphan = lost->orphan = true;	/* no VOID to the stub device */
	rdmx_tx_done(&ep, &waiting->pke, RDMX_DEV_OK);
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 0, "it waits for the DACK, nothing in flight");
	rdmx_tx_done(&ep, &lost->pke, RDMX_DEV_UNREACH);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(fi_cq_readerr(t.cq, &err, 0), 1);
		cr_assert_eq(err.err, FI_EHOSTUNREACH);
	}
	cr_assert_eq(ep.txe_pool.in_use, 0);
	cr_assert_eq(peer.dack_awaited, 0);
}

/* One DACK for a run of messages completes each send of the run, no other. */
Test(dack, a_run_completes_each_of_its_sends)
{
	struct rdmx_txe *a = send_new(RDMX_TX_DELIVERY_AWAITED, 7);
	struct rdmx_txe *b = send_new(RDMX_TX_DELIVERY_AWAITED, 8);
	struct rdmx_txe *c = send_new(RDMX_TX_DELIVERY_AWAITED, 9);
	struct rdmx_txe *outside = send_new(RDMX_TX_DELIVERY_AWAITED, 6);
	struct rdmx_pkt pkt = {
		.type = RDMX_PKT_DACK,
		.msg_id = 9,
		.tx_id = (uint32_t) rdmx_pool_index(&ep.txe_pool, c),
		.count = 3,
	};

	rdmx_tx_done(&ep, &a->pke, RDMX_DEV_OK);
	rdmx_tx_done(&ep, &b->pke, RDMX_DEV_OK);
	rdmx_tx_done(&ep, &c->pke, RDMX_DEV_OK);
	rdmx_tx_done(&ep, &outside->pke, RDMX_DEV_OK);
	rdmx_dack_recv(&ep, &peer, &pkt);
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 3, "messages 7, 8, 9");
	cr_assert_eq(outside->level, RDMX_TX_DELIVERY_AWAITED, "message 6 still waits");
	cr_assert_eq(peer.dack_awaited, 1);
	pkt.tx_id = 0;	/* a run whose last names no waiting send */
	rdmx_dack_recv(&ep, &peer, &pkt);
	cr_assert_eq(ep.stats.rx_malformed, 1);
	dack(&peer, outside, 6, 0);
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 1);
}
