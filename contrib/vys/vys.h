/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vys: a stream of spectra that consumers read out of the producer's
 * memory, after the way NRAO's vys moves correlator output. The producer
 * writes each spectrum into the next slot of a ring in one registered
 * region (it keeps a write position only: nothing tells it what was
 * read) and sends every consumer that joined a signal: what (sequence
 * number, time) and where (offset, length) and a digest of the bytes.
 * A consumer chooses which spectra to fetch, reads them with fi_read and
 * the key it got once when it joined, and accepts a spectrum only when
 * its digest matches the signal's and its first 8 bytes hold its number.
 * A consumer that reads a slot after the producer wrote it again (it
 * read too late) sees a mismatch and counts the spectrum late; it never
 * takes another spectrum's bytes, or a mix of two, for the one it asked
 * for.
 *
 * Messages (FI_MSG, host byte order: producer and consumers share one
 * architecture; explicit padding, zeroed):
 *   JOIN     consumer -> producer: the consumer's endpoint name
 *   WELCOME  producer -> consumer: its number, ring geometry, key, base
 *   SIGNAL   producer -> consumer: one spectrum written
 *   END      producer -> consumer: no more spectra
 *   DONE     consumer -> producer: its reads are over (with its number)
 * Every field a message carries is checked by its receiver before use,
 * and every message but JOIN is taken only from the one endpoint that
 * may send it (FI_SOURCE): a consumer hears only its producer, and the
 * producer takes a DONE only from the consumer it names. A JOIN comes
 * from an endpoint nobody knows yet, so anyone may join (up to the
 * producer's limit): vys has no authentication of its own.
 */
#ifndef VYS_H
#define VYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "ft_fabric.h"

#define VYS_FI_VERSION	FI_VERSION(1, 17)
#define VYS_MAGIC	0x31535956u	/* "VYS1" */
#define VYS_NAME_MAX	64		/* bytes of an endpoint name a JOIN carries */
#define VYS_SLOT_MAX	(64u << 20)	/* largest spectrum */
#define VYS_RING_MAX	(1ull << 32)	/* largest ring */

enum vys_kind {
	VYS_JOIN = 1,
	VYS_WELCOME,
	VYS_SIGNAL,
	VYS_END,
	VYS_DONE,
};

struct vys_hdr {
	uint32_t	magic;
	uint32_t	kind;
};

struct vys_join {
	struct vys_hdr	h;
	uint32_t	name_len;
	uint32_t	pad;
	uint8_t		name[VYS_NAME_MAX];
};

struct vys_welcome {
	struct vys_hdr	h;
	uint32_t	id;	/* the consumer's number, for its DONE */
	uint32_t	slots;
	uint32_t	slot_bytes;
	uint32_t	pad;
	uint64_t	key;
	uint64_t	base;	/* the address fi_read names for offset 0 */
};

struct vys_signal {
	struct vys_hdr	h;
	uint32_t	len;
	uint32_t	pad;
	uint64_t	seq;
	uint64_t	time_ns;
	uint64_t	offset;
	uint64_t	digest;
};

struct vys_done {
	struct vys_hdr	h;
	uint32_t	id;
	uint32_t	pad;
};

union vys_msg {
	struct vys_hdr		h;
	struct vys_join		join;
	struct vys_welcome	welcome;
	struct vys_signal	signal;
	struct vys_done		done;
};

/* What a posted operation is, found again from its completion's context. */
enum vys_op_kind {
	VYS_OP_RECV,
	VYS_OP_SEND,
	VYS_OP_READ,
};

struct vys_op {
	struct fi_context	ctx;	/* first: the completion's op_context */
	enum vys_op_kind	kind;
	uint32_t		owner;	/* a send's consumer, a read's buffer */
	uint32_t		index;	/* a send's buffer among its owner's */
	union vys_msg		*msg;
};

/*
 * One side's endpoint: fi_info, the ft_fabric endpoint (a CQ with a wait
 * object), the message buffers of posted receives and sends in one
 * registered area, and the count of messages ignored (malformed, from
 * the wrong endpoint, or failed receives).
 */
struct vys_ep {
	struct ft_rdm	rdm;
	struct fi_info	*info;
	union vys_msg	*msgs;
	size_t		nmsgs;
	struct fid_mr	*msgs_mr;
	void		*msgs_desc;
	uint64_t	next_key;
	uint64_t	ignored;
};

/* The 64-bit digest of len bytes (len a multiple of 8). */
uint64_t vys_digest(const uint8_t *buf, size_t len);
/* Writes spectrum seq (its number in the first 8 bytes, then a pattern). */
void vys_fill(uint8_t *buf, size_t len, uint64_t seq);
/* The number in a spectrum's first 8 bytes. */
uint64_t vys_seq_of(const uint8_t *buf);

/*
 * Opens the endpoint: a producer's on bind_addr and port (host NULL), a
 * consumer's to host and port, with nmsgs message buffers; 0 or an error
 * printed.
 */
int vys_open(struct vys_ep *ve, const char *bind_addr, const char *host, const char *port,
	     size_t nmsgs);
/* Closes the endpoint, then mr (the caller's other registration), then the rest. */
void vys_close(struct vys_ep *ve, struct fid_mr *mr, int *status);
/*
 * Registers len bytes at buf with access (when the domain needs local
 * registrations or access asks for remote access); 0 or an error printed.
 */
int vys_mr_reg(struct vys_ep *ve, void *buf, size_t len, uint64_t access,
	       struct fid_mr **mr, void **desc);

/* Posts a receive of one message into op's buffer. */
ssize_t vys_post_recv(struct vys_ep *ve, struct vys_op *op);
/* Sends op's message, of len bytes, to addr. */
ssize_t vys_send(struct vys_ep *ve, struct vys_op *op, size_t len, fi_addr_t addr);
/* Whether a received message of len bytes is a well-formed one of kind. */
bool vys_msg_is(const union vys_msg *m, size_t len, enum vys_kind kind);
/*
 * Counts a message ignored, naming the first one of each side's run on
 * stderr (a flood costs no more than its count).
 */
void vys_ignore(struct vys_ep *ve, const char *why);

/*
 * Waits up to timeout_ms (0: does not wait) for completions, at most
 * max, with their sources (FI_ADDR_NOTAVAIL for one the AV does not
 * hold); returns how many were read into cqe and src, 0, or a negative
 * error. A failed receive is counted ignored and posted again (a
 * message too long, say: not ours to take); another error entry is read
 * into *err, described in text, and returns -FI_EAVAIL.
 */
ssize_t vys_poll(struct vys_ep *ve, struct fi_cq_tagged_entry *cqe, fi_addr_t *src,
		 size_t max, int timeout_ms, struct fi_cq_err_entry *err, char *text,
		 size_t text_len);

#endif /* VYS_H */
