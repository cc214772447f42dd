/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * swsrd tests: delivery over a clean and a lossy link: each send once,
 * acknowledgements coalesced, losses resent, the window bounded.
 */
#include "rdmx_clock.h"
#include "rdmx_test_srd.h"

/* 1. A clean link: everything arrives once, nothing is resent. */
Test(swsrd, clean_link_delivers_each_once_without_resending)
{
	const size_t n_ab = 10000, n_ba = 3000;
	struct sim *sim = sim_open(&sim_cfg, n_ab + n_ba, 0x1234);
	struct rdmx_dev_stats *sa = &sim->node[A].stats, *sb = &sim->node[B].stats;

	/* Interleaved, so both directions are busy at the same time. */
	for (size_t i = 0; i < n_ab; i++) {
		sim_post(sim, A);
		if (i % 10 < 3)
			sim_post(sim, B);
	}
	cr_assert_eq(sim->nmsgs, n_ab + n_ba);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 50 * MS),
		  "%zu of %zu done after 50 ms", sim->finished, sim->nmsgs);
	cr_log_info("clean: %zu messages done in %.2f ms, acks A %lu B %lu, "
		    "piggy-backed B->A %lu\n", sim->nmsgs, sim_ms(sim_now - SIM_T0),
		    (unsigned long) sa->acks_sent, (unsigned long) sb->acks_sent,
		    (unsigned long) sim->node[B].tx.piggy);
	/* 64 packets per ~30 us round trip; at one packet a trip it takes 300 ms. */
	cr_assert_lt(sim_now - SIM_T0, 10 * MS);
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	for (int i = A; i <= B; i++) {
		struct rdmx_dev_stats *s = &sim->node[i].stats;

		cr_assert_eq(s->retransmits, 0);
		cr_assert_eq(s->fast_retransmits, 0);
		cr_assert_eq(s->duplicates, 0);
		cr_assert_eq(s->stale, 0);
		cr_assert_eq(s->rnr_sent + s->rnr_received + s->unreachable, 0);
	}
	/* Acks flow both alone and on B's own data, and are coalesced. */
	cr_assert_gt(sb->acks_sent, 0);
	cr_assert_gt(sim->node[B].tx.piggy, 0);
	cr_assert_lt(sb->acks_sent, n_ab / 4, "B sent %lu acks for %zu packets",
		     (unsigned long) sb->acks_sent, n_ab);
	/* The window was used in full. */
	cr_assert_eq(sim->node[A].tx.max_inflight, RDMX_SRD_WINDOW);
}

/*
 * 1a. Sends posted with more to follow wait for the last of the burst,
 * which sends them all, or for the next progress pass when it never comes
 * (due at once, so a progress thread does not sleep over them).
 */
Test(swsrd, a_burst_leaves_with_its_last_send)
{
	struct sim *sim = sim_open(&sim_cfg, 8, 0xb0a7);
	struct sim_dir *d = &sim->node[A].tx;

	for (size_t i = 0; i < 3; i++)
		sim_post_more(sim, A, true);
	cr_assert_eq(d->data_pkts, 0, "%lu sent before the burst ended",
		     (unsigned long) d->data_pkts);
	sim_post_more(sim, A, false);
	cr_assert_eq(d->data_pkts, 4);

	sim_post_more(sim, A, true);
	cr_assert_eq(d->data_pkts, 4);
	/* A thread about to sleep is told there is work now. */
	cr_assert_eq(rdmx_swsrd_due(&sim->node[A].srd), 0);
	sim_run(sim, sim_now + SIM_TICK_NS, NULL);
	cr_assert_eq(d->data_pkts, 5, "a burst cut short waits past a progress pass");
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS));
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
}

/* xmit and done of an engine whose two peers are counted apart. */
static struct rdmx_swsrd_peer two_peer[2];
static unsigned two_xmits[2], two_done;

static int two_xmit(void *ctx, struct rdmx_swsrd_peer *peer, unsigned path,
		    const struct iovec *iov, size_t iov_cnt)
{
	(void) ctx;
	(void) path;
	(void) iov;
	(void) iov_cnt;
	two_xmits[peer == &two_peer[1]]++;
	return 0;
}

static void two_sent(void *ctx, struct rdmx_swsrd_send *send, unsigned pkt,
		     enum rdmx_dev_status status)
{
	(void) ctx;
	(void) send;
	(void) pkt;
	cr_assert_eq(status, RDMX_DEV_FLUSHED);
	two_done++;
}

/*
 * 1b. One peer at a time holds sends back: a burst to one peer (posted
 * with more) leaves as soon as a send to another is posted, and the
 * other's, held in turn, at the next progress pass.
 */
Test(swsrd, a_send_to_another_peer_takes_the_held_ones_along)
{
	static const struct rdmx_swsrd_ops ops = { .xmit = two_xmit, .done = two_sent };
	struct rdmx_swsrd srd;
	struct rdmx_dev_stats stats = { 0 };
	struct rdmx_swsrd_send sends[5];

	memset(sends, 0, sizeof(sends));
	cr_assert_eq(rdmx_swsrd_construct(&srd, &ops, NULL, &sim_cfg, 1, &stats), 0);
	for (int k = 0; k < 2; k++)
		rdmx_swsrd_peer_construct(&srd, &two_peer[k], &two_peer[k], 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(rdmx_swsrd_send(&srd, &two_peer[0], &sends[i], true), 0);
	cr_assert_eq(two_xmits[0], 0, "a burst left before its end");
	cr_assert_eq(rdmx_swsrd_send(&srd, &two_peer[1], &sends[3], true), 0);
	cr_assert_eq(two_xmits[0], 3, "the first peer's burst still held");
	cr_assert_eq(two_xmits[1], 0);
	cr_assert_eq(rdmx_swsrd_due(&srd), 0, "a thread about to sleep is told");
	rdmx_swsrd_progress(&srd, rdmx_clock_ns());
	cr_assert_eq(two_xmits[1], 1);
	cr_assert_eq(rdmx_swsrd_send(&srd, &two_peer[0], &sends[4], false), 0);
	cr_assert_eq(two_xmits[0], 4, "a send without more leaves at once");
	for (int k = 0; k < 2; k++)
		rdmx_swsrd_peer_destruct(&srd, &two_peer[k]);
	cr_assert_eq(two_done, 5);
	rdmx_swsrd_destruct(&srd);
}

/*
 * 1b. Acknowledgements without data to ride on: a stream whose packets
 * come closer together than ack_idle_ns is acknowledged once per 16, and
 * a lone packet once its sender fell silent for ack_idle_ns.
 */
Test(swsrd, acks_wait_for_the_sender_to_pause)
{
	struct rdmx_swsrd_cfg cfg = sim_cfg;
	const size_t n = 32;
	struct sim *sim;
	struct rdmx_dev_stats *sb;
	struct sim_msg *lone;

	/* Longer than the tick, so every pass of the stream finds it busy. */
	cfg.ack_idle_ns = 3 * SIM_TICK_NS;
	cfg.ack_delay_ns = 100 * SIM_TICK_NS;
	sim = sim_open(&cfg, n + 1, 0x5eed);
	sb = &sim->node[B].stats;
	for (size_t i = 0; i < n; i++) {
		sim_post(sim, A);
		sim_run(sim, sim_now + SIM_TICK_NS, NULL);
	}
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS));
	sim_expect(sim, 0, n, RDMX_DEV_OK, 1);
	/* One per 16 packets; a pass-by-pass ack would send one per packet. */
	cr_assert_leq(sb->acks_sent, n / 16 + 1, "B sent %lu acks for %zu packets",
		      (unsigned long) sb->acks_sent, n);

	lone = sim_post(sim, A);
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS));
	/* Acknowledged at the first pass after the silence, not at the delay. */
	cr_assert_lt(lone->done_ns - lone->first_xmit_ns,
		     2 * (SIM_LATENCY_NS + SIM_JITTER_NS) + cfg.ack_idle_ns +
		     SIM_TICK_NS + 1);
	sim_settle(sim);
}

/* 2. A lossy link, parameterised by loss, duplication and reordering. */
struct lossy_case {
	uint32_t	loss_ppm;
	uint32_t	dup_ppm;
	uint32_t	reorder_ppm;
	uint32_t	eagain_ppm;
	uint64_t	seed;
};

static void run_lossy(const struct lossy_case *c)
{
	const size_t n_ab = 2000, n_ba = 500;
	struct sim *sim = sim_open(&sim_cfg, n_ab + n_ba, c->seed);
	uint64_t resent[2], lost[2], late[2];

	sim_link(sim, c->loss_ppm, c->dup_ppm, c->reorder_ppm, c->eagain_ppm);
	for (size_t i = 0; i < n_ab; i++) {
		sim_post(sim, A);
		if (i % 4 == 0)
			sim_post(sim, B);
	}
	cr_assert(sim_run_all_done(sim, SIM_T0 + 1000 * MS),
		  "%zu of %zu done after 1 s", sim->finished, sim->nmsgs);
	for (int i = A; i <= B; i++) {
		resent[i] = sim->node[i].stats.retransmits +
			    sim->node[i].stats.fast_retransmits;
		lost[i] = sim->node[i].tx.data_lost;
		late[i] = sim->node[i].tx.data_late;
	}
	cr_log_info("loss %u ppm dup %u reorder %u eagain %u: done in %.2f ms; "
		    "A: %lu data lost, %lu late, %lu rto + %lu fast resent; B: %lu "
		    "lost, %lu late, %lu resent; B saw %lu duplicates\n", c->loss_ppm,
		    c->dup_ppm, c->reorder_ppm, c->eagain_ppm,
		    sim_ms(sim_now - SIM_T0), (unsigned long) lost[A],
		    (unsigned long) late[A],
		    (unsigned long) sim->node[A].stats.retransmits,
		    (unsigned long) sim->node[A].stats.fast_retransmits,
		    (unsigned long) lost[B], (unsigned long) late[B],
		    (unsigned long) resent[B],
		    (unsigned long) sim->node[B].stats.duplicates);
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	for (int i = A; i <= B; i++) {
		cr_assert_eq(sim->node[i].stats.unreachable, 0);
		/* Every lost DATA packet needs one resend. */
		cr_assert_geq(resent[i], lost[i], "node %d resent %lu of %lu lost",
			      i, (unsigned long) resent[i], (unsigned long) lost[i]);
		/*
		 * A packet overtaken by three others looks lost, so it may be
		 * resent too. Resends stay within twice the packets lost or
		 * held back, plus one window: no go-back-N, no resend storm.
		 */
		cr_assert_leq(resent[i], 2 * (lost[i] + late[i]) + RDMX_SRD_WINDOW,
			      "node %d resent %lu for %lu lost, %lu late", i,
			      (unsigned long) resent[i], (unsigned long) lost[i],
			      (unsigned long) late[i]);
	}
	if (c->dup_ppm)
		cr_assert_gt(sim->node[B].stats.duplicates, 0);
}

Test(swsrd, loss_1pct_dup_reorder)
{
	run_lossy(&(struct lossy_case) { 10000, 10000, 50000, 0, 0x1001 });
}

Test(swsrd, loss_10pct_dup_reorder)
{
	run_lossy(&(struct lossy_case) { 100000, 10000, 50000, 0, 0x1010 });
}

Test(swsrd, loss_30pct_dup_reorder)
{
	run_lossy(&(struct lossy_case) { 300000, 10000, 50000, 0, 0x1030 });
}

/* xmit failing with -FI_EAGAIN (acks included) is a loss, not a hang. */
Test(swsrd, xmit_eagain_is_recovered)
{
	run_lossy(&(struct lossy_case) { 0, 0, 0, 50000, 0x1e0a });
}

/* 3. One hole with later packets acknowledged is resent at once. */
Test(swsrd, fast_retransmit_fills_a_hole_before_the_timeout)
{
	struct sim *sim = sim_open(&sim_cfg, 40, 0x3);
	const struct sim_msg *hole;

	sim->drop_psn = 5;
	sim->drop_left = 1;
	sim_post_n(sim, A, 40);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 50 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	hole = &sim->msgs[5];
	cr_assert_eq(hole->psn, 5);
	cr_assert_eq(hole->xmits, 2);
	cr_log_info("fast retransmit: psn 5 completed %.1f us after it was sent\n",
		    (double) (hole->done_ns - hole->first_xmit_ns) / US);
	cr_assert_eq(sim->node[A].stats.fast_retransmits, 1);
	cr_assert_eq(sim->node[A].stats.retransmits, 0);
	cr_assert_lt(hole->done_ns - hole->first_xmit_ns, sim_cfg.rto_min_ns);
}

/*
 * The header of node A's packet of psn, as far as rdmx_swsrd_trailed
 * reads it (type, session, psn, tags; not the ack fields it carried).
 */
static const struct rdmx_wire_srd *sent_hdr(struct sim *sim, uint32_t psn)
{
	static struct rdmx_wire_srd wire;
	const struct rdmx_swsrd_peer *peer = &sim->node[A].peer;
	const struct rdmx_srd_hdr hdr = {
		.type = RDMX_SRD_DATA,
		.epoch = peer->tx_epoch,
		.psn = psn,
		.dst_tag = peer->peer_tag,
		.src_tag = peer->local_tag,
	};

	rdmx_wire_srd_encode(&wire, &hdr);
	return &wire;
}

/*
 * Drops psn 5 once, posts n messages, and tells A's swsrd that hdr's
 * packet went after `later` others.
 */
static struct sim *trailed_run(size_t n, unsigned later,
			       const struct rdmx_wire_srd *(*hdr)(struct sim *, uint32_t))
{
	struct sim *sim = sim_open(&sim_cfg, 100, 0x3);
	struct rdmx_srd_hdr sent;

	sim->drop_psn = 5;
	sim->drop_left = 1;
	sim_post_n(sim, A, n);
	cr_assert_eq(rdmx_wire_srd_decode(hdr(sim, 5), sizeof(struct rdmx_wire_srd), &sent), 0);
	rdmx_swsrd_trailed(&sim->node[A].srd, &sent, later);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 50 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	cr_assert_eq(sim->msgs[5].xmits, 2);
	return sim;
}

/*
 * A packet the device sent after 30 later ones (rdmx_swsrd_trailed: the
 * end of a segmentation run) is no hole until three packets past those
 * were acknowledged: 30 messages in all never make it one, and its loss
 * is found by its timer; with 60, three past them are acknowledged and
 * it is resent at once.
 */
Test(swsrd, a_packet_sent_after_later_ones_is_no_hole_until_three_past_them)
{
	struct sim *sim = trailed_run(30, 30, sent_hdr);

	cr_assert_eq(sim->node[A].stats.fast_retransmits, 0);
	cr_assert_eq(sim->node[A].stats.retransmits, 1);
}

Test(swsrd, a_packet_sent_after_later_ones_is_a_hole_three_past_them)
{
	struct sim *sim = trailed_run(60, 30, sent_hdr);

	cr_assert_eq(sim->node[A].stats.fast_retransmits, 1);
	cr_assert_eq(sim->node[A].stats.retransmits, 0);
}

/*
 * However far the device says it moved a packet, acks can still show it
 * missing: they report 64 packets past the first missing one, so the
 * wait stops at 60 and the hole is resent at once, not by its timer.
 */
Test(swsrd, a_wait_past_what_acks_report_is_cut_to_it)
{
	struct sim *sim = trailed_run(100, 62, sent_hdr);

	cr_assert_eq(sim->node[A].stats.fast_retransmits, 1);
	cr_assert_eq(sim->node[A].stats.retransmits, 0);
}

/* The same packet's header of another session. */
static const struct rdmx_wire_srd *stale_hdr(struct sim *sim, uint32_t psn)
{
	static struct rdmx_wire_srd stale;

	stale = *sent_hdr(sim, psn);
	stale.epoch ^= 1;
	return &stale;
}

/* A header of another session tells nothing: the hole is resent at once. */
Test(swsrd, a_late_packet_of_another_session_is_not_waited_for)
{
	struct sim *sim = trailed_run(30, 30, stale_hdr);

	cr_assert_eq(sim->node[A].stats.fast_retransmits, 1);
	cr_assert_eq(sim->node[A].stats.retransmits, 0);
}

/* A pair warmed up (round trips measured) by 8 messages from A, room for 64 more. */
static struct sim *warm_pair(uint64_t seed)
{
	struct sim *sim = sim_open(&sim_cfg, 8 + 2 * 32, seed);

	sim_post_n(sim, A, 8);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 10 * MS));
	sim_settle(sim);
	return sim;
}

/*
 * A warmed-up pair and a window of up to 32 packets (*n_p) A just sent:
 * B asleep for stall_rtos halves of A's timeout, or the packets lost on
 * the link.
 */
static struct sim *window_sent(uint64_t seed, uint64_t stall_rtos, bool lost, size_t *n_p)
{
	struct sim *sim = warm_pair(seed);
	struct rdmx_swsrd_peer *peer = &sim->node[A].peer;

	sim->node[B].asleep_until = sim_now + stall_rtos * peer->rto_ns / 2;
	sim->node[A].tx.loss_ppm = lost ? PPM : 0;
	*n_p = RDMX_MIN(rdmx_srd_cc_window(&peer->cc), 32);
	sim_post_n(sim, A, *n_p);
	sim->node[A].tx.loss_ppm = 0;
	cr_assert_geq(*n_p, 8);
	return sim;
}

/* Runs until the window is done: each message delivered once. */
static void window_done(struct sim *sim)
{
	cr_assert(sim_run_all_done(sim, sim_now + 50 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
}

/*
 * 3a. A receiver that stalls (descheduled) past the timeout, a window in
 * flight: only the oldest packet is resent. Once the receiver runs again
 * and acknowledges the others they are not (late, not lost), and their
 * round trips, sent once, are samples that stretch the timeout.
 */
Test(swsrd, a_stalled_receiver_costs_one_resend)
{
	size_t n;
	struct sim *sim = window_sent(0x57a1, 5, false, &n);
	uint64_t rto = sim->node[A].peer.rto_ns;

	window_done(sim);
	cr_assert_eq(sim->node[A].stats.retransmits, 1, "%lu of %zu resent",
		     (unsigned long) sim->node[A].stats.retransmits, n);
	cr_assert_eq(sim->node[B].stats.duplicates, 1);
	cr_assert_gt(sim->node[A].peer.rto_ns, rto, "the stall taught the timeout nothing");
}

/*
 * 3b. The same window lost on the link instead, the receiver awake: the
 * probe's ack, acknowledging none of the others, has them all resent at
 * once, a round trip after the timeout and not another timeout later.
 */
Test(swsrd, a_window_lost_whole_is_resent_after_the_probe)
{
	size_t n;
	struct sim *sim = window_sent(0x57a2, 0, true, &n);
	uint64_t rto = sim->node[A].peer.rto_ns;

	window_done(sim);
	cr_assert_eq(sim->node[A].stats.retransmits, n);
	cr_assert_eq(sim->node[B].stats.duplicates, 0);
	for (size_t i = 8; i < sim->nmsgs; i++)
		cr_assert_lt(sim->msgs[i].done_ns - sim->msgs[i].first_xmit_ns, 2 * rto,
			     "message %zu done %.1f us after it was sent, the timeout %.1f us",
			     i, (double) (sim->msgs[i].done_ns - sim->msgs[i].first_xmit_ns) / US,
			     (double) rto / US);
}

/*
 * 3c. A session that ends with its probe unanswered: the next one's
 * first timeout probes with its own oldest packet, not with whatever
 * has the old probe's psn now.
 */
Test(swsrd, a_new_session_probes_with_its_own_oldest_packet)
{
	size_t n, first;
	struct sim *sim = window_sent(0x57a3, 40, false, &n);
	struct rdmx_swsrd_peer *peer = &sim->node[A].peer;

	sim_run(sim, sim_now + 3 * peer->rto_ns / 2, NULL);
	cr_assert_eq(sim->node[A].stats.retransmits, 1);
	rdmx_swsrd_peer_reset(&sim->node[A].srd, peer);
	first = sim->nmsgs;
	sim_post_n(sim, A, n);
	sim_run(sim, sim_now + 3 * peer->rto_ns / 2, NULL);
	cr_assert_lt(sim_now, sim->node[B].asleep_until);
	cr_assert_eq(sim->node[A].stats.retransmits, 2);
	cr_assert_eq(sim->msgs[first].xmits, 2, "the oldest was not the probe");
}

static bool a_resent(const struct sim *sim)
{
	return sim->node[A].stats.retransmits > 0;
}

/*
 * 3d. Two packets lost, one sent a tick after them acknowledged (too few
 * for a fast retransmit): their timeouts tell they were lost, not late
 * (RACK), and both go at once, neither held behind the other as a probe.
 */
Test(swsrd, timeouts_behind_a_later_ack_are_resent_together)
{
	struct sim *sim = warm_pair(0x57a4);

	sim->node[A].tx.loss_ppm = PPM;
	sim_post_n(sim, A, 2);
	sim->node[A].tx.loss_ppm = 0;
	sim_run(sim, sim_now + SIM_TICK_NS, NULL);
	sim_post(sim, A);
	cr_assert(sim_run(sim, sim_now + 10 * MS, a_resent));
	cr_assert_eq(sim->node[A].stats.retransmits, 2, "one was held behind the other");
	window_done(sim);
	cr_assert_eq(sim->node[A].stats.fast_retransmits, 0);
}

/* A packet in flight to A (B's ack), or NULL. */
static const struct sim_pkt *pkt_to_a(const struct sim *sim)
{
	for (size_t i = 0; i < sim->qlen; i++)
		if (sim->q[i].to == A)
			return &sim->q[i];
	return NULL;
}

static bool ack_to_a_queued(const struct sim *sim)
{
	return pkt_to_a(sim) != NULL;
}

/*
 * A packet whose device stamped it with the time its ack is read at (one
 * time for a pass over several batches, as verbs reads its completions)
 * is no round trip of 0: the least round trip and the smoothed one stay.
 */
Test(swsrd, an_ack_with_the_time_of_its_send_is_no_sample)
{
	struct sim *sim = warm_pair(0x57a5);
	struct rdmx_swsrd_peer *peer = &sim->node[A].peer;
	uint64_t min_rtt = peer->cc.min_rtt_ns, srtt = peer->srtt_ns;
	uint32_t psn = sim_post(sim, A)->psn;
	struct rdmx_swsrd_slot *slot = &peer->slots[psn & (peer->slot_cnt - 1)];

	cr_assert(sim_run(sim, sim_now + 10 * MS, ack_to_a_queued));
	slot->sent_ns = pkt_to_a(sim)->at;
	window_done(sim);
	cr_assert_gt(min_rtt, 1);
	cr_assert_eq(peer->cc.min_rtt_ns, min_rtt, "least round trip %lu ns",
		     (unsigned long) peer->cc.min_rtt_ns);
	cr_assert_eq(peer->srtt_ns, srtt);
}

/* B takes the packets in flight to it now, none of them lost or late. */
static void b_takes_its_packets(struct sim *sim)
{
	for (size_t i = 0; i < sim->qlen;) {
		if (sim->q[i].to == B) {
			sim_deliver(sim, B, sim->q[i].buf, sim->q[i].len);
			sim->q[i] = sim->q[--sim->qlen];
		} else {
			i++;
		}
	}
}

/*
 * The ack of a packet its sender waits on goes at once; when the device
 * refuses it (-FI_EAGAIN: verbs with its send queue full) it is still due
 * at once, on the next pass, not a quiet ack_idle later.
 */
Test(swsrd, an_ack_due_at_once_and_refused_is_still_due_at_once)
{
	struct sim *sim = warm_pair(0x57a6);
	struct sim_node *b = &sim->node[B];
	uint64_t due;

	sim_post_awaited(sim, A);
	b_takes_its_packets(sim);
	b->tx.eagain_ppm = PPM;
	rdmx_swsrd_progress(&b->srd, sim_now);
	b->tx.eagain_ppm = 0;
	cr_assert(b->peer.ack_pending, "the ack was not refused");
	due = rdmx_swsrd_due(&b->srd);
	cr_assert_leq(due, sim_now, "the ack waits %.1f us",
		      (double) (due - sim_now) / US);
}

/* Runs tick by tick, A kept busy, until A's cwnd reaches its window. */
static uint64_t run_until_cwnd_full(struct sim *sim, uint64_t limit)
{
	struct rdmx_swsrd_peer *peer = &sim->node[A].peer;
	uint64_t start = sim_now;

	while (rdmx_srd_cc_window(&peer->cc) < peer->wnd_max) {
		cr_assert_lt(sim_now - start, limit, "cwnd %u after %.2f ms",
			     rdmx_srd_cc_window(&peer->cc), sim_ms(sim_now - start));
		sim_keep_busy(sim, A, 2 * peer->wnd_max);
		sim_run(sim, sim_now + SIM_TICK_NS, NULL);
	}
	return sim_now - start;
}

/*
 * 7. The window: at most the peer's window in flight (64, or
 * RDMX_SRD_WINDOW_MAX once its handshake said it takes that many); random
 * loss does not collapse cwnd below a quantum (rdmx_swsrd_cc.h).
 */
static void window_under_loss(bool wide)
{
	struct sim *sim = sim_open(&sim_cfg, 200000, 0x7);
	struct rdmx_swsrd_peer *peer = &sim->node[A].peer;
	uint32_t cwnd_min = UINT32_MAX;
	uint64_t grow, t_loss;

	rdmx_swsrd_peer_window(peer, wide);
	rdmx_swsrd_peer_window(&sim->node[B].peer, wide);
	grow = run_until_cwnd_full(sim, 20 * MS);
	cr_assert_eq(sim->node[A].tx.max_inflight, peer->wnd_max);

	/* Under 10% loss, sampled every tick for 2 ms. */
	sim->node[A].tx.loss_ppm = 100000;
	for (t_loss = sim_now; sim_now < t_loss + 2 * MS;) {
		sim_keep_busy(sim, A, 2 * peer->wnd_max);
		sim_run(sim, sim_now + SIM_TICK_NS, NULL);
		cwnd_min = RDMX_MIN(cwnd_min, rdmx_srd_cc_window(&peer->cc));
	}
	cr_assert_gt(sim->node[A].stats.retransmits + sim->node[A].stats.fast_retransmits, 0);
	cr_assert_geq(cwnd_min, RDMX_SRD_QUANTUM, "cwnd fell to %u", cwnd_min);

	sim->node[A].tx.loss_ppm = 0;
	cr_log_info("window %u: full in %.2f ms, low %u under loss, %lu duplicates "
		    "of %zu\n", peer->wnd_max, sim_ms(grow), cwnd_min,
		    (unsigned long) sim->node[B].stats.duplicates, sim->nmsgs);
	/* Packets past the acks' bits are not resent for want of news. */
	cr_assert_lt(sim->node[B].stats.duplicates, sim->nmsgs / 20);
	cr_assert(sim_run_all_done(sim, sim_now + 100 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	cr_assert_leq(sim->node[A].tx.max_inflight, peer->wnd_max);
}

Test(swsrd, window_is_bounded_and_survives_loss)
{
	window_under_loss(false);
}

/* 7b. A wide window is filled, and its packets past the acks' bits recovered. */
Test(swsrd, wide_window_is_bounded_and_survives_loss)
{
	window_under_loss(true);
}

/*
 * 7c. A queue that fills and drains on the path (another flow's sawtooth:
 * one-way delay rising by 1 ms over 10 ms, then back to none) loses
 * nothing, so nothing may be resent for long: the timeout keeps a margin
 * over the round trip. With SRTT + 4 RTTVAR alone, round trips that grow
 * steadily outran it: every packet in flight timed out, the copies went
 * into the same queue, and the flow starved beside a TCP one.
 */
/*
 * 8. Sequence numbers wrap past 2^32 - 1 in a long session: the window,
 * the acks' selective bits and fast retransmission straddle it.
 */
Test(swsrd, psns_wrap_past_2_to_the_32)
{
	struct sim *sim = sim_open(&sim_cfg, 20000, 0x7d);

	for (int i = A; i <= B; i++)
		rdmx_swsrd_peer_window(&sim->node[i].peer, true);
	sim_start_at_psn(sim, A, UINT32_MAX - 3000);
	sim_link(sim, 20000, 10000, 20000, 0);
	sim_post_n(sim, A, 10000);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 500 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	cr_assert_gt(sim->node[A].stats.fast_retransmits, 0);
	cr_assert_lt(sim->node[A].peer.snd_nxt, 8000, "the session did not wrap");
	cr_assert_eq(sim->node[B].stats.stale, 0);
}

Test(swsrd, a_growing_queue_draws_few_timeouts)
{
	struct sim *sim = sim_open(&sim_cfg, 200000, 0x7c);
	struct rdmx_swsrd_peer *peer = &sim->node[A].peer;
	uint64_t start;

	rdmx_swsrd_peer_window(peer, true);
	rdmx_swsrd_peer_window(&sim->node[B].peer, true);
	for (start = sim_now; sim_now < start + 60 * MS;) {
		sim->node[A].tx.queue_ns = (sim_now - start) % (10 * MS) / 10;
		sim_keep_busy(sim, A, 2 * peer->wnd_max);
		sim_run(sim, sim_now + SIM_TICK_NS, NULL);
	}
	sim->node[A].tx.queue_ns = 0;
	cr_assert(sim_run_all_done(sim, sim_now + 100 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	cr_log_info("growing queue: %zu messages, %lu timeouts, %lu duplicates\n",
		    sim->nmsgs, (unsigned long) sim->node[A].stats.retransmits,
		    (unsigned long) sim->node[B].stats.duplicates);
	cr_assert_lt(sim->node[B].stats.duplicates, sim->nmsgs / 100,
		     "%lu of %zu packets came twice",
		     (unsigned long) sim->node[B].stats.duplicates, sim->nmsgs);
}
