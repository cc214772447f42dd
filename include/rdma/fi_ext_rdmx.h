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
};

struct fi_rdmx_ep_ops {
	size_t	size;		/* sizeof(struct fi_rdmx_ep_ops) */
	/* Copies the endpoint's counters into stats; 0 or -FI_EINVAL. */
	int	(*query_stats)(struct fid_ep *ep, struct fi_rdmx_ep_stats *stats);
};

#ifdef __cplusplus
}
#endif

#endif /* FI_EXT_RDMX_H */
