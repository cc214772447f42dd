/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: wireup (after UCX's stub endpoints), the endpoint's side of the
 * probe handshake (rdmx_hs.h). A peer is a stub until its handshake
 * completes: sends posted to it are accepted and wait, in posting order,
 * on its pending queue (at most FI_RDMX_PENDING_MAX, then -FI_EAGAIN);
 * they get their message numbers and go out when it is CONNECTED, so
 * send-after-send order holds across the wait. The first send to a stub
 * starts the handshake; a RESET from a peer answers it whatever its
 * state. When a peer is DISCONNECTED (no answer to the handshake or to
 * its pings) the sends still waiting complete with FI_EHOSTUNREACH, and
 * the next send starts a new handshake; at endpoint close they complete
 * with FI_ECANCELED. A peer that restarted (a new incarnation) starts
 * from message 0 again: what was kept of the old one is dropped. A peer
 * that closed its endpoint (its CLOSE) is CLOSED: its sends the device
 * finished complete, the others and every later one fail with
 * FI_ECONNRESET at the next progress, until a new endpoint at its
 * address connects or the address is removed from the AV and inserted
 * again.
 */
#ifndef RDMX_CONN_H
#define RDMX_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "rdmx_dev.h"
#include "rdmx_hs.h"
#include "rdmx_peer.h"

struct rdmx_ep;
struct rdmx_peer;
struct rdmx_pke;
struct rdmx_txe;

/* The stub's half (rdmx_conn_stub.c), which the send side calls. */

/* A new peer: a stub, IDLE, its handshake reporting to the endpoint's ops. */
void rdmx_conn_peer_init(struct rdmx_ep *ep, struct rdmx_peer *peer);

/* Puts peer among those whose timers progress looks at. */
void rdmx_conn_watch(struct rdmx_ep *ep, struct rdmx_peer *peer);

/* A send to peer must wait: starts its handshake if none is under way. */
void rdmx_conn_start(struct rdmx_ep *ep, struct rdmx_peer *peer);

/*
 * Whether a send to peer may go out now; else it must wait (and the
 * handshake is started). Inline: every send asks, and almost every
 * time of a connected peer with nothing waiting.
 */
static inline bool rdmx_conn_ready(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	if (peer->hs.state == RDMX_HS_CONNECTED && rdmx_dlist_empty(&peer->pending))
		return true;
	rdmx_conn_start(ep, peer);
	return false;
}

/* Keeps a filled send to a stub; 0 or -FI_EAGAIN when the queue is full. */
int rdmx_conn_defer(struct rdmx_ep *ep, struct rdmx_peer *peer, struct rdmx_txe *txe);

/* The rest (rdmx_conn.c), above the send and receive sides. */

/* The endpoint's handshake identity and timers, and the ops each
 * peer's handshake reports to (at fi_enable). */
void rdmx_conn_ep_init(struct rdmx_ep *ep);

/* A handshake packet from peer (decoded at buf). */
void rdmx_conn_recv(struct rdmx_ep *ep, struct rdmx_peer *peer, const void *buf,
		    size_t len);

/*
 * Whether a message packet from peer belongs to the session under way
 * (PROBING or CONNECTED); if not it is stale, and a peer IDLE or
 * DISCONNECTED here is asked to start a new session, which tells it to
 * drop the old one too.
 */
bool rdmx_conn_current(struct rdmx_ep *ep, struct rdmx_peer *peer);

/* Any packet from peer: it is alive. */
void rdmx_conn_heard(struct rdmx_ep *ep, struct rdmx_peer *peer);

/* Timers and the replay of waiting sends; from progress. */
void rdmx_conn_progress(struct rdmx_ep *ep);

/*
 * When rdmx_conn_progress next has something to do with no packet
 * arriving (a handshake step, a ping, a probe of a silent peer), or
 * UINT64_MAX. For a thread about to sleep: reads every such peer.
 */
uint64_t rdmx_conn_due(const struct rdmx_ep *ep);

/* Fails the sends waiting on peer with err (peer forgotten, endpoint closing). */
void rdmx_conn_flush(struct rdmx_ep *ep, struct rdmx_peer *peer, int err);

/*
 * The endpoint is closing: sends a CLOSE to every peer of a session under
 * way that understands it (rdmx_hs_close); returns how many were told.
 * rdmx_ep.close_out counts the CLOSE packets the device has not finished.
 */
size_t rdmx_conn_goodbye(struct rdmx_ep *ep);

/*
 * The device of the peer's shm queue (ah) saw its process exit (an
 * RDMX_DEV_OP_GONE completion): the peer's session is lost, and what it
 * was sent and never answered fails FI_EHOSTUNREACH now, not at the
 * next ping.
 */
void rdmx_conn_gone(struct rdmx_ah *ah);

/*
 * The device finished a packet (progress calls this for every send
 * completion): counts CLOSE packets out, fails the packets of a closed
 * peer's session as FI_ECONNRESET, and hands the rest to rdmx_tx_done.
 */
void rdmx_conn_tx_done(struct rdmx_ep *ep, struct rdmx_pke *pke,
		       enum rdmx_dev_status status);

#endif /* RDMX_CONN_H */
