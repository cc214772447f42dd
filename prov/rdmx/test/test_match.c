/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_match: which posted receive takes an arriving message, and which
 * unexpected message a new receive takes. fi_tagged(3) semantics: a
 * receive takes a tag when the bits outside its ignore mask are equal,
 * FI_ADDR_UNSPEC takes any source, and the oldest candidate wins.
 */
#include "rdmx_test.h"
#include "rdmx_match.h"

#define SRC_A	((fi_addr_t) 3)
#define SRC_B	((fi_addr_t) 4)

static struct rdmx_match_queue q;

/* Receives and unexpected messages the tests queue; none is malloc'd. */
static struct rdmx_rxe rxe[8];
static struct rdmx_unexp ux[8];

/* Ids the tests check; rdmx_rxe.context carries one per receive. */
static int ctx[8];

static void match_setup(void)
{
	rdmx_match_queue_construct(&q);
	memset(rxe, 0, sizeof(rxe));
	memset(ux, 0, sizeof(ux));
}

static void match_teardown(void)
{
	rdmx_match_queue_destruct(&q);
}

TestSuite(match, .init = match_setup, .fini = match_teardown);

static bool posted_empty(void)
{
	return q.exact.count == 0 && rdmx_dlist_empty(&q.wild);
}

/* Posts receive i for src/tag/ignore at the tail of the posted queue. */
static struct rdmx_rxe *post(int i, fi_addr_t src, uint64_t tag, uint64_t ignore)
{
	rxe[i].context = &ctx[i];
	rxe[i].item.addr = src;
	rxe[i].item.tag = tag;
	rxe[i].ignore = ignore;
	rdmx_match_post(&q, &rxe[i]);
	return &rxe[i];
}

/* Queues unexpected message i from src with tag. */
static struct rdmx_unexp *arrive(int i, fi_addr_t src, uint64_t tag)
{
	ux[i].item.addr = src;
	ux[i].item.tag = tag;
	rdmx_match_unexp_add(&q, &ux[i]);
	return &ux[i];
}

Test(match, tag_equal_matches)
{
	cr_assert(rdmx_match_tag(0x1234, 0, 0x1234));
	cr_assert_not(rdmx_match_tag(0x1234, 0, 0x1235));
	cr_assert_not(rdmx_match_tag(0x1234, 0, 0x8000000000001234ULL),
		      "bit 63 is part of the tag");
}

Test(match, ignore_mask_ignores_only_its_bits)
{
	uint64_t want = 0xabcd000000000000ULL, ignore = 0x0000ffffffffffffULL;

	cr_assert(rdmx_match_tag(want, ignore, 0xabcd123456789abcULL));
	cr_assert(rdmx_match_tag(want, ignore, want));
	cr_assert_not(rdmx_match_tag(want, ignore, 0xabce000000000000ULL));
	cr_assert_not(rdmx_match_tag(want, ignore, 0x2bcd000000000000ULL));
	cr_assert(rdmx_match_tag(0, ~0ULL, 0xffffffffffffffffULL),
		  "an all-ones ignore mask takes every tag");
	/* Bits the receive wants but also ignores do not matter either. */
	cr_assert(rdmx_match_tag(0xff, 0x0f, 0xf0));
}

Test(match, addr_unspec_is_a_wildcard)
{
	cr_assert(rdmx_match_addr(FI_ADDR_UNSPEC, SRC_A));
	cr_assert(rdmx_match_addr(FI_ADDR_UNSPEC, 0));
	cr_assert(rdmx_match_addr(SRC_A, SRC_A));
	cr_assert_not(rdmx_match_addr(SRC_A, SRC_B));
	cr_assert_not(rdmx_match_addr(0, FI_ADDR_NOTAVAIL),
		      "an unknown sender does not satisfy a directed receive");
}

Test(match, empty_queues_match_nothing)
{
	cr_assert_null(rdmx_match_posted(&q, SRC_A, 0));
	cr_assert_null(rdmx_match_unexp(&q, FI_ADDR_UNSPEC, 0, ~0ULL));
	cr_assert_null(rdmx_match_cancel(&q, &ctx[0]));
}

Test(match, posted_wildcard_source_takes_any_sender)
{
	post(0, FI_ADDR_UNSPEC, 9, 0);
	cr_assert_eq(rdmx_match_posted(&q, SRC_B, 9), &rxe[0]);
	cr_assert(posted_empty(), "a match leaves the queue");
}

Test(match, posted_directed_source_takes_only_its_sender)
{
	post(0, SRC_A, 9, 0);
	cr_assert_null(rdmx_match_posted(&q, SRC_B, 9));
	cr_assert_null(rdmx_match_posted(&q, FI_ADDR_NOTAVAIL, 9));
	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 9), &rxe[0]);
}

Test(match, posted_tag_and_ignore)
{
	post(0, FI_ADDR_UNSPEC, 0x100, 0x0ff);
	cr_assert_null(rdmx_match_posted(&q, SRC_A, 0x200));
	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 0x1ab), &rxe[0]);
}

/* Receives that match the same message complete in the order posted. */
Test(match, posted_oldest_first)
{
	post(0, FI_ADDR_UNSPEC, 1, 0);
	post(1, SRC_A, 1, 0);
	post(2, FI_ADDR_UNSPEC, 0, ~0ULL);

	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 1), &rxe[0]);
	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 1), &rxe[1]);
	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 1), &rxe[2]);
	cr_assert_null(rdmx_match_posted(&q, SRC_A, 1));
}

/* An older receive that does not fit is skipped and stays queued. */
Test(match, posted_skips_older_nonmatching)
{
	post(0, SRC_B, 1, 0);
	post(1, FI_ADDR_UNSPEC, 2, 0);
	post(2, FI_ADDR_UNSPEC, 1, 0);

	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 1), &rxe[2]);
	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 2), &rxe[1]);
	cr_assert_eq(rdmx_match_posted(&q, SRC_B, 1), &rxe[0]);
	cr_assert(posted_empty());
}

Test(match, unexp_wildcard_and_directed)
{
	arrive(0, SRC_A, 5);
	arrive(1, SRC_B, 5);

	cr_assert_eq(rdmx_match_unexp(&q, SRC_B, 5, 0), &ux[1],
		     "a directed receive skips other senders");
	cr_assert_null(rdmx_match_unexp(&q, SRC_B, 5, 0));
	cr_assert_eq(rdmx_match_unexp(&q, FI_ADDR_UNSPEC, 5, 0), &ux[0]);
	cr_assert(rdmx_dlist_empty(&q.unexp));
}

Test(match, unexp_tag_and_ignore)
{
	arrive(0, SRC_A, 0xf00d);
	cr_assert_null(rdmx_match_unexp(&q, FI_ADDR_UNSPEC, 0xf000, 0x00f0));
	cr_assert_eq(rdmx_match_unexp(&q, FI_ADDR_UNSPEC, 0xf000, 0x00ff), &ux[0]);
}

/* Messages that fit one receive are delivered in arrival order. */
Test(match, unexp_oldest_first)
{
	arrive(0, SRC_A, 1);
	arrive(1, SRC_B, 2);
	arrive(2, SRC_A, 3);
	arrive(3, SRC_A, 1);

	cr_assert_eq(rdmx_match_unexp(&q, SRC_A, 0, ~0ULL), &ux[0]);
	cr_assert_eq(rdmx_match_unexp(&q, FI_ADDR_UNSPEC, 1, 0), &ux[3]);
	cr_assert_eq(rdmx_match_unexp(&q, FI_ADDR_UNSPEC, 0, ~0ULL), &ux[1]);
	cr_assert_eq(rdmx_match_unexp(&q, FI_ADDR_UNSPEC, 0, ~0ULL), &ux[2]);
	cr_assert_null(rdmx_match_unexp(&q, FI_ADDR_UNSPEC, 0, ~0ULL));
}

Test(match, cancel_by_context)
{
	post(0, FI_ADDR_UNSPEC, 1, 0);
	post(1, FI_ADDR_UNSPEC, 1, 0);
	post(2, FI_ADDR_UNSPEC, 1, 0);

	cr_assert_eq(rdmx_match_cancel(&q, &ctx[1]), &rxe[1]);
	cr_assert_null(rdmx_match_cancel(&q, &ctx[1]), "cancelled only once");
	cr_assert_null(rdmx_match_cancel(&q, &ctx[5]), "unknown context");

	/* The cancelled receive no longer takes messages; the others keep order. */
	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 1), &rxe[0]);
	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 1), &rxe[2]);
	cr_assert_null(rdmx_match_posted(&q, SRC_A, 1));
}

/* Receives sharing a context are cancelled oldest first, one per call. */
Test(match, cancel_shared_context_oldest_first)
{
	post(0, FI_ADDR_UNSPEC, 1, 0)->context = &ctx[7];
	post(1, FI_ADDR_UNSPEC, 2, 0)->context = &ctx[7];

	cr_assert_eq(rdmx_match_cancel(&q, &ctx[7]), &rxe[0]);
	cr_assert_eq(rdmx_match_cancel(&q, &ctx[7]), &rxe[1]);
	cr_assert(posted_empty());
}

/* Cancelling touches only posted receives, never unexpected messages. */
Test(match, cancel_leaves_unexpected_alone)
{
	arrive(0, SRC_A, 1);
	cr_assert_null(rdmx_match_cancel(&q, NULL));
	cr_assert_eq(rdmx_match_unexp(&q, SRC_A, 1, 0), &ux[0]);
}

/* Exact and wildcard receives live apart, yet the oldest still wins. */
Test(match, posted_oldest_across_exact_and_wildcard)
{
	post(0, FI_ADDR_UNSPEC, 0, ~0ULL);	/* wildcard, oldest */
	post(1, SRC_A, 7, 0);			/* exact, directed */
	post(2, FI_ADDR_UNSPEC, 7, 0);		/* exact, any source */
	post(3, SRC_A, 0, 0xff);		/* wildcard, newest */

	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 7), &rxe[0]);
	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 7), &rxe[1]);
	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 7), &rxe[2]);
	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 7), &rxe[3]);
	cr_assert(posted_empty());
}

Test(match, posted_any_source_exact_before_directed)
{
	post(0, FI_ADDR_UNSPEC, 7, 0);
	post(1, SRC_B, 7, 0);

	cr_assert_eq(rdmx_match_posted(&q, SRC_B, 7), &rxe[0]);
	cr_assert_eq(rdmx_match_posted(&q, SRC_B, 7), &rxe[1]);
}

/*
 * The index skips the lookup of keys it holds none of (directed ones, or
 * any-source ones): through receives that come and go, each is still found.
 */
Test(match, directed_and_any_source_found_as_they_come_and_go)
{
	post(0, SRC_A, 7, 0);
	cr_assert_eq(rdmx_match_cancel(&q, &ctx[0]), &rxe[0]);
	post(1, FI_ADDR_UNSPEC, 7, 0);
	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 7), &rxe[1]);

	post(2, SRC_A, 7, 0);
	post(3, SRC_B, 7, 0);
	cr_assert_eq(rdmx_match_posted(&q, SRC_B, 7), &rxe[3]);
	post(4, FI_ADDR_UNSPEC, 7, 0);
	cr_assert_eq(rdmx_match_posted(&q, SRC_B, 7), &rxe[4]);
	cr_assert_null(rdmx_match_posted(&q, SRC_B, 7));
	cr_assert_eq(rdmx_match_posted(&q, SRC_A, 7), &rxe[2]);
	cr_assert(posted_empty());
}

Test(match, posted_find_leaves_the_receive_queued)
{
	post(0, SRC_A, 7, 0);
	cr_assert_eq(rdmx_match_posted_find(&q, SRC_A, 7), &rxe[0]);
	cr_assert_eq(rdmx_match_posted_find(&q, SRC_A, 7), &rxe[0]);
	rdmx_match_posted_remove(&q, &rxe[0]);
	cr_assert_null(rdmx_match_posted_find(&q, SRC_A, 7));
	cr_assert(posted_empty());
}

Test(match, posted_pop_empties_the_queue)
{
	post(0, SRC_A, 1, 0);
	post(1, FI_ADDR_UNSPEC, 0, ~0ULL);
	post(2, SRC_B, 2, 0);

	for (int i = 0; i < 3; i++)
		cr_assert_not_null(rdmx_match_posted_pop(&q));
	cr_assert_null(rdmx_match_posted_pop(&q));
	cr_assert(posted_empty());
}

#define MANY	10000

/*
 * Ten thousand exact receives (the index grows many times over): each
 * message finds its own receive, and receives of one key keep their order.
 */
Test(match, many_exact_receives_keep_order_per_key)
{
	static struct rdmx_rxe many[MANY];

	for (size_t i = 0; i < MANY; i++) {
		/* Receives 2k and 2k+1 share a key: tag k from source k % 3. */
		many[i].item.addr = (fi_addr_t) (i / 2 % 3);
		many[i].item.tag = i / 2;
		many[i].context = &many[i];
		rdmx_match_post(&q, &many[i]);
	}
	cr_assert_eq(q.exact.count, MANY);
	cr_assert_gt(q.exact.mask + 1, MANY / 4, "the index grew with its entries");
	cr_assert_null(rdmx_match_posted(&q, (fi_addr_t) 1, 0), "wrong source");
	for (size_t i = 0; i < MANY; i++)
		cr_assert_eq(rdmx_match_posted(&q, (fi_addr_t) (i / 2 % 3), i / 2),
			     &many[i], "receive %zu", i);
	cr_assert(posted_empty());
}

Test(match, many_unexpected_directed_lookups)
{
	static struct rdmx_unexp many[MANY];

	for (size_t i = 0; i < MANY; i++) {
		many[i].item.addr = (fi_addr_t) (i % 5);
		many[i].item.tag = i % 1000;
		rdmx_match_unexp_add(&q, &many[i]);
	}
	/* Each (source, tag) pair has two messages: the older comes first. */
	for (size_t i = 0; i < 5000; i++) {
		fi_addr_t src = (fi_addr_t) (i % 5);

		cr_assert_eq(rdmx_match_unexp(&q, src, i % 1000, 0), &many[i]);
	}
	cr_assert_eq(rdmx_match_unexp(&q, FI_ADDR_UNSPEC, 0, ~0ULL), &many[5000],
		     "the arrival-order list saw the same removals");
	rdmx_match_unexp_remove(&q, &many[5000]);	/* removed twice: harmless */
	cr_assert_eq(q.unexp_index.count, MANY - 5001);
	while (rdmx_match_unexp(&q, FI_ADDR_UNSPEC, 0, ~0ULL))
		;
	cr_assert_eq(q.unexp_index.count, 0);
}
