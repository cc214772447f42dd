/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: the fake rdma-core's completion channels (see
 * fake_ibv.h and the list at the top of fake_ibv.c). What they model,
 * from ibv_create_comp_channel(3), ibv_req_notify_cq(3),
 * ibv_get_cq_event(3) and libibverbs/libefa (rdma-core v44):
 * - a channel is a descriptor; the kernel writes one event (the CQ's
 *   handle) to it per notification, and ibv_get_cq_event reads one,
 *   failing with errno EAGAIN on an O_NONBLOCK descriptor with none.
 *   The fake's descriptor is the read end of a pipe that carries the
 *   fake CQ's address, so it is readable exactly while events wait. A
 *   get on a blocking descriptor with none waiting would hang the test:
 *   the fake ends it as misuse instead;
 * - ibv_req_notify_cq arms a CQ: the next completion queued on it raises
 *   one event and disarms it. A completion already queued when it was
 *   armed raises none (what the verbs man page promises, the least a
 *   device may do): a caller arms, then polls once more;
 * - libefa: a CQ with a channel is EOPNOTSUPP when the kernel reports no
 *   CQ notifications (fake_ibv_dev_cfg.no_cq_events), and solicited_only
 *   notifications are EOPNOTSUPP;
 * - every event got must be acknowledged (ibv_ack_cq_events) before
 *   ibv_destroy_cq, which otherwise waits for ever: the fake ends the
 *   test as misuse; acknowledging more than were got is misuse too.
 *   Events never got go with their CQ; ibv_destroy_comp_channel is
 *   EBUSY while a CQ uses the channel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake_ibv_int.h"

struct fake_chan {
	struct ibv_comp_channel	ch;		/* ch.fd: the pipe's read end */
	int			wfd;		/* its write end */
	size_t			pending;	/* events in the pipe */
};

static struct fake_chan *fake_chan(struct ibv_comp_channel *ch)
{
	return rdmx_container_of(ch, struct fake_chan, ch);
}

void fake_ibv_events(struct fake_ibv_events *out)
{
	*out = g_fake.events;
}

struct ibv_comp_channel *fake_create_comp_channel(struct ibv_context *ctx)
{
	struct fake_chan *chan;
	int fds[2];

	if (fake_fails(FAKE_IBV_CREATE_COMP_CHANNEL))
		return NULL;
	chan = calloc(1, sizeof(*chan));
	if (!chan) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(fds, O_CLOEXEC)) {
		free(chan);
		return NULL;
	}
	chan->ch.context = ctx;
	chan->ch.fd = fds[0];
	chan->wfd = fds[1];
	g_fake.live++;
	return &chan->ch;
}

int fake_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	struct fake_chan *chan = fake_chan(ch);

	if (ch->refcnt)
		return EBUSY;
	close(chan->ch.fd);
	close(chan->wfd);
	free(chan);
	g_fake.live--;
	return 0;
}

int fake_chan_check(struct ibv_context *ctx, const struct ibv_cq_init_attr_ex *attr)
{
	const struct fake_ibv_dev_cfg *cfg = &((struct fake_dev *) ctx->device)->cfg;

	if (attr->channel && cfg->kind == FAKE_IBV_EFA && cfg->no_cq_events)
		return EOPNOTSUPP;
	return 0;
}

void fake_chan_attach(struct fake_cq *cq, const struct ibv_cq_init_attr_ex *attr)
{
	cq->cq.channel = attr->channel;
	cq->cq.cq_context = attr->cq_context;
	if (!attr->channel)
		return;
	cq->chan = fake_chan(attr->channel);
	attr->channel->refcnt++;
}

/* Reads one event from the pipe (one is there). */
static struct fake_cq *fake_chan_read(struct fake_chan *chan)
{
	struct fake_cq *cq;

	if (read(chan->ch.fd, &cq, sizeof(cq)) != (ssize_t) sizeof(cq))
		fake_misuse("completion channel pipe lost an event");
	chan->pending--;
	return cq;
}

static void fake_chan_write(struct fake_chan *chan, struct fake_cq *cq)
{
	if (write(chan->wfd, &cq, sizeof(cq)) != (ssize_t) sizeof(cq))
		fake_misuse("completion channel pipe is full");
	chan->pending++;
}

void fake_chan_detach(struct fake_cq *cq)
{
	struct fake_chan *chan = cq->chan;
	size_t n;

	if (!chan)
		return;
	if (cq->unacked)
		fake_misuse("ibv_destroy_cq with completion events not acknowledged "
			    "(rdma-core waits for them for ever)");
	/* The events nobody got go with the CQ; other CQs' stay, in order. */
	n = chan->pending;
	for (size_t i = 0; i < n; i++) {
		struct fake_cq *of = fake_chan_read(chan);

		if (of != cq)
			fake_chan_write(chan, of);
	}
	chan->ch.refcnt--;
	cq->chan = NULL;
}

void fake_chan_raise(struct fake_cq *cq)
{
	if (!cq->armed)
		return;
	cq->armed = false;
	fake_chan_write(cq->chan, cq);
	g_fake.events.raised++;
}

int fake_req_notify_cq(struct ibv_cq *ibv_cq, int solicited_only)
{
	struct fake_cq *cq = (struct fake_cq *) ibv_cq;
	const struct fake_ibv_dev_cfg *cfg =
		&((struct fake_dev *) ibv_cq->context->device)->cfg;
	int err = fake_fails(FAKE_IBV_REQ_NOTIFY_CQ);

	if (err)
		return err;
	if (solicited_only && cfg->kind == FAKE_IBV_EFA)
		return EOPNOTSUPP;
	/* Nothing could carry the event. */
	if (!cq->chan)
		return EINVAL;
	cq->armed = true;
	g_fake.events.arms++;
	return 0;
}

int fake_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq_p,
		      void **context_p)
{
	struct fake_chan *chan = fake_chan(ch);
	struct fake_cq *cq;

	if (!chan->pending) {
		if (!(fcntl(ch->fd, F_GETFL) & O_NONBLOCK))
			fake_misuse("ibv_get_cq_event on a blocking channel with no "
				    "event waits for ever");
		errno = EAGAIN;
		return -1;
	}
	cq = fake_chan_read(chan);
	cq->unacked++;
	g_fake.events.got++;
	*cq_p = (struct ibv_cq *) &cq->cq;
	*context_p = cq->cq.cq_context;
	return 0;
}

void fake_ack_cq_events(struct ibv_cq *ibv_cq, unsigned int n)
{
	struct fake_cq *cq = (struct fake_cq *) ibv_cq;

	if (n > cq->unacked)
		fake_misuse("ibv_ack_cq_events acknowledges events not got");
	cq->unacked -= n;
	g_fake.events.acked += n;
}
