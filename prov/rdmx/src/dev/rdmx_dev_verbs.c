/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the verbs device. A UD queue pair of any verbs device
 * (InfiniBand, RoCE) moves datagrams of up to the port's active MTU with
 * no guarantee; swsrd on top (rdmx_dgram.c, shared with udp) makes it
 * honour the device contract, exactly as on UDP.
 *
 * A UD receive starts with 40 bytes of GRH, and the datagram must land
 * somewhere even when the rdm layer has no buffer posted (swsrd then
 * refuses it with an RNR packet, which needs the sender's header). So
 * the device keeps its own registered ring posted to the QP, one slot per
 * receive (GRH + swsrd header + MTU), and copies each payload into the
 * buffer the rdm layer posted. Sends are copied into registered slots too,
 * and carry the sender's connection id as immediate data
 * (ibv_wr_send_imm), which with the GRH's source GID and the source QPN
 * names the sender; a receive without one is malformed and dropped.
 * A sleeping thread waits on the CQ's completion channel
 * (rdmx_dev_ibv_chan.h) and swsrd's next timer.
 * Every rdma-core call goes through g_rdmx_ibv (rdmx_ibv.h).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <netinet/in.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_dev_ibv.h"
#include "rdmx_dev_ibv_chan.h"
#include "rdmx_dgram.h"

/* Bytes of the Global Routing Header at the start of every UD receive. */
#define RDMX_VERBS_GRH		40
/* Where the source GID sits in a GRH, and the source IPv4 address when
 * the GRH space holds an IPv4 header instead (RoCE v2 over IPv4). */
#define RDMX_VERBS_GRH_SGID	8
#define RDMX_VERBS_GRH_IPV4_SRC	32
/* Work completions taken per poll at most. */
#define RDMX_VERBS_POLL_MAX	32

/* What a work request is, in the low bit of its wr_id; the rest a slot. */
#define RDMX_VERBS_WR_RECV	1u

struct rdmx_verbs_dev {
	struct rdmx_dgram	dg;
	struct rdmx_ibv_core	core;
	struct ibv_cq_ex	*cq;
	struct rdmx_ibv_chan	chan;		/* the CQ's completion channel */
	struct ibv_qp		*qp;
	struct ibv_qp_ex	*qpx;
	struct rdmx_ibv_addr	addr;
	__be32			imm;		/* our connection id, as sent */
	bool			ipv4_grh;	/* RoCE v2 with an IPv4 GID */
	size_t			sq_cnt;		/* sends in the QP's send queue */
	struct rdmx_ibv_ahc	ahc;
	struct rdmx_ibv_slab	tx_slab;	/* swsrd header + payload copies */
	struct rdmx_ibv_slab	rx_slab;	/* GRH + header + payload, posted */
};

static struct rdmx_verbs_dev *rdmx_verbs_dev(struct rdmx_dev *dev)
{
	return rdmx_container_of(dev, struct rdmx_verbs_dev, dg.dev);
}

/* Any verbs device that is not EFA, with its UD payload (less swsrd's). */
static bool rdmx_verbs_probe(struct ibv_context *ctx,
			     const struct ibv_port_attr *port, size_t *mtu)
{
	struct efadv_device_attr attr;
	size_t bytes = (size_t) 128 << port->active_mtu;

	if (!g_rdmx_ibv->efadv_query_device(ctx, &attr, sizeof(attr)))
		return false;
	if (port->active_mtu < IBV_MTU_256 || port->active_mtu > IBV_MTU_4096)
		return false;
	*mtu = bytes - sizeof(struct rdmx_wire_srd);
	return true;
}

static const struct rdmx_ibv_kind rdmx_verbs_kind = {
	.name = "verbs",
	.probe = rdmx_verbs_probe,
};

static uint32_t rdmx_verbs_addr_format(const void *canon)
{
	(void) canon;
	return FI_ADDR_IB_UD;
}

static void rdmx_verbs_addr_str(const void *canon, char *buf, size_t len)
{
	rdmx_ibv_addr_print("fi_addr_ib_ud", canon, buf, len);
}

static int rdmx_verbs_domains(const void *src, const void *dest,
			      struct rdmx_dev_domain *out, size_t max)
{
	return rdmx_ibv_domains(&rdmx_verbs_kind, src, dest, out, max);
}

/* A handle's hardware part: the address handle of its GID. */
static int rdmx_verbs_raw_create(struct rdmx_dgram *dg, struct rdmx_dgram_ah *ah)
{
	struct rdmx_verbs_dev *verbs = rdmx_container_of(dg, struct rdmx_verbs_dev, dg);
	const struct rdmx_ibv_addr *addr = (const void *) ah->addr;
	int ret;

	ah->raw = rdmx_ibv_ahc_get(&verbs->ahc, &verbs->core, addr->gid, &ret);
	return ah->raw ? 0 : ret;
}

static void rdmx_verbs_raw_destroy(struct rdmx_dgram *dg, struct rdmx_dgram_ah *ah)
{
	struct rdmx_verbs_dev *verbs = rdmx_container_of(dg, struct rdmx_verbs_dev, dg);

	rdmx_ibv_ahc_put(&verbs->ahc, ah->raw);
}

/* swsrd's transmit: one UD send of a copy of the datagram. */
static int rdmx_verbs_xmit(struct rdmx_dgram *dg, struct rdmx_dgram_ah *ah,
			   unsigned path, const struct iovec *iov, size_t iov_cnt)
{
	struct rdmx_verbs_dev *verbs = rdmx_container_of(dg, struct rdmx_verbs_dev, dg);
	struct rdmx_ibv_gid_ah *gah = ah->raw;
	struct ibv_sge sge;
	uint32_t slot;
	int ret;

	(void) path;	/* one: the queue pair's */
	if (verbs->sq_cnt == dg->dev.caps.sq_size ||
	    !rdmx_ibv_slab_alloc(&verbs->tx_slab, &slot))
		return -FI_EAGAIN;
	sge.addr = (uintptr_t) rdmx_ibv_slab_buf(&verbs->tx_slab, slot);
	sge.length = (uint32_t) rdmx_copy_from_iov(
		rdmx_ibv_slab_buf(&verbs->tx_slab, slot), iov, iov_cnt);
	sge.lkey = verbs->tx_slab.mr->lkey;
	g_rdmx_ibv->wr_start(verbs->qpx);
	verbs->qpx->wr_id = (uint64_t) slot << 1;
	verbs->qpx->wr_flags = IBV_SEND_SIGNALED;
	g_rdmx_ibv->wr_send_imm(verbs->qpx, verbs->imm);
	g_rdmx_ibv->wr_set_ud_addr(verbs->qpx, gah->ah,
				   rdmx_ibv_addr_qpn((const void *) ah->addr),
				   RDMX_IBV_QKEY);
	g_rdmx_ibv->wr_set_sge_list(verbs->qpx, 1, &sge);
	ret = g_rdmx_ibv->wr_complete(verbs->qpx);
	if (ret) {
		rdmx_ibv_slab_release(&verbs->tx_slab, slot);
		return -FI_EAGAIN;	/* a loss: swsrd sends it again */
	}
	verbs->sq_cnt++;
	return 0;
}

/* Posts ring slot idx to the QP's receive queue. */
static int rdmx_verbs_rx_post(struct rdmx_verbs_dev *verbs, uint32_t idx)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t) rdmx_ibv_slab_buf(&verbs->rx_slab, idx),
		.length = (uint32_t) verbs->rx_slab.slot_size,
		.lkey = verbs->rx_slab.mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = ((uint64_t) idx << 1) | RDMX_VERBS_WR_RECV,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;
	int ret = g_rdmx_ibv->post_recv(verbs->qp, &wr, &bad);

	if (ret)
		RDMX_WARN(FI_LOG_EP_DATA, "verbs: ibv_post_recv: %s\n", strerror(ret));
	return -ret;
}

/* The sender's GID, from the GRH space of a received slot. */
static void rdmx_verbs_rx_gid(const struct rdmx_verbs_dev *verbs,
			      const uint8_t *grh, union ibv_gid *gid)
{
	if (!verbs->ipv4_grh) {
		memcpy(gid->raw, grh + RDMX_VERBS_GRH_SGID, sizeof(gid->raw));
		return;
	}
	/* An IPv4-mapped GID (::ffff:a.b.c.d), as RoCE v2 names IPv4 ports. */
	memset(gid->raw, 0, 10);
	gid->raw[10] = gid->raw[11] = 0xff;
	memcpy(gid->raw + 12, grh + RDMX_VERBS_GRH_IPV4_SRC, 4);
}

/* Reads the CQ's current completion into wc. */
static void rdmx_verbs_wc_read(struct rdmx_ibv_chan *chan, struct rdmx_ibv_wc *wc)
{
	struct rdmx_verbs_dev *verbs = rdmx_container_of(chan, struct rdmx_verbs_dev, chan);
	struct ibv_cq_ex *cq = verbs->cq;

	wc->wr_id = cq->wr_id;
	wc->status = cq->status;
	wc->connid = 0;
	if (!(wc->wr_id & RDMX_VERBS_WR_RECV) || wc->status != IBV_WC_SUCCESS)
		return;
	wc->byte_len = g_rdmx_ibv->wc_read_byte_len(cq);
	wc->grh = g_rdmx_ibv->wc_read_wc_flags(cq) & IBV_WC_GRH;
	(void) rdmx_ibv_rx_connid(cq, &wc->connid);	/* 0 stays: none */
	wc->src_qp = g_rdmx_ibv->wc_read_src_qp(cq);
}

/*
 * Hands received slot idx (completion wc) to swsrd, its payload copied
 * into a buffer the rdm layer posted (if any); true when it made a
 * completion.
 */
static bool rdmx_verbs_rx_one(struct rdmx_verbs_dev *verbs, const struct rdmx_ibv_wc *wc,
			      uint32_t idx, uint64_t now, struct rdmx_dev_cqe *cqe)
{
	const size_t hdr = sizeof(struct rdmx_wire_srd);
	uint8_t *pkt = rdmx_ibv_slab_buf(&verbs->rx_slab, idx) + RDMX_VERBS_GRH;
	uint32_t len = wc->byte_len;
	struct rdmx_dgram_buf buf;
	struct rdmx_ibv_addr src;
	bool have, cut = false;
	union ibv_gid gid;

	if (wc->status != IBV_WC_SUCCESS || len < RDMX_VERBS_GRH || !wc->grh ||
	    !wc->connid) {
		verbs->dg.dev.stats.rx_malformed++;
		return false;
	}
	len -= RDMX_VERBS_GRH;
	rdmx_verbs_rx_gid(verbs, pkt - RDMX_VERBS_GRH, &gid);
	rdmx_ibv_addr_make(&src, &gid, wc->src_qp, wc->connid);
	have = rdmx_dgram_buf_take(&verbs->dg, &buf);
	if (have && len > hdr) {
		cut = len - hdr > buf.len;
		memcpy(buf.buf, pkt + hdr, cut ? buf.len : len - hdr);
	}
	if (rdmx_dgram_rx(&verbs->dg, (const struct rdmx_wire_srd *) pkt, len, &src,
			  have ? &buf : NULL, cut, now, cqe))
		return true;
	if (have)
		rdmx_dgram_buf_return(&verbs->dg, &buf);
	return false;
}

/*
 * Handles work completion wc: a send's slot goes back, a received slot
 * to swsrd and then to the queue pair again. True when it made *cqe.
 */
static bool rdmx_verbs_wc_handle(struct rdmx_verbs_dev *verbs,
				 const struct rdmx_ibv_wc *wc, uint64_t now,
				 struct rdmx_dev_cqe *cqe)
{
	uint32_t idx = (uint32_t) (wc->wr_id >> 1);
	bool made;

	if (!(wc->wr_id & RDMX_VERBS_WR_RECV)) {
		verbs->sq_cnt--;
		rdmx_ibv_slab_release(&verbs->tx_slab, idx);
		return false;
	}
	made = rdmx_verbs_rx_one(verbs, wc, idx, now, cqe);
	(void) rdmx_verbs_rx_post(verbs, idx);
	return made;
}

static int rdmx_verbs_poll_cq(struct rdmx_dev *dev, struct rdmx_dev_cqe *cqe, int max)
{
	struct rdmx_verbs_dev *verbs = rdmx_verbs_dev(dev);
	struct ibv_poll_cq_attr attr = { 0 };
	uint64_t now = rdmx_clock_ns();
	/* Receives first, leaving room for sends swsrd finished. */
	int room = max - rdmx_dgram_done_keep(&verbs->dg, max);
	const struct rdmx_ibv_wc *kept;
	struct rdmx_ibv_wc wc;
	int done = 0, polled = 0;

	rdmx_ibv_chan_wake(&verbs->chan);
	/* What wait_arm found comes first. */
	if (room > 0 && (kept = rdmx_ibv_chan_take(&verbs->chan)) &&
	    rdmx_verbs_wc_handle(verbs, kept, now, &cqe[done]))
		done++;
	if (done < room && !g_rdmx_ibv->start_poll(verbs->cq, &attr)) {
		do {
			rdmx_verbs_wc_read(&verbs->chan, &wc);
			if (rdmx_verbs_wc_handle(verbs, &wc, now, &cqe[done]))
				done++;
		} while (++polled < RDMX_VERBS_POLL_MAX && done < room &&
			 !g_rdmx_ibv->next_poll(verbs->cq));
		g_rdmx_ibv->end_poll(verbs->cq);
	}
	rdmx_swsrd_progress(&verbs->dg.srd, now);
	return done + rdmx_dgram_report(&verbs->dg, cqe + done, max - done);
}

static int rdmx_verbs_wait_fd(struct rdmx_dev *dev)
{
	return rdmx_ibv_chan_fd(&rdmx_verbs_dev(dev)->chan);
}

/* swsrd's part (its timers, sends to report), then the CQ's. */
static int rdmx_verbs_wait_arm(struct rdmx_dev *dev, uint64_t *due_p)
{
	struct rdmx_verbs_dev *verbs = rdmx_verbs_dev(dev);
	int ret = rdmx_dgram_wait_arm(&verbs->dg, due_p);

	return ret ? ret : rdmx_ibv_chan_arm(&verbs->chan, verbs->cq, due_p);
}

/*
 * Creates the completion channel, the CQ (with the channel where it takes
 * one) and the UD queue pair, and brings the QP to RTS.
 */
static int rdmx_verbs_qp_open(struct rdmx_verbs_dev *verbs)
{
	struct ibv_cq_init_attr_ex cq_attr = {
		.cqe = (uint32_t) (verbs->dg.dev.caps.sq_size + verbs->dg.dev.caps.rq_size),
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_SRC_QP |
			    IBV_WC_EX_WITH_IMM,
	};
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_UD,
		.cap = {
			.max_send_wr = (uint32_t) verbs->dg.dev.caps.sq_size,
			.max_recv_wr = (uint32_t) verbs->dg.dev.caps.rq_size,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.pd = verbs->core.pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND_WITH_IMM,
	};
	int ret;

	rdmx_ibv_chan_open(&verbs->chan, &verbs->core, "verbs", rdmx_verbs_wc_read);
	cq_attr.channel = verbs->chan.ch;
	do
		verbs->cq = g_rdmx_ibv->create_cq_ex(verbs->core.ctx, &cq_attr);
	while (!verbs->cq && rdmx_ibv_chan_refused(&verbs->chan, &cq_attr));
	if (!verbs->cq) {
		ret = errno ? -errno : -FI_EIO;
		RDMX_WARN(FI_LOG_EP_CTRL, "verbs: ibv_create_cq_ex: %s\n",
			  fi_strerror(-ret));
		goto err_close_chan;
	}
	attr.send_cq = attr.recv_cq = ibv_cq_ex_to_cq(verbs->cq);
	verbs->qp = g_rdmx_ibv->create_qp_ex(verbs->core.ctx, &attr);
	if (!verbs->qp) {
		ret = errno ? -errno : -FI_EIO;
		RDMX_WARN(FI_LOG_EP_CTRL, "verbs: ibv_create_qp_ex: %s\n",
			  fi_strerror(-ret));
		goto err_close_chan;
	}
	verbs->qpx = g_rdmx_ibv->qp_to_qp_ex(verbs->qp);
	ret = rdmx_ibv_qp_ready(verbs->qp, -1);
	if (ret)
		goto err_destroy_qp;
	return 0;

err_destroy_qp:
	g_rdmx_ibv->destroy_qp(verbs->qp);
err_close_chan:
	/* With the CQ, if it was made. */
	rdmx_ibv_chan_close(&verbs->chan, verbs->cq);
	return ret;
}

static void rdmx_verbs_qp_close(struct rdmx_verbs_dev *verbs)
{
	g_rdmx_ibv->destroy_qp(verbs->qp);
	rdmx_ibv_chan_close(&verbs->chan, verbs->cq);
}

/* Registers the send and receive slots and posts every receive slot. */
static int rdmx_verbs_slabs_open(struct rdmx_verbs_dev *verbs)
{
	size_t pkt = sizeof(struct rdmx_wire_srd) + verbs->dg.dev.caps.mtu;
	int ret;

	ret = rdmx_ibv_slab_construct(&verbs->tx_slab, verbs->core.pd, pkt,
				      verbs->dg.dev.caps.sq_size);
	if (ret)
		return ret;
	ret = rdmx_ibv_slab_construct(&verbs->rx_slab, verbs->core.pd,
				      RDMX_VERBS_GRH + pkt, verbs->dg.dev.caps.rq_size);
	if (ret)
		goto err_destruct_tx;
	for (uint32_t i = 0; i < verbs->dg.dev.caps.rq_size; i++) {
		ret = rdmx_verbs_rx_post(verbs, i);
		if (ret)
			goto err_destruct_rx;
	}
	return 0;

err_destruct_rx:
	rdmx_ibv_slab_destruct(&verbs->rx_slab);
err_destruct_tx:
	rdmx_ibv_slab_destruct(&verbs->tx_slab);
	return ret;
}

static const struct rdmx_dgram_ops rdmx_verbs_dgram_ops = {
	.xmit = rdmx_verbs_xmit,
	.raw_create = rdmx_verbs_raw_create,
	.raw_destroy = rdmx_verbs_raw_destroy,
};

/*
 * Queue sizes within what the device takes, and its max_ah (*max_ah);
 * 0 or -FI_E*.
 */
static int rdmx_verbs_caps(struct rdmx_verbs_dev *verbs,
			   const struct rdmx_dev_attr *attr, size_t *max_ah)
{
	struct ibv_device_attr dattr;
	int ret = rdmx_ibv_core_query(&verbs->core, "verbs", &dattr);

	if (ret)
		return ret;
	verbs->dg.dev.caps.mtu = verbs->core.mtu;
	verbs->dg.dev.caps.sq_size = RDMX_MIN(attr->sq_size, (size_t) dattr.max_qp_wr);
	verbs->dg.dev.caps.rq_size = RDMX_MIN(attr->rq_size, (size_t) dattr.max_qp_wr);
	verbs->dg.dev.caps.flags = RDMX_DEV_CAP_RELIABLE;
	verbs->ipv4_grh = IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)
					       verbs->core.gid.raw);
	*max_ah = (size_t) dattr.max_ah;
	return 0;
}

static int rdmx_verbs_open(const struct rdmx_dev_attr *attr, struct rdmx_dev **dev_p)
{
	struct rdmx_verbs_dev *verbs;
	size_t max_ah;
	int ret;

	verbs = calloc(1, sizeof(*verbs));
	if (!verbs)
		return -FI_ENOMEM;
	ret = rdmx_ibv_core_open(&rdmx_verbs_kind, attr->src_addr, &verbs->core);
	if (ret)
		goto err_free;
	ret = rdmx_verbs_caps(verbs, attr, &max_ah);
	if (ret)
		goto err_close_core;
	/* Handles go when the rdm layer drops them: at max_ah, -FI_ENOSPC. */
	ret = rdmx_ibv_ahc_construct(&verbs->ahc, false, max_ah);
	if (ret)
		goto err_close_core;
	ret = rdmx_verbs_qp_open(verbs);
	if (ret)
		goto err_destruct_ahc;
	ret = rdmx_verbs_slabs_open(verbs);
	if (ret)
		goto err_close_qp;
	ret = rdmx_dgram_construct(&verbs->dg, &rdmx_dev_verbs_ops,
				   &rdmx_verbs_dgram_ops, attr, 1);
	if (ret)
		goto err_close_slabs;
	verbs->imm = rdmx_ibv_qp_name(&verbs->core, verbs->qp, &verbs->addr);
	RDMX_INFO(FI_LOG_EP_CTRL, "verbs: ud qp 0x%x (connection 0x%x) on %s, mtu %zu\n",
		  verbs->qp->qp_num, be32toh(verbs->imm),
		  g_rdmx_ibv->get_device_name(verbs->core.ctx->device),
		  verbs->dg.dev.caps.mtu);
	*dev_p = &verbs->dg.dev;
	return 0;

err_close_slabs:
	rdmx_ibv_slab_destruct(&verbs->rx_slab);
	rdmx_ibv_slab_destruct(&verbs->tx_slab);
err_close_qp:
	rdmx_verbs_qp_close(verbs);
err_destruct_ahc:
	rdmx_ibv_ahc_destruct(&verbs->ahc);
err_close_core:
	rdmx_ibv_core_close(&verbs->core);
err_free:
	free(verbs);
	return ret;
}

static void rdmx_verbs_close(struct rdmx_dev *dev)
{
	struct rdmx_verbs_dev *verbs = rdmx_verbs_dev(dev);

	/* The acknowledgements owed go to the queue pair while it exists. */
	rdmx_swsrd_flush_acks(&verbs->dg.srd);
	/* First the handles (their hardware parts go back to the cache). */
	rdmx_dgram_destruct(&verbs->dg);
	rdmx_verbs_qp_close(verbs);
	rdmx_ibv_slab_destruct(&verbs->rx_slab);
	rdmx_ibv_slab_destruct(&verbs->tx_slab);
	rdmx_ibv_ahc_destruct(&verbs->ahc);
	rdmx_ibv_core_close(&verbs->core);
	free(verbs);
}

static void rdmx_verbs_getname(struct rdmx_dev *dev, void *canon)
{
	memcpy(canon, &rdmx_verbs_dev(dev)->addr, sizeof(struct rdmx_ibv_addr));
}

const struct rdmx_dev_ops rdmx_dev_verbs_ops = {
	.name = "verbs",
	.addr_size = sizeof(struct rdmx_ibv_addr),
	.addr_format = rdmx_verbs_addr_format,
	.addr_canon = rdmx_ibv_addr_check,
	.addr_len = rdmx_ibv_addr_size,
	.addr_str = rdmx_verbs_addr_str,
	.resolve = rdmx_ibv_resolve,
	.domains = rdmx_verbs_domains,
	.open = rdmx_verbs_open,
	.close = rdmx_verbs_close,
	.getname = rdmx_verbs_getname,
	.ah_create = rdmx_dgram_ah_create,
	.ah_destroy = rdmx_dgram_ah_destroy,
	.ah_reset = rdmx_dgram_ah_reset,
	.ah_peer = rdmx_dgram_ah_peer,
	.post_send = rdmx_dgram_post_send,
	.post_send_segs = rdmx_dgram_post_send_segs,
	.post_recv = rdmx_dgram_post_recv,
	.poll_cq = rdmx_verbs_poll_cq,
	.wait_fd = rdmx_verbs_wait_fd,
	.wait_arm = rdmx_verbs_wait_arm,
};
