/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: swsrd, software SRD (see rdmx_swsrd.h for the protocol). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_swsrd.h"
#include "rdmx_swsrd_rx.h"

#define RDMX_SRD_DUPTHRESH	3	/* later packets acked before fast rexmit */
#define RDMX_SRD_HEARD_SPAN	4	/* unreachable timeouts a peer heard from gets */

static inline struct rdmx_swsrd_slot *rdmx_srd_slot(struct rdmx_swsrd_peer *peer,
						    uint32_t psn)
{
	return &peer->slots[psn & (peer->slot_cnt - 1)];
}

void rdmx_swsrd_cfg_default(struct rdmx_swsrd_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->rto_min_ns = g_rdmx_params.rto_min_us * 1000ULL;
	cfg->rto_init_ns = RDMX_MAX(cfg->rto_min_ns, 2000000ULL);
	cfg->rto_max_ns = RDMX_MAX(cfg->rto_init_ns, 250000000ULL);
	cfg->rnr_delay_ns = 50000;
	/* Well inside the smallest retransmission timeout. */
	cfg->ack_delay_ns = RDMX_MIN(50000ULL, cfg->rto_min_ns / 4);
	/* Longer than the gap between packets of a stream. */
	cfg->ack_idle_ns = RDMX_MIN(5000ULL, cfg->ack_delay_ns);
	cfg->unreach_ns = g_rdmx_params.unreach_ms * 1000000ULL;
	/*
	 * Retransmissions happen only while we progress: a process that
	 * stopped polling for a while must not find its peers dead on return.
	 */
	cfg->unreach_retries = 6;
	cfg->rnr_retry = (unsigned) g_rdmx_params.rnr_retry;
	cfg->paths = 1;
}

/* tags keys: the local tag inside the peer each value points at. */
static const void *rdmx_srd_tag_key(const struct rdmx_hash *hash, uint64_t val)
{
	(void) hash;
	return &((const struct rdmx_swsrd_peer *) (uintptr_t) val)->local_tag;
}

int rdmx_swsrd_construct(struct rdmx_swsrd *srd, const struct rdmx_swsrd_ops *ops,
			 void *ctx, const struct rdmx_swsrd_cfg *cfg,
			 uint32_t incarnation, struct rdmx_dev_stats *stats)
{
	memset(srd, 0, sizeof(*srd));
	srd->ops = ops;
	srd->stats = stats;
	srd->ctx = ctx;
	srd->cfg = *cfg;
	/* Epoch 0 means "none" on the wire, so keep the high bits non-zero. */
	srd->incarnation = (incarnation & 0xffffff) ? (incarnation & 0xffffff) : 1;
	srd->key[0] = rdmx_random64();
	srd->key[1] = rdmx_random64();
	rdmx_dlist_init(&srd->active);
	return rdmx_hash_construct(&srd->tags, sizeof(uint64_t), rdmx_srd_tag_key);
}

void rdmx_swsrd_destruct(struct rdmx_swsrd *srd)
{
	rdmx_hash_destruct(&srd->tags);
}

struct rdmx_swsrd_peer *rdmx_swsrd_peer_by_tag(const struct rdmx_swsrd *srd,
					       uint64_t tag)
{
	uint64_t val;

	return rdmx_hash_find(&srd->tags, &tag, &val) ?
	       (struct rdmx_swsrd_peer *) (uintptr_t) val : NULL;
}

/* Takes the peer's tag out of the index, if the index names it by it. */
static void rdmx_srd_tag_unindex(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer)
{
	if (peer->tag_indexed && rdmx_swsrd_peer_by_tag(srd, peer->local_tag) == peer)
		rdmx_hash_remove(&srd->tags, &peer->local_tag);
	peer->tag_indexed = false;
}

/* The paths our packets to peer take: the device's, if the peer takes them. */
static unsigned rdmx_srd_path_cnt(const struct rdmx_swsrd *srd,
				  const struct rdmx_swsrd_peer *peer)
{
	return peer->multipath ? RDMX_MAX(RDMX_MIN(srd->cfg.paths, RDMX_SRD_PATHS_MAX), 1) : 1;
}

/* A tag no packet can carry by chance: never 0. */
static uint64_t rdmx_srd_new_tag(void)
{
	uint64_t tag;

	while (!(tag = rdmx_random64()))
		;
	return tag;
}

/*
 * A new transmit session. It takes a new tag too (tag, or a random one
 * for 0): packets of the old one still on their way to us, and any forged
 * on the strength of it, no longer carry ours.
 */
static void rdmx_srd_tx_reset(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
			      uint32_t session, uint64_t tag)
{
	rdmx_srd_tag_unindex(srd, peer);
	peer->local_tag = tag ? tag : rdmx_srd_new_tag();
	/* Unindexed (no memory): packets of its other paths are challenged. */
	peer->tag_indexed = !rdmx_hash_insert(&srd->tags, &peer->local_tag,
					      (uintptr_t) peer);
	peer->tx_epoch = (srd->incarnation << 8) | (session & 0xff ? session & 0xff : 1);
	peer->snd_una = 0;
	peer->snd_nxt = 0;
	peer->recover_psn = 0;
	peer->silence_ns = 0;
	peer->probing = false;
	peer->acked_first_ns = 0;
	peer->sack_end = RDMX_SRD_SACK_BITS;
	rdmx_srd_cc_init(&peer->cc, rdmx_clock_ns());
	rdmx_srd_paths_init(&peer->paths, rdmx_srd_path_cnt(srd, peer));
	peer->paths_ok = false;
	peer->due_min = UINT64_MAX;
	peer->srtt_ns = 0;
	peer->rttvar_ns = 0;
	peer->rto_ns = srd->cfg.rto_init_ns;
}

void rdmx_swsrd_peer_construct(struct rdmx_swsrd *srd,
			       struct rdmx_swsrd_peer *peer, void *addr,
			       uint64_t tag)
{
	memset(peer, 0, sizeof(*peer));
	peer->addr = addr;
	rdmx_dlist_init(&peer->waiting);
	rdmx_dlist_init(&peer->active_link);
	peer->wnd_max = RDMX_SRD_WINDOW;
	rdmx_srd_tx_reset(srd, peer, 1, tag);
}

void rdmx_swsrd_peer_window(struct rdmx_swsrd_peer *peer, bool wide)
{
	peer->wnd_max = wide ? RDMX_SRD_WINDOW_MAX : RDMX_SRD_WINDOW;
}

void rdmx_swsrd_peer_paths(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
			   bool multipath)
{
	unsigned cnt;

	peer->multipath = multipath;
	cnt = rdmx_srd_path_cnt(srd, peer);
	if (peer->paths.cnt != cnt)
		rdmx_srd_paths_init(&peer->paths, cnt);
}

/* Sets when a slot is due; the peer's scan for due slots waits till then. */
static void rdmx_srd_due_set(struct rdmx_swsrd_peer *peer, struct rdmx_swsrd_slot *slot,
			     uint64_t due)
{
	slot->due_ns = due;
	peer->due_min = RDMX_MIN(peer->due_min, due);
}

/*
 * The path the packet of slot psn goes by now: a new one's turn (which
 * the slot keeps), a resend by the best path but the last copy's; 0 until
 * the peer acknowledged this session with the tag we know, which its
 * other paths would carry in vain if it were stale.
 */
static unsigned rdmx_srd_slot_path(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
				   struct rdmx_swsrd_slot *slot, uint32_t psn)
{
	bool probe;

	if (peer->paths.cnt == 1 || !peer->paths_ok)
		slot->last_path = 0;
	else if (slot->copies)
		slot->last_path = (uint8_t) rdmx_srd_path_best(&peer->paths, slot->last_path);
	else {
		slot->path = (uint8_t) rdmx_srd_path_next(&peer->paths, psn, &probe);
		slot->last_path = slot->path;
		srd->stats->path_probes += probe;
	}
	return slot->last_path;
}

/*
 * Gives iov (from iov[1] on) the packet of a slot, its header built in
 * hdr when its send is of several packets; returns the pieces.
 */
static size_t rdmx_srd_packet(const struct rdmx_swsrd_slot *slot, struct iovec *iov,
			      uint64_t hdr[RDMX_DEV_SEG_HDR_MAX / sizeof(uint64_t)])
{
	const struct rdmx_swsrd_send *send = slot->send;
	size_t off, len;

	if (!send)
		return 0;
	if (send->pkts == 1) {
		memcpy(iov, send->iov, send->iov_cnt * sizeof(*iov));
		return send->iov_cnt;
	}
	off = (size_t) slot->pkt * send->seg_len;
	len = rdmx_iov_len(send->iov + 1, send->iov_cnt - 1);
	memcpy(hdr, send->iov[0].iov_base, send->iov[0].iov_len);
	rdmx_le64_add(&hdr[send->off_at / sizeof(hdr[0])], off);
	iov[0] = (struct iovec) { hdr, send->iov[0].iov_len };
	return 1 + rdmx_iov_slice(iov + 1, send->iov + 1, send->iov_cnt - 1, off,
				  RDMX_MIN(send->seg_len, len - off));
}

/* (Re)transmits the packet of a slot, with fresh acknowledgement fields. */
static void rdmx_srd_xmit_slot(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
			       uint32_t psn, uint64_t now)
{
	struct rdmx_swsrd_slot *slot = rdmx_srd_slot(peer, psn);
	struct rdmx_srd_hdr hdr = {
		.type = RDMX_SRD_DATA,
		.flags = !slot->send ? RDMX_SRD_SKIP :
			 slot->send->awaited ? RDMX_SRD_ACK_NOW : 0,
		.epoch = peer->tx_epoch,
		.psn = psn,
		.dst_tag = peer->peer_tag,
		.src_tag = peer->local_tag,
	};
	struct rdmx_wire_srd wire;
	struct iovec iov[1 + RDMX_DEV_SGE_MAX];
	uint64_t seg_hdr[RDMX_DEV_SEG_HDR_MAX / sizeof(uint64_t)];
	size_t cnt;
	uint64_t wait = peer->rto_ns << RDMX_MIN(slot->retries, 16);
	unsigned path = rdmx_srd_slot_path(srd, peer, slot, psn);

	rdmx_srd_fill_ack(peer, &hdr);
	rdmx_wire_srd_encode(&wire, &hdr);
	/* This copy is in order till the device says otherwise. */
	slot->trail = 0;
	iov[0].iov_base = &wire;
	iov[0].iov_len = sizeof(wire);
	cnt = 1 + rdmx_srd_packet(slot, iov + 1, seg_hdr);
	if (!slot->copies++)
		rdmx_srd_cc_datagram(&peer->cc, rdmx_iov_len(iov, cnt));
	/* A refused send to the socket is a loss: the timer recovers it. */
	(void) srd->ops->xmit(srd->ctx, peer, path, iov, cnt);
	slot->sent_ns = now;
	slot->held = false;
	rdmx_srd_due_set(peer, slot, now + RDMX_MIN(wait, srd->cfg.rto_max_ns));
}

/*
 * Doubles the slots, which hold psn p at p % slot_cnt; false when they
 * are as many as the window or memory is short (the window stays).
 */
static bool rdmx_srd_grow(struct rdmx_swsrd_peer *peer)
{
	uint32_t cnt = peer->slot_cnt * 2;
	struct rdmx_swsrd_slot *slots;

	if (cnt > peer->wnd_max || !(slots = calloc(cnt, sizeof(*slots))))
		return false;
	for (uint32_t psn = peer->snd_una; psn != peer->snd_nxt; psn++)
		slots[psn & (cnt - 1)] = *rdmx_srd_slot(peer, psn);
	free(peer->slots);
	peer->slots = slots;
	peer->slot_cnt = cnt;
	return true;
}

/*
 * A peer with nothing in flight keeps 64 slots, not the most a stream to
 * it once needed (a wide window's are 96 KiB); it grows again as needed.
 */
static void rdmx_srd_shrink(struct rdmx_swsrd_peer *peer)
{
	struct rdmx_swsrd_slot *slots;

	if (peer->slot_cnt <= RDMX_SRD_WINDOW ||
	    !(slots = calloc(RDMX_SRD_WINDOW, sizeof(*slots))))
		return;
	free(peer->slots);
	peer->slots = slots;
	peer->slot_cnt = RDMX_SRD_WINDOW;
}

/* Whether the window has room for another packet to the peer. */
static bool rdmx_srd_room(const struct rdmx_swsrd_peer *peer)
{
	return peer->snd_nxt - peer->snd_una <
	       RDMX_MIN(rdmx_srd_cc_window(&peer->cc), peer->wnd_max);
}

/* Gives waiting sends a psn while the window has room. */
static void rdmx_srd_pump(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
			  uint64_t now)
{
	while (rdmx_srd_room(peer) && !rdmx_dlist_empty(&peer->waiting)) {
		uint32_t psn = peer->snd_nxt;
		struct rdmx_swsrd_slot *slot;

		if (psn - peer->snd_una == peer->slot_cnt && !rdmx_srd_grow(peer))
			return;
		slot = rdmx_srd_slot(peer, psn);
		memset(slot, 0, sizeof(*slot));
		slot->send = rdmx_container_of(peer->waiting.next, struct rdmx_swsrd_send, link);
		slot->pkt = slot->send->next++;
		if (slot->send->next == slot->send->pkts)
			rdmx_dlist_remove(&slot->send->link);
		slot->in_use = true;
		slot->first_ns = now;
		peer->snd_nxt++;
		rdmx_srd_xmit_slot(srd, peer, psn, now);
	}
}

int rdmx_swsrd_send(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
		    struct rdmx_swsrd_send *send, bool more)
{
	if (!peer->slots) {
		peer->slots = calloc(RDMX_SRD_WINDOW, sizeof(*peer->slots));
		if (!peer->slots)
			return -FI_ENOMEM;
		peer->slot_cnt = RDMX_SRD_WINDOW;
	}
	send->pkts = RDMX_MAX(send->pkts, 1);	/* 0: one */
	send->next = 0;
	rdmx_dlist_insert_tail(&peer->waiting, &send->link);
	rdmx_srd_activate(srd, peer);
	if (srd->holding && srd->holding != peer)
		rdmx_srd_pump(srd, srd->holding, rdmx_clock_ns());
	srd->holding = more ? peer : NULL;
	if (!more)
		rdmx_srd_pump(srd, peer, rdmx_clock_ns());
	return 0;
}

static void rdmx_srd_complete(struct rdmx_swsrd *srd, struct rdmx_swsrd_slot *slot,
			      enum rdmx_dev_status status)
{
	struct rdmx_swsrd_send *send = slot->send;

	slot->in_use = false;
	slot->send = NULL;
	if (send)
		srd->ops->done(srd->ctx, send, slot->pkt, status);
}

/* RFC 6298 estimate from one sample of a packet sent once. */
static void rdmx_srd_rtt_sample(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
				uint64_t rtt)
{
	if (!peer->srtt_ns) {
		peer->srtt_ns = rtt;
		peer->rttvar_ns = rtt / 2;
	} else {
		uint64_t err = rtt > peer->srtt_ns ? rtt - peer->srtt_ns :
			       peer->srtt_ns - rtt;

		peer->rttvar_ns = (3 * peer->rttvar_ns + err) / 4;
		peer->srtt_ns = (7 * peer->srtt_ns + rtt) / 8;
	}
	/*
	 * The floor is a margin over the round trip, not a least value (as
	 * Linux TCP's): a queue on the path makes round trips long and
	 * steady, and a timeout of SRTT + 4 RTTVAR would then fire on any
	 * packet a little later than the average.
	 */
	peer->rto_ns = RDMX_MIN(peer->srtt_ns + RDMX_MAX(4 * peer->rttvar_ns,
							srd->cfg.rto_min_ns),
				srd->cfg.rto_max_ns);
}

/* How much later a packet may arrive than one sent after it: reordering. */
static uint64_t rdmx_srd_reorder_ns(const struct rdmx_swsrd_peer *peer)
{
	return peer->cc.min_rtt_ns / 4;
}

/*
 * Whether the timeout of a slot sent once tells of its path: a later
 * packet of another path got through (rdmx_swsrd_path.h), or an ack a
 * reorder margin after the one that first left it missing (past a packet
 * another path sent no earlier) still did. The second is what a stream
 * with a large bandwidth-delay product needs: its runs follow each other
 * closer than the margin, and behind a hole news of the packets sent
 * after the next run never comes (the acks' selective bits); an ack that
 * stops coming (a receiver held up) tells nothing.
 */
static bool rdmx_srd_path_timeout(const struct rdmx_swsrd_peer *peer,
				  const struct rdmx_swsrd_slot *slot)
{
	uint64_t margin = rdmx_srd_reorder_ns(peer);

	return rdmx_srd_path_blamed(&peer->paths, slot->path, slot->sent_ns, margin) ||
	       (slot->hole_ns && peer->ack_ns >= slot->hole_ns + margin);
}

/*
 * Counts the loss of the slot's packet, sent once, against its path, when
 * it is known to be the path's (a timeout: rdmx_srd_path_timeout). True
 * when the path is bad: the loss tells of it, not of congestion.
 */
static bool rdmx_srd_path_drop(struct rdmx_swsrd_peer *peer, struct rdmx_swsrd_slot *slot,
			       bool timeout)
{
	struct rdmx_srd_paths *p = &peer->paths;

	if (p->cnt == 1 || slot->copies != 1 || slot->path_lost ||
	    (timeout && !rdmx_srd_path_timeout(peer, slot)))
		return false;
	slot->path_lost = true;
	return !rdmx_srd_path_lost(p, slot->path);
}

/*
 * Whether the timeout of a slot tells that nothing gets through: its
 * resend timed out too, and no packet first sent with or after its first
 * copy was acknowledged (any copy of it: a window resent whole is acked
 * by resends). A loss at random leaves later packets to be acknowledged;
 * a dead path not.
 */
static bool rdmx_srd_silent(const struct rdmx_swsrd_peer *peer,
			    const struct rdmx_swsrd_slot *slot)
{
	return slot->retries >= 2 && peer->acked_first_ns < slot->first_ns;
}

/*
 * One loss event per window of data; timeout: found by a timer. A packet
 * lost on a bad path tells of the path, not of congestion. Silence
 * (rdmx_srd_silent) shrinks the window and the product once per round of
 * timeouts, each round an RTO or more after the last.
 */
static void rdmx_srd_loss(struct rdmx_swsrd_peer *peer, uint32_t psn, bool timeout,
			  uint64_t now)
{
	struct rdmx_swsrd_slot *slot = rdmx_srd_slot(peer, psn);
	bool silent = timeout && rdmx_srd_silent(peer, slot);

	if (rdmx_srd_path_drop(peer, slot, timeout))
		return;
	if (silent) {
		if (now - peer->silence_ns < peer->rto_ns)
			return;
		peer->silence_ns = now;
	} else if (rdmx_srd_before(psn, peer->recover_psn)) {
		return;
	}
	rdmx_srd_cc_loss(&peer->cc, silent);
	peer->recover_psn = peer->snd_nxt;
}

static bool rdmx_srd_acked(uint32_t psn, uint32_t ack, uint64_t sack)
{
	uint32_t off = psn - ack;

	return rdmx_srd_before(psn, ack) ||
	       (off < RDMX_SRD_SACK_BITS && (sack >> off) & 1);
}

/*
 * What acks tell of the hole at psn (its slot), three later packets
 * having been acknowledged: lost; with several paths, as
 * rdmx_srd_path_hole says (a LATE one is resent, but counted as no loss:
 * a path that recovered would stay bad for its reordering).
 */
static enum rdmx_srd_hole rdmx_srd_hole(const struct rdmx_swsrd_peer *peer,
					const struct rdmx_swsrd_slot *slot,
					uint32_t psn, uint64_t now)
{
	if (peer->paths.cnt == 1)
		return RDMX_SRD_HOLE_LOST;
	return rdmx_srd_path_hole(&peer->paths, slot->path, psn, peer->snd_una,
				  now - slot->sent_ns, peer->srtt_ns, RDMX_SRD_DUPTHRESH);
}

/*
 * Whether the last copy of a resent slot was lost: a packet sent once
 * after it by the same path, by more than a quarter of the least round
 * trip (reordering), was acknowledged (RACK, RFC 8985). Psns cannot tell:
 * the resend carries its old one.
 */
static bool rdmx_srd_overtaken(const struct rdmx_swsrd_peer *peer,
			       const struct rdmx_swsrd_slot *slot)
{
	return slot->sent_ns + rdmx_srd_reorder_ns(peer) <
	       peer->paths.acked_sent_ns[slot->last_path];
}

/*
 * Retransmits holes that three later acknowledged packets jumped over
 * (three past the later ones the device sent before it: rdmx_swsrd_trailed),
 * and resends that later packets overtook.
 */
static void rdmx_srd_fast_rexmit(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
				 const struct rdmx_srd_hdr *hdr, uint64_t now)
{
	uint32_t high;

	if (!hdr->sack)
		return;
	high = hdr->ack + 63 - (uint32_t) __builtin_clzll(hdr->sack);
	for (uint32_t psn = peer->snd_una;
	     psn != peer->snd_nxt && (int32_t) (high - psn) >= RDMX_SRD_DUPTHRESH; psn++) {
		struct rdmx_swsrd_slot *slot = rdmx_srd_slot(peer, psn);
		enum rdmx_srd_hole hole;

		if (!slot->in_use || slot->rnr ||
		    (int32_t) (high - psn) < RDMX_SRD_DUPTHRESH + slot->trail)
			continue;
		if (slot->copies > 1)
			hole = rdmx_srd_overtaken(peer, slot) ? RDMX_SRD_HOLE_LOST :
			       RDMX_SRD_HOLE_WAIT;
		else
			hole = rdmx_srd_hole(peer, slot, psn, now);
		if (!hole)
			continue;
		srd->stats->fast_retransmits++;
		if (hole == RDMX_SRD_HOLE_LOST)
			rdmx_srd_loss(peer, psn, false, now);
		rdmx_srd_xmit_slot(srd, peer, psn, now);
	}
}

void rdmx_swsrd_trailed(struct rdmx_swsrd *srd, const struct rdmx_srd_hdr *hdr,
			unsigned later)
{
	struct rdmx_swsrd_peer *peer = rdmx_swsrd_peer_by_tag(srd, hdr->src_tag);
	uint32_t psn = hdr->psn;
	struct rdmx_swsrd_slot *slot;

	if (!peer || !peer->slots || hdr->type != RDMX_SRD_DATA || hdr->epoch != peer->tx_epoch ||
	    !rdmx_srd_before(psn, peer->snd_nxt) || rdmx_srd_before(psn, peer->snd_una))
		return;
	slot = rdmx_srd_slot(peer, psn);
	/* No more than acks can report past it with three more. */
	if (slot->in_use)
		slot->trail = (uint8_t) RDMX_MAX(slot->trail,
						 RDMX_MIN(later, RDMX_SRD_SACK_BITS - 1 -
								 RDMX_SRD_DUPTHRESH));
}

/* Resends the slot at psn, its timeout a loss. */
static void rdmx_srd_timeout_resend(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
				    uint32_t psn, uint64_t now)
{
	rdmx_srd_slot(peer, psn)->retries++;
	srd->stats->retransmits++;
	rdmx_srd_loss(peer, psn, true, now);
	rdmx_srd_xmit_slot(srd, peer, psn, now);
}

/*
 * An ack while probing: one that acknowledged a held packet tells they
 * were late, and they keep their timers; one that acknowledged the probe
 * or a packet sent after it (after), and none of them, tells they were
 * lost, and they are resent, but for those refused meanwhile (their
 * pause runs). Any other tells nothing yet.
 */
static void rdmx_srd_probe_answer(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
				  bool held_acked, bool after, uint64_t now)
{
	if (!held_acked && !after)
		return;
	peer->probing = false;
	for (uint32_t psn = peer->snd_una; psn != peer->snd_nxt; psn++) {
		struct rdmx_swsrd_slot *slot = rdmx_srd_slot(peer, psn);

		if (!slot->in_use || !slot->held)
			continue;
		slot->held = false;
		if (!held_acked && !slot->rnr_wait)
			rdmx_srd_timeout_resend(srd, peer, psn, now);
	}
}

/*
 * After an ack: the packets sent once that it leaves missing past a
 * packet another path sent no earlier, seen so for the first time now.
 * A pass of its own after the ack's: that one moves the paths' latest
 * acknowledged times as it goes.
 */
static void rdmx_srd_holes_seen(struct rdmx_swsrd_peer *peer, uint32_t ack, uint64_t now)
{
	for (uint32_t psn = peer->snd_una; psn != peer->snd_nxt &&
	     rdmx_srd_before(psn, ack + RDMX_SRD_SACK_BITS); psn++) {
		struct rdmx_swsrd_slot *slot = rdmx_srd_slot(peer, psn);

		if (slot->in_use && slot->copies == 1 && !slot->hole_ns &&
		    rdmx_srd_path_passed(&peer->paths, slot->path, slot->sent_ns))
			slot->hole_ns = now;
	}
}

static void rdmx_srd_on_ack(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
			    const struct rdmx_srd_hdr *hdr, uint64_t now)
{
	uint32_t newly = 0;
	bool held_acked = false, after = false;

	if (!peer->slots || hdr->ack_epoch != peer->tx_epoch)
		return;
	/* Nobody acknowledges what we never sent: a forged or stale ack. */
	if (rdmx_srd_before(peer->snd_nxt, hdr->ack)) {
		srd->stats->rx_malformed++;
		return;
	}
	peer->paths_ok = true;
	peer->ack_ns = now;
	/* Nothing past the selective bits is acknowledged. */
	for (uint32_t psn = peer->snd_una; psn != peer->snd_nxt &&
	     rdmx_srd_before(psn, hdr->ack + RDMX_SRD_SACK_BITS); psn++) {
		struct rdmx_swsrd_slot *slot = rdmx_srd_slot(peer, psn);

		if (!slot->in_use || !rdmx_srd_acked(psn, hdr->ack, hdr->sack))
			continue;
		/*
		 * Karn: only packets sent once give an unambiguous sample. An
		 * ack at or before the packet's time tells none either: its
		 * device stamped both with one time read before the packet
		 * left (a pass over a batch of completions).
		 */
		if (slot->copies == 1) {
			rdmx_srd_path_acked(&peer->paths, slot->last_path, slot->sent_ns);
			if (now > slot->sent_ns) {
				rdmx_srd_rtt_sample(srd, peer, now - slot->sent_ns);
				rdmx_srd_cc_rtt(&peer->cc, now - slot->sent_ns, now);
				if (peer->paths.cnt > 1)
					rdmx_srd_path_delivered(&peer->paths, slot->path, psn,
								now - slot->sent_ns);
			}
		}
		peer->acked_first_ns = RDMX_MAX(peer->acked_first_ns, slot->first_ns);
		held_acked |= slot->held;
		after |= slot->sent_ns >= peer->probe_ns;
		rdmx_srd_complete(srd, slot, RDMX_DEV_OK);
		newly++;
	}
	while (peer->snd_una != peer->snd_nxt &&
	       !rdmx_srd_slot(peer, peer->snd_una)->in_use)
		peer->snd_una++;
	if (peer->paths.cnt > 1)
		rdmx_srd_holes_seen(peer, hdr->ack, now);
	if (peer->probing)
		rdmx_srd_probe_answer(srd, peer, held_acked, after, now);
	if (rdmx_srd_before(peer->sack_end, hdr->ack + RDMX_SRD_SACK_BITS))
		peer->sack_end = hdr->ack + RDMX_SRD_SACK_BITS;
	if (newly)
		rdmx_srd_cc_acked(&peer->cc, newly, peer->srtt_ns, peer->wnd_max, now);
	rdmx_srd_fast_rexmit(srd, peer, hdr, now);
	rdmx_srd_pump(srd, peer, now);
}

/* Gives the refused send back with status; a SKIP keeps the psn sequence. */
static void rdmx_srd_give_up(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
			     uint32_t psn, enum rdmx_dev_status status, uint64_t now)
{
	struct rdmx_swsrd_slot *slot = rdmx_srd_slot(peer, psn);

	rdmx_srd_complete(srd, slot, status);
	slot->in_use = true;
	slot->rnr = 0;
	slot->rnr_wait = false;
	slot->retries = 0;
	rdmx_srd_xmit_slot(srd, peer, psn, now);
}

static void rdmx_srd_on_rnr(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
			    const struct rdmx_srd_hdr *hdr, uint64_t now)
{
	struct rdmx_swsrd_slot *slot;

	if (!peer->slots || hdr->ack_epoch != peer->tx_epoch ||
	    !rdmx_srd_before(hdr->psn, peer->snd_nxt) ||
	    rdmx_srd_before(hdr->psn, peer->snd_una))
		return;
	slot = rdmx_srd_slot(peer, hdr->psn);
	if (!slot->in_use || !slot->send)
		return;
	srd->stats->rnr_received++;
	if (hdr->flags & RDMX_SRD_TOO_BIG) {
		/* No retry can fit: fail it now. */
		rdmx_srd_give_up(srd, peer, hdr->psn, RDMX_DEV_MSGSIZE, now);
		return;
	}
	slot->rnr_wait = true;
	if (++slot->rnr <= srd->cfg.rnr_retry) {
		rdmx_srd_due_set(peer, slot, now + srd->cfg.rnr_delay_ns);
		return;
	}
	/*
	 * Out of retries. A copy still on its way could be delivered after we
	 * gave up: wait for its refusal or its ack, or, if it was lost and
	 * neither ever comes, a retransmission timeout (the timer gives up;
	 * a copy delayed longer than that could still be delivered).
	 */
	if (slot->rnr < slot->copies) {
		rdmx_srd_due_set(peer, slot, now + peer->rto_ns);
		return;
	}
	rdmx_srd_give_up(srd, peer, hdr->psn, RDMX_DEV_RNR, now);
}

/*
 * The peer told us its tag: what is in flight went with a wrong one and
 * was dropped unseen, so it goes again now (not a loss: the window and
 * the timers stay).
 */
static void rdmx_srd_on_challenge(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
				  const struct rdmx_srd_hdr *hdr, uint64_t now)
{
	if (hdr->src_tag == peer->peer_tag)
		return;
	rdmx_srd_learn_tag(peer, hdr->src_tag);
	for (uint32_t psn = peer->snd_una; peer->slots && psn != peer->snd_nxt; psn++) {
		struct rdmx_swsrd_slot *slot = rdmx_srd_slot(peer, psn);

		if (slot->in_use && !slot->rnr_wait)
			rdmx_srd_xmit_slot(srd, peer, psn, now);
	}
	if (peer->ack_pending)
		rdmx_srd_send_ctrl(srd, peer, RDMX_SRD_ACK, 0, 0);
}

bool rdmx_swsrd_recv(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
		     const struct rdmx_srd_hdr *hdr, size_t payload_len,
		     enum rdmx_srd_room room, uint64_t now)
{
	if (!rdmx_swsrd_authentic(peer, hdr)) {
		rdmx_srd_unauth(srd, peer, hdr, now);
		return false;
	}
	peer->heard_ns = now;
	if (hdr->type == RDMX_SRD_CHALLENGE) {
		rdmx_srd_on_challenge(srd, peer, hdr, now);
		return false;
	}
	if (hdr->ack_epoch)
		rdmx_srd_on_ack(srd, peer, hdr, now);
	switch (hdr->type) {
	case RDMX_SRD_DATA:
		return rdmx_srd_on_data(srd, peer, hdr, payload_len, room, now);
	case RDMX_SRD_RNR:
		rdmx_srd_on_rnr(srd, peer, hdr, now);
		return false;
	default:
		return false;
	}
}

/* Fails every send of the peer with status and empties its window. */
static void rdmx_srd_fail_all(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
			      enum rdmx_dev_status status)
{
	struct rdmx_dlist *it;

	for (uint32_t psn = peer->snd_una; peer->slots && psn != peer->snd_nxt; psn++) {
		struct rdmx_swsrd_slot *slot = rdmx_srd_slot(peer, psn);

		if (slot->in_use)
			rdmx_srd_complete(srd, slot, status);
	}
	while ((it = rdmx_dlist_pop_front(&peer->waiting))) {
		struct rdmx_swsrd_send *send = rdmx_container_of(it, struct rdmx_swsrd_send, link);

		/* Its packets not given a psn yet; the others went above. */
		while (send->next < send->pkts)
			srd->ops->done(srd->ctx, send, send->next++, status);
	}
	peer->snd_una = peer->snd_nxt;
}

/* Fails every send with status; what follows is a new session. */
static void rdmx_srd_end_session(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
				 enum rdmx_dev_status status)
{
	uint32_t session = (peer->tx_epoch & 0xff) + 1;

	rdmx_srd_fail_all(srd, peer, status);
	/* The receiver drops what it kept of the old one. */
	rdmx_srd_tx_reset(srd, peer, session, 0);
}

static void rdmx_srd_unreachable(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer)
{
	srd->stats->unreachable++;
	rdmx_srd_end_session(srd, peer, RDMX_DEV_UNREACH);
}

void rdmx_swsrd_peer_reset(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer)
{
	if (peer->slots)
		rdmx_srd_end_session(srd, peer, RDMX_DEV_FLUSHED);
}

/*
 * Whether the slot at psn, timed out, waits for the probe's answer: no
 * packet first sent after it left was acknowledged (that would tell it
 * was lost: RACK, RFC 8985), it was not held already (a hold lasts one
 * timeout of the probe), and the probe is another packet still in
 * flight (not acknowledged, not waiting out a refusal; a probe given up
 * is in flight as its SKIP). Else it is resent; when it may be late, as
 * the probe if none is in flight.
 */
static bool rdmx_srd_hold(struct rdmx_swsrd_peer *peer, uint32_t psn, uint64_t now)
{
	struct rdmx_swsrd_slot *slot = rdmx_srd_slot(peer, psn);
	const struct rdmx_swsrd_slot *probe = rdmx_srd_slot(peer, peer->probe_psn);

	if (peer->acked_first_ns > slot->sent_ns || slot->held)
		return false;
	if (peer->probing && psn != peer->probe_psn &&
	    !rdmx_srd_before(peer->probe_psn, peer->snd_una) && probe->in_use &&
	    !probe->rnr_wait) {
		slot->held = true;
		rdmx_srd_due_set(peer, slot, probe->due_ns);
		return true;
	}
	peer->probing = true;
	peer->probe_psn = psn;
	peer->probe_ns = now;
	return false;
}

/*
 * Retransmits what is due; false when the peer was declared unreachable.
 * The window is scanned only once the earliest due time may have come,
 * about once per retransmission timeout in a stream, not at every pass.
 */
static bool rdmx_srd_timers(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer,
			    uint64_t now)
{
	if (now < peer->due_min)
		return true;
	peer->due_min = UINT64_MAX;
	for (uint32_t psn = peer->snd_una; psn != peer->snd_nxt; psn++) {
		struct rdmx_swsrd_slot *slot = rdmx_srd_slot(peer, psn);

		if (!slot->in_use)
			continue;
		if (now < slot->due_ns) {
			peer->due_min = RDMX_MIN(peer->due_min, slot->due_ns);
			continue;
		}
		/*
		 * Unreachable: silent since this packet was first sent. A peer
		 * still heard from is there, however many copies a flood of
		 * someone else's datagrams cost, up to RDMX_SRD_HEARD_SPAN
		 * timeouts (a path that fails one way only).
		 */
		if ((now - RDMX_MAX(slot->first_ns, peer->heard_ns) >= srd->cfg.unreach_ns ||
		     now - slot->first_ns >= RDMX_SRD_HEARD_SPAN * srd->cfg.unreach_ns) &&
		    slot->retries >= srd->cfg.unreach_retries) {
			rdmx_srd_unreachable(srd, peer);
			return false;
		}
		if (slot->rnr_wait) {
			/* The refusal's pause is over: not a loss. */
			if (slot->rnr > srd->cfg.rnr_retry) {
				rdmx_srd_give_up(srd, peer, psn, RDMX_DEV_RNR, now);
				continue;
			}
			slot->rnr_wait = false;
			rdmx_srd_xmit_slot(srd, peer, psn, now);
			continue;
		}
		/*
		 * Past what acks report (a window wider than their selective
		 * bits, behind a hole): no ack could have told of it, so its
		 * timer says nothing; its turn comes once the hole before it
		 * fills and acks reach it. The hole's own timer, and the
		 * unreachable check above, keep the session honest.
		 */
		if (!rdmx_srd_before(psn, peer->sack_end)) {
			rdmx_srd_due_set(peer, slot, now + peer->rto_ns);
			continue;
		}
		if (!rdmx_srd_hold(peer, psn, now))
			rdmx_srd_timeout_resend(srd, peer, psn, now);
	}
	return true;
}

void rdmx_swsrd_progress(struct rdmx_swsrd *srd, uint64_t now)
{
	struct rdmx_dlist *it, *next;

	srd->holding = NULL;
	for (it = srd->active.next; it != &srd->active; it = next) {
		struct rdmx_swsrd_peer *peer =
			rdmx_container_of(it, struct rdmx_swsrd_peer, active_link);

		next = it->next;
		if (peer->ack_pending && (peer->ack_now ||
					  now - peer->ack_last >= srd->cfg.ack_idle_ns ||
					  now - peer->ack_since >= srd->cfg.ack_delay_ns))
			rdmx_srd_send_ctrl(srd, peer, RDMX_SRD_ACK, 0, 0);
		if (peer->slots && rdmx_srd_timers(srd, peer, now))
			rdmx_srd_pump(srd, peer, now);
		if (!peer->ack_pending && peer->snd_una == peer->snd_nxt &&
		    rdmx_dlist_empty(&peer->waiting)) {
			peer->active = false;
			rdmx_dlist_remove(&peer->active_link);
			rdmx_srd_shrink(peer);
		}
	}
	srd->pass++;
}

uint64_t rdmx_swsrd_due(const struct rdmx_swsrd *srd)
{
	uint64_t due = UINT64_MAX;
	const struct rdmx_dlist *it;

	rdmx_dlist_foreach(&srd->active, it) {
		const struct rdmx_swsrd_peer *peer =
			rdmx_container_of(it, struct rdmx_swsrd_peer, active_link);

		if (peer->ack_pending)
			due = RDMX_MIN(due, peer->ack_now ? 0 :
				       RDMX_MIN(peer->ack_last + srd->cfg.ack_idle_ns,
						peer->ack_since + srd->cfg.ack_delay_ns));
		if (peer->slots && peer->snd_una != peer->snd_nxt)
			due = RDMX_MIN(due, peer->due_min);
		/* Sends held for the rest of their burst, which never came. */
		if (!rdmx_dlist_empty(&peer->waiting) && rdmx_srd_room(peer))
			due = 0;
	}
	return due;
}

void rdmx_swsrd_peer_destruct(struct rdmx_swsrd *srd, struct rdmx_swsrd_peer *peer)
{
	if (srd->holding == peer)
		srd->holding = NULL;
	rdmx_srd_tag_unindex(srd, peer);
	rdmx_srd_fail_all(srd, peer, RDMX_DEV_FLUSHED);
	if (peer->active)
		rdmx_dlist_remove(&peer->active_link);
	peer->active = false;
	free(peer->slots);
	peer->slots = NULL;
	peer->slot_cnt = 0;
}
