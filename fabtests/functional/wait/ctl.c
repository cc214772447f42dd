/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_wait: the control channel (HELLO, GO, DONE, AGAIN) and the two
 * sides it frames: the sender sends HELLO, each runs its mode, the
 * receiver answers DONE with its verdict.
 */
#include "wait.h"

/*
 * Posts the receive of a control message of type into ctl_in. Control
 * traffic asks FI_COMPLETION: it writes its entries even where the CQ
 * is bound with FI_SELECTIVE_COMPLETION (cntr mode), and the counters
 * count it like the rest.
 */
int wt_ctl_post_recv(struct wt *w, enum wt_ctl_type type)
{
	memset(&w->ctl_in, 0, sizeof(w->ctl_in));
	w->rx_ops++;
	return wt_trecv(w, &w->ctl_in, sizeof(w->ctl_in), WT_TAG_CTL | type,
			&w->ctl_in_ctx, FI_COMPLETION);
}

/* Waits for the control message posted; 0 or an error printed. */
int wt_ctl_wait_recv(struct wt *w, enum wt_ctl_type type, uint64_t deadline,
		     const char *what)
{
	struct fi_cq_tagged_entry e;
	int ret = wt_cq_one(w, &e, deadline, what);

	if (ret)
		return ret;
	if (e.op_context != &w->ctl_in_ctx || e.tag != (WT_TAG_CTL | type) ||
	    w->ctl_in.magic != WT_MAGIC || w->ctl_in.type != type)
		return ft_fail("%s: unexpected completion (tag 0x%" PRIx64 ")", what, e.tag);
	return 0;
}

/* Sends a control message and waits for its completion. */
int wt_ctl_send(struct wt *w, enum wt_ctl_type type, int32_t status,
		uint64_t deadline, const char *what)
{
	struct fi_cq_tagged_entry e;
	int ret;

	w->ctl_out.magic = WT_MAGIC;
	w->ctl_out.type = type;
	w->ctl_out.status = status;
	w->tx_ops++;
	ret = wt_tsend(w, &w->ctl_out, sizeof(w->ctl_out), WT_TAG_CTL | type,
		       &w->ctl_out_ctx, FI_COMPLETION, deadline);
	if (!ret)
		ret = wt_cq_one(w, &e, deadline, what);
	if (!ret && e.op_context != &w->ctl_out_ctx)
		ret = ft_fail("%s: a completion not of its send", what);
	return ret;
}

/* Takes the sender's HELLO: its options must be ours; its address goes into the AV. */
static int wt_hello(struct wt *w)
{
	const struct wt_opts *o = w->o;
	const struct wt_ctl *h = &w->ctl_in;
	int ret = wt_ctl_post_recv(w, WT_HELLO);

	if (!ret)
		ret = wt_ctl_wait_recv(w, WT_HELLO, ft_deadline_ns(o->timeout_s), "HELLO");
	if (ret)
		return ret;
	if (h->mode != o->mode || h->count != o->count || h->compute_ms != o->compute_ms ||
	    h->interval_ms != o->interval_ms || h->sends != o->sends ||
	    h->addrlen > WT_ADDR_MAX)
		return ft_fail("the sender's options differ from the receiver's");
	return ft_rdm_insert(&w->rdm, h->addr, &w->peer, "fi_av_insert (sender)");
}

/* The receiver's part of the mode. */
static int wt_receiver_run(struct wt *w)
{
	int ret;

	switch (w->o->mode) {
	case WT_IDLE:
		return wt_idle_receiver(w);
	case WT_SREAD:
	case WT_FD:
		return wt_stream_receiver(w);
	case WT_CNTR:
		ret = wt_stream_receiver(w);
		return ret ? ret : wt_cntr_exact(w, "receiver");
	default:
		return wt_compute_receiver(w);
	}
}

/* The receiver: HELLO, the mode, DONE with the verdict; 0 or an error printed. */
int wt_receiver(struct wt *w)
{
	const char *lane;
	int ret = ft_rdm_print_listening(&w->rdm, "mode %s, pid %d",
					 wt_mode_names[w->o->mode], (int) getpid());

	if (!ret)
		ret = wt_hello(w);
	if (ret)
		return ret;
	ret = wt_receiver_run(w);
	if (ret)
		wt_print_stats(w);
	/*
	 * The lane while both are still there: a handshake may settle it
	 * after the first messages, and the sender's close (once DONE came)
	 * takes it back to the NIC.
	 */
	lane = wt_lane(w);
	/* The verdict, so that the sender ends now either way. */
	if (wt_ctl_send(w, WT_DONE, ret ? 1 : 0, ft_deadline_ns(w->o->timeout_s), "DONE") &&
	    !ret)
		ret = -FI_EIO;
	if (!ret)
		printf(WT_NAME ": PASS receiver (mode %s, lane=%s)\n",
		       wt_mode_names[w->o->mode], lane);
	return ret;
}

/* Sends HELLO: our options and address. */
static int wt_send_hello(struct wt *w)
{
	const struct wt_opts *o = w->o;
	size_t len = WT_ADDR_MAX;
	int ret = fi_getname(&w->rdm.ep->fid, w->ctl_out.addr, &len);

	if (ret)
		return ft_err("fi_getname", ret);
	w->ctl_out.addrlen = (uint32_t) len;
	w->ctl_out.mode = o->mode;
	w->ctl_out.count = o->count;
	w->ctl_out.compute_ms = o->compute_ms;
	w->ctl_out.interval_ms = o->interval_ms;
	w->ctl_out.sends = o->sends;
	return wt_ctl_send(w, WT_HELLO, 0, ft_deadline_ns(w->o->timeout_s), "HELLO");
}

/* The sender's part of the mode. */
static int wt_sender_run(struct wt *w)
{
	int ret;

	switch (w->o->mode) {
	case WT_IDLE:
		return 0;
	case WT_SREAD:
	case WT_FD:
		return wt_stream_sender(w);
	case WT_CNTR:
		ret = wt_stream_sender(w);
		return ret ? ret : wt_cntr_exact(w, "sender");
	case WT_AUTO:
		return wt_compute_sender(w);
	default:
		ret = wt_compute_sender(w);
		return ret ? ret : wt_again(w);
	}
}

/* Waits for the receiver's DONE, as long as its mode may take. */
static int wt_wait_done(struct wt *w)
{
	const struct wt_opts *o = w->o;
	uint64_t ms = (uint64_t) o->timeout_s * 1000 + (o->mode == WT_IDLE ? o->idle_ms :
		      o->mode >= WT_AUTO ? o->compute_ms : 0);
	uint64_t cpu0, cpu1, cs0, cs1, t0 = ft_now_ns();
	int ret = wt_ctl_post_recv(w, WT_DONE);

	wt_usage(&cpu0, &cs0);
	if (!ret)
		ret = wt_ctl_wait_recv(w, WT_DONE, t0 + ms * 1000000ULL, "DONE");
	wt_usage(&cpu1, &cs1);
	if (ret)
		return ret;
	if (o->mode == WT_IDLE)
		printf(WT_NAME ": sender: waited for DONE in fi_cq_sread (wall_ms=%" PRIu64
		       " cpu_ms=%" PRIu64 " wakeups=%" PRIu64 ")\n", (ft_now_ns() - t0) / 1000000,
		       (cpu1 - cpu0) / 1000000, cs1 - cs0);
	return w->ctl_in.status ? ft_fail("the receiver failed") : 0;
}

/* The sender: HELLO, the mode, then the receiver's DONE; 0 or an error printed. */
int wt_sender(struct wt *w)
{
	const char *lane;
	int ret = ft_rdm_insert(&w->rdm, w->info->dest_addr, &w->peer, "fi_av_insert");

	if (!ret)
		ret = wt_send_hello(w);
	if (!ret)
		ret = wt_sender_run(w);
	if (ret)
		wt_print_stats(w);
	/* The lane before DONE: the receiver closes once DONE went. */
	lane = wt_lane(w);
	if (!ret)
		ret = wt_wait_done(w);
	if (!ret)
		printf(WT_NAME ": PASS sender (mode %s, lane=%s)\n", wt_mode_names[w->o->mode],
		       lane);
	return ret;
}
