/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the receive side of the rdm layer. Receives the application
 * posts (rdmx_recv.c) meet arriving messages in the matching queues
 * (rdmx_match.c); message packets from a peer are taken in the order
 * their sender numbered them (rdmx_order.c) and handed to their protocol:
 * eager (rdmx_eager.c), medium (rdmx_medium.c) or long (rdmx_long.c).
 * A message that arrives in several packets is tracked by an rdmx_rxm
 * (rdmx_rxm.c) from its first packet to its completion.
 */
#ifndef RDMX_RX_H
#define RDMX_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <rdma/fabric.h>

#include "rdmx_cover.h"
#include "rdmx_comp.h"
#include "rdmx_list.h"
#include "rdmx_match.h"
#include "rdmx_tx.h"
#include "rdmx_wire.h"

struct rdmx_ep;
struct rdmx_peer;
struct rdmx_rxm;

/*
 * What the protocol of a message in pieces does when the layers below
 * it have news of the message (rdmx_medium.c, rdmx_long.c): the receive
 * side (rdmx_recv.c) hands it a receive or drops it, the send side
 * (rdmx_txe.c) ends its CTS. They sit below the protocols and call up
 * only through these.
 */
struct rdmx_rxm_ops {
	/* A receive took the message off the unexpected queue. */
	void	(*matched)(struct rdmx_ep *ep, struct rdmx_rxm *rxm, struct rdmx_rxe *rxe);
	/* FI_DISCARD dropped it; its remaining packets are ignored. */
	void	(*discard)(struct rdmx_ep *ep, struct rdmx_rxm *rxm);
	/* Long: the device finished its CTS, or failed it with err. */
	void	(*cts_done)(struct rdmx_ep *ep, struct rdmx_rxm *rxm);
	void	(*cts_failed)(struct rdmx_ep *ep, struct rdmx_rxm *rxm, int err);
};

/* What one receive asks for, whichever call posted it. */
struct rdmx_recv_req {
	const struct iovec	*iov;
	size_t			iov_cnt;
	fi_addr_t		src;
	uint64_t		tag;
	uint64_t		ignore;
	void			*context;
	uint64_t		flags;	/* FI_TAGGED, FI_COMPLETION, FI_PEEK,
					   FI_CLAIM, FI_DISCARD */
};

/* Largest medium message a receiver takes (it may buffer it whole). */
#define RDMX_MEDIUM_LIMIT	(16u << 20)

/*
 * A message arriving in several packets (MEDIUM segments, or an RTS and
 * its DATA), from its first packet until its receive completed. Before a
 * receive matches it, an unexpected entry (ux) stands for it on the
 * matching queue: a medium one holds the bytes that arrived, a long one
 * holds nothing (the sender waits for a CTS).
 */
struct rdmx_rxm {
	struct rdmx_dlist	link;		/* on rdmx_peer.rx_msgs */
	struct rdmx_peer	*peer;
	const struct rdmx_rxm_ops *ops;		/* its protocol's */
	enum rdmx_pkt_type	type;		/* RDMX_PKT_MEDIUM or RDMX_PKT_RTS */
	uint32_t		id;		/* index in rdmx_ep.rxms: DATA's rx_id */
	uint32_t		msg_id;
	uint32_t		tx_id;		/* RTS: the sender's send id */
	uint32_t		pkt_flags;
	uint64_t		tag;
	uint64_t		data;
	size_t			msg_len;
	size_t			end;		/* bytes the receive takes */
	size_t			got;		/* bytes landed so far, each once */
	struct rdmx_cover	cover;		/* which bytes landed */
	size_t			granted;	/* long: limit of the latest CTS */
	struct rdmx_rxe		*rxe;		/* the matched receive, or NULL */
	struct rdmx_unexp	*ux;		/* holds the bytes until matched */
	bool			discard;	/* FI_DISCARD: keep nothing */
	bool			dead;		/* done; freed when its CTS is */
	bool			cts_again;	/* a newer CTS waits for cts */
	bool			reading;	/* long-read: the device reads */
	struct rdmx_pke		cts;		/* long: the CTS packet */
	/* long-read: where the sender's bytes are (remote_cnt 0: not offered) */
	uint8_t			rkey[RDMX_DEV_RKEY_LEN];
	struct iovec		remote[RDMX_WIRE_READ_SEGS];
	size_t			remote_cnt;
	struct rdmx_rxe		kid;		/* its share of a multi-receive buffer */
};

/* Posting (rdmx_recv_post.c), the top of the receive side. */

/*
 * Posts a receive; 0 or -FI_E*. Domain lock held; a peek
 * (FI_PEEK) finds what the caller's progress made arrive.
 */
ssize_t rdmx_recv(struct rdmx_ep *ep, const struct rdmx_recv_req *req);

/* Cancels a posted receive by context; 0 or -FI_ENOENT. */
int rdmx_recv_cancel(struct rdmx_ep *ep, void *context);

/* Frees every posted receive and unexpected message (endpoint close). */
void rdmx_recv_drain(struct rdmx_ep *ep);

/* Receives meet arriving messages (rdmx_recv.c). */

/* A receive entry for req from src (FI_ADDR_UNSPEC: any); NULL if none left. */
struct rdmx_rxe *rdmx_recv_rxe_new(struct rdmx_ep *ep, const struct rdmx_recv_req *req,
				   fi_addr_t src);

/* The matching queue of a message with RDMX_PKT_* flags. */
struct rdmx_match_queue *rdmx_recv_queue(struct rdmx_ep *ep, uint32_t pkt_flags);

/*
 * Takes the oldest posted receive for a message of len bytes (RDMX_PKT_*
 * flags) off its queue; for a multi-receive buffer, the message's share
 * of it, built in kid. NULL when no receive takes the message.
 */
struct rdmx_rxe *rdmx_recv_match(struct rdmx_ep *ep, uint32_t pkt_flags,
				 fi_addr_t src, uint64_t tag, size_t len,
				 struct rdmx_rxe *kid);

/* Gives back a receive entry that is done. */
void rdmx_recv_release(struct rdmx_ep *ep, struct rdmx_rxe *rxe);

/* The completion entry of a received message of len bytes (RDMX_PKT_* flags). */
struct rdmx_cq_entry rdmx_recv_entry(void *context, size_t len, fi_addr_t src,
				     uint64_t tag, uint64_t data, uint32_t pkt_flags);

/*
 * Writes the entry of something received from src, the key it was
 * matched by (rdmx_peer_src): for a sender outside the AV, to an endpoint
 * with FI_SOURCE_ERR, as an error entry with the sender's address.
 */
void rdmx_recv_write_from(struct rdmx_ep *ep, const struct rdmx_cq_entry *entry,
			  fi_addr_t src);

/*
 * Writes a receive's entry by rdmx_recv_write_from, unless
 * FI_SELECTIVE_COMPLETION suppresses it.
 */
void rdmx_recv_write(struct rdmx_ep *ep, uint64_t op_flags,
		     const struct rdmx_cq_entry *entry, fi_addr_t src);

/*
 * Completes rxe with a message of msg_len bytes whose first bytes (as many
 * as fit) are already in its buffers: success, or FI_ETRUNC when it did
 * not fit. Releases rxe.
 */
void rdmx_recv_complete(struct rdmx_ep *ep, struct rdmx_rxe *rxe, size_t msg_len,
			fi_addr_t src, uint64_t tag, uint64_t data, uint32_t pkt_flags);

/* Completes rxe with error err (positive FI_E*), why in err_data; releases it. */
void rdmx_recv_fail(struct rdmx_ep *ep, struct rdmx_rxe *rxe, int err, const char *why);

/* RMA at the target and a read's answer at its initiator (rdmx_rma.c). */

/*
 * Where the message of an RMA packet (a write, flagged RDMX_PKT_RMA, or
 * an answer, RDMX_PKT_RMA_RESP) lands: rxe (the caller's: on its stack,
 * or its rxm's kid; never the receives' pool) filled to stand for the
 * target region's bytes or the read's buffers. NULL when refused, with
 * *err its positive FI_E* code for the sender's DACK.
 */
struct rdmx_rxe *rdmx_rma_rxe(struct rdmx_ep *ep, struct rdmx_peer *peer,
			      const struct rdmx_pkt *pkt, struct rdmx_rxe *rxe, int *err);

/* Whether an RMA rxe may still take len bytes at off (its region is open). */
bool rdmx_rma_live(struct rdmx_ep *ep, const struct rdmx_rxe *rxe, size_t off, size_t len);

/*
 * An RMA rxe got its len bytes: a write with remote CQ data writes its
 * entry to the receive CQ, an answer completes its read.
 */
void rdmx_rma_complete(struct rdmx_ep *ep, struct rdmx_rxe *rxe, size_t len, fi_addr_t src,
		       uint64_t data, uint32_t pkt_flags);

/* An RMA rxe ends without its bytes: an answer fails its read. */
void rdmx_rma_fail(struct rdmx_ep *ep, struct rdmx_rxe *rxe, int err);

/* A read request from peer: answered with the bytes, or refused by DACK. */
void rdmx_rma_read_req(struct rdmx_ep *ep, struct rdmx_peer *peer, const struct rdmx_pkt *pkt);

/*
 * An atomic from peer: applied at once, then acknowledged by DACK, or
 * for one that fetches answered with the old values as a read is; a
 * refusal (key, bounds, access, no answer left) is a DACK with its code.
 */
void rdmx_rma_atomic(struct rdmx_ep *ep, struct rdmx_peer *peer, const struct rdmx_pkt *pkt);

/* Sends the answers' chunks that found no send entry (ep->rma_stalled). */
void rdmx_rma_progress(struct rdmx_ep *ep);

/* Gives up the answers to peer's reads: its session ended, or it goes. */
void rdmx_rma_forget(struct rdmx_ep *ep, struct rdmx_peer *peer);

/* Frees the answers' memory, at the endpoint's close. */
void rdmx_rma_free(struct rdmx_ep *ep);

/*
 * The answer pkt names cannot land (the target gave it up, a VOID naming
 * the read: FI_EIO; or no memory here): its read fails with err.
 */
void rdmx_rma_resp_lost(struct rdmx_ep *ep, struct rdmx_peer *peer, const struct rdmx_pkt *pkt,
			int err);

/*
 * Copies a whole message into rxe and completes it. Inline: a frame of
 * its own, and eight arguments passed twice, for two calls.
 */
static inline void rdmx_recv_deliver(struct rdmx_ep *ep, struct rdmx_rxe *rxe,
				     const void *payload, size_t len, fi_addr_t src,
				     uint64_t tag, uint64_t data, uint32_t pkt_flags)
{
	rdmx_copy_to_iov(rxe->iov, rxe->iov_cnt, payload, len);
	rdmx_recv_complete(ep, rxe, len, src, tag, data, pkt_flags);
}

/*
 * Queues a whole (eager) message no receive took: copied while under
 * FI_RDMX_UNEXP_MAX and the budget, else left in its packet buffer rx_buf
 * (*keep_p true: the buffer is kept). rx_buf RDMX_RX_BUF_NONE: copied
 * within the budget alone. 0, or -FI_ENOMEM when the message was dropped.
 */
int rdmx_recv_unexpected(struct rdmx_ep *ep, const struct rdmx_pkt *pkt,
			 fi_addr_t src, size_t rx_buf, bool *keep_p);

/*
 * An unexpected entry with room for extra bytes of payload, charged to the
 * endpoint's budget; NULL past the budget or out of memory.
 */
struct rdmx_unexp *rdmx_recv_ux_new(struct rdmx_ep *ep, size_t extra);

/* Hands the unexpected message ux to rxe (completes it, or lets its protocol go on). */
void rdmx_recv_unexp(struct rdmx_ep *ep, struct rdmx_rxe *rxe, struct rdmx_unexp *ux);

/* Drops an unexpected message (FI_DISCARD) after it left its queue. */
void rdmx_recv_unexp_release(struct rdmx_ep *ep, struct rdmx_unexp *ux);

/* Names the message ux stands for and queues it as unexpected (counted). */
void rdmx_recv_ux_queue(struct rdmx_ep *ep, struct rdmx_unexp *ux, fi_addr_t src,
			uint64_t tag, uint64_t data, uint32_t pkt_flags, size_t len);

/* Frees an unexpected entry that holds no packet buffer. */
void rdmx_recv_ux_free(struct rdmx_ep *ep, struct rdmx_unexp *ux);

/*
 * The unexpected messages queued from source from (a peer's own key, see
 * rdmx_peer_src) are from AV address to from now on.
 */
void rdmx_recv_ux_readdr(struct rdmx_ep *ep, fi_addr_t from, fi_addr_t to);

/* The entry of a receive that ends without a message. */
struct rdmx_cq_entry rdmx_recv_err_entry(const struct rdmx_rxe *rxe);

/* FI_MULTI_RECV buffers (rdmx_multi.c; posted by rdmx_recv_post.c). */
/* The share of buf (posted on q) for a message of len bytes, built in kid. */
struct rdmx_rxe *rdmx_multi_carve(struct rdmx_match_queue *q, struct rdmx_rxe *buf,
				  size_t len, struct rdmx_rxe *kid);
/*
 * FI_MULTI_RECV when rxe's completion is the last of a released buffer.
 * Inline: every receive's completion asks, most of no buffer.
 */
static inline uint64_t rdmx_multi_flags(const struct rdmx_rxe *rxe)
{
	const struct rdmx_rxe *buf = rxe->parent;

	return buf && buf->released && buf->children == 1 ? FI_MULTI_RECV : 0;
}
/* A message's share completed (its buffer goes once released and empty). */
void rdmx_multi_done(struct rdmx_ep *ep, struct rdmx_rxe *kid);
/* fi_cancel took buf off its queue; entry is its FI_ECANCELED entry. */
void rdmx_multi_cancel(struct rdmx_ep *ep, struct rdmx_rxe *buf,
		       struct rdmx_cq_entry *entry);

/*
 * A tagged receive with FI_PEEK, FI_CLAIM or FI_DISCARD (rdmx_probe.c):
 * searches the unexpected messages from src instead of posting. Lock held.
 */
ssize_t rdmx_probe(struct rdmx_ep *ep, const struct rdmx_recv_req *req, fi_addr_t src);

/* Packets one device poll hands up before any of them is handled. */
#define RDMX_RX_BATCH	32

/*
 * Whether packet pkt from peer (NULL: not known yet) may be taken by a
 * device that asks before it acknowledges (struct rdmx_dev_admit): false
 * for a message packet that order or matching could keep only past the
 * receive budget, with room for a poll's batch of packets handed up
 * before this one is handled, or only in a buffer past peer's share of
 * those order keeps. The device then refuses it (RNR).
 */
bool rdmx_order_admit(struct rdmx_ep *ep, const struct rdmx_peer *peer,
		      const struct rdmx_pkt *pkt);

/*
 * Message packets in sender order (rdmx_order.c). Takes an EAGER, MEDIUM
 * or RTS packet from peer sitting in packet buffer rx_buf; returns true
 * when the buffer is kept. Packets of later messages wait, copied within
 * the receive budget, else in their own buffer.
 */
bool rdmx_order_recv(struct rdmx_ep *ep, struct rdmx_peer *peer,
		     const struct rdmx_pkt *pkt, size_t rx_buf);

/*
 * Drops the packets a peer holds for ordering; the buffers they kept go
 * back to the device unless the endpoint is closing.
 */
void rdmx_order_drain(struct rdmx_peer *peer);

/* Sets up the endpoint's store of packets held for order (no allocation). */
void rdmx_order_construct(struct rdmx_ep *ep);

/* Frees that store (endpoint close, after every peer's drain). */
void rdmx_order_destruct(struct rdmx_ep *ep);

/*
 * Eager (rdmx_eager.c): a one-packet message from peer (NULL: a sender
 * past the anonymous bound, src FI_ADDR_NOTAVAIL); true when it keeps
 * the buffer rx_buf. Answers a DACK request.
 */
bool rdmx_eager_start(struct rdmx_ep *ep, struct rdmx_peer *peer,
		      const struct rdmx_pkt *pkt, fi_addr_t src, size_t rx_buf);

/* Medium (rdmx_medium.c): a message's first segment, and the others. */
void rdmx_medium_start(struct rdmx_ep *ep, struct rdmx_peer *peer,
		       const struct rdmx_pkt *pkt);
void rdmx_medium_more(struct rdmx_ep *ep, struct rdmx_peer *peer,
		      const struct rdmx_pkt *pkt);

/* Long (rdmx_long.c). */
void rdmx_long_start(struct rdmx_ep *ep, struct rdmx_peer *peer,
		     const struct rdmx_pkt *pkt);
void rdmx_long_data(struct rdmx_ep *ep, struct rdmx_peer *peer,
		    const struct rdmx_pkt *pkt);
/* The device finished reading rxm's bytes (long-read) with status. */
void rdmx_long_read_done(struct rdmx_ep *ep, struct rdmx_rxm *rxm,
			 enum rdmx_dev_status status);

/* Messages in pieces (rdmx_rxm.c). */
/* A message in pieces starts with pkt; ops: its protocol's. NULL past the budget. */
struct rdmx_rxm *rdmx_rxm_new(struct rdmx_ep *ep, struct rdmx_peer *peer,
			      const struct rdmx_pkt *pkt, const struct rdmx_rxm_ops *ops);
/* The message msg_id of peer being received, or NULL. */
struct rdmx_rxm *rdmx_rxm_find(struct rdmx_peer *peer, uint32_t msg_id);
/* The live message named rx_id, or NULL. */
struct rdmx_rxm *rdmx_rxm_by_id(struct rdmx_ep *ep, uint32_t rx_id);
/* Matches rxm to rxe, or leaves it unexpected (rxe NULL) with a ux of extra bytes. */
bool rdmx_rxm_attach(struct rdmx_ep *ep, struct rdmx_rxm *rxm, struct rdmx_rxe *rxe,
		     size_t extra);
/*
 * Lands len bytes at off; completes the receive when every byte arrived
 * (bytes that arrive twice count once).
 */
void rdmx_rxm_place(struct rdmx_ep *ep, struct rdmx_rxm *rxm, size_t off,
		    const void *buf, size_t len);
/* rxm is the receive rxe's: the bytes it takes are set. */
void rdmx_rxm_take(struct rdmx_ep *ep, struct rdmx_rxm *rxm, struct rdmx_rxe *rxe);
/* Frees the unexpected entry of rxm, wherever it is queued. */
void rdmx_rxm_drop_ux(struct rdmx_ep *ep, struct rdmx_rxm *rxm);
/* Ends a message that will not complete: its receive fails with err. */
void rdmx_rxm_abort(struct rdmx_ep *ep, struct rdmx_rxm *rxm, int err, const char *why);
/* Frees rxm now, or once its CTS and its read are back from the device. */
void rdmx_rxm_free(struct rdmx_ep *ep, struct rdmx_rxm *rxm);
/* Frees every message in pieces (endpoint close). */
void rdmx_rxm_drain(struct rdmx_ep *ep);

/*
 * Whether the CTS of a message being received (or just received: the
 * last CTS of a long-read tells the sender its send is over) is still at
 * the device, not yet acknowledged by the sender's.
 */
bool rdmx_rxm_cts_out(const struct rdmx_ep *ep);

#endif /* RDMX_RX_H */
