/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fake rdma-core itself (fake_ibv.c), held to what rdma-core's man
 * pages document, so that the device tests built on it mean something:
 * an empty CQ, queue pair state masks, full queues, Q_Key checks, UD
 * silent drops and GRH, and PDs that refuse to go while in use; the
 * sends a test holds back to reorder them; and completion channels.
 */
#include <endian.h>
#include <fcntl.h>
#include <poll.h>

#include "fake_ibv.h"
#include "rdmx_test.h"

struct fake_side {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_comp_channel	*ch;	/* the CQ's, O_NONBLOCK */
	struct ibv_cq_ex	*cq;
	struct ibv_qp		*qp;
	struct ibv_mr		*mr;
	struct ibv_ah		*ah;	/* to the other side */
	uint8_t			buf[256];
};

/*
 * Opens a UD queue pair (of max_wr entries each way) on the one device,
 * its CQ on a completion channel.
 */
static void fake_side_open(struct fake_side *s, uint32_t max_wr)
{
	struct ibv_device **list = g_rdmx_ibv->get_device_list(NULL);
	struct ibv_cq_init_attr_ex cq_attr = {
		.cqe = 16,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_SRC_QP |
			    IBV_WC_EX_WITH_IMM,
	};
	struct ibv_qp_init_attr_ex qp_attr = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = max_wr, .max_recv_wr = max_wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND_WITH_IMM,
	};

	cr_assert_not_null(list);
	memset(s, 0, sizeof(*s));
	s->ctx = g_rdmx_ibv->open_device(list[0]);
	g_rdmx_ibv->free_device_list(list);
	s->pd = g_rdmx_ibv->alloc_pd(s->ctx);
	s->ch = g_rdmx_ibv->create_comp_channel(s->ctx);
	cr_assert_not_null(s->ch);
	cr_assert_eq(fcntl(s->ch->fd, F_SETFL, O_NONBLOCK), 0);
	cq_attr.channel = s->ch;
	s->cq = g_rdmx_ibv->create_cq_ex(s->ctx, &cq_attr);
	qp_attr.pd = s->pd;
	qp_attr.send_cq = qp_attr.recv_cq = ibv_cq_ex_to_cq(s->cq);
	s->qp = g_rdmx_ibv->create_qp_ex(s->ctx, &qp_attr);
	s->mr = g_rdmx_ibv->reg_mr(s->pd, s->buf, sizeof(s->buf),
				   IBV_ACCESS_LOCAL_WRITE);
	cr_assert(s->ctx && s->pd && s->cq && s->qp && s->mr);
}

/* INIT, RTR and RTS, with Q_Key qkey. */
static void fake_side_ready(struct fake_side *s, uint32_t qkey)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qkey = qkey };

	cr_assert_eq(g_rdmx_ibv->modify_qp(s->qp, &attr, IBV_QP_STATE |
		     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
	attr.qp_state = IBV_QPS_RTR;
	cr_assert_eq(g_rdmx_ibv->modify_qp(s->qp, &attr, IBV_QP_STATE), 0);
	attr.qp_state = IBV_QPS_RTS;
	cr_assert_eq(g_rdmx_ibv->modify_qp(s->qp, &attr,
					   IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

/* Two queue pairs of max_wr entries each way, in RTS with Q_Key 5. */
static void fake_pair_open(struct fake_side *a, struct fake_side *b, uint32_t max_wr)
{
	fake_side_open(a, max_wr);
	fake_side_open(b, max_wr);
	fake_side_ready(a, 5);
	fake_side_ready(b, 5);
}

static void fake_side_close(struct fake_side *s)
{
	if (s->ah)
		cr_assert_eq(g_rdmx_ibv->destroy_ah(s->ah), 0);
	cr_assert_eq(g_rdmx_ibv->dereg_mr(s->mr), 0);
	cr_assert_eq(g_rdmx_ibv->destroy_qp(s->qp), 0);
	cr_assert_eq(g_rdmx_ibv->destroy_cq(ibv_cq_ex_to_cq(s->cq)), 0);
	cr_assert_eq(g_rdmx_ibv->destroy_comp_channel(s->ch), 0);
	cr_assert_eq(g_rdmx_ibv->dealloc_pd(s->pd), 0);
	cr_assert_eq(g_rdmx_ibv->close_device(s->ctx), 0);
}

static int side_post_recv(struct fake_side *s)
{
	struct ibv_sge sge = { (uintptr_t) s->buf, sizeof(s->buf), s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	return g_rdmx_ibv->post_recv(s->qp, &wr, &bad);
}

/* Sends 8 bytes of s's buffer to `to` with Q_Key qkey, immediate 0x1234. */
static int side_send(struct fake_side *s, struct fake_side *to, uint32_t qkey)
{
	struct ibv_qp_ex *qpx = g_rdmx_ibv->qp_to_qp_ex(s->qp);
	struct ibv_sge sge = { (uintptr_t) s->buf, 8, s->mr->lkey };

	if (!s->ah) {
		struct ibv_ah_attr attr = { .is_global = 1, .port_num = 1 };
		union ibv_gid gid;

		cr_assert_eq(g_rdmx_ibv->query_gid(to->ctx, 1, 0, &gid), 0);
		attr.grh.dgid = gid;
		s->ah = g_rdmx_ibv->create_ah(s->pd, &attr);
		cr_assert_not_null(s->ah);
	}
	g_rdmx_ibv->wr_start(qpx);
	qpx->wr_id = 9;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	g_rdmx_ibv->wr_send_imm(qpx, htobe32(0x1234));
	g_rdmx_ibv->wr_set_ud_addr(qpx, s->ah, to->qp->qp_num, qkey);
	g_rdmx_ibv->wr_set_sge_list(qpx, 1, &sge);
	return g_rdmx_ibv->wr_complete(qpx);
}

static struct fake_ibv_dev_cfg cfg;

static void fake_setup(void)
{
	fake_ibv_cfg(&cfg, FAKE_IBV_IB, "mlx5_0", 1);
	fake_ibv_install(&cfg, 1);
}

TestSuite(fake_ibv, .init = fake_setup);

Test(fake_ibv, empty_cq_polls_enoent)
{
	struct fake_side s;
	struct ibv_poll_cq_attr attr = { 0 };

	fake_side_open(&s, 4);
	cr_assert_eq(g_rdmx_ibv->start_poll(s.cq, &attr), ENOENT);
	fake_side_close(&s);
	cr_assert_eq(fake_ibv_live(), 0);
}

Test(fake_ibv, qp_state_steps_need_their_masks)
{
	struct fake_side s;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	fake_side_open(&s, 4);
	cr_assert_eq(side_send(&s, &s, 1), EINVAL, "a send before RTS");
	cr_assert_eq(g_rdmx_ibv->modify_qp(s.qp, &attr, IBV_QP_STATE), EINVAL);
	attr.qp_state = IBV_QPS_RTS;
	cr_assert_eq(g_rdmx_ibv->modify_qp(s.qp, &attr, IBV_QP_STATE), EINVAL);
	fake_side_close(&s);
}

Test(fake_ibv, full_queues_are_enomem)
{
	struct fake_side a, b;

	fake_pair_open(&a, &b, 2);
	cr_assert_eq(side_post_recv(&b), 0);
	cr_assert_eq(side_post_recv(&b), 0);
	cr_assert_eq(side_post_recv(&b), ENOMEM);
	cr_assert_eq(side_send(&a, &b, 5), 0);
	cr_assert_eq(side_send(&a, &b, 5), 0);
	cr_assert_eq(side_send(&a, &b, 5), ENOMEM, "two completions not polled");
	fake_side_close(&a);
	fake_side_close(&b);
}

Test(fake_ibv, ud_receive_has_grh_and_wrong_qkey_is_dropped)
{
	struct fake_side a, b;
	struct ibv_poll_cq_attr attr = { 0 };

	fake_pair_open(&a, &b, 4);
	memset(a.buf, 0x77, 8);
	cr_assert_eq(side_post_recv(&b), 0);
	cr_assert_eq(side_send(&a, &b, 6), 0, "a UD send with a wrong Q_Key");
	cr_assert_eq(g_rdmx_ibv->start_poll(a.cq, &attr), 0);
	cr_assert_eq(a.cq->status, IBV_WC_SUCCESS, "UD senders never learn");
	g_rdmx_ibv->end_poll(a.cq);
	cr_assert_eq(g_rdmx_ibv->start_poll(b.cq, &attr), ENOENT);
	cr_assert_eq(side_send(&a, &b, 5), 0);
	cr_assert_eq(g_rdmx_ibv->start_poll(b.cq, &attr), 0);
	cr_assert_eq(b.cq->status, IBV_WC_SUCCESS);
	cr_assert_eq(g_rdmx_ibv->wc_read_byte_len(b.cq), 40 + 8);
	cr_assert(g_rdmx_ibv->wc_read_wc_flags(b.cq) & IBV_WC_GRH);
	cr_assert_eq(g_rdmx_ibv->wc_read_src_qp(b.cq), a.qp->qp_num);
	cr_assert_eq(memcmp(b.buf + 8, cfg.gid, 16), 0, "source GID at GRH byte 8");
	cr_assert_eq(b.buf[40], 0x77);
	cr_assert(g_rdmx_ibv->wc_read_wc_flags(b.cq) & IBV_WC_WITH_IMM);
	cr_assert_eq(be32toh(g_rdmx_ibv->wc_read_imm_data(b.cq)), 0x1234);
	g_rdmx_ibv->end_poll(b.cq);
	cr_assert_eq(g_rdmx_ibv->dealloc_pd(a.pd), EBUSY, "a PD in use stays");
	fake_side_close(&a);
	fake_side_close(&b);
	cr_assert_eq(fake_ibv_live(), 0);
}

/* A receive has immediate data exactly when its sender sent some. */
Test(fake_ibv, immediate_data_only_from_send_imm)
{
	struct fake_side a, b;
	struct ibv_poll_cq_attr attr = { 0 };

	fake_pair_open(&a, &b, 4);
	cr_assert_eq(side_post_recv(&b), 0);
	fake_ibv_inject_no_imm(a.qp->qp_num, 1);
	cr_assert_eq(side_send(&a, &b, 5), 0);
	cr_assert_eq(g_rdmx_ibv->start_poll(b.cq, &attr), 0);
	cr_assert_eq(b.cq->status, IBV_WC_SUCCESS);
	cr_assert_eq(g_rdmx_ibv->wc_read_wc_flags(b.cq), IBV_WC_GRH);
	g_rdmx_ibv->end_poll(b.cq);
	fake_side_close(&a);
	fake_side_close(&b);
}

/* The device's limits: an SGE more than it has is EINVAL. */
Test(fake_ibv, queue_pairs_within_the_device_sge_limits)
{
	struct ibv_device **list = g_rdmx_ibv->get_device_list(NULL);
	struct ibv_context *ctx = g_rdmx_ibv->open_device(list[0]);
	struct ibv_device_attr dattr;
	struct ibv_pd *pd = g_rdmx_ibv->alloc_pd(ctx);
	struct ibv_cq_init_attr_ex cq_attr = { .cqe = 4 };
	struct ibv_cq_ex *cq = g_rdmx_ibv->create_cq_ex(ctx, &cq_attr);
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_UD,
		.send_cq = ibv_cq_ex_to_cq(cq),
		.recv_cq = ibv_cq_ex_to_cq(cq),
		.cap = { .max_send_wr = 1, .max_recv_wr = 1 },
		.pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	struct ibv_qp *qp;

	g_rdmx_ibv->free_device_list(list);
	cr_assert_eq(g_rdmx_ibv->query_device(ctx, &dattr), 0);
	attr.cap.max_send_sge = attr.cap.max_recv_sge = (uint32_t) dattr.max_sge + 1;
	cr_assert_null(g_rdmx_ibv->create_qp_ex(ctx, &attr));
	cr_assert_eq(errno, EINVAL);
	attr.cap.max_send_sge = attr.cap.max_recv_sge = (uint32_t) dattr.max_sge;
	qp = g_rdmx_ibv->create_qp_ex(ctx, &attr);
	cr_assert_not_null(qp);
	cr_assert_eq(g_rdmx_ibv->destroy_qp(qp), 0);
	cr_assert_eq(g_rdmx_ibv->destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	cr_assert_eq(g_rdmx_ibv->dealloc_pd(pd), 0);
	cr_assert_eq(g_rdmx_ibv->close_device(ctx), 0);
	cr_assert_eq(fake_ibv_live(), 0);
}

/* Polls cq empty; how many completions it held, every one a success. */
static int fake_cq_count_ok(struct ibv_cq_ex *cq)
{
	struct ibv_poll_cq_attr attr = { 0 };
	int n = 0;

	if (g_rdmx_ibv->start_poll(cq, &attr))
		return 0;
	do {
		cr_assert_eq(cq->status, IBV_WC_SUCCESS);
		n++;
	} while (!g_rdmx_ibv->next_poll(cq));
	g_rdmx_ibv->end_poll(cq);
	return n;
}

/*
 * Held sends wait, neither delivered nor completed, keeping their send
 * queue entries, until released; those of a queue pair destroyed first
 * are dropped.
 */
Test(fake_ibv, held_sends_wait_for_their_release)
{
	struct fake_side a, b;

	fake_pair_open(&a, &b, 2);
	cr_assert_eq(side_post_recv(&b), 0);
	cr_assert_eq(side_post_recv(&b), 0);
	fake_ibv_hold(a.qp->qp_num);
	cr_assert_eq(side_send(&a, &b, 5), 0);
	cr_assert_eq(side_send(&a, &b, 5), 0);
	cr_assert_eq(fake_ibv_held(), 2);
	cr_assert_eq(side_send(&a, &b, 5), ENOMEM, "held sends keep their entries");
	cr_assert_eq(fake_cq_count_ok(a.cq), 0, "a held send completed");
	cr_assert_eq(fake_cq_count_ok(b.cq), 0, "a held send arrived");
	fake_ibv_release(7);
	cr_assert_eq(fake_ibv_held(), 0);
	cr_assert_eq(fake_cq_count_ok(b.cq), 2);
	cr_assert_eq(fake_cq_count_ok(a.cq), 2);
	cr_assert_eq(side_send(&a, &b, 5), 0, "released sends gave their entries back");
	cr_assert_eq(fake_cq_count_ok(a.cq), 1);
	fake_ibv_hold(a.qp->qp_num);
	cr_assert_eq(side_send(&a, &b, 5), 0);
	fake_side_close(&a);
	cr_assert_eq(fake_ibv_held(), 0, "a destroyed queue pair's send is still held");
	fake_side_close(&b);
	cr_assert_eq(fake_ibv_live(), 0);
}

/* A CQ read of a field its wc_flags did not ask for ends the test. */
Test(fake_ibv, reading_a_field_not_asked_for_is_misuse, .exit_code = FAKE_IBV_MISUSE_EXIT)
{
	struct ibv_device **list = g_rdmx_ibv->get_device_list(NULL);
	struct ibv_context *ctx = g_rdmx_ibv->open_device(list[0]);
	struct ibv_cq_init_attr_ex cq_attr = {
		.cqe = 4,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN,
	};
	struct ibv_cq_ex *cq = g_rdmx_ibv->create_cq_ex(ctx, &cq_attr);

	g_rdmx_ibv->free_device_list(list);
	(void) g_rdmx_ibv->wc_read_byte_len(cq);
	(void) g_rdmx_ibv->wc_read_src_qp(cq);
	cr_assert_fail("ibv_wc_read_src_qp was allowed");
}

/* So does an ibv_wr_* operation send_ops_flags did not ask for. */
Test(fake_ibv, operation_not_asked_for_is_misuse, .exit_code = FAKE_IBV_MISUSE_EXIT)
{
	struct fake_side s;
	struct ibv_qp_ex *qpx;

	fake_side_open(&s, 4);
	fake_side_ready(&s, 5);
	qpx = g_rdmx_ibv->qp_to_qp_ex(s.qp);
	g_rdmx_ibv->wr_start(qpx);
	g_rdmx_ibv->wr_rdma_read(qpx, 1, 0);
	cr_assert_fail("ibv_wr_rdma_read was allowed on a UD queue pair");
}

/* Whether a side's channel has an event to get. */
static bool side_event_waits(const struct fake_side *s)
{
	struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/*
 * ibv_req_notify_cq(3): the next completion of an armed CQ queues one
 * event, which disarms it; ibv_get_cq_event then returns the CQ, and on
 * a non-blocking channel with none left fails with EAGAIN.
 */
Test(fake_ibv, an_armed_cq_raises_one_event)
{
	struct fake_side a, b;
	struct fake_ibv_events ev;
	struct ibv_cq *cq;
	void *context;

	fake_pair_open(&a, &b, 4);
	cr_assert_eq(side_post_recv(&b), 0);
	cr_assert_eq(side_post_recv(&b), 0);
	cr_assert_eq(g_rdmx_ibv->req_notify_cq(ibv_cq_ex_to_cq(b.cq), 0), 0);
	cr_assert_not(side_event_waits(&b));
	cr_assert_eq(side_send(&a, &b, 5), 0);
	cr_assert_eq(side_send(&a, &b, 5), 0);
	cr_assert(side_event_waits(&b));
	cr_assert_not(side_event_waits(&a), "a's CQ was not armed");
	cr_assert_eq(g_rdmx_ibv->get_cq_event(b.ch, &cq, &context), 0);
	cr_assert_eq(cq, ibv_cq_ex_to_cq(b.cq));
	cr_assert_not(side_event_waits(&b), "two events for one arm");
	errno = 0;
	cr_assert_eq(g_rdmx_ibv->get_cq_event(b.ch, &cq, &context), -1);
	cr_assert_eq(errno, EAGAIN);
	g_rdmx_ibv->ack_cq_events(ibv_cq_ex_to_cq(b.cq), 1);
	fake_ibv_events(&ev);
	cr_assert_eq(ev.arms, 1);
	cr_assert_eq(ev.raised, 1);
	cr_assert_eq(ev.got, 1);
	cr_assert_eq(ev.acked, 1);
	fake_side_close(&a);
	fake_side_close(&b);
	cr_assert_eq(fake_ibv_live(), 0);
}

/*
 * A completion queued before the arm raises nothing: the least the man
 * page promises, which makes a caller poll once more after arming.
 */
Test(fake_ibv, a_completion_before_the_arm_raises_nothing)
{
	struct fake_side a, b;

	fake_pair_open(&a, &b, 4);
	cr_assert_eq(side_post_recv(&b), 0);
	cr_assert_eq(side_send(&a, &b, 5), 0);
	cr_assert_eq(g_rdmx_ibv->req_notify_cq(ibv_cq_ex_to_cq(b.cq), 0), 0);
	cr_assert_not(side_event_waits(&b));
	fake_side_close(&a);
	fake_side_close(&b);
}

/* A channel a CQ still uses is EBUSY; a CQ without one cannot be armed. */
Test(fake_ibv, a_channel_is_needed_and_outlives_its_cqs)
{
	struct fake_side s;
	struct ibv_cq_init_attr_ex attr = { .cqe = 4 };
	struct ibv_cq_ex *cq;

	fake_side_open(&s, 4);
	cr_assert_eq(g_rdmx_ibv->destroy_comp_channel(s.ch), EBUSY);
	cq = g_rdmx_ibv->create_cq_ex(s.ctx, &attr);
	cr_assert_not_null(cq);
	cr_assert_eq(g_rdmx_ibv->req_notify_cq(ibv_cq_ex_to_cq(cq), 0), EINVAL);
	cr_assert_eq(g_rdmx_ibv->destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	fake_side_close(&s);
	cr_assert_eq(fake_ibv_live(), 0);
}

/* libefa: a CQ channel needs CQ notifications; never solicited only. */
Test(fake_ibv, efa_channels_as_libefa_has_them)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 4 };
	struct efadv_cq_init_attr efa_attr = { 0 };
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_cq_ex *cq;

	for (int notify = 0; notify < 2; notify++) {
		fake_ibv_cfg(&cfg, FAKE_IBV_EFA, "rdmap0s6", 1);
		cfg.no_cq_events = !notify;
		fake_ibv_install(&cfg, 1);
		list = g_rdmx_ibv->get_device_list(NULL);
		ctx = g_rdmx_ibv->open_device(list[0]);
		g_rdmx_ibv->free_device_list(list);
		attr.channel = g_rdmx_ibv->create_comp_channel(ctx);
		cr_assert_not_null(attr.channel);
		errno = 0;
		cq = g_rdmx_ibv->efadv_create_cq(ctx, &attr, &efa_attr, sizeof(efa_attr));
		if (!notify) {
			cr_assert_null(cq);
			cr_assert_eq(errno, EOPNOTSUPP);
		} else {
			cr_assert_not_null(cq);
			cr_assert_eq(g_rdmx_ibv->req_notify_cq(ibv_cq_ex_to_cq(cq), 1),
				     EOPNOTSUPP);
			cr_assert_eq(g_rdmx_ibv->req_notify_cq(ibv_cq_ex_to_cq(cq), 0), 0);
			cr_assert_eq(g_rdmx_ibv->destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
		}
		cr_assert_eq(g_rdmx_ibv->destroy_comp_channel(attr.channel), 0);
		cr_assert_eq(g_rdmx_ibv->close_device(ctx), 0);
		cr_assert_eq(fake_ibv_live(), 0);
	}
}

/* An event got and not acknowledged: ibv_destroy_cq would wait for ever. */
Test(fake_ibv, destroying_a_cq_with_an_event_not_acknowledged_is_misuse,
     .exit_code = FAKE_IBV_MISUSE_EXIT)
{
	struct fake_side a, b;
	struct ibv_cq *cq;
	void *context;

	fake_pair_open(&a, &b, 4);
	cr_assert_eq(side_post_recv(&b), 0);
	cr_assert_eq(g_rdmx_ibv->req_notify_cq(ibv_cq_ex_to_cq(b.cq), 0), 0);
	cr_assert_eq(side_send(&a, &b, 5), 0);
	cr_assert_eq(g_rdmx_ibv->get_cq_event(b.ch, &cq, &context), 0);
	cr_assert_eq(g_rdmx_ibv->destroy_qp(b.qp), 0);
	(void) g_rdmx_ibv->destroy_cq(cq);
	cr_assert_fail("the CQ went with an event not acknowledged");
}
