/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_forge --auth: a session of our own with the victim: the cookie its
 * CHALLENGE carries, the handshake answered, its packets acknowledged.
 */
#include <endian.h>
#include <sys/socket.h>
#include <time.h>

#include "forge.h"

/* Sends an unauthenticated RESET with dst_tag 0 from fd; 0 or -1. */
int fg_hello(struct fg *fg, int fd, uint64_t src_tag)
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
uint64_t fg_cookie(int fd, uint64_t src_tag)
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

/*
 * Writes our session's next DATA at buf (256 bytes), an HS message of
 * type answering seq; returns its length.
 */
static size_t fg_session_hs_build(struct fg *fg, enum fg_kind kind, uint32_t seq,
				  uint8_t *buf)
{
	const size_t srd = sizeof(struct rdmx_wire_srd);
	struct rdmx_srd_hdr h;
	size_t len;

	fg_srd_auth(fg, kind, &h);
	rdmx_wire_srd_encode((struct rdmx_wire_srd *) buf, &h);
	len = srd + fg_build_hs(fg, kind, buf + srd);
	((struct rdmx_wire_hs *) (buf + srd))->seq = htole32(seq);
	return len;
}

/* Sends our session's next DATA, an HS message of type answering seq. */
static int fg_session_hs(struct fg *fg, enum fg_kind kind, uint32_t seq)
{
	uint8_t buf[256];

	return fg_send(fg, buf, fg_session_hs_build(fg, kind, seq, buf));
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
void fg_session_poll(struct fg *fg)
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

/* Takes in what the victim sends for FG_ANSWER_MS or until it answered. */
static void fg_session_await(struct fg *fg)
{
	uint64_t deadline = ft_now_ns() + FG_ANSWER_MS * 1000000ULL;

	while (!fg->s.peer_incarnation && ft_now_ns() < deadline) {
		uint8_t buf[FG_DGRAM_MAX];
		ssize_t len = fg_recv(fg->fd, buf, sizeof(buf), 10);

		if (len > 0)
			fg_session_in(fg, buf, (size_t) len);
	}
}

/*
 * Takes the cookie and opens an rdm session with the victim; 0 or -1.
 * Neither step's answer is owed to one datagram: the victim challenges
 * at most 64 packets a millisecond, whoever sends them, and the flood
 * this session opens beside (attack.sh) fills socket buffers, so the
 * hello, the RESET or either answer may be lost. As a real peer does
 * (its handshake is retried), each goes again, the RESET unchanged,
 * every FG_ANSWER_MS, FG_TRIES times at most.
 */
int fg_session_open(struct fg *fg)
{
	struct fg_session *s = &fg->s;
	uint8_t reset[256];
	size_t len;

	s->tag = fg_nonzero(fg);
	s->epoch = (uint32_t) fg_nonzero(fg);
	s->incarnation = fg_nonzero(fg);
	while (s->hellos < FG_TRIES && !s->cookie) {
		if (fg_hello(fg, fg->fd, s->tag))
			return -1;
		s->hellos++;
		s->cookie = fg_cookie(fg->fd, s->tag);
	}
	if (!s->cookie)
		return ft_fail("--auth: no CHALLENGE came back to %d hellos", FG_TRIES), -1;
	len = fg_session_hs_build(fg, FG_HS_RESET, 0, reset);
	while (s->resets < FG_TRIES && !s->peer_incarnation) {
		if (fg_send(fg, reset, len))
			return -1;
		s->resets++;
		fg_session_await(fg);
	}
	if (!s->peer_incarnation)
		return ft_fail("--auth: the victim did not answer %d RESETs", FG_TRIES), -1;
	return 0;
}
