/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: stub peers (rdmx_conn.h), the part of wireup the send side
 * calls: whether a send may go now (else the handshake starts), and the
 * queue of sends that wait for it. What the handshake then says (replay,
 * session end) is rdmx_conn.c's, above the send side; a peer's
 * handshake reaches it through the ops rdmx_conn_ep_init gave the
 * endpoint (rdmx_hs_cfg.ops).
 */
#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_conn.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_tx.h"

void rdmx_conn_peer_init(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	peer->ep = ep;
	peer->pkt_max = ep->lanes.nic->caps.mtu;
	rdmx_hs_init(&peer->hs, &ep->hs_local, &ep->hs_cfg, ep->hs_cfg.ops, peer);
	rdmx_dlist_init(&peer->pending);
	rdmx_dlist_init(&peer->conn_link);
	peer->pending_cnt = 0;
}

void rdmx_conn_watch(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	if (rdmx_dlist_empty(&peer->conn_link))
		rdmx_dlist_insert_tail(&ep->conn_peers, &peer->conn_link);
}

void rdmx_conn_start(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	if (peer->hs.state == RDMX_HS_IDLE || peer->hs.state == RDMX_HS_DISCONNECTED) {
		rdmx_conn_watch(ep, peer);
		rdmx_hs_connect(&peer->hs, rdmx_clock_ns());
	}
}

int rdmx_conn_defer(struct rdmx_ep *ep, struct rdmx_peer *peer, struct rdmx_txe *txe)
{
	if (peer->pending_cnt >= g_rdmx_params.pending_max)
		return -FI_EAGAIN;
	txe->deferred = true;
	rdmx_dlist_insert_tail(&peer->pending, &txe->link);
	peer->pending_cnt++;
	/* The peer closed: the next progress fails it, not a timeout. */
	if (peer->hs.state == RDMX_HS_CLOSED) {
		rdmx_conn_watch(ep, peer);
		ep->conn_next = 0;
	}
	return 0;
}
