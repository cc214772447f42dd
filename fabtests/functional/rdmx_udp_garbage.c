/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_udp_garbage: sends hostile UDP datagrams at an rdmx endpoint, with
 * plain sockets and no libfabric, to prove the provider drops and counts
 * what it cannot parse and keeps working.
 *
 *   rdmx_udp_garbage host port count seed
 *
 * The datagrams come from a fixed-seed PRNG, so a failure can be replayed.
 * They are, in turn: random bytes of random length (0..1500), short ones
 * (1..40 bytes, shorter than any rdmx header), empty ones, ones that start
 * with the swsrd magic ("SY": 0x53 0x59, little-endian 0x5953) followed by
 * random bytes, ones with a well-formed 48-byte swsrd DATA header (which
 * the reliability layer accepts and hands up) followed by random bytes,
 * and ones whose rdm packet after that header also starts with the rdmx
 * magic (0x44 0x52), version 1 and the eager type, so that every layer's
 * validation is reached. None is a valid rdm packet except by a chance of
 * about 2^-62 each.
 *
 * The swsrd layer hands up only a packet that carries the receiver's tag
 * (dst_tag): first an empty DATA with dst_tag 0 draws a CHALLENGE, whose
 * src_tag is the tag the endpoint offers this sender (its cookie), and the
 * well-formed headers carry it. The socket is connected, so it receives
 * the CHALLENGE; without one (an endpoint that sends none) dst_tag stays
 * 0 and the packets stop at the tag check.
 *
 * Exits 0 when every datagram was handed to the kernel, 1 on any error
 * (including ICMP "port unreachable" when nobody listens).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "ft_common.h"

#define GB_NAME		"rdmx_udp_garbage"
#define GB_MAX_LEN	1500
#define GB_SHORT_MAX	40
#define GB_SRD_LEN	48	/* the swsrd header */
#define GB_SRD_MAGIC_LO	0x53	/* swsrd magic 0x5953 ("SY") stored little-endian */
#define GB_SRD_MAGIC_HI	0x59
#define GB_TYPE_DATA	1	/* swsrd packet types */
#define GB_TYPE_CHALLENGE 4
#define GB_DST_TAG	32	/* offsets of the tags in the swsrd header */
#define GB_SRC_TAG	40
#define GB_CHALLENGE_MS	1000
#define GB_MAGIC_LO	0x44	/* rdm magic 0x5244 stored little-endian */
#define GB_MAGIC_HI	0x52
#define GB_VERSION	1	/* the rdmx wire version */
#define GB_TYPE_EAGER	1	/* the rdmx eager packet type */

const char *const ft_prog = GB_NAME;

enum gb_kind {
	GB_RANDOM,	/* random bytes, random length 0..1500 */
	GB_SHORT,	/* 1..40 random bytes */
	GB_EMPTY,	/* zero-length datagram */
	GB_SRD_MAGIC,	/* swsrd magic, then random bytes */
	GB_SRD_DATA,	/* a swsrd DATA header, then random bytes */
	GB_SRD_EAGER,	/* that, then rdm magic, version and eager type */
	GB_KINDS,
};

/* Bounded uniform-enough value in [0, n) for small n. */
static size_t gb_below(uint64_t *state, size_t n)
{
	return (size_t) ((ft_xorshift(state) >> 32) % n);
}

/* The tags of our well-formed headers: the endpoint's (cookie) and ours. */
static uint64_t gb_dst_tag, gb_src_tag = 0x6761726261676501ULL;

/*
 * Writes the swsrd magic over the random bytes at buf; with data, also a
 * well-formed DATA header: type DATA, no flags, the random epoch made
 * non-zero, a psn inside the receive window, no acknowledgement fields,
 * the endpoint's tag and ours (little-endian, as every field).
 */
static void gb_srd_header(uint8_t *buf, bool data)
{
	buf[0] = GB_SRD_MAGIC_LO;
	buf[1] = GB_SRD_MAGIC_HI;
	if (!data)
		return;
	buf[2] = GB_TYPE_DATA;
	buf[3] = 0;		/* flags */
	buf[4] |= 1;		/* epoch (bytes 4-7) non-zero */
	buf[8] &= 0x3f;		/* psn (bytes 8-11) below 64 */
	memset(buf + 9, 0, 3);
	memset(buf + 12, 0, 20);	/* ack_epoch, ack, reserved, sack */
	for (int i = 0; i < 8; i++) {
		buf[GB_DST_TAG + i] = (uint8_t) (gb_dst_tag >> (8 * i));
		buf[GB_SRC_TAG + i] = (uint8_t) (gb_src_tag >> (8 * i));
	}
}

static uint64_t gb_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * Sends an empty DATA with dst_tag 0 and takes the tag the CHALLENGE that
 * answers it carries; gb_dst_tag stays 0 when none comes within a second.
 */
static void gb_learn_tag(int fd)
{
	uint8_t buf[GB_MAX_LEN];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t len;

	memset(buf, 0, GB_SRD_LEN);
	gb_srd_header(buf, true);
	buf[4] = 1;		/* epoch 1, psn 0 */
	buf[8] = 0;
	if (send(fd, buf, GB_SRD_LEN, 0) < 0)
		return;
	while (poll(&pfd, 1, GB_CHALLENGE_MS) > 0) {
		len = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (len == GB_SRD_LEN && buf[0] == GB_SRD_MAGIC_LO &&
		    buf[1] == GB_SRD_MAGIC_HI && buf[2] == GB_TYPE_CHALLENGE &&
		    gb_le64(buf + GB_DST_TAG) == gb_src_tag) {
			gb_dst_tag = gb_le64(buf + GB_SRC_TAG);
			return;
		}
		if (len < 0 && errno != EAGAIN)
			return;
	}
}

/* Builds one datagram in buf; returns its length. */
static size_t gb_make(uint64_t *state, enum gb_kind kind, uint8_t *buf)
{
	size_t len;

	switch (kind) {
	case GB_SHORT:
		len = 1 + gb_below(state, GB_SHORT_MAX);
		break;
	case GB_EMPTY:
		return 0;
	case GB_SRD_MAGIC:
		len = 2 + gb_below(state, GB_MAX_LEN - 1);
		break;
	case GB_SRD_DATA:
		len = GB_SRD_LEN + 1 + gb_below(state, GB_MAX_LEN - GB_SRD_LEN);
		break;
	case GB_SRD_EAGER:
		len = GB_SRD_LEN + 4 + gb_below(state, GB_MAX_LEN - GB_SRD_LEN - 3);
		break;
	default:
		len = gb_below(state, GB_MAX_LEN + 1);
		break;
	}
	for (size_t off = 0; off < len; off += 8) {
		uint64_t w = ft_xorshift(state);

		memcpy(buf + off, &w, len - off < 8 ? len - off : 8);
	}
	if (kind == GB_SRD_MAGIC)
		gb_srd_header(buf, false);
	if (kind == GB_SRD_DATA || kind == GB_SRD_EAGER)
		gb_srd_header(buf, true);
	if (kind == GB_SRD_EAGER) {
		buf[GB_SRD_LEN] = GB_MAGIC_LO;
		buf[GB_SRD_LEN + 1] = GB_MAGIC_HI;
		buf[GB_SRD_LEN + 2] = GB_VERSION;
		buf[GB_SRD_LEN + 3] = GB_TYPE_EAGER;
	}
	return len;
}

static int gb_parse_u64(const char *s, const char *what, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-') {
		fprintf(stderr, GB_NAME ": bad %s '%s'\n", what, s);
		return -1;
	}
	return 0;
}

static int gb_connect(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *res;
	int fd, ret = getaddrinfo(host, port, &hints, &res);

	if (ret) {
		fprintf(stderr, GB_NAME ": %s:%s: %s\n", host, port, gai_strerror(ret));
		return -1;
	}
	fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	/* Connected, so the kernel reports an unreachable port to us. */
	if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen)) {
		fprintf(stderr, GB_NAME ": socket/connect: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

int main(int argc, char **argv)
{
	uint64_t count, seed, state, sent = 0, bytes = 0;
	uint64_t per_kind[GB_KINDS] = { 0 };
	uint8_t buf[GB_MAX_LEN + 8];
	int fd, status = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: " GB_NAME " host port count seed\n");
		return 2;
	}
	if (gb_parse_u64(argv[3], "count", &count) ||
	    gb_parse_u64(argv[4], "seed", &seed))
		return 2;
	fd = gb_connect(argv[1], argv[2]);
	if (fd < 0)
		return 1;
	/* xorshift must not start at 0; mix the seed so nearby seeds differ. */
	state = (seed + 1) * 0x9E3779B97F4A7C15ULL;
	if (!state)
		state = 1;
	gb_learn_tag(fd);
	printf(GB_NAME ": the endpoint's tag for us: %s\n",
	       gb_dst_tag ? "learnt from its CHALLENGE" : "none (no CHALLENGE came)");

	for (uint64_t i = 0; i < count; i++) {
		enum gb_kind kind = (enum gb_kind) gb_below(&state, GB_KINDS);
		size_t len = gb_make(&state, kind, buf);

		if (send(fd, buf, len, 0) < 0) {
			fprintf(stderr, GB_NAME ": datagram %" PRIu64 " of %zu bytes: %s\n",
				i, len, strerror(errno));
			status = 1;
			break;
		}
		sent++;
		bytes += len;
		per_kind[kind]++;
	}
	close(fd);
	printf(GB_NAME ": sent %" PRIu64 " datagrams, %" PRIu64 " bytes (random %"
	       PRIu64 ", short %" PRIu64 ", empty %" PRIu64 ", swsrd magic %"
	       PRIu64 ", swsrd data %" PRIu64 ", swsrd+eager %" PRIu64 ")\n",
	       sent, bytes, per_kind[GB_RANDOM], per_kind[GB_SHORT],
	       per_kind[GB_EMPTY], per_kind[GB_SRD_MAGIC], per_kind[GB_SRD_DATA],
	       per_kind[GB_SRD_EAGER]);
	return status;
}
