/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: swsrd's receiving side (see rdmx_swsrd_rx.h): which packets of a
 * peer's session were seen, the acks that say so, and the challenges
 * that give a sender without our tag the one to use.
 */
#include "rdmx.h"
#include "rdmx_siphash.h"
#include "rdmx_swsrd.h"
#include "rdmx_swsrd_rx.h"

#define RDMX_SRD_ACK_EVERY	16	/* unacknowledged packets before an ack */

/* Whether psn, at most RDMX_SRD_WINDOW_MAX - 1 past rcv_nxt, was seen. */
static inline bool rdmx_srd_seen(const struct rdmx_swsrd_peer *peer, uint32_t psn)
{
	uint32_t bit = psn % RDMX_SRD_WINDOW_MAX;

	return (peer->rcv_ring[bit / 64] >> (bit % 64)) & 1;
}

static inline void rdmx_srd_mark(struct rdmx_swsrd_peer *peer, uint32_t psn, bool seen)
{
	uint32_t bit = psn % RDMX_SRD_WINDOW_MAX;
	uint64_t mask = 1ULL << (bit % 64);

	peer->rcv_ring[bit / 64] = seen ? peer->rcv_ring[bit / 64] | mask :
					  peer->rcv_ring[bit / 64] & ~mask;
}

/* The selective acknowledgement: bit i, psn rcv_nxt + i seen. */
static uint64_t rdmx_srd_sack(const struct rdmx_swsrd_peer *peer)
{
	const size_t words = RDMX_SRD_WINDOW_MAX / 64;
	uint32_t bit = peer->rcv_nxt % RDMX_SRD_WINDOW_MAX;
	uint64_t lo = peer->rcv_ring[bit / 64] >> (bit % 64);

	if (!(bit % 64))
		return lo;
	return lo | peer->rcv_ring[(bit / 64 + 1) % words] << (64 - bit % 64);
}

uint64_t rdmx_swsrd_cookie(const struct rdmx_swsrd *srd, const void *addr, size_t len)
{
	uint64_t tag = rdmx_siphash(srd->key[0], srd->key[1], addr, len);

	return tag ? tag : 1;
}

/* Whether the engine's budget of challenges for this millisecond has room. */
static bool rdmx_srd_challenge_room(struct rdmx_swsrd *srd, uint64_t now)
{
	uint64_t ms = now / 1000000;

	if (ms != srd->challenge_ms) {
		srd->challenge_ms = ms;
		srd->challenges = 0;
	}
	if (srd->challenges >= RDMX_SRD_CHALLENGE_BURST)
		return false;
	srd->challenges++;
	srd->stats->challenges++;
	return true;
}

/* The CHALLENGE carrying tag to the sender of hdr. */
static void rdmx_srd_challenge_fill(const struct rdmx_srd_hdr *hdr, uint64_t tag,
				    struct rdmx_wire_srd *out)
{
	struct rdmx_srd_hdr chal = {
		.type = RDMX_SRD_CHALLENGE,
		.dst_tag = hdr->src_tag,
		.src_tag = tag,
	};

	rdmx_wire_srd_encode(out, &chal);
}

bool rdmx_swsrd_challenge(struct rdmx_swsrd *srd, const struct rdmx_srd_hdr *hdr,
			  uint64_t tag, uint64_t now, struct rdmx_wire_srd *out)
{
	if (hdr->type == RDMX_SRD_CHALLENGE || !rdmx_srd_challenge_room(srd, now))
		return false;
	rdmx_srd_challenge_fill(hdr, tag, out);
	return true;
}

void rdmx_srd_fill_ack(struct rdmx_swsrd_peer *peer, struct rdmx_srd_hdr *hdr)
{
	if (peer->rx_known) {
		hdr->ack_epoch = peer->rx_epoch;
		hdr->ack = peer->rcv_nxt;
		hdr->sack = rdmx_srd_sack(peer);
	}
	peer->ack_pending = false;
	peer->ack_now = false;
	peer->unacked = 0;
}

void rdmx_srd_send_ctrl(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
			enum rdmx_srd_type type, uint32_t psn, uint32_t flags)
{
	struct rdmx_srd_hdr hdr = {
		.type = type,
		.flags = flags,
		.psn = psn,
		.dst_tag = peer->peer_tag,
		.src_tag = peer->local_tag,
	};
	struct iovec iov = { &peer->ack_hdr, sizeof(peer->ack_hdr) };

	rdmx_srd_fill_ack(peer, &hdr);
	rdmx_wire_srd_encode(&peer->ack_hdr, &hdr);
	if (srd->ops->xmit(srd->ctx, peer, 0, &iov, 1)) {
		/*
		 * It was meant to go at once: an ACK goes next pass (a
		 * refused RNR too, as an ACK; the sender's timeout resends).
		 */
		peer->ack_pending = true;
		peer->ack_now = true;
		rdmx_srd_activate(srd, peer);
		return;
	}
	if (type == RDMX_SRD_ACK)
		srd->stats->acks_sent++;
	else
		srd->stats->rnr_sent++;
}

/* Starts over with a sender that began a newer session; false if stale. */
static bool rdmx_srd_rx_session(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
				uint32_t epoch)
{
	if (peer->rx_known && epoch == peer->rx_epoch)
		return true;
	/* Late packets of a session or an incarnation already replaced. */
	if (peer->rx_known && ((epoch >> 8) == peer->rx_retired ||
	    ((epoch >> 8) == (peer->rx_epoch >> 8) &&
	     (int8_t) ((epoch & 0xff) - (peer->rx_epoch & 0xff)) < 0))) {
		srd->stats->stale++;
		return false;
	}
	if (peer->rx_known && (epoch >> 8) != (peer->rx_epoch >> 8))
		peer->rx_retired = peer->rx_epoch >> 8;
	peer->rx_known = true;
	peer->rx_epoch = epoch;
	peer->rcv_nxt = 0;
	memset(peer->rcv_ring, 0, sizeof(peer->rcv_ring));
	peer->unacked = 0;
	return true;
}

/*
 * An ack is due: at once, or at the next progress (soon), or within the
 * batching delay. At once goes now, unless the device sends a poll's
 * datagrams together as it ends (cfg.acks_at_poll_end): then the poll's
 * rdmx_swsrd_progress sends it, and every ack due at once in one poll is
 * that one, the latest word on what came, where each would have left in
 * the same batch.
 */
static void rdmx_srd_ack_due(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
			     bool at_once, bool soon, uint64_t now)
{
	if (at_once && !srd->cfg.acks_at_poll_end) {
		rdmx_srd_send_ctrl(srd, peer, RDMX_SRD_ACK, 0, 0);
		return;
	}
	if (!peer->ack_pending)
		peer->ack_since = now;
	peer->ack_last = now;
	peer->ack_pending = true;
	peer->ack_now |= at_once || soon;
	rdmx_srd_activate(srd, peer);
}

bool rdmx_srd_on_data(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
		      const struct rdmx_srd_hdr *hdr, size_t payload_len,
		      enum rdmx_srd_room room, uint64_t now)
{
	uint32_t off;

	if (!rdmx_srd_rx_session(srd, peer, hdr->epoch))
		return false;
	/* The peer's current session speaks: its tag is the one to use. */
	rdmx_srd_learn_tag(peer, hdr->src_tag);
	off = hdr->psn - peer->rcv_nxt;
	if (rdmx_srd_before(hdr->psn, peer->rcv_nxt) ||
	    (off < RDMX_SRD_WINDOW_MAX && rdmx_srd_seen(peer, hdr->psn))) {
		/* Our ack was lost or late: repeat it now. */
		srd->stats->duplicates++;
		rdmx_srd_ack_due(srd, peer, true, true, now);
		return false;
	}
	if (off >= RDMX_SRD_WINDOW_MAX) {
		/* No sender puts a psn this far ahead of our window. */
		srd->stats->stale++;
		return false;
	}
	if (payload_len && room != RDMX_SRD_ROOM_BUF) {
		rdmx_srd_send_ctrl(srd, peer, RDMX_SRD_RNR, hdr->psn,
				   room == RDMX_SRD_ROOM_SHORT ? RDMX_SRD_TOO_BIG : 0);
		return false;
	}
	rdmx_srd_mark(peer, hdr->psn, true);
	while (rdmx_srd_seen(peer, peer->rcv_nxt)) {
		rdmx_srd_mark(peer, peer->rcv_nxt, false);
		peer->rcv_nxt++;
	}
	/*
	 * A gap is told at once (fast retransmit), while the selective bits
	 * reach the packet; past them an ack would repeat the last one. Else
	 * one ack per batch; a reply may carry it before it is due.
	 */
	rdmx_srd_ack_due(srd, peer, (off && off < RDMX_SRD_SACK_BITS) ||
			 ++peer->unacked >= RDMX_SRD_ACK_EVERY,
			 hdr->flags & RDMX_SRD_ACK_NOW, now);
	return !(hdr->flags & RDMX_SRD_SKIP);
}

/*
 * A packet without our tag: from a spoofed source, from a session of the
 * peer that predates our tag, or from a peer that does not know it yet.
 * It gets our tag back to its src_tag: only a sender that receives at the
 * packet's source address learns it.
 */
void rdmx_srd_unauth(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
		     const struct rdmx_srd_hdr *hdr, uint64_t now)
{
	struct iovec iov = { &peer->ack_hdr, sizeof(peer->ack_hdr) };

	srd->stats->rx_unauth++;
	/*
	 * A repeat of one tag is answered once per gap; another tag is
	 * answered at once, so a forger flooding from the peer's address
	 * does not silence the challenge the real peer needs.
	 */
	if (hdr->type == RDMX_SRD_CHALLENGE ||
	    (hdr->src_tag == peer->challenged_tag &&
	     now - peer->challenged_ns < RDMX_SRD_CHALLENGE_GAP_NS) ||
	    !rdmx_srd_challenge_room(srd, now))
		return;
	peer->challenged_tag = hdr->src_tag;
	peer->challenged_ns = now;
	rdmx_srd_challenge_fill(hdr, peer->local_tag, &peer->ack_hdr);
	(void) srd->ops->xmit(srd->ctx, peer, 0, &iov, 1);
}

void rdmx_swsrd_flush_acks(struct rdmx_swsrd *srd)
{
	struct rdmx_dlist *it;

	rdmx_dlist_foreach(&srd->active, it) {
		struct rdmx_swsrd_peer *peer =
			rdmx_container_of(it, struct rdmx_swsrd_peer, active_link);

		if (peer->ack_pending)
			rdmx_srd_send_ctrl(srd, peer, RDMX_SRD_ACK, 0, 0);
	}
}
