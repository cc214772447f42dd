/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: completion counters (fi_cntr(3)). A counter counts the operations
 * of the endpoints bound to it that completed, and those that failed,
 * whether or not they wrote a CQ entry (FI_SELECTIVE_COMPLETION,
 * fi_inject). Reading or waiting on it progresses those endpoints
 * (manual progress); fi_cntr_wait sleeps on the counter's wait object
 * (rdmx_wait.h) and wakes when the value reaches the threshold or the
 * error count changes.
 */
#ifndef RDMX_CNTR_H
#define RDMX_CNTR_H

#include <rdma/fi_domain.h>

#include "rdmx_epset.h"
#include "rdmx_wait.h"

struct rdmx_domain;
struct rdmx_ep;

struct rdmx_cntr {
	struct fid_cntr		cntr_fid;
	struct rdmx_domain	*domain;
	uint64_t		value;		/* atomic */
	uint64_t		err;		/* atomic */
	uint64_t		seen;		/* value and err at the last check: */
	uint64_t		seen_err;	/* a member of a wait or poll set
						   is ready when either moved */
	struct rdmx_waitable	waitable;	/* wait NULL: FI_WAIT_NONE */
	struct rdmx_epset	eps;		/* progressed on read */
	int			refs;		/* endpoint bindings, poll sets */
	int			mr_binds;	/* regions it counts (fi_mr_bind):
						   it progresses the domain's
						   rma_eps too */
};

/* fi_cntr_open. 0 or -FI_E*. */
int rdmx_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		   struct fid_cntr **cntr_p, void *context);

/* One more operation completed, or failed; wakes a waiter. */
void rdmx_cntr_inc(struct rdmx_cntr *cntr);
void rdmx_cntr_inc_err(struct rdmx_cntr *cntr);

/* The counter's part in waits (fi_trywait), from its fid. */
struct rdmx_waitable *rdmx_cntr_waitable(struct fid *fid);

#endif /* RDMX_CNTR_H */
