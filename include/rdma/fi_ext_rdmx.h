/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx provider extensions to libfabric (installed as rdma/fi_ext_rdmx.h).
 *
 * Endpoint counters:
 *
 *	struct fi_rdmx_ep_ops *ops;
 *	struct fi_rdmx_ep_stats stats;
 *
 *	if (!fi_open_ops(&ep->fid, FI_RDMX_EP_OPS, 0, (void **) &ops, NULL))
 *		ops->query_stats(ep, &stats);
 *
 * Every counter only grows while the endpoint is open.
 *
 * Peers (the handshake state of each remote endpoint), opened on the
 * domain; the calls name the endpoint:
 *
 *	struct fi_rdmx_peer_ops *peer_ops;
 *	struct fi_rdmx_peer_attr attr;
 *
 *	fi_open_ops(&domain->fid, FI_RDMX_PEER_OPS, 0, (void **) &peer_ops, NULL);
 *	peer_ops->set_callback(ep, on_peer, my_state);
 *	peer_ops->query(ep, fi_addr, &attr);
 *
 * The callback runs inside the call that made progress on ep (fi_cq_read,
 * a send...) with the provider's lock held: it must not call into the
 * provider (not even query); it should note what happened and return.
 */
#ifndef FI_EXT_RDMX_H
#define FI_EXT_RDMX_H

#include <stddef.h>
#include <stdint.h>
#include <rdma/fi_endpoint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FI_RDMX_EP_OPS		"rdmx_ep_ops_v1"

struct fi_rdmx_ep_stats {
	uint64_t	rx_malformed;	/* packets failing validation, dropped */
	uint64_t	rx_dropped;	/* other packets dropped by the device */
	uint64_t	rx_unexpected;	/* messages that arrived before a receive */
	uint64_t	rx_no_recv;	/* messages to an endpoint without FI_RECV */
	uint64_t	tx_errors;	/* sends completed with an error */
	uint64_t	retransmits;	/* packets resent after a timeout */
	uint64_t	fast_retransmits; /* packets resent on selective acks */
	uint64_t	duplicates;	/* packets received more than once */
	uint64_t	acks_sent;	/* acknowledgement-only packets sent */
	uint64_t	rnr_sent;	/* packets refused: no receive buffer */
	uint64_t	rnr_received;	/* our packets the receiver refused */
	uint64_t	rnr_completions; /* sends the device gave up with RNR */
	uint64_t	rnr_backoffs;	/* times a peer entered RNR backoff */
	uint64_t	eagain;		/* posts answered -FI_EAGAIN */
	uint64_t	peers_unreachable; /* peers declared unreachable */
	uint64_t	rx_unauth;	/* packets without this session's tag, dropped */
	uint64_t	challenges;	/* tag challenges sent (one per unauthenticated
					   packet at most, rate-limited) */
	uint64_t	rx_stale;	/* packets of an ended session, dropped */
	uint64_t	budget_used;	/* bytes of FI_RDMX_RX_BUDGET in use now */
	uint64_t	budget_peak;	/* the most in use at once */
	uint64_t	budget_refused;	/* packets, messages or peers refused for
					   want of it */
	uint64_t	anon_peers;	/* peers kept for senders outside the AV */
	uint64_t	shm_peers;	/* peers reached by shared memory now */
	uint64_t	tx_gso;		/* datagrams the udp device handed to the
					   kernel in segmentation offload runs */
	uint64_t	rx_gro;		/* datagrams the udp device received
					   several to a read (receive offload) */
};

struct fi_rdmx_ep_ops {
	size_t	size;		/* sizeof(struct fi_rdmx_ep_ops) */
	/* Copies the endpoint's counters into stats; 0 or -FI_EINVAL. */
	int	(*query_stats)(struct fid_ep *ep, struct fi_rdmx_ep_stats *stats);
};

#define FI_RDMX_PEER_OPS	"rdmx_peer_ops"

enum fi_rdmx_peer_state {
	FI_RDMX_PEER_IDLE,		/* nothing sent to it yet */
	FI_RDMX_PEER_CONNECTING,	/* RESET sent, no answer yet */
	FI_RDMX_PEER_PROBING,		/* version agreed, path being probed */
	FI_RDMX_PEER_CONNECTED,		/* sends flow */
	FI_RDMX_PEER_DISCONNECTED,	/* gave up: its operations failed; the
					   next send starts a new handshake */
	FI_RDMX_PEER_CLOSED,		/* it closed its endpoint: its operations
					   not delivered, and every later send,
					   fail with FI_ECONNRESET, until a new
					   endpoint at its address connects or
					   the address is removed from the AV and
					   inserted again */
};

/* Bits of fi_rdmx_peer_attr.features. */
#define FI_RDMX_PEER_FEAT_CLOSE	(1ULL << 2)	/* tells us when it closes */
#define FI_RDMX_PEER_FEAT_HOST	(1ULL << 3)	/* names its host and pid (a
						   same-host one may be read) */

struct fi_rdmx_peer_attr {
	enum fi_rdmx_peer_state	state;
	uint32_t		version;	/* protocol level agreed; 0 until
						   known */
	uint64_t		features;	/* the peer's feature bits */
};

/*
 * Called when a peer becomes FI_RDMX_PEER_CONNECTED, or
 * FI_RDMX_PEER_DISCONNECTED with err (positive FI_E*: FI_EHOSTUNREACH
 * when it stopped answering, FI_ENOPROTOOPT when no version is common),
 * or FI_RDMX_PEER_CLOSED with err FI_ECONNRESET when it closed its
 * endpoint (fi_close). addr is FI_ADDR_NOTAVAIL for a sender outside the
 * AV. fi_close of ep itself makes progress for a few milliseconds and
 * may call it too.
 */
typedef void (*fi_rdmx_peer_cb)(struct fid_ep *ep, fi_addr_t addr,
				enum fi_rdmx_peer_state state, int err, void *arg);

struct fi_rdmx_peer_ops {
	size_t	size;		/* sizeof(struct fi_rdmx_peer_ops) */
	/* The state of the peer at addr (in ep's AV); 0 or -FI_EINVAL. */
	int	(*query)(struct fid_ep *ep, fi_addr_t addr,
			 struct fi_rdmx_peer_attr *attr);
	/* Sets (cb NULL: clears) ep's callback; 0 or -FI_EINVAL. */
	int	(*set_callback)(struct fid_ep *ep, fi_rdmx_peer_cb cb, void *arg);
};

#ifdef __cplusplus
}
#endif

#endif /* FI_EXT_RDMX_H */
