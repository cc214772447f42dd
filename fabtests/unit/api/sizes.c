/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_api_test: message sizes from 0 B up, eager and long (see api.h). */
#include "api.h"

/*
 * Message sizes across the protocols (at the loopback MTU: eager up to
 * about 64 KiB, medium to FI_RDMX_MEDIUM_MAX, long beyond), each sent to
 * a posted receive and as an unexpected message, untagged and tagged
 * with CQ data; an unexpected tagged one is peeked first (its length
 * must show), and every payload is checked byte for byte.
 */
static const size_t test_sizes_list[] = {
	0, 1, 4095, 65000, 65535, 65536, 65537, 200000, 1 << 20, 8 << 20,
};

/* Sends len bytes before any receive, then peeks (tagged) and receives. */
static void unexpected_transfer(struct fixture *fx, const struct send_op *op,
				size_t len, const char *prefix)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct route r = fx_route(fx, A, B);
	uint64_t tag = TAG_BASE | len, data = DATA_BASE | len;
	uint8_t *tx = xmalloc(len), *rx = xmalloc(len + 16);
	unsigned seed = ++g_seed;
	struct fi_context rctx, sctx, pctx;
	struct fi_cq_tagged_entry e;
	struct marker m;
	void *sctxs[2] = { &sctx, &m.sctx };
	ssize_t ret;

	fill(tx, len, seed);
	memset(rx, 0, len + 16);
	ret = op->post(a->ep, tx, len, NULL, b->addr, tag, data, &sctx);
	if (!check_ret(ret, 0, nm(prefix, "send before any receive")))
		goto out;
	if (post_marker(&r, &m, prefix) &&
	    !expect_comp(fx, b->rx_cq, &m.rctx, FI_RECV, NULL, NULL,
			 nm(prefix, "a later message overtakes no match")))
		abandon_recv(fx, b, &m.rctx);
	if (op->tagged) {
		struct fi_msg_tagged msg = { .tag = tag, .context = &pctx,
					     .addr = FI_ADDR_UNSPEC };

		ret = fi_trecvmsg(b->ep, &msg, FI_PEEK);
		if (check_ret(ret, 0, nm(prefix, "FI_PEEK")) &&
		    expect_comp(fx, b->rx_cq, &pctx, FI_RECV | FI_TAGGED, &e, NULL,
				nm(prefix, "FI_PEEK finds it")))
			ft_check(e.len == len, nm(prefix, "FI_PEEK reports its length"),
				 "len %zu, want %zu", e.len, len);
	}
	ret = post_recv(b->ep, rx, len + 16, FI_ADDR_UNSPEC, op->tagged, tag, 0, &rctx);
	if (!check_ret(ret, 0, nm(prefix, "post the receive")))
		goto out;
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV, &e, NULL, nm(prefix, "receive completes")))
		ft_check(e.len == len && payload_ok(rx, len, seed, 16) &&
			 (!op->data || e.data == data),
			 nm(prefix, "length, data and payload"), "len %zu (want %zu)",
			 e.len, len);
	else
		abandon_recv(fx, b, &rctx);
	expect_comp_set(fx, a->tx_cq, sctxs, 2, nm(prefix, "the sends complete"));
out:
	free(tx);
	free(rx);
}

/* A long message into a receive of half its size: FI_ETRUNC, olen, no spill. */
static void long_truncation(struct fixture *fx, size_t len)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	uint8_t *tx = xmalloc(len), *rx = xmalloc(len);
	unsigned seed = ++g_seed;
	struct fi_context rctx, sctx;
	struct fi_cq_err_entry err;
	char data[256];
	ssize_t ret;

	fill(tx, len, seed);
	memset(rx, 0, len);
	ret = fi_recv(b->ep, rx, len / 2, NULL, FI_ADDR_UNSPEC, &rctx);
	check_ret(ret, 0, "sizes: post a half-size receive");
	ret = fi_send(a->ep, tx, len, NULL, b->addr, &sctx);
	check_ret(ret, 0, "sizes: send into the half-size receive");
	if (expect_err(fx, b->rx_cq, &rctx, FI_ETRUNC, &err, data, sizeof(data),
		       "sizes: truncated long message: FI_ETRUNC"))
		ft_check(err.len == len / 2 && err.olen == len - len / 2 &&
			 payload_ok(rx, len / 2, seed, len - len / 2),
			 "sizes: truncated long message: len, olen, the first half only",
			 "len %zu olen %zu", err.len, err.olen);
	else
		abandon_recv(fx, b, &rctx);
	expect_comp(fx, a->tx_cq, &sctx, FI_SEND, NULL, NULL,
		    "sizes: the truncated send completes");
	free(tx);
	free(rx);
}

/*
 * len bytes from 3 iovs (fi_sendv) into 4 iovs of uneven lengths
 * (fi_recvv) that are consecutive pieces of one buffer: the bytes must
 * come out in order whatever packets carried them.
 */
static void iov_transfer(struct fixture *fx, size_t len)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	uint8_t *tx = xmalloc(len), *rx = xmalloc(len + 16);
	size_t cut[5] = { 0, 1, len / 3 + 7, len / 2 + 13, len + 16 };
	struct iovec iov[4];
	struct fi_context rctx, sctx;
	struct fi_cq_tagged_entry e;
	unsigned seed = ++g_seed;
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "sizes: %zu bytes, 3 iovs into 4", len);
	fill(tx, len, seed);
	memset(rx, 0, len + 16);
	for (int i = 0; i < 4; i++)
		iov[i] = (struct iovec) { rx + cut[i], cut[i + 1] - cut[i] };
	if (!check_ret(fi_recvv(b->ep, iov, NULL, 4, FI_ADDR_UNSPEC, &rctx), 0,
		       nm(prefix, "fi_recvv")))
		goto out;
	if (!check_ret(op_sendv(a->ep, tx, len, NULL, b->addr, 0, 0, &sctx), 0,
		       nm(prefix, "fi_sendv"))) {
		abandon_recv(fx, b, &rctx);
		goto out;
	}
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV | FI_MSG, &e, NULL,
			nm(prefix, "receive completes")))
		ft_check(e.len == len && payload_ok(rx, len, seed, 16),
			 nm(prefix, "every byte in place"), "len %zu", e.len);
	else
		abandon_recv(fx, b, &rctx);
	expect_comp(fx, a->tx_cq, &sctx, FI_SEND | FI_MSG, NULL, NULL,
		    nm(prefix, "send completes"));
out:
	free(tx);
	free(rx);
}

/* MPI_Improbe + MPI_Mrecv of a long message: its RTS waits claimed. */
static void claim_long(struct fixture *fx, size_t len)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct route r = fx_route(fx, A, B);
	const uint64_t tag = TAG_BASE | 0x10c;
	uint8_t *tx = xmalloc(len), *rx = xmalloc(len + 16);
	struct fi_context claim, sctx;
	struct fi_cq_tagged_entry e;
	unsigned seed = ++g_seed;
	struct marker m;

	fill(tx, len, seed);
	memset(rx, 0, len + 16);
	if (!check_ret(fi_tsend(a->ep, tx, len, NULL, b->addr, tag, &sctx), 0,
		       "sizes: claim: send a long message first") ||
	    !post_marker(&r, &m, "sizes: claim"))
		goto out;
	if (!expect_comp(fx, b->rx_cq, &m.rctx, FI_RECV, NULL, NULL,
			 "sizes: claim: the marker overtakes no match"))
		abandon_recv(fx, b, &m.rctx);
	if (check_ret(search(b, NULL, 0, tag, &claim, FI_PEEK | FI_CLAIM), 0,
		      "sizes: claim: FI_PEEK | FI_CLAIM"))
		expect_found(fx, b, &claim, tag, len, 0, "sizes: claim: the long message");
	if (check_ret(search(b, rx, len + 16, tag, &claim, FI_CLAIM), 0,
		      "sizes: claim: FI_CLAIM receive") &&
	    expect_comp(fx, b->rx_cq, &claim, FI_RECV | FI_TAGGED, &e, NULL,
			"sizes: claim: the claimed receive completes"))
		ft_check(e.len == len && payload_ok(rx, len, seed, 16),
			 "sizes: claim: every byte of the long message", "len %zu", e.len);
	{
		void *sctxs[2] = { &sctx, &m.sctx };

		expect_comp_set(fx, a->tx_cq, sctxs, 2, "sizes: claim: the sends complete");
	}
out:
	free(tx);
	free(rx);
}

void test_sizes(struct fixture *fx)
{
	struct route r = fx_route(fx, A, B);
	static const char *const ops[] = { "fi_send", "fi_tsenddata" };
	char prefix[96];

	for (size_t i = 0; i < ARRAY_SIZE(test_sizes_list); i++) {
		for (size_t o = 0; o < ARRAY_SIZE(ops); o++) {
			const struct send_op *op = find_op(ops[o]);
			size_t len = test_sizes_list[i];

			snprintf(prefix, sizeof(prefix), "sizes: %s of %zu bytes", ops[o], len);
			transfer(fx, &r, &(struct xfer) { op, len, true, NULL, NULL }, prefix);
			snprintf(prefix, sizeof(prefix), "sizes: unexpected %s of %zu bytes",
				 ops[o], len);
			unexpected_transfer(fx, op, len, prefix);
		}
	}
	long_truncation(fx, 1 << 20);
	iov_transfer(fx, 200000);
	iov_transfer(fx, 8 << 20);
	claim_long(fx, 4 << 20);
}
