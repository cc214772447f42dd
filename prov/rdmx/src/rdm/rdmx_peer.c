/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: peers, one per remote endpoint (see rdmx_peer.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_conn.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_rx.h"
#include "rdmx_tx.h"

/* Grows the fi_addr index so addr fits; false when out of memory. */
static bool rdmx_peer_index_fit(struct rdmx_ep *ep, fi_addr_t addr)
{
	size_t cap = RDMX_MAX(ep->peer_cap * 2, 16);
	struct rdmx_peer **peers;

	if (addr < ep->peer_cap)
		return true;
	while (cap <= addr)
		cap *= 2;
	peers = realloc(ep->peers, cap * sizeof(*peers));
	if (!peers)
		return false;
	memset(peers + ep->peer_cap, 0, (cap - ep->peer_cap) * sizeof(*peers));
	ep->peers = peers;
	ep->peer_cap = cap;
	return true;
}

/* The peer of a device handle, made if it has none; takes over the ref. */
static struct rdmx_peer *rdmx_peer_of_ah(struct rdmx_ep *ep, struct rdmx_ah *ah,
					 const void *canon)
{
	struct rdmx_peer *peer = ah->context;

	if (peer) {
		/* The handle is shared: the peer already holds a reference. */
		ep->lanes.nic->ops->ah_destroy(ep->lanes.nic, ah);
		return peer;
	}
	peer = calloc(1, sizeof(*peer));
	if (!peer) {
		ep->lanes.nic->ops->ah_destroy(ep->lanes.nic, ah);
		return NULL;
	}
	rdmx_lane_init(&peer->lane, &ep->lanes, ah, canon);
	peer->addr = FI_ADDR_NOTAVAIL;
	rdmx_dlist_init(&peer->ooo);
	rdmx_dlist_init(&peer->rx_msgs);
	rdmx_dlist_init(&peer->dack_link);
	rdmx_dlist_init(&peer->anon_link);
	rdmx_rnr_peer_construct(peer);
	rdmx_conn_peer_init(ep, peer);
	ah->context = peer;
	rdmx_dlist_insert_tail(&ep->peer_list, &peer->link);
	return peer;
}

/* peer stops counting as anonymous: it joined the AV, or it goes. */
static void rdmx_peer_anon_end(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	peer->anon = false;
	ep->anon_peers--;
	rdmx_dlist_remove(&peer->anon_link);
	rdmx_budget_credit(&ep->budget, sizeof(*peer));
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
	    peer->pending_cnt || peer->dack_awaited || rdmx_tx_peer_busy(ep, peer))
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
	rdmx_peer_anon_end(ep, peer);
	rdmx_dlist_remove(&peer->link);
	rdmx_dlist_remove(&peer->conn_link);
	rdmx_dlist_remove(&peer->retry_link);
	rdmx_lane_fini(&ep->lanes, &peer->lane);
	peer->lane.nic_ah->context = NULL;
	ep->lanes.nic->ops->ah_destroy(ep->lanes.nic, peer->lane.nic_ah);
	free(peer);
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

int rdmx_peer_get(struct rdmx_ep *ep, fi_addr_t addr, struct rdmx_peer **peer_p)
{
	const void *canon = rdmx_addrs_lookup(ep->addrs, addr);
	struct rdmx_peer *peer;
	struct rdmx_ah *ah;
	bool heard;
	int ret;

	if (!canon)
		return -FI_EINVAL;
	if (!rdmx_peer_index_fit(ep, addr))
		return -FI_ENOMEM;
	if (ep->peers[addr]) {
		*peer_p = ep->peers[addr];
		return 0;
	}
	ret = ep->lanes.nic->ops->ah_create(ep->lanes.nic, canon, &ah);
	if (ret)
		return ret;
	/* A handle with a peer: a sender heard from before it joined. */
	heard = ah->context != NULL;
	peer = rdmx_peer_of_ah(ep, ah, canon);
	if (!peer)
		return -FI_ENOMEM;
	if (peer->addr == FI_ADDR_NOTAVAIL) {
		if (heard)
			rdmx_recv_ux_readdr(ep, rdmx_peer_src(peer), addr);
		peer->addr = addr;
	}
	if (peer->anon)
		rdmx_peer_anon_end(ep, peer);	/* the sender joined the AV */
	ep->peers[addr] = peer;
	*peer_p = peer;
	return 0;
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

bool rdmx_peer_on_host(const struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	struct rdmx_dev *dev = ep->lanes.nic;

	if (!rdmx_hs_same_host(&peer->hs))
		return false;
	if (rdmx_lane_here(&peer->lane))
		return true;	/* its shm queue is mapped: it is here */
	if (!dev->caps.read_host)
		return true;
	if (peer->where == RDMX_PEER_WHERE_UNKNOWN)
		peer->where = dev->ops->ah_local && dev->ops->ah_local(dev, peer->lane.nic_ah) ?
			      RDMX_PEER_WHERE_HERE : RDMX_PEER_WHERE_AWAY;
	return peer->where == RDMX_PEER_WHERE_HERE;
}

void rdmx_peer_heard(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	if (!peer->anon)
		return;
	rdmx_dlist_remove(&peer->anon_link);
	rdmx_dlist_insert_tail(&ep->anon_lru, &peer->anon_link);
}

struct rdmx_peer *rdmx_peer_find(const struct rdmx_ep *ep, fi_addr_t addr)
{
	return addr < ep->peer_cap ? ep->peers[addr] : NULL;
}

void rdmx_peer_forget(struct rdmx_ep *ep, fi_addr_t addr)
{
	struct rdmx_peer *peer = rdmx_peer_find(ep, addr);

	if (!peer)
		return;
	ep->peers[addr] = NULL;
	if (peer->addr == addr)
		peer->addr = FI_ADDR_NOTAVAIL;
	/*
	 * Sends queued to the peer (waiting for its handshake or for an RNR
	 * backoff) stay: small ones already completed to the application,
	 * which may remove an address right after a completion. The peer
	 * outlives the address, so they still go out in order, or fail
	 * through the handshake's and backoff's own limits.
	 */
	/* A later insert of the address may find a new endpoint there. */
	rdmx_hs_reopen(&peer->hs);
}

void rdmx_peer_destroy_all(struct rdmx_ep *ep, int err)
{
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(&ep->peer_list))) {
		struct rdmx_peer *peer = rdmx_container_of(it, struct rdmx_peer, link);

		rdmx_rnr_flush(ep, peer, err);
		rdmx_conn_flush(ep, peer, err);
		rdmx_order_drain(peer);
		if (peer->anon)
			rdmx_peer_anon_end(ep, peer);
		rdmx_lane_fini(&ep->lanes, &peer->lane);
		peer->lane.nic_ah->context = NULL;
		ep->lanes.nic->ops->ah_destroy(ep->lanes.nic, peer->lane.nic_ah);
		free(peer);
	}
	if (ep->peer_cap)
		memset(ep->peers, 0, ep->peer_cap * sizeof(*ep->peers));
	rdmx_order_destruct(ep);
}

void rdmx_peer_notify(struct rdmx_ep *ep, struct rdmx_peer *peer, int err)
{
	if (ep->peer_cb)
		ep->peer_cb(&ep->ep_fid, peer->addr,
			    (enum fi_rdmx_peer_state) peer->hs.state, err, ep->peer_cb_arg);
}
