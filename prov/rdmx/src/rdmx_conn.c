/* rdmx: wireup and the endpoint's side of the handshake (see rdmx_conn.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_conn.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_rx.h"
#include "rdmx_tx.h"

/* How often progress looks at the handshake timers. */
#define RDMX_CONN_TICK_NS	1000000ULL

static void rdmx_conn_send(void *ctx, const struct rdmx_hs_msg *msg)
{
	struct rdmx_peer *peer = ctx;
	struct rdmx_ep *ep = peer->ep;
	struct rdmx_pke *pke = rdmx_pool_alloc(&ep->pke_pool);

	if (!pke) {
		/* The handshake's own timer sends it again. */
		ep->stats.eagain++;
		return;
	}
	rdmx_tx_pke_init(pke, NULL, peer, true);
	rdmx_wire_hs_encode(&pke->hdr.hs, msg);
	rdmx_tx_pke_iov(pke, sizeof(pke->hdr.hs), NULL, 0, 0, 0);
	rdmx_tx_ctrl_post(ep, pke);
}

/* Sends what waited, in order, while the device takes it. */
static void rdmx_conn_replay(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	struct rdmx_dlist *it;

	while ((it = peer->pending.next) != &peer->pending && !rdmx_rnr_blocked(peer)) {
		struct rdmx_txe *txe = rdmx_container_of(it, struct rdmx_txe, link);

		int ret = rdmx_tx_start(ep, txe, it->next != &peer->pending);

		if (ret == -FI_EAGAIN)
			return;		/* the device is full: the next progress goes on */
		rdmx_dlist_remove(it);
		txe->deferred = false;
		peer->pending_cnt--;
		/* A completion level the peer turned out not to support. */
		if (ret)
			rdmx_tx_abandon(ep, txe, -ret, "the peer cannot acknowledge delivery");
	}
}

/*
 * The session with the peer is over (it disconnected, restarted or starts
 * a new one): messages being received from it fail, packets held for
 * order go, sends under way fail without a word to it, the device ends
 * its own session, and both directions start from message 0 again, as
 * the peer's do. Sends not yet started stay for the next session.
 */
static void rdmx_conn_reset(struct rdmx_ep *ep, struct rdmx_peer *peer, int err,
			    const char *why)
{
	while (!rdmx_dlist_empty(&peer->rx_msgs))
		rdmx_rxm_abort(ep, rdmx_container_of(peer->rx_msgs.next, struct rdmx_rxm, link),
			       err, why);
	rdmx_order_drain(peer);
	rdmx_tx_peer_reset(ep, peer, err, why);
	if (ep->dev->ops->ah_reset)
		ep->dev->ops->ah_reset(ep->dev, peer->ah);
	peer->tx_msg_id = 0;
	peer->rx_msg_id = 0;
}

static void rdmx_conn_event(void *ctx, enum rdmx_hs_event ev, int err)
{
	struct rdmx_peer *peer = ctx;
	struct rdmx_ep *ep = peer->ep;

	switch (ev) {
	case RDMX_HS_EV_CONNECTED:
		RDMX_INFO(FI_LOG_EP_CTRL, "peer fi_addr %lu connected, protocol %u\n",
			  (unsigned long) peer->addr, peer->hs.version);
		rdmx_conn_replay(ep, peer);
		rdmx_peer_notify(ep, peer, 0);
		break;
	case RDMX_HS_EV_DISCONNECTED:
		RDMX_WARN(FI_LOG_EP_CTRL, "peer fi_addr %lu disconnected: %s\n",
			  (unsigned long) peer->addr, fi_strerror(err));
		rdmx_conn_reset(ep, peer, err, "its peer was disconnected");
		rdmx_conn_flush(ep, peer, err);
		rdmx_peer_notify(ep, peer, err);
		break;
	case RDMX_HS_EV_RESTARTED:
		RDMX_INFO(FI_LOG_EP_CTRL, "peer fi_addr %lu restarted or starts over\n",
			  (unsigned long) peer->addr);
		rdmx_conn_reset(ep, peer, FI_ECONNRESET, "its peer restarted");
		break;
	}
}

static const struct rdmx_hs_ops rdmx_conn_hs_ops = {
	.send = rdmx_conn_send,
	.event = rdmx_conn_event,
};

void rdmx_conn_ep_init(struct rdmx_ep *ep)
{
	uint64_t incarnation = rdmx_random64();
	uint64_t retry = g_rdmx_params.hs_retry_ms * 1000000ULL;

	ep->hs_local = (struct rdmx_hs_local) {
		.probe_version = RDMX_HS_PROBE_VERSION,
		.proto_min = RDMX_PROTO_LEGACY,
		.proto_max = RDMX_PROTO_VERSION,
		.features = RDMX_FEAT_DELIVERY_ACK,
		.incarnation = incarnation | 1,
	};
	ep->hs_cfg = (struct rdmx_hs_cfg) {
		.retry_ns = retry,
		/* As long as swsrd waits before it calls a peer unreachable. */
		.tries = (uint32_t) RDMX_MAX(g_rdmx_params.unreach_ms * 1000000ULL / retry, 1),
		.probes = RDMX_HS_PROBES,
		.ping_interval_ns = g_rdmx_params.ping_interval_ms * 1000000ULL,
		.ping_timeout_ns = g_rdmx_params.ping_timeout_ms * 1000000ULL,
		.ping_retries = (uint32_t) g_rdmx_params.ping_retries,
	};
	rdmx_dlist_init(&ep->conn_peers);
	ep->conn_next = 0;
}

void rdmx_conn_peer_init(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	peer->ep = ep;
	rdmx_hs_init(&peer->hs, &ep->hs_local, &ep->hs_cfg, &rdmx_conn_hs_ops, peer);
	rdmx_dlist_init(&peer->pending);
	rdmx_dlist_init(&peer->conn_link);
	peer->pending_cnt = 0;
}

/* Puts peer among those whose timers progress looks at. */
static void rdmx_conn_watch(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	if (rdmx_dlist_empty(&peer->conn_link))
		rdmx_dlist_insert_tail(&ep->conn_peers, &peer->conn_link);
}

bool rdmx_conn_ready(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	if (peer->hs.state == RDMX_HS_CONNECTED && rdmx_dlist_empty(&peer->pending))
		return true;
	if (peer->hs.state == RDMX_HS_IDLE || peer->hs.state == RDMX_HS_DISCONNECTED) {
		rdmx_conn_watch(ep, peer);
		rdmx_hs_connect(&peer->hs, rdmx_clock_ns());
	}
	return false;
}

bool rdmx_conn_current(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	switch (peer->hs.state) {
	case RDMX_HS_PROBING:
	case RDMX_HS_CONNECTED:
		return true;
	case RDMX_HS_RESET_SENT:
		return false;
	default:
		(void) rdmx_conn_ready(ep, peer);
		return false;
	}
}

int rdmx_conn_defer(struct rdmx_ep *ep, struct rdmx_peer *peer, struct rdmx_txe *txe)
{
	if (peer->pending_cnt >= g_rdmx_params.pending_max)
		return -FI_EAGAIN;
	(void) ep;
	txe->deferred = true;
	rdmx_dlist_insert_tail(&peer->pending, &txe->link);
	peer->pending_cnt++;
	return 0;
}

void rdmx_conn_recv(struct rdmx_ep *ep, struct rdmx_peer *peer, const void *buf)
{
	struct rdmx_hs_msg msg;

	rdmx_wire_hs_decode(buf, &msg);
	rdmx_conn_watch(ep, peer);
	rdmx_hs_recv(&peer->hs, &msg, rdmx_clock_ns());
}

void rdmx_conn_heard(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	if (peer->hs.state == RDMX_HS_CONNECTED)
		rdmx_hs_heard(&peer->hs, ep->now);
}

void rdmx_conn_progress(struct rdmx_ep *ep)
{
	struct rdmx_dlist *it, *next;

	if (ep->now < ep->conn_next)
		return;
	ep->conn_next = ep->now + RDMX_CONN_TICK_NS;
	for (it = ep->conn_peers.next; it != &ep->conn_peers; it = next) {
		struct rdmx_peer *peer = rdmx_container_of(it, struct rdmx_peer, conn_link);

		next = it->next;
		rdmx_hs_timer(&peer->hs, ep->now);
		/* Sends waiting for a DACK: is the silent peer still there? */
		if (peer->dack_awaited)
			rdmx_hs_probe(&peer->hs, ep->now, ep->hs_cfg.retry_ns);
		if (peer->hs.state == RDMX_HS_CONNECTED && !rdmx_dlist_empty(&peer->pending))
			rdmx_conn_replay(ep, peer);
	}
}

void rdmx_conn_flush(struct rdmx_ep *ep, struct rdmx_peer *peer, int err)
{
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(&peer->pending))) {
		struct rdmx_txe *txe = rdmx_container_of(it, struct rdmx_txe, link);

		txe->deferred = false;
		peer->pending_cnt--;
		rdmx_tx_abandon(ep, txe, err, err == FI_ECANCELED ?
				"canceled before its peer was connected" :
				"its peer could not be connected");
	}
}
