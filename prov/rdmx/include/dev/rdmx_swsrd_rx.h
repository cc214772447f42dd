/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: swsrd's receiving side (rdmx_swsrd_rx.c): the receive session of
 * each peer, the acknowledgements it sends, and the challenge of a packet
 * that lacks our tag; and what it shares with the sending side
 * (rdmx_swsrd.c). Internal to swsrd.
 */
#ifndef RDMX_SWSRD_RX_H
#define RDMX_SWSRD_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdmx_swsrd.h"

/* Whether psn a comes before psn b in serial-number order. */
static inline bool rdmx_srd_before(uint32_t a, uint32_t b)
{
	return (int32_t) (a - b) < 0;
}

/*
 * The peer's tag is tag from now on; a new one is not yet proven to our
 * paths but the first (rdmx_swsrd_peer.paths_ok).
 */
static inline void rdmx_srd_learn_tag(struct rdmx_swsrd_peer *peer, uint64_t tag)
{
	if (peer->peer_tag != tag)
		peer->paths_ok = false;
	peer->peer_tag = tag;
}

/* Puts the peer on the engine's list of peers with work pending. */
static inline void rdmx_srd_activate(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer)
{
	if (!peer->active) {
		peer->active = true;
		rdmx_dlist_insert_tail(&srd->active, &peer->active_link);
	}
}

/* Fills the acknowledgement fields of hdr from the receive session. */
void rdmx_srd_fill_ack(struct rdmx_swsrd_peer *peer, struct rdmx_srd_hdr *hdr);

/* Sends an ACK, or an RNR refusing psn (flags: TOO_BIG), at once. */
void rdmx_srd_send_ctrl(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
			enum rdmx_srd_type type, uint32_t psn, uint32_t flags);

/*
 * A DATA packet of an authentic peer: marked seen and acknowledged in
 * turn, or refused (room: what the host could take it into). Whether it
 * is new and carries something to hand up.
 */
bool rdmx_srd_on_data(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
		      const struct rdmx_srd_hdr *hdr, size_t payload_len,
		      enum rdmx_srd_room room, uint64_t now);

/* A packet without our tag: challenged, within the engine's budget. */
void rdmx_srd_unauth(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
		     const struct rdmx_srd_hdr *hdr, uint64_t now);

#endif /* RDMX_SWSRD_RX_H */
