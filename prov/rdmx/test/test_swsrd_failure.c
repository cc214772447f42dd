/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * swsrd tests: sends that cannot be delivered: an unreachable peer, no
 * receive buffer (RNR) or too small a one, a peer destroyed or given up.
 */
#include "rdmx_test_srd.h"

/*
 * Messages [first, end) sent into a dead link: they fail with UNREACH
 * once the oldest has gone unanswered for unreach_ns (not before, and no
 * later than one more rto_max), each resend counted, backing off.
 */
static void expect_unreachable(const struct sim *sim, size_t first, size_t end,
			       unsigned refusals)
{
	const struct rdmx_swsrd_cfg *cfg = &sim->cfg;
	uint64_t oldest = UINT64_MAX, resends = 0;
	unsigned doublings = 0, most;

	/*
	 * With backoff a packet goes out at most: once, once more per
	 * refusal, once per doubling of rto from rto_min to rto_max, once per
	 * rto_max until unreach_ns, and once for rounding.
	 */
	while ((cfg->rto_min_ns << doublings) < cfg->rto_max_ns)
		doublings++;
	most = 1 + refusals + doublings +
	       (unsigned) (cfg->unreach_ns / cfg->rto_max_ns) + 1;
	sim_expect(sim, first, end, RDMX_DEV_UNREACH, 0);
	for (size_t i = first; i < end; i++)
		if (sim->msgs[i].xmits)
			oldest = RDMX_MIN(oldest, sim->msgs[i].first_xmit_ns);
	cr_assert_neq(oldest, UINT64_MAX, "nothing was ever sent");
	for (size_t i = first; i < end; i++) {
		const struct sim_msg *msg = &sim->msgs[i];

		cr_assert_geq(msg->done_ns, oldest + cfg->unreach_ns,
			      "message %zu failed %.3f ms after the first send", i,
			      sim_ms(msg->done_ns - oldest));
		if (msg->xmits)
			cr_assert_leq(msg->done_ns, msg->first_xmit_ns + cfg->unreach_ns +
				      cfg->rto_max_ns + SIM_TICK_NS,
				      "message %zu failed %.3f ms after it was sent", i,
				      sim_ms(msg->done_ns - msg->first_xmit_ns));
		cr_assert_leq(msg->xmits, most, "message %zu sent %u times (%u with "
			      "backoff)", i, msg->xmits, most);
		if (msg->xmits)
			resends += msg->xmits - 1 - refusals;
	}
	cr_assert_eq(sim->node[A].stats.retransmits, resends,
		     "%lu resends counted, %lu seen",
		     (unsigned long) sim->node[A].stats.retransmits,
		     (unsigned long) resends);
}

/* 4. A peer that stops answering fails its sends; a new session works. */
Test(swsrd, unreachable_peer_fails_sends_then_recovers)
{
	struct sim *sim = sim_open(&sim_cfg, 400, 0x4);
	struct rdmx_dev_stats *sa = &sim->node[A].stats;
	size_t dead, again;
	uint64_t t_down, data_after;

	sim_post_n(sim, A, 100);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 10 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, 100, RDMX_DEV_OK, 1);

	sim->node[A].tx.loss_ppm = PPM;
	t_down = sim_now;
	dead = sim_post_n(sim, A, 100);
	cr_assert(sim_run_all_done(sim, t_down + sim_cfg.unreach_ns +
				   sim_cfg.rto_max_ns + SIM_TICK_NS),
		  "%zu of %zu done", sim->finished, sim->nmsgs);
	cr_log_info("unreachable: failed %.3f ms after the first lost send\n",
		    sim_ms(sim_now - sim->msgs[dead].first_xmit_ns));
	expect_unreachable(sim, dead, dead + 100, 0);
	cr_assert_eq(sa->unreachable, 1);

	/* A failed peer is left alone: no packets until there is a new send. */
	data_after = sim->node[A].tx.data_pkts;
	sim_run(sim, sim_now + 50 * MS, NULL);
	cr_assert_eq(sim->node[A].tx.data_pkts, data_after);

	sim->node[A].tx.loss_ppm = 0;
	again = sim_post_n(sim, A, 100);
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS));
	sim_settle(sim);
	sim_expect(sim, again, again + 100, RDMX_DEV_OK, 1);
	cr_assert_neq(sim->msgs[again].epoch, sim->msgs[0].epoch, "no new session");
	cr_assert_eq(sim->msgs[again].psn, 0);
	cr_assert_eq(sa->unreachable, 1);
	cr_assert_eq(sim->node[B].stats.stale, 0);
}

static bool sim_some_done(const struct sim *sim)
{
	return sim->finished >= 50;
}

static bool sim_b_refused(const struct sim *sim)
{
	return sim->node[B].stats.rnr_sent > 0;
}

/*
 * Once B has buffers again, n more sends from A are delivered: the psns
 * skipped before them do not block the window.
 */
static void sim_later_sends_pass(struct sim *sim, size_t n)
{
	size_t later;

	sim->node[B].room = RDMX_SRD_ROOM_BUF;
	later = sim_post_n(sim, A, n);
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS),
		  "%zu of %zu done: the skipped psns block the window",
		  sim->finished, sim->nmsgs);
	sim_settle(sim);
	sim_expect(sim, later, later + n, RDMX_DEV_OK, 1);
}

/* 5a. No receive buffer: RNR after rnr_retry retries, the psn is skipped. */
Test(swsrd, rnr_exhausted_completes_rnr_and_skips_the_psn)
{
	struct sim *sim = sim_open(&sim_cfg, 300, 0x5a);
	const unsigned tries = sim_cfg.rnr_retry + 1;

	sim->node[B].room = RDMX_SRD_ROOM_NONE;
	sim_post_n(sim, A, 4);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 5 * MS));
	cr_log_info("rnr: 4 sends refused %u times each, done in %.1f us\n", tries,
		    (double) (sim_now - SIM_T0) / US);
	sim_expect(sim, 0, 4, RDMX_DEV_RNR, 0);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(sim->msgs[i].xmits, tries, "message %zu sent %u times",
			     i, sim->msgs[i].xmits);
	cr_assert_eq(sim->node[A].stats.rnr_received, 4 * tries);
	cr_assert_eq(sim->node[B].stats.rnr_sent, 4 * tries);
	/* Refusals are not losses. */
	cr_assert_eq(sim->node[A].stats.retransmits, 0);

	/* More than a window later: the four psns must have been filled. */
	sim_later_sends_pass(sim, 200);
	/* Each SKIP went out with the RNR completion, not as a resend. */
	cr_assert_eq(sim->node[A].tx.skips, 4);
	cr_assert_eq(sim->node[A].stats.retransmits, 0);
	cr_assert_eq(sim->node[A].stats.fast_retransmits, 0);
	cr_assert_eq(sim->node[A].stats.unreachable, 0);
	cr_assert_eq(sim->node[A].stats.rnr_received, 4 * tries);
}

static bool sim_a_refused_out(const struct sim *sim)
{
	return sim->node[A].stats.rnr_received > sim_cfg.rnr_retry;
}

/*
 * 5a'. A copy lost before the refusals began is never refused: the send
 * still ends with RNR once its other copies were refused rnr_retry + 1
 * times, a retransmission timeout later, not when the session gives up.
 */
Test(swsrd, rnr_exhausted_after_a_lost_copy_still_completes_rnr)
{
	struct sim *sim = sim_open(&sim_cfg, 300, 0x5d);
	const unsigned tries = sim_cfg.rnr_retry + 1;
	uint64_t refused_ns;

	sim->node[B].room = RDMX_SRD_ROOM_NONE;
	sim->drop_psn = 0;
	sim->drop_left = 1;
	sim_post(sim, A);
	cr_assert(sim_run(sim, SIM_T0 + 10 * sim_cfg.rto_max_ns, sim_a_refused_out));
	refused_ns = sim_now;
	cr_assert(sim_run_all_done(sim, SIM_T0 + 10 * sim_cfg.rto_max_ns),
		  "the refused send did not end (%lu refusals, %lu resends)",
		  sim->node[A].stats.rnr_received, sim->node[A].stats.retransmits);
	sim_expect(sim, 0, 1, RDMX_DEV_RNR, 0);
	/* Not at the last refusal: the lost copy's might have been on its way. */
	cr_assert_geq(sim->msgs[0].done_ns - refused_ns, sim_cfg.rto_min_ns);
	cr_assert_eq(sim->msgs[0].xmits, tries + 1, "sent %u times", sim->msgs[0].xmits);
	cr_assert_eq(sim->node[A].stats.rnr_received, tries);
	cr_assert_eq(sim->node[A].stats.unreachable, 0);

	sim_later_sends_pass(sim, 100);
	cr_assert_eq(sim->node[A].tx.skips, 1);
	cr_assert_eq(sim->node[A].stats.unreachable, 0);
}

/* 5c. A packet larger than the receiver's buffers fails at once, MSGSIZE. */
Test(swsrd, too_big_completes_msgsize_and_skips_the_psn)
{
	struct sim *sim = sim_open(&sim_cfg, 300, 0x5c);

	sim->node[B].room = RDMX_SRD_ROOM_SHORT;
	sim_post_n(sim, A, 4);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 5 * MS));
	sim_expect(sim, 0, 4, RDMX_DEV_MSGSIZE, 0);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(sim->msgs[i].xmits, 1, "message %zu sent %u times: "
			     "no retry can fit", i, sim->msgs[i].xmits);
	sim_later_sends_pass(sim, 200);
	cr_assert_eq(sim->node[A].tx.skips, 4);
	cr_assert_eq(sim->node[A].stats.unreachable, 0);
}

/* 5b. A refused send retried after buffers return is delivered once. */
Test(swsrd, rnr_retry_delivers_once_buffers_return)
{
	struct sim *sim = sim_open(&sim_cfg, 1, 0x5b);
	const struct sim_msg *msg;

	sim->node[B].room = RDMX_SRD_ROOM_NONE;
	msg = sim_post(sim, A);
	cr_assert(sim_run(sim, SIM_T0 + MS, sim_b_refused));
	sim->node[B].room = RDMX_SRD_ROOM_BUF;
	cr_assert(sim_run_all_done(sim, SIM_T0 + 5 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, 1, RDMX_DEV_OK, 1);
	cr_assert_eq(msg->xmits, 2);
	cr_assert_eq(sim->node[A].stats.rnr_received, 1);
	cr_assert_eq(sim->node[B].stats.rnr_sent, 1);
	cr_assert_eq(sim->node[A].stats.retransmits, 0);
	/* The retry waited rnr_delay, not a retransmission timeout. */
	cr_log_info("rnr retry: delivered %.1f us after the first send\n",
		    (double) (msg->done_ns - msg->first_xmit_ns) / US);
	cr_assert_lt(msg->done_ns - msg->first_xmit_ns, sim_cfg.rto_init_ns);
}

/* 5c. A refused send whose retry is lost is resent with backoff. */
Test(swsrd, refused_then_lost_send_backs_off)
{
	struct sim *sim = sim_open(&sim_cfg, 1, 0x5c);

	sim->node[B].room = RDMX_SRD_ROOM_NONE;
	sim_post(sim, A);
	cr_assert(sim_run(sim, SIM_T0 + MS, sim_b_refused));
	sim->node[B].room = RDMX_SRD_ROOM_BUF;
	sim->node[A].tx.loss_ppm = PPM;
	cr_assert(sim_run_all_done(sim, SIM_T0 + sim_cfg.unreach_ns +
				   sim_cfg.rto_max_ns + MS));
	cr_log_info("refused then lost: sent %u times, %lu counted resends\n",
		    sim->msgs[0].xmits,
		    (unsigned long) sim->node[A].stats.retransmits);
	expect_unreachable(sim, 0, 1, 1);
}

/* 8. Destroying a peer flushes what is in flight and what waits, once. */
Test(swsrd, destruct_flushes_every_outstanding_send_once)
{
	struct sim *sim = sim_open(&sim_cfg, 200, 0x8);
	size_t ok = 0, flushed = 0;
	uint64_t data;

	/* Some done, then the link dies with a window in flight and a queue. */
	sim_post_n(sim, A, 200);
	cr_assert(sim_run(sim, SIM_T0 + 10 * MS, sim_some_done));
	sim->node[A].tx.loss_ppm = PPM;
	sim_run(sim, sim_now + 500 * US, NULL);
	cr_assert_lt(sim->finished, 200 - RDMX_SRD_WINDOW, "too few left waiting");
	rdmx_swsrd_peer_destruct(&sim->node[A].srd, &sim->node[A].peer);
	cr_assert_eq(sim->finished, 200);
	for (size_t i = 0; i < 200; i++) {
		const struct sim_msg *msg = &sim->msgs[i];

		cr_assert_eq(msg->done_cnt, 1, "message %zu: %u done()", i,
			     msg->done_cnt);
		cr_assert(msg->status == RDMX_DEV_OK ||
			  msg->status == RDMX_DEV_FLUSHED, "message %zu: %s", i,
			  rdmx_dev_status_str(msg->status));
		/* Only what B acknowledged is OK; the rest never reached it. */
		cr_assert_eq(msg->delivered, msg->status == RDMX_DEV_OK);
		ok += msg->status == RDMX_DEV_OK;
		flushed += msg->status == RDMX_DEV_FLUSHED;
	}
	cr_log_info("destruct: %zu ok, %zu flushed\n", ok, flushed);
	cr_assert_geq(ok, 50);

	/* The engine forgets the peer: no timer fires for it afterwards. */
	data = sim->node[A].tx.data_pkts;
	sim_run(sim, sim_now + 2 * sim_cfg.unreach_ns, NULL);
	cr_assert_eq(sim->node[A].tx.data_pkts, data);
	for (size_t i = 0; i < 200; i++)
		cr_assert_eq(sim->msgs[i].done_cnt, 1);
	cr_assert_eq(sim->node[A].stats.unreachable, 0);
}

/*
 * A path that fails one way: A's packets are all lost, B's reach A. B
 * hears nothing and gives A up after the unreachable timeout; A still
 * hears B's resends, so it keeps its sends going past that timeout (a
 * flood that costs a live peer's packets must not end its session) and
 * gives B up only at four of them.
 */
Test(swsrd, a_peer_still_heard_is_given_up_only_much_later)
{
	struct sim *sim = sim_open(&sim_cfg, 200, 0x4b);
	uint64_t t_down;

	sim->node[A].tx.loss_ppm = PPM;
	t_down = sim_now;
	sim_post_n(sim, A, 10);
	sim_post_n(sim, B, 10);
	sim_run(sim, t_down + sim_cfg.unreach_ns + sim_cfg.rto_max_ns + SIM_TICK_NS, NULL);
	cr_assert_eq(sim->node[B].stats.unreachable, 1, "B heard nothing from A");
	cr_assert_eq(sim->node[A].stats.unreachable, 0, "A gave up a peer it hears");
	/* B keeps A busy: its next session's packets carry A's tag too. */
	sim_post_n(sim, B, 10);
	cr_assert(sim_run_all_done(sim, t_down + 4 * sim_cfg.unreach_ns +
				   2 * sim_cfg.rto_max_ns + SIM_TICK_NS),
		  "%zu of %zu done", sim->finished, sim->nmsgs);
	cr_assert_geq(sim->node[A].stats.unreachable, 1);
}
