/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the swsrd host of an unreliable datagram device (see
 * rdmx_dgram.h): the part of the udp and verbs devices that is not about
 * their sockets or queue pairs.
 */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_dgram.h"

static struct rdmx_dgram *rdmx_dgram(struct rdmx_dev *dev)
{
	return rdmx_container_of(dev, struct rdmx_dgram, dev);
}

static struct rdmx_dgram_ah *rdmx_dgram_ah(struct rdmx_ah *ah)
{
	return rdmx_container_of(ah, struct rdmx_dgram_ah, ah);
}

static int rdmx_dgram_xmit(void *ctx, struct rdmx_swsrd_peer *peer, unsigned path,
			   const struct iovec *iov, size_t iov_cnt)
{
	struct rdmx_dgram *dg = ctx;

	return dg->ops->xmit(dg, rdmx_container_of(peer, struct rdmx_dgram_ah, srd),
			     path, iov, iov_cnt);
}

/*
 * A post is reported once its last packet is done: a failure other than
 * RNR before RNR, with the payload before the first packet that failed,
 * from which the caller posts it again.
 */
static void rdmx_dgram_done(void *ctx, struct rdmx_swsrd_send *srd, unsigned pkt,
			    enum rdmx_dev_status status)
{
	struct rdmx_dgram *dg = ctx;
	struct rdmx_dgram_send *send = rdmx_container_of(srd, struct rdmx_dgram_send, srd);

	dg->pkts_out--;
	if (status != RDMX_DEV_OK) {
		send->fail_off = RDMX_MIN(send->fail_off, pkt * srd->seg_len);
		if (send->status == RDMX_DEV_OK || send->status == RDMX_DEV_RNR)
			send->status = status;
	}
	if (--send->left)
		return;
	dg->done[dg->done_tail++ % dg->done_cap] = send;
}

static const struct rdmx_swsrd_ops rdmx_dgram_srd_ops = {
	.xmit = rdmx_dgram_xmit,
	.done = rdmx_dgram_done,
};

/* ah_map keys: the address inside the handle each value points at. */
static const void *rdmx_dgram_ah_key(const struct rdmx_hash *hash, uint64_t val)
{
	(void) hash;
	return ((const struct rdmx_dgram_ah *) (uintptr_t) val)->addr;
}

/* Frees a handle already out of the map and the list. */
static void rdmx_dgram_ah_free(struct rdmx_dgram *dg, struct rdmx_dgram_ah *ah)
{
	if (dg->last_sender == ah)
		dg->last_sender = NULL;
	rdmx_swsrd_peer_destruct(&dg->srd, &ah->srd);
	if (dg->ops->raw_destroy)
		dg->ops->raw_destroy(dg, ah);
	free(ah);
}

/*
 * Finds the handle of a canonical address, making one if asked, whose
 * first tag is tag (0: random).
 */
static struct rdmx_dgram_ah *rdmx_dgram_ah_get(struct rdmx_dgram *dg,
					       const void *addr, bool create,
					       uint64_t tag, int *err)
{
	struct rdmx_dgram_ah *ah;
	uint64_t val;

	if (rdmx_hash_find(&dg->ah_map, addr, &val))
		return (struct rdmx_dgram_ah *) (uintptr_t) val;
	if (!create)
		return NULL;
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		*err = -FI_ENOMEM;
		return NULL;
	}
	memcpy(ah->addr, addr, dg->dev.ops->addr_size);
	*err = dg->ops->raw_create ? dg->ops->raw_create(dg, ah) : 0;
	if (*err) {
		free(ah);
		return NULL;
	}
	*err = rdmx_hash_insert(&dg->ah_map, ah->addr, (uintptr_t) ah);
	if (*err) {
		if (dg->ops->raw_destroy)
			dg->ops->raw_destroy(dg, ah);
		free(ah);
		return NULL;
	}
	rdmx_swsrd_peer_construct(&dg->srd, &ah->srd, ah, tag);
	rdmx_dlist_insert_tail(&dg->ahs, &ah->link);
	return ah;
}

/*
 * Frees the handle made for an unknown sender that nothing uses, that
 * has nothing in flight and that was heard from least recently; false
 * when there is none. Bounds what a host sending from many addresses can
 * make us keep.
 */
static bool rdmx_dgram_evict_anon(struct rdmx_dgram *dg)
{
	struct rdmx_dlist *it;

	rdmx_dlist_foreach(&dg->ahs, it) {
		struct rdmx_dgram_ah *ah = rdmx_container_of(it, struct rdmx_dgram_ah, link);

		if (!ah->anon || ah->refs || ah->srd.active)
			continue;
		rdmx_dlist_remove(&ah->link);
		rdmx_hash_remove(&dg->ah_map, ah->addr);
		rdmx_dgram_ah_free(dg, ah);
		dg->anon_cnt--;
		return true;
	}
	return false;
}

int rdmx_dgram_ah_create(struct rdmx_dev *dev, const void *canon,
			 struct rdmx_ah **ah_p)
{
	struct rdmx_dgram *dg = rdmx_dgram(dev);
	struct rdmx_dgram_ah *ah;
	int ret = 0;

	/*
	 * A datagram endpoint makes a handle per send (rdmx_ud.c): those
	 * nothing uses are bounded as strangers' are, least recently used
	 * evicted first.
	 */
	if (dg->unreliable && dg->anon_cnt >= RDMX_DGRAM_ANON_MAX)
		(void) rdmx_dgram_evict_anon(dg);
	ah = rdmx_dgram_ah_get(dg, canon, true, 0, &ret);
	if (!ah)
		return ret;
	rdmx_dlist_remove(&ah->link);
	rdmx_dlist_insert_tail(&dg->ahs, &ah->link);
	if (ah->anon) {
		/* The rdm layer knows this sender now: no longer evictable. */
		ah->anon = false;
		dg->anon_cnt--;
	}
	ah->refs++;
	*ah_p = &ah->ah;
	return 0;
}

void rdmx_dgram_ah_destroy(struct rdmx_dev *dev, struct rdmx_ah *ah)
{
	struct rdmx_dgram *dg = rdmx_dgram(dev);
	struct rdmx_dgram_ah *dah = rdmx_dgram_ah(ah);

	/*
	 * The reliability state outlives the handle: the peer keeps
	 * counting. Without reliability nothing does.
	 */
	if (--dah->refs || (!dah->stranger && !dg->unreliable))
		return;
	/* A stranger the rdm layer let go is bounded and evicted again. */
	dah->anon = true;
	dg->anon_cnt++;
}

void rdmx_dgram_ah_reset(struct rdmx_dev *dev, struct rdmx_ah *ah)
{
	rdmx_swsrd_peer_reset(&rdmx_dgram(dev)->srd, &rdmx_dgram_ah(ah)->srd);
}

void rdmx_dgram_ah_peer(struct rdmx_dev *dev, struct rdmx_ah *ah, unsigned flags)
{
	struct rdmx_swsrd_peer *peer = &rdmx_dgram_ah(ah)->srd;

	rdmx_swsrd_peer_window(peer, flags & RDMX_DEV_PEER_WIDE);
	rdmx_swsrd_peer_paths(&rdmx_dgram(dev)->srd, peer, flags & RDMX_DEV_PEER_PATHS);
}

/* Answers hdr from the unknown sender at src with its cookie, or not at all. */
static void rdmx_dgram_challenge(struct rdmx_dgram *dg, const void *src,
				 const struct rdmx_srd_hdr *hdr, uint64_t cookie,
				 uint64_t now)
{
	struct rdmx_wire_srd chal;
	struct iovec iov = { &chal, sizeof(chal) };

	dg->dev.stats.rx_unauth++;
	if (rdmx_swsrd_challenge(&dg->srd, hdr, cookie, now, &chal))
		(void) dg->ops->xmit_to(dg, src, &iov, 1);
}

/*
 * The handle whose session tag a datagram from src carries (hdr->dst_tag)
 * if it is not src's own and src is of that peer's host: the peer sent
 * it by another of its paths. NULL otherwise. The tag is drawn at
 * random per session and learnt only by receiving at the peer's own
 * address, so a sender off the path cannot forge it.
 */
static struct rdmx_dgram_ah *rdmx_dgram_ah_other_path(struct rdmx_dgram *dg,
						      const void *src,
						      const struct rdmx_srd_hdr *hdr)
{
	struct rdmx_swsrd_peer *peer;
	struct rdmx_dgram_ah *ah;

	if (!dg->ops->same_host || !hdr->dst_tag ||
	    !(peer = rdmx_swsrd_peer_by_tag(&dg->srd, hdr->dst_tag)))
		return NULL;
	ah = rdmx_container_of(peer, struct rdmx_dgram_ah, srd);
	if (!memcmp(ah->addr, src, dg->dev.ops->addr_size) ||
	    !dg->ops->same_host(dg, ah->addr, src))
		return NULL;
	dg->dev.stats.rx_other_path++;
	return ah;
}

/*
 * The handle of a datagram's sender (its swsrd header hdr), made if
 * needed; NULL to drop it. Datagrams mostly come in runs from one sender:
 * the last one is checked before the map. A sender nobody knows gets a
 * handle only once its packet carries the tag we offered it (its cookie);
 * until then it is challenged without state, where the device can.
 */
static struct rdmx_dgram_ah *rdmx_dgram_ah_sender(struct rdmx_dgram *dg,
						  const void *src,
						  const struct rdmx_srd_hdr *hdr,
						  uint64_t now)
{
	struct rdmx_dgram_ah *ah = dg->last_sender;
	size_t addr_size = dg->dev.ops->addr_size;
	uint64_t cookie;
	int ret;

	if (ah && !memcmp(ah->addr, src, addr_size))
		return ah;
	ah = rdmx_dgram_ah_get(dg, src, false, 0, NULL);
	if (ah || (ah = rdmx_dgram_ah_other_path(dg, src, hdr))) {
		/* Most recently heard last: eviction takes the first. */
		rdmx_dlist_remove(&ah->link);
		rdmx_dlist_insert_tail(&dg->ahs, &ah->link);
	} else {
		cookie = rdmx_swsrd_cookie(&dg->srd, src, addr_size);
		if (hdr->dst_tag != cookie && dg->ops->xmit_to) {
			rdmx_dgram_challenge(dg, src, hdr, cookie, now);
			return NULL;
		}
		if ((dg->anon_cnt >= RDMX_DGRAM_ANON_MAX && !rdmx_dgram_evict_anon(dg)) ||
		    !(ah = rdmx_dgram_ah_get(dg, src, true, cookie, &ret))) {
			dg->dev.stats.rx_dropped++;
			return NULL;
		}
		ah->stranger = true;
		ah->anon = true;
		dg->anon_cnt++;
	}
	dg->last_sender = ah;
	return ah;
}

/*
 * A datagram endpoint's send: one datagram with an UNREL header, done
 * once the device took it. Whether it arrives nobody will know.
 */
static int rdmx_dgram_send_unrel(struct rdmx_dgram *dg, struct rdmx_dgram_ah *ah,
				 const struct iovec *iov, size_t iov_cnt,
				 struct rdmx_dgram_send *send)
{
	const struct rdmx_srd_hdr hdr = { .type = RDMX_SRD_UNREL };
	struct iovec all[RDMX_DEV_SGE_MAX + 1];
	struct rdmx_wire_srd wire;
	int ret;

	rdmx_wire_srd_encode(&wire, &hdr);
	all[0] = (struct iovec) { &wire, sizeof(wire) };
	memcpy(all + 1, iov, iov_cnt * sizeof(*iov));
	ret = dg->ops->xmit(dg, ah, 0, all, iov_cnt + 1);
	if (!ret)
		rdmx_dgram_done(dg, &send->srd, 0, RDMX_DEV_OK);
	return ret;
}

/*
 * A datagram endpoint's receive (rdmx_dgram_rx's arguments): only UNREL
 * datagrams, each whole in a posted buffer, else dropped. Nothing is
 * made for the sender, who proved nothing: its handle if one exists.
 */
static bool rdmx_dgram_rx_unrel(struct rdmx_dgram *dg, const struct rdmx_srd_hdr *hdr,
				size_t len, const void *src,
				const struct rdmx_dgram_buf *buf, bool truncated,
				struct rdmx_dev_cqe *cqe)
{
	struct rdmx_dgram_ah *ah;
	uint8_t *keep;

	/* With no buffer the device read only the header: not a malformed one. */
	if (hdr->type == RDMX_SRD_UNREL && !buf) {
		dg->dev.stats.rx_dropped++;
		return false;
	}
	if (hdr->type != RDMX_SRD_UNREL || truncated) {
		dg->dev.stats.rx_malformed++;
		return false;
	}
	keep = dg->rx_srcs[dg->rx_src_next++ % dg->rq_size];
	memcpy(keep, src, dg->dev.ops->addr_size);
	ah = rdmx_dgram_ah_get(dg, src, false, 0, NULL);
	cqe->wr_id = buf->wr_id;
	cqe->op = RDMX_DEV_OP_RECV;
	cqe->status = RDMX_DEV_OK;
	cqe->len = (uint32_t) (len - sizeof(struct rdmx_wire_srd));
	cqe->src_ah = ah ? &ah->ah : NULL;
	cqe->src_addr = keep;
	cqe->data = NULL;
	return true;
}

/*
 * A send of pkts packets from the pool, its payload iov, or NULL when the
 * device holds sq_size packets already (-FI_EAGAIN).
 */
static struct rdmx_dgram_send *rdmx_dgram_send_new(struct rdmx_dgram *dg,
						   const struct iovec *iov, size_t iov_cnt,
						   size_t pkts, uint64_t wr_id, unsigned flags)
{
	struct rdmx_dgram_send *send;

	/* A send done is the pool's again once reported: either may be short. */
	if (dg->pkts_out + pkts > dg->send_pool.count ||
	    !(send = rdmx_pool_alloc(&dg->send_pool)))
		return NULL;
	memcpy(send->srd.iov, iov, iov_cnt * sizeof(*iov));
	send->srd.iov_cnt = iov_cnt;
	send->srd.pkts = (uint16_t) pkts;
	send->srd.seg_len = 0;
	send->srd.wr_id = wr_id;
	send->srd.awaited = flags & RDMX_DEV_SEND_AWAITED;
	send->left = (uint32_t) pkts;
	send->status = RDMX_DEV_OK;
	send->fail_off = UINT32_MAX;
	dg->pkts_out += pkts;
	return send;
}

/* Gives an unsent send back. */
static void rdmx_dgram_send_drop(struct rdmx_dgram *dg, struct rdmx_dgram_send *send)
{
	dg->pkts_out -= send->left;
	rdmx_pool_release(&dg->send_pool, send);
}

int rdmx_dgram_post_send(struct rdmx_dev *dev, struct rdmx_ah *ah,
			 const struct iovec *iov, size_t iov_cnt,
			 uint64_t wr_id, unsigned flags)
{
	struct rdmx_dgram *dg = rdmx_dgram(dev);
	struct rdmx_dgram_send *send;
	int ret;

	if (iov_cnt > RDMX_DEV_SGE_MAX || rdmx_iov_len(iov, iov_cnt) > dev->caps.mtu)
		return -FI_EINVAL;
	send = rdmx_dgram_send_new(dg, iov, iov_cnt, 1, wr_id, flags);
	if (!send)
		return -FI_EAGAIN;
	if (dg->unreliable) {
		ret = rdmx_dgram_send_unrel(dg, rdmx_dgram_ah(ah), iov, iov_cnt, send);
		if (ret)
			rdmx_dgram_send_drop(dg, send);
		return ret;
	}
	ret = rdmx_swsrd_send(&dg->srd, &rdmx_dgram_ah(ah)->srd, &send->srd,
			      flags & RDMX_DEV_SEND_MORE);
	if (ret)
		rdmx_dgram_send_drop(dg, send);
	return ret;
}

int rdmx_dgram_post_send_segs(struct rdmx_dev *dev, struct rdmx_ah *ah,
			      const struct iovec *iov, size_t iov_cnt, size_t seg_len,
			      size_t off_at, uint64_t wr_id, unsigned flags)
{
	struct rdmx_dgram *dg = rdmx_dgram(dev);
	struct rdmx_dgram_send *send;
	size_t len, cnt;
	int ret;

	if (dg->unreliable || !iov_cnt || iov_cnt > RDMX_DEV_SGE_MAX || !seg_len ||
	    iov[0].iov_len > RDMX_DEV_SEG_HDR_MAX || off_at % sizeof(uint64_t) ||
	    off_at + sizeof(uint64_t) > iov[0].iov_len ||
	    iov[0].iov_len + seg_len > dev->caps.mtu)
		return -FI_EINVAL;
	len = rdmx_iov_len(iov + 1, iov_cnt - 1);
	cnt = (len + seg_len - 1) / seg_len;
	if (!cnt || cnt > rdmx_dev_segs_max(dev))
		return -FI_EINVAL;
	send = rdmx_dgram_send_new(dg, iov, iov_cnt, cnt, wr_id, flags);
	if (!send)
		return -FI_EAGAIN;
	memcpy(send->hdr, iov[0].iov_base, iov[0].iov_len);
	send->srd.iov[0].iov_base = send->hdr;
	send->srd.seg_len = (uint32_t) seg_len;
	send->srd.off_at = (uint32_t) off_at;
	/* Only a peer's first send can fail (its window's memory). */
	ret = rdmx_swsrd_send(&dg->srd, &rdmx_dgram_ah(ah)->srd, &send->srd,
			      flags & RDMX_DEV_SEND_MORE);
	if (ret) {
		rdmx_dgram_send_drop(dg, send);
		return ret;
	}
	dev->stats.tx_segs += cnt;
	return 0;
}

int rdmx_dgram_post_recv(struct rdmx_dev *dev, void *buf, size_t len,
			 uint64_t wr_id)
{
	struct rdmx_dgram *dg = rdmx_dgram(dev);

	if (dg->rq_cnt == dg->rq_size)
		return -FI_EAGAIN;
	dg->rq[dg->rq_cnt++] = (struct rdmx_dgram_buf) { wr_id, buf, len };
	return 0;
}

bool rdmx_dgram_rx(struct rdmx_dgram *dg, const struct rdmx_wire_srd *hdr,
		   size_t len, const void *src, const struct rdmx_dgram_buf *buf,
		   bool truncated, uint64_t now, struct rdmx_dev_cqe *cqe)
{
	struct rdmx_srd_hdr srd_hdr;
	struct rdmx_dgram_ah *ah;
	enum rdmx_srd_room room;

	if (rdmx_wire_srd_decode(hdr, len, &srd_hdr) ||
	    (!dg->unreliable && srd_hdr.type == RDMX_SRD_UNREL)) {
		dg->dev.stats.rx_malformed++;
		return false;
	}
	if (dg->unreliable)
		return rdmx_dgram_rx_unrel(dg, &srd_hdr, len, src, buf, truncated, cqe);
	ah = rdmx_dgram_ah_sender(dg, src, &srd_hdr, now);
	if (!ah)
		return false;
	/*
	 * Not the tag of the handle at its address (one left from an earlier
	 * owner of the port): it may be another peer's, sent by another path.
	 */
	if (!rdmx_swsrd_authentic(&ah->srd, &srd_hdr)) {
		struct rdmx_dgram_ah *other = rdmx_dgram_ah_other_path(dg, src, &srd_hdr);

		ah = other ? other : ah;
	}
	/* Buffers all have the device MTU: one too small means too big. */
	room = !buf ? RDMX_SRD_ROOM_NONE :
	       truncated ? RDMX_SRD_ROOM_SHORT : RDMX_SRD_ROOM_BUF;
	if (room == RDMX_SRD_ROOM_BUF && len > sizeof(*hdr) && dg->dev.admit.fn &&
	    rdmx_swsrd_authentic(&ah->srd, &srd_hdr) &&
	    !dg->dev.admit.fn(dg->dev.admit.ctx, &ah->ah, buf->buf, len - sizeof(*hdr)))
		room = RDMX_SRD_ROOM_NONE;
	if (!rdmx_swsrd_recv(&dg->srd, &ah->srd, &srd_hdr, len - sizeof(*hdr), room, now))
		return false;
	if (!buf) {
		/* Only an empty DATA gets here without a buffer: nothing to hand up. */
		dg->dev.stats.rx_malformed++;
		return false;
	}
	cqe->wr_id = buf->wr_id;
	cqe->op = RDMX_DEV_OP_RECV;
	cqe->status = RDMX_DEV_OK;
	cqe->len = (uint32_t) (len - sizeof(*hdr));
	cqe->src_ah = &ah->ah;
	cqe->src_addr = ah->addr;
	cqe->data = NULL;
	return true;
}

int rdmx_dgram_done_keep(const struct rdmx_dgram *dg, int max)
{
	return (int) RDMX_MIN(dg->done_tail - dg->done_head, (uint64_t) max / 2);
}

int rdmx_dgram_report(struct rdmx_dgram *dg, struct rdmx_dev_cqe *cqe, int max)
{
	int done = 0;

	while (done < max && dg->done_head != dg->done_tail) {
		struct rdmx_dgram_send *send = dg->done[dg->done_head++ % dg->done_cap];

		cqe[done].wr_id = send->srd.wr_id;
		cqe[done].status = send->status;
		cqe[done].len = send->status != RDMX_DEV_OK ? send->fail_off : 0;
		rdmx_pool_release(&dg->send_pool, send);
		cqe[done].op = RDMX_DEV_OP_SEND;
		cqe[done].src_ah = NULL;
		cqe[done].src_addr = NULL;
		done++;
	}
	return done;
}

int rdmx_dgram_wait_arm(const struct rdmx_dgram *dg, uint64_t *due_p)
{
	if (dg->done_head != dg->done_tail)
		return -FI_EAGAIN;
	*due_p = RDMX_MIN(*due_p, rdmx_swsrd_due(&dg->srd));
	return 0;
}

int rdmx_dgram_construct(struct rdmx_dgram *dg, const struct rdmx_dev_ops *dev_ops,
			 const struct rdmx_dgram_ops *ops,
			 const struct rdmx_dev_attr *attr, unsigned paths)
{
	struct rdmx_swsrd_cfg cfg;
	int ret;

	dg->dev.ops = dev_ops;
	dg->ops = ops;
	dg->rq_size = attr->rq_size;
	dg->done_cap = attr->sq_size;
	dg->rq = calloc(dg->rq_size, sizeof(*dg->rq));
	dg->done = calloc(dg->done_cap, sizeof(*dg->done));
	dg->unreliable = attr->unreliable;
	if (dg->unreliable)
		dg->rx_srcs = calloc(dg->rq_size, sizeof(*dg->rx_srcs));
	if (!dg->rq || !dg->done || (dg->unreliable && !dg->rx_srcs)) {
		ret = -FI_ENOMEM;
		goto err_free;
	}
	ret = rdmx_pool_construct(&dg->send_pool, sizeof(struct rdmx_dgram_send),
				  attr->sq_size);
	if (ret)
		goto err_free;
	ret = rdmx_hash_construct(&dg->ah_map, dev_ops->addr_size, rdmx_dgram_ah_key);
	if (ret)
		goto err_destruct_pool;
	rdmx_dlist_init(&dg->ahs);
	rdmx_swsrd_cfg_default(&cfg);
	cfg.paths = paths;
	cfg.acks_at_poll_end = ops->xmit_at_poll_end;
	ret = rdmx_swsrd_construct(&dg->srd, &rdmx_dgram_srd_ops, dg, &cfg,
				   (uint32_t) rdmx_random64(), &dg->dev.stats);
	if (ret)
		goto err_destruct_map;
	return 0;

err_destruct_map:
	rdmx_hash_destruct(&dg->ah_map);
err_destruct_pool:
	rdmx_pool_destruct(&dg->send_pool);
err_free:
	free(dg->rq);
	free(dg->done);
	free(dg->rx_srcs);
	return ret;
}

void rdmx_dgram_destruct(struct rdmx_dgram *dg)
{
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(&dg->ahs)))
		rdmx_dgram_ah_free(dg, rdmx_container_of(it, struct rdmx_dgram_ah, link));
	rdmx_swsrd_destruct(&dg->srd);
	rdmx_hash_destruct(&dg->ah_map);
	rdmx_pool_destruct(&dg->send_pool);
	free(dg->rq);
	free(dg->done);
	free(dg->rx_srcs);
}
