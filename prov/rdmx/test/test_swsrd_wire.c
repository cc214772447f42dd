/* SPDX-License-Identifier: BSD-2-Clause */
/* swsrd tests: the swsrd header codec, its layout and what it refuses. */
#include "rdmx_test_srd.h"

/* 9. The swsrd header codec. */

/* Byte offsets of the swsrd header fields (docs/protocol.md). */
enum {
	SRD_OFF_MAGIC = 0,
	SRD_OFF_TYPE = 2,
	SRD_OFF_FLAGS = 3,
	SRD_OFF_EPOCH = 4,
	SRD_OFF_PSN = 8,
	SRD_OFF_ACK_EPOCH = 12,
	SRD_OFF_ACK = 16,
	SRD_OFF_RESERVED = 20,
	SRD_OFF_SACK = 24,
	SRD_OFF_DST_TAG = 32,
	SRD_OFF_SRC_TAG = 40,
};

static const struct rdmx_srd_hdr srd_sample = {
	.type = RDMX_SRD_DATA,
	.epoch = 0x89abcdef,
	.psn = 0xfedcba98,
	.ack_epoch = 0x01234567,
	.ack = 0x76543210,
	.sack = 0x8000000000000003ULL,
	.dst_tag = 0x0123456789abcdefULL,
	.src_tag = 0xfedcba9876543210ULL,
};

/* A heap datagram of exactly SRD_HDR + payload bytes holding hdr. */
static uint8_t *srd_packet(const struct rdmx_srd_hdr *hdr, size_t payload)
{
	uint8_t *pkt = malloc(SRD_HDR + payload);

	cr_assert_not_null(pkt);
	rdmx_wire_srd_encode((struct rdmx_wire_srd *) pkt, hdr);
	memset(pkt + SRD_HDR, 0x77, payload);
	return pkt;
}

static void srd_expect_rejected(const uint8_t *pkt, size_t len, const char *why)
{
	struct rdmx_srd_hdr hdr;

	cr_assert_eq(rdmx_wire_srd_decode(pkt, len, &hdr), -FI_EINVAL,
		     "%s: accepted", why);
}

/* The sample DATA packet, accepted, then refused with byte off set to val. */
static void srd_expect_mutant_rejected(size_t off, uint8_t val, const char *why)
{
	uint8_t *pkt = srd_packet(&srd_sample, 4);
	struct rdmx_srd_hdr hdr;

	cr_assert_eq(rdmx_wire_srd_decode(pkt, SRD_HDR + 4, &hdr), 0);
	pkt[off] = val;
	srd_expect_rejected(pkt, SRD_HDR + 4, why);
	free(pkt);
}

static uint64_t srd_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

Test(swsrd, wire_round_trip_every_type)
{
	static const struct { enum rdmx_srd_type type; uint32_t flags; size_t payload; }
	forms[] = {
		{ RDMX_SRD_DATA, 0, 9 },
		{ RDMX_SRD_DATA, 0, 0 },
		{ RDMX_SRD_DATA, RDMX_SRD_SKIP, 0 },
		{ RDMX_SRD_ACK, 0, 0 },
		{ RDMX_SRD_RNR, 0, 0 },
		{ RDMX_SRD_CHALLENGE, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct rdmx_srd_hdr in = srd_sample, out;
		uint8_t *pkt;

		in.type = forms[i].type;
		in.flags = forms[i].flags;
		in.psn += (uint32_t) i;
		if (in.type == RDMX_SRD_CHALLENGE)
			in.ack_epoch = 0;
		pkt = srd_packet(&in, forms[i].payload);
		memset(&out, 0xee, sizeof(out));
		cr_assert_eq(rdmx_wire_srd_decode(pkt, SRD_HDR + forms[i].payload, &out),
			     0, "form %zu refused", i);
		cr_assert_eq(out.type, in.type);
		cr_assert_eq(out.flags, in.flags);
		cr_assert_eq(out.epoch, in.epoch);
		cr_assert_eq(out.psn, in.psn);
		cr_assert_eq(out.ack_epoch, in.ack_epoch);
		cr_assert_eq(out.ack, in.ack);
		cr_assert_eq(out.sack, in.sack);
		cr_assert_eq(out.dst_tag, in.dst_tag);
		cr_assert_eq(out.src_tag, in.src_tag);
		free(pkt);
	}
}

Test(swsrd, wire_layout_is_little_endian)
{
	struct rdmx_srd_hdr in = srd_sample;
	uint8_t *pkt;

	in.flags = RDMX_SRD_SKIP;
	pkt = srd_packet(&in, 0);
	cr_assert_eq(pkt[SRD_OFF_MAGIC], 'S');
	cr_assert_eq(pkt[SRD_OFF_MAGIC + 1], 'Y');
	cr_assert_eq(pkt[SRD_OFF_TYPE], RDMX_SRD_DATA);
	cr_assert_eq(pkt[SRD_OFF_FLAGS], RDMX_SRD_SKIP);
	cr_assert_eq(srd_le(pkt + SRD_OFF_EPOCH, 4), in.epoch);
	cr_assert_eq(srd_le(pkt + SRD_OFF_PSN, 4), in.psn);
	cr_assert_eq(srd_le(pkt + SRD_OFF_ACK_EPOCH, 4), in.ack_epoch);
	cr_assert_eq(srd_le(pkt + SRD_OFF_ACK, 4), in.ack);
	cr_assert_eq(srd_le(pkt + SRD_OFF_RESERVED, 4), 0);
	cr_assert_eq(srd_le(pkt + SRD_OFF_SACK, 8), in.sack);
	cr_assert_eq(srd_le(pkt + SRD_OFF_DST_TAG, 8), in.dst_tag);
	cr_assert_eq(srd_le(pkt + SRD_OFF_SRC_TAG, 8), in.src_tag);
	free(pkt);
}

Test(swsrd, wire_rejects_short_packets)
{
	for (size_t len = 0; len < SRD_HDR; len++) {
		uint8_t *full = srd_packet(&srd_sample, 0);
		uint8_t *pkt = malloc(len ? len : 1);

		/* Exactly len bytes on the heap: an over-read trips ASan. */
		cr_assert_not_null(pkt);
		memcpy(pkt, full, len);
		srd_expect_rejected(pkt, len, "short");
		free(pkt);
		free(full);
	}
}

Test(swsrd, wire_rejects_bad_magic_and_type)
{
	srd_expect_mutant_rejected(SRD_OFF_MAGIC, 'X', "bad magic low byte");
	srd_expect_mutant_rejected(SRD_OFF_MAGIC + 1, 'X', "the untagged header's magic");
	srd_expect_mutant_rejected(SRD_OFF_TYPE, 0, "type 0");
	srd_expect_mutant_rejected(SRD_OFF_TYPE, RDMX_SRD_TYPE_MAX, "type max");
	srd_expect_mutant_rejected(SRD_OFF_TYPE, 0xff, "type 255");
}

Test(swsrd, wire_rejects_unknown_flags_and_reserved)
{
	for (unsigned bit = 0; bit < 8; bit++)
		if (!((1u << bit) & RDMX_SRD_FLAGS_KNOWN))
			srd_expect_mutant_rejected(SRD_OFF_FLAGS, (uint8_t) (1u << bit),
						   "unknown flag");
	for (size_t i = 0; i < 4; i++)
		srd_expect_mutant_rejected(SRD_OFF_RESERVED + i, 1, "reserved");
}

/* Every packet names its sender's tag; a CHALLENGE carries nothing else. */
Test(swsrd, wire_rejects_untagged_and_loaded_challenges)
{
	struct rdmx_srd_hdr in = srd_sample;
	uint8_t *pkt;

	in.src_tag = 0;
	pkt = srd_packet(&in, 4);
	srd_expect_rejected(pkt, SRD_HDR + 4, "src_tag 0");
	free(pkt);
	in = srd_sample;
	in.type = RDMX_SRD_CHALLENGE;
	pkt = srd_packet(&in, 0);
	srd_expect_rejected(pkt, SRD_HDR, "a CHALLENGE with acknowledgement fields");
	free(pkt);
	in.ack_epoch = 0;
	in.flags = RDMX_SRD_TOO_BIG;
	pkt = srd_packet(&in, 0);
	srd_expect_rejected(pkt, SRD_HDR, "a CHALLENGE with flags");
	free(pkt);
	in.flags = 0;
	pkt = srd_packet(&in, 1);
	srd_expect_rejected(pkt, SRD_HDR + 1, "a CHALLENGE with a payload");
	free(pkt);
}

Test(swsrd, wire_rejects_payload_on_ack_rnr_and_skip)
{
	static const struct { enum rdmx_srd_type type; uint32_t flags; } forms[] = {
		{ RDMX_SRD_ACK, 0 },
		{ RDMX_SRD_RNR, 0 },
		{ RDMX_SRD_DATA, RDMX_SRD_SKIP },
	};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct rdmx_srd_hdr in = srd_sample;
		uint8_t *pkt;

		in.type = forms[i].type;
		in.flags = forms[i].flags;
		pkt = srd_packet(&in, 1);
		srd_expect_rejected(pkt, SRD_HDR + 1, "payload on a control packet");
		free(pkt);
	}
	/* SKIP is a DATA flag: an ACK or RNR carrying it is malformed. */
	for (enum rdmx_srd_type t = RDMX_SRD_ACK; t <= RDMX_SRD_RNR; t++) {
		struct rdmx_srd_hdr in = srd_sample;
		uint8_t *pkt;

		in.type = t;
		in.flags = RDMX_SRD_SKIP;
		pkt = srd_packet(&in, 0);
		srd_expect_rejected(pkt, SRD_HDR, "skip flag on a control packet");
		free(pkt);
	}
}

/*
 * A datagram endpoint's UNREL carries a payload and nothing else: any
 * other field set, or a flag, makes it malformed.
 */
Test(swsrd, wire_unrel_is_the_type_alone)
{
	const struct rdmx_srd_hdr unrel = { .type = RDMX_SRD_UNREL };
	static const size_t fields[] = {
		SRD_OFF_FLAGS, SRD_OFF_EPOCH, SRD_OFF_PSN, SRD_OFF_ACK_EPOCH, SRD_OFF_ACK,
		SRD_OFF_RESERVED, SRD_OFF_SACK, SRD_OFF_DST_TAG, SRD_OFF_SRC_TAG,
	};
	struct rdmx_srd_hdr out;
	uint8_t *pkt = srd_packet(&unrel, 5);

	cr_assert_eq(rdmx_wire_srd_decode(pkt, SRD_HDR + 5, &out), 0);
	cr_assert_eq(out.type, RDMX_SRD_UNREL);
	cr_assert_eq(rdmx_wire_srd_decode(pkt, SRD_HDR, &out), 0, "an empty UNREL");
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		pkt[fields[i]] = 1;
		srd_expect_rejected(pkt, SRD_HDR + 5, "an UNREL with a field set");
		pkt[fields[i]] = 0;
	}
	free(pkt);
}
