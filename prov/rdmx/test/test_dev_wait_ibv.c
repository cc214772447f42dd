/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx efa and verbs devices asleep, against the fake rdma-core's
 * completion channels (fake_ibv_chan.c): the descriptor wait_fd gives,
 * what wait_arm says before a sleep and what the next poll_cq ends
 * (rdmx_dev.h, rdmx_dev_ibv_chan.h), and a device that goes without a
 * channel. Every test runs on both devices unless it is about one.
 */
#include <fcntl.h>
#include <poll.h>

#include "fake_ibv.h"
#include "rdmx_clock.h"
#include "rdmx_dev_ibv.h"
#include "rdmx_test_dev.h"

struct wait_kind {
	const struct rdmx_dev_ops	*ops;
	enum fake_ibv_kind		kind;
	const char			*name;
};

static const struct wait_kind wait_kinds[] = {
	{ &rdmx_dev_efa_ops, FAKE_IBV_EFA, "rdmap0s6" },
	{ &rdmx_dev_verbs_ops, FAKE_IBV_IB, "mlx5_0" },
};

#define WAIT_EFA	(&wait_kinds[0])
#define WAIT_VERBS	(&wait_kinds[1])

#define WAIT_RX_CNT	8
#define WAIT_RX_LEN	4096

/* Two devices of one kind on the one fake device, a handle from a to b. */
struct wait_pair {
	const struct wait_kind	*kind;
	struct rdmx_dev		*a, *b;
	struct rdmx_ah		*to_b;
	uint8_t			rx[WAIT_RX_CNT][WAIT_RX_LEN];	/* b's */
	uint64_t		posted;		/* receives b was given */
};

static void wait_setup(void)
{
	g_rdmx_params.iface = NULL;
}

TestSuite(ibv_wait, .init = wait_setup);

/* Installs the one fake device of kind k, as cfg says when not NULL. */
static void wait_install(const struct wait_kind *k, const struct fake_ibv_dev_cfg *cfg)
{
	struct fake_ibv_dev_cfg own;

	if (!cfg) {
		fake_ibv_cfg(&own, k->kind, k->name, 1);
		cfg = &own;
	}
	fake_ibv_install(cfg, 1);
}

static struct rdmx_dev *wait_dev_open(const struct wait_kind *k)
{
	struct rdmx_dev_attr attr = { .sq_size = 256, .rq_size = 64 };
	struct rdmx_dev *dev = NULL;
	int ret = k->ops->open(&attr, &dev);

	cr_assert_eq(ret, 0, "%s open: %s", k->ops->name, fi_strerror(-ret));
	return dev;
}

/* Gives b another receive buffer, wr_id 1, 2... */
static void wait_post_recv(struct wait_pair *p)
{
	uint8_t *buf = p->rx[p->posted % WAIT_RX_CNT];

	p->posted++;
	cr_assert_eq(p->b->ops->post_recv(p->b, buf, WAIT_RX_LEN, p->posted), 0);
}

/* Opens a and b (the fake installed already) with their handle. */
static void wait_pair_open(struct wait_pair *p, const struct wait_kind *k)
{
	uint8_t addr[RDMX_DEV_ADDR_MAX];

	memset(p, 0, sizeof(*p));
	p->kind = k;
	p->a = wait_dev_open(k);
	p->b = wait_dev_open(k);
	if (p->b->ops->rx_memory)
		cr_assert_eq(p->b->ops->rx_memory(p->b, p->rx, sizeof(p->rx)), 0);
	p->b->ops->getname(p->b, addr);
	cr_assert_eq(p->a->ops->ah_create(p->a, addr, &p->to_b), 0);
}

static void wait_pair_close(struct wait_pair *p)
{
	p->a->ops->ah_destroy(p->a, p->to_b);
	rdmx_test_close_devs(p->a, p->b);
}

/* Sends one byte, val, from a to b. */
static void wait_send(struct wait_pair *p, uint8_t val)
{
	static uint8_t byte;
	struct iovec iov = { &byte, 1 };

	byte = val;
	cr_assert_eq(p->a->ops->post_send(p->a, p->to_b, &iov, 1, val,
					  RDMX_DEV_SEND_AWAITED), 0);
}

/* Receive completions dev's next poll gives (wr_id of the last to *wr_id). */
static int wait_recvs(struct rdmx_dev *dev, uint64_t *wr_id)
{
	struct rdmx_dev_cqe cqe[8];
	int n = dev->ops->poll_cq(dev, cqe, 8), recvs = 0;

	for (int i = 0; i < n; i++) {
		if (cqe[i].op != RDMX_DEV_OP_RECV)
			continue;
		cr_assert_eq(cqe[i].status, RDMX_DEV_OK);
		recvs++;
		*wr_id = cqe[i].wr_id;
	}
	return recvs;
}

/*
 * a's first byte to b, received: at once on efa; on verbs after swsrd's
 * challenge, which takes a few polls of both. Both are quiet afterwards.
 */
static void wait_meet(struct wait_pair *p)
{
	struct rdmx_dev_cqe cqe[8];
	uint64_t wr_id;
	int got = 0;

	wait_post_recv(p);
	wait_send(p, 1);
	for (int i = 0; i < 20 && !got; i++) {
		got = wait_recvs(p->b, &wr_id);
		(void) p->a->ops->poll_cq(p->a, cqe, 8);
	}
	cr_assert_eq(got, 1, "b never received a's first byte");
	for (int i = 0; i < 4; i++) {
		(void) p->a->ops->poll_cq(p->a, cqe, 8);
		(void) p->b->ops->poll_cq(p->b, cqe, 8);
	}
}

/*
 * A pair of kind k that met, b with a receive posted: the start of the
 * tests of one sleep. Returns b's descriptor.
 */
static int wait_pair_ready(struct wait_pair *p, const struct wait_kind *k)
{
	wait_install(k, NULL);
	wait_pair_open(p, k);
	wait_meet(p);
	wait_post_recv(p);
	return p->b->ops->wait_fd(p->b);
}

/* Whether fd is readable now. */
static bool wait_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/* What wait_arm says after a poll of dev; its due to *due_p. */
static int wait_arm(struct rdmx_dev *dev, uint64_t *due_p)
{
	struct rdmx_dev_cqe cqe[8];

	(void) dev->ops->poll_cq(dev, cqe, 8);
	*due_p = UINT64_MAX;
	return dev->ops->wait_arm(dev, due_p);
}

/* A descriptor that poll_cq may read without blocking, the same for life. */
Test(ibv_wait, descriptor_is_stable)
{
	for (size_t k = 0; k < RDMX_ARRAY_SIZE(wait_kinds); k++) {
		struct wait_pair p;
		uint64_t due;
		int fd;

		wait_install(&wait_kinds[k], NULL);
		wait_pair_open(&p, &wait_kinds[k]);
		fd = p.b->ops->wait_fd(p.b);
		cr_assert_geq(fd, 0, "%s: no descriptor", p.b->ops->name);
		cr_assert(fcntl(fd, F_GETFL) & O_NONBLOCK);
		cr_assert_neq(fd, p.a->ops->wait_fd(p.a), "one descriptor per device");
		wait_meet(&p);
		(void) wait_arm(p.b, &due);
		wait_post_recv(&p);
		wait_send(&p, 2);
		(void) wait_arm(p.b, &due);
		cr_assert_eq(p.b->ops->wait_fd(p.b), fd);
		wait_pair_close(&p);
	}
}

/*
 * Nothing queued: wait_arm lets the thread sleep and the descriptor is
 * quiet. A completion that comes after the arm makes it readable; the
 * poll that takes the completion takes the event and acknowledges it.
 */
Test(ibv_wait, a_completion_after_the_arm_wakes_the_sleeper)
{
	for (size_t k = 0; k < RDMX_ARRAY_SIZE(wait_kinds); k++) {
		struct fake_ibv_events ev;
		struct wait_pair p;
		uint64_t due, wr_id = 0;
		int fd;

		fd = wait_pair_ready(&p, &wait_kinds[k]);
		cr_assert_eq(wait_arm(p.b, &due), 0, "%s", p.b->ops->name);
		cr_assert_not(wait_readable(fd), "%s: readable with nothing queued",
			      p.b->ops->name);
		wait_send(&p, 7);
		cr_assert(wait_readable(fd), "%s: a completion did not wake",
			  p.b->ops->name);
		cr_assert_eq(wait_recvs(p.b, &wr_id), 1);
		cr_assert_eq(wr_id, p.posted);
		cr_assert_eq(p.rx[(p.posted - 1) % WAIT_RX_CNT][0], 7);
		cr_assert_not(wait_readable(fd), "%s: the poll left the event",
			      p.b->ops->name);
		fake_ibv_events(&ev);
		cr_assert_eq(ev.raised, 1);
		cr_assert_eq(ev.got, 1);
		cr_assert_eq(ev.acked, 1);
		/* Quiet again: the next sleep is allowed, and armed anew. */
		cr_assert_eq(wait_arm(p.b, &due), 0);
		cr_assert_not(wait_readable(fd));
		fake_ibv_events(&ev);
		cr_assert_eq(ev.arms, 2);
		wait_pair_close(&p);
	}
}

/*
 * A completion queued after the last poll and before the arm raises no
 * event: wait_arm must find it (-FI_EAGAIN), and the next poll must give
 * it, once.
 */
Test(ibv_wait, a_completion_before_the_arm_is_kept_for_the_poll)
{
	for (size_t k = 0; k < RDMX_ARRAY_SIZE(wait_kinds); k++) {
		struct wait_pair p;
		uint64_t due = UINT64_MAX, wr_id = 0;
		int fd;

		fd = wait_pair_ready(&p, &wait_kinds[k]);
		cr_assert_eq(wait_recvs(p.b, &wr_id), 0);
		wait_send(&p, 9);
		cr_assert_eq(p.b->ops->wait_arm(p.b, &due), -FI_EAGAIN,
			     "%s: would sleep on a completion", p.b->ops->name);
		cr_assert_not(wait_readable(fd));
		/* Asked again before a poll: still there, not taken twice. */
		cr_assert_eq(p.b->ops->wait_arm(p.b, &due), -FI_EAGAIN);
		cr_assert_eq(wait_recvs(p.b, &wr_id), 1, "%s: the completion was lost",
			     p.b->ops->name);
		cr_assert_eq(wr_id, p.posted);
		cr_assert_eq(p.rx[(p.posted - 1) % WAIT_RX_CNT][0], 9);
		cr_assert_eq(wait_recvs(p.b, &wr_id), 0);
		cr_assert_eq(wait_arm(p.b, &due), 0);
		wait_pair_close(&p);
	}
}

/*
 * A device closed while armed, an event raised and not taken: the CQ and
 * then the channel go, nothing left behind (a channel destroyed before
 * its CQ would be EBUSY and leak).
 */
Test(ibv_wait, closing_an_armed_device_leaves_nothing)
{
	for (size_t k = 0; k < RDMX_ARRAY_SIZE(wait_kinds); k++) {
		struct wait_pair p;
		uint64_t due;

		(void) wait_pair_ready(&p, &wait_kinds[k]);
		cr_assert_eq(wait_arm(p.b, &due), 0);
		wait_send(&p, 3);
		cr_assert(wait_readable(p.b->ops->wait_fd(p.b)));
		wait_pair_close(&p);
	}
}

/*
 * verbs: swsrd resends what is not acknowledged. With a send out and its
 * peer silent, wait_arm lowers the due time to the retransmission, so
 * the sleeper wakes for it though nothing arrives. The timeout is a
 * minute, so that no stall of a loaded machine between the send and the
 * arm can bring the resend itself (whose completion the arm would find).
 */
Test(ibv_wait, verbs_sleeps_until_the_next_retransmission)
{
	const uint64_t rto_ns = 60000000000ULL;
	struct wait_pair p;
	uint64_t due, sent;

	g_rdmx_params.rto_min_us = rto_ns / 1000;
	wait_install(WAIT_VERBS, NULL);
	wait_pair_open(&p, WAIT_VERBS);
	cr_assert_eq(wait_arm(p.a, &due), 0);
	cr_assert_eq(due, UINT64_MAX, "a timer with nothing sent");
	sent = rdmx_clock_ns();
	wait_send(&p, 4);
	cr_assert_eq(wait_arm(p.a, &due), 0);
	cr_assert_geq(due, sent + rto_ns, "a wake before the retransmission");
	cr_assert_leq(due, rdmx_clock_ns() + rto_ns, "no wake for the retransmission");
	wait_pair_close(&p);
}

/*
 * A request for notification that fails: the device cannot promise an
 * event, so the sleep lasts a tick at most; the next arm works again.
 */
Test(ibv_wait, failed_arm_sleeps_a_tick)
{
	for (size_t k = 0; k < RDMX_ARRAY_SIZE(wait_kinds); k++) {
		struct wait_pair p;
		uint64_t due, before;

		wait_install(&wait_kinds[k], NULL);
		wait_pair_open(&p, &wait_kinds[k]);
		wait_meet(&p);
		(void) wait_arm(p.b, &due);
		fake_ibv_fail(FAKE_IBV_REQ_NOTIFY_CQ, EIO, 1);
		before = rdmx_clock_ns();
		cr_assert_eq(wait_arm(p.b, &due), 0);
		cr_assert_leq(due, rdmx_clock_ns() + RDMX_DEV_WAIT_TICK_NS);
		/* verbs may owe an acknowledgement sooner. */
		if (&wait_kinds[k] == WAIT_EFA)
			cr_assert_geq(due, before + RDMX_DEV_WAIT_TICK_NS);
		cr_assert_eq(wait_arm(p.b, &due), 0);
		wait_post_recv(&p);
		wait_send(&p, 5);
		cr_assert(wait_readable(p.b->ops->wait_fd(p.b)));
		wait_pair_close(&p);
	}
}

/*
 * Without a channel (wait_fd -1) the caller polls every tick; the
 * device still works, and wait_arm still finds a completion that is
 * there without asking for an event.
 */
static void wait_without_channel(const struct wait_kind *k)
{
	struct fake_ibv_events ev;
	struct wait_pair p;
	uint64_t due, wr_id = 0;

	wait_pair_open(&p, k);
	cr_assert_eq(p.b->ops->wait_fd(p.b), -1, "%s", k->ops->name);
	cr_assert_eq(p.a->ops->wait_fd(p.a), -1);
	wait_meet(&p);
	cr_assert_eq(wait_arm(p.b, &due), 0);
	wait_post_recv(&p);
	wait_send(&p, 6);
	cr_assert_eq(p.b->ops->wait_arm(p.b, &due), -FI_EAGAIN);
	cr_assert_eq(wait_recvs(p.b, &wr_id), 1);
	cr_assert_eq(p.rx[(p.posted - 1) % WAIT_RX_CNT][0], 6);
	fake_ibv_events(&ev);
	cr_assert_eq(ev.arms, 0, "armed a CQ without a channel");
	wait_pair_close(&p);
}

Test(ibv_wait, a_channel_that_cannot_be_made_leaves_the_tick)
{
	for (size_t k = 0; k < RDMX_ARRAY_SIZE(wait_kinds); k++) {
		wait_install(&wait_kinds[k], NULL);
		fake_ibv_fail(FAKE_IBV_CREATE_COMP_CHANNEL, EMFILE, 2);
		wait_without_channel(&wait_kinds[k]);
		cr_assert_eq(fake_ibv_fail_left(FAKE_IBV_CREATE_COMP_CHANNEL), 0);
	}
}

/* An EFA device without CQ notifications refuses a CQ with a channel. */
Test(ibv_wait, efa_without_cq_notifications_leaves_the_tick)
{
	struct fake_ibv_dev_cfg cfg;

	fake_ibv_cfg(&cfg, FAKE_IBV_EFA, WAIT_EFA->name, 1);
	cfg.no_cq_events = true;
	wait_install(WAIT_EFA, &cfg);
	wait_without_channel(WAIT_EFA);
}
