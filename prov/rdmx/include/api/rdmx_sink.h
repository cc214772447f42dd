/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: an endpoint direction's completion sink, the struct rdmx_comp the
 * rdm layer writes through (rdmx_comp.h): the direction's CQ and the
 * counters bound to it. A completion becomes a CQ entry if asked for and
 * a count in the counter of its kind either way; a failure an error
 * entry and an error count.
 */
#ifndef RDMX_SINK_H
#define RDMX_SINK_H

#include "rdmx_comp.h"

struct rdmx_cq;
struct rdmx_cntr;

/* The counters of a direction, by the kind of operation they count. */
enum rdmx_sink_kind {
	RDMX_SINK_MSG,		/* FI_SEND, or FI_RECV */
	RDMX_SINK_READ,		/* FI_READ, or FI_REMOTE_READ */
	RDMX_SINK_WRITE,	/* FI_WRITE, or FI_REMOTE_WRITE */
	RDMX_SINK_KINDS
};

struct rdmx_sink {
	struct rdmx_comp	comp;
	struct rdmx_cq		*cq;			/* or NULL */
	struct rdmx_cntr	*cntrs[RDMX_SINK_KINDS];	/* or NULL */
};

/* A sink writing to neither; the endpoint binds what it gets. */
void rdmx_sink_construct(struct rdmx_sink *sink);

#endif /* RDMX_SINK_H */
