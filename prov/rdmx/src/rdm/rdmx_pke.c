/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: packet entries (struct rdmx_pke), the bottom of the send side:
 * a packet's setup, its posting to its peer's lane, and the control
 * packets (handshakes, DACKs, CTS, VOID) that wait on the endpoint's
 * ctrl_pending list while the device is full. Nothing here knows what a
 * packet belongs to: its end is told to its send or receive above
 * (rdmx_txe.c).
 */
#include "rdmx.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_tx.h"

int rdmx_tx_post(struct rdmx_pke *pke, bool more)
{
	/* A DACK is awaited too: a send at its peer waits for it. */
	bool awaited = pke->txe ? pke->txe->level != RDMX_TX_INJECT :
		       pke->hdr.dack.base.type == RDMX_PKT_DACK;
	unsigned flags = (more ? RDMX_DEV_SEND_MORE : 0) |
			 (awaited ? RDMX_DEV_SEND_AWAITED : 0);
	int ret = pke->seg_len ?
		  rdmx_lane_send_segs(&pke->peer->lane, pke->iov, pke->iov_cnt, pke->seg_len,
				      pke->off_at, (uintptr_t) pke, flags) :
		  rdmx_lane_send(&pke->peer->lane, pke->iov, pke->iov_cnt, (uintptr_t) pke,
				 flags);

	if (!ret)
		pke->busy = true;
	return ret;
}

void rdmx_tx_pke_skip(struct rdmx_pke *pke, size_t done)
{
	size_t len = rdmx_iov_len(&pke->iov[1], pke->iov_cnt - 1);
	struct iovec rest[RDMX_IOV_LIMIT];

	if (!done || done % pke->seg_len || done >= len)
		return;
	pke->iov_cnt = 1 + rdmx_iov_slice(rest, &pke->iov[1], pke->iov_cnt - 1, done,
					  len - done);
	memcpy(&pke->iov[1], rest, (pke->iov_cnt - 1) * sizeof(*rest));
	rdmx_le64_add((uint8_t *) &pke->hdr + pke->off_at, done);
	if (len - done <= pke->seg_len)
		pke->seg_len = 0;
}

void rdmx_tx_ctrl_post(struct rdmx_ep *ep, struct rdmx_pke *pke)
{
	if (rdmx_rnr_blocked(pke->peer) || rdmx_tx_post(pke, false)) {
		pke->busy = true;
		rdmx_dlist_insert_tail(&ep->ctrl_pending, &pke->link);
	}
}

bool rdmx_tx_peer_busy(const struct rdmx_ep *ep, const struct rdmx_peer *peer)
{
	for (size_t i = 0; i < ep->pke_pool.count; i++) {
		const struct rdmx_pke *pke = rdmx_pool_at(&ep->pke_pool, i);

		if (pke->busy && pke->peer == peer && (pke->txe || pke->rxm))
			return true;
	}
	return false;
}

bool rdmx_tx_ctrl_progress(struct rdmx_ep *ep)
{
	struct rdmx_dlist *it, *next;

	for (it = ep->ctrl_pending.next; it != &ep->ctrl_pending; it = next) {
		struct rdmx_pke *pke = rdmx_container_of(it, struct rdmx_pke, link);

		next = it->next;
		if (rdmx_rnr_blocked(pke->peer))
			continue;
		if (rdmx_tx_post(pke, false))
			return false;
		rdmx_dlist_remove(it);
	}
	return true;
}
