/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the long protocol, send side (rdmx_long.c has the protocol and
 * the receive side): the RTS, with the sender's buffers offered for
 * reading when the device and the peer allow it (long-read), and the
 * receiver's CTS, which clears the send to go on up to a limit.
 */
#include "rdmx.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_tx.h"

/*
 * Whether a long send offers its buffers for reading: the device can
 * expose them, the message is long enough to be worth a read, and, when its reads reach only this host, the peer is
 * shown on this host by its handshake and by where it receives (no
 * process address goes on the wire to any other). The exposure is bound
 * to the peer and this session.
 */
static bool rdmx_long_read_offer(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	struct rdmx_dev *dev = rdmx_lane_read_dev(&ep->lanes, &txe->peer->lane);
	const struct rdmx_hs *hs = &txe->peer->hs;
	bool here;

	/*
	 * Not RMA: the reader would write into a region (or read from one)
	 * that the application may close while the read is under way.
	 */
	if (!g_rdmx_params.long_read || !(dev->caps.flags & RDMX_DEV_CAP_RDMA_READ) ||
	    txe->len < dev->caps.read_min || txe->rma_op != RDMX_RMA_NONE)
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
void rdmx_long_rts(struct rdmx_ep *ep, struct rdmx_txe *txe, struct rdmx_pke *pke)
{
	uint32_t flags = txe->pkt_flags;
	struct iovec read = { &txe->read, sizeof(txe->read) };
	bool offer = rdmx_long_read_offer(ep, txe);

	txe->exposed = offer;
	if (offer) {
		flags |= RDMX_PKT_READ;
		rdmx_wire_read_encode(&txe->read, txe->rkey.wire, txe->iov, txe->iov_cnt);
	}
	rdmx_wire_rts_encode(&pke->hdr.rts, flags, txe->msg_id,
			     (uint32_t) rdmx_pool_index(&ep->txe_pool, txe),
			     txe->tag, txe->data, txe->len);
	rdmx_tx_pke_iov(pke, rdmx_tx_rma_hdr(txe, pke, sizeof(pke->hdr.rts)), &read, offer, 0,
			offer ? sizeof(txe->read) : 0);
}

void rdmx_long_cts(struct rdmx_ep *ep, struct rdmx_peer *peer,
		   const struct rdmx_pkt *pkt)
{
	struct rdmx_txe *txe = rdmx_tx_by_id(ep, pkt->tx_id);

	if (!txe || txe->peer != peer || txe->msg_id != pkt->msg_id ||
	    pkt->end > txe->len ||
	    (txe->cleared && (txe->rx_id != pkt->rx_id || txe->end != pkt->end))) {
		ep->stats.rx_malformed++;
		return;
	}
	if (txe->err)
		return;
	if (!txe->cleared) {
		txe->cleared = true;
		txe->rx_id = pkt->rx_id;
		txe->end = pkt->end;
	}
	txe->limit = RDMX_MAX(txe->limit, pkt->limit);
	rdmx_tx_advance(ep, txe);
}
