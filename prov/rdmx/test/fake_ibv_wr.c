/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: the fake rdma-core's work requests (see fake_ibv.h and
 * the list of what it models at the top of fake_ibv.c): the batch between
 * ibv_wr_start and ibv_wr_complete, and carrying each request out on the
 * one fake fabric, delivery to the destination's receive queue and RDMA
 * read included. SRD delivers in no particular order, but the fake
 * delivers at once, in posting order, unless a test holds a queue pair's
 * sends back (fake_ibv_hold) and releases them in another order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake_ibv_int.h"

/*
 * The ibv_wc_status libefa reports for each EFA status code (providers/
 * efa/verbs.c, to_ibv_status); a code it does not list is GENERAL_ERR.
 */
static const enum ibv_wc_status fake_efa_folds[] = {
	[RDMX_EFA_IO_FLUSHED] = IBV_WC_WR_FLUSH_ERR,
	[RDMX_EFA_IO_LOCAL_ERROR_QP_INTERNAL_ERROR] = IBV_WC_LOC_QP_OP_ERR,
	[RDMX_EFA_IO_LOCAL_ERROR_UNSUPPORTED_OP] = IBV_WC_LOC_QP_OP_ERR,
	[RDMX_EFA_IO_LOCAL_ERROR_INVALID_AH] = IBV_WC_LOC_QP_OP_ERR,
	[RDMX_EFA_IO_LOCAL_ERROR_INVALID_LKEY] = IBV_WC_LOC_PROT_ERR,
	[RDMX_EFA_IO_LOCAL_ERROR_BAD_LENGTH] = IBV_WC_LOC_LEN_ERR,
	[RDMX_EFA_IO_REMOTE_ERROR_BAD_ADDRESS] = IBV_WC_REM_ACCESS_ERR,
	[RDMX_EFA_IO_REMOTE_ERROR_ABORT] = IBV_WC_REM_ABORT_ERR,
	[RDMX_EFA_IO_REMOTE_ERROR_BAD_DEST_QPN] = IBV_WC_REM_INV_RD_REQ_ERR,
	[RDMX_EFA_IO_REMOTE_ERROR_RNR] = IBV_WC_RNR_RETRY_EXC_ERR,
	[RDMX_EFA_IO_REMOTE_ERROR_BAD_LENGTH] = IBV_WC_REM_INV_REQ_ERR,
	[RDMX_EFA_IO_REMOTE_ERROR_BAD_STATUS] = IBV_WC_BAD_RESP_ERR,
	[RDMX_EFA_IO_LOCAL_ERROR_UNRESP_REMOTE] = IBV_WC_RESP_TIMEOUT_ERR,
	[RDMX_EFA_IO_REMOTE_ERROR_UNKNOWN_PEER] = IBV_WC_REM_OP_ERR,
	[RDMX_EFA_IO_LOCAL_ERROR_UNREACH_REMOTE] = IBV_WC_RESP_TIMEOUT_ERR,
	[RDMX_EFA_IO_REMOTE_ERROR_FEATURE_MISMATCH] = IBV_WC_REM_INV_REQ_ERR,
};

enum ibv_wc_status fake_efa_fold(uint32_t code)
{
	if (code == RDMX_EFA_IO_OK)
		return IBV_WC_SUCCESS;
	/* IBV_WC_SUCCESS is 0: the codes not listed above. */
	if (code < RDMX_ARRAY_SIZE(fake_efa_folds) && fake_efa_folds[code])
		return fake_efa_folds[code];
	return IBV_WC_GENERAL_ERR;
}

/*
 * Fails completion wc of a queue pair as its device reports it: an SRD
 * queue pair with EFA status code efa (libefa's folded ibv_wc_status,
 * the code as vendor error), a UD one with status ud.
 */
static void fake_wc_fail(const struct fake_qp *qp, struct fake_wc *wc,
			 enum ibv_wc_status ud, uint32_t efa)
{
	wc->status = qp->srd ? fake_efa_fold(efa) : ud;
	wc->vendor_err = qp->srd ? efa : 0;
}

static struct fake_wr *fake_wr_cur(struct ibv_qp_ex *qpx)
{
	struct fake_qp *qp = (struct fake_qp *) qpx;

	return qp->batch_cnt ? &qp->batch[qp->batch_cnt - 1] : NULL;
}

void fake_wr_start(struct ibv_qp_ex *qpx)
{
	struct fake_qp *qp = (struct fake_qp *) qpx;

	qp->batch_cnt = 0;
	qp->batch_err = 0;
}

/* Opens the next work request of the batch with the QP's wr_id/flags. */
static struct fake_wr *fake_wr_new(struct ibv_qp_ex *qpx)
{
	struct fake_qp *qp = (struct fake_qp *) qpx;
	struct fake_wr *wr;

	if (qp->batch_cnt == FAKE_BATCH_MAX) {
		qp->batch_err = ENOMEM;
		return NULL;
	}
	wr = &qp->batch[qp->batch_cnt++];
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = qpx->wr_id;
	wr->flags = qpx->wr_flags;
	return wr;
}

void fake_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct fake_wr *wr;

	if (!(((struct fake_qp *) qpx)->send_ops & IBV_QP_EX_WITH_SEND_WITH_IMM))
		fake_misuse("ibv_wr_send_imm without IBV_QP_EX_WITH_SEND_WITH_IMM");
	wr = fake_wr_new(qpx);
	if (!wr)
		return;
	wr->imm = true;
	wr->imm_data = imm_data;
}

void fake_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr)
{
	struct fake_qp *qp = (struct fake_qp *) qpx;
	struct fake_wr *wr;

	if (!(qp->send_ops & IBV_QP_EX_WITH_RDMA_READ))
		fake_misuse("ibv_wr_rdma_read without IBV_QP_EX_WITH_RDMA_READ");
	wr = fake_wr_new(qpx);
	if (!wr)
		return;
	if (!(qp->fd->cfg.efa.device_caps & EFADV_DEVICE_ATTR_CAPS_RDMA_READ))
		qp->batch_err = EOPNOTSUPP;
	wr->read = true;
	wr->rkey = rkey;
	wr->raddr = raddr;
}

void fake_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
			 uint32_t qpn, uint32_t qkey)
{
	struct fake_wr *wr = fake_wr_cur(qpx);

	if (!wr)
		return;
	wr->ah = ah;
	wr->qpn = qpn;
	wr->qkey = qkey;
}

void fake_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n,
			  const struct ibv_sge *sge)
{
	struct fake_qp *qp = (struct fake_qp *) qpx;
	struct fake_wr *wr = fake_wr_cur(qpx);

	if (!wr)
		return;
	if (n > qp->cap.max_send_sge || n > FAKE_SGE_MAX) {
		qp->batch_err = EINVAL;
		return;
	}
	memcpy(wr->sge, sge, n * sizeof(*sge));
	wr->num_sge = n;
}

void fake_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
				  const struct ibv_data_buf *buf)
{
	struct fake_qp *qp = (struct fake_qp *) qpx;
	struct fake_wr *wr = fake_wr_cur(qpx);
	size_t len = 0;

	if (!wr)
		return;
	for (size_t i = 0; i < n; i++)
		len += buf[i].length;
	if (len > qp->cap.max_inline_data) {
		qp->batch_err = EINVAL;
		return;
	}
	wr->inl = malloc(len ? len : 1);
	wr->inl_len = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(wr->inl + wr->inl_len, buf[i].addr, buf[i].length);
		wr->inl_len += buf[i].length;
	}
}

/* The queue pair a work request goes to, or NULL. */
static struct fake_qp *fake_dest(const struct fake_wr *wr)
{
	const struct fake_ah *ah = (const struct fake_ah *) wr->ah;

	for (struct fake_qp *q = g_fake.qps; q; q = q->next)
		if (q->qpx.qp_base.qp_num == wr->qpn &&
		    !memcmp(q->fd->cfg.gid, ah->dgid.raw, 16) &&
		    q->qpx.qp_base.state >= IBV_QPS_RTR)
			return q;
	return NULL;
}

/* Gathers a send's bytes (NULL, wc failed, when an SGE is bad). */
static uint8_t *fake_gather(struct fake_qp *qp, const struct fake_wr *wr,
			    size_t *len, struct fake_wc *wc)
{
	uint8_t *data;

	if (wr->inl) {
		*len = wr->inl_len;
		data = malloc(*len ? *len : 1);
		memcpy(data, wr->inl, *len);
		return data;
	}
	*len = 0;
	for (size_t i = 0; i < wr->num_sge; i++) {
		if (!fake_mr_find(qp->qpx.qp_base.pd, wr->sge[i].lkey,
				  wr->sge[i].addr, wr->sge[i].length, 0)) {
			fake_wc_fail(qp, wc, IBV_WC_LOC_PROT_ERR,
				     RDMX_EFA_IO_LOCAL_ERROR_INVALID_LKEY);
			return NULL;
		}
		*len += wr->sge[i].length;
	}
	data = malloc(*len ? *len : 1);
	*len = 0;
	for (size_t i = 0; i < wr->num_sge; i++) {
		memcpy(data + *len, (void *) (uintptr_t) wr->sge[i].addr,
		       wr->sge[i].length);
		*len += wr->sge[i].length;
	}
	return data;
}

/* The AH number dst's PD has for gid (one per GID), or unknown. */
static uint16_t fake_ahn_of(struct fake_qp *dst, const uint8_t *gid)
{
	struct fake_ah *ah = fake_ah_find(dst->qpx.qp_base.pd, gid);

	return ah ? ah->ahn : FAKE_AH_UNKNOWN;
}

/* Whether fake_ibv_inject_no_imm strips this send's immediate data. */
static bool fake_imm_stripped(const struct fake_qp *src)
{
	if (!g_fake.no_imm_cnt || g_fake.no_imm_qpn != src->qpx.qp_base.qp_num)
		return false;
	g_fake.no_imm_cnt--;
	return true;
}

/*
 * Delivers send wr of data to dst's oldest receive; a failure the sender
 * hears of goes to its completion swc.
 */
static void fake_deliver(struct fake_qp *src, struct fake_qp *dst,
			 const struct fake_wr *wr, const uint8_t *data, size_t len,
			 struct fake_wc *swc)
{
	struct fake_recv *r = &dst->rq[dst->rq_head];
	struct fake_wc wc = { .opcode = IBV_WC_RECV, .src_qp = src->qpx.qp_base.qp_num };
	uint8_t grh[40] = { 0 };
	size_t off = 0, room = 0, grh_len = src->srd ? 0 : sizeof(grh);
	size_t total = grh_len + len;

	dst->rq_head = (dst->rq_head + 1) % dst->cap.max_recv_wr;
	dst->rq_cnt--;
	memcpy(wc.sgid.raw, src->fd->cfg.gid, 16);
	if (src->fd->cfg.kind == FAKE_IBV_ROCE)
		memcpy(grh + 32, src->fd->cfg.gid + 12, 4);
	else
		memcpy(grh + 8, src->fd->cfg.gid, 16);
	wc.wr_id = r->wr_id;
	if (g_fake.rx_fail_cnt && g_fake.rx_fail_qpn == dst->qpx.qp_base.qp_num) {
		g_fake.rx_fail_cnt--;
		wc.status = g_fake.rx_fail_status;
		fake_cq_push(dst->qpx.qp_base.recv_cq, &wc);
		return;
	}
	wc.slid = dst->srd ? fake_ahn_of(dst, src->fd->cfg.gid) : 0;
	wc.wc_flags = src->srd ? 0 : IBV_WC_GRH;
	if (wr->imm && !fake_imm_stripped(src)) {
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = wr->imm_data;
	}
	for (int i = 0; i < r->num_sge; i++) {
		if (!fake_mr_find(dst->qpx.qp_base.pd, r->sge[i].lkey, r->sge[i].addr,
				  r->sge[i].length, IBV_ACCESS_LOCAL_WRITE)) {
			fake_wc_fail(dst, &wc, IBV_WC_LOC_PROT_ERR,
				     RDMX_EFA_IO_LOCAL_ERROR_INVALID_LKEY);
			fake_cq_push(dst->qpx.qp_base.recv_cq, &wc);
			return;
		}
		room += r->sge[i].length;
	}
	if (total > room) {
		/* SRD reports the short receive to the sender too. */
		fake_wc_fail(dst, &wc, IBV_WC_LOC_LEN_ERR,
			     RDMX_EFA_IO_LOCAL_ERROR_BAD_LENGTH);
		fake_cq_push(dst->qpx.qp_base.recv_cq, &wc);
		if (src->srd)
			fake_wc_fail(src, swc, IBV_WC_SUCCESS,
				     RDMX_EFA_IO_REMOTE_ERROR_BAD_LENGTH);
		return;
	}
	for (int i = 0; i < r->num_sge && off < total; i++) {
		uint8_t *to = (uint8_t *) (uintptr_t) r->sge[i].addr;

		for (size_t j = 0; j < r->sge[i].length && off < total; j++, off++)
			to[j] = off < grh_len ? grh[off] : data[off - grh_len];
	}
	wc.byte_len = (uint32_t) total;
	fake_cq_push(dst->qpx.qp_base.recv_cq, &wc);
}

/* An RDMA read of wr from dst's memory, failing wc when it cannot. */
static void fake_read(struct fake_qp *src, struct fake_qp *dst,
		      const struct fake_wr *wr, struct fake_wc *wc)
{
	size_t off = 0, len = 0;

	for (size_t i = 0; i < wr->num_sge; i++)
		len += wr->sge[i].length;
	if (!fake_mr_find(dst->qpx.qp_base.pd, wr->rkey, wr->raddr, len,
			  IBV_ACCESS_REMOTE_READ)) {
		fake_wc_fail(src, wc, IBV_WC_REM_ACCESS_ERR,
			     RDMX_EFA_IO_REMOTE_ERROR_BAD_ADDRESS);
		return;
	}
	for (size_t i = 0; i < wr->num_sge; i++) {
		if (!fake_mr_find(src->qpx.qp_base.pd, wr->sge[i].lkey, wr->sge[i].addr,
				  wr->sge[i].length, IBV_ACCESS_LOCAL_WRITE)) {
			fake_wc_fail(src, wc, IBV_WC_LOC_PROT_ERR,
				     RDMX_EFA_IO_LOCAL_ERROR_INVALID_LKEY);
			return;
		}
	}
	for (size_t i = 0; i < wr->num_sge; i++) {
		memcpy((void *) (uintptr_t) wr->sge[i].addr,
		       (const uint8_t *) (uintptr_t) wr->raddr + off, wr->sge[i].length);
		off += wr->sge[i].length;
	}
	wc->byte_len = (uint32_t) len;
}

/* Carries work request wr of qp out; a failure goes to the sender's wc. */
static void fake_carry(struct fake_qp *qp, const struct fake_wr *wr, struct fake_wc *wc)
{
	struct fake_qp *dst = fake_dest(wr);
	uint8_t *data = NULL;
	size_t len = 0;

	if (!dst || dst->qkey != wr->qkey) {
		/* UD drops it unseen; SRD reports the bad destination. */
		if (qp->srd)
			fake_wc_fail(qp, wc, IBV_WC_SUCCESS,
				     RDMX_EFA_IO_REMOTE_ERROR_BAD_DEST_QPN);
	} else if (wr->read) {
		fake_read(qp, dst, wr, wc);
	} else if ((data = fake_gather(qp, wr, &len, wc))) {
		if (!qp->srd && len > (size_t) 128 << qp->fd->cfg.active_mtu)
			wc->status = IBV_WC_LOC_LEN_ERR;
		else if (dst->rq_cnt)
			fake_deliver(qp, dst, wr, data, len, wc);
		else if (qp->srd)
			fake_wc_fail(qp, wc, IBV_WC_SUCCESS,
				     RDMX_EFA_IO_REMOTE_ERROR_RNR);
	}
	free(data);
}

/*
 * Writes the sender's completion wc of wr when it asked for one or
 * failed; reserved: wr held its send queue entry while it was held.
 */
static void fake_send_done(struct fake_qp *qp, const struct fake_wr *wr,
			   struct fake_wc *wc, bool reserved)
{
	if ((wr->flags & IBV_SEND_SIGNALED) || wc->status != IBV_WC_SUCCESS) {
		qp->sq_out += !reserved;
		wc->sq_qpn = qp->qpx.qp_base.qp_num;
		fake_cq_push(qp->qpx.qp_base.send_cq, wc);
	} else if (reserved) {
		qp->sq_out--;
	}
}

/* The sender's completion of wr, successful until something fails it. */
static struct fake_wc fake_wc_of(const struct fake_wr *wr)
{
	return (struct fake_wc) {
		.wr_id = wr->wr_id,
		.opcode = wr->read ? IBV_WC_RDMA_READ : IBV_WC_SEND,
	};
}

/*
 * Whether fake_ibv_hold keeps send wr of qp back. A held send keeps its
 * send queue entry, as one the device has not finished does.
 */
static bool fake_hold(struct fake_qp *qp, const struct fake_wr *wr)
{
	struct fake_held *h;

	if (!g_fake.holding || wr->read || g_fake.hold_qpn != qp->qpx.qp_base.qp_num)
		return false;
	if (g_fake.held_cnt == g_fake.held_cap) {
		size_t cap = g_fake.held_cap ? 2 * g_fake.held_cap : 64;

		h = realloc(g_fake.held, cap * sizeof(*h));
		if (!h)
			return false;
		g_fake.held = h;
		g_fake.held_cap = cap;
	}
	h = &g_fake.held[g_fake.held_cnt++];
	h->qp = qp;
	h->wr = *wr;
	if (wr->inl) {
		h->wr.inl = malloc(wr->inl_len ? wr->inl_len : 1);
		memcpy(h->wr.inl, wr->inl, wr->inl_len);
	}
	qp->sq_out++;
	return true;
}

/* Carries out one work request and writes the sender's completion. */
static void fake_execute(struct fake_qp *qp, const struct fake_wr *wr)
{
	struct fake_wc wc = fake_wc_of(wr);

	if (g_fake.inject_cnt && g_fake.inject_qpn == qp->qpx.qp_base.qp_num) {
		g_fake.inject_cnt--;
		wc.status = g_fake.inject_status;
		wc.vendor_err = g_fake.inject_vendor;
	} else if (fake_hold(qp, wr)) {
		return;
	} else {
		fake_carry(qp, wr, &wc);
	}
	fake_send_done(qp, wr, &wc, false);
}

void fake_ibv_hold(uint32_t qpn)
{
	g_fake.holding = true;
	g_fake.hold_qpn = qpn;
}

size_t fake_ibv_held(void)
{
	return g_fake.held_cnt;
}

/* Shuffles the n held sends (Fisher-Yates, xorshift32 from seed). */
static void fake_held_shuffle(struct fake_held *held, size_t n, uint32_t seed)
{
	uint32_t x = seed;

	for (size_t i = n; i > 1; i--) {
		struct fake_held tmp;
		size_t j;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		j = x % i;
		tmp = held[i - 1];
		held[i - 1] = held[j];
		held[j] = tmp;
	}
}

void fake_ibv_release(uint32_t seed)
{
	struct fake_held *held = g_fake.held;
	size_t n = g_fake.held_cnt;

	g_fake.holding = false;
	g_fake.held = NULL;
	g_fake.held_cnt = g_fake.held_cap = 0;
	if (seed)
		fake_held_shuffle(held, n, seed);
	for (size_t k = 0; k < n; k++) {
		struct fake_held *h = &held[seed ? k : n - 1 - k];
		struct fake_wc wc = fake_wc_of(&h->wr);

		fake_carry(h->qp, &h->wr, &wc);
		fake_send_done(h->qp, &h->wr, &wc, true);
		free(h->wr.inl);
	}
	free(held);
}

void fake_held_drop(const struct fake_qp *qp)
{
	size_t kept = 0;

	for (size_t i = 0; i < g_fake.held_cnt; i++) {
		if (g_fake.held[i].qp == qp)
			free(g_fake.held[i].wr.inl);
		else
			g_fake.held[kept++] = g_fake.held[i];
	}
	g_fake.held_cnt = kept;
}

int fake_wr_complete(struct ibv_qp_ex *qpx)
{
	struct fake_qp *qp = (struct fake_qp *) qpx;
	int err = fake_fails(FAKE_IBV_WR_COMPLETE);

	if (!err && qpx->qp_base.state != IBV_QPS_RTS)
		err = EINVAL;
	if (!err)
		err = qp->batch_err;
	/* Completions not yet polled hold their send queue entries. */
	if (!err && qp->sq_out + qp->batch_cnt > qp->cap.max_send_wr)
		err = ENOMEM;
	for (size_t i = 0; i < qp->batch_cnt; i++) {
		if (!err)
			fake_execute(qp, &qp->batch[i]);
		free(qp->batch[i].inl);
	}
	qp->batch_cnt = 0;
	return err;
}

