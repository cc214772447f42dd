/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: completion queues. Entries are kept in one internal form and
 * written out in the format the CQ was opened with; error entries wait on
 * their own list and make fi_cq_read return -FI_EAVAIL. Reading a CQ
 * progresses the endpoints bound to it (manual progress). A CQ with a
 * wait object (rdmx_wait.h) sleeps in fi_cq_sread; its endpoints'
 * descriptors are in the wait's set while they are bound.
 */
#ifndef RDMX_CQ_H
#define RDMX_CQ_H

#include <rdma/fi_eq.h>

#include "rdmx_comp.h"
#include "rdmx_epset.h"
#include "rdmx_list.h"
#include "rdmx_wait.h"

struct rdmx_domain;
struct rdmx_ep;

struct rdmx_cq_err {
	struct rdmx_dlist	link;		/* on rdmx_cq.errs */
	struct fi_cq_err_entry	entry;
	fi_addr_t		src;
	size_t			text_len;
	char			text[];		/* the err_data: text, or an address */
};

struct rdmx_cq {
	struct fid_cq		cq_fid;
	struct rdmx_domain	*domain;
	enum fi_cq_format	format;
	struct rdmx_waitable	waitable;	/* wait NULL: FI_WAIT_NONE */
	struct rdmx_cq_entry	*ring;
	size_t			cap;		/* a power of two */
	uint64_t		head, tail;	/* ever-growing ring counters */
	struct rdmx_dlist	errs;		/* of struct rdmx_cq_err */
	struct rdmx_cq_err	*last_err;	/* err_data kept until next read */
	struct rdmx_epset	eps;		/* progressed on read */
	int			refs;		/* endpoint bindings, poll sets */
	bool			signaled;	/* fi_cq_signal since last sread */
};

/* fi_cq_open. 0 or -FI_E*. */
int rdmx_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		 struct fid_cq **cq_p, void *context);

/* A completion, written for an endpoint's sink (rdmx_sink.h): 0 or -FI_ENOMEM (a full ring grows). */
int rdmx_cq_write(struct rdmx_cq *cq, const struct rdmx_cq_entry *entry);
/* An error completion (rdmx_comp.h, write_err): 0 or -FI_ENOMEM. */
int rdmx_cq_write_err(struct rdmx_cq *cq, const struct rdmx_cq_entry *entry,
		      int err, size_t olen, const char *text);
/*
 * A message from a sender outside the AV (FI_SOURCE_ERR, fi_cq(3)): an
 * FI_EADDRNOTAVAIL error entry whose err_data is the sender's address,
 * len bytes. 0 or -FI_ENOMEM.
 */
int rdmx_cq_write_source_err(struct rdmx_cq *cq, const struct rdmx_cq_entry *entry,
			     const void *addr, size_t len);

/* The CQ's part in waits (fi_trywait), from its fid. */
struct rdmx_waitable *rdmx_cq_waitable(struct fid *fid);

#endif /* RDMX_CQ_H */
