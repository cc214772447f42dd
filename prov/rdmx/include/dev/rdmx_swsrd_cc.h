/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: swsrd's congestion window for one peer, sized by what the path
 * delivers (docs/protocol.md, "Window and congestion").
 *
 * The window starts at RDMX_SRD_CWND_INIT packets and doubles per round
 * trip (slow start) up to the threshold the first loss sets; then it
 * grows per window by half the way back to where the last loss event
 * found it, at most a quantum, at least a packet (BIC's binary search
 * increase; one packet per window left a path that drops a train every
 * millisecond or two with a quarter of the window that fills it). Once
 * the path's bandwidth-delay product is measured (packets acknowledged
 * per interval of a round trip, times the least round trip seen in the
 * last RDMX_SRD_MIN_RTT_NS), the window is held at most at twice the
 * product plus an allowance: the queue a stream builds on the path stays
 * about one product deep, and round trips near their least, as in BBR.
 * A quantum (RDMX_SRD_QUANTUM) is what the stack moves as one: a
 * segmented send or a merged read holds up to 45 datagrams of an MTU of
 * 1,500 bytes, and an ack covers 16.
 * The allowance is RDMX_SRD_ALLOW_BYTES of the largest datagram sent
 * to the peer, at least three quanta and at most eight: with room for
 * only three quanta of MTU 1,500 datagrams, each ack opens a few
 * packets of room, and the sender trickles them out a partial segmented
 * send at a time, where whole ones cost the kernel less per byte. A
 * loss that acks of later packets revealed halves the window, but not
 * below the product plus a quantum: a path that drops at random keeps
 * the window that fills it (one whose window fits in one merged read
 * would lose it whole, and wait for a timeout), and one whose queue
 * overflowed drains it. Silence (swsrd saw nothing sent after a packet
 * get through over two of its timeouts) halves the window and the
 * product, down to RDMX_SRD_CWND_MIN, and forgets where the window was:
 * a dead path backs off however big its window was.
 */
#ifndef RDMX_SWSRD_CC_H
#define RDMX_SWSRD_CC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RDMX_SRD_CWND_INIT	(16 * 16)	/* 1/16 packets */
#define RDMX_SRD_CWND_MIN	(2 * 16)
#define RDMX_SRD_QUANTUM	48		/* packets */
#define RDMX_SRD_ALLOW_BYTES	(512 * 1024)	/* eight segmented sends */
#define RDMX_SRD_MIN_RTT_NS	10000000000ULL	/* a least round trip counts this long */

struct rdmx_srd_cc {
	uint32_t	cwnd_x16;	/* the window, 1/16 packets */
	uint32_t	ssthresh_x16;	/* slow start below this */
	uint32_t	wmax_x16;	/* the window the last loss event found */
	uint32_t	bdp_x16;	/* bandwidth-delay product; 0: not known */
	uint64_t	min_rtt_ns;	/* least round trip; 0: none yet */
	uint64_t	min_rtt_at;	/* when it was seen */
	uint64_t	delivered;	/* packets acknowledged */
	uint64_t	mark_delivered;	/* delivered when the interval began */
	uint64_t	mark_ns;	/* and when */
	uint32_t	allow;		/* packets past twice the product */
	uint32_t	dgram_max;	/* the largest datagram sent, bytes */
};

/* A new session's window: slow start till the first loss. */
void rdmx_srd_cc_init(struct rdmx_srd_cc *cc, uint64_t now);

/* A round-trip sample (a packet sent once). */
void rdmx_srd_cc_rtt(struct rdmx_srd_cc *cc, uint64_t rtt, uint64_t now);

/*
 * newly packets were acknowledged at now; srtt is the smoothed round trip
 * and limit the packets the receiver takes.
 */
void rdmx_srd_cc_acked(struct rdmx_srd_cc *cc, uint32_t newly, uint64_t srtt,
		       uint32_t limit, uint64_t now);

/* A datagram of bytes was sent: the allowance follows the largest. */
void rdmx_srd_cc_datagram(struct rdmx_srd_cc *cc, size_t bytes);

/* A loss event (at most one per window of data); silent: see above. */
void rdmx_srd_cc_loss(struct rdmx_srd_cc *cc, bool silent);

/* Packets the window lets be in flight. */
static inline uint32_t rdmx_srd_cc_window(const struct rdmx_srd_cc *cc)
{
	return cc->cwnd_x16 / 16;
}

#endif /* RDMX_SWSRD_CC_H */
