/*
 * rdmx: send-after-send order (FI_ORDER_SAS) per peer. Every message a
 * sender posts to a peer takes the next msg_id; the receiver matches
 * messages in msg_id order, whatever order their packets arrive in (the
 * device is unordered, and loss recovery reorders further).
 *
 * A message's first packet to arrive "starts" it when its msg_id is the
 * next one expected: it is matched (or queued unexpected) and the
 * expected msg_id moves on. A packet of a later message is copied onto
 * the peer's ooo list, sorted by msg_id, and taken when its turn comes;
 * its device buffer goes back at once. A packet of an earlier message is
 * a further segment of a medium message (or a VOID for a message that
 * had started); anything else there is a duplicate and dropped.
 *
 * The ooo list is empty unless packets overtook each other; what it can
 * hold is bounded by the packets a sender may have in flight to us (the
 * swsrd window, or the SRD device's). Per-peer state: two msg_ids and a
 * list head (24 bytes).
 */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rx.h"

/* A packet waiting for its message's turn, copied with its payload. */
struct rdmx_ooo {
	struct rdmx_dlist	link;		/* on rdmx_peer.ooo */
	struct rdmx_pkt		pkt;		/* payload points to bytes */
	uint8_t			bytes[];
};

/* How far msg_id is past the next message expected (negative: before). */
static int32_t rdmx_order_ahead(const struct rdmx_peer *peer, uint32_t msg_id)
{
	return (int32_t) (msg_id - peer->rx_msg_id);
}

/* Keeps a packet of a later message, in msg_id order. */
static void rdmx_order_hold(struct rdmx_ep *ep, struct rdmx_peer *peer,
			    const struct rdmx_pkt *pkt)
{
	struct rdmx_ooo *ooo = malloc(sizeof(*ooo) + pkt->payload_len);
	int32_t ahead = rdmx_order_ahead(peer, pkt->msg_id);
	struct rdmx_dlist *pos = peer->ooo.prev;

	if (!ooo) {
		ep->stats.rx_dropped++;
		RDMX_WARN(FI_LOG_EP_DATA, "out of memory: packet of a later message dropped\n");
		return;
	}
	ooo->pkt = *pkt;
	if (pkt->payload_len)
		memcpy(ooo->bytes, pkt->payload, pkt->payload_len);
	ooo->pkt.payload = ooo->bytes;
	/* Walk back past later messages; arrivals are mostly in order. */
	while (pos != &peer->ooo &&
	       rdmx_order_ahead(peer, rdmx_container_of(pos, struct rdmx_ooo,
							link)->pkt.msg_id) > ahead)
		pos = pos->prev;
	rdmx_dlist_insert_tail(pos->next, &ooo->link);
	ep->stats.rx_reordered++;
}

/* The first packet of the next message: hands it to its protocol. */
static bool rdmx_order_start(struct rdmx_ep *ep, struct rdmx_peer *peer,
			     const struct rdmx_pkt *pkt, size_t rx_buf)
{
	peer->rx_msg_id++;
	switch (pkt->type) {
	case RDMX_PKT_EAGER:
		return rdmx_eager_start(ep, peer, pkt, rdmx_peer_src(peer), rx_buf);
	case RDMX_PKT_MEDIUM:
		rdmx_medium_start(ep, peer, pkt);
		return false;
	default:
		rdmx_long_start(ep, peer, pkt);
		return false;
	}
}

/* A packet of a message that already started. */
static void rdmx_order_behind(struct rdmx_ep *ep, struct rdmx_peer *peer,
			      const struct rdmx_pkt *pkt)
{
	struct rdmx_rxm *rxm;

	if (pkt->type == RDMX_PKT_MEDIUM) {
		rdmx_medium_more(ep, peer, pkt);
	} else if (pkt->flags & RDMX_PKT_VOID) {
		rxm = rdmx_rxm_find(peer, pkt->msg_id);
		if (rxm)
			rdmx_rxm_abort(ep, rxm, FI_EIO, "the sender gave the message up");
	} else {
		ep->stats.rx_stale++;
	}
}

/* Takes the held packets whose turn has come. */
static void rdmx_order_release(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	while (!rdmx_dlist_empty(&peer->ooo)) {
		struct rdmx_ooo *ooo = rdmx_container_of(peer->ooo.next,
							 struct rdmx_ooo, link);
		int32_t ahead = rdmx_order_ahead(peer, ooo->pkt.msg_id);

		if (ahead > 0)
			return;
		rdmx_dlist_remove(&ooo->link);
		if (ahead == 0)
			rdmx_order_start(ep, peer, &ooo->pkt, RDMX_RX_BUF_NONE);
		else
			rdmx_order_behind(ep, peer, &ooo->pkt);
		free(ooo);
	}
}

bool rdmx_order_recv(struct rdmx_ep *ep, struct rdmx_peer *peer,
		     const struct rdmx_pkt *pkt, size_t rx_buf)
{
	int32_t ahead = rdmx_order_ahead(peer, pkt->msg_id);
	bool keep;

	if (ahead > 0) {
		rdmx_order_hold(ep, peer, pkt);
		return false;
	}
	if (ahead < 0) {
		rdmx_order_behind(ep, peer, pkt);
		return false;
	}
	keep = rdmx_order_start(ep, peer, pkt, rx_buf);
	if (!rdmx_dlist_empty(&peer->ooo))
		rdmx_order_release(ep, peer);
	return keep;
}

void rdmx_order_drain(struct rdmx_peer *peer)
{
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(&peer->ooo)))
		free(rdmx_container_of(it, struct rdmx_ooo, link));
}
