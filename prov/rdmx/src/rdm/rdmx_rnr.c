/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: RNR handling in the rdm layer (see rdmx_rnr.h for the policy). */
#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_domain.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_rnr.h"
#include "rdmx_tx.h"

#define RDMX_RNR_BACKOFF_MIN_NS	40000
#define RDMX_RNR_BACKOFF_SPAN_NS 80000	/* jitter: 40 to 120 us */

uint64_t rdmx_rnr_backoff_ns(uint32_t exp, uint64_t *rng)
{
	uint64_t max = g_rdmx_params.rnr_backoff_max_us * 1000ULL;
	uint64_t ns;

	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	ns = RDMX_RNR_BACKOFF_MIN_NS + *rng % RDMX_RNR_BACKOFF_SPAN_NS;
	ns = exp < 32 ? ns << exp : max;
	return RDMX_MIN(ns, max);
}

/*
 * The policy in one place. The device already resent the packet
 * FI_RDMX_RNR_RETRY times; the receiver is short of buffers because its
 * application is not posting or not progressing. A first refusal may be
 * a passing burst: resend at the next progress. A repeat means the
 * receiver stays busy: stop sending to it for a random, doubling while,
 * so refused packets do not flood it, and let the application see
 * -FI_EAGAIN instead of queueing without bound.
 */
void rdmx_rnr_refused(struct rdmx_ep *ep, struct rdmx_peer *peer,
		      struct rdmx_pke *pke)
{
	ep->stats.rnr_completions++;
	/* Packets of the provider's own (control, VOID) are always resent. */
	if (ep->domain->resource_mgmt == FI_RM_DISABLED && pke->txe && !pke->txe->err) {
		rdmx_tx_fail(ep, pke, FI_ENORX, "the receiver had no buffer");
		return;
	}
	/*
	 * Its session ended (the refusal came after the reset that flushed
	 * the queue): sent again, it would reach the next one.
	 */
	if (pke->txe && pke->txe->orphan) {
		rdmx_tx_fail(ep, pke, FI_ENORX, "the receiver had no buffer, then its session ended");
		return;
	}
	if (pke->rnr++) {
		peer->backoff_until = rdmx_clock_ns() +
				      rdmx_rnr_backoff_ns(peer->backoff_exp, &ep->rng);
		peer->backoff_exp++;
		ep->stats.rnr_backoffs++;
	}
	rdmx_dlist_insert_tail(&peer->retry_q, &pke->link);
	if (rdmx_dlist_empty(&peer->retry_link))
		rdmx_dlist_insert_tail(&ep->retry_peers, &peer->retry_link);
}

/* Resends a peer's queue in order; false if the device pushed back. */
static bool rdmx_rnr_resend(struct rdmx_peer *peer)
{
	while (!rdmx_dlist_empty(&peer->retry_q)) {
		struct rdmx_pke *pke = rdmx_container_of(peer->retry_q.next,
							 struct rdmx_pke, link);

		if (rdmx_tx_post(pke, false))
			return false;
		rdmx_dlist_remove(&pke->link);
	}
	return true;
}

void rdmx_rnr_progress(struct rdmx_ep *ep)
{
	struct rdmx_dlist *it, *next;
	uint64_t now;

	if (rdmx_dlist_empty(&ep->retry_peers))
		return;
	now = rdmx_clock_ns();
	for (it = ep->retry_peers.next; it != &ep->retry_peers; it = next) {
		struct rdmx_peer *peer = rdmx_container_of(it, struct rdmx_peer,
							   retry_link);

		next = it->next;
		if (peer->backoff_until && now < peer->backoff_until)
			continue;
		if (rdmx_rnr_resend(peer))
			rdmx_dlist_remove(&peer->retry_link);
	}
}

uint64_t rdmx_rnr_due(const struct rdmx_ep *ep)
{
	uint64_t due = UINT64_MAX;
	const struct rdmx_dlist *it;

	rdmx_dlist_foreach(&ep->retry_peers, it) {
		const struct rdmx_peer *peer = rdmx_container_of(it, struct rdmx_peer,
								 retry_link);

		due = RDMX_MIN(due, peer->backoff_until ? peer->backoff_until :
				    rdmx_clock_ns() + RDMX_DEV_WAIT_TICK_NS);
	}
	return due;
}

void rdmx_rnr_flush(struct rdmx_ep *ep, struct rdmx_peer *peer, int err)
{
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(&peer->retry_q)))
		rdmx_tx_fail(ep, rdmx_container_of(it, struct rdmx_pke, link),
			     err, fi_strerror(err));
	rdmx_dlist_remove(&peer->retry_link);
}
