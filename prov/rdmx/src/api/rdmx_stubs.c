/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: -FI_ENOSYS stubs and stub tables (see rdmx_stubs.h). */
#include "rdmx.h"
#include "rdmx_stubs.h"

int rdmx_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void) fid; (void) bfid; (void) flags;
	return -FI_ENOSYS;
}

int rdmx_no_control(struct fid *fid, int command, void *arg)
{
	(void) fid; (void) command; (void) arg;
	return -FI_ENOSYS;
}

int rdmx_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		     void **ops, void *context)
{
	(void) fid; (void) name; (void) flags; (void) ops; (void) context;
	return -FI_ENOSYS;
}

int rdmx_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void) fid; (void) buf; (void) len;
	return -FI_ENOSYS;
}

int rdmx_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		    void *ops, void *context)
{
	(void) fid; (void) name; (void) flags; (void) ops; (void) context;
	return -FI_ENOSYS;
}

int rdmx_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void) ep; (void) addr; (void) addrlen;
	return -FI_ENOSYS;
}

int rdmx_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		    size_t paramlen)
{
	(void) ep; (void) addr; (void) param; (void) paramlen;
	return -FI_ENOSYS;
}

int rdmx_no_listen(struct fid_pep *pep)
{
	(void) pep;
	return -FI_ENOSYS;
}

int rdmx_no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	(void) ep; (void) param; (void) paramlen;
	return -FI_ENOSYS;
}

int rdmx_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		   size_t paramlen)
{
	(void) pep; (void) handle; (void) param; (void) paramlen;
	return -FI_ENOSYS;
}

int rdmx_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void) ep; (void) flags;
	return -FI_ENOSYS;
}

int rdmx_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		 struct fid_mc **mc, void *context)
{
	(void) ep; (void) addr; (void) flags; (void) mc; (void) context;
	return -FI_ENOSYS;
}

ssize_t rdmx_no_cancel(fid_t fid, void *context)
{
	(void) fid; (void) context;
	return -FI_ENOSYS;
}

int rdmx_no_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	(void) fid; (void) level; (void) optname; (void) optval; (void) optlen;
	return -FI_ENOSYS;
}

ssize_t rdmx_no_size_left(struct fid_ep *ep)
{
	(void) ep;
	return -FI_ENOSYS;
}

int rdmx_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		   struct fid_ep **tx_ep, void *context)
{
	(void) sep; (void) index; (void) attr; (void) tx_ep; (void) context;
	return -FI_ENOSYS;
}

int rdmx_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		   struct fid_ep **rx_ep, void *context)
{
	(void) sep; (void) index; (void) attr; (void) rx_ep; (void) context;
	return -FI_ENOSYS;
}

static ssize_t rdmx_no_coll_barrier(struct fid_ep *ep, fi_addr_t coll_addr,
				    void *context)
{
	(void) ep; (void) coll_addr; (void) context;
	return -FI_ENOSYS;
}

static ssize_t rdmx_no_coll_broadcast(struct fid_ep *ep, void *buf, size_t count,
				      void *desc, fi_addr_t coll_addr,
				      fi_addr_t root_addr,
				      enum fi_datatype datatype, uint64_t flags,
				      void *context)
{
	(void) ep; (void) buf; (void) count; (void) desc; (void) coll_addr;
	(void) root_addr; (void) datatype; (void) flags; (void) context;
	return -FI_ENOSYS;
}

/* The shape shared by alltoall and allgather. */
static ssize_t rdmx_no_coll_gather_all(struct fid_ep *ep, const void *buf,
				       size_t count, void *desc, void *result,
				       void *result_desc, fi_addr_t coll_addr,
				       enum fi_datatype datatype, uint64_t flags,
				       void *context)
{
	(void) ep; (void) buf; (void) count; (void) desc; (void) result;
	(void) result_desc; (void) coll_addr; (void) datatype; (void) flags;
	(void) context;
	return -FI_ENOSYS;
}

/* The shape shared by allreduce and reduce_scatter. */
static ssize_t rdmx_no_coll_reduce_all(struct fid_ep *ep, const void *buf,
				       size_t count, void *desc, void *result,
				       void *result_desc, fi_addr_t coll_addr,
				       enum fi_datatype datatype, enum fi_op op,
				       uint64_t flags, void *context)
{
	(void) ep; (void) buf; (void) count; (void) desc; (void) result;
	(void) result_desc; (void) coll_addr; (void) datatype; (void) op;
	(void) flags; (void) context;
	return -FI_ENOSYS;
}

static ssize_t rdmx_no_coll_reduce(struct fid_ep *ep, const void *buf,
				   size_t count, void *desc, void *result,
				   void *result_desc, fi_addr_t coll_addr,
				   fi_addr_t root_addr, enum fi_datatype datatype,
				   enum fi_op op, uint64_t flags, void *context)
{
	(void) ep; (void) buf; (void) count; (void) desc; (void) result;
	(void) result_desc; (void) coll_addr; (void) root_addr;
	(void) datatype; (void) op; (void) flags; (void) context;
	return -FI_ENOSYS;
}

/* The shape shared by scatter and gather. */
static ssize_t rdmx_no_coll_rooted(struct fid_ep *ep, const void *buf,
				   size_t count, void *desc, void *result,
				   void *result_desc, fi_addr_t coll_addr,
				   fi_addr_t root_addr, enum fi_datatype datatype,
				   uint64_t flags, void *context)
{
	(void) ep; (void) buf; (void) count; (void) desc; (void) result;
	(void) result_desc; (void) coll_addr; (void) root_addr;
	(void) datatype; (void) flags; (void) context;
	return -FI_ENOSYS;
}

static ssize_t rdmx_no_coll_msg(struct fid_ep *ep,
				const struct fi_msg_collective *msg,
				struct fi_ioc *resultv, void **result_desc,
				size_t result_count, uint64_t flags)
{
	(void) ep; (void) msg; (void) resultv; (void) result_desc;
	(void) result_count; (void) flags;
	return -FI_ENOSYS;
}

static ssize_t rdmx_no_coll_barrier2(struct fid_ep *ep, fi_addr_t coll_addr,
				     uint64_t flags, void *context)
{
	(void) ep; (void) coll_addr; (void) flags; (void) context;
	return -FI_ENOSYS;
}

struct fi_ops_collective rdmx_no_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = rdmx_no_coll_barrier,
	.broadcast = rdmx_no_coll_broadcast,
	.alltoall = rdmx_no_coll_gather_all,
	.allreduce = rdmx_no_coll_reduce_all,
	.allgather = rdmx_no_coll_gather_all,
	.reduce_scatter = rdmx_no_coll_reduce_all,
	.reduce = rdmx_no_coll_reduce,
	.scatter = rdmx_no_coll_rooted,
	.gather = rdmx_no_coll_rooted,
	.msg = rdmx_no_coll_msg,
	.barrier2 = rdmx_no_coll_barrier2,
};
