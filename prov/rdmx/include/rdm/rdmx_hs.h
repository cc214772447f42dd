/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the probe handshake of one peer (after AWS CDI's connection
 * probe), as a state machine with no clock and no wire of its own: the
 * caller passes the time, hands it the handshake messages that arrive,
 * calls its timer, and sends what it asks to send. docs/protocol.md has
 * the packets and the state diagram.
 *
 *   IDLE --connect--> RESET_SENT --ACK or RESET--> PROBING
 *   PROBING --all probes acknowledged--> CONNECTED
 *   CONNECTED --pings unanswered--> DISCONNECTED --connect--> RESET_SENT
 *   RESET_SENT, PROBING --retries exhausted, or no common version--> DISCONNECTED
 *   PROBING, CONNECTED --the peer's CLOSE of this session--> CLOSED
 *   CLOSED --RESET of a new incarnation, or rdmx_hs_reopen--> as from IDLE, DISCONNECTED
 *
 * A RESET names the sender's probe version, the protocol versions it
 * speaks, its endpoint incarnation and a feature bitmap; the ACK names
 * the answerer's. Both sides take the highest version both speak; a peer
 * whose probe version predates negotiation (RDMX_HS_PROBE_LEGACY) gets
 * RDMX_PROTO_LEGACY. Each side then sends probes and is CONNECTED once
 * they were all acknowledged, so the path works both ways for both.
 * Two sides connecting at once each answer the other's RESET and meet
 * in PROBING. Each handshake a side starts is a new session (its number
 * travels in RESET and ACK; an ACK names the session it answers): a
 * RESET from a known peer under a new incarnation (it restarted) or a
 * newer session (it gave us up and starts over) makes the caller drop
 * what it kept of the old one, and the handshake starts over. A side
 * that disconnects drops what it kept itself, so either way both start
 * the new session from scratch. Messages naming an incarnation of ours
 * or theirs other than the current ones, and RESETs of older sessions,
 * are stale and ignored.
 *
 * An endpoint that closes tells each peer PROBING or CONNECTED that
 * announced RDMX_HS_FEAT_CLOSE with a CLOSE naming both incarnations and
 * both sessions; a CLOSE that names anything else (an old session, a
 * forged one) changes nothing. The peer is then CLOSED: it is not
 * connected again on our own initiative (the endpoint is gone), only when
 * an endpoint with a new incarnation sends a RESET from its address or
 * the caller reopens it.
 */
#ifndef RDMX_HS_H
#define RDMX_HS_H

#include <stdbool.h>
#include <stdint.h>

/* Protocol levels. Legacy: what a peer without negotiation speaks. */
#define RDMX_PROTO_LEGACY	1
#define RDMX_PROTO_VERSION	2
/* Probe versions: 1 predates negotiation (its RESET carries no range). */
#define RDMX_HS_PROBE_LEGACY	1
#define RDMX_HS_PROBE_VERSION	2
/*
 * Feature bits of RESET and ACK; a side uses a feature toward a peer only
 * when the peer's RESET or ACK announced it.
 * RX_MAX: the packet carries rx_max, the largest packet the sender can
 * receive (endpoints on interfaces of different MTUs each send the other
 * no more than it takes).
 * DELIVERY_ACK: takes RDMX_PKT_DACK_REQ and answers it with a DACK.
 * CLOSE: sends and honours CLOSE.
 * HOST: the packet carries host, a digest naming the sender's host and
 * pid namespace (0: it cannot tell), and pid, its process there. Two
 * sides are on one host (long-read may expose memory to the other) only
 * when both announced it with the same non-zero host.
 * SHM (with HOST): the packet carries shm_fd and shm_token, which with
 * pid name the sender's shared-memory queue (rdmx_dev_shm.h): a peer on
 * the same host sends to it instead of by the NIC (rdmx_lane.h).
 * WINDOW: the sender's NIC device takes a wide window of packets in
 * flight (swsrd: RDMX_SRD_WINDOW_MAX past the first not seen); a peer
 * without it is sent at most 64.
 * PATHS: the sender's NIC device takes a packet from any source address
 * of the peer's host that carries the session's tag (swsrd: the paths of
 * FI_RDMX_PATHS); a peer without it is sent packets by one path.
 */
#define RDMX_HS_FEAT_RX_MAX		(1ULL << 0)
#define RDMX_HS_FEAT_DELIVERY_ACK	(1ULL << 1)
#define RDMX_HS_FEAT_CLOSE		(1ULL << 2)
#define RDMX_HS_FEAT_HOST		(1ULL << 3)
#define RDMX_HS_FEAT_SHM		(1ULL << 4)
#define RDMX_HS_FEAT_RMA		(1ULL << 5)	/* RMA packets (rdmx_wire.h) */
#define RDMX_HS_FEAT_ATOMIC		(1ULL << 6)	/* RDMX_PKT_ATOMIC */
#define RDMX_HS_FEAT_WINDOW		(1ULL << 7)	/* the device's wide window
							   (rdmx_dev.h, ah_peer) */
#define RDMX_HS_FEAT_PATHS		(1ULL << 8)	/* and its paths */
/*
 * What an endpoint announces besides RX_MAX, which rx_max implies, SHM
 * (when it has a queue) and PATHS (when its NIC device takes them).
 */
#define RDMX_HS_FEATURES	(RDMX_HS_FEAT_DELIVERY_ACK | RDMX_HS_FEAT_CLOSE | \
				 RDMX_HS_FEAT_HOST | RDMX_HS_FEAT_RMA | RDMX_HS_FEAT_ATOMIC | \
				 RDMX_HS_FEAT_WINDOW)

/* Probes one side sends, at most; and what an endpoint sends. */
#define RDMX_HS_PROBES_MAX	32
#define RDMX_HS_PROBES		3

enum rdmx_hs_state {
	RDMX_HS_IDLE,
	RDMX_HS_RESET_SENT,
	RDMX_HS_PROBING,
	RDMX_HS_CONNECTED,
	RDMX_HS_DISCONNECTED,
	RDMX_HS_CLOSED,		/* the peer closed its endpoint */
};

enum rdmx_hs_type {
	RDMX_HS_RESET = 1,
	RDMX_HS_ACK,
	RDMX_HS_PROBE,
	RDMX_HS_PROBE_ACK,
	RDMX_HS_PING,
	RDMX_HS_PONG,
	RDMX_HS_CLOSE,		/* the sender's endpoint is closing */
};

/* One handshake message, decoded. */
struct rdmx_hs_msg {
	enum rdmx_hs_type	type;
	uint32_t		probe_version;	/* RESET, ACK */
	uint32_t		proto_min;	/* RESET, ACK (0 from a legacy peer) */
	uint32_t		proto_max;
	uint64_t		features;	/* RESET, ACK */
	uint64_t		incarnation;	/* the sender's */
	uint64_t		peer_incarnation; /* the receiver's, as the sender
						     knows it (0 in a RESET) */
	uint32_t		seq;		/* PROBE, PING; echoed by the answers;
						   ACK: the session of the RESET answered;
						   CLOSE: the receiver's session */
	uint32_t		session;	/* RESET, ACK, CLOSE: the sender's */
	uint32_t		rx_max;		/* RESET, ACK: largest packet the
						   sender receives (0: unsaid) */
	uint64_t		host;		/* RESET, ACK with HOST: the
						   sender's host (0: unknown) */
	uint32_t		pid;		/* RESET, ACK with HOST: the
						   sender's process (0: unsaid) */
	uint32_t		shm_fd;		/* RESET, ACK with SHM: the */
	uint64_t		shm_token;	/* sender's shm queue */
};

/* What this endpoint says of itself. */
struct rdmx_hs_local {
	uint32_t	probe_version;
	uint32_t	proto_min;
	uint32_t	proto_max;
	uint64_t	features;
	uint64_t	incarnation;	/* random per endpoint, never 0 */
	uint32_t	rx_max;		/* largest packet this endpoint receives */
	uint64_t	host;		/* with HOST: this host (0: unknown) */
	uint32_t	pid;		/* with HOST: this process (0: unsaid) */
	uint32_t	shm_fd;		/* with SHM: this endpoint's */
	uint64_t	shm_token;	/* shm queue */
};

struct rdmx_hs_ops;

struct rdmx_hs_cfg {
	uint64_t	retry_ns;		/* RESET and probe resend interval */
	uint32_t	tries;			/* RESETs, probe rounds, before giving up */
	uint32_t	probes;			/* probes that must be acknowledged */
	uint64_t	ping_interval_ns;	/* silence before a ping */
	uint64_t	ping_timeout_ns;	/* wait for its answer */
	uint32_t	ping_retries;		/* pings unanswered before DISCONNECTED */
	const struct rdmx_hs_ops *ops;		/* the endpoint's, for each peer's
						   handshake (rdmx_conn.c) */
};

enum rdmx_hs_event {
	RDMX_HS_EV_CONNECTED,
	RDMX_HS_EV_DISCONNECTED,	/* err: why (positive FI_E*) */
	RDMX_HS_EV_RESTARTED,		/* the peer restarted or starts a new
					   session: forget the old */
	RDMX_HS_EV_CLOSED,		/* the peer closed its endpoint: err is
					   FI_ECONNRESET */
};

struct rdmx_hs_ops {
	/* Sends msg; the caller queues what the device refuses, never drops it. */
	void	(*send)(void *ctx, const struct rdmx_hs_msg *msg);
	void	(*event)(void *ctx, enum rdmx_hs_event ev, int err);
};

struct rdmx_hs {
	const struct rdmx_hs_local	*local;
	const struct rdmx_hs_cfg	*cfg;
	const struct rdmx_hs_ops	*ops;
	void				*ctx;
	enum rdmx_hs_state		state;
	uint32_t			version;	/* negotiated; 0 until known */
	uint64_t			peer_incarnation; /* 0: unknown */
	uint64_t			peer_features;
	uint32_t			peer_rx_max;	/* 0: unsaid */
	uint64_t			peer_host;	/* with HOST; 0: unknown */
	uint32_t			peer_pid;	/* with HOST; 0: unsaid */
	uint32_t			peer_shm_fd;	/* with SHM: its queue; */
	uint64_t			peer_shm_token;	/* token 0: none */
	uint32_t			session;	/* ours: handshakes started */
	uint32_t			peer_session;	/* theirs, from its RESET or ACK */
	uint64_t			deadline;	/* the timer's next call; 0: none */
	uint32_t			tries;		/* of the current step */
	uint32_t			probe_seq;	/* the round's first probe */
	uint64_t			probes_acked;	/* bits of probe_seq + i */
	uint32_t			ping_seq;
	bool				ping_out;	/* a ping waits for its pong */
	uint64_t			last_heard;
};

void rdmx_hs_init(struct rdmx_hs *hs, const struct rdmx_hs_local *local,
		  const struct rdmx_hs_cfg *cfg, const struct rdmx_hs_ops *ops, void *ctx);

/* Starts the handshake from IDLE or DISCONNECTED; nothing otherwise. */
void rdmx_hs_connect(struct rdmx_hs *hs, uint64_t now);

/* Takes a handshake message from the peer. */
void rdmx_hs_recv(struct rdmx_hs *hs, const struct rdmx_hs_msg *msg, uint64_t now);

/* Any packet from the peer: it is alive (no ping needed). Inline: every packet tells. */
static inline void rdmx_hs_heard(struct rdmx_hs *hs, uint64_t now)
{
	if (hs->state != RDMX_HS_CONNECTED)
		return;
	hs->last_heard = now;
	hs->ping_out = false;
	hs->tries = 0;
	hs->deadline = now + hs->cfg->ping_interval_ns;
}

/*
 * Our endpoint is closing: sends the peer a CLOSE of the current session
 * if it is PROBING or CONNECTED and announced RDMX_HS_FEAT_CLOSE. Returns
 * whether it sent one. The state does not change: nothing follows.
 */
bool rdmx_hs_close(struct rdmx_hs *hs);

/*
 * The caller gives up what it knew of a CLOSED peer (its address left the
 * AV): it is DISCONNECTED, and the next connect starts a handshake.
 */
void rdmx_hs_reopen(struct rdmx_hs *hs);

/*
 * The device found the peer gone (shm: its process exited): a handshake
 * or session under way ends at once, DISCONNECTED with FI_EHOSTUNREACH,
 * without waiting for pings to go unanswered.
 */
void rdmx_hs_lost(struct rdmx_hs *hs);

/*
 * Something waits on the CONNECTED peer with nothing of it in flight (a
 * send waiting for its DACK): pings it now if it was silent silence_ns
 * and no ping is out, so a dead peer is found by the transport's
 * timeout, not the keepalive's.
 */
void rdmx_hs_probe(struct rdmx_hs *hs, uint64_t now, uint64_t silence_ns);

/* Resends, pings and gives up as the deadline says; call at or after it. */
void rdmx_hs_timer(struct rdmx_hs *hs, uint64_t now);

/*
 * Whether the peer showed it is on this host (and in this pid
 * namespace): both sides announced RDMX_HS_FEAT_HOST with the same
 * non-zero host, in the RESET or ACK that ended the reset step.
 */
bool rdmx_hs_same_host(const struct rdmx_hs *hs);

/*
 * A value naming the current session of the pair for long-read, which
 * both sides compute alike: from both incarnations and both session
 * numbers, the exposer's (we_expose: ours) first. An exposure is bound
 * to it, so a key offered in one session reads nothing in another.
 */
uint64_t rdmx_hs_bind(const struct rdmx_hs *hs, bool we_expose);

/* The highest version both speak, or 0 when none. */
uint32_t rdmx_hs_negotiate(const struct rdmx_hs_local *local, const struct rdmx_hs_msg *msg);

const char *rdmx_hs_state_str(enum rdmx_hs_state state);

#endif /* RDMX_HS_H */
