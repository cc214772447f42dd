/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Matching in the rdm core over the fake EFA device, at each protocol
 * (eager, medium, long-read, long by credit): tags with ignore bits
 * (fi_tagged(3): the message's tag is reported, not the receive's);
 * receives directed at one sender (FI_DIRECTED_RECV) next to
 * FI_ADDR_UNSPEC ones, with a second sender, posted and unexpected, and
 * the source each completion reports; fi_cancel of a posted receive
 * (also with its message at the device but not yet handled) and of one
 * whose message is under way.
 */
#include "rdmx_test_rdm.h"

TestSuite(rdm_match);

static const struct rdmx_test_rdm_proto rdm_protos[] = {
	{ 100, true },		/* eager */
	{ 30000, true },	/* medium */
	{ 200000, true },	/* long-read */
	{ 200000, false },	/* long, by credit */
};

/*
 * Waits for endpoint 1's next completion: receive m->rx took message m
 * (its length, its tag when tagged, every byte), from src.
 */
static void rdm_expect_recv(struct rdmx_test_pair *tp, const struct rdmx_test_rdm_msg *m,
			    bool tagged, fi_addr_t src)
{
	struct fi_cq_tagged_entry comp;
	struct fi_cq_err_entry err;
	fi_addr_t from = FI_ADDR_NOTAVAIL;

	cr_assert_eq(rdmx_test_pair_wait_from(tp, 1, &comp, &err, &from), 0,
		     "receive %p failed", err.op_context);
	cr_assert_eq(comp.op_context, m->rx, "receive %p completed, not %p", comp.op_context,
		     (void *) m->rx);
	cr_assert_eq(comp.flags, FI_RECV | (tagged ? FI_TAGGED : FI_MSG));
	cr_assert_eq(comp.len, m->len);
	if (tagged)
		cr_assert_eq(comp.tag, m->tag, "tag %#llx reported, not the message's %#llx",
			     (unsigned long long) comp.tag, (unsigned long long) m->tag);
	cr_assert_eq(from, src, "source %llu reported, not %llu", (unsigned long long) from,
		     (unsigned long long) src);
	rdmx_test_rdm_expect(m->rx, m->len, m->len + RDMX_TEST_RDM_GUARD, m->seed,
			     "matched message");
}

/* Waits for the sends of m[0] and m[1] on endpoint 0's CQ, in either order. */
static void rdm_expect_sends(struct rdmx_test_pair *tp, const struct rdmx_test_rdm_msg *m,
			     bool tagged)
{
	bool seen[2] = { false, false };

	for (int i = 0; i < 2; i++) {
		struct fi_cq_tagged_entry comp;
		struct fi_cq_err_entry err;
		int k = 0;

		cr_assert_eq(rdmx_test_pair_wait(tp, 0, &comp, &err), 0, "send %p failed",
			     err.op_context);
		cr_assert_eq(comp.flags, FI_SEND | (tagged ? FI_TAGGED : FI_MSG));
		while (k < 2 && comp.op_context != m[k].tx)
			k++;
		cr_assert(k < 2 && !seen[k], "send %p completed, not one of %p and %p",
			  comp.op_context, (void *) m[0].tx, (void *) m[1].tx);
		seen[k] = true;
	}
}

/* Two messages of p's length, tagged tag0 and tag1, seeds seed and seed + 1. */
static void rdm_two_make(struct rdmx_test_rdm_msg *m, const struct rdmx_test_rdm_proto *p,
			 uint64_t tag0, uint64_t tag1, uint32_t seed)
{
	size_t len[2] = { p->len, p->len };

	g_rdmx_params.long_read = p->read;
	rdmx_test_rdm_msgs_make(m, len, 2, 0, seed, p->len);
	m[0].tag = tag0;
	m[1].tag = tag1;
}

/* A receive's tag and ignore bits, a tag they refuse and one they take. */
struct rdm_ignore {
	uint64_t	tag, ignore, miss, hit;
};

/*
 * Sends message 0 tagged c->miss, then message 1 tagged c->hit: the
 * receive of c->tag ignoring c->ignore takes message 1, reported with
 * its own tag; message 0 waits for a receive of its exact tag.
 * unexpected: both arrive before any receive.
 */
static void rdm_ignore(struct rdmx_test_rdm *t, const struct rdm_ignore *c,
		       const struct rdmx_test_rdm_proto *p, bool unexpected, uint32_t seed)
{
	struct rdmx_test_pair *tp = &t->tp;
	uint64_t unexp = rdmx_ep(tp->ep[1])->stats.rx_unexpected;
	struct rdmx_test_rdm_msg m[2];

	rdm_two_make(m, p, c->miss, c->hit, seed);
	if (!unexpected)
		rdmx_test_rdm_recv(tp, m[1].rx, p->len, FI_ADDR_UNSPEC, true, c->tag, c->ignore);
	for (int i = 0; i < 2; i++)
		rdmx_test_rdm_send(tp, 0, m[i].tx, p->len, m[i].tag, FI_TAGGED, m[i].tx);
	if (unexpected) {
		rdmx_test_rdm_wait_unexpected(tp, unexp + 2);
		rdmx_test_rdm_recv(tp, m[1].rx, p->len, FI_ADDR_UNSPEC, true, c->tag, c->ignore);
	}
	rdm_expect_recv(tp, &m[1], true, tp->peer[1]);
	rdmx_test_rdm_quiet(tp, 1, "the message the ignore bits refuse was taken");
	rdmx_test_rdm_recv(tp, m[0].rx, p->len, FI_ADDR_UNSPEC, true, c->miss, 0);
	rdm_expect_recv(tp, &m[0], true, tp->peer[1]);
	rdm_expect_sends(tp, m, true);
	rdmx_test_rdm_msgs_free(m, 2);
}

Test(rdm_match, ignore_bits_at_every_protocol)
{
	static const struct rdm_ignore cases[] = {
		{ 0x1200, 0xff, 0x13ab, 0x12ab },
		{ 0xab00000000000012ULL, 0xff00000000000000ULL, 0xab00000000000013ULL, 0x12 },
		{ 0, ~(uint64_t) 0 >> 1, 1ULL << 63, 0x7fffffffffffffffULL },
	};
	struct rdmx_test_rdm t;
	uint32_t seed = 1;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	for (size_t i = 0; i < RDMX_ARRAY_SIZE(cases); i++) {
		for (size_t p = 0; p < RDMX_ARRAY_SIZE(rdm_protos); p++) {
			rdm_ignore(&t, &cases[i], &rdm_protos[p], false, seed += 2);
			rdm_ignore(&t, &cases[i], &rdm_protos[p], true, seed += 2);
		}
	}
	rdmx_test_rdm_close(&t);
}

/* A second sender to endpoint 1: a third endpoint on endpoint 0's CQ. */
struct rdm_third {
	struct fid_ep	*ep;
	struct fid_av	*av;
	fi_addr_t	to1;		/* its address of endpoint 1 */
	fi_addr_t	at1;		/* endpoint 1's address of it */
};

/* Opens the third endpoint and connects it to endpoint 1. */
static void rdm_third_open(struct rdmx_test_rdm *t, struct rdm_third *x)
{
	struct rdmx_test_pair *tp = &t->tp;
	uint8_t byte = 1, rx[1 + RDMX_TEST_RDM_GUARD];

	rdmx_test_pair_ep_open(tp->domain, tp->info, tp->cq[0], &x->ep, &x->av);
	x->to1 = rdmx_test_pair_insert(x->av, tp->ep[1]);
	x->at1 = rdmx_test_pair_insert(tp->av[1], x->ep);
	cr_assert_neq(x->at1, tp->peer[1]);
	rdmx_test_rdm_recv(tp, rx, 1, x->at1, true, 0, 0);
	cr_assert_eq(fi_tsend(x->ep, &byte, 1, NULL, x->to1, 0, &byte), 0);
	rdmx_test_rdm_wait_ok(tp, 1, rx, FI_RECV | FI_TAGGED);
	rdmx_test_rdm_wait_ok(tp, 0, &byte, FI_SEND | FI_TAGGED);
}

static void rdm_third_close(struct rdm_third *x)
{
	cr_assert_eq(fi_close(&x->ep->fid), 0);
	cr_assert_eq(fi_close(&x->av->fid), 0);
}

/*
 * Endpoint 0 sends message 0, the third endpoint message 1, both with
 * one tag. A receive directed at the third endpoint must take message 1
 * only; a receive from FI_ADDR_UNSPEC takes message 0. Posted: the
 * directed one first, so message 0 skips it. Unexpected: both arrived,
 * message 0 first, when the directed receive is posted.
 */
static void rdm_directed(struct rdmx_test_rdm *t, struct rdm_third *x,
			 const struct rdmx_test_rdm_proto *p, bool tagged, bool unexpected,
			 uint32_t seed)
{
	struct rdmx_test_pair *tp = &t->tp;
	uint64_t unexp = rdmx_ep(tp->ep[1])->stats.rx_unexpected;
	struct rdmx_test_rdm_msg m[2];
	uint8_t *b;

	rdm_two_make(m, p, 9, 9, seed);
	b = m[1].tx;
	if (!unexpected) {
		rdmx_test_rdm_recv(tp, m[1].rx, p->len, x->at1, tagged, 9, 0);
		rdmx_test_rdm_recv(tp, m[0].rx, p->len, FI_ADDR_UNSPEC, tagged, 9, 0);
	}
	rdmx_test_rdm_send(tp, 0, m[0].tx, p->len, 9, tagged ? FI_TAGGED : 0, m[0].tx);
	if (!unexpected) {
		rdm_expect_recv(tp, &m[0], tagged, tp->peer[1]);
		rdmx_test_rdm_quiet(tp, 1, "the directed receive took another's message");
	}
	cr_assert_eq(tagged ? fi_tsend(x->ep, b, p->len, NULL, x->to1, 9, b) :
		     fi_send(x->ep, b, p->len, NULL, x->to1, b), 0);
	if (unexpected) {
		rdmx_test_rdm_wait_unexpected(tp, unexp + 2);
		rdmx_test_rdm_recv(tp, m[1].rx, p->len, x->at1, tagged, 9, 0);
	}
	rdm_expect_recv(tp, &m[1], tagged, x->at1);
	if (unexpected) {
		rdmx_test_rdm_recv(tp, m[0].rx, p->len, FI_ADDR_UNSPEC, tagged, 9, 0);
		rdm_expect_recv(tp, &m[0], tagged, tp->peer[1]);
	}
	rdm_expect_sends(tp, m, tagged);
	rdmx_test_rdm_msgs_free(m, 2);
}

Test(rdm_match, directed_receives_take_only_their_sender)
{
	struct rdmx_test_rdm t;
	struct rdm_third x;
	uint32_t seed = 1;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG | FI_DIRECTED_RECV);
	rdm_third_open(&t, &x);
	for (int tagged = 0; tagged < 2; tagged++) {
		for (size_t p = 0; p < RDMX_ARRAY_SIZE(rdm_protos); p++) {
			rdm_directed(&t, &x, &rdm_protos[p], tagged, false, seed += 2);
			rdm_directed(&t, &x, &rdm_protos[p], tagged, true, seed += 2);
		}
	}
	rdm_third_close(&x);
	rdmx_test_rdm_close(&t);
}

/*
 * fi_cancel of the first of two matching receives: FI_ECANCELED for it
 * (once: a second cancel finds nothing), and the message takes the
 * second; the canceled buffer is never written. sent_first: the message
 * is already at endpoint 1's device, not yet handled, when the cancel
 * comes: the cancel still wins.
 */
static void rdm_cancel(struct rdmx_test_rdm *t, const struct rdmx_test_rdm_proto *p,
		       bool tagged, bool sent_first, uint32_t seed)
{
	struct rdmx_test_pair *tp = &t->tp;
	uint64_t kind = tagged ? FI_TAGGED : FI_MSG;
	struct rdmx_test_rdm_msg m[2];
	struct fi_cq_err_entry err;

	/* Message 1 is never sent: its receive is the one canceled. */
	rdm_two_make(m, p, 3, 3, seed);
	rdmx_test_rdm_recv(tp, m[1].rx, p->len, FI_ADDR_UNSPEC, tagged, 3, 0);
	rdmx_test_rdm_recv(tp, m[0].rx, p->len, FI_ADDR_UNSPEC, tagged, 3, 0);
	if (sent_first)
		rdmx_test_rdm_send(tp, 0, m[0].tx, p->len, 3, tagged ? FI_TAGGED : 0, m[0].tx);
	cr_assert_eq(fi_cancel(&tp->ep[1]->fid, m[1].rx), 0);
	err = rdmx_test_rdm_wait_err(tp, 1, m[1].rx, FI_ECANCELED);
	cr_assert_eq(err.flags, FI_RECV | kind);
	cr_assert_eq(err.len, 0);
	cr_assert_eq(fi_cancel(&tp->ep[1]->fid, m[1].rx), -FI_ENOENT);
	if (!sent_first)
		rdmx_test_rdm_send(tp, 0, m[0].tx, p->len, 3, tagged ? FI_TAGGED : 0, m[0].tx);
	rdm_expect_recv(tp, &m[0], tagged, tp->peer[1]);
	rdmx_test_rdm_wait_ok(tp, 0, m[0].tx, FI_SEND | kind);
	rdmx_test_rdm_expect(m[1].rx, 0, p->len + RDMX_TEST_RDM_GUARD, 0, "a canceled receive");
	rdmx_test_rdm_msgs_free(m, 2);
}

Test(rdm_match, canceled_receive_takes_no_message)
{
	struct rdmx_test_rdm t;
	uint32_t seed = 1;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	for (int tagged = 0; tagged < 2; tagged++) {
		for (size_t p = 0; p < RDMX_ARRAY_SIZE(rdm_protos); p++) {
			rdm_cancel(&t, &rdm_protos[p], tagged, false, ++seed);
			rdm_cancel(&t, &rdm_protos[p], tagged, true, ++seed);
		}
	}
	rdmx_test_rdm_close(&t);
}

/*
 * A receive whose long message is under way (matched; its data being
 * read, or granted and in flight) is no longer pending: fi_cancel finds
 * nothing to cancel (-FI_ENOENT), and the receive completes whole.
 */
Test(rdm_match, receive_under_way_is_not_canceled)
{
	static const struct rdmx_test_rdm_proto longs[] = { { 300000, false },
							    { 300000, true } };
	struct rdmx_test_rdm t;

	rdmx_test_rdm_open(&t, FI_TAGGED | FI_MSG);
	for (size_t i = 0; i < RDMX_ARRAY_SIZE(longs); i++) {
		struct rdmx_test_rdm_msg m;

		rdmx_test_rdm_msgs_make(&m, &longs[i].len, 1, 6, (uint32_t) i + 1, longs[i].len);
		g_rdmx_params.long_read = longs[i].read;
		rdmx_test_rdm_recv(&t.tp, m.rx, m.len, FI_ADDR_UNSPEC, true, m.tag, 0);
		rdmx_test_rdm_send(&t.tp, 0, m.tx, m.len, m.tag, FI_TAGGED, m.tx);
		/* The RTS is taken: a read is posted, or a CTS goes out. */
		(void) fi_cq_read(t.tp.cq[1], NULL, 0);
		fake_ibv_hold(t.qpn0);
		(void) fi_cq_read(t.tp.cq[0], NULL, 0);
		cr_assert_eq(fake_ibv_held() > 0, !longs[i].read, "%zu DATA packets held",
			     fake_ibv_held());
		cr_assert_eq(fi_cancel(&t.tp.ep[1]->fid, m.rx), -FI_ENOENT);
		fake_ibv_release(3);
		rdm_expect_recv(&t.tp, &m, true, t.tp.peer[1]);
		rdmx_test_rdm_wait_ok(&t.tp, 0, m.tx, FI_SEND | FI_TAGGED);
		rdmx_test_rdm_quiet(&t.tp, 1, "a second completion of the receive");
		rdmx_test_rdm_msgs_free(&m, 1);
	}
	rdmx_test_rdm_close(&t);
}
