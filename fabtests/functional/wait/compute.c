/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_wait: the compute modes (auto, manual): the receiver posts a
 * receive for every message and computes without a libfabric call while
 * the sender sends at an interval and times how each send ends.
 */
#include <errno.h>
#include <time.h>

#include "wait.h"

/* Manual mode's messages: small, one packet each. */
static size_t wt_small_len(uint64_t i)
{
	return 1 + ft_mix(i) % WT_SMALL_MAX;
}

static size_t wt_mode_len(const struct wt *w, uint64_t i)
{
	return w->o->mode == WT_MANUAL ? wt_small_len(i) : wt_len(i);
}

/* The number of messages of auto and manual modes. */
static uint64_t wt_compute_msgs(const struct wt_opts *o)
{
	if (o->mode == WT_MANUAL)
		return o->sends;
	return (o->compute_ms - WT_TAIL_MS) / o->interval_ms - 1;
}

/* Sleeps until the clock is at until, or spins there with busy. */
void wt_compute_until(uint64_t until, bool busy)
{
	struct timespec ts = {
		.tv_sec = (time_t) (until / 1000000000ULL),
		.tv_nsec = (long) (until % 1000000000ULL),
	};

	if (busy) {
		while (ft_now_ns() < until)
			;
		return;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ---------------------------------------------------------------------
 * The receiver computes
 * ------------------------------------------------------------------- */

/* Every message of auto or manual mode has a receive and a buffer of its own. */
struct wt_rx_all {
	uint8_t			*mem;
	size_t			*off;
	struct fi_context	*ctx;
	uint64_t		n, got, failed;
};

static void wt_rx_all_free(struct wt_rx_all *r)
{
	free(r->mem);
	free(r->off);
	free(r->ctx);
}

/* Allocates and posts a receive for each of the n messages. */
static int wt_rx_all_post(struct wt *w, struct wt_rx_all *r, uint64_t n)
{
	size_t total = 0;
	int ret = 0;

	r->n = n;
	r->off = calloc(n, sizeof(*r->off));
	r->ctx = calloc(n, sizeof(*r->ctx));
	for (uint64_t i = 0; r->off && i < n; i++) {
		r->off[i] = total;
		total += wt_mode_len(w, i) + FT_GUARD;
	}
	r->mem = malloc(total);
	if (!r->off || !r->ctx || !r->mem)
		return ft_fail("out of memory");
	memset(r->mem, FT_POISON, total);
	for (uint64_t i = 0; !ret && i < n; i++) {
		w->rx_ops++;
		ret = wt_trecv(w, r->mem + r->off[i], wt_mode_len(w, i), WT_TAG_DATA | i,
			       &r->ctx[i], 0);
	}
	return ret;
}

/*
 * One completion of rx_all's receives: checked and counted (an error
 * entry counts as failed, printed). Other completions fail the run,
 * except AGAIN's (*again set).
 */
static int wt_rx_all_take(struct wt *w, struct wt_rx_all *r, const struct fi_cq_tagged_entry *e,
			  bool *again)
{
	uint64_t i;

	if (e->op_context == &w->ctl_in_ctx && w->o->mode == WT_MANUAL) {
		*again = true;
		return e->tag == (WT_TAG_CTL | WT_AGAIN) ? 0 : ft_fail("not AGAIN");
	}
	if (e->op_context < (void *) r->ctx || e->op_context >= (void *) (r->ctx + r->n))
		return ft_fail("a completion not of a receive posted");
	i = (uint64_t) ((struct fi_context *) e->op_context - r->ctx);
	if (e->tag != (WT_TAG_DATA | i) || e->len != wt_mode_len(w, i))
		return ft_fail("receive %" PRIu64 ": tag 0x%" PRIx64 " len %zu, want %zu", i,
			       e->tag, e->len, wt_mode_len(w, i));
	/* One-packet messages complete in the order sent: what came is a prefix. */
	if (w->o->mode == WT_MANUAL && i != r->got)
		return ft_fail("message %" PRIu64 " came after %" PRIu64 " others: not in the "
			       "order sent", i, r->got);
	r->got++;
	return wt_check_payload(w, i, r->mem + r->off[i], e->len);
}

/*
 * Takes completions until want of rx_all's messages arrived (auto) or
 * AGAIN did (manual); error entries fail auto mode, and are counted in
 * manual mode.
 */
static int wt_rx_all_collect(struct wt *w, struct wt_rx_all *r, uint64_t want)
{
	uint64_t step = (uint64_t) w->o->timeout_s * 1000000000ULL;
	uint64_t deadline = ft_now_ns() + step;
	bool again = false;
	int ret = 0;

	while (!ret && (w->o->mode == WT_MANUAL ? !again : r->got < want)) {
		struct fi_cq_tagged_entry e[WT_BATCH];
		struct fi_cq_err_entry err;
		char text[256];

		ret = wt_cq_wait(w, e, WT_BATCH, &err, text, sizeof(text), deadline,
				 w->o->mode == WT_MANUAL ? "AGAIN" : "the messages");
		if (ret == -FI_EAVAIL && w->o->mode == WT_MANUAL) {
			printf(WT_NAME ": receiver: an error entry: %s\n", text);
			r->failed++;
			ret = 1;
			continue;
		}
		if (ret == -FI_EAVAIL)
			return ft_fail("a receive failed: %s", text);
		for (int j = 0; ret > 0 && j < ret; j++) {
			int r2 = wt_rx_all_take(w, r, &e[j], &again);

			if (r2)
				return r2;
		}
		if (ret > 0) {
			ret = 0;
			deadline = ft_now_ns() + step;
		}
	}
	return ret;
}

/*
 * Sends GO, posts every receive, computes for --compute-ms without a
 * libfabric call, then takes and checks what came; 0 or an error printed.
 */
int wt_compute_receiver(struct wt *w)
{
	const struct wt_opts *o = w->o;
	uint64_t n = wt_compute_msgs(o), start, end;
	uint64_t deadline = ft_deadline_ns(o->timeout_s);
	struct wt_rx_all r = { 0 };
	/*
	 * GO first, alone: its completion is the next one. The sender's
	 * first messages may come before their receives: they wait as
	 * unexpected messages.
	 */
	int ret = wt_ctl_send(w, WT_GO, 0, deadline, "GO");

	if (!ret)
		ret = wt_rx_all_post(w, &r, n);
	if (!ret && o->mode == WT_MANUAL)
		ret = wt_ctl_post_recv(w, WT_AGAIN);
	if (ret)
		goto out;
	start = ft_now_ns();
	printf(WT_NAME ": receiver: GO sent, %" PRIu64 " receives posted; computing for "
	       "%" PRIu64 " ms with %s progress (compute_start_ns=%" PRIu64 ")\n", n,
	       o->compute_ms, o->mode == WT_AUTO ? "automatic" : "manual", start);
	wt_compute_until(start + o->compute_ms * 1000000ULL, o->busy);
	end = ft_now_ns();
	printf(WT_NAME ": receiver: computed, no libfabric call for %" PRIu64 " ms "
	       "(compute_end_ns=%" PRIu64 ")\n", (end - start) / 1000000, end);
	ret = wt_rx_all_collect(w, &r, n);
	if (!ret)
		printf(WT_NAME ": receiver: delivered=%" PRIu64 " of %" PRIu64 " messages "
		       "checked, failed=%" PRIu64 "\n", r.got, n, r.failed);
out:
	wt_rx_all_free(&r);
	return ret;
}

/* ---------------------------------------------------------------------
 * The sender sends at the interval
 * ------------------------------------------------------------------- */

struct wt_sends {
	uint64_t		n, posted, ended, oldest;
	uint64_t		*post_ns;
	bool			*ended_at;
	struct fi_context	*ctx;
	uint64_t		go_ns, first_post_ns, first_end_ns, last_end_ns, max_us;
	uint64_t		max_i;		/* the send that took max_us */
};

/* The time by which send i must have ended. */
static uint64_t wt_send_bound(const struct wt *w, const struct wt_sends *s, uint64_t i)
{
	if (w->o->expect == WT_EXPECT_UNREACH)
		return s->first_post_ns + (w->o->unreach_ms + w->o->complete_ms) * 1000000ULL;
	return s->post_ns[i] + w->o->complete_ms * 1000000ULL;
}

/* Send i ended (with the error err, or 0) at now: what the mode expects? */
static int wt_send_ended(struct wt *w, struct wt_sends *s, uint64_t i, int err,
			 const char *text, uint64_t now)
{
	uint64_t us = (now - s->post_ns[i]) / 1000, ms = us / 1000;
	bool unreach = w->o->expect == WT_EXPECT_UNREACH;

	if (s->ended_at[i])
		return ft_fail("send %" PRIu64 " ended twice", i);
	s->ended_at[i] = true;
	s->ended++;
	if (!s->first_end_ns)
		s->first_end_ns = now;
	s->last_end_ns = now;
	if (us >= s->max_us) {
		s->max_us = us;
		s->max_i = i;
	}
	while (s->oldest < s->posted && s->ended_at[s->oldest])
		s->oldest++;
	if (unreach && err != FI_EHOSTUNREACH)
		return ft_fail("send %" PRIu64 ": %s, want FI_EHOSTUNREACH", i,
			       err ? text : "completed");
	if (!unreach && err)
		return ft_fail("send %" PRIu64 " failed after %" PRIu64 " ms: %s", i, ms, text);
	if (unreach && now < s->first_post_ns + (w->o->unreach_ms - 50) * 1000000ULL)
		return ft_fail("send %" PRIu64 " failed %" PRIu64 " ms after the first post, "
			       "sooner than FI_RDMX_UNREACH_MS (%" PRIu64 ")", i,
			       (now - s->first_post_ns) / 1000000, w->o->unreach_ms);
	return 0;
}

/* Takes the completions there are, or waits for one until deadline (quietly). */
static int wt_sends_reap(struct wt *w, struct wt_sends *s, uint64_t deadline)
{
	struct fi_cq_tagged_entry e[WT_BATCH];
	struct fi_cq_err_entry err;
	char text[256];
	int ret = wt_cq_wait(w, e, WT_BATCH, &err, text, sizeof(text), deadline, NULL);

	if (ret == -FI_EAVAIL) {
		if (err.op_context < (void *) s->ctx || err.op_context >= (void *) (s->ctx + s->n))
			return ft_fail("an error entry not of a send: %s", text);
		return wt_send_ended(w, s, (uint64_t) ((struct fi_context *) err.op_context -
				     s->ctx), err.err, text, ft_now_ns());
	}
	for (int k = 0; ret > 0 && k < ret; k++) {
		int r;

		if (e[k].op_context < (void *) s->ctx || e[k].op_context >= (void *) (s->ctx + s->n))
			return ft_fail("a completion not of a send");
		r = wt_send_ended(w, s, (uint64_t) ((struct fi_context *) e[k].op_context -
				  s->ctx), 0, "", ft_now_ns());
		if (r)
			return r;
	}
	return ret < 0 ? ret : 0;
}

/* Posts send i, the mode's size. */
static int wt_sends_post(struct wt *w, struct wt_sends *s)
{
	uint64_t i = s->posted;
	size_t len = wt_mode_len(w, i);
	uint64_t now = ft_now_ns();

	s->post_ns[i] = now;
	if (!s->first_post_ns)
		s->first_post_ns = now;
	s->posted++;
	return wt_tsend(w, wt_payload(w, i, len), len, WT_TAG_DATA | i, &s->ctx[i], 0,
			now + w->o->complete_ms * 1000000ULL);
}

/*
 * Sends the n messages at the interval from GO, taking completions in
 * between, until each ended as expected, within its bound.
 */
static int wt_sends_run(struct wt *w, struct wt_sends *s)
{
	uint64_t interval = w->o->interval_ms * 1000000ULL;
	int ret = 0;

	while (!ret && s->ended < s->n) {
		uint64_t now = ft_now_ns(), next = UINT64_MAX, bound = UINT64_MAX;

		/*
		 * Send i at GO + (i + 1) intervals: the first comes once the
		 * receiver took GO's completion and stopped calling, so no
		 * acknowledgement of it is sent before the computation.
		 */
		if (s->posted < s->n) {
			next = s->go_ns + (s->posted + 1) * interval;
			if (now >= next) {
				ret = wt_sends_post(w, s);
				continue;
			}
		}
		if (s->oldest < s->posted) {
			bound = wt_send_bound(w, s, s->oldest);
			if (now > bound)
				return ft_fail("send %" PRIu64 " (%zu bytes) has not ended %" PRIu64
					       " ms after its post", s->oldest,
					       wt_mode_len(w, s->oldest),
					       (now - s->post_ns[s->oldest]) / 1000000);
		}
		ret = wt_sends_reap(w, s, next < bound ? next : bound);
	}
	return ret;
}

/*
 * Waits for GO, then sends at the interval and checks how each send
 * ended; 0 or an error printed.
 */
int wt_compute_sender(struct wt *w)
{
	const struct wt_opts *o = w->o;
	uint64_t deadline = ft_deadline_ns(o->timeout_s);
	struct wt_sends s = { .n = wt_compute_msgs(o) };
	int ret;

	s.post_ns = calloc(s.n, sizeof(*s.post_ns));
	s.ended_at = calloc(s.n, sizeof(*s.ended_at));
	s.ctx = calloc(s.n, sizeof(*s.ctx));
	ret = s.post_ns && s.ended_at && s.ctx ? 0 : ft_fail("out of memory");
	/* Posted once HELLO completed: GO's completion is the next one. */
	if (!ret)
		ret = wt_ctl_post_recv(w, WT_GO);
	if (!ret)
		ret = wt_ctl_wait_recv(w, WT_GO, deadline, "GO");
	s.go_ns = ft_now_ns();
	if (!ret)
		ret = wt_sends_run(w, &s);
	if (!ret)
		printf(WT_NAME ": sender: sends=%" PRIu64 " at %" PRIu64 " ms intervals, %s "
		       "(first_post_ns=%" PRIu64 " last_post_ns=%" PRIu64 " first_end_ns=%" PRIu64
		       " last_end_ns=%" PRIu64 " max_us=%" PRIu64 " (send %" PRIu64 ", %zu bytes)"
		       " first_end_ms=%" PRIu64 ")\n",
		       s.n, o->interval_ms, o->expect == WT_EXPECT_UNREACH ?
		       "each failed with FI_EHOSTUNREACH" : "each completed without error",
		       s.first_post_ns, s.post_ns[s.n - 1], s.first_end_ns, s.last_end_ns,
		       s.max_us, s.max_i, wt_mode_len(w, s.max_i),
		       (s.first_end_ns - s.first_post_ns) / 1000000);
	free(s.post_ns);
	free(s.ended_at);
	free(s.ctx);
	return ret;
}

/*
 * Manual mode, once the sends ended: one more send, which must be
 * delivered once the receiver is back (a new session after unreach).
 */
int wt_again(struct wt *w)
{
	uint64_t t0 = ft_now_ns();
	uint64_t deadline = t0 + (w->o->compute_ms + (uint64_t) w->o->timeout_s * 1000) * 1000000ULL;
	int ret = wt_ctl_send(w, WT_AGAIN, 0, deadline, "AGAIN");

	if (!ret)
		printf(WT_NAME ": sender: AGAIN, sent after the sends ended, completed "
		       "(again_ms=%" PRIu64 " again_end_ns=%" PRIu64 ")\n",
		       (ft_now_ns() - t0) / 1000000, ft_now_ns());
	return ret;
}
