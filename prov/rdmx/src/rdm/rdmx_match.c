/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: receive matching (see rdmx_match.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_match.h"

static void rdmx_match_index_construct(struct rdmx_match_index *idx)
{
	size_t i;

	for (i = 0; i < RDMX_MATCH_BUCKETS0; i++)
		rdmx_dlist_init(&idx->small[i]);
	idx->buckets = idx->small;
	idx->mask = RDMX_MATCH_BUCKETS0 - 1;
	idx->count = 0;
	idx->directed = 0;
}

static void rdmx_match_index_destruct(struct rdmx_match_index *idx)
{
	if (idx->buckets != idx->small)
		free(idx->buckets);
	idx->buckets = idx->small;
}

/* The address is spread by a multiply: one mix of both is enough. */
static size_t rdmx_match_hash(fi_addr_t addr, uint64_t tag)
{
	return (size_t) rdmx_mix64(tag ^ ((uint64_t) addr * 0x9e3779b97f4a7c15ULL));
}

static struct rdmx_dlist *rdmx_match_bucket(const struct rdmx_match_index *idx,
					    fi_addr_t addr, uint64_t tag)
{
	return &idx->buckets[rdmx_match_hash(addr, tag) & idx->mask];
}

/*
 * Doubles the buckets. Moving each old bucket's entries in order keeps
 * the entries of one key in order. Without memory the chains grow longer.
 */
static RDMX_COLD void rdmx_match_index_grow(struct rdmx_match_index *idx)
{
	size_t old_cnt = idx->mask + 1, cnt = 2 * old_cnt, i;
	struct rdmx_dlist *old = idx->buckets, *it;

	idx->buckets = malloc(cnt * sizeof(*idx->buckets));
	if (!idx->buckets) {
		idx->buckets = old;
		return;
	}
	for (i = 0; i < cnt; i++)
		rdmx_dlist_init(&idx->buckets[i]);
	idx->mask = cnt - 1;
	for (i = 0; i < old_cnt; i++) {
		while ((it = rdmx_dlist_pop_front(&old[i]))) {
			struct rdmx_match_item *item =
				rdmx_container_of(it, struct rdmx_match_item, link);

			rdmx_dlist_insert_tail(rdmx_match_bucket(idx, item->addr,
								 item->tag), it);
		}
	}
	if (old != idx->small)
		free(old);
}

static void rdmx_match_index_add(struct rdmx_match_index *idx,
				 struct rdmx_match_item *item)
{
	if (idx->count >= 2 * (idx->mask + 1))
		rdmx_match_index_grow(idx);
	rdmx_dlist_insert_tail(rdmx_match_bucket(idx, item->addr, item->tag),
			       &item->link);
	idx->count++;
	if (item->addr != FI_ADDR_UNSPEC)
		idx->directed++;
}

static void rdmx_match_index_remove(struct rdmx_match_index *idx,
				    struct rdmx_match_item *item)
{
	if (rdmx_dlist_empty(&item->link))
		return;		/* not indexed: removed already */
	rdmx_dlist_remove(&item->link);
	idx->count--;
	if (item->addr != FI_ADDR_UNSPEC)
		idx->directed--;
}

/* The oldest entry of key (addr, tag), or NULL. */
static struct rdmx_match_item *rdmx_match_index_first(const struct rdmx_match_index *idx,
						      fi_addr_t addr, uint64_t tag)
{
	struct rdmx_dlist *bucket = rdmx_match_bucket(idx, addr, tag), *it;

	rdmx_dlist_foreach(bucket, it) {
		struct rdmx_match_item *item =
			rdmx_container_of(it, struct rdmx_match_item, link);

		if (item->addr == addr && item->tag == tag)
			return item;
	}
	return NULL;
}

void rdmx_match_queue_construct(struct rdmx_match_queue *q)
{
	rdmx_match_index_construct(&q->exact);
	rdmx_dlist_init(&q->wild);
	q->seq = 0;
	rdmx_dlist_init(&q->unexp);
	rdmx_match_index_construct(&q->unexp_index);
}

void rdmx_match_queue_destruct(struct rdmx_match_queue *q)
{
	rdmx_match_index_destruct(&q->exact);
	rdmx_match_index_destruct(&q->unexp_index);
}

static struct rdmx_rxe *rdmx_match_rxe(struct rdmx_dlist *link)
{
	return rdmx_container_of(link, struct rdmx_rxe, item.link);
}

void rdmx_match_post(struct rdmx_match_queue *q, struct rdmx_rxe *rxe)
{
	rxe->seq = q->seq++;
	if (rxe->ignore)
		rdmx_dlist_insert_tail(&q->wild, &rxe->item.link);
	else
		rdmx_match_index_add(&q->exact, &rxe->item);
}

/* The older of a and the exact receive of key (addr, tag). */
static struct rdmx_rxe *rdmx_match_older_exact(struct rdmx_match_queue *q,
					       struct rdmx_rxe *a,
					       fi_addr_t addr, uint64_t tag)
{
	struct rdmx_match_item *item = rdmx_match_index_first(&q->exact, addr, tag);
	struct rdmx_rxe *b;

	if (!item)
		return a;
	b = rdmx_container_of(item, struct rdmx_rxe, item);
	return (a && a->seq < b->seq) ? a : b;
}

struct rdmx_rxe *rdmx_match_posted_find(struct rdmx_match_queue *q,
					fi_addr_t src, uint64_t tag)
{
	struct rdmx_rxe *best = NULL;
	struct rdmx_dlist *it;

	/* A key no receive can have is not looked up: a hash and a bucket less. */
	if (src != FI_ADDR_UNSPEC && q->exact.directed)
		best = rdmx_match_older_exact(q, NULL, src, tag);
	if (q->exact.count > q->exact.directed)
		best = rdmx_match_older_exact(q, best, FI_ADDR_UNSPEC, tag);
	rdmx_dlist_foreach(&q->wild, it) {
		struct rdmx_rxe *rxe = rdmx_match_rxe(it);

		if (best && rxe->seq > best->seq)
			break;		/* the rest were posted later still */
		if (rdmx_match_addr(rxe->item.addr, src) &&
		    rdmx_match_tag(rxe->item.tag, rxe->ignore, tag))
			return rxe;
	}
	return best;
}

void rdmx_match_posted_remove(struct rdmx_match_queue *q, struct rdmx_rxe *rxe)
{
	if (rxe->ignore)
		rdmx_dlist_remove(&rxe->item.link);
	else
		rdmx_match_index_remove(&q->exact, &rxe->item);
}

struct rdmx_rxe *rdmx_match_posted(struct rdmx_match_queue *q,
				   fi_addr_t src, uint64_t tag)
{
	struct rdmx_rxe *rxe = rdmx_match_posted_find(q, src, tag);

	if (rxe)
		rdmx_match_posted_remove(q, rxe);
	return rxe;
}

/* The older of best and the oldest receive of context in list. */
static struct rdmx_rxe *rdmx_match_in(struct rdmx_dlist *list, void *context,
				      struct rdmx_rxe *best)
{
	struct rdmx_dlist *it;

	rdmx_dlist_foreach(list, it) {
		struct rdmx_rxe *rxe = rdmx_match_rxe(it);

		if (rxe->context == context)
			return (best && best->seq < rxe->seq) ? best : rxe;
	}
	return best;
}

struct rdmx_rxe *rdmx_match_cancel(struct rdmx_match_queue *q, void *context)
{
	struct rdmx_rxe *rxe = rdmx_match_in(&q->wild, context, NULL);
	size_t i;

	for (i = 0; q->exact.count && i <= q->exact.mask; i++)
		rxe = rdmx_match_in(&q->exact.buckets[i], context, rxe);
	if (rxe)
		rdmx_match_posted_remove(q, rxe);
	return rxe;
}

struct rdmx_rxe *rdmx_match_posted_pop(struct rdmx_match_queue *q)
{
	struct rdmx_rxe *rxe = NULL;
	size_t i;

	if (!rdmx_dlist_empty(&q->wild))
		rxe = rdmx_match_rxe(q->wild.next);
	for (i = 0; !rxe && q->exact.count && i <= q->exact.mask; i++) {
		if (!rdmx_dlist_empty(&q->exact.buckets[i]))
			rxe = rdmx_match_rxe(q->exact.buckets[i].next);
	}
	if (rxe)
		rdmx_match_posted_remove(q, rxe);
	return rxe;
}

void rdmx_match_unexp_add(struct rdmx_match_queue *q, struct rdmx_unexp *ux)
{
	rdmx_dlist_insert_tail(&q->unexp, &ux->link);
	rdmx_match_index_add(&q->unexp_index, &ux->item);
}

void rdmx_match_unexp_remove(struct rdmx_match_queue *q, struct rdmx_unexp *ux)
{
	/* A removed link points at itself: removing again is harmless. */
	rdmx_dlist_remove(&ux->link);
	rdmx_match_index_remove(&q->unexp_index, &ux->item);
}

void rdmx_match_unexp_readdr(struct rdmx_match_queue *q, fi_addr_t from,
			     fi_addr_t to)
{
	struct rdmx_dlist *it;

	/* In arrival order: each lands at the tail of its new key's list. */
	rdmx_dlist_foreach(&q->unexp, it) {
		struct rdmx_unexp *ux = rdmx_container_of(it, struct rdmx_unexp, link);

		if (ux->item.addr != from)
			continue;
		rdmx_match_index_remove(&q->unexp_index, &ux->item);
		ux->item.addr = to;
		rdmx_match_index_add(&q->unexp_index, &ux->item);
	}
}

struct rdmx_unexp *rdmx_match_unexp_find(struct rdmx_match_queue *q,
					 fi_addr_t addr, uint64_t tag,
					 uint64_t ignore)
{
	struct rdmx_dlist *it;

	if (!ignore && addr != FI_ADDR_UNSPEC) {
		struct rdmx_match_item *item =
			rdmx_match_index_first(&q->unexp_index, addr, tag);

		return item ? rdmx_container_of(item, struct rdmx_unexp, item) : NULL;
	}
	rdmx_dlist_foreach(&q->unexp, it) {
		struct rdmx_unexp *ux = rdmx_container_of(it, struct rdmx_unexp, link);

		if (rdmx_match_addr(addr, ux->item.addr) &&
		    rdmx_match_tag(tag, ignore, ux->item.tag))
			return ux;
	}
	return NULL;
}

struct rdmx_unexp *rdmx_match_unexp(struct rdmx_match_queue *q,
				    fi_addr_t addr, uint64_t tag,
				    uint64_t ignore)
{
	struct rdmx_unexp *ux;

	/* Nothing waits, as when receives are posted ahead: no search. */
	if (rdmx_dlist_empty(&q->unexp))
		return NULL;
	ux = rdmx_match_unexp_find(q, addr, tag, ignore);

	if (ux)
		rdmx_match_unexp_remove(q, ux);
	return ux;
}
