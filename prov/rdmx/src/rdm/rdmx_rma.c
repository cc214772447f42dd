/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: RMA emulated over messages (docs/protocol.md, RMA). An RMA write
 * travels as a message flagged RDMX_PKT_RMA through the eager, medium or
 * long protocol, in its sender's order; at the target it lands, instead
 * of in a matched receive, in the bytes of the region its key names,
 * checked at its start and again before each packet is placed, so that
 * a region closed meanwhile is never written after its fi_close
 * returned. A read is a request message the target answers with a
 * message flagged RDMX_PKT_RMA_RESP that lands in the read's buffers.
 * Every refusal goes back as a DACK with its FI_E* code: FI_EACCES for a
 * key no region has or one without the access, FI_EINVAL for bytes
 * outside the region, FI_EOPNOTSUPP for an endpoint without FI_RMA and
 * FI_REMOTE_WRITE (or FI_REMOTE_READ). With FI_RMA_EVENT the target counts
 * each write it took and each read it answered (FI_REMOTE_WRITE and
 * FI_REMOTE_READ counters).
 */
#include "rdmx.h"
#include "rdmx_comp.h"
#include "rdmx_dack.h"
#include "rdmx_ep.h"
#include "rdmx_keys.h"
#include "rdmx_peer.h"
#include "rdmx_rx.h"
#include "rdmx_tx.h"

/* What an endpoint must offer to be the target of access. */
static int rdmx_rma_target_cap(const struct rdmx_ep *ep, uint64_t access)
{
	uint64_t caps = ep->caps;

	return (caps & FI_RMA) && (caps & access) && ep->keys ? 0 : -FI_EOPNOTSUPP;
}

/* The len bytes at addr of the region with key, if access is granted. */
static int rdmx_rma_region(const struct rdmx_ep *ep, uint64_t key, uint64_t addr,
			   size_t len, uint64_t access, uint8_t **buf)
{
	int ret = rdmx_rma_target_cap(ep, access);

	return ret ? ret : rdmx_keys_find(ep->keys, key, addr, len, access, buf);
}

/* An rxe standing for RMA (not on any queue), in rxe: its bytes are iov. */
static struct rdmx_rxe *rdmx_rma_rxe_init(struct rdmx_rxe *rxe, enum rdmx_rma_op op,
					  void *buf, size_t len)
{
	*rxe = (struct rdmx_rxe) {
		.iov = { { .iov_base = buf, .iov_len = len } },
		.iov_cnt = 1,
		.rma = op,
	};
	return rxe;
}

/* The read of peer an answer names, still waiting for it; else NULL. */
static struct rdmx_txe *rdmx_rma_read_of(struct rdmx_ep *ep, struct rdmx_peer *peer,
					 const struct rdmx_pkt *pkt)
{
	struct rdmx_txe *txe = pkt->tag < ep->txe_pool.count ?
			       rdmx_pool_at(&ep->txe_pool, (size_t) pkt->tag) : NULL;

	if (!txe || !txe->in_use || txe->deferred || txe->peer != peer ||
	    txe->rma_op != RDMX_RMA_READ || txe->level != RDMX_TX_DELIVERY_AWAITED ||
	    txe->read_taken || txe->err || (uint64_t) txe->msg_id != pkt->data)
		return NULL;
	return txe;
}

struct rdmx_rxe *rdmx_rma_rxe(struct rdmx_ep *ep, struct rdmx_peer *peer,
			      const struct rdmx_pkt *pkt, struct rdmx_rxe *rxe, int *err)
{
	struct rdmx_txe *read;
	uint8_t *buf;

	if (pkt->flags & RDMX_PKT_RMA) {
		*err = -rdmx_rma_region(ep, pkt->tag, pkt->rma_addr, pkt->msg_len,
					FI_REMOTE_WRITE, &buf);
		if (*err)
			return NULL;
		rdmx_rma_rxe_init(rxe, RDMX_RMA_WRITE, buf, pkt->msg_len);
		rxe->rma_key = pkt->tag;
		rxe->rma_addr = pkt->rma_addr;
		return rxe;
	}
	read = peer ? rdmx_rma_read_of(ep, peer, pkt) : NULL;
	if (!read || pkt->msg_len != read->read_len) {
		ep->stats.rx_malformed++;
		*err = FI_EINVAL;
		return NULL;
	}
	rdmx_rma_rxe_init(rxe, RDMX_RMA_RESP, NULL, 0);
	for (size_t i = 0; i < read->iov_cnt; i++)
		rxe->iov[i] = read->iov[i];
	rxe->iov_cnt = read->iov_cnt;
	rxe->read = read;
	read->read_taken = true;
	*err = 0;
	return rxe;
}

bool rdmx_rma_live(struct rdmx_ep *ep, const struct rdmx_rxe *rxe, size_t off, size_t len)
{
	uint8_t *buf;

	if (rxe->rma != RDMX_RMA_WRITE)
		return true;
	return !rdmx_rma_region(ep, rxe->rma_key, rxe->rma_addr + off, len, FI_REMOTE_WRITE,
				&buf) && buf == (uint8_t *) rxe->iov[0].iov_base + off;
}

void rdmx_rma_complete(struct rdmx_ep *ep, struct rdmx_rxe *rxe, size_t len, fi_addr_t src,
		       uint64_t data, uint32_t pkt_flags)
{
	struct rdmx_cq_entry entry = {
		.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
		.len = len,
		.data = data,
		.src = rdmx_peer_src_reported(src),
	};

	if (rxe->rma == RDMX_RMA_RESP) {
		rdmx_tx_delivered(ep, rxe->read, 0);
		return;
	}
	if ((pkt_flags & RDMX_PKT_CQ_DATA) && ep->rx_comp)
		rdmx_comp_write(ep->rx_comp, &entry);
	else if ((ep->caps & FI_RMA_EVENT) && ep->rx_comp)
		rdmx_comp_count(ep->rx_comp, &entry);
	if (ep->caps & FI_RMA_EVENT)
		rdmx_keys_accessed(ep->keys, rxe->rma_key, FI_REMOTE_WRITE);
}

void rdmx_rma_fail(struct rdmx_ep *ep, struct rdmx_rxe *rxe, int err)
{
	if (rxe->rma == RDMX_RMA_RESP)
		rdmx_tx_delivered(ep, rxe->read, err);
}

void rdmx_rma_resp_lost(struct rdmx_ep *ep, struct rdmx_peer *peer, const struct rdmx_pkt *pkt,
			int err)
{
	struct rdmx_txe *read = peer ? rdmx_rma_read_of(ep, peer, pkt) : NULL;

	if (!read) {
		ep->stats.rx_malformed++;
		return;
	}
	read->read_taken = true;
	rdmx_tx_delivered(ep, read, err);
}

void rdmx_rma_read_req(struct rdmx_ep *ep, struct rdmx_peer *peer, const struct rdmx_pkt *pkt)
{
	struct rdmx_send_req req = {
		.iov_cnt = 1,
		.dest = peer ? peer->addr : FI_ADDR_NOTAVAIL,
		.peer = peer,
		.tag = pkt->tx_id,
		.data = pkt->msg_id,
		.rma_op = RDMX_RMA_RESP,
		.rma_key = pkt->tag,
		.rma_addr = pkt->rma_addr,
	};
	struct iovec iov;
	uint8_t *buf;
	int err;

	if (!peer)
		return;
	err = -rdmx_rma_region(ep, pkt->tag, pkt->rma_addr, pkt->rma_len, FI_REMOTE_READ, &buf);
	if (!err && pkt->rma_len > ep->max_msg_size)
		err = FI_EMSGSIZE;
	if (!err) {
		iov = (struct iovec) { .iov_base = buf, .iov_len = pkt->rma_len };
		req.iov = &iov;
		err = (int) -rdmx_send(ep, &req);
	}
	if (err)
		rdmx_dack_send(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id, err);
}
