/*
 * rdmx: the udp device. One non-blocking UDP socket per endpoint gives a
 * raw queue pair: sends are batched into sendmmsg, receives land in the
 * buffers the rdm layer posted, read with recvmmsg only while buffers are
 * posted (so a busy receiver pushes back into the socket buffer instead of
 * losing packets inside the provider). UDP is not reliable; swsrd will sit
 * on top of this device without changing its interface.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "rdmx.h"
#include "rdmx_dev.h"
#include "rdmx_dev_udp.h"
#include "rdmx_hash.h"

#define RDMX_UDP_BATCH	32

struct rdmx_udp_ah {
	struct rdmx_ah		ah;
	union rdmx_udp_addr	addr;
	uint32_t		refs;
};

struct rdmx_udp_send {
	uint64_t		wr_id;
	struct rdmx_udp_ah	*ah;
	struct iovec		iov[RDMX_DEV_SGE_MAX];
	size_t			iov_cnt;
	enum rdmx_dev_status	status;
};

struct rdmx_udp_recv {
	uint64_t		wr_id;
	void			*buf;
	size_t			len;
};

struct rdmx_udp_dev {
	struct rdmx_dev		dev;
	int			fd;
	union rdmx_udp_addr	addr;
	struct rdmx_hash	ah_map;		/* canonical addr → ah */

	/*
	 * Send queue ring: [sq_head, sq_sent) left the socket and wait to be
	 * reported; [sq_sent, sq_tail) wait for the socket. Counters only grow.
	 */
	struct rdmx_udp_send	*sq;
	size_t			sq_size;
	uint64_t		sq_head, sq_sent, sq_tail;

	/* Receive queue ring of posted buffers. */
	struct rdmx_udp_recv	*rq;
	size_t			rq_size;
	uint64_t		rq_head, rq_tail;

	struct mmsghdr		msgs[RDMX_UDP_BATCH];
	struct iovec		rx_iov[RDMX_UDP_BATCH];
	union rdmx_udp_addr	rx_src[RDMX_UDP_BATCH];
};

/* errno values a send can fail with, and the status each becomes. */
static const struct {
	int			err;
	enum rdmx_dev_status	status;
} rdmx_udp_send_errors[] = {
	{ ECONNREFUSED,	RDMX_DEV_UNREACH },
	{ EHOSTUNREACH,	RDMX_DEV_UNREACH },
	{ ENETUNREACH,	RDMX_DEV_UNREACH },
	{ EHOSTDOWN,	RDMX_DEV_UNREACH },
	{ EADDRNOTAVAIL, RDMX_DEV_UNREACH },
	{ EPERM,	RDMX_DEV_UNREACH },
	{ EMSGSIZE,	RDMX_DEV_MSGSIZE },
};

static enum rdmx_dev_status rdmx_udp_send_status(int err)
{
	for (size_t i = 0; i < RDMX_ARRAY_SIZE(rdmx_udp_send_errors); i++) {
		if (rdmx_udp_send_errors[i].err == err)
			return rdmx_udp_send_errors[i].status;
	}
	return RDMX_DEV_IO;
}

static struct rdmx_udp_dev *rdmx_udp_dev(struct rdmx_dev *dev)
{
	return rdmx_container_of(dev, struct rdmx_udp_dev, dev);
}

static void rdmx_udp_set_bufsize(int fd, int opt, int force_opt, size_t size)
{
	int val = (int) size;

	/* The forcing variant passes rmem_max/wmem_max when privileged. */
	if (setsockopt(fd, SOL_SOCKET, force_opt, &val, sizeof(val)))
		(void) setsockopt(fd, SOL_SOCKET, opt, &val, sizeof(val));
}

static int rdmx_udp_open(const struct rdmx_dev_attr *attr, struct rdmx_dev **dev_p)
{
	struct rdmx_udp_dev *udp;
	struct rdmx_dev_domain dom;
	union rdmx_udp_addr bound;
	socklen_t len;
	int ret;

	if (!attr->src_addr) {
		RDMX_WARN(FI_LOG_EP_CTRL, "udp device needs a source address\n");
		return -FI_EINVAL;
	}
	ret = rdmx_udp_domains(attr->src_addr, NULL, &dom, 1);
	if (ret <= 0) {
		RDMX_WARN(FI_LOG_EP_CTRL, "no interface owns the source address\n");
		return ret < 0 ? ret : -FI_EADDRNOTAVAIL;
	}

	udp = calloc(1, sizeof(*udp));
	if (!udp)
		return -FI_ENOMEM;
	udp->sq_size = attr->sq_size;
	udp->rq_size = attr->rq_size;
	udp->sq = calloc(udp->sq_size, sizeof(*udp->sq));
	udp->rq = calloc(udp->rq_size, sizeof(*udp->rq));
	if (!udp->sq || !udp->rq) {
		ret = -FI_ENOMEM;
		goto err_free_queues;
	}
	ret = rdmx_hash_construct(&udp->ah_map, sizeof(union rdmx_udp_addr));
	if (ret)
		goto err_free_queues;

	memcpy(&bound, attr->src_addr, sizeof(bound));
	udp->fd = socket(bound.sa.sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (udp->fd < 0) {
		ret = -errno;
		RDMX_WARN(FI_LOG_EP_CTRL, "socket: %s\n", strerror(errno));
		goto err_destruct_hash;
	}
	if (bind(udp->fd, &bound.sa, rdmx_udp_addr_len(&bound))) {
		ret = -errno;
		RDMX_WARN(FI_LOG_EP_CTRL, "bind: %s\n", strerror(errno));
		goto err_close_fd;
	}
	rdmx_udp_set_bufsize(udp->fd, SO_RCVBUF, SO_RCVBUFFORCE, g_rdmx_params.sockbuf);
	rdmx_udp_set_bufsize(udp->fd, SO_SNDBUF, SO_SNDBUFFORCE, g_rdmx_params.sockbuf);

	len = sizeof(bound);
	if (getsockname(udp->fd, &bound.sa, &len)) {
		ret = -errno;
		goto err_close_fd;
	}
	rdmx_udp_addr_canon(&bound, len, &udp->addr);

	udp->dev.ops = &rdmx_dev_udp_ops;
	udp->dev.caps.mtu = dom.mtu;
	udp->dev.caps.max_inline = dom.mtu;	/* the kernel copies at send */
	udp->dev.caps.sq_size = udp->sq_size;
	udp->dev.caps.rq_size = udp->rq_size;
	udp->dev.caps.flags = 0;
	*dev_p = &udp->dev;
	return 0;

err_close_fd:
	close(udp->fd);
err_destruct_hash:
	rdmx_hash_destruct(&udp->ah_map);
err_free_queues:
	free(udp->sq);
	free(udp->rq);
	free(udp);
	return ret;
}

static void rdmx_udp_getname(struct rdmx_dev *dev, void *canon)
{
	memcpy(canon, &rdmx_udp_dev(dev)->addr, sizeof(union rdmx_udp_addr));
}

static int rdmx_udp_ah_create(struct rdmx_dev *dev, const void *canon,
			      struct rdmx_ah **ah_p)
{
	struct rdmx_udp_dev *udp = rdmx_udp_dev(dev);
	struct rdmx_udp_ah *ah;
	uint64_t val;
	int ret;

	if (rdmx_hash_find(&udp->ah_map, canon, &val)) {
		ah = (struct rdmx_udp_ah *) (uintptr_t) val;
		ah->refs++;
		*ah_p = &ah->ah;
		return 0;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return -FI_ENOMEM;
	memcpy(&ah->addr, canon, sizeof(ah->addr));
	ah->refs = 1;
	ret = rdmx_hash_insert(&udp->ah_map, canon, (uintptr_t) ah);
	if (ret) {
		free(ah);
		return ret;
	}
	*ah_p = &ah->ah;
	return 0;
}

/* Drops one reference; the handle goes when the last one does. */
static void rdmx_udp_ah_put(struct rdmx_udp_dev *udp, struct rdmx_udp_ah *ah)
{
	if (--ah->refs)
		return;
	rdmx_hash_remove(&udp->ah_map, &ah->addr);
	free(ah);
}

static void rdmx_udp_ah_destroy(struct rdmx_dev *dev, struct rdmx_ah *ah)
{
	rdmx_udp_ah_put(rdmx_udp_dev(dev),
			rdmx_container_of(ah, struct rdmx_udp_ah, ah));
}

static void rdmx_udp_close(struct rdmx_dev *dev)
{
	struct rdmx_udp_dev *udp = rdmx_udp_dev(dev);

	/* Sends never reported still hold their handles. */
	while (udp->sq_head != udp->sq_tail)
		rdmx_udp_ah_put(udp, udp->sq[udp->sq_head++ % udp->sq_size].ah);
	close(udp->fd);
	rdmx_hash_destruct(&udp->ah_map);
	free(udp->sq);
	free(udp->rq);
	free(udp);
}

/* Hands queued sends to the socket, as many per system call as possible. */
static void rdmx_udp_flush(struct rdmx_udp_dev *udp)
{
	while (udp->sq_sent != udp->sq_tail) {
		size_t n = RDMX_MIN(udp->sq_tail - udp->sq_sent, RDMX_UDP_BATCH);
		int sent;

		for (size_t i = 0; i < n; i++) {
			struct rdmx_udp_send *s = &udp->sq[(udp->sq_sent + i) % udp->sq_size];
			struct msghdr *m = &udp->msgs[i].msg_hdr;

			memset(m, 0, sizeof(*m));
			m->msg_name = &s->ah->addr;
			m->msg_namelen = rdmx_udp_addr_len(&s->ah->addr);
			m->msg_iov = s->iov;
			m->msg_iovlen = s->iov_cnt;
		}
		sent = sendmmsg(udp->fd, udp->msgs, (unsigned) n, 0);
		if (sent < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == ENOBUFS || errno == EINTR)
				return;
			/* The first datagram failed for itself: report it. */
			udp->sq[udp->sq_sent % udp->sq_size].status =
				rdmx_udp_send_status(errno);
			RDMX_DBG(FI_LOG_EP_DATA, "udp send: %s\n", strerror(errno));
			sent = 1;
		}
		udp->sq_sent += (unsigned) sent;
		if ((size_t) sent < n)
			return;
	}
}

static int rdmx_udp_post_send(struct rdmx_dev *dev, struct rdmx_ah *ah,
			      const struct iovec *iov, size_t iov_cnt,
			      uint64_t wr_id, unsigned flags)
{
	struct rdmx_udp_dev *udp = rdmx_udp_dev(dev);
	struct rdmx_udp_send *s;

	if (udp->sq_tail - udp->sq_head == udp->sq_size) {
		rdmx_udp_flush(udp);
		return -FI_EAGAIN;
	}
	if (iov_cnt > RDMX_DEV_SGE_MAX || rdmx_iov_len(iov, iov_cnt) > dev->caps.mtu)
		return -FI_EINVAL;

	s = &udp->sq[udp->sq_tail % udp->sq_size];
	s->wr_id = wr_id;
	s->ah = rdmx_container_of(ah, struct rdmx_udp_ah, ah);
	/* A queued send keeps its handle alive past ah_destroy. */
	s->ah->refs++;
	memcpy(s->iov, iov, iov_cnt * sizeof(*iov));
	s->iov_cnt = iov_cnt;
	s->status = RDMX_DEV_OK;
	udp->sq_tail++;

	if (!(flags & RDMX_DEV_SEND_MORE) ||
	    udp->sq_tail - udp->sq_sent >= RDMX_UDP_BATCH)
		rdmx_udp_flush(udp);
	return 0;
}

static int rdmx_udp_post_recv(struct rdmx_dev *dev, void *buf, size_t len,
			      uint64_t wr_id)
{
	struct rdmx_udp_dev *udp = rdmx_udp_dev(dev);
	struct rdmx_udp_recv *r;

	if (udp->rq_tail - udp->rq_head == udp->rq_size)
		return -FI_EAGAIN;
	r = &udp->rq[udp->rq_tail++ % udp->rq_size];
	r->wr_id = wr_id;
	r->buf = buf;
	r->len = len;
	return 0;
}

/* Reads datagrams into posted buffers; returns how many completions. */
static int rdmx_udp_poll_recv(struct rdmx_udp_dev *udp,
			      struct rdmx_dev_cqe *cqe, int max)
{
	size_t n = RDMX_MIN(udp->rq_tail - udp->rq_head, (size_t) max);
	int got, done = 0;

	n = RDMX_MIN(n, RDMX_UDP_BATCH);
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct rdmx_udp_recv *r = &udp->rq[(udp->rq_head + i) % udp->rq_size];
		struct msghdr *m = &udp->msgs[i].msg_hdr;

		udp->rx_iov[i].iov_base = r->buf;
		udp->rx_iov[i].iov_len = r->len;
		memset(m, 0, sizeof(*m));
		memset(&udp->rx_src[i], 0, sizeof(udp->rx_src[i]));
		m->msg_name = &udp->rx_src[i];
		m->msg_namelen = sizeof(udp->rx_src[i]);
		m->msg_iov = &udp->rx_iov[i];
		m->msg_iovlen = 1;
	}
	got = recvmmsg(udp->fd, udp->msgs, (unsigned) n, MSG_DONTWAIT, NULL);
	if (got <= 0)
		return 0;

	for (int i = 0; i < got; i++) {
		struct rdmx_udp_recv r = udp->rq[udp->rq_head++ % udp->rq_size];
		struct msghdr *m = &udp->msgs[i].msg_hdr;
		union rdmx_udp_addr *src = &udp->rx_src[i];
		uint64_t val;

		if (m->msg_flags & MSG_TRUNC) {
			/* Larger than any packet we accept: keep the buffer. */
			udp->dev.rx_dropped++;
			udp->rq[udp->rq_tail++ % udp->rq_size] = r;
			continue;
		}
		rdmx_udp_addr_canon(src, m->msg_namelen, src);
		cqe[done].wr_id = r.wr_id;
		cqe[done].op = RDMX_DEV_OP_RECV;
		cqe[done].status = RDMX_DEV_OK;
		cqe[done].len = udp->msgs[i].msg_len;
		cqe[done].src_addr = src;
		cqe[done].src_ah = rdmx_hash_find(&udp->ah_map, src, &val) ?
			&((struct rdmx_udp_ah *) (uintptr_t) val)->ah : NULL;
		done++;
	}
	return done;
}

static int rdmx_udp_poll_cq(struct rdmx_dev *dev, struct rdmx_dev_cqe *cqe, int max)
{
	struct rdmx_udp_dev *udp = rdmx_udp_dev(dev);
	int done = 0;

	rdmx_udp_flush(udp);
	while (done < max && udp->sq_head != udp->sq_sent) {
		struct rdmx_udp_send *s = &udp->sq[udp->sq_head++ % udp->sq_size];

		rdmx_udp_ah_put(udp, s->ah);
		cqe[done].wr_id = s->wr_id;
		cqe[done].op = RDMX_DEV_OP_SEND;
		cqe[done].status = s->status;
		cqe[done].len = 0;
		cqe[done].src_ah = NULL;
		cqe[done].src_addr = NULL;
		done++;
	}
	return done + rdmx_udp_poll_recv(udp, cqe + done, max - done);
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
	.post_send = rdmx_udp_post_send,
	.post_recv = rdmx_udp_post_recv,
	.poll_cq = rdmx_udp_poll_cq,
};
