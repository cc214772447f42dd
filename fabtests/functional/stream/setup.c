/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_stream: fi_info, the AV, buffers, open and close (see stream.h). */
#include "stream.h"

static struct fi_info *st_hints(const struct st_opts *o)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		return NULL;
	hints->tx_attr->op_flags = o->completion == ST_COMPLETION_DELIVERY ?
				   FI_DELIVERY_COMPLETE : FI_INJECT_COMPLETE;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED | FI_SOURCE | (o->untagged ? FI_MSG : 0);
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
	return hints;
}

/* Resolves host:port of receiver r and inserts it into the AV. */
static int st_insert_receiver(struct st *st, struct fi_info *hints, uint32_t r)
{
	struct fi_info *info = NULL;
	int ret = r ? fi_getinfo(ST_FI_VERSION, st->opts.host, st->opts.ports[r], 0,
				 hints, &info) : 0;

	if (ret)
		return ft_err("fi_getinfo (receiver address)", ret);
	if (!r)
		info = st->info;
	if (!info->dest_addr)
		ret = ft_fail("no dest_addr for %s port %s", st->opts.host,
			      st->opts.ports[r]);
	else if (fi_av_insert(st->rdm.av, info->dest_addr, 1, &st->peers[r].addr, 0,
			      NULL) != 1)
		ret = ft_fail("fi_av_insert of %s port %s failed", st->opts.host,
			      st->opts.ports[r]);
	if (r)
		fi_freeinfo(info);
	return ret;
}

static uint8_t *st_carve(struct st *st, size_t len)
{
	uint8_t *p = st->mem + st->mem_used;

	st->mem_used += (len + ST_ALIGN - 1) & ~(size_t) (ST_ALIGN - 1);
	return p;
}

/* One area for every buffer (registered once if the provider asks). */
static int st_alloc(struct st *st)
{
	size_t ctrl = (sizeof(struct st_ctrl) + ST_ALIGN - 1) & ~(size_t) (ST_ALIGN - 1);
	size_t data = (st->max_msg_size + FT_GUARD + ST_ALIGN - 1) & ~(size_t) (ST_ALIGN - 1);
	uint32_t npeers = st->opts.receiver ? st->opts.senders : st->opts.nports;
	size_t nbufs = st->opts.receiver ? st->window : (size_t) npeers * st->window;
	int ret;

	st->mem_len = (3 * (size_t) npeers + 1) * ctrl + nbufs * data;
	if (posix_memalign((void **) &st->mem, 4096, st->mem_len))
		return -FI_ENOMEM;
	memset(st->mem, FT_POISON, st->mem_len);
	st->hello = (struct st_ctrl *) st_carve(st, sizeof(struct st_ctrl));
	st->hello_rx.kind = ST_OP_CTRL_RX;
	for (uint32_t r = 0; r < npeers; r++) {
		struct st_peer *p = &st->peers[r];

		p->ctrl_out = (struct st_ctrl *) st_carve(st, sizeof(struct st_ctrl));
		p->accept_in = (struct st_ctrl *) st_carve(st, sizeof(struct st_ctrl));
		p->done_in = (struct st_ctrl *) st_carve(st, sizeof(struct st_ctrl));
		p->ctrl_tx = (struct st_op) { .kind = ST_OP_CTRL_TX, .peer = r };
		p->accept_rx = (struct st_op) { .kind = ST_OP_CTRL_RX, .peer = r };
		p->done_rx = (struct st_op) { .kind = ST_OP_CTRL_RX, .peer = r };
		if (st->opts.receiver)
			continue;
		p->tx = calloc(st->window, sizeof(*p->tx));
		p->free_tx = calloc(st->window, sizeof(*p->free_tx));
		if (!p->tx || !p->free_tx)
			return -FI_ENOMEM;
		for (uint32_t i = 0; i < st->window; i++) {
			p->tx[i] = (struct st_op) { .kind = ST_OP_DATA_TX, .peer = r,
						    .buf = st_carve(st, data) };
			p->free_tx[p->nfree++] = st->window - 1 - i;
		}
	}
	if (st->opts.receiver) {
		st->rx = calloc(st->window, sizeof(*st->rx));
		if (!st->rx)
			return -FI_ENOMEM;
		for (uint32_t i = 0; i < st->window; i++)
			st->rx[i] = (struct st_op) { .kind = ST_OP_DATA_RX,
						     .buf = st_carve(st, data) };
	}
	if (!(st->info->domain_attr->mr_mode & FI_MR_LOCAL))
		return 0;
	ret = fi_mr_reg(st->rdm.domain, st->mem, st->mem_len, FI_SEND | FI_RECV, 0, 0, 0,
			&st->mr, NULL);
	if (ret)
		return ft_err("fi_mr_reg", ret);
	st->desc = fi_mr_desc(st->mr);
	return 0;
}

/* Gets the fi_info: the bound address (receiver) or receiver 0 (sender). */
static int st_getinfo(struct st *st, struct fi_info *hints)
{
	const struct st_opts *o = &st->opts;
	int ret = o->receiver ?
		  fi_getinfo(ST_FI_VERSION, o->bind_addr, o->ports[0], FI_SOURCE, hints,
			     &st->info) :
		  fi_getinfo(ST_FI_VERSION, o->host, o->ports[0], 0, hints, &st->info);

	if (ret)
		return ft_err("fi_getinfo", ret);
	st->max_msg_size = st_min(st->info->ep_attr->max_msg_size, o->max_size);
	st->window = o->window ? o->window :
		     o->receiver ? ST_DEFAULT_RX_WINDOW : ST_DEFAULT_TX_WINDOW;
	if (o->receiver && st->window + 2 > st->info->rx_attr->size)
		return ft_fail("--window %u leaves no room in rx_attr->size %zu",
			       st->window, st->info->rx_attr->size);
	return 0;
}

int st_open(struct st *st)
{
	struct fi_info *hints = st_hints(&st->opts);
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	ret = st_getinfo(st, hints);
	if (!ret)
		ret = ft_rdm_open(&st->rdm, st->info, 0);
	if (!ret)
		ret = st_alloc(st);
	if (!ret)
		ret = ft_rdm_enable(&st->rdm, st->info);
	for (uint32_t r = 0; !ret && !st->opts.receiver && r < st->opts.nports; r++) {
		ret = st_insert_receiver(st, hints, r);
		st->npeers++;
	}
	fi_freeinfo(hints);
	st->last_event_ns = ft_now_ns();
	return ret;
}

/* Closes everything in the reverse order of st_open; 0 or an error. */
int st_close(struct st *st)
{
	int status = 0;

	ft_rdm_close_ep(&st->rdm, &status);
	ft_close_fid(st->mr ? &st->mr->fid : NULL, "fi_close (mr)", &status);
	ft_rdm_close(&st->rdm, &status);
	for (uint32_t r = 0; r < ST_PEERS_MAX; r++) {
		free(st->peers[r].seen);
		free(st->peers[r].tx);
		free(st->peers[r].free_tx);
	}
	free(st->rx);
	free(st->mem);
	fi_freeinfo(st->info);
	return status;
}
