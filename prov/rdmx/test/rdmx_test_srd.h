/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: the swsrd simulator the test_swsrd_*.c files share,
 * its limits and state, and what test_swsrd_sim.c gives the tests.
 *
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
 * no sender may have more packets unacknowledged than its peer's window
 * (RDMX_SRD_WINDOW, or RDMX_SRD_WINDOW_MAX once rdmx_swsrd_peer_window
 * widened it).
 */
#ifndef RDMX_TEST_SRD_H
#define RDMX_TEST_SRD_H

#include <stdlib.h>

#include "rdmx_test.h"
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
	/* In-order packets of a path arrive no earlier. */
	uint64_t	fifo_ns[RDMX_SRD_PATHS_MAX];
	uint64_t	queue_ns;	/* more one-way delay: a queue on the path */
	/* Per path of the sender's (cfg.paths): more loss and delay. */
	uint32_t	path_loss_ppm[RDMX_SRD_PATHS_MAX];
	uint64_t	path_delay_ns[RDMX_SRD_PATHS_MAX];

	uint64_t	data_pkts;	/* DATA handed to xmit, SKIPs included */
	uint64_t	data_lost;	/* of those: dropped or refused */
	uint64_t	data_late;	/* copies held back past later ones */
	uint64_t	skips;
	uint64_t	piggy;		/* DATA carrying acknowledgement fields */
	uint64_t	path_pkts[RDMX_SRD_PATHS_MAX];	/* DATA sent by each path */

	/* Packets unacknowledged, as the sender learns of acknowledgements. */
	uint32_t	epoch;		/* the sender's session being tracked */
	uint32_t	psn_base;	/* psns are tracked from this one */
	uint32_t	una;		/* lowest psn not acknowledged, - psn_base */
	uint8_t		*acked;		/* by psn - psn_base within epoch */
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
	/* Stalled (not scheduled) until then: no progress, packets wait. */
	uint64_t		asleep_until;
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

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* test_swsrd_sim.c */
extern uint64_t sim_now;
extern const struct rdmx_swsrd_cfg sim_cfg;
void sim_node_start(struct sim *sim, int idx, uint32_t incarnation);
void sim_node_restart(struct sim *sim, int idx, uint32_t incarnation);
void sim_keep_busy(struct sim *sim, int from, size_t backlog);
void sim_start_at_psn(struct sim *sim, int from, uint32_t psn);
void sim_stranger(struct sim *sim);
struct sim *sim_open(const struct rdmx_swsrd_cfg *cfg, size_t msg_cap,
		     uint64_t seed);
void sim_link(struct sim *sim, uint32_t loss_ppm, uint32_t dup_ppm,
	      uint32_t reorder_ppm, uint32_t eagain_ppm);
struct sim_msg *sim_post(struct sim *sim, int from);
struct sim_msg *sim_post_more(struct sim *sim, int from, bool more);
struct sim_msg *sim_post_awaited(struct sim *sim, int from);
size_t sim_post_n(struct sim *sim, int from, size_t cnt);
bool sim_deliver(struct sim *sim, int to, const uint8_t *buf, size_t len);
bool sim_run(struct sim *sim, uint64_t until, bool (*stop)(const struct sim *));
bool sim_run_all_done(struct sim *sim, uint64_t until);
void sim_settle(struct sim *sim);
void sim_expect(const struct sim *sim, size_t first, size_t end,
		enum rdmx_dev_status status, unsigned times);
double sim_ms(uint64_t ns);

#endif /* RDMX_TEST_SRD_H */
