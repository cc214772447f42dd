/*
 * rdmx: the RDM endpoint. It owns one device queue pair, the send and
 * receive entry pools, the packet buffers posted to the device, the
 * matching queues, and a peer entry per AV address it has talked to.
 */
#ifndef RDMX_EP_H
#define RDMX_EP_H

#include <rdma/fi_endpoint.h>

#include "rdmx_cq.h"
#include "rdmx_dev.h"
#include "rdmx_match.h"
#include "rdmx_pool.h"
#include "rdmx_wire.h"

struct rdmx_av;
struct rdmx_cq;
struct rdmx_domain;

/* What this endpoint knows of one AV address it sends to. */
struct rdmx_peer {
	struct rdmx_ah		*ah;
	fi_addr_t		addr;
	uint32_t		gen;		/* tells it from a later peer at addr */
	uint32_t		next_msg_id;	/* msg_id of the next message sent */
	/* RNR: sends the receiver refused, resent in order after backoff. */
	struct rdmx_dlist	retry_q;	/* of rdmx_txe */
	struct rdmx_dlist	retry_link;	/* on rdmx_ep.retry_peers */
	uint64_t		backoff_until;	/* ns; 0: not in backoff */
	uint32_t		backoff_exp;	/* doublings of the backoff */
};

/* A send between posting and its device completion. */
struct rdmx_txe {
	struct rdmx_dlist	link;		/* on rdmx_peer.retry_q */
	void			*context;
	uint64_t		cq_flags;	/* FI_SEND | FI_MSG or FI_TAGGED */
	bool			completion;	/* write a CQ entry on success */
	bool			early;		/* completed when posted: payload
						   copied, ack not awaited */
	size_t			len;
	uint64_t		tag;
	fi_addr_t		addr;
	uint32_t		peer_gen;	/* rdmx_peer.gen when posted */
	uint32_t		rnr;		/* RNR completions so far */
	struct rdmx_wire_eager	hdr;
	struct iovec		iov[1 + RDMX_IOV_LIMIT];
	size_t			iov_cnt;
	uint8_t			inject[];	/* payload copied at post time */
};

/* The rdm layer's counters (the device keeps its own). */
struct rdmx_ep_stats {
	uint64_t	rx_malformed;	/* packets failing validation */
	uint64_t	rx_no_recv;	/* messages to an endpoint without FI_RECV */
	uint64_t	rx_unexpected;	/* messages that arrived before a recv */
	uint64_t	tx_errors;	/* sends completed with an error */
	uint64_t	rnr_completions; /* sends the device gave up with RNR */
	uint64_t	rnr_backoffs;	/* times a peer entered backoff */
	uint64_t	eagain;		/* posts answered -FI_EAGAIN */
};

struct rdmx_ep {
	struct fid_ep		ep_fid;
	struct rdmx_domain	*domain;
	struct rdmx_av		*av;
	struct rdmx_cq		*tx_cq;
	struct rdmx_cq		*rx_cq;
	bool			tx_selective;
	bool			rx_selective;
	bool			enabled;
	uint64_t		caps;
	uint64_t		tx_op_flags;
	uint64_t		rx_op_flags;
	size_t			max_msg_size;
	size_t			inject_size;
	size_t			tx_size;
	size_t			rx_size;

	struct rdmx_dev		*dev;
	struct rdmx_pool	txe_pool;	/* of struct rdmx_txe */
	struct rdmx_pool	rxe_pool;	/* of struct rdmx_rxe */
	uint8_t			*rx_bufs;	/* packet buffers for the device */
	size_t			rx_buf_size;	/* bytes a packet may fill */
	size_t			rx_buf_stride;	/* rx_buf_size, 64-byte aligned */
	size_t			rx_buf_cnt;

	struct rdmx_match_queue	msg_q;
	struct rdmx_match_queue	tag_q;
	struct rdmx_dlist	claimed;	/* of rdmx_unexp: FI_PEEK | FI_CLAIM */
	size_t			unexp_bytes;	/* payload copied to unexp queues */
	struct rdmx_unexp	*held;		/* rx_buf_cnt entries: unexpected
						   messages kept in their buffer */
	struct rdmx_dlist	retry_peers;	/* of rdmx_peer with RNR resends */
	uint64_t		rng;		/* backoff jitter */
	uint32_t		peer_gen;	/* generation of the next peer made */
	struct rdmx_peer	**peers;	/* by fi_addr, made on first use */
	size_t			peer_cap;
	struct rdmx_ep_stats	stats;
};

static inline struct rdmx_ep *rdmx_ep(struct fid_ep *ep_fid)
{
	return rdmx_container_of(ep_fid, struct rdmx_ep, ep_fid);
}

/* Packet buffer idx: aligned, so headers are read in place. */
static inline uint8_t *rdmx_ep_rx_buf(const struct rdmx_ep *ep, size_t idx)
{
	return ep->rx_bufs + idx * ep->rx_buf_stride;
}

/* fi_endpoint. 0 or -FI_E*. */
int rdmx_ep_open(struct fid_domain *domain, struct fi_info *info,
		 struct fid_ep **ep_p, void *context);

/* The peer entry for fi_addr, made on first use; NULL if not in the AV. */
struct rdmx_peer *rdmx_ep_peer(struct rdmx_ep *ep, fi_addr_t addr);

/* The peer entry for fi_addr if one was made, else NULL. */
static inline struct rdmx_peer *rdmx_ep_peer_find(const struct rdmx_ep *ep,
						  fi_addr_t addr)
{
	return addr < ep->peer_cap ? ep->peers[addr] : NULL;
}

/* Drops the peer entry of an address removed from the AV. */
void rdmx_ep_forget_peer(struct rdmx_ep *ep, fi_addr_t addr);

/* Polls the device and handles what completed; domain lock held. */
void rdmx_ep_progress(struct rdmx_ep *ep);

/* The message and tagged interfaces (rdmx_msg.c). */
extern struct fi_ops_msg rdmx_msg_ops;
extern struct fi_ops_tagged rdmx_tagged_ops;

/* Operation flags accepted by the *msg calls. */
#define RDMX_TX_MSG_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | \
			   FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
			   FI_DELIVERY_COMPLETE | FI_MORE)
#define RDMX_RX_MSG_FLAGS (FI_COMPLETION | FI_MORE)
#define RDMX_RX_TAGGED_FLAGS (RDMX_RX_MSG_FLAGS | FI_PEEK | FI_CLAIM | FI_DISCARD)

/* What one send asks for, whichever call posted it. */
struct rdmx_send_req {
	const struct iovec	*iov;
	size_t			iov_cnt;
	fi_addr_t		dest;
	uint64_t		tag;
	uint64_t		data;
	void			*context;
	uint64_t		flags;	/* FI_TAGGED, FI_REMOTE_CQ_DATA, FI_INJECT,
					   FI_COMPLETION, FI_MORE */
	bool			inject_op; /* fi_inject: no completion at all */
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

/* Eager protocol (rdmx_eager.c); both take the domain lock. */
ssize_t rdmx_eager_send(struct rdmx_ep *ep, const struct rdmx_send_req *req);
ssize_t rdmx_eager_recv(struct rdmx_ep *ep, const struct rdmx_recv_req *req);

/*
 * Handles a received eager packet from src that sits in packet buffer
 * rx_buf; returns true when the buffer is kept (an unexpected message
 * left in place) and must not go back to the device yet. Lock held.
 */
bool rdmx_eager_handle(struct rdmx_ep *ep, const struct rdmx_pkt *pkt,
		       fi_addr_t src, size_t rx_buf);

/* Gives packet buffer idx back to the device. */
void rdmx_ep_repost(struct rdmx_ep *ep, size_t idx);

/* Posts a send entry to the device; 0 or -FI_EAGAIN. Lock held. */
int rdmx_eager_post(struct rdmx_ep *ep, struct rdmx_peer *peer,
		    struct rdmx_txe *txe, bool more);

/* Completes a send the device finished; domain lock held. */
void rdmx_eager_send_done(struct rdmx_ep *ep, struct rdmx_txe *txe,
			  enum rdmx_dev_status status);

/* Completes a send with error err (positive FI_E*), why in err_data. */
void rdmx_eager_fail(struct rdmx_ep *ep, struct rdmx_txe *txe, int err,
		     const char *why);

/* The completion entry of a received message of len bytes (RDMX_PKT_* flags). */
struct rdmx_cq_entry rdmx_eager_rx_entry(void *context, size_t len, fi_addr_t src,
					 uint64_t tag, uint64_t data, uint32_t pkt_flags);

/* Writes a receive's entry unless FI_SELECTIVE_COMPLETION suppresses it. */
void rdmx_eager_rx_write(struct rdmx_ep *ep, uint64_t op_flags,
			 const struct rdmx_cq_entry *entry);

/* A receive entry for req from src (FI_ADDR_UNSPEC: any); NULL if none left. */
struct rdmx_rxe *rdmx_eager_rxe_new(struct rdmx_ep *ep, const struct rdmx_recv_req *req,
				   fi_addr_t src);

/* Completes rxe with the unexpected message ux, which it releases. */
void rdmx_eager_recv_unexp(struct rdmx_ep *ep, struct rdmx_rxe *rxe,
			   struct rdmx_unexp *ux);

/* Frees an unexpected message, or gives its packet buffer back. */
void rdmx_eager_unexp_release(struct rdmx_ep *ep, struct rdmx_unexp *ux);

/*
 * A tagged receive with FI_PEEK, FI_CLAIM or FI_DISCARD (rdmx_probe.c):
 * searches the unexpected messages from src instead of posting. Lock held.
 */
ssize_t rdmx_probe(struct rdmx_ep *ep, const struct rdmx_recv_req *req, fi_addr_t src);

/* Cancels a posted receive by context; 0 or -FI_ENOENT. */
int rdmx_eager_cancel(struct rdmx_ep *ep, void *context);

/* Frees every posted receive and unexpected message (endpoint close). */
void rdmx_eager_drain(struct rdmx_ep *ep);

#endif /* RDMX_EP_H */
