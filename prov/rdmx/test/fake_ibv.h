/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: a fake rdma-core behind the g_rdmx_ibv seam
 * (rdmx_ibv.h), so that the efa and verbs devices run here, where no RDMA
 * device exists. Every queue pair of the process is on one fake fabric:
 * ibv_wr_complete delivers at once to the queue pair the address handle's
 * GID and the remote QPN name, unless a test holds them back to deliver
 * them in another order (fake_ibv_hold). What it models, and from which
 * document, is listed at the top of fake_ibv.c.
 */
#ifndef FAKE_IBV_H
#define FAKE_IBV_H

#include <stdbool.h>
#include <stddef.h>

#include "rdmx_dev_efa.h"
#include "rdmx_ibv.h"

enum fake_ibv_kind {
	FAKE_IBV_EFA,		/* EFA: SRD queue pairs, efadv answers */
	FAKE_IBV_IB,		/* InfiniBand: UD queue pairs */
	FAKE_IBV_ROCE,		/* RoCE v2 with an IPv4-mapped GID */
};

struct fake_ibv_dev_cfg {
	char			name[32];
	enum fake_ibv_kind	kind;
	bool			port_down;
	enum ibv_mtu		active_mtu;	/* IB and RoCE */
	uint32_t		max_msg_sz;	/* EFA: the datagram size */
	uint8_t			gid[16];
	int			max_qp_wr;
	int			max_sge;	/* IB and RoCE: SGEs per WR */
	int			max_ah;		/* address handles at most */
	struct efadv_device_attr efa;		/* EFA only */
	/*
	 * EFA: the kernel driver reports no CQ notifications, so a CQ with a
	 * completion channel is EOPNOTSUPP (libefa's create_cq).
	 */
	bool			no_cq_events;
};

/* A sensible EFA (RDMA read, RNR retry, source GIDs) or IB device. */
void fake_ibv_cfg(struct fake_ibv_dev_cfg *cfg, enum fake_ibv_kind kind,
		  const char *name, uint8_t gid_last);

/* Resets the fake, gives it these devices and points g_rdmx_ibv at it. */
void fake_ibv_install(const struct fake_ibv_dev_cfg *devs, size_t n);

/*
 * The exit status of a test that misused the fake: called an operation
 * or read a completion field it did not ask for at creation, which
 * crashes under rdma-core (the function is NULL).
 */
#define FAKE_IBV_MISUSE_EXIT	86

/* Calls that failure injection can make fail. */
enum fake_ibv_call {
	FAKE_IBV_GET_DEVICE_LIST,	/* ENOSYS: no RDMA in the kernel */
	FAKE_IBV_OPEN_DEVICE,
	FAKE_IBV_QUERY_DEVICE,
	FAKE_IBV_QUERY_PORT,
	FAKE_IBV_EFADV_QUERY_DEVICE,
	FAKE_IBV_ALLOC_PD,
	FAKE_IBV_REG_MR,
	FAKE_IBV_CREATE_CQ,		/* ibv_create_cq_ex and efadv_create_cq */
	FAKE_IBV_CREATE_QP,		/* ibv_create_qp_ex and efadv_create_qp_ex */
	FAKE_IBV_MODIFY_QP,
	FAKE_IBV_CREATE_AH,
	FAKE_IBV_POST_RECV,
	FAKE_IBV_WR_COMPLETE,
	FAKE_IBV_CREATE_COMP_CHANNEL,
	FAKE_IBV_REQ_NOTIFY_CQ,
	FAKE_IBV_CALLS
};

/* The next count calls fail the documented way with errno err. */
void fake_ibv_fail(enum fake_ibv_call call, int err, unsigned count);

/* The same after skip calls succeeded. */
void fake_ibv_fail_after(enum fake_ibv_call call, unsigned skip, int err,
			 unsigned count);

/* Failures of call still to come (0: the injected ones happened). */
unsigned fake_ibv_fail_left(enum fake_ibv_call call);

/*
 * The next count work requests posted on queue pair qpn complete with
 * status and vendor_err instead of reaching their destination.
 */
void fake_ibv_inject_send_status(uint32_t qpn, enum ibv_wc_status status,
				 uint32_t vendor_err, unsigned count);

/*
 * The same, as an EFA device reports EFA status code `code`
 * (RDMX_EFA_IO_*): the code as vendor error, libefa's ibv_wc_status.
 */
void fake_ibv_inject_efa_status(uint32_t qpn, uint32_t code, unsigned count);

/* The ibv_wc_status libefa reports for EFA status code `code`. */
enum ibv_wc_status fake_efa_fold(uint32_t code);

/*
 * The next count datagrams that arrive at queue pair qpn take a receive
 * and complete it with status (no data lands).
 */
void fake_ibv_inject_recv_status(uint32_t qpn, enum ibv_wc_status status,
				 unsigned count);

/*
 * The next count sends of queue pair qpn arrive without their immediate
 * data, as from a sender that posted them with ibv_wr_send.
 */
void fake_ibv_inject_no_imm(uint32_t qpn, unsigned count);

/*
 * Reordering, as SRD may deliver: from now on the sends of queue pair qpn
 * (not its RDMA reads) are held back, neither delivered nor completed,
 * their bytes still the sender's, until fake_ibv_release. A queue pair
 * destroyed meanwhile drops its held sends.
 */
void fake_ibv_hold(uint32_t qpn);

/* Sends held back now. */
size_t fake_ibv_held(void);

/*
 * Stops holding and carries the held sends out, each as it would have
 * been at posting (delivered, refused for want of a receive...): with
 * seed 0 the last posted first, else in an order shuffled by seed.
 */
void fake_ibv_release(uint32_t seed);

/* The next queue pair created gets QPN qpn, as a reused QPN would. */
void fake_ibv_next_qpn(uint32_t qpn);

/* Objects not destroyed: contexts, PDs, MRs, CQs, QPs and AHs. */
size_t fake_ibv_live(void);

/* Hardware address handles alive (a subset of fake_ibv_live). */
size_t fake_ibv_ahs(void);

/* ibv_destroy_ah calls so far. */
size_t fake_ibv_ah_destroys(void);

/* The RNR retry count queue pair qpn was given at RTS, -1 if none. */
int fake_ibv_qp_rnr_retry(uint32_t qpn);

/* Whether any CQ had more completions than it can hold. */
bool fake_ibv_cq_overrun(void);

/* The completion events of every channel so far (fake_ibv_chan.c). */
struct fake_ibv_events {
	size_t	arms;		/* ibv_req_notify_cq calls that armed a CQ */
	size_t	raised;		/* events an armed CQ queued on its channel */
	size_t	got;		/* events ibv_get_cq_event returned */
	size_t	acked;		/* events ibv_ack_cq_events acknowledged */
};

void fake_ibv_events(struct fake_ibv_events *out);

#endif /* FAKE_IBV_H */
