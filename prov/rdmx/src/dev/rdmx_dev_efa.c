/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the efa device. An EFA SRD queue pair (efadv_create_qp_ex) is
 * the contract's raw queue as it stands: reliable, unordered, packets
 * that find no receive buffer refused after the QP's RNR retries (set
 * from FI_RDMX_RNR_RETRY where the device can). So this device adds no
 * reliability of its own; it only translates:
 * - sends are copied into registered slots (the rdm layer's buffers and
 *   the application's are not registered), or sent inline when they fit
 *   the device's inline buffer;
 * - receives land in the rdm layer's buffers, registered once through
 *   rx_memory;
 * - every send carries the sender's connection id as immediate data
 *   (ibv_wr_send_imm), so that a new queue pair on a reused QPN is
 *   another sender;
 * - completions come from an extended CQ; a receive names its sender by
 *   the AH number the device knows it by ("slid") or, for a sender we
 *   have no handle for, by the source GID the CQ reports
 *   (EFADV_WC_EX_WITH_SGID); either way plus the source QPN and the
 *   connection id; a receive without one is malformed and dropped;
 * - a sleeping thread waits on the CQ's completion channel
 *   (rdmx_dev_ibv_chan.h), where the device has CQ notifications;
 * - a failed completion is translated by its EFA status code
 *   (rdmx_dev_efa_status.c);
 * - RDMA read (EFADV_DEVICE_ATTR_CAPS_RDMA_READ) registers the memory a
 *   long message is read from or into for the time of that message.
 * Every rdma-core call goes through g_rdmx_ibv (rdmx_ibv.h).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_dev_efa.h"
#include "rdmx_dev_ibv.h"
#include "rdmx_dev_ibv_chan.h"
#include "rdmx_hash.h"
#include "rdmx_pool.h"

/* Completions taken per poll at most (rx_src holds their senders). */
#define RDMX_EFA_POLL_MAX	64
/* Segments a read may have on either side (the rkey holds 4 keys). */
#define RDMX_EFA_READ_IOV	4

/* What a work request is, in the low bits of its wr_id. */
enum rdmx_efa_wr {
	RDMX_EFA_WR_SEND,
	RDMX_EFA_WR_RECV,
	RDMX_EFA_WR_READ,
};
#define RDMX_EFA_WR_BITS	2
#define RDMX_EFA_WR_MASK	((1u << RDMX_EFA_WR_BITS) - 1)

/*
 * A remote queue: its address and the hardware handle of its GID. It
 * stays while the rdm layer holds it (refs) or work requests name it
 * (busy); then it is idle, kept for a peer that comes back until a new
 * GID needs its hardware handle.
 */
struct rdmx_efa_ah {
	struct rdmx_ah		ah;
	struct rdmx_ibv_addr	addr;		/* the hash key */
	uint32_t		qpn;
	uint32_t		refs;		/* ah_create calls not destroyed */
	uint32_t		busy;		/* sends and reads not completed */
	struct rdmx_ibv_gid_ah	*gah;
	struct rdmx_dlist	link;		/* on rdmx_efa_dev.ahs */
	struct rdmx_dlist	idle;		/* on rdmx_efa_dev.idle when idle */
};

/* A send in the send queue. */
struct rdmx_efa_tx {
	uint64_t		wr_id;		/* the rdm layer's */
	struct rdmx_efa_ah	*ah;
};

/* A posted receive. */
struct rdmx_efa_recv {
	uint64_t		wr_id;
};

/* An RDMA read in flight: its chunks and the local registration. */
struct rdmx_efa_read {
	uint64_t		wr_id;
	struct rdmx_efa_ah	*ah;
	struct ibv_mr		*mr;
	uint32_t		chunks;		/* work requests not completed */
	enum rdmx_dev_status	status;		/* the first failure */
	struct rdmx_dlist	link;		/* on rdmx_efa_dev.reads */
};

struct rdmx_efa_dev {
	struct rdmx_dev		dev;
	struct rdmx_ibv_core	core;
	struct ibv_cq_ex	*cq;
	struct efadv_cq		*efa_cq;	/* NULL: no source GIDs */
	struct rdmx_ibv_chan	chan;		/* the CQ's completion channel */
	struct ibv_qp		*qp;
	struct ibv_qp_ex	*qpx;
	struct rdmx_ibv_addr	addr;
	__be32			imm;		/* our connection id, as sent */
	size_t			inline_size;
	size_t			max_rdma;	/* bytes per read request */
	size_t			sq_cnt;		/* work requests in the send queue */

	struct rdmx_ibv_ahc	ahc;
	struct rdmx_hash	ah_map;		/* canonical addr → rdmx_efa_ah */
	struct rdmx_dlist	ahs;		/* all of them, freed at close */
	struct rdmx_dlist	idle;		/* idle ones, least recently used first */

	struct rdmx_ibv_slab	tx_slab;	/* a slot per send queue entry */
	struct rdmx_efa_tx	*tx;		/* the sends, by slot */
	struct rdmx_pool	recv_pool;	/* of rdmx_efa_recv */
	struct rdmx_pool	read_pool;	/* of rdmx_efa_read */
	struct rdmx_dlist	reads;		/* in flight, of rdmx_efa_read */
	struct ibv_mr		*rx_mr;		/* the rdm layer's receive buffers */
	struct rdmx_ibv_addr	rx_src[RDMX_EFA_POLL_MAX];
};

static struct rdmx_efa_dev *rdmx_efa_dev(struct rdmx_dev *dev)
{
	return rdmx_container_of(dev, struct rdmx_efa_dev, dev);
}

static uint64_t rdmx_efa_wr_id(enum rdmx_efa_wr kind, uint64_t val)
{
	return (val << RDMX_EFA_WR_BITS) | kind;
}

/* EFA devices answer efadv_query_device; datagrams are max_msg_sz. */
static bool rdmx_efa_probe(struct ibv_context *ctx,
			   const struct ibv_port_attr *port, size_t *mtu)
{
	struct efadv_device_attr attr;

	if (g_rdmx_ibv->efadv_query_device(ctx, &attr, sizeof(attr)))
		return false;
	*mtu = port->max_msg_sz;
	return *mtu > 0;
}

static const struct rdmx_ibv_kind rdmx_efa_kind = {
	.name = "efa",
	.probe = rdmx_efa_probe,
};

static uint32_t rdmx_efa_addr_format(const void *canon)
{
	(void) canon;
	return FI_ADDR_EFA;
}

static void rdmx_efa_addr_str(const void *canon, char *buf, size_t len)
{
	rdmx_ibv_addr_print("fi_addr_efa", canon, buf, len);
}

static int rdmx_efa_domains(const void *src, const void *dest,
			    struct rdmx_dev_domain *out, size_t max)
{
	return rdmx_ibv_domains(&rdmx_efa_kind, src, dest, out, max);
}

/* ah_map keys: the address inside the handle. */
static const void *rdmx_efa_ah_key(const struct rdmx_hash *hash, uint64_t val)
{
	(void) hash;
	return &((const struct rdmx_efa_ah *) (uintptr_t) val)->addr;
}

static struct rdmx_efa_ah *rdmx_efa_ah_find(struct rdmx_efa_dev *efa,
					    const struct rdmx_ibv_addr *addr)
{
	uint64_t val;

	return rdmx_hash_find(&efa->ah_map, addr, &val) ?
	       (struct rdmx_efa_ah *) (uintptr_t) val : NULL;
}

/*
 * Counts one more use of a handle in *count (its refs or busy): a handle
 * taken into use is no longer idle.
 */
static void rdmx_efa_ah_use(struct rdmx_efa_ah *ah, uint32_t *count)
{
	if (!ah->refs && !ah->busy)
		rdmx_dlist_remove(&ah->idle);
	(*count)++;
}

/*
 * Counts one use less in *count: a handle left without any is idle, the
 * most recently used.
 */
static void rdmx_efa_ah_unuse(struct rdmx_efa_dev *efa, struct rdmx_efa_ah *ah,
			      uint32_t *count)
{
	(*count)--;
	if (!ah->refs && !ah->busy)
		rdmx_dlist_insert_tail(&efa->idle, &ah->idle);
}

/*
 * Frees idle handles, least recently used first, until a handle for gid
 * fits in the device's max_ah. 0, or -FI_ENOSPC when every handle is
 * held by the rdm layer or named by work not completed: those stay.
 */
static int rdmx_efa_ah_evict(struct rdmx_efa_dev *efa, const uint8_t *gid)
{
	struct rdmx_dlist *it;

	while (rdmx_ibv_ahc_full(&efa->ahc, gid)) {
		struct rdmx_efa_ah *ah;

		it = rdmx_dlist_pop_front(&efa->idle);
		if (!it)
			return -FI_ENOSPC;
		ah = rdmx_container_of(it, struct rdmx_efa_ah, idle);
		rdmx_hash_remove(&efa->ah_map, &ah->addr);
		rdmx_dlist_remove(&ah->link);
		rdmx_ibv_ahc_put(&efa->ahc, ah->gah);
		free(ah);
	}
	return 0;
}

/*
 * The rdm layer's handles are reference counted; one it no longer holds
 * stays while sends or reads name it, and then, idle, until its hardware
 * handle is needed for another GID (rdmx_efa_ah_evict): a peer that
 * comes back finds its handle again.
 */
static int rdmx_efa_ah_create(struct rdmx_dev *dev, const void *canon,
			      struct rdmx_ah **ah_p)
{
	struct rdmx_efa_dev *efa = rdmx_efa_dev(dev);
	struct rdmx_efa_ah *ah = rdmx_efa_ah_find(efa, canon);
	int ret;

	if (ah) {
		rdmx_efa_ah_use(ah, &ah->refs);
		*ah_p = &ah->ah;
		return 0;
	}
	ret = rdmx_efa_ah_evict(efa, ((const struct rdmx_ibv_addr *) canon)->gid);
	if (ret)
		return ret;
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return -FI_ENOMEM;
	memcpy(&ah->addr, canon, sizeof(ah->addr));
	ah->qpn = rdmx_ibv_addr_qpn(&ah->addr);
	ah->gah = rdmx_ibv_ahc_get(&efa->ahc, &efa->core, ah->addr.gid, &ret);
	if (!ah->gah)
		goto err_free;
	ret = rdmx_hash_insert(&efa->ah_map, &ah->addr, (uintptr_t) ah);
	if (ret)
		goto err_put;
	ah->refs = 1;
	rdmx_dlist_insert_tail(&efa->ahs, &ah->link);
	*ah_p = &ah->ah;
	return 0;

err_put:
	rdmx_ibv_ahc_put(&efa->ahc, ah->gah);
err_free:
	free(ah);
	return ret;
}

static void rdmx_efa_ah_destroy(struct rdmx_dev *dev, struct rdmx_ah *ah)
{
	struct rdmx_efa_ah *eah = rdmx_container_of(ah, struct rdmx_efa_ah, ah);

	rdmx_efa_ah_unuse(rdmx_efa_dev(dev), eah, &eah->refs);
}

static int rdmx_efa_post_send(struct rdmx_dev *dev, struct rdmx_ah *ah,
			      const struct iovec *iov, size_t iov_cnt,
			      uint64_t wr_id, unsigned flags)
{
	struct rdmx_efa_dev *efa = rdmx_efa_dev(dev);
	struct rdmx_efa_ah *eah = rdmx_container_of(ah, struct rdmx_efa_ah, ah);
	size_t len = rdmx_iov_len(iov, iov_cnt);
	struct ibv_data_buf bufs[RDMX_DEV_SGE_MAX];
	struct ibv_sge sge;
	uint32_t slot;
	int ret;

	(void) flags;
	if (iov_cnt > RDMX_DEV_SGE_MAX || len > dev->caps.mtu)
		return -FI_EINVAL;
	if (efa->sq_cnt == dev->caps.sq_size ||
	    !rdmx_ibv_slab_alloc(&efa->tx_slab, &slot))
		return -FI_EAGAIN;
	efa->tx[slot].wr_id = wr_id;
	efa->tx[slot].ah = eah;
	g_rdmx_ibv->wr_start(efa->qpx);
	efa->qpx->wr_id = rdmx_efa_wr_id(RDMX_EFA_WR_SEND, slot);
	efa->qpx->wr_flags = IBV_SEND_SIGNALED;
	g_rdmx_ibv->wr_send_imm(efa->qpx, efa->imm);
	g_rdmx_ibv->wr_set_ud_addr(efa->qpx, eah->gah->ah, eah->qpn, RDMX_IBV_QKEY);
	if (len <= efa->inline_size) {
		for (size_t i = 0; i < iov_cnt; i++) {
			bufs[i].addr = iov[i].iov_base;
			bufs[i].length = iov[i].iov_len;
		}
		g_rdmx_ibv->wr_set_inline_data_list(efa->qpx, iov_cnt, bufs);
	} else {
		sge.addr = (uintptr_t) rdmx_ibv_slab_buf(&efa->tx_slab, slot);
		sge.length = (uint32_t) rdmx_copy_from_iov(
			rdmx_ibv_slab_buf(&efa->tx_slab, slot), iov, iov_cnt);
		sge.lkey = efa->tx_slab.mr->lkey;
		g_rdmx_ibv->wr_set_sge_list(efa->qpx, 1, &sge);
	}
	ret = g_rdmx_ibv->wr_complete(efa->qpx);
	if (ret) {
		rdmx_ibv_slab_release(&efa->tx_slab, slot);
		RDMX_DBG(FI_LOG_EP_DATA, "efa send: %s\n", strerror(ret));
		return ret == ENOMEM ? -FI_EAGAIN : -ret;
	}
	efa->sq_cnt++;
	rdmx_efa_ah_use(eah, &eah->busy);
	return 0;
}

static int rdmx_efa_rx_memory(struct rdmx_dev *dev, void *base, size_t len)
{
	struct rdmx_efa_dev *efa = rdmx_efa_dev(dev);

	efa->rx_mr = g_rdmx_ibv->reg_mr(efa->core.pd, base, len,
					IBV_ACCESS_LOCAL_WRITE);
	if (!efa->rx_mr) {
		RDMX_WARN(FI_LOG_EP_CTRL, "efa: registering %zu receive bytes: %s\n",
			  len, strerror(errno));
		return errno ? -errno : -FI_EIO;
	}
	return 0;
}

static int rdmx_efa_post_recv(struct rdmx_dev *dev, void *buf, size_t len,
			      uint64_t wr_id)
{
	struct rdmx_efa_dev *efa = rdmx_efa_dev(dev);
	struct ibv_recv_wr wr, *bad;
	struct rdmx_efa_recv *recv;
	struct ibv_sge sge;
	int ret;

	if (!efa->rx_mr || (uint8_t *) buf < (uint8_t *) efa->rx_mr->addr ||
	    (uint8_t *) buf + len > (uint8_t *) efa->rx_mr->addr + efa->rx_mr->length)
		return -FI_EINVAL;
	recv = rdmx_pool_alloc(&efa->recv_pool);
	if (!recv)
		return -FI_EAGAIN;
	recv->wr_id = wr_id;
	sge.addr = (uintptr_t) buf;
	sge.length = (uint32_t) len;
	sge.lkey = efa->rx_mr->lkey;
	wr.wr_id = rdmx_efa_wr_id(RDMX_EFA_WR_RECV, (uintptr_t) recv);
	wr.next = NULL;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ret = g_rdmx_ibv->post_recv(efa->qp, &wr, &bad);
	if (ret) {
		rdmx_pool_release(&efa->recv_pool, recv);
		return ret == ENOMEM ? -FI_EAGAIN : -ret;
	}
	return 0;
}

/*
 * Reads the CQ's current completion into wc: for a receive, its sender's
 * GID from the AH number the device knows it by ("slid") or, for a
 * sender we have no handle for, from the CQ (EFADV_WC_EX_WITH_SGID).
 */
static void rdmx_efa_wc_read(struct rdmx_ibv_chan *chan, struct rdmx_ibv_wc *wc)
{
	struct rdmx_efa_dev *efa = rdmx_container_of(chan, struct rdmx_efa_dev, chan);
	struct ibv_cq_ex *cq = efa->cq;
	struct rdmx_ibv_gid_ah *gah;

	wc->wr_id = cq->wr_id;
	wc->status = cq->status;
	wc->vendor_err = wc->status == IBV_WC_SUCCESS ? 0 :
			 g_rdmx_ibv->wc_read_vendor_err(cq);
	wc->connid = 0;
	wc->have_gid = false;
	if ((wc->wr_id & RDMX_EFA_WR_MASK) != RDMX_EFA_WR_RECV ||
	    wc->status != IBV_WC_SUCCESS || !rdmx_ibv_rx_connid(cq, &wc->connid))
		return;
	wc->byte_len = g_rdmx_ibv->wc_read_byte_len(cq);
	wc->src_qp = g_rdmx_ibv->wc_read_src_qp(cq);
	gah = rdmx_ibv_ahc_by_ahn(&efa->ahc, (uint16_t) g_rdmx_ibv->wc_read_slid(cq));
	if (gah)
		memcpy(wc->sgid.raw, gah->gid, sizeof(wc->sgid.raw));
	wc->have_gid = gah || (efa->efa_cq &&
			       !g_rdmx_ibv->efadv_wc_read_sgid(efa->efa_cq, &wc->sgid));
}

/*
 * Names the sender of receive completion wc: its handle when the rdm
 * layer holds one, and its address (written to *src) when the device
 * said enough. False when it did not. An idle handle is not handed out:
 * a handle the rdm layer creates while it goes through this poll's
 * completions may evict it.
 */
static bool rdmx_efa_rx_sender(struct rdmx_efa_dev *efa, const struct rdmx_ibv_wc *wc,
			       struct rdmx_ibv_addr *src, struct rdmx_efa_ah **ah_p)
{
	if (!wc->have_gid)
		return false;
	rdmx_ibv_addr_make(src, &wc->sgid, wc->src_qp, wc->connid);
	*ah_p = rdmx_efa_ah_find(efa, src);
	if (*ah_p && !(*ah_p)->refs)
		*ah_p = NULL;
	return true;
}

/* Fills cqe from receive completion wc, of this status. */
static void rdmx_efa_poll_recv(struct rdmx_efa_dev *efa, struct rdmx_efa_recv *recv,
			       const struct rdmx_ibv_wc *wc, enum rdmx_dev_status status,
			       struct rdmx_dev_cqe *cqe, struct rdmx_ibv_addr *src)
{
	struct rdmx_efa_ah *ah = NULL;

	cqe->wr_id = recv->wr_id;
	rdmx_pool_release(&efa->recv_pool, recv);
	cqe->op = RDMX_DEV_OP_RECV;
	cqe->status = status;
	cqe->len = 0;
	cqe->src_ah = NULL;
	cqe->src_addr = NULL;
	cqe->data = NULL;
	if (cqe->status != RDMX_DEV_OK)
		return;
	if (!wc->connid) {
		/*
		 * No rdmx queue pair sent it. A failed receive hands the
		 * buffer back to the rdm layer, which reposts it unread.
		 */
		efa->dev.stats.rx_malformed++;
		cqe->status = RDMX_DEV_IO;
		return;
	}
	cqe->len = wc->byte_len;
	if (rdmx_efa_rx_sender(efa, wc, src, &ah)) {
		cqe->src_addr = src;
		cqe->src_ah = ah ? &ah->ah : NULL;
	} else {
		efa->dev.stats.rx_dropped++;
	}
}

/*
 * Counts down a read's chunks, the first failure (status) its status;
 * true when the last one completed.
 */
static bool rdmx_efa_poll_read(struct rdmx_efa_dev *efa, struct rdmx_efa_read *rd,
			       enum rdmx_dev_status status, struct rdmx_dev_cqe *cqe)
{
	if (rd->status == RDMX_DEV_OK)
		rd->status = status;
	if (--rd->chunks)
		return false;
	rdmx_dlist_remove(&rd->link);
	rdmx_efa_ah_unuse(efa, rd->ah, &rd->ah->busy);
	g_rdmx_ibv->dereg_mr(rd->mr);
	cqe->wr_id = rd->wr_id;
	cqe->op = RDMX_DEV_OP_READ;
	cqe->status = rd->status;
	cqe->len = 0;
	cqe->src_ah = NULL;
	cqe->src_addr = NULL;
	rdmx_pool_release(&efa->read_pool, rd);
	return true;
}

/*
 * The contract's status of a completion, by its EFA code
 * (rdmx_dev_efa_status.c).
 */
static enum rdmx_dev_status rdmx_efa_wc_status(const struct rdmx_ibv_wc *wc)
{
	if (wc->status == IBV_WC_SUCCESS)
		return RDMX_DEV_OK;
	RDMX_DBG(FI_LOG_EP_DATA, "efa completion: status %d, efa status %u (%s)\n",
		 (int) wc->status, wc->vendor_err, rdmx_efa_status_str(wc->vendor_err));
	return rdmx_efa_status(wc->status, wc->vendor_err);
}

/* Turns work completion wc into cqe; false when it makes none. */
static bool rdmx_efa_poll_one(struct rdmx_efa_dev *efa, const struct rdmx_ibv_wc *wc,
			      struct rdmx_dev_cqe *cqe, struct rdmx_ibv_addr *src)
{
	enum rdmx_dev_status status = rdmx_efa_wc_status(wc);
	uint64_t val = wc->wr_id >> RDMX_EFA_WR_BITS;

	switch ((enum rdmx_efa_wr) (wc->wr_id & RDMX_EFA_WR_MASK)) {
	case RDMX_EFA_WR_RECV:
		rdmx_efa_poll_recv(efa, (void *) (uintptr_t) val, wc, status, cqe, src);
		return true;
	case RDMX_EFA_WR_READ:
		efa->sq_cnt--;
		return rdmx_efa_poll_read(efa, (void *) (uintptr_t) val, status, cqe);
	default:
		efa->sq_cnt--;
		rdmx_ibv_slab_release(&efa->tx_slab, (uint32_t) val);
		rdmx_efa_ah_unuse(efa, efa->tx[val].ah, &efa->tx[val].ah->busy);
		cqe->wr_id = efa->tx[val].wr_id;
		cqe->op = RDMX_DEV_OP_SEND;
		cqe->status = status;
		cqe->len = 0;
		cqe->src_ah = NULL;
		cqe->src_addr = NULL;
		return true;
	}
}

static int rdmx_efa_poll_cq(struct rdmx_dev *dev, struct rdmx_dev_cqe *cqe, int max)
{
	struct rdmx_efa_dev *efa = rdmx_efa_dev(dev);
	struct ibv_poll_cq_attr attr = { 0 };
	const struct rdmx_ibv_wc *kept;
	struct rdmx_ibv_wc wc;
	int done = 0, ret;

	max = RDMX_MIN(max, RDMX_EFA_POLL_MAX);
	if (max <= 0)
		return 0;
	rdmx_ibv_chan_wake(&efa->chan);
	/* What wait_arm found comes first. */
	kept = rdmx_ibv_chan_take(&efa->chan);
	if (kept && rdmx_efa_poll_one(efa, kept, &cqe[done], &efa->rx_src[done]))
		done++;
	if (done == max)
		return done;
	ret = g_rdmx_ibv->start_poll(efa->cq, &attr);
	if (ret) {
		if (ret != ENOENT)
			RDMX_WARN(FI_LOG_CQ, "efa: ibv_start_poll: %s\n", strerror(ret));
		return done;
	}
	do {
		rdmx_efa_wc_read(&efa->chan, &wc);
		if (rdmx_efa_poll_one(efa, &wc, &cqe[done], &efa->rx_src[done]))
			done++;
	} while (done < max && !g_rdmx_ibv->next_poll(efa->cq));
	g_rdmx_ibv->end_poll(efa->cq);
	return done;
}

static int rdmx_efa_wait_fd(struct rdmx_dev *dev)
{
	return rdmx_ibv_chan_fd(&rdmx_efa_dev(dev)->chan);
}

/* SRD needs no timers of ours: only the CQ can wake a sleeper. */
static int rdmx_efa_wait_arm(struct rdmx_dev *dev, uint64_t *due_p)
{
	struct rdmx_efa_dev *efa = rdmx_efa_dev(dev);

	return rdmx_ibv_chan_arm(&efa->chan, efa->cq, due_p);
}

static void rdmx_efa_read_revoke(struct rdmx_dev *dev, struct rdmx_dev_rkey *rkey)
{
	(void) dev;
	for (size_t i = 0; i < RDMX_EFA_READ_IOV && rkey->priv[i]; i++) {
		g_rdmx_ibv->dereg_mr((struct ibv_mr *) (uintptr_t) rkey->priv[i]);
		rkey->priv[i] = 0;
	}
}

static int rdmx_efa_read_expose(struct rdmx_dev *dev, const struct iovec *iov,
				size_t cnt, struct rdmx_dev_rkey *rkey)
{
	struct rdmx_efa_dev *efa = rdmx_efa_dev(dev);

	if (cnt > RDMX_EFA_READ_IOV)
		return -FI_EINVAL;
	memset(rkey, 0, sizeof(*rkey));
	for (size_t i = 0; i < cnt; i++) {
		struct ibv_mr *mr = g_rdmx_ibv->reg_mr(efa->core.pd, iov[i].iov_base,
						       iov[i].iov_len,
						       IBV_ACCESS_REMOTE_READ);
		uint32_t be_rkey;

		if (!mr) {
			int ret = errno ? -errno : -FI_EIO;

			rdmx_efa_read_revoke(dev, rkey);
			return ret;
		}
		rkey->priv[i] = (uintptr_t) mr;
		be_rkey = htobe32(mr->rkey);
		memcpy(rkey->wire + i * sizeof(be_rkey), &be_rkey, sizeof(be_rkey));
	}
	return 0;
}

/*
 * Reads a contiguous remote range into a contiguous local one, in work
 * requests of at most max_rdma bytes each. Scattered reads are left to
 * the protocols that do without (-FI_EOPNOTSUPP).
 */
static int rdmx_efa_post_read(struct rdmx_dev *dev, struct rdmx_ah *ah,
			      const struct iovec *local, size_t local_cnt,
			      const struct iovec *remote, size_t remote_cnt,
			      const void *key, uint64_t wr_id)
{
	struct rdmx_efa_dev *efa = rdmx_efa_dev(dev);
	struct rdmx_efa_ah *eah = rdmx_container_of(ah, struct rdmx_efa_ah, ah);
	size_t len = local_cnt ? local[0].iov_len : 0;
	size_t chunks = (len + efa->max_rdma - 1) / efa->max_rdma;
	struct rdmx_efa_read *rd;
	uint32_t be_rkey;
	int ret;

	if (local_cnt != 1 || remote_cnt != 1 || remote[0].iov_len != len || !len)
		return -FI_EOPNOTSUPP;
	if (efa->sq_cnt + chunks > dev->caps.sq_size)
		return -FI_EAGAIN;
	rd = rdmx_pool_alloc(&efa->read_pool);
	if (!rd)
		return -FI_EAGAIN;
	rd->mr = g_rdmx_ibv->reg_mr(efa->core.pd, local[0].iov_base, len,
				    IBV_ACCESS_LOCAL_WRITE);
	if (!rd->mr) {
		rdmx_pool_release(&efa->read_pool, rd);
		return -FI_EOPNOTSUPP;
	}
	rd->wr_id = wr_id;
	rd->ah = eah;
	rd->chunks = (uint32_t) chunks;
	rd->status = RDMX_DEV_OK;
	memcpy(&be_rkey, key, sizeof(be_rkey));
	g_rdmx_ibv->wr_start(efa->qpx);
	for (size_t off = 0; off < len; off += efa->max_rdma) {
		struct ibv_sge sge = {
			.addr = (uintptr_t) local[0].iov_base + off,
			.length = (uint32_t) RDMX_MIN(efa->max_rdma, len - off),
			.lkey = rd->mr->lkey,
		};

		efa->qpx->wr_id = rdmx_efa_wr_id(RDMX_EFA_WR_READ, (uintptr_t) rd);
		efa->qpx->wr_flags = IBV_SEND_SIGNALED;
		g_rdmx_ibv->wr_rdma_read(efa->qpx, be32toh(be_rkey),
					 (uintptr_t) remote[0].iov_base + off);
		g_rdmx_ibv->wr_set_ud_addr(efa->qpx, eah->gah->ah, eah->qpn,
					   RDMX_IBV_QKEY);
		g_rdmx_ibv->wr_set_sge_list(efa->qpx, 1, &sge);
	}
	ret = g_rdmx_ibv->wr_complete(efa->qpx);
	if (ret) {
		g_rdmx_ibv->dereg_mr(rd->mr);
		rdmx_pool_release(&efa->read_pool, rd);
		return ret == ENOMEM ? -FI_EAGAIN : -ret;
	}
	efa->sq_cnt += chunks;
	rdmx_efa_ah_use(eah, &eah->busy);
	rdmx_dlist_insert_tail(&efa->reads, &rd->link);
	return 0;
}

/*
 * Creates the CQ with the device's completion channel (without, on a
 * device that has no CQ notifications), with source GIDs where the
 * device reports them.
 */
static int rdmx_efa_cq_open(struct rdmx_efa_dev *efa,
			    const struct efadv_device_attr *eattr, size_t cqe)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = (uint32_t) cqe,
		.channel = efa->chan.ch,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_SRC_QP |
			    IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_IMM,
	};
	struct efadv_cq_init_attr efa_attr = {
		.wc_flags = EFADV_WC_EX_WITH_SGID,
	};

	do {
		if (eattr->device_caps & EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID)
			efa->cq = g_rdmx_ibv->efadv_create_cq(efa->core.ctx, &attr,
							      &efa_attr, sizeof(efa_attr));
		else
			efa->cq = g_rdmx_ibv->create_cq_ex(efa->core.ctx, &attr);
	} while (!efa->cq && rdmx_ibv_chan_refused(&efa->chan, &attr));
	if (efa->cq && (eattr->device_caps & EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID))
		efa->efa_cq = g_rdmx_ibv->efadv_cq_from_ibv_cq_ex(efa->cq);
	if (!efa->cq) {
		RDMX_WARN(FI_LOG_EP_CTRL, "efa: creating a cq of %zu: %s\n", cqe,
			  strerror(errno));
		return errno ? -errno : -FI_EIO;
	}
	return 0;
}

/* Creates the SRD queue pair and brings it to RTS. */
static int rdmx_efa_qp_open(struct rdmx_efa_dev *efa,
			    const struct efadv_device_attr *eattr)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_DRIVER,
		.send_cq = ibv_cq_ex_to_cq(efa->cq),
		.recv_cq = ibv_cq_ex_to_cq(efa->cq),
		.cap = {
			.max_send_wr = (uint32_t) efa->dev.caps.sq_size,
			.max_recv_wr = (uint32_t) efa->dev.caps.rq_size,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = eattr->inline_buf_size,
		},
		.pd = efa->core.pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND_WITH_IMM |
			(efa->dev.caps.flags & RDMX_DEV_CAP_RDMA_READ ?
			 IBV_QP_EX_WITH_RDMA_READ : 0),
	};
	struct efadv_qp_init_attr efa_attr = {
		.driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD,
	};
	int ret;

	efa->qp = g_rdmx_ibv->efadv_create_qp_ex(efa->core.ctx, &attr, &efa_attr,
						 sizeof(efa_attr));
	if (!efa->qp) {
		ret = errno ? -errno : -FI_EIO;
		RDMX_WARN(FI_LOG_EP_CTRL, "efa: efadv_create_qp_ex: %s\n",
			  fi_strerror(-ret));
		return ret;
	}
	efa->qpx = g_rdmx_ibv->qp_to_qp_ex(efa->qp);
	ret = rdmx_ibv_qp_ready(efa->qp,
		eattr->device_caps & EFADV_DEVICE_ATTR_CAPS_RNR_RETRY ?
		(int) g_rdmx_params.rnr_retry : -1);
	if (ret)
		g_rdmx_ibv->destroy_qp(efa->qp);
	return ret;
}

/*
 * The queue sizes, capabilities and buffers of a device being opened;
 * its limits to *eattr and *max_ah.
 */
static int rdmx_efa_setup(struct rdmx_efa_dev *efa, const struct rdmx_dev_attr *attr,
			  struct efadv_device_attr *eattr, size_t *max_ah)
{
	struct ibv_device_attr dattr;
	int ret = g_rdmx_ibv->efadv_query_device(efa->core.ctx, eattr,
						 sizeof(*eattr));

	if (ret) {
		RDMX_WARN(FI_LOG_EP_CTRL, "efa: efadv_query_device: %s\n",
			  strerror(ret));
		return -ret;
	}
	ret = rdmx_ibv_core_query(&efa->core, "efa", &dattr);
	if (ret)
		return ret;
	*max_ah = (size_t) dattr.max_ah;
	efa->dev.ops = &rdmx_dev_efa_ops;
	efa->dev.caps.mtu = efa->core.mtu;
	/* Every send is copied (or inline) before post_send returns. */
	efa->dev.caps.sq_size = RDMX_MIN(attr->sq_size, eattr->max_sq_wr);
	efa->dev.caps.rq_size = RDMX_MIN(attr->rq_size, eattr->max_rq_wr);
	efa->dev.caps.flags = RDMX_DEV_CAP_RELIABLE;
	if ((eattr->device_caps & EFADV_DEVICE_ATTR_CAPS_RDMA_READ) &&
	    eattr->max_rdma_size)
		efa->dev.caps.flags |= RDMX_DEV_CAP_RDMA_READ;
	efa->inline_size = eattr->inline_buf_size;
	efa->max_rdma = eattr->max_rdma_size ? eattr->max_rdma_size : 1;
	efa->tx = calloc(efa->dev.caps.sq_size, sizeof(*efa->tx));
	if (!efa->tx)
		return -FI_ENOMEM;
	ret = rdmx_pool_construct(&efa->recv_pool, sizeof(struct rdmx_efa_recv),
				  efa->dev.caps.rq_size);
	if (ret)
		return ret;
	return rdmx_pool_construct(&efa->read_pool, sizeof(struct rdmx_efa_read),
				   efa->dev.caps.sq_size);
}

static void rdmx_efa_free(struct rdmx_efa_dev *efa)
{
	rdmx_pool_destruct(&efa->recv_pool);
	rdmx_pool_destruct(&efa->read_pool);
	free(efa->tx);
	free(efa);
}

static int rdmx_efa_open(const struct rdmx_dev_attr *attr, struct rdmx_dev **dev_p)
{
	struct efadv_device_attr eattr;
	struct rdmx_efa_dev *efa;
	size_t max_ah;
	int ret;

	efa = calloc(1, sizeof(*efa));
	if (!efa)
		return -FI_ENOMEM;
	rdmx_dlist_init(&efa->ahs);
	rdmx_dlist_init(&efa->idle);
	rdmx_dlist_init(&efa->reads);
	ret = rdmx_ibv_core_open(&rdmx_efa_kind, attr->src_addr, &efa->core);
	if (ret)
		goto err_free;
	ret = rdmx_efa_setup(efa, attr, &eattr, &max_ah);
	if (ret)
		goto err_close_core;
	rdmx_ibv_chan_open(&efa->chan, &efa->core, "efa", rdmx_efa_wc_read);
	ret = rdmx_efa_cq_open(efa, &eattr,
			       efa->dev.caps.sq_size + efa->dev.caps.rq_size);
	if (ret)
		goto err_close_chan;
	ret = rdmx_efa_qp_open(efa, &eattr);
	if (ret)
		goto err_close_chan;
	ret = rdmx_ibv_slab_construct(&efa->tx_slab, efa->core.pd, efa->core.mtu,
				      efa->dev.caps.sq_size);
	if (ret)
		goto err_destroy_qp;
	ret = rdmx_ibv_ahc_construct(&efa->ahc, true, max_ah);
	if (ret)
		goto err_destruct_slab;
	ret = rdmx_hash_construct(&efa->ah_map, sizeof(struct rdmx_ibv_addr),
				  rdmx_efa_ah_key);
	if (ret)
		goto err_destruct_ahc;
	efa->imm = rdmx_ibv_qp_name(&efa->core, efa->qp, &efa->addr);
	RDMX_INFO(FI_LOG_EP_CTRL, "efa: qp 0x%x (connection 0x%x) on %s, mtu %zu, inline %zu%s\n",
		  efa->qp->qp_num, be32toh(efa->imm),
		  g_rdmx_ibv->get_device_name(efa->core.ctx->device),
		  efa->dev.caps.mtu, efa->inline_size,
		  efa->dev.caps.flags & RDMX_DEV_CAP_RDMA_READ ? ", rdma read" : "");
	*dev_p = &efa->dev;
	return 0;

err_destruct_ahc:
	rdmx_ibv_ahc_destruct(&efa->ahc);
err_destruct_slab:
	rdmx_ibv_slab_destruct(&efa->tx_slab);
err_destroy_qp:
	g_rdmx_ibv->destroy_qp(efa->qp);
err_close_chan:
	/* With the CQ, if it was made. */
	rdmx_ibv_chan_close(&efa->chan, efa->cq);
err_close_core:
	rdmx_ibv_core_close(&efa->core);
err_free:
	rdmx_efa_free(efa);
	return ret;
}

static void rdmx_efa_close(struct rdmx_dev *dev)
{
	struct rdmx_efa_dev *efa = rdmx_efa_dev(dev);
	struct rdmx_dlist *it;

	/* Destroying the queue pair ends every work request still in it. */
	g_rdmx_ibv->destroy_qp(efa->qp);
	rdmx_ibv_chan_close(&efa->chan, efa->cq);
	while ((it = rdmx_dlist_pop_front(&efa->reads)))
		g_rdmx_ibv->dereg_mr(rdmx_container_of(it, struct rdmx_efa_read,
						       link)->mr);
	while ((it = rdmx_dlist_pop_front(&efa->ahs)))
		free(rdmx_container_of(it, struct rdmx_efa_ah, link));
	rdmx_hash_destruct(&efa->ah_map);
	rdmx_ibv_ahc_destruct(&efa->ahc);
	rdmx_ibv_slab_destruct(&efa->tx_slab);
	if (efa->rx_mr)
		g_rdmx_ibv->dereg_mr(efa->rx_mr);
	rdmx_ibv_core_close(&efa->core);
	rdmx_efa_free(efa);
}

static void rdmx_efa_getname(struct rdmx_dev *dev, void *canon)
{
	memcpy(canon, &rdmx_efa_dev(dev)->addr, sizeof(struct rdmx_ibv_addr));
}

const struct rdmx_dev_ops rdmx_dev_efa_ops = {
	.name = "efa",
	.addr_size = sizeof(struct rdmx_ibv_addr),
	.addr_format = rdmx_efa_addr_format,
	.addr_canon = rdmx_ibv_addr_check,
	.addr_len = rdmx_ibv_addr_size,
	.addr_str = rdmx_efa_addr_str,
	.resolve = rdmx_ibv_resolve,
	.domains = rdmx_efa_domains,
	.open = rdmx_efa_open,
	.close = rdmx_efa_close,
	.getname = rdmx_efa_getname,
	.ah_create = rdmx_efa_ah_create,
	.ah_destroy = rdmx_efa_ah_destroy,
	.rx_memory = rdmx_efa_rx_memory,
	.post_send = rdmx_efa_post_send,
	.post_recv = rdmx_efa_post_recv,
	.poll_cq = rdmx_efa_poll_cq,
	.wait_fd = rdmx_efa_wait_fd,
	.wait_arm = rdmx_efa_wait_arm,
	.read_expose = rdmx_efa_read_expose,
	.read_revoke = rdmx_efa_read_revoke,
	.post_read = rdmx_efa_post_read,
};
