/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the real rdma-core behind g_rdmx_ibv (see rdmx_ibv.h). Where
 * rdma-core exports a function, the table points at it; where the call is
 * an inline function or a macro in rdma-core's headers, a wrapper here
 * makes it addressable.
 */
#include "rdmx_ibv.h"

static int rdmx_ibv_query_port(struct ibv_context *context, uint8_t port_num,
			       struct ibv_port_attr *attr)
{
	return ibv_query_port(context, port_num, attr);
}

static struct ibv_mr *rdmx_ibv_reg_mr(struct ibv_pd *pd, void *addr,
				      size_t length, int access)
{
	return ibv_reg_mr(pd, addr, length, access);
}

static struct ibv_cq_ex *rdmx_ibv_create_cq_ex(struct ibv_context *context,
					       struct ibv_cq_init_attr_ex *attr)
{
	return ibv_create_cq_ex(context, attr);
}

static int rdmx_ibv_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	return ibv_start_poll(cq, attr);
}

static int rdmx_ibv_next_poll(struct ibv_cq_ex *cq)
{
	return ibv_next_poll(cq);
}

static void rdmx_ibv_end_poll(struct ibv_cq_ex *cq)
{
	ibv_end_poll(cq);
}

static enum ibv_wc_opcode rdmx_ibv_wc_read_opcode(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_opcode(cq);
}

static uint32_t rdmx_ibv_wc_read_vendor_err(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_vendor_err(cq);
}

static uint32_t rdmx_ibv_wc_read_byte_len(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_byte_len(cq);
}

static uint32_t rdmx_ibv_wc_read_src_qp(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_src_qp(cq);
}

static uint32_t rdmx_ibv_wc_read_slid(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_slid(cq);
}

static unsigned int rdmx_ibv_wc_read_wc_flags(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_wc_flags(cq);
}

static __be32 rdmx_ibv_wc_read_imm_data(struct ibv_cq_ex *cq)
{
	return ibv_wc_read_imm_data(cq);
}

static int rdmx_ibv_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return ibv_req_notify_cq(cq, solicited_only);
}

static struct ibv_qp *rdmx_ibv_create_qp_ex(struct ibv_context *context,
					    struct ibv_qp_init_attr_ex *attr)
{
	return ibv_create_qp_ex(context, attr);
}

static int rdmx_ibv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			      struct ibv_recv_wr **bad_wr)
{
	return ibv_post_recv(qp, wr, bad_wr);
}

static void rdmx_ibv_wr_start(struct ibv_qp_ex *qp)
{
	ibv_wr_start(qp);
}

static void rdmx_ibv_wr_send_imm(struct ibv_qp_ex *qp, __be32 imm_data)
{
	ibv_wr_send_imm(qp, imm_data);
}

static void rdmx_ibv_wr_rdma_read(struct ibv_qp_ex *qp, uint32_t rkey,
				  uint64_t remote_addr)
{
	ibv_wr_rdma_read(qp, rkey, remote_addr);
}

static void rdmx_ibv_wr_set_ud_addr(struct ibv_qp_ex *qp, struct ibv_ah *ah,
				    uint32_t remote_qpn, uint32_t remote_qkey)
{
	ibv_wr_set_ud_addr(qp, ah, remote_qpn, remote_qkey);
}

static void rdmx_ibv_wr_set_sge_list(struct ibv_qp_ex *qp, size_t num_sge,
				     const struct ibv_sge *sg_list)
{
	ibv_wr_set_sge_list(qp, num_sge, sg_list);
}

static void rdmx_ibv_wr_set_inline_data_list(struct ibv_qp_ex *qp, size_t num_buf,
					     const struct ibv_data_buf *buf_list)
{
	ibv_wr_set_inline_data_list(qp, num_buf, buf_list);
}

static int rdmx_ibv_wr_complete(struct ibv_qp_ex *qp)
{
	return ibv_wr_complete(qp);
}

static int rdmx_ibv_efadv_wc_read_sgid(struct efadv_cq *cq, union ibv_gid *sgid)
{
	return efadv_wc_read_sgid(cq, sgid);
}

const struct rdmx_ibv_api rdmx_ibv_real = {
	.get_device_list = ibv_get_device_list,
	.free_device_list = ibv_free_device_list,
	.get_device_name = ibv_get_device_name,
	.open_device = ibv_open_device,
	.close_device = ibv_close_device,
	.query_device = ibv_query_device,
	.query_port = rdmx_ibv_query_port,
	.query_gid = ibv_query_gid,
	.alloc_pd = ibv_alloc_pd,
	.dealloc_pd = ibv_dealloc_pd,
	.reg_mr = rdmx_ibv_reg_mr,
	.dereg_mr = ibv_dereg_mr,
	.create_cq_ex = rdmx_ibv_create_cq_ex,
	.destroy_cq = ibv_destroy_cq,
	.start_poll = rdmx_ibv_start_poll,
	.next_poll = rdmx_ibv_next_poll,
	.end_poll = rdmx_ibv_end_poll,
	.wc_read_opcode = rdmx_ibv_wc_read_opcode,
	.wc_read_vendor_err = rdmx_ibv_wc_read_vendor_err,
	.wc_read_byte_len = rdmx_ibv_wc_read_byte_len,
	.wc_read_src_qp = rdmx_ibv_wc_read_src_qp,
	.wc_read_slid = rdmx_ibv_wc_read_slid,
	.wc_read_wc_flags = rdmx_ibv_wc_read_wc_flags,
	.wc_read_imm_data = rdmx_ibv_wc_read_imm_data,
	.create_comp_channel = ibv_create_comp_channel,
	.destroy_comp_channel = ibv_destroy_comp_channel,
	.req_notify_cq = rdmx_ibv_req_notify_cq,
	.get_cq_event = ibv_get_cq_event,
	.ack_cq_events = ibv_ack_cq_events,
	.create_qp_ex = rdmx_ibv_create_qp_ex,
	.modify_qp = ibv_modify_qp,
	.destroy_qp = ibv_destroy_qp,
	.qp_to_qp_ex = ibv_qp_to_qp_ex,
	.post_recv = rdmx_ibv_post_recv,
	.wr_start = rdmx_ibv_wr_start,
	.wr_send_imm = rdmx_ibv_wr_send_imm,
	.wr_rdma_read = rdmx_ibv_wr_rdma_read,
	.wr_set_ud_addr = rdmx_ibv_wr_set_ud_addr,
	.wr_set_sge_list = rdmx_ibv_wr_set_sge_list,
	.wr_set_inline_data_list = rdmx_ibv_wr_set_inline_data_list,
	.wr_complete = rdmx_ibv_wr_complete,
	.create_ah = ibv_create_ah,
	.destroy_ah = ibv_destroy_ah,
	.efadv_query_device = efadv_query_device,
	.efadv_create_qp_ex = efadv_create_qp_ex,
	.efadv_create_cq = efadv_create_cq,
	.efadv_query_ah = efadv_query_ah,
	.efadv_cq_from_ibv_cq_ex = efadv_cq_from_ibv_cq_ex,
	.efadv_wc_read_sgid = rdmx_ibv_efadv_wc_read_sgid,
};

const struct rdmx_ibv_api *g_rdmx_ibv = &rdmx_ibv_real;
