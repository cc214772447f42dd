/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The rdm core over the fake EFA device, with the fake holding the
 * sender's packets back and delivering them in another order, as SRD
 * may: a medium message's segments and a long message's DATA reassembled
 * in any order; the packets of several messages of one peer interleaved;
 * send-after-send order (FI_ORDER_SAS) of many messages of mixed sizes,
 * where a receive takes the message posted first, whichever protocol is
 * quicker; posted and unexpected.
 */
#include "rdmx_test_rdm.h"

TestSuite(rdm_order);

/*
 * Posts receive m (cap bytes), tagged for any tag or untagged, from
 * anyone: only the order of arrival decides which message it takes.
 */
static void rdm_recv_any(struct rdmx_test_pair *tp, struct rdmx_test_rdm_msg *m, size_t cap,
			 bool tagged)
{
	rdmx_test_rdm_recv(tp, m->rx, cap, FI_ADDR_UNSPEC, tagged, 0, ~(uint64_t) 0);
}

/*
 * Waits for the n receives of m (in any order of completion): receive i,
 * posted i-th, must hold message i, sent i-th: its length, tag and every
 * byte. Then the n sends must complete.
 */
static void rdm_msgs_check(struct rdmx_test_pair *tp, struct rdmx_test_rdm_msg *m, size_t n,
			   size_t cap, bool tagged)
{
	uint64_t kind = tagged ? FI_TAGGED : FI_MSG;
	size_t got[64] = { 0 };

	cr_assert_leq(n, RDMX_ARRAY_SIZE(got));
	for (size_t k = 0; k < 2 * n; k++) {
		int who = k < n ? 1 : 0;
		struct fi_cq_tagged_entry comp;
		struct fi_cq_err_entry err;
		size_t i;

		cr_assert_eq(rdmx_test_pair_wait(tp, who, &comp, &err), 0,
			     "endpoint %d: %p failed", who, err.op_context);
		for (i = 0; i < n && comp.op_context != (who ? m[i].rx : m[i].tx); i++)
			;
		cr_assert_lt(i, n, "endpoint %d completed %p, none of its", who,
			     comp.op_context);
		cr_assert_eq(got[i]++, who ? 0 : 1, "message %zu completed twice", i);
		cr_assert_eq(comp.flags, (who ? FI_RECV : FI_SEND) | kind);
		if (!who)
			continue;
		cr_assert_eq(comp.len, m[i].len, "receive %zu took %zu bytes, not message "
			     "%zu's %zu: a later message overtook it", i, comp.len, i, m[i].len);
		if (tagged)
			cr_assert_eq(comp.tag, m[i].tag, "receive %zu took the message "
				     "tagged %#llx", i, (unsigned long long) comp.tag);
		rdmx_test_rdm_expect(m[i].rx, m[i].len, cap + RDMX_TEST_RDM_GUARD,
				     m[i].seed, "a message received in order");
	}
}

/*
 * Sends the n messages of m while the fake holds their packets, delivers
 * them in the order seed gives, and checks that receive i (cap bytes)
 * took message i. The first `posted` receives are posted before the
 * messages are sent, the others once the rest arrived unexpected.
 */
static void rdm_reordered(struct rdmx_test_rdm *t, struct rdmx_test_rdm_msg *m, size_t n,
			  size_t cap, bool tagged, size_t posted, uint32_t seed)
{
	struct rdmx_test_pair *tp = &t->tp;
	uint64_t unexp = rdmx_ep(tp->ep[1])->stats.rx_unexpected;
	size_t pkts = 0;

	for (size_t i = 0; i < posted; i++)
		rdm_recv_any(tp, &m[i], cap, tagged);
	fake_ibv_hold(t->qpn0);
	for (size_t i = 0; i < n; i++) {
		rdmx_test_rdm_send(tp, 0, m[i].tx, m[i].len, m[i].tag,
				   tagged ? FI_TAGGED : 0, m[i].tx);
		pkts += rdmx_test_rdm_pkts(t, m[i].len);
	}
	cr_assert_eq(fake_ibv_held(), pkts);
	fake_ibv_release(seed);
	rdmx_test_rdm_wait_unexpected(tp, unexp + n - posted);
	for (size_t i = posted; i < n; i++)
		rdm_recv_any(tp, &m[i], cap, tagged);
	rdm_msgs_check(tp, m, n, cap, tagged);
}

/* A medium message's segments, last first and shuffled, into a posted or no receive. */
Test(rdm_order, medium_segments_reassemble_in_any_order)
{
	struct rdmx_test_rdm t;
	struct rdmx_test_rdm_msg m;
	size_t len;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	len = t.medium_max - 3;
	cr_assert_geq(rdmx_test_rdm_pkts(&t, len), 4, "too few segments to reorder");
	for (uint32_t seed = 0; seed < 8; seed++) {
		rdmx_test_rdm_msgs_make(&m, &len, 1, 0x100, seed, len);
		rdm_reordered(&t, &m, 1, len, true, seed & 1, seed);	/* odd: posted */
		rdmx_test_rdm_msgs_free(&m, 1);
	}
	rdmx_test_rdm_close(&t);
}

/*
 * A long message by credit: once the CTS arrived, its DATA packets are
 * held and delivered last first or shuffled; each lands at its offset.
 */
static void rdm_long_data_reordered(struct rdmx_test_rdm *t, size_t len, bool unexpected,
				    uint32_t seed)
{
	struct rdmx_test_pair *tp = &t->tp;
	uint8_t *tx = rdmx_test_rdm_tx_buf(len, seed), *rx = rdmx_test_rdm_rx_buf(len);
	uint64_t unexp = rdmx_ep(tp->ep[1])->stats.rx_unexpected;

	if (!unexpected)
		rdmx_test_rdm_recv(tp, rx, len, FI_ADDR_UNSPEC, true, 7, 0);
	rdmx_test_rdm_send(tp, 0, tx, len, 7, FI_TAGGED, tx);
	if (unexpected) {
		rdmx_test_rdm_wait_unexpected(tp, unexp + 1);
		rdmx_test_rdm_recv(tp, rx, len, FI_ADDR_UNSPEC, true, 7, 0);
	} else {
		/* The RTS arrives: the receive takes it and grants credit. */
		(void) fi_cq_read(tp->cq[1], NULL, 0);
	}
	fake_ibv_hold(t->qpn0);
	(void) fi_cq_read(tp->cq[0], NULL, 0);
	cr_assert_eq(fake_ibv_held(), (len + t->data_seg - 1) / t->data_seg,
		     "not every DATA packet went out at the CTS");
	fake_ibv_release(seed);
	rdmx_test_rdm_wait_both(tp, tx, rx, len, seed, FI_TAGGED);
	free(tx);
	free(rx);
}

Test(rdm_order, long_data_reassembles_in_any_order)
{
	struct rdmx_test_rdm t;

	g_rdmx_params.long_read = 0;
	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	for (uint32_t seed = 0; seed < 4; seed++)
		rdm_long_data_reordered(&t, (1 << 20) + 123 * seed, seed & 1, seed);
	rdmx_test_rdm_close(&t);
}

/*
 * A long message, then a small one with the same tag: however their
 * packets arrive, the first receive takes the long one. The small one
 * arrives first here and must wait for its turn.
 */
Test(rdm_order, a_small_message_does_not_overtake_a_long_one)
{
	struct rdmx_test_rdm t;
	struct rdmx_test_rdm_msg m[2];
	size_t len[2] = { 300000, 5 };

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	for (int read = 0; read < 2; read++) {
		g_rdmx_params.long_read = (size_t) read;
		for (int unexpected = 0; unexpected < 2; unexpected++) {
			rdmx_test_rdm_msgs_make(m, len, 2, 0x200, 10, len[0]);
			m[1].tag = m[0].tag;
			rdm_reordered(&t, m, 2, len[0], true, unexpected ? 0 : 2, 0);
			rdmx_test_rdm_msgs_free(m, 2);
		}
	}
	rdmx_test_rdm_close(&t);
}

/*
 * Two medium messages, an eager one, a long one and an empty one, their
 * packets interleaved: each lands whole in the receive of its rank.
 */
Test(rdm_order, interleaved_messages_of_one_peer)
{
	struct rdmx_test_rdm t;
	struct rdmx_test_rdm_msg m[5];
	size_t len[5], cap;
	uint64_t reordered;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	len[0] = t.medium_max;
	len[1] = 3 * t.medium_seg - 1;
	len[2] = 100;
	len[3] = 400000;
	len[4] = 0;
	cap = len[3];
	reordered = rdmx_ep(t.tp.ep[1])->stats.rx_reordered;
	for (uint32_t seed = 1; seed <= 6; seed++) {
		g_rdmx_params.long_read = (seed >> 1) & 1;
		rdmx_test_rdm_msgs_make(m, len, 5, 0x300, seed * 10, cap);
		rdm_reordered(&t, m, 5, cap, seed & 4, (seed & 1) * 5, seed);
		rdmx_test_rdm_msgs_free(m, 5);
	}
	cr_assert_gt(rdmx_ep(t.tp.ep[1])->stats.rx_reordered, reordered,
		     "no packet of a later message came first: nothing was reordered");
	rdmx_test_rdm_close(&t);
}

/*
 * Many messages of every protocol in flight at once, delivered shuffled,
 * tagged (the receives take any tag) and untagged: receive i takes
 * message i. Half the receives are posted first; the other messages
 * wait unexpected for theirs.
 */
Test(rdm_order, many_messages_of_mixed_sizes_keep_send_order)
{
	struct rdmx_test_rdm t;
	struct rdmx_test_rdm_msg m[48];
	size_t len[48], n = RDMX_ARRAY_SIZE(m), cap = 200000;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	for (size_t i = 0; i < n; i++) {
		const size_t kinds[] = { 200000, 1, 30000, 0, t.eager_max, t.eager_max + 1,
					 t.medium_max + 1 };

		len[i] = kinds[i % RDMX_ARRAY_SIZE(kinds)];
	}
	for (uint32_t run = 0; run < 4; run++) {
		g_rdmx_params.long_read = run & 1;
		rdmx_test_rdm_msgs_make(m, len, n, 0x400, 500 + 100 * run, cap);
		rdm_reordered(&t, m, n, cap, run & 2, n / 2, run + 11);
		rdmx_test_rdm_msgs_free(m, n);
	}
	rdmx_test_rdm_close(&t);
}
