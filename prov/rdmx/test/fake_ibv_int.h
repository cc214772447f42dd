/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: what the two halves of the fake rdma-core share
 * (fake_ibv.c: devices, memory, completion queues, queue pairs and
 * address handles; fake_ibv_wr.c: work requests and delivery).
 */
#ifndef FAKE_IBV_INT_H
#define FAKE_IBV_INT_H

#include "rdmx.h"
#include "rdmx_dev_efa.h"
#include "fake_ibv.h"

#define FAKE_DEVS_MAX	4
#define FAKE_SGE_MAX	4
#define FAKE_BATCH_MAX	256
#define FAKE_AH_UNKNOWN	0xffff

struct fake_dev {
	struct ibv_device	dev;
	struct fake_ibv_dev_cfg	cfg;
};

struct fake_pd {
	struct ibv_pd		pd;
	size_t			children;	/* MRs, QPs and AHs */
};

struct fake_mr {
	struct ibv_mr		mr;
	int			access;
	struct fake_mr		*next;		/* on g_fake.mrs */
};

struct fake_wc {
	uint64_t		wr_id;
	enum ibv_wc_status	status;
	enum ibv_wc_opcode	opcode;
	uint32_t		vendor_err, byte_len, src_qp, wc_flags;
	__be32			imm_data;	/* with IBV_WC_WITH_IMM */
	uint16_t		slid;
	union ibv_gid		sgid;
	uint32_t		sq_qpn;		/* a send's QP: frees its entry */
};

struct fake_chan;

struct fake_cq {
	struct ibv_cq_ex	cq;		/* first: the devices cast it */
	struct efadv_cq		efa_cq;
	uint64_t		wc_flags;	/* IBV_WC_EX_WITH_* asked for */
	bool			with_sgid;
	struct fake_wc		*wc;
	size_t			cap, head, cnt;
	struct fake_wc		cur;
	size_t			qps;
	struct fake_chan	*chan;		/* its completion channel, or NULL */
	bool			armed;		/* ibv_req_notify_cq, no event yet */
	size_t			unacked;	/* events got, not acknowledged */
};

struct fake_recv {
	uint64_t		wr_id;
	struct ibv_sge		sge[FAKE_SGE_MAX];
	int			num_sge;
};

struct fake_wr {
	uint64_t		wr_id;
	unsigned		flags;
	bool			read;
	bool			imm;		/* ibv_wr_send_imm */
	__be32			imm_data;
	uint32_t		rkey;
	uint64_t		raddr;
	struct ibv_ah		*ah;
	uint32_t		qpn, qkey;
	struct ibv_sge		sge[FAKE_SGE_MAX];
	size_t			num_sge;
	uint8_t			*inl;		/* inline data, copied */
	size_t			inl_len;
};

struct fake_qp {
	struct ibv_qp_ex	qpx;		/* first: qp_base is the ibv_qp */
	bool			srd;
	uint64_t		send_ops;	/* IBV_QP_EX_WITH_* asked for */
	struct fake_dev		*fd;
	uint32_t		qkey;
	int			rnr_retry;	/* -1: never set */
	struct ibv_qp_cap	cap;
	struct fake_recv	*rq;		/* FIFO of cap.max_recv_wr */
	size_t			rq_head, rq_cnt;
	size_t			sq_out;		/* signaled sends not polled */
	struct fake_wr		batch[FAKE_BATCH_MAX];
	size_t			batch_cnt;
	int			batch_err;
	struct fake_qp		*next;		/* on g_fake.qps */
};

/* A send fake_ibv_hold keeps back: its queue pair and request. */
struct fake_held {
	struct fake_qp		*qp;
	struct fake_wr		wr;		/* inl: a copy the entry owns */
};

struct fake_ah {
	struct ibv_ah		ah;
	union ibv_gid		dgid;
	uint16_t		ahn;
	struct fake_ah		*next;		/* on g_fake.ah_list */
};


struct fake_ibv_state {
	struct fake_dev		devs[FAKE_DEVS_MAX];
	size_t			ndevs;
	int			fail_err[FAKE_IBV_CALLS];
	unsigned		fail_skip[FAKE_IBV_CALLS];
	unsigned		fail_cnt[FAKE_IBV_CALLS];
	uint32_t		inject_qpn;
	enum ibv_wc_status	inject_status;
	uint32_t		inject_vendor;
	unsigned		inject_cnt;
	uint32_t		no_imm_qpn;
	unsigned		no_imm_cnt;
	uint32_t		rx_fail_qpn;
	enum ibv_wc_status	rx_fail_status;
	unsigned		rx_fail_cnt;
	uint32_t		hold_qpn;
	bool			holding;
	struct fake_held	*held;		/* in posting order */
	size_t			held_cnt, held_cap;
	struct fake_mr		*mrs;
	struct fake_qp		*qps;
	struct fake_ah		*ah_list;
	size_t			live, ahs, ah_destroys;
	uint32_t		next_qpn, next_key;
	bool			overrun;
	struct fake_ibv_events	events;
};

/* The whole fake: its devices, live objects and injected failures. */
extern struct fake_ibv_state g_fake;

/*
 * rdma-core leaves the function of an operation nobody asked for at
 * creation NULL, and calling it crashes: the fake ends the test, saying
 * what was misused (FAKE_IBV_MISUSE_EXIT).
 */
void fake_misuse(const char *what) __attribute__((noreturn));

/* Whether this call fails now (errno set); counts the failure down. */
int fake_fails(enum fake_ibv_call call);

/* The MR of pd with this key covering [addr, addr + len), or NULL. */
struct fake_mr *fake_mr_find(struct ibv_pd *pd, uint32_t key, uint64_t addr,
			     size_t len, int access);

/* Queues a completion on a CQ (an overrun when it is full). */
void fake_cq_push(struct ibv_cq *ibv_cq, const struct fake_wc *wc);

/* A live AH of protection domain pd to gid, or NULL. */
struct fake_ah *fake_ah_find(const struct ibv_pd *pd, const uint8_t *gid);

/* ibv_wr_post(3), in fake_ibv_wr.c. */
void fake_wr_start(struct ibv_qp_ex *qpx);
void fake_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data);
void fake_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr);
void fake_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
			 uint32_t qpn, uint32_t qkey);
void fake_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n,
			  const struct ibv_sge *sge);
void fake_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
				  const struct ibv_data_buf *buf);
int fake_wr_complete(struct ibv_qp_ex *qpx);

/* Drops the sends of qp that fake_ibv_hold keeps (a queue pair destroyed). */
void fake_held_drop(const struct fake_qp *qp);

/* Completion channels, in fake_ibv_chan.c. */
struct ibv_comp_channel *fake_create_comp_channel(struct ibv_context *ctx);
int fake_destroy_comp_channel(struct ibv_comp_channel *ch);
int fake_req_notify_cq(struct ibv_cq *ibv_cq, int solicited_only);
int fake_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq_p,
		      void **context_p);
void fake_ack_cq_events(struct ibv_cq *ibv_cq, unsigned int n);

/*
 * Whether a CQ of ctx may be created with attr's channel; EOPNOTSUPP on
 * an EFA device without CQ notifications.
 */
int fake_chan_check(struct ibv_context *ctx, const struct ibv_cq_init_attr_ex *attr);
/* Binds a new CQ to attr's channel (if any). */
void fake_chan_attach(struct fake_cq *cq, const struct ibv_cq_init_attr_ex *attr);
/*
 * Unbinds a CQ being destroyed: its events not taken go; one taken and
 * not acknowledged is misuse (ibv_destroy_cq would wait for it forever).
 */
void fake_chan_detach(struct fake_cq *cq);
/* A completion was queued on cq: an armed CQ raises its one event. */
void fake_chan_raise(struct fake_cq *cq);

#endif /* FAKE_IBV_INT_H */
