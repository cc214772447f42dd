/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx fuzzing: writes the seed corpus of the receive-path harness into
 * the directory named on the command line (gen_corpus.sh). Each seed is
 * a short, valid conversation in the harness's input format (fuzz_rx.h)
 * that reaches one packet type or protocol step: swsrd DATA, ACK, RNR
 * and CHALLENGE; inside DATA every rdm packet (EAGER with and without
 * VOID, CQ data and DACK_REQ; MEDIUM; RTS with and without a read
 * descriptor; CTS; DATA; HS of every hs_type; DACK; RMA writes, read
 * requests and answers). Packets are built
 * with the encoders of rdmx_wire.h, so the corpus follows the format.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdma/fi_domain.h>

#include "rdmx.h"
#include "rdmx_wire.h"
#include "fuzz_dev.h"
#include "fuzz_rx.h"

#define SEED_MAX	32768
/* The senders' swsrd sessions and tags, and their endpoints' incarnations. */
#define SEED_EPOCH	0x00abcd01u
#define SEED_TAG(src)	(0x7461670000000000ULL + (src) + 1)
#define SEED_INC(src)	(0x1000ULL + (src))
/* The first probe round of a peer that answered a RESET (rdmx_hs.c). */
#define SEED_PROBE_SEQ	RDMX_HS_PROBES_MAX
/* Any non-zero value: the harness writes ours (FUZZ_DGRAM_FIX_*). */
#define SEED_FIXED	1

/* Payload bytes after each rdm header in a FUZZ_DEV_MTU packet. */
#define SEED_MEDIUM_SEG	(FUZZ_DEV_MTU - sizeof(struct rdmx_wire_medium))
#define SEED_DATA_SEG	(FUZZ_DEV_MTU - sizeof(struct rdmx_wire_data))

struct seed {
	uint8_t		buf[SEED_MAX];
	size_t		len;
	uint32_t	psn[4];		/* each sender's next psn */
	uint32_t	msg_id[4];	/* and next message */
	uint8_t		data_flags;	/* FUZZ_DGRAM_* of every DATA */
};

static const char *g_dir;
static unsigned g_written;

static void seed_bytes(struct seed *s, const void *p, size_t len)
{
	if (s->len + len > SEED_MAX) {
		fprintf(stderr, "fuzz_seeds: seed too large\n");
		exit(1);
	}
	if (len)
		memcpy(s->buf + s->len, p, len);
	s->len += len;
}

static void seed_u8(struct seed *s, uint8_t v)
{
	seed_bytes(s, &v, 1);
}

static void seed_u16(struct seed *s, uint16_t v)
{
	uint8_t b[2] = { (uint8_t) v, (uint8_t) (v >> 8) };

	seed_bytes(s, b, 2);
}

static void seed_start(struct seed *s, uint8_t cfg)
{
	memset(s, 0, sizeof(*s));
	seed_u8(s, cfg);
}

static void seed_write(const struct seed *s, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", g_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(s->buf, 1, s->len, f) != s->len || fclose(f)) {
		fprintf(stderr, "fuzz_seeds: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	g_written++;
}

/* A datagram record: hdr, then payload. */
static void seed_dgram(struct seed *s, unsigned src, uint8_t flags,
		       const struct rdmx_srd_hdr *hdr, const void *payload, size_t len)
{
	struct rdmx_wire_srd wire;

	rdmx_wire_srd_encode(&wire, hdr);
	seed_u8(s, (uint8_t) (FUZZ_OP_DGRAM | FUZZ_DGRAM_FROM(src) | flags));
	seed_u16(s, (uint16_t) (sizeof(wire) + len));
	seed_bytes(s, &wire, sizeof(wire));
	seed_bytes(s, payload, len);
}

/* A swsrd DATA carrying pkt, with the tag the receiver expects. */
static void seed_data(struct seed *s, unsigned src, uint8_t flags, const void *pkt,
		      size_t len)
{
	struct rdmx_srd_hdr hdr = {
		.type = RDMX_SRD_DATA,
		.epoch = SEED_EPOCH,
		.psn = s->psn[src]++,
		.src_tag = SEED_TAG(src),
	};

	seed_dgram(s, src, FUZZ_DGRAM_FIX_TAG | FUZZ_DGRAM_FIX_HS | s->data_flags | flags,
		   &hdr, pkt, len);
}

/* A swsrd ACK of every packet we sent src so far. */
static void seed_ack(struct seed *s, unsigned src)
{
	struct rdmx_srd_hdr hdr = {
		.type = RDMX_SRD_ACK,
		.ack_epoch = SEED_FIXED,
		.ack = FUZZ_ACK_ALL,
		.src_tag = SEED_TAG(src),
	};

	seed_dgram(s, src, FUZZ_DGRAM_FIX_TAG, &hdr, NULL, 0);
}

static void seed_clock(struct seed *s, unsigned shift, uint8_t n)
{
	seed_u8(s, (uint8_t) (FUZZ_OP_CLOCK | FUZZ_CLOCK_SHIFT(shift)));
	seed_u8(s, n);
}

static void seed_recv(struct seed *s, uint8_t bits, uint16_t len, uint8_t tag,
		      uint8_t ignore)
{
	seed_u8(s, (uint8_t) (FUZZ_OP_RECV | bits));
	seed_u16(s, len);
	seed_u8(s, tag);
	seed_u8(s, ignore);
}

static void seed_send(struct seed *s, uint8_t bits, uint16_t len, uint8_t tag)
{
	seed_u8(s, (uint8_t) (FUZZ_APP(FUZZ_APP_SEND) | bits));
	seed_u16(s, len);
	seed_u8(s, tag);
}

static void seed_app(struct seed *s, enum fuzz_app_sub sub, uint8_t bits)
{
	seed_u8(s, (uint8_t) (FUZZ_APP(sub) | bits));
}

/* A handshake message of the sender src. */
static void seed_hs(struct seed *s, unsigned src, const struct rdmx_hs_msg *msg)
{
	struct rdmx_wire_hs hs;

	rdmx_wire_hs_encode(&hs, msg);
	seed_data(s, src, 0, &hs, rdmx_wire_hs_size(msg));
}

static void seed_hs_type(struct seed *s, unsigned src, enum rdmx_hs_type type,
			 uint32_t seq, uint32_t session)
{
	struct rdmx_hs_msg msg = {
		.type = type,
		.incarnation = SEED_INC(src),
		.peer_incarnation = type == RDMX_HS_RESET ? 0 : SEED_FIXED,
		.seq = seq,
		.session = session,
	};

	if (type == RDMX_HS_RESET || type == RDMX_HS_ACK) {
		msg.probe_version = RDMX_HS_PROBE_VERSION;
		msg.proto_min = RDMX_PROTO_LEGACY;
		msg.proto_max = RDMX_PROTO_VERSION;
		msg.features = RDMX_HS_FEATURES;
		msg.rx_max = FUZZ_DEV_MTU;
	}
	seed_hs(s, src, &msg);
}

/* The sender src starts a session: RESET, then answers our three probes. */
static void seed_connect(struct seed *s, unsigned src)
{
	seed_hs_type(s, src, RDMX_HS_RESET, 0, 1);
	for (uint32_t i = 0; i < RDMX_HS_PROBES; i++)
		seed_hs_type(s, src, RDMX_HS_PROBE_ACK, SEED_PROBE_SEQ + i, 0);
}

static void seed_eager(struct seed *s, unsigned src, uint32_t flags, uint64_t tag,
		       size_t len)
{
	uint8_t pkt[FUZZ_DEV_MTU];
	struct rdmx_wire_eager *hdr = (struct rdmx_wire_eager *) pkt;

	rdmx_wire_eager_encode(hdr, flags, s->msg_id[src]++, tag, 0x64617461);
	if (flags & RDMX_PKT_DACK_REQ)
		rdmx_wire_msg_set_id(hdr, 3);
	memset(pkt + sizeof(*hdr), 0x45, len);
	seed_data(s, src, 0, pkt, sizeof(*hdr) + len);
}

/* An EAGER of RMA (flags RMA or RMA_RESP): rdmx_wire_rma, then len bytes. */
static void seed_rma(struct seed *s, unsigned src, uint32_t flags, uint64_t tag,
		     uint64_t addr, uint64_t rlen, size_t len)
{
	uint8_t pkt[FUZZ_DEV_MTU];
	struct rdmx_wire_eager *hdr = (struct rdmx_wire_eager *) pkt;
	size_t n = sizeof(*hdr);

	rdmx_wire_eager_encode(hdr, flags, s->msg_id[src]++, tag, 0);
	if (flags & RDMX_PKT_DACK_REQ)
		rdmx_wire_msg_set_id(hdr, 3);
	if (flags & RDMX_PKT_RMA) {
		rdmx_wire_rma_encode((struct rdmx_wire_rma *) (pkt + n), addr, rlen);
		n += sizeof(struct rdmx_wire_rma);
	}
	memset(pkt + n, 0x52, len);
	seed_data(s, src, 0, pkt, n + len);
}

/*
 * An atomic on key at addr: op on count elements of datatype (size bytes
 * each), with RDMX_PKT_RMA_READ when it fetches; its operands, and for a
 * compare its compare values, all bytes 0x41.
 */
static void seed_atomic(struct seed *s, unsigned src, bool fetch, uint64_t key, uint64_t addr,
			uint8_t op, uint8_t datatype, uint16_t count, size_t size)
{
	uint8_t pkt[FUZZ_DEV_MTU];
	struct rdmx_wire_eager *hdr = (struct rdmx_wire_eager *) pkt;
	size_t n = sizeof(*hdr), len = op == FI_ATOMIC_READ ? 0 :
				       (op >= FI_CSWAP ? 2 : 1) * count * size;

	rdmx_wire_eager_encode(hdr, RDMX_PKT_RMA | RDMX_PKT_ATOMIC | RDMX_PKT_DACK_REQ |
			       (fetch ? RDMX_PKT_RMA_READ : 0), s->msg_id[src]++, key, 0);
	rdmx_wire_msg_set_id(hdr, 3);
	rdmx_wire_rma_encode((struct rdmx_wire_rma *) (pkt + n), addr, fetch ? count * size : 0);
	n += sizeof(struct rdmx_wire_rma);
	rdmx_wire_atomic_encode((struct rdmx_wire_atomic *) (pkt + n), op, datatype, count);
	n += sizeof(struct rdmx_wire_atomic);
	memset(pkt + n, 0x41, len);
	seed_data(s, src, 0, pkt, n + len);
}

/* A medium message of len bytes, its segments in the order given. */
static void seed_medium(struct seed *s, unsigned src, uint32_t flags, uint64_t tag,
			size_t len, const unsigned *order, size_t segs)
{
	uint32_t msg_id = s->msg_id[src]++;

	for (size_t i = 0; i < segs; i++) {
		uint8_t pkt[FUZZ_DEV_MTU];
		struct rdmx_wire_medium *hdr = (struct rdmx_wire_medium *) pkt;
		size_t off = order[i] * SEED_MEDIUM_SEG;
		size_t n = RDMX_MIN(SEED_MEDIUM_SEG, len - off);

		rdmx_wire_medium_encode(hdr, flags, msg_id, tag, 0, len, off);
		memset(pkt + sizeof(*hdr), 0x4d, n);
		seed_data(s, src, 0, pkt, sizeof(*hdr) + n);
	}
}

/* An RTS of len bytes from send 5, with a read descriptor when key is given. */
static void seed_rts(struct seed *s, unsigned src, uint64_t tag, size_t len,
		     const uint8_t *key)
{
	uint8_t pkt[sizeof(struct rdmx_wire_rts) + sizeof(struct rdmx_wire_read)];
	struct rdmx_wire_rts *hdr = (struct rdmx_wire_rts *) pkt;
	struct iovec iov[2] = {
		{ (void *) (uintptr_t) 0x10000, len / 2 },
		{ (void *) (uintptr_t) 0x90000, len - len / 2 },
	};
	size_t n = sizeof(*hdr);

	rdmx_wire_rts_encode(hdr, RDMX_PKT_TAGGED | (key ? RDMX_PKT_READ : 0),
			     s->msg_id[src]++, 5, tag, 0, len);
	if (key) {
		rdmx_wire_read_encode((struct rdmx_wire_read *) (pkt + n), key, iov, 2);
		n += sizeof(struct rdmx_wire_read);
	}
	seed_data(s, src, 0, pkt, n);
}

/* The DATA segments [from, to) of long message msg_id, receive rx_id. */
static void seed_long_data(struct seed *s, unsigned src, uint32_t msg_id,
			   uint32_t rx_id, size_t from, size_t to)
{
	for (size_t off = from; off < to; off += SEED_DATA_SEG) {
		uint8_t pkt[FUZZ_DEV_MTU];
		struct rdmx_wire_data *hdr = (struct rdmx_wire_data *) pkt;
		size_t n = RDMX_MIN(SEED_DATA_SEG, to - off);

		rdmx_wire_data_encode(hdr, msg_id, rx_id, off);
		memset(pkt + sizeof(*hdr), 0x4c, n);
		seed_data(s, src, 0, pkt, sizeof(*hdr) + n);
	}
}

static void seed_cts(struct seed *s, unsigned src, uint32_t msg_id, uint32_t tx_id,
		     uint64_t end, uint64_t limit)
{
	struct rdmx_wire_cts cts;

	rdmx_wire_cts_encode(&cts, msg_id, tx_id, 9, end, limit);
	seed_data(s, src, 0, &cts, sizeof(cts));
}

static void seed_dack(struct seed *s, unsigned src, uint32_t msg_id, uint32_t tx_id,
		      uint32_t status, uint32_t count)
{
	struct rdmx_wire_dack dack;

	rdmx_wire_dack_encode(&dack, msg_id, tx_id, status, count);
	seed_data(s, src, 0, &dack, sizeof(dack));
}

static void seeds_eager(void)
{
	static struct seed s;

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_recv(&s, 0, 256, 0, 0);
	seed_eager(&s, 0, 0, 0, 100);
	seed_write(&s, "eager_untagged");

	/* Sender 0's messages by its two paths (FI_RDMX_PATHS), in turn. */
	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_recv(&s, 0, 256, 0, 0);
	seed_recv(&s, 0, 256, 0, 0);
	s.data_flags = FUZZ_DGRAM_OTHER_PORT;
	seed_eager(&s, 0, 0, 0, 100);
	s.data_flags = 0;
	seed_eager(&s, 0, 0, 0, 100);
	seed_write(&s, "eager_two_paths");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_recv(&s, FUZZ_RECV_TAGGED, 256, 5, 0);
	seed_eager(&s, 0, RDMX_PKT_TAGGED | RDMX_PKT_CQ_DATA, 5, 200);
	seed_write(&s, "eager_tagged_cq_data");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_eager(&s, 0, RDMX_PKT_TAGGED, 6, 300);
	seed_eager(&s, 0, RDMX_PKT_TAGGED, 7, 10);
	seed_recv(&s, FUZZ_RECV_TAGGED, 64, 7, 0);
	seed_recv(&s, FUZZ_RECV_TAGGED | FUZZ_RECV_DIRECTED, 512, 0, 0xff);
	seed_write(&s, "eager_unexpected_truncated");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_recv(&s, FUZZ_RECV_TAGGED, 256, 1, 0);
	seed_eager(&s, 0, RDMX_PKT_VOID, 0, 0);
	seed_eager(&s, 0, RDMX_PKT_TAGGED | RDMX_PKT_DACK_REQ, 1, 40);
	seed_write(&s, "eager_void_dack_req");

	/*
	 * RMA: a write, a read of all of a region (chunks of it wait for buffers),
	 * one of a read-only region, an answer naming no read, a VOID one.
	 */
	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_rma(&s, 0, RDMX_PKT_RMA | RDMX_PKT_DACK_REQ | RDMX_PKT_CQ_DATA, FUZZ_KEY_RW, 0, 0, 64);
	seed_rma(&s, 0, RDMX_PKT_RMA | RDMX_PKT_RMA_READ | RDMX_PKT_DACK_REQ, FUZZ_KEY_RW, 0,
		 FUZZ_REGION, 0);
	seed_rma(&s, 0, RDMX_PKT_RMA | RDMX_PKT_RMA_READ | RDMX_PKT_DACK_REQ, FUZZ_KEY_RO, 8,
		 100, 0);
	seed_rma(&s, 0, RDMX_PKT_RMA_RESP, 3, 0, 0, 64);
	seed_rma(&s, 0, RDMX_PKT_RMA_RESP | RDMX_PKT_VOID, 3, 0, 0, 0);
	seed_write(&s, "rma");

	/* Atomics: a sum, a fetching minimum, a compare, a sum refused (read-only). */
	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_atomic(&s, 0, false, FUZZ_KEY_RW, 0, FI_SUM, FI_UINT64, 4, 8);
	seed_atomic(&s, 0, true, FUZZ_KEY_RW, 32, FI_MIN, FI_INT32, 8, 4);
	seed_atomic(&s, 0, true, FUZZ_KEY_RW, 64, FI_CSWAP, FI_DOUBLE, 2, 8);
	seed_atomic(&s, 0, false, FUZZ_KEY_RO, 0, FI_SUM, FI_INT8, 1, 1);
	seed_write(&s, "atomic");

	/* Messages 2, 1, 0: held for order, then matched at once. */
	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_recv(&s, 0, 128, 0, 0);
	seed_recv(&s, 0, 128, 0, 0);
	s.msg_id[0] = 2;
	seed_eager(&s, 0, 0, 0, 20);
	s.msg_id[0] = 1;
	seed_eager(&s, 0, 0, 0, 20);
	s.msg_id[0] = 0;
	seed_eager(&s, 0, 0, 0, 20);
	seed_write(&s, "eager_out_of_order");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_recv(&s, FUZZ_RECV_MULTI, 32768, 0, 0);
	for (int i = 0; i < 4; i++)
		seed_eager(&s, 0, 0, 0, 900);
	seed_write(&s, "eager_multi_recv");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_eager(&s, 0, RDMX_PKT_TAGGED, 9, 64);
	seed_recv(&s, FUZZ_RECV_TAGGED | FUZZ_RECV_PEEK, 0, 9, 0);
	seed_recv(&s, FUZZ_RECV_TAGGED | FUZZ_RECV_PEEK | FUZZ_RECV_CLAIM, 0, 9, 0);
	seed_recv(&s, FUZZ_RECV_TAGGED | FUZZ_RECV_CLAIM, 128, 9, 0);
	seed_eager(&s, 0, RDMX_PKT_TAGGED, 8, 64);
	seed_recv(&s, FUZZ_RECV_TAGGED | FUZZ_RECV_PEEK | FUZZ_RECV_DISCARD, 0, 8, 0);
	seed_write(&s, "eager_peek_claim_discard");

	/* Messages to an endpoint that does not receive. */
	seed_start(&s, FUZZ_CFG_SEND_ONLY);
	seed_connect(&s, 0);
	seed_eager(&s, 0, RDMX_PKT_TAGGED | RDMX_PKT_DACK_REQ, 1, 8);
	seed_medium(&s, 0, RDMX_PKT_DACK_REQ, 0, 1500, (const unsigned[]) { 0, 1 }, 2);
	seed_rts(&s, 0, 4, 8000, NULL);
	seed_write(&s, "eager_medium_rts_send_only");

	/* Without the handshake: a stale packet that asks for a session. */
	seed_start(&s, 0);
	seed_eager(&s, 1, RDMX_PKT_TAGGED, 1, 8);
	seed_write(&s, "eager_before_handshake");
}

static void seeds_medium_long(void)
{
	static const unsigned in_order[] = { 0, 1, 2, 3 }, shuffled[] = { 2, 0, 3, 1 };
	static const uint8_t key_ok[RDMX_WIRE_RKEY_LEN] = { 0x10 };
	static const uint8_t key_refused[RDMX_WIRE_RKEY_LEN] = { 0x11 };
	static struct seed s;

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_recv(&s, FUZZ_RECV_TAGGED, 4096, 3, 0);
	seed_medium(&s, 0, RDMX_PKT_TAGGED, 3, 3000, in_order, 4);
	seed_write(&s, "medium_expected");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_medium(&s, 0, RDMX_PKT_TAGGED | RDMX_PKT_DACK_REQ, 3, 3500, shuffled, 4);
	seed_recv(&s, FUZZ_RECV_TAGGED, 2000, 3, 0);
	seed_write(&s, "medium_unexpected_shuffled");

	/* RTS, our CTS, the sender's DATA into receive 0. */
	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_recv(&s, FUZZ_RECV_TAGGED, 6000, 4, 0);
	seed_rts(&s, 0, 4, 6000, NULL);
	seed_long_data(&s, 0, 0, 0, 0, 4096);
	seed_long_data(&s, 0, 0, 0, 4096, 6000);
	seed_write(&s, "rts_cts_data");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_rts(&s, 0, 4, 12000, NULL);
	seed_recv(&s, FUZZ_RECV_TAGGED, 5000, 4, 0);
	seed_long_data(&s, 0, 0, 0, 0, 5000);
	seed_write(&s, "rts_unexpected_truncated");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_recv(&s, FUZZ_RECV_TAGGED, 20000, 4, 0);
	seed_rts(&s, 0, 4, 20000, key_ok);
	seed_write(&s, "rts_read");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_recv(&s, FUZZ_RECV_TAGGED, 20000, 4, 0);
	seed_rts(&s, 0, 4, 20000, key_refused);
	seed_long_data(&s, 0, 0, 0, 0, 4096);
	seed_write(&s, "rts_read_refused");

	seed_start(&s, FUZZ_CFG_NO_LONG_READ);
	seed_connect(&s, 0);
	seed_rts(&s, 0, 4, 20000, key_ok);
	seed_recv(&s, FUZZ_RECV_TAGGED, 20000, 4, 0);
	seed_write(&s, "rts_read_not_taken");
}

/* Our sends: the peer's CTS, DACK and swsrd acks complete them. */
static void seeds_our_sends(void)
{
	static struct seed s;

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_send(&s, FUZZ_APP_TAGGED, 10000, 2);
	seed_cts(&s, 0, 0, 0, 10000, 4096);
	seed_ack(&s, 0);
	seed_cts(&s, 0, 0, 0, 10000, 10000);
	for (int i = 0; i < 4; i++)
		seed_ack(&s, 0);
	seed_write(&s, "cts_long_send");

	/* The receiver read the message itself. */
	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_send(&s, FUZZ_APP_TAGGED, 40000, 2);
	seed_ack(&s, 0);
	seed_cts(&s, 0, 0, 0, 0, 0);
	seed_write(&s, "cts_read_done");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_send(&s, FUZZ_APP_TAGGED | FUZZ_APP_DELIVERY, 100, 2);
	seed_send(&s, FUZZ_APP_DELIVERY, 100, 0);
	seed_ack(&s, 0);
	seed_dack(&s, 0, 1, 1, 0, 2);
	seed_write(&s, "dack_run");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_send(&s, FUZZ_APP_TAGGED | FUZZ_APP_DELIVERY, 5000, 2);
	seed_ack(&s, 0);
	seed_dack(&s, 0, 0, 0, FI_ENOMSG, 1);
	seed_write(&s, "dack_status");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_u8(&s, (uint8_t) (FUZZ_APP(FUZZ_APP_INJECT) | FUZZ_APP_TAGGED));
	seed_u16(&s, 64);
	seed_u8(&s, 1);
	seed_send(&s, 0, 3000, 0);
	for (int i = 0; i < 12; i++)
		seed_clock(&s, 29, 1);	/* a second */
	seed_write(&s, "send_retransmit_unreachable");
}

static void seeds_handshake(void)
{
	static struct seed s;
	struct rdmx_hs_msg legacy = {
		.type = RDMX_HS_RESET,
		.probe_version = RDMX_HS_PROBE_LEGACY,
		.incarnation = SEED_INC(1),
	};

	/* We connect: our RESET (session 1), the peer's ACK of it, probes. */
	seed_start(&s, 0);
	seed_send(&s, 0, 10, 0);
	seed_hs_type(&s, 0, RDMX_HS_ACK, 1, 1);
	seed_hs_type(&s, 0, RDMX_HS_PROBE, 7, 0);
	for (uint32_t i = 0; i < RDMX_HS_PROBES; i++)
		seed_hs_type(&s, 0, RDMX_HS_PROBE_ACK, SEED_PROBE_SEQ + i, 0);
	seed_ack(&s, 0);
	seed_write(&s, "hs_ack_probe");

	/*
	 * Medium sends wait for the handshake, then start at once: more
	 * segments than the packet pool holds, so some wait for room.
	 */
	seed_start(&s, 0);
	for (int i = 0; i < 6; i++)
		seed_send(&s, 0, 4000, 0);
	seed_hs_type(&s, 0, RDMX_HS_ACK, 1, 1);
	for (uint32_t i = 0; i < RDMX_HS_PROBES; i++)
		seed_hs_type(&s, 0, RDMX_HS_PROBE_ACK, SEED_PROBE_SEQ + i, 0);
	for (int i = 0; i < 4; i++)
		seed_ack(&s, 0);
	seed_write(&s, "hs_replay_medium_sends");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_hs_type(&s, 0, RDMX_HS_PING, 1, 0);
	seed_clock(&s, 30, 6);
	seed_hs_type(&s, 0, RDMX_HS_PONG, 1, 0);
	seed_clock(&s, 33, 255);
	seed_write(&s, "hs_ping_pong");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_send(&s, FUZZ_APP_TAGGED, 100, 1);
	seed_hs_type(&s, 0, RDMX_HS_CLOSE, 0, 1);
	seed_send(&s, 0, 10, 0);
	seed_write(&s, "hs_close");

	/* A restart: the same address under a new incarnation. */
	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_eager(&s, 0, 0, 0, 10);
	seed_hs_type(&s, 0, RDMX_HS_RESET, 0, 1);
	seed_write(&s, "hs_reset_restart");

	seed_start(&s, 0);
	seed_hs(&s, 1, &legacy);
	seed_eager(&s, 1, 0, 0, 10);
	seed_recv(&s, 0, 64, 0, 0);
	seed_write(&s, "hs_legacy_reset");
}

/* swsrd itself: acks, refusals, challenges, skips, strangers. */
static void seeds_swsrd(void)
{
	static struct seed s;
	/* Refusals name our session; the ack part acks the handshake's four. */
	struct rdmx_srd_hdr rnr = {
		.type = RDMX_SRD_RNR, .psn = 0, .src_tag = SEED_TAG(0),
		.ack_epoch = SEED_FIXED, .ack = RDMX_HS_PROBES + 1,
	};
	struct rdmx_srd_hdr chal = {
		.type = RDMX_SRD_CHALLENGE, .src_tag = SEED_TAG(0) + 16,
	};
	struct rdmx_srd_hdr skip = {
		.type = RDMX_SRD_DATA, .flags = RDMX_SRD_SKIP | RDMX_SRD_ACK_NOW,
		.epoch = SEED_EPOCH, .src_tag = SEED_TAG(0),
	};

	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_send(&s, 0, 500, 0);
	seed_send(&s, 0, 600, 0);
	rnr.psn = RDMX_HS_PROBES + 1;
	seed_dgram(&s, 0, FUZZ_DGRAM_FIX_TAG, &rnr, NULL, 0);
	seed_clock(&s, 16, 1);
	rnr.psn++;
	rnr.flags = RDMX_SRD_TOO_BIG;
	seed_dgram(&s, 0, FUZZ_DGRAM_FIX_TAG, &rnr, NULL, 0);
	seed_write(&s, "srd_rnr");

	/*
	 * Every copy of our eager (psn 4, after the handshake's four)
	 * refused: the device completes it with RNR, the rdm layer resends
	 * it after a backoff, or fails it under FI_RM_DISABLED.
	 */
	for (int rm = 0; rm < 2; rm++) {
		seed_start(&s, rm ? FUZZ_CFG_RM_DISABLED : 0);
		seed_connect(&s, 0);
		seed_send(&s, FUZZ_APP_TAGGED, 200, 0);
		rnr.psn = RDMX_HS_PROBES + 1;
		rnr.flags = 0;
		for (int i = 0; i < 5; i++) {
			seed_dgram(&s, 0, FUZZ_DGRAM_FIX_TAG, &rnr, NULL, 0);
			seed_clock(&s, 10, 100);	/* 100 us */
		}
		seed_clock(&s, 20, 1);
		seed_ack(&s, 0);
		seed_write(&s, rm ? "srd_rnr_completion_rm_disabled" : "srd_rnr_completion");
	}

	seed_start(&s, 0);
	seed_send(&s, 0, 500, 0);
	seed_dgram(&s, 0, FUZZ_DGRAM_FIX_TAG, &chal, NULL, 0);
	seed_dgram(&s, 0, 0, &chal, NULL, 0);
	seed_write(&s, "srd_challenge");

	seed_start(&s, 0);
	seed_connect(&s, 0);
	skip.psn = s.psn[0]++;
	seed_dgram(&s, 0, FUZZ_DGRAM_FIX_TAG, &skip, NULL, 0);
	s.psn[0] += 2;
	seed_eager(&s, 0, 0, 0, 10);
	seed_eager(&s, 0, 0, 0, 10);
	s.psn[0] -= 4;
	seed_eager(&s, 0, 0, 0, 10);
	seed_write(&s, "srd_skip_gap_duplicate");

	/* Senders outside the AV: challenged, then taken with the cookie. */
	seed_start(&s, 0);
	skip.flags = 0;
	seed_dgram(&s, 2, 0, &skip, NULL, 0);
	seed_connect(&s, 2);
	seed_eager(&s, 2, RDMX_PKT_TAGGED, 1, 30);
	seed_eager(&s, 3, 0, 0, 30);
	seed_recv(&s, FUZZ_RECV_TAGGED, 64, 1, 0);
	seed_recv(&s, 0, 64, 0, 0);
	seed_write(&s, "srd_strangers");

	/* Buffers run out: datagrams of one poll, most kept unexpected. */
	seed_start(&s, FUZZ_CFG_FEW_BUFS | FUZZ_CFG_RM_DISABLED);
	seed_connect(&s, 0);
	for (int i = 0; i < 6; i++) {
		uint8_t pkt[sizeof(struct rdmx_wire_eager) + 16];

		rdmx_wire_eager_encode((struct rdmx_wire_eager *) pkt, RDMX_PKT_TAGGED,
				       s.msg_id[0]++, 77, 0);
		memset(pkt + sizeof(struct rdmx_wire_eager), 0x52, 16);
		seed_data(&s, 0, FUZZ_DGRAM_MORE, pkt, sizeof(pkt));
	}
	seed_app(&s, FUZZ_APP_POLL, 0);
	seed_recv(&s, FUZZ_RECV_TAGGED, 64, 77, 0);
	seed_write(&s, "srd_rnr_sent");

	/* The application changes its AV and cancels, packets in between. */
	seed_start(&s, 0);
	seed_connect(&s, 0);
	seed_recv(&s, FUZZ_RECV_DIRECTED, 64, 0, 0);
	seed_app(&s, FUZZ_APP_AV_REMOVE, 0);
	seed_eager(&s, 0, 0, 0, 10);
	seed_app(&s, FUZZ_APP_AV_INSERT, 0);
	seed_eager(&s, 0, 0, 0, 10);
	seed_app(&s, FUZZ_APP_CANCEL, 0);
	seed_write(&s, "app_av_cancel");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	g_dir = argv[1];
	seeds_eager();
	seeds_medium_long();
	seeds_our_sends();
	seeds_handshake();
	seeds_swsrd();
	printf("fuzz_seeds: %u seeds written to %s\n", g_written, g_dir);
	return 0;
}
