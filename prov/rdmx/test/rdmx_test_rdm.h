/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: what the tests of the rdm core (test_rdm_*.c) share.
 * Two endpoints of rdmx_test_pair.h over the fake EFA device, connected,
 * with the sizes at which the protocols change between them; patterned
 * payloads checked byte for byte; sends, waits and checks of what an
 * application sees in its completion queues.
 */
#ifndef RDMX_TEST_RDM_H
#define RDMX_TEST_RDM_H

#include <stdlib.h>

#include "rdmx_test_pair.h"
#include "fake_ibv.h"
#include "rdmx_dev_ibv.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_wire.h"

/* Bytes after each receive buffer that a message must never reach. */
#define RDMX_TEST_RDM_GUARD	64
#define RDMX_TEST_RDM_UNTOUCHED	0xee
/* Progress rounds after which a completion that did not come never will. */
#define RDMX_TEST_RDM_ROUNDS	100

/* A message size and, for a long one, whether long-read is offered. */
struct rdmx_test_rdm_proto {
	size_t	len;
	bool	read;		/* FI_RDMX_LONG_READ when it is sent */
};

struct rdmx_test_rdm {
	struct rdmx_test_pair	tp;		/* endpoint 0 sends to endpoint 1 */
	size_t			eager_max;	/* the largest eager message */
	size_t			medium_seg;	/* payload of a medium segment */
	size_t			medium_max;	/* the largest medium message */
	size_t			data_seg;	/* payload of a long DATA packet */
	uint32_t		qpn0;		/* endpoint 0's fake queue pair */
};

/*
 * Opens the pair with caps on one fake EFA device and connects it with
 * a first message, so that only the tests' own messages follow.
 */
static inline void rdmx_test_rdm_open(struct rdmx_test_rdm *t, uint64_t caps)
{
	static struct fake_ibv_dev_cfg cfg;
	struct rdmx_ibv_addr addr;
	size_t len = sizeof(addr), pkt;
	struct rdmx_peer *peer;

	fake_ibv_cfg(&cfg, FAKE_IBV_EFA, "rdmap0s6", 1);
	fake_ibv_install(&cfg, 1);
	rdmx_test_pair_open_caps(&t->tp, "efa", caps);
	rdmx_test_pair_transfer(&t->tp, 1, 0);
	peer = rdmx_peer_find(rdmx_ep(t->tp.ep[0]), t->tp.peer[0]);
	cr_assert_not_null(peer);
	pkt = peer->pkt_max;
	t->eager_max = pkt - sizeof(struct rdmx_wire_eager);
	t->medium_seg = pkt - sizeof(struct rdmx_wire_medium);
	t->medium_max = rdmx_ep(t->tp.ep[0])->medium_max;
	t->data_seg = pkt - sizeof(struct rdmx_wire_data);
	cr_assert_eq(fi_getname(&t->tp.ep[0]->fid, &addr, &len), 0);
	t->qpn0 = rdmx_ibv_addr_qpn(&addr);
}

/* Closes the pair; nothing may be held back or left of the fake. */
static inline void rdmx_test_rdm_close(struct rdmx_test_rdm *t)
{
	cr_assert_eq(fake_ibv_held(), 0, "sends still held back at close");
	rdmx_test_pair_close(&t->tp);
	cr_assert_eq(fake_ibv_live(), 0, "rdma-core objects left at close");
}

/*
 * Packets endpoint 0 posts at once for a len-byte message: its eager
 * packet, every segment of a medium one, or the RTS of a long one.
 */
static inline size_t rdmx_test_rdm_pkts(const struct rdmx_test_rdm *t, size_t len)
{
	if (len <= t->eager_max || len > t->medium_max)
		return 1;
	return (len + t->medium_seg - 1) / t->medium_seg;
}

/* The next byte of the pattern whose state is *x. */
static inline uint8_t rdmx_test_rdm_next(uint32_t *x)
{
	*x = *x * 1103515245u + 12345u;
	return (uint8_t) (*x >> 16);
}

/* len bytes of seed's pattern (two seeds differ within a few bytes). */
static inline uint8_t *rdmx_test_rdm_tx_buf(size_t len, uint32_t seed)
{
	uint8_t *buf = malloc(len ? len : 1);
	uint32_t x = seed;

	cr_assert_not_null(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = rdmx_test_rdm_next(&x);
	return buf;
}

/* A receive buffer of len bytes and its guard, every byte untouched. */
static inline uint8_t *rdmx_test_rdm_rx_buf(size_t len)
{
	uint8_t *buf = malloc(len + RDMX_TEST_RDM_GUARD);

	cr_assert_not_null(buf);
	memset(buf, RDMX_TEST_RDM_UNTOUCHED, len + RDMX_TEST_RDM_GUARD);
	return buf;
}

/* A message of a test: len bytes of seed's pattern sent from tx, received into rx. */
struct rdmx_test_rdm_msg {
	size_t		len;
	uint64_t	tag;
	uint32_t	seed;
	uint8_t		*tx;
	uint8_t		*rx;		/* cap bytes, and the guard */
};

/* Makes n messages of lengths len[i], tags base + i and seeds seed + i. */
static inline void rdmx_test_rdm_msgs_make(struct rdmx_test_rdm_msg *m, const size_t *len,
					   size_t n, uint64_t base, uint32_t seed, size_t cap)
{
	for (size_t i = 0; i < n; i++) {
		m[i].len = len[i];
		m[i].tag = base + i;
		m[i].seed = seed + (uint32_t) i;
		m[i].tx = rdmx_test_rdm_tx_buf(len[i], m[i].seed);
		m[i].rx = rdmx_test_rdm_rx_buf(cap);
	}
}

static inline void rdmx_test_rdm_msgs_free(struct rdmx_test_rdm_msg *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].tx);
		free(m[i].rx);
	}
}

/*
 * Asserts that buf holds the first len bytes of seed's pattern and that
 * the bytes from len to end are untouched (end: the buffer's guard).
 */
static inline void rdmx_test_rdm_expect(const uint8_t *buf, size_t len, size_t end,
					uint32_t seed, const char *what)
{
	uint32_t x = seed;

	for (size_t i = 0; i < len; i++) {
		if (buf[i] != rdmx_test_rdm_next(&x))
			cr_assert_fail("%s: byte %zu of %zu differs", what, i, len);
	}
	for (size_t i = len; i < end; i++) {
		if (buf[i] != RDMX_TEST_RDM_UNTOUCHED)
			cr_assert_fail("%s: byte %zu, past the %zu that may land, written",
				       what, i, len);
	}
}

/*
 * Posts a send from endpoint `from` to the other: fi_tsendmsg when flags
 * has FI_TAGGED (the call's own flag), else fi_sendmsg; when the
 * provider says -FI_EAGAIN, the receiver progresses and it is posted
 * again.
 */
static inline void rdmx_test_rdm_send(struct rdmx_test_pair *tp, int from, const void *buf,
				      size_t len, uint64_t tag, uint64_t flags, void *ctx)
{
	struct iovec iov = { (void *) buf, len };
	struct fi_msg_tagged tmsg = {
		.msg_iov = &iov, .iov_count = 1, .addr = tp->peer[from],
		.tag = tag, .context = ctx,
	};
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = tp->peer[from], .context = ctx,
	};
	ssize_t ret;

	do {
		ret = (flags & FI_TAGGED) ?
		      fi_tsendmsg(tp->ep[from], &tmsg, flags & ~(uint64_t) FI_TAGGED) :
		      fi_sendmsg(tp->ep[from], &msg, flags);
		if (ret == -FI_EAGAIN)
			(void) fi_cq_read(tp->cq[1 - from], NULL, 0);
	} while (ret == -FI_EAGAIN);
	cr_assert_eq(ret, 0, "send of %zu bytes: %s", len, fi_strerror((int) -ret));
}

/*
 * Posts endpoint 1's receive of len bytes into buf, which is its
 * context, from src: tagged for tag with the ignore bits when tagged,
 * else untagged.
 */
static inline void rdmx_test_rdm_recv(struct rdmx_test_pair *tp, uint8_t *buf, size_t len,
				      fi_addr_t src, bool tagged, uint64_t tag,
				      uint64_t ignore)
{
	ssize_t ret = tagged ? fi_trecv(tp->ep[1], buf, len, NULL, src, tag, ignore, buf) :
			       fi_recv(tp->ep[1], buf, len, NULL, src, buf);

	cr_assert_eq(ret, 0, "receive of %zu bytes: %s", len, fi_strerror((int) -ret));
}

/*
 * Waits for endpoint who's next completion: it must be a success of
 * context ctx with exactly these flags.
 */
static inline struct fi_cq_tagged_entry rdmx_test_rdm_wait_ok(struct rdmx_test_pair *tp,
							      int who, void *ctx,
							      uint64_t flags)
{
	struct fi_cq_tagged_entry comp;
	struct fi_cq_err_entry err;
	int ret = rdmx_test_pair_wait(tp, who, &comp, &err);

	cr_assert_eq(ret, 0, "endpoint %d: %p failed with %s", who, err.op_context,
		     fi_strerror(ret));
	cr_assert_eq(comp.op_context, ctx, "endpoint %d completed %p, not %p", who,
		     comp.op_context, ctx);
	cr_assert_eq(comp.flags, flags, "completion flags %#llx, not %#llx",
		     (unsigned long long) comp.flags, (unsigned long long) flags);
	return comp;
}

/* Waits for endpoint who's next completion: an error err of ctx. */
static inline struct fi_cq_err_entry rdmx_test_rdm_wait_err(struct rdmx_test_pair *tp,
							    int who, void *ctx, int err)
{
	struct fi_cq_tagged_entry comp;
	struct fi_cq_err_entry entry = { 0 };
	int ret = rdmx_test_pair_wait(tp, who, &comp, &entry);

	cr_assert_eq(ret, err, "endpoint %d: %s, not %s", who,
		     ret ? fi_strerror(ret) : "a success", fi_strerror(err));
	cr_assert_eq(entry.op_context, ctx, "endpoint %d failed %p, not %p", who,
		     entry.op_context, ctx);
	return entry;
}

/*
 * Waits for receive rx to complete (flags: FI_RECV and these) with the
 * len bytes of seed, none past them, then for send tx; returns the
 * receive's completion.
 */
static inline struct fi_cq_tagged_entry rdmx_test_rdm_wait_both(struct rdmx_test_pair *tp,
								uint8_t *tx, uint8_t *rx,
								size_t len, uint32_t seed,
								uint64_t flags)
{
	struct fi_cq_tagged_entry comp = rdmx_test_rdm_wait_ok(tp, 1, rx, FI_RECV | flags);

	cr_assert_eq(comp.len, len, "%zu bytes reported as %zu", len, comp.len);
	rdmx_test_rdm_expect(rx, len, len + RDMX_TEST_RDM_GUARD, seed, "received");
	rdmx_test_rdm_wait_ok(tp, 0, tx, FI_SEND | (flags & (FI_TAGGED | FI_MSG)));
	return comp;
}

/*
 * Progresses both endpoints for RDMX_TEST_RDM_ROUNDS rounds; endpoint who
 * must complete nothing meanwhile (the fake does everything it can at
 * once, so what did not complete by then waits for the test).
 */
static inline void rdmx_test_rdm_quiet(struct rdmx_test_pair *tp, int who, const char *why)
{
	struct fi_cq_tagged_entry comp;

	for (int i = 0; i < RDMX_TEST_RDM_ROUNDS; i++) {
		ssize_t ret = fi_cq_read(tp->cq[who], &comp, 1);

		cr_assert_eq(ret, -FI_EAGAIN, "endpoint %d completed something (%zd): %s",
			     who, ret, why);
		(void) fi_cq_read(tp->cq[1 - who], NULL, 0);
	}
}

/* Progresses both endpoints until endpoint 1 has had n unexpected messages. */
static inline void rdmx_test_rdm_wait_unexpected(struct rdmx_test_pair *tp, uint64_t n)
{
	uint64_t deadline = rdmx_test_now_ms() + 10000;

	while (rdmx_ep(tp->ep[1])->stats.rx_unexpected < n) {
		(void) fi_cq_read(tp->cq[0], NULL, 0);
		(void) fi_cq_read(tp->cq[1], NULL, 0);
		cr_assert_lt(rdmx_test_now_ms(), deadline, "%llu unexpected messages, not %llu",
			     (unsigned long long) rdmx_ep(tp->ep[1])->stats.rx_unexpected,
			     (unsigned long long) n);
	}
}

#endif /* RDMX_TEST_RDM_H */
