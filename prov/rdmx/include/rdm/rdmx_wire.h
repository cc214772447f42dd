/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: every structure that travels on the wire. Fields are fixed-width
 * and little-endian; each size is asserted. New behaviour arrives through
 * negotiated feature bits, never by moving fields. docs/protocol.md
 * describes each packet.
 */
#ifndef RDMX_WIRE_H
#define RDMX_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "rdmx_hs.h"
/* The swsrd header, the devices' part of the wire, is theirs. */
#include "rdmx_wire_srd.h"

#define RDMX_WIRE_MAGIC		0x5244u		/* "RD" */

enum rdmx_pkt_type {
	RDMX_PKT_EAGER = 1,	/* a whole message in one packet */
	RDMX_PKT_MEDIUM,	/* one segment of a message sent all at once */
	RDMX_PKT_RTS,		/* request to send a long message */
	RDMX_PKT_CTS,		/* clear to send: credit for a long message */
	RDMX_PKT_DATA,		/* one segment of a long message */
	RDMX_PKT_HS,		/* handshake: reset, probe, ping, answers */
	RDMX_PKT_DACK,		/* delivery acknowledgement of one message */
	RDMX_PKT_TYPE_MAX,
};

/* Base header flags. */
#define RDMX_PKT_TAGGED		(1u << 0)	/* tag field is meaningful */
#define RDMX_PKT_CQ_DATA	(1u << 1)	/* data field carries CQ data */
#define RDMX_PKT_VOID		(1u << 2)	/* EAGER without payload: the
						   sender gave message msg_id
						   up; skip it */
#define RDMX_PKT_READ		(1u << 3)	/* RTS whose payload is an
						   rdmx_wire_read: the receiver
						   may read the message */
#define RDMX_PKT_DACK_REQ	(1u << 4)	/* EAGER, MEDIUM, RTS: the sender
						   (send id in the id field)
						   waits for a DACK; only to a
						   peer with RDMX_HS_FEAT_DELIVERY_ACK */
#define RDMX_PKT_RMA		(1u << 5)	/* EAGER, MEDIUM, RTS: an RMA
						   write (tag: the target's key;
						   an rdmx_wire_rma follows the
						   header); with RMA_READ, an EAGER
						   read request; only to a peer
						   with RDMX_HS_FEAT_RMA */
#define RDMX_PKT_RMA_READ	(1u << 6)	/* EAGER with RMA and DACK_REQ:
						   send back the rdmx_wire_rma's
						   len bytes; an error is DACKed */
#define RDMX_PKT_RMA_RESP	(1u << 7)	/* EAGER, MEDIUM, RTS: the bytes
						   a read asked for (tag: the
						   read's send id; data: its
						   request's msg_id) */
#define RDMX_PKT_ATOMIC		(1u << 8)	/* EAGER with RMA and DACK_REQ:
						   an atomic (rdmx_wire_atomic
						   after the rdmx_wire_rma, then
						   the operands, then the compare
						   values); with RMA_READ it
						   fetches: the rma's len bytes of
						   old values come back; only to
						   a peer with RDMX_HS_FEAT_ATOMIC */
#define RDMX_PKT_FLAGS_KNOWN	(RDMX_PKT_TAGGED | RDMX_PKT_CQ_DATA | RDMX_PKT_VOID | \
				 RDMX_PKT_READ | RDMX_PKT_DACK_REQ | RDMX_PKT_RMA | \
				 RDMX_PKT_RMA_READ | RDMX_PKT_RMA_RESP | RDMX_PKT_ATOMIC)

/* Starts every packet. */
struct rdmx_wire_base {
	uint16_t	magic;
	uint8_t		version;
	uint8_t		type;		/* enum rdmx_pkt_type */
	uint32_t	flags;		/* RDMX_PKT_* */
};
_Static_assert(sizeof(struct rdmx_wire_base) == 8, "wire base size");

/*
 * RDMX_PKT_EAGER: header, then the payload up to the packet's end. The
 * same 32 bytes start MEDIUM and RTS: the message header.
 */
struct rdmx_wire_eager {
	struct rdmx_wire_base	base;
	uint32_t		msg_id;		/* per-peer send sequence */
	uint32_t		id;		/* RTS: the sender's send id; else zero */
	uint64_t		tag;
	uint64_t		data;
};
_Static_assert(sizeof(struct rdmx_wire_eager) == 32, "wire eager size");

/* RDMX_PKT_MEDIUM: the bytes at offset of a msg_len-byte message. */
struct rdmx_wire_medium {
	struct rdmx_wire_eager	msg;
	uint64_t		msg_len;
	uint64_t		offset;
};
_Static_assert(sizeof(struct rdmx_wire_medium) == 48, "wire medium size");

/* RDMX_PKT_RTS: a msg_len-byte message waits for the receiver's CTS. */
struct rdmx_wire_rts {
	struct rdmx_wire_eager	msg;		/* id: the sender's send id */
	uint64_t		msg_len;
};
_Static_assert(sizeof(struct rdmx_wire_rts) == 40, "wire rts size");

/*
 * After the header of a packet flagged RDMX_PKT_RMA (each segment of a
 * medium write, and the RTS of a long one): where the bytes go in the
 * target's region, or for a read where they come from and how many.
 */
struct rdmx_wire_rma {
	uint64_t	addr;
	uint64_t	len;		/* RMA_READ: bytes asked; else zero */
};
_Static_assert(sizeof(struct rdmx_wire_rma) == 16, "wire rma size");

/*
 * After the rdmx_wire_rma of a packet flagged RDMX_PKT_ATOMIC: the
 * operation (enum fi_op), the datatype (enum fi_datatype) and how many
 * elements; the packet's payload holds count operands (none for
 * FI_ATOMIC_READ) and, for a compare (FI_CSWAP to FI_MSWAP), count
 * compare values after them.
 */
struct rdmx_wire_atomic {
	uint8_t		op;
	uint8_t		datatype;
	uint16_t	count;
	uint32_t	reserved;	/* zero */
};
_Static_assert(sizeof(struct rdmx_wire_atomic) == 8, "wire atomic size");


/* Bytes of a device's remote read key (struct rdmx_dev_rkey). */
#define RDMX_WIRE_RKEY_LEN	48
/* Pieces of a message a read descriptor names, at most. */
#define RDMX_WIRE_READ_SEGS	4

/*
 * The payload of an RTS flagged RDMX_PKT_READ (long-read): the sender's
 * device key and where the message lies in the sender's memory. The
 * receiver may read the bytes itself, then answers with a CTS whose end
 * is 0 (nothing to send); or it ignores this and grants credit as usual.
 */
struct rdmx_wire_read {
	uint8_t		key[RDMX_WIRE_RKEY_LEN];
	uint32_t	seg_cnt;
	uint32_t	reserved;
	struct {
		uint64_t	addr;
		uint64_t	len;
	} seg[RDMX_WIRE_READ_SEGS];
};
_Static_assert(sizeof(struct rdmx_wire_read) == 120, "wire read size");

/*
 * RDMX_PKT_CTS: the receiver of message msg_id (send tx_id) wants its
 * first end bytes and may be sent those below limit; DATA names rx_id.
 */
struct rdmx_wire_cts {
	struct rdmx_wire_base	base;
	uint32_t		msg_id;
	uint32_t		tx_id;
	uint32_t		rx_id;
	uint32_t		reserved;	/* zero */
	uint64_t		end;
	uint64_t		limit;
};
_Static_assert(sizeof(struct rdmx_wire_cts) == 40, "wire cts size");

/* RDMX_PKT_DATA: header, then bytes at offset of long message msg_id. */
struct rdmx_wire_data {
	struct rdmx_wire_base	base;
	uint32_t		msg_id;
	uint32_t		rx_id;
	uint64_t		offset;
};
_Static_assert(sizeof(struct rdmx_wire_data) == 24, "wire data size");

/*
 * RDMX_PKT_DACK: the receiver of message msg_id (send tx_id, from the
 * message's id field) and of the count - 1 messages before it matched
 * them to receives or buffered them whole as unexpected (status 0), or
 * dropped message msg_id (status: a positive FI_E* code; count 1).
 */
struct rdmx_wire_dack {
	struct rdmx_wire_base	base;
	uint32_t		msg_id;
	uint32_t		tx_id;
	uint32_t		status;
	uint32_t		count;		/* 1 to RDMX_WIRE_DACK_RUN_MAX */
};
_Static_assert(sizeof(struct rdmx_wire_dack) == 24, "wire dack size");

/* The highest status a DACK may carry (FI_E* codes are below). */
#define RDMX_WIRE_DACK_STATUS_MAX	4095u
/* The most messages one DACK may acknowledge. */
#define RDMX_WIRE_DACK_RUN_MAX		64u

/* RDMX_PKT_HS: one handshake message (rdmx_hs.h), no flags, no payload. */
struct rdmx_wire_hs {
	struct rdmx_wire_base	base;
	uint32_t		hs_type;	/* enum rdmx_hs_type */
	uint32_t		probe_version;
	uint32_t		proto_min;
	uint32_t		proto_max;
	uint64_t		features;
	uint64_t		incarnation;
	uint64_t		peer_incarnation;
	uint32_t		seq;
	uint32_t		session;
	/* RDMX_HS_FEAT_RX_MAX: present in RESET and ACK. */
	uint32_t		rx_max;
	/* RDMX_HS_FEAT_HOST: pid; zero (reserved) without it. */
	uint32_t		pid;
	/* RDMX_HS_FEAT_HOST: present in RESET and ACK. */
	uint64_t		host;
	/* RDMX_HS_FEAT_SHM: present in RESET and ACK. */
	uint32_t		shm_fd;
	uint32_t		shm_reserved;	/* zero */
	uint64_t		shm_token;
};
_Static_assert(sizeof(struct rdmx_wire_hs) == 88, "wire hs size");
/* An HS of a peer without RDMX_HS_FEAT_RX_MAX ends before rx_max. */
#define RDMX_WIRE_HS_BASE_SIZE	offsetof(struct rdmx_wire_hs, rx_max)
/* An HS of a peer without RDMX_HS_FEAT_HOST ends before host. */
#define RDMX_WIRE_HS_RX_MAX_SIZE	offsetof(struct rdmx_wire_hs, host)
/* An HS of a peer without RDMX_HS_FEAT_SHM ends before shm_fd. */
#define RDMX_WIRE_HS_HOST_SIZE		offsetof(struct rdmx_wire_hs, shm_fd)

/* The largest message header, with the rdmx_wire_rma of an RMA write. */
struct rdmx_wire_rma_hdr {
	struct rdmx_wire_medium	medium;
	struct rdmx_wire_rma	rma;
};

union rdmx_wire_hdr {
	struct rdmx_wire_rma_hdr rma;
	struct rdmx_wire_eager	eager;
	struct rdmx_wire_medium	medium;
	struct rdmx_wire_rts	rts;
	struct rdmx_wire_cts	cts;
	struct rdmx_wire_data	data;
	struct rdmx_wire_hs	hs;
	struct rdmx_wire_dack	dack;
};

/* A received packet after validation, in host byte order. */
struct rdmx_pkt {
	enum rdmx_pkt_type	type;
	uint32_t		flags;
	uint32_t		msg_id;
	uint32_t		tx_id;		/* RTS, CTS, DACK; EAGER and MEDIUM
						   with RDMX_PKT_DACK_REQ */
	uint32_t		rx_id;		/* CTS, DATA */
	uint64_t		tag;
	uint64_t		data;
	uint64_t		msg_len;	/* EAGER, MEDIUM, RTS */
	uint64_t		offset;		/* MEDIUM, DATA */
	uint64_t		end;		/* CTS */
	uint64_t		limit;		/* CTS */
	uint32_t		status;		/* DACK */
	uint32_t		count;		/* DACK */
	uint64_t		rma_addr;	/* RMA: the rdmx_wire_rma's */
	uint64_t		rma_len;	/* RMA_READ: the bytes asked */
	uint8_t			atomic_op;	/* ATOMIC: the rdmx_wire_atomic's, */
	uint8_t			atomic_datatype;	/* checked against */
	uint16_t		atomic_count;	/* each other and the payload */
	const uint8_t		*payload;
	size_t			payload_len;
};

/*
 * A datagram endpoint's header (FI_EP_DGRAM, rdmx_ud.c), before the
 * application's bytes in each datagram; nothing else of the rdm layer
 * travels there. It binds the datagram to nothing: no session, no
 * sequence, as a datagram's sender proves nothing.
 */
#define RDMX_WIRE_UD_MAGIC	0x4455u		/* "UD" */
#define RDMX_WIRE_UD_VERSION	1
#define RDMX_UD_CQ_DATA		(1u << 0)	/* data carries remote CQ data */

struct rdmx_wire_ud {
	uint16_t	magic;
	uint8_t		version;
	uint8_t		flags;		/* RDMX_UD_* */
	uint32_t	reserved;	/* zero */
	uint64_t	data;
};
_Static_assert(sizeof(struct rdmx_wire_ud) == 16, "wire ud size");

/* Fills a datagram endpoint's header. */
void rdmx_wire_ud_encode(struct rdmx_wire_ud *hdr, uint32_t flags, uint64_t data);

/*
 * Validates the header of a datagram of len bytes at buf (magic,
 * version, known flags, zero reserved, data zero without
 * RDMX_UD_CQ_DATA) and writes its flags and data; 0 or -FI_EINVAL.
 */
int rdmx_wire_ud_decode(const void *buf, size_t len, uint32_t *flags, uint64_t *data);

/*
 * Connection management of FI_EP_MSG endpoints (api/rdmx_cm.c): each
 * step is one tagged message of tag RDMX_CM_TAG over the RDM machinery,
 * this header and then data_len bytes of the application's private
 * data. The application's tags on a MSG endpoint have bit 63 clear
 * (RDMX_CM_TAG_BIT), so that they never meet a step.
 */
#define RDMX_WIRE_CM_MAGIC	0x4d43u		/* "CM" */
#define RDMX_WIRE_CM_VERSION	1
#define RDMX_CM_TAG_BIT		(1ULL << 63)
#define RDMX_CM_TAG		(RDMX_CM_TAG_BIT | 0x434d434d434d434dULL)
/* Private data a connection step carries at most (FI_OPT_CM_DATA_SIZE). */
#define RDMX_CM_DATA_MAX	256
#define RDMX_CM_NAME_MAX	32

enum rdmx_cm_type {
	RDMX_CM_REQ = 1,	/* connector to listener: name, data */
	RDMX_CM_ACCEPT,		/* listener to connector: the acceptor's name, data */
	RDMX_CM_REJECT,		/* listener to connector: data */
	RDMX_CM_DISC,		/* either to the other: fi_shutdown */
	RDMX_CM_TYPE_MAX,
};

struct rdmx_wire_cm {
	uint16_t	magic;
	uint8_t		version;
	uint8_t		type;		/* enum rdmx_cm_type */
	uint16_t	data_len;	/* private data after the header */
	uint8_t		name_len;	/* REQ, ACCEPT: bytes of name */
	uint8_t		reserved;	/* zero */
	uint64_t	conn_id;	/* the connector's random id, never 0 */
	uint8_t		name[RDMX_CM_NAME_MAX];	/* zero past name_len */
};
_Static_assert(sizeof(struct rdmx_wire_cm) == 48, "wire cm size");

/* A connection step after validation. */
struct rdmx_cm_msg {
	enum rdmx_cm_type	type;
	uint64_t		conn_id;
	size_t			name_len;
	const uint8_t		*name;
	size_t			data_len;
	const uint8_t		*data;
};

/*
 * Writes a connection step into buf (sizeof(struct rdmx_wire_cm) +
 * msg->data_len bytes); returns its length.
 */
size_t rdmx_wire_cm_encode(void *buf, const struct rdmx_cm_msg *msg);

/*
 * Validates a connection step of len bytes at buf (magic, version,
 * type, lengths, a name for REQ and ACCEPT only, data for REQ, ACCEPT
 * and REJECT only, zero reserved bytes and id) into msg, whose pointers
 * point into buf; 0 or -FI_EINVAL.
 */
int rdmx_wire_cm_decode(const void *buf, size_t len, struct rdmx_cm_msg *msg);

/* Fills an eager header. */
void rdmx_wire_eager_encode(struct rdmx_wire_eager *hdr, uint32_t flags,
			    uint32_t msg_id, uint64_t tag, uint64_t data);

/* Fills the header of the segment at offset of a medium message. */
void rdmx_wire_medium_encode(struct rdmx_wire_medium *hdr, uint32_t flags,
			     uint32_t msg_id, uint64_t tag, uint64_t data,
			     uint64_t msg_len, uint64_t offset);

/* Sets the id field of a message header: the send id a DACK names. */
void rdmx_wire_msg_set_id(struct rdmx_wire_eager *hdr, uint32_t id);

/* Fills a delivery acknowledgement. */
void rdmx_wire_dack_encode(struct rdmx_wire_dack *hdr, uint32_t msg_id,
			   uint32_t tx_id, uint32_t status, uint32_t count);

/* Fills a request to send msg_len bytes from send tx_id. */
void rdmx_wire_rts_encode(struct rdmx_wire_rts *hdr, uint32_t flags,
			  uint32_t msg_id, uint32_t tx_id, uint64_t tag,
			  uint64_t data, uint64_t msg_len);

/* Fills a read descriptor: key, and iov (cnt <= RDMX_WIRE_READ_SEGS). */
void rdmx_wire_read_encode(struct rdmx_wire_read *read, const void *key,
			   const struct iovec *iov, size_t cnt);

/*
 * Checks the read descriptor of an RTS of msg_len bytes (len bytes at
 * buf) and writes its key and segments; returns how many segments, or
 * -FI_EINVAL when it is malformed or does not cover msg_len exactly.
 */
int rdmx_wire_read_decode(const void *buf, size_t len, uint64_t msg_len,
			  void *key, struct iovec *iov);

/* Fills the rdmx_wire_rma that follows the header of an RMA packet. */
void rdmx_wire_rma_encode(struct rdmx_wire_rma *rma, uint64_t addr, uint64_t len);

/* Fills the rdmx_wire_atomic that follows it in an atomic. */
void rdmx_wire_atomic_encode(struct rdmx_wire_atomic *atomic, uint8_t op, uint8_t datatype,
			     uint16_t count);

/* Fills a handshake packet. */
void rdmx_wire_hs_encode(struct rdmx_wire_hs *hdr, const struct rdmx_hs_msg *msg);

/* Bytes of the HS packet rdmx_wire_hs_encode wrote for msg. */
size_t rdmx_wire_hs_size(const struct rdmx_hs_msg *msg);

/* The handshake message of a decoded RDMX_PKT_HS packet of len bytes at buf. */
void rdmx_wire_hs_decode(const void *buf, size_t len, struct rdmx_hs_msg *msg);

/* Fills a clear to send. */
void rdmx_wire_cts_encode(struct rdmx_wire_cts *hdr, uint32_t msg_id,
			  uint32_t tx_id, uint32_t rx_id, uint64_t end,
			  uint64_t limit);

/* Fills the header of a long message's segment at offset. */
void rdmx_wire_data_encode(struct rdmx_wire_data *hdr, uint32_t msg_id,
			   uint32_t rx_id, uint64_t offset);

/*
 * Validates a received packet of len bytes and decodes it into pkt.
 * Returns 0, or -FI_EINVAL for anything malformed (bad magic, version,
 * type, length, unknown flags, non-zero reserved fields, a segment
 * outside its message, a CTS limit past its end).
 */
int rdmx_wire_decode(const void *buf, size_t len, struct rdmx_pkt *pkt);

#endif /* RDMX_WIRE_H */
