/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: delivery acknowledgements (see rdmx_dack.h and docs/protocol.md).
 *
 * Receiver: one DACK per flagged message, from the point where the rdm
 * layer is done with it (eager: matched and copied, or queued
 * unexpected; medium and long: the last byte placed in the receive or
 * the unexpected copy; or dropped). Its packet comes from the endpoint's
 * pool, or from the heap when the pool is empty, so that no DACK is
 * lost for want of a packet: their number is bounded by the messages
 * the peer has in flight (its swsrd window and its send queue).
 *
 * Sender: a DACK counts only if it names a live send of that peer, with
 * that message number, still waiting for one; anything else is dropped
 * and counted as malformed.
 */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_dack.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_tx.h"
#include "rdmx_wire.h"

/* A packet for a DACK: the pool's, else one of its own. */
static struct rdmx_pke *rdmx_dack_pke(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	struct rdmx_pke *pke = rdmx_pool_alloc(&ep->pke_pool);

	if (pke) {
		rdmx_tx_pke_init(pke, NULL, peer, true);
		return pke;
	}
	pke = malloc(sizeof(*pke));
	if (pke) {
		rdmx_tx_pke_init(pke, NULL, peer, false);
		pke->heap = true;
		ep->pke_heap++;
		rdmx_dlist_insert_tail(&ep->pke_heaped, &pke->heap_link);
	}
	return pke;
}

/* Posts one DACK: count messages up to msg_id (send tx_id), or one with err. */
static void rdmx_dack_post(struct rdmx_ep *ep, struct rdmx_peer *peer, uint32_t msg_id,
			   uint32_t tx_id, int err, uint32_t count)
{
	struct rdmx_pke *pke = rdmx_dack_pke(ep, peer);

	if (!pke) {
		/* The sender's sends fail when the peer looks gone. */
		ep->stats.rx_dropped++;
		RDMX_WARN_WIRE(FI_LOG_EP_DATA, "out of memory: delivery acknowledgement lost\n");
		return;
	}
	rdmx_wire_dack_encode(&pke->hdr.dack, msg_id, tx_id, (uint32_t) err, count);
	rdmx_tx_pke_iov(pke, sizeof(pke->hdr.dack), NULL, 0, 0, 0);
	rdmx_tx_ctrl_post(ep, pke);
}

/* Sends the run peer owes, if any. */
static void rdmx_dack_flush_peer(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	if (!peer->dack_run)
		return;
	rdmx_dack_post(ep, peer, peer->dack_first + peer->dack_run - 1, peer->dack_tx_id,
		       0, peer->dack_run);
	rdmx_dack_forget(peer);
}

void rdmx_dack_send(struct rdmx_ep *ep, struct rdmx_peer *peer, uint32_t pkt_flags,
		    uint32_t msg_id, uint32_t tx_id, int err)
{
	if (!(pkt_flags & RDMX_PKT_DACK_REQ) || !peer)
		return;
	rdmx_dack_post(ep, peer, msg_id, tx_id, err, 1);
}

void rdmx_dack_queue(struct rdmx_ep *ep, struct rdmx_peer *peer, uint32_t msg_id,
		     uint32_t tx_id)
{
	if (peer->dack_run && (msg_id != peer->dack_first + peer->dack_run ||
			       peer->dack_run == RDMX_WIRE_DACK_RUN_MAX))
		rdmx_dack_flush_peer(ep, peer);
	if (!peer->dack_run) {
		peer->dack_first = msg_id;
		rdmx_dlist_insert_tail(&ep->dack_peers, &peer->dack_link);
	}
	peer->dack_run++;
	peer->dack_tx_id = tx_id;
}

void rdmx_dack_flush(struct rdmx_ep *ep)
{
	while (!rdmx_dlist_empty(&ep->dack_peers))
		rdmx_dack_flush_peer(ep, rdmx_container_of(ep->dack_peers.next,
							   struct rdmx_peer, dack_link));
}

void rdmx_dack_forget(struct rdmx_peer *peer)
{
	if (peer->dack_run)
		rdmx_dlist_remove(&peer->dack_link);
	rdmx_dlist_init(&peer->dack_link);
	peer->dack_run = 0;
}

void rdmx_dack_recv(struct rdmx_ep *ep, struct rdmx_peer *peer,
		    const struct rdmx_pkt *pkt)
{
	struct rdmx_txe *last = rdmx_tx_awaiting_dack(ep, peer, pkt->tx_id, pkt->msg_id);
	uint32_t first = pkt->msg_id - (pkt->count - 1);

	/*
	 * A read ends with its answer: a DACK only ever refuses it, before
	 * its answer or between two of its chunks (rdmx_tx_delivered lets
	 * a chunk landing end first).
	 */
	if (!last || (rdmx_tx_fetches(last) && (!pkt->status || last->read_fail))) {
		ep->stats.rx_malformed++;
		return;
	}
	/* The others of a run are found by message number (a pool scan). */
	for (size_t i = 0; pkt->count > 1 && i < ep->txe_pool.count; i++) {
		struct rdmx_txe *txe = rdmx_pool_at(&ep->txe_pool, i);

		if (txe != last && txe->in_use && !txe->deferred && txe->peer == peer &&
		    txe->level == RDMX_TX_DELIVERY_AWAITED && !rdmx_tx_fetches(txe) &&
		    txe->msg_id - first < pkt->count - 1)
			rdmx_tx_delivered(ep, txe, 0);
	}
	rdmx_tx_delivered(ep, last, (int) pkt->status);
}
