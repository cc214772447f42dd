/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: messages that arrive in several packets (see struct rdmx_rxm),
 * shared by the medium and long protocols. An rxm is named by its peer
 * and msg_id (medium segments carry those) and by an id in the
 * endpoint's table (a long message's DATA carries it). Bytes land in the
 * matched receive's buffers, or in the unexpected entry's copy until a
 * receive takes the message.
 */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_dack.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rx.h"

/* A free slot of the id table, grown when full; false if out of memory. */
static bool rdmx_rxm_id_new(struct rdmx_ep *ep, uint32_t *id)
{
	struct rdmx_rxm **tab;
	size_t cap;

	for (size_t n = 0; n < ep->rxm_cap; n++) {
		size_t i = (ep->rxm_hint + n) % ep->rxm_cap;

		if (!ep->rxms[i]) {
			*id = (uint32_t) i;
			ep->rxm_hint = i + 1;
			return true;
		}
	}
	cap = RDMX_MAX(ep->rxm_cap * 2, 64);
	if (cap > UINT32_MAX)
		return false;
	tab = realloc(ep->rxms, cap * sizeof(*tab));
	if (!tab)
		return false;
	memset(tab + ep->rxm_cap, 0, (cap - ep->rxm_cap) * sizeof(*tab));
	*id = (uint32_t) ep->rxm_cap;
	ep->rxm_hint = ep->rxm_cap + 1;
	ep->rxms = tab;
	ep->rxm_cap = cap;
	return true;
}

struct rdmx_rxm *rdmx_rxm_new(struct rdmx_ep *ep, struct rdmx_peer *peer,
			      const struct rdmx_pkt *pkt, const struct rdmx_rxm_ops *ops)
{
	struct rdmx_rxm *rxm;

	/*
	 * Room also for the entry that stands for it if no receive takes it:
	 * an RTS refused later, at rdmx_rxm_attach, would have its sender
	 * told to send nothing, as if it had been delivered.
	 */
	if (!rdmx_budget_fits(&ep->budget, sizeof(*rxm) + sizeof(struct rdmx_unexp)) ||
	    !rdmx_budget_charge(&ep->budget, sizeof(*rxm))) {
		rdmx_budget_refused(&ep->budget, "message state", pkt->msg_len);
		return NULL;
	}
	rxm = calloc(1, sizeof(*rxm));
	if (!rxm || !rdmx_rxm_id_new(ep, &rxm->id)) {
		free(rxm);
		rdmx_budget_credit(&ep->budget, sizeof(*rxm));
		ep->stats.rx_dropped++;
		RDMX_WARN_WIRE(FI_LOG_EP_DATA, "out of memory: %zu-byte message dropped\n",
			       (size_t) pkt->msg_len);
		return NULL;
	}
	ep->rxms[rxm->id] = rxm;
	rxm->peer = peer;
	rxm->ops = ops;
	rxm->type = pkt->type;
	rxm->msg_id = pkt->msg_id;
	rxm->tx_id = pkt->tx_id;
	rxm->pkt_flags = pkt->flags;
	rxm->tag = pkt->tag;
	rxm->data = pkt->data;
	rxm->msg_len = pkt->msg_len;
	rxm->end = pkt->msg_len;
	rdmx_cover_construct(&rxm->cover);
	rdmx_dlist_insert_tail(&peer->rx_msgs, &rxm->link);
	return rxm;
}

struct rdmx_rxm *rdmx_rxm_find(struct rdmx_peer *peer, uint32_t msg_id)
{
	struct rdmx_dlist *it;

	rdmx_dlist_foreach(&peer->rx_msgs, it) {
		struct rdmx_rxm *rxm = rdmx_container_of(it, struct rdmx_rxm, link);

		if (rxm->msg_id == msg_id)
			return rxm;
	}
	return NULL;
}

struct rdmx_rxm *rdmx_rxm_by_id(struct rdmx_ep *ep, uint32_t rx_id)
{
	struct rdmx_rxm *rxm = rx_id < ep->rxm_cap ? ep->rxms[rx_id] : NULL;

	return rxm && !rxm->dead ? rxm : NULL;
}

/* Frees rxm and gives its memory back to the budget. */
static void rdmx_rxm_release(struct rdmx_ep *ep, struct rdmx_rxm *rxm)
{
	rdmx_cover_destruct(&rxm->cover, &ep->budget);
	free(rxm);
	rdmx_budget_credit(&ep->budget, sizeof(*rxm));
}

void rdmx_rxm_take(struct rdmx_ep *ep, struct rdmx_rxm *rxm, struct rdmx_rxe *rxe)
{
	(void) ep;
	rxm->rxe = rxe;
	rxm->end = RDMX_MIN(rxm->msg_len, rdmx_iov_len(rxe->iov, rxe->iov_cnt));
}

bool rdmx_rxm_attach(struct rdmx_ep *ep, struct rdmx_rxm *rxm, struct rdmx_rxe *rxe,
		     size_t extra)
{
	struct rdmx_unexp *ux;

	if (rxe) {
		rdmx_rxm_take(ep, rxm, rxe);
		return true;
	}
	if (!rdmx_budget_fits_bulk(&ep->budget, sizeof(*ux) + extra)) {
		rdmx_budget_refused(&ep->budget, "unexpected message", rxm->msg_len);
		return false;
	}
	ux = rdmx_recv_ux_new(ep, extra);
	if (!ux) {
		ep->stats.rx_dropped++;
		RDMX_WARN_WIRE(FI_LOG_EP_DATA, "out of memory: unexpected %zu-byte message dropped\n",
			       rxm->msg_len);
		return false;
	}
	ux->rxm = rxm;
	rxm->ux = ux;
	rdmx_recv_ux_queue(ep, ux, rdmx_peer_src(rxm->peer), rxm->tag, rxm->data, rxm->pkt_flags,
			   rxm->msg_len);
	return true;
}

void rdmx_rxm_drop_ux(struct rdmx_ep *ep, struct rdmx_rxm *rxm)
{
	if (!rxm->ux)
		return;
	rdmx_match_unexp_remove(rdmx_recv_queue(ep, rxm->pkt_flags), rxm->ux);
	rdmx_recv_ux_free(ep, rxm->ux);
	rxm->ux = NULL;
}

/* All bytes arrived: completes the receive, or leaves a whole unexpected message. */
static void rdmx_rxm_finish(struct rdmx_ep *ep, struct rdmx_rxm *rxm)
{
	struct rdmx_rxe *rxe = rxm->rxe;

	if (rxm->discard) {
		rdmx_rxm_drop_ux(ep, rxm);
	} else if (!rxe) {
		/* Still unmatched: the entry now holds a whole message. */
		rxm->ux->rxm = NULL;
		rxm->ux = NULL;
	} else {
		if (rxm->ux) {
			rdmx_copy_to_iov(rxe->iov, rxe->iov_cnt, rxm->ux->payload,
					 rxm->msg_len);
			rdmx_rxm_drop_ux(ep, rxm);
		}
		rxm->rxe = NULL;
		if (rxe->rma)
			rdmx_rma_complete(ep, rxe, rxm->msg_len, rdmx_peer_src(rxm->peer),
					  rxm->data, rxm->pkt_flags);
		else
			rdmx_recv_complete(ep, rxe, rxm->msg_len, rdmx_peer_src(rxm->peer),
					   rxm->tag, rxm->data, rxm->pkt_flags);
	}
	/* In the receive, or whole in the unexpected copy: delivered. */
	rdmx_dack_send(ep, rxm->peer, rxm->pkt_flags, rxm->msg_id, rxm->tx_id, 0);
	rdmx_rxm_free(ep, rxm);
}

/*
 * The region an RMA write lands in is gone: the writer hears so now,
 * and the rest of the message lands nowhere.
 */
static RDMX_COLD void rdmx_rxm_refuse(struct rdmx_ep *ep, struct rdmx_rxm *rxm, int err)
{
	rdmx_dack_send(ep, rxm->peer, rxm->pkt_flags, rxm->msg_id, rxm->tx_id, err);
	rxm->pkt_flags &= ~RDMX_PKT_DACK_REQ;
	rdmx_rma_fail(ep, rxm->rxe, err);
	rxm->rxe = NULL;
	rxm->discard = true;
}

void rdmx_rxm_place(struct rdmx_ep *ep, struct rdmx_rxm *rxm, size_t off,
		    const void *buf, size_t len)
{
	size_t added;

	if (rdmx_cover_add(&rxm->cover, off, len, &ep->budget, &added)) {
		/*
		 * Holes beyond what the budget can track: the segment is
		 * dropped uncounted, so the message waits (it may not complete
		 * early). Callers go on using rxm, so it is not ended here.
		 */
		rdmx_budget_refused(&ep->budget, "segment leaving a hole", len);
		return;
	}
	if (rxm->rxe && rxm->rxe->rma && !rdmx_rma_live(ep, rxm->rxe, off, len))
		rdmx_rxm_refuse(ep, rxm, FI_EACCES);
	if (rxm->ux)
		memcpy(rxm->ux->payload + off, buf, len);
	else if (rxm->rxe && off < rxm->end)
		rdmx_copy_to_iov_at(rxm->rxe->iov, rxm->rxe->iov_cnt, off, buf,
				    RDMX_MIN(len, rxm->end - off));
	rxm->got += added;
	/* A medium message's segments all come, whatever the receive takes. */
	if (rxm->cover.prefix >= (rxm->type == RDMX_PKT_MEDIUM ? rxm->msg_len : rxm->end))
		rdmx_rxm_finish(ep, rxm);
}

void rdmx_rxm_abort(struct rdmx_ep *ep, struct rdmx_rxm *rxm, int err, const char *why)
{
	RDMX_WARN_WIRE(FI_LOG_EP_DATA, "%zu-byte message from fi_addr %lu lost: %s\n",
		       rxm->msg_len, (unsigned long) rxm->peer->addr, why);
	rdmx_rxm_drop_ux(ep, rxm);
	if (rxm->rxe && rxm->rxe->rma)
		rdmx_rma_fail(ep, rxm->rxe, err);
	else if (rxm->rxe)
		rdmx_recv_fail(ep, rxm->rxe, err, why);
	rxm->rxe = NULL;
	rdmx_rxm_free(ep, rxm);
}

void rdmx_rxm_free(struct rdmx_ep *ep, struct rdmx_rxm *rxm)
{
	rdmx_dlist_remove(&rxm->link);
	rxm->dead = true;
	if (rxm->cts.busy || rxm->reading)
		return;
	ep->rxms[rxm->id] = NULL;
	rdmx_rxm_release(ep, rxm);
}

bool rdmx_rxm_cts_out(const struct rdmx_ep *ep)
{
	for (size_t i = 0; i < ep->rxm_cap; i++) {
		if (ep->rxms[i] && ep->rxms[i]->cts.busy)
			return true;
	}
	return false;
}

void rdmx_rxm_drain(struct rdmx_ep *ep)
{
	for (size_t i = 0; i < ep->rxm_cap; i++) {
		struct rdmx_rxm *rxm = ep->rxms[i];

		if (!rxm)
			continue;
		rdmx_rxm_drop_ux(ep, rxm);
		if (rxm->rxe)
			rdmx_recv_release(ep, rxm->rxe);
		rdmx_rxm_release(ep, rxm);
	}
	free(ep->rxms);
	ep->rxms = NULL;
	ep->rxm_cap = 0;
}
