/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * swsrd tests: recovery under heavy loss. A lost resend is found by acks
 * of later packets, not by its timer; loss at random keeps the window,
 * and only silence (a dead path: nothing sent after a packet gets
 * through, over two timeouts) shrinks it and the product.
 */
#include "rdmx_test_srd.h"

/* Runs for ns with A kept busy; samples A's window every tick. */
static void busy_for(struct sim *sim, uint64_t ns, uint64_t *cwnd_sum, uint64_t *ticks)
{
	struct rdmx_swsrd_peer *peer = &sim->node[A].peer;
	uint64_t end = sim_now + ns;

	while (sim_now < end) {
		sim_keep_busy(sim, A, 2 * peer->wnd_max);
		sim_run(sim, sim_now + SIM_TICK_NS, NULL);
		*cwnd_sum += rdmx_srd_cc_window(&peer->cc);
		++*ticks;
	}
}

static struct sim *wide_open(size_t msg_cap, uint64_t seed)
{
	struct sim *sim = sim_open(&sim_cfg, msg_cap, seed);

	for (int i = A; i <= B; i++)
		rdmx_swsrd_peer_window(&sim->node[i].peer, true);
	return sim;
}

/*
 * A hole's resend lost too: the packets sent after it are acknowledged
 * and tell (a psn cannot: the resend carries its old one), so it goes a
 * third time without waiting for its timer.
 */
Test(swsrd, a_lost_resend_is_found_by_later_acks)
{
	struct sim *sim = wide_open(20000, 0x4e5);
	const struct sim_msg *hole;
	uint64_t sum = 0, ticks = 0;

	sim->drop_psn = 40;
	sim->drop_left = 2;
	busy_for(sim, 2 * MS, &sum, &ticks);
	hole = &sim->msgs[40];
	cr_assert_eq(hole->psn, 40);
	cr_assert_eq(hole->xmits, 3);
	cr_assert_eq(hole->done_cnt, 1);
	cr_log_info("a lost resend: psn 40 done %.1f us after it was first sent\n",
		    (double) (hole->done_ns - hole->first_xmit_ns) / US);
	cr_assert_eq(sim->node[A].stats.retransmits, 0, "a timer resent it");
	cr_assert_eq(sim->node[A].stats.fast_retransmits, 2);
	cr_assert_lt(hole->done_ns - hole->first_xmit_ns, sim_cfg.rto_min_ns);
}

/*
 * 30% of the datagrams lost both ways, the window wide: small windows
 * lose every packet's acks at times, and taking each such timeout for
 * silence (as from 3dd632e) held the window at 12 packets on average
 * here (5 to 12 with other seeds) and the pace at 322 messages in 20 ms.
 */
Test(swsrd, a_stream_under_30pct_loss_keeps_its_window)
{
	struct sim *sim = wide_open(100000, 0x4e6);
	uint64_t sum = 0, ticks = 0;
	size_t done;

	sim->node[A].tx.loss_ppm = 300000;
	sim->node[B].tx.loss_ppm = 300000;
	busy_for(sim, 20 * MS, &sum, &ticks);
	done = sim->finished;
	cr_log_info("30%% loss: %zu done in 20 ms, window %lu on average, %lu timeouts, "
		    "%lu fast resends\n", done, (unsigned long) (sum / ticks),
		    (unsigned long) sim->node[A].stats.retransmits,
		    (unsigned long) sim->node[A].stats.fast_retransmits);
	cr_assert_geq(sum / ticks, 24, "the window fell to %lu on average",
		      (unsigned long) (sum / ticks));
	cr_assert_gt(done, 640);
	sim->node[A].tx.loss_ppm = 0;
	sim->node[B].tx.loss_ppm = 0;
	cr_assert(sim_run_all_done(sim, sim_now + 200 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
}

/*
 * A path that goes dead under a full window: the first round of timeouts
 * halves the window to the product (it may have been random loss), each
 * later one halves the window and the product, down to a sixteenth in
 * four rounds. Healed, the stream completes.
 */
Test(swsrd, silence_shrinks_the_window_and_the_product)
{
	struct sim *sim = wide_open(200000, 0x4e7);
	struct rdmx_swsrd_peer *peer = &sim->node[A].peer;
	uint64_t sum = 0, ticks = 0;
	uint32_t cwnd, bdp;

	busy_for(sim, 1 * MS, &sum, &ticks);
	cwnd = rdmx_srd_cc_window(&peer->cc);
	bdp = peer->cc.bdp_x16 / 16;
	cr_assert_eq(cwnd, peer->wnd_max);
	sim->node[A].tx.loss_ppm = PPM;
	busy_for(sim, 5 * MS, &sum, &ticks);
	cr_log_info("silence: window %u -> %u, product %u -> %u, %lu timeouts\n", cwnd,
		    rdmx_srd_cc_window(&peer->cc), bdp, peer->cc.bdp_x16 / 16,
		    (unsigned long) sim->node[A].stats.retransmits);
	cr_assert_leq(rdmx_srd_cc_window(&peer->cc), cwnd / 16);
	cr_assert_leq(peer->cc.bdp_x16 / 16, bdp / 16 + 1);
	cr_assert_eq(sim->node[A].stats.unreachable, 0);
	sim->node[A].tx.loss_ppm = 0;
	cr_assert(sim_run_all_done(sim, sim_now + 200 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
}
