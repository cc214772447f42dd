/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the RDM endpoint. It owns one device queue pair, the send and
 * receive entry pools, the packet buffers posted to the device, the
 * matching queues, and a peer per remote endpoint it has talked to.
 */
#ifndef RDMX_EP_H
#define RDMX_EP_H

#include <rdma/fi_atomic.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_ext_rdmx.h>

#include "rdmx_addrs.h"
#include "rdmx_budget.h"
#include "rdmx_cache.h"
#include "rdmx_comp.h"
#include "rdmx_cq.h"
#include "rdmx_dev.h"
#include "rdmx_lane.h"
#include "rdmx_match.h"
#include "rdmx_pool.h"
#include "rdmx_rxbufs.h"
#include "rdmx_sink.h"
#include "rdmx_ud.h"
#include "rdmx_wire.h"

struct rdmx_cm;
struct rdmx_ooo;
struct rdmx_peer;
struct rdmx_rxm;

struct rdmx_av;
struct rdmx_cq;
struct rdmx_domain;

/* The rdm layer's counters (the device keeps its own). */
struct rdmx_ep_stats {
	uint64_t	rx_malformed;	/* packets failing validation */
	uint64_t	rx_no_recv;	/* messages to an endpoint without FI_RECV */
	uint64_t	rx_unexpected;	/* messages that arrived before a recv */
	uint64_t	tx_errors;	/* sends completed with an error */
	uint64_t	rnr_completions; /* sends the device gave up with RNR */
	uint64_t	rnr_backoffs;	/* times a peer entered backoff */
	uint64_t	eagain;		/* posts answered -FI_EAGAIN */
	uint64_t	rx_dropped;	/* messages dropped for lack of memory */
	uint64_t	rx_reordered;	/* packets held for a message before theirs */
	uint64_t	rx_stale;	/* packets of messages or sessions over */
	uint64_t	rx_no_peer;	/* long and medium packets from outside the AV */
	uint64_t	rx_long_reads;	/* long messages read from the sender */
};

struct rdmx_ep {
	struct fid_ep		ep_fid;
	struct rdmx_domain	*domain;
	struct rdmx_av		*av;
	struct rdmx_cq		*tx_cq;
	struct rdmx_cq		*rx_cq;
	struct rdmx_sink	tx_sink;	/* tx_cq and the counters of sends */
	struct rdmx_sink	rx_sink;	/* rx_cq and those of receives */
	bool			watched;	/* the devices' descriptors are in
						   the waits of those (enabled) */
	struct rdmx_waitable	auto_member;	/* in the domain's progress
						   thread's wait (FI_PROGRESS_AUTO) */
	/* What the rdm layer knows of those: ops it was given at bind. */
	struct rdmx_comp	*tx_comp;	/* &tx_sink.comp once bound */
	struct rdmx_comp	*rx_comp;	/* &rx_sink.comp */
	const struct rdmx_addrs	*addrs;		/* av's lookups (rdmx_addrs.h) */
	const struct rdmx_keys	*keys;		/* the domain's regions (rdmx_keys.h) */
	struct rdmx_rma_answers	*answers;	/* to peers' reads (rdmx_rma.c), made
						   at the first */
	bool			rma_stalled;	/* an answer's chunk found no send
						   entry: progress tries again */
	bool			dgram;		/* FI_EP_DGRAM (rdmx_ud.h) */
	struct rdmx_cm		*cm;		/* FI_EP_MSG (rdmx_cm.h), or NULL */
	fi_addr_t		conn_peer;	/* FI_EP_MSG: the peer while connected,
						   else FI_ADDR_NOTAVAIL */
	bool			av_only;	/* packets from outside the AV are
						   dropped (FI_EP_MSG) */
	struct rdmx_ud		ud;		/* its datagrams */
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

	size_t			medium_max;	/* largest medium message */
	size_t			min_multi_recv;	/* FI_OPT_MIN_MULTI_RECV */

	struct rdmx_lanes	lanes;		/* its devices: the NIC, shm */
	struct rdmx_pool	txe_pool;	/* of struct rdmx_txe */
	struct rdmx_pool	pke_pool;	/* of struct rdmx_pke: segments */
	/*
	 * Packets of the segments' posts at the devices: at most as many as
	 * the pool has entries, as when each packet took one.
	 */
	size_t			seg_pkts;
	size_t			pke_heap;	/* packets from the heap (DACKs
						   when the pool was empty) */
	struct rdmx_dlist	pke_heaped;	/* those packets: freed at close
						   if the device never gave
						   them back */
	struct rdmx_pool	rxe_pool;	/* of struct rdmx_rxe */
	struct rdmx_dlist	tx_pending;	/* of rdmx_txe with segments waiting */
	struct rdmx_dlist	ctrl_pending;	/* of rdmx_pke the device had no room for */
	struct rdmx_dlist	dack_peers;	/* of rdmx_peer owing a run of DACKs
						   (rdmx_dack.c); empty between
						   progress calls */
	struct rdmx_rxbufs	rxb;		/* packet buffers for the devices */

	struct rdmx_match_queue	msg_q;
	struct rdmx_match_queue	tag_q;
	struct rdmx_dlist	claimed;	/* of rdmx_unexp: FI_PEEK | FI_CLAIM */
	size_t			unexp_bytes;	/* unexpected copies, within budget */
	struct rdmx_budget	budget;		/* what peers make us hold */
	struct rdmx_cache	ooo_small;	/* of rdmx_ooo: packets held for */
	struct rdmx_cache	ooo_large;	/* order, copied (rdmx_order.c) */
	struct rdmx_ooo		*ooo_bufs;	/* rx_buf_cnt: packets held for
						   order in their own buffer */
	size_t			ooo_kept;	/* buffers kept that way now */
	struct rdmx_unexp	*held;		/* rx_buf_cnt entries: unexpected
						   messages kept in their buffer */
	struct rdmx_rxm		**rxms;		/* messages in pieces, by id */
	size_t			rxm_cap;
	size_t			rxm_hint;	/* where to look for a free id */
	struct rdmx_dlist	retry_peers;	/* of rdmx_peer with RNR resends */
	uint64_t		rng;		/* backoff jitter */
	uint64_t		now;		/* clock at the latest progress */
	uint64_t		tick;		/* rdmx_clock_ticked's mark */
	size_t			tx_run;		/* sends since the latest progress */
	bool			tx_more;	/* a send with FI_MORE since then */
	uint64_t		due_retried;	/* a past timer rdmx_ep_wait_arm
						   had progressed once */
	struct rdmx_hs_local	hs_local;	/* this endpoint in handshakes */
	struct rdmx_hs_cfg	hs_cfg;
	struct rdmx_dlist	conn_peers;	/* of rdmx_peer with a handshake */
	uint64_t		conn_next;	/* when progress next runs their timers */
	size_t			close_out;	/* our CLOSE packets the device has not
						   finished (fi_close waits for them) */
	struct rdmx_dlist	peer_list;	/* of rdmx_peer: every peer */
	size_t			anon_peers;	/* made for senders outside the AV */
	struct rdmx_dlist	anon_lru;	/* of rdmx_peer (anon_link): those,
						   least recently heard first */
	uint32_t		ctrl_short;	/* handshake packets not sent for
						   want of a pke since the last
						   rdmx_peer_reclaim */
	fi_rdmx_peer_cb		peer_cb;	/* rdmx_peer_ops: state changes */
	void			*peer_cb_arg;
	struct rdmx_peer	**peers;	/* by fi_addr, made on first use */
	size_t			peer_cap;
	struct rdmx_ep_stats	stats;
};

static inline struct rdmx_ep *rdmx_ep(struct fid_ep *ep_fid)
{
	return rdmx_container_of(ep_fid, struct rdmx_ep, ep_fid);
}

/* fi_endpoint. 0 or -FI_E*. */
int rdmx_ep_open(struct fid_domain *domain, struct fi_info *info,
		 struct fid_ep **ep_p, void *context);

/*
 * fi_getname and fi_setname of an endpoint's own device address (an
 * RDM endpoint's calls; a FI_EP_MSG endpoint's wrap them, rdmx_cm.c).
 */
int rdmx_ep_getname(fid_t fid, void *addr, size_t *addrlen);
int rdmx_ep_setname(fid_t fid, void *addr, size_t addrlen);

/* Polls the device and handles what completed; domain lock held. */
void rdmx_ep_progress(struct rdmx_ep *ep);

/*
 * Before a thread sleeps on the endpoint's descriptors (rdmx_lanes_wait_fds),
 * right after rdmx_ep_progress, domain lock held: -FI_EAGAIN when
 * progress has work already; else 0, with *due_p lowered to the clock
 * at which progress must run even if nothing arrives (the timers of
 * handshakes, keepalive, RNR backoff and the devices).
 */
int rdmx_ep_wait_arm(struct rdmx_ep *ep, uint64_t *due_p);

/*
 * Makes ep's match queues and lists of sends, packets and peers, empty
 * (rdmx_ep_open; unit tests that build an endpoint by hand).
 */
void rdmx_ep_queues_init(struct rdmx_ep *ep);

/* The message and tagged interfaces (rdmx_msg.c), and RMA (rdmx_rma_ops.c). */
extern struct fi_ops_msg rdmx_msg_ops;
extern struct fi_ops_tagged rdmx_tagged_ops;
extern struct fi_ops_rma rdmx_rma_ops;
/* And atomics (rdmx_atomic_ops.c); rdmx_atomic_query is fi_query_atomic's. */
extern struct fi_ops_atomic rdmx_atomic_ops;
int rdmx_atomic_query(enum fi_datatype datatype, enum fi_op op, struct fi_atomic_attr *attr,
		      uint64_t flags);

/* Operation flags accepted by the *msg calls. */
#define RDMX_TX_MSG_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | \
			   FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
			   FI_DELIVERY_COMPLETE | FI_MORE)
#define RDMX_RX_FLAGS (FI_COMPLETION | FI_MORE)
/* FI_OPT_MIN_MULTI_RECV until the application sets it. */
#define RDMX_MIN_MULTI_RECV 16384
#define RDMX_RX_MSG_FLAGS (RDMX_RX_FLAGS | FI_MULTI_RECV)
#define RDMX_RX_TAGGED_FLAGS (RDMX_RX_FLAGS | FI_PEEK | FI_CLAIM | FI_DISCARD)

/*
 * The endpoint's struct rdmx_dev_admit: whether the device may take a
 * packet (len bytes at buf) from src, or must refuse it (rdmx_order_admit).
 */
bool rdmx_ep_admit(void *ctx, struct rdmx_ah *src, const void *buf, size_t len);

#endif /* RDMX_EP_H */
