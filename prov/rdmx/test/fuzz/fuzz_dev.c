/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx fuzzing: the fake datagram device (see fuzz_dev.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_dev_udp.h"
#include "rdmx_dgram.h"
#include "fuzz_dev.h"

#define FUZZ_DEV_HDR		sizeof(struct rdmx_wire_srd)
/* Reads outstanding at most; more are refused as a full queue would. */
#define FUZZ_DEV_READS		8

/* A datagram waiting for the next poll: the header and what follows. */
struct fuzz_dev_dgram {
	union rdmx_udp_addr	src;
	size_t			len;
	uint8_t			*bytes;
};

struct fuzz_dev {
	struct rdmx_dgram	dg;
	union rdmx_udp_addr	name;
	struct fuzz_dev_dgram	rxq[FUZZ_DEV_RXQ];
	size_t			rx_cnt;
	uint64_t		reads[FUZZ_DEV_READS];	/* wr_ids of reads done */
	enum rdmx_dev_status	read_status[FUZZ_DEV_READS];
	size_t			read_cnt;
	uint64_t		sent;
};

static struct fuzz_dev *g_fuzz_dev;

static struct fuzz_dev *fuzz_dev(struct rdmx_dev *dev)
{
	return rdmx_container_of(dev, struct fuzz_dev, dg.dev);
}

struct rdmx_dev *fuzz_dev_current(void)
{
	return g_fuzz_dev ? &g_fuzz_dev->dg.dev : NULL;
}

/* The endpoint's own address: 127.0.0.1:7, never a sender's. */
static void fuzz_dev_name(union rdmx_udp_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->sin.sin_family = AF_INET;
	out->sin.sin_port = htons(7);
	out->sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static int fuzz_dev_xmit(struct rdmx_dgram *dg, struct rdmx_dgram_ah *ah,
			 unsigned path, const struct iovec *iov, size_t iov_cnt)
{
	(void) ah; (void) path; (void) iov; (void) iov_cnt;
	rdmx_container_of(dg, struct fuzz_dev, dg)->sent++;
	return 0;
}

static int fuzz_dev_xmit_to(struct rdmx_dgram *dg, const void *canon,
			    const struct iovec *iov, size_t iov_cnt)
{
	(void) canon; (void) iov; (void) iov_cnt;
	rdmx_container_of(dg, struct fuzz_dev, dg)->sent++;
	return 0;
}

static bool fuzz_dev_same_host(const struct rdmx_dgram *dg, const void *a, const void *b)
{
	(void) dg;
	return rdmx_udp_addr_same_host(a, b);
}

static const struct rdmx_dgram_ops fuzz_dev_dgram_ops = {
	.xmit = fuzz_dev_xmit,
	.xmit_to = fuzz_dev_xmit_to,
	.same_host = fuzz_dev_same_host,
};

static int fuzz_dev_domains(const void *src, const void *dest,
			    struct rdmx_dev_domain *out, size_t max)
{
	union rdmx_udp_addr name;

	(void) src; (void) dest;
	if (!max)
		return 0;
	fuzz_dev_name(&name);
	memset(out, 0, sizeof(*out));
	strcpy(out->name, "fuzz0");
	memcpy(out->addr, &name, sizeof(name));
	out->mtu = FUZZ_DEV_MTU;
	return 1;
}

static int fuzz_dev_open(const struct rdmx_dev_attr *attr, struct rdmx_dev **dev_p)
{
	struct fuzz_dev *fd;
	int ret;

	if (g_fuzz_dev)
		return -FI_EBUSY;
	fd = calloc(1, sizeof(*fd));
	if (!fd)
		return -FI_ENOMEM;
	ret = rdmx_dgram_construct(&fd->dg, &fuzz_dev_ops, &fuzz_dev_dgram_ops, attr, 1);
	if (ret) {
		free(fd);
		return ret;
	}
	fuzz_dev_name(&fd->name);
	fd->dg.dev.caps = (struct rdmx_dev_caps) {
		.mtu = FUZZ_DEV_MTU,
		.sq_size = attr->sq_size,
		.rq_size = attr->rq_size,
		.rx_headroom = FUZZ_DEV_HDR,
		.flags = RDMX_DEV_CAP_RELIABLE | RDMX_DEV_CAP_RDMA_READ,
	};
	g_fuzz_dev = fd;
	*dev_p = &fd->dg.dev;
	return 0;
}

static void fuzz_dev_close(struct rdmx_dev *dev)
{
	struct fuzz_dev *fd = fuzz_dev(dev);

	rdmx_swsrd_flush_acks(&fd->dg.srd);
	rdmx_dgram_destruct(&fd->dg);
	for (size_t i = 0; i < fd->rx_cnt; i++)
		free(fd->rxq[i].bytes);
	if (g_fuzz_dev == fd)
		g_fuzz_dev = NULL;
	free(fd);
}

static void fuzz_dev_getname(struct rdmx_dev *dev, void *canon)
{
	memcpy(canon, &fuzz_dev(dev)->name, sizeof(fuzz_dev(dev)->name));
}

static int fuzz_dev_post_send(struct rdmx_dev *dev, struct rdmx_ah *ah,
			      const struct iovec *iov, size_t iov_cnt,
			      uint64_t wr_id, unsigned flags)
{
	return rdmx_dgram_post_send(dev, ah, iov, iov_cnt, wr_id, flags);
}

/*
 * Hands one queued datagram to rdmx_dgram_rx the way the udp device
 * does: into the most recently posted buffer, its swsrd header in the
 * headroom before it, cut at the buffer's end; only the header when no
 * buffer is posted. True when it became the completion *cqe.
 */
static bool fuzz_dev_rx_one(struct fuzz_dev *fd, struct fuzz_dev_dgram *d,
			    uint64_t now, struct rdmx_dev_cqe *cqe)
{
	struct rdmx_wire_srd hdr_only;
	struct rdmx_dgram_buf buf;
	bool have = rdmx_dgram_buf_take(&fd->dg, &buf);
	uint8_t *at = have ? (uint8_t *) buf.buf - FUZZ_DEV_HDR : (uint8_t *) &hdr_only;
	size_t room = have ? FUZZ_DEV_HDR + buf.len : FUZZ_DEV_HDR;

	memcpy(at, d->bytes, RDMX_MIN(d->len, room));
	if (rdmx_dgram_rx(&fd->dg, (const struct rdmx_wire_srd *) at, d->len, &d->src,
			  have ? &buf : NULL, d->len > room, now, cqe))
		return true;
	if (have)
		rdmx_dgram_buf_return(&fd->dg, &buf);
	return false;
}

/* Receives the queued datagrams, as many as max completions allow. */
static int fuzz_dev_poll_recv(struct fuzz_dev *fd, uint64_t now,
			      struct rdmx_dev_cqe *cqe, int max)
{
	size_t used = 0;
	int done = 0;

	while (used < fd->rx_cnt && done < max) {
		struct fuzz_dev_dgram *d = &fd->rxq[used++];

		if (fuzz_dev_rx_one(fd, d, now, &cqe[done]))
			done++;
		free(d->bytes);
	}
	memmove(fd->rxq, fd->rxq + used, (fd->rx_cnt - used) * sizeof(fd->rxq[0]));
	fd->rx_cnt -= used;
	return done;
}

/* Reports the reads done, as the udp device's cma reads are. */
static int fuzz_dev_poll_reads(struct fuzz_dev *fd, struct rdmx_dev_cqe *cqe, int max)
{
	int done = 0;

	while (done < max && (size_t) done < fd->read_cnt) {
		cqe[done] = (struct rdmx_dev_cqe) {
			.wr_id = fd->reads[done],
			.op = RDMX_DEV_OP_READ,
			.status = fd->read_status[done],
		};
		done++;
	}
	memmove(fd->reads, fd->reads + done, (fd->read_cnt - done) * sizeof(fd->reads[0]));
	memmove(fd->read_status, fd->read_status + done,
		(fd->read_cnt - done) * sizeof(fd->read_status[0]));
	fd->read_cnt -= (size_t) done;
	return done;
}

static int fuzz_dev_poll_cq(struct rdmx_dev *dev, struct rdmx_dev_cqe *cqe, int max)
{
	struct fuzz_dev *fd = fuzz_dev(dev);
	uint64_t now = rdmx_clock_ns();
	int done = fuzz_dev_poll_reads(fd, cqe, max);
	int keep = rdmx_dgram_done_keep(&fd->dg, max - done);

	done += fuzz_dev_poll_recv(fd, now, cqe + done, max - done - keep);
	rdmx_swsrd_progress(&fd->dg.srd, now);
	return done + rdmx_dgram_report(&fd->dg, cqe + done, max - done);
}

/* The key names nothing: a peer's read of it fails at its own device. */
static int fuzz_dev_read_expose(struct rdmx_dev *dev, const struct iovec *iov,
				size_t cnt, struct rdmx_dev_rkey *rkey)
{
	(void) dev; (void) iov; (void) cnt;
	memset(rkey, 0, sizeof(*rkey));
	rkey->wire[0] = 0x5a;
	return 0;
}

static void fuzz_dev_read_revoke(struct rdmx_dev *dev, struct rdmx_dev_rkey *rkey)
{
	(void) dev;
	rkey->wire[0] = 0;
}

/*
 * Fills every byte of local at once, so a range the rdm layer got wrong
 * is written here and then; the key's first byte chooses the outcome
 * (odd: the peer refused the access). Local and remote of different
 * lengths break the device contract: a bug of the caller, so a crash.
 */
static int fuzz_dev_post_read(struct rdmx_dev *dev, struct rdmx_ah *ah,
			      const struct iovec *local, size_t local_cnt,
			      const struct iovec *remote, size_t remote_cnt,
			      const void *key, uint64_t wr_id)
{
	struct fuzz_dev *fd = fuzz_dev(dev);
	bool refused = *(const uint8_t *) key & 1;

	(void) ah;
	if (rdmx_iov_len(local, local_cnt) != rdmx_iov_len(remote, remote_cnt))
		__builtin_trap();
	if (fd->read_cnt == FUZZ_DEV_READS)
		return -FI_EAGAIN;
	for (size_t i = 0; !refused && i < local_cnt; i++)
		memset(local[i].iov_base, 0xa5, local[i].iov_len);
	fd->reads[fd->read_cnt] = wr_id;
	fd->read_status[fd->read_cnt++] = refused ? RDMX_DEV_ACCESS : RDMX_DEV_OK;
	return 0;
}

bool fuzz_dev_inject(struct rdmx_dev *dev, const void *src, const void *buf,
		     size_t len)
{
	struct fuzz_dev *fd = fuzz_dev(dev);
	struct fuzz_dev_dgram *d;

	if (fd->rx_cnt == FUZZ_DEV_RXQ)
		return false;
	d = &fd->rxq[fd->rx_cnt];
	/* One byte more, so that an empty datagram is an allocation too. */
	d->bytes = malloc(len + 1);
	if (!d->bytes)
		return false;
	memcpy(d->bytes, buf, len);
	memcpy(&d->src, src, sizeof(d->src));
	d->len = len;
	fd->rx_cnt++;
	return true;
}

/* The handle of canonical address src, or NULL. */
static struct rdmx_dgram_ah *fuzz_dev_ah(struct fuzz_dev *fd, const void *src)
{
	uint64_t val;

	if (!rdmx_hash_find(&fd->dg.ah_map, src, &val))
		return NULL;
	return (struct rdmx_dgram_ah *) (uintptr_t) val;
}

uint64_t fuzz_dev_tag(struct rdmx_dev *dev, const void *src)
{
	struct fuzz_dev *fd = fuzz_dev(dev);
	struct rdmx_dgram_ah *ah = fuzz_dev_ah(fd, src);

	return ah ? ah->srd.local_tag :
	       rdmx_swsrd_cookie(&fd->dg.srd, src, fuzz_dev_ops.addr_size);
}

bool fuzz_dev_tx_state(struct rdmx_dev *dev, const void *src, uint32_t *epoch,
		       uint32_t *snd_nxt)
{
	struct rdmx_dgram_ah *ah = fuzz_dev_ah(fuzz_dev(dev), src);

	if (!ah)
		return false;
	*epoch = ah->srd.tx_epoch;
	*snd_nxt = ah->srd.snd_nxt;
	return true;
}

uint64_t fuzz_dev_sent(struct rdmx_dev *dev)
{
	return fuzz_dev(dev)->sent;
}

const struct rdmx_dev_ops fuzz_dev_ops = {
	.name = "fuzz",
	.addr_size = sizeof(union rdmx_udp_addr),
	.addr_format = rdmx_udp_addr_format,
	.addr_canon = rdmx_udp_addr_check,
	.addr_len = rdmx_udp_addr_size,
	.addr_str = rdmx_udp_addr_str,
	.resolve = rdmx_udp_resolve,
	.domains = fuzz_dev_domains,
	.open = fuzz_dev_open,
	.close = fuzz_dev_close,
	.getname = fuzz_dev_getname,
	.ah_create = rdmx_dgram_ah_create,
	.ah_destroy = rdmx_dgram_ah_destroy,
	.ah_reset = rdmx_dgram_ah_reset,
	.post_send = fuzz_dev_post_send,
	.post_recv = rdmx_dgram_post_recv,
	.poll_cq = fuzz_dev_poll_cq,
	.read_expose = fuzz_dev_read_expose,
	.read_revoke = fuzz_dev_read_revoke,
	.post_read = fuzz_dev_post_read,
};
