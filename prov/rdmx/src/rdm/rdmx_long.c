/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the long protocol (rendezvous with credits). A message above
 * FI_RDMX_MEDIUM_MAX starts with an RTS (tag, data, length, the sender's
 * send id) and no payload. The receiver matches it in order like any
 * message; an unmatched RTS waits on the unexpected queue holding no
 * payload at all. Once a receive took it, the receiver sends a CTS: the
 * bytes it wants (end: the message, or less if its buffer is shorter)
 * and a limit the sender may send up to, at most FI_RDMX_CTS_WINDOW past
 * what arrived. DATA segments land straight in the receive's buffers;
 * when half the window has arrived the receiver raises the limit. Memory
 * in flight is bounded by the window whatever the message size.
 *
 * Long-read: when the sender's device can expose its buffers (udp: to a
 * peer on the same host), the RTS also carries a read descriptor. The
 * matched receiver then reads the bytes itself, straight into the
 * receive's buffers, and answers with a CTS whose end is 0: the sender
 * has nothing to send and its send is complete. A receiver that cannot
 * read the sender (another host, a refused key, a failed read) grants
 * credit as above instead.
 */
#include "rdmx.h"
#include "rdmx_dack.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rx.h"
#include "rdmx_tx.h"

static const struct rdmx_rxm_ops rdmx_long_rxm_ops;

_Static_assert(RDMX_WIRE_RKEY_LEN == RDMX_DEV_RKEY_LEN, "read key sizes differ");

/* Sends the current grant of rxm, after the CTS in flight if there is one. */
static void rdmx_long_send_cts(struct rdmx_ep *ep, struct rdmx_rxm *rxm)
{
	struct rdmx_pke *pke = &rxm->cts;

	if (pke->busy) {
		rxm->cts_again = true;
		return;
	}
	rdmx_tx_pke_init(pke, NULL, rxm->peer, false);
	pke->rxm = rxm;
	rdmx_wire_cts_encode(&pke->hdr.cts, rxm->msg_id, rxm->tx_id, rxm->id,
			     rxm->end, rxm->granted);
	rdmx_tx_pke_iov(pke, sizeof(pke->hdr.cts), NULL, 0, 0, 0);
	rdmx_tx_ctrl_post(ep, pke);
}

/* Raises the limit to a window past what arrived. */
static void rdmx_long_grant(struct rdmx_ep *ep, struct rdmx_rxm *rxm)
{
	rxm->granted = RDMX_MIN(rxm->end, rxm->got + g_rdmx_params.cts_window);
	rdmx_long_send_cts(ep, rxm);
}

/*
 * Asks the device to read the message into the receive; false if it
 * cannot. A device whose reads reach only this host reads only a peer
 * shown there (rdmx_peer_on_host), and checks the key against what its
 * handshake told of it (its pid, the session).
 */
static bool rdmx_long_read(struct rdmx_ep *ep, struct rdmx_rxm *rxm)
{
	struct iovec local[RDMX_IOV_LIMIT], remote[RDMX_WIRE_READ_SEGS];
	size_t nl = rdmx_iov_slice(local, rxm->rxe->iov, rxm->rxe->iov_cnt, 0, rxm->end);
	size_t nr = rdmx_iov_slice(remote, rxm->remote, rxm->remote_cnt, 0, rxm->end);
	const struct rdmx_hs *hs = &rxm->peer->hs;
	struct rdmx_dev_rkey key = { .peer = {
		.host = rdmx_peer_on_host(ep, rxm->peer) ? hs->peer_host : 0,
		.session = rdmx_hs_bind(hs, false),
		.pid = hs->peer_pid,
	} };
	struct rdmx_dev *dev = rdmx_lane_read_dev(&ep->lanes, &rxm->peer->lane);
	int ret;

	if (!(dev->caps.flags & RDMX_DEV_CAP_RDMA_READ))
		return false;
	if (dev->caps.read_host && !key.peer.host) {
		RDMX_DBG(FI_LOG_EP_DATA, "long-read from a peer not shown on this host: "
			 "clear to send\n");
		return false;
	}
	memcpy(key.wire, rxm->rkey, sizeof(key.wire));
	ret = dev->ops->post_read(dev, rdmx_lane_read_ah(&rxm->peer->lane), local, nl,
				  remote, nr, &key, (uintptr_t) rxm);
	if (ret) {
		RDMX_DBG(FI_LOG_EP_DATA, "long-read refused (%d): clear to send\n", ret);
		return false;
	}
	rxm->reading = true;
	return true;
}

/* A receive took the long message of rxm: clear the sender to send. */
static void rdmx_long_matched(struct rdmx_ep *ep, struct rdmx_rxm *rxm)
{
	if (rxm->discard)
		rxm->end = 0;
	if (rxm->end && rxm->remote_cnt && rdmx_long_read(ep, rxm))
		return;
	rdmx_long_grant(ep, rxm);
	if (!rxm->end)
		rdmx_rxm_place(ep, rxm, 0, NULL, 0);
}

/*
 * A receive took the unexpected long message of rxm, or FI_DISCARD
 * dropped it: it held no bytes, so its entry goes, and the sender is
 * cleared to send (nothing, when dropped) or read.
 */
static void rdmx_long_taken(struct rdmx_ep *ep, struct rdmx_rxm *rxm, struct rdmx_rxe *rxe)
{
	rdmx_rxm_take(ep, rxm, rxe);
	rdmx_rxm_drop_ux(ep, rxm);
	rdmx_long_matched(ep, rxm);
}

static void rdmx_long_discard(struct rdmx_ep *ep, struct rdmx_rxm *rxm)
{
	rxm->discard = true;
	rdmx_rxm_drop_ux(ep, rxm);
	rdmx_long_matched(ep, rxm);
}

void rdmx_long_start(struct rdmx_ep *ep, struct rdmx_peer *peer,
		     const struct rdmx_pkt *pkt)
{
	struct rdmx_rxe *rxe = NULL;
	struct rdmx_rxm *rxm = rdmx_rxm_new(ep, peer, pkt, &rdmx_long_rxm_ops);
	int segs, err = 0;

	if (!rxm) {
		/* An answer's read fails here: the target asked for no DACK. */
		if (pkt->flags & RDMX_PKT_RMA_RESP)
			rdmx_rma_resp_lost(ep, peer, pkt, FI_ENOMEM);
		rdmx_dack_send(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id, FI_ENOMEM);
		return;
	}
	if (pkt->flags & RDMX_PKT_READ) {
		segs = rdmx_wire_read_decode(pkt->payload, pkt->payload_len, pkt->msg_len,
					     rxm->rkey, rxm->remote);
		if (segs > 0)
			rxm->remote_cnt = (size_t) segs;
		else
			ep->stats.rx_malformed++;	/* credit it is, then */
	}
	if (pkt->flags & (RDMX_PKT_RMA | RDMX_PKT_RMA_RESP)) {
		rxe = rdmx_rma_rxe(ep, peer, pkt, &rxm->kid, &err);
	} else if (!ep->rx_comp) {
		ep->stats.rx_no_recv++;
		err = FI_EOPNOTSUPP;
	} else {
		rxe = rdmx_recv_match(ep, pkt->flags, rdmx_peer_src(peer), pkt->tag,
				      pkt->msg_len, &rxm->kid);
	}
	if (!err && !rdmx_rxm_attach(ep, rxm, rxe, 0))
		err = FI_ENOMEM;
	if (err) {
		/*
		 * Nobody will take it: the sender is told to send nothing, and
		 * a sender waiting for delivery that it was not delivered.
		 */
		rdmx_dack_send(ep, peer, rxm->pkt_flags, rxm->msg_id, rxm->tx_id, err);
		rxm->pkt_flags &= ~RDMX_PKT_DACK_REQ;
		rdmx_long_discard(ep, rxm);
		return;
	}
	if (rxe)
		rdmx_long_matched(ep, rxm);
}

void rdmx_long_data(struct rdmx_ep *ep, struct rdmx_peer *peer,
		    const struct rdmx_pkt *pkt)
{
	struct rdmx_rxm *rxm = rdmx_rxm_by_id(ep, pkt->rx_id);
	bool last;

	if (!rxm || rxm->peer != peer || rxm->msg_id != pkt->msg_id ||
	    rxm->type != RDMX_PKT_RTS || pkt->offset + pkt->payload_len > rxm->granted) {
		ep->stats.rx_malformed++;
		return;
	}
	last = rxm->got + pkt->payload_len >= rxm->end;
	rdmx_rxm_place(ep, rxm, pkt->offset, pkt->payload, pkt->payload_len);
	if (!last && rxm->granted < rxm->end &&
	    rxm->granted - rxm->got <= g_rdmx_params.cts_window / 2)
		rdmx_long_grant(ep, rxm);
}

void rdmx_long_read_done(struct rdmx_ep *ep, struct rdmx_rxm *rxm,
			 enum rdmx_dev_status status)
{
	rxm->reading = false;
	if (rxm->dead) {
		rdmx_rxm_free(ep, rxm);
		return;
	}
	if (status != RDMX_DEV_OK) {
		RDMX_INFO(FI_LOG_EP_DATA, "long-read failed (%s): clear to send\n",
			  rdmx_dev_status_str(status));
		rdmx_long_grant(ep, rxm);
		return;
	}
	ep->stats.rx_long_reads++;
	/* All bytes are in: the sender is told to send nothing more. */
	rxm->end = 0;
	rxm->granted = 0;
	rdmx_long_send_cts(ep, rxm);
	rdmx_rxm_place(ep, rxm, 0, NULL, 0);
}

/* The device finished rxm's CTS. */
static void rdmx_long_cts_done(struct rdmx_ep *ep, struct rdmx_rxm *rxm)
{
	if (rxm->dead) {
		rdmx_rxm_free(ep, rxm);
	} else if (rxm->cts_again) {
		rxm->cts_again = false;
		rdmx_long_send_cts(ep, rxm);
	}
}

/* The device failed rxm's CTS with err. */
static void rdmx_long_cts_failed(struct rdmx_ep *ep, struct rdmx_rxm *rxm, int err)
{
	if (!rxm->dead)
		rdmx_rxm_abort(ep, rxm, err, "its clear-to-send failed");
}

static const struct rdmx_rxm_ops rdmx_long_rxm_ops = {
	.matched = rdmx_long_taken,
	.discard = rdmx_long_discard,
	.cts_done = rdmx_long_cts_done,
	.cts_failed = rdmx_long_cts_failed,
};
