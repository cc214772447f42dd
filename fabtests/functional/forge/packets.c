/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_forge: the datagrams: each kind, random values, the rdm packets,
 * swsrd headers guessed or of our session, valid, near or random.
 */
#include <rdma/fi_errno.h>

#include "forge.h"

static size_t fg_build_msg(struct fg *fg, enum fg_kind kind, uint8_t *buf);
static size_t fg_build_long(struct fg *fg, enum fg_kind kind, uint8_t *buf);
static size_t fg_build_dack(struct fg *fg, enum fg_kind kind, uint8_t *buf);

const struct fg_kind_info fg_kinds[FG_KINDS] = {
	[FG_HS_RESET] = { "hs-reset", RDMX_SRD_DATA, 0, fg_build_hs, RDMX_HS_RESET },
	[FG_HS_ACK] = { "hs-ack", RDMX_SRD_DATA, 0, fg_build_hs, RDMX_HS_ACK },
	[FG_HS_PROBE] = { "hs-probe", RDMX_SRD_DATA, 0, fg_build_hs, RDMX_HS_PROBE },
	[FG_HS_PROBE_ACK] = { "hs-probe-ack", RDMX_SRD_DATA, 0, fg_build_hs, RDMX_HS_PROBE_ACK },
	[FG_HS_PING] = { "hs-ping", RDMX_SRD_DATA, 0, fg_build_hs, RDMX_HS_PING },
	[FG_HS_PONG] = { "hs-pong", RDMX_SRD_DATA, 0, fg_build_hs, RDMX_HS_PONG },
	[FG_HS_CLOSE] = { "hs-close", RDMX_SRD_DATA, 0, fg_build_hs, RDMX_HS_CLOSE },
	[FG_EAGER] = { "eager", RDMX_SRD_DATA, 0, fg_build_msg, 0 },
	[FG_VOID] = { "void", RDMX_SRD_DATA, 0, fg_build_msg, 0 },
	[FG_MEDIUM] = { "medium", RDMX_SRD_DATA, 0, fg_build_msg, 0 },
	[FG_RTS] = { "rts", RDMX_SRD_DATA, 0, fg_build_msg, 0 },
	[FG_CTS] = { "cts", RDMX_SRD_DATA, 0, fg_build_long, 0 },
	[FG_DATA] = { "data", RDMX_SRD_DATA, 0, fg_build_long, 0 },
	[FG_DACK] = { "dack", RDMX_SRD_DATA, 0, fg_build_dack, 0 },
	[FG_SKIP] = { "skip", RDMX_SRD_DATA, RDMX_SRD_SKIP, NULL, 0 },
	[FG_ACK] = { "ack", RDMX_SRD_ACK, 0, NULL, 0 },
	[FG_RNR] = { "rnr", RDMX_SRD_RNR, 0, NULL, 0 },
	[FG_RNR_BIG] = { "rnr-big", RDMX_SRD_RNR, RDMX_SRD_TOO_BIG, NULL, 0 },
	[FG_CHALLENGE] = { "challenge", RDMX_SRD_CHALLENGE, 0, NULL, 0 },
};

/* ---------------------------------------------------------------------
 * Random values
 * ------------------------------------------------------------------- */

/* The same sequence on every host for a seed. */
static uint64_t fg_rand(struct fg *fg)
{
	return ft_xorshift(&fg->rng);
}

static uint64_t fg_below(struct fg *fg, uint64_t n)
{
	return (fg_rand(fg) >> 11) % n;
}

uint64_t fg_nonzero(struct fg *fg)
{
	uint64_t v = fg_rand(fg);

	return v ? v : 1;
}

static void fg_fill(struct fg *fg, uint8_t *buf, size_t len)
{
	for (size_t off = 0; off < len; off += 8) {
		uint64_t w = fg_rand(fg);

		memcpy(buf + off, &w, len - off < 8 ? len - off : 8);
	}
}

/* An epoch as one might guess it: random, or a first session's (1..4). */
uint32_t fg_epoch(struct fg *fg)
{
	return fg_below(fg, 2) ? (uint32_t) fg_rand(fg) : 1 + (uint32_t) fg_below(fg, 4);
}

/* ---------------------------------------------------------------------
 * Packets
 * ------------------------------------------------------------------- */

/* A message id: a session's first ones, or anything. */
static uint32_t fg_msg_id(struct fg *fg)
{
	return fg_below(fg, 2) ? (uint32_t) fg_below(fg, 1024) : (uint32_t) fg_rand(fg);
}

static size_t fg_payload(struct fg *fg, uint8_t *buf, size_t min)
{
	size_t len = min + fg_below(fg, FG_PAYLOAD_MAX - min + 1);

	fg_fill(fg, buf, len);
	return len;
}

size_t fg_build_hs(struct fg *fg, enum fg_kind kind, uint8_t *buf)
{
	bool auth = fg->auth && fg->s.peer_incarnation;
	struct rdmx_hs_msg msg = {
		.type = fg_kinds[kind].hs,
		.probe_version = RDMX_HS_PROBE_VERSION,
		.proto_min = RDMX_PROTO_LEGACY,
		.proto_max = RDMX_PROTO_VERSION,
		.features = RDMX_HS_FEATURES,
		.incarnation = fg->auth ? fg->s.incarnation : fg_nonzero(fg),
		.peer_incarnation = auth ? fg->s.peer_incarnation : fg_rand(fg),
		.seq = (uint32_t) fg_below(fg, 64),
		.session = 1 + (uint32_t) fg_below(fg, 4),
		.rx_max = (uint32_t) FG_RX_MAX,
	};

	/* A CLOSE or a RESET that restarts our own session would end it. */
	if (fg->auth && (kind == FG_HS_CLOSE || kind == FG_HS_RESET))
		msg.session = 1;
	if (kind == FG_HS_RESET)
		msg.peer_incarnation = 0;
	rdmx_wire_hs_encode((struct rdmx_wire_hs *) buf, &msg);
	return rdmx_wire_hs_size(&msg);
}

/* Message flags: tagged or not, sometimes with CQ data or a DACK request. */
static uint32_t fg_msg_flags(struct fg *fg)
{
	uint32_t flags = fg->auth ? 0 : RDMX_PKT_TAGGED;

	if (fg_below(fg, 2))
		flags |= RDMX_PKT_CQ_DATA;
	return flags;
}

/* Tags the victim's receives might take: data (bit 63 clear) or control. */
static uint64_t fg_msg_tag(struct fg *fg)
{
	return fg_below(fg, 4) ? fg_rand(fg) >> 1 : fg_rand(fg) | (1ULL << 63);
}

static size_t fg_build_msg(struct fg *fg, enum fg_kind kind, uint8_t *buf)
{
	uint32_t flags = fg_msg_flags(fg), msg_id = fg_msg_id(fg);
	uint64_t tag = fg_msg_tag(fg), data = fg_rand(fg), len;
	struct rdmx_wire_medium *medium = (struct rdmx_wire_medium *) buf;

	switch (kind) {
	case FG_VOID:
		rdmx_wire_eager_encode((struct rdmx_wire_eager *) buf,
				       (flags & ~RDMX_PKT_CQ_DATA) | RDMX_PKT_VOID,
				       msg_id, tag, data);
		return sizeof(struct rdmx_wire_eager);
	case FG_MEDIUM:
		len = 2048 + fg_below(fg, 1 << 20);
		rdmx_wire_medium_encode(medium, flags, msg_id, tag, data, len,
					fg_below(fg, len - FG_PAYLOAD_MAX));
		return sizeof(*medium) + fg_payload(fg, buf + sizeof(*medium), 1);
	case FG_RTS:
		len = fg_below(fg, 2) ? 65536 + fg_below(fg, 1 << 24) : fg_rand(fg);
		rdmx_wire_rts_encode((struct rdmx_wire_rts *) buf, flags, msg_id,
				     (uint32_t) fg_below(fg, 4096), tag, data, len);
		return sizeof(struct rdmx_wire_rts);
	default:
		rdmx_wire_eager_encode((struct rdmx_wire_eager *) buf, flags, msg_id,
				       tag, data);
		return sizeof(struct rdmx_wire_eager) +
		       fg_payload(fg, buf + sizeof(struct rdmx_wire_eager), 0);
	}
}

static size_t fg_build_long(struct fg *fg, enum fg_kind kind, uint8_t *buf)
{
	uint32_t msg_id = fg_msg_id(fg), rx_id = (uint32_t) fg_below(fg, 4096);
	uint64_t end = fg_below(fg, 1 << 26);

	if (kind == FG_CTS) {
		rdmx_wire_cts_encode((struct rdmx_wire_cts *) buf, msg_id,
				     (uint32_t) fg_below(fg, 4096), rx_id, end,
				     fg_below(fg, end + 1));
		return sizeof(struct rdmx_wire_cts);
	}
	rdmx_wire_data_encode((struct rdmx_wire_data *) buf, msg_id, rx_id,
			      fg_below(fg, 1 << 26));
	return sizeof(struct rdmx_wire_data) +
	       fg_payload(fg, buf + sizeof(struct rdmx_wire_data), 1);
}

static size_t fg_build_dack(struct fg *fg, enum fg_kind kind, uint8_t *buf)
{
	bool fail = fg_below(fg, 4) == 0;

	(void) kind;
	rdmx_wire_dack_encode((struct rdmx_wire_dack *) buf, fg_msg_id(fg),
			      (uint32_t) fg_below(fg, 4096), fail ? FI_EIO : 0,
			      fail ? 1 : 1 + (uint32_t) fg_below(fg, RDMX_WIRE_DACK_RUN_MAX));
	return sizeof(struct rdmx_wire_dack);
}

/* The dst_tag of the next packet under mode. */
static uint64_t fg_dst_tag(struct fg *fg, enum fg_tags mode)
{
	switch (mode) {
	case FG_TAG_ZERO:
		return 0;
	case FG_TAG_SEQ:
		return ++fg->seq_tag;
	case FG_TAG_STALE:
		return fg->stale[fg_below(fg, fg->nstale)];
	default:
		return fg_rand(fg);
	}
}

/* The swsrd header of an unauthenticated packet of kind. */
static void fg_srd_guess(struct fg *fg, enum fg_kind kind, uint64_t dst_tag,
			 struct rdmx_srd_hdr *h)
{
	*h = (struct rdmx_srd_hdr) {
		.type = fg_kinds[kind].srd,
		.flags = fg_kinds[kind].srd_flags,
		.dst_tag = dst_tag,
		.src_tag = fg_nonzero(fg),
	};
	switch (h->type) {
	case RDMX_SRD_DATA:
		h->epoch = fg_epoch(fg);
		h->psn = (uint32_t) fg_below(fg, FG_WINDOW);
		if (fg_below(fg, 2)) {
			/* A piggy-backed ack of a guessed session. */
			h->ack_epoch = fg_epoch(fg);
			h->ack = (uint32_t) fg_below(fg, 4096);
			h->sack = fg_rand(fg);
		}
		break;
	case RDMX_SRD_ACK:
		h->ack_epoch = fg_epoch(fg);
		h->ack = fg->sweep++;
		h->sack = ~0ULL;
		break;
	case RDMX_SRD_RNR:
		h->epoch = fg_epoch(fg);
		h->psn = fg->sweep++;
		break;
	default:
		break;
	}
}

/* The swsrd header of the next DATA of our --auth session. */
void fg_srd_auth(struct fg *fg, enum fg_kind kind, struct rdmx_srd_hdr *h)
{
	struct fg_session *s = &fg->s;

	*h = (struct rdmx_srd_hdr) {
		.type = RDMX_SRD_DATA,
		.flags = kind == FG_SKIP ? RDMX_SRD_SKIP : 0,
		.epoch = s->epoch,
		.psn = s->psn++,
		.dst_tag = s->cookie,
		.src_tag = s->tag,
	};
	if (s->rx_known) {
		h->ack_epoch = s->rx_epoch;
		h->ack = s->rx_next;
		h->sack = s->rx_bits;
	}
}

/* Changes one byte of the first len bytes at buf (never to itself). */
static void fg_mutate(struct fg *fg, uint8_t *buf, size_t len)
{
	buf[fg_below(fg, len)] ^= (uint8_t) (1 + fg_below(fg, 255));
}

/* Random bytes of random length, half of them after the swsrd magic. */
static size_t fg_random(struct fg *fg, uint8_t *buf)
{
	size_t len = fg_below(fg, FG_DGRAM_MAX + 1);

	fg_fill(fg, buf, len);
	if (len >= 2 && fg_below(fg, 2)) {
		buf[0] = RDMX_SRD_MAGIC & 0xff;
		buf[1] = RDMX_SRD_MAGIC >> 8;
	}
	return len;
}

/* The rdm packet of kind after the swsrd header at buf; its length. */
static size_t fg_rdm(struct fg *fg, enum fg_kind kind, uint8_t *buf)
{
	return fg_kinds[kind].build ? fg_kinds[kind].build(fg, kind, buf) : 0;
}

/* Builds datagram number i at buf; returns its length. */
size_t fg_make(struct fg *fg, uint64_t i, uint8_t *buf)
{
	enum fg_kind kind = fg->kinds[i % fg->nkinds];
	enum fg_tags mode = fg->tags[(i / fg->nkinds) % fg->ntags];
	/* mix: valid, near and random in turn, each over every kind and tag. */
	enum fg_content content = fg->content == FG_MIX ?
				  (enum fg_content) (i / (fg->nkinds * fg->ntags) % 3) :
				  fg->content;
	const size_t srd = sizeof(struct rdmx_wire_srd);
	struct rdmx_srd_hdr h;
	size_t rdm_len;

	fg->per_kind[kind]++;
	if (fg->auth) {
		fg_srd_auth(fg, kind, &h);
	} else {
		fg->per_tag[mode]++;
		fg_srd_guess(fg, kind, fg_dst_tag(fg, mode), &h);
	}
	rdmx_wire_srd_encode((struct rdmx_wire_srd *) buf, &h);
	if (content == FG_RANDOM) {
		fg->random++;
		if (!fg->auth)
			return fg_random(fg, buf);
		/* Inside our session: a valid header before the junk. */
		return srd + fg_random(fg, buf + srd) % (FG_DGRAM_MAX - srd);
	}
	rdm_len = h.flags & RDMX_SRD_SKIP ? 0 : fg_rdm(fg, kind, buf + srd);
	if (content == FG_NEAR) {
		fg->near++;
		if (!fg->auth) {
			fg_mutate(fg, buf, srd + FG_MIN(rdm_len, 64));
		} else if (rdm_len) {
			fg_mutate(fg, buf + srd, FG_MIN(rdm_len, 64));
			/* Still untagged: see the header comment. */
			buf[srd + offsetof(struct rdmx_wire_base, flags)] &=
				(uint8_t) ~RDMX_PKT_TAGGED;
		}
	}
	return srd + rdm_len;
}
