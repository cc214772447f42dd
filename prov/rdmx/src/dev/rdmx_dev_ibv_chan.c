/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the completion channel of the efa and verbs devices (see
 * rdmx_dev_ibv_chan.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_dev_ibv_chan.h"

/*
 * Whether a device went without a descriptor in this process: an EFA
 * device without CQ notifications refuses every endpoint's channel, and
 * one warning says it for all of them.
 */
static atomic_bool rdmx_ibv_chan_warned;

/* Drops the channel, saying why once per process. */
static void rdmx_ibv_chan_without(struct rdmx_ibv_chan *chan, const char *why)
{
	if (chan->ch)
		(void) g_rdmx_ibv->destroy_comp_channel(chan->ch);
	chan->ch = NULL;
	if (!atomic_exchange(&rdmx_ibv_chan_warned, true))
		RDMX_WARN(FI_LOG_EP_CTRL, "%s: no completion channel (%s): a "
			  "sleeping thread polls this device every %llu us\n",
			  chan->kind, why, RDMX_DEV_WAIT_TICK_NS / 1000);
	else
		RDMX_INFO(FI_LOG_EP_CTRL, "%s: no completion channel (%s)\n",
			  chan->kind, why);
}

void rdmx_ibv_chan_open(struct rdmx_ibv_chan *chan, const struct rdmx_ibv_core *core,
			const char *kind, rdmx_ibv_wc_read_fn read)
{
	int flags;

	*chan = (struct rdmx_ibv_chan) { .read = read, .kind = kind };
	chan->ch = g_rdmx_ibv->create_comp_channel(core->ctx);
	if (!chan->ch) {
		rdmx_ibv_chan_without(chan, errno ? strerror(errno) : "failed");
		return;
	}
	/* Events are taken in poll_cq, which must never block. */
	flags = fcntl(chan->ch->fd, F_GETFL);
	if (flags < 0 || fcntl(chan->ch->fd, F_SETFL, flags | O_NONBLOCK))
		rdmx_ibv_chan_without(chan, strerror(errno));
}

bool rdmx_ibv_chan_refused(struct rdmx_ibv_chan *chan,
			   struct ibv_cq_init_attr_ex *attr)
{
	if (!attr->channel || errno != EOPNOTSUPP)
		return false;
	attr->channel = NULL;
	rdmx_ibv_chan_without(chan, "the cq refuses one");
	return true;
}

void rdmx_ibv_chan_close(struct rdmx_ibv_chan *chan, struct ibv_cq_ex *cq)
{
	if (cq)
		(void) g_rdmx_ibv->destroy_cq(ibv_cq_ex_to_cq(cq));
	if (chan->ch)
		(void) g_rdmx_ibv->destroy_comp_channel(chan->ch);
	chan->ch = NULL;
	chan->armed = chan->kept = false;
}

/* Asks for an event at cq's next completion; false when it cannot. */
static bool rdmx_ibv_chan_notify(struct rdmx_ibv_chan *chan, struct ibv_cq_ex *cq)
{
	int ret = g_rdmx_ibv->req_notify_cq(ibv_cq_ex_to_cq(cq), 0);

	if (!ret) {
		chan->armed = true;
		return true;
	}
	if (!chan->arm_warned)
		RDMX_WARN(FI_LOG_CQ, "%s: ibv_req_notify_cq: %s: a sleeping thread "
			  "polls this device every %llu us\n", chan->kind,
			  strerror(ret), RDMX_DEV_WAIT_TICK_NS / 1000);
	chan->arm_warned = true;
	return false;
}

int rdmx_ibv_chan_arm(struct rdmx_ibv_chan *chan, struct ibv_cq_ex *cq,
		      uint64_t *due_p)
{
	struct ibv_poll_cq_attr attr = { 0 };
	bool sure = true;
	int ret;

	if (chan->kept)
		return -FI_EAGAIN;
	if (chan->ch)
		sure = rdmx_ibv_chan_notify(chan, cq);
	/* After the request: what came before it raised no event. */
	ret = g_rdmx_ibv->start_poll(cq, &attr);
	if (!ret) {
		chan->read(chan, &chan->wc);
		g_rdmx_ibv->end_poll(cq);
		chan->kept = true;
		return -FI_EAGAIN;
	}
	/* poll_cq logs a failed poll; the sleep is a tick at most then. */
	if (!sure || ret != ENOENT)
		*due_p = RDMX_MIN(*due_p, rdmx_clock_ns() + RDMX_DEV_WAIT_TICK_NS);
	return 0;
}

void rdmx_ibv_chan_drain(struct rdmx_ibv_chan *chan)
{
	struct ibv_cq *cq;
	void *context;

	chan->armed = false;
	/* One CQ per channel, an event or two per sleep: each acked at once. */
	while (!g_rdmx_ibv->get_cq_event(chan->ch, &cq, &context))
		g_rdmx_ibv->ack_cq_events(cq, 1);
	if (errno != EAGAIN)
		RDMX_DBG(FI_LOG_CQ, "%s: ibv_get_cq_event: %s\n", chan->kind,
			 strerror(errno));
}
