/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: completion queues. Entries are kept in one internal form and
 * written out in the format the CQ was opened with; error entries wait on
 * their own list and make fi_cq_read return -FI_EAVAIL. Reading a CQ
 * progresses the endpoints bound to it (manual progress).
 */
#ifndef RDMX_CQ_H
#define RDMX_CQ_H

#include <rdma/fi_eq.h>

#include "rdmx_comp.h"
#include "rdmx_list.h"

struct rdmx_domain;
struct rdmx_ep;

struct rdmx_cq_err {
	struct rdmx_dlist	link;		/* on rdmx_cq.errs */
	struct fi_cq_err_entry	entry;
	fi_addr_t		src;
	size_t			text_len;
	char			text[];		/* the err_data */
};

struct rdmx_cq {
	struct fid_cq		cq_fid;
	struct rdmx_comp	comp;		/* what the rdm layer writes to */
	struct rdmx_domain	*domain;
	enum fi_cq_format	format;
	enum fi_wait_obj	wait_obj;
	struct rdmx_cq_entry	*ring;
	size_t			cap;		/* a power of two */
	uint64_t		head, tail;	/* ever-growing ring counters */
	struct rdmx_dlist	errs;		/* of struct rdmx_cq_err */
	struct rdmx_cq_err	*last_err;	/* err_data kept until next read */
	struct rdmx_ep		**eps;		/* endpoints progressed on read */
	size_t			ep_cnt;
	int			refs;		/* endpoint bindings */
	bool			signaled;	/* fi_cq_signal since last sread */
};

/* fi_cq_open. 0 or -FI_E*. */
int rdmx_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		 struct fid_cq **cq_p, void *context);

/* Binds an endpoint for progress (once, however many directions). */
int rdmx_cq_attach(struct rdmx_cq *cq, struct rdmx_ep *ep);
void rdmx_cq_detach(struct rdmx_cq *cq, struct rdmx_ep *ep);

#endif /* RDMX_CQ_H */
