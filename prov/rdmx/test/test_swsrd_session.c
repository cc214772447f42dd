/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * swsrd tests: sessions: a restarted or recovered sender and the
 * stragglers of its old session, tags learned by challenge, forgeries.
 */
#include "rdmx_test_srd.h"

/* A copy of the last DATA packet with a payload that node from sent. */
struct sim_capture {
	uint8_t	buf[PKT_MAX];
	size_t	len;
};

static struct sim_capture sim_capture_last(const struct sim *sim, int from)
{
	struct sim_capture cap;

	cr_assert_gt(sim->node[from].tx.last_data_len, 0);
	cap.len = sim->node[from].tx.last_data_len;
	memcpy(cap.buf, sim->node[from].tx.last_data, cap.len);
	return cap;
}

/* 6a. A restarted sender (new incarnation) is accepted at once. */
Test(swsrd, restart_new_incarnation_is_accepted)
{
	struct sim *sim = sim_open(&sim_cfg, 200, 0x6a);
	size_t second;

	sim_post_n(sim, A, 100);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 10 * MS));
	sim_settle(sim);
	sim_node_restart(sim, A, 0xa0002);
	second = sim_post_n(sim, A, 100);
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	cr_assert_eq(sim->msgs[second].epoch >> 8, 0xa0002);
	cr_assert_eq(sim->node[B].stats.stale, 0);
	cr_assert_eq(sim->node[A].stats.unreachable, 0);
}

/*
 * Injects an old packet into B; it must be counted stale and dropped,
 * and the live session must go on unharmed for more than a window.
 */
static void expect_stale_then_live(struct sim *sim, const struct sim_capture *old)
{
	uint64_t stale = sim->node[B].stats.stale;
	const struct sim_msg *old_msg = &sim->msgs[get32(old->buf + SRD_HDR + 4)];
	struct sim_capture live = sim_capture_last(sim, A);
	size_t more;

	/* Expectations, not assertions: what follows shows the damage. */
	cr_expect_not(sim_deliver(sim, B, old->buf, old->len),
		      "a packet of an old session was delivered");
	cr_expect_eq(sim->node[B].stats.stale, stale + 1);
	cr_expect_eq(old_msg->delivered, 0);
	/* The live session's last packet again: still a duplicate. */
	cr_expect_not(sim_deliver(sim, B, live.buf, live.len),
		      "the old packet reset the live session: a duplicate delivered");
	more = sim_post_n(sim, A, 100);
	cr_assert(sim_run_all_done(sim, sim_now + 20 * MS),
		  "%zu of %zu done", sim->finished, sim->nmsgs);
	sim_settle(sim);
	sim_expect(sim, more, more + 100, RDMX_DEV_OK, 1);
	cr_assert_eq(sim->node[B].stats.stale, stale + 1);
}

static bool sim_a_unreachable(const struct sim *sim)
{
	return sim->node[A].stats.unreachable > 0;
}

/* 6b. After unreachable, a straggler of the older session is stale. */
Test(swsrd, restart_older_session_is_stale)
{
	struct sim *sim = sim_open(&sim_cfg, 400, 0x6b);
	struct sim_capture old;
	size_t live;

	sim_post_n(sim, A, 20);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 10 * MS));
	sim->node[A].tx.loss_ppm = PPM;
	sim_post_n(sim, A, 5);
	old = sim_capture_last(sim, A);
	cr_assert(sim_run(sim, sim_now + sim_cfg.unreach_ns + sim_cfg.rto_max_ns +
			  SIM_TICK_NS, sim_a_unreachable));
	sim->node[A].tx.loss_ppm = 0;
	live = sim_post_n(sim, A, 100);
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS));
	sim_settle(sim);
	sim_expect(sim, live, live + 100, RDMX_DEV_OK, 1);
	cr_assert_eq(sim->msgs[live].epoch >> 8, sim->msgs[0].epoch >> 8);
	expect_stale_then_live(sim, &old);
}

/* 6c. After a restart, a straggler of the dead incarnation is stale too. */
Test(swsrd, restart_old_incarnation_straggler_is_stale)
{
	struct sim *sim = sim_open(&sim_cfg, 400, 0x6c);
	struct sim_capture old;
	size_t live;

	sim_post_n(sim, A, 20);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 10 * MS));
	/* A packet of the first process, still in the network when it died. */
	sim->node[A].tx.loss_ppm = PPM;
	sim_post(sim, A);
	old = sim_capture_last(sim, A);
	sim_node_restart(sim, A, 0xa0002);
	sim->node[A].tx.loss_ppm = 0;
	/* Fewer than a window, so a reset receiver would take them again. */
	live = sim_post_n(sim, A, 30);
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS));
	sim_settle(sim);
	sim_expect(sim, live, live + 30, RDMX_DEV_OK, 1);
	expect_stale_then_live(sim, &old);
}

/* 8b. Session tags: strangers meet by challenge; forgeries change nothing. */

/* Two nodes that never met exchange tags and then everything arrives. */
Test(swsrd, strangers_learn_tags_by_challenge)
{
	struct sim *sim = sim_open(&sim_cfg, 40, 0x8b1);

	sim_stranger(sim);
	sim_post_n(sim, A, 20);
	sim_post_n(sim, B, 20);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 10 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	for (int i = A; i <= B; i++) {
		const struct sim_node *n = &sim->node[i];

		cr_assert_eq(n->peer.peer_tag, sim->node[!i].peer.local_tag);
		cr_assert_geq(n->stats.challenges, 1, "node %d challenged nobody", i);
		/* One per peer per gap: the first packets only. */
		cr_assert_leq(n->stats.challenges, 2);
		cr_assert_eq(n->stats.retransmits, 0, "a challenge is not a loss");
	}
}

/* A header from "A" to B as an off-path attacker would write it. */
static struct rdmx_srd_hdr sim_forged(const struct sim *sim, enum rdmx_srd_type type)
{
	const struct sim_node *a = &sim->node[A];

	return (struct rdmx_srd_hdr) {
		.type = type,
		.epoch = a->peer.tx_epoch,	/* not secret: assume it known */
		.psn = a->peer.snd_nxt,
		.ack_epoch = sim->node[B].peer.tx_epoch,
		.ack = sim->node[B].peer.snd_nxt,
		.sack = ~0ULL,
		.dst_tag = sim->node[B].peer.local_tag ^ 0x5a5a,	/* a guess */
		.src_tag = 0x1234,
	};
}

/*
 * Forged packets without the receiver's tag, however plausible their
 * epoch, psn and acks: a new session's SKIP, an ack of all in flight, a
 * TOO_BIG refusal, a challenge. None changes state or completes a send;
 * each is counted; they draw one challenge per gap; the stream goes on.
 */
Test(swsrd, forged_packets_without_the_tag_change_nothing)
{
	struct sim *sim = sim_open(&sim_cfg, 200, 0x8b2);
	static const enum rdmx_srd_type types[] = {
		RDMX_SRD_DATA, RDMX_SRD_ACK, RDMX_SRD_RNR, RDMX_SRD_CHALLENGE,
	};
	struct sim_node *b = &sim->node[B];
	uint64_t challenges;
	size_t sent = 0;

	sim_post_n(sim, B, 100);
	sim_post_n(sim, A, 100);
	/* Mid-stream: B has sends in flight for a forged ack to complete. */
	sim_run(sim, SIM_T0 + 20 * US, NULL);
	cr_assert_neq(b->peer.snd_una, b->peer.snd_nxt, "nothing in flight to attack");
	challenges = b->stats.challenges;
	for (int round = 0; round < 100; round++) {
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
			struct rdmx_srd_hdr hdr = sim_forged(sim, types[i]);
			uint32_t una = b->peer.snd_una, rx_epoch = b->peer.rx_epoch;
			uint64_t peer_tag = b->peer.peer_tag;

			hdr.epoch += 1 + (uint32_t) round;	/* "a newer session" */
			if (types[i] == RDMX_SRD_DATA)
				hdr.flags = RDMX_SRD_SKIP;
			if (types[i] == RDMX_SRD_RNR) {
				hdr.flags = RDMX_SRD_TOO_BIG;
				hdr.psn = una;
			}
			if (types[i] == RDMX_SRD_CHALLENGE)
				hdr.ack_epoch = 0;
			cr_assert_not(rdmx_swsrd_recv(&b->srd, &b->peer, &hdr, 0,
						      RDMX_SRD_ROOM_BUF, sim_now));
			cr_assert_eq(b->peer.snd_una, una, "a forged ack completed sends");
			cr_assert_eq(b->peer.rx_epoch, rx_epoch, "a forged packet moved the session");
			cr_assert_eq(b->peer.peer_tag, peer_tag, "a forged packet taught a tag");
			sent++;
		}
	}
	cr_assert_eq(b->stats.rx_unauth, sent);
	cr_assert_leq(b->stats.challenges - challenges, 1,
		      "%zu forgeries in one instant drew %lu challenges", sent,
		      (unsigned long) (b->stats.challenges - challenges));
	cr_assert(sim_run_all_done(sim, SIM_T0 + 20 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	cr_assert_eq(b->stats.rnr_received, 0);
	cr_assert_eq(b->stats.stale, 0);
}

/* The engine's challenges are bounded per millisecond, whoever asks. */
Test(swsrd, unknown_senders_draw_bounded_challenges)
{
	struct sim *sim = sim_open(&sim_cfg, 1, 0x8b3);
	struct rdmx_srd_hdr hdr = sim_forged(sim, RDMX_SRD_DATA);
	struct rdmx_wire_srd out;
	size_t drawn = 0;

	for (uint64_t i = 1; i <= 10000; i++) {
		hdr.src_tag = i;
		drawn += rdmx_swsrd_challenge(&sim->node[B].srd, &hdr, 77, sim_now, &out);
	}
	cr_assert_eq(drawn, RDMX_SRD_CHALLENGE_BURST);
	sim_now += MS;
	cr_assert(rdmx_swsrd_challenge(&sim->node[B].srd, &hdr, 77, sim_now, &out),
		  "the next millisecond has room again");
	hdr.type = RDMX_SRD_CHALLENGE;
	hdr.ack_epoch = 0;
	cr_assert_not(rdmx_swsrd_challenge(&sim->node[B].srd, &hdr, 77, sim_now, &out),
		      "a challenge answered a challenge");
	cr_assert_eq(rdmx_swsrd_cookie(&sim->node[B].srd, "addr", 4),
		     rdmx_swsrd_cookie(&sim->node[B].srd, "addr", 4));
	cr_assert_neq(rdmx_swsrd_cookie(&sim->node[B].srd, "addr", 4),
		      rdmx_swsrd_cookie(&sim->node[A].srd, "addr", 4),
		      "two engines offer one address the same tag");
}
