/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_api_test: the send calls behind one signature, and transfers. */
#include "api.h"

/* Splits buf into three iovs of about a third each. */
static void split3(const void *buf, size_t len, struct iovec *iov)
{
	size_t third = len / 3;

	iov[0] = (struct iovec) { (void *) buf, third };
	iov[1] = (struct iovec) { (char *) buf + third, third };
	iov[2] = (struct iovec) { (char *) buf + 2 * third, len - 2 * third };
}

static ssize_t post_sendv(struct fid_ep *ep, const void *buf, size_t len,
			  void *desc, fi_addr_t dest, uint64_t tag, void *ctx,
			  bool tagged)
{
	struct iovec iov[3];
	void *descs[3] = { desc, desc, desc };

	split3(buf, len, iov);
	if (tagged)
		return fi_tsendv(ep, iov, descs, 3, dest, tag, ctx);
	return fi_sendv(ep, iov, descs, 3, dest, ctx);
}

ssize_t post_sendmsg(struct fid_ep *ep, const void *buf, size_t len,
		     void *desc, fi_addr_t dest, uint64_t tag,
		     uint64_t data, void *ctx, uint64_t flags, bool tagged)
{
	struct iovec iov = { (void *) buf, len };
	struct fi_msg_tagged tmsg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = dest,
		.tag = tag, .context = ctx, .data = data,
	};
	struct fi_msg msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = dest,
		.context = ctx, .data = data,
	};

	return tagged ? fi_tsendmsg(ep, &tmsg, flags) : fi_sendmsg(ep, &msg, flags);
}

static ssize_t op_send(struct fid_ep *ep, const void *buf, size_t len, void *desc,
		       fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) tag; (void) data;
	return fi_send(ep, buf, len, desc, dest, ctx);
}

ssize_t op_sendv(struct fid_ep *ep, const void *buf, size_t len, void *desc,
		 fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) data;
	return post_sendv(ep, buf, len, desc, dest, tag, ctx, false);
}

static ssize_t op_sendmsg(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			  fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	return post_sendmsg(ep, buf, len, desc, dest, tag, data, ctx,
			    FI_COMPLETION, false);
}

static ssize_t op_sendmsg_noflags(struct fid_ep *ep, const void *buf, size_t len,
				  void *desc, fi_addr_t dest, uint64_t tag,
				  uint64_t data, void *ctx)
{
	return post_sendmsg(ep, buf, len, desc, dest, tag, data, ctx, 0, false);
}

static ssize_t op_sendmsg_data(struct fid_ep *ep, const void *buf, size_t len,
			       void *desc, fi_addr_t dest, uint64_t tag,
			       uint64_t data, void *ctx)
{
	return post_sendmsg(ep, buf, len, desc, dest, tag, data, ctx,
			    FI_COMPLETION | FI_REMOTE_CQ_DATA, false);
}

static ssize_t op_sendmsg_inject(struct fid_ep *ep, const void *buf, size_t len,
				 void *desc, fi_addr_t dest, uint64_t tag,
				 uint64_t data, void *ctx)
{
	return post_sendmsg(ep, buf, len, desc, dest, tag, data, ctx,
			    FI_COMPLETION | FI_INJECT, false);
}

static ssize_t op_inject(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			 fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) desc; (void) tag; (void) data; (void) ctx;
	return fi_inject(ep, buf, len, dest);
}

static ssize_t op_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			   fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) tag;
	return fi_senddata(ep, buf, len, desc, data, dest, ctx);
}

static ssize_t op_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, fi_addr_t dest, uint64_t tag,
			     uint64_t data, void *ctx)
{
	(void) desc; (void) tag; (void) ctx;
	return fi_injectdata(ep, buf, len, data, dest);
}

static ssize_t op_tsend(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) data;
	return fi_tsend(ep, buf, len, desc, dest, tag, ctx);
}

static ssize_t op_tsendv(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			 fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) data;
	return post_sendv(ep, buf, len, desc, dest, tag, ctx, true);
}

static ssize_t op_tsendmsg(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			   fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	return post_sendmsg(ep, buf, len, desc, dest, tag, data, ctx,
			    FI_COMPLETION, true);
}

static ssize_t op_tsendmsg_data(struct fid_ep *ep, const void *buf, size_t len,
				void *desc, fi_addr_t dest, uint64_t tag,
				uint64_t data, void *ctx)
{
	return post_sendmsg(ep, buf, len, desc, dest, tag, data, ctx,
			    FI_COMPLETION | FI_REMOTE_CQ_DATA, true);
}

static ssize_t op_tinject(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			  fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) desc; (void) data; (void) ctx;
	return fi_tinject(ep, buf, len, dest, tag);
}

static ssize_t op_tsenddata(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, uint64_t tag,
			    uint64_t data, void *ctx)
{
	return fi_tsenddata(ep, buf, len, desc, data, dest, tag, ctx);
}

static ssize_t op_tinjectdata(struct fid_ep *ep, const void *buf, size_t len,
			      void *desc, fi_addr_t dest, uint64_t tag,
			      uint64_t data, void *ctx)
{
	(void) desc; (void) ctx;
	return fi_tinjectdata(ep, buf, len, data, dest, tag);
}

static const struct send_op send_ops[] = {
	{ "fi_send", op_send, false, false, true, false },
	{ "fi_sendv (3 iovs)", op_sendv, false, false, true, false },
	{ "fi_sendmsg", op_sendmsg, false, false, true, false },
	{ "fi_sendmsg (flags 0)", op_sendmsg_noflags, false, false, true, false },
	{ "fi_sendmsg FI_REMOTE_CQ_DATA", op_sendmsg_data, false, true, true, false },
	{ "fi_sendmsg FI_INJECT", op_sendmsg_inject, false, false, true, true },
	{ "fi_inject", op_inject, false, false, false, true },
	{ "fi_senddata", op_senddata, false, true, true, false },
	{ "fi_injectdata", op_injectdata, false, true, false, true },
	{ "fi_tsend", op_tsend, true, false, true, false },
	{ "fi_tsendv (3 iovs)", op_tsendv, true, false, true, false },
	{ "fi_tsendmsg", op_tsendmsg, true, false, true, false },
	{ "fi_tsendmsg FI_REMOTE_CQ_DATA", op_tsendmsg_data, true, true, true, false },
	{ "fi_tinject", op_tinject, true, false, false, true },
	{ "fi_tsenddata", op_tsenddata, true, true, true, false },
	{ "fi_tinjectdata", op_tinjectdata, true, true, false, true },
};

const struct send_op *find_op(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(send_ops); i++) {
		if (!strcmp(send_ops[i].name, name))
			return &send_ops[i];
	}
	fprintf(stderr, "no send op %s\n", name);
	exit(2);
}

struct route fx_route(struct fixture *fx, int from, int to)
{
	return (struct route) {
		&fx->node[from], &fx->node[to], fx->node[to].addr, fx->node[from].addr
	};
}

bool post_marker(struct route *r, struct marker *m, const char *prefix)
{
	ssize_t ret;

	m->tx = 0x5a;
	ret = fi_trecv(r->to->ep, &m->rx, 1, NULL, FI_ADDR_UNSPEC, MARKER_TAG, 0,
		       &m->rctx);
	if (!check_ret(ret, 0, nm(prefix, "post the marker receive")))
		return false;
	ret = post_sendmsg(r->from->ep, &m->tx, 1, NULL, r->dest, MARKER_TAG, 0,
			   &m->sctx, FI_COMPLETION, true);
	return check_ret(ret, 0, nm(prefix, "send the marker"));
}

/*
 * Checks that r->from's tx CQ holds no entry for what it sent so far: a
 * marker sent with FI_COMPLETION afterwards must give the next entry, and
 * nothing may follow it.
 */
static void expect_no_tx_completion(struct fixture *fx, struct route *r,
				    const char *prefix)
{
	struct marker m;

	if (!post_marker(r, &m, prefix))
		return;
	expect_comp(fx, r->from->tx_cq, &m.sctx, FI_SEND | FI_TAGGED, NULL, NULL,
		    nm(prefix, "no send completion (the marker's comes first)"));
	if (!expect_comp(fx, r->to->rx_cq, &m.rctx, FI_RECV | FI_TAGGED, NULL, NULL,
			 nm(prefix, "marker received")))
		abandon_recv(fx, r->to, &m.rctx);
	expect_empty(r->from->tx_cq, nm(prefix, "no further send completion"));
}

/*
 * Posts a receive on r->to, sends x->len bytes with x->op, and checks the
 * receive completion (flags, length, tag, data, source fi_addr), the
 * payload, and the send completion or its absence. Returns whether all
 * checks passed.
 */
bool transfer(struct fixture *fx, struct route *r, const struct xfer *x,
	      const char *prefix)
{
	const struct send_op *op = x->op;
	uint64_t kind = op->tagged ? FI_TAGGED : FI_MSG;
	uint64_t tag = op->tagged ? TAG_BASE | x->len : 0;
	uint64_t data = op->data ? DATA_BASE | x->len : 0;
	size_t cap = x->len + 16;
	uint8_t *tx = x->tx ? x->tx : xmalloc(x->len), *rx = xmalloc(cap);
	unsigned seed = ++g_seed;
	struct fi_context rctx, sctx;
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	bool ok = false;
	ssize_t ret;

	fill(tx, x->len, seed);
	memset(rx, 0, cap);
	fx->guest[0] = r->from;
	fx->guest[1] = r->to;
	ret = post_recv(r->to->ep, rx, cap, FI_ADDR_UNSPEC, op->tagged, tag, 0, &rctx);
	if (!check_ret(ret, 0, nm(prefix, "post receive")))
		goto out;
	ret = op->post(r->from->ep, tx, x->len, x->desc, r->dest, tag, data, &sctx);
	if (!check_ret(ret, 0, nm(prefix, "post send"))) {
		abandon_recv(fx, r->to, &rctx);
		goto out;
	}
	/* The call copied the data: the buffer is the application's again. */
	if (op->copies)
		memset(tx, 0xee, x->len);
	if (!expect_comp(fx, r->to->rx_cq, &rctx,
			 FI_RECV | kind | (op->data ? FI_REMOTE_CQ_DATA : 0), &e, &src,
			 nm(prefix, "receive completion"))) {
		abandon_recv(fx, r->to, &rctx);
		goto out;
	}
	ok = ft_check(e.len == x->len && (e.flags & (FI_MSG | FI_TAGGED)) == kind &&
		      (!op->tagged || e.tag == tag) && (!op->data || e.data == data),
		      nm(prefix, "entry length, kind, tag and data"),
		      "len %zu (want %zu), flags %#llx, tag %#llx (want %#llx), "
		      "data %#llx (want %#llx)",
		      e.len, x->len, (unsigned long long) e.flags,
		      (unsigned long long) e.tag, (unsigned long long) tag,
		      (unsigned long long) e.data, (unsigned long long) data);
	ok &= ft_check(src == r->src, nm(prefix, "fi_cq_readfrom names the sender"),
		       "source %#llx, want %#llx", (unsigned long long) src,
		       (unsigned long long) r->src);
	ok &= ft_check(payload_ok(rx, x->len, seed, cap - x->len), nm(prefix, "payload"),
		       "received bytes differ from the sent ones (or spill past them)");
	if (x->want_tx) {
		ok &= expect_comp(fx, r->from->tx_cq, &sctx, FI_SEND | kind, NULL, NULL,
				  nm(prefix, "send completion"));
	} else {
		expect_no_tx_completion(fx, r, prefix);
	}
out:
	fx->guest[0] = NULL;
	fx->guest[1] = NULL;
	if (!x->tx)
		free(tx);
	free(rx);
	return ok;
}

/* transfer() with a plain fi_send from one fixture endpoint to another. */
bool send_between(struct fixture *fx, int from, int to, size_t len,
		  const char *prefix)
{
	struct route r = fx_route(fx, from, to);
	struct xfer x = { find_op("fi_send"), len, true, NULL, NULL };

	return transfer(fx, &r, &x, prefix);
}

/* Every send call, untagged and tagged, A to B. */
void test_send_calls(struct fixture *fx)
{
	for (size_t i = 0; i < ARRAY_SIZE(send_ops); i++) {
		struct route r = fx_route(fx, A, B);
		struct xfer x = { &send_ops[i], 777, send_ops[i].completes, NULL, NULL };

		transfer(fx, &r, &x, send_ops[i].name);
	}
}
