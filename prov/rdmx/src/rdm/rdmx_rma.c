/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: RMA emulated over messages (docs/protocol.md, RMA). An RMA write
 * travels as a message flagged RDMX_PKT_RMA through the eager, medium or
 * long protocol, in its sender's order; at the target it lands, instead
 * of in a matched receive, in the bytes of the region its key names,
 * checked at its start and again before each packet is placed, so that
 * a region closed meanwhile is never written after its fi_close
 * returned. A read is a request message the target answers with
 * messages flagged RDMX_PKT_RMA_RESP, its chunks, which land in order in
 * the read's buffers (see the answers below).
 * Every refusal goes back as a DACK with its FI_E* code: FI_EACCES for a
 * key no region has or one without the access, FI_EINVAL for bytes
 * outside the region, FI_EOPNOTSUPP for an endpoint without FI_RMA and
 * FI_REMOTE_WRITE (or FI_REMOTE_READ). With FI_RMA_EVENT the target counts
 * each write it took and each read it answered (FI_REMOTE_WRITE and
 * FI_REMOTE_READ counters).
 */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_atomic.h"
#include "rdmx_comp.h"
#include "rdmx_conn.h"
#include "rdmx_dack.h"
#include "rdmx_ep.h"
#include "rdmx_keys.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_rx.h"
#include "rdmx_tx.h"

/* What an endpoint must offer to be the target of access by cap (FI_RMA, FI_ATOMIC). */
static int rdmx_rma_target_cap(const struct rdmx_ep *ep, uint64_t cap, uint64_t access)
{
	uint64_t caps = ep->caps;

	return (caps & cap) && (caps & access) == access && ep->keys ? 0 : -FI_EOPNOTSUPP;
}

/* The len bytes at addr of the region with key, if access by cap is granted. */
static int rdmx_rma_region_of(const struct rdmx_ep *ep, uint64_t cap, uint64_t key,
			      uint64_t addr, size_t len, uint64_t access, uint8_t **buf)
{
	int ret = rdmx_rma_target_cap(ep, cap, access);

	return ret ? ret : rdmx_keys_find(ep->keys, key, addr, len, access, buf);
}

/* rdmx_rma_region_of for RMA. */
static int rdmx_rma_region(const struct rdmx_ep *ep, uint64_t key, uint64_t addr,
			   size_t len, uint64_t access, uint8_t **buf)
{
	return rdmx_rma_region_of(ep, FI_RMA, key, addr, len, access, buf);
}

/* An rxe standing for RMA (not on any queue), in rxe: its bytes are iov. */
static struct rdmx_rxe *rdmx_rma_rxe_init(struct rdmx_rxe *rxe, enum rdmx_rma_op op,
					  void *buf, size_t len)
{
	*rxe = (struct rdmx_rxe) {
		.iov = { { .iov_base = buf, .iov_len = len } },
		.iov_cnt = 1,
		.rma = op,
	};
	return rxe;
}

/* The read of peer an answer names, still waiting for it; else NULL. */
static struct rdmx_txe *rdmx_rma_read_of(struct rdmx_ep *ep, struct rdmx_peer *peer,
					 const struct rdmx_pkt *pkt)
{
	struct rdmx_txe *txe = pkt->tag < ep->txe_pool.count ?
			       rdmx_pool_at(&ep->txe_pool, (size_t) pkt->tag) : NULL;

	if (!txe || !txe->in_use || txe->deferred || txe->peer != peer ||
	    !rdmx_tx_fetches(txe) || txe->level != RDMX_TX_DELIVERY_AWAITED ||
	    txe->read_fail || txe->err || (uint64_t) txe->msg_id != pkt->data)
		return NULL;
	return txe;
}

struct rdmx_rxe *rdmx_rma_rxe(struct rdmx_ep *ep, struct rdmx_peer *peer,
			      const struct rdmx_pkt *pkt, struct rdmx_rxe *rxe, int *err)
{
	struct rdmx_txe *read;
	uint8_t *buf;

	if (pkt->flags & RDMX_PKT_RMA) {
		*err = -rdmx_rma_region(ep, pkt->tag, pkt->rma_addr, pkt->msg_len,
					FI_REMOTE_WRITE, &buf);
		if (*err)
			return NULL;
		rdmx_rma_rxe_init(rxe, RDMX_RMA_WRITE, buf, pkt->msg_len);
		rxe->rma_key = pkt->tag;
		rxe->rma_addr = pkt->rma_addr;
		return rxe;
	}
	/* The next chunk: not past the read's end; empty only for a read of none. */
	read = peer ? rdmx_rma_read_of(ep, peer, pkt) : NULL;
	if (!read || pkt->msg_len > read->read_len - read->read_next ||
	    (!pkt->msg_len && read->read_len)) {
		ep->stats.rx_malformed++;
		*err = FI_EINVAL;
		return NULL;
	}
	rdmx_rma_rxe_init(rxe, RDMX_RMA_RESP, NULL, 0);
	/* A read's bytes land in its buffers, an atomic's old values in its results. */
	if (read->rma_op == RDMX_RMA_ATOMIC)
		rxe->iov_cnt = rdmx_iov_slice(rxe->iov, read->result, read->result_cnt,
					      read->read_next, pkt->msg_len);
	else
		rxe->iov_cnt = rdmx_iov_slice(rxe->iov, read->iov, read->iov_cnt,
					      read->read_next, pkt->msg_len);
	rxe->read = read;
	read->read_next += pkt->msg_len;
	read->read_busy++;
	*err = 0;
	return rxe;
}

/*
 * A chunk of read's answer ended: len bytes landed, or err. The read
 * ends once no chunk is landing, with its first error (its request's
 * too: rdmx_tx_advance waits for this) or every byte.
 */
static void rdmx_rma_read_landed(struct rdmx_ep *ep, struct rdmx_txe *read, size_t len,
				 int err)
{
	read->read_busy--;
	read->read_got += len;
	if (err && !read->read_fail)
		read->read_fail = err;
	if (!read->read_busy &&
	    (read->read_fail || read->err || read->read_got == read->read_len))
		rdmx_tx_delivered(ep, read, read->read_fail);
}

bool rdmx_rma_live(struct rdmx_ep *ep, const struct rdmx_rxe *rxe, size_t off, size_t len)
{
	uint8_t *buf;

	if (rxe->rma != RDMX_RMA_WRITE)
		return true;
	return !rdmx_rma_region(ep, rxe->rma_key, rxe->rma_addr + off, len, FI_REMOTE_WRITE,
				&buf) && buf == (uint8_t *) rxe->iov[0].iov_base + off;
}

void rdmx_rma_complete(struct rdmx_ep *ep, struct rdmx_rxe *rxe, size_t len, fi_addr_t src,
		       uint64_t data, uint32_t pkt_flags)
{
	struct rdmx_cq_entry entry = {
		.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
		.len = len,
		.data = data,
		.src = rdmx_peer_src_reported(src),
	};

	if (rxe->rma == RDMX_RMA_RESP) {
		rdmx_rma_read_landed(ep, rxe->read, len, 0);
		return;
	}
	if ((pkt_flags & RDMX_PKT_CQ_DATA) && ep->rx_comp)
		rdmx_recv_write_from(ep, &entry, src);
	else if ((ep->caps & FI_RMA_EVENT) && ep->rx_comp)
		rdmx_comp_count(ep->rx_comp, &entry);
	if (ep->caps & FI_RMA_EVENT)
		rdmx_keys_accessed(ep->keys, rxe->rma_key, FI_REMOTE_WRITE);
}

void rdmx_rma_fail(struct rdmx_ep *ep, struct rdmx_rxe *rxe, int err)
{
	if (rxe->rma == RDMX_RMA_RESP)
		rdmx_rma_read_landed(ep, rxe->read, 0, err);
}

void rdmx_rma_resp_lost(struct rdmx_ep *ep, struct rdmx_peer *peer, const struct rdmx_pkt *pkt,
			int err)
{
	struct rdmx_txe *read = peer ? rdmx_rma_read_of(ep, peer, pkt) : NULL;

	if (!read) {
		ep->stats.rx_malformed++;
		return;
	}
	read->read_fail = err;
	if (!read->read_busy)
		rdmx_tx_delivered(ep, read, err);
}

/*
 * Answers to peers' reads. A read is answered in chunks, each a message
 * small enough to go eager or medium (never long: nothing waits for the
 * reader's CTS), copied out of the region into one of the endpoint's
 * RDMX_RMA_CHUNK_BUFS buffers as it is sent. The region's key is checked
 * again for each chunk, and nothing refers to the region once a chunk
 * is copied, so fi_close(mr) has nothing to wait for. Answers take turns,
 * oldest first, a chunk each, for a buffer and a send entry; the
 * application's sends are never failed for them, nor they for the
 * application's. A reader that cannot take a chunk now (not connected,
 * in RNR backoff, its queue full) is passed over, not waited for, and
 * progress tries again. A peer has RDMX_RMA_PEER_ANSWERS at most with
 * chunks left to send (an answer whose last chunk went, or that was
 * refused, no longer counts: its reader may see the read end before the
 * chunk's send does, and post the next), the peers outside the AV
 * (anonymous: a forger may make several) RDMX_RMA_ANON_ANSWERS together
 * until their answers end: a read past that, or past the endpoint's
 * RDMX_RMA_ANSWERS, is refused FI_EAGAIN. A chunk that fails sends the reader a VOID (rdmx_tx_void); a
 * region closed meanwhile, a DACK with the key's refusal.
 */
#define RDMX_RMA_ANSWERS	256
#define RDMX_RMA_PEER_ANSWERS	64
#define RDMX_RMA_ANON_ANSWERS	64
#define RDMX_RMA_CHUNK_BUFS	8
#define RDMX_RMA_CHUNK_MAX	65536u
/* Readers passed over in one round of rdmx_rma_pump, at most. */
#define RDMX_RMA_PASSED_MAX	8

struct rdmx_rma_answer {
	struct rdmx_dlist	link;		/* on queue, or free */
	struct rdmx_peer	*peer;		/* NULL: its peer's session ended */
	uint64_t		key;
	uint64_t		addr;		/* of the next chunk */
	size_t			left;		/* bytes no chunk has taken yet */
	uint32_t		inflight;	/* chunks sent, not yet ended */
	bool			started;	/* a chunk went (a read of none
						   has one, empty) */
	bool			failed;		/* the reader was told */
	bool			anon;		/* counted in rdmx_rma_answers.anon */
	bool			counted;	/* in its peer's answers: chunks left */
	bool			fetched;	/* an atomic's: the bytes are result's,
						   and addr an offset into it */
	uint8_t			result[RDMX_ATOMIC_MAX_BYTES];
	uint32_t		read_id;	/* the read's send id: the tag */
	uint32_t		req_id;		/* its request's msg_id: the data */
	uint32_t		req_flags;	/* its request's packet flags */
};

struct rdmx_rma_answers {
	struct rdmx_rma_answer	slot[RDMX_RMA_ANSWERS];
	struct rdmx_dlist	free;
	struct rdmx_dlist	queue;		/* oldest first */
	uint8_t			*bufs[RDMX_RMA_CHUNK_BUFS];	/* free ones */
	size_t			nbufs;
	size_t			anon;		/* answers to anonymous peers */
	bool			pumping;	/* rdmx_rma_pump is running */
	uint8_t			mem[RDMX_RMA_CHUNK_BUFS][RDMX_RMA_CHUNK_MAX];
};

/* The endpoint's answers, made at the first read it answers; NULL: no memory. */
static struct rdmx_rma_answers *rdmx_rma_answers(struct rdmx_ep *ep)
{
	struct rdmx_rma_answers *ans = ep->answers;

	if (ans)
		return ans;
	ans = calloc(1, sizeof(*ans));
	if (!ans)
		return NULL;
	rdmx_dlist_init(&ans->free);
	rdmx_dlist_init(&ans->queue);
	for (size_t i = 0; i < RDMX_RMA_ANSWERS; i++)
		rdmx_dlist_insert_tail(&ans->free, &ans->slot[i].link);
	for (size_t i = 0; i < RDMX_RMA_CHUNK_BUFS; i++)
		ans->bufs[ans->nbufs++] = ans->mem[i];
	ep->answers = ans;
	return ans;
}

/* a has no chunk left to send: its reader may post another read. */
static void rdmx_rma_answer_sent(struct rdmx_rma_answer *a)
{
	if (a->counted && a->peer)
		a->peer->answers--;
	a->counted = false;
}

/* a is over: the remote read counted if it went whole, its slot freed. */
static void rdmx_rma_answer_end(struct rdmx_ep *ep, struct rdmx_rma_answer *a)
{
	struct rdmx_cq_entry entry = { .flags = FI_RMA | FI_REMOTE_READ };

	if (!a->failed && !a->fetched && a->peer && (ep->caps & FI_RMA_EVENT)) {
		if (ep->rx_comp)
			rdmx_comp_count(ep->rx_comp, &entry);
		rdmx_keys_accessed(ep->keys, a->key, FI_REMOTE_READ);
	}
	rdmx_rma_answer_sent(a);
	if (a->anon)
		ep->answers->anon--;
	rdmx_dlist_remove(&a->link);
	rdmx_dlist_insert_tail(&ep->answers->free, &a->link);
}

/* The reader is told a's read failed with err (a DACK); a sends no more. */
static void rdmx_rma_answer_refuse(struct rdmx_ep *ep, struct rdmx_rma_answer *a, int err)
{
	rdmx_dack_send(ep, a->peer, a->req_flags, a->req_id, a->read_id, err);
	a->failed = true;
	a->left = 0;
	rdmx_rma_answer_sent(a);
}

static void rdmx_rma_pump(struct rdmx_ep *ep);

/* txe->ended of a chunk: its buffer back, its answer on (or over). */
static void rdmx_rma_chunk_ended(struct rdmx_ep *ep, struct rdmx_txe *txe)
{
	struct rdmx_rma_answers *ans = ep->answers;
	struct rdmx_rma_answer *a = txe->owner;

	ans->bufs[ans->nbufs++] = txe->iov[0].iov_base;
	a->inflight--;
	if (txe->err) {
		/* The reader was sent a VOID, or its session is over. */
		a->failed = true;
		a->left = 0;
		rdmx_rma_answer_sent(a);
	}
	if (!a->inflight && !a->left)
		rdmx_rma_answer_end(ep, a);
	if (!ans->pumping)
		rdmx_rma_pump(ep);
}

/* What rdmx_rma_chunk did. */
enum rdmx_rma_sent {
	RDMX_RMA_SENT,		/* a chunk, or the refusal that ends the answer */
	RDMX_RMA_PASS,		/* nothing: the reader cannot take one now */
	RDMX_RMA_STOP,		/* nothing: no send entry for anyone */
};

/*
 * Sends a's next chunk, copied into a free buffer: at most
 * RDMX_RMA_CHUNK_MAX bytes, and no more than an eager packet to the
 * reader or a medium message holds, so never by the long protocol.
 */
static enum rdmx_rma_sent rdmx_rma_chunk(struct rdmx_ep *ep, struct rdmx_rma_answer *a)
{
	struct rdmx_rma_answers *ans = ep->answers;
	struct rdmx_peer *peer = a->peer;
	struct iovec iov = { .iov_base = ans->bufs[ans->nbufs - 1] };
	struct rdmx_send_req req = {
		.iov = &iov,
		.iov_cnt = 1,
		.dest = peer->addr,
		.peer = peer,
		.tag = a->read_id,
		.data = a->req_id,
		.rma_op = RDMX_RMA_RESP,
		.rma_key = a->key,
		.rma_addr = a->addr,
		.ended = rdmx_rma_chunk_ended,
		.owner = a,
	};
	uint8_t *buf;
	int err;

	if (ep->txe_pool.in_use == ep->txe_pool.count)
		return RDMX_RMA_STOP;
	/* Connected (so its packet size is known), with nothing deferred. */
	if (rdmx_rnr_blocked(peer) || !rdmx_conn_ready(ep, peer))
		return RDMX_RMA_PASS;
	iov.iov_len = RDMX_MIN(a->left, RDMX_MIN(RDMX_RMA_CHUNK_MAX, RDMX_MAX(ep->medium_max,
				peer->pkt_max - sizeof(struct rdmx_wire_eager))));
	if (a->fetched) {
		buf = a->result + a->addr;
		err = 0;
	} else {
		err = -rdmx_rma_region(ep, a->key, a->addr, iov.iov_len, FI_REMOTE_READ, &buf);
	}
	if (err) {
		rdmx_rma_answer_refuse(ep, a, err);
		return RDMX_RMA_SENT;
	}
	memcpy(iov.iov_base, buf, iov.iov_len);
	err = (int) -rdmx_send(ep, &req);
	if (err == FI_EAGAIN)
		return RDMX_RMA_PASS;
	/* An atomic's old values lost: it was applied all the same (FI_EIO). */
	if (err) {
		rdmx_rma_answer_refuse(ep, a, a->fetched ? FI_EIO : err);
		return RDMX_RMA_SENT;
	}
	ans->nbufs--;
	a->inflight++;
	a->started = true;
	a->addr += iov.iov_len;
	a->left -= iov.iov_len;
	if (!a->left)
		rdmx_rma_answer_sent(a);
	return RDMX_RMA_SENT;
}

/* Whether a has a chunk to send: bytes left, or the empty one of a read of none. */
static bool rdmx_rma_has_chunk(const struct rdmx_rma_answer *a)
{
	return a->peer && !a->failed && (a->left || !a->started);
}

/* Whether peer is one of the n in passed. */
static bool rdmx_rma_passed(struct rdmx_peer *const *passed, size_t n,
			    const struct rdmx_peer *peer)
{
	for (size_t i = 0; i < n; i++)
		if (passed[i] == peer)
			return true;
	return false;
}

/*
 * Sends chunks while buffers are free: one for each answer in turn,
 * oldest first, until none is left to send. A reader that cannot take
 * one is passed over for the round (ep->rma_stalled: progress comes
 * back); with no send entry left, or too many passed over, it stops.
 */
static void rdmx_rma_pump(struct rdmx_ep *ep)
{
	struct rdmx_peer *passed[RDMX_RMA_PASSED_MAX];
	struct rdmx_rma_answers *ans = ep->answers;
	struct rdmx_dlist *it, *next;
	bool sent = true, stop = false;
	size_t npassed = 0;

	/* At close, peers go one by one: none is sent another chunk. */
	if (!ep->enabled)
		return;
	ans->pumping = true;
	ep->rma_stalled = false;
	while (sent && !stop && ans->nbufs) {
		sent = false;
		for (it = ans->queue.next; it != &ans->queue && ans->nbufs && !stop; it = next) {
			struct rdmx_rma_answer *a = rdmx_container_of(it, struct rdmx_rma_answer, link);
			enum rdmx_rma_sent res;

			next = it->next;
			if (!rdmx_rma_has_chunk(a) || rdmx_rma_passed(passed, npassed, a->peer))
				continue;
			res = rdmx_rma_chunk(ep, a);
			if (res == RDMX_RMA_PASS)
				passed[npassed++] = a->peer;
			stop = res == RDMX_RMA_STOP || npassed == RDMX_RMA_PASSED_MAX;
			if (res != RDMX_RMA_SENT)
				continue;
			sent = true;
			if (!a->inflight && !a->left)
				rdmx_rma_answer_end(ep, a);
		}
	}
	ep->rma_stalled = stop || npassed;
	ans->pumping = false;
}

void rdmx_rma_progress(struct rdmx_ep *ep)
{
	if (!ep->answers->pumping)
		rdmx_rma_pump(ep);
}

void rdmx_rma_forget(struct rdmx_ep *ep, struct rdmx_peer *peer)
{
	struct rdmx_dlist *it, *next;

	if (!ep->answers)
		return;
	for (it = ep->answers->queue.next; it != &ep->answers->queue; it = next) {
		struct rdmx_rma_answer *a = rdmx_container_of(it, struct rdmx_rma_answer, link);

		next = it->next;
		if (a->peer != peer)
			continue;
		a->left = 0;
		if (!a->inflight) {
			rdmx_rma_answer_end(ep, a);
			continue;
		}
		/* Its chunks end later (their entries are the peer's too). */
		rdmx_rma_answer_sent(a);
		a->peer = NULL;
	}
}

void rdmx_rma_free(struct rdmx_ep *ep)
{
	free(ep->answers);
	ep->answers = NULL;
}

/* A new answer to peer's read request pkt, queued as *ap; 0 or a positive FI_E*. */
static int rdmx_rma_answer_new(struct rdmx_ep *ep, struct rdmx_peer *peer,
			       const struct rdmx_pkt *pkt, struct rdmx_rma_answer **ap)
{
	struct rdmx_rma_answers *ans = rdmx_rma_answers(ep);
	struct rdmx_rma_answer *a;

	if (!ans)
		return FI_ENOMEM;
	if (peer->answers == RDMX_RMA_PEER_ANSWERS || rdmx_dlist_empty(&ans->free) ||
	    (peer->anon && ans->anon == RDMX_RMA_ANON_ANSWERS))
		return FI_EAGAIN;
	a = rdmx_container_of(rdmx_dlist_pop_front(&ans->free), struct rdmx_rma_answer, link);
	*a = (struct rdmx_rma_answer) {
		.peer = peer,
		.key = pkt->tag,
		.addr = pkt->rma_addr,
		.left = pkt->rma_len,
		.read_id = pkt->tx_id,
		.req_id = pkt->msg_id,
		.req_flags = pkt->flags,
		.anon = peer->anon,
		.counted = true,
	};
	rdmx_dlist_insert_tail(&ans->queue, &a->link);
	peer->answers++;
	ans->anon += a->anon;
	*ap = a;
	return 0;
}

void rdmx_rma_read_req(struct rdmx_ep *ep, struct rdmx_peer *peer, const struct rdmx_pkt *pkt)
{
	struct rdmx_rma_answer *a;
	uint8_t *buf;
	int err;

	if (!peer)
		return;
	err = -rdmx_rma_region(ep, pkt->tag, pkt->rma_addr, pkt->rma_len, FI_REMOTE_READ, &buf);
	if (!err && pkt->rma_len > ep->max_msg_size)
		err = FI_EMSGSIZE;
	if (!err)
		err = rdmx_rma_answer_new(ep, peer, pkt, &a);
	if (err) {
		rdmx_dack_send(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id, err);
		return;
	}
	if (!ep->answers->pumping)
		rdmx_rma_pump(ep);
}

void rdmx_rma_atomic(struct rdmx_ep *ep, struct rdmx_peer *peer, const struct rdmx_pkt *pkt)
{
	enum fi_op op = (enum fi_op) pkt->atomic_op;
	size_t bytes = pkt->atomic_count * rdmx_atomic_size((enum fi_datatype)
							   pkt->atomic_datatype);
	bool fetch = pkt->flags & RDMX_PKT_RMA_READ;
	uint64_t access = op == FI_ATOMIC_READ ? FI_REMOTE_READ :
			  fetch ? FI_REMOTE_READ | FI_REMOTE_WRITE : FI_REMOTE_WRITE;
	struct rdmx_cq_entry entry = { .flags = FI_ATOMIC | FI_REMOTE_WRITE };
	struct rdmx_rma_answer *a = NULL;
	uint8_t *buf;
	int err;

	err = -rdmx_rma_region_of(ep, FI_ATOMIC, pkt->tag, pkt->rma_addr, bytes, access, &buf);
	if (!err && fetch)
		err = rdmx_rma_answer_new(ep, peer, pkt, &a);
	if (err) {
		rdmx_dack_send(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id, err);
		return;
	}
	/* Applied now, in the sender's message order, under the domain's lock. */
	rdmx_atomic_apply(op, (enum fi_datatype) pkt->atomic_datatype, buf,
			  op == FI_ATOMIC_READ ? NULL : pkt->payload,
			  op >= FI_CSWAP ? pkt->payload + bytes : NULL, a ? a->result : NULL,
			  pkt->atomic_count);
	/* FI_RMA_EVENT: a write if it changes, a read if it fetches, or both. */
	if ((ep->caps & FI_RMA_EVENT) && op != FI_ATOMIC_READ) {
		if (ep->rx_comp)
			rdmx_comp_count(ep->rx_comp, &entry);
		rdmx_keys_accessed(ep->keys, pkt->tag, FI_REMOTE_WRITE);
	}
	if ((ep->caps & FI_RMA_EVENT) && fetch) {
		entry.flags = FI_ATOMIC | FI_REMOTE_READ;
		if (ep->rx_comp)
			rdmx_comp_count(ep->rx_comp, &entry);
		rdmx_keys_accessed(ep->keys, pkt->tag, FI_REMOTE_READ);
	}
	if (!a) {
		rdmx_dack_send(ep, peer, pkt->flags, pkt->msg_id, pkt->tx_id, 0);
		return;
	}
	a->fetched = true;
	a->addr = 0;
	if (!ep->answers->pumping)
		rdmx_rma_pump(ep);
}
