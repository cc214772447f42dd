/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: what the efa and verbs devices share (see rdmx_dev_ibv.h).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <arpa/inet.h>

#include "rdmx.h"
#include "rdmx_dev_ibv.h"

void rdmx_ibv_addr_make(struct rdmx_ibv_addr *addr, const union ibv_gid *gid,
			uint32_t qpn, uint32_t connid)
{
	uint32_t be_qpn = htonl(qpn), be_qkey = htonl(RDMX_IBV_QKEY);
	uint32_t be_connid = htonl(connid);

	memcpy(addr->gid, gid->raw, sizeof(addr->gid));
	memcpy(addr->qpn, &be_qpn, sizeof(addr->qpn));
	memcpy(addr->qkey, &be_qkey, sizeof(addr->qkey));
	memcpy(addr->connid, &be_connid, sizeof(addr->connid));
}

/* A big-endian 32-bit field of an address. */
static uint32_t rdmx_ibv_addr_field(const uint8_t *field)
{
	uint32_t be;

	memcpy(&be, field, sizeof(be));
	return ntohl(be);
}

uint32_t rdmx_ibv_addr_qpn(const struct rdmx_ibv_addr *addr)
{
	return rdmx_ibv_addr_field(addr->qpn);
}

uint32_t rdmx_ibv_addr_connid(const struct rdmx_ibv_addr *addr)
{
	return rdmx_ibv_addr_field(addr->connid);
}

bool rdmx_ibv_rx_connid(struct ibv_cq_ex *cq, uint32_t *connid)
{
	if (!(g_rdmx_ibv->wc_read_wc_flags(cq) & IBV_WC_WITH_IMM))
		return false;
	*connid = be32toh(g_rdmx_ibv->wc_read_imm_data(cq));
	return *connid != 0;
}

int rdmx_ibv_addr_check(const void *addr, size_t len, void *canon)
{
	const struct rdmx_ibv_addr *in = addr;

	if (len != sizeof(*in))
		return -FI_EINVAL;
	/* Only rdmx queues can be reached: they all use RDMX_IBV_QKEY. */
	if (rdmx_ibv_addr_field(in->qkey) != RDMX_IBV_QKEY ||
	    rdmx_ibv_addr_qpn(in) > 0xffffff)
		return -FI_EINVAL;
	memmove(canon, in, sizeof(*in));
	return 0;
}

size_t rdmx_ibv_addr_size(const void *canon)
{
	(void) canon;
	return sizeof(struct rdmx_ibv_addr);
}

int rdmx_ibv_resolve(const char *node, const char *service, void *canon)
{
	/* A queue has no name a resolver knows: addresses come from fi_getname. */
	(void) node; (void) service; (void) canon;
	return -FI_ENODATA;
}

void rdmx_ibv_addr_print(const char *scheme, const void *canon, char *buf,
			 size_t len)
{
	const struct rdmx_ibv_addr *addr = canon;
	char gid[INET6_ADDRSTRLEN];

	if (!inet_ntop(AF_INET6, addr->gid, gid, sizeof(gid)))
		gid[0] = '\0';
	snprintf(buf, len, "%s://[%s]:0x%x:0x%x:0x%x", scheme, gid,
		 rdmx_ibv_addr_qpn(addr), rdmx_ibv_addr_field(addr->qkey),
		 rdmx_ibv_addr_connid(addr));
}

/*
 * Opens rdma-core device dev if it is of this kind, usable, named as
 * FI_RDMX_IFACE asks and, when src is given, owns src's GID. Returns the
 * open context with its GID and datagram size, or NULL.
 */
static struct ibv_context *rdmx_ibv_try(const struct rdmx_ibv_kind *kind,
					struct ibv_device *dev,
					const struct rdmx_ibv_addr *src,
					union ibv_gid *gid, size_t *mtu)
{
	const char *name = g_rdmx_ibv->get_device_name(dev);
	struct ibv_port_attr port;
	struct ibv_context *ctx;

	if (!name || (g_rdmx_params.iface && strcmp(g_rdmx_params.iface, name)))
		return NULL;
	ctx = g_rdmx_ibv->open_device(dev);
	if (!ctx) {
		RDMX_INFO(FI_LOG_CORE, "%s: ibv_open_device(%s): %s\n", kind->name, name,
			  strerror(errno));
		return NULL;
	}
	if (g_rdmx_ibv->query_port(ctx, RDMX_IBV_PORT, &port) ||
	    port.state != IBV_PORT_ACTIVE || !kind->probe(ctx, &port, mtu) ||
	    g_rdmx_ibv->query_gid(ctx, RDMX_IBV_PORT, RDMX_IBV_GID_INDEX, gid) ||
	    (src && memcmp(src->gid, gid->raw, sizeof(src->gid)))) {
		g_rdmx_ibv->close_device(ctx);
		return NULL;
	}
	if (g_rdmx_params.mtu)
		*mtu = RDMX_MIN(*mtu, g_rdmx_params.mtu);
	return ctx;
}

int rdmx_ibv_domains(const struct rdmx_ibv_kind *kind, const void *src,
		     const void *dest, struct rdmx_dev_domain *out, size_t max)
{
	struct ibv_device **list;
	int n, found = 0;

	/* Any device reaches any GID: dest does not narrow the choice. */
	(void) dest;
	list = g_rdmx_ibv->get_device_list(&n);
	if (!list) {
		/* ENOSYS: a kernel without RDMA support. */
		RDMX_INFO(FI_LOG_CORE, "%s: ibv_get_device_list: %s\n", kind->name,
			  strerror(errno));
		return 0;
	}
	for (int i = 0; i < n && (size_t) found < max; i++) {
		struct rdmx_ibv_addr addr;
		struct ibv_context *ctx;
		union ibv_gid gid;
		size_t mtu;

		ctx = rdmx_ibv_try(kind, list[i], src, &gid, &mtu);
		if (!ctx)
			continue;
		rdmx_ibv_addr_make(&addr, &gid, 0, 0);
		snprintf(out[found].name, sizeof(out[found].name), "%s",
			 g_rdmx_ibv->get_device_name(list[i]));
		memset(out[found].addr, 0, sizeof(out[found].addr));
		memcpy(out[found].addr, &addr, sizeof(addr));
		out[found].mtu = mtu;
		found++;
		g_rdmx_ibv->close_device(ctx);
	}
	g_rdmx_ibv->free_device_list(list);
	return found;
}

int rdmx_ibv_core_open(const struct rdmx_ibv_kind *kind, const void *src,
		       struct rdmx_ibv_core *core)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int n, ret;

	list = g_rdmx_ibv->get_device_list(&n);
	for (int i = 0; list && i < n && !ctx; i++)
		ctx = rdmx_ibv_try(kind, list[i], src, &core->gid, &core->mtu);
	if (list)
		g_rdmx_ibv->free_device_list(list);
	if (!ctx) {
		RDMX_WARN(FI_LOG_EP_CTRL, "%s: no usable device%s\n", kind->name,
			  src ? " owns the source address" : "");
		return -FI_ENODEV;
	}
	core->pd = g_rdmx_ibv->alloc_pd(ctx);
	if (!core->pd) {
		ret = -errno;
		RDMX_WARN(FI_LOG_EP_CTRL, "%s: ibv_alloc_pd: %s\n", kind->name,
			  strerror(errno));
		g_rdmx_ibv->close_device(ctx);
		return ret;
	}
	core->ctx = ctx;
	return 0;
}

void rdmx_ibv_core_close(struct rdmx_ibv_core *core)
{
	g_rdmx_ibv->dealloc_pd(core->pd);
	g_rdmx_ibv->close_device(core->ctx);
}

int rdmx_ibv_core_query(const struct rdmx_ibv_core *core, const char *kind,
			struct ibv_device_attr *attr)
{
	int ret = g_rdmx_ibv->query_device(core->ctx, attr);

	if (ret)
		RDMX_WARN(FI_LOG_EP_CTRL, "%s: ibv_query_device: %s\n", kind,
			  strerror(ret));
	return -ret;
}

__be32 rdmx_ibv_qp_name(const struct rdmx_ibv_core *core, const struct ibv_qp *qp,
			struct rdmx_ibv_addr *addr)
{
	uint32_t connid = (uint32_t) rdmx_random64();

	connid = connid ? connid : 1;
	rdmx_ibv_addr_make(addr, &core->gid, qp->qp_num, connid);
	return htobe32(connid);
}

/* One step of a queue pair towards RTS; 0 or -errno, logged. */
static int rdmx_ibv_qp_step(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
			    const char *state)
{
	int ret = g_rdmx_ibv->modify_qp(qp, attr, mask);

	if (ret)
		RDMX_WARN(FI_LOG_EP_CTRL, "qp 0x%x to %s: %s\n", qp->qp_num, state,
			  strerror(ret));
	return -ret;
}

int rdmx_ibv_qp_ready(struct ibv_qp *qp, int rnr_retry)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = RDMX_IBV_PORT,
		.qkey = RDMX_IBV_QKEY,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	int ret;

	ret = rdmx_ibv_qp_step(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_QKEY, "init");
	if (ret)
		return ret;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	ret = rdmx_ibv_qp_step(qp, &attr, IBV_QP_STATE, "rtr");
	if (ret)
		return ret;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (rnr_retry >= 0) {
		attr.rnr_retry = (uint8_t) RDMX_MIN(rnr_retry, 7);
		mask |= IBV_QP_RNR_RETRY;
	}
	return rdmx_ibv_qp_step(qp, &attr, mask, "rts");
}

/* by_gid keys: the GID inside the entry. */
static const void *rdmx_ibv_gid_key(const struct rdmx_hash *hash, uint64_t val)
{
	(void) hash;
	return ((const struct rdmx_ibv_gid_ah *) (uintptr_t) val)->gid;
}

/* by_ahn keys: the AH number inside the entry. */
static const void *rdmx_ibv_ahn_key(const struct rdmx_hash *hash, uint64_t val)
{
	(void) hash;
	return &((const struct rdmx_ibv_gid_ah *) (uintptr_t) val)->ahn;
}

int rdmx_ibv_ahc_construct(struct rdmx_ibv_ahc *ahc, bool efa, size_t max)
{
	int ret;

	ahc->efa = efa;
	ahc->cnt = 0;
	ahc->max = max ? max : SIZE_MAX;
	rdmx_dlist_init(&ahc->all);
	ret = rdmx_hash_construct(&ahc->by_gid, 16, rdmx_ibv_gid_key);
	if (ret)
		return ret;
	ret = rdmx_hash_construct(&ahc->by_ahn, sizeof(uint16_t), rdmx_ibv_ahn_key);
	if (ret)
		rdmx_hash_destruct(&ahc->by_gid);
	return ret;
}

void rdmx_ibv_ahc_destruct(struct rdmx_ibv_ahc *ahc)
{
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(&ahc->all))) {
		struct rdmx_ibv_gid_ah *gah =
			rdmx_container_of(it, struct rdmx_ibv_gid_ah, link);

		g_rdmx_ibv->destroy_ah(gah->ah);
		free(gah);
	}
	rdmx_hash_destruct(&ahc->by_gid);
	rdmx_hash_destruct(&ahc->by_ahn);
}

/* Creates the hardware handle of a new entry (and learns its AH number). */
static int rdmx_ibv_gid_ah_create(struct rdmx_ibv_ahc *ahc,
				  struct rdmx_ibv_core *core,
				  struct rdmx_ibv_gid_ah *gah)
{
	struct ibv_ah_attr attr = {
		.is_global = 1,
		.port_num = RDMX_IBV_PORT,
		.grh = {
			.sgid_index = RDMX_IBV_GID_INDEX,
			.hop_limit = 255,
		},
	};
	struct efadv_ah_attr efa_attr = { 0 };
	int ret;

	memcpy(attr.grh.dgid.raw, gah->gid, sizeof(gah->gid));
	gah->ah = g_rdmx_ibv->create_ah(core->pd, &attr);
	if (!gah->ah) {
		ret = errno ? -errno : -FI_EIO;
		RDMX_WARN(FI_LOG_AV, "ibv_create_ah: %s\n", fi_strerror(-ret));
		return ret;
	}
	if (!ahc->efa)
		return 0;
	ret = g_rdmx_ibv->efadv_query_ah(gah->ah, &efa_attr, sizeof(efa_attr));
	if (ret) {
		RDMX_WARN(FI_LOG_AV, "efadv_query_ah: %s\n", strerror(ret));
		g_rdmx_ibv->destroy_ah(gah->ah);
		return -ret;
	}
	gah->ahn = efa_attr.ahn;
	return 0;
}

bool rdmx_ibv_ahc_full(struct rdmx_ibv_ahc *ahc, const uint8_t *gid)
{
	uint64_t val;

	return ahc->cnt >= ahc->max && !rdmx_hash_find(&ahc->by_gid, gid, &val);
}

struct rdmx_ibv_gid_ah *rdmx_ibv_ahc_get(struct rdmx_ibv_ahc *ahc,
					 struct rdmx_ibv_core *core,
					 const uint8_t *gid, int *err)
{
	struct rdmx_ibv_gid_ah *gah;
	uint64_t val;

	if (rdmx_hash_find(&ahc->by_gid, gid, &val)) {
		gah = (void *) (uintptr_t) val;
		gah->refs++;
		return gah;
	}
	if (ahc->cnt >= ahc->max) {
		RDMX_INFO(FI_LOG_AV, "all %zu address handles of the device in use\n",
			  ahc->max);
		*err = -FI_ENOSPC;
		return NULL;
	}
	gah = calloc(1, sizeof(*gah));
	if (!gah) {
		*err = -FI_ENOMEM;
		return NULL;
	}
	memcpy(gah->gid, gid, sizeof(gah->gid));
	*err = rdmx_ibv_gid_ah_create(ahc, core, gah);
	if (*err)
		goto err_free;
	*err = rdmx_hash_insert(&ahc->by_gid, gah->gid, (uintptr_t) gah);
	if (*err)
		goto err_destroy;
	if (ahc->efa) {
		*err = rdmx_hash_insert(&ahc->by_ahn, &gah->ahn, (uintptr_t) gah);
		if (*err) {
			rdmx_hash_remove(&ahc->by_gid, gah->gid);
			goto err_destroy;
		}
	}
	gah->refs = 1;
	ahc->cnt++;
	rdmx_dlist_insert_tail(&ahc->all, &gah->link);
	return gah;

err_destroy:
	g_rdmx_ibv->destroy_ah(gah->ah);
err_free:
	free(gah);
	return NULL;
}

void rdmx_ibv_ahc_put(struct rdmx_ibv_ahc *ahc, struct rdmx_ibv_gid_ah *gah)
{
	if (--gah->refs)
		return;
	rdmx_hash_remove(&ahc->by_gid, gah->gid);
	if (ahc->efa)
		rdmx_hash_remove(&ahc->by_ahn, &gah->ahn);
	rdmx_dlist_remove(&gah->link);
	ahc->cnt--;
	g_rdmx_ibv->destroy_ah(gah->ah);
	free(gah);
}

struct rdmx_ibv_gid_ah *rdmx_ibv_ahc_by_ahn(struct rdmx_ibv_ahc *ahc,
					    uint16_t ahn)
{
	uint64_t val;

	return rdmx_hash_find(&ahc->by_ahn, &ahn, &val) ?
	       (void *) (uintptr_t) val : NULL;
}

/*
 * Every work completion status (verbs.h) and what it means to the rdm
 * layer. A send that exhausted its RNR retries is RNR; one whose peer
 * never answered, or whose queue pair is gone (retries exhausted,
 * response timeout, an aborted remote, a destination QPN that does not
 * exist: libefa folds its codes for these into RETRY_EXC, RESP_TIMEOUT,
 * REM_ABORT and REM_INV_RD_REQ) is UNREACH; length errors are MSGSIZE
 * (libefa's remote BAD_LENGTH is REM_INV_REQ); a remote key or range
 * refused is ACCESS; flushes are FLUSHED; the rest are errors of this
 * side or the device (IO), extended reliable connections and tag
 * matching included, which rdmx never uses.
 */
#define RDMX_IBV_STATUSES(X)				\
	X(IBV_WC_SUCCESS,		OK)		\
	X(IBV_WC_LOC_LEN_ERR,		MSGSIZE)	\
	X(IBV_WC_LOC_QP_OP_ERR,		IO)		\
	X(IBV_WC_LOC_EEC_OP_ERR,	IO)		\
	X(IBV_WC_LOC_PROT_ERR,		IO)		\
	X(IBV_WC_WR_FLUSH_ERR,		FLUSHED)	\
	X(IBV_WC_MW_BIND_ERR,		IO)		\
	X(IBV_WC_BAD_RESP_ERR,		IO)		\
	X(IBV_WC_LOC_ACCESS_ERR,	IO)		\
	X(IBV_WC_REM_INV_REQ_ERR,	MSGSIZE)	\
	X(IBV_WC_REM_ACCESS_ERR,	ACCESS)		\
	X(IBV_WC_REM_OP_ERR,		IO)		\
	X(IBV_WC_RETRY_EXC_ERR,		UNREACH)	\
	X(IBV_WC_RNR_RETRY_EXC_ERR,	RNR)		\
	X(IBV_WC_LOC_RDD_VIOL_ERR,	IO)		\
	X(IBV_WC_REM_INV_RD_REQ_ERR,	UNREACH)	\
	X(IBV_WC_REM_ABORT_ERR,		UNREACH)	\
	X(IBV_WC_INV_EECN_ERR,		IO)		\
	X(IBV_WC_INV_EEC_STATE_ERR,	IO)		\
	X(IBV_WC_FATAL_ERR,		IO)		\
	X(IBV_WC_RESP_TIMEOUT_ERR,	UNREACH)	\
	X(IBV_WC_GENERAL_ERR,		IO)		\
	X(IBV_WC_TM_ERR,		IO)		\
	X(IBV_WC_TM_RNDV_INCOMPLETE,	IO)

static const enum rdmx_dev_status rdmx_ibv_statuses[] = {
#define RDMX_IBV_STATUS_ROW(wc, dev) [wc] = RDMX_DEV_##dev,
	RDMX_IBV_STATUSES(RDMX_IBV_STATUS_ROW)
#undef RDMX_IBV_STATUS_ROW
};

#define RDMX_IBV_STATUS_ONE(wc, dev) + 1
_Static_assert(0 RDMX_IBV_STATUSES(RDMX_IBV_STATUS_ONE) == IBV_WC_TM_RNDV_INCOMPLETE + 1 &&
	       RDMX_ARRAY_SIZE(rdmx_ibv_statuses) == IBV_WC_TM_RNDV_INCOMPLETE + 1,
	       "RDMX_IBV_STATUSES must list every ibv_wc_status once");
#undef RDMX_IBV_STATUS_ONE

enum rdmx_dev_status rdmx_ibv_status(enum ibv_wc_status status)
{
	/* A status newer than this table is an error all the same. */
	return (size_t) status < RDMX_ARRAY_SIZE(rdmx_ibv_statuses) ?
	       rdmx_ibv_statuses[status] : RDMX_DEV_IO;
}

int rdmx_ibv_slab_construct(struct rdmx_ibv_slab *slab, struct ibv_pd *pd,
			    size_t size, size_t cnt)
{
	size_t len;
	int ret;

	/* Slots start 64-byte aligned, so headers inside them are aligned. */
	slab->slot_size = RDMX_ALIGN64(size);
	len = (slab->slot_size * cnt + 4095) & ~(size_t) 4095;
	slab->mem = aligned_alloc(4096, len);
	slab->free = calloc(cnt, sizeof(*slab->free));
	if (!slab->mem || !slab->free) {
		ret = -FI_ENOMEM;
		goto err_free;
	}
	slab->mr = g_rdmx_ibv->reg_mr(pd, slab->mem, len, IBV_ACCESS_LOCAL_WRITE);
	if (!slab->mr) {
		ret = -errno;
		RDMX_WARN(FI_LOG_EP_CTRL, "ibv_reg_mr of %zu bytes: %s\n", len,
			  strerror(errno));
		goto err_free;
	}
	for (slab->free_cnt = 0; slab->free_cnt < cnt; slab->free_cnt++)
		slab->free[slab->free_cnt] = (uint32_t) (cnt - 1 - slab->free_cnt);
	return 0;

err_free:
	free(slab->mem);
	free(slab->free);
	return ret;
}

void rdmx_ibv_slab_destruct(struct rdmx_ibv_slab *slab)
{
	g_rdmx_ibv->dereg_mr(slab->mr);
	free(slab->mem);
	free(slab->free);
}
