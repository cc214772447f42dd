/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: send entries (struct rdmx_txe) from their first packet to their
 * completion: the segments that follow (pumped as the device and the
 * receiver's credit allow), the end of each packet, a failure reported
 * and the receiver told (VOID), the completion at the level the send
 * asked for. Posting a send is rdmx_send.c's, above; the packets go
 * through rdmx_pke.c, below. A packet of a receive (a long message's
 * CTS) ends through its message's protocol (struct rdmx_rxm_ops).
 */
#include <assert.h>
#include <stddef.h>
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_comp.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_rx.h"
#include "rdmx_tx.h"

/* The completion entry of a send. */
struct rdmx_cq_entry rdmx_tx_entry(const struct rdmx_txe *txe)
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

void rdmx_tx_release(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	if (txe->level == RDMX_TX_DELIVERY_AWAITED)
		txe->peer->dack_awaited--;
	rdmx_tx_unexpose(txe);
	if (txe->pending)
		rdmx_dlist_remove(&txe->link);
	txe->in_use = false;
	if (txe->ended)
		txe->ended(ep, txe);
	rdmx_pool_release(&ep->txe_pool, txe);
}

/* A send that awaits a DACK names itself in its message header. */
void rdmx_tx_name(const struct rdmx_txe *txe, struct rdmx_wire_eager *msg)
{
	if (txe->pkt_flags & RDMX_PKT_DACK_REQ)
		rdmx_wire_msg_set_id(msg, (uint32_t) rdmx_pool_index(&txe->peer->ep->txe_pool,
								     txe));
}

size_t rdmx_tx_rma_hdr(const struct rdmx_txe *txe, struct rdmx_pke *pke, size_t hdr_len)
{
	struct rdmx_wire_rma *rma = (struct rdmx_wire_rma *) ((uint8_t *) &pke->hdr + hdr_len);

	if (!(txe->pkt_flags & RDMX_PKT_RMA))
		return hdr_len;
	rdmx_wire_rma_encode(rma, txe->rma_addr, rdmx_tx_fetches(txe) ? txe->read_len : 0);
	if (!(txe->pkt_flags & RDMX_PKT_ATOMIC))
		return hdr_len + sizeof(*rma);
	rdmx_wire_atomic_encode((struct rdmx_wire_atomic *) (rma + 1), txe->atomic_op,
				txe->atomic_datatype, txe->atomic_count);
	return hdr_len + sizeof(*rma) + sizeof(struct rdmx_wire_atomic);
}

void rdmx_tx_segment(struct rdmx_txe *txe, struct rdmx_pke *pke, size_t segs)
{
	size_t off = txe->next;
	size_t len = RDMX_MIN(txe->seg_size * segs, txe->limit - off);

	if (txe->proto == RDMX_PROTO_MEDIUM) {
		rdmx_wire_medium_encode(&pke->hdr.medium, txe->pkt_flags, txe->msg_id,
					txe->tag, txe->data, txe->len, off);
		rdmx_tx_name(txe, &pke->hdr.medium.msg);
		rdmx_tx_pke_iov(pke, rdmx_tx_rma_hdr(txe, pke, sizeof(pke->hdr.medium)),
				txe->iov, txe->iov_cnt, off, len);
		pke->off_at = offsetof(struct rdmx_wire_medium, offset);
	} else {
		rdmx_wire_data_encode(&pke->hdr.data, txe->msg_id, txe->rx_id, off);
		rdmx_tx_pke_iov(pke, sizeof(pke->hdr.data), txe->iov, txe->iov_cnt, off, len);
		pke->off_at = offsetof(struct rdmx_wire_data, offset);
	}
	if (len > txe->seg_size)
		pke->seg_len = txe->seg_size;
	txe->next += len;
}

static void rdmx_tx_queue(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	if (!txe->pending) {
		txe->pending = true;
		rdmx_dlist_insert_tail(&ep->tx_pending, &txe->link);
	}
}

bool rdmx_tx_more(const struct rdmx_ep *ep, const struct rdmx_txe *txe)
{
	return txe->next < txe->limit && ep->pke_pool.free && !rdmx_rnr_blocked(txe->peer);
}

void rdmx_tx_pump(struct rdmx_ep *ep, struct rdmx_txe *txe, bool hold)
{
	size_t segs = rdmx_lane_segs(&txe->peer->lane);

	while (!txe->err && txe->cleared && txe->next < txe->limit) {
		struct rdmx_pke *pke = rdmx_rnr_blocked(txe->peer) ||
				       ep->seg_pkts >= ep->pke_pool.count ? NULL :
				       rdmx_pool_alloc(&ep->pke_pool);
		size_t next = txe->next;

		if (!pke) {
			rdmx_tx_queue(ep, txe);
			return;
		}
		rdmx_tx_pke_init(pke, txe, txe->peer, true);
		rdmx_tx_segment(txe, pke, segs);
		if (rdmx_tx_post(pke, hold || rdmx_tx_more(ep, txe))) {
			bool post = pke->seg_len;

			txe->next = next;
			rdmx_pool_release(&ep->pke_pool, pke);
			/* No room for a whole post: packets one by one, as room comes. */
			if (post) {
				segs = 1;
				continue;
			}
			rdmx_tx_queue(ep, txe);
			return;
		}
		pke->pkts = (txe->next - next + txe->seg_size - 1) / txe->seg_size;
		ep->seg_pkts += pke->pkts;
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
	/* An answer to a read names the read, which fails with it. */
	if (txe->rma_op == RDMX_RMA_RESP)
		rdmx_wire_eager_encode(&pke->hdr.eager, RDMX_PKT_VOID | RDMX_PKT_RMA_RESP,
				       txe->msg_id, txe->tag, txe->data);
	else
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
	/*
	 * A send that completed at injection has no entry left to fail, an
	 * fi_inject_write none at all, and the answer to a peer's read none
	 * of its own.
	 */
	if (txe->level != RDMX_TX_INJECT && txe->rma_op != RDMX_RMA_RESP && !txe->silent) {
		entry = rdmx_tx_entry(txe);
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
	rdmx_tx_release(ep, txe);
}

/* Tells the application a send succeeded; one complete at posting was told then. */
static void rdmx_tx_report_done(struct rdmx_ep *ep, const struct rdmx_txe *txe)
{
	struct rdmx_cq_entry entry = rdmx_tx_entry(txe);

	/* A chunk of an answer to a peer's read: its answer counts (rdmx_rma.c). */
	if (txe->completion)
		rdmx_comp_write(ep->tx_comp, &entry);
	else if (txe->level != RDMX_TX_INJECT && txe->rma_op != RDMX_RMA_RESP)
		rdmx_comp_count(ep->tx_comp, &entry);
}

void rdmx_tx_advance(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	if (!txe->err && txe->next < txe->limit)
		rdmx_tx_pump(ep, txe, false);
	if (txe->pkts_out || (!txe->err && (!txe->cleared || txe->next < txe->end)))
		return;
	/* Delivery complete: every packet is in, the receiver must say so too. */
	if (!txe->err && txe->level == RDMX_TX_DELIVERY_AWAITED)
		return;
	/* A read whose answer's chunks are landing ends when they did (rdmx_rma.c). */
	if (txe->read_busy)
		return;
	/* Over, either way: the buffers go back to the application. */
	rdmx_tx_unexpose(txe);
	if (!txe->err) {
		rdmx_tx_report_done(ep, txe);
	} else if (txe->why) {
		rdmx_tx_report(ep, txe);
		/* At close, or past its session, the receiver hears nothing more. */
		if (ep->enabled && !txe->orphan) {
			rdmx_tx_void(ep, txe);
			return;
		}
	}
	rdmx_tx_release(ep, txe);
}

/* A packet's life is over: frees it and tells the send or receive behind. */
void rdmx_tx_pke_end(struct rdmx_ep *ep, struct rdmx_pke *pke)
{
	struct rdmx_txe *txe = pke->txe;
	struct rdmx_rxm *rxm = pke->rxm;

	pke->busy = false;
	ep->seg_pkts -= pke->pkts;
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
		rxm->ops->cts_done(ep, rxm);
	}
}

void rdmx_tx_fail(struct rdmx_ep *ep, struct rdmx_pke *pke, int err,
		  const char *why)
{
	if (pke->txe && !pke->txe->err) {
		pke->txe->err = err;
		pke->txe->why = why;
	} else if (pke->rxm) {
		pke->rxm->ops->cts_failed(ep, pke->rxm, err);
	} else if (!pke->txe) {
		RDMX_WARN_WIRE(FI_LOG_EP_DATA, "control packet lost: %s\n", why);
	}
	rdmx_tx_pke_end(ep, pke);
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
	/* A read's chunks still landing end it (rdmx_rma.c): its error waits. */
	if (txe->read_busy) {
		if (!txe->read_fail)
			txe->read_fail = err;
		return;
	}
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
	uint64_t features = txe->peer->hs.peer_features;

	if (txe->rma_op == RDMX_RMA_WRITE || txe->rma_op == RDMX_RMA_READ)
		return !(features & RDMX_HS_FEAT_RMA);
	if (txe->rma_op == RDMX_RMA_ATOMIC)
		return !(features & RDMX_HS_FEAT_ATOMIC);
	return txe->level == RDMX_TX_DELIVERY_ASKED && !(features & RDMX_HS_FEAT_DELIVERY_ACK);
}

void rdmx_tx_drain(struct rdmx_ep *ep)
{
	for (size_t i = 0; i < ep->txe_pool.count; i++) {
		struct rdmx_txe *txe = rdmx_pool_at(&ep->txe_pool, i);

		if (txe->in_use)
			rdmx_tx_unexpose(txe);
	}
}
