/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The rdm core over the fake EFA device, message by message: fi_send and
 * fi_tsend at 0 and 1 byte, on both sides of every protocol change
 * (eager, medium segments, long) and at several MiB, by long-read and by
 * credit (CTS/DATA); messages that arrive before their receive, at each
 * protocol; truncation into a shorter receive (FI_ETRUNC, len and olen
 * as fi_cq(3) defines them), posted and unexpected. Every byte is
 * checked, and so are the bytes after each receive buffer.
 */
#include "rdmx_test_rdm.h"

TestSuite(rdm_sizes);

/* The sizes around every protocol change between t's endpoints, and MiBs. */
static size_t rdm_sizes(const struct rdmx_test_rdm *t, size_t *sizes)
{
	size_t n = 0;

	sizes[n++] = 0;
	sizes[n++] = 1;
	sizes[n++] = t->eager_max - 1;
	sizes[n++] = t->eager_max;
	sizes[n++] = t->eager_max + 1;		/* two medium segments */
	sizes[n++] = 2 * t->medium_seg;
	sizes[n++] = 2 * t->medium_seg + 1;	/* a third, of one byte */
	sizes[n++] = t->medium_max - 1;
	sizes[n++] = t->medium_max;
	sizes[n++] = t->medium_max + 1;		/* long */
	sizes[n++] = (3 << 20) + 5;
	return n;
}

/* How many of the n sizes are long messages. */
static size_t rdm_sizes_long(const struct rdmx_test_rdm *t, const size_t *sizes, size_t n)
{
	size_t longs = 0;

	for (size_t i = 0; i < n; i++)
		longs += sizes[i] > t->medium_max;
	return longs;
}

/*
 * Posts len bytes at tx to endpoint 1: fi_tsend or fi_send, or with CQ
 * data fi_tsenddata or fi_senddata.
 */
static void rdm_sizes_send(struct rdmx_test_pair *tp, uint8_t *tx, size_t len, bool tagged,
			   uint64_t tag, bool with_data, uint64_t data)
{
	fi_addr_t to = tp->peer[0];
	ssize_t ret;

	if (tagged)
		ret = with_data ? fi_tsenddata(tp->ep[0], tx, len, NULL, data, to, tag, tx) :
				  fi_tsend(tp->ep[0], tx, len, NULL, to, tag, tx);
	else
		ret = with_data ? fi_senddata(tp->ep[0], tx, len, NULL, data, to, tx) :
				  fi_send(tp->ep[0], tx, len, NULL, to, tx);
	cr_assert_eq(ret, 0, "send of %zu bytes: %s", len, fi_strerror((int) -ret));
}

/*
 * Sends len bytes, tagged or not, to a receive posted for them or, when
 * unexpected, posted once the message (or its RTS) arrived; unexpected
 * messages carry CQ data too. The packets posted at once are held,
 * counted (the protocol of len decides how many) and delivered last
 * first; then both completions and every byte are checked.
 */
static void rdm_sizes_one(struct rdmx_test_rdm *t, size_t len, bool tagged, bool unexpected,
			  uint32_t seed)
{
	struct rdmx_test_pair *tp = &t->tp;
	uint8_t *tx = rdmx_test_rdm_tx_buf(len, seed), *rx = rdmx_test_rdm_rx_buf(len);
	uint64_t kind = tagged ? FI_TAGGED : FI_MSG, tag = 0x5100 + seed, data = ~(uint64_t) seed;
	uint64_t unexp = rdmx_ep(tp->ep[1])->stats.rx_unexpected;
	struct fi_cq_tagged_entry comp;

	if (!unexpected)
		rdmx_test_rdm_recv(tp, rx, len, FI_ADDR_UNSPEC, tagged, tag, 0);
	fake_ibv_hold(t->qpn0);
	rdm_sizes_send(tp, tx, len, tagged, tag, unexpected, data);
	cr_assert_eq(fake_ibv_held(), rdmx_test_rdm_pkts(t, len),
		     "%zu bytes went out in %zu packets, not %zu", len, fake_ibv_held(),
		     rdmx_test_rdm_pkts(t, len));
	fake_ibv_release(0);
	if (unexpected) {
		rdmx_test_rdm_wait_unexpected(tp, unexp + 1);
		rdmx_test_rdm_recv(tp, rx, len, FI_ADDR_UNSPEC, tagged, tag, 0);
	}
	comp = rdmx_test_rdm_wait_both(tp, tx, rx, len, seed,
				       kind | (unexpected ? FI_REMOTE_CQ_DATA : 0));
	if (tagged)
		cr_assert_eq(comp.tag, tag);
	if (unexpected)
		cr_assert_eq(comp.data, data);
	free(tx);
	free(rx);
}

/* Every size, tagged and untagged; long messages go by long-read. */
Test(rdm_sizes, every_size_by_the_protocol_of_its_size)
{
	struct rdmx_test_rdm t;
	size_t sizes[16], n;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	n = rdm_sizes(&t, sizes);
	for (int tagged = 0; tagged < 2; tagged++) {
		for (size_t i = 0; i < n; i++)
			rdm_sizes_one(&t, sizes[i], tagged, false, (uint32_t) (i + 1));
	}
	cr_assert_eq(rdmx_ep(t.tp.ep[1])->stats.rx_long_reads, 2 * rdm_sizes_long(&t, sizes, n),
		     "a long message was not read by the receiver");
	rdmx_test_rdm_close(&t);
}

/*
 * Long messages by credit (FI_RDMX_LONG_READ=0): CTS and DATA, across
 * several CTS windows for the largest.
 */
Test(rdm_sizes, long_messages_by_credit)
{
	static const size_t extra[] = { 1, 8 << 10, (5 << 20) + 3 };
	struct rdmx_test_rdm t;

	g_rdmx_params.long_read = 0;
	g_rdmx_params.cts_window = 1 << 20;
	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	for (int tagged = 0; tagged < 2; tagged++) {
		for (size_t i = 0; i < RDMX_ARRAY_SIZE(extra); i++)
			rdm_sizes_one(&t, t.medium_max + extra[i], tagged, false,
				      (uint32_t) (40 + i));
	}
	cr_assert_eq(rdmx_ep(t.tp.ep[1])->stats.rx_long_reads, 0);
	rdmx_test_rdm_close(&t);
}

/* Every size before its receive, long ones by long-read, then by credit. */
Test(rdm_sizes, unexpected_at_every_size)
{
	struct rdmx_test_rdm t;
	size_t sizes[16], n;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	n = rdm_sizes(&t, sizes);
	for (int read = 1; read >= 0; read--) {
		g_rdmx_params.long_read = (size_t) read;
		for (int tagged = 0; tagged < 2; tagged++) {
			for (size_t i = 0; i < n; i++)
				rdm_sizes_one(&t, sizes[i], tagged, true, (uint32_t) (60 + i));
		}
	}
	cr_assert_eq(rdmx_ep(t.tp.ep[1])->stats.rx_long_reads, 2 * rdm_sizes_long(&t, sizes, n));
	rdmx_test_rdm_close(&t);
}

/* A message of len bytes for a receive of cap bytes. */
struct rdm_trunc {
	size_t	len;
	size_t	cap;
	bool	read;		/* a long message offers long-read */
};

/*
 * Sends c->len bytes into a tagged receive of c->cap bytes: the receive
 * fails with FI_ETRUNC, len the bytes placed (cap) and olen those
 * discarded (fi_cq(3)); cap bytes land, none after them; the send itself
 * succeeds. unexpected: the message arrives before the receive.
 */
static void rdm_truncated(struct rdmx_test_rdm *t, const struct rdm_trunc *c,
			  bool unexpected, uint32_t seed)
{
	struct rdmx_test_pair *tp = &t->tp;
	uint8_t *tx = rdmx_test_rdm_tx_buf(c->len, seed), *rx = rdmx_test_rdm_rx_buf(c->cap);
	uint64_t unexp = rdmx_ep(tp->ep[1])->stats.rx_unexpected, tag = 0x9900 + seed;
	struct fi_cq_err_entry err;

	g_rdmx_params.long_read = c->read;
	if (!unexpected)
		rdmx_test_rdm_recv(tp, rx, c->cap, FI_ADDR_UNSPEC, true, tag, 0);
	rdmx_test_rdm_send(tp, 0, tx, c->len, tag, FI_TAGGED, tx);
	if (unexpected) {
		rdmx_test_rdm_wait_unexpected(tp, unexp + 1);
		rdmx_test_rdm_recv(tp, rx, c->cap, FI_ADDR_UNSPEC, true, tag, 0);
	}
	err = rdmx_test_rdm_wait_err(tp, 1, rx, FI_ETRUNC);
	cr_assert_eq(err.len, c->cap, "%zu into %zu: len %zu", c->len, c->cap, err.len);
	cr_assert_eq(err.olen, c->len - c->cap, "%zu into %zu: olen %zu", c->len, c->cap,
		     err.olen);
	cr_assert_eq(err.flags, FI_RECV | FI_TAGGED);
	cr_assert_eq(err.tag, tag);
	rdmx_test_rdm_expect(rx, c->cap, c->cap + RDMX_TEST_RDM_GUARD, seed,
			     "truncated message");
	rdmx_test_rdm_wait_ok(tp, 0, tx, FI_SEND | FI_TAGGED);
	/* The endpoint goes on: the next message is whole. */
	rdm_sizes_one(t, 100, true, false, seed + 1000);
	free(tx);
	free(rx);
}

/* Truncations at every protocol, cap 0 and caps inside one segment. */
static size_t rdm_truncations(const struct rdmx_test_rdm *t, struct rdm_trunc *c)
{
	size_t n = 0, medium = t->medium_max - 7, large = (2 << 20) + 11;

	c[n++] = (struct rdm_trunc) { 100, 64, true };
	c[n++] = (struct rdm_trunc) { t->eager_max, 0, true };
	c[n++] = (struct rdm_trunc) { medium, 100, true };
	c[n++] = (struct rdm_trunc) { medium, t->medium_seg + 1, true };
	c[n++] = (struct rdm_trunc) { medium, medium - 1, true };
	c[n++] = (struct rdm_trunc) { large, 0, true };
	c[n++] = (struct rdm_trunc) { large, 300001, true };
	c[n++] = (struct rdm_trunc) { large, large - 1, true };
	c[n++] = (struct rdm_trunc) { large, 0, false };
	c[n++] = (struct rdm_trunc) { large, t->data_seg - 1, false };
	c[n++] = (struct rdm_trunc) { large, large - 1, false };
	return n;
}

Test(rdm_sizes, truncated_at_every_protocol)
{
	struct rdmx_test_rdm t;
	struct rdm_trunc c[16];
	size_t n;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	n = rdm_truncations(&t, c);
	for (int unexpected = 0; unexpected < 2; unexpected++) {
		for (size_t i = 0; i < n; i++)
			rdm_truncated(&t, &c[i], unexpected, (uint32_t) (80 + 20 * unexpected + i));
	}
	rdmx_test_rdm_close(&t);
}
