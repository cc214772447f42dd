/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: receiver-not-ready handling in the rdm layer, after the device
 * gave up on a send because the receiver had no buffer (EFA RDM's policy):
 * the first RNR of a send resends it at the next progress; a repeat puts
 * the peer in a random backoff of 40-120 us that doubles per repeat up to
 * FI_RDMX_RNR_BACKOFF_MAX_US. While a peer backs off or has sends waiting,
 * new sends to it get -FI_EAGAIN and its queued sends wait; a send that
 * completes successfully ends the backoff. With FI_RM_DISABLED the send
 * completes with an FI_ENORX error instead. Time comes from
 * rdmx_clock_ns(), so tests drive the policy without sleeping.
 */
#ifndef RDMX_RNR_H
#define RDMX_RNR_H

#include <stdbool.h>
#include <stdint.h>

#include "rdmx_clock.h"
#include "rdmx_peer.h"

struct rdmx_ep;
struct rdmx_pke;

/*
 * Prepares a peer's RNR state. Inline, like rdmx_rnr_blocked: the peer
 * and every file that posts read the state without calling up into the
 * policy, which fails and resends packets (rdmx_txe.c, rdmx_pke.c).
 */
static inline void rdmx_rnr_peer_construct(struct rdmx_peer *peer)
{
	rdmx_dlist_init(&peer->retry_q);
	rdmx_dlist_init(&peer->retry_link);
	peer->backoff_until = 0;
	peer->backoff_exp = 0;
}

/* Takes a packet the device completed with RNR; lock held. */
void rdmx_rnr_refused(struct rdmx_ep *ep, struct rdmx_peer *peer,
		      struct rdmx_pke *pke);

/* Ends a peer's backoff after a successful send: inline, as every send pays it. */
static inline void rdmx_rnr_delivered(struct rdmx_peer *peer)
{
	peer->backoff_exp = 0;
	if (rdmx_dlist_empty(&peer->retry_q))
		peer->backoff_until = 0;
}

/* Whether new sends to the peer must wait (-FI_EAGAIN). */
static inline bool rdmx_rnr_blocked(const struct rdmx_peer *peer)
{
	return !rdmx_dlist_empty(&peer->retry_q) ||
	       (peer->backoff_until && rdmx_clock_ns() < peer->backoff_until);
}

/* Resends what peers out of backoff have queued; lock held. */
void rdmx_rnr_progress(struct rdmx_ep *ep);

/*
 * When rdmx_rnr_progress next resends (a backoff's end; a tick from now
 * for a resend the device had no room for), or UINT64_MAX.
 */
uint64_t rdmx_rnr_due(const struct rdmx_ep *ep);

/* Fails a peer's queued sends with err (the peer goes away). */
void rdmx_rnr_flush(struct rdmx_ep *ep, struct rdmx_peer *peer, int err);

/* The backoff, in ns, for a peer at doubling exp with jitter from rng. */
uint64_t rdmx_rnr_backoff_ns(uint32_t exp, uint64_t *rng);

#endif /* RDMX_RNR_H */
