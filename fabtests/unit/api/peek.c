/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_api_test: FI_PEEK, FI_CLAIM and FI_DISCARD (see api.h). */
#include "api.h"

/* fi_trecvmsg with search flags: FI_PEEK, FI_CLAIM, FI_DISCARD. */
ssize_t search(struct node *n, void *buf, size_t len, uint64_t tag,
	       void *ctx, uint64_t flags)
{
	struct iovec iov = { buf, len };
	struct fi_msg_tagged msg = {
		.msg_iov = buf ? &iov : NULL,
		.iov_count = buf ? 1 : 0,
		.addr = FI_ADDR_UNSPEC,
		.tag = tag,
		.context = ctx,
	};

	return fi_trecvmsg(n->ep, &msg, flags | FI_COMPLETION);
}

/* A peek for tag must find nothing: an FI_ENOMSG entry, no provider data. */
static void expect_no_message(struct fixture *fx, struct node *n, uint64_t tag,
			      const char *name)
{
	struct fi_context ctx;
	struct fi_cq_err_entry err;

	if (check_ret(search(n, NULL, 0, tag, &ctx, FI_PEEK), 0, name))
		expect_err_no_data(fx, n->rx_cq, &ctx, FI_ENOMSG, &err, name);
}

/* A peek, FI_CLAIM or FI_DISCARD search must complete with the message. */
void expect_found(struct fixture *fx, struct node *n, void *ctx,
		  uint64_t tag, size_t len, uint64_t data, const char *name)
{
	struct fi_cq_tagged_entry e;
	fi_addr_t src;

	if (expect_comp(fx, n->rx_cq, ctx, FI_RECV | FI_TAGGED, &e, &src, name))
		ft_check(e.tag == tag && e.len == len && src == fx->node[A].addr &&
		      (!data || ((e.flags & FI_REMOTE_CQ_DATA) && e.data == data)),
		      nm(name, "tag, length, source and data"),
		      "tag %#llx len %zu source %llu data %#llx flags %#llx",
		      (unsigned long long) e.tag, e.len, (unsigned long long) src,
		      (unsigned long long) e.data, (unsigned long long) e.flags);
}

/*
 * MPI_Probe, MPI_Improbe + MPI_Mrecv and their discarding forms: B
 * searches messages A sent before any receive was posted.
 */
void test_peek_claim(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct route r = fx_route(fx, A, B);
	const uint64_t t1 = TAG_BASE | 0x501, t2 = TAG_BASE | 0x502, t3 = TAG_BASE | 0x503,
		       t4 = TAG_BASE | 0x504;
	/*
	 * The test reads none of its send completions, so its sends may still
	 * be under way when it returns (a send completes when acknowledged):
	 * their buffers, the marker's included, must outlive it.
	 */
	static uint8_t tx[200];
	static struct marker m;
	uint8_t rx[200];
	struct fi_context claim, claim3, claim4, peek, get, none;
	struct fi_cq_tagged_entry e;
	unsigned seed = ++g_seed;
	ssize_t ret;

	fill(tx, sizeof(tx), seed);
	memset(rx, 0, sizeof(rx));
	memset(&none, 0, sizeof(none));
	expect_no_message(fx, b, t1, "peek: nothing sent yet: FI_ENOMSG");
	check_ret(fi_tsenddata(a->ep, tx, 200, NULL, DATA_BASE | 1, b->addr, t1, NULL), 0,
		  "peek: send t1 with data");
	check_ret(fi_tsend(a->ep, tx, 50, NULL, b->addr, t2, NULL), 0, "peek: send t2");
	check_ret(fi_tsend(a->ep, tx, 10, NULL, b->addr, t3, NULL), 0, "peek: send t3");
	check_ret(fi_tsend(a->ep, tx, 20, NULL, b->addr, t4, NULL), 0, "peek: send t4");
	if (!post_marker(&r, &m, "peek"))
		return;
	if (!expect_comp(fx, b->rx_cq, &m.rctx, FI_RECV | FI_TAGGED, NULL, NULL,
			 "peek: marker received after the four"))
		abandon_recv(fx, b, &m.rctx);

	check_ret(search(b, NULL, 0, t1, &peek, FI_PEEK), 0, "peek: FI_PEEK t1");
	expect_found(fx, b, &peek, t1, 200, DATA_BASE | 1, "peek: t1 found");
	check_ret(search(b, NULL, 0, t1, &peek, FI_PEEK), 0, "peek: FI_PEEK t1 again");
	expect_found(fx, b, &peek, t1, 200, DATA_BASE | 1, "peek: a peek leaves t1 queued");

	check_ret(search(b, NULL, 0, t1, &claim, FI_PEEK | FI_CLAIM), 0,
		  "peek: FI_PEEK | FI_CLAIM t1");
	expect_found(fx, b, &claim, t1, 200, DATA_BASE | 1, "peek: t1 claimed");
	expect_no_message(fx, b, t1, "peek: a claimed message is no longer found");
	ret = search(b, rx, sizeof(rx), t1, &none, FI_CLAIM);
	check_ret(ret, -FI_EINVAL, "peek: FI_CLAIM with a context that claimed nothing");
	ret = search(b, rx, sizeof(rx), t1, &claim, FI_CLAIM);
	if (check_ret(ret, 0, "peek: FI_CLAIM takes t1") &&
	    expect_comp(fx, b->rx_cq, &claim, FI_RECV | FI_TAGGED, &e, NULL,
			"peek: the claimed receive completes"))
		ft_check(e.len == 200 && e.tag == t1 && e.data == (DATA_BASE | 1) &&
		      payload_ok(rx, 200, seed, 0), "peek: it holds t1's payload",
		      "len %zu tag %#llx", e.len, (unsigned long long) e.tag);
	ret = search(b, rx, sizeof(rx), t1, &claim, FI_CLAIM);
	check_ret(ret, -FI_EINVAL, "peek: a claim is taken once");

	check_ret(search(b, NULL, 0, t2, &peek, FI_PEEK | FI_DISCARD), 0,
		  "peek: FI_PEEK | FI_DISCARD t2");
	expect_found(fx, b, &peek, t2, 50, 0, "peek: t2 found and discarded");
	expect_no_message(fx, b, t2, "peek: the discarded t2 is gone");

	check_ret(search(b, NULL, 0, t3, &claim3, FI_PEEK | FI_CLAIM), 0,
		  "peek: FI_PEEK | FI_CLAIM t3");
	expect_found(fx, b, &claim3, t3, 10, 0, "peek: t3 claimed");
	check_ret(search(b, NULL, 0, t3, &claim3, FI_CLAIM | FI_DISCARD), 0,
		  "peek: FI_CLAIM | FI_DISCARD t3");
	expect_found(fx, b, &claim3, t3, 0, 0, "peek: t3 discarded (length 0)");
	expect_no_message(fx, b, t3, "peek: the discarded t3 is gone");

	check_ret(search(b, NULL, 0, t4, &get, FI_DISCARD), -FI_EINVAL,
		  "peek: FI_DISCARD alone: -FI_EINVAL");
	check_ret(search(b, NULL, 0, t4, NULL, FI_PEEK | FI_CLAIM), -FI_EINVAL,
		  "peek: FI_CLAIM without a context: -FI_EINVAL");
	{
		struct fi_msg msg = { .addr = FI_ADDR_UNSPEC, .context = &get };

		check_ret(fi_recvmsg(b->ep, &msg, FI_PEEK), -FI_EBADFLAGS,
			  "peek: FI_PEEK on fi_recvmsg: -FI_EBADFLAGS");
	}
	/* t4 stays claimed: closing the endpoint must free it. */
	check_ret(search(b, NULL, 0, t4, &claim4, FI_PEEK | FI_CLAIM), 0,
		  "peek: FI_PEEK | FI_CLAIM t4, never taken");
	expect_found(fx, b, &claim4, t4, 20, 0, "peek: t4 claimed");
}
