/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: event queues (fi_eq_open is declared with the fabric's ops, rdmx_fabric.h). */
#ifndef RDMX_EQ_H
#define RDMX_EQ_H

#include <rdma/fabric.h>

#include "rdmx_list.h"
#include "rdmx_wait.h"

/* The EQ's part in waits (fi_trywait), from its fid. */
struct rdmx_waitable *rdmx_eq_waitable(struct fid *fid);

/*
 * What writes connection events into an EQ: a FI_EP_MSG endpoint or a
 * passive endpoint bound to it (rdmx_cm.h). Reading or waiting on the
 * EQ progresses each, so that events come with manual progress.
 */
struct rdmx_eq_source {
	struct rdmx_dlist	link;		/* on the EQ's sources */
	/*
	 * As rdmx_waitable_ops.check for what stands behind the source,
	 * without the events: 0, or -FI_EAGAIN when progress has work
	 * already; with arm, *due_p lowered to its next timer. Takes its
	 * own locks (the EQ's lock is not held).
	 */
	int	(*progress)(struct rdmx_eq_source *src, bool arm, uint64_t *due_p);
};

/* src writes to eq from now on (counted: the EQ refuses to close), or no more. */
void rdmx_eq_attach(struct fid_eq *eq, struct rdmx_eq_source *src);
void rdmx_eq_detach(struct fid_eq *eq, struct rdmx_eq_source *src);

/* The wait of eq (NULL: FI_WAIT_NONE), for its sources' descriptors. */
struct rdmx_wait *rdmx_eq_wait(struct fid_eq *eq);

/* The size eq was opened with (fi_eq_attr), 0 when none was given. */
size_t rdmx_eq_size(struct fid_eq *eq);

/* Queues an event with len bytes of buf; 0 or -FI_ENOMEM. */
int rdmx_eq_push(struct fid_eq *eq, uint32_t event, const void *buf, size_t len);

/*
 * Queues an error entry for fid (err positive FI_E*) whose err_data is a
 * copy of len bytes of data (none with len 0), kept until the next
 * read; 0 or -FI_ENOMEM.
 */
int rdmx_eq_push_err(struct fid_eq *eq, fid_t fid, int err, const void *data, size_t len);

#endif /* RDMX_EQ_H */
