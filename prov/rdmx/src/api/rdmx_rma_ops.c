/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the FI_RMA calls (fi_rma(3)). Each turns its arguments into one
 * write or read request for the rdm layer (rdmx_rma.c emulates them by
 * messages). A request names one remote segment (rma_iov_limit 1) whose
 * length must be the local buffers' total. Writes and reads complete
 * once the target said so: a refusal there (key, bounds, access) is an
 * error completion with the target's code.
 */
#include <rdma/fi_rma.h>

#include "rdmx.h"
#include "rdmx_post.h"

#define RDMX_RMA_WRITE_FLAGS	RDMX_TX_MSG_FLAGS
#define RDMX_RMA_READ_FLAGS	(FI_COMPLETION | FI_MORE | FI_INJECT_COMPLETE | \
				 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)

/* One write or read; inline in each call, as rdmx_post_send. */
static inline ssize_t rdmx_rma_post(struct fid_ep *ep_fid, enum rdmx_rma_op op,
				    const struct iovec *iov, size_t count, fi_addr_t peer,
				    uint64_t addr, uint64_t key, uint64_t data,
				    void *context, uint64_t flags, bool inject_op)
{
	struct rdmx_ep *ep = rdmx_ep(ep_fid);
	struct rdmx_send_req req = {
		.iov = iov,
		.iov_cnt = count,
		.dest = peer,
		.data = data,
		.context = context,
		.flags = flags,
		.inject_op = inject_op,
		.rma_op = op,
		.rma_key = key,
		.rma_addr = addr,
	};

	return rdmx_post_send(ep, &req);
}

/* The one remote segment of an fi_msg_rma, which must match its buffers. */
static ssize_t rdmx_rma_msg_check(const struct fi_msg_rma *msg, uint64_t flags,
				  uint64_t allowed)
{
	if (flags & ~allowed) {
		RDMX_WARN(FI_LOG_EP_DATA, "RMA flags %#lx not supported\n",
			  (unsigned long) (flags & ~allowed));
		return -FI_EBADFLAGS;
	}
	if (msg->rma_iov_count != 1 || !msg->rma_iov ||
	    msg->rma_iov[0].len != rdmx_iov_len(msg->msg_iov, msg->iov_count)) {
		RDMX_WARN(FI_LOG_EP_DATA, "RMA needs one remote segment as long as "
			  "its local buffers\n");
		return -FI_EINVAL;
	}
	return 0;
}

static ssize_t rdmx_rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc,
			     fi_addr_t src, uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	(void) desc;
	return rdmx_rma_post(ep, RDMX_RMA_READ, &iov, 1, src, addr, key, 0, context,
			     rdmx_ep(ep)->tx_op_flags & RDMX_RMA_READ_FLAGS, false);
}

static ssize_t rdmx_rma_readv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			      size_t count, fi_addr_t src, uint64_t addr, uint64_t key,
			      void *context)
{
	(void) desc;
	return rdmx_rma_post(ep, RDMX_RMA_READ, iov, count, src, addr, key, 0, context,
			     rdmx_ep(ep)->tx_op_flags & RDMX_RMA_READ_FLAGS, false);
}

static ssize_t rdmx_rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
				uint64_t flags)
{
	ssize_t ret = rdmx_rma_msg_check(msg, flags, RDMX_RMA_READ_FLAGS);

	if (ret)
		return ret;
	return rdmx_rma_post(ep, RDMX_RMA_READ, msg->msg_iov, msg->iov_count, msg->addr,
			     msg->rma_iov[0].addr, msg->rma_iov[0].key, 0, msg->context,
			     flags, false);
}

static ssize_t rdmx_rma_write(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			      fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	(void) desc;
	return rdmx_rma_post(ep, RDMX_RMA_WRITE, &iov, 1, dest, addr, key, 0, context,
			     rdmx_ep(ep)->tx_op_flags, false);
}

static ssize_t rdmx_rma_writev(struct fid_ep *ep, const struct iovec *iov, void **desc,
			       size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
			       void *context)
{
	(void) desc;
	return rdmx_rma_post(ep, RDMX_RMA_WRITE, iov, count, dest, addr, key, 0, context,
			     rdmx_ep(ep)->tx_op_flags, false);
}

static ssize_t rdmx_rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
				 uint64_t flags)
{
	ssize_t ret = rdmx_rma_msg_check(msg, flags, RDMX_RMA_WRITE_FLAGS);

	if (ret)
		return ret;
	return rdmx_rma_post(ep, RDMX_RMA_WRITE, msg->msg_iov, msg->iov_count, msg->addr,
			     msg->rma_iov[0].addr, msg->rma_iov[0].key, msg->data,
			     msg->context, flags, false);
}

static ssize_t rdmx_rma_inject(struct fid_ep *ep, const void *buf, size_t len,
			       fi_addr_t dest, uint64_t addr, uint64_t key)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return rdmx_rma_post(ep, RDMX_RMA_WRITE, &iov, 1, dest, addr, key, 0, NULL,
			     FI_INJECT, true);
}

static ssize_t rdmx_rma_writedata(struct fid_ep *ep, const void *buf, size_t len,
				  void *desc, uint64_t data, fi_addr_t dest, uint64_t addr,
				  uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	(void) desc;
	return rdmx_rma_post(ep, RDMX_RMA_WRITE, &iov, 1, dest, addr, key, data, context,
			     rdmx_ep(ep)->tx_op_flags | FI_REMOTE_CQ_DATA, false);
}

static ssize_t rdmx_rma_injectdata(struct fid_ep *ep, const void *buf, size_t len,
				   uint64_t data, fi_addr_t dest, uint64_t addr, uint64_t key)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return rdmx_rma_post(ep, RDMX_RMA_WRITE, &iov, 1, dest, addr, key, data, NULL,
			     FI_INJECT | FI_REMOTE_CQ_DATA, true);
}

struct fi_ops_rma rdmx_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rdmx_rma_read,
	.readv = rdmx_rma_readv,
	.readmsg = rdmx_rma_readmsg,
	.write = rdmx_rma_write,
	.writev = rdmx_rma_writev,
	.writemsg = rdmx_rma_writemsg,
	.inject = rdmx_rma_inject,
	.writedata = rdmx_rma_writedata,
	.injectdata = rdmx_rma_injectdata,
};
