/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: searching the unexpected tagged messages (fi_tagged(3) FI_PEEK,
 * FI_CLAIM, FI_DISCARD), what MPI_Probe, MPI_Improbe and MPI_Mrecv use.
 *
 * A peek reports the oldest unexpected message the receive would match,
 * without taking it, or an FI_ENOMSG error entry. With FI_CLAIM the
 * message leaves the unexpected queue for the endpoint's claimed list,
 * and the caller's struct fi_context remembers it until the paired
 * FI_CLAIM receive takes it (or FI_CLAIM | FI_DISCARD drops it). With
 * FI_PEEK | FI_DISCARD the message found is dropped.
 */
#include "rdmx.h"
#include "rdmx_comp.h"
#include "rdmx_ep.h"
#include "rdmx_rx.h"

/* The message a search found, as a receive of len bytes would report it. */
static struct rdmx_cq_entry rdmx_probe_entry(const struct rdmx_recv_req *req,
					     const struct rdmx_unexp *ux, size_t len)
{
	return rdmx_recv_entry(req->context, len, ux->item.addr, ux->item.tag, ux->data,
				   ux->pkt_flags);
}

static ssize_t rdmx_probe_peek(struct rdmx_ep *ep, const struct rdmx_recv_req *req,
			       fi_addr_t src)
{
	struct rdmx_unexp *ux;
	struct rdmx_cq_entry entry;

	ux = rdmx_match_unexp_find(&ep->tag_q, src, req->tag, req->ignore);
	if (!ux) {
		entry = (struct rdmx_cq_entry) {
			.op_context = req->context,
			.flags = FI_RECV | FI_TAGGED,
			.tag = req->tag,
			.src = FI_ADDR_NOTAVAIL,
		};
		rdmx_comp_outcome(ep->rx_comp, &entry, FI_ENOMSG);
		return 0;
	}
	entry = rdmx_probe_entry(req, ux, ux->len);
	if (req->flags & (FI_CLAIM | FI_DISCARD))
		rdmx_match_unexp_remove(&ep->tag_q, ux);
	/* Written while the message holds its sender's peer (FI_SOURCE_ERR reads it). */
	rdmx_recv_write(ep, req->flags, &entry, ux->item.addr);
	if (req->flags & FI_DISCARD) {
		rdmx_recv_unexp_release(ep, ux);
	} else if (req->flags & FI_CLAIM) {
		((struct fi_context *) req->context)->internal[0] = ux;
		rdmx_dlist_insert_tail(&ep->claimed, &ux->link);
	}
	return 0;
}

/* The message claimed in the context of req, if it is still claimed. */
static struct rdmx_unexp *rdmx_probe_claimed(struct rdmx_ep *ep,
					     const struct rdmx_recv_req *req)
{
	void *want = ((struct fi_context *) req->context)->internal[0];
	struct rdmx_dlist *it;

	rdmx_dlist_foreach(&ep->claimed, it) {
		struct rdmx_unexp *ux = rdmx_container_of(it, struct rdmx_unexp, link);

		if (ux == want)
			return ux;
	}
	return NULL;
}

/* Takes (or drops) the message a FI_PEEK | FI_CLAIM left in the context. */
static ssize_t rdmx_probe_claim(struct rdmx_ep *ep, const struct rdmx_recv_req *req,
				fi_addr_t src)
{
	struct rdmx_unexp *ux = rdmx_probe_claimed(ep, req);
	struct rdmx_rxe *rxe = NULL;

	if (!ux) {
		RDMX_WARN(FI_LOG_EP_DATA, "FI_CLAIM with a context that claimed nothing\n");
		return -FI_EINVAL;
	}
	if (!(req->flags & FI_DISCARD)) {
		rxe = rdmx_recv_rxe_new(ep, req, src);
		if (!rxe)
			return -FI_EAGAIN;
	}
	rdmx_dlist_remove(&ux->link);
	((struct fi_context *) req->context)->internal[0] = NULL;
	if (rxe) {
		rdmx_recv_unexp(ep, rxe, ux);
	} else {
		struct rdmx_cq_entry entry = rdmx_probe_entry(req, ux, 0);

		rdmx_recv_write(ep, req->flags, &entry, ux->item.addr);
		rdmx_recv_unexp_release(ep, ux);
	}
	return 0;
}

ssize_t rdmx_probe(struct rdmx_ep *ep, const struct rdmx_recv_req *req, fi_addr_t src)
{
	if (!(req->flags & FI_TAGGED) ||
	    ((req->flags & FI_DISCARD) && !(req->flags & (FI_PEEK | FI_CLAIM)))) {
		RDMX_WARN(FI_LOG_EP_DATA, "FI_PEEK, FI_CLAIM and FI_DISCARD are "
			  "for tagged receives; FI_DISCARD needs one of the others\n");
		return -FI_EINVAL;
	}
	if ((req->flags & FI_CLAIM) && !req->context) {
		RDMX_WARN(FI_LOG_EP_DATA, "FI_CLAIM needs a struct fi_context\n");
		return -FI_EINVAL;
	}
	if (req->flags & FI_PEEK)
		return rdmx_probe_peek(ep, req, src);
	return rdmx_probe_claim(ep, req, src);
}
