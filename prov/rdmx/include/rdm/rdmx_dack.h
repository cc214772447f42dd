/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: delivery acknowledgements (rdmx_dack.c), for FI_DELIVERY_COMPLETE.
 * A message flagged RDMX_PKT_DACK_REQ is answered once by its receiver's
 * rdm layer with one DACK packet, when the message is matched to a
 * receive and all its bytes are in that receive, or buffered whole as
 * unexpected; or when the receiver dropped it (with why). The sender's
 * send completes once the DACK and the device's acknowledgement of every
 * packet are both in.
 */
#ifndef RDMX_DACK_H
#define RDMX_DACK_H

#include <stdint.h>

#include "rdmx_wire.h"

struct rdmx_ep;
struct rdmx_peer;
struct rdmx_pkt;

/*
 * Answers message msg_id of send tx_id from peer if its packet flags ask
 * for a DACK: err 0, delivered; else the positive FI_E* why it was
 * dropped. Nothing when peer is NULL (a sender past the bound of
 * anonymous peers has no one to answer). Lock held.
 */
void rdmx_dack_send(struct rdmx_ep *ep, struct rdmx_peer *peer, uint32_t pkt_flags,
		    uint32_t msg_id, uint32_t tx_id, int err);

/* rdmx_dack_batch of a message that asks for a DACK, from a peer. */
void rdmx_dack_queue(struct rdmx_ep *ep, struct rdmx_peer *peer, uint32_t msg_id,
		     uint32_t tx_id);

/*
 * rdmx_dack_send for a message delivered in its progress pass (an eager
 * one), err 0: consecutive messages of a peer are acknowledged by one
 * DACK at the end of the pass (rdmx_dack_flush), so a burst does not draw
 * a DACK each. Inline: every eager message asks, few want one.
 */
static inline void rdmx_dack_batch(struct rdmx_ep *ep, struct rdmx_peer *peer,
				   uint32_t pkt_flags, uint32_t msg_id, uint32_t tx_id)
{
	if ((pkt_flags & RDMX_PKT_DACK_REQ) && peer)
		rdmx_dack_queue(ep, peer, msg_id, tx_id);
}

/* Sends the DACKs owed by the pass; at the end of every progress pass. */
void rdmx_dack_flush(struct rdmx_ep *ep);

/* The session with peer ended: the DACKs it is owed are of the old one. */
void rdmx_dack_forget(struct rdmx_peer *peer);

/* A DACK from peer: completes the send it names, or is dropped and counted. */
void rdmx_dack_recv(struct rdmx_ep *ep, struct rdmx_peer *peer,
		    const struct rdmx_pkt *pkt);

#endif /* RDMX_DACK_H */
