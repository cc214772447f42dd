/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the send side of the rdm layer. A send (rdmx_txe) travels as one
 * or more packets (rdmx_pke), each one device send:
 * - eager: the whole message in one packet;
 * - medium: segments of at most one packet's payload, all posted at once;
 * - long: a request to send (RTS), then DATA segments up to the limit the
 *   receiver's clear-to-send (CTS) packets grant.
 * Segments the device or the packet pool cannot take yet wait on the
 * endpoint's pending list and go out from progress. A send completes
 * at the level it asked for (enum rdmx_tx_level): at posting, when its
 * last packet completed at the device (the peer's device acknowledged
 * every packet), or after that and the receiver's delivery
 * acknowledgement (rdmx_dack.c); if it failed, after the receiver was
 * told to skip it (a VOID packet).
 */
#ifndef RDMX_TX_H
#define RDMX_TX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <rdma/fabric.h>

#include "rdmx_dev.h"
#include "rdmx_list.h"
#include "rdmx_match.h"
#include "rdmx_comp.h"
#include "rdmx_wire.h"

struct rdmx_ep;
struct rdmx_peer;
struct rdmx_rxm;
struct rdmx_txe;

enum rdmx_proto {
	RDMX_PROTO_EAGER,
	RDMX_PROTO_MEDIUM,
	RDMX_PROTO_LONG,
};

/*
 * What a send carries besides a message (rdmx_rma.c): an RMA write's
 * bytes, a read's request, the bytes a peer's read asked for, or an
 * atomic's operands (which may fetch old values as a read does).
 */
enum rdmx_rma_op {
	RDMX_RMA_NONE,
	RDMX_RMA_WRITE,
	RDMX_RMA_READ,
	RDMX_RMA_RESP,
	RDMX_RMA_ATOMIC,
};

/*
 * Buffers of an atomic's operands, compare values or results, at most:
 * operands and compare values share a send's RDMX_IOV_LIMIT.
 */
#define RDMX_ATOMIC_IOV		2

/*
 * When a send completes (fi_cq(3) completion levels). The transitions:
 * DELIVERY_ASKED -> DELIVERY_AWAITED when its first packet left (the
 * peer's count of sends waiting for a DACK goes up), -> DELIVERED when
 * the DACK arrives (down again, as when a send awaiting it ends); the
 * others are fixed at posting.
 */
enum rdmx_tx_level {
	RDMX_TX_TRANSMIT,		/* every packet acknowledged by the
					   peer's device (the default) */
	RDMX_TX_INJECT,			/* at posting: the payload was copied */
	RDMX_TX_DELIVERY_ASKED,		/* delivery complete, not started yet */
	RDMX_TX_DELIVERY_AWAITED,	/* that, and the receiver's DACK: it
					   matched or buffered the message */
	RDMX_TX_DELIVERED,		/* the DACK came; the packets may not
					   all be acknowledged yet */
};

/* One packet at the device; its address is the device wr_id. */
struct rdmx_pke {
	struct rdmx_dlist	link;		/* on rdmx_peer.retry_q after an RNR,
						   or rdmx_ep.ctrl_pending */
	struct rdmx_txe		*txe;		/* the send it is part of, or NULL */
	struct rdmx_rxm		*rxm;		/* a CTS: the receive it speaks for */
	struct rdmx_peer	*peer;
	uint32_t		rnr;		/* RNR completions so far */
	bool			pooled;		/* taken from rdmx_ep.pke_pool */
	bool			busy;		/* at the device or queued for it */
	bool			heap;		/* a DACK allocated when the pool
						   was empty: freed at its end */
	struct rdmx_dlist	heap_link;	/* heap: on rdmx_ep.pke_heaped */
	union rdmx_wire_hdr	hdr;
	struct iovec		iov[1 + RDMX_IOV_LIMIT];
	size_t			iov_cnt;
	/*
	 * Nonzero: the payload is that many bytes per packet, each packet
	 * with hdr, whose offset (at byte off_at) the device raises
	 * (post_send_segs); 0: one packet.
	 */
	size_t			seg_len;
	size_t			off_at;
	size_t			pkts;		/* counted in rdmx_ep.seg_pkts */
};

/* A send between posting and its completion. */
struct rdmx_txe {
	struct rdmx_dlist	link;		/* on rdmx_ep.tx_pending */
	void			*context;
	uint64_t		cq_flags;	/* FI_SEND | FI_MSG or FI_TAGGED */
	bool			completion;	/* write a CQ entry on success */
	enum rdmx_tx_level	level;
	bool			in_use;		/* taken: a CTS may name it */
	bool			cleared;	/* may send: not a long send still
						   waiting for its first CTS */
	bool			pending;	/* on rdmx_ep.tx_pending */
	bool			deferred;	/* on rdmx_peer.pending: not started */
	bool			orphan;		/* its peer's session ended: if it
						   fails, the peer is not told */
	enum rdmx_proto		proto;
	int			err;		/* first error, positive FI_E*; 0 */
	const char		*why;		/* its description */
	size_t			len;
	uint64_t		tag;
	uint64_t		data;
	uint32_t		pkt_flags;	/* RDMX_PKT_* */
	uint32_t		msg_id;
	uint32_t		rx_id;		/* long: the receiver's id */
	fi_addr_t		addr;
	struct rdmx_peer	*peer;
	size_t			next;		/* offset of the next segment */
	size_t			end;		/* bytes to send in all */
	size_t			limit;		/* bytes cleared to send */
	size_t			seg_size;	/* payload bytes per segment */
	size_t			pkts_out;	/* packets not yet completed */
	struct iovec		iov[RDMX_IOV_LIMIT];
	size_t			iov_cnt;
	struct rdmx_pke		pke;		/* first packet: EAGER, MEDIUM or RTS */
	struct rdmx_wire_read	read;		/* long: the RTS's read descriptor */
	bool			exposed;	/* long-read: rkey is live */
	struct rdmx_dev_rkey	rkey;		/* long-read: the buffers exposed */
	struct rdmx_dev		*read_dev;	/* by this device */
	enum rdmx_rma_op	rma_op;
	uint64_t		rma_key;	/* WRITE, READ: the target's key;
						   RESP: the region's, here */
	uint64_t		rma_addr;	/* and the address there */
	/*
	 * READ: its answer comes in chunks, one message each, in order
	 * (rdmx_rma.c): read_next bytes of them started landing, read_got
	 * landed, read_busy chunks are landing; read_fail, the first error,
	 * waits for those to end, and then fails the read.
	 */
	size_t			read_len;	/* bytes into iov */
	size_t			read_next;
	size_t			read_got;
	uint32_t		read_busy;
	int			read_fail;
	/* ATOMIC: what it does, and where fetched old values land. */
	uint8_t			atomic_op;	/* enum fi_op */
	uint8_t			atomic_datatype;	/* enum fi_datatype */
	uint16_t		atomic_count;
	struct iovec		result[RDMX_ATOMIC_IOV];
	size_t			result_cnt;
	/* RESP: called as the entry is released (txe->err says how it went). */
	void			(*ended)(struct rdmx_ep *ep, struct rdmx_txe *txe);
	void			*owner;		/* ended's: the answer sent */
	bool			silent;		/* fi_inject_write: no entry, even
						   for an error */
	uint8_t			inject[];	/* payload copied at post time */
};

/* What one send asks for, whichever call posted it. */
struct rdmx_send_req {
	const struct iovec	*iov;
	size_t			iov_cnt;
	fi_addr_t		dest;
	uint64_t		tag;
	uint64_t		data;
	void			*context;
	uint64_t		flags;	/* FI_TAGGED, FI_REMOTE_CQ_DATA, FI_INJECT,
					   FI_COMPLETION, FI_MORE, FI_*_COMPLETE */
	bool			inject_op; /* fi_inject: no completion at all */
	struct rdmx_peer	*peer;	/* NULL: dest's */
	enum rdmx_rma_op	rma_op;	/* NONE: a message */
	uint64_t		rma_key;	/* WRITE, READ, RESP (see rdmx_txe) */
	uint64_t		rma_addr;
	void			(*ended)(struct rdmx_ep *ep, struct rdmx_txe *txe);
	void			*owner;		/* RESP: see rdmx_txe */
	uint8_t			atomic_op;	/* ATOMIC (see rdmx_txe); iov holds */
	uint8_t			atomic_datatype;	/* the operands, then the */
	uint16_t		atomic_count;	/* compare values */
	const struct iovec	*result;	/* fetched old values; NULL: none */
	size_t			result_cnt;
};

/* Whether txe waits for an answer of bytes: a read, or an atomic that fetches. */
static inline bool rdmx_tx_fetches(const struct rdmx_txe *txe)
{
	return txe->pkt_flags & RDMX_PKT_RMA_READ;
}

/* Posting (rdmx_send.c), the top of the send side. */

/*
 * Posts a send; 0 or -FI_E*. Domain lock held. -FI_EAGAIN: no send
 * entry, the device or the peer's pending queue full, or the peer in RNR
 * backoff; the caller's progress may make room.
 */
ssize_t rdmx_send(struct rdmx_ep *ep, const struct rdmx_send_req *req);

/*
 * Whether the send being posted waits for more (RDMX_DEV_SEND_MORE):
 * asked with FI_MORE, or past the first FI_RDMX_TX_BATCH sends since the
 * endpoint's latest progress pass and not the last of a batch of that
 * many. A stream of small sends reaches the kernel in batches (one
 * system call, one segmentation offload run); a lone send, or a burst
 * shorter than a batch, leaves at once. What a batch holds leaves at the
 * next progress pass, which the next completion queue or counter read
 * makes while rdmx_send_holding (even one with entries ready), or when a
 * send to another peer of the device is posted (rdmx_swsrd_send).
 */
bool rdmx_send_more(struct rdmx_ep *ep, uint64_t flags);

/*
 * Whether the endpoint may hold sends back: one with FI_MORE since its
 * latest progress pass, or a run past a batch and not at the end of one.
 */
bool rdmx_send_holding(const struct rdmx_ep *ep);

/*
 * Puts a filled send on the wire: its message number, its first packet,
 * then what the device takes; more: more sends follow at once. 0, or
 * -FI_EAGAIN when the device took nothing (the send can start again).
 */
int rdmx_tx_start(struct rdmx_ep *ep, struct rdmx_txe *txe, bool more);

/* The device completed a packet; lock held. */
void rdmx_tx_done(struct rdmx_ep *ep, struct rdmx_pke *pke,
		  enum rdmx_dev_status status);

/*
 * The session with peer ended (rdmx_conn.c): its sends under way fail
 * with err, why, without a word to the peer; the packets of its sends and
 * receives still queued here are dropped. Sends not yet started stay.
 * With spare_sent (the peer closed, acknowledging what it received), a
 * send whose every packet is already at the device is left to the
 * device's completions: delivered, it completes; flushed, it fails. A
 * send still waiting for a DACK fails: the peer sent every DACK it owed
 * before its CLOSE.
 */
void rdmx_tx_peer_reset(struct rdmx_ep *ep, struct rdmx_peer *peer, int err,
			const char *why, bool spare_sent);

/*
 * The session with peer is ending: its sends under way are orphans, so
 * one that fails meanwhile (a read whose answer is aborted) tells the
 * peer nothing (no VOID into the session being reset).
 */
void rdmx_tx_peer_orphan(struct rdmx_ep *ep, struct rdmx_peer *peer);

/*
 * peer is let go while only control packets of ours to it are out: those
 * queued here end unsent, those at the device end there naming no peer
 * (rdmx_tx_done frees them and tells no one).
 */
void rdmx_tx_peer_forget(struct rdmx_ep *ep, struct rdmx_peer *peer);

/* Posts what waits: control packets, then segments; lock held. */
void rdmx_tx_progress(struct rdmx_ep *ep);

/* The long protocol's send side (rdmx_long_tx.c). */

/* Fills pke with the RTS of the long send txe (offering its buffers to read). */
void rdmx_long_rts(struct rdmx_ep *ep, struct rdmx_txe *txe, struct rdmx_pke *pke);

/* A CTS from peer: clears its long send to go on, or is dropped and counted. */
void rdmx_long_cts(struct rdmx_ep *ep, struct rdmx_peer *peer,
		   const struct rdmx_pkt *pkt);

/* Send entries after their first packet (rdmx_txe.c). */

/* The completion entry of a send. */
struct rdmx_cq_entry rdmx_tx_entry(const struct rdmx_txe *txe);

/* Gives back a send entry that is over (or never started). */
void rdmx_tx_release(struct rdmx_ep *ep, struct rdmx_txe *txe);

/* A send that awaits a DACK names itself in its message header msg. */
void rdmx_tx_name(const struct rdmx_txe *txe, struct rdmx_wire_eager *msg);

/*
 * Header bytes of pke, a message packet of txe whose own header is
 * hdr_len bytes: an RMA write or read puts its rdmx_wire_rma after it.
 */
size_t rdmx_tx_rma_hdr(const struct rdmx_txe *txe, struct rdmx_pke *pke, size_t hdr_len);

/*
 * Fills pke with the next segments of a medium or long send, at most
 * segs (rdmx_lane_segs): one packet, or a post of segments.
 */
void rdmx_tx_segment(struct rdmx_txe *txe, struct rdmx_pke *pke, size_t segs);

/*
 * Whether the packet being posted has another of its send right behind
 * it: the device holds a packet posted with more to follow until the
 * burst's last, so a burst about to stop for want of a packet entry (or
 * for an RNR pause) must end with this one.
 */
bool rdmx_tx_more(const struct rdmx_ep *ep, const struct rdmx_txe *txe);

/*
 * Posts the segments of txe that fit, queueing it if some must wait; with
 * hold, the last of them too goes with more to follow (a send held back,
 * rdmx_send_more: its segments leave with the burst it is part of).
 */
void rdmx_tx_pump(struct rdmx_ep *ep, struct rdmx_txe *txe, bool hold);

/* Pumps txe and completes it once nothing of it is left at the device. */
void rdmx_tx_advance(struct rdmx_ep *ep, struct rdmx_txe *txe);

/*
 * A packet's life is over: frees it and tells the send, or the receive
 * (a CTS: through its message's ops), behind it.
 */
void rdmx_tx_pke_end(struct rdmx_ep *ep, struct rdmx_pke *pke);

/* Ends a packet that will not be sent (again) with error err, why. */
void rdmx_tx_fail(struct rdmx_ep *ep, struct rdmx_pke *pke, int err,
		  const char *why);

/* Ends a send that never started with error err (positive FI_E*). */
void rdmx_tx_abandon(struct rdmx_ep *ep, struct rdmx_txe *txe, int err, const char *why);

/* The long send a CTS names, or NULL if the id names none. */
struct rdmx_txe *rdmx_tx_by_id(struct rdmx_ep *ep, uint32_t tx_id);

/*
 * The send of peer with id tx_id and message number msg_id that awaits
 * a DACK, or NULL (rdmx_dack.c).
 */
struct rdmx_txe *rdmx_tx_awaiting_dack(struct rdmx_ep *ep, struct rdmx_peer *peer,
				       uint32_t tx_id, uint32_t msg_id);

/*
 * The receiver acknowledged the delivery of txe: err 0, it matched or
 * buffered the message; else (positive FI_E*) it dropped it.
 */
void rdmx_tx_delivered(struct rdmx_ep *ep, struct rdmx_txe *txe, int err);

/* True when txe asks for a level its peer cannot give (no DACK feature). */
bool rdmx_tx_level_refused(const struct rdmx_txe *txe);

/* Ends what every send still exposes to reads (endpoint close). */
void rdmx_tx_drain(struct rdmx_ep *ep);

/* Packet entries (rdmx_pke.c), the bottom of the send side. */

/* Prepares a packet of txe (NULL: a control packet) to peer. Inline: a few stores. */
static inline void rdmx_tx_pke_init(struct rdmx_pke *pke, struct rdmx_txe *txe,
				    struct rdmx_peer *peer, bool pooled)
{
	pke->txe = txe;
	pke->rxm = NULL;
	pke->peer = peer;
	pke->rnr = 0;
	pke->pooled = pooled;
	pke->busy = false;
	pke->heap = false;
	pke->pkts = 0;
}

/* Points pke at its header (hdr_len bytes) then len bytes at off of iov. Inline: three stores. */
static inline void rdmx_tx_pke_iov(struct rdmx_pke *pke, size_t hdr_len,
				   const struct iovec *iov, size_t iov_cnt, size_t off,
				   size_t len)
{
	pke->iov[0].iov_base = &pke->hdr;
	pke->iov[0].iov_len = hdr_len;
	pke->iov_cnt = 1 + rdmx_iov_slice(&pke->iov[1], iov, iov_cnt, off, len);
	pke->seg_len = 0;
}

/*
 * A post of segments (seg_len) whose first done payload bytes were
 * delivered becomes the post of the rest: done must be a whole number
 * of its segments short of its payload, else the post stays whole.
 */
void rdmx_tx_pke_skip(struct rdmx_pke *pke, size_t done);

/* Hands a packet to the device; 0 or -FI_EAGAIN. Lock held. */
int rdmx_tx_post(struct rdmx_pke *pke, bool more);

/* Posts a control packet now or, if the device is full, from progress. */
void rdmx_tx_ctrl_post(struct rdmx_ep *ep, struct rdmx_pke *pke);

/* Posts the control packets that wait; false when the device is full again. */
bool rdmx_tx_ctrl_progress(struct rdmx_ep *ep);

/*
 * Whether a packet of ours to peer, at the device or queued for it,
 * belongs to a send or to a receive (a CTS); the provider's own control
 * packets (handshake answers, DACKs) do not count.
 */
bool rdmx_tx_peer_busy(const struct rdmx_ep *ep, const struct rdmx_peer *peer);

#endif /* RDMX_TX_H */
