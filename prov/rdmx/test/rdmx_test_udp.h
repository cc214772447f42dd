/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: two udp devices of one process at 127.0.0.1, A sending
 * packets of RDMX_TEST_UDP_LEN bytes to B over swsrd.
 */
#ifndef RDMX_TEST_UDP_H
#define RDMX_TEST_UDP_H

#include <stdlib.h>

#include "rdmx_test.h"
#include "rdmx_dev_udp.h"

#define RDMX_TEST_UDP_BUFS	256
#define RDMX_TEST_UDP_LEN	100
/* The room the rdm layer leaves before each buffer for the header. */
#define RDMX_TEST_UDP_FRONT	64

struct rdmx_test_udp_pair {
	struct rdmx_dev	*a, *b;
	struct rdmx_ah	*a_to_b, *b_to_a;
	uint8_t		*bufs;		/* B's receive buffers */
	size_t		sent_ok;	/* A's sends completed */
	size_t		received;	/* B's packets handed up */
};

/* Opens a device sending from paths sockets. */
static inline struct rdmx_dev *rdmx_test_udp_open(size_t paths)
{
	union rdmx_udp_addr src;
	struct rdmx_dev_attr attr = { .src_addr = &src, .sq_size = RDMX_TEST_UDP_BUFS,
				      .rq_size = RDMX_TEST_UDP_BUFS };
	struct rdmx_dev *dev;

	memset(&src, 0, sizeof(src));
	src.sin = rdmx_test_sin("127.0.0.1", 0);
	g_rdmx_params.paths = paths;
	cr_assert_eq(rdmx_dev_udp_ops.open(&attr, &dev), 0);
	g_rdmx_params.paths = 1;
	return dev;
}

/* from's handle for to, a peer that may be sent to from every path. */
static inline struct rdmx_ah *rdmx_test_udp_ah(struct rdmx_dev *from, struct rdmx_dev *to)
{
	union rdmx_udp_addr addr;
	struct rdmx_ah *ah;

	to->ops->getname(to, &addr);
	cr_assert_eq(from->ops->ah_create(from, &addr, &ah), 0);
	from->ops->ah_peer(from, ah, RDMX_DEV_PEER_WIDE | RDMX_DEV_PEER_PATHS);
	return ah;
}

/* B's receive buffer i (its wr_id), past its front room. */
static inline uint8_t *rdmx_test_udp_buf(const struct rdmx_test_udp_pair *p, uint64_t i)
{
	return p->bufs + i * (RDMX_TEST_UDP_FRONT + p->b->caps.mtu) + RDMX_TEST_UDP_FRONT;
}

/* Posts B's receive buffer i (at the start, and each time it is read). */
static inline void rdmx_test_udp_repost(struct rdmx_test_udp_pair *p, uint64_t i)
{
	cr_assert_eq(p->b->ops->post_recv(p->b, rdmx_test_udp_buf(p, i), p->b->caps.mtu, i), 0);
}

/* Opens A, sending from a_paths sockets, and B, with all its buffers posted. */
static inline void rdmx_test_udp_pair_open(struct rdmx_test_udp_pair *p, size_t a_paths)
{
	rdmx_test_use_loopback();
	p->a = rdmx_test_udp_open(a_paths);
	p->b = rdmx_test_udp_open(1);
	p->a_to_b = rdmx_test_udp_ah(p->a, p->b);
	p->b_to_a = rdmx_test_udp_ah(p->b, p->a);
	p->bufs = calloc(RDMX_TEST_UDP_BUFS, RDMX_TEST_UDP_FRONT + p->b->caps.mtu);
	cr_assert_not_null(p->bufs);
	for (size_t i = 0; i < RDMX_TEST_UDP_BUFS; i++)
		rdmx_test_udp_repost(p, i);
	p->sent_ok = p->received = 0;
}

static inline void rdmx_test_udp_pair_close(struct rdmx_test_udp_pair *p)
{
	p->a->ops->close(p->a);
	p->b->ops->close(p->b);
	free(p->bufs);
}

/* Polls A once: each completion must be a send that succeeded. */
static inline void rdmx_test_udp_poll_a(struct rdmx_test_udp_pair *p)
{
	struct rdmx_dev_cqe cqe[16];
	int n = p->a->ops->poll_cq(p->a, cqe, 16);

	for (int k = 0; k < n; k++) {
		cr_assert_eq(cqe[k].op, RDMX_DEV_OP_SEND);
		cr_assert_eq(cqe[k].status, RDMX_DEV_OK);
		p->sent_ok++;
	}
}

/* Polls B once, with room for max: each completion must be one of A's packets. */
static inline void rdmx_test_udp_poll_b(struct rdmx_test_udp_pair *p, int max)
{
	struct rdmx_dev_cqe cqe[RDMX_TEST_UDP_BUFS];
	int n = p->b->ops->poll_cq(p->b, cqe, max);

	for (int k = 0; k < n; k++) {
		cr_assert_eq(cqe[k].op, RDMX_DEV_OP_RECV);
		cr_assert_eq(cqe[k].src_ah, p->b_to_a, "a packet of A's not taken as A's");
		cr_assert_eq(cqe[k].len, RDMX_TEST_UDP_LEN);
		p->received++;
	}
}

/* Polls both devices until A's sends and B's receives reach the counts. */
static inline void rdmx_test_udp_poll_until(struct rdmx_test_udp_pair *p, size_t want_sent,
					    size_t want_received)
{
	for (int idle = 0; (p->sent_ok < want_sent || p->received < want_received) &&
	     idle < 200000; idle++) {
		rdmx_test_udp_poll_a(p);
		rdmx_test_udp_poll_b(p, 16);
	}
}

/* Posts cnt packets from A to B. */
static inline void rdmx_test_udp_post(struct rdmx_test_udp_pair *p, size_t cnt)
{
	static uint8_t payload[RDMX_TEST_UDP_LEN];
	struct iovec iov = { payload, RDMX_TEST_UDP_LEN };

	for (size_t i = 0; i < cnt; i++)
		cr_assert_eq(p->a->ops->post_send(p->a, p->a_to_b, &iov, 1, i, 0), 0);
}

/* Sends cnt packets more from A to B, a few at a time, and waits for all. */
static inline void rdmx_test_udp_send_all(struct rdmx_test_udp_pair *p, size_t cnt)
{
	size_t sent = p->sent_ok + cnt, received = p->received + cnt;

	for (size_t i = 0; i < cnt; i += 8) {
		rdmx_test_udp_post(p, RDMX_MIN(cnt - i, (size_t) 8));
		rdmx_test_udp_poll_a(p);
		rdmx_test_udp_poll_b(p, 16);
	}
	rdmx_test_udp_poll_until(p, sent, received);
	cr_assert_eq(p->sent_ok, sent);
	cr_assert_eq(p->received, received);
}

#endif /* RDMX_TEST_UDP_H */
