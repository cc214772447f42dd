/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the swsrd host of an unreliable datagram device (rdmx_dgram.c).
 * The udp device (sockets) and the verbs device (UD queue pairs) move
 * datagrams with no guarantee; this is what both put between them and
 * the device contract: address handles with their swsrd state (and the
 * handles made for senders no AV names, bounded and evicted), the sends
 * handed to swsrd and reported when it is done with them, the challenge
 * of senders nobody knows yet (rdmx_swsrd.h), the receive
 * buffers the rdm layer posted, and the handling of one received
 * datagram. A device embeds struct rdmx_dgram and supplies its raw
 * transmit and, optionally, its own per-handle hardware state.
 */
#ifndef RDMX_DGRAM_H
#define RDMX_DGRAM_H

#include <stdalign.h>
#include <stdbool.h>

#include "rdmx_dev.h"
#include "rdmx_hash.h"
#include "rdmx_list.h"
#include "rdmx_pool.h"
#include "rdmx_swsrd.h"

/* Handles made for senders no AV names, kept at most per device. */
#define RDMX_DGRAM_ANON_MAX	4096

struct rdmx_dgram_ah {
	struct rdmx_ah		ah;
	uint32_t		refs;		/* ah_create calls not destroyed */
	bool			stranger;	/* made for a sender no AV named */
	bool			anon;		/* a stranger's that nothing uses:
						   counted, evictable */
	struct rdmx_swsrd_peer	srd;
	struct rdmx_dlist	link;		/* on rdmx_dgram.ahs, least
						   recently heard first */
	void			*raw;		/* the device's own state */
	/* The canonical address (the device's addr_size bytes). */
	alignas(8) uint8_t	addr[RDMX_DEV_ADDR_MAX];
};

/* A receive buffer the rdm layer posted. */
struct rdmx_dgram_buf {
	uint64_t		wr_id;
	void			*buf;
	size_t			len;
};

struct rdmx_dgram;

struct rdmx_dgram_ops {
	/*
	 * Sends one datagram gathered from iov to ah, from the path'th of
	 * the device's source addresses (0: its own; fewer than
	 * srd.cfg.paths); iov[0] is the swsrd header and, for a packet of a
	 * post of segments, iov[1] its own header, both the caller's until
	 * xmit returns. 0, or -FI_EAGAIN, which swsrd treats as a loss.
	 */
	int	(*xmit)(struct rdmx_dgram *dg, struct rdmx_dgram_ah *ah, unsigned path,
			const struct iovec *iov, size_t iov_cnt);
	/*
	 * Optional: whether canonical addresses a and b are of one host (udp:
	 * the same IP address, any port), so that a datagram from b carrying
	 * the session tag of the handle at a is that peer's, sent by another
	 * of its paths. Without it a peer has one address.
	 */
	bool	(*same_host)(const struct rdmx_dgram *dg, const void *a, const void *b);
	/*
	 * Optional: sends one datagram (a CHALLENGE) to the sender at a
	 * canonical address no handle names, from the local address the
	 * datagram being handled came to, without keeping anything. Without
	 * it an unknown sender gets a handle (bounded, evicted as the others)
	 * before it proved it receives at its address.
	 */
	int	(*xmit_to)(struct rdmx_dgram *dg, const void *canon,
			   const struct iovec *iov, size_t iov_cnt);
	/* Optional: makes ah->raw for a new handle; 0 or -FI_E*. */
	int	(*raw_create)(struct rdmx_dgram *dg, struct rdmx_dgram_ah *ah);
	/* Optional: frees ah->raw. */
	void	(*raw_destroy)(struct rdmx_dgram *dg, struct rdmx_dgram_ah *ah);
	/*
	 * What xmit takes during a poll leaves together as the poll ends,
	 * after rdmx_swsrd_progress (swsrd's cfg.acks_at_poll_end).
	 */
	bool	xmit_at_poll_end;
};

/*
 * A send handed to swsrd, and one swsrd is done with: a post_send's
 * packet, or the packets of a post_send_segs, which swsrd cuts from the
 * header template copied here and completes one by one; the send
 * completes when the last is done.
 */
struct rdmx_dgram_send {
	struct rdmx_swsrd_send	srd;
	uint32_t		left;		/* packets not done */
	enum rdmx_dev_status	status;		/* the post's */
	uint32_t		fail_off;	/* payload before the first failed packet */
	uint64_t		hdr[RDMX_DEV_SEG_HDR_MAX / sizeof(uint64_t)];
};

struct rdmx_dgram {
	struct rdmx_dev			dev;
	const struct rdmx_dgram_ops	*ops;
	struct rdmx_hash		ah_map;		/* canonical addr → ah */
	struct rdmx_dgram_ah		*last_sender;	/* of the last datagram */
	struct rdmx_dlist		ahs;		/* of rdmx_dgram_ah */
	size_t				anon_cnt;
	struct rdmx_swsrd		srd;
	struct rdmx_pool		send_pool;	/* of rdmx_dgram_send */
	size_t				pkts_out;	/* packets posted, not done:
							   at most sq_size */

	/*
	 * Sends swsrd finished, not yet reported: a ring of sq_size. A send
	 * goes back to the pool only when reported, so the ring never holds
	 * more than the pool has.
	 */
	struct rdmx_dgram_send		**done;
	size_t				done_cap;
	uint64_t			done_head, done_tail;

	/* Posted receive buffers, a stack: any buffer fits any packet. */
	struct rdmx_dgram_buf		*rq;
	size_t				rq_size, rq_cnt;

	/*
	 * attr.unreliable: datagrams sent as they come, with an UNREL
	 * header, and handed up with their sender's address, kept here
	 * (rq_size of them, a ring) until the next poll.
	 */
	bool				unreliable;
	uint8_t				(*rx_srcs)[RDMX_DEV_ADDR_MAX];
	size_t				rx_src_next;
};

/*
 * Prepares the host of a device being opened: dev.ops = dev_ops, queues
 * of attr's sizes, swsrd with the FI_RDMX_* timing, a random incarnation
 * and paths source addresses to send from (1: the device's own; more:
 * ops->xmit takes a path). The device fills dev.caps. 0 or -FI_E*.
 */
int rdmx_dgram_construct(struct rdmx_dgram *dg, const struct rdmx_dev_ops *dev_ops,
			 const struct rdmx_dgram_ops *ops,
			 const struct rdmx_dev_attr *attr, unsigned paths);
/* Frees every handle (failing its sends with FLUSHED) and the queues. */
void rdmx_dgram_destruct(struct rdmx_dgram *dg);

/* rdmx_dev_ops calls a datagram device takes as they are. */
int rdmx_dgram_ah_create(struct rdmx_dev *dev, const void *canon,
			 struct rdmx_ah **ah_p);
void rdmx_dgram_ah_destroy(struct rdmx_dev *dev, struct rdmx_ah *ah);
void rdmx_dgram_ah_reset(struct rdmx_dev *dev, struct rdmx_ah *ah);
void rdmx_dgram_ah_peer(struct rdmx_dev *dev, struct rdmx_ah *ah, unsigned flags);
int rdmx_dgram_post_send(struct rdmx_dev *dev, struct rdmx_ah *ah,
			 const struct iovec *iov, size_t iov_cnt,
			 uint64_t wr_id, unsigned flags);
int rdmx_dgram_post_send_segs(struct rdmx_dev *dev, struct rdmx_ah *ah,
			      const struct iovec *iov, size_t iov_cnt, size_t seg_len,
			      size_t off_at, uint64_t wr_id, unsigned flags);
int rdmx_dgram_post_recv(struct rdmx_dev *dev, void *buf, size_t len,
			 uint64_t wr_id);

/* Takes the most recently posted receive buffer; false when none is. */
static inline bool rdmx_dgram_buf_take(struct rdmx_dgram *dg,
				       struct rdmx_dgram_buf *out)
{
	if (!dg->rq_cnt)
		return false;
	*out = dg->rq[--dg->rq_cnt];
	return true;
}

/* Gives back a buffer rdmx_dgram_buf_take took and nothing filled. */
static inline void rdmx_dgram_buf_return(struct rdmx_dgram *dg,
					 const struct rdmx_dgram_buf *buf)
{
	dg->rq[dg->rq_cnt++] = *buf;
}

/*
 * Handles one received datagram of len bytes from the sender at src (a
 * canonical address): hdr is its swsrd header, and its payload is in
 * buf (taken with rdmx_dgram_buf_take; NULL when none was posted), cut
 * when truncated, at time now. Returns true when it became the receive completion
 * *cqe (buf then belongs to the rdm layer again), false when the caller
 * gives buf back.
 */
bool rdmx_dgram_rx(struct rdmx_dgram *dg, const struct rdmx_wire_srd *hdr,
		   size_t len, const void *src, const struct rdmx_dgram_buf *buf,
		   bool truncated, uint64_t now, struct rdmx_dev_cqe *cqe);

/*
 * Of max completions a poll may return, how many to keep for sends
 * swsrd finished (half the room at most), so receives cannot starve them.
 */
int rdmx_dgram_done_keep(const struct rdmx_dgram *dg, int max);

/* Writes up to max send completions swsrd finished; returns how many. */
int rdmx_dgram_report(struct rdmx_dgram *dg, struct rdmx_dev_cqe *cqe, int max);

/*
 * The host's part of a device's wait_arm (rdmx_dev.h): -FI_EAGAIN while
 * finished sends wait to be reported; else 0, with *due_p lowered to
 * swsrd's next timer.
 */
int rdmx_dgram_wait_arm(const struct rdmx_dgram *dg, uint64_t *due_p);

#endif /* RDMX_DGRAM_H */
