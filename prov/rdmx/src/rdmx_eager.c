/*
 * rdmx: the eager protocol. A message that fits one packet travels as an
 * RDMX_PKT_EAGER header followed by its payload. On arrival it is matched
 * against posted receives, or copied out of the device buffer onto the
 * unexpected queue so the buffer can be posted again at once.
 */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_av.h"
#include "rdmx_cq.h"
#include "rdmx_domain.h"
#include "rdmx_ep.h"
#include "rdmx_rnr.h"

static struct rdmx_match_queue *rdmx_eager_queue(struct rdmx_ep *ep, bool tagged)
{
	return tagged ? &ep->tag_q : &ep->msg_q;
}

/* The completion entry of a send. */
static struct rdmx_cq_entry rdmx_eager_entry(const struct rdmx_txe *txe)
{
	return (struct rdmx_cq_entry) {
		.op_context = txe->context,
		.flags = txe->cq_flags,
		.len = txe->len,
		.tag = txe->tag,
		.src = FI_ADDR_NOTAVAIL,
	};
}

/* Writes the successful completion of a send. */
static void rdmx_eager_complete(struct rdmx_ep *ep, const struct rdmx_txe *txe)
{
	struct rdmx_cq_entry entry = rdmx_eager_entry(txe);

	rdmx_cq_write(ep->tx_cq, &entry);
}

/* Takes a send entry, progressing once to free some if none is left. */
static struct rdmx_txe *rdmx_eager_txe_alloc(struct rdmx_ep *ep)
{
	struct rdmx_txe *txe = rdmx_pool_alloc(&ep->txe_pool);

	if (!txe) {
		rdmx_ep_progress(ep);
		txe = rdmx_pool_alloc(&ep->txe_pool);
	}
	return txe;
}

static ssize_t rdmx_eager_send_locked(struct rdmx_ep *ep,
				      const struct rdmx_send_req *req)
{
	size_t len = rdmx_iov_len(req->iov, req->iov_cnt);
	/*
	 * A small message is copied and completes at once (inject complete)
	 * unless the application asked for more: then its completion waits
	 * for the receiver's acknowledgement (transmit and delivery complete:
	 * our receiver acknowledges once it matched or queued the message).
	 */
	bool early = req->inject_op || (len <= ep->inject_size &&
		!(req->flags & (FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)));
	bool copy = early || (req->flags & FI_INJECT);
	struct rdmx_peer *peer;
	struct rdmx_txe *txe;
	uint32_t pkt_flags = 0;
	int ret;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!(ep->caps & FI_SEND)) {
		RDMX_WARN(FI_LOG_EP_DATA, "send on an endpoint without FI_SEND\n");
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
	peer = rdmx_ep_peer(ep, req->dest);
	if (!peer) {
		RDMX_WARN(FI_LOG_EP_DATA, "send to unknown fi_addr %lu\n",
			  (unsigned long) req->dest);
		return -FI_EINVAL;
	}
	txe = rdmx_rnr_blocked(peer) ? NULL : rdmx_eager_txe_alloc(ep);
	if (!txe) {
		ep->stats.eagain++;
		rdmx_ep_progress(ep);
		return -FI_EAGAIN;
	}

	if (req->flags & FI_TAGGED)
		pkt_flags |= RDMX_PKT_TAGGED;
	if (req->flags & FI_REMOTE_CQ_DATA)
		pkt_flags |= RDMX_PKT_CQ_DATA;
	rdmx_wire_eager_encode(&txe->hdr, pkt_flags, peer->next_msg_id,
			       req->tag, req->data);
	txe->context = req->context;
	txe->cq_flags = FI_SEND | ((req->flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
	txe->completion = !req->inject_op &&
			  (!ep->tx_selective || (req->flags & FI_COMPLETION));
	txe->early = early;
	txe->len = len;
	txe->tag = req->tag;
	txe->addr = req->dest;
	txe->peer_gen = peer->gen;
	txe->rnr = 0;
	txe->iov[0].iov_base = &txe->hdr;
	txe->iov[0].iov_len = sizeof(txe->hdr);
	if (copy) {
		rdmx_copy_from_iov(txe->inject, req->iov, req->iov_cnt);
		txe->iov[1].iov_base = txe->inject;
		txe->iov[1].iov_len = len;
		txe->iov_cnt = 2;
	} else {
		/* iov may be NULL when iov_cnt is 0. */
		if (req->iov_cnt)
			memcpy(&txe->iov[1], req->iov, req->iov_cnt * sizeof(*req->iov));
		txe->iov_cnt = 1 + req->iov_cnt;
	}

	ret = rdmx_eager_post(ep, peer, txe, req->flags & FI_MORE);
	if (ret) {
		rdmx_pool_release(&ep->txe_pool, txe);
		ep->stats.eagain += ret == -FI_EAGAIN;
		return ret;
	}
	peer->next_msg_id++;
	if (early && txe->completion) {
		txe->completion = false;
		rdmx_eager_complete(ep, txe);
	}
	return 0;
}

int rdmx_eager_post(struct rdmx_ep *ep, struct rdmx_peer *peer,
		    struct rdmx_txe *txe, bool more)
{
	unsigned flags = (more ? RDMX_DEV_SEND_MORE : 0) |
			 (txe->early ? 0 : RDMX_DEV_SEND_AWAITED);
	int ret = ep->dev->ops->post_send(ep->dev, peer->ah, txe->iov, txe->iov_cnt,
					  (uintptr_t) txe, flags);

	if (ret == -FI_EAGAIN)
		rdmx_ep_progress(ep);
	return ret;
}

ssize_t rdmx_eager_send(struct rdmx_ep *ep, const struct rdmx_send_req *req)
{
	ssize_t ret;

	rdmx_lock_acquire(&ep->domain->lock);
	ret = rdmx_eager_send_locked(ep, req);
	rdmx_lock_release(&ep->domain->lock);
	return ret;
}

void rdmx_eager_fail(struct rdmx_ep *ep, struct rdmx_txe *txe, int err,
		     const char *why)
{
	struct rdmx_cq_entry entry = rdmx_eager_entry(txe);

	ep->stats.tx_errors++;
	RDMX_WARN(FI_LOG_EP_DATA, "send to fi_addr %lu failed: %s\n",
		  (unsigned long) txe->addr, why);
	/* A send that completed at injection has no entry left to fail. */
	if (!txe->early)
		rdmx_cq_write_err(ep->tx_cq, &entry, err, 0,
				  "rdmx: send to fi_addr %lu failed: %s",
				  (unsigned long) txe->addr, why);
	rdmx_pool_release(&ep->txe_pool, txe);
}

void rdmx_eager_send_done(struct rdmx_ep *ep, struct rdmx_txe *txe,
			  enum rdmx_dev_status status)
{
	struct rdmx_peer *peer = rdmx_ep_peer_find(ep, txe->addr);

	/* The address left the AV since: a resend would reach its new owner. */
	if (peer && peer->gen != txe->peer_gen)
		peer = NULL;
	if (status == RDMX_DEV_RNR) {
		if (peer)
			rdmx_rnr_refused(ep, peer, txe);
		else
			rdmx_eager_fail(ep, txe, FI_ECANCELED, "the peer left the AV");
		return;
	}
	if (status != RDMX_DEV_OK) {
		rdmx_eager_fail(ep, txe, rdmx_dev_status_errno(status),
				rdmx_dev_status_str(status));
		return;
	}
	if (peer)
		rdmx_rnr_delivered(peer);
	if (txe->completion)
		rdmx_eager_complete(ep, txe);
	rdmx_pool_release(&ep->txe_pool, txe);
}

struct rdmx_cq_entry rdmx_eager_rx_entry(void *context, size_t len, fi_addr_t src,
					 uint64_t tag, uint64_t data, uint32_t pkt_flags)
{
	struct rdmx_cq_entry entry = {
		.op_context = context,
		.flags = FI_RECV | ((pkt_flags & RDMX_PKT_TAGGED) ? FI_TAGGED : FI_MSG),
		.len = len,
		.tag = tag,
		.src = src,
	};

	if (pkt_flags & RDMX_PKT_CQ_DATA) {
		entry.flags |= FI_REMOTE_CQ_DATA;
		entry.data = data;
	}
	return entry;
}

void rdmx_eager_rx_write(struct rdmx_ep *ep, uint64_t op_flags,
			 const struct rdmx_cq_entry *entry)
{
	if (!ep->rx_selective || (op_flags & FI_COMPLETION))
		rdmx_cq_write(ep->rx_cq, entry);
}

/* Copies a message into a posted receive and completes it. */
static void rdmx_eager_deliver(struct rdmx_ep *ep, struct rdmx_rxe *rxe,
			       const void *payload, size_t len, fi_addr_t src,
			       uint64_t tag, uint64_t data, uint32_t pkt_flags)
{
	size_t cap = rdmx_iov_len(rxe->iov, rxe->iov_cnt);
	size_t copied = rdmx_copy_to_iov(rxe->iov, rxe->iov_cnt, payload, len);
	struct rdmx_cq_entry entry = rdmx_eager_rx_entry(rxe->context, copied, src, tag,
							 data, pkt_flags);

	entry.buf = rxe->iov_cnt ? rxe->iov[0].iov_base : NULL;
	if (len > cap)
		rdmx_cq_write_err(ep->rx_cq, &entry, FI_ETRUNC, len - cap,
				  "rdmx: %zu-byte message truncated to a %zu-byte buffer",
				  len, cap);
	else
		rdmx_eager_rx_write(ep, rxe->flags, &entry);
	rdmx_pool_release(&ep->rxe_pool, rxe);
}

/* Queues an unexpected message: copied while under the memory bound,
 * else left in its packet buffer (returns true: the buffer is kept). */
static bool rdmx_eager_unexpected(struct rdmx_ep *ep, struct rdmx_match_queue *q,
				  const struct rdmx_pkt *pkt, fi_addr_t src,
				  uint64_t tag, size_t rx_buf)
{
	struct rdmx_unexp *ux = NULL;
	bool keep;

	/* The entry counts too: empty messages must not be free to queue. */
	size_t cost = sizeof(*ux) + pkt->payload_len;

	if (ep->unexp_bytes + cost <= g_rdmx_params.unexp_max)
		ux = malloc(cost);
	/*
	 * Past the bound the buffer itself waits for a receive; when every
	 * buffer waits, the device refuses packets (RNR) and senders back off.
	 */
	keep = !ux;
	if (keep) {
		ux = &ep->held[rx_buf];
		ux->payload = pkt->payload;
		ux->rx_buf = rx_buf;
	} else {
		if (pkt->payload_len)
			memcpy(ux + 1, pkt->payload, pkt->payload_len);
		ux->payload = (const uint8_t *) (ux + 1);
		ux->rx_buf = RDMX_UNEXP_COPIED;
		ep->unexp_bytes += cost;
	}
	ux->addr = src;
	ux->tag = tag;
	ux->data = pkt->data;
	ux->pkt_flags = pkt->flags;
	ux->len = pkt->payload_len;
	rdmx_dlist_insert_tail(&q->unexp, &ux->link);
	ep->stats.rx_unexpected++;
	return keep;
}

void rdmx_eager_unexp_release(struct rdmx_ep *ep, struct rdmx_unexp *ux)
{
	if (ux->rx_buf != RDMX_UNEXP_COPIED) {
		rdmx_ep_repost(ep, ux->rx_buf);
		return;
	}
	ep->unexp_bytes -= sizeof(*ux) + ux->len;
	free(ux);
}

bool rdmx_eager_handle(struct rdmx_ep *ep, const struct rdmx_pkt *pkt,
		       fi_addr_t src, size_t rx_buf)
{
	bool tagged = pkt->flags & RDMX_PKT_TAGGED;
	struct rdmx_match_queue *q = rdmx_eager_queue(ep, tagged);
	uint64_t tag = tagged ? pkt->tag : 0;
	struct rdmx_rxe *rxe;

	if (!ep->rx_cq) {
		ep->stats.rx_no_recv++;
		return false;
	}
	rxe = rdmx_match_posted(q, src, tag);
	if (!rxe)
		return rdmx_eager_unexpected(ep, q, pkt, src, tag, rx_buf);
	rdmx_eager_deliver(ep, rxe, pkt->payload, pkt->payload_len, src, tag,
			   pkt->data, pkt->flags);
	return false;
}

struct rdmx_rxe *rdmx_eager_rxe_new(struct rdmx_ep *ep, const struct rdmx_recv_req *req,
				   fi_addr_t src)
{
	bool tagged = req->flags & FI_TAGGED;
	struct rdmx_rxe *rxe = rdmx_pool_alloc(&ep->rxe_pool);

	if (!rxe)
		return NULL;
	rxe->context = req->context;
	rxe->flags = req->flags;
	rxe->addr = src;
	rxe->tag = tagged ? req->tag : 0;
	rxe->ignore = tagged ? req->ignore : 0;
	if (req->iov_cnt)
		memcpy(rxe->iov, req->iov, req->iov_cnt * sizeof(*req->iov));
	rxe->iov_cnt = req->iov_cnt;
	return rxe;
}

void rdmx_eager_recv_unexp(struct rdmx_ep *ep, struct rdmx_rxe *rxe,
			   struct rdmx_unexp *ux)
{
	rdmx_eager_deliver(ep, rxe, ux->payload, ux->len, ux->addr, ux->tag,
			   ux->data, ux->pkt_flags);
	rdmx_eager_unexp_release(ep, ux);
}

static ssize_t rdmx_eager_recv_locked(struct rdmx_ep *ep,
				      const struct rdmx_recv_req *req)
{
	struct rdmx_match_queue *q = rdmx_eager_queue(ep, req->flags & FI_TAGGED);
	fi_addr_t src = (ep->caps & FI_DIRECTED_RECV) ? req->src : FI_ADDR_UNSPEC;
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
	if (src != FI_ADDR_UNSPEC && !rdmx_av_addr(ep->av, src)) {
		RDMX_WARN(FI_LOG_EP_DATA, "recv from unknown fi_addr %lu\n",
			  (unsigned long) src);
		return -FI_EINVAL;
	}
	if (req->flags & (FI_PEEK | FI_CLAIM | FI_DISCARD))
		return rdmx_probe(ep, req, src);
	rxe = rdmx_eager_rxe_new(ep, req, src);
	if (!rxe)
		return -FI_EAGAIN;
	ux = rdmx_match_unexp(q, src, rxe->tag, rxe->ignore);
	if (ux)
		rdmx_eager_recv_unexp(ep, rxe, ux);
	else
		rdmx_dlist_insert_tail(&q->posted, &rxe->link);
	return 0;
}

ssize_t rdmx_eager_recv(struct rdmx_ep *ep, const struct rdmx_recv_req *req)
{
	ssize_t ret;

	rdmx_lock_acquire(&ep->domain->lock);
	ret = rdmx_eager_recv_locked(ep, req);
	rdmx_lock_release(&ep->domain->lock);
	return ret;
}

int rdmx_eager_cancel(struct rdmx_ep *ep, void *context)
{
	struct rdmx_rxe *rxe;
	struct rdmx_cq_entry entry = { .src = FI_ADDR_NOTAVAIL };

	rxe = rdmx_match_cancel(&ep->tag_q, context);
	if (!rxe)
		rxe = rdmx_match_cancel(&ep->msg_q, context);
	if (!rxe)
		return -FI_ENOENT;
	entry.op_context = rxe->context;
	entry.flags = FI_RECV | ((rxe->flags & FI_TAGGED) ? FI_TAGGED : FI_MSG);
	entry.tag = rxe->tag;
	rdmx_cq_write_err(ep->rx_cq, &entry, FI_ECANCELED, 0,
			  "rdmx: receive canceled");
	rdmx_pool_release(&ep->rxe_pool, rxe);
	return 0;
}

/* Frees the copied messages of a list; held buffers die with the endpoint. */
static void rdmx_eager_drain_unexp(struct rdmx_dlist *list)
{
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(list))) {
		struct rdmx_unexp *ux = rdmx_container_of(it, struct rdmx_unexp, link);

		if (ux->rx_buf == RDMX_UNEXP_COPIED)
			free(ux);
	}
}

static void rdmx_eager_drain_queue(struct rdmx_ep *ep, struct rdmx_match_queue *q)
{
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(&q->posted)))
		rdmx_pool_release(&ep->rxe_pool,
				  rdmx_container_of(it, struct rdmx_rxe, link));
	rdmx_eager_drain_unexp(&q->unexp);
}

void rdmx_eager_drain(struct rdmx_ep *ep)
{
	rdmx_eager_drain_queue(ep, &ep->msg_q);
	rdmx_eager_drain_queue(ep, &ep->tag_q);
	rdmx_eager_drain_unexp(&ep->claimed);
}
