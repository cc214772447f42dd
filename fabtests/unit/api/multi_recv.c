/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_api_test: FI_MULTI_RECV buffers (see api.h). */
#include "api.h"

/* fi_recvmsg with FI_MULTI_RECV on node n. */
static ssize_t post_multi(struct node *n, void *buf, size_t len, void *ctx)
{
	struct iovec iov = { buf, len };
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .context = ctx,
	};

	return fi_recvmsg(n->ep, &msg, FI_MULTI_RECV | FI_COMPLETION);
}

static bool set_min_multi(struct node *n, size_t min, const char *name)
{
	return check_ret(fi_setopt(&n->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
				   &min, sizeof(min)), 0, name);
}

static void multi_recv_options(struct node *b)
{
	size_t min = 0, len = sizeof(min);
	uint32_t small = 1;

	check_ret(fi_getopt(&b->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, &len),
		  0, "multi-recv: fi_getopt FI_OPT_MIN_MULTI_RECV");
	ft_check(min == 16384 && len == sizeof(min), "multi-recv: the default minimum is 16 KiB",
		 "%zu (length %zu)", min, len);
	check_ret(fi_setopt(&b->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &small,
			    sizeof(small)), -FI_EINVAL,
		  "multi-recv: fi_setopt with a 4-byte value: -FI_EINVAL");
	check_ret(fi_setopt(&b->ep->fid, FI_OPT_ENDPOINT, -1, &min, sizeof(min)),
		  -FI_ENOPROTOOPT, "multi-recv: fi_setopt of an unknown option");
	if (set_min_multi(b, 777, "multi-recv: fi_setopt FI_OPT_MIN_MULTI_RECV 777"))
		check_ret(fi_getopt(&b->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
				    &min, &len) || min != 777, 0,
			  "multi-recv: fi_getopt reads 777 back");
}

/*
 * Messages packed into one posted buffer, eager and medium, completing in
 * any order: each completion's buf points at its message, packed without
 * gaps in send order; the last completion carries FI_MULTI_RECV, once
 * fewer than the minimum bytes are left; later messages go elsewhere.
 */
static void multi_recv_packed(struct fixture *fx)
{
	static const size_t lens[] = { 1000, 0, 100000, 50000, 10000, 80000 };
	struct node *a = &fx->node[A], *b = &fx->node[B];
	const size_t cap = 300000, n = ARRAY_SIZE(lens);
	uint8_t *tx = xmalloc(100000), *buf = xmalloc(cap + 16);
	struct route r = fx_route(fx, A, B);
	unsigned seed = ++g_seed;
	struct fi_context mctx, sctx[ARRAY_SIZE(lens)];
	size_t off[ARRAY_SIZE(lens)], at = 0, seen = 0, released = 0, last = 0;
	bool order_ok = true;

	fill(tx, 100000, seed);
	memset(buf, 0, cap + 16);
	for (size_t i = 0; i < n; i++) {
		off[i] = at;
		at += lens[i];
	}
	if (!set_min_multi(b, 70000, "multi-recv: minimum 70000") ||
	    !check_ret(post_multi(b, buf, cap, &mctx), 0, "multi-recv: post 300000 bytes"))
		goto out;
	for (size_t i = 0; i < n; i++)
		check_ret(fi_send(a->ep, tx, lens[i], NULL, b->addr, &sctx[i]), 0,
			  "multi-recv: send into the buffer");
	for (size_t k = 0; k < n; k++) {
		struct fi_cq_tagged_entry e = { 0 };
		char why[256];
		ssize_t ret = cq_wait(fx, b->rx_cq, &e, NULL);
		size_t i;

		if (ret != 1) {
			ft_check(false, "multi-recv: every message completes", "%zu of %zu: %s",
				 k, n, wait_str(ret, b->rx_cq, why, sizeof(why)));
			goto out;
		}
		for (i = 0; i < n && lens[i] != e.len; i++)
			;
		order_ok &= i < n && e.op_context == &mctx && e.buf == buf + off[i] &&
			    (e.flags & (FI_RECV | FI_MSG)) == (FI_RECV | FI_MSG) &&
			    payload_ok(buf + off[i], lens[i], seed, 0);
		seen += i < n;
		if (e.flags & FI_MULTI_RECV) {
			released++;
			last = k;
		}
	}
	ft_check(order_ok && seen == n, "multi-recv: each message at its packed offset",
		 "%zu of %zu placed right", seen, n);
	ft_check(released == 1 && last == n - 1,
		 "multi-recv: the last completion alone says FI_MULTI_RECV",
		 "%zu entries flagged, the last at %zu", released, last);
	ft_check(payload_ok(buf + at, 0, 0, cap - at + 16), "multi-recv: nothing past the messages",
		 "bytes written past %zu", at);
	{
		void *sctxs[ARRAY_SIZE(lens)];

		for (size_t i = 0; i < n; i++)
			sctxs[i] = &sctx[i];
		expect_comp_set(fx, a->tx_cq, sctxs, n, "multi-recv: the sends complete");
	}
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 10, true, NULL, NULL },
		 "multi-recv: a released buffer takes no more");
out:
	free(tx);
	free(buf);
}

/*
 * Messages waiting before the buffer is posted pack in at once, in order;
 * one too long for the space left takes it and fails with FI_ETRUNC,
 * which releases the buffer (FI_MULTI_RECV on the error entry).
 */
static void multi_recv_unexpected(struct fixture *fx)
{
	static const size_t lens[] = { 300, 400, 500 };
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct route r = fx_route(fx, A, B);
	uint8_t tx[500], buf[1000 + 16] = { 0 };
	unsigned seed = ++g_seed;
	struct fi_context mctx;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct marker m;

	fill(tx, sizeof(tx), seed);
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++)
		check_ret(fi_inject(a->ep, tx, lens[i], b->addr), 0,
			  "multi-recv: send before the buffer is posted");
	if (!post_marker(&r, &m, "multi-recv") ||
	    !expect_comp(fx, b->rx_cq, &m.rctx, FI_RECV, NULL, NULL,
			 "multi-recv: the messages wait unexpected"))
		return;
	expect_comp(fx, a->tx_cq, &m.sctx, FI_SEND, NULL, NULL, "multi-recv: marker sent");
	if (!set_min_multi(b, 100, "multi-recv: minimum 100") ||
	    !check_ret(post_multi(b, buf, 1000, &mctx), 0, "multi-recv: post 1000 bytes"))
		return;
	/* The error entry may be read before the others (fi_cq(3)). */
	for (size_t k = 0; k < 3; k++) {
		ssize_t ret = cq_wait(fx, b->rx_cq, &e, NULL);

		if (ret == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			ret = fi_cq_readerr(b->rx_cq, &err, 0);
			ft_check(ret == 1 && err.err == FI_ETRUNC && err.op_context == &mctx &&
				 err.len == 300 && err.olen == 200 && err.buf == buf + 700 &&
				 (err.flags & FI_MULTI_RECV) &&
				 payload_ok(buf + 700, 300, seed, 16),
				 "multi-recv: the third fills the rest, FI_ETRUNC, released",
				 "err %d len %zu olen %zu flags %#llx", err.err, err.len,
				 err.olen, (unsigned long long) err.flags);
			continue;
		}
		ft_check(ret == 1 && e.op_context == &mctx && (e.len == 300 || e.len == 400) &&
			 e.buf == buf + (e.len == 300 ? 0 : 300) &&
			 !(e.flags & FI_MULTI_RECV) && payload_ok(e.buf, e.len, seed, 0),
			 "multi-recv: a waiting message packs in, in arrival order",
			 "ret %zd len %zu at offset %td", ret, e.len, (uint8_t *) e.buf - buf);
	}
}

/* With a minimum of 0 a buffer is released when full, not before. */
static void multi_recv_exact_fill(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	uint8_t tx[60], buf[100 + 16] = { 0 };
	unsigned seed = ++g_seed;
	struct fi_context mctx;
	struct fi_cq_tagged_entry e;

	fill(tx, sizeof(tx), seed);
	if (!set_min_multi(b, 0, "multi-recv: minimum 0") ||
	    !check_ret(post_multi(b, buf, 100, &mctx), 0, "multi-recv: post 100 bytes"))
		return;
	check_ret(fi_inject(a->ep, tx, 60, b->addr), 0, "multi-recv: send 60 bytes");
	if (expect_comp(fx, b->rx_cq, &mctx, FI_RECV | FI_MSG, &e, NULL,
			"multi-recv: 60 bytes in, 40 left"))
		ft_check(e.len == 60 && !(e.flags & FI_MULTI_RECV), "multi-recv: still posted",
			 "len %zu flags %#llx", e.len, (unsigned long long) e.flags);
	check_ret(fi_inject(a->ep, tx, 40, b->addr), 0, "multi-recv: send 40 bytes");
	if (expect_comp(fx, b->rx_cq, &mctx, FI_RECV | FI_MSG, &e, NULL,
			"multi-recv: 40 bytes fill it"))
		ft_check(e.len == 40 && e.buf == buf + 60 && (e.flags & FI_MULTI_RECV) &&
			 payload_ok(buf + 60, 40, seed, 16),
			 "multi-recv: a full buffer is released (FI_MULTI_RECV)",
			 "len %zu flags %#llx", e.len, (unsigned long long) e.flags);
}

void test_multi_recv(struct fixture *fx)
{
	struct node *b = &fx->node[B];
	struct fi_context ctx;
	struct fi_cq_err_entry err;
	uint8_t buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct fi_msg_tagged tmsg = { .msg_iov = &iov, .iov_count = 1,
				      .addr = FI_ADDR_UNSPEC, .context = &ctx };

	ft_check(fx->info->caps & FI_MULTI_RECV, "multi-recv: fi_getinfo offers FI_MULTI_RECV",
		 "caps %#llx", (unsigned long long) fx->info->caps);
	multi_recv_options(b);
	check_ret(fi_trecvmsg(b->ep, &tmsg, FI_MULTI_RECV), -FI_EBADFLAGS,
		  "multi-recv: not for tagged receives: -FI_EBADFLAGS");
	if (check_ret(post_multi(b, buf, sizeof(buf), &ctx), 0, "multi-recv: post, then cancel") &&
	    check_ret(fi_cancel(&b->ep->fid, &ctx), 0, "multi-recv: fi_cancel") &&
	    expect_err(fx, b->rx_cq, &ctx, FI_ECANCELED, &err, NULL, 0,
		       "multi-recv: FI_ECANCELED"))
		ft_check(err.flags & FI_MULTI_RECV, "multi-recv: the canceled buffer is released",
			 "flags %#llx", (unsigned long long) err.flags);
	multi_recv_packed(fx);
	multi_recv_unexpected(fx);
	multi_recv_exact_fill(fx);
}
