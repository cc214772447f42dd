/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx fuzzing: the input format of the receive-path harness (fuzz_rx.c),
 * shared with the seed generator (fuzz_seeds.c). An input is a script
 * for one endpoint whose device is fuzz_dev.h's: a configuration byte,
 * then records, each an op byte and its arguments (little-endian). A
 * record cut short by the end of the input is ignored.
 *
 *   DGRAM   op, u16 len, len bytes: a datagram (swsrd header and all)
 *           from sender FUZZ_DGRAM_SRC(op): 0 and 1 are in the AV, 2 and
 *           3 are not (127.0.0.2, and ::1, an IPv6 sender); from another
 *           port of the sender's with FUZZ_DGRAM_OTHER_PORT.
 *   CLOCK   op, u8 n: time advances by (n + 1) << (op >> 2) ns (the
 *           shift at most FUZZ_CLOCK_SHIFT_MAX), so timers fire.
 *   RECV    op, u16 len, u8 tag, u8 ignore: the application posts a
 *           receive of len bytes with the FUZZ_RECV_* flags of op.
 *   APP     op, then by FUZZ_APP_SUB(op): SEND and INJECT take u16 len
 *           and u8 tag; the others nothing.
 *
 * After each record but a DGRAM flagged FUZZ_DGRAM_MORE the harness
 * reads the completion queue, which makes the endpoint progress: polls
 * the device (which hands it the datagrams queued) and runs its timers.
 */
#ifndef FUZZ_RX_H
#define FUZZ_RX_H

/* The regions of the endpoint (fuzz_rx.c), by key, and their size. */
#define FUZZ_KEY_RW		0x100		/* FI_REMOTE_READ | FI_REMOTE_WRITE */
#define FUZZ_KEY_RO		0x200		/* FI_REMOTE_READ */
#define FUZZ_REGION		65536

/* The configuration byte. */
#define FUZZ_CFG_RM_DISABLED	(1u << 0)	/* domain with FI_RM_DISABLED */
#define FUZZ_CFG_NO_LONG_READ	(1u << 1)	/* FI_RDMX_LONG_READ=0 */
#define FUZZ_CFG_FEW_BUFS	(1u << 2)	/* 4 receive buffers, not 16 */
#define FUZZ_CFG_SEND_ONLY	(1u << 3)	/* no FI_RECV, no receive CQ */

enum fuzz_op_kind {
	FUZZ_OP_DGRAM,
	FUZZ_OP_CLOCK,
	FUZZ_OP_RECV,
	FUZZ_OP_APP,
};

#define FUZZ_OP_KIND(op)	((op) & 3u)

/* DGRAM. */
#define FUZZ_DGRAM_SRC(op)	(((op) >> 2) & 3u)
#define FUZZ_DGRAM_FROM(src)	((src) << 2)
/*
 * The harness writes in the swsrd header the dst_tag the receiver
 * expects from this sender now, for a non-zero ack_epoch our transmit
 * session toward it, and for an ack of FUZZ_ACK_ALL the next psn we
 * send (the peer got all we sent): what a sender that receives our
 * packets knows, and a fuzzer cannot guess.
 */
#define FUZZ_DGRAM_FIX_TAG	(1u << 4)
#define FUZZ_ACK_ALL		0xffffffffu
/* Likewise a handshake packet's non-zero peer_incarnation: ours. */
#define FUZZ_DGRAM_FIX_HS	(1u << 5)
/* More datagrams arrive before the endpoint's next poll. */
#define FUZZ_DGRAM_MORE		(1u << 6)
/*
 * It comes from the sender's other port (its own + 100), as by a second
 * path (FI_RDMX_PATHS): with FUZZ_DGRAM_FIX_TAG it carries the sender's
 * tag, and is the sender's.
 */
#define FUZZ_DGRAM_OTHER_PORT	(1u << 7)

/* CLOCK. */
#define FUZZ_CLOCK_SHIFT(shift)	((shift) << 2)
#define FUZZ_CLOCK_SHIFT_MAX	40

/* RECV. */
#define FUZZ_RECV_TAGGED	(1u << 2)
#define FUZZ_RECV_PEEK		(1u << 3)
#define FUZZ_RECV_CLAIM		(1u << 4)	/* without PEEK: the last
						   PEEK | CLAIM's context */
#define FUZZ_RECV_DISCARD	(1u << 5)
#define FUZZ_RECV_MULTI		(1u << 6)	/* FI_MULTI_RECV */
#define FUZZ_RECV_DIRECTED	(1u << 7)	/* from sender 0 only */

/* APP. */
enum fuzz_app_sub {
	FUZZ_APP_SEND,		/* a send to sender 0 (1 with FUZZ_APP_PEER1) */
	FUZZ_APP_INJECT,	/* the same as fi_inject / fi_tinject */
	FUZZ_APP_CANCEL,	/* fi_cancel of the oldest receive */
	FUZZ_APP_AV_REMOVE,	/* fi_av_remove of sender 0 (1: FUZZ_APP_PEER1) */
	FUZZ_APP_AV_INSERT,	/* fi_av_insert of it again */
	FUZZ_APP_POLL,		/* only reads the completion queue */
};

#define FUZZ_APP_SUB(op)	(((op) >> 2) & 7u)
#define FUZZ_APP(sub)		(FUZZ_OP_APP | ((sub) << 2))
#define FUZZ_APP_TAGGED		(1u << 5)
#define FUZZ_APP_DELIVERY	(1u << 6)	/* FI_DELIVERY_COMPLETE */
#define FUZZ_APP_PEER1		(1u << 7)

/* Bytes of an application buffer, at most; operations per input, at most. */
#define FUZZ_BUF_MAX		65535
#define FUZZ_OPS_MAX		64

#endif /* FUZZ_RX_H */
