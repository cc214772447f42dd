/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: what an endpoint keeps per remote endpoint. One peer stands for
 * one device address handle, however many AV addresses name it, and
 * lives until the endpoint closes: its message numbers must outlive an
 * fi_av_remove and a later fi_av_insert of the same address, or the two
 * sides would disagree on the next message (docs/protocol.md, ordering).
 * Only a peer made for a sender outside the AV may go earlier, when it
 * holds nothing and room is needed for another (rdmx_peer_anon).
 *
 * Memory per peer: this structure (456 bytes on x86_64); packets of
 * later messages held for ordering and medium messages being reassembled
 * only while they exist. The device's handle adds its own
 * (docs/protocol.md, order and matching).
 */
#ifndef RDMX_PEER_H
#define RDMX_PEER_H

#include <stdbool.h>
#include <stdint.h>
#include <rdma/fabric.h>

#include "rdmx_hs.h"
#include "rdmx_lane.h"
#include "rdmx_list.h"

struct rdmx_ah;
struct rdmx_ep;

struct rdmx_peer {
	struct rdmx_dlist	link;		/* on rdmx_ep.peer_list */
	struct rdmx_lane	lane;		/* its handles, what its packets
						   go by */
	fi_addr_t		addr;		/* AV address reported as the source;
						   FI_ADDR_NOTAVAIL once removed */
	uint32_t		tx_msg_id;	/* msg_id of the next message sent */
	uint32_t		dack_awaited;	/* sends waiting for its DACK: while
						   any does, its silence is probed */
	/* Receiver: DACKs of consecutive messages owed, sent as one. */
	struct rdmx_dlist	dack_link;	/* on rdmx_ep.dack_peers while
						   dack_run > 0 */
	uint32_t		dack_first;	/* msg_id of the run's first */
	uint32_t		dack_run;	/* messages in the run */
	uint32_t		dack_tx_id;	/* the send id of its last */
	uint32_t		rx_msg_id;	/* msg_id of the next message matched */
	struct rdmx_dlist	ooo;		/* of rdmx_ooo: later messages' first
						   packets, by msg_id */
	uint32_t		ooo_kept;	/* of those, left in receive buffers */
	struct rdmx_dlist	rx_msgs;	/* of rdmx_rxm: messages in pieces */
	/* RNR: packets the receiver refused, resent in order after backoff. */
	struct rdmx_dlist	retry_q;	/* of rdmx_pke */
	struct rdmx_dlist	retry_link;	/* on rdmx_ep.retry_peers */
	uint64_t		backoff_until;	/* ns; 0: not in backoff */
	uint32_t		backoff_exp;	/* doublings of the backoff */
	bool			anon;		/* counted in rdmx_ep.anon_peers */
	struct rdmx_dlist	anon_link;	/* on rdmx_ep.anon_lru while anon */
	/* Wireup (rdmx_conn.c). */
	struct rdmx_ep		*ep;
	struct rdmx_hs		hs;
	struct rdmx_dlist	pending;	/* of rdmx_txe waiting for CONNECTED */
	size_t			pending_cnt;
	struct rdmx_dlist	conn_link;	/* on rdmx_ep.conn_peers */
	uint32_t		hs_out;		/* handshake packets of ours to it
						   at the device or queued */
	size_t			pkt_max;	/* largest packet to send it */
	uint32_t		answers;	/* its reads we answer (rdmx_rma.c) */
	enum {
		RDMX_PEER_WHERE_UNKNOWN,	/* not asked yet */
		RDMX_PEER_WHERE_HERE,		/* receives at an address of ours */
		RDMX_PEER_WHERE_AWAY,
	}			where;		/* device's ah_local, asked once */
};

/* The peer of device handle ah, made if it has none; takes over the ref. */
struct rdmx_peer *rdmx_peer_of_ah(struct rdmx_ep *ep, struct rdmx_ah *ah, const void *canon);

/* peer stops counting as anonymous: it joined the AV, or it goes. */
void rdmx_peer_anon_end(struct rdmx_ep *ep, struct rdmx_peer *peer);

/*
 * The peer of AV address addr, made on first use (and shared with every
 * other AV address of the same endpoint), in *peer_p. 0; -FI_EINVAL if
 * addr is not in the AV; or why it could not be made: the device's
 * handle refused (-FI_ENOSPC: its table of handles is full) or
 * -FI_ENOMEM.
 */
int rdmx_peer_get(struct rdmx_ep *ep, fi_addr_t addr, struct rdmx_peer **peer_p);

/*
 * The source a peer's messages are matched and queued by: its AV address;
 * while it has none, a key of its own (RDMX_PEER_SRC_UNKNOWN with the
 * peer's address in memory), which no AV address equals and which is
 * reported as FI_ADDR_NOTAVAIL. When the peer joins the AV, the messages
 * it sent before that and that still wait for a receive take the new
 * address, so a receive directed at it finds them (fi_av(3)).
 */
#define RDMX_PEER_SRC_UNKNOWN	(1ULL << 63)

static inline fi_addr_t rdmx_peer_src(const struct rdmx_peer *peer)
{
	return peer->addr != FI_ADDR_NOTAVAIL ? peer->addr :
	       (RDMX_PEER_SRC_UNKNOWN | (uintptr_t) peer);
}

/* The peer outside the AV whose key src is, or NULL. */
static inline struct rdmx_peer *rdmx_peer_of_src(fi_addr_t src)
{
	return (src & RDMX_PEER_SRC_UNKNOWN) && src != FI_ADDR_NOTAVAIL ?
	       (struct rdmx_peer *) (uintptr_t) (src & ~RDMX_PEER_SRC_UNKNOWN) : NULL;
}

/* The source a completion reports for a message matched by src. */
static inline fi_addr_t rdmx_peer_src_reported(fi_addr_t src)
{
	return (src & RDMX_PEER_SRC_UNKNOWN) ? FI_ADDR_NOTAVAIL : src;
}

/* Peers an endpoint keeps for senders outside its AV, at most. */
#define RDMX_PEER_ANON_MAX	4096
/* Of those, how many a newcomer's packet may look at to let one go. */
#define RDMX_PEER_EVICT_SCAN	8

/*
 * A peer for a sender outside the AV (canonical raw address canon), so
 * its messages keep their order too. Each is charged to the receive
 * budget; at RDMX_PEER_ANON_MAX or past the budget the least recently
 * heard of those that hold nothing of the application's (control packets
 * to it may be in flight: they end with it), among the
 * RDMX_PEER_EVICT_SCAN heard least recently, is let go to make room.
 * NULL when none of them can go (or out of memory).
 */
struct rdmx_peer *rdmx_peer_anon(struct rdmx_ep *ep, const void *canon);

/*
 * The endpoint ran out of packets for handshakes (rdmx_ep.ctrl_short
 * times since the last call): lets go of as many anonymous peers (at most
 * RDMX_PEER_EVICT_SCAN), least recently heard first, among those with
 * handshake packets of ours still out and nothing of the application's:
 * their packets come back. A sender that proved its address and fell
 * silent would otherwise hold them until it is found unreachable, and a
 * crowd of them would keep every newcomer out that long. A peer that
 * holds no packet stays (letting it go frees nothing). Called from
 * progress, outside any walk of the peers.
 */
void rdmx_peer_reclaim(struct rdmx_ep *ep);

/*
 * Whether peer is on this host: its handshake says so (rdmx_hs_same_host)
 * and, on a device whose reads reach only this host, where it receives
 * backs the claim (the device's ah_local). Only such a peer is offered,
 * or read by, long-read.
 */
bool rdmx_peer_on_host(const struct rdmx_ep *ep, struct rdmx_peer *peer);

/* A packet came from an anonymous peer: it becomes the most recent. */
void rdmx_peer_anon_heard(struct rdmx_ep *ep, struct rdmx_peer *peer);

/* A packet came from peer. Inline: every packet asks, few peers are anonymous. */
static inline void rdmx_peer_heard(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	if (peer->anon)
		rdmx_peer_anon_heard(ep, peer);
}

/* The peer of addr if one was made, else NULL. */
struct rdmx_peer *rdmx_peer_find(const struct rdmx_ep *ep, fi_addr_t addr);

/*
 * addr left the AV: it no longer names the peer. The peer stays, and so
 * do the sends queued to it, which were posted (and may have completed)
 * while addr was valid; if it had closed, the next send to it starts a
 * new handshake.
 */
void rdmx_peer_forget(struct rdmx_ep *ep, fi_addr_t addr);

/*
 * Tells the application's rdmx_peer_ops callback, if any, that peer
 * reached its handshake state (err: why it was given up).
 */
void rdmx_peer_notify(struct rdmx_ep *ep, struct rdmx_peer *peer, int err);

/* Frees every peer (endpoint close); queued sends fail with err. */
void rdmx_peer_destroy_all(struct rdmx_ep *ep, int err);

#endif /* RDMX_PEER_H */
