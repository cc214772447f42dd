/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * When a send completes, in the rdm core over the fake EFA device, with
 * the fake holding packets back to show what a completion waits for
 * (fi_cq(3) completion levels, docs/protocol.md): FI_DELIVERY_COMPLETE
 * only once every byte is in the receive (or an eager or medium message
 * is buffered unexpected); FI_TRANSMIT_COMPLETE, the default, once the
 * peer's device has every packet, and for a long message only once a
 * receive took it: after the read for long-read, after the last DATA by
 * credit; FI_INJECT_COMPLETE at posting, the bytes copied.
 */
#include "rdmx_test_rdm.h"

TestSuite(rdm_complete);

static const struct rdmx_test_rdm_proto rdm_protos[] = {
	{ 0, true },		/* eager */
	{ 5000, true },		/* eager */
	{ 40000, true },	/* medium */
	{ 1 << 20, true },	/* long-read */
	{ 1 << 20, false },	/* long, by credit */
};

/*
 * A send of p's size at level FI_DELIVERY_COMPLETE, its packets held at
 * first: it completes only after they arrived and, unless it is an
 * eager or medium message buffered unexpected, only once every byte is
 * in the receive. unexpected: no receive until the sender completed or,
 * for a long message, could not complete without one.
 */
static void rdm_delivery(struct rdmx_test_rdm *t, const struct rdmx_test_rdm_proto *p,
			 bool unexpected, uint32_t seed)
{
	struct rdmx_test_pair *tp = &t->tp;
	uint8_t *tx = rdmx_test_rdm_tx_buf(p->len, seed), *rx = rdmx_test_rdm_rx_buf(p->len);
	bool is_long = p->len > t->medium_max;
	struct fi_cq_tagged_entry comp;

	g_rdmx_params.long_read = p->read;
	if (!unexpected)
		rdmx_test_rdm_recv(tp, rx, p->len, FI_ADDR_UNSPEC, true, 1, 0);
	fake_ibv_hold(t->qpn0);
	rdmx_test_rdm_send(tp, 0, tx, p->len, 1, FI_TAGGED | FI_DELIVERY_COMPLETE, tx);
	rdmx_test_rdm_quiet(tp, 0, "a send completed before its packets arrived");
	fake_ibv_release(0);
	if (unexpected && is_long) {
		rdmx_test_rdm_quiet(tp, 0, "a long send was delivered before any receive");
		rdmx_test_rdm_recv(tp, rx, p->len, FI_ADDR_UNSPEC, true, 1, 0);
	}
	rdmx_test_rdm_wait_ok(tp, 0, tx, FI_SEND | FI_TAGGED);
	if (unexpected && !is_long)
		rdmx_test_rdm_recv(tp, rx, p->len, FI_ADDR_UNSPEC, true, 1, 0);
	else
		rdmx_test_rdm_expect(rx, p->len, p->len + RDMX_TEST_RDM_GUARD, seed,
				     "the receive when the send completed at delivery");
	comp = rdmx_test_rdm_wait_ok(tp, 1, rx, FI_RECV | FI_TAGGED);
	cr_assert_eq(comp.len, p->len);
	rdmx_test_rdm_expect(rx, p->len, p->len + RDMX_TEST_RDM_GUARD, seed, "received");
	free(tx);
	free(rx);
}

Test(rdm_complete, delivery_complete_waits_for_the_bytes)
{
	struct rdmx_test_rdm t;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	for (size_t i = 0; i < RDMX_ARRAY_SIZE(rdm_protos); i++) {
		rdm_delivery(&t, &rdm_protos[i], false, (uint32_t) (2 * i + 1));
		rdm_delivery(&t, &rdm_protos[i], true, (uint32_t) (2 * i + 2));
	}
	rdmx_test_rdm_close(&t);
}

/*
 * A long message into a shorter receive, at FI_DELIVERY_COMPLETE: the
 * receive ends truncated (FI_ETRUNC) and the send, whose bytes the
 * receive wanted all arrived, succeeds after it.
 */
Test(rdm_complete, delivery_complete_of_a_truncated_long_message)
{
	struct rdmx_test_rdm t;
	size_t len = 1 << 20, cap = 100000;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	for (int read = 0; read < 2; read++) {
		uint8_t *tx = rdmx_test_rdm_tx_buf(len, (uint32_t) read + 7);
		uint8_t *rx = rdmx_test_rdm_rx_buf(cap);
		struct fi_cq_err_entry err;

		g_rdmx_params.long_read = (size_t) read;
		rdmx_test_rdm_recv(&t.tp, rx, cap, FI_ADDR_UNSPEC, true, 2, 0);
		rdmx_test_rdm_send(&t.tp, 0, tx, len, 2, FI_TAGGED | FI_DELIVERY_COMPLETE, tx);
		err = rdmx_test_rdm_wait_err(&t.tp, 1, rx, FI_ETRUNC);
		cr_assert_eq(err.len, cap);
		cr_assert_eq(err.olen, len - cap);
		rdmx_test_rdm_expect(rx, cap, cap + RDMX_TEST_RDM_GUARD, (uint32_t) read + 7,
				     "truncated long message");
		rdmx_test_rdm_wait_ok(&t.tp, 0, tx, FI_SEND | FI_TAGGED);
		free(tx);
		free(rx);
	}
	rdmx_test_rdm_close(&t);
}

/*
 * FI_TRANSMIT_COMPLETE (flags: that flag, or none, the default): an
 * eager or medium send completes once the peer's device has every
 * packet, with no receive posted; never while a packet is held.
 */
Test(rdm_complete, transmit_complete_needs_the_packets_not_a_receive)
{
	static const uint64_t levels[] = { 0, FI_TRANSMIT_COMPLETE };
	struct rdmx_test_rdm t;
	uint32_t seed = 1;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	for (size_t l = 0; l < RDMX_ARRAY_SIZE(levels); l++) {
		for (size_t i = 0; rdm_protos[i].len <= t.medium_max; i++) {
			size_t len = rdm_protos[i].len;
			uint8_t *tx = rdmx_test_rdm_tx_buf(len, ++seed);
			uint8_t *rx = rdmx_test_rdm_rx_buf(len);

			fake_ibv_hold(t.qpn0);
			rdmx_test_rdm_send(&t.tp, 0, tx, len, 3, FI_TAGGED | levels[l], tx);
			rdmx_test_rdm_quiet(&t.tp, 0, "a send completed with its packets held");
			fake_ibv_release(0);
			rdmx_test_rdm_wait_ok(&t.tp, 0, tx, FI_SEND | FI_TAGGED);
			rdmx_test_rdm_recv(&t.tp, rx, len, FI_ADDR_UNSPEC, true, 3, 0);
			rdmx_test_rdm_wait_ok(&t.tp, 1, rx, FI_RECV | FI_TAGGED);
			rdmx_test_rdm_expect(rx, len, len + RDMX_TEST_RDM_GUARD, seed, "received");
			free(tx);
			free(rx);
		}
	}
	rdmx_test_rdm_close(&t);
}

/*
 * A long send by long-read, at FI_TRANSMIT_COMPLETE: its RTS waits
 * unexpected and the send does not complete; once a receive takes it,
 * the receiver reads the bytes and only then does the send complete:
 * they are in the receive by then. What was registered for the read is
 * released when both are done.
 */
Test(rdm_complete, long_read_send_completes_after_the_read)
{
	struct rdmx_test_rdm t;
	size_t len = (3 << 20) + 1, live;
	uint8_t *tx = rdmx_test_rdm_tx_buf(len, 5), *rx = rdmx_test_rdm_rx_buf(len);
	uint64_t unexp, reads;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	unexp = rdmx_ep(t.tp.ep[1])->stats.rx_unexpected;
	reads = rdmx_ep(t.tp.ep[1])->stats.rx_long_reads;
	live = fake_ibv_live();
	rdmx_test_rdm_send(&t.tp, 0, tx, len, 4, FI_TAGGED | FI_TRANSMIT_COMPLETE, tx);
	rdmx_test_rdm_wait_unexpected(&t.tp, unexp + 1);
	rdmx_test_rdm_quiet(&t.tp, 0, "a long send completed before a receive took it");
	cr_assert_gt(fake_ibv_live(), live, "the sender exposed nothing for reading");
	rdmx_test_rdm_recv(&t.tp, rx, len, FI_ADDR_UNSPEC, true, 4, 0);
	rdmx_test_rdm_wait_ok(&t.tp, 0, tx, FI_SEND | FI_TAGGED);
	rdmx_test_rdm_expect(rx, len, len + RDMX_TEST_RDM_GUARD, 5,
			     "the receive when the long-read send completed");
	rdmx_test_rdm_wait_ok(&t.tp, 1, rx, FI_RECV | FI_TAGGED);
	cr_assert_eq(rdmx_ep(t.tp.ep[1])->stats.rx_long_reads, reads + 1);
	cr_assert_eq(fake_ibv_live(), live, "registrations of the read outlive it");
	rdmx_test_rdm_close(&t);
	free(tx);
	free(rx);
}

/*
 * A long send by credit, at FI_TRANSMIT_COMPLETE: no completion while
 * its RTS waits unexpected, nor while its DATA, granted, are held; it
 * completes once they all reached the peer's device.
 */
Test(rdm_complete, long_send_by_credit_completes_after_its_last_data)
{
	struct rdmx_test_rdm t;
	size_t len = (1 << 20) + 9;
	uint8_t *tx = rdmx_test_rdm_tx_buf(len, 6), *rx = rdmx_test_rdm_rx_buf(len);
	uint64_t unexp;

	g_rdmx_params.long_read = 0;
	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	unexp = rdmx_ep(t.tp.ep[1])->stats.rx_unexpected;
	rdmx_test_rdm_send(&t.tp, 0, tx, len, 5, FI_TAGGED | FI_TRANSMIT_COMPLETE, tx);
	rdmx_test_rdm_wait_unexpected(&t.tp, unexp + 1);
	rdmx_test_rdm_quiet(&t.tp, 0, "a long send completed before a receive took it");
	/* The receive grants credit at once; the DATA it draws are held. */
	rdmx_test_rdm_recv(&t.tp, rx, len, FI_ADDR_UNSPEC, true, 5, 0);
	fake_ibv_hold(t.qpn0);
	(void) fi_cq_read(t.tp.cq[0], NULL, 0);
	cr_assert_eq(fake_ibv_held(), (len + t.data_seg - 1) / t.data_seg);
	rdmx_test_rdm_quiet(&t.tp, 0, "a long send completed with its DATA held");
	fake_ibv_release(0);
	rdmx_test_rdm_wait_both(&t.tp, tx, rx, len, 6, FI_TAGGED);
	rdmx_test_rdm_close(&t);
	free(tx);
	free(rx);
}

/*
 * FI_INJECT_COMPLETE on a message up to inject_size: the send completes
 * at posting, its packet still held, and the buffer is the
 * application's again: bytes written into it afterwards never arrive.
 */
Test(rdm_complete, inject_complete_copies_at_posting)
{
	struct rdmx_test_rdm t;
	size_t len;
	uint8_t *tx, *rx;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	len = t.tp.info->tx_attr->inject_size;
	cr_assert_gt(len, 0);
	tx = rdmx_test_rdm_tx_buf(len, 8);
	rx = rdmx_test_rdm_rx_buf(len);
	rdmx_test_rdm_recv(&t.tp, rx, len, FI_ADDR_UNSPEC, true, 6, 0);
	fake_ibv_hold(t.qpn0);
	rdmx_test_rdm_send(&t.tp, 0, tx, len, 6, FI_TAGGED | FI_INJECT_COMPLETE, tx);
	cr_assert_eq(fake_ibv_held(), 1);
	rdmx_test_rdm_wait_ok(&t.tp, 0, tx, FI_SEND | FI_TAGGED);
	memset(tx, 0, len);
	fake_ibv_release(0);
	rdmx_test_rdm_wait_ok(&t.tp, 1, rx, FI_RECV | FI_TAGGED);
	rdmx_test_rdm_expect(rx, len, len + RDMX_TEST_RDM_GUARD, 8,
			     "a message changed after its inject completion");
	rdmx_test_rdm_close(&t);
	free(tx);
	free(rx);
}
