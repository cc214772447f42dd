/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: posting a send, write or read: the step every such call ends with. */
#ifndef RDMX_POST_H
#define RDMX_POST_H

#include "rdmx_domain.h"
#include "rdmx_ep.h"
#include "rdmx_tx.h"

/*
 * Posts req under the domain lock; out of room, once more after a
 * progress that may free some. Inline in each call (rdmx_msg.c,
 * rdmx_rma_ops.c): its arguments are not passed twice.
 */
static inline ssize_t rdmx_post_send(struct rdmx_ep *ep, const struct rdmx_send_req *req)
{
	struct rdmx_send_req to_peer;
	ssize_t ret;

	rdmx_lock_acquire(&ep->domain->lock);
	/* A FI_EP_MSG endpoint's goes to its peer, whatever its dest says. */
	if (ep->cm) {
		if (ep->conn_peer == FI_ADDR_NOTAVAIL) {
			rdmx_lock_release(&ep->domain->lock);
			return -FI_ENOTCONN;
		}
		to_peer = *req;
		to_peer.dest = ep->conn_peer;
		req = &to_peer;
	}
	ret = ep->dgram ? rdmx_ud_send(ep, req) : rdmx_send(ep, req);
	if (ret == -FI_EAGAIN) {
		rdmx_ep_progress(ep);
		ret = ep->dgram ? rdmx_ud_send(ep, req) : rdmx_send(ep, req);
		ep->stats.eagain += ret == -FI_EAGAIN;
	}
	rdmx_lock_release(&ep->domain->lock);
	rdmx_autoprog_wake(&ep->domain->autoprog);
	return ret;
}

#endif /* RDMX_POST_H */
