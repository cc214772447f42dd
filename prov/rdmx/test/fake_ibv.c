/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: the fake rdma-core (see fake_ibv.h; its work requests
 * and their delivery are in fake_ibv_wr.c). What it models, and where the
 * behaviour is documented:
 * - ibv_get_device_list(3): a NULL-terminated list, freed with
 *   ibv_free_device_list, or NULL with errno ENOSYS on a kernel without
 *   RDMA support; ibv_open_device returns NULL with errno set.
 * - ibv_query_port(3), ibv_query_gid(3), ibv_query_device(3): 0 or errno.
 * - ibv_alloc_pd(3), ibv_reg_mr(3), ibv_create_ah(3), ibv_create_cq_ex(3),
 *   ibv_create_qp_ex(3), efadv_create_qp_ex(3): NULL with errno on
 *   failure (ibv_create_ah: ENOMEM past the device's max_ah, which
 *   ibv_query_device reports); the destroy calls return 0 or errno, EBUSY while a PD still
 *   has objects or a CQ still has queue pairs.
 * - ibv_modify_qp(3): RESET→INIT needs STATE, PKEY_INDEX, PORT and QKEY
 *   for UD (and SRD), INIT→RTR needs STATE, RTR→RTS STATE and SQ_PSN
 *   (RNR_RETRY allowed on SRD, EOPNOTSUPP on an EFA device without
 *   EFADV_DEVICE_ATTR_CAPS_RNR_RETRY); anything else EINVAL.
 * - ibv_post_recv(3): ENOMEM and *bad_wr when the receive queue is full;
 *   receives can be posted from INIT on.
 * - ibv_wr_post(3): work requests between ibv_wr_start and
 *   ibv_wr_complete go together; ibv_wr_complete returns an errno (the
 *   whole batch dropped) when the send queue is full or the QP is not in
 *   RTS; inline data larger than max_inline_data fails the batch.
 * - ibv_create_cq_ex(3): ibv_start_poll and ibv_next_poll return ENOENT
 *   when the CQ is empty, status and wr_id are fields of the CQ, the
 *   ibv_wc_read_* calls read the current completion. Only the fields
 *   whose IBV_WC_EX_WITH_* flag wc_flags asked for can be read (the
 *   others' read functions are NULL: the fake ends the test with
 *   FAKE_IBV_MISUSE_EXIT, saying which), opcode, vendor_err and wc_flags
 *   always; efadv_wc_read_sgid only with EFADV_WC_EX_WITH_SGID, which
 *   needs EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID.
 *   More completions than the CQ holds is an overrun (the device's async
 *   error), recorded.
 * - Completion channels (ibv_create_comp_channel(3), ibv_req_notify_cq(3),
 *   ibv_get_cq_event(3)): in fake_ibv_chan.c, which lists what it models.
 * - ibv_create_qp_ex(3): EINVAL past the device's max_qp_wr, max_sge
 *   (EFA: max_sq_wr, max_rq_wr, max_sq_sge, max_rq_sge, inline_buf_size).
 * - UD (IBTA, ibv_post_recv(3)): every receive starts with a 40-byte GRH,
 *   counted in byte_len, with IBV_WC_GRH; the source GID is at GRH bytes
 *   8..23 (RoCE v2 over IPv4 puts an IPv4 header in bytes 20..39, source
 *   address at 32..35); a datagram that finds no receive is dropped and
 *   the send still succeeds; one larger than the receive gives the
 *   receiver IBV_WC_LOC_LEN_ERR.
 * - EFA SRD (libefa providers/efa/verbs.c, efa_io_defs.h): reliable; a
 *   failed completion has the EFA status code as vendor error and the
 *   ibv_wc_status libefa folds it into (fake_efa_fold); no receive
 *   posted is REMOTE_ERROR_RNR (10), IBV_WC_RNR_RETRY_EXC_ERR; a QPN that
 *   does not exist (or a wrong Q_Key) is REMOTE_ERROR_BAD_DEST_QPN (9),
 *   IBV_WC_REM_INV_RD_REQ_ERR; a short receive buffer is
 *   REMOTE_ERROR_BAD_LENGTH (11) to the sender; a read of memory not
 *   exposed REMOTE_ERROR_BAD_ADDRESS (7), a bad lkey INVALID_LKEY (5); a
 *   receive's slid is the AH number the receiving QP's protection domain
 *   has for the sender's GID, 0xffff when it has none, and efadv_wc_read_sgid gives
 *   the GID only then (else -ENOENT); RDMA read needs a remote MR with
 *   IBV_ACCESS_REMOTE_READ and that rkey; AH numbers are per GID.
 * - An SGE must lie in an MR of the QP's PD with that lkey, else the
 *   completion is IBV_WC_LOC_PROT_ERR.
 * - ibv_wr_send_imm(3): the receive completion has IBV_WC_WITH_IMM in
 *   ibv_wc_read_wc_flags and ibv_wc_read_imm_data gives the __be32 the
 *   sender passed; a send without it has neither. A queue pair only
 *   offers the ibv_wr_* operations its send_ops_flags asked for (libefa
 *   and mlx5 leave the others NULL: calling one crashes; the fake ends
 *   the test with FAKE_IBV_MISUSE_EXIT); UD offers send and send with
 *   immediate, SRD RDMA read too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_ibv_int.h"

struct fake_ibv_state g_fake;

void fake_ibv_cfg(struct fake_ibv_dev_cfg *cfg, enum fake_ibv_kind kind,
		  const char *name, uint8_t gid_last)
{
	memset(cfg, 0, sizeof(*cfg));
	strncpy(cfg->name, name, sizeof(cfg->name) - 1);
	cfg->kind = kind;
	cfg->active_mtu = IBV_MTU_4096;
	cfg->max_msg_sz = 8928;
	cfg->max_qp_wr = 4096;
	cfg->max_sge = 4;
	cfg->max_ah = 1024;
	/* fe80::<gid_last>, or ::ffff:10.0.0.<gid_last> for RoCE v2 IPv4. */
	if (kind == FAKE_IBV_ROCE) {
		cfg->gid[10] = cfg->gid[11] = 0xff;
		cfg->gid[12] = 10;
	} else {
		cfg->gid[0] = 0xfe;
		cfg->gid[1] = 0x80;
	}
	cfg->gid[15] = gid_last;
	if (kind != FAKE_IBV_EFA)
		return;
	cfg->efa.max_sq_wr = 512;
	cfg->efa.max_rq_wr = 8192;
	cfg->efa.max_sq_sge = 2;
	cfg->efa.max_rq_sge = 1;
	cfg->efa.inline_buf_size = 32;
	cfg->efa.device_caps = EFADV_DEVICE_ATTR_CAPS_RDMA_READ |
			       EFADV_DEVICE_ATTR_CAPS_RNR_RETRY |
			       EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID;
	cfg->efa.max_rdma_size = 1 << 20;
}

void fake_ibv_fail_after(enum fake_ibv_call call, unsigned skip, int err,
			 unsigned count)
{
	g_fake.fail_err[call] = err;
	g_fake.fail_skip[call] = skip;
	g_fake.fail_cnt[call] = count;
}

void fake_ibv_fail(enum fake_ibv_call call, int err, unsigned count)
{
	fake_ibv_fail_after(call, 0, err, count);
}

unsigned fake_ibv_fail_left(enum fake_ibv_call call)
{
	return g_fake.fail_cnt[call];
}

void fake_misuse(const char *what)
{
	fprintf(stderr, "fake rdma-core: %s\n", what);
	/* No exit handlers: what the test held is no leak to report. */
	_exit(FAKE_IBV_MISUSE_EXIT);
}

int fake_fails(enum fake_ibv_call call)
{
	if (!g_fake.fail_cnt[call])
		return 0;
	if (g_fake.fail_skip[call]) {
		g_fake.fail_skip[call]--;
		return 0;
	}
	g_fake.fail_cnt[call]--;
	errno = g_fake.fail_err[call];
	return g_fake.fail_err[call];
}

void fake_ibv_inject_efa_status(uint32_t qpn, uint32_t code, unsigned count)
{
	fake_ibv_inject_send_status(qpn, fake_efa_fold(code), code, count);
}

void fake_ibv_inject_recv_status(uint32_t qpn, enum ibv_wc_status status,
				 unsigned count)
{
	g_fake.rx_fail_qpn = qpn;
	g_fake.rx_fail_status = status;
	g_fake.rx_fail_cnt = count;
}

void fake_ibv_inject_no_imm(uint32_t qpn, unsigned count)
{
	g_fake.no_imm_qpn = qpn;
	g_fake.no_imm_cnt = count;
}

void fake_ibv_next_qpn(uint32_t qpn)
{
	g_fake.next_qpn = qpn;
}

void fake_ibv_inject_send_status(uint32_t qpn, enum ibv_wc_status status,
				 uint32_t vendor_err, unsigned count)
{
	g_fake.inject_qpn = qpn;
	g_fake.inject_status = status;
	g_fake.inject_vendor = vendor_err;
	g_fake.inject_cnt = count;
}

size_t fake_ibv_live(void)
{
	return g_fake.live;
}

size_t fake_ibv_ahs(void)
{
	return g_fake.ahs;
}

size_t fake_ibv_ah_destroys(void)
{
	return g_fake.ah_destroys;
}

bool fake_ibv_cq_overrun(void)
{
	return g_fake.overrun;
}

static struct fake_qp *fake_qp(struct ibv_qp *qp)
{
	return (struct fake_qp *) qp;
}

static struct fake_dev *fake_dev_of(struct ibv_context *ctx)
{
	return (struct fake_dev *) ctx->device;
}

int fake_ibv_qp_rnr_retry(uint32_t qpn)
{
	for (struct fake_qp *q = g_fake.qps; q; q = q->next)
		if (q->qpx.qp_base.qp_num == qpn)
			return q->rnr_retry;
	return -1;
}

/* Devices. */

static struct ibv_device **fake_get_device_list(int *num)
{
	struct ibv_device **list;

	if (fake_fails(FAKE_IBV_GET_DEVICE_LIST))
		return NULL;
	list = calloc(g_fake.ndevs + 1, sizeof(*list));
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < g_fake.ndevs; i++)
		list[i] = &g_fake.devs[i].dev;
	if (num)
		*num = (int) g_fake.ndevs;
	return list;
}

static void fake_free_device_list(struct ibv_device **list)
{
	free(list);
}

static const char *fake_get_device_name(struct ibv_device *dev)
{
	return dev->name;
}

static struct ibv_context *fake_open_device(struct ibv_device *dev)
{
	struct ibv_context *ctx;

	if (fake_fails(FAKE_IBV_OPEN_DEVICE))
		return NULL;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->device = dev;
	g_fake.live++;
	return ctx;
}

static int fake_close_device(struct ibv_context *ctx)
{
	free(ctx);
	g_fake.live--;
	return 0;
}

static int fake_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	const struct fake_ibv_dev_cfg *cfg = &fake_dev_of(ctx)->cfg;
	int err = fake_fails(FAKE_IBV_QUERY_DEVICE);

	if (err)
		return err;
	memset(attr, 0, sizeof(*attr));
	attr->max_qp_wr = cfg->max_qp_wr;
	attr->max_ah = cfg->max_ah;
	attr->max_sge = cfg->max_sge;
	attr->max_cqe = 1 << 20;
	attr->phys_port_cnt = 1;
	return 0;
}

static int fake_query_port(struct ibv_context *ctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	const struct fake_ibv_dev_cfg *cfg = &fake_dev_of(ctx)->cfg;
	int err = fake_fails(FAKE_IBV_QUERY_PORT);

	if (err)
		return err;
	if (port != 1)
		return EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->state = cfg->port_down ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
	attr->max_mtu = attr->active_mtu = cfg->active_mtu;
	attr->max_msg_sz = cfg->kind == FAKE_IBV_EFA ? cfg->max_msg_sz : 1u << 31;
	attr->link_layer = cfg->kind == FAKE_IBV_ROCE ? IBV_LINK_LAYER_ETHERNET :
			   cfg->kind == FAKE_IBV_IB ? IBV_LINK_LAYER_INFINIBAND :
			   IBV_LINK_LAYER_UNSPECIFIED;
	return 0;
}

static int fake_query_gid(struct ibv_context *ctx, uint8_t port, int index,
			  union ibv_gid *gid)
{
	if (port != 1 || index != 0)
		return EINVAL;
	memcpy(gid->raw, fake_dev_of(ctx)->cfg.gid, sizeof(gid->raw));
	return 0;
}

static int fake_efadv_query_device(struct ibv_context *ctx,
				   struct efadv_device_attr *attr, uint32_t inlen)
{
	const struct fake_ibv_dev_cfg *cfg = &fake_dev_of(ctx)->cfg;
	int err = fake_fails(FAKE_IBV_EFADV_QUERY_DEVICE);

	if (err)
		return err;
	if (cfg->kind != FAKE_IBV_EFA)
		return EOPNOTSUPP;
	memset(attr, 0, inlen);
	memcpy(attr, &cfg->efa, RDMX_MIN((size_t) inlen, sizeof(cfg->efa)));
	return 0;
}

/* Protection domains and memory. */

static struct ibv_pd *fake_alloc_pd(struct ibv_context *ctx)
{
	struct fake_pd *pd;

	if (fake_fails(FAKE_IBV_ALLOC_PD))
		return NULL;
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->pd.context = ctx;
	g_fake.live++;
	return &pd->pd;
}

static int fake_dealloc_pd(struct ibv_pd *pd)
{
	if (((struct fake_pd *) pd)->children)
		return EBUSY;
	free(pd);
	g_fake.live--;
	return 0;
}

static struct ibv_mr *fake_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				  int access)
{
	struct fake_mr *mr;

	if (fake_fails(FAKE_IBV_REG_MR))
		return NULL;
	/* Remote write or atomic access needs local write (ibv_reg_mr(3)). */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = len;
	mr->mr.lkey = mr->mr.rkey = ++g_fake.next_key;
	mr->access = access;
	mr->next = g_fake.mrs;
	g_fake.mrs = mr;
	((struct fake_pd *) pd)->children++;
	g_fake.live++;
	return &mr->mr;
}

static int fake_dereg_mr(struct ibv_mr *ibv_mr)
{
	for (struct fake_mr **it = &g_fake.mrs; *it; it = &(*it)->next) {
		if (&(*it)->mr != ibv_mr)
			continue;
		*it = (*it)->next;
		((struct fake_pd *) ibv_mr->pd)->children--;
		free(ibv_mr);
		g_fake.live--;
		return 0;
	}
	return EINVAL;
}

struct fake_mr *fake_mr_find(struct ibv_pd *pd, uint32_t key,
			     uint64_t addr, size_t len, int access)
{
	for (struct fake_mr *mr = g_fake.mrs; mr; mr = mr->next) {
		uintptr_t base = (uintptr_t) mr->mr.addr;

		if (mr->mr.pd == pd && mr->mr.lkey == key && addr >= base &&
		    addr + len <= base + mr->mr.length &&
		    (mr->access & access) == access)
			return mr;
	}
	return NULL;
}

/* Completion queues. */

static struct fake_cq *fake_cq_new(struct ibv_context *ctx,
				   const struct ibv_cq_init_attr_ex *attr)
{
	struct fake_cq *cq;

	if (fake_fails(FAKE_IBV_CREATE_CQ))
		return NULL;
	if (!attr->cqe) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t) IBV_WC_STANDARD_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	errno = fake_chan_check(ctx, attr);
	if (errno)
		return NULL;
	cq = calloc(1, sizeof(*cq));
	if (cq)
		cq->wc = calloc(attr->cqe, sizeof(*cq->wc));
	if (!cq || !cq->wc) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->cap = attr->cqe;
	cq->wc_flags = attr->wc_flags;
	cq->cq.context = ctx;
	cq->cq.cqe = (int) attr->cqe;
	fake_chan_attach(cq, attr);
	g_fake.live++;
	return cq;
}

static struct ibv_cq_ex *fake_create_cq_ex(struct ibv_context *ctx,
					   struct ibv_cq_init_attr_ex *attr)
{
	struct fake_cq *cq = fake_cq_new(ctx, attr);

	return cq ? &cq->cq : NULL;
}

static struct ibv_cq_ex *fake_efadv_create_cq(struct ibv_context *ctx,
					      struct ibv_cq_init_attr_ex *attr,
					      struct efadv_cq_init_attr *efa_attr,
					      uint32_t inlen)
{
	struct fake_cq *cq;

	(void) inlen;
	if (fake_dev_of(ctx)->cfg.kind != FAKE_IBV_EFA ||
	    ((efa_attr->wc_flags & EFADV_WC_EX_WITH_SGID) &&
	     !(fake_dev_of(ctx)->cfg.efa.device_caps & EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = fake_cq_new(ctx, attr);
	if (!cq)
		return NULL;
	cq->with_sgid = efa_attr->wc_flags & EFADV_WC_EX_WITH_SGID;
	return &cq->cq;
}

static struct efadv_cq *fake_efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *ibv_cq)
{
	struct fake_cq *cq = (struct fake_cq *) ibv_cq;

	return &cq->efa_cq;
}

static int fake_destroy_cq(struct ibv_cq *ibv_cq)
{
	struct fake_cq *cq = (struct fake_cq *) ibv_cq;

	if (cq->qps)
		return EBUSY;
	fake_chan_detach(cq);
	free(cq->wc);
	free(cq);
	g_fake.live--;
	return 0;
}

void fake_cq_push(struct ibv_cq *ibv_cq, const struct fake_wc *wc)
{
	struct fake_cq *cq = (struct fake_cq *) ibv_cq;

	if (cq->cnt == cq->cap) {
		g_fake.overrun = true;
		return;
	}
	cq->wc[(cq->head + cq->cnt++) % cq->cap] = *wc;
	fake_chan_raise(cq);
}

/* Makes the oldest completion the current one; ENOENT when none. */
static int fake_cq_next(struct ibv_cq_ex *ibv_cq)
{
	struct fake_cq *cq = (struct fake_cq *) ibv_cq;

	if (!cq->cnt)
		return ENOENT;
	cq->cur = cq->wc[cq->head];
	cq->head = (cq->head + 1) % cq->cap;
	cq->cnt--;
	ibv_cq->status = cq->cur.status;
	ibv_cq->wr_id = cq->cur.wr_id;
	for (struct fake_qp *q = g_fake.qps; cq->cur.sq_qpn && q; q = q->next)
		if (q->qpx.qp_base.qp_num == cq->cur.sq_qpn)
			q->sq_out--;
	return 0;
}

static int fake_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	(void) attr;
	return fake_cq_next(cq);
}

static int fake_next_poll(struct ibv_cq_ex *cq)
{
	return fake_cq_next(cq);
}

static void fake_end_poll(struct ibv_cq_ex *cq)
{
	(void) cq;
}

/* The current completion, of which field `flag` is read. */
static const struct fake_wc *fake_cur(struct ibv_cq_ex *ibv_cq, uint64_t flag,
				      const char *call)
{
	struct fake_cq *cq = (struct fake_cq *) ibv_cq;

	if ((cq->wc_flags & flag) != flag)
		fake_misuse(call);
	return &cq->cur;
}

static enum ibv_wc_opcode fake_wc_read_opcode(struct ibv_cq_ex *cq)
{
	return fake_cur(cq, 0, "ibv_wc_read_opcode")->opcode;
}

static uint32_t fake_wc_read_vendor_err(struct ibv_cq_ex *cq)
{
	return fake_cur(cq, 0, "ibv_wc_read_vendor_err")->vendor_err;
}

static uint32_t fake_wc_read_byte_len(struct ibv_cq_ex *cq)
{
	return fake_cur(cq, IBV_WC_EX_WITH_BYTE_LEN,
			"ibv_wc_read_byte_len without IBV_WC_EX_WITH_BYTE_LEN")->byte_len;
}

static uint32_t fake_wc_read_src_qp(struct ibv_cq_ex *cq)
{
	return fake_cur(cq, IBV_WC_EX_WITH_SRC_QP,
			"ibv_wc_read_src_qp without IBV_WC_EX_WITH_SRC_QP")->src_qp;
}

static uint32_t fake_wc_read_slid(struct ibv_cq_ex *cq)
{
	return fake_cur(cq, IBV_WC_EX_WITH_SLID,
			"ibv_wc_read_slid without IBV_WC_EX_WITH_SLID")->slid;
}

static unsigned int fake_wc_read_wc_flags(struct ibv_cq_ex *cq)
{
	return fake_cur(cq, 0, "ibv_wc_read_wc_flags")->wc_flags;
}

static __be32 fake_wc_read_imm_data(struct ibv_cq_ex *cq)
{
	return fake_cur(cq, IBV_WC_EX_WITH_IMM,
			"ibv_wc_read_imm_data without IBV_WC_EX_WITH_IMM")->imm_data;
}

static int fake_efadv_wc_read_sgid(struct efadv_cq *efa_cq, union ibv_gid *sgid)
{
	struct fake_cq *cq = rdmx_container_of(efa_cq, struct fake_cq, efa_cq);

	if (!cq->with_sgid)
		fake_misuse("efadv_wc_read_sgid without EFADV_WC_EX_WITH_SGID");
	/* The GID only comes with a sender the device has no AH for. */
	if (cq->cur.slid != FAKE_AH_UNKNOWN)
		return -ENOENT;
	*sgid = cq->cur.sgid;
	return 0;
}

/* Queue pairs. */

static struct fake_qp *fake_qp_new(struct ibv_context *ctx,
				   const struct ibv_qp_init_attr_ex *attr, bool srd)
{
	const struct fake_ibv_dev_cfg *cfg = &fake_dev_of(ctx)->cfg;
	uint32_t max_wr = srd ? cfg->efa.max_sq_wr : (uint32_t) cfg->max_qp_wr;
	uint32_t max_rwr = srd ? cfg->efa.max_rq_wr : (uint32_t) cfg->max_qp_wr;
	/* The device's SGE limits (efadv_query_device, ibv_query_device). */
	uint32_t max_ssge = RDMX_MIN(srd ? cfg->efa.max_sq_sge : (uint32_t) cfg->max_sge,
				     FAKE_SGE_MAX);
	uint32_t max_rsge = RDMX_MIN(srd ? cfg->efa.max_rq_sge : (uint32_t) cfg->max_sge,
				     FAKE_SGE_MAX);
	/* What libefa and a UD queue pair of any verbs device can post. */
	uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
		       (srd ? IBV_QP_EX_WITH_RDMA_READ : 0);
	struct fake_qp *qp;

	if (fake_fails(FAKE_IBV_CREATE_QP))
		return NULL;
	if (attr->send_ops_flags & ~ops) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    !attr->send_cq || !attr->recv_cq || attr->cap.max_send_wr > max_wr ||
	    attr->cap.max_recv_wr > max_rwr || attr->cap.max_send_sge > max_ssge ||
	    attr->cap.max_recv_sge > max_rsge ||
	    (srd && attr->cap.max_inline_data > cfg->efa.inline_buf_size)) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp)
		qp->rq = calloc(attr->cap.max_recv_wr + 1, sizeof(*qp->rq));
	if (!qp || !qp->rq) {
		free(qp);
		errno = ENOMEM;
		return NULL;
	}
	qp->srd = srd;
	qp->rnr_retry = -1;
	qp->send_ops = attr->send_ops_flags;
	qp->fd = fake_dev_of(ctx);
	qp->cap = attr->cap;
	qp->qpx.qp_base.context = ctx;
	qp->qpx.qp_base.pd = attr->pd;
	qp->qpx.qp_base.send_cq = attr->send_cq;
	qp->qpx.qp_base.recv_cq = attr->recv_cq;
	qp->qpx.qp_base.qp_type = attr->qp_type;
	qp->qpx.qp_base.state = IBV_QPS_RESET;
	qp->qpx.qp_base.qp_num = g_fake.next_qpn++;
	((struct fake_cq *) attr->send_cq)->qps++;
	((struct fake_cq *) attr->recv_cq)->qps++;
	((struct fake_pd *) attr->pd)->children++;
	qp->next = g_fake.qps;
	g_fake.qps = qp;
	g_fake.live++;
	return qp;
}

static struct ibv_qp *fake_create_qp_ex(struct ibv_context *ctx,
					struct ibv_qp_init_attr_ex *attr)
{
	struct fake_qp *qp;

	if (attr->qp_type != IBV_QPT_UD ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ||
	    fake_dev_of(ctx)->cfg.kind == FAKE_IBV_EFA) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = fake_qp_new(ctx, attr, false);
	return qp ? &qp->qpx.qp_base : NULL;
}

static struct ibv_qp *fake_efadv_create_qp_ex(struct ibv_context *ctx,
					      struct ibv_qp_init_attr_ex *attr,
					      struct efadv_qp_init_attr *efa_attr,
					      uint32_t inlen)
{
	struct fake_qp *qp;

	(void) inlen;
	if (fake_dev_of(ctx)->cfg.kind != FAKE_IBV_EFA ||
	    attr->qp_type != IBV_QPT_DRIVER ||
	    efa_attr->driver_qp_type != EFADV_QP_DRIVER_TYPE_SRD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = fake_qp_new(ctx, attr, true);
	return qp ? &qp->qpx.qp_base : NULL;
}

static int fake_modify_qp(struct ibv_qp *ibv_qp, struct ibv_qp_attr *attr, int mask)
{
	struct fake_qp *qp = fake_qp(ibv_qp);
	const int init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
	int err;

	if ((err = fake_fails(FAKE_IBV_MODIFY_QP)))
		return err;
	if (!(mask & IBV_QP_STATE))
		return EINVAL;
	switch (attr->qp_state) {
	case IBV_QPS_INIT:
		if (ibv_qp->state != IBV_QPS_RESET || mask != init || attr->port_num != 1)
			return EINVAL;
		qp->qkey = attr->qkey;
		break;
	case IBV_QPS_RTR:
		if (ibv_qp->state != IBV_QPS_INIT || mask != IBV_QP_STATE)
			return EINVAL;
		break;
	case IBV_QPS_RTS:
		if (ibv_qp->state != IBV_QPS_RTR ||
		    (mask & ~IBV_QP_RNR_RETRY) != (IBV_QP_STATE | IBV_QP_SQ_PSN))
			return EINVAL;
		if (!(mask & IBV_QP_RNR_RETRY))
			break;
		/* UD has no RNR retry; SRD only where the device says so. */
		if (!qp->srd)
			return EINVAL;
		if (!(qp->fd->cfg.efa.device_caps & EFADV_DEVICE_ATTR_CAPS_RNR_RETRY))
			return EOPNOTSUPP;
		qp->rnr_retry = attr->rnr_retry;
		break;
	default:
		return EINVAL;
	}
	ibv_qp->state = attr->qp_state;
	return 0;
}

static int fake_destroy_qp(struct ibv_qp *ibv_qp)
{
	struct fake_qp *qp = fake_qp(ibv_qp);

	for (struct fake_qp **it = &g_fake.qps; *it; it = &(*it)->next) {
		if (*it == qp) {
			*it = qp->next;
			break;
		}
	}
	((struct fake_cq *) ibv_qp->send_cq)->qps--;
	((struct fake_cq *) ibv_qp->recv_cq)->qps--;
	((struct fake_pd *) ibv_qp->pd)->children--;
	fake_held_drop(qp);
	for (size_t i = 0; i < qp->batch_cnt; i++)
		free(qp->batch[i].inl);
	free(qp->rq);
	free(qp);
	g_fake.live--;
	return 0;
}

static struct ibv_qp_ex *fake_qp_to_qp_ex(struct ibv_qp *qp)
{
	return &fake_qp(qp)->qpx;
}

static int fake_post_recv(struct ibv_qp *ibv_qp, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad)
{
	struct fake_qp *qp = fake_qp(ibv_qp);
	int err;

	for (; wr; wr = wr->next) {
		struct fake_recv *r;

		if ((err = fake_fails(FAKE_IBV_POST_RECV)) ||
		    (err = ibv_qp->state == IBV_QPS_RESET ? EINVAL : 0) ||
		    (err = wr->num_sge > (int) qp->cap.max_recv_sge ? EINVAL : 0) ||
		    (err = qp->rq_cnt == qp->cap.max_recv_wr ? ENOMEM : 0)) {
			*bad = wr;
			return err;
		}
		r = &qp->rq[(qp->rq_head + qp->rq_cnt++) % qp->cap.max_recv_wr];
		r->wr_id = wr->wr_id;
		r->num_sge = wr->num_sge;
		memcpy(r->sge, wr->sg_list, (size_t) wr->num_sge * sizeof(*r->sge));
	}
	return 0;
}

/* Address handles. */

/* A live AH of protection domain pd to gid, or NULL. */
struct fake_ah *fake_ah_find(const struct ibv_pd *pd, const uint8_t *gid)
{
	for (struct fake_ah *ah = g_fake.ah_list; ah; ah = ah->next)
		if (ah->ah.pd == pd && !memcmp(ah->dgid.raw, gid, 16))
			return ah;
	return NULL;
}

/* Address handles alive on the device of ctx. */
static size_t fake_dev_ahs(struct ibv_context *ctx)
{
	size_t n = 0;

	for (struct fake_ah *ah = g_fake.ah_list; ah; ah = ah->next)
		n += ah->ah.context->device == ctx->device;
	return n;
}

static struct ibv_ah *fake_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct fake_ah *ah, *same;

	if (fake_fails(FAKE_IBV_CREATE_AH))
		return NULL;
	if (!attr->is_global || attr->port_num != 1) {
		errno = EINVAL;
		return NULL;
	}
	/* The device has max_ah of them, whoever asks. */
	if (fake_dev_ahs(pd->context) >= (size_t) fake_dev_of(pd->context)->cfg.max_ah) {
		errno = ENOMEM;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	ah->ah.context = pd->context;
	ah->ah.pd = pd;
	ah->dgid = attr->grh.dgid;
	/* The device numbers GIDs, not handles: one AH number per GID. */
	same = fake_ah_find(pd, attr->grh.dgid.raw);
	ah->ahn = same ? same->ahn : (uint16_t) (++g_fake.next_key & 0x7fff);
	ah->next = g_fake.ah_list;
	g_fake.ah_list = ah;
	((struct fake_pd *) pd)->children++;
	g_fake.live++;
	g_fake.ahs++;
	return &ah->ah;
}

static int fake_destroy_ah(struct ibv_ah *ah)
{
	for (struct fake_ah **it = &g_fake.ah_list; *it; it = &(*it)->next) {
		if (&(*it)->ah == ah) {
			*it = (*it)->next;
			break;
		}
	}
	((struct fake_pd *) ah->pd)->children--;
	free(ah);
	g_fake.live--;
	g_fake.ahs--;
	g_fake.ah_destroys++;
	return 0;
}

static int fake_efadv_query_ah(struct ibv_ah *ah, struct efadv_ah_attr *attr,
			       uint32_t inlen)
{
	if (fake_dev_of(ah->context)->cfg.kind != FAKE_IBV_EFA)
		return EOPNOTSUPP;
	memset(attr, 0, inlen);
	attr->ahn = ((struct fake_ah *) ah)->ahn;
	return 0;
}

static const struct rdmx_ibv_api fake_ibv_api = {
	.get_device_list = fake_get_device_list,
	.free_device_list = fake_free_device_list,
	.get_device_name = fake_get_device_name,
	.open_device = fake_open_device,
	.close_device = fake_close_device,
	.query_device = fake_query_device,
	.query_port = fake_query_port,
	.query_gid = fake_query_gid,
	.alloc_pd = fake_alloc_pd,
	.dealloc_pd = fake_dealloc_pd,
	.reg_mr = fake_reg_mr,
	.dereg_mr = fake_dereg_mr,
	.create_cq_ex = fake_create_cq_ex,
	.destroy_cq = fake_destroy_cq,
	.start_poll = fake_start_poll,
	.next_poll = fake_next_poll,
	.end_poll = fake_end_poll,
	.wc_read_opcode = fake_wc_read_opcode,
	.wc_read_vendor_err = fake_wc_read_vendor_err,
	.wc_read_byte_len = fake_wc_read_byte_len,
	.wc_read_src_qp = fake_wc_read_src_qp,
	.wc_read_slid = fake_wc_read_slid,
	.wc_read_wc_flags = fake_wc_read_wc_flags,
	.wc_read_imm_data = fake_wc_read_imm_data,
	.create_comp_channel = fake_create_comp_channel,
	.destroy_comp_channel = fake_destroy_comp_channel,
	.req_notify_cq = fake_req_notify_cq,
	.get_cq_event = fake_get_cq_event,
	.ack_cq_events = fake_ack_cq_events,
	.create_qp_ex = fake_create_qp_ex,
	.modify_qp = fake_modify_qp,
	.destroy_qp = fake_destroy_qp,
	.qp_to_qp_ex = fake_qp_to_qp_ex,
	.post_recv = fake_post_recv,
	.wr_start = fake_wr_start,
	.wr_send_imm = fake_wr_send_imm,
	.wr_rdma_read = fake_wr_rdma_read,
	.wr_set_ud_addr = fake_wr_set_ud_addr,
	.wr_set_sge_list = fake_wr_set_sge_list,
	.wr_set_inline_data_list = fake_wr_set_inline_data_list,
	.wr_complete = fake_wr_complete,
	.create_ah = fake_create_ah,
	.destroy_ah = fake_destroy_ah,
	.efadv_query_device = fake_efadv_query_device,
	.efadv_create_qp_ex = fake_efadv_create_qp_ex,
	.efadv_create_cq = fake_efadv_create_cq,
	.efadv_query_ah = fake_efadv_query_ah,
	.efadv_cq_from_ibv_cq_ex = fake_efadv_cq_from_ibv_cq_ex,
	.efadv_wc_read_sgid = fake_efadv_wc_read_sgid,
};

void fake_ibv_install(const struct fake_ibv_dev_cfg *devs, size_t n)
{
	memset(&g_fake, 0, sizeof(g_fake));
	g_fake.next_qpn = 0x100;
	for (size_t i = 0; i < n && i < FAKE_DEVS_MAX; i++) {
		struct fake_dev *fd = &g_fake.devs[g_fake.ndevs++];

		fd->cfg = devs[i];
		strncpy(fd->dev.name, devs[i].name, sizeof(fd->dev.name) - 1);
		fd->dev.node_type = devs[i].kind == FAKE_IBV_EFA ?
				    IBV_NODE_UNSPECIFIED : IBV_NODE_CA;
	}
	g_rdmx_ibv = &fake_ibv_api;
}
