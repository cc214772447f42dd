/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the eager protocol, receive side (rdmx_send.c builds the packet).
 * A message that fits one packet travels as an RDMX_PKT_EAGER header
 * followed by its payload. On arrival, in its sender's order, it is
 * matched against posted receives, or becomes an unexpected message.
 */
#include "rdmx.h"
#include "rdmx_dack.h"
#include "rdmx_ep.h"
#include "rdmx_rx.h"

/* An eager packet of RMA: a read request, a write, an atomic or a read's answer. */
static RDMX_NOINLINE void rdmx_eager_rma(struct rdmx_ep *ep, struct rdmx_peer *peer,
					 const struct rdmx_pkt *pkt, fi_addr_t src)
{
	struct rdmx_rxe *rxe, here;
	int err;

	if (!peer) {
		ep->stats.rx_no_peer++;
		return;
	}
	if (pkt->flags & RDMX_PKT_VOID) {
		rdmx_rma_resp_lost(ep, peer, pkt, FI_EIO);
		return;
	}
	if (pkt->flags & RDMX_PKT_ATOMIC) {
		rdmx_rma_atomic(ep, peer, pkt);
		return;
	}
	if (pkt->flags & RDMX_PKT_RMA_READ) {
		rdmx_rma_read_req(ep, peer, pkt);
		return;
	}
	rxe = rdmx_rma_rxe(ep, peer, pkt, &here, &err);
	if (!rxe) {
		rdmx_dack_send(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id, err);
		return;
	}
	rdmx_copy_to_iov(rxe->iov, rxe->iov_cnt, pkt->payload, pkt->payload_len);
	rdmx_rma_complete(ep, rxe, pkt->payload_len, src, pkt->data, pkt->flags);
	rdmx_dack_batch(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id);
}

bool rdmx_eager_start(struct rdmx_ep *ep, struct rdmx_peer *peer,
		      const struct rdmx_pkt *pkt, fi_addr_t src, size_t rx_buf)
{
	struct rdmx_rxe *rxe, kid;
	bool keep = false;
	int ret;

	if (pkt->flags & (RDMX_PKT_RMA | RDMX_PKT_RMA_RESP)) {
		rdmx_eager_rma(ep, peer, pkt, src);
		return false;
	}
	/* A VOID only holds the place of a message its sender gave up. */
	if (pkt->flags & RDMX_PKT_VOID)
		return false;
	if (!ep->rx_comp) {
		ep->stats.rx_no_recv++;
		rdmx_dack_send(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id, FI_EOPNOTSUPP);
		return false;
	}
	rxe = rdmx_recv_match(ep, pkt->flags, src,
			      (pkt->flags & RDMX_PKT_TAGGED) ? pkt->tag : 0,
			      pkt->payload_len, &kid);
	if (!rxe) {
		ret = rdmx_recv_unexpected(ep, pkt, src, rx_buf, &keep);
	} else {
		rdmx_recv_deliver(ep, rxe, pkt->payload, pkt->payload_len, src,
				  pkt->tag, pkt->data, pkt->flags);
		ret = 0;
	}
	/* Matched and copied, or buffered: delivered (FI_DELIVERY_COMPLETE). */
	if (ret)
		rdmx_dack_send(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id, -ret);
	else
		rdmx_dack_batch(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id);
	return keep;
}
