/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The acks swsrd sends over the udp device. What a poll queues leaves
 * together as the poll ends, so an ack due at once (every 16 packets, a
 * gap) waits for that end: a peer gets one ack a poll, the latest word
 * on what came, where each would have left in the same batch.
 */
#include "rdmx_test_udp.h"

#define SENDS		240

static struct rdmx_test_udp_pair up;

static void setup(void)
{
	rdmx_test_udp_pair_open(&up, 1);
}

static void teardown(void)
{
	rdmx_test_udp_pair_close(&up);
}

TestSuite(dev_udp_acks, .init = setup, .fini = teardown);

Test(dev_udp_acks, a_poll_that_takes_many_packets_sends_one_ack)
{
	size_t most = 0;

	rdmx_test_udp_post(&up, SENDS);
	for (int polls = 0; up.received < SENDS && polls < 100000; polls++) {
		size_t before = up.received;
		uint64_t acks = up.b->stats.acks_sent;

		rdmx_test_udp_poll_a(&up);
		rdmx_test_udp_poll_b(&up, RDMX_TEST_UDP_BUFS);
		most = RDMX_MAX(most, up.received - before);
		cr_assert_leq(up.b->stats.acks_sent - acks, 1,
			      "one poll taking %zu packets sent %lu acks", up.received - before,
			      (unsigned long) (up.b->stats.acks_sent - acks));
	}
	cr_assert_eq(up.received, SENDS);
	cr_assert_geq(most, 32, "no poll took 32 packets (at most %zu)", most);
	rdmx_test_udp_poll_until(&up, SENDS, SENDS);
}
