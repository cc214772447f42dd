/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the completion channel of an rdma-core device (efa, verbs): the
 * descriptor a sleeping thread waits on (rdmx_dev.h, wait_fd and
 * wait_arm), as rdma-core offers one (ibv_create_comp_channel(3)).
 *
 * The device's CQ is created with the channel. Before a sleep,
 * rdmx_ibv_chan_arm asks for an event at the CQ's next completion
 * (ibv_req_notify_cq) and then polls the CQ once more: a completion that
 * came between the last poll and the request may raise no event, so the
 * sleeper would miss it. What that poll finds is read whole into the
 * channel (ibv_wc_read_* work only while a poll is open) and handed to
 * the next poll_cq first, so nothing is lost and no poll stays open
 * across calls. The next poll_cq takes the channel's events without
 * blocking (its descriptor is O_NONBLOCK) and acknowledges each at once:
 * ibv_destroy_cq waits for every event it reported to be acknowledged.
 *
 * A device whose channel cannot be made, or whose CQ refuses one (an EFA
 * device without CQ notifications: EOPNOTSUPP), has no descriptor
 * (rdmx_ibv_chan_fd -1): the caller polls it every RDMX_DEV_WAIT_TICK_NS.
 * Every rdma-core call goes through g_rdmx_ibv (rdmx_ibv.h).
 */
#ifndef RDMX_DEV_IBV_CHAN_H
#define RDMX_DEV_IBV_CHAN_H

#include <stdbool.h>
#include <stdint.h>

#include "rdmx_dev_ibv.h"

/*
 * One work completion, with what the devices use of it: read while it is
 * the CQ's current one, and handled then or after a wait_arm kept it.
 */
struct rdmx_ibv_wc {
	uint64_t		wr_id;
	enum ibv_wc_status	status;
	uint32_t		vendor_err;	/* efa, when status is not SUCCESS */
	/* Receives that succeeded: */
	uint32_t		connid;		/* the immediate data; 0: none, so
						   no rdmx queue pair sent it */
	uint32_t		byte_len;
	uint32_t		src_qp;
	bool			grh;		/* verbs: IBV_WC_GRH */
	bool			have_gid;	/* efa: sgid names the sender */
	union ibv_gid		sgid;
};

struct rdmx_ibv_chan;

/*
 * The device's reader: fills wc from its CQ's current completion, which
 * it knows how to read (the fields its CQ was created with).
 */
typedef void (*rdmx_ibv_wc_read_fn)(struct rdmx_ibv_chan *chan,
				    struct rdmx_ibv_wc *wc);

struct rdmx_ibv_chan {
	struct ibv_comp_channel	*ch;		/* NULL: no descriptor */
	rdmx_ibv_wc_read_fn	read;
	const char		*kind;		/* "efa", "verbs", for the log */
	bool			armed;		/* an event was asked for since
						   the last poll */
	bool			kept;		/* wc waits for the next poll */
	bool			arm_warned;	/* a failed arm was logged */
	struct rdmx_ibv_wc	wc;
};

/*
 * Prepares chan for a device of kind and makes its channel on core's
 * device, O_NONBLOCK. A channel that cannot be made is logged (once per
 * process) and the device goes without.
 */
void rdmx_ibv_chan_open(struct rdmx_ibv_chan *chan, const struct rdmx_ibv_core *core,
			const char *kind, rdmx_ibv_wc_read_fn read);

/*
 * After creating a CQ with attr failed: true when the CQ refused the
 * channel (EOPNOTSUPP); the channel is then gone (logged once per
 * process), attr->channel NULL, and the caller creates the CQ again
 * without. False leaves errno as the failure set it.
 */
bool rdmx_ibv_chan_refused(struct rdmx_ibv_chan *chan,
			   struct ibv_cq_init_attr_ex *attr);

/*
 * Destroys cq (NULL: none was made) and then the channel, which outlives
 * every CQ created with it.
 */
void rdmx_ibv_chan_close(struct rdmx_ibv_chan *chan, struct ibv_cq_ex *cq);

/* The descriptor for wait_fd: the channel's, or -1. */
static inline int rdmx_ibv_chan_fd(const struct rdmx_ibv_chan *chan)
{
	return chan->ch ? chan->ch->fd : -1;
}

/*
 * wait_arm's part for cq (rdmx_dev.h): -FI_EAGAIN when a completion is
 * there (kept for the next poll); else 0, the channel armed. An arm that
 * fails lowers *due_p to a tick from now (logged once per device).
 */
int rdmx_ibv_chan_arm(struct rdmx_ibv_chan *chan, struct ibv_cq_ex *cq,
		      uint64_t *due_p);

/* Takes and acknowledges the channel's events; see rdmx_ibv_chan_wake. */
void rdmx_ibv_chan_drain(struct rdmx_ibv_chan *chan);

/*
 * The start of every poll_cq: ends what wait_arm began (the events of an
 * armed channel taken without blocking and acknowledged). Costs nothing
 * when no wait_arm came since the last poll.
 */
static inline void rdmx_ibv_chan_wake(struct rdmx_ibv_chan *chan)
{
	if (chan->armed)
		rdmx_ibv_chan_drain(chan);
}

/*
 * The completion wait_arm kept, which the caller handles now, before
 * polling the CQ; NULL when none. Valid until the next wait_arm.
 */
static inline const struct rdmx_ibv_wc *rdmx_ibv_chan_take(struct rdmx_ibv_chan *chan)
{
	if (!chan->kept)
		return NULL;
	chan->kept = false;
	return &chan->wc;
}

#endif /* RDMX_DEV_IBV_CHAN_H */
