/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_wait: the stream modes (sread, fd, cntr): the sender keeps a
 * window of sends in flight, the receiver takes and checks every
 * message by fi_cq_sread, fi_trywait and poll(), or a counter. In sread
 * and fd modes the stream comes in bursts of WT_BURST messages: once the
 * receiver has taken a burst it says so (CAUGHT), and the sender pauses
 * WT_GAP_MS before the next, so the receiver's wait finds nothing and
 * must sleep, then wake for the next burst, whatever the machine's load.
 */
#include "wait.h"

/* ---------------------------------------------------------------------
 * The sender
 * ------------------------------------------------------------------- */

/* Completions of stream sends: through the counter, else the CQ. */
static int wt_stream_sent(struct wt *w, uint64_t posted, uint64_t *done, uint64_t deadline)
{
	struct fi_cq_tagged_entry e[WT_BATCH];
	struct fi_cq_err_entry err;
	char text[256];
	int ret;

	if (w->cntr) {
		/* The send counter counted HELLO as well. */
		uint64_t base = w->tx_ops - posted;

		ret = fi_cntr_wait(w->cntr, base + *done + 1, wt_left_ms(deadline));
		if (ret)
			return ft_err("fi_cntr_wait (sends)", ret);
		*done = fi_cntr_read(w->cntr) - base;
		return fi_cntr_readerr(w->cntr) ?
		       ft_fail("the send counter counts %" PRIu64 " errors",
			       fi_cntr_readerr(w->cntr)) : 0;
	}
	ret = wt_cq_wait(w, e, WT_BATCH, &err, text, sizeof(text), deadline, "stream sends");
	if (ret == -FI_EAVAIL)
		return ft_fail("a stream send failed: %s", text);
	if (ret < 0)
		return ret;
	for (int k = 0; k < ret; k++) {
		if (e[k].op_context < (void *) w->ctx ||
		    e[k].op_context >= (void *) (w->ctx + WT_WINDOW))
			return ft_fail("a completion not of a stream send");
		if (ft_check_cq_flags(e[k].flags, FI_SEND | FI_TAGGED,
				      FI_SEND | FI_RECV | FI_TAGGED, "stream send"))
			return -FI_EIO;
	}
	*done += (uint64_t) ret;
	return 0;
}

/*
 * The stream's burst: WT_BURST messages in sread and fd modes, else all
 * of them.
 */
static uint64_t wt_burst(const struct wt *w)
{
	return w->o->mode == WT_CNTR ? w->o->count : WT_BURST;
}

/* Between two bursts: the receiver's CAUGHT, then a pause; 0 or an error printed. */
static int wt_stream_gap(struct wt *w, uint64_t deadline)
{
	int ret = wt_ctl_post_recv(w, WT_CAUGHT);

	if (!ret)
		ret = wt_ctl_wait_recv(w, WT_CAUGHT, deadline, "CAUGHT");
	if (!ret)
		wt_compute_until(ft_now_ns() + WT_GAP_MS * 1000000ULL, false);
	return ret;
}

/*
 * Streams the -n messages by bursts, a window in flight, until each
 * send completed; 0 or an error printed.
 */
int wt_stream_sender(struct wt *w)
{
	uint64_t n = w->o->count, posted = 0, done = 0, t0 = ft_now_ns();
	uint64_t stall = (uint64_t) w->o->timeout_s * 1000000000ULL;
	uint64_t deadline = ft_now_ns() + stall;
	int ret = 0;

	for (uint64_t first = 0; !ret && first < n; first += wt_burst(w)) {
		uint64_t last = WT_MIN(first + wt_burst(w), n);

		if (first)
			ret = wt_stream_gap(w, deadline);
		while (!ret && done < last) {
			while (!ret && posted < last && posted - done < WT_WINDOW) {
				size_t len = wt_len(posted);

				w->tx_ops++;
				ret = wt_tsend(w, wt_payload(w, posted, len), len,
					       WT_TAG_DATA | posted,
					       &w->ctx[posted % WT_WINDOW], 0, deadline);
				posted++;
			}
			if (!ret) {
				uint64_t before = done;

				ret = wt_stream_sent(w, posted, &done, deadline);
				if (done > before)
					deadline = ft_now_ns() + stall;
			}
		}
	}
	if (!ret)
		printf(WT_NAME ": sender: %" PRIu64 " sends completed without error "
		       "(send_ms=%" PRIu64 ")\n", n, (ft_now_ns() - t0) / 1000000);
	return ret;
}

/* ---------------------------------------------------------------------
 * The receiver
 * ------------------------------------------------------------------- */

/* The receiver's buffers: one slot per message in flight, and its index. */
struct wt_slots {
	uint8_t		*buf;
	uint64_t	index[WT_WINDOW];
};

static uint8_t *wt_slot(struct wt_slots *s, unsigned k)
{
	return s->buf + (size_t) k * (WT_MAX_LEN + FT_GUARD);
}

/* Posts the receive of message i in its slot, guard bytes poisoned after it. */
static int wt_post_data(struct wt *w, struct wt_slots *s, uint64_t i)
{
	unsigned k = (unsigned) (i % WT_WINDOW);
	size_t len = wt_len(i);

	s->index[k] = i;
	memset(wt_slot(s, k) + len, FT_POISON, FT_GUARD);
	w->rx_ops++;
	return wt_trecv(w, wt_slot(s, k), WT_MAX_LEN, WT_TAG_DATA | i, &w->ctx[k], 0);
}

/* Checks a completion of the stream's receives; its slot goes to *k. */
static int wt_check_rx(struct wt *w, struct wt_slots *s, const struct fi_cq_tagged_entry *e,
		       unsigned *k)
{
	uint64_t i;
	int ret;

	if (e->op_context < (void *) w->ctx || e->op_context >= (void *) (w->ctx + WT_WINDOW))
		return ft_fail("a completion not of a stream receive");
	*k = (unsigned) ((struct fi_context *) e->op_context - w->ctx);
	i = s->index[*k];
	ret = ft_check_cq_flags(e->flags, FI_RECV | FI_TAGGED, FI_SEND | FI_RECV | FI_TAGGED,
				"stream receive");
	if (ret)
		return ret;
	if (e->tag != (WT_TAG_DATA | i) || e->len != wt_len(i))
		return ft_fail("receive %" PRIu64 ": tag 0x%" PRIx64 " len %zu, want len %zu",
			       i, e->tag, e->len, wt_len(i));
	return wt_check_payload(w, i, wt_slot(s, *k), e->len);
}

/*
 * Takes the stream through the CQ (sread or fd mode), reposting as it
 * goes, and sends CAUGHT at the end of each burst but the last: nothing
 * of the next burst comes before it, so the CQ then holds no entry but
 * the CAUGHT send's.
 */
static int wt_stream_by_cq(struct wt *w, struct wt_slots *s, uint64_t deadline_step)
{
	struct fi_cq_tagged_entry e[WT_BATCH];
	struct fi_cq_err_entry err;
	uint64_t n = w->o->count, got = 0, deadline = ft_now_ns() + deadline_step;
	char text[256];
	int ret = 0;

	for (uint64_t i = 0; !ret && i < n && i < WT_WINDOW; i++)
		ret = wt_post_data(w, s, i);
	while (!ret && got < n) {
		ret = wt_cq_wait(w, e, WT_BATCH, &err, text, sizeof(text), deadline,
				 "stream messages");
		if (ret == -FI_EAVAIL)
			return ft_fail("a stream receive failed: %s", text);
		for (int j = 0; ret > 0 && j < ret; j++) {
			unsigned k = 0;
			int r = wt_check_rx(w, s, &e[j], &k);

			if (!r && s->index[k] + WT_WINDOW < n)
				r = wt_post_data(w, s, s->index[k] + WT_WINDOW);
			if (!r && ++got % WT_BURST == 0 && got < n)
				r = wt_ctl_send(w, WT_CAUGHT, 0, deadline, "CAUGHT");
			if (r)
				return r;
		}
		if (ret > 0) {
			ret = 0;
			deadline = ft_now_ns() + deadline_step;
		}
	}
	return ret;
}

/*
 * Takes the stream counted, a batch of receives at a time (they complete
 * in any order): posts a batch, waits until the counter has them all,
 * checks every buffer.
 */
static int wt_stream_by_cntr(struct wt *w, struct wt_slots *s, uint64_t deadline_step)
{
	uint64_t n = w->o->count;
	int ret = 0;

	for (uint64_t first = 0; !ret && first < n; first += WT_WINDOW) {
		uint64_t last = WT_MIN(first + WT_WINDOW, n);

		for (uint64_t i = first; !ret && i < last; i++)
			ret = wt_post_data(w, s, i);
		if (!ret)
			ret = fi_cntr_wait(w->cntr, w->rx_ops, (int) (deadline_step / 1000000));
		if (ret)
			return ft_err("fi_cntr_wait (receives)", ret);
		if (fi_cntr_readerr(w->cntr))
			return ft_fail("the receive counter counts errors");
		for (uint64_t i = first; !ret && i < last; i++)
			ret = wt_check_payload(w, i, wt_slot(s, (unsigned) (i % WT_WINDOW)),
					       wt_len(i));
	}
	return ret;
}

/* Nothing of the stream may be in a CQ bound FI_SELECTIVE_COMPLETION. */
int wt_cntr_exact(struct wt *w, const char *side)
{
	struct fi_cq_tagged_entry e;
	uint64_t v = fi_cntr_read(w->cntr), errs = fi_cntr_readerr(w->cntr);
	uint64_t want = w->o->receiver ? w->rx_ops : w->tx_ops;
	ssize_t ret = fi_cq_read(w->rdm.cq, &e, 1);

	printf(WT_NAME ": %s: counter=%" PRIu64 " errors=%" PRIu64 " (want %" PRIu64 ")\n",
	       side, v, errs, want);
	if (v != want || errs)
		return ft_fail("%s: the counter holds %" PRIu64 " (%" PRIu64 " errors), "
			       "want %" PRIu64, side, v, errs, want);
	if (ret != -FI_EAGAIN)
		return ft_fail("%s: the CQ holds an entry (%zd): selective completion "
			       "not honoured", side, ret);
	return 0;
}

/*
 * Takes and checks the -n messages by the mode's wait (a counter, else
 * the CQ) and prints how; 0 or an error printed.
 */
int wt_stream_receiver(struct wt *w)
{
	uint64_t step = (uint64_t) w->o->timeout_s * 1000000000ULL, t0, cpu0, cpu1, cs0, cs1;
	struct wt_slots s = { .buf = calloc(WT_WINDOW, WT_MAX_LEN + FT_GUARD) };
	int ret;

	if (!s.buf)
		return ft_fail("out of memory");
	wt_usage(&cpu0, &cs0);
	t0 = ft_now_ns();
	ret = w->cntr ? wt_stream_by_cntr(w, &s, step) : wt_stream_by_cq(w, &s, step);
	wt_usage(&cpu1, &cs1);
	if (!ret)
		printf(WT_NAME ": receiver: %" PRIu64 " messages checked, every completion "
		       "by %s (recv_ms=%" PRIu64 " cpu_ms=%" PRIu64 " sleeps=%" PRIu64 ")\n",
		       w->o->count, w->cntr ? "fi_cntr_wait" :
		       w->o->mode == WT_FD ? "fi_trywait + poll" : "fi_cq_sread",
		       (ft_now_ns() - t0) / 1000000, (cpu1 - cpu0) / 1000000, cs1 - cs0);
	if (!ret && w->o->mode == WT_FD)
		printf(WT_NAME ": receiver: fi_trywait let it sleep %" PRIu64 " times, poll() "
		       "found the fd readable %" PRIu64 " times (trywaits=%" PRIu64 ")\n",
		       w->trywaits, w->polls, w->trywaits);
	/*
	 * sread and fd find nothing in each of the sender's gaps, so they
	 * must sleep there. A counted receiver waits once per batch, for
	 * messages that may all be there already when the sender runs ahead
	 * (unexpected): whether it sleeps depends on the machine's load, not
	 * on rdmx (test_counters sees it wake).
	 */
	if (!ret && cs1 == cs0 && !w->cntr)
		ret = ft_fail("the receiver never slept");
	free(s.buf);
	return ret;
}
