/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the rdm layer's RNR policy (rdmx_rnr.c): resend after a
 * first refusal, random doubling backoff after repeats, -FI_EAGAIN while
 * a peer backs off, order of queued resends, and FI_RM_DISABLED (with the
 * VOID that keeps the receiver's order), a post of segments refused part
 * way (sent again from its first refused packet), and a refusal that
 * comes after its session ended. Time is a fake clock; the device is a
 * stub that records what is posted.
 */
#include <stddef.h>

#include "rdmx_test_ep.h"
#include "rdmx_clock.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_tx.h"

#define NS_PER_US	1000ULL

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

/* The stub device: records wr_ids and headers posted, or pushes back. */
static uint64_t posted[16];
static struct rdmx_wire_eager posted_hdr[16];
static int posted_cnt;
static bool push_back;

static int stub_post_send(struct rdmx_dev *dev, struct rdmx_ah *ah,
			  const struct iovec *iov, size_t iov_cnt,
			  uint64_t wr_id, unsigned flags)
{
	(void) dev; (void) ah; (void) iov_cnt; (void) flags;
	if (push_back)
		return -FI_EAGAIN;
	cr_assert_lt(posted_cnt, 16);
	memcpy(&posted_hdr[posted_cnt], iov[0].iov_base, sizeof(posted_hdr[0]));
	posted[posted_cnt++] = wr_id;
	return 0;
}

/* The last post of segments: its header's offset, payload and segment size. */
static uint64_t segs_off;
static const struct iovec *segs_payload;
static size_t segs_len, segs_seg;

static int stub_post_send_segs(struct rdmx_dev *dev, struct rdmx_ah *ah,
			       const struct iovec *iov, size_t iov_cnt, size_t seg_len,
			       size_t off_at, uint64_t wr_id, unsigned flags)
{
	uint64_t off;

	(void) dev; (void) ah; (void) flags;
	cr_assert_lt(posted_cnt, 16);
	memcpy(&off, (const uint8_t *) iov[0].iov_base + off_at, sizeof(off));
	segs_off = le64toh(off);
	segs_payload = &iov[1];
	segs_len = rdmx_iov_len(&iov[1], iov_cnt - 1);
	segs_seg = seg_len;
	posted[posted_cnt++] = wr_id;
	return 0;
}

static const struct rdmx_dev_ops stub_ops = {
	.post_send = stub_post_send,
	.post_send_segs = stub_post_send_segs,
};

static struct rdmx_test_ep t;
static struct rdmx_dev dev = { .ops = &stub_ops };
static struct rdmx_ah ah;
static struct rdmx_ep ep;
static struct rdmx_peer peer;

static void setup(void)
{
	fake_now = 1000000000ULL;
	rdmx_clock_set(fake_clock);
	posted_cnt = 0;
	push_back = false;
	rdmx_test_ep_open(&t, &ep, &dev);
	ep.rng = 12345;
	cr_assert_eq(rdmx_pool_construct(&ep.txe_pool, sizeof(struct rdmx_txe), 4), 0);
	memset(&peer, 0, sizeof(peer));
	rdmx_lane_init(&peer.lane, &ep.lanes, &ah, "");
	rdmx_rnr_peer_construct(&peer);
}

static void teardown(void)
{
	rdmx_pool_destruct(&ep.txe_pool);
	rdmx_test_ep_close(&t);
	rdmx_clock_set(NULL);
}

/* An eager send whose one packet the device just refused. */
static struct rdmx_pke *pke_new(void)
{
	struct rdmx_txe *txe = rdmx_pool_alloc(&ep.txe_pool);

	cr_assert_not_null(txe);
	memset(txe, 0, sizeof(*txe));
	txe->cq_flags = FI_SEND | FI_TAGGED;
	txe->in_use = true;
	txe->cleared = true;
	txe->peer = &peer;
	txe->pkts_out = 1;
	txe->msg_id = 7;
	rdmx_tx_pke_init(&txe->pke, txe, &peer, false);
	rdmx_wire_eager_encode(&txe->pke.hdr.eager, RDMX_PKT_TAGGED, txe->msg_id, 0, 0);
	rdmx_tx_pke_iov(&txe->pke, sizeof(txe->pke.hdr.eager), NULL, 0, 0, 0);
	txe->pke.busy = true;
	return &txe->pke;
}

TestSuite(rnr, .init = setup, .fini = teardown);

Test(rnr, backoff_starts_at_40_to_120_us_and_doubles_to_the_cap)
{
	uint64_t rng = 99;

	g_rdmx_params.rnr_backoff_max_us = 1000000;
	for (int i = 0; i < 1000; i++) {
		uint64_t b0 = rdmx_rnr_backoff_ns(0, &rng);
		uint64_t b3 = rdmx_rnr_backoff_ns(3, &rng);

		cr_assert(b0 >= 40 * NS_PER_US && b0 < 120 * NS_PER_US, "b0 %lu", b0);
		cr_assert(b3 >= 320 * NS_PER_US && b3 < 960 * NS_PER_US, "b3 %lu", b3);
	}
	cr_assert_eq(rdmx_rnr_backoff_ns(20, &rng), 1000000 * NS_PER_US);
	cr_assert_eq(rdmx_rnr_backoff_ns(40, &rng), 1000000 * NS_PER_US);
	g_rdmx_params.rnr_backoff_max_us = 50;
	cr_assert_leq(rdmx_rnr_backoff_ns(0, &rng), 50 * NS_PER_US);
}

Test(rnr, first_refusal_resends_at_the_next_progress)
{
	struct rdmx_pke *txe = pke_new();

	rdmx_rnr_refused(&ep, &peer, txe);
	cr_assert_eq(ep.stats.rnr_completions, 1);
	cr_assert_eq(ep.stats.rnr_backoffs, 0, "a first refusal is no backoff");
	cr_assert_eq(peer.backoff_until, 0);
	cr_assert(rdmx_rnr_blocked(&peer), "new sends wait behind the resend");
	rdmx_rnr_progress(&ep);
	cr_assert_eq(posted_cnt, 1);
	cr_assert_eq(posted[0], (uintptr_t) txe);
	cr_assert_not(rdmx_rnr_blocked(&peer));
	cr_assert(rdmx_dlist_empty(&ep.retry_peers));
}

Test(rnr, repeat_refusal_backs_off_and_blocks_new_sends_until_it_expires)
{
	struct rdmx_pke *txe = pke_new();
	uint64_t until;

	rdmx_rnr_refused(&ep, &peer, txe);
	rdmx_rnr_progress(&ep);
	rdmx_rnr_refused(&ep, &peer, txe);
	cr_assert_eq(ep.stats.rnr_backoffs, 1);
	until = peer.backoff_until;
	cr_assert(until >= fake_now + 40 * NS_PER_US && until < fake_now + 120 * NS_PER_US,
		  "backoff %lu ns", until - fake_now);
	fake_now = until - 1;
	rdmx_rnr_progress(&ep);
	cr_assert_eq(posted_cnt, 1, "nothing is resent during the backoff");
	cr_assert(rdmx_rnr_blocked(&peer));
	fake_now = until;
	rdmx_rnr_progress(&ep);
	cr_assert_eq(posted_cnt, 2);
	cr_assert_eq(posted[1], (uintptr_t) txe);
	cr_assert_not(rdmx_rnr_blocked(&peer), "the backoff is over");
}

Test(rnr, backoff_doubles_per_repeat_and_a_delivery_ends_it)
{
	struct rdmx_pke *txe = pke_new();
	uint64_t last = 0;

	rdmx_rnr_refused(&ep, &peer, txe);
	for (int i = 0; i < 4; i++) {
		uint64_t len;

		rdmx_rnr_progress(&ep);
		rdmx_rnr_refused(&ep, &peer, txe);
		len = peer.backoff_until - fake_now;
		cr_assert_geq(len, (40 * NS_PER_US) << i, "repeat %d: %lu ns", i, len);
		cr_assert_lt(len, (120 * NS_PER_US) << i, "repeat %d: %lu ns", i, len);
		cr_assert_gt(len, last / 2, "repeat %d does not shrink the wait", i);
		last = len;
		fake_now = peer.backoff_until;
	}
	cr_assert_eq(peer.backoff_exp, 4);
	rdmx_rnr_progress(&ep);
	rdmx_rnr_delivered(&peer);
	cr_assert_eq(peer.backoff_exp, 0);
	cr_assert_eq(peer.backoff_until, 0);
}

Test(rnr, queued_resends_keep_their_order_when_the_device_pushes_back)
{
	struct rdmx_pke *a = pke_new(), *b = pke_new(), *c = pke_new();

	rdmx_rnr_refused(&ep, &peer, a);
	rdmx_rnr_refused(&ep, &peer, b);
	rdmx_rnr_refused(&ep, &peer, c);
	push_back = true;
	rdmx_rnr_progress(&ep);
	cr_assert_eq(posted_cnt, 0);
	cr_assert(rdmx_rnr_blocked(&peer));
	push_back = false;
	rdmx_rnr_progress(&ep);
	cr_assert_eq(posted_cnt, 3);
	cr_assert_eq(posted[0], (uintptr_t) a);
	cr_assert_eq(posted[1], (uintptr_t) b);
	cr_assert_eq(posted[2], (uintptr_t) c);
}

Test(rnr, rm_disabled_completes_with_fi_enorx)
{
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_tagged_entry e;
	struct rdmx_pke *txe = pke_new();

	ep.domain->resource_mgmt = FI_RM_DISABLED;
	ep.enabled = true;
	txe->txe->context = &err;
	rdmx_rnr_refused(&ep, &peer, txe);
	cr_assert_eq(fi_cq_read(t.cq, &e, 1), -FI_EAVAIL);
	cr_assert_eq(fi_cq_readerr(t.cq, &err, 0), 1);
	cr_assert_eq(err.err, FI_ENORX);
	cr_assert_eq(err.op_context, &err);
	/* The receiver must hear that message 7 will not come, or it waits. */
	cr_assert_eq(posted_cnt, 1, "a VOID takes the message's place");
	cr_assert_eq(posted[0], (uintptr_t) txe);
	cr_assert_eq(le32toh(posted_hdr[0].base.flags), RDMX_PKT_VOID);
	cr_assert_eq(le32toh(posted_hdr[0].msg_id), 7);
	cr_assert_eq(ep.txe_pool.in_use, 1, "the entry carries the VOID");
	/* A refused VOID is resent whatever the resource management. */
	rdmx_tx_done(&ep, txe, RDMX_DEV_RNR);
	cr_assert(rdmx_rnr_blocked(&peer));
	rdmx_rnr_progress(&ep);
	cr_assert_eq(posted_cnt, 2);
	rdmx_tx_done(&ep, txe, RDMX_DEV_OK);
	cr_assert_eq(ep.txe_pool.in_use, 0, "the send entry was released");
	cr_assert_not(rdmx_rnr_blocked(&peer));
	cr_assert_eq(fi_cq_read(t.cq, &e, 1), -FI_EAGAIN, "no second entry");
}

Test(rnr, flush_fails_queued_sends)
{
	struct fi_cq_err_entry err = { 0 };
	struct rdmx_pke *txe = pke_new();

	rdmx_rnr_refused(&ep, &peer, txe);
	rdmx_rnr_flush(&ep, &peer, FI_ECANCELED);
	cr_assert_eq(fi_cq_readerr(t.cq, &err, 0), 1);
	cr_assert_eq(err.err, FI_ECANCELED);
	cr_assert_eq(ep.txe_pool.in_use, 0);
	cr_assert(rdmx_dlist_empty(&ep.retry_peers));
	cr_assert_not(rdmx_rnr_blocked(&peer));
}

/*
 * A long send's post of 950 payload bytes (two pieces) in segments of
 * 100 at offset 1000, refused by the device with len bytes before its
 * first refused packet.
 */
static uint8_t seg_buf[950];

static struct rdmx_pke *segs_new(void)
{
	struct rdmx_pke *pke = pke_new();
	struct iovec iov[2] = { { seg_buf, 400 }, { seg_buf + 400, 550 } };

	rdmx_wire_data_encode(&pke->hdr.data, 7, 3, 1000);
	rdmx_tx_pke_iov(pke, sizeof(pke->hdr.data), iov, 2, 0, sizeof(seg_buf));
	pke->seg_len = 100;
	pke->off_at = offsetof(struct rdmx_wire_data, offset);
	return pke;
}

Test(rnr, a_post_refused_part_way_goes_again_from_its_first_refused_packet)
{
	struct rdmx_pke *pke = segs_new();

	rdmx_tx_pke_skip(pke, 300);
	rdmx_rnr_refused(&ep, &peer, pke);
	rdmx_rnr_progress(&ep);
	cr_assert_eq(posted_cnt, 1);
	cr_assert_eq(posted[0], (uintptr_t) pke);
	cr_assert_eq(segs_off, 1300, "the header's offset is %lu", (unsigned long) segs_off);
	cr_assert_eq(segs_len, 650);
	cr_assert_eq(segs_seg, 100);
	cr_assert_eq(segs_payload[0].iov_base, seg_buf + 300);
	cr_assert_eq(segs_payload[0].iov_len, 100);
	cr_assert_eq(segs_payload[1].iov_base, seg_buf + 400);
}

Test(rnr, a_post_is_cut_only_at_a_packet_it_holds)
{
	struct rdmx_pke *pke = segs_new();

	rdmx_tx_pke_skip(pke, 250);
	rdmx_tx_pke_skip(pke, 950);
	rdmx_tx_pke_skip(pke, 0);
	cr_assert_eq(rdmx_iov_len(&pke->iov[1], pke->iov_cnt - 1), 950);
	cr_assert_eq(le64toh(pke->hdr.data.offset), 1000);
	cr_assert_eq(pke->seg_len, 100);
	/* The last packet left: it goes alone. */
	rdmx_tx_pke_skip(pke, 900);
	cr_assert_eq(rdmx_iov_len(&pke->iov[1], pke->iov_cnt - 1), 50);
	cr_assert_eq(le64toh(pke->hdr.data.offset), 1900);
	cr_assert_eq(pke->seg_len, 0);
	rdmx_rnr_refused(&ep, &peer, pke);
	rdmx_rnr_progress(&ep);
	cr_assert_eq(posted_cnt, 1);
	cr_assert_eq(le64toh(((struct rdmx_wire_data *) &posted_hdr[0])->offset), 1900,
		     "sent by post_send, with its own offset");
}

/*
 * A refusal that comes after the session's reset flushed the queue: the
 * send is over (sent again, the packet would reach the next session).
 */
Test(rnr, a_refusal_after_its_session_ended_is_not_sent_again)
{
	struct fi_cq_err_entry err = { 0 };
	struct rdmx_pke *pke = pke_new();

	pke->txe->orphan = true;
	rdmx_rnr_refused(&ep, &peer, pke);
	rdmx_rnr_progress(&ep);
	cr_assert_eq(posted_cnt, 0);
	cr_assert_not(rdmx_rnr_blocked(&peer));
	cr_assert_eq(fi_cq_readerr(t.cq, &err, 0), 1);
	cr_assert_eq(err.err, FI_ENORX);
	cr_assert_eq(ep.txe_pool.in_use, 0);
}
