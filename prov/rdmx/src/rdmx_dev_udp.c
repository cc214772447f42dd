/*
 * rdmx: the udp device. One non-blocking UDP socket per endpoint gives a
 * raw datagram queue; swsrd (rdmx_swsrd.c) on top makes it honour the
 * device contract: reliable, unordered, RNR refusal when no receive
 * buffer is posted. Sends are batched into sendmmsg, receives are read
 * with recvmmsg, header and payload scattered apart so the payload lands
 * at the start of the buffer the rdm layer posted.
 *
 * FI_RDMX_UDP_DROP/DUP/REORDER (percent, test only) inject faults on the
 * send side with a fixed seed (FI_RDMX_UDP_SEED).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_cma.h"
#include "rdmx_dev.h"
#include "rdmx_dev_udp.h"
#include "rdmx_hash.h"
#include "rdmx_pool.h"
#include "rdmx_swsrd.h"

#define RDMX_UDP_BATCH		32
/* Datagrams an idle poll asks for: preparing slots costs even when none come. */
#define RDMX_UDP_RX_IDLE	4
/*
 * Datagrams read per poll at most: a flood of packets that complete
 * nothing (acks, refusals, junk) must not keep the caller inside.
 */
#define RDMX_UDP_READ_MAX	(4 * RDMX_UDP_BATCH)
/* Peers learnt from packets alone (not in any AV) kept at most. */
#define RDMX_UDP_ANON_MAX	4096

struct rdmx_udp_ah {
	struct rdmx_ah		ah;
	union rdmx_udp_addr	addr;
	uint32_t		refs;		/* ah_create calls not destroyed */
	bool			anon;		/* made for an unknown sender */
	struct rdmx_swsrd_peer	srd;
	struct rdmx_dlist	link;		/* on rdmx_udp_dev.ahs */
};

struct rdmx_udp_send {
	struct rdmx_swsrd_send	srd;
};

struct rdmx_udp_recv {
	uint64_t		wr_id;
	void			*buf;		/* NULL: none posted, header only */
	size_t			len;
};

struct rdmx_udp_done {
	struct rdmx_udp_send	*send;
	enum rdmx_dev_status	status;
};

struct rdmx_udp_faults {
	unsigned		drop, dup, reorder;	/* percent */
	uint64_t		rng;
	uint8_t			*held;		/* a datagram kept back */
	size_t			held_len;
	union rdmx_udp_addr	held_to;
};

struct rdmx_udp_dev {
	struct rdmx_dev		dev;
	int			fd;
	union rdmx_udp_addr	addr;
	struct rdmx_hash	ah_map;		/* canonical addr → ah */
	struct rdmx_dlist	ahs;		/* of rdmx_udp_ah, freed at close */
	size_t			anon_cnt;
	struct rdmx_swsrd	srd;
	struct rdmx_pool	send_pool;	/* of rdmx_udp_send */

	/*
	 * Sends swsrd finished, not yet reported: a ring of sq_size. A send
	 * goes back to the pool only when reported, so the ring never holds
	 * more than the pool has.
	 */
	struct rdmx_udp_done	*done;
	size_t			done_cap;
	uint64_t		done_head, done_tail;

	/* Posted receive buffers, a stack: any buffer fits any packet. */
	struct rdmx_udp_recv	*rq;
	size_t			rq_size, rq_cnt;

	struct mmsghdr		tx_msgs[RDMX_UDP_BATCH];
	struct iovec		tx_iov[RDMX_UDP_BATCH][1 + RDMX_DEV_SGE_MAX];
	struct rdmx_wire_srd	tx_hdr[RDMX_UDP_BATCH];	/* headers, copied */
	size_t			tx_cnt;

	struct mmsghdr		rx_msgs[RDMX_UDP_BATCH];
	struct iovec		rx_iov[RDMX_UDP_BATCH][2];
	struct rdmx_wire_srd	rx_hdr[RDMX_UDP_BATCH];
	union rdmx_udp_addr	rx_src[RDMX_UDP_BATCH];
	struct rdmx_udp_recv	rx_slot[RDMX_UDP_BATCH];
	size_t			rx_want;	/* slots the next read prepares */

	struct rdmx_udp_faults	faults;
	struct rdmx_cma		cma;		/* reads from local peers */
};

static struct rdmx_udp_dev *rdmx_udp_dev(struct rdmx_dev *dev)
{
	return rdmx_container_of(dev, struct rdmx_udp_dev, dev);
}

/* Hands the batch to the socket; what it refuses is lost (swsrd resends). */
static void rdmx_udp_flush(struct rdmx_udp_dev *udp)
{
	size_t off = 0;

	while (off < udp->tx_cnt) {
		int sent = sendmmsg(udp->fd, udp->tx_msgs + off,
				    (unsigned) (udp->tx_cnt - off), 0);

		if (sent < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == ENOBUFS || errno == EINTR)
				break;
			/* The first datagram failed for itself: skip it. */
			RDMX_DBG(FI_LOG_EP_DATA, "udp send: %s\n", strerror(errno));
			sent = 1;
		}
		off += (size_t) sent;
	}
	udp->tx_cnt = 0;
}

/*
 * Queues one datagram in the batch (flushing a full batch first). With
 * own_hdr, iov[0] is a swsrd header, copied here because swsrd reuses
 * its storage at once (several ACKs to one peer may wait in a batch).
 */
static void rdmx_udp_queue(struct rdmx_udp_dev *udp, union rdmx_udp_addr *to,
			   const struct iovec *iov, size_t iov_cnt, bool own_hdr)
{
	struct msghdr *m;

	if (udp->tx_cnt == RDMX_UDP_BATCH)
		rdmx_udp_flush(udp);
	m = &udp->tx_msgs[udp->tx_cnt].msg_hdr;
	memset(m, 0, sizeof(*m));
	memcpy(udp->tx_iov[udp->tx_cnt], iov, iov_cnt * sizeof(*iov));
	if (own_hdr) {
		memcpy(&udp->tx_hdr[udp->tx_cnt], iov[0].iov_base,
		       sizeof(udp->tx_hdr[0]));
		udp->tx_iov[udp->tx_cnt][0].iov_base = &udp->tx_hdr[udp->tx_cnt];
	}
	m->msg_name = to;
	m->msg_namelen = rdmx_udp_addr_len(to);
	m->msg_iov = udp->tx_iov[udp->tx_cnt];
	m->msg_iovlen = iov_cnt;
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
			  const struct iovec *iov, size_t iov_cnt)
{
	struct rdmx_udp_faults *f = &udp->faults;

	f->held_len = rdmx_copy_from_iov(f->held, iov, iov_cnt);
	f->held_to = *to;
}

static int rdmx_udp_xmit(void *ctx, struct rdmx_swsrd_peer *peer,
			 const struct iovec *iov, size_t iov_cnt)
{
	struct rdmx_udp_dev *udp = ctx;
	struct rdmx_udp_ah *ah = rdmx_container_of(peer, struct rdmx_udp_ah, srd);
	struct rdmx_udp_faults *f = &udp->faults;

	if (rdmx_udp_fault(f, f->drop))
		return 0;
	if (f->held && !f->held_len && rdmx_udp_fault(f, f->reorder)) {
		rdmx_udp_hold(udp, &ah->addr, iov, iov_cnt);
		return 0;
	}
	rdmx_udp_queue(udp, &ah->addr, iov, iov_cnt, true);
	if (rdmx_udp_fault(f, f->dup))
		rdmx_udp_queue(udp, &ah->addr, iov, iov_cnt, true);
	if (f->held_len) {
		struct iovec held = { f->held, f->held_len };

		rdmx_udp_queue(udp, &f->held_to, &held, 1, false);
		rdmx_udp_flush(udp);
		f->held_len = 0;
	}
	return 0;
}

static void rdmx_udp_done(void *ctx, struct rdmx_swsrd_send *send,
			  enum rdmx_dev_status status)
{
	struct rdmx_udp_dev *udp = ctx;
	struct rdmx_udp_done *d = &udp->done[udp->done_tail++ % udp->done_cap];

	d->send = rdmx_container_of(send, struct rdmx_udp_send, srd);
	d->status = status;
}

static const struct rdmx_swsrd_ops rdmx_udp_srd_ops = {
	.xmit = rdmx_udp_xmit,
	.done = rdmx_udp_done,
};

/* ah_map keys: the address inside the handle each value points at. */
static const void *rdmx_udp_ah_key(const struct rdmx_hash *hash, uint64_t val)
{
	(void) hash;
	return &((const struct rdmx_udp_ah *) (uintptr_t) val)->addr;
}

/* Finds the handle of a canonical address, making one if asked. */
static struct rdmx_udp_ah *rdmx_udp_ah_get(struct rdmx_udp_dev *udp,
					   const union rdmx_udp_addr *addr,
					   bool create)
{
	struct rdmx_udp_ah *ah;
	uint64_t val;

	if (rdmx_hash_find(&udp->ah_map, addr, &val))
		return (struct rdmx_udp_ah *) (uintptr_t) val;
	if (!create)
		return NULL;
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	ah->addr = *addr;
	if (rdmx_hash_insert(&udp->ah_map, addr, (uintptr_t) ah)) {
		free(ah);
		return NULL;
	}
	rdmx_swsrd_peer_construct(&udp->srd, &ah->srd, ah);
	rdmx_dlist_insert_tail(&udp->ahs, &ah->link);
	return ah;
}

static int rdmx_udp_ah_create(struct rdmx_dev *dev, const void *canon,
			      struct rdmx_ah **ah_p)
{
	struct rdmx_udp_ah *ah = rdmx_udp_ah_get(rdmx_udp_dev(dev), canon, true);

	if (!ah)
		return -FI_ENOMEM;
	if (ah->anon) {
		/* The rdm layer knows this sender now: no longer evictable. */
		ah->anon = false;
		rdmx_udp_dev(dev)->anon_cnt--;
	}
	ah->refs++;
	*ah_p = &ah->ah;
	return 0;
}

static void rdmx_udp_ah_reset(struct rdmx_dev *dev, struct rdmx_ah *ah)
{
	struct rdmx_udp_ah *uah = rdmx_container_of(ah, struct rdmx_udp_ah, ah);

	rdmx_swsrd_peer_reset(&rdmx_udp_dev(dev)->srd, &uah->srd);
}

/*
 * Frees the oldest handle made for an unknown sender that nothing uses
 * and that has nothing in flight; false when there is none. Bounds what
 * a host sending from many addresses can make us keep.
 */
static bool rdmx_udp_evict_anon(struct rdmx_udp_dev *udp)
{
	struct rdmx_dlist *it;

	rdmx_dlist_foreach(&udp->ahs, it) {
		struct rdmx_udp_ah *ah = rdmx_container_of(it, struct rdmx_udp_ah, link);

		if (!ah->anon || ah->refs || ah->srd.active)
			continue;
		rdmx_dlist_remove(&ah->link);
		rdmx_hash_remove(&udp->ah_map, &ah->addr);
		rdmx_swsrd_peer_destruct(&udp->srd, &ah->srd);
		free(ah);
		udp->anon_cnt--;
		return true;
	}
	return false;
}

/* The handle of a datagram's sender, made if needed; NULL to drop it. */
static struct rdmx_udp_ah *rdmx_udp_ah_sender(struct rdmx_udp_dev *udp,
					      const union rdmx_udp_addr *src)
{
	struct rdmx_udp_ah *ah = rdmx_udp_ah_get(udp, src, false);

	if (ah)
		return ah;
	if (udp->anon_cnt >= RDMX_UDP_ANON_MAX && !rdmx_udp_evict_anon(udp))
		return NULL;
	ah = rdmx_udp_ah_get(udp, src, true);
	if (ah) {
		ah->anon = true;
		udp->anon_cnt++;
	}
	return ah;
}

static void rdmx_udp_ah_destroy(struct rdmx_dev *dev, struct rdmx_ah *ah)
{
	struct rdmx_udp_ah *uah = rdmx_container_of(ah, struct rdmx_udp_ah, ah);

	(void) dev;
	/* The reliability state outlives the handle: the peer keeps counting. */
	uah->refs--;
}

static int rdmx_udp_post_send(struct rdmx_dev *dev, struct rdmx_ah *ah,
			      const struct iovec *iov, size_t iov_cnt,
			      uint64_t wr_id, unsigned flags)
{
	struct rdmx_udp_dev *udp = rdmx_udp_dev(dev);
	struct rdmx_udp_ah *uah = rdmx_container_of(ah, struct rdmx_udp_ah, ah);
	struct rdmx_udp_send *send;
	int ret;

	if (iov_cnt > RDMX_DEV_SGE_MAX || rdmx_iov_len(iov, iov_cnt) > dev->caps.mtu)
		return -FI_EINVAL;
	send = rdmx_pool_alloc(&udp->send_pool);
	if (!send)
		return -FI_EAGAIN;
	send->srd.wr_id = wr_id;
	send->srd.awaited = flags & RDMX_DEV_SEND_AWAITED;
	memcpy(send->srd.iov, iov, iov_cnt * sizeof(*iov));
	send->srd.iov_cnt = iov_cnt;
	ret = rdmx_swsrd_send(&udp->srd, &uah->srd, &send->srd);
	if (ret) {
		rdmx_pool_release(&udp->send_pool, send);
		return ret;
	}
	if (!(flags & RDMX_DEV_SEND_MORE))
		rdmx_udp_flush(udp);
	return 0;
}

static int rdmx_udp_post_recv(struct rdmx_dev *dev, void *buf, size_t len,
			      uint64_t wr_id)
{
	struct rdmx_udp_dev *udp = rdmx_udp_dev(dev);

	if (udp->rq_cnt == udp->rq_size)
		return -FI_EAGAIN;
	udp->rq[udp->rq_cnt++] = (struct rdmx_udp_recv) { wr_id, buf, len };
	return 0;
}

/* Takes up to n posted buffers into the receive batch; returns how many
 * datagrams to read (header-only reads when none is posted). */
/* Points each batch slot at its header, address and iovec, once. */
static void rdmx_udp_rx_init(struct rdmx_udp_dev *udp)
{
	for (size_t i = 0; i < RDMX_UDP_BATCH; i++) {
		struct msghdr *m = &udp->rx_msgs[i].msg_hdr;

		memset(m, 0, sizeof(*m));
		udp->rx_iov[i][0].iov_base = &udp->rx_hdr[i];
		udp->rx_iov[i][0].iov_len = sizeof(udp->rx_hdr[i]);
		m->msg_name = &udp->rx_src[i];
		m->msg_iov = udp->rx_iov[i];
		m->msg_iovlen = 2;
	}
	udp->rx_want = RDMX_UDP_RX_IDLE;
}

/* Takes up to n posted buffers into the receive batch; returns how many
 * datagrams to read (header-only reads when none is posted). */
static size_t rdmx_udp_rx_prepare(struct rdmx_udp_dev *udp, size_t n)
{
	n = RDMX_MIN(n, udp->rx_want);
	if (udp->rq_cnt)
		n = RDMX_MIN(n, udp->rq_cnt);
	for (size_t i = 0; i < n; i++) {
		if (udp->rq_cnt)
			udp->rx_slot[i] = udp->rq[--udp->rq_cnt];
		else
			udp->rx_slot[i] = (struct rdmx_udp_recv) { 0, NULL, 0 };
		udp->rx_iov[i][1].iov_base = udp->rx_slot[i].buf;
		udp->rx_iov[i][1].iov_len = udp->rx_slot[i].len;
		/* The kernel overwrites the length with the sender's. */
		udp->rx_msgs[i].msg_hdr.msg_namelen = sizeof(udp->rx_src[i]);
	}
	return n;
}

/* Gives a batch slot's buffer back to the posted stack. */
static void rdmx_udp_rx_unuse(struct rdmx_udp_dev *udp, size_t i)
{
	if (udp->rx_slot[i].buf)
		udp->rq[udp->rq_cnt++] = udp->rx_slot[i];
}

/* Handles one datagram of the batch; true when it became a completion. */
static bool rdmx_udp_rx_one(struct rdmx_udp_dev *udp, size_t i,
			    struct rdmx_dev_cqe *cqe)
{
	struct msghdr *m = &udp->rx_msgs[i].msg_hdr;
	size_t len = udp->rx_msgs[i].msg_len;
	struct rdmx_udp_recv *slot = &udp->rx_slot[i];
	union rdmx_udp_addr *src = &udp->rx_src[i];
	struct rdmx_srd_hdr hdr;
	struct rdmx_udp_ah *ah;
	enum rdmx_srd_room room;

	if (rdmx_wire_srd_decode(&udp->rx_hdr[i], len, &hdr) ||
	    rdmx_udp_addr_canon(src, m->msg_namelen, src)) {
		udp->dev.stats.rx_malformed++;
		return false;
	}
	ah = rdmx_udp_ah_sender(udp, src);
	if (!ah) {
		udp->dev.stats.rx_dropped++;
		return false;
	}
	/* Buffers all have the device MTU: one too small means too big. */
	room = !slot->buf ? RDMX_SRD_ROOM_NONE :
	       (m->msg_flags & MSG_TRUNC) ? RDMX_SRD_ROOM_SHORT : RDMX_SRD_ROOM_BUF;
	if (!rdmx_swsrd_recv(&udp->srd, &ah->srd, &hdr, len - sizeof(hdr), room))
		return false;
	if (!slot->buf) {
		/* Only an empty DATA gets here without a buffer: nothing to hand up. */
		udp->dev.stats.rx_malformed++;
		return false;
	}
	cqe->wr_id = slot->wr_id;
	cqe->op = RDMX_DEV_OP_RECV;
	cqe->status = RDMX_DEV_OK;
	cqe->len = (uint32_t) (len - sizeof(struct rdmx_wire_srd));
	cqe->src_ah = &ah->ah;
	cqe->src_addr = &ah->addr;
	return true;
}

/* Reads datagrams into posted buffers; returns the receive completions. */
static int rdmx_udp_poll_recv(struct rdmx_udp_dev *udp, struct rdmx_dev_cqe *cqe,
			      int max)
{
	size_t reads = 0;
	int done = 0;

	while (done < max && reads < RDMX_UDP_READ_MAX) {
		size_t n = rdmx_udp_rx_prepare(udp, RDMX_MIN((size_t) (max - done),
							      RDMX_UDP_BATCH));
		/* MSG_TRUNC: msg_len is the datagram's length even when cut. */
		int got = recvmmsg(udp->fd, udp->rx_msgs, (unsigned) n,
				   MSG_DONTWAIT | MSG_TRUNC, NULL);

		for (size_t i = 0; i < n; i++) {
			if ((int) i >= got || !rdmx_udp_rx_one(udp, i, &cqe[done]))
				rdmx_udp_rx_unuse(udp, i);
			else
				done++;
		}
		/* Ask for twice what came, so a stream soon reads whole batches. */
		udp->rx_want = RDMX_MIN(RDMX_MAX(2 * (size_t) RDMX_MAX(got, 0),
						 (size_t) RDMX_UDP_RX_IDLE), RDMX_UDP_BATCH);
		if (got < (int) n)
			break;
		reads += n;
	}
	return done;
}

static int rdmx_udp_poll_cq(struct rdmx_dev *dev, struct rdmx_dev_cqe *cqe, int max)
{
	struct rdmx_udp_dev *udp = rdmx_udp_dev(dev);
	/* Reads first: a few at most, each holding a message back. */
	int done = rdmx_cma_poll(&udp->cma, cqe, max);
	/* Half the room at least stays for finished sends, if there are any. */
	int keep = (int) RDMX_MIN(udp->done_tail - udp->done_head,
				  (uint64_t) (max - done) / 2);

	/* Packets next: their acks complete sends reported below. */
	done += rdmx_udp_poll_recv(udp, cqe + done, max - done - keep);
	rdmx_swsrd_progress(&udp->srd);
	rdmx_udp_flush(udp);
	while (done < max && udp->done_head != udp->done_tail) {
		struct rdmx_udp_done *d = &udp->done[udp->done_head++ % udp->done_cap];

		cqe[done].wr_id = d->send->srd.wr_id;
		rdmx_pool_release(&udp->send_pool, d->send);
		cqe[done].op = RDMX_DEV_OP_SEND;
		cqe[done].status = d->status;
		cqe[done].len = 0;
		cqe[done].src_ah = NULL;
		cqe[done].src_addr = NULL;
		done++;
	}
	return done;
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
	(void) ah;
	return rdmx_cma_read(&rdmx_udp_dev(dev)->cma, local, local_cnt, remote,
			     remote_cnt, key, wr_id);
}

static void rdmx_udp_set_bufsize(int fd, int opt, int force_opt, size_t size)
{
	int val = (int) size;

	/* The forcing variant passes rmem_max/wmem_max when privileged. */
	if (setsockopt(fd, SOL_SOCKET, force_opt, &val, sizeof(val)))
		(void) setsockopt(fd, SOL_SOCKET, opt, &val, sizeof(val));
}

/* Opens and binds the socket; the canonical bound address goes to udp. */
static int rdmx_udp_socket(struct rdmx_udp_dev *udp, const union rdmx_udp_addr *src)
{
	union rdmx_udp_addr bound = *src;
	socklen_t len = sizeof(bound);

	udp->fd = socket(bound.sa.sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (udp->fd < 0) {
		RDMX_WARN(FI_LOG_EP_CTRL, "socket: %s\n", strerror(errno));
		return -errno;
	}
	if (bind(udp->fd, &bound.sa, rdmx_udp_addr_len(&bound)) ||
	    getsockname(udp->fd, &bound.sa, &len)) {
		int ret = -errno;

		RDMX_WARN(FI_LOG_EP_CTRL, "bind: %s\n", strerror(errno));
		close(udp->fd);
		return ret;
	}
	rdmx_udp_set_bufsize(udp->fd, SO_RCVBUF, SO_RCVBUFFORCE, g_rdmx_params.sockbuf);
	rdmx_udp_set_bufsize(udp->fd, SO_SNDBUF, SO_SNDBUFFORCE, g_rdmx_params.sockbuf);
	rdmx_udp_addr_canon(&bound, len, &udp->addr);
	return 0;
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

static uint32_t rdmx_udp_incarnation(void)
{
	uint32_t val;

	if (getrandom(&val, sizeof(val), GRND_NONBLOCK) != sizeof(val))
		val = (uint32_t) (rdmx_clock_ns() ^ ((uint64_t) getpid() << 16));
	return val;
}

static int rdmx_udp_alloc(struct rdmx_udp_dev *udp, const struct rdmx_dev_attr *attr)
{
	udp->rq_size = attr->rq_size;
	udp->done_cap = attr->sq_size;
	udp->rq = calloc(udp->rq_size, sizeof(*udp->rq));
	udp->done = calloc(udp->done_cap, sizeof(*udp->done));
	if (!udp->rq || !udp->done ||
	    rdmx_pool_construct(&udp->send_pool, sizeof(struct rdmx_udp_send),
				attr->sq_size))
		return -FI_ENOMEM;
	return 0;
}

static void rdmx_udp_free(struct rdmx_udp_dev *udp)
{
	rdmx_pool_destruct(&udp->send_pool);
	free(udp->rq);
	free(udp->done);
	free(udp->faults.held);
	free(udp);
}

static int rdmx_udp_open(const struct rdmx_dev_attr *attr, struct rdmx_dev **dev_p)
{
	struct rdmx_swsrd_cfg cfg;
	struct rdmx_dev_domain dom;
	struct rdmx_udp_dev *udp;
	int ret;

	ret = attr->src_addr ? rdmx_udp_domains(attr->src_addr, NULL, &dom, 1) : 0;
	if (ret <= 0) {
		RDMX_WARN(FI_LOG_EP_CTRL, "no interface owns the source address\n");
		return ret < 0 ? ret : -FI_EADDRNOTAVAIL;
	}
	udp = calloc(1, sizeof(*udp));
	if (!udp)
		return -FI_ENOMEM;
	ret = rdmx_udp_alloc(udp, attr);
	if (ret)
		goto err_free_udp;
	rdmx_udp_rx_init(udp);
	ret = rdmx_hash_construct(&udp->ah_map, sizeof(union rdmx_udp_addr),
				  rdmx_udp_ah_key);
	if (ret)
		goto err_free_udp;
	ret = rdmx_udp_socket(udp, attr->src_addr);
	if (ret)
		goto err_destruct_hash;

	rdmx_dlist_init(&udp->ahs);
	rdmx_swsrd_cfg_default(&cfg);
	rdmx_swsrd_construct(&udp->srd, &rdmx_udp_srd_ops, udp, &cfg,
			     rdmx_udp_incarnation(), &udp->dev.stats);
	rdmx_udp_faults_init(&udp->faults, dom.mtu + sizeof(struct rdmx_wire_srd));
	udp->dev.ops = &rdmx_dev_udp_ops;
	udp->dev.caps.mtu = dom.mtu;
	udp->dev.caps.max_inline = udp->dev.caps.mtu;	/* copied at send */
	udp->dev.caps.sq_size = attr->sq_size;
	udp->dev.caps.rq_size = attr->rq_size;
	udp->dev.caps.flags = RDMX_DEV_CAP_RELIABLE;
	/* Peers on this host (any netns, same pid namespace) can be read. */
	if (rdmx_cma_init(&udp->cma))
		udp->dev.caps.flags |= RDMX_DEV_CAP_RDMA_READ;
	*dev_p = &udp->dev;
	return 0;

err_destruct_hash:
	rdmx_hash_destruct(&udp->ah_map);
err_free_udp:
	rdmx_udp_free(udp);
	return ret;
}

static void rdmx_udp_close(struct rdmx_dev *dev)
{
	struct rdmx_udp_dev *udp = rdmx_udp_dev(dev);
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(&udp->ahs))) {
		struct rdmx_udp_ah *ah = rdmx_container_of(it, struct rdmx_udp_ah, link);

		rdmx_swsrd_peer_destruct(&udp->srd, &ah->srd);
		free(ah);
	}
	close(udp->fd);
	rdmx_hash_destruct(&udp->ah_map);
	rdmx_udp_free(udp);
}

static void rdmx_udp_getname(struct rdmx_dev *dev, void *canon)
{
	memcpy(canon, &rdmx_udp_dev(dev)->addr, sizeof(union rdmx_udp_addr));
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
	.ah_create = rdmx_udp_ah_create,
	.ah_destroy = rdmx_udp_ah_destroy,
	.ah_reset = rdmx_udp_ah_reset,
	.post_send = rdmx_udp_post_send,
	.post_recv = rdmx_udp_post_recv,
	.poll_cq = rdmx_udp_poll_cq,
	.read_expose = rdmx_udp_read_expose,
	.read_revoke = rdmx_udp_read_revoke,
	.post_read = rdmx_udp_post_read,
};
