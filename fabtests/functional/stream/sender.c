/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_stream: the sender: HELLO, a stream to each receiver, the checks. */
#include "stream.h"

/* Sends HELLO to every receiver and takes in each ACCEPT. */
int st_sender_connect(struct st *st)
{
	size_t len;
	int ret;

	for (uint32_t r = 0; r < st->npeers; r++) {
		struct st_peer *p = &st->peers[r];

		ret = st_ctrl_post(st, &p->accept_rx, p->accept_in, FI_ADDR_UNSPEC,
				   st_ctrl_tag(ST_CTRL_ACCEPT, r), 0);
		if (!ret)
			ret = st_ctrl_post(st, &p->done_rx, p->done_in, FI_ADDR_UNSPEC,
					   st_ctrl_tag(ST_CTRL_DONE, r), 0);
		if (ret)
			return ret;
		st_ctrl_init(p->ctrl_out, ST_CTRL_HELLO, r);
		p->ctrl_out->count = p->count;
		p->ctrl_out->seed = p->seed;
		p->ctrl_out->sizes = p->sizes;
		p->ctrl_out->max_msg_size = st->max_msg_size;
		len = sizeof(p->ctrl_out->addr);
		ret = fi_getname(&st->rdm.ep->fid, p->ctrl_out->addr, &len);
		if (ret)
			return ft_err("fi_getname", ret);
		p->ctrl_out->addrlen = (uint32_t) len;
		ret = st_ctrl_send(st, p, ST_CTRL_HELLO);
		if (ret)
			return ret;
	}
	for (uint32_t r = 0; r < st->npeers; r++) {
		struct st_peer *p = &st->peers[r];
		const struct st_ctrl *a = p->accept_in;

		while (!p->accept_rx.done || p->ctrl_tx.posted) {
			ret = st_poll(st, "ACCEPT from every receiver");
			if (ret)
				return ret;
		}
		ret = st_ctrl_check(&p->accept_rx, a, ST_CTRL_ACCEPT);
		if (ret)
			return ret;
		if (a->index != r || !a->id || a->id > (1u << (63 - ST_TAG_ID_SHIFT)) - 1 ||
		    !a->max_msg_size || a->max_msg_size > st->max_msg_size)
			return ft_fail("receiver %u: bad ACCEPT (index %u id %u "
				       "max_msg_size %" PRIu64 ")", r, a->index, a->id,
				       a->max_msg_size);
		p->id = a->id;
		p->max_msg_size = a->max_msg_size;
		for (uint64_t i = 0; i < p->count; i++)
			p->total_bytes += st_msg_len(p->sizes, p->seed, i, p->max_msg_size);
		printf(ST_NAME ": receiver %u (port %s) accepted: id=%u messages=%" PRIu64
		       " bytes=%" PRIu64 " sizes=%s max_msg_size=%zu completion=%s\n",
		       r, st->opts.ports[r], p->id, p->count,
		       p->total_bytes, st_sizes_names[p->sizes], p->max_msg_size,
		       st_completion_names[st->opts.completion]);
	}
	return 0;
}

/* Whether p's next message may go now: a free slot, and due under --rate. */
static bool st_tx_can_post(const struct st *st, const struct st_peer *p,
			   uint64_t now)
{
	return !p->dead && p->next < p->count && p->nfree &&
	       (!st->opts.rate ||
		st->start_ns + p->next * 1000000000ULL / st->opts.rate <= now);
}

/* Posts the next message to p once; -FI_EAGAIN leaves it for later. */
static ssize_t st_tx_post(struct st *st, struct st_peer *p)
{
	uint32_t slot = p->free_tx[p->nfree - 1];
	struct st_op *op = &p->tx[slot];
	uint64_t i = p->next, tag;
	ssize_t ret;

	if (op->filled != i + 1) {
		op->msg = i;
		op->len = st_msg_len(p->sizes, p->seed, i, p->max_msg_size);
		ft_pattern_fill(op->buf, op->len, st_msg_seed(p->seed, i, op->len));
		op->filled = i + 1;
	}
	op->post_ns = ft_now_ns();
	op->posted = true;
	tag = (uint64_t) p->id << ST_TAG_ID_SHIFT | i;
	ret = st->opts.untagged ?
		fi_senddata(st->rdm.ep, op->buf, op->len, st->desc, tag, p->addr,
			    &op->fctx) :
		fi_tsend(st->rdm.ep, op->buf, op->len, st->desc, p->addr, tag, &op->fctx);
	if (ret) {
		op->posted = false;
		return ret;
	}
	if (!p->first_ns)
		p->first_ns = op->post_ns;
	p->nfree--;
	p->outstanding++;
	p->next++;
	return 0;
}

/* Posts round-robin, one message per receiver in turn, while any can take one. */
static int st_tx_post_all(struct st *st, uint32_t *rr)
{
	uint64_t now = ft_now_ns();
	uint32_t idle = 0;

	while (idle < st->npeers) {
		struct st_peer *p = &st->peers[*rr];
		ssize_t ret;

		*rr = (*rr + 1) % st->npeers;
		if (!st_tx_can_post(st, p, now)) {
			idle++;
			continue;
		}
		ret = st_tx_post(st, p);
		if (ret == -FI_EAGAIN) {
			st->eagain++;
			return 0;	/* progress first */
		}
		if (ret)
			return ft_err("fi_tsend (data)", ret);
		idle = 0;
	}
	return 0;
}

/* Checks a receiver's DONE against what was sent to it. */
static int st_tx_check_done(struct st_peer *p)
{
	const struct st_ctrl *d = p->done_in;
	int ret;

	p->done_rx.done = false;
	ret = st_ctrl_check(&p->done_rx, d, ST_CTRL_DONE);
	if (ret)
		return ret;
	if (d->index != p->index || d->count != p->count || d->bytes != p->total_bytes)
		return ft_fail("receiver %u: DONE reports %" PRIu64 " messages, %" PRIu64
			       " bytes (index %u); sent %" PRIu64 ", %" PRIu64, p->index,
			       d->count, d->bytes, d->index, p->count, p->total_bytes);
	p->done = true;
	return 0;
}

static bool st_tx_finished(const struct st *st)
{
	for (uint32_t r = 0; r < st->npeers; r++) {
		const struct st_peer *p = &st->peers[r];

		if (p->outstanding || (!p->dead && (p->next < p->count || !p->done)))
			return false;
	}
	return true;
}

/* Streams to every receiver until all is sent, completed and DONE. */
int st_sender_stream(struct st *st)
{
	uint32_t rr = 0;
	int ret = 0;

	st->start_ns = ft_now_ns();
	while (!ret && !st_tx_finished(st)) {
		ret = st_poll(st, "send completions and DONE from the receivers");
		for (uint32_t r = 0; !ret && r < st->npeers; r++) {
			if (st->peers[r].done_rx.done)
				ret = st_tx_check_done(&st->peers[r]);
		}
		if (!ret)
			ret = st_tx_post_all(st, &rr);
	}
	st->end_ns = ft_now_ns();
	if (ret) {
		for (uint32_t r = 0; r < st->npeers; r++) {
			const struct st_peer *p = &st->peers[r];

			fprintf(stderr, ST_NAME ": receiver %u: %" PRIu64 " of %" PRIu64
				" posted, %" PRIu64 " completed, %u outstanding, %" PRIu64
				" failed, DONE %s\n", r, p->next, p->count, p->msgs,
				p->outstanding, p->errors, p->done ? "received" : "not received");
		}
		return ret;
	}
	/*
	 * The receivers close once their DONE is acknowledged; should our
	 * acknowledgement be lost, they resend DONE, so keep progressing a
	 * while to acknowledge it again rather than leave them to fail it.
	 */
	for (uint64_t until = ft_now_ns() + st->opts.linger_ms * 1000000ULL;
	     !ret && ft_now_ns() < until;)
		ret = st_progress(st);
	return ret;
}

/* The checks of --dead: errors only to K, and when they came. */
static int st_sender_check_dead(struct st *st)
{
	const struct st_peer *p;
	uint64_t ms;

	if (st->opts.dead < 0)
		return 0;
	p = &st->peers[st->opts.dead];
	if (!p->dead)
		return ft_fail("receiver %d never failed: expected FI_EHOSTUNREACH error "
			       "completions for its sends (was it killed mid-run?)",
			       st->opts.dead);
	ms = (p->err_ns - p->err_post_ns) / 1000000;
	printf(ST_NAME ": receiver %d unreachable after %" PRIu64 " of %" PRIu64
	       " messages: %" PRIu64 " sends failed with FI_EHOSTUNREACH; the first "
	       "unanswered send (message %" PRIu64 ") failed %" PRIu64 " ms after it "
	       "was posted (time_to_error_ms=%" PRIu64 ")\n", st->opts.dead, p->msgs,
	       p->count, p->errors, p->err_msg, ms, ms);
	return 0;
}

int st_sender_report(struct st *st)
{
	struct fi_rdmx_ep_stats stats;
	uint64_t msgs = 0, bytes = 0;
	bool have_stats;
	double secs = st_seconds(st->start_ns, st->end_ns);
	int ret = st_sender_check_dead(st);

	for (uint32_t r = 0; r < st->npeers; r++) {
		const struct st_peer *p = &st->peers[r];

		msgs += p->msgs;
		bytes += p->bytes;
		if (!p->dead)
			printf(ST_NAME ": receiver %u: %" PRIu64 " messages, %" PRIu64
			       " bytes, DONE matches\n", r, p->msgs, p->bytes);
	}
	printf(ST_NAME ": -FI_EAGAIN returned %" PRIu64 " times\n", st->eagain);
	have_stats = st_stats(st, &stats);
	if (st->opts.expect_eagain && !st->eagain)
		ret = ft_fail("--expect-eagain: no post returned -FI_EAGAIN");
	if (st->opts.expect_rnr && have_stats &&
	    (!stats.rnr_received || (!stats.rnr_backoffs && !stats.rnr_completions)))
		ret = ft_fail("--expect-rnr: rnr_received=%" PRIu64 " rnr_backoffs=%"
			      PRIu64 " rnr_completions=%" PRIu64 ": no RNR flow control "
			      "happened", stats.rnr_received, stats.rnr_backoffs,
			      stats.rnr_completions);
	if (ret)
		return ret;
	snprintf(st->pass, sizeof(st->pass), "sender: %" PRIu64 " messages, %" PRIu64
		 " bytes, %.3f s, %.2f MB/s to %u receiver%s%s", msgs, bytes, secs,
		 st_mbps(bytes, secs), st->npeers, st->npeers == 1 ? "" : "s",
		 st->opts.dead >= 0 ? " (one died as expected)" : "");
	return 0;
}
