/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: swsrd's paths (rdmx_swsrd_path.h) over the simulator,
 * whose links can lose and delay each path's packets apart.
 */
#include "rdmx_test_srd.h"

#define PATHS		2
#define LOSSY		1		/* the path made lossy or long */

#define QUEUE_NS	(45 * US)	/* round trips of about 100 us */

/*
 * A simulator whose node A sends by PATHS paths to a peer that takes
 * them, over links with a queue (fewer packets per simulated millisecond).
 */
static struct sim *paths_open(uint64_t seed)
{
	struct rdmx_swsrd_cfg cfg = sim_cfg;
	struct sim *sim;

	cfg.paths = PATHS;
	sim = sim_open(&cfg, 400000, seed);
	sim->node[A].tx.queue_ns = QUEUE_NS;
	for (int i = A; i <= B; i++) {
		rdmx_swsrd_peer_window(&sim->node[i].peer, true);
		rdmx_swsrd_peer_paths(&sim->node[i].srd, &sim->node[i].peer, true);
	}
	return sim;
}

/* Runs for ms with A kept busy; returns the messages finished meanwhile. */
static size_t paths_busy(struct sim *sim, uint64_t ms)
{
	size_t finished = sim->finished;
	uint64_t end = sim_now + ms * MS;

	while (sim_now < end) {
		sim_keep_busy(sim, A, 2 * RDMX_SRD_WINDOW_MAX);
		sim_run(sim, sim_now + SIM_TICK_NS, NULL);
	}
	return sim->finished - finished;
}

/* Packets A sent by each path since *before (updated). */
static void paths_sent(const struct sim *sim, uint64_t before[PATHS], uint64_t out[PATHS])
{
	for (int k = 0; k < PATHS; k++) {
		out[k] = sim->node[A].tx.path_pkts[k] - before[k];
		before[k] = sim->node[A].tx.path_pkts[k];
	}
}

static void paths_finish(struct sim *sim)
{
	cr_assert(sim_run_all_done(sim, sim_now + 100 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
}

/* Healthy paths take turns: each carries half, and nothing is resent. */
Test(swsrd, paths_take_turns_in_runs)
{
	struct sim *sim = paths_open(0x9a);
	uint64_t before[PATHS] = { 0 }, sent[PATHS];

	paths_busy(sim, 5);
	paths_finish(sim);
	paths_sent(sim, before, sent);
	cr_log_info("paths: %lu and %lu packets\n", (unsigned long) sent[0],
		    (unsigned long) sent[1]);
	cr_assert_gt(sent[1], sent[0] * 9 / 10);
	cr_assert_gt(sent[0], sent[1] * 9 / 10);
	cr_assert_eq(sim->node[A].stats.retransmits + sim->node[A].stats.fast_retransmits, 0);
	cr_assert_eq(sim->node[B].stats.duplicates, 0);
}

/*
 * A path longer than the other delivers its runs after later ones: that
 * is not loss. Its round trips are tracked apart (sends one at a time:
 * in a stream, acks of the short path wait for the long one's packets).
 */
Test(swsrd, a_longer_path_draws_no_spurious_resends)
{
	struct sim *sim = paths_open(0x9b);
	const struct rdmx_srd_paths *p = &sim->node[A].peer.paths;

	sim->node[A].tx.path_delay_ns[LOSSY] = QUEUE_NS;
	for (int i = 0; i < 4 * RDMX_SRD_PATH_RUN; i++) {
		sim_post(sim, A);
		cr_assert(sim_run_all_done(sim, sim_now + 10 * MS));
	}
	cr_log_info("paths: round trips %.1f and %.1f us\n", (double) p->srtt_ns[0] / US,
		    (double) p->srtt_ns[LOSSY] / US);
	cr_assert_gt(p->srtt_ns[LOSSY], p->srtt_ns[0] + QUEUE_NS / 2);
	paths_busy(sim, 5);
	paths_finish(sim);
	cr_assert_eq(sim->node[A].stats.fast_retransmits, 0);
	cr_assert_eq(sim->node[B].stats.duplicates, 0);
	cr_assert_gt(sim->node[A].tx.path_pkts[LOSSY], sim->node[A].tx.path_pkts[0] / 3,
		     "a longer path that loses nothing still carries its share");
}

/*
 * A path losing 20% is found bad: it carries about one run in
 * RDMX_SRD_PATH_PROBE, its losses leave the window whole, and the stream
 * keeps more than half its pace. Healed, it takes its turns again.
 */
Test(swsrd, a_lossy_path_is_avoided_and_comes_back)
{
	struct sim *sim = paths_open(0x9c);
	struct rdmx_swsrd_peer *peer = &sim->node[A].peer;
	uint64_t before[PATHS] = { 0 }, sent[PATHS];
	uint32_t cwnd_min = UINT32_MAX;
	size_t clean, lossy;

	paths_busy(sim, 2);
	clean = paths_busy(sim, 5);
	paths_sent(sim, before, sent);

	sim->node[A].tx.path_loss_ppm[LOSSY] = 200000;
	paths_busy(sim, 2);
	paths_sent(sim, before, sent);
	lossy = sim->finished;
	for (uint64_t end = sim_now + 5 * MS; sim_now < end;) {
		sim_keep_busy(sim, A, 2 * RDMX_SRD_WINDOW_MAX);
		sim_run(sim, sim_now + SIM_TICK_NS, NULL);
		cwnd_min = RDMX_MIN(cwnd_min, rdmx_srd_cc_window(&peer->cc));
	}
	lossy = sim->finished - lossy;
	paths_sent(sim, before, sent);
	cr_log_info("lossy path: %zu messages in 5 ms (clean: %zu), %lu and %lu packets, "
		    "cwnd at least %u, %lu probes\n", lossy, clean, (unsigned long) sent[0],
		    (unsigned long) sent[LOSSY], cwnd_min,
		    (unsigned long) sim->node[A].stats.path_probes);
	cr_assert(rdmx_srd_path_bad(&peer->paths, LOSSY));
	cr_assert_lt(sent[LOSSY], sent[0] / 8, "the lossy path carried %lu of %lu",
		     (unsigned long) sent[LOSSY], (unsigned long) (sent[0] + sent[LOSSY]));
	cr_assert_gt(sim->node[A].stats.path_probes, 0);
	cr_assert_geq(cwnd_min, peer->wnd_max / 2, "cwnd fell to %u", cwnd_min);
	cr_assert_gt(lossy, clean / 2, "%zu messages against %zu without loss", lossy, clean);

	sim->node[A].tx.path_loss_ppm[LOSSY] = 0;
	paths_busy(sim, 3);
	paths_sent(sim, before, sent);
	paths_busy(sim, 3);
	paths_sent(sim, before, sent);
	cr_assert_not(rdmx_srd_path_bad(&peer->paths, LOSSY));
	cr_assert_gt(sent[LOSSY], sent[0] * 9 / 10, "healed, it carried %lu against %lu",
		     (unsigned long) sent[LOSSY], (unsigned long) sent[0]);
	paths_finish(sim);
}

/*
 * A's second path stops delivering after 5 ms of a busy stream over links
 * whose queue holds packets queue_ns: 3 ms later it is found bad by its
 * timeouts and left (it carries less than an eighth of the packets of
 * the next 3 ms), and the stream keeps more than half its pace.
 */
static void dead_path_is_left(uint64_t seed, uint64_t queue_ns)
{
	struct sim *sim = paths_open(seed);
	struct rdmx_swsrd_peer *peer = &sim->node[A].peer;
	uint64_t before[PATHS] = { 0 }, sent[PATHS];
	size_t clean, dead;

	sim->node[A].tx.queue_ns = queue_ns;
	paths_busy(sim, 2);
	clean = paths_busy(sim, 3);
	sim->node[A].tx.path_loss_ppm[LOSSY] = PPM;
	paths_busy(sim, 3);
	paths_sent(sim, before, sent);
	dead = paths_busy(sim, 3);
	paths_sent(sim, before, sent);
	cr_log_info("dead path, queue %lu us: %zu messages in 3 ms (before: %zu), %lu and %lu "
		    "packets, %lu timeouts\n", (unsigned long) (queue_ns / US), dead, clean,
		    (unsigned long) sent[0], (unsigned long) sent[LOSSY],
		    (unsigned long) sim->node[A].stats.retransmits);
	cr_assert(rdmx_srd_path_bad(&peer->paths, LOSSY), "queue %lu us",
		  (unsigned long) (queue_ns / US));
	cr_assert_lt(sent[LOSSY], sent[0] / 8);
	cr_assert_gt(dead, clean / 2, "%zu messages against %zu before", dead, clean);
	sim->node[A].tx.path_loss_ppm[LOSSY] = 0;
	paths_finish(sim);
}

Test(swsrd, a_dead_path_is_left)
{
	dead_path_is_left(0x9f, QUEUE_NS);
}

/*
 * The same over round trips four times as long, a larger bandwidth-delay
 * product: the run after a hole of the dead path, and the runs after it,
 * leave closer together than the reorder margin (a quarter of the least
 * round trip), and nothing past that next run is acknowledged while the
 * hole waits (the acks' selective bits reach 64 packets). The acks that
 * keep coming without the hole tell of its path.
 */
Test(swsrd, a_dead_path_is_left_on_long_round_trips)
{
	dead_path_is_left(0xa4, 4 * QUEUE_NS);
}

/*
 * The acks of both paths' packets held up alike past the timeout (a
 * receiver kept off its CPU, a host too slow for its timers): the
 * timeouts tell of no path, so neither is left.
 */
Test(swsrd, timeouts_on_every_path_leave_none)
{
	struct sim *sim = paths_open(0xa0);
	struct rdmx_swsrd_peer *peer = &sim->node[A].peer;

	paths_busy(sim, 2);
	for (int i = 0; i < 20; i++) {
		sim->node[B].tx.queue_ns = i % 2 ? 0 : 20 * QUEUE_NS;
		paths_busy(sim, 1);
	}
	sim->node[B].tx.queue_ns = 0;
	cr_log_info("delays: %lu timeouts, losses %u and %u /65536\n",
		    (unsigned long) sim->node[A].stats.retransmits, peer->paths.loss[0],
		    peer->paths.loss[LOSSY]);
	cr_assert_gt(sim->node[A].stats.retransmits, 0, "the delays drew no timeout");
	for (int k = 0; k < PATHS; k++)
		cr_assert_lt(peer->paths.loss[k], 65536 / 32, "path %d counted as losing %u/65536",
			     k, peer->paths.loss[k]);
	cr_assert_not(rdmx_srd_path_bad(&peer->paths, 0));
	cr_assert_not(rdmx_srd_path_bad(&peer->paths, LOSSY));
	paths_finish(sim);
}

/*
 * A path that never delivers, from the session's start: its packets'
 * resends go by the other, its timeouts are counted once those resends
 * arrive, and it is left.
 */
Test(swsrd, a_path_dead_from_the_start_is_left)
{
	struct sim *sim = paths_open(0xa1);
	struct rdmx_swsrd_peer *peer = &sim->node[A].peer;
	uint64_t before[PATHS] = { 0 }, sent[PATHS];

	sim->node[A].tx.path_loss_ppm[LOSSY] = PPM;
	paths_busy(sim, 5);
	paths_sent(sim, before, sent);
	paths_busy(sim, 3);
	paths_sent(sim, before, sent);
	cr_log_info("dead from the start: %lu and %lu packets, %lu timeouts\n",
		    (unsigned long) sent[0], (unsigned long) sent[LOSSY],
		    (unsigned long) sim->node[A].stats.retransmits);
	cr_assert(rdmx_srd_path_bad(&peer->paths, LOSSY));
	cr_assert_lt(sent[LOSSY], sent[0] / 8);
	cr_assert_eq(sim->node[A].stats.unreachable, 0);
	sim->node[A].tx.path_loss_ppm[LOSSY] = 0;
	paths_finish(sim);
}

/*
 * The peer ends its sending session (a new tag): what goes by other
 * paths with the old tag is lost unseen (its challenge goes to a port
 * nobody reads). Resends go by another path than the last copy's, the
 * first path's draw the challenge, and the other paths wait for an ack
 * with the new tag. A burst shorter than a run may go by one path.
 */
Test(swsrd, a_new_peer_tag_is_learnt_whatever_path_a_burst_takes)
{
	struct sim *sim = paths_open(0xa2);
	uint64_t before[PATHS] = { 0 }, sent[PATHS];

	sim_post(sim, B);
	paths_busy(sim, 2);
	paths_finish(sim);
	for (int burst = 0; burst < 2 * PATHS; burst++) {
		size_t first;

		rdmx_swsrd_peer_reset(&sim->node[B].srd, &sim->node[B].peer);
		sim_post(sim, B);
		first = sim_post_n(sim, A, 10);
		cr_assert(sim_run_all_done(sim, sim_now + 20 * MS),
			  "burst %d: not all done 20 ms later", burst);
		sim_expect(sim, first, sim->nmsgs, RDMX_DEV_OK, 1);
		paths_busy(sim, 1);
	}
	paths_finish(sim);
	paths_sent(sim, before, sent);
	cr_assert_gt(sent[LOSSY], sent[0] / 4, "path %d left after new tags", LOSSY);
	cr_assert_eq(sim->node[A].stats.unreachable, 0);
}

/*
 * Past psn 2^32 - 1 the paths' latest psns and holes still compare
 * right: a lossy path found bad while the psns wrap.
 */
Test(swsrd, paths_across_the_psn_wrap)
{
	struct sim *sim = paths_open(0xa3);
	struct rdmx_swsrd_peer *peer = &sim->node[A].peer;

	sim_start_at_psn(sim, A, UINT32_MAX - 40000);
	paths_busy(sim, 1);
	cr_assert_gt(peer->snd_nxt, UINT32_MAX / 2, "the session wrapped too soon");
	sim->node[A].tx.path_loss_ppm[LOSSY] = 200000;
	paths_busy(sim, 3);
	cr_assert_lt(peer->snd_nxt, UINT32_MAX / 2, "the session did not wrap");
	cr_assert(rdmx_srd_path_bad(&peer->paths, LOSSY));
	sim->node[A].tx.path_loss_ppm[LOSSY] = 0;
	paths_finish(sim);
	cr_assert_eq(sim->node[A].stats.unreachable, 0);
}

/* One path only until the peer's handshake said it takes the others. */
Test(swsrd, one_path_to_a_peer_that_takes_one)
{
	struct sim *sim = paths_open(0x9d);

	rdmx_swsrd_peer_paths(&sim->node[A].srd, &sim->node[A].peer, false);
	paths_busy(sim, 2);
	paths_finish(sim);
	cr_assert_gt(sim->node[A].tx.path_pkts[0], 0);
	cr_assert_eq(sim->node[A].tx.path_pkts[LOSSY], 0);
}

/* Nor to a peer whose tag is not proven yet: its other paths would be refused. */
Test(swsrd, one_path_before_the_peer_is_heard)
{
	struct sim *sim = paths_open(0x9e);

	sim_stranger(sim);
	sim_post_n(sim, A, 100);
	cr_assert_gt(sim->node[A].tx.path_pkts[0], 0);
	cr_assert_eq(sim->node[A].tx.path_pkts[LOSSY], 0);
	paths_finish(sim);
	/* Once it acknowledged packets carrying its tag, every path. */
	paths_busy(sim, 1);
	paths_finish(sim);
	cr_assert_gt(sim->node[A].tx.path_pkts[LOSSY], 0);
}
