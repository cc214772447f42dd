/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: the RDM endpoint object (see rdmx_ep.h). */
#include <stdlib.h>

#include <rdma/fi_ext_rdmx.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_av.h"
#include "rdmx_cm.h"
#include "rdmx_cntr.h"
#include "rdmx_conn.h"
#include "rdmx_cq.h"
#include "rdmx_domain.h"
#include "rdmx_ep.h"
#include "rdmx_info.h"
#include "rdmx_peer.h"
#include "rdmx_rx.h"
#include "rdmx_stubs.h"
#include "rdmx_tx.h"

static int rdmx_ep_bind_cq(struct rdmx_ep *ep, void *obj, uint64_t flags)
{
	struct rdmx_cq *cq = obj;
	int ret;

	if (flags & ~(uint64_t) (FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) {
		RDMX_WARN(FI_LOG_EP_CTRL, "cq bind flags %#lx not supported\n",
			  (unsigned long) flags);
		return -FI_EBADFLAGS;
	}
	if (!(flags & (FI_TRANSMIT | FI_RECV)) ||
	    ((flags & FI_TRANSMIT) && ep->tx_cq) || ((flags & FI_RECV) && ep->rx_cq)) {
		RDMX_WARN(FI_LOG_EP_CTRL, "cq bind needs a free direction\n");
		return -FI_EINVAL;
	}
	for (uint64_t dir = FI_TRANSMIT; dir; dir = dir == FI_TRANSMIT ? FI_RECV : 0) {
		if (!(flags & dir))
			continue;
		ret = rdmx_epset_add(&cq->eps, &cq->refs, ep);
		if (ret)
			return ret;
		if (dir == FI_TRANSMIT) {
			ep->tx_cq = ep->tx_sink.cq = cq;
			ep->tx_comp = &ep->tx_sink.comp;
			ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
		} else {
			ep->rx_cq = ep->rx_sink.cq = cq;
			ep->rx_comp = &ep->rx_sink.comp;
			ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
		}
	}
	return 0;
}

/* The sink slot a counter bind flag names, or NULL. */
static struct rdmx_cntr **rdmx_ep_cntr_slot(struct rdmx_ep *ep, uint64_t flag)
{
	switch (flag) {
	case FI_SEND:		return &ep->tx_sink.cntrs[RDMX_SINK_MSG];
	case FI_READ:		return &ep->tx_sink.cntrs[RDMX_SINK_READ];
	case FI_WRITE:		return &ep->tx_sink.cntrs[RDMX_SINK_WRITE];
	case FI_RECV:		return &ep->rx_sink.cntrs[RDMX_SINK_MSG];
	case FI_REMOTE_READ:	return &ep->rx_sink.cntrs[RDMX_SINK_READ];
	case FI_REMOTE_WRITE:	return &ep->rx_sink.cntrs[RDMX_SINK_WRITE];
	default:		return NULL;
	}
}

/*
 * Binds a counter for each kind of operation flags names (fi_endpoint(3):
 * FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE),
 * each kind to one counter at most. Domain lock held.
 */
static int rdmx_ep_bind_cntr(struct rdmx_ep *ep, void *obj, uint64_t flags)
{
	struct rdmx_cntr *cntr = obj;
	const uint64_t kinds = FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |
			       FI_REMOTE_WRITE;
	int ret;

	if (!flags || (flags & ~kinds)) {
		RDMX_WARN(FI_LOG_EP_CTRL, "counter bind flags %#lx not supported\n",
			  (unsigned long) flags);
		return -FI_EBADFLAGS;
	}
	for (uint64_t f = flags; f; f &= f - 1) {
		if (*rdmx_ep_cntr_slot(ep, f & -f)) {
			RDMX_WARN(FI_LOG_EP_CTRL, "a counter is bound for %s already\n",
				  fi_tostr(&(uint64_t) { f & -f }, FI_TYPE_CAPS));
			return -FI_EINVAL;
		}
	}
	/* Without FI_RMA_EVENT remote accesses are not counted (fi_cntr(3)). */
	if (!(ep->caps & FI_RMA_EVENT))
		flags &= ~(uint64_t) (FI_REMOTE_READ | FI_REMOTE_WRITE);
	for (uint64_t f = flags; f; f &= f - 1) {
		ret = rdmx_epset_add(&cntr->eps, &cntr->refs, ep);
		if (ret)
			return ret;
		*rdmx_ep_cntr_slot(ep, f & -f) = cntr;
	}
	if (flags & (FI_SEND | FI_READ | FI_WRITE))
		ep->tx_comp = &ep->tx_sink.comp;
	if (flags & (FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE))
		ep->rx_comp = &ep->rx_sink.comp;
	return 0;
}

/*
 * The wait objects of what the endpoint is bound to and of its domain's
 * progress thread, at most 2 + 6 + 1 + 1 (a FI_EP_MSG endpoint's EQ).
 */
static size_t rdmx_ep_waits(const struct rdmx_ep *ep, struct rdmx_wait **waits)
{
	const struct rdmx_sink *sinks[2] = { &ep->tx_sink, &ep->rx_sink };
	size_t n = 0;

	if (ep->domain->autoprog.wait)
		waits[n++] = ep->domain->autoprog.wait;
	if (ep->cm && ep->cm->eq && rdmx_eq_wait(ep->cm->eq))
		waits[n++] = rdmx_eq_wait(ep->cm->eq);
	for (int s = 0; s < 2; s++) {
		if (sinks[s]->cq && sinks[s]->cq->waitable.wait)
			waits[n++] = sinks[s]->cq->waitable.wait;
		for (int k = 0; k < RDMX_SINK_KINDS; k++) {
			if (sinks[s]->cntrs[k] && sinks[s]->cntrs[k]->waitable.wait)
				waits[n++] = sinks[s]->cntrs[k]->waitable.wait;
		}
	}
	return n;
}

/*
 * Puts the devices' descriptors in the waits of the CQs and counters the
 * endpoint is bound to (on), or takes them out. 0 or -FI_E*.
 */
static int rdmx_ep_watch(struct rdmx_ep *ep, bool on)
{
	struct rdmx_wait *waits[4 + 2 * RDMX_SINK_KINDS];
	size_t n = rdmx_ep_waits(ep, waits);
	int fds[2], nfds = rdmx_lanes_wait_fds(&ep->lanes, fds);
	int ret = 0;
	size_t i;

	if (on == ep->watched)
		return 0;
	for (i = 0; on && i < n && !ret; i++)
		ret = rdmx_wait_add_fds(waits[i], fds, nfds);
	if (ret)
		n = i - 1;
	for (i = 0; (!on || ret) && i < n; i++)
		rdmx_wait_del_fds(waits[i], fds, nfds);
	ep->watched = on && !ret;
	return ret;
}

/*
 * Binds obj (a CQ or counter of domain dom) with bind under the domain
 * lock; -FI_EINVAL for an object of another domain.
 */
static int rdmx_ep_bind_locked(struct rdmx_ep *ep, struct rdmx_domain *dom,
			       int (*bind)(struct rdmx_ep *ep, void *obj, uint64_t flags),
			       void *obj, uint64_t flags)
{
	int ret;

	if (dom != ep->domain)
		return -FI_EINVAL;
	rdmx_lock_acquire(&ep->domain->lock);
	ret = bind(ep, obj, flags);
	rdmx_lock_release(&ep->domain->lock);
	return ret;
}

static int rdmx_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct rdmx_ep *ep = rdmx_container_of(fid, struct rdmx_ep, ep_fid.fid);
	int ret;

	if (ep->enabled) {
		RDMX_WARN(FI_LOG_EP_CTRL, "bind after fi_enable\n");
		return -FI_EOPBADSTATE;
	}
	switch (bfid->fclass) {
	case FI_CLASS_CNTR: {
		struct rdmx_cntr *cntr = rdmx_container_of(bfid, struct rdmx_cntr, cntr_fid.fid);

		return rdmx_ep_bind_locked(ep, cntr->domain, rdmx_ep_bind_cntr, cntr, flags);
	}
	case FI_CLASS_CQ: {
		struct rdmx_cq *cq = rdmx_container_of(bfid, struct rdmx_cq, cq_fid.fid);

		return rdmx_ep_bind_locked(ep, cq->domain, rdmx_ep_bind_cq, cq, flags);
	}
	case FI_CLASS_EQ:
		if (!ep->cm)
			return -FI_ENOSYS;
		return rdmx_cm_bind_eq(ep, rdmx_container_of(bfid, struct fid_eq, fid));
	case FI_CLASS_AV: {
		struct rdmx_av *av = rdmx_container_of(bfid, struct rdmx_av, av_fid.fid);

		if (av->domain != ep->domain || ep->av) {
			RDMX_WARN(FI_LOG_EP_CTRL, "one AV of the same domain per endpoint\n");
			return -FI_EINVAL;
		}
		ret = rdmx_av_attach(av, ep);
		if (!ret) {
			ep->av = av;
			ep->addrs = &av->lookups;
		}
		return ret;
	}
	default:
		RDMX_WARN(FI_LOG_EP_CTRL, "binding fid class %zu is not supported\n",
			  bfid->fclass);
		return -FI_ENOSYS;
	}
}

/*
 * The endpoint in its domain's progress thread's wait: progressed, and
 * armed before the thread sleeps.
 */
static int rdmx_ep_auto_check(struct rdmx_waitable *m, bool arm, uint64_t *due_p)
{
	struct rdmx_ep *ep = rdmx_container_of(m, struct rdmx_ep, auto_member);
	int ret = 0;

	rdmx_lock_acquire(&ep->domain->lock);
	rdmx_ep_progress(ep);
	if (arm)
		ret = rdmx_ep_wait_arm(ep, due_p);
	rdmx_lock_release(&ep->domain->lock);
	return ret;
}

static const struct rdmx_waitable_ops rdmx_ep_auto_ops = {
	.check = rdmx_ep_auto_check,
};

static int rdmx_ep_enable(struct rdmx_ep *ep)
{
	bool was_enabled = ep->enabled;
	int ret = 0;

	if (!ep->av) {
		RDMX_WARN(FI_LOG_EP_CTRL, "fi_enable without an AV\n");
		return -FI_ENOAV;
	}
	if (((ep->caps & FI_SEND) && !ep->tx_cq) ||
	    ((ep->caps & FI_RECV) && !ep->rx_cq)) {
		RDMX_WARN(FI_LOG_EP_CTRL, "fi_enable without a CQ per direction\n");
		return -FI_ENOCQ;
	}
	rdmx_lock_acquire(&ep->domain->lock);
	if (!ep->enabled)
		ret = rdmx_ep_watch(ep, true);
	if (!ep->enabled && !ret)
		ret = rdmx_rxbufs_post_all(&ep->rxb, &ep->lanes);
	/* A counter bound to a region (FI_RMA_EVENT) progresses it too. */
	if (!ep->enabled && !ret && (ep->caps & FI_RMA_EVENT))
		ret = rdmx_epset_add(&ep->domain->rma_eps, &ep->domain->rma_refs, ep);
	if (!ret)
		ep->enabled = true;
	else
		rdmx_ep_watch(ep, false);
	if (!ret && !was_enabled && ep->cm)
		ret = rdmx_cm_enable(ep);
	rdmx_lock_release(&ep->domain->lock);
	/* Outside the domain lock, which a wait's round takes under its own. */
	if (!ret && !was_enabled && ep->domain->autoprog.wait) {
		ep->auto_member.ops = &rdmx_ep_auto_ops;
		rdmx_wait_join(ep->domain->autoprog.wait, &ep->auto_member);
	}
	return ret;
}

static int rdmx_ep_control(struct fid *fid, int command, void *arg)
{
	struct rdmx_ep *ep = rdmx_container_of(fid, struct rdmx_ep, ep_fid.fid);
	uint64_t *flags = arg;

	switch (command) {
	case FI_ENABLE:
		return rdmx_ep_enable(ep);
	case FI_GETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if ((*flags & FI_TRANSMIT) && (*flags & FI_RECV))
			return -FI_EINVAL;
		*flags = (*flags & FI_TRANSMIT) ? ep->tx_op_flags : ep->rx_op_flags;
		return 0;
	case FI_SETOPSFLAG:
		if (!flags || ((*flags & FI_TRANSMIT) && (*flags & FI_RECV)))
			return -FI_EINVAL;
		if ((*flags & FI_TRANSMIT) &&
		    (*flags & rdmx_levels_refused(ep->dgram ? FI_EP_DGRAM : FI_EP_RDM))) {
			RDMX_WARN(FI_LOG_EP_CTRL, "completion level not supported\n");
			return -FI_EBADFLAGS;
		}
		if (*flags & FI_TRANSMIT)
			ep->tx_op_flags = *flags & ~(uint64_t) FI_TRANSMIT;
		else
			ep->rx_op_flags = *flags & ~(uint64_t) FI_RECV;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/* Carves the entry pools and the device packet buffers. */
static int rdmx_ep_alloc_buffers(struct rdmx_ep *ep)
{
	int ret;

	if (ep->dgram)
		return rdmx_ud_alloc(ep, ep->max_msg_size ? ep->max_msg_size :
				     rdmx_info_dgram_max(ep->domain->dev_ops));
	ep->max_msg_size = RDMX_MAX_MSG_SIZE;
	ep->inject_size = RDMX_MIN(ep->inject_size, RDMX_INJECT_MAX);
	ep->medium_max = RDMX_MIN(g_rdmx_params.medium_max, RDMX_MEDIUM_LIMIT);
	ret = rdmx_pool_construct(&ep->txe_pool,
				  sizeof(struct rdmx_txe) + ep->inject_size,
				  ep->tx_size);
	if (ret)
		return ret;
	ret = rdmx_pool_construct(&ep->pke_pool, sizeof(struct rdmx_pke),
				  ep->tx_size);
	if (ret)
		goto err_destruct_txe;
	ret = rdmx_pool_construct(&ep->rxe_pool, sizeof(struct rdmx_rxe),
				  ep->rx_size);
	if (ret)
		goto err_destruct_pke;
	/* A device may take fewer receives than asked (efa: max_rq_wr). */
	ep->lanes.nic_rx = RDMX_MIN(g_rdmx_params.rx_bufs, ep->lanes.nic->caps.rq_size);
	ret = rdmx_rxbufs_alloc(&ep->rxb, rdmx_lanes_mtu(&ep->lanes),
				rdmx_lanes_headroom(&ep->lanes), ep->lanes.nic_rx +
				(ep->lanes.shm ? ep->lanes.shm->caps.rq_size : 0));
	ep->held = calloc(ep->rxb.cnt, sizeof(*ep->held));
	if (ret || !ep->held) {
		ret = -FI_ENOMEM;
		goto err_free_bufs;
	}
	return 0;

err_free_bufs:
	rdmx_rxbufs_free(&ep->rxb);
	free(ep->held);
	ep->held = NULL;

	rdmx_pool_destruct(&ep->rxe_pool);
err_destruct_pke:
	rdmx_pool_destruct(&ep->pke_pool);
err_destruct_txe:
	rdmx_pool_destruct(&ep->txe_pool);
	return ret;
}

static void rdmx_ep_free_buffers(struct rdmx_ep *ep)
{
	if (ep->dgram) {
		rdmx_ud_free(ep);
		return;
	}
	rdmx_rma_free(ep);
	rdmx_pool_destruct(&ep->txe_pool);
	rdmx_pool_destruct(&ep->pke_pool);
	rdmx_pool_destruct(&ep->rxe_pool);
	rdmx_rxbufs_free(&ep->rxb);
	free(ep->held);
	ep->held = NULL;
}

void rdmx_ep_queues_init(struct rdmx_ep *ep)
{
	rdmx_match_queue_construct(&ep->msg_q);
	rdmx_match_queue_construct(&ep->tag_q);
	rdmx_dlist_init(&ep->claimed);
	rdmx_dlist_init(&ep->retry_peers);
	rdmx_dlist_init(&ep->tx_pending);
	rdmx_dlist_init(&ep->ctrl_pending);
	rdmx_dlist_init(&ep->pke_heaped);
	rdmx_dlist_init(&ep->dack_peers);
	rdmx_dlist_init(&ep->peer_list);
	rdmx_dlist_init(&ep->anon_lru);
}

/* Gathers the rdm layer's and the device's counters. */
static void rdmx_ep_stats(const struct rdmx_ep *ep, struct fi_rdmx_ep_stats *st)
{
	const struct rdmx_dev_stats *dev = &ep->lanes.nic->stats;
	static const struct rdmx_dev_stats none;
	const struct rdmx_dev_stats *shm = ep->lanes.shm ? &ep->lanes.shm->stats : &none;

	*st = (struct fi_rdmx_ep_stats) {
		.rx_malformed = ep->stats.rx_malformed + dev->rx_malformed + shm->rx_malformed,
		.rx_dropped = dev->rx_dropped + shm->rx_dropped,
		.rx_unexpected = ep->stats.rx_unexpected,
		.rx_no_recv = ep->stats.rx_no_recv,
		.tx_errors = ep->stats.tx_errors,
		.retransmits = dev->retransmits,
		.fast_retransmits = dev->fast_retransmits,
		.duplicates = dev->duplicates,
		.acks_sent = dev->acks_sent,
		.rnr_sent = dev->rnr_sent,
		.rnr_received = dev->rnr_received,
		.rnr_completions = ep->stats.rnr_completions,
		.rnr_backoffs = ep->stats.rnr_backoffs,
		.eagain = ep->stats.eagain,
		.peers_unreachable = dev->unreachable + shm->unreachable,
		.rx_unauth = dev->rx_unauth,
		.challenges = dev->challenges,
		.rx_stale = dev->stale,
		.budget_used = rdmx_budget_used(&ep->budget),
		.budget_peak = rdmx_budget_peak(&ep->budget),
		.budget_refused = rdmx_budget_refusals(&ep->budget),
		.anon_peers = ep->anon_peers,
		.shm_peers = ep->lanes.shm_peers,
		.tx_gso = dev->tx_gso,
		.rx_gro = dev->rx_gro,
	};
}

/*
 * Logs the counters at close: those of query_stats, and the udp device's
 * paths' (FI_RDMX_PATHS) and system calls and the packets posted as
 * segments, which the extension's structure predates.
 */
static void rdmx_ep_log_stats(const struct rdmx_ep *ep)
{
	const struct rdmx_dev_stats *dev = &ep->lanes.nic->stats;
	struct fi_rdmx_ep_stats st;

	rdmx_ep_stats(ep, &st);
	RDMX_INFO(FI_LOG_EP_CTRL,
		  "ep stats: rx_malformed=%lu rx_dropped=%lu rx_unexpected=%lu "
		  "rx_no_recv=%lu tx_errors=%lu retransmits=%lu "
		  "fast_retransmits=%lu duplicates=%lu acks_sent=%lu rnr_sent=%lu "
		  "rnr_received=%lu rnr_completions=%lu rnr_backoffs=%lu "
		  "eagain=%lu peers_unreachable=%lu rx_unauth=%lu challenges=%lu "
		  "rx_stale=%lu budget_used=%lu budget_peak=%lu budget_refused=%lu "
		  "anon_peers=%lu tx_gso=%lu rx_gro=%lu path_probes=%lu "
		  "rx_other_path=%lu tx_calls=%lu rx_calls=%lu rx_empty=%lu tx_segs=%lu\n",
		  st.rx_malformed, st.rx_dropped, st.rx_unexpected, st.rx_no_recv,
		  st.tx_errors, st.retransmits, st.fast_retransmits, st.duplicates,
		  st.acks_sent, st.rnr_sent, st.rnr_received, st.rnr_completions,
		  st.rnr_backoffs, st.eagain, st.peers_unreachable, st.rx_unauth,
		  st.challenges, st.rx_stale, st.budget_used, st.budget_peak,
		  st.budget_refused, st.anon_peers, st.tx_gso, st.rx_gro, dev->path_probes,
		  dev->rx_other_path, dev->tx_calls, dev->rx_calls, dev->rx_empty, dev->tx_segs);
}

static int rdmx_ep_query_stats(struct fid_ep *ep_fid, struct fi_rdmx_ep_stats *stats)
{
	struct rdmx_ep *ep;

	if (!ep_fid || ep_fid->fid.fclass != FI_CLASS_EP || !stats)
		return -FI_EINVAL;
	ep = rdmx_ep(ep_fid);
	rdmx_lock_acquire(&ep->domain->lock);
	rdmx_ep_stats(ep, stats);
	rdmx_lock_release(&ep->domain->lock);
	return 0;
}

static struct fi_rdmx_ep_ops rdmx_ep_ext_ops = {
	.size = sizeof(struct fi_rdmx_ep_ops),
	.query_stats = rdmx_ep_query_stats,
};

static int rdmx_ep_ops_open(struct fid *fid, const char *name, uint64_t flags,
			    void **ops, void *context)
{
	(void) fid; (void) context;
	if (!name || strcmp(name, FI_RDMX_EP_OPS) || flags || !ops)
		return -FI_ENOSYS;
	*ops = &rdmx_ep_ext_ops;
	return 0;
}

/*
 * How long each of the two steps of a graceful fi_close may keep making
 * progress: long enough for several retransmissions of a lost packet even
 * on a host so busy that a process waits tens of milliseconds for a core
 * (a step ends as soon as its work is done: a quiet close takes well
 * under a millisecond), short enough that a program closing with a dead
 * peer barely notices (200 ms at most in all).
 */
#define RDMX_EP_CLOSE_NS	100000000ULL

/*
 * Whether something handed to the device has not finished: a send, or a
 * packet of our own (the clear to send of a message the peer is waiting
 * to see completed, a handshake answer): until its peer acknowledged it,
 * a close notice could overtake it and fail what was delivered.
 */
static bool rdmx_ep_sends_out(const struct rdmx_ep *ep)
{
	const struct rdmx_dlist *it;
	size_t waiting = 0;

	rdmx_dlist_foreach(&ep->peer_list, it)
		waiting += rdmx_container_of(it, const struct rdmx_peer, link)->pending_cnt;
	return ep->txe_pool.in_use > waiting || ep->pke_pool.in_use ||
	       ep->pke_heap || rdmx_rxm_cts_out(ep);
}

/*
 * The graceful part of fi_close, each step bounded by RDMX_EP_CLOSE_NS:
 * sends in flight get the time to be acknowledged (a send that completed
 * at injection may still be on its way), then every peer of a session
 * under way is told with a CLOSE, and progress goes on until the device
 * finished each (the peer acknowledged it) or the time is up. The device
 * sends the acknowledgements it still owes when it closes.
 */
static void rdmx_ep_linger(struct rdmx_ep *ep)
{
	uint64_t deadline = rdmx_clock_ns() + RDMX_EP_CLOSE_NS;

	while (rdmx_ep_sends_out(ep) && rdmx_clock_ns() < deadline)
		rdmx_ep_progress(ep);
	if (!rdmx_conn_goodbye(ep))
		return;
	deadline = rdmx_clock_ns() + RDMX_EP_CLOSE_NS;
	while (ep->close_out && rdmx_clock_ns() < deadline)
		rdmx_ep_progress(ep);
	if (ep->close_out)
		RDMX_INFO(FI_LOG_EP_CTRL, "%zu close notices not acknowledged in time\n",
			  ep->close_out);
}

static int rdmx_ep_close(struct fid *fid)
{
	struct rdmx_ep *ep = rdmx_container_of(fid, struct rdmx_ep, ep_fid.fid);
	struct rdmx_dlist *it;

	rdmx_ep_log_stats(ep);
	if (ep->cm)
		rdmx_cm_leave(ep);
	rdmx_wait_leave(&ep->auto_member);
	rdmx_lock_acquire(&ep->domain->lock);
	if (ep->enabled)
		rdmx_ep_linger(ep);
	if (ep->enabled && (ep->caps & FI_RMA_EVENT))
		rdmx_epset_del(&ep->domain->rma_eps, &ep->domain->rma_refs, ep);
	/* No more progress; sends the peers still queue fail first. */
	ep->enabled = false;
	if (ep->dgram) {
		rdmx_ud_drain(ep);
	} else {
		rdmx_peer_destroy_all(ep, FI_ECANCELED);
		rdmx_tx_drain(ep);
		rdmx_recv_drain(ep);
	}
	rdmx_ep_watch(ep, false);
	if (ep->tx_cq)
		rdmx_epset_del(&ep->tx_cq->eps, &ep->tx_cq->refs, ep);
	if (ep->rx_cq)
		rdmx_epset_del(&ep->rx_cq->eps, &ep->rx_cq->refs, ep);
	for (int k = 0; k < RDMX_SINK_KINDS; k++) {
		if (ep->tx_sink.cntrs[k])
			rdmx_epset_del(&ep->tx_sink.cntrs[k]->eps, &ep->tx_sink.cntrs[k]->refs, ep);
		if (ep->rx_sink.cntrs[k])
			rdmx_epset_del(&ep->rx_sink.cntrs[k]->eps, &ep->rx_sink.cntrs[k]->refs, ep);
	}
	rdmx_lock_release(&ep->domain->lock);
	if (ep->av)
		rdmx_av_detach(ep->av, ep);
	if (ep->cm)
		rdmx_cm_free(ep);
	ep->lanes.nic->ops->close(ep->lanes.nic);
	rdmx_lanes_close(&ep->lanes);
	/* Packets the device held when the linger gave up: it is gone now. */
	while ((it = rdmx_dlist_pop_front(&ep->pke_heaped)))
		free(rdmx_container_of(it, struct rdmx_pke, heap_link));
	rdmx_ep_free_buffers(ep);
	free(ep->peers);
	rdmx_ref_put(&ep->domain->refs);
	free(ep);
	return 0;
}

/* What the endpoint asks of its devices: bound to src (canonical). */
static struct rdmx_dev_attr rdmx_ep_dev_attr(const struct rdmx_ep *ep, const void *src)
{
	return (struct rdmx_dev_attr) {
		.src_addr = src,
		.domain = &ep->domain->dev_dom,
		/* A send entry and a segment packet each per tx_size. */
		.sq_size = 2 * ep->tx_size,
		.rq_size = g_rdmx_params.rx_bufs,
		.unreliable = ep->dgram,
	};
}

/* Opens the NIC device bound to a canonical source address. */
static int rdmx_ep_open_dev(struct rdmx_ep *ep, const void *src)
{
	struct rdmx_dev_attr attr = rdmx_ep_dev_attr(ep, src);
	const struct rdmx_dev_ops *ops = ep->domain->dev_ops;
	uint8_t name[RDMX_DEV_ADDR_MAX];
	char text[96];
	int ret = ops->open(&attr, &ep->lanes.nic);

	if (ret)
		return ret;
	if (!ep->dgram)
		ep->lanes.nic->admit = (struct rdmx_dev_admit) { rdmx_ep_admit, ep };
	ops->getname(ep->lanes.nic, name);
	ops->addr_str(name, text, sizeof(text));
	RDMX_INFO(FI_LOG_EP_CTRL, "endpoint %s on domain %s, packets of %zu bytes\n",
		  text, ep->domain->dev_dom.name, ep->lanes.nic->caps.mtu);
	return 0;
}

int rdmx_ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct rdmx_ep *ep = rdmx_container_of(fid, struct rdmx_ep, ep_fid.fid);
	const struct rdmx_dev_ops *ops = ep->lanes.nic->ops;
	uint8_t canon[RDMX_DEV_ADDR_MAX];

	ops->getname(ep->lanes.nic, canon);
	return rdmx_copy_out(canon, ops->addr_len(canon), addr, addrlen);
}

int rdmx_ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct rdmx_ep *ep = rdmx_container_of(fid, struct rdmx_ep, ep_fid.fid);
	uint8_t canon[RDMX_DEV_ADDR_MAX];
	struct rdmx_dev *old = ep->lanes.nic;
	int ret;

	if (ep->enabled) {
		RDMX_WARN(FI_LOG_EP_CTRL, "fi_setname after fi_enable\n");
		return -FI_EOPBADSTATE;
	}
	if (ep->domain->dev_ops->addr_canon(addr, addrlen, canon))
		return -FI_EINVAL;
	ret = rdmx_ep_open_dev(ep, canon);
	if (ret) {
		ep->lanes.nic = old;
		return ret;
	}
	old->ops->close(old);
	/* The new address may sit on an interface with another MTU. */
	rdmx_ep_free_buffers(ep);
	return rdmx_ep_alloc_buffers(ep);
}

static ssize_t rdmx_ep_cancel(fid_t fid, void *context)
{
	struct rdmx_ep *ep = rdmx_container_of(fid, struct rdmx_ep, ep_fid.fid);
	int ret;

	rdmx_lock_acquire(&ep->domain->lock);
	ret = ep->dgram ? rdmx_ud_cancel(ep, context) : rdmx_recv_cancel(ep, context);
	rdmx_lock_release(&ep->domain->lock);
	return ret;
}

/*
 * Whether rdmx knows the option: FI_OPT_MIN_MULTI_RECV, and
 * FI_OPT_CM_DATA_SIZE (read only) on a FI_EP_MSG endpoint.
 */
static bool rdmx_ep_opt_known(const struct rdmx_ep *ep, int level, int optname)
{
	if (level == FI_OPT_ENDPOINT && (optname == FI_OPT_MIN_MULTI_RECV ||
					 (optname == FI_OPT_CM_DATA_SIZE && ep->cm)))
		return true;
	RDMX_INFO(FI_LOG_EP_CTRL, "unknown option %d at level %d\n", optname, level);
	return false;
}

static int rdmx_ep_getopt(fid_t fid, int level, int optname, void *optval,
			  size_t *optlen)
{
	struct rdmx_ep *ep = rdmx_container_of(fid, struct rdmx_ep, ep_fid.fid);

	if (!rdmx_ep_opt_known(ep, level, optname))
		return -FI_ENOPROTOOPT;
	return rdmx_opt_size_out(optname == FI_OPT_CM_DATA_SIZE ? RDMX_CM_DATA_MAX :
				 ep->min_multi_recv, optval, optlen);
}

static int rdmx_ep_setopt(fid_t fid, int level, int optname, const void *optval,
			  size_t optlen)
{
	struct rdmx_ep *ep = rdmx_container_of(fid, struct rdmx_ep, ep_fid.fid);

	if (!rdmx_ep_opt_known(ep, level, optname) || optname == FI_OPT_CM_DATA_SIZE)
		return -FI_ENOPROTOOPT;
	if (!optval || optlen != sizeof(size_t))
		return -FI_EINVAL;
	rdmx_lock_acquire(&ep->domain->lock);
	ep->min_multi_recv = *(const size_t *) optval;
	rdmx_lock_release(&ep->domain->lock);
	return 0;
}

static ssize_t rdmx_ep_rx_size_left(struct fid_ep *ep_fid)
{
	struct rdmx_ep *ep = rdmx_ep(ep_fid);

	return (ssize_t) (ep->rxe_pool.count - ep->rxe_pool.in_use);
}

static ssize_t rdmx_ep_tx_size_left(struct fid_ep *ep_fid)
{
	struct rdmx_ep *ep = rdmx_ep(ep_fid);

	return (ssize_t) (ep->txe_pool.count - ep->txe_pool.in_use);
}

static struct fi_ops rdmx_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rdmx_ep_close,
	.bind = rdmx_ep_bind,
	.control = rdmx_ep_control,
	.ops_open = rdmx_ep_ops_open,
	.tostr = rdmx_no_tostr,
	.ops_set = rdmx_no_ops_set,
};

static struct fi_ops_ep rdmx_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = rdmx_ep_cancel,
	.getopt = rdmx_ep_getopt,
	.setopt = rdmx_ep_setopt,
	.tx_ctx = rdmx_no_tx_ctx,
	.rx_ctx = rdmx_no_rx_ctx,
	.rx_size_left = rdmx_ep_rx_size_left,
	.tx_size_left = rdmx_ep_tx_size_left,
};

/* A FI_EP_MSG endpoint's (rdmx_cm.c). */
static struct fi_ops_cm rdmx_msg_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = rdmx_cm_setname,
	.getname = rdmx_cm_getname,
	.getpeer = rdmx_cm_getpeer,
	.connect = rdmx_cm_connect,
	.listen = rdmx_no_listen,
	.accept = rdmx_cm_accept,
	.reject = rdmx_no_reject,
	.shutdown = rdmx_cm_shutdown,
	.join = rdmx_no_join,
};

static struct fi_ops_cm rdmx_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = rdmx_ep_setname,
	.getname = rdmx_ep_getname,
	.getpeer = rdmx_no_getpeer,
	.connect = rdmx_no_connect,
	.listen = rdmx_no_listen,
	.accept = rdmx_no_accept,
	.reject = rdmx_no_reject,
	.shutdown = rdmx_no_shutdown,
	.join = rdmx_no_join,
};

/* Reads sizes and flags from info (or the defaults when info is NULL). */
static int rdmx_ep_configure(struct rdmx_ep *ep, const struct fi_info *info,
			     const uint8_t **src_p, uint8_t *src_buf)
{
	const struct rdmx_dev_ops *ops = ep->domain->dev_ops;

	enum fi_ep_type type = info && info->ep_attr ? info->ep_attr->type : FI_EP_UNSPEC;
	uint64_t offered;

	if (type != FI_EP_RDM && type != FI_EP_DGRAM && type != FI_EP_MSG &&
	    type != FI_EP_UNSPEC) {
		RDMX_WARN(FI_LOG_EP_CTRL, "endpoint type %s not offered\n",
			  fi_tostr(&type, FI_TYPE_EP_TYPE));
		return -FI_EINVAL;
	}
	ep->dgram = type == FI_EP_DGRAM;
	offered = ep->dgram ? RDMX_UD_CAPS : type == FI_EP_MSG ? RDMX_MSG_CAPS : RDMX_CAPS;
	if (info && info->caps & ~offered) {
		RDMX_WARN(FI_LOG_EP_CTRL, "caps %s not offered\n",
			  fi_tostr(&info->caps, FI_TYPE_CAPS));
		return -FI_EINVAL;
	}
	ep->caps = info && info->caps ? info->caps : offered & ~(uint64_t) RDMX_ASKED_CAPS;
	/* FI_SOURCE_ERR goes with FI_SOURCE (fi_getinfo(3)). */
	if ((ep->caps & FI_SOURCE_ERR) && !(ep->caps & FI_SOURCE)) {
		RDMX_WARN(FI_LOG_EP_CTRL, "FI_SOURCE_ERR without FI_SOURCE\n");
		return -FI_EINVAL;
	}
	/*
	 * A FI_EP_MSG endpoint's connection steps are tagged, named by
	 * sender, and take send and receive entries of their own.
	 */
	if (type == FI_EP_MSG)
		ep->caps |= FI_TAGGED | FI_SOURCE;
	if (!(ep->caps & (FI_SEND | FI_RECV)))
		ep->caps |= FI_SEND | FI_RECV;
	/* FI_RMA or FI_ATOMIC without any of the four directions means all (fi_getinfo(3)). */
	if ((ep->caps & (FI_RMA | FI_ATOMIC)) &&
	    !(ep->caps & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)))
		ep->caps |= FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	ep->tx_size = info && info->tx_attr && info->tx_attr->size ?
		      info->tx_attr->size : g_rdmx_params.tx_size;
	ep->rx_size = info && info->rx_attr && info->rx_attr->size ?
		      info->rx_attr->size : g_rdmx_params.rx_size;
	ep->tx_op_flags = info && info->tx_attr ? info->tx_attr->op_flags : 0;
	if (ep->tx_op_flags & rdmx_levels_refused(ep->dgram ? FI_EP_DGRAM : FI_EP_RDM)) {
		RDMX_WARN(FI_LOG_EP_CTRL, "tx op_flags: completion level not supported\n");
		return -FI_EBADFLAGS;
	}
	ep->rx_op_flags = info && info->rx_attr ? info->rx_attr->op_flags : 0;
	if (type == FI_EP_MSG) {
		ep->tx_size += RDMX_CM_TX;
		ep->rx_size += RDMX_CM_RX;
	}
	ep->min_multi_recv = RDMX_MIN_MULTI_RECV;
	ep->inject_size = info && info->tx_attr && info->tx_attr->inject_size ?
			  info->tx_attr->inject_size : g_rdmx_params.inject_size;
	/* A datagram endpoint keeps the size fi_getinfo offered it. */
	ep->max_msg_size = ep->dgram && info && info->ep_attr ? info->ep_attr->max_msg_size : 0;

	*src_p = ep->domain->dev_dom.addr;
	if (type == FI_EP_MSG && info->handle && info->handle->fclass == FI_CLASS_PEP) {
		*src_p = src_buf;
		return rdmx_pep_yield(info->handle, src_buf);
	}
	if (info && info->src_addr) {
		if (ops->addr_canon(info->src_addr, info->src_addrlen, src_buf)) {
			RDMX_WARN(FI_LOG_EP_CTRL, "src_addr is not a valid address\n");
			return -FI_EINVAL;
		}
		*src_p = src_buf;
	}
	return 0;
}

int rdmx_ep_open(struct fid_domain *domain, struct fi_info *info,
		 struct fid_ep **ep_p, void *context)
{
	uint8_t src_buf[RDMX_DEV_ADDR_MAX];
	struct rdmx_dev_attr attr;
	const uint8_t *src;
	struct rdmx_ep *ep;
	int ret;

	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->domain = rdmx_domain(domain);
	ep->keys = &ep->domain->mrs.keys;
	rdmx_sink_construct(&ep->tx_sink);
	rdmx_sink_construct(&ep->rx_sink);
	ret = rdmx_ep_configure(ep, info, &src, src_buf);
	if (ret)
		goto err_free_ep;
	ret = rdmx_ep_open_dev(ep, src);
	if (ret)
		goto err_free_ep;
	attr = rdmx_ep_dev_attr(ep, src);
	/* A datagram endpoint's datagrams all go by the NIC. */
	rdmx_lanes_open(&ep->lanes, &attr, g_rdmx_params.shm && !ep->dgram);
	ret = rdmx_ep_alloc_buffers(ep);
	if (ret)
		goto err_close_dev;
	rdmx_ep_queues_init(ep);
	rdmx_budget_construct(&ep->budget, g_rdmx_params.rx_budget);
	rdmx_order_construct(ep);
	ep->rng = rdmx_clock_ns() | 1;
	rdmx_conn_ep_init(ep);
	if (info && info->ep_attr && info->ep_attr->type == FI_EP_MSG) {
		ret = rdmx_cm_open(ep, info);
		if (ret)
			goto err_free_buffers;
	}

	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &rdmx_ep_fi_ops;
	ep->ep_fid.ops = &rdmx_ep_ops;
	ep->ep_fid.cm = ep->cm ? &rdmx_msg_cm_ops : &rdmx_ep_cm_ops;
	ep->ep_fid.msg = &rdmx_msg_ops;
	ep->ep_fid.tagged = &rdmx_tagged_ops;
	ep->ep_fid.rma = &rdmx_rma_ops;
	ep->ep_fid.atomic = &rdmx_atomic_ops;
	ep->ep_fid.collective = &rdmx_no_collective_ops;
	rdmx_ref_get(&ep->domain->refs);
	*ep_p = &ep->ep_fid;
	return 0;

err_free_buffers:
	rdmx_ep_free_buffers(ep);
err_close_dev:
	ep->lanes.nic->ops->close(ep->lanes.nic);
	rdmx_lanes_close(&ep->lanes);
err_free_ep:
	free(ep);
	return ret;
}
