/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: datagram endpoints, FI_EP_DGRAM (see rdmx_ud.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_ep.h"
#include "rdmx_rx.h"
#include "rdmx_tx.h"
#include "rdmx_ud.h"

/* Device completions handled per poll. */
#define RDMX_UD_BATCH	16

/* A send the device has: its header, and its bytes if copied. */
struct rdmx_ud_tx {
	void			*context;
	struct rdmx_ah		*ah;
	size_t			len;
	bool			completion;	/* an entry, not only a count */
	struct rdmx_wire_ud	hdr;
	uint8_t			inject[];	/* inject_size bytes */
};

/* A receive the application posted. */
struct rdmx_ud_rx {
	struct rdmx_dlist	link;		/* on rdmx_ud.posted */
	void			*context;
	uint64_t		flags;
	fi_addr_t		src;		/* FI_ADDR_UNSPEC: any sender */
	struct iovec		iov[RDMX_IOV_LIMIT];
	size_t			iov_cnt;
};

int rdmx_ud_alloc(struct rdmx_ep *ep, size_t max_msg)
{
	struct rdmx_dev *nic = ep->lanes.nic;
	int ret;

	ep->ud.max_msg = RDMX_MIN(nic->caps.mtu - sizeof(struct rdmx_wire_ud), max_msg);
	ep->max_msg_size = ep->ud.max_msg;
	ep->inject_size = RDMX_MIN(ep->inject_size, ep->ud.max_msg);
	ret = rdmx_pool_construct(&ep->txe_pool, sizeof(struct rdmx_ud_tx) + ep->inject_size,
				  ep->tx_size);
	if (ret)
		return ret;
	ret = rdmx_pool_construct(&ep->rxe_pool, sizeof(struct rdmx_ud_rx), ep->rx_size);
	if (ret)
		goto err_tx;
	ep->lanes.nic_rx = RDMX_MIN(g_rdmx_params.rx_bufs, nic->caps.rq_size);
	ret = rdmx_rxbufs_alloc(&ep->rxb, nic->caps.mtu, nic->caps.rx_headroom,
				ep->lanes.nic_rx);
	if (ret)
		goto err_rx;
	ep->ud.held = calloc(ep->rxb.cnt, sizeof(*ep->ud.held));
	ep->ud.held_cnt = 0;
	ep->ud.held_max = RDMX_MAX(ep->rxb.cnt - ep->rxb.cnt / 4, (size_t) 1);
	if (!ep->ud.held) {
		ret = -FI_ENOMEM;
		goto err_bufs;
	}
	rdmx_dlist_init(&ep->ud.posted);
	rdmx_dlist_init(&ep->ud.arrived);
	return 0;

err_bufs:
	rdmx_rxbufs_free(&ep->rxb);
err_rx:
	rdmx_pool_destruct(&ep->rxe_pool);
err_tx:
	rdmx_pool_destruct(&ep->txe_pool);
	return ret;
}

void rdmx_ud_free(struct rdmx_ep *ep)
{
	rdmx_pool_destruct(&ep->txe_pool);
	rdmx_pool_destruct(&ep->rxe_pool);
	rdmx_rxbufs_free(&ep->rxb);
	free(ep->ud.held);
	ep->ud.held = NULL;
}

ssize_t rdmx_ud_send(struct rdmx_ep *ep, const struct rdmx_send_req *req)
{
	struct rdmx_dev *nic = ep->lanes.nic;
	size_t len = rdmx_iov_len(req->iov, req->iov_cnt);
	bool copy = req->flags & FI_INJECT;
	struct iovec iov[1 + RDMX_IOV_LIMIT];
	const void *canon;
	struct rdmx_ud_tx *tx;
	size_t cnt = 1;
	int ret;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!(ep->caps & FI_SEND) || (req->flags & FI_TAGGED) || req->rma_op != RDMX_RMA_NONE)
		return -FI_EOPNOTSUPP;
	/* Nothing is delivered for sure on a datagram endpoint (fi_cq(3)). */
	if (req->flags & FI_DELIVERY_COMPLETE)
		return -FI_EBADFLAGS;
	if (req->iov_cnt > RDMX_IOV_LIMIT)
		return -FI_EINVAL;
	if (len > ep->ud.max_msg || (copy && len > ep->inject_size)) {
		RDMX_WARN(FI_LOG_EP_DATA, "datagram of %zu bytes exceeds %zu\n",
			  len, copy ? ep->inject_size : ep->ud.max_msg);
		return -FI_EMSGSIZE;
	}
	canon = rdmx_addrs_lookup(ep->addrs, req->dest);
	if (!canon) {
		RDMX_WARN(FI_LOG_EP_DATA, "send to fi_addr %lu, which the AV does not hold\n",
			  (unsigned long) req->dest);
		return -FI_EINVAL;
	}
	tx = rdmx_pool_alloc(&ep->txe_pool);
	if (!tx)
		return -FI_EAGAIN;
	ret = nic->ops->ah_create(nic, canon, &tx->ah);
	if (ret) {
		rdmx_pool_release(&ep->txe_pool, tx);
		return ret;
	}
	tx->context = req->context;
	tx->len = len;
	tx->completion = !req->inject_op &&
			 (!ep->tx_selective || (req->flags & FI_COMPLETION));
	rdmx_wire_ud_encode(&tx->hdr, req->flags & FI_REMOTE_CQ_DATA ? RDMX_UD_CQ_DATA : 0,
			    req->data);
	iov[0] = (struct iovec) { &tx->hdr, sizeof(tx->hdr) };
	if (copy) {
		iov[cnt++] = (struct iovec) { tx->inject,
					      rdmx_copy_from_iov(tx->inject, req->iov,
								 req->iov_cnt) };
	} else if (req->iov_cnt) {
		memcpy(iov + 1, req->iov, req->iov_cnt * sizeof(*iov));
		cnt += req->iov_cnt;
	}
	ret = nic->ops->post_send(nic, tx->ah, iov, cnt, (uintptr_t) tx,
				  req->flags & FI_MORE ? RDMX_DEV_SEND_MORE : 0);
	if (ret) {
		nic->ops->ah_destroy(nic, tx->ah);
		rdmx_pool_release(&ep->txe_pool, tx);
	}
	return ret;
}

/*
 * Whether the held datagram h is for rx. Its sender, unknown when it
 * came, may have been inserted into the AV since.
 */
static bool rdmx_ud_match(const struct rdmx_ep *ep, const struct rdmx_ud_rx *rx,
			  struct rdmx_ud_held *h)
{
	if (rx->src == FI_ADDR_UNSPEC)
		return true;
	if (h->src == FI_ADDR_NOTAVAIL)
		h->src = rdmx_addrs_reverse(ep->addrs, h->addr);
	return rx->src == h->src;
}

/* Takes h off the held list. */
static void rdmx_ud_unhold(struct rdmx_ep *ep, struct rdmx_ud_held *h)
{
	rdmx_dlist_remove(&h->link);
	ep->ud.held_cnt--;
}

/*
 * Hands the datagram held in receive buffer idx to rx, whose entry or
 * error entry it makes, and posts the buffer again.
 */
static void rdmx_ud_deliver(struct rdmx_ep *ep, struct rdmx_ud_rx *rx, size_t idx)
{
	const struct rdmx_ud_held *h = &ep->ud.held[idx];
	size_t cap = rdmx_iov_len(rx->iov, rx->iov_cnt);
	struct rdmx_cq_entry entry = {
		.op_context = rx->context,
		.flags = FI_RECV | FI_MSG,
		.len = RDMX_MIN(h->len, cap),
		.buf = rx->iov_cnt ? rx->iov[0].iov_base : NULL,
		.src = h->src,
	};

	if (h->flags & RDMX_UD_CQ_DATA) {
		entry.flags |= FI_REMOTE_CQ_DATA;
		entry.data = h->data;
	}
	rdmx_copy_to_iov(rx->iov, rx->iov_cnt,
			 rdmx_rxbufs_at(&ep->rxb, idx) + sizeof(struct rdmx_wire_ud), entry.len);
	if (h->len > cap)
		rdmx_comp_err(ep->rx_comp, &entry, FI_ETRUNC, h->len - cap,
			      "rdmx: %u-byte datagram truncated to a %zu-byte buffer",
			      h->len, cap);
	else if (!ep->rx_selective || (rx->flags & FI_COMPLETION))
		rdmx_comp_write(ep->rx_comp, &entry);
	else
		rdmx_comp_count(ep->rx_comp, &entry);
	rdmx_pool_release(&ep->rxe_pool, rx);
	rdmx_rxbufs_repost(&ep->rxb, &ep->lanes, idx);
}

ssize_t rdmx_ud_recv(struct rdmx_ep *ep, const struct rdmx_recv_req *req)
{
	struct rdmx_ud_rx *rx;
	struct rdmx_dlist *it;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!(ep->caps & FI_RECV) ||
	    (req->flags & (FI_TAGGED | FI_MULTI_RECV | FI_PEEK | FI_CLAIM | FI_DISCARD)))
		return -FI_EOPNOTSUPP;
	if (req->iov_cnt > RDMX_IOV_LIMIT)
		return -FI_EINVAL;
	rx = rdmx_pool_alloc(&ep->rxe_pool);
	if (!rx)
		return -FI_EAGAIN;
	rx->context = req->context;
	rx->flags = req->flags;
	rx->src = (ep->caps & FI_DIRECTED_RECV) ? req->src : FI_ADDR_UNSPEC;
	if (req->iov_cnt)
		memcpy(rx->iov, req->iov, req->iov_cnt * sizeof(*rx->iov));
	rx->iov_cnt = req->iov_cnt;
	rdmx_dlist_foreach(&ep->ud.arrived, it) {
		struct rdmx_ud_held *h = rdmx_container_of(it, struct rdmx_ud_held, link);

		if (rdmx_ud_match(ep, rx, h)) {
			rdmx_ud_unhold(ep, h);
			rdmx_ud_deliver(ep, rx, (size_t) (h - ep->ud.held));
			return 0;
		}
	}
	rdmx_dlist_insert_tail(&ep->ud.posted, &rx->link);
	return 0;
}

int rdmx_ud_cancel(struct rdmx_ep *ep, void *context)
{
	struct rdmx_dlist *it;

	rdmx_dlist_foreach(&ep->ud.posted, it) {
		struct rdmx_ud_rx *rx = rdmx_container_of(it, struct rdmx_ud_rx, link);
		struct rdmx_cq_entry entry = {
			.op_context = context,
			.flags = FI_RECV | FI_MSG,
			.src = FI_ADDR_NOTAVAIL,
		};

		if (rx->context != context)
			continue;
		rdmx_dlist_remove(&rx->link);
		rdmx_pool_release(&ep->rxe_pool, rx);
		rdmx_comp_outcome(ep->rx_comp, &entry, FI_ECANCELED);
		return 0;
	}
	return -FI_ENOENT;
}

/* A send the device finished: its entry, count or error entry. */
static void rdmx_ud_sent(struct rdmx_ep *ep, struct rdmx_ud_tx *tx, enum rdmx_dev_status status)
{
	struct rdmx_cq_entry entry = {
		.op_context = tx->context,
		.flags = FI_SEND | FI_MSG,
		.src = FI_ADDR_NOTAVAIL,
	};

	ep->lanes.nic->ops->ah_destroy(ep->lanes.nic, tx->ah);
	/*
	 * A reliable device's refusal or a peer it finds gone (efa's RNR,
	 * UNREACH) is a datagram lost, as any may be (fi_domain(3)).
	 */
	if (status != RDMX_DEV_OK && status != RDMX_DEV_RNR && status != RDMX_DEV_UNREACH) {
		ep->stats.tx_errors++;
		rdmx_comp_err(ep->tx_comp, &entry, rdmx_dev_status_errno(status), 0,
			      "rdmx: datagram not sent: %s", rdmx_dev_status_str(status));
	} else if (tx->completion) {
		rdmx_comp_write(ep->tx_comp, &entry);
	} else {
		rdmx_comp_count(ep->tx_comp, &entry);
	}
	rdmx_pool_release(&ep->txe_pool, tx);
}

/*
 * A datagram in receive buffer idx (completion cqe): to the oldest
 * receive that takes it, else held; malformed ones are dropped.
 */
static void rdmx_ud_arrived(struct rdmx_ep *ep, const struct rdmx_dev_cqe *cqe)
{
	size_t idx = (size_t) cqe->wr_id;
	uint8_t *buf = rdmx_rxbufs_at(&ep->rxb, idx);
	struct rdmx_ud_held *h = &ep->ud.held[idx];
	struct rdmx_dlist *it;

	if (cqe->status == RDMX_DEV_OK && cqe->data && cqe->len > RDMX_DEV_RX_PREFIX)
		memcpy(buf + RDMX_DEV_RX_PREFIX, cqe->data + RDMX_DEV_RX_PREFIX,
		       cqe->len - RDMX_DEV_RX_PREFIX);
	if (cqe->status != RDMX_DEV_OK ||
	    rdmx_wire_ud_decode(buf, cqe->len, &h->flags, &h->data)) {
		ep->stats.rx_malformed += cqe->status == RDMX_DEV_OK;
		rdmx_rxbufs_repost(&ep->rxb, &ep->lanes, idx);
		return;
	}
	h->len = cqe->len - (uint32_t) sizeof(struct rdmx_wire_ud);
	memset(h->addr, 0, sizeof(h->addr));
	if (cqe->src_addr)
		memcpy(h->addr, cqe->src_addr, ep->lanes.nic->ops->addr_size);
	h->src = cqe->src_addr ? rdmx_addrs_reverse(ep->addrs, cqe->src_addr) :
		 FI_ADDR_NOTAVAIL;
	rdmx_dlist_foreach(&ep->ud.posted, it) {
		struct rdmx_ud_rx *rx = rdmx_container_of(it, struct rdmx_ud_rx, link);

		if (rdmx_ud_match(ep, rx, h)) {
			rdmx_dlist_remove(&rx->link);
			rdmx_ud_deliver(ep, rx, idx);
			return;
		}
	}
	ep->stats.rx_unexpected++;
	if (ep->ud.held_cnt == ep->ud.held_max) {
		struct rdmx_ud_held *old = rdmx_container_of(ep->ud.arrived.next,
							     struct rdmx_ud_held, link);

		/* Counted with the device's drops: a datagram no one took. */
		ep->lanes.nic->stats.rx_dropped++;
		rdmx_ud_unhold(ep, old);
		rdmx_rxbufs_repost(&ep->rxb, &ep->lanes, (size_t) (old - ep->ud.held));
	}
	rdmx_dlist_insert_tail(&ep->ud.arrived, &h->link);
	ep->ud.held_cnt++;
}

void rdmx_ud_progress(struct rdmx_ep *ep)
{
	struct rdmx_dev_cqe cqe[RDMX_UD_BATCH];
	int n;

	if (!ep->enabled)
		return;
	n = rdmx_lanes_poll(&ep->lanes, cqe, RDMX_UD_BATCH);
	for (int i = 0; i < n; i++) {
		if (cqe[i].op == RDMX_DEV_OP_SEND)
			rdmx_ud_sent(ep, (struct rdmx_ud_tx *) (uintptr_t) cqe[i].wr_id,
				     cqe[i].status);
		else if (cqe[i].op == RDMX_DEV_OP_RECV)
			rdmx_ud_arrived(ep, &cqe[i]);
	}
}

void rdmx_ud_drain(struct rdmx_ep *ep)
{
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(&ep->ud.posted)))
		rdmx_pool_release(&ep->rxe_pool,
				  rdmx_container_of(it, struct rdmx_ud_rx, link));
	rdmx_dlist_init(&ep->ud.arrived);
	ep->ud.held_cnt = 0;
}
