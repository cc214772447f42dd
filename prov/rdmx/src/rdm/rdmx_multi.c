/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: FI_MULTI_RECV buffers (fi_msg(3)). An untagged receive posted
 * with FI_MULTI_RECV stays on its queue while messages are packed into
 * it one after the other, with no gaps and no alignment. A message that
 * matches it gets a receive entry of its own, a child that covers the
 * message's bytes of the buffer (its completion's buf points there) and
 * names the buffer as its parent. The child lives in storage the caller
 * gives: on the stack for a message delivered at once, in the rdmx_rxm
 * of a message that arrives in pieces; so packing never allocates.
 *
 * Once fewer than FI_OPT_MIN_MULTI_RECV bytes are left (or none), the buffer
 * leaves its queue (it is released). The completion of the last message
 * placed in it then carries FI_MULTI_RECV, whatever
 * FI_SELECTIVE_COMPLETION says. A message longer than the space left
 * takes the space and completes with FI_ETRUNC.
 */
#include "rdmx.h"
#include "rdmx_ep.h"
#include "rdmx_rx.h"

/* Where the next message goes in buf (its end when it is full). */
static void *rdmx_multi_next(const struct rdmx_rxe *buf)
{
	struct iovec at;

	if (rdmx_iov_slice(&at, buf->iov, buf->iov_cnt, buf->used, 1))
		return at.iov_base;
	if (!buf->iov_cnt)
		return NULL;
	return (char *) buf->iov[buf->iov_cnt - 1].iov_base +
	       buf->iov[buf->iov_cnt - 1].iov_len;
}

static void rdmx_multi_release(struct rdmx_match_queue *q, struct rdmx_rxe *buf)
{
	rdmx_match_posted_remove(q, buf);
	buf->released = true;
}

struct rdmx_rxe *rdmx_multi_carve(struct rdmx_match_queue *q, struct rdmx_rxe *buf,
				  size_t len, struct rdmx_rxe *kid)
{
	size_t cap = rdmx_iov_len(buf->iov, buf->iov_cnt);
	size_t take = RDMX_MIN(len, cap - buf->used);

	*kid = (struct rdmx_rxe) {
		.item = { .addr = buf->item.addr },
		.context = buf->context,
		.flags = buf->flags,
		.parent = buf,
	};
	rdmx_dlist_init(&kid->item.link);
	kid->iov_cnt = rdmx_iov_slice(kid->iov, buf->iov, buf->iov_cnt, buf->used, take);
	if (!kid->iov_cnt) {
		/* Nothing to place: the completion still says where. */
		kid->iov[0] = (struct iovec) { .iov_base = rdmx_multi_next(buf) };
		kid->iov_cnt = 1;
	}
	buf->used += take;
	buf->children++;
	/* Full counts as consumed even when the minimum is 0. */
	if (cap - buf->used < buf->min_free || buf->used == cap)
		rdmx_multi_release(q, buf);
	return kid;
}

void rdmx_multi_done(struct rdmx_ep *ep, struct rdmx_rxe *kid)
{
	struct rdmx_rxe *buf = kid->parent;

	kid->parent = NULL;
	if (!--buf->children && buf->released)
		rdmx_pool_release(&ep->rxe_pool, buf);
}

void rdmx_multi_cancel(struct rdmx_ep *ep, struct rdmx_rxe *buf,
		       struct rdmx_cq_entry *entry)
{
	buf->released = true;
	if (buf->children)
		return;		/* its last message will say it is released */
	entry->flags |= FI_MULTI_RECV;
	rdmx_pool_release(&ep->rxe_pool, buf);
}
