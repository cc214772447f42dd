/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of what a peer can make a receiver hold (rdmx_budget.c and
 * its sites: rdmx_cover.c, rdmx_rxm.c, rdmx_medium.c, rdmx_order.c,
 * rdmx_peer.c). The rdm layer is driven packet by packet, as progress
 * would after the codec; the device is a stub that records the receive
 * buffers given back and the packets sent (DACKs).
 */
#include "rdmx_test_ep.h"
#include "rdmx_budget.h"
#include "rdmx_cover.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_rx.h"
#include "rdmx_wire.h"

#define RX_BUFS		8
#define RX_BUF_SIZE	1024

/* The stub device: counts buffers given back, keeps the last DACK sent. */
static size_t reposted;
static struct rdmx_wire_dack last_dack;
static size_t dacks;

static bool send_refused;	/* post_send says -FI_EAGAIN */

static int stub_post_send(struct rdmx_dev *dev, struct rdmx_ah *ah,
			  const struct iovec *iov, size_t iov_cnt,
			  uint64_t wr_id, unsigned flags)
{
	(void) dev; (void) ah; (void) iov_cnt; (void) wr_id; (void) flags;
	if (send_refused)
		return -FI_EAGAIN;
	memcpy(&last_dack, iov[0].iov_base, sizeof(last_dack));
	dacks++;
	return 0;
}

static int stub_post_recv(struct rdmx_dev *dev, void *buf, size_t len, uint64_t wr_id)
{
	(void) dev; (void) buf; (void) len; (void) wr_id;
	reposted++;
	return 0;
}

/* Handles: a new one per call, as for a new address each time. */
static struct rdmx_ah *last_destroyed;

static int stub_ah_create(struct rdmx_dev *dev, const void *canon, struct rdmx_ah **ah_p)
{
	(void) dev; (void) canon;
	*ah_p = calloc(1, sizeof(**ah_p));
	return *ah_p ? 0 : -FI_ENOMEM;
}

static void stub_ah_destroy(struct rdmx_dev *dev, struct rdmx_ah *ah)
{
	(void) dev;
	last_destroyed = ah;
	free(ah);
}

static struct rdmx_ah *last_reset;

static void stub_ah_reset(struct rdmx_dev *dev, struct rdmx_ah *ah)
{
	(void) dev;
	last_reset = ah;
}

static const struct rdmx_dev_ops stub_ops = {
	.post_send = stub_post_send,
	.post_recv = stub_post_recv,
	.ah_create = stub_ah_create,
	.ah_destroy = stub_ah_destroy,
	.ah_reset = stub_ah_reset,
};

static struct rdmx_test_ep t;
static struct rdmx_dev dev = { .ops = &stub_ops };
static struct rdmx_ah ah;
static struct rdmx_ep ep;
static struct rdmx_peer peer;

/* The endpoint's receive side as rdmx_ep_open builds it, budget limit bytes. */
static void ep_construct(size_t limit)
{
	rdmx_test_ep_open(&t, &ep, &dev);
	ep.enabled = true;
	ep.caps = FI_RECV | FI_TAGGED | FI_MSG;
	rdmx_budget_construct(&ep.budget, limit);
	cr_assert_eq(rdmx_pool_construct(&ep.rxe_pool, sizeof(struct rdmx_rxe), 16), 0);
	cr_assert_eq(rdmx_pool_construct(&ep.pke_pool, sizeof(struct rdmx_pke), 16), 0);
	cr_assert_eq(rdmx_rxbufs_alloc(&ep.rxb, RX_BUF_SIZE, 0, RX_BUFS), 0);
	ep.held = calloc(RX_BUFS, sizeof(*ep.held));
	cr_assert(ep.held);
	rdmx_order_construct(&ep);
	memset(&peer, 0, sizeof(peer));
	rdmx_lane_init(&peer.lane, &ep.lanes, &ah, "");
	peer.addr = 0;
	peer.ep = &ep;
	peer.hs.peer_features = RDMX_HS_FEAT_DELIVERY_ACK;
	rdmx_dlist_init(&peer.ooo);
	rdmx_dlist_init(&peer.rx_msgs);
	rdmx_dlist_init(&peer.dack_link);
	rdmx_rnr_peer_construct(&peer);
	reposted = 0;
	dacks = 0;
	send_refused = false;
	last_reset = NULL;
}

static void setup(void)
{
	ep_construct(1 << 20);
}

static void teardown(void)
{
	rdmx_order_drain(&peer);
	rdmx_peer_destroy_all(&ep, FI_ECANCELED);
	rdmx_recv_drain(&ep);
	cr_assert_eq(rdmx_budget_used(&ep.budget), 0, "%zu bytes still charged",
		     rdmx_budget_used(&ep.budget));
	rdmx_rxbufs_free(&ep.rxb);
	free(ep.held);
	rdmx_pool_destruct(&ep.rxe_pool);
	rdmx_pool_destruct(&ep.pke_pool);
	rdmx_test_ep_close(&t);
}

TestSuite(budget, .init = setup, .fini = teardown);

/* Posts a tagged receive of len bytes into buf for tag. */
static void post_recv(void *buf, size_t len, uint64_t tag)
{
	struct iovec iov = { buf, len };
	struct rdmx_recv_req req = {
		.iov = &iov, .iov_cnt = 1, .src = FI_ADDR_UNSPEC, .tag = tag,
		.context = buf, .flags = FI_TAGGED | FI_COMPLETION,
	};

	cr_assert_eq(rdmx_recv(&ep, &req), 0);
}

/* A MEDIUM segment of message msg_id (msg_len bytes), [off, off + len). */
static struct rdmx_pkt medium(uint32_t msg_id, size_t msg_len, size_t off, size_t len,
			      const uint8_t *bytes)
{
	return (struct rdmx_pkt) {
		.type = RDMX_PKT_MEDIUM, .flags = RDMX_PKT_TAGGED | RDMX_PKT_DACK_REQ,
		.msg_id = msg_id, .tx_id = 40 + msg_id, .tag = 7, .msg_len = msg_len,
		.offset = off, .payload = bytes + off, .payload_len = len,
	};
}

/* An EAGER packet of message msg_id, len bytes of msg_id, in receive buffer rx_buf. */
static struct rdmx_pkt eager(uint32_t msg_id, size_t len, size_t rx_buf)
{
	uint8_t *buf = rdmx_rxbufs_at(&ep.rxb, rx_buf);

	memset(buf, (int) msg_id, len);
	return (struct rdmx_pkt) {
		.type = RDMX_PKT_EAGER, .flags = RDMX_PKT_TAGGED, .msg_id = msg_id,
		.tag = 7, .msg_len = len, .payload = buf, .payload_len = len,
	};
}

Test(budget, cover_counts_each_byte_once)
{
	struct rdmx_cover cover;
	size_t added;

	rdmx_cover_construct(&cover);
	cr_assert_eq(rdmx_cover_add(&cover, 100, 50, &ep.budget, &added), 0);
	cr_assert_eq(added, 50);
	cr_assert_eq(rdmx_cover_add(&cover, 100, 50, &ep.budget, &added), 0);
	cr_assert_eq(added, 0, "a repeat adds nothing");
	cr_assert_eq(rdmx_cover_add(&cover, 120, 60, &ep.budget, &added), 0);
	cr_assert_eq(added, 30, "only the new part of an overlap counts");
	cr_assert_eq(cover.prefix, 0, "bytes 0 to 100 are missing");
	cr_assert_eq(rdmx_cover_add(&cover, 0, 100, &ep.budget, &added), 0);
	cr_assert_eq(added, 100);
	cr_assert_eq(cover.prefix, 180);
	cr_assert_eq(cover.bytes, 180);
	cr_assert_eq(cover.cnt, 0);
	rdmx_cover_destruct(&cover, &ep.budget);
}

Test(budget, cover_tracks_many_holes_within_the_budget)
{
	struct rdmx_cover cover;
	size_t added;

	rdmx_cover_construct(&cover);
	/* Every other 10-byte segment: 20 holes, more than kept inline. */
	for (size_t i = 0; i < 20; i++)
		cr_assert_eq(rdmx_cover_add(&cover, 20 * i + 10, 10, &ep.budget, &added), 0);
	cr_assert_eq(cover.cnt, 20);
	cr_assert_gt(rdmx_budget_used(&ep.budget), 0, "the ranges are charged");
	for (size_t i = 0; i < 20; i++)
		cr_assert_eq(rdmx_cover_add(&cover, 20 * i, 10, &ep.budget, &added), 0);
	cr_assert_eq(cover.prefix, 400);
	cr_assert_eq(cover.cnt, 0);
	rdmx_cover_destruct(&cover, &ep.budget);
	cr_assert_eq(rdmx_budget_used(&ep.budget), 0);
}

Test(budget, cover_past_the_budget_records_nothing)
{
	struct rdmx_cover cover;
	size_t added;

	rdmx_budget_construct(&ep.budget, 0);
	rdmx_cover_construct(&cover);
	for (size_t i = 0; i < RDMX_COVER_INLINE; i++)
		cr_assert_eq(rdmx_cover_add(&cover, 20 * i + 10, 10, &ep.budget, &added), 0);
	cr_assert_eq(rdmx_cover_add(&cover, 200, 10, &ep.budget, &added), -FI_ENOMEM);
	cr_assert_eq(added, 0);
	cr_assert_eq(cover.bytes, 40);
	rdmx_cover_destruct(&cover, &ep.budget);
}

/* Random segments, fixed seed: the coverage agrees with a byte map. */
Test(budget, cover_agrees_with_a_byte_map)
{
	enum { LEN = 4096 };
	static bool seen[LEN];
	struct rdmx_cover cover;
	uint64_t rng = 42;
	size_t total = 0, prefix = 0;

	rdmx_budget_construct(&ep.budget, 1 << 20);
	rdmx_cover_construct(&cover);
	for (int n = 0; n < 2000; n++) {
		size_t off, len, added, fresh = 0;

		rng = rdmx_mix64(rng + 1);
		off = rng % LEN;
		len = 1 + (rng >> 20) % 64;
		len = RDMX_MIN(len, LEN - off);
		for (size_t i = off; i < off + len; i++) {
			fresh += !seen[i];
			seen[i] = true;
		}
		cr_assert_eq(rdmx_cover_add(&cover, off, len, &ep.budget, &added), 0);
		cr_assert_eq(added, fresh, "segment %d [%zu, %zu)", n, off, off + len);
		total += fresh;
		while (prefix < LEN && seen[prefix])
			prefix++;
		cr_assert_eq(cover.prefix, prefix, "segment %d", n);
		cr_assert_eq(cover.bytes, total);
	}
	rdmx_cover_destruct(&cover, &ep.budget);
}

/*
 * Three segments of 100 bytes: the first arrives twice and the last
 * never. By bytes counted the message would be whole; it is not.
 */
Test(budget, duplicate_segment_does_not_complete_a_message_early)
{
	uint8_t out[300], in[300] = { 0 };

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t) i;
	post_recv(in, sizeof(in), 7);
	for (int i = 0; i < 3; i++) {
		struct rdmx_pkt pkt = medium(0, 300, i == 2 ? 100 : 0, 100, out);

		cr_assert_not(rdmx_order_recv(&ep, &peer, &pkt, RDMX_RX_BUF_NONE));
	}
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 0, "200 distinct bytes of 300 arrived");
	cr_assert_eq(dacks, 0, "not delivered yet");
	{
		struct rdmx_pkt pkt = medium(0, 300, 200, 100, out);

		cr_assert_not(rdmx_order_recv(&ep, &peer, &pkt, RDMX_RX_BUF_NONE));
	}
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 1);
	cr_assert_eq(memcmp(in, out, sizeof(in)), 0);
	cr_assert_eq(dacks, 1);
	cr_assert_eq(le32toh(last_dack.status), 0);
}

/* The same, unexpected: the copy is whole only once every byte is in. */
Test(budget, duplicate_segment_does_not_complete_an_unexpected_message)
{
	uint8_t out[300], in[300] = { 0 };

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t) (3 * i);
	for (int i = 0; i < 3; i++) {
		struct rdmx_pkt pkt = medium(0, 300, i == 2 ? 100 : 0, 100, out);

		rdmx_order_recv(&ep, &peer, &pkt, RDMX_RX_BUF_NONE);
	}
	cr_assert_eq(dacks, 0, "the unexpected copy is not whole");
	post_recv(in, sizeof(in), 7);
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 0, "the receive waits for the last segment");
	{
		struct rdmx_pkt pkt = medium(0, 300, 200, 100, out);

		rdmx_order_recv(&ep, &peer, &pkt, RDMX_RX_BUF_NONE);
	}
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 1);
	cr_assert_eq(memcmp(in, out, sizeof(in)), 0);
}

/*
 * Messages 1 to 7 arrive before message 0, with room in the budget for
 * two copies: two are copied, the next ones stay in their receive buffer
 * (the device lacks them: it refuses packets once none is left) up to
 * half the buffers, and one past that is dropped. Nothing is allocated
 * past the budget, and message 0 releases the others in order.
 */
Test(budget, out_of_order_packets_beyond_the_budget_are_refused_not_stored)
{
	uint8_t in[8][100];
	struct rdmx_pkt pkt = eager(1, 100, 1);
	size_t slot;

	for (int i = 0; i < 8; i++)
		post_recv(in[i], sizeof(in[i]), 7);
	cr_assert_not(rdmx_order_recv(&ep, &peer, &pkt, 1), "copied: the buffer goes back");
	slot = rdmx_budget_used(&ep.budget);
	cr_assert_gt(slot, 100);
	/* Copies take the budget but its state share: room for two. */
	ep.budget.limit = (2 * slot * RDMX_BUDGET_STATE_SHARE + RDMX_BUDGET_STATE_SHARE - 2) /
			  (RDMX_BUDGET_STATE_SHARE - 1);
	pkt = eager(2, 100, 2);
	cr_assert_not(rdmx_order_recv(&ep, &peer, &pkt, 2));
	for (uint32_t id = 3; id <= 6; id++) {
		pkt = eager(id, 100, id);
		cr_assert(rdmx_order_recv(&ep, &peer, &pkt, id),
			  "message %u stays in its buffer", id);
	}
	pkt = eager(7, 100, 7);
	cr_assert_not(rdmx_order_recv(&ep, &peer, &pkt, 7));
	cr_assert_eq(ep.stats.rx_dropped, 1, "half the buffers are kept at most");
	cr_assert_eq(peer.ooo_kept, 4, "the peer's count of them too");
	cr_assert_eq(rdmx_budget_used(&ep.budget), 2 * slot);
	cr_assert_eq(rdmx_budget_peak(&ep.budget), 2 * slot, "never past the budget");
	cr_assert_eq(rdmx_budget_refusals(&ep.budget), 1);
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 0);

	pkt = eager(0, 100, 0);
	cr_assert_not(rdmx_order_recv(&ep, &peer, &pkt, 0));
	for (int i = 0; i < 7; i++) {
		struct fi_cq_tagged_entry e;

		cr_assert_eq(fi_cq_read(t.cq, &e, 1), 1);
		cr_assert_eq(e.op_context, in[i], "message %d matched in order", i);
		cr_assert_eq(in[i][99], i);
	}
	cr_assert_eq(rdmx_test_cq_drain(t.cq), 0, "message 7 was dropped");
	cr_assert_eq(reposted, 4, "the kept buffers went back to the device");
	cr_assert_eq(ep.ooo_kept, 0);
	cr_assert_eq(peer.ooo_kept, 0);
	cr_assert_eq(rdmx_budget_used(&ep.budget), 2 * slot,
		     "the two blocks are kept for reuse, still charged");
	rdmx_order_destruct(&ep);
	cr_assert_eq(rdmx_budget_used(&ep.budget), 0);
}

/*
 * A MEDIUM segment announces a 16 MiB message no receive takes, with a
 * budget of 1 MiB: no reassembly buffer is made, the sender's DACK says
 * FI_ENOMEM, and its later segments find no message.
 */
Test(budget, unexpected_medium_beyond_the_budget_is_refused)
{
	uint8_t bytes[200] = { 0 };
	struct rdmx_pkt pkt = medium(0, RDMX_MEDIUM_LIMIT, 0, 100, bytes);

	cr_assert_not(rdmx_order_recv(&ep, &peer, &pkt, RDMX_RX_BUF_NONE));
	cr_assert_eq(dacks, 1);
	cr_assert_eq(le32toh(last_dack.status), FI_ENOMEM);
	cr_assert_lt(rdmx_budget_peak(&ep.budget), 4096, "only the message's state was charged");
	cr_assert_eq(rdmx_budget_used(&ep.budget), 0);
	cr_assert_eq(rdmx_budget_refusals(&ep.budget), 1);
	cr_assert(rdmx_dlist_empty(&ep.tag_q.unexp), "nothing waits for a receive");
	pkt = medium(0, RDMX_MEDIUM_LIMIT, 100, 100, bytes);
	rdmx_order_recv(&ep, &peer, &pkt, RDMX_RX_BUF_NONE);
	cr_assert_eq(ep.stats.rx_stale, 1);
	cr_assert_eq(rdmx_budget_used(&ep.budget), 0);
}

/* The same message within the budget is taken. */
Test(budget, unexpected_medium_within_the_budget_is_taken)
{
	uint8_t bytes[200] = { 0 };
	struct rdmx_pkt pkt = medium(0, RDMX_MEDIUM_LIMIT, 0, 100, bytes);

	rdmx_budget_construct(&ep.budget, 2 * RDMX_MEDIUM_LIMIT);
	cr_assert_not(rdmx_order_recv(&ep, &peer, &pkt, RDMX_RX_BUF_NONE));
	cr_assert_eq(dacks, 0);
	cr_assert_gt(rdmx_budget_used(&ep.budget), RDMX_MEDIUM_LIMIT);
	cr_assert_not(rdmx_dlist_empty(&ep.tag_q.unexp));
}

/* Whether p is on the endpoint's list of anonymous peers. */
static bool anon_listed(const struct rdmx_peer *p)
{
	struct rdmx_dlist *it;

	rdmx_dlist_foreach(&ep.anon_lru, it) {
		if (it == &p->anon_link)
			return true;
	}
	return false;
}

/*
 * The table of anonymous peers is full. The oldest holds an unexpected
 * message, the second was heard from again: a newcomer takes the place of
 * the third, the least recently heard of those holding nothing.
 */
Test(budget, anonymous_peer_eviction_lets_a_newcomer_in)
{
	static struct rdmx_peer *anon[RDMX_PEER_ANON_MAX];
	struct rdmx_pkt pkt = eager(0, 10, 0);
	struct rdmx_ah *third_ah;
	struct rdmx_peer *newcomer;
	size_t used;

	rdmx_budget_construct(&ep.budget, 64 << 20);
	for (size_t i = 0; i < RDMX_PEER_ANON_MAX; i++) {
		anon[i] = rdmx_peer_anon(&ep, "x");
		cr_assert_not_null(anon[i], "peer %zu", i);
	}
	cr_assert_eq(rdmx_budget_used(&ep.budget),
		     RDMX_PEER_ANON_MAX * sizeof(struct rdmx_peer), "each is charged");
	cr_assert_not(rdmx_order_recv(&ep, anon[0], &pkt, RDMX_RX_BUF_NONE));
	cr_assert_not(rdmx_dlist_empty(&ep.tag_q.unexp), "the oldest holds a message");
	rdmx_peer_heard(&ep, anon[1]);
	third_ah = anon[2]->lane.nic_ah;
	used = rdmx_budget_used(&ep.budget);

	newcomer = rdmx_peer_anon(&ep, "y");
	cr_assert_not_null(newcomer, "a newcomer always finds room");
	cr_assert_eq(last_destroyed, third_ah, "the third peer was let go");
	cr_assert_eq(ep.anon_peers, RDMX_PEER_ANON_MAX);
	cr_assert_eq(rdmx_budget_used(&ep.budget), used);
	cr_assert(anon_listed(anon[0]) && anon_listed(anon[1]));
	cr_assert_eq(ep.anon_lru.prev, &newcomer->anon_link, "the newcomer is the most recent");
	cr_assert_eq(ep.anon_lru.next, &anon[0]->anon_link);
}

/* Past the budget, not the count: the same room is made. */
Test(budget, anonymous_peers_count_against_the_budget)
{
	struct rdmx_peer *a, *b, *c;
	struct rdmx_ah *a_ah, *b_ah;

	rdmx_budget_construct(&ep.budget, 2 * sizeof(struct rdmx_peer));
	a = rdmx_peer_anon(&ep, "a");
	b = rdmx_peer_anon(&ep, "b");
	cr_assert(a && b);
	a_ah = a->lane.nic_ah;
	b_ah = b->lane.nic_ah;
	cr_assert_eq(rdmx_budget_used(&ep.budget), 2 * sizeof(struct rdmx_peer));
	a->pending_cnt = 1;	/* a send waits for it: it stays */
	c = rdmx_peer_anon(&ep, "c");
	cr_assert_not_null(c);
	cr_assert_eq(last_destroyed, b_ah, "b held nothing");
	cr_assert(anon_listed(a) && anon_listed(c));
	cr_assert_eq(ep.anon_peers, 2);
	cr_assert_eq(rdmx_budget_peak(&ep.budget), 2 * sizeof(struct rdmx_peer));
	a->pending_cnt = 0;
	c->pending_cnt = 1;
	cr_assert_not_null(rdmx_peer_anon(&ep, "d"));
	cr_assert_eq(last_destroyed, a_ah, "a holds nothing now");
	cr_assert(anon_listed(c));
	c->pending_cnt = 0;
}

/* A control packet of ours to p (a handshake answer), posted or queued. */
static struct rdmx_pke *ctrl_pke(struct rdmx_peer *p, bool queued)
{
	struct rdmx_pke *pke = rdmx_pool_alloc(&ep.pke_pool);

	cr_assert_not_null(pke);
	rdmx_tx_pke_init(pke, NULL, p, true);
	pke->iov[0].iov_base = &pke->hdr;
	pke->iov[0].iov_len = sizeof(last_dack);
	pke->iov_cnt = 1;
	send_refused = queued;
	rdmx_tx_ctrl_post(&ep, pke);
	send_refused = false;
	cr_assert(pke->busy);
	return pke;
}

/*
 * A sender that never listens keeps our handshake answer in flight for
 * as long as the device retransmits it. That must not keep a newcomer
 * out: the peer goes, its queued packet with it, the one at the device
 * is flushed there and ends naming no peer. A peer with a CTS out (a
 * message of its own under way) stays.
 */
Test(budget, anonymous_peer_with_control_packets_in_flight_is_let_go)
{
	struct rdmx_peer *a, *b, *c;
	struct rdmx_pke *at_dev, *cts;
	struct rdmx_ah *b_ah;
	struct rdmx_rxm rxm = { 0 };

	rdmx_budget_construct(&ep.budget, 2 * sizeof(struct rdmx_peer));
	a = rdmx_peer_anon(&ep, "a");
	b = rdmx_peer_anon(&ep, "b");
	cr_assert(a && b);
	b_ah = b->lane.nic_ah;
	cts = ctrl_pke(a, false);
	cts->rxm = &rxm;
	at_dev = ctrl_pke(b, false);
	(void) ctrl_pke(b, true);
	cr_assert_eq(ep.pke_pool.in_use, 3);

	c = rdmx_peer_anon(&ep, "c");
	cr_assert_not_null(c, "the newcomer is let in at once");
	cr_assert_eq(last_destroyed, b_ah, "b held only control packets");
	cr_assert_eq(last_reset, b_ah, "the device ended its session with b");
	cr_assert(anon_listed(a), "a CTS out keeps a");
	cr_assert(rdmx_dlist_empty(&ep.ctrl_pending), "b's queued packet went with it");
	cr_assert_eq(ep.pke_pool.in_use, 2);
	cr_assert_null(at_dev->peer, "the packet at the device names no peer");
	cr_assert_eq(cts->peer, a);

	rdmx_tx_done(&ep, at_dev, RDMX_DEV_FLUSHED);
	cr_assert_eq(ep.pke_pool.in_use, 1, "its completion frees it");
	cts->rxm = NULL;
	rdmx_tx_done(&ep, cts, RDMX_DEV_OK);
	cr_assert_eq(ep.pke_pool.in_use, 0);
}

/*
 * Handshake packets found no pke twice: the two least recently heard
 * anonymous peers with handshake packets out go, and their packets come
 * back. One whose handshake is under way but holds no packet stays
 * (letting it go frees nothing), though heard before them; so does one
 * holding a message with a handshake packet out.
 */
Test(budget, a_shortage_of_packets_lets_anonymous_peers_holding_them_go)
{
	struct rdmx_peer *waiting, *holding, *a, *b, *c;
	struct rdmx_pkt pkt = eager(0, 10, 0);
	struct rdmx_ah *b_ah;

	waiting = rdmx_peer_anon(&ep, "w");
	holding = rdmx_peer_anon(&ep, "h");
	a = rdmx_peer_anon(&ep, "a");
	b = rdmx_peer_anon(&ep, "b");
	c = rdmx_peer_anon(&ep, "c");
	cr_assert(waiting && holding && a && b && c);
	waiting->hs.state = RDMX_HS_PROBING;
	holding->hs_out = a->hs_out = b->hs_out = c->hs_out = 1;
	cr_assert_not(rdmx_order_recv(&ep, holding, &pkt, RDMX_RX_BUF_NONE));
	ep.ctrl_short = 2;
	b_ah = b->lane.nic_ah;

	rdmx_peer_reclaim(&ep);
	cr_assert_eq(ep.ctrl_short, 0);
	cr_assert_eq(ep.anon_peers, 3);
	cr_assert(anon_listed(waiting) && anon_listed(holding) && anon_listed(c));
	cr_assert_eq(last_destroyed, b_ah, "a, then b went");
	waiting->hs.state = RDMX_HS_IDLE;
}

/*
 * An unexpected eager message is copied while the budget has room (and
 * FI_RDMX_UNEXP_MAX allows); past the budget it stays in its receive
 * buffer, which the device then lacks.
 */
Test(budget, unexpected_eager_past_the_budget_stays_in_its_buffer)
{
	struct rdmx_pkt pkt = eager(0, 100, 0);
	size_t copy;

	cr_assert_not(rdmx_order_recv(&ep, &peer, &pkt, 0), "copied");
	copy = rdmx_budget_used(&ep.budget);
	cr_assert_geq(copy, 100);
	ep.budget.limit = copy;
	pkt = eager(1, 100, 1);
	cr_assert(rdmx_order_recv(&ep, &peer, &pkt, 1), "kept in its buffer");
	cr_assert_eq(rdmx_budget_used(&ep.budget), copy);
	cr_assert_eq(rdmx_budget_refusals(&ep.budget), 0, "no data was refused");
}

/* A second burst of reordering reuses the blocks of the first. */
Test(budget, held_packets_reuse_their_blocks)
{
	size_t peak = 0;

	for (int round = 0; round < 2; round++) {
		uint32_t base = (uint32_t) round * 4;

		for (uint32_t id = base + 1; id <= base + 3; id++) {
			struct rdmx_pkt pkt = eager(id, 100, id - base);

			cr_assert_not(rdmx_order_recv(&ep, &peer, &pkt, id - base));
		}
		{
			struct rdmx_pkt pkt = eager(base, 100, 0);

			cr_assert_not(rdmx_order_recv(&ep, &peer, &pkt, RDMX_RX_BUF_NONE));
		}
		/* The four messages wait unexpected: a receive takes each. */
		for (int i = 0; i < 4; i++) {
			uint8_t in[100];

			post_recv(in, sizeof(in), 7);
		}
		cr_assert_eq(rdmx_test_cq_drain(t.cq), 4);
		if (round == 0)
			peak = rdmx_budget_peak(&ep.budget);
	}
	cr_assert_eq(rdmx_budget_peak(&ep.budget), peak, "no new block in the second burst");
	cr_assert_eq(ep.ooo_small.spare, 3);
}

/*
 * The device asks before it acknowledges (rdmx_order_admit): with the
 * budget spent, a later message's packet and a medium message that would
 * be copied whole are refused, so the sender sends them again; the next
 * eager message, a segment of a message under way and a medium message
 * with its receive posted are taken. Refusing before the acknowledgement
 * is what keeps a packet from being dropped after it.
 */
Test(budget, device_refuses_what_only_the_spent_budget_could_keep)
{
	uint8_t in[64], out[4096] = { 0 };
	struct rdmx_pkt later = eager(3, 100, 1), next = eager(0, 100, 2);
	struct rdmx_pkt big = medium(0, sizeof(out), 0, 1000, out);
	struct rdmx_pkt more = medium((uint32_t) -1, sizeof(out), 1000, 1000, out);

	cr_assert(rdmx_order_admit(&ep, &peer, &later), "room: a later message is taken");
	cr_assert(rdmx_order_admit(&ep, &peer, &big));
	ep.budget.limit = 0;
	ep.ooo_kept = ep.rxb.cnt / 2;
	cr_assert_not(rdmx_order_admit(&ep, &peer, &later));
	cr_assert_not(rdmx_order_admit(&ep, &peer, &big), "no receive: it would be copied");
	cr_assert(rdmx_order_admit(&ep, &peer, &next), "an eager one waits in its buffer");
	cr_assert(rdmx_order_admit(&ep, &peer, &more), "a message under way has its room");
	cr_assert(rdmx_order_admit(&ep, NULL, &later), "a sender's first packet makes its peer");
	ep.budget.limit = 64 * 1024 * 1024;
	ep.budget.used = ep.budget.limit - ep.budget.limit / RDMX_BUDGET_STATE_SHARE;
	cr_assert_not(rdmx_order_admit(&ep, &peer, &big), "copies leave the state share");
	post_recv(in, sizeof(in), 7);
	cr_assert(rdmx_order_admit(&ep, &peer, &big), "its receive waits: state only");
	ep.budget.used = 0;
	ep.ooo_kept = 0;
}

/*
 * With the budget spent, a peer that keeps a quarter of the buffers order
 * may keep (a hostile one holding packets of messages that never come)
 * is refused another, and another peer is still admitted one, until
 * order keeps all it may.
 */
Test(budget, one_peer_keeps_at_most_its_share_of_the_buffers)
{
	struct rdmx_peer other = { .rx_msg_id = 0 };
	struct rdmx_pkt later = eager(3, 100, 1);
	size_t cnt = ep.rxb.cnt, share;

	/* Admission reads the count only; enough buffers to share out. */
	ep.rxb.cnt = 512;
	share = ep.rxb.cnt / 2 / 4;
	ep.budget.limit = 0;
	peer.ooo_kept = (uint32_t) share - 1;
	ep.ooo_kept = share - 1;
	cr_assert(rdmx_order_admit(&ep, &peer, &later), "below its share");
	peer.ooo_kept++;
	ep.ooo_kept++;
	cr_assert_not(rdmx_order_admit(&ep, &peer, &later), "at its share");
	cr_assert(rdmx_order_admit(&ep, &other, &later), "another peer keeps its own");
	ep.ooo_kept = ep.rxb.cnt / 2 - RDMX_RX_BATCH;
	cr_assert_not(rdmx_order_admit(&ep, &other, &later), "order keeps half at most");
	ep.rxb.cnt = cnt;
	ep.budget.limit = 1 << 20;
	peer.ooo_kept = 0;
	ep.ooo_kept = 0;
}
