/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the udp device. One non-blocking UDP socket per endpoint gives a
 * raw datagram queue; swsrd (rdmx_swsrd.c, hosted by rdmx_dgram.c) on top
 * makes it honour the device contract: reliable, unordered, RNR refusal
 * when no receive buffer is posted. A datagram lands whole in a posted
 * buffer, its swsrd header in the headroom the rdm layer leaves before
 * it, so the payload starts where the buffer does.
 *
 * One datagram at a time is the latency path and takes the cheapest
 * calls: recvfrom, and sendto of a small packet gathered into one buffer
 * (each about 80 ns less than recvmmsg or sendmmsg of scattered parts).
 * Several go in batches, sendmmsg and recvmmsg, the batch growing to what
 * the socket holds.
 *
 * An endpoint bound to the wildcard address (a server that named no
 * address) is reachable at every address of its family, as any socket
 * bound so is. Its peers know it by the address they sent to, so each
 * handle keeps the local address to send from: where the handle's first
 * datagram arrived, else the endpoint's name (the domain's address).
 *
 * With FI_RDMX_PATHS above 1 the device also opens that many sockets
 * less one, bound to the same address with ports of their own, which
 * send only: swsrd sends a peer's packets from each in turn (paths, which
 * an ECMP fabric may route apart), and a receiver finds the peer of a
 * packet from an unknown port of a known host by its session tag
 * (same_host). What comes to those sockets is never read: the one packet
 * a peer sends to an address it does not know is a CHALLENGE, and the
 * main socket's packets carry the same.
 *
 * FI_RDMX_UDP_DROP/DUP/REORDER (percent, test only) inject faults on the
 * send side with a fixed seed (FI_RDMX_UDP_SEED).
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_cma.h"
#include "rdmx_dev.h"
#include "rdmx_dev_udp.h"
#include "rdmx_dgram.h"
#include "rdmx_udp_gro.h"
#include "rdmx_udp_gso.h"

/* Datagrams an idle poll asks for: one, with recvfrom. */
#define RDMX_UDP_RX_IDLE	1
/* Datagrams the poll after one that found some asks for, at least. */
#define RDMX_UDP_RX_MORE	4
/*
 * A read that brings this many datagrams shows a stream: merged reads
 * (UDP_GRO) go on from the next read, not before, since a lone datagram
 * reads fastest with recvfrom.
 */
#define RDMX_UDP_GRO_STREAM	4
/* A single datagram up to this size is gathered and sent with sendto. */
#define RDMX_UDP_GATHER_MAX	1024
#define RDMX_UDP_HDR		sizeof(struct rdmx_wire_srd)
/* A datagram's headers at most: swsrd's and a segment's. */
#define RDMX_UDP_HDRS		(RDMX_UDP_HDR + RDMX_DEV_SEG_HDR_MAX)
/*
 * Datagrams read per poll at most: a flood of packets that complete
 * nothing (acks, refusals, junk) must not keep the caller inside.
 */
#define RDMX_UDP_READ_MAX	(4 * RDMX_UDP_BATCH)

struct rdmx_udp_faults {
	unsigned		drop, dup, reorder;	/* percent */
	uint64_t		rng;
	uint8_t			*held;		/* a datagram kept back */
	size_t			held_len;
	union rdmx_udp_addr	held_to;
	union rdmx_udp_addr	held_from;	/* AF_UNSPEC: the kernel's choice */
};

/*
 * Merged reads: off for good (not asked for, or reads too short), off
 * until a stream comes, due at the next read, on (reads may hold several
 * datagrams). They never go off again.
 */
enum rdmx_udp_gro {
	RDMX_UDP_GRO_NEVER,
	RDMX_UDP_GRO_MAY,
	RDMX_UDP_GRO_DUE,
	RDMX_UDP_GRO_ON,
};

struct rdmx_udp_dev {
	struct rdmx_dgram	dg;
	int			fd;
	/* Where each path sends from: [0] is fd, the others send only. */
	int			path_fd[RDMX_SRD_PATHS_MAX];
	unsigned		path_cnt;
	union rdmx_udp_addr	addr;		/* bound */
	union rdmx_udp_addr	name;		/* what peers send to */
	bool			wildcard;	/* addr is the family's wildcard */
	size_t			dom_mtu;	/* the domain's interface's packets */
	/* Wildcard only: where the datagram being handled was sent to. */
	const union rdmx_udp_addr *rx_dst;

	struct mmsghdr		tx_msgs[RDMX_UDP_TX_BATCH];
	struct iovec		tx_iov[RDMX_UDP_TX_BATCH][1 + RDMX_DEV_SGE_MAX];
	/* Headers, copied (rdmx_udp_own_hdrs). */
	uint64_t		tx_hdr[RDMX_UDP_TX_BATCH][RDMX_UDP_HDRS / sizeof(uint64_t)];
	union rdmx_udp_addr	tx_to[RDMX_UDP_TX_BATCH];	/* destinations, copied */
	union rdmx_udp_ctl	tx_ctl[RDMX_UDP_TX_BATCH];	/* wildcard: source */
	size_t			tx_cnt;
	int			tx_fd;		/* the socket the batch goes by */
	uint8_t			tx_gather[RDMX_UDP_GATHER_MAX];

	struct mmsghdr		rx_msgs[RDMX_UDP_BATCH];
	/* Headroom + buffer, then (gro) the slot's tail. */
	struct iovec		rx_iov[RDMX_UDP_BATCH][2];
	struct rdmx_wire_srd	rx_hdr[RDMX_UDP_BATCH];	/* when none is posted */
	union rdmx_udp_addr	rx_src[RDMX_UDP_BATCH];
	/* wildcard: destination; gro: datagram size */
	union rdmx_udp_rx_ctl	rx_ctl[RDMX_UDP_BATCH];
	struct rdmx_dgram_buf	rx_slot[RDMX_UDP_BATCH];	/* buf NULL: none */
	size_t			rx_want;	/* slots the next read prepares */
	/*
	 * The batch last read: slots [rx_next, rx_got) not handed up yet, the
	 * first of them from byte rx_off (a read of several datagrams that
	 * outnumbered the room a poll had).
	 */
	size_t			rx_next, rx_got, rx_off;
	enum rdmx_udp_gro	gro;
	uint8_t			rx_tail[RDMX_UDP_BATCH][RDMX_UDP_GRO_TAIL];
	/* gro: a read when no buffer is posted (RDMX_UDP_GRO_MAX bytes). */
	uint8_t			*rx_scratch;

	bool			gso_on;		/* sends runs with UDP_SEGMENT */
	struct rdmx_udp_gso	gso;

	struct rdmx_udp_faults	faults;
	struct rdmx_cma		cma;		/* reads from local peers */
};

static struct rdmx_udp_dev *rdmx_udp_dev(struct rdmx_dev *dev)
{
	return rdmx_container_of(dev, struct rdmx_udp_dev, dg.dev);
}

/* Sends the one datagram of the batch. */
static void rdmx_udp_send_one(struct rdmx_udp_dev *udp)
{
	const struct msghdr *m = &udp->tx_msgs[0].msg_hdr;
	size_t len = rdmx_iov_len(m->msg_iov, m->msg_iovlen);
	ssize_t ret;

	udp->dg.dev.stats.tx_calls++;
	if (len <= sizeof(udp->tx_gather) && !m->msg_controllen) {
		rdmx_copy_from_iov(udp->tx_gather, m->msg_iov, m->msg_iovlen);
		ret = sendto(udp->tx_fd, udp->tx_gather, len, 0, m->msg_name, m->msg_namelen);
	} else {
		ret = sendmsg(udp->tx_fd, m, 0);
	}
	if (ret < 0)
		RDMX_DBG(FI_LOG_EP_DATA, "udp send: %s\n", strerror(errno));
}

/*
 * Hands n entries of msgs to the socket; what it refuses is lost (swsrd
 * resends). With gso, msgs are gso's packed runs, and the sending stops
 * at a run the route refused to segment: returns that run's entry, else
 * n. The kernel says EMSGSIZE when the path's MTU it learned is below the
 * datagram size (the datagram alone it would fragment), EINVAL when the
 * route's is, EIO (before Linux 6.11) when the device computes no
 * checksums.
 */
static size_t rdmx_udp_send_msgs(struct rdmx_udp_dev *udp, struct mmsghdr *msgs,
				 size_t n, const struct rdmx_udp_gso *gso)
{
	size_t off = 0;

	while (off < n) {
		int sent = sendmmsg(udp->tx_fd, msgs + off, (unsigned) (n - off), 0);

		udp->dg.dev.stats.tx_calls++;
		if (sent < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == ENOBUFS || errno == EINTR)
				break;
			if (gso && (errno == EMSGSIZE || errno == EINVAL || errno == EIO) &&
			    rdmx_udp_gso_segs(gso, off) > 1)
				return off;
			/* The first datagram failed for itself: skip it. */
			RDMX_DBG(FI_LOG_EP_DATA, "udp send: %s\n", strerror(errno));
			sent = 1;
		}
		off += (size_t) sent;
	}
	return n;
}

/* Tells swsrd which datagrams packing moved behind later ones. */
static void rdmx_udp_tell_trails(struct rdmx_udp_dev *udp, const struct rdmx_udp_gso *gso)
{
	for (size_t i = 0; i < gso->trails; i++) {
		const struct iovec *d = udp->tx_msgs[gso->trail_at[i]].msg_hdr.msg_iov;
		struct rdmx_srd_hdr hdr;

		if (!rdmx_wire_srd_decode(d[0].iov_base, d[0].iov_len, &hdr))
			rdmx_swsrd_trailed(&udp->dg.srd, &hdr, gso->trail_by[i]);
	}
}

/*
 * Sends the batch as UDP_SEGMENT runs. When the route refuses one, the
 * endpoint stops segmenting and sends the rest a datagram at a time (in
 * the order packing left them).
 */
static void rdmx_udp_flush_gso(struct rdmx_udp_dev *udp)
{
	struct rdmx_udp_gso *gso = &udp->gso;
	size_t n = rdmx_udp_gso_pack(gso, udp->tx_msgs, udp->tx_cnt);
	size_t stop = rdmx_udp_send_msgs(udp, gso->msgs, n, gso);

	for (size_t i = 0; i < stop; i++)
		if (rdmx_udp_gso_segs(gso, i) > 1)
			udp->dg.dev.stats.tx_gso += rdmx_udp_gso_segs(gso, i);
	if (stop < n) {
		RDMX_WARN(FI_LOG_EP_DATA, "udp: segmentation offload refused (%s), "
			  "off for this endpoint\n", strerror(errno));
		udp->gso_on = false;
		rdmx_udp_send_msgs(udp, udp->tx_msgs + gso->first[stop],
				   udp->tx_cnt - gso->first[stop], NULL);
	}
	rdmx_udp_tell_trails(udp, gso);
}

/* Hands the batch to the socket. */
static void rdmx_udp_flush(struct rdmx_udp_dev *udp)
{
	if (udp->tx_cnt == 1)
		rdmx_udp_send_one(udp);
	else if (udp->gso_on)
		rdmx_udp_flush_gso(udp);
	else if (udp->tx_cnt)
		rdmx_udp_send_msgs(udp, udp->tx_msgs, udp->tx_cnt, NULL);
	udp->tx_cnt = 0;
}

/*
 * Makes tx_iov[k] the datagram of iov from swsrd, with its headers
 * copied into tx_hdr[k], one piece: iov[0], swsrd's, and iov[1] when no
 * longer than a segment's header (a packet of a post of segments has its
 * own there). swsrd reuses their storage as soon as its xmit returns,
 * and several ACKs to one peer may wait in a batch. Returns the pieces.
 */
static size_t rdmx_udp_own_hdrs(struct rdmx_udp_dev *udp, size_t k, const struct iovec *iov,
				size_t iov_cnt)
{
	struct iovec *d = udp->tx_iov[k];
	size_t hdrs = iov_cnt > 1 && iov[1].iov_len <= RDMX_DEV_SEG_HDR_MAX ? 2 : 1;

	d[0] = (struct iovec) { udp->tx_hdr[k], 0 };
	for (size_t i = 0; i < hdrs; i++) {
		memcpy((uint8_t *) d[0].iov_base + d[0].iov_len, iov[i].iov_base, iov[i].iov_len);
		d[0].iov_len += iov[i].iov_len;
	}
	memcpy(d + 1, iov + hdrs, (iov_cnt - hdrs) * sizeof(*iov));
	return 1 + iov_cnt - hdrs;
}

/*
 * Queues one datagram to to, sent by socket fd from the local address
 * from when it is not AF_UNSPEC (else the kernel picks), in the batch
 * (flushing first a full batch, or one that goes by another socket).
 * With own_hdr, iov is swsrd's (rdmx_udp_own_hdrs).
 */
static void rdmx_udp_queue(struct rdmx_udp_dev *udp, int fd, const union rdmx_udp_addr *to,
			   const union rdmx_udp_addr *from,
			   const struct iovec *iov, size_t iov_cnt, bool own_hdr)
{
	struct msghdr *m;

	if (udp->tx_cnt == RDMX_UDP_TX_BATCH || (udp->tx_cnt && fd != udp->tx_fd))
		rdmx_udp_flush(udp);
	udp->tx_fd = fd;
	m = &udp->tx_msgs[udp->tx_cnt].msg_hdr;
	memset(m, 0, sizeof(*m));
	if (own_hdr)
		iov_cnt = rdmx_udp_own_hdrs(udp, udp->tx_cnt, iov, iov_cnt);
	else
		memcpy(udp->tx_iov[udp->tx_cnt], iov, iov_cnt * sizeof(*iov));
	udp->tx_to[udp->tx_cnt] = *to;
	m->msg_name = &udp->tx_to[udp->tx_cnt];
	m->msg_namelen = rdmx_udp_addr_len(to);
	m->msg_iov = udp->tx_iov[udp->tx_cnt];
	m->msg_iovlen = iov_cnt;
	if (from->sa.sa_family != AF_UNSPEC)
		rdmx_udp_ctl_set_src(m, &udp->tx_ctl[udp->tx_cnt], from);
	udp->tx_cnt++;
}

/* A percent draw from the fault injector's fixed-seed generator. */
static bool rdmx_udp_fault(struct rdmx_udp_faults *f, unsigned percent)
{
	if (!percent)
		return false;
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return f->rng % 100 < percent;
}

/* Keeps a copy of a datagram back, to send it after the next one. */
static void rdmx_udp_hold(struct rdmx_udp_dev *udp, union rdmx_udp_addr *to,
			  const union rdmx_udp_addr *from,
			  const struct iovec *iov, size_t iov_cnt)
{
	struct rdmx_udp_faults *f = &udp->faults;

	f->held_len = rdmx_copy_from_iov(f->held, iov, iov_cnt);
	f->held_to = *to;
	f->held_from = *from;
}

/* The local address to send to ah from: AF_UNSPEC for the kernel's. */
static const union rdmx_udp_addr *rdmx_udp_ah_src(const struct rdmx_dgram_ah *ah)
{
	static const union rdmx_udp_addr unspec;

	return ah->raw ? ah->raw : &unspec;
}

static int rdmx_udp_xmit(struct rdmx_dgram *dg, struct rdmx_dgram_ah *ah, unsigned path,
			 const struct iovec *iov, size_t iov_cnt)
{
	struct rdmx_udp_dev *udp = rdmx_container_of(dg, struct rdmx_udp_dev, dg);
	int fd = udp->path_fd[path];
	union rdmx_udp_addr *to = (union rdmx_udp_addr *) ah->addr;
	const union rdmx_udp_addr *from = rdmx_udp_ah_src(ah);
	struct rdmx_udp_faults *f = &udp->faults;

	if (rdmx_udp_fault(f, f->drop))
		return 0;
	if (f->held && !f->held_len && rdmx_udp_fault(f, f->reorder)) {
		rdmx_udp_hold(udp, to, from, iov, iov_cnt);
		return 0;
	}
	rdmx_udp_queue(udp, fd, to, from, iov, iov_cnt, true);
	if (rdmx_udp_fault(f, f->dup))
		rdmx_udp_queue(udp, fd, to, from, iov, iov_cnt, true);
	if (f->held_len) {
		struct iovec held = { f->held, f->held_len };

		rdmx_udp_queue(udp, udp->fd, &f->held_to, &f->held_from, &held, 1, false);
		rdmx_udp_flush(udp);
		f->held_len = 0;
	}
	return 0;
}

/*
 * Where a wildcard-bound device answers the datagram being handled from:
 * the local address it was sent to, else the endpoint's name, since that
 * is the address the peer knows this endpoint by.
 */
static void rdmx_udp_reply_src(const struct rdmx_udp_dev *udp, union rdmx_udp_addr *src)
{
	*src = udp->rx_dst ? *udp->rx_dst : udp->name;
	*rdmx_udp_addr_port(src) = 0;
}

/*
 * A new handle of a wildcard-bound device sends from the reply source of
 * the datagram that made it. An unknown sender's handle is made only for
 * a datagram that carried the tag we offered it (rdmx_dgram.c), so a
 * spoofed datagram cannot choose this address.
 */
static int rdmx_udp_raw_create(struct rdmx_dgram *dg, struct rdmx_dgram_ah *ah)
{
	struct rdmx_udp_dev *udp = rdmx_container_of(dg, struct rdmx_udp_dev, dg);
	union rdmx_udp_addr *src;

	if (!udp->wildcard)
		return 0;
	src = malloc(sizeof(*src));
	if (!src)
		return -FI_ENOMEM;
	rdmx_udp_reply_src(udp, src);
	ah->raw = src;
	return 0;
}

static void rdmx_udp_raw_destroy(struct rdmx_dgram *dg, struct rdmx_dgram_ah *ah)
{
	(void) dg;
	free(ah->raw);
}

static int rdmx_udp_xmit_to(struct rdmx_dgram *dg, const void *canon,
			    const struct iovec *iov, size_t iov_cnt)
{
	struct rdmx_udp_dev *udp = rdmx_container_of(dg, struct rdmx_udp_dev, dg);
	union rdmx_udp_addr from = { .sa.sa_family = AF_UNSPEC };

	if (udp->wildcard)
		rdmx_udp_reply_src(udp, &from);
	rdmx_udp_queue(udp, udp->fd, canon, &from, iov, iov_cnt, true);
	return 0;
}

static bool rdmx_udp_same_host(const struct rdmx_dgram *dg, const void *a, const void *b)
{
	(void) dg;
	return rdmx_udp_addr_same_host(a, b);
}

static const struct rdmx_dgram_ops rdmx_udp_dgram_ops = {
	.xmit = rdmx_udp_xmit,
	.xmit_to = rdmx_udp_xmit_to,
	.same_host = rdmx_udp_same_host,
	.raw_create = rdmx_udp_raw_create,
	.raw_destroy = rdmx_udp_raw_destroy,
	/* rdmx_udp_poll_cq flushes what it queued once swsrd progressed. */
	.xmit_at_poll_end = true,
};

static int rdmx_udp_post_send(struct rdmx_dev *dev, struct rdmx_ah *ah,
			      const struct iovec *iov, size_t iov_cnt,
			      uint64_t wr_id, unsigned flags)
{
	int ret = rdmx_dgram_post_send(dev, ah, iov, iov_cnt, wr_id, flags);

	if (!ret && !(flags & RDMX_DEV_SEND_MORE))
		rdmx_udp_flush(rdmx_udp_dev(dev));
	return ret;
}

static int rdmx_udp_post_send_segs(struct rdmx_dev *dev, struct rdmx_ah *ah,
				   const struct iovec *iov, size_t iov_cnt, size_t seg_len,
				   size_t off_at, uint64_t wr_id, unsigned flags)
{
	int ret = rdmx_dgram_post_send_segs(dev, ah, iov, iov_cnt, seg_len, off_at, wr_id,
					    flags);

	if (!ret && !(flags & RDMX_DEV_SEND_MORE))
		rdmx_udp_flush(rdmx_udp_dev(dev));
	return ret;
}

/*
 * Whether merged reads may go on: asked for, and every read can hold the
 * most a merged read brings (a posted buffer, the device MTU, and the
 * tail).
 */
static bool rdmx_udp_gro_allowed(const struct rdmx_udp_dev *udp)
{
	return g_rdmx_params.udp_gro &&
	       RDMX_UDP_HDR + udp->dg.dev.caps.mtu + RDMX_UDP_GRO_TAIL >= RDMX_UDP_GRO_MAX;
}

/*
 * Turns merged reads on, once per endpoint (the scratch area's malloc and
 * the socket option are not repeated): every read then has a control
 * buffer for the datagram size. Only between batches, all handed up.
 */
static void rdmx_udp_gro_start(struct rdmx_udp_dev *udp)
{
	int ret;

	assert(udp->rx_next == udp->rx_got && !udp->rx_off);
	udp->gro = RDMX_UDP_GRO_NEVER;
	udp->rx_scratch = malloc(RDMX_UDP_GRO_MAX);
	ret = udp->rx_scratch ? rdmx_udp_gro_enable(udp->fd) : -FI_ENOMEM;
	if (ret) {
		RDMX_INFO(FI_LOG_EP_CTRL, "udp: no receive offload (UDP_GRO): %s\n",
			  fi_strerror(-ret));
		return;
	}
	for (size_t i = 0; i < RDMX_UDP_BATCH; i++)
		udp->rx_msgs[i].msg_hdr.msg_control = udp->rx_ctl[i].buf;
	udp->gro = RDMX_UDP_GRO_ON;
}

/* Points each batch slot at its address and iovec, once. */
static void rdmx_udp_rx_init(struct rdmx_udp_dev *udp)
{
	for (size_t i = 0; i < RDMX_UDP_BATCH; i++) {
		struct msghdr *m = &udp->rx_msgs[i].msg_hdr;

		memset(m, 0, sizeof(*m));
		m->msg_name = &udp->rx_src[i];
		m->msg_iov = udp->rx_iov[i];
		m->msg_iovlen = 1;
		if (udp->wildcard)
			m->msg_control = udp->rx_ctl[i].buf;
		udp->rx_iov[i][1] = (struct iovec) { udp->rx_tail[i], sizeof(udp->rx_tail[i]) };
	}
	udp->rx_want = RDMX_UDP_RX_IDLE;
}

/*
 * Takes up to n posted buffers into the receive batch, each read from its
 * headroom on; returns how many datagrams to read. When none is posted
 * the reads are header-only, or with gro, one read into the scratch area
 * (it may hold acknowledgements, which need no buffer, and each datagram
 * of it must be answered).
 */
static size_t rdmx_udp_rx_prepare(struct rdmx_udp_dev *udp, size_t n)
{
	if (udp->gro == RDMX_UDP_GRO_DUE)
		rdmx_udp_gro_start(udp);
	n = RDMX_MIN(n, udp->rx_want);
	if (udp->dg.rq_cnt)
		n = RDMX_MIN(n, udp->dg.rq_cnt);
	else if (udp->gro == RDMX_UDP_GRO_ON)
		n = RDMX_MIN(n, 1);
	for (size_t i = 0; i < n; i++) {
		struct rdmx_dgram_buf *slot = &udp->rx_slot[i];
		struct msghdr *m = &udp->rx_msgs[i].msg_hdr;

		m->msg_iovlen = 1;
		if (rdmx_dgram_buf_take(&udp->dg, slot)) {
			udp->rx_iov[i][0].iov_base = (uint8_t *) slot->buf - RDMX_UDP_HDR;
			udp->rx_iov[i][0].iov_len = RDMX_UDP_HDR + slot->len;
			m->msg_iovlen = udp->gro == RDMX_UDP_GRO_ON ? 2 : 1;
		} else if (udp->gro == RDMX_UDP_GRO_ON) {
			*slot = (struct rdmx_dgram_buf) { 0, NULL, 0 };
			udp->rx_iov[i][0].iov_base = udp->rx_scratch;
			udp->rx_iov[i][0].iov_len = RDMX_UDP_GRO_MAX;
		} else {
			*slot = (struct rdmx_dgram_buf) { 0, NULL, 0 };
			udp->rx_iov[i][0].iov_base = &udp->rx_hdr[i];
			udp->rx_iov[i][0].iov_len = RDMX_UDP_HDR;
		}
		/* The kernel overwrites the lengths with the sender's. */
		m->msg_namelen = sizeof(udp->rx_src[i]);
		if (m->msg_control)
			m->msg_controllen = sizeof(udp->rx_ctl[i]);
	}
	return n;
}

/*
 * Reads the first slot's datagram with recvfrom (recvmsg when the read
 * has control messages: the local address when bound to the wildcard,
 * the datagram size with gro): 1, or 0 when none came.
 */
static int rdmx_udp_read_one(struct rdmx_udp_dev *udp)
{
	struct msghdr *m = &udp->rx_msgs[0].msg_hdr;
	/* MSG_TRUNC: the datagram's length even when it was cut. */
	ssize_t len = m->msg_control ? recvmsg(udp->fd, m, MSG_DONTWAIT | MSG_TRUNC) :
		      recvfrom(udp->fd, udp->rx_iov[0][0].iov_base, udp->rx_iov[0][0].iov_len,
			       MSG_DONTWAIT | MSG_TRUNC, m->msg_name, &m->msg_namelen);

	if (len < 0)
		return 0;
	udp->rx_msgs[0].msg_len = (unsigned) len;
	if (!m->msg_control)
		m->msg_flags = (size_t) len > udp->rx_iov[0][0].iov_len ? MSG_TRUNC : 0;
	return 1;
}

/* Gives a batch slot's buffer back to the posted stack. */
static void rdmx_udp_rx_unuse(struct rdmx_udp_dev *udp, size_t i)
{
	if (udp->rx_slot[i].buf)
		rdmx_dgram_buf_return(&udp->dg, &udp->rx_slot[i]);
}

/*
 * Copies the datagram of len bytes at offset off of what slot i read into
 * buf, its header into the headroom, and hands it up; true when it became
 * a completion (buf then belongs to the rdm layer again).
 */
static bool rdmx_udp_rx_into(struct rdmx_udp_dev *udp, size_t i, size_t off, size_t len,
			     const struct rdmx_dgram_buf *buf, uint64_t now,
			     struct rdmx_dev_cqe *cqe)
{
	const struct msghdr *m = &udp->rx_msgs[i].msg_hdr;
	uint8_t *to = (uint8_t *) buf->buf - RDMX_UDP_HDR;

	rdmx_copy_from_iov_at(to, m->msg_iov, m->msg_iovlen, off,
			      RDMX_UDP_HDR + RDMX_MIN(len - RDMX_UDP_HDR, buf->len));
	return rdmx_dgram_rx(&udp->dg, (const struct rdmx_wire_srd *) to, len,
			     &udp->rx_src[i], buf, len - RDMX_UDP_HDR > buf->len, now, cqe);
}

/*
 * Hands up a datagram of len bytes at offset off of what slot i read,
 * copied into a posted buffer of its own (a read of several datagrams);
 * true when it became a completion.
 */
static bool rdmx_udp_rx_copy(struct rdmx_udp_dev *udp, size_t i, size_t off,
			     size_t len, uint64_t now, struct rdmx_dev_cqe *cqe)
{
	const struct msghdr *m = &udp->rx_msgs[i].msg_hdr;
	struct rdmx_dgram_buf buf;
	struct rdmx_wire_srd hdr;

	if (!rdmx_dgram_buf_take(&udp->dg, &buf)) {
		/* None posted: the header alone, to be refused (RNR). */
		rdmx_copy_from_iov_at(&hdr, m->msg_iov, m->msg_iovlen, off, sizeof(hdr));
		return rdmx_dgram_rx(&udp->dg, &hdr, len, &udp->rx_src[i], NULL, false,
				     now, cqe);
	}
	if (rdmx_udp_rx_into(udp, i, off, len, &buf, now, cqe))
		return true;
	rdmx_dgram_buf_return(&udp->dg, &buf);
	return false;
}

/*
 * Hands up the last datagram (len bytes at off) of slot i's read in the
 * slot's own buffer, moved to its front: the others were copied out
 * before, and it never overlaps where it goes (off is at least a
 * datagram's size). True when it became a completion.
 */
static bool rdmx_udp_rx_last(struct rdmx_udp_dev *udp, size_t i, size_t off,
			     size_t len, uint64_t now, struct rdmx_dev_cqe *cqe)
{
	if (!rdmx_udp_rx_into(udp, i, off, len, &udp->rx_slot[i], now, cqe))
		return false;
	udp->rx_slot[i].buf = NULL;	/* handed up: no longer the slot's to give back */
	return true;
}

/*
 * Hands up the datagrams of slot i's read of len bytes, seg bytes each
 * (the last perhaps fewer), from byte udp->rx_off on, while there is
 * room; true once all are (the slot's buffer is given back then). Each
 * is counted in *seen.
 */
static bool rdmx_udp_rx_split(struct rdmx_udp_dev *udp, size_t i, size_t len, size_t seg,
			      uint64_t now, struct rdmx_dev_cqe *cqe, int room, int *done,
			      size_t *seen)
{
	const struct msghdr *m = &udp->rx_msgs[i].msg_hdr;
	/* A read cut short (MSG_TRUNC) lost the datagrams past what it holds. */
	size_t end = RDMX_MIN(len, rdmx_iov_len(m->msg_iov, m->msg_iovlen));

	while (*done < room && udp->rx_off < end) {
		size_t n = RDMX_MIN(seg, len - udp->rx_off);

		if (n < RDMX_UDP_HDR || udp->rx_off + n > end) {
			udp->dg.dev.stats.rx_malformed += n < RDMX_UDP_HDR;
			udp->rx_off = end;
			break;
		}
		if (udp->rx_off + n == len && udp->rx_slot[i].buf)
			*done += rdmx_udp_rx_last(udp, i, udp->rx_off, n, now, &cqe[*done]);
		else
			*done += rdmx_udp_rx_copy(udp, i, udp->rx_off, n, now, &cqe[*done]);
		udp->rx_off += n;
		udp->dg.dev.stats.rx_gro++;
		(*seen)++;
	}
	if (udp->rx_off < end)
		return false;
	rdmx_udp_rx_unuse(udp, i);
	return true;
}

/*
 * Hands up what slot i read while there is room (at least one
 * completion's); true once all of it is. Datagrams go to *seen.
 */
static bool rdmx_udp_rx_slot(struct rdmx_udp_dev *udp, size_t i, uint64_t now,
			     struct rdmx_dev_cqe *cqe, int room, int *done, size_t *seen)
{
	struct msghdr *m = &udp->rx_msgs[i].msg_hdr;
	union rdmx_udp_addr *src = &udp->rx_src[i];
	size_t len = udp->rx_msgs[i].msg_len;
	size_t seg = udp->gro == RDMX_UDP_GRO_ON ? rdmx_udp_gro_size(m) : 0;
	union rdmx_udp_addr dst;
	bool all = true;

	/* A cut control message may have lost the datagram size. */
	if (!udp->rx_off && (rdmx_udp_addr_canon(src, m->msg_namelen, src) ||
			     (m->msg_flags & MSG_CTRUNC))) {
		udp->dg.dev.stats.rx_malformed++;
		rdmx_udp_rx_unuse(udp, i);
		(*seen)++;
		return true;
	}
	if (udp->wildcard && rdmx_udp_ctl_get_dst(m, &dst))
		udp->rx_dst = &dst;
	if (seg && len > seg) {
		all = rdmx_udp_rx_split(udp, i, len, seg, now, cqe, room, done, seen);
	} else {
		/* Longer than the buffer: cut, though the tail took the rest. */
		bool cut = (m->msg_flags & MSG_TRUNC) || len > udp->rx_iov[i][0].iov_len;

		if (rdmx_dgram_rx(&udp->dg, udp->rx_iov[i][0].iov_base, len, src,
				  udp->rx_slot[i].buf ? &udp->rx_slot[i] : NULL, cut, now,
				  &cqe[*done]))
			(*done)++;
		else
			rdmx_udp_rx_unuse(udp, i);
		(*seen)++;
	}
	udp->rx_dst = NULL;
	return all;
}

/*
 * Hands up the datagrams of the batch last read not handed up yet, while
 * there is room; returns the completions, and counts the datagrams in
 * *seen.
 */
static int rdmx_udp_rx_batch(struct rdmx_udp_dev *udp, uint64_t now,
			     struct rdmx_dev_cqe *cqe, int max, size_t *seen)
{
	int done = 0;

	while (udp->rx_next < udp->rx_got && done < max &&
	       rdmx_udp_rx_slot(udp, udp->rx_next, now, cqe, max, &done, seen)) {
		udp->rx_next++;
		udp->rx_off = 0;
	}
	return done;
}

/*
 * Reads datagrams into posted buffers; returns the receive completions.
 * What an earlier poll read and had no room for goes first. A poll hands
 * up RDMX_UDP_READ_MAX datagrams at most (and the rest of a read).
 * *now moves on with each read that brings datagrams after others were
 * handed up: the acks of a later read may answer sends the acks of an
 * earlier one released, and one time for both would give no round trip.
 * (A lone read, a ping-pong's, costs no second look at the clock.)
 */
static int rdmx_udp_poll_recv(struct rdmx_udp_dev *udp, uint64_t *now,
			      struct rdmx_dev_cqe *cqe, int max)
{
	size_t reads = 0;
	int done = rdmx_udp_rx_batch(udp, *now, cqe, max, &reads);

	while (done < max && udp->rx_next == udp->rx_got && reads < RDMX_UDP_READ_MAX) {
		size_t n = rdmx_udp_rx_prepare(udp, RDMX_MIN((size_t) (max - done),
							      RDMX_UDP_BATCH));
		/* MSG_TRUNC: msg_len is the datagram's length even when cut. */
		int got = n == 1 ? rdmx_udp_read_one(udp) :
			  recvmmsg(udp->fd, udp->rx_msgs, (unsigned) n,
				   MSG_DONTWAIT | MSG_TRUNC, NULL);

		udp->dg.dev.stats.rx_calls++;
		udp->dg.dev.stats.rx_empty += got <= 0;
		udp->rx_got = got > 0 ? (size_t) got : 0;
		udp->rx_next = 0;
		for (size_t i = udp->rx_got; i < n; i++)
			rdmx_udp_rx_unuse(udp, i);
		if (got > 0 && reads)
			*now = rdmx_clock_ns();
		if (got >= RDMX_UDP_GRO_STREAM && udp->gro == RDMX_UDP_GRO_MAY)
			udp->gro = RDMX_UDP_GRO_DUE;
		done += rdmx_udp_rx_batch(udp, *now, cqe + done, max - done, &reads);
		/*
		 * Ask for twice what came, at least RDMX_UDP_RX_MORE after a
		 * datagram (it may start a stream), so a stream soon reads whole
		 * batches; after nothing, for one.
		 */
		udp->rx_want = got <= 0 ? RDMX_UDP_RX_IDLE :
			       RDMX_MIN(RDMX_MAX(2 * (size_t) got, RDMX_UDP_RX_MORE),
					RDMX_UDP_BATCH);
		/*
		 * A single read hands its datagram up at once: whether more
		 * follow, the next poll's batch finds out.
		 */
		if (got < (int) n || n == 1)
			break;
	}
	return done;
}

static int rdmx_udp_poll_cq(struct rdmx_dev *dev, struct rdmx_dev_cqe *cqe, int max)
{
	struct rdmx_udp_dev *udp = rdmx_udp_dev(dev);
	uint64_t now = rdmx_clock_ns();
	/* Reads first: a few at most, each holding a message back. */
	int done = rdmx_cma_poll(&udp->cma, cqe, max);
	/* Half the room at least stays for finished sends, if there are any. */
	int keep = rdmx_dgram_done_keep(&udp->dg, max - done);

	/* Packets next: their acks complete sends reported below. */
	done += rdmx_udp_poll_recv(udp, &now, cqe + done, max - done - keep);
	rdmx_swsrd_progress(&udp->dg.srd, now);
	rdmx_udp_flush(udp);
	return done + rdmx_dgram_report(&udp->dg, cqe + done, max - done);
}

static int rdmx_udp_wait_fd(struct rdmx_dev *dev)
{
	return rdmx_udp_dev(dev)->fd;
}

static int rdmx_udp_wait_arm(struct rdmx_dev *dev, uint64_t *due_p)
{
	struct rdmx_udp_dev *udp = rdmx_udp_dev(dev);

	if (udp->cma.ndone || udp->tx_cnt || udp->rx_next < udp->rx_got)
		return -FI_EAGAIN;
	return rdmx_dgram_wait_arm(&udp->dg, due_p);
}

static int rdmx_udp_read_expose(struct rdmx_dev *dev, const struct iovec *iov,
				size_t cnt, struct rdmx_dev_rkey *rkey)
{
	return rdmx_cma_expose(&rdmx_udp_dev(dev)->cma, iov, cnt, rkey);
}

static void rdmx_udp_read_revoke(struct rdmx_dev *dev, struct rdmx_dev_rkey *rkey)
{
	(void) dev;
	rdmx_cma_revoke(rkey);
}

static int rdmx_udp_post_read(struct rdmx_dev *dev, struct rdmx_ah *ah,
			      const struct iovec *local, size_t local_cnt,
			      const struct iovec *remote, size_t remote_cnt,
			      const void *key, uint64_t wr_id)
{
	(void) ah;	/* the key says which session and peer it came from */
	return rdmx_cma_read(&rdmx_udp_dev(dev)->cma, local, local_cnt, remote,
			     remote_cnt, (const struct rdmx_dev_rkey *) key, wr_id);
}

static void rdmx_udp_set_bufsize(int fd, int opt, int force_opt, size_t size)
{
	int val = (int) size;

	/* The forcing variant passes rmem_max/wmem_max when privileged. */
	if (setsockopt(fd, SOL_SOCKET, force_opt, &val, sizeof(val)))
		(void) setsockopt(fd, SOL_SOCKET, opt, &val, sizeof(val));
}

/*
 * Opens and binds the socket; the canonical bound address goes to udp.
 * An IPv6 socket takes IPv6 only: an IPv4 peer could not tell it from
 * another endpoint, and the wildcards of both families stay separate.
 */
static int rdmx_udp_socket(struct rdmx_udp_dev *udp, const union rdmx_udp_addr *src)
{
	union rdmx_udp_addr bound = *src;
	socklen_t len = sizeof(bound);
	int on = 1;

	udp->fd = socket(bound.sa.sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (udp->fd < 0) {
		RDMX_WARN(FI_LOG_EP_CTRL, "socket: %s\n", strerror(errno));
		return -errno;
	}
	if ((bound.sa.sa_family == AF_INET6 &&
	     setsockopt(udp->fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on))) ||
	    rdmx_udp_pmtu_fixed(udp->fd, bound.sa.sa_family) ||
	    (udp->wildcard && rdmx_udp_ctl_enable(udp->fd, bound.sa.sa_family)) ||
	    bind(udp->fd, &bound.sa, rdmx_udp_addr_len(&bound)) ||
	    getsockname(udp->fd, &bound.sa, &len)) {
		int ret = -errno;

		RDMX_WARN(FI_LOG_EP_CTRL, "socket set-up: %s\n", strerror(errno));
		close(udp->fd);
		return ret;
	}
	rdmx_udp_set_bufsize(udp->fd, SO_RCVBUF, SO_RCVBUFFORCE, g_rdmx_params.sockbuf);
	rdmx_udp_set_bufsize(udp->fd, SO_SNDBUF, SO_SNDBUFFORCE, g_rdmx_params.sockbuf);
	rdmx_udp_addr_canon(&bound, len, &udp->addr);
	return 0;
}

/*
 * Opens the sockets of paths 1 to path_cnt - 1: bound to the main one's
 * address with ports of their own, sending as far as it does, and
 * receiving as little as the kernel lets (nothing reads them). 0 or
 * -errno; the caller closes what was opened.
 */
static int rdmx_udp_paths_open(struct rdmx_udp_dev *udp)
{
	union rdmx_udp_addr bound = udp->addr;
	int on = 1;

	*rdmx_udp_addr_port(&bound) = 0;
	udp->path_fd[0] = udp->fd;
	for (unsigned k = 1; k < RDMX_SRD_PATHS_MAX; k++)
		udp->path_fd[k] = -1;
	for (unsigned k = 1; k < udp->path_cnt; k++) {
		int fd = socket(bound.sa.sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		udp->path_fd[k] = fd;
		if (fd < 0 ||
		    (bound.sa.sa_family == AF_INET6 &&
		     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on))) ||
		    rdmx_udp_pmtu_fixed(fd, bound.sa.sa_family) ||
		    bind(fd, &bound.sa, rdmx_udp_addr_len(&bound))) {
			int ret = -errno;

			RDMX_WARN(FI_LOG_EP_CTRL, "path socket: %s\n", strerror(errno));
			return ret;
		}
		rdmx_udp_set_bufsize(fd, SO_SNDBUF, SO_SNDBUFFORCE, g_rdmx_params.sockbuf);
		rdmx_udp_set_bufsize(fd, SO_RCVBUF, SO_RCVBUFFORCE, 0);
	}
	return 0;
}

/* Closes the sockets of paths 1 on. */
static void rdmx_udp_paths_close(struct rdmx_udp_dev *udp)
{
	for (unsigned k = 1; k < udp->path_cnt; k++)
		if (udp->path_fd[k] >= 0)
			close(udp->path_fd[k]);
}

/* Logs the ports the paths send from. */
static void rdmx_udp_paths_log(const struct rdmx_udp_dev *udp)
{
	char ports[RDMX_SRD_PATHS_MAX * 7] = "";
	size_t off = 0;

	for (unsigned k = 0; k < udp->path_cnt; k++) {
		union rdmx_udp_addr a;
		socklen_t len = sizeof(a);
		int ret = getsockname(udp->path_fd[k], &a.sa, &len) ? -1 :
			  snprintf(ports + off, sizeof(ports) - off, "%s%u", k ? " " : "",
				   ntohs(*rdmx_udp_addr_port(&a)));

		off += ret > 0 ? (size_t) ret : 0;
	}
	RDMX_INFO(FI_LOG_EP_CTRL, "udp: %u paths, from ports %s\n", udp->path_cnt, ports);
}

/*
 * What peers send to: the bound address, or for a wildcard, the domain's
 * address with the bound port.
 */
static void rdmx_udp_set_name(struct rdmx_udp_dev *udp, const struct rdmx_dev_domain *dom)
{
	udp->name = udp->addr;
	if (udp->wildcard) {
		memcpy(&udp->name, dom->addr, sizeof(udp->name));
		*rdmx_udp_addr_port(&udp->name) = *rdmx_udp_addr_port(&udp->addr);
	}
}

static void rdmx_udp_faults_init(struct rdmx_udp_faults *f, size_t mtu)
{
	f->drop = (unsigned) RDMX_MIN(g_rdmx_params.udp_drop, 100);
	f->dup = (unsigned) RDMX_MIN(g_rdmx_params.udp_dup, 100);
	f->reorder = (unsigned) RDMX_MIN(g_rdmx_params.udp_reorder, 100);
	f->rng = g_rdmx_params.udp_seed ? g_rdmx_params.udp_seed : 1;
	if (f->reorder)
		f->held = malloc(mtu);
	if (f->drop || f->dup || f->reorder)
		RDMX_INFO(FI_LOG_EP_CTRL, "udp fault injection: drop %u%% dup %u%% "
			  "reorder %u%%\n", f->drop, f->dup, f->reorder);
}

static int rdmx_udp_open(const struct rdmx_dev_attr *attr, struct rdmx_dev **dev_p)
{
	const union rdmx_udp_addr *src = attr->src_addr;
	struct rdmx_dev_domain dom;
	struct rdmx_udp_dev *udp;
	int dom_family, ret = 1;

	if (!src)
		ret = 0;
	else if (attr->domain)
		dom = *attr->domain;
	else
		ret = rdmx_udp_domains(src, NULL, &dom, 1);
	dom_family = ret > 0 ? ((const union rdmx_udp_addr *) dom.addr)->sa.sa_family : 0;
	if (ret <= 0 || dom_family != src->sa.sa_family) {
		RDMX_WARN(FI_LOG_EP_CTRL, "no interface owns the source address\n");
		return ret < 0 ? ret : -FI_EADDRNOTAVAIL;
	}
	udp = calloc(1, sizeof(*udp));
	if (!udp)
		return -FI_ENOMEM;
	/* A datagram endpoint has no swsrd to spread its packets. */
	udp->path_cnt = attr->unreliable ? 1 :
			(unsigned) RDMX_MAX(RDMX_MIN(g_rdmx_params.paths, RDMX_SRD_PATHS_MAX), 1);
	ret = rdmx_dgram_construct(&udp->dg, &rdmx_dev_udp_ops, &rdmx_udp_dgram_ops,
				   attr, udp->path_cnt);
	if (ret)
		goto err_free_udp;
	udp->wildcard = rdmx_udp_addr_is_any(attr->src_addr);
	ret = rdmx_udp_socket(udp, attr->src_addr);
	if (ret)
		goto err_destruct_dgram;
	ret = rdmx_udp_paths_open(udp);
	if (ret)
		goto err_close_paths;
	if (udp->path_cnt > 1)
		rdmx_udp_paths_log(udp);
	rdmx_udp_set_name(udp, &dom);
	udp->dom_mtu = dom.mtu;
	udp->gso_on = g_rdmx_params.udp_gso;
	udp->dg.dev.caps.mtu = RDMX_MAX(dom.mtu, rdmx_udp_family_mtu(dom_family));
	udp->gro = rdmx_udp_gro_allowed(udp) ? RDMX_UDP_GRO_MAY : RDMX_UDP_GRO_NEVER;
	rdmx_udp_rx_init(udp);
	rdmx_udp_faults_init(&udp->faults, udp->dg.dev.caps.mtu + sizeof(struct rdmx_wire_srd));
	udp->dg.dev.caps.sq_size = attr->sq_size;
	udp->dg.dev.caps.rq_size = attr->rq_size;
	udp->dg.dev.caps.rx_headroom = RDMX_UDP_HDR;
	udp->dg.dev.caps.flags = RDMX_DEV_CAP_RELIABLE | RDMX_DEV_CAP_OTHER_PATHS;
	/*
	 * Peers on this host (any netns, same pid namespace) can be read:
	 * those whose handshake names the same host.
	 */
	if (rdmx_cma_init(&udp->cma)) {
		udp->dg.dev.caps.flags |= RDMX_DEV_CAP_RDMA_READ;
		udp->dg.dev.caps.read_host = udp->cma.host;
	}
	*dev_p = &udp->dg.dev;
	return 0;

err_close_paths:
	rdmx_udp_paths_close(udp);
	close(udp->fd);
err_destruct_dgram:
	rdmx_dgram_destruct(&udp->dg);
err_free_udp:
	free(udp);
	return ret;
}

static void rdmx_udp_close(struct rdmx_dev *dev)
{
	struct rdmx_udp_dev *udp = rdmx_udp_dev(dev);

	/* The acknowledgements owed leave before the handles they name go. */
	rdmx_swsrd_flush_acks(&udp->dg.srd);
	rdmx_udp_flush(udp);
	rdmx_dgram_destruct(&udp->dg);
	rdmx_udp_paths_close(udp);
	close(udp->fd);
	free(udp->faults.held);
	free(udp->rx_scratch);
	free(udp);
}

/*
 * A peer's packets: what the route to it carries (loopback's for a peer
 * on this host), else what the domain's interface does.
 */
static size_t rdmx_udp_ah_mtu(struct rdmx_dev *dev, struct rdmx_ah *ah)
{
	const struct rdmx_dgram_ah *dah = rdmx_container_of(ah, struct rdmx_dgram_ah, ah);
	size_t mtu = rdmx_udp_route_mtu((const union rdmx_udp_addr *) dah->addr);

	return RDMX_MIN(mtu ? mtu : rdmx_udp_dev(dev)->dom_mtu, dev->caps.mtu);
}

static bool rdmx_udp_ah_local(struct rdmx_dev *dev, struct rdmx_ah *ah)
{
	const struct rdmx_dgram_ah *dah = rdmx_container_of(ah, struct rdmx_dgram_ah, ah);

	(void) dev;
	return rdmx_udp_addr_local((const union rdmx_udp_addr *) dah->addr);
}

static void rdmx_udp_getname(struct rdmx_dev *dev, void *canon)
{
	memcpy(canon, &rdmx_udp_dev(dev)->name, sizeof(union rdmx_udp_addr));
}

const struct rdmx_dev_ops rdmx_dev_udp_ops = {
	.name = "udp",
	.addr_size = sizeof(union rdmx_udp_addr),
	.addr_format = rdmx_udp_addr_format,
	.addr_canon = rdmx_udp_addr_check,
	.addr_len = rdmx_udp_addr_size,
	.addr_str = rdmx_udp_addr_str,
	.resolve = rdmx_udp_resolve,
	.domains = rdmx_udp_domains,
	.open = rdmx_udp_open,
	.close = rdmx_udp_close,
	.getname = rdmx_udp_getname,
	.ah_create = rdmx_dgram_ah_create,
	.ah_destroy = rdmx_dgram_ah_destroy,
	.ah_reset = rdmx_dgram_ah_reset,
	.ah_peer = rdmx_dgram_ah_peer,
	.ah_mtu = rdmx_udp_ah_mtu,
	.ah_local = rdmx_udp_ah_local,
	.post_send = rdmx_udp_post_send,
	.post_send_segs = rdmx_udp_post_send_segs,
	.post_recv = rdmx_dgram_post_recv,
	.poll_cq = rdmx_udp_poll_cq,
	.wait_fd = rdmx_udp_wait_fd,
	.wait_arm = rdmx_udp_wait_arm,
	.read_expose = rdmx_udp_read_expose,
	.read_revoke = rdmx_udp_read_revoke,
	.post_read = rdmx_udp_post_read,
};
