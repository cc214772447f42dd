/*
 * rdmx: endpoint progress. Polls the device completion queue, completes
 * sends, and dispatches each received packet to its handler by type
 * after the codec validated it. Malformed packets are counted and the
 * buffer goes straight back to the device.
 */
#include "rdmx.h"
#include "rdmx_av.h"
#include "rdmx_ep.h"
#include "rdmx_rnr.h"
#include "rdmx_wire.h"

#define RDMX_PROGRESS_BATCH	32
/* Polls per call at most, so a flood cannot hold the caller forever. */
#define RDMX_PROGRESS_ROUNDS	4

/* Returns true when it keeps the packet buffer (see rdmx_eager_handle). */
typedef bool (*rdmx_pkt_handler_t)(struct rdmx_ep *ep, const struct rdmx_pkt *pkt,
				   fi_addr_t src, size_t rx_buf);

static const rdmx_pkt_handler_t rdmx_pkt_handlers[RDMX_PKT_TYPE_MAX] = {
	[RDMX_PKT_EAGER] = rdmx_eager_handle,
};

/*
 * The AV address of a packet's sender, or FI_ADDR_NOTAVAIL. A sender in
 * the AV gets its peer entry now, which also tells the device it is a
 * known peer (a handle the device may not evict).
 */
static fi_addr_t rdmx_progress_src(struct rdmx_ep *ep,
				   const struct rdmx_dev_cqe *cqe)
{
	fi_addr_t addr;

	if (cqe->src_ah && cqe->src_ah->context)
		return ((struct rdmx_peer *) cqe->src_ah->context)->addr;
	if (!cqe->src_addr)
		return FI_ADDR_NOTAVAIL;
	addr = rdmx_av_reverse(ep->av, cqe->src_addr);
	if (addr != FI_ADDR_NOTAVAIL)
		(void) rdmx_ep_peer(ep, addr);
	return addr;
}

void rdmx_ep_repost(struct rdmx_ep *ep, size_t idx)
{
	/* Cannot fail: the buffer left the same receive queue earlier. */
	(void) ep->dev->ops->post_recv(ep->dev, rdmx_ep_rx_buf(ep, idx),
				       ep->rx_buf_size, idx);
}

static void rdmx_progress_recv(struct rdmx_ep *ep, const struct rdmx_dev_cqe *cqe)
{
	struct rdmx_pkt pkt;

	if (cqe->status == RDMX_DEV_OK) {
		if (rdmx_wire_decode(rdmx_ep_rx_buf(ep, cqe->wr_id), cqe->len, &pkt) ||
		    !rdmx_pkt_handlers[pkt.type]) {
			ep->stats.rx_malformed++;
			RDMX_DBG(FI_LOG_EP_DATA, "malformed packet of %u bytes\n",
				 cqe->len);
		} else if (rdmx_pkt_handlers[pkt.type](ep, &pkt,
						       rdmx_progress_src(ep, cqe),
						       cqe->wr_id)) {
			return;
		}
	}
	rdmx_ep_repost(ep, cqe->wr_id);
}

void rdmx_ep_progress(struct rdmx_ep *ep)
{
	struct rdmx_dev_cqe cqe[RDMX_PROGRESS_BATCH];
	int n, rounds = 0;

	if (!ep->enabled)
		return;
	do {
		n = ep->dev->ops->poll_cq(ep->dev, cqe, RDMX_PROGRESS_BATCH);
		for (int i = 0; i < n; i++) {
			if (cqe[i].op == RDMX_DEV_OP_SEND)
				rdmx_eager_send_done(ep, (struct rdmx_txe *)
						     (uintptr_t) cqe[i].wr_id,
						     cqe[i].status);
			else
				rdmx_progress_recv(ep, &cqe[i]);
		}
	} while (n == RDMX_PROGRESS_BATCH && ++rounds < RDMX_PROGRESS_ROUNDS);
	rdmx_rnr_progress(ep);
}
