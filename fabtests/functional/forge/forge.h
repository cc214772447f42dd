/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_forge: what its files share (main.c says what the program does):
 * limits, the kinds of datagram, tag modes and contents, our side of an
 * --auth session, the program's state, and the functions one file calls
 * in another.
 */
#ifndef RDMX_FORGE_H
#define RDMX_FORGE_H

#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "ft_common.h"
#include "rdmx_wire.h"

#define FG_NAME		"rdmx_forge"
#define FG_DGRAM_MAX	1472	/* UDP payload of a 1500-byte MTU */
#define FG_PAYLOAD_MAX	1024	/* bytes after an rdm header, at most */
#define FG_STALE_MAX	256	/* tags read from --tag-file */
#define FG_WINDOW	64	/* the swsrd window (RDMX_SRD_WINDOW) */
#define FG_ANSWER_MS	200	/* wait for a CHALLENGE or an answer */
#define FG_TRIES	10	/* --auth: hellos, then RESETs, at most */
#define FG_RX_MAX	(FG_DGRAM_MAX - sizeof(struct rdmx_wire_srd))
#define FG_QUOTED_LEN	65535	/* --icmp-too-big: the quoted datagram's size */
#define FG_MIN(a, b)	((a) < (b) ? (a) : (b))

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

/* Each kind: its name, its swsrd packet and flags, its rdm packet. */
struct fg_kind_info {
	const char		*name;
	enum rdmx_srd_type	srd;
	uint8_t			srd_flags;
	fg_build_fn		build;		/* NULL: the swsrd header alone */
	enum rdmx_hs_type	hs;
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
	int		hellos, resets;	/* sent to open it (FG_TRIES at most) */
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
	uint64_t		icmp_mtu;	/* --icmp-too-big */

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

/* opts.c */
extern const char *const fg_tag_names[FG_TAG_MODES];
extern const char *const fg_content_names[];
void fg_usage(void);
int fg_parse(struct fg *fg, int argc, char **argv);

/* packets.c */
extern const struct fg_kind_info fg_kinds[FG_KINDS];
uint64_t fg_nonzero(struct fg *fg);
uint32_t fg_epoch(struct fg *fg);
size_t fg_build_hs(struct fg *fg, enum fg_kind kind, uint8_t *buf);
void fg_srd_auth(struct fg *fg, enum fg_kind kind, struct rdmx_srd_hdr *h);
size_t fg_make(struct fg *fg, uint64_t i, uint8_t *buf);

/* sockets.c */
int fg_send(struct fg *fg, const uint8_t *dgram, size_t len);
int fg_open_raw(struct fg *fg);
int fg_icmp_too_big(struct fg *fg);
int fg_open_udp(const struct sockaddr_in *addr, bool quiet);
ssize_t fg_recv(int fd, uint8_t *buf, size_t len, int ms);

/* flood.c */
int fg_flood(struct fg *fg);
void fg_report(const struct fg *fg);

/* session.c */
int fg_hello(struct fg *fg, int fd, uint64_t src_tag);
uint64_t fg_cookie(int fd, uint64_t src_tag);
void fg_session_poll(struct fg *fg);
int fg_session_open(struct fg *fg);

/* anon.c */
int fg_anon(struct fg *fg);

/* observe.c */
int fg_observe(struct fg *fg);
int fg_read_tags(struct fg *fg);

#endif /* RDMX_FORGE_H */
