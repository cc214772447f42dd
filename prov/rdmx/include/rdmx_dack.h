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

/* A DACK from peer: completes the send it names, or is dropped and counted. */
void rdmx_dack_recv(struct rdmx_ep *ep, struct rdmx_peer *peer,
		    const struct rdmx_pkt *pkt);

#endif /* RDMX_DACK_H */
