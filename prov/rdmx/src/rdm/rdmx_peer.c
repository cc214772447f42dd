/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: peers, one per remote endpoint (see rdmx_peer.h): made on first
 * use, found by AV address, told of the application's AV. Where they
 * end is rdmx_peer_anon.c's.
 */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_conn.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_rx.h"

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

struct rdmx_peer *rdmx_peer_of_ah(struct rdmx_ep *ep, struct rdmx_ah *ah,
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

void rdmx_peer_anon_end(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	peer->anon = false;
	ep->anon_peers--;
	rdmx_dlist_remove(&peer->anon_link);
	rdmx_budget_credit(&ep->budget, sizeof(*peer));
}

/* rdmx_peer_get of an address without a peer yet. */
static RDMX_COLD int rdmx_peer_make(struct rdmx_ep *ep, fi_addr_t addr, struct rdmx_peer **peer_p)
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

int rdmx_peer_get(struct rdmx_ep *ep, fi_addr_t addr, struct rdmx_peer **peer_p)
{
	struct rdmx_peer *peer = rdmx_peer_find(ep, addr);

	/* The AV's remove forgets the peer (rdmx_peer_forget): one found is in it. */
	if (!peer)
		return rdmx_peer_make(ep, addr, peer_p);
	*peer_p = peer;
	return 0;
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

void rdmx_peer_anon_heard(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
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

void rdmx_peer_notify(struct rdmx_ep *ep, struct rdmx_peer *peer, int err)
{
	if (ep->peer_cb)
		ep->peer_cb(&ep->ep_fid, peer->addr,
			    (enum fi_rdmx_peer_state) peer->hs.state, err, ep->peer_cb_arg);
}
