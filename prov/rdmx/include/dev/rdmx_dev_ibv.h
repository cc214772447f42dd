/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: what the two rdma-core devices share (rdmx_dev_ibv.c): the
 * efa device (rdmx_dev_efa.c, SRD queue pairs, reliable in hardware) and
 * the verbs device (rdmx_dev_verbs.c, UD queue pairs with swsrd on top).
 * Both name a queue by GID + QPN + QKEY + connection id, find their
 * rdma-core device by that GID, register memory with one protection
 * domain, and translate ibv_wc_status into the contract's statuses
 * through one table. Every rdma-core call goes through g_rdmx_ibv
 * (rdmx_ibv.h).
 */
#ifndef RDMX_DEV_IBV_H
#define RDMX_DEV_IBV_H

#include <stdbool.h>
#include <stdint.h>

#include "rdmx_dev.h"
#include "rdmx_hash.h"
#include "rdmx_list.h"
#include "rdmx_ibv.h"

/*
 * The Q_Key of every rdmx queue pair. A UD or SRD queue only accepts
 * packets carrying its own Q_Key, and a receive completion does not say
 * which Q_Key the sender's queue has: with one well-known value a
 * receiver can name (and answer) a sender it has never heard of, from the
 * source GID and QPN of the completion and the connection id its
 * immediate data carries. A QPN that a new queue pair reuses is told
 * apart by that connection id (struct rdmx_ibv_addr).
 */
#define RDMX_IBV_QKEY		0x52444d58u	/* "RDMX" */

/* The port every rdmx queue pair uses, and its GID table index. */
#define RDMX_IBV_PORT		1
#define RDMX_IBV_GID_INDEX	0

/*
 * The canonical raw address: the port's GID, the QPN, the Q_Key and the
 * queue pair's connection id, a random non-zero number drawn when it was
 * opened. Every send carries the sender's connection id as immediate
 * data, so a receiver builds the same address from the completion; a
 * queue pair that reuses the QPN of a closed one has another connection
 * id, so it is another peer, and nothing of the old one's traffic is
 * taken for its own. Connection id 0 names no queue pair (a domain's
 * address, QPN 0). Numbers are big-endian, so that two addresses are
 * equal exactly when memcmp says so, on any host.
 */
struct rdmx_ibv_addr {
	uint8_t		gid[16];
	uint8_t		qpn[4];
	uint8_t		qkey[4];
	uint8_t		connid[4];
};

_Static_assert(sizeof(struct rdmx_ibv_addr) == 28, "rdmx_ibv_addr has padding");
_Static_assert(sizeof(struct rdmx_ibv_addr) <= RDMX_DEV_ADDR_MAX,
	       "rdmx_ibv_addr exceeds RDMX_DEV_ADDR_MAX");

/* Builds the canonical address of a queue pair. */
void rdmx_ibv_addr_make(struct rdmx_ibv_addr *addr, const union ibv_gid *gid,
			uint32_t qpn, uint32_t connid);

/* The QPN of a canonical address. */
uint32_t rdmx_ibv_addr_qpn(const struct rdmx_ibv_addr *addr);

/* The connection id of a canonical address. */
uint32_t rdmx_ibv_addr_connid(const struct rdmx_ibv_addr *addr);


/*
 * The sender's connection id, from the immediate data of the current
 * receive completion of cq (created with IBV_WC_EX_WITH_IMM). False when
 * the completion has none, or 0: no rdmx queue pair sent it.
 */
bool rdmx_ibv_rx_connid(struct ibv_cq_ex *cq, uint32_t *connid);

/* rdmx_dev_ops address calls (addr_format and addr_str differ by device). */
int rdmx_ibv_addr_check(const void *addr, size_t len, void *canon);
size_t rdmx_ibv_addr_size(const void *canon);
int rdmx_ibv_resolve(const char *node, const char *service, void *canon);

/* Printable "<scheme>://[gid]:qpn:qkey:connid" of a canonical address. */
void rdmx_ibv_addr_print(const char *scheme, const void *canon, char *buf,
			 size_t len);

/* What tells the two devices apart when they look at rdma-core devices. */
struct rdmx_ibv_kind {
	const char	*name;		/* "efa", "verbs" */
	/*
	 * Whether an open rdma-core device is of this kind and usable; if
	 * so, writes the datagram payload it carries at most to *mtu.
	 */
	bool		(*probe)(struct ibv_context *ctx,
				 const struct ibv_port_attr *port, size_t *mtu);
};

/*
 * rdmx_dev_ops.domains for one kind: one domain per usable rdma-core
 * device (named after it, FI_RDMX_IFACE keeping only that name), its
 * address the port's GID with QPN 0. Same contract as the op.
 */
int rdmx_ibv_domains(const struct rdmx_ibv_kind *kind, const void *src,
		     const void *dest, struct rdmx_dev_domain *out, size_t max);

/* The rdma-core objects every device of the two kinds opens. */
struct rdmx_ibv_core {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	union ibv_gid		gid;
	size_t			mtu;		/* from the kind's probe */
};

/*
 * Opens the device of this kind whose GID is src's (or the first usable
 * one when src is NULL) and allocates its protection domain. 0,
 * -FI_ENODEV when no such device exists, or another -FI_E*.
 */
int rdmx_ibv_core_open(const struct rdmx_ibv_kind *kind, const void *src,
		       struct rdmx_ibv_core *core);
void rdmx_ibv_core_close(struct rdmx_ibv_core *core);

/* ibv_query_device of core's device (a failure logged); 0 or -FI_E*. */
int rdmx_ibv_core_query(const struct rdmx_ibv_core *core, const char *kind,
			struct ibv_device_attr *attr);

/*
 * Names a new queue pair of core: draws its connection id (random, never
 * 0) and writes its canonical address to addr. Returns the connection id
 * as every send carries it, big-endian immediate data.
 */
__be32 rdmx_ibv_qp_name(const struct rdmx_ibv_core *core, const struct ibv_qp *qp,
			struct rdmx_ibv_addr *addr);

/*
 * Moves a new UD or SRD queue pair to RTS, setting its RNR retry count
 * when rnr_retry >= 0. 0 or -FI_E*.
 */
int rdmx_ibv_qp_ready(struct ibv_qp *qp, int rnr_retry);

/*
 * Hardware address handles, one per remote GID and shared by every queue
 * there (an address handle names a port, not a queue), reference
 * counted, at most the device's max_ah of them. On efa each also knows
 * its AH number, which receive completions report as the sender's
 * "slid".
 */
struct rdmx_ibv_gid_ah {
	uint8_t		gid[16];	/* the hash key */
	uint16_t	ahn;		/* efa only */
	uint32_t	refs;
	struct ibv_ah	*ah;
	struct rdmx_dlist link;		/* on rdmx_ibv_ahc.all */
};

struct rdmx_ibv_ahc {
	struct rdmx_hash	by_gid;		/* gid → rdmx_ibv_gid_ah */
	struct rdmx_hash	by_ahn;		/* efa: ahn → rdmx_ibv_gid_ah */
	struct rdmx_dlist	all;		/* of rdmx_ibv_gid_ah */
	size_t			cnt;		/* handles alive */
	size_t			max;		/* the device's max_ah */
	bool			efa;
};

/*
 * 0 or -FI_ENOMEM. At most max handles (0: the device did not say, no
 * bound); with efa, handles learn their AH numbers.
 */
int rdmx_ibv_ahc_construct(struct rdmx_ibv_ahc *ahc, bool efa, size_t max);
/* Destroys every handle left. */
void rdmx_ibv_ahc_destruct(struct rdmx_ibv_ahc *ahc);

/* Whether a GID needs a new handle and there are max already. */
bool rdmx_ibv_ahc_full(struct rdmx_ibv_ahc *ahc, const uint8_t *gid);

/*
 * The handle for a GID, made on first use; NULL with -FI_E* in *err,
 * -FI_ENOSPC when it would be one more than max.
 */
struct rdmx_ibv_gid_ah *rdmx_ibv_ahc_get(struct rdmx_ibv_ahc *ahc,
					 struct rdmx_ibv_core *core,
					 const uint8_t *gid, int *err);
/* Drops a reference; the last one destroys the handle. */
void rdmx_ibv_ahc_put(struct rdmx_ibv_ahc *ahc, struct rdmx_ibv_gid_ah *gah);

/* efa: the handle with AH number ahn, or NULL. */
struct rdmx_ibv_gid_ah *rdmx_ibv_ahc_by_ahn(struct rdmx_ibv_ahc *ahc,
					    uint16_t ahn);

/* The contract's status for a work completion status. */
enum rdmx_dev_status rdmx_ibv_status(enum ibv_wc_status status);

/*
 * Registered memory cut into equal slots, taken and given back by index:
 * where the devices copy packets they send (and verbs the packets it
 * receives), so that no application buffer needs registering.
 */
struct rdmx_ibv_slab {
	uint8_t		*mem;
	struct ibv_mr	*mr;
	size_t		slot_size;
	uint32_t	*free;		/* stack of free slot indices */
	size_t		free_cnt;
};

/* Allocates and registers cnt slots of size bytes. 0 or -FI_E*. */
int rdmx_ibv_slab_construct(struct rdmx_ibv_slab *slab, struct ibv_pd *pd,
			    size_t size, size_t cnt);
void rdmx_ibv_slab_destruct(struct rdmx_ibv_slab *slab);

/* Takes a free slot; false when none is left. */
static inline bool rdmx_ibv_slab_alloc(struct rdmx_ibv_slab *slab, uint32_t *idx)
{
	if (!slab->free_cnt)
		return false;
	*idx = slab->free[--slab->free_cnt];
	return true;
}

static inline void rdmx_ibv_slab_release(struct rdmx_ibv_slab *slab, uint32_t idx)
{
	slab->free[slab->free_cnt++] = idx;
}

static inline uint8_t *rdmx_ibv_slab_buf(const struct rdmx_ibv_slab *slab,
					 uint32_t idx)
{
	return slab->mem + (size_t) idx * slab->slot_size;
}

#endif /* RDMX_DEV_IBV_H */
