/*
 * rdmx: receive matching. Each endpoint has one queue pair for untagged
 * and one for tagged messages: receives the application posted, and
 * messages that arrived before a receive matched them (unexpected).
 * Both lists keep arrival order, so the first match is the oldest.
 */
#ifndef RDMX_MATCH_H
#define RDMX_MATCH_H

#include <stdint.h>
#include <sys/uio.h>
#include <rdma/fabric.h>

#include "rdmx_list.h"

#define RDMX_IOV_LIMIT	4

/* A posted receive. */
struct rdmx_rxe {
	struct rdmx_dlist	link;		/* on rdmx_match_queue.posted */
	void			*context;
	uint64_t		flags;		/* FI_COMPLETION, FI_TAGGED ... */
	fi_addr_t		addr;		/* FI_ADDR_UNSPEC: any source */
	uint64_t		tag;
	uint64_t		ignore;
	struct iovec		iov[RDMX_IOV_LIMIT];
	size_t			iov_cnt;
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
	fi_addr_t		addr;
	uint64_t		tag;
	uint64_t		data;
	uint32_t		pkt_flags;	/* RDMX_PKT_* of the message */
	size_t			len;		/* the message's length */
	uint8_t			*payload;
	size_t			rx_buf;		/* RDMX_RX_BUF_NONE or index */
	size_t			charged;	/* bytes counted in unexp_bytes */
	struct rdmx_rxm		*rxm;		/* NULL: the message is whole */
};

struct rdmx_match_queue {
	struct rdmx_dlist	posted;		/* of struct rdmx_rxe */
	struct rdmx_dlist	unexp;		/* of struct rdmx_unexp */
};

void rdmx_match_queue_construct(struct rdmx_match_queue *q);

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

/* Removes and returns the oldest posted receive that takes the message. */
struct rdmx_rxe *rdmx_match_posted(struct rdmx_match_queue *q,
				   fi_addr_t src, uint64_t tag);

/* The oldest unexpected message a receive takes, left in the queue. */
struct rdmx_unexp *rdmx_match_unexp_find(struct rdmx_match_queue *q,
					 fi_addr_t addr, uint64_t tag,
					 uint64_t ignore);

/* Removes and returns the oldest unexpected message a receive takes. */
struct rdmx_unexp *rdmx_match_unexp(struct rdmx_match_queue *q,
				    fi_addr_t addr, uint64_t tag,
				    uint64_t ignore);

/* Removes a posted receive by context; returns it or NULL. */
struct rdmx_rxe *rdmx_match_cancel(struct rdmx_match_queue *q, void *context);

#endif /* RDMX_MATCH_H */
