/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the swsrd header and its codec, the part of the wire that belongs
 * to the devices. rdmx_wire.h includes it, so that one header still shows
 * every structure on the wire.
 */
#ifndef RDMX_WIRE_SRD_H
#define RDMX_WIRE_SRD_H

#include <stddef.h>
#include <stdint.h>

/*
 * swsrd (software SRD) header: in front of every datagram on a device
 * that is not reliable by itself (udp, verbs UD). The rdm packet follows
 * a DATA header; ACK, RNR and CHALLENGE packets end after it.
 *
 * Tags authenticate the session (docs/protocol.md, "Session tags"): each
 * side draws a random 64-bit tag per peer and per session, every packet
 * carries the receiver's tag (dst_tag) and the sender's (src_tag), and a
 * packet whose dst_tag is not the receiver's changes nothing: it is
 * answered by at most one CHALLENGE, which carries the receiver's tag to
 * the packet's src_tag, so only a sender that receives at the address it
 * sends from learns it (a cookie echo).
 */
#define RDMX_SRD_MAGIC		0x5953u		/* "SY"; "SX" had no tags */

enum rdmx_srd_type {
	RDMX_SRD_DATA = 1,	/* carries psn and a payload for the rdm layer */
	RDMX_SRD_ACK,		/* acknowledges only */
	RDMX_SRD_RNR,		/* refuses psn: no receive buffer was posted */
	RDMX_SRD_CHALLENGE,	/* src_tag is the sender's tag: use it */
	RDMX_SRD_UNREL,		/* a datagram endpoint's: payload only, every
				   other field zero, never acknowledged */
	RDMX_SRD_TYPE_MAX,
};

#define RDMX_SRD_SKIP		(1u << 0)	/* DATA with no payload: fills
						   the psn of an abandoned send */
#define RDMX_SRD_ACK_NOW	(1u << 1)	/* DATA whose sender waits for
						   the ack: no delaying it */
#define RDMX_SRD_TOO_BIG	(1u << 2)	/* RNR: the packet can never fit
						   a receive buffer */
#define RDMX_SRD_FLAGS_KNOWN	(RDMX_SRD_SKIP | RDMX_SRD_ACK_NOW | RDMX_SRD_TOO_BIG)

struct rdmx_wire_srd {
	uint16_t	magic;
	uint8_t		type;		/* enum rdmx_srd_type */
	uint8_t		flags;		/* RDMX_SRD_* */
	uint32_t	epoch;		/* DATA: the sender's session */
	uint32_t	psn;		/* DATA: sequence; RNR: refused psn */
	uint32_t	ack_epoch;	/* session the ack fields speak of; 0: none */
	uint32_t	ack;		/* first psn of ack_epoch not yet seen */
	uint32_t	reserved;	/* zero */
	uint64_t	sack;		/* bit i: psn ack + i seen */
	uint64_t	dst_tag;	/* the receiver's tag; 0: not known yet */
	uint64_t	src_tag;	/* the sender's tag, never 0 */
};
_Static_assert(sizeof(struct rdmx_wire_srd) == 48, "wire srd size");

/* A swsrd header after validation, in host byte order. */
struct rdmx_srd_hdr {
	enum rdmx_srd_type	type;
	uint32_t		flags;
	uint32_t		epoch;
	uint32_t		psn;
	uint32_t		ack_epoch;
	uint32_t		ack;
	uint64_t		sack;
	uint64_t		dst_tag;
	uint64_t		src_tag;
};

/* Writes hdr in wire form. */
void rdmx_wire_srd_encode(struct rdmx_wire_srd *wire, const struct rdmx_srd_hdr *hdr);

/*
 * Validates the swsrd header at the start of a datagram of len bytes;
 * 0 or -FI_EINVAL (short, bad magic/type/flags, non-zero reserved, a
 * zero src_tag, an ACK, RNR or CHALLENGE with a payload, a SKIP with a
 * payload, a CHALLENGE with flags or acknowledgement fields, an UNREL
 * with any field but its type set).
 */
int rdmx_wire_srd_decode(const void *buf, size_t len, struct rdmx_srd_hdr *hdr);

#endif /* RDMX_WIRE_SRD_H */
