/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_wait: the endpoint and what the mode needs (fi_getinfo, the CQ
 * by its wait object, the counter), the pattern messages are cut from,
 * and what rdmx's statistics say after a run.
 */
#include <rdma/fi_ext_rdmx.h>

#include "wait.h"

/*
 * fi_getinfo for the side (auto mode's receiver asks automatic
 * progress); the list, or NULL with the error printed.
 */
struct fi_info *wt_getinfo(const struct wt_opts *o)
{
	struct fi_info *hints = ft_rdm_hints(0), *info;

	if (!hints)
		return NULL;
	if (o->receiver && o->mode == WT_AUTO) {
		hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
		hints->domain_attr->control_progress = FI_PROGRESS_AUTO;
	}
	info = ft_rdm_getinfo_hints(WT_VERSION, o->bind_addr, o->host, o->port, hints);
	fi_freeinfo(hints);
	return info;
}

/* The CQ: its wait object by mode (the receiver's FI_WAIT_FD in fd mode). */
static int wt_open_cq(struct wt *w)
{
	struct fi_cq_attr attr = {
		.format = FI_CQ_FORMAT_TAGGED,
		.wait_obj = w->o->mode == WT_FD && w->o->receiver ? FI_WAIT_FD :
			    FI_WAIT_UNSPEC,
		.size = 4096,
	};
	int ret = fi_cq_open(w->rdm.domain, &attr, &w->rdm.cq, NULL);

	if (ret)
		return ft_err("fi_cq_open", ret);
	if (attr.wait_obj != FI_WAIT_FD)
		return 0;
	ret = fi_control(&w->rdm.cq->fid, FI_GETWAIT, &w->fd);
	return ret ? ft_err("fi_control (FI_GETWAIT)", ret) : 0;
}

/* Cntr mode: a counter bound FI_RECV on the receiver, FI_SEND on the sender. */
static int wt_open_cntr(struct wt *w)
{
	struct fi_cntr_attr attr = {
		.events = FI_CNTR_EVENTS_COMP,
		.wait_obj = FI_WAIT_UNSPEC,
	};
	int ret = fi_cntr_open(w->rdm.domain, &attr, &w->cntr, NULL);

	if (ret)
		return ft_err("fi_cntr_open", ret);
	ret = fi_ep_bind(w->rdm.ep, &w->cntr->fid, w->o->receiver ? FI_RECV : FI_SEND);
	return ret ? ft_err("fi_ep_bind (cntr)", ret) : 0;
}

/*
 * Opens what the mode needs and enables the endpoint; 0 or an error
 * printed (what was opened stays for wt_close).
 */
int wt_open(struct wt *w)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	uint64_t sel = w->o->mode == WT_CNTR ? FI_SELECTIVE_COMPLETION : 0;
	int ret;

	ret = fi_fabric(w->info->fabric_attr, &w->rdm.fabric, NULL);
	if (ret)
		return ft_err("fi_fabric", ret);
	ret = fi_domain(w->rdm.fabric, w->info, &w->rdm.domain, NULL);
	if (ret)
		return ft_err("fi_domain", ret);
	ret = wt_open_cq(w);
	if (ret)
		return ret;
	ret = fi_av_open(w->rdm.domain, &av_attr, &w->rdm.av, NULL);
	if (ret)
		return ft_err("fi_av_open", ret);
	ret = fi_endpoint(w->rdm.domain, w->info, &w->rdm.ep, NULL);
	if (ret)
		return ft_err("fi_endpoint", ret);
	ret = fi_ep_bind(w->rdm.ep, &w->rdm.cq->fid, FI_TRANSMIT | FI_RECV | sel);
	if (ret)
		return ft_err("fi_ep_bind (cq)", ret);
	ret = fi_ep_bind(w->rdm.ep, &w->rdm.av->fid, 0);
	if (ret)
		return ft_err("fi_ep_bind (av)", ret);
	if (w->o->mode == WT_CNTR && (ret = wt_open_cntr(w)))
		return ret;
	ret = fi_enable(w->rdm.ep);
	return ret ? ft_err("fi_enable", ret) : 0;
}

/* Closes what wt_open opened; a failure is kept in *status. */
void wt_close(struct wt *w, int *status)
{
	ft_rdm_close_ep(&w->rdm, status);
	ft_close_fid(w->cntr ? &w->cntr->fid : NULL, "fi_close (cntr)", status);
	ft_rdm_close(&w->rdm, status);
}

/*
 * The lane the peer is reached by, as rdmx's statistics say (shm, nic),
 * or "unknown" under another provider.
 */
const char *wt_lane(struct wt *w)
{
	struct fi_rdmx_ep_ops *ops;
	struct fi_rdmx_ep_stats st;

	if (fi_open_ops(&w->rdm.ep->fid, FI_RDMX_EP_OPS, 0, (void **) &ops, NULL) ||
	    ops->query_stats(w->rdm.ep, &st))
		return "unknown";
	return st.shm_peers ? "shm" : "nic";
}

/* rdmx's statistics of the endpoint on stderr, after a failure, if there are any. */
void wt_print_stats(struct wt *w)
{
	struct fi_rdmx_ep_ops *ops;
	struct fi_rdmx_ep_stats st;

	if (fi_open_ops(&w->rdm.ep->fid, FI_RDMX_EP_OPS, 0, (void **) &ops, NULL) ||
	    ops->query_stats(w->rdm.ep, &st))
		return;
	fprintf(stderr, WT_NAME ": stats: retransmits=%" PRIu64 " rnr_sent=%" PRIu64
		" rnr_received=%" PRIu64 " rnr_backoffs=%" PRIu64 " eagain=%" PRIu64
		" rx_unexpected=%" PRIu64 " peers_unreachable=%" PRIu64 " shm_peers=%" PRIu64
		" budget_refused=%" PRIu64 "\n", st.retransmits, st.rnr_sent, st.rnr_received,
		st.rnr_backoffs, st.eagain, st.rx_unexpected, st.peers_unreachable,
		st.shm_peers, st.budget_refused);
}

/* The pattern messages are cut from, the same on both sides. */
int wt_pattern(struct wt *w)
{
	w->pattern = malloc(WT_PATTERN);
	if (!w->pattern)
		return ft_fail("out of memory");
	ft_pattern_fill(w->pattern, WT_PATTERN, ft_pattern_seed(0, 0, 0, WT_PATTERN));
	return 0;
}

/* Automatic progress given as asked (auto mode's receiver). */
int wt_check_progress(const struct wt *w)
{
	const struct fi_domain_attr *d = w->info->domain_attr;

	if (!w->o->receiver || w->o->mode != WT_AUTO)
		return 0;
	if (d->data_progress != FI_PROGRESS_AUTO || d->control_progress != FI_PROGRESS_AUTO)
		return ft_fail("fi_getinfo gave progress %d/%d, not FI_PROGRESS_AUTO",
			       d->control_progress, d->data_progress);
	return 0;
}
