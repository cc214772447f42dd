/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: sends. Picks the protocol by size (eager, medium, long; see
 * rdmx_tx.h), cuts the message into packets, hands them to the device,
 * and completes the send when its last packet completed.
 */
#include <assert.h>
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_conn.h"
#include "rdmx_comp.h"
#include "rdmx_dack.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_rx.h"
#include "rdmx_tx.h"

/* The completion entry of a send. */
static struct rdmx_cq_entry rdmx_send_entry(const struct rdmx_txe *txe)
{
	return (struct rdmx_cq_entry) {
		.op_context = txe->context,
		.flags = txe->cq_flags,
		.len = txe->len,
		.tag = txe->tag,
		.src = FI_ADDR_NOTAVAIL,
	};
}

/* Ends the exposure of a long send's buffers to reads: they go back. */
static void rdmx_tx_unexpose(struct rdmx_txe *txe)
{
	if (txe->exposed)
		txe->read_dev->ops->read_revoke(txe->read_dev, &txe->rkey);
	txe->exposed = false;
}

static void rdmx_send_txe_release(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	if (txe->level == RDMX_TX_DELIVERY_AWAITED)
		txe->peer->dack_awaited--;
	rdmx_tx_unexpose(txe);
	if (txe->pending)
		rdmx_dlist_remove(&txe->link);
	txe->in_use = false;
	rdmx_pool_release(&ep->txe_pool, txe);
}

void rdmx_tx_pke_init(struct rdmx_pke *pke, struct rdmx_txe *txe,
			     struct rdmx_peer *peer, bool pooled)
{
	pke->txe = txe;
	pke->rxm = NULL;
	pke->peer = peer;
	pke->rnr = 0;
	pke->pooled = pooled;
	pke->busy = false;
	pke->heap = false;
}

void rdmx_tx_pke_iov(struct rdmx_pke *pke, size_t hdr_len, const struct iovec *iov,
		     size_t iov_cnt, size_t off, size_t len)
{
	pke->iov[0].iov_base = &pke->hdr;
	pke->iov[0].iov_len = hdr_len;
	pke->iov_cnt = 1 + rdmx_iov_slice(&pke->iov[1], iov, iov_cnt, off, len);
}

/* A send that awaits a DACK names itself in its message header. */
static void rdmx_tx_name(const struct rdmx_txe *txe, struct rdmx_wire_eager *msg)
{
	if (txe->pkt_flags & RDMX_PKT_DACK_REQ)
		rdmx_wire_msg_set_id(msg, (uint32_t) rdmx_pool_index(&txe->peer->ep->txe_pool,
								     txe));
}

/* Fills pke with the next segment of a medium or long send. */
static void rdmx_tx_segment(struct rdmx_txe *txe, struct rdmx_pke *pke)
{
	size_t off = txe->next;
	size_t len = RDMX_MIN(txe->seg_size, txe->limit - off);

	if (txe->proto == RDMX_PROTO_MEDIUM) {
		rdmx_wire_medium_encode(&pke->hdr.medium, txe->pkt_flags, txe->msg_id,
					txe->tag, txe->data, txe->len, off);
		rdmx_tx_name(txe, &pke->hdr.medium.msg);
		rdmx_tx_pke_iov(pke, sizeof(pke->hdr.medium), txe->iov, txe->iov_cnt, off, len);
	} else {
		rdmx_wire_data_encode(&pke->hdr.data, txe->msg_id, txe->rx_id, off);
		rdmx_tx_pke_iov(pke, sizeof(pke->hdr.data), txe->iov, txe->iov_cnt, off, len);
	}
	txe->next += len;
}

/*
 * Whether a long send offers its buffers for reading: the device can
 * expose them, the message is long enough to be worth a read, and, when its reads reach only this host, the peer is
 * shown on this host by its handshake and by where it receives (no
 * process address goes on the wire to any other). The exposure is bound
 * to the peer and this session.
 */
static bool rdmx_tx_read_offer(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	struct rdmx_dev *dev = rdmx_lane_read_dev(&ep->lanes, &txe->peer->lane);
	const struct rdmx_hs *hs = &txe->peer->hs;
	bool here;

	if (!g_rdmx_params.long_read || !(dev->caps.flags & RDMX_DEV_CAP_RDMA_READ) ||
	    txe->len < dev->caps.read_min)
		return false;
	here = rdmx_peer_on_host(ep, txe->peer);
	if (dev->caps.read_host && !here)
		return false;
	txe->rkey.peer = (struct rdmx_dev_read_peer) {
		.host = here ? hs->peer_host : 0,
		.session = rdmx_hs_bind(hs, true),
		.pid = hs->peer_pid,
	};
	txe->read_dev = dev;
	return !dev->ops->read_expose(dev, txe->iov, txe->iov_cnt, &txe->rkey);
}

/*
 * The RTS of a long send. When the buffers are offered for reading
 * (long-read), the RTS carries the key and where they are, and the
 * receiver may read the message itself instead of granting credit.
 */
static void rdmx_tx_rts(struct rdmx_ep *ep, struct rdmx_txe *txe, struct rdmx_pke *pke)
{
	uint32_t flags = txe->pkt_flags;
	struct iovec read = { &txe->read, sizeof(txe->read) };
	bool offer = rdmx_tx_read_offer(ep, txe);

	txe->exposed = offer;
	if (offer) {
		flags |= RDMX_PKT_READ;
		rdmx_wire_read_encode(&txe->read, txe->rkey.wire, txe->iov, txe->iov_cnt);
	}
	rdmx_wire_rts_encode(&pke->hdr.rts, flags, txe->msg_id,
			     (uint32_t) rdmx_pool_index(&ep->txe_pool, txe),
			     txe->tag, txe->data, txe->len);
	rdmx_tx_pke_iov(pke, sizeof(pke->hdr.rts), &read, offer, 0,
			offer ? sizeof(txe->read) : 0);
}

/* Fills the first packet of a send: its eager packet, first segment or RTS. */
static void rdmx_tx_first(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	struct rdmx_pke *pke = &txe->pke;

	switch (txe->proto) {
	case RDMX_PROTO_EAGER:
		rdmx_wire_eager_encode(&pke->hdr.eager, txe->pkt_flags, txe->msg_id,
				       txe->tag, txe->data);
		rdmx_tx_name(txe, &pke->hdr.eager);
		rdmx_tx_pke_iov(pke, sizeof(pke->hdr.eager), txe->iov, txe->iov_cnt, 0, txe->len);
		txe->next = txe->len;
		break;
	case RDMX_PROTO_MEDIUM:
		rdmx_tx_segment(txe, pke);
		break;
	case RDMX_PROTO_LONG:
		rdmx_tx_rts(ep, txe, pke);
		break;
	}
}

int rdmx_tx_post(struct rdmx_pke *pke, bool more)
{
	/* A DACK is awaited too: a send at its peer waits for it. */
	bool awaited = pke->txe ? pke->txe->level != RDMX_TX_INJECT :
		       pke->hdr.dack.base.type == RDMX_PKT_DACK;
	unsigned flags = (more ? RDMX_DEV_SEND_MORE : 0) |
			 (awaited ? RDMX_DEV_SEND_AWAITED : 0);
	int ret = rdmx_lane_send(&pke->peer->lane, pke->iov, pke->iov_cnt,
				 (uintptr_t) pke, flags);

	if (!ret)
		pke->busy = true;
	return ret;
}

static void rdmx_tx_queue(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	if (!txe->pending) {
		txe->pending = true;
		rdmx_dlist_insert_tail(&ep->tx_pending, &txe->link);
	}
}

void rdmx_tx_pump(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	while (!txe->err && txe->cleared && txe->next < txe->limit) {
		struct rdmx_pke *pke = rdmx_rnr_blocked(txe->peer) ? NULL :
				       rdmx_pool_alloc(&ep->pke_pool);
		size_t next = txe->next;

		if (!pke) {
			rdmx_tx_queue(ep, txe);
			return;
		}
		rdmx_tx_pke_init(pke, txe, txe->peer, true);
		rdmx_tx_segment(txe, pke);
		if (rdmx_tx_post(pke, txe->next < txe->limit)) {
			txe->next = next;
			rdmx_pool_release(&ep->pke_pool, pke);
			rdmx_tx_queue(ep, txe);
			return;
		}
		txe->pkts_out++;
	}
	if (txe->pending) {
		txe->pending = false;
		rdmx_dlist_remove(&txe->link);
	}
}

/*
 * A send that failed after its first packet left: the receiver may have
 * started the message or be waiting for it to keep the order, so it is
 * told to skip it (a VOID packet in place of the message, resent on RNR
 * whatever the resource management). The send entry carries it and is
 * freed when it completed.
 */
static void rdmx_tx_void(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	struct rdmx_pke *pke = &txe->pke;

	rdmx_tx_pke_init(pke, txe, txe->peer, false);
	rdmx_wire_eager_encode(&pke->hdr.eager, RDMX_PKT_VOID, txe->msg_id, 0, 0);
	rdmx_tx_pke_iov(pke, sizeof(pke->hdr.eager), NULL, 0, 0, 0);
	txe->pkts_out = 1;
	txe->proto = RDMX_PROTO_EAGER;
	txe->cleared = true;
	txe->next = txe->limit = txe->end = 0;
	rdmx_tx_ctrl_post(ep, pke);
}

/* Tells the application a send failed (once: why is cleared). */
static void rdmx_tx_report(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	struct rdmx_cq_entry entry;

	ep->stats.tx_errors++;
	RDMX_WARN(FI_LOG_EP_DATA, "send to fi_addr %lu failed: %s\n",
		  (unsigned long) txe->addr, txe->why);
	/* A send that completed at injection has no entry left to fail. */
	if (txe->level != RDMX_TX_INJECT) {
		entry = rdmx_send_entry(txe);
		rdmx_comp_err(ep->tx_comp, &entry, txe->err, 0,
			      "rdmx: send to fi_addr %lu failed: %s",
			      (unsigned long) txe->addr, txe->why);
	}
	txe->why = NULL;
}

void rdmx_tx_abandon(struct rdmx_ep *ep, struct rdmx_txe *txe, int err, const char *why)
{
	txe->err = err;
	txe->why = why;
	rdmx_tx_report(ep, txe);
	rdmx_send_txe_release(ep, txe);
}

void rdmx_tx_advance(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	struct rdmx_cq_entry entry;

	if (!txe->err && txe->next < txe->limit)
		rdmx_tx_pump(ep, txe);
	if (txe->pkts_out || (!txe->err && (!txe->cleared || txe->next < txe->end)))
		return;
	/* Delivery complete: every packet is in, the receiver must say so too. */
	if (!txe->err && txe->level == RDMX_TX_DELIVERY_AWAITED)
		return;
	/* Over, either way: the buffers go back to the application. */
	rdmx_tx_unexpose(txe);
	if (!txe->err) {
		if (txe->completion) {
			entry = rdmx_send_entry(txe);
			rdmx_comp_write(ep->tx_comp, &entry);
		}
	} else if (txe->why) {
		rdmx_tx_report(ep, txe);
		/* At close, or past its session, the receiver hears nothing more. */
		if (ep->enabled && !txe->orphan) {
			rdmx_tx_void(ep, txe);
			return;
		}
	}
	rdmx_send_txe_release(ep, txe);
}

/* A packet's life is over: frees it and tells the send or receive behind. */
static void rdmx_tx_pke_end(struct rdmx_ep *ep, struct rdmx_pke *pke)
{
	struct rdmx_txe *txe = pke->txe;
	struct rdmx_rxm *rxm = pke->rxm;

	pke->busy = false;
	if (pke->peer && !txe && !rxm && pke->hdr.hs.base.type == RDMX_PKT_HS)
		pke->peer->hs_out--;
	if (pke->pooled)
		rdmx_pool_release(&ep->pke_pool, pke);
	else if (pke->heap) {
		rdmx_dlist_remove(&pke->heap_link);
		free(pke);
		ep->pke_heap--;
	}
	if (txe) {
		txe->pkts_out--;
		rdmx_tx_advance(ep, txe);
	} else if (rxm) {
		rdmx_long_cts_done(ep, rxm);
	}
}

void rdmx_tx_fail(struct rdmx_ep *ep, struct rdmx_pke *pke, int err,
		  const char *why)
{
	if (pke->txe && !pke->txe->err) {
		pke->txe->err = err;
		pke->txe->why = why;
	} else if (pke->rxm) {
		rdmx_long_cts_failed(ep, pke->rxm, err);
	} else if (!pke->txe) {
		RDMX_WARN_WIRE(FI_LOG_EP_DATA, "control packet lost: %s\n", why);
	}
	rdmx_tx_pke_end(ep, pke);
}

/* The sends under way to peer. */
static bool rdmx_tx_of_peer(const struct rdmx_txe *txe, const struct rdmx_peer *peer)
{
	return txe->in_use && txe->peer == peer && !txe->deferred;
}

/*
 * The device found peer unreachable: the sends whose packets are all
 * acknowledged and that wait only for a DACK will not get it. They fail
 * as the packets do (nothing of them is in flight for the device to
 * fail), and the peer, gone, is not told (no VOID).
 */
static void rdmx_tx_dack_unreachable(struct rdmx_ep *ep, struct rdmx_peer *peer,
				     int err, const char *why)
{
	for (size_t i = 0; peer->dack_awaited && i < ep->txe_pool.count; i++) {
		struct rdmx_txe *txe = rdmx_pool_at(&ep->txe_pool, i);

		if (!rdmx_tx_of_peer(txe, peer) || txe->level != RDMX_TX_DELIVERY_AWAITED ||
		    txe->err)
			continue;
		txe->err = err;
		txe->why = why;
		txe->orphan = true;
		if (!txe->pkts_out)
			rdmx_tx_advance(ep, txe);
	}
}

void rdmx_tx_done(struct rdmx_ep *ep, struct rdmx_pke *pke,
		  enum rdmx_dev_status status)
{
	if (!pke->peer) {
		/* Its peer was let go (rdmx_tx_peer_forget): nothing waits for it. */
		rdmx_tx_pke_end(ep, pke);
		return;
	}
	if (status == RDMX_DEV_RNR) {
		rdmx_rnr_refused(ep, pke->peer, pke);
		return;
	}
	if (status == RDMX_DEV_UNREACH)
		rdmx_tx_dack_unreachable(ep, pke->peer, rdmx_dev_status_errno(status),
					 rdmx_dev_status_str(status));
	if (status != RDMX_DEV_OK) {
		rdmx_tx_fail(ep, pke, rdmx_dev_status_errno(status),
			     rdmx_dev_status_str(status));
		return;
	}
	rdmx_rnr_delivered(pke->peer);
	rdmx_tx_pke_end(ep, pke);
}

bool rdmx_tx_peer_busy(const struct rdmx_ep *ep, const struct rdmx_peer *peer)
{
	for (size_t i = 0; i < ep->pke_pool.count; i++) {
		const struct rdmx_pke *pke = rdmx_pool_at(&ep->pke_pool, i);

		if (pke->busy && pke->peer == peer && (pke->txe || pke->rxm))
			return true;
	}
	return false;
}

/* Ends the packets to peer on list (linked by their link) unsent. */
static void rdmx_tx_drop_queued(struct rdmx_ep *ep, struct rdmx_dlist *list,
				const struct rdmx_peer *peer)
{
	struct rdmx_dlist *it, *next;

	for (it = list->next; it != list; it = next) {
		struct rdmx_pke *pke = rdmx_container_of(it, struct rdmx_pke, link);

		next = it->next;
		if (pke->peer != peer)
			continue;
		rdmx_dlist_remove(it);
		rdmx_tx_pke_end(ep, pke);
	}
}

void rdmx_tx_peer_forget(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	struct rdmx_dlist *it;

	rdmx_dack_forget(peer);
	rdmx_tx_drop_queued(ep, &ep->ctrl_pending, peer);
	rdmx_tx_drop_queued(ep, &peer->retry_q, peer);
	for (size_t i = 0; i < ep->pke_pool.count; i++) {
		struct rdmx_pke *pke = rdmx_pool_at(&ep->pke_pool, i);

		if (pke->busy && pke->peer == peer)
			pke->peer = NULL;
	}
	rdmx_dlist_foreach(&ep->pke_heaped, it) {
		struct rdmx_pke *pke = rdmx_container_of(it, struct rdmx_pke, heap_link);

		if (pke->peer == peer)
			pke->peer = NULL;
	}
}

void rdmx_tx_ctrl_post(struct rdmx_ep *ep, struct rdmx_pke *pke)
{
	if (rdmx_rnr_blocked(pke->peer) || rdmx_tx_post(pke, false)) {
		pke->busy = true;
		rdmx_dlist_insert_tail(&ep->ctrl_pending, &pke->link);
	}
}

void rdmx_tx_progress(struct rdmx_ep *ep)
{
	struct rdmx_dlist txes;
	struct rdmx_dlist *it, *next;

	for (it = ep->ctrl_pending.next; it != &ep->ctrl_pending; it = next) {
		struct rdmx_pke *pke = rdmx_container_of(it, struct rdmx_pke, link);

		next = it->next;
		if (rdmx_rnr_blocked(pke->peer))
			continue;
		if (rdmx_tx_post(pke, false))
			return;
		rdmx_dlist_remove(it);
	}
	if (rdmx_dlist_empty(&ep->tx_pending))
		return;
	/* Each send goes back to the tail if it still has to wait. */
	rdmx_dlist_init(&txes);
	rdmx_dlist_splice_tail(&txes, &ep->tx_pending);
	while ((it = rdmx_dlist_pop_front(&txes))) {
		struct rdmx_txe *txe = rdmx_container_of(it, struct rdmx_txe, link);

		txe->pending = false;
		rdmx_tx_pump(ep, txe);
	}
}


void rdmx_tx_peer_reset(struct rdmx_ep *ep, struct rdmx_peer *peer, int err,
			const char *why, bool spare_sent)
{
	struct rdmx_dlist *it, *next;

	for (size_t i = 0; i < ep->txe_pool.count; i++) {
		struct rdmx_txe *txe = rdmx_pool_at(&ep->txe_pool, i);

		if (!rdmx_tx_of_peer(txe, peer))
			continue;
		txe->orphan = true;
		/*
		 * Wholly at the device: its completions say if it was
		 * delivered; unless it waits for a DACK, which a closed peer
		 * sent before its CLOSE if it ever would.
		 */
		if (spare_sent && txe->level != RDMX_TX_DELIVERY_AWAITED &&
		    txe->pkts_out && txe->cleared && txe->next >= txe->end)
			continue;
		if (!txe->err) {
			txe->err = err;
			txe->why = why;
		}
	}
	/* Its packets waiting here would reach the peer's next session. */
	rdmx_dack_forget(peer);
	rdmx_rnr_flush(ep, peer, err);
	peer->backoff_until = 0;
	peer->backoff_exp = 0;
	for (it = ep->ctrl_pending.next; it != &ep->ctrl_pending; it = next) {
		struct rdmx_pke *pke = rdmx_container_of(it, struct rdmx_pke, link);

		next = it->next;
		if (pke->peer != peer || pke->hdr.hs.base.type == RDMX_PKT_HS)
			continue;
		rdmx_dlist_remove(it);
		rdmx_tx_fail(ep, pke, err, why);
	}
	/* The others end when the device gives their packets back. */
	for (size_t i = 0; i < ep->txe_pool.count; i++) {
		struct rdmx_txe *txe = rdmx_pool_at(&ep->txe_pool, i);

		if (rdmx_tx_of_peer(txe, peer) && !txe->pkts_out)
			rdmx_tx_advance(ep, txe);
	}
}

struct rdmx_txe *rdmx_tx_by_id(struct rdmx_ep *ep, uint32_t tx_id)
{
	struct rdmx_txe *txe = rdmx_pool_at(&ep->txe_pool, tx_id);

	/* A send still waiting for its peer's handshake has no message yet. */
	return txe && txe->in_use && !txe->deferred && txe->proto == RDMX_PROTO_LONG ?
	       txe : NULL;
}

struct rdmx_txe *rdmx_tx_awaiting_dack(struct rdmx_ep *ep, struct rdmx_peer *peer,
				       uint32_t tx_id, uint32_t msg_id)
{
	struct rdmx_txe *txe = rdmx_pool_at(&ep->txe_pool, tx_id);

	if (!txe || !txe->in_use || txe->deferred || txe->peer != peer ||
	    txe->msg_id != msg_id || txe->level != RDMX_TX_DELIVERY_AWAITED)
		return NULL;
	return txe;
}

void rdmx_tx_delivered(struct rdmx_ep *ep, struct rdmx_txe *txe, int err)
{
	assert(txe->level == RDMX_TX_DELIVERY_AWAITED);
	txe->level = RDMX_TX_DELIVERED;
	txe->peer->dack_awaited--;
	if (err && !txe->err) {
		txe->err = err;
		txe->why = "the receiver could not take the message";
	}
	/* A failure waits for the packets still at the device, like any. */
	rdmx_tx_advance(ep, txe);
}

bool rdmx_tx_level_refused(const struct rdmx_txe *txe)
{
	return txe->level == RDMX_TX_DELIVERY_ASKED &&
	       !(txe->peer->hs.peer_features & RDMX_HS_FEAT_DELIVERY_ACK);
}

void rdmx_tx_drain(struct rdmx_ep *ep)
{
	for (size_t i = 0; i < ep->txe_pool.count; i++) {
		struct rdmx_txe *txe = rdmx_pool_at(&ep->txe_pool, i);

		if (txe->in_use)
			rdmx_tx_unexpose(txe);
	}
}

/*
 * Chooses the protocol of a send and its segment size by the packets its
 * peer takes (known once connected: a send that waited for the
 * handshake is planned again when it starts).
 */
static void rdmx_send_plan(const struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	size_t pkt = txe->peer->pkt_max;

	if (txe->len <= pkt - sizeof(struct rdmx_wire_eager))
		txe->proto = RDMX_PROTO_EAGER;
	else
		txe->proto = txe->len <= ep->medium_max ? RDMX_PROTO_MEDIUM :
			     RDMX_PROTO_LONG;
	txe->cleared = txe->proto != RDMX_PROTO_LONG;
	txe->limit = txe->cleared ? txe->len : 0;
	txe->seg_size = pkt - (txe->proto == RDMX_PROTO_MEDIUM ?
			       sizeof(struct rdmx_wire_medium) :
			       sizeof(struct rdmx_wire_data));
}

/* Checks a send request; 0 or -FI_E*. */
static int rdmx_send_check(struct rdmx_ep *ep, const struct rdmx_send_req *req,
			   size_t len, bool copy)
{
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!(ep->caps & FI_SEND)) {
		RDMX_WARN(FI_LOG_EP_DATA, "send on an endpoint without FI_SEND\n");
		return -FI_EOPNOTSUPP;
	}
	if (req->iov_cnt > RDMX_IOV_LIMIT) {
		RDMX_WARN(FI_LOG_EP_DATA, "send iov count %zu > %d\n",
			  req->iov_cnt, RDMX_IOV_LIMIT);
		return -FI_EINVAL;
	}
	if (len > ep->max_msg_size || (copy && len > ep->inject_size)) {
		RDMX_WARN(FI_LOG_EP_DATA, "message of %zu bytes exceeds %zu\n",
			  len, copy ? ep->inject_size : ep->max_msg_size);
		return -FI_EMSGSIZE;
	}
	return 0;
}

/*
 * The completion level of a len-byte send with flags: the strongest one
 * asked for; with none, transmit complete. Only a copied message can
 * complete at posting (FI_INJECT_COMPLETE; fi_inject has no completion).
 */
static enum rdmx_tx_level rdmx_send_level(const struct rdmx_ep *ep,
					  const struct rdmx_send_req *req, size_t len)
{
	if (req->inject_op)
		return RDMX_TX_INJECT;
	if (req->flags & FI_DELIVERY_COMPLETE)
		return RDMX_TX_DELIVERY_ASKED;
	if (req->flags & FI_TRANSMIT_COMPLETE)
		return RDMX_TX_TRANSMIT;
	return (req->flags & FI_INJECT_COMPLETE) && len <= ep->inject_size ?
	       RDMX_TX_INJECT : RDMX_TX_TRANSMIT;
}

/* Fills a new send entry from req. */
static void rdmx_send_fill(struct rdmx_ep *ep, struct rdmx_txe *txe,
			   const struct rdmx_send_req *req, struct rdmx_peer *peer,
			   size_t len, enum rdmx_tx_level level, bool copy)
{
	txe->context = req->context;
	txe->cq_flags = FI_SEND | ((req->flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
	txe->completion = !req->inject_op &&
			  (!ep->tx_selective || (req->flags & FI_COMPLETION));
	txe->level = level;
	txe->in_use = true;
	txe->pending = false;
	txe->deferred = false;
	txe->orphan = false;
	txe->err = 0;
	txe->why = NULL;
	txe->len = len;
	txe->tag = req->tag;
	txe->data = req->data;
	txe->pkt_flags = ((req->flags & FI_TAGGED) ? RDMX_PKT_TAGGED : 0) |
			 ((req->flags & FI_REMOTE_CQ_DATA) ? RDMX_PKT_CQ_DATA : 0) |
			 (level == RDMX_TX_DELIVERY_ASKED ? RDMX_PKT_DACK_REQ : 0);
	txe->addr = req->dest;
	txe->peer = peer;
	txe->next = 0;
	txe->end = len;
	rdmx_send_plan(ep, txe);
	txe->pkts_out = 1;
	if (copy && len) {
		rdmx_copy_from_iov(txe->inject, req->iov, req->iov_cnt);
		txe->iov[0].iov_base = txe->inject;
		txe->iov[0].iov_len = len;
		txe->iov_cnt = 1;
	} else {
		/* iov may be NULL when iov_cnt is 0. */
		if (req->iov_cnt)
			memcpy(txe->iov, req->iov, req->iov_cnt * sizeof(*req->iov));
		txe->iov_cnt = req->iov_cnt;
	}
	rdmx_tx_pke_init(&txe->pke, txe, peer, false);
}

ssize_t rdmx_send(struct rdmx_ep *ep, const struct rdmx_send_req *req)
{
	size_t len = rdmx_iov_len(req->iov, req->iov_cnt);
	enum rdmx_tx_level level = rdmx_send_level(ep, req, len);
	bool early = level == RDMX_TX_INJECT;
	bool copy = early || (req->flags & FI_INJECT);
	struct rdmx_peer *peer;
	struct rdmx_txe *txe;
	int ret = rdmx_send_check(ep, req, len, copy);

	if (ret)
		return ret;
	ret = rdmx_peer_get(ep, req->dest, &peer);
	if (ret) {
		RDMX_WARN(FI_LOG_EP_DATA, "send to fi_addr %lu: %s\n",
			  (unsigned long) req->dest, ret == -FI_EINVAL ?
			  "not in the address vector" : fi_strerror(-ret));
		return ret;
	}
	txe = rdmx_rnr_blocked(peer) ? NULL : rdmx_pool_alloc(&ep->txe_pool);
	if (!txe)
		return -FI_EAGAIN;
	rdmx_send_fill(ep, txe, req, peer, len, level, copy);
	/* A stub keeps the send until its handshake is over (rdmx_conn.h). */
	ret = rdmx_conn_ready(ep, peer) ? rdmx_tx_start(ep, txe, req->flags & FI_MORE) :
					  rdmx_conn_defer(ep, peer, txe);
	if (ret) {
		rdmx_send_txe_release(ep, txe);
		return ret;
	}
	if (early && txe->completion) {
		struct rdmx_cq_entry entry = rdmx_send_entry(txe);

		txe->completion = false;
		rdmx_comp_write(ep->tx_comp, &entry);
	}
	return 0;
}

int rdmx_tx_start(struct rdmx_ep *ep, struct rdmx_txe *txe, bool more)
{
	struct rdmx_peer *peer = txe->peer;
	int ret;

	if (rdmx_tx_level_refused(txe)) {
		RDMX_WARN(FI_LOG_EP_DATA, "FI_DELIVERY_COMPLETE send to fi_addr %lu: "
			  "the peer cannot acknowledge delivery\n",
			  (unsigned long) txe->addr);
		return -FI_EOPNOTSUPP;
	}
	txe->msg_id = peer->tx_msg_id;
	txe->next = 0;
	rdmx_send_plan(ep, txe);
	rdmx_tx_first(ep, txe);
	ret = rdmx_tx_post(&txe->pke, more || txe->next < txe->limit);
	if (ret)
		return ret;
	peer->tx_msg_id++;
	if (txe->level == RDMX_TX_DELIVERY_ASKED) {
		txe->level = RDMX_TX_DELIVERY_AWAITED;
		peer->dack_awaited++;
	}
	if (txe->next < txe->limit)
		rdmx_tx_pump(ep, txe);
	return 0;
}
