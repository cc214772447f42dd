/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: posting receives, the top of the receive side as the application
 * drives it: a receive takes the oldest unexpected message it matches or
 * waits on its queue; a tagged one may search instead (rdmx_probe.c); an
 * FI_MULTI_RECV buffer packs what waits (rdmx_multi.c). Also fi_cancel
 * and the endpoint's close. Arriving messages meet posted receives in
 * rdmx_recv.c, below.
 */
#include "rdmx.h"
#include "rdmx_comp.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rx.h"

/*
 * Queues the FI_MULTI_RECV buffer buf and packs the unexpected messages
 * it takes into it. Out of line: its loop's registers would burden
 * every receive's post.
 */
static RDMX_NOINLINE void rdmx_recv_multi(struct rdmx_ep *ep, struct rdmx_match_queue *q,
			    struct rdmx_rxe *buf)
{
	struct rdmx_unexp *ux;
	struct rdmx_rxe now;
	bool released = false;

	buf->used = 0;
	buf->children = 0;
	buf->min_free = ep->min_multi_recv;
	buf->released = false;
	/* Posted first, so that messages already waiting pack in in order. */
	rdmx_match_post(q, buf);
	while (!released && (ux = rdmx_match_unexp(q, buf->item.addr, 0, 0))) {
		struct rdmx_rxe *kid = rdmx_multi_carve(q, buf, ux->len,
							ux->rxm ? &ux->rxm->kid : &now);

		/* Read now: once released, the message may free buf. */
		released = buf->released;
		rdmx_recv_unexp(ep, kid, ux);
	}
}

ssize_t rdmx_recv(struct rdmx_ep *ep, const struct rdmx_recv_req *req)
{
	struct rdmx_match_queue *q = (req->flags & FI_TAGGED) ? &ep->tag_q : &ep->msg_q;
	fi_addr_t src = (ep->caps & FI_DIRECTED_RECV) ? req->src : FI_ADDR_UNSPEC;
	/* Tagged receives take FI_MULTI_RECV from no op_flags default. */
	bool multi = (req->flags & (FI_MULTI_RECV | FI_TAGGED)) == FI_MULTI_RECV;
	struct rdmx_rxe *rxe;
	struct rdmx_unexp *ux;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!(ep->caps & FI_RECV)) {
		RDMX_WARN(FI_LOG_EP_DATA, "receive on an endpoint without FI_RECV\n");
		return -FI_EOPNOTSUPP;
	}
	if (req->iov_cnt > RDMX_IOV_LIMIT) {
		RDMX_WARN(FI_LOG_EP_DATA, "recv iov count %zu > %d\n",
			  req->iov_cnt, RDMX_IOV_LIMIT);
		return -FI_EINVAL;
	}
	if (src != FI_ADDR_UNSPEC && !rdmx_addrs_lookup(ep->addrs, src)) {
		RDMX_WARN(FI_LOG_EP_DATA, "recv from unknown fi_addr %lu\n",
			  (unsigned long) src);
		return -FI_EINVAL;
	}
	/*
	 * A sender heard from before it joined the AV gets its address now,
	 * so its messages waiting unexpected are src's (rdmx_peer_src). If
	 * the peer cannot be made, they just stay unknown.
	 */
	if (src != FI_ADDR_UNSPEC && ep->anon_peers && !rdmx_peer_find(ep, src)) {
		struct rdmx_peer *peer;

		(void) rdmx_peer_get(ep, src, &peer);
	}
	if (req->flags & (FI_PEEK | FI_CLAIM | FI_DISCARD))
		return rdmx_probe(ep, req, src);
	if (multi && !(ep->caps & FI_MULTI_RECV)) {
		RDMX_WARN(FI_LOG_EP_DATA, "FI_MULTI_RECV on an endpoint without it\n");
		return -FI_EOPNOTSUPP;
	}
	rxe = rdmx_recv_rxe_new(ep, req, src);
	if (!rxe)
		return -FI_EAGAIN;
	if (multi) {
		rdmx_recv_multi(ep, q, rxe);
		return 0;
	}
	rxe->flags &= ~(uint64_t) FI_MULTI_RECV;
	ux = rdmx_match_unexp(q, src, rxe->item.tag, rxe->ignore);
	if (ux)
		rdmx_recv_unexp(ep, rxe, ux);
	else
		rdmx_match_post(q, rxe);
	return 0;
}

int rdmx_recv_cancel(struct rdmx_ep *ep, void *context)
{
	struct rdmx_rxe *rxe = rdmx_match_cancel(&ep->tag_q, context);
	struct rdmx_cq_entry entry;

	if (!rxe)
		rxe = rdmx_match_cancel(&ep->msg_q, context);
	if (!rxe)
		return -FI_ENOENT;
	entry = rdmx_recv_err_entry(rxe);
	if (rxe->flags & FI_MULTI_RECV)
		rdmx_multi_cancel(ep, rxe, &entry);
	else
		rdmx_pool_release(&ep->rxe_pool, rxe);
	rdmx_comp_outcome(ep->rx_comp, &entry, FI_ECANCELED);
	return 0;
}

/*
 * Frees the copied messages of a list (of q, or the claimed list); held
 * buffers die with the endpoint.
 */
static void rdmx_recv_drain_unexp(struct rdmx_ep *ep, struct rdmx_match_queue *q,
				  struct rdmx_dlist *list)
{
	while (!rdmx_dlist_empty(list)) {
		struct rdmx_unexp *ux = rdmx_container_of(list->next, struct rdmx_unexp,
							  link);

		rdmx_match_unexp_remove(q, ux);
		if (ux->rx_buf == RDMX_RX_BUF_NONE)
			rdmx_recv_ux_free(ep, ux);
	}
}

static void rdmx_recv_drain_queue(struct rdmx_ep *ep, struct rdmx_match_queue *q)
{
	struct rdmx_rxe *rxe;

	while ((rxe = rdmx_match_posted_pop(q)))
		rdmx_pool_release(&ep->rxe_pool, rxe);
	rdmx_recv_drain_unexp(ep, q, &q->unexp);
	rdmx_match_queue_destruct(q);
}

void rdmx_recv_drain(struct rdmx_ep *ep)
{
	/* Messages in pieces first: they free the entries standing for them. */
	rdmx_rxm_drain(ep);
	rdmx_recv_drain_queue(ep, &ep->msg_q);
	rdmx_recv_drain_queue(ep, &ep->tag_q);
	rdmx_recv_drain_unexp(ep, &ep->tag_q, &ep->claimed);
}
