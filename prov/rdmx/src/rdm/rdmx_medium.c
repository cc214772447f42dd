/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the medium protocol, receive side (rdmx_send.c cuts the message).
 * A message larger than one packet and at most FI_RDMX_MEDIUM_MAX bytes
 * is sent as segments of one packet's payload, all at once; each segment
 * carries the whole message header, its offset and the message length,
 * so whichever segment arrives first starts the message (in its sender's
 * order) and the others land at their offsets: in the matched receive's
 * buffers, or in an unexpected copy of the whole message.
 */
#include "rdmx.h"
#include "rdmx_dack.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rx.h"

static const struct rdmx_rxm_ops rdmx_medium_rxm_ops;

/*
 * A receive took the message, or FI_DISCARD dropped it, before its last
 * segment: the segments keep landing in the unexpected entry's copy,
 * which goes to the receive (or away) once the message is whole.
 */
static void rdmx_medium_discard(struct rdmx_ep *ep, struct rdmx_rxm *rxm)
{
	(void) ep;
	rxm->discard = true;
}

void rdmx_medium_start(struct rdmx_ep *ep, struct rdmx_peer *peer,
		       const struct rdmx_pkt *pkt)
{
	bool rma = pkt->flags & (RDMX_PKT_RMA | RDMX_PKT_RMA_RESP);
	struct rdmx_rxe *rxe = NULL;
	struct rdmx_rxm *rxm;
	int err;

	if (!ep->rx_comp && !rma) {
		ep->stats.rx_no_recv++;
		rdmx_dack_send(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id, FI_EOPNOTSUPP);
		return;
	}
	if (pkt->msg_len > RDMX_MEDIUM_LIMIT) {
		ep->stats.rx_malformed++;
		RDMX_WARN_WIRE(FI_LOG_EP_DATA, "medium message of %zu bytes refused\n",
			       (size_t) pkt->msg_len);
		rdmx_dack_send(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id, FI_EMSGSIZE);
		return;
	}
	rxm = rdmx_rxm_new(ep, peer, pkt, &rdmx_medium_rxm_ops);
	if (!rxm) {
		/* An answer's read fails here: the target asked for no DACK. */
		if (pkt->flags & RDMX_PKT_RMA_RESP)
			rdmx_rma_resp_lost(ep, peer, pkt, FI_ENOMEM);
		rdmx_dack_send(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id, FI_ENOMEM);
		return;
	}
	if (rma && !(rxe = rdmx_rma_rxe(ep, peer, pkt, &rxm->kid, &err))) {
		rdmx_rxm_free(ep, rxm);
		rdmx_dack_send(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id, err);
		return;
	}
	if (!rma)
		rxe = rdmx_recv_match(ep, pkt->flags, rdmx_peer_src(peer), pkt->tag,
				      pkt->msg_len, &rxm->kid);
	if (!rdmx_rxm_attach(ep, rxm, rxe, pkt->msg_len)) {
		rdmx_rxm_free(ep, rxm);
		rdmx_dack_send(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id, FI_ENOMEM);
		return;
	}
	rdmx_rxm_place(ep, rxm, pkt->offset, pkt->payload, pkt->payload_len);
}

void rdmx_medium_more(struct rdmx_ep *ep, struct rdmx_peer *peer,
		      const struct rdmx_pkt *pkt)
{
	struct rdmx_rxm *rxm = rdmx_rxm_find(peer, pkt->msg_id);

	if (!rxm) {
		/* The message was dropped at its start, or this is a repeat. */
		ep->stats.rx_stale++;
		return;
	}
	if (rxm->type != RDMX_PKT_MEDIUM || pkt->msg_len != rxm->msg_len) {
		ep->stats.rx_malformed++;
		return;
	}
	rdmx_rxm_place(ep, rxm, pkt->offset, pkt->payload, pkt->payload_len);
}

/* A medium message sends no CTS: those slots are never called. */
static const struct rdmx_rxm_ops rdmx_medium_rxm_ops = {
	.matched = rdmx_rxm_take,
	.discard = rdmx_medium_discard,
};
