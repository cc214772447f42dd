/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_stream: the receiver: senders taken in, data checked, DONE sent. */
#include "stream.h"

/* Takes a sender in from its HELLO and answers ACCEPT. */
static int st_accept_sender(struct st *st)
{
	const struct st_ctrl *h = st->hello;
	struct st_peer *p = &st->peers[st->npeers];
	int ret = st_ctrl_check(&st->hello_rx, h, ST_CTRL_HELLO);

	if (ret)
		return ret;
	st->hello_rx.done = false;
	if (!h->count || h->count > ST_COUNT_MAX || h->sizes >= ST_SIZES_CNT ||
	    !h->max_msg_size || !h->addrlen || h->addrlen > ST_ADDR_MAX)
		return ft_fail("HELLO with bad parameters: count %" PRIu64 " sizes %u "
			       "max_msg_size %" PRIu64 " addrlen %u", h->count,
			       h->sizes, h->max_msg_size, h->addrlen);
	ret = ft_rdm_insert(&st->rdm, h->addr, &p->addr, "fi_av_insert (sender)");
	if (ret)
		return ret;
	p->index = h->index;
	p->id = st->npeers + 1;
	p->count = h->count;
	p->seed = h->seed;
	p->sizes = (enum st_sizes) h->sizes;
	p->max_msg_size = st_min(st->max_msg_size, h->max_msg_size);
	p->next_report = p->count / ST_REPORTS ? p->count / ST_REPORTS : 1;
	p->seen = calloc((p->count + 63) / 64, sizeof(*p->seen));
	if (!p->seen)
		return -FI_ENOMEM;
	st->npeers++;
	printf(ST_NAME ": sender %u joined: %" PRIu64 " messages, sizes %s, seed %"
	       PRIu64 ", max_msg_size %zu\n", p->id, p->count,
	       st_sizes_names[p->sizes], p->seed, p->max_msg_size);

	st_ctrl_init(p->ctrl_out, ST_CTRL_ACCEPT, p->index);
	p->ctrl_out->id = p->id;
	p->ctrl_out->count = p->count;
	p->ctrl_out->seed = p->seed;
	p->ctrl_out->sizes = p->sizes;
	p->ctrl_out->max_msg_size = p->max_msg_size;
	ret = st_ctrl_send(st, p, ST_CTRL_ACCEPT);
	if (!ret && st->npeers < st->opts.senders)
		ret = st_ctrl_post(st, &st->hello_rx, st->hello, FI_ADDR_UNSPEC,
				   st_ctrl_tag(ST_CTRL_HELLO, 0), ST_TAG_INDEX_IGNORE);
	return ret;
}

/* Posts the window of data receives, or reposts those left out. */
static int st_rx_post_window(struct st *st)
{
	st->rx_window_up = true;
	st->rx_unposted = false;
	for (uint32_t i = 0; i < st->window; i++) {
		struct st_op *op = &st->rx[i];
		ssize_t ret;

		if (op->posted)
			continue;
		ret = st_repost_rx(st, op);
		if (ret == -FI_EAGAIN) {
			st->eagain++;
			st->rx_unposted = true;	/* the rest at the next pass */
			return 0;
		}
		if (ret)
			return ft_err("fi_trecv (data)", ret);
	}
	return 0;
}

/* Sends DONE to each sender whose stream is complete. */
static int st_rx_send_dones(struct st *st)
{
	int ret;

	for (uint32_t i = 0; i < st->npeers; i++) {
		struct st_peer *p = &st->peers[i];

		if (p->done || p->msgs < p->count || p->ctrl_tx.posted)
			continue;
		st_ctrl_init(p->ctrl_out, ST_CTRL_DONE, p->index);
		p->ctrl_out->id = p->id;
		p->ctrl_out->count = p->msgs;
		p->ctrl_out->bytes = p->bytes;
		p->done = true;
		printf(ST_NAME ": sender %u: all %" PRIu64 " messages (%" PRIu64
		       " bytes) in %.3f s, %.2f MB/s; sending DONE\n", p->id, p->msgs,
		       p->bytes, st_seconds(p->first_ns, p->last_ns),
		       st_mbps(p->bytes, st_seconds(p->first_ns, p->last_ns)));
		ret = st_ctrl_send(st, p, ST_CTRL_DONE);
		if (ret)
			return ret;
	}
	return 0;
}

static bool st_rx_finished(const struct st *st)
{
	if (st->npeers < st->opts.senders)
		return false;
	for (uint32_t i = 0; i < st->npeers; i++) {
		if (!st->peers[i].done || st->peers[i].ctrl_tx.posted)
			return false;
	}
	return true;
}

static const char *st_rx_waiting_for(const struct st *st)
{
	if (st->npeers < st->opts.senders)
		return "a sender's HELLO";
	for (uint32_t i = 0; i < st->npeers; i++) {
		if (st->peers[i].msgs < st->peers[i].count)
			return "data messages (some are missing)";
	}
	return "the completion of DONE";
}

/* After a failure: how much of a sender's stream arrived, what is missing. */
static void st_rx_report_missing(const struct st_peer *p)
{
	uint64_t first = p->count;

	for (uint64_t i = 0; i < p->count; i++) {
		if (!(p->seen[i / 64] & (1ULL << (i % 64)))) {
			first = i;
			break;
		}
	}
	fprintf(stderr, ST_NAME ": sender %u: %" PRIu64 " of %" PRIu64 " messages "
		"received", p->id, p->msgs, p->count);
	if (first < p->count)
		fprintf(stderr, "; %" PRIu64 " missing, the first is message %" PRIu64,
			p->count - p->msgs, first);
	fputc('\n', stderr);
}

/*
 * The receiver: takes senders in, holds back its receives for --hold-ms
 * after the first HELLO (while still progressing), then keeps the window
 * posted until every stream is complete and every DONE acknowledged.
 */
int st_receiver_run(struct st *st)
{
	uint64_t hold_end = 0;
	int ret;

	ret = st_ctrl_post(st, &st->hello_rx, st->hello, FI_ADDR_UNSPEC,
			   st_ctrl_tag(ST_CTRL_HELLO, 0), ST_TAG_INDEX_IGNORE);
	while (!ret && !st_rx_finished(st)) {
		ret = st_poll(st, st_rx_waiting_for(st));
		if (!ret && st->hello_rx.done) {
			ret = st_accept_sender(st);
			if (!hold_end)
				hold_end = ft_now_ns() + st->opts.hold_ms * 1000000ULL;
		}
		if (!ret && st->npeers && (!st->rx_window_up || st->rx_unposted) &&
		    ft_now_ns() >= hold_end) {
			if (!st->rx_window_up)
				st->last_event_ns = ft_now_ns();	/* the hold is not idle */
			ret = st_rx_post_window(st);
		}
		if (!ret)
			ret = st_rx_send_dones(st);
	}
	for (uint32_t i = 0; ret && i < st->npeers; i++)
		st_rx_report_missing(&st->peers[i]);
	return ret;
}

int st_receiver_report(struct st *st)
{
	struct fi_rdmx_ep_stats stats;
	uint64_t msgs = 0, bytes = 0, first = UINT64_MAX, last = 0;
	double secs;

	for (uint32_t i = 0; i < st->npeers; i++) {
		const struct st_peer *p = &st->peers[i];

		msgs += p->msgs;
		bytes += p->bytes;
		if (p->first_ns && p->first_ns < first)
			first = p->first_ns;
		if (p->last_ns > last)
			last = p->last_ns;
	}
	st_stats(st, &stats);
	secs = first == UINT64_MAX ? 0 : st_seconds(first, last);
	snprintf(st->pass, sizeof(st->pass), "receiver: %" PRIu64 " messages, %"
		 PRIu64 " bytes, %.3f s, %.2f MB/s from %u sender%s, each exactly once",
		 msgs, bytes, secs, st_mbps(bytes, secs), st->npeers,
		 st->npeers == 1 ? "" : "s");
	return 0;
}
