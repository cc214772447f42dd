/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: send-after-send order (FI_ORDER_SAS) per peer. Every message a
 * sender posts to a peer takes the next msg_id; the receiver matches
 * messages in msg_id order, whatever order their packets arrive in (the
 * device is unordered, and loss recovery reorders further).
 *
 * A message's first packet to arrive "starts" it when its msg_id is the
 * next one expected: it is matched (or queued unexpected) and the
 * expected msg_id moves on. A packet of a later message is held on the
 * peer's ooo list, sorted by msg_id, and taken when its turn comes. A
 * packet of an earlier message is
 * a further segment of a medium message (or a VOID for a message that
 * had started); anything else there is a duplicate and dropped.
 *
 * The ooo list is empty unless packets overtook each other. What it
 * holds is charged to the endpoint's receive budget: a packet is copied
 * into a block of one of two sizes (small packets, and any packet up to
 * a receive buffer) recycled through rdmx_cache, so its device buffer
 * goes back at once and a burst of reordering does not call malloc per
 * packet. Past the budget the packet stays in its own receive buffer
 * instead: nothing is allocated, and the device, short of that buffer,
 * refuses packets (RNR) once every buffer is kept, so senders back off.
 * Order keeps at most half the buffers that way, so the packets that
 * fill the gap always find one. A device that asks before it
 * acknowledges (udp, verbs: rdmx_order_admit) refuses a later message's
 * packet with RNR before that point, so the sender sends it again; only
 * on efa, which acknowledges in hardware, is a packet past it dropped
 * and counted (its message and those after it from that peer then wait
 * until the session ends). Such a device also refuses a peer more than
 * a quarter of what order keeps: one that fills the budget and then
 * sends packets of messages that never come (a msg_id far ahead) would
 * otherwise take every kept buffer until its session ends, and the other
 * peers' packets that overtook one another would be refused with it.
 * Per-peer state: two msg_ids, a list head and its kept buffers (28
 * bytes).
 */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rx.h"

/* Payload bytes of a small block: control packets and small messages. */
#define RDMX_ORDER_SMALL	256
/* Free blocks kept for reuse, per size. */
#define RDMX_ORDER_SPARE	32
/* Of the receive buffers order may keep, one peer is admitted this share. */
#define RDMX_ORDER_PEER_SHARE	4

/* A packet waiting for its message's turn. */
struct rdmx_ooo {
	struct rdmx_dlist	link;		/* on rdmx_peer.ooo */
	struct rdmx_pkt		pkt;		/* payload: bytes, or its buffer */
	struct rdmx_cache	*cache;		/* the block's, or NULL: in its
						   receive buffer rx_buf */
	size_t			rx_buf;
	uint8_t			bytes[];	/* blocks: the payload */
};

/*
 * A block's charge covers the unexpected entry its packet may become
 * when its turn comes, so that entry always fits in what the block gives
 * back (rdmx_order_take).
 */
_Static_assert(sizeof(struct rdmx_ooo) >= sizeof(struct rdmx_unexp),
	       "an ooo block costs less than the entry it becomes");

void rdmx_order_construct(struct rdmx_ep *ep)
{
	rdmx_cache_construct(&ep->ooo_small, sizeof(struct rdmx_ooo) + RDMX_ORDER_SMALL,
			     RDMX_ORDER_SPARE, &ep->budget);
	rdmx_cache_construct(&ep->ooo_large, sizeof(struct rdmx_ooo) + ep->rxb.size,
			     RDMX_ORDER_SPARE, &ep->budget);
}

void rdmx_order_destruct(struct rdmx_ep *ep)
{
	rdmx_cache_destruct(&ep->ooo_small);
	rdmx_cache_destruct(&ep->ooo_large);
	free(ep->ooo_bufs);
	ep->ooo_bufs = NULL;
}

/* How far msg_id is past the next message expected (negative: before). */
static int32_t rdmx_order_ahead(const struct rdmx_peer *peer, uint32_t msg_id)
{
	return (int32_t) (msg_id - peer->rx_msg_id);
}

bool rdmx_order_admit(struct rdmx_ep *ep, const struct rdmx_peer *peer,
		      const struct rdmx_pkt *pkt)
{
	size_t margin = RDMX_RX_BATCH * ep->rxb.size;
	int32_t ahead;

	if (!peer || (pkt->type != RDMX_PKT_EAGER && pkt->type != RDMX_PKT_MEDIUM &&
		      pkt->type != RDMX_PKT_RTS))
		return true;
	ahead = rdmx_order_ahead(peer, pkt->msg_id);
	/* A further segment of a message under way: its room is taken. */
	if (ahead < 0)
		return true;
	/*
	 * A later message: a copy within the budget, else a buffer kept.
	 * A peer's share is checked here only, where a refusal is an RNR:
	 * one poll may hand up a batch of its packets past it.
	 */
	if (ahead > 0)
		return rdmx_budget_fits_bulk(&ep->budget, margin + ep->rxb.size) ||
		       (ep->ooo_kept + RDMX_RX_BATCH < ep->rxb.cnt / 2 &&
			peer->ooo_kept < ep->rxb.cnt / 2 / RDMX_ORDER_PEER_SHARE);
	/* The next message: an eager one waits in its buffer if need be. */
	if (pkt->type == RDMX_PKT_EAGER)
		return true;
	if (!rdmx_budget_fits(&ep->budget, margin + sizeof(struct rdmx_rxm) +
			      sizeof(struct rdmx_unexp)))
		return false;
	/*
	 * A medium one with no receive waiting is copied whole; RMA lands
	 * in its region or its read's buffers, never copied.
	 */
	return pkt->type == RDMX_PKT_RTS || (pkt->flags & (RDMX_PKT_RMA | RDMX_PKT_RMA_RESP)) ||
	       rdmx_match_posted_find(pkt->flags & RDMX_PKT_TAGGED ? &ep->tag_q : &ep->msg_q,
				      rdmx_peer_src(peer), pkt->tag) ||
	       rdmx_budget_fits_bulk(&ep->budget, margin + pkt->msg_len);
}

/* A copy of pkt in a charged block; NULL past the budget. */
static struct rdmx_ooo *rdmx_order_copy(struct rdmx_ep *ep, const struct rdmx_pkt *pkt)
{
	struct rdmx_cache *cache = pkt->payload_len <= RDMX_ORDER_SMALL ?
				   &ep->ooo_small : &ep->ooo_large;
	struct rdmx_ooo *ooo = rdmx_cache_alloc(cache);

	if (!ooo)
		return NULL;
	ooo->pkt = *pkt;
	if (pkt->payload_len)
		memcpy(ooo->bytes, pkt->payload, pkt->payload_len);
	ooo->pkt.payload = ooo->bytes;
	ooo->cache = cache;
	ooo->rx_buf = RDMX_RX_BUF_NONE;
	return ooo;
}

/* pkt of peer left in its receive buffer rx_buf; NULL when order keeps enough. */
static struct rdmx_ooo *rdmx_order_keep(struct rdmx_ep *ep, struct rdmx_peer *peer,
					const struct rdmx_pkt *pkt, size_t rx_buf)
{
	struct rdmx_ooo *ooo;

	if (rx_buf == RDMX_RX_BUF_NONE || ep->ooo_kept >= ep->rxb.cnt / 2)
		return NULL;
	if (!ep->ooo_bufs)
		ep->ooo_bufs = calloc(ep->rxb.cnt, sizeof(*ep->ooo_bufs));
	if (!ep->ooo_bufs)
		return NULL;
	ooo = &ep->ooo_bufs[rx_buf];
	ooo->pkt = *pkt;
	ooo->cache = NULL;
	ooo->rx_buf = rx_buf;
	ep->ooo_kept++;
	peer->ooo_kept++;
	return ooo;
}

/*
 * Stops counting ooo (its block's charge, or its buffer among those
 * kept) before its packet is handed on.
 */
static void rdmx_order_uncount(struct rdmx_ep *ep, struct rdmx_peer *peer,
				struct rdmx_ooo *ooo)
{
	if (ooo->cache) {
		rdmx_cache_uncharge(ooo->cache, ooo);
	} else {
		ep->ooo_kept--;
		peer->ooo_kept--;
	}
}

/*
 * Gives back the block, or the receive buffer, of a packet handed on
 * (keep: the buffer now holds an unexpected message).
 */
static void rdmx_order_put(struct rdmx_ep *ep, struct rdmx_ooo *ooo, bool keep)
{
	if (ooo->cache)
		rdmx_cache_release_uncharged(ooo->cache, ooo);
	else if (!keep && ep->enabled)	/* a closing endpoint posts nothing */
		rdmx_rxbufs_repost(&ep->rxb, &ep->lanes, ooo->rx_buf);
}

/*
 * Keeps a packet of a later message, in msg_id order; true when it stays
 * in its buffer rx_buf.
 */
static bool rdmx_order_hold(struct rdmx_ep *ep, struct rdmx_peer *peer,
			    const struct rdmx_pkt *pkt, size_t rx_buf)
{
	int32_t ahead = rdmx_order_ahead(peer, pkt->msg_id);
	struct rdmx_dlist *pos = peer->ooo.prev;
	struct rdmx_ooo *ooo = rdmx_order_copy(ep, pkt);
	if (!ooo)
		ooo = rdmx_order_keep(ep, peer, pkt, rx_buf);
	if (!ooo) {
		ep->stats.rx_dropped++;
		rdmx_budget_refused(&ep->budget, "packet of a later message", pkt->payload_len);
		return false;
	}
	/* Walk back past later messages; arrivals are mostly in order. */
	while (pos != &peer->ooo &&
	       rdmx_order_ahead(peer, rdmx_container_of(pos, struct rdmx_ooo,
							link)->pkt.msg_id) > ahead)
		pos = pos->prev;
	rdmx_dlist_insert_tail(pos->next, &ooo->link);
	ep->stats.rx_reordered++;
	return !ooo->cache;
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

/*
 * Hands a held packet to its message; its block's charge is given back
 * first, so what the packet becomes (an unexpected copy) fits in it.
 */
static void rdmx_order_take(struct rdmx_ep *ep, struct rdmx_peer *peer,
			    struct rdmx_ooo *ooo, bool start)
{
	bool keep = false;

	rdmx_order_uncount(ep, peer, ooo);
	if (start)
		keep = rdmx_order_start(ep, peer, &ooo->pkt,
					ooo->cache ? RDMX_RX_BUF_NONE : ooo->rx_buf);
	else
		rdmx_order_behind(ep, peer, &ooo->pkt);
	rdmx_order_put(ep, ooo, keep);
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
		rdmx_order_take(ep, peer, ooo, ahead == 0);
	}
}

/*
 * rdmx_order_recv of a packet ahead of its turn or behind it, or in turn
 * with packets held: out of line, so that the common packet's path saves
 * no registers for this one's.
 */
static RDMX_NOINLINE bool rdmx_order_other(struct rdmx_ep *ep, struct rdmx_peer *peer,
					   const struct rdmx_pkt *pkt, size_t rx_buf)
{
	int32_t ahead = rdmx_order_ahead(peer, pkt->msg_id);
	bool keep;

	if (ahead > 0)
		return rdmx_order_hold(ep, peer, pkt, rx_buf);
	if (ahead < 0) {
		rdmx_order_behind(ep, peer, pkt);
		return false;
	}
	keep = rdmx_order_start(ep, peer, pkt, rx_buf);
	rdmx_order_release(ep, peer);
	return keep;
}

bool rdmx_order_recv(struct rdmx_ep *ep, struct rdmx_peer *peer,
		     const struct rdmx_pkt *pkt, size_t rx_buf)
{
	/* In its turn, nothing held: almost every packet goes straight on. */
	if (!rdmx_order_ahead(peer, pkt->msg_id) && rdmx_dlist_empty(&peer->ooo))
		return rdmx_order_start(ep, peer, pkt, rx_buf);
	return rdmx_order_other(ep, peer, pkt, rx_buf);
}

void rdmx_order_drain(struct rdmx_peer *peer)
{
	struct rdmx_ep *ep = peer->ep;
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(&peer->ooo))) {
		struct rdmx_ooo *ooo = rdmx_container_of(it, struct rdmx_ooo, link);

		rdmx_order_uncount(ep, peer, ooo);
		rdmx_order_put(ep, ooo, false);
	}
}
