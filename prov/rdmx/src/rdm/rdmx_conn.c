/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: wireup, the endpoint's side of the handshake (see rdmx_conn.h):
 * its packets, and what its outcomes do: waiting sends replayed, a
 * session's end for the sends and receives under way, the close notice.
 * It sits above the send and receive sides, which call only the stub's
 * half (rdmx_conn_stub.c).
 */
#include <endian.h>
#include <stdlib.h>
#include <unistd.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_conn.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_rx.h"
#include "rdmx_tx.h"

/* The smallest packet size a peer's rx_max can bring sends down to. */
#define RDMX_CONN_PKT_MIN	512

/* How often progress looks at the handshake timers. */
#define RDMX_CONN_TICK_NS	1000000ULL
/* Why sends to a peer that closed its endpoint fail. */
#define RDMX_CONN_CLOSED_WHY	"its peer closed its endpoint"

/*
 * Whether the handshake packet wire (len bytes) is already on its way to
 * peer. The device delivers it or reports it lost, so a copy would add
 * only one more packet held until then: a sender that fell silent would
 * collect one per retry of the handshake.
 */
static bool rdmx_conn_hs_out(const struct rdmx_ep *ep, const struct rdmx_peer *peer,
			     const struct rdmx_wire_hs *wire, size_t len)
{
	for (size_t i = 0; peer->hs_out && i < ep->pke_pool.count; i++) {
		const struct rdmx_pke *pke = rdmx_pool_at(&ep->pke_pool, i);

		if (pke->busy && pke->peer == peer && !pke->txe && !pke->rxm &&
		    pke->iov[0].iov_len == len && !memcmp(&pke->hdr.hs, wire, len))
			return true;
	}
	return false;
}

static void rdmx_conn_send(void *ctx, const struct rdmx_hs_msg *msg)
{
	struct rdmx_peer *peer = ctx;
	struct rdmx_ep *ep = peer->ep;
	struct rdmx_wire_hs wire;
	size_t len = rdmx_wire_hs_size(msg);
	struct rdmx_pke *pke;

	rdmx_wire_hs_encode(&wire, msg);
	if (rdmx_conn_hs_out(ep, peer, &wire, len))
		return;
	pke = rdmx_pool_alloc(&ep->pke_pool);
	if (!pke) {
		/*
		 * The handshake's own timer sends it again; meanwhile the
		 * endpoint lets go of an anonymous peer that may hold packets.
		 */
		ep->stats.eagain++;
		ep->ctrl_short++;
		return;
	}
	rdmx_tx_pke_init(pke, NULL, peer, true);
	memcpy(&pke->hdr.hs, &wire, len);
	rdmx_tx_pke_iov(pke, len, NULL, 0, 0, 0);
	peer->hs_out++;
	/* The endpoint's close waits for these (rdmx_conn_tx_done). */
	if (msg->type == RDMX_HS_CLOSE)
		ep->close_out++;
	rdmx_tx_ctrl_post(ep, pke);
}

/*
 * Sends what waited, in order, while the device takes it. Each send
 * leaves the queue before it starts: a medium send whose later segments
 * find no room puts the same link on the endpoint's tx_pending.
 */
static void rdmx_conn_replay(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	struct rdmx_dlist *it;

	while ((it = peer->pending.next) != &peer->pending && !rdmx_rnr_blocked(peer)) {
		struct rdmx_txe *txe = rdmx_container_of(it, struct rdmx_txe, link);
		struct rdmx_dlist *rest = it->next;
		int ret;

		rdmx_dlist_remove(it);
		txe->deferred = false;
		ret = rdmx_tx_start(ep, txe, rest != &peer->pending);
		if (ret == -FI_EAGAIN) {
			/* The device is full: first again at the next progress. */
			txe->deferred = true;
			rdmx_dlist_insert_tail(rest, it);
			return;
		}
		peer->pending_cnt--;
		/* A completion level the peer turned out not to support. */
		if (ret)
			rdmx_tx_abandon(ep, txe, -ret, "the peer cannot acknowledge delivery");
	}
}

/*
 * The session with the peer is over (it disconnected, restarted, starts
 * a new one or closed): messages being received from it fail, packets
 * held for order go, sends under way fail without a word to it (those a
 * closed peer may have received wait for the device's word), the device
 * ends its own session, and both directions start from message 0 again,
 * as the peer's do. Sends not yet started stay for the next session.
 */
static void rdmx_conn_reset(struct rdmx_ep *ep, struct rdmx_peer *peer, int err,
			    const char *why)
{
	rdmx_tx_peer_orphan(ep, peer);
	while (!rdmx_dlist_empty(&peer->rx_msgs))
		rdmx_rxm_abort(ep, rdmx_container_of(peer->rx_msgs.next, struct rdmx_rxm, link),
			       err, why);
	rdmx_order_drain(peer);
	/*
	 * A closing peer acknowledged what it received in the packet that
	 * carried its CLOSE, so the device has already finished those sends:
	 * it reports them before the ones ah_reset flushes.
	 */
	/* First: a chunk ended by the reset must not send the next into it. */
	rdmx_rma_forget(ep, peer);
	rdmx_tx_peer_reset(ep, peer, err, why, peer->hs.state == RDMX_HS_CLOSED);
	rdmx_lane_use_nic(&ep->lanes, &peer->lane);
	peer->tx_msg_id = 0;
	peer->rx_msg_id = 0;
}

/*
 * The largest packet to send the peer: what the path to it carries, or
 * what the peer said it receives if that is less. A peer that says less
 * than RDMX_CONN_PKT_MIN is not believed: a packet must hold a header
 * and data.
 */
static size_t rdmx_conn_pkt_max(const struct rdmx_peer *peer)
{
	size_t path = rdmx_lane_mtu(&peer->lane);
	size_t rx_max = peer->hs.peer_rx_max;

	if (!rx_max)
		return path;
	return RDMX_MIN(path, RDMX_MAX(rx_max, RDMX_CONN_PKT_MIN));
}

static void rdmx_conn_event(void *ctx, enum rdmx_hs_event ev, int err)
{
	struct rdmx_peer *peer = ctx;
	struct rdmx_ep *ep = peer->ep;

	switch (ev) {
	case RDMX_HS_EV_CONNECTED:
		rdmx_lane_use_shm(&ep->lanes, &peer->lane);
		peer->pkt_max = rdmx_conn_pkt_max(peer);
		RDMX_INFO(FI_LOG_EP_CTRL, "peer fi_addr %lu connected, protocol %u, "
			  "packets of %zu bytes by %s\n", (unsigned long) peer->addr,
			  peer->hs.version, peer->pkt_max, peer->lane.dev->ops->name);
		rdmx_conn_replay(ep, peer);
		rdmx_peer_notify(ep, peer, 0);
		break;
	case RDMX_HS_EV_DISCONNECTED:
		RDMX_WARN_WIRE(FI_LOG_EP_CTRL, "peer fi_addr %lu disconnected: %s\n",
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
	case RDMX_HS_EV_CLOSED:
		RDMX_INFO(FI_LOG_EP_CTRL, "peer fi_addr %lu closed its endpoint\n",
			  (unsigned long) peer->addr);
		rdmx_conn_reset(ep, peer, err, RDMX_CONN_CLOSED_WHY);
		rdmx_conn_flush(ep, peer, err);
		rdmx_peer_notify(ep, peer, err);
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
	uint64_t host = rdmx_lanes_host(&ep->lanes);
	struct rdmx_shm_addr shm = { 0 };

	if (ep->lanes.shm)
		ep->lanes.shm->ops->getname(ep->lanes.shm, &shm);

	ep->hs_local = (struct rdmx_hs_local) {
		.probe_version = RDMX_HS_PROBE_VERSION,
		.proto_min = RDMX_PROTO_LEGACY,
		.proto_max = RDMX_PROTO_VERSION,
		.features = RDMX_HS_FEATURES | (shm.token ? RDMX_HS_FEAT_SHM : 0) |
			    (ep->lanes.nic->caps.flags & RDMX_DEV_CAP_OTHER_PATHS ?
			     RDMX_HS_FEAT_PATHS : 0),
		.incarnation = incarnation | 1,
		.rx_max = (uint32_t) ep->rxb.size,
		/* A device that reads or queues only on this host names it. */
		.host = host,
		.pid = host ? (uint32_t) getpid() : 0,
		.shm_fd = shm.fd,
		.shm_token = shm.token,
	};
	ep->hs_cfg = (struct rdmx_hs_cfg) {
		.retry_ns = retry,
		/* As long as swsrd waits before it calls a peer unreachable. */
		.tries = (uint32_t) RDMX_MAX(g_rdmx_params.unreach_ms * 1000000ULL / retry, 1),
		.probes = RDMX_HS_PROBES,
		.ping_interval_ns = g_rdmx_params.ping_interval_ms * 1000000ULL,
		.ping_timeout_ns = g_rdmx_params.ping_timeout_ms * 1000000ULL,
		.ping_retries = (uint32_t) g_rdmx_params.ping_retries,
		.ops = &rdmx_conn_hs_ops,
	};
	rdmx_dlist_init(&ep->conn_peers);
	ep->conn_next = 0;
	ep->close_out = 0;
}

bool rdmx_conn_current(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	switch (peer->hs.state) {
	case RDMX_HS_PROBING:
	case RDMX_HS_CONNECTED:
		return true;
	case RDMX_HS_RESET_SENT:
	case RDMX_HS_CLOSED:	/* late packets of the session it closed */
		return false;
	default:
		rdmx_conn_start(ep, peer);
		return false;
	}
}

/*
 * A peer whose RESET or ACK showed it on this host with a shm queue: its
 * lane maps the queue now, before the peer can send by it (rdmx_lane.h).
 * On this host means as for long-read (rdmx_peer_on_host): a udp peer in
 * another network namespace stays on the NIC, as on another host. Its
 * NIC lane learns what the peer's device does: the window it takes, and
 * whether it takes packets from all our paths.
 */
static void rdmx_conn_lane(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	const struct rdmx_hs *hs = &peer->hs;
	struct rdmx_shm_addr addr = {
		.pid = hs->peer_pid,
		.fd = hs->peer_shm_fd,
		.token = hs->peer_shm_token,
	};

	rdmx_lane_peer(&ep->lanes, &peer->lane,
		       (hs->peer_features & RDMX_HS_FEAT_WINDOW ? RDMX_DEV_PEER_WIDE : 0) |
		       (hs->peer_features & RDMX_HS_FEAT_PATHS ? RDMX_DEV_PEER_PATHS : 0));
	if (addr.token && addr.pid && rdmx_peer_on_host(ep, peer))
		rdmx_lane_learn(&ep->lanes, &peer->lane, &addr, peer);
}

void rdmx_conn_recv(struct rdmx_ep *ep, struct rdmx_peer *peer, const void *buf,
		    size_t len)
{
	struct rdmx_hs_msg msg;

	rdmx_wire_hs_decode(buf, len, &msg);
	rdmx_conn_watch(ep, peer);
	rdmx_hs_recv(&peer->hs, &msg, rdmx_clock_ns());
	rdmx_conn_lane(ep, peer);
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
		else if (peer->hs.state == RDMX_HS_CLOSED)
			rdmx_conn_flush(ep, peer, FI_ECONNRESET);
	}
}

uint64_t rdmx_conn_due(const struct rdmx_ep *ep)
{
	uint64_t due = UINT64_MAX;
	const struct rdmx_dlist *it;

	rdmx_dlist_foreach(&ep->conn_peers, it) {
		const struct rdmx_peer *peer = rdmx_container_of(it, struct rdmx_peer, conn_link);

		if (peer->hs.deadline)
			due = RDMX_MIN(due, peer->hs.deadline);
		/* rdmx_hs_probe pings a silent CONNECTED peer, if no ping is out. */
		if (peer->dack_awaited && peer->hs.state == RDMX_HS_CONNECTED &&
		    !peer->hs.ping_out)
			due = RDMX_MIN(due, peer->hs.last_heard + ep->hs_cfg.retry_ns);
	}
	/* Their timers run at most once a tick (rdmx_conn_progress). */
	return due == UINT64_MAX ? due : RDMX_MAX(due, ep->conn_next);
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
				err == FI_ECONNRESET ? RDMX_CONN_CLOSED_WHY :
				"its peer could not be connected");
	}
}

size_t rdmx_conn_goodbye(struct rdmx_ep *ep)
{
	struct rdmx_dlist *it;
	size_t told = 0;

	rdmx_dlist_foreach(&ep->peer_list, it) {
		struct rdmx_peer *peer = rdmx_container_of(it, struct rdmx_peer, link);

		told += rdmx_hs_close(&peer->hs);
	}
	return told;
}

/* Whether pke is a CLOSE of ours. */
static bool rdmx_conn_is_close(const struct rdmx_pke *pke)
{
	return !pke->txe && !pke->rxm && pke->hdr.hs.base.type == RDMX_PKT_HS &&
	       le32toh(pke->hdr.hs.hs_type) == RDMX_HS_CLOSE;
}

/* rdmx_conn_tx_done of anything but a send's packet delivered. */
static RDMX_NOINLINE void rdmx_conn_tx_done_else(struct rdmx_ep *ep, struct rdmx_pke *pke,
						 enum rdmx_dev_status status)
{
	struct rdmx_peer *peer;

	/*
	 * A refused packet is sent again: only its last completion counts.
	 * A CLOSE that did not arrive (the peer closed too, or is gone) is
	 * no loss to report: nothing but the count waits for it.
	 */
	if (status != RDMX_DEV_RNR && rdmx_conn_is_close(pke)) {
		ep->close_out--;
		status = RDMX_DEV_OK;
	}
	/*
	 * A packet of a send that the peer's close flushed (what it had
	 * received it acknowledged first): the send fails as the peer's
	 * session ended, not as a local cancel.
	 */
	if (status == RDMX_DEV_FLUSHED && pke->peer &&
	    pke->peer->hs.state == RDMX_HS_CLOSED) {
		rdmx_tx_fail(ep, pke, FI_ECONNRESET, RDMX_CONN_CLOSED_WHY);
		return;
	}
	peer = pke->peer;
	rdmx_tx_done(ep, pke, status);
	/* The shm lane knows the peer's process gone: its session is over. */
	if (status == RDMX_DEV_UNREACH && peer && rdmx_lane_by_shm(&peer->lane))
		rdmx_hs_lost(&peer->hs);
}

void rdmx_conn_gone(struct rdmx_ah *ah)
{
	struct rdmx_peer *peer = ah->context;

	if (peer && peer->lane.shm_ah == ah)
		rdmx_hs_lost(&peer->hs);
}

void rdmx_conn_tx_done(struct rdmx_ep *ep, struct rdmx_pke *pke,
		       enum rdmx_dev_status status)
{
	/* A send's packet delivered, the common case: no CLOSE, no session's end. */
	if (status == RDMX_DEV_OK && pke->txe) {
		rdmx_tx_done(ep, pke, status);
		return;
	}
	rdmx_conn_tx_done_else(ep, pke, status);
}
