/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_hs: both sides of the probe handshake, joined by a simulated link
 * (a queue that can lose messages) under a clock the tests move: the
 * normal path, lost RESET/ACK/probe messages, simultaneous connects, a
 * legacy peer, no common version, a restart with a new incarnation, and
 * ping loss leading to DISCONNECTED and a new handshake, a side that
 * starts a new session or reaches a new incarnation after a disconnect,
 * and the CLOSE of a closing endpoint: honoured for the current session
 * only, never from a peer's old session, a forged copy or a stale RESET.
 */
#include "rdmx_test.h"
#include "rdmx_hs.h"
#include "rdmx_wire.h"

#define MS		1000000ULL
#define QUEUE_MAX	256

struct side {
	struct rdmx_hs		hs;
	struct rdmx_hs_local	local;
	int			connected, disconnected, restarted, closed;
	int			last_err;
	int			sent[RDMX_HS_CLOSE + 1];
	struct rdmx_hs_msg	last_close;	/* the last CLOSE it sent */
};

static struct side A, B;
static const struct rdmx_hs_cfg cfg = {
	.retry_ns = 10 * MS,
	.tries = 5,
	.probes = 3,
	.ping_interval_ns = 100 * MS,
	.ping_timeout_ns = 20 * MS,
	.ping_retries = 3,
};

/* The link: messages in flight, each with its receiver. */
static struct {
	struct side		*to;
	struct rdmx_hs_msg	msg;
} queue[QUEUE_MAX];
static size_t queued;
static uint64_t now;
/* Messages of this type are lost while drop_left > 0 (type 0: any). */
static enum rdmx_hs_type drop_type;
static int drop_left;

static void link_send(void *ctx, const struct rdmx_hs_msg *msg)
{
	struct side *from = ctx;

	from->sent[msg->type]++;
	if (msg->type == RDMX_HS_CLOSE)
		from->last_close = *msg;
	if (drop_left && (!drop_type || drop_type == msg->type)) {
		drop_left--;
		return;
	}
	cr_assert_lt(queued, QUEUE_MAX);
	queue[queued].to = from == &A ? &B : &A;
	queue[queued].msg = *msg;
	queued++;
}

static void on_event(void *ctx, enum rdmx_hs_event ev, int err)
{
	struct side *s = ctx;

	s->connected += ev == RDMX_HS_EV_CONNECTED;
	s->disconnected += ev == RDMX_HS_EV_DISCONNECTED;
	s->restarted += ev == RDMX_HS_EV_RESTARTED;
	s->closed += ev == RDMX_HS_EV_CLOSED;
	s->last_err = err;
}

static const struct rdmx_hs_ops ops = { .send = link_send, .event = on_event };

static void side_init(struct side *s, uint64_t incarnation, uint32_t probe_version,
		      uint32_t lo, uint32_t hi)
{
	memset(s, 0, sizeof(*s));
	s->local = (struct rdmx_hs_local) {
		.probe_version = probe_version,
		.proto_min = lo,
		.proto_max = hi,
		.features = incarnation << 8,
		.incarnation = incarnation,
	};
	rdmx_hs_init(&s->hs, &s->local, &cfg, &ops, s);
}

static void setup(void)
{
	queued = 0;
	now = 1000 * MS;
	drop_type = 0;
	drop_left = 0;
	side_init(&A, 0xa1, RDMX_HS_PROBE_VERSION, RDMX_PROTO_LEGACY, RDMX_PROTO_VERSION);
	side_init(&B, 0xb1, RDMX_HS_PROBE_VERSION, RDMX_PROTO_LEGACY, RDMX_PROTO_VERSION);
}

TestSuite(hs, .init = setup);

/* Delivers everything in flight, and what that sends, until quiet. */
static void deliver(void)
{
	for (int rounds = 0; queued && rounds < 100; rounds++) {
		size_t n = queued;

		for (size_t i = 0; i < n; i++)
			rdmx_hs_recv(&queue[i].to->hs, &queue[i].msg, now);
		memmove(queue, queue + n, (queued - n) * sizeof(queue[0]));
		queued -= n;
	}
	cr_assert_eq(queued, 0, "the exchange settles");
}

/* Moves the clock by step, firing both timers, then delivers. */
static void advance(uint64_t step)
{
	now += step;
	rdmx_hs_timer(&A.hs, now);
	rdmx_hs_timer(&B.hs, now);
	deliver();
}

static void assert_connected(uint32_t version)
{
	cr_assert_eq(A.hs.state, RDMX_HS_CONNECTED, "A is %s", rdmx_hs_state_str(A.hs.state));
	cr_assert_eq(B.hs.state, RDMX_HS_CONNECTED, "B is %s", rdmx_hs_state_str(B.hs.state));
	cr_assert_eq(A.hs.version, version);
	cr_assert_eq(B.hs.version, version);
	cr_assert_eq(A.hs.peer_incarnation, B.local.incarnation);
	cr_assert_eq(B.hs.peer_incarnation, A.local.incarnation);
}

Test(hs, normal_path)
{
	rdmx_hs_connect(&A.hs, now);
	cr_assert_eq(A.hs.state, RDMX_HS_RESET_SENT);
	deliver();
	assert_connected(RDMX_PROTO_VERSION);
	cr_assert_eq(A.connected, 1);
	cr_assert_eq(B.connected, 1, "the answering side connects too");
	cr_assert_eq(A.hs.peer_features, B.local.features, "features travel");
	cr_assert_eq(A.sent[RDMX_HS_RESET], 1, "no resend on a clean link");
	cr_assert_eq(A.sent[RDMX_HS_PROBE], (int) cfg.probes);
	rdmx_hs_connect(&A.hs, now);
	cr_assert_eq(A.sent[RDMX_HS_RESET], 1, "connecting a connected peer does nothing");
}

/* Each lost handshake message is sent again on its own timer. */
static void lose_one(enum rdmx_hs_type type)
{
	drop_type = type;
	drop_left = 1;
	rdmx_hs_connect(&A.hs, now);
	deliver();
	cr_assert(A.hs.state != RDMX_HS_CONNECTED || B.hs.state != RDMX_HS_CONNECTED,
		  "not both before the loss is repaired");
	for (int i = 0; i < 3 && (A.hs.state != RDMX_HS_CONNECTED ||
				  B.hs.state != RDMX_HS_CONNECTED); i++)
		advance(cfg.retry_ns);
	assert_connected(RDMX_PROTO_VERSION);
	cr_assert_eq(A.connected, 1);
	cr_assert_eq(B.connected, 1);
}

Test(hs, lost_reset) { lose_one(RDMX_HS_RESET); }
Test(hs, lost_ack) { lose_one(RDMX_HS_ACK); }
Test(hs, lost_probe) { lose_one(RDMX_HS_PROBE); }
Test(hs, lost_probe_ack) { lose_one(RDMX_HS_PROBE_ACK); }

Test(hs, simultaneous_connects_meet)
{
	rdmx_hs_connect(&A.hs, now);
	rdmx_hs_connect(&B.hs, now);
	deliver();
	assert_connected(RDMX_PROTO_VERSION);
	cr_assert_eq(A.connected, 1, "one CONNECTED event each");
	cr_assert_eq(B.connected, 1);
}

Test(hs, legacy_peer_gets_the_legacy_protocol)
{
	side_init(&B, 0xb1, RDMX_HS_PROBE_LEGACY, RDMX_PROTO_LEGACY, RDMX_PROTO_LEGACY);
	rdmx_hs_connect(&A.hs, now);
	deliver();
	assert_connected(RDMX_PROTO_LEGACY);
}

Test(hs, legacy_peer_connecting_to_us)
{
	side_init(&B, 0xb1, RDMX_HS_PROBE_LEGACY, RDMX_PROTO_LEGACY, RDMX_PROTO_LEGACY);
	rdmx_hs_connect(&B.hs, now);
	deliver();
	assert_connected(RDMX_PROTO_LEGACY);
}

Test(hs, no_common_version_disconnects_both)
{
	side_init(&B, 0xb1, RDMX_HS_PROBE_VERSION, RDMX_PROTO_VERSION + 1, RDMX_PROTO_VERSION + 2);
	rdmx_hs_connect(&A.hs, now);
	deliver();
	cr_assert_eq(A.hs.state, RDMX_HS_DISCONNECTED);
	cr_assert_eq(B.hs.state, RDMX_HS_DISCONNECTED);
	cr_assert_eq(A.last_err, FI_ENOPROTOOPT);
	cr_assert_eq(B.last_err, FI_ENOPROTOOPT);
	cr_assert_eq(A.connected + B.connected, 0);
}

Test(hs, negotiation_takes_the_highest_common)
{
	struct rdmx_hs_local us = { RDMX_HS_PROBE_VERSION, 2, 5, 0, 1 };
	struct rdmx_hs_msg them = { .probe_version = RDMX_HS_PROBE_VERSION,
				    .proto_min = 3, .proto_max = 9 };

	cr_assert_eq(rdmx_hs_negotiate(&us, &them), 5);
	them.proto_max = 4;
	cr_assert_eq(rdmx_hs_negotiate(&us, &them), 4);
	them.proto_min = 6;
	them.proto_max = 9;
	cr_assert_eq(rdmx_hs_negotiate(&us, &them), 0);
	them.probe_version = RDMX_HS_PROBE_LEGACY;
	cr_assert_eq(rdmx_hs_negotiate(&us, &them), 0, "we no longer speak legacy");
	us.proto_min = RDMX_PROTO_LEGACY;
	cr_assert_eq(rdmx_hs_negotiate(&us, &them), RDMX_PROTO_LEGACY);
}

Test(hs, restart_with_new_incarnation_is_detected)
{
	rdmx_hs_connect(&A.hs, now);
	deliver();
	assert_connected(RDMX_PROTO_VERSION);
	/* B's process restarts on the same address and sends first. */
	side_init(&B, 0xb2, RDMX_HS_PROBE_VERSION, RDMX_PROTO_LEGACY, RDMX_PROTO_VERSION);
	rdmx_hs_connect(&B.hs, now);
	deliver();
	cr_assert_eq(A.restarted, 1, "A drops what it had of the old B");
	assert_connected(RDMX_PROTO_VERSION);
	cr_assert_eq(A.connected, 2);
}

Test(hs, messages_of_an_old_incarnation_are_ignored)
{
	struct rdmx_hs_msg stale = { .type = RDMX_HS_PROBE_ACK, .incarnation = 0xb0,
				     .peer_incarnation = 0xa1, .seq = 0 };

	rdmx_hs_connect(&A.hs, now);
	drop_left = 1000;	/* nothing reaches B */
	deliver();
	drop_left = 0;
	A.hs.peer_incarnation = 0xb1;	/* as if B's ACK had come */
	A.hs.state = RDMX_HS_PROBING;
	for (uint32_t i = 0; i < cfg.probes; i++) {
		stale.seq = A.hs.probe_seq + i;
		rdmx_hs_recv(&A.hs, &stale, now);
	}
	cr_assert_eq(A.hs.state, RDMX_HS_PROBING, "another incarnation's answers count for nothing");
	stale.incarnation = 0xb1;
	stale.peer_incarnation = 0xa0;	/* meant for an older A */
	rdmx_hs_recv(&A.hs, &stale, now);
	cr_assert_eq(A.hs.state, RDMX_HS_PROBING);
}

Test(hs, silent_peer_gives_up_after_tries)
{
	drop_left = 1000;
	rdmx_hs_connect(&A.hs, now);
	for (uint32_t i = 0; i < cfg.tries + 1; i++)
		advance(cfg.retry_ns);
	cr_assert_eq(A.hs.state, RDMX_HS_DISCONNECTED);
	cr_assert_eq(A.last_err, FI_EHOSTUNREACH);
	cr_assert_eq(A.sent[RDMX_HS_RESET], (int) cfg.tries);
}

Test(hs, answered_pings_keep_the_peer)
{
	rdmx_hs_connect(&A.hs, now);
	deliver();
	for (int i = 0; i < 20; i++)
		advance(cfg.ping_interval_ns);
	assert_connected(RDMX_PROTO_VERSION);
	cr_assert_geq(A.sent[RDMX_HS_PING], 1, "an idle peer is pinged");
	cr_assert_eq(A.disconnected + B.disconnected, 0);
}

Test(hs, traffic_replaces_pings)
{
	rdmx_hs_connect(&A.hs, now);
	deliver();
	for (int i = 0; i < 20; i++) {
		now += cfg.ping_interval_ns / 2;
		rdmx_hs_heard(&A.hs, now);
		rdmx_hs_timer(&A.hs, now);
	}
	cr_assert_eq(A.sent[RDMX_HS_PING], 0);
}

Test(hs, ping_loss_disconnects_then_a_new_handshake_connects)
{
	rdmx_hs_connect(&A.hs, now);
	deliver();
	drop_left = 1000;	/* B goes silent */
	advance(cfg.ping_interval_ns);
	for (uint32_t i = 0; i < cfg.ping_retries; i++)
		advance(cfg.ping_timeout_ns);
	cr_assert_eq(A.hs.state, RDMX_HS_DISCONNECTED, "A is %s", rdmx_hs_state_str(A.hs.state));
	cr_assert_eq(A.last_err, FI_EHOSTUNREACH);
	cr_assert_eq(A.disconnected, 1);
	cr_assert_eq(A.sent[RDMX_HS_PING], (int) cfg.ping_retries);
	/* The link heals; the next operation to B connects again. */
	drop_left = 0;
	rdmx_hs_connect(&A.hs, now);
	deliver();
	assert_connected(RDMX_PROTO_VERSION);
	cr_assert_eq(A.connected, 2);
}

/* Brings A and B to CONNECTED, then makes only A give B up. */
static void only_a_disconnects(void)
{
	rdmx_hs_connect(&A.hs, now);
	deliver();
	drop_left = 1000;	/* A's pings are lost; B's timer does not run */
	now += cfg.ping_interval_ns;
	rdmx_hs_timer(&A.hs, now);
	for (uint32_t i = 0; i < cfg.ping_retries; i++) {
		now += cfg.ping_timeout_ns;
		rdmx_hs_timer(&A.hs, now);
	}
	drop_left = 0;
	queued = 0;
	cr_assert_eq(A.hs.state, RDMX_HS_DISCONNECTED);
	cr_assert_eq(B.hs.state, RDMX_HS_CONNECTED);
}

Test(hs, a_new_session_makes_the_other_side_start_over)
{
	only_a_disconnects();
	rdmx_hs_connect(&A.hs, now);
	deliver();
	cr_assert_eq(B.restarted, 1, "B drops what it kept of A's old session");
	cr_assert_eq(A.restarted, 0, "A dropped it when it disconnected");
	assert_connected(RDMX_PROTO_VERSION);
	cr_assert_eq(A.connected, 2);
	cr_assert_eq(B.connected, 2);
}

Test(hs, a_reset_of_an_older_session_is_ignored)
{
	struct rdmx_hs_msg old = { .type = RDMX_HS_RESET, .incarnation = 0xa1,
				   .probe_version = RDMX_HS_PROBE_VERSION,
				   .proto_min = RDMX_PROTO_LEGACY,
				   .proto_max = RDMX_PROTO_VERSION, .session = 1 };

	int acks;

	only_a_disconnects();
	rdmx_hs_connect(&A.hs, now);
	deliver();
	acks = B.sent[RDMX_HS_ACK];
	rdmx_hs_recv(&B.hs, &old, now);
	cr_assert_eq(B.restarted, 1, "no second restart");
	cr_assert_eq(B.sent[RDMX_HS_ACK], acks, "not answered");
	assert_connected(RDMX_PROTO_VERSION);
}

Test(hs, a_peer_that_died_is_reached_in_its_new_incarnation)
{
	only_a_disconnects();
	/* B's process is replaced by a new one on the same address. */
	side_init(&B, 0xb2, RDMX_HS_PROBE_VERSION, RDMX_PROTO_LEGACY, RDMX_PROTO_VERSION);
	rdmx_hs_connect(&A.hs, now);
	deliver();
	assert_connected(RDMX_PROTO_VERSION);
	cr_assert_eq(A.connected, 2);
}

Test(hs, an_ack_to_an_older_reset_is_ignored)
{
	struct rdmx_hs_msg ack = { .type = RDMX_HS_ACK, .incarnation = 0xb1,
				   .peer_incarnation = 0xa1,
				   .probe_version = RDMX_HS_PROBE_VERSION,
				   .proto_min = RDMX_PROTO_LEGACY,
				   .proto_max = RDMX_PROTO_VERSION };

	only_a_disconnects();
	drop_left = 1000;
	rdmx_hs_connect(&A.hs, now);	/* session 2 */
	queued = 0;
	drop_left = 0;
	ack.seq = 1;
	rdmx_hs_recv(&A.hs, &ack, now);
	cr_assert_eq(A.hs.state, RDMX_HS_RESET_SENT, "an answer to session 1");
	ack.seq = 2;
	rdmx_hs_recv(&A.hs, &ack, now);
	cr_assert_eq(A.hs.state, RDMX_HS_PROBING);
}

/* A and B connected, both announcing CLOSE. */
static void connect_closable(void)
{
	A.local.features |= RDMX_HS_FEAT_CLOSE;
	B.local.features |= RDMX_HS_FEAT_CLOSE;
	rdmx_hs_connect(&A.hs, now);
	deliver();
	assert_connected(RDMX_PROTO_VERSION);
}

Test(hs, close_of_the_current_session_closes_the_peer)
{
	connect_closable();
	cr_assert(rdmx_hs_close(&A.hs), "a connected peer that knows CLOSE is told");
	cr_assert_eq(A.hs.state, RDMX_HS_CONNECTED, "the closing side waits for nothing");
	deliver();
	cr_assert_eq(B.hs.state, RDMX_HS_CLOSED, "B is %s", rdmx_hs_state_str(B.hs.state));
	cr_assert_eq(B.closed, 1);
	cr_assert_eq(B.last_err, FI_ECONNRESET);
	cr_assert_eq(B.hs.deadline, 0, "no ping to a closed peer");
	/* A copy that arrives late changes nothing more. */
	rdmx_hs_recv(&B.hs, &A.last_close, now);
	cr_assert_eq(B.closed, 1);
	/* Nor does a connect: the endpoint is gone. */
	rdmx_hs_connect(&B.hs, now);
	cr_assert_eq(B.hs.state, RDMX_HS_CLOSED);
	cr_assert_eq(B.sent[RDMX_HS_RESET], 0);
}

Test(hs, no_close_to_a_peer_that_does_not_know_it)
{
	rdmx_hs_connect(&A.hs, now);
	deliver();
	cr_assert_not(rdmx_hs_close(&A.hs), "B announced no RDMX_HS_FEAT_CLOSE");
	cr_assert_eq(A.sent[RDMX_HS_CLOSE], 0);
	setup();
	connect_closable();
	only_a_disconnects();
	cr_assert_not(rdmx_hs_close(&A.hs), "no session under way");
}

Test(hs, forged_or_old_close_changes_nothing)
{
	struct rdmx_hs_msg close;

	connect_closable();
	/* A's CLOSE of this session, not sent. */
	close = (struct rdmx_hs_msg) { .type = RDMX_HS_CLOSE, .incarnation = 0xa1,
				       .peer_incarnation = 0xb1,
				       .session = A.hs.session, .seq = A.hs.peer_session };
	close.session++;
	rdmx_hs_recv(&B.hs, &close, now);
	close.session--;
	close.seq++;
	rdmx_hs_recv(&B.hs, &close, now);
	close.seq--;
	close.incarnation = 0xa2;
	rdmx_hs_recv(&B.hs, &close, now);
	close.incarnation = 0xa1;
	close.peer_incarnation = 0xb2;
	rdmx_hs_recv(&B.hs, &close, now);
	cr_assert_eq(B.closed, 0, "wrong session or incarnation: ignored");
	cr_assert_eq(B.hs.state, RDMX_HS_CONNECTED);
	/* The right one, as a check that the forgeries were near misses. */
	close.peer_incarnation = 0xb1;
	rdmx_hs_recv(&B.hs, &close, now);
	cr_assert_eq(B.closed, 1);
}

Test(hs, a_close_of_an_older_session_is_ignored)
{
	struct rdmx_hs_msg old;

	connect_closable();
	rdmx_hs_close(&A.hs);
	old = A.last_close;
	queued = 0;			/* the CLOSE is lost: A stays */
	/* A later gives B up and connects again: a new session. */
	only_a_disconnects();
	rdmx_hs_connect(&A.hs, now);
	deliver();
	assert_connected(RDMX_PROTO_VERSION);
	rdmx_hs_recv(&B.hs, &old, now);
	cr_assert_eq(B.closed, 0, "a replay of the first session's CLOSE");
	cr_assert_eq(B.hs.state, RDMX_HS_CONNECTED);
}

Test(hs, a_closed_peer_comes_back_only_as_a_new_endpoint)
{
	struct rdmx_hs_msg reset = { .type = RDMX_HS_RESET, .incarnation = 0xa1,
				     .probe_version = RDMX_HS_PROBE_VERSION,
				     .proto_min = RDMX_PROTO_LEGACY,
				     .proto_max = RDMX_PROTO_VERSION };

	int acks;

	connect_closable();
	rdmx_hs_close(&A.hs);
	deliver();
	cr_assert_eq(B.hs.state, RDMX_HS_CLOSED);
	/* A RESET under the closed incarnation, even of a newer session. */
	reset.session = A.hs.session + 1;
	acks = B.sent[RDMX_HS_ACK];
	rdmx_hs_recv(&B.hs, &reset, now);
	cr_assert_eq(B.hs.state, RDMX_HS_CLOSED, "the closed endpoint does not return");
	cr_assert_eq(B.sent[RDMX_HS_ACK], acks, "and is not answered");
	/* A new endpoint on A's address. */
	side_init(&A, 0xa2, RDMX_HS_PROBE_VERSION, RDMX_PROTO_LEGACY, RDMX_PROTO_VERSION);
	rdmx_hs_connect(&A.hs, now);
	deliver();
	assert_connected(RDMX_PROTO_VERSION);
	cr_assert_eq(B.restarted, 1, "B drops the closed session's leftovers");
}

Test(hs, reopen_lets_a_closed_peer_be_connected_again)
{
	connect_closable();
	rdmx_hs_close(&A.hs);
	deliver();
	side_init(&A, 0xa2, RDMX_HS_PROBE_VERSION, RDMX_PROTO_LEGACY, RDMX_PROTO_VERSION);
	rdmx_hs_reopen(&B.hs);
	cr_assert_eq(B.hs.state, RDMX_HS_DISCONNECTED);
	rdmx_hs_connect(&B.hs, now);	/* B sends first, to the new A */
	deliver();
	assert_connected(RDMX_PROTO_VERSION);
}

Test(hs, close_travels_on_the_wire)
{
	struct rdmx_hs_msg msg = { .type = RDMX_HS_CLOSE, .incarnation = 0xa1,
				   .peer_incarnation = 0xb1, .session = 7, .seq = 3 };
	struct rdmx_hs_msg back;
	struct rdmx_wire_hs wire;
	struct rdmx_pkt pkt;

	rdmx_wire_hs_encode(&wire, &msg);
	cr_assert_eq(rdmx_wire_decode(&wire, rdmx_wire_hs_size(&msg), &pkt), 0,
		     "a CLOSE is valid");
	rdmx_wire_hs_decode(&wire, rdmx_wire_hs_size(&msg), &back);
	cr_assert_eq(back.type, RDMX_HS_CLOSE);
	cr_assert_eq(back.session, 7);
	cr_assert_eq(back.seq, 3);
	cr_assert_eq(back.incarnation, 0xa1);
	cr_assert_eq(back.peer_incarnation, 0xb1);
	wire.hs_type = htole32(RDMX_HS_CLOSE + 1);
	cr_assert_neq(rdmx_wire_decode(&wire, rdmx_wire_hs_size(&msg), &pkt), 0,
		      "the next type is unknown: malformed");
}

/* Gives both sides HOST with these hosts and pids, then connects. */
static void connect_hosts(uint64_t a_host, uint64_t b_host)
{
	A.local.features |= RDMX_HS_FEAT_HOST;
	B.local.features |= RDMX_HS_FEAT_HOST;
	A.local.host = a_host;
	B.local.host = b_host;
	A.local.pid = 100;
	B.local.pid = 200;
	rdmx_hs_connect(&A.hs, now);
	deliver();
	advance(0);
	assert_connected(RDMX_PROTO_VERSION);
}

/* Same host: both announced HOST with one non-zero value; pids travel. */
Test(hs, same_host_when_both_announce_the_same_host)
{
	connect_hosts(0x40, 0x40);
	cr_assert(rdmx_hs_same_host(&A.hs));
	cr_assert(rdmx_hs_same_host(&B.hs));
	cr_assert_eq(A.hs.peer_pid, 200);
	cr_assert_eq(B.hs.peer_pid, 100);
	cr_assert_eq(A.hs.peer_host, 0x40);
}

Test(hs, another_host_is_not_the_same_host)
{
	connect_hosts(0x40, 0x41);
	cr_assert(!rdmx_hs_same_host(&A.hs));
	cr_assert(!rdmx_hs_same_host(&B.hs));
}

Test(hs, an_unknown_host_is_not_the_same_host)
{
	connect_hosts(0, 0);
	cr_assert(!rdmx_hs_same_host(&A.hs), "0 is unknown, even on both sides");
	cr_assert(!rdmx_hs_same_host(&B.hs));
}

/* A side that did not announce HOST: its host counts for nothing. */
Test(hs, a_peer_without_the_feature_is_not_the_same_host)
{
	B.local.host = 0x40;
	B.local.pid = 200;
	A.local.features |= RDMX_HS_FEAT_HOST;
	A.local.host = 0x40;
	rdmx_hs_connect(&A.hs, now);
	deliver();
	advance(0);
	assert_connected(RDMX_PROTO_VERSION);
	cr_assert(!rdmx_hs_same_host(&A.hs));
	cr_assert(!rdmx_hs_same_host(&B.hs));
	cr_assert_eq(A.hs.peer_pid, 0, "no pid without the feature");
	cr_assert_eq(A.hs.peer_host, 0);
}

/* Both sides compute one binding value per session; a new session another. */
Test(hs, both_sides_bind_reads_to_the_same_session_value)
{
	uint64_t a_exposes, b_exposes;

	connect_hosts(0x40, 0x40);
	a_exposes = rdmx_hs_bind(&A.hs, true);
	b_exposes = rdmx_hs_bind(&B.hs, true);
	cr_assert_eq(a_exposes, rdmx_hs_bind(&B.hs, false));
	cr_assert_eq(b_exposes, rdmx_hs_bind(&A.hs, false));
	cr_assert_neq(a_exposes, b_exposes, "each direction its own");
	/* B gives A up and starts over: a new session of B. */
	B.hs.state = RDMX_HS_DISCONNECTED;
	rdmx_hs_connect(&B.hs, now);
	deliver();
	advance(0);
	assert_connected(RDMX_PROTO_VERSION);
	cr_assert_eq(rdmx_hs_bind(&A.hs, true), rdmx_hs_bind(&B.hs, false));
	cr_assert_neq(rdmx_hs_bind(&A.hs, true), a_exposes, "a new session, a new value");
}
