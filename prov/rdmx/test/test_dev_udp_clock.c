/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The time the udp device hands swsrd with each packet. A poll may read
 * several batches; each batch must carry the time it was read, not the
 * time the poll began: swsrd measures round trips with it, and a send
 * made as one batch's acks open the window may be acknowledged in the
 * next batch of the same poll.
 */
#include "rdmx_test_udp.h"
#include "rdmx_clock.h"
#include "rdmx_dgram.h"

/* Enough for a poll that finds them all to read them in several batches. */
#define SENDS		13

static struct rdmx_test_udp_pair up;
static rdmx_clock_fn real_clock;
static uint64_t clock_last;	/* the last time handed out */
static uint64_t clock_first;	/* the first since clock_calls was zeroed */
static unsigned clock_calls;

/* The real time, but never the same twice: a poll's reads differ. */
static uint64_t distinct_clock(void)
{
	uint64_t t = RDMX_MAX(real_clock(), clock_last + 1);

	if (!clock_calls++)
		clock_first = t;
	return clock_last = t;
}

static void setup(void)
{
	rdmx_test_udp_pair_open(&up, 1);
	real_clock = g_rdmx_clock;
	clock_last = 0;
	rdmx_clock_set(distinct_clock);
}

static void teardown(void)
{
	rdmx_test_udp_pair_close(&up);
	rdmx_clock_set(NULL);
}

TestSuite(dev_udp_clock, .init = setup, .fini = teardown);

/*
 * Sends SENDS packets from A, polls B until it has them, and checks each
 * poll that read two batches or more; true when one did.
 */
static bool round_checked(void)
{
	struct rdmx_swsrd_peer *from_a =
		&rdmx_container_of(up.b_to_a, struct rdmx_dgram_ah, ah)->srd;
	size_t sent = up.sent_ok + SENDS, want = up.received + SENDS;
	bool seen = false;

	rdmx_test_udp_post(&up, SENDS);
	rdmx_test_udp_poll_a(&up);
	for (int polls = 0; up.received < want && polls < 100000; polls++) {
		uint64_t calls = up.b->stats.rx_calls, empty = up.b->stats.rx_empty;

		clock_calls = 0;
		rdmx_test_udp_poll_b(&up, RDMX_TEST_UDP_BUFS);
		if (up.b->stats.rx_calls - calls - (up.b->stats.rx_empty - empty) < 2)
			continue;
		seen = true;
		cr_assert_gt(from_a->ack_last, clock_first,
			     "a packet of the poll's last read was handed the time the poll began");
	}
	cr_assert_eq(up.received, want);
	/* Every send acknowledged: the next round starts with no ack owed. */
	rdmx_test_udp_poll_until(&up, sent, want);
	return seen;
}

Test(dev_udp_clock, a_later_batch_of_one_poll_is_handed_a_later_time)
{
	bool seen = false;

	/* The handshake is done and every packet acknowledged. */
	rdmx_test_udp_send_all(&up, 8);
	for (int round = 0; round < 20 && !seen; round++)
		seen = round_checked();
	cr_assert(seen, "no poll read two batches: the test proved nothing");
}
