/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: swsrd's congestion window (rdmx_swsrd_cc.h) against a
 * model path: it carries cap packets per least round trip (RTT_NS), and
 * what is sent beyond that waits in its queue, so a round trip lasts
 * RTT_NS * window / cap once the window is larger than cap.
 */
#include "rdmx_test.h"
#include "rdmx_swsrd_cc.h"

#define RTT_NS		20000ULL
#define LIMIT		1024

struct path {
	struct rdmx_srd_cc	cc;
	uint64_t		now;
	uint32_t		cap;	/* packets per RTT_NS */
};

/* One round trip of a sender that always has data: a window acknowledged. */
static void round_trip(struct path *p)
{
	uint32_t wnd = rdmx_srd_cc_window(&p->cc);
	uint64_t rtt = RDMX_MAX(RTT_NS, RTT_NS * wnd / p->cap);

	/* Acks come in fours, spread over the round trip. */
	for (int i = 1; i <= 4; i++) {
		uint64_t at = p->now + rtt * i / 4;

		rdmx_srd_cc_rtt(&p->cc, rtt, at);
		rdmx_srd_cc_acked(&p->cc, wnd / 4, rtt, LIMIT, at);
	}
	p->now += rtt;
}

static void path_open(struct path *p, uint32_t cap)
{
	p->now = 1000000000ULL;
	p->cap = cap;
	rdmx_srd_cc_init(&p->cc, p->now);
}

/* A path of cap after rounds round trips of a sender with data. */
static void path_run(struct path *p, uint32_t cap, int rounds)
{
	path_open(p, cap);
	for (int i = 0; i < rounds; i++)
		round_trip(p);
}

/* Slow start fills the path in a few round trips, and the queue stays short. */
Test(swsrd_cc, fills_the_path_and_keeps_its_queue_short)
{
	struct path p;
	int rounds = 0;

	path_open(&p, 400);
	while (rdmx_srd_cc_window(&p.cc) < p.cap) {
		cr_assert_lt(++rounds, 8, "window %u after %d round trips",
			     rdmx_srd_cc_window(&p.cc), rounds);
		round_trip(&p);
	}
	for (int i = 0; i < 100; i++)
		round_trip(&p);
	cr_assert_geq(rdmx_srd_cc_window(&p.cc), p.cap);
	cr_assert_leq(rdmx_srd_cc_window(&p.cc), 2 * p.cap + 3 * RDMX_SRD_QUANTUM,
		      "window %u on a path of %u", rdmx_srd_cc_window(&p.cc), p.cap);
}

/*
 * Past twice the product, the window allows RDMX_SRD_ALLOW_BYTES of the
 * largest datagram sent, between three and eight quanta: a path of MTU
 * 1,500 fills eight segmented sends; one of MTU 9,000 keeps three
 * quanta; a smaller datagram later changes nothing.
 */
Test(swsrd_cc, the_allowance_is_bytes_within_three_to_eight_quanta)
{
	static const struct {
		size_t	 bytes;
		uint32_t allow;
	} dgrams[] = {
		{ 0, 3 * RDMX_SRD_QUANTUM },
		{ 64, 8 * RDMX_SRD_QUANTUM },
		{ 1472, 356 },
		{ 8972, 3 * RDMX_SRD_QUANTUM },
	};
	struct path p;

	for (size_t i = 0; i < RDMX_ARRAY_SIZE(dgrams); i++) {
		path_open(&p, 100);
		if (dgrams[i].bytes) {
			rdmx_srd_cc_datagram(&p.cc, dgrams[i].bytes);
			rdmx_srd_cc_datagram(&p.cc, dgrams[i].bytes / 2);
		}
		for (int r = 0; r < 100; r++)
			round_trip(&p);
		cr_assert_eq(rdmx_srd_cc_window(&p.cc), 2 * p.cap + dgrams[i].allow,
			     "datagrams of %zu bytes: window %u on a path of %u",
			     dgrams[i].bytes, rdmx_srd_cc_window(&p.cc), p.cap);
	}
}

/* A window never exceeds what the receiver takes. */
Test(swsrd_cc, stays_within_the_receive_window)
{
	struct path p;

	path_run(&p, 4000, 50);
	cr_assert_eq(rdmx_srd_cc_window(&p.cc), LIMIT);
}

/*
 * A random loss (the path has room) keeps the path full, however often it
 * comes; the old halving to two packets let a window that one merged
 * read holds be lost whole.
 */
Test(swsrd_cc, random_loss_keeps_the_path_full)
{
	struct path p;

	path_run(&p, 400, 20);
	for (int i = 0; i < 20; i++) {
		rdmx_srd_cc_loss(&p.cc, false);
		cr_assert_geq(rdmx_srd_cc_window(&p.cc), p.cap,
			      "window %u after loss %d", rdmx_srd_cc_window(&p.cc), i);
		round_trip(&p);
	}
	/* A small path keeps a quantum: one merged read is not the window. */
	path_run(&p, 4, 20);
	for (int i = 0; i < 20; i++)
		rdmx_srd_cc_loss(&p.cc, false);
	cr_assert_geq(rdmx_srd_cc_window(&p.cc), RDMX_SRD_QUANTUM);
}

/*
 * After a loss event the window grows back half the way to where the
 * loss found it per round trip, a quantum at most (a path that drops
 * trains of packets every millisecond or two kept a window of about 100
 * packets where 400 filled it, growing one packet a round trip); past
 * that point, one packet a round trip. Silence forgets the point.
 */
Test(swsrd_cc, grows_back_to_where_a_loss_found_it)
{
	struct path p;
	uint32_t full, cut;

	path_run(&p, 100, 30);
	full = rdmx_srd_cc_window(&p.cc);
	rdmx_srd_cc_loss(&p.cc, false);
	cut = rdmx_srd_cc_window(&p.cc);
	cr_assert_lt(cut, full * 3 / 4);
	for (int i = 0; i < 3; i++)
		round_trip(&p);
	cr_log_info("a loss: window %u -> %u, %u 3 round trips later\n", full, cut,
		    rdmx_srd_cc_window(&p.cc));
	cr_assert_geq(rdmx_srd_cc_window(&p.cc), full * 8 / 10);
	for (int i = 0; i < 7; i++)
		round_trip(&p);
	cr_assert_geq(rdmx_srd_cc_window(&p.cc), full * 98 / 100);

	rdmx_srd_cc_loss(&p.cc, true);
	rdmx_srd_cc_loss(&p.cc, true);
	cut = rdmx_srd_cc_window(&p.cc);
	for (int i = 0; i < 8; i++)
		round_trip(&p);
	cr_assert_leq(rdmx_srd_cc_window(&p.cc), cut + 8 + 1,
		      "after silence: window %u -> %u in 8 round trips", cut,
		      rdmx_srd_cc_window(&p.cc));
}

/*
 * Timeouts (nothing got through: many senders to one receiver) halve the
 * window down to its least, whatever the product was.
 */
Test(swsrd_cc, timeouts_back_off_to_the_least)
{
	struct path p;

	path_run(&p, 400, 20);
	for (int i = 0; i < 12; i++)
		rdmx_srd_cc_loss(&p.cc, true);
	cr_assert_eq(p.cc.cwnd_x16, RDMX_SRD_CWND_MIN);
}

/*
 * A path whose share shrinks (another flow came): the window follows the
 * product down, and losses at its full queue halve it toward it.
 */
Test(swsrd_cc, follows_a_shrinking_path)
{
	struct path p;
	int rounds = 0;

	path_run(&p, 800, 30);
	p.cap = 100;
	while (rdmx_srd_cc_window(&p.cc) > 2 * p.cap + 3 * RDMX_SRD_QUANTUM + 16) {
		cr_assert_lt(++rounds, 200, "window %u after %d round trips",
			     rdmx_srd_cc_window(&p.cc), rounds);
		if (rounds % 4 == 0)
			rdmx_srd_cc_loss(&p.cc, false);
		round_trip(&p);
	}
	cr_log_info("window %u on a path of %u after %d round trips\n",
		    rdmx_srd_cc_window(&p.cc), p.cap, rounds);
}
