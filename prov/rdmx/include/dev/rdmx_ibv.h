/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the seam between the efa and verbs devices and rdma-core. Every
 * libibverbs and libefa call those devices make goes through g_rdmx_ibv,
 * one table of function pointers: in the provider it holds thin wrappers
 * of the real calls (rdmx_ibv.c), in the unit tests a fake rdma-core
 * that behaves as the rdma-core man pages document (prov/rdmx/test/
 * fake_ibv.c). Several of these calls are inline functions in rdma-core's
 * headers (ibv_post_recv, ibv_wr_*, ibv_start_poll, ibv_wc_read_*,
 * ibv_req_notify_cq), which a linker --wrap could not catch; a table
 * catches all of them alike.
 *
 * The fields rdma-core documents as plain struct members are read and
 * written directly: ibv_qp.qp_num, ibv_qp_ex.wr_id and wr_flags,
 * ibv_cq_ex.status and wr_id, ibv_mr.lkey and rkey, ibv_context.device.
 *
 * Only device files include this header.
 */
#ifndef RDMX_IBV_H
#define RDMX_IBV_H

#include <infiniband/verbs.h>
#include <infiniband/efadv.h>

struct rdmx_ibv_api {
	/* Devices (ibv_get_device_list(3), ibv_open_device(3)). */
	struct ibv_device	**(*get_device_list)(int *num_devices);
	void			(*free_device_list)(struct ibv_device **list);
	const char		*(*get_device_name)(struct ibv_device *device);
	struct ibv_context	*(*open_device)(struct ibv_device *device);
	int			(*close_device)(struct ibv_context *context);
	int			(*query_device)(struct ibv_context *context,
						struct ibv_device_attr *attr);
	int			(*query_port)(struct ibv_context *context,
					      uint8_t port_num,
					      struct ibv_port_attr *attr);
	int			(*query_gid)(struct ibv_context *context,
					     uint8_t port_num, int index,
					     union ibv_gid *gid);

	/* Protection domain and memory (ibv_alloc_pd(3), ibv_reg_mr(3)). */
	struct ibv_pd		*(*alloc_pd)(struct ibv_context *context);
	int			(*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr		*(*reg_mr)(struct ibv_pd *pd, void *addr,
					   size_t length, int access);
	int			(*dereg_mr)(struct ibv_mr *mr);

	/* Completion queues (ibv_create_cq_ex(3), efadv_create_cq(3)). */
	struct ibv_cq_ex	*(*create_cq_ex)(struct ibv_context *context,
						 struct ibv_cq_init_attr_ex *attr);
	int			(*destroy_cq)(struct ibv_cq *cq);
	int			(*start_poll)(struct ibv_cq_ex *cq,
					      struct ibv_poll_cq_attr *attr);
	int			(*next_poll)(struct ibv_cq_ex *cq);
	void			(*end_poll)(struct ibv_cq_ex *cq);
	enum ibv_wc_opcode	(*wc_read_opcode)(struct ibv_cq_ex *cq);
	uint32_t		(*wc_read_vendor_err)(struct ibv_cq_ex *cq);
	uint32_t		(*wc_read_byte_len)(struct ibv_cq_ex *cq);
	uint32_t		(*wc_read_src_qp)(struct ibv_cq_ex *cq);
	uint32_t		(*wc_read_slid)(struct ibv_cq_ex *cq);
	unsigned int		(*wc_read_wc_flags)(struct ibv_cq_ex *cq);
	__be32			(*wc_read_imm_data)(struct ibv_cq_ex *cq);

	/*
	 * Completion channels (ibv_create_comp_channel(3),
	 * ibv_req_notify_cq(3), ibv_get_cq_event(3)): a CQ created with one
	 * (ibv_cq_init_attr_ex.channel) and armed queues one event on it at
	 * its next completion.
	 */
	struct ibv_comp_channel	*(*create_comp_channel)(struct ibv_context *context);
	int			(*destroy_comp_channel)(struct ibv_comp_channel *channel);
	int			(*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int			(*get_cq_event)(struct ibv_comp_channel *channel,
						struct ibv_cq **cq, void **cq_context);
	void			(*ack_cq_events)(struct ibv_cq *cq, unsigned int nevents);

	/* Queue pairs (ibv_create_qp_ex(3), ibv_modify_qp(3)). */
	struct ibv_qp		*(*create_qp_ex)(struct ibv_context *context,
						 struct ibv_qp_init_attr_ex *attr);
	int			(*modify_qp)(struct ibv_qp *qp,
					     struct ibv_qp_attr *attr, int mask);
	int			(*destroy_qp)(struct ibv_qp *qp);
	struct ibv_qp_ex	*(*qp_to_qp_ex)(struct ibv_qp *qp);
	int			(*post_recv)(struct ibv_qp *qp,
					     struct ibv_recv_wr *wr,
					     struct ibv_recv_wr **bad_wr);

	/* Work requests (ibv_wr_post(3)). */
	void	(*wr_start)(struct ibv_qp_ex *qp);
	void	(*wr_send_imm)(struct ibv_qp_ex *qp, __be32 imm_data);
	void	(*wr_rdma_read)(struct ibv_qp_ex *qp, uint32_t rkey,
				uint64_t remote_addr);
	void	(*wr_set_ud_addr)(struct ibv_qp_ex *qp, struct ibv_ah *ah,
				  uint32_t remote_qpn, uint32_t remote_qkey);
	void	(*wr_set_sge_list)(struct ibv_qp_ex *qp, size_t num_sge,
				   const struct ibv_sge *sg_list);
	void	(*wr_set_inline_data_list)(struct ibv_qp_ex *qp, size_t num_buf,
					   const struct ibv_data_buf *buf_list);
	int	(*wr_complete)(struct ibv_qp_ex *qp);

	/* Address handles (ibv_create_ah(3)). */
	struct ibv_ah		*(*create_ah)(struct ibv_pd *pd,
					      struct ibv_ah_attr *attr);
	int			(*destroy_ah)(struct ibv_ah *ah);

	/* EFA direct verbs (efadv(7)). */
	int			(*efadv_query_device)(struct ibv_context *context,
						      struct efadv_device_attr *attr,
						      uint32_t inlen);
	struct ibv_qp		*(*efadv_create_qp_ex)(struct ibv_context *context,
						       struct ibv_qp_init_attr_ex *attr,
						       struct efadv_qp_init_attr *efa_attr,
						       uint32_t inlen);
	struct ibv_cq_ex	*(*efadv_create_cq)(struct ibv_context *context,
						    struct ibv_cq_init_attr_ex *attr,
						    struct efadv_cq_init_attr *efa_attr,
						    uint32_t inlen);
	int			(*efadv_query_ah)(struct ibv_ah *ah,
						  struct efadv_ah_attr *attr,
						  uint32_t inlen);
	struct efadv_cq		*(*efadv_cq_from_ibv_cq_ex)(struct ibv_cq_ex *cq);
	int			(*efadv_wc_read_sgid)(struct efadv_cq *cq,
						      union ibv_gid *sgid);
};

/* The rdma-core the devices call: the real one unless a test swaps it. */
extern const struct rdmx_ibv_api *g_rdmx_ibv;

/* The real rdma-core. */
extern const struct rdmx_ibv_api rdmx_ibv_real;

#endif /* RDMX_IBV_H */
