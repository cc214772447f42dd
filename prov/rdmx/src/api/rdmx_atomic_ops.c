/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the FI_ATOMIC calls (fi_atomic(3)). Each turns its arguments into
 * one atomic for the rdm layer: a message of its operands (and compare
 * values) that the target applies under its domain's lock, in the
 * sender's message order, then acknowledges, or for a fetch or compare
 * answers with the old values, which land in the results (rdmx_rma.c).
 * One remote segment per atomic (the target's elements, as many as the
 * operands), at most RDMX_ATOMIC_MAX_BYTES of operands, and
 * RDMX_ATOMIC_IOV buffers each of operands, compare values and results.
 */
#include <rdma/fi_atomic.h>

#include "rdmx.h"
#include "rdmx_atomic.h"
#include "rdmx_post.h"

#define RDMX_ATOMIC_FLAGS	(FI_COMPLETION | FI_INJECT | FI_MORE | FI_INJECT_COMPLETE | \
				 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)

/* The buffers of an atomic's operands, compare values and results. */
struct rdmx_atomic_bufs {
	const struct fi_ioc	*src;
	size_t			src_cnt;
	const struct fi_ioc	*cmp;
	size_t			cmp_cnt;
	const struct fi_ioc	*res;
	size_t			res_cnt;
};

/*
 * Elements in cnt iocs; SIZE_MAX past the limit of buffers, for a buffer
 * without an address, or for counts that do not add up in a size_t.
 */
static size_t rdmx_atomic_elems(const struct fi_ioc *ioc, size_t cnt)
{
	size_t n = 0;

	if (cnt > RDMX_ATOMIC_IOV || (cnt && !ioc))
		return SIZE_MAX;
	for (size_t i = 0; i < cnt; i++) {
		if ((ioc[i].count && !ioc[i].addr) || ioc[i].count >= SIZE_MAX - n)
			return SIZE_MAX;
		n += ioc[i].count;
	}
	return n;
}

/* Appends cnt iocs of size-byte elements to iov at *n. */
static void rdmx_atomic_iov(struct iovec *iov, size_t *n, const struct fi_ioc *ioc, size_t cnt,
			    size_t size)
{
	for (size_t i = 0; i < cnt; i++)
		iov[(*n)++] = (struct iovec) { .iov_base = ioc[i].addr,
					       .iov_len = ioc[i].count * size };
}

/* One atomic of kind; inline in each call, as rdmx_post_send. */
static inline ssize_t rdmx_atomic_post(struct fid_ep *ep_fid, enum rdmx_atomic_kind kind,
				       enum fi_op op, enum fi_datatype datatype,
				       const struct rdmx_atomic_bufs *b, fi_addr_t dest,
				       uint64_t addr, uint64_t key, void *context,
				       uint64_t flags, bool inject_op)
{
	struct rdmx_ep *ep = rdmx_ep(ep_fid);
	size_t size = rdmx_atomic_size(datatype), n = 0, res_n = 0;
	/* An atomic read has no operands: its results say how many. */
	bool by_res = kind == RDMX_ATOMIC_FETCH && op == FI_ATOMIC_READ;
	size_t count = by_res ? rdmx_atomic_elems(b->res, b->res_cnt) :
			        rdmx_atomic_elems(b->src, b->src_cnt);
	struct iovec iov[2 * RDMX_ATOMIC_IOV], res[RDMX_ATOMIC_IOV];
	struct rdmx_send_req req;

	if (flags & ~RDMX_ATOMIC_FLAGS) {
		RDMX_WARN(FI_LOG_EP_DATA, "atomic flags %#lx not supported\n",
			  (unsigned long) (flags & ~RDMX_ATOMIC_FLAGS));
		return -FI_EBADFLAGS;
	}
	if (!rdmx_atomic_valid(kind, op, datatype))
		return -FI_EOPNOTSUPP;
	if (!count || count == SIZE_MAX || count > RDMX_ATOMIC_MAX_BYTES / size ||
	    (kind == RDMX_ATOMIC_COMPARE && rdmx_atomic_elems(b->cmp, b->cmp_cnt) != count) ||
	    (kind != RDMX_ATOMIC_WRITE && rdmx_atomic_elems(b->res, b->res_cnt) != count)) {
		RDMX_WARN(FI_LOG_EP_DATA, "atomic of %zu elements: operands, compare values "
			  "and results must agree, %d at most, in %d buffers each\n", count,
			  (int) (RDMX_ATOMIC_MAX_BYTES / (size ? size : 1)), RDMX_ATOMIC_IOV);
		return -FI_EINVAL;
	}
	if (op != FI_ATOMIC_READ)
		rdmx_atomic_iov(iov, &n, b->src, b->src_cnt, size);
	if (kind == RDMX_ATOMIC_COMPARE)
		rdmx_atomic_iov(iov, &n, b->cmp, b->cmp_cnt, size);
	if (kind != RDMX_ATOMIC_WRITE)
		rdmx_atomic_iov(res, &res_n, b->res, b->res_cnt, size);
	req = (struct rdmx_send_req) {
		.iov = iov,
		.iov_cnt = n,
		.dest = dest,
		.context = context,
		.flags = flags,
		.inject_op = inject_op,
		.rma_op = RDMX_RMA_ATOMIC,
		.rma_key = key,
		.rma_addr = addr,
		.atomic_op = (uint8_t) op,
		.atomic_datatype = (uint8_t) datatype,
		.atomic_count = (uint16_t) count,
		.result = res_n ? res : NULL,
		.result_cnt = res_n,
	};
	return rdmx_post_send(ep, &req);
}

/* The one remote segment of an fi_msg_atomic, as many elements as its operands. */
static ssize_t rdmx_atomic_msg_check(const struct fi_msg_atomic *msg, size_t count)
{
	if (msg->rma_iov_count != 1 || !msg->rma_iov || msg->rma_iov[0].count != count) {
		RDMX_WARN(FI_LOG_EP_DATA, "an atomic needs one remote segment of as many "
			  "elements as its operands\n");
		return -FI_EINVAL;
	}
	return 0;
}

/* The elements an fi_msg_atomic names (its results' for an atomic read). */
static size_t rdmx_atomic_msg_count(const struct fi_msg_atomic *msg,
				    const struct fi_ioc *res, size_t res_cnt)
{
	return msg->op == FI_ATOMIC_READ && res ? rdmx_atomic_elems(res, res_cnt) :
	       rdmx_atomic_elems(msg->msg_iov, msg->iov_count);
}

static ssize_t rdmx_atomic_write(struct fid_ep *ep, const void *buf, size_t count, void *desc,
				 fi_addr_t dest, uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op, void *context)
{
	struct fi_ioc src = { .addr = (void *) buf, .count = count };
	struct rdmx_atomic_bufs b = { .src = &src, .src_cnt = 1 };

	(void) desc;
	return rdmx_atomic_post(ep, RDMX_ATOMIC_WRITE, op, datatype, &b, dest, addr, key,
				context, rdmx_ep(ep)->tx_op_flags & RDMX_ATOMIC_FLAGS, false);
}

static ssize_t rdmx_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
				  size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
				  enum fi_datatype datatype, enum fi_op op, void *context)
{
	struct rdmx_atomic_bufs b = { .src = iov, .src_cnt = count };

	(void) desc;
	return rdmx_atomic_post(ep, RDMX_ATOMIC_WRITE, op, datatype, &b, dest, addr, key,
				context, rdmx_ep(ep)->tx_op_flags & RDMX_ATOMIC_FLAGS, false);
}

static ssize_t rdmx_atomic_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
				    uint64_t flags)
{
	struct rdmx_atomic_bufs b = { .src = msg->msg_iov, .src_cnt = msg->iov_count };
	ssize_t ret = rdmx_atomic_msg_check(msg, rdmx_atomic_msg_count(msg, NULL, 0));

	if (ret)
		return ret;
	return rdmx_atomic_post(ep, RDMX_ATOMIC_WRITE, msg->op, msg->datatype, &b, msg->addr,
				msg->rma_iov[0].addr, msg->rma_iov[0].key, msg->context, flags,
				false);
}

static ssize_t rdmx_atomic_inject(struct fid_ep *ep, const void *buf, size_t count,
				  fi_addr_t dest, uint64_t addr, uint64_t key,
				  enum fi_datatype datatype, enum fi_op op)
{
	struct fi_ioc src = { .addr = (void *) buf, .count = count };
	struct rdmx_atomic_bufs b = { .src = &src, .src_cnt = 1 };

	return rdmx_atomic_post(ep, RDMX_ATOMIC_WRITE, op, datatype, &b, dest, addr, key, NULL,
				FI_INJECT, true);
}

static ssize_t rdmx_atomic_fetch(struct fid_ep *ep, const void *buf, size_t count, void *desc,
				 void *result, void *result_desc, fi_addr_t dest, uint64_t addr,
				 uint64_t key, enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct fi_ioc src = { .addr = (void *) buf, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };
	struct rdmx_atomic_bufs b = { .src = &src, .src_cnt = 1, .res = &res, .res_cnt = 1 };

	(void) desc;
	(void) result_desc;
	return rdmx_atomic_post(ep, RDMX_ATOMIC_FETCH, op, datatype, &b, dest, addr, key,
				context, rdmx_ep(ep)->tx_op_flags & RDMX_ATOMIC_FLAGS, false);
}

static ssize_t rdmx_atomic_fetchv(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
				  size_t count, struct fi_ioc *resultv, void **result_desc,
				  size_t result_count, fi_addr_t dest, uint64_t addr,
				  uint64_t key, enum fi_datatype datatype, enum fi_op op,
				  void *context)
{
	struct rdmx_atomic_bufs b = { .src = iov, .src_cnt = count, .res = resultv,
				      .res_cnt = result_count };

	(void) desc;
	(void) result_desc;
	return rdmx_atomic_post(ep, RDMX_ATOMIC_FETCH, op, datatype, &b, dest, addr, key,
				context, rdmx_ep(ep)->tx_op_flags & RDMX_ATOMIC_FLAGS, false);
}

static ssize_t rdmx_atomic_fetchmsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
				    struct fi_ioc *resultv, void **result_desc,
				    size_t result_count, uint64_t flags)
{
	struct rdmx_atomic_bufs b = { .src = msg->msg_iov, .src_cnt = msg->iov_count,
				      .res = resultv, .res_cnt = result_count };
	ssize_t ret = rdmx_atomic_msg_check(msg, rdmx_atomic_msg_count(msg, resultv,
								       result_count));

	(void) result_desc;
	if (ret)
		return ret;
	return rdmx_atomic_post(ep, RDMX_ATOMIC_FETCH, msg->op, msg->datatype, &b, msg->addr,
				msg->rma_iov[0].addr, msg->rma_iov[0].key, msg->context, flags,
				false);
}

static ssize_t rdmx_atomic_compare(struct fid_ep *ep, const void *buf, size_t count,
				   void *desc, const void *compare, void *compare_desc,
				   void *result, void *result_desc, fi_addr_t dest,
				   uint64_t addr, uint64_t key, enum fi_datatype datatype,
				   enum fi_op op, void *context)
{
	struct fi_ioc src = { .addr = (void *) buf, .count = count };
	struct fi_ioc cmp = { .addr = (void *) compare, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };
	struct rdmx_atomic_bufs b = { .src = &src, .src_cnt = 1, .cmp = &cmp, .cmp_cnt = 1,
				      .res = &res, .res_cnt = 1 };

	(void) desc;
	(void) compare_desc;
	(void) result_desc;
	return rdmx_atomic_post(ep, RDMX_ATOMIC_COMPARE, op, datatype, &b, dest, addr, key,
				context, rdmx_ep(ep)->tx_op_flags & RDMX_ATOMIC_FLAGS, false);
}

static ssize_t rdmx_atomic_comparev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
				    size_t count, const struct fi_ioc *comparev,
				    void **compare_desc, size_t compare_count,
				    struct fi_ioc *resultv, void **result_desc,
				    size_t result_count, fi_addr_t dest, uint64_t addr,
				    uint64_t key, enum fi_datatype datatype, enum fi_op op,
				    void *context)
{
	struct rdmx_atomic_bufs b = { .src = iov, .src_cnt = count, .cmp = comparev,
				      .cmp_cnt = compare_count, .res = resultv,
				      .res_cnt = result_count };

	(void) desc;
	(void) compare_desc;
	(void) result_desc;
	return rdmx_atomic_post(ep, RDMX_ATOMIC_COMPARE, op, datatype, &b, dest, addr, key,
				context, rdmx_ep(ep)->tx_op_flags & RDMX_ATOMIC_FLAGS, false);
}

static ssize_t rdmx_atomic_comparemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
				      const struct fi_ioc *comparev, void **compare_desc,
				      size_t compare_count, struct fi_ioc *resultv,
				      void **result_desc, size_t result_count, uint64_t flags)
{
	struct rdmx_atomic_bufs b = { .src = msg->msg_iov, .src_cnt = msg->iov_count,
				      .cmp = comparev, .cmp_cnt = compare_count,
				      .res = resultv, .res_cnt = result_count };
	ssize_t ret = rdmx_atomic_msg_check(msg, rdmx_atomic_msg_count(msg, NULL, 0));

	(void) compare_desc;
	(void) result_desc;
	if (ret)
		return ret;
	return rdmx_atomic_post(ep, RDMX_ATOMIC_COMPARE, msg->op, msg->datatype, &b, msg->addr,
				msg->rma_iov[0].addr, msg->rma_iov[0].key, msg->context, flags,
				false);
}

/* fi_atomicvalid and the others: whether op on datatype goes, and how many at once. */
static int rdmx_atomic_valid_count(enum rdmx_atomic_kind kind, enum fi_datatype datatype,
				   enum fi_op op, size_t *count)
{
	if (!rdmx_atomic_valid(kind, op, datatype))
		return -FI_EOPNOTSUPP;
	*count = RDMX_ATOMIC_MAX_BYTES / rdmx_atomic_size(datatype);
	return 0;
}

static int rdmx_atomic_writevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op,
				  size_t *count)
{
	(void) ep;
	return rdmx_atomic_valid_count(RDMX_ATOMIC_WRITE, datatype, op, count);
}

static int rdmx_atomic_fetchvalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op,
				  size_t *count)
{
	(void) ep;
	return rdmx_atomic_valid_count(RDMX_ATOMIC_FETCH, datatype, op, count);
}

static int rdmx_atomic_comparevalid(struct fid_ep *ep, enum fi_datatype datatype,
				    enum fi_op op, size_t *count)
{
	(void) ep;
	return rdmx_atomic_valid_count(RDMX_ATOMIC_COMPARE, datatype, op, count);
}

int rdmx_atomic_query(enum fi_datatype datatype, enum fi_op op, struct fi_atomic_attr *attr,
		      uint64_t flags)
{
	enum rdmx_atomic_kind kind = RDMX_ATOMIC_WRITE;
	size_t count;
	int ret;

	if (flags & ~(uint64_t) (FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC) ||
	    (flags & FI_FETCH_ATOMIC && flags & FI_COMPARE_ATOMIC))
		return -FI_EBADFLAGS;
	if (flags & FI_FETCH_ATOMIC)
		kind = RDMX_ATOMIC_FETCH;
	else if (flags & FI_COMPARE_ATOMIC)
		kind = RDMX_ATOMIC_COMPARE;
	ret = rdmx_atomic_valid_count(kind, datatype, op, &count);
	if (ret)
		return ret;
	attr->size = rdmx_atomic_size(datatype);
	attr->count = count;
	return 0;
}

struct fi_ops_atomic rdmx_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = rdmx_atomic_write,
	.writev = rdmx_atomic_writev,
	.writemsg = rdmx_atomic_writemsg,
	.inject = rdmx_atomic_inject,
	.readwrite = rdmx_atomic_fetch,
	.readwritev = rdmx_atomic_fetchv,
	.readwritemsg = rdmx_atomic_fetchmsg,
	.compwrite = rdmx_atomic_compare,
	.compwritev = rdmx_atomic_comparev,
	.compwritemsg = rdmx_atomic_comparemsg,
	.writevalid = rdmx_atomic_writevalid,
	.readwritevalid = rdmx_atomic_fetchvalid,
	.compwritevalid = rdmx_atomic_comparevalid,
};
