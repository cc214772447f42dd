/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: posting sends, the top of the send side. Picks the protocol by
 * size (eager, medium, long; see rdmx_tx.h), fills the send entry and
 * puts its first packet on the wire, or leaves it with its peer's
 * handshake (rdmx_conn.h); takes what the device says of each packet,
 * and ends a peer's sends with its session. A send entry's life after
 * its first packet is rdmx_txe.c's.
 */
#include "rdmx.h"
#include "rdmx_conn.h"
#include "rdmx_comp.h"
#include "rdmx_dack.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_rx.h"
#include "rdmx_tx.h"

/* Fills the first packet of a send: its eager packet, first segment or RTS. */
static void rdmx_tx_first(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	struct rdmx_pke *pke = &txe->pke;

	switch (txe->proto) {
	case RDMX_PROTO_EAGER:
		rdmx_wire_eager_encode(&pke->hdr.eager, txe->pkt_flags, txe->msg_id,
				       txe->tag, txe->data);
		rdmx_tx_name(txe, &pke->hdr.eager);
		rdmx_tx_pke_iov(pke, rdmx_tx_rma_hdr(txe, pke, sizeof(pke->hdr.eager)),
				txe->iov, txe->iov_cnt, 0, txe->len);
		txe->next = txe->len;
		break;
	case RDMX_PROTO_MEDIUM:
		rdmx_tx_segment(txe, pke, 1);
		break;
	case RDMX_PROTO_LONG:
		rdmx_long_rts(ep, txe, pke);
		break;
	}
}

/* The sends under way to peer. */
static bool rdmx_tx_of_peer(const struct rdmx_txe *txe, const struct rdmx_peer *peer)
{
	return txe->in_use && txe->peer == peer && !txe->deferred;
}

/*
 * The device found peer unreachable: the sends whose packets are all
 * acknowledged and that wait only for a DACK will not get it. They fail
 * as the packets do (nothing of them is in flight for the device to
 * fail), and the peer, gone, is not told (no VOID).
 */
static void rdmx_tx_dack_unreachable(struct rdmx_ep *ep, struct rdmx_peer *peer,
				     int err, const char *why)
{
	for (size_t i = 0; peer->dack_awaited && i < ep->txe_pool.count; i++) {
		struct rdmx_txe *txe = rdmx_pool_at(&ep->txe_pool, i);

		/* A read whose answer is landing ends with that answer's message. */
		if (!rdmx_tx_of_peer(txe, peer) || txe->level != RDMX_TX_DELIVERY_AWAITED ||
		    txe->err || txe->read_busy)
			continue;
		txe->err = err;
		txe->why = why;
		txe->orphan = true;
		if (!txe->pkts_out)
			rdmx_tx_advance(ep, txe);
	}
}

/* rdmx_tx_done of a packet that failed, or whose peer was let go. */
static RDMX_COLD void rdmx_tx_done_else(struct rdmx_ep *ep, struct rdmx_pke *pke,
					enum rdmx_dev_status status)
{
	if (!pke->peer) {
		/* Its peer was let go (rdmx_tx_peer_forget): nothing waits for it. */
		rdmx_tx_pke_end(ep, pke);
		return;
	}
	if (status == RDMX_DEV_RNR) {
		rdmx_rnr_refused(ep, pke->peer, pke);
		return;
	}
	if (status == RDMX_DEV_UNREACH)
		rdmx_tx_dack_unreachable(ep, pke->peer, rdmx_dev_status_errno(status),
					 rdmx_dev_status_str(status));
	rdmx_tx_fail(ep, pke, rdmx_dev_status_errno(status), rdmx_dev_status_str(status));
}

void rdmx_tx_done(struct rdmx_ep *ep, struct rdmx_pke *pke,
		  enum rdmx_dev_status status)
{
	if (status != RDMX_DEV_OK || !pke->peer) {
		rdmx_tx_done_else(ep, pke, status);
		return;
	}
	rdmx_rnr_delivered(pke->peer);
	rdmx_tx_pke_end(ep, pke);
}

/* Ends the packets to peer on list (linked by their link) unsent. */
static void rdmx_tx_drop_queued(struct rdmx_ep *ep, struct rdmx_dlist *list,
				const struct rdmx_peer *peer)
{
	struct rdmx_dlist *it, *next;

	for (it = list->next; it != list; it = next) {
		struct rdmx_pke *pke = rdmx_container_of(it, struct rdmx_pke, link);

		next = it->next;
		if (pke->peer != peer)
			continue;
		rdmx_dlist_remove(it);
		rdmx_tx_pke_end(ep, pke);
	}
}

void rdmx_tx_peer_forget(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	struct rdmx_dlist *it;

	rdmx_dack_forget(peer);
	rdmx_tx_drop_queued(ep, &ep->ctrl_pending, peer);
	rdmx_tx_drop_queued(ep, &peer->retry_q, peer);
	for (size_t i = 0; i < ep->pke_pool.count; i++) {
		struct rdmx_pke *pke = rdmx_pool_at(&ep->pke_pool, i);

		if (pke->busy && pke->peer == peer)
			pke->peer = NULL;
	}
	rdmx_dlist_foreach(&ep->pke_heaped, it) {
		struct rdmx_pke *pke = rdmx_container_of(it, struct rdmx_pke, heap_link);

		if (pke->peer == peer)
			pke->peer = NULL;
	}
}

void rdmx_tx_progress(struct rdmx_ep *ep)
{
	struct rdmx_dlist txes;
	struct rdmx_dlist *it;

	if (!rdmx_tx_ctrl_progress(ep))
		return;
	if (rdmx_dlist_empty(&ep->tx_pending))
		return;
	/* Each send goes back to the tail if it still has to wait. */
	rdmx_dlist_init(&txes);
	rdmx_dlist_splice_tail(&txes, &ep->tx_pending);
	while ((it = rdmx_dlist_pop_front(&txes))) {
		struct rdmx_txe *txe = rdmx_container_of(it, struct rdmx_txe, link);

		txe->pending = false;
		/* It may end here: an answer to a read whose region was closed. */
		rdmx_tx_advance(ep, txe);
	}
}


void rdmx_tx_peer_orphan(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	for (size_t i = 0; i < ep->txe_pool.count; i++) {
		struct rdmx_txe *txe = rdmx_pool_at(&ep->txe_pool, i);

		if (rdmx_tx_of_peer(txe, peer))
			txe->orphan = true;
	}
}

void rdmx_tx_peer_reset(struct rdmx_ep *ep, struct rdmx_peer *peer, int err,
			const char *why, bool spare_sent)
{
	struct rdmx_dlist *it, *next;

	for (size_t i = 0; i < ep->txe_pool.count; i++) {
		struct rdmx_txe *txe = rdmx_pool_at(&ep->txe_pool, i);

		if (!rdmx_tx_of_peer(txe, peer))
			continue;
		txe->orphan = true;
		/*
		 * Wholly at the device: its completions say if it was
		 * delivered; unless it waits for a DACK, which a closed peer
		 * sent before its CLOSE if it ever would.
		 */
		if (spare_sent && txe->level != RDMX_TX_DELIVERY_AWAITED &&
		    txe->pkts_out && txe->cleared && txe->next >= txe->end)
			continue;
		if (!txe->err) {
			txe->err = err;
			txe->why = why;
		}
	}
	/* Its packets waiting here would reach the peer's next session. */
	rdmx_dack_forget(peer);
	rdmx_rnr_flush(ep, peer, err);
	peer->backoff_until = 0;
	peer->backoff_exp = 0;
	for (it = ep->ctrl_pending.next; it != &ep->ctrl_pending; it = next) {
		struct rdmx_pke *pke = rdmx_container_of(it, struct rdmx_pke, link);

		next = it->next;
		if (pke->peer != peer || pke->hdr.hs.base.type == RDMX_PKT_HS)
			continue;
		rdmx_dlist_remove(it);
		rdmx_tx_fail(ep, pke, err, why);
	}
	/* The others end when the device gives their packets back. */
	for (size_t i = 0; i < ep->txe_pool.count; i++) {
		struct rdmx_txe *txe = rdmx_pool_at(&ep->txe_pool, i);

		if (rdmx_tx_of_peer(txe, peer) && !txe->pkts_out)
			rdmx_tx_advance(ep, txe);
	}
}

/*
 * Chooses the protocol of a send and its segment size by the packets its
 * peer takes (known once connected: a send that waited for the
 * handshake is planned again when it starts).
 */
static void rdmx_send_plan(const struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	size_t pkt = txe->peer->pkt_max -
		     ((txe->pkt_flags & RDMX_PKT_RMA) ? sizeof(struct rdmx_wire_rma) : 0) -
		     ((txe->pkt_flags & RDMX_PKT_ATOMIC) ? sizeof(struct rdmx_wire_atomic) : 0);

	if (txe->len <= pkt - sizeof(struct rdmx_wire_eager))
		txe->proto = RDMX_PROTO_EAGER;
	else
		txe->proto = txe->len <= ep->medium_max ? RDMX_PROTO_MEDIUM :
			     RDMX_PROTO_LONG;
	txe->cleared = txe->proto != RDMX_PROTO_LONG;
	txe->limit = txe->cleared ? txe->len : 0;
	txe->seg_size = pkt - (txe->proto == RDMX_PROTO_MEDIUM ?
			       sizeof(struct rdmx_wire_medium) :
			       sizeof(struct rdmx_wire_data));
}

/* The capability an operation of req needs; 0 for an answer to a read. */
static uint64_t rdmx_send_cap(const struct rdmx_send_req *req)
{
	switch (req->rma_op) {
	case RDMX_RMA_NONE:
		return FI_SEND;
	case RDMX_RMA_WRITE:
		return FI_RMA | FI_WRITE;
	case RDMX_RMA_READ:
		return FI_RMA | FI_READ;
	case RDMX_RMA_ATOMIC:
		return FI_ATOMIC | (req->result_cnt ? FI_READ : FI_WRITE);
	default:
		return 0;
	}
}

/* Checks a send request; 0 or -FI_E*. */
static int rdmx_send_check(struct rdmx_ep *ep, const struct rdmx_send_req *req,
			   size_t len, bool copy)
{
	uint64_t cap = rdmx_send_cap(req);

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if ((ep->caps & cap) != cap) {
		RDMX_WARN(FI_LOG_EP_DATA, "%s on an endpoint without %s%s\n",
			  cap == FI_SEND ? "send" : (cap & FI_ATOMIC) ? "atomic" : "RMA",
			  cap == FI_SEND ? "FI_SEND" : (cap & FI_ATOMIC) ? "FI_ATOMIC" : "FI_RMA",
			  cap == FI_SEND ? "" : (cap & FI_READ) ? " and FI_READ" : " and FI_WRITE");
		return -FI_EOPNOTSUPP;
	}
	if (req->iov_cnt > RDMX_IOV_LIMIT) {
		RDMX_WARN(FI_LOG_EP_DATA, "send iov count %zu > %d\n",
			  req->iov_cnt, RDMX_IOV_LIMIT);
		return -FI_EINVAL;
	}
	if (len > ep->max_msg_size || (copy && len > ep->inject_size)) {
		RDMX_WARN(FI_LOG_EP_DATA, "message of %zu bytes exceeds %zu\n",
			  len, copy ? ep->inject_size : ep->max_msg_size);
		return -FI_EMSGSIZE;
	}
	return 0;
}

/*
 * The completion level of a len-byte send with flags: the strongest one
 * asked for; with none, transmit complete. Only a copied message can
 * complete at posting (FI_INJECT_COMPLETE; fi_inject has no completion).
 */
static enum rdmx_tx_level rdmx_send_level(const struct rdmx_ep *ep,
					  const struct rdmx_send_req *req, size_t len)
{
	/* RMA waits for the target's word, which alone tells of a refusal. */
	if (req->rma_op == RDMX_RMA_WRITE || req->rma_op == RDMX_RMA_READ ||
	    req->rma_op == RDMX_RMA_ATOMIC)
		return RDMX_TX_DELIVERY_ASKED;
	if (req->inject_op)
		return RDMX_TX_INJECT;
	if (req->flags & FI_DELIVERY_COMPLETE)
		return RDMX_TX_DELIVERY_ASKED;
	if (req->flags & FI_TRANSMIT_COMPLETE)
		return RDMX_TX_TRANSMIT;
	return (req->flags & FI_INJECT_COMPLETE) && len <= ep->inject_size ?
	       RDMX_TX_INJECT : RDMX_TX_TRANSMIT;
}

/*
 * The RMA part of a send entry: an RMA write carries the target's key in
 * the tag field and its address after the header; a read asks for len
 * bytes with a message of none, and its iov is where they will land; an
 * answer to a peer's read names the read (its send id in the tag field,
 * its request's msg_id in the data field).
 */
static void rdmx_send_fill_rma(struct rdmx_txe *txe, const struct rdmx_send_req *req)
{
	txe->rma_op = req->rma_op;
	txe->rma_key = req->rma_key;
	txe->rma_addr = req->rma_addr;
	txe->read_len = 0;
	txe->read_next = 0;
	txe->read_got = 0;
	txe->read_busy = 0;
	txe->read_fail = 0;
	txe->ended = req->ended;
	txe->owner = req->owner;
	txe->silent = req->inject_op;
	switch (req->rma_op) {
	case RDMX_RMA_NONE:
		return;
	case RDMX_RMA_WRITE:
		txe->cq_flags = FI_RMA | FI_WRITE;
		txe->pkt_flags |= RDMX_PKT_RMA;
		txe->tag = req->rma_key;
		return;
	case RDMX_RMA_READ:
		txe->cq_flags = FI_RMA | FI_READ;
		txe->pkt_flags |= RDMX_PKT_RMA | RDMX_PKT_RMA_READ;
		txe->tag = req->rma_key;
		txe->read_len = txe->len;
		txe->len = 0;
		txe->end = 0;
		return;
	case RDMX_RMA_RESP:
		txe->pkt_flags = RDMX_PKT_RMA_RESP;
		return;
	case RDMX_RMA_ATOMIC:
		txe->cq_flags = FI_ATOMIC | (req->result_cnt ? FI_READ : FI_WRITE);
		txe->pkt_flags |= RDMX_PKT_RMA | RDMX_PKT_ATOMIC |
				  (req->result_cnt ? RDMX_PKT_RMA_READ : 0);
		txe->tag = req->rma_key;
		txe->atomic_op = req->atomic_op;
		txe->atomic_datatype = req->atomic_datatype;
		txe->atomic_count = req->atomic_count;
		txe->result_cnt = req->result_cnt;
		for (size_t i = 0; i < req->result_cnt; i++)
			txe->result[i] = req->result[i];
		txe->read_len = rdmx_iov_len(req->result, req->result_cnt);
		return;
	}
}

/*
 * Fills a new send entry from req. Its protocol is planned when it starts
 * (rdmx_tx_start), which is at once unless it waits for a handshake.
 */
static void rdmx_send_fill(struct rdmx_ep *ep, struct rdmx_txe *txe,
			   const struct rdmx_send_req *req, struct rdmx_peer *peer,
			   size_t len, enum rdmx_tx_level level, bool copy)
{
	txe->context = req->context;
	txe->cq_flags = FI_SEND | ((req->flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
	txe->completion = !req->inject_op && req->rma_op != RDMX_RMA_RESP &&
			  (!ep->tx_selective || (req->flags & FI_COMPLETION));
	txe->level = level;
	txe->in_use = true;
	txe->pending = false;
	txe->deferred = false;
	txe->orphan = false;
	txe->err = 0;
	txe->why = NULL;
	txe->len = len;
	txe->tag = req->tag;
	txe->data = req->data;
	txe->pkt_flags = ((req->flags & FI_TAGGED) ? RDMX_PKT_TAGGED : 0) |
			 ((req->flags & FI_REMOTE_CQ_DATA) ? RDMX_PKT_CQ_DATA : 0) |
			 (level == RDMX_TX_DELIVERY_ASKED ? RDMX_PKT_DACK_REQ : 0);
	txe->addr = req->dest;
	txe->peer = peer;
	txe->end = len;
	txe->pkts_out = 1;
	if (copy && len) {
		rdmx_copy_from_iov(txe->inject, req->iov, req->iov_cnt);
		txe->iov[0].iov_base = txe->inject;
		txe->iov[0].iov_len = len;
		txe->iov_cnt = 1;
	} else {
		/* Entry by entry: a memcpy call costs more for the one or two. */
		for (size_t i = 0; i < req->iov_cnt; i++)
			txe->iov[i] = req->iov[i];
		txe->iov_cnt = req->iov_cnt;
	}
	rdmx_send_fill_rma(txe, req);
	rdmx_tx_pke_init(&txe->pke, txe, peer, false);
}

/* Whether the send just counted in tx_run waits for its batch's last. */
static bool rdmx_send_batched(const struct rdmx_ep *ep)
{
	size_t batch = g_rdmx_params.tx_batch;

	return batch && ep->tx_run > batch && ep->tx_run % batch;
}

bool rdmx_send_more(struct rdmx_ep *ep, uint64_t flags)
{
	if (flags & FI_MORE) {
		ep->tx_more = true;
		return true;
	}
	ep->tx_run++;
	return rdmx_send_batched(ep);
}

bool rdmx_send_holding(const struct rdmx_ep *ep)
{
	return ep->tx_more || rdmx_send_batched(ep);
}

ssize_t rdmx_send(struct rdmx_ep *ep, const struct rdmx_send_req *req)
{
	size_t len = rdmx_iov_len(req->iov, req->iov_cnt);
	enum rdmx_tx_level level = rdmx_send_level(ep, req, len);
	bool early = level == RDMX_TX_INJECT;
	bool copy = early || (req->flags & FI_INJECT);
	struct rdmx_peer *peer;
	struct rdmx_txe *txe;
	int ret = rdmx_send_check(ep, req, len, copy);

	if (ret)
		return ret;
	peer = req->peer;
	ret = peer ? 0 : rdmx_peer_get(ep, req->dest, &peer);
	if (ret) {
		RDMX_WARN(FI_LOG_EP_DATA, "send to fi_addr %lu: %s\n",
			  (unsigned long) req->dest, ret == -FI_EINVAL ?
			  "not in the address vector" : fi_strerror(-ret));
		return ret;
	}
	txe = rdmx_rnr_blocked(peer) ? NULL : rdmx_pool_alloc(&ep->txe_pool);
	if (!txe)
		return -FI_EAGAIN;
	rdmx_send_fill(ep, txe, req, peer, len, level, copy);
	/* A stub keeps the send until its handshake is over (rdmx_conn.h). */
	ret = rdmx_conn_ready(ep, peer) ? rdmx_tx_start(ep, txe, rdmx_send_more(ep, req->flags)) :
					  rdmx_conn_defer(ep, peer, txe);
	if (ret) {
		/* Never posted: nothing ended for its owner to hear of. */
		txe->ended = NULL;
		rdmx_tx_release(ep, txe);
		return ret;
	}
	if (early) {
		struct rdmx_cq_entry entry = rdmx_tx_entry(txe);

		if (txe->completion)
			rdmx_comp_write(ep->tx_comp, &entry);
		else
			rdmx_comp_count(ep->tx_comp, &entry);
		txe->completion = false;
	}
	return 0;
}

int rdmx_tx_start(struct rdmx_ep *ep, struct rdmx_txe *txe, bool more)
{
	struct rdmx_peer *peer = txe->peer;
	int ret;

	/* The peer's features are read only for the level that needs them. */
	if (txe->level == RDMX_TX_DELIVERY_ASKED && rdmx_tx_level_refused(txe)) {
		RDMX_WARN(FI_LOG_EP_DATA, "%s to fi_addr %lu: the peer cannot %s\n",
			  txe->rma_op == RDMX_RMA_ATOMIC ? "atomic" : txe->rma_op ? "RMA" :
			  "FI_DELIVERY_COMPLETE send", (unsigned long) txe->addr,
			  txe->rma_op == RDMX_RMA_ATOMIC ? "take atomics" : txe->rma_op ?
			  "take RMA" : "acknowledge delivery");
		return -FI_EOPNOTSUPP;
	}
	txe->msg_id = peer->tx_msg_id;
	txe->next = 0;
	rdmx_send_plan(ep, txe);
	rdmx_tx_first(ep, txe);
	ret = rdmx_tx_post(&txe->pke, more || rdmx_tx_more(ep, txe));
	if (ret)
		return ret;
	peer->tx_msg_id++;
	if (txe->level == RDMX_TX_DELIVERY_ASKED) {
		txe->level = RDMX_TX_DELIVERY_AWAITED;
		peer->dack_awaited++;
	}
	if (txe->next < txe->limit)
		rdmx_tx_pump(ep, txe, more);
	return 0;
}
