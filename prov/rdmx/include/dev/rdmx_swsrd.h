/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: swsrd, software SRD. Turns a device that moves datagrams without
 * guarantees (udp, verbs UD) into one that honours the device contract:
 * every send is delivered once or completes with an error, in any order.
 *
 * Per peer and direction a session (epoch) numbers packets (psn) from 0.
 * The receiver tracks a window of RDMX_SRD_WINDOW_MAX packets (first psn
 * not seen + a ring of bits), suppresses duplicates, and acknowledges
 * cumulatively and selectively (the 64 psns after the first not seen):
 * piggy-backed on its own DATA, else once the peer was silent for
 * ack_idle_ns or ack_delay_ns after the oldest packet it covers (so a
 * reply the application sends meanwhile carries it, and a stream is
 * acknowledged in batches), at once after a gap, a duplicate or 16
 * unacknowledged packets, and by the end
 * of the pass for a packet marked ACK_NOW (its sender waits for the ack
 * to complete a send, and the application may not call again for a long
 * time). The sender keeps
 * at most min(cwnd, window) packets in flight, the window being 64 until
 * the device says the peer's receiver takes RDMX_SRD_WINDOW_MAX
 * (rdmx_swsrd_peer_window: the rdm handshake tells), retransmits on a
 * timeout of SRTT + max(4 RTTVAR, rto_min) (doubling per retry) and at once
 * when three later packets were acknowledged past a hole (fast
 * retransmit), and keeps a congestion window (rdmx_swsrd_cc.h). A packet
 * that times out with no packet sent after it acknowledged may be late,
 * not lost (a stalled receiver or path): it goes as the probe, and those
 * that time out while the probe is in flight wait for its answer, until
 * its next timeout at most: resent when the peer acknowledges the probe,
 * or a packet sent after it, and none of them; left to their timers when
 * it acknowledges one of them (F-RTO, RFC 5682, does the same for TCP).
 * A peer silent past the unreachable timeout (no packet with our tag
 * since a packet still unacknowledged was first sent) fails its sends and
 * starts a new session. A DATA packet that finds no receive buffer is refused with an
 * RNR packet; the sender retries it rnr_retry times, then completes it
 * with an RNR status and fills its psn with a SKIP packet.
 *
 * Every packet is authenticated by the receiver's tag (rdmx_wire.h,
 * docs/protocol.md "Session tags"): each peer's state holds the tag we
 * drew for the session (local_tag, new each time our transmit session
 * ends) and the one the peer drew (peer_tag, learnt only from packets
 * carrying ours). A packet without our tag is counted (rx_unauth) and
 * changes nothing; it draws at most one CHALLENGE (header only, never
 * more bytes than it carried), at most one per peer and src_tag per
 * RDMX_SRD_CHALLENGE_GAP_NS and RDMX_SRD_CHALLENGE_BURST per millisecond
 * per engine. A sender nobody knows yet is challenged without state: its
 * tag is a keyed hash of its address (rdmx_swsrd_cookie), and its handle
 * is made only when a packet carries that tag back.
 *
 * The engine does no I/O and reads time only through rdmx_clock_ns(): a
 * device gives it an xmit callback, feeds it received headers, and calls
 * rdmx_swsrd_progress() at the end of each poll, after the packets; both
 * take the time the device last read. A device that reads packets in
 * several batches should read the time again after each: a send made
 * after one batch and acknowledged in the next would otherwise carry the
 * time of its own ack, and give no round-trip sample.
 */
#ifndef RDMX_SWSRD_H
#define RDMX_SWSRD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "rdmx_dev.h"
#include "rdmx_list.h"
#include "rdmx_hash.h"
#include "rdmx_swsrd_cc.h"
#include "rdmx_swsrd_path.h"
#include "rdmx_wire_srd.h"

#define RDMX_SRD_SACK_BITS	64	/* psns after ack an ack reports on */
#define RDMX_SRD_WINDOW		64	/* in flight to a peer of an older
					   version, whose window is 64 */
#define RDMX_SRD_WINDOW_MAX	1024	/* in flight to one that takes more;
					   the receive window (a power of 2) */
#define RDMX_SRD_CHALLENGE_GAP_NS	1000000ULL	/* per peer */
#define RDMX_SRD_CHALLENGE_BURST	64		/* per engine per ms */

struct rdmx_swsrd_peer;

/*
 * One send handed to the engine, of pkts packets; owned by the device
 * until done() told each of them. A send of several (a post of segments)
 * is cut here, each packet with a psn of its own: iov[0] is a header
 * template of at most RDMX_DEV_SEG_HDR_MAX bytes holding a little-endian
 * 64-bit offset at off_at, the rest the payload; packet k is the template
 * with k * seg_len added to that offset, then payload bytes [k * seg_len,
 * (k + 1) * seg_len). Cutting here rather than posting each packet as a
 * send of its own spares each its own send with a copy of the header and
 * an iovec array: 5% more bandwidth at 1 MiB, 4% at 64 KiB (MTU 1,500).
 */
struct rdmx_swsrd_send {
	struct rdmx_dlist	link;		/* on rdmx_swsrd_peer.waiting */
	uint64_t		wr_id;
	bool			awaited;	/* sent ACK_NOW */
	uint16_t		pkts;		/* 0 is taken as 1 */
	uint16_t		next;		/* packets given a psn so far */
	uint32_t		seg_len;	/* pkts > 1: payload bytes a packet */
	uint32_t		off_at;		/* pkts > 1: the offset's place */
	struct iovec		iov[RDMX_DEV_SGE_MAX];	/* the payload */
	size_t			iov_cnt;
};

/* A psn in flight: a send, or the SKIP that replaced an abandoned one. */
struct rdmx_swsrd_slot {
	struct rdmx_swsrd_send	*send;		/* NULL for a SKIP */
	uint64_t		first_ns;	/* first transmission */
	uint64_t		sent_ns;	/* last transmission */
	uint64_t		due_ns;		/* next retransmission */
	uint16_t		retries;	/* timeouts so far */
	uint16_t		copies;		/* transmissions so far */
	uint16_t		rnr;		/* RNR refusals so far */
	bool			in_use;
	bool			rnr_wait;	/* refused: resend when due (or, out
						   of retries, give up), no loss */
	uint8_t			path;		/* of the first transmission */
	uint8_t			last_path;	/* of the latest */
	bool			path_lost;	/* counted as its path's loss */
	bool			held;		/* timed out while the probe was
						   unanswered: waits for its answer */
	uint16_t		pkt;		/* which of its send's packets */
	uint8_t			trail;		/* later packets the device sent
						   before it (rdmx_swsrd_trailed) */
	uint64_t		hole_ns;	/* sent once, first seen missing by
						   an ack after a packet another
						   path sent no earlier was
						   acknowledged; 0: not yet */
};

struct rdmx_swsrd_peer {
	struct rdmx_dlist	active_link;	/* on rdmx_swsrd.active */
	bool			active;
	void			*addr;		/* the device's handle for xmit */
	uint64_t		local_tag;	/* ours: packets to us carry it */
	uint64_t		peer_tag;	/* the peer's; 0: not known yet */
	uint64_t		heard_ns;	/* its last packet carrying our tag */
	uint64_t		ack_ns;		/* its last ack of our session */
	uint64_t		challenged_tag;	/* the src_tag our last CHALLENGE */
	uint64_t		challenged_ns;	/* answered, and when */
	bool			tag_indexed;	/* local_tag is in rdmx_swsrd.tags */
	bool			multipath;	/* the peer takes packets from any
						   of our paths (rdmx_swsrd_peer_paths) */
	bool			paths_ok;	/* it acknowledged this session since
						   we learnt its tag: our paths' tag
						   is right (a wrong one would be
						   challenged at a port nobody reads) */

	/* Transmit session. */
	uint32_t		tx_epoch;
	uint32_t		snd_una;	/* oldest psn not acknowledged */
	uint32_t		snd_nxt;	/* next psn to assign */
	uint32_t		wnd_max;	/* the receiver takes this many */
	struct rdmx_srd_cc	cc;		/* the congestion window */
	struct rdmx_srd_paths	paths;		/* our paths to it */
	uint32_t		recover_psn;	/* no second halving before this */
	uint64_t		silence_ns;	/* the last silent timeout's halving */
	bool			probing;	/* probe_psn's timeout resend is
						   unanswered: others time out held */
	uint32_t		probe_psn;
	uint64_t		probe_ns;	/* when the probe was resent */
	uint64_t		acked_first_ns;	/* latest first send of a packet
						   acknowledged */
	uint32_t		sack_end;	/* acks report on psns before this */
	uint64_t		due_min;	/* no slot in flight is due before */
	uint64_t		srtt_ns;
	uint64_t		rttvar_ns;
	uint64_t		rto_ns;
	struct rdmx_swsrd_slot	*slots;		/* slot_cnt of them, by psn */
	uint32_t		slot_cnt;	/* a power of 2, grown with cwnd */
	struct rdmx_dlist	waiting;	/* sends without a psn yet */

	/* Receive session. */
	bool			rx_known;
	uint32_t		rx_epoch;
	uint32_t		rx_retired;	/* incarnation rx_epoch replaced */
	uint32_t		rcv_nxt;	/* first psn not seen */
	uint64_t		rcv_ring[RDMX_SRD_WINDOW_MAX / 64]; /* bit psn %
						   RDMX_SRD_WINDOW_MAX: seen */
	uint32_t		unacked;	/* packets seen since the last ack */
	bool			ack_pending;
	bool			ack_now;	/* owed by the end of this pass */
	uint64_t		ack_since;	/* arrival of the oldest one unacked */
	uint64_t		ack_last;	/* arrival of the latest one */
	struct rdmx_wire_srd	ack_hdr;	/* storage for a queued ACK/RNR */
};

struct rdmx_swsrd_cfg {
	uint64_t	rto_init_ns;
	uint64_t	rto_min_ns;
	uint64_t	rto_max_ns;
	uint64_t	rnr_delay_ns;	/* wait before re-sending a refused psn */
	uint64_t	ack_delay_ns;	/* an ack waits for more packets this long */
	uint64_t	ack_idle_ns;	/* or until the peer is silent this long */
	uint64_t	unreach_ns;	/* silence after which a peer fails */
	unsigned	unreach_retries; /* and retransmissions it takes */
	unsigned	rnr_retry;	/* refusals before an RNR completion */
	unsigned	paths;		/* source addresses the device sends
					   from (rdmx_swsrd_path.h); 1: one */
	bool		acks_at_poll_end; /* the device's xmits of a poll
					   leave together as it ends, after
					   rdmx_swsrd_progress: an ack due
					   at once waits for it, so a peer
					   gets one ack a poll */
};


struct rdmx_swsrd_ops {
	/*
	 * Sends one datagram to peer->addr, from the device's path'th source
	 * address (0: its own; below cfg.paths). The iovec array, iov[0] (the
	 * swsrd header) and, for a packet of a send of several, iov[1] (its
	 * header, at most RDMX_DEV_SEG_HDR_MAX bytes) are the caller's and
	 * may be reused as soon as xmit returns; the payload after them
	 * stays valid until the send completes. 0, or -FI_EAGAIN (treated as
	 * a loss).
	 */
	int	(*xmit)(void *ctx, struct rdmx_swsrd_peer *peer, unsigned path,
			const struct iovec *iov, size_t iov_cnt);
	/*
	 * Packet pkt of a send was acknowledged (OK) or failed (RNR,
	 * UNREACH, FLUSHED); called once for each of its packets.
	 */
	void	(*done)(void *ctx, struct rdmx_swsrd_send *send, unsigned pkt,
			enum rdmx_dev_status status);
};

struct rdmx_swsrd {
	const struct rdmx_swsrd_ops	*ops;
	void				*ctx;
	struct rdmx_swsrd_cfg		cfg;
	uint32_t			incarnation;	/* high 24 bits of epochs */
	uint64_t			key[2];		/* of rdmx_swsrd_cookie */
	uint64_t			challenge_ms;	/* the millisecond counted */
	uint32_t			challenges;	/* sent in it */
	uint64_t			pass;		/* progress calls so far */
	struct rdmx_dlist		active;		/* of rdmx_swsrd_peer */
	struct rdmx_swsrd_peer		*holding;	/* sent to with more; NULL
							   when none holds sends */
	struct rdmx_hash		tags;		/* local_tag → rdmx_swsrd_peer */
	struct rdmx_dev_stats		*stats;		/* the device's counters */
};

/* Default timing: from the FI_RDMX_* parameters. */
void rdmx_swsrd_cfg_default(struct rdmx_swsrd_cfg *cfg);

/*
 * Prepares an engine; incarnation should differ per open (random).
 * 0 or -FI_ENOMEM.
 */
int rdmx_swsrd_construct(struct rdmx_swsrd *srd, const struct rdmx_swsrd_ops *ops,
			 void *ctx, const struct rdmx_swsrd_cfg *cfg,
			 uint32_t incarnation, struct rdmx_dev_stats *stats);
/* Frees what the engine keeps itself (its peers are destructed before). */
void rdmx_swsrd_destruct(struct rdmx_swsrd *srd);

/*
 * The peer whose packets carry tag as ours (their dst_tag), or NULL: a
 * packet from an address no handle names may come from another path of a
 * peer we know (the device checks that the address is the peer's host).
 */
struct rdmx_swsrd_peer *rdmx_swsrd_peer_by_tag(const struct rdmx_swsrd *srd,
					       uint64_t tag);

/*
 * Prepares the state of one remote queue, reached through addr; tag is
 * our first tag for it (its rdmx_swsrd_cookie when its packet carried
 * that back), 0 for a random one.
 */
void rdmx_swsrd_peer_construct(struct rdmx_swsrd *srd,
			       struct rdmx_swsrd_peer *peer, void *addr,
			       uint64_t tag);

/* The tag offered to the sender at a canonical address of len bytes. */
uint64_t rdmx_swsrd_cookie(const struct rdmx_swsrd *srd, const void *addr, size_t len);

/*
 * The CHALLENGE (in *out) that answers hdr, received from an unknown
 * sender whose cookie is tag; false when it draws none (it is itself a
 * CHALLENGE, or the engine's budget of challenges is spent).
 */
bool rdmx_swsrd_challenge(struct rdmx_swsrd *srd, const struct rdmx_srd_hdr *hdr,
			  uint64_t tag, uint64_t now, struct rdmx_wire_srd *out);

/*
 * Whether the peer's receiver takes RDMX_SRD_WINDOW_MAX packets past its
 * first not seen (wide), as its handshake said, or only 64; sends may
 * fill that much.
 */
void rdmx_swsrd_peer_window(struct rdmx_swsrd_peer *peer, bool wide);

/*
 * Whether the peer takes our packets from any of our paths (its handshake
 * said that its device finds a peer by the session tag as well as by the
 * address): only then do its packets go by paths other than 0.
 */
void rdmx_swsrd_peer_paths(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
			   bool multipath);

/* Fails every send of the peer with FLUSHED and frees its state. */
void rdmx_swsrd_peer_destruct(struct rdmx_swsrd *srd,
			      struct rdmx_swsrd_peer *peer);

/*
 * Ends the session with the peer: every send not yet acknowledged fails
 * with FLUSHED, and the next send starts a new session, so that nothing
 * of the old one reaches the peer after it.
 */
void rdmx_swsrd_peer_reset(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer);

/*
 * Queues a send (wr_id, pkts, iov and, for several packets, seg_len and
 * off_at filled in); it is transmitted as
 * soon as the window allows: with more (more sends follow), at the next
 * send to the peer without it, the next send to another peer, or the next
 * progress pass, so a burst reads the clock and fills the window once
 * (and one peer at a time holds sends back). 0 or -FI_ENOMEM.
 */
int rdmx_swsrd_send(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
		    struct rdmx_swsrd_send *send, bool more);

/* Where a received payload landed. */
enum rdmx_srd_room {
	RDMX_SRD_ROOM_NONE,	/* no buffer was posted: refuse (RNR) */
	RDMX_SRD_ROOM_BUF,	/* in a posted buffer */
	RDMX_SRD_ROOM_SHORT,	/* larger than any buffer: refuse for good */
};

/* Whether hdr carries our tag for peer: the only packets swsrd uses. */
static inline bool rdmx_swsrd_authentic(const struct rdmx_swsrd_peer *peer,
					const struct rdmx_srd_hdr *hdr)
{
	return hdr->dst_tag == peer->local_tag;
}

/*
 * Handles a validated header received from peer at time now with
 * payload_len bytes after it, the payload being where room says. Returns
 * true when the payload is new data for the upper layer (the packet
 * carried our tag).
 */
bool rdmx_swsrd_recv(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
		     const struct rdmx_srd_hdr *hdr, size_t payload_len,
		     enum rdmx_srd_room room, uint64_t now);

/*
 * The device sent the packet whose swsrd header is hdr (as xmit was given
 * it, decoded) after `later` packets that xmit took after it (to end a run of
 * segmentation: rdmx_udp_gso.h): until three packets past those are
 * acknowledged, its absence is no loss (60 at most: past that no ack
 * could tell). It holds for the copy last sent. Any header but that of a
 * packet in flight is ignored.
 */
void rdmx_swsrd_trailed(struct rdmx_swsrd *srd, const struct rdmx_srd_hdr *hdr,
			unsigned later);

/*
 * Runs timers (retransmissions, unreachable peers) and sends the acks the
 * packets received since the last call owe.
 */
void rdmx_swsrd_progress(struct rdmx_swsrd *srd, uint64_t now);

/*
 * The clock at which rdmx_swsrd_progress next has something to do with
 * no packet arriving (an ack delayed for batching, a retransmission, a
 * refused packet's pause, sends held for more that never came: now), or
 * UINT64_MAX when nothing is timed. Reads every peer with work under
 * way: for a thread about to sleep.
 */
uint64_t rdmx_swsrd_due(const struct rdmx_swsrd *srd);

/*
 * Sends now every acknowledgement still delayed for batching: the device
 * is closing, and a peer whose packets went unacknowledged would resend
 * them into the void until it gave us up.
 */
void rdmx_swsrd_flush_acks(struct rdmx_swsrd *srd);

#endif /* RDMX_SWSRD_H */
