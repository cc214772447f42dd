/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: an endpoint built by hand, for tests that drive the
 * rdm layer packet by packet over a stub device rather than through
 * fi_endpoint.
 */
#ifndef RDMX_TEST_EP_H
#define RDMX_TEST_EP_H

#include <rdma/fi_eq.h>

#include "rdmx_test.h"
#include "rdmx_cq.h"
#include "rdmx_domain.h"
#include "rdmx_ep.h"

/* The domain and completion queue an endpoint of rdmx_test_ep_open has. */
struct rdmx_test_ep {
	struct rdmx_test_domain	td;
	struct fid_cq		*cq;
};

/*
 * ep zeroed, on device dev, in a domain of t with one tagged CQ for both
 * directions, every list of it empty; the rest is the test's.
 */
static inline void rdmx_test_ep_open(struct rdmx_test_ep *t, struct rdmx_ep *ep,
				     struct rdmx_dev *dev)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED };

	rdmx_test_domain_open(&t->td, FI_VERSION(1, 17));
	cr_assert_eq(fi_cq_open(t->td.domain, &attr, &t->cq, NULL), 0);
	memset(ep, 0, sizeof(*ep));
	ep->domain = rdmx_domain(t->td.domain);
	ep->lanes.nic = dev;
	ep->rx_cq = ep->tx_cq = rdmx_container_of(t->cq, struct rdmx_cq, cq_fid);
	rdmx_sink_construct(&ep->tx_sink);
	ep->tx_sink.cq = ep->tx_cq;
	ep->rx_sink = ep->tx_sink;
	ep->tx_comp = &ep->tx_sink.comp;
	ep->rx_comp = &ep->rx_sink.comp;
	rdmx_ep_queues_init(ep);
	rdmx_dlist_init(&ep->conn_peers);
}

/* Closes what rdmx_test_ep_open opened. */
static inline void rdmx_test_ep_close(struct rdmx_test_ep *t)
{
	cr_assert_eq(fi_close(&t->cq->fid), 0);
	rdmx_test_domain_close(&t->td);
}

#endif /* RDMX_TEST_EP_H */
