/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: where peers end (see rdmx_peer.h). A peer made for a sender
 * outside the AV may be let go to make room for another, once it holds
 * nothing of the application's; every peer goes at endpoint close. Both
 * end what the peer has under way on the send and receive sides, so
 * this file sits above them, called by progress and the endpoint's
 * close; rdmx_peer.c, below, makes and finds peers.
 */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_conn.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_rx.h"
#include "rdmx_tx.h"

/* Frees peer, off every list, with its device handles. */
static void rdmx_peer_free(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	if (peer->anon)
		rdmx_peer_anon_end(ep, peer);
	rdmx_rma_forget(ep, peer);
	rdmx_lane_fini(&ep->lanes, &peer->lane);
	peer->lane.nic_ah->context = NULL;
	ep->lanes.nic->ops->ah_destroy(ep->lanes.nic, peer->lane.nic_ah);
	free(peer);
}

/* Whether an unexpected message on list waits from source src. */
static bool rdmx_peer_unexp_from(const struct rdmx_dlist *list, fi_addr_t src)
{
	const struct rdmx_dlist *it;

	rdmx_dlist_foreach(list, it) {
		if (rdmx_container_of(it, const struct rdmx_unexp, link)->item.addr == src)
			return true;
	}
	return false;
}

/*
 * Whether peer holds something of the application's: a message from it
 * in pieces, held for order or waiting for a receive, a packet of a send
 * or receive of ours to it. Such a peer stays (the budget bounds what it
 * holds); one with only control packets out (a handshake answer being
 * retransmitted to a sender that never listens) may go.
 */
static bool rdmx_peer_in_use(const struct rdmx_ep *ep, const struct rdmx_peer *peer)
{
	fi_addr_t src = rdmx_peer_src(peer);

	if (!rdmx_dlist_empty(&peer->ooo) || !rdmx_dlist_empty(&peer->rx_msgs) ||
	    peer->pending_cnt || peer->dack_awaited || peer->answers ||
	    rdmx_tx_peer_busy(ep, peer))
		return true;
	for (size_t i = 0; i < ep->rxm_cap; i++) {
		if (ep->rxms[i] && ep->rxms[i]->peer == peer)
			return true;
	}
	return rdmx_peer_unexp_from(&ep->msg_q.unexp, src) ||
	       rdmx_peer_unexp_from(&ep->tag_q.unexp, src) ||
	       rdmx_peer_unexp_from(&ep->claimed, src);
}

/*
 * Frees an anonymous peer that holds nothing of the application's; its
 * sender starts over if it comes back. The device ends its session with
 * it at once: what we were still retransmitting to it would otherwise
 * keep the handle until the peer was found unreachable.
 */
static void rdmx_peer_evict(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	rdmx_tx_peer_forget(ep, peer);
	if (ep->lanes.nic->ops->ah_reset)
		ep->lanes.nic->ops->ah_reset(ep->lanes.nic, peer->lane.nic_ah);
	rdmx_dlist_remove(&peer->link);
	rdmx_dlist_remove(&peer->conn_link);
	rdmx_dlist_remove(&peer->retry_link);
	rdmx_peer_free(ep, peer);
}

/*
 * Room for one more anonymous peer: under the bound and in the budget,
 * or made by letting go of the least recently heard one that holds
 * nothing of the application's, among the RDMX_PEER_EVICT_SCAN heard
 * least recently (a check walks the endpoint's packets: a sender from
 * many ports must not make each of its packets walk them for every
 * peer). False when none can go.
 */
static bool rdmx_peer_anon_room(struct rdmx_ep *ep)
{
	struct rdmx_dlist *it;
	unsigned scanned = 0;

	if (ep->anon_peers < RDMX_PEER_ANON_MAX &&
	    rdmx_budget_fits(&ep->budget, sizeof(struct rdmx_peer)))
		return true;
	rdmx_dlist_foreach(&ep->anon_lru, it) {
		struct rdmx_peer *peer = rdmx_container_of(it, struct rdmx_peer, anon_link);

		if (scanned++ == RDMX_PEER_EVICT_SCAN)
			break;
		if (rdmx_peer_in_use(ep, peer))
			continue;
		rdmx_peer_evict(ep, peer);
		return rdmx_budget_fits(&ep->budget, sizeof(struct rdmx_peer));
	}
	rdmx_budget_refused(&ep->budget, "peer outside the AV", sizeof(struct rdmx_peer));
	return false;
}

void rdmx_peer_reclaim(struct rdmx_ep *ep)
{
	uint32_t n = RDMX_MIN(ep->ctrl_short, RDMX_PEER_EVICT_SCAN);
	struct rdmx_dlist *it, *next;

	ep->ctrl_short = 0;
	for (it = ep->anon_lru.next; n && it != &ep->anon_lru; it = next) {
		struct rdmx_peer *peer = rdmx_container_of(it, struct rdmx_peer, anon_link);

		next = it->next;
		if (!peer->hs_out || rdmx_peer_in_use(ep, peer))
			continue;
		rdmx_peer_evict(ep, peer);
		n--;
	}
}

struct rdmx_peer *rdmx_peer_anon(struct rdmx_ep *ep, const void *canon)
{
	struct rdmx_peer *peer;
	struct rdmx_ah *ah;

	if (!rdmx_peer_anon_room(ep) || ep->lanes.nic->ops->ah_create(ep->lanes.nic, canon, &ah))
		return NULL;
	peer = rdmx_peer_of_ah(ep, ah, canon);
	if (peer && !peer->anon && peer->addr == FI_ADDR_NOTAVAIL) {
		/* The room made above cannot be taken in between. */
		(void) rdmx_budget_charge(&ep->budget, sizeof(*peer));
		peer->anon = true;
		ep->anon_peers++;
		rdmx_dlist_insert_tail(&ep->anon_lru, &peer->anon_link);
	}
	return peer;
}

void rdmx_peer_destroy_all(struct rdmx_ep *ep, int err)
{
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(&ep->peer_list))) {
		struct rdmx_peer *peer = rdmx_container_of(it, struct rdmx_peer, link);

		rdmx_rnr_flush(ep, peer, err);
		rdmx_conn_flush(ep, peer, err);
		rdmx_order_drain(peer);
		rdmx_peer_free(ep, peer);
	}
	if (ep->peer_cap)
		memset(ep->peers, 0, ep->peer_cap * sizeof(*ep->peers));
	rdmx_order_destruct(ep);
}
