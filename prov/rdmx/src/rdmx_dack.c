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
	}
	return pke;
}

void rdmx_dack_send(struct rdmx_ep *ep, struct rdmx_peer *peer, uint32_t pkt_flags,
		    uint32_t msg_id, uint32_t tx_id, int err)
{
	struct rdmx_pke *pke;

	if (!(pkt_flags & RDMX_PKT_DACK_REQ) || !peer)
		return;
	pke = rdmx_dack_pke(ep, peer);
	if (!pke) {
		/* The sender's send waits until its session ends. */
		ep->stats.rx_dropped++;
		RDMX_WARN(FI_LOG_EP_DATA, "out of memory: delivery acknowledgement lost\n");
		return;
	}
	rdmx_wire_dack_encode(&pke->hdr.dack, msg_id, tx_id, (uint32_t) err);
	rdmx_tx_pke_iov(pke, sizeof(pke->hdr.dack), NULL, 0, 0, 0);
	rdmx_tx_ctrl_post(ep, pke);
}

void rdmx_dack_recv(struct rdmx_ep *ep, struct rdmx_peer *peer,
		    const struct rdmx_pkt *pkt)
{
	struct rdmx_txe *txe = rdmx_tx_awaiting_dack(ep, peer, pkt->tx_id, pkt->msg_id);

	if (!txe) {
		ep->stats.rx_malformed++;
		return;
	}
	rdmx_tx_delivered(ep, txe, (int) pkt->status);
}
