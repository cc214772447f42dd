/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_api_test: untagged messages, their limits and completion levels. */
#include "api.h"

void test_self(struct fixture *fx)
{
	send_between(fx, A, A, 200, "self-send through A's own AV entry");
}

/* fi_recvv into three iovs: the bytes are scattered in order. */
void test_scatter(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	uint8_t tx[64], rx[3][40];
	struct iovec iov[3] = { { rx[0], 10 }, { rx[1], 20 }, { rx[2], 40 } };
	struct fi_context rctx, sctx;
	struct fi_cq_tagged_entry e;
	unsigned seed = ++g_seed;
	ssize_t ret;

	fill(tx, sizeof(tx), seed);
	memset(rx, 0, sizeof(rx));
	ret = fi_recvv(b->ep, iov, NULL, 3, FI_ADDR_UNSPEC, &rctx);
	if (!check_ret(ret, 0, "fi_recvv with 3 iovs"))
		return;
	ret = fi_send(a->ep, tx, sizeof(tx), NULL, b->addr, &sctx);
	if (!check_ret(ret, 0, "fi_send of 64 bytes to it")) {
		abandon_recv(fx, b, &rctx);
		return;
	}
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV | FI_MSG, &e, NULL,
			"fi_recvv completes"))
		ft_check(e.len == 64 && !memcmp(rx[0], tx, 10) && !memcmp(rx[1], tx + 10, 20) &&
			 !memcmp(rx[2], tx + 30, 34) && payload_ok(rx[2] + 34, 0, 0, 6),
			 "fi_recvv scatters 10+20+34 bytes in order", "len %zu", e.len);
	else
		abandon_recv(fx, b, &rctx);
	expect_comp(fx, a->tx_cq, &sctx, FI_SEND | FI_MSG, NULL, NULL,
		    "fi_send completes");
}

/* Zero-byte messages through several calls. */
void test_zero_bytes(struct fixture *fx)
{
	static const char *const ops[] = { "fi_send", "fi_tsenddata", "fi_tinject",
					   "fi_sendv (3 iovs)" };

	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		struct route r = fx_route(fx, A, B);
		const struct send_op *op = find_op(ops[i]);
		char prefix[64];

		snprintf(prefix, sizeof(prefix), "zero bytes, %s", ops[i]);
		transfer(fx, &r, &(struct xfer) { op, 0, op->completes, NULL, NULL }, prefix);
	}
}

/* A zero-byte fi_sendmsg into a fi_recvmsg, both with no iov at all. */
void test_zero_iov(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct fi_msg rmsg = { .addr = FI_ADDR_UNSPEC }, smsg = { .addr = b->addr };
	struct fi_context rctx, sctx;
	struct fi_cq_tagged_entry e;
	ssize_t ret;

	rmsg.context = &rctx;
	smsg.context = &sctx;
	ret = fi_recvmsg(b->ep, &rmsg, FI_COMPLETION);
	check_ret(ret, 0, "no iov: fi_recvmsg with iov_count 0");
	ret = fi_sendmsg(a->ep, &smsg, FI_COMPLETION);
	check_ret(ret, 0, "no iov: fi_sendmsg with iov_count 0");
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV | FI_MSG, &e, NULL,
			"no iov: receive completion"))
		ft_check(e.len == 0, "no iov: length 0", "len %zu", e.len);
	else
		abandon_recv(fx, b, &rctx);
	expect_comp(fx, a->tx_cq, &sctx, FI_SEND | FI_MSG, NULL, NULL,
		    "no iov: send completion");
}

/*
 * max_msg_size and inject_size: one byte more is refused before the
 * buffer is read (so a small buffer stands for the huge one); the largest
 * inject fits. Large messages are exercised by test_sizes.
 */
void test_size_limits(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	size_t max = fx->info->ep_attr->max_msg_size;
	size_t inject = fx->info->tx_attr->inject_size;
	uint8_t *buf = xmalloc(inject + 1);
	struct route r = fx_route(fx, A, B);
	struct fi_context ctx;
	ssize_t ret;

	ft_check(max >= (1ULL << 30), "max_msg_size is at least 1 GiB", "%zu", max);
	memset(buf, 0, inject + 1);
	ret = fi_send(a->ep, buf, max + 1, NULL, b->addr, &ctx);
	check_ret(ret, -FI_EMSGSIZE, "fi_send of max_msg_size + 1: -FI_EMSGSIZE");
	ret = fi_tsend(a->ep, buf, max + 1, NULL, b->addr, 1, &ctx);
	check_ret(ret, -FI_EMSGSIZE, "fi_tsend of max_msg_size + 1: -FI_EMSGSIZE");
	ret = fi_inject(a->ep, buf, inject + 1, b->addr);
	check_ret(ret, -FI_EMSGSIZE, "fi_inject of inject_size + 1: -FI_EMSGSIZE");
	ret = fi_tinjectdata(a->ep, buf, inject + 1, 1, b->addr, 1);
	check_ret(ret, -FI_EMSGSIZE, "fi_tinjectdata of inject_size + 1: -FI_EMSGSIZE");
	ret = post_sendmsg(a->ep, buf, inject + 1, NULL, b->addr, 0, 0, &ctx, FI_INJECT,
			   false);
	check_ret(ret, -FI_EMSGSIZE, "fi_sendmsg FI_INJECT of inject_size + 1: -FI_EMSGSIZE");
	free(buf);
	transfer(fx, &r, &(struct xfer) { find_op("fi_inject"), inject, false, NULL, NULL },
		 "fi_inject of exactly inject_size");
}

/* More iovs than iov_limit: -FI_EINVAL from every vector call. */
void test_iov_limit(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	size_t tx_n = fx->info->tx_attr->iov_limit + 1;
	size_t rx_n = fx->info->rx_attr->iov_limit + 1;
	size_t n = tx_n > rx_n ? tx_n : rx_n;
	struct iovec *iov = xmalloc(n * sizeof(*iov));
	uint8_t *bytes = xmalloc(n);
	struct fi_context ctx;
	ssize_t ret;

	for (size_t i = 0; i < n; i++)
		iov[i] = (struct iovec) { bytes + i, 1 };
	ret = fi_sendv(a->ep, iov, NULL, tx_n, b->addr, &ctx);
	check_ret(ret, -FI_EINVAL, "fi_sendv with iov_limit + 1 iovs: -FI_EINVAL");
	ret = fi_tsendv(a->ep, iov, NULL, tx_n, b->addr, 1, &ctx);
	check_ret(ret, -FI_EINVAL, "fi_tsendv with iov_limit + 1 iovs: -FI_EINVAL");
	ret = fi_recvv(b->ep, iov, NULL, rx_n, FI_ADDR_UNSPEC, &ctx);
	check_ret(ret, -FI_EINVAL, "fi_recvv with iov_limit + 1 iovs: -FI_EINVAL");
	if (!ret)
		abandon_recv(fx, b, &ctx);
	ret = fi_trecvv(b->ep, iov, NULL, rx_n, FI_ADDR_UNSPEC, 1, 0, &ctx);
	check_ret(ret, -FI_EINVAL, "fi_trecvv with iov_limit + 1 iovs: -FI_EINVAL");
	if (!ret)
		abandon_recv(fx, b, &ctx);
	free(iov);
	free(bytes);
}

/* Sending to an fi_addr that was never inserted: -FI_EINVAL. */
void test_bad_dest(struct fixture *fx)
{
	struct fid_ep *ep = fx->node[A].ep;
	const fi_addr_t never = 1000;
	uint8_t buf[8] = { 0 };
	struct fi_context ctx;
	ssize_t ret;

	ret = fi_send(ep, buf, sizeof(buf), NULL, never, &ctx);
	check_ret(ret, -FI_EINVAL, "fi_send to an fi_addr never inserted: -FI_EINVAL");
	ret = fi_tsend(ep, buf, sizeof(buf), NULL, never, 1, &ctx);
	check_ret(ret, -FI_EINVAL, "fi_tsend to an fi_addr never inserted: -FI_EINVAL");
	ret = fi_inject(ep, buf, sizeof(buf), never);
	check_ret(ret, -FI_EINVAL, "fi_inject to an fi_addr never inserted: -FI_EINVAL");
	send_between(fx, A, B, 16, "the endpoint still works afterwards");
}

/* How many of ep's peers it reaches by shared memory now (0 if unsaid). */
static uint64_t shm_peers(struct fid_ep *ep)
{
	struct fi_rdmx_ep_ops *ops = NULL;
	struct fi_rdmx_ep_stats stats;

	if (fi_open_ops(&ep->fid, FI_RDMX_EP_OPS, 0, (void **) &ops, NULL) || !ops ||
	    ops->query_stats(ep, &stats))
		return 0;
	return stats.shm_peers;
}

/*
 * Completion levels: a small send asked FI_INJECT_COMPLETE completes
 * before its receiver did anything; with FI_DELIVERY_COMPLETE not before
 * the receiver progressed (and took it). FI_TRANSMIT_COMPLETE is the
 * message in the receiver's queue: by the NIC not before the receiver
 * acknowledged it (it progressed); by shared memory at once, the packet
 * being in the receiver's own queue when the send returns.
 */
void test_completion_levels(struct fixture *fx)
{
	struct {
		uint64_t	flag;
		bool		at_once;
		const char	*name;
	} levels[] = {
		{ FI_INJECT_COMPLETE, true, "FI_INJECT_COMPLETE" },
		{ FI_TRANSMIT_COMPLETE, false, "FI_TRANSMIT_COMPLETE" },
		{ FI_DELIVERY_COMPLETE, false, "FI_DELIVERY_COMPLETE" },
	};
	struct route r = fx_route(fx, A, B);

	if (!send_between(fx, A, B, 16, "A and B connected"))
		return;
	levels[1].at_once = shm_peers(r.from->ep) > 0;
	for (size_t i = 0; i < ARRAY_SIZE(levels); i++) {
		const char *name = levels[i].name;
		uint8_t tx[64], rx[64];
		struct fi_context sctx, rctx;
		struct fi_cq_tagged_entry e;
		ssize_t got = -FI_EAGAIN;

		fill(tx, sizeof(tx), (unsigned) i);
		memset(rx, 0, sizeof(rx));
		if (!check_ret(post_recv(r.to->ep, rx, sizeof(rx), FI_ADDR_UNSPEC, true, 7, 0,
					 &rctx), 0, nm(name, "post receive")))
			continue;
		if (!check_ret(post_sendmsg(r.from->ep, tx, sizeof(tx), NULL, r.dest, 7, 0, &sctx,
					    FI_COMPLETION | levels[i].flag, true),
			       0, nm(name, "fi_tsendmsg"))) {
			abandon_recv(fx, r.to, &rctx);
			continue;
		}
		/* Only A progresses: B cannot have taken or acknowledged anything. */
		for (int n = 0; n < 1000 && got == -FI_EAGAIN; n++)
			got = fi_cq_read(r.from->tx_cq, &e, 1);
		ft_check((got == 1) == levels[i].at_once,
			 nm(name, levels[i].at_once ? "completes before the receiver progressed" :
				  "no completion before the receiver progressed"),
			 "fi_cq_read returned %zd", got);
		if (!expect_comp(fx, r.to->rx_cq, &rctx, FI_RECV | FI_TAGGED, NULL, NULL,
				 nm(name, "received")))
			abandon_recv(fx, r.to, &rctx);
		ft_check(payload_ok(rx, sizeof(rx), (unsigned) i, 0), nm(name, "payload"),
			 "the bytes differ");
		if (got != 1)
			expect_comp(fx, r.from->tx_cq, &sctx, FI_SEND | FI_TAGGED, NULL, NULL,
				    nm(name, "the send completes once the receiver progressed"));
	}
}
