/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * swsrd tests: the simulated link and the two engines on it (rdmx_test_srd.h
 * says what it checks), and the swsrd suite, whose fini frees it.
 */
#include "rdmx_test_srd.h"
#include "rdmx_clock.h"

uint64_t sim_now;
static struct sim *g_sim;	/* the test's simulator, freed by the suite */

static uint64_t sim_clock(void)
{
	return sim_now;
}

/* Timing scaled down from the defaults, in the same proportions. */
const struct rdmx_swsrd_cfg sim_cfg = {
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
	uint32_t ack = hdr->ack - d->psn_base;

	if (!hdr->ack_epoch || hdr->ack_epoch != d->epoch)
		return;
	for (uint32_t psn = d->una; psn < ack && psn < d->acked_cap; psn++)
		d->acked[psn] = 1;
	for (unsigned i = 0; i < 64; i++)
		if ((hdr->sack >> i) & 1 && ack + i < d->acked_cap)
			d->acked[ack + i] = 1;
	while (d->una < d->acked_cap && d->acked[d->una])
		d->una++;
}

/* Checks and records a DATA packet as its sender hands it to the link. */
static void sim_track_data(struct sim_node *n, const struct rdmx_srd_hdr *hdr,
			   const uint8_t *buf, size_t len)
{
	struct sim_dir *d = &n->tx;
	uint32_t psn = hdr->psn - d->psn_base;
	struct sim_msg *msg;

	d->data_pkts++;
	if (hdr->epoch != d->epoch) {
		d->epoch = hdr->epoch;
		d->una = 0;
		memset(d->acked, 0, d->acked_cap);
	}
	cr_assert_lt(psn, d->acked_cap, "psn %u out of the test's range", hdr->psn);
	cr_assert_not(d->acked[psn], "node %d resent psn %u after its ack",
		      n->idx, hdr->psn);
	cr_assert_geq(psn, d->una);
	d->max_inflight = RDMX_MAX(d->max_inflight, psn - d->una + 1);
	cr_assert_leq(psn - d->una + 1, n->peer.wnd_max,
		      "node %d: psn %u with %u unacknowledged", n->idx, hdr->psn,
		      d->una + d->psn_base);
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

/* Puts one copy of a datagram on path's link; true if it was held back. */
static bool sim_enqueue(struct sim *sim, struct sim_dir *d, unsigned path, int to,
			const uint8_t *buf, size_t len)
{
	struct sim_pkt *pkt;
	uint64_t at = sim_now + SIM_LATENCY_NS + d->queue_ns + d->path_delay_ns[path] +
		      sim_rand(sim) % (SIM_JITTER_NS + 1);
	bool late = sim_chance(sim, d->reorder_ppm);

	if (late) {
		/* Held back without holding back the packets behind it. */
		at += sim_rand(sim) % (SIM_REORDER_NS + 1);
	} else {
		at = RDMX_MAX(at, d->fifo_ns[path]);
		d->fifo_ns[path] = at;
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

static int sim_xmit(void *ctx, struct rdmx_swsrd_peer *peer, unsigned path,
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
	cr_assert_lt(path, RDMX_MAX(sim->cfg.paths, 1), "xmit by path %u", path);
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
	cr_assert(data || !path, "node %d sent a control packet by path %u", n->idx, path);
	d->path_pkts[path] += data;

	if (sim_chance(sim, d->eagain_ppm)) {
		d->data_lost += data;
		return -FI_EAGAIN;
	}
	if (data && n->idx == A && sim->drop_left && hdr.psn == sim->drop_psn) {
		sim->drop_left--;
		d->data_lost++;
		return 0;
	}
	/*
	 * By another path than the first, a packet without the receiver's
	 * tag is challenged at a port nobody reads (the udp device's path
	 * sockets): as good as lost.
	 */
	if (sim_chance(sim, d->loss_ppm) || sim_chance(sim, d->path_loss_ppm[path]) ||
	    (path && hdr.dst_tag != sim->node[!n->idx].peer.local_tag)) {
		d->data_lost += data;
		return 0;
	}
	if (sim_enqueue(sim, d, path, !n->idx, buf, len))
		d->data_late += data;
	if (sim_chance(sim, d->dup_ppm) && sim_enqueue(sim, d, path, !n->idx, buf, len))
		d->data_late += data;
	return 0;
}

static void sim_done(void *ctx, struct rdmx_swsrd_send *send, unsigned pkt,
		     enum rdmx_dev_status status)
{
	struct sim_node *n = ctx;
	struct sim_msg *msg = rdmx_container_of(send, struct sim_msg, send);

	cr_assert_eq(pkt, 0, "a message of one packet");
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
void sim_node_start(struct sim *sim, int idx, uint32_t incarnation)
{
	struct sim_node *n = &sim->node[idx];

	cr_assert_eq(rdmx_swsrd_construct(&n->srd, &sim_ops, n, &sim->cfg, incarnation,
					  &n->stats), 0);
	rdmx_swsrd_peer_construct(&n->srd, &n->peer, &sim->node[!idx], 0);
}

/* Keeps node from's engine holding at least backlog unsent messages. */
void sim_keep_busy(struct sim *sim, int from, size_t backlog)
{
	while (sim->nmsgs - sim->finished < backlog)
		sim_post(sim, from);
}

/*
 * Node from's session toward the other continues from psn, as after that
 * many packets (the wrap past 2^32 comes after 48 minutes of a stream of
 * 1.5 million packets a second).
 */
void sim_start_at_psn(struct sim *sim, int from, uint32_t psn)
{
	struct rdmx_swsrd_peer *tx = &sim->node[from].peer, *rx = &sim->node[!from].peer;

	tx->snd_una = tx->snd_nxt = tx->recover_psn = psn;
	tx->sack_end = psn + RDMX_SRD_SACK_BITS;
	rx->rx_known = true;
	rx->rx_epoch = tx->tx_epoch;
	rx->rcv_nxt = psn;
	sim->node[from].tx.epoch = tx->tx_epoch;
	sim->node[from].tx.psn_base = psn;
}

/* Node idx's process ends, and a new one starts at its address. */
void sim_node_restart(struct sim *sim, int idx, uint32_t incarnation)
{
	rdmx_swsrd_peer_destruct(&sim->node[idx].srd, &sim->node[idx].peer);
	rdmx_swsrd_destruct(&sim->node[idx].srd);
	sim_node_start(sim, idx, incarnation);
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
void sim_stranger(struct sim *sim)
{
	sim->node[A].peer.peer_tag = 0;
	sim->node[B].peer.peer_tag = 0;
}

struct sim *sim_open(const struct rdmx_swsrd_cfg *cfg, size_t msg_cap,
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
		n->tx.acked_cap = msg_cap + RDMX_SRD_WINDOW_MAX;
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
		rdmx_swsrd_destruct(&sim->node[i].srd);
		free(sim->node[i].tx.acked);
	}
	rdmx_clock_set(NULL);
	free(sim->msgs);
	free(sim->q);
	free(sim);
}

TestSuite(swsrd, .fini = sim_close);

/* Sets both directions of the link alike. */
void sim_link(struct sim *sim, uint32_t loss_ppm, uint32_t dup_ppm,
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

/*
 * Hands one new message from node from to its engine; more: as a send
 * with more to follow (RDMX_DEV_SEND_MORE); awaited: one its sender waits
 * on (RDMX_DEV_SEND_AWAITED, its packets ask for an ack at once).
 */
static struct sim_msg *sim_post_send(struct sim *sim, int from, bool more, bool awaited)
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
	msg->send.awaited = awaited;
	cr_assert_eq(rdmx_swsrd_send(&n->srd, &n->peer, &msg->send, more), 0);
	return msg;
}

struct sim_msg *sim_post_more(struct sim *sim, int from, bool more)
{
	return sim_post_send(sim, from, more, false);
}

struct sim_msg *sim_post(struct sim *sim, int from)
{
	return sim_post_send(sim, from, false, false);
}

struct sim_msg *sim_post_awaited(struct sim *sim, int from)
{
	return sim_post_send(sim, from, false, true);
}

/* Posts cnt messages; returns the id of the first. */
size_t sim_post_n(struct sim *sim, int from, size_t cnt)
{
	size_t first = sim->nmsgs;

	for (size_t i = 0; i < cnt; i++)
		sim_post(sim, from);
	return first;
}

/* Hands a datagram to node to, as its device would on receipt. */
bool sim_deliver(struct sim *sim, int to, const uint8_t *buf, size_t len)
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

/* When pkt is taken: as it arrives, or when its receiver wakes. */
static uint64_t sim_pkt_at(const struct sim *sim, const struct sim_pkt *pkt)
{
	return RDMX_MAX(pkt->at, sim->node[pkt->to].asleep_until);
}

/*
 * Runs the link and both engines until stop(sim) holds (checked before
 * every event) or simulated time reaches until. Returns whether stop held.
 */
bool sim_run(struct sim *sim, uint64_t until, bool (*stop)(const struct sim *))
{
	while (!stop || !stop(sim)) {
		size_t first = 0;
		uint64_t at = sim->qlen ? sim_pkt_at(sim, &sim->q[0]) : 0;
		bool pkt_first;

		for (size_t i = 1; i < sim->qlen; i++) {
			uint64_t at_i = sim_pkt_at(sim, &sim->q[i]);

			if (at_i < at || (at_i == at && sim->q[i].seq < sim->q[first].seq)) {
				first = i;
				at = at_i;
			}
		}
		pkt_first = sim->qlen && at <= sim->next_tick;
		if ((pkt_first ? at : sim->next_tick) > until) {
			sim_now = RDMX_MAX(sim_now, until);
			return false;
		}
		if (pkt_first) {
			struct sim_pkt pkt = sim->q[first];

			sim->q[first] = sim->q[--sim->qlen];
			sim_now = at;
			sim_deliver(sim, pkt.to, pkt.buf, pkt.len);
		} else {
			sim_now = sim->next_tick;
			sim->next_tick += SIM_TICK_NS;
			for (int i = A; i <= B; i++)
				if (sim_now >= sim->node[i].asleep_until)
					rdmx_swsrd_progress(&sim->node[i].srd, sim_now);
		}
	}
	return true;
}

static bool sim_all_done(const struct sim *sim)
{
	return sim->finished == sim->nmsgs;
}

/* Runs until every message posted so far completed; false past until. */
bool sim_run_all_done(struct sim *sim, uint64_t until)
{
	return sim_run(sim, until, sim_all_done);
}

/*
 * Lets late duplicates and acks arrive, then checks the engines went
 * quiet: once everything is acknowledged nothing is left on the link.
 */
void sim_settle(struct sim *sim)
{
	sim_run(sim, sim_now + 2 * MS, NULL);
	cr_assert_eq(sim->qlen, 0, "%zu packets still moving on an idle link",
		     sim->qlen);
}

/* Messages [first, end): completed once with status, delivered `times`. */
void sim_expect(const struct sim *sim, size_t first, size_t end,
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

double sim_ms(uint64_t ns)
{
	return (double) ns / (double) MS;
}
