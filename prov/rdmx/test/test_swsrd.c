/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * swsrd: the software reliability engine, run between two engines A and B
 * over a simulated link. The link loses, duplicates, delays and reorders
 * datagrams with a fixed-seed generator, and time is a fake clock that the
 * simulator advances, so every run is exact and repeatable. The property
 * checked throughout is the contract the rdm layer relies on: every send
 * is delivered once, or completes with an error, and completes once.
 *
 * Besides what each test asserts, the simulator checks every datagram the
 * engines emit: it must decode, a DATA packet must carry the psn and epoch
 * its message first went out with, it must not repeat a psn the receiver
 * already acknowledged, it must not read a payload after its done(), and
 * no sender may have more than RDMX_SRD_WINDOW packets unacknowledged.
 */
#include <stdlib.h>

#include "rdmx_test.h"
#include "rdmx_clock.h"
#include "rdmx_swsrd.h"
#include "rdmx_wire.h"

#define US		1000ULL
#define MS		1000000ULL

#define SIM_T0		(1000 * MS)	/* time does not start at zero */
#define SIM_TICK_NS	(10 * US)	/* both engines progress this often */
#define SIM_LATENCY_NS	(5 * US)	/* one way */
#define SIM_JITTER_NS	(2 * US)	/* added to the latency, in order */
#define SIM_REORDER_NS	(30 * US)	/* most a reordered packet is held */

#define SRD_HDR		sizeof(struct rdmx_wire_srd)
#define MSG_LEN		16		/* magic, id, origin, check */
#define MSG_MAGIC	0x6d736721u
#define PKT_MAX		(SRD_HDR + MSG_LEN)
#define MSG_POISON	0xdd		/* a payload after its done() */

#define PPM		1000000u

enum { A, B };

/* One send and what became of it. */
struct sim_msg {
	struct rdmx_swsrd_send	send;		/* wr_id: index in sim.msgs */
	uint8_t			payload[MSG_LEN];
	int			from;		/* A or B */
	unsigned		done_cnt;
	enum rdmx_dev_status	status;		/* of the first done() */
	uint64_t		done_ns;
	uint64_t		first_xmit_ns;	/* 0 until first transmitted */
	uint32_t		epoch;		/* of the first transmission */
	uint32_t		psn;
	unsigned		xmits;		/* DATA packets carrying it */
	unsigned		delivered;	/* times the receiver took it */
};

/* One direction of the link, named by its sender, and what crossed it. */
struct sim_dir {
	uint32_t	loss_ppm;
	uint32_t	dup_ppm;
	uint32_t	reorder_ppm;
	uint32_t	eagain_ppm;	/* xmit refused by the "socket" */
	uint64_t	fifo_ns;	/* in-order packets arrive no earlier */

	uint64_t	data_pkts;	/* DATA handed to xmit, SKIPs included */
	uint64_t	data_lost;	/* of those: dropped or refused */
	uint64_t	data_late;	/* copies held back past later ones */
	uint64_t	skips;
	uint64_t	piggy;		/* DATA carrying acknowledgement fields */

	/* Packets unacknowledged, as the sender learns of acknowledgements. */
	uint32_t	epoch;		/* the sender's session being tracked */
	uint32_t	una;		/* lowest psn not acknowledged */
	uint8_t		*acked;		/* by psn within epoch */
	size_t		acked_cap;
	uint32_t	max_inflight;

	uint8_t		last_data[PKT_MAX];	/* last DATA with a payload */
	size_t		last_data_len;
};

struct sim_node {
	struct rdmx_swsrd	srd;
	struct rdmx_swsrd_peer	peer;		/* the other node */
	struct rdmx_dev_stats	stats;
	struct sim		*sim;
	int			idx;
	enum rdmx_srd_room	room;		/* where received payloads land */
	struct sim_dir		tx;		/* the link away from this node */
};

struct sim_pkt {
	uint64_t	at;		/* delivery time */
	uint64_t	seq;		/* orders equal times */
	int		to;
	size_t		len;
	uint8_t		buf[PKT_MAX];
};

struct sim {
	struct sim_node		node[2];
	struct rdmx_swsrd_cfg	cfg;
	uint64_t		rng;
	uint64_t		next_tick;
	struct sim_pkt		*q;		/* in flight, unsorted */
	size_t			qlen, qcap;
	uint64_t		seq;
	struct sim_msg		*msgs;		/* never moves: sends are linked */
	size_t			nmsgs, msg_cap;
	size_t			finished;	/* messages with a done() */
	/* Drops the next drop_left DATA packets from A carrying drop_psn. */
	uint32_t		drop_psn;
	unsigned		drop_left;
};

static uint64_t sim_now;
static struct sim *g_sim;	/* the test's simulator, freed by the suite */

static uint64_t sim_clock(void)
{
	return sim_now;
}

/* Timing scaled down from the defaults, in the same proportions. */
static const struct rdmx_swsrd_cfg sim_cfg = {
	.rto_init_ns	= 200 * US,
	.rto_min_ns	= 100 * US,
	.rto_max_ns	= 5 * MS,
	.rnr_delay_ns	= 20 * US,
	.ack_delay_ns	= 25 * US,
	.ack_idle_ns	= 5 * US,
	.unreach_ns	= 100 * MS,
	.rnr_retry	= 3,
};

/* xorshift64*: the link's only source of chance. */
static uint64_t sim_rand(struct sim *sim)
{
	uint64_t x = sim->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	sim->rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static bool sim_chance(struct sim *sim, uint32_t ppm)
{
	return ppm && sim_rand(sim) % PPM < ppm;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static uint32_t msg_check(uint32_t id, uint32_t from)
{
	return (id * 2654435761u) ^ (from + 0x5a5a5a5au);
}

/* The message a payload names, after checking it is intact. */
static struct sim_msg *sim_msg_of(struct sim *sim, const uint8_t *payload,
				  size_t len, const char *where)
{
	uint32_t id;

	cr_assert_eq(len, MSG_LEN, "%s: payload of %zu bytes", where, len);
	id = get32(payload + 4);
	cr_assert_eq(get32(payload), MSG_MAGIC,
		     "%s: payload damaged (read after done()?)", where);
	cr_assert_lt(id, sim->nmsgs, "%s: unknown message %u", where, id);
	cr_assert_eq(get32(payload + 12), msg_check(id, get32(payload + 8)),
		     "%s: payload of message %u damaged", where, id);
	return &sim->msgs[id];
}

/* Marks what an acknowledgement delivered to a sender tells it. */
static void sim_track_ack(struct sim_dir *d, const struct rdmx_srd_hdr *hdr)
{
	if (!hdr->ack_epoch || hdr->ack_epoch != d->epoch)
		return;
	for (uint32_t psn = d->una; psn < hdr->ack && psn < d->acked_cap; psn++)
		d->acked[psn] = 1;
	for (unsigned i = 0; i < 64; i++)
		if ((hdr->sack >> i) & 1 && hdr->ack + i < d->acked_cap)
			d->acked[hdr->ack + i] = 1;
	while (d->una < d->acked_cap && d->acked[d->una])
		d->una++;
}

/* Checks and records a DATA packet as its sender hands it to the link. */
static void sim_track_data(struct sim_node *n, const struct rdmx_srd_hdr *hdr,
			   const uint8_t *buf, size_t len)
{
	struct sim_dir *d = &n->tx;
	struct sim_msg *msg;

	d->data_pkts++;
	if (hdr->epoch != d->epoch) {
		d->epoch = hdr->epoch;
		d->una = 0;
		memset(d->acked, 0, d->acked_cap);
	}
	cr_assert_lt(hdr->psn, d->acked_cap, "psn %u out of the test's range",
		     hdr->psn);
	cr_assert_not(d->acked[hdr->psn], "node %d resent psn %u after its ack",
		      n->idx, hdr->psn);
	cr_assert_geq(hdr->psn, d->una);
	d->max_inflight = RDMX_MAX(d->max_inflight, hdr->psn - d->una + 1);
	cr_assert_leq(hdr->psn - d->una + 1, RDMX_SRD_WINDOW,
		      "node %d: psn %u with %u unacknowledged", n->idx, hdr->psn,
		      d->una);
	if (hdr->ack_epoch)
		d->piggy++;
	if (hdr->flags & RDMX_SRD_SKIP) {
		d->skips++;
		return;
	}
	msg = sim_msg_of(n->sim, buf + SRD_HDR, len - SRD_HDR, "xmit");
	cr_assert_eq(msg->from, n->idx);
	if (!msg->xmits++) {
		msg->first_xmit_ns = sim_now;
		msg->epoch = hdr->epoch;
		msg->psn = hdr->psn;
	}
	cr_assert(msg->epoch == hdr->epoch && msg->psn == hdr->psn,
		  "message %u moved from %#x/%u to %#x/%u", get32(buf + SRD_HDR + 4),
		  msg->epoch, msg->psn, hdr->epoch, hdr->psn);
	memcpy(d->last_data, buf, len);
	d->last_data_len = len;
}

/* Puts one copy of a datagram on the link; true if it was held back. */
static bool sim_enqueue(struct sim *sim, struct sim_dir *d, int to,
			const uint8_t *buf, size_t len)
{
	struct sim_pkt *pkt;
	uint64_t at = sim_now + SIM_LATENCY_NS + sim_rand(sim) % (SIM_JITTER_NS + 1);
	bool late = sim_chance(sim, d->reorder_ppm);

	if (late) {
		/* Held back without holding back the packets behind it. */
		at += sim_rand(sim) % (SIM_REORDER_NS + 1);
	} else {
		at = RDMX_MAX(at, d->fifo_ns);
		d->fifo_ns = at;
	}
	if (sim->qlen == sim->qcap) {
		sim->qcap = sim->qcap ? 2 * sim->qcap : 256;
		sim->q = realloc(sim->q, sim->qcap * sizeof(*sim->q));
		cr_assert_not_null(sim->q);
	}
	pkt = &sim->q[sim->qlen++];
	pkt->at = at;
	pkt->seq = sim->seq++;
	pkt->to = to;
	pkt->len = len;
	memcpy(pkt->buf, buf, len);
	return late;
}

static int sim_xmit(void *ctx, struct rdmx_swsrd_peer *peer,
		    const struct iovec *iov, size_t iov_cnt)
{
	struct sim_node *n = ctx;
	struct sim *sim = n->sim;
	struct sim_dir *d = &n->tx;
	struct rdmx_srd_hdr hdr;
	uint8_t buf[PKT_MAX];
	size_t len = 0;
	bool data;

	cr_assert_eq(peer, &n->peer, "xmit to a peer the test never made");
	for (size_t i = 0; i < iov_cnt; i++) {
		cr_assert_leq(len + iov[i].iov_len, PKT_MAX, "datagram too long");
		memcpy(buf + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	cr_assert_eq(rdmx_wire_srd_decode(buf, len, &hdr), 0,
		     "node %d sent a malformed datagram", n->idx);
	data = hdr.type == RDMX_SRD_DATA;
	if (data)
		sim_track_data(n, &hdr, buf, len);

	if (sim_chance(sim, d->eagain_ppm)) {
		d->data_lost += data;
		return -FI_EAGAIN;
	}
	if (data && n->idx == A && sim->drop_left && hdr.psn == sim->drop_psn) {
		sim->drop_left--;
		d->data_lost++;
		return 0;
	}
	if (sim_chance(sim, d->loss_ppm)) {
		d->data_lost += data;
		return 0;
	}
	if (sim_enqueue(sim, d, !n->idx, buf, len))
		d->data_late += data;
	if (sim_chance(sim, d->dup_ppm) && sim_enqueue(sim, d, !n->idx, buf, len))
		d->data_late += data;
	return 0;
}

static void sim_done(void *ctx, struct rdmx_swsrd_send *send,
		     enum rdmx_dev_status status)
{
	struct sim_node *n = ctx;
	struct sim_msg *msg = rdmx_container_of(send, struct sim_msg, send);

	cr_assert_lt(send->wr_id, n->sim->nmsgs);
	cr_assert_eq(msg, &n->sim->msgs[send->wr_id], "done() with a foreign send");
	cr_assert_eq(msg->from, n->idx, "done() on the wrong engine");
	if (!msg->done_cnt++) {
		msg->status = status;
		msg->done_ns = sim_now;
		n->sim->finished++;
	}
	/* The send is the application's again: the engine must not read it. */
	memset(msg->payload, MSG_POISON, sizeof(msg->payload));
}

static const struct rdmx_swsrd_ops sim_ops = {
	.xmit = sim_xmit,
	.done = sim_done,
};

/* (Re)starts the engine of node idx: a new process at the same address. */
static void sim_node_start(struct sim *sim, int idx, uint32_t incarnation)
{
	struct sim_node *n = &sim->node[idx];

	rdmx_swsrd_construct(&n->srd, &sim_ops, n, &sim->cfg, incarnation, &n->stats);
	rdmx_swsrd_peer_construct(&n->srd, &n->peer, &sim->node[!idx], 0);
}

/*
 * Each node learns the other's tag, as after the first challenge: tests
 * of the transport count packets from there. sim_stranger undoes it.
 */
static void sim_introduce(struct sim *sim)
{
	sim->node[A].peer.peer_tag = sim->node[B].peer.local_tag;
	sim->node[B].peer.peer_tag = sim->node[A].peer.local_tag;
}

/* The nodes have never exchanged a packet: neither knows the other's tag. */
static void sim_stranger(struct sim *sim)
{
	sim->node[A].peer.peer_tag = 0;
	sim->node[B].peer.peer_tag = 0;
}

static struct sim *sim_open(const struct rdmx_swsrd_cfg *cfg, size_t msg_cap,
			    uint64_t seed)
{
	struct sim *sim = calloc(1, sizeof(*sim));

	cr_assert_not_null(sim);
	cr_assert_null(g_sim, "one simulator per test");
	g_sim = sim;
	sim_now = SIM_T0;
	rdmx_clock_set(sim_clock);
	sim->cfg = *cfg;
	sim->rng = seed ? seed : 1;
	sim->next_tick = SIM_T0 + SIM_TICK_NS;
	sim->msg_cap = msg_cap;
	sim->msgs = calloc(msg_cap, sizeof(*sim->msgs));
	cr_assert_not_null(sim->msgs);
	for (int i = A; i <= B; i++) {
		struct sim_node *n = &sim->node[i];

		n->sim = sim;
		n->idx = i;
		n->room = RDMX_SRD_ROOM_BUF;
		/* Psns stay below the number of messages plus one window. */
		n->tx.acked_cap = msg_cap + RDMX_SRD_WINDOW;
		n->tx.acked = calloc(n->tx.acked_cap, 1);
		cr_assert_not_null(n->tx.acked);
		sim_node_start(sim, i, i == A ? 0xa0001 : 0xb0001);
	}
	sim_introduce(sim);
	return sim;
}

/* Frees the simulator, also after a failed assertion ended the test. */
static void sim_close(void)
{
	struct sim *sim = g_sim;

	if (!sim)
		return;
	g_sim = NULL;
	for (int i = A; i <= B; i++) {
		rdmx_swsrd_peer_destruct(&sim->node[i].srd, &sim->node[i].peer);
		free(sim->node[i].tx.acked);
	}
	rdmx_clock_set(NULL);
	free(sim->msgs);
	free(sim->q);
	free(sim);
}

TestSuite(swsrd, .fini = sim_close);

/* Sets both directions of the link alike. */
static void sim_link(struct sim *sim, uint32_t loss_ppm, uint32_t dup_ppm,
		     uint32_t reorder_ppm, uint32_t eagain_ppm)
{
	for (int i = A; i <= B; i++) {
		struct sim_dir *d = &sim->node[i].tx;

		d->loss_ppm = loss_ppm;
		d->dup_ppm = dup_ppm;
		d->reorder_ppm = reorder_ppm;
		d->eagain_ppm = eagain_ppm;
	}
}

/* Hands one new message from node from to its engine. */
static struct sim_msg *sim_post(struct sim *sim, int from)
{
	struct sim_node *n = &sim->node[from];
	uint32_t id = (uint32_t) sim->nmsgs;
	struct sim_msg *msg;

	cr_assert_lt(sim->nmsgs, sim->msg_cap, "test posts more than it sized");
	msg = &sim->msgs[sim->nmsgs++];
	msg->from = from;
	put32(msg->payload, MSG_MAGIC);
	put32(msg->payload + 4, id);
	put32(msg->payload + 8, (uint32_t) from);
	put32(msg->payload + 12, msg_check(id, (uint32_t) from));
	msg->send.wr_id = id;
	msg->send.iov[0].iov_base = msg->payload;
	msg->send.iov[0].iov_len = sizeof(msg->payload);
	msg->send.iov_cnt = 1;
	cr_assert_eq(rdmx_swsrd_send(&n->srd, &n->peer, &msg->send), 0);
	return msg;
}

/* Posts cnt messages; returns the id of the first. */
static size_t sim_post_n(struct sim *sim, int from, size_t cnt)
{
	size_t first = sim->nmsgs;

	for (size_t i = 0; i < cnt; i++)
		sim_post(sim, from);
	return first;
}

/* Hands a datagram to node to, as its device would on receipt. */
static bool sim_deliver(struct sim *sim, int to, const uint8_t *buf, size_t len)
{
	struct sim_node *n = &sim->node[to];
	struct rdmx_srd_hdr hdr;
	struct sim_msg *msg;

	cr_assert_eq(rdmx_wire_srd_decode(buf, len, &hdr), 0);
	sim_track_ack(&n->tx, &hdr);
	if (!rdmx_swsrd_recv(&n->srd, &n->peer, &hdr, len - SRD_HDR, n->room, sim_now))
		return false;
	cr_assert(hdr.type == RDMX_SRD_DATA && !(hdr.flags & RDMX_SRD_SKIP),
		  "node %d took a packet of type %d flags %#x", to, hdr.type, hdr.flags);
	cr_assert_eq(n->room, RDMX_SRD_ROOM_BUF, "node %d took data without a receive buffer", to);
	msg = sim_msg_of(sim, buf + SRD_HDR, len - SRD_HDR, "recv");
	cr_assert_neq(msg->from, to, "node %d received its own message", to);
	msg->delivered++;
	return true;
}

/*
 * Runs the link and both engines until stop(sim) holds (checked before
 * every event) or simulated time reaches until. Returns whether stop held.
 */
static bool sim_run(struct sim *sim, uint64_t until, bool (*stop)(const struct sim *))
{
	while (!stop || !stop(sim)) {
		size_t first = 0;
		bool pkt_first;

		for (size_t i = 1; i < sim->qlen; i++)
			if (sim->q[i].at < sim->q[first].at ||
			    (sim->q[i].at == sim->q[first].at &&
			     sim->q[i].seq < sim->q[first].seq))
				first = i;
		pkt_first = sim->qlen && sim->q[first].at <= sim->next_tick;
		if ((pkt_first ? sim->q[first].at : sim->next_tick) > until) {
			sim_now = RDMX_MAX(sim_now, until);
			return false;
		}
		if (pkt_first) {
			struct sim_pkt pkt = sim->q[first];

			sim->q[first] = sim->q[--sim->qlen];
			sim_now = pkt.at;
			sim_deliver(sim, pkt.to, pkt.buf, pkt.len);
		} else {
			sim_now = sim->next_tick;
			sim->next_tick += SIM_TICK_NS;
			rdmx_swsrd_progress(&sim->node[A].srd, sim_now);
			rdmx_swsrd_progress(&sim->node[B].srd, sim_now);
		}
	}
	return true;
}

static bool sim_all_done(const struct sim *sim)
{
	return sim->finished == sim->nmsgs;
}

/* Runs until every message posted so far completed; false past until. */
static bool sim_run_all_done(struct sim *sim, uint64_t until)
{
	return sim_run(sim, until, sim_all_done);
}

/*
 * Lets late duplicates and acks arrive, then checks the engines went
 * quiet: once everything is acknowledged nothing is left on the link.
 */
static void sim_settle(struct sim *sim)
{
	sim_run(sim, sim_now + 2 * MS, NULL);
	cr_assert_eq(sim->qlen, 0, "%zu packets still moving on an idle link",
		     sim->qlen);
}

/* Messages [first, end): completed once with status, delivered `times`. */
static void sim_expect(const struct sim *sim, size_t first, size_t end,
		       enum rdmx_dev_status status, unsigned times)
{
	for (size_t i = first; i < end; i++) {
		const struct sim_msg *msg = &sim->msgs[i];

		cr_assert_eq(msg->done_cnt, 1, "message %zu completed %u times",
			     i, msg->done_cnt);
		cr_assert_eq(msg->status, status, "message %zu: %s, want %s", i,
			     rdmx_dev_status_str(msg->status),
			     rdmx_dev_status_str(status));
		cr_assert_eq(msg->delivered, times, "message %zu delivered %u times",
			     i, msg->delivered);
	}
}

static double sim_ms(uint64_t ns)
{
	return (double) ns / (double) MS;
}

/* 1. A clean link: everything arrives once, nothing is resent. */
Test(swsrd, clean_link_delivers_each_once_without_resending)
{
	const size_t n_ab = 10000, n_ba = 3000;
	struct sim *sim = sim_open(&sim_cfg, n_ab + n_ba, 0x1234);
	struct rdmx_dev_stats *sa = &sim->node[A].stats, *sb = &sim->node[B].stats;

	/* Interleaved, so both directions are busy at the same time. */
	for (size_t i = 0; i < n_ab; i++) {
		sim_post(sim, A);
		if (i % 10 < 3)
			sim_post(sim, B);
	}
	cr_assert_eq(sim->nmsgs, n_ab + n_ba);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 50 * MS),
		  "%zu of %zu done after 50 ms", sim->finished, sim->nmsgs);
	cr_log_info("clean: %zu messages done in %.2f ms, acks A %lu B %lu, "
		    "piggy-backed B->A %lu\n", sim->nmsgs, sim_ms(sim_now - SIM_T0),
		    (unsigned long) sa->acks_sent, (unsigned long) sb->acks_sent,
		    (unsigned long) sim->node[B].tx.piggy);
	/* 64 packets per ~30 us round trip; at one packet a trip it takes 300 ms. */
	cr_assert_lt(sim_now - SIM_T0, 10 * MS);
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	for (int i = A; i <= B; i++) {
		struct rdmx_dev_stats *s = &sim->node[i].stats;

		cr_assert_eq(s->retransmits, 0);
		cr_assert_eq(s->fast_retransmits, 0);
		cr_assert_eq(s->duplicates, 0);
		cr_assert_eq(s->stale, 0);
		cr_assert_eq(s->rnr_sent + s->rnr_received + s->unreachable, 0);
	}
	/* Acks flow both alone and on B's own data, and are coalesced. */
	cr_assert_gt(sb->acks_sent, 0);
	cr_assert_gt(sim->node[B].tx.piggy, 0);
	cr_assert_lt(sb->acks_sent, n_ab / 4, "B sent %lu acks for %zu packets",
		     (unsigned long) sb->acks_sent, n_ab);
	/* The window was used in full. */
	cr_assert_eq(sim->node[A].tx.max_inflight, RDMX_SRD_WINDOW);
}

/*
 * 1b. Acknowledgements without data to ride on: a stream whose packets
 * come closer together than ack_idle_ns is acknowledged once per 16, and
 * a lone packet once its sender fell silent for ack_idle_ns.
 */
Test(swsrd, acks_wait_for_the_sender_to_pause)
{
	struct rdmx_swsrd_cfg cfg = sim_cfg;
	const size_t n = 32;
	struct sim *sim;
	struct rdmx_dev_stats *sb;
	struct sim_msg *lone;

	/* Longer than the tick, so every pass of the stream finds it busy. */
	cfg.ack_idle_ns = 3 * SIM_TICK_NS;
	cfg.ack_delay_ns = 100 * SIM_TICK_NS;
	sim = sim_open(&cfg, n + 1, 0x5eed);
	sb = &sim->node[B].stats;
	for (size_t i = 0; i < n; i++) {
		sim_post(sim, A);
		sim_run(sim, sim_now + SIM_TICK_NS, NULL);
	}
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS));
	sim_expect(sim, 0, n, RDMX_DEV_OK, 1);
	/* One per 16 packets; a pass-by-pass ack would send one per packet. */
	cr_assert_leq(sb->acks_sent, n / 16 + 1, "B sent %lu acks for %zu packets",
		      (unsigned long) sb->acks_sent, n);

	lone = sim_post(sim, A);
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS));
	/* Acknowledged at the first pass after the silence, not at the delay. */
	cr_assert_lt(lone->done_ns - lone->first_xmit_ns,
		     2 * (SIM_LATENCY_NS + SIM_JITTER_NS) + cfg.ack_idle_ns +
		     SIM_TICK_NS + 1);
	sim_settle(sim);
}

/* 2. A lossy link, parameterised by loss, duplication and reordering. */
struct lossy_case {
	uint32_t	loss_ppm;
	uint32_t	dup_ppm;
	uint32_t	reorder_ppm;
	uint32_t	eagain_ppm;
	uint64_t	seed;
};

static void run_lossy(const struct lossy_case *c)
{
	const size_t n_ab = 2000, n_ba = 500;
	struct sim *sim = sim_open(&sim_cfg, n_ab + n_ba, c->seed);
	uint64_t resent[2], lost[2], late[2];

	sim_link(sim, c->loss_ppm, c->dup_ppm, c->reorder_ppm, c->eagain_ppm);
	for (size_t i = 0; i < n_ab; i++) {
		sim_post(sim, A);
		if (i % 4 == 0)
			sim_post(sim, B);
	}
	cr_assert(sim_run_all_done(sim, SIM_T0 + 1000 * MS),
		  "%zu of %zu done after 1 s", sim->finished, sim->nmsgs);
	for (int i = A; i <= B; i++) {
		resent[i] = sim->node[i].stats.retransmits +
			    sim->node[i].stats.fast_retransmits;
		lost[i] = sim->node[i].tx.data_lost;
		late[i] = sim->node[i].tx.data_late;
	}
	cr_log_info("loss %u ppm dup %u reorder %u eagain %u: done in %.2f ms; "
		    "A: %lu data lost, %lu late, %lu rto + %lu fast resent; B: %lu "
		    "lost, %lu late, %lu resent; B saw %lu duplicates\n", c->loss_ppm,
		    c->dup_ppm, c->reorder_ppm, c->eagain_ppm,
		    sim_ms(sim_now - SIM_T0), (unsigned long) lost[A],
		    (unsigned long) late[A],
		    (unsigned long) sim->node[A].stats.retransmits,
		    (unsigned long) sim->node[A].stats.fast_retransmits,
		    (unsigned long) lost[B], (unsigned long) late[B],
		    (unsigned long) resent[B],
		    (unsigned long) sim->node[B].stats.duplicates);
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	for (int i = A; i <= B; i++) {
		cr_assert_eq(sim->node[i].stats.unreachable, 0);
		/* Every lost DATA packet needs one resend. */
		cr_assert_geq(resent[i], lost[i], "node %d resent %lu of %lu lost",
			      i, (unsigned long) resent[i], (unsigned long) lost[i]);
		/*
		 * A packet overtaken by three others looks lost, so it may be
		 * resent too. Resends stay within twice the packets lost or
		 * held back, plus one window: no go-back-N, no resend storm.
		 */
		cr_assert_leq(resent[i], 2 * (lost[i] + late[i]) + RDMX_SRD_WINDOW,
			      "node %d resent %lu for %lu lost, %lu late", i,
			      (unsigned long) resent[i], (unsigned long) lost[i],
			      (unsigned long) late[i]);
	}
	if (c->dup_ppm)
		cr_assert_gt(sim->node[B].stats.duplicates, 0);
}

Test(swsrd, loss_1pct_dup_reorder)
{
	run_lossy(&(struct lossy_case) { 10000, 10000, 50000, 0, 0x1001 });
}

Test(swsrd, loss_10pct_dup_reorder)
{
	run_lossy(&(struct lossy_case) { 100000, 10000, 50000, 0, 0x1010 });
}

Test(swsrd, loss_30pct_dup_reorder)
{
	run_lossy(&(struct lossy_case) { 300000, 10000, 50000, 0, 0x1030 });
}

/* xmit failing with -FI_EAGAIN (acks included) is a loss, not a hang. */
Test(swsrd, xmit_eagain_is_recovered)
{
	run_lossy(&(struct lossy_case) { 0, 0, 0, 50000, 0x1e0a });
}

/* 3. One hole with later packets acknowledged is resent at once. */
Test(swsrd, fast_retransmit_fills_a_hole_before_the_timeout)
{
	struct sim *sim = sim_open(&sim_cfg, 40, 0x3);
	const struct sim_msg *hole;

	sim->drop_psn = 5;
	sim->drop_left = 1;
	sim_post_n(sim, A, 40);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 50 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	hole = &sim->msgs[5];
	cr_assert_eq(hole->psn, 5);
	cr_assert_eq(hole->xmits, 2);
	cr_log_info("fast retransmit: psn 5 completed %.1f us after it was sent\n",
		    (double) (hole->done_ns - hole->first_xmit_ns) / US);
	cr_assert_eq(sim->node[A].stats.fast_retransmits, 1);
	cr_assert_eq(sim->node[A].stats.retransmits, 0);
	cr_assert_lt(hole->done_ns - hole->first_xmit_ns, sim_cfg.rto_min_ns);
}

/*
 * Messages [first, end) sent into a dead link: they fail with UNREACH
 * once the oldest has gone unanswered for unreach_ns (not before, and no
 * later than one more rto_max), each resend counted, backing off.
 */
static void expect_unreachable(const struct sim *sim, size_t first, size_t end,
			       unsigned refusals)
{
	const struct rdmx_swsrd_cfg *cfg = &sim->cfg;
	uint64_t oldest = UINT64_MAX, resends = 0;
	unsigned doublings = 0, most;

	/*
	 * With backoff a packet goes out at most: once, once more per
	 * refusal, once per doubling of rto from rto_min to rto_max, once per
	 * rto_max until unreach_ns, and once for rounding.
	 */
	while ((cfg->rto_min_ns << doublings) < cfg->rto_max_ns)
		doublings++;
	most = 1 + refusals + doublings +
	       (unsigned) (cfg->unreach_ns / cfg->rto_max_ns) + 1;
	sim_expect(sim, first, end, RDMX_DEV_UNREACH, 0);
	for (size_t i = first; i < end; i++)
		if (sim->msgs[i].xmits)
			oldest = RDMX_MIN(oldest, sim->msgs[i].first_xmit_ns);
	cr_assert_neq(oldest, UINT64_MAX, "nothing was ever sent");
	for (size_t i = first; i < end; i++) {
		const struct sim_msg *msg = &sim->msgs[i];

		cr_assert_geq(msg->done_ns, oldest + cfg->unreach_ns,
			      "message %zu failed %.3f ms after the first send", i,
			      sim_ms(msg->done_ns - oldest));
		if (msg->xmits)
			cr_assert_leq(msg->done_ns, msg->first_xmit_ns + cfg->unreach_ns +
				      cfg->rto_max_ns + SIM_TICK_NS,
				      "message %zu failed %.3f ms after it was sent", i,
				      sim_ms(msg->done_ns - msg->first_xmit_ns));
		cr_assert_leq(msg->xmits, most, "message %zu sent %u times (%u with "
			      "backoff)", i, msg->xmits, most);
		if (msg->xmits)
			resends += msg->xmits - 1 - refusals;
	}
	cr_assert_eq(sim->node[A].stats.retransmits, resends,
		     "%lu resends counted, %lu seen",
		     (unsigned long) sim->node[A].stats.retransmits,
		     (unsigned long) resends);
}

static bool sim_a_unreachable(const struct sim *sim)
{
	return sim->node[A].stats.unreachable > 0;
}

/* 4. A peer that stops answering fails its sends; a new session works. */
Test(swsrd, unreachable_peer_fails_sends_then_recovers)
{
	struct sim *sim = sim_open(&sim_cfg, 400, 0x4);
	struct rdmx_dev_stats *sa = &sim->node[A].stats;
	size_t dead, again;
	uint64_t t_down, data_after;

	sim_post_n(sim, A, 100);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 10 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, 100, RDMX_DEV_OK, 1);

	sim->node[A].tx.loss_ppm = PPM;
	t_down = sim_now;
	dead = sim_post_n(sim, A, 100);
	cr_assert(sim_run_all_done(sim, t_down + sim_cfg.unreach_ns +
				   sim_cfg.rto_max_ns + SIM_TICK_NS),
		  "%zu of %zu done", sim->finished, sim->nmsgs);
	cr_log_info("unreachable: failed %.3f ms after the first lost send\n",
		    sim_ms(sim_now - sim->msgs[dead].first_xmit_ns));
	expect_unreachable(sim, dead, dead + 100, 0);
	cr_assert_eq(sa->unreachable, 1);

	/* A failed peer is left alone: no packets until there is a new send. */
	data_after = sim->node[A].tx.data_pkts;
	sim_run(sim, sim_now + 50 * MS, NULL);
	cr_assert_eq(sim->node[A].tx.data_pkts, data_after);

	sim->node[A].tx.loss_ppm = 0;
	again = sim_post_n(sim, A, 100);
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS));
	sim_settle(sim);
	sim_expect(sim, again, again + 100, RDMX_DEV_OK, 1);
	cr_assert_neq(sim->msgs[again].epoch, sim->msgs[0].epoch, "no new session");
	cr_assert_eq(sim->msgs[again].psn, 0);
	cr_assert_eq(sa->unreachable, 1);
	cr_assert_eq(sim->node[B].stats.stale, 0);
}

static bool sim_some_done(const struct sim *sim)
{
	return sim->finished >= 50;
}

static bool sim_b_refused(const struct sim *sim)
{
	return sim->node[B].stats.rnr_sent > 0;
}

/* 5a. No receive buffer: RNR after rnr_retry retries, the psn is skipped. */
Test(swsrd, rnr_exhausted_completes_rnr_and_skips_the_psn)
{
	struct sim *sim = sim_open(&sim_cfg, 300, 0x5a);
	const unsigned tries = sim_cfg.rnr_retry + 1;
	size_t later;

	sim->node[B].room = RDMX_SRD_ROOM_NONE;
	sim_post_n(sim, A, 4);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 5 * MS));
	cr_log_info("rnr: 4 sends refused %u times each, done in %.1f us\n", tries,
		    (double) (sim_now - SIM_T0) / US);
	sim_expect(sim, 0, 4, RDMX_DEV_RNR, 0);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(sim->msgs[i].xmits, tries, "message %zu sent %u times",
			     i, sim->msgs[i].xmits);
	cr_assert_eq(sim->node[A].stats.rnr_received, 4 * tries);
	cr_assert_eq(sim->node[B].stats.rnr_sent, 4 * tries);
	/* Refusals are not losses. */
	cr_assert_eq(sim->node[A].stats.retransmits, 0);

	/* More than a window later: the four psns must have been filled. */
	sim->node[B].room = RDMX_SRD_ROOM_BUF;
	later = sim_post_n(sim, A, 200);
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS),
		  "%zu of %zu done: the skipped psns block the window",
		  sim->finished, sim->nmsgs);
	sim_settle(sim);
	sim_expect(sim, later, later + 200, RDMX_DEV_OK, 1);
	/* Each SKIP went out with the RNR completion, not as a resend. */
	cr_assert_eq(sim->node[A].tx.skips, 4);
	cr_assert_eq(sim->node[A].stats.retransmits, 0);
	cr_assert_eq(sim->node[A].stats.fast_retransmits, 0);
	cr_assert_eq(sim->node[A].stats.unreachable, 0);
	cr_assert_eq(sim->node[A].stats.rnr_received, 4 * tries);
}

/* 5c. A packet larger than the receiver's buffers fails at once, MSGSIZE. */
Test(swsrd, too_big_completes_msgsize_and_skips_the_psn)
{
	struct sim *sim = sim_open(&sim_cfg, 300, 0x5c);
	size_t later;

	sim->node[B].room = RDMX_SRD_ROOM_SHORT;
	sim_post_n(sim, A, 4);
	cr_assert(sim_run_all_done(sim, SIM_T0 + 5 * MS));
	sim_expect(sim, 0, 4, RDMX_DEV_MSGSIZE, 0);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(sim->msgs[i].xmits, 1, "message %zu sent %u times: "
			     "no retry can fit", i, sim->msgs[i].xmits);
	sim->node[B].room = RDMX_SRD_ROOM_BUF;
	later = sim_post_n(sim, A, 200);
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS));
	sim_settle(sim);
	sim_expect(sim, later, later + 200, RDMX_DEV_OK, 1);
	cr_assert_eq(sim->node[A].tx.skips, 4);
	cr_assert_eq(sim->node[A].stats.unreachable, 0);
}

/* 5b. A refused send retried after buffers return is delivered once. */
Test(swsrd, rnr_retry_delivers_once_buffers_return)
{
	struct sim *sim = sim_open(&sim_cfg, 1, 0x5b);
	const struct sim_msg *msg;

	sim->node[B].room = RDMX_SRD_ROOM_NONE;
	msg = sim_post(sim, A);
	cr_assert(sim_run(sim, SIM_T0 + MS, sim_b_refused));
	sim->node[B].room = RDMX_SRD_ROOM_BUF;
	cr_assert(sim_run_all_done(sim, SIM_T0 + 5 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, 1, RDMX_DEV_OK, 1);
	cr_assert_eq(msg->xmits, 2);
	cr_assert_eq(sim->node[A].stats.rnr_received, 1);
	cr_assert_eq(sim->node[B].stats.rnr_sent, 1);
	cr_assert_eq(sim->node[A].stats.retransmits, 0);
	/* The retry waited rnr_delay, not a retransmission timeout. */
	cr_log_info("rnr retry: delivered %.1f us after the first send\n",
		    (double) (msg->done_ns - msg->first_xmit_ns) / US);
	cr_assert_lt(msg->done_ns - msg->first_xmit_ns, sim_cfg.rto_init_ns);
}

/* 5c. A refused send whose retry is lost is resent with backoff. */
Test(swsrd, refused_then_lost_send_backs_off)
{
	struct sim *sim = sim_open(&sim_cfg, 1, 0x5c);

	sim->node[B].room = RDMX_SRD_ROOM_NONE;
	sim_post(sim, A);
	cr_assert(sim_run(sim, SIM_T0 + MS, sim_b_refused));
	sim->node[B].room = RDMX_SRD_ROOM_BUF;
	sim->node[A].tx.loss_ppm = PPM;
	cr_assert(sim_run_all_done(sim, SIM_T0 + sim_cfg.unreach_ns +
				   sim_cfg.rto_max_ns + MS));
	cr_log_info("refused then lost: sent %u times, %lu counted resends\n",
		    sim->msgs[0].xmits,
		    (unsigned long) sim->node[A].stats.retransmits);
	expect_unreachable(sim, 0, 1, 1);
}

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
	rdmx_swsrd_peer_destruct(&sim->node[A].srd, &sim->node[A].peer);
	sim_node_start(sim, A, 0xa0002);
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
	rdmx_swsrd_peer_destruct(&sim->node[A].srd, &sim->node[A].peer);
	sim_node_start(sim, A, 0xa0002);
	sim->node[A].tx.loss_ppm = 0;
	/* Fewer than a window, so a reset receiver would take them again. */
	live = sim_post_n(sim, A, 30);
	cr_assert(sim_run_all_done(sim, sim_now + 10 * MS));
	sim_settle(sim);
	sim_expect(sim, live, live + 30, RDMX_DEV_OK, 1);
	expect_stale_then_live(sim, &old);
}

/* Keeps node from's engine holding at least backlog unsent messages. */
static void sim_keep_busy(struct sim *sim, int from, size_t backlog)
{
	while (sim->nmsgs - sim->finished < backlog)
		sim_post(sim, from);
}

/* Runs tick by tick, A kept busy, until A's cwnd is full; the time taken. */
static uint64_t run_until_cwnd_full(struct sim *sim, uint64_t limit)
{
	uint64_t start = sim_now;

	while (sim->node[A].peer.cwnd_x16 < RDMX_SRD_WINDOW * 16) {
		cr_assert_lt(sim_now - start, limit, "cwnd %u after %.2f ms",
			     sim->node[A].peer.cwnd_x16, sim_ms(sim_now - start));
		sim_keep_busy(sim, A, 2 * RDMX_SRD_WINDOW);
		sim_run(sim, sim_now + SIM_TICK_NS, NULL);
	}
	return sim_now - start;
}

/* 7. The window: at most RDMX_SRD_WINDOW in flight; cwnd halves and regrows. */
Test(swsrd, window_is_bounded_and_cwnd_follows_loss)
{
	struct sim *sim = sim_open(&sim_cfg, 60000, 0x7);
	const uint32_t full = RDMX_SRD_WINDOW * 16;
	uint32_t cwnd_min = UINT32_MAX;
	uint64_t grow, regrow, t_loss;

	grow = run_until_cwnd_full(sim, 20 * MS);
	cr_assert_eq(sim->node[A].tx.max_inflight, RDMX_SRD_WINDOW);

	/* Under 10% loss, sampled every tick for 2 ms. */
	sim->node[A].tx.loss_ppm = 100000;
	for (t_loss = sim_now; sim_now < t_loss + 2 * MS;) {
		sim_keep_busy(sim, A, 2 * RDMX_SRD_WINDOW);
		sim_run(sim, sim_now + SIM_TICK_NS, NULL);
		cwnd_min = RDMX_MIN(cwnd_min, sim->node[A].peer.cwnd_x16);
	}
	cr_assert_leq(cwnd_min, full / 2, "cwnd never halved: low %u", cwnd_min);
	cr_assert_geq(cwnd_min, 16, "cwnd fell below one packet: %u", cwnd_min);

	sim->node[A].tx.loss_ppm = 0;
	regrow = run_until_cwnd_full(sim, 50 * MS);
	cr_log_info("cwnd: full in %.2f ms, low %u/16 under loss, full again in "
		    "%.2f ms\n", sim_ms(grow), cwnd_min, sim_ms(regrow));
	cr_assert(sim_run_all_done(sim, sim_now + 100 * MS));
	sim_settle(sim);
	sim_expect(sim, 0, sim->nmsgs, RDMX_DEV_OK, 1);
	cr_assert_leq(sim->node[A].tx.max_inflight, RDMX_SRD_WINDOW);
}

/* 8. Destroying a peer flushes what is in flight and what waits, once. */
Test(swsrd, destruct_flushes_every_outstanding_send_once)
{
	struct sim *sim = sim_open(&sim_cfg, 200, 0x8);
	size_t ok = 0, flushed = 0;
	uint64_t data;

	/* Some done, then the link dies with a window in flight and a queue. */
	sim_post_n(sim, A, 200);
	cr_assert(sim_run(sim, SIM_T0 + 10 * MS, sim_some_done));
	sim->node[A].tx.loss_ppm = PPM;
	sim_run(sim, sim_now + 500 * US, NULL);
	cr_assert_lt(sim->finished, 200 - RDMX_SRD_WINDOW, "too few left waiting");
	rdmx_swsrd_peer_destruct(&sim->node[A].srd, &sim->node[A].peer);
	cr_assert_eq(sim->finished, 200);
	for (size_t i = 0; i < 200; i++) {
		const struct sim_msg *msg = &sim->msgs[i];

		cr_assert_eq(msg->done_cnt, 1, "message %zu: %u done()", i,
			     msg->done_cnt);
		cr_assert(msg->status == RDMX_DEV_OK ||
			  msg->status == RDMX_DEV_FLUSHED, "message %zu: %s", i,
			  rdmx_dev_status_str(msg->status));
		/* Only what B acknowledged is OK; the rest never reached it. */
		cr_assert_eq(msg->delivered, msg->status == RDMX_DEV_OK);
		ok += msg->status == RDMX_DEV_OK;
		flushed += msg->status == RDMX_DEV_FLUSHED;
	}
	cr_log_info("destruct: %zu ok, %zu flushed\n", ok, flushed);
	cr_assert_geq(ok, 50);

	/* The engine forgets the peer: no timer fires for it afterwards. */
	data = sim->node[A].tx.data_pkts;
	sim_run(sim, sim_now + 2 * sim_cfg.unreach_ns, NULL);
	cr_assert_eq(sim->node[A].tx.data_pkts, data);
	for (size_t i = 0; i < 200; i++)
		cr_assert_eq(sim->msgs[i].done_cnt, 1);
	cr_assert_eq(sim->node[A].stats.unreachable, 0);
}

/*
 * A path that fails one way: A's packets are all lost, B's reach A. B
 * hears nothing and gives A up after the unreachable timeout; A still
 * hears B's resends, so it keeps its sends going past that timeout (a
 * flood that costs a live peer's packets must not end its session) and
 * gives B up only at four of them.
 */
Test(swsrd, a_peer_still_heard_is_given_up_only_much_later)
{
	struct sim *sim = sim_open(&sim_cfg, 200, 0x4b);
	uint64_t t_down;

	sim->node[A].tx.loss_ppm = PPM;
	t_down = sim_now;
	sim_post_n(sim, A, 10);
	sim_post_n(sim, B, 10);
	sim_run(sim, t_down + sim_cfg.unreach_ns + sim_cfg.rto_max_ns + SIM_TICK_NS, NULL);
	cr_assert_eq(sim->node[B].stats.unreachable, 1, "B heard nothing from A");
	cr_assert_eq(sim->node[A].stats.unreachable, 0, "A gave up a peer it hears");
	/* B keeps A busy: its next session's packets carry A's tag too. */
	sim_post_n(sim, B, 10);
	cr_assert(sim_run_all_done(sim, t_down + 4 * sim_cfg.unreach_ns +
				   2 * sim_cfg.rto_max_ns + SIM_TICK_NS),
		  "%zu of %zu done", sim->finished, sim->nmsgs);
	cr_assert_geq(sim->node[A].stats.unreachable, 1);
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

/* 9. The swsrd header codec. */

/* Byte offsets of the swsrd header fields (docs/protocol.md). */
enum {
	SRD_OFF_MAGIC = 0,
	SRD_OFF_TYPE = 2,
	SRD_OFF_FLAGS = 3,
	SRD_OFF_EPOCH = 4,
	SRD_OFF_PSN = 8,
	SRD_OFF_ACK_EPOCH = 12,
	SRD_OFF_ACK = 16,
	SRD_OFF_RESERVED = 20,
	SRD_OFF_SACK = 24,
	SRD_OFF_DST_TAG = 32,
	SRD_OFF_SRC_TAG = 40,
};

static const struct rdmx_srd_hdr srd_sample = {
	.type = RDMX_SRD_DATA,
	.epoch = 0x89abcdef,
	.psn = 0xfedcba98,
	.ack_epoch = 0x01234567,
	.ack = 0x76543210,
	.sack = 0x8000000000000003ULL,
	.dst_tag = 0x0123456789abcdefULL,
	.src_tag = 0xfedcba9876543210ULL,
};

/* A heap datagram of exactly SRD_HDR + payload bytes holding hdr. */
static uint8_t *srd_packet(const struct rdmx_srd_hdr *hdr, size_t payload)
{
	uint8_t *pkt = malloc(SRD_HDR + payload);

	cr_assert_not_null(pkt);
	rdmx_wire_srd_encode((struct rdmx_wire_srd *) pkt, hdr);
	memset(pkt + SRD_HDR, 0x77, payload);
	return pkt;
}

static void srd_expect_rejected(const uint8_t *pkt, size_t len, const char *why)
{
	struct rdmx_srd_hdr hdr;

	cr_assert_eq(rdmx_wire_srd_decode(pkt, len, &hdr), -FI_EINVAL,
		     "%s: accepted", why);
}

/* The sample DATA packet, accepted, then refused with byte off set to val. */
static void srd_expect_mutant_rejected(size_t off, uint8_t val, const char *why)
{
	uint8_t *pkt = srd_packet(&srd_sample, 4);
	struct rdmx_srd_hdr hdr;

	cr_assert_eq(rdmx_wire_srd_decode(pkt, SRD_HDR + 4, &hdr), 0);
	pkt[off] = val;
	srd_expect_rejected(pkt, SRD_HDR + 4, why);
	free(pkt);
}

static uint64_t srd_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

Test(swsrd, wire_round_trip_every_type)
{
	static const struct { enum rdmx_srd_type type; uint32_t flags; size_t payload; }
	forms[] = {
		{ RDMX_SRD_DATA, 0, 9 },
		{ RDMX_SRD_DATA, 0, 0 },
		{ RDMX_SRD_DATA, RDMX_SRD_SKIP, 0 },
		{ RDMX_SRD_ACK, 0, 0 },
		{ RDMX_SRD_RNR, 0, 0 },
		{ RDMX_SRD_CHALLENGE, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct rdmx_srd_hdr in = srd_sample, out;
		uint8_t *pkt;

		in.type = forms[i].type;
		in.flags = forms[i].flags;
		in.psn += (uint32_t) i;
		if (in.type == RDMX_SRD_CHALLENGE)
			in.ack_epoch = 0;
		pkt = srd_packet(&in, forms[i].payload);
		memset(&out, 0xee, sizeof(out));
		cr_assert_eq(rdmx_wire_srd_decode(pkt, SRD_HDR + forms[i].payload, &out),
			     0, "form %zu refused", i);
		cr_assert_eq(out.type, in.type);
		cr_assert_eq(out.flags, in.flags);
		cr_assert_eq(out.epoch, in.epoch);
		cr_assert_eq(out.psn, in.psn);
		cr_assert_eq(out.ack_epoch, in.ack_epoch);
		cr_assert_eq(out.ack, in.ack);
		cr_assert_eq(out.sack, in.sack);
		cr_assert_eq(out.dst_tag, in.dst_tag);
		cr_assert_eq(out.src_tag, in.src_tag);
		free(pkt);
	}
}

Test(swsrd, wire_layout_is_little_endian)
{
	struct rdmx_srd_hdr in = srd_sample;
	uint8_t *pkt;

	in.flags = RDMX_SRD_SKIP;
	pkt = srd_packet(&in, 0);
	cr_assert_eq(pkt[SRD_OFF_MAGIC], 'S');
	cr_assert_eq(pkt[SRD_OFF_MAGIC + 1], 'Y');
	cr_assert_eq(pkt[SRD_OFF_TYPE], RDMX_SRD_DATA);
	cr_assert_eq(pkt[SRD_OFF_FLAGS], RDMX_SRD_SKIP);
	cr_assert_eq(srd_le(pkt + SRD_OFF_EPOCH, 4), in.epoch);
	cr_assert_eq(srd_le(pkt + SRD_OFF_PSN, 4), in.psn);
	cr_assert_eq(srd_le(pkt + SRD_OFF_ACK_EPOCH, 4), in.ack_epoch);
	cr_assert_eq(srd_le(pkt + SRD_OFF_ACK, 4), in.ack);
	cr_assert_eq(srd_le(pkt + SRD_OFF_RESERVED, 4), 0);
	cr_assert_eq(srd_le(pkt + SRD_OFF_SACK, 8), in.sack);
	cr_assert_eq(srd_le(pkt + SRD_OFF_DST_TAG, 8), in.dst_tag);
	cr_assert_eq(srd_le(pkt + SRD_OFF_SRC_TAG, 8), in.src_tag);
	free(pkt);
}

Test(swsrd, wire_rejects_short_packets)
{
	for (size_t len = 0; len < SRD_HDR; len++) {
		uint8_t *full = srd_packet(&srd_sample, 0);
		uint8_t *pkt = malloc(len ? len : 1);

		/* Exactly len bytes on the heap: an over-read trips ASan. */
		cr_assert_not_null(pkt);
		memcpy(pkt, full, len);
		srd_expect_rejected(pkt, len, "short");
		free(pkt);
		free(full);
	}
}

Test(swsrd, wire_rejects_bad_magic_and_type)
{
	srd_expect_mutant_rejected(SRD_OFF_MAGIC, 'X', "bad magic low byte");
	srd_expect_mutant_rejected(SRD_OFF_MAGIC + 1, 'X', "the untagged header's magic");
	srd_expect_mutant_rejected(SRD_OFF_TYPE, 0, "type 0");
	srd_expect_mutant_rejected(SRD_OFF_TYPE, RDMX_SRD_TYPE_MAX, "type max");
	srd_expect_mutant_rejected(SRD_OFF_TYPE, 0xff, "type 255");
}

Test(swsrd, wire_rejects_unknown_flags_and_reserved)
{
	for (unsigned bit = 0; bit < 8; bit++)
		if (!((1u << bit) & RDMX_SRD_FLAGS_KNOWN))
			srd_expect_mutant_rejected(SRD_OFF_FLAGS, (uint8_t) (1u << bit),
						   "unknown flag");
	for (size_t i = 0; i < 4; i++)
		srd_expect_mutant_rejected(SRD_OFF_RESERVED + i, 1, "reserved");
}

/* Every packet names its sender's tag; a CHALLENGE carries nothing else. */
Test(swsrd, wire_rejects_untagged_and_loaded_challenges)
{
	struct rdmx_srd_hdr in = srd_sample;
	uint8_t *pkt;

	in.src_tag = 0;
	pkt = srd_packet(&in, 4);
	srd_expect_rejected(pkt, SRD_HDR + 4, "src_tag 0");
	free(pkt);
	in = srd_sample;
	in.type = RDMX_SRD_CHALLENGE;
	pkt = srd_packet(&in, 0);
	srd_expect_rejected(pkt, SRD_HDR, "a CHALLENGE with acknowledgement fields");
	free(pkt);
	in.ack_epoch = 0;
	in.flags = RDMX_SRD_TOO_BIG;
	pkt = srd_packet(&in, 0);
	srd_expect_rejected(pkt, SRD_HDR, "a CHALLENGE with flags");
	free(pkt);
	in.flags = 0;
	pkt = srd_packet(&in, 1);
	srd_expect_rejected(pkt, SRD_HDR + 1, "a CHALLENGE with a payload");
	free(pkt);
}

Test(swsrd, wire_rejects_payload_on_ack_rnr_and_skip)
{
	static const struct { enum rdmx_srd_type type; uint32_t flags; } forms[] = {
		{ RDMX_SRD_ACK, 0 },
		{ RDMX_SRD_RNR, 0 },
		{ RDMX_SRD_DATA, RDMX_SRD_SKIP },
	};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct rdmx_srd_hdr in = srd_sample;
		uint8_t *pkt;

		in.type = forms[i].type;
		in.flags = forms[i].flags;
		pkt = srd_packet(&in, 1);
		srd_expect_rejected(pkt, SRD_HDR + 1, "payload on a control packet");
		free(pkt);
	}
	/* SKIP is a DATA flag: an ACK or RNR carrying it is malformed. */
	for (enum rdmx_srd_type t = RDMX_SRD_ACK; t <= RDMX_SRD_RNR; t++) {
		struct rdmx_srd_hdr in = srd_sample;
		uint8_t *pkt;

		in.type = t;
		in.flags = RDMX_SRD_SKIP;
		pkt = srd_packet(&in, 0);
		srd_expect_rejected(pkt, SRD_HDR, "skip flag on a control packet");
		free(pkt);
	}
}
