/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_wire: the packet codec. Peers may run on hosts of either byte
 * order and packets may be forged, so the layout is checked byte by byte
 * and every malformed form must be refused without reading past its end.
 * Packets under test live in heap buffers of exactly their length, so an
 * over-read shows up under ASan and valgrind.
 */
#include <stdlib.h>

#include "rdmx_test.h"
#include "rdmx_atomic.h"
#include "rdmx_wire.h"

#define HDR	sizeof(struct rdmx_wire_eager)

/* Byte offsets of the eager header fields (docs/protocol.md). */
enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 2,
	OFF_TYPE = 3,
	OFF_FLAGS = 4,
	OFF_MSG_ID = 8,
	OFF_RESERVED = 12,
	OFF_TAG = 16,
	OFF_DATA = 24,
};

/* A heap copy of len bytes of src, sized exactly len. */
static uint8_t *packet_dup(const void *src, size_t len)
{
	uint8_t *pkt = malloc(len ? len : 1);

	cr_assert_not_null(pkt);
	memcpy(pkt, src, len);
	return pkt;
}

/* A valid eager packet of HDR + payload_len bytes, payload bytes i & 0xff. */
static uint8_t *eager_packet(size_t payload_len)
{
	uint8_t *pkt = malloc(HDR + payload_len);

	cr_assert_not_null(pkt);
	rdmx_wire_eager_encode((struct rdmx_wire_eager *) pkt,
			       RDMX_PKT_TAGGED | RDMX_PKT_CQ_DATA, 0x11223344,
			       0x0102030405060708ULL, 0xf1f2f3f4f5f6f7f8ULL);
	for (size_t i = 0; i < payload_len; i++)
		pkt[HDR + i] = (uint8_t) i;
	return pkt;
}

/* Little-endian value of n bytes at p. */
static uint64_t le_bytes(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

static void expect_rejected(const uint8_t *buf, size_t len, const char *why)
{
	struct rdmx_pkt pkt;

	cr_assert_eq(rdmx_wire_decode(buf, len, &pkt), -FI_EINVAL,
		     "%s: accepted", why);
}

Test(wire, eager_round_trip)
{
	uint8_t *buf = eager_packet(100);
	struct rdmx_pkt pkt;

	cr_assert_eq(rdmx_wire_decode(buf, HDR + 100, &pkt), 0);
	cr_assert_eq(pkt.type, RDMX_PKT_EAGER);
	cr_assert_eq(pkt.flags, RDMX_PKT_TAGGED | RDMX_PKT_CQ_DATA);
	cr_assert_eq(pkt.msg_id, 0x11223344);
	cr_assert_eq(pkt.tag, 0x0102030405060708ULL);
	cr_assert_eq(pkt.data, 0xf1f2f3f4f5f6f7f8ULL);
	cr_assert_eq(pkt.payload, buf + HDR);
	cr_assert_eq(pkt.payload_len, 100);
	for (size_t i = 0; i < 100; i++)
		cr_assert_eq(pkt.payload[i], (uint8_t) i);
	free(buf);
}

Test(wire, eager_without_payload)
{
	uint8_t *buf = malloc(HDR);
	struct rdmx_pkt pkt;

	cr_assert_not_null(buf);
	rdmx_wire_eager_encode((struct rdmx_wire_eager *) buf, 0, 0, 0, 0);
	cr_assert_eq(rdmx_wire_decode(buf, HDR, &pkt), 0);
	cr_assert_eq(pkt.flags, 0);
	cr_assert_eq(pkt.payload_len, 0);
	free(buf);
}

/* Extreme field values survive the trip unchanged. */
Test(wire, eager_round_trip_all_ones)
{
	struct rdmx_wire_eager hdr;
	struct rdmx_pkt pkt;

	/*
	 * Every flag a message EAGER may carry (RDMX_PKT_READ is for RTS
	 * only; a VOID asks no DACK: wire::dack_* below; RMA: wire::rma_*).
	 */
	const uint32_t flags = RDMX_PKT_FLAGS_KNOWN & ~(RDMX_PKT_READ | RDMX_PKT_DACK_REQ |
							RDMX_PKT_RMA | RDMX_PKT_RMA_READ |
							RDMX_PKT_RMA_RESP | RDMX_PKT_ATOMIC);

	rdmx_wire_eager_encode(&hdr, flags, UINT32_MAX, UINT64_MAX, UINT64_MAX);
	cr_assert_eq(rdmx_wire_decode(&hdr, sizeof(hdr), &pkt), 0);
	cr_assert_eq(pkt.flags, flags);
	cr_assert_eq(pkt.msg_id, UINT32_MAX);
	cr_assert_eq(pkt.tag, UINT64_MAX);
	cr_assert_eq(pkt.data, UINT64_MAX);
}

/* An RMA packet of flags: an eager header, the rdmx_wire_rma, then len bytes. */
struct rma_pkt {
	struct rdmx_wire_eager	hdr;
	struct rdmx_wire_rma	rma;
	uint8_t			payload[8];
};

static int rma_decode(uint32_t flags, uint64_t addr, uint64_t rlen, size_t len,
		      struct rdmx_pkt *pkt)
{
	struct rma_pkt p;

	memset(&p, 0x5a, sizeof(p));
	rdmx_wire_eager_encode(&p.hdr, flags, 7, 0x1234, 0);
	rdmx_wire_msg_set_id(&p.hdr, (flags & RDMX_PKT_DACK_REQ) ? 3 : 0);
	rdmx_wire_rma_encode(&p.rma, addr, rlen);
	return rdmx_wire_decode(&p, sizeof(p.hdr) + sizeof(p.rma) + len, pkt);
}

/* A write: the key in the tag field, the address taken off the payload. */
Test(wire, rma_write_round_trip)
{
	struct rdmx_pkt pkt;

	cr_assert_eq(rma_decode(RDMX_PKT_RMA | RDMX_PKT_DACK_REQ | RDMX_PKT_CQ_DATA,
				UINT64_MAX, 0, 8, &pkt), 0);
	cr_assert_eq(pkt.tag, 0x1234, "the key");
	cr_assert_eq(pkt.rma_addr, UINT64_MAX);
	cr_assert_eq(pkt.payload_len, 8);
	cr_assert_eq(pkt.msg_len, 8);
	cr_assert_eq(pkt.tx_id, 3);
}

Test(wire, rma_read_request_round_trip)
{
	struct rdmx_pkt pkt;

	cr_assert_eq(rma_decode(RDMX_PKT_RMA | RDMX_PKT_RMA_READ | RDMX_PKT_DACK_REQ,
				4096, 1 << 20, 0, &pkt), 0);
	cr_assert_eq(pkt.rma_addr, 4096);
	cr_assert_eq(pkt.rma_len, 1 << 20);
	cr_assert_eq(pkt.payload_len, 0);
}

/* What no sender builds is refused, whatever else the packet holds. */
Test(wire, rma_combinations_that_do_not_exist_are_malformed)
{
	struct rdmx_pkt pkt;
	struct rdmx_wire_eager hdr;

	cr_assert_eq(rma_decode(RDMX_PKT_RMA, 0, 0, 8, &pkt), -FI_EINVAL,
		     "a write always asks for its DACK");
	cr_assert_eq(rma_decode(RDMX_PKT_RMA | RDMX_PKT_DACK_REQ | RDMX_PKT_TAGGED, 0, 0, 8,
				&pkt), -FI_EINVAL, "tagged");
	cr_assert_eq(rma_decode(RDMX_PKT_RMA | RDMX_PKT_DACK_REQ, 0, 5, 8, &pkt), -FI_EINVAL,
		     "a write naming a length");
	cr_assert_eq(rma_decode(RDMX_PKT_RMA | RDMX_PKT_RMA_READ | RDMX_PKT_DACK_REQ, 0, 5, 8,
				&pkt), -FI_EINVAL, "a read request with payload");
	cr_assert_eq(rma_decode(RDMX_PKT_RMA_READ | RDMX_PKT_DACK_REQ, 0, 5, 0, &pkt),
		     -FI_EINVAL, "RMA_READ without RMA");
	cr_assert_eq(rma_decode(RDMX_PKT_RMA_RESP | RDMX_PKT_TAGGED, 0, 0, 0, &pkt),
		     -FI_EINVAL, "a tagged answer");
	cr_assert_eq(rma_decode(RDMX_PKT_RMA_RESP | RDMX_PKT_RMA | RDMX_PKT_DACK_REQ, 0, 0, 0,
				&pkt), -FI_EINVAL, "an answer that is a write");
	/* Shorter than its rdmx_wire_rma. */
	rdmx_wire_eager_encode(&hdr, RDMX_PKT_RMA | RDMX_PKT_DACK_REQ, 1, 0, 0);
	rdmx_wire_msg_set_id(&hdr, 1);
	cr_assert_eq(rdmx_wire_decode(&hdr, sizeof(hdr), &pkt), -FI_EINVAL);
}

/* An atomic: its EAGER header, rdmx_wire_rma, rdmx_wire_atomic, len payload bytes. */
static int atomic_decode(uint32_t flags, uint64_t rlen, uint8_t op, uint8_t datatype,
			 uint16_t count, size_t len, struct rdmx_pkt *pkt)
{
	struct {
		struct rdmx_wire_eager	hdr;
		struct rdmx_wire_rma	rma;
		struct rdmx_wire_atomic	atomic;
		uint8_t			payload[2 * RDMX_ATOMIC_MAX_BYTES + 8];
	} p;

	memset(&p, 0x5a, sizeof(p));
	rdmx_wire_eager_encode(&p.hdr, flags, 7, 0x1234, 0);
	rdmx_wire_msg_set_id(&p.hdr, 3);
	rdmx_wire_rma_encode(&p.rma, 64, rlen);
	rdmx_wire_atomic_encode(&p.atomic, op, datatype, count);
	return rdmx_wire_decode(&p, sizeof(p.hdr) + sizeof(p.rma) + sizeof(p.atomic) + len,
				pkt);
}

#define ATOMIC_FLAGS	(RDMX_PKT_RMA | RDMX_PKT_ATOMIC | RDMX_PKT_DACK_REQ)
#define FETCH_FLAGS	(ATOMIC_FLAGS | RDMX_PKT_RMA_READ)

Test(wire, atomic_round_trip)
{
	struct rdmx_pkt pkt;

	cr_assert_eq(atomic_decode(ATOMIC_FLAGS, 0, FI_SUM, FI_UINT64, 3, 24, &pkt), 0);
	cr_assert_eq(pkt.atomic_op, FI_SUM);
	cr_assert_eq(pkt.atomic_datatype, FI_UINT64);
	cr_assert_eq(pkt.atomic_count, 3);
	cr_assert_eq(pkt.payload_len, 24, "the operands");
	cr_assert_eq(pkt.rma_addr, 64);
	cr_assert_eq(atomic_decode(FETCH_FLAGS, 16, FI_CSWAP, FI_INT32, 4, 32, &pkt), 0,
		     "a compare: operands and compare values");
	cr_assert_eq(atomic_decode(FETCH_FLAGS, 8, FI_ATOMIC_READ, FI_DOUBLE, 1, 0, &pkt), 0,
		     "an atomic read: no operands");
}

/* Every size a sender announces is checked against the others. */
Test(wire, atomics_that_do_not_add_up_are_malformed)
{
	struct rdmx_pkt pkt;

	cr_assert_eq(atomic_decode(ATOMIC_FLAGS, 0, FI_SUM, FI_UINT64, 3, 16, &pkt), -FI_EINVAL,
		     "fewer operands than the count");
	cr_assert_eq(atomic_decode(ATOMIC_FLAGS, 0, FI_SUM, FI_UINT64, 0, 0, &pkt), -FI_EINVAL,
		     "no element");
	cr_assert_eq(atomic_decode(ATOMIC_FLAGS, 0, FI_SUM, FI_UINT64, 9, 72, &pkt),
		     -FI_EINVAL, "more than RDMX_ATOMIC_MAX_BYTES");
	cr_assert_eq(atomic_decode(FETCH_FLAGS, 4, FI_SUM, FI_UINT64, 1, 8, &pkt), -FI_EINVAL,
		     "a fetch naming fewer result bytes than it returns");
	cr_assert_eq(atomic_decode(ATOMIC_FLAGS, 8, FI_SUM, FI_UINT64, 1, 8, &pkt), -FI_EINVAL,
		     "a non-fetching atomic naming a length");
	cr_assert_eq(atomic_decode(FETCH_FLAGS, 8, FI_CSWAP, FI_UINT64, 1, 8, &pkt), -FI_EINVAL,
		     "a compare without its compare values");
	cr_assert_eq(atomic_decode(ATOMIC_FLAGS, 0, FI_CSWAP, FI_UINT64, 1, 16, &pkt),
		     -FI_EINVAL, "a compare that fetches nothing");
	cr_assert_eq(atomic_decode(ATOMIC_FLAGS, 0, FI_MIN, FI_DOUBLE_COMPLEX, 1, 16, &pkt),
		     -FI_EINVAL, "a pair not offered");
	cr_assert_eq(atomic_decode(ATOMIC_FLAGS, 0, FI_ATOMIC_OP_LAST, FI_INT8, 1, 1, &pkt),
		     -FI_EINVAL, "an operation that does not exist");
	cr_assert_eq(atomic_decode(ATOMIC_FLAGS, 0, FI_SUM, 200, 1, 1, &pkt), -FI_EINVAL,
		     "a datatype that does not exist");
	cr_assert_eq(atomic_decode(ATOMIC_FLAGS | RDMX_PKT_CQ_DATA, 0, FI_SUM, FI_INT8, 1, 1,
				   &pkt), -FI_EINVAL, "remote CQ data");
	cr_assert_eq(atomic_decode(RDMX_PKT_ATOMIC | RDMX_PKT_DACK_REQ, 0, FI_SUM, FI_INT8, 1,
				   1, &pkt), -FI_EINVAL, "ATOMIC without RMA");
}

/* The layout peers agree on, whatever the byte order of this host. */
Test(wire, eager_layout_is_little_endian)
{
	static const uint8_t want[HDR] = {
		0x44, 0x52,			/* magic "RD", LE */
		RDMX_WIRE_VERSION,
		RDMX_PKT_EAGER,
		0x03, 0x00, 0x00, 0x00,		/* flags TAGGED | CQ_DATA */
		0x44, 0x33, 0x22, 0x11,		/* msg_id */
		0x00, 0x00, 0x00, 0x00,		/* reserved */
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,	/* tag */
		0xf8, 0xf7, 0xf6, 0xf5, 0xf4, 0xf3, 0xf2, 0xf1,	/* data */
	};
	uint8_t *buf = eager_packet(0);

	for (size_t i = 0; i < HDR; i++)
		cr_assert_eq(buf[i], want[i], "byte %zu: %#x, want %#x", i,
			     buf[i], want[i]);
	cr_assert_eq(le_bytes(buf + OFF_MAGIC, 2), RDMX_WIRE_MAGIC);
	cr_assert_eq(le_bytes(buf + OFF_TAG, 8), 0x0102030405060708ULL);
	free(buf);
}

/* A header written by hand from the layout decodes to the same fields. */
Test(wire, decode_reads_little_endian)
{
	uint8_t raw[HDR + 2] = { 0x44, 0x52, RDMX_WIRE_VERSION, RDMX_PKT_EAGER,
				 0x01, 0, 0, 0, 0x78, 0x56, 0x34, 0x12 };
	struct rdmx_pkt pkt;
	uint8_t *buf;

	raw[OFF_TAG] = 0xaa;
	raw[OFF_TAG + 7] = 0x80;
	raw[OFF_DATA + 1] = 0x01;
	raw[HDR] = 'h';
	raw[HDR + 1] = 'i';
	buf = packet_dup(raw, sizeof(raw));
	cr_assert_eq(rdmx_wire_decode(buf, sizeof(raw), &pkt), 0);
	cr_assert_eq(pkt.flags, RDMX_PKT_TAGGED);
	cr_assert_eq(pkt.msg_id, 0x12345678);
	cr_assert_eq(pkt.tag, 0x80000000000000aaULL);
	cr_assert_eq(pkt.data, 0x100);
	cr_assert_eq(pkt.payload_len, 2);
	cr_assert_eq(memcmp(pkt.payload, "hi", 2), 0);
	free(buf);
}

/* Shorter than the base header, or than the eager header the type needs. */
Test(wire, rejects_short_packets)
{
	uint8_t *full = eager_packet(0);

	for (size_t len = 0; len < HDR; len++) {
		uint8_t *buf = packet_dup(full, len);

		expect_rejected(buf, len, len < 8 ? "shorter than base" :
				"shorter than eager header");
		free(buf);
	}
	free(full);
}

/* Changes one byte of a valid packet and expects the decoder to refuse it. */
static void expect_byte_rejected(size_t off, uint8_t val, const char *why)
{
	uint8_t *buf = eager_packet(4);

	buf[off] = val;
	expect_rejected(buf, HDR + 4, why);
	free(buf);
}

Test(wire, rejects_bad_magic)
{
	expect_byte_rejected(OFF_MAGIC, 0x45, "magic low byte");
	expect_byte_rejected(OFF_MAGIC + 1, 0x53, "magic high byte");
}

/* A big-endian sender that forgot to swap must not be understood. */
Test(wire, rejects_byte_swapped_magic)
{
	uint8_t *buf = eager_packet(4);

	buf[OFF_MAGIC] = 0x52;
	buf[OFF_MAGIC + 1] = 0x44;
	expect_rejected(buf, HDR + 4, "byte-swapped magic");
	free(buf);
}

Test(wire, rejects_bad_version)
{
	expect_byte_rejected(OFF_VERSION, 0, "version 0");
	expect_byte_rejected(OFF_VERSION, RDMX_WIRE_VERSION + 1, "next version");
	expect_byte_rejected(OFF_VERSION, 0xff, "version 255");
}

Test(wire, rejects_bad_type)
{
	expect_byte_rejected(OFF_TYPE, 0, "type 0");
	expect_byte_rejected(OFF_TYPE, RDMX_PKT_TYPE_MAX, "type max");
	expect_byte_rejected(OFF_TYPE, 0xff, "type 255");
}

Test(wire, rejects_unknown_flags)
{
	expect_byte_rejected(OFF_FLAGS, 0x04, "flag bit 2");
	expect_byte_rejected(OFF_FLAGS + 1, 0x01, "flag bit 8");
	expect_byte_rejected(OFF_FLAGS + 3, 0x80, "flag bit 31");
}

Test(wire, rejects_nonzero_reserved)
{
	for (size_t i = 0; i < 4; i++)
		expect_byte_rejected(OFF_RESERVED + i, 0x01, "reserved");
}

/* A tiny deterministic generator, so a failure reproduces exactly. */
static uint64_t xorshift64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/*
 * Random bytes off the network: decoding must never crash or read past
 * the buffer, must refuse anything lacking the magic, and anything it
 * accepts must describe a payload inside the buffer.
 */
Test(wire, random_bytes_never_crash)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	int accepted = 0;

	for (int round = 0; round < 200000; round++) {
		size_t len = xorshift64(&seed) % (2 * HDR + 1);
		uint8_t *buf = malloc(len ? len : 1);
		struct rdmx_pkt pkt;
		int ret;

		cr_assert_not_null(buf);
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t) xorshift64(&seed);
		/* Half the rounds get a valid base so later checks are reached. */
		if (round % 2 && len >= 4) {
			buf[OFF_MAGIC] = 0x44;
			buf[OFF_MAGIC + 1] = 0x52;
			buf[OFF_VERSION] = RDMX_WIRE_VERSION;
			buf[OFF_TYPE] = RDMX_PKT_EAGER;
			if (round % 4 == 1 && len >= HDR) {
				memset(buf + OFF_FLAGS + 1, 0, 3);
				/* RMA bits in half of them: most of their mixes do not exist. */
				buf[OFF_FLAGS] &= round % 8 == 1 ? RDMX_PKT_FLAGS_KNOWN :
						  RDMX_PKT_FLAGS_KNOWN & ~(RDMX_PKT_RMA |
									   RDMX_PKT_RMA_READ |
									   RDMX_PKT_RMA_RESP);
				memset(buf + OFF_RESERVED, 0, 4);
			}
		}
		ret = rdmx_wire_decode(buf, len, &pkt);
		if (len < 2 || le_bytes(buf + OFF_MAGIC, 2) != RDMX_WIRE_MAGIC)
			cr_assert_eq(ret, -FI_EINVAL, "round %d: no magic, accepted",
				     round);
		cr_assert(ret == 0 || ret == -FI_EINVAL, "round %d: %d", round, ret);
		if (!ret) {
			size_t rma = (pkt.flags & RDMX_PKT_RMA) ? sizeof(struct rdmx_wire_rma) : 0;

			cr_assert_geq(len, HDR + rma);
			cr_assert_eq(pkt.payload, buf + HDR + rma);
			cr_assert_eq(pkt.payload_len, len - HDR - rma);
			cr_assert_eq(pkt.flags & ~RDMX_PKT_FLAGS_KNOWN, 0);
			accepted++;
		}
		free(buf);
	}
	/* Proves the valid-base rounds reached the field checks. */
	cr_assert_gt(accepted, 1000, "only %d packets accepted", accepted);
}

/* Decodes a heap copy of len bytes of hdr; the codec's verdict. */
static int decode_copy(const void *hdr, size_t len, struct rdmx_pkt *pkt)
{
	uint8_t *buf = packet_dup(hdr, len);
	int ret = rdmx_wire_decode(buf, len, pkt);

	free(buf);
	return ret;
}

Test(wire, medium_segment_round_trip_and_bounds)
{
	uint8_t buf[sizeof(struct rdmx_wire_medium) + 10];
	struct rdmx_wire_medium *m = (struct rdmx_wire_medium *) buf;
	struct rdmx_pkt pkt;

	memset(buf, 0xab, sizeof(buf));
	rdmx_wire_medium_encode(m, RDMX_PKT_TAGGED, 9, 0x77, 5, 1000, 990);
	cr_assert_eq(decode_copy(buf, sizeof(buf), &pkt), 0);
	cr_assert_eq(pkt.type, RDMX_PKT_MEDIUM);
	cr_assert_eq(pkt.msg_id, 9);
	cr_assert_eq(pkt.tag, 0x77);
	cr_assert_eq(pkt.msg_len, 1000);
	cr_assert_eq(pkt.offset, 990);
	cr_assert_eq(pkt.payload_len, 10);
	rdmx_wire_medium_encode(m, 0, 9, 0x77, 5, 1000, 991);
	cr_assert_eq(decode_copy(buf, sizeof(buf), &pkt), -FI_EINVAL,
		     "a segment past its message");
	rdmx_wire_medium_encode(m, 0, 9, 0x77, 5, 1000, UINT64_MAX - 4);
	cr_assert_eq(decode_copy(buf, sizeof(buf), &pkt), -FI_EINVAL,
		     "an offset that wraps");
	rdmx_wire_medium_encode(m, 0, 9, 0x77, 5, 1000, 0);
	cr_assert_eq(decode_copy(buf, sizeof(*m), &pkt), -FI_EINVAL, "an empty segment");
	rdmx_wire_medium_encode(m, 0, 9, 0x77, 5, 1000, 0);
	cr_assert_eq(decode_copy(buf, sizeof(buf), &pkt), 0);
	cr_assert_eq(pkt.tag, 0, "an untagged message matches as tag 0");
}

Test(wire, rts_cts_data_round_trip_and_rules)
{
	uint8_t buf[64];
	struct rdmx_pkt pkt;

	rdmx_wire_rts_encode((struct rdmx_wire_rts *) buf, RDMX_PKT_CQ_DATA, 3, 17, 0,
			     0xdada, 1ULL << 33);
	cr_assert_eq(decode_copy(buf, sizeof(struct rdmx_wire_rts), &pkt), 0);
	cr_assert_eq(pkt.type, RDMX_PKT_RTS);
	cr_assert_eq(pkt.tx_id, 17);
	cr_assert_eq(pkt.data, 0xdada);
	cr_assert_eq(pkt.msg_len, 1ULL << 33);
	cr_assert_eq(decode_copy(buf, sizeof(struct rdmx_wire_rts) + 1, &pkt), -FI_EINVAL,
		     "an RTS with payload");

	rdmx_wire_cts_encode((struct rdmx_wire_cts *) buf, 3, 17, 4, 1000, 600);
	cr_assert_eq(decode_copy(buf, sizeof(struct rdmx_wire_cts), &pkt), 0);
	cr_assert_eq(pkt.type, RDMX_PKT_CTS);
	cr_assert(pkt.msg_id == 3 && pkt.tx_id == 17 && pkt.rx_id == 4 &&
		  pkt.end == 1000 && pkt.limit == 600);
	rdmx_wire_cts_encode((struct rdmx_wire_cts *) buf, 3, 17, 4, 1000, 1001);
	cr_assert_eq(decode_copy(buf, sizeof(struct rdmx_wire_cts), &pkt), -FI_EINVAL,
		     "a limit past the end");
	rdmx_wire_cts_encode((struct rdmx_wire_cts *) buf, 3, 17, 4, 1000, 600);
	buf[OFF_FLAGS] = RDMX_PKT_TAGGED;
	cr_assert_eq(decode_copy(buf, sizeof(struct rdmx_wire_cts), &pkt), -FI_EINVAL,
		     "a flagged CTS");

	rdmx_wire_data_encode((struct rdmx_wire_data *) buf, 3, 4, 4096);
	cr_assert_eq(decode_copy(buf, sizeof(struct rdmx_wire_data) + 8, &pkt), 0);
	cr_assert(pkt.type == RDMX_PKT_DATA && pkt.rx_id == 4 && pkt.offset == 4096 &&
		  pkt.payload_len == 8);
	cr_assert_eq(decode_copy(buf, sizeof(struct rdmx_wire_data), &pkt), -FI_EINVAL,
		     "an empty DATA");
}

Test(wire, void_is_an_empty_eager_only)
{
	uint8_t buf[64] = { 0 };
	struct rdmx_pkt pkt;

	rdmx_wire_eager_encode((struct rdmx_wire_eager *) buf, RDMX_PKT_VOID, 5, 0, 0);
	cr_assert_eq(decode_copy(buf, HDR, &pkt), 0);
	cr_assert_eq(pkt.flags, RDMX_PKT_VOID);
	cr_assert_eq(decode_copy(buf, HDR + 1, &pkt), -FI_EINVAL, "a VOID with payload");
	rdmx_wire_rts_encode((struct rdmx_wire_rts *) buf, RDMX_PKT_VOID, 5, 1, 0, 0, 9);
	cr_assert_eq(decode_copy(buf, sizeof(struct rdmx_wire_rts), &pkt), -FI_EINVAL,
		     "a VOID RTS");
}

/* Long-read: an RTS flagged RDMX_PKT_READ carries where the bytes are. */
Test(wire, read_descriptor_round_trip)
{
	struct {
		struct rdmx_wire_rts	rts;
		struct rdmx_wire_read	read;
	} buf;
	uint8_t key[RDMX_WIRE_RKEY_LEN], got_key[RDMX_WIRE_RKEY_LEN];
	char a[100], b[300];
	struct iovec iov[2] = { { a, sizeof(a) }, { b, sizeof(b) } }, got[RDMX_WIRE_READ_SEGS];
	struct rdmx_pkt pkt;

	memset(key, 0xa5, sizeof(key));
	rdmx_wire_rts_encode(&buf.rts, RDMX_PKT_READ | RDMX_PKT_TAGGED, 3, 4, 5, 6, 400);
	rdmx_wire_read_encode(&buf.read, key, iov, 2);
	cr_assert_eq(rdmx_wire_decode(&buf, sizeof(buf), &pkt), 0);
	cr_assert_eq(pkt.payload_len, sizeof(buf.read));
	cr_assert_eq(rdmx_wire_read_decode(pkt.payload, pkt.payload_len, 400, got_key, got), 2);
	cr_assert_arr_eq(got_key, key, sizeof(key));
	cr_assert(got[0].iov_base == a && got[0].iov_len == 100);
	cr_assert(got[1].iov_base == b && got[1].iov_len == 300);
	cr_assert_eq(rdmx_wire_read_decode(pkt.payload, pkt.payload_len, 401, got_key, got),
		     -FI_EINVAL, "the pieces must cover the message exactly");
	cr_assert_eq(rdmx_wire_read_decode(pkt.payload, pkt.payload_len, 399, got_key, got),
		     -FI_EINVAL);
	cr_assert_eq(rdmx_wire_decode(&buf, sizeof(buf) - 1, &pkt), -FI_EINVAL,
		     "a read descriptor has one size");
	cr_assert_eq(rdmx_wire_decode(&buf, sizeof(buf.rts), &pkt), -FI_EINVAL);
}

Test(wire, read_descriptor_rejects_bad_counts)
{
	struct rdmx_wire_read read;
	uint8_t key[RDMX_WIRE_RKEY_LEN] = { 0 };
	struct iovec iov[RDMX_WIRE_READ_SEGS], got[RDMX_WIRE_READ_SEGS];
	char x[8];

	for (int i = 0; i < RDMX_WIRE_READ_SEGS; i++)
		iov[i] = (struct iovec) { x, 2 };
	rdmx_wire_read_encode(&read, key, iov, RDMX_WIRE_READ_SEGS);
	cr_assert_eq(rdmx_wire_read_decode(&read, sizeof(read), 8, key, got),
		     RDMX_WIRE_READ_SEGS);
	read.seg_cnt = htole32(RDMX_WIRE_READ_SEGS + 1);
	cr_assert_eq(rdmx_wire_read_decode(&read, sizeof(read), 8, key, got), -FI_EINVAL);
	read.seg_cnt = 0;
	cr_assert_eq(rdmx_wire_read_decode(&read, sizeof(read), 0, key, got), -FI_EINVAL);
	read.seg_cnt = htole32(1);
	read.seg[0].len = htole64(UINT64_MAX);
	cr_assert_eq(rdmx_wire_read_decode(&read, sizeof(read), 8, key, got), -FI_EINVAL,
		     "a piece longer than the message");
}

Test(wire, read_flag_only_on_rts)
{
	struct rdmx_wire_eager hdr;
	struct rdmx_pkt pkt;

	rdmx_wire_eager_encode(&hdr, RDMX_PKT_READ, 1, 0, 0);
	cr_assert_eq(rdmx_wire_decode(&hdr, sizeof(hdr), &pkt), -FI_EINVAL);
}

/* A RESET as this version sends it: 64 bytes, rx_max announced. */
Test(wire, hs_carries_rx_max)
{
	struct rdmx_hs_msg msg = {
		.type = RDMX_HS_RESET, .probe_version = RDMX_HS_PROBE_VERSION,
		.proto_min = 1, .proto_max = 2, .incarnation = 7, .session = 3,
		.rx_max = 1340,
	}, out;
	struct rdmx_wire_hs hs;
	struct rdmx_pkt pkt;
	uint8_t *buf;

	rdmx_wire_hs_encode(&hs, &msg);
	cr_assert_eq(rdmx_wire_hs_size(&msg), 64);
	buf = packet_dup(&hs, sizeof(hs));
	cr_assert_eq(le_bytes(buf + 56, 4), 1340, "rx_max at offset 56");
	cr_assert_eq(le_bytes(buf + 24, 8) & RDMX_HS_FEAT_RX_MAX, RDMX_HS_FEAT_RX_MAX);
	cr_assert_eq(rdmx_wire_decode(buf, sizeof(hs), &pkt), 0);
	rdmx_wire_hs_decode(buf, sizeof(hs), &out);
	cr_assert_eq(out.rx_max, 1340);
	cr_assert_eq(out.session, 3);
	free(buf);
}

/* A peer without the feature sends 56 bytes: valid, rx_max unsaid. */
Test(wire, hs_without_rx_max_is_56_bytes)
{
	struct rdmx_hs_msg msg = { .type = RDMX_HS_PING, .incarnation = 7 }, out;
	struct rdmx_wire_hs hs;
	struct rdmx_pkt pkt;
	uint8_t *buf;

	rdmx_wire_hs_encode(&hs, &msg);
	cr_assert_eq(rdmx_wire_hs_size(&msg), 56);
	buf = packet_dup(&hs, 56);
	cr_assert_eq(rdmx_wire_decode(buf, 56, &pkt), 0);
	rdmx_wire_hs_decode(buf, 56, &out);
	cr_assert_eq(out.rx_max, 0);
	free(buf);
}

/* Features that name rx_max in a packet that ends before it: malformed. */
Test(wire, hs_rejects_rx_max_cut_off)
{
	struct rdmx_hs_msg msg = { .type = RDMX_HS_ACK, .incarnation = 7, .rx_max = 9000 };
	struct rdmx_wire_hs hs;
	struct rdmx_pkt pkt;
	uint8_t *buf;

	rdmx_wire_hs_encode(&hs, &msg);
	for (size_t len = 56; len < RDMX_WIRE_HS_RX_MAX_SIZE; len++) {
		buf = packet_dup(&hs, len);
		cr_assert_eq(rdmx_wire_decode(buf, len, &pkt), -FI_EINVAL, "%zu bytes", len);
		free(buf);
	}
}

/* A RESET announcing HOST: 72 bytes, the pid at 60, the host at 64. */
Test(wire, hs_carries_host_and_pid)
{
	struct rdmx_hs_msg msg = {
		.type = RDMX_HS_RESET, .probe_version = RDMX_HS_PROBE_VERSION,
		.proto_min = 1, .proto_max = 2, .features = RDMX_HS_FEAT_HOST,
		.incarnation = 7, .session = 3, .rx_max = 1340,
		.host = 0x0123456789abcdefULL, .pid = 4242,
	}, out;
	struct rdmx_wire_hs hs;
	struct rdmx_pkt pkt;
	uint8_t *buf;

	rdmx_wire_hs_encode(&hs, &msg);
	cr_assert_eq(rdmx_wire_hs_size(&msg), 72);
	buf = packet_dup(&hs, 72);
	cr_assert_eq(le_bytes(buf + 56, 4), 1340, "rx_max at offset 56");
	cr_assert_eq(le_bytes(buf + 60, 4), 4242, "pid at offset 60");
	cr_assert_eq(le_bytes(buf + 64, 8), 0x0123456789abcdefULL, "host at offset 64");
	cr_assert_eq(rdmx_wire_decode(buf, 72, &pkt), 0);
	rdmx_wire_hs_decode(buf, 72, &out);
	cr_assert_eq(out.host, 0x0123456789abcdefULL);
	cr_assert_eq(out.pid, 4242);
	cr_assert_eq(out.rx_max, 1340);
	cr_assert_eq(out.features & (RDMX_HS_FEAT_HOST | RDMX_HS_FEAT_RX_MAX),
		     RDMX_HS_FEAT_HOST | RDMX_HS_FEAT_RX_MAX);
	free(buf);
}

/* Without HOST nothing of it goes out: the pid's place stays zero. */
Test(wire, hs_without_host_says_no_pid)
{
	struct rdmx_hs_msg msg = {
		.type = RDMX_HS_ACK, .incarnation = 7, .rx_max = 1340,
		.host = 0x99, .pid = 4242,
	}, out;
	struct rdmx_wire_hs hs;
	uint8_t *buf;

	rdmx_wire_hs_encode(&hs, &msg);
	cr_assert_eq(rdmx_wire_hs_size(&msg), 64);
	buf = packet_dup(&hs, 64);
	cr_assert_eq(le_bytes(buf + 60, 4), 0);
	rdmx_wire_hs_decode(buf, 64, &out);
	cr_assert_eq(out.host, 0);
	cr_assert_eq(out.pid, 0);
	free(buf);
}

/* An older peer's 64-byte (RX_MAX) and 56-byte HS: valid, host unknown. */
Test(wire, hs_of_an_older_peer_has_no_host)
{
	struct rdmx_hs_msg msg = {
		.type = RDMX_HS_RESET, .probe_version = RDMX_HS_PROBE_VERSION,
		.incarnation = 7, .rx_max = 9000,
	}, out;
	struct rdmx_wire_hs hs;
	struct rdmx_pkt pkt;
	uint8_t *buf;

	rdmx_wire_hs_encode(&hs, &msg);
	buf = packet_dup(&hs, 64);
	cr_assert_eq(rdmx_wire_decode(buf, 64, &pkt), 0);
	rdmx_wire_hs_decode(buf, 64, &out);
	cr_assert_eq(out.rx_max, 9000);
	cr_assert_eq(out.host, 0);
	cr_assert_eq(out.pid, 0);
	free(buf);
	msg.rx_max = 0;
	rdmx_wire_hs_encode(&hs, &msg);
	buf = packet_dup(&hs, 56);
	cr_assert_eq(rdmx_wire_decode(buf, 56, &pkt), 0);
	rdmx_wire_hs_decode(buf, 56, &out);
	cr_assert_eq(out.host, 0);
	cr_assert_eq(out.pid, 0);
	free(buf);
}

/* Features that name HOST in a packet that ends before host's end: malformed. */
Test(wire, hs_rejects_host_cut_off)
{
	struct rdmx_hs_msg msg = {
		.type = RDMX_HS_ACK, .features = RDMX_HS_FEAT_HOST, .incarnation = 7,
		.rx_max = 9000, .host = 5, .pid = 6,
	};
	struct rdmx_wire_hs hs;
	struct rdmx_pkt pkt;
	uint8_t *buf;

	rdmx_wire_hs_encode(&hs, &msg);
	for (size_t len = 56; len < RDMX_WIRE_HS_HOST_SIZE; len++) {
		buf = packet_dup(&hs, len);
		cr_assert_eq(rdmx_wire_decode(buf, len, &pkt), -FI_EINVAL, "%zu bytes", len);
		free(buf);
	}
}

/* SHM names the sender's queue after host; cut short, the packet is malformed. */
Test(wire, hs_carries_shm_queue)
{
	struct rdmx_hs_msg msg = {
		.type = RDMX_HS_ACK, .probe_version = RDMX_HS_PROBE_VERSION,
		.features = RDMX_HS_FEAT_HOST | RDMX_HS_FEAT_SHM, .incarnation = 7,
		.rx_max = 9000, .host = 5, .pid = 6, .shm_fd = 11,
		.shm_token = 0xfedcba9876543210ULL,
	}, out;
	struct rdmx_wire_hs hs;
	struct rdmx_pkt pkt;
	uint8_t *buf;

	rdmx_wire_hs_encode(&hs, &msg);
	cr_assert_eq(rdmx_wire_hs_size(&msg), 88);
	buf = packet_dup(&hs, 88);
	cr_assert_eq(le_bytes(buf + 72, 4), 11, "shm_fd at offset 72");
	cr_assert_eq(le_bytes(buf + 80, 8), 0xfedcba9876543210ULL, "shm_token at offset 80");
	cr_assert_eq(rdmx_wire_decode(buf, 88, &pkt), 0);
	rdmx_wire_hs_decode(buf, 88, &out);
	cr_assert_eq(out.shm_fd, 11);
	cr_assert_eq(out.shm_token, 0xfedcba9876543210ULL);
	free(buf);
	for (size_t len = RDMX_WIRE_HS_HOST_SIZE; len < 88; len++) {
		buf = packet_dup(&hs, len);
		cr_assert_eq(rdmx_wire_decode(buf, len, &pkt), -FI_EINVAL, "%zu bytes", len);
		free(buf);
	}
}

/* A queue is named by pid as well: SHM without HOST names none. */
Test(wire, hs_shm_without_host_names_no_queue)
{
	struct rdmx_hs_msg msg = {
		.type = RDMX_HS_ACK, .features = RDMX_HS_FEAT_SHM, .incarnation = 7,
		.shm_fd = 11, .shm_token = 3,
	}, out;
	struct rdmx_wire_hs hs;

	rdmx_wire_hs_encode(&hs, &msg);
	rdmx_wire_hs_decode(&hs, rdmx_wire_hs_size(&msg), &out);
	cr_assert_eq(out.shm_token, 0);
	cr_assert_eq(out.shm_fd, 0);
}

/* A message asking a DACK names its send; without the flag, no id. */
Test(wire, dack_request_carries_the_send_id)
{
	struct rdmx_wire_medium m;
	struct rdmx_wire_eager e;
	struct rdmx_pkt pkt;

	rdmx_wire_eager_encode(&e, RDMX_PKT_DACK_REQ, 3, 0, 0);
	rdmx_wire_msg_set_id(&e, 41);
	cr_assert_eq(rdmx_wire_decode(&e, sizeof(e), &pkt), 0);
	cr_assert_eq(pkt.tx_id, 41);
	cr_assert_eq(pkt.flags, RDMX_PKT_DACK_REQ);
	rdmx_wire_eager_encode(&e, 0, 3, 0, 0);
	rdmx_wire_msg_set_id(&e, 41);
	cr_assert_eq(rdmx_wire_decode(&e, sizeof(e), &pkt), -FI_EINVAL, "id without DACK_REQ");
	rdmx_wire_eager_encode(&e, RDMX_PKT_VOID | RDMX_PKT_DACK_REQ, 3, 0, 0);
	cr_assert_eq(rdmx_wire_decode(&e, sizeof(e), &pkt), -FI_EINVAL, "VOID asking a DACK");

	rdmx_wire_medium_encode(&m, RDMX_PKT_DACK_REQ, 9, 0, 0, 100, 0);
	rdmx_wire_msg_set_id(&m.msg, 7);
	/* A medium segment needs a payload: decode header + 10 bytes. */
	{
		uint8_t buf[sizeof(m) + 10] = { 0 };

		memcpy(buf, &m, sizeof(m));
		cr_assert_eq(rdmx_wire_decode(buf, sizeof(buf), &pkt), 0);
		cr_assert_eq(pkt.tx_id, 7);
		cr_assert_eq(pkt.type, RDMX_PKT_MEDIUM);
	}
}

/* The DACK: 24 bytes, no flags, no payload, a bounded status and run. */
Test(wire, dack_round_trip_and_rules)
{
	uint8_t buf[sizeof(struct rdmx_wire_dack) + 1] = { 0 };
	struct rdmx_wire_dack *d = (struct rdmx_wire_dack *) buf;
	struct rdmx_pkt pkt;

	rdmx_wire_dack_encode(d, UINT32_MAX, 12, FI_ENOMEM, 1);
	cr_assert_eq(rdmx_wire_decode(d, sizeof(*d), &pkt), 0);
	cr_assert_eq(pkt.type, RDMX_PKT_DACK);
	cr_assert_eq(pkt.msg_id, UINT32_MAX);
	cr_assert_eq(pkt.tx_id, 12);
	cr_assert_eq(pkt.status, FI_ENOMEM);
	cr_assert_eq(pkt.count, 1);
	cr_assert_eq(rdmx_wire_decode(d, sizeof(*d) + 1, &pkt), -FI_EINVAL, "payload");
	cr_assert_eq(rdmx_wire_decode(d, sizeof(*d) - 1, &pkt), -FI_EINVAL, "short");
	d->base.flags = htole32(RDMX_PKT_TAGGED);
	cr_assert_eq(rdmx_wire_decode(d, sizeof(*d), &pkt), -FI_EINVAL, "flags");
	rdmx_wire_dack_encode(d, 1, 2, RDMX_WIRE_DACK_STATUS_MAX + 1, 1);
	cr_assert_eq(rdmx_wire_decode(d, sizeof(*d), &pkt), -FI_EINVAL, "status");
	rdmx_wire_dack_encode(d, 70, 2, 0, RDMX_WIRE_DACK_RUN_MAX);
	cr_assert_eq(rdmx_wire_decode(d, sizeof(*d), &pkt), 0, "a run");
	cr_assert_eq(pkt.count, RDMX_WIRE_DACK_RUN_MAX);
	rdmx_wire_dack_encode(d, 70, 2, 0, RDMX_WIRE_DACK_RUN_MAX + 1);
	cr_assert_eq(rdmx_wire_decode(d, sizeof(*d), &pkt), -FI_EINVAL, "run too long");
	rdmx_wire_dack_encode(d, 70, 2, 0, 0);
	cr_assert_eq(rdmx_wire_decode(d, sizeof(*d), &pkt), -FI_EINVAL, "empty run");
	rdmx_wire_dack_encode(d, 70, 2, FI_ENOMEM, 2);
	cr_assert_eq(rdmx_wire_decode(d, sizeof(*d), &pkt), -FI_EINVAL, "a failed run");
}
