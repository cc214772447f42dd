/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: receive matching. Each endpoint has one queue pair for untagged
 * and one for tagged messages: receives the application posted, and
 * messages that arrived before a receive matched them (unexpected). The
 * first match is always the oldest candidate.
 *
 * Finding it must not cost a walk over every posted receive in the case
 * MPI makes common: a receive for one exact tag (from one source, or
 * from any). Such receives sit in a hash index keyed by (source, tag),
 * one list per key in posting order; receives with ignore bits sit in a
 * wildcard list. Each receive carries its posting number, so an arriving
 * message compares at most three candidates: the oldest exact receive
 * for (its source, its tag), for (any source, its tag), and the oldest
 * wildcard receive that takes it. Unexpected messages sit both in an
 * arrival-order list (for wildcard receives) and in an index by (source,
 * tag) (for exact, directed ones).
 */
#ifndef RDMX_MATCH_H
#define RDMX_MATCH_H

#include <stdint.h>
#include <sys/uio.h>
#include <rdma/fabric.h>

#include "rdmx_list.h"

#define RDMX_IOV_LIMIT	4

/* What an index finds an entry by, and its place in a list. */
struct rdmx_match_item {
	struct rdmx_dlist	link;		/* on an index bucket or a wildcard list */
	fi_addr_t		addr;		/* FI_ADDR_UNSPEC: any source */
	uint64_t		tag;
};

/* Buckets an index starts with; it doubles when it holds twice as many. */
#define RDMX_MATCH_BUCKETS0	16

/* Entries by exact (source, tag); entries of one key keep their order. */
struct rdmx_match_index {
	struct rdmx_dlist	*buckets;	/* small, or a larger allocation */
	size_t			mask;		/* bucket count - 1 */
	size_t			count;
	size_t			directed;	/* of count, those of one source
						   (not FI_ADDR_UNSPEC) */
	struct rdmx_dlist	small[RDMX_MATCH_BUCKETS0];
};

struct rdmx_txe;

/* A posted receive. */
struct rdmx_rxe {
	struct rdmx_match_item	item;		/* source, tag; queue place */
	uint64_t		ignore;
	uint64_t		seq;		/* posting number in its queue */
	void			*context;
	uint64_t		flags;		/* FI_COMPLETION, FI_TAGGED ... */
	struct iovec		iov[RDMX_IOV_LIMIT];
	size_t			iov_cnt;
	/* FI_MULTI_RECV: a buffer's messages point at it (rdmx_multi.c). */
	struct rdmx_rxe		*parent;	/* the buffer a message went into */
	size_t			used;		/* buffer: bytes given out */
	size_t			min_free;	/* buffer: released below this */
	size_t			children;	/* buffer: messages not completed */
	bool			released;	/* buffer: off its queue */
	/*
	 * Not a posted receive but where RMA lands (rdmx_rma.c): RESP, the
	 * buffers of read, an initiator's; WRITE, the region with rma_key
	 * at rma_addr, checked again at each packet. NONE for a receive.
	 */
	int			rma;		/* enum rdmx_rma_op */
	uint64_t		rma_key;
	uint64_t		rma_addr;
	struct rdmx_txe		*read;
};

/* No packet buffer: an unexpected payload that was copied out. */
#define RDMX_RX_BUF_NONE	SIZE_MAX

struct rdmx_rxm;

/*
 * A message that arrived with no receive posted for it: its payload is
 * either a copy allocated with the entry, or still in the packet buffer
 * rx_buf, which goes back to the device once a receive takes it. A
 * message still arriving in pieces names its rdmx_rxm.
 */
struct rdmx_unexp {
	struct rdmx_dlist	link;		/* on rdmx_match_queue.unexp */
	struct rdmx_match_item	item;		/* source, tag; index place */
	uint64_t		data;
	uint32_t		pkt_flags;	/* RDMX_PKT_* of the message */
	size_t			len;		/* the message's length */
	uint8_t			*payload;
	size_t			rx_buf;		/* RDMX_RX_BUF_NONE or index */
	size_t			charged;	/* bytes counted in unexp_bytes */
	struct rdmx_rxm		*rxm;		/* NULL: the message is whole */
};

struct rdmx_match_queue {
	struct rdmx_match_index	exact;		/* receives without ignore bits */
	struct rdmx_dlist	wild;		/* receives with ignore bits */
	uint64_t		seq;		/* the next receive's number */
	struct rdmx_dlist	unexp;		/* of struct rdmx_unexp, arrival order */
	struct rdmx_match_index	unexp_index;
};

void rdmx_match_queue_construct(struct rdmx_match_queue *q);
/* Frees the index memory; the queue must hold nothing. */
void rdmx_match_queue_destruct(struct rdmx_match_queue *q);

/* Whether a message tag satisfies a receive's tag and ignore mask. */
static inline bool rdmx_match_tag(uint64_t want, uint64_t ignore, uint64_t tag)
{
	return ((want ^ tag) & ~ignore) == 0;
}

/* Whether a message source satisfies a receive's source. */
static inline bool rdmx_match_addr(fi_addr_t want, fi_addr_t src)
{
	return want == FI_ADDR_UNSPEC || want == src;
}

/* Queues a receive (its item, ignore set) behind those posted before. */
void rdmx_match_post(struct rdmx_match_queue *q, struct rdmx_rxe *rxe);

/* The oldest posted receive that takes the message, left in the queue. */
struct rdmx_rxe *rdmx_match_posted_find(struct rdmx_match_queue *q,
					fi_addr_t src, uint64_t tag);

/* Takes a posted receive off its queue. */
void rdmx_match_posted_remove(struct rdmx_match_queue *q, struct rdmx_rxe *rxe);

/* Removes and returns the oldest posted receive that takes the message. */
struct rdmx_rxe *rdmx_match_posted(struct rdmx_match_queue *q,
				   fi_addr_t src, uint64_t tag);

/* Removes a posted receive by context; returns it or NULL. */
struct rdmx_rxe *rdmx_match_cancel(struct rdmx_match_queue *q, void *context);

/* Removes and returns any posted receive (emptying a queue); NULL if none. */
struct rdmx_rxe *rdmx_match_posted_pop(struct rdmx_match_queue *q);

/* Queues an unexpected message (its item set) behind earlier ones. */
void rdmx_match_unexp_add(struct rdmx_match_queue *q, struct rdmx_unexp *ux);

/* Takes an unexpected message off its queue; harmless if it is not on it. */
void rdmx_match_unexp_remove(struct rdmx_match_queue *q, struct rdmx_unexp *ux);

/*
 * Gives every unexpected message of source from the source to instead,
 * keeping their arrival order.
 */
void rdmx_match_unexp_readdr(struct rdmx_match_queue *q, fi_addr_t from,
			     fi_addr_t to);

/* The oldest unexpected message a receive takes, left in the queue. */
struct rdmx_unexp *rdmx_match_unexp_find(struct rdmx_match_queue *q,
					 fi_addr_t addr, uint64_t tag,
					 uint64_t ignore);

/* Removes and returns the oldest unexpected message a receive takes. */
struct rdmx_unexp *rdmx_match_unexp(struct rdmx_match_queue *q,
				    fi_addr_t addr, uint64_t tag,
				    uint64_t ignore);

#endif /* RDMX_MATCH_H */
