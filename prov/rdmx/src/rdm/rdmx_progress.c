/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: endpoint progress. Polls the device completion queue, completes
 * sent packets, and dispatches each received packet by type after the
 * codec validated it: message packets (EAGER, MEDIUM, RTS) go through
 * their peer's ordering, CTS and DATA to the long protocol. Malformed
 * packets are counted and the buffer goes straight back to the device.
 */
#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_conn.h"
#include "rdmx_dack.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_rx.h"
#include "rdmx_tx.h"
#include "rdmx_wire.h"

#define RDMX_PROGRESS_BATCH	RDMX_RX_BATCH
/* Polls per call at most, so a flood cannot hold the caller forever. */
#define RDMX_PROGRESS_ROUNDS	4

/*
 * The peer of a packet's sender, made at its first packet (which also
 * tells the device it is a known peer, a handle it may not evict): from
 * the AV, else as an anonymous peer. NULL only when no anonymous peer
 * can be made (rdmx_peer_anon).
 */
static struct rdmx_peer *rdmx_progress_peer(struct rdmx_ep *ep,
					    const struct rdmx_dev_cqe *cqe)
{
	struct rdmx_peer *peer = cqe->src_ah ? cqe->src_ah->context : NULL;
	const void *src;
	fi_addr_t addr;

	if (peer && peer->addr != FI_ADDR_NOTAVAIL)
		return peer;
	/* A packet by shm names no address: its peer's lane has it. */
	src = cqe->src_addr ? cqe->src_addr : peer ? peer->lane.nic_addr : NULL;
	if (!src)
		return ep->av_only ? NULL : peer;
	/* Unknown, or outside the AV: it may have been inserted since. */
	addr = rdmx_addrs_reverse(ep->addrs, src);
	if (addr != FI_ADDR_NOTAVAIL)
		return rdmx_peer_get(ep, addr, &peer) ? NULL : peer;
	if (ep->av_only)
		return NULL;
	return peer ? peer : rdmx_peer_anon(ep, src);
}

int rdmx_ep_wait_arm(struct rdmx_ep *ep, uint64_t *due_p)
{
	uint64_t due;

	if (!ep->enabled)
		return 0;
	if (ep->ctrl_short)
		return -FI_EAGAIN;
	/*
	 * Progress reads the clock when something came or a coarse tick
	 * passed: a timer due by the true clock runs at the next progress,
	 * which must see that clock rather than sleep for nothing.
	 */
	due = RDMX_MIN(rdmx_conn_due(ep), rdmx_rnr_due(ep));
	if (due <= rdmx_clock_ns()) {
		/*
		 * Once per timer: one that a progress at the true clock left
		 * due is polled a tick later rather than spun on.
		 */
		if (due != ep->due_retried) {
			ep->due_retried = due;
			ep->now = rdmx_clock_ns();
			return -FI_EAGAIN;
		}
		due = rdmx_clock_ns() + RDMX_DEV_WAIT_TICK_NS;
	}
	*due_p = RDMX_MIN(*due_p, due);
	return rdmx_lanes_wait_arm(&ep->lanes, due_p);
}

bool rdmx_ep_admit(void *ctx, struct rdmx_ah *src, const void *buf, size_t len)
{
	struct rdmx_ep *ep = ctx;
	struct rdmx_pkt pkt;

	/* Malformed: taken, then dropped and counted by the codec's caller. */
	if (rdmx_wire_decode(buf, len, &pkt))
		return true;
	return rdmx_order_admit(ep, src->context, &pkt);
}

/* Handles a valid packet; true when it keeps the buffer rx_buf. */
static bool rdmx_progress_pkt(struct rdmx_ep *ep, const struct rdmx_pkt *pkt,
			      struct rdmx_peer *peer, size_t rx_buf)
{
	if (peer) {
		rdmx_conn_heard(ep, peer);
		rdmx_peer_heard(ep, peer);
		if (pkt->type == RDMX_PKT_HS) {
			rdmx_conn_recv(ep, peer, rdmx_rxbufs_at(&ep->rxb, rx_buf),
				       RDMX_WIRE_HS_BASE_SIZE + pkt->payload_len);
			return false;
		}
		/* A packet of a session over (the peer's or ours). */
		if (!rdmx_conn_current(ep, peer)) {
			ep->stats.rx_stale++;
			return false;
		}
		switch (pkt->type) {
		case RDMX_PKT_CTS:
			rdmx_long_cts(ep, peer, pkt);
			return false;
		case RDMX_PKT_DATA:
			rdmx_long_data(ep, peer, pkt);
			return false;
		case RDMX_PKT_DACK:
			rdmx_dack_recv(ep, peer, pkt);
			return false;
		default:
			return rdmx_order_recv(ep, peer, pkt, rx_buf);
		}
	}
	/*
	 * Past the bound of anonymous peers a sender has no peer to order
	 * its messages by or to answer: only its eager messages are taken,
	 * as they come.
	 */
	if (pkt->type == RDMX_PKT_EAGER)
		return rdmx_eager_start(ep, NULL, pkt, FI_ADDR_NOTAVAIL, rx_buf);
	ep->stats.rx_no_peer++;
	RDMX_WARN_WIRE(FI_LOG_EP_DATA, "packet type %d from a sender outside the AV dropped\n",
		       pkt->type);
	return false;
}

/*
 * Decodes a received packet. One the device left in its memory
 * (cqe->data) is made whole in the posted buffer first, as the handlers
 * that keep a packet keep that buffer, unless it is DATA: never kept, it
 * is decoded from the prefix in the buffer and its payload read in
 * place, one copy less for the bulk of a long message.
 */
_Static_assert(sizeof(struct rdmx_wire_data) <= RDMX_DEV_RX_PREFIX,
	       "a DATA header is in the prefix a device copies");

static int rdmx_progress_decode(struct rdmx_ep *ep, const struct rdmx_dev_cqe *cqe,
				struct rdmx_pkt *pkt)
{
	uint8_t *buf = rdmx_rxbufs_at(&ep->rxb, cqe->wr_id);
	const struct rdmx_wire_base *base = (const void *) buf;
	bool in_place;
	int ret;

	if (!cqe->data || cqe->len <= RDMX_DEV_RX_PREFIX)
		return rdmx_wire_decode(buf, cqe->len, pkt);
	in_place = base->type == RDMX_PKT_DATA;
	if (!in_place)
		memcpy(buf + RDMX_DEV_RX_PREFIX, cqe->data + RDMX_DEV_RX_PREFIX,
		       cqe->len - RDMX_DEV_RX_PREFIX);
	ret = rdmx_wire_decode(buf, cqe->len, pkt);
	if (!ret && in_place)
		pkt->payload = cqe->data + (pkt->payload - buf);
	return ret;
}

static void rdmx_progress_recv(struct rdmx_ep *ep, const struct rdmx_dev_cqe *cqe)
{
	struct rdmx_peer *peer;
	struct rdmx_pkt pkt;

	if (cqe->status == RDMX_DEV_OK) {
		if (rdmx_progress_decode(ep, cqe, &pkt)) {
			ep->stats.rx_malformed++;
			RDMX_DBG(FI_LOG_EP_DATA, "malformed packet of %u bytes\n",
				 cqe->len);
		} else if (!(peer = rdmx_progress_peer(ep, cqe)) && ep->av_only) {
			/* A connected endpoint hears its AV only (rdmx_cm.h). */
			ep->stats.rx_no_peer++;
		} else if (rdmx_progress_pkt(ep, &pkt, peer, cqe->wr_id)) {
			return;
		}
	}
	rdmx_rxbufs_repost(&ep->rxb, &ep->lanes, cqe->wr_id);
}

/*
 * What a round ends with: reclaiming peers, owed DACKs, RNR resends,
 * handshake timers, packets and segments that wait for the device. Most
 * rounds have none of it to do, and an application spinning on its CQ
 * pays every empty round: a look at each one's list or deadline spares
 * the calls.
 */
static void rdmx_progress_chores(struct rdmx_ep *ep)
{
	if (ep->ctrl_short)
		rdmx_peer_reclaim(ep);
	if (!rdmx_dlist_empty(&ep->dack_peers))
		rdmx_dack_flush(ep);
	if (!rdmx_dlist_empty(&ep->retry_peers))
		rdmx_rnr_progress(ep);
	if (ep->now >= ep->conn_next)
		rdmx_conn_progress(ep);
	if (!rdmx_dlist_empty(&ep->ctrl_pending) || !rdmx_dlist_empty(&ep->tx_pending))
		rdmx_tx_progress(ep);
	if (ep->rma_stalled)
		rdmx_rma_progress(ep);
}

/*
 * A send's completion: a post of segments refused (RNR) goes again from
 * its first refused packet, those before it delivered.
 */
static void rdmx_progress_sent(struct rdmx_ep *ep, struct rdmx_pke *pke,
			       const struct rdmx_dev_cqe *cqe)
{
	if (cqe->status == RDMX_DEV_RNR && pke->seg_len)
		rdmx_tx_pke_skip(pke, cqe->len);
	rdmx_conn_tx_done(ep, pke, cqe->status);
}

/* Hands one completion of a device to the send or receive side. */
static void rdmx_progress_cqe(struct rdmx_ep *ep, const struct rdmx_dev_cqe *cqe)
{
	if (cqe->op == RDMX_DEV_OP_SEND)
		rdmx_progress_sent(ep, (struct rdmx_pke *) (uintptr_t) cqe->wr_id, cqe);
	else if (cqe->op == RDMX_DEV_OP_READ)
		rdmx_long_read_done(ep, (struct rdmx_rxm *) (uintptr_t) cqe->wr_id,
				    cqe->status);
	else if (cqe->op == RDMX_DEV_OP_GONE)
		rdmx_conn_gone(cqe->src_ah);
	else
		rdmx_progress_recv(ep, cqe);
}

void rdmx_ep_progress(struct rdmx_ep *ep)
{
	struct rdmx_dev_cqe cqe[RDMX_PROGRESS_BATCH];
	int n, rounds = 1;

	if (ep->dgram) {
		rdmx_ud_progress(ep);
		return;
	}
	if (!ep->enabled)
		return;
	/* Held sends leave by the NIC's poll: it is not passed by this time. */
	if (rdmx_send_holding(ep))
		rdmx_lanes_poll_nic_next(&ep->lanes);
	ep->tx_run = 0;
	ep->tx_more = false;
	n = rdmx_lanes_poll(&ep->lanes, cqe, RDMX_PROGRESS_BATCH);
	if (!n) {
		/* The timers below may be late by a coarse tick when nothing came. */
		if (rdmx_clock_ticked(&ep->tick))
			ep->now = rdmx_clock_ns();
	} else {
		ep->now = rdmx_clock_ns();
		for (;;) {
			for (int i = 0; i < n; i++)
				rdmx_progress_cqe(ep, &cqe[i]);
			/* A full poll may leave more; a flood cannot hold the caller. */
			if (n < RDMX_PROGRESS_BATCH || rounds++ == RDMX_PROGRESS_ROUNDS)
				break;
			n = rdmx_lanes_poll(&ep->lanes, cqe, RDMX_PROGRESS_BATCH);
		}
	}
	rdmx_progress_chores(ep);
}
