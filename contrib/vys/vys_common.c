/* SPDX-License-Identifier: BSD-2-Clause */
/* vys: what the producer and the consumer share (see vys.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_endpoint.h>

#include "ft_common.h"
#include "vys.h"

/*
 * Four lanes of multiply-rotate over the 8-byte words, folded and mixed:
 * a changed word, or two words swapped, changes the digest.
 */
uint64_t vys_digest(const uint8_t *buf, size_t len)
{
	const uint64_t prime = 0x9e3779b97f4a7c15ull;
	uint64_t lane[4] = { 1, 2, 3, 4 }, w, h;
	size_t i;

	for (i = 0; i < len / 8; i++) {
		memcpy(&w, buf + i * 8, 8);
		lane[i & 3] = ((lane[i & 3] ^ w) * prime);
		lane[i & 3] = lane[i & 3] << 29 | lane[i & 3] >> 35;
	}
	h = len;
	for (i = 0; i < 4; i++)
		h = ft_mix(h ^ lane[i]);
	return h;
}

void vys_fill(uint8_t *buf, size_t len, uint64_t seq)
{
	memcpy(buf, &seq, 8);
	ft_pattern_fill(buf + 8, len - 8, ft_mix(seq));
}

uint64_t vys_seq_of(const uint8_t *buf)
{
	uint64_t seq;

	memcpy(&seq, buf, 8);
	return seq;
}

int vys_mr_reg(struct vys_ep *ve, void *buf, size_t len, uint64_t access,
	       struct fid_mr **mr, void **desc)
{
	bool local = ve->info->domain_attr->mr_mode & FI_MR_LOCAL;
	int ret;

	*mr = NULL;
	*desc = NULL;
	if (!local && !(access & (FI_REMOTE_READ | FI_REMOTE_WRITE)))
		return 0;
	/* A key of our own for each, where the provider does not pick them. */
	ret = fi_mr_reg(ve->rdm.domain, buf, len, access, 0, ve->next_key++, 0, mr, NULL);
	if (ret)
		return ft_err("fi_mr_reg", ret);
	*desc = fi_mr_desc(*mr);
	return 0;
}

int vys_open(struct vys_ep *ve, const char *bind_addr, const char *host, const char *port,
	     size_t nmsgs)
{
	struct fi_info *hints = ft_rdm_hints(0);
	int ret;

	if (!hints)
		return ft_fail("out of memory");
	hints->caps = FI_MSG | FI_RMA | FI_SOURCE;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	/* WELCOME before the first SIGNAL, the last SIGNAL before END. */
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	hints->rx_attr->msg_order = FI_ORDER_SAS;
	ve->info = ft_rdm_getinfo_hints(VYS_FI_VERSION, bind_addr, host, port, hints);
	fi_freeinfo(hints);
	if (!ve->info)
		return -FI_ENODATA;
	ve->rdm.cq_wait = FI_WAIT_UNSPEC;
	ret = ft_rdm_open(&ve->rdm, ve->info, 0);
	if (ret)
		return ret;
	ve->nmsgs = nmsgs;
	ve->msgs = calloc(nmsgs, sizeof(*ve->msgs));
	if (!ve->msgs)
		return ft_fail("out of memory for %zu messages", nmsgs);
	ret = vys_mr_reg(ve, ve->msgs, nmsgs * sizeof(*ve->msgs), FI_SEND | FI_RECV,
			 &ve->msgs_mr, &ve->msgs_desc);
	if (ret)
		return ret;
	return ft_rdm_enable(&ve->rdm, ve->info);
}

void vys_close(struct vys_ep *ve, struct fid_mr *mr, int *status)
{
	ft_rdm_close_ep(&ve->rdm, status);
	ft_close_fid(mr ? &mr->fid : NULL, "fi_close (mr)", status);
	ft_close_fid(ve->msgs_mr ? &ve->msgs_mr->fid : NULL, "fi_close (messages mr)", status);
	ft_rdm_close(&ve->rdm, status);
	free(ve->msgs);
	fi_freeinfo(ve->info);
}

ssize_t vys_post_recv(struct vys_ep *ve, struct vys_op *op)
{
	op->kind = VYS_OP_RECV;
	return fi_recv(ve->rdm.ep, op->msg, sizeof(*op->msg), ve->msgs_desc, FI_ADDR_UNSPEC,
		       &op->ctx);
}

ssize_t vys_send(struct vys_ep *ve, struct vys_op *op, size_t len, fi_addr_t addr)
{
	op->kind = VYS_OP_SEND;
	return fi_send(ve->rdm.ep, op->msg, len, ve->msgs_desc, addr, &op->ctx);
}

bool vys_msg_is(const union vys_msg *m, size_t len, enum vys_kind kind)
{
	static const size_t sizes[] = {
		[VYS_JOIN] = sizeof(struct vys_join),
		[VYS_WELCOME] = sizeof(struct vys_welcome),
		[VYS_SIGNAL] = sizeof(struct vys_signal),
		[VYS_END] = sizeof(struct vys_hdr),
		[VYS_DONE] = sizeof(struct vys_done),
	};

	return len >= sizeof(m->h) && m->h.magic == VYS_MAGIC && m->h.kind == (uint32_t) kind &&
	       len == sizes[kind];
}

void vys_ignore(struct vys_ep *ve, const char *why)
{
	if (!ve->ignored++)
		fprintf(stderr, "%s: ignored: %s (later ones only counted)\n", ft_prog, why);
}

ssize_t vys_poll(struct vys_ep *ve, struct fi_cq_tagged_entry *cqe, fi_addr_t *src,
		 size_t max, int timeout_ms, struct fi_cq_err_entry *err, char *text,
		 size_t text_len)
{
	ssize_t n = timeout_ms > 0 ?
		    fi_cq_sreadfrom(ve->rdm.cq, cqe, max, src, NULL, timeout_ms) :
		    fi_cq_readfrom(ve->rdm.cq, cqe, max, src);
	struct vys_op *op;

	if (n == -FI_EAGAIN)
		return 0;
	if (n != -FI_EAVAIL)
		return n;
	n = ft_cq_readerr(ve->rdm.cq, err, text, text_len);
	if (n)
		return n;
	op = err->op_context;
	if (!op || op->kind != VYS_OP_RECV)
		return -FI_EAVAIL;
	vys_ignore(ve, text);
	n = vys_post_recv(ve, op);
	return n ? ft_err("fi_recv", n) : 0;
}
