/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: receives, where an arriving message meets its receive: it takes
 * the oldest posted receive that matches (rdmx_match.c) or becomes an
 * unexpected message, kept whole (copied out of the packet buffer while
 * under FI_RDMX_UNEXP_MAX and the endpoint's budget, else held in it) or
 * standing for a message in pieces (rdmx_rxm.c). This file completes
 * receives and hands an unexpected message to the receive that takes it;
 * one in pieces goes on through its protocol's ops (struct rdmx_rxm_ops),
 * as this file sits below the protocols. Posting is rdmx_recv_post.c's.
 */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_comp.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rxbufs.h"
#include "rdmx_rx.h"

struct rdmx_match_queue *rdmx_recv_queue(struct rdmx_ep *ep, uint32_t pkt_flags)
{
	return (pkt_flags & RDMX_PKT_TAGGED) ? &ep->tag_q : &ep->msg_q;
}

struct rdmx_rxe *rdmx_recv_match(struct rdmx_ep *ep, uint32_t pkt_flags,
				 fi_addr_t src, uint64_t tag, size_t len,
				 struct rdmx_rxe *kid)
{
	struct rdmx_match_queue *q = rdmx_recv_queue(ep, pkt_flags);
	struct rdmx_rxe *rxe = rdmx_match_posted_find(q, src, tag);

	if (!rxe)
		return NULL;
	if (rxe->flags & FI_MULTI_RECV)
		return rdmx_multi_carve(q, rxe, len, kid);
	rdmx_match_posted_remove(q, rxe);
	return rxe;
}

void rdmx_recv_release(struct rdmx_ep *ep, struct rdmx_rxe *rxe)
{
	if (rxe->parent)
		rdmx_multi_done(ep, rxe);
	else
		rdmx_pool_release(&ep->rxe_pool, rxe);
}

struct rdmx_cq_entry rdmx_recv_entry(void *context, size_t len, fi_addr_t src,
				     uint64_t tag, uint64_t data, uint32_t pkt_flags)
{
	struct rdmx_cq_entry entry = {
		.op_context = context,
		.flags = FI_RECV | ((pkt_flags & RDMX_PKT_TAGGED) ? FI_TAGGED : FI_MSG),
		.len = len,
		.tag = tag,
		.src = rdmx_peer_src_reported(src),
	};

	if (pkt_flags & RDMX_PKT_CQ_DATA) {
		entry.flags |= FI_REMOTE_CQ_DATA;
		entry.data = data;
	}
	return entry;
}

/*
 * A message from a sender outside the AV, to an endpoint that asked for
 * FI_SOURCE_ERR: an error entry with the sender's address (fi_cq(3)).
 */
static RDMX_NOINLINE void rdmx_recv_source_err(struct rdmx_ep *ep,
					       const struct rdmx_cq_entry *entry,
					       const struct rdmx_peer *peer)
{
	const struct rdmx_dev *nic = ep->lanes.nic;

	rdmx_comp_source_err(ep->rx_comp, entry, peer->lane.nic_addr,
			     nic->ops->addr_len(peer->lane.nic_addr));
}

void rdmx_recv_write_from(struct rdmx_ep *ep, const struct rdmx_cq_entry *entry,
			  fi_addr_t src)
{
	const struct rdmx_peer *anon = rdmx_peer_of_src(src);

	if (anon && (ep->caps & FI_SOURCE_ERR))
		rdmx_recv_source_err(ep, entry, anon);
	else
		rdmx_comp_write(ep->rx_comp, entry);
}

void rdmx_recv_write(struct rdmx_ep *ep, uint64_t op_flags,
		     const struct rdmx_cq_entry *entry, fi_addr_t src)
{
	/* A released multi-receive buffer is always reported (fi_msg(3)). */
	if (ep->rx_selective && !(op_flags & FI_COMPLETION) &&
	    !(entry->flags & FI_MULTI_RECV))
		rdmx_comp_count(ep->rx_comp, entry);
	else
		rdmx_recv_write_from(ep, entry, src);
}

void rdmx_recv_complete(struct rdmx_ep *ep, struct rdmx_rxe *rxe, size_t msg_len,
			fi_addr_t src, uint64_t tag, uint64_t data, uint32_t pkt_flags)
{
	size_t cap = rdmx_iov_len(rxe->iov, rxe->iov_cnt);
	struct rdmx_cq_entry entry = rdmx_recv_entry(rxe->context, RDMX_MIN(msg_len, cap),
						     src, tag, data, pkt_flags);

	entry.buf = rxe->iov_cnt ? rxe->iov[0].iov_base : NULL;
	entry.flags |= rdmx_multi_flags(rxe);
	if (msg_len > cap)
		rdmx_comp_err(ep->rx_comp, &entry, FI_ETRUNC, msg_len - cap,
			      "rdmx: %zu-byte message truncated to a %zu-byte buffer",
			      msg_len, cap);
	else
		rdmx_recv_write(ep, rxe->flags, &entry, src);
	rdmx_recv_release(ep, rxe);
}

/* The entry of a receive that ends without a message. */
struct rdmx_cq_entry rdmx_recv_err_entry(const struct rdmx_rxe *rxe)
{
	return (struct rdmx_cq_entry) {
		.op_context = rxe->context,
		.flags = FI_RECV | ((rxe->flags & FI_TAGGED) ? FI_TAGGED : FI_MSG) |
			 rdmx_multi_flags(rxe),
		.tag = rxe->item.tag,
		.src = FI_ADDR_NOTAVAIL,
	};
}

void rdmx_recv_fail(struct rdmx_ep *ep, struct rdmx_rxe *rxe, int err, const char *why)
{
	struct rdmx_cq_entry entry = rdmx_recv_err_entry(rxe);

	rdmx_comp_err(ep->rx_comp, &entry, err, 0, "rdmx: receive failed: %s", why);
	rdmx_recv_release(ep, rxe);
}

struct rdmx_unexp *rdmx_recv_ux_new(struct rdmx_ep *ep, size_t extra)
{
	/* The entry counts too: empty messages must not be free to queue. */
	size_t cost = sizeof(struct rdmx_unexp) + extra;
	struct rdmx_unexp *ux;

	if (!(extra ? rdmx_budget_charge_bulk : rdmx_budget_charge)(&ep->budget, cost))
		return NULL;
	ux = malloc(cost);
	if (!ux) {
		rdmx_budget_credit(&ep->budget, cost);
		return NULL;
	}
	ux->payload = (uint8_t *) (ux + 1);
	ux->rx_buf = RDMX_RX_BUF_NONE;
	ux->charged = cost;
	ux->rxm = NULL;
	rdmx_dlist_init(&ux->link);
	rdmx_dlist_init(&ux->item.link);
	ep->unexp_bytes += cost;
	return ux;
}

void rdmx_recv_ux_queue(struct rdmx_ep *ep, struct rdmx_unexp *ux, fi_addr_t src,
			uint64_t tag, uint64_t data, uint32_t pkt_flags, size_t len)
{
	ux->item.addr = src;
	ux->item.tag = tag;
	ux->data = data;
	ux->pkt_flags = pkt_flags;
	ux->len = len;
	rdmx_match_unexp_add(rdmx_recv_queue(ep, pkt_flags), ux);
	ep->stats.rx_unexpected++;
}

void rdmx_recv_ux_readdr(struct rdmx_ep *ep, fi_addr_t from, fi_addr_t to)
{
	rdmx_match_unexp_readdr(&ep->msg_q, from, to);
	rdmx_match_unexp_readdr(&ep->tag_q, from, to);
}

void rdmx_recv_ux_free(struct rdmx_ep *ep, struct rdmx_unexp *ux)
{
	ep->unexp_bytes -= ux->charged;
	rdmx_budget_credit(&ep->budget, ux->charged);
	free(ux);
}

int rdmx_recv_unexpected(struct rdmx_ep *ep, const struct rdmx_pkt *pkt,
			 fi_addr_t src, size_t rx_buf, bool *keep_p)
{
	struct rdmx_unexp *ux = NULL;
	bool keep = false;

	if (rx_buf == RDMX_RX_BUF_NONE ||
	    ep->unexp_bytes + sizeof(*ux) + pkt->payload_len <= g_rdmx_params.unexp_max)
		ux = rdmx_recv_ux_new(ep, pkt->payload_len);
	if (ux) {
		if (pkt->payload_len)
			memcpy(ux->payload, pkt->payload, pkt->payload_len);
	} else if (rx_buf != RDMX_RX_BUF_NONE) {
		/*
		 * Past FI_RDMX_UNEXP_MAX or the budget the buffer itself waits
		 * for a receive; when every buffer waits, the device refuses
		 * packets (RNR) and senders back off.
		 */
		keep = true;
		ux = &ep->held[rx_buf];
		ux->payload = (uint8_t *) pkt->payload;
		ux->rx_buf = rx_buf;
		ux->charged = 0;
		ux->rxm = NULL;
	} else {
		ep->stats.rx_dropped++;
		RDMX_WARN_WIRE(FI_LOG_EP_DATA, "out of memory: unexpected message dropped\n");
		return -FI_ENOMEM;
	}
	rdmx_recv_ux_queue(ep, ux, src, pkt->tag, pkt->data, pkt->flags, pkt->payload_len);
	*keep_p = keep;
	return 0;
}

void rdmx_recv_unexp_release(struct rdmx_ep *ep, struct rdmx_unexp *ux)
{
	if (ux->rxm)
		ux->rxm->ops->discard(ep, ux->rxm);
	else if (ux->rx_buf != RDMX_RX_BUF_NONE)
		rdmx_rxbufs_repost(&ep->rxb, &ep->lanes, ux->rx_buf);
	else
		rdmx_recv_ux_free(ep, ux);
}

struct rdmx_rxe *rdmx_recv_rxe_new(struct rdmx_ep *ep, const struct rdmx_recv_req *req,
				   fi_addr_t src)
{
	bool tagged = req->flags & FI_TAGGED;
	struct rdmx_rxe *rxe = rdmx_pool_alloc(&ep->rxe_pool);

	if (!rxe)
		return NULL;
	rdmx_dlist_init(&rxe->item.link);
	rxe->item.addr = src;
	rxe->item.tag = tagged ? req->tag : 0;
	rxe->ignore = tagged ? req->ignore : 0;
	rxe->context = req->context;
	rxe->flags = req->flags;
	rxe->parent = NULL;
	rxe->rma = RDMX_RMA_NONE;
	/* Entry by entry: a memcpy call costs more for the one or two. */
	for (size_t i = 0; i < req->iov_cnt; i++)
		rxe->iov[i] = req->iov[i];
	rxe->iov_cnt = req->iov_cnt;
	return rxe;
}

void rdmx_recv_unexp(struct rdmx_ep *ep, struct rdmx_rxe *rxe, struct rdmx_unexp *ux)
{
	if (ux->rxm) {
		ux->rxm->ops->matched(ep, ux->rxm, rxe);
		return;
	}
	rdmx_recv_deliver(ep, rxe, ux->payload, ux->len, ux->item.addr, ux->item.tag,
			  ux->data, ux->pkt_flags);
	rdmx_recv_unexp_release(ep, ux);
}
