/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_forge: forges rdmx datagrams at a udp endpoint, as an attacker on
 * its network would (scripts/attack.sh). Unlike the other programs here
 * it includes the provider's wire header and links its codec
 * (prov/rdmx/src/rdm/rdmx_wire.c and dev/rdmx_wire_srd.c), so its packets
 * follow every format change.
 *
 *   rdmx_forge [options] host port
 *
 * Spoofing (--from addr:port): a raw socket (IP_HDRINCL) sends each
 * datagram with that source, e.g. a live peer's own address and port.
 * Without --from a plain UDP socket bound to --bind sends them.
 *
 * What each datagram is (--kind, a comma-separated list taken in turn):
 *   hs-reset hs-ack hs-probe hs-probe-ack hs-ping hs-pong hs-close
 *   eager void medium rts cts data dack   an rdm packet in a swsrd DATA
 *   skip                                  a swsrd SKIP
 *   ack rnr rnr-big challenge             swsrd control packets; ack and
 *                                         rnr sweep every psn in turn
 *   groups: hs, rdm, all
 * whose dst_tag (the receiver's session tag) is, in turn over --tags:
 *   zero, random, seq (1, 2, 3...), stale (the tags listed in --tag-file,
 *   seen in an earlier run: an off-path attacker cannot see current ones)
 * and whose content (--content) is valid, near (a valid datagram with one
 * header byte changed), random (random bytes and length, half of them
 * starting with the swsrd magic) or mix (valid, near and random in turn).
 * -n count, --rate packets per second (0: as fast as the socket takes
 * them), --seed for the generator: the same options send the same bytes.
 *
 * --auth: an attacker at its own address (plain socket) that answers the
 * CHALLENGE with the cookie it carried, then opens an rdm session
 * (RESET, answering probes and pings, acknowledging what it receives,
 * resending from the hole when its window stalls), and sends its -n
 * datagrams inside that session: valid, near or random rdm packets
 * behind valid swsrd headers, so they reach the rdm layer. Its messages
 * are untagged (a tagged one would match the victim's wildcard receives,
 * which any peer may legitimately do).
 *
 * --anon-ports N: from N distinct real source ports (--port-base, then
 * upwards), each sends a RESET with dst_tag 0, takes the cookie its
 * CHALLENGE carries and sends the RESET again with it: N senders that
 * proved they receive at their address, i.e. N anonymous peers.
 *
 * --observe file --secs S: records for S seconds the dst_tag and src_tag
 * values of the swsrd datagrams arriving at port (host ignored) into
 * file, one hex value a line, for a later --tags stale.
 *
 * Prints what it sent on one line: "rdmx_forge: sent=N bytes=B ...".
 * Exit status: 0, 1 on a failure (socket, file), 2 on bad options.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include "ft_common.h"
#include "rdmx_wire.h"

#define FG_NAME		"rdmx_forge"
#define FG_DGRAM_MAX	1472	/* UDP payload of a 1500-byte MTU */
#define FG_PAYLOAD_MAX	1024	/* bytes after an rdm header, at most */
#define FG_STALE_MAX	256	/* tags read from --tag-file */
#define FG_WINDOW	64	/* the swsrd window (RDMX_SRD_WINDOW) */
#define FG_ANSWER_MS	200	/* wait for a CHALLENGE */
#define FG_RX_MAX	(FG_DGRAM_MAX - sizeof(struct rdmx_wire_srd))
#define FG_MIN(a, b)	((a) < (b) ? (a) : (b))

const char *const ft_prog = FG_NAME;

enum fg_kind {
	FG_HS_RESET, FG_HS_ACK, FG_HS_PROBE, FG_HS_PROBE_ACK, FG_HS_PING,
	FG_HS_PONG, FG_HS_CLOSE, FG_EAGER, FG_VOID, FG_MEDIUM, FG_RTS, FG_CTS,
	FG_DATA, FG_DACK, FG_SKIP, FG_ACK, FG_RNR, FG_RNR_BIG, FG_CHALLENGE,
	FG_KINDS,
};

enum fg_tags { FG_TAG_ZERO, FG_TAG_RANDOM, FG_TAG_SEQ, FG_TAG_STALE, FG_TAG_MODES };

enum fg_content { FG_VALID, FG_NEAR, FG_RANDOM, FG_MIX };

struct fg;
/* Writes the rdm packet of a kind at buf; returns its length. */
typedef size_t (*fg_build_fn)(struct fg *fg, enum fg_kind kind, uint8_t *buf);

static size_t fg_build_hs(struct fg *fg, enum fg_kind kind, uint8_t *buf);
static size_t fg_build_msg(struct fg *fg, enum fg_kind kind, uint8_t *buf);
static size_t fg_build_long(struct fg *fg, enum fg_kind kind, uint8_t *buf);
static size_t fg_build_dack(struct fg *fg, enum fg_kind kind, uint8_t *buf);

/* Each kind: its name, its swsrd packet and flags, its rdm packet. */
static const struct {
	const char		*name;
	enum rdmx_srd_type	srd;
	uint8_t			srd_flags;
	fg_build_fn		build;		/* NULL: the swsrd header alone */
	enum rdmx_hs_type	hs;
} fg_kinds[FG_KINDS] = {
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

static const char *const fg_tag_names[FG_TAG_MODES] = {
	[FG_TAG_ZERO] = "zero", [FG_TAG_RANDOM] = "random",
	[FG_TAG_SEQ] = "seq", [FG_TAG_STALE] = "stale",
};

static const char *const fg_content_names[] = {
	[FG_VALID] = "valid", [FG_NEAR] = "near", [FG_RANDOM] = "random",
	[FG_MIX] = "mix",
};

/* --auth: our side of an rdm session with the victim. */
struct fg_session {
	uint64_t	tag;		/* ours: the src_tag we send */
	uint64_t	cookie;		/* theirs for us: the dst_tag we send */
	uint32_t	epoch;		/* our transmit session */
	uint32_t	psn;		/* next to send */
	uint32_t	acked;		/* first psn not acknowledged */
	bool		rx_known;	/* their transmit session, as received */
	uint32_t	rx_epoch;
	uint32_t	rx_next;
	uint64_t	rx_bits;	/* bit i: rx_next + i seen */
	uint64_t	incarnation;	/* ours and theirs (handshake) */
	uint64_t	peer_incarnation;
	uint64_t	rewinds;	/* times the window stalled */
	uint64_t	answers;	/* probes and pings answered */
};

struct fg {
	/* Options. */
	const char		*host;
	struct sockaddr_in	to;
	struct sockaddr_in	from;		/* --from: spoofed source */
	bool			spoof;
	struct sockaddr_in	bind;		/* a plain socket's address */
	enum fg_kind		kinds[FG_KINDS];
	size_t			nkinds;
	enum fg_tags		tags[FG_TAG_MODES];
	size_t			ntags;
	enum fg_content		content;
	uint64_t		count, rate, seed;
	uint64_t		anon_ports;
	uint64_t		port_base;
	bool			auth;
	const char		*observe;
	const char		*tag_file;
	uint64_t		secs;

	/* State. */
	int			fd;
	uint64_t		rng;
	uint64_t		seq_tag;
	uint32_t		sweep;		/* psn of the next ack or rnr */
	uint64_t		stale[FG_STALE_MAX];
	size_t			nstale;
	struct fg_session	s;

	/* What was sent. */
	uint64_t		sent, bytes, retries;
	uint64_t		per_kind[FG_KINDS];
	uint64_t		per_tag[FG_TAG_MODES];
	uint64_t		near, random;
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

static uint64_t fg_nonzero(struct fg *fg)
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
static uint32_t fg_epoch(struct fg *fg)
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

static size_t fg_build_hs(struct fg *fg, enum fg_kind kind, uint8_t *buf)
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
static void fg_srd_auth(struct fg *fg, enum fg_kind kind, struct rdmx_srd_hdr *h)
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
static size_t fg_make(struct fg *fg, uint64_t i, uint8_t *buf)
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

/* ---------------------------------------------------------------------
 * Sockets
 * ------------------------------------------------------------------- */

static uint16_t fg_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t) ~sum;
}

static uint32_t fg_csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t) (p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t) (p[len - 1] << 8);
	return sum;
}

/* The UDP checksum over the IPv4 pseudo-header, header and payload. */
static uint16_t fg_udp_csum(const struct iphdr *ip, const uint8_t *udp, size_t len)
{
	uint8_t pseudo[12];
	uint16_t ulen = htons((uint16_t) len), csum;

	memcpy(pseudo, &ip->saddr, 4);
	memcpy(pseudo + 4, &ip->daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_UDP;
	memcpy(pseudo + 10, &ulen, 2);
	csum = fg_csum_fold(fg_csum_add(fg_csum_add(0, pseudo, sizeof(pseudo)), udp, len));
	return htons(csum ? csum : 0xffff);
}

/* Sends len bytes at dgram, from --from through the raw socket. */
static ssize_t fg_send_raw(struct fg *fg, const uint8_t *dgram, size_t len)
{
	uint8_t pkt[sizeof(struct iphdr) + sizeof(struct udphdr) + FG_DGRAM_MAX];
	struct iphdr *ip = (struct iphdr *) pkt;
	struct udphdr *udp = (struct udphdr *) (pkt + sizeof(*ip));
	size_t ulen = sizeof(*udp) + len;

	*ip = (struct iphdr) {
		.version = 4, .ihl = 5, .ttl = 64, .protocol = IPPROTO_UDP,
		.tot_len = htons((uint16_t) (sizeof(*ip) + ulen)),
		.saddr = fg->from.sin_addr.s_addr, .daddr = fg->to.sin_addr.s_addr,
	};
	*udp = (struct udphdr) {
		.source = fg->from.sin_port, .dest = fg->to.sin_port,
		.len = htons((uint16_t) ulen),
	};
	memcpy(udp + 1, dgram, len);
	udp->check = fg_udp_csum(ip, (const uint8_t *) udp, ulen);
	return sendto(fg->fd, pkt, sizeof(*ip) + ulen, 0,
		      (const struct sockaddr *) &fg->to, sizeof(fg->to));
}

/* Sends one datagram, waiting out a full socket buffer; 0 or -1. */
static int fg_send(struct fg *fg, const uint8_t *dgram, size_t len)
{
	for (;;) {
		ssize_t ret = fg->spoof ? fg_send_raw(fg, dgram, len) :
			      sendto(fg->fd, dgram, len, 0,
				     (const struct sockaddr *) &fg->to, sizeof(fg->to));

		if (ret >= 0)
			break;
		/* Refused: an ICMP error of an earlier datagram; keep going. */
		if (errno == ECONNREFUSED)
			continue;
		if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR) {
			ft_fail("sendto: %s", strerror(errno));
			return -1;
		}
		fg->retries++;
		nanosleep(&(struct timespec) { 0, 20000 }, NULL);
	}
	fg->sent++;
	fg->bytes += len;
	return 0;
}

static int fg_open_raw(struct fg *fg)
{
	int one = 1;

	fg->fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (fg->fd < 0 || setsockopt(fg->fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)))
		return ft_fail("raw socket: %s (needs root)", strerror(errno)), -1;
	return 0;
}

/* A plain UDP socket bound to addr; the descriptor or -1. */
static int fg_open_udp(const struct sockaddr_in *addr, bool quiet)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && !bind(fd, (const struct sockaddr *) addr, sizeof(*addr)))
		return fd;
	if (!quiet)
		ft_fail("udp socket: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Waits up to ms for a datagram on fd; its length, 0 on timeout, -1. */
static ssize_t fg_recv(int fd, uint8_t *buf, size_t len, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t ret;

	if (poll(&pfd, 1, ms) <= 0)
		return 0;
	ret = recv(fd, buf, len, MSG_DONTWAIT);
	return ret < 0 && (errno == EAGAIN || errno == ECONNREFUSED) ? 0 : ret;
}

/* ---------------------------------------------------------------------
 * Pacing and the flood
 * ------------------------------------------------------------------- */

/* Sleeps until datagram i is due at --rate. */
static void fg_pace(struct fg *fg, uint64_t start_ns, uint64_t i)
{
	uint64_t due = start_ns + i * 1000000000ULL / fg->rate, now = ft_now_ns();

	if (due > now + 50000)
		nanosleep(&(struct timespec) { (time_t) ((due - now) / 1000000000ULL),
					       (long) ((due - now) % 1000000000ULL) }, NULL);
}

static void fg_session_poll(struct fg *fg);

static int fg_flood(struct fg *fg)
{
	uint8_t buf[FG_DGRAM_MAX + 64];
	uint64_t start = ft_now_ns();

	for (uint64_t i = 0; i < fg->count; i++) {
		if (fg->rate && i % 16 == 0)
			fg_pace(fg, start, i);
		if (fg->auth && i % 16 == 0)
			fg_session_poll(fg);
		if (fg_send(fg, buf, fg_make(fg, i, buf)))
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------
 * --auth: a session of our own
 * ------------------------------------------------------------------- */

/* Sends an unauthenticated RESET with dst_tag 0 from fd; 0 or -1. */
static int fg_hello(struct fg *fg, int fd, uint64_t src_tag)
{
	uint8_t buf[256];
	const size_t srd = sizeof(struct rdmx_wire_srd);
	struct rdmx_srd_hdr h = {
		.type = RDMX_SRD_DATA, .epoch = fg_epoch(fg), .src_tag = src_tag,
	};

	rdmx_wire_srd_encode((struct rdmx_wire_srd *) buf, &h);
	return sendto(fd, buf, srd + fg_build_hs(fg, FG_HS_RESET, buf + srd), 0,
		      (const struct sockaddr *) &fg->to, sizeof(fg->to)) < 0 ? -1 : 0;
}

/* The cookie a CHALLENGE to src_tag brought to fd; 0 when none came. */
static uint64_t fg_cookie(int fd, uint64_t src_tag)
{
	uint8_t buf[FG_DGRAM_MAX];
	struct rdmx_srd_hdr h;
	uint64_t deadline = ft_now_ns() + FG_ANSWER_MS * 1000000ULL;
	ssize_t len;

	while (ft_now_ns() < deadline) {
		len = fg_recv(fd, buf, sizeof(buf), FG_ANSWER_MS);
		if (len > 0 && !rdmx_wire_srd_decode(buf, (size_t) len, &h) &&
		    h.type == RDMX_SRD_CHALLENGE && h.dst_tag == src_tag)
			return h.src_tag;
	}
	return 0;
}

/* Sends our session's next DATA, an HS message of type answering seq. */
static int fg_session_hs(struct fg *fg, enum fg_kind kind, uint32_t seq)
{
	uint8_t buf[256];
	const size_t srd = sizeof(struct rdmx_wire_srd);
	struct rdmx_srd_hdr h;
	size_t len;

	fg_srd_auth(fg, kind, &h);
	rdmx_wire_srd_encode((struct rdmx_wire_srd *) buf, &h);
	len = srd + fg_build_hs(fg, kind, buf + srd);
	((struct rdmx_wire_hs *) (buf + srd))->seq = htole32(seq);
	return fg_send(fg, buf, len);
}

/* Notes psn of the victim's session as received. */
static void fg_session_rx(struct fg_session *s, const struct rdmx_srd_hdr *h)
{
	uint32_t off;

	if (!s->rx_known || h->epoch != s->rx_epoch) {
		s->rx_known = true;
		s->rx_epoch = h->epoch;
		s->rx_next = h->psn;
		s->rx_bits = 0;
	}
	off = h->psn - s->rx_next;
	if (off >= FG_WINDOW)
		return;
	s->rx_bits |= 1ULL << off;
	while (s->rx_bits & 1) {
		s->rx_bits >>= 1;
		s->rx_next++;
	}
}

/* Answers the victim's handshake messages (its ACK, probes, pings). */
static void fg_session_hs_in(struct fg *fg, const uint8_t *buf, size_t len)
{
	struct rdmx_pkt pkt;
	struct rdmx_hs_msg msg;

	if (rdmx_wire_decode(buf, len, &pkt) || pkt.type != RDMX_PKT_HS)
		return;
	rdmx_wire_hs_decode(buf, len, &msg);
	if (msg.type == RDMX_HS_ACK || msg.type == RDMX_HS_RESET)
		fg->s.peer_incarnation = msg.incarnation;
	if (msg.type == RDMX_HS_PROBE || msg.type == RDMX_HS_PING) {
		fg->s.answers++;
		(void) fg_session_hs(fg, msg.type == RDMX_HS_PROBE ? FG_HS_PROBE_ACK :
				     FG_HS_PONG, msg.seq);
	}
}

/* Takes one datagram from the victim. */
static void fg_session_in(struct fg *fg, const uint8_t *buf, size_t len)
{
	struct fg_session *s = &fg->s;
	const size_t srd = sizeof(struct rdmx_wire_srd);
	struct rdmx_srd_hdr h;

	if (rdmx_wire_srd_decode(buf, len, &h) || h.dst_tag != s->tag)
		return;
	if (h.type == RDMX_SRD_CHALLENGE) {
		s->cookie = h.src_tag;
		return;
	}
	if (h.ack_epoch == s->epoch && (int32_t) (h.ack - s->acked) > 0)
		s->acked = h.ack;
	if (h.type == RDMX_SRD_DATA) {
		fg_session_rx(s, &h);
		if (len > srd)
			fg_session_hs_in(fg, buf + srd, len - srd);
	}
}

/*
 * Reads what the victim sent; when our window is full of packets it did
 * not acknowledge, sends again from the first (go-back-N: new content
 * under the old psn, which it has not seen).
 */
static void fg_session_poll(struct fg *fg)
{
	uint8_t buf[FG_DGRAM_MAX];
	ssize_t len;

	while ((len = fg_recv(fg->fd, buf, sizeof(buf), 0)) > 0)
		fg_session_in(fg, buf, (size_t) len);
	if (fg->s.psn - fg->s.acked >= FG_WINDOW) {
		fg->s.psn = fg->s.acked;
		fg->s.rewinds++;
		/* Let its acks of what it did take arrive. */
		nanosleep(&(struct timespec) { 0, 200000 }, NULL);
	}
}

/* Takes the cookie and opens an rdm session with the victim; 0 or -1. */
static int fg_session_open(struct fg *fg)
{
	struct fg_session *s = &fg->s;
	uint64_t deadline;

	s->tag = fg_nonzero(fg);
	s->epoch = (uint32_t) fg_nonzero(fg);
	s->incarnation = fg_nonzero(fg);
	if (fg_hello(fg, fg->fd, s->tag) || !(s->cookie = fg_cookie(fg->fd, s->tag)))
		return ft_fail("--auth: no CHALLENGE came back"), -1;
	if (fg_session_hs(fg, FG_HS_RESET, 0))
		return -1;
	deadline = ft_now_ns() + 2000000000ULL;
	while (!s->peer_incarnation && ft_now_ns() < deadline) {
		uint8_t buf[FG_DGRAM_MAX];
		ssize_t len = fg_recv(fg->fd, buf, sizeof(buf), 10);

		if (len > 0)
			fg_session_in(fg, buf, (size_t) len);
	}
	if (!s->peer_incarnation)
		return ft_fail("--auth: the victim did not answer our RESET"), -1;
	return 0;
}

/* ---------------------------------------------------------------------
 * --anon-ports and --observe
 * ------------------------------------------------------------------- */

/* One anonymous peer from port; adds to *challenged and *echoed. */
static void fg_anon_one(struct fg *fg, uint16_t port, uint64_t *challenged,
			uint64_t *echoed)
{
	struct sockaddr_in addr = fg->bind;
	uint64_t tag = fg_nonzero(fg), cookie;
	uint8_t buf[256];
	const size_t srd = sizeof(struct rdmx_wire_srd);
	struct rdmx_srd_hdr h = {
		.type = RDMX_SRD_DATA, .epoch = fg_epoch(fg), .src_tag = tag,
	};
	int fd;

	addr.sin_port = htons(port);
	fd = fg_open_udp(&addr, true);
	if (fd < 0)
		return;
	if (!fg_hello(fg, fd, tag) && (cookie = fg_cookie(fd, tag))) {
		(*challenged)++;
		h.dst_tag = cookie;
		rdmx_wire_srd_encode((struct rdmx_wire_srd *) buf, &h);
		if (sendto(fd, buf, srd + fg_build_hs(fg, FG_HS_RESET, buf + srd), 0,
			   (const struct sockaddr *) &fg->to, sizeof(fg->to)) > 0)
			(*echoed)++;
	}
	fg->sent += 2;
	close(fd);
}

static int fg_anon(struct fg *fg)
{
	uint64_t challenged = 0, echoed = 0, skipped = 0, port = fg->port_base;
	uint64_t before;

	for (uint64_t i = 0; i < fg->anon_ports; port++) {
		if (port > 65535)
			return ft_fail("--anon-ports: ran out of ports at %" PRIu64, i), -1;
		before = fg->sent;
		fg_anon_one(fg, (uint16_t) port, &challenged, &echoed);
		if (fg->sent == before)
			skipped++;	/* the port is taken */
		else
			i++;
	}
	printf(FG_NAME ": anon_ports=%" PRIu64 " challenged=%" PRIu64 " echoed=%"
	       PRIu64 " sent=%" PRIu64 " ports_taken=%" PRIu64 "\n", fg->anon_ports,
	       challenged, echoed, fg->sent, skipped);
	return 0;
}

/* Adds tag to the stale list unless it is 0 or there. */
static void fg_note_tag(struct fg *fg, uint64_t tag)
{
	if (!tag || fg->nstale == FG_STALE_MAX)
		return;
	for (size_t i = 0; i < fg->nstale; i++)
		if (fg->stale[i] == tag)
			return;
	fg->stale[fg->nstale++] = tag;
}

/* Takes the swsrd header of one IPv4 datagram to our port. */
static void fg_observe_one(struct fg *fg, const uint8_t *pkt, size_t len)
{
	const struct iphdr *ip = (const struct iphdr *) pkt;
	const struct udphdr *udp;
	size_t ihl;
	struct rdmx_srd_hdr h;

	if (len < sizeof(*ip) || ip->protocol != IPPROTO_UDP)
		return;
	ihl = ip->ihl * 4u;
	if (len < ihl + sizeof(*udp))
		return;
	udp = (const struct udphdr *) (pkt + ihl);
	if (udp->dest != fg->to.sin_port ||
	    rdmx_wire_srd_decode(udp + 1, len - ihl - sizeof(*udp), &h))
		return;
	fg_note_tag(fg, h.dst_tag);
	fg_note_tag(fg, h.src_tag);
}

static int fg_observe(struct fg *fg)
{
	uint8_t pkt[65536];
	uint64_t end = ft_now_ns() + fg->secs * 1000000000ULL, seen = 0;
	FILE *f;
	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);
	ssize_t len;

	if (fd < 0)
		return ft_fail("raw socket: %s (needs root)", strerror(errno)), -1;
	while (ft_now_ns() < end) {
		len = fg_recv(fd, pkt, sizeof(pkt), 100);
		if (len > 0) {
			seen++;
			fg_observe_one(fg, pkt, (size_t) len);
		}
	}
	close(fd);
	f = fopen(fg->observe, "w");
	if (!f)
		return ft_fail("%s: %s", fg->observe, strerror(errno)), -1;
	for (size_t i = 0; i < fg->nstale; i++)
		fprintf(f, "%016" PRIx64 "\n", fg->stale[i]);
	fclose(f);
	printf(FG_NAME ": observed %" PRIu64 " udp datagrams, %zu tags to %s\n",
	       seen, fg->nstale, fg->observe);
	return 0;
}

static int fg_read_tags(struct fg *fg)
{
	FILE *f = fopen(fg->tag_file, "r");
	uint64_t tag;

	if (!f)
		return ft_fail("%s: %s", fg->tag_file, strerror(errno)), -1;
	while (fscanf(f, "%" SCNx64, &tag) == 1)
		fg_note_tag(fg, tag);
	fclose(f);
	if (!fg->nstale)
		return ft_fail("%s: no tag", fg->tag_file), -1;
	return 0;
}

/* ---------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------- */

static void fg_usage(void)
{
	fprintf(stderr,
		"usage: " FG_NAME " [options] host port\n"
		"  --from addr:port   spoof this source (raw socket)\n"
		"  --bind addr        a plain socket's address (default 0.0.0.0)\n"
		"  --kind list        hs-reset,hs-ack,hs-probe,hs-probe-ack,hs-ping,\n"
		"                     hs-pong,hs-close,eager,void,medium,rts,cts,data,\n"
		"                     dack,skip,ack,rnr,rnr-big,challenge; hs, rdm, all\n"
		"  --tags list        zero,random,seq,stale (default all but stale)\n"
		"  --tag-file file    the stale tags, hex, one a line\n"
		"  --content c        valid, near, random or mix (default valid)\n"
		"  -n count --rate pps --seed s\n"
		"  --auth             from our own address, inside a session we open\n"
		"  --anon-ports N [--port-base P]  N anonymous peers\n"
		"  --observe file --secs S  record the tags arriving at port\n");
}

/* Parses "addr:port" into sa; 0 or -1. */
static int fg_parse_addr(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	uint64_t port;

	if (!colon || (size_t) (colon - s) >= sizeof(host))
		return ft_fail("bad address '%s' (addr:port)", s);
	memcpy(host, s, (size_t) (colon - s));
	host[colon - s] = '\0';
	sa->sin_family = AF_INET;
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return ft_fail("bad IPv4 address '%s'", host);
	if (ft_parse_num(colon + 1, 0, 65535, &port))
		return -1;
	sa->sin_port = htons((uint16_t) port);
	return 0;
}

/* Adds the kinds named by one word of --kind. */
static int fg_add_kind(struct fg *fg, const char *word)
{
	size_t lo = FG_KINDS, hi = 0;

	if (!strcmp(word, "hs"))
		lo = FG_HS_RESET, hi = FG_HS_CLOSE;
	else if (!strcmp(word, "rdm"))
		lo = FG_HS_RESET, hi = FG_DACK;
	else if (!strcmp(word, "all"))
		lo = 0, hi = FG_KINDS - 1;
	for (size_t k = 0; lo == FG_KINDS && k < FG_KINDS; k++)
		if (!strcmp(word, fg_kinds[k].name))
			lo = hi = k;
	if (lo == FG_KINDS)
		return ft_fail("unknown kind '%s'", word);
	for (size_t k = lo; k <= hi && fg->nkinds < FG_KINDS; k++)
		fg->kinds[fg->nkinds++] = (enum fg_kind) k;
	return 0;
}

static int fg_add_tags(struct fg *fg, const char *word)
{
	for (size_t m = 0; m < FG_TAG_MODES; m++) {
		if (!strcmp(word, fg_tag_names[m]) && fg->ntags < FG_TAG_MODES) {
			fg->tags[fg->ntags++] = (enum fg_tags) m;
			return 0;
		}
	}
	return ft_fail("unknown tag mode '%s'", word);
}

/* Calls add for each comma-separated word of list; 0 or -1. */
static int fg_each_word(struct fg *fg, const char *list,
			int (*add)(struct fg *fg, const char *word))
{
	char copy[256], *save = NULL;

	if (strlen(list) >= sizeof(copy))
		return ft_fail("list too long: %s", list);
	strcpy(copy, list);
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save))
		if (add(fg, w))
			return -1;
	return 0;
}

static int fg_parse_content(struct fg *fg, const char *s)
{
	for (size_t c = 0; c < sizeof(fg_content_names) / sizeof(fg_content_names[0]); c++) {
		if (!strcmp(s, fg_content_names[c])) {
			fg->content = (enum fg_content) c;
			return 0;
		}
	}
	return ft_fail("unknown content '%s'", s);
}

static const struct option fg_long_opts[] = {
	{ "from", required_argument, NULL, 'f' },
	{ "bind", required_argument, NULL, 'b' },
	{ "kind", required_argument, NULL, 'k' },
	{ "tags", required_argument, NULL, 'T' },
	{ "tag-file", required_argument, NULL, 'F' },
	{ "content", required_argument, NULL, 'c' },
	{ "rate", required_argument, NULL, 'R' },
	{ "seed", required_argument, NULL, 'S' },
	{ "auth", no_argument, NULL, 'A' },
	{ "anon-ports", required_argument, NULL, 'P' },
	{ "port-base", required_argument, NULL, 'B' },
	{ "observe", required_argument, NULL, 'O' },
	{ "secs", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int fg_parse_opt(struct fg *fg, int c, const char *arg)
{
	switch (c) {
	case 'f': fg->spoof = true; return fg_parse_addr(arg, &fg->from);
	case 'b': return inet_pton(AF_INET, arg, &fg->bind.sin_addr) == 1 ? 0 :
			 ft_fail("bad --bind '%s'", arg);
	case 'k': return fg_each_word(fg, arg, fg_add_kind);
	case 'T': return fg_each_word(fg, arg, fg_add_tags);
	case 'F': fg->tag_file = arg; return 0;
	case 'c': return fg_parse_content(fg, arg);
	case 'n': return ft_parse_num(arg, 1, UINT64_MAX, &fg->count);
	case 'R': return ft_parse_num(arg, 0, 100000000, &fg->rate);
	case 'S': return ft_parse_num(arg, 0, UINT64_MAX, &fg->seed);
	case 'A': fg->auth = true; return 0;
	case 'P': return ft_parse_num(arg, 1, 60000, &fg->anon_ports);
	case 'B': return ft_parse_num(arg, 1, 65535, &fg->port_base);
	case 'O': fg->observe = arg; return 0;
	case 's': return ft_parse_num(arg, 1, 3600, &fg->secs);
	default: return -1;
	}
}

static int fg_parse(struct fg *fg, int argc, char **argv)
{
	uint64_t port;
	int c;

	while ((c = getopt_long(argc, argv, "n:h", fg_long_opts, NULL)) != -1)
		if (fg_parse_opt(fg, c, optarg))
			return -1;
	if (argc - optind != 2 || ft_parse_num(argv[optind + 1], 1, 65535, &port))
		return -1;
	fg->host = argv[optind];
	fg->to.sin_family = AF_INET;
	fg->to.sin_port = htons((uint16_t) port);
	if (inet_pton(AF_INET, fg->host, &fg->to.sin_addr) != 1)
		return ft_fail("bad IPv4 host '%s'", fg->host);
	if (!fg->nkinds)
		fg_add_kind(fg, "all");
	if (!fg->ntags)
		for (size_t m = 0; m < FG_TAG_STALE; m++)
			fg->tags[fg->ntags++] = (enum fg_tags) m;
	if (fg->spoof && fg->auth)
		return ft_fail("--auth sends from our own address: no --from");
	if (fg->observe && !fg->secs)
		return ft_fail("--observe needs --secs");
	return 0;
}

/* Prints what fg_flood sent. */
static void fg_report(const struct fg *fg)
{
	printf(FG_NAME ": sent=%" PRIu64 " bytes=%" PRIu64 " content=%s near=%" PRIu64
	       " random=%" PRIu64 " send_retries=%" PRIu64, fg->sent, fg->bytes,
	       fg_content_names[fg->content], fg->near, fg->random, fg->retries);
	if (fg->content == FG_MIX)
		printf(" valid=%" PRIu64, fg->count - fg->near - fg->random);
	printf(" from=%s", fg->spoof ? "spoofed" : fg->auth ? "own-session" : "own");
	for (size_t k = 0; k < FG_KINDS; k++)
		if (fg->per_kind[k])
			printf(" %s=%" PRIu64, fg_kinds[k].name, fg->per_kind[k]);
	for (size_t m = 0; !fg->auth && m < FG_TAG_MODES; m++)
		if (fg->per_tag[m])
			printf(" tag_%s=%" PRIu64, fg_tag_names[m], fg->per_tag[m]);
	if (fg->auth)
		printf(" rewinds=%" PRIu64 " answers=%" PRIu64, fg->s.rewinds, fg->s.answers);
	printf("\n");
}

static int fg_run(struct fg *fg)
{
	bool stale = false;

	if (fg->observe)
		return fg_observe(fg);
	if (fg->anon_ports)
		return fg_anon(fg);
	for (size_t m = 0; m < fg->ntags; m++)
		stale |= fg->tags[m] == FG_TAG_STALE;
	if (stale && (!fg->tag_file || fg_read_tags(fg)))
		return fg->tag_file ? -1 : ft_fail("--tags stale needs --tag-file");
	if (fg->spoof ? fg_open_raw(fg) : (fg->fd = fg_open_udp(&fg->bind, false)) < 0)
		return -1;
	if (fg->auth && fg_session_open(fg))
		return -1;
	if (fg_flood(fg))
		return -1;
	fg_report(fg);
	return 0;
}

int main(int argc, char **argv)
{
	static struct fg fg = {
		.count = 1000, .seed = 1, .port_base = 20000, .fd = -1,
		.bind = { .sin_family = AF_INET },
	};
	int ret;

	if (fg_parse(&fg, argc, argv)) {
		fg_usage();
		return 2;
	}
	/* xorshift must not start at 0; mix the seed so nearby seeds differ. */
	fg.rng = ft_mix(fg.seed) | 1;
	fg.seq_tag = 0;
	ret = fg_run(&fg);
	if (fg.fd >= 0)
		close(fg.fd);
	fflush(stdout);
	return ret ? 1 : 0;
}
