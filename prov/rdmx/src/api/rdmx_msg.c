/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the FI_MSG and FI_TAGGED calls. Each turns its arguments into one
 * send or receive request for the protocol layer, under the domain lock,
 * and progresses the endpoint when the request must wait for room (or,
 * for a peek, for what already arrived).
 */
#include <rdma/fi_tagged.h>

#include "rdmx.h"
#include "rdmx_post.h"
#include "rdmx_rx.h"
#include "rdmx_wire.h"

static ssize_t rdmx_msg_check_flags(uint64_t flags, uint64_t allowed)
{
	if (flags & ~allowed) {
		RDMX_WARN(FI_LOG_EP_DATA, "operation flags %#lx not supported\n",
			  (unsigned long) (flags & ~allowed));
		return -FI_EBADFLAGS;
	}
	return 0;
}

/*
 * A receive request from any of the receive calls. Inline in each: its
 * arguments are not passed twice, the last two of them on the stack.
 */
static inline ssize_t rdmx_recv_common(struct fid_ep *ep_fid, const struct iovec *iov,
				       size_t count, fi_addr_t src, uint64_t tag,
				       uint64_t ignore, void *context, uint64_t flags)
{
	struct rdmx_ep *ep = rdmx_ep(ep_fid);
	struct rdmx_recv_req req = {
		.iov = iov,
		.iov_cnt = count,
		.src = src,
		.tag = tag,
		.ignore = ignore,
		.context = context,
		.flags = flags,
	};
	ssize_t ret;

	/* A FI_EP_MSG endpoint's connection steps own tag bit 63 (rdmx_cm.h). */
	if (ep->cm && (flags & FI_TAGGED)) {
		if (tag & RDMX_CM_TAG_BIT)
			return -FI_EINVAL;
		req.ignore &= ~RDMX_CM_TAG_BIT;
	}
	rdmx_lock_acquire(&ep->domain->lock);
	/* What already waits in the device counts as arrived for a peek. */
	if (flags & FI_PEEK)
		rdmx_ep_progress(ep);
	ret = ep->dgram ? rdmx_ud_recv(ep, &req) : rdmx_recv(ep, &req);
	rdmx_lock_release(&ep->domain->lock);
	/* A receive that took an unexpected long message may have read it. */
	rdmx_autoprog_wake(&ep->domain->autoprog);
	return ret;
}

/* A send request from any of the send calls; inline in each, as above. */
static inline ssize_t rdmx_send_common(struct fid_ep *ep_fid, const struct iovec *iov,
				       size_t count, fi_addr_t dest, uint64_t tag,
				       uint64_t data, void *context, uint64_t flags,
				       bool inject_op)
{
	struct rdmx_ep *ep = rdmx_ep(ep_fid);
	struct rdmx_send_req req = {
		.iov = iov,
		.iov_cnt = count,
		.dest = dest,
		.tag = tag,
		.data = data,
		.context = context,
		.flags = flags,
		.inject_op = inject_op,
	};

	if (ep->cm && (flags & FI_TAGGED) && (tag & RDMX_CM_TAG_BIT))
		return -FI_EINVAL;
	return rdmx_post_send(ep, &req);
}

static ssize_t rdmx_msg_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			     fi_addr_t src, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	(void) desc;
	return rdmx_recv_common(ep, &iov, 1, src, 0, 0, context,
				rdmx_ep(ep)->rx_op_flags);
}

static ssize_t rdmx_msg_recvv(struct fid_ep *ep, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t src,
			      void *context)
{
	(void) desc;
	return rdmx_recv_common(ep, iov, count, src, 0, 0, context,
				rdmx_ep(ep)->rx_op_flags);
}

static ssize_t rdmx_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
				uint64_t flags)
{
	ssize_t ret = rdmx_msg_check_flags(flags, RDMX_RX_MSG_FLAGS);

	if (ret)
		return ret;
	return rdmx_recv_common(ep, msg->msg_iov, msg->iov_count, msg->addr, 0, 0,
				msg->context, flags);
}

static ssize_t rdmx_msg_send(struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, fi_addr_t dest, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	(void) desc;
	return rdmx_send_common(ep, &iov, 1, dest, 0, 0, context,
				rdmx_ep(ep)->tx_op_flags, false);
}

static ssize_t rdmx_msg_sendv(struct fid_ep *ep, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest,
			      void *context)
{
	(void) desc;
	return rdmx_send_common(ep, iov, count, dest, 0, 0, context,
				rdmx_ep(ep)->tx_op_flags, false);
}

static ssize_t rdmx_msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
				uint64_t flags)
{
	ssize_t ret = rdmx_msg_check_flags(flags, RDMX_TX_MSG_FLAGS);

	if (ret)
		return ret;
	return rdmx_send_common(ep, msg->msg_iov, msg->iov_count, msg->addr, 0,
				msg->data, msg->context, flags, false);
}

static ssize_t rdmx_msg_inject(struct fid_ep *ep, const void *buf, size_t len,
			       fi_addr_t dest)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return rdmx_send_common(ep, &iov, 1, dest, 0, 0, NULL, FI_INJECT, true);
}

static ssize_t rdmx_msg_senddata(struct fid_ep *ep, const void *buf, size_t len,
				 void *desc, uint64_t data, fi_addr_t dest,
				 void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	(void) desc;
	return rdmx_send_common(ep, &iov, 1, dest, 0, data, context,
				rdmx_ep(ep)->tx_op_flags | FI_REMOTE_CQ_DATA,
				false);
}

static ssize_t rdmx_msg_injectdata(struct fid_ep *ep, const void *buf,
				   size_t len, uint64_t data, fi_addr_t dest)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return rdmx_send_common(ep, &iov, 1, dest, 0, data, NULL,
				FI_INJECT | FI_REMOTE_CQ_DATA, true);
}

static ssize_t rdmx_tagged_recv(struct fid_ep *ep, void *buf, size_t len,
				void *desc, fi_addr_t src, uint64_t tag,
				uint64_t ignore, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	(void) desc;
	return rdmx_recv_common(ep, &iov, 1, src, tag, ignore, context,
				rdmx_ep(ep)->rx_op_flags | FI_TAGGED);
}

static ssize_t rdmx_tagged_recvv(struct fid_ep *ep, const struct iovec *iov,
				 void **desc, size_t count, fi_addr_t src,
				 uint64_t tag, uint64_t ignore, void *context)
{
	(void) desc;
	return rdmx_recv_common(ep, iov, count, src, tag, ignore, context,
				rdmx_ep(ep)->rx_op_flags | FI_TAGGED);
}

static ssize_t rdmx_tagged_recvmsg(struct fid_ep *ep,
				   const struct fi_msg_tagged *msg,
				   uint64_t flags)
{
	ssize_t ret = rdmx_msg_check_flags(flags, RDMX_RX_TAGGED_FLAGS);

	if (ret)
		return ret;
	return rdmx_recv_common(ep, msg->msg_iov, msg->iov_count, msg->addr,
				msg->tag, msg->ignore, msg->context,
				flags | FI_TAGGED);
}

static ssize_t rdmx_tagged_send(struct fid_ep *ep, const void *buf, size_t len,
				void *desc, fi_addr_t dest, uint64_t tag,
				void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	(void) desc;
	return rdmx_send_common(ep, &iov, 1, dest, tag, 0, context,
				rdmx_ep(ep)->tx_op_flags | FI_TAGGED, false);
}

static ssize_t rdmx_tagged_sendv(struct fid_ep *ep, const struct iovec *iov,
				 void **desc, size_t count, fi_addr_t dest,
				 uint64_t tag, void *context)
{
	(void) desc;
	return rdmx_send_common(ep, iov, count, dest, tag, 0, context,
				rdmx_ep(ep)->tx_op_flags | FI_TAGGED, false);
}

static ssize_t rdmx_tagged_sendmsg(struct fid_ep *ep,
				   const struct fi_msg_tagged *msg,
				   uint64_t flags)
{
	ssize_t ret = rdmx_msg_check_flags(flags, RDMX_TX_MSG_FLAGS);

	if (ret)
		return ret;
	return rdmx_send_common(ep, msg->msg_iov, msg->iov_count, msg->addr,
				msg->tag, msg->data, msg->context,
				flags | FI_TAGGED, false);
}

static ssize_t rdmx_tagged_inject(struct fid_ep *ep, const void *buf, size_t len,
				  fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return rdmx_send_common(ep, &iov, 1, dest, tag, 0, NULL,
				FI_INJECT | FI_TAGGED, true);
}

static ssize_t rdmx_tagged_senddata(struct fid_ep *ep, const void *buf,
				    size_t len, void *desc, uint64_t data,
				    fi_addr_t dest, uint64_t tag, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	(void) desc;
	return rdmx_send_common(ep, &iov, 1, dest, tag, data, context,
				rdmx_ep(ep)->tx_op_flags | FI_TAGGED |
				FI_REMOTE_CQ_DATA, false);
}

static ssize_t rdmx_tagged_injectdata(struct fid_ep *ep, const void *buf,
				      size_t len, uint64_t data, fi_addr_t dest,
				      uint64_t tag)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return rdmx_send_common(ep, &iov, 1, dest, tag, data, NULL,
				FI_INJECT | FI_TAGGED | FI_REMOTE_CQ_DATA, true);
}

struct fi_ops_msg rdmx_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = rdmx_msg_recv,
	.recvv = rdmx_msg_recvv,
	.recvmsg = rdmx_msg_recvmsg,
	.send = rdmx_msg_send,
	.sendv = rdmx_msg_sendv,
	.sendmsg = rdmx_msg_sendmsg,
	.inject = rdmx_msg_inject,
	.senddata = rdmx_msg_senddata,
	.injectdata = rdmx_msg_injectdata,
};

struct fi_ops_tagged rdmx_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = rdmx_tagged_recv,
	.recvv = rdmx_tagged_recvv,
	.recvmsg = rdmx_tagged_recvmsg,
	.send = rdmx_tagged_send,
	.sendv = rdmx_tagged_sendv,
	.sendmsg = rdmx_tagged_sendmsg,
	.inject = rdmx_tagged_inject,
	.senddata = rdmx_tagged_senddata,
	.injectdata = rdmx_tagged_injectdata,
};
